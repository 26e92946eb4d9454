//! Analyses over the IR that the passes share. The CFG and the dominator tree live in
//! [`ir::analysis`] (the verifier needs them); everything built on top of them is here.

pub mod alias_regions;
pub mod bounds;
pub mod callgraph;
pub mod control_dep;
pub mod dataflow;
pub mod deciders;
pub mod frontiers;
pub mod induction;
pub mod issue_estimate;
pub mod loops;
pub mod manager;
pub mod param_disjoint;
pub mod param_targets;
pub mod pointer_offsets;
pub mod pointer_roots;
pub mod postdom;
pub mod purity;
mod purity_summary;
pub mod ranges;
pub mod scev;
pub mod sections;
pub mod written_globals;

pub use alias_regions::AliasRegions;
pub use bounds::Bounds;
pub use callgraph::CallGraph;
pub use control_dep::ControlDependence;
pub use deciders::Deciders;
pub use frontiers::{iterated_frontier, DominanceFrontiers};
pub use induction::{Counter, RotatedLoop};
pub use loops::{Loop, LoopForest, LoopId};
pub use manager::{AnalysisManager, FunctionAnalyses, Preserved};
pub use param_disjoint::DisjointParams;
pub use param_targets::{ParamTargets, Targets};
pub use pointer_offsets::{Offset, PointerOffsets};
pub use pointer_roots::PointerRoots;
pub use postdom::PostDominatorTree;
pub use purity::{address_root, pointer_base, Effects, PointerBase, Purity};
pub use written_globals::WrittenGlobals;

#[cfg(test)]
pub(crate) mod testcfg;
