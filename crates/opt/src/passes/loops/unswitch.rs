//! Loop unswitching: a branch inside a loop on a condition the loop does not change
//! is decided once, before the loop, which is copied: one copy for each side, each
//! with the branch replaced by a jump.
//!
//! ```text
//!   while (i < n) {                  if (c) while (i < n) { inner loop; ... }
//!     if (c) inner loop;       =>    else   while (i < n) { ... }
//!     ...
//!   }
//! ```
//!
//! Unswitching (Allen and Cocke's catalogue, 1972; LLVM's `SimpleLoopUnswitch`,
//! GCC's `tree-ssa-loop-unswitch.cc`) trades code size for a test per iteration and,
//! more usefully here, for a simpler loop in each copy: an inner loop guarded by an
//! invariant test (a `for` loop whose bound comes from outside, `n > 0`) runs on
//! every outer iteration of the copy that takes it, which is what hoisting it out
//! of the outer loop needs ([`super::hoistloops`]).
//!
//! So a branch is unswitched only when it guards an inner loop (one of its sides is
//! in an inner loop or enters one directly), and only when the copy then lets
//! [`super::hoistloops`] move an inner loop out (tried on a copy of the function):
//! elsewhere the copy would only be growth. The condition must be defined outside
//! the loop (its definition then dominates the preheader, where the new test goes),
//! and loops of at most [`MAX_LOOP_INSTS`] instructions are copied, a function
//! growing by at most [`MAX_GROWTH`].

use crate::analysis::{FunctionAnalyses, Preserved};
use crate::analysis::{LoopForest, LoopId};
use crate::loop_copy::LoopCopy;
use crate::pipeline::FunctionTransform;
use ir::analysis::ControlFlowGraph;
use ir::{Block, BlockArgs, BlockCall, Function, InstKind};

/// The loop unswitching pass.
pub struct Unswitch;

impl FunctionTransform for Unswitch {
    const NAME: &'static str = "unswitch";
    const DESCRIPTION: &'static str =
        "decide a loop-invariant test guarding an inner loop once, before the loop";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// Loops with more instructions than this are not copied.
pub const MAX_LOOP_INSTS: usize = 120;
/// A function grows by at most this many instructions.
pub const MAX_GROWTH: usize = 300;

/// Unswitches the loops of `f` that qualify, one per round; returns how many.
///
/// Each unswitch is tried on a copy of the function and kept only when inner-loop
/// hoisting then moves more loops out than it does without it: a copied loop nest
/// that nothing leaves is only growth (and registers: conv0 lost 1% to one).
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// [`run`], starting from the analyses cached in `fa` (left holding those of the
/// last round).
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    let mut budget = MAX_GROWTH;
    let mut tried: Vec<Block> = Vec::new();
    // What hoisting achieves in `f` as it stands (recounted only when `f` changes).
    let mut hoisted_without = None;
    fa.rounds(f, usize::MAX, |f, fa| {
        let (cfg, _, loops) = fa.loops(f);
        // Sizes summed up the nest: linear however deep it is.
        let sizes = loops.inst_counts(f);
        let candidate = loops.loops().find_map(|(id, lp)| {
            let size = sizes[id.0 as usize];
            if size > MAX_LOOP_INSTS.min(budget) || tried.contains(&lp.header) {
                return None;
            }
            let pre = loops.preheader(id, cfg)?;
            let b = invariant_guard(f, cfg, loops, id)?;
            Some((id, pre, b, size))
        });
        let (id, pre, b, size) = candidate?;
        tried.push(loops.get(id).header);
        let without =
            *hoisted_without.get_or_insert_with(|| super::hoistloops::run(&mut f.clone()));
        let mut trial = f.clone();
        unswitch(&mut trial, loops, id, pre, b);
        if super::hoistloops::run(&mut trial.clone()) <= without {
            return Some(0);
        }
        *f = trial;
        hoisted_without = None;
        budget -= size;
        Some(1)
    })
}

/// A block of loop `id` ending in a branch on a condition from outside the loop,
/// one of whose sides is in or enters an inner loop.
fn invariant_guard(
    f: &Function,
    cfg: &ControlFlowGraph,
    loops: &LoopForest,
    id: LoopId,
) -> Option<Block> {
    let lp = loops.get(id);
    let pt = f.terminator(loops.preheader(id, cfg)?)?;
    if !matches!(f.kind(pt), InstKind::Jump { .. }) {
        return None;
    }
    let in_child = |t: Block| {
        lp.children.iter().any(|&c| {
            loops.contains(c, t) || f.successors(t).iter().any(|&s| loops.get(c).header == s)
        })
    };
    lp.blocks.iter().copied().find(|&b| {
        let Some(InstKind::Br {
            cond,
            then_dest,
            else_dest,
        }) = f.terminator(b).map(|t| f.kind(t))
        else {
            return false;
        };
        let outside = f
            .value_block(*cond)
            .is_some_and(|cb| !loops.contains(id, cb));
        outside
            && f.as_iconst(*cond).is_none()
            && then_dest.block != else_dest.block
            && (in_child(then_dest.block) || in_child(else_dest.block))
            && loops.innermost(b) == Some(id)
    })
}

/// Copies loop `id` for the `else` side of the branch ending `b`; the preheader
/// chooses the copy.
fn unswitch(f: &mut Function, loops: &LoopForest, id: LoopId, pre: Block, b: Block) {
    let lp = loops.get(id);
    let copy = LoopCopy::new(f, lp, false);
    let term = f.terminator(b).expect("a guard ends in a branch");
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = f.kind(term).clone()
    else {
        unreachable!("guards end in br");
    };
    f.replace_kind(term, InstKind::Jump { dest: then_dest });
    let copy_term = f.terminator(copy.blocks[&b]).expect("copied");
    let mut else_copy = else_dest.clone();
    if let Some(&nb) = copy.blocks.get(&else_copy.block) {
        else_copy.block = nb;
    }
    else_copy.args = else_copy
        .args
        .iter()
        .map(|a| copy.values.get(a).copied().unwrap_or(*a))
        .collect::<BlockArgs>();
    f.replace_kind(copy_term, InstKind::Jump { dest: else_copy });
    let pt = f.terminator(pre).expect("a preheader ends in a jump");
    let call = f.kind(pt).targets()[0].clone();
    let copy_header = copy.blocks[&lp.header];
    // Each copy gets a preheader of its own (the loop passes want one).
    let mut entry_to = |dest: BlockCall| {
        let e = f.create_block();
        f.layout.insert_block_after(e, pre);
        f.append_inst(
            e,
            InstKind::Jump {
                dest: Box::new(dest),
            },
            ir::Type::Void,
        );
        BlockCall::new(e, Vec::new())
    };
    let then_entry = entry_to(call.clone());
    let else_entry = entry_to(BlockCall::new(copy_header, call.args));
    f.replace_kind(
        pt,
        InstKind::Br {
            cond,
            then_dest: Box::new(then_entry),
            else_dest: Box::new(else_entry),
        },
    );
    let created = copy.repair_uses_outside(f, lp);
    // The side each copy no longer takes is gone; then the merges are final.
    crate::cfg_edit::remove_unreachable_blocks(f);
    crate::ssa::remove_trivial_params(f, &created);
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `for (i = 0; i < n; i++) { if (m > 0) for (j = 0; j < m; j++) s += j; s += i; }`
    /// with the guard `m > 0` computed before the loop.
    const GUARDED: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = sgt %1, 0
  jump bb1(0, 0)
bb1(%3: i32, %4: i32):
  br %2, bb2(0, %4), bb3(%4)
bb2(%5: i32, %6: i32):
  %7 = add %6, %5
  %8 = add %5, 1
  %9 = slt %8, %1
  br %9, bb2(%8, %7), bb3(%7)
bb3(%10: i32):
  %11 = add %10, %3
  %12 = add %3, 1
  %13 = slt %12, %0
  br %13, bb1(%12, %11), bb4(%11)
bb4(%14: i32):
  call @putint(%14)
  ret 0
}
"#;

    #[test]
    fn an_invariant_guard_of_an_inner_loop_is_tested_once() {
        for input in ["3 4", "3 0", "1 -2", "5 1"] {
            let out = same_behaviour(GUARDED, &["unswitch"], input);
            assert_eq!(
                out.matches("br %2,").count(),
                1,
                "one test, before the loops:\n{out}"
            );
            assert_eq!(
                out.matches("%12 = add %3, 1").count(),
                0,
                "both copies renamed"
            );
        }
        // The copy that runs the inner loop enters it by a jump from its header,
        // the other skips it the same way.
        let out = run(GUARDED, &["unswitch"]);
        assert!(
            out.contains("bb5(%9: i32, %10: i32):\n  jump bb6(0, %10)"),
            "{out}"
        );
        assert!(
            out.contains("bb3(%3: i32, %4: i32):\n  jump bb4(%4)"),
            "{out}"
        );
    }

    #[test]
    fn a_copy_that_hoists_nothing_is_not_kept() {
        // The outer loop prints: the inner loop could not leave it, so the copy
        // would only be growth.
        let src = GUARDED.replace(
            "  %11 = add %10, %3\n",
            "  %11 = add %10, %3\n  call @putint(%11)\n",
        );
        assert_eq!(run(&src, &["unswitch"]), run(&src, &[]));
    }

    #[test]
    fn a_test_the_loop_computes_is_not_unswitched() {
        // The guard depends on the outer counter.
        let src = GUARDED.replace(
            "  br %2, bb2(0, %4), bb3(%4)",
            "  %20 = slt %3, %1\n  br %20, bb2(0, %4), bb3(%4)",
        );
        let out = run(&src, &["unswitch"]);
        assert_eq!(out.matches("br ").count(), 3, "{out}");
    }
}
