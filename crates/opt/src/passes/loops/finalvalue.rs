//! Final value replacement: when a loop runs a number of times known at compile
//! time, the values it hands to its exit that grow by a loop-invariant amount per
//! iteration are computed in closed form before the loop, so nothing after the loop
//! depends on the loop's iterations any more. A loop that only computed such values
//! is then dead, and aggressive DCE ([`crate::passes::scalar::dce`]) deletes it.
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
use ir::{BinOp, Function, InstKind, Type, Value, ValueDef};
use rustc_hash::FxHashMap;

/// The final value replacement pass.
pub struct FinalValue;

impl Pass for FinalValue {
    fn name(&self) -> &'static str {
        "finalvalue"
    }
    fn description(&self) -> &'static str {
        "compute the exit values of counted loops in closed form"
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
        let (cfg, dt, loops) = fa.loops(f);
        run_on(f, cfg, dt, loops) > 0
    }
}

/// Replaces exit values in every qualifying loop of `f`; returns how many.
pub fn run(f: &mut Function) -> usize {
    crate::passes::with_loops(f, run_on)
}

/// [`run`] with the function's CFG and loops given.
pub fn run_on(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    loops: &LoopForest,
) -> usize {
    let ids: Vec<LoopId> = loops.loops().map(|(id, _)| id).collect();
    // Only instructions in preheaders and branch arguments change: the loop
    // structure stays valid, and so do the blocks that leave each loop.
    let exiting = loops.exiting_counts(f, cfg);
    ids.into_iter()
        .map(|id| replace_exit_values(f, cfg, dt, loops, &exiting, id))
        .sum()
}

fn replace_exit_values(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
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
            let outside = users_outside(f, loops, id, v);
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
    // Values computed from the counters on every iteration (the latch is the only
    // exit, so their last iteration's value is what leaves): recomputed before the
    // loop from the parameters' last values.
    let mut derived = Derived {
        id,
        latch: l.latch,
        header: l.header,
        n,
        pterm,
        init: &init,
        nexts: &nexts,
        memo: FxHashMap::default(),
    };
    let body: Vec<ir::Inst> = loops
        .get(id)
        .blocks
        .iter()
        .filter(|&&b| dt.dominates(b, l.latch))
        .flat_map(|&b| f.layout.block_insts(b).collect::<Vec<_>>())
        .collect();
    for i in body {
        let Some(v) = f.inst_result(i) else {
            continue;
        };
        if params.contains(&v) || nexts.contains(&v) {
            continue;
        }
        let outside = users_outside(f, loops, id, v);
        let on_exit = exit.args.contains(&v);
        if outside.is_empty() && !on_exit {
            continue;
        }
        let Some(value) = derived.exit_value(f, dt, loops, v, 0) else {
            continue;
        };
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
    if replaced > 0 {
        f.set_target(l.branch, l.exit(), exit);
    }
    replaced
}

/// The instructions outside loop `id` that use `v`.
fn users_outside(f: &Function, loops: &LoopForest, id: LoopId, v: Value) -> Vec<ir::Inst> {
    f.users(v)
        .iter()
        .copied()
        .filter(|&u| {
            f.layout
                .inst_block(u)
                .is_some_and(|b| !loops.contains(id, b))
        })
        .collect()
}

/// How deep [`Derived::exit_value`] follows operands.
const MAX_DEPTH: usize = 12;

/// Exit values of values computed from a counted loop's parameters.
struct Derived<'a> {
    id: LoopId,
    latch: ir::Block,
    header: ir::Block,
    n: i32,
    pterm: ir::Inst,
    init: &'a [Value],
    nexts: &'a [Value],
    memo: FxHashMap<Value, Option<Value>>,
}

impl Derived<'_> {
    /// The value `v` has in the loop's last iteration, computed before the loop:
    /// invariants as they are, a stepping header parameter in closed form, and
    /// arithmetic that cannot trap, computed on every iteration (its block dominates
    /// the latch), over such values.
    fn exit_value(
        &mut self,
        f: &mut Function,
        dt: &DominatorTree,
        loops: &LoopForest,
        v: Value,
        depth: usize,
    ) -> Option<Value> {
        let Some(b) = f.value_block(v) else {
            return Some(v);
        };
        if !loops.contains(self.id, b) {
            return Some(v);
        }
        if let Some(&known) = self.memo.get(&v) {
            return known;
        }
        let found = self.compute(f, dt, loops, v, b, depth);
        self.memo.insert(v, found);
        found
    }

    fn compute(
        &mut self,
        f: &mut Function,
        dt: &DominatorTree,
        loops: &LoopForest,
        v: Value,
        b: ir::Block,
        depth: usize,
    ) -> Option<Value> {
        if depth > MAX_DEPTH || f.value_type(v) != Type::I32 {
            return None;
        }
        if let ValueDef::Param(pb, k) = f.value_def(v) {
            if pb != self.header {
                return None;
            }
            let c = step_of(f, v, self.nexts[k as usize])?;
            if f.value_block(c)
                .is_some_and(|cb| loops.contains(self.id, cb))
            {
                return None;
            }
            let x0 = self.init[k as usize];
            return Some(closed_form(f, self.pterm, x0, c, self.n.wrapping_sub(1)));
        }
        if !dt.dominates(b, self.latch) {
            return None;
        }
        let i = f.def_inst(v)?;
        let mut kind = f.kind(i).clone();
        match &kind {
            InstKind::Binary { op, args } => {
                let safe_divisor = matches!(f.as_iconst(args[1]), Some(c) if c != 0 && c != -1);
                if op.can_trap() && !safe_divisor {
                    return None;
                }
            }
            InstKind::Cmp { .. } => {}
            _ => return None,
        }
        let mut args = Vec::new();
        kind.for_each_arg(|a| args.push(a));
        let mut mapped = Vec::with_capacity(args.len());
        for a in args {
            mapped.push(self.exit_value(f, dt, loops, a, depth + 1)?);
        }
        let mut it = mapped.into_iter();
        kind.map_args(|a| *a = it.next().expect("one value per operand"));
        let ty = f.value_type(v);
        let clone = f.insert_inst_before(self.pterm, kind, ty);
        f.inst_result(clone)
    }
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

    #[test]
    fn a_value_computed_from_the_counter_leaves_in_closed_form() {
        // A recursion turned into a loop counting down from 1000, computing
        // 1000 - i + 1 on every trip: after the loop it is 1000, and the loop is dead.
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(1000)
bb1(%0: i32):
  %1 = add %0, -1
  %2 = sub 1000, %0
  %3 = add %2, 1
  %4 = mul %3, 3
  %5 = eq %1, 0
  br %5, bb2, bb1(%1)
bb2:
  call @putint(%4)
  ret 0
}
"#;
        let passes = ["finalvalue", "sccp", "dce", "loopdelete", "simplifycfg"];
        let out = same_behaviour(src, &passes, "");
        assert!(out.contains("call @putint(3000)"), "{out}");
        assert!(!out.contains("bb1"), "{out}");
    }

    #[test]
    fn conditional_or_trapping_values_stay_in_the_loop() {
        // %6 is computed only on some trips (its block does not dominate the latch),
        // and %4 divides by a variable: neither is recomputed before the loop.
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0)
bb1(%1: i32):
  %2 = add %1, 1
  %3 = and %1, 1
  %4 = sdiv 100, %0
  br %3, bb2, bb3(%1)
bb2:
  %6 = mul %1, 7
  jump bb3(%6)
bb3(%7: i32):
  %8 = slt %2, 10
  br %8, bb1(%2), bb4
bb4:
  %9 = add %4, %7
  call @putint(%9)
  ret 0
}
"#;
        let out = same_behaviour(src, &["finalvalue", "dce"], "7");
        assert!(out.contains("sdiv 100, %0"), "{out}");
        assert_eq!(out.matches("sdiv").count(), 1, "{out}");
        assert!(
            out.contains("mul %1, 7") || out.matches("mul").count() == 1,
            "{out}"
        );
    }
}
