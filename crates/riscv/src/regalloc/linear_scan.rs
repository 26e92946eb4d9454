//! Linear scan register allocation over live intervals with holes.
//!
//! Intervals are visited in order of their start (Poletto and Sarkar, "Linear Scan
//! Register Allocation", TOPLAS 1999). Instead of the active list, each physical
//! register keeps the set of ranges already given to it (fixed intervals of argument
//! registers and call clobbers included), so an interval fits a register exactly when
//! it overlaps none of those ranges: intervals may use each other's holes, as in
//! Traub, Holloway and Smith's second-chance binpacking. Preference goes to the
//! register of a copy's other side (move hints; when that side is not allocated yet,
//! a register free over both intervals; when the partner's register is taken, the
//! values holding it may move to other free registers: hint eviction, as in
//! LLVM's greedy allocator), then caller-saved registers, then callee-saved ones.
//! When no register is free, the interval may evict the cheapest set of
//! conflicting intervals of one register if their total spill cost is lower than
//! its own; evicted intervals get a second chance at any register still free,
//! or are spilled whole. The spill cost of an interval is the number of its uses and
//! definitions, each weighted by 10^(loop depth), halved when it can be recomputed,
//! and multiplied by a large factor for intervals too short for a spill to free
//! a register anywhere ([`too_short_to_spill`]).
//!
//! Why linear scan and not graph colouring (iterated register coalescing, George
//! and Appel 1996): its cost follows the intervals, not an interference graph
//! that is quadratic in the values live at once (generated code with hundreds of
//! values live over thousands of blocks must still allocate in about a second:
//! compile-time budget of `bench scaling`); intervals with holes and second-chance
//! packing recover most of what colouring gains on straight code; copies are
//! coalesced through move hints instead of by merging nodes (most copies are
//! block-argument edges, which the hints and the scheduler keep in one register);
//! and what colouring gets from splitting, the allocator gets from
//! [`super::split`], which splits spilled values around the loops that read them
//! and allocates again (spill code leaves loops, as in Wimmer and Franz's linear
//! scan with splitting, CGO 2010).

use crate::abi;
use crate::liveness::{Interval, Intervals};
use crate::mir::{copies_then_jump, MBlock, MFunction, MInst, Reg, RegClass, NUM_PREGS, RA};
use std::collections::BTreeMap;

/// Owner of a range in a register's occupancy: a virtual register index, or
/// [`FIXED`] for a physical register's own interval.
const FIXED: u32 = u32::MAX;

/// The result of allocation.
pub struct Allocation {
    /// Physical register of each virtual register, unless spilled or unused.
    pub assignment: Vec<Option<Reg>>,
    /// Whether each virtual register lives in memory (or is recomputed) instead.
    pub spilled: Vec<bool>,
}

impl Allocation {
    /// The same allocation for the function after virtual registers were added
    /// that no instruction uses (they get neither register nor slot).
    pub fn grown_to(mut self, num_vregs: usize) -> Allocation {
        self.assignment.resize(num_vregs, None);
        self.spilled.resize(num_vregs, false);
        self
    }
}

struct State<'a> {
    iv: &'a Intervals,
    /// Per physical register: start -> (end, owner).
    occ: Vec<BTreeMap<u32, (u32, u32)>>,
    assignment: Vec<Option<Reg>>,
    spilled: Vec<bool>,
    cost: Vec<f64>,
    /// Per physical register: whether the frame saves it already (a callee-saved
    /// register or `ra` given a value, `ra` in a function that calls).
    saved: Vec<bool>,
    /// Per class (integer, float): the candidate registers in preference order
    /// ([`State::candidates`]), rebuilt whenever `saved` changes, which orders
    /// them (building the list at every allocation was a quarter of the linear
    /// scan's instructions on many functions of hundreds of values).
    candidate_lists: [Vec<Reg>; 2],
    /// Per physical register: the unallocated copy partners of the intervals it
    /// was given, which would like it too.
    wishes: Vec<Vec<u32>>,
    /// Per physical register: the length of its wishes after they were last pruned.
    pruned_len: Vec<usize>,
    /// The registers whose wishes grew since [`State::prune_wishes`] last looked
    /// at them (only they can have doubled): the pruning before each allocation
    /// looks at these, not at every register.
    grown: Vec<usize>,
    /// Sibling copy destinations ([`sibling_copy_hints`]): pairs of a virtual
    /// register's index and a sibling, by index and then most executed first.
    /// A value takes a sibling's register when none of its hinted registers is
    /// free.
    siblings: Vec<(u32, Reg)>,
}

/// Candidate registers of `class` in preference order, given which registers
/// the frame saves already (`saved`): caller-saved, then those the frame saves
/// already (no extra save: `ra` in a function that calls, then callee-saved ones
/// in use), then those it would have to save (a leaf's `ra` last: it costs one
/// save like a fresh callee-saved register, but its restore is the epilogue's
/// last load, which the return waits for).
fn candidates_of(class: RegClass, saved: &[bool]) -> Vec<Reg> {
    let all = abi::allocatable(class);
    let mut v: Vec<Reg> = all
        .iter()
        .copied()
        .filter(|&r| !abi::is_read_by_return(r))
        .collect();
    let ra = (class == RegClass::Int).then_some(RA);
    let callee_saved = all.iter().copied().filter(|&r| abi::is_callee_saved(r));
    let saved_first = ra.into_iter().chain(callee_saved.clone());
    v.extend(saved_first.filter(|&r| saved[r.0 as usize]));
    let ra_last = callee_saved.chain(ra);
    v.extend(ra_last.filter(|&r| !saved[r.0 as usize]));
    v
}

/// [`candidates_of`] for both classes, indexed by `RegClass as usize`.
fn candidate_lists(saved: &[bool]) -> [Vec<Reg>; 2] {
    [
        candidates_of(RegClass::Int, saved),
        candidates_of(RegClass::Float, saved),
    ]
}

impl<'a> State<'a> {
    /// Nothing allocated yet: the physical registers hold their fixed
    /// intervals, the virtual ones (`cost.len()` of them) wait. `ra` counts as
    /// saved by the frame when the function calls.
    fn new(iv: &'a Intervals, cost: Vec<f64>, has_calls: bool) -> Self {
        let nv = cost.len();
        let mut saved = vec![false; NUM_PREGS as usize];
        saved[RA.0 as usize] = has_calls;
        let mut st = State {
            iv,
            occ: vec![BTreeMap::new(); NUM_PREGS as usize],
            assignment: vec![None; nv],
            spilled: vec![false; nv],
            cost,
            candidate_lists: candidate_lists(&saved),
            saved,
            wishes: vec![Vec::new(); NUM_PREGS as usize],
            pruned_len: vec![0; NUM_PREGS as usize],
            grown: Vec::new(),
            siblings: Vec::new(),
        };
        for p in 0..NUM_PREGS {
            if !abi::is_allocatable(Reg(p)) {
                continue;
            }
            for &(a, b) in &iv.regs[p as usize].ranges {
                st.occ[p as usize].insert(a, (b, FIXED));
            }
        }
        st
    }

    fn interval(&self, v: usize) -> &Interval {
        &self.iv.regs[NUM_PREGS as usize + v]
    }

    fn is_free(&self, r: Reg, iv: &Interval) -> bool {
        let occ = &self.occ[r.0 as usize];
        iv.ranges
            .iter()
            .all(|&(a, b)| match occ.range(..b).next_back() {
                Some((_, &(e, _))) => e <= a,
                None => true,
            })
    }

    /// Owners of the ranges of `r` overlapping `iv` (deduplicated), or `None` if a
    /// fixed interval is among them.
    fn conflicts(&self, r: Reg, iv: &Interval) -> Option<Vec<u32>> {
        let occ = &self.occ[r.0 as usize];
        let mut owners = Vec::new();
        for &(a, b) in &iv.ranges {
            for (_, &(e, o)) in occ.range(..b).rev() {
                if e <= a {
                    break;
                }
                if o == FIXED {
                    return None;
                }
                if !owners.contains(&o) {
                    owners.push(o);
                }
            }
        }
        Some(owners)
    }

    fn assign(&mut self, v: usize, r: Reg) {
        let ranges = self.iv.regs[NUM_PREGS as usize + v].ranges.clone();
        let occ = &mut self.occ[r.0 as usize];
        for (a, b) in ranges {
            occ.insert(a, (b, v as u32));
        }
        self.assignment[v] = Some(r);
        if abi::is_read_by_return(r) && !self.saved[r.0 as usize] {
            self.saved[r.0 as usize] = true;
            self.candidate_lists = candidate_lists(&self.saved);
        }
    }

    fn unassign(&mut self, v: usize) {
        if let Some(r) = self.assignment[v].take() {
            let occ = &mut self.occ[r.0 as usize];
            for &(a, _) in &self.iv.regs[NUM_PREGS as usize + v].ranges {
                occ.remove(&a);
            }
        }
    }

    /// Candidate registers of `class` in preference order ([`candidates_of`]).
    fn candidates(&self, class: RegClass) -> &[Reg] {
        &self.candidate_lists[class as usize]
    }

    /// Gives `v` a free register: its hinted register if free (or, given every
    /// value's hints `all_hints`,
    /// freed by [`State::evict_for_hint`]), else one a copy partner can share,
    /// else any.
    fn try_free(
        &mut self,
        v: usize,
        class: RegClass,
        hints: &[(Reg, f64)],
        all_hints: Option<&[Vec<(Reg, f64)>]>,
    ) -> bool {
        let iv = self.interval(v).clone();
        let mut by_weight = hints.to_vec();
        by_weight.sort_by(|a, b| b.1.total_cmp(&a.1));
        for &(h, _) in &by_weight {
            let r = if h.is_phys() {
                Some(h)
            } else {
                self.assignment[h.vindex()]
            };
            if let Some(r) = r {
                if abi::is_allocatable_in(class, r) && self.is_free(r, &iv) {
                    self.take(v, r, hints);
                    return true;
                }
            }
        }
        if let Some(all_hints) = all_hints {
            if let Some(&(h, w)) = by_weight.first() {
                let r = if h.is_phys() {
                    Some(h)
                } else {
                    self.assignment[h.vindex()]
                };
                if let Some(r) = r.filter(|&r| abi::is_allocatable_in(class, r)) {
                    let partner = h.is_virtual().then(|| h.vindex() as u32);
                    if self.evict_for_hint(v, class, (r, partner), w, hints, all_hints) {
                        return true;
                    }
                }
            }
        }
        // Copy partners not allocated yet: prefer a register also free over their
        // intervals, so that they can take it too and the copies vanish (a
        // loop-carried value and its next value meet in one register this way);
        // failing all of them, over the most executed copy's partner.
        let mut partners: Vec<(&Interval, f64)> = hints
            .iter()
            .filter(|(h, _)| h.is_virtual() && self.assignment[h.vindex()].is_none())
            .map(|&(h, w)| (self.interval(h.vindex()), w))
            .filter(|(p, _)| !overlaps(p, &iv))
            .collect();
        partners.sort_by(|a, b| b.1.total_cmp(&a.1));
        let candidates = self.candidates(class);
        let all = |r: Reg| partners.iter().all(|(p, _)| self.is_free(r, p));
        let heaviest = |r: Reg| partners.first().is_some_and(|(p, _)| self.is_free(r, p));
        let shared = (!partners.is_empty())
            .then(|| {
                let free = |r: &&Reg| self.is_free(**r, &iv);
                let found = candidates.iter().filter(free).find(|&&r| all(r));
                found.or_else(|| candidates.iter().filter(free).find(|&&r| heaviest(r)))
            })
            .flatten()
            .copied();
        if let Some(r) = shared {
            self.take(v, r, hints);
            return true;
        }
        // A sibling's register: the two edges of its branch then copy alike.
        let from = self.siblings.partition_point(|&(w, _)| (w as usize) < v);
        for k in from..self.siblings.len() {
            let (w, sibling) = self.siblings[k];
            if w as usize != v {
                break;
            }
            let r = self.assignment[sibling.vindex()];
            if let Some(r) = r.filter(|&r| abi::is_allocatable_in(class, r)) {
                if self.is_free(r, &iv) {
                    self.take(v, r, hints);
                    return true;
                }
            }
        }
        // A free register no waiting partner of an earlier interval wants over
        // this one's range, else any free register.
        let wanted = |r: Reg| {
            self.wishes[r.0 as usize].iter().any(|&w| {
                let w = w as usize;
                self.assignment[w].is_none() && !self.spilled[w] && overlaps(self.interval(w), &iv)
            })
        };
        // In preference order, stopping at the first free register not wanted
        // (the registers after it are not asked whether they are free).
        let mut first_free = None;
        let mut unwanted = None;
        for &r in candidates {
            if !self.is_free(r, &iv) {
                continue;
            }
            first_free.get_or_insert(r);
            if !wanted(r) {
                unwanted = Some(r);
                break;
            }
        }
        match unwanted.or(first_free) {
            Some(r) => {
                self.take(v, r, hints);
                true
            }
            None => false,
        }
    }

    /// Hint eviction (as LLVM's greedy allocator evicts interference from a hinted
    /// register): the values holding `r` over `v`'s interval move to other free
    /// registers, so that `v` can take `r` and its copy of weight `w` vanishes.
    /// Done only when every one of them finds another register at once, and when
    /// the copies they themselves keep in `r` weigh less than `w`; otherwise
    /// nothing changes. `hints` are every value's move hints.
    fn evict_for_hint(
        &mut self,
        v: usize,
        class: RegClass,
        (r, partner): (Reg, Option<u32>),
        w: f64,
        own: &[(Reg, f64)],
        hints: &[Vec<(Reg, f64)>],
    ) -> bool {
        let iv = self.interval(v).clone();
        let Some(owners) = self.conflicts(r, &iv) else {
            return false;
        };
        let kept_in_r: f64 = owners
            .iter()
            .flat_map(|&o| &hints[o as usize])
            .filter(|&&(h, _)| h == r || (h.is_virtual() && self.assignment[h.vindex()] == Some(r)))
            .map(|&(_, hw)| hw)
            .sum();
        if owners.is_empty() || kept_in_r >= w || owners.iter().any(|&o| Some(o) == partner) {
            return false;
        }
        for &o in &owners {
            self.unassign(o as usize);
        }
        self.assign(v, r);
        let mut moved = Vec::new();
        for &o in &owners {
            let o = o as usize;
            if self.try_free(o, class, &hints[o], None) {
                moved.push(o);
            } else {
                for &m in &moved {
                    self.unassign(m);
                }
                self.unassign(v);
                for &o in &owners {
                    self.assign(o as usize, r);
                }
                return false;
            }
        }
        self.unassign(v);
        self.take(v, r, own);
        true
    }

    /// Drops the wishes that can never count again once intervals start at `pos`:
    /// partners spilled, or given a register over an interval that ends before
    /// `pos` (no later interval overlaps them, so no eviction unassigns them). The
    /// lists then stay proportional to the live partners instead of growing with
    /// the function (each scan of a list is part of every allocation). Amortised:
    /// a list is pruned when it has doubled since its last pruning.
    fn prune_wishes(&mut self, pos: u32) {
        let grown = std::mem::take(&mut self.grown);
        for &r in &grown {
            if self.wishes[r].len() <= 2 * self.pruned_len[r] + 16 {
                continue;
            }
            let mut list = std::mem::take(&mut self.wishes[r]);
            list.retain(|&w| {
                let w = w as usize;
                !(self.spilled[w] || self.assignment[w].is_some() && self.interval(w).end() <= pos)
            });
            self.pruned_len[r] = list.len();
            self.wishes[r] = list;
        }
        self.grown = grown;
        self.grown.clear();
    }

    /// Assigns `r` to `v` and records that `v`'s unallocated copy partners would
    /// like `r` as well (Wimmer and Franz 2010 register hints, kept for the
    /// partner: later intervals that overlap it choose another free register).
    fn take(&mut self, v: usize, r: Reg, hints: &[(Reg, f64)]) {
        self.assign(v, r);
        let list = &mut self.wishes[r.0 as usize];
        let before = list.len();
        for &(h, _) in hints {
            if h.is_virtual() && self.assignment[h.vindex()].is_none() {
                list.push(h.vindex() as u32);
            }
        }
        if list.len() > before && !self.grown.contains(&(r.0 as usize)) {
            self.grown.push(r.0 as usize);
        }
    }
}

/// Whether two intervals share a position.
pub(crate) fn overlaps(a: &Interval, b: &Interval) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.ranges.len() && j < b.ranges.len() {
        let (x, y) = (a.ranges[i], b.ranges[j]);
        if x.0 < y.1 && y.0 < x.1 {
            return true;
        }
        if x.1 <= y.1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    false
}

/// Instructions a value may span, from its definition to its last use, and still
/// count as too short to spill ([`too_short_to_spill`]).
pub const SHORT_SPAN: u32 = 3;
/// How much more a value too short to spill costs than its uses and definitions.
pub const SHORT_FACTOR: f64 = 1000.0;

/// Whether spilling the value of interval `iv` would free a register over no
/// more than [`SHORT_SPAN`] instructions: one range, that short. Spilled, it
/// would be stored after its definition and reloaded into a scratch register a
/// few instructions later, so every other value live there still needs a
/// register, and the spill code is all the change. LLVM's spill weights make
/// such intervals all but unspillable as well (their weight is divided by their
/// size, and those a spill would not shorten are marked unspillable); here
/// their cost is multiplied by [`SHORT_FACTOR`], so that a long interval whose
/// register they need is evicted (or its copies split off around loops) instead.
pub(crate) fn too_short_to_spill(iv: &Interval) -> bool {
    iv.ranges.len() == 1 && iv.end() - iv.start() <= 2 * SHORT_SPAN
}

/// Sibling copy destinations: the destinations of copies from one source on the
/// two edges of a branch, for each virtual register most executed first. A loop
/// whose exit and back edge both pass a value on then gets its exit's parameter
/// into the register of the header's when its own hints fail, so that the two
/// edge blocks hold the same copies and [`crate::peephole`]'s hoisting of common
/// successor code moves them above the branch, instead of the exit running
/// copies of its own. It is a preference weaker than a copy's (a register shared
/// with a sibling saves no copy by itself): taken only when no hinted register is
/// free and no register can be kept for the copy partners not allocated yet.
/// This is an affinity of copy-related values (Hack and Goos's SSA coalescing)
/// taken across a branch. Each pair weighs what the less executed of its two
/// copies does.
fn sibling_copy_hints(mf: &MFunction, depths: &[u32]) -> Vec<(u32, Reg)> {
    let mut siblings: Vec<(u32, f64, Reg)> = Vec::new();
    for &b in &mf.layout {
        // A two-way branch (its edges' copy blocks have it as their only way in
        // when isel split the edges; a copy block entered from elsewhere too only
        // makes the preference moot).
        let (x, y) = match mf.blocks[b].insts.as_slice() {
            [.., MInst::Branch { target, .. }, MInst::Jump { target: e }] => (*target, *e),
            _ => continue,
        };
        if x == y {
            continue;
        }
        let copies = |b: MBlock| copies_then_jump(&mf.blocks[b].insts).map(|(c, _)| c);
        let (Some(cx), Some(cy)) = (copies(x), copies(y)) else {
            continue;
        };
        let w = 10f64.powi(depths[x.index()].min(depths[y.index()]).min(8) as i32);
        let mut by_source: Vec<(Reg, Reg)> = cy
            .iter()
            .filter_map(|i| match *i {
                MInst::Mv { rd, rs } if rd.is_virtual() => Some((rs, rd)),
                _ => None,
            })
            .collect();
        by_source.sort_unstable();
        for ix in cx {
            let MInst::Mv { rd: dx, rs } = *ix else {
                continue;
            };
            let from = by_source.partition_point(|&(s, _)| s < rs);
            for &(_, dy) in by_source[from..].iter().take_while(|&&(s, _)| s == rs) {
                if dx != dy && dx.is_virtual() {
                    siblings.push((dx.vindex() as u32, w, dy));
                    siblings.push((dy.vindex() as u32, w, dx));
                }
            }
        }
    }
    siblings.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    siblings.into_iter().map(|(v, _, r)| (v, r)).collect()
}

/// Allocates registers for every virtual register of `mf`.
pub fn linear_scan(mf: &MFunction, iv: &Intervals, depths: &[u32]) -> Allocation {
    let nv = mf.num_vregs();
    // Spill costs and move hints.
    let mut cost = vec![0f64; nv];
    let mut hints: Vec<Vec<(Reg, f64)>> = vec![Vec::new(); nv];
    for &b in &mf.layout {
        let w = 10f64.powi(depths[b.index()].min(8) as i32);
        for inst in &mf.blocks[b].insts {
            let mut count = |r: Reg| {
                if r.is_virtual() {
                    cost[r.vindex()] += w;
                }
            };
            inst.for_each_use(&mut count);
            if !inst.is_call() {
                inst.for_each_def(&mut count);
            }
            if let MInst::Mv { rd, rs } = *inst {
                if rd.is_virtual() {
                    hints[rd.vindex()].push((rs, w));
                }
                if rs.is_virtual() {
                    hints[rs.vindex()].push((rd, w));
                }
            }
        }
    }
    for (v, c) in cost.iter_mut().enumerate() {
        if mf.vreg_remat[v].is_some() {
            *c *= 0.5;
        } else if too_short_to_spill(&iv.regs[NUM_PREGS as usize + v]) {
            *c *= SHORT_FACTOR;
        }
    }
    let mut st = State::new(iv, cost, mf.has_calls());
    st.siblings = sibling_copy_hints(mf, depths);
    let mut order: Vec<usize> = (0..nv).filter(|&v| !st.interval(v).is_empty()).collect();
    order.sort_by_key(|&v| (st.interval(v).start(), v));
    for v in order {
        st.prune_wishes(st.interval(v).start());
        let class = mf.vreg_class[v];
        if st.try_free(v, class, &hints[v], Some(&hints)) {
            continue;
        }
        // Evict the cheapest conflicting set of one register, if cheaper than `v`.
        let cur = st.interval(v).clone();
        let mut best: Option<(f64, Reg, Vec<u32>)> = None;
        for &r in st.candidates(class) {
            let Some(owners) = st.conflicts(r, &cur) else {
                continue;
            };
            let c: f64 = owners.iter().map(|&o| st.cost[o as usize]).sum();
            if best.as_ref().is_none_or(|b| c < b.0) {
                best = Some((c, r, owners));
            }
        }
        match best {
            Some((c, r, owners)) if c < st.cost[v] => {
                for &o in &owners {
                    st.unassign(o as usize);
                }
                st.assign(v, r);
                for &o in &owners {
                    let o = o as usize;
                    if !st.try_free(o, mf.vreg_class[o], &hints[o], None) {
                        st.spilled[o] = true;
                    }
                }
            }
            _ => st.spilled[v] = true,
        }
    }
    Allocation {
        assignment: st.assignment,
        spilled: st.spilled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::A0;

    /// Intervals of no physical register and of `ranges.len()` virtual ones.
    fn intervals(ranges: &[&[(u32, u32)]]) -> Intervals {
        let mut regs = vec![Interval { ranges: Vec::new() }; NUM_PREGS as usize];
        regs.extend(ranges.iter().map(|r| Interval { ranges: r.to_vec() }));
        Intervals {
            regs,
            block_start: vec![0],
            block_end: vec![100],
        }
    }

    #[test]
    fn the_candidates_follow_what_the_frame_saves() {
        let s3 = Reg::x(19);
        let iv = intervals(&[&[(0, 10)]]);
        let caller_saved = abi::allocatable(RegClass::Int)
            .iter()
            .filter(|&&r| !abi::is_read_by_return(r))
            .count();
        // A leaf: `ra` is saved only if it is given a value, so it comes with
        // the registers the frame would have to save, last of them (the return
        // would wait for its restore).
        let mut st = State::new(&iv, vec![1.0], false);
        let before = st.candidates(RegClass::Int).to_vec();
        assert!(before[..caller_saved]
            .iter()
            .all(|&r| !abi::is_read_by_return(r)));
        assert_eq!(before[caller_saved], Reg::x(8), "s0");
        assert_eq!(before.last(), Some(&RA));
        assert!(before.contains(&A0) && before.contains(&s3));
        // Once a callee-saved register holds a value, the frame saves it: it moves
        // ahead of the other callee-saved registers.
        st.assign(0, s3);
        let after = st.candidates(RegClass::Int);
        assert_eq!(after[caller_saved], s3);
        assert_eq!(after[caller_saved + 1], Reg::x(8), "s0");
        assert_eq!(after.last(), Some(&RA));
        assert_eq!(after, candidates_of(RegClass::Int, &st.saved).as_slice());
        let (mut a, mut b) = (before.clone(), after.to_vec());
        a.sort();
        b.sort();
        assert_eq!(a, b, "the same registers, in another order");
        // In a function that calls, `ra` is saved from the start.
        let st = State::new(&iv, vec![1.0], true);
        assert_eq!(st.candidates(RegClass::Int)[caller_saved], RA);
        assert_eq!(
            st.candidates(RegClass::Float),
            candidates_of(RegClass::Float, &st.saved)
        );
    }

    #[test]
    fn pruning_looks_at_every_register_whose_wishes_grew() {
        // Value 0 takes `a0`; its 40 copy partners (values 1..=40, not allocated
        // yet) wish for `a0` too. Once they are spilled, the next pruning drops
        // them, and a register nobody wished for stays untouched.
        let ranges: Vec<&[(u32, u32)]> = vec![&[(0, 10)]; 41];
        let iv = intervals(&ranges);
        let mut st = State::new(&iv, vec![1.0; 41], false);
        let hints: Vec<(Reg, f64)> = (1..=40).map(|v| (Reg::virt(v), 1.0)).collect();
        st.take(0, A0, &hints);
        assert_eq!(st.wishes[A0.0 as usize].len(), 40);
        st.prune_wishes(0);
        assert_eq!(
            st.wishes[A0.0 as usize].len(),
            40,
            "the partners may still want a0"
        );
        for v in 1..=40 {
            st.spilled[v] = true;
        }
        // Grown past twice its pruned length: looked at, and pruned to nothing.
        st.take(0, A0, &hints);
        st.take(0, A0, &hints);
        assert_eq!(st.wishes[A0.0 as usize].len(), 120);
        st.prune_wishes(20);
        assert!(st.wishes[A0.0 as usize].is_empty());
        assert!(st.grown.is_empty());
        assert!(st.wishes[Reg::x(8).0 as usize].is_empty());
    }

    #[test]
    fn destinations_of_one_source_on_both_edges_of_a_branch_are_siblings() {
        // bb2 (back edge) and bb3 (exit) both copy %v3; bb3 also copies %v5,
        // which bb2 does not. Only %v2 and %v7 become siblings.
        let mf = crate::text::parse::parse_function(
            "function f local
  int %v0..%v9
bb0:
  mv %v0, a0
  mv %v2, %v0
  mv %v3, %v0
  j bb1
bb1:
  addi %v5, %v3, 4
  blt %v5, %v0, bb2
  j bb3
bb2:
  mv %v2, %v3
  mv %v3, %v5
  j bb1
bb3:
  mv %v7, %v3
  mv %v8, %v2
  j bb4
bb4:
  sw %v8, 0(%v7)
  ret
end
",
        )
        .expect("parses");
        let siblings = sibling_copy_hints(&mf, &[0, 1, 1, 0, 0]);
        assert_eq!(siblings, vec![(2, Reg::virt(7)), (7, Reg::virt(2))]);
    }
}
