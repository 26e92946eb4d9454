//! `--time-passes`: wall time and program size around every stage of one compile, as
//! a table on standard error (LLVM's `-time-passes`, GCC's `-ftime-report`).
//!
//! Rows come in the order stages first ran; a pass that runs several times in the
//! pipeline is one row with its number of runs, its total time, and the module's
//! size (IR instructions) before its first run and after its last. Back-end stages
//! are summed over the functions and show machine instructions after the stage.

use std::fmt::Write;

/// The collected rows of one compile.
#[derive(Clone, Debug, Default)]
pub struct TimeReport {
    rows: Vec<Row>,
}

#[derive(Clone, Debug)]
struct Row {
    name: String,
    runs: usize,
    seconds: f64,
    size: Size,
}

/// What the size column of a row shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    None,
    /// IR instructions after the stage.
    After(usize),
    /// IR instructions before the first and after the last run.
    Change(usize, usize),
    /// Machine instructions after a back-end stage.
    Machine(usize),
}

impl TimeReport {
    /// Adds one run of stage `name`.
    pub fn add(&mut self, name: &str, seconds: f64, size: Size) {
        match self.rows.iter_mut().find(|r| r.name == name) {
            Some(r) => {
                r.runs += 1;
                r.seconds += seconds;
                r.size = match (r.size, size) {
                    (Size::Change(first, _), Size::Change(_, last)) => Size::Change(first, last),
                    (_, s) => s,
                };
            }
            None => self.rows.push(Row {
                name: name.to_string(),
                runs: 1,
                seconds,
                size,
            }),
        }
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table.
    pub fn render(&self, input: &str) -> String {
        let total: f64 = self.rows.iter().map(|r| r.seconds).sum();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "===== sysyc --time-passes: {input}: {} stages, {:.3} ms =====",
            self.rows.len(),
            total * 1e3
        );
        let _ = writeln!(
            out,
            "{:>10} {:>7} {:>5} {:>17}  stage",
            "time (ms)", "share", "runs", "size"
        );
        for r in &self.rows {
            let size = match r.size {
                Size::None => String::new(),
                Size::After(n) => format!("-> {n} IR"),
                Size::Change(a, b) => format!("{a} -> {b} IR"),
                Size::Machine(n) => format!("-> {n} MIR"),
            };
            let share = if total > 0.0 { r.seconds / total } else { 0.0 };
            let _ = writeln!(
                out,
                "{:>10.3} {:>6.1}% {:>5} {:>17}  {}",
                r.seconds * 1e3,
                share * 100.0,
                r.runs,
                size,
                r.name
            );
        }
        let _ = writeln!(
            out,
            "{:>10.3} {:>6.1}% {:>5} {:>17}  total",
            total * 1e3,
            100.0,
            "",
            ""
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_passes_are_one_row_with_first_and_last_sizes() {
        let mut r = TimeReport::default();
        r.add("front end", 0.002, Size::None);
        r.add("gvn", 0.001, Size::Change(100, 90));
        r.add("dce", 0.001, Size::Change(90, 80));
        r.add("gvn", 0.003, Size::Change(80, 70));
        let text = r.render("a.sy");
        assert!(text.starts_with("===== sysyc --time-passes: a.sy: 3 stages, 7.000 ms ====="));
        let gvn = text.lines().find(|l| l.ends_with(" gvn")).unwrap();
        assert!(gvn.contains("100 -> 70 IR"), "{gvn}");
        assert!(gvn.contains("     2 ") || gvn.contains(" 2 "), "{gvn}");
        assert!(gvn.trim_start().starts_with("4.000"), "{gvn}");
        assert!(text.lines().last().unwrap().ends_with("total"));
    }
}
