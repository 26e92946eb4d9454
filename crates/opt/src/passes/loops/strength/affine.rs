//! Index expressions as exact add-recurrences of the loop: an `i32` index whose
//! scalar evolution ([`crate::analysis::scev`]) is `{start,+,step}<loop>`, with
//! `start` and `step` invariant sums and products, and whose values provably never
//! wrap, so `base + sext(index) * stride` is `base + (start + k * step) * stride`
//! on iteration `k`, exactly.
//!
//! The evolution is modulo 2^32 (it is built from the `i32` operations as they
//! are), so the proof is separate: interval arithmetic over the expression, the
//! unknowns taking the value ranges of the analysis manager
//! ([`crate::analysis::ranges`]) and the iteration number `k` the interval
//! `[0, last]`, `last` the tighter of two bounds: the scalar evolution's constant
//! maximum back-edge-taken count of the loop ([`ScalarEvolution::max_count`]:
//! `99` for `i = 0; do ... while (++i != 100)`, which the counter's range does not
//! bound), and the one the loop's counter gives (its header parameter steps by `d`
//! through values within its range `[lo, hi]`, so `k * |d| <= hi - lo`, each step
//! exact when `hi - lo + |d| < 2^32`; a bound read at run time that a branch
//! clamps has a range but no constant count). When the mathematical value of the expression
//! lies in `i32` on every iteration, it is the sign-extended index, whatever wrap
//! the instructions computing it went through (they agree modulo 2^32). The same
//! intervals keep the start and the step, emitted in the preheader with `i32`
//! arithmetic, exact. Recurrences of the loops around are first written with
//! their header parameters ([`ScalarEvolution::with_header_parameters`]), whose
//! ranges the manager knows. This is the no-wrap reasoning of LLVM's
//! `ScalarEvolution::getSignedRange` (ranges of add-recurrences from the loop's
//! maximum trip count) applied to strength reduction's addresses.
//!
//! The start is split into a constant and the rest (`{n + 3,+,1}` is `n + 3`, the
//! rest `n`), so indices differing by a constant share one expression: `a[i][0]`
//! to `a[i][14]` of an unrolled row, `in[(i + 1) * n + j]` and `in[i * n + j]`
//! (that differ by `n`, not a constant, do not).

use super::recurrence::expandable;
use crate::analysis::ranges::Ranges;
use crate::analysis::scev::{Expr, ExprId, ScalarEvolution};
use crate::analysis::{Counter, LoopId};
use ir::{Type, Value};

/// `start + c + k * step` on iteration `k`: the index of a gep, exactly.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ExactIndex {
    /// The start without its constant term, invariant, within `i32` (an expression
    /// of the scalar evolution's arena).
    pub start: ExprId,
    /// The step, invariant, within `i32`, not zero.
    pub step: ExprId,
    /// The constant term of the start.
    pub offset: i64,
}

/// The exact indices of one counted loop.
pub struct ExactIndices<'s, 'a> {
    pub se: &'s mut ScalarEvolution<'a>,
    ranges: &'s Ranges,
    lp: LoopId,
    /// The largest iteration number (from 0), when the scalar evolution's
    /// maximum count or the counter's range bounds it.
    last: Option<i64>,
}

const I32: (i64, i64) = (i32::MIN as i64, i32::MAX as i64);

fn within_i32((lo, hi): (i64, i64)) -> bool {
    lo >= I32.0 && hi <= I32.1
}

/// At most this many nested operations in an expression whose interval is taken.
const MAX_DEPTH: u32 = 16;

impl<'s, 'a> ExactIndices<'s, 'a> {
    /// The exact indices of loop `lp`, counted by `counter`; there are none unless
    /// the loop's maximum count or the counter's value range bounds the
    /// iterations (module documentation).
    pub fn new(
        se: &'s mut ScalarEvolution<'a>,
        ranges: &'s Ranges,
        lp: LoopId,
        counter: &Counter,
        max_count: Option<i64>,
    ) -> Self {
        let d = i64::from(counter.step).abs();
        let last = ranges.of(se.f, counter.param).and_then(|r| {
            let span = i64::from(r.hi) - i64::from(r.lo);
            (d != 0 && span + d < 1 << 32).then(|| span / d)
        });
        let last = last.into_iter().chain(max_count).min();
        ExactIndices {
            se,
            ranges,
            lp,
            last,
        }
    }

    /// `index` as an exact recurrence of the loop, if it is one.
    pub fn exact(&mut self, index: Value) -> Option<ExactIndex> {
        let last = self.last?;
        let se = &mut *self.se;
        if se.f.value_type(index) != Type::I32 {
            return None;
        }
        let e = se.get(index);
        let (l, &[start, step]) = se.exprs.as_addrec(e)? else {
            return None;
        };
        if l != self.lp {
            return None;
        }
        let start = se.with_header_parameters(start, self.lp)?;
        let step = se.with_header_parameters(step, self.lp)?;
        let usable = |e: ExprId| se.invariant(e, self.lp) && expandable(&se.exprs, e);
        if !(usable(start) && usable(step)) {
            return None;
        }
        let s = self.interval(start, MAX_DEPTH)?;
        let d = self.interval(step, MAX_DEPTH)?;
        let reach = (last.checked_mul(d.0)?.min(0), last.checked_mul(d.1)?.max(0));
        let values = (s.0.checked_add(reach.0)?, s.1.checked_add(reach.1)?);
        if !within_i32(values) || !within_i32(d) {
            return None;
        }
        let (start, offset) = self.split_start(start);
        within_i32(self.interval(start, MAX_DEPTH)?).then_some(ExactIndex {
            start,
            step,
            offset,
        })
    }

    /// The counter's start split as [`Self::split_start`] does, when it is an
    /// expandable expression whose parts lie in `i32`; else the start value
    /// itself with no constant term.
    pub fn counter_start(&mut self, counter: &Counter) -> (ExprId, i64) {
        let e = self.se.get(counter.init);
        let split = self.se.with_header_parameters(e, self.lp).and_then(|e| {
            if !expandable(&self.se.exprs, e) || !within_i32(self.interval(e, MAX_DEPTH)?) {
                return None;
            }
            let (rest, c) = self.split_start(e);
            within_i32(self.interval(rest, MAX_DEPTH)?).then_some((rest, c))
        });
        split.unwrap_or_else(|| (self.se.exprs.unknown(Type::I32, counter.init), 0))
    }

    /// `(rest, c)` with `e = rest + c` for the constant term `c` of `e` (a
    /// constant is all constant term).
    pub fn split_start(&mut self, e: ExprId) -> (ExprId, i64) {
        let se = &mut *self.se;
        if let Some(c) = se.exprs.as_const(e) {
            return (se.exprs.constant(Type::I32, 0), c);
        }
        let (loops, f) = (se.loops, se.f);
        se.exprs.split_constant(loops, f, e)
    }

    /// The values `e` (an `i32` expression of invariants and recurrences of the
    /// loop) takes as an exact integer, with each unknown its sign-extended value;
    /// `None` when some unknown has no range or a bound leaves `i64`.
    fn interval(&self, e: ExprId, depth: u32) -> Option<(i64, i64)> {
        let depth = depth.checked_sub(1)?;
        match self.se.exprs.get(e) {
            Expr::Const { ty: Type::I32, c } => Some((*c, *c)),
            Expr::Unknown { ty: Type::I32, v } => {
                let r = self.ranges.of(self.se.f, *v)?;
                Some((r.lo.into(), r.hi.into()))
            }
            Expr::Add {
                ty: Type::I32, ops, ..
            } => ops.iter().try_fold((0i64, 0i64), |acc, &o| {
                let x = self.interval(o, depth)?;
                Some((acc.0.checked_add(x.0)?, acc.1.checked_add(x.1)?))
            }),
            Expr::Mul {
                ty: Type::I32, ops, ..
            } => ops.iter().try_fold((1i64, 1i64), |acc, &o| {
                let x = self.interval(o, depth)?;
                let p = [
                    acc.0.checked_mul(x.0)?,
                    acc.0.checked_mul(x.1)?,
                    acc.1.checked_mul(x.0)?,
                    acc.1.checked_mul(x.1)?,
                ];
                Some((*p.iter().min()?, *p.iter().max()?))
            }),
            _ => None,
        }
    }
}
