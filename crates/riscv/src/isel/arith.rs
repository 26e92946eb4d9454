//! Arithmetic: the integer and float binary operations (immediates folded, `*w`
//! forms for i32, plain 64-bit forms for i64) and the unary ones (negation,
//! conversions, `sext`, `trunc`, `fbits`); multiplication by a constant through
//! shifts, and division and remainder by a constant through shifts (powers of two) or
//! a multiply-high by a magic number (Granlund and Montgomery, PLDI 1994), with the
//! 64-bit multiplier of Lemire, Kaser and Kurz (2019), which gives the quotient
//! in one multiply-high and the remainder without the quotient
//! ([`remainder_magic`]).

use super::{CacheKey, Isel};
use crate::mir::*;
use crate::BackendError;
use ir::{BinOp, UnOp, Value};

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
            UnOp::FAbs => self.push(MInst::FAlu {
                op: FAluOp::Sgnjx,
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
            // The i32 is already sign-extended to 64 bits (`inst` aliases the result
            // to the operand instead of coming here).
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
        let c = self.f.as_sext_iconst(divisor)?;
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
        // With the remainder's multiplier `m = ceil(2^64 / |c|)` (below 2^63, so
        // a signed operand), `mulh(x, m)` is `floor(x / |c|)` (Lemire, Kaser and
        // Kurz's bound, `|x| <= 2^31`); for a negative `x` the product is never
        // a multiple of 2^64 ([`remainder_magic`]), so adding one truncates
        // toward zero. One multiply and one addition deep, where Granlund and
        // Montgomery's 32-bit magic number needs shifts and corrections after it.
        let (m, _) = remainder_magic(c);
        let rm = self.cached(CacheKey::Wide(m as i64));
        let high = self.tmp();
        self.alu(AluOp::Mulh, high, rx, rm);
        let sign = self.tmp();
        self.alui(AluImmOp::Srliw, sign, rx, 31);
        if c > 0 {
            self.alu(AluOp::Addw, rd, high, sign);
        } else {
            let q = self.tmp();
            self.alu(AluOp::Addw, q, high, sign);
            self.alu(AluOp::Subw, rd, ZERO, q);
        }
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

/// The multiplier `m = ceil(2^64 / |c|)` and `|c|` of the direct quotient and
/// remainder by `c`, for `|c|` at least 3, below `2^31` and not a power of two.
///
/// `m * |c| = 2^64 + r` with `0 < r < |c|` (2^64 is no multiple of `|c|`), so
/// for `0 < |x| < 2^31`, `|x| * m` is a multiple of 2^64 only if `|x| * r` is,
/// which is positive and below 2^62: never.
pub(crate) fn remainder_magic(c: i32) -> (u64, u64) {
    let pd = u64::from(c.unsigned_abs());
    (u64::MAX / pd + 1, pd)
}

#[cfg(test)]
mod tests {
    use super::remainder_magic;

    /// Evaluates the selected quotient sequence on the host: `mulh`, `srliw`,
    /// `addw` (and `subw` from zero for a negative divisor) as RV64 computes them.
    fn div_direct(x: i32, d: i32) -> i32 {
        let (m, _) = remainder_magic(d);
        let high = ((i128::from(x) * i128::from(m as i64)) >> 64) as i64;
        let q = (high as i32).wrapping_add(((x as u32) >> 31) as i32);
        if d > 0 {
            q
        } else {
            q.wrapping_neg()
        }
    }

    /// Evaluates the selected remainder sequence on the host: `mul`, `mulhu`,
    /// `sraiw`, `andi` and `subw` as RV64 computes them.
    fn rem_direct(x: i32, d: i32) -> i32 {
        let (m, pd) = remainder_magic(d);
        let low = m.wrapping_mul(x as i64 as u64);
        let high = ((u128::from(low) * u128::from(pd)) >> 64) as u64;
        let mask = (i64::from(x >> 31) as u64) & (pd - 1);
        high.wrapping_sub(mask) as i32
    }

    /// Divisors (at least 3 in magnitude, not powers of two) and dividends: edge
    /// cases, then pseudo-random ones of every size (an LCG, so the run is the
    /// same each time).
    fn cases() -> (Vec<i32>, Vec<i32>) {
        let mut divisors = vec![3, 5, 6, 7, 12, 30, 641, 1000, 300000, 998244353, 1000000007];
        divisors.extend([
            i32::MAX,
            i32::MAX - 1,
            (1 << 30) + 1,
            (1 << 30) - 1,
            -3,
            -7,
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
        (divisors, xs)
    }

    /// Checks `f` against `reference` for every case, with dividends near
    /// multiples of each divisor besides.
    fn check(f: fn(i32, i32) -> i32, reference: fn(i32, i32) -> i32, what: &str) {
        let (divisors, xs) = cases();
        for &d in &divisors {
            let ad = d.unsigned_abs() as i32;
            let near = [
                d,
                -d,
                d - 1,
                1 - d,
                d.wrapping_mul(2),
                d.wrapping_mul(2).wrapping_sub(1),
                i32::MIN + (ad - 1),
                i32::MIN + ad,
            ];
            for &x in xs.iter().chain(&near) {
                assert_eq!(f(x, d), reference(x, d), "{x} {what} {d}");
            }
        }
    }

    #[test]
    fn direct_quotient_matches_truncating_division() {
        check(div_direct, i32::wrapping_div, "/");
    }

    #[test]
    fn direct_remainder_matches_truncating_remainder() {
        check(rem_direct, i32::wrapping_rem, "%");
    }
}
