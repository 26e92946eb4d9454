//! Index-set splitting: a counted loop whose body tests its counter against a
//! constant (`if (i < 20) ... else ...`) runs as two loops, one for the iterations
//! before the test changes value and one for those after, each with the test
//! decided.
//!
//! ```text
//!   pre:  jump h(i0)                 pre:  jump h1(i0)                    (i0 < c)
//!   h(i): if (i < c) A else B        h1(i): A; br slt(i + 1, c), h1(i + 1), m
//!         br slt(i + 1, n),          m:     br slt(i + 1, n), q(c), exit
//!            h(i + 1), exit          q(i):  jump h(i)
//!                                    h(i):  B; br slt(i + 1, n), h(i + 1), exit
//! ```
//!
//! Index-set splitting (Wolfe, "High Performance Compilers for Parallel
//! Computing", 1996, section 9.4; GCC's `-fsplit-loops`, `tree-ssa-loop-split.cc`):
//! the counter `i` steps by a constant `s` and never wraps ([`Counter`]), so
//! `i < c` holds for a prefix of the iterations and fails for the rest (counting
//! up; counting down it fails first, then holds). The split point `p` is the
//! first counter value on the test's second side: `i0 + ceil((c - i0) / s) * s`
//! counting up from `i0 < c`, the first value below `c` counting down from
//! `i0 >= c`. The first loop runs while the latch's test holds and the counter's
//! next value is not yet `p`: one comparison of the tested value with the nearer
//! of the latch's bound `n` and the tested value one step before `p` (a constant
//! when `n` is one, else chosen by a branch before the loop). What is left runs in
//! the original loop, entered from the first one's exit when the latch's test
//! still holds, at `i = p` exactly. A chain `if (i < 20) .. else if (i < 40) ..`
//! splits once per test, one test per round, each second loop starting at a
//! constant.
//!
//! Accepted, all checked: the loop is rotated with a [`Counter`] (from the
//! analysis manager's scalar evolution): any constant step, up or down, its latch
//! testing `i` or `i + s` with `<`, `<=` (`>`, `>=` counting down) or a `!=` that
//! meets its bound; the start `i0` a constant (as the scalar evolution finds it,
//! through parameters and arithmetic). The body's test is `x < c`,
//! `x >= c`, `x <= c` or `x > c` (either operand order; the last two split at
//! `c + 1`) on a value `x` whose evolution is the counter's plus a constant `k`
//! (`i` itself, `i + 1`, `i - 3`, however it is computed), which never wraps:
//! the counter's least value plus `k` for `k < 0`, its greatest plus `k` for
//! `k > 0` (the scalar evolution's exact range of the counter over the loop's
//! largest trip count; the start is the one end known without it); the test is then
//! `i < c - k`. The
//! split point is in `i32`, after the start, and reached before the latch's bound
//! when that is a constant; the test ends a block of the loop outside its inner
//! loops, other than the latch. Loops of up to [`MAX_LOOP`] instructions are
//! split, and a function grows by at most [`MAX_GROWTH`] instructions.

use crate::analysis::scev::{ExprId, ScalarEvolution};
use crate::analysis::{Counter, Loop, LoopId, RotatedLoop};
use crate::analysis::{FunctionAnalyses, Preserved};
use crate::loop_copy::LoopCopy;
use crate::pipeline::FunctionTransform;
use crate::ssa::remove_trivial_params;
use ir::{BlockCall, CmpOp, Function, Inst, InstKind, Type, Value};

/// The index-set splitting pass.
pub struct IndexSplit;

impl FunctionTransform for IndexSplit {
    const NAME: &'static str = "indexsplit";
    const DESCRIPTION: &'static str =
        "split a counted loop where a test of its counter against a constant changes";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// Loops of at most this many instructions are split.
pub const MAX_LOOP: usize = 120;
/// A function grows by at most this many instructions.
pub const MAX_GROWTH: usize = 500;

/// Splits the loops of `f` that qualify, one per round; returns how many.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// [`run`], starting from the analyses cached in `fa` (left holding those of the
/// last round).
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    let mut budget = MAX_GROWTH;
    fa.rounds(f, usize::MAX, |f, fa| {
        let mut se = fa.scev(f);
        let loops = se.loops;
        let found = loops.loops().find_map(|(id, lp)| {
            // Blocks first (each holds an instruction at least), so that the
            // outer loops of a deep nest cost nothing: linear in the function.
            let limit = MAX_LOOP.min(budget);
            if lp.blocks.len() > limit {
                return None;
            }
            let size: usize = lp
                .blocks
                .iter()
                .map(|&b| f.layout.block_insts(b).count())
                .sum();
            if size > limit {
                return None;
            }
            let split = Split::of(&mut se, id)?;
            Some((split, lp.clone(), size))
        });
        let (split, lp, size) = found?;
        budget -= size;
        apply(f, &lp, &split);
        Some(1)
    })
}

/// A loop and the test it splits at.
struct Split {
    l: RotatedLoop,
    counter: Counter,
    /// The branch on the counter.
    branch: Inst,
    /// The value of the branch's condition in the first loop.
    first_holds: bool,
    /// The split point: the first counter value on the test's second side.
    p: i32,
    /// The first loop's own bound on the tested value (see [`first_limit`]).
    limit: i32,
}

impl Split {
    fn of(se: &mut ScalarEvolution, id: LoopId) -> Option<Split> {
        let (f, cfg, loops) = (se.f, se.cfg, se.loops);
        let l = RotatedLoop::of(f, cfg, loops, id)?;
        let counter = Counter::of_scev(se, id, &l)?;
        let n = f.as_iconst(counter.bound);
        if !matches!(f.kind(f.terminator(l.preheader)?), InstKind::Jump { .. }) {
            return None;
        }
        // A constant start decides the entry, and the second loop's start is then
        // the constant split point, so a chain of tests splits again (a start
        // known only at run time would cost a test per entry, for loops that
        // often run only a few iterations on each side).
        let i0 = se.get(counter.init);
        let i0 = i32::try_from(se.exprs.as_const(i0)?).ok()?;
        let i = counter.param;
        let ie = se.get(i);
        let span = values_span(se, ie, counter.step, i0);
        // `k` when `x` evolves as the counter plus the constant `k`, and `i + k`
        // never wraps in the loop (module documentation).
        let mut offset = |x: Value| -> Option<i32> {
            if x == i {
                return Some(0);
            }
            let xe = se.get(x);
            if se.exprs.ty(xe) != ir::Type::I32 {
                return None;
            }
            let d = se.exprs.sub(loops, f, xe, ie);
            let k = i32::try_from(se.exprs.as_const(d)?).ok()?;
            let extreme = if k < 0 { span.0 } else { span.1 };
            extreme
                .and_then(|e| i32::try_from(e + i64::from(k)).ok())
                .map(|_| k)
        };
        loops.get(id).blocks.iter().find_map(|&b| {
            if b == l.latch || loops.innermost(b) != Some(id) {
                return None;
            }
            let branch = f.terminator(b)?;
            let InstKind::Br { cond, .. } = *f.kind(branch) else {
                return None;
            };
            let InstKind::Cmp { op, args: [x, y] } = *f.kind(f.def_inst(cond)?) else {
                return None;
            };
            // `i + k op c` is `i op c - k`.
            let (op, c) = match (f.as_iconst(x), f.as_iconst(y)) {
                (None, Some(c)) => (op, c.checked_sub(offset(x)?)?),
                (Some(c), None) => (op.swapped(), c.checked_sub(offset(y)?)?),
                _ => return None,
            };
            // `i <= c` is `i < c + 1` and `i > c` its negation (no split when
            // `c + 1` does not exist: the test is then constant).
            let (below, c) = match op {
                CmpOp::Slt => (true, c),
                CmpOp::Sge => (false, c),
                CmpOp::Sle => (true, c.checked_add(1)?),
                CmpOp::Sgt => (false, c.checked_add(1)?),
                _ => return None,
            };
            let p = split_point(counter.step, i0, c)?;
            let limit = first_limit(&counter, p)?;
            // With a constant bound, the first loop's limit is `p`'s: the loop
            // must reach it.
            if n.is_some() && !reaches(span, counter.step, p) {
                return None;
            }
            Some(Split {
                l: l.clone(),
                counter,
                branch,
                first_holds: below == (counter.step > 0),
                p,
                limit,
            })
        })
    }
}

/// The least and the greatest value the counter `ie` (`{i0,+,step}`, which never
/// wraps) takes in the loop: the scalar evolution's exact range over the loop's
/// largest iteration count when there is one, else its start on the side it
/// starts from.
fn values_span(
    se: &mut ScalarEvolution,
    ie: ExprId,
    step: i32,
    i0: i32,
) -> (Option<i64>, Option<i64>) {
    match se.exact_range(ie) {
        Some((lo, hi)) => (Some(lo), Some(hi)),
        None if step > 0 => (Some(i64::from(i0)), None),
        None => (None, Some(i64::from(i0))),
    }
}

/// The first value of the counter, stepping by `step` from `i0`, on the other
/// side of `c` than `i0` (at or above `c` counting up from below it, below `c`
/// counting down from at or above it): `i0 + ceil((c - i0) / step) * step` up,
/// `i0 + (floor((i0 - c) / -step) + 1) * step` down. None when `i0` is already
/// on the far side (the test never changes) or the point is outside `i32` (the
/// counter, which never wraps, does not reach it).
fn split_point(step: i32, i0: i32, c: i32) -> Option<i32> {
    let (s, i0, c) = (i64::from(step), i64::from(i0), i64::from(c));
    let k = if s > 0 {
        if i0 >= c {
            return None;
        }
        (c - i0 + s - 1) / s
    } else {
        if i0 < c {
            return None;
        }
        (i0 - c) / -s + 1
    };
    i32::try_from(i0 + k * s).ok()
}

/// The value the latch tests (`i` or `i + step`) when the counter is at its last
/// value before `p`, less one toward the start for an inclusive test: the first
/// loop runs on while the tested value is before `min(n, limit)` in the latch's
/// own comparison (`max` counting down), `n` the latch's bound.
fn first_limit(counter: &Counter, p: i32) -> Option<i32> {
    let tested = if counter.tests_next {
        p
    } else {
        p.checked_sub(counter.step)?
    };
    if counter.inclusive {
        tested.checked_sub(counter.step.signum())
    } else {
        Some(tested)
    }
}

/// Whether the loop goes on to the iteration where the counter, stepping by
/// `step` and taking the values `span`, is `p` (a value of its walk past the
/// start): `p` is within the span.
fn reaches(span: (Option<i64>, Option<i64>), step: i32, p: i32) -> bool {
    let p = i64::from(p);
    if step > 0 {
        span.1.is_some_and(|hi| p <= hi)
    } else {
        span.0.is_some_and(|lo| p >= lo)
    }
}

/// The comparison with which the latch of `counter`'s loop goes on: `<` or `<=`
/// counting up, `>` or `>=` down (a `!=` that meets its bound is the strict one).
fn continue_op(counter: &Counter) -> CmpOp {
    match (counter.step > 0, counter.inclusive) {
        (true, false) => CmpOp::Slt,
        (true, true) => CmpOp::Sle,
        (false, false) => CmpOp::Sgt,
        (false, true) => CmpOp::Sge,
    }
}

/// Replaces the conditional branch `br` by a jump to the target it takes when its
/// condition is `holds`.
fn decide(f: &mut Function, br: Inst, holds: bool) {
    let InstKind::Br {
        then_dest,
        else_dest,
        ..
    } = f.kind(br).clone()
    else {
        unreachable!("a split test is a branch");
    };
    let dest = if holds { then_dest } else { else_dest };
    f.replace_kind(br, InstKind::Jump { dest });
}

fn apply(f: &mut Function, lp: &Loop, s: &Split) {
    let h = s.l.header;
    let init = s.l.init_args(f).to_vec();
    let copy = LoopCopy::new(f, lp, false);
    let h1 = copy.blocks[&h];
    // The first loop takes the test's first side, the original loop the other.
    let branch_block = f.layout.inst_block(s.branch).expect("the branch is placed");
    let branch1 = f
        .terminator(copy.blocks[&branch_block])
        .expect("a copied block ends in its branch");
    decide(f, branch1, s.first_holds);
    decide(f, s.branch, !s.first_holds);

    // q: the original loop's new preheader.
    let q = f.create_block();
    f.layout.insert_block_after(q, copy.blocks[&s.l.latch]);
    let q_args: Vec<Value> = f
        .block_params(h)
        .to_vec()
        .into_iter()
        .map(|p| {
            let ty = f.value_type(p);
            f.append_block_param(q, ty)
        })
        .collect();
    f.append_inst(
        q,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(h, q_args.clone())),
        },
        Type::Void,
    );

    // The first loop's latch: on while the tested value is before both `n` and
    // the limit, then m decides between the original loop and the exit by the
    // original test.
    let latch1 = f
        .terminator(copy.blocks[&s.l.latch])
        .expect("the latch's copy ends in its branch");
    let InstKind::Br { cond: cond1, .. } = *f.kind(latch1) else {
        unreachable!("a rotated loop's latch branches");
    };
    let (back1, exit1) = {
        let targets = f.kind(latch1).targets();
        (targets[s.l.back].clone(), targets[s.l.exit()].clone())
    };
    let m = f.create_block();
    f.layout.insert_block_after(m, copy.blocks[&s.l.latch]);
    let tested = if s.counter.tests_next {
        s.counter.next
    } else {
        s.counter.param
    };
    let tested1 = copy.values[&tested];
    let limit = f.iconst(s.limit);
    let up = s.counter.step > 0;
    // The first loop's bound, the nearer of `n` and the limit (min counting up,
    // max down): a constant, or chosen before the loop.
    let pre = f.terminator(s.l.preheader).expect("a preheader jumps");
    let (bound1, pre) = match f.as_iconst(s.counter.bound) {
        Some(n) if up => (f.iconst(n.min(s.limit)), pre),
        Some(n) => (f.iconst(n.max(s.limit)), pre),
        None => {
            let j = f.create_block();
            f.layout.insert_block_after(j, s.l.preheader);
            let m = f.append_block_param(j, Type::I32);
            let n = s.counter.bound;
            let n_below = crate::passes::slt_before(f, pre, n, limit);
            let (below, above) = (BlockCall::new(j, vec![n]), BlockCall::new(j, vec![limit]));
            let (then_dest, else_dest) = if up { (below, above) } else { (above, below) };
            f.replace_kind(
                pre,
                InstKind::Br {
                    cond: n_below,
                    then_dest: Box::new(then_dest),
                    else_dest: Box::new(else_dest),
                },
            );
            let jump = f.append_inst(
                j,
                InstKind::Jump {
                    dest: Box::new(BlockCall::new(j, Vec::new())),
                },
                Type::Void,
            );
            (m, jump)
        }
    };
    let on = f.insert_inst_before(
        latch1,
        InstKind::Cmp {
            op: continue_op(&s.counter),
            args: [tested1, bound1],
        },
        Type::I32,
    );
    let on = f.inst_result(on).expect("cmp has a result");
    f.replace_kind(
        latch1,
        InstKind::Br {
            cond: on,
            then_dest: Box::new(back1.clone()),
            else_dest: Box::new(BlockCall::new(m, Vec::new())),
        },
    );
    // The second loop starts at exactly `p`: the first ran from `i0` in steps
    // until the counter's next value reached `p` (it is one of the counter's
    // values), and the original test holds on this edge.
    let mut q_in = back1.args.clone();
    q_in[s.counter.index] = f.iconst(s.p);
    let to_q = BlockCall::new(q, q_in);
    let (then_dest, else_dest) = if s.l.back == 0 {
        (to_q, exit1)
    } else {
        (exit1, to_q)
    };
    f.append_inst(
        m,
        InstKind::Br {
            cond: cond1,
            then_dest: Box::new(then_dest),
            else_dest: Box::new(else_dest),
        },
        Type::Void,
    );

    // The preheader (or the block choosing the bound) enters the first loop: the
    // first iteration is on the test's first side.
    f.replace_kind(
        pre,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(h1, init)),
        },
    );
    let mut created = copy.repair_uses_outside(f, lp);
    created.extend(q_args);
    remove_trivial_params(f, &created);
    // The sides each loop no longer takes.
    crate::cfg_edit::remove_unreachable_blocks(f);
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// `for (i = S; i < 10; i++) if (i < 4) x = x * 3 + i; else x = x - i;` (when
    /// the number read is below 10); `x` and the last `i` printed after the loop.
    const CHAIN: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = slt %0, 10
  br %1, bb1, bb6(7, %0)
bb1:
  jump bb2(S, 1)
bb2(%2: i32, %3: i32):
  %4 = slt %2, 4
  br %4, bb3, bb4
bb3:
  %5 = mul %3, 3
  %6 = add %5, %2
  jump bb5(%6)
bb4:
  %7 = sub %3, %2
  jump bb5(%7)
bb5(%8: i32):
  %9 = add %2, 1
  %10 = slt %9, 10
  br %10, bb2(%9, %8), bb6(%8, %2)
bb6(%11: i32, %12: i32):
  call @putint(%11)
  call @putch(32)
  call @putint(%12)
  ret 0
}
"#;

    fn starting_at(start: &str) -> String {
        CHAIN.replace("jump bb2(S, 1)", &format!("jump bb2({start}, 1)"))
    }

    /// Whether each loop kept one side: one `mul` (first loop), one `sub`
    /// (second), and `brs` conditional branches: the entry guard, the two loops'
    /// latches and the one between them (no branch on the test left).
    fn split(out: &str, brs: usize) -> bool {
        out.matches("= mul").count() == 1
            && out.matches("= sub").count() == 1
            && out.matches("  br ").count() == brs
    }

    #[test]
    fn every_start_before_the_split_point_runs_the_same() {
        for start in -3..4 {
            let out = same_behaviour(&starting_at(&start.to_string()), &["indexsplit"], "0");
            assert!(split(&out, 4), "{out}");
            // The second loop starts at the constant 4.
            assert!(out.contains("(4, "), "{out}");
        }
    }

    /// [`CHAIN`] starting at `start`, defined by `body` in a block `bb7(%21)` that
    /// both sides of a branch enter passing `passed`.
    fn through_a_parameter(passed: i32, body: &str, start: &str) -> String {
        starting_at(start).replace(
            &format!("bb1:\n  jump bb2({start}, 1)"),
            &format!(
                "bb1:\n  %20 = slt %0, 5\n  br %20, bb7({passed}), bb7({passed})\n\
                 bb7(%21: i32):\n{body}  jump bb2({start}, 1)"
            ),
        )
    }

    #[test]
    fn a_start_every_edge_passes_as_the_same_constant_counts_as_constant() {
        let src = through_a_parameter(0, "", "%21");
        for n in ["2", "7"] {
            let out = same_behaviour(&src, &["indexsplit"], n);
            assert!(split(&out, 5), "{out}");
        }
    }

    /// A start constant on every edge (the scalar evolution forwards a parameter
    /// every edge passes one value) and a constant bound bound `i + k`; the same
    /// offset that would wrap is refused.
    #[test]
    fn a_constant_bound_bounds_the_offset_of_a_start_known_by_its_edges() {
        let src = |k: &str, c: &str| {
            through_a_parameter(0, "", "%21").replace(
                "  %4 = slt %2, 4\n",
                &format!("  %22 = add %2, {k}\n  %4 = slt %22, {c}\n"),
            )
        };
        let out = same_behaviour(&src("1", "5"), &["indexsplit"], "0");
        assert!(split(&out, 5), "{out}");
        // `i` runs to 9: `i + 2147483640` wraps.
        let wraps = src("2147483640", "2147483644");
        let out = crate::passes::testutil::run(&wraps, &["indexsplit"]);
        assert_eq!(out, crate::passes::testutil::run(&wraps, &[]));
    }

    /// The start is whatever constant the scalar evolution finds: here a
    /// parameter every edge passes `-2`, plus 3 (the old recogniser followed
    /// parameters only).
    #[test]
    fn a_start_computed_from_a_constant_parameter_counts_as_constant() {
        let src = through_a_parameter(-2, "  %22 = add %21, 3\n", "%22");
        for n in ["2", "7"] {
            let out = same_behaviour(&src, &["indexsplit"], n);
            assert!(split(&out, 5), "{out}");
        }
    }

    #[test]
    fn starts_at_or_after_the_split_point_or_unknown_are_left() {
        for start in ["4", "7", "%0"] {
            let out = same_behaviour(&starting_at(start), &["indexsplit"], "2");
            assert!(out.contains("br %4, bb3, bb4"), "{out}");
        }
    }

    #[test]
    fn a_variable_bound_is_met_at_the_smaller_end() {
        // `i + 1 < n` with `n` read: the first loop ends at min(n, 4).
        let src = starting_at("0")
            .replace(
                "%0 = call @getint()",
                "%0 = call @getint()\n  %13 = call @getint()",
            )
            .replace("%10 = slt %9, 10", "%10 = slt %9, %13");
        for n in [-5, 0, 1, 3, 4, 5, 9, 12] {
            let out = same_behaviour(&src, &["indexsplit"], &format!("0 {n}"));
            // And the choice of the first loop's bound.
            assert!(split(&out, 5), "{out}");
        }
    }

    #[test]
    fn the_mirrored_test_splits_the_same_way() {
        // `4 <= i` (sge with the counter second): the second side comes first.
        let src = starting_at("1").replace(
            "%4 = slt %2, 4\n  br %4, bb3, bb4",
            "%4 = sle 4, %2\n  br %4, bb4, bb3",
        );
        let out = same_behaviour(&src, &["indexsplit"], "0");
        assert_eq!(out.matches("= mul").count(), 1, "{out}");
        assert_eq!(out.matches("= sub").count(), 1, "{out}");
    }

    #[test]
    fn inclusive_tests_split_one_later() {
        // `i <= 3` and `3 < i` both change value between 3 and 4.
        for test in [
            "%4 = sle %2, 3\n  br %4, bb3, bb4",
            "%4 = slt 3, %2\n  br %4, bb4, bb3",
        ] {
            let src = starting_at("0").replace("%4 = slt %2, 4\n  br %4, bb3, bb4", test);
            let out = same_behaviour(&src, &["indexsplit"], "0");
            assert!(split(&out, 4), "{out}");
            assert!(out.contains("(4, "), "{out}");
        }
        // `i <= MAX` holds for every `i`: nothing to split.
        let src = starting_at("0").replace("%4 = slt %2, 4", "%4 = sle %2, 2147483647");
        let out = same_behaviour(&src, &["indexsplit"], "0");
        assert!(out.contains("br %4, bb3, bb4"), "{out}");
    }

    /// A test of the counter plus a constant, however computed (`i + 1`, which
    /// the latch steps to, or `i - 3` as `(i + 1) - 4` or `i + -3`), splits at `c - k`: `i + 1 < 5` and
    /// `i - 3 < 1` both change between 3 and 4.
    #[test]
    fn tests_of_the_counter_plus_a_constant_split() {
        for (def, test) in [
            ("", "%4 = slt %9, 5"),
            ("", "%20 = add %9, -4\n  %4 = slt %20, 1"),
            ("  %20 = add %2, -3\n", "%4 = sgt 1, %20"),
        ] {
            let src = starting_at("0")
                .replace(
                    "  %4 = slt %2, 4\n",
                    &format!("{def}  %9 = add %2, 1\n  {test}\n"),
                )
                .replace("bb5(%8: i32):\n  %9 = add %2, 1\n", "bb5(%8: i32):\n");
            for start in ["0", "9"] {
                let out = same_behaviour(&src, &["indexsplit"], start);
                assert!(split(&out, 4), "{test}\n{out}");
                assert!(out.contains("(4, "), "{out}");
            }
        }
    }

    /// `i + k` that could wrap is left: `i + 2147483647` (`i` runs to 9) and
    /// `i - 2147483647` from a start of -3 pass the ends of `i32`; so is
    /// `i + 1` under an unknown bound.
    #[test]
    fn tests_of_the_counter_plus_a_constant_that_could_wrap_are_left() {
        let plus = |src: &str, k: &str, c: &str| {
            src.replace(
                "  %4 = slt %2, 4\n",
                &format!("  %20 = add %2, {k}\n  %4 = slt %20, {c}\n"),
            )
        };
        let unknown_bound = starting_at("0")
            .replace(
                "%0 = call @getint()",
                "%0 = call @getint()\n  %13 = call @getint()",
            )
            .replace("%10 = slt %9, 10", "%10 = slt %9, %13");
        for src in [
            plus(&starting_at("0"), "2147483647", "-2147483644"),
            plus(&starting_at("-3"), "-2147483647", "-2147483647"),
            plus(&unknown_bound, "1", "5"),
        ] {
            let out = crate::passes::testutil::run(&src, &["indexsplit"]);
            assert_eq!(out, crate::passes::testutil::run(&src, &[]), "{src}");
        }
        // Without the wrap, the same shapes split.
        let out = same_behaviour(&plus(&starting_at("0"), "3", "7"), &["indexsplit"], "0");
        assert!(split(&out, 4), "{out}");
    }

    #[test]
    fn tests_at_or_past_the_bound_are_left() {
        // `i < 10` holds on every iteration of a loop ending at 10: nothing to split.
        let src = starting_at("0").replace("%4 = slt %2, 4", "%4 = slt %2, 10");
        let out = same_behaviour(&src, &["indexsplit"], "0");
        assert!(out.contains("slt %2, 10"), "{out}");
    }

    #[test]
    fn tests_of_other_values_are_left() {
        // `x < 4` is not the counter.
        let src = starting_at("0").replace("%4 = slt %2, 4", "%4 = slt %3, 4");
        let out = same_behaviour(&src, &["indexsplit"], "0");
        assert!(out.contains("slt %3, 4"), "{out}");
    }

    /// CHAIN with the counter stepping by `step` from `start`, the latch
    /// continuing while `latch` holds (`%9` is `i + step`, `%2` is `i`).
    fn stepping(start: &str, step: i32, latch: &str) -> String {
        starting_at(start)
            .replace("%9 = add %2, 1", &format!("%9 = add %2, {step}"))
            .replace("%10 = slt %9, 10", &format!("%10 = {latch}"))
    }

    #[test]
    fn down_counting_loops_split_where_the_test_starts_to_hold() {
        // `for (i = S; i > 0; i--) if (i < 4) ..`: the `else` side first, then
        // the `if` side from 3.
        for start in ["4", "9"] {
            let out = same_behaviour(&stepping(start, -1, "sgt %9, 0"), &["indexsplit"], "0");
            assert!(split(&out, 4), "{out}");
            assert!(out.contains("(3, "), "{out}");
        }
        // Down by 2 while `i - 2 >= -3`, tested as `i <= 4` (`i < 5`): 11, 9, 7,
        // 5 then 3, 1, -1, -3.
        let src = stepping("11", -2, "sge %9, -3").replace("slt %2, 4", "sle %2, 4");
        let out = same_behaviour(&src, &["indexsplit"], "0");
        assert!(split(&out, 4), "{out}");
        assert!(out.contains("(3, "), "{out}");
        // Down to a bound read at run time: the first loop stops at the larger.
        let src = stepping("9", -1, "sgt %9, %13").replace(
            "%0 = call @getint()",
            "%0 = call @getint()\n  %13 = call @getint()",
        );
        for n in [-5, 0, 2, 3, 4, 7, 8, 12] {
            let out = same_behaviour(&src, &["indexsplit"], &format!("0 {n}"));
            assert!(split(&out, 5), "{out}");
        }
    }

    #[test]
    fn other_steps_split_at_the_first_counter_value_past_the_test() {
        // Up by 3 from 0, 1 or 2 with `i < 4`: the second loop starts at 6, 4, 5.
        for (start, p) in [("0", 6), ("1", 4), ("2", 5)] {
            for latch in [
                "slt %9, 20",
                "sle %9, 20",
                "slt %2, 17",
                "sle %2, 16",
                "ne %9, 21",
            ] {
                let src = stepping(start, 3, latch);
                if latch == "ne %9, 21" && start != "0" {
                    continue;
                }
                let out = same_behaviour(&src, &["indexsplit"], "0");
                assert!(split(&out, 4), "{latch}\n{out}");
                assert!(out.contains(&format!("({p}, ")), "{latch}\n{out}");
            }
        }
        // Up by 2 to a bound read at run time: `i + 2` could pass the end of
        // `i32` (no counter), left.
        let src = stepping("1", 2, "slt %2, %13").replace(
            "%0 = call @getint()",
            "%0 = call @getint()\n  %13 = call @getint()",
        );
        let out = crate::passes::testutil::run(&src, &["indexsplit"]);
        assert_eq!(out, crate::passes::testutil::run(&src, &[]));
    }

    #[test]
    fn split_points_the_loop_never_reaches_are_left() {
        let unchanged = |src: &str| {
            let out = crate::passes::testutil::run(src, &["indexsplit"]);
            assert_eq!(out, crate::passes::testutil::run(src, &[]), "{src}");
        };
        // Up by 3 from 0 below 5: i = 0, 3, and `i < 4` holds throughout.
        unchanged(&stepping("0", 3, "slt %9, 5"));
        // Tested before the step: i = 0, 3, 6 when `i <= 3`, the last `i < 4`
        // fails: split; with `i <= 2` the loop stops at 3: left.
        let out = same_behaviour(&stepping("0", 3, "sle %2, 3"), &["indexsplit"], "0");
        assert!(split(&out, 4), "{out}");
        unchanged(&stepping("0", 3, "sle %2, 2"));
        // Down from 2: `i < 4` holds from the start.
        unchanged(&stepping("2", -1, "sgt %9, -5"));
        // Down from 9 to 5: it never holds.
        unchanged(&stepping("9", -1, "sgt %9, 5"));
    }

    /// Counting down to an unknown bound, the least value is unknown: `i - 3`
    /// could wrap, `i + 3` cannot (its greatest value is `i0 + 3`).
    #[test]
    fn down_counting_offsets_wrap_only_toward_the_unknown_end() {
        let src = |k: i32, c: i32| {
            stepping("9", -1, "sgt %9, %13")
                .replace(
                    "%0 = call @getint()",
                    "%0 = call @getint()\n  %13 = call @getint()",
                )
                .replace(
                    "  %4 = slt %2, 4\n",
                    &format!("  %20 = add %2, {k}\n  %4 = slt %20, {c}\n"),
                )
        };
        let minus = src(-3, 1);
        let out = crate::passes::testutil::run(&minus, &["indexsplit"]);
        assert_eq!(out, crate::passes::testutil::run(&minus, &[]));
        let out = same_behaviour(&src(3, 7), &["indexsplit"], "0 -2");
        assert!(split(&out, 5), "{out}");
    }
}
