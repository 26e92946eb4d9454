//! Control-flow graph: predecessors and successors of every block in the layout, and a
//! reverse post-order from the entry (which visits only reachable blocks).
//!
//! Each block's lists hold their first two edges inline ([`EdgeList`]): a block has
//! at most two successors and most blocks at most two predecessors, so computing
//! the graph allocates nothing per block (a heap list per block made the
//! allocator's share of compile time grow with the size of the function).

use crate::entities::Block;
use crate::function::Function;
use cranelift_entity::SecondaryMap;
use rustc_hash::FxHashSet;
use smallvec::SmallVec;

/// One block's predecessors or successors: the first two inline.
#[derive(Debug, Default, PartialEq)]
struct EdgeList(SmallVec<[Block; 2]>);

impl Clone for EdgeList {
    /// Sizing a map of lists clones the empty default once per block: an empty
    /// list is made directly, not through `SmallVec`'s copy of a slice.
    fn clone(&self) -> Self {
        if self.0.is_empty() {
            EdgeList(SmallVec::new())
        } else {
            EdgeList(self.0.clone())
        }
    }
}

impl std::ops::Deref for EdgeList {
    type Target = SmallVec<[Block; 2]>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for EdgeList {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// Predecessor and successor lists. A block that both arms of a `br` reach lists the
/// other block twice in its predecessors (once per edge) and vice versa.
#[derive(Clone, Debug, Default)]
pub struct ControlFlowGraph {
    preds: SecondaryMap<Block, EdgeList>,
    succs: SecondaryMap<Block, EdgeList>,
    /// Reachable blocks in reverse post-order.
    rpo: Vec<Block>,
    /// Whether edges changed (by [`Self::update_edges_of`]) since `rpo` was computed.
    rpo_stale: bool,
}

impl ControlFlowGraph {
    /// Computes the CFG of `func` (which must have a body).
    pub fn compute(func: &Function) -> Self {
        let mut cfg = ControlFlowGraph::default();
        // Sized once: growing entry by entry moved the lists at every new block.
        cfg.preds.resize(func.num_blocks());
        cfg.succs.resize(func.num_blocks());
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
        visited.resize(self.succs.as_values_slice().len());
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
    #[inline]
    pub fn preds(&self, b: Block) -> &[Block] {
        &self.preds[b]
    }

    /// Successors of `b`, one entry per outgoing edge.
    #[inline]
    pub fn succs(&self, b: Block) -> &[Block] {
        &self.succs[b]
    }

    /// Reachable blocks in reverse post-order (entry first).
    ///
    /// # Panics
    /// After [`Self::update_edges_of`], which does not maintain the order.
    #[inline]
    pub fn rpo(&self) -> &[Block] {
        assert!(
            !self.rpo_stale,
            "the reverse post-order is stale after an edge update"
        );
        &self.rpo
    }

    /// Re-reads the outgoing edges of `b` from `func` (after its terminator
    /// changed, or for a new block): the predecessor and successor lists are
    /// updated in time proportional to the edges involved. The reverse post-order
    /// is not maintained; [`Self::rpo`] refuses to answer afterwards.
    pub fn update_edges_of(&mut self, func: &Function, b: Block) {
        for s in std::mem::take(&mut self.succs[b]).0 {
            let preds = &mut self.preds[s];
            if let Some(k) = preds.iter().position(|&p| p == b) {
                preds.remove(k);
            }
        }
        for s in func.successors(b) {
            self.succs[b].push(s);
            self.preds[s].push(b);
        }
        self.rpo_stale = true;
    }

    /// Sets the edge lists of `b` to what the caller knows a fresh computation would
    /// give: its successors and its predecessors, each one entry per edge, in the
    /// order [`Self::compute`] lists them (predecessors by their place in the
    /// layout). For a pass that changes a few edges and knows where the blocks
    /// involved lie, in time proportional to those edges. The reverse post-order
    /// is not maintained ([`Self::rpo`] refuses to answer afterwards).
    pub fn set_edges(&mut self, b: Block, preds: &[Block], succs: &[Block]) {
        self.preds[b] = EdgeList(preds.iter().copied().collect());
        self.succs[b] = EdgeList(succs.iter().copied().collect());
        self.rpo_stale = true;
    }

    /// Whether `self` lists the same edges as `other`, in the same order, for
    /// every block of `func`'s layout (not the reverse post-order).
    pub fn same_edges(&self, other: &ControlFlowGraph, func: &Function) -> bool {
        func.layout
            .blocks()
            .all(|b| self.preds[b] == other.preds[b] && self.succs[b] == other.succs[b])
    }

    /// Distinct predecessors of `b`, in first-edge order (held inline when there
    /// are few: most blocks have one or two).
    pub fn unique_preds(&self, b: Block) -> SmallVec<[Block; 4]> {
        let preds = &self.preds[b];
        if preds.len() <= 1 {
            SmallVec::from_slice(preds)
        } else if preds.len() <= 16 {
            let mut v = SmallVec::new();
            for &p in preds.iter() {
                if !v.contains(&p) {
                    v.push(p);
                }
            }
            v
        } else {
            SmallVec::from_vec(distinct_in_order(preds))
        }
    }

    /// The predecessor of `b` when it has exactly one (however many edges come
    /// from it). Stops at the second distinct predecessor, so asking a join of
    /// `n` blocks costs a constant, where [`Self::unique_preds`] costs `n`.
    #[inline]
    pub fn single_pred(&self, b: Block) -> Option<Block> {
        let (&first, rest) = self.preds[b].split_first()?;
        rest.iter().all(|&p| p == first).then_some(first)
    }
}

/// The distinct blocks of `blocks`, each where it first occurs. A long list (the
/// predecessors of the join of a long `||` condition) goes through a set, not a
/// scan of the list so far for each entry.
pub fn distinct_in_order(blocks: &[Block]) -> Vec<Block> {
    let mut v: Vec<Block> = Vec::with_capacity(blocks.len());
    if blocks.len() <= 16 {
        for &b in blocks {
            if !v.contains(&b) {
                v.push(b);
            }
        }
    } else {
        let mut seen: FxHashSet<Block> = FxHashSet::default();
        v.extend(blocks.iter().copied().filter(|&b| seen.insert(b)));
    }
    v
}

impl super::graph::Graph for ControlFlowGraph {
    type Node = Block;
    #[inline]
    fn preds(&self, b: Block) -> &[Block] {
        ControlFlowGraph::preds(self, b)
    }
    #[inline]
    fn succs(&self, b: Block) -> &[Block] {
        ControlFlowGraph::succs(self, b)
    }
    #[inline]
    fn rpo(&self) -> &[Block] {
        ControlFlowGraph::rpo(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_module, BlockCall};

    /// After retargeting an edge and adding a block, the updated lists equal a
    /// fresh computation's (as multisets: the order of predecessors may differ).
    #[test]
    fn edge_updates_match_a_fresh_computation() {
        let mut m = parse_module(
            r#"
func @main() -> i32 {
bb0:
  br 1, bb1, bb2
bb1:
  jump bb3
bb2:
  jump bb3
bb3:
  ret 0
}
"#,
        )
        .unwrap();
        let f = m.funcs.values_mut().next().unwrap();
        let mut cfg = ControlFlowGraph::compute(f);
        let blocks: Vec<Block> = f.layout.blocks().collect();
        let (b0, b2, b3) = (blocks[0], blocks[2], blocks[3]);
        // A new block between bb2 and bb3, and bb0's second arm straight to bb3.
        let nb = f.create_block();
        f.layout.insert_block_after(nb, b2);
        f.append_inst(
            nb,
            crate::InstKind::Jump {
                dest: Box::new(BlockCall::new(b3, vec![])),
            },
            crate::Type::Void,
        );
        cfg.update_edges_of(f, nb);
        let term = f.terminator(b2).unwrap();
        f.set_target(term, 0, BlockCall::new(nb, vec![]));
        cfg.update_edges_of(f, b2);
        let term = f.terminator(b0).unwrap();
        f.set_target(term, 1, BlockCall::new(b3, vec![]));
        cfg.update_edges_of(f, b0);

        let fresh = ControlFlowGraph::compute(f);
        for b in f.layout.blocks() {
            let sorted = |v: &[Block]| {
                let mut v = v.to_vec();
                v.sort();
                v
            };
            assert_eq!(sorted(cfg.preds(b)), sorted(fresh.preds(b)), "{b}");
            assert_eq!(cfg.succs(b), fresh.succs(b), "{b}");
        }
        assert!(fresh.preds(b2).is_empty());
        assert_eq!(fresh.preds(b3).len(), 3);
        let stale = std::panic::catch_unwind(|| cfg.rpo().len());
        assert!(stale.is_err(), "rpo after an edge update must refuse");
    }

    /// A block reached twice from one block (both arms of a `br`) has that block
    /// as its single predecessor; a join of two blocks and the entry have none.
    #[test]
    fn single_predecessor_counts_distinct_blocks() {
        let m = parse_module(
            r#"
func @main() -> i32 {
bb0:
  br 1, bb1, bb1
bb1:
  br 1, bb2, bb3
bb2:
  jump bb3
bb3:
  ret 0
}
"#,
        )
        .unwrap();
        let f = m.funcs.values().next().unwrap();
        let cfg = ControlFlowGraph::compute(f);
        let b: Vec<Block> = f.layout.blocks().collect();
        assert_eq!(cfg.preds(b[1]).len(), 2);
        assert_eq!(cfg.single_pred(b[1]), Some(b[0]));
        assert_eq!(cfg.single_pred(b[2]), Some(b[1]));
        assert_eq!(cfg.single_pred(b[3]), None);
        assert_eq!(cfg.single_pred(b[0]), None);
    }

    /// Short lists are scanned, long ones go through a set: both keep each
    /// block's first occurrence, in order.
    #[test]
    fn distinct_blocks_keep_their_first_occurrence() {
        let b = |i: usize| <Block as cranelift_entity::EntityRef>::new(i);
        let short = [b(3), b(1), b(3), b(2), b(1)];
        assert_eq!(distinct_in_order(&short), [b(3), b(1), b(2)]);
        let long: Vec<Block> = (0..100).map(|i| b((i * 7) % 30)).collect();
        let mut want: Vec<Block> = Vec::new();
        for &x in &long {
            if !want.contains(&x) {
                want.push(x);
            }
        }
        assert_eq!(want.len(), 30);
        assert_eq!(distinct_in_order(&long), want);
    }

    /// `unique_preds` keeps each predecessor's first edge, in order, as
    /// `distinct_in_order` does, for a few edges (scanned inline) and for many
    /// (through a set); a clone of the graph, whose empty lists are made anew,
    /// lists the same edges.
    #[test]
    fn unique_predecessors_and_clones_keep_the_edges() {
        let mut src = String::from("func @main(i32) -> i32 {\nbb0(%0: i32):\n  br %0, bb1, bb1\n");
        // bb1 branches to bb2 on both arms; bb3..bb22 all jump to bb23 (20 edges).
        src.push_str("bb1:\n  br %0, bb2, bb2\nbb2:\n  br %0, bb3, bb24\n");
        for k in 3..23 {
            src.push_str(&format!("bb{k}:\n  br %0, bb{}, bb23\n", k + 1));
        }
        src.push_str("bb23:\n  ret 0\nbb24:\n  ret 1\n}\n");
        let m = parse_module(&src).unwrap();
        let f = m.funcs.values().next().unwrap();
        let cfg = ControlFlowGraph::compute(f);
        let b: Vec<Block> = f.layout.blocks().collect();
        assert_eq!(cfg.preds(b[1]), [b[0], b[0]]);
        assert_eq!(cfg.unique_preds(b[1])[..], [b[0]]);
        assert_eq!(cfg.unique_preds(b[0])[..], []);
        assert!(cfg.preds(b[23]).len() > 16);
        for &x in &b {
            assert_eq!(cfg.unique_preds(x)[..], distinct_in_order(cfg.preds(x))[..]);
        }
        let copy = cfg.clone();
        assert!(copy.same_edges(&cfg, f));
        for &x in &b {
            assert_eq!(copy.preds(x), cfg.preds(x));
            assert_eq!(copy.succs(x), cfg.succs(x));
        }
    }
}
