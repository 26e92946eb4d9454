//! Values an edge pins to one constant: below the `else` edge of `br v, ..` on an
//! integer that is not a comparison, `v` is 0; below the edge on which `x == c`
//! holds (the `then` edge of `eq x, c`, the `else` edge of `ne x, c`), `x` is `c`.
//! So does a chain of tests confining `x` to one value (`x <= 0 || x > 1` false:
//! `x` is 1), as the intervals of [`super::facts`] show (LLVM's
//! `LazyValueInfo` gives `CorrelatedValuePropagation` such single-value ranges,
//! which it replaces by their constant).
//! An integer pinned to a constant pins the operand of its definition when that is
//! an invertible operation with a constant (`y + k`, `y - k`, `k - y`, `y ^ k`,
//! wrapping), and so on up the chain.
//!
//! A pinned `x & m == 0` also says that the bits `m` of `x` are zero, which makes a
//! division of `x` by a power of two those bits cover exact: an arithmetic shift
//! (`if (n % 2 == 0) n = n / 2;` shifts), and its remainder 0 (LLVM's known bits
//! from dominating conditions).
//!
//! This is GVN's propagation of equalities (LLVM's `propagateEquality`, which
//! replaces a value by the constant it was compared equal to), extended through
//! invertible arithmetic as predicate-based value numbering does. Its typical
//! use is the exit of a counting-down loop `while (n) { ..; n = n - 1; }`: on the
//! exit edge `n - 1` is 0, so the last iteration's `n` is 1.

use super::facts::Fact;
use ir::{BinOp, CmpOp, Function, InstKind, Type, Value};

/// The values `fact` pins to a constant, each with its constant.
pub fn pinned_by(f: &Function, fact: &Fact) -> Vec<(Value, i32)> {
    let first = match (fact.cmp, fact.cond) {
        (Some((op, a, b)), _) if is_equality(op, fact.truth) => {
            match (f.as_iconst(a), f.as_iconst(b)) {
                (None, Some(c)) => Some((a, c)),
                (Some(c), None) => Some((b, c)),
                _ => None,
            }
        }
        (None, Some(v)) if !fact.truth && f.as_iconst(v).is_none() => Some((v, 0)),
        _ => None,
    };
    first.map_or_else(Vec::new, |(v, c)| pinned_to(f, v, c))
}

/// `v` pinned to `c` (when an `i32`), and the operands that pins in turn.
pub fn pinned_to(f: &Function, v: Value, c: i32) -> Vec<(Value, i32)> {
    let mut out = Vec::new();
    let mut next = Some((v, c)).filter(|&(v, _)| f.value_type(v) == Type::I32);
    while let Some((v, c)) = next {
        out.push((v, c));
        next = operand_pinned_by(f, v, c);
    }
    out
}

/// The low bits pinned values show to be zero: `and x, m` pinned to 0, with `m`
/// a constant, clears the bits `m` of `x`. Each such `x` with the mask.
pub fn zero_bits_by(f: &Function, pinned: &[(Value, i32)]) -> Vec<(Value, i32)> {
    pinned
        .iter()
        .filter(|&&(_, c)| c == 0)
        .filter_map(|&(v, _)| match *f.kind(f.def_inst(v)?) {
            InstKind::Binary {
                op: BinOp::And,
                args: [a, b],
            } => match (f.as_iconst(a), f.as_iconst(b)) {
                (None, Some(m)) => Some((a, m)),
                (Some(m), None) => Some((b, m)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// `x / 2^s` (or `x % 2^s`) when the low `s` bits of `x` are known zero
/// (`zero` is the mask of known-zero bits): the division is exact, an arithmetic
/// shift right (the remainder is 0). The replacement instruction kind, or the
/// constant the remainder is.
pub fn exact_division(
    f: &mut Function,
    k: &InstKind,
    zero: impl Fn(Value) -> Option<i32>,
) -> Option<Result<InstKind, Value>> {
    let InstKind::Binary {
        op: op @ (BinOp::SDiv | BinOp::SRem),
        args: [x, d],
    } = *k
    else {
        return None;
    };
    let d = f.as_iconst(d)?;
    if d <= 1 || d.count_ones() != 1 {
        return None;
    }
    let low = d - 1;
    if zero(x)? & low != low {
        return None;
    }
    Some(if op == BinOp::SDiv {
        let s = f.iconst(d.trailing_zeros() as i32);
        Ok(InstKind::Binary {
            op: BinOp::AShr,
            args: [x, s],
        })
    } else {
        Err(f.iconst(0))
    })
}

/// Whether a comparison `op` that is `truth` says its operands are equal.
fn is_equality(op: CmpOp, truth: bool) -> bool {
    matches!((op, truth), (CmpOp::Eq, true) | (CmpOp::Ne, false))
}

/// When `v == c` and `v` is an invertible operation of one non-constant operand
/// with a constant, that operand and the constant it equals.
fn operand_pinned_by(f: &Function, v: Value, c: i32) -> Option<(Value, i32)> {
    let InstKind::Binary { op, args: [a, b] } = *f.kind(f.def_inst(v)?) else {
        return None;
    };
    let (ka, kb) = (f.as_iconst(a), f.as_iconst(b));
    match (op, ka, kb) {
        (BinOp::Add, None, Some(k)) => Some((a, c.wrapping_sub(k))),
        (BinOp::Add, Some(k), None) => Some((b, c.wrapping_sub(k))),
        (BinOp::Sub, None, Some(k)) => Some((a, c.wrapping_add(k))),
        (BinOp::Sub, Some(k), None) => Some((b, k.wrapping_sub(c))),
        (BinOp::Xor, None, Some(k)) => Some((a, c ^ k)),
        (BinOp::Xor, Some(k), None) => Some((b, c ^ k)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    #[test]
    fn the_exit_of_a_count_down_pins_the_last_iterations_counter() {
        // `while (n) { last = n; n = n - 1; }`: on the exit edge `n - 1` is 0, so the
        // last iteration's `n` is 1 and `n * 5` is 5.
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  br %0, bb1(%0), bb3
bb1(%1: i32):
  %2 = add %1, -1
  br %2, bb1(%2), bb2
bb2:
  %3 = mul %1, 5
  call @putint(%3)
  call @putint(%2)
  ret 0
bb3:
  ret 1
}
"#;
        let out = same_behaviour(src, &["condprop"], "7");
        assert!(
            out.contains("mul 1, 5") && out.contains("call @putint(0)"),
            "{out}"
        );
    }

    #[test]
    fn an_equality_pins_through_invertible_arithmetic() {
        // `(x ^ 5) - 3 == 9` holds only for x = 12 ^ 5 = 9; `12 - x` then is 3.
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = xor %0, 5
  %2 = sub %1, 3
  %3 = ne %2, 9
  br %3, bb2, bb1
bb1:
  %4 = sub 12, %0
  call @putint(%4)
  call @putint(%1)
  ret 0
bb2:
  call @putint(%0)
  ret 1
}
"#;
        for input in ["9", "4"] {
            same_behaviour(src, &["condprop"], input);
        }
        let out = run(src, &["condprop"]);
        assert!(
            out.contains("sub 12, 9") && out.contains("call @putint(12)"),
            "{out}"
        );
        // Where `x == 9` does not hold, nothing is pinned.
        assert!(out.contains("call @putint(%0)"), "{out}");
    }

    #[test]
    fn a_division_of_a_number_known_even_is_a_shift() {
        // `if (n % 2 == 0) putint(n / 2, n % 2, n / 4)`: n / 2 is exact (a shift), n % 2
        // is 0, n / 4 is not known exact; on the odd side nothing changes.
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = and %0, 1
  %2 = eq %1, 0
  br %2, bb1, bb2
bb1:
  %3 = sdiv %0, 2
  %4 = srem %0, 2
  %5 = sdiv %0, 4
  call @putint(%3)
  call @putint(%4)
  call @putint(%5)
  ret 0
bb2:
  %6 = sdiv %0, 2
  call @putint(%6)
  ret 1
}
"#;
        for input in ["-6", "10", "-7", "7", "-2147483648"] {
            same_behaviour(src, &["condprop"], input);
        }
        let out = run(src, &["condprop"]);
        assert!(
            out.contains("ashr %0, 1") && out.contains("call @putint(0)"),
            "{out}"
        );
        assert!(
            out.contains("sdiv %0, 4") && out.contains("= sdiv %0, 2"),
            "{out}"
        );
    }

    #[test]
    fn a_true_condition_or_a_product_pins_nothing() {
        // Below the `then` edge `x` is only non-zero; `x * 2 == 4` has two
        // solutions modulo 2^32 (2 and 2^31 + 2), so `x` stays.
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  br %0, bb1, bb3
bb1:
  %1 = mul %0, 2
  %2 = eq %1, 4
  br %2, bb2, bb3
bb2:
  call @putint(%0)
  ret 0
bb3:
  ret 1
}
"#;
        assert_eq!(run(src, &["condprop"]).trim(), run(src, &[]).trim());
    }

    /// `x <= 0` false then `x > 1` false leave `x` exactly 1 (the depth test of a
    /// recursion `if (d <= 0 || d > 1) return ..;`): `x - 2` below is -1, and the
    /// operand of `x = y + 3` is pinned too. One bound alone pins nothing, nor do
    /// two leaving two values.
    #[test]
    fn tests_confining_a_value_to_one_constant_pin_it() {
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = add %0, 3
  %2 = sle %1, 0
  br %2, bb3, bb1
bb1:
  %3 = sub %1, 2
  call @putint(%3)
  %4 = sgt %1, 1
  br %4, bb3, bb2
bb2:
  %5 = sub %1, 2
  call @putint(%5)
  call @putint(%0)
  ret 0
bb3:
  ret 1
}
"#;
        for input in ["-2", "-3", "5", "-9"] {
            let out = same_behaviour(src, &["condprop"], input);
            assert!(
                out.contains("%5 = sub 1, 2") && out.contains("call @putint(-2)"),
                "{out}"
            );
            assert!(out.contains("%3 = sub %1, 2"), "{out}");
        }
        let two_values = src.replace("sgt %1, 1", "sgt %1, 2");
        let out = same_behaviour(&two_values, &["condprop"], "-1");
        assert!(
            out.contains("%5 = sub %1, 2") && out.contains("call @putint(%0)"),
            "{out}"
        );
    }
}
