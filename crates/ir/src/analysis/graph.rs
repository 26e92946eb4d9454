//! The interface the dominator and loop analyses see a control-flow graph
//! through, so the IR's CFG and the back end's machine CFG share one
//! implementation of each ([`super::DomTree`], [`super::natural_loops`]).

use cranelift_entity::EntityRef;

/// A directed graph with an entry node, whose nodes are numbered entities.
pub trait Graph {
    /// A node (a block).
    type Node: EntityRef + Eq;
    /// Predecessors of `n` (an entry per edge, or per distinct predecessor).
    fn preds(&self, n: Self::Node) -> &[Self::Node];
    /// Successors of `n`.
    fn succs(&self, n: Self::Node) -> &[Self::Node];
    /// The nodes reachable from the entry in reverse post-order, entry first.
    fn rpo(&self) -> &[Self::Node];
}
