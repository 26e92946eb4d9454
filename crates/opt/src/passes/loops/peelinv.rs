//! Loop peeling for a header parameter that is constant after the first
//! iteration: when every back edge passes the same constant `c` for a header
//! parameter `p`, the entry passes something else, and a branch of the loop tests
//! `p` (directly, or through one instruction whose other operands are
//! constants), the first iteration is copied in front of the loop. In the loop
//! left behind, which only back edges enter, `p` is `c`: the test folds, and the
//! values only it kept alive die.
//!
//! The same holds for a pointer parameter that is one global's address after the
//! first iteration and that a load or store of the loop goes through (an array
//! parameter of a recursion that tail-recursion elimination made a loop, whose
//! recursive call passes a fixed global): in the loop left behind the access names
//! its object, alias analysis tells it apart from the loop's other accesses, and
//! `licm` moves what it kept in the loop. A loop entered from a conditional branch
//! gets a preheader of its own for the copy.
//!
//! ```text
//!   y = 1;                                 // iteration 1, y == 1
//!   while (i < 16) {                       if (x % 2 && 1 % 2) ans += t[0];
//!     if (x % 2 && y % 2) ans += t[i];  => x /= 2; i = 1;
//!     x /= 2; y /= 2; i++;                 while (i < 16) { i++; }  // y == 0
//!   }
//! ```
//!
//! (`y / 2` of a `y` in `[0, 1]` is `0` once value-range propagation has run.)
//! This is LLVM's `LoopPeel` peeling "so that phis become invariant"
//! (`calculateIterationsToInvariance`), for one iteration and a constant, and
//! GCC's peeling of iterations whose conditions are known; the copying is
//! [`super::looppeel`]'s. Loops of at most [`looppeel::MAX_LOOP_INSTS`]
//! instructions are peeled and a function grows by at most
//! [`looppeel::MAX_GROWTH`].

use super::looppeel;
use crate::analysis::{FunctionAnalyses, LoopForest, LoopId, Preserved};
use crate::cfg_edit::single_edge;
use crate::pipeline::FunctionTransform;
use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, Inst, InstKind, Value};

/// The pass peeling loops whose header parameter is constant after one iteration.
pub struct PeelInvariant;

impl FunctionTransform for PeelInvariant {
    const NAME: &'static str = "peelinv";
    const DESCRIPTION: &'static str = "peel a first iteration after which a tested header parameter or an accessed address is constant";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        let worth = |f: &Function, cfg: &ControlFlowGraph, _: &_, loops: &LoopForest, id| {
            constant_after_first(f, cfg, loops, id)
        };
        looppeel::peel_where(f, fa, worth) > 0
    }
}

/// Whether loop `id` has a header parameter that every back edge sets to one
/// constant, the entry to another value, and that a branch of the loop tests.
fn constant_after_first(
    f: &Function,
    cfg: &ControlFlowGraph,
    loops: &LoopForest,
    id: LoopId,
) -> bool {
    let lp = loops.get(id);
    let h = lp.header;
    // The one block entering the loop; a conditional branch is given a
    // preheader of its own when the loop is peeled.
    let mut outside = cfg
        .unique_preds(h)
        .into_iter()
        .filter(|&p| !loops.contains(id, p));
    let (Some(pre), None) = (outside.next(), outside.next()) else {
        return false;
    };
    let Some((_, entry)) = single_edge(f, pre, h) else {
        return false;
    };
    let mut back: Vec<Option<Value>> = vec![None; entry.len()];
    let mut agree = vec![true; entry.len()];
    for &latch in &lp.latches {
        let Some((_, args)) = single_edge(f, latch, h) else {
            return false;
        };
        for (k, &a) in args.iter().enumerate() {
            let same = f.value_def(a).is_constant() && back[k].is_none_or(|b| b == a);
            agree[k] &= same;
            back[k] = Some(a);
        }
    }
    let params = f.block_params(h);
    (0..entry.len()).any(|k| {
        agree[k]
            && back[k].is_some_and(|c| c != entry[k] && f.value_def(c).is_constant())
            && (tested(f, loops, id, params[k]) || addresses_memory(f, loops, id, params[k]))
    })
}

/// Whether a load or store in loop `id` accesses memory through `p`, or through
/// a `gep` of `p` by a constant index: once `p` is one global's address, alias
/// analysis tells that access apart from every other object's, and `licm` and
/// store promotion can move what it kept in the loop (an array parameter of a
/// recursion that tail-recursion elimination made a loop, passed a fixed global
/// by the recursive call).
fn addresses_memory(f: &Function, loops: &LoopForest, id: LoopId, p: Value) -> bool {
    let in_loop = |u: Inst| {
        f.layout
            .inst_block(u)
            .is_some_and(|b| loops.contains(id, b))
    };
    let accesses = |v: Value| {
        f.users(v).iter().any(|&u| {
            in_loop(u)
                && match *f.kind(u) {
                    InstKind::Load { ptr, .. } => ptr == v,
                    InstKind::Store { value, ptr } => ptr == v && value != v,
                    _ => false,
                }
        })
    };
    accesses(p)
        || f.users(p).iter().any(|&u| {
            in_loop(u)
                && matches!(*f.kind(u), InstKind::Gep { base, index, .. }
                    if base == p && f.value_def(index).is_constant())
                && f.inst_result(u).is_some_and(accesses)
        })
}

/// Whether a branch in loop `id` tests `p`, or the result of an instruction of
/// the loop whose operands are `p` and constants.
fn tested(f: &Function, loops: &LoopForest, id: LoopId, p: Value) -> bool {
    let in_loop = |b: Option<Block>| b.is_some_and(|b| loops.contains(id, b));
    let branches_on = |v: Value| {
        f.users(v).iter().any(|&u| {
            matches!(f.kind(u), InstKind::Br { cond, .. } if *cond == v)
                && in_loop(f.layout.inst_block(u))
        })
    };
    branches_on(p)
        || f.users(p).iter().any(|&u| {
            let kind = f.kind(u);
            !kind.is_terminator()
                && in_loop(f.layout.inst_block(u))
                && kind
                    .args()
                    .iter()
                    .all(|&a| a == p || f.value_def(a).is_constant())
                && f.inst_result(u).is_some_and(branches_on)
        })
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, run, same_behaviour};

    /// Asserts that `peelinv` leaves `src` as it is.
    fn unchanged(src: &str) {
        assert_eq!(run(src, &["peelinv"]), run(src, &[]));
    }

    /// `ans = 0; y = 1; for (i = 0; i < 16; i++) { if (x % 2 && y % 2) ans +=
    /// t[i]; x /= 2; y /= 2; }` once value ranges made `y / 2` the constant `0`.
    const HALVES: &str = r#"
global @t: [i32; 4] = [1, 2, 4, 8]
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, %0, 1, 0)
bb1(%1: i32, %2: i32, %3: i32, %4: i32):
  %5 = and %2, 1
  br %5, bb2, bb4(%4)
bb2:
  %6 = and %3, 1
  br %6, bb3, bb4(%4)
bb3:
  %7 = gep @t, %1, 4
  %8 = load i32, %7
  %9 = add %4, %8
  jump bb4(%9)
bb4(%10: i32):
  %11 = add %1, 1
  %12 = sdiv %2, 2
  %13 = slt %11, 4
  br %13, bb1(%11, %12, 0, %10), bb5
bb5:
  call @putint(%10)
  ret 0
}
"#;

    /// As in the pipeline; the second `dce` removes what the folded test kept alive
    /// (`x`) and the loop left empty (it counts to 4).
    const PASSES: [&str; 7] = [
        "peelinv",
        "sccp",
        "instcombine",
        "dce",
        "simplifycfg",
        "dce",
        "loopdelete",
    ];

    #[test]
    fn the_rest_of_the_loop_tests_a_constant() {
        check(
            &PASSES,
            HALVES,
            r#"
global @t: [i32; 4] = [1, 2, 4, 8]

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = and %0, 1
  br %1, bb1(1), bb1(0)
bb1(%2: i32):
  jump bb2
bb2:
  jump bb3
bb3:
  call @putint(%2)
  ret 0
}
"#,
        );
        for n in ["0", "1", "7", "-3"] {
            same_behaviour(HALVES, &PASSES, n);
        }
    }

    #[test]
    fn a_back_edge_value_that_is_not_constant_is_not_peeled() {
        let src = HALVES.replace("bb1(%11, %12, 0, %10)", "bb1(%11, %12, %12, %10)");
        unchanged(&src);
    }

    #[test]
    fn an_entry_with_the_back_edges_constant_is_not_peeled() {
        let src = HALVES.replace("jump bb1(0, %0, 1, 0)", "jump bb1(0, %0, 0, 0)");
        unchanged(&src);
    }

    #[test]
    fn a_parameter_no_branch_tests_is_not_peeled() {
        // `y` is only added up: peeling would fold nothing but an addition.
        let src = HALVES
            .replace("%6 = and %3, 1\n  br %6, bb3, bb4(%4)", "jump bb3")
            .replace("%9 = add %4, %8", "%9 = add %4, %3");
        unchanged(&src);
    }

    #[test]
    fn back_edges_that_disagree_are_not_peeled() {
        // A second latch passes 1 where the first passes 0.
        let src = HALVES
            .replace(
                "br %13, bb1(%11, %12, 0, %10), bb5",
                "br %13, bb6, bb5\nbb6:\n  %14 = slt %11, 2\n  br %14, bb1(%11, %12, 0, %10), bb1(%11, %12, 1, %10)",
            );
        unchanged(&src);
    }
    /// `f(p, n)` after tail-recursion elimination, where the recursive call passes
    /// the global `@b` for the array parameter: `while (n > 0) { p[0] = a[0] * 2.0;
    /// n--; p = b; }`, entered from a conditional branch. The store through `p`
    /// may write `@a`, so the load of `a[0]` stays in the loop.
    const ARRAY_PARAM: &str = r#"
global @a: [f32; 2] = zeroinit
global @b: [f32; 2] = zeroinit
declare @getint() -> i32
declare @putfloat(f32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb1(%0, @a), bb3
bb1(%2: i32, %3: ptr):
  %4 = load f32, @a
  %5 = fadd %4, 1.5
  store %5, %3
  %6 = add %2, -1
  %7 = sgt %6, 0
  br %7, bb1(%6, @b), bb3
bb3:
  %8 = load f32, @a
  call @putfloat(%8)
  %9 = load f32, @b
  call @putfloat(%9)
  ret 0
}
"#;

    #[test]
    fn an_address_that_is_one_global_after_the_first_iteration_is_peeled() {
        // The branch into the loop gets a preheader (`bb1`) for the copy; in the
        // loop left, `p` is `@b`, so `licm` takes the load of `@a`, the addition
        // and the store out of it.
        check(
            &["peelinv", "licm"],
            ARRAY_PARAM,
            r#"
global @a: [f32; 2] = zeroinit
global @b: [f32; 2] = zeroinit

declare @getint() -> i32
declare @putfloat(f32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb1, bb5
bb1:
  jump bb2(%0, @a)
bb2(%2: i32, %3: ptr):
  %4 = load f32, @a
  %5 = fadd %4, 1.5
  store %5, %3
  %6 = add %2, -1
  %7 = sgt %6, 0
  br %7, bb3, bb5
bb3:
  %8 = load f32, @a
  %9 = fadd %8, 1.5
  store %9, @b
  jump bb4(%6)
bb4(%10: i32):
  %11 = add %10, -1
  %12 = sgt %11, 0
  br %12, bb4(%11), bb5
bb5:
  %13 = load f32, @a
  call @putfloat(%13)
  %14 = load f32, @b
  call @putfloat(%14)
  ret 0
}
"#,
        );
        for n in ["0", "1", "2", "5"] {
            same_behaviour(ARRAY_PARAM, &["peelinv", "licm"], n);
        }
    }

    #[test]
    fn an_address_that_keeps_changing_is_not_peeled() {
        // The back edge passes the parameter itself shifted by one element.
        let src = ARRAY_PARAM
            .replace(
                "br %7, bb1(%6, @b), bb3",
                "%10 = gep %3, 1, 4\n  br %7, bb1(%6, %10), bb3",
            )
            .replace("global @a: [f32; 2]", "global @a: [f32; 8]");
        unchanged(&src);
    }

    #[test]
    fn an_address_nothing_accesses_is_not_peeled() {
        // No load or store goes through `p`: the loop stores to `@b` directly.
        let src = ARRAY_PARAM.replace("store %5, %3", "store %5, @b");
        unchanged(&src);
    }
}
