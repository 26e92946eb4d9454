//! Constant folding: smart constructors for typed expressions that fold literal operands.
//!
//! Integer arithmetic wraps (two's complement, like `gcc -fwrapv`); division and
//! remainder by zero are left unfolded (undefined behaviour must not crash the
//! compiler); `i32::MIN / -1` folds to `i32::MIN` and `i32::MIN % -1` to 0, as RISC-V
//! `divw`/`remw` give. Float arithmetic is IEEE single precision, as at run time.
//! Float-to-int conversion truncates and saturates, NaN giving `i32::MAX` (RISC-V
//! `fcvt.w.s`); out-of-range conversions are undefined in C anyway.

use crate::span::Span;
use crate::tast::*;

/// An int literal expression.
pub fn int_lit(v: i32, span: Span) -> Expr {
    Expr {
        kind: ExprKind::IntLit(v),
        ty: Type::Int,
        span,
    }
}

/// A float literal expression.
pub fn float_lit(v: f32, span: Span) -> Expr {
    Expr {
        kind: ExprKind::FloatLit(v),
        ty: Type::Float,
        span,
    }
}

/// A literal expression for a constant.
pub fn lit(v: ConstVal, span: Span) -> Expr {
    match v {
        ConstVal::Int(i) => int_lit(i, span),
        ConstVal::Float(f) => float_lit(f, span),
    }
}

/// The constant value of a literal expression.
pub fn as_const(e: &Expr) -> Option<ConstVal> {
    match e.kind {
        ExprKind::IntLit(v) => Some(ConstVal::Int(v)),
        ExprKind::FloatLit(v) => Some(ConstVal::Float(v)),
        _ => None,
    }
}

/// Float to int as RISC-V `fcvt.w.s` with round-toward-zero does it.
pub fn f2i(v: f32) -> i32 {
    if v.is_nan() {
        i32::MAX
    } else {
        v as i32
    }
}

/// Truthiness of a constant.
fn truth(v: ConstVal) -> bool {
    match v {
        ConstVal::Int(i) => i != 0,
        ConstVal::Float(f) => f != 0.0,
    }
}

/// Converts a scalar expression (type `Int` or `Float`) to `to`, folding literals.
pub fn convert(e: Expr, to: ScalarTy) -> Expr {
    let span = e.span;
    match (&e.ty, to) {
        (Type::Int, ScalarTy::Float) => match e.kind {
            ExprKind::IntLit(v) => float_lit(v as f32, span),
            _ => Expr {
                kind: ExprKind::IntToFloat(Box::new(e)),
                ty: Type::Float,
                span,
            },
        },
        (Type::Float, ScalarTy::Int) => match e.kind {
            ExprKind::FloatLit(v) => int_lit(f2i(v), span),
            _ => Expr {
                kind: ExprKind::FloatToInt(Box::new(e)),
                ty: Type::Int,
                span,
            },
        },
        _ => e,
    }
}

/// A unary operation on a scalar operand, folded when the operand is a literal.
pub fn unary(op: UnOp, e: Expr, span: Span) -> Expr {
    match (op, as_const(&e)) {
        (UnOp::Neg, Some(ConstVal::Int(v))) => int_lit(v.wrapping_neg(), span),
        (UnOp::Neg, Some(ConstVal::Float(v))) => float_lit(-v, span),
        (UnOp::Not, Some(c)) => int_lit(i32::from(!truth(c)), span),
        _ => {
            let ty = match op {
                UnOp::Neg => e.ty.clone(),
                UnOp::Not => Type::Int,
            };
            Expr {
                kind: ExprKind::Unary(op, Box::new(e)),
                ty,
                span,
            }
        }
    }
}

/// A binary operation on two operands of the same scalar type, folded when both are
/// literals (and the operation is defined).
pub fn binary(op: BinOp, l: Expr, r: Expr, span: Span) -> Expr {
    if let (Some(a), Some(b)) = (as_const(&l), as_const(&r)) {
        if let Some(v) = eval_binary(op, a, b) {
            return lit(v, span);
        }
    }
    let ty = if op.is_comparison() {
        Type::Int
    } else {
        l.ty.clone()
    };
    Expr {
        kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
        ty,
        span,
    }
}

/// Evaluates `a op b` for constants of the same type; `None` when undefined (division
/// by zero) or the types differ.
pub fn eval_binary(op: BinOp, a: ConstVal, b: ConstVal) -> Option<ConstVal> {
    use ConstVal::{Float as F, Int as I};
    let cmp = |c: bool| Some(I(i32::from(c)));
    match (a, b) {
        (I(x), I(y)) => match op {
            BinOp::Add => Some(I(x.wrapping_add(y))),
            BinOp::Sub => Some(I(x.wrapping_sub(y))),
            BinOp::Mul => Some(I(x.wrapping_mul(y))),
            BinOp::Div => (y != 0).then(|| I(x.wrapping_div(y))),
            BinOp::Rem => (y != 0).then(|| I(x.wrapping_rem(y))),
            BinOp::Lt => cmp(x < y),
            BinOp::Le => cmp(x <= y),
            BinOp::Gt => cmp(x > y),
            BinOp::Ge => cmp(x >= y),
            BinOp::Eq => cmp(x == y),
            BinOp::Ne => cmp(x != y),
        },
        (F(x), F(y)) => match op {
            BinOp::Add => Some(F(x + y)),
            BinOp::Sub => Some(F(x - y)),
            BinOp::Mul => Some(F(x * y)),
            BinOp::Div => Some(F(x / y)),
            BinOp::Rem => None,
            BinOp::Lt => cmp(x < y),
            BinOp::Le => cmp(x <= y),
            BinOp::Gt => cmp(x > y),
            BinOp::Ge => cmp(x >= y),
            BinOp::Eq => cmp(x == y),
            BinOp::Ne => cmp(x != y),
        },
        _ => None,
    }
}

/// Short-circuit `&&` (`is_and`) or `||`, folded when the left operand decides or both
/// are literals.
pub fn logic(is_and: bool, l: Expr, r: Expr, span: Span) -> Expr {
    if let Some(a) = as_const(&l) {
        let a = truth(a);
        if a != is_and {
            // `0 && x` is 0, `1 || x` is 1; x is not evaluated.
            return int_lit(i32::from(a), span);
        }
        if let Some(b) = as_const(&r) {
            return int_lit(i32::from(truth(b)), span);
        }
    }
    let kind = if is_and {
        ExprKind::And(Box::new(l), Box::new(r))
    } else {
        ExprKind::Or(Box::new(l), Box::new(r))
    };
    Expr {
        kind,
        ty: Type::Int,
        span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s() -> Span {
        Span::default()
    }

    #[test]
    fn int_arith_wraps() {
        let e = binary(BinOp::Add, int_lit(i32::MAX, s()), int_lit(1, s()), s());
        assert_eq!(e.kind, ExprKind::IntLit(i32::MIN));
        let e = binary(BinOp::Div, int_lit(i32::MIN, s()), int_lit(-1, s()), s());
        assert_eq!(e.kind, ExprKind::IntLit(i32::MIN));
        let e = binary(BinOp::Rem, int_lit(-7, s()), int_lit(2, s()), s());
        assert_eq!(e.kind, ExprKind::IntLit(-1));
        let e = binary(BinOp::Div, int_lit(-7, s()), int_lit(2, s()), s());
        assert_eq!(e.kind, ExprKind::IntLit(-3));
    }

    #[test]
    fn division_by_zero_is_not_folded() {
        let e = binary(BinOp::Div, int_lit(1, s()), int_lit(0, s()), s());
        assert!(matches!(e.kind, ExprKind::Binary(..)));
    }

    #[test]
    fn conversions_and_logic() {
        assert_eq!(
            convert(float_lit(-2.9, s()), ScalarTy::Int).kind,
            ExprKind::IntLit(-2)
        );
        assert_eq!(
            convert(int_lit(16777217, s()), ScalarTy::Float).kind,
            ExprKind::FloatLit(16777216.0)
        );
        assert_eq!(
            logic(true, int_lit(0, s()), float_lit(1.0, s()), s()).kind,
            ExprKind::IntLit(0)
        );
        assert_eq!(
            unary(UnOp::Not, float_lit(0.0, s()), s()).kind,
            ExprKind::IntLit(1)
        );
    }
}
