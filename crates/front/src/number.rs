//! Conversion of numeric literal text to values.
//!
//! Integers: decimal, octal (leading `0`) and hexadecimal, any value up to 2^32-1,
//! reinterpreted as i32 two's complement (`0x80000000` is `i32::MIN`). Floats: decimal
//! through Rust's correctly rounded `f32` parser; hexadecimal (C99 `0x1.8p3`) through an
//! exact converter with round-to-nearest-even, subnormals and overflow to infinity.

/// Parses an integer literal (`123`, `0173`, `0x7B`).
pub fn parse_int(text: &str) -> Result<i32, String> {
    let (digits, radix) =
        if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            (h, 16)
        } else if text.len() > 1 && text.starts_with('0') {
            (&text[1..], 8)
        } else {
            (text, 10)
        };
    let mut v: u64 = 0;
    for c in digits.chars() {
        let d = match c.to_digit(radix) {
            Some(d) => d,
            None => return Err(format!("invalid digit `{c}` in octal constant")),
        };
        v = v * u64::from(radix) + u64::from(d);
        if v > u64::from(u32::MAX) {
            return Err(format!("integer literal `{text}` is too large"));
        }
    }
    Ok(v as u32 as i32)
}

/// Parses a decimal float literal (`1.5`, `.5`, `1.`, `1e-3`), correctly rounded.
pub fn parse_dec_float(text: &str) -> Option<f32> {
    text.parse::<f32>().ok()
}

/// Parses a hexadecimal float literal (`0x1.921fb6p+1`, `0x.AP-3`), correctly rounded
/// to nearest even.
pub fn parse_hex_float(text: &str) -> Option<f32> {
    let body = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))?;
    let p = body.find(['p', 'P'])?;
    let (mant, exp) = (&body[..p], &body[p + 1..]);
    let (int_part, frac_part) = match mant.find('.') {
        Some(d) => (&mant[..d], &mant[d + 1..]),
        None => (mant, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    // Accumulate up to 15 significant hex digits (60 bits) exactly; later digits only
    // matter as a sticky bit (and, before the point, as a scale).
    let mut m: u64 = 0;
    let mut sticky = false;
    let mut e2: i64 = 0;
    for c in int_part.chars() {
        let d = u64::from(c.to_digit(16)?);
        if m < 1 << 56 {
            m = m * 16 + d;
        } else {
            sticky |= d != 0;
            e2 += 4;
        }
    }
    for c in frac_part.chars() {
        let d = u64::from(c.to_digit(16)?);
        if m < 1 << 56 {
            m = m * 16 + d;
            e2 -= 4;
        } else {
            sticky |= d != 0;
        }
    }
    let (neg, digits) = match exp.as_bytes().first()? {
        b'-' => (true, &exp[1..]),
        b'+' => (false, &exp[1..]),
        _ => (false, exp),
    };
    if digits.is_empty() {
        return None;
    }
    let mut x: i64 = 0;
    for c in digits.chars() {
        x = (x * 10 + i64::from(c.to_digit(10)?)).min(1_000_000);
    }
    e2 += if neg { -x } else { x };
    Some(make_f32(m, sticky, e2))
}

/// The f32 nearest to `(m + sticky·ε) · 2^e2` (ε an infinitesimal below the last bit of
/// `m`), ties to even.
pub fn make_f32(m: u64, sticky: bool, e2: i64) -> f32 {
    if m == 0 {
        return 0.0;
    }
    let m = u128::from(m);
    let n = 128 - i64::from(m.leading_zeros()); // bit length
    let top = e2 + n - 1; // value in [2^top, 2^(top+1))
    let unit = (top - 23).max(-149); // exponent of the result's last bit
    let shift = unit - e2;
    let mut q: u128 = if shift <= 0 {
        m << (-shift) as u32
    } else if shift >= 128 {
        // Far below half a unit (m < 2^64 <= 2^(shift-1)).
        0
    } else {
        let q = m >> shift as u32;
        let rem = m & ((1u128 << shift as u32) - 1);
        let half = 1u128 << (shift - 1) as u32;
        let up = rem > half || (rem == half && (sticky || q & 1 == 1));
        q + u128::from(up)
    };
    let mut unit = unit;
    if q == 1 << 24 {
        q = 1 << 23;
        unit += 1;
    }
    if q < 1 << 23 {
        // Subnormal (unit == -149) or zero.
        return f32::from_bits(q as u32);
    }
    let biased = unit + 150;
    if biased >= 255 {
        return f32::INFINITY;
    }
    f32::from_bits(((biased as u32) << 23) | (q as u32 - (1 << 23)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints() {
        assert_eq!(parse_int("0"), Ok(0));
        assert_eq!(parse_int("00"), Ok(0));
        assert_eq!(parse_int("017"), Ok(15));
        assert_eq!(parse_int("0777"), Ok(511));
        assert_eq!(parse_int("0x7fffffff"), Ok(i32::MAX));
        assert_eq!(parse_int("0x80000000"), Ok(i32::MIN));
        assert_eq!(parse_int("0XFFFFFFFF"), Ok(-1));
        assert_eq!(parse_int("2147483647"), Ok(i32::MAX));
        assert_eq!(parse_int("2147483648"), Ok(i32::MIN));
        assert_eq!(parse_int("020000000000"), Ok(i32::MIN));
        assert!(parse_int("4294967296").is_err());
        assert!(parse_int("0x100000000").is_err());
        assert!(parse_int("08").is_err());
        assert!(parse_int("99999999999999999999999999").is_err());
    }

    #[test]
    fn int_min_by_negation() {
        // `-2147483648` is unary minus applied to 2147483648, which wraps to itself.
        let v = parse_int("2147483648").unwrap();
        assert_eq!(v.wrapping_neg(), i32::MIN);
    }

    #[test]
    fn dec_floats() {
        assert_eq!(parse_dec_float("1.5"), Some(1.5));
        assert_eq!(parse_dec_float(".5"), Some(0.5));
        assert_eq!(parse_dec_float("1."), Some(1.0));
        assert_eq!(parse_dec_float("1e-3"), Some(0.001));
        assert_eq!(parse_dec_float("3.4028236e38"), Some(f32::INFINITY));
        assert_eq!(parse_dec_float("0.1"), Some(0.1f32));
        assert_eq!(parse_dec_float("1e-50"), Some(0.0));
    }

    #[test]
    fn hex_floats() {
        let h = |s| parse_hex_float(s).unwrap();
        assert_eq!(h("0x1p0"), 1.0);
        assert_eq!(h("0x1.921fb6p+1"), std::f32::consts::PI);
        assert_eq!(h("0x.AP-3"), 0.078125);
        assert_eq!(h("0xA.p0"), 10.0);
        assert_eq!(h("0x1.8p1"), 3.0);
        assert_eq!(h("0X1P-149"), f32::from_bits(1));
        assert_eq!(h("0x1p-150"), 0.0); // tie -> even (0)
        assert_eq!(h("0x1.0000000001p-150"), f32::from_bits(1)); // above the tie
        assert_eq!(h("0x1.8p-149"), f32::from_bits(2)); // tie -> even (2)
        assert_eq!(h("0x1.fffffep127"), f32::MAX);
        assert_eq!(h("0x1.ffffffp127"), f32::INFINITY); // rounds up to 2^128
        assert_eq!(h("0x1p128"), f32::INFINITY);
        assert_eq!(h("0x1p-126"), f32::MIN_POSITIVE);
        assert_eq!(h("0x0.fffffffp-126"), f32::MIN_POSITIVE); // subnormal rounds to normal
                                                              // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even is 1.
        assert_eq!(h("0x1.000001p0"), 1.0);
        assert_eq!(h("0x1.000003p0"), 1.0 + 2.0 * f32::EPSILON);
        // A sticky digit far to the right breaks the tie upward.
        assert_eq!(h("0x1.00000100000000000000001p0"), 1.0 + f32::EPSILON);
        assert_eq!(
            h("0x123456789abcdef0123p0"),
            0x123456789abcdef0123u128 as f32
        );
        assert_eq!(h("0x0p99999999999"), 0.0);
        assert_eq!(h("0x1p99999999999"), f32::INFINITY);
        assert_eq!(h("0x1p-99999999999"), 0.0);
        assert_eq!(h("0x000000000000000000000001p0"), 1.0);
    }

    #[test]
    fn hex_floats_match_decimal_for_many_values() {
        // Every exactly representable f32 written in hex must round-trip.
        let mut x: u32 = 0x1234_5678;
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let f = f32::from_bits(x & 0x7fff_ffff);
            if !f.is_finite() {
                continue;
            }
            let bits = f.to_bits();
            let (e, m) = (bits >> 23, bits & 0x7f_ffff);
            let text = if e == 0 {
                format!("0x0.{:06x}p-126", m << 1)
            } else {
                format!("0x1.{:06x}p{}", m << 1, e as i32 - 127)
            };
            assert_eq!(parse_hex_float(&text), Some(f), "{text}");
        }
    }
}
