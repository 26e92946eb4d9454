//! Liveness of registers in machine IR and the live intervals built from it.
//!
//! Live-in/live-out sets are the least solution of the classic backward
//! data-flow equations (`in = use ∪ (out − def)`, `out = ∪ in(succ)`), found
//! per register by walking backward from its uses (cost: the size of the sets). Intervals follow Wimmer and Mössenböck, "Optimized Interval Splitting
//! in a Linear Scan Register Allocator" (VEE 2005), section 4.1 "BuildIntervals":
//! instructions are numbered in layout order, instruction `k` reads its uses at
//! position `2k` and writes its defs at `2k + 1`, and one backward pass per block
//! produces, for every register, a sorted list of half-open ranges (an interval with
//! holes). Physical registers get intervals too (fixed intervals: argument and return
//! registers, call clobbers) so the allocator can check them for conflicts.

use crate::abi;
use crate::loop_forest::{layout_runs, LoopAncestors};
use crate::loops::{loop_info, LoopInfo};
use crate::mir::{MFunction, MInst, Reg, NUM_PREGS};

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

/// A set of register numbers, sorted: the live sets of one block. Most blocks
/// have few live registers, so the sets together take space in proportion to
/// their contents, not blocks x registers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegSet(Vec<u32>);

impl RegSet {
    pub fn contains(&self, r: usize) -> bool {
        self.0.binary_search(&(r as u32)).is_ok()
    }
    /// Elements in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().map(|&r| r as usize)
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A set of register numbers that changes as code is walked (the registers
/// live at a point): the live-out set of a block, read in place, plus the
/// registers added and minus those removed since (hashed). Copying it and
/// stepping over an instruction cost the changes, not the size of the set: a
/// block deep in a nest has every value of the loops around live out.
#[derive(Clone, Default)]
pub struct LiveRegs<'a> {
    base: Option<(&'a Liveness, usize)>,
    /// Registers of each class in `base`.
    base_count: [usize; 2],
    added: rustc_hash::FxHashSet<u32>,
    removed: rustc_hash::FxHashSet<u32>,
}

impl LiveRegs<'_> {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }
    fn in_base(&self, r: usize) -> bool {
        self.base.is_some_and(|(l, b)| l.is_live_out(b, r))
    }
    pub fn contains(&self, r: usize) -> bool {
        self.added.contains(&(r as u32)) || (!self.removed.contains(&(r as u32)) && self.in_base(r))
    }
    pub fn insert(&mut self, r: usize) {
        if !self.removed.remove(&(r as u32)) && !self.in_base(r) {
            self.added.insert(r as u32);
        }
    }
    pub fn remove(&mut self, r: usize) {
        if !self.added.remove(&(r as u32)) && self.in_base(r) {
            self.removed.insert(r as u32);
        }
    }
    /// How many registers of each class (0 or 1, as `class` says) the set holds.
    pub fn count(&self, class: &dyn Fn(Reg) -> usize) -> [usize; 2] {
        let mut n = self.base_count;
        for &r in &self.added {
            n[class(Reg(r))] += 1;
        }
        for &r in &self.removed {
            n[class(Reg(r))] -= 1;
        }
        n
    }
}

/// Per loop, how many registers of each class are live throughout it or a loop
/// around it (see [`Liveness::loop_counts`]).
pub struct LoopCounts(Vec<[usize; 2]>);

/// Live-in and live-out sets of every block, in two parts: registers found live
/// block by block (`live_in`, `live_out`, by block number), and registers live
/// into and out of every block of a loop (`loop_live`, by loop of `loops`). A
/// block's live-in set is its own part plus the loop part of every loop holding
/// it; no register is in two of these parts of one block.
pub struct Liveness {
    live_in: Vec<RegSet>,
    live_out: Vec<RegSet>,
    loop_live: Vec<RegSet>,
    loops: LoopInfo,
    /// Per register, the loops it is live throughout (none inside another), by
    /// their pre-order number ([`LoopInfo::preorder`]): their intervals are
    /// disjoint, so the one that may hold a block is found by binary search.
    reg_loops: Vec<Vec<u32>>,
}

impl Liveness {
    /// The registers live out of block number `b` that are not live throughout
    /// a loop holding it (sorted).
    pub fn own_live_out(&self, b: usize) -> &RegSet {
        &self.live_out[b]
    }

    /// The registers live into and out of every block of loop `l` (sorted).
    pub fn loop_live(&self, l: usize) -> &RegSet {
        &self.loop_live[l]
    }

    /// Registers stored in all the sets (per block and per loop): what computing
    /// the liveness, and intervals from it, costs.
    pub fn stored(&self) -> usize {
        let sets = self
            .live_in
            .iter()
            .chain(&self.live_out)
            .chain(&self.loop_live);
        sets.map(RegSet::len).sum()
    }

    /// The loops the sets refer to.
    pub fn loops(&self) -> &LoopInfo {
        &self.loops
    }

    /// The loop parts of block number `b`: those of every loop holding it.
    fn loop_parts(&self, b: usize) -> impl Iterator<Item = &RegSet> + '_ {
        let mut l = self.loops.innermost(crate::mir::MBlock(b as u32));
        std::iter::from_fn(move || {
            let x = l?;
            l = self.loops.loops[x].parent;
            Some(&self.loop_live[x])
        })
    }

    /// The registers live into block number `b` (in no particular order).
    pub fn live_in(&self, b: usize) -> impl Iterator<Item = usize> + '_ {
        self.live_in[b]
            .iter()
            .chain(self.loop_parts(b).flat_map(|s| s.iter()))
    }

    /// The registers live out of block number `b` (in no particular order).
    pub fn live_out(&self, b: usize) -> impl Iterator<Item = usize> + '_ {
        self.live_out[b]
            .iter()
            .chain(self.loop_parts(b).flat_map(|s| s.iter()))
    }

    /// Whether register `r` is live out of block number `b`.
    pub fn is_live_out(&self, b: usize, r: usize) -> bool {
        self.live_out[b].contains(r) || self.live_throughout_loop_of(b, r)
    }

    /// Whether `r` is live throughout a loop holding block number `b`. Its loops
    /// are disjoint, sorted by pre-order number: only the last one starting at or
    /// before `b`'s innermost loop can hold it (a linear scan made a register live
    /// through each of thousands of loops in sequence cost blocks x loops).
    fn live_throughout_loop_of(&self, b: usize, r: usize) -> bool {
        let Some(m) = self.loops.innermost(crate::mir::MBlock(b as u32)) else {
            return false;
        };
        let at = self.loops.preorder(m);
        let ls = &self.reg_loops[r];
        let k = ls.partition_point(|&l| self.loops.preorder(l as usize) <= at);
        k > 0 && self.loops.contains_index(ls[k - 1] as usize, b)
    }

    /// Per loop, the registers of each class live throughout it or a loop
    /// around it (loops come after the loops around them).
    pub fn loop_counts(&self, class: &dyn Fn(Reg) -> usize) -> LoopCounts {
        let mut counts: Vec<[usize; 2]> = Vec::with_capacity(self.loop_live.len());
        for (l, set) in self.loop_live.iter().enumerate() {
            let mut n = match self.loops.loops[l].parent {
                Some(p) => counts[p],
                None => [0, 0],
            };
            for r in set.iter() {
                n[class(Reg(r as u32))] += 1;
            }
            counts.push(n);
        }
        LoopCounts(counts)
    }

    /// The registers live out of block number `b`, as a set to update (`counts`
    /// from [`Liveness::loop_counts`] with the same `class`).
    pub fn live_out_regs(
        &self,
        b: usize,
        counts: &LoopCounts,
        class: &dyn Fn(Reg) -> usize,
    ) -> LiveRegs<'_> {
        let mut n = match self.loops.innermost(crate::mir::MBlock(b as u32)) {
            Some(l) => counts.0[l],
            None => [0, 0],
        };
        for r in self.live_out[b].iter() {
            n[class(Reg(r as u32))] += 1;
        }
        LiveRegs {
            base: Some((self, b)),
            base_count: n,
            ..LiveRegs::default()
        }
    }
}

/// Computes liveness of every tracked register.
///
/// Per register, walking backward from each block where it is used before any
/// definition (the path-exploration formulation of liveness: Appel, "Modern
/// Compiler Implementation", 19.6; Brandner et al., "Computing Liveness Sets for
/// SSA-Form Programs", 2011): a register live into a block is live out of each
/// predecessor, and live into that predecessor unless it defines the register.
/// Each (block, register) pair is visited at most once.
///
/// Loops are crossed whole, after the loop-forest step of Brandner et al.: a
/// register live somewhere in a loop that holds no definition of it is live into
/// and out of every block of the loop (each block reaches every other through
/// the header without leaving the loop). So when the walk reaches a block whose
/// outermost definition-free loop is `L` (found with [`LoopAncestors`] from the
/// loops of the register's definitions), it records the register once for `L`
/// and goes on from the header's predecessors outside `L`. Such a block is only
/// met where a use starts the walk or where the walk crosses a loop exit edge
/// backward: along any other edge the predecessor's loops also hold the
/// successor. The cost is the size of the sets so kept plus the code: a value
/// computed before a nest and used deep inside costs one entry, not one per
/// block of the nest.
pub fn compute_liveness(mf: &MFunction) -> Liveness {
    let n = mf.blocks.len();
    let width = NUM_PREGS as usize + mf.num_vregs();
    // Per register: blocks using it before any definition there, blocks defining it.
    let mut exposed: Vec<Vec<u32>> = vec![Vec::new(); width];
    let mut defined: Vec<Vec<u32>> = vec![Vec::new(); width];
    // Per register, the last block that touched the lists (blocks are scanned one
    // at a time, so this dedups without a per-block set).
    let mut seen_def = vec![u32::MAX; width];
    let mut seen_use = vec![u32::MAX; width];
    for &b in &mf.layout {
        let bi = b.index() as u32;
        for inst in &mf.blocks[b].insts {
            inst.for_each_use(|r| {
                let r = r.0 as usize;
                if tracked(Reg(r as u32)) && seen_def[r] != bi && seen_use[r] != bi {
                    seen_use[r] = bi;
                    exposed[r].push(bi);
                }
            });
            inst.for_each_def(|r| {
                let r = r.0 as usize;
                if tracked(Reg(r as u32)) && seen_def[r] != bi {
                    seen_def[r] = bi;
                    defined[r].push(bi);
                }
            });
        }
    }
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &b in &mf.layout {
        for s in mf.succs(b) {
            preds[s.index()].push(b.index() as u32);
        }
    }
    let mut loops = loop_info(mf);
    loops.preds = Vec::new();
    let anc = LoopAncestors::new(&loops);
    let nloops = loops.loops.len();
    // Edges into each loop from outside, as (predecessor, block): from reachable
    // code only into the header, but a block no path reaches may jump anywhere.
    let mut entries: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nloops];
    for (x, ps) in preds.iter().enumerate() {
        for &p in ps {
            let mut l = loops.innermost(crate::mir::MBlock(x as u32));
            while let Some(m) = l.filter(|&m| !loops.contains_index(m, p as usize)) {
                entries[m].push((p, x as u32));
                l = loops.loops[m].parent;
            }
        }
    }
    let innermost = |b: usize| loops.innermost(crate::mir::MBlock(b as u32));
    let mut live_in: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut live_out: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut loop_live: Vec<Vec<u32>> = vec![Vec::new(); nloops];
    // Stamps: `x[b] == r` means "for register r, b is ...". Registers are visited
    // in increasing order, so every set is built sorted.
    let mut kills = vec![u32::MAX; n];
    let mut is_in = vec![u32::MAX; n];
    let mut is_out = vec![u32::MAX; n];
    let mut loop_done = vec![u32::MAX; nloops];
    // Work items: a block the register is live into, or (with `LOOP` set) a loop
    // it is live throughout.
    const LOOP: u32 = 1 << 31;
    let mut work: Vec<u32> = Vec::new();
    // Loops holding a definition of the register: (pre-order number, loop).
    let mut def_loops: Vec<(u32, u32)> = Vec::new();
    for r in 0..width {
        if exposed[r].is_empty() {
            continue;
        }
        let rr = r as u32;
        def_loops.clear();
        for &b in &defined[r] {
            kills[b as usize] = rr;
            if let Some(l) = innermost(b as usize) {
                def_loops.push((loops.preorder(l), l as u32));
            }
        }
        def_loops.sort_unstable();
        def_loops.dedup();
        // The outermost loop holding `b` but no definition of the register.
        let free_loop = |b: usize| {
            let l = innermost(b)?;
            let common = anc.deepest_common_depth(&loops, l, &def_loops);
            (anc.depth(l) > common).then(|| anc.ancestor_at(l, common + 1))
        };
        let mut enter_loop = |l: usize, work: &mut Vec<u32>, loop_live: &mut Vec<Vec<u32>>| {
            if loop_done[l] != rr {
                loop_done[l] = rr;
                loop_live[l].push(rr);
                work.push(LOOP | l as u32);
            }
        };
        for &b in &exposed[r] {
            if let Some(l) = free_loop(b as usize) {
                enter_loop(l, &mut work, &mut loop_live);
                continue;
            }
            is_in[b as usize] = rr;
            live_in[b as usize].push(rr);
            work.push(b);
        }
        while let Some(item) = work.pop() {
            let edges: &mut dyn Iterator<Item = (u32, u32)> = if item & LOOP != 0 {
                &mut entries[(item & !LOOP) as usize].iter().copied()
            } else {
                &mut preds[item as usize].iter().map(|&p| (p, item))
            };
            for (p, x) in edges {
                let (p, x) = (p as usize, x as usize);
                // Leaving a loop of `p` backward: `p` may sit in a free loop.
                if innermost(p).is_some_and(|lp| !loops.contains_index(lp, x)) {
                    if let Some(l) = free_loop(p) {
                        enter_loop(l, &mut work, &mut loop_live);
                        continue;
                    }
                }
                if is_out[p] == rr {
                    continue;
                }
                is_out[p] = rr;
                live_out[p].push(rr);
                if kills[p] != rr && is_in[p] != rr {
                    is_in[p] = rr;
                    live_in[p].push(rr);
                    work.push(p as u32);
                }
            }
        }
    }
    let mut reg_loops: Vec<Vec<u32>> = vec![Vec::new(); width];
    for (l, set) in loop_live.iter().enumerate() {
        for &r in set {
            reg_loops[r as usize].push(l as u32);
        }
    }
    for ls in &mut reg_loops {
        ls.sort_unstable_by_key(|&l| loops.preorder(l as usize));
    }
    Liveness {
        live_in: live_in.into_iter().map(RegSet).collect(),
        live_out: live_out.into_iter().map(RegSet).collect(),
        loop_live: loop_live.into_iter().map(RegSet).collect(),
        loops,
        reg_loops,
    }
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

/// Adds the range `from..to` to `ranges`, which are collected in decreasing order
/// (reversed later): merged with the last one when they overlap or touch.
fn add_range_reversed(ranges: &mut Vec<(u32, u32)>, from: u32, to: u32) {
    if let Some(last) = ranges.last_mut() {
        if from <= last.1 && last.0 <= to {
            last.0 = last.0.min(from);
            last.1 = last.1.max(to);
            return;
        }
    }
    ranges.push((from, to));
}

/// Builds intervals from liveness.
pub fn build_intervals(mf: &MFunction, live_sets: &Liveness) -> Intervals {
    let width = NUM_PREGS as usize + mf.num_vregs();
    let n = mf.blocks.len();
    let mut block_start = vec![0u32; n];
    let mut block_end = vec![0u32; n];
    let mut k = 0u32;
    for &b in &mf.layout {
        block_start[b.index()] = 2 * k;
        k += mf.blocks[b].insts.len() as u32;
        block_end[b.index()] = 2 * k;
    }
    // Ranges are collected in decreasing order, then reversed.
    let mut rev: Vec<Vec<(u32, u32)>> = vec![Vec::new(); width];
    let add = |rev: &mut Vec<Vec<(u32, u32)>>, r: usize, from: u32, to: u32| {
        add_range_reversed(&mut rev[r], from, to)
    };
    let mut work = BitSet::new(width);
    let mut touched: Vec<usize> = Vec::new();
    for &b in mf.layout.iter().rev() {
        let (bs, be) = (block_start[b.index()], block_end[b.index()]);
        for r in touched.drain(..) {
            work.remove(r);
        }
        let live = &mut work;
        for r in live_sets.own_live_out(b.index()).iter() {
            live.insert(r);
            touched.push(r);
            add(&mut rev, r, bs, be);
        }
        let insts = &mf.blocks[b].insts;
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
                touched.push(u.0 as usize);
            });
        }
    }
    // Registers live throughout a loop cover its runs of blocks in the layout.
    let loops = live_sets.loops();
    let mut whole: Vec<Vec<(u32, u32)>> = vec![Vec::new(); width];
    if (0..loops.loops.len()).any(|l| !live_sets.loop_live(l).is_empty()) {
        let runs = layout_runs(loops, &mf.layout, &block_start, &block_end);
        for (l, runs) in runs.iter().enumerate() {
            for r in live_sets.loop_live(l).iter() {
                whole[r].extend_from_slice(runs);
            }
        }
    }
    let regs = rev
        .into_iter()
        .zip(whole)
        .map(|(mut v, w)| {
            v.reverse();
            if !w.is_empty() {
                v = union_of_ranges(v, w);
            }
            Interval { ranges: v }
        })
        .collect();
    Intervals {
        regs,
        block_start,
        block_end,
    }
}

/// The union of two lists of half-open ranges as sorted ranges, neither
/// overlapping nor touching.
fn union_of_ranges(mut a: Vec<(u32, u32)>, b: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    a.extend(b);
    a.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(a.len());
    for (s, e) in a {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// A set of physical registers (bit `r.0`: 32 integer, then 32 FP registers).
pub type RegMask = u64;

/// The bit of `r` in a [`RegMask`] (none for a virtual register).
pub fn reg_bit(r: Reg) -> RegMask {
    if r.is_phys() {
        1 << r.0
    } else {
        0
    }
}

/// The registers a return or tail call reads besides its operands: `ra` and the
/// callee-saved registers (the epilogue has restored them): [`abi::is_read_by_return`].
fn read_by_returns() -> RegMask {
    (0..NUM_PREGS)
        .map(Reg)
        .filter(|&r| abi::is_read_by_return(r))
        .fold(0, |m, r| m | reg_bit(r))
}

/// The physical registers live into and out of each block (by block number) of
/// allocated code after frame layout: a block not ending in a jump, return or
/// tail call falls through to the next one in the layout (after placement no jump
/// says so), and a return or tail call reads `ra` and every callee-saved register (the
/// caller does, the epilogue having restored them). [`compute_liveness`] serves
/// allocation instead, where neither holds yet.
pub fn allocated_liveness(mf: &MFunction) -> (Vec<RegMask>, Vec<RegMask>) {
    phys_liveness(mf, true)
}

/// [`allocated_liveness`] of the values the function itself reads: a return reads
/// only its operands, not the callee-saved registers the caller expects back (what
/// `crate::postra_sink` asks: where a copy's value is needed).
pub fn explicit_liveness(mf: &MFunction) -> (Vec<RegMask>, Vec<RegMask>) {
    phys_liveness(mf, false)
}

fn phys_liveness(mf: &MFunction, returns_read_callee_saved: bool) -> (Vec<RegMask>, Vec<RegMask>) {
    let n = mf.blocks.len();
    let (mut gen, mut kill) = (vec![0; n], vec![0; n]);
    let mut succs = vec![Vec::new(); n];
    for (k, &b) in mf.layout.iter().enumerate() {
        let (g, d) = (&mut gen[b.index()], &mut kill[b.index()]);
        for inst in &mf.blocks[b].insts {
            inst.for_each_use(|r| *g |= reg_bit(r) & !*d);
            if returns_read_callee_saved
                && matches!(inst, MInst::Ret { .. } | MInst::TailCall { .. })
            {
                *g |= read_by_returns() & !*d;
            }
            inst.for_each_def(|r| *d |= reg_bit(r));
        }
        succs[b.index()] = mf.succs(b).to_vec();
        let falls = !mf.blocks[b].insts.last().is_some_and(MInst::is_barrier);
        if let (true, Some(&next)) = (falls, mf.layout.get(k + 1)) {
            succs[b.index()].push(next);
        }
    }
    // A worklist (each block again only when a successor's live-in grew), not
    // rounds over every block: rounds take as many as the loops are deeply
    // nested, quadratic time in a deep nest. Each live-in only grows, so every
    // block is revisited at most once per register.
    let mut preds = vec![Vec::new(); n];
    for (i, list) in succs.iter().enumerate() {
        for s in list {
            preds[s.index()].push(i);
        }
    }
    let (mut live_in, mut live_out) = (vec![0; n], vec![0; n]);
    // Popped in reverse layout order first, as a backward problem converges fastest.
    let mut work: Vec<usize> = mf.layout.iter().map(|b| b.index()).collect();
    let mut queued = vec![false; n];
    for &i in &work {
        queued[i] = true;
    }
    while let Some(i) = work.pop() {
        queued[i] = false;
        let out = succs[i].iter().fold(0, |m, s| m | live_in[s.index()]);
        let inn = gen[i] | (out & !kill[i]);
        live_out[i] = out;
        if inn != live_in[i] {
            live_in[i] = inn;
            for &p in &preds[i] {
                if !std::mem::replace(&mut queued[p], true) {
                    work.push(p);
                }
            }
        }
    }
    (live_in, live_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::{AluImmOp, MBlock, MInst, RegClass, A0};

    #[test]
    fn allocated_code_falls_through_and_returns_read_ra_and_callee_saved_registers() {
        use crate::testinsts::{addi, lw, ret_a0};
        // bb0 (no jump) falls into bb1, which reads a1 and returns: a1 is live out
        // of bb0; s1 is read by the return (the caller's), so it is live into bb1
        // and, never written, into bb0; so is `ra`.
        let mut mf = MFunction::new("t".into(), false);
        let (b0, b1) = (mf.new_block(), mf.new_block());
        mf.layout.extend([b0, b1]);
        mf.blocks[b0].insts = vec![lw(11, 10, 0)];
        mf.blocks[b1].insts = vec![addi(10, 11, 1), ret_a0()];
        let (live_in, live_out) = allocated_liveness(&mf);
        let a1 = reg_bit(Reg::x(11));
        let s1 = reg_bit(Reg::x(9));
        assert_ne!(live_out[0] & a1, 0);
        assert_eq!(live_in[0] & a1, 0, "bb0 defines a1");
        assert_ne!(live_in[1] & s1, 0);
        assert_ne!(live_in[0] & s1, 0);
        assert_eq!(live_in[1] & reg_bit(Reg::x(5)), 0, "t0 is caller-saved");
        // `ret` reads the return address in `ra`.
        assert_ne!(live_in[1] & reg_bit(crate::mir::RA), 0);
        assert_ne!(live_in[0] & reg_bit(crate::mir::RA), 0);
    }

    #[test]
    fn straight_line_intervals() {
        let mut mf = MFunction::new("t".into(), false);
        let b = mf.new_block();
        mf.layout.push(b);
        let v0 = mf.new_vreg(RegClass::Int);
        let v1 = mf.new_vreg(RegClass::Int);
        mf.blocks[MBlock(0)].insts = vec![
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
        assert!(live.live_in(0).any(|r| r == A0.0 as usize));
    }

    /// The textbook solution: iterate the equations over dense sets until
    /// nothing changes.
    fn fixpoint(mf: &MFunction) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let n = mf.blocks.len();
        let width = NUM_PREGS as usize + mf.num_vregs();
        let mut gen = vec![vec![false; width]; n];
        let mut kill = vec![vec![false; width]; n];
        for b in 0..n {
            for inst in &mf.blocks[MBlock(b as u32)].insts {
                inst.for_each_use(|r| {
                    if tracked(r) && !kill[b][r.0 as usize] {
                        gen[b][r.0 as usize] = true;
                    }
                });
                inst.for_each_def(|r| {
                    if tracked(r) {
                        kill[b][r.0 as usize] = true;
                    }
                });
            }
        }
        let mut live_in = vec![vec![false; width]; n];
        let mut live_out = vec![vec![false; width]; n];
        let mut changed = true;
        while changed {
            changed = false;
            for b in (0..n).rev() {
                for s in mf.succs(crate::mir::MBlock(b as u32)) {
                    for r in 0..width {
                        if live_in[s.index()][r] && !live_out[b][r] {
                            live_out[b][r] = true;
                            changed = true;
                        }
                    }
                }
                for r in 0..width {
                    let v = gen[b][r] || (live_out[b][r] && !kill[b][r]);
                    if v && !live_in[b][r] {
                        live_in[b][r] = true;
                        changed = true;
                    }
                }
            }
        }
        let list = |m: Vec<Vec<bool>>| {
            m.into_iter()
                .map(|row| (0..width).filter(|&r| row[r]).collect())
                .collect()
        };
        (list(live_in), list(live_out))
    }

    /// Intervals built block by block from complete live-out sets: each block's
    /// live-out registers cover it, then a backward walk over its instructions.
    fn dense_intervals(mf: &MFunction, live_out: &[Vec<usize>]) -> Vec<Interval> {
        let width = NUM_PREGS as usize + mf.num_vregs();
        let mut start = vec![0u32; mf.blocks.len()];
        let mut k = 0u32;
        for &b in &mf.layout {
            start[b.index()] = 2 * k;
            k += mf.blocks[b].insts.len() as u32;
        }
        let mut rev: Vec<Vec<(u32, u32)>> = vec![Vec::new(); width];
        let add = |rev: &mut Vec<Vec<(u32, u32)>>, r: usize, from: u32, to: u32| {
            add_range_reversed(&mut rev[r], from, to)
        };
        for &b in mf.layout.iter().rev() {
            let insts = &mf.blocks[b].insts;
            let bs = start[b.index()];
            let mut live = vec![false; width];
            for &r in &live_out[b.index()] {
                live[r] = true;
                add(&mut rev, r, bs, bs + 2 * insts.len() as u32);
            }
            for (i, inst) in insts.iter().enumerate().rev() {
                let pos = bs + 2 * i as u32;
                inst.for_each_def(|d| {
                    if tracked(d) {
                        let d = d.0 as usize;
                        if live[d] {
                            rev[d].last_mut().unwrap().0 = pos + 1;
                            live[d] = false;
                        } else {
                            add(&mut rev, d, pos + 1, pos + 2);
                        }
                    }
                });
                inst.for_each_use(|u| {
                    if tracked(u) {
                        add(&mut rev, u.0 as usize, bs, pos + 1);
                        live[u.0 as usize] = true;
                    }
                });
            }
        }
        rev.into_iter()
            .map(|mut v| {
                v.reverse();
                Interval { ranges: v }
            })
            .collect()
    }

    /// Random control flow (forward and backward branches) over a few virtual
    /// registers, each block using and defining some: the sparse per-register walk
    /// finds exactly the least fixed point of the equations, and the intervals
    /// built from its block and loop parts are those of the complete sets; the
    /// live-out sets to update ([`LiveRegs`]) hold what the complete sets hold.
    /// A register live through each of many loops in sequence is live out of
    /// their blocks, and out of no block after its last use; another, live
    /// through the first loops only, stops there.
    #[test]
    fn a_register_live_through_loops_in_sequence_is_live_out_of_them_only() {
        use crate::mir::{AluOp, Cond};
        let loops = 40;
        let mut mf = MFunction::new("t".into(), false);
        let (n, short, i) = (
            mf.new_vreg(RegClass::Int),
            mf.new_vreg(RegClass::Int),
            mf.new_vreg(RegClass::Int),
        );
        let add = |rd, rs1, rs2| MInst::Alu {
            op: AluOp::Add,
            rd,
            rs1,
            rs2,
        };
        let entry = mf.new_block();
        mf.layout.push(entry);
        mf.blocks[entry].insts = vec![
            add(n, A0, A0),
            add(short, A0, A0),
            add(i, A0, A0),
            MInst::Jump {
                target: MBlock(entry.0 + 1),
            },
        ];
        for k in 0..loops {
            let b = mf.new_block();
            let next = MBlock(b.0 + 1);
            mf.layout.push(b);
            let mut insts = vec![add(i, i, i)];
            if k == loops / 2 {
                insts.push(add(i, i, short)); // last use of `short`
            }
            insts.push(MInst::Branch {
                cond: Cond::Lt,
                rs1: i,
                rs2: n,
                target: b,
            });
            insts.push(MInst::Jump { target: next });
            mf.blocks[b].insts = insts;
        }
        let exit = mf.new_block();
        mf.layout.push(exit);
        mf.blocks[exit].insts = vec![MInst::Mv { rd: A0, rs: i }, MInst::Ret { value: Some(A0) }];
        let live = compute_liveness(&mf);
        assert_eq!(live.loops().loops.len(), loops);
        let (_, want_out) = fixpoint(&mf);
        assert_eq!(want_out.len(), loops + 2);
        for (b, out) in want_out.iter().enumerate() {
            for r in [n, short, i] {
                let r = r.0 as usize;
                assert_eq!(live.is_live_out(b, r), out.contains(&r), "bb{b} r{r}");
            }
        }
        // Checked against hand-known facts too: `n` is read by every loop's exit
        // test; `short` dies in loop number `loops / 2` (block `loops / 2 + 1`).
        let (n, short) = (n.0 as usize, short.0 as usize);
        assert!((0..=loops).all(|b| live.is_live_out(b, n)));
        assert!(!live.is_live_out(loops + 1, n));
        assert!(live.is_live_out(loops / 2, short));
        assert!(live.is_live_out(loops / 2 + 1, short), "its loop repeats");
        assert!(!live.is_live_out(loops / 2 + 2, short));
    }

    #[test]
    fn sparse_walk_equals_the_fixed_point_on_random_code() {
        use crate::mir::{AluOp, Cond, MBlock};
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let mut loop_parts = 0;
        for _ in 0..200 {
            let mut mf = MFunction::new("t".into(), false);
            let nblocks = 2 + next(16) as usize;
            let regs: Vec<Reg> = (0..6).map(|_| mf.new_vreg(RegClass::Int)).collect();
            for b in 0..nblocks {
                let id = mf.new_block();
                mf.layout.push(id);
                let mut insts = Vec::new();
                for _ in 0..next(4) {
                    insts.push(MInst::Alu {
                        op: AluOp::Add,
                        rd: regs[next(6) as usize],
                        rs1: regs[next(6) as usize],
                        rs2: regs[next(6) as usize],
                    });
                }
                if b + 1 == nblocks {
                    insts.push(MInst::Mv {
                        rd: A0,
                        rs: regs[next(6) as usize],
                    });
                    insts.push(MInst::Ret { value: Some(A0) });
                } else {
                    if next(2) == 0 {
                        insts.push(MInst::Branch {
                            cond: Cond::Lt,
                            rs1: regs[next(6) as usize],
                            rs2: regs[next(6) as usize],
                            target: MBlock(next(nblocks as u64) as u32),
                        });
                    }
                    let target = if next(3) == 0 {
                        next(nblocks as u64) as u32
                    } else {
                        b as u32 + 1
                    };
                    insts.push(MInst::Jump {
                        target: MBlock(target),
                    });
                }
                mf.blocks[MBlock(b as u32)].insts = insts;
            }
            let live = compute_liveness(&mf);
            let (want_in, want_out) = fixpoint(&mf);
            let sorted = |it: &mut dyn Iterator<Item = usize>| {
                let mut v: Vec<usize> = it.collect();
                v.sort_unstable();
                v
            };
            for b in 0..nblocks {
                assert_eq!(sorted(&mut live.live_in(b)), want_in[b]);
                assert_eq!(sorted(&mut live.live_out(b)), want_out[b]);
            }
            let iv = build_intervals(&mf, &live);
            assert_eq!(iv.regs, dense_intervals(&mf, &want_out));
            let width = NUM_PREGS as usize + mf.num_vregs();
            for (b, out) in want_out.iter().enumerate() {
                for q in 0..width {
                    assert_eq!(live.is_live_out(b, q), out.contains(&q), "bb{b} r{q}");
                }
            }
            loop_parts += (0..live.loops().loops.len())
                .filter(|&l| !live.loop_live(l).is_empty())
                .count();
            // The sets to update start as the live-out sets and follow updates.
            let class = |r: Reg| (r.0 % 2) as usize;
            let counts = live.loop_counts(&class);
            for (b, out) in want_out.iter().enumerate() {
                let mut set = live.live_out_regs(b, &counts, &class);
                let mut model: std::collections::BTreeSet<usize> = out.iter().copied().collect();
                for _ in 0..8 {
                    let r = match next(7) {
                        6 => A0.0 as usize,
                        k => regs[k as usize].0 as usize,
                    };
                    if next(2) == 0 {
                        set.insert(r);
                        model.insert(r);
                    } else {
                        set.remove(r);
                        model.remove(&r);
                    }
                    let copy = set.clone();
                    for q in 0..width {
                        assert_eq!(copy.contains(q), model.contains(&q));
                    }
                    let mut n = [0, 0];
                    for &q in &model {
                        n[class(Reg(q as u32))] += 1;
                    }
                    assert_eq!(copy.count(&class), n);
                }
            }
        }
        assert!(
            loop_parts > 50,
            "{loop_parts} registers live throughout loops"
        );
    }
}
