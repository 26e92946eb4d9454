//! Static magnitude bounds of expressions: how floats are kept finite and float-to-int
//! conversions in range.
//!
//! Integers wrap (sysyc and `gcc -fwrapv` agree), so only floats need care: an
//! infinity or NaN would make outputs depend on details C leaves open (the sign of a
//! NaN, the result of converting it), and converting a float outside the `int` range
//! is undefined. The rules:
//!
//! - every stored float (variable, array element, parameter, return value) has
//!   magnitude at most [`FLOAT_STORE`]: the printer clamps a store whose value's
//!   bound exceeds it;
//! - every float subexpression has a bound below [`FLOAT_EXPR_LIMIT`] (so no
//!   operation overflows), given that `int` values are below 2^31 and divisors are at
//!   least 1/4 in magnitude;
//! - a float converted to `int` has a bound below [`FLOAT_TO_INT`]; where it cannot
//!   be clamped (call arguments, initialiser lists) [`crate::validate`] checks it.

use crate::ast::{BinOp, Divisor, Expr, Ty};

/// The largest magnitude of any stored float (2^20, exact).
pub const FLOAT_STORE: f64 = 1_048_576.0;
/// The same, spelled as a SysY float literal.
pub const FLOAT_STORE_LITERAL: &str = "1048576.0";
/// Every float subexpression stays below this.
pub const FLOAT_EXPR_LIMIT: f64 = 1e30;
/// A float converted to `int` stays below this (2^31 would overflow).
pub const FLOAT_TO_INT: f64 = 2.0e9;
/// The magnitude of any `int`.
pub const INT_RANGE: f64 = 2_147_483_648.0;

/// An upper bound of `|e|` over all executions.
pub fn bound(e: &Expr) -> f64 {
    match e {
        Expr::Int(v) => (*v as f64).abs(),
        Expr::Float(v) => (*v as f64).abs(),
        Expr::Var { ty, .. } | Expr::Elem { ty, .. } => stored(*ty),
        Expr::Call(c) => stored(c.ret.unwrap_or(Ty::Int)),
        Expr::Input(ty) => stored(*ty),
        Expr::Neg(x) => bound(x),
        Expr::Not(_) => 1.0,
        Expr::Bin(op, l, r) => {
            if !op.is_arith() {
                return 1.0;
            }
            if e.ty() == Ty::Int {
                return INT_RANGE;
            }
            let (a, b) = (bound(l), bound(r));
            match op {
                BinOp::Add | BinOp::Sub => a + b,
                _ => a * b,
            }
        }
        Expr::Div(l, d) => {
            if e.ty() == Ty::Int {
                return INT_RANGE;
            }
            bound(l) / divisor_min(d)
        }
        Expr::Rem(_, d) => match d {
            Divisor::Int(k) => (*k as f64).abs() - 1.0,
            Divisor::IntExpr { k, .. } => 2.0 * *k as f64 - 1.0,
            _ => INT_RANGE,
        },
    }
}

/// The bound of a stored value of type `ty`.
fn stored(ty: Ty) -> f64 {
    match ty {
        Ty::Int => INT_RANGE,
        Ty::Float => FLOAT_STORE,
    }
}

/// The least magnitude a divisor can take.
pub fn divisor_min(d: &Divisor) -> f64 {
    match d {
        Divisor::Int(k) => (*k as f64).abs(),
        Divisor::IntExpr { .. } => 2.0,
        Divisor::Float(c) => (*c as f64).abs(),
        Divisor::FloatSquare(_) => 1.0,
    }
}

/// The largest bound of any float-typed subexpression of `e` (0 when there is none),
/// including the squares inside [`Divisor::FloatSquare`].
pub fn max_float_bound(e: &Expr) -> f64 {
    let mut worst: f64 = if e.ty() == Ty::Float { bound(e) } else { 0.0 };
    let mut visit = |x: &Expr| worst = worst.max(max_float_bound(x));
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Var { .. } | Expr::Input(_) => {}
        Expr::Elem { index, .. } => index_exprs(index).for_each(&mut visit),
        Expr::Neg(x) | Expr::Not(x) => visit(x),
        Expr::Bin(_, l, r) => {
            visit(l);
            visit(r);
        }
        Expr::Div(l, d) | Expr::Rem(l, d) => {
            visit(l);
            match d {
                Divisor::IntExpr { expr, .. } => visit(expr),
                Divisor::FloatSquare(x) => {
                    visit(x);
                    let b = bound(x);
                    worst = worst.max(b * b + 1.0);
                }
                Divisor::Int(_) | Divisor::Float(_) => {}
            }
        }
        Expr::Call(c) => {
            for a in &c.args {
                match a {
                    crate::ast::Arg::Value(x) => visit(x),
                    crate::ast::Arg::Array(r) => index_exprs(&r.index).for_each(&mut visit),
                }
            }
        }
    }
    worst
}

/// The expressions inside wrapped indices.
pub fn index_exprs(index: &[crate::ast::Index]) -> impl Iterator<Item = &Expr> {
    index.iter().filter_map(|i| match i {
        crate::ast::Index::Wrap { expr, .. } => Some(&**expr),
        _ => None,
    })
}

/// Whether storing `e` into a place of type `to` needs a clamp first: a value
/// stored as a float that may exceed [`FLOAT_STORE`], or a float converted to `int`
/// that may reach [`FLOAT_TO_INT`].
pub fn needs_clamp(e: &Expr, to: Ty) -> bool {
    match to {
        // An int converted to float may exceed the store bound too.
        Ty::Float => bound(e) > FLOAT_STORE,
        Ty::Int => e.ty() == Ty::Float && bound(e) >= FLOAT_TO_INT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_products_multiply_bounds() {
        let f = Expr::var("x", Ty::Float);
        let e = Expr::bin(BinOp::Mul, f.clone(), Expr::Float(3.0));
        assert_eq!(bound(&e), FLOAT_STORE * 3.0);
        assert!(needs_clamp(&e, Ty::Float));
        assert!(!needs_clamp(&e, Ty::Int));
        let small = Expr::Div(Box::new(f), Divisor::Float(4.0));
        assert!(!needs_clamp(&small, Ty::Float));
    }

    #[test]
    fn int_arithmetic_wraps_into_the_int_range() {
        let i = Expr::var("n", Ty::Int);
        let e = Expr::bin(BinOp::Mul, i.clone(), i.clone());
        assert_eq!(bound(&e), INT_RANGE);
        // An int product converted to float stays finite when multiplied once more.
        let mixed = Expr::bin(BinOp::Mul, e, Expr::var("x", Ty::Float));
        assert_eq!(mixed.ty(), Ty::Float);
        assert_eq!(bound(&mixed), INT_RANGE * FLOAT_STORE);
    }

    #[test]
    fn squares_in_divisors_count() {
        let big = Expr::bin(
            BinOp::Mul,
            Expr::var("x", Ty::Float),
            Expr::var("y", Ty::Float),
        );
        let e = Expr::Div(
            Box::new(Expr::Float(1.0)),
            Divisor::FloatSquare(Box::new(big)),
        );
        assert_eq!(bound(&e), 1.0);
        assert!(max_float_bound(&e) >= FLOAT_STORE.powi(4));
    }
}
