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

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use harness::process::run_command;

/// One axis along which the programs grow.
pub struct Dimension {
    /// Name used on the command line and in the table.
    pub name: &'static str,
    /// What grows.
    pub what: &'static str,
    /// Size at 1x.
    pub base: usize,
    /// Largest scale factor of a default run: the largest power of 4 up to 64
    /// whose program stays within the 0.5 MB.
    pub top: usize,
    /// The program of size `n`.
    pub generate: fn(usize) -> String,
}

/// Every dimension, in table order.
pub const DIMENSIONS: &[Dimension] = &[
    Dimension {
        name: "stmts",
        what: "statements in one block",
        base: 500,
        top: 16,
        generate: straight_line,
    },
    Dimension {
        name: "branches",
        what: "if/else statements in one loop body",
        base: 500,
        top: 16,
        generate: branches_in_loop,
    },
    Dimension {
        name: "functions",
        what: "small functions, each calling two earlier ones",
        base: 400,
        top: 16,
        generate: many_functions,
    },
    Dimension {
        name: "depth",
        what: "nested loops of two iterations",
        base: 10,
        top: 64,
        generate: nested_counted_loops,
    },
    Dimension {
        name: "while-depth",
        what: "nested while loops with unknown trip counts",
        base: 60,
        top: 64,
        generate: nested_while_loops,
    },
    Dimension {
        name: "loops",
        what: "loops one after another",
        base: 125,
        top: 16,
        generate: sequential_loops,
    },
    Dimension {
        name: "call-depth",
        what: "a chain of functions, each calling the next",
        base: 400,
        top: 16,
        generate: call_chain,
    },
    Dimension {
        name: "condition",
        what: "terms of one || condition",
        base: 1000,
        top: 16,
        generate: long_condition,
    },
    Dimension {
        name: "else-if",
        what: "arms of one else-if chain on one value",
        base: 1000,
        top: 16,
        generate: else_if_chain,
    },
    Dimension {
        name: "array-stores",
        what: "stores to elements of one global array in one block",
        base: 1250,
        top: 16,
        generate: array_stores,
    },
    Dimension {
        name: "local-init",
        what: "elements in a local array's initialiser",
        base: 6250,
        top: 16,
        generate: local_initialiser,
    },
    Dimension {
        name: "global-init",
        what: "elements in a global array's initialiser",
        base: 6250,
        top: 16,
        generate: global_initialiser,
    },
];

/// `n` statements in one basic block, each using the previous ones' results.
pub fn straight_line(n: usize) -> String {
    let mut s = String::from("int main() {\n  int a = getint();\n  int b = getint();\n");
    for k in 0..n {
        match k % 4 {
            0 => writeln!(s, "  a = a * {} + b;", k % 13 + 2),
            1 => writeln!(s, "  b = b - a / {};", k % 7 + 3),
            2 => writeln!(s, "  a = a + (b % {}) * {};", k % 11 + 5, k % 5 + 1),
            _ => writeln!(s, "  b = b + a - {};", k),
        }
        .unwrap();
    }
    s.push_str("  putint(a + b);\n  return 0;\n}\n");
    s
}

/// One loop whose body holds `n` two-way branches.
pub fn branches_in_loop(n: usize) -> String {
    let mut s = String::from("int main() {\n  int n = getint();\n  int s = 0;\n  int i = 0;\n");
    s.push_str("  while (i < n) {\n");
    for k in 0..n {
        let m = k + 2;
        writeln!(s, "    if (i % {m} == 0) s = s + {m}; else s = s - i;").unwrap();
    }
    s.push_str("    i = i + 1;\n  }\n  putint(s);\n  return 0;\n}\n");
    s
}

/// `if (x == 0) ... else if (x == k) y = k mod 10; ...` with `n` arms.
pub fn else_if_chain(n: usize) -> String {
    let mut s =
        String::from("int main() {\n  int x = getint();\n  int y = 0;\n  if (x == 0) y = 1;\n");
    for k in 1..n {
        writeln!(s, "  else if (x == {k}) y = {};", k % 10).unwrap();
    }
    s.push_str("  putint(y);\n  return 0;\n}\n");
    s
}

/// `n` statements `a[k] = a[7k mod n] + x` in one block: stores and loads at
/// constant indices of one global array.
pub fn array_stores(n: usize) -> String {
    let mut s = format!("int a[{}];\nint main() {{\n  int x = getint();\n", n + 1);
    for k in 0..n {
        writeln!(s, "  a[{k}] = a[{}] + x;", (k * 7) % n).unwrap();
    }
    s.push_str("  putint(a[x]);\n  return 0;\n}\n");
    s
}

/// One `if` whose condition is `n` terms joined by `||`, each an `&&` of two
/// comparisons: a chain of `2n` short-circuit tests, all branching to one join.
pub fn long_condition(n: usize) -> String {
    let mut s = String::from("int main() {\n  int x = getint();\n  int y = 0;\n  if (x == 0");
    for k in 0..n {
        write!(s, "\n      || x > {} && x < {}", 3 * k + 1, 3 * k + 3).unwrap();
    }
    s.push_str(")\n    y = 1;\n  putint(y);\n  return 0;\n}\n");
    s
}

/// `n` three-line functions; function `k` calls functions `k - 1` and `k / 2`.
pub fn many_functions(n: usize) -> String {
    let mut s = String::from("int f0(int x) {\n  return x * 3 + 1;\n}\n");
    for k in 1..n {
        writeln!(
            s,
            "int f{k}(int x) {{ int y = f{}(x + {k}); return y - f{}(y / 2); }}",
            k - 1,
            k / 2
        )
        .unwrap();
    }
    writeln!(
        s,
        "int main() {{\n  putint(f{}(getint()));\n  return 0;\n}}",
        n - 1
    )
    .unwrap();
    s
}

/// `n` nested counted loops of two iterations each around one statement.
pub fn nested_counted_loops(n: usize) -> String {
    let mut s = String::from("int main() {\n  int s = getint();\n");
    for k in 0..n {
        writeln!(s, "  int i{k} = 0;\n  while (i{k} < 2) {{").unwrap();
    }
    s.push_str("  s = s * 3 + 1;\n");
    for k in (0..n).rev() {
        writeln!(s, "  i{k} = i{k} + 1;\n  }}").unwrap();
    }
    s.push_str("  putint(s);\n  return 0;\n}\n");
    s
}

/// `n` nested while loops whose conditions depend on input.
pub fn nested_while_loops(n: usize) -> String {
    let mut s = String::from("int main() {\n  int x = getint();\n  int s = 0;\n");
    for k in 0..n {
        writeln!(s, "  while (x > {k}) {{\n  x = x - 1;\n  s = s + {k};").unwrap();
    }
    for _ in 0..n {
        s.push_str("  }\n");
    }
    s.push_str("  putint(s);\n  return 0;\n}\n");
    s
}

/// `n` loops one after another, each reading an array the previous one wrote.
pub fn sequential_loops(n: usize) -> String {
    let mut s = String::from("int a[100];\nint main() {\n  int n = getint();\n  int s = 0;\n");
    for k in 0..n {
        writeln!(
            s,
            "  int i{k} = 0;\n  while (i{k} < n) {{\n    a[i{k}] = a[i{k}] + s * {};\n    s = s + i{k};\n    i{k} = i{k} + 1;\n  }}",
            k % 9 + 1
        )
        .unwrap();
    }
    s.push_str("  putint(s + a[0]);\n  return 0;\n}\n");
    s
}

/// A chain of `n` functions, each calling the next once.
pub fn call_chain(n: usize) -> String {
    let mut s = format!("int g{}(int x) {{\n  return x + 1;\n}}\n", n - 1);
    for k in (0..n - 1).rev() {
        writeln!(
            s,
            "int g{k}(int x) {{\n  if (x > {k}) return g{}(x * 3 - {k});\n  return x;\n}}",
            k + 1
        )
        .unwrap();
    }
    s.push_str("int main() {\n  putint(g0(getint()));\n  return 0;\n}\n");
    s
}

fn initialiser_list(n: usize) -> String {
    let mut s = String::with_capacity(n * 6);
    for k in 0..n {
        if k > 0 {
            s.push_str(if k % 16 == 0 { ",\n" } else { ", " });
        }
        // Mostly small values, some zeros, a few large ones.
        let v = (k * 7919) % 1000;
        write!(s, "{}", if v < 100 { 0 } else { v * (k % 3 + 1) }).unwrap();
    }
    s
}

/// A local array with an `n`-element initialiser, read at input-given indices.
pub fn local_initialiser(n: usize) -> String {
    format!(
        "int main() {{\n  int a[{n}] = {{{}}};\n  int k = getint();\n  int s = 0;\n  while (k > 0) {{\n    s = s + a[getint() % {n}];\n    k = k - 1;\n  }}\n  putint(s);\n  return 0;\n}}\n",
        initialiser_list(n)
    )
}

/// A global array with an `n`-element initialiser, read at input-given indices.
pub fn global_initialiser(n: usize) -> String {
    format!(
        "int a[{n}] = {{{}}};\nint main() {{\n  int k = getint();\n  int s = 0;\n  while (k > 0) {{\n    s = s + a[getint() % {n}];\n    k = k - 1;\n  }}\n  putint(s);\n  return 0;\n}}\n",
        initialiser_list(n)
    )
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every generator makes a valid SysY program, and its source grows about
    /// linearly with `n` (so the table's ratios measure the compiler, not the
    /// generator).
    #[test]
    fn generators_make_valid_programs_that_grow_linearly() {
        for dim in DIMENSIONS {
            let small = (dim.generate)(dim.base.min(40));
            if let Err(d) = front::check(dim.name, &small) {
                panic!(
                    "{}: generated program is not valid:\n{d:?}\n{small}",
                    dim.name
                );
            }
            let one = (dim.generate)(dim.base).len() as f64;
            let four = (dim.generate)(4 * dim.base).len() as f64;
            let growth = four / one;
            assert!(
                (3.5..=4.5).contains(&growth),
                "{}: source grows {growth:.2}x for 4x n",
                dim.name
            );
        }
    }

    /// The programs at each dimension's top factor stay within the issue's
    /// 0.5 MB bound, and the next factor would not (unless the top is 64x).
    #[test]
    fn largest_programs_are_at_most_half_a_megabyte() {
        for dim in DIMENSIONS {
            let bytes = (dim.generate)(dim.top * dim.base).len();
            assert!(bytes <= 512 * 1024, "{}: {bytes} bytes", dim.name);
            if dim.top < 64 {
                let next = (dim.generate)(4 * dim.top * dim.base).len();
                assert!(
                    next > 512 * 1024,
                    "{}: {next} bytes at {}x",
                    dim.name,
                    4 * dim.top
                );
            }
        }
    }
}
