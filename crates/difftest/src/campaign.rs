//! A differential-testing campaign: for each seed, generate a program, run it through
//! the reference and through sysyc in every configuration, and for each
//! configuration whose outcome differs, save the program and reduce it.
//!
//! Findings go to `<out>/seed-<seed>-<config>/`:
//!
//! - `original.sy`, `original.in` (its stdin), `original.expected` (the reference's output as a `.out` file),
//!   `original.actual` (sysyc's);
//! - after reduction: `reduced.sy`, `reduced.in`, `reduced.out` (the reference's output: with the
//!   `.sy` it is a ready test case), `reduced.actual`;
//! - `info.txt`: seed, configuration, reduction statistics.
//!
//! Every file is written whole or not at all ([`sysyc::write_atomically`]).

use crate::ast::Program;
use crate::gen::{generate, GenConfig};
use crate::oracle::{Config, Outcome, Reference, Runner};
use crate::print::print_program;
use crate::reduce::reduce;
use crate::validate::validate;
use harness::Harness;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub seeds: Range<u64>,
    pub gen: GenConfig,
    /// sysyc configurations to compare with the reference.
    pub configs: Vec<Config>,
    /// Use gcc + qemu as the reference (otherwise the interpreter at -O0).
    pub gcc_reference: bool,
    pub jobs: usize,
    pub out: PathBuf,
    /// Reduce findings, with at most this many property tests each (0: don't).
    pub max_reduce_tests: usize,
    /// Print a progress line every this many seeds (0: never).
    pub progress_every: u64,
}

/// One configuration whose outcome differed from the reference's.
#[derive(Clone, Debug)]
pub struct Finding {
    pub seed: u64,
    pub config: Config,
    pub expected: Outcome,
    pub actual: Outcome,
    /// Where it was saved.
    pub dir: PathBuf,
    /// The reduced program's text, when reduced.
    pub reduced: Option<String>,
    /// Where the fault is, from the other configurations' outcomes
    /// ([`SeedResult::blame`]).
    pub blame: &'static str,
}

/// What a campaign did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Programs generated and run.
    pub programs: u64,
    /// Runs per configuration name.
    pub runs: Vec<(String, u64)>,
    pub findings: Vec<Finding>,
    /// Seeds whose program the reference could not build or run (a generator bug:
    /// the program is not well-defined C), with the reason.
    pub bad_programs: Vec<(u64, String)>,
    pub elapsed: Duration,
}

/// The outcome of every configuration for one program.
pub struct SeedResult {
    pub program: Program,
    pub text: String,
    /// The reference's outcome; `Err` when it could not build the program.
    pub expected: Result<Outcome, String>,
    pub results: Vec<(Config, Outcome)>,
}

impl SeedResult {
    /// The configurations that disagree with a reference that ran.
    pub fn mismatches(&self) -> Vec<(Config, Outcome)> {
        match &self.expected {
            Ok(e @ Outcome::Ran { .. }) => self
                .results
                .iter()
                .filter(|(_, o)| o != e)
                .cloned()
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl SeedResult {
    /// Where a mismatch of `config` comes from, judged by the interpreter run of
    /// the same optimised IR: for the assembly at `-O<n>`, the back end when the
    /// interpreter at `-O<n>` runs right (the IR it was made from computes the right
    /// result), the optimiser when the interpreter gives the same wrong result;
    /// for an interpreter run, the optimiser or lowering.
    pub fn blame(&self, config: Config) -> &'static str {
        let Config::Qemu { level } = config else {
            return "optimiser (the IR in the interpreter)";
        };
        let outcome = |c: Config| self.results.iter().find(|(k, _)| *k == c).map(|(_, o)| o);
        let interp = outcome(Config::Interp {
            level,
            memory: false,
        });
        match (interp, outcome(config), &self.expected) {
            (Some(i), _, Ok(e)) if i == e => {
                "back end (the assembly disagrees with the interpreter on the same IR)"
            }
            (Some(i), Some(q), _) if i == q => "optimiser (the interpreter gives the same)",
            (Some(_), _, _) => "back end and optimiser (all three differ)",
            (None, _, _) => "unknown (no interpreter run at this level)",
        }
    }
}

/// Generates and runs the program of `seed`.
pub fn check_seed(
    seed: u64,
    gen: &GenConfig,
    runner: &Runner,
    reference: &Reference,
    configs: &[Config],
) -> SeedResult {
    let program = generate(seed, gen);
    let text = print_program(&program);
    let expected = match validate(&program) {
        Err(e) => Err(format!("generator produced an invalid program: {e}")),
        Ok(()) => runner.reference(&text, &program.input, reference),
    };
    let results = configs
        .iter()
        .map(|&c| (c, runner.run(&text, &program.input, c)))
        .collect();
    SeedResult {
        program,
        text,
        expected,
        results,
    }
}

/// Writes the programs of `seeds` into `dir` as a test suite: `gen-SEED.sy`,
/// `gen-SEED.in` and `gen-SEED.out` (the reference's output and exit status, as
/// `sysy2022/` lays its cases out). Seeds whose program the reference cannot run
/// are skipped. Returns (written, skipped).
pub fn write_suite(
    dir: &Path,
    seeds: Range<u64>,
    gen: &GenConfig,
    harness: Option<&Harness>,
    reference: &Reference,
) -> Result<(usize, usize), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let runner = Runner::new(harness, dir.join(".work")).map_err(|e| e.to_string())?;
    let (mut written, mut skipped) = (0, 0);
    for seed in seeds {
        let program = generate(seed, gen);
        let text = print_program(&program);
        let expected = match validate(&program) {
            Ok(()) => runner.reference(&text, &program.input, reference),
            Err(e) => Err(e),
        };
        let Ok(out @ Outcome::Ran { .. }) = expected else {
            skipped += 1;
            continue;
        };
        let stem = dir.join(format!("gen-{seed}"));
        for (ext, body) in [
            ("sy", text),
            ("in", program.input.clone()),
            ("out", out.describe()),
        ] {
            let path = stem.with_extension(ext);
            sysyc::write_atomically(&path, body.as_bytes())
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        written += 1;
    }
    let _ = std::fs::remove_dir_all(dir.join(".work"));
    Ok((written, skipped))
}

/// Claims `out` for one process: an advisory lock on `OUT/lock`, held while the
/// returned file is open and released when the process ends, however it ends.
/// Two processes given one `out` would share its scratch directories (`OUT/work/w0`,
/// ...) and overwrite each other's executables mid-run, which shows as findings that
/// do not reproduce.
pub fn claim_out(out: &Path) -> Result<std::fs::File, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let path = out.join("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(format!(
            "another difftest is working in {} (give this one its own --out)",
            out.display()
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(format!("{}: {e}", path.display())),
    }
}

/// Runs the campaign.
pub fn run(opts: &Options, harness: Option<&Harness>) -> Summary {
    let start = Instant::now();
    let next = AtomicU64::new(opts.seeds.start);
    let summary = Mutex::new(Summary {
        runs: opts.configs.iter().map(|c| (c.to_string(), 0)).collect(),
        ..Default::default()
    });
    std::thread::scope(|scope| {
        for w in 0..opts.jobs.max(1) {
            let (next, summary) = (&next, &summary);
            std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn_scoped(scope, move || {
                    let work = opts.out.join("work").join(format!("w{w}"));
                    let runner = Runner::new(harness, work).expect("create work directory");
                    let reference = match (opts.gcc_reference, harness) {
                        (true, Some(h)) => Reference::Gcc(h),
                        _ => Reference::Interp,
                    };
                    loop {
                        let seed = next.fetch_add(1, Ordering::Relaxed);
                        if seed >= opts.seeds.end {
                            break;
                        }
                        one_seed(seed, opts, &runner, &reference, summary, start);
                    }
                })
                .expect("spawn worker");
        }
    });
    let mut s = summary.into_inner().expect("no worker panicked");
    s.elapsed = start.elapsed();
    s.findings.sort_by_key(|f| (f.seed, f.config.to_string()));
    s.bad_programs.sort();
    s
}

fn one_seed(
    seed: u64,
    opts: &Options,
    runner: &Runner,
    reference: &Reference,
    summary: &Mutex<Summary>,
    start: Instant,
) {
    let r = check_seed(seed, &opts.gen, runner, reference, &opts.configs);
    let bad = match &r.expected {
        Err(e) => Some(e.clone()),
        Ok(Outcome::Ran { .. }) => None,
        Ok(other) => Some(other.describe()),
    };
    if let Some(reason) = &bad {
        eprintln!("seed {seed}: reference failed: {}", first_line(reason));
        save(
            &opts.out.join(format!("bad-seed-{seed}")),
            &[
                ("original.sy", r.text.clone()),
                ("original.in", r.program.input.clone()),
                (
                    "info.txt",
                    format!("seed {seed}\nreference failed:\n{reason}\n"),
                ),
            ],
        );
    }
    let mut found = Vec::new();
    for (config, actual) in r.mismatches() {
        let expected = r.expected.clone().expect("reference ran");
        eprintln!(
            "seed {seed}: {config} differs from the reference: {}; blame: {}",
            first_line(&actual.describe()),
            r.blame(config)
        );
        found.push(finding(
            seed, config, expected, actual, &r, opts, runner, reference,
        ));
    }
    let mut s = summary.lock().expect("summary lock");
    s.programs += 1;
    for (_, n) in &mut s.runs {
        *n += 1;
    }
    if let Some(reason) = bad {
        s.bad_programs.push((seed, reason));
    }
    s.findings.extend(found);
    if opts.progress_every > 0 && s.programs.is_multiple_of(opts.progress_every) {
        eprintln!(
            "{} programs, {} findings, {} bad programs, {:.0}s",
            s.programs,
            s.findings.len(),
            s.bad_programs.len(),
            start.elapsed().as_secs_f64()
        );
    }
}

/// Saves a mismatch, reduces it and saves the reduction.
#[allow(clippy::too_many_arguments)]
fn finding(
    seed: u64,
    config: Config,
    expected: Outcome,
    actual: Outcome,
    r: &SeedResult,
    opts: &Options,
    runner: &Runner,
    reference: &Reference,
) -> Finding {
    let dir = opts.out.join(format!("seed-{seed}-{config}"));
    save(
        &dir,
        &[
            ("original.sy", r.text.clone()),
            ("original.in", r.program.input.clone()),
            ("original.expected", expected.describe()),
            ("original.actual", actual.describe()),
        ],
    );
    let mut reduced = None;
    let blame = r.blame(config);
    let mut info = format!("seed {seed}\nconfiguration {config}\nblame: {blame}\n");
    if opts.max_reduce_tests > 0 {
        let started = Instant::now();
        let mut interesting = |p: &Program, text: &str| {
            same_failure(runner, reference, config, &actual, text, &p.input).is_some()
        };
        let red = reduce(&r.program, &mut interesting, opts.max_reduce_tests);
        let text = print_program(&red.program);
        let (exp, act) = same_failure(
            runner,
            reference,
            config,
            &actual,
            &text,
            &red.program.input,
        )
        .expect("the reduced program still fails");
        info.push_str(&format!(
            "reduced from {} to {} lines in {:.0}s ({} tests, {} accepted)\n",
            r.text.lines().count(),
            text.lines().count(),
            started.elapsed().as_secs_f64(),
            red.tests,
            red.accepted
        ));
        save(
            &dir,
            &[
                ("reduced.sy", text.clone()),
                ("reduced.in", red.program.input.clone()),
                ("reduced.out", exp.describe()),
                ("reduced.actual", act.describe()),
            ],
        );
        eprintln!(
            "seed {seed}: {config}: reduced to {} lines",
            text.lines().count()
        );
        reduced = Some(text);
    }
    save(&dir, &[("info.txt", info)]);
    Finding {
        seed,
        config,
        expected,
        actual,
        dir,
        reduced,
        blame,
    }
}

/// When `text` still shows the failure `original` in `config` (the reference runs,
/// sysyc's outcome differs from it, in the same way: same kind of outcome, same
/// panic location), the reference's and sysyc's outcomes.
pub fn same_failure(
    runner: &Runner,
    reference: &Reference,
    config: Config,
    original: &Outcome,
    text: &str,
    input: &str,
) -> Option<(Outcome, Outcome)> {
    let expected = runner.reference(text, input, reference).ok()?;
    if !matches!(expected, Outcome::Ran { .. }) {
        return None;
    }
    let actual = runner.run(text, input, config);
    let same_kind = actual.kind() == original.kind()
        && match (&actual, original) {
            (Outcome::Crashed(a), Outcome::Crashed(b)) => first_line(a) == first_line(b),
            _ => true,
        };
    (actual != expected && same_kind).then_some((expected, actual))
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Writes each `(name, contents)` into `dir`, whole or not at all; reports failures
/// on stderr (a campaign goes on).
fn save(dir: &Path, files: &[(&str, String)]) {
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("cannot create {}: {e}", dir.display());
        return;
    }
    for (name, text) in files {
        let path = dir.join(name);
        if let Err(e) = sysyc::write_atomically(&path, text.as_bytes()) {
            eprintln!("cannot write {}: {e}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_process_at_a_time_works_in_an_output_directory() {
        let out = std::env::temp_dir().join(format!("difftest-claim-{}", std::process::id()));
        let first = claim_out(&out).expect("a free directory");
        let second = claim_out(&out);
        assert!(
            second
                .as_ref()
                .is_err_and(|e| e.contains("another difftest")),
            "{second:?}"
        );
        drop(first);
        assert!(claim_out(&out).is_ok(), "released with its file");
        let _ = std::fs::remove_dir_all(&out);
    }

    fn ran(out: &str) -> Outcome {
        Outcome::Ran {
            stdout: out.as_bytes().to_vec(),
            exit: 0,
        }
    }

    /// A seed's results: the reference printed `right`; interp-O2 and qemu-O2
    /// printed what is given.
    fn result(interp: &str, qemu: &str) -> SeedResult {
        let program = generate(0, &GenConfig::small());
        SeedResult {
            text: print_program(&program),
            program,
            expected: Ok(ran("right")),
            results: vec![
                (
                    Config::Interp {
                        level: 2,
                        memory: false,
                    },
                    ran(interp),
                ),
                (Config::Qemu { level: 2 }, ran(qemu)),
            ],
        }
    }

    #[test]
    fn a_mismatch_is_blamed_on_the_stage_that_went_wrong() {
        let qemu = Config::Qemu { level: 2 };
        // The optimised IR runs right; its assembly does not.
        assert!(result("right", "wrong").blame(qemu).starts_with("back end"));
        // The IR is wrong already, and the assembly computes what it says.
        assert!(result("wrong", "wrong")
            .blame(qemu)
            .starts_with("optimiser"));
        assert!(result("wrong", "other")
            .blame(qemu)
            .starts_with("back end and optimiser"));
        let r = result("right", "wrong");
        assert_eq!(r.mismatches().len(), 1);
        // No interpreter run at -O1: nothing to compare the assembly with.
        assert!(r.blame(Config::Qemu { level: 1 }).starts_with("unknown"));
    }
}
