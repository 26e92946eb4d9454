//! Turning scalar-evolution expressions back into instructions, as LLVM's
//! `SCEVExpander`: a pass that has described a value as a recurrence
//! `{start,+,step,...}<loop>` materialises the loop-invariant operands in the loop's
//! preheader and builds the recurrence from header parameters.
//!
//! Only what `i32` and `i64` arithmetic can state directly is expanded: constants,
//! unknowns (the values themselves, when they are available at the insertion point),
//! sums and products. Recurrences, extensions and the trip-count operators are not:
//! the caller gets `None` and leaves the code as it was. Sums and products are
//! emitted term by term in the expression's canonical order; identical
//! subexpressions are emitted once per [`Expander`] (the arena is hash-consed).

use super::expr::{Expr, ExprId, Exprs};
use ir::{BinOp, Function, Inst, InstKind, Type, Value};
use rustc_hash::FxHashMap;

/// Emits expressions before one instruction, remembering what it emitted.
pub struct Expander<'e> {
    exprs: &'e Exprs,
    /// Instructions go before this one.
    before: Inst,
    /// The instruction whose source line the new ones take.
    origin: Inst,
    /// At most this many instructions in all; expansion fails past it.
    budget: usize,
    done: FxHashMap<ExprId, Value>,
}

impl<'e> Expander<'e> {
    /// An expander inserting before `before`, at the source line of `origin`, at
    /// most `budget` instructions.
    pub fn new(exprs: &'e Exprs, before: Inst, origin: Inst, budget: usize) -> Self {
        Expander {
            exprs,
            before,
            origin,
            budget,
            done: FxHashMap::default(),
        }
    }

    /// The value of `e` at the insertion point, emitting what it needs; `None` when
    /// `e` has a part that cannot be expanded, an unknown for which `available` is
    /// false, or more instructions than the budget allows (what was emitted before
    /// the failure stays, unused, for dead-code elimination).
    pub fn expand(
        &mut self,
        f: &mut Function,
        e: ExprId,
        available: &dyn Fn(&Function, Value) -> bool,
    ) -> Option<Value> {
        if let Some(&v) = self.done.get(&e) {
            return Some(v);
        }
        let v = match self.exprs.get(e) {
            Expr::Const { ty: Type::I32, c } => f.iconst(*c as i32),
            Expr::Unknown { v, .. } => {
                if !available(f, *v) {
                    return None;
                }
                *v
            }
            Expr::Add { ty, ops, .. } | Expr::Mul { ty, ops, .. } => {
                let is_add = matches!(self.exprs.get(e), Expr::Add { .. });
                let op = match (is_add, *ty) {
                    (true, Type::I32) => BinOp::Add,
                    (true, Type::I64) => BinOp::Add64,
                    (false, Type::I32) => BinOp::Mul,
                    (false, Type::I64) => BinOp::Mul64,
                    _ => return None,
                };
                let ty = *ty;
                // The constant term or factor (first in canonical order) last, as
                // the IR writes constants.
                let mut ops = ops.clone();
                ops.rotate_left(1);
                if self.exprs.as_const(ops[ops.len() - 1]).is_none() {
                    ops.rotate_right(1);
                }
                let mut acc = self.expand(f, ops[0], available)?;
                for &o in &ops[1..] {
                    let x = self.expand(f, o, available)?;
                    acc = self.binary(f, op, acc, x, ty)?;
                }
                acc
            }
            _ => return None,
        };
        self.done.insert(e, v);
        Some(v)
    }

    /// `op a, b` of type `ty`, within the budget.
    pub fn binary(
        &mut self,
        f: &mut Function,
        op: BinOp,
        a: Value,
        b: Value,
        ty: Type,
    ) -> Option<Value> {
        self.budget = self.budget.checked_sub(1)?;
        let i = f.insert_inst_before(self.before, InstKind::Binary { op, args: [a, b] }, ty);
        f.copy_src_loc(self.origin, i);
        f.inst_result(i)
    }
}
