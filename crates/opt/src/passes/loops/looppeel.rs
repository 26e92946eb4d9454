//! Loop peeling of a first iteration that differs: when a test in the loop
//! compares a value the header carries with one from before the loop, and every
//! back edge decides the test, but the entry does not, the first iteration is
//! copied in front of the loop. The loop left behind is entered only through back
//! edges (the copy's and its own), so the test is decided in all of it, and jump
//! threading folds it.
//!
//! ```text
//!   while (i < n) {                        if (j < n) { inner loop }   // iteration 1
//!     if (j < n) { inner loop: j++ }  =>   i++;
//!     use(x, y); i++;                      while (i < n) { use(x, y); i++; }
//!   }
//! ```
//!
//! After the inner loop (or with it skipped) `j >= n`: only the first iteration can
//! run it. Once peeled, what the remaining iterations read may stop changing:
//! memory the first iteration wrote, a pure call's arguments, and loop-invariant
//! code motion and [`super::hoistloops`] take it out of the loop. This is GCC's
//! loop peeling for iterations whose conditions are known
//! (`tree-ssa-loop-ivcanon.cc`, `peel_loops`) and LLVM's `LoopPeel` with
//! `peelToTurnInvariantLoadsDerefencebale`/"phis that become invariant after
//! peeling": one iteration, when it makes a condition or a value invariant.
//!
//! Whether a back edge decides the test is asked as jump threading asks it
//! ([`crate::passes::scalar::jumpthread::decides_on_edge`]): the facts of the branches on the way to the
//! latch, through the parameters of the joins on the way.
//!
//! The loop is copied block by block (the copy's back edges go to the original
//! header; its exits to the loop's exits), and the values the loop defines are
//! repaired outside it with the SSA updater. Loops of at most [`MAX_LOOP_INSTS`]
//! instructions are peeled, and a function grows by at most [`MAX_GROWTH`].

use crate::analysis::{FunctionAnalyses, Preserved};
use crate::analysis::{LoopForest, LoopId};
use crate::cfg_edit::single_edge;
use crate::loop_copy::LoopCopy;
use crate::passes::scalar::jumpthread::decides_on_edge;
use crate::pipeline::FunctionTransform;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, BlockCall, Function, InstKind, Value};

/// The loop peeling pass.
pub struct LoopPeel;

impl FunctionTransform for LoopPeel {
    const NAME: &'static str = "looppeel";
    const DESCRIPTION: &'static str = "peel a first iteration whose test the later ones all decide";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// Loops with more instructions than this are not peeled.
pub const MAX_LOOP_INSTS: usize = 150;
/// A function grows by at most this many instructions.
pub const MAX_GROWTH: usize = 400;

/// Peels the loops of `f` that qualify, one per round; returns how many.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// [`run`], starting from the analyses cached in `fa` (left holding those of the
/// last round).
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    peel_where(f, fa, worth_peeling)
}

/// Peels the first iteration of every loop `worth` accepts, one at a time (each
/// peel recomputes the analyses), each loop once, within [`MAX_GROWTH`]
/// instructions in all; returns how many. Shared by `looppeel` and `peelinv`.
pub(crate) fn peel_where(
    f: &mut Function,
    fa: &mut FunctionAnalyses,
    worth: impl Fn(&Function, &ControlFlowGraph, &DominatorTree, &LoopForest, LoopId) -> bool,
) -> usize {
    let mut budget = MAX_GROWTH;
    let mut done: Vec<Block> = Vec::new();
    fa.rounds(f, usize::MAX, |f, fa| {
        let (cfg, dt, loops) = fa.loops(f);
        // Sizes summed up the nest: linear however deep it is.
        let sizes = loops.inst_counts(f);
        let candidate = loops.loops().find_map(|(id, lp)| {
            let size = sizes[id.0 as usize];
            (!done.contains(&lp.header)
                && size <= MAX_LOOP_INSTS.min(budget)
                && worth(f, cfg, dt, loops, id))
            .then_some((id, size))
        });
        let (id, size) = candidate?;
        let header = loops.get(id).header;
        if jump_preheader(f, cfg, loops, id).is_none() {
            // The loop is entered from a conditional branch (or from several
            // blocks): a block of its own that jumps to the header takes those
            // edges, to hold the copy.
            let mut cfg = cfg.clone();
            crate::passes::loops::licm::insert_preheader(f, &mut cfg, loops, id);
            fa.forget();
        }
        let (cfg, _, loops) = fa.loops(f);
        let id = loops.innermost(header).expect("a header is in its loop");
        let pre = jump_preheader(f, cfg, loops, id).expect("the preheader ends in a jump");
        budget -= size;
        done.push(header);
        peel(f, loops, id, pre);
        Some(1)
    })
}

/// The preheader of loop `id` when it ends in a jump (where [`peel`] puts the
/// copy of the first iteration).
pub(crate) fn jump_preheader(
    f: &Function,
    cfg: &ControlFlowGraph,
    loops: &LoopForest,
    id: LoopId,
) -> Option<Block> {
    let pre = loops.preheader(id, cfg)?;
    matches!(
        f.terminator(pre).map(|t| f.kind(t)),
        Some(InstKind::Jump { .. })
    )
    .then_some(pre)
}

/// Whether a branch in loop `id` compares a header parameter with a value from
/// before the loop, decided the same way on every back edge but not on entry.
fn worth_peeling(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    loops: &LoopForest,
    id: LoopId,
) -> bool {
    let lp = loops.get(id);
    let h = lp.header;
    let Some(pre) = jump_preheader(f, cfg, loops, id) else {
        return false;
    };
    let params = f.block_params(h);
    let edge_args = |p: Block| single_edge(f, p, h).map(|(_, args)| args);
    for &b in &lp.blocks {
        let Some(InstKind::Br { cond, .. }) = f.terminator(b).map(|t| f.kind(t)) else {
            continue;
        };
        let Some(InstKind::Cmp { op, args: [x, y] }) = f.def_inst(*cond).map(|i| f.kind(i)) else {
            continue;
        };
        let outside = |v: Value| f.value_block(v).is_none_or(|vb| !loops.contains(id, vb));
        let (k, other, swapped) = match (
            params.iter().position(|&p| p == *x),
            params.iter().position(|&p| p == *y),
        ) {
            (Some(k), None) if outside(*y) => (k, *y, false),
            (None, Some(k)) if outside(*x) => (k, *x, true),
            _ => continue,
        };
        let question = |a: Value| {
            if swapped {
                (*op, other, a)
            } else {
                (*op, a, other)
            }
        };
        let mut answer = None;
        let mut all = true;
        for &latch in &lp.latches {
            let Some(args) = edge_args(latch) else {
                all = false;
                break;
            };
            match decides_on_edge(f, cfg, dt, latch, h, question(args[k])) {
                Some(t) if answer.is_none_or(|a| a == t) => answer = Some(t),
                _ => {
                    all = false;
                    break;
                }
            }
        }
        let Some(t) = answer.filter(|_| all) else {
            continue;
        };
        let entry =
            edge_args(pre).and_then(|args| decides_on_edge(f, cfg, dt, pre, h, question(args[k])));
        if entry != Some(t) {
            return true;
        }
    }
    false
}

/// Copies loop `id` in front of itself for its first iteration.
fn peel(f: &mut Function, loops: &LoopForest, id: LoopId, pre: Block) {
    let lp = loops.get(id);
    let copy = LoopCopy::new(f, lp, true);
    // The preheader enters the copy.
    let pt = f.terminator(pre).expect("a preheader ends in a jump");
    let call = f.kind(pt).targets()[0].clone();
    f.set_target(pt, 0, BlockCall::new(copy.blocks[&lp.header], call.args));
    let created = copy.repair_uses_outside(f, lp);
    crate::ssa::remove_trivial_params(f, &created);
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    /// `while (i < 10) { if (i % 3) {} if (j < n) { while (j < n) { s += j; j++; } }
    /// s += i; i++; }` with `j` never reset: the inner loop's guard is below a
    /// diamond, not in the header.
    const ONCE: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 0, 0)
bb1(%1: i32, %2: i32, %3: i32):
  %4 = srem %1, 3
  br %4, bb2, bb3
bb2:
  jump bb3
bb3:
  %5 = slt %2, %0
  br %5, bb4(%2, %3), bb5(%2, %3)
bb4(%6: i32, %7: i32):
  %8 = add %7, %6
  %9 = add %6, 1
  %10 = slt %9, %0
  br %10, bb4(%9, %8), bb5(%9, %8)
bb5(%11: i32, %12: i32):
  %13 = add %12, %1
  %14 = add %1, 1
  %15 = slt %14, 10
  br %15, bb1(%14, %11, %13), bb6
bb6:
  call @putint(%13)
  ret 0
}
"#;

    #[test]
    fn the_first_iteration_runs_the_inner_loop_and_the_rest_do_not() {
        let passes = ["looppeel", "jumpthread", "dce", "simplifycfg"];
        check(
            &passes,
            ONCE,
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = slt 0, %0
  br %1, bb1(0, 0), bb2(0)
bb1(%2: i32, %3: i32):
  %4 = add %3, %2
  %5 = add %2, 1
  %6 = slt %5, %0
  br %6, bb1(%5, %4), bb2(%4)
bb2(%7: i32):
  %8 = add %7, 0
  %9 = add 0, 1
  %10 = slt %9, 10
  br %10, bb3(%9, %8), bb4(%8)
bb3(%11: i32, %12: i32):
  %13 = add %12, %11
  %14 = add %11, 1
  %15 = slt %14, 10
  br %15, bb3(%14, %13), bb4(%13)
bb4(%16: i32):
  call @putint(%16)
  ret 0
}
"#,
        );
        for n in ["0", "1", "5", "-1", "40"] {
            same_behaviour(ONCE, &passes, n);
        }
    }

    #[test]
    fn a_test_the_back_edge_leaves_open_is_not_peeled() {
        // `j` restarts at 0 on every outer iteration: every iteration may run the
        // inner loop.
        let src = ONCE.replace("bb1(%14, %11, %13)", "bb1(%14, 0, %13)");
        check(&["looppeel"], &src, &src);
    }
}
