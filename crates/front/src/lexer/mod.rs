//! The lexer: SysY source text to a vector of [`Token`]s.
//!
//! Tokenisation is done by a `logos`-generated automaton (`RawTok`); this module then
//! converts number and string literals to their values and reports malformed tokens
//! as diagnostics. Number conversion lives in [`crate::number`].

use logos::Logos;

mod escape;
mod raw;

pub use escape::decode_string;
use raw::RawTok;

use crate::diag::{Diagnostic, Diagnostics};
use crate::number;
use crate::span::Span;

/// A token kind, with the value of literals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tok {
    /// `int`
    Int,
    /// `float`
    Float,
    /// `void`
    Void,
    /// `const`
    Const,
    /// `if`
    If,
    /// `else`
    Else,
    /// `while`
    While,
    /// `break`
    Break,
    /// `continue`
    Continue,
    /// `return`
    Return,
    /// An identifier (its text is the token's span in the source).
    Ident,
    /// An integer literal, reinterpreted as i32 two's complement.
    IntLit(i32),
    /// A float literal, correctly rounded to f32.
    FloatLit(f32),
    /// A string literal; the payload indexes [`Lexed::strings`] (decoded bytes).
    Str(u32),
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `,`
    Comma,
    /// `;`
    Semi,
    /// `=`
    Assign,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `!`
    Not,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `==`
    EqEq,
    /// `!=`
    Ne,
    /// `&&`
    AndAnd,
    /// `||`
    OrOr,
    /// End of input (always the last token).
    Eof,
}

impl Tok {
    /// A human-readable description for "expected X, found Y" messages.
    pub fn describe(self) -> &'static str {
        match self {
            Tok::Int => "`int`",
            Tok::Float => "`float`",
            Tok::Void => "`void`",
            Tok::Const => "`const`",
            Tok::If => "`if`",
            Tok::Else => "`else`",
            Tok::While => "`while`",
            Tok::Break => "`break`",
            Tok::Continue => "`continue`",
            Tok::Return => "`return`",
            Tok::Ident => "identifier",
            Tok::IntLit(_) => "integer literal",
            Tok::FloatLit(_) => "float literal",
            Tok::Str(_) => "string literal",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::LBrace => "`{`",
            Tok::RBrace => "`}`",
            Tok::Comma => "`,`",
            Tok::Semi => "`;`",
            Tok::Assign => "`=`",
            Tok::Plus => "`+`",
            Tok::Minus => "`-`",
            Tok::Star => "`*`",
            Tok::Slash => "`/`",
            Tok::Percent => "`%`",
            Tok::Not => "`!`",
            Tok::Lt => "`<`",
            Tok::Gt => "`>`",
            Tok::Le => "`<=`",
            Tok::Ge => "`>=`",
            Tok::EqEq => "`==`",
            Tok::Ne => "`!=`",
            Tok::AndAnd => "`&&`",
            Tok::OrOr => "`||`",
            Tok::Eof => "end of file",
        }
    }
}

/// A token with its source span.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Token {
    /// The kind (and literal value).
    pub tok: Tok,
    /// Where it is in the source.
    pub span: Span,
}

/// The result of lexing a file: the tokens (ending with [`Tok::Eof`]) and the decoded
/// string literals.
#[derive(Clone, Debug, Default)]
pub struct Lexed {
    /// All tokens, the last one being [`Tok::Eof`].
    pub tokens: Vec<Token>,
    /// Decoded bytes of string literals, indexed by [`Tok::Str`].
    pub strings: Vec<Vec<u8>>,
}

/// Lexes `source`. Malformed tokens are reported in `diags` and skipped.
pub fn lex(source: &str, diags: &mut Diagnostics) -> Lexed {
    let mut out = Lexed {
        tokens: Vec::with_capacity(source.len() / 4 + 1),
        strings: Vec::new(),
    };
    let mut lx = RawTok::lexer(source);
    while let Some(res) = lx.next() {
        let r = lx.span();
        let span = Span::new(r.start, r.end);
        let text = lx.slice();
        let raw = match res {
            Ok(raw) => raw,
            Err(()) => {
                let c = text.chars().next().unwrap_or('?');
                diags.push(Diagnostic::error(unexpected_char(c), span));
                continue;
            }
        };
        let tok = match convert(raw, text, span, &mut out.strings, diags) {
            Some(t) => t,
            None => continue,
        };
        if matches!(tok, Tok::IntLit(_) | Tok::FloatLit(_)) {
            if let Some(c) = source[r.end..].chars().next() {
                if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                    // Swallow the suffix so that only one error is reported.
                    let rest = &source[r.end..];
                    let n = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                        .unwrap_or(rest.len());
                    diags.push(Diagnostic::error(
                        format!("invalid suffix `{}` on numeric literal", &rest[..n]),
                        Span::new(r.start, r.end + n),
                    ));
                    lx.bump(n);
                    continue;
                }
            }
        }
        out.tokens.push(Token { tok, span });
    }
    let end = source.len();
    out.tokens.push(Token {
        tok: Tok::Eof,
        span: Span::new(end, end),
    });
    out
}

/// The message for a character no token starts with: the character as itself (or
/// escaped, if it is invisible), with a hint when it looks like an ASCII one (a
/// full-width `；` from a Chinese input method) or stands for bytes that were not
/// UTF-8.
pub fn unexpected_char(c: char) -> String {
    if c == char::REPLACEMENT_CHARACTER {
        return "invalid UTF-8 (the bytes shown as `\u{fffd}`): a SysY source must be UTF-8 outside comments".into();
    }
    // Escaped as the source line under the message shows it.
    let shown = match crate::diag::escaped_char(c) {
        Some(e) => e,
        None if c.is_whitespace() => c.escape_default().to_string(),
        None => c.to_string(),
    };
    match ascii_look_alike(c) {
        Some(a) => format!(
            "unexpected character `{shown}` (U+{:04X}): did you mean the ASCII `{a}`?",
            c as u32
        ),
        None => format!("unexpected character `{shown}`"),
    }
}

/// The ASCII character that `c` is easily mistaken for: full-width forms (U+FF01 to
/// U+FF5E, `；` `（` `）` `，` ...), the ideographic space and typographic quotes.
fn ascii_look_alike(c: char) -> Option<char> {
    match c {
        '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0),
        '\u{3000}' => Some(' '),
        '\u{3001}' => Some(','),
        '\u{3002}' => Some('.'),
        '\u{2018}' | '\u{2019}' => Some('\''),
        '\u{201c}' | '\u{201d}' => Some('"'),
        '\u{2212}' => Some('-'),
        _ => None,
    }
}

/// Warns when a float literal does not fit in `float`: too large (it becomes
/// infinity) or too small (a non-zero literal becomes 0). Returns `v`.
fn float_range_warning(v: f32, text: &str, span: Span, diags: &mut Diagnostics) -> f32 {
    let hex = text.starts_with("0x") || text.starts_with("0X");
    let mantissa = if hex {
        text[2..].split(['p', 'P']).next().unwrap_or("")
    } else {
        text.split(['e', 'E']).next().unwrap_or("")
    };
    let nonzero = mantissa.chars().any(|c| c.is_ascii_hexdigit() && c != '0');
    if v.is_infinite() {
        diags.warning(
            "overflow",
            format!("floating constant `{text}` exceeds the range of `float`; it becomes infinity"),
            span,
        );
    } else if v == 0.0 && nonzero {
        diags.warning(
            "overflow",
            format!("floating constant `{text}` is too small for `float`; it becomes 0"),
            span,
        );
    }
    v
}

/// Converts one raw token; `None` (with a diagnostic) for malformed ones.
fn convert(
    raw: RawTok,
    text: &str,
    span: Span,
    strings: &mut Vec<Vec<u8>>,
    diags: &mut Diagnostics,
) -> Option<Tok> {
    Some(match raw {
        RawTok::UnterminatedComment => {
            diags.push(Diagnostic::error("unterminated comment", span));
            return None;
        }
        RawTok::Int => Tok::Int,
        RawTok::Float => Tok::Float,
        RawTok::Void => Tok::Void,
        RawTok::Const => Tok::Const,
        RawTok::If => Tok::If,
        RawTok::Else => Tok::Else,
        RawTok::While => Tok::While,
        RawTok::Break => Tok::Break,
        RawTok::Continue => Tok::Continue,
        RawTok::Return => Tok::Return,
        RawTok::Ident => Tok::Ident,
        RawTok::DecOrOctInt | RawTok::HexInt => match number::parse_int(text) {
            Ok(v) => Tok::IntLit(v),
            Err(msg) => {
                diags.push(Diagnostic::error(msg, span));
                Tok::IntLit(0)
            }
        },
        RawTok::DecFloat => match number::parse_dec_float(text) {
            Some(v) => Tok::FloatLit(float_range_warning(v, text, span, diags)),
            None => {
                diags.push(Diagnostic::error("invalid float literal", span));
                Tok::FloatLit(0.0)
            }
        },
        RawTok::HexFloat => match number::parse_hex_float(text) {
            Some(v) => Tok::FloatLit(float_range_warning(v, text, span, diags)),
            None => {
                diags.push(Diagnostic::error("invalid hexadecimal float literal", span));
                Tok::FloatLit(0.0)
            }
        },
        RawTok::Str => {
            let bytes = match decode_string(&text[1..text.len() - 1]) {
                Ok(b) => b,
                Err((off, len, msg)) => {
                    let s = span.start as usize + 1 + off;
                    diags.push(Diagnostic::error(msg, Span::new(s, s + len)));
                    Vec::new()
                }
            };
            strings.push(bytes);
            Tok::Str((strings.len() - 1) as u32)
        }
        RawTok::UnterminatedStr => {
            diags.push(Diagnostic::error("unterminated string literal", span));
            return None;
        }
        RawTok::LParen => Tok::LParen,
        RawTok::RParen => Tok::RParen,
        RawTok::LBracket => Tok::LBracket,
        RawTok::RBracket => Tok::RBracket,
        RawTok::LBrace => Tok::LBrace,
        RawTok::RBrace => Tok::RBrace,
        RawTok::Comma => Tok::Comma,
        RawTok::Semi => Tok::Semi,
        RawTok::Assign => Tok::Assign,
        RawTok::Plus => Tok::Plus,
        RawTok::Minus => Tok::Minus,
        RawTok::Star => Tok::Star,
        RawTok::Slash => Tok::Slash,
        RawTok::Percent => Tok::Percent,
        RawTok::Not => Tok::Not,
        RawTok::Lt => Tok::Lt,
        RawTok::Gt => Tok::Gt,
        RawTok::Le => Tok::Le,
        RawTok::Ge => Tok::Ge,
        RawTok::EqEq => Tok::EqEq,
        RawTok::Ne => Tok::Ne,
        RawTok::AndAnd => Tok::AndAnd,
        RawTok::OrOr => Tok::OrOr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        let mut d = Diagnostics::default();
        let l = lex(src, &mut d);
        assert!(d.is_empty(), "{d:?}");
        l.tokens.into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn keywords_and_idents() {
        assert_eq!(
            toks("int intx _a1 while"),
            vec![Tok::Int, Tok::Ident, Tok::Ident, Tok::While, Tok::Eof]
        );
    }

    #[test]
    fn operators_and_comments() {
        assert_eq!(
            toks("a<=b // c\n/* d * / */ && !=!"),
            vec![
                Tok::Ident,
                Tok::Le,
                Tok::Ident,
                Tok::AndAnd,
                Tok::Ne,
                Tok::Not,
                Tok::Eof
            ]
        );
        assert_eq!(toks("/***/x/**a**/"), vec![Tok::Ident, Tok::Eof]);
    }

    #[test]
    fn numbers() {
        assert_eq!(
            toks("0 017 0x1F 0X80000000 2147483648 4294967295"),
            vec![
                Tok::IntLit(0),
                Tok::IntLit(15),
                Tok::IntLit(31),
                Tok::IntLit(i32::MIN),
                Tok::IntLit(i32::MIN),
                Tok::IntLit(-1),
                Tok::Eof
            ]
        );
        assert_eq!(
            toks("1.5 .5 1. 1e-3 0x1.8p1 0x.8P-3"),
            vec![
                Tok::FloatLit(1.5),
                Tok::FloatLit(0.5),
                Tok::FloatLit(1.0),
                Tok::FloatLit(1e-3),
                Tok::FloatLit(3.0),
                Tok::FloatLit(0.0625),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn strings() {
        let mut d = Diagnostics::default();
        let l = lex(r#""a\n\t\\\"b\101\x41""#, &mut d);
        assert!(d.is_empty());
        assert_eq!(l.strings[0], b"a\n\t\\\"bAA");
    }

    #[test]
    fn errors() {
        for src in [
            "@",
            "/* abc",
            "\"abc",
            "09",
            "4294967296",
            "12abc",
            "\"\\q\"",
            "1.5.5",
        ] {
            let mut d = Diagnostics::default();
            lex(src, &mut d);
            assert_eq!(d.len(), 1, "{src}: {d:?}");
        }
    }
}
