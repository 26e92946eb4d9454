//! A float comparison of a converted integer with a constant, `sitofp x < C`, as
//! an integer comparison of `x` (LLVM's InstCombine `foldFCmpIntToFPConst`).
//!
//! Conversion to `f32` rounds to nearest (ties to even), which is monotone: if
//! `x <= y` then `sitofp x <= sitofp y`. So the integers whose conversion is at
//! least `C` are all those from some threshold up, and likewise for greater than
//! `C`; the two thresholds are found by bisection over the 32-bit integers, with
//! the conversion itself as the oracle, so the rounding above 2^24 (where
//! `sitofp 16777217 == 16777216.0`) is taken into account exactly:
//!
//! - `sitofp x < C` is `x < ge`, where `ge` is the least `x` with `sitofp x >= C`;
//! - `sitofp x <= C` is `x < gt`, with `gt` the least `x` with `sitofp x > C`;
//! - `>=` and `>` are their negations, `x >= ge` and `x >= gt`;
//! - `==` holds exactly for `ge <= x < gt`: when that is one integer, `x == ge`;
//!   when it is none, never (`!=`, always). Wider sets are left as they are.
//!
//! A threshold beyond the integers makes the comparison constant. A NaN `C` is
//! left alone (the conversion is never NaN, so the ordered comparisons are false
//! and `!=` true, which [`crate::fold`] does not need this rule for).

use super::Action;
use crate::fold::Const;
use ir::{CmpOp, Function, InstKind, UnOp, Value};

/// `op (sitofp x), c` as an integer comparison of `x`, or its constant result.
pub(super) fn int_to_float_compare(
    f: &mut Function,
    op: CmpOp,
    a: Value,
    b: Value,
) -> Option<Action> {
    let c = f.as_fconst(b)?;
    if c.is_nan() || !op.is_float() {
        return None;
    }
    let InstKind::Unary {
        op: UnOp::SIToFP,
        arg: x,
    } = *f.kind(f.def_inst(a)?)
    else {
        return None;
    };
    // Thresholds as i64: one past `i32::MAX` when no integer reaches them.
    let ge = least(|v| v as f32 >= c);
    let gt = least(|v| v as f32 > c);
    let mut below = |t: i64, inverse: bool| -> Action {
        if t > i64::from(i32::MAX) {
            Action::Const(Const::I(i32::from(!inverse)))
        } else if t == i64::from(i32::MIN) {
            Action::Const(Const::I(i32::from(inverse)))
        } else {
            let t = f.iconst(t as i32);
            let op = if inverse { CmpOp::Sge } else { CmpOp::Slt };
            Action::Kind(InstKind::Cmp { op, args: [x, t] })
        }
    };
    Some(match op {
        CmpOp::FLt => below(ge, false),
        CmpOp::FGe => below(ge, true),
        CmpOp::FLe => below(gt, false),
        CmpOp::FGt => below(gt, true),
        CmpOp::FEq | CmpOp::FNe => {
            let equal = op == CmpOp::FEq;
            match gt - ge {
                0 => Action::Const(Const::I(i32::from(!equal))),
                1 => {
                    let t = f.iconst(ge as i32);
                    let op = if equal { CmpOp::Eq } else { CmpOp::Ne };
                    Action::Kind(InstKind::Cmp { op, args: [x, t] })
                }
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// The least 32-bit integer for which `holds` (monotone: false, then true), as
/// an i64; `i32::MAX + 1` when it holds for none.
fn least(holds: impl Fn(i32) -> bool) -> i64 {
    let (mut lo, mut hi) = (i64::from(i32::MIN), i64::from(i32::MAX) + 1);
    // Invariant: it fails below `lo` and holds from `hi` (one past the end holds).
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if holds(mid as i32) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::least;

    #[test]
    fn thresholds_follow_the_rounding_of_the_conversion() {
        assert_eq!(least(|v| v as f32 >= 0.0), 0);
        assert_eq!(least(|v| v as f32 > 0.0), 1);
        assert_eq!(least(|v| v as f32 >= 2.5), 3);
        assert_eq!(least(|v| v as f32 > -2.5), -2);
        // 16777217 rounds to 16777216.0 (ties to even), 16777218 is exact.
        assert_eq!(least(|v| v as f32 > 16777216.0), 16777218);
        assert_eq!(least(|v| v as f32 >= 16777216.0), 16777216);
        // Beyond the integers: never, or from the first one.
        assert_eq!(least(|v| v as f32 >= 3e9), i64::from(i32::MAX) + 1);
        assert_eq!(least(|v| v as f32 > -3e9), i64::from(i32::MIN));
        // Near 2^31 floats are 128 apart: from 2^31 - 64 (a tie, to the even
        // 2^31) every integer converts to 2^31, and none above it.
        assert_eq!(least(|v| v as f32 > 2147483648.0), i64::from(i32::MAX) + 1);
        assert_eq!(least(|v| v as f32 >= 2147483648.0), 2147483584);
    }
}
