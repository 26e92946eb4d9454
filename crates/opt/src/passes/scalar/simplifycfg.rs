//! Control-flow graph simplification, repeated until nothing changes:
//!
//! 1. **Branch folding**: `br` on a constant, or with both arms going to the same
//!    block with the same arguments, becomes a `jump`.
//! 2. **Unreachable blocks** are removed (with the arguments their branches passed).
//! 3. **Block merging**: a block that ends in `jump S`, where the edge is `S`'s only
//!    predecessor edge, absorbs `S` (`S`'s parameters become the jump's arguments).
//! 4. **Forwarding blocks**: a block that holds only `jump S(args)` is bypassed: each
//!    predecessor branches to `S` directly, with the block's parameters in `args`
//!    replaced by the arguments that predecessor passed.
//! 5. **Jump threading**: an edge into a block that holds only `br %p, T, F`, where
//!    `%p` is the block's parameter and the edge passes a constant for it, goes to the
//!    arm the constant selects (typical of `&&`/`||` lowering).
//! 6. **Branches decided by the predecessor**: a block whose only incoming edge is
//!    one arm of a `br %c` and which itself ends in `br %c` (the same value) takes
//!    the arm that edge implies (LLVM's SimplifyCFG folds a conditional branch whose
//!    single predecessor branches on the same condition); a fully unrolled loop
//!    testing an invariant every iteration becomes one test.
//! 7. **Trivial parameters** (one value on every edge, e.g. a block left with a single
//!    predecessor) are replaced by that value.
//!
//! These are the seed write-up's four basic-block optimisations (merge, constant
//! branch, empty block, unreachable block) plus threading; bypassing is only done
//! when the bypassed block's parameters are used nowhere else, since the code its
//! successors see would otherwise lose their definitions.

use crate::analysis::{FunctionAnalyses, Preserved};
use crate::cfg_edit::remove_unreachable_blocks;
use crate::pipeline::FunctionTransform;
use crate::ssa::remove_trivial_params_with;
use ir::analysis::ControlFlowGraph;
use ir::{Block, BlockCall, Function, Inst, InstKind, SecondaryMap, Value, ValueDef};

/// The simplifycfg pass.
pub struct SimplifyCfg;

impl FunctionTransform for SimplifyCfg {
    const NAME: &'static str = "simplifycfg";
    const DESCRIPTION: &'static str =
        "fold branches, merge blocks, bypass empty blocks, thread jumps";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa)
    }
}

/// Simplifies the CFG of `f` to a fixed point.
pub fn run(f: &mut Function) -> bool {
    run_in(f, &mut FunctionAnalyses::default())
}

/// [`run`] with the CFG taken from `fa` while the edges stay as they were (every
/// step that changes them forgets the cached analyses; `fa` is left holding the
/// CFG of the result).
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
    let mut changed = false;
    // Each round strictly shrinks the function or its edges; the bound is a guard.
    for _ in 0..1000 {
        let mut round = fold_branches(f);
        round |= remove_unreachable_blocks(f);
        if round {
            fa.forget();
        }
        if merge_blocks(f, fa.cfg(f)) {
            fa.forget();
            round = true;
        }
        if fold_known_branches(f, fa.cfg(f)) {
            fa.forget();
            round = true;
        }
        if bypass_blocks(f, fa.cfg(f)) | remove_unreachable_blocks(f) {
            fa.forget();
            round = true;
        }
        let params: Vec<Value> = {
            let entry = f.entry_block();
            f.layout
                .blocks()
                .filter(|&b| b != entry)
                .flat_map(|b| f.block_params(b).to_vec())
                .collect()
        };
        // Removing parameters changes no edge: the CFG serves on.
        round |= remove_trivial_params_with(f, fa.cfg(f), &params) > 0;
        changed |= round;
        if !round {
            break;
        }
    }
    changed
}

/// Step 1.
fn fold_branches(f: &mut Function) -> bool {
    let mut changed = false;
    let blocks: Vec<Block> = f.layout.blocks().collect();
    for b in blocks {
        let Some(t) = f.terminator(b) else { continue };
        let InstKind::Br {
            cond,
            then_dest,
            else_dest,
        } = f.kind(t)
        else {
            continue;
        };
        let dest = match f.as_iconst(*cond) {
            Some(0) => else_dest.clone(),
            Some(_) => then_dest.clone(),
            None if then_dest == else_dest => then_dest.clone(),
            None => continue,
        };
        f.replace_kind(t, InstKind::Jump { dest });
        changed = true;
    }
    changed
}

/// Step 6: `br %c` in a block entered only by one arm of its predecessor's
/// `br %c`. Only the terminators change, so the CFG's edges go stale: the caller
/// forgets it.
fn fold_known_branches(f: &mut Function, cfg: &ControlFlowGraph) -> bool {
    let mut changed = false;
    let entry = f.entry_block();
    for &b in cfg.rpo() {
        if b == entry || cfg.preds(b).len() != 1 {
            continue;
        }
        let p = cfg.preds(b)[0];
        let (Some(t), Some(pt)) = (f.terminator(b), f.terminator(p)) else {
            continue;
        };
        let InstKind::Br {
            cond,
            then_dest,
            else_dest,
        } = f.kind(t)
        else {
            continue;
        };
        let InstKind::Br {
            cond: pcond,
            then_dest: pthen,
            else_dest: pelse,
        } = f.kind(pt)
        else {
            continue;
        };
        // One edge from `p` into `b` (checked above), so exactly one arm is `b`.
        if pcond != cond || f.as_iconst(*cond).is_some() {
            continue;
        }
        let dest = if pthen.block == b {
            then_dest.clone()
        } else {
            debug_assert_eq!(pelse.block, b);
            else_dest.clone()
        };
        f.replace_kind(t, InstKind::Jump { dest });
        changed = true;
    }
    changed
}

/// Step 3.
fn merge_blocks(f: &mut Function, cfg: &ControlFlowGraph) -> bool {
    let entry = f.entry_block();
    let mut changed = false;
    for &b in cfg.rpo() {
        if !f.layout.is_block_inserted(b) {
            continue; // merged into its predecessor already
        }
        // Merging changes who the successors' predecessor is, not how many edges
        // enter them, so the edge counts of the CFG stay right.
        while let Some(t) = f.terminator(b) {
            let InstKind::Jump { dest } = f.kind(t) else {
                break;
            };
            let s = dest.block;
            if s == b || s == entry || cfg.preds(s).len() != 1 {
                break;
            }
            crate::cfg_edit::merge_into_predecessor(f, b, s);
            changed = true;
        }
    }
    changed
}

/// Whether every use of `b`'s parameters is in `b`'s terminator.
fn params_local_to_terminator(f: &Function, b: Block, t: Inst) -> bool {
    f.block_params(b)
        .iter()
        .all(|&p| f.users(p).iter().all(|&u| u == t))
}

/// Where an edge into `b` carrying `args` can go instead of `b`: `b` holds only a
/// terminator that forwards (`jump`) or, for these arguments, decides (`br` on a
/// parameter given a constant) its target.
fn bypass_target(f: &Function, b: Block, args: &[Value]) -> Option<BlockCall> {
    let t = f.layout.first_inst(b)?;
    if f.layout.last_inst(b) != Some(t) || !params_local_to_terminator(f, b, t) {
        return None;
    }
    let subst = |v: Value| match f.value_def(v) {
        ValueDef::Param(pb, k) if pb == b => args[k as usize],
        _ => v,
    };
    let dest = match f.kind(t) {
        InstKind::Jump { dest } => dest,
        InstKind::Br {
            cond,
            then_dest,
            else_dest,
        } => match f.as_iconst(subst(*cond)) {
            Some(0) => else_dest,
            Some(_) => then_dest,
            None => return None,
        },
        _ => return None,
    };
    if dest.block == b {
        return None;
    }
    Some(BlockCall::new(
        dest.block,
        dest.args.iter().map(|&a| subst(a)).collect::<Vec<_>>(),
    ))
}

/// Steps 4 and 5: retarget edges around blocks that only forward or decide.
///
/// A block that heads a loop and forwards to the header of another loop (the
/// header [`crate::passes::loops::loopsimplify`] gives an outer loop that shared its header with
/// an inner one) stays: bypassed, the two loops would share a header again. A
/// loop's header is told by a retreating edge into it (from a block at or after
/// it in reverse post-order) in `cfg`, the CFG on entry.
fn bypass_blocks(f: &mut Function, cfg: &ControlFlowGraph) -> bool {
    let entry = f.entry_block();
    let mut changed = false;
    let blocks: Vec<Block> = f.layout.blocks().collect();
    let mut rpo: SecondaryMap<Block, u32> = f.block_map();
    for (k, &b) in cfg.rpo().iter().enumerate() {
        rpo[b] = k as u32 + 1;
    }
    // How many retreating edges enter each block; then whether `b` has one from
    // a block other than `but`.
    let mut retreating: SecondaryMap<Block, u32> = f.block_map();
    for &b in cfg.rpo() {
        for &p in cfg.preds(b) {
            if rpo[p] >= rpo[b] {
                retreating[b] += 1;
            }
        }
    }
    let heads_loop = |b: Block, but: Option<Block>| {
        let own = but.is_some_and(|q| rpo[b] != 0 && rpo[q] >= rpo[b]);
        retreating[b] > u32::from(own)
    };
    // Bypassing one block may let an edge bypass the next one too; a bound per edge
    // keeps cycles of forwarding blocks from spinning.
    let mut hops: SecondaryMap<Inst, u32> = f.inst_map();
    for p in blocks {
        let Some(t) = f.terminator(p) else { continue };
        let n = f.kind(t).targets().len();
        for which in 0..n {
            loop {
                let call = f.kind(t).targets()[which].clone();
                if call.block == entry || hops[t] > 64 {
                    break;
                }
                let Some(new) = bypass_target(f, call.block, &call.args) else {
                    break;
                };
                if heads_loop(call.block, None) && heads_loop(new.block, Some(call.block)) {
                    break;
                }
                f.set_target(t, which, new);
                hops[t] += 1;
                changed = true;
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    #[test]
    fn a_branch_its_only_predecessor_decided_is_a_jump() {
        // bb1 and bb2 are entered only on the false arm of `br %1`: their own
        // tests of %1 are false; the chain becomes one test.
        let src = r#"
func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  br %1, bb3(1), bb1
bb1:
  %2 = add %0, 1
  br %1, bb3(2), bb2
bb2:
  br %1, bb3(3), bb4
bb3(%3: i32):
  ret %3
bb4:
  ret %2
}
"#;
        let expected = r#"
func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  br %1, bb2, bb1
bb1:
  %2 = add %0, 1
  ret %2
bb2:
  ret 1
}
"#;
        check(&["simplifycfg"], src, expected);
    }

    #[test]
    fn a_branch_on_another_value_or_after_a_join_stays() {
        // bb1 tests a different value; bb2 is a join (two predecessors), where
        // %1 is true on one edge and false on the other.
        let src = r#"
func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  br %1, bb1, bb2
bb1:
  br %0, bb3(1), bb2
bb2:
  br %1, bb3(2), bb3(3)
bb3(%2: i32):
  ret %2
}
"#;
        check(&["simplifycfg"], src, src);
    }

    #[test]
    fn different_arguments_keep_the_branch() {
        let src = r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  br %0, bb1(1), bb1(2)
bb1(%1: i32):
  ret %1
}
"#;
        check(&["simplifycfg"], src, src);
    }

    #[test]
    fn block_whose_parameter_is_used_elsewhere_is_not_bypassed() {
        let src = r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  br %0, bb1(1), bb1(2)
bb1(%1: i32):
  jump bb2
bb2:
  ret %1
}
"#;
        // bb2 merges into bb1, but bb1 (whose parameter bb2 used) stays a real merge.
        check(
            &["simplifycfg"],
            src,
            r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  br %0, bb1(1), bb1(2)
bb1(%1: i32):
  ret %1
}
"#,
        );
    }

    #[test]
    fn behaviour_is_preserved_on_a_program() {
        same_behaviour(
            r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0)
bb1(%1: i32):
  %2 = slt %1, %0
  br %2, bb2, bb7
bb2:
  %3 = srem %1, 2
  %4 = eq %3, 0
  br %4, bb3, bb4(0)
bb3:
  %5 = srem %1, 3
  %6 = eq %5, 0
  jump bb4(%6)
bb4(%7: i32):
  br %7, bb5, bb6
bb5:
  call @putint(%1)
  jump bb6
bb6:
  %8 = add %1, 1
  jump bb1(%8)
bb7:
  ret 0
}
"#,
            &["simplifycfg"],
            "20",
        );
    }
}
