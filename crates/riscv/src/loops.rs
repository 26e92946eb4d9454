//! Loops of machine functions: the nesting forest and the depth of every block.
//!
//! The dominator tree and the natural loops are the IR's own analyses
//! ([`ir::analysis::DomTree`], [`ir::analysis::natural_loops`]), run on the machine
//! CFG through the [`Graph`] interface: an edge `u -> h` with `h` dominating `u` is
//! a back edge, and its natural loop is `h` plus every block that reaches `u`
//! without passing through `h`. Loops sharing a header are merged. Two natural
//! loops with different headers are disjoint or nested, so the loops form a forest,
//! and a block's depth is the depth of the innermost loop containing it.
//!
//! Membership is not a bit vector per loop (quadratic in a deep nest) but the
//! innermost loop of each block plus an interval numbering of the forest:
//! `contains` takes constant time.
//!
//! The machine CFG's edge lists ([`Edges`]) hold their first two entries inline,
//! so the analysis allocates nothing per block.
//!
//! The loops depend on the CFG only (the entry and every block's successors), and
//! the back end's stages ask for them one after another, mostly with the CFG as
//! the previous one left it. The last result is kept (per thread) with the CFG it
//! was computed from, and given again when the CFG is the same: checking costs a
//! walk of the edges, computing a dominator tree and the loops many of them (as
//! an analysis manager keeps an analysis until its input changes; here the input
//! is compared rather than tracked).

use crate::mir::{MBlock, MFunction};
use ir::analysis::{natural_loops, DomTree, Graph};
use smallvec::SmallVec;
use std::cell::RefCell;

/// One block's predecessors or successors: the first two inline.
pub type Edges = SmallVec<[MBlock; 2]>;

const NONE: u32 = u32::MAX;

/// A natural loop (all back edges to one header merged).
#[derive(Clone, Debug)]
pub struct Loop {
    pub header: MBlock,
    /// The innermost loop enclosing this one (an index into [`LoopInfo::loops`]).
    pub parent: Option<usize>,
}

/// Loops of a function and the depth of every block.
#[derive(Clone, Debug, Default)]
pub struct LoopInfo {
    /// Loops, outer loops before the loops they contain (in reverse post-order
    /// of their headers).
    pub loops: Vec<Loop>,
    /// Loop depth of every block (by block number; 0 outside loops and for
    /// unreachable blocks).
    pub depth: Vec<u32>,
    /// Predecessors of every block (by block number).
    pub preds: Vec<Edges>,
    /// The innermost loop containing each block (by block number; `NONE` when
    /// none does).
    innermost: Vec<u32>,
    /// Each loop's interval in a pre-order numbering of the forest: a loop
    /// contains exactly the loops whose first number falls in its interval.
    span: Vec<(u32, u32)>,
    /// Nesting depth of each loop (1 for an outermost loop).
    loop_depth: Vec<u32>,
}

impl LoopInfo {
    /// The innermost loop containing `b`.
    pub fn innermost(&self, b: MBlock) -> Option<usize> {
        match self.innermost.get(b.index()) {
            Some(&l) if l != NONE => Some(l as usize),
            _ => None,
        }
    }

    /// Whether loop `l` contains block number `b` (directly or in a nested
    /// loop); false for block numbers the analysis has not seen.
    pub fn contains_index(&self, l: usize, b: usize) -> bool {
        match self.innermost.get(b) {
            Some(&m) if m != NONE => {
                let (start, end) = self.span[l];
                (start..end).contains(&self.span[m as usize].0)
            }
            _ => false,
        }
    }

    /// Nesting depth of loop `l`: 1 for an outermost loop.
    pub fn loop_depth(&self, l: usize) -> u32 {
        self.loop_depth[l]
    }

    /// Number of loop `l` in a pre-order walk of the forest (parents before
    /// children, each subtree numbered consecutively).
    pub fn preorder(&self, l: usize) -> u32 {
        self.span[l].0
    }

    /// Whether loop `l` contains block `b` (directly or in a nested loop).
    pub fn contains(&self, l: usize, b: MBlock) -> bool {
        self.contains_index(l, b.index())
    }

    /// Records a block created after the analysis (a preheader) as belonging to
    /// loop `l` and the loops enclosing it, or to none.
    pub fn add_block(&mut self, b: MBlock, l: Option<usize>) {
        if self.innermost.len() <= b.index() {
            self.innermost.resize(b.index() + 1, NONE);
            self.depth.resize(b.index() + 1, 0);
        }
        self.innermost[b.index()] = l.map_or(NONE, |l| l as u32);
        self.depth[b.index()] = match l {
            Some(l) => self.depth[self.loops[l].header.index()],
            None => 0,
        };
    }
}

/// Loop depth of every block (indexed by block number; 0 outside loops and for
/// unreachable blocks).
pub fn loop_depths(mf: &MFunction) -> Vec<u32> {
    loop_info(mf).depth
}

/// The dominator tree of `mf` (the IR's [`DomTree`] over the machine CFG); `None`
/// for a function without blocks.
pub fn dominator_tree(mf: &MFunction) -> Option<DomTree<MBlock>> {
    let &entry = mf.layout.first()?;
    Some(DomTree::of_graph(&MachineCfg::compute(mf, entry)))
}

/// The CFG of a machine function, as the IR's analyses see graphs.
struct MachineCfg {
    preds: Vec<Edges>,
    succs: Vec<Edges>,
    /// Reachable blocks in reverse post-order.
    rpo: Vec<MBlock>,
}

impl Graph for MachineCfg {
    type Node = MBlock;
    fn preds(&self, b: MBlock) -> &[MBlock] {
        &self.preds[b.index()]
    }
    fn succs(&self, b: MBlock) -> &[MBlock] {
        &self.succs[b.index()]
    }
    fn rpo(&self) -> &[MBlock] {
        &self.rpo
    }
}

/// The successors of every block of `mf` (by block number).
fn successors(mf: &MFunction) -> Vec<Edges> {
    (0..mf.blocks.len())
        .map(|b| mf.succs(MBlock(b as u32)))
        .collect()
}

impl MachineCfg {
    fn compute(mf: &MFunction, entry: MBlock) -> Self {
        Self::of_succs(successors(mf), entry)
    }

    /// The CFG of the blocks with successors `succs` entered at `entry`.
    fn of_succs(succs: Vec<Edges>, entry: MBlock) -> Self {
        let n = succs.len();
        let mut preds: Vec<Edges> = vec![Edges::new(); n];
        for (b, ss) in succs.iter().enumerate() {
            for s in ss {
                preds[s.index()].push(MBlock(b as u32));
            }
        }
        // Reverse post-order by iterative DFS.
        let mut post = Vec::with_capacity(n);
        let mut visited = vec![false; n];
        let mut stack = vec![(entry, 0usize)];
        visited[entry.index()] = true;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            if let Some(&s) = succs[b.index()].get(*i) {
                *i += 1;
                if !visited[s.index()] {
                    visited[s.index()] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
                stack.pop();
            }
        }
        post.reverse();
        MachineCfg {
            preds,
            succs,
            rpo: post,
        }
    }
}

/// The CFG (entry and successors) the last [`loop_info`] of this thread was
/// computed from, and its result.
type LastLoops = Option<(MBlock, Vec<Edges>, LoopInfo)>;

thread_local! {
    static LAST: RefCell<LastLoops> = const { RefCell::new(None) };
}

/// Finds the natural loops of `mf`: those of the last call again when the CFG is
/// the same (see the module documentation).
pub fn loop_info(mf: &MFunction) -> LoopInfo {
    let n = mf.blocks.len();
    let Some(&entry) = mf.layout.first() else {
        return LoopInfo {
            depth: vec![0u32; n],
            innermost: vec![NONE; n],
            ..Default::default()
        };
    };
    let succs = successors(mf);
    let known = LAST.with(|last| match &*last.borrow() {
        Some((e, s, info)) if *e == entry && *s == succs => Some(info.clone()),
        _ => None,
    });
    if let Some(info) = known {
        return info;
    }
    let info = compute_loop_info(MachineCfg::of_succs(succs.clone(), entry));
    LAST.with(|last| *last.borrow_mut() = Some((entry, succs, info.clone())));
    info
}

/// The loops of `cfg`, whose reverse post-order starts at the entry.
fn compute_loop_info(cfg: MachineCfg) -> LoopInfo {
    let n = cfg.succs.len();
    let dt = DomTree::of_graph(&cfg);
    let nest = natural_loops(&cfg, &dt);
    let mut rpo_num = vec![usize::MAX; n];
    for (i, &b) in cfg.rpo.iter().enumerate() {
        rpo_num[b.index()] = i;
    }
    let headers: Vec<usize> = nest.loops.iter().map(|l| l.header.index()).collect();
    let mut innermost: Vec<u32> = (0..n)
        .map(|b| nest.innermost[MBlock(b as u32)].map_or(NONE, |l| l as u32))
        .collect();
    // Outer loops first: an outer loop's header dominates the inner header, so it
    // comes first in reverse post-order.
    let mut order: Vec<usize> = (0..headers.len()).collect();
    order.sort_by_key(|&l| rpo_num[headers[l]]);
    let mut renumber = vec![0u32; headers.len()];
    for (k, &l) in order.iter().enumerate() {
        renumber[l] = k as u32;
    }
    let loops: Vec<Loop> = order
        .iter()
        .map(|&l| Loop {
            header: MBlock(headers[l] as u32),
            parent: nest.loops[l].parent.map(|p| renumber[p] as usize),
        })
        .collect();
    for m in &mut innermost {
        if *m != NONE {
            *m = renumber[*m as usize];
        }
    }
    // Parents come before their children now.
    let mut loop_depth = vec![0u32; loops.len()];
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); loops.len()];
    for (l, lp) in loops.iter().enumerate() {
        loop_depth[l] = match lp.parent {
            Some(p) => {
                kids[p].push(l);
                loop_depth[p] + 1
            }
            None => 1,
        };
    }
    let mut span = vec![(0u32, 0u32); loops.len()];
    let mut next = 0u32;
    for root in (0..loops.len()).filter(|&l| loops[l].parent.is_none()) {
        let mut stack = vec![(root, 0usize)];
        span[root].0 = next;
        next += 1;
        while let Some(&mut (l, ref mut k)) = stack.last_mut() {
            if let Some(&c) = kids[l].get(*k) {
                *k += 1;
                span[c].0 = next;
                next += 1;
                stack.push((c, 0));
            } else {
                span[l].1 = next;
                stack.pop();
            }
        }
    }
    let depth = innermost
        .iter()
        .map(|&m| if m == NONE { 0 } else { loop_depth[m as usize] })
        .collect();
    LoopInfo {
        loops,
        depth,
        preds: cfg.preds,
        innermost,
        span,
        loop_depth,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testinsts::cfg_func as func;

    /// Everything a [`LoopInfo`] holds, comparable.
    fn parts(li: &LoopInfo) -> String {
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?}",
            li.loops
                .iter()
                .map(|l| (l.header, l.parent))
                .collect::<Vec<_>>(),
            li.depth,
            li.preds,
            li.innermost,
            li.span,
            li.loop_depth
        )
    }

    /// The loops kept from the last call are those computed afresh, for the same
    /// CFG again and after a CFG that differs in one edge only.
    #[test]
    fn loops_kept_for_an_unchanged_cfg_are_those_computed_afresh() {
        let nested = func(&[&[1], &[2, 5], &[3, 4], &[2], &[1], &[]]);
        let flat = func(&[&[1], &[2, 5], &[3, 4], &[2], &[5], &[]]);
        let fresh = |mf: &MFunction| {
            let entry = *mf.layout.first().unwrap();
            parts(&compute_loop_info(MachineCfg::compute(mf, entry)))
        };
        for mf in [&nested, &nested, &flat, &flat, &nested] {
            assert_eq!(parts(&loop_info(mf)), fresh(mf));
        }
        assert_ne!(fresh(&nested), fresh(&flat));
        assert_eq!(loop_depths(&flat), vec![0, 0, 1, 1, 0, 0]);
        assert_eq!(loop_depths(&nested), vec![0, 1, 2, 2, 1, 0]);
    }

    #[test]
    fn nested_loops() {
        // 0 -> 1 (outer header) -> 2 (inner header) -> 3 -> 2 | 4 -> 1 | 5
        let mf = func(&[&[1], &[2, 5], &[3, 4], &[2], &[1], &[]]);
        assert_eq!(loop_depths(&mf), vec![0, 1, 2, 2, 1, 0]);
        let li = loop_info(&mf);
        assert_eq!(li.loops.len(), 2);
        assert_eq!(li.loops[0].header, MBlock(1));
        assert_eq!(li.loops[1].header, MBlock(2));
        assert!(li.contains(0, MBlock(4)) && !li.contains(1, MBlock(4)));
        assert_eq!(li.loops[1].parent, Some(0));
    }

    /// The natural loops by definition: per header, the blocks reaching a back
    /// edge's source without passing the header, as one bit vector each.
    fn reference(mf: &MFunction) -> Vec<(MBlock, Vec<bool>)> {
        let n = mf.blocks.len();
        let succs: Vec<Edges> = (0..n).map(|b| mf.succs(MBlock(b as u32))).collect();
        let entry = mf.layout[0].index();
        let reach_avoiding = |from: usize, avoid: usize| {
            let mut seen = vec![false; n];
            let mut work = vec![from];
            while let Some(x) = work.pop() {
                if x == avoid || seen[x] {
                    continue;
                }
                seen[x] = true;
                work.extend(succs[x].iter().map(|s| s.index()));
            }
            seen
        };
        let reachable = reach_avoiding(entry, usize::MAX);
        // `a` dominates `b`: `b` is reachable and not reachable avoiding `a`.
        let dominates =
            |a: usize, b: usize| reachable[b] && (a == b || !reach_avoiding(entry, a)[b]);
        let mut loops: Vec<(MBlock, Vec<bool>)> = Vec::new();
        for h in 0..n {
            let latches: Vec<usize> = (0..n)
                .filter(|&u| {
                    reachable[u] && succs[u].contains(&MBlock(h as u32)) && dominates(h, u)
                })
                .collect();
            if latches.is_empty() {
                continue;
            }
            let mut body = vec![false; n];
            body[h] = true;
            for x in 0..n {
                if reachable[x] && x != h {
                    let r = reach_avoiding(x, h);
                    body[x] = latches.iter().any(|&l| r[l]);
                }
            }
            loops.push((MBlock(h as u32), body));
        }
        loops
    }

    /// Random control flow (reducible and not), checked against the definition:
    /// the same loops, the same members, depths and parents.
    #[test]
    fn random_graphs_match_the_definition() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(m)) as u32
        };
        for _ in 0..300 {
            let n = 2 + next(12);
            let edges: Vec<Vec<u32>> = (0..n)
                .map(|b| match next(5) {
                    0 if b > 0 => vec![],
                    1 | 2 => vec![next(n)],
                    _ => {
                        let a = next(n);
                        let mut c = next(n);
                        if c == a {
                            c = (a + 1) % n;
                        }
                        vec![a, c]
                    }
                })
                .collect();
            let refs: Vec<&[u32]> = edges.iter().map(|e| &e[..]).collect();
            let mf = func(&refs);
            let li = loop_info(&mf);
            let mut want = reference(&mf);
            let got_headers: Vec<MBlock> = li.loops.iter().map(|l| l.header).collect();
            want.sort_by_key(|(h, _)| got_headers.iter().position(|g| g == h));
            assert_eq!(
                got_headers,
                want.iter().map(|(h, _)| *h).collect::<Vec<_>>(),
                "{edges:?}"
            );
            for (l, (_, body)) in want.iter().enumerate() {
                for (b, &inside) in body.iter().enumerate() {
                    assert_eq!(
                        li.contains_index(l, b),
                        inside,
                        "{edges:?} loop {l} block {b}"
                    );
                }
                // The parent is the smallest strictly enclosing loop.
                let size = |k: usize| want[k].1.iter().filter(|&&x| x).count();
                let parent = (0..want.len())
                    .filter(|&k| k != l && body.iter().zip(&want[k].1).all(|(&a, &b)| !a || b))
                    .min_by_key(|&k| size(k));
                assert_eq!(li.loops[l].parent, parent, "{edges:?} loop {l}");
            }
            for b in 0..n as usize {
                let d = want.iter().filter(|(_, body)| body[b]).count() as u32;
                assert_eq!(li.depth[b], d, "{edges:?} block {b}");
            }
        }
    }

    /// A nest thousands of loops deep: every block's depth and membership, and
    /// preheaders added afterwards.
    #[test]
    fn deep_nest() {
        // Block 0 enters; loop k has header 2k+1 and latch 2k+2 (jumping back
        // to the header); the header enters loop k + 1 (the innermost: its own
        // latch) or leaves to the latch of loop k - 1 (the outermost: to the
        // exit, block 2d + 1).
        let d = 3000u32;
        let mut edges: Vec<Vec<u32>> = vec![vec![1]];
        for k in 0..d {
            let (h, latch) = (2 * k + 1, 2 * k + 2);
            let inner = if k + 1 < d { h + 2 } else { latch };
            let out = if k > 0 { h - 1 } else { 2 * d + 1 };
            edges.push(vec![inner, out]);
            edges.push(vec![h]);
        }
        edges.push(vec![]);
        let refs: Vec<&[u32]> = edges.iter().map(|e| &e[..]).collect();
        let mf = func(&refs);
        let mut li = loop_info(&mf);
        assert_eq!(li.loops.len(), d as usize);
        for k in 0..d as usize {
            assert_eq!(li.loops[k].header, MBlock(2 * k as u32 + 1));
            assert_eq!(li.loops[k].parent, k.checked_sub(1));
            assert_eq!(li.depth[2 * k + 1], k as u32 + 1);
            assert_eq!(li.depth[2 * k + 2], k as u32 + 1);
        }
        assert!(li.contains(0, MBlock(2 * d - 1)));
        assert!(!li.contains(5, MBlock(2)));
        assert_eq!(li.innermost(MBlock(0)), None);
        let pre = MBlock(2 * d + 2);
        li.add_block(pre, Some(7));
        assert!(li.contains(3, pre) && li.contains(7, pre) && !li.contains(8, pre));
        assert_eq!(li.depth[pre.index()], 8);
    }

    #[test]
    fn two_latches_one_loop() {
        // 0 -> 1 -> 2 | 3; 2 -> 1; 3 -> 1 | 4
        let mf = func(&[&[1], &[2, 3], &[1], &[1, 4], &[]]);
        assert_eq!(loop_depths(&mf), vec![0, 1, 1, 1, 0]);
    }
}
