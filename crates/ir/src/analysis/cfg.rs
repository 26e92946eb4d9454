//! Control-flow graph: predecessors and successors of every block in the layout, and a
//! reverse post-order from the entry (which visits only reachable blocks).

use crate::entities::Block;
use crate::function::Function;
use cranelift_entity::SecondaryMap;

/// Predecessor and successor lists. A block that both arms of a `br` reach lists the
/// other block twice in its predecessors (once per edge) and vice versa.
#[derive(Clone, Debug, Default)]
pub struct ControlFlowGraph {
    preds: SecondaryMap<Block, Vec<Block>>,
    succs: SecondaryMap<Block, Vec<Block>>,
    /// Reachable blocks in reverse post-order.
    rpo: Vec<Block>,
}

impl ControlFlowGraph {
    /// Computes the CFG of `func` (which must have a body).
    pub fn compute(func: &Function) -> Self {
        let mut cfg = ControlFlowGraph::default();
        for b in func.layout.blocks() {
            for s in func.successors(b) {
                cfg.succs[b].push(s);
                cfg.preds[s].push(b);
            }
        }
        cfg.rpo = cfg.compute_rpo(func.entry_block());
        cfg
    }

    fn compute_rpo(&self, entry: Block) -> Vec<Block> {
        // Iterative DFS; a block is emitted after all its successors (post-order).
        let mut visited: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut post = Vec::new();
        let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
        visited[entry] = true;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            if let Some(&s) = self.succs[b].get(*i) {
                *i += 1;
                if !visited[s] {
                    visited[s] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
                stack.pop();
            }
        }
        post.reverse();
        post
    }

    /// Predecessors of `b`, one entry per incoming edge.
    pub fn preds(&self, b: Block) -> &[Block] {
        &self.preds[b]
    }

    /// Successors of `b`, one entry per outgoing edge.
    pub fn succs(&self, b: Block) -> &[Block] {
        &self.succs[b]
    }

    /// Reachable blocks in reverse post-order (entry first).
    pub fn rpo(&self) -> &[Block] {
        &self.rpo
    }

    /// Distinct predecessors of `b`, in first-edge order.
    pub fn unique_preds(&self, b: Block) -> Vec<Block> {
        let mut v: Vec<Block> = Vec::with_capacity(self.preds[b].len());
        for &p in &self.preds[b] {
            if !v.contains(&p) {
                v.push(p);
            }
        }
        v
    }
}
