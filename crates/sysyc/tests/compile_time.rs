//! Compile time stays near-linear in the input: every generated program family of
//! `bench scaling` (`bench::generated::DIMENSIONS`), compiled at `-O2` at its base size
//! and at sixteen times it, takes at most [`MAX_GROWTH`] times the
//! CPU time for 16 times the input. A linear compiler shows about 16 (less, with
//! the fixed cost of a process); a pass quadratic in loops, blocks or nesting
//! depth shows hundreds. (`bench scaling` gives the full table, with memory.)
//!
//! The only test of its binary: the CPU time is the children's (`getrusage`), so
//! no other test may start processes meanwhile.

use std::process::Command;

use bench::generated::DIMENSIONS;

const SYSYC: &str = env!("CARGO_BIN_EXE_sysyc");

/// Budget for 16x the input: the 5x per 4x is 25; the rest is noise.
const MAX_GROWTH: f64 = 40.0;

/// CPU time (user + system) of the waited-for children so far, in seconds.
fn children_cpu() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    assert_eq!(rc, 0, "getrusage failed");
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// The least CPU time of compiling `source` at -O2 (of `runs` compiles).
fn compile_cpu(dir: &std::path::Path, name: &str, source: &str, runs: usize) -> f64 {
    let path = dir.join(format!("{name}.sy"));
    std::fs::write(&path, source).unwrap();
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let before = children_cpu();
        let out = Command::new(SYSYC)
            .args(["-O2", "-S", "-o", "/dev/null"])
            .arg(&path)
            .output()
            .expect("run sysyc");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        best = best.min(children_cpu() - before);
    }
    best
}

#[test]
fn compile_time_grows_near_linearly_in_every_generated_dimension() {
    let dir = std::env::temp_dir().join(format!("sysyc-compile-time-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut table = String::new();
    let mut worst: Option<(f64, &str)> = None;
    for dim in DIMENSIONS {
        let small_n = dim.base;
        let small = compile_cpu(&dir, dim.name, &(dim.generate)(small_n), 3);
        let large = compile_cpu(&dir, dim.name, &(dim.generate)(16 * small_n), 2);
        // The fixed cost of a process (a few milliseconds) is part of both.
        let growth = large / small.max(1e-3);
        table += &format!(
            "{:<14} n {:>6} -> {:>7}: {:>8.4} s -> {:>8.4} s, {growth:>6.1}x\n",
            dim.name,
            small_n,
            16 * small_n,
            small,
            large
        );
        if worst.is_none_or(|(g, _)| growth > g) {
            worst = Some((growth, dim.name));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (growth, name) = worst.unwrap();
    assert!(
        growth <= MAX_GROWTH,
        "{name}: compile time grows {growth:.1}x for 16x the input (budget {MAX_GROWTH}x):\n{table}"
    );
    eprintln!("{table}");
}
