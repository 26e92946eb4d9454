//! `bench scaling`: compile time and peak memory of sysyc as generated programs grow.
//!
//! Each *dimension* is a family of SysY programs that grows along one axis
//! (statements in a block, branches in a loop body, functions, loop depth,
//! sequential loops, call-graph depth, initialiser size). The command generates
//! each at 1x, 4x, 16x, ... of its base size up to the largest factor (at most
//! 64x) whose program stays within the 0.5 MB, compiles it with `sysyc -S`, and
//! prints the wall time, the CPU time (user plus system), the peak resident
//! memory (`ru_maxrss` from `wait4`) and the growth ratio of CPU time and memory
//! from one size to the next. A compiler that is linear shows ratios near 4; the
//! budget (issue 20) is at most 5 per 4x. The ratios use CPU time because wall
//! time grows when other processes share the cores; with `--repeat N` each
//! program is compiled N times and the least time of each kind is kept. The
//! repeats go round the sizes of a dimension in turn, so that a slower stretch of
//! the machine does not land on one size only.
//!
//! These are compile-time measurements only: the programs are not run. The
//! generators are written so that what they compute depends on input
//! (`getint()`), which keeps the optimiser from folding them away.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use bench::generated::{Dimension, DIMENSIONS};
use harness::process::run_command;

/// One compile of one generated program.
struct Measurement {
    n: usize,
    bytes: usize,
    seconds: Option<f64>,
    cpu_seconds: f64,
    peak_mb: f64,
    failure: Option<String>,
}

/// Compiles `file` once.
fn compile_once(
    options: &ScalingOptions,
    file: &Path,
    n: usize,
    bytes: usize,
) -> Result<Measurement, String> {
    let mut cmd = Command::new(options.sysyc);
    cmd.arg(format!("-O{}", options.opt))
        .arg("-S")
        .arg("-o")
        .arg("/dev/null")
        .arg(file);
    let out = run_command(&mut cmd, None, Some(options.timeout)).map_err(|e| e.to_string())?;
    let failure = if out.success() {
        None
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr.lines().next().unwrap_or("").to_string();
        Some(format!("{} {first}", out.describe()))
    };
    Ok(Measurement {
        n,
        bytes,
        seconds: (!out.timed_out).then_some(out.duration.as_secs_f64()),
        cpu_seconds: out.cpu_time.as_secs_f64(),
        peak_mb: out.max_rss_kb as f64 / 1024.0,
        failure,
    })
}

impl Measurement {
    /// Keeps the least of each figure of `self` and `again` (a repeat of the same
    /// compile).
    fn keep_least(&mut self, again: &Measurement) {
        self.seconds = match (self.seconds, again.seconds) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.cpu_seconds = self.cpu_seconds.min(again.cpu_seconds);
        self.peak_mb = self.peak_mb.min(again.peak_mb);
    }

    fn succeeded(&self) -> bool {
        self.failure.is_none() && self.seconds.is_some()
    }
}

/// Measures one dimension at every scale. The first round compiles the sizes in
/// increasing order and stops after the first that times out; each further
/// round (`--repeat`) compiles every size that succeeded once more, in
/// turn, so that a change in the machine's speed during the run (other processes,
/// frequency) falls on all sizes alike instead of on the largest, whose compiles
/// come last.
fn measure_dimension(
    options: &ScalingOptions,
    dim: &Dimension,
) -> Result<Vec<Measurement>, String> {
    let mut programs = Vec::new();
    let mut results: Vec<Measurement> = Vec::new();
    let mut factor = 1;
    while factor <= options.max_factor.unwrap_or(dim.top) {
        let n = dim.base * factor;
        let source = (dim.generate)(n);
        let file = options.work.join(format!("{}-{n}.sy", dim.name));
        fs::write(&file, &source).map_err(|e| format!("{}: {e}", file.display()))?;
        let m = compile_once(options, &file, n, source.len())?;
        let timed_out = m.seconds.is_none();
        // Repeats: only compiles that succeeded (indices into `results`).
        if m.succeeded() {
            programs.push((results.len(), file, n, source.len()));
        }
        results.push(m);
        if timed_out {
            break;
        }
        factor *= 4;
    }
    for _ in 1..options.repeat {
        for (k, file, n, bytes) in &programs {
            let again = compile_once(options, file, *n, *bytes)?;
            if again.succeeded() {
                results[*k].keep_least(&again);
            }
        }
    }
    Ok(results)
}

/// Options of `bench scaling`.
pub struct ScalingOptions<'a> {
    pub sysyc: &'a Path,
    pub opt: u32,
    /// Only these dimensions (all when empty).
    pub only: &'a [String],
    /// Scales to run: 1, 4, 16, ... up to this factor (each dimension's
    /// [`Dimension::top`] when `None`).
    pub max_factor: Option<usize>,
    pub timeout: Duration,
    pub work: &'a Path,
    /// Compiles of each program; the least time is reported.
    pub repeat: usize,
}

fn ratio(new: f64, old: f64) -> String {
    if old > 0.0 {
        format!("{:.1}", new / old)
    } else {
        "-".into()
    }
}

/// Runs the dimensions, handing each line of the table to `emit` as soon as it
/// is measured; `Err` names a dimension that is not known. A compile that fails
/// or times out is reported in the table.
pub fn run(options: &ScalingOptions, emit: &mut dyn FnMut(&str)) -> Result<(), String> {
    for name in options.only {
        if !DIMENSIONS.iter().any(|d| d.name == name) {
            let known: Vec<_> = DIMENSIONS.iter().map(|d| d.name).collect();
            return Err(format!(
                "unknown dimension `{name}` (known: {})",
                known.join(", ")
            ));
        }
    }
    emit(&format!(
        "{:<12} {:>7} {:>8} {:>9} {:>8} {:>9} {:>7} {:>7}  what grows",
        "dimension", "n", "KB", "seconds", "cpu s", "peak MB", "cpu x", "mem x"
    ));
    for dim in DIMENSIONS {
        if !options.only.is_empty() && !options.only.iter().any(|o| o == dim.name) {
            continue;
        }
        let mut previous: Option<&Measurement> = None;
        let results = measure_dimension(options, dim)?;
        for m in &results {
            let secs = match m.seconds {
                Some(s) => format!("{s:.3}"),
                None => format!(">{}", options.timeout.as_secs()),
            };
            let (tx, mx) = match (previous, m.seconds) {
                (Some(p), Some(_)) => (
                    ratio(m.cpu_seconds, p.cpu_seconds),
                    ratio(m.peak_mb, p.peak_mb),
                ),
                _ => ("-".into(), "-".into()),
            };
            emit(&format!(
                "{:<12} {:>7} {:>8.1} {:>9} {:>8.3} {:>9.1} {:>7} {:>7}  {}{}",
                dim.name,
                m.n,
                m.bytes as f64 / 1024.0,
                secs,
                m.cpu_seconds,
                m.peak_mb,
                tx,
                mx,
                dim.what,
                m.failure
                    .as_deref()
                    .map(|f| format!(" [FAILED: {f}]"))
                    .unwrap_or_default()
            ));
            previous = Some(m);
        }
    }
    Ok(())
}
