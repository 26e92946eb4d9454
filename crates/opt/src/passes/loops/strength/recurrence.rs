//! Indices that advance by a loop-invariant amount, in `i32` arithmetic: `x + j`,
//! `j * n + i`, `(j + 1) * n` with `j` the loop's counter and `x`, `n`, `i`
//! loop-invariant. Each is a recurrence `{start, +, step}` (Bachmann, Wang and Zima,
//! "Chains of Recurrences", ISSAC 1994) modulo 2^32: addition, subtraction,
//! multiplication by an invariant and left shifts are ring operations, so the index of
//! iteration `k + 1` is the index of iteration `k` plus `step`, wrapping.
//!
//! Unlike [`super::affine`], nothing here proves the index free of wrap-around; the
//! caller turns an address `base + sext(index) * stride` into a pointer advancing by
//! `sext(step) * stride` only when an in-bounds access through it runs on every
//! iteration that continues the loop (module documentation of [`super`]).

use crate::analysis::Counter;
use ir::{BinOp, Function, Inst, InstKind, Type, Value};

/// Whether `v` is a recurrence of the loop whose counter is `iv` (with `in_loop`
/// telling values defined inside the loop), with a step that is not always zero.
pub fn is_varying(
    f: &Function,
    iv: &Counter,
    in_loop: &dyn Fn(&Function, Value) -> bool,
    v: Value,
) -> bool {
    varies(f, iv, in_loop, v, 8) == Some(true)
}

/// `Some(varies)` when `v` is a recurrence; `varies` is false for invariants.
fn varies(
    f: &Function,
    iv: &Counter,
    in_loop: &dyn Fn(&Function, Value) -> bool,
    v: Value,
    depth: u32,
) -> Option<bool> {
    if v == iv.param {
        return Some(true);
    }
    if !in_loop(f, v) {
        return Some(false);
    }
    let depth = depth.checked_sub(1)?;
    let InstKind::Binary { op, args: [a, b] } = *f.kind(f.def_inst(v)?) else {
        return None;
    };
    if f.value_type(v) != Type::I32 {
        return None;
    }
    let (va, vb) = (
        varies(f, iv, in_loop, a, depth)?,
        varies(f, iv, in_loop, b, depth)?,
    );
    match op {
        BinOp::Add | BinOp::Sub => Some(va || vb),
        // One factor invariant.
        BinOp::Mul if !(va && vb) => Some(va || vb),
        BinOp::Shl if !vb && f.as_iconst(b).is_some() => Some(va),
        _ => None,
    }
}

/// Emits, before `at` (the preheader's terminator), the value `v` takes on the first
/// iteration and the amount it advances by per iteration; `v` must be a recurrence
/// ([`is_varying`]). Values invariant in the loop are used as they are.
pub fn start_and_step(
    f: &mut Function,
    iv: &Counter,
    in_loop: &dyn Fn(&Function, Value) -> bool,
    at: Inst,
    v: Value,
) -> (Value, Value) {
    if v == iv.param {
        let step = f.iconst(iv.step);
        return (iv.init, step);
    }
    if !in_loop(f, v) {
        let zero = f.iconst(0);
        return (v, zero);
    }
    let InstKind::Binary { op, args: [a, b] } = *f.kind(f.def_inst(v).expect("an instruction"))
    else {
        unreachable!("checked by is_varying")
    };
    let (sa, da) = start_and_step(f, iv, in_loop, at, a);
    let (sb, db) = start_and_step(f, iv, in_loop, at, b);
    let emit = |f: &mut Function, op: BinOp, x: Value, y: Value| {
        let i = f.insert_inst_before(at, InstKind::Binary { op, args: [x, y] }, Type::I32);
        f.inst_result(i).expect("a binary instruction has a result")
    };
    let start = emit(f, op, sa, sb);
    let step = match op {
        BinOp::Add | BinOp::Sub => emit(f, op, da, db),
        // (a + k da) * b = a b + k (da b) when b is invariant (db = 0), and the
        // mirror image; a shift is a multiplication by a power of two.
        BinOp::Mul if varies(f, iv, in_loop, a, 8) == Some(true) => emit(f, op, da, sb),
        BinOp::Mul => emit(f, op, sa, db),
        BinOp::Shl => emit(f, op, da, sb),
        _ => unreachable!("checked by is_varying"),
    };
    (start, step)
}
