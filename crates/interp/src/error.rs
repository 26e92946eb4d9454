//! Errors the interpreter reports instead of panicking: traps of the running program
//! (out-of-bounds memory access, division by zero, stack exhaustion, step limit, call
//! of a function that has no body and is not part of the runtime) and malformed IR
//! found while decoding.

use std::fmt;

/// What went wrong.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum ErrorKind {
    /// A load or store of `size` bytes at `addr` outside the valid memory
    /// (globals and the live part of the stack; the first 4 KiB are never valid).
    OutOfBounds { addr: u64, size: u32, write: bool },
    /// `sdiv` or `srem` with a zero divisor.
    DivisionByZero,
    /// The stack (allocated bytes plus a per-call overhead) grew beyond `limit` bytes,
    /// usually through too deep recursion.
    StackOverflow { limit: u64 },
    /// More than `limit` instructions were executed.
    StepLimit { limit: u64 },
    /// A call of a function that is only declared and is not a runtime function.
    UndefinedFunction { name: String },
    /// The module has no `main` with a body.
    NoMain,
    /// The IR is malformed in a way the interpreter cannot execute.
    InvalidIr(String),
    /// Reading stdin or writing stdout/stderr failed.
    Io(String),
}

/// An interpreter error, with the function that was executing when it happened.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct InterpError {
    pub kind: ErrorKind,
    /// Name of the function being executed or decoded, when known.
    pub func: Option<String>,
    /// The source position (a byte offset into the source, as
    /// [`ir::Function::src_loc`] gives it) of the instruction that failed, when the
    /// IR knows it.
    pub pos: Option<u32>,
}

impl InterpError {
    /// An error not tied to a function.
    pub fn new(kind: ErrorKind) -> Self {
        InterpError {
            kind,
            func: None,
            pos: None,
        }
    }

    /// An error that happened in function `func`.
    pub fn in_func(kind: ErrorKind, func: &str) -> Self {
        InterpError {
            kind,
            func: Some(func.to_string()),
            pos: None,
        }
    }

    /// The error with the source position `pos` of the failing instruction.
    pub fn at(mut self, pos: Option<u32>) -> Self {
        self.pos = pos;
        self
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::OutOfBounds { addr, size, write } => write!(
                f,
                "out-of-bounds {} of {size} byte{} at address {addr:#x}",
                if *write { "store" } else { "load" },
                if *size == 1 { "" } else { "s" }
            ),
            ErrorKind::DivisionByZero => f.write_str("integer division by zero"),
            ErrorKind::StackOverflow { limit } => write!(
                f,
                "stack exhausted (limit {limit} bytes): recursion too deep or locals too large"
            ),
            ErrorKind::StepLimit { limit } => {
                write!(f, "step limit exceeded ({limit} instructions)")
            }
            ErrorKind::UndefinedFunction { name } => {
                write!(f, "call of undefined function @{name}")
            }
            ErrorKind::NoMain => f.write_str("the module has no `main` function with a body"),
            ErrorKind::InvalidIr(msg) => write!(f, "invalid IR: {msg}"),
            ErrorKind::Io(msg) => write!(f, "I/O error: {msg}"),
        }
    }
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.func {
            Some(func) => write!(f, "in @{func}: {}", self.kind),
            None => write!(f, "{}", self.kind),
        }
    }
}

impl std::error::Error for InterpError {}
