//! Linear-function test replacement (Cocke and Kennedy, CACM 1977; LLVM's
//! `IndVarSimplify::linearFunctionTestReplace`): a loop whose counter `i` only
//! counts, beside a pointer `p` that advances in step with it (strength reduction
//! makes them), tests `p` instead of `i` at the latch; the counter is then dead,
//! and one add per iteration goes.
//!
//! Both come from the scalar evolution ([`crate::analysis::scev`]): the counter is
//! the rotated loop's [`Counter`], `i = {i0,+,d}` with any constant step `d` (up
//! or down), tested before or after its step with `<`, `<=`, `>`, `>=` (or `!=`
//! meeting its bound), never wrapping, starting at a constant `i0`; the pointer is a header parameter
//! `p = {start,+,d*stride}` with `stride > 0` bytes. On every iteration
//! `p = start + (i - i0) * stride` exactly (64-bit addresses of exact `i32` values),
//! a strictly increasing map, so the latch's `i op bound` (or `i + d op bound`) has
//! the outcome of `p op end` (or of the advanced pointer) for every predicate, with
//! `end = start + (bound - i0) * stride` computed before the loop without a wrap
//! (`gep (gep start, bound), -i0`, or with `-i0 - 1 = i0 xor -1` for `i0 =
//! i32::MIN`). The counter must have no use but its step, the test and the back
//! edge (index arithmetic that only fed rewritten addresses is dead), so the
//! replacement pays for itself.
//!
//! A counter starting at a value computed at run time (`k = i + 1` in a
//! triangular nest) is left alone: its end costs four or five instructions more
//! on every entry to the loop, and measured on short inner loops that cost more
//! than the one add per iteration saved (kernel of sysy2026 h-8-01: +11% cycles;
//! 15_graph_coloring, 61_sort_test7, 03_sort: +0.1 to +0.3%).

use crate::analysis::scev::ScalarEvolution;
use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::analysis::{Counter, LoopId, RotatedLoop};
use crate::pipeline::FunctionTransform;
use ir::{BinOp, BlockCall, CmpOp, Function, Inst, InstKind, Type, Value};

/// The linear-function test replacement pass.
pub struct Lftr;

impl FunctionTransform for Lftr {
    const NAME: &'static str = "lftr";
    const DESCRIPTION: &'static str =
        "test a pointer induction variable at the latch instead of a counter that only counts";
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    /// Replaces the exit tests of the loops of `f` that qualify.
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        // Edits add instructions to preheaders and latches only (no edges, no
        // use of another loop's counter), so the plans of all loops, made from
        // one scalar evolution of the function, stay valid.
        let plans = fa.plan_loops(f, plan);
        for p in &plans {
            replace_exit_test(f, p);
        }
        !plans.is_empty()
    }
}

/// A latch test to replace.
struct Plan {
    l: RotatedLoop,
    op: CmpOp,
    /// Whether the bound is the comparison's first operand.
    end_first: bool,
    /// The pointer tested instead of the counter, its start and stride.
    px: Value,
    start: Value,
    stride: u32,
    /// The counter's start and bound.
    i0: Value,
    bound: Value,
    then_dest: BlockCall,
    else_dest: BlockCall,
}

/// The plan for loop `id`, if its counter only counts and a pointer moves with it.
fn plan(se: &mut ScalarEvolution, id: LoopId) -> Option<Plan> {
    let (f, cfg, loops) = (se.f, se.cfg, se.loops);
    let l = RotatedLoop::of(f, cfg, loops, id)?;
    let iv = Counter::of_scev(se, id, &l)?;
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = f.kind(l.branch).clone()
    else {
        return None;
    };
    let (cmp, step) = (f.def_inst(cond)?, f.def_inst(iv.next)?);
    let InstKind::Cmp { op, args: [a, b] } = *f.kind(cmp) else {
        return None;
    };
    if f.users(cond) != [l.branch] {
        return None;
    }
    let leaves = {
        let targets = f.kind(l.branch).targets();
        let exit_args = &targets[l.exit()].args;
        exit_args.contains(&iv.next) || exit_args.contains(&iv.param)
    };
    let only = |v: Value, allowed: &[Inst]| {
        f.users(v)
            .iter()
            .all(|&u| allowed.contains(&u) || dead(f, u, 4))
    };
    if leaves || !only(iv.param, &[step, cmp]) || !only(iv.next, &[cmp, l.branch]) {
        return None;
    }
    f.as_iconst(iv.init)?;
    let x = if iv.tests_next { iv.next } else { iv.param };
    let end_first = match (a == x && b == iv.bound, b == x && a == iv.bound) {
        (true, _) => false,
        (_, true) => true,
        _ => return None,
    };
    let (k, stride) = pointer_of_counter(se, id, &l, &iv)?;
    let px = if iv.tests_next {
        l.next_args(f)[k]
    } else {
        f.block_params(l.header)[k]
    };
    Some(Plan {
        start: l.init_args(f)[k],
        l,
        op,
        end_first,
        px,
        stride,
        i0: iv.init,
        bound: iv.bound,
        then_dest: *then_dest,
        else_dest: *else_dest,
    })
}

/// Rewrites the latch test of `p.l` to compare the pointer instead.
fn replace_exit_test(f: &mut Function, p: &Plan) {
    // end = start + (bound - i0) * stride, in exact steps.
    let pterm = f.terminator(p.l.preheader).expect("preheader has a jump");
    let stride = p.stride;
    let gep = |f: &mut Function, base: Value, index: Value| {
        let g = f.insert_inst_before(
            pterm,
            InstKind::Gep {
                base,
                index,
                stride,
            },
            Type::Ptr,
        );
        f.inst_result(g).expect("gep has a result")
    };
    let past = gep(f, p.start, p.bound);
    let end = match f.as_iconst(p.i0) {
        Some(i0) if i0 != i32::MIN => {
            let minus_i0 = f.iconst(-i0);
            gep(f, past, minus_i0)
        }
        _ => {
            let m1 = f.iconst(-1);
            let not = f.insert_inst_before(
                pterm,
                InstKind::Binary {
                    op: BinOp::Xor,
                    args: [p.i0, m1],
                },
                Type::I32,
            );
            let not = f.inst_result(not).expect("xor has a result");
            let one = f.iconst(1);
            let e = gep(f, past, not);
            gep(f, e, one)
        }
    };
    let args = if p.end_first {
        [end, p.px]
    } else {
        [p.px, end]
    };
    let test = f.insert_inst_before(p.l.branch, InstKind::Cmp { op: p.op, args }, Type::I32);
    let cond = f.inst_result(test).expect("cmp has a result");
    f.replace_kind(
        p.l.branch,
        InstKind::Br {
            cond,
            then_dest: Box::new(p.then_dest.clone()),
            else_dest: Box::new(p.else_dest.clone()),
        },
    );
}

/// The header parameter (index) whose evolution is `{start,+,d*stride}` for the
/// counter's step `d` and a positive `stride`, with that stride; the one with the
/// most uses when there are several. The pointer's constant byte step is the
/// scalar evolution's ([`ScalarEvolution::constant_step`]), so any chain of
/// constant geps on the latch counts.
fn pointer_of_counter(
    se: &mut ScalarEvolution,
    id: LoopId,
    l: &RotatedLoop,
    iv: &Counter,
) -> Option<(usize, u32)> {
    let f = se.f;
    let params = f.block_params(l.header);
    let d = i64::from(iv.step);
    let mut best: Option<(usize, u32, usize)> = None;
    for (k, &p) in params.iter().enumerate() {
        if f.value_type(p) != Type::Ptr {
            continue;
        }
        // `bytes = d * stride` (a latch's `gep p, d, stride` gives `stride`).
        let Some(bytes) = se.constant_step(p, id) else {
            continue;
        };
        if bytes % d != 0 {
            continue;
        }
        let Ok(stride) = u32::try_from(bytes / d) else {
            continue;
        };
        let uses = f.users(p).len();
        if best.is_none_or(|(_, _, most)| uses > most) {
            best = Some((k, stride, uses));
        }
    }
    best.map(|(k, stride, _)| (k, stride))
}

/// Whether `u` is integer arithmetic whose result is unused, or used only by such
/// arithmetic (looking `depth` levels deep).
fn dead(f: &Function, u: Inst, depth: u32) -> bool {
    matches!(f.kind(u), InstKind::Binary { op, .. } if !op.can_trap())
        && f.inst_result(u).is_some_and(|r| {
            f.users(r)
                .iter()
                .all(|&w| depth > 0 && dead(f, w, depth - 1))
        })
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    /// A rotated loop summing `a[i]` and `a[i + 2]` after strength reduction, the
    /// counter only counting.
    const SUM: &str = r#"
declare @putint(i32) -> void
global @a: [i32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]

func @main() -> i32 {
bb0:
  %0 = gep @a, 0, 4
  jump bb1(0, 0, %0)
bb1(%1: i32, %2: i32, %3: ptr):
  %4 = load i32, %3
  %5 = gep %3, 2, 4
  %6 = load i32, %5
  %7 = add %2, %4
  %8 = add %7, %6
  %9 = add %1, 1
  %10 = slt %9, 14
  %11 = gep %3, 1, 4
  br %10, bb1(%9, %8, %11), bb2
bb2:
  call @putint(%8)
  ret 0
}
"#;

    #[test]
    fn the_latch_tests_the_pointer() {
        check(
            &["lftr", "dce"],
            SUM,
            r#"
global @a: [i32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = gep @a, 0, 4
  %1 = gep %0, 14, 4
  %2 = gep %1, 0, 4
  jump bb1(0, %0)
bb1(%3: i32, %4: ptr):
  %5 = load i32, %4
  %6 = gep %4, 2, 4
  %7 = load i32, %6
  %8 = add %3, %5
  %9 = add %8, %7
  %10 = gep %4, 1, 4
  %11 = slt %10, %2
  br %11, bb1(%9, %10), bb2
bb2:
  call @putint(%9)
  ret 0
}
"#,
        );
        same_behaviour(SUM, &["lftr", "dce"], "");
    }

    /// Counting down from a start other than zero, a bound read at run time, the test
    /// on the counter before its step (`i > n` then `i - 1`), an inclusive test: the
    /// same results, and no counter left.
    #[test]
    fn other_directions_starts_and_predicates() {
        let down = r#"
declare @putint(i32) -> void
declare @getint() -> i32
global @a: [i32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = gep @a, 12, 4
  jump bb1(12, 0, %1)
bb1(%2: i32, %3: i32, %4: ptr):
  %5 = load i32, %4
  %6 = mul %3, 3
  %7 = add %6, %5
  %8 = add %2, -1
  %9 = sgt %2, %0
  %10 = gep %4, -1, 4
  br %9, bb1(%8, %7, %10), bb2
bb2:
  call @putint(%7)
  ret 0
}
"#;
        let inclusive = SUM.replace("slt %9, 14", "sle %9, 13");
        for (src, inputs) in [
            (down, ["0", "5", "11", "12"]),
            (&inclusive, ["", "", "", ""]),
        ] {
            for n in inputs {
                let out = same_behaviour(src, &["lftr", "dce"], n);
                let body = &out[out.find("bb1(").unwrap()..out.find("bb2:").unwrap()];
                assert_eq!(body.matches(": i32").count(), 1, "{out}"); // the sum only
            }
        }
        // A counter with another use (the multiplier) keeps its test.
        let used = down.replace("mul %3, 3", "mul %3, %2");
        let out = same_behaviour(&used, &["lftr", "dce"], "7");
        assert!(out.contains("sgt %2, %0") || out.contains("sgt %"), "{out}");
        let body = &out[out.find("bb1(").unwrap()..out.find("bb2:").unwrap()];
        assert_eq!(body.matches(": i32").count(), 2, "{out}");
    }

    /// The number of `i32` header parameters of `bb1` in `out`.
    fn counters(out: &str) -> usize {
        let header = &out[out.find("\nbb1(").unwrap() + 1..];
        header.lines().next().unwrap().matches(": i32").count()
    }

    /// Shapes beyond a unit step: `i += 2` with the pointer stepping two
    /// elements, down by two, and from `i32::MIN` (the end computed with `-i0 - 1`
    /// as `i0 xor -1`, plus one element); a counter starting at `j + 1` for a `j`
    /// read at run time is left (its end costs more than it saves).
    #[test]
    fn any_constant_step_but_a_constant_start() {
        let by_two = SUM
            .replace("add %1, 1", "add %1, 2")
            .replace("gep %3, 1, 4", "gep %3, 2, 4");
        let out = same_behaviour(&by_two, &["lftr", "dce"], "");
        assert_eq!(counters(&out), 1, "{out}");
        let down = SUM
            .replace("%0 = gep @a, 0, 4", "%0 = gep @a, 13, 4")
            .replace("jump bb1(0, 0, %0)", "jump bb1(13, 0, %0)")
            .replace("add %1, 1", "add %1, -2")
            .replace("slt %9, 14", "sgt %9, 0")
            .replace("gep %3, 1, 4", "gep %3, -2, 4")
            .replace("gep %3, 2, 4", "gep %3, 0, 4");
        let out = same_behaviour(&down, &["lftr", "dce"], "");
        assert_eq!(counters(&out), 1, "{out}");
        let from_input = SUM
            .replace(
                "bb0:\n  %0 = gep @a, 0, 4\n  jump bb1(0, 0, %0)",
                "bb0:\n  %20 = call @getint()\n  %21 = add %20, 1\n  %0 = gep @a, %21, 4\n  jump bb1(%21, 0, %0)",
            )
            .replace("declare @putint(i32) -> void", "declare @putint(i32) -> void\ndeclare @getint() -> i32");
        assert!(from_input.contains("jump bb1(%21"));
        for j in ["0", "5", "11", "12"] {
            let out = same_behaviour(&from_input, &["lftr", "dce"], j);
            assert_eq!(counters(&out), 2, "{out}");
        }
        // From i32::MIN up to MIN + 14, the pointer at a[0].
        let from_min = SUM
            .replace("jump bb1(0, 0, %0)", "jump bb1(-2147483648, 0, %0)")
            .replace("slt %9, 14", "slt %9, -2147483634");
        let out = same_behaviour(&from_min, &["lftr", "dce"], "");
        assert_eq!(counters(&out), 1, "{out}");
        assert!(out.contains("xor"), "{out}");
    }

    /// A `!=` test the counter meets (constant start and bound: the same test as
    /// `<`), and a pointer advanced by a chain of constant steps (`gep (gep p, 1),
    /// 1`, as an unrolled walk leaves it) in step with a counter by two: the
    /// pointer is tested and the counter goes.
    #[test]
    fn a_not_equal_test_and_a_pointer_stepped_by_a_chain_of_geps() {
        let ne = SUM.replace("slt %9, 14", "ne %9, 14");
        let out = same_behaviour(&ne, &["lftr", "dce"], "");
        assert_eq!(counters(&out), 1, "{out}");
        let chain = SUM.replace("add %1, 1", "add %1, 2").replace(
            "  %11 = gep %3, 1, 4\n",
            "  %12 = gep %3, 1, 4\n  %11 = gep %12, 1, 4\n",
        );
        assert!(chain.contains("gep %12, 1, 4"));
        let out = same_behaviour(&chain, &["lftr", "dce"], "");
        assert_eq!(counters(&out), 1, "{out}");
    }

    /// No replacement when the step is not a constant, or when the bound can be
    /// reached only after a wrap (by 2 toward an unknown bound, which may be
    /// `i32::MAX`: `i + 2` would wrap before the test fails).
    #[test]
    fn not_without_an_exact_count() {
        let header = "declare @putint(i32) -> void\ndeclare @getint() -> i32";
        let read = |src: &str| {
            src.replace("declare @putint(i32) -> void", header).replace(
                "bb0:\n  %0 = gep @a, 0, 4",
                "bb0:\n  %20 = call @getint()\n  %0 = gep @a, 0, 4",
            )
        };
        let varying = read(SUM).replace("add %1, 1", "add %1, %20");
        let wraps = read(SUM)
            .replace("add %1, 1", "add %1, 2")
            .replace("gep %3, 1, 4", "gep %3, 2, 4")
            .replace("slt %9, 14", "slt %9, %20");
        for src in [varying, wraps] {
            let out = same_behaviour(&src, &["lftr", "dce"], "1");
            assert_eq!(counters(&out), 2, "{out}");
        }
    }
}
