//! The post-dominator tree: `a` post-dominates `b` when every path from `b` to the
//! end of the function passes through `a`.
//!
//! Computed with the iterative algorithm of Cooper, Harvey and Kennedy ("A Simple,
//! Fast Dominance Algorithm", 2001) on the reverse CFG, rooted at a virtual exit node
//! that every returning block flows into. A function can have several `ret` blocks
//! (all become children of the virtual exit) and infinite loops, whose blocks never
//! reach a `ret`: as LLVM's post-dominator tree does, we connect such a region to the
//! virtual exit through one of its blocks (a "fake exit"), chosen as the unconnected
//! block latest in reverse post-order, which always lies on a cycle (all its
//! successors precede it, so each edge out of it is a back edge). We repeat until every
//! reachable block reaches the virtual exit. Unreachable blocks are not in the tree.

use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, SecondaryMap};

/// Immediate post-dominators of the reachable blocks. The virtual exit is the root and
/// is not a block: blocks it immediately post-dominates have `ipdom == None`.
#[derive(Clone, Debug, Default)]
pub struct PostDominatorTree {
    ipdom: SecondaryMap<Block, Option<Block>>,
    in_tree: SecondaryMap<Block, bool>,
    children: SecondaryMap<Block, Vec<Block>>,
    roots: Vec<Block>,
    fake_exits: Vec<Block>,
    /// Pre- and post-order numbers in the tree, for O(1) `post_dominates`.
    pre: SecondaryMap<Block, u32>,
    post: SecondaryMap<Block, u32>,
}

impl PostDominatorTree {
    /// Computes the post-dominator tree of the blocks of `func` reachable from its entry.
    pub fn compute(func: &Function, cfg: &ControlFlowGraph) -> Self {
        let blocks = cfg.rpo();
        let n = blocks.len();
        let exit = n; // node index of the virtual exit
        let mut index: SecondaryMap<Block, usize> = SecondaryMap::with_default(usize::MAX);
        // Sized once: filled from empty, every write would resize it.
        index.resize(func.num_blocks());
        for (i, &b) in blocks.iter().enumerate() {
            index[b] = i;
        }
        let reachable = |b: Block| index[b] != usize::MAX;

        // Reverse-graph edges: the virtual exit flows to the exit blocks, a block flows
        // to its CFG predecessors.
        let mut exit_succs: Vec<usize> = (0..n)
            .filter(|&i| cfg.succs(blocks[i]).is_empty())
            .collect();

        // Connect infinite loops to the virtual exit.
        let mut connected = vec![false; n];
        let mut stack: Vec<usize> = Vec::new();
        let mark_from = |start: usize, connected: &mut Vec<bool>, stack: &mut Vec<usize>| {
            if connected[start] {
                return;
            }
            connected[start] = true;
            stack.push(start);
            while let Some(x) = stack.pop() {
                for &p in cfg.preds(blocks[x]) {
                    if reachable(p) && !connected[index[p]] {
                        connected[index[p]] = true;
                        stack.push(index[p]);
                    }
                }
            }
        };
        for &e in &exit_succs {
            mark_from(e, &mut connected, &mut stack);
        }
        let mut fake_exits = Vec::new();
        // Scan from the end of RPO: the first unconnected block found is the latest one.
        for i in (0..n).rev() {
            if !connected[i] {
                fake_exits.push(blocks[i]);
                exit_succs.push(i);
                mark_from(i, &mut connected, &mut stack);
            }
        }
        let is_exit_succ = {
            let mut v = vec![false; n];
            for &e in &exit_succs {
                v[e] = true;
            }
            v
        };

        // Reverse post-order of the reverse graph, from the virtual exit.
        let rev_succs = |x: usize| -> Vec<usize> {
            if x == exit {
                exit_succs.clone()
            } else {
                cfg.preds(blocks[x])
                    .iter()
                    .filter(|&&p| reachable(p))
                    .map(|&p| index[p])
                    .collect()
            }
        };
        let mut visited = vec![false; n + 1];
        let mut postorder: Vec<usize> = Vec::with_capacity(n + 1);
        let mut dfs: Vec<(usize, Vec<usize>, usize)> = vec![(exit, rev_succs(exit), 0)];
        visited[exit] = true;
        while let Some((x, succs, i)) = dfs.last_mut() {
            if let Some(&s) = succs.get(*i) {
                *i += 1;
                if !visited[s] {
                    visited[s] = true;
                    let ss = rev_succs(s);
                    dfs.push((s, ss, 0));
                }
            } else {
                postorder.push(*x);
                dfs.pop();
            }
        }
        let mut order = vec![usize::MAX; n + 1]; // reverse-graph RPO number
        for (k, &x) in postorder.iter().rev().enumerate() {
            order[x] = k;
        }

        // Cooper-Harvey-Kennedy on the reverse graph: the "predecessors" of a node there
        // are its CFG successors (and the virtual exit for exit blocks).
        let mut idom = vec![usize::MAX; n + 1];
        idom[exit] = exit;
        let intersect = |idom: &Vec<usize>, mut a: usize, mut b: usize| {
            while a != b {
                while order[a] > order[b] {
                    a = idom[a];
                }
                while order[b] > order[a] {
                    b = idom[b];
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for &x in postorder.iter().rev() {
                if x == exit {
                    continue;
                }
                let mut new_idom = if is_exit_succ[x] { Some(exit) } else { None };
                for &s in cfg.succs(blocks[x]) {
                    let s = index[s];
                    if idom[s] == usize::MAX {
                        continue;
                    }
                    new_idom = Some(match new_idom {
                        None => s,
                        Some(cur) => intersect(&idom, s, cur),
                    });
                }
                if let Some(d) = new_idom {
                    if idom[x] != d {
                        idom[x] = d;
                        changed = true;
                    }
                }
            }
        }

        // Every table sized once: filled from empty, writes would grow them entry
        // by entry.
        let mut t = PostDominatorTree {
            ipdom: func.block_map(),
            in_tree: func.block_map(),
            children: func.block_map(),
            pre: func.block_map(),
            post: func.block_map(),
            fake_exits,
            ..Default::default()
        };
        // Children in reverse-graph RPO order, so the tree walk is deterministic.
        for &x in postorder.iter().rev() {
            if x == exit {
                continue;
            }
            let b = blocks[x];
            t.in_tree[b] = true;
            if idom[x] == exit {
                t.ipdom[b] = None;
                t.roots.push(b);
            } else {
                let p = blocks[idom[x]];
                t.ipdom[b] = Some(p);
                t.children[p].push(b);
            }
        }
        t.number();
        t
    }

    fn number(&mut self) {
        let mut counter = 0u32;
        let mut stack: Vec<(Block, bool)> = self.roots.iter().rev().map(|&r| (r, false)).collect();
        while let Some((b, done)) = stack.pop() {
            if done {
                self.post[b] = counter;
                counter += 1;
                continue;
            }
            self.pre[b] = counter;
            counter += 1;
            stack.push((b, true));
            for &c in self.children[b].iter().rev() {
                stack.push((c, false));
            }
        }
    }

    /// The immediate post-dominator of `b`; `None` when it is the virtual exit or `b`
    /// is unreachable.
    pub fn ipdom(&self, b: Block) -> Option<Block> {
        self.ipdom[b]
    }

    /// Whether `b` is in the tree (reachable from the entry).
    pub fn is_in_tree(&self, b: Block) -> bool {
        self.in_tree[b]
    }

    /// Whether `a` post-dominates `b` (reflexive). False when either is not in the tree.
    pub fn post_dominates(&self, a: Block, b: Block) -> bool {
        self.in_tree[a]
            && self.in_tree[b]
            && self.pre[a] <= self.pre[b]
            && self.post[b] <= self.post[a]
    }

    /// Blocks immediately post-dominated by `b`.
    pub fn children(&self, b: Block) -> &[Block] {
        &self.children[b]
    }

    /// Blocks immediately post-dominated by the virtual exit: the returning blocks and
    /// the fake exits of infinite loops.
    pub fn roots(&self) -> &[Block] {
        &self.roots
    }

    /// Blocks of infinite loops that were connected to the virtual exit.
    pub fn fake_exits(&self) -> &[Block] {
        &self.fake_exits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testcfg::{cfg_func, CYTRON_FIG5};

    #[test]
    fn cytron_figure_5_post_dominators() {
        let (f, b) = cfg_func(14, CYTRON_FIG5);
        let cfg = ControlFlowGraph::compute(&f);
        let pdt = PostDominatorTree::compute(&f, &cfg);
        // ipdom, by hand: Exit (13) is the only returning block.
        let expected: [Option<usize>; 14] = [
            Some(13),
            Some(2),
            Some(8),
            Some(6),
            Some(6),
            Some(6),
            Some(8),
            Some(8),
            Some(9),
            Some(11),
            Some(11),
            Some(12),
            Some(13),
            None,
        ];
        for (i, e) in expected.iter().enumerate() {
            assert_eq!(pdt.ipdom(b[i]), e.map(|j| b[j]), "ipdom({i})");
        }
        assert_eq!(pdt.roots(), &[b[13]]);
        assert!(pdt.fake_exits().is_empty());
        assert!(pdt.post_dominates(b[12], b[2]));
        assert!(pdt.post_dominates(b[8], b[3]));
        assert!(!pdt.post_dominates(b[3], b[2]));
        assert!(!pdt.post_dominates(b[10], b[9]));
        assert!(pdt.post_dominates(b[5], b[5]));
    }

    #[test]
    fn several_returns_meet_at_the_virtual_exit() {
        // 0 -> {1, 2}; 1 returns; 2 -> 3 returns.
        let (f, b) = cfg_func(4, &[(0, 1), (0, 2), (2, 3)]);
        let cfg = ControlFlowGraph::compute(&f);
        let pdt = PostDominatorTree::compute(&f, &cfg);
        assert_eq!(pdt.ipdom(b[0]), None);
        assert_eq!(pdt.ipdom(b[1]), None);
        assert_eq!(pdt.ipdom(b[2]), Some(b[3]));
        assert_eq!(pdt.ipdom(b[3]), None);
        assert!(!pdt.post_dominates(b[1], b[0]));
        assert!(!pdt.post_dominates(b[3], b[0]));
        let mut roots = pdt.roots().to_vec();
        roots.sort();
        assert_eq!(roots, vec![b[0], b[1], b[3]]);
    }

    #[test]
    fn infinite_loop_gets_a_fake_exit() {
        // 0 -> {1, 4}; loop 1 -> {2, 3}, 2 -> 1, 3 -> 1 never exits; 4 returns.
        let (f, b) = cfg_func(5, &[(0, 1), (0, 4), (1, 2), (1, 3), (2, 1), (3, 1)]);
        let cfg = ControlFlowGraph::compute(&f);
        let pdt = PostDominatorTree::compute(&f, &cfg);
        assert_eq!(pdt.fake_exits().len(), 1);
        let fake = pdt.fake_exits()[0];
        assert!(fake == b[2] || fake == b[3], "a block on the cycle");
        for &x in &b {
            assert!(pdt.is_in_tree(x));
        }
        assert_eq!(pdt.ipdom(b[1]), Some(fake));
        assert_eq!(pdt.ipdom(b[0]), None);
        let other = if fake == b[2] { b[3] } else { b[2] };
        assert_eq!(pdt.ipdom(other), Some(b[1]));
        assert!(pdt.post_dominates(fake, other) && !pdt.post_dominates(other, fake));
    }

    #[test]
    fn function_that_never_returns() {
        // 0 -> 1 -> 1: no ret at all.
        let (f, b) = cfg_func(2, &[(0, 1), (1, 1)]);
        let cfg = ControlFlowGraph::compute(&f);
        let pdt = PostDominatorTree::compute(&f, &cfg);
        assert_eq!(pdt.fake_exits(), &[b[1]]);
        assert_eq!(pdt.ipdom(b[0]), Some(b[1]));
        assert_eq!(pdt.ipdom(b[1]), None);
    }
}
