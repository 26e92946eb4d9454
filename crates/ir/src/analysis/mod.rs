//! Analyses the IR crate itself needs (the verifier checks dominance): the control-flow
//! graph and the dominator tree. Further analyses live in the `opt` crate.

pub mod cfg;
pub mod domtree;

pub use cfg::ControlFlowGraph;
pub use domtree::DominatorTree;
