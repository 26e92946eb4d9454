//! The IR interpreter: runs a whole [`ir::Module`] from `main`, with the SysY runtime
//! library built in, and reports exactly what the compiled program would print and
//! return on RV64. It is the oracle every optimisation is checked against.
//!
//! Functions are decoded once into a flat register-machine form (`decode`), then run
//! by one dispatch loop with an explicit call stack (`machine`) over a flat,
//! bounds-checked byte memory (`memory`). Runtime calls (`getint`, `putfloat`, `putf`,
//! the timers, ...) are native (`runtime`). Every failure of the program (out-of-bounds
//! access, division by zero, stack exhaustion, step limit, call of an undefined
//! function) is an [`InterpError`], never a panic.
//!
//! ```
//! let m = ir::parse_module("func @main() -> i32 {\nbb0:\n  ret 300\n}\n").unwrap();
//! let out = interp::run_module(&m, b"", &interp::RunOptions::default()).unwrap();
//! assert_eq!(out.exit_code, 300 & 0xff);
//! ```

mod decode;
mod error;
mod machine;
mod memory;
mod parallel_copy;
mod runtime;

pub use error::{ErrorKind, InterpError};
pub use machine::FRAME_OVERHEAD;
pub use memory::NULL_GUARD;

use std::io::{Read, Write};

/// Limits and switches of a run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Stop with [`ErrorKind::StepLimit`] after this many executed instructions.
    pub max_steps: Option<u64>,
    /// Stack size: the sum over active calls of their `alloc` bytes plus
    /// [`FRAME_OVERHEAD`] may not exceed it (default 256 MiB).
    pub stack_limit_bytes: u64,
    /// Measure real time between `_sysy_starttime` and `_sysy_stoptime`; when false
    /// the timer report shows zero durations, so stderr is deterministic.
    pub wall_clock_timers: bool,
    /// The byte every newly claimed stack byte holds (0 by default). A compiled
    /// program reads whatever an earlier call left on the stack where a local was
    /// not initialised; a non-zero pattern makes such reads (a lowering bug, or a
    /// program's undefined behaviour) visible instead of silently reading zero.
    pub fresh_stack_byte: u8,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_steps: None,
            stack_limit_bytes: 256 << 20,
            wall_clock_timers: true,
            fresh_stack_byte: 0,
        }
    }
}

/// The result of a completed run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutcome {
    pub stdout: Vec<u8>,
    /// The runtime's timer report (`Timer@...` lines and `TOTAL: ...`).
    pub stderr: Vec<u8>,
    /// `main`'s return value & 0xff, as the process exit status (0..=255).
    pub exit_code: i32,
    /// Number of IR instructions executed (terminators included).
    pub steps: u64,
}

/// Runs `m` with `stdin` as input, collecting its output.
pub fn run_module(
    m: &ir::Module,
    stdin: &[u8],
    opts: &RunOptions,
) -> Result<RunOutcome, InterpError> {
    let mut input = stdin;
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let (exit_code, steps) = run_inner(m, &mut input, &mut stdout, &mut stderr, opts)?;
    Ok(RunOutcome {
        stdout,
        stderr,
        exit_code,
        steps,
    })
}

/// Runs `m` streaming its I/O: reads `stdin` as needed, writes program output to
/// `stdout` (buffered, flushed also when the program fails) and the timer report to
/// `stderr` at a normal exit. Returns the exit status (0..=255).
pub fn run_with_io(
    m: &ir::Module,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    opts: &RunOptions,
) -> Result<i32, InterpError> {
    run_inner(m, stdin, stdout, stderr, opts).map(|(code, _)| code)
}

/// Largest total size of globals the interpreter accepts.
const MAX_GLOBAL_BYTES: u64 = 1 << 32;

fn run_inner(
    m: &ir::Module,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    opts: &RunOptions,
) -> Result<(i32, u64), InterpError> {
    let layout = memory::layout_globals(m, MAX_GLOBAL_BYTES).map_err(InterpError::new)?;
    let module = decode::decode_module(m, &layout.addrs)?;
    let mut mem = memory::Memory::new(m, &layout, opts.stack_limit_bytes);
    mem.fresh_byte = opts.fresh_stack_byte;
    let mut rt = runtime::Runtime::new(stdin, stdout, opts.wall_clock_timers);
    let limits = machine::Limits {
        max_steps: opts.max_steps.unwrap_or(u64::MAX),
        stack_bytes: opts.stack_limit_bytes,
    };
    let (result, steps) = machine::execute(&module, &mut mem, &mut rt, &limits);
    // Output written before a failure still reaches stdout, as it would in a crash
    // of a program that flushes per line.
    let flushed = rt.flush();
    let ret = result?;
    flushed.map_err(InterpError::new)?;
    let report = rt.timers.report();
    stderr
        .write_all(report.as_bytes())
        .and_then(|_| stderr.flush())
        .map_err(|e| InterpError::new(ErrorKind::Io(e.to_string())))?;
    Ok(((ret & 0xff) as i32, steps))
}
