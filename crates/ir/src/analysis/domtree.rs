//! Dominator tree by the algorithm of Lengauer and Tarjan, "A Fast Algorithm for
//! Finding Dominators in a Flowgraph" (TOPLAS 1979), in its simple version (path
//! compression without balancing): semi-dominators computed in reverse DFS
//! pre-order through a forest that EVAL compresses, then immediate dominators
//! from them. O(m log n) on every graph. (The iterative algorithm of Cooper,
//! Harvey and Kennedy, used before, intersects along the tree for each edge: on
//! a chain of n blocks all branching to one join, a long `||` condition, that
//! walks the chain once per edge, n² steps.) Only blocks reachable from the entry
//! are in the tree.
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
    children: SecondaryMap<N, Children<N>>,
    /// Pre-order and post-order numbers of the dominator tree, for O(1) `dominates`.
    pre: SecondaryMap<N, u32>,
    post: SecondaryMap<N, u32>,
    rpo: Vec<N>,
}

/// A node's children: the first two inline.
#[derive(Debug)]
struct Children<N>(SmallVec<[N; 2]>);

impl<N> Default for Children<N> {
    fn default() -> Self {
        Children(SmallVec::new())
    }
}

impl<N: Clone> Clone for Children<N> {
    /// Sizing the map clones the empty default once per node: an empty list is
    /// made directly, not through `SmallVec`'s copy of a slice.
    fn clone(&self) -> Self {
        if self.0.is_empty() {
            Children(SmallVec::new())
        } else {
            Children(self.0.clone())
        }
    }
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
        // Sized once for the nodes numbered (every map is written for them only).
        let n = rpo.iter().map(|b| b.index() + 1).max().unwrap_or(0);
        dt.idom.resize(n);
        dt.rpo_num.resize(n);
        dt.children.resize(n);
        dt.pre.resize(n);
        dt.post.resize(n);
        for (i, &b) in rpo.iter().enumerate() {
            dt.rpo_num[b] = i as u32 + 1;
        }
        let Some(&entry) = rpo.first() else {
            dt.rpo = rpo;
            return dt;
        };
        for (b, d) in lengauer_tarjan(g, entry) {
            dt.idom[b] = Some(d);
        }
        dt.idom[entry] = None;
        for &b in &rpo[1..] {
            if let Some(d) = dt.idom[b] {
                dt.children[d].0.push(b);
            }
        }
        dt.number_tree(entry);
        dt.rpo = rpo;
        dt
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
            for &c in self.children[b].0.iter().rev() {
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
        &self.children[b].0
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
            for &c in self.children[b].0.iter().rev() {
                stack.push(c);
            }
        }
        out
    }
}

/// The immediate dominator of every node reachable from `entry` but `entry`, as
/// `(node, idom)` pairs (Lengauer and Tarjan's simple algorithm; see the module
/// doc). Nodes are handled by their DFS pre-order number, 1 for `entry` (0: not
/// reached); every walk is iterative, so deep graphs need no stack.
fn lengauer_tarjan<N: EntityRef, G: Graph<Node = N>>(g: &G, entry: N) -> Vec<(N, N)> {
    // Depth-first numbering: `vertex[i]` is the node numbered `i`, `parent[i]`
    // the number of its DFS tree parent.
    let mut num: SecondaryMap<N, u32> = SecondaryMap::new();
    num.resize(g.rpo().iter().map(|b| b.index() + 1).max().unwrap_or(0));
    let mut vertex: Vec<N> = vec![entry, entry];
    let mut parent: Vec<u32> = vec![0, 0];
    num[entry] = 1;
    let mut stack: Vec<(N, usize)> = vec![(entry, 0)];
    while let Some(top) = stack.last_mut() {
        let (v, next) = *top;
        match g.succs(v).get(next) {
            Some(&w) => {
                top.1 += 1;
                if num[w] == 0 {
                    num[w] = vertex.len() as u32;
                    vertex.push(w);
                    parent.push(num[v]);
                    stack.push((w, 0));
                }
            }
            None => {
                stack.pop();
            }
        }
    }
    let n = vertex.len();
    let mut semi: Vec<u32> = (0..n as u32).collect();
    let mut label: Vec<u32> = (0..n as u32).collect();
    let mut ancestor: Vec<u32> = vec![0; n];
    let mut idom: Vec<u32> = vec![0; n];
    // Buckets as linked lists: the nodes whose semi-dominator is `i`.
    let mut bucket: Vec<u32> = vec![0; n];
    let mut bucket_next: Vec<u32> = vec![0; n];
    let mut path: Vec<u32> = Vec::new();
    // EVAL: the node of least semi-dominator number on the forest path from `v`
    // up to (not including) its root, compressing the path on the way.
    let mut eval = |v: u32, semi: &[u32], ancestor: &mut [u32], label: &mut [u32]| -> u32 {
        if ancestor[v as usize] == 0 {
            return v;
        }
        let mut x = v;
        while ancestor[ancestor[x as usize] as usize] != 0 {
            path.push(x);
            x = ancestor[x as usize];
        }
        while let Some(y) = path.pop() {
            let (y, a) = (y as usize, ancestor[y as usize] as usize);
            if semi[label[a] as usize] < semi[label[y] as usize] {
                label[y] = label[a];
            }
            ancestor[y] = ancestor[a];
        }
        label[v as usize]
    };
    for w in (2..n).rev() {
        for &p in g.preds(vertex[w]) {
            let v = num[p];
            if v == 0 {
                continue; // not reachable
            }
            let u = eval(v, &semi, &mut ancestor, &mut label);
            if semi[u as usize] < semi[w] {
                semi[w] = semi[u as usize];
            }
        }
        let s = semi[w] as usize;
        bucket_next[w] = bucket[s];
        bucket[s] = w as u32;
        let pw = parent[w];
        ancestor[w] = pw; // LINK(parent(w), w)
        let mut v = std::mem::take(&mut bucket[pw as usize]);
        while v != 0 {
            let u = eval(v, &semi, &mut ancestor, &mut label);
            idom[v as usize] = if semi[u as usize] < semi[v as usize] {
                u
            } else {
                pw
            };
            v = bucket_next[v as usize];
        }
    }
    (2..n)
        .map(|w| {
            if idom[w] != semi[w] {
                idom[w] = idom[idom[w] as usize];
            }
            (vertex[w], vertex[idom[w] as usize])
        })
        .collect()
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
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(s, t) in edges {
            succs[s].push(t);
        }
        let mut b = FuncBuilder::new(&mut f);
        for (i, &blk) in blocks.iter().enumerate() {
            b.switch_to_block(blk);
            match succs[i].as_slice() {
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
        for _ in 0..2000 {
            let n = 2 + next(30);
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

    /// A long `||` condition: a chain of tests, each branching to the next and to
    /// one join. Every chain block is dominated by the one before, the join by
    /// the entry alone.
    #[test]
    fn a_long_chain_into_one_join() {
        let n = 50_000;
        let join = n;
        let mut edges: Vec<(usize, usize)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        edges.extend((0..n).map(|i| (i, join)));
        let (f, b) = cfg_func(n + 1, &edges);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        assert_eq!(dt.idom(b[join]), Some(b[0]));
        assert!((1..n).all(|i| dt.idom(b[i]) == Some(b[i - 1])));
        assert!(dt.dominates(b[1], b[n - 1]) && !dt.dominates(b[1], b[join]));
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
