//! A division whose dividend is smaller in magnitude than its divisor: `x / y` is
//! 0 and `x % y` is `x` when every value of `x` lies strictly between `-|y|` and
//! `|y|` for every value `y` can take (LLVM's InstSimplify, `simplifyDiv` and
//! `simplifyRem` through `isDivZero`).
//!
//! The value ranges ([`crate::analysis::ranges`]) decide it: the divisor's range
//! must exclude 0, so that no division by zero is removed, and the largest
//! magnitude of the dividend's range must be below the smallest of the divisor's.
//! A truth value taken modulo a computed divisor, `(a <= b) % (k % 12 + 13)`, is
//! the truth value itself: the test becomes loop-invariant when `a` and `b` are,
//! and unswitching can take it out of the loop.

use super::{Action, LazyRanges};
use ir::{BinOp, Function, Value};

/// `a / b` as 0 or `a % b` as `a` (`op` is `sdiv` or `srem`) when the ranges
/// show `|a| < |b|` for all their values.
pub(super) fn smaller_dividend(
    f: &Function,
    ranges: &mut LazyRanges,
    op: BinOp,
    a: Value,
    b: Value,
) -> Option<Action> {
    let divisor = ranges.of(f, b)?;
    let smallest = if divisor.lo > 0 {
        i64::from(divisor.lo)
    } else if divisor.hi < 0 {
        -i64::from(divisor.hi)
    } else {
        return None;
    };
    let dividend = ranges.of(f, a)?;
    let largest = i64::from(dividend.lo)
        .abs()
        .max(i64::from(dividend.hi).abs());
    if largest >= smallest {
        return None;
    }
    match op {
        BinOp::SRem => Some(Action::Value(a)),
        BinOp::SDiv => Some(Action::Const(crate::fold::Const::I(0))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `%q = OP %x, %d` over a truth value `%x = slt %0, %1` and a divisor
    /// `%d = DIVISOR`, returned; `main` calls it on two read integers.
    fn program(op: &str, x: &str, divisor: &str) -> String {
        format!(
            "declare @getint() -> i32\ndeclare @putint(i32) -> void\n\n\
             func @f(i32, i32) -> i32 {{\nbb0(%0: i32, %1: i32):\n  \
             %a = and %1, 7\n  %x = {x}\n  %d = {divisor}\n  %q = {op} %x, %d\n  ret %q\n}}\n\n\
             func @main() -> i32 {{\nbb0:\n  %0 = call @getint()\n  %1 = call @getint()\n  \
             %2 = call @f(%0, %1)\n  call @putint(%2)\n  ret 0\n}}\n"
        )
    }

    #[test]
    fn a_truth_value_modulo_a_larger_divisor_is_itself() {
        let inputs = ["3 9", "9 3", "-5 -12", "7 100"];
        // (x < y) % (y & 7 + 13): the divisor lies in [13, 20].
        let src = program("srem", "slt %0, %1", "add %a, 13");
        for input in inputs {
            let out = same_behaviour(&src, &["instcombine", "dce"], input);
            assert!(!out.contains("srem"), "{out}");
            assert!(out.contains("ret %x") || out.contains("ret %2"), "{out}");
        }
        // The quotient is 0, and so is it by a negative divisor in [-20, -13].
        let src = program("sdiv", "slt %0, %1", "sub -13, %a");
        for input in inputs {
            let out = same_behaviour(&src, &["instcombine", "dce"], input);
            assert!(out.contains("ret 0"), "{out}");
        }
        // A dividend in [-7, 7] by one in [8, 15] too.
        let src = program("srem", "sub 0, %a", "add %a, 8");
        for input in inputs {
            let out = same_behaviour(&src, &["instcombine", "dce"], input);
            assert!(!out.contains("srem"), "{out}");
        }
    }

    #[test]
    fn a_divisor_that_may_be_zero_or_as_small_as_the_dividend_keeps_the_division() {
        for (op, x, divisor, kept) in [
            // The divisor `y & 7` may be 0: the division stays (it traps then).
            ("srem", "slt %0, %1", "add %a, 0", "srem"),
            ("sdiv", "slt %0, %1", "add %a, 0", "sdiv"),
            // The dividend reaches 7, the divisor may be 7.
            ("srem", "add %a, 0", "add %a, 7", "srem"),
            // A divisor in [-1, 6] contains 0.
            ("sdiv", "slt %0, %1", "add %a, -1", "sdiv"),
            // An unknown dividend.
            ("srem", "add %0, 0", "add %a, 13", "srem"),
        ] {
            let out = run(&program(op, x, divisor), &["instcombine"]);
            assert!(out.contains(kept), "{op} {x} {divisor}:\n{out}");
        }
    }
}
