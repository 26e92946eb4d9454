//! The machine IR text form over whole programs: every `.sy` of the official suite
//! (functional, hidden functional and performance; skipped with a message when
//! `shared/sysy2022` is absent) and of `tests/programs` is compiled at -O2 (and -O0,
//! whose functions reach the late stages in another shape), and after every
//! back-end stage each function is printed, parsed back, compared with the original
//! (`parse(print(f)) == f`, so also `print(parse(print(f))) == print(f)`) and
//! verified with the rules of that stage.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

fn check_program(sy: &Path) -> Result<(), Failed> {
    let src = std::fs::read_to_string(sy).map_err(|e| e.to_string())?;
    let name = sy.display().to_string();
    // The front end recurses on deeply nested programs: give it a big stack.
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || check_source(&name, &src))
        .map_err(|e| e.to_string())?
        .join()
        .map_err(|_| "compiler panicked".to_string())?
        .map_err(Failed::from)
}

fn check_source(name: &str, src: &str) -> Result<(), String> {
    let program = front::check(name, src).map_err(|d| d.render(name, src))?;
    for opt_level in [2, 0] {
        check_module(&program, opt_level).map_err(|e| format!("-O{opt_level}: {e}"))?;
    }
    Ok(())
}

fn check_module(program: &front::tast::Program, opt_level: u8) -> Result<(), String> {
    let mut module = lower::lower_program(program, false);
    opt::run_passes(
        &mut module,
        &opt::pipeline(opt_level),
        &mut opt::PassOptions::default(),
    )?;
    let opts = riscv::Options {
        opt_level,
        verify: true,
        ..Default::default()
    };
    let mut failure: Option<String> = None;
    let mut stages = 0usize;
    let mut hook = |when: riscv::When,
                    stage: &'static riscv::StageInfo,
                    mf: &riscv::mir::MFunction,
                    _: Option<&riscv::srcloc::InstLocs>| {
        if when != riscv::When::After || failure.is_some() {
            return;
        }
        stages += 1;
        let text = riscv::text::print_function(mf);
        let fail = |what: String| {
            Some(format!(
                "function {} after {}: {what}\n{text}",
                mf.name, stage.name
            ))
        };
        match riscv::text::parse_function(&text) {
            Err(e) => failure = fail(format!("does not parse back: {e}")),
            Ok(parsed) => {
                if parsed != *mf {
                    let again = riscv::text::print_function(&parsed);
                    failure = fail(format!(
                        "parses back to a different function; printed again:\n{again}"
                    ));
                } else if let Err(e) = riscv::verify::verify(&parsed, stage.after) {
                    failure = fail(format!("parsed function does not verify: {e}"));
                }
            }
        }
    };
    riscv::emit_module_hooked(&module, &opts, None, None, Some(&mut hook))
        .map_err(|e| e.to_string())?;
    if let Some(f) = failure {
        return Err(f);
    }
    if stages == 0 && module.funcs.values().any(|f| !f.is_declaration()) {
        return Err("the stage hook was never called".into());
    }
    Ok(())
}

fn sy_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "sy"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let mut add = |group: &str, dir: &Path| {
        for sy in sy_files(dir) {
            let stem = sy.file_stem().unwrap().to_string_lossy().into_owned();
            let name = format!("{group}::{stem}");
            trials.push(Trial::test(name, move || check_program(&sy)));
        }
    };
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs");
    add("programs", &programs);
    match harness::suite_root() {
        None => {
            trials.push(Trial::test("suite::absent", || {
                eprintln!("skipping the official suite: shared/sysy2022 is not present");
                Ok(())
            }));
        }
        Some(root) => {
            for suite in ["functional", "hidden_functional", "performance"] {
                add(suite, &root.join(suite));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
