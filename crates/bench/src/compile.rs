//! Compiling a case: with sysyc (the compiler under test, timed and measured) and
//! with the reference C compilers (`riscv64-linux-gnu-gcc -O2`, `clang-14 -O2`).
//!
//! A `.sy` file becomes C with a prelude declaring the runtime and defining
//! `starttime()` / `stoptime()`, passed with `-include` so `__LINE__` keeps the
//! source's numbering. Files that are not C (a file-scope array sized by a
//! `const int`) are retried with those constants rewritten as enumerators, then
//! as C++ (`-x c++ -fpermissive`). Float semantics match
//! SysY with `-ffp-contract=off` and single-precision literals.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use harness::csource::{const_ints_to_enums, sysy_c_flags, PRELUDE};
use harness::process::{run_command, Outcome};
use harness::Harness;

/// A reference compiler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference {
    /// `riscv64-linux-gnu-gcc -O2`.
    Gcc,
    /// `clang-14 -O2 --target=riscv64-linux-gnu` (compile only; gcc links).
    Clang,
}

/// How sysyc's compilation went.
#[derive(Debug, Clone)]
pub struct SysycCompile {
    /// The process outcome (exit status, stderr, time, peak memory).
    pub outcome: Outcome,
}

/// Runs `sysyc -S -o asm sy -O<level>`, measuring time and peak memory.
pub fn compile_sysyc(
    sysyc: &Path,
    sy: &Path,
    asm: &Path,
    level: u32,
    timeout: Duration,
) -> Result<SysycCompile, String> {
    let mut cmd = Command::new(sysyc);
    cmd.arg("-S")
        .arg("-o")
        .arg(asm)
        .arg(sy)
        .arg(format!("-O{level}"));
    let outcome = run_command(&mut cmd, None, Some(timeout))
        .map_err(|e| format!("cannot run {}: {e}", sysyc.display()))?;
    Ok(SysycCompile { outcome })
}

/// The `llc-14` flags of the LLVM back-end column (as in `crates/llvm`'s suite).
pub const LLC_FLAGS: &[&str] = &[
    "-O2",
    "-march=riscv64",
    "-mattr=+m,+a,+f,+d,+c",
    "-target-abi=lp64d",
];

/// sysyc's optimised IR through LLVM's RISC-V back end: `sysyc --emit llvm -O<level>`
/// then `llc-14` ([`LLC_FLAGS`]) into `asm`.
pub fn compile_llc(
    sysyc: &Path,
    llc: &Path,
    sy: &Path,
    asm: &Path,
    level: u32,
    timeout: Duration,
) -> Result<(), String> {
    let ll = asm.with_extension("ll");
    let mut cmd = Command::new(sysyc);
    cmd.args(["--emit", "llvm", "-o"])
        .arg(&ll)
        .arg(sy)
        .arg(format!("-O{level}"));
    let o = run_command(&mut cmd, None, Some(timeout))
        .map_err(|e| format!("cannot run {}: {e}", sysyc.display()))?;
    if !o.success() {
        return Err(format!(
            "sysyc --emit llvm {}: {}",
            o.describe(),
            first_lines(&String::from_utf8_lossy(&o.stderr))
        ));
    }
    let mut cmd = Command::new(llc);
    cmd.args(LLC_FLAGS).arg(&ll).arg("-o").arg(asm);
    let o = run_command(&mut cmd, None, Some(timeout))
        .map_err(|e| format!("cannot run {}: {e}", llc.display()))?;
    if !o.success() {
        return Err(format!(
            "llc {}: {}",
            o.describe(),
            first_lines(&String::from_utf8_lossy(&o.stderr))
        ));
    }
    Ok(())
}

/// `llc-14` on PATH, if installed.
pub fn find_llc() -> Option<PathBuf> {
    harness::tools::which("llc-14")
}

/// Compiles and links `sy` with a reference compiler into `exe`.
/// `prelude` is the path of a file holding [`PRELUDE`](harness::csource::PRELUDE).
///
/// Attempts, in order: the file as C; as C with scalar `const int`s rewritten to
/// enumerators ([`const_ints_to_enums`]); as C++ with `-fpermissive` (needs
/// `g++-riscv64-linux-gnu` for gcc). The first that compiles wins.
pub fn compile_reference(
    h: &Harness,
    which: Reference,
    clang: Option<&Path>,
    prelude: &Path,
    sy: &Path,
    exe: &Path,
) -> Result<(), String> {
    first_that_compiles(sy, exe, |src, lang| match which {
        Reference::Gcc => gcc_build(h, prelude, src, exe, lang),
        Reference::Clang => {
            let clang = clang.ok_or("clang-14 not found")?;
            let obj = exe.with_extension("o");
            clang_compile(clang, prelude, src, &obj, lang)
                .and_then(|()| h.link_files(&[&obj], &[], exe))
        }
    })
}

/// `gcc -O2 -S`: the reference's assembly of `sy` in `asm` (the same attempts as
/// [`compile_reference`]).
pub fn reference_asm(h: &Harness, prelude: &Path, sy: &Path, asm: &Path) -> Result<(), String> {
    first_that_compiles(sy, asm, |src, lang| {
        let mut cmd = Command::new(&h.toolchain.cc);
        cmd.arg("-O2").args(sysy_c_flags(prelude, lang));
        cmd.arg(src).arg("-S").arg("-o").arg(asm);
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {}: {e}", h.toolchain.cc.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    })
}

/// Runs `build` on `sy` as C, as C with scalar `const int`s rewritten to
/// enumerators (written beside `out`), then as C++, until one succeeds.
fn first_that_compiles(
    sy: &Path,
    out: &Path,
    mut build: impl FnMut(&Path, &str) -> Result<(), String>,
) -> Result<(), String> {
    let source = fs::read_to_string(sy).map_err(|e| format!("{}: {e}", sy.display()))?;
    let rewritten = match const_ints_to_enums(&source) {
        Some(text) => {
            let path = out.with_extension("c");
            fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            Some(path)
        }
        None => None,
    };
    let mut attempts: Vec<(&Path, &str)> = vec![(sy, "c")];
    if let Some(p) = &rewritten {
        attempts.push((p, "c"));
    }
    attempts.push((sy, "c++"));
    let mut errors = Vec::new();
    for (src, lang) in attempts {
        match build(src, lang) {
            Ok(()) => return Ok(()),
            Err(e) => errors.push(format!(
                "as {lang} ({}): {}",
                src.display(),
                first_lines(&e)
            )),
        }
    }
    Err(errors.join("\n"))
}

/// The C text `bench to-c` prints: the prelude, then the (rewritten) source
/// with a `#line` directive so line numbers stay those of the `.sy` file.
pub fn to_c(sy: &Path) -> Result<String, String> {
    let source = fs::read_to_string(sy).map_err(|e| format!("{}: {e}", sy.display()))?;
    let body = const_ints_to_enums(&source).unwrap_or(source);
    Ok(format!("{PRELUDE}#line 1 \"{}\"\n{body}", sy.display()))
}

fn gcc_build(
    h: &Harness,
    prelude: &Path,
    src: &Path,
    exe: &Path,
    lang: &str,
) -> Result<(), String> {
    let mut flags = vec!["-O2".to_string()];
    flags.extend(sysy_c_flags(prelude, lang));
    flags.push(src.display().to_string());
    flags.push("-x".into());
    flags.push("none".into());
    let refs: Vec<&str> = flags.iter().map(String::as_str).collect();
    h.link_files(&[], &refs, exe)
}

fn clang_compile(
    clang: &Path,
    prelude: &Path,
    src: &Path,
    obj: &Path,
    lang: &str,
) -> Result<(), String> {
    let mut cmd = Command::new(clang);
    cmd.args([
        "--target=riscv64-linux-gnu",
        "-march=rv64gc",
        "-mabi=lp64d",
        "-O2",
        "-w",
        "-ffp-contract=off",
        "-cl-single-precision-constant",
        "-c",
        "-include",
    ]);
    cmd.arg(prelude).arg("-x").arg(lang);
    if lang == "c++" {
        cmd.arg("-fpermissive");
    }
    cmd.arg(src).arg("-o").arg(obj);
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", clang.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The first few lines of a compiler error, for a compact report.
pub fn first_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().take(4).collect();
    lines.join("\n")
}

/// `clang-14` on PATH, if installed.
pub fn find_clang() -> Option<PathBuf> {
    harness::tools::which("clang-14")
}
