//! Hexadecimal floating point, both ways, bit-exact with glibc:
//! - [`format_a`]: `printf("%a")` of a double (glibc's `__printf_fphex`): `0x1.8p+0`,
//!   shortest digits with trailing zeros removed unless a precision is given, which
//!   rounds to nearest-even on the dropped hex digits; subnormal doubles print as
//!   `0x0.xxxp-1022`.
//! - [`hex_to_f32`]: the exact value of a hex mantissa and binary exponent rounded once,
//!   to nearest-even, to `f32` (what `strtof` does; never via `double`, which would
//!   round twice).

/// `f32` to `f64` as RISC-V's `fcvt.d.s` does it: exact, except that every NaN becomes
/// the canonical quiet NaN (so `putfloat` of any NaN prints `nan`, never `-nan`).
pub(crate) fn f32_to_f64_riscv(x: f32) -> f64 {
    if x.is_nan() {
        f64::from_bits(0x7ff8_0000_0000_0000)
    } else {
        x as f64
    }
}

/// `printf("%a")` of `x` without sign, padding or `0x` handling by the caller:
/// returns `(negative, text)` where text is `0x1.8p+0`, `inf` or `nan` (upper case
/// for `%A`). `alt` is the `#` flag (always print the point).
pub(crate) fn format_a(x: f64, precision: Option<usize>, upper: bool, alt: bool) -> (bool, String) {
    let bits = x.to_bits();
    let negative = bits >> 63 != 0;
    let exp_field = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let text = if exp_field == 0x7ff {
        if frac == 0 { "inf" } else { "nan" }.to_string()
    } else {
        let (mut lead, exp) = match (exp_field, frac) {
            (0, 0) => (0u64, 0i64),
            (0, _) => (0, -1022),
            _ => (1, exp_field - 1023),
        };
        // 13 hex digits of fraction.
        let mut digits: Vec<u8> = (0..13)
            .rev()
            .map(|i| ((frac >> (i * 4)) & 0xf) as u8)
            .collect();
        match precision {
            None => {
                while digits.last() == Some(&0) {
                    digits.pop();
                }
            }
            Some(p) if p < 13 => {
                let next = digits[p];
                let more = digits[p + 1..].iter().any(|&d| d != 0) || next & 7 != 0;
                let last_odd = if p > 0 {
                    digits[p - 1] & 1
                } else {
                    (lead & 1) as u8
                } != 0;
                digits.truncate(p);
                if next >= 8 && (last_odd || more) {
                    // Propagate the carry; a carry out of the digits bumps the
                    // leading digit (glibc prints `0x2p+0`, it does not renormalise).
                    let mut carry = true;
                    for d in digits.iter_mut().rev() {
                        if *d == 15 {
                            *d = 0;
                        } else {
                            *d += 1;
                            carry = false;
                            break;
                        }
                    }
                    if carry {
                        lead += 1;
                    }
                }
            }
            Some(p) => digits.resize(p, 0),
        }
        let hex = if upper {
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        let mut s = String::with_capacity(24);
        s.push_str(if upper { "0X" } else { "0x" });
        s.push(hex[lead as usize] as char);
        if !digits.is_empty() || alt {
            s.push('.');
        }
        for d in digits {
            s.push(hex[d as usize] as char);
        }
        s.push(if upper { 'P' } else { 'p' });
        if exp >= 0 {
            s.push('+');
        }
        s.push_str(&exp.to_string());
        s
    };
    let text = if upper { text.to_uppercase() } else { text };
    (negative, text)
}

/// `putfloat`'s text: `printf("%a", (double)x)` on RV64.
pub(crate) fn putfloat_text(x: f32) -> String {
    let (neg, body) = format_a(f32_to_f64_riscv(x), None, false, false);
    if neg {
        format!("-{body}")
    } else {
        body
    }
}

/// Rounds `±0x<digits>p<exp>` to the nearest `f32` (ties to even). `digits` are hex
/// digits with at most one `.`; `exp` is the binary exponent (saturated by the caller
/// to a range far beyond `f32`'s).
pub(crate) fn hex_to_f32(negative: bool, digits: &[u8], exp: i64) -> f32 {
    // value = m * 2^e, plus `sticky` below m's last bit when m ran out of room.
    let mut m: u64 = 0;
    let mut e: i64 = exp;
    let mut sticky = false;
    let mut after_point = false;
    for &c in digits {
        if c == b'.' {
            after_point = true;
            continue;
        }
        let d = (c as char).to_digit(16).unwrap_or(0) as u64;
        if m < 1 << 59 {
            m = m * 16 + d;
            if after_point {
                e -= 4;
            }
        } else {
            sticky |= d != 0;
            if !after_point {
                e += 4;
            }
        }
    }
    let sign = if negative { 1u32 << 31 } else { 0 };
    if m == 0 {
        return f32::from_bits(sign);
    }
    // Exponent of the top bit, and the weight of the last bit we can keep:
    // 24 significant bits for normals, 2^-149 at the bottom of the subnormals.
    let top = 63 - m.leading_zeros() as i64;
    let top_exp = top + e;
    if top_exp > 127 {
        return f32::from_bits(sign | 0x7f80_0000);
    }
    if top_exp < -126 && top >= 24 {
        // glibc (2.36, the target's too) first truncates to 24 significant bits plus a
        // round bit and sticky bits, then, for a subnormal result, re-rounds the 24
        // bits using only the bits below the new round position and the old sticky
        // bits: the old round bit (the 25th significant bit) is lost
        // (`round_and_return` in stdlib/strtod_l.c). Clearing it reproduces that:
        // strtof("0x1.400001p-148") is 2 ulps there, not 3.
        m &= !(1u64 << (top - 24));
    }
    let lsb_exp = (top_exp - 23).max(-149);
    let shift = lsb_exp - e;
    let mut mant = if shift <= 0 {
        m << (-shift) as u32
    } else {
        let (kept, half, rest) = if shift >= 64 {
            (
                0,
                shift == 64 && m >> 63 != 0,
                if shift == 64 { m << 1 != 0 } else { true },
            )
        } else {
            let kept = m >> shift;
            let half = (m >> (shift - 1)) & 1 != 0;
            let rest = m & ((1u64 << (shift - 1)) - 1) != 0;
            (kept, half, rest)
        };
        if half && (rest || sticky || kept & 1 != 0) {
            kept + 1
        } else {
            kept
        }
    };
    let mut lsb_exp = lsb_exp;
    if mant == 1 << 24 {
        mant >>= 1;
        lsb_exp += 1;
    }
    if mant >= 1 << 23 {
        let unbiased = lsb_exp + 23;
        if unbiased > 127 {
            return f32::from_bits(sign | 0x7f80_0000);
        }
        f32::from_bits(sign | (((unbiased + 127) as u32) << 23) | (mant as u32 & 0x7f_ffff))
    } else {
        // Subnormal (lsb_exp == -149): the bits are the mantissa itself.
        f32::from_bits(sign | mant as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn putfloat_known_values() {
        assert_eq!(putfloat_text(1.5), "0x1.8p+0");
        assert_eq!(putfloat_text(0.0), "0x0p+0");
        assert_eq!(putfloat_text(-0.0), "-0x0p+0");
        assert_eq!(putfloat_text(1.0), "0x1p+0");
        assert_eq!(putfloat_text(0.1), "0x1.99999ap-4");
        assert_eq!(putfloat_text(1e-40), "0x1.16c2p-133");
        assert_eq!(putfloat_text(f32::INFINITY), "inf");
        assert_eq!(putfloat_text(f32::NEG_INFINITY), "-inf");
        assert_eq!(putfloat_text(-f32::NAN), "nan");
        assert_eq!(putfloat_text(f32::MAX), "0x1.fffffep+127");
    }

    #[test]
    fn format_a_precision_and_subnormal_doubles() {
        assert_eq!(format_a(1.0, Some(0), false, false).1, "0x1p+0");
        assert_eq!(format_a(1.5, Some(0), false, false).1, "0x2p+0");
        assert_eq!(format_a(1.5, Some(0), false, true).1, "0x2.p+0");
        assert_eq!(format_a(1.0, Some(3), true, false).1, "0X1.000P+0");
        assert_eq!(
            format_a(f64::from_bits(1), None, false, false).1,
            "0x0.0000000000001p-1022"
        );
    }

    fn hex(s: &str) -> f32 {
        let (neg, s) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let (m, e) = s.split_once('p').unwrap();
        hex_to_f32(neg, m.as_bytes(), e.parse().unwrap())
    }

    #[test]
    fn hex_parsing_rounds_once_to_nearest_even() {
        assert_eq!(hex("1.8p0"), 1.5);
        assert_eq!(hex("-0.0p0").to_bits(), (-0.0f32).to_bits());
        assert_eq!(hex("1.999999999999ap-4"), 0.1f32);
        assert_eq!(hex("1.fffffep127"), f32::MAX);
        assert_eq!(hex("1.ffffffp127"), f32::INFINITY);
        assert_eq!(hex("1p-149"), f32::from_bits(1));
        assert_eq!(hex("1p-150"), 0.0); // tie to even: 0
        assert_eq!(hex("1.0000000001p-150"), f32::from_bits(1));
        // glibc's subnormal rounding ignores the 25th significant bit.
        assert_eq!(hex("1.000001p-150"), 0.0);
        assert_eq!(hex("1.400001p-148"), f32::from_bits(2));
        assert_eq!(hex("1.400002p-148"), f32::from_bits(3));
        assert_eq!(hex("3p-150"), f32::from_bits(2)); // 1.5 ulp: tie to even 2
        assert_eq!(hex("1.000001p0"), 1.0); // exactly half an ulp above 1: even
        assert_eq!(hex("1.000003p0"), 1.0 + f32::EPSILON * 2.0); // half above odd: up
        assert_eq!(hex("1.0000010000000000000000001p0"), 1.0 + f32::EPSILON);
        assert_eq!(hex("0.000000000000000000000000000001p120"), 1.0);
        assert_eq!(hex("1fffffe000000000000000p-84"), hex("1.fffffep0"));
        assert_eq!(hex("1.fffffffp-127"), f32::from_bits(0x0080_0000)); // rounds up to normal
        assert_eq!(hex("1p-999999"), 0.0);
        assert_eq!(hex("1p999999"), f32::INFINITY);
    }
}
