//! The lexer of textual IR: a hand-written scanner turning source text into tokens with
//! positions. `;` starts a comment to the end of the line, except right after a type
//! name inside square brackets (`[i32; 10]`), where it is a separator. Newlines are not
//! tokens; the parser uses token lines where a line end matters (`ret` with or without
//! a value).

use super::{ParseError, Pos};

/// A token kind.
#[derive(Clone, PartialEq, Debug)]
pub enum Tok {
    /// A bare identifier: keyword, opcode, type, block name, `inf`, `nan`.
    Ident(String),
    /// `%name`: a local value.
    Local(String),
    /// `@name`: a function or global.
    Global(String),
    /// A decimal integer literal, with its sign.
    Int(i64),
    /// A float literal (decimal with `.` or exponent, `-inf`, `-nan`, or `0fXXXXXXXX`),
    /// as its bit pattern.
    Float(u32),
    /// `c"..."` string data.
    Bytes(Vec<u8>),
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Colon,
    /// `;` right after a type name in square brackets (`[i32; 10]`); elsewhere `;`
    /// starts a comment.
    Semi,
    Equals,
    /// `->`
    Arrow,
    /// `...`
    Ellipsis,
    /// End of input.
    Eof,
}

impl Tok {
    /// A short description for error messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Local(s) => format!("`%{s}`"),
            Tok::Global(s) => format!("`@{s}`"),
            Tok::Int(i) => format!("`{i}`"),
            Tok::Float(_) => "a float literal".to_string(),
            Tok::Bytes(_) => "a string literal".to_string(),
            Tok::LParen => "`(`".to_string(),
            Tok::RParen => "`)`".to_string(),
            Tok::LBracket => "`[`".to_string(),
            Tok::RBracket => "`]`".to_string(),
            Tok::LBrace => "`{`".to_string(),
            Tok::RBrace => "`}`".to_string(),
            Tok::Comma => "`,`".to_string(),
            Tok::Colon => "`:`".to_string(),
            Tok::Semi => "`;`".to_string(),
            Tok::Equals => "`=`".to_string(),
            Tok::Arrow => "`->`".to_string(),
            Tok::Ellipsis => "`...`".to_string(),
            Tok::Eof => "end of input".to_string(),
        }
    }
}

/// A token and where it starts.
#[derive(Clone, PartialEq, Debug)]
pub struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

/// Splits `src` into tokens, ending with [`Tok::Eof`].
pub fn tokenize(src: &str) -> Result<Vec<Token>, ParseError> {
    let mut lx = Lexer {
        chars: src.chars().collect(),
        i: 0,
        pos: Pos { line: 1, column: 1 },
        depth: 0,
        semi_is_separator: false,
    };
    let mut out = Vec::new();
    loop {
        let t = lx.next_token()?;
        lx.semi_is_separator = lx.depth > 0
            && matches!(&t.tok, Tok::Ident(s) if crate::types::Type::from_name(s).is_some());
        let eof = t.tok == Tok::Eof;
        out.push(t);
        if eof {
            return Ok(out);
        }
    }
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
    pos: Pos,
    /// Nesting depth of square brackets.
    depth: u32,
    /// Whether the previous token was a type name inside square brackets, so that a
    /// `;` now is the separator of `[ty; n]` rather than a comment.
    semi_is_separator: bool,
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        if c == '\n' {
            self.pos.line += 1;
            self.pos.column = 1;
        } else {
            self.pos.column += 1;
        }
        Some(c)
    }

    fn take_while(&mut self, f: impl Fn(char) -> bool) -> String {
        let mut s = String::new();
        while let Some(c) = self.peek() {
            if !f(c) {
                break;
            }
            s.push(c);
            self.bump();
        }
        s
    }

    fn skip_trivia(&mut self) {
        while let Some(c) = self.peek() {
            if c == ';' && !self.semi_is_separator {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.bump();
                }
            } else if c.is_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn next_token(&mut self) -> Result<Token, ParseError> {
        self.skip_trivia();
        let pos = self.pos;
        let tok = |tok| Ok(Token { tok, pos });
        let Some(c) = self.peek() else {
            return tok(Tok::Eof);
        };
        let single = match c {
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            '[' => {
                self.depth += 1;
                Some(Tok::LBracket)
            }
            ']' => {
                self.depth = self.depth.saturating_sub(1);
                Some(Tok::RBracket)
            }
            ';' => Some(Tok::Semi),
            '{' => Some(Tok::LBrace),
            '}' => Some(Tok::RBrace),
            ',' => Some(Tok::Comma),
            ':' => Some(Tok::Colon),
            '=' => Some(Tok::Equals),
            _ => None,
        };
        if let Some(t) = single {
            self.bump();
            return tok(t);
        }
        match c {
            '%' | '@' => {
                self.bump();
                let name = self.take_while(is_name_char);
                if name.is_empty() {
                    return Err(ParseError::new(pos, format!("expected a name after `{c}`")));
                }
                tok(if c == '%' {
                    Tok::Local(name)
                } else {
                    Tok::Global(name)
                })
            }
            '.' if self.peek_at(1) == Some('.') && self.peek_at(2) == Some('.') => {
                self.bump();
                self.bump();
                self.bump();
                tok(Tok::Ellipsis)
            }
            '-' if self.peek_at(1) == Some('>') => {
                self.bump();
                self.bump();
                tok(Tok::Arrow)
            }
            '-' => {
                self.bump();
                match self.peek() {
                    Some(d) if d.is_ascii_digit() => self.number(pos, true),
                    Some(a) if a.is_ascii_alphabetic() => {
                        let word = self.take_while(is_name_char);
                        match word.as_str() {
                            "inf" => tok(Tok::Float(f32::NEG_INFINITY.to_bits())),
                            "nan" => tok(Tok::Float(0xFFC0_0000)),
                            _ => Err(ParseError::new(pos, format!("unexpected `-{word}`"))),
                        }
                    }
                    _ => Err(ParseError::new(pos, "expected a number after `-`")),
                }
            }
            'c' if self.peek_at(1) == Some('"') => {
                self.bump();
                self.bump();
                self.string(pos)
            }
            d if d.is_ascii_digit() => self.number(pos, false),
            a if a.is_ascii_alphabetic() || a == '_' => {
                let name = self.take_while(is_name_char);
                tok(Tok::Ident(name))
            }
            other => Err(ParseError::new(
                pos,
                format!("unexpected character {other:?}"),
            )),
        }
    }

    /// A number starting at the current (digit) character; `neg` if a `-` preceded it.
    fn number(&mut self, pos: Pos, neg: bool) -> Result<Token, ParseError> {
        let tok = |tok| Ok(Token { tok, pos });
        if !neg && self.peek() == Some('0') && self.peek_at(1) == Some('f') {
            self.bump();
            self.bump();
            let hex = self.take_while(|c| c.is_ascii_hexdigit());
            if hex.is_empty() || hex.len() > 8 {
                return Err(ParseError::new(
                    pos,
                    "expected 1 to 8 hex digits after `0f` in a float bit pattern",
                ));
            }
            return match u32::from_str_radix(&hex, 16) {
                Ok(bits) => tok(Tok::Float(bits)),
                Err(_) => Err(ParseError::new(pos, "bad float bit pattern")),
            };
        }
        let mut text = String::new();
        if neg {
            text.push('-');
        }
        text.push_str(&self.take_while(|c| c.is_ascii_digit()));
        let mut is_float = false;
        if self.peek() == Some('.') {
            is_float = true;
            text.push('.');
            self.bump();
            text.push_str(&self.take_while(|c| c.is_ascii_digit()));
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let sign = matches!(self.peek_at(1), Some('+' | '-'));
            let digit_at = if sign { 2 } else { 1 };
            if self.peek_at(digit_at).is_some_and(|c| c.is_ascii_digit()) {
                is_float = true;
                text.push('e');
                self.bump();
                if sign {
                    text.push(self.bump().unwrap_or('+'));
                }
                text.push_str(&self.take_while(|c| c.is_ascii_digit()));
            }
        }
        if self.peek().is_some_and(is_name_char) {
            return Err(ParseError::new(
                pos,
                format!("malformed number `{text}{}`", self.take_while(is_name_char)),
            ));
        }
        if is_float {
            match text.parse::<f32>() {
                Ok(x) => tok(Tok::Float(x.to_bits())),
                Err(_) => Err(ParseError::new(
                    pos,
                    format!("malformed float literal `{text}`"),
                )),
            }
        } else {
            match text.parse::<i64>() {
                Ok(v) => tok(Tok::Int(v)),
                Err(_) => Err(ParseError::new(
                    pos,
                    format!("integer literal `{text}` is too large"),
                )),
            }
        }
    }

    /// The body of `c"..."` after the opening quote: raw characters (as UTF-8) and
    /// `\XX` hex, `\\`, `\"` escapes.
    fn string(&mut self, pos: Pos) -> Result<Token, ParseError> {
        let mut bytes = Vec::new();
        loop {
            let here = self.pos;
            match self.bump() {
                None | Some('\n') => {
                    return Err(ParseError::new(pos, "unterminated string literal"));
                }
                Some('"') => break,
                Some('\\') => match self.peek() {
                    Some(q @ ('\\' | '"')) => {
                        self.bump();
                        bytes.push(q as u8);
                    }
                    _ => {
                        let hi = self.bump().and_then(|c| c.to_digit(16));
                        let lo = self.bump().and_then(|c| c.to_digit(16));
                        match (hi, lo) {
                            (Some(h), Some(l)) => bytes.push((h * 16 + l) as u8),
                            _ => {
                                return Err(ParseError::new(
                                    here,
                                    "expected two hex digits after `\\` in a string",
                                ))
                            }
                        }
                    }
                },
                Some(c) => {
                    let mut buf = [0u8; 4];
                    bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        Ok(Token {
            tok: Tok::Bytes(bytes),
            pos,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        tokenize(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers() {
        assert_eq!(
            toks("-5 1.5 -0.0 1e-40 0f7FC00000 -inf 2147483648"),
            vec![
                Tok::Int(-5),
                Tok::Float(1.5f32.to_bits()),
                Tok::Float((-0.0f32).to_bits()),
                Tok::Float(1e-40f32.to_bits()),
                Tok::Float(0x7FC0_0000),
                Tok::Float(f32::NEG_INFINITY.to_bits()),
                Tok::Int(2147483648),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn names_punctuation_comments_and_strings() {
        assert_eq!(
            toks("bb1(%x.1: i32) -> ... ; comment\n@f c\"a\\0A\\\\\" [i8; 2]"),
            vec![
                Tok::Ident("bb1".into()),
                Tok::LParen,
                Tok::Local("x.1".into()),
                Tok::Colon,
                Tok::Ident("i32".into()),
                Tok::RParen,
                Tok::Arrow,
                Tok::Ellipsis,
                Tok::Global("f".into()),
                Tok::Bytes(b"a\n\\".to_vec()),
                Tok::LBracket,
                Tok::Ident("i8".into()),
                Tok::Semi,
                Tok::Int(2),
                Tok::RBracket,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn errors_have_positions() {
        let e = tokenize("\n  12x").unwrap_err();
        assert_eq!((e.line, e.column), (2, 3));
        let e = tokenize("c\"abc").unwrap_err();
        assert_eq!(e.message, "unterminated string literal");
        assert!(tokenize("$").is_err());
    }
}
