//! Loop nesting depth of machine blocks, for spill weights.
//!
//! Dominators by the iterative algorithm of Cooper, Harvey and Kennedy ("A Simple,
//! Fast Dominance Algorithm", 2001) over the machine CFG; an edge `u -> h` with `h`
//! dominating `u` is a back edge, and its natural loop is `h` plus every block that
//! reaches `u` without passing through `h` (Aho, Sethi, Ullman, section 10.4). Loops
//! sharing a header are merged; a block's depth is the number of loops containing it.

use crate::mir::{MBlock, MFunction};

/// A natural loop (all back edges to one header merged).
#[derive(Clone, Debug)]
pub struct Loop {
    pub header: MBlock,
    /// Membership of every block (by block number).
    pub body: Vec<bool>,
}

/// Loops of a function and the depth of every block.
#[derive(Clone, Debug, Default)]
pub struct LoopInfo {
    /// Loops, outer loops before the loops they contain.
    pub loops: Vec<Loop>,
    /// Loop depth of every block (by block number; 0 outside loops and for
    /// unreachable blocks).
    pub depth: Vec<u32>,
    /// Predecessors of every block (by block number).
    pub preds: Vec<Vec<MBlock>>,
}

/// Loop depth of every block (indexed by block number; 0 outside loops and for
/// unreachable blocks).
pub fn loop_depths(mf: &MFunction) -> Vec<u32> {
    loop_info(mf).depth
}

/// Finds the natural loops of `mf`.
pub fn loop_info(mf: &MFunction) -> LoopInfo {
    let n = mf.blocks.len();
    let mut depth = vec![0u32; n];
    let Some(&entry) = mf.layout.first() else {
        return LoopInfo {
            depth,
            ..Default::default()
        };
    };
    let succs: Vec<Vec<MBlock>> = (0..n).map(|b| mf.succs(MBlock(b as u32))).collect();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, ss) in succs.iter().enumerate() {
        for s in ss {
            preds[s.index()].push(b);
        }
    }
    // Reverse post-order by iterative DFS.
    let mut post = Vec::with_capacity(n);
    let mut visited = vec![false; n];
    let mut stack = vec![(entry.index(), 0usize)];
    visited[entry.index()] = true;
    while let Some(&mut (b, ref mut i)) = stack.last_mut() {
        if let Some(s) = succs[b].get(*i) {
            *i += 1;
            if !visited[s.index()] {
                visited[s.index()] = true;
                stack.push((s.index(), 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    let rpo: Vec<usize> = post.into_iter().rev().collect();
    let mut rpo_num = vec![usize::MAX; n];
    for (i, &b) in rpo.iter().enumerate() {
        rpo_num[b] = i;
    }
    let mut idom = vec![usize::MAX; n];
    idom[entry.index()] = entry.index();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &rpo[1..] {
            let mut new = usize::MAX;
            for &p in &preds[b] {
                if idom[p] == usize::MAX {
                    continue;
                }
                new = if new == usize::MAX {
                    p
                } else {
                    intersect(&idom, &rpo_num, p, new)
                };
            }
            if new != usize::MAX && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    // Dominance in constant time: `a` dominates `b` when `b`'s pre-order number in
    // the dominator tree falls in `a`'s subtree interval. (Walking up the idom
    // chain per back-edge test is quadratic in long chains of blocks.)
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &b in &rpo[1..] {
        if idom[b] != usize::MAX {
            children[idom[b]].push(b);
        }
    }
    let mut pre = vec![usize::MAX; n];
    let mut last = vec![0usize; n];
    let mut counter = 0;
    let mut walk = vec![(entry.index(), 0usize)];
    pre[entry.index()] = counter;
    counter += 1;
    while let Some(&mut (b, ref mut k)) = walk.last_mut() {
        if let Some(&c) = children[b].get(*k) {
            *k += 1;
            pre[c] = counter;
            counter += 1;
            walk.push((c, 0));
        } else {
            last[b] = counter;
            walk.pop();
        }
    }
    let dominates = |a: usize, b: usize| -> bool {
        pre[a] != usize::MAX && pre[b] != usize::MAX && pre[a] <= pre[b] && pre[b] < last[a]
    };
    // Natural loops, merged per header.
    let mut in_loop: Vec<Vec<bool>> = Vec::new();
    let mut headers: Vec<usize> = Vec::new();
    let mut header_index = vec![usize::MAX; n];
    for &u in &rpo {
        for s in &succs[u] {
            let h = s.index();
            if rpo_num[h] == usize::MAX || !dominates(h, u) {
                continue;
            }
            if header_index[h] == usize::MAX {
                header_index[h] = in_loop.len();
                headers.push(h);
                let mut body = vec![false; n];
                body[h] = true;
                in_loop.push(body);
            }
            let body = &mut in_loop[header_index[h]];
            let mut work = vec![u];
            while let Some(x) = work.pop() {
                if body[x] {
                    continue;
                }
                body[x] = true;
                work.extend(
                    preds[x]
                        .iter()
                        .copied()
                        .filter(|&p| rpo_num[p] != usize::MAX),
                );
            }
        }
    }
    for body in &in_loop {
        for (b, &inside) in body.iter().enumerate() {
            if inside {
                depth[b] += 1;
            }
        }
    }
    // An outer loop's header dominates the inner header, so it comes first in
    // reverse post-order.
    let mut loops: Vec<Loop> = headers
        .into_iter()
        .zip(in_loop)
        .map(|(h, body)| Loop {
            header: MBlock(h as u32),
            body,
        })
        .collect();
    loops.sort_by_key(|l| rpo_num[l.header.index()]);
    let preds = preds
        .into_iter()
        .map(|v| v.into_iter().map(|p| MBlock(p as u32)).collect())
        .collect();
    LoopInfo {
        loops,
        depth,
        preds,
    }
}

fn intersect(idom: &[usize], rpo_num: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while rpo_num[a] > rpo_num[b] {
            a = idom[a];
        }
        while rpo_num[b] > rpo_num[a] {
            b = idom[b];
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::{Cond, MInst, ZERO};

    fn func(edges: &[&[u32]]) -> MFunction {
        let mut mf = MFunction::new("t".into(), false);
        for _ in edges {
            let b = mf.new_block();
            mf.layout.push(b);
        }
        for (i, ss) in edges.iter().enumerate() {
            let insts = &mut mf.blocks[i].insts;
            match ss {
                [] => insts.push(MInst::Ret { value: None }),
                [a] => insts.push(MInst::Jump { target: MBlock(*a) }),
                [a, b] => {
                    insts.push(MInst::Branch {
                        cond: Cond::Ne,
                        rs1: ZERO,
                        rs2: ZERO,
                        target: MBlock(*a),
                    });
                    insts.push(MInst::Jump { target: MBlock(*b) });
                }
                _ => unreachable!(),
            }
        }
        mf
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
        assert!(li.loops[0].body[4] && !li.loops[1].body[4]);
    }

    #[test]
    fn two_latches_one_loop() {
        // 0 -> 1 -> 2 | 3; 2 -> 1; 3 -> 1 | 4
        let mf = func(&[&[1], &[2, 3], &[1], &[1, 4], &[]]);
        assert_eq!(loop_depths(&mf), vec![0, 1, 1, 1, 0]);
    }
}
