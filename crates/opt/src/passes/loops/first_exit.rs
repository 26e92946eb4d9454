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
//! `getLoopInvariantExitCondDuringFirstIterations` gives. Conditions checked here:
//! - one block outside the loop enters it, by one edge;
//! - the exiting block dominates every latch (each iteration that goes on has
//!   passed the test);
//! - the test is a signed comparison of a header parameter with a value defined
//!   outside the loop;
//! - scalar evolution describes the parameter as an affine recurrence
//!   `{start,+,step}<loop>` with a constant step that no iteration wraps around
//!   (the recurrence is exact, or the branches on the way to every latch confine
//!   the parameter to where the step cannot wrap), and the exit is taken when it
//!   is above the bound with `step < 0`, or below it with `step > 0`.

use crate::analysis::scev::ScalarEvolution;
use crate::analysis::{FunctionAnalyses, LoopId, Preserved};
use crate::passes::scalar::jumpthread::facts_on_edge_below;
use crate::passes::value_numbering::condprop::facts::Facts;
use crate::pipeline::FunctionTransform;
use ir::{CmpOp, Function, Inst, InstKind, Type, Value};

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

/// One exit to rewrite: its branch gets `op(start, bound)`, computed before the
/// preheader's terminator.
struct Rewrite {
    branch: Inst,
    pre_jump: Inst,
    op: CmpOp,
    start: Value,
    bound: Value,
}

fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let rewrites = {
        // With value ranges, which prove recurrences exact (the manager's
        // analysis has none).
        let (cfg, dt, loops) = fa.loops(f);
        let mut se = ScalarEvolution::new(f, cfg, dt, loops);
        let ids: Vec<LoopId> = se.loops.loops().map(|(id, _)| id).collect();
        let mut found = Vec::new();
        for id in ids {
            found.extend(exits_of(&mut se, id));
        }
        found
    };
    for r in &rewrites {
        let c = f.insert_inst_before(
            r.pre_jump,
            InstKind::Cmp {
                op: r.op,
                args: [r.start, r.bound],
            },
            Type::I32,
        );
        let c = f.inst_result(c).expect("a comparison has a result");
        let mut kind = f.kind(r.branch).clone();
        if let InstKind::Br { cond, .. } = &mut kind {
            *cond = c;
        }
        f.replace_kind(r.branch, kind);
    }
    rewrites.len()
}

/// The exits of loop `id` that only its first iteration can take.
fn exits_of(se: &mut ScalarEvolution, id: LoopId) -> Vec<Rewrite> {
    let (f, cfg, dt, loops) = (se.f, se.cfg, se.dt, se.loops);
    let lp = loops.get(id);
    let header = lp.header;
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
    let params = f.block_params(header);
    let outside = |v: Value| match f.value_block(v) {
        Some(b) => !loops.contains(id, b),
        None => true,
    };
    let mut found = Vec::new();
    // The blocks that leave the loop, found for every loop at once (asking each
    // loop's blocks is quadratic in a deep nest).
    for b in se.exiting_blocks(id) {
        let Some(t) = f.terminator(b) else { continue };
        let InstKind::Br {
            cond,
            then_dest,
            else_dest,
        } = f.kind(t)
        else {
            continue;
        };
        let exit_on_true = match (
            loops.contains(id, then_dest.block),
            loops.contains(id, else_dest.block),
        ) {
            (false, true) => true,
            (true, false) => false,
            _ => continue,
        };
        if !lp.latches.iter().all(|&l| dt.dominates(b, l)) {
            continue;
        }
        let Some(InstKind::Cmp { op, args: [x, y] }) = f.def_inst(*cond).map(|i| f.kind(i)) else {
            continue;
        };
        // `param op bound`, the parameter on the left.
        let (k, op, bound) = match (
            params.iter().position(|&p| p == *x),
            params.iter().position(|&p| p == *y),
        ) {
            (Some(k), None) if outside(*y) => (k, *op, *y),
            (None, Some(k)) if outside(*x) => (k, op.swapped(), *x),
            _ => continue,
        };
        if f.value_type(params[k]) != Type::I32 {
            continue;
        }
        let Some(step) = se.constant_step(params[k], id) else {
            continue;
        };
        let e = se.get(params[k]);
        if !se.exprs.exact(e) && !steps_without_wrap(f, se, id, params[k], step) {
            continue;
        }
        // The comparison that leaves the loop.
        let leaves = if exit_on_true { Some(op) } else { op.inverse() };
        let away = match leaves {
            Some(CmpOp::Sgt | CmpOp::Sge) => step < 0,
            Some(CmpOp::Slt | CmpOp::Sle) => step > 0,
            _ => false,
        };
        if !away {
            continue;
        }
        let (start, bound) = if params[k] == *x {
            (entry.args[k], bound)
        } else {
            (bound, entry.args[k])
        };
        // The branch keeps its orientation: the new comparison asks the old
        // question of the start.
        let op = if params[k] == *x { op } else { op.swapped() };
        found.push(Rewrite {
            branch: t,
            pre_jump,
            op,
            start,
            bound,
        });
    }
    found
}

/// Whether every latch of `id` steps `param` by `step` without wrapping: the
/// facts of the branches on the way to each latch confine `param` to an interval
/// the step cannot leave `i32` from. A loop leaving when its counter drops to 0
/// or exceeds a bound steps down from `[1, bound]` whatever the counter
/// started at: the iterations that go on never wrap, though the value ranges of
/// the whole function cannot tell (the start is any `i32`).
fn steps_without_wrap(
    f: &Function,
    se: &ScalarEvolution,
    id: LoopId,
    param: Value,
    step: i64,
) -> bool {
    let lp = se.loops.get(id);
    lp.latches.iter().all(|&l| {
        // Only the branches below the header compare the parameter.
        let facts = facts_on_edge_below(f, se.cfg, se.dt, l, lp.header, Some(lp.header));
        facts.interval(f, param).is_some_and(|(lo, hi)| {
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
