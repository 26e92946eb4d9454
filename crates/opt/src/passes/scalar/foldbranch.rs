//! Folding a branch into its predecessor's when both go to a common destination:
//! `if (a) goto C; else if (b) goto C; else goto X` becomes one branch on `a | b`.
//!
//! ```text
//!   P:  br %a, C(v), B              P:  %o = or %a, %b
//!   B:  br %b, C(v), X(w)     =>        br %o, C(v), X(w)
//! ```
//!
//! This is LLVM SimplifyCFG's `FoldBranchToCommonDest`: block `B`, entered only from
//! `P`, ends in a conditional branch one of whose edges goes where `P`'s other edge
//! goes, with the same arguments; `B`'s few instructions are speculatable (no
//! store, call, load or division that might trap), so they move into `P` and the
//! two tests become one on the `or` of the conditions (either negated with
//! `eq %c, 0` as the edges require; instcombine folds a negated comparison into
//! the inverse one). `B` is then unreachable.
//!
//! On RV64 a compare-and-branch is one instruction, so two branches usually cost no
//! more than two `set`s, an `or` and a branch: the fold is done only when it takes
//! the test out of a loop, i.e. both conditions (and the operands of `B`'s
//! instructions) are invariant in the innermost loop holding `P`. The combined
//! test then leaves the loop (LICM, or trivial unswitching
//! ([`crate::passes::loops::trivial_unswitch`]) when one edge is an exit), where
//! LLVM needs both this fold and `SimpleLoopUnswitch` to do the same.

use crate::analysis::{FunctionAnalyses, LoopForest, Preserved};
use crate::cfg_edit::remove_unreachable_blocks;
use crate::pipeline::FunctionTransform;
use ir::analysis::ControlFlowGraph;
use ir::{BinOp, Block, BlockCall, CmpOp, Function, Inst, InstKind, Type, Value};

/// The branch folding pass.
pub struct FoldBranch;

impl FunctionTransform for FoldBranch {
    const NAME: &'static str = "foldbranch";
    const DESCRIPTION: &'static str =
        "merge two loop-invariant branches to a common destination into one on `or`";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// At most this many instructions of the second block are moved into the first.
pub const MAX_SPECULATED: usize = 2;

/// Folds the qualifying branches of `f`; returns how many.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// One fold: `P`'s branch absorbs `B`'s.
struct Fold {
    p: Block,
    b: Block,
    /// Whether `P` goes to `C` on its condition (else to `B`).
    p_common_on_true: bool,
    /// Whether `B` goes to `C` on its condition (else to `X`).
    b_common_on_true: bool,
    common: BlockCall,
    other: BlockCall,
}

fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    fa.rounds(f, usize::MAX, |f, fa| {
        let (cfg, _, loops) = fa.loops(f);
        let fold = f.layout.blocks().find_map(|p| fold_at(f, cfg, loops, p))?;
        apply(f, fold);
        remove_unreachable_blocks(f);
        Some(1)
    })
}

fn fold_at(f: &Function, cfg: &ControlFlowGraph, loops: &LoopForest, p: Block) -> Option<Fold> {
    let lp = loops.innermost(p)?;
    let InstKind::Br {
        cond: c1,
        then_dest,
        else_dest,
    } = f.kind(f.terminator(p)?)
    else {
        return None;
    };
    if then_dest.block == else_dest.block {
        return None;
    }
    let (p_common_on_true, b, common) = if else_dest.args.is_empty() {
        (true, else_dest.block, then_dest)
    } else if then_dest.args.is_empty() {
        (false, then_dest.block, else_dest)
    } else {
        return None;
    };
    // Try `B` on the other side too when both sides pass nothing.
    let try_one = |p_common_on_true: bool, b: Block, common: &BlockCall| -> Option<Fold> {
        if b == p || cfg.preds(b) != [p] || !f.block_params(b).is_empty() {
            return None;
        }
        if loops.innermost(b) != Some(lp) {
            return None;
        }
        let bt = f.terminator(b)?;
        let InstKind::Br {
            cond: c2,
            then_dest: bthen,
            else_dest: belse,
        } = f.kind(bt)
        else {
            return None;
        };
        let (b_common_on_true, other) = if **bthen == *common && belse.block != common.block {
            (true, belse)
        } else if **belse == *common && bthen.block != common.block {
            (false, bthen)
        } else {
            return None;
        };
        if other.block == b || other.block == p {
            return None;
        }
        let body: Vec<Inst> = f.layout.block_insts(b).filter(|&i| i != bt).collect();
        if body.len() > MAX_SPECULATED {
            return None;
        }
        let invariant = |v: Value| {
            f.value_block(v)
                .is_none_or(|db| db == b || !loops.contains(lp, db))
        };
        for &i in &body {
            let ok = match f.kind(i) {
                InstKind::Binary { op, .. } => !op.can_trap(),
                InstKind::Cmp { .. } | InstKind::Unary { .. } | InstKind::Gep { .. } => true,
                _ => false,
            };
            if !ok || !f.kind(i).args().into_iter().all(invariant) {
                return None;
            }
        }
        let outside = |v: Value| f.value_block(v).is_none_or(|db| !loops.contains(lp, db));
        if !outside(*c1) || !invariant(*c2) {
            return None;
        }
        Some(Fold {
            p,
            b,
            p_common_on_true,
            b_common_on_true,
            common: common.clone(),
            other: *other.clone(),
        })
    };
    try_one(p_common_on_true, b, common).or_else(|| {
        (then_dest.args.is_empty() && else_dest.args.is_empty())
            .then(|| try_one(!p_common_on_true, then_dest.block, else_dest))
            .flatten()
    })
}

/// `c` if `keep`, else `eq c, 0`, before `at`.
fn polarity(f: &mut Function, c: Value, keep: bool, at: Inst) -> Value {
    if keep {
        return c;
    }
    let zero = f.iconst(0);
    let i = f.insert_inst_before(
        at,
        InstKind::Cmp {
            op: CmpOp::Eq,
            args: [c, zero],
        },
        Type::I32,
    );
    f.inst_result(i).expect("a comparison has a result")
}

fn apply(f: &mut Function, fold: Fold) {
    let pt = f.terminator(fold.p).expect("P ends in a branch");
    let bt = f.terminator(fold.b).expect("B ends in a branch");
    let body: Vec<Inst> = f.layout.block_insts(fold.b).filter(|&i| i != bt).collect();
    for i in body {
        f.layout.remove_inst(i);
        f.layout.insert_inst_before(i, pt);
    }
    let cond_of = |i: Inst| match f.kind(i) {
        InstKind::Br { cond, .. } => *cond,
        _ => unreachable!("P and B end in branches"),
    };
    let (c1, c2) = (cond_of(pt), cond_of(bt));
    let a = polarity(f, c1, fold.p_common_on_true, pt);
    let b = polarity(f, c2, fold.b_common_on_true, pt);
    let or = f.insert_inst_before(
        pt,
        InstKind::Binary {
            op: BinOp::Or,
            args: [a, b],
        },
        Type::I32,
    );
    let cond = f.inst_result(or).expect("an or has a result");
    f.copy_src_loc(bt, or);
    f.replace_kind(
        pt,
        InstKind::Br {
            cond,
            then_dest: Box::new(fold.common),
            else_dest: Box::new(fold.other),
        },
    );
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `f(a, b, n)`: counts `i` up to `n`, leaving early (with `i`) when neither
    /// `a < 5` nor `b > 7`: two invariant tests to the common block `bb3`.
    const SRC: &str = "\
declare @putint(i32) -> void

func @f(i32, i32, i32) -> i32 {
bb0(%0: i32, %1: i32, %2: i32):
  %3 = slt %0, 5
  %4 = sgt %1, 7
  jump bb1(0)
bb1(%5: i32):
  br %3, bb3, bb2
bb2:
  br %4, bb3, bb4(%5)
bb3:
  %6 = add %5, 1
  %7 = slt %6, %2
  br %7, bb1(%6), bb4(%6)
bb4(%8: i32):
  ret %8
}

func @main() -> i32 {
bb0:
  %0 = call @f(1, 1, 10)
  call @putint(%0)
  %1 = call @f(9, 9, 10)
  call @putint(%1)
  %2 = call @f(9, 1, 10)
  call @putint(%2)
  %3 = call @f(1, 9, 0)
  call @putint(%3)
  ret 0
}
";

    fn folded(src: &str) -> bool {
        let out = same_behaviour(src, &["foldbranch"], "");
        let unchanged = run(src, &[]);
        assert_eq!(out.contains(" = or "), out != unchanged, "{out}");
        out != unchanged
    }

    #[test]
    fn two_invariant_tests_to_a_common_block_become_one() {
        let out = same_behaviour(SRC, &["foldbranch"], "");
        assert!(
            out.contains(
                "bb1(%5: i32):\n  %6 = or %3, %4\n  br %6, bb2, bb3(%5)\nbb2:\n  %7 = add %5, 1\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn each_arm_may_be_the_common_one() {
        // `P` reaches the common block on its false side: `a >= 5` negated.
        let p_false = SRC.replace("  br %3, bb3, bb2\n", "  br %3, bb2, bb3\n");
        let out = same_behaviour(&p_false, &["foldbranch"], "");
        assert!(out.contains("  %6 = eq %3, 0\n  %7 = or %6, %4\n"), "{out}");
        // `B` reaches it on its false side.
        let b_false = SRC.replace("  br %4, bb3, bb4(%5)\n", "  br %4, bb4(%5), bb3\n");
        let out = same_behaviour(&b_false, &["foldbranch"], "");
        assert!(out.contains("eq %4, 0"), "{out}");
        assert!(folded(&b_false));
        let both = p_false.replace("  br %4, bb3, bb4(%5)\n", "  br %4, bb4(%5), bb3\n");
        assert!(folded(&both));
    }

    #[test]
    fn speculatable_instructions_of_the_second_block_move_up() {
        let src = SRC.replace(
            "bb2:\n  br %4, bb3, bb4(%5)\n",
            "bb2:\n  %10 = add %1, %0\n  %11 = sgt %10, 7\n  br %11, bb3, bb4(%5)\n",
        );
        assert!(folded(&src));
    }

    #[test]
    fn a_variant_condition_is_not_folded() {
        let src = SRC.replace(
            "bb2:\n  br %4, bb3, bb4(%5)\n",
            "bb2:\n  %11 = sgt %5, 7\n  br %11, bb3, bb4(%5)\n",
        );
        assert!(!folded(&src));
        assert_eq!(run(&src, &["foldbranch"]), run(&src, &[]));
    }

    #[test]
    fn a_division_that_may_trap_is_not_speculated() {
        let src = SRC.replace(
            "bb2:\n  br %4, bb3, bb4(%5)\n",
            "bb2:\n  %10 = sdiv %1, %0\n  %11 = sgt %10, 7\n  br %11, bb3, bb4(%5)\n",
        );
        assert!(!folded(&src));
        // A load neither.
        let load = SRC
            .replace(
                "bb2:\n  br %4, bb3, bb4(%5)\n",
                "bb2:\n  %10 = load i32, @g\n  %11 = sgt %10, 7\n  br %11, bb3, bb4(%5)\n",
            )
            .replace("declare @putint", "global @g: i32 = 0\n\ndeclare @putint");
        assert!(!folded(&load));
    }

    #[test]
    fn disagreeing_arguments_to_the_common_block_are_not_folded() {
        let src = SRC
            .replace("  br %3, bb3, bb2\n", "  br %3, bb3(1), bb2\n")
            .replace("  br %4, bb3, bb4(%5)\n", "  br %4, bb3(2), bb4(%5)\n")
            .replace(
                "bb3:\n  %6 = add %5, 1\n",
                "bb3(%12: i32):\n  %6 = add %5, %12\n",
            );
        assert!(!folded(&src));
        // Agreeing ones are.
        let agree = src.replace("bb3(2)", "bb3(1)");
        assert!(folded(&agree));
    }

    #[test]
    fn tests_outside_loops_are_left_to_compare_and_branch() {
        let src = SRC.replace("  br %7, bb1(%6), bb4(%6)\n", "  jump bb4(%6)\n");
        assert!(!folded(&src));
    }
}
