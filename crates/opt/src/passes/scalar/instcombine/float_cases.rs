//! A float comparison decided case by case: when both sides are float arithmetic
//! on constants and on the conversion of one integer `x` whose value range holds
//! at most [`MAX_CASES`] values, the comparison is evaluated for each of them
//! (with [`crate::fold`]'s exact IEEE single arithmetic); when every case gives
//! the same answer, that is the comparison's value.
//!
//! `(sitofp (a < b)) + -826.875 != 0.0` is true whichever truth value the
//! comparison has. LLVM reaches the same result by writing the conversion of an
//! `i1` as a `select` of two constants and folding the arithmetic and the
//! comparison into its arms (InstCombine's `FoldOpIntoSelect`); here the range of
//! `x` plays the `select`'s part, so a value of two, three or four integers works
//! too.

use super::{Action, LazyRanges};
use crate::fold::{fold_binary, fold_cmp, fold_unary, Const};
use ir::{CmpOp, Function, InstKind, UnOp, Value};

/// At most this many values of `x` are tried.
const MAX_CASES: i64 = 4;
/// Arithmetic nested at most this deep is evaluated.
const MAX_DEPTH: u32 = 6;

/// `a op b` (a float comparison) when it is the same for every value of the one
/// converted integer both sides compute from.
pub(super) fn float_cases(
    f: &Function,
    ranges: &mut LazyRanges,
    op: CmpOp,
    a: Value,
    b: Value,
) -> Option<Action> {
    if !op.is_float() {
        return None;
    }
    let mut x = None;
    if !converted_leaf(f, a, &mut x, MAX_DEPTH) || !converted_leaf(f, b, &mut x, MAX_DEPTH) {
        return None;
    }
    let r = ranges.of(f, x?)?;
    if i64::from(r.hi) - i64::from(r.lo) >= MAX_CASES {
        return None;
    }
    let mut answer = None;
    for k in r.lo..=r.hi {
        let c = fold_cmp(op, eval(f, a, k)?, eval(f, b, k)?)?;
        if answer.is_some_and(|a| a != c) {
            return None;
        }
        answer = Some(c);
    }
    answer.map(Action::Const)
}

/// Whether `v` is float arithmetic (no deeper than `depth`) on float constants
/// and on `sitofp` of one integer value, recorded in `x`.
fn converted_leaf(f: &Function, v: Value, x: &mut Option<Value>, depth: u32) -> bool {
    if f.as_fconst(v).is_some() {
        return true;
    }
    let Some(d) = f.def_inst(v) else {
        return false;
    };
    if depth == 0 {
        return false;
    }
    match *f.kind(d) {
        InstKind::Unary {
            op: UnOp::SIToFP,
            arg,
        } => {
            let same = x.is_none_or(|x| x == arg);
            *x = Some(arg);
            same
        }
        InstKind::Unary {
            op: UnOp::FNeg | UnOp::FAbs,
            arg,
        } => converted_leaf(f, arg, x, depth - 1),
        InstKind::Binary { op, args: [p, q] } if op.is_float() => {
            converted_leaf(f, p, x, depth - 1) && converted_leaf(f, q, x, depth - 1)
        }
        _ => false,
    }
}

/// The value of `v` (accepted by [`converted_leaf`]) when the converted integer
/// is `k`.
fn eval(f: &Function, v: Value, k: i32) -> Option<Const> {
    if let Some(c) = Const::of(f, v) {
        return Some(c);
    }
    match *f.kind(f.def_inst(v)?) {
        InstKind::Unary {
            op: UnOp::SIToFP, ..
        } => fold_unary(UnOp::SIToFP, Const::I(k)),
        InstKind::Unary { op, arg } => fold_unary(op, eval(f, arg, k)?),
        InstKind::Binary { op, args: [p, q] } => fold_binary(op, eval(f, p, k)?, eval(f, q, k)?),
        _ => None,
    }
}
