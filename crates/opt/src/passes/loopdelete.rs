//! Loop deletion: a loop that computes nothing used after it, does nothing
//! observable and provably terminates is removed; its preheader jumps straight to
//! its exit.
//!
//! Aggressive DCE ([`super::dce`]) keeps every loop, because deleting a loop that
//! never terminates would change the program. Here termination is proven instead
//! (as LLVM's `LoopDeletion` does with scalar evolution): the loop is innermost and
//! rotated, leaves only through its latch, and its latch's test bounds a counter that
//! steps by one ([`crate::analysis::induction`]), so it runs at most
//! `bound - start` times. Typical candidates are loops left empty once final value
//! replacement ([`super::finalvalue`]) computed their results in closed form.
//!
//! Nothing in the loop may have a side effect (stores, calls to functions that have
//! some); like DCE, this drops unused computations that might have trapped and
//! unused calls to functions without side effects.

use crate::analysis::{Counter, LoopForest, LoopId, Purity, RotatedLoop};
use crate::cfg_edit::remove_unreachable_blocks;
use crate::pipeline::Pass;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Function, InstKind, Module};

/// The loop deletion pass.
pub struct LoopDelete;

impl Pass for LoopDelete {
    fn name(&self) -> &'static str {
        "loopdelete"
    }
    fn description(&self) -> &'static str {
        "delete terminating loops without effects or used results"
    }
    fn run(&self, m: &mut Module) -> bool {
        let purity = Purity::compute(m);
        super::each_function(m, |f| run(f, &purity) > 0)
    }
}

/// Deletes the dead loops of `f`, innermost first (an outer loop can become dead
/// once its inner loops are gone); returns how many.
pub fn run(f: &mut Function, purity: &Purity) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let mut deleted = 0;
    loop {
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let loops = LoopForest::compute(f, &cfg, &dt);
        let dead = loops
            .loops()
            .map(|(id, _)| id)
            .find_map(|id| dead_loop(f, &cfg, &loops, purity, id));
        let Some((l, exit_args)) = dead else {
            return deleted;
        };
        // The preheader goes straight to the exit; the loop becomes unreachable.
        let pterm = f.terminator(l.preheader).expect("preheader has a jump");
        let exit = f.kind(l.branch).targets()[l.exit()].block;
        f.replace_kind(
            pterm,
            InstKind::Jump {
                dest: ir::BlockCall::new(exit, exit_args),
            },
        );
        remove_unreachable_blocks(f);
        deleted += 1;
    }
}

/// The loop's shape and exit arguments, if loop `id` can be deleted.
fn dead_loop(
    f: &Function,
    cfg: &ControlFlowGraph,
    loops: &LoopForest,
    purity: &Purity,
    id: LoopId,
) -> Option<(RotatedLoop, Vec<ir::Value>)> {
    let lp = loops.get(id);
    if !lp.children.is_empty() {
        return None;
    }
    let l = RotatedLoop::of(f, cfg, loops, id)?;
    Counter::of(f, loops, id, &l)?;
    let inside = |b: ir::Block| loops.contains(id, b);
    // Values of the loop used only in the loop (the exit edge's arguments are checked
    // below; any other edge leaving the loop disqualifies it anyway).
    let used_inside = |u: ir::Inst| f.layout.inst_block(u).is_none_or(inside);
    for &b in &lp.blocks {
        let leaves = f.successors(b).is_empty() || cfg.succs(b).iter().any(|&s| !inside(s));
        if leaves != (b == l.latch) {
            return None;
        }
        for &p in f.block_params(b) {
            if !f.users(p).iter().all(|&u| used_inside(u)) {
                return None;
            }
        }
        for i in f.layout.block_insts(b) {
            let k = f.kind(i);
            let effect = match k {
                InstKind::Call { callee, .. } => purity.effects(*callee).has_side_effects(),
                _ => k.has_side_effects() && !k.is_terminator(),
            };
            if effect {
                return None;
            }
            if let Some(r) = f.inst_result(i) {
                if !f.users(r).iter().all(|&u| used_inside(u)) {
                    return None;
                }
            }
        }
    }
    let exit_args = f.kind(l.branch).targets()[l.exit()].args.clone();
    let defined_inside = |v: ir::Value| f.value_block(v).is_some_and(inside);
    if exit_args.iter().any(|&a| defined_inside(a)) {
        return None;
    }
    Some((l, exit_args))
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    #[test]
    fn deletes_a_counted_loop_whose_results_are_unused() {
        check(
            &["loopdelete"],
            r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = mul %0, %0
  %3 = add %1, %2
  %4 = add %0, 1
  %5 = slt %4, 100
  br %5, bb1(%4, %3), bb2(7)
bb2(%6: i32):
  call @putint(%6)
  ret 0
}
"#,
            r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(7)
bb1(%0: i32):
  call @putint(%0)
  ret 0
}
"#,
        );
    }

    #[test]
    fn keeps_loops_that_matter_or_might_not_end() {
        // The result is used after the loop.
        let used = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = add %1, %0
  %3 = add %0, 1
  %4 = slt %3, 100
  br %4, bb1(%3, %2), bb2
bb2:
  call @putint(%2)
  ret 0
}
"#;
        same_behaviour(used, &["loopdelete"], "");
        assert!(crate::passes::testutil::run(used, &["loopdelete"]).contains("slt"));
        // A store is an effect.
        let stores = used
            .replace("  %3 = add %0, 1\n", "  store %0, @g\n  %3 = add %0, 1\n")
            .replace("declare @putint", "global @g: i32 = 0\n\ndeclare @putint")
            .replace("call @putint(%2)", "call @putint(0)");
        assert!(crate::passes::testutil::run(&stores, &["loopdelete"]).contains("slt"));
        // `i != 100` with a step of 3 might never end: kept.
        let endless = used
            .replace("add %0, 1", "add %0, 3")
            .replace("slt %3, 100", "ne %3, 100")
            .replace("call @putint(%2)", "call @putint(0)");
        assert!(crate::passes::testutil::run(&endless, &["loopdelete"]).contains("ne %"));
    }

    #[test]
    fn nests_go_inside_out_and_behaviour_is_kept() {
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0)
bb1(%0: i32):
  jump bb2(0)
bb2(%1: i32):
  %2 = mul %1, %0
  %3 = add %1, 1
  %4 = slt %3, 10
  br %4, bb2(%3), bb3
bb3:
  %5 = add %0, 1
  %6 = slt %5, 10
  br %6, bb1(%5), bb4
bb4:
  call @putint(5)
  ret 0
}
"#;
        let out = same_behaviour(src, &["loopdelete"], "");
        assert!(!out.contains("slt"), "{out}");
    }
}
