//! Linear-function test replacement (Cocke and Kennedy, CACM 1977; LLVM's
//! `IndVarSimplify::linearFunctionTestReplace`): a loop whose counter `i` only
//! counts, beside a pointer `p` that advances by `stride` bytes per step of `i`
//! (strength reduction makes them), tests `p` instead of `i` at the latch; the counter
//! is then dead, and one add per iteration goes.
//!
//! The pointer is a header parameter entering as `start` while `i` enters as the
//! constant `i0`, and advanced by `gep p, step, stride` while `i` advances by `step`:
//! on every iteration `p = start + (i - i0) * stride` exactly (64-bit addresses of
//! `i32` indices). With `stride > 0` that map is strictly increasing, so the latch's
//! `i op bound` (or `i + step op bound`) has the outcome of `p op end` (or of the
//! advanced pointer), `end = start + (bound - i0) * stride` computed before the loop,
//! for every predicate. The counter must have no use but its step, the test and the
//! back edge (index arithmetic that only fed rewritten addresses is dead), so the
//! replacement pays for itself.

use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::analysis::{Counter, LoopForest, LoopId, RotatedLoop};
use crate::pipeline::{FunctionPass, Pass};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Function, Inst, InstKind, Type, Value};

/// The linear-function test replacement pass.
pub struct Lftr;

impl Pass for Lftr {
    fn name(&self) -> &'static str {
        "lftr"
    }
    fn description(&self) -> &'static str {
        "test a pointer induction variable at the latch instead of a counter that only counts"
    }
    fn preserves(&self) -> Preserved {
        Preserved::CFG.with_other_functions()
    }
    fn function_pass(&self) -> Option<&dyn FunctionPass> {
        Some(self)
    }
}

impl FunctionPass for Lftr {
    fn run_on(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        let (cfg, dt, loops) = fa.loops(f);
        run_on(f, cfg, dt, loops) > 0
    }
}

/// Replaces the exit tests of the loops of `f` that qualify; returns how many.
pub fn run(f: &mut Function) -> usize {
    crate::passes::with_loops(f, run_on)
}

/// [`run`] with the function's CFG and loops given (the pass adds no edges).
pub fn run_on(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    loops: &LoopForest,
) -> usize {
    let ids: Vec<LoopId> = loops.loops().map(|(id, _)| id).collect();
    let mut replaced = 0;
    for id in ids {
        // Edits add instructions only (no edges), so the loop shapes stay valid.
        let Some(l) = RotatedLoop::of(f, cfg, loops, id) else {
            continue;
        };
        let Some(iv) = Counter::of(f, cfg, dt, loops, id, &l) else {
            continue;
        };
        if replace_exit_test(f, &l, &iv) {
            replaced += 1;
        }
    }
    replaced
}

/// Rewrites the latch test of loop `l` (with counter `iv`) to compare a pointer of
/// the counter instead; returns whether it did.
fn replace_exit_test(f: &mut Function, l: &RotatedLoop, iv: &Counter) -> bool {
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = f.kind(l.branch).clone()
    else {
        return false;
    };
    let (Some(cmp), Some(step), Some(i0)) =
        (f.def_inst(cond), f.def_inst(iv.next), f.as_iconst(iv.init))
    else {
        return false;
    };
    let InstKind::Cmp { op, args: [a, b] } = *f.kind(cmp) else {
        return false;
    };
    if i0 == i32::MIN || f.users(cond) != [l.branch] {
        return false;
    }
    let leaves = {
        let targets = f.kind(l.branch).targets();
        let exit_args = &targets[l.exit()].args;
        exit_args.contains(&iv.next) || exit_args.contains(&iv.param)
    };
    let only = |f: &Function, v: Value, allowed: &[Inst]| {
        f.users(v)
            .iter()
            .all(|&u| allowed.contains(&u) || dead(f, u, 4))
    };
    if leaves || !only(f, iv.param, &[step, cmp]) || !only(f, iv.next, &[cmp, l.branch]) {
        return false;
    }
    let x = if iv.tests_next { iv.next } else { iv.param };
    let end_first = if a == x && b == iv.bound {
        false
    } else if b == x && a == iv.bound {
        true
    } else {
        return false;
    };
    let Some((k, stride)) = pointer_of_counter(f, l, iv) else {
        return false;
    };
    let p = f.block_params(l.header)[k];
    let start = l.init_args(f)[k];
    let px = if iv.tests_next { l.next_args(f)[k] } else { p };
    // end = start + (bound - i0) * stride, in two exact steps.
    let pterm = f.terminator(l.preheader).expect("preheader has a jump");
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
    let past = gep(f, start, iv.bound);
    let minus_i0 = f.iconst(-i0);
    let end = gep(f, past, minus_i0);
    let args = if end_first { [end, px] } else { [px, end] };
    let test = f.insert_inst_before(l.branch, InstKind::Cmp { op, args }, Type::I32);
    let cond = f.inst_result(test).expect("cmp has a result");
    f.replace_kind(
        l.branch,
        InstKind::Br {
            cond,
            then_dest,
            else_dest,
        },
    );
    true
}

/// The header parameter (index) that advances by `gep p, step, stride` in step with
/// the counter, with its stride; the one with the most uses when there are several.
fn pointer_of_counter(f: &Function, l: &RotatedLoop, iv: &Counter) -> Option<(usize, u32)> {
    let params = f.block_params(l.header);
    let mut best: Option<(usize, u32, usize)> = None;
    for (k, &p) in params.iter().enumerate() {
        let Some((step, stride)) = l.pointer_step(f, k) else {
            continue;
        };
        if step != iv.step || stride == 0 {
            continue;
        }
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
}
