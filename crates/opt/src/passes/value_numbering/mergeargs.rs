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
use ir::{Block, Function, Inst, InstKind, Value};

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

/// How deep the common computation of a parameter may nest: `gep %a, (add %i,
/// 858)` on each edge (a copy jump threading made of each arm) is two levels.
const MAX_DEPTH: usize = 3;

/// [`run`] with the function's CFG and dominator tree given.
pub fn run_on(f: &mut Function, cfg: &ControlFlowGraph, dt: &DominatorTree) -> usize {
    let entry = f.entry_block();
    let mut merged = 0;
    // In reverse post-order, so a parameter made an operation at the top of its
    // block can be the common operation of a parameter of a successor.
    for &b in cfg.rpo() {
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
            let copies = incoming(f, &preds, b, k);
            let Some(&first) = copies.first() else {
                continue;
            };
            let common = copies
                .iter()
                .all(|&c| same_operation(f, dt, b, first, c, MAX_DEPTH));
            if !common {
                continue;
            }
            let p = f.block_params(b)[k];
            let at = f
                .layout
                .first_inst(b)
                .expect("a block ends in a terminator");
            let r = rebuild_operation(f, dt, b, at, first);
            f.replace_all_uses(p, r);
            f.remove_block_param(b, k, &preds);
            // The copies are dead now unless used elsewhere; remove them here, or a
            // later redundancy elimination sees the operation available on every edge
            // again and puts the parameter back.
            for v in copies {
                remove_if_dead(f, v, MAX_DEPTH);
            }
            merged += 1;
        }
    }
    merged
}

/// The arguments every edge into `b` passes as its parameter `k`.
fn incoming(f: &Function, preds: &[Block], b: Block, k: usize) -> Vec<Value> {
    preds
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
        .collect()
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

/// Whether `v` is defined where it can be used at the top of `b`: a constant, an
/// argument, or a value of a block strictly dominating `b`.
fn available(f: &Function, dt: &DominatorTree, b: Block, v: Value) -> bool {
    f.value_block(v)
        .is_none_or(|d| d != b && dt.dominates(d, b))
}

/// Whether an operation may be computed where it was not: pure, and unable to
/// trap (no division by a variable, no loads or calls).
fn movable(f: &Function, kind: &InstKind) -> bool {
    match kind {
        InstKind::Binary { op, args } => {
            !op.can_trap() || matches!(f.as_iconst(args[1]), Some(c) if c != 0 && c != -1)
        }
        InstKind::Unary { .. } | InstKind::Cmp { .. } | InstKind::Gep { .. } => true,
        _ => false,
    }
}

/// Whether `a` and `c` compute the same value at the top of `b`: they are one
/// value available there, or (at most `depth` levels down) the same movable
/// operation on arguments that compute the same.
fn same_computation(
    f: &Function,
    dt: &DominatorTree,
    b: Block,
    a: Value,
    c: Value,
    depth: usize,
) -> bool {
    (a == c && available(f, dt, b, a)) || same_operation(f, dt, b, a, c, depth)
}

/// Whether `a` and `c` are the same movable operation on arguments that
/// compute the same at the top of `b` ([`same_computation`], `depth` levels
/// down). The parameter itself is always made the operation, computed at the
/// top of `b` (even a value available there: a loop's step moves to the test
/// that uses it, where the loop passes look for it).
fn same_operation(
    f: &Function,
    dt: &DominatorTree,
    b: Block,
    a: Value,
    c: Value,
    depth: usize,
) -> bool {
    if depth == 0 || f.value_type(a) != f.value_type(c) {
        return false;
    }
    let (Some(ia), Some(ic)) = (f.def_inst(a), f.def_inst(c)) else {
        return false;
    };
    let (ka, kc) = (f.kind(ia), f.kind(ic));
    if !movable(f, ka) {
        return false;
    }
    // The same operation: `a`'s with `c`'s arguments is `c`'s.
    let (args_a, args_c) = (ka.args(), kc.args());
    if args_a.len() != args_c.len() {
        return false;
    }
    let mut shape = ka.clone();
    let mut next = args_c.iter();
    shape.map_args(|v| *v = *next.next().expect("as many arguments"));
    shape == *kc
        && args_a
            .iter()
            .zip(&args_c)
            .all(|(&x, &y)| same_computation(f, dt, b, x, y, depth - 1))
}

/// `v` computed before `at` in `b`: itself when available there, else as
/// [`rebuild_operation`].
fn rebuild(f: &mut Function, dt: &DominatorTree, b: Block, at: Inst, v: Value) -> Value {
    if available(f, dt, b, v) {
        return v;
    }
    rebuild_operation(f, dt, b, at, v)
}

/// The operation defining `v` computed again before `at` in `b`, on its
/// arguments [`rebuild`] there.
fn rebuild_operation(f: &mut Function, dt: &DominatorTree, b: Block, at: Inst, v: Value) -> Value {
    let def = f.def_inst(v).expect("checked by same_computation");
    let mut kind = f.kind(def).clone();
    let args: Vec<Value> = kind
        .args()
        .iter()
        .map(|&a| rebuild(f, dt, b, at, a))
        .collect();
    let mut next = args.into_iter();
    kind.map_args(|a| *a = next.next().expect("as many arguments"));
    let ty = f.value_type(v);
    let inst = f.insert_inst_before(at, kind, ty);
    f.copy_src_loc(def, inst);
    f.inst_result(inst).expect("an operation with a result")
}

/// Removes the pure instruction defining `v` when nothing uses it, and then
/// its arguments' the same way, `depth` levels down.
fn remove_if_dead(f: &mut Function, v: Value, depth: usize) {
    let Some(i) = f.def_inst(v) else {
        return;
    };
    if f.has_users(v) || !f.layout.is_inst_inserted(i) || !movable(f, f.kind(i)) {
        return;
    }
    let args = f.kind(i).args();
    f.remove_inst(i);
    if depth > 0 {
        for a in args {
            remove_if_dead(f, a, depth - 1);
        }
    }
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

    /// The copies jump threading leaves: each arm computes the address
    /// `gep %a, (add %i, 5)` itself, so the join's parameter is that address,
    /// computed once there, and the arms' copies go.
    #[test]
    fn the_same_nested_computation_on_every_edge_becomes_one() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 16]
  %1 = call @getint()
  %2 = and %1, 7
  %3 = gep %0, %2, 4
  store 9, %3
  %4 = slt %1, 4
  br %4, bb1, bb2
bb1:
  %5 = sub %2, 1
  %6 = add %5, 5
  %7 = gep %0, %6, 4
  jump bb3(%7, 1)
bb2:
  %8 = sub %2, 1
  %9 = add %8, 5
  %10 = gep %0, %9, 4
  jump bb3(%10, 2)
bb3(%11: ptr, %12: i32):
  %13 = gep %11, -4, 4
  %14 = load i32, %13
  %15 = add %14, %12
  call @putint(%15)
  ret 0
}
"#;
        for input in ["3", "6"] {
            let out = same_behaviour(src, &["mergeargs", "dce"], input);
            assert!(
                out.contains(
                    "bb3(%5: i32):\n  %6 = sub %2, 1\n  %7 = add %6, 5\n  %8 = gep %0, %7, 4\n"
                ),
                "{out}"
            );
            assert_eq!(out.matches("gep %0, %").count(), 2, "{out}");
            assert_eq!(out.matches(" = sub %2, 1").count(), 1, "{out}");
        }
        // One level deeper than the pass looks: the parameter stays.
        let deep = src
            .replace(
                "%5 = sub %2, 1",
                "%16 = xor %2, 0\n  %17 = or %16, 0\n  %5 = sub %17, 1",
            )
            .replace(
                "%8 = sub %2, 1",
                "%18 = xor %2, 0\n  %19 = or %18, 0\n  %8 = sub %19, 1",
            );
        check(&["mergeargs"], &deep, &run(&deep, &[]));
    }

    #[test]
    fn different_operations_or_unavailable_operands_stay() {
        // Different constants; and operands defined in the predecessors themselves.
        let different = CONTINUE.replace("%5 = add %0, 1", "%5 = add %0, 2");
        check(&["mergeargs"], &different, &run(&different, &[]));
        // Operands computed in the predecessors by operations that may not move:
        // a division by a variable, one level down.
        let local = CONTINUE
            .replace("%3 = add %0, 1", "%9 = sdiv %1, %0\n  %3 = add %9, 1")
            .replace("%5 = add %0, 1", "%10 = sdiv %1, %0\n  %5 = add %10, 1");
        check(&["mergeargs"], &local, &run(&local, &[]));
        // Operands computed alike, but from different values.
        let apart = CONTINUE
            .replace("%3 = add %0, 1", "%9 = mul %0, 3\n  %3 = add %9, 1")
            .replace("%5 = add %0, 1", "%10 = mul %1, 3\n  %5 = add %10, 1");
        check(&["mergeargs"], &apart, &run(&apart, &[]));
        // A division by a variable could trap where no division ran before.
        let division = CONTINUE
            .replace("%3 = add %0, 1", "%3 = sdiv %1, %0")
            .replace("%5 = add %0, 1", "%5 = sdiv %1, %0");
        check(&["mergeargs"], &division, &run(&division, &[]));
    }
}
