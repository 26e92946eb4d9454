//! `bench compare A.json B.json`: per-case change of sysyc's instruction count
//! (and of its ratio to gcc) between two reports, and the geomean change.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::report::fmt_count;
use crate::results::{CaseResult, Report};
use crate::stats::geomean;

/// Renders the comparison of `old` (A) and `new` (B).
pub fn render(old: &Report, new: &Report) -> String {
    let a: BTreeMap<&str, &CaseResult> = old.cases.iter().map(|c| (c.name.as_str(), c)).collect();
    let b: BTreeMap<&str, &CaseResult> = new.cases.iter().map(|c| (c.name.as_str(), c)).collect();
    let mut names: Vec<&str> = a.keys().chain(b.keys()).copied().collect();
    names.sort_unstable();
    names.dedup();
    let width = names.iter().map(|n| n.len()).max().unwrap_or(4).max(4);

    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<width$} {:>9} {:>9} {:>8} {:>7} {:>7}",
        "case", "A insns", "B insns", "change", "A/gcc", "B/gcc"
    );
    let mut changes = Vec::new();
    for name in names {
        let (ca, cb) = (a.get(name), b.get(name));
        let ia = ca.and_then(|c| c.sysyc.ok_counts()).map(|c| c.insns);
        let ib = cb.and_then(|c| c.sysyc.ok_counts()).map(|c| c.insns);
        let change = match (ia, ib) {
            (Some(x), Some(y)) if x > 0 && y > 0 => {
                let r = y as f64 / x as f64;
                changes.push(r);
                format!("{:+.1}%", (r - 1.0) * 100.0)
            }
            (Some(_), None) => "lost".to_string(),
            (None, Some(_)) => "new".to_string(),
            _ => "-".to_string(),
        };
        let show = |i: Option<u64>| i.map_or("-".to_string(), fmt_count);
        let ratio = |c: Option<&&CaseResult>| {
            c.and_then(|c| c.insn_ratio())
                .map_or("-".to_string(), |r| format!("{r:.3}"))
        };
        let _ = writeln!(
            out,
            "{name:<width$} {:>9} {:>9} {change:>8} {:>7} {:>7}",
            show(ia),
            show(ib),
            ratio(ca),
            ratio(cb)
        );
    }
    let _ = writeln!(out);
    if let Some(g) = geomean(&changes) {
        let _ = writeln!(
            out,
            "geomean B/A over {} cases passing in both: {g:.4} ({:+.2}%)",
            changes.len(),
            (g - 1.0) * 100.0
        );
    }
    let fmt = |g: Option<f64>| g.map_or("-".to_string(), |g| format!("{g:.4}"));
    let _ = writeln!(
        out,
        "geomean sysyc/gcc: A {} ({} cases) -> B {} ({} cases)",
        fmt(old.summary.geomean_insns),
        old.summary.compared,
        fmt(new.summary.geomean_insns),
        new.summary.compared
    );
    let _ = writeln!(
        out,
        "geomean sysyc/gcc cycle estimate: A {} -> B {}; U74 estimate: A {} -> B {}",
        fmt(old.summary.geomean_cycles),
        fmt(new.summary.geomean_cycles),
        fmt(old.summary.geomean_u74),
        fmt(new.summary.geomean_u74)
    );
    out
}
