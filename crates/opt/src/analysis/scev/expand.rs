//! Turning scalar-evolution expressions back into instructions, as LLVM's
//! `SCEVExpander`: a pass that has described a value as a recurrence
//! `{start,+,step,...}<loop>` materialises the loop-invariant operands in the loop's
//! preheader and builds the recurrence from header parameters.
//!
//! What `i32` and `i64` arithmetic can state is expanded: constants (`i64` ones
//! within `i32`), unknowns (the values themselves, when they are available at the
//! insertion point), sums, products, sign and zero extension and truncation, and
//! the trip-count operators as the counts use them: the signed maximum of two
//! sign-extended `i32` values (`b + (a - b) * (a > b)` in `i32`, as the IR has no
//! select), or of two such values moved by constants (`sext(n) + 1`, in `i64`,
//! the comparison decided by `i32` ones), and the unsigned division of a count's
//! span by a positive constant (a signed division: the span is below 2^63).
//! Recurrences are not: the caller gets `None` and leaves the code as it was. Sums and products are
//! emitted term by term in the expression's canonical order; identical
//! subexpressions are emitted once per [`Expander`] (the arena is hash-consed).

use super::expr::{Expr, ExprId, Exprs};
use crate::analysis::LoopId;
use ir::{BinOp, CmpOp, Function, Inst, InstKind, Type, UnOp, Value};
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
            &Expr::Const { ty: Type::I64, c } => {
                let c = f.iconst(i32::try_from(c).ok()?);
                self.unary(f, UnOp::SExt, c, Type::I64)?
            }
            &Expr::SExt(a) => {
                let a = self.expand(f, a, available)?;
                self.unary(f, UnOp::SExt, a, Type::I64)?
            }
            // `zext(a) = 2 * sext(a >>> 1) + (a & 1)`: the halved value is
            // non-negative, so its sign extension is its zero extension.
            &Expr::ZExt(a) => {
                let a = self.expand(f, a, available)?;
                let one = f.iconst(1);
                let half = self.binary(f, BinOp::LShr, a, one, Type::I32)?;
                let half = self.unary(f, UnOp::SExt, half, Type::I64)?;
                let twice = self.binary(f, BinOp::Add64, half, half, Type::I64)?;
                let low = self.binary(f, BinOp::And, a, one, Type::I32)?;
                let low = self.unary(f, UnOp::SExt, low, Type::I64)?;
                self.binary(f, BinOp::Add64, twice, low, Type::I64)?
            }
            &Expr::Trunc(a) => match *self.exprs.get(a) {
                Expr::SMax(x, y) => self.smax32(f, x, y, available)?,
                _ => {
                    let a = self.expand(f, a, available)?;
                    self.unary(f, UnOp::Trunc, a, Type::I32)?
                }
            },
            &Expr::SMax(x, y) => match (self.narrow(x), self.narrow(y)) {
                (Some(_), Some(_)) => {
                    let m = self.smax32(f, x, y, available)?;
                    self.unary(f, UnOp::SExt, m, Type::I64)?
                }
                _ => self.smax_wide(f, x, y, available)?,
            },
            &Expr::UDiv(a, d) => {
                if self.exprs.as_const(d).is_none_or(|d| d <= 0) {
                    return None;
                }
                let a = self.expand(f, a, available)?;
                let d = self.expand(f, d, available)?;
                self.binary(f, BinOp::SDiv64, a, d, Type::I64)?
            }
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

    /// The `i32` expression `e` extends: an extension's operand, or an `i64`
    /// constant in `i32` (itself).
    fn narrow(&self, e: ExprId) -> Option<ExprId> {
        match *self.exprs.get(e) {
            Expr::SExt(a) => Some(a),
            Expr::Const { c, .. } => i32::try_from(c).ok().map(|_| e),
            _ => None,
        }
    }

    /// `e` as `sext(a) + c` (`a` absent for a constant): an `i32` value moved by a
    /// constant, as a count's bound `n + inclusive` is.
    fn offset_form(&self, e: ExprId) -> Option<(Option<ExprId>, i64)> {
        match self.exprs.get(e) {
            Expr::SExt(a) => Some((Some(*a), 0)),
            &Expr::Const { c, .. } => Some((None, c)),
            Expr::Add {
                ty: Type::I64, ops, ..
            } => match ops[..] {
                [c, a] => {
                    let c = self.exprs.as_const(c)?;
                    match *self.exprs.get(a) {
                        Expr::SExt(a) => Some((Some(a), c)),
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// `smax(x, y)` of two `i64` expressions of the form `sext(a) + c`, where
    /// `a + c` may leave `i32` (so [`Self::smax32`] cannot compute it there): `y +
    /// (x - y) * (x > y)` in `i64`, the comparison decided exactly by `i32`
    /// comparisons, as the IR compares no `i64` values. With `k = cy - cx`,
    /// `sext(a) + cx > sext(b) + cy` is `a > b + k` when `b + k` is in `i32`; for
    /// `k > 0` it is false when `b > MAX - k`, for `k < 0` true when `b < MIN - k`.
    fn smax_wide(
        &mut self,
        f: &mut Function,
        x: ExprId,
        y: ExprId,
        available: &dyn Fn(&Function, Value) -> bool,
    ) -> Option<Value> {
        const MIN: i64 = i32::MIN as i64;
        const MAX: i64 = i32::MAX as i64;
        let ((a, cx), (b, cy)) = (self.offset_form(x)?, self.offset_form(y)?);
        let k = cy.checked_sub(cx)?;
        if !(-MAX..=MAX).contains(&k) {
            return None;
        }
        let gt = match (a, b) {
            (Some(a), Some(b)) => {
                let a = self.expand(f, a, available)?;
                let b = self.expand(f, b, available)?;
                if k == 0 {
                    self.cmp(f, CmpOp::Sgt, a, b)?
                } else {
                    let kc = f.iconst(k as i32);
                    let moved = self.binary(f, BinOp::Add, b, kc, Type::I32)?;
                    let above = self.cmp(f, CmpOp::Sgt, a, moved)?;
                    // Whether `b + k` stays in `i32`, and what holds when not.
                    let (op, limit, join) = if k > 0 {
                        (CmpOp::Sle, MAX - k, BinOp::And)
                    } else {
                        (CmpOp::Slt, MIN - k, BinOp::Or)
                    };
                    let limit = f.iconst(limit as i32);
                    let edge = self.cmp(f, op, b, limit)?;
                    self.binary(f, join, edge, above, Type::I32)?
                }
            }
            // `cx > sext(b) + cy`: `b < cx - cy`.
            (None, Some(b)) => {
                let m = -k;
                if m > MAX {
                    f.iconst(1)
                } else if m <= MIN {
                    f.iconst(0)
                } else {
                    let b = self.expand(f, b, available)?;
                    let mc = f.iconst(m as i32);
                    self.cmp(f, CmpOp::Slt, b, mc)?
                }
            }
            // `sext(a) + cx > cy`: `a > cy - cx`.
            (Some(a), None) => {
                if k >= MAX {
                    f.iconst(0)
                } else if k < MIN {
                    f.iconst(1)
                } else {
                    let a = self.expand(f, a, available)?;
                    let kc = f.iconst(k as i32);
                    self.cmp(f, CmpOp::Sgt, a, kc)?
                }
            }
            (None, None) => f.iconst(i32::from(cx > cy)),
        };
        let x = self.expand(f, x, available)?;
        let y = self.expand(f, y, available)?;
        let diff = self.binary(f, BinOp::Sub64, x, y, Type::I64)?;
        let gt = self.unary(f, UnOp::SExt, gt, Type::I64)?;
        let over = self.binary(f, BinOp::Mul64, diff, gt, Type::I64)?;
        self.binary(f, BinOp::Add64, y, over, Type::I64)
    }

    /// `op a, b` (an `i32` comparison), within the budget.
    fn cmp(&mut self, f: &mut Function, op: CmpOp, a: Value, b: Value) -> Option<Value> {
        self.budget = self.budget.checked_sub(1)?;
        let i = f.insert_inst_before(self.before, InstKind::Cmp { op, args: [a, b] }, Type::I32);
        f.copy_src_loc(self.origin, i);
        f.inst_result(i)
    }

    /// `smax(x, y)` of two `i64` expressions that are sign-extended `i32` values
    /// (extensions or constants in `i32`), computed in `i32` and without a branch.
    fn smax32(
        &mut self,
        f: &mut Function,
        x: ExprId,
        y: ExprId,
        available: &dyn Fn(&Function, Value) -> bool,
    ) -> Option<Value> {
        let (a, b) = (self.narrow(x)?, self.narrow(y)?);
        let a = self.expand_i32(f, a, available)?;
        let b = self.expand_i32(f, b, available)?;
        let gt = self.cmp(f, CmpOp::Sgt, a, b)?;
        let diff = self.binary(f, BinOp::Sub, a, b, Type::I32)?;
        let over = self.binary(f, BinOp::Mul, diff, gt, Type::I32)?;
        self.binary(f, BinOp::Add, b, over, Type::I32)
    }

    /// [`Self::expand`] of an `i32` expression, or of an `i64` constant in `i32`
    /// taken as the `i32` constant.
    fn expand_i32(
        &mut self,
        f: &mut Function,
        e: ExprId,
        available: &dyn Fn(&Function, Value) -> bool,
    ) -> Option<Value> {
        match *self.exprs.get(e) {
            Expr::Const { c, .. } => Some(f.iconst(i32::try_from(c).ok()?)),
            _ => self.expand(f, e, available),
        }
    }

    /// `op a` of type `ty`, within the budget.
    fn unary(&mut self, f: &mut Function, op: UnOp, a: Value, ty: Type) -> Option<Value> {
        self.budget = self.budget.checked_sub(1)?;
        let i = f.insert_inst_before(self.before, InstKind::Unary { op, arg: a }, ty);
        f.copy_src_loc(self.origin, i);
        f.inst_result(i)
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

/// A value a pass puts before a loop: a constant, a value that exists there, or
/// an invariant expression to expand.
#[derive(Clone, Copy, Debug)]
pub enum Operand {
    Const(i32),
    Value(Value),
    /// An invariant expression, expanded before the loop.
    Expr(ExprId),
}

impl Operand {
    /// The operand's value where `ex` inserts, `None` when the expression cannot
    /// be expanded there.
    pub fn value(
        self,
        f: &mut Function,
        ex: &mut Expander,
        available: &dyn Fn(&Function, Value) -> bool,
    ) -> Option<Value> {
        match self {
            Operand::Const(c) => Some(f.iconst(c)),
            Operand::Value(v) => Some(v),
            Operand::Expr(e) => ex.expand(f, e, available),
        }
    }
}

/// Removes the instructions between `after` (or the block's start) and `end`,
/// which nothing uses (they were emitted for values not used in the end).
pub fn remove_emitted(f: &mut Function, after: Option<Inst>, end: Inst) {
    while let Some(i) = f.layout.prev_inst(end).filter(|&i| Some(i) != after) {
        f.remove_inst(i);
    }
}

/// How many instructions [`remove_emitted`] would remove: those between `after`
/// (or the block's start) and `end`.
pub fn emitted_since(f: &Function, after: Option<Inst>, end: Inst) -> usize {
    let mut n = 0;
    let mut at = f.layout.prev_inst(end);
    while let Some(i) = at.filter(|&i| Some(i) != after) {
        n += 1;
        at = f.layout.prev_inst(i);
    }
    n
}

impl super::ScalarEvolution<'_> {
    /// `e`, an expression invariant in loop `lp`, with each recurrence of a loop
    /// around `lp` written with an existing header parameter of that loop
    /// (LLVM's `SCEVExpander` reusing the phis it finds): within `lp`,
    /// `{s,+,d}<outer>` is `p + (s - s')` for the parameter `p` of `outer`'s header
    /// that evolves as `{s',+,d}<outer>`, or, when it is affine, `d * p + (s - d *
    /// s')` for a parameter `p = {s',+,1}<outer>` (the mirror image for a step of
    /// -1): `i * n + 5` stays that, not `{2n+5,+,n}`. The result has no recurrence, so
    /// an [`Expander`] at `lp`'s preheader can state it; `None` when some
    /// recurrence has no such parameter or belongs to a loop not around `lp`.
    pub fn with_header_parameters(&mut self, e: ExprId, lp: LoopId) -> Option<ExprId> {
        self.with_parameters_at(e, lp, 8)
    }

    fn with_parameters_at(&mut self, e: ExprId, lp: LoopId, depth: u32) -> Option<ExprId> {
        let depth = depth.checked_sub(1)?;
        let (f, loops) = (self.f, self.loops);
        match self.exprs.get(e).clone() {
            Expr::Const { .. } | Expr::Unknown { .. } => Some(e),
            Expr::Add { ops, .. } | Expr::Mul { ops, .. } => {
                let is_add = matches!(self.exprs.get(e), Expr::Add { .. });
                let ops = ops
                    .iter()
                    .map(|&o| self.with_parameters_at(o, lp, depth))
                    .collect::<Option<Vec<_>>>()?;
                Some(if is_add {
                    self.exprs.add(loops, f, &ops, false)
                } else {
                    self.exprs.mul(loops, f, &ops, false)
                })
            }
            Expr::AddRec {
                ty, ops, lp: outer, ..
            } => {
                if outer == lp || !loops.nested_in(lp, outer) {
                    return None;
                }
                let header = loops.get(outer).header;
                // `(p, s', c)`: a parameter `p = {s',+,d'}` with `d = c * d'`:
                // equal tails (c = 1) first, else an affine `p` stepping by one.
                let mut found: Option<(Value, ExprId, ExprId)> = None;
                for &p in f.block_params(header) {
                    if f.value_type(p) != ty {
                        continue;
                    }
                    let r = self.get(p);
                    let Some((l, pops)) = self.exprs.as_addrec(r) else {
                        continue;
                    };
                    if l != outer {
                        continue;
                    }
                    let pops = pops.to_vec();
                    if pops[1..] == ops[1..] {
                        found = Some((p, pops[0], self.exprs.constant(ty, 1)));
                        break;
                    }
                    let unit = self.exprs.as_const(pops[1]).filter(|c| c.abs() == 1);
                    let affine = ops.len() == 2 && pops.len() == 2;
                    if let Some(u) = unit.filter(|_| found.is_none() && affine) {
                        let sign = self.exprs.constant(ty, u);
                        let c = self.exprs.mul(loops, f, &[ops[1], sign], false);
                        found = Some((p, pops[0], c));
                    }
                }
                let (p, start, c) = found?;
                // {s,+,d} = c * p + (s - c * s').
                let scaled = self.exprs.mul(loops, f, &[c, start], false);
                let offset = self.exprs.sub(loops, f, ops[0], scaled);
                let offset = self.with_parameters_at(offset, lp, depth)?;
                let c = self.with_parameters_at(c, lp, depth)?;
                let p = self.exprs.unknown(ty, p);
                let term = self.exprs.mul(loops, f, &[c, p], false);
                Some(self.exprs.add(loops, f, &[term, offset], false))
            }
            _ => None,
        }
    }
}
