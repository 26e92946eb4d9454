//! Analyses the IR crate itself needs (the verifier checks dominance): the control-flow
//! graph and the dominator tree; and the natural loops, which the optimiser's loop
//! forest and the back end build on. The dominator tree and the loops take any
//! [`Graph`], so the back end's machine CFG uses the same code. Further analyses
//! live in the `opt` crate.

pub mod cfg;
pub mod domtree;
pub mod graph;
pub mod loops;

pub use cfg::{distinct_in_order, ControlFlowGraph};
pub use domtree::{DomTree, DominatorTree};
pub use graph::Graph;
pub use loops::{natural_loops, LoopNest, NaturalLoop};
