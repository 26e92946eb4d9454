//! Benchmarking one case: compile with sysyc and the reference compilers, run
//! each executable under qemu with the counting plugin, judge the output.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::{Case, Harness, RunOptions};

use crate::compile::{compile_llc, compile_reference, compile_sysyc, first_lines, Reference};
use crate::plugin::{qemu_args, Counts};
use crate::results::{Build, CaseResult, CompileStats, Status};
use crate::symbols::timer_markers;

/// Everything a worker needs, shared by all cases.
pub struct Context<'a> {
    /// Toolchain and runtime.
    pub harness: &'a Harness,
    /// The built plugin.
    pub plugin: PathBuf,
    /// `nm` for the timer symbols.
    pub nm: PathBuf,
    /// The compiler under test.
    pub sysyc: PathBuf,
    /// sysyc's `-O` level.
    pub opt_level: u32,
    /// clang-14, when `--clang` was given.
    pub clang: Option<PathBuf>,
    /// llc-14, when `--llc` was given: sysyc's IR through LLVM's back end.
    pub llc: Option<PathBuf>,
    /// The C prelude file (see [`harness::csource::PRELUDE`]).
    pub prelude: PathBuf,
    /// Scratch directory; each case gets a subdirectory.
    pub work: PathBuf,
    /// Per-run timeout (compile and qemu run alike).
    pub timeout: Duration,
}

/// Runs every build of `case`.
pub fn run_case(ctx: &Context, case: &Case) -> CaseResult {
    let dir = ctx.work.join(&case.name);
    if let Err(e) = fs::create_dir_all(&dir) {
        let b = Build::failed(Status::CompileError, format!("{}: {e}", dir.display()));
        return CaseResult {
            name: case.name.clone(),
            sysyc: b.clone(),
            gcc: b,
            clang: None,
            llc: None,
            compile: None,
        };
    }
    let (sysyc, compile) = build_sysyc(ctx, case, &dir);
    let gcc = build_reference(ctx, case, &dir, Reference::Gcc);
    let clang = ctx
        .clang
        .as_ref()
        .map(|_| build_reference(ctx, case, &dir, Reference::Clang));
    let llc = ctx.llc.as_ref().map(|llc| build_llc(ctx, llc, case, &dir));
    CaseResult {
        name: case.name.clone(),
        sysyc,
        gcc,
        clang,
        llc,
        compile,
    }
}

/// sysyc's optimised IR compiled by `llc-14`, linked and measured.
fn build_llc(ctx: &Context, llc: &Path, case: &Case, dir: &Path) -> Build {
    let asm = dir.join("llc.s");
    let exe = dir.join("llc.exe");
    if let Err(e) = compile_llc(&ctx.sysyc, llc, &case.sy, &asm, ctx.opt_level, ctx.timeout) {
        return Build::failed(Status::CompileError, e);
    }
    if let Err(e) = ctx.harness.link(&asm, &exe) {
        return Build::failed(Status::LinkError, first_lines(&e));
    }
    measure(ctx, case, &exe, dir, "llc")
}

fn build_sysyc(ctx: &Context, case: &Case, dir: &Path) -> (Build, Option<CompileStats>) {
    let asm = dir.join("sysyc.s");
    let exe = dir.join("sysyc.exe");
    let _ = fs::remove_file(&asm);
    let compiled = match compile_sysyc(&ctx.sysyc, &case.sy, &asm, ctx.opt_level, ctx.timeout) {
        Ok(c) => c,
        Err(e) => return (Build::failed(Status::CompileError, e), None),
    };
    let o = &compiled.outcome;
    let stats = CompileStats {
        seconds: o.duration.as_secs_f64(),
        max_rss_kb: o.max_rss_kb,
    };
    if !o.success() || !asm.is_file() {
        let msg = format!(
            "sysyc {}: {}",
            o.describe(),
            first_lines(&String::from_utf8_lossy(&o.stderr))
        );
        return (Build::failed(Status::CompileError, msg), Some(stats));
    }
    if let Err(e) = ctx.harness.link(&asm, &exe) {
        return (
            Build::failed(Status::LinkError, first_lines(&e)),
            Some(stats),
        );
    }
    (measure(ctx, case, &exe, dir, "sysyc"), Some(stats))
}

fn build_reference(ctx: &Context, case: &Case, dir: &Path, which: Reference) -> Build {
    let tag = match which {
        Reference::Gcc => "gcc",
        Reference::Clang => "clang",
    };
    let exe = dir.join(format!("{tag}.exe"));
    let built = compile_reference(
        ctx.harness,
        which,
        ctx.clang.as_deref(),
        &ctx.prelude,
        &case.sy,
        &exe,
    );
    match built {
        Ok(()) => measure(ctx, case, &exe, dir, tag),
        Err(e) => Build::failed(Status::CompileError, e),
    }
}

/// Runs `exe` with the plugin, judges it and collects the counts.
fn measure(ctx: &Context, case: &Case, exe: &Path, dir: &Path, tag: &str) -> Build {
    let markers = match timer_markers(&ctx.nm, exe) {
        Ok(m) => m,
        Err(e) => return Build::failed(Status::LinkError, e),
    };
    let counts_file = dir.join(format!("{tag}.counts"));
    let _ = fs::remove_file(&counts_file);
    let opts = RunOptions {
        timeout: Some(ctx.timeout),
        qemu_args: qemu_args(&ctx.plugin, &counts_file, markers),
        ..RunOptions::default()
    };
    let run = match ctx.harness.run_with(exe, case.input.as_deref(), &opts) {
        Ok(r) => r,
        Err(e) => return Build::failed(Status::Crash, e),
    };
    let expected = match case.expected() {
        Ok(e) => e,
        Err(e) => return Build::failed(Status::WrongAnswer, format!("no .out: {e}")),
    };
    let counts = Counts::read(&counts_file);
    let (status, detail) = match run.judge(&expected) {
        Ok(()) => match &counts {
            Ok(_) => (Status::Ok, None),
            Err(e) => (Status::PluginError, Some(e.clone())),
        },
        Err(e) if run.timed_out => (Status::Timeout, Some(e)),
        Err(e) if run.signal.is_some() => (Status::Crash, Some(e)),
        Err(e) => (Status::WrongAnswer, Some(e)),
    };
    Build {
        status,
        detail,
        counts: counts.ok(),
        run_seconds: run.duration.as_secs_f64(),
    }
}
