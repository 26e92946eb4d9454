//! The LLVM path over every suite case, one test per case.
//!
//! For each case: SysY source -> `front` -> `lower` (Braun SSA; the "-O0 IR") and a
//! copy through `opt`'s -O2 pipeline (the "-O2 IR"), both checked by `ir`'s verifier;
//! then for each of the two modules `llvm::emit_module_for(host triple)` ->
//! `opt-14 -verify` (no diagnostics allowed) -> `clang-14 -O0` and `-O2` with the
//! host-compiled runtime (no diagnostics allowed) -> run natively with the case's
//! `.in` -> judge against `.out` (stdout, then the exit status; `harness::judge`).
//!
//! Each case is two tests:
//! - `<group>/<case>`: both IR levels built with `clang-14 -O2`; for the small
//!   programs (every group but `performance`) also with `clang-14 -O0` and the -O2 IR
//!   through the RISC-V path below.
//! - `full/<group>/<case>` (ignored; `-- --ignored` runs them): the builds the first
//!   test leaves out for the performance cases, which take minutes each (clang -O0
//!   keeps every value in memory; qemu emulates billions of instructions).
//!
//! The RISC-V path, when the toolchain of `harness` is present: the -O2 IR is emitted
//! without a triple and compiled by `llc-14 -O2 -march=riscv64 -mattr=+m,+a,+f,+d,+c
//! -target-abi=lp64d` (the bench's LLVM back-end column), linked with the RISC-V
//! runtime and judged under qemu. Set `LLVM_SUITE_NO_QEMU=1` to skip that part.
//!
//! Cases: `functional`, `hidden_functional` and `performance` of the official suite
//! (`<repo>/../shared/sysy2022`, or `$SYSY_SUITE`) and the project's `tests/programs`.
//! Passes with a skip message when the LLVM 14 tools or the suite are missing.
//! Filter as with any libtest binary: `cargo test -p llvm --test suite -- functional/`.
//!
//! One judging difference from `harness::judge` (as in the `riscv` suite): a carriage
//! return right before a newline is dropped from stdout, because `68_brainfk` prints
//! `\r\n` (gcc's binary does too) while its `.out` holds `\n`.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use harness::Case;
use libtest_mimic::{Arguments, Failed, Trial};

/// Native runs at clang -O2 take at most seconds; at -O0 a few performance cases take
/// minutes (no LLVM optimisation, every value spilled).
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// Runs under qemu of LLVM-compiled code.
const QEMU_TIMEOUT: Duration = Duration::from_secs(300);

/// The `llc` flags of the RISC-V check (and of the bench column).
const LLC_RISCV: &[&str] = &[
    "-O2",
    "-march=riscv64",
    "-mattr=+m,+a,+f,+d,+c",
    "-target-abi=lp64d",
];

fn main() {
    let args = Arguments::from_args();
    let repo = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut groups: Vec<(String, PathBuf)> = Vec::new();
    match harness::suite_root() {
        Some(root) => {
            for dir in ["functional", "hidden_functional", "performance"] {
                groups.push((dir.to_string(), root.join(dir)));
            }
        }
        None => eprintln!("skipping the official suite: ../shared/sysy2022 not found"),
    }
    groups.push(("programs".to_string(), repo.join("tests/programs")));

    let mut trials = Vec::new();
    for (group, dir) in groups {
        let slow = group == "performance";
        for case in harness::cases(&dir) {
            let (quick, rest) = if slow {
                (Builds::QUICK, Some(Builds::REST))
            } else {
                (Builds::ALL, None)
            };
            let name = format!("{group}/{}", case.name);
            let c = case.clone();
            trials.push(Trial::test(name, move || run_case(&c, quick)));
            if let Some(rest) = rest {
                let name = format!("full/{group}/{}", case.name);
                trials
                    .push(Trial::test(name, move || run_case(&case, rest)).with_ignored_flag(true));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// Which builds of a case a test makes.
#[derive(Copy, Clone)]
struct Builds {
    /// The host `clang-14` optimisation levels to build both IR levels with.
    clang_levels: &'static [u8],
    /// Whether to run the -O2 IR through `llc-14` for RISC-V under qemu.
    riscv: bool,
}

impl Builds {
    const ALL: Builds = Builds {
        clang_levels: &[0, 2],
        riscv: true,
    };
    const QUICK: Builds = Builds {
        clang_levels: &[2],
        riscv: false,
    };
    const REST: Builds = Builds {
        clang_levels: &[0],
        riscv: true,
    };
}

fn run_case(case: &Case, builds: Builds) -> Result<(), Failed> {
    let tools = match common::tools() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("skipping {}: {e}", case.name);
            return Ok(());
        }
    };
    let triple = common::host_triple(tools)?;
    let expected = case
        .expected()
        .map_err(|e| format!("cannot read {:?}: {e}", case.expected_out))?;
    let modules = compile(&case.sy)?;
    let dir = common::scratch_dir();
    let result = check_modules(tools, triple, &modules, case, &expected, &dir, builds);
    if result.is_ok() {
        fs::remove_dir_all(&dir).ok();
    } else {
        eprintln!("kept the files in {}", dir.display());
    }
    result
}

/// The case's IR before and after the -O2 pipeline.
struct Modules {
    o0: ir::Module,
    o2: ir::Module,
}

fn check_modules(
    tools: &common::Tools,
    triple: &str,
    modules: &Modules,
    case: &Case,
    expected: &[u8],
    dir: &Path,
    builds: Builds,
) -> Result<(), Failed> {
    for (ir_level, module) in [(0, &modules.o0), (2, &modules.o2)] {
        let ll = llvm::emit_module_for(module, triple);
        let ir_dir = dir.join(format!("ir-O{ir_level}"));
        fs::create_dir_all(&ir_dir).map_err(|e| e.to_string())?;
        let ctx = |e: String| format!("IR -O{ir_level}: {e}");
        common::verify(tools, &ll, &ir_dir).map_err(ctx)?;
        for &clang_level in builds.clang_levels {
            let ctx = |e: String| format!("IR -O{ir_level}, clang -O{clang_level}: {e}");
            let exe = common::build(tools, &ll, clang_level, &ir_dir).map_err(ctx)?;
            let out = common::run(&exe, case.input.as_deref(), RUN_TIMEOUT).map_err(ctx)?;
            let status = common::exit_status(&out).map_err(ctx)?;
            common::judge(&out.stdout, status, expected).map_err(ctx)?;
        }
    }
    if builds.riscv && std::env::var_os("LLVM_SUITE_NO_QEMU").is_none() {
        check_riscv(tools, &modules.o2, case, expected, dir)
            .map_err(|e| format!("IR -O2, llc-14 riscv64: {e}"))?;
    }
    Ok(())
}

/// The -O2 IR through `llc-14` for RV64GC, linked with the RISC-V runtime and run
/// under qemu. Skipped (Ok) without the cross toolchain.
fn check_riscv(
    tools: &common::Tools,
    module: &ir::Module,
    case: &Case,
    expected: &[u8],
    dir: &Path,
) -> Result<(), String> {
    let Ok(h) = harness::Harness::global() else {
        return Ok(());
    };
    let ll = dir.join("riscv.ll");
    let asm = dir.join("riscv.s");
    let exe = dir.join("riscv");
    fs::write(&ll, llvm::emit_module(module)).map_err(|e| e.to_string())?;
    let out = Command::new(&tools.llc)
        .args(LLC_RISCV)
        .arg(&ll)
        .arg("-o")
        .arg(&asm)
        .output()
        .map_err(|e| format!("cannot run llc: {e}"))?;
    if !out.status.success() || !out.stderr.is_empty() {
        return Err(format!(
            "llc ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    h.link(&asm, &exe)?;
    let opts = harness::RunOptions {
        timeout: Some(QEMU_TIMEOUT),
        ..harness::RunOptions::default()
    };
    let r = h.run_with(&exe, case.input.as_deref(), &opts)?;
    if r.timed_out {
        return Err("timed out under qemu".to_string());
    }
    common::judge(&r.stdout, r.exit_code, expected)
}

/// Front end, lowering, verification and the -O2 pipeline, on a thread with a big
/// stack.
fn compile(sy: &Path) -> Result<Modules, Failed> {
    let name = sy.display().to_string();
    let src = fs::read_to_string(sy).map_err(|e| format!("cannot read {name}: {e}"))?;
    common::on_big_stack(move || {
        let program = front::check(&name, &src).map_err(|d| d.render(&name, &src))?;
        let o0 = lower::lower_program(&program, false);
        ir::verify_module(&o0).map_err(|e| format!("invalid IR from lowering: {e}"))?;
        let mut o2 = o0.clone();
        let mut opts = opt::PassOptions {
            verify_each: true,
            ..opt::PassOptions::default()
        };
        opt::run_passes(&mut o2, &opt::pipeline(2), &mut opts)?;
        Ok(Modules { o0, o2 })
    })
    .map_err(Failed::from)
}
