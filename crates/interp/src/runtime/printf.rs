//! `putf(fmt, ...)`: C's `printf` as glibc formats it, for the conversions a SysY
//! program can meaningfully use: `%d %i %u %x %X %o %c %s %f %F %e %E %g %G %a %A %p %n
//! %%` with flags `- + space # 0`, width and precision (numbers or `*`) and length
//! modifiers (`hh h l ll j z t q L`). Variadic arguments arrive as RV64 registers would
//! hold them: ints sign-extended to 64 bits, floats promoted to double (bit pattern),
//! pointers as addresses; a conversion reads the register as its own type, as `va_arg`
//! does. Missing arguments read as 0. Decimal float digits come from Rust's exact
//! float formatting (correctly rounded, ties to even, like glibc).

use super::hexfloat::format_a;
use crate::error::ErrorKind;
use crate::memory::Memory;

#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
}

/// Length modifier classes that change how an integer argument is read.
#[derive(Copy, Clone, PartialEq)]
enum Len {
    Char,
    Short,
    Int,
    Long,
}

/// Appends `printf(fmt, args...)` to `out`. `mem` serves `%s` and `%n`.
pub(crate) fn format(
    fmt: &[u8],
    args: &[u64],
    mem: &mut Memory,
    out: &mut Vec<u8>,
) -> Result<(), ErrorKind> {
    let start_len = out.len();
    let mut args = args.iter().copied();
    let mut next = move || args.next().unwrap_or(0);
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        let spec_start = i;
        i += 1;
        let mut spec = Spec::default();
        while let Some(&f) = fmt.get(i) {
            match f {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alt = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        if fmt.get(i) == Some(&b'*') {
            let w = next() as i32;
            if w < 0 {
                spec.left = true;
            }
            spec.width = w.unsigned_abs() as usize;
            i += 1;
        } else {
            spec.width = read_number(fmt, &mut i);
        }
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            if fmt.get(i) == Some(&b'*') {
                let p = next() as i32;
                spec.precision = (p >= 0).then_some(p as usize);
                i += 1;
            } else {
                spec.precision = Some(read_number(fmt, &mut i));
            }
        }
        let mut len = Len::Int;
        while let Some(&l) = fmt.get(i) {
            len = match l {
                b'h' if len == Len::Short => Len::Char,
                b'h' => Len::Short,
                b'l' | b'j' | b'z' | b't' | b'q' | b'L' => Len::Long,
                _ => break,
            };
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else {
            // A lone `%` at the end: glibc prints it as is.
            out.extend_from_slice(&fmt[spec_start..]);
            break;
        };
        i += 1;
        match conv {
            b'd' | b'i' => {
                let v = match len {
                    Len::Char => next() as i8 as i64,
                    Len::Short => next() as i16 as i64,
                    Len::Int => next() as i32 as i64,
                    Len::Long => next() as i64,
                };
                let sign = if v < 0 {
                    "-"
                } else if spec.plus {
                    "+"
                } else if spec.space {
                    " "
                } else {
                    ""
                };
                let digits = int_digits(v.unsigned_abs(), 10, false, spec.precision);
                pad_number(out, &spec, sign, &digits, spec.precision.is_none());
            }
            b'u' | b'x' | b'X' | b'o' => {
                let v = match len {
                    Len::Char => next() as u8 as u64,
                    Len::Short => next() as u16 as u64,
                    Len::Int => next() as u32 as u64,
                    Len::Long => next(),
                };
                let (base, upper) = match conv {
                    b'x' => (16, false),
                    b'X' => (16, true),
                    b'o' => (8, false),
                    _ => (10, false),
                };
                let mut digits = int_digits(v, base, upper, spec.precision);
                let mut prefix = "";
                if spec.alt {
                    if base == 16 && v != 0 {
                        prefix = if upper { "0X" } else { "0x" };
                    } else if base == 8 && !digits.starts_with('0') {
                        digits.insert(0, '0');
                    }
                }
                pad_number(out, &spec, prefix, &digits, spec.precision.is_none());
            }
            b'c' => {
                let b = next() as u8;
                pad_bytes(out, &spec, &[b]);
            }
            b's' => {
                let addr = next();
                let mut s = Vec::new();
                let mut a = addr;
                while spec.precision.is_none_or(|p| s.len() < p) {
                    let b = mem.load8(a)?;
                    if b == 0 {
                        break;
                    }
                    s.push(b);
                    a = a.wrapping_add(1);
                }
                pad_bytes(out, &spec, &s);
            }
            b'p' => {
                let v = next();
                if v == 0 {
                    pad_bytes(out, &spec, b"(nil)");
                } else {
                    let digits = int_digits(v, 16, false, spec.precision);
                    let sign = if spec.plus {
                        "+0x"
                    } else if spec.space {
                        " 0x"
                    } else {
                        "0x"
                    };
                    pad_number(out, &spec, sign, &digits, spec.precision.is_none());
                }
            }
            b'n' => {
                let addr = next();
                let count = (out.len() - start_len) as u32;
                mem.store32(addr, count)?;
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let x = f64::from_bits(next());
                format_float(out, &spec, conv, x);
            }
            b'%' => out.push(b'%'),
            _ => out.extend_from_slice(&fmt[spec_start..i]),
        }
    }
    Ok(())
}

fn read_number(fmt: &[u8], i: &mut usize) -> usize {
    let mut n: usize = 0;
    while let Some(&d) = fmt.get(*i) {
        if !d.is_ascii_digit() {
            break;
        }
        n = n
            .saturating_mul(10)
            .saturating_add((d - b'0') as usize)
            .min(1 << 20);
        *i += 1;
    }
    n
}

/// Digits of `v` in `base`, zero-extended to `precision` digits; precision 0 and
/// value 0 give no digits.
fn int_digits(v: u64, base: u64, upper: bool, precision: Option<usize>) -> String {
    let mut s = match (base, upper) {
        (16, false) => format!("{v:x}"),
        (16, true) => format!("{v:X}"),
        (8, _) => format!("{v:o}"),
        _ => v.to_string(),
    };
    if let Some(p) = precision {
        if p == 0 && v == 0 {
            s.clear();
        } else if s.len() < p {
            s.insert_str(0, &"0".repeat(p - s.len()));
        }
    }
    s
}

/// Writes `prefix` (sign, `0x`) and `body` padded to the width: zeros between them
/// when the `0` flag applies, spaces otherwise.
fn pad_number(out: &mut Vec<u8>, spec: &Spec, prefix: &str, body: &str, zero_ok: bool) {
    let len = prefix.len() + body.len();
    let fill = spec.width.saturating_sub(len);
    if spec.left {
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(body.as_bytes());
        out.resize(out.len() + fill, b' ');
    } else if spec.zero && zero_ok {
        out.extend_from_slice(prefix.as_bytes());
        out.resize(out.len() + fill, b'0');
        out.extend_from_slice(body.as_bytes());
    } else {
        out.resize(out.len() + fill, b' ');
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(body.as_bytes());
    }
}

fn pad_bytes(out: &mut Vec<u8>, spec: &Spec, body: &[u8]) {
    let fill = spec.width.saturating_sub(body.len());
    if spec.left {
        out.extend_from_slice(body);
        out.resize(out.len() + fill, b' ');
    } else {
        out.resize(out.len() + fill, b' ');
        out.extend_from_slice(body);
    }
}

/// `%e`-style text of `x >= 0` with `p` fraction digits: mantissa digits and the
/// decimal exponent.
fn exp_parts(x: f64, p: usize) -> (String, i32) {
    let s = format!("{x:.p$e}");
    match s.split_once('e') {
        Some((m, e)) => (m.to_string(), e.parse().unwrap_or(0)),
        None => (s, 0),
    }
}

fn exp_text(mantissa: &str, exp: i32, upper: bool) -> String {
    let e = if upper { 'E' } else { 'e' };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{e}{sign}{:02}", exp.unsigned_abs())
}

/// Removes trailing zeros of the fraction (and a bare point) of `%g` output.
fn trim_fraction(s: &mut String) {
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
}

fn format_float(out: &mut Vec<u8>, spec: &Spec, conv: u8, x: f64) {
    let upper = conv.is_ascii_uppercase();
    let negative = x.is_sign_negative();
    let sign = if negative {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    if !x.is_finite() {
        let t = match (x.is_nan(), upper) {
            (true, false) => "nan",
            (true, true) => "NAN",
            (false, false) => "inf",
            (false, true) => "INF",
        };
        pad_number(out, spec, sign, t, false);
        return;
    }
    let a = x.abs();
    match conv.to_ascii_lowercase() {
        b'f' => {
            let p = spec.precision.unwrap_or(6);
            let mut s = format!("{a:.p$}");
            if spec.alt && p == 0 {
                s.push('.');
            }
            pad_number(out, spec, sign, &s, true);
        }
        b'e' => {
            let p = spec.precision.unwrap_or(6);
            let (mut m, e) = exp_parts(a, p);
            if spec.alt && p == 0 {
                m.push('.');
            }
            pad_number(out, spec, sign, &exp_text(&m, e, upper), true);
        }
        b'g' => {
            let p = match spec.precision {
                None => 6,
                Some(0) => 1,
                Some(p) => p,
            };
            let (_, x_exp) = exp_parts(a, p - 1);
            // glibc picks the style from the exponent before rounding; when rounding
            // then carries into exponent P, it prints `1.e+P` under `#` (where C99
            // asks for P-1 zeros). Without `#` the zeros are trimmed anyway.
            // `{:.800e}` is exact for every double, so its exponent is floor(log10).
            let carried_into_e_style =
                spec.alt && x_exp as i64 == p as i64 && exp_parts(a, 800).1 < x_exp && a != 0.0;
            let mut s = if carried_into_e_style {
                exp_text("1.", x_exp, upper)
            } else if (x_exp as i64) < p as i64 && x_exp >= -4 {
                let fp = (p as i64 - 1 - x_exp as i64) as usize;
                let mut s = format!("{a:.fp$}");
                if spec.alt && !s.contains('.') {
                    s.push('.');
                }
                s
            } else {
                let (mut m, e) = exp_parts(a, p - 1);
                if spec.alt && !m.contains('.') {
                    m.push('.');
                }
                if !spec.alt {
                    trim_fraction(&mut m);
                }
                exp_text(&m, e, upper)
            };
            if !spec.alt && !s.contains(['e', 'E']) {
                trim_fraction(&mut s);
            }
            pad_number(out, spec, sign, &s, true);
        }
        _ => {
            let (_, s) = format_a(a, spec.precision, upper, spec.alt);
            let (prefix, body) = s.split_at(2);
            let full_prefix = format!("{sign}{prefix}");
            pad_number(out, spec, &full_prefix, body, true);
        }
    }
}
