//! The root of an address: the pointer a chain of `gep`s starts from, and the
//! constant byte offset from it (the first step of LLVM's `getUnderlyingObject`
//! and `GetPointerBaseWithConstantOffset`).

use crate::{Function, InstKind, Value};

/// Follows `gep` bases from `p` to the pointer they start from (a global, an
/// `alloc`, a parameter, or anything else), with the byte offset from it when every
/// index on the way is a constant.
pub fn address_root(f: &Function, mut p: Value) -> (Value, Option<i64>) {
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
        off = match (off, f.as_iconst(index)) {
            (Some(o), Some(k)) => Some(o + i64::from(k) * i64::from(stride)),
            _ => None,
        };
        p = base;
    }
    (p, off)
}
