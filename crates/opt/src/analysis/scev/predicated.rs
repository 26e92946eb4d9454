//! Predicated scalar evolution: an `i32` value of a loop as an exact (64-bit)
//! affine recurrence, valid under no-wrap predicates.
//!
//! This is LLVM's `PredicatedScalarEvolution` with its `SCEVWrapPredicate`. The
//! plain analysis treats `i32` arithmetic modulo 2^32, so the sign extension of a
//! sum that may wrap does not distribute over its terms and the value is no exact
//! affine function of the loop's counter. The predicated analysis instead assumes
//! that each operation does not wrap and records the assumption as a predicate
//! ([`NoWrap`]): the operation's mathematical result, an affine recurrence of the
//! loop, stays within `i32` on every iteration. Under every predicate, `sext v`
//! equals the `i64` expression [`Predicated::get`] returns. An affine recurrence
//! is monotone in any affine counter of the loop, so each predicate is a bound on
//! the counter's range ([`Predicated::bounds_in`], [`range_of`]), which loop
//! versioning tests before the loop at run time (LLVM's `LoopVersioning` under the
//! predicates of `PredicatedScalarEvolution`).
//!
//! Described are: constants; values defined outside the loop; header parameters
//! of the loop whose plain evolution is an affine recurrence with a constant step
//! (predicated not to wrap unless the flag proves it); and, of described operands,
//! `add`, `sub`, `mul` by a loop invariant, `shl` by a constant, and exact
//! divisions by a constant (`sdiv`, or `ashr` as instcombine writes an exact
//! division by a power of two), exact when the divisor divides every coefficient
//! of the dividend (LLVM's `SCEVDivision`). Nothing else is: not the product of
//! two recurrences (not affine), loads, calls, or 64-bit values. Constants stay
//! below 2^40 in magnitude, so no `i64` arithmetic on them wraps.

use super::expr::{Expr, ExprId};
use super::ScalarEvolution;
use crate::analysis::LoopId;
use ir::{BinOp, InstKind, Type, Value};
use rustc_hash::FxHashMap;

/// The largest magnitude of a constant in a described expression.
pub const COEFF_LIMIT: i64 = 1 << 40;

/// `lo <= e <= hi` on every iteration of the loop, `e` an `i64` expression (the
/// mathematical value of an `i32` operation that then does not wrap).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct NoWrap {
    pub e: ExprId,
    pub lo: i64,
    pub hi: i64,
}

/// A predicate as a bound on a counter `x`: `lo <= a * x + c <= hi`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Bound {
    pub a: i64,
    pub c: i64,
    pub lo: i64,
    pub hi: i64,
}

/// The predicated scalar evolution of one loop (module documentation).
pub struct Predicated<'s, 'a> {
    pub se: &'s mut ScalarEvolution<'a>,
    lp: LoopId,
    predicates: Vec<NoWrap>,
    memo: FxHashMap<Value, Option<ExprId>>,
}

impl<'s, 'a> Predicated<'s, 'a> {
    /// The predicated analysis of the values of `lp`.
    pub fn new(se: &'s mut ScalarEvolution<'a>, lp: LoopId) -> Self {
        Predicated {
            se,
            lp,
            predicates: Vec::new(),
            memo: FxHashMap::default(),
        }
    }

    /// The predicates the expressions returned so far rely on.
    pub fn predicates(&self) -> &[NoWrap] {
        &self.predicates
    }

    /// Adds a predicate of the caller's own (LLVM's `addPredicate`).
    pub fn add_predicate(&mut self, p: NoWrap) {
        self.predicates.push(p);
    }

    /// Whether `v` is defined outside the loop.
    fn outside(&self, v: Value) -> bool {
        let (f, loops) = (self.se.f, self.se.loops);
        f.value_block(v).is_none_or(|b| !loops.contains(self.lp, b))
    }

    /// The `i64` expression, affine in the loop, that equals `sext v` on every
    /// iteration when every predicate holds, if `v` is described. Operands are
    /// analysed bottom-up with an explicit stack (chains of thousands of
    /// additions must not exhaust the native stack).
    pub fn get(&mut self, v: Value) -> Option<ExprId> {
        let mut stack = vec![(v, false)];
        while let Some((x, operands_done)) = stack.pop() {
            if self.memo.contains_key(&x) {
                continue;
            }
            if let Some(leaf) = self.leaf(x) {
                self.memo.insert(x, leaf);
                continue;
            }
            let f = self.se.f;
            let InstKind::Binary { args, .. } = *f.kind(f.def_inst(x).expect("an instruction"))
            else {
                unreachable!("leaf() answers for everything but binary instructions");
            };
            if operands_done {
                let r = self.combine(x);
                if let Some(e) = r {
                    self.predicates.push(NoWrap {
                        e,
                        lo: i32::MIN.into(),
                        hi: i32::MAX.into(),
                    });
                }
                self.memo.insert(x, r);
            } else {
                stack.push((x, true));
                stack.extend(args.iter().map(|&a| (a, false)));
            }
        }
        self.memo[&v]
    }

    /// The expression of `v` when it needs no operands' (`Some(None)`: none).
    fn leaf(&mut self, v: Value) -> Option<Option<ExprId>> {
        let f = self.se.f;
        if f.value_type(v) != Type::I32 {
            return Some(None);
        }
        if let Some(c) = f.as_iconst(v) {
            return Some(Some(self.se.exprs.constant(Type::I64, c.into())));
        }
        let (loops, lp) = (self.se.loops, self.lp);
        if self.outside(v) {
            let e = self.se.get(v);
            let e = self.se.exprs.sext(loops, f, e);
            return Some(self.bounded(e));
        }
        match f.value_def(v) {
            ir::ValueDef::Param(b, _) if b == loops.get(lp).header => {
                let e = self.se.get(v);
                let Some((l, &[start, step])) = self.se.exprs.as_addrec(e) else {
                    return Some(None);
                };
                if l != lp || self.se.exprs.as_const(step).is_none() {
                    return Some(None);
                }
                let start = self.se.exprs.sext(loops, f, start);
                let step = self.se.exprs.sext(loops, f, step);
                let rec = self.se.exprs.addrec(vec![start, step], lp, true);
                let rec = self.bounded(rec);
                if let (Some(rec), false) = (rec, self.se.exprs.exact(e)) {
                    self.predicates.push(NoWrap {
                        e: rec,
                        lo: i32::MIN.into(),
                        hi: i32::MAX.into(),
                    });
                }
                Some(rec)
            }
            ir::ValueDef::Inst(i) if matches!(f.kind(i), InstKind::Binary { .. }) => None,
            _ => Some(None),
        }
    }

    /// `e` if its constants stay within [`COEFF_LIMIT`].
    fn bounded(&self, e: ExprId) -> Option<ExprId> {
        (self.magnitude(e) <= COEFF_LIMIT).then_some(e)
    }

    /// The largest magnitude of a constant in `e` (at least 1).
    fn magnitude(&self, e: ExprId) -> i64 {
        let x = &self.se.exprs;
        match x.get(e) {
            Expr::Const { c, .. } => c.unsigned_abs().min(i64::MAX as u64) as i64,
            Expr::Add { ops, .. } | Expr::Mul { ops, .. } | Expr::AddRec { ops, .. } => ops
                .iter()
                .map(|&o| self.magnitude(o))
                .max()
                .unwrap_or(1)
                .max(1),
            Expr::SExt(a) | Expr::ZExt(a) | Expr::Trunc(a) => self.magnitude(*a),
            Expr::SMax(a, b) | Expr::UDiv(a, b) => self.magnitude(*a).max(self.magnitude(*b)),
            Expr::Unknown { .. } => 1,
        }
    }

    /// The expression of the binary instruction `v` from its operands' (memoised).
    fn combine(&mut self, v: Value) -> Option<ExprId> {
        let f = self.se.f;
        let InstKind::Binary { op, args: [a, b] } = *f.kind(f.def_inst(v)?) else {
            return None;
        };
        let (x, y) = (self.memo[&a]?, self.memo[&b]?);
        let loops = self.se.loops;
        let lp = self.lp;
        let ex = &mut self.se.exprs;
        let e = match op {
            BinOp::Add => ex.add(loops, f, &[x, y], true),
            BinOp::Sub => {
                let m1 = ex.constant(Type::I64, -1);
                let ny = ex.mul(loops, f, &[m1, y], true);
                ex.add(loops, f, &[x, ny], true)
            }
            BinOp::Mul => {
                let product = i128::from(self.magnitude(x)) * i128::from(self.magnitude(y));
                let ex = &mut self.se.exprs;
                let inv = |e| ex.invariant(f, loops, e, lp);
                if product > i128::from(COEFF_LIMIT) || !(inv(x) || inv(y)) {
                    return None;
                }
                ex.mul(loops, f, &[x, y], true)
            }
            BinOp::Shl => {
                let s = ex.as_const(y).filter(|s| (0..31).contains(s))?;
                if i128::from(self.magnitude(x)) << s > i128::from(COEFF_LIMIT) {
                    return None;
                }
                let p = self.se.exprs.constant(Type::I64, 1 << s);
                self.se.exprs.mul(loops, f, &[x, p], true)
            }
            BinOp::SDiv => {
                let d = ex.as_const(y).filter(|&d| d != 0)?;
                self.exact_div(x, d)?
            }
            BinOp::AShr => {
                let s = ex.as_const(y).filter(|s| (0..31).contains(s))?;
                self.exact_div(x, 1 << s)?
            }
            _ => return None,
        };
        self.bounded(e)
    }

    /// `e / d` when `d` divides every coefficient of `e` (then the quotient is
    /// exact on every iteration), as LLVM's `SCEVDivision`.
    fn exact_div(&mut self, e: ExprId, d: i64) -> Option<ExprId> {
        let (loops, f) = (self.se.loops, self.se.f);
        if d == 1 {
            return Some(e);
        }
        if d == -1 {
            let m1 = self.se.exprs.constant(Type::I64, -1);
            return Some(self.se.exprs.mul(loops, f, &[m1, e], true));
        }
        match self.se.exprs.get(e).clone() {
            Expr::Const { c, .. } => (c % d == 0).then(|| self.se.exprs.constant(Type::I64, c / d)),
            Expr::Mul { ops, .. } => {
                let c = self.se.exprs.as_const(ops[0])?;
                if c % d != 0 {
                    return None;
                }
                let q = self.se.exprs.constant(Type::I64, c / d);
                let mut factors = vec![q];
                factors.extend_from_slice(&ops[1..]);
                Some(self.se.exprs.mul(loops, f, &factors, true))
            }
            Expr::Add { ops, .. } => {
                let qs: Option<Vec<ExprId>> = ops.iter().map(|&o| self.exact_div(o, d)).collect();
                Some(self.se.exprs.add(loops, f, &qs?, true))
            }
            Expr::AddRec { ops, lp, .. } => {
                let qs: Option<Vec<ExprId>> = ops.iter().map(|&o| self.exact_div(o, d)).collect();
                Some(self.se.exprs.addrec(qs?, lp, true))
            }
            _ => None,
        }
    }

    /// `e` as `a * x + c` for the affine recurrence `x` of the loop (an
    /// expression [`Self::get`] returned): `(a, c)` when both are constants
    /// ([`super::Exprs::linear_in`], exact in `i64`).
    pub fn linear_in(&mut self, e: ExprId, x: ExprId) -> Option<(i64, i64)> {
        let (loops, f) = (self.se.loops, self.se.f);
        self.se.exprs.linear_in(loops, f, e, x, self.lp)
    }

    /// Every predicate as a bound on the affine recurrence `x` of the loop, or
    /// `None` when one is not linear in it with constant coefficients.
    pub fn bounds_in(&mut self, x: ExprId) -> Option<Vec<Bound>> {
        let preds = self.predicates.clone();
        preds
            .iter()
            .map(|p| {
                let (a, c) = self.linear_in(p.e, x)?;
                Some(Bound {
                    a,
                    c,
                    lo: p.lo,
                    hi: p.hi,
                })
            })
            .collect()
    }
}

/// The values `[min, max]` within `within` of a counter `x` for which every
/// bound holds, or `None` when none does.
pub fn range_of(bounds: &[Bound], within: (i64, i64)) -> Option<(i64, i64)> {
    let (mut min, mut max) = within;
    for k in bounds {
        let (a, c) = (i128::from(k.a), i128::from(k.c));
        let (lo, hi) = (i128::from(k.lo) - c, i128::from(k.hi) - c);
        let (from, to) = match a.signum() {
            0 if lo <= 0 && 0 <= hi => continue,
            0 => return None,
            1 => (div_ceil(lo, a), div_floor(hi, a)),
            _ => (div_ceil(hi, a), div_floor(lo, a)),
        };
        min = min.max(from.clamp(i64::MIN.into(), i64::MAX.into()) as i64);
        max = max.min(to.clamp(i64::MIN.into(), i64::MAX.into()) as i64);
    }
    (min <= max).then_some((min, max))
}

fn div_floor(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn div_ceil(a: i128, b: i128) -> i128 {
    -div_floor(-a, b)
}

/// The predicated evolution of every `i32` value of every loop of `f` (a
/// function of `m`) as text, for tests: per loop, one line per value defined in
/// it (`?` when not described), then the predicates.
pub fn print(m: &ir::Module, f: &ir::Function) -> String {
    use crate::analysis::LoopForest;
    use ir::analysis::{ControlFlowGraph, DominatorTree};
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops);
    let names = ir::text::Names::new(f);
    let mut out = String::new();
    let mut ids: Vec<_> = loops.loops().map(|(id, _)| id).collect();
    ids.sort_by_key(|&id| names.block_number(loops.get(id).header));
    for id in ids {
        out += &format!("loop {}\n", names.block(loops.get(id).header));
        let mut pse = Predicated::new(&mut se, id);
        for b in f.layout.blocks() {
            if !loops.contains(id, b) {
                continue;
            }
            let insts = f.layout.block_insts(b).filter_map(|i| f.inst_result(i));
            let vals: Vec<_> = f.block_params(b).iter().copied().chain(insts).collect();
            for v in vals {
                if f.value_type(v) != Type::I32 {
                    continue;
                }
                let text = match pse.get(v) {
                    Some(e) => pse.se.display(m, &names, e),
                    None => "?".to_string(),
                };
                out += &format!("{} = {text}\n", names.value(v));
            }
        }
        for p in pse.predicates().to_vec() {
            let e = pse.se.display(m, &names, p.e);
            out += &format!("if {} <= {e} <= {}\n", p.lo, p.hi);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_of_intersects_the_bounds() {
        const LIMIT: i64 = 1 << 30;
        let within = (-LIMIT, LIMIT - 1);
        let k = |a, c, lo, hi| Bound { a, c, lo, hi };
        // 60 * i within i32: i in [-35791394, 35791394], then the ±2^30 limit.
        let r = range_of(&[k(60, 0, i32::MIN.into(), i32::MAX.into())], within);
        assert_eq!(r, Some((-35_791_394, 35_791_394)));
        // 0 <= 3 - i <= 10: i in [-7, 3].
        assert_eq!(range_of(&[k(-1, 3, 0, 10)], within), Some((-7, 3)));
        // A constant out of its bounds: never.
        assert_eq!(range_of(&[k(0, -1, 0, 10)], within), None);
        assert_eq!(range_of(&[], within), Some(within));
        assert_eq!(div_floor(-7, 2), -4);
        assert_eq!(div_ceil(-7, 2), -3);
        assert_eq!(div_ceil(7, 2), 4);
    }
}
