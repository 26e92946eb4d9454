//! Sinking of computations common to every incoming edge: when each branch into a
//! block passes, for one of its parameters, the same pure operation on the same
//! operands (`add %i, 1` computed separately on both arms of an `if`), the parameter
//! becomes that operation, computed once at the top of the block, and the copies in
//! the predecessors die.
//!
//! This is the block-argument form of sinking common code from predecessors (LLVM's
//! `SimplifyCFG::SinkCommonCodeFromPredecessors`, which merges the identical
//! instructions feeding a phi). It matters for loops with a `continue`: `j = j + 1;
//! continue;` and the `j = j + 1` at the end of the body reach the loop test as two
//! different values, so the counter is a parameter merging them and no analysis sees
//! that it steps by one. Once merged, the loop is a counted loop and strength
//! reduction applies.
//!
//! Only operations that cannot trap move (no division by a variable, no loads or
//! calls), and only when every operand is available at the block (its definition
//! dominates the block), so the new computation is valid there.
//!
//! Also, two parameters of a block that receive the same value on every edge are one:
//! the later is replaced by the earlier (strength reduction can create such twins,
//! two pointers that start and step alike, after value numbering has run).

use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::FunctionTransform;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, Function, InstKind, Value};

/// The pass.
pub struct MergeArgs;

impl FunctionTransform for MergeArgs {
    const NAME: &'static str = "mergeargs";
    const DESCRIPTION: &'static str =
        "turn a block parameter fed the same pure operation on every edge into that operation";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        let (cfg, dt) = fa.domtree(f);
        run_on(f, cfg, dt) > 0
    }
}

/// Merges what it can in `f`; returns how many parameters became instructions.
pub fn run(f: &mut Function) -> usize {
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    run_on(f, &cfg, &dt)
}

/// [`run`] with the function's CFG and dominator tree given.
pub fn run_on(f: &mut Function, cfg: &ControlFlowGraph, dt: &DominatorTree) -> usize {
    let entry = f.entry_block();
    let blocks: Vec<Block> = f.layout.blocks().collect();
    let mut merged = 0;
    for b in blocks {
        if b == entry || cfg.preds(b).is_empty() {
            continue;
        }
        let preds = cfg.unique_preds(b);
        // Parameters from the last, so removing one leaves the others' indices valid.
        for k in (0..f.block_params(b).len()).rev() {
            if let Some(twin) = (0..k).find(|&j| same_arguments(f, &preds, b, j, k)) {
                let (p, q) = (f.block_params(b)[k], f.block_params(b)[twin]);
                f.replace_all_uses(p, q);
                f.remove_block_param(b, k, &preds);
                merged += 1;
                continue;
            }
            let Some(kind) = common_operation(f, dt, &preds, b, k) else {
                continue;
            };
            let p = f.block_params(b)[k];
            let ty = f.value_type(p);
            let copies: Vec<Value> = preds
                .iter()
                .filter_map(|&pred| f.terminator(pred))
                .flat_map(|t| {
                    f.kind(t)
                        .targets()
                        .iter()
                        .filter(|c| c.block == b)
                        .map(|c| c.args[k])
                        .collect::<Vec<_>>()
                })
                .collect();
            let at = f
                .layout
                .first_inst(b)
                .expect("a block ends in a terminator");
            let inst = f.insert_inst_before(at, kind, ty);
            if let Some(first) = copies.first().and_then(|&v| f.def_inst(v)) {
                f.copy_src_loc(first, inst);
            }
            let r = f.inst_result(inst).expect("an operation with a result");
            f.replace_all_uses(p, r);
            f.remove_block_param(b, k, &preds);
            // The copies are dead now unless used elsewhere; remove them here, or a
            // later redundancy elimination sees the operation available on every edge
            // again and puts the parameter back.
            for v in copies {
                if let Some(i) = f.def_inst(v) {
                    if !f.has_users(v) && f.layout.is_inst_inserted(i) {
                        f.remove_inst(i);
                    }
                }
            }
            merged += 1;
        }
    }
    merged
}

/// Whether every edge into `b` passes the same value as arguments `j` and `k` (or
/// the parameters themselves, on a back edge).
fn same_arguments(f: &Function, preds: &[Block], b: Block, j: usize, k: usize) -> bool {
    let (pj, pk) = (f.block_params(b)[j], f.block_params(b)[k]);
    preds.iter().all(|&pred| {
        let Some(term) = f.terminator(pred) else {
            return false;
        };
        f.kind(term)
            .targets()
            .iter()
            .filter(|t| t.block == b)
            .all(|t| t.args[j] == t.args[k] || (t.args[j] == pj && t.args[k] == pk))
    })
}

/// The operation every edge into `b` passes as argument `k`, when it is the same pure,
/// non-trapping operation on operands available at `b`.
fn common_operation(
    f: &Function,
    dt: &DominatorTree,
    preds: &[Block],
    b: Block,
    k: usize,
) -> Option<InstKind> {
    let mut common: Option<InstKind> = None;
    for &pred in preds {
        let term = f.terminator(pred)?;
        for t in f.kind(term).targets() {
            if t.block != b {
                continue;
            }
            let kind = f.kind(f.def_inst(t.args[k])?);
            match &common {
                None => common = Some(kind.clone()),
                Some(c) if c == kind => {}
                Some(_) => return None,
            }
        }
    }
    let kind = common?;
    let movable = match &kind {
        InstKind::Binary { op, args } => {
            !op.can_trap() || matches!(f.as_iconst(args[1]), Some(c) if c != 0 && c != -1)
        }
        InstKind::Unary { .. } | InstKind::Cmp { .. } | InstKind::Gep { .. } => true,
        _ => false,
    };
    let mut available = true;
    kind.for_each_arg(|v: Value| {
        available &= f
            .value_block(v)
            .is_none_or(|d| d != b && dt.dominates(d, b));
    });
    (movable && available).then_some(kind)
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, run, same_behaviour};

    /// The loop of `transpose`: `j + 1` on the `continue` path and at the end of the
    /// body.
    const CONTINUE: &str = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = slt %0, 3
  br %2, bb2, bb3
bb2:
  %3 = add %0, 1
  jump bb4(%3, %1)
bb3:
  %4 = add %1, %0
  %5 = add %0, 1
  jump bb4(%5, %4)
bb4(%6: i32, %7: i32):
  %8 = slt %6, 10
  br %8, bb1(%6, %7), bb5
bb5:
  call @putint(%7)
  ret 0
}
"#;

    #[test]
    fn the_same_step_on_every_edge_becomes_one() {
        let out = same_behaviour(CONTINUE, &["mergeargs"], "");
        assert!(out.contains("bb4(%4: i32):\n  %5 = add %0, 1\n"), "{out}");
        assert_eq!(out.matches("add %0, 1").count(), 1, "{out}");
    }

    /// Two pointers that start and step alike are one.
    #[test]
    fn twin_parameters_are_one() {
        let src = r#"
global @x: [i32; 8] = [1, 2, 3, 4, 5, 6, 7, 8]
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = gep @x, 0, 4
  jump bb1(0, %0, %0)
bb1(%1: i32, %2: ptr, %3: ptr):
  %4 = load i32, %2
  %5 = gep %3, 1, 4
  store %4, %5
  %6 = add %1, 1
  %7 = slt %6, 7
  br %7, bb1(%6, %5, %5), bb2
bb2:
  %8 = load i32, %5
  call @putint(%8)
  ret 0
}
"#;
        let out = same_behaviour(src, &["mergeargs"], "");
        assert!(out.contains("bb1(%1: i32, %2: ptr):"), "{out}");
        // Different starts: two pointers.
        let apart = src.replace(
            "jump bb1(0, %0, %0)",
            "%9 = gep @x, 1, 4\n  jump bb1(0, %0, %9)",
        );
        let out = run(&apart, &["mergeargs"]);
        assert!(out.contains("%3: ptr, %4: ptr"), "{out}");
    }

    #[test]
    fn different_operations_or_unavailable_operands_stay() {
        // Different constants; and operands defined in the predecessors themselves.
        let different = CONTINUE.replace("%5 = add %0, 1", "%5 = add %0, 2");
        check(&["mergeargs"], &different, &run(&different, &[]));
        let local = CONTINUE
            .replace("%3 = add %0, 1", "%9 = add %0, 0\n  %3 = add %9, 1")
            .replace("%5 = add %0, 1", "%10 = add %0, 0\n  %5 = add %10, 1");
        check(&["mergeargs"], &local, &run(&local, &[]));
        // A division by a variable could trap where no division ran before.
        let division = CONTINUE
            .replace("%3 = add %0, 1", "%3 = sdiv %1, %0")
            .replace("%5 = add %0, 1", "%5 = sdiv %1, %0");
        check(&["mergeargs"], &division, &run(&division, &[]));
    }
}
