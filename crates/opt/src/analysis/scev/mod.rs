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
//! of iterations by binomial coefficients (Newton series). [`predicated`]
//! describes `i32` values as exact affine recurrences under no-wrap predicates
//! (LLVM's `PredicatedScalarEvolution`), for loop versioning. [`expand`] turns
//! invariant expressions back into instructions, and [`print`] renders the
//! analysis of a function for tests.
//!
//! The analysis borrows the function, its CFG, dominator tree and loop forest; what
//! it has found (the expressions, the memo of analysed values, the loops' maximum
//! counts) is a [`ScevState`] of its own, which the analysis manager keeps with the
//! loop forest ([`crate::analysis::FunctionAnalyses::scev`]): it depends on the
//! instructions, not only on the CFG, so the manager drops it whenever a pass
//! reports a change to the function (and a pass that changes the function and then
//! asks again forgets it first). A pass that has no manager builds its own with
//! [`ScalarEvolution::new`].

pub mod access_bound;
pub mod builder;
pub mod expand;
pub mod expr;
pub mod predicated;
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

/// What the scalar evolution of one function has found so far: owned, so the
/// analysis manager can keep it from one pass to the next while the function is
/// unchanged.
pub struct ScevState {
    pub exprs: Exprs,
    memo: FxHashMap<Value, Memo>,
    /// The values entered in `memo` while a header parameter stands for itself,
    /// in order (to forget those built from it when it is found).
    log: Vec<Value>,
    /// How many header parameters stand for themselves (nested, innermost last).
    open: u32,
    /// The placeholders (bits of `open` levels) the value being built so far
    /// depends on.
    pending: u32,
    ranges: Option<Ranges>,
    use_ranges: bool,
    max_counts: FxHashMap<LoopId, Option<i64>>,
    depth: usize,
    /// Recurrences [`ScalarEvolution::is_exact`] proved exact, for printing.
    proven: rustc_hash::FxHashSet<ExprId>,
    /// Every loop's exiting blocks, computed on first use.
    exiting: std::cell::OnceCell<Vec<Vec<ir::Block>>>,
}

impl ScevState {
    /// A state with nothing found yet, using value ranges when `use_ranges`.
    pub fn new(use_ranges: bool) -> Self {
        ScevState {
            exprs: Exprs::default(),
            memo: FxHashMap::default(),
            log: Vec::new(),
            open: 0,
            pending: 0,
            ranges: None,
            use_ranges,
            max_counts: FxHashMap::default(),
            depth: 0,
            proven: Default::default(),
            exiting: Default::default(),
        }
    }

    /// How many values have been analysed.
    pub fn analysed(&self) -> usize {
        self.memo.len()
    }
}

/// A memoised expression, with the header parameters still standing for
/// themselves that it was built from (one bit per nesting level): it is forgotten
/// when any of them is found.
#[derive(Copy, Clone)]
struct Memo {
    e: ExprId,
    pending: u32,
}

/// The state a [`ScalarEvolution`] works on: its own, or one kept by the
/// analysis manager.
enum StateRef<'a> {
    Owned(Box<ScevState>),
    Borrowed(&'a mut ScevState),
}

/// The scalar evolution of one function (see the module documentation).
pub struct ScalarEvolution<'a> {
    pub f: &'a Function,
    pub cfg: &'a ControlFlowGraph,
    pub dt: &'a DominatorTree,
    pub loops: &'a LoopForest,
    st: StateRef<'a>,
}

impl std::ops::Deref for ScalarEvolution<'_> {
    type Target = ScevState;
    fn deref(&self) -> &ScevState {
        match &self.st {
            StateRef::Owned(s) => s,
            StateRef::Borrowed(s) => s,
        }
    }
}

impl std::ops::DerefMut for ScalarEvolution<'_> {
    fn deref_mut(&mut self) -> &mut ScevState {
        match &mut self.st {
            StateRef::Owned(s) => s,
            StateRef::Borrowed(s) => s,
        }
    }
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
            st: StateRef::Owned(Box::new(ScevState::new(true))),
        }
    }

    /// The analysis of `f` continuing from `state`, which must have been found
    /// on `f` as it is now, with these `cfg`, `dt` and `loops` (the analysis
    /// manager's cache).
    pub fn with_state(
        f: &'a Function,
        cfg: &'a ControlFlowGraph,
        dt: &'a DominatorTree,
        loops: &'a LoopForest,
        state: &'a mut ScevState,
    ) -> Self {
        ScalarEvolution {
            f,
            cfg,
            dt,
            loops,
            st: StateRef::Borrowed(state),
        }
    }

    /// The analysis without value ranges: no flag is proven exact and no
    /// predicate on a bound is decided from its range, but nothing costs more
    /// than the expressions asked for (for passes that only need trip counts of
    /// constant-bounded or step-one counters, such as termination proofs). A
    /// state kept by the analysis manager is always without them.
    pub fn without_ranges(mut self) -> Self {
        debug_assert!(
            !self.use_ranges || self.memo.is_empty(),
            "a state mixing modes"
        );
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
