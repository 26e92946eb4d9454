//! Missed-optimisation hunting: random programs on which sysyc's code is slower
//! than gcc's and clang's.
//!
//! Differential testing for performance instead of correctness, as Barany ("Finding
//! missed compiler optimizations by differential testing", CC 2018) and Theodoridis,
//! Rigger and Su ("Finding missed optimizations through the lens of dead code
//! elimination", ASPLOS 2022) do for gcc and LLVM:
//!
//! 1. each seed's program is generated ([`crate::gen`]) and run by the reference
//!    (gcc -O0 under qemu) for its expected output, and written as a suite case;
//! 2. the bench ([`bench::pipeline`]) compiles every case with sysyc -O2, gcc -O2
//!    and clang -O2, runs them under qemu with the counting plugin, checks their
//!    output and counts U74 cycles of the whole run;
//! 3. a program is *flagged* when sysyc's cycles exceed the better of gcc's and
//!    clang's by more than the threshold (5% by default);
//! 4. each flagged program is reduced ([`crate::reduce`]) while it keeps at least
//!    half of its gap and stays flagged (and every compiler's output stays right),
//!    to a small program that shows the gap for a reader to diagnose.
//!
//! Findings go to `OUT/hunt-SEED/`: `original.sy`, `reduced.sy`, `input.txt` and
//! `report.txt` (the cycles before and after reduction).

use crate::gen::{generate, GenConfig};
use crate::oracle::{Outcome, Reference, Runner};
use crate::print::print_program;
use crate::reduce::reduce;
use crate::validate::validate;
use bench::pipeline::{run_case, Context};
use bench::results::{Build, CaseResult, Status};
use harness::{Case, Harness};
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a hunt runs.
#[derive(Clone, Debug)]
pub struct HuntOptions {
    pub seeds: Range<u64>,
    pub gen: GenConfig,
    /// The sysyc binary measured.
    pub sysyc: PathBuf,
    /// Findings and scratch files.
    pub out: PathBuf,
    /// A program is flagged when sysyc's cycles exceed this times the better
    /// reference's.
    pub threshold: f64,
    /// Property tests the reducer may run per flagged program (0: no reduction).
    pub max_reduce_tests: usize,
    /// Worker threads for the measurement.
    pub jobs: usize,
}

/// Whole-run U74 cycles of one program's three builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cycles {
    pub sysyc: u64,
    pub gcc: u64,
    pub clang: Option<u64>,
}

impl Cycles {
    /// The cycles of every build that ran correctly, or `None`.
    pub fn of(r: &CaseResult) -> Option<Cycles> {
        let ok = |b: &Build| {
            (b.status == Status::Ok)
                .then(|| b.counts.map(|c| c.u74))
                .flatten()
        };
        Some(Cycles {
            sysyc: ok(&r.sysyc)?,
            gcc: ok(&r.gcc)?,
            clang: match &r.clang {
                Some(b) => Some(ok(b)?),
                None => None,
            },
        })
    }

    /// The better (fewer cycles) of gcc's and clang's.
    pub fn best_reference(&self) -> u64 {
        self.clang.map_or(self.gcc, |c| c.min(self.gcc))
    }

    /// sysyc's cycles over the better reference's.
    pub fn ratio(&self) -> f64 {
        self.sysyc as f64 / self.best_reference().max(1) as f64
    }

    /// Whether sysyc is slower than the better reference by more than
    /// `threshold` (a ratio, e.g. 1.05).
    pub fn flagged(&self, threshold: f64) -> bool {
        self.ratio() > threshold
    }
}

/// One flagged program.
#[derive(Clone, Debug)]
pub struct Flag {
    pub seed: u64,
    pub cycles: Cycles,
    /// The reduced program's cycles, when it was reduced.
    pub reduced: Option<Cycles>,
    pub dir: PathBuf,
}

/// What a hunt found.
#[derive(Clone, Debug, Default)]
pub struct HuntSummary {
    /// Programs measured (all three builds correct).
    pub measured: usize,
    /// Seeds whose program the reference or a build could not run.
    pub failed: Vec<(u64, String)>,
    pub flags: Vec<Flag>,
    /// Geometric mean of the ratios over the measured programs.
    pub geomean: f64,
}

/// Measures programs with the bench's pipeline, one suite case each.
struct Meter<'h> {
    ctx: Context<'h>,
    runner: Runner<'h>,
    harness: &'h Harness,
    dir: PathBuf,
}

impl<'h> Meter<'h> {
    fn new(harness: &'h Harness, opts: &HuntOptions, dir: PathBuf) -> Result<Meter<'h>, String> {
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let plugin = bench::plugin::build_plugin(&harness::default_cache_dir())?;
        let clang = bench::compile::find_clang().ok_or("the hunter needs clang-14 on PATH")?;
        let prelude = dir.join("sysy_prelude.h");
        std::fs::write(&prelude, harness::csource::PRELUDE).map_err(|e| e.to_string())?;
        let sysyc = std::fs::canonicalize(&opts.sysyc)
            .map_err(|e| format!("sysyc {}: {e}", opts.sysyc.display()))?;
        let ctx = Context {
            harness,
            plugin,
            nm: bench::symbols::nm_for(&harness.toolchain.cc),
            sysyc,
            opt_level: 2,
            clang: Some(clang),
            llc: None,
            prelude,
            work: dir.join("work"),
            timeout: Duration::from_secs(120),
        };
        let runner =
            Runner::new(Some(harness), dir.join("reference")).map_err(|e| e.to_string())?;
        Ok(Meter {
            ctx,
            runner,
            harness,
            dir,
        })
    }

    /// Writes `text` with `input` as the case `name` (its expected output from
    /// the reference); `None` when the reference cannot run it.
    fn write_case(&self, name: &str, text: &str, input: &str) -> Option<Case> {
        let out @ Outcome::Ran { .. } = self
            .runner
            .reference(text, input, &Reference::Gcc(self.harness))
            .ok()?
        else {
            return None;
        };
        let stem = self.dir.join(name);
        for (ext, body) in [("sy", text), ("in", input), ("out", &out.describe())] {
            std::fs::write(stem.with_extension(ext), body).ok()?;
        }
        Some(Case {
            name: name.to_string(),
            sy: stem.with_extension("sy"),
            input: Some(stem.with_extension("in")),
            expected_out: stem.with_extension("out"),
        })
    }

    /// The cycles of `text`, when the reference and all three builds run it right.
    fn measure(&self, name: &str, text: &str, input: &str) -> Option<Cycles> {
        let case = self.write_case(name, text, input)?;
        Cycles::of(&run_case(&self.ctx, &case))
    }
}

/// Runs a hunt (see the module comment).
pub fn hunt(opts: &HuntOptions, harness: &Harness) -> Result<HuntSummary, String> {
    let meter = Meter::new(harness, opts, opts.out.join("hunt-work"))?;
    let mut summary = HuntSummary::default();
    let mut cases = Vec::new();
    let mut programs = Vec::new();
    for seed in opts.seeds.clone() {
        let program = generate(seed, &opts.gen);
        let text = print_program(&program);
        if let Err(e) = validate(&program) {
            summary.failed.push((seed, format!("invalid program: {e}")));
            continue;
        }
        match meter.write_case(&format!("gen-{seed}"), &text, &program.input) {
            Some(case) => {
                cases.push(case);
                programs.push((seed, program, text));
            }
            None => summary
                .failed
                .push((seed, "the reference cannot run it".into())),
        }
    }
    let results = bench::runner::run_all(&meter.ctx, &cases, opts.jobs, true);
    let mut log_sum = 0.0;
    for ((seed, program, text), result) in programs.iter().zip(&results) {
        let Some(cycles) = Cycles::of(result) else {
            summary.failed.push((*seed, failures(result)));
            continue;
        };
        summary.measured += 1;
        log_sum += cycles.ratio().ln();
        if !cycles.flagged(opts.threshold) {
            continue;
        }
        let dir = opts.out.join(format!("hunt-{seed}"));
        let keep = keep_ratio(cycles.ratio(), opts.threshold);
        let reduced = (opts.max_reduce_tests > 0)
            .then(|| {
                let mut interesting = |_: &crate::ast::Program, t: &str| {
                    meter
                        .measure("candidate", t, &program.input)
                        .is_some_and(|c| c.flagged(keep))
                };
                let r = reduce(program, &mut interesting, opts.max_reduce_tests);
                let t = print_program(&r.program);
                meter
                    .measure("candidate", &t, &program.input)
                    .map(|c| (t, c))
            })
            .flatten();
        write_finding(&dir, text, &program.input, cycles, reduced.as_ref())?;
        summary.flags.push(Flag {
            seed: *seed,
            cycles,
            reduced: reduced.map(|(_, c)| c),
            dir,
        });
    }
    summary.geomean = if summary.measured == 0 {
        1.0
    } else {
        (log_sum / summary.measured as f64).exp()
    };
    let _ = std::fs::remove_dir_all(opts.out.join("hunt-work"));
    Ok(summary)
}

/// The ratio a reduced program must stay above: the threshold, and at least half
/// of the original's gap, so that reduction keeps the gap it was flagged for
/// rather than drifting to another that barely passes the threshold.
/// (A program flagged only because the threshold is below 1 keeps the threshold.)
pub fn keep_ratio(original: f64, threshold: f64) -> f64 {
    let half_the_gap = 1.0 + (original - 1.0) / 2.0;
    if half_the_gap < original {
        threshold.max(half_the_gap)
    } else {
        threshold
    }
}

/// The builds of `r` that did not run right, with why.
fn failures(r: &CaseResult) -> String {
    let builds = [
        ("sysyc", Some(&r.sysyc)),
        ("gcc", Some(&r.gcc)),
        ("clang", r.clang.as_ref()),
    ];
    let bad: Vec<String> = builds
        .iter()
        .filter_map(|(name, b)| {
            let b = (*b)?;
            let why = b
                .detail
                .as_deref()
                .and_then(|d| d.lines().next())
                .unwrap_or("");
            (b.status != Status::Ok).then(|| format!("{name} {}: {why}", b.status.label()))
        })
        .collect();
    bad.join("; ")
}

fn write_finding(
    dir: &Path,
    text: &str,
    input: &str,
    cycles: Cycles,
    reduced: Option<&(String, Cycles)>,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut report = format!("original: {}\n", describe(&cycles));
    let mut files = vec![
        ("original.sy", text.to_string()),
        ("input.txt", input.to_string()),
    ];
    if let Some((t, c)) = reduced {
        let _ = writeln!(report, "reduced:  {}", describe(c));
        files.push(("reduced.sy", t.clone()));
    }
    files.push(("report.txt", report));
    for (name, body) in files {
        let path = dir.join(name);
        std::fs::write(&path, body).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// `sysyc N, gcc N, clang N: ratio R` (U74 cycles of the whole run).
pub fn describe(c: &Cycles) -> String {
    let clang = c.clang.map_or("-".to_string(), |x| x.to_string());
    format!(
        "sysyc {} gcc {} clang {} cycles: {:.3}x the better",
        c.sysyc,
        c.gcc,
        clang,
        c.ratio()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycles(sysyc: u64, gcc: u64, clang: Option<u64>) -> Cycles {
        Cycles { sysyc, gcc, clang }
    }

    #[test]
    fn the_better_reference_is_the_faster_of_gcc_and_clang() {
        assert_eq!(cycles(100, 90, Some(80)).best_reference(), 80);
        assert_eq!(cycles(100, 70, Some(80)).best_reference(), 70);
        assert_eq!(cycles(100, 70, None).best_reference(), 70);
    }

    #[test]
    fn a_program_is_flagged_only_beyond_the_threshold() {
        // 106 / 100 = 1.06 > 1.05; 105 / 100 = 1.05 is not beyond it.
        assert!(cycles(106, 100, Some(120)).flagged(1.05));
        assert!(!cycles(105, 100, Some(120)).flagged(1.05));
        // clang's 95 is the better reference: 100 / 95 = 1.053.
        assert!(cycles(100, 120, Some(95)).flagged(1.05));
        assert!(!cycles(90, 100, Some(95)).flagged(1.05));
    }

    #[test]
    fn a_reduced_program_keeps_half_the_gap_and_the_threshold() {
        assert!((keep_ratio(1.4, 1.05) - 1.2).abs() < 1e-9);
        assert!((keep_ratio(1.06, 1.05) - 1.05).abs() < 1e-9);
        // Below 1 (a threshold under 1 flagged it): the threshold.
        assert!((keep_ratio(0.9, 0.5) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn cycles_need_every_build_to_run_right() {
        let ok = |u74: u64| Build {
            status: Status::Ok,
            detail: None,
            counts: Some(bench::plugin::Counts {
                u74,
                ..Default::default()
            }),
            run_seconds: 0.0,
        };
        let mut r = CaseResult {
            name: "p".into(),
            sysyc: ok(120),
            gcc: ok(100),
            clang: Some(ok(90)),
            llc: None,
            compile: None,
        };
        assert_eq!(Cycles::of(&r), Some(cycles(120, 100, Some(90))));
        r.clang = Some(Build::failed(Status::WrongAnswer, "differs"));
        assert_eq!(Cycles::of(&r), None);
        r.clang = None;
        assert_eq!(Cycles::of(&r), Some(cycles(120, 100, None)));
        r.sysyc = Build::failed(Status::Crash, "trap");
        assert_eq!(Cycles::of(&r), None);
    }
}
