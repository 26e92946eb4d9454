//! Dead store elimination for local arrays (`alloc`s whose address does not
//! escape), by offset windows and across blocks and loop back edges; part of the
//! `dse` pass.
//!
//! The analysis is the liveness of bytes of memory, the backward "may" data-flow
//! problem of [`super::dse`] at byte granularity: a byte of an allocation is live
//! at a point when some path from there reads it before a store that certainly
//! overwrites it (GCC's `tree-ssa-dse` tracks the live bytes of a store the same
//! way; LLVM's DSE asks `isOverwrite` of a later store's window). Accesses are
//! windows of offsets ([`span_of`]): constant indices give one offset, variable
//! ones a stride and a window bounded by their value ranges. A load reads every
//! byte its window may cover, a call the allocation is passed to reads all of it,
//! and only a store (or a `memset`) at a single offset overwrites. The frame dies
//! at a return: nothing is live after a block without successors. A store none
//! of whose bytes is live just after it is dead: so is a local array
//! re-initialised on every round of a loop before anything reads it, once the
//! last round's stores are overwritten by the next round's.
//!
//! Reads that only feed dead stores do not count: a load is a read only when its
//! value is needed, starting from what has effects (calls, returns, branches,
//! stores elsewhere) and going through operands, block arguments and the stores
//! found live (the "faint" values of Knoop, Rüthing and Steffen's "Partial Dead
//! Code Elimination", PLDI 1994, as aggressive DCE marks them, Cytron et al.,
//! TOPLAS 1991, 7.1). Liveness is solved again whenever a store found live makes
//! more loads needed, at most [`MAX_ROUNDS`] times, after which every load
//! counts. A value loaded from the array, clamped, and stored back into it (and
//! nowhere else) then dies with the store.

use super::dse::{Bits, LiveBits};
use super::locmap::{span_of, Span, UNBOUNDED};
use crate::analysis::dataflow::solve;
use crate::analysis::ranges::Ranges;
use crate::passes::loops::loopidiom::memset_call;
use ir::analysis::ControlFlowGraph;
use ir::{Block, FuncId, Function, Inst, InstKind, SecondaryMap, Type, Value, ValueDef};
use rustc_hash::FxHashMap;

/// Allocations larger than this many bytes are left alone.
pub const MAX_OBJECT_BYTES: i64 = 4096;

/// Bytes tracked times blocks above which a function is left alone.
pub const MAX_BITS: usize = 1 << 22;

/// How many times liveness is solved while stores found live make more loads
/// needed, before every load counts as a read.
pub const MAX_ROUNDS: usize = 8;

/// What an instruction does to a tracked allocation.
#[derive(Clone, Copy, Debug)]
enum Access {
    /// A load of this window: a read when the load is needed.
    Load(Span),
    /// A store of this window: overwrites it when the window is one offset.
    Store(Span),
    /// A `memset` of this window.
    Fill(Span),
    /// A call sees the whole allocation.
    Call,
}

/// A tracked allocation: its first bit and its size in bytes.
type Obj = (usize, i64);

/// The tracked allocations.
struct Objects {
    index: FxHashMap<Value, Obj>,
    bits: usize,
}

/// Removes the dead stores into `f`'s local arrays; returns how many. `ranges`
/// bound the variable indices.
pub fn run(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    ranges: &Ranges,
    memset: Option<FuncId>,
) -> usize {
    let objects = tracked_objects(f);
    if objects.bits == 0 || objects.bits.saturating_mul(cfg.rpo().len()) > MAX_BITS {
        return 0;
    }
    let accesses = Accesses::of(f, cfg, ranges, memset, &objects);
    if !accesses.any_store {
        return 0;
    }
    let dead = dead_stores(f, cfg, &accesses, &objects);
    for &i in &dead {
        f.remove_inst(i);
    }
    dead.len()
}

/// Whether `f` has an allocation this pass may track (a cheap test before
/// computing value ranges).
pub fn has_candidates(f: &Function) -> bool {
    tracked_objects(f).bits > 0
}

/// The allocations of `f` whose address does not escape (it only reaches the
/// address of loads and stores, `gep` bases and call arguments), numbered in
/// layout order.
fn tracked_objects(f: &Function) -> Objects {
    let mut index = FxHashMap::default();
    let mut bits = 0usize;
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            let InstKind::Alloc { elem, len } = *f.kind(i) else {
                continue;
            };
            let size = i64::from(elem.size()) * i64::from(len);
            let a = f.inst_result(i).expect("alloc has a result");
            if size > 0 && size <= MAX_OBJECT_BYTES && !escapes(f, a) {
                index.insert(a, (bits, size));
                bits += size as usize;
            }
        }
    }
    Objects { index, bits }
}

/// Whether the address `a`, or one derived from it by `gep`, goes anywhere but
/// the address of a load or store, a `gep` base or a call argument.
fn escapes(f: &Function, a: Value) -> bool {
    let mut work = vec![a];
    while let Some(p) = work.pop() {
        for &u in f.users(p) {
            match f.kind(u) {
                InstKind::Load { .. } | InstKind::Call { .. } => {}
                InstKind::Store { value, .. } if *value != p => {}
                InstKind::Gep { base, .. } if *base == p => {
                    work.push(f.inst_result(u).expect("gep has a result"));
                }
                _ => return true,
            }
        }
    }
    false
}

/// The accesses to tracked allocations of every reachable block, in order.
struct Accesses {
    by_block: SecondaryMap<Block, Vec<(Inst, Obj, Access)>>,
    any_store: bool,
}

impl Accesses {
    fn of(
        f: &Function,
        cfg: &ControlFlowGraph,
        ranges: &Ranges,
        memset: Option<FuncId>,
        objects: &Objects,
    ) -> Accesses {
        let mut by_block: SecondaryMap<Block, Vec<(Inst, Obj, Access)>> = SecondaryMap::new();
        let mut any_store = false;
        let window = |p: Value, size: i64| {
            let (root, span) = span_of(f, Some(ranges), p, size);
            objects.index.get(&root).map(|&o| (o, span))
        };
        for &b in cfg.rpo() {
            let mut list = Vec::new();
            for i in f.layout.block_insts(b) {
                match f.kind(i) {
                    InstKind::Load { ty, ptr } => {
                        if let Some((o, s)) = window(*ptr, i64::from(ty.size())) {
                            list.push((i, o, Access::Load(s)));
                        }
                    }
                    InstKind::Store { value, ptr } => {
                        let size = i64::from(f.value_type(*value).size());
                        if let Some((o, s)) = window(*ptr, size) {
                            list.push((i, o, Access::Store(s)));
                            any_store = true;
                        }
                    }
                    InstKind::Call { args, .. } => {
                        let fill = memset_call(f, memset, i);
                        for &a in args.iter().filter(|&&a| f.value_type(a) == Type::Ptr) {
                            let Some((o, whole)) = window(a, 1) else {
                                continue;
                            };
                            let access = match fill {
                                Some((p, _, Some(len))) if p == a => {
                                    Access::Fill(Span { size: len, ..whole })
                                }
                                Some((p, _, None)) if p == a => continue,
                                _ => Access::Call,
                            };
                            list.push((i, o, access));
                        }
                    }
                    _ => {}
                }
            }
            by_block[b] = list;
        }
        Accesses {
            by_block,
            any_store,
        }
    }
}

/// Calls `each` on the bytes (as bit numbers from `base`) that an access of
/// `span` may touch in an object of `size` bytes.
fn for_each_byte((base, size): Obj, span: Span, mut each: impl FnMut(usize)) {
    let mut mark = |from: i64, to: i64| {
        for byte in from.max(0)..to.min(size) {
            each(base + byte as usize);
        }
    };
    if span.lo <= -UNBOUNDED || span.hi >= UNBOUNDED || (span.stride == 0 && span.lo != span.hi) {
        return mark(0, size);
    }
    if span.stride == 0 {
        return mark(span.lo, span.lo + span.size);
    }
    // The first offset `start + stride * k` at or after the last one that can
    // still reach byte 0.
    let from = span.lo.max(-span.size);
    let mut off = from + (span.start - from).rem_euclid(span.stride);
    while off <= span.hi.min(size) {
        mark(off, off + span.size);
        off += span.stride;
    }
}

/// Whether `span` is a single offset: an access there certainly writes it.
fn is_exact(span: Span) -> bool {
    span.stride == 0 && span.lo == span.hi
}

/// Steps `live` back over one access (before it from after it); `reads` tells
/// which loads count.
fn step_back(
    live: &mut Bits,
    (i, o, access): (Inst, Obj, Access),
    reads: &SecondaryMap<Inst, bool>,
) {
    match access {
        Access::Store(s) | Access::Fill(s) if is_exact(s) => {
            for_each_byte(o, s, |k| live.remove(k))
        }
        Access::Store(_) | Access::Fill(_) => {}
        Access::Load(s) if reads[i] => for_each_byte(o, s, |k| live.insert(k)),
        Access::Load(_) => {}
        Access::Call => for_each_byte(o, Span::exact(0, o.1), |k| live.insert(k)),
    }
}

/// The stores into tracked allocations none of whose bytes is live after them,
/// with the loads needed going up as stores are found live.
fn dead_stores(
    f: &Function,
    cfg: &ControlFlowGraph,
    accesses: &Accesses,
    objects: &Objects,
) -> Vec<Inst> {
    let mut needed = Needed::new(f, cfg, objects);
    let mut live_stores: SecondaryMap<Inst, bool> = SecondaryMap::new();
    for round in 0.. {
        let reads: SecondaryMap<Inst, bool> = if round < MAX_ROUNDS {
            needed.loads.clone()
        } else {
            let mut all = SecondaryMap::new();
            for &b in cfg.rpo() {
                for &(i, _, _) in &accesses.by_block[b] {
                    all[i] = true;
                }
            }
            all
        };
        let (dead, newly_live) = classify(f, cfg, accesses, objects.bits, &reads);
        let mut grew = false;
        for i in newly_live {
            if !live_stores[i] {
                live_stores[i] = true;
                grew |= needed.mark_operands(f, cfg, i);
            }
        }
        if !grew || round >= MAX_ROUNDS {
            return dead;
        }
    }
    unreachable!("the loop returns")
}

/// Solves liveness with the loads `reads` counted; the dead stores and the
/// live ones.
fn classify(
    f: &Function,
    cfg: &ControlFlowGraph,
    accesses: &Accesses,
    bits: usize,
    reads: &SecondaryMap<Inst, bool>,
) -> (Vec<Inst>, Vec<Inst>) {
    // The live-byte problem for this set of loads counted as reads; the frame
    // dies with the call, so nothing is live after a return.
    let mut problem = LiveBits::new(bits, false);
    for &b in cfg.rpo() {
        let (mut gen, mut kill) = (Bits::empty(bits), Bits::empty(bits));
        for &(i, o, a) in accesses.by_block[b].iter().rev() {
            step_back(&mut gen, (i, o, a), reads);
            if let Access::Store(s) | Access::Fill(s) = a {
                if is_exact(s) {
                    for_each_byte(o, s, |k| kill.insert(k));
                }
            }
        }
        problem.gen[b] = gen;
        problem.kill[b] = kill;
    }
    let solution = solve(f, cfg, &problem);
    let (mut dead, mut live_stores) = (Vec::new(), Vec::new());
    for &b in cfg.rpo() {
        let mut live = solution.at_end[b].clone();
        for &(i, o, a) in accesses.by_block[b].iter().rev() {
            if let Access::Store(s) = a {
                let mut read = false;
                for_each_byte(o, s, |k| read |= live.contains(k));
                if read {
                    live_stores.push(i);
                } else {
                    dead.push(i);
                }
            }
            step_back(&mut live, (i, o, a), reads);
        }
    }
    (dead, live_stores)
}

/// The values needed by what has effects: the loads among them are reads.
struct Needed {
    values: SecondaryMap<Value, bool>,
    loads: SecondaryMap<Inst, bool>,
    /// How many loads are needed.
    count: usize,
}

impl Needed {
    /// What every call, return, branch condition (but a select's) and store
    /// outside the tracked allocations needs.
    fn new(f: &Function, cfg: &ControlFlowGraph, tracked: &Objects) -> Needed {
        let mut needed = Needed {
            values: SecondaryMap::new(),
            loads: SecondaryMap::new(),
            count: 0,
        };
        for &b in cfg.rpo() {
            for i in f.layout.block_insts(b) {
                let root = match f.kind(i) {
                    InstKind::Call { .. } | InstKind::Ret { .. } => true,
                    // A branch to one block with two sets of arguments is a
                    // select: its condition is needed with the parameters.
                    InstKind::Br {
                        cond,
                        then_dest,
                        else_dest,
                    } if then_dest.block != else_dest.block => {
                        needed.mark(f, cfg, *cond);
                        false
                    }
                    InstKind::Store { ptr, .. } => {
                        let (root, _) = ir::analysis::address_root(f, *ptr);
                        !tracked.index.contains_key(&root)
                    }
                    _ => false,
                };
                if root {
                    needed.mark_operands(f, cfg, i);
                }
            }
        }
        needed
    }

    /// Marks the operands of `i` needed; whether a new load became needed.
    fn mark_operands(&mut self, f: &Function, cfg: &ControlFlowGraph, i: Inst) -> bool {
        let before = self.count;
        for a in f.kind(i).args() {
            self.mark(f, cfg, a);
        }
        self.count != before
    }

    /// Marks `v` needed, and what it is computed from.
    fn mark(&mut self, f: &Function, cfg: &ControlFlowGraph, v: Value) {
        let mut work = vec![v];
        while let Some(v) = work.pop() {
            if self.values[v] {
                continue;
            }
            self.values[v] = true;
            match f.value_def(v) {
                ValueDef::Inst(i) => {
                    if let InstKind::Load { .. } = f.kind(i) {
                        self.loads[i] = true;
                        self.count += 1;
                    }
                    work.extend(f.kind(i).args());
                }
                ValueDef::Param(b, k) => {
                    for &p in cfg.preds(b) {
                        let term = f.terminator(p).expect("a predecessor ends in a branch");
                        let kind = f.kind(term);
                        for t in kind.targets() {
                            if t.block == b {
                                work.push(t.args[k as usize]);
                            }
                        }
                        if let InstKind::Br { cond, .. } = kind {
                            work.push(*cond);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, run, same_behaviour};

    /// Asserts that `dse` leaves `src` as it is.
    #[track_caller]
    fn unchanged(src: &str) {
        assert_eq!(run(src, &["dse"]), run(src, &[]));
    }

    /// A round of a loop fills `t[0..2]`, reads `t[i & 1]`, then writes `t[1]`
    /// and `t[2]`: `t[2]` is never read and the next round overwrites `t[1]`
    /// before its load, so both late stores go; the fills stay.
    const ROUNDS: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putarray(i32, ptr) -> void

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 4]
  %1 = gep %0, 1, 4
  %2 = gep %0, 2, 4
  %3 = call @getint()
  jump bb1(0, 0)
bb1(%4: i32, %5: i32):
  store 7, %0
  store %4, %1
  %6 = and %4, 1
  %7 = gep %0, %6, 4
  %8 = load i32, %7
  %9 = add %5, %8
  store %9, %1
  store %9, %2
  %10 = add %4, 1
  %11 = slt %10, %3
  br %11, bb1(%10, %9), bb2
bb2:
  call @putint(%9)
  ret 0
}
"#;

    #[test]
    fn stores_the_next_round_overwrites_before_a_read_go() {
        same_behaviour(ROUNDS, &["dse"], "5");
        check(
            &["dse"],
            ROUNDS,
            r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putarray(i32, ptr) -> void

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 4]
  %1 = gep %0, 1, 4
  %2 = gep %0, 2, 4
  %3 = call @getint()
  jump bb1(0, 0)
bb1(%4: i32, %5: i32):
  store 7, %0
  store %4, %1
  %6 = and %4, 1
  %7 = gep %0, %6, 4
  %8 = load i32, %7
  %9 = add %5, %8
  %10 = add %4, 1
  %11 = slt %10, %3
  br %11, bb1(%10, %9), bb2
bb2:
  call @putint(%9)
  ret 0
}
"#,
        );
    }

    /// A load of `t[1]` after the loop reads the last round's store.
    #[test]
    fn a_load_between_the_stores_keeps_the_first() {
        let src = ROUNDS.replace(
            "  call @putint(%9)\n",
            "  %12 = load i32, %1\n  call @putint(%12)\n",
        );
        let out = same_behaviour(&src, &["dse"], "5");
        assert!(out.contains("store %9, %1"), "{out}");
        assert!(!out.contains("store %9, %2"), "{out}");
    }

    /// A call given the array reads all of it.
    #[test]
    fn a_call_seeing_the_array_keeps_the_stores() {
        let src = ROUNDS.replace(
            "  %10 = add %4, 1\n",
            "  call @putarray(4, %0)\n  %10 = add %4, 1\n",
        );
        same_behaviour(&src, &["dse"], "3");
        unchanged(&src);
    }

    /// The next round writes `t[i & 1]`, `t[0]` or `t[1]`: not certainly `t[1]`,
    /// so the last round's store there may be read.
    #[test]
    fn a_store_of_a_window_overwrites_nothing() {
        let src = ROUNDS
            .replace("  store %4, %1\n", "  store %4, %7\n")
            .replace("  %6 = and %4, 1\n  %7 = gep %0, %6, 4\n", "")
            .replace(
                "  store 7, %0\n",
                "  store 7, %0\n  %6 = and %4, 1\n  %7 = gep %0, %6, 4\n",
            );
        let out = same_behaviour(&src, &["dse"], "5");
        assert!(out.contains("store %9, %1"), "{out}");
        assert!(!out.contains("store %9, %2"), "{out}");
    }

    /// Windows as the index ranges bound them: `t[i & 1]` reads bytes 0..8 only,
    /// and a load of `t[2 + (i & 1)]` keeps the stores of `t[2]` and `t[3]` but
    /// not of `t[1]`, which the fill overwrites.
    #[test]
    fn a_load_of_a_window_reads_every_offset_it_may_have() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 4]
  %1 = gep %0, 1, 4
  %2 = gep %0, 2, 4
  %3 = gep %0, 3, 4
  %4 = call @getint()
  store 1, %1
  store 2, %2
  store 3, %3
  %5 = and %4, 1
  %6 = add %5, 2
  %7 = gep %0, %6, 4
  %8 = load i32, %7
  store 4, %1
  %9 = load i32, %1
  %10 = add %8, %9
  call @putint(%10)
  ret 0
}
"#;
        for input in ["0", "1"] {
            same_behaviour(src, &["dse"], input);
        }
        let out = run(src, &["dse"]);
        assert!(!out.contains("store 1, %1"), "{out}");
        for kept in ["store 2, %2", "store 3, %3", "store 4, %1"] {
            assert!(out.contains(kept), "{kept}: {out}");
        }
    }

    /// A value loaded from the array, changed and stored back into it, and
    /// nothing else: the load is no read, and the stores it would read go too.
    #[test]
    fn a_load_feeding_only_dead_stores_reads_nothing() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 2]
  %1 = gep %0, 1, 4
  %2 = call @getint()
  store %2, %0
  store 5, %1
  %3 = and %2, 1
  %4 = gep %0, %3, 4
  %5 = load i32, %4
  %6 = sgt %5, 3
  br %6, bb1(3), bb1(%5)
bb1(%7: i32):
  store %7, %1
  call @putint(%2)
  ret 0
}
"#;
        same_behaviour(src, &["dse"], "6");
        let out = run(src, &["dse"]);
        assert_eq!(out.matches("store").count(), 0, "{out}");
    }

    /// The caller sees a parameter's array: stores into it before a return
    /// stay, and so do stores into a local array whose address escapes.
    #[test]
    fn memory_others_see_keeps_its_stores() {
        unchanged(
            r#"
func @f(ptr) -> void {
bb0(%0: ptr):
  %1 = gep %0, 1, 4
  store 1, %1
  ret
}
"#,
        );
        unchanged(
            r#"
declare @g(ptr) -> void

func @f() -> void {
bb0:
  %0 = alloc [i32; 2]
  %1 = gep %0, 1, 4
  store 1, %1
  jump bb1(%0)
bb1(%2: ptr):
  call @g(%2)
  ret
}
"#,
        );
    }
}
