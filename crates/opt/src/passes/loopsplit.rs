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
//! - the loop is rotated with a counter ([`Counter`]: it steps by one, never wraps,
//!   and terminates, so skipping the empty iterations skips a finite count of them);
//! - the branch ends the header (which every iteration runs), and compares the
//!   counter (before or after its step) with a loop-invariant value by `<`, `<=`,
//!   `>` or `>=`, in the direction that becomes true (or false) and stays so;
//! - the header and the blocks from the stable side to the latch (a chain of jumps)
//!   hold no store and no call, and the latch's exit passes only loop-invariant
//!   arguments;
//! - no value defined in the loop is used outside it (the skipped iterations would
//!   have changed it).

use crate::analysis::AnalysisManager;
use crate::analysis::{Counter, LoopForest, LoopId, Preserved, RotatedLoop};
use crate::pipeline::Pass;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, CmpOp, Function, InstKind, Module, Value};

/// The loop splitting pass.
pub struct LoopSplit;

impl Pass for LoopSplit {
    fn name(&self) -> &'static str {
        "loopsplit"
    }
    fn description(&self) -> &'static str {
        "leave a loop once a monotonic condition sends every remaining iteration down an empty path"
    }
    fn run(&self, m: &mut Module) -> bool {
        super::each_function(m, |f| run(f) > 0)
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        am.each_function(m, |f, fa| {
            let (cfg, _, loops) = fa.loops(f);
            run_on(f, cfg, loops) > 0
        })
    }
}

/// Splits the loops of `f` that qualify; returns how many.
pub fn run(f: &mut Function) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    run_on(f, &cfg, &loops)
}

/// [`run`] with the function's CFG and loops given.
pub fn run_on(f: &mut Function, cfg: &ControlFlowGraph, loops: &LoopForest) -> usize {
    let plans: Vec<Plan> = loops
        .loops()
        .filter_map(|(id, _)| Plan::of(f, cfg, loops, id))
        .collect();
    for p in &plans {
        let term = f.terminator(p.header).expect("the header ends in a branch");
        f.set_target(term, p.stable, p.exit.clone());
    }
    plans.len()
}

/// One split: the header's branch target `stable` (0 or 1) becomes `exit`.
struct Plan {
    header: Block,
    stable: usize,
    exit: ir::BlockCall,
}

impl Plan {
    fn of(f: &Function, cfg: &ControlFlowGraph, loops: &LoopForest, id: LoopId) -> Option<Plan> {
        let l = RotatedLoop::of(f, cfg, loops, id)?;
        let counter = Counter::of(f, loops, id, &l)?;
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
        // `x op bound` with `x` the counter.
        let is_counter = |v: Value| v == counter.param || v == counter.next;
        let op = if is_counter(a) && invariant(b) {
            op
        } else if is_counter(b) && invariant(a) {
            op.swapped()
        } else {
            return None;
        };
        // Which outcome, once reached, stays: `x > bound` when counting up.
        let rising = counter.step == 1;
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
        // Nothing defined in the loop is used after it.
        for &b in &loops.get(id).blocks {
            let defined = f
                .block_params(b)
                .iter()
                .copied()
                .chain(f.layout.block_insts(b).filter_map(|i| f.inst_result(i)));
            for v in defined {
                let outside = f
                    .users(v)
                    .iter()
                    .any(|&u| f.layout.inst_block(u).is_none_or(|ub| !in_loop(ub)));
                if outside {
                    return None;
                }
            }
        }
        Some(Plan {
            header: l.header,
            stable,
            exit,
        })
    }
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

    #[test]
    fn the_header_leaves_once_the_condition_holds() {
        for n in ["0", "1", "3", "9", "40"] {
            let out = same_behaviour(TRIANGLE, &["loopsplit"], n);
            assert!(out.contains("br %6, bb6(%2), bb4"), "{out}");
        }
    }

    /// The condition read the other way round (`j > i`), and counting down with
    /// `j < i` (true from the point it flips): both split.
    #[test]
    fn mirrored_and_downward_conditions() {
        let swapped = TRIANGLE.replace("slt %1, %4", "sgt %4, %1");
        let out = same_behaviour(&swapped, &["loopsplit"], "7");
        assert!(out.contains("br %6, bb6(%2), bb4"), "{out}");
        let down = TRIANGLE
            .replace("jump bb3(0, %2)", "jump bb3(%0, %2)")
            .replace("slt %1, %4", "slt %4, %1")
            .replace("%11 = add %4, 1", "%11 = add %4, -1")
            .replace("%12 = slt %11, %0", "%12 = sgt %11, 0");
        let out = same_behaviour(&down, &["loopsplit"], "9");
        assert!(out.contains("br %6, bb6(%2), bb4"), "{out}");
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
