//! Cross-check of the two SSA constructions (DESIGN.md, "SSA construction (both,
//! cross-checked)"): every SysY program of the project's tests and of the official
//! functional suite (when present) is lowered twice — with the Braun et al. builder,
//! and to memory form followed by Cytron et al.'s mem2reg — and both modules must
//! verify, contain no promotable slot any more, create comparable numbers of block
//! parameters, and (for the programs run here) behave identically in the interpreter.

use std::path::Path;

mod common;
use common::sources;

fn lower_both(path: &Path) -> (ir::Module, ir::Module) {
    let src = std::fs::read_to_string(path).unwrap();
    let name = path.display().to_string();
    let program = front::check(&name, &src).unwrap_or_else(|d| panic!("{}", d.render(&name, &src)));
    let braun = lower::lower_program(&program, false);
    let mut cytron = lower::lower_program(&program, true);
    for f in cytron.funcs.values_mut() {
        opt::mem2reg(f);
    }
    (braun, cytron)
}

fn run(m: &ir::Module, stdin: &[u8]) -> (Vec<u8>, i32) {
    let opts = interp::RunOptions {
        max_steps: Some(20_000_000),
        wall_clock_timers: false,
        ..Default::default()
    };
    match interp::run_module(m, stdin, &opts) {
        Ok(o) => (o.stdout, o.exit_code),
        Err(e) => (format!("error: {e}").into_bytes(), -1),
    }
}

/// Runs `check` on a thread with a large stack: the front end and lowering recurse
/// over expressions, and the suite has expressions thousands of operators long (as
/// the driver, which does the same).
fn check_dir(dir: &Path, run_programs: bool) -> (usize, usize, usize) {
    let dir = dir.to_path_buf();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || check_dir_inner(&dir, run_programs))
        .unwrap()
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

fn check_dir_inner(dir: &Path, run_programs: bool) -> (usize, usize, usize) {
    let (mut n, mut braun_params, mut cytron_params) = (0, 0, 0);
    for path in sources(dir) {
        let (braun, cytron) = lower_both(&path);
        if let Err(e) = ir::verify_module(&cytron) {
            panic!("{}: invalid IR after mem2reg:\n{e}", path.display());
        }
        let mut again = cytron.clone();
        for f in again.funcs.values_mut() {
            assert!(
                !opt::mem2reg(f),
                "{}: a promotable slot survived mem2reg",
                path.display()
            );
        }
        let (b, c) = (
            opt::count_block_params(&braun),
            opt::count_block_params(&cytron),
        );
        // Both remove trivial parameters; pruned placement needs no more than Braun's
        // minimal-on-the-fly placement, give or take parameters Braun's builder
        // removes only on an unreachable-free CFG.
        assert!(
            c <= b + b / 10 + 2,
            "{}: mem2reg made {c} block parameters, Braun {b}",
            path.display()
        );
        braun_params += b;
        cytron_params += c;
        if run_programs {
            let input = std::fs::read(path.with_extension("in")).unwrap_or_default();
            assert_eq!(
                run(&cytron, &input),
                run(&braun, &input),
                "{}",
                path.display()
            );
        }
        n += 1;
    }
    (n, braun_params, cytron_params)
}

#[test]
fn project_programs() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/programs"));
    let (n, b, c) = check_dir(dir, true);
    assert!(n > 0, "no programs in {}", dir.display());
    eprintln!("{n} programs: Braun {b} block parameters, mem2reg {c}");
}

#[test]
fn official_functional_suite() {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/sysy2022/functional"
    ));
    if !dir.exists() {
        eprintln!("skipped: {} not found", dir.display());
        return;
    }
    let (n, b, c) = check_dir(dir, true);
    eprintln!("{n} programs: Braun {b} block parameters, mem2reg {c}");
}
