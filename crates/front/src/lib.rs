//! The SysY2022 front end: lexing, parsing, semantic analysis and diagnostics.
//!
//! [`check`] runs the whole front end on one file and returns the typed AST ([`tast`]),
//! which the lowering to SSA IR consumes, or the [`Diagnostics`] to show the user.
//! [`dump`] prints a typed AST readably; [`dump_with_positions`] adds where each
//! declaration and statement is in the source (the driver's `--emit ast`).
//!
//! Pipeline: [`lexer`] (logos) -> [`parser`] (recursive descent, precedence climbing)
//! -> [`ast`] -> [`sema`] (names, types, constants, initialisers) -> [`tast`].
//!
//! Stack use: long left-deep operator chains (`a + b + ... + z`) are walked iteratively,
//! so ordinary programs need little stack (every contest-suite file checks in 1.5 MB of
//! stack in a debug build, 512 KB in release), and their length is not limited (only
//! dropping a tree recurses down its left spine, a few words of stack per operator).
//! Nesting (parentheses, blocks, `if` chains, ...) recurses and is rejected beyond
//! [`parser::MAX_DEPTH`] levels; to accept everything up to that limit, call [`check`]
//! on a thread with a large stack (the driver uses 1 GB).

pub mod ast;
pub mod diag;
mod dump;
pub mod lexer;
pub mod number;
pub mod parser;
pub mod sema;
pub mod span;
pub mod tast;

pub use diag::{Diagnostic, Diagnostics};
pub use dump::{dump, dump_with_positions};

/// Checks one SysY source file: the typed program, or every error found (with the
/// warnings among them). Warnings of a valid program are dropped: use [`check_all`]
/// to see them.
///
/// `file_name` is not needed by the analysis (diagnostics hold byte spans); pass the
/// same name to [`Diagnostics::render`]. Never panics, whatever the input.
pub fn check(file_name: &str, source: &str) -> Result<tast::Program, Diagnostics> {
    let checked = check_all(file_name, source);
    match checked.program {
        Some(p) => Ok(p),
        None => Err(checked.diagnostics),
    }
}

/// What the front end made of one file.
#[derive(Debug)]
pub struct Checked {
    /// The typed program; `None` when there were errors.
    pub program: Option<tast::Program>,
    /// The errors and warnings, in the order they were found.
    pub diagnostics: Diagnostics,
}

/// Checks one SysY source file, keeping the warnings of a valid program (see
/// [`check`]).
pub fn check_all(file_name: &str, source: &str) -> Checked {
    let _ = file_name;
    let mut diags = Diagnostics::default();
    let failed = |diagnostics| Checked {
        program: None,
        diagnostics,
    };
    let lexed = lexer::lex(source, &mut diags);
    if !diags.is_empty() {
        // Parsing around malformed tokens would mostly report consequences of them.
        return failed(diags);
    }
    let unit = parser::parse(source, &lexed, &mut diags);
    drop(lexed);
    if !diags.is_empty() {
        return failed(diags);
    }
    let program = sema::analyze(&unit, source, &mut diags);
    Checked {
        program: diags.is_empty().then_some(program),
        diagnostics: diags,
    }
}
