//! String-literal escape decoding.

/// Decodes the body of a string literal (without the quotes), handling C escapes:
/// `\n \t \r \\ \" \' \? \a \b \f \v \0`-style octal (up to 3 digits) and `\xHH`.
/// On error returns `(byte offset, length, message)` of the bad escape.
pub fn decode_string(body: &str) -> Result<Vec<u8>, (usize, usize, String)> {
    let b = body.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let Some(&c) = b.get(i) else {
            return Err((start, 1, "incomplete escape sequence".into()));
        };
        i += 1;
        let v = match c {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'\\' => b'\\',
            b'"' => b'"',
            b'\'' => b'\'',
            b'?' => b'?',
            b'a' => 7,
            b'b' => 8,
            b'f' => 12,
            b'v' => 11,
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut n = 1;
                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + u32::from(b[i] - b'0');
                    i += 1;
                    n += 1;
                }
                if v > 255 {
                    return Err((start, i - start, "octal escape out of range".into()));
                }
                v as u8
            }
            b'x' => {
                let mut v: u32 = 0;
                let mut n = 0;
                while i < b.len() && b[i].is_ascii_hexdigit() {
                    v = v.saturating_mul(16) + (b[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                if n == 0 {
                    return Err((start, 2, "`\\x` used with no following hex digits".into()));
                }
                if v > 255 {
                    return Err((start, i - start, "hex escape out of range".into()));
                }
                v as u8
            }
            _ => {
                let ch = body[start + 1..].chars().next().unwrap_or('?');
                let len = 1 + ch.len_utf8();
                return Err((
                    start,
                    len,
                    format!("unknown escape sequence `\\{}`", ch.escape_default()),
                ));
            }
        };
        out.push(v);
    }
    Ok(out)
}
