//! `--emit html`: one self-contained page showing how the pipeline transforms a
//! program, a compiler-explorer view of sysyc's own passes for people learning how
//! an SSA compiler works: the source, the IR after lowering, every pass of the
//! pipeline in order with what it changed (removed lines red, added lines green),
//! the pictures of the final CFGs and dominator trees (inline SVG when Graphviz's
//! `dot` is installed, its input otherwise), and the assembly (with
//! the source line of each run of instructions, as `-S -g` writes it).
//!
//! The page has no scripts and no external resources (collapsible sections are
//! HTML `<details>`). It is deterministic: pass timings are shown only with
//! `--time-passes`.

use std::fmt::Write;

/// One pass of the run: its name, the IR after it (when it changed anything) and
/// its time.
pub struct Step {
    pub name: String,
    pub after: Option<String>,
    pub seconds: f64,
    pub insts: (usize, usize),
}

/// Everything the page shows.
pub struct Page<'a> {
    pub file: &'a str,
    pub source: &'a str,
    pub opt_level: u8,
    pub lowered: String,
    pub steps: Vec<Step>,
    pub dot: String,
    pub asm: String,
    pub timings: bool,
}

/// Runs `names` over `m` one pass at a time, recording each pass's effect.
pub fn run_steps(
    m: &mut ir::Module,
    names: &[&str],
    verify_each: bool,
) -> Result<Vec<Step>, String> {
    let mut steps = Vec::with_capacity(names.len());
    let mut before = ir::print_module(m);
    for &name in names {
        let mut times = Vec::new();
        let mut opts = opt::PassOptions {
            verify_each,
            timings: Some(&mut times),
            ..Default::default()
        };
        opt::run_passes(m, &[name], &mut opts)?;
        let after = ir::print_module(m);
        let changed = after != before;
        let t = times.first();
        steps.push(Step {
            name: name.to_string(),
            after: changed.then(|| after.clone()),
            seconds: t.map_or(0.0, |t| t.seconds),
            insts: t.map_or((0, 0), |t| (t.insts_before, t.insts_after)),
        });
        before = after;
    }
    Ok(steps)
}

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// One line of a diff.
#[derive(Debug, PartialEq, Eq)]
enum Diff<'a> {
    Same(&'a str),
    Removed(&'a str),
    Added(&'a str),
}

/// Largest table (lines before x lines after, without the common ends) the
/// line diff computes; bigger changes show as all removed and all added.
const MAX_DIFF_CELLS: usize = 4_000_000;

/// A line diff of `a` and `b` (longest common subsequence after the common prefix
/// and suffix are set aside).
fn diff<'a>(a: &'a str, b: &'a str) -> Vec<Diff<'a>> {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    let pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut out: Vec<Diff> = a[..pre].iter().map(|l| Diff::Same(l)).collect();
    if am.len().saturating_mul(bm.len()) > MAX_DIFF_CELLS {
        out.extend(am.iter().map(|l| Diff::Removed(l)));
        out.extend(bm.iter().map(|l| Diff::Added(l)));
    } else {
        // lcs[i][j]: the LCS length of am[i..] and bm[j..].
        let w = bm.len() + 1;
        let mut lcs = vec![0u32; (am.len() + 1) * w];
        for i in (0..am.len()).rev() {
            for j in (0..bm.len()).rev() {
                lcs[i * w + j] = if am[i] == bm[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < am.len() || j < bm.len() {
            if i < am.len() && j < bm.len() && am[i] == bm[j] {
                out.push(Diff::Same(am[i]));
                i += 1;
                j += 1;
            } else if j < bm.len() && (i == am.len() || lcs[i * w + j + 1] >= lcs[(i + 1) * w + j])
            {
                out.push(Diff::Added(bm[j]));
                j += 1;
            } else {
                out.push(Diff::Removed(am[i]));
                i += 1;
            }
        }
    }
    out.extend(a[a.len() - suf..].iter().map(|l| Diff::Same(l)));
    out
}

/// The diff as HTML lines: removed in red with `-`, added in green with `+`.
fn diff_html(before: &str, after: &str) -> (String, usize, usize) {
    let mut out = String::new();
    let (mut removed, mut added) = (0, 0);
    for d in diff(before, after) {
        let (class, mark, line) = match d {
            Diff::Same(l) => ("", ' ', l),
            Diff::Removed(l) => {
                removed += 1;
                (" class=\"del\"", '-', l)
            }
            Diff::Added(l) => {
                added += 1;
                (" class=\"add\"", '+', l)
            }
        };
        let _ = writeln!(out, "<span{class}>{mark} {}</span>", esc(line));
    }
    (out, removed, added)
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;max-width:110em}\
pre{background:#f6f8fa;padding:.6em;overflow:auto;font-size:12px;line-height:1.35}\
pre span{display:block}.del{background:#ffe0e0;color:#8a1010}.add{background:#dcf5dc;color:#0b5a0b}\
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}\
td.n{text-align:right}tr.same td{color:#888}details{margin:.4em 0}summary{cursor:pointer}\
.ln{color:#999;user-select:none}svg{max-width:100%;height:auto}";

/// The page's HTML; `svg` is the rendered pictures, when Graphviz could render them.
pub fn render(p: &Page, svg: Option<&str>) -> String {
    let mut h = String::new();
    let title = format!("sysyc -O{}: {}", p.opt_level, p.file);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    h.push_str("<p>How sysyc compiles this program: the source, the SSA IR built from it, what each optimisation pass changed, the control-flow graphs at the end, and the RV64GC assembly (under each source line, as <code>-S -g</code> writes it).</p>\n");

    h.push_str("<h2 id=\"source\">Source</h2>\n<pre>");
    for (i, line) in p.source.lines().enumerate() {
        let _ = writeln!(
            h,
            "<span><span class=\"ln\">{:4} </span>{}</span>",
            i + 1,
            esc(line)
        );
    }
    h.push_str("</pre>\n");

    h.push_str("<h2 id=\"lowered\">IR after lowering</h2>\n<details><summary>show</summary><pre>");
    h.push_str(&esc(&p.lowered));
    h.push_str("</pre></details>\n");

    let changed = p.steps.iter().filter(|s| s.after.is_some()).count();
    let _ = writeln!(
        h,
        "<h2 id=\"passes\">Passes</h2>\n<p>{} passes ran, {changed} changed the IR.</p>",
        p.steps.len()
    );
    h.push_str("<table>\n<tr><th>#</th><th>pass</th><th>instructions</th><th>change</th>");
    if p.timings {
        h.push_str("<th>ms</th>");
    }
    h.push_str("</tr>\n");
    let mut rows = String::new();
    let mut details = String::new();
    let mut before = p.lowered.as_str();
    for (k, s) in p.steps.iter().enumerate() {
        let n = k + 1;
        let (from, to) = s.insts;
        let change = match &s.after {
            Some(after) => {
                let (body, removed, added) = diff_html(before, after);
                let _ = writeln!(
                    details,
                    "<details id=\"pass-{n}\"><summary>{n}. {} (-{removed} +{added} lines)</summary><pre>{body}</pre></details>",
                    esc(&s.name)
                );
                before = after;
                format!("<a href=\"#pass-{n}\">-{removed} +{added} lines</a>")
            }
            None => "unchanged".to_string(),
        };
        let class = if s.after.is_some() {
            ""
        } else {
            " class=\"same\""
        };
        let _ = write!(
            rows,
            "<tr{class}><td class=\"n\">{n}</td><td>{}</td><td class=\"n\">{from} → {to}</td><td>{change}</td>",
            esc(&s.name)
        );
        if p.timings {
            let _ = write!(rows, "<td class=\"n\">{:.3}</td>", s.seconds * 1e3);
        }
        rows.push_str("</tr>\n");
    }
    h.push_str(&rows);
    h.push_str("</table>\n<h2 id=\"changes\">What each pass changed</h2>\n");
    if changed == 0 {
        h.push_str("<p>No pass changed the IR (at -O0 none runs).</p>\n");
    }
    h.push_str(&details);

    h.push_str("<h2 id=\"final\">Final IR</h2>\n<details><summary>show</summary><pre>");
    h.push_str(&esc(before));
    h.push_str("</pre></details>\n");

    h.push_str("<h2 id=\"cfg\">Control-flow graphs and dominator trees</h2>\n");
    match svg {
        Some(svg) => {
            // Inline SVG without the XML prologue and doctype.
            let start = svg.find("<svg").unwrap_or(0);
            h.push_str(&svg[start..]);
            h.push('\n');
        }
        None => {
            h.push_str("<p>Graphviz's <code>dot</code> is not installed: its input is shown; <code>dot -Tsvg</code> draws it.</p>\n<pre>");
            h.push_str(&esc(&p.dot));
            h.push_str("</pre>\n");
        }
    }
    h.push_str("<h2 id=\"asm\">Assembly</h2>\n<details><summary>show</summary><pre>");
    h.push_str(&esc(&p.asm));
    h.push_str("</pre></details>\n</body>\n</html>\n");
    h
}

/// The pictures as SVG through Graphviz's `dot`, or `None` when it is missing or
/// fails.
pub fn render_svg(dot: &str) -> Option<String> {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input = dot.to_string();
    // Written from a thread: dot may fill its stdout pipe before reading all input.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().ok()?;
    writer.join().ok()?.ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_diff_marks_removed_and_added_lines() {
        let d = diff("a\nb\nc\nd\n", "a\nc\nx\nd\n");
        assert_eq!(
            d,
            vec![
                Diff::Same("a"),
                Diff::Removed("b"),
                Diff::Same("c"),
                Diff::Added("x"),
                Diff::Same("d")
            ]
        );
        let (html, removed, added) = diff_html("x < y\n", "x > y\n");
        assert_eq!((removed, added), (1, 1));
        assert!(html.contains("<span class=\"del\">- x &lt; y</span>"));
        assert!(html.contains("<span class=\"add\">+ x &gt; y</span>"));
    }

    #[test]
    fn every_pass_appears_and_unchanged_ones_say_so() {
        let page = Page {
            file: "t.sy",
            source: "int main() { return 0; }\n",
            opt_level: 1,
            lowered: "func @main() -> i32 {\nbb0:\n  ret 0\n}\n".into(),
            steps: vec![
                Step {
                    name: "gvn".into(),
                    after: None,
                    seconds: 0.0,
                    insts: (1, 1),
                },
                Step {
                    name: "dce".into(),
                    after: Some("func @main() -> i32 {\nbb0:\n  ret 1\n}\n".into()),
                    seconds: 0.0,
                    insts: (1, 1),
                },
            ],
            dot: "digraph sysyc {}\n".into(),
            asm: "main:\n  ret\n".into(),
            timings: false,
        };
        let html = render(&page, None);
        assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
        assert!(html.contains("<td>gvn</td><td class=\"n\">1 → 1</td><td>unchanged</td>"));
        assert!(html.contains("<details id=\"pass-2\"><summary>2. dce (-1 +1 lines)</summary>"));
        assert!(!html.contains("<script"));
        assert!(!html.contains("<th>ms</th>"));
        assert!(html.contains("digraph sysyc {}"));
    }
}
