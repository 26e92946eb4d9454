//! The register allocation checker (`riscv::regalloc::checker`) over every function
//! of every program: the project's own `tests/programs/*.sy` always, and the
//! official suite's functional, hidden-functional and performance cases when
//! `../shared/sysy2022` (or `$SYSY_SUITE`) is present, and `sysy2026/performance`
//! beside it. Each file is compiled at
//! -O2, -O1 (the same pipeline today) and -O0 (the back end without the
//! pre-allocation passes) with the back end's verification on, which runs the
//! checker after allocating each function: an allocation it cannot prove fails the
//! test with the function, block, instruction, value and location.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

fn sy_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "sy"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Compiles `path` at `opt_level` with every allocation checked; the number of
/// functions checked.
fn check_file(path: &Path, opt_level: u8) -> Result<usize, String> {
    let name = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    let module = sysyc::compile_to_ir(&name, &src, opt_level, sysyc::SsaMode::Braun)?;
    let opts = riscv::Options {
        opt_level,
        verify: true,
        ..Default::default()
    };
    riscv::emit_module(&module, &opts).map_err(|e| format!("{name} -O{opt_level}: {e}"))?;
    Ok(module
        .funcs
        .iter()
        .filter(|(_, f)| !f.is_declaration())
        .count())
}

#[test]
fn every_allocation_of_the_suite_is_proved() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = sy_files(&root.join("tests/programs"));
    assert!(!files.is_empty(), "no tests/programs/*.sy");
    match harness::suite_root() {
        Some(suite) => {
            for dir in ["functional", "hidden_functional", "performance"] {
                files.extend(sy_files(&suite.join(dir)));
            }
            // The later contest's performance cases sit beside the 2022 suite.
            if let Some(shared) = suite.parent() {
                files.extend(sy_files(&shared.join("sysy2026/performance")));
            }
        }
        None => eprintln!(
            "note: ../shared/sysy2022 not found; checking the project's own programs only"
        ),
    }
    let jobs: Vec<(PathBuf, u8)> = files
        .iter()
        .flat_map(|f| [2u8, 1, 0].map(|o| (f.clone(), o)))
        .collect();
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let functions = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            // The front end recurses on deeply nested programs: a big stack.
            std::thread::Builder::new()
                .stack_size(512 << 20)
                .spawn_scoped(s, || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((path, o)) = jobs.get(i) else { break };
                    match check_file(path, *o) {
                        Ok(n) => {
                            functions.fetch_add(n, Ordering::Relaxed);
                        }
                        Err(e) => failures.lock().unwrap().push(e),
                    }
                })
                .expect("spawn a worker");
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "checked {} function allocations ({} files at -O2, -O1 and -O0) in {:.1} s",
        functions.load(Ordering::Relaxed),
        files.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
