//! Control dependence asked block by block, without building the relation: the
//! branches deciding whether a block runs, each reported once.
//!
//! Block `y` is control dependent on `x` when, for an edge `x -> s`, `y` lies on the
//! post-dominator tree path from `s` up to `ipdom(x)` (excluded): see
//! [`super::ControlDependence`], which lists these pairs. In a loop nest whose loops
//! always run their inner loops, every block depends on every enclosing loop's
//! latch, so the list is quadratic in the depth of the nest. A client that only
//! marks deciders (aggressive dead code elimination marks the branches deciding each
//! live block) needs each branch once. Here every edge is kept at the pre-order
//! number of `s` in the post-dominator tree with the depth of `ipdom(x)`: the edges
//! whose path holds `y` are those whose `s` lies in `y`'s subtree (a range of
//! pre-order numbers) and whose `ipdom(x)` lies above `y` (a smaller depth). A
//! segment tree over the pre-order numbers, keeping the least such depth of each
//! range, finds them and removes them, so each edge costs a logarithmic time
//! once in all.

use super::postdom::PostDominatorTree;
use ir::analysis::ControlFlowGraph;
use ir::{Block, SecondaryMap};
use smallvec::SmallVec;

/// The edges of a function not yet reported, indexed for [`Deciders::take`].
pub struct Deciders {
    /// Pre-order number, end of the subtree's numbers, and depth (the virtual exit
    /// is at depth 0) of each block in the post-dominator tree.
    pre: SecondaryMap<Block, u32>,
    end: SecondaryMap<Block, u32>,
    depth: SecondaryMap<Block, u32>,
    in_tree: SecondaryMap<Block, bool>,
    /// Per pre-order number of an edge's target `s`: the edges' `(depth of
    /// ipdom(x), x)`, the least depth last.
    edges: Vec<Vec<(u32, Block)>>,
    /// Segment tree (node 1 is the root, node `size + i` the leaf of number `i`):
    /// the least depth among the edges left in each range.
    least: Vec<u32>,
    size: usize,
    reported: SecondaryMap<Block, bool>,
}

impl Deciders {
    /// Indexes the edges of the reachable blocks of `cfg`.
    pub fn new(cfg: &ControlFlowGraph, pdt: &PostDominatorTree) -> Self {
        let mut d = Deciders {
            pre: SecondaryMap::new(),
            end: SecondaryMap::new(),
            depth: SecondaryMap::new(),
            in_tree: SecondaryMap::new(),
            edges: Vec::new(),
            least: Vec::new(),
            size: 1,
            reported: SecondaryMap::new(),
        };
        // Number the tree in pre-order, iteratively (trees can be deep).
        let mut next = 0u32;
        let mut stack: Vec<(Block, bool)> = pdt.roots().iter().rev().map(|&r| (r, false)).collect();
        while let Some((b, done)) = stack.pop() {
            if done {
                d.end[b] = next;
                continue;
            }
            d.pre[b] = next;
            d.in_tree[b] = true;
            d.depth[b] = pdt.ipdom(b).map_or(1, |p| d.depth[p] + 1);
            next += 1;
            stack.push((b, true));
            for &c in pdt.children(b).iter().rev() {
                stack.push((c, false));
            }
        }
        let n = next as usize;
        while d.size < n {
            d.size *= 2;
        }
        d.edges = vec![Vec::new(); n];
        for &x in cfg.rpo() {
            let stop = pdt.ipdom(x).map_or(0, |p| d.depth[p]);
            for &s in cfg.succs(x) {
                if d.in_tree[s] && stop < d.depth[s] {
                    d.edges[d.pre[s] as usize].push((stop, x));
                }
            }
        }
        d.least = vec![u32::MAX; 2 * d.size];
        for (i, list) in d.edges.iter_mut().enumerate() {
            list.sort_by_key(|e| std::cmp::Reverse(e.0));
            d.least[d.size + i] = list.last().map_or(u32::MAX, |e| e.0);
        }
        for i in (1..d.size).rev() {
            d.least[i] = d.least[2 * i].min(d.least[2 * i + 1]);
        }
        d
    }

    /// Appends to `out` the blocks `y` is control dependent on that no earlier call
    /// reported.
    pub fn take(&mut self, y: Block, out: &mut Vec<Block>) {
        if !self.in_tree[y] {
            return;
        }
        let (lo, hi, depth) = (self.pre[y] as usize, self.end[y] as usize, self.depth[y]);
        // A walk down the segment tree: at most one pending sibling per level.
        let mut stack: SmallVec<[(usize, usize, usize); 32]> =
            smallvec::smallvec![(1usize, 0usize, self.size)];
        while let Some((node, l, r)) = stack.pop() {
            if r <= lo || hi <= l || self.least[node] >= depth {
                continue;
            }
            if r - l > 1 {
                let m = (l + r) / 2;
                stack.push((2 * node + 1, m, r));
                stack.push((2 * node, l, m));
                continue;
            }
            let list = &mut self.edges[l];
            while let Some(&(stop, x)) = list.last() {
                if stop >= depth {
                    break;
                }
                list.pop();
                if !self.reported[x] {
                    self.reported[x] = true;
                    out.push(x);
                }
            }
            self.least[node] = list.last().map_or(u32::MAX, |e| e.0);
            let mut i = node / 2;
            while i >= 1 {
                self.least[i] = self.least[2 * i].min(self.least[2 * i + 1]);
                i /= 2;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testcfg::{cfg_func, CYTRON_FIG5};
    use crate::analysis::ControlDependence;
    use crate::passes::testutil::XorShift;

    /// Asking block after block reports exactly the union of their control
    /// dependences, each block once.
    fn agrees_with_control_dependence(n: usize, edges: &[(usize, usize)], order: &[usize]) {
        let (f, b) = cfg_func(n, edges);
        let cfg = ControlFlowGraph::compute(&f);
        let pdt = PostDominatorTree::compute(&f, &cfg);
        let cd = ControlDependence::compute(&cfg, &pdt);
        let mut deciders = Deciders::new(&cfg, &pdt);
        let mut expected: Vec<Block> = Vec::new();
        let mut got: Vec<Block> = Vec::new();
        for &i in order {
            for &x in cd.deps(b[i]) {
                if !expected.contains(&x) {
                    expected.push(x);
                }
            }
            deciders.take(b[i], &mut got);
            let mut sorted = got.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), got.len(), "reported twice: {got:?}");
            let mut want = expected.clone();
            want.sort();
            assert_eq!(sorted, want, "after asking {order:?} up to {i}: {edges:?}");
        }
    }

    #[test]
    fn cytron_figure_5() {
        let order: Vec<usize> = (0..14).rev().collect();
        agrees_with_control_dependence(14, CYTRON_FIG5, &order);
        agrees_with_control_dependence(14, CYTRON_FIG5, &[9, 3, 6, 0, 13]);
    }

    #[test]
    fn nested_loops_and_infinite_loops() {
        // Three nested do-while loops: 1 (latch 6), 2 (latch 5), 3 (self loop).
        let nest = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 3),
            (3, 4),
            (4, 5),
            (5, 2),
            (5, 6),
        ];
        let nest: Vec<_> = nest.into_iter().chain([(6, 1), (6, 7)]).collect();
        agrees_with_control_dependence(8, &nest, &[3, 4, 2, 5, 6, 7, 1, 0]);
        // An infinite loop (a fake exit in the post-dominator tree).
        let endless = [(0, 1), (1, 2), (1, 3), (2, 1), (3, 4), (4, 3)];
        agrees_with_control_dependence(5, &endless, &[4, 3, 2, 1, 0]);
    }

    #[test]
    fn random_cfgs() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300 {
            let n = 2 + (rng.next() % 12) as usize;
            let mut edges = Vec::new();
            for i in 0..n {
                let k = rng.next() % 3;
                for _ in 0..k {
                    let t = (rng.next() % n as u64) as usize;
                    if t != 0 && !edges.contains(&(i, t)) {
                        edges.push((i, t));
                    }
                }
            }
            let mut order: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
            }
            agrees_with_control_dependence(n, &edges, &order);
        }
    }
}
