//! Index expressions as exact affine functions of a loop counter: `a * i + b + c`
//! with `a` and `c` constants and `b` a loop-invariant value, proven free of
//! wrap-around by interval arithmetic.
//!
//! Interval facts come from counted loops ([`Counter`]): a counter that steps by a
//! constant `d > 0` from `init` while its next value is below `bound` takes values
//! in `[init, bound - 1]` (up to `bound - 1 + d` when the latch tests the counter
//! before the step, one more for `<=`; the mirror image for `d < 0`), with the intervals of
//! `init` and `bound` found the same way (constants, or counters of outer loops). An
//! addition, subtraction, multiplication or shift by a constant whose operand
//! intervals keep the result within `i32` computes the exact integer, so a chain of
//! them is the exact affine value and `base + sext(index) * stride` can be split into
//! an invariant base, a pointer that advances by `a * stride` per iteration and a
//! constant offset.
//!
//! A header parameter other than the counter that receives, from the latch, an affine
//! value `a * i + b + c` of the current counter, and on entry the value that formula
//! gives one step earlier, holds `a * i + b + c - a * step` on every iteration (value
//! numbering and PRE leave such parameters behind: `ij` carried over from the previous
//! iteration's `(i + 1) * n + j`).

use crate::analysis::{Counter, RotatedLoop};
use ir::{BinOp, Function, InstKind, Value, ValueDef};
use rustc_hash::FxHashMap;

/// `scale * i + invariant + offset` for the loop's counter `i`, computed exactly.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Affine {
    pub scale: i64,
    pub invariant: Option<Value>,
    pub offset: i64,
}

/// The counted loops of a function, for interval facts.
pub struct Ranges {
    counters: FxHashMap<Value, Counter>,
}

const I32: (i64, i64) = (i32::MIN as i64, i32::MAX as i64);

fn in_i32((lo, hi): (i64, i64)) -> Option<(i64, i64)> {
    (lo >= I32.0 && hi <= I32.1 && lo <= hi).then_some((lo, hi))
}

impl Ranges {
    /// The intervals the counters `counters` give.
    pub fn new(counters: impl IntoIterator<Item = Counter>) -> Self {
        let counters = counters.into_iter().map(|c| (c.param, c)).collect();
        Ranges { counters }
    }

    /// The interval of `v`'s values, when it is known and every operation computing
    /// it is exact.
    pub fn range(&self, f: &Function, v: Value) -> Option<(i64, i64)> {
        self.range_at(f, v, 12)
    }

    fn range_at(&self, f: &Function, v: Value, depth: u32) -> Option<(i64, i64)> {
        if let Some(c) = f.as_iconst(v) {
            return Some((i64::from(c), i64::from(c)));
        }
        let depth = depth.checked_sub(1)?;
        if let Some(c) = self.counters.get(&v) {
            let init = self.range_at(f, c.init, depth)?;
            let bound = self.range_at(f, c.bound, depth)?;
            // Every value after the first passed the test as `next` (then it is
            // below the bound, or at it for an inclusive test), or is one step
            // past a value that passed it (when the latch tests the counter
            // before its step); the counter moves toward the bound without
            // wrapping ([`Counter`]).
            let d = i64::from(c.step);
            let beyond = if c.tests_next { 0 } else { d.abs() } - 1 + i64::from(c.inclusive);
            return in_i32(if d > 0 {
                (init.0, init.1.max(bound.1 + beyond))
            } else {
                (init.0.min(bound.0 - beyond), init.1)
            });
        }
        let InstKind::Binary { op, args: [x, y] } = *f.kind(f.def_inst(v)?) else {
            return None;
        };
        let (a, b) = (self.range_at(f, x, depth)?, self.range_at(f, y, depth)?);
        let r = match op {
            BinOp::Add => (a.0 + b.0, a.1 + b.1),
            BinOp::Sub => (a.0 - b.1, a.1 - b.0),
            BinOp::Mul => {
                let p = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
                (*p.iter().min()?, *p.iter().max()?)
            }
            BinOp::Shl if b.0 == b.1 && (0..31).contains(&b.0) => (a.0 << b.0, a.1 << b.0),
            _ => return None,
        };
        in_i32(r)
    }

    /// `v` as an exact affine function of the counter of loop `l`, whose blocks
    /// `in_loop` tells (parameters of its header other than the counter included).
    pub fn affine(&self, f: &Function, l: &LoopCounter, v: Value) -> Option<Affine> {
        self.affine_at(f, l, v, 12)
    }

    fn affine_at(&self, f: &Function, l: &LoopCounter, v: Value, depth: u32) -> Option<Affine> {
        let iv = l.counter;
        let depth = depth.checked_sub(1)?;
        if v == iv.param {
            return Some(Affine {
                scale: 1,
                invariant: None,
                offset: 0,
            });
        }
        if let Some(c) = f.as_iconst(v) {
            return Some(Affine {
                scale: 0,
                invariant: None,
                offset: i64::from(c),
            });
        }
        if !(l.in_loop)(v) {
            let (invariant, offset) = self.peel_constant(f, v);
            return Some(Affine {
                scale: 0,
                invariant: Some(invariant),
                offset,
            });
        }
        if let ValueDef::Param(b, k) = f.value_def(v) {
            return self.carried(f, l, b, k as usize, depth);
        }
        let InstKind::Binary { op, args: [x, y] } = *f.kind(f.def_inst(v)?) else {
            return None;
        };
        // The operation itself must be exact over all the values it can see.
        self.range(f, v)?;
        let ax = self.affine_at(f, l, x, depth)?;
        let constant = |w: Value| f.as_iconst(w).map(i64::from);
        match op {
            BinOp::Add => {
                let ay = self.affine_at(f, l, y, depth)?;
                let invariant = match (ax.invariant, ay.invariant) {
                    (Some(_), Some(_)) => return None,
                    (a, b) => a.or(b),
                };
                Some(Affine {
                    scale: ax.scale + ay.scale,
                    invariant,
                    offset: ax.offset + ay.offset,
                })
            }
            BinOp::Sub => Some(Affine {
                offset: ax.offset - constant(y)?,
                ..ax
            }),
            BinOp::Mul | BinOp::Shl if ax.invariant.is_none() => {
                let k = constant(y)?;
                let k = if op == BinOp::Shl { 1i64 << k } else { k };
                Some(Affine {
                    scale: ax.scale * k,
                    invariant: None,
                    offset: ax.offset * k,
                })
            }
            _ => None,
        }
    }

    /// `(x, c)` when `v` is the exact `x + c` for a constant `c`, else `(v, 0)`.
    pub fn peel_constant(&self, f: &Function, v: Value) -> (Value, i64) {
        let def = f.def_inst(v).map(|i| f.kind(i));
        if let Some(InstKind::Binary {
            op: BinOp::Add,
            args: [x, y],
        }) = def
        {
            if let (Some(c), Some(_)) = (f.as_iconst(*y), self.range(f, v)) {
                return (*x, i64::from(c));
            }
        }
        (v, 0)
    }

    /// Parameter `k` of the loop's header as an affine function of the counter, when
    /// it carries an affine value from one iteration to the next (module
    /// documentation).
    fn carried(
        &self,
        f: &Function,
        l: &LoopCounter,
        block: ir::Block,
        k: usize,
        depth: u32,
    ) -> Option<Affine> {
        if block != l.shape.header {
            return None;
        }
        let iv = l.counter;
        let next = self.affine_at(f, l, l.shape.next_args(f)[k], depth)?;
        let init = self.affine_at(f, l, l.shape.init_args(f)[k], depth)?;
        let start = i64::from(f.as_iconst(iv.init)?);
        let carried = Affine {
            offset: next.offset - next.scale * i64::from(iv.step),
            ..next
        };
        let expected = Affine {
            scale: 0,
            offset: carried.offset + carried.scale * start,
            ..carried
        };
        (init == expected).then_some(carried)
    }
}

/// A rotated loop with its counter, as [`Ranges::affine`] needs it.
pub struct LoopCounter<'a> {
    pub shape: &'a RotatedLoop,
    pub counter: &'a Counter,
    /// Whether a value is defined inside the loop.
    pub in_loop: &'a dyn Fn(Value) -> bool,
}
