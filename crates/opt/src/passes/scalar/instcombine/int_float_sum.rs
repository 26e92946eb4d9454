//! A float sum or difference of converted integers done in integers:
//! `sitofp x + C` as `sitofp (x + C)` and `sitofp x - sitofp y` as
//! `sitofp (x - y)`, when the float operation is exact (LLVM's InstCombine
//! `foldFBinOpOfIntCasts`).
//!
//! Every integer of magnitude at most 2^24 is an `f32`. When the operands' value
//! ranges ([`crate::analysis::ranges`]) and the range of the result all lie
//! within ±2^24, the conversions are exact, the exact sum is an `f32`, so the
//! float operation returns it exactly, and the integer operation does not wrap:
//! both forms give the same value. A zero result is `+0.0` both ways (an exact
//! zero sum of nonzero operands rounds to `+0.0`; `+0.0 + +0.0` is `+0.0`), and
//! a constant `C` must be an integer (`-0.0` counts as 0: `x + -0.0` is `x`
//! for every converted `x`, `+0.0` included), except `-0.0 - sitofp y`: for
//! `y = 0` that is `-0.0`, where `sitofp (0 - y)` is `+0.0`.
//!
//! The integer form feeds integer rules: `sitofp x + 1.0 != 0.0` becomes
//! `sitofp (x + 1) != 0.0`, which [`super::int_to_float_compare`] turns into
//! `x + 1 != 0`, which the ranges of `x` may decide. A conversion used elsewhere
//! is left alone: the rewrite would add an instruction beside it.

use super::{Action, LazyRanges};
use ir::{BinOp, Function, Inst, InstKind, Type, UnOp, Value};

/// The largest magnitude up to which every integer is an `f32`.
const EXACT: i64 = 1 << 24;

/// `a op b` (`op` a float addition or subtraction) as the conversion of an
/// integer addition or subtraction, inserted before `i`.
pub(super) fn int_float_sum(
    f: &mut Function,
    ranges: &mut LazyRanges,
    i: Inst,
    op: BinOp,
    a: Value,
    b: Value,
) -> Option<Action> {
    let int_op = match op {
        BinOp::FAdd => BinOp::Add,
        BinOp::FSub => BinOp::Sub,
        _ => return None,
    };
    if int_op == BinOp::Sub
        && f.as_fconst(a)
            .is_some_and(|c| c == 0.0 && c.is_sign_negative())
    {
        return None;
    }
    let (x, y) = (int_operand(f, a)?, int_operand(f, b)?);
    // At least one conversion, each used only here.
    if !matches!(
        (x, y),
        (Operand::Converted(_), _) | (_, Operand::Converted(_))
    ) {
        return None;
    }
    let mut bounds = |o: Operand| -> Option<(i64, i64)> {
        let (lo, hi) = match o {
            Operand::Constant(c) => (i64::from(c), i64::from(c)),
            Operand::Converted(v) => {
                let r = ranges.of(f, v)?;
                (i64::from(r.lo), i64::from(r.hi))
            }
        };
        (lo >= -EXACT && hi <= EXACT).then_some((lo, hi))
    };
    let ((xl, xh), (yl, yh)) = (bounds(x)?, bounds(y)?);
    let (lo, hi) = match int_op {
        BinOp::Add => (xl + yl, xh + yh),
        _ => (xl - yh, xh - yl),
    };
    if lo < -EXACT || hi > EXACT {
        return None;
    }
    let value = |f: &mut Function, o: Operand| match o {
        Operand::Constant(c) => f.iconst(c),
        Operand::Converted(v) => v,
    };
    let args = [value(f, x), value(f, y)];
    let sum = f.insert_inst_before(i, InstKind::Binary { op: int_op, args }, Type::I32);
    let sum = f.inst_result(sum).expect("an addition has a result");
    Some(Action::Kind(InstKind::Unary {
        op: UnOp::SIToFP,
        arg: sum,
    }))
}

/// An operand of the float operation as an integer.
#[derive(Clone, Copy)]
enum Operand {
    /// An integral float constant, as that integer.
    Constant(i32),
    /// `sitofp v`, used only by the float operation: `v`.
    Converted(Value),
}

fn int_operand(f: &Function, v: Value) -> Option<Operand> {
    if let Some(c) = f.as_fconst(v) {
        let k = c as i32;
        return (k as f32 == c && i64::from(k).abs() <= EXACT).then_some(Operand::Constant(k));
    }
    let d = f.def_inst(v)?;
    match *f.kind(d) {
        InstKind::Unary {
            op: UnOp::SIToFP,
            arg,
        } if f.users(v).len() == 1 => Some(Operand::Converted(arg)),
        _ => None,
    }
}
