//! Arithmetic: the integer and float binary operations (immediates folded, `*w`
//! forms for i32, plain 64-bit forms for i64) and the unary ones (negation,
//! conversions, `sext`, `trunc`, `fbits`); multiplication by a constant through
//! shifts, and division and remainder by a constant through shifts (powers of two) or
//! a multiply-high by a magic number: the quotient as Granlund and Montgomery (PLDI
//! 1994) in the formulation of *Hacker's Delight*, 2nd ed., section 10-4
//! ([`magic_signed`]), the remainder directly as Lemire, Kaser and Kurz (2019)
//! ([`remainder_magic`]).

use super::{CacheKey, Isel};
use crate::mir::*;
use crate::BackendError;
use ir::{BinOp, InstKind, UnOp, Value};

/// Signed magic number and shift for division by `d` (|d| >= 2), Hacker's Delight
/// figure 10-1.
pub(crate) fn magic_signed(d: i32) -> (i32, u32) {
    let two31: u32 = 0x8000_0000;
    let ad = d.unsigned_abs();
    let t = two31.wrapping_add((d as u32) >> 31);
    let anc = t - 1 - t % ad;
    let mut p = 31u32;
    let mut q1 = two31 / anc;
    let mut r1 = two31 - q1 * anc;
    let mut q2 = two31 / ad;
    let mut r2 = two31 - q2 * ad;
    loop {
        p += 1;
        q1 = q1.wrapping_mul(2);
        r1 = r1.wrapping_mul(2);
        if r1 >= anc {
            q1 = q1.wrapping_add(1);
            r1 = r1.wrapping_sub(anc);
        }
        q2 = q2.wrapping_mul(2);
        r2 = r2.wrapping_mul(2);
        if r2 >= ad {
            q2 = q2.wrapping_add(1);
            r2 = r2.wrapping_sub(ad);
        }
        let delta = ad - r2;
        if !(q1 < delta || (q1 == delta && r1 == 0)) {
            break;
        }
    }
    let mut mg = q2.wrapping_add(1) as i32;
    if d < 0 {
        mg = mg.wrapping_neg();
    }
    (mg, p - 32)
}

impl Isel<'_> {
    /// `res = args[0] op args[1]`.
    pub(super) fn binary(
        &mut self,
        op: BinOp,
        args: &[Value; 2],
        res: Value,
    ) -> Result<(), BackendError> {
        let rd = self.def_reg(res);
        if op.is_float() {
            let a = self.reg(args[0])?;
            let b = self.reg(args[1])?;
            let fop = match op {
                BinOp::FAdd => FAluOp::Add,
                BinOp::FSub => FAluOp::Sub,
                BinOp::FMul => FAluOp::Mul,
                _ => FAluOp::Div,
            };
            self.push(MInst::FAlu {
                op: fop,
                rd,
                rs1: a,
                rs2: b,
            });
        } else if let Some(k) = self.sdiv64_shift(op, args[1]) {
            // 64-bit division by 2^k (a sign-extended constant): bias a negative
            // dividend by 2^k - 1, then shift (rounds toward zero).
            let a = self.reg(args[0])?;
            let sign = self.tmp();
            self.alui(AluImmOp::Srai, sign, a, 63);
            let bias = self.tmp();
            self.alui(AluImmOp::Srli, bias, sign, 64 - k);
            let sum = self.tmp();
            self.alu(AluOp::Add, sum, a, bias);
            self.alui(AluImmOp::Srai, rd, sum, k);
        } else if op.is_i64() {
            let a = self.reg(args[0])?;
            let b = self.reg(args[1])?;
            let aop = match op {
                BinOp::Add64 => AluOp::Add,
                BinOp::Sub64 => AluOp::Sub,
                BinOp::Mul64 => AluOp::Mul,
                BinOp::SDiv64 => AluOp::Div,
                _ => AluOp::Rem,
            };
            self.alu(aop, rd, a, b);
        } else {
            self.int_binary(op, rd, args[0], args[1])?;
        }
        Ok(())
    }

    /// `res = op arg`.
    pub(super) fn unary(&mut self, op: UnOp, arg: Value, res: Value) -> Result<(), BackendError> {
        let rd = self.def_reg(res);
        let a = self.reg(arg)?;
        match op {
            UnOp::FNeg => self.push(MInst::FAlu {
                op: FAluOp::Sgnjn,
                rd,
                rs1: a,
                rs2: a,
            }),
            UnOp::SIToFP => self.push(MInst::Cvt {
                op: CvtOp::FcvtSW,
                rd,
                rs: a,
            }),
            UnOp::FPToSI => self.push(MInst::Cvt {
                op: CvtOp::FcvtWS,
                rd,
                rs: a,
            }),
            // The i32 is already sign-extended to 64 bits.
            UnOp::SExt => self.push(MInst::Mv { rd, rs: a }),
            UnOp::Trunc => self.alui(AluImmOp::Addiw, rd, a, 0),
            // `fmv.x.w` sign-extends bit 31, as the i32 invariant wants.
            UnOp::FBits => self.push(MInst::Cvt {
                op: CvtOp::FmvXW,
                rd,
                rs: a,
            }),
        }
        Ok(())
    }

    fn int_binary(&mut self, op: BinOp, rd: Reg, a: Value, b: Value) -> Result<(), BackendError> {
        let ca = self.iconst(a);
        let cb = self.iconst(b);
        let imm = |c: Option<i32>| c.filter(|&c| fits_imm12(c as i64));
        match op {
            BinOp::Add => {
                if let Some(c) = imm(cb) {
                    let ra = self.reg(a)?;
                    self.alui(AluImmOp::Addiw, rd, ra, c);
                } else if let Some(c) = imm(ca) {
                    let rb = self.reg(b)?;
                    self.alui(AluImmOp::Addiw, rd, rb, c);
                } else {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(AluOp::Addw, rd, ra, rb);
                }
            }
            BinOp::Sub => {
                if let Some(c) = cb.filter(|&c| fits_imm12(-(c as i64))) {
                    let ra = self.reg(a)?;
                    self.alui(AluImmOp::Addiw, rd, ra, -c);
                } else {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(AluOp::Subw, rd, ra, rb);
                }
            }
            BinOp::Mul => {
                if let Some(c) = cb {
                    self.mul_const(rd, a, c)?;
                } else if let Some(c) = ca {
                    self.mul_const(rd, b, c)?;
                } else {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(AluOp::Mulw, rd, ra, rb);
                }
            }
            BinOp::SDiv => match cb {
                Some(c) if c != 0 && c != i32::MIN => self.div_const(rd, a, c)?,
                _ => {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(AluOp::Divw, rd, ra, rb);
                }
            },
            BinOp::SRem => match cb {
                Some(c) if c != 0 && c != i32::MIN => self.rem_const(rd, a, c)?,
                _ => {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(AluOp::Remw, rd, ra, rb);
                }
            },
            BinOp::And | BinOp::Or | BinOp::Xor => {
                let (iop, rop) = match op {
                    BinOp::And => (AluImmOp::Andi, AluOp::And),
                    BinOp::Or => (AluImmOp::Ori, AluOp::Or),
                    _ => (AluImmOp::Xori, AluOp::Xor),
                };
                if let Some(c) = imm(cb) {
                    let ra = self.reg(a)?;
                    self.alui(iop, rd, ra, c);
                } else if let Some(c) = imm(ca) {
                    let rb = self.reg(b)?;
                    self.alui(iop, rd, rb, c);
                } else {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(rop, rd, ra, rb);
                }
            }
            BinOp::Shl | BinOp::LShr | BinOp::AShr => {
                let (iop, rop) = match op {
                    BinOp::Shl => (AluImmOp::Slliw, AluOp::Sllw),
                    BinOp::LShr => (AluImmOp::Srliw, AluOp::Srlw),
                    _ => (AluImmOp::Sraiw, AluOp::Sraw),
                };
                if let Some(c) = cb {
                    let ra = self.reg(a)?;
                    self.alui(iop, rd, ra, c & 31);
                } else {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(rop, rd, ra, rb);
                }
            }
            _ => unreachable!("float or i64 op in int_binary"),
        }
        Ok(())
    }

    /// `rd = x * c` (wrapping i32).
    fn mul_const(&mut self, rd: Reg, x: Value, c: i32) -> Result<(), BackendError> {
        let rx = self.reg(x)?;
        let u = c as u32;
        if c == 0 {
            self.push(MInst::Mv { rd, rs: ZERO });
        } else if c == 1 {
            // Keep the i32 invariant explicit: x is already sign-extended.
            self.push(MInst::Mv { rd, rs: rx });
        } else if c == -1 {
            self.alu(AluOp::Subw, rd, ZERO, rx);
        } else if u.is_power_of_two() {
            self.alui(AluImmOp::Slliw, rd, rx, u.trailing_zeros() as i32);
        } else if c > 0 && (c.unsigned_abs() as u64 - 1).is_power_of_two() {
            let t = self.tmp();
            self.alui(AluImmOp::Slliw, t, rx, (u - 1).trailing_zeros() as i32);
            self.alu(AluOp::Addw, rd, t, rx);
        } else if c > 0 && (c as u64 + 1).is_power_of_two() {
            let t = self.tmp();
            self.alui(AluImmOp::Slliw, t, rx, (u + 1).trailing_zeros() as i32);
            self.alu(AluOp::Subw, rd, t, rx);
        } else if c < 0 && c.unsigned_abs().is_power_of_two() {
            let t = self.tmp();
            self.alui(
                AluImmOp::Slliw,
                t,
                rx,
                c.unsigned_abs().trailing_zeros() as i32,
            );
            self.alu(AluOp::Subw, rd, ZERO, t);
        } else {
            let rc = self.cached(CacheKey::Int(c));
            self.alu(AluOp::Mulw, rd, rx, rc);
        }
        Ok(())
    }

    /// `k` when `op` is `sdiv64` by `sext` of the constant `2^k`, `1 <= k <= 30`.
    fn sdiv64_shift(&self, op: BinOp, divisor: Value) -> Option<i32> {
        if op != BinOp::SDiv64 {
            return None;
        }
        let def = self.f.def_inst(divisor)?;
        let InstKind::Unary {
            op: UnOp::SExt,
            arg,
        } = *self.f.kind(def)
        else {
            return None;
        };
        let c = self.f.as_iconst(arg)?;
        (c > 1 && (c as u32).is_power_of_two()).then(|| c.trailing_zeros() as i32)
    }

    /// `x + (x < 0 ? 2^k - 1 : 0)`: a negative dividend biased so that shifting it
    /// right by `k` rounds toward zero (shared by division and remainder by `2^k`).
    fn biased_for_shift(&mut self, rx: Reg, k: i32) -> Reg {
        let bias = self.tmp();
        if k == 1 {
            self.alui(AluImmOp::Srliw, bias, rx, 31);
        } else {
            let sign = self.tmp();
            self.alui(AluImmOp::Sraiw, sign, rx, 31);
            self.alui(AluImmOp::Srliw, bias, sign, 32 - k);
        }
        let sum = self.tmp();
        self.alu(AluOp::Addw, sum, rx, bias);
        sum
    }

    /// `q = x / c` truncating, for `c` not 0 or `i32::MIN`.
    fn div_const(&mut self, rd: Reg, x: Value, c: i32) -> Result<(), BackendError> {
        let rx = self.reg(x)?;
        let ad = c.unsigned_abs();
        if c == 1 {
            self.push(MInst::Mv { rd, rs: rx });
            return Ok(());
        }
        if c == -1 {
            self.alu(AluOp::Subw, rd, ZERO, rx);
            return Ok(());
        }
        if ad.is_power_of_two() {
            let k = ad.trailing_zeros() as i32;
            let sum = self.biased_for_shift(rx, k);
            if c > 0 {
                self.alui(AluImmOp::Sraiw, rd, sum, k);
            } else {
                let q = self.tmp();
                self.alui(AluImmOp::Sraiw, q, sum, k);
                self.alu(AluOp::Subw, rd, ZERO, q);
            }
            return Ok(());
        }
        let (mg, sh) = magic_signed(c);
        let rm = self.cached(CacheKey::Int(mg));
        // mulhs(mg, x): both are sign-extended, so the 64-bit product is exact.
        let prod = self.tmp();
        self.alu(AluOp::Mul, prod, rx, rm);
        let mut q = self.tmp();
        self.alui(AluImmOp::Srai, q, prod, 32);
        if c > 0 && mg < 0 {
            let t = self.tmp();
            self.alu(AluOp::Addw, t, q, rx);
            q = t;
        } else if c < 0 && mg > 0 {
            let t = self.tmp();
            self.alu(AluOp::Subw, t, q, rx);
            q = t;
        }
        if sh > 0 {
            let t = self.tmp();
            self.alui(AluImmOp::Sraiw, t, q, sh as i32);
            q = t;
        }
        // Add one when the quotient so far is negative.
        let sign = self.tmp();
        self.alui(AluImmOp::Srliw, sign, q, 31);
        self.alu(AluOp::Addw, rd, q, sign);
        Ok(())
    }

    /// `r = x % c` with the sign of `x`, for `c` not 0 or `i32::MIN`.
    fn rem_const(&mut self, rd: Reg, x: Value, c: i32) -> Result<(), BackendError> {
        let ad = c.unsigned_abs();
        if ad == 1 {
            self.push(MInst::Mv { rd, rs: ZERO });
            return Ok(());
        }
        let rx = self.reg(x)?;
        if ad.is_power_of_two() {
            let sum = self.biased_for_shift(rx, ad.trailing_zeros() as i32);
            let mask = -(ad as i64);
            let rounded = self.tmp();
            if fits_imm12(mask) {
                self.alui(AluImmOp::Andi, rounded, sum, mask as i32);
            } else {
                let m = self.cached(CacheKey::Int(mask as i32));
                self.alu(AluOp::And, rounded, sum, m);
            }
            self.alu(AluOp::Subw, rd, rx, rounded);
            return Ok(());
        }
        // Lemire, Kaser and Kurz, "Faster Remainder by Direct Computation" (2019),
        // signed form: with `m = ceil(2^64 / |c|)`, the high 64 bits of
        // `(m * x mod 2^64) * |c|` are `|c| - 1` more than `x % c` for `x < 0`
        // and equal to it otherwise (their `fastmod_s32`; [`remainder_magic`]).
        // Two dependent multiplies and a subtraction, where the quotient's
        // sequence and a multiply back take twice as long.
        let (m, pd) = remainder_magic(c);
        let rm = self.cached(CacheKey::Wide(m as i64));
        let rp = self.cached(CacheKey::Int(pd as i32));
        let low = self.tmp();
        self.alu(AluOp::Mul, low, rx, rm);
        let high = self.tmp();
        self.alu(AluOp::Mulhu, high, low, rp);
        let sign = self.tmp();
        self.alui(AluImmOp::Sraiw, sign, rx, 31);
        let mask = self.tmp();
        if fits_imm12((pd - 1) as i64) {
            self.alui(AluImmOp::Andi, mask, sign, (pd - 1) as i32);
        } else {
            let rmask = self.cached(CacheKey::Int((pd - 1) as i32));
            self.alu(AluOp::And, mask, sign, rmask);
        }
        self.alu(AluOp::Subw, rd, high, mask);
        Ok(())
    }
}

/// The multiplier `ceil(2^64 / |c|)` and `|c|` of the direct remainder by `c`,
/// for `|c|` at least 3, below `2^31` and not a power of two.
pub(crate) fn remainder_magic(c: i32) -> (u64, u64) {
    let pd = u64::from(c.unsigned_abs());
    (u64::MAX / pd + 1, pd)
}

#[cfg(test)]
mod tests {
    use super::{magic_signed, remainder_magic};

    /// Evaluates the selected remainder sequence on the host: `mul`, `mulhu`,
    /// `sraiw`, `andi` and `subw` as RV64 computes them.
    fn rem_direct(x: i32, d: i32) -> i32 {
        let (m, pd) = remainder_magic(d);
        let low = m.wrapping_mul(x as i64 as u64);
        let high = ((u128::from(low) * u128::from(pd)) >> 64) as u64;
        let mask = (i64::from(x >> 31) as u64) & (pd - 1);
        high.wrapping_sub(mask) as i32
    }

    #[test]
    fn direct_remainder_matches_truncating_remainder() {
        // Edge divisors and dividends, then pseudo-random ones of every size
        // (an LCG, so the run is the same each time).
        let mut divisors = vec![3, 5, 6, 7, 12, 30, 1000, 300000, 998244353, 1000000007];
        divisors.extend([
            i32::MAX,
            i32::MAX - 1,
            (1 << 30) + 1,
            (1 << 30) - 1,
            -3,
            -30,
            i32::MIN + 1,
        ]);
        let mut xs = vec![
            0,
            1,
            -1,
            2,
            -2,
            i32::MAX,
            i32::MIN,
            i32::MIN + 1,
            i32::MAX - 1,
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 32) as u32
        };
        for _ in 0..300 {
            let bits = next() % 31 + 1;
            let d = (next() & ((1u32 << bits) - 1)) as i32;
            let d = if next() & 1 == 0 { d } else { d.wrapping_neg() };
            if d.unsigned_abs() >= 3 && !d.unsigned_abs().is_power_of_two() {
                divisors.push(d);
            }
        }
        for _ in 0..3000 {
            let bits = next() % 32 + 1;
            xs.push((next() >> (32 - bits)) as i32);
            xs.push(next() as i32);
        }
        for &d in &divisors {
            let ad = d.unsigned_abs();
            for &x in xs.iter().chain(&[
                d,
                -d,
                d - 1,
                1 - d,
                d.wrapping_mul(2),
                i32::MIN + (ad as i32 - 1),
            ]) {
                assert_eq!(rem_direct(x, d), x.wrapping_rem(d), "{x} % {d}");
            }
        }
    }

    /// Evaluates the selected division sequence on the host.
    fn div_by_magic(x: i32, d: i32) -> i32 {
        let (mg, sh) = magic_signed(d);
        let prod = (x as i64) * (mg as i64);
        let mut q = (prod >> 32) as i32;
        if d > 0 && mg < 0 {
            q = q.wrapping_add(x);
        } else if d < 0 && mg > 0 {
            q = q.wrapping_sub(x);
        }
        q >>= sh;
        q.wrapping_add(((q as u32) >> 31) as i32)
    }

    #[test]
    fn magic_division_matches_truncating_division() {
        let divisors = [
            3,
            5,
            6,
            7,
            9,
            10,
            11,
            12,
            13,
            25,
            100,
            641,
            1000,
            10007,
            998244353,
            i32::MAX,
            -3,
            -7,
            -10,
            -1000,
            i32::MIN + 1,
        ];
        let xs = [
            0,
            1,
            -1,
            2,
            -2,
            7,
            -7,
            100,
            -100,
            12345,
            -12345,
            i32::MAX,
            i32::MIN,
            i32::MIN + 1,
            1 << 30,
            -(1 << 30),
            999_999_999,
            -999_999_999,
        ];
        for &d in &divisors {
            for &x in &xs {
                assert_eq!(div_by_magic(x, d), x.wrapping_div(d), "{x} / {d}");
            }
            for x in (-100_000..100_000).step_by(37) {
                assert_eq!(div_by_magic(x, d), x / d, "{x} / {d}");
            }
        }
    }
}
