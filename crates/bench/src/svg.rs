//! A hand-written SVG bar chart of the per-case sysyc/gcc instruction ratios, on
//! a log scale with a line at 1.0 (gcc -O2) and a dashed line at the geomean.

use std::fmt::Write;

use crate::results::Report;

const BAR: f64 = 16.0;
const GAP: f64 = 4.0;
const LEFT: f64 = 60.0;
const TOP: f64 = 40.0;
const PLOT_H: f64 = 300.0;
const LABEL_H: f64 = 170.0;

/// Renders the chart. Cases without a ratio get no bar but keep their label.
pub fn render(report: &Report) -> String {
    let ratios: Vec<(String, Option<f64>)> = report
        .cases
        .iter()
        .map(|c| (c.name.clone(), c.insn_ratio()))
        .collect();
    let present = ratios.iter().filter_map(|r| r.1);
    let lo = present.clone().fold(1.0_f64, f64::min).min(0.5);
    let hi = present.fold(1.0_f64, f64::max).max(2.0);
    // Log scale from the power of two below `lo` to the one above `hi`.
    let (lo2, hi2) = (lo.log2().floor(), hi.log2().ceil());
    let y = |r: f64| TOP + PLOT_H * (hi2 - r.log2()) / (hi2 - lo2);
    let width = (LEFT + ratios.len().max(1) as f64 * (BAR + GAP) + 100.0).max(640.0);
    let height = TOP + PLOT_H + LABEL_H;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let title = format!(
        "sysyc -O{} / gcc -O2 dynamic instructions (log scale, lower is better); geomean {}",
        report.opt_level,
        report
            .summary
            .geomean_insns
            .map_or("-".to_string(), |g| format!("{g:.3}"))
    );
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="20" font-size="13">{}</text>"#,
        escape(&title)
    );
    // Grid lines at powers of two.
    let mut e = lo2;
    while e <= hi2 {
        let r = e.exp2();
        let yy = y(r);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            width - 10.0,
            LEFT - 6.0,
            yy + 4.0,
            fmt_tick(r)
        );
        e += 1.0;
    }
    let base = y(1.0);
    for (i, (name, r)) in ratios.iter().enumerate() {
        let x = LEFT + i as f64 * (BAR + GAP) + GAP;
        if let Some(r) = r {
            let top = y(*r).min(base);
            let h = (y(*r) - base).abs().max(1.0);
            let color = if *r <= 1.0 { "#4c9a2a" } else { "#d9822b" };
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{top:.1}" width="{BAR}" height="{h:.1}" fill="{color}"><title>{}: {r:.3}</title></rect>"#,
                escape(name)
            );
        }
        let lx = x + BAR * 0.7;
        let ly = TOP + PLOT_H + 8.0;
        let _ = writeln!(
            s,
            r#"<text x="{lx:.1}" y="{ly:.1}" transform="rotate(60 {lx:.1} {ly:.1})">{}</text>"#,
            escape(name)
        );
    }
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" y1="{base:.1}" x2="{:.1}" y2="{base:.1}" stroke="black" stroke-width="1.5"/>"#,
        width - 10.0
    );
    if let Some(g) = report.summary.geomean_insns {
        let gy = y(g);
        let _ = writeln!(
            s,
            r#"<line x1="{LEFT}" y1="{gy:.1}" x2="{:.1}" y2="{gy:.1}" stroke="steelblue" stroke-dasharray="6 3"/>"#,
            width - 10.0
        );
    }
    s.push_str("</svg>\n");
    s
}

fn fmt_tick(r: f64) -> String {
    if r >= 1.0 {
        format!("{r:.0}x")
    } else {
        format!("1/{:.0}", 1.0 / r)
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_ticks() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(fmt_tick(4.0), "4x");
        assert_eq!(fmt_tick(0.25), "1/4");
    }
}
