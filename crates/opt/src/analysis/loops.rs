//! Natural loops and the loop nesting forest.
//!
//! A back edge is an edge `t -> h` whose target dominates its source; the natural loop
//! of header `h` is `h` plus every block that reaches one of its back-edge sources
//! (latches) without passing through `h` (Aho, Lam, Sethi, Ullman, "Compilers", 9.6;
//! all back edges to one header form one loop, as the seed write-up does). Loops are
//! discovered innermost first by visiting headers in post-order of the dominator tree;
//! the reverse walk from the latches skips over already discovered inner loops through
//! their headers, which also links each inner loop to its parent (the method of LLVM's
//! `LoopInfo`). Cycles that are not natural loops (irreducible control flow, entered
//! at more than one block) are not loops here. The discovery itself is
//! [`ir::analysis::natural_loops`], which the back end's machine loops share; this
//! forest adds children, depths, block lists and the nesting intervals.
//!
//! A loop's block list ([`LoopBlocks`]) is built the first time it is read: a
//! deep nest holds every block once per loop around it, so building every list
//! is quadratic in the depth of the nest, while most passes read the lists of
//! few loops (or only their lengths, which take constant time).

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use ir::analysis::{natural_loops, ControlFlowGraph, DominatorTree};
use ir::{Block, Function, SecondaryMap, Value};

/// What every loop's block list is built from: the blocks inside loops, and
/// their RPO positions, grouped by the pre-order number of their innermost loop
/// (each group in RPO order). A loop's blocks are the groups of the loops in its
/// pre-order interval: one slice, whatever the RPO positions between them hold.
#[derive(Debug, Default)]
struct BlockIndex {
    grouped: Vec<Block>,
    rpo_pos: SecondaryMap<Block, u32>,
    /// Per pre-order number `k` (and `k` = the number of loops): where the blocks
    /// of the loops numbered `k` and later start in `grouped`.
    group_start: Vec<u32>,
}

/// The blocks of one loop, inner loops' included, in RPO order (header first),
/// built on first use; it reads as a `&[Block]`. Its length takes constant time.
#[derive(Clone, Default)]
pub struct LoopBlocks {
    /// `None` in a forest without block lists.
    index: Option<Arc<BlockIndex>>,
    /// The loop's blocks lie in these RPO positions (header first).
    rpo_range: (u32, u32),
    /// The loop's interval in the pre-order numbering of the nest.
    span: (u32, u32),
    len: usize,
    list: OnceLock<Vec<Block>>,
}

impl LoopBlocks {
    /// Number of blocks in the loop.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty (only in a forest without block lists).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The positions, in the reverse post-order the forest was computed from, that
    /// the loop's blocks lie in (the header's first): its blocks are the blocks at
    /// these positions that it contains. Empty in a forest without block lists.
    pub fn rpo_range(&self) -> std::ops::Range<usize> {
        self.rpo_range.0 as usize..self.rpo_range.1 as usize
    }
}

impl Deref for LoopBlocks {
    type Target = [Block];
    fn deref(&self) -> &[Block] {
        self.list.get_or_init(|| {
            let Some(index) = &self.index else {
                return Vec::new();
            };
            let (start, end) = self.span;
            let from = index.group_start[start as usize] as usize;
            let to = index.group_start[end as usize] as usize;
            let mut list = index.grouped[from..to].to_vec();
            debug_assert_eq!(list.len(), self.len);
            // One group (no inner loop) is in RPO order already.
            if end - start > 1 {
                list.sort_unstable_by_key(|&b| index.rpo_pos[b]);
            }
            list
        })
    }
}

impl<'a> IntoIterator for &'a LoopBlocks {
    type Item = &'a Block;
    type IntoIter = std::slice::Iter<'a, Block>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for LoopBlocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq<Vec<Block>> for LoopBlocks {
    fn eq(&self, other: &Vec<Block>) -> bool {
        **self == **other
    }
}

/// One natural loop.
#[derive(Clone, Debug)]
pub struct Loop {
    /// The block that dominates the loop and is the target of its back edges.
    pub header: Block,
    /// Sources of back edges to the header, in RPO order.
    pub latches: Vec<Block>,
    /// All blocks of the loop, inner loops' included, in RPO order (header first);
    /// empty in a forest from [`LoopForest::compute_nest`]. Built on first use.
    pub blocks: LoopBlocks,
    /// The innermost enclosing loop.
    pub parent: Option<LoopId>,
    /// Loops immediately nested in this one.
    pub children: Vec<LoopId>,
    /// 1 for an outermost loop.
    pub depth: u32,
}

/// Index of a loop in a [`LoopForest`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct LoopId(pub u32);

/// All natural loops of a function and the innermost loop of every block.
#[derive(Clone, Debug, Default)]
pub struct LoopForest {
    loops: Vec<Loop>,
    innermost: SecondaryMap<Block, Option<LoopId>>,
    /// Each loop's interval in a pre-order numbering of the nesting forest: a loop
    /// contains exactly the loops whose first number falls in its interval, so
    /// [`Self::contains`] takes constant time however deep the nest.
    span: Vec<(u32, u32)>,
}

impl LoopForest {
    /// Finds the natural loops of `func`.
    pub fn compute(func: &Function, cfg: &ControlFlowGraph, dt: &DominatorTree) -> Self {
        let mut lf = Self::compute_nest(func, cfg, dt);
        let n = lf.loops.len();
        // Per loop, its number of blocks and the RPO positions they lie in: the
        // header comes first, and the end is the largest over its own blocks
        // and its inner loops' (children have smaller ids than their parents).
        let mut len = vec![0usize; n];
        let mut end = vec![0u32; n];
        let mut index = BlockIndex {
            rpo_pos: func.block_map(),
            ..BlockIndex::default()
        };
        for (i, &b) in cfg.rpo().iter().enumerate() {
            if let Some(l) = lf.innermost[b] {
                let l = l.0 as usize;
                len[l] += 1;
                end[l] = end[l].max(i as u32 + 1);
                index.grouped.push(b);
                index.rpo_pos[b] = i as u32;
            }
        }
        // Stable: each group keeps RPO order.
        let nest_num = |b: Block| lf.span[lf.innermost[b].unwrap().0 as usize].0;
        index.grouped.sort_by_key(|&b| nest_num(b));
        index.group_start = vec![0; n + 1];
        for &b in &index.grouped {
            index.group_start[nest_num(b) as usize + 1] += 1;
        }
        for k in 0..n {
            index.group_start[k + 1] += index.group_start[k];
        }
        let mut start = vec![0u32; n];
        for (i, &b) in cfg.rpo().iter().enumerate() {
            if lf.is_header(b) {
                start[lf.innermost[b].unwrap().0 as usize] = i as u32;
            }
        }
        for l in 0..n {
            if let Some(p) = lf.loops[l].parent {
                let p = p.0 as usize;
                len[p] += len[l];
                end[p] = end[p].max(end[l]);
            }
        }
        let index = Arc::new(index);
        for (l, lp) in lf.loops.iter_mut().enumerate() {
            lp.blocks = LoopBlocks {
                index: Some(Arc::clone(&index)),
                rpo_range: (start[l], end[l]),
                span: lf.span[l],
                len: len[l],
                list: OnceLock::new(),
            };
        }
        lf
    }

    /// The loops of `func` without their block lists (every [`Loop::blocks`] is
    /// empty): the headers, latches, nesting and membership, for a pass that
    /// needs no more. The lists hold each block once per loop around it, which
    /// is quadratic in the depth of a nest.
    pub fn compute_nest(func: &Function, cfg: &ControlFlowGraph, dt: &DominatorTree) -> Self {
        let mut lf = LoopForest {
            innermost: func.block_map(),
            ..LoopForest::default()
        };
        let mut rpo_num: SecondaryMap<Block, usize> = func.block_map();
        for (i, &b) in cfg.rpo().iter().enumerate() {
            rpo_num[b] = i;
        }
        // The natural loops, innermost first, by the code the back end uses too.
        let nest = natural_loops(cfg, dt);
        lf.loops = nest
            .loops
            .into_iter()
            .map(|l| Loop {
                header: l.header,
                latches: l.latches,
                blocks: LoopBlocks::default(),
                parent: l.parent.map(|p| LoopId(p as u32)),
                children: Vec::new(),
                depth: 0,
            })
            .collect();
        for &b in cfg.rpo() {
            lf.innermost[b] = nest.innermost[b].map(|l| LoopId(l as u32));
        }
        // Children, depths (parents were created after their children) and block lists.
        for i in (0..lf.loops.len()).rev() {
            let depth = match lf.loops[i].parent {
                Some(p) => {
                    lf.loops[p.0 as usize].children.push(LoopId(i as u32));
                    lf.loops[p.0 as usize].depth + 1
                }
                None => 1,
            };
            lf.loops[i].depth = depth;
        }
        for l in &mut lf.loops {
            l.children.sort_by_key(|c| c.0);
            l.latches.sort_by_key(|&b| rpo_num[b]);
        }
        lf.number_nest();
        lf
    }

    /// Numbers the nesting forest in pre-order (iteratively: nests can be deep).
    fn number_nest(&mut self) {
        self.span = vec![(0, 0); self.loops.len()];
        let mut next = 0u32;
        let roots: Vec<usize> = (0..self.loops.len())
            .filter(|&i| self.loops[i].parent.is_none())
            .collect();
        for root in roots {
            let mut stack = vec![(root, 0usize)];
            self.span[root].0 = next;
            next += 1;
            while let Some(&mut (l, ref mut k)) = stack.last_mut() {
                if let Some(&c) = self.loops[l].children.get(*k) {
                    *k += 1;
                    let c = c.0 as usize;
                    self.span[c].0 = next;
                    next += 1;
                    stack.push((c, 0));
                } else {
                    self.span[l].1 = next;
                    stack.pop();
                }
            }
        }
    }

    /// Whether loop `inner` is `outer` or nested in it.
    pub fn nested_in(&self, inner: LoopId, outer: LoopId) -> bool {
        let (start, end) = self.span[outer.0 as usize];
        (start..end).contains(&self.span[inner.0 as usize].0)
    }

    /// All loops, innermost first (each loop's id is smaller than its parent's).
    pub fn loops(&self) -> impl Iterator<Item = (LoopId, &Loop)> {
        self.loops
            .iter()
            .enumerate()
            .map(|(i, l)| (LoopId(i as u32), l))
    }

    /// Number of loops.
    pub fn len(&self) -> usize {
        self.loops.len()
    }

    /// Whether the function has no loops.
    pub fn is_empty(&self) -> bool {
        self.loops.is_empty()
    }

    /// The loop with id `l`.
    pub fn get(&self, l: LoopId) -> &Loop {
        &self.loops[l.0 as usize]
    }

    /// The innermost loop containing `b`.
    pub fn innermost(&self, b: Block) -> Option<LoopId> {
        self.innermost[b]
    }

    /// Loop nesting depth of `b`: 0 outside loops.
    pub fn depth(&self, b: Block) -> u32 {
        self.innermost[b].map_or(0, |l| self.get(l).depth)
    }

    /// Whether `b` is the header of a loop.
    pub fn is_header(&self, b: Block) -> bool {
        self.innermost[b].is_some_and(|l| self.get(l).header == b)
    }

    /// Whether loop `l` contains block `b` (directly or in a nested loop).
    pub fn contains(&self, l: LoopId, b: Block) -> bool {
        self.innermost[b].is_some_and(|inner| self.nested_in(inner, l))
    }

    /// The values loop `l` defines: block by block, each block's parameters, then
    /// its instructions' results ([`Function::block_values`]).
    pub fn defined_values<'a>(
        &'a self,
        f: &'a Function,
        l: LoopId,
    ) -> impl Iterator<Item = Value> + 'a {
        self.get(l).blocks.iter().flat_map(|&b| f.block_values(b))
    }

    /// Whether an instruction outside loop `l` (or in no block) uses `v`.
    pub fn used_outside(&self, f: &Function, l: LoopId, v: Value) -> bool {
        f.users(v)
            .iter()
            .any(|&u| f.layout.inst_block(u).is_none_or(|b| !self.contains(l, b)))
    }

    /// The preheader of `l`: the unique predecessor of the header from outside the
    /// loop, provided its only outgoing edge goes to the header (so code placed at its
    /// end runs exactly once before each entry into the loop, and its terminator is a
    /// `jump` whose arguments are the loop's initial values; a `br` with both arms to the
    /// header is not a preheader). `None` when there is no such block.
    pub fn preheader(&self, l: LoopId, cfg: &ControlFlowGraph) -> Option<Block> {
        let header = self.get(l).header;
        // The one distinct predecessor outside the loop (edges from it may repeat).
        let mut outside = None;
        for &q in cfg.preds(header) {
            if self.contains(l, q) || outside == Some(q) {
                continue;
            }
            if outside.is_some() {
                return None;
            }
            outside = Some(q);
        }
        let p = outside?;
        (cfg.succs(p) == [header]).then_some(p)
    }

    /// Per loop (indexed by [`LoopId`]), the sum of `per_block` over its blocks,
    /// inner loops' included: each block is visited once, so this is linear in
    /// the function however deep the nest, where summing over every loop's
    /// [`Loop::blocks`] is quadratic.
    pub fn sum_over_blocks(
        &self,
        func: &Function,
        mut per_block: impl FnMut(Block) -> usize,
    ) -> Vec<usize> {
        let mut sums = vec![0usize; self.loops.len()];
        for b in func.layout.blocks() {
            if let Some(l) = self.innermost[b] {
                sums[l.0 as usize] += per_block(b);
            }
        }
        // Inner loops come before the loops around them.
        for l in 0..self.loops.len() {
            if let Some(p) = self.loops[l].parent {
                sums[p.0 as usize] += sums[l];
            }
        }
        sums
    }

    /// Per loop (indexed by [`LoopId`]), the number of its blocks that leave it:
    /// that have a successor outside it, or none at all (a return). A block
    /// leaves the loops around it from its innermost one up to the outermost
    /// that one of its successors lies outside of, so each block costs the
    /// loops its edges leave, not the depth of the nest.
    pub fn exiting_counts(&self, func: &Function, cfg: &ControlFlowGraph) -> Vec<usize> {
        let n = self.loops.len();
        // +1 at the innermost loop a block leaves, -1 above the outermost.
        let mut diff = vec![0isize; n];
        for b in func.layout.blocks() {
            let Some(inner) = self.innermost[b] else {
                continue;
            };
            let top = if func.successors(b).is_empty() {
                Some(None)
            } else {
                let mut top: Option<Option<LoopId>> = None;
                for &s in cfg.succs(b) {
                    if self.contains(inner, s) {
                        continue;
                    }
                    let mut l = inner;
                    while let Some(p) = self.get(l).parent {
                        if self.contains(p, s) {
                            break;
                        }
                        l = p;
                    }
                    // The loop above the outermost one left (`None`: it
                    // leaves them all); the highest over the edges wins.
                    let above = self.get(l).parent;
                    let higher = match (top, above) {
                        (None, _) | (Some(Some(_)), None) => true,
                        (Some(None), _) => false,
                        (Some(Some(t)), Some(a)) => t != a && self.nested_in(t, a),
                    };
                    if higher {
                        top = Some(above);
                    }
                }
                top
            };
            if let Some(above) = top {
                diff[inner.0 as usize] += 1;
                if let Some(a) = above {
                    diff[a.0 as usize] -= 1;
                }
            }
        }
        // Inner loops come before the loops around them.
        for l in 0..n {
            if let Some(p) = self.loops[l].parent {
                diff[p.0 as usize] += diff[l];
            }
        }
        diff.into_iter().map(|d| d as usize).collect()
    }

    /// Per loop (indexed by [`LoopId`]), its exiting blocks (with a successor
    /// outside it, or none at all: a return), in RPO order. A block is visited
    /// once for each loop it leaves, from its innermost loop outwards (a block
    /// that stays in a loop stays in those around it), not once per loop around
    /// it: linear in a deep nest, where asking each loop's block list is not.
    pub fn exiting_blocks(&self, func: &Function, cfg: &ControlFlowGraph) -> Vec<Vec<Block>> {
        let mut out = vec![Vec::new(); self.loops.len()];
        for &b in cfg.rpo() {
            let succs = func.successors(b);
            let mut l = self.innermost[b];
            while let Some(cur) = l {
                if !succs.is_empty() && succs.iter().all(|&s| self.contains(cur, s)) {
                    break;
                }
                out[cur.0 as usize].push(b);
                l = self.get(cur).parent;
            }
        }
        out
    }

    /// Per loop (indexed by [`LoopId`]), the blocks whose innermost loop it is,
    /// in RPO order; `cfg` is the graph the forest was computed from.
    pub fn own_blocks(&self, cfg: &ControlFlowGraph) -> Vec<Vec<Block>> {
        let mut own = vec![Vec::new(); self.loops.len()];
        for &b in cfg.rpo() {
            if let Some(l) = self.innermost[b] {
                own[l.0 as usize].push(b);
            }
        }
        own
    }

    /// Per loop (indexed by [`LoopId`]), its number of instructions.
    pub fn inst_counts(&self, func: &Function) -> Vec<usize> {
        self.sum_over_blocks(func, |b| func.layout.block_insts(b).count())
    }

    /// Blocks outside `l` that are successors of blocks in `l`, in RPO of discovery.
    pub fn exits(&self, l: LoopId, cfg: &ControlFlowGraph) -> Vec<Block> {
        let mut out = Vec::new();
        for &b in &self.get(l).blocks {
            for &s in cfg.succs(b) {
                if !self.contains(l, s) && !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testcfg::{cfg_func, idx, CYTRON_FIG5};

    fn forest(n: usize, edges: &[(usize, usize)]) -> (LoopForest, ControlFlowGraph, Vec<Block>) {
        let (f, b) = cfg_func(n, edges);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        let lf = LoopForest::compute(&f, &cfg, &dt);
        check_block_lists(&lf, &cfg);
        (lf, cfg, b)
    }

    fn check_block_lists_of(lf: &LoopForest, cfg: &ControlFlowGraph, l: LoopId) {
        let want: Vec<Block> = cfg
            .rpo()
            .iter()
            .copied()
            .filter(|&b| lf.contains(l, b))
            .collect();
        assert_eq!(lf.get(l).blocks, want);
    }

    /// Every loop's block list, built on first use, is the blocks it contains in
    /// RPO order, and its length (known without building it) agrees.
    fn check_block_lists(lf: &LoopForest, cfg: &ControlFlowGraph) {
        for (l, lp) in lf.loops() {
            let len = lp.blocks.len();
            check_block_lists_of(lf, cfg, l);
            assert_eq!(lp.blocks[0], lp.header);
            assert_eq!(lp.blocks.iter().count(), len);
        }
    }

    /// A nest 2000 loops deep (header `2k+1` enters loop `k+1` or leaves to the
    /// latch `2k` of loop `k-1`): nesting, depths and membership, and the same
    /// forest without block lists from `compute_nest`.
    #[test]
    fn deep_nest_and_the_forest_without_block_lists() {
        let d = 2000usize;
        let mut edges = vec![(0, 1)];
        for k in 0..d {
            let (h, latch) = (2 * k + 1, 2 * k + 2);
            edges.push((h, if k + 1 < d { h + 2 } else { latch }));
            edges.push((h, if k > 0 { h - 1 } else { 2 * d + 1 }));
            edges.push((latch, h));
        }
        let (f, b) = cfg_func(2 * d + 2, &edges);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        let full = LoopForest::compute(&f, &cfg, &dt);
        let nest = LoopForest::compute_nest(&f, &cfg, &dt);
        // Only the innermost loop's list is built here: the rest is its length.
        check_block_lists_of(&full, &cfg, full.innermost(b[2 * d - 1]).unwrap());
        assert_eq!(full.len(), d);
        assert_eq!(nest.len(), d);
        for k in 0..d {
            let (h, latch) = (b[2 * k + 1], b[2 * k + 2]);
            let l = full.innermost(h).unwrap();
            assert_eq!(full.get(l).header, h);
            assert_eq!(full.depth(latch), k as u32 + 1);
            assert_eq!(full.get(l).blocks.len(), 2 * (d - k));
            assert_eq!(nest.innermost(h), Some(l));
            assert_eq!(nest.get(l).parent, full.get(l).parent);
            assert_eq!(nest.get(l).latches, vec![latch]);
            assert!(nest.get(l).blocks.is_empty());
        }
        let outer = full.innermost(b[1]).unwrap();
        let inner = full.innermost(b[2 * d - 1]).unwrap();
        assert!(nest.contains(outer, b[2 * d]) && !nest.contains(inner, b[2]));
        assert!(nest.nested_in(inner, outer));
    }

    /// Loops in sequence whose bodies the RPO places after all the code that
    /// follows them (each header's exit edge comes first), with a nest in the
    /// middle: every list is right, though a loop's RPO positions span the rest
    /// of the function (its list is built from its own blocks, not that span).
    #[test]
    fn block_lists_of_loops_whose_bodies_come_last_in_rpo() {
        // Header 2k+1 enters its body 2k+2, which jumps back, or exits to 2k+3
        // (or the end), which the RPO visits first; the body of loop 2 is itself a loop (2 -> 3 -> 2).
        let n = 6usize;
        let end = 2 * n + 1;
        let mut edges = vec![(0, 1)];
        for k in 0..n {
            let (h, body) = (2 * k + 1, 2 * k + 2);
            edges.push((h, body));
            edges.push((h, if k + 1 < n { h + 2 } else { end }));
            edges.push((body, h));
        }
        edges.push((6, 6));
        let (lf, cfg, b) = forest(end + 1, &edges);
        assert_eq!(lf.len(), n + 1);
        check_block_lists(&lf, &cfg);
        let rpo_pos = |x: Block| cfg.rpo().iter().position(|&y| y == x).unwrap();
        let l0 = lf.innermost(b[1]).unwrap();
        assert_eq!(lf.get(l0).blocks, vec![b[1], b[2]]);
        assert!(
            rpo_pos(b[2]) > rpo_pos(b[end]),
            "the body comes last in RPO"
        );
        let outer = lf.innermost(b[5]).unwrap();
        assert_eq!(lf.get(outer).blocks.len(), 2);
        assert_eq!(lf.get(lf.innermost(b[6]).unwrap()).parent, Some(outer));
    }

    /// Sums over blocks count each block once per loop around it.
    #[test]
    fn sums_over_blocks_cover_inner_loops() {
        let (f, b) = cfg_func(14, CYTRON_FIG5);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        let lf = LoopForest::compute(&f, &cfg, &dt);
        let sums = lf.sum_over_blocks(&f, |x| if x == b[10] { 100 } else { 1 });
        let (inner, outer) = (lf.innermost(b[10]).unwrap(), lf.innermost(b[3]).unwrap());
        assert_eq!(sums[inner.0 as usize], 102);
        assert_eq!(sums[outer.0 as usize], 110);
        check_exiting_counts(&lf, &f, &cfg);
        let own = lf.own_blocks(&cfg);
        for (l, lp) in lf.loops() {
            let want: Vec<Block> = lp
                .blocks
                .iter()
                .copied()
                .filter(|&x| lf.innermost(x) == Some(l))
                .collect();
            assert_eq!(own[l.0 as usize], want);
        }
        let counts = lf.inst_counts(&f);
        for (l, lp) in lf.loops() {
            let want: usize = lp
                .blocks
                .iter()
                .map(|&x| f.layout.block_insts(x).count())
                .sum();
            assert_eq!(counts[l.0 as usize], want);
        }
    }

    /// Exits that leave one, two and all three loops of a nest are counted
    /// for each loop they leave.
    #[test]
    fn exiting_blocks_of_multi_level_exits() {
        // A: header 1, latch 5; B: header 2, latch 4; C: 3 -> 11 -> 13 -> 3.
        // 3 -> 10 (-> 6 -> 5) leaves C and B; 11 -> 12 leaves C; 13 -> 8 (a
        // return) leaves all three; 12 -> 8 leaves B and A; 4 -> 5 leaves B;
        // 5 -> 7 leaves A. Block 9 is unreachable.
        let edges = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 11),
            (3, 10),
            (11, 13),
            (11, 12),
            (13, 3),
            (13, 8),
            (12, 4),
            (12, 8),
            (4, 2),
            (4, 5),
            (5, 1),
            (5, 7),
            (10, 6),
            (6, 5),
        ];
        let (f, b) = cfg_func(14, &edges);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        let lf = LoopForest::compute(&f, &cfg, &dt);
        check_block_lists(&lf, &cfg);
        check_exiting_counts(&lf, &f, &cfg);
        let exiting = lf.exiting_counts(&f, &cfg);
        let count = |h: usize| exiting[lf.innermost(b[h]).unwrap().0 as usize];
        assert_eq!((count(3), count(2), count(1)), (3, 4, 3));
        // The lists: C is left from 3, 11 and 13; B from 3, 13, 12 and 4 (RPO).
        let lists = lf.exiting_blocks(&f, &cfg);
        for (l, lp) in lf.loops() {
            let want: Vec<Block> = lp
                .blocks
                .iter()
                .copied()
                .filter(|&x| {
                    let s = f.successors(x);
                    s.is_empty() || s.iter().any(|&t| !lf.contains(l, t))
                })
                .collect();
            assert_eq!(lists[l.0 as usize], want);
            assert_eq!(want.len(), exiting[l.0 as usize]);
        }
        let c = lf.innermost(b[3]).unwrap();
        let mut got = lists[c.0 as usize].clone();
        got.sort();
        assert_eq!(got, vec![b[3], b[11], b[13]]);
    }

    /// Exiting counts agree with a scan of every loop's blocks.
    fn check_exiting_counts(lf: &LoopForest, f: &Function, cfg: &ControlFlowGraph) {
        let exiting = lf.exiting_counts(f, cfg);
        for (l, lp) in lf.loops() {
            let want = lp
                .blocks
                .iter()
                .filter(|&&x| {
                    f.successors(x).is_empty() || cfg.succs(x).iter().any(|&s| !lf.contains(l, s))
                })
                .count();
            assert_eq!(exiting[l.0 as usize], want, "{l:?}");
        }
    }

    /// A loop bb1-bb2 defining %1 (a parameter, returned after the loop), %2, %3
    /// (used only inside) and %4 (unused).
    #[test]
    fn values_a_loop_defines_and_those_used_outside() {
        let m = ir::parse_module(
            "func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0)
bb1(%1: i32):
  %2 = add %1, 1
  %3 = slt %2, %0
  br %3, bb2, bb3
bb2:
  %4 = mul %2, 2
  jump bb1(%2)
bb3:
  ret %1
}
",
        )
        .unwrap();
        let f = m.funcs.values().next().unwrap();
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let lf = LoopForest::compute(f, &cfg, &dt);
        let (id, _) = lf.loops().next().unwrap();
        let names = ir::text::Names::new(f);
        let defined: Vec<String> = lf.defined_values(f, id).map(|v| names.value(v)).collect();
        assert_eq!(defined, ["%1", "%2", "%3", "%4"]);
        let outside: Vec<String> = lf
            .defined_values(f, id)
            .filter(|&v| lf.used_outside(f, id, v))
            .map(|v| names.value(v))
            .collect();
        // %1 is returned in bb3; %2 and %3 are used in the loop only, %4 not at all.
        assert_eq!(outside, ["%1"]);
    }

    #[test]
    fn cytron_figure_5_has_two_nested_loops() {
        let (lf, cfg, b) = forest(14, CYTRON_FIG5);
        assert_eq!(lf.len(), 2);
        let inner = lf.innermost(b[10]).unwrap();
        let outer = lf.innermost(b[3]).unwrap();
        assert_eq!(lf.get(inner).header, b[9]);
        assert_eq!(lf.get(inner).latches, vec![b[11]]);
        assert_eq!(idx(&b, &lf.get(inner).blocks), vec![9, 10, 11]);
        assert_eq!(lf.get(outer).header, b[2]);
        assert_eq!(lf.get(outer).latches, vec![b[12]]);
        assert_eq!(
            idx(&b, &lf.get(outer).blocks),
            vec![2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
        );
        assert_eq!(lf.get(inner).parent, Some(outer));
        assert_eq!(lf.get(outer).children, vec![inner]);
        let depths: Vec<u32> = b.iter().map(|&x| lf.depth(x)).collect();
        assert_eq!(depths, vec![0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 0]);
        assert!(lf.is_header(b[9]) && lf.is_header(b[2]) && !lf.is_header(b[11]));
        assert_eq!(lf.preheader(outer, &cfg), Some(b[1]));
        assert_eq!(lf.preheader(inner, &cfg), Some(b[8]));
        assert_eq!(lf.exits(inner, &cfg), vec![b[12]]);
        assert_eq!(lf.exits(outer, &cfg), vec![b[13]]);
    }

    #[test]
    fn while_loop_with_two_latches_is_one_loop() {
        // The seed's `while (i < 3) { if (i < 1) { ...; continue; } else { ... } }`:
        // header 1 -> {2, 5}; 2 -> {3, 4}; 3 -> 1 (continue); 4 -> 1; 5 returns.
        let (lf, cfg, b) = forest(6, &[(0, 1), (1, 2), (1, 5), (2, 3), (2, 4), (3, 1), (4, 1)]);
        assert_eq!(lf.len(), 1);
        let (l, lp) = lf.loops().next().unwrap();
        assert_eq!(lp.header, b[1]);
        assert_eq!(idx(&b, &lp.latches), vec![3, 4]);
        assert_eq!(idx(&b, &lp.blocks), vec![1, 2, 3, 4]);
        assert_eq!(lp.depth, 1);
        assert_eq!(lf.preheader(l, &cfg), Some(b[0]));
    }

    #[test]
    fn no_preheader_when_the_entering_block_branches() {
        // 0 -> {1, 2}; loop 1 -> 1 (self loop), 1 -> 2.
        let (lf, cfg, b) = forest(3, &[(0, 1), (0, 2), (1, 1), (1, 2)]);
        let (l, lp) = lf.loops().next().unwrap();
        assert_eq!(lp.blocks, vec![b[1]]);
        assert_eq!(lp.latches, vec![b[1]]);
        assert_eq!(lf.preheader(l, &cfg), None);
    }

    #[test]
    fn irreducible_cycle_is_not_a_loop() {
        // 0 -> {1, 2}; 1 <-> 2: neither dominates the other.
        let (lf, _, b) = forest(4, &[(0, 1), (0, 2), (1, 2), (2, 1), (1, 3)]);
        assert!(lf.is_empty());
        assert_eq!(lf.depth(b[1]), 0);
    }

    #[test]
    fn triply_nested_loops() {
        // 0 -> 1 -> 2 -> 3 -> 3 | 4; 4 -> 2 | 5; 5 -> 1 | 6.
        let (lf, _, b) = forest(
            7,
            &[
                (0, 1),
                (1, 2),
                (2, 3),
                (3, 3),
                (3, 4),
                (4, 2),
                (4, 5),
                (5, 1),
                (5, 6),
            ],
        );
        assert_eq!(lf.len(), 3);
        let depths: Vec<u32> = b.iter().map(|&x| lf.depth(x)).collect();
        assert_eq!(depths, vec![0, 1, 2, 3, 2, 1, 0]);
        let l3 = lf.innermost(b[3]).unwrap();
        let l2 = lf.get(l3).parent.unwrap();
        let l1 = lf.get(l2).parent.unwrap();
        assert_eq!(lf.get(l1).parent, None);
        assert!(lf.contains(l1, b[3]) && !lf.contains(l3, b[4]));
    }

    #[test]
    fn siblings_and_separate_loops_do_not_contain_each_other() {
        // Outer loop 1..4 holds two self-loops 2 and 3; loop 6 comes after it.
        let (lf, _, b) = forest(
            8,
            &[
                (0, 1),
                (1, 2),
                (2, 2),
                (2, 3),
                (3, 3),
                (3, 4),
                (4, 1),
                (4, 5),
                (5, 6),
                (6, 6),
                (6, 7),
            ],
        );
        assert_eq!(lf.len(), 4);
        let (l2, l3) = (lf.innermost(b[2]).unwrap(), lf.innermost(b[3]).unwrap());
        let (outer, other) = (lf.innermost(b[1]).unwrap(), lf.innermost(b[6]).unwrap());
        assert!(lf.nested_in(l2, outer) && lf.nested_in(l3, outer));
        assert!(lf.nested_in(outer, outer));
        assert!(!lf.nested_in(l2, l3) && !lf.nested_in(l3, l2));
        assert!(!lf.nested_in(outer, l2) && !lf.nested_in(other, outer));
        assert!(lf.contains(outer, b[3]) && lf.contains(outer, b[4]));
        assert!(!lf.contains(l2, b[3]) && !lf.contains(l3, b[2]));
        assert!(!lf.contains(outer, b[6]) && !lf.contains(other, b[4]));
        assert!(!lf.contains(outer, b[0]) && !lf.contains(other, b[7]));
    }
}
