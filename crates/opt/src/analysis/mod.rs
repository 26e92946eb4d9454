//! Analyses over the IR that the passes share. The CFG, the dominator tree and the
//! memory analyses the back end needs too live in [`ir::analysis`] (re-exported
//! here); everything only the optimiser asks is here.

pub mod bounds;
pub mod callgraph;
pub mod control_dep;
pub mod dataflow;
pub mod deciders;
pub mod deref;
pub mod fpclass;
pub mod frontiers;
pub mod induction;
pub mod issue_estimate;
pub mod loops;
pub mod manager;
pub mod modref;
pub mod pointer_roots;
pub mod postdom;
pub mod purity;
pub mod ranges;
pub mod scev;
pub mod sections;
pub mod written_globals;

pub use bounds::Bounds;
pub use callgraph::CallGraph;
pub use control_dep::ControlDependence;
pub use deciders::Deciders;
pub use fpclass::{FpClass, FpClasses};
pub use frontiers::{iterated_frontier, DominanceFrontiers};
pub use induction::{Counter, RotatedLoop};
pub use loops::{Loop, LoopForest, LoopId};
pub use manager::{AnalysisManager, FunctionAnalyses, Preserved, ScevParts};
pub use modref::ModRef;
pub use pointer_roots::PointerRoots;
pub use postdom::PostDominatorTree;
pub use purity::{pointer_base, Effects, PointerBase, Purity};
pub use written_globals::WrittenGlobals;

#[cfg(test)]
pub(crate) mod testcfg;
// The memory analyses the back end uses too live in `ir::analysis`.
pub use ir::analysis::{
    address_root, alias_regions, param_disjoint, param_targets, pointer_offsets, AliasRegions,
    DisjointParams, Offset, ParamTargets, PointerOffsets, Targets,
};
