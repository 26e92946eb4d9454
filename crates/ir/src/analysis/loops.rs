//! Natural loops of any [`Graph`], nested into a forest.
//!
//! A back edge is an edge `t -> h` whose target dominates its source; the natural
//! loop of header `h` is `h` plus every node that reaches one of its back-edge
//! sources (latches) without passing through `h` (Aho, Lam, Sethi, Ullman,
//! "Compilers", 9.6; all back edges to one header form one loop). Two natural loops
//! with different headers are disjoint or nested, so they form a forest. Loops are
//! discovered innermost first by visiting headers in post-order of the dominator
//! tree; the reverse walk from the latches skips over an inner loop already found
//! through the header of its outermost enclosing loop so far, which also links that
//! loop to its parent (the method of LLVM's `LoopInfo`). The outermost loop so far
//! is kept by a union-find with path compression, so a deep nest costs no walk up
//! its parent chain per node. Cycles that are not natural loops (irreducible
//! control flow, entered at more than one node) are not loops here.
//!
//! The optimiser's `LoopForest` and the back end's machine loops are built on this.

use super::domtree::DomTree;
use super::graph::Graph;
use cranelift_entity::{EntityRef, SecondaryMap};

/// One natural loop, by its header.
#[derive(Clone, Debug)]
pub struct NaturalLoop<N> {
    /// The node that dominates the loop and is the target of its back edges.
    pub header: N,
    /// Sources of back edges to the header, distinct, in the order of the
    /// header's predecessor list.
    pub latches: Vec<N>,
    /// The innermost enclosing loop (an index into [`LoopNest::loops`]).
    pub parent: Option<usize>,
}

/// The natural loops of a graph, innermost first: every loop comes before the
/// loop enclosing it.
#[derive(Clone, Debug)]
pub struct LoopNest<N: EntityRef> {
    pub loops: Vec<NaturalLoop<N>>,
    /// The innermost loop containing each node (`None` outside loops and for
    /// unreachable nodes).
    pub innermost: SecondaryMap<N, Option<usize>>,
}

/// Finds the natural loops of `g`, whose dominator tree is `dt`.
pub fn natural_loops<G: Graph>(g: &G, dt: &DomTree<G::Node>) -> LoopNest<G::Node> {
    let mut loops: Vec<NaturalLoop<G::Node>> = Vec::new();
    let mut innermost: SecondaryMap<G::Node, Option<usize>> = SecondaryMap::new();
    // Sized once for every reachable node: filled from empty, each write past the
    // end would grow the table.
    innermost.resize(dt.rpo().iter().map(|n| n.index() + 1).max().unwrap_or(0));
    // Per loop, a loop enclosing it (itself when none is known yet), towards its
    // outermost enclosing loop found so far.
    let mut top_of: Vec<usize> = Vec::new();
    let mut work: Vec<G::Node> = Vec::new();
    for h in dom_postorder(dt) {
        let mut latches: Vec<G::Node> = Vec::new();
        for &p in g.preds(h) {
            if dt.dominates(h, p) && !latches.contains(&p) {
                latches.push(p);
            }
        }
        if latches.is_empty() {
            continue;
        }
        let id = loops.len();
        work.clear();
        work.extend(latches.iter().copied());
        loops.push(NaturalLoop {
            header: h,
            latches,
            parent: None,
        });
        top_of.push(id);
        innermost[h] = Some(id);
        while let Some(b) = work.pop() {
            match innermost[b] {
                None => {
                    innermost[b] = Some(id);
                    work.extend(g.preds(b).iter().copied().filter(|&p| dt.is_reachable(p)));
                }
                Some(inner) => {
                    // Part of a loop found earlier: continue from the header of its
                    // outermost enclosing loop so far, which becomes a child of this.
                    let top = outermost(&mut top_of, inner);
                    if top == id {
                        continue;
                    }
                    loops[top].parent = Some(id);
                    top_of[top] = id;
                    let sub = loops[top].header;
                    work.extend(
                        g.preds(sub)
                            .iter()
                            .copied()
                            .filter(|&p| dt.is_reachable(p) && !dt.dominates(sub, p)),
                    );
                }
            }
        }
    }
    LoopNest { loops, innermost }
}

/// The outermost loop enclosing `l` found so far, compressing the paths walked.
fn outermost(top_of: &mut [usize], l: usize) -> usize {
    let mut root = l;
    while top_of[root] != root {
        root = top_of[root];
    }
    let mut x = l;
    while top_of[x] != root {
        let next = top_of[x];
        top_of[x] = root;
        x = next;
    }
    root
}

/// Post-order of the dominator tree (children before parents), iteratively.
fn dom_postorder<N: EntityRef>(dt: &DomTree<N>) -> Vec<N> {
    let mut out = Vec::with_capacity(dt.rpo().len());
    let Some(&entry) = dt.rpo().first() else {
        return out;
    };
    let mut stack = vec![(entry, false)];
    while let Some((b, done)) = stack.pop() {
        if done {
            out.push(b);
            continue;
        }
        stack.push((b, true));
        for &c in dt.children(b).iter().rev() {
            stack.push((c, false));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entities::Block;
    use cranelift_entity::EntityRef;

    /// A graph given by its edges, for the analyses alone.
    struct Edges {
        preds: Vec<Vec<Block>>,
        succs: Vec<Vec<Block>>,
        rpo: Vec<Block>,
    }

    impl Edges {
        fn new(n: usize, edges: &[(usize, usize)]) -> Self {
            let mut succs = vec![Vec::new(); n];
            let mut preds = vec![Vec::new(); n];
            for &(a, b) in edges {
                succs[a].push(Block::new(b));
                preds[b].push(Block::new(a));
            }
            let mut post = Vec::new();
            let mut seen = vec![false; n];
            let mut stack = vec![(0usize, 0usize)];
            seen[0] = true;
            while let Some(&mut (b, ref mut i)) = stack.last_mut() {
                if let Some(s) = succs[b].get(*i).map(|s: &Block| s.index()) {
                    *i += 1;
                    if !seen[s] {
                        seen[s] = true;
                        stack.push((s, 0));
                    }
                } else {
                    post.push(Block::new(b));
                    stack.pop();
                }
            }
            post.reverse();
            Edges {
                preds,
                succs,
                rpo: post,
            }
        }
    }

    impl Graph for Edges {
        type Node = Block;
        fn preds(&self, b: Block) -> &[Block] {
            &self.preds[b.index()]
        }
        fn succs(&self, b: Block) -> &[Block] {
            &self.succs[b.index()]
        }
        fn rpo(&self) -> &[Block] {
            &self.rpo
        }
    }

    /// Two loops nested in a third, a loop with two latches, and a cycle entered
    /// at two blocks (no natural loop).
    #[test]
    fn nests_latches_and_irreducible_cycles() {
        // 0 -> 1 (outer header); 1 -> 2 (inner A) <-> 3; 3 -> 4 (inner B) <-> 5;
        // 5 -> 6 -> 1 (outer latch) and 6 -> 1 twice over two latches: 6, 7.
        // 1 -> 8 -> {9, 10}; 9 <-> 10 (entered at both).
        let g = Edges::new(
            11,
            &[
                (0, 1),
                (1, 2),
                (1, 8),
                (2, 3),
                (3, 2),
                (3, 4),
                (4, 5),
                (5, 4),
                (5, 6),
                (6, 1),
                (6, 7),
                (7, 1),
                (8, 9),
                (8, 10),
                (9, 10),
                (10, 9),
            ],
        );
        let dt = DomTree::of_graph(&g);
        let nest = natural_loops(&g, &dt);
        let b = |i: usize| Block::new(i);
        let headers: Vec<Block> = nest.loops.iter().map(|l| l.header).collect();
        assert_eq!(headers.len(), 3, "{headers:?}");
        let of = |h: usize| headers.iter().position(|&x| x == b(h)).unwrap();
        let (outer, a, inner_b) = (of(1), of(2), of(4));
        assert!(outer > a && outer > inner_b, "inner loops first");
        assert_eq!(nest.loops[a].parent, Some(outer));
        assert_eq!(nest.loops[inner_b].parent, Some(outer));
        assert_eq!(nest.loops[outer].parent, None);
        assert_eq!(nest.loops[outer].latches, vec![b(6), b(7)]);
        assert_eq!(nest.innermost[b(3)], Some(a));
        assert_eq!(nest.innermost[b(5)], Some(inner_b));
        assert_eq!(nest.innermost[b(6)], Some(outer));
        for i in [0, 8, 9, 10] {
            assert_eq!(nest.innermost[b(i)], None, "block {i}");
        }
    }
}
