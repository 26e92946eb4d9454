//! Dominator tree by the iterative algorithm of Cooper, Harvey and Kennedy, "A Simple,
//! Fast Dominance Algorithm" (2001): immediate dominators refined over reverse
//! post-order until a fixed point, intersecting along the current tree by RPO number.
//! Only blocks reachable from the entry are in the tree.
//!
//! The tree is computed over any [`Graph`]: the IR's [`ControlFlowGraph`]
//! ([`DominatorTree`]) and the back end's machine CFG use the same code.
//!
//! Each node's children list holds its first two children inline, so building the
//! tree allocates nothing for most nodes.

use super::cfg::ControlFlowGraph;
use super::graph::Graph;
use crate::entities::Block;
use crate::function::Function;
use cranelift_entity::{EntityRef, SecondaryMap};
use smallvec::SmallVec;

/// Immediate dominators, tree children, and RPO numbers for O(1) order queries,
/// over the nodes `N` of some [`Graph`].
#[derive(Clone, Debug)]
pub struct DomTree<N: EntityRef> {
    idom: SecondaryMap<N, Option<N>>,
    /// RPO index + 1 (0 means unreachable).
    rpo_num: SecondaryMap<N, u32>,
    children: SecondaryMap<N, SmallVec<[N; 2]>>,
    /// Pre-order and post-order numbers of the dominator tree, for O(1) `dominates`.
    pre: SecondaryMap<N, u32>,
    post: SecondaryMap<N, u32>,
    rpo: Vec<N>,
}

/// The dominator tree of an IR function.
pub type DominatorTree = DomTree<Block>;

impl<N: EntityRef> Default for DomTree<N> {
    fn default() -> Self {
        DomTree {
            idom: SecondaryMap::new(),
            rpo_num: SecondaryMap::new(),
            children: SecondaryMap::new(),
            pre: SecondaryMap::new(),
            post: SecondaryMap::new(),
            rpo: Vec::new(),
        }
    }
}

impl DomTree<Block> {
    /// Computes the dominator tree of `func` from its CFG.
    pub fn compute(func: &Function, cfg: &ControlFlowGraph) -> Self {
        let _ = func;
        Self::of_graph(cfg)
    }
}

impl<N: EntityRef> DomTree<N> {
    /// Computes the dominator tree of graph `g`.
    pub fn of_graph<G: Graph<Node = N>>(g: &G) -> Self {
        let rpo = g.rpo().to_vec();
        let mut dt = DomTree::default();
        for (i, &b) in rpo.iter().enumerate() {
            dt.rpo_num[b] = i as u32 + 1;
        }
        let Some(&entry) = rpo.first() else {
            dt.rpo = rpo;
            return dt;
        };
        dt.idom[entry] = Some(entry);
        // The first sweep sees only the predecessors before each block in RPO. When
        // every retreating edge goes to a block dominating its source (the graph is
        // reducible), that first tree is the fixed point: the next sweep would meet
        // each retreating predecessor below the block and change nothing, after
        // walking up from it (in a deep nest, from every latch through the whole
        // body). Otherwise the sweeps go on as usual.
        let mut changed = dt.sweep(g, &rpo);
        if changed && dt.retreating_edges_go_to_dominators(g, &rpo) {
            changed = false;
        }
        while changed {
            changed = dt.sweep(g, &rpo);
        }
        dt.idom[entry] = None;
        for &b in &rpo[1..] {
            if let Some(d) = dt.idom[b] {
                dt.children[d].push(b);
            }
        }
        dt.number_tree(entry);
        dt.rpo = rpo;
        dt
    }

    /// One pass of the iterative algorithm over `rpo`; whether an idom changed.
    fn sweep<G: Graph<Node = N>>(&mut self, g: &G, rpo: &[N]) -> bool {
        let mut changed = false;
        for &b in &rpo[1..] {
            let mut new_idom: Option<N> = None;
            for &p in g.preds(b) {
                if self.rpo_num[p] == 0 || self.idom[p].is_none() {
                    continue; // unreachable or not yet processed
                }
                new_idom = Some(match new_idom {
                    None => p,
                    Some(cur) => self.intersect(p, cur),
                });
            }
            if let Some(n) = new_idom {
                if self.idom[b] != Some(n) {
                    self.idom[b] = Some(n);
                    changed = true;
                }
            }
        }
        changed
    }

    /// Whether, in the tree of the current idoms (every reachable block has one),
    /// each edge `p -> b` with `p` not before `b` in RPO has `b` dominating `p`.
    fn retreating_edges_go_to_dominators<G: Graph<Node = N>>(&self, g: &G, rpo: &[N]) -> bool {
        // Pre- and post-order numbers of the tree, by RPO index.
        let n = rpo.len();
        let index = |b: N| self.rpo_num[b] as usize - 1;
        let mut children: Vec<SmallVec<[u32; 2]>> = vec![SmallVec::new(); n];
        for (i, &b) in rpo.iter().enumerate().skip(1) {
            match self.idom[b] {
                Some(d) => children[index(d)].push(i as u32),
                None => return false,
            }
        }
        let (mut pre, mut post) = (vec![0u32; n], vec![0u32; n]);
        let mut counter = 0u32;
        let mut stack = vec![(0u32, false)];
        while let Some((i, done)) = stack.pop() {
            if done {
                post[i as usize] = counter;
                counter += 1;
                continue;
            }
            pre[i as usize] = counter;
            counter += 1;
            stack.push((i, true));
            for &c in children[i as usize].iter().rev() {
                stack.push((c, false));
            }
        }
        let dominates = |a: usize, b: usize| pre[a] <= pre[b] && post[b] <= post[a];
        rpo.iter().enumerate().all(|(bi, &b)| {
            g.preds(b)
                .iter()
                .all(|&p| self.rpo_num[p] == 0 || index(p) < bi || dominates(bi, index(p)))
        })
    }

    fn intersect(&self, mut a: N, mut b: N) -> N {
        while a != b {
            while self.rpo_num[a] > self.rpo_num[b] {
                a = self.idom[a].expect("processed");
            }
            while self.rpo_num[b] > self.rpo_num[a] {
                b = self.idom[b].expect("processed");
            }
        }
        a
    }

    fn number_tree(&mut self, entry: N) {
        let mut counter = 0u32;
        let mut stack = vec![(entry, false)];
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

    /// Whether `b` is reachable from the entry.
    pub fn is_reachable(&self, b: N) -> bool {
        self.rpo_num[b] != 0
    }

    /// The immediate dominator of `b` (`None` for the entry and unreachable blocks).
    pub fn idom(&self, b: N) -> Option<N> {
        self.idom[b]
    }

    /// Children of `b` in the dominator tree, in RPO order.
    pub fn children(&self, b: N) -> &[N] {
        &self.children[b]
    }

    /// Whether `a` dominates `b` (reflexive). False when either is unreachable.
    pub fn dominates(&self, a: N, b: N) -> bool {
        if !self.is_reachable(a) || !self.is_reachable(b) {
            return false;
        }
        self.pre[a] <= self.pre[b] && self.post[b] <= self.post[a]
    }

    /// Whether `a` strictly dominates `b`.
    pub fn strictly_dominates(&self, a: N, b: N) -> bool {
        a != b && self.dominates(a, b)
    }

    /// Reachable blocks in reverse post-order.
    pub fn rpo(&self) -> &[N] {
        &self.rpo
    }

    /// Blocks in a pre-order walk of the dominator tree (each block after its idom).
    pub fn preorder(&self) -> Vec<N> {
        let mut out = Vec::with_capacity(self.rpo.len());
        let Some(&entry) = self.rpo.first() else {
            return out;
        };
        let mut stack = vec![entry];
        while let Some(b) = stack.pop() {
            out.push(b);
            for &c in self.children[b].iter().rev() {
                stack.push(c);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::FuncBuilder;
    use crate::function::Signature;
    use crate::types::Type;

    /// Builds a function whose CFG has the given edges over `n` blocks (block 0 is
    /// the entry); a block with two successors branches on a constant.
    fn cfg_func(n: usize, edges: &[(usize, usize)]) -> (Function, Vec<Block>) {
        let mut f = Function::new(
            "t",
            Signature {
                params: vec![],
                ret: Type::Void,
                variadic: false,
            },
        );
        let blocks: Vec<Block> = (0..n).map(|_| f.append_new_block()).collect();
        let c = f.iconst(1);
        let mut b = FuncBuilder::new(&mut f);
        for (i, &blk) in blocks.iter().enumerate() {
            b.switch_to_block(blk);
            let succ: Vec<usize> = edges.iter().filter(|e| e.0 == i).map(|e| e.1).collect();
            match succ.as_slice() {
                [] => {
                    b.ret(None);
                }
                [s] => {
                    b.jump(blocks[*s], vec![]);
                }
                [s, t] => {
                    b.br(c, blocks[*s], vec![], blocks[*t], vec![]);
                }
                _ => panic!("at most two successors"),
            }
        }
        (f, blocks)
    }

    #[test]
    fn diamond_and_loop() {
        // 0 -> 1 -> {2, 3} -> 4 -> 1 (loop back), 4 -> 5
        let (f, b) = cfg_func(6, &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 1), (4, 5)]);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        assert_eq!(dt.idom(b[0]), None);
        assert_eq!(dt.idom(b[1]), Some(b[0]));
        assert_eq!(dt.idom(b[2]), Some(b[1]));
        assert_eq!(dt.idom(b[3]), Some(b[1]));
        assert_eq!(dt.idom(b[4]), Some(b[1]));
        assert_eq!(dt.idom(b[5]), Some(b[4]));
        assert!(dt.dominates(b[1], b[5]));
        assert!(!dt.dominates(b[2], b[4]));
        assert!(dt.strictly_dominates(b[0], b[3]));
    }

    /// Random graphs, with loops entered at one block or at several (irreducible):
    /// the idoms are those of the dominator sets found by iterating the data-flow
    /// equations `dom(b) = {b} ∪ ⋂ dom(p)` to the fixed point.
    #[test]
    fn idoms_match_dominator_sets_on_random_graphs() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        for _ in 0..300 {
            let n = 2 + next(12);
            let mut edges = Vec::new();
            for i in 0..n {
                for _ in 0..1 + next(2) {
                    let t = if next(3) == 0 {
                        next(n)
                    } else {
                        (i + 1).min(n - 1)
                    };
                    if !edges.contains(&(i, t)) {
                        edges.push((i, t));
                    }
                }
            }
            let (f, b) = cfg_func(n, &edges);
            let cfg = ControlFlowGraph::compute(&f);
            let dt = DominatorTree::compute(&f, &cfg);
            // Dominator sets over the reachable blocks.
            let reach: Vec<bool> = b.iter().map(|&x| dt.is_reachable(x)).collect();
            let mut dom: Vec<Vec<bool>> = (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| i == 0 && j == 0 || i != 0 && reach[j])
                        .collect()
                })
                .collect();
            let mut changed = true;
            while changed {
                changed = false;
                for i in 1..n {
                    if !reach[i] {
                        continue;
                    }
                    let mut set: Vec<bool> = vec![true; n];
                    for &(p, t) in &edges {
                        if t == i && reach[p] {
                            for j in 0..n {
                                set[j] &= dom[p][j];
                            }
                        }
                    }
                    set[i] = true;
                    if set != dom[i] {
                        dom[i] = set;
                        changed = true;
                    }
                }
            }
            for i in 1..n {
                if !reach[i] {
                    continue;
                }
                // The idom: the strict dominator every other strict dominator dominates.
                let strict: Vec<usize> = (0..n).filter(|&j| j != i && dom[i][j]).collect();
                let want = strict
                    .iter()
                    .copied()
                    .find(|&d| strict.iter().all(|&e| dom[d][e]))
                    .map(|d| b[d]);
                assert_eq!(dt.idom(b[i]), want, "block {i} of {edges:?}");
            }
        }
    }

    #[test]
    fn unreachable_blocks_are_outside_the_tree() {
        let (f, b) = cfg_func(3, &[(0, 1), (2, 1)]);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        assert!(!dt.is_reachable(b[2]));
        assert_eq!(dt.idom(b[1]), Some(b[0]));
        assert!(!dt.dominates(b[2], b[1]));
        assert_eq!(dt.rpo(), &[b[0], b[1]]);
    }
}
