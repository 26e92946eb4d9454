//! Reading stdin as the runtime's `scanf` calls do, following glibc's `vfscanf`:
//! `%d` skips white space, takes an optional sign and decimal digits, converts with
//! `strtol` (saturating to 64 bits) and truncates to `int`; `%c` takes one byte;
//! `%a` (any float conversion) skips white space and collects the longest float-looking
//! token glibc would (sign, `nan`/`inf`/`infinity`, `0x` hex or decimal digits with
//! one point and an exponent), then converts it like `strtof` (longest valid prefix,
//! correctly rounded). A failed conversion leaves the runtime's default (0, 0.0, and
//! -1 for `getch` at end of input).

use super::hexfloat::hex_to_f32;
use std::io::{ErrorKind as IoErrorKind, Read};

/// A buffered byte reader with one byte of look-ahead.
pub(crate) struct Input<'a> {
    src: &'a mut dyn Read,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    eof: bool,
    /// The first read error, reported after the runtime call that met it.
    pub error: Option<String>,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

impl<'a> Input<'a> {
    pub fn new(src: &'a mut dyn Read) -> Self {
        Input {
            src,
            buf: vec![0; 1 << 16],
            pos: 0,
            len: 0,
            eof: false,
            error: None,
        }
    }

    /// The next byte without consuming it; `None` at end of input.
    pub fn peek(&mut self) -> Option<u8> {
        while self.pos == self.len {
            if self.eof {
                return None;
            }
            match self.src.read(&mut self.buf) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    self.pos = 0;
                    self.len = n;
                }
                Err(e) if e.kind() == IoErrorKind::Interrupted => {}
                Err(e) => {
                    self.error.get_or_insert_with(|| e.to_string());
                    self.eof = true;
                }
            }
        }
        Some(self.buf[self.pos])
    }

    /// Consumes and returns the next byte.
    pub fn next_byte(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(is_space) {
            self.pos += 1;
        }
    }

    /// Consumes the next byte if `pred` accepts it.
    fn take_if(&mut self, pred: impl Fn(u8) -> bool) -> Option<u8> {
        let c = self.peek()?;
        if pred(c) {
            self.pos += 1;
            Some(c)
        } else {
            None
        }
    }

    /// `scanf("%d")`: `None` when no integer could be read.
    pub fn scan_int(&mut self) -> Option<i32> {
        self.skip_space();
        let negative = match self.take_if(|c| c == b'+' || c == b'-') {
            Some(c) => c == b'-',
            None => false,
        };
        let mut any = false;
        // strtol: the magnitude saturates at 2^63 (then LONG_MAX / LONG_MIN).
        let mut mag: u64 = 0;
        while let Some(c) = self.take_if(|c| c.is_ascii_digit()) {
            any = true;
            mag = mag.saturating_mul(10).saturating_add((c - b'0') as u64);
        }
        if !any {
            return None;
        }
        let long: i64 = if negative {
            if mag >= 1 << 63 {
                i64::MIN
            } else {
                -(mag as i64)
            }
        } else {
            mag.min(i64::MAX as u64) as i64
        };
        Some(long as i32)
    }

    /// `scanf("%a")` into a float: `None` on a matching failure.
    pub fn scan_float(&mut self) -> Option<f32> {
        self.skip_space();
        let mut tok: Vec<u8> = Vec::new();
        let mut got_sign = false;
        if let Some(c) = self.take_if(|c| c == b'+' || c == b'-') {
            tok.push(c);
            got_sign = true;
        }
        let first = self.peek()?;
        if first.eq_ignore_ascii_case(&b'n') {
            for want in *b"nan" {
                tok.push(self.take_if(|c| c.eq_ignore_ascii_case(&want))?);
            }
            return parse_float_prefix(&tok);
        }
        if first.eq_ignore_ascii_case(&b'i') {
            for want in *b"inf" {
                tok.push(self.take_if(|c| c.eq_ignore_ascii_case(&want))?);
            }
            if self.peek().is_some_and(|c| c.eq_ignore_ascii_case(&b'i')) {
                for want in *b"inity" {
                    tok.push(self.take_if(|c| c.eq_ignore_ascii_case(&want))?);
                }
            }
            return parse_float_prefix(&tok);
        }
        let mut hexa = false;
        let mut got_digit = false;
        if first == b'0' {
            self.pos += 1;
            tok.push(b'0');
            if let Some(x) = self.take_if(|c| c == b'x' || c == b'X') {
                tok.push(x);
                hexa = true;
            } else {
                got_digit = true;
            }
        }
        let exp_char = if hexa { b'p' } else { b'e' };
        let (mut got_e, mut got_dot) = (false, false);
        while let Some(c) = self.peek() {
            let accept = if c.is_ascii_digit() || (!got_e && hexa && c.is_ascii_hexdigit()) {
                got_digit = true;
                true
            } else if got_e && tok.last() == Some(&exp_char) && (c == b'-' || c == b'+') {
                true
            } else if got_digit && !got_e && c.to_ascii_lowercase() == exp_char {
                got_e = true;
                got_dot = true;
                true
            } else if !got_dot && c == b'.' {
                got_dot = true;
                true
            } else {
                false
            };
            if !accept {
                break;
            }
            self.pos += 1;
            tok.push(if got_e && c.to_ascii_lowercase() == exp_char {
                exp_char
            } else {
                c
            });
        }
        if tok.len() == got_sign as usize || (hexa && tok.len() == 2 + got_sign as usize) {
            return None;
        }
        parse_float_prefix(&tok)
    }
}

/// `strtof` on `s`: the longest prefix that is a float, correctly rounded; `None` if
/// no prefix is.
pub(crate) fn parse_float_prefix(s: &[u8]) -> Option<f32> {
    let (negative, rest) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower: Vec<u8> = rest.iter().map(|c| c.to_ascii_lowercase()).collect();
    let sign = |x: f32| if negative { -x } else { x };
    if lower.starts_with(b"inf") {
        return Some(sign(f32::INFINITY));
    }
    if lower.starts_with(b"nan") {
        return Some(sign(f32::NAN));
    }
    let is_hex = lower.len() > 2
        && lower.starts_with(b"0x")
        && (lower[2].is_ascii_hexdigit()
            || (lower[2] == b'.' && lower.get(3).is_some_and(|c| c.is_ascii_hexdigit())));
    let digit = |c: u8| {
        if is_hex {
            c.is_ascii_hexdigit()
        } else {
            c.is_ascii_digit()
        }
    };
    let start = if is_hex { 2 } else { 0 };
    // Mantissa: digits with at most one point, at least one digit.
    let mut i = start;
    let mut ndigits = 0;
    let mut seen_point = false;
    while i < lower.len() {
        let c = lower[i];
        if digit(c) {
            ndigits += 1;
        } else if c == b'.' && !seen_point {
            seen_point = true;
        } else {
            break;
        }
        i += 1;
    }
    if ndigits == 0 {
        return None;
    }
    let mant_end = i;
    // Optional exponent, only if at least one digit follows.
    let exp_char = if is_hex { b'p' } else { b'e' };
    let mut exp: i64 = 0;
    let mut end = mant_end;
    if lower.get(i) == Some(&exp_char) {
        let mut j = i + 1;
        let exp_negative = match lower.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let digits_start = j;
        while j < lower.len() && lower[j].is_ascii_digit() {
            exp = (exp * 10 + (lower[j] - b'0') as i64).min(1 << 40);
            j += 1;
        }
        if j > digits_start {
            end = j;
            if exp_negative {
                exp = -exp;
            }
        } else {
            exp = 0;
        }
    }
    if is_hex {
        Some(hex_to_f32(negative, &lower[start..mant_end], exp))
    } else {
        let text = std::str::from_utf8(&lower[..end]).ok()?;
        let v: f32 = text.parse().ok()?;
        Some(sign(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(s: &str) -> Vec<Option<i32>> {
        let mut src = s.as_bytes();
        let mut inp = Input::new(&mut src);
        let mut v = Vec::new();
        for _ in 0..4 {
            v.push(inp.scan_int());
        }
        v
    }

    #[test]
    fn scan_int_like_glibc() {
        assert_eq!(
            ints(" 12\n-3 +4 x"),
            vec![Some(12), Some(-3), Some(4), None]
        );
        assert_eq!(
            ints("2147483648 4294967297 -2147483649 99999999999999999999"),
            vec![Some(i32::MIN), Some(1), Some(i32::MAX), Some(-1)]
        );
    }

    fn floats(s: &str) -> Vec<Option<u32>> {
        let mut src = s.as_bytes();
        let mut inp = Input::new(&mut src);
        let mut v = Vec::new();
        while inp.peek().is_some() {
            v.push(inp.scan_float().map(f32::to_bits));
        }
        v
    }

    #[test]
    fn scan_float_decimal_hex_and_specials() {
        let b = |x: f32| Some(x.to_bits());
        assert_eq!(
            floats("1.5 -0x1.8p1 0x.8 .25e1 1e 0x0.0p+0 -inf nan 3.4028235e38 1e-45 "),
            vec![
                b(1.5),
                b(-3.0),
                b(0.5),
                b(2.5),
                b(1.0),
                b(0.0),
                b(f32::NEG_INFINITY),
                b(f32::NAN),
                b(f32::MAX),
                b(f32::from_bits(1)),
                None
            ]
        );
        assert_eq!(floats("0x1.999999999999ap-4"), vec![b(0.1)]);
    }

    #[test]
    fn prefix_parsing() {
        assert_eq!(parse_float_prefix(b"0x"), Some(0.0));
        assert_eq!(parse_float_prefix(b"1e+"), Some(1.0));
        assert_eq!(parse_float_prefix(b"."), None);
        assert_eq!(parse_float_prefix(b"-.5e-1"), Some(-0.05));
        assert_eq!(parse_float_prefix(b"0x1p"), Some(1.0));
    }
}
