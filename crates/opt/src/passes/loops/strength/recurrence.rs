//! Indices that advance by a loop-invariant amount, in `i32` arithmetic: `x + j`,
//! `j * n + i`, `(j + 1) * n` with `j` a recurrence of the loop (its counter or any
//! other header parameter stepping by an invariant) and `x`, `n`, `i`
//! loop-invariant. Each is an affine add-recurrence `{start,+,step}<loop>` of the
//! scalar evolution ([`crate::analysis::scev`]; Bachmann, Wang and Zima, "Chains of
//! Recurrences", ISSAC 1994) modulo 2^32: addition, subtraction, multiplication by
//! an invariant and left shifts are ring operations, so the index of iteration
//! `k + 1` is the index of iteration `k` plus `step`, wrapping.
//!
//! Unlike [`super::affine`], nothing here proves the index free of wrap-around; the
//! caller turns an address `base + sext(index) * stride` into a pointer advancing by
//! `sext(step) * stride` only when an in-bounds access through it runs on every
//! iteration that continues the loop (module documentation of [`super`]). The start
//! and the step are expanded in the preheader ([`Expander`]), recurrences of outer
//! loops in them written as those loops' header parameters
//! ([`ScalarEvolution::with_header_parameters`]); only sums and products of `i32`
//! constants and invariant values are taken, so the expansion cannot fail.

use super::gep_blocks::GepBlocks;
use crate::analysis::scev::expand::Expander;
use crate::analysis::scev::{Expr, ExprId, Exprs, ScalarEvolution};
use crate::analysis::LoopId;
use ir::{Function, Inst, InstKind, Type, Value};
use rustc_hash::FxHashMap;

/// At most this many operands in a start or step expression.
const MAX_OPERANDS: usize = 16;

/// The `gep` indices of counted loops that are affine `i32` recurrences of the loop,
/// found before the loops are rewritten, with the scalar evolution's arena.
#[derive(Default)]
pub struct Recurrences {
    exprs: Exprs,
    /// `(loop, index)` to `(start, step)`.
    by_index: FxHashMap<(LoopId, Value), (ExprId, ExprId)>,
}

impl Recurrences {
    /// The indices of the `gep`s with loop-invariant bases in the loops `ids`
    /// (blocks from `geps`) that are recurrences `{start,+,step}<loop>` of `i32`
    /// type whose step is not the constant zero. The arena is taken from `se` when
    /// there are any (the caller then forgets the analysis).
    pub fn find(
        se: &mut ScalarEvolution,
        geps: &GepBlocks,
        ids: impl IntoIterator<Item = LoopId>,
    ) -> Self {
        let (f, loops) = (se.f, se.loops);
        let mut by_index = FxHashMap::default();
        for id in ids {
            let in_loop = |v: Value| f.value_block(v).is_some_and(|b| loops.contains(id, b));
            for b in geps.of_loop(loops, id) {
                for i in f.layout.block_insts(b) {
                    let InstKind::Gep { base, index, .. } = *f.kind(i) else {
                        continue;
                    };
                    if in_loop(base)
                        || !in_loop(index)
                        || f.value_type(index) != Type::I32
                        || by_index.contains_key(&(id, index))
                    {
                        continue;
                    }
                    let e = se.get(index);
                    let Some((l, &[start, step])) = se.exprs.as_addrec(e) else {
                        continue;
                    };
                    if l != id || se.exprs.as_const(step) == Some(0) {
                        continue;
                    }
                    // Recurrences of outer loops as their header parameters.
                    let (Some(start), Some(step)) = (
                        se.with_header_parameters(start, id),
                        se.with_header_parameters(step, id),
                    ) else {
                        continue;
                    };
                    if expandable(&se.exprs, start) && expandable(&se.exprs, step) {
                        by_index.insert((id, index), (start, step));
                    }
                }
            }
        }
        let exprs = if by_index.is_empty() {
            Exprs::default()
        } else {
            std::mem::take(&mut se.exprs)
        };
        Recurrences { exprs, by_index }
    }

    /// Whether no index was found (the analysis was left as it was).
    pub fn is_empty(&self) -> bool {
        self.by_index.is_empty()
    }

    /// Whether `v` is a recurrence of loop `id` with a step that is not always zero.
    pub fn is_varying(&self, id: LoopId, v: Value) -> bool {
        self.by_index.contains_key(&(id, v))
    }

    /// Emits, before `at` (the preheader's terminator), the value the recurrence
    /// `v` of loop `id` takes on the first iteration and the amount it advances by
    /// per iteration; `v` must be one ([`Self::is_varying`]).
    pub fn start_and_step(
        &self,
        f: &mut Function,
        id: LoopId,
        at: Inst,
        v: Value,
    ) -> (Value, Value) {
        let (start, step) = self.by_index[&(id, v)];
        let mut ex = Expander::new(&self.exprs, at, at, 4 * MAX_OPERANDS);
        // Every unknown is invariant in the loop and used in it (or the
        // preheader's argument to a header parameter), so available at `at`.
        let available = |_: &Function, _: Value| true;
        let start = ex.expand(f, start, &available);
        let step = ex.expand(f, step, &available);
        (
            start.expect("sums and products of invariants expand"),
            step.expect("sums and products of invariants expand"),
        )
    }
}

/// Whether `e` is a sum or product of `i32` constants and unknowns, with at most
/// [`MAX_OPERANDS`] operands in all.
pub(super) fn expandable(exprs: &Exprs, e: ExprId) -> bool {
    fn count(exprs: &Exprs, e: ExprId, budget: &mut usize) -> bool {
        match exprs.get(e) {
            Expr::Const { ty: Type::I32, .. } | Expr::Unknown { ty: Type::I32, .. } => {
                *budget = budget.saturating_sub(1);
                *budget > 0
            }
            Expr::Add {
                ty: Type::I32, ops, ..
            }
            | Expr::Mul {
                ty: Type::I32, ops, ..
            } => ops.iter().all(|&o| count(exprs, o, budget)),
            _ => false,
        }
    }
    let mut budget = MAX_OPERANDS;
    count(exprs, e, &mut budget)
}
