//! The program graph the complete GVN iterates over (Nie, Cheng and Wang, sections 2
//! and 4): the reachable blocks in depth-first pre-order (`d(n)`), and for each block
//! its incoming edges, numbered so that the edge of the depth-first spanning tree
//! (`DFT`) comes first. A block's parameters are the paper's set of φ nodes at a join;
//! with a single incoming edge they are plain copies. Edges from unreachable blocks
//! never execute and are left out.

use ir::{Block, Function, Inst, SecondaryMap};

/// One incoming edge: arm `arm` of the terminator `term` of block `pred`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Edge {
    pub pred: Block,
    pub term: Inst,
    pub arm: u8,
}

/// Depth-first order and numbered edges of a function.
pub(crate) struct Graph {
    /// Reachable blocks in depth-first pre-order from the entry.
    pub preorder: Vec<Block>,
    pub reachable: SecondaryMap<Block, bool>,
    /// Incoming edges of each reachable block, the depth-first tree edge first.
    pub edges: SecondaryMap<Block, Vec<Edge>>,
    /// For each arm of a reachable block's terminator: the target and the index of
    /// this edge among the target's incoming edges.
    pub out: SecondaryMap<Block, [Option<(Block, u32)>; 2]>,
}

impl Graph {
    /// Builds the graph of `f` (which has a body).
    pub(crate) fn compute(f: &Function) -> Graph {
        let entry = f.entry_block();
        let mut reachable: SecondaryMap<Block, bool> = f.block_map();
        let mut tree: SecondaryMap<Block, Option<(Block, u8)>> = f.block_map();
        let mut preorder = vec![entry];
        reachable[entry] = true;
        let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
        while let Some(&mut (b, ref mut k)) = stack.last_mut() {
            let succs = f.successors(b);
            if let Some(&s) = succs.get(*k) {
                let arm = *k as u8;
                *k += 1;
                if !reachable[s] {
                    reachable[s] = true;
                    tree[s] = Some((b, arm));
                    preorder.push(s);
                    stack.push((s, 0));
                }
            } else {
                stack.pop();
            }
        }
        let mut edges: SecondaryMap<Block, Vec<Edge>> = f.block_map();
        for &b in &preorder {
            let Some(term) = f.terminator(b) else {
                continue;
            };
            for (k, t) in f.kind(term).targets().iter().enumerate() {
                let e = Edge {
                    pred: b,
                    term,
                    arm: k as u8,
                };
                if tree[t.block] == Some((b, k as u8)) {
                    edges[t.block].insert(0, e);
                } else {
                    edges[t.block].push(e);
                }
            }
        }
        let mut out: SecondaryMap<Block, [Option<(Block, u32)>; 2]> = f.block_map();
        for &b in &preorder {
            for (i, e) in edges[b].iter().enumerate() {
                out[e.pred][e.arm as usize] = Some((b, i as u32));
            }
        }
        Graph {
            preorder,
            reachable,
            edges,
            out,
        }
    }

    /// Whether `b` is a join (two or more reachable incoming edges), whose parameters
    /// are φ nodes rather than copies.
    pub(crate) fn is_join(&self, b: Block) -> bool {
        self.edges[b].len() >= 2
    }
}
