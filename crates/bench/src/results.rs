//! The benchmark's result model, serialised as the `--json` report and read back
//! by `bench compare`.

use serde::{Deserialize, Serialize};

use crate::plugin::Counts;
use crate::stats::{geomean, max, median};

/// How one build of a case fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Compiled, ran and produced the expected output.
    Ok,
    /// The compiler failed (or timed out).
    CompileError,
    /// Assembling or linking failed.
    LinkError,
    /// Ran to completion with the wrong output or exit status.
    WrongAnswer,
    /// Killed by a signal.
    Crash,
    /// Did not finish in time.
    Timeout,
    /// The run finished but the plugin's counts are missing.
    PluginError,
}

impl Status {
    /// A short label for the table.
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::CompileError => "CE",
            Status::LinkError => "LE",
            Status::WrongAnswer => "WA",
            Status::Crash => "RE",
            Status::Timeout => "TLE",
            Status::PluginError => "PE",
        }
    }
}

/// One build (sysyc, gcc or clang) of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Build {
    /// Outcome.
    pub status: Status,
    /// Error text when not ok (first differing line, compiler message, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Dynamic counts, when the program ran to completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    /// Wall time of the qemu run (with the plugin), in seconds.
    #[serde(default)]
    pub run_seconds: f64,
}

impl Build {
    /// A failed build with an explanation.
    pub fn failed(status: Status, detail: impl Into<String>) -> Build {
        Build {
            status,
            detail: Some(detail.into()),
            counts: None,
            run_seconds: 0.0,
        }
    }

    /// Counts of a passing build.
    pub fn ok_counts(&self) -> Option<&Counts> {
        (self.status == Status::Ok)
            .then_some(self.counts.as_ref())
            .flatten()
    }
}

/// Compile-time figures of sysyc on one case.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CompileStats {
    /// Wall time of `sysyc -S`, in seconds.
    pub seconds: f64,
    /// Peak resident memory of sysyc, in KiB.
    pub max_rss_kb: u64,
}

/// All builds of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// Case name (file stem).
    pub name: String,
    /// The compiler under test.
    pub sysyc: Build,
    /// The gcc -O2 reference.
    pub gcc: Build,
    /// The clang -O2 reference, when requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clang: Option<Build>,
    /// sysyc's optimised IR through `llc-14 -O2`, when requested (`--llc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llc: Option<Build>,
    /// sysyc's compile time and memory, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compile: Option<CompileStats>,
}

impl CaseResult {
    /// sysyc / gcc instruction ratio, when both passed.
    pub fn insn_ratio(&self) -> Option<f64> {
        ratio(&self.sysyc, &self.gcc, |c| c.insns)
    }

    /// sysyc / gcc cycle-estimate ratio, when both passed.
    pub fn cycle_ratio(&self) -> Option<f64> {
        ratio(&self.sysyc, &self.gcc, |c| c.cycles)
    }

    /// sysyc / gcc ratio of the dependence-aware U74 estimate, when both passed.
    pub fn u74_ratio(&self) -> Option<f64> {
        ratio(&self.sysyc, &self.gcc, |c| c.u74)
    }

    /// clang / gcc instruction ratio, when both passed.
    pub fn clang_ratio(&self) -> Option<f64> {
        ratio(self.clang.as_ref()?, &self.gcc, |c| c.insns)
    }

    /// (sysyc IR + llc) / gcc instruction ratio, when both passed.
    pub fn llc_ratio(&self) -> Option<f64> {
        ratio(self.llc.as_ref()?, &self.gcc, |c| c.insns)
    }
}

fn ratio(a: &Build, b: &Build, f: impl Fn(&Counts) -> u64) -> Option<f64> {
    let (x, y) = (f(a.ok_counts()?), f(b.ok_counts()?));
    (x > 0 && y > 0).then(|| x as f64 / y as f64)
}

/// Aggregates over all cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Cases run.
    pub cases: usize,
    /// Cases where sysyc passed.
    pub sysyc_passed: usize,
    /// Cases where gcc passed.
    pub gcc_passed: usize,
    /// Cases where both passed (the geomeans are over these).
    pub compared: usize,
    /// Geometric mean of sysyc/gcc instruction ratios.
    pub geomean_insns: Option<f64>,
    /// Geometric mean of sysyc/gcc cycle-estimate ratios.
    pub geomean_cycles: Option<f64>,
    /// Geometric mean of sysyc/gcc U74-estimate ratios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geomean_u74: Option<f64>,
    /// Geometric mean of clang/gcc instruction ratios (with `--clang`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geomean_clang: Option<f64>,
    /// Geometric mean of (sysyc IR + llc)/gcc instruction ratios (with `--llc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geomean_llc: Option<f64>,
    /// Median sysyc compile time, seconds.
    pub compile_seconds_median: Option<f64>,
    /// Maximum sysyc compile time, seconds.
    pub compile_seconds_max: Option<f64>,
    /// Median sysyc peak memory, KiB.
    pub max_rss_kb_median: Option<f64>,
    /// Maximum sysyc peak memory, KiB.
    pub max_rss_kb_max: Option<f64>,
}

impl Summary {
    /// Computes the summary of `cases`.
    pub fn of(cases: &[CaseResult]) -> Summary {
        let insns: Vec<f64> = cases.iter().filter_map(CaseResult::insn_ratio).collect();
        let cycles: Vec<f64> = cases.iter().filter_map(CaseResult::cycle_ratio).collect();
        let u74: Vec<f64> = cases.iter().filter_map(CaseResult::u74_ratio).collect();
        let clang: Vec<f64> = cases.iter().filter_map(CaseResult::clang_ratio).collect();
        let llc: Vec<f64> = cases.iter().filter_map(CaseResult::llc_ratio).collect();
        let secs: Vec<f64> = cases
            .iter()
            .filter_map(|c| Some(c.compile?.seconds))
            .collect();
        let rss: Vec<f64> = cases
            .iter()
            .filter_map(|c| Some(c.compile?.max_rss_kb as f64))
            .collect();
        Summary {
            cases: cases.len(),
            sysyc_passed: cases
                .iter()
                .filter(|c| c.sysyc.status == Status::Ok)
                .count(),
            gcc_passed: cases.iter().filter(|c| c.gcc.status == Status::Ok).count(),
            compared: insns.len(),
            geomean_insns: geomean(&insns),
            geomean_cycles: geomean(&cycles),
            geomean_u74: geomean(&u74),
            geomean_clang: geomean(&clang),
            geomean_llc: geomean(&llc),
            compile_seconds_median: median(&secs),
            compile_seconds_max: max(&secs),
            max_rss_kb_median: median(&rss),
            max_rss_kb_max: max(&rss),
        }
    }
}

/// The whole `--json` report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Suite directory benchmarked.
    pub suite: String,
    /// The sysyc binary used.
    pub sysyc: String,
    /// sysyc's `-O` level.
    pub opt_level: u32,
    /// Per-case results, sorted by name.
    pub cases: Vec<CaseResult>,
    /// Aggregates.
    pub summary: Summary,
}

impl Report {
    /// Reads a report written by `--json`.
    pub fn load(path: &std::path::Path) -> Result<Report, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Writes the report as pretty JSON.
    pub fn save(&self, path: &std::path::Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
    }
}
