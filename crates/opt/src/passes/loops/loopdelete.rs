//! Loop deletion: a loop that computes nothing used after it, does nothing
//! observable and provably terminates is removed; its preheader jumps straight to
//! its exit.
//!
//! Aggressive DCE ([`crate::passes::scalar::dce`]) keeps every loop it cannot prove
//! finite, because deleting a loop that never terminates would change the program;
//! it deletes whole dead nests of loops proven finite, by the same test as here.
//! This pass remains for the loops it reaches between DCE runs (after final value
//! replacement, in particular). Termination is proven
//! (as LLVM's `LoopDeletion` does with scalar evolution): the loop is innermost and
//! a test on every iteration has an exit count that holds unconditionally
//! ([`crate::analysis::scev::ScalarEvolution::terminates`]): a counter stepping by
//! any constant toward a `<`, `<=`, `>` or `>=` bound it cannot step past, or by
//! one toward a `!=` bound (which it meets, wrapping if need be), or by another
//! constant toward a constant `!=` bound it meets. Typical candidates are loops left
//! empty once final value replacement ([`super::finalvalue`]) computed their results
//! in closed form, and loops of inlined functions whose result is unused.
//!
//! Nothing in the loop may have a side effect (stores, calls to functions that have
//! some), no value it defines may be used after it, and every edge leaving it must go
//! to the same block with the same arguments (so which exit is taken does not
//! matter); the edges entering the loop then go there directly. Like DCE, this drops
//! unused computations that might have trapped and unused calls to functions without
//! side effects.

use crate::analysis::{AnalysisManager, FunctionAnalyses, Preserved};
use crate::analysis::{LoopForest, LoopId, Purity};
use crate::cfg_edit::remove_unreachable_blocks;
use crate::pipeline::Pass;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, BlockCall, Function, InstKind, Module, Value};
use rustc_hash::FxHashSet;

/// The loop deletion pass.
pub struct LoopDelete;

impl Pass for LoopDelete {
    fn name(&self) -> &'static str {
        "loopdelete"
    }
    fn description(&self) -> &'static str {
        "delete terminating loops without effects or used results"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        am.each_function_with_purity(m, |f, purity, fa| run_in(f, purity, fa) > 0)
    }
}

/// Deletes the dead loops of `f`, innermost first (an outer loop can become dead
/// once its inner loops are gone), starting from the analyses cached in `fa`
/// (left holding those of the last round); returns how many.
fn run_in(f: &mut Function, purity: &Purity, fa: &mut FunctionAnalyses) -> usize {
    fa.rounds(f, usize::MAX, |f, fa| {
        let mut se = fa.scev(f);
        let (cfg, loops) = (se.cfg, se.loops);
        // Only innermost loops can be proven to terminate: the others are rejected
        // at once, where `dead_loop` would walk all their blocks (quadratic in a
        // deep nest). An innermost loop's own blocks are walked next, at most once
        // per block in all: most loops have an effect there, and the termination
        // proof (trip counts from scalar evolution) is the dearer test.
        let dead: Vec<Bypass> = loops
            .loops()
            .filter(|(_, l)| l.children.is_empty())
            .filter_map(|(id, _)| dead_loop(f, cfg, loops, purity, id))
            .filter(|exit| se.terminates(exit.id))
            .collect();
        // Every dead loop of the round is bypassed at once (one analysis per round,
        // not per loop: a function of many loops stays linear), except one whose
        // entries or exit touch another's blocks: it waits for the next round.
        let mut touched: FxHashSet<Block> = FxHashSet::default();
        let mut round = 0;
        for exit in dead {
            let mut mine = exit.blocks.clone();
            mine.push(exit.dest.block);
            mine.extend(exit.entries.iter().map(|&(p, _)| p));
            if mine.iter().any(|b| touched.contains(b)) {
                continue;
            }
            touched.extend(mine);
            bypass(f, exit);
            round += 1;
        }
        if round == 0 {
            return None;
        }
        remove_unreachable_blocks(f);
        Some(round)
    })
}

/// Deletes the loop headed by `header`, which the caller knows terminates, if it
/// has no effect and computes nothing used after it (a loop another pass emptied,
/// whose termination proof went with what it removed); whether it did.
pub fn delete_terminating(f: &mut Function, purity: &Purity, header: Block) -> bool {
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let Some(id) = loops
        .loops()
        .find(|(_, l)| l.header == header)
        .map(|(id, _)| id)
    else {
        return false;
    };
    match dead_loop(f, &cfg, &loops, purity, id) {
        Some(exit) => {
            bypass(f, exit);
            remove_unreachable_blocks(f);
            true
        }
        None => false,
    }
}

/// Sends the edges entering a dead loop to its exit; the loop becomes unreachable
/// (for the caller to remove).
fn bypass(f: &mut Function, exit: Bypass) {
    for (pred, which) in exit.entries {
        let term = f.terminator(pred).expect("a predecessor ends in a branch");
        f.set_target(term, which, exit.dest.clone());
        // A branch whose arms now agree is a jump.
        if let InstKind::Br {
            then_dest,
            else_dest,
            ..
        } = f.kind(term)
        {
            if then_dest == else_dest {
                let dest = then_dest.clone();
                f.replace_kind(term, InstKind::Jump { dest });
            }
        }
    }
}

/// Where a dead loop's entries go instead.
struct Bypass {
    /// The loop.
    id: LoopId,
    /// The loop's blocks.
    blocks: Vec<Block>,
    /// The exit block with the (loop-invariant) arguments every exit edge passes.
    dest: BlockCall,
    /// The branches entering the loop: (block, target index).
    entries: Vec<(Block, usize)>,
}

/// How to bypass loop `id`, if it can be deleted once it is known to terminate.
fn dead_loop(
    f: &Function,
    cfg: &ControlFlowGraph,
    loops: &LoopForest,
    purity: &Purity,
    id: LoopId,
) -> Option<Bypass> {
    let lp = loops.get(id);
    let inside = |b: Block| loops.contains(id, b);
    // Values of the loop may be used only in the loop; every edge out of it goes to
    // one block with the same arguments, defined outside the loop.
    let used_inside = |v: Value| {
        f.users(v)
            .iter()
            .all(|&u| f.layout.inst_block(u).is_none_or(inside))
    };
    let mut dest: Option<BlockCall> = None;
    for &b in &lp.blocks {
        let term = f.terminator(b)?;
        if matches!(f.kind(term), InstKind::Ret { .. }) {
            return None;
        }
        for t in f.kind(term).targets() {
            if inside(t.block) {
                continue;
            }
            match &dest {
                None => dest = Some(t.clone()),
                Some(d) if d == t => {}
                Some(_) => return None,
            }
        }
        if !f.block_params(b).iter().all(|&p| used_inside(p)) {
            return None;
        }
        for i in f.layout.block_insts(b) {
            let k = f.kind(i);
            let effect = match k {
                InstKind::Call { callee, .. } => purity.effects(*callee).has_side_effects(),
                _ => k.has_side_effects() && !k.is_terminator(),
            };
            if effect || f.inst_result(i).is_some_and(|r| !used_inside(r)) {
                return None;
            }
        }
    }
    let dest = dest?;
    if dest
        .args
        .iter()
        .any(|&a| f.value_block(a).is_some_and(inside))
    {
        return None;
    }
    let mut entries = Vec::new();
    for p in cfg.unique_preds(lp.header) {
        if inside(p) {
            continue;
        }
        let term = f.terminator(p)?;
        for (which, t) in f.kind(term).targets().iter().enumerate() {
            if t.block == lp.header {
                entries.push((p, which));
            }
        }
    }
    Some(Bypass {
        id,
        blocks: lp.blocks.iter().copied().collect(),
        dest,
        entries,
    })
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{same_behaviour, sum_below};

    #[test]
    fn keeps_loops_that_matter_or_might_not_end() {
        // The result is used after the loop.
        let used = &sum_below(100);
        same_behaviour(used, &["loopdelete"], "");
        assert!(crate::passes::testutil::run(used, &["loopdelete"]).contains("slt"));
        // A store is an effect.
        let stores = used
            .replace("  %3 = add %0, 1\n", "  store %0, @g\n  %3 = add %0, 1\n")
            .replace("declare @putint", "global @g: i32 = 0\n\ndeclare @putint")
            .replace("call @putint(%2)", "call @putint(0)");
        assert!(crate::passes::testutil::run(&stores, &["loopdelete"]).contains("slt"));
        // `i != 101` with a step of 2 from 0 never ends: kept. (With a step of 3
        // it would meet 101 after wrapping round: see below.)
        let endless = used
            .replace("add %0, 1", "add %0, 2")
            .replace("slt %3, 100", "ne %3, 101")
            .replace("call @putint(%2)", "call @putint(0)");
        assert!(crate::passes::testutil::run(&endless, &["loopdelete"]).contains("ne %"));
        // `i != n` with a step of 3 and `n` unknown might never end: kept.
        let unknown = endless
            .replace("add %0, 2", "add %0, 3")
            .replace("ne %3, 101", "ne %3, %9")
            .replace("bb0:\n", "bb0:\n  %9 = call @getint()\n")
            .replace(
                "declare @putint",
                "declare @getint() -> i32\ndeclare @putint",
            );
        assert!(crate::passes::testutil::run(&unknown, &["loopdelete"]).contains("ne %"));
        // `i < 100` with a step of 3 ends (it cannot jump over 100..=i32::MAX): gone,
        // and so is `i > -7` counting down by 5; `i < 2147483647` by 3 could jump
        // over its one exit value and wrap round for ever: kept.
        let unused = used.replace("call @putint(%2)", "call @putint(0)");
        let by_three = unused.replace("add %0, 1", "add %0, 3");
        same_behaviour(&by_three, &["loopdelete"], "");
        assert!(!crate::passes::testutil::run(&by_three, &["loopdelete"]).contains("slt"));
        let down = unused
            .replace("add %0, 1", "add %0, -5")
            .replace("slt %3, 100", "sgt %3, -7");
        same_behaviour(&down, &["loopdelete"], "");
        assert!(!crate::passes::testutil::run(&down, &["loopdelete"]).contains("sgt"));
        let skips = by_three.replace("slt %3, 100", "slt %3, 2147483647");
        assert!(crate::passes::testutil::run(&skips, &["loopdelete"]).contains("slt"));
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

    /// `while (i < x && i < y) { i = i + 1; ret = ret + x + i; }` with `ret` unused
    /// (performance/median1 calls such a function and ignores its result): two exits
    /// to the same block, the counter tested on every iteration.
    #[test]
    fn two_exits_to_one_block() {
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  %4 = slt %2, %0
  br %4, bb2, bb3(%1)
bb2:
  %5 = slt %2, %1
  br %5, bb4, bb3(%1)
bb4:
  %6 = add %2, 1
  %7 = add %3, %0
  %8 = add %7, %6
  jump bb1(%6, %8)
bb3(%9: i32):
  call @putint(%9)
  ret 0
}
"#;
        let out = same_behaviour(src, &["loopdelete"], "5 9");
        assert!(!out.contains("slt"), "{out}");
        // Exits to different blocks: which one is taken matters.
        let split = src
            .replace("br %5, bb4, bb3(%1)", "br %5, bb4, bb5")
            .replace("  ret 0\n}", "  ret 0\nbb5:\n  ret 1\n}");
        let out = same_behaviour(&split, &["loopdelete"], "5 9");
        assert!(out.contains("slt"), "{out}");
    }

    /// An unused loop `i = 0; do { s += i; i += STEP } while (i TEST)`.
    fn unused_loop(step: i32, test: &str) -> String {
        format!(
            r#"
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = add %1, %0
  %3 = add %0, {step}
  %4 = {test}
  br %4, bb1(%3, %2), bb2
bb2:
  call @putint(0)
  ret 0
}}
"#
        )
    }

    #[test]
    fn scalar_evolution_proves_more_loops_terminate() {
        // `<=` and `>=` bounds the counter cannot step past, and `!=` bounds a
        // counter stepping by 2 meets, or by 3 meets after wrapping round.
        for (step, test) in [
            (1, "sle %3, 100"),
            (4, "sle %3, 2147483643"),
            (-2, "sge %3, -50"),
            (2, "ne %3, 100"),
            (3, "ne %3, 100"),
        ] {
            let src = unused_loop(step, test);
            let out = crate::passes::testutil::run(&src, &["loopdelete"]);
            assert!(!out.contains("bb1("), "{step} {test}:\n{out}");
        }
        // Stepping past the end of `i32` (2147483644 + 4 wraps): kept.
        let out =
            crate::passes::testutil::run(&unused_loop(4, "sle %3, 2147483644"), &["loopdelete"]);
        assert!(out.contains("bb1("), "{out}");
    }
}
