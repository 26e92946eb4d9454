//! Shared by the LLVM tests: finding the LLVM 14 tools, checking emitted IR with
//! `opt-14 -verify`, building it with `clang-14` for the host together with the
//! project's runtime (`runtime/sylib.c`, compiled once per content hash), running the
//! executable and judging its output.

#![allow(dead_code)] // Each test binary uses a different part.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use harness::process::{run_command, Outcome};
use harness::runtime::{fnv1a, unique_temp_dir, SYLIB_C, SYLIB_H};

/// The LLVM 14 programs the tests drive.
pub struct Tools {
    pub opt: PathBuf,
    pub clang: PathBuf,
    pub llc: PathBuf,
}

/// The tools, or why the tests must be skipped. `SYSY_CLANG`, `SYSY_OPT` and
/// `SYSY_LLC` override the search on `PATH`.
pub fn tools() -> Result<&'static Tools, String> {
    static TOOLS: OnceLock<Result<Tools, String>> = OnceLock::new();
    TOOLS
        .get_or_init(|| {
            let find = |var, name, hint| {
                harness::tools::find_tool(var, name, hint).map_err(|e| e.to_string())
            };
            Ok(Tools {
                clang: find("SYSY_CLANG", "clang-14", "apt-get install clang-14")?,
                opt: find("SYSY_OPT", "opt-14", "apt-get install llvm-14")?,
                llc: find("SYSY_LLC", "llc-14", "apt-get install llvm-14")?,
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// clang's default target (`clang-14 -print-target-triple`), for
/// `llvm::emit_module_for`: clang warns about a module without a triple.
pub fn host_triple(tools: &Tools) -> Result<&'static str, String> {
    static TRIPLE: OnceLock<Result<String, String>> = OnceLock::new();
    TRIPLE
        .get_or_init(|| {
            let out = Command::new(&tools.clang)
                .arg("-print-target-triple")
                .output()
                .map_err(|e| format!("cannot run clang: {e}"))?;
            let t = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if out.status.success() && !t.is_empty() {
                Ok(t)
            } else {
                Err("clang-14 -print-target-triple failed".to_string())
            }
        })
        .as_ref()
        .map(String::as_str)
        .map_err(Clone::clone)
}

/// A fresh scratch directory under the system temp dir.
pub fn scratch_dir() -> PathBuf {
    let base = std::env::temp_dir().join("sysyc-llvm-tests");
    fs::create_dir_all(&base).expect("create temp dir");
    unique_temp_dir(&base).expect("create scratch dir")
}

/// Runs `opt-14 -verify` on `ll`: `Ok` only if it exits 0 and prints nothing to
/// stderr (no errors, no warnings).
///
/// With `-disable-output`, so nothing is written anywhere. (It was `-o /dev/null`;
/// once /dev/null had been replaced by a regular file on a test machine (the cause
/// was not found), every run wrote its module into it, breaking other programs.)
pub fn verify(tools: &Tools, ll: &str, dir: &Path) -> Result<(), String> {
    let path = dir.join("verify.ll");
    fs::write(&path, ll).map_err(|e| e.to_string())?;
    let out = Command::new(&tools.opt)
        .args(["-verify", "-disable-output"])
        .arg(&path)
        .output()
        .map_err(|e| format!("cannot run opt: {e}"))?;
    if out.status.success() && out.stderr.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "opt-14 -verify ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// The runtime compiled for the host with `clang-14 -O2`, cached in the cargo target
/// directory by content hash (built in a private directory, renamed into place).
pub fn host_runtime(tools: &Tools) -> Result<&'static Path, String> {
    static RUNTIME: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            let cache = harness::default_cache_dir();
            let key = format!("{:016x}", fnv1a(&[SYLIB_C, SYLIB_H, "host clang-14 -O2"]));
            let obj = cache.join(format!("sylib-host-{key}.o"));
            if obj.is_file() {
                return Ok(obj);
            }
            fs::create_dir_all(&cache).map_err(|e| e.to_string())?;
            let tmp = unique_temp_dir(&cache).map_err(|e| e.to_string())?;
            fs::write(tmp.join("sylib.c"), SYLIB_C).map_err(|e| e.to_string())?;
            fs::write(tmp.join("sylib.h"), SYLIB_H).map_err(|e| e.to_string())?;
            let out = Command::new(&tools.clang)
                .args(["-O2", "-std=c11", "-c", "sylib.c", "-o", "sylib.o"])
                .current_dir(&tmp)
                .output()
                .map_err(|e| format!("cannot run clang: {e}"))?;
            let result = if out.status.success() {
                fs::rename(tmp.join("sylib.o"), &obj).map_err(|e| e.to_string())
            } else {
                Err(format!(
                    "compiling runtime/sylib.c for the host failed:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                ))
            };
            let _ = fs::remove_dir_all(&tmp);
            result.map(|()| obj)
        })
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(Clone::clone)
}

/// Builds `ll` into an executable with `clang-14 -O{level}` and the host runtime.
/// Any diagnostic from clang (even a warning) is an error.
pub fn build(tools: &Tools, ll: &str, level: u8, dir: &Path) -> Result<PathBuf, String> {
    let runtime = host_runtime(tools)?;
    let src = dir.join(format!("prog-O{level}.ll"));
    let exe = dir.join(format!("prog-O{level}"));
    fs::write(&src, ll).map_err(|e| e.to_string())?;
    let out = Command::new(&tools.clang)
        .arg(format!("-O{level}"))
        .arg(&src)
        .arg(runtime)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot run clang: {e}"))?;
    if out.status.success() && out.stderr.is_empty() {
        Ok(exe)
    } else {
        Err(format!(
            "clang-14 -O{level} ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Runs `exe` natively with `stdin` and a 512 MiB stack limit (as the RISC-V runs
/// under qemu get), killing it after `timeout`.
pub fn run(exe: &Path, stdin: Option<&Path>, timeout: Duration) -> Result<Outcome, String> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -s 524288 2>/dev/null; exec \"$0\"")
        .arg(exe)
        .env_clear();
    run_command(&mut cmd, stdin, Some(timeout)).map_err(|e| format!("cannot run {exe:?}: {e}"))
}

/// The exit status as the judge sees it (`128 + signal` when killed).
pub fn exit_status(o: &Outcome) -> Result<i32, String> {
    if o.timed_out {
        return Err(o.describe());
    }
    Ok(o.exit_code.unwrap_or_else(|| 128 + o.signal.unwrap_or(0)))
}

/// `harness::judge`, after dropping `\r` before `\n` from stdout.
pub fn judge(stdout: &[u8], status: i32, expected: &[u8]) -> Result<(), String> {
    let mut out = Vec::with_capacity(stdout.len());
    for (i, &b) in stdout.iter().enumerate() {
        if !(b == b'\r' && stdout.get(i + 1) == Some(&b'\n')) {
            out.push(b);
        }
    }
    harness::judge(&out, status, expected)
}

/// Stack for the front end, which recurses on deeply nested input.
const FRONT_STACK: usize = 256 << 20;

/// Runs `f` (front end, lowering, passes) on a thread with a big stack; a panic is an
/// error.
pub fn on_big_stack<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let worker = std::thread::Builder::new()
        .stack_size(FRONT_STACK)
        .spawn(f)
        .map_err(|e| format!("cannot spawn the compiler thread: {e}"))?;
    match worker.join() {
        Ok(r) => r,
        Err(_) => Err("the compiler panicked".to_string()),
    }
}
