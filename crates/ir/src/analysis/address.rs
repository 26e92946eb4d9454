//! The root of an address: the pointer a chain of `gep`s starts from, and the
//! constant byte offset from it (the first step of LLVM's `getUnderlyingObject`
//! and `GetPointerBaseWithConstantOffset`); and, when some index is not a
//! constant, the offset modulo the greatest common divisor of the variable
//! indices' strides ([`address_residue`]), which is what LLVM's `BasicAA` uses to
//! tell apart two accesses with variable indices (`aliasGEP`'s `ModOffset` test,
//! the GCD test of dependence analysis: Banerjee, Wolfe).

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
    p: Value,
    constant: impl Fn(Value) -> Option<i64>,
) -> (Value, Option<i64>) {
    let mut off = Some(0i64);
    let root = walk_geps(f, p, |index, stride| {
        off = off.zip(constant(index)).map(|(o, k)| o + k * stride);
    });
    (root, off)
}

/// Follows `gep` bases from `p` to the pointer they start from, calling `step`
/// with each `gep`'s index and stride (in bytes) on the way; returns that pointer.
pub fn walk_geps(f: &Function, mut p: Value, mut step: impl FnMut(Value, i64)) -> Value {
    while let Some(i) = f.def_inst(p) {
        let InstKind::Gep {
            base,
            index,
            stride,
        } = *f.kind(i)
        else {
            break;
        };
        step(index, i64::from(stride));
        p = base;
    }
    p
}

/// An address as its root plus `offset + modulus * k` bytes for some integer `k`
/// ([`address_residue`]): `modulus` is the greatest common divisor of the strides
/// of the `gep`s whose index is not a constant (0 when every index is, and then
/// `offset` is the exact offset).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Residue {
    pub root: Value,
    pub offset: i64,
    pub modulus: i64,
}

/// Follows `gep` bases from `p` to its root as [`address_root`] does, adding the
/// constant indices times their strides to `offset` and folding the stride of
/// every other index into `modulus`. A `gep` adds `index * stride` bytes for the
/// index's sign-extended (exact, unwrapped) value, so whatever values the variable
/// indices take, the address is the root plus `offset` plus a multiple of every
/// such stride, hence of their greatest common divisor.
pub fn address_residue(f: &Function, p: Value) -> Residue {
    let mut offset = 0i64;
    let mut modulus = 0i64;
    let root = walk_geps(f, p, |index, stride| match f.as_iconst(index) {
        Some(k) => offset += i64::from(k) * stride,
        None => modulus = gcd(modulus, stride.abs()),
    });
    Residue {
        root,
        offset,
        modulus,
    }
}

/// Whether a `size_a`-byte access at `a` and a `size_b`-byte access at `b` may
/// overlap, judged by their residues alone: `true` unless both have the same
/// root and no address `a` can be at lies within `size_b` bytes after, or
/// `size_a` bytes before, an address `b` can be at. With both offsets exact
/// this compares the byte ranges; otherwise `a - b` is `d + g * k` for the
/// difference `d` of the offsets and the greatest common divisor `g` of both
/// moduli, and the two ranges meet only if some such value lies strictly
/// between `-size_a` and `size_b`: the nearest ones to that interval are
/// `d mod g` and `d mod g - g`.
pub fn residues_may_overlap(a: Residue, size_a: i64, b: Residue, size_b: i64) -> bool {
    if a.root != b.root {
        return true;
    }
    let d = a.offset - b.offset;
    let g = gcd(a.modulus, b.modulus);
    if g == 0 {
        return -size_a < d && d < size_b;
    }
    let m = d.rem_euclid(g);
    m < size_b || g - m < size_a
}

/// Greatest common divisor of two non-negative numbers (`gcd(0, x) = x`).
fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(offset: i64, modulus: i64) -> Residue {
        Residue {
            root: Value::from_u32(0),
            offset,
            modulus,
        }
    }

    #[test]
    fn exact_offsets_compare_byte_ranges() {
        assert!(residues_may_overlap(r(4, 0), 4, r(4, 0), 4));
        assert!(residues_may_overlap(r(4, 0), 8, r(8, 0), 4));
        assert!(!residues_may_overlap(r(4, 0), 4, r(8, 0), 4));
        assert!(!residues_may_overlap(r(8, 0), 4, r(4, 0), 4));
    }

    #[test]
    fn columns_of_rows_are_apart() {
        // a[1][1] of float a[3][3] (offset 16) against a[x][2] (8 + 12x): never.
        assert!(!residues_may_overlap(r(16, 0), 4, r(8, 12), 4));
        assert!(!residues_may_overlap(r(8, 12), 4, r(16, 0), 4));
        // against a[x][1] (4 + 12x): when x = 1.
        assert!(residues_may_overlap(r(16, 0), 4, r(4, 12), 4));
        // a[i][0] and a[j][1] of int a[n][8]: never; a[i][0] and a[j][8 * k]: maybe.
        assert!(!residues_may_overlap(r(0, 32), 4, r(4, 32), 4));
        assert!(residues_may_overlap(r(0, 32), 4, r(0, 4), 4));
        // Strides 8 and 12 meet at multiples of 4 (16 = 8 * 2 = 4 + 12).
        assert!(residues_may_overlap(r(0, 8), 4, r(4, 12), 4));
        // An 8-byte access reaches the next 4-byte slot.
        assert!(residues_may_overlap(r(0, 12), 8, r(4, 12), 4));
    }

    #[test]
    fn different_roots_may_overlap() {
        let mut b = r(100, 0);
        b.root = Value::from_u32(1);
        assert!(residues_may_overlap(r(0, 0), 4, b, 4));
    }
}
