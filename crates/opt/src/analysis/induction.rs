//! Counted loops: rotated loops whose latch tests an induction variable, stepping
//! by a constant toward a loop-invariant bound, a view of the scalar evolution
//! ([`crate::analysis::scev`]) of the loop.
//!
//! A loop has the *rotated shape* when it has a preheader (a block entering only the
//! header), a single latch, the header's only predecessors are those two, and the
//! latch ends in a conditional branch with one arm back to the header and one leaving
//! the loop (what [`crate::passes::loops::looprotate`] produces from a `while` loop).
//!
//! Its *counter* is a header parameter `i` whose evolution is `{i0,+,d}` with `d` a
//! constant, and whose value before or after the step (the recurrence `{i0,+,d}` or
//! `{i0+d,+,d}`) the latch's exit test compares against a value defined outside
//! the loop, the loop continuing while `slt` or `sle` holds (`sgt` or `sge` for a
//! negative step). A test with `ne` counts too when the counter, stepping toward
//! the bound, meets it: the start and the bound are constants that show it, or
//! the step is one (up or down) and the tested value starts at or before the
//! bound whenever the loop is entered (the constant ranges the branches
//! dominating the loop give, [`ScalarEvolution::starts_toward_bound`]); it is
//! then the same test as `slt` (or `sgt`). The exit count of the test must hold without a
//! predicate ([`crate::analysis::scev::tripcount`]): the last value that passes the
//! test can step without passing the end of `i32`. (The one predicate an unknown
//! bound leaves, on an inclusive test by a unit step, is discharged by the memory
//! the loop accesses every iteration, see [`inclusive_never_wraps`].) Such a counter
//! never wraps around, so the values of `i` are exact integers, and the loop ends
//! after at most `(bound - i0) / d` iterations (it terminates). Strength reduction,
//! final value replacement and loop deletion rely on exactly these two facts; passes
//! that handle only a unit step check [`Counter::unit_step`].

use super::scev::{ExitTest, Predicate, ScalarEvolution};
use super::{LoopForest, LoopId};
use ir::analysis::ControlFlowGraph;
use ir::{Block, CmpOp, Function, Inst, InstKind, Value};

/// The blocks and edges of a rotated loop.
#[derive(Clone, Debug)]
pub struct RotatedLoop {
    pub header: Block,
    pub preheader: Block,
    pub latch: Block,
    /// The latch's conditional branch.
    pub branch: Inst,
    /// Which target of `branch` (0 or 1) goes back to the header; the other exits.
    pub back: usize,
}

impl RotatedLoop {
    /// The loop's shape, if it is rotated.
    pub fn of(
        f: &Function,
        cfg: &ControlFlowGraph,
        loops: &LoopForest,
        id: LoopId,
    ) -> Option<Self> {
        let lp = loops.get(id);
        let [latch] = lp.latches[..] else {
            return None;
        };
        let preheader = loops.preheader(id, cfg)?;
        let header = lp.header;
        if cfg.unique_preds(header).len() != 2 {
            return None;
        }
        let branch = f.terminator(latch)?;
        let InstKind::Br {
            then_dest,
            else_dest,
            ..
        } = f.kind(branch)
        else {
            return None;
        };
        let back = match (then_dest.block == header, else_dest.block == header) {
            (true, false) => 0,
            (false, true) => 1,
            _ => return None,
        };
        let exit = if back == 0 {
            else_dest.block
        } else {
            then_dest.block
        };
        if loops.contains(id, exit) {
            return None;
        }
        Some(RotatedLoop {
            header,
            preheader,
            latch,
            branch,
            back,
        })
    }

    /// The arguments the preheader passes to the header.
    pub fn init_args<'f>(&self, f: &'f Function) -> &'f [Value] {
        let t = f
            .terminator(self.preheader)
            .expect("preheader ends in a jump");
        &f.kind(t).targets()[0].args
    }

    /// The arguments the latch passes back to the header.
    pub fn next_args<'f>(&self, f: &'f Function) -> &'f [Value] {
        &f.kind(self.branch).targets()[self.back].args
    }

    /// The exit target's index in the latch's branch.
    pub fn exit(&self) -> usize {
        1 - self.back
    }
}

/// The counter of a rotated loop (see the module documentation).
#[derive(Copy, Clone, Debug)]
pub struct Counter {
    /// Index of the counter among the header's parameters.
    pub index: usize,
    /// The header parameter.
    pub param: Value,
    /// Its value on entry.
    pub init: Value,
    /// Its value for the next iteration (`param + step`).
    pub next: Value,
    /// The constant step: positive when the test is `slt`/`sle`, negative when
    /// it is `sgt`/`sge`.
    pub step: i32,
    /// What the latch compares the counter (`param` or `next`) with.
    pub bound: Value,
    /// Whether the latch tests `next` (otherwise `param`).
    pub tests_next: bool,
    /// Whether the test includes the bound (`sle`, `sge`; otherwise `slt`, `sgt`).
    pub inclusive: bool,
    /// How many times the body runs, when the scalar evolution finds it constant.
    trips: Option<i32>,
}

impl Counter {
    /// The counter of `l` as `se` describes it: the header parameter whose
    /// recurrence (or whose latch argument's) the latch tests, with a constant
    /// step toward a bound defined outside the loop, and an exit count that holds
    /// without a wrap. There is no other way to find one: a pass asks the
    /// analysis manager's scalar evolution (or builds one for the whole function),
    /// never one per loop.
    pub fn of_scev(se: &mut ScalarEvolution, id: LoopId, l: &RotatedLoop) -> Option<Self> {
        Self::find(se, id, l, false).map(|(c, _)| c)
    }

    /// The counter of `l` for a pass that enters the loop only under a run-time
    /// guard (loop versioning): that the first tested value is not past the
    /// bound (`init < bound` for `i + d < bound`, `init <= bound` for the others;
    /// mirrored counting down), and that the predicates returned hold (on the
    /// bound, as [`Predicate`]s of the exit count: `bound + inclusive <= MAX - d
    /// + 1` counting up, so that the last value passing the test steps without a
    /// wrap, LLVM's `PredicatedScalarEvolution`). Under both, the counter's first
    /// step is exact too (`init + d < bound + inclusive + d <= MAX + 1`), and
    /// every value the counter takes is an exact `i32`.
    pub fn of_scev_versioned(
        se: &mut ScalarEvolution,
        id: LoopId,
        l: &RotatedLoop,
    ) -> Option<(Self, Vec<Predicate>)> {
        Self::find(se, id, l, true)
    }

    /// [`Self::of_scev`], or [`Self::of_scev_versioned`] when `versioned`.
    fn find(
        se: &mut ScalarEvolution,
        id: LoopId,
        l: &RotatedLoop,
        versioned: bool,
    ) -> Option<(Self, Vec<Predicate>)> {
        let (f, loops) = (se.f, se.loops);
        let t = se.exit_test(id, l.latch)?;
        let bound = t.bound_value?;
        if f.value_block(bound).is_some_and(|b| loops.contains(id, b)) {
            return None;
        }
        let step = i32::try_from(t.step).ok()?;
        let (init, next) = (l.init_args(f), l.next_args(f));
        let params = f.block_params(l.header);
        let (index, tests_next) = (0..params.len()).find_map(|k| {
            if se.get(params[k]) == t.x {
                Some((k, false))
            } else {
                (se.get(next[k]) == t.x).then_some((k, true))
            }
        })?;
        let param = params[index];
        if tests_next
            && !versioned
            && !first_step_exact(se, id, init[index], step)
            && !header_indexes_memory(se, id, l, params[index])
        {
            return None;
        }
        let pe = se.get(param);
        let (pl, pops) = se.exprs.as_addrec(pe)?;
        if pl != id || pops.len() != 2 || se.exprs.as_const(pops[1]) != Some(t.step) {
            return None;
        }
        let inclusive = match (t.op, step > 0) {
            (CmpOp::Slt, true) | (CmpOp::Sgt, false) => false,
            (CmpOp::Sle, true) | (CmpOp::Sge, false) => true,
            (CmpOp::Ne, _) if meets_bound(se, &t) || se.starts_toward_bound(&t) => false,
            _ => return None,
        };
        let count = se.count_of_test(&t)?;
        if !count.predicates.is_empty() && !versioned {
            // Only an inclusive test by a unit step leaves a predicate (on the
            // bound), which the memory the loop accesses can discharge.
            let single_exit = || {
                loops.get(id).blocks.iter().all(|&b| {
                    b == l.latch || f.successors(b).iter().all(|&s| loops.contains(id, s))
                })
            };
            let discharged = inclusive
                && step.abs() == 1
                && inclusive_never_wraps(se, id, l, param, single_exit);
            if !discharged {
                return None;
            }
        }
        let trips = match count.predicates[..] {
            [] => se
                .exprs
                .as_const(count.count)
                .and_then(|k| i32::try_from(k + 1).ok()),
            _ => None,
        };
        let counter = Counter {
            index,
            param,
            init: init[index],
            next: next[index],
            step,
            bound,
            tests_next,
            inclusive,
            trips,
        };
        Some((counter, count.predicates))
    }

    /// How many times the body runs, when the scalar evolution finds a constant
    /// count (at least once: a rotated loop's guard decided the first iteration).
    pub fn trip_count(&self) -> Option<i32> {
        self.trips
    }

    /// Whether the counter steps by one (up or down).
    pub fn unit_step(&self) -> bool {
        self.step.abs() == 1
    }
}

/// Whether the counter's first step, from its value `init` on entry, stays in
/// `i32`. A latch testing the stepped value proves, through its exit count, that
/// the stepped values never wrap; the value on entry is not among them, and
/// stepping from it wraps for the one value at the end (`i32::MAX` counting up
/// by one: the counter then runs `i32::MAX, i32::MIN, ...`). Exact when `init` is
/// a constant, an exact recurrence of an outer loop, or bounded by the branches
/// before the loop (a guard `init < n` leaves room for a step of one).
fn first_step_exact(se: &mut ScalarEvolution, id: LoopId, init: Value, step: i32) -> bool {
    use std::cmp::Ordering::{Greater, Less};
    let (min, max) = (i64::from(i32::MIN), i64::from(i32::MAX));
    let step = i64::from(step);
    let e = se.get(init);
    if se.exprs.ty(e) != ir::Type::I32 {
        return false;
    }
    if let Some((lo, hi)) = se.exact_range(e) {
        if (min..=max).contains(&(lo + step)) && (min..=max).contains(&(hi + step)) {
            return true;
        }
    }
    // Below `max - step + 1` counting up, at or above `min - step` counting down.
    let (limit, below) = if step > 0 {
        (max - step + 1, true)
    } else {
        (min - step, false)
    };
    let limit = se.exprs.constant(ir::Type::I32, limit);
    let order = se.compare_at_entry(id, e, limit, 0);
    order == Some(if below { Less } else { Greater })
}

/// Whether a loop continuing while its tested recurrence differs from the bound
/// behaves as one continuing while it is below the bound (above it for a negative
/// step): the start and the bound are constants and the recurrence, stepping
/// toward the bound, meets it exactly instead of wrapping round (`while (n != 0)
/// { ...; n = n - 1; }` from a known `n`, the loop tail-recursion elimination makes
/// of a recursion that stops at 0).
fn meets_bound(se: &ScalarEvolution, t: &ExitTest) -> bool {
    let (Some(s), Some(n)) = (se.exprs.as_const(t.start), se.exprs.as_const(t.bound)) else {
        return false;
    };
    let span = n - s;
    span % t.step == 0 && span / t.step >= 0
}

/// Whether the counter `param` of a loop with an inclusive test by a unit step,
/// whose bound is unknown, cannot step past the end of `i32` (module
/// documentation): the header indexes memory by it ([`header_indexes_memory`]),
/// or (when the latch is the loop's only exit) accesses memory through a pointer
/// that advances by a constant each iteration (the counter would wrap only in a
/// loop that never ends, where the pointer leaves its object).
fn inclusive_never_wraps(
    se: &mut ScalarEvolution,
    id: LoopId,
    l: &RotatedLoop,
    param: Value,
    single_exit: impl Fn() -> bool,
) -> bool {
    if header_indexes_memory(se, id, l, param) {
        return true;
    }
    let f = se.f;
    let insts: Vec<Inst> = f.layout.block_insts(l.header).collect();
    insts.into_iter().any(|i| {
        let Some(ptr) = access_pointer(f, i) else {
            return false;
        };
        let pe = se.get(ptr);
        let marching = se.exprs.as_addrec(pe).is_some_and(|(pl, ops)| {
            pl == id && ops.len() == 2 && se.exprs.as_const(ops[1]).is_some_and(|c| c != 0)
        });
        marching && single_exit()
    })
}

/// Whether the header, which runs in every iteration the counter `param` takes
/// a value, accesses memory at `gep base, param + c, stride` with `base`
/// invariant and `c` small: the access is in bounds only while `param` is at
/// least `2^31 - 2^16` away from the end of `i32` it would wrap at, so no value
/// of it steps past that end.
fn header_indexes_memory(
    se: &mut ScalarEvolution,
    id: LoopId,
    l: &RotatedLoop,
    param: Value,
) -> bool {
    let (f, loops) = (se.f, se.loops);
    let invariant = |v: Value| f.value_block(v).is_none_or(|blk| !loops.contains(id, blk));
    let p = se.get(param);
    let insts: Vec<Inst> = f.layout.block_insts(l.header).collect();
    insts.into_iter().any(|i| {
        let Some(&InstKind::Gep {
            base,
            index,
            stride,
        }) = access_pointer(f, i)
            .and_then(|ptr| f.def_inst(ptr))
            .map(|g| f.kind(g))
        else {
            return false;
        };
        let ie = se.get(index);
        if se.exprs.ty(ie) != se.exprs.ty(p) {
            return false;
        }
        let offset = se.exprs.sub(loops, f, ie, p);
        stride >= 1
            && invariant(base)
            && se
                .exprs
                .as_const(offset)
                .is_some_and(|c| c.unsigned_abs() <= 1 << 16)
    })
}

/// The address a load or store accesses.
fn access_pointer(f: &Function, i: Inst) -> Option<Value> {
    match f.kind(i) {
        InstKind::Load { ptr, .. } | InstKind::Store { ptr, .. } => Some(*ptr),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::analysis::DominatorTree;

    fn counter_of(src: &str) -> Option<Counter> {
        let m = ir::parse_module(src).unwrap();
        let f = m
            .funcs
            .values()
            .find(|f| !f.is_declaration())
            .unwrap()
            .clone();
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        let loops = LoopForest::compute(&f, &cfg, &dt);
        let (id, _) = loops.loops().next().unwrap();
        let mut se = ScalarEvolution::new(&f, &cfg, &dt, &loops).without_ranges();
        RotatedLoop::of(&f, &cfg, &loops, id).and_then(|l| Counter::of_scev(&mut se, id, &l))
    }

    const LOOP: &str = r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(3, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, %1
  %4 = add %1, 1
  %5 = slt %4, 10
  br %5, bb1(%4, %3), bb2
bb2:
  ret %3
}
"#;

    #[test]
    fn finds_the_counter_and_its_trip_count() {
        let c = counter_of(LOOP);
        let c = c.expect("a counter");
        assert_eq!((c.index, c.step, c.tests_next), (0, 1, true));
        assert_eq!(c.trip_count(), Some(7)); // i = 3..=9
        let c = counter_of(&LOOP.replace("slt %4, 10", "slt %1, 10"));
        assert_eq!(c.unwrap().trip_count(), Some(8)); // i = 3..=10
        let c = counter_of(&LOOP.replace("slt %4, 10", "slt %4, %0"));
        assert_eq!(c.unwrap().trip_count(), None);
        // Mirror image: counting down while above the bound, arms swapped.
        let down = LOOP
            .replace("add %1, 1", "add %1, -1")
            .replace("slt %4, 10", "sle %4, -5")
            .replace("br %5, bb1(%4, %3), bb2", "br %5, bb2, bb1(%4, %3)");
        let c = counter_of(&down);
        assert_eq!(c.unwrap().trip_count(), Some(8)); // i = 3..=-4
    }

    #[test]
    fn no_counter_when_the_variable_could_wrap() {
        for (from, to) in [
            // A step that is not a constant.
            ("add %1, 1", "add %1, %0"),
            // From 3, `i + 1 != 2` holds until `i` wraps round to 1.
            ("slt %4, 10", "ne %4, 2"),
            ("slt %4, 10", "ne %4, %0"),
            ("slt %4, 10", "sle %4, 2147483647"),
            ("slt %4, 10", "sle %4, %0"),
        ] {
            let c = counter_of(&LOOP.replace(from, to));
            assert!(c.is_none(), "{from} -> {to}");
        }
        let down = LOOP
            .replace("add %1, 1", "add %1, -1")
            .replace("slt %4, 10", "sge %4, -2147483648");
        assert!(counter_of(&down).is_none());
    }

    #[test]
    fn any_constant_step_counts_when_it_cannot_wrap() {
        let by = |d: i32, test: &str| {
            LOOP.replace("add %1, 1", &format!("add %1, {d}"))
                .replace("slt %4, 10", test)
        };
        // i = 3, 5, 7, 9 (i + 2 = 11 fails).
        let c = counter_of(&by(2, "slt %4, 10"));
        let c = c.expect("a counter");
        assert_eq!((c.step, c.trip_count()), (2, Some(4)));
        assert!(!c.unit_step());
        // i = 3, 6, 9, 12 (tested before the step: 12 <= 10 fails after the body).
        let c = counter_of(&by(3, "sle %1, 10"));
        assert_eq!(c.expect("a counter").trip_count(), Some(4));
        // Down by 4 from 3 while i - 4 >= -13: i = 3, -1, -5, -9, -13.
        let c = counter_of(&by(-4, "sge %4, -13"));
        let c = c.expect("a counter");
        assert_eq!((c.step, c.inclusive, c.trip_count()), (-4, true, Some(5)));
        // `!=` meets the bound: 3 + 2k = 11.
        let c = counter_of(&by(2, "ne %4, 11"));
        assert_eq!(c.expect("a counter").trip_count(), Some(4));
        // ... or steps over it and wraps.
        assert!(counter_of(&by(2, "ne %4, 10")).is_none());
        // Up to an unknown bound: `i + 2` passes the end of `i32` when the bound is
        // `i32::MAX`, and a bound near it is as bad.
        assert!(counter_of(&by(2, "slt %4, %0")).is_none());
        assert!(counter_of(&by(2, "slt %4, 2147483647")).is_none());
        assert!(counter_of(&by(2, "slt %4, 2147483646")).is_some());
        // Moving away from the bound.
        assert!(counter_of(&by(-2, "slt %4, 10")).is_none());
    }

    #[test]
    fn a_not_equal_test_that_meets_its_bound_counts() {
        // From 3 up while `i + 1 != 10`: i = 3..=9, as with `slt`.
        let c = counter_of(&LOOP.replace("slt %4, 10", "ne %4, 10"));
        assert_eq!(c.expect("a counter").trip_count(), Some(7));
        // Testing `i` itself: from 3 while `i != 3` runs once (the rotated loop's
        // first iteration), and `i != 4` twice.
        let c = counter_of(&LOOP.replace("slt %4, 10", "ne %1, 3"));
        assert_eq!(c.expect("a counter").trip_count(), Some(1));
        let c = counter_of(&LOOP.replace("slt %4, 10", "ne %1, 4"));
        assert_eq!(c.expect("a counter").trip_count(), Some(2));
        // Counting down to 0 and leaving on `eq` (arms swapped), as
        // tail-recursion elimination leaves `if (n == 0) return acc;`.
        let down = LOOP
            .replace("add %1, 1", "add %1, -1")
            .replace("slt %4, 10", "eq %4, 0")
            .replace("br %5, bb1(%4, %3), bb2", "br %5, bb2, bb1(%4, %3)");
        let c = counter_of(&down);
        assert_eq!(c.expect("a counter").trip_count(), Some(3)); // i = 3, 2, 1
                                                                 // Counting down from 3 while `i - 1 != 5` never meets 5.
        let c = counter_of(&down.replace("eq %4, 0", "eq %4, 5"));
        assert!(c.is_none());
    }

    /// `if (n GUARD) { i = START; do { s += i; i += STEP; } while (TEST); }`.
    fn guarded(guard: &str, start: &str, step: i32, test: &str) -> String {
        format!(
            r#"
func @f(i32) -> i32 {{
bb0(%0: i32):
  %9 = {guard}
  br %9, bb3, bb2(0)
bb3:
  jump bb1({start}, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, %1
  %4 = add %1, {step}
  %5 = {test}
  br %5, bb1(%4, %3), bb2(%3)
bb2(%6: i32):
  ret %6
}}
"#
        )
    }

    #[test]
    fn a_not_equal_test_from_a_start_a_guard_orders_counts() {
        // Up from 0 while `i + 1 != n`, entered when `n > 0`: 1 <= n.
        let c = counter_of(&guarded("sgt %0, 0", "0", 1, "ne %4, %0"));
        let c = c.expect("a counter");
        assert_eq!((c.step, c.inclusive, c.trip_count()), (1, false, None));
        // Testing `i` itself needs only `n >= 0`.
        assert!(counter_of(&guarded("sge %0, 0", "0", 1, "ne %1, %0")).is_some());
        // Down from `n` to 0, entered when `n > 0` (`n - 1 >= 0`).
        let c = counter_of(&guarded("sgt %0, 0", "%0", -1, "ne %4, 0"));
        assert_eq!(c.expect("a counter").step, -1);
        assert!(counter_of(&guarded("sge %0, 1", "%0", -1, "ne %4, 0")).is_some());
    }

    /// A latch testing `i + 1` proves that the stepped values do not wrap, not
    /// that the first step does: from `i = n` with `n` unbounded, `i32::MAX + 1`
    /// wraps (difftest of loopsplit found it). A guard bounding `n` from above,
    /// by a constant or by another value (`n < m`), makes the counter exact.
    #[test]
    fn a_counter_tested_after_its_step_needs_a_first_step_without_wrap() {
        assert!(counter_of(&guarded("ne %0, 0", "%0", 1, "slt %4, 100")).is_none());
        assert!(counter_of(&guarded("sgt %0, 5", "%0", 1, "slt %4, 100")).is_none());
        assert!(counter_of(&guarded("slt %0, 100", "%0", 1, "slt %4, 100")).is_some());
        // Down by 3 from `n >= -2147483645` stays above `i32::MIN`; from -2147483646
        // it would not.
        let down = |guard| counter_of(&guarded(guard, "%0", -3, "sgt %4, -2000000000"));
        assert!(down("sge %0, -2147483645").is_some());
        assert!(down("sge %0, -2147483646").is_none());
        // `n < m` leaves room for one step up, whatever `m` is.
        let ordered = |guard: &str| {
            guarded(guard, "%0", 1, "slt %4, %7").replace(
                "func @f(i32) -> i32 {\nbb0(%0: i32):",
                "func @f(i32, i32) -> i32 {\nbb0(%0: i32, %7: i32):",
            )
        };
        assert!(counter_of(&ordered("slt %0, %7")).is_some());
        assert!(counter_of(&ordered("sgt %7, %0")).is_some());
        assert!(counter_of(&ordered("sle %0, %7")).is_none());
    }

    #[test]
    fn a_not_equal_test_that_may_start_past_its_bound_does_not_count() {
        for (guard, start, step, test) in [
            // `n = 0`: `i + 1` starts at 1 and wraps round before it meets 0.
            ("sge %0, 0", "0", 1, "ne %4, %0"),
            // No order from the guard.
            ("ne %0, 0", "0", 1, "ne %4, %0"),
            ("slt %0, 100", "0", 1, "ne %1, %0"),
            // Down from `n = 0`: `n - 1` is below 0.
            ("sge %0, 0", "%0", -1, "ne %4, 0"),
            // Up from `n > 0` to 0 moves away from it.
            ("sgt %0, 0", "%0", 1, "ne %4, 0"),
            // A step of 2 could step over the bound.
            ("sgt %0, 0", "0", 2, "ne %4, %0"),
        ] {
            let c = counter_of(&guarded(guard, start, step, test));
            assert!(c.is_none(), "{guard} {start} {step} {test}");
        }
    }

    #[test]
    fn inclusive_tests_count_one_more() {
        let c = counter_of(&LOOP.replace("slt %4, 10", "sle %4, 10"));
        let c = c.expect("a counter");
        assert!(c.inclusive);
        assert_eq!(c.trip_count(), Some(8)); // i = 3..=10
        let c = counter_of(&LOOP.replace("slt %4, 10", "sle %1, 10"));
        assert_eq!(c.unwrap().trip_count(), Some(9)); // i = 3..=11
        let down = LOOP
            .replace("add %1, 1", "add %1, -1")
            .replace("slt %4, 10", "sge %4, -5");
        let c = counter_of(&down);
        assert_eq!(c.unwrap().trip_count(), Some(9)); // i = 3..=-5
    }

    /// `while (i <= n) s += a[i + c]` with `n` unknown.
    fn accessing(offset: i32) -> String {
        format!(
            r#"
global @a: [i32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
func @f(i32) -> i32 {{
bb0(%0: i32):
  jump bb1(3, 0)
bb1(%1: i32, %2: i32):
  %6 = add %1, {offset}
  %7 = gep @a, %6, 4
  %8 = load i32, %7
  %3 = add %2, %8
  %4 = add %1, 1
  %5 = sle %4, %0
  br %5, bb1(%4, %3), bb2
bb2:
  ret %3
}}
"#
        )
    }

    #[test]
    fn an_access_every_iteration_keeps_an_inclusive_counter_from_wrapping() {
        for offset in [-3, 0, 5, 65536, -65536] {
            let c = counter_of(&accessing(offset));
            assert!(c.is_some_and(|c| c.inclusive), "offset {offset}");
        }
        // A far offset could reach back into the object after the wrap.
        for offset in [65537, -2147483000] {
            let c = counter_of(&accessing(offset));
            assert!(c.is_none(), "offset {offset}");
        }
        // A varying base proves nothing.
        let varying = accessing(0).replace(
            "%7 = gep @a, %6, 4",
            "%9 = gep @a, %2, 4\n  %7 = gep %9, %6, 4",
        );
        assert!(counter_of(&varying).is_none());
    }

    /// After strength reduction: `while (i <= n) { s += *p; p++; }` with `n` unknown.
    const MARCHING: &str = r#"
global @a: [i32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
func @f(i32) -> i32 {
bb0(%0: i32):
  %9 = gep @a, 0, 4
  jump bb1(3, 0, %9)
bb1(%1: i32, %2: i32, %10: ptr):
  %8 = load i32, %10
  %3 = add %2, %8
  %4 = add %1, 1
  %11 = gep %10, 1, 4
  %5 = sle %4, %0
  br %5, bb1(%4, %3, %11), bb2
bb2:
  ret %3
}
"#;

    #[test]
    fn a_marching_pointer_keeps_an_inclusive_counter_from_wrapping() {
        let c = counter_of(MARCHING);
        assert!(c.is_some_and(|c| c.inclusive));
        // A pointer that stays put proves nothing.
        let still = MARCHING.replace("gep %10, 1, 4", "gep %10, 0, 4");
        assert!(counter_of(&still).is_none());
        // Nor one that marches when the loop has another way out.
        let exits = MARCHING
            .replace(
                "  %8 = load i32, %10\n",
                "  %8 = load i32, %10\n  %20 = eq %8, 99\n  br %20, bb2, bb3\nbb3:\n",
            )
            .replace("bb2:\n  ret %3", "bb2:\n  ret 0");
        let m = ir::parse_module(&exits).unwrap();
        ir::verify_module(&m).unwrap();
        let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let loops = LoopForest::compute(f, &cfg, &dt);
        let (id, _) = loops.loops().next().unwrap();
        let l = RotatedLoop::of(f, &cfg, &loops, id).unwrap();
        let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops).without_ranges();
        assert!(Counter::of_scev(&mut se, id, &l).is_none());
    }
}
