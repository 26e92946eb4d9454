//! Scalar evolution: every integer (and pointer) value of a loop nest described as
//! an expression of loop invariants and add-recurrences `{start,+,step}<loop>`,
//! with the loops' trip counts and the values their recurrences leave with.
//!
//! This is LLVM's `ScalarEvolution` (and GCC's `tree-scalar-evolution`) built on
//! chains of recurrences (Bachmann, Wang and Zima, ISSAC 1994): [`expr`] holds the
//! expressions and their folding rules, [`builder`] turns IR values into them lazily
//! (a header parameter whose latch argument is itself plus a step becomes a
//! recurrence, as LLVM's `createAddRecFromPHI`), [`tripcount`] solves the exit tests
//! for the number of back edges taken (LLVM's `computeExitLimit` /
//! `howManyLessThans` / `howFarToZero`), with the predicates under which the count
//! holds (as `PredicatedScalarEvolution`), and evaluates recurrences after a number
//! of iterations by binomial coefficients (Newton series). [`expand`] turns
//! invariant expressions back into instructions, and [`print`] renders the
//! analysis of a function for tests.
//!
//! The analysis borrows the function: it is computed on demand by a pass before it
//! changes anything (it depends on the instructions, not only on the CFG, so the
//! analysis manager, which keeps analyses across passes that preserve the CFG, does
//! not cache it).

pub mod builder;
pub mod expand;
pub mod expr;
pub mod print;
#[cfg(test)]
mod tests;
pub mod tripcount;

pub use expr::{Expr, ExprId, Exprs};
pub use print::print;
pub use tripcount::{ExitCount, ExitTest, LoopCounts, Predicate};

use crate::analysis::ranges::{Range, Ranges};
use crate::analysis::{LoopForest, LoopId};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Function, Value};
use rustc_hash::FxHashMap;

/// The scalar evolution of one function (see the module documentation).
pub struct ScalarEvolution<'a> {
    pub f: &'a Function,
    pub cfg: &'a ControlFlowGraph,
    pub dt: &'a DominatorTree,
    pub loops: &'a LoopForest,
    pub exprs: Exprs,
    memo: FxHashMap<Value, ExprId>,
    /// The values entered in `memo`, in order (to forget those computed while a
    /// header parameter stood for itself).
    log: Vec<Value>,
    ranges: Option<Ranges>,
    use_ranges: bool,
    max_counts: FxHashMap<LoopId, Option<i64>>,
    depth: usize,
    /// Recurrences [`Self::is_exact`] proved exact, for printing.
    proven: rustc_hash::FxHashSet<ExprId>,
    /// Every loop's exiting blocks, computed on first use.
    exiting: std::cell::OnceCell<Vec<Vec<ir::Block>>>,
}

impl<'a> ScalarEvolution<'a> {
    pub fn new(
        f: &'a Function,
        cfg: &'a ControlFlowGraph,
        dt: &'a DominatorTree,
        loops: &'a LoopForest,
    ) -> Self {
        ScalarEvolution {
            f,
            cfg,
            dt,
            loops,
            exprs: Exprs::default(),
            memo: FxHashMap::default(),
            log: Vec::new(),
            ranges: None,
            use_ranges: true,
            max_counts: FxHashMap::default(),
            depth: 0,
            proven: Default::default(),
            exiting: Default::default(),
        }
    }

    /// The analysis without value ranges: no flag is proven exact and no
    /// predicate on a bound is decided from its range, but nothing costs more
    /// than the expressions asked for (for passes that only need trip counts of
    /// constant-bounded or step-one counters, such as termination proofs).
    pub fn without_ranges(mut self) -> Self {
        self.use_ranges = false;
        self
    }

    /// The value range of `v`, the ranges computed on first use.
    fn range(&mut self, v: Value) -> Option<Range> {
        if !self.use_ranges {
            return None;
        }
        let (f, cfg) = (self.f, self.cfg);
        self.ranges
            .get_or_insert_with(|| Ranges::compute(f, cfg))
            .get(v)
    }

    /// Whether `e` is invariant in `lp`.
    pub fn invariant(&self, e: ExprId, lp: LoopId) -> bool {
        self.exprs.invariant(self.f, self.loops, e, lp)
    }
}
