//! Loop splitting on a monotonic condition whose far side is empty: `for (j = 0; j <
//! n; j++) { if (i < j) continue; work(j); }` leaves the loop at the first `j` with
//! `i < j`, instead of counting the remaining iterations one by one.
//!
//! Loop splitting (GCC's `tree-ssa-loop-split.cc`; index-set splitting, Wolfe, "High
//! Performance Compilers for Parallel Computing", 1996, 9.4) cuts the iteration space
//! of a loop at the point where a condition on the induction variable changes value,
//! giving two loops that each take one side of the condition. When the condition is
//! `x < j` (or `j > x`, `j >= x`, ...) with `j` the loop's counter and `x` invariant,
//! it flips at most once, from false to true, and then holds for every remaining
//! iteration. If those iterations do nothing but count (the side they take reaches
//! the latch without a side effect, and the header computes nothing with one), the
//! second loop is empty and loop deletion would remove it; this pass goes straight
//! there: the branch's stable side leaves the loop for the latch's exit.
//!
//! Conditions, all checked:
//! - the loop is rotated with a counter, as the scalar evolution describes it
//!   ([`Counter`]: a recurrence stepping by any constant, up or down, tested
//!   against an invariant bound by `<`, `<=`, `>`, `>=` or a `!=` it meets, with
//!   an exit count that holds: it never wraps and terminates, so skipping the
//!   empty iterations skips a finite count of them, and the condition on it
//!   flips once); a counter that could wrap before its test fails (`j += 3`
//!   toward an unknown bound) or that steps by an unknown amount is refused;
//! - the branch ends the header (which every iteration runs), and compares a
//!   value whose evolution is the counter's plus a constant `k` (the counter,
//!   its value after the step, `j + 1` however computed,
//!   [`ScalarEvolution::constant_difference`]) with a loop-invariant value by
//!   `<`, `<=`, `>` or `>=`, in the direction that becomes true (or false) and
//!   stays so; the value must not wrap: `k` lies between 0 and the step (the
//!   counter's values before and after the step never wrap), or the scalar
//!   evolution proves it exact;
//! - the header and the blocks from the stable side to the latch (a chain of jumps)
//!   hold no store and no call, and the latch's exit passes only loop-invariant
//!   arguments;
//! - no value defined in the loop is used outside it (the skipped iterations would
//!   have changed it).
//!
//! When the loop counts up to `next < bound` and leaves at `j > x` (or `j >= x`,
//! `j` a value that evolves as the counter itself),
//! the header's test is folded into the latch's instead (the loop exit merging of
//! LLVM's `IndVarSimplify`, which rewrites exits whose counts it knows against the
//! smallest of them): the latch continues while `next < min(bound, x + 1)` (or
//! `min(bound, x)`), the minimum computed once before the loop, and the header's
//! test runs once, on the first value, in the preheader. Each iteration then runs
//! one test instead of two. The minimum adds one to `x` only when `x < bound`, so
//! the sum cannot wrap; both forms keep exactly the iterations the two tests kept.

use crate::analysis::scev::ScalarEvolution;
use crate::analysis::FunctionAnalyses;
use crate::analysis::{Counter, LoopId, Preserved, RotatedLoop};
use crate::pipeline::FunctionTransform;
use ir::{Block, BlockCall, CmpOp, Function, InstKind, Type, Value};

/// The loop splitting pass.
pub struct LoopSplit;

impl FunctionTransform for LoopSplit {
    const NAME: &'static str = "loopsplit";
    const DESCRIPTION: &'static str = "leave a loop once a monotonic condition sends every remaining iteration down an empty path";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    /// Splits the loops of `f` that qualify.
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        let plans = fa.plan_loops(f, Plan::of);
        for p in &plans {
            let term = f.terminator(p.header).expect("the header ends in a branch");
            match &p.merge {
                Some(m) => merge_exits(f, p, m, term),
                None => f.set_target(term, p.stable, p.exit.clone()),
            }
        }
        !plans.is_empty()
    }
}

/// Folds the header's test into the latch's (see the module documentation): the
/// preheader tests the first value and computes the merged bound, the latch
/// compares with it, and the header jumps straight into the body.
fn merge_exits(f: &mut Function, p: &Plan, m: &Merge, header_branch: ir::Inst) {
    let pre_jump = f
        .terminator(m.preheader)
        .expect("the preheader ends in a jump");
    let entry = f.kind(pre_jump).targets()[0].clone();
    // The header's test on the first value, in the preheader.
    let InstKind::Cmp { op, args } = *f.kind(m.header_test) else {
        unreachable!("checked by Plan::of")
    };
    let first = args.map(|a| if a == m.counter { m.init } else { a });
    let c0 = f.insert_inst_before(pre_jump, InstKind::Cmp { op, args: first }, Type::I32);
    let c0 = f.inst_result(c0).expect("a comparison has a result");
    // min(bound, x + 1) (or min(bound, x)), adding one only below the bound.
    let test = f.create_block();
    let join = f.create_block();
    let limit = f.append_block_param(join, Type::I32);
    f.layout.insert_block_after(test, m.preheader);
    f.layout.insert_block_after(join, test);
    let below = f.append_inst(
        test,
        InstKind::Cmp {
            op: CmpOp::Slt,
            args: [m.x, m.bound],
        },
        Type::I32,
    );
    let below = f.inst_result(below).expect("a comparison has a result");
    let x_side = if m.plus_one {
        let step = f.create_block();
        f.layout.insert_block_after(step, test);
        let one = f.iconst(1);
        let x1 = f.append_inst(
            step,
            InstKind::Binary {
                op: ir::BinOp::Add,
                args: [m.x, one],
            },
            Type::I32,
        );
        let x1 = f.inst_result(x1).expect("an addition has a result");
        f.append_inst(
            step,
            InstKind::Jump {
                dest: Box::new(BlockCall::new(join, vec![x1])),
            },
            Type::Void,
        );
        BlockCall::new(step, vec![])
    } else {
        BlockCall::new(join, vec![m.x])
    };
    f.append_inst(
        test,
        InstKind::Br {
            cond: below,
            then_dest: Box::new(x_side),
            else_dest: Box::new(BlockCall::new(join, vec![m.bound])),
        },
        Type::Void,
    );
    f.append_inst(
        join,
        InstKind::Jump {
            dest: Box::new(entry),
        },
        Type::Void,
    );
    // The preheader leaves when the first value already fails the header's test.
    let (then_dest, else_dest) = if p.stable == 0 {
        (p.exit.clone(), BlockCall::new(test, vec![]))
    } else {
        (BlockCall::new(test, vec![]), p.exit.clone())
    };
    f.replace_kind(
        pre_jump,
        InstKind::Br {
            cond: c0,
            then_dest: Box::new(then_dest),
            else_dest: Box::new(else_dest),
        },
    );
    // The latch compares with the merged bound.
    f.map_inst_args(m.latch_test, |a| if a == m.bound { limit } else { a });
    // The header no longer tests.
    let stay = f.kind(header_branch).targets()[1 - p.stable].clone();
    f.replace_kind(
        header_branch,
        InstKind::Jump {
            dest: Box::new(stay),
        },
    );
}

/// One split: the header's branch target `stable` (0 or 1) becomes `exit`, or,
/// with `merge`, the header's test joins the latch's.
struct Plan {
    header: Block,
    stable: usize,
    exit: ir::BlockCall,
    merge: Option<Merge>,
}

/// A header test `counter > x` (or `>= x`) folded into the latch's `next < bound`.
struct Merge {
    preheader: Block,
    /// The header's comparison, of `counter` (a value that evolves as the
    /// header parameter) with `x`.
    header_test: ir::Inst,
    counter: Value,
    /// The header parameter's first value.
    init: Value,
    x: Value,
    /// Whether the loop continues while `counter <= x` (otherwise `< x`).
    plus_one: bool,
    /// The latch's comparison of `next` with `bound`.
    latch_test: ir::Inst,
    bound: Value,
}

impl Plan {
    fn of(se: &mut ScalarEvolution, id: LoopId) -> Option<Plan> {
        let (f, cfg, loops) = (se.f, se.cfg, se.loops);
        let l = RotatedLoop::of(f, cfg, loops, id)?;
        let counter = Counter::of_scev(se, id, &l)?;
        let in_loop = |b: Block| loops.contains(id, b);
        let invariant = |v: Value| f.value_block(v).is_none_or(|b| !in_loop(b));
        if l.header == l.latch {
            return None;
        }
        let InstKind::Br {
            cond,
            then_dest,
            else_dest,
        } = f.kind(f.terminator(l.header)?)
        else {
            return None;
        };
        let InstKind::Cmp { op, args: [a, b] } = *f.kind(f.def_inst(*cond)?) else {
            return None;
        };
        // `v op x` with `v` the counter plus a constant `k`, `x` invariant.
        let (v, k, op, x) = match (offset(se, &counter, a), offset(se, &counter, b)) {
            (Some(k), _) if invariant(b) => (a, k, op, b),
            (_, Some(k)) if invariant(a) => (b, k, op.swapped(), a),
            _ => return None,
        };
        // Which outcome, once reached, stays: `x > bound` when counting up.
        let rising = counter.step > 0;
        let stays_true = match op {
            CmpOp::Sgt | CmpOp::Sge => rising,
            CmpOp::Slt | CmpOp::Sle => !rising,
            _ => return None,
        };
        let stable = if stays_true { 0 } else { 1 };
        let dest = if stays_true { then_dest } else { else_dest };
        // The header and the stable side's path to the latch are free of effects.
        let effect_free = |blk: Block| {
            f.layout
                .block_insts(blk)
                .all(|i| !matches!(f.kind(i), InstKind::Store { .. } | InstKind::Call { .. }))
        };
        if !effect_free(l.header) {
            return None;
        }
        let mut blk = dest.block;
        for _ in 0..8 {
            if !in_loop(blk) || blk == l.header || !effect_free(blk) {
                return None;
            }
            if blk == l.latch {
                break;
            }
            let InstKind::Jump { dest } = f.kind(f.terminator(blk)?) else {
                return None;
            };
            blk = dest.block;
        }
        if blk != l.latch {
            return None;
        }
        let exit = f.kind(l.branch).targets()[l.exit()].clone();
        if !exit.args.iter().all(|&v| invariant(v)) {
            return None;
        }
        // Whether the header's test can join the latch's: counting up to
        // `next < bound`, leaving at `counter > x` or `counter >= x` (a value
        // that evolves as the header parameter), the latch's comparison used by
        // its branch alone.
        let header_test = f.def_inst(*cond)?;
        let latch_test = match f.kind(l.branch) {
            InstKind::Br { cond, .. } => f.def_inst(*cond),
            _ => None,
        };
        let pre_jump = f.terminator(l.preheader);
        let merge = match (latch_test, pre_jump) {
            (Some(latch_test), Some(pre_jump))
                if rising
                    && stays_true
                    && counter.tests_next
                    && !counter.inclusive
                    && k == 0
                    && matches!(f.kind(pre_jump), InstKind::Jump { .. })
                    && matches!(f.kind(latch_test), InstKind::Cmp { .. })
                    && f.users(f.inst_result(latch_test)?) == [l.branch]
                    && f.users(*cond) == [f.terminator(l.header)?]
                    && f.value_type(x) == Type::I32 =>
            {
                Some(Merge {
                    preheader: l.preheader,
                    header_test,
                    counter: v,
                    init: counter.init,
                    x,
                    plus_one: op == CmpOp::Sgt,
                    latch_test,
                    bound: counter.bound,
                })
            }
            _ => None,
        };
        // Nothing defined in the loop is used after it.
        if loops
            .defined_values(f, id)
            .any(|v| loops.used_outside(f, id, v))
        {
            return None;
        }
        Some(Plan {
            header: l.header,
            stable,
            exit,
            merge,
        })
    }
}

/// `k` when `v` evolves as the counter plus the constant `k` (`j`, `j + 1`,
/// however computed) and never wraps in the loop: `k` lies between 0 and the
/// step (the counter and its next value never wrap, [`Counter`]), or the
/// scalar evolution proves `v` exact.
fn offset(se: &mut ScalarEvolution, counter: &Counter, v: Value) -> Option<i64> {
    let k = se.constant_difference(v, counter.param)?;
    let step = i64::from(counter.step);
    let e = se.get(v);
    ((step.min(0)..=step.max(0)).contains(&k) || se.is_exact(e)).then_some(k)
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `for i < 6: for j < n: if (i < j) continue; s = s * 3 + j; a[j] = s` and the
    /// sum printed: the inner loop's header leaves it once `i < j`.
    const TRIANGLE: &str = r#"
declare @putint(i32) -> void
declare @getint() -> i32
global @a: [i32; 64] = zeroinit

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = slt 0, %0
  br %3, bb2, bb5(%2)
bb2:
  jump bb3(0, %2)
bb3(%4: i32, %5: i32):
  %6 = slt %1, %4
  br %6, bb4(%5), bb6
bb6:
  %7 = mul %5, 3
  %8 = add %7, %4
  %9 = gep @a, %4, 4
  store %8, %9
  jump bb4(%8)
bb4(%10: i32):
  %11 = add %4, 1
  %12 = slt %11, %0
  br %12, bb3(%11, %10), bb5(%2)
bb5(%13: i32):
  %14 = add %1, 1
  %15 = slt %14, 6
  br %15, bb1(%14, %13), bb7
bb7:
  %16 = gep @a, 3, 4
  %17 = load i32, %16
  call @putint(%17)
  ret 0
}
"#;

    /// The header's `i < j` joins the latch's `j + 1 < n`: the preheader tests the
    /// first `j` and computes `min(n, i + 1)`, the latch compares with it, and
    /// the header no longer branches.
    #[test]
    fn the_header_test_joins_the_latch_test() {
        for n in ["0", "1", "3", "9", "40"] {
            let out = same_behaviour(TRIANGLE, &["loopsplit"], n);
            for line in [
                "  %4 = slt %1, 0\n  br %4, bb9(%2), bb3\n",
                "  %5 = slt %1, %0\n  br %5, bb4, bb5(%0)\n",
                "  %6 = add %1, 1\n  jump bb5(%6)\n",
                "bb5(%7: i32):\n  jump bb6(0, %2)\n",
                "  %10 = slt %1, %8\n  jump bb7\n",
                "  %16 = slt %15, %7\n  br %16, bb6(%15, %14), bb9(%2)\n",
            ] {
                assert!(out.contains(line), "{line}\n{out}");
            }
        }
    }

    /// `for (j = j0; j < n; j++) if (j OP x) continue; else g = (s += j) * 3;`
    /// then `g` printed, with `x`, `n` and `j0` read (the loop entered when
    /// `j0 < n`).
    const FROM_INPUT: &str = r#"
global @g: i32 = 0
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = call @getint()
  %3 = slt %2, %1
  br %3, bb1, bb4
bb1:
  jump bb2(%2, 0)
bb2(%4: i32, %5: i32):
  %6 = OP %4, %0
  br %6, bb3(%5), bb5
bb5:
  %7 = add %5, %4
  %12 = mul %7, 3
  store %12, @g
  jump bb3(%7)
bb3(%8: i32):
  %9 = add %4, 1
  %10 = slt %9, %1
  br %10, bb2(%9, %8), bb4
bb4:
  %11 = load i32, @g
  call @putint(%11)
  ret 0
}
"#;

    /// `j >= x`: the loop runs while `j < x`, so the bound is `min(n, x)`, with
    /// no addition. Both bounds, and a first `j` already past `x`, each decide in
    /// turn; `x` at the top of `i32` (where `x + 1` would wrap) is taken as is.
    #[test]
    fn a_strict_exit_needs_no_addition_and_nothing_wraps() {
        let inputs = [
            "3 10 0",
            "20 10 0",
            "5 10 7",
            "-4 10 -9",
            "2147483647 10 0",
            "2147483646 2147483647 2147483640",
            "0 -5 -8",
        ];
        for (op, plus_one) in [("sge", false), ("sgt", true)] {
            let src = FROM_INPUT.replace("OP", op);
            for input in inputs {
                let out = same_behaviour(&src, &["loopsplit"], input);
                // The header still compares (for nothing) but jumps.
                let lines: Vec<&str> = out.lines().collect();
                let header_jumps = lines.windows(2).any(|w| {
                    w[0].contains(&format!("= {op} %"))
                        && w[0].ends_with(", %0")
                        && w[1].starts_with("  jump bb")
                });
                assert!(header_jumps, "{out}");
                assert_eq!(out.contains("add %0, 1"), plus_one, "{out}");
            }
        }
    }

    /// Entered unguarded at `j = i32::MAX` with the latch testing `j + 1`: the
    /// first step wraps, so `j` is no counter and the loop stays whole (it was
    /// split as if `j` ran upward from `i32::MAX`, printing 0).
    #[test]
    fn a_counter_whose_first_step_wraps_is_not_split() {
        let src = FROM_INPUT
            .replace("OP", "sgt")
            .replace("br %3, bb1, bb4", "jump bb1");
        let out = same_behaviour(&src, &["loopsplit"], "0 -2147483645 2147483647");
        assert_eq!(out, run(&src, &[]));
    }

    /// The condition read the other way round (`j > i`) joins the latch's test too;
    /// counting down with `j < i` (true from the point it flips), the header
    /// leaves the loop instead.
    #[test]
    fn mirrored_and_downward_conditions() {
        let swapped = TRIANGLE.replace("slt %1, %4", "sgt %4, %1");
        let out = same_behaviour(&swapped, &["loopsplit"], "7");
        assert!(out.contains("  %16 = slt %15, %7\n"), "{out}");
        let down = TRIANGLE
            .replace("jump bb3(0, %2)", "jump bb3(%0, %2)")
            .replace("slt %1, %4", "slt %4, %1")
            .replace("%11 = add %4, 1", "%11 = add %4, -1")
            .replace("%12 = slt %11, %0", "%12 = sgt %11, 0");
        let out = same_behaviour(&down, &["loopsplit"], "9");
        assert!(out.contains("br %6, bb6(%2), bb4"), "{out}");
    }

    /// Counters stepping by two, up to a constant bound (the header's test
    /// joins the latch's) or down to zero (the header leaves the loop): the
    /// scalar evolution proves they neither wrap nor run forever.
    #[test]
    fn a_counter_stepping_by_two_either_way_splits() {
        let up = TRIANGLE
            .replace("%11 = add %4, 1", "%11 = add %4, 2")
            .replace("%12 = slt %11, %0", "%12 = slt %11, 60");
        let out = same_behaviour(&up, &["loopsplit"], "7");
        assert!(out.contains("  %16 = slt %15, %7\n"), "{out}");
        let down = TRIANGLE
            .replace("jump bb3(0, %2)", "jump bb3(%0, %2)")
            .replace("slt %1, %4", "slt %4, %1")
            .replace("%11 = add %4, 1", "%11 = add %4, -2")
            .replace("%12 = slt %11, %0", "%12 = sgt %11, 0");
        for n in ["1", "8", "9", "40"] {
            let out = same_behaviour(&down, &["loopsplit"], n);
            assert!(out.contains("br %6, bb6(%2), bb4"), "{out}");
        }
    }

    /// Not split: a counter by three toward an unknown bound (its last step
    /// could pass `i32::MAX`), one stepping by an unknown amount (the outer
    /// counter), and one by two that never meets its `!=` bound.
    #[test]
    fn counters_that_could_wrap_or_step_by_unknowns_stay() {
        let cases = [
            TRIANGLE.replace("%11 = add %4, 1", "%11 = add %4, 3"),
            TRIANGLE.replace("%11 = add %4, 1", "%11 = add %4, %1"),
            TRIANGLE
                .replace("%11 = add %4, 1", "%11 = add %4, 2")
                .replace("%12 = slt %11, %0", "%12 = ne %11, 61"),
        ];
        let changes = |src: &str| run(src, &["loopsplit"]) != run(src, &[]);
        for src in cases {
            assert!(!changes(&src), "split:\n{src}");
        }
        // With a step of one, the `!=` test is met: the header's test joins it.
        let ne = TRIANGLE.replace("%12 = slt %11, %0", "%12 = ne %11, 61");
        assert!(changes(&ne));
        same_behaviour(&ne, &["loopsplit"], "5");
    }

    /// The condition on `j + 1` computed apart from the latch's step: the
    /// header leaves the loop at the first `j + 1 > i` (no merge: the latch's
    /// bound would need `i - 1`).
    #[test]
    fn a_condition_on_the_counter_plus_one_splits() {
        let src = TRIANGLE.replace(
            "  %6 = slt %1, %4\n",
            "  %30 = add %4, 1\n  %6 = slt %1, %30\n",
        );
        for n in ["0", "1", "3", "9", "40"] {
            let out = same_behaviour(&src, &["loopsplit"], n);
            // The printer numbers afresh: the header's test is `%7`.
            assert!(
                out.contains("  %7 = slt %1, %6\n  br %7, bb6(%2), bb4\n"),
                "{out}"
            );
        }
    }

    /// Not split: `j - 1 > x` from a start that may be `i32::MIN`, where
    /// `j - 1` wraps to the top and the condition holds only at first.
    #[test]
    fn a_condition_on_a_value_below_an_unknown_start_stays() {
        let src = FROM_INPUT.replace(
            "  %6 = OP %4, %0\n",
            "  %13 = add %4, -1\n  %6 = sgt %13, %0\n",
        );
        // j = MIN, MIN + 1, MIN + 2: `j - 1 > 0` holds only for the first.
        let out = same_behaviour(&src, &["loopsplit"], "0 -2147483645 -2147483648");
        // Printed afresh: the header's test is `%7`, still going to the work.
        assert!(
            out.contains("  %7 = sgt %6, %0\n  br %7, bb4(%5), bb3\n"),
            "{out}"
        );
    }

    /// Not split: a condition that becomes false and stays so (the empty side comes
    /// first), a store on the empty side, a value of the loop used after it, and an
    /// equality test (true once, not for good).
    #[test]
    fn left_alone_when_the_tail_is_not_empty_or_not_monotonic() {
        let cases = [
            TRIANGLE.replace("slt %1, %4", "slt %4, %1"),
            TRIANGLE.replace(
                "br %6, bb4(%5), bb6",
                "br %6, bb8, bb6\nbb8:\n  store 7, @a\n  jump bb4(%5)",
            ),
            TRIANGLE.replace("bb5(%2)\nbb5", "bb5(%10)\nbb5"),
            TRIANGLE.replace("slt %1, %4", "eq %1, %4"),
        ];
        for src in cases {
            let out = run(&src, &["loopsplit"]);
            let branch = out.lines().find(|l| l.starts_with("  br %6,")).unwrap();
            assert!(!branch.contains("(%2)"), "{out}");
            same_behaviour(&src, &["loopsplit"], "9");
        }
    }
}
