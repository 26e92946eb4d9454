//! Making a SysY file acceptable to a C compiler, for reference builds (the bench
//! crate's `gcc -O2`, the differential tester's `gcc -O0`).
//!
//! - [`PRELUDE`]: the runtime declarations and timer macros, passed with `-include`
//!   so `__LINE__` keeps the source's numbering;
//! - [`sysy_c_flags`]: the flags that give C SysY's semantics (single-precision float
//!   literals, no contraction of `a*b+c`);
//! - [`const_ints_to_enums`]: SysY lets a `const int` size an array anywhere,
//!   including at file scope and in an initialised local array; C rejects both (a
//!   `const int` is not an integer constant expression in C). It rewrites each scalar
//!   `const int` definition into an enumerator, which is one:
//!
//! ```text
//! const int N = 10, A[2] = {1, 2};   =>   enum { N = (int)(10) }; const int A[2] = {1, 2};
//! ```
//!
//! Newlines inside a rewritten declaration are kept (moved to its end), so
//! `__LINE__`, and with it the `Timer@` lines, stays as in the source.

use std::path::Path;

/// The runtime declarations and timer macros prepended to a `.sy` file.
pub const PRELUDE: &str = r#"/* sysy_prelude.h: makes a SysY file valid C or C++ (reference builds). */
#ifdef __cplusplus
extern "C" {
#endif
int getint(void);
int getch(void);
float getfloat(void);
int getarray(int a[]);
int getfarray(float a[]);
void putint(int a);
void putch(int a);
void putfloat(float a);
void putarray(int n, int a[]);
void putfarray(int n, float a[]);
void putf(const char fmt[], ...);
void _sysy_starttime(int lineno);
void _sysy_stoptime(int lineno);
#ifdef __cplusplus
}
#endif
#define starttime() _sysy_starttime(__LINE__)
#define stoptime() _sysy_stoptime(__LINE__)
"#;

/// gcc flags (before the source file) that compile a SysY file as `lang` (`c` or
/// `c++`) with SysY's semantics: the [`PRELUDE`] (written to the file `prelude`)
/// included, float literals single precision, no fused multiply-add, no warnings
/// (the suite's programs are not warning-clean C). Optimisation level and linking
/// are the caller's; put `-x none` after the source if other files follow.
pub fn sysy_c_flags(prelude: &Path, lang: &str) -> Vec<String> {
    let mut flags: Vec<String> = ["-w", "-ffp-contract=off", "-fsingle-precision-constant"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    flags.push("-include".into());
    flags.push(prelude.display().to_string());
    flags.push("-x".into());
    flags.push(lang.into());
    if lang == "c++" {
        flags.push("-fpermissive".into());
    }
    flags
}

/// A token: its first byte and one past its last byte in the source.
#[derive(Debug, Clone, Copy)]
struct Tok {
    start: usize,
    end: usize,
}

/// Splits `src` into tokens, skipping whitespace, comments and nothing else.
/// Identifiers and numbers are one token each; every other character is one.
fn tokenize(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"//") {
            i = memchr(b, i, b'\n').unwrap_or(b.len());
            continue;
        }
        if b[i..].starts_with(b"/*") {
            i = find(b, i + 2, b"*/").map_or(b.len(), |j| j + 2);
            continue;
        }
        if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' {
            i += 1;
            while i < b.len() {
                let d = b[i];
                let exponent_sign = (d == b'+' || d == b'-')
                    && c.is_ascii_digit()
                    && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                if d.is_ascii_alphanumeric() || d == b'_' || d == b'.' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
        } else {
            i += src[i..].chars().next().map_or(1, char::len_utf8);
        }
        toks.push(Tok { start, end: i });
    }
    toks
}

fn memchr(b: &[u8], from: usize, needle: u8) -> Option<usize> {
    b[from..]
        .iter()
        .position(|&x| x == needle)
        .map(|p| p + from)
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Rewrites scalar `const int` definitions into enumerators; `None` when the
/// source has none (or a declaration it does not understand).
pub fn const_ints_to_enums(src: &str) -> Option<String> {
    let toks = tokenize(src);
    let text = |t: Tok| &src[t.start..t.end];
    let mut out = String::with_capacity(src.len() + 64);
    let mut copied = 0;
    let mut changed = false;
    let mut i = 0;
    while i + 1 < toks.len() {
        if text(toks[i]) == "const" && text(toks[i + 1]) == "int" {
            if let Some((replacement, after)) = rewrite_decl(src, &toks, i + 2) {
                let span = &src[toks[i].start..toks[after - 1].end];
                out.push_str(&src[copied..toks[i].start]);
                out.push_str(&replacement);
                out.extend(std::iter::repeat_n('\n', span.matches('\n').count()));
                copied = toks[after - 1].end;
                changed = true;
                i = after;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&src[copied..]);
    changed.then_some(out)
}

/// Parses the definitions after `const int` (from token `first`) up to `;`.
/// Returns the replacement text and the index of the token after the `;`.
fn rewrite_decl(src: &str, toks: &[Tok], first: usize) -> Option<(String, usize)> {
    let text = |t: &Tok| &src[t.start..t.end];
    let mut parts = Vec::new();
    let mut any_scalar = false;
    let mut i = first;
    loop {
        let name = toks.get(i)?;
        let is_array = text(toks.get(i + 1)?) == "[";
        if !is_array && text(toks.get(i + 1)?) != "=" {
            return None;
        }
        // The definition runs to the next `,` or `;` outside brackets.
        let mut depth = 0i32;
        let mut j = i + 1;
        loop {
            match text(toks.get(j)?) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth -= 1,
                "," | ";" if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        if is_array {
            parts.push(format!("const int {};", &src[name.start..toks[j - 1].end]));
        } else {
            let expr = &src[toks[i + 2].start..toks.get(j - 1)?.end];
            parts.push(format!("enum {{ {} = (int)({expr}) }};", text(name)));
            any_scalar = true;
        }
        if text(&toks[j]) == ";" {
            return any_scalar.then(|| (parts.join(" "), j + 1));
        }
        i = j + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_become_enumerators_arrays_stay() {
        let src = "const int N = 10, A[2] = {1, N}, M = N * 2;\nint a[N][M];\n";
        let out = const_ints_to_enums(src).unwrap();
        assert_eq!(
            out,
            "enum { N = (int)(10) }; const int A[2] = {1, N}; enum { M = (int)(N * 2) };\nint a[N][M];\n"
        );
    }

    #[test]
    fn keeps_line_numbers_and_other_code() {
        let src = "// const int X = 1;\nconst int W =\n  3;\nconst float F = 1.5;\nint main() { putf(\"const int\"); return W; }\n";
        let out = const_ints_to_enums(src).unwrap();
        assert_eq!(out.lines().count(), src.lines().count());
        assert!(out.contains("// const int X = 1;"));
        assert!(out.contains("enum { W = (int)(3) };\n\n"));
        assert!(out.contains("const float F = 1.5;"));
        assert!(out.contains("putf(\"const int\")"));
    }

    #[test]
    fn nothing_to_do() {
        assert_eq!(
            const_ints_to_enums("int x = 1;\nconst int A[1] = {1};\n"),
            None
        );
    }

    #[test]
    fn hex_float_exponents_are_one_token() {
        let toks = tokenize("0x1.8p+1,1e-3");
        assert_eq!(toks.len(), 3);
    }
}
