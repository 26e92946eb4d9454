//! Every optimisation pass alone over the performance suite, judged by running the
//! result: one ignored test per (pass, case), `alone/<pass>/<case>`.
//!
//! The interpreter is the oracle for passes (`opt`'s `each_pass_alone` runs every pass
//! alone over the functional suites), but on the performance programs it takes minutes
//! per pass and case, and qemu on unoptimised code takes as long. Here the IR after the
//! one pass goes through `llvm::emit_module_for(host)` -> `opt-14 -verify` ->
//! `clang-14 -O2` -> a native run with the case's `.in`, judged against `.out`. LLVM
//! keeps the meaning of the IR it is given (our IR has no undefined behaviour for it to
//! exploit: no `nsw`, no `poison` flags), so a pass that changes the program's
//! behaviour changes the output here too.
//!
//! Each test: the SysY source -> `front` -> `lower` (Braun SSA; memory form for
//! `mem2reg`) -> the pass, with the verifier after it -> the LLVM build above.
//!
//! Ignored by default (about half an hour on two cores for all of them):
//! `cargo test --release -p llvm --test passes_alone -- --ignored`, or one pass with
//! `-- --ignored alone/gvn/`. Passes with a skip message when the LLVM 14 tools or the
//! suite are missing.

mod common;

use std::fs;
use std::time::Duration;

use harness::Case;
use libtest_mimic::{Arguments, Failed, Trial};

/// Native runs at clang -O2 take seconds; the limit only catches a hang.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

fn main() {
    let args = Arguments::from_args();
    let cases = match harness::suite_root() {
        Some(root) => harness::cases(&root.join("performance")),
        None => {
            eprintln!("skipping: ../shared/sysy2022 not found");
            Vec::new()
        }
    };
    let mut trials = Vec::new();
    for (pass, _) in opt::pass_names() {
        for case in &cases {
            let name = format!("alone/{pass}/{}", case.name);
            let case = case.clone();
            trials.push(Trial::test(name, move || check(pass, &case)).with_ignored_flag(true));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

fn check(pass: &'static str, case: &Case) -> Result<(), Failed> {
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
    let module = compile(case, pass)?;
    let dir = common::scratch_dir();
    let result = build_and_judge(tools, triple, &module, case, &expected, &dir);
    if result.is_ok() {
        fs::remove_dir_all(&dir).ok();
    } else {
        eprintln!("kept the files in {}", dir.display());
    }
    result.map_err(|e| format!("'{pass}' alone: {e}").into())
}

fn build_and_judge(
    tools: &common::Tools,
    triple: &str,
    module: &ir::Module,
    case: &Case,
    expected: &[u8],
    dir: &std::path::Path,
) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let ll = llvm::emit_module_for(module, triple);
    common::verify(tools, &ll, dir)?;
    let exe = common::build(tools, &ll, 2, dir)?;
    let out = common::run(&exe, case.input.as_deref(), RUN_TIMEOUT)?;
    let status = common::exit_status(&out)?;
    common::judge(&out.stdout, status, expected)
}

/// Front end, lowering (memory form for `mem2reg`, whose input it is) and `pass` with
/// the verifier after it.
fn compile(case: &Case, pass: &'static str) -> Result<ir::Module, String> {
    let name = case.sy.display().to_string();
    let src = fs::read_to_string(&case.sy).map_err(|e| format!("cannot read {name}: {e}"))?;
    common::on_big_stack(move || {
        let program = front::check(&name, &src).map_err(|d| d.render(&name, &src))?;
        let mut m = lower::lower_program(&program, pass == "mem2reg");
        ir::verify_module(&m).map_err(|e| format!("invalid IR from lowering: {e}"))?;
        let mut opts = opt::PassOptions {
            verify_each: true,
            ..opt::PassOptions::default()
        };
        opt::run_passes(&mut m, &[pass], &mut opts)?;
        Ok(m)
    })
}
