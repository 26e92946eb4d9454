//! Liveness of registers in machine IR and the live intervals built from it.
//!
//! Live-in/live-out sets come from the classic backward data-flow equations
//! (`in = use ∪ (out − def)`, `out = ∪ in(succ)`) iterated to a fixed point over
//! bit sets. Intervals follow Wimmer and Mössenböck, "Optimized Interval Splitting
//! in a Linear Scan Register Allocator" (VEE 2005), section 4.1 "BuildIntervals":
//! instructions are numbered in layout order, instruction `k` reads its uses at
//! position `2k` and writes its defs at `2k + 1`, and one backward pass per block
//! produces, for every register, a sorted list of half-open ranges (an interval with
//! holes). Physical registers get intervals too (fixed intervals: argument and return
//! registers, call clobbers) so the allocator can check them for conflicts.

use crate::abi;
use crate::mir::{MFunction, Reg, NUM_PREGS};

/// A dense bit set over register numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    pub fn new(n: usize) -> Self {
        BitSet {
            words: vec![0; n.div_ceil(64)],
        }
    }
    pub fn insert(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }
    pub fn remove(&mut self, i: usize) {
        self.words[i / 64] &= !(1 << (i % 64));
    }
    pub fn contains(&self, i: usize) -> bool {
        self.words[i / 64] & (1 << (i % 64)) != 0
    }
    /// `self |= other`; returns whether anything changed.
    pub fn union_with(&mut self, other: &BitSet) -> bool {
        let mut changed = false;
        for (a, &b) in self.words.iter_mut().zip(&other.words) {
            let n = *a | b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }
    /// Elements in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let t = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(wi * 64 + t)
            })
        })
    }
}

/// Whether the allocator tracks `r`: virtual registers and allocatable physical ones.
pub fn tracked(r: Reg) -> bool {
    abi::is_allocatable(r)
}

/// Live-in and live-out sets per block (indexed by block number).
pub struct Liveness {
    pub live_in: Vec<BitSet>,
    pub live_out: Vec<BitSet>,
}

/// Computes liveness of every tracked register.
pub fn compute_liveness(mf: &MFunction) -> Liveness {
    let n = mf.blocks.len();
    let width = NUM_PREGS as usize + mf.num_vregs();
    let mut gen = vec![BitSet::new(width); n];
    let mut kill = vec![BitSet::new(width); n];
    for &b in &mf.layout {
        let (g, k) = (&mut gen[b.index()], &mut kill[b.index()]);
        for inst in &mf.blocks[b.index()].insts {
            inst.for_each_use(|r| {
                if tracked(r) && !k.contains(r.0 as usize) {
                    g.insert(r.0 as usize);
                }
            });
            inst.for_each_def(|r| {
                if tracked(r) {
                    k.insert(r.0 as usize);
                }
            });
        }
    }
    let succs: Vec<Vec<usize>> = (0..n)
        .map(|b| {
            mf.succs(crate::mir::MBlock(b as u32))
                .iter()
                .map(|s| s.index())
                .collect()
        })
        .collect();
    let mut live_in = vec![BitSet::new(width); n];
    let mut live_out = vec![BitSet::new(width); n];
    let mut changed = true;
    while changed {
        changed = false;
        for &b in mf.layout.iter().rev() {
            let b = b.index();
            let mut out = BitSet::new(width);
            for &s in &succs[b] {
                out.union_with(&live_in[s]);
            }
            // in = gen ∪ (out − kill)
            let mut inn = out.clone();
            for (w, &k) in inn.words.iter_mut().zip(&kill[b].words) {
                *w &= !k;
            }
            inn.union_with(&gen[b]);
            if inn != live_in[b] {
                live_in[b] = inn;
                changed = true;
            }
            live_out[b] = out;
        }
    }
    Liveness { live_in, live_out }
}

/// A live interval: sorted, disjoint, half-open ranges of positions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interval {
    pub ranges: Vec<(u32, u32)>,
}

impl Interval {
    pub fn start(&self) -> u32 {
        self.ranges.first().map_or(u32::MAX, |r| r.0)
    }
    pub fn end(&self) -> u32 {
        self.ranges.last().map_or(0, |r| r.1)
    }
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
    /// Whether the interval covers position `p`.
    pub fn covers(&self, p: u32) -> bool {
        let i = self.ranges.partition_point(|r| r.1 <= p);
        i < self.ranges.len() && self.ranges[i].0 <= p
    }
}

/// Intervals of every tracked register, and positions of blocks.
pub struct Intervals {
    /// By register number (physical registers first).
    pub regs: Vec<Interval>,
    /// Position of the first instruction of each block (by block number).
    pub block_start: Vec<u32>,
    /// Position just past the last instruction of each block.
    pub block_end: Vec<u32>,
}

/// Builds intervals from liveness.
pub fn build_intervals(mf: &MFunction, live: &Liveness) -> Intervals {
    let width = NUM_PREGS as usize + mf.num_vregs();
    let n = mf.blocks.len();
    let mut block_start = vec![0u32; n];
    let mut block_end = vec![0u32; n];
    let mut k = 0u32;
    for &b in &mf.layout {
        block_start[b.index()] = 2 * k;
        k += mf.blocks[b.index()].insts.len() as u32;
        block_end[b.index()] = 2 * k;
    }
    // Ranges are collected in decreasing order, then reversed.
    let mut rev: Vec<Vec<(u32, u32)>> = vec![Vec::new(); width];
    let add = |rev: &mut Vec<Vec<(u32, u32)>>, r: usize, from: u32, to: u32| {
        let v = &mut rev[r];
        if let Some(last) = v.last_mut() {
            if from <= last.1 && last.0 <= to {
                last.0 = last.0.min(from);
                last.1 = last.1.max(to);
                return;
            }
        }
        v.push((from, to));
    };
    for &b in mf.layout.iter().rev() {
        let (bs, be) = (block_start[b.index()], block_end[b.index()]);
        let mut live = live.live_out[b.index()].clone();
        for r in live.iter() {
            add(&mut rev, r, bs, be);
        }
        let insts = &mf.blocks[b.index()].insts;
        for (i, inst) in insts.iter().enumerate().rev() {
            let pos = bs + 2 * i as u32;
            inst.for_each_def(|d| {
                if !tracked(d) {
                    return;
                }
                let d = d.0 as usize;
                if live.contains(d) {
                    if let Some(last) = rev[d].last_mut() {
                        last.0 = pos + 1;
                    }
                    live.remove(d);
                } else {
                    add(&mut rev, d, pos + 1, pos + 2);
                }
            });
            inst.for_each_use(|u| {
                if !tracked(u) {
                    return;
                }
                add(&mut rev, u.0 as usize, bs, pos + 1);
                live.insert(u.0 as usize);
            });
        }
    }
    let regs = rev
        .into_iter()
        .map(|mut v| {
            v.reverse();
            Interval { ranges: v }
        })
        .collect();
    Intervals {
        regs,
        block_start,
        block_end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::{AluImmOp, MInst, RegClass, A0};

    #[test]
    fn straight_line_intervals() {
        let mut mf = MFunction::new("t".into(), false);
        let b = mf.new_block();
        mf.layout.push(b);
        let v0 = mf.new_vreg(RegClass::Int);
        let v1 = mf.new_vreg(RegClass::Int);
        mf.blocks[0].insts = vec![
            MInst::Mv { rd: v0, rs: A0 },
            MInst::AluImm {
                op: AluImmOp::Addi,
                rd: v1,
                rs1: v0,
                imm: 1,
            },
            MInst::Mv { rd: A0, rs: v1 },
            MInst::Ret { value: Some(A0) },
        ];
        let live = compute_liveness(&mf);
        let iv = build_intervals(&mf, &live);
        assert_eq!(iv.regs[v0.0 as usize].ranges, vec![(1, 3)]);
        assert_eq!(iv.regs[v1.0 as usize].ranges, vec![(3, 5)]);
        // a0: live-in until its copy, then from the return copy to the return.
        assert_eq!(iv.regs[A0.0 as usize].ranges, vec![(0, 1), (5, 7)]);
        assert!(live.live_in[0].contains(A0.0 as usize));
    }
}
