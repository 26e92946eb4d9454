//! Final value replacement: when a loop runs a number of times known at compile
//! time, the values it hands to its exit that grow by a loop-invariant amount per
//! iteration are computed in closed form before the loop, so nothing after the loop
//! depends on the loop's iterations any more. A loop that only computed such values
//! is then dead, and aggressive DCE ([`super::dce`]) deletes it.
//!
//! This is the exit-value rewriting of induction-variable simplification (LLVM's
//! `IndVarSimplify` on scalar evolutions; GCC's final value replacement in
//! `tree-scalar-evolution.c`), for the simplest recurrences, on rotated loops:
//!
//! - The loop has one latch, which is also its only exit: it ends in
//!   `br c, header(..), exit(..)` (or the arms swapped) and no other block of the
//!   loop leaves it or returns.
//! - The loop's counter ([`crate::analysis::induction`]) starts at a constant and is
//!   bounded by a constant, so the body runs a number of times `n` known at compile
//!   time (at least once: the loop is rotated, its guard decided the first
//!   iteration).
//! - A header parameter `x` that receives `x + c` from the latch, with `c`
//!   defined outside the loop, has the value `x0 + k * c` in iteration `k`
//!   (wrapping, like the loop's own additions). On the exit edge, `x` (after `n - 1`
//!   steps) and `x + c` (after `n`) are replaced by that expression, computed in the
//!   preheader.

use crate::analysis::induction::step_of;
use crate::analysis::FunctionAnalyses;
use crate::analysis::{Counter, LoopForest, LoopId, Preserved, RotatedLoop};
use crate::pipeline::{FunctionPass, Pass};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{BinOp, Function, InstKind, Module, Type, Value};

/// The final value replacement pass.
pub struct FinalValue;

impl Pass for FinalValue {
    fn name(&self) -> &'static str {
        "finalvalue"
    }
    fn description(&self) -> &'static str {
        "compute the exit values of counted loops in closed form"
    }
    fn run(&self, m: &mut Module) -> bool {
        super::each_function(m, |f| run(f) > 0)
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn function_pass(&self) -> Option<&dyn FunctionPass> {
        Some(self)
    }
}

impl FunctionPass for FinalValue {
    fn run_on(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        let (cfg, _, loops) = fa.loops(f);
        run_on(f, cfg, loops) > 0
    }
}

/// Replaces exit values in every qualifying loop of `f`; returns how many.
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
    let ids: Vec<LoopId> = loops.loops().map(|(id, _)| id).collect();
    // Only instructions in preheaders and branch arguments change: the loop
    // structure stays valid, and so do the blocks that leave each loop.
    let exiting = loops.exiting_counts(f, cfg);
    ids.into_iter()
        .map(|id| replace_exit_values(f, cfg, loops, &exiting, id))
        .sum()
}

fn replace_exit_values(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    loops: &LoopForest,
    exiting: &[usize],
    id: LoopId,
) -> usize {
    let Some(l) = RotatedLoop::of(f, cfg, loops, id) else {
        return 0;
    };
    // The latch is the only way out: it leaves the loop, and no other block
    // does (counted for all loops at once: a deep nest would scan each block
    // once per loop around it).
    let latch_leaves = f.successors(l.latch).is_empty()
        || cfg.succs(l.latch).iter().any(|&s| !loops.contains(id, s));
    if !latch_leaves || exiting[id.0 as usize] != 1 {
        return 0;
    }
    let Some(n) = Counter::of(f, loops, id, &l).and_then(|c| c.trip_count(f)) else {
        return 0;
    };
    let pterm = f.terminator(l.preheader).expect("preheader has a jump");
    let init = l.init_args(f).to_vec();
    let nexts = l.next_args(f).to_vec();
    let params = f.block_params(l.header).to_vec();
    let invariant =
        |f: &Function, v: Value| f.value_block(v).is_none_or(|b| !loops.contains(id, b));

    let mut exit = f.kind(l.branch).targets()[l.exit()].clone();
    let mut replaced = 0;
    for j in 0..params.len() {
        let (x, next) = (params[j], nexts[j]);
        let Some(c) = step_of(f, x, next) else {
            continue;
        };
        if !invariant(f, c) || f.value_type(x) != Type::I32 {
            continue;
        }
        // Uses after the loop see the last iteration: `x` after n - 1 steps, `x + c`
        // after n. They are outside the loop, or arguments on the exit edge.
        for (v, steps) in [(x, n.wrapping_sub(1)), (next, n)] {
            let outside: Vec<ir::Inst> = f
                .users(v)
                .iter()
                .copied()
                .filter(|&u| {
                    f.layout
                        .inst_block(u)
                        .is_some_and(|b| !loops.contains(id, b))
                })
                .collect();
            let on_exit = exit.args.contains(&v);
            if outside.is_empty() && !on_exit {
                continue;
            }
            let value = closed_form(f, pterm, init[j], c, steps);
            for u in outside {
                f.map_inst_args(u, |a| if a == v { value } else { a });
            }
            for a in exit.args.iter_mut() {
                if *a == v {
                    *a = value;
                }
            }
            replaced += 1;
        }
    }
    if replaced > 0 {
        f.set_target(l.branch, l.exit(), exit);
    }
    replaced
}

/// `x0 + steps * c`, inserted before `at`.
fn closed_form(f: &mut Function, at: ir::Inst, x0: Value, c: Value, steps: i32) -> Value {
    let steps = f.iconst(steps);
    let mul = f.insert_inst_before(
        at,
        InstKind::Binary {
            op: BinOp::Mul,
            args: [c, steps],
        },
        Type::I32,
    );
    let prod = f.inst_result(mul).expect("mul has a result");
    let add = f.insert_inst_before(
        at,
        InstKind::Binary {
            op: BinOp::Add,
            args: [x0, prod],
        },
        Type::I32,
    );
    f.inst_result(add).expect("add has a result")
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    #[test]
    fn accumulation_in_a_counted_loop_is_computed_before_it() {
        // tmp = 0; j = 0; do { tmp += x; j++ } while (j < 60); print(tmp)
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, %0
  %4 = add %1, 1
  %5 = slt %4, 60
  br %5, bb1(%4, %3), bb2
bb2:
  call @putint(%3)
  call @putint(%2)
  ret 0
}
"#;
        let out = same_behaviour(src, &["finalvalue", "loopdelete", "simplifycfg"], "7");
        assert!(!out.contains("slt"), "the loop is gone:\n{out}");
        assert!(
            out.contains("mul %0, 60") && out.contains("mul %0, 59"),
            "{out}"
        );
    }

    #[test]
    fn other_exits_and_unknown_counts_are_left_alone() {
        let unknown = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, 5
  %4 = add %1, 1
  %5 = slt %4, %0
  br %5, bb1(%4, %3), bb2
bb2:
  call @putint(%3)
  ret 0
}
"#;
        let out = same_behaviour(unknown, &["finalvalue"], "9");
        assert!(!out.contains("mul"), "{out}");
        let break_out = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, 5
  %4 = eq %3, %0
  br %4, bb3, bb2
bb2:
  %5 = add %1, 1
  %6 = slt %5, 60
  br %6, bb1(%5, %3), bb3
bb3:
  call @putint(%3)
  ret 0
}
"#;
        let out = same_behaviour(break_out, &["finalvalue"], "25");
        assert!(!out.contains("mul"), "{out}");
    }

    #[test]
    fn counts_with_the_old_value_and_a_late_start() {
        // while (i < 10) from i = 3, testing i before the increment: 7 + 1 runs.
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(3, 100)
bb1(%1: i32, %2: i32):
  %3 = add %2, -7
  %4 = add %1, 1
  %5 = slt %1, 10
  br %5, bb1(%4, %3), bb2
bb2:
  call @putint(%3)
  call @putint(%4)
  ret 0
}
"#;
        same_behaviour(src, &["finalvalue", "dce", "simplifycfg"], "");
    }
}
