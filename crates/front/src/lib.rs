//! The SysY2022 front end: lexing, parsing, semantic analysis and diagnostics.
//!
//! The output is the typed AST in [`tast`], consumed by the lowering to SSA IR.

pub mod span;
pub mod tast;
