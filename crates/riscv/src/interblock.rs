//! Interblock scheduling: motion of a join's leading instructions into the idle
//! issue slots of the block that dominates it.
//!
//! In a loop, a block `h` that ends in a conditional branch often waits on it (a
//! load feeds a multiply feeds the test), while the block `s` where its arms meet
//! again (the latch, say) starts with work that does not depend on either arm:
//! the pointer increments of the next iteration. Every iteration that runs `h`
//! runs `s`, so that work can issue in `h`'s stalls and `s` shrinks to its
//! branch. GCC's interblock scheduler does exactly this for such a loop (its
//! "useful" motion between equivalent blocks).
//!
//! The region: `s` is a join (two or more predecessors) of an innermost loop, not
//! its header; `h` is its immediate dominator, in the same loop; the blocks
//! between (`between`: those reaching `s` backwards without passing `h`) are in
//! that loop too, none a header, and form no cycle. Every predecessor of a block
//! of `between` or of `s` is then in `between` or `h`: whenever `s` runs, `h` ran
//! in the same trip. A successor of `h` or of `between` that is neither in
//! `between` nor `s` is a *side exit* (a loop exit, a `continue`): moving above
//! it is speculative.
//!
//! An instruction of `s` moves to the end of `h` (before its branch) when
//!
//! - it goes above the instructions of `s` before it (no dependence with them: the
//!   candidates of [`crate::hoist_into_slots`]), reads and writes only virtual
//!   registers, defines one, and is arithmetic, a constant, an address or a load
//!   (no copy, store or call);
//! - no block of `between` writes what it reads or writes, or reads what it
//!   writes, and no call is among them (its result would live across the call);
//!   `h`'s branch does not read its result;
//! - a load: no store of `between` or left in `s` before it may touch its bytes;
//! - with side exits: it can run on a path that would not have run it
//!   ([`crate::hoist_into_slots::speculatable`]: no load, no division) and its
//!   result, defined only there, is not live into a side exit.
//!
//! Compensation: a pointer increment `addi d, u, c` whose old value `u` is still
//! read between (by the accesses of the arm, `lw x, 0(u)`) moves anyway; those
//! reads become `lw x, -c(d)` (GCC's breaking of mem/inc dependences, across
//! blocks). Without it, or when `u` is read otherwise, `u` and `d` would live
//! together over the region, and the allocator could no longer give the back
//! edge's copy `mv u, d` one register: a result copied to or from a register
//! still read between (or live into a side exit) stays in `s`.
//!
//! A motion is made when the timing model ([`crate::u74`]) says that `h` and `s`,
//! each list-scheduled ([`crate::schedule::schedule_unguarded`]), take fewer
//! cycles together (every path runs both; what is between is unchanged), and
//! that neither takes longer, entered by a branch or by falling through from a
//! predecessor in the loop: `h` fills idle slots, it is not made longer on any
//! path into it (then neither on a side exit). Joins are visited last to first,
//! so that work moved into a join can move on into the block above it.
//!
//! Global scheduling as Bernstein and Rodeh ("Global Instruction Scheduling for
//! Superscalar Machines", PLDI 1991) describe it, on the single-entry regions of
//! a loop body: motion between equivalent blocks (`h` dominates `s`, `s`
//! post-dominates `h` within the trip) and speculative motion above side exits;
//! the schedule-based gain test is [`crate::hoist_into_slots`]'s.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::hoist_into_slots::speculatable;
use crate::liveness::{compute_liveness, Liveness};
use crate::loops::{dominator_tree, loop_info, LoopInfo};
use crate::mir::{fits_imm12, AluImmOp, Base, MBlock, MFunction, MInst, Reg, RegClass, ZERO};
use crate::schedule::schedule_unguarded;
use crate::u74::{self, Machine, MemAccess, Timing};

/// At most this many instructions move from one join.
const MAX_MOVED: usize = 8;
/// Only the first this many instructions of a join are looked at.
const LOOKAHEAD: usize = 24;
/// Regions with more blocks between are left alone.
const MAX_BETWEEN: usize = 16;

/// The single-entry region from a block to a join it dominates.
struct Region {
    /// The immediate dominator of the join, where instructions move to.
    head: MBlock,
    /// The blocks on the paths from `head` to the join.
    between: Vec<MBlock>,
    /// Successors of `head` and `between` outside the region and not the join.
    side_exits: Vec<MBlock>,
}

/// An instruction of the join that may move, and the reads of its old pointer
/// to rewrite when it does.
struct Candidate {
    /// Its index in the join.
    at: usize,
    /// Accesses (block, index) whose base, the increment's operand, becomes its
    /// result with the increment taken off the offset.
    rewrites: Vec<(MBlock, usize)>,
}

/// Moves leading instructions of joins into the blocks dominating them (see the
/// module doc); returns how many instructions moved.
pub fn run(mf: &mut MFunction) -> usize {
    let info = loop_info(mf);
    if info.loops.is_empty() {
        return 0;
    }
    let Some(dt) = dominator_tree(mf) else {
        return 0;
    };
    let (defs, _) = mf.vreg_defs();
    // Copy partners of every register: the allocator wants each pair in one
    // register.
    let mut partners: FxHashMap<Reg, Vec<Reg>> = FxHashMap::default();
    for &b in &mf.layout {
        for i in &mf.blocks[b].insts {
            if let MInst::Mv { rd, rs } = *i {
                partners.entry(rd).or_default().push(rs);
                partners.entry(rs).or_default().push(rd);
            }
        }
    }
    let classes = mf.vreg_class.clone();
    let is_float = move |r: Reg| {
        let class = if r.is_virtual() {
            classes[r.vindex()]
        } else {
            r.phys_class()
        };
        class == RegClass::Float
    };
    // Block liveness, for side exits; see `legal` on why it need not be
    // recomputed after a motion.
    let mut live: Option<Liveness> = None;
    let mut moved = 0;
    for s in mf.layout.clone().into_iter().rev() {
        let Some(region) = region_of(mf, &info, &dt, s) else {
            continue;
        };
        if !region.side_exits.is_empty() && live.is_none() {
            live = Some(compute_liveness(mf));
        }
        let facts = RegionFacts {
            region: &region,
            defs: &defs,
            partners: &partners,
            live: live.as_ref(),
        };
        let candidates = facts.candidates(mf, s);
        let take = best_prefix(mf, &info, &region, s, &candidates, &is_float);
        if take == 0 {
            continue;
        }
        let chosen = &candidates[..take];
        for c in chosen {
            let Some((d, u, inc)) = increment(&mf.blocks[s].insts[c.at]) else {
                debug_assert!(c.rewrites.is_empty());
                continue;
            };
            for &(b, k) in &c.rewrites {
                if let MInst::Load { addr, .. } | MInst::Store { addr, .. } =
                    &mut mf.blocks[b].insts[k]
                {
                    // (An access another increment of `u` has taken stays so.)
                    if addr.base == Base::Reg(u) {
                        addr.base = Base::Reg(d);
                        addr.off -= inc;
                    }
                }
            }
        }
        let hoisted: Vec<MInst> = chosen
            .iter()
            .map(|c| {
                let mut i = mf.blocks[s].insts[c.at].clone();
                // The start of a moved access as an anchor plus an offset holds
                // only in the block it was selected into.
                if let MInst::Load { addr, .. } = &mut i {
                    addr.sym = None;
                }
                i
            })
            .collect();
        let mut k = 0;
        mf.blocks[s].insts.retain(|_| {
            k += 1;
            !chosen.iter().any(|c| c.at == k - 1)
        });
        let at = first_terminator(&mf.blocks[region.head].insts);
        mf.blocks[region.head].insts.splice(at..at, hoisted);
        moved += take;
    }
    moved
}

/// The index of the first of a block's terminators (its end when it has none).
fn first_terminator(code: &[MInst]) -> usize {
    code.iter()
        .position(MInst::is_terminator)
        .unwrap_or(code.len())
}

/// The region from the immediate dominator of `s` to `s`, when `s` is a join of
/// an innermost loop that such a region reaches (see the module doc).
fn region_of(
    mf: &MFunction,
    info: &LoopInfo,
    dt: &ir::analysis::DomTree<MBlock>,
    s: MBlock,
) -> Option<Region> {
    let l = info.innermost(s)?;
    let header = info.loops[l].header;
    if s == header || info.preds[s.index()].len() < 2 {
        return None;
    }
    let head = dt.idom(s)?;
    if info.innermost(head) != Some(l) {
        return None;
    }
    let mut between: Vec<MBlock> = Vec::new();
    let mut seen: FxHashSet<MBlock> = [s, head].into_iter().collect();
    let mut stack: Vec<MBlock> = info.preds[s.index()].to_vec();
    while let Some(x) = stack.pop() {
        if !seen.insert(x) {
            continue;
        }
        if x == header || info.innermost(x) != Some(l) || between.len() == MAX_BETWEEN {
            return None;
        }
        between.push(x);
        stack.extend(info.preds[x.index()].iter().copied());
    }
    // No cycle between: a topological order from `head` (Kahn) reaches them all.
    let inside = |b: MBlock| between.contains(&b);
    let mut indegree: FxHashMap<MBlock, usize> = FxHashMap::default();
    for &x in &between {
        let n = info.preds[x.index()].iter().filter(|&&p| inside(p)).count();
        indegree.insert(x, n);
    }
    let mut ready: Vec<MBlock> = mf
        .succs(head)
        .into_iter()
        .filter(|&x| inside(x) && indegree[&x] == 0)
        .collect();
    let mut ordered = 0;
    while let Some(x) = ready.pop() {
        ordered += 1;
        for y in mf.succs(x) {
            if let Some(n) = indegree.get_mut(&y) {
                *n -= 1;
                if *n == 0 {
                    ready.push(y);
                }
            }
        }
    }
    if ordered != between.len() {
        return None;
    }
    let mut side_exits = Vec::new();
    for x in std::iter::once(head).chain(between.iter().copied()) {
        for y in mf.succs(x) {
            if y != s && !inside(y) && !side_exits.contains(&y) {
                side_exits.push(y);
            }
        }
    }
    Some(Region {
        head,
        between,
        side_exits,
    })
}

/// What a region's blocks do, for the legality of moving one instruction.
struct RegionFacts<'a> {
    region: &'a Region,
    /// Definitions of every virtual register ([`MFunction::vreg_defs`]).
    defs: &'a [u32],
    partners: &'a FxHashMap<Reg, Vec<Reg>>,
    /// Block liveness, when the region has side exits.
    live: Option<&'a Liveness>,
}

/// A memory access of an instruction, compared across blocks (no anchor).
fn access(i: &MInst) -> Option<MemAccess> {
    let mut m = u74::timing(i).mem?;
    m.sym = None;
    Some(m)
}

/// Whether `i` may move at all: arithmetic, a constant, an address or a load.
fn movable_kind(i: &MInst) -> bool {
    matches!(
        i,
        MInst::Alu { .. }
            | MInst::AluImm { .. }
            | MInst::Li { .. }
            | MInst::La { .. }
            | MInst::FrameAddr { .. }
            | MInst::FAlu { .. }
            | MInst::FCmp { .. }
            | MInst::Cvt { .. }
            | MInst::Load { .. }
    )
}

/// `addi d, u, c` (64-bit: a pointer increment) as `(d, u, c)`.
fn increment(i: &MInst) -> Option<(Reg, Reg, i64)> {
    match *i {
        MInst::AluImm {
            op: AluImmOp::Addi,
            rd,
            rs1,
            imm,
        } if rd != rs1 => Some((rd, rs1, imm as i64)),
        _ => None,
    }
}

/// Whether `i` reads `r` only as the base of its address (and `off - c` fits).
fn rewritable(i: &MInst, r: Reg, c: i64) -> bool {
    let (addr, other) = match i {
        MInst::Load { rd, addr, .. } => (addr, *rd),
        MInst::Store { src, addr, .. } => (addr, *src),
        _ => return false,
    };
    addr.base == Base::Reg(r) && other != r && fits_imm12(addr.off - c)
}

impl RegionFacts<'_> {
    /// The instructions of join `s` that may move into the region's head, in
    /// order, each with the rewrites its motion needs.
    fn candidates(&self, mf: &MFunction, s: MBlock) -> Vec<Candidate> {
        let region = self.region;
        let between = || region.between.iter().map(|&b| (b, &mf.blocks[b].insts));
        if between().any(|(_, code)| code.iter().any(MInst::is_call)) {
            return Vec::new();
        }
        // What the blocks between write and read, and `head`'s branches read.
        let mut written: FxHashSet<Reg> = FxHashSet::default();
        let mut read: FxHashSet<Reg> = FxHashSet::default();
        let mut stores: Vec<MemAccess> = Vec::new();
        for (_, code) in between() {
            for i in code {
                i.for_each_def(|d| {
                    written.insert(d);
                });
                i.for_each_use(|u| {
                    read.insert(u);
                });
                if let (MInst::Store { .. }, Some(m)) = (i, access(i)) {
                    stores.push(m);
                }
            }
        }
        let head = &mf.blocks[region.head].insts;
        for i in &head[first_terminator(head)..] {
            i.for_each_use(|u| {
                read.insert(u);
            });
        }
        let speculative = !region.side_exits.is_empty();
        let code = &mf.blocks[s].insts;
        let mut out = Vec::new();
        // What the instructions of `s` that stay write and read before each one.
        let mut stay_written: FxHashSet<Reg> = FxHashSet::default();
        let mut stay_read: FxHashSet<Reg> = FxHashSet::default();
        let mut stay_stores: Vec<MemAccess> = Vec::new();
        let mut stayed: Vec<usize> = Vec::new();
        for (k, i) in code.iter().enumerate().take(LOOKAHEAD) {
            if i.is_terminator() || i.is_call() {
                break;
            }
            let rewrites = self.legal(
                mf,
                s,
                i,
                (&written, &read, &stores),
                (&stay_written, &stay_read, &stay_stores, &stayed),
                speculative,
            );
            match rewrites {
                Some(rewrites) => {
                    out.push(Candidate { at: k, rewrites });
                    if out.len() == MAX_MOVED {
                        break;
                    }
                }
                None => {
                    i.for_each_def(|d| {
                        stay_written.insert(d);
                    });
                    i.for_each_use(|u| {
                        stay_read.insert(u);
                    });
                    if let (MInst::Store { .. }, Some(m)) = (i, access(i)) {
                        stay_stores.push(m);
                    }
                    stayed.push(k);
                }
            }
        }
        out
    }

    /// Whether `i` (of join `s`) may move into the head past the blocks between
    /// (`written`, `read`, `stores`) and the instructions of `s` that stay before
    /// it (`stay_*`, `stayed` their indices): the accesses to rewrite if so.
    ///
    /// The liveness asked about side exits is that of the function before any
    /// motion: a moved result is defined once, so only its own motion changes
    /// where it is live, and only within the region it moved across, which holds
    /// no other region's side exit (every predecessor of a block between is in
    /// the region).
    #[allow(clippy::type_complexity)]
    fn legal(
        &self,
        mf: &MFunction,
        s: MBlock,
        i: &MInst,
        (written, read, stores): (&FxHashSet<Reg>, &FxHashSet<Reg>, &[MemAccess]),
        (stay_written, stay_read, stay_stores, stayed): (
            &FxHashSet<Reg>,
            &FxHashSet<Reg>,
            &[MemAccess],
            &[usize],
        ),
        speculative: bool,
    ) -> Option<Vec<(MBlock, usize)>> {
        if !movable_kind(i) || (speculative && !speculatable(i)) {
            return None;
        }
        let mut defs = Vec::new();
        i.for_each_def(|d| defs.push(d));
        let [d] = defs[..] else {
            return None;
        };
        let clear = |r: Reg| !written.contains(&r) && !stay_written.contains(&r);
        if !d.is_virtual() || !clear(d) || read.contains(&d) || stay_read.contains(&d) {
            return None;
        }
        let mut uses_ok = true;
        i.for_each_use(|u| uses_ok &= (u.is_virtual() || u == ZERO) && clear(u));
        if !uses_ok {
            return None;
        }
        if let Some(m) = access(i) {
            if stores.iter().chain(stay_stores).any(|st| !m.disjoint(st)) {
                return None;
            }
        }
        let live_into_exit = |r: Reg| {
            self.live.is_some_and(|live| {
                self.region
                    .side_exits
                    .iter()
                    .any(|e| live.live_in(e.index()).any(|x| x == r.0 as usize))
            })
        };
        if speculative && (self.defs[d.vindex()] != 1 || live_into_exit(d)) {
            return None;
        }
        // The reads of `d`'s copy partners before `i`'s old place.
        let mut rewrites = Vec::new();
        for &c in self.partners.get(&d).map_or(&[][..], |v| &v[..]) {
            if live_into_exit(c) {
                return None;
            }
            if !read.contains(&c) && !stay_read.contains(&c) {
                continue;
            }
            // Only an increment's operand can be read through its result.
            let (_, u, inc) = increment(i)?;
            if u != c || self.head_branch_reads(mf, c) {
                return None;
            }
            let reads = self.reads_of(mf, s, stayed, c);
            if !reads
                .iter()
                .all(|&(b, k)| rewritable(&mf.blocks[b].insts[k], c, inc))
            {
                return None;
            }
            rewrites.extend(reads);
        }
        // An increment whose operand is read as an address between is rewritten
        // even without a copy: the operand then dies in the head.
        if let Some((_, u, inc)) = increment(i) {
            if rewrites.is_empty() && (read.contains(&u) || stay_read.contains(&u)) {
                let reads = self.reads_of(mf, s, stayed, u);
                if !self.head_branch_reads(mf, u)
                    && reads
                        .iter()
                        .all(|&(b, k)| rewritable(&mf.blocks[b].insts[k], u, inc))
                {
                    rewrites = reads;
                }
            }
        }
        Some(rewrites)
    }

    /// Whether the head's branches read `r`.
    fn head_branch_reads(&self, mf: &MFunction, r: Reg) -> bool {
        let head = &mf.blocks[self.region.head].insts;
        let mut reads = false;
        for i in &head[first_terminator(head)..] {
            i.for_each_use(|u| reads |= u == r);
        }
        reads
    }

    /// The instructions between, and those of `s` at `stayed`, that read `r`.
    fn reads_of(
        &self,
        mf: &MFunction,
        s: MBlock,
        stayed: &[usize],
        r: Reg,
    ) -> Vec<(MBlock, usize)> {
        let mut out = Vec::new();
        let mut note = |b: MBlock, k: usize, i: &MInst| {
            let mut reads = false;
            i.for_each_use(|u| reads |= u == r);
            if reads {
                out.push((b, k));
            }
        };
        for &b in &self.region.between {
            for (k, i) in mf.blocks[b].insts.iter().enumerate() {
                note(b, k, i);
            }
        }
        for &k in stayed {
            note(s, k, &mf.blocks[s].insts[k]);
        }
        out
    }
}

/// The code of a block for the timing model: without a final jump after a
/// conditional branch or alone (placement makes most of them fall through).
fn timed(code: &[MInst]) -> &[MInst] {
    match code.last() {
        Some(MInst::Jump { .. }) => &code[..code.len() - 1],
        _ => code,
    }
}

/// The code that may run just before block `b` in one stretch, as the timing
/// model sees it: nothing (entered by a branch), and the body of each
/// predecessor in the same loop or deeper that ends in a jump to `b` alone, which
/// placement lets fall through into `b` (the bench's model times such a run of
/// code as one translation block, the core overlaps it anyway).
fn contexts<'a>(mf: &'a MFunction, info: &LoopInfo, b: MBlock) -> Vec<&'a [MInst]> {
    let mut out: Vec<&[MInst]> = vec![&[]];
    for &p in &info.preds[b.index()] {
        let code = &mf.blocks[p].insts;
        let falls = matches!(code.last(), Some(MInst::Jump { target }) if *target == b)
            && first_terminator(code) == code.len() - 1;
        if p != b && falls && info.depth[p.index()] >= info.depth[b.index()] {
            out.push(&code[..code.len() - 1]);
        }
    }
    out
}

/// How many of `candidates` (of join `s`, in order) to move into the region's
/// head: the prefix with which the head and `s`, each scheduled, take the fewest
/// cycles summed over the code that may run before each ([`contexts`]), while
/// neither takes longer after any of it (and so no path gets slower); 0 when
/// none gains.
fn best_prefix(
    mf: &MFunction,
    info: &LoopInfo,
    region: &Region,
    s: MBlock,
    candidates: &[Candidate],
    is_float: &dyn Fn(Reg) -> bool,
) -> usize {
    if candidates.is_empty() {
        return 0;
    }
    let head = timed(&mf.blocks[region.head].insts);
    let join = timed(&mf.blocks[s].insts);
    let split = first_terminator(head);
    // The model's state after each context, issued once for every prefix tried
    // (and whether the context is empty).
    let states = |before: Vec<&[MInst]>| -> Vec<(Machine, bool)> {
        before
            .into_iter()
            .map(|c| {
                let mut m = Machine::default();
                for i in c {
                    m.issue(&u74::timing_with(i, is_float));
                }
                (m, c.is_empty())
            })
            .collect()
    };
    let (head_before, join_before) = (
        states(contexts(mf, info, region.head)),
        states(contexts(mf, info, s)),
    );
    // Cycles of `code` after each context: those of the context followed by
    // `code` from a fresh start ([`u74::cycles_with`] of the two).
    let after = |before: &[(Machine, bool)], code: &[MInst]| -> Vec<u64> {
        let t: Vec<Timing> = code.iter().map(|i| u74::timing_with(i, is_float)).collect();
        before
            .iter()
            .map(|(m, empty)| {
                if *empty && t.is_empty() {
                    return 0;
                }
                let mut m = m.clone();
                for x in &t {
                    m.issue(x);
                }
                m.end()
            })
            .collect()
    };
    // The head with `moved` added before its branch, and the join without them,
    // each scheduled: their cycles after each context.
    let head_cost = |moved: &[Candidate]| {
        let mut nh: Vec<MInst> = head[..split].to_vec();
        nh.extend(moved.iter().map(|c| join[c.at].clone()));
        nh.extend_from_slice(&head[split..]);
        schedule_unguarded(&mut nh, is_float);
        after(&head_before, &nh)
    };
    let join_cost = |moved: &[Candidate]| {
        let mut ns: Vec<MInst> = join
            .iter()
            .enumerate()
            .filter(|(k, _)| !moved.iter().any(|c| c.at == *k))
            .map(|(_, i)| i.clone())
            .collect();
        schedule_unguarded(&mut ns, is_float);
        after(&join_before, &ns)
    };
    let (h0, s0) = (head_cost(&[]), join_cost(&[]));
    let total = |h: &[u64], s: &[u64]| h.iter().chain(s).sum::<u64>();
    let no_worse = |a: &[u64], b: &[u64]| a.iter().zip(b).all(|(x, y)| x <= y);
    let mut best = (total(&h0, &s0), 0);
    for take in 1..=candidates.len() {
        let moved = &candidates[..take];
        let h = head_cost(moved);
        // A head made longer after some context rules the prefix out, whatever
        // the join gains: its schedule is not needed.
        if !no_worse(&h, &h0) {
            continue;
        }
        let s = join_cost(moved);
        let t = total(&h, &s);
        if t < best.0 && no_worse(&s, &s0) {
            best = (t, take);
        }
    }
    best.1
}
