//! The textual form of the IR (specified in `docs/ir-text.md`): a printer whose output
//! is canonical (values and blocks numbered densely in layout order) and a parser that
//! reads it back, so `print(parse(print(m))) == print(m)`. The design follows
//! Cranelift's `.clif` text format: a hand-written lexer, a recursive-descent parser
//! that records positions for error messages, and names resolved only after the whole
//! file (functions, globals) or function (values, blocks) has been read.

pub mod lexer;
pub mod parser;
pub mod printer;

pub use parser::parse_module;
pub use printer::{
    format_f32, print_block_header, print_function, print_global, print_inst, print_module, Names,
};

use std::fmt;

/// A syntax or name-resolution error in textual IR, at a 1-based line and column
/// (columns count characters).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseError {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl ParseError {
    /// An error at `pos` with `message`.
    pub fn new(pos: Pos, message: impl Into<String>) -> Self {
        ParseError {
            line: pos.line,
            column: pos.column,
            message: message.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A source position: 1-based line and column (in characters).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}
