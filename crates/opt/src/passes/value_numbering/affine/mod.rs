//! Affine relations among integer values: Karr's analysis ("Affine relationships
//! among variables of a program", Acta Informatica 6, 1976) on SSA form with block
//! parameters, made sound for 32-bit wrap-around by checking every relation modulo
//! 2^32 (the ring Müller-Olm and Seidl, "Analysis of modular arithmetic", ESOP 2005,
//! work in), and used as value numbering modulo the affine algebra (the equalities
//! Gulwani and Necula's random interpretation finds, POPL 2003 / SAS 2004, found
//! here symbolically and deterministically).
//!
//! Every `i32` value gets an affine *form* `k + Σ c·a` over *atoms* (values the
//! analysis does not look into: loads, calls, function parameters, products of two
//! unknowns, divisions) with coefficients modulo 2^32: `add`, `sub`, `mul` and `shl`
//! by a constant compose forms exactly, wrap-around included. At a block with
//! parameters, Karr's iteration computes the affine hull of the parameter tuples
//! that reach it — a base point (the arguments of one entry edge) and the directions
//! the other entry edges and each back edge's map add — and the relations that hull
//! satisfies (`c · p = c · base`). Each relation is solved for a parameter with an
//! odd (invertible) coefficient, which then has a form over the block's other
//! parameters. The relations are proposed over the rationals and *checked* modulo
//! 2^32 on every edge under the assumption of all of them (`solve`), so the kept set
//! is an inductive invariant whatever the proposal got wrong.
//!
//! What it finds (each a test below, or a program in `tests/relations`):
//! - `a + b` and `b + a`, `(x + 1) + 1` and `x + 2`, `2 * i` and `i + i`,
//!   `(a - b) + (b - a)` and 0: equal forms, so one value (or a constant);
//! - two induction variables in step, `j = i + 5` or `j = 2 * i + 3`: `j - 2 * i`
//!   is the constant 3 in and after the loop, and `j` is computed from `i` (one
//!   `add` when the step ratio is 1) so its own update dies;
//! - values that swap each iteration: `x + y` keeps its entry value;
//! - a join whose parameters keep `y == x + 2` on every path, whatever each path
//!   computes, and the Figure 1 programs of the complete GVN where the operators
//!   are affine;
//! - `j != i` and `j == i + 1` decided when `j - i` is a known constant.
//!
//! What it cannot find: relations through non-linear operators (`x * y`, `x / 2`,
//! bit operations), which are the complete GVN's (Herbrand) domain; relations that
//! need a loop's trip count (`i * (i + 1) / 2`) or inequalities (`i < j` when
//! `j == i + 1` is not decided: wrap-around makes it false for `i == INT_MAX`);
//! relations among more than 16 parameters of one block, or through forms of more
//! than 8 terms (such values are atoms); relations through memory; and relations
//! only some multiple of which is solvable modulo 2^32 (`2 * x == 2 * y` does not
//! give `x == y` there), which are dropped.

mod form;
mod karr;
mod rewrite;
mod solve;
#[cfg(test)]
mod tests;

use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::FunctionTransform;
use ir::analysis::DominatorTree;
use ir::Function;
pub use rewrite::Rewrites;

/// The affine relations pass.
pub struct Affine;

impl FunctionTransform for Affine {
    const NAME: &'static str = "affine";
    const DESCRIPTION: &'static str = "affine relations among integers modulo 2^32 (Karr 1976) for value numbering and induction variables";
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        let dt = fa.domtree(f).1.clone();
        run(f, &dt).changed()
    }
}

/// Runs the analysis and rewrite over `f` (with its dominator tree `dt`).
pub fn run(f: &mut Function, dt: &DominatorTree) -> Rewrites {
    let (rel, forms) = solve::analyze(f, dt);
    rewrite::rewrite(f, dt, &rel, &forms)
}
