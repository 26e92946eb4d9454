//! Running a program every way there is, and comparing.
//!
//! sysyc runs in-process ([`sysyc::compile_to_ir`] / [`sysyc::compile_to_asm`], the
//! driver's own pipeline, verifier after every pass) under `catch_unwind`, so a
//! panic is a finding rather than the end of the campaign:
//!
//! - [`Config::Interp`]: the optimised IR in the interpreter, fresh stack memory
//!   filled with a non-zero pattern so that a read of an uninitialised local (which
//!   a real stack would answer with stale data) shows;
//! - [`Config::Qemu`]: the RISC-V assembly linked with the runtime, under qemu.
//!
//! The reference is `riscv64-linux-gnu-gcc -O0 -fwrapv -frounding-math` (plus SysY's
//! float flags and the runtime prelude, from [`harness::csource`]) under qemu, or,
//! without the cross toolchain, sysyc's own interpreter at -O0.

use harness::csource::{const_ints_to_enums, sysy_c_flags, PRELUDE};
use harness::Harness;
use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use sysyc::SsaMode;

/// Interpreter step limit: generated programs run far fewer steps, so reaching it
/// means a miscompiled loop.
const MAX_STEPS: u64 = 500_000_000;

/// What fresh stack memory holds in the interpreter configurations: not zero, like
/// the stack of a real process (see `interp::RunOptions::fresh_stack_byte`).
const FRESH_STACK_BYTE: u8 = 0xa5;

/// How long a program may run under qemu.
const QEMU_TIMEOUT: Duration = Duration::from_secs(30);

/// One way of running a program through sysyc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Config {
    /// `sysyc -O<level> [--ssa memory] --interpret`.
    Interp { level: u8, memory: bool },
    /// `sysyc -O<level> -S`, linked and run under qemu.
    Qemu { level: u8 },
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Config::Interp { level, memory } => {
                let ssa = if *memory { "-memory" } else { "" };
                write!(f, "interp{ssa}-O{level}")
            }
            Config::Qemu { level } => write!(f, "qemu-O{level}"),
        }
    }
}

/// What running a program produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It ran to the end: stdout and exit status.
    Ran { stdout: Vec<u8>, exit: i32 },
    /// The compiler rejected the (valid) program with an error.
    Rejected(String),
    /// The compiler panicked.
    Crashed(String),
    /// The program failed at run time: trap, signal, timeout, step limit.
    Failed(String),
}

impl Outcome {
    /// The kind of outcome, for comparing failures loosely.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Ran { .. } => "ran",
            Outcome::Rejected(_) => "rejected",
            Outcome::Crashed(_) => "crashed",
            Outcome::Failed(_) => "failed",
        }
    }

    /// The outcome as a `.out` file (stdout, then the exit status), or a one-line
    /// description of the failure.
    pub fn describe(&self) -> String {
        match self {
            Outcome::Ran { stdout, exit } => {
                String::from_utf8_lossy(&harness::expected_output(stdout, *exit)).into_owned()
            }
            Outcome::Rejected(m) => format!("compile error: {m}\n"),
            Outcome::Crashed(m) => format!("compiler panic: {m}\n"),
            Outcome::Failed(m) => format!("run failed: {m}\n"),
        }
    }
}

/// The reference: gcc + qemu, or the interpreter at -O0 when there is no toolchain.
pub enum Reference<'h> {
    Gcc(&'h Harness),
    Interp,
}

/// Everything a worker needs to run programs: the toolchain (when qemu runs are on)
/// and a scratch directory of its own.
pub struct Runner<'h> {
    pub harness: Option<&'h Harness>,
    pub work: PathBuf,
}

impl<'h> Runner<'h> {
    /// A runner using `work` (created) for its files.
    pub fn new(harness: Option<&'h Harness>, work: PathBuf) -> std::io::Result<Self> {
        std::fs::create_dir_all(&work)?;
        std::fs::write(work.join("prelude.h"), PRELUDE)?;
        Ok(Runner { harness, work })
    }

    /// Runs `src` through sysyc in `config`, with `input` as stdin.
    pub fn run(&self, src: &str, input: &str, config: Config) -> Outcome {
        match config {
            Config::Interp { level, memory } => {
                interp_config(src, input, level, memory, FRESH_STACK_BYTE)
            }
            Config::Qemu { level } => {
                let Some(h) = self.harness else {
                    return Outcome::Failed("no riscv64 toolchain".into());
                };
                let asm = match catch_panic(|| {
                    sysyc::compile_to_asm("prog.sy", src, level, SsaMode::Braun)
                }) {
                    Err(panic) => return Outcome::Crashed(panic),
                    Ok(Err(msg)) => return Outcome::Rejected(msg),
                    Ok(Ok(asm)) => asm,
                };
                let s = self.work.join(format!("prog-O{level}.s"));
                let exe = self.work.join(format!("prog-O{level}"));
                if let Err(e) = std::fs::write(&s, asm) {
                    return Outcome::Failed(format!("cannot write {}: {e}", s.display()));
                }
                if let Err(e) = h.link(&s, &exe) {
                    return Outcome::Rejected(format!("assembling or linking: {e}"));
                }
                self.run_qemu(h, &exe, input)
            }
        }
    }

    /// Runs `src` through the reference. `Err` means the reference could not build
    /// it: the program is not the valid C it should be (a generator bug).
    pub fn reference(&self, src: &str, input: &str, which: &Reference) -> Result<Outcome, String> {
        match which {
            // Fresh stack reads as zero here and as a pattern in the configurations
            // compared with it: a read of an uninitialised local shows.
            Reference::Interp => Ok(interp_config(src, input, 0, false, 0)),
            Reference::Gcc(h) => {
                let c = self.work.join("prog.c");
                let exe = self.work.join("prog-gcc");
                let text = const_ints_to_enums(src).unwrap_or_else(|| src.to_string());
                std::fs::write(&c, text).map_err(|e| e.to_string())?;
                gcc_o0(h, &self.work.join("prelude.h"), &c, &exe)?;
                Ok(self.run_qemu(h, &exe, input))
            }
        }
    }

    fn run_qemu(&self, h: &Harness, exe: &Path, input: &str) -> Outcome {
        let stdin = self.work.join("input.txt");
        if let Err(e) = std::fs::write(&stdin, input) {
            return Outcome::Failed(format!("cannot write {}: {e}", stdin.display()));
        }
        let opts = harness::RunOptions {
            timeout: Some(QEMU_TIMEOUT),
            ..Default::default()
        };
        match h.run_with(exe, Some(&stdin), &opts) {
            Err(e) => Outcome::Failed(e),
            Ok(r) if r.timed_out => Outcome::Failed("timed out".into()),
            Ok(r) => match r.signal {
                Some(sig) => Outcome::Failed(format!("killed by signal {sig}")),
                None => Outcome::Ran {
                    stdout: r.stdout,
                    exit: r.exit_code,
                },
            },
        }
    }
}

/// `riscv64-linux-gnu-gcc -O0 -fwrapv -frounding-math` with SysY's semantics, linked
/// with the runtime.
///
/// `-frounding-math` keeps gcc from folding `0.0 - r` into `-r` when it can prove `r`
/// is not -0.0 (`r` an int converted to float, say): gcc 12 does that even at -O0,
/// and it gives -0.0 for `r` = 0 where IEEE subtraction gives +0.0 (campaign seed
/// 704). At run time the rounding mode is the default, so nothing else changes.
fn gcc_o0(h: &Harness, prelude: &Path, c: &Path, exe: &Path) -> Result<(), String> {
    let mut flags: Vec<String> = ["-O0", "-fwrapv", "-frounding-math"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    flags.extend(sysy_c_flags(prelude, "c"));
    flags.push(c.display().to_string());
    flags.push("-x".into());
    flags.push("none".into());
    let refs: Vec<&str> = flags.iter().map(String::as_str).collect();
    h.link_files(&[], &refs, exe)
}

/// sysyc at `-O<level>` (memory-form SSA or Braun), then the interpreter.
fn interp_config(src: &str, input: &str, level: u8, memory: bool, fresh: u8) -> Outcome {
    let ssa = if memory {
        SsaMode::Memory
    } else {
        SsaMode::Braun
    };
    match catch_panic(|| sysyc::compile_to_ir("prog.sy", src, level, ssa)) {
        Err(panic) => Outcome::Crashed(panic),
        Ok(Err(msg)) => Outcome::Rejected(msg),
        Ok(Ok(module)) => interpret(&module, input, fresh),
    }
}

fn interpret(module: &ir::Module, input: &str, fresh_stack_byte: u8) -> Outcome {
    let opts = interp::RunOptions {
        max_steps: Some(MAX_STEPS),
        stack_limit_bytes: 256 << 20,
        wall_clock_timers: false,
        fresh_stack_byte,
    };
    match catch_panic(|| interp::run_module(module, input.as_bytes(), &opts)) {
        Err(panic) => Outcome::Crashed(format!("interpreter: {panic}")),
        Ok(Err(e)) => Outcome::Failed(e.to_string()),
        Ok(Ok(out)) => Outcome::Ran {
            stdout: out.stdout,
            exit: out.exit_code,
        },
    }
}

thread_local! {
    /// The message of the last panic on this thread (set by the hook).
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Replaces the panic hook with one that records the message (with its location)
/// for [`catch_panic`] instead of printing it. Call once, before running programs.
pub fn install_quiet_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(info.to_string()));
    }));
}

/// Runs `f`, turning a panic into `Err(message)`.
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    LAST_PANIC.with(|p| *p.borrow_mut() = None);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_string())
    })
}
