//! Target-independent analyses that the optimiser and the back end both use (as
//! LLVM keeps its Analysis library apart from Transforms and CodeGen): the
//! control-flow graph and the dominator tree (the verifier checks dominance too);
//! the natural loops, which the optimiser's loop forest and the back end build
//! on; and what memory accesses may touch: address roots, pointer offsets, the
//! globals a parameter may point into, disjoint parameters and alias regions
//! (the back end's dependence tests). The dominator tree and the loops take any
//! [`Graph`], so the back end's machine CFG uses the same code. The analyses only
//! the optimiser asks live in the `opt` crate.

pub mod address;
pub mod alias_regions;
pub mod cfg;
pub mod domtree;
pub mod graph;
pub mod loops;
pub mod param_disjoint;
pub mod param_targets;
pub mod pointer_offsets;

pub use address::{
    address_residue, address_root, address_root_by, residues_may_overlap, walk_geps, Residue,
};
pub use alias_regions::AliasRegions;
pub use cfg::{distinct_in_order, ControlFlowGraph};
pub use domtree::{DomTree, DominatorTree};
pub use graph::Graph;
pub use loops::{natural_loops, LoopNest, NaturalLoop};
pub use param_disjoint::DisjointParams;
pub use param_targets::{ParamTargets, Targets};
pub use pointer_offsets::{Offset, PointerOffsets};
