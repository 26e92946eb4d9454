//! Modulo variable expansion: a loop that rotates values through its header's
//! parameters (`bb1(%a, %b)` ... `jump bb1(%b, %new)`, as predictive commoning
//! leaves it) is unrolled, so that each value flows from the copy that
//! makes it to the copy that uses it without a register copy on every back edge.
//!
//! A rotation `a <- b, b <- new` costs one register move per carried value and
//! iteration: the register allocator cannot give `a` and `b` one register each
//! when each iteration shifts values from one to the other. With two copies of
//! the body, the first passes `(b, new)` to the second's header and the second
//! passes `(b', new')` back: the values alternate between two registers and the
//! copies coalesce (Lam, "Software Pipelining: An Effective Scheduling Technique
//! for VLIW Machines", PLDI 1988, section 3.2; GCC's predictive commoning
//! unrolls for the same reason).
//!
//! A value shifted along a chain of `n` parameters lives `n + 1` iterations, so
//! `n + 1` copies would let each copy load its new value into the register the
//! oldest one just left; the loop is unrolled into at most [`MAX_FACTOR`]
//! copies, which already removes most of the moves.
//!
//! The unrolling keeps every exit test: each copy's back edge goes to the next
//! copy's header, the last one's to the original header, so no remainder loop or
//! trip count is needed and any loop shape works (the body may branch).
//! Values used after the loop get parameters merging the two copies' definitions
//! ([`crate::loop_copy::LoopCopy::repair_uses_outside`]). Only small innermost
//! loops are expanded, and a function grows by at most [`MAX_GROWTH`]
//! instructions.

use crate::analysis::Loop;
use crate::analysis::{FunctionAnalyses, Preserved};
use crate::loop_copy::LoopCopy;
use crate::pipeline::FunctionTransform;
use ir::{Block, Function};

/// The modulo variable expansion pass.
pub struct ModuloVariableExpansion;

impl FunctionTransform for ModuloVariableExpansion {
    const NAME: &'static str = "mve";
    const DESCRIPTION: &'static str =
        "unroll loops that rotate values through header parameters, removing the copies";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// Loops of at most this many instructions are expanded.
pub const MAX_LOOP_INSTS: usize = 80;
/// A function grows by at most this many instructions.
pub const MAX_GROWTH: usize = 400;
/// At most this many copies of a loop. Three copies would let a value shifted
/// along two parameters keep its register for good, but the allocator does not
/// yet find that assignment, and the third copy's code costs more than the
/// moves it saves (on the suite's 3x3 stencils, 0.80 -> 0.87 of gcc's cycles).
pub const MAX_FACTOR: usize = 2;

/// Expands the loops of `f` that qualify, one per round; returns how many.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// [`run`], starting from the analyses cached in `fa` (left holding those of the
/// last round).
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    let mut budget = MAX_GROWTH;
    let mut done: Vec<Block> = Vec::new();
    fa.rounds(f, usize::MAX, |f, fa| {
        let (cfg, _, loops) = fa.loops(f);
        // Sizes summed up the nest: linear however deep it is.
        let sizes = loops.inst_counts(f);
        let candidate = loops.loops().find_map(|(id, lp)| {
            let size = sizes[id.0 as usize];
            (lp.children.is_empty()
                && !done.contains(&lp.header)
                && size <= MAX_LOOP_INSTS.min(budget)
                && loops.preheader(id, cfg).is_some())
            .then(|| {
                let factor = (rotation(f, lp) + 1).min(MAX_FACTOR);
                (factor >= 2 && size * (factor - 1) <= budget).then_some((id, size, factor))
            })
            .flatten()
        });
        let (id, size, factor) = candidate?;
        budget -= size * (factor - 1);
        let lp = loops.get(id);
        done.push(lp.header);
        expand(f, lp, factor);
        Some(1)
    })
}

/// The longest chain of header parameters the loop's single back edge shifts
/// values along (`a <- b <- new` is 2; 0 when no parameter receives another).
fn rotation(f: &Function, lp: &Loop) -> usize {
    let [latch] = lp.latches[..] else {
        return 0;
    };
    let Some(term) = f.terminator(latch) else {
        return 0;
    };
    let params = f.block_params(lp.header);
    let Some(edge) = f
        .kind(term)
        .targets()
        .into_iter()
        .find(|t| t.block == lp.header)
    else {
        return 0;
    };
    // from[k] = j when parameter k receives parameter j.
    let from: Vec<Option<usize>> = edge
        .args
        .iter()
        .enumerate()
        .map(|(k, a)| params.iter().position(|p| p == a).filter(|&j| j != k))
        .collect();
    let mut longest = 0;
    for start in 0..from.len() {
        let mut len = 0;
        let mut k = start;
        while let Some(j) = from[k] {
            len += 1;
            k = j;
            if len > from.len() {
                break; // a cycle of parameters (a swap): no new value enters
            }
        }
        if len <= from.len() {
            longest = longest.max(len + usize::from(len > 0));
        }
    }
    longest
}

/// Unrolls `lp` into `factor` copies chained around the loop: copy `k`'s back
/// edge enters copy `k + 1`, the last copy's the original header.
fn expand(f: &mut Function, lp: &Loop, factor: usize) {
    let header = lp.header;
    let copies: Vec<LoopCopy> = (1..factor).map(|_| LoopCopy::new(f, lp, true)).collect();
    // Latches of the original and of every copy but the last enter the next copy.
    let mut latches: Vec<Vec<Block>> = vec![lp.latches.clone()];
    for c in &copies[..copies.len() - 1] {
        latches.push(lp.latches.iter().map(|l| c.blocks[l]).collect());
    }
    for (k, group) in latches.iter().enumerate() {
        let next = copies[k].blocks[&header];
        for &latch in group {
            let term = f.terminator(latch).expect("a latch ends in a branch");
            let n = f.kind(term).targets().len();
            for which in 0..n {
                let t = f.kind(term).targets()[which].clone();
                if t.block == header {
                    f.set_target(term, which, ir::BlockCall::new(next, t.args));
                }
            }
        }
    }
    // Values the loop defines now have `factor` definitions: uses after the
    // loop read whichever reaches them.
    let created = crate::loop_copy::repair_uses_outside(f, lp, &copies);
    crate::ssa::remove_trivial_params(f, &created);
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// `s += a[i-2] * a[i-1] - a[i]` with `a[i-2]` and `a[i-1]` carried in header
    /// parameters (as predictive commoning leaves it): the back edge passes
    /// `a[i-1]` from one parameter to the other.
    const ROTATE: &str = r#"
global @a: [i32; 32] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4]

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = load i32, @a
  %20 = gep @a, 1, 4
  %21 = load i32, %20
  jump bb1(2, %1, %21, 0)
bb1(%2: i32, %3: i32, %22: i32, %4: i32):
  %5 = gep @a, %2, 4
  %6 = load i32, %5
  %7 = mul %3, %22
  %23 = sub %7, %6
  %8 = add %4, %23
  %9 = srem %6, 2
  br %9, bb2, bb3(%8)
bb2:
  %10 = add %8, 1
  jump bb3(%10)
bb3(%11: i32):
  %12 = add %2, 1
  %13 = slt %12, %0
  br %13, bb1(%12, %22, %6, %11), bb4
bb4:
  call @putint(%11)
  ret 0
}
"#;

    #[test]
    fn a_loop_shifting_values_between_parameters_is_unrolled() {
        let out = same_behaviour(ROTATE, &["mve"], "20");
        let main = &out[out.find("func @main").unwrap()..];
        // MAX_FACTOR copies of the body: as many multiplications and exit tests.
        assert_eq!(main.matches("mul").count(), super::MAX_FACTOR, "{out}");
        assert_eq!(main.matches("slt").count(), super::MAX_FACTOR, "{out}");
        for n in ["1", "2", "3", "24"] {
            same_behaviour(ROTATE, &["mve"], n);
        }
    }

    #[test]
    fn a_loop_that_does_not_rotate_is_left_alone() {
        let plain = ROTATE.replace("bb1(%12, %22, %6, %11)", "bb1(%12, %3, %6, %11)");
        let out = same_behaviour(&plain, &["mve"], "20");
        assert_eq!(out.matches("mul").count(), 1, "{out}");
    }
}
