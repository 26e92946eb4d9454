//! Linking assembly with the runtime and running the executable under qemu.
//!
//! [`Harness`] bundles the toolchain and the built runtime; the free functions
//! [`link`] and [`run`] use a process-wide instance created on first use.
//! Programs run as `qemu-riscv64 -s 512M exe` (a big guest stack: deep recursion
//! and megabytes of local arrays) with an empty environment, so that runs are
//! deterministic, and are killed when the timeout expires.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use crate::judge;
use crate::process::{run_command, Outcome};
use crate::runtime::{runtime_lib, Runtime};
use crate::tools::Toolchain;

/// Guest stack size passed to `qemu-riscv64 -s`.
pub const DEFAULT_STACK: &str = "512M";

/// Flags for linking RV64GC code with the runtime.
pub const LINK_FLAGS: &[&str] = &["-march=rv64gc", "-mabi=lp64d", "-static"];

/// How to run a program under qemu.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Kill the program after this long (`None`: never).
    pub timeout: Option<Duration>,
    /// Guest stack size (`qemu-riscv64 -s`).
    pub stack: String,
    /// Extra qemu arguments placed before the executable (e.g. `-plugin ...`).
    pub qemu_args: Vec<OsString>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: Some(Duration::from_secs(60)),
            stack: DEFAULT_STACK.to_string(),
            qemu_args: Vec::new(),
        }
    }
}

/// The result of running a program.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The program's stdout.
    pub stdout: Vec<u8>,
    /// The program's stderr (the runtime's timer report goes here).
    pub stderr: Vec<u8>,
    /// Exit status; `128 + signal` when killed by a signal.
    pub exit_code: i32,
    /// The signal that killed the program, if any.
    pub signal: Option<i32>,
    /// True when the timeout expired.
    pub timed_out: bool,
    /// Wall time of the whole qemu run.
    pub duration: Duration,
}

impl RunResult {
    fn from_outcome(o: Outcome) -> RunResult {
        let exit_code = match (o.exit_code, o.signal) {
            (Some(c), _) => c,
            (None, Some(s)) => 128 + s,
            (None, None) => -1,
        };
        RunResult {
            stdout: o.stdout,
            stderr: o.stderr,
            exit_code,
            signal: o.signal,
            timed_out: o.timed_out,
            duration: o.duration,
        }
    }

    /// Judges this run against the expected `.out` contents; a timeout or a
    /// crash (killed by a signal) is a failure whatever the output.
    pub fn judge(&self, expected_out: &[u8]) -> Result<(), String> {
        if self.timed_out {
            return Err(format!(
                "timed out after {:.1}s",
                self.duration.as_secs_f64()
            ));
        }
        if let Some(sig) = self.signal {
            return Err(format!("killed by signal {sig}"));
        }
        judge::judge(&self.stdout, self.exit_code, expected_out)
    }

    /// The `TOTAL: ...` line the runtime printed to stderr, if any.
    pub fn timer_total(&self) -> Option<String> {
        String::from_utf8_lossy(&self.stderr)
            .lines()
            .find(|l| l.starts_with("TOTAL:"))
            .map(str::to_string)
    }
}

/// The toolchain plus a built runtime: everything needed to link and run.
#[derive(Debug, Clone)]
pub struct Harness {
    /// Cross compiler and emulator.
    pub toolchain: Toolchain,
    /// The runtime library built for riscv64.
    pub runtime: Runtime,
}

impl Harness {
    /// Finds the tools and builds (or reuses) the runtime.
    pub fn new() -> Result<Harness, String> {
        let toolchain = Toolchain::find().map_err(|e| e.to_string())?;
        let runtime = runtime_lib(&toolchain).map_err(|e| e.to_string())?;
        Ok(Harness { toolchain, runtime })
    }

    /// The process-wide instance (created once, on first use).
    pub fn global() -> Result<&'static Harness, String> {
        static GLOBAL: OnceLock<Result<Harness, String>> = OnceLock::new();
        GLOBAL
            .get_or_init(Harness::new)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Links `inputs` (assembly, C or object files) with the runtime into `out_exe`.
    /// `extra` flags go before the inputs (e.g. `-O2` for C sources).
    pub fn link_files(
        &self,
        inputs: &[&Path],
        extra: &[&str],
        out_exe: &Path,
    ) -> Result<(), String> {
        let mut cmd = Command::new(&self.toolchain.cc);
        cmd.args(LINK_FLAGS).args(extra).args(inputs);
        cmd.arg(&self.runtime.lib).arg("-o").arg(out_exe);
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.toolchain.cc.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "link failed ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// Links an assembly file with the runtime.
    pub fn link(&self, asm: &Path, out_exe: &Path) -> Result<(), String> {
        self.link_files(&[asm], &[], out_exe)
    }

    /// Runs `exe` under qemu with the given options.
    pub fn run_with(
        &self,
        exe: &Path,
        stdin: Option<&Path>,
        opts: &RunOptions,
    ) -> Result<RunResult, String> {
        let mut cmd = Command::new(&self.toolchain.qemu);
        cmd.env_clear().arg("-s").arg(&opts.stack);
        cmd.args(&opts.qemu_args).arg(exe);
        run_command(&mut cmd, stdin, opts.timeout)
            .map(RunResult::from_outcome)
            .map_err(|e| format!("cannot run {}: {e}", self.toolchain.qemu.display()))
    }
}

/// Links `asm` with the runtime into `out_exe` (global [`Harness`]).
pub fn link(asm: &Path, out_exe: &Path) -> Result<(), String> {
    Harness::global()?.link(asm, out_exe)
}

/// Runs `exe` under qemu with `stdin` and a timeout (global [`Harness`]).
pub fn run(exe: &Path, stdin: Option<&Path>, timeout: Duration) -> Result<RunResult, String> {
    let opts = RunOptions {
        timeout: Some(timeout),
        ..RunOptions::default()
    };
    run_with(exe, stdin, &opts)
}

/// Runs `exe` under qemu with explicit options (global [`Harness`]).
pub fn run_with(exe: &Path, stdin: Option<&Path>, opts: &RunOptions) -> Result<RunResult, String> {
    Harness::global()?.run_with(exe, stdin, opts)
}
