//! Constant folding with exactly the target's semantics (RV64GC, as the interpreter
//! models it), shared by SCCP and instcombine:
//!
//! - `i32` arithmetic wraps; `sdiv` truncates toward zero and `srem` takes the sign of
//!   the dividend; `i32::MIN / -1 == i32::MIN` and `i32::MIN % -1 == 0` (RISC-V `divw`
//!   and `remw` do not trap). Division or remainder by zero is **not** folded: the
//!   instruction stays and does whatever the target does at run time.
//! - shift amounts are taken modulo 32; `lshr` shifts in zeros, `ashr` copies the sign.
//! - `f32` arithmetic is done in `f32` (round to nearest even), and a NaN result is the
//!   canonical quiet NaN `0x7fc00000` that RISC-V arithmetic produces.
//! - `fneg` flips the sign bit only (even of a NaN); `sitofp` rounds to nearest;
//!   `fptosi` truncates and saturates, NaN giving `i32::MAX` (`fcvt.w.s` with `rtz`).
//! - float comparisons are ordered (false on NaN) except `fne`, which is true on NaN.
//! - `fbits` gives the float's bit pattern. The `i64` operations (and `sext`, `trunc`)
//!   are never folded: there are no `i64` constants.

use ir::{BinOp, CmpOp, Function, Inst, InstKind, UnOp, Value, ValueDef};

/// A constant of a value type, floats by bit pattern (so `-0.0 != 0.0` and equal NaNs
/// compare equal).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Const {
    I(i32),
    F(u32),
}

impl Const {
    /// The constant `v` is, if it is one.
    pub fn of(f: &Function, v: Value) -> Option<Const> {
        match f.value_def(v) {
            ValueDef::IConst(c) => Some(Const::I(c)),
            ValueDef::FConst(bits) => Some(Const::F(bits)),
            _ => None,
        }
    }

    /// The interned value of this constant in `f`.
    pub fn value(self, f: &mut Function) -> Value {
        match self {
            Const::I(c) => f.iconst(c),
            Const::F(bits) => f.fconst(f32::from_bits(bits)),
        }
    }

    /// A float constant from an `f32` result, canonicalising NaN.
    pub fn float(x: f32) -> Const {
        Const::F(if x.is_nan() {
            CANONICAL_NAN
        } else {
            x.to_bits()
        })
    }
}

/// The constant instruction `i` computes, when it is an arithmetic, comparison or
/// unary instruction whose operands are all constants and it folds.
pub fn fold_inst(f: &Function, i: Inst) -> Option<Const> {
    match *f.kind(i) {
        InstKind::Binary { op, args: [a, b] } => {
            fold_binary(op, Const::of(f, a)?, Const::of(f, b)?)
        }
        InstKind::Cmp { op, args: [a, b] } => fold_cmp(op, Const::of(f, a)?, Const::of(f, b)?),
        InstKind::Unary { op, arg } => fold_unary(op, Const::of(f, arg)?),
        _ => None,
    }
}

/// Constant propagation from `seeds`, the instructions that used values a pass
/// has just replaced by constants (constants' own uses are not tracked): every
/// one whose operands are now all constants is folded away, and its users are
/// visited in turn. This is the folding SCCP does, limited to what the new
/// constants reach, for passes that make constants late in the pipeline. Returns
/// how many instructions went.
pub fn fold_users(f: &mut Function, seeds: Vec<Inst>) -> usize {
    let mut work = seeds;
    let mut folded = 0;
    while let Some(i) = work.pop() {
        if f.layout.inst_block(i).is_none() {
            continue; // removed already
        }
        let Some(c) = fold_inst(f, i) else {
            continue;
        };
        let r = f
            .inst_result(i)
            .expect("a foldable instruction has a result");
        let cv = c.value(f);
        work.extend(f.users(r).iter().copied());
        f.replace_all_uses(r, cv);
        f.remove_inst(i);
        folded += 1;
    }
    folded
}

/// The quiet NaN RISC-V arithmetic produces.
pub const CANONICAL_NAN: u32 = 0x7fc0_0000;

/// `fcvt.w.s` with round toward zero: saturating, NaN to `i32::MAX`.
pub fn fptosi(x: f32) -> i32 {
    if x.is_nan() {
        i32::MAX
    } else {
        x as i32
    }
}

/// Folds `a op b`. `None` when the operand types do not fit the opcode, or for an
/// integer division or remainder by zero.
pub fn fold_binary(op: BinOp, a: Const, b: Const) -> Option<Const> {
    match (a, b) {
        (Const::I(x), Const::I(y)) if !op.is_float() => Some(Const::I(match op {
            BinOp::Add => x.wrapping_add(y),
            BinOp::Sub => x.wrapping_sub(y),
            BinOp::Mul => x.wrapping_mul(y),
            BinOp::SDiv if y == 0 => return None,
            BinOp::SDiv => x.wrapping_div(y),
            BinOp::SRem if y == 0 => return None,
            BinOp::SRem => x.wrapping_rem(y),
            BinOp::And => x & y,
            BinOp::Or => x | y,
            BinOp::Xor => x ^ y,
            BinOp::Shl => x.wrapping_shl(y as u32),
            BinOp::LShr => ((x as u32).wrapping_shr(y as u32)) as i32,
            BinOp::AShr => x.wrapping_shr(y as u32),
            BinOp::Add64 | BinOp::Sub64 | BinOp::Mul64 | BinOp::SDiv64 | BinOp::SRem64 => {
                return None
            }
            BinOp::FAdd | BinOp::FSub | BinOp::FMul | BinOp::FDiv => return None,
        })),
        (Const::F(x), Const::F(y)) if op.is_float() => {
            let (x, y) = (f32::from_bits(x), f32::from_bits(y));
            Some(Const::float(match op {
                BinOp::FAdd => x + y,
                BinOp::FSub => x - y,
                BinOp::FMul => x * y,
                BinOp::FDiv => x / y,
                _ => return None,
            }))
        }
        _ => None,
    }
}

/// Folds the comparison `a op b` to 0 or 1.
pub fn fold_cmp(op: CmpOp, a: Const, b: Const) -> Option<Const> {
    let r = match (a, b) {
        (Const::I(x), Const::I(y)) if !op.is_float() => match op {
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            CmpOp::Slt => x < y,
            CmpOp::Sle => x <= y,
            CmpOp::Sgt => x > y,
            CmpOp::Sge => x >= y,
            _ => return None,
        },
        (Const::F(x), Const::F(y)) if op.is_float() => {
            let (x, y) = (f32::from_bits(x), f32::from_bits(y));
            // Rust's float comparisons are IEEE: ordered, and `!=` true on NaN.
            match op {
                CmpOp::FEq => x == y,
                CmpOp::FNe => x != y,
                CmpOp::FLt => x < y,
                CmpOp::FLe => x <= y,
                CmpOp::FGt => x > y,
                CmpOp::FGe => x >= y,
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(Const::I(r as i32))
}

/// Folds `op a`.
pub fn fold_unary(op: UnOp, a: Const) -> Option<Const> {
    match (op, a) {
        (UnOp::FNeg, Const::F(x)) => Some(Const::F(x ^ 0x8000_0000)),
        (UnOp::FAbs, Const::F(x)) => Some(Const::F(x & 0x7fff_ffff)),
        (UnOp::SIToFP, Const::I(x)) => Some(Const::F((x as f32).to_bits())),
        (UnOp::FPToSI, Const::F(x)) => Some(Const::I(fptosi(f32::from_bits(x)))),
        (UnOp::FBits, Const::F(x)) => Some(Const::I(x as i32)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value replaced by a constant: the chain it feeds folds, what also
    /// depends on an unknown stays.
    #[test]
    fn fold_users_folds_what_the_new_constant_reaches() {
        let mut m = ir::parse_module(
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = add %0, 2
  %3 = mul %2, 3
  %4 = slt %3, 100
  %5 = add %3, %1
  call @putint(%5)
  ret %4
}
"#,
        )
        .unwrap();
        let f = m.funcs.values_mut().find(|f| f.name == "main").unwrap();
        let first = f.layout.block_insts(f.entry_block()).next().unwrap();
        let v = f.inst_result(first).unwrap();
        let seeds = f.users(v).to_vec();
        let five = f.iconst(5);
        f.replace_all_uses(v, five);
        assert_eq!(fold_users(f, seeds), 3, "add, mul and slt fold");
        let text = ir::print_module(&m);
        assert!(text.contains("add 21, %1"), "{text}");
        assert!(text.contains("ret 1"), "{text}");
    }

    fn i(op: BinOp, a: i32, b: i32) -> Option<i32> {
        match fold_binary(op, Const::I(a), Const::I(b)) {
            Some(Const::I(r)) => Some(r),
            None => None,
            other => panic!("{other:?}"),
        }
    }

    fn fl(op: BinOp, a: f32, b: f32) -> u32 {
        match fold_binary(op, Const::F(a.to_bits()), Const::F(b.to_bits())) {
            Some(Const::F(r)) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn integer_folding_matches_rv64() {
        assert_eq!(i(BinOp::Add, i32::MAX, 1), Some(i32::MIN));
        assert_eq!(i(BinOp::Sub, i32::MIN, 1), Some(i32::MAX));
        assert_eq!(i(BinOp::Mul, 65536, 65536), Some(0));
        assert_eq!(i(BinOp::SDiv, -7, 2), Some(-3));
        assert_eq!(i(BinOp::SRem, -7, 2), Some(-1));
        assert_eq!(i(BinOp::SRem, 7, -2), Some(1));
        assert_eq!(i(BinOp::SDiv, i32::MIN, -1), Some(i32::MIN));
        assert_eq!(i(BinOp::SRem, i32::MIN, -1), Some(0));
        assert_eq!(i(BinOp::SDiv, 1, 0), None);
        assert_eq!(i(BinOp::SRem, 1, 0), None);
        assert_eq!(i(BinOp::Shl, 1, 33), Some(2));
        assert_eq!(i(BinOp::Shl, 1, -1), Some(i32::MIN));
        assert_eq!(i(BinOp::LShr, -1, 28), Some(15));
        assert_eq!(i(BinOp::AShr, -16, 2), Some(-4));
        assert_eq!(i(BinOp::AShr, -16, 34), Some(-4));
        assert_eq!(i(BinOp::Xor, 0b1100, 0b1010), Some(0b0110));
        assert_eq!(i(BinOp::FAdd, 1, 2), None, "type mismatch");
        for op in [
            BinOp::Add64,
            BinOp::Sub64,
            BinOp::Mul64,
            BinOp::SDiv64,
            BinOp::SRem64,
        ] {
            assert_eq!(i(op, 65536, 65536), None, "{op:?} is not folded as i32");
        }
    }

    #[test]
    fn float_folding_is_single_precision() {
        // 16777216 + 1 is not representable in f32: rounds back to 16777216.
        assert_eq!(fl(BinOp::FAdd, 16777216.0, 1.0), 16777216.0f32.to_bits());
        assert_eq!(fl(BinOp::FDiv, 1.0, 3.0), (1.0f32 / 3.0).to_bits());
        assert_eq!(fl(BinOp::FDiv, 1.0, 0.0), f32::INFINITY.to_bits());
        assert_eq!(fl(BinOp::FDiv, 0.0, 0.0), CANONICAL_NAN);
        assert_eq!(fl(BinOp::FSub, f32::INFINITY, f32::INFINITY), CANONICAL_NAN);
        assert_eq!(fl(BinOp::FAdd, -0.0, 0.0), 0.0f32.to_bits());
        assert_eq!(fl(BinOp::FMul, -2.0, 0.0), (-0.0f32).to_bits());
    }

    #[test]
    fn comparisons_and_conversions() {
        let nan = Const::F(CANONICAL_NAN);
        assert_eq!(fold_cmp(CmpOp::FEq, nan, nan), Some(Const::I(0)));
        assert_eq!(fold_cmp(CmpOp::FNe, nan, nan), Some(Const::I(1)));
        assert_eq!(fold_cmp(CmpOp::FLe, nan, nan), Some(Const::I(0)));
        let (z, nz) = (Const::F(0.0f32.to_bits()), Const::F((-0.0f32).to_bits()));
        assert_eq!(fold_cmp(CmpOp::FEq, z, nz), Some(Const::I(1)));
        assert_eq!(
            fold_cmp(CmpOp::Slt, Const::I(-1), Const::I(0)),
            Some(Const::I(1))
        );
        assert_eq!(fold_unary(UnOp::FPToSI, nan), Some(Const::I(i32::MAX)));
        assert_eq!(
            fold_unary(UnOp::FPToSI, Const::F((-1e10f32).to_bits())),
            Some(Const::I(i32::MIN))
        );
        assert_eq!(
            fold_unary(UnOp::FPToSI, Const::F((-2.7f32).to_bits())),
            Some(Const::I(-2))
        );
        assert_eq!(
            fold_unary(UnOp::SIToFP, Const::I(16777217)),
            Some(Const::F(16777216.0f32.to_bits()))
        );
        assert_eq!(
            fold_unary(UnOp::FNeg, nan),
            Some(Const::F(CANONICAL_NAN | 0x8000_0000))
        );
        assert_eq!(
            fold_unary(UnOp::FBits, Const::F((-0.0f32).to_bits())),
            Some(Const::I(i32::MIN))
        );
        assert_eq!(
            fold_unary(UnOp::FBits, Const::F(1.0f32.to_bits())),
            Some(Const::I(0x3f80_0000))
        );
        assert_eq!(fold_unary(UnOp::SExt, Const::I(-1)), None);
    }
}
