//! Compile time stays near-linear in the input: every generated program family of
//! `bench scaling` (`bench::generated::DIMENSIONS`), compiled at `-O2` at its base size
//! and at sixteen times it, takes at most [`MAX_GROWTH`] times the
//! CPU time for 16 times the input. A linear compiler shows about 16 (less, with
//! the fixed cost of a process); a pass quadratic in loops, blocks or nesting
//! depth shows hundreds. (`bench scaling` gives the full table, with memory.)
//!
//! Peak memory stays near-linear too: from four to sixteen times the base size it
//! grows at most [`MAX_MEMORY_LAST_GROWTH`] times, and stays under [`MAX_MEMORY_MB`].
//!
//! The same holds pass by pass (`--time-passes`): a pass that takes a fair share
//! of the large compile ([`PASS_SHARE`]) may grow at most [`MAX_PASS_GROWTH`]
//! times, or at most [`MAX_PASS_LAST_GROWTH`] times from four times the base to
//! sixteen. A pass quadratic in the input grows 256 times while the whole compile,
//! which the other passes keep near-linear, may stay within its budget (a
//! strength reduction that grew 81 times did).
//!
//! The only test of its binary: the CPU time is the children's (`getrusage`), so
//! no other test may start processes meanwhile.

use std::process::Command;

use bench::generated::DIMENSIONS;

const SYSYC: &str = env!("CARGO_BIN_EXE_sysyc");

/// Budget for 16x the input: the 5x per 4x is 25; the rest is noise.
const MAX_GROWTH: f64 = 40.0;

/// Budget of one pass for 16x the input: well below a quadratic pass's 256, and
/// far enough above a linear one's 16 for the noise of a pass timed alone and for
/// the cache misses of a large input (complete GVN and PRE grow about 40 to 65
/// times on `array-stores`, 5.8 times per 4x from 1250 to 80000 stores).
const MAX_PASS_GROWTH: f64 = 100.0;

/// Budget of one pass from 4x to 16x the input, for a pass over
/// [`MAX_PASS_GROWTH`] (or too fast to time at the base size): a pass whose work saturates a constant bound per loop
/// or block grows fast at the smallest sizes, then linearly (a quadratic one
/// grows 16 times here too, one with a large linear term a little less).
const MAX_PASS_LAST_GROWTH: f64 = 8.0;

/// Budget of the peak memory from 4x to 16x the input: the 5x per 4x. A
/// linear compiler shows at most 4 (less, with the memory of an empty compile); a
/// quadratic one 16 once its term dominates. (Complete GVN once kept a copy of
/// the module's effect summaries per function: 5.7x here on `functions`.)
const MAX_MEMORY_LAST_GROWTH: f64 = 5.0;

/// Budget of the peak memory at 16x the input, in MB (the 400 MB).
const MAX_MEMORY_MB: f64 = 400.0;

/// The share of the large compile from which a pass's growth is checked (below
/// it, its time at the base size is too short to measure).
const PASS_SHARE: f64 = 0.05;

/// A pass's time at the base size is taken as at least this (milliseconds), so
/// that timer noise on a pass of a few microseconds makes no growth.
const MIN_PASS_MS: f64 = 0.5;

/// The rows of a `--time-passes` report: each stage's name and milliseconds,
/// summed over its rows.
fn pass_times(report: &str) -> Vec<(String, f64)> {
    let mut lines = report.lines().skip_while(|l| !l.starts_with("====="));
    lines.next();
    let header = lines.next().expect("a --time-passes header");
    let at = header.find("stage").expect("a stage column");
    let mut out: Vec<(String, f64)> = Vec::new();
    for l in lines.take_while(|l| l.len() > at) {
        let ms: f64 = l.split_whitespace().next().unwrap().parse().unwrap();
        let name = l[at..].trim().to_string();
        if name == "total" {
            continue;
        }
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, t)) => *t += ms,
            None => out.push((name, ms)),
        }
    }
    out
}

/// CPU time (user + system) of the waited-for children so far, in seconds.
fn children_cpu() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    assert_eq!(rc, 0, "getrusage failed");
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// Compiles `path` at -O2 with `--time-passes`, reaping the process with `wait4` to
/// learn its own peak resident memory (`getrusage` of the children gives only the
/// largest of all): its stderr and peak memory in MB. Fails the test if it fails.
// The child is reaped by `wait4`, which clippy does not see.
#[allow(clippy::zombie_processes)]
fn run_measured(path: &std::path::Path) -> (String, f64) {
    use std::io::Read;
    let mut child = Command::new(SYSYC)
        .args(["-O2", "--time-passes", "-S", "-o", "/dev/null"])
        .arg(path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run sysyc");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let mut status = 0;
    // SAFETY: wait4 writes only the status and the struct it is given; the child
    // is ours and not yet reaped (`child` is never waited for after this).
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{}: status {status}: {stderr}",
        path.display()
    );
    // ru_maxrss is in kilobytes on Linux.
    (stderr, ru.ru_maxrss as f64 / 1024.0)
}

/// What compiling one program measured: the least of several compiles.
struct Compile {
    /// CPU time in seconds.
    cpu: f64,
    /// Peak resident memory in MB.
    peak_mb: f64,
    /// Each stage's time in milliseconds.
    passes: Vec<(String, f64)>,
}

/// The least CPU time and peak memory of compiling `source` at -O2 (of `runs`
/// compiles), and each stage's least time in those compiles (milliseconds).
fn compile_cpu(dir: &std::path::Path, name: &str, source: &str, runs: usize) -> Compile {
    let path = dir.join(format!("{name}.sy"));
    std::fs::write(&path, source).unwrap();
    let mut best = f64::INFINITY;
    let mut passes: Vec<(String, f64)> = Vec::new();
    let mut peak_mb = f64::INFINITY;
    for _ in 0..runs {
        let before = children_cpu();
        let (stderr, peak) = run_measured(&path);
        best = best.min(children_cpu() - before);
        peak_mb = peak_mb.min(peak);
        for (pass, ms) in pass_times(&stderr) {
            match passes.iter_mut().find(|(n, _)| *n == pass) {
                Some((_, t)) => *t = t.min(ms),
                None => passes.push((pass, ms)),
            }
        }
    }
    Compile {
        cpu: best,
        peak_mb,
        passes,
    }
}

/// One stage's growth, for a stage taking at least [`PASS_SHARE`] of the large
/// compile.
struct PassRow {
    pass: String,
    /// Milliseconds at the base size (at least [`MIN_PASS_MS`]) and at 16x.
    base: f64,
    ms: f64,
    /// Growth for 16x the input, and from 4x to 16x.
    growth: f64,
    last: f64,
    /// Whether it is over budget.
    slow: bool,
}

/// The growth of each stage of the large compile that takes at least
/// [`PASS_SHARE`] of it, from its times in the small, medium and large ones.
fn pass_rows(
    small: &[(String, f64)],
    medium: &[(String, f64)],
    large: &[(String, f64)],
) -> Vec<PassRow> {
    let large_total: f64 = large.iter().map(|(_, ms)| ms).sum();
    let mut rows = Vec::new();
    for (pass, ms) in large {
        if *ms < PASS_SHARE * large_total {
            continue;
        }
        let at = |passes: &[(String, f64)]| {
            passes
                .iter()
                .find(|(n, _)| n == pass)
                .map_or(0.0, |(_, t)| t.max(MIN_PASS_MS))
        };
        let (base, at_medium) = (at(small), at(medium));
        let (growth, last) = (ms / base, ms / at_medium);
        // Below the floor, the growth from the base size is not measured.
        let unmeasured = base <= MIN_PASS_MS;
        rows.push(PassRow {
            pass: pass.clone(),
            base,
            ms: *ms,
            growth,
            last,
            slow: (growth > MAX_PASS_GROWTH || unmeasured) && last > MAX_PASS_LAST_GROWTH,
        });
    }
    rows
}

/// Each stage's least time in `a` and `b`.
fn least_of(a: &[(String, f64)], b: &[(String, f64)]) -> Vec<(String, f64)> {
    a.iter()
        .map(|(pass, ms)| {
            let again = b.iter().find(|(n, _)| n == pass).map_or(*ms, |(_, t)| *t);
            (pass.clone(), ms.min(again))
        })
        .collect()
}

#[test]
fn compile_time_grows_near_linearly_in_every_generated_dimension() {
    let dir = std::env::temp_dir().join(format!("sysyc-compile-time-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut table = String::new();
    let mut worst: Option<(f64, &str)> = None;
    let mut slow_passes: Vec<String> = Vec::new();
    let mut big_memory: Vec<String> = Vec::new();
    for dim in DIMENSIONS {
        let small_n = dim.base;
        let small = compile_cpu(&dir, dim.name, &(dim.generate)(small_n), 3);
        let medium = compile_cpu(&dir, dim.name, &(dim.generate)(4 * small_n), 3);
        let large = compile_cpu(&dir, dim.name, &(dim.generate)(16 * small_n), 3);
        let (small_passes, medium_passes, large_passes) =
            (&small.passes, &medium.passes, &large.passes);
        let memory_growth = large.peak_mb / medium.peak_mb;
        if memory_growth > MAX_MEMORY_LAST_GROWTH || large.peak_mb > MAX_MEMORY_MB {
            big_memory.push(format!(
                "{}: {:.1} MB -> {:.1} MB from 4x to 16x ({memory_growth:.1}x)",
                dim.name, medium.peak_mb, large.peak_mb
            ));
        }
        let (small, large) = (small.cpu, large.cpu);
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
        let mut rows = pass_rows(small_passes, medium_passes, large_passes);
        if rows.iter().any(|r| r.slow) {
            // A pass timed alone at a few milliseconds is noisy (another process
            // on the machine, the cache): a growth over budget is measured again,
            // each stage's time the least of more compiles, before it counts. A
            // quadratic pass grows 16 times from 4x whatever the noise.
            let medium_again = compile_cpu(&dir, dim.name, &(dim.generate)(4 * small_n), 5);
            let large_again = compile_cpu(&dir, dim.name, &(dim.generate)(16 * small_n), 5);
            let (medium, large) = (
                least_of(medium_passes, &medium_again.passes),
                least_of(large_passes, &large_again.passes),
            );
            rows = pass_rows(small_passes, &medium, &large);
        }
        for r in &rows {
            let PassRow {
                pass,
                base,
                ms,
                growth,
                last,
                ..
            } = r;
            table += &format!(
                "  {pass:<28} {base:>8.2} ms -> {ms:>8.2} ms, {growth:>6.1}x ({last:.1}x from 4x)\n"
            );
            if r.slow {
                slow_passes.push(format!(
                    "{}: {pass} grows {growth:.1}x ({last:.1}x from 4x)",
                    dim.name
                ));
            }
        }
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
    assert!(
        slow_passes.is_empty(),
        "passes growing more than {MAX_PASS_GROWTH}x for 16x the input: {}\n{table}",
        slow_passes.join(", ")
    );
    assert!(
        big_memory.is_empty(),
        "peak memory over budget ({MAX_MEMORY_LAST_GROWTH}x from 4x to 16x the input, \
         {MAX_MEMORY_MB} MB): {}",
        big_memory.join(", ")
    );
    eprintln!("{table}");
}
