//! Instruction scheduling for the SiFive U74: top-down list scheduling of each block
//! after register allocation and frame layout (the place of GCC's `sched2` and of
//! LLVM's post-RA machine scheduler), driven by the timing model of [`crate::u74`].
//!
//! Algorithm (list scheduling, Gibbons and Muchnick, "Efficient Instruction
//! Scheduling for a Pipelined Architecture", 1986; the cycle-driven form of Muchnick,
//! "Advanced Compiler Design and Implementation", §17.1):
//!
//! It runs twice: over virtual registers before allocation ([`run_before_allocation`],
//! where only true dependences constrain the order, guarded so that register
//! pressure stays allocatable, or, in a loop, goes beyond that only as far as the
//! cycles it saves pay for the spills it costs), and over physical registers after allocation and
//! frame layout ([`run`], which also places spill code, prologue and epilogue).
//!
//! 1. A block is cut into regions at calls (nothing moves across a call) and before
//!    its terminators (they stay last); long regions are cut every [`WINDOW`]
//!    instructions so the quadratic dependence graph stays small.
//! 2. The dependence graph of a region has an edge `i -> j` (`i` before `j`) for a
//!    register read after write (latency: the producer's, early or late by how `j`
//!    reads it), write after read and write after write (latency 0: order only), two
//!    memory accesses of which one is a store unless both have the same base
//!    value and disjoint bytes, and a memory access against a write of `sp`. An
//!    access through a pointer just incremented (`addi r, r, c`) has no edge from
//!    the increment: it may go above it with its offset adjusted; nor has an
//!    access through a pointer incremented later an edge to that increment, which
//!    may then go above the access ([`crate::increments`], GCC's breaking of
//!    mem/inc dependences).
//! 3. Priority is the height: the longest latency path to the region's end,
//!    counting the registers the rest of the block reads. When an unpipelined
//!    unit (a divider) has several instructions in the region, the list
//!    scheduling also runs with heights raised by the unit's serial order
//!    ([`crate::unit_order`], Schrage's rule), and the model judges both.
//! 4. Repeatedly, among the instructions whose predecessors are all placed, the one
//!    that would issue earliest on the modelled core goes next (ties: greater
//!    height, then original order). Issuing earliest lets a second instruction pair
//!    with the first and fills the shadow of loads and multiplies. A second pass
//!    breaks the ties left by height in favour of instructions that only one pipe
//!    takes, ahead of ALU operations that either pipe takes, and in a loop of one
//!    block a third prefers them even to greater height ([`TieBreak`]); the order
//!    the model finds fastest is the candidate.
//! 5. The new order is kept only if the model says the region (with what follows
//!    it in the block) runs in fewer cycles; otherwise the block is left as it was.
//!    A loop of one block whose body is one region is judged, and started, in its
//!    steady state: from the end of the previous iteration, with its results still
//!    in flight. Before allocation such a loop's back edge is a block of copies
//!    into its parameters ([`back_edge_copies`]), which the model takes as free
//!    (the allocator coalesces them) and which carry each value's readiness to
//!    the parameter it feeds.
//!
//! 6. After allocation, each block is also scheduled with the registers it reuses
//!    renamed to ones it leaves free ([`crate::rename`], GCC's `regrename`), which
//!    breaks the write-after-read and write-after-write dependences the
//!    allocator's reuse created; the renamed version is kept when the model says
//!    it runs in fewer cycles.
//!
//! What it does not do: move instructions across blocks or calls, or overlap
//! loop iterations (software pipelining).

use rustc_hash::FxHashMap;

use rustc_hash::FxHashSet;

use crate::increments::Increments;
use crate::liveness::{tracked, LiveRegs, Liveness};
use crate::mir::{MBlock, MFunction, MInst, Reg, RegClass, SP};
use crate::region_regs::RegionRegs;
use crate::rename::Renamer;
use crate::u74::{self, Machine, Timing, UseKind};

/// Longest run of instructions scheduled as one region. The dependence graph
/// of a region is quadratic in its length; a longer window lets independent
/// chains of a long block overlap (two pointer chases, an unrolled body of
/// more than 64 instructions, which at 64 was cut into two regions judged
/// apart and, in a loop, lost its steady-state scheduling). 128 against 64:
/// 38_light2d 11.8% faster, integer-divide-optimization-3 4.5%; 96 kept some
/// cuts that cost (stencil_params, 31_many_indirections).
pub const WINDOW: usize = 128;

/// Register pressure (values live at once, per file) that the allocator handles
/// without spilling in practice; before allocation a new order may raise the
/// pressure of a region up to these, never beyond what it was when already above.
/// 26 of the 27 allocatable integer registers (28 of 32 float): 22 kept an
/// unroll-and-jammed matrix loop (two accumulators, loads of two columns) from
/// issuing its loads early (U74 estimate 0.573 -> 0.466 of gcc on matmul), and
/// no other case of the suite changes. In an innermost loop, registers live
/// throughout it that it never reads are not counted against these (see
/// [`idle_through_innermost_loops`]).
const PRESSURE_LIMIT: [usize; 2] = [26, 28];

/// When the limit held a candidate back, the list scheduling runs again with the
/// limit raised by each of these: the registers an order needs beyond the limit
/// are values the allocator spills, and an order that needs them may still pay
/// (a long chain of loads, multiplies and adds through one temporary, kept by the
/// limit from overlapping the next, waits on every link).
const RAISED_LIMITS: [usize; 3] = [2, 4, 8];

/// What the model charges an order per register it needs beyond the limit: the
/// value spilled for it costs a store and a reload (in a loop, a reload per trip),
/// about one issue slot each and the reload's latency (GCC's pressure-sensitive
/// scheduler, `-fsched-pressure`, likewise weighs the excess pressure of a
/// candidate against its gain in cycles).
const SPILL_CYCLES: u64 = 4;

/// Schedules every block of `mf` after register allocation; returns how many
/// regions changed order.
///
/// Each block is also scheduled with its reused registers renamed
/// ([`crate::rename`], GCC's `regrename`), and that version is kept when the
/// model says it runs in fewer cycles.
///
/// Each block is scheduled alone, on up to `jobs` threads ([`ir::parallel`]; the
/// result does not depend on their number).
pub fn run(mf: &mut MFunction, jobs: usize) -> usize {
    let renamer = Renamer::new(mf);
    let is_float = |r: Reg| r.phys_class() == RegClass::Float;
    // Each block is scheduled alone: they go on several threads at once.
    let mut blocks: Vec<(usize, &mut Vec<MInst>, usize)> = mf
        .blocks
        .values_mut()
        .enumerate()
        .map(|(k, b)| (k, &mut b.insts, 0))
        .collect();
    ir::parallel::for_each_mut(
        &mut blocks,
        jobs,
        |(_, insts, _)| insts.len(),
        |(k, insts, changed)| {
            let k = *k;
            let self_loop = insts
                .iter()
                .any(|i| i.branch_target() == Some(MBlock(k as u32)));
            let cost = |code: &[MInst]| {
                if self_loop {
                    u74::steady_state_cycles(code, &is_float)
                } else {
                    u74::cycles_with(code, &is_float)
                }
            };
            let mut renamed = insts.clone();
            let renamed_some = renamer.rename_block(k, &mut renamed) > 0;
            *changed += schedule_block_as(insts, self_loop);
            if renamed_some {
                schedule_block_as(&mut renamed, self_loop);
                if cost(&renamed) < cost(insts) {
                    **insts = renamed;
                    *changed += 1;
                }
            }
        },
    );
    blocks.iter().map(|(_, _, changed)| changed).sum()
}

/// Schedules every block of `mf` over virtual registers, before allocation, where
/// no register reuse constrains the order yet; a region's new order is kept only if
/// it does not raise register pressure past [`PRESSURE_LIMIT`], or, in a loop, if
/// the cycles it saves exceed [`SPILL_CYCLES`] per register beyond (up to the
/// [`RAISED_LIMITS`]). Returns how many
/// regions changed order. Each block is scheduled alone, on up to `jobs` threads
/// ([`ir::parallel`]; the result does not depend on their number).
pub fn run_before_allocation(mf: &mut MFunction, live: &Liveness, jobs: usize) -> usize {
    run_before_allocation_within(mf, live, PRESSURE_LIMIT, &RAISED_LIMITS, jobs)
}

fn run_before_allocation_within(
    mf: &mut MFunction,
    live: &Liveness,
    limit: [usize; 2],
    raised: &[usize],
    jobs: usize,
) -> usize {
    let copies = copy_partners(mf);
    let classes = mf.vreg_class.clone();
    let class_index = move |r: Reg| {
        let class = if r.is_virtual() {
            classes[r.vindex()]
        } else {
            r.phys_class()
        };
        usize::from(class == RegClass::Float)
    };
    let counts = live.loop_counts(&class_index);
    let idle = idle_through_innermost_loops(mf, live, &class_index);
    let in_loop: Vec<bool> = (0..mf.blocks.len())
        .map(|b| live.loops().innermost(MBlock(b as u32)).is_some())
        .collect();
    /// One block's part of the schedule: its number, its code, its back edge's
    /// copies ([`back_edge_copies`]) and how many of its regions changed.
    struct Part<'a> {
        b: usize,
        insts: &'a mut Vec<MInst>,
        back_edge: Option<Vec<(Reg, Reg)>>,
        changed: usize,
    }
    // Per block number, for the blocks in the layout: its back edge's copies.
    let mut back_edges = vec![None; mf.blocks.len()];
    for &b in &mf.layout {
        back_edges[b.index()] = Some(back_edge_copies(mf, b));
    }
    // Each block is scheduled alone: they go on several threads at once.
    let mut parts: Vec<Part<'_>> = mf
        .blocks
        .values_mut()
        .zip(back_edges)
        .enumerate()
        .filter_map(|(b, (block, back_edge))| {
            Some(Part {
                b,
                insts: &mut block.insts,
                back_edge: back_edge?,
                changed: 0,
            })
        })
        .collect();
    ir::parallel::for_each_mut(
        &mut parts,
        jobs,
        |p| p.insts.len(),
        |Part {
             b,
             insts,
             back_edge,
             changed,
         }| {
            let b = *b;
            let block_limit = [limit[0] + idle[b][0], limit[1] + idle[b][1]];
            // Beyond the limit only in loops, where the gain and a spill's reloads
            // both come once per trip; code that runs once gains little, and the
            // registers it takes beyond the limit may cost saves in the prologue,
            // which the model does not see.
            let raised = if in_loop[b] { raised } else { &[][..] };
            // Two instructions rarely gain from reordering; skipping such regions
            // keeps the liveness walk below off the many tiny blocks of branchy code.
            let regions: Vec<_> = regions(insts)
                .into_iter()
                .filter(|&(start, end, _)| end - start >= 3)
                .collect();
            if regions.is_empty() {
                return;
            }
            // What is live after each region's end, walking the block backwards once.
            let mut after: Vec<LiveAfter> = Vec::with_capacity(regions.len());
            let mut cur = live.live_out_regs(b, &counts, &class_index);
            let mut count = cur.count(&class_index);
            let mut pos = insts.len();
            for &(start, end, _) in regions.iter().rev() {
                while pos > end {
                    pos -= 1;
                    step_back(&mut cur, &mut count, &insts[pos], &class_index);
                }
                after.push(LiveAfter::of(&insts[start..end], &cur, count));
            }
            after.reverse();
            let is_float = |r: Reg| class_index(r) == 1;
            // A loop of this one block, whose body is one region, is scheduled for
            // its steady state, as after allocation.
            let whole = matches!(regions.as_slice(), [(0, _, t)] if *t == insts.len());
            let steady = back_edge.as_deref().filter(|_| whole);
            for (k, &(start, end, tail_end)) in regions.iter().enumerate() {
                let pressure =
                    Pressure::new(&insts[start..end], &after[k], &class_index, block_limit);
                let region = (start, end, tail_end);
                let guard = Some((pressure, raised));
                if schedule_region(insts, region, &is_float, &copies, guard, steady) {
                    *changed += 1;
                }
            }
        },
    );
    parts.iter().map(|p| p.changed).sum()
}

/// When block `b` is a loop of its own, the copies its back edge makes, as
/// `(destination, source)`: none when it branches to itself, or those of the
/// block of copies that its edge back to itself was split into (out of SSA
/// puts the copies into a loop's parameters there, and the allocator coalesces
/// them). `None` when `b` is not such a loop.
fn back_edge_copies(mf: &MFunction, b: MBlock) -> Option<Vec<(Reg, Reg)>> {
    for t in mf.succs(b) {
        if t == b {
            return Some(Vec::new());
        }
        let Some((moves, target)) = crate::mir::copies_then_jump(&mf.blocks[t].insts) else {
            continue;
        };
        if target == b {
            let copies = moves.iter().filter_map(|i| match *i {
                MInst::Mv { rd, rs } => Some((rd, rs)),
                _ => None,
            });
            return Some(copies.collect());
        }
    }
    None
}

/// How far up the loop forest [`idle_through_innermost_loops`] looks for loops a
/// register is live throughout: deeper nests keep the plain limit above that.
const IDLE_ANCESTORS: usize = 16;

/// Per block (by number): how many registers of each class are live throughout
/// the block's loop, when that is an innermost loop, without being read or
/// written anywhere in it. Such a value competes for no register inside the loop:
/// its spill cost counts only its uses outside (weighted by their shallower
/// depth), so when registers run short the allocator spills it around the loop
/// (its reloads are outside) rather than anything the loop reads. The pressure
/// limit of the loop's blocks is raised by this many. Blocks in loops with inner
/// loops, and outside loops, get zero.
fn idle_through_innermost_loops(
    mf: &MFunction,
    live: &Liveness,
    class: &dyn Fn(Reg) -> usize,
) -> Vec<[usize; 2]> {
    let info = live.loops();
    let mut idle = vec![[0, 0]; mf.blocks.len()];
    let mut has_inner = vec![false; info.loops.len()];
    for l in &info.loops {
        if let Some(p) = l.parent {
            has_inner[p] = true;
        }
    }
    let mut blocks_of: Vec<Vec<MBlock>> = vec![Vec::new(); info.loops.len()];
    for &b in &mf.layout {
        if let Some(l) = info.innermost(b) {
            if !has_inner[l] {
                blocks_of[l].push(b);
            }
        }
    }
    for (l, blocks) in blocks_of.iter().enumerate() {
        if blocks.is_empty() {
            continue;
        }
        let mut referenced: FxHashSet<u32> = FxHashSet::default();
        for &b in blocks {
            for i in &mf.blocks[b].insts {
                i.for_each_def(|r| {
                    referenced.insert(r.0);
                });
                i.for_each_use(|r| {
                    referenced.insert(r.0);
                });
            }
        }
        let mut n = [0, 0];
        let mut around = Some(l);
        for _ in 0..IDLE_ANCESTORS {
            let Some(x) = around else { break };
            for r in live.loop_live(x).iter() {
                if !referenced.contains(&(r as u32)) {
                    n[class(Reg(r as u32))] += 1;
                }
            }
            around = info.loops[x].parent;
        }
        for &b in blocks {
            idle[b.index()] = n;
        }
    }
    idle
}

/// `live` (holding `count` registers of each file) before `i`, given `live` after it.
fn step_back(live: &mut LiveRegs, count: &mut [usize; 2], i: &MInst, class: &dyn Fn(Reg) -> usize) {
    i.for_each_def(|r| {
        if tracked(r) && live.contains(r.0 as usize) {
            live.remove(r.0 as usize);
            count[class(r)] -= 1;
        }
    });
    i.for_each_use(|r| {
        if tracked(r) && !live.contains(r.0 as usize) {
            live.insert(r.0 as usize);
            count[class(r)] += 1;
        }
    });
}

/// What is live after a region, as far as scheduling it needs to know: which of
/// the registers it mentions, and how many registers of each file in all. Its
/// size is the region's, not the live set's: after a block of many loads, thousands
/// of values may be live, and copying that set per region would be quadratic.
#[derive(Default)]
struct LiveAfter {
    mentioned: FxHashSet<u32>,
    count: [usize; 2],
}

impl LiveAfter {
    fn of(region: &[MInst], live: &LiveRegs, count: [usize; 2]) -> Self {
        let mut mentioned = FxHashSet::default();
        let mut note = |r: Reg| {
            if tracked(r) && live.contains(r.0 as usize) {
                mentioned.insert(r.0);
            }
        };
        for i in region {
            i.for_each_def(&mut note);
            i.for_each_use(&mut note);
        }
        LiveAfter { mentioned, count }
    }

    fn contains(&self, r: Reg) -> bool {
        self.mentioned.contains(&r.0)
    }
}

/// The registers of `code` live before it, and how many registers of each file,
/// given what is live after it.
fn live_before(
    code: &[MInst],
    after: &LiveAfter,
    class: &dyn Fn(Reg) -> usize,
) -> (FxHashSet<u32>, [usize; 2]) {
    let mut live = after.mentioned.clone();
    let mut count = after.count;
    for i in code.iter().rev() {
        step_back_local(&mut live, &mut count, i, class);
    }
    (live, count)
}

/// [`step_back`] over the registers of one region.
fn step_back_local(
    live: &mut FxHashSet<u32>,
    count: &mut [usize; 2],
    i: &MInst,
    class: &dyn Fn(Reg) -> usize,
) {
    i.for_each_def(|r| {
        if tracked(r) && live.remove(&r.0) {
            count[class(r)] -= 1;
        }
    });
    i.for_each_use(|r| {
        if tracked(r) && live.insert(r.0) {
            count[class(r)] += 1;
        }
    });
}

/// The most registers of each file live at once within `code`, given what is live
/// after it.
fn max_pressure(code: &[MInst], after: &LiveAfter, class: &dyn Fn(Reg) -> usize) -> [usize; 2] {
    let mut live = after.mentioned.clone();
    let mut count = after.count;
    let mut max = count;
    for i in code.iter().rev() {
        step_back_local(&mut live, &mut count, i, class);
        max = [max[0].max(count[0]), max[1].max(count[1])];
    }
    max
}

/// The few registers one instruction reads, kills or makes live.
type RegList = smallvec::SmallVec<[Reg; 4]>;

/// Register pressure followed while a region is scheduled top-down over virtual
/// registers: which registers are live, and how many uses of each the region has
/// left to place.
#[derive(Clone)]
struct Pressure<'a> {
    class: &'a dyn Fn(Reg) -> usize,
    live_after: &'a LiveAfter,
    /// Of the region's registers, those live at the current point.
    live: FxHashSet<u32>,
    remaining: FxHashMap<u32, usize>,
    count: [usize; 2],
    /// Per file: the limit asked for, or the region's own pressure if higher.
    limit: [usize; 2],
}

impl<'a> Pressure<'a> {
    fn new(
        region: &[MInst],
        live_after: &'a LiveAfter,
        class: &'a dyn Fn(Reg) -> usize,
        limit: [usize; 2],
    ) -> Self {
        let (live, count) = live_before(region, live_after, class);
        let mut remaining = FxHashMap::default();
        for i in region {
            i.for_each_use(|r| {
                if tracked(r) {
                    *remaining.entry(r.0).or_insert(0) += 1;
                }
            });
        }
        let own = max_pressure(region, live_after, class);
        Pressure {
            class,
            live_after,
            live,
            remaining,
            count,
            limit: [own[0].max(limit[0]), own[1].max(limit[1])],
        }
    }

    /// The register counts after placing `i` next, and the registers it kills and
    /// makes live.
    fn effect(&self, i: &MInst) -> ([usize; 2], RegList, RegList) {
        let mut uses = RegList::new();
        i.for_each_use(|r| {
            if tracked(r) {
                uses.push(r)
            }
        });
        let mut count = self.count;
        let mut dies = RegList::new();
        for &r in &uses {
            if dies.contains(&r) || !self.live.contains(&r.0) {
                continue;
            }
            let here = uses.iter().filter(|&&u| u == r).count();
            if self.remaining.get(&r.0).copied().unwrap_or(0) <= here
                && !self.live_after.contains(r)
            {
                dies.push(r);
                count[(self.class)(r)] -= 1;
            }
        }
        let mut born = RegList::new();
        i.for_each_def(|d| {
            if !tracked(d) || born.contains(&d) {
                return;
            }
            let live_now = self.live.contains(&d.0) && !dies.contains(&d);
            let left = self.remaining.get(&d.0).copied().unwrap_or(0)
                - uses.iter().filter(|&&u| u == d).count();
            if !live_now && (left > 0 || self.live_after.contains(d)) {
                born.push(d);
                count[(self.class)(d)] += 1;
            }
        });
        (count, dies, born)
    }

    /// How many registers of each file `i` writes: placing it can raise the
    /// counts by at most these.
    fn most_born(&self, i: &MInst) -> [usize; 2] {
        let mut n = [0; 2];
        i.for_each_def(|d| {
            if tracked(d) {
                n[(self.class)(d)] += 1;
            }
        });
        n
    }

    /// Whether placing an instruction that writes `born` registers per file could
    /// take a file past its limit (when not, [`Self::exceeds`] is false: placing
    /// it makes at most that many registers live, and only kills others).
    fn may_exceed(&self, born: [usize; 2]) -> bool {
        (0..2).any(|c| self.count[c] + born[c] > self.limit[c])
    }

    /// Whether placing `i` next would take a register file past its limit.
    fn exceeds(&self, i: &MInst) -> bool {
        let (count, _, _) = self.effect(i);
        (0..2).any(|c| count[c] > self.limit[c] && count[c] > self.count[c])
    }

    fn place(&mut self, i: &MInst) {
        let (count, dies, born) = self.effect(i);
        i.for_each_use(|r| {
            if let Some(n) = self.remaining.get_mut(&r.0) {
                *n = n.saturating_sub(1);
            }
        });
        for r in dies {
            self.live.remove(&r.0);
        }
        for r in born {
            self.live.insert(r.0);
        }
        self.count = count;
    }
}

/// The regions of a block: `(start, end, tail_end)`, where `start..end` may be
/// reordered and `end..tail_end` is the code after it that the cost judges too.
fn regions(insts: &[MInst]) -> Vec<(usize, usize, usize)> {
    let body_end = insts
        .iter()
        .rposition(|i| !i.is_terminator())
        .map_or(0, |p| p + 1);
    let mut out = Vec::new();
    let mut start = 0;
    while start < body_end {
        let mut end = start;
        while end < body_end && !insts[end].is_call() && end - start < WINDOW {
            end += 1;
        }
        if end > start + 1 {
            // Up to the next call, at most a window on (looking no further: a long
            // block has many regions).
            let horizon = insts.len().min(end + WINDOW);
            let tail_end = insts[end..horizon]
                .iter()
                .position(MInst::is_call)
                .map_or(horizon, |p| end + p);
            out.push((start, end, tail_end));
        }
        start = if end < body_end && insts[end].is_call() {
            end + 1
        } else {
            end
        };
    }
    out
}

/// Schedules the regions of one block of allocated code; returns how many changed.
pub fn schedule_block(insts: &mut [MInst]) -> usize {
    schedule_block_as(insts, false)
}

/// [`schedule_block`] for a block that may branch to its own start (`self_loop`):
/// a loop of one block whose body is one region is scheduled for its steady
/// state, where the previous iteration's results are still in flight.
fn schedule_block_as(insts: &mut [MInst], self_loop: bool) -> usize {
    let is_float = |r: Reg| r.phys_class() == RegClass::Float;
    let regions = regions(insts);
    let whole = self_loop && matches!(regions.as_slice(), [(0, _, t)] if *t == insts.len());
    regions
        .into_iter()
        .filter(|&r| {
            let none = FxHashMap::default();
            schedule_region(insts, r, &is_float, &none, None, whole.then_some(&[]))
        })
        .count()
}

/// Schedules straight-line code over virtual registers as [`run_before_allocation`]
/// would without its register-pressure guard: for passes that weigh a code motion
/// by the cycles the scheduled result takes ([`crate::hoist_into_slots`]).
pub fn schedule_unguarded(insts: &mut [MInst], is_float: &dyn Fn(Reg) -> bool) {
    let none = FxHashMap::default();
    for r in regions(insts) {
        schedule_region(insts, r, is_float, &none, None, None);
    }
}

/// The dependence graph of a region: for each instruction, its successors with
/// latencies, and its number of predecessors.
#[derive(Debug, PartialEq)]
struct Graph {
    succs: Vec<Vec<(usize, u32)>>,
    npreds: Vec<usize>,
}

fn latency(producer: &Timing, consumer: &Timing, kind: UseKind) -> u32 {
    if consumer.late_alu || kind == UseKind::Late {
        producer.late
    } else {
        producer.early
    }
}

/// Copies of the function, `mv dst, src`, by source: before allocation, a write of
/// `src` must stay after the reads of `dst` that came first, or the two would
/// interfere and the allocator could no longer give them one register (a loop's
/// next value `i + 1` computed while `i` is still read costs a copy on the back
/// edge).
pub type CopyPartners = FxHashMap<Reg, Vec<Reg>>;

fn copy_partners(mf: &MFunction) -> CopyPartners {
    let mut m: CopyPartners = FxHashMap::default();
    for b in &mf.layout {
        for i in &mf.blocks[*b].insts {
            if let MInst::Mv { rd, rs } = *i {
                if rs.is_virtual() {
                    m.entry(rs).or_default().push(rd);
                }
            }
        }
    }
    m
}

/// Per register (by its [`RegionRegs`] number, below `regs`), a list of
/// instruction indices (newest first), all kept in one array: no allocation per
/// register.
struct RegLists {
    head: Vec<u32>,
    /// (index, next node or `u32::MAX`).
    nodes: Vec<(usize, u32)>,
}

impl RegLists {
    fn new(regs: usize, n: usize) -> Self {
        RegLists {
            head: vec![u32::MAX; regs],
            nodes: Vec::with_capacity(2 * n),
        }
    }

    /// Adds `i` to the list of register `r` (once: a repeat of the newest is
    /// dropped).
    fn push(&mut self, r: usize, i: usize) {
        let next = self.head[r];
        if next != u32::MAX && self.nodes[next as usize].0 == i {
            return;
        }
        self.head[r] = self.nodes.len() as u32;
        self.nodes.push((i, next));
    }

    /// Appends the list of register `r` to `out`.
    fn extend_into(&self, r: usize, out: &mut Vec<usize>) {
        let mut at = self.head[r];
        while at != u32::MAX {
            let (i, next) = self.nodes[at as usize];
            out.push(i);
            at = next;
        }
    }
}

fn build_graph(
    t: &[Timing],
    regs: &RegionRegs,
    copy_src: &[Option<Reg>],
    copies: &CopyPartners,
    inc: &Increments,
) -> Graph {
    build_graph_asking(t, regs, copy_src, copies, inc, false)
}

/// [`build_graph`]; with `every`, each instruction asks about every one before
/// it, not only those that can be its predecessors (for testing that they are
/// all).
fn build_graph_asking(
    t: &[Timing],
    regs: &RegionRegs,
    copy_src: &[Option<Reg>],
    copies: &CopyPartners,
    inc: &Increments,
    every: bool,
) -> Graph {
    let n = t.len();
    let mut succs = vec![Vec::new(); n];
    let mut npreds = vec![0; n];
    let writes_sp = |x: &Timing| x.defs.contains(&SP);
    // Per register (by local number): the last instruction so far that writes it,
    // so that each read finds the write it reads in constant time (a scan of the
    // instructions between each pair made the graph cubic in the region's length).
    let mentions = regs.len();
    let mut last_def: Vec<Option<usize>> = vec![None; mentions];
    // The local numbers of `j`'s reads and writes, in order.
    let mut use_regs: Vec<usize> = Vec::new();
    let mut def_regs: Vec<usize> = Vec::new();
    let mut read_from: Vec<Option<usize>> = Vec::new();
    let mut partners: Vec<&[Reg]> = Vec::new();
    // The instructions so far that read, and that write, each register; the
    // memory accesses so far (all, and stores), and the writes of `sp` that are
    // no access. Only they can precede an instruction in the graph, so each one
    // asks about those instead of every instruction before it (which made the
    // graph quadratic in the region's length for any code).
    let mut readers = RegLists::new(mentions, n);
    let mut writers = RegLists::new(mentions, n);
    let mut accesses: Vec<usize> = Vec::new();
    let mut stores: Vec<usize> = Vec::new();
    let mut sp_writes: Vec<usize> = Vec::new();
    let mut before: Vec<usize> = Vec::new();
    for j in 0..n {
        // For each read of `j`, in order: the last write of its register before `j`.
        use_regs.clear();
        use_regs.extend(t[j].uses.iter().map(|&(r, _)| regs.index(r)));
        def_regs.clear();
        def_regs.extend(t[j].defs.iter().map(|&r| regs.index(r)));
        read_from.clear();
        read_from.extend(use_regs.iter().map(|&k| last_def[k]));
        // The copies of each register `j` writes, looked up once for all `i`.
        partners.clear();
        partners.extend(
            t[j].defs
                .iter()
                .map(|r| copies.get(r).map_or(&[][..], Vec::as_slice)),
        );
        // Every `i` that the tests below can find a dependence on.
        before.clear();
        let broken = inc.breakable[j];
        before.extend(read_from.iter().flatten());
        before.extend(broken.and_then(|b| b.before_inc));
        for (&k, &partners) in def_regs.iter().zip(&partners) {
            readers.extend_into(k, &mut before);
            writers.extend_into(k, &mut before);
            for &p in partners {
                if let Some(k) = regs.get(p) {
                    readers.extend_into(k, &mut before);
                }
            }
        }
        if let Some(k) = copy_src[j].and_then(|src| regs.get(src)) {
            readers.extend_into(k, &mut before);
        }
        match &t[j].mem {
            Some(b) => {
                before.extend_from_slice(if b.store { &accesses } else { &stores });
                before.extend_from_slice(&sp_writes);
            }
            None if writes_sp(&t[j]) => before.extend_from_slice(&accesses),
            None => {}
        }
        before.sort_unstable();
        before.dedup();
        if every {
            before.clear();
            before.extend(0..j);
        }
        for &i in &before {
            let mut lat: Option<u32> = None;
            let mut need = |l: u32| lat = Some(lat.map_or(l, |x: u32| x.max(l)));
            for (k, &(r, kind)) in t[j].uses.iter().enumerate() {
                // Read after write, from the last write before `j`; an access may
                // instead read its base before an increment (and then needs the
                // definition before that).
                let from_increment = broken.is_some_and(|b| b.inc == i && b.base == r);
                if read_from[k] == Some(i) && !from_increment {
                    need(latency(&t[i], &t[j], kind));
                }
                if broken.is_some_and(|b| b.before_inc == Some(i) && b.base == r) {
                    need(latency(&t[i], &t[j], kind));
                }
            }
            let sinks_below = inc.sinkable[i].filter(|b| b.inc == j);
            for (r, &partners) in t[j].defs.iter().zip(&partners) {
                let read = t[i].uses.iter().any(|(u, _)| u == r);
                if (read && sinks_below.is_none_or(|b| b.base != *r)) || t[i].defs.contains(r) {
                    need(0);
                }
                for p in partners {
                    if t[i].uses.iter().any(|(u, _)| u == p) {
                        need(0);
                    }
                }
            }
            // A copy stays after the reads of its source that came first: its source
            // then dies at the copy, and both sides can share a register.
            if let Some(src) = copy_src[j] {
                if !copies.is_empty() && t[i].uses.iter().any(|(u, _)| *u == src) {
                    need(0);
                }
            }
            match (&t[i].mem, &t[j].mem) {
                (Some(a), Some(b)) if (a.store || b.store) && !inc.disjoint(i, j) => need(0),
                (Some(_), None) if writes_sp(&t[j]) => need(0),
                (None, Some(_)) if writes_sp(&t[i]) => need(0),
                _ => {}
            }
            if let Some(l) = lat {
                succs[i].push((j, l));
                npreds[j] += 1;
            }
        }
        for &k in &def_regs {
            last_def[k] = Some(j);
            writers.push(k, j);
        }
        for &k in &use_regs {
            readers.push(k, j);
        }
        match &t[j].mem {
            Some(m) => {
                accesses.push(j);
                if m.store {
                    stores.push(j);
                }
            }
            None if writes_sp(&t[j]) => sp_writes.push(j),
            None => {}
        }
    }
    Graph { succs, npreds }
}

/// Longest latency path from each instruction to the end of the region, where the
/// instructions after the region (`tail`) read what the region defines.
fn heights(t: &[Timing], g: &Graph, tail: &[Timing]) -> Vec<u32> {
    let n = t.len();
    let mut h = vec![0u32; n];
    for i in (0..n).rev() {
        let mut best = 0;
        for &(s, l) in &g.succs[i] {
            best = best.max(l + h[s]);
        }
        // Registers the tail reads from this instruction (if not redefined later).
        for &d in &t[i].defs {
            if t[i + 1..].iter().any(|k| k.defs.contains(&d)) {
                continue;
            }
            for c in tail {
                if let Some(&(_, kind)) = c.uses.iter().find(|(r, _)| *r == d) {
                    best = best.max(latency(&t[i], c, kind));
                }
                if c.defs.contains(&d) {
                    break;
                }
            }
        }
        h[i] = best;
    }
    h
}

/// The model's cycles of the region `t` in `order`, then its `tail`: once from
/// a fresh start, or per iteration of a loop whose back edge makes the
/// `steady_state` copies. (Reordering may change the offsets of accesses, which
/// the timing model does not look at: the timings taken before serve.)
fn model_cycles(
    t: &[Timing],
    tail: &[Timing],
    order: &[usize],
    steady_state: Option<&[(Reg, Reg)]>,
) -> u64 {
    let code: Vec<&Timing> = order.iter().map(|&k| &t[k]).chain(tail).collect();
    match steady_state {
        Some(copies) => u74::steady_state_cycles_of(&code, copies),
        None => u74::cycles_of(code),
    }
}

/// A lower bound on the cycles of `code`, a region and its tail, in any order
/// its dependence graph allows, issued from a fresh start ([`u74::cycles_of`]).
/// The code ends a cycle after its last issue cycle, two when its last
/// instruction is a `control` transfer (which goes last in every order). The
/// model issues in order and waits at least each dependence's latency, so the
/// last issue cycle is at least the longest latency path from any instruction
/// (`heights`). It issues at most two instructions a cycle, and at most one of
/// those goes to each of the pipes [`u74::Pipe::A`] and [`u74::Pipe::B`]: `k` such
/// instructions take at least `k` cycles.
fn least_cycles<'a>(heights: &[u32], code: impl Iterator<Item = &'a Timing>) -> u64 {
    let path = heights.iter().copied().max().map_or(0, u64::from);
    let (issue, ends_in_control) = issue_bound(code);
    path.max(issue.saturating_sub(1)) + if ends_in_control { 2 } else { 1 }
}

/// A lower bound on the steady-state cycles of one iteration of a one-block
/// loop, `code` being its region and tail, in any order
/// ([`u74::steady_state_cycles_of`]): the iteration issues from the cycle its
/// predecessor ended, at most two instructions a cycle and one per pipe
/// ([`least_cycles`]), and ends a cycle after its last issue, two after a
/// `control` transfer. (Results in flight from the previous iteration make no
/// latency path a bound.)
fn least_steady_cycles<'a>(code: impl Iterator<Item = &'a Timing>) -> u64 {
    match issue_bound(code) {
        (0, _) => 0,
        (issue, ends_in_control) => issue + u64::from(ends_in_control),
    }
}

/// The cycles `code` needs to issue, at most two instructions a cycle and one
/// of each of the pipes [`u74::Pipe::A`] and [`u74::Pipe::B`]; whether its last
/// instruction is a `control` transfer.
fn issue_bound<'a>(code: impl Iterator<Item = &'a Timing>) -> (u64, bool) {
    let (mut count, mut pipe_a, mut pipe_b) = (0u64, 0u64, 0u64);
    let mut ends_in_control = false;
    for x in code {
        count += 1;
        pipe_a += u64::from(x.pipe == u74::Pipe::A);
        pipe_b += u64::from(x.pipe == u74::Pipe::B);
        ends_in_control = x.control;
    }
    (count.div_ceil(2).max(pipe_a).max(pipe_b), ends_in_control)
}

/// How [`list_schedule`] breaks ties between instructions that would issue in
/// the same cycle with the same height.
#[derive(Copy, Clone, PartialEq, Eq)]
enum TieBreak {
    /// The original order.
    Original,
    /// Instructions that only one pipe takes (memory, multiply, branch) before
    /// ALU operations, which either pipe takes: a greedy choice of an ALU
    /// operation can take the last slot of pipe B that a multiply needed, and
    /// push the multiplies into the branch's cycle at the end of the block.
    OnePipeFirst,
    /// The same, ahead of height, for a loop of one block: a store issues first
    /// and the pointer bump that the loop's branch waits for pairs with it, where
    /// height alone would issue the bump alone in the first cycle (a fill loop's
    /// stores through one pointer).
    OnePipeBeforeHeight,
}

/// Schedules `insts[start..end]`, judging by the cycles of `insts[start..tail_end]`;
/// with a pressure guard, a new order may raise the region's register pressure
/// past its limit only as far as the list scheduling was allowed to when the limit
/// held a candidate back (the guard's raised limits), and is charged
/// [`SPILL_CYCLES`] per register beyond it. Returns whether the order changed.
///
/// The list scheduling runs once per [`TieBreak`] and priority (the heights,
/// and the unit heights of [`crate::unit_order`] when they differ); the order
/// the model finds fastest is kept, if it beats the region's current order.
fn schedule_region(
    insts: &mut [MInst],
    (start, end, tail_end): (usize, usize, usize),
    is_float: &dyn Fn(Reg) -> bool,
    copies: &CopyPartners,
    guard: Option<(Pressure, &[usize])>,
    steady_state: Option<&[(Reg, Reg)]>,
) -> bool {
    let (pressure, raised) = match guard {
        Some((p, raised)) => (Some(p), raised),
        None => (None, &[][..]),
    };
    let timing = |i: &MInst| u74::timing_with(i, is_float);
    let mut t: Vec<Timing> = insts[start..end].iter().map(timing).collect();
    let mut tail: Vec<Timing> = insts[end..tail_end].iter().map(timing).collect();
    // Over virtual registers, the timings go to the model renumbered (see
    // [`RegionRegs`]), the tail's with them; physical ones it keeps in arrays.
    let is_virtual = |x: &Timing| {
        x.defs
            .iter()
            .chain(x.uses.iter().map(|(r, _)| r))
            .any(|r| r.is_virtual())
    };
    let renumber = t.iter().chain(&tail).any(is_virtual);
    let regs = if renumber {
        RegionRegs::of(t.iter().chain(&tail))
    } else {
        RegionRegs::of(t.iter())
    };
    let fit = renumber && regs.fit_the_model();
    let n = t.len();
    let identity: Vec<usize> = (0..n).collect();
    // From a fresh start, no order takes fewer cycles than the longest latency
    // path or the issue width allow (the model waits at least each dependence's
    // latency, and issues at most two instructions a cycle); per iteration of a
    // loop, than the issue width allows. When the current order takes no more,
    // the list scheduling cannot beat it, and once an order found takes that
    // many, the other tie-breaks cannot either.
    let issue_least = |t: &[Timing], tail: &[Timing]| match steady_state {
        None => least_cycles(&[], t.iter().chain(tail)),
        Some(_) => least_steady_cycles(t.iter().chain(tail)),
    };
    // Timings the model takes as they are (not renumbered: after allocation)
    // give the current order's cycles before any dependence graph is built, and
    // a region already at the issue width's bound needs none.
    let early = (!fit).then(|| model_cycles(&t, &tail, &identity, steady_state));
    if early.is_some_and(|current| current <= issue_least(&t, &tail)) {
        return false;
    }
    let copy_src: Vec<Option<Reg>> = insts[start..end]
        .iter()
        .map(|i| match i {
            MInst::Mv { rs, .. } => Some(*rs),
            _ => None,
        })
        .collect();
    let mem: Vec<_> = t.iter().map(|x| x.mem).collect();
    let inc = Increments::new(&insts[start..end], &mem, &regs);
    let g = build_graph(&t, &regs, &copy_src, copies, &inc);
    let h = heights(&t, &g, &tail);
    // A second priority when an unpipelined unit has several instructions: the
    // heights raised by the unit's serial order.
    let unit_h = crate::unit_order::unit_heights(&t, &g.succs, &h);
    let priorities: Vec<&[u32]> = std::iter::once(&h[..]).chain(unit_h.as_deref()).collect();
    // From here on the timings only go to the model.
    let renumbered_copies;
    let steady_state = match steady_state {
        given if fit => {
            for x in t.iter_mut().chain(tail.iter_mut()) {
                regs.renumber(x);
            }
            renumbered_copies = given.map(|c| regs.renumber_copies(c));
            renumbered_copies.as_deref()
        }
        given => given,
    };
    // The cost of the region in `order`, then the tail.
    let cost = |order: &[usize]| model_cycles(&t, &tail, order, steady_state);
    let current = early.unwrap_or_else(|| cost(&identity));
    let least = match steady_state {
        None => least_cycles(&h, t.iter().chain(&tail)),
        Some(_) => issue_least(&t, &tail),
    };
    if current <= least {
        return false;
    }
    let mut start_state = Machine::default();
    if let Some(copies) = steady_state {
        // Start from the end of an iteration in the current order.
        for x in t.iter().chain(&tail) {
            start_state.issue(x);
        }
        start_state.copy_ready(copies);
        start_state.next_iteration();
    }
    let mut best: Option<(u64, Vec<MInst>)> = None;
    let mut tried: Vec<Vec<usize>> = Vec::with_capacity(3);
    let ties: &[TieBreak] = if steady_state.is_some() {
        &[
            TieBreak::Original,
            TieBreak::OnePipeFirst,
            TieBreak::OnePipeBeforeHeight,
        ]
    } else {
        &[TieBreak::Original, TieBreak::OnePipeFirst]
    };
    // The limits the list scheduling runs under: the region's own, then, when
    // that held a candidate back, the raised ones.
    let mut held_back = false;
    for raise in std::iter::once(0).chain(raised.iter().copied()) {
        if raise > 0 && !held_back {
            break;
        }
        let limited = pressure.clone().map(|mut p| {
            p.limit = p.limit.map(|l| l + raise);
            p
        });
        for &prio in &priorities {
            // Tie-breaks known to give the order of one already run.
            let mut repeats: Vec<TieBreak> = Vec::new();
            for (k, &tie) in ties.iter().enumerate() {
                if best.as_ref().is_some_and(|(b, _)| *b <= least) {
                    break;
                }
                if repeats.contains(&tie) {
                    continue;
                }
                let run = list_schedule(
                    &insts[start..end],
                    &t,
                    &g,
                    prio,
                    start_state.clone(),
                    limited.clone(),
                    tie,
                    &ties[k + 1..],
                );
                repeats.extend(run.same);
                held_back |= run.held_back;
                let order = run.order;
                // The current order, or one already judged, needs no judging.
                if order.iter().enumerate().all(|(k, &i)| k == i) || tried.contains(&order) {
                    continue;
                }
                let candidate = inc.reorder(&insts[start..end], &order);
                // From a fresh start, the list scheduling issued the region in this
                // order on the model already: its machine goes on with the tail, which
                // is what `cost` computes from scratch.
                let mut c = match steady_state {
                    Some(_) => cost(&order),
                    None => {
                        let mut m = run.machine;
                        for x in &tail {
                            m.issue(x);
                        }
                        m.end()
                    }
                };
                tried.push(order);
                if let Some(p) = &pressure {
                    // Each register beyond the limit is a value the allocator spills.
                    let new = max_pressure(&candidate, p.live_after, p.class);
                    let excess: usize = (0..2).map(|c| new[c].saturating_sub(p.limit[c])).sum();
                    if excess > 0 && raise == 0 {
                        continue;
                    }
                    c += SPILL_CYCLES * excess as u64;
                }
                if best.as_ref().is_none_or(|(b, _)| c < *b) {
                    best = Some((c, candidate));
                }
            }
        }
    }
    let Some((new_cost, candidate)) = best else {
        return false;
    };
    if new_cost >= current {
        return false;
    }
    for (k, inst) in candidate.into_iter().enumerate() {
        insts[start + k] = inst;
    }
    true
}

/// One run of [`list_schedule`]: the order, the tie-breaks that give it too, and
/// whether the pressure limit held back a candidate at some step.
struct ListRun {
    order: Vec<usize>,
    /// The model's state after issuing `order`.
    machine: Machine,
    same: Vec<TieBreak>,
    held_back: bool,
}

/// One top-down list scheduling of `code` (timings `t`, dependence graph `g`,
/// heights `h`) from machine state `m`: the order of its instructions, and those
/// of the tie-breaks `others` that choose as `tie` does at every step (so their
/// scheduling would give the same order: it is deterministic).
#[allow(clippy::too_many_arguments)]
fn list_schedule(
    code: &[MInst],
    t: &[Timing],
    g: &Graph,
    h: &[u32],
    mut m: Machine,
    mut pressure: Option<Pressure>,
    tie: TieBreak,
    others: &[TieBreak],
) -> ListRun {
    let n = t.len();
    let mut npreds = g.npreds.clone();
    // The instructions whose predecessors are all placed (the candidates; the
    // key below ends in the index, so their order does not matter).
    let mut ready: Vec<usize> = (0..n).filter(|&c| npreds[c] == 0).collect();
    let mut order = Vec::with_capacity(n);
    // Per instruction: how many registers of each file it writes, the most its
    // placement can add to the pressure; when that stays within the limits, the
    // full [`Pressure::exceeds`] need not be asked.
    let writes: Vec<[usize; 2]> = match &pressure {
        Some(p) => code.iter().map(|i| p.most_born(i)).collect(),
        None => Vec::new(),
    };
    let mut same: Vec<TieBreak> = others.to_vec();
    // Per tie-break (`tie`, then `same`): the best candidate so far of a step.
    let mut best: Vec<Option<(usize, Key)>> = Vec::with_capacity(1 + same.len());
    let mut held_back = false;
    while order.len() < n {
        best.clear();
        best.resize(1 + same.len(), None);
        for (slot, &c) in ready.iter().enumerate() {
            let over = pressure
                .as_ref()
                .is_some_and(|p| p.may_exceed(writes[c]) && p.exceeds(&code[c]));
            held_back |= over;
            let facts = (over, m.issue_cycle(&t[c]).0, t[c].pipe == u74::Pipe::Any);
            for (b, &tb) in best.iter_mut().zip(std::iter::once(&tie).chain(&same)) {
                let key = key(tb, facts, h[c], c);
                if b.is_none_or(|(_, k)| key < k) {
                    *b = Some((slot, key));
                }
            }
        }
        let (slot, _) = best[0].expect("the dependence graph is acyclic");
        let mut alternatives = best[1..].iter();
        same.retain(|_| alternatives.next().and_then(|b| b.map(|(s, _)| s)) == Some(slot));
        let chosen = ready.swap_remove(slot);
        if let Some(p) = &mut pressure {
            p.place(&code[chosen]);
        }
        m.issue(&t[chosen]);
        order.push(chosen);
        for &(s, _) in &g.succs[chosen] {
            npreds[s] -= 1;
            if npreds[s] == 0 {
                ready.push(s);
            }
        }
    }
    ListRun {
        order,
        machine: m,
        same,
        held_back,
    }
}

/// The order of candidates under a tie-break: whether placing it would take a
/// register file past its limit, its issue cycle, (an ALU op, for
/// [`TieBreak::OnePipeBeforeHeight`]), its height reversed, (an ALU op, for
/// [`TieBreak::OnePipeFirst`]), its index; the least is placed first.
type Key = (bool, u64, bool, std::cmp::Reverse<u32>, bool, usize);

/// The [`Key`] of candidate `c` of height `h`, from whether it goes `over` the
/// pressure limit, its `cycle` and whether it is `flexible` (an ALU op either
/// pipe takes).
fn key(tie: TieBreak, (over, cycle, flexible): (bool, u64, bool), h: u32, c: usize) -> Key {
    (
        over,
        cycle,
        tie == TieBreak::OnePipeBeforeHeight && flexible,
        std::cmp::Reverse(h),
        tie == TieBreak::OnePipeFirst && flexible,
        c,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::liveness::compute_liveness;
    use crate::mir::{Addr, AluOp, Base, Cond, MemOp};
    use crate::testinsts::{addi, addw, bnez, lw, sw};

    /// `n` random instructions over eight registers: loads, stores, increments,
    /// ALU ops either pipe takes and multiplies only one does.
    fn random_region(rng: &mut rand_chacha::ChaCha8Rng, n: usize) -> Vec<MInst> {
        use crate::testinsts::mulw;
        use rand::Rng;
        let mut code = Vec::new();
        let reg = |rng: &mut rand_chacha::ChaCha8Rng| rng.random_range(10..18u32);
        for _ in 0..n {
            let (a, b, c) = (reg(rng), reg(rng), reg(rng));
            code.push(match rng.random_range(0..6) {
                0 => lw(a, b, 4 * rng.random_range(-2..3)),
                1 => sw(a, b, 4 * rng.random_range(-2..3)),
                2 => addi(a, a, 4),
                3 => addw(a, b, c),
                _ => mulw(a, b, c),
            });
        }
        code
    }

    /// A region's timings (integer registers only), dependence graph and heights
    /// before `tail`, as [`schedule_region`] finds them with no copies to keep.
    fn analysed(code: &[MInst], tail: &[Timing]) -> (Vec<Timing>, Graph, Vec<u32>) {
        let t: Vec<Timing> = code
            .iter()
            .map(|i| u74::timing_with(i, &|_| false))
            .collect();
        let copy_src = vec![None; code.len()];
        let mem: Vec<_> = t.iter().map(|x| x.mem).collect();
        let regs = RegionRegs::of(t.iter());
        let inc = Increments::new(code, &mem, &regs);
        let g = build_graph(&t, &regs, &copy_src, &CopyPartners::default(), &inc);
        let h = heights(&t, &g, tail);
        (t, g, h)
    }

    #[test]
    fn the_divider_starts_on_the_first_chain_done() {
        // Four divisions, each by a value that a load and three adds compute,
        // written chain by chain interleaved (all loads, then all adds, then the
        // divisions), and their sum. By height alone the four chains look
        // alike and stay interleaved, so the first division starts late. The
        // divider takes one division at a time (20 cycles), so the block is
        // bound by when the first one starts: ordered by the divider's serial
        // order, one chain completes first.
        use crate::testinsts::divw;
        let mut code = Vec::new();
        for k in 0..4 {
            code.push(lw(10 + k, 20 + k, 0));
        }
        for _ in 0..3 {
            for k in 0..4 {
                code.push(addw(10 + k, 10 + k, 24));
            }
        }
        for k in 0..4 {
            code.push(divw(10 + k, 25, 10 + k));
        }
        code.push(addw(10, 10, 11));
        code.push(addw(12, 12, 13));
        code.push(addw(10, 10, 12));
        let before = u74::cycles(&code);
        assert!(schedule_block(&mut code) > 0);
        let after = u74::cycles(&code);
        // The least possible: the first division waits for its load and three
        // adds (issues at 6), the divider takes the four at 6, 26, 46 and 66,
        // and the last result is late-ready for the sums at 84. By height
        // alone: 88.
        assert_eq!(after, 86, "{before} -> {after} cycles");
    }

    #[test]
    fn two_chains_longer_than_a_short_window_overlap() {
        // Two pointer chases of 40 dependent loads each, one after the other:
        // 80 instructions, each chain 40 load latencies long. Scheduled as one
        // region the chains overlap and the block takes about one chain's
        // time; cut after 64 instructions, the last 16 loads of the second
        // chain would run after the first chain, alone.
        let mut code: Vec<MInst> = (0..40).map(|_| lw(5, 5, 0)).collect();
        code.extend((0..40).map(|_| lw(6, 6, 8)));
        let chain = u74::cycles(&code[..40]);
        let before = u74::cycles(&code);
        assert!(schedule_block(&mut code) > 0);
        let after = u74::cycles(&code);
        assert!(after < chain + 8, "{before} -> {after}, one chain {chain}");
    }

    #[test]
    fn a_tie_break_reported_to_choose_alike_gives_the_same_order() {
        // Random straight-line code (loads, stores, increments, ALU ops either
        // pipe takes, multiplies only one does): whenever a scheduling reports
        // that another tie-break chooses as it does at every step, scheduling
        // with that tie-break gives its order, and otherwise another order; the
        // test sees both cases.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(57);
        let all = [
            TieBreak::Original,
            TieBreak::OnePipeFirst,
            TieBreak::OnePipeBeforeHeight,
        ];
        let (mut alike, mut different) = (0, 0);
        for _ in 0..300 {
            let n = rng.random_range(2..30);
            let code = random_region(&mut rng, n);
            let (t, g, h) = analysed(&code, &[]);
            let run = |tie, others: &[TieBreak]| {
                list_schedule(&code, &t, &g, &h, Machine::default(), None, tie, others)
            };
            for (k, &tie) in all.iter().enumerate() {
                let ListRun { order, same, .. } = run(tie, &all[k + 1..]);
                for &other in &all[k + 1..] {
                    let other_order = run(other, &[]).order;
                    if same.contains(&other) {
                        assert_eq!(other_order, order, "{code:?}");
                        alike += 1;
                    } else {
                        // The two chose differently after the same prefix.
                        assert_ne!(other_order, order, "{code:?}");
                        different += 1;
                    }
                }
            }
        }
        assert!(alike > 0 && different > 0, "{alike} {different}");
    }

    #[test]
    fn a_list_schedules_machine_continued_through_the_tail_costs_its_order() {
        // `schedule_region` judges a fresh-start order by the machine its list
        // scheduling left, issuing the tail after it, instead of issuing the
        // order and the tail again: on random regions and tails, under every
        // tie-break, the two must agree cycle for cycle.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(67);
        let is_float = |_: Reg| false;
        let mut reordered = 0;
        for _ in 0..300 {
            let n = rng.random_range(1..30);
            let code = random_region(&mut rng, n);
            let tail_len = rng.random_range(0..8);
            let tail_code = random_region(&mut rng, tail_len);
            let tail: Vec<Timing> = tail_code
                .iter()
                .map(|i| u74::timing_with(i, &is_float))
                .collect();
            let (t, g, h) = analysed(&code, &tail);
            for tie in [TieBreak::Original, TieBreak::OnePipeFirst] {
                let run = list_schedule(&code, &t, &g, &h, Machine::default(), None, tie, &[]);
                reordered += usize::from(run.order.iter().enumerate().any(|(k, &i)| k != i));
                let from_scratch = u74::cycles_of(run.order.iter().map(|&k| &t[k]).chain(&tail));
                let mut m = run.machine;
                for x in &tail {
                    m.issue(x);
                }
                assert_eq!(m.end(), from_scratch, "{code:?} then {tail_code:?}");
            }
        }
        assert!(reordered > 0);
    }

    /// A random order of a region that its dependence graph `g` allows.
    fn random_order(rng: &mut rand_chacha::ChaCha8Rng, g: &Graph) -> Vec<usize> {
        use rand::Rng;
        let mut npreds = g.npreds.clone();
        let mut ready: Vec<usize> = (0..npreds.len()).filter(|&c| npreds[c] == 0).collect();
        let mut order = Vec::new();
        while !ready.is_empty() {
            let c = ready.swap_remove(rng.random_range(0..ready.len()));
            order.push(c);
            for &(s, _) in &g.succs[c] {
                npreds[s] -= 1;
                if npreds[s] == 0 {
                    ready.push(s);
                }
            }
        }
        order
    }

    #[test]
    fn no_order_takes_fewer_cycles_than_the_least_cycles() {
        // Random straight-line code (loads, stores, increments, ALU ops,
        // multiplies), some of it ending in a branch: the original order, the
        // list schedules and random orders the dependence graph allows all take
        // at least `least_cycles`, and some take exactly that many (a region
        // already that fast is left alone, so the bound must be one).
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(61);
        let is_float = |_: Reg| false;
        let (mut orders, mut tight) = (0, 0);
        for _ in 0..300 {
            let n = rng.random_range(1..24);
            let code = random_region(&mut rng, n);
            let tail: Vec<Timing> = if rng.random_bool(0.5) {
                vec![u74::timing_with(&bnez(rng.random_range(10..18)), &is_float)]
            } else {
                Vec::new()
            };
            let (t, g, h) = analysed(&code, &tail);
            let least = least_cycles(&h, t.iter().chain(&tail));
            let cost = |order: &[usize]| u74::cycles_of(order.iter().map(|&k| &t[k]).chain(&tail));
            let mut candidates = vec![(0..n).collect::<Vec<usize>>()];
            for tie in [TieBreak::Original, TieBreak::OnePipeFirst] {
                let m = Machine::default();
                candidates.push(list_schedule(&code, &t, &g, &h, m, None, tie, &[]).order);
            }
            for _ in 0..5 {
                candidates.push(random_order(&mut rng, &g));
            }
            for order in &candidates {
                let c = cost(order);
                assert!(c >= least, "{c} < {least} for {order:?} of {code:?}");
                orders += 1;
                tight += usize::from(c == least);
            }
        }
        assert!(
            tight > orders / 10,
            "{tight} of {orders} orders meet the bound"
        );
    }

    #[test]
    fn no_order_of_a_loop_takes_fewer_cycles_an_iteration_than_the_issue_bound() {
        // Random one-block loops (a region, then the branch back): per iteration
        // in the steady state, every order the dependence graph allows takes at
        // least `least_steady_cycles`, and some take exactly that many (memory
        // and multiplies, which one pipe each takes, fill it).
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(62);
        let is_float = |_: Reg| false;
        let (mut orders, mut tight) = (0, 0);
        for _ in 0..300 {
            let n = rng.random_range(1..24);
            let code = random_region(&mut rng, n);
            let tail = vec![u74::timing_with(&bnez(rng.random_range(10..18)), &is_float)];
            let (t, g, _) = analysed(&code, &tail);
            let least = least_steady_cycles(t.iter().chain(&tail));
            for _ in 0..6 {
                let order = random_order(&mut rng, &g);
                let c = model_cycles(&t, &tail, &order, Some(&[]));
                assert!(c >= least, "{c} < {least} for {order:?} of {code:?}");
                orders += 1;
                tight += usize::from(c == least);
            }
        }
        assert!(
            tight > orders / 20,
            "{tight} of {orders} orders meet the bound"
        );
    }

    #[test]
    fn the_graph_asks_every_possible_predecessor() {
        // Random straight-line code over a few registers (loads, stores,
        // increments, copies, writes of sp): the graph from the per-register
        // lists of readers and writers is the one from asking every pair.
        use crate::testinsts::mulw;
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(51);
        let is_float = |_: Reg| false;
        for _ in 0..300 {
            let n = rng.random_range(1..40);
            let mut code = Vec::new();
            let reg = |rng: &mut rand_chacha::ChaCha8Rng| rng.random_range(10..16u32);
            for _ in 0..n {
                let (a, b, c) = (reg(&mut rng), reg(&mut rng), reg(&mut rng));
                code.push(match rng.random_range(0..8) {
                    0 => lw(a, b, 4 * rng.random_range(-2..3)),
                    1 => sw(a, b, 4 * rng.random_range(-2..3)),
                    2 => addi(a, a, 4),
                    3 => addi(a, b, 1),
                    4 => addw(a, b, c),
                    5 => mulw(a, b, c),
                    6 => MInst::Mv {
                        rd: Reg::x(a),
                        rs: Reg::x(b),
                    },
                    _ => addi(2, 2, -16),
                });
            }
            let t: Vec<Timing> = code
                .iter()
                .map(|i| u74::timing_with(i, &is_float))
                .collect();
            let copy_src: Vec<Option<Reg>> = code
                .iter()
                .map(|i| match i {
                    MInst::Mv { rs, .. } => Some(*rs),
                    _ => None,
                })
                .collect();
            let mut copies = CopyPartners::default();
            for i in &code {
                if let MInst::Mv { rd, rs } = *i {
                    copies.entry(rs).or_default().push(rd);
                }
            }
            let mem: Vec<_> = t.iter().map(|x| x.mem).collect();
            let regs = RegionRegs::of(t.iter());
            let inc = Increments::new(&code, &mem, &regs);
            for copies in [CopyPartners::default(), copies] {
                let fast = build_graph_asking(&t, &regs, &copy_src, &copies, &inc, false);
                let slow = build_graph_asking(&t, &regs, &copy_src, &copies, &inc, true);
                assert_eq!(fast, slow, "{code:?}");
            }
        }
    }

    #[test]
    fn address_chains_start_first() {
        // a5 = load; a4 = load via a5 (address: waits 3 cycles); the four
        // independent adds fill that wait once they move between the loads.
        let mut b = vec![
            lw(15, 10, 0),
            lw(14, 15, 0),
            addw(13, 14, 13),
            addi(11, 11, 4),
            addi(12, 12, 4),
            addi(16, 16, 4),
            addi(17, 17, 4),
            bnez(13),
        ];
        let before = u74::cycles(&b);
        assert_eq!(schedule_block(&mut b), 1);
        assert!(u74::cycles(&b) < before, "{before} -> {}", u74::cycles(&b));
        assert_eq!(b[0], lw(15, 10, 0));
        assert_eq!(b[b.len() - 1], bnez(13), "terminators stay last");
    }

    #[test]
    fn stores_and_loads_keep_their_order_unless_disjoint() {
        // The load through a different base may alias the store: it stays after it.
        let mut b = vec![
            addi(11, 11, 1),
            sw(11, 10, 0),
            lw(12, 13, 0),
            addw(14, 12, 12),
        ];
        schedule_block(&mut b);
        let store = b.iter().position(|i| *i == sw(11, 10, 0)).unwrap();
        let load = b.iter().position(|i| *i == lw(12, 13, 0)).unwrap();
        assert!(store < load);
        // Same base, other bytes: the load may move above the store.
        let mut b = vec![
            addi(11, 11, 1),
            sw(11, 10, 0),
            lw(12, 10, 4),
            addw(14, 12, 12),
        ];
        schedule_block(&mut b);
        let store = b.iter().position(|i| *i == sw(11, 10, 0)).unwrap();
        let load = b.iter().position(|i| *i == lw(12, 10, 4)).unwrap();
        assert!(load < store, "{b:?}");
    }

    #[test]
    fn an_increment_moves_above_the_accesses_through_its_base() {
        // A one-block loop that bumps its pointers last: the branch waits for the
        // bumps, which wait for the last accesses. With the bumps early (and the
        // accesses' offsets adjusted) the branch pairs with the last store.
        let mut b = vec![
            lw(5, 10, 0),
            lw(6, 10, 4),
            lw(7, 11, 0),
            lw(28, 11, 4),
            addw(5, 5, 7),
            addw(6, 6, 28),
            sw(5, 10, 0),
            sw(6, 10, 4),
            addi(10, 10, 8),
            addi(11, 11, 8),
            bnez(10),
        ];
        let before = u74::cycles(&b);
        assert_eq!(schedule_block(&mut b), 1);
        assert!(u74::cycles(&b) < before, "{before} -> {}", u74::cycles(&b));
        let bump = b.iter().position(|i| *i == addi(10, 10, 8)).unwrap();
        let store = b.iter().position(|i| *i == sw(6, 10, -4)).unwrap();
        assert!(bump < store, "{b:?}");
    }

    #[test]
    fn register_reuse_orders_instructions() {
        // a1 is read, then overwritten: the write may not move above the read.
        let mut b = vec![
            lw(15, 10, 0),
            addw(12, 11, 15),
            addi(11, 13, 1),
            addw(14, 11, 11),
        ];
        schedule_block(&mut b);
        let read = b.iter().position(|i| *i == addw(12, 11, 15)).unwrap();
        let write = b.iter().position(|i| *i == addi(11, 13, 1)).unwrap();
        assert!(read < write, "{b:?}");
    }

    /// `s = s + load(a0 + 4k)^2` for k < 12 over virtual registers, returning `ret s`.
    fn sum_of_squares() -> MFunction {
        sum_of_squares_of(12)
    }

    /// `s = s + load(a0 + 4k)^2` for k < n over virtual registers, returning `ret s`.
    fn sum_of_squares_of(n: i64) -> MFunction {
        let mut mf = MFunction::new("f".into(), true);
        let b = mf.new_block();
        mf.layout.push(b);
        let mut sum = mf.new_vreg(RegClass::Int);
        let mut insts = vec![MInst::Li { rd: sum, imm: 0 }];
        for k in 0..n {
            let v = mf.new_vreg(RegClass::Int);
            let sq = mf.new_vreg(RegClass::Int);
            let next = mf.new_vreg(RegClass::Int);
            insts.push(MInst::Load {
                op: MemOp::W,
                rd: v,
                addr: Addr::new(Base::Reg(Reg::x(10)), 4 * k),
            });
            insts.push(MInst::Alu {
                op: AluOp::Mulw,
                rd: sq,
                rs1: v,
                rs2: v,
            });
            insts.push(MInst::Alu {
                op: AluOp::Addw,
                rd: next,
                rs1: sum,
                rs2: sq,
            });
            sum = next;
        }
        return_in_a0(&mut mf, b, insts, sum);
        mf
    }

    /// Ends `insts` by returning `sum` in `a0` and makes them the body of block `b`.
    fn return_in_a0(mf: &mut MFunction, b: MBlock, mut insts: Vec<MInst>, sum: Reg) {
        insts.push(MInst::Mv {
            rd: Reg::x(10),
            rs: sum,
        });
        insts.push(MInst::Ret {
            value: Some(Reg::x(10)),
        });
        mf.blocks[b].insts = insts;
    }

    /// Cycles and register pressure of the single block of `mf`.
    fn cost_and_pressure(mf: &MFunction) -> (u64, usize) {
        let insts = &mf.blocks[MBlock(0)].insts;
        let class = |r: Reg| usize::from(!r.is_virtual() && r.phys_class() == RegClass::Float);
        let pressure = max_pressure(&insts[..insts.len() - 1], &LiveAfter::default(), &class);
        (u74::cycles(insts), pressure[0])
    }

    /// An outer loop (bb1, bb3) around an inner one (bb2). `%v3` is live throughout
    /// both but only read in bb3; `%v0` is read in the inner loop too.
    #[test]
    fn registers_idle_through_an_innermost_loop_raise_its_limit() {
        let mf = crate::text::parse_function(
            "function t local
  int %v0..%v3
bb0:
  mv %v0, a0
  mv %v3, a1
  li %v1, 0
  j bb1
bb1:
  li %v2, 0
  j bb2
bb2:
  addw %v1, %v1, %v0
  addiw %v2, %v2, 1
  blt %v2, %v0, bb2
  j bb3
bb3:
  addw %v1, %v1, %v3
  blt %v1, %v0, bb1
  j bb4
bb4:
  mv a0, %v1
  ret a0
end
",
        )
        .unwrap();
        let live = compute_liveness(&mf);
        let class = |_: Reg| 0;
        let idle = idle_through_innermost_loops(&mf, &live, &class);
        // Only the innermost loop's block is raised, by `%v3`.
        assert_eq!(idle, vec![[0, 0], [0, 0], [1, 0], [0, 0], [0, 0]]);
    }

    #[test]
    fn pressure_counts_registers_live_past_a_region_it_does_not_mention() {
        // a3 = a1 + a2 after two loads through a0, with a3 and five registers the
        // region never mentions live after it.
        let code = [lw(11, 10, 0), lw(12, 10, 4), addw(13, 11, 12)];
        let class = |_: Reg| 0;
        let after = LiveAfter {
            mentioned: [13].into_iter().collect(),
            count: [6, 0],
        };
        // Before the add: a1, a2 and the five others.
        assert_eq!(max_pressure(&code, &after, &class), [7, 0]);
        let (live, count) = live_before(&code, &after, &class);
        assert_eq!(live, [10].into_iter().collect());
        assert_eq!(count, [6, 0]);
    }

    #[test]
    fn pressure_guard_bounds_what_hoisting_loads_costs() {
        let orig = sum_of_squares();
        let (cost, pressure) = cost_and_pressure(&orig);
        // Unbounded, the schedule hoists the loads: faster, but many values live.
        let mut free = orig.clone();
        let live = compute_liveness(&free);
        assert_eq!(
            run_before_allocation_within(&mut free, &live, [64, 64], &RAISED_LIMITS, 1),
            1
        );
        let (free_cost, free_pressure) = cost_and_pressure(&free);
        assert!(free_cost < cost && free_pressure > 4, "{free_pressure}");
        // Bounded by 4 registers: still faster, within the bound.
        assert!(pressure <= 4);
        let mut bounded = orig.clone();
        let live = compute_liveness(&bounded);
        assert_eq!(
            run_before_allocation_within(&mut bounded, &live, [4, 4], &RAISED_LIMITS, 1),
            1
        );
        let (bounded_cost, bounded_pressure) = cost_and_pressure(&bounded);
        assert!(bounded_cost < cost, "{bounded_cost} vs {cost}");
        assert!(bounded_pressure <= 4, "{bounded_pressure}");
        let sorted = |mf: &MFunction| {
            let mut v: Vec<String> = mf.blocks[MBlock(0)]
                .insts
                .iter()
                .map(|i| format!("{i:?}"))
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            sorted(&orig),
            sorted(&bounded),
            "the same instructions, reordered"
        );
    }

    /// `mf`, a single block ending in `ret a0`, as the body of a loop: the block
    /// jumps to a latch that branches back to it while `a0 < a1`, then returns.
    /// (The body is in a loop, without being a loop of its own.)
    fn looped(mut mf: MFunction) -> MFunction {
        let body = MBlock(0);
        let (latch, exit) = (mf.new_block(), mf.new_block());
        mf.layout.extend([latch, exit]);
        let last = mf.blocks[body].insts.pop();
        assert!(matches!(last, Some(MInst::Ret { .. })));
        mf.blocks[body].insts.push(MInst::Jump { target: latch });
        mf.blocks[latch].insts = vec![
            MInst::Branch {
                cond: Cond::Lt,
                rs1: Reg::x(10),
                rs2: Reg::x(11),
                target: body,
            },
            MInst::Jump { target: exit },
        ];
        mf.blocks[exit].insts = vec![MInst::Ret {
            value: Some(Reg::x(10)),
        }];
        mf
    }

    #[test]
    fn an_order_beyond_the_limit_is_kept_when_its_gain_pays_for_the_spills() {
        // At a limit of the region's own pressure the loads cannot move up: each
        // square waits on its load, each sum on its square.
        let orig = looped(sum_of_squares());
        let (cost, pressure) = cost_and_pressure(&orig);
        let schedule = |raised: &[usize]| {
            let mut mf = orig.clone();
            let live = compute_liveness(&mf);
            run_before_allocation_within(&mut mf, &live, [pressure, 64], raised, 1);
            cost_and_pressure(&mf)
        };
        let (held_cost, held_pressure) = schedule(&[]);
        assert!(held_pressure <= pressure, "{held_pressure} > {pressure}");
        // Raised, loads overlap the chain: more registers, but far fewer cycles
        // than the spills they cost.
        let (raised_cost, raised_pressure) = schedule(&RAISED_LIMITS);
        let excess = (raised_pressure - pressure) as u64;
        assert!(
            excess > 0 && raised_cost + SPILL_CYCLES * excess < held_cost.min(cost),
            "{raised_cost} cycles, {excess} over; held {held_cost}, as it was {cost}"
        );
        assert!(raised_pressure <= pressure + RAISED_LIMITS[RAISED_LIMITS.len() - 1]);
    }

    /// Random straight-line code over virtual registers, each defined once from
    /// `a0` and earlier ones (loads, adds, multiplies), the values nothing reads
    /// summed into `a0`, which the block returns.
    fn random_ssa_block(rng: &mut rand_chacha::ChaCha8Rng, n: usize) -> MFunction {
        use rand::Rng;
        let mut mf = MFunction::new("f".into(), true);
        let b = mf.new_block();
        mf.layout.push(b);
        let mut defined: Vec<Reg> = Vec::new();
        let mut read: Vec<bool> = Vec::new();
        let mut insts = Vec::new();
        for _ in 0..n {
            let rd = mf.new_vreg(RegClass::Int);
            let mut pick = |rng: &mut rand_chacha::ChaCha8Rng| {
                if defined.is_empty() || rng.random_bool(0.2) {
                    return Reg::x(10);
                }
                let k = rng.random_range(defined.len().saturating_sub(6)..defined.len());
                read[k] = true;
                defined[k]
            };
            let (x, y) = (pick(rng), pick(rng));
            insts.push(match rng.random_range(0..3) {
                0 => MInst::Load {
                    op: MemOp::D,
                    rd,
                    addr: Addr::new(Base::Reg(x), 8 * rng.random_range(0..4)),
                },
                1 => MInst::Alu {
                    op: AluOp::Add,
                    rd,
                    rs1: x,
                    rs2: y,
                },
                _ => MInst::Alu {
                    op: AluOp::Mul,
                    rd,
                    rs1: x,
                    rs2: y,
                },
            });
            defined.push(rd);
            read.push(false);
        }
        let mut sum = Reg::x(10);
        for (&r, _) in defined.iter().zip(&read).filter(|(_, &was)| !was) {
            let next = mf.new_vreg(RegClass::Int);
            insts.push(MInst::Alu {
                op: AluOp::Add,
                rd: next,
                rs1: sum,
                rs2: r,
            });
            sum = next;
        }
        return_in_a0(&mut mf, b, insts, sum);
        mf
    }

    #[test]
    fn an_order_beyond_the_limit_is_kept_only_when_its_gain_pays_for_the_spills() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (mut over, mut within) = (0, 0);
        for _ in 0..300 {
            let mf = looped(random_ssa_block(&mut rng, 24));
            let (cost, pressure) = cost_and_pressure(&mf);
            let mut raised = mf.clone();
            let live = compute_liveness(&raised);
            run_before_allocation_within(&mut raised, &live, [pressure, 64], &RAISED_LIMITS, 1);
            let (new_cost, new_pressure) = cost_and_pressure(&raised);
            assert!(new_cost <= cost);
            if new_pressure > pressure {
                let excess = (new_pressure - pressure) as u64;
                assert!(excess as usize <= RAISED_LIMITS[RAISED_LIMITS.len() - 1]);
                assert!(
                    new_cost + SPILL_CYCLES * excess < cost,
                    "{new_cost} cycles with {excess} over, {cost} as it was"
                );
                over += 1;
            } else {
                within += 1;
            }
        }
        // Both outcomes occur.
        assert!(
            over > 10 && within > 10,
            "{over} beyond the limit, {within} within"
        );
    }

    #[test]
    fn outside_loops_an_order_stays_within_the_limit() {
        let orig = sum_of_squares();
        let (_, pressure) = cost_and_pressure(&orig);
        let mut mf = orig.clone();
        let live = compute_liveness(&mf);
        run_before_allocation_within(&mut mf, &live, [pressure, 64], &RAISED_LIMITS, 1);
        assert!(cost_and_pressure(&mf).1 <= pressure);
        // In a loop, the same code goes beyond it.
        let mut mf = looped(orig);
        let live = compute_liveness(&mf);
        run_before_allocation_within(&mut mf, &live, [pressure, 64], &RAISED_LIMITS, 1);
        assert!(cost_and_pressure(&mf).1 > pressure);
    }

    #[test]
    fn calls_are_barriers() {
        let call = MInst::Call {
            callee: "f".into(),
            args: vec![],
        };
        let mut b = vec![lw(15, 10, 0), lw(14, 15, 0), call.clone(), addi(11, 11, 4)];
        let orig = b.clone();
        schedule_block(&mut b);
        assert_eq!(b, orig);
    }
}
