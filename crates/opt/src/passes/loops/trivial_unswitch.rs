//! Trivial loop unswitching: a branch in a loop on a loop-invariant condition, one
//! of whose edges leaves the loop, and which every iteration reaches before doing
//! anything observable, is moved to the preheader. The loop is not copied: since
//! the condition cannot change, the exit is taken on the first iteration or never,
//! so it is taken before the loop or not at all.
//!
//! ```text
//!   pre:  jump h(a)                 pre:  br %c, exit(x), h(a)
//!   h(%i):                          h(%i):
//!     br %c, exit(x), body    =>      jump body
//! ```
//!
//! This is LLVM's trivial unswitching (`SimpleLoopUnswitch`'s
//! `unswitchTrivialBranch`, after the old `LoopUnswitch`'s `isTrivialLoopExitBlock`):
//! the walk starts at the header and follows unconditional jumps through blocks
//! without side effects; the first conditional branch met on an invariant
//! condition is unswitched when one of its edges exits. The walk may pass
//! branches on variant conditions that leave the loop by the very edge the
//! invariant one leaves by (the same block and arguments): on the first
//! iteration the loop then leaves by that edge whenever the invariant condition
//! says so, whichever test comes first (`while (d > 0) { if (d0 > 625) break;
//! ..}`, as [`super::first_exit`] leaves it). No code is copied and the
//! loop loses a test per iteration; an exit that was its only one besides a counted
//! test often leaves a loop that final value replacement and loop deletion remove.
//!
//! Conditions checked here:
//! - the preheader ends in `jump header(...)`;
//! - the blocks from the header to the branch (the header, then unconditional jumps
//!   within the loop, no block twice) hold no store, call or allocation: the branch
//!   is then reached on the first iteration with nothing observable done before it;
//! - the condition is defined outside the loop or computed in those blocks by
//!   non-trapping arithmetic and comparisons of such values (those instructions move
//!   to the preheader, as LICM would move them);
//! - the exit edge passes values defined outside the loop or the header's
//!   parameters (which on the first iteration hold what the preheader passes);
//! - no value defined in the loop is used outside it (other than through edge
//!   arguments of the loop's own branches): the exit block gains the preheader as a
//!   predecessor, so it is no longer dominated by the loop's blocks.

use crate::analysis::{FunctionAnalyses, LoopForest, LoopId, Preserved};
use crate::pipeline::FunctionTransform;
use ir::analysis::ControlFlowGraph;
use ir::{Block, BlockCall, Function, Inst, InstKind, SecondaryMap, Value};
use rustc_hash::FxHashSet;

/// The trivial loop unswitching pass.
pub struct TrivialUnswitch;

impl FunctionTransform for TrivialUnswitch {
    const NAME: &'static str = "trivunswitch";
    const DESCRIPTION: &'static str =
        "take a loop-invariant exit of a loop in its preheader, without copying the loop";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// How deep the expression computing a condition inside the loop may be for it to
/// be moved to the preheader.
const MAX_HOIST_DEPTH: usize = 4;

/// Unswitches the invariant exits of `f`'s loops; returns how many.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// What one unswitch does.
struct Plan {
    /// The preheader, ending in `jump header(...)`.
    pre: Block,
    /// The branch to replace by a jump to its in-loop side.
    branch: Inst,
    /// Whether the exit is the branch's `then` side.
    exit_on_true: bool,
    /// The exit edge as the preheader takes it.
    exit: BlockCall,
    /// Loop instructions computing the condition, to move to the preheader in order.
    hoist: Vec<Inst>,
}

/// [`run`], starting from the analyses cached in `fa`.
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    fa.rounds(f, usize::MAX, |f, fa| {
        let (cfg, _, loops) = fa.loops(f);
        // Whether each block holds nothing observable before its terminator,
        // found once per round: the walks from the headers of a nest of loops
        // chained by jumps all cross the inner headers.
        let mut quiet: SecondaryMap<Block, Option<bool>> = SecondaryMap::new();
        let plan = loops
            .loops()
            .find_map(|(id, _)| plan_for(f, cfg, loops, id, &mut quiet))?;
        apply(f, plan);
        Some(1)
    })
}

/// Whether `i` may be executed before the loop exits without changing behaviour
/// observably (it has no side effect).
fn is_quiet(f: &Function, i: Inst) -> bool {
    !matches!(
        f.kind(i),
        InstKind::Store { .. } | InstKind::Call { .. } | InstKind::Alloc { .. }
    )
}

fn plan_for(
    f: &Function,
    cfg: &ControlFlowGraph,
    loops: &LoopForest,
    id: LoopId,
    quiet: &mut SecondaryMap<Block, Option<bool>>,
) -> Option<Plan> {
    let header = loops.get(id).header;
    let pre = loops.preheader(id, cfg)?;
    let pt = f.terminator(pre)?;
    let InstKind::Jump { dest: entry } = f.kind(pt) else {
        return None;
    };
    if entry.block != header {
        return None;
    }
    let mut chain: Vec<Block> = Vec::new();
    let mut in_chain: FxHashSet<Block> = FxHashSet::default();
    // Exits of variant tests passed on the way, each the same edge as the
    // unswitched one must be.
    let mut passed: Vec<&BlockCall> = Vec::new();
    let mut b = header;
    let (branch, exit_on_true, exit) = loop {
        if !in_chain.insert(b) {
            return None;
        }
        chain.push(b);
        let t = f.terminator(b)?;
        let block_quiet = *quiet[b]
            .get_or_insert_with(|| f.layout.block_insts(b).all(|i| i == t || is_quiet(f, i)));
        if !block_quiet {
            return None;
        }
        match f.kind(t) {
            InstKind::Jump { dest } if loops.contains(id, dest.block) => b = dest.block,
            InstKind::Br {
                cond,
                then_dest,
                else_dest,
            } => {
                let then_in = loops.contains(id, then_dest.block);
                let else_in = loops.contains(id, else_dest.block);
                let (exit_on_true, out, stay) = match (then_in, else_in) {
                    (false, true) => (true, then_dest, else_dest),
                    (true, false) => (false, else_dest, then_dest),
                    _ => return None,
                };
                if invariant(
                    f,
                    loops,
                    id,
                    &chain,
                    *cond,
                    MAX_HOIST_DEPTH,
                    &mut Vec::new(),
                ) {
                    break (t, exit_on_true, out.clone());
                }
                passed.push(out);
                b = stay.block;
            }
            _ => return None,
        }
    };
    if passed.iter().any(|&p| *p != *exit) {
        return None;
    }
    let InstKind::Br { cond, .. } = f.kind(branch) else {
        return None;
    };
    if exit.block == pre || f.as_iconst(*cond).is_some() {
        return None;
    }
    let mut hoist = Vec::new();
    if !invariant(f, loops, id, &chain, *cond, MAX_HOIST_DEPTH, &mut hoist) {
        return None;
    }
    // The exit edge's arguments as the first iteration passes them.
    let header_params = f.block_params(header);
    let mut args = exit.args.clone();
    for a in args.iter_mut() {
        match f.value_block(*a) {
            Some(db) if loops.contains(id, db) => {
                let k = header_params.iter().position(|p| p == a)?;
                *a = entry.args[k];
            }
            _ => {}
        }
    }
    if used_outside(f, loops, id) {
        return None;
    }
    Some(Plan {
        pre,
        branch,
        exit_on_true,
        exit: BlockCall::new(exit.block, args),
        hoist,
    })
}

/// Whether `v` is invariant in loop `id`: defined outside it, or computed in one of
/// the `chain` blocks by arithmetic that cannot trap on invariant operands (pushed
/// to `hoist`, operands first).
fn invariant(
    f: &Function,
    loops: &LoopForest,
    id: LoopId,
    chain: &[Block],
    v: Value,
    depth: usize,
    hoist: &mut Vec<Inst>,
) -> bool {
    let Some(db) = f.value_block(v) else {
        return true;
    };
    if !loops.contains(id, db) {
        return true;
    }
    let Some(i) = f.def_inst(v) else {
        return false;
    };
    if depth == 0 || !chain.contains(&db) {
        return false;
    }
    let ok = match f.kind(i) {
        InstKind::Binary { op, .. } => !op.can_trap(),
        InstKind::Cmp { .. } | InstKind::Unary { .. } => true,
        _ => false,
    };
    if !ok || hoist.contains(&i) {
        return ok;
    }
    for a in f.kind(i).args() {
        if !invariant(f, loops, id, chain, a, depth - 1, hoist) {
            return false;
        }
    }
    hoist.push(i);
    true
}

/// Whether a value defined in loop `id` is used by an instruction outside it.
fn used_outside(f: &Function, loops: &LoopForest, id: LoopId) -> bool {
    loops
        .defined_values(f, id)
        .any(|v| loops.used_outside(f, id, v))
}

fn apply(f: &mut Function, plan: Plan) {
    let pt = f.terminator(plan.pre).expect("preheader ends in a jump");
    for i in plan.hoist {
        f.layout.remove_inst(i);
        f.layout.insert_inst_before(i, pt);
    }
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = f.kind(plan.branch).clone()
    else {
        unreachable!("the unswitched terminator is a branch")
    };
    let stay = if plan.exit_on_true {
        else_dest
    } else {
        then_dest
    };
    f.replace_kind(plan.branch, InstKind::Jump { dest: stay });
    let InstKind::Jump { dest: entry } = f.kind(pt).clone() else {
        unreachable!("the preheader ends in a jump")
    };
    let (then_dest, else_dest) = if plan.exit_on_true {
        (plan.exit, *entry)
    } else {
        (*entry, plan.exit)
    };
    f.replace_kind(
        pt,
        InstKind::Br {
            cond,
            then_dest: Box::new(then_dest),
            else_dest: Box::new(else_dest),
        },
    );
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// Asserts that the pass leaves `src` as it is (and its behaviour with it).
    #[track_caller]
    fn stays(src: &str) {
        let out = same_behaviour(src, &["trivunswitch"], "");
        assert_eq!(out, run(src, &[]));
    }

    /// `f(n, m)`: sums `0 + 1 + ...` while `i < n`, leaving at once with the sum
    /// so far when `m < 5` (tested in the header, before anything else).
    const SRC: &str = "\
declare @putint(i32) -> void

func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = slt %1, 5
  jump bb1(0, 0)
bb1(%3: i32, %4: i32):
  br %2, bb3(%4), bb2
bb2:
  %5 = add %4, %3
  %6 = add %3, 1
  %7 = slt %6, %0
  br %7, bb1(%6, %5), bb3(%5)
bb3(%8: i32):
  ret %8
}

func @main() -> i32 {
bb0:
  %0 = call @f(10, 3)
  call @putint(%0)
  %1 = call @f(10, 7)
  call @putint(%1)
  %2 = call @f(0, 9)
  call @putint(%2)
  ret 0
}
";

    #[test]
    fn an_invariant_exit_tested_first_is_taken_in_the_preheader() {
        let out = same_behaviour(SRC, &["trivunswitch"], "");
        assert!(
            out.contains("  %2 = slt %1, 5\n  br %2, bb3(0), bb1(0, 0)\n"),
            "{out}"
        );
        assert!(
            out.contains("bb1(%3: i32, %4: i32):\n  jump bb2\n"),
            "{out}"
        );
    }

    #[test]
    fn a_condition_computed_in_the_header_moves_to_the_preheader() {
        let src = SRC
            .replace("  %2 = slt %1, 5\n  jump bb1(0, 0)", "  jump bb1(0, 0)")
            .replace(
                "bb1(%3: i32, %4: i32):\n",
                "bb1(%3: i32, %4: i32):\n  %2 = slt %1, 5\n",
            );
        let out = same_behaviour(&src, &["trivunswitch"], "");
        assert!(
            out.contains("  %2 = slt %1, 5\n  br %2, bb3(0), bb1(0, 0)\n"),
            "{out}"
        );
    }

    /// The header first tests the counter (`i >= 5` leaves with the sum), then
    /// the invariant `m < 5`, leaving by the same edge.
    fn behind_a_variant_exit(second_exit: &str) -> String {
        SRC.replace(
            "bb1(%3: i32, %4: i32):\n  br %2, bb3(%4), bb2\n",
            &format!(
                "bb1(%3: i32, %4: i32):\n  %9 = sge %3, 5\n  br %9, bb3(%4), bb4\nbb4:\n  br %2, {second_exit}, bb2\n"
            ),
        )
    }

    #[test]
    fn an_invariant_exit_behind_a_variant_one_by_the_same_edge_is_taken_in_the_preheader() {
        let out = same_behaviour(&behind_a_variant_exit("bb3(%4)"), &["trivunswitch"], "");
        // (The printer renumbers the exit block bb4.)
        assert!(
            out.contains("  %2 = slt %1, 5\n  br %2, bb4(0), bb1(0, 0)\n"),
            "{out}"
        );
        assert!(out.contains("bb2:\n  jump bb"), "{out}");
    }

    #[test]
    fn an_invariant_exit_behind_a_variant_one_by_another_edge_stays() {
        // The same block, other arguments: which test comes first decides.
        stays(&behind_a_variant_exit("bb3(%3)"));
    }

    #[test]
    fn an_exit_after_a_store_stays() {
        let src = SRC
            .replace(
                "bb1(%3: i32, %4: i32):\n",
                "bb1(%3: i32, %4: i32):\n  store %3, @g\n",
            )
            .replace("declare @putint", "global @g: i32 = 0\n\ndeclare @putint");
        stays(&src);
    }

    #[test]
    fn an_exit_after_a_call_stays() {
        let src = SRC.replace(
            "bb1(%3: i32, %4: i32):\n",
            "bb1(%3: i32, %4: i32):\n  call @putint(%3)\n",
        );
        stays(&src);
    }

    #[test]
    fn a_variant_condition_stays() {
        let src = SRC
            .replace("  %2 = slt %1, 5\n  jump bb1(0, 0)", "  jump bb1(0, 0)")
            .replace(
                "bb1(%3: i32, %4: i32):\n",
                "bb1(%3: i32, %4: i32):\n  %2 = slt %4, %1\n",
            );
        stays(&src);
    }

    #[test]
    fn an_exit_reached_only_on_some_iterations_stays() {
        // The test sits on one side of a branch on the counter: not every
        // iteration reaches it.
        let src = SRC
            .replace(
                "bb1(%3: i32, %4: i32):\n  br %2, bb3(%4), bb2\n",
                "bb1(%3: i32, %4: i32):\n  %9 = slt %3, 3\n  br %9, bb2, bb4\nbb4:\n  br %2, bb3(%4), bb2\n",
            );
        stays(&src);
    }

    #[test]
    fn an_exit_passing_a_value_computed_in_the_loop_stays() {
        let src = SRC.replace(
            "bb1(%3: i32, %4: i32):\n  br %2, bb3(%4), bb2\n",
            "bb1(%3: i32, %4: i32):\n  %9 = mul %4, 3\n  br %2, bb3(%9), bb2\n",
        );
        stays(&src);
    }

    #[test]
    fn a_loop_value_used_after_the_loop_keeps_its_exit() {
        // `%9` is defined in the header and used in the exit block, which the
        // preheader would reach without passing the header.
        let src = SRC
            .replace(
                "bb1(%3: i32, %4: i32):\n  br %2, bb3(%4), bb2\n",
                "bb1(%3: i32, %4: i32):\n  %9 = mul %4, 3\n  br %2, bb3(%4), bb2\n",
            )
            .replace("  ret %8\n", "  %10 = add %8, %9\n  ret %10\n");
        stays(&src);
    }
}
