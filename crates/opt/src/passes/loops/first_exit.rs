//! Exit tests only the first iteration can take: a loop leaves when its counter
//! compares beyond a loop-invariant bound, on the side the counter moves away
//! from. If the test lets the first iteration through, every later one is further
//! away and passes too; if it does not, the first iteration leaves. So the test
//! may ask the counter's start instead, which is invariant, and trivial
//! unswitching ([`super::trivial_unswitch`]) then takes it out of the loop.
//!
//! ```text
//!   pre:  jump h(n, 0)                    pre:  %f = sgt n, 625
//!   h(%d, %s):                                  jump h(n, 0)
//!     %e = sgt %d, 625              =>    h(%d, %s):
//!     br %e, exit(%s), body                 br %f, exit(%s), body
//!   body: ... jump h(%d - 1, ...)         body: ... jump h(%d - 1, ...)
//! ```
//!
//! A recursion bounded at both ends (`if (d <= 0 || d > 625) return ..;
//! return d + f(d - 1);`) becomes such a loop once its tail call is a loop: the
//! upper bound can only stop the first call. With the test out of the loop, the
//! loop is a counted one that closed forms and loop deletion understand.
//!
//! This is LLVM's IndVarSimplify `optimizeLoopExits`, which replaces an exit
//! condition by the invariant one ScalarEvolution's
//! `getLoopInvariantExitCondDuringFirstIterations` gives. The exit test is the
//! scalar evolution's ([`ScalarEvolution::exit_test`]), so any value it describes
//! as an affine recurrence of the loop may be tested: the header parameter, the
//! value after the step (`d - 1 > 624`), `2 * d + n`, compared either way round
//! with a loop-invariant bound. Conditions checked here:
//! - one block outside the loop enters it, by one edge;
//! - the exiting block is in no inner loop and dominates every latch (each
//!   iteration that goes on has passed the test);
//! - its branch is on a signed comparison of an `i32` value that evolves as an
//!   affine recurrence `{start,+,step}<loop>` with a constant step, against a
//!   bound invariant in the loop, and the exit is taken when the value is above the
//!   bound with `step < 0`, or below it with `step > 0`;
//! - no iteration wraps the recurrence around: the scalar evolution proves it
//!   exact ([`ScalarEvolution::is_exact`]), or the branches on the way to every
//!   latch confine the tested value to where the step cannot wrap;
//! - the first value and the bound are values defined before the loop, the
//!   header's arguments from the preheader, or expressions of them the scalar
//!   evolution can expand there (at most [`EXPANSION_BUDGET`] instructions).

use crate::analysis::scev::expand::{remove_emitted, Expander, Operand};
use crate::analysis::scev::{ExprId, ScalarEvolution};
use crate::analysis::{FunctionAnalyses, LoopId, Preserved};
use crate::passes::scalar::jumpthread::facts_on_edge_below;
use crate::passes::value_numbering::condprop::facts::Facts;
use crate::pipeline::FunctionTransform;
use ir::{Block, BlockCall, CmpOp, Function, Inst, InstKind, Type, Value};

/// The pass.
pub struct FirstExit;

impl FunctionTransform for FirstExit {
    const NAME: &'static str = "firstexit";
    const DESCRIPTION: &'static str =
        "test the counter's start in a loop exit only the first iteration can take";
    /// Replaces branch conditions: no block or edge changes.
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// Rewrites the qualifying exits of `f`; returns how many.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// At most this many instructions compute the operands of one new comparison.
const EXPANSION_BUDGET: usize = 8;

/// One exit to rewrite: its branch gets `op(args)`, the exit's comparison asked
/// of the values on the first iteration, computed before the preheader's
/// terminator.
struct Rewrite {
    branch: Inst,
    pre: Block,
    pre_jump: Inst,
    op: CmpOp,
    args: [Operand; 2],
}

fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    if f.is_declaration() {
        return 0;
    }
    // The exit tests first from the manager's scalar evolution, which has no value
    // ranges: only when some exit may be one the first iteration alone takes is
    // the analysis built again with them (they prove recurrences exact).
    if !may_have_first_only_exits(&mut fa.scev(f)) {
        return 0;
    }
    let (rewrites, exprs) = {
        let (cfg, dt, loops) = fa.loops(f);
        let mut se = ScalarEvolution::new(f, cfg, dt, loops);
        let ids: Vec<LoopId> = se.loops.loops().map(|(id, _)| id).collect();
        let mut found = Vec::new();
        for id in ids {
            found.extend(exits_of(&mut se, id));
        }
        (found, std::mem::take(&mut se.exprs))
    };
    let dt = fa.loops(f).1;
    let mut done = 0;
    for r in &rewrites {
        let available =
            |f: &Function, v: Value| f.value_block(v).is_none_or(|b| dt.dominates(b, r.pre));
        let emitted_after = f.layout.prev_inst(r.pre_jump);
        let mut ex = Expander::new(&exprs, r.pre_jump, r.pre_jump, EXPANSION_BUDGET);
        let [a, b] = r.args;
        let args = a
            .value(f, &mut ex, &available)
            .zip(b.value(f, &mut ex, &available));
        let Some((a, b)) = args else {
            remove_emitted(f, emitted_after, r.pre_jump);
            continue;
        };
        let c = f.insert_inst_before(
            r.pre_jump,
            InstKind::Cmp {
                op: r.op,
                args: [a, b],
            },
            Type::I32,
        );
        let c = f.inst_result(c).expect("a comparison has a result");
        let mut kind = f.kind(r.branch).clone();
        if let InstKind::Br { cond, .. } = &mut kind {
            *cond = c;
        }
        f.replace_kind(r.branch, kind);
        done += 1;
    }
    done
}

/// Whether some exiting block of a loop of `se` may pass [`first_only_exit`]: its
/// exit test is not found, or it is an `i32` test the loop leaves on the side
/// its recurrence moves away from. Value ranges change whether a recurrence is
/// exact, never its step or the test's comparison, so `se` may be without them.
fn may_have_first_only_exits(se: &mut ScalarEvolution) -> bool {
    let ids: Vec<LoopId> = se.loops.loops().map(|(id, _)| id).collect();
    ids.into_iter().any(|id| {
        se.exiting_blocks(id)
            .into_iter()
            .any(|b| match se.exit_test(id, b) {
                None => true,
                Some(t) => se.exprs.ty(t.x) == Type::I32 && moves_away(t.op, t.step),
            })
    })
}

/// Whether a loop continuing while `x op bound`, with `x` stepping by `step`,
/// leaves on the side `x` moves away from.
fn moves_away(op: CmpOp, step: i64) -> bool {
    match op {
        CmpOp::Slt | CmpOp::Sle => step < 0,
        CmpOp::Sgt | CmpOp::Sge => step > 0,
        _ => false,
    }
}

/// The exits of loop `id` that only its first iteration can take.
fn exits_of(se: &mut ScalarEvolution, id: LoopId) -> Vec<Rewrite> {
    let (f, cfg, loops) = (se.f, se.cfg, se.loops);
    let header = loops.get(id).header;
    // The one block entering the loop.
    let mut outside = cfg
        .unique_preds(header)
        .into_iter()
        .filter(|&p| !loops.contains(id, p));
    let (Some(pre), None) = (outside.next(), outside.next()) else {
        return Vec::new();
    };
    let Some(pre_jump) = f.terminator(pre) else {
        return Vec::new();
    };
    // The preheader's one edge into the loop (it may branch elsewhere too: the
    // new comparison, computed before its branch, cannot trap).
    let mut into = f
        .kind(pre_jump)
        .targets()
        .into_iter()
        .filter(|t| t.block == header);
    let (Some(entry), None) = (into.next(), into.next()) else {
        return Vec::new();
    };
    se.exiting_blocks(id)
        .into_iter()
        .filter_map(|b| first_only_exit(se, id, b, entry))
        .map(|(branch, op, args)| Rewrite {
            branch,
            pre,
            pre_jump,
            op,
            args,
        })
        .collect()
}

/// The branch ending `b`, an exiting block of `id`, with the comparison to
/// put in its place (operator and operands), when only the loop's first
/// iteration can take its exit: the block's exit test
/// ([`ScalarEvolution::exit_test`], of a block every iteration runs) compares
/// an affine recurrence that never wraps with an invariant bound, and the loop
/// leaves on the side the recurrence moves away from. `entry` is the edge
/// entering the loop.
fn first_only_exit(
    se: &mut ScalarEvolution,
    id: LoopId,
    b: Block,
    entry: &BlockCall,
) -> Option<(Inst, CmpOp, [Operand; 2])> {
    let f = se.f;
    let t = se.exit_test(id, b)?;
    if se.exprs.ty(t.x) != Type::I32 {
        return None;
    }
    // The loop continues while `x op bound`: on the side `x` leaves behind.
    if !moves_away(t.op, t.step)
        || !(se.is_exact(t.x) || steps_without_wrap(f, &*se, id, t.tested, t.step))
    {
        return None;
    }
    let branch = f.terminator(b)?;
    let InstKind::Br { cond, .. } = f.kind(branch) else {
        return None;
    };
    // The branch keeps its orientation: the new comparison asks the old
    // question of the values on the first iteration.
    let &InstKind::Cmp { op, args } = f.kind(f.def_inst(*cond)?) else {
        return None;
    };
    let [a, b] = args.map(|v| {
        let e = if v == t.tested { t.start } else { t.bound };
        at_entry(se, id, v, e, entry)
    });
    Some((branch, op, [a?, b?]))
}

/// The value `v`, a value of loop `id` whose evolution on the loop's first
/// iteration is `e` (invariant in the loop), takes on that iteration: `v`
/// itself when defined outside the loop, the header's argument on `entry` for
/// one of its parameters, else `e` (with the recurrences of loops around `id`
/// written with their header parameters) to expand before the loop.
fn at_entry(
    se: &mut ScalarEvolution,
    id: LoopId,
    v: Value,
    e: ExprId,
    entry: &BlockCall,
) -> Option<Operand> {
    let (f, loops) = (se.f, se.loops);
    let header = loops.get(id).header;
    match f.value_block(v) {
        Some(b) if loops.contains(id, b) => {}
        _ => return Some(Operand::Value(v)),
    }
    if let Some(k) = f.block_params(header).iter().position(|&p| p == v) {
        return Some(Operand::Value(entry.args[k]));
    }
    se.with_header_parameters(e, id).map(Operand::Expr)
}

/// Whether every latch of `id` steps `x` by `step` without wrapping: the facts
/// of the branches on the way to each latch confine `x` (a value of the
/// iteration: defined in a block every latch is dominated by) to an interval
/// the step cannot leave `i32` from. A loop leaving when its counter drops to 0
/// or exceeds a bound steps down from `[1, bound]` whatever the counter
/// started at: the iterations that go on never wrap, though the value ranges of
/// the whole function cannot tell (the start is any `i32`).
fn steps_without_wrap(f: &Function, se: &ScalarEvolution, id: LoopId, x: Value, step: i64) -> bool {
    let lp = se.loops.get(id);
    lp.latches.iter().all(|&l| {
        // Only the branches below the header compare a value of the iteration.
        let facts = facts_on_edge_below(f, se.cfg, se.dt, l, lp.header, Some(lp.header));
        facts.interval(f, x).is_some_and(|(lo, hi)| {
            let (lo, hi) = (lo + step, hi + step);
            lo >= i64::from(i32::MIN) && hi <= i64::from(i32::MAX)
        })
    })
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `while (d > 0) { if (d LIMIT) break; s += d; d += STEP; }` after loop
    /// rotation, in `@f`, called with two read integers.
    fn program(limit: &str, step: i32) -> String {
        format!(
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @f(i32, i32) -> i32 {{
bb0(%0: i32, %1: i32):
  %2 = sgt %0, 0
  br %2, bb1(%0, 0), bb3(0)
bb1(%3: i32, %4: i32):
  %5 = {limit}
  br %5, bb3(%4), bb2
bb2:
  %6 = add %3, {step}
  %7 = add %4, %3
  %8 = sgt %6, 0
  br %8, bb1(%6, %7), bb3(%7)
bb3(%9: i32):
  ret %9
}}

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = call @f(%0, %1)
  call @putint(%2)
  ret 0
}}
"#
        )
    }

    /// Whether [`super::may_have_first_only_exits`] holds of `@f` in `src`, with
    /// the scalar evolution of the analysis manager (no value ranges).
    fn may_have_first_only_exits(src: &str) -> bool {
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().find(|f| f.name == "f").unwrap();
        let mut fa = crate::analysis::FunctionAnalyses::default();
        super::may_have_first_only_exits(&mut fa.scev(f))
    }

    #[test]
    fn only_exits_a_counter_moves_away_from_or_unknown_ones_call_for_value_ranges() {
        // The counter falls: an upper bound it leaves above, or a latch leaving
        // at zero from above with a rising counter, may be first-only exits.
        assert!(may_have_first_only_exits(&program("sgt %3, 625", -1)));
        assert!(may_have_first_only_exits(&program("sgt %3, 625", 1)));
        // A test of something that is no recurrence against an invariant: not
        // understood, so asked again with ranges.
        assert!(may_have_first_only_exits(&program("slt %3, %4", -1)));
        // Falling towards both exits' bounds: nothing to find, no ranges solved.
        assert!(!may_have_first_only_exits(&program("slt %3, 625", -1)));
    }

    #[test]
    fn an_upper_bound_a_falling_counter_can_only_cross_first_is_tested_on_its_start() {
        let inputs = ["5 0", "700 0", "626 0", "625 0", "0 0", "40 30", "40 50"];
        for (limit, step) in [("sgt %3, 625", -1), ("sge %3, %1", -2), ("slt %1, %3", -1)] {
            for input in inputs {
                let out = same_behaviour(&program(limit, step), &["firstexit"], input);
                let f = &out[..out.find("func @main").unwrap()];
                // The loop's branch reads a comparison computed in the entry.
                let entry = &f[..f.find("bb1(").unwrap()];
                let cmp = entry.lines().rev().find(|l| l.contains(" = s")).unwrap();
                let name = cmp.trim().split(' ').next().unwrap();
                assert!(f.contains(&format!("br {name}, bb3(")), "{out}");
            }
        }
    }

    /// [`program`] testing the counter's value after the step, `%6`, by `limit`
    /// and passing it back while `latch` holds of it.
    fn after_the_step(limit: &str, step: i32, latch: &str) -> String {
        program(limit, step)
            .replace(&format!("bb2:\n  %6 = add %3, {step}\n"), "bb2:\n")
            .replace(
                "bb1(%3: i32, %4: i32):\n",
                &format!("bb1(%3: i32, %4: i32):\n  %6 = add %3, {step}\n"),
            )
            .replace("%8 = sgt %6, 0", &format!("%8 = {latch}"))
    }

    #[test]
    fn a_bound_the_value_after_the_step_can_only_cross_first_is_tested_on_its_start() {
        let inputs = ["5 0", "700 0", "626 0", "625 0", "1 0", "40 30", "40 38"];
        for (limit, step) in [("sgt %6, 624", -1), ("sge %6, %1", -2), ("slt %1, %6", -1)] {
            let src = after_the_step(limit, step, "sgt %6, 0");
            for input in inputs {
                let out = same_behaviour(&src, &["firstexit"], input);
                let f = &out[..out.find("func @main").unwrap()];
                // The entry computes the first value after the step, the loop's
                // branch reads its comparison.
                let entry = &f[..f.find("bb1(").unwrap()];
                assert!(entry.contains(&format!("add %0, {step}")), "{out}");
                let cmp = entry.lines().rev().find(|l| l.contains(" = s")).unwrap();
                let name = cmp.trim().split(' ').next().unwrap();
                assert!(f.contains(&format!("br {name}, bb3(")), "{out}");
            }
        }
    }

    #[test]
    fn a_bound_the_counter_moves_towards_or_a_test_not_on_every_iteration_stays() {
        // Must not: the counter rises towards the bound; `!=` is no side; the
        // counter may wrap (it starts anywhere and the loop does not bound it).
        for (limit, step) in [("sgt %3, 625", 1), ("ne %3, 625", -1)] {
            let out = run(&program(limit, step), &["firstexit"]);
            assert!(
                out.contains(&format!("%5 = {limit}")) && out.contains("br %5"),
                "{out}"
            );
        }
        let unbounded = program("sgt %3, 625", -1).replace("%8 = sgt %6, 0", "%8 = ne %6, 7");
        assert_tests_the_counter(&run(&unbounded, &["firstexit"]));
        // Must not: the value after the step may wrap round (the loop does not
        // bound it from below) and then pass 625 again.
        let after = after_the_step("sgt %6, 625", -1, "ne %6, 7");
        assert_tests_the_counter(&run(&after, &["firstexit"]));
        // Must not: the test sits on one arm of a branch in the loop, which an
        // iteration may skip (it does not dominate the latch).
        let skipped = program("sgt %3, 625", -1)
            .replace(
                "bb0(%0: i32, %1: i32):\n",
                "bb0(%0: i32, %1: i32):\n  %10 = slt %1, 3\n",
            )
            .replace(
                "  %5 = sgt %3, 625\n  br %5, bb3(%4), bb2\n",
                "  br %10, bb4, bb2\nbb4:\n  %5 = sgt %3, 625\n  br %5, bb3(%4), bb2\n",
            );
        assert_tests_the_counter(&run(&skipped, &["firstexit"]));
    }

    /// The exit still branches on the comparison of the counter with 625.
    #[track_caller]
    fn assert_tests_the_counter(out: &str) {
        let cmp = out.lines().find(|l| l.ends_with(", 625")).expect(out);
        let name = cmp.trim().split(' ').next().unwrap();
        assert!(out.contains(&format!("br {name}, ")), "{out}");
    }
}
