//! The root of an address: the pointer a chain of `gep`s starts from, and the
//! constant byte offset from it (the first step of LLVM's `getUnderlyingObject`
//! and `GetPointerBaseWithConstantOffset`).

use crate::{Function, InstKind, Value};

/// Follows `gep` bases from `p` to the pointer they start from (a global, an
/// `alloc`, a parameter, or anything else), with the byte offset from it when every
/// index on the way is a constant.
pub fn address_root(f: &Function, p: Value) -> (Value, Option<i64>) {
    address_root_by(f, p, |v| f.as_iconst(v).map(i64::from))
}

/// [`address_root`] with what counts as a constant index given by `constant`
/// (a pass that knows more than the literal constants, such as value ranges of a
/// single number, passes its own).
pub fn address_root_by(
    f: &Function,
    mut p: Value,
    constant: impl Fn(Value) -> Option<i64>,
) -> (Value, Option<i64>) {
    let mut off = Some(0i64);
    while let Some(i) = f.def_inst(p) {
        let InstKind::Gep {
            base,
            index,
            stride,
        } = *f.kind(i)
        else {
            break;
        };
        off = off
            .zip(constant(index))
            .map(|(o, k)| o + k * i64::from(stride));
        p = base;
    }
    (p, off)
}
