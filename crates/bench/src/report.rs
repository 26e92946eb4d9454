//! The text report: a per-case table, failure details and the summary lines.

use std::fmt::Write;

use crate::results::{Build, CaseResult, Report};

/// Formats a count compactly: `987`, `12.3K`, `4.56M`, `1.23G`.
pub fn fmt_count(n: u64) -> String {
    let x = n as f64;
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.1}K", x / 1e3),
        1_000_000..=999_999_999 => format!("{:.2}M", x / 1e6),
        _ => format!("{:.2}G", x / 1e9),
    }
}

fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), |r| format!("{r:.3}"))
}

fn insns(b: &Build) -> String {
    b.counts
        .map_or_else(|| "-".to_string(), |c| fmt_count(c.insns))
}

/// Renders the whole text report.
pub fn render(report: &Report) -> String {
    let with_clang = report.cases.iter().any(|c| c.clang.is_some());
    let with_llc = report.cases.iter().any(|c| c.llc.is_some());
    let width = report
        .cases
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = String::new();
    let _ = write!(
        out,
        "{:<width$} {:>9} {:>9} {:>7} {:>7} {:>7}",
        "case", "sysyc", "gcc", "ratio", "cycles", "u74"
    );
    if with_clang {
        let _ = write!(out, " {:>9} {:>7}", "clang", "cl/gcc");
    }
    if with_llc {
        let _ = write!(out, " {:>9} {:>7}", "llc", "llc/gcc");
    }
    let _ = writeln!(out, " {:>9} {:>8} {:>7}", "status", "comp ms", "MiB");
    for c in &report.cases {
        row(&mut out, c, width);
    }
    failures(&mut out, &report.cases);
    summary(&mut out, report);
    out
}

fn row(out: &mut String, c: &CaseResult, width: usize) {
    let _ = write!(
        out,
        "{:<width$} {:>9} {:>9} {:>7} {:>7} {:>7}",
        c.name,
        insns(&c.sysyc),
        insns(&c.gcc),
        fmt_ratio(c.insn_ratio()),
        fmt_ratio(c.cycle_ratio()),
        fmt_ratio(c.u74_ratio())
    );
    let mut status = format!("{}/{}", c.sysyc.status.label(), c.gcc.status.label());
    if let Some(cl) = &c.clang {
        let _ = write!(out, " {:>9} {:>7}", insns(cl), fmt_ratio(c.clang_ratio()));
        status.push('/');
        status.push_str(cl.status.label());
    }
    if let Some(l) = &c.llc {
        let _ = write!(out, " {:>9} {:>7}", insns(l), fmt_ratio(c.llc_ratio()));
        status.push('/');
        status.push_str(l.status.label());
    }
    let (ms, mib) = c.compile.map_or(("-".into(), "-".into()), |s| {
        (
            format!("{:.0}", s.seconds * 1e3),
            format!("{:.1}", s.max_rss_kb as f64 / 1024.0),
        )
    });
    let _ = writeln!(out, " {status:>9} {ms:>8} {mib:>7}");
}

fn failures(out: &mut String, cases: &[CaseResult]) {
    let mut header = false;
    for c in cases {
        let builds = [
            ("sysyc", Some(&c.sysyc)),
            ("gcc", Some(&c.gcc)),
            ("clang", c.clang.as_ref()),
            ("llc", c.llc.as_ref()),
        ];
        for (tag, b) in builds {
            let Some(b) = b else { continue };
            let Some(detail) = &b.detail else { continue };
            if !header {
                let _ = writeln!(out, "\nfailures:");
                header = true;
            }
            let first = detail.lines().next().unwrap_or("");
            let _ = writeln!(out, "  {} [{tag}] {}: {first}", c.name, b.status.label());
        }
    }
}

/// The table of several suites: each suite's geomeans and the cases where sysyc
/// is slower than gcc -O2 (U74 estimate above 1), slowest first.
pub fn render_suites(reports: &[(String, Report)]) -> String {
    let width = reports
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<width$} {:>6} {:>8} {:>8} {:>8}  slower than gcc (U74)",
        "suite", "cases", "insns", "cycles", "u74"
    );
    for (name, r) in reports {
        let s = &r.summary;
        let mut slower: Vec<(&str, f64)> = r
            .cases
            .iter()
            .filter_map(|c| Some((c.name.as_str(), c.u74_ratio()?)))
            .filter(|&(_, u)| u > 1.0)
            .collect();
        slower.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        let list: Vec<String> = slower.iter().map(|(n, u)| format!("{n} {u:.2}")).collect();
        let _ = writeln!(
            out,
            "{:<width$} {:>6} {:>8} {:>8} {:>8}  {}",
            name,
            s.compared,
            fmt_ratio(s.geomean_insns),
            fmt_ratio(s.geomean_cycles),
            fmt_ratio(s.geomean_u74),
            if list.is_empty() {
                "none".to_string()
            } else {
                list.join(", ")
            }
        );
    }
    out
}

fn summary(out: &mut String, report: &Report) {
    let s = &report.summary;
    let _ = writeln!(
        out,
        "\n{} cases: sysyc passed {}, gcc passed {}, compared {}",
        s.cases, s.sysyc_passed, s.gcc_passed, s.compared
    );
    let _ = writeln!(
        out,
        "geomean sysyc/gcc: instructions {}, cycle estimate {}, U74 estimate {}  (lower is better; 1.0 = gcc -O2)",
        fmt_ratio(s.geomean_insns),
        fmt_ratio(s.geomean_cycles),
        fmt_ratio(s.geomean_u74)
    );
    if s.geomean_clang.is_some() {
        let _ = writeln!(
            out,
            "geomean clang/gcc: instructions {}",
            fmt_ratio(s.geomean_clang)
        );
    }
    if s.geomean_llc.is_some() {
        let _ = writeln!(
            out,
            "geomean (sysyc IR + llc -O2)/gcc: instructions {}  (middle end vs back end)",
            fmt_ratio(s.geomean_llc)
        );
    }
    if let (Some(med), Some(max)) = (s.compile_seconds_median, s.compile_seconds_max) {
        let _ = writeln!(
            out,
            "sysyc compile time: median {:.1} ms, max {:.1} ms; peak memory: median {:.1} MiB, max {:.1} MiB",
            med * 1e3,
            max * 1e3,
            s.max_rss_kb_median.unwrap_or(0.0) / 1024.0,
            s.max_rss_kb_max.unwrap_or(0.0) / 1024.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report of cases `(name, sysyc U74, gcc U74)`, other counts equal.
    fn report(cases: &[(&str, u64, u64)]) -> Report {
        let build = |u74: u64| {
            format!(
                r#"{{"status": "ok", "counts": {{"insns": 100, "cycles": 100, "u74": {u74}, "loads": 0, "stores": 0, "mul": 0, "div": 0, "fp": 0, "fdiv": 0, "branches": 0, "jumps": 0, "alu": 0, "other": 0, "pairs": 0}}}}"#
            )
        };
        let cases: Vec<String> = cases
            .iter()
            .map(|(n, s, g)| {
                format!(
                    r#"{{"name": "{n}", "sysyc": {}, "gcc": {}}}"#,
                    build(*s),
                    build(*g)
                )
            })
            .collect();
        let mut r: Report = serde_json::from_str(&format!(
            r#"{{"suite": "s", "sysyc": "x", "opt_level": 2, "cases": [{}], "summary": {{"cases": 0, "sysyc_passed": 0, "gcc_passed": 0, "compared": 0}}}}"#,
            cases.join(", ")
        ))
        .expect("test report parses");
        r.summary = crate::results::Summary::of(&r.cases);
        r
    }

    #[test]
    fn the_suites_table_lists_each_suites_slower_cases_slowest_first() {
        let reports = vec![
            (
                "a/performance".to_string(),
                report(&[("fast", 50, 100), ("slow", 150, 100), ("slower", 300, 100)]),
            ),
            (
                "b/functional".to_string(),
                report(&[("x", 90, 100), ("y", 100, 100)]),
            ),
        ];
        let table = render_suites(&reports);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].starts_with("suite") && lines[0].contains("slower than gcc"),
            "{table}"
        );
        assert!(
            lines[1].starts_with("a/performance") && lines[1].ends_with("slower 3.00, slow 1.50"),
            "{table}"
        );
        // Equal to gcc is not slower; the geomean of 0.9 and 1.0.
        assert!(
            lines[2].contains("0.949") && lines[2].ends_with("none"),
            "{table}"
        );
    }

    #[test]
    fn compact_counts() {
        assert_eq!(fmt_count(987), "987");
        assert_eq!(fmt_count(12_345), "12.3K");
        assert_eq!(fmt_count(4_560_000), "4.56M");
        assert_eq!(fmt_count(1_230_000_000), "1.23G");
    }
}
