//! Control-flow graph: predecessors and successors of every block in the layout, and a
//! reverse post-order from the entry (which visits only reachable blocks).
//!
//! Each block's lists hold their first two edges inline ([`EdgeList`], twelve bytes
//! and no destructor): a block has at most two successors and most blocks at most
//! two predecessors, so computing the graph allocates nothing per block, and
//! dropping it frees two tables instead of visiting every block's list (a heap list
//! per block made the allocator's share of compile time grow with the size of the
//! function, and on a function of 30k blocks the visit missed the cache for most
//! of them). Longer lists live in one overflow table per direction ([`Edges`]).

use crate::entities::Block;
use crate::function::Function;
use cranelift_entity::{EntityRef, SecondaryMap};
use rustc_hash::FxHashSet;
use smallvec::SmallVec;

/// One block's predecessors or successors. Up to two are held in `inline`; a
/// longer list is the run `overflow[at..at + len]` of its [`Edges`], in a stretch
/// of `cap` slots, and then `inline` holds `at` and `cap` as block numbers.
#[derive(Clone, Copy, Debug)]
struct EdgeList {
    len: u32,
    inline: [Block; 2],
}

impl Default for EdgeList {
    fn default() -> Self {
        EdgeList {
            len: 0,
            inline: [Block::new(0); 2],
        }
    }
}

impl EdgeList {
    /// The run of a list longer than two: where it starts, how many slots it has.
    #[inline]
    fn run(&self) -> (usize, usize) {
        (self.inline[0].index(), self.inline[1].index())
    }

    #[inline]
    fn set_run(&mut self, at: usize, cap: usize) {
        self.inline = [Block::new(at), Block::new(cap)];
    }
}

/// Every block's list of one direction (predecessors or successors), with the
/// overflow table that lists longer than two live in.
#[derive(Clone, Debug, Default)]
struct Edges {
    lists: SecondaryMap<Block, EdgeList>,
    overflow: Vec<Block>,
}

impl Edges {
    /// Empty lists for blocks `0..n`.
    fn for_blocks(n: usize) -> Self {
        let mut lists = SecondaryMap::new();
        lists.resize(n);
        Edges {
            lists,
            overflow: Vec::new(),
        }
    }

    #[inline]
    fn get(&self, b: Block) -> &[Block] {
        let l = &self.lists[b];
        let len = l.len as usize;
        if len <= 2 {
            &l.inline[..len]
        } else {
            let (at, _) = l.run();
            &self.overflow[at..at + len]
        }
    }

    /// Appends `x` to the list of `b`.
    #[inline(always)]
    fn push(&mut self, b: Block, x: Block) {
        let l = &mut self.lists[b];
        if l.len < 2 {
            l.inline[l.len as usize] = x;
            l.len += 1;
        } else {
            self.push_long(b, x);
        }
    }

    /// [`Self::push`] to a list of two or more: the list goes to (or grows in) the
    /// overflow table. A full run moves to the end of the table with twice the
    /// slots (the old ones are left unused).
    #[cold]
    fn push_long(&mut self, b: Block, x: Block) {
        let l = &mut self.lists[b];
        let len = l.len as usize;
        if len == 2 {
            let at = self.overflow.len();
            self.overflow.extend([l.inline[0], l.inline[1], x, x]);
            l.set_run(at, 4);
        } else {
            let (mut at, cap) = l.run();
            if len == cap {
                let moved = self.overflow.len();
                self.overflow.extend_from_within(at..at + len);
                self.overflow.resize(moved + 2 * cap, x);
                at = moved;
                l.set_run(at, 2 * cap);
            }
            self.overflow[at + len] = x;
        }
        l.len += 1;
    }

    /// Removes the `k`th entry of the list of `b`, keeping the others' order.
    fn remove(&mut self, b: Block, k: usize) {
        let l = &mut self.lists[b];
        let len = l.len as usize;
        assert!(k < len, "edge {k} of a list of {len}");
        match len {
            1 | 2 => {
                if k == 0 && len == 2 {
                    l.inline[0] = l.inline[1];
                }
            }
            3 => {
                // Back inline: the two that stay.
                let (at, _) = l.run();
                let run = &self.overflow[at..at + 3];
                let (first, second) = match k {
                    0 => (run[1], run[2]),
                    1 => (run[0], run[2]),
                    _ => (run[0], run[1]),
                };
                l.inline = [first, second];
            }
            _ => {
                let (at, _) = l.run();
                self.overflow.copy_within(at + k + 1..at + len, at + k);
            }
        }
        l.len -= 1;
    }

    /// Empties the list of `b`.
    fn clear(&mut self, b: Block) {
        self.lists[b] = EdgeList::default();
    }

    /// Makes the list of `b` `blocks`.
    fn set(&mut self, b: Block, blocks: &[Block]) {
        self.clear(b);
        for &x in blocks {
            self.push(b, x);
        }
    }
}

/// Predecessor and successor lists. A block that both arms of a `br` reach lists the
/// other block twice in its predecessors (once per edge) and vice versa.
#[derive(Clone, Debug, Default)]
pub struct ControlFlowGraph {
    preds: Edges,
    succs: Edges,
    /// Reachable blocks in reverse post-order.
    rpo: Vec<Block>,
    /// Whether edges changed (by [`Self::update_edges_of`]) since `rpo` was computed.
    rpo_stale: bool,
}

impl ControlFlowGraph {
    /// Computes the CFG of `func` (which must have a body).
    pub fn compute(func: &Function) -> Self {
        // Sized once: growing entry by entry moved the lists at every new block.
        let mut cfg = ControlFlowGraph {
            preds: Edges::for_blocks(func.num_blocks()),
            succs: Edges::for_blocks(func.num_blocks()),
            ..ControlFlowGraph::default()
        };
        for b in func.layout.blocks() {
            for s in func.successors(b) {
                cfg.succs.push(b, s);
                cfg.preds.push(s, b);
            }
        }
        cfg.rpo = cfg.compute_rpo(func.entry_block());
        cfg
    }

    fn compute_rpo(&self, entry: Block) -> Vec<Block> {
        // Iterative DFS; a block is emitted after all its successors (post-order).
        let mut visited: SecondaryMap<Block, bool> = SecondaryMap::new();
        visited.resize(self.succs.lists.as_values_slice().len());
        let mut post = Vec::new();
        let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
        visited[entry] = true;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            if let Some(&s) = self.succs.get(b).get(*i) {
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
        self.preds.get(b)
    }

    /// Successors of `b`, one entry per outgoing edge.
    #[inline]
    pub fn succs(&self, b: Block) -> &[Block] {
        self.succs.get(b)
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
        let old: SmallVec<[Block; 2]> = SmallVec::from_slice(self.succs.get(b));
        self.succs.clear(b);
        for s in old {
            if let Some(k) = self.preds.get(s).iter().position(|&p| p == b) {
                self.preds.remove(s, k);
            }
        }
        for s in func.successors(b) {
            self.succs.push(b, s);
            self.preds.push(s, b);
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
        self.preds.set(b, preds);
        self.succs.set(b, succs);
        self.rpo_stale = true;
    }

    /// Whether `self` lists the same edges as `other`, in the same order, for
    /// every block of `func`'s layout (not the reverse post-order).
    pub fn same_edges(&self, other: &ControlFlowGraph, func: &Function) -> bool {
        func.layout
            .blocks()
            .all(|b| self.preds(b) == other.preds(b) && self.succs(b) == other.succs(b))
    }

    /// Distinct predecessors of `b`, in first-edge order (held inline when there
    /// are few: most blocks have one or two).
    pub fn unique_preds(&self, b: Block) -> SmallVec<[Block; 4]> {
        let preds = self.preds(b);
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
        let (&first, rest) = self.preds(b).split_first()?;
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

    /// The edge lists behave as plain vectors under every operation, whatever
    /// their length: pushes past the inline two (moving runs in the overflow
    /// table), removals from any place (back inline at two), clearing and setting.
    #[test]
    fn edge_lists_behave_as_vectors() {
        let b = |i: usize| Block::new(i);
        let mut edges = Edges::for_blocks(4);
        let mut model: Vec<Vec<Block>> = vec![Vec::new(); 4];
        // A deterministic mix of operations over four lists (a linear congruence).
        let mut x: u64 = 12345;
        for step in 0..4000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (x >> 33) as usize;
            let list = r % 4;
            let op = (r / 4) % 10;
            match op {
                0..=5 => {
                    edges.push(b(list), b(step));
                    model[list].push(b(step));
                }
                6..=8 if !model[list].is_empty() => {
                    let k = (r / 40) % model[list].len();
                    edges.remove(b(list), k);
                    model[list].remove(k);
                }
                9 if step % 7 == 0 => {
                    edges.clear(b(list));
                    model[list].clear();
                }
                9 => {
                    let set: Vec<Block> = (0..r % 6).map(|j| b(step + j)).collect();
                    edges.set(b(list), &set);
                    model[list] = set;
                }
                _ => {}
            }
            for (k, m) in model.iter().enumerate() {
                assert_eq!(edges.get(b(k)), &m[..], "list {k} after step {step}");
            }
        }
        assert!(model.iter().any(|m| m.len() > 8), "long lists were made");
    }
}
