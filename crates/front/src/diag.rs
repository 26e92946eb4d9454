//! Diagnostics: error messages with source spans, and their rendering.
//!
//! [`Diagnostics::render`] gives the compact compiler style used in tests and by the
//! driver:
//!
//! ```text
//! file.sy:3:5: error: use of undeclared identifier `x`
//!     x = 1;
//!     ^
//! ```
//!
//! [`Diagnostics::render_rich`] gives codespan-reporting's multi-line style.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::{Files, SimpleFile};
use codespan_reporting::term::{self, termcolor::NoColor};

use crate::span::Span;

/// Most errors reported for one file; later ones are dropped (one final note says so).
pub const MAX_ERRORS: usize = 100;

/// One error: a message about a span of the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The message, without the `error:` prefix.
    pub message: String,
    /// The primary location; `None` for errors about the file as a whole.
    pub span: Option<Span>,
}

impl Diagnostic {
    /// An error with `message` at `span`.
    pub fn error(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            message: message.into(),
            span: Some(span),
        }
    }

    /// An error about the whole file (rendered without a source line).
    pub fn file_error(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            message: message.into(),
            span: None,
        }
    }
}

/// The errors found in one file, in the order they were found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics {
    errors: Vec<Diagnostic>,
    dropped: usize,
}

impl Diagnostics {
    /// Adds an error (dropped, but counted, beyond [`MAX_ERRORS`]).
    pub fn push(&mut self, d: Diagnostic) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(d);
        } else {
            self.dropped += 1;
        }
    }

    /// Adds an error with `message` at `span`.
    pub fn error(&mut self, message: impl Into<String>, span: Span) {
        self.push(Diagnostic::error(message, span));
    }

    /// Number of errors kept.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// True when there are no errors.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// True once [`MAX_ERRORS`] errors have been reported (further work is pointless).
    pub fn is_full(&self) -> bool {
        self.errors.len() >= MAX_ERRORS
    }

    /// The errors.
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.errors.iter()
    }

    /// Renders every error as `file:line:col: error: message`, the source line, and a
    /// line of carets under the span (clipped to that line). Columns count characters,
    /// from 1; tabs before the span are kept in the caret line so that it lines up.
    pub fn render(&self, file_name: &str, source: &str) -> String {
        let file = SimpleFile::new(file_name, source);
        let mut out = String::new();
        for d in &self.errors {
            render_one(&file, source, file_name, d, &mut out);
        }
        if self.dropped > 0 {
            out.push_str(&format!(
                "{file_name}: note: {} more errors not shown\n",
                self.dropped
            ));
        }
        out
    }

    /// Renders every error in codespan-reporting's rich (multi-line, boxed) style.
    pub fn render_rich(&self, file_name: &str, source: &str) -> String {
        let file = SimpleFile::new(file_name, source);
        let config = term::Config::default();
        let mut buf = NoColor::new(Vec::new());
        for d in &self.errors {
            let mut cs = CsDiagnostic::error().with_message(&d.message);
            if let Some(sp) = d.span {
                cs = cs.with_labels(vec![Label::primary((), clamp(sp, source))]);
            }
            // Writing into a Vec cannot fail; an error would only lose this message.
            let _ = term::emit(&mut buf, &config, &file, &cs);
        }
        String::from_utf8_lossy(&buf.into_inner()).into_owned()
    }
}

/// The span's range, clamped into `source` and onto char boundaries.
fn clamp(span: Span, source: &str) -> std::ops::Range<usize> {
    let mut s = (span.start as usize).min(source.len());
    while !source.is_char_boundary(s) {
        s -= 1;
    }
    let mut e = (span.end as usize).clamp(s, source.len());
    while !source.is_char_boundary(e) {
        e += 1;
    }
    s..e
}

fn render_one(
    file: &SimpleFile<&str, &str>,
    source: &str,
    file_name: &str,
    d: &Diagnostic,
    out: &mut String,
) {
    let Some(span) = d.span else {
        out.push_str(&format!("{file_name}: error: {}\n", d.message));
        return;
    };
    let r = clamp(span, source);
    let (line_idx, line_range) = match file
        .line_index((), r.start)
        .and_then(|l| Ok((l, file.line_range((), l)?)))
    {
        Ok(x) => x,
        Err(_) => {
            out.push_str(&format!("{file_name}: error: {}\n", d.message));
            return;
        }
    };
    let line_text = source[line_range.clone()].trim_end_matches(['\n', '\r']);
    let before = &source[line_range.start..r.start];
    let col = before.chars().count() + 1;
    out.push_str(&format!(
        "{file_name}:{}:{col}: error: {}\n",
        line_idx + 1,
        d.message
    ));
    // A long line is shown as a window around the column (as rustc does), so
    // that a file of one huge line does not echo all of it for every error.
    let total = line_text.chars().count();
    let (skip, take) = if total > LONG_LINE {
        let skip = (col - 1).saturating_sub(WINDOW);
        (skip, (col - 1 - skip) + WINDOW)
    } else {
        (0, total)
    };
    let cut_left = skip > 0;
    let cut_right = skip + take < total;
    if cut_left {
        out.push_str("...");
    }
    out.extend(line_text.chars().skip(skip).take(take));
    if cut_right {
        out.push_str("...");
    }
    out.push('\n');
    let mut caret: String = if cut_left {
        "   ".into()
    } else {
        String::new()
    };
    caret.extend(
        before
            .chars()
            .skip(skip)
            .map(|c| if c == '\t' { '\t' } else { ' ' }),
    );
    let line_end = line_range.start + line_text.len();
    let under = &source[r.start..r.end.min(line_end).max(r.start)];
    // Carets under the span, not past the part of the line shown.
    let shown_from_col = (skip + take).saturating_sub(col - 1).max(1);
    let n = under.chars().count().clamp(1, shown_from_col);
    caret.extend(std::iter::repeat_n('^', n));
    out.push_str(&caret);
    out.push('\n');
}

/// Lines longer than this many characters are shown in part.
const LONG_LINE: usize = 160;
/// Characters shown on each side of the column in a long line.
const WINDOW: usize = 60;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_line_col_and_carets() {
        let src = "int main() {\n\treturn x;\n}\n";
        let mut d = Diagnostics::default();
        d.error("use of undeclared identifier `x`", Span::new(21, 22));
        assert_eq!(
            d.render("t.sy", src),
            "t.sy:2:9: error: use of undeclared identifier `x`\n\treturn x;\n\t       ^\n"
        );
        assert!(d.render_rich("t.sy", src).contains("t.sy:2:9"));
        let mut d = Diagnostics::default();
        d.push(Diagnostic::file_error("no `main` function defined"));
        assert_eq!(
            d.render("t.sy", src),
            "t.sy: error: no `main` function defined\n"
        );
    }

    #[test]
    fn span_at_eof_and_multiline() {
        let src = "int a\n";
        let mut d = Diagnostics::default();
        d.error("expected `;`", Span::new(6, 6));
        d.error("multi", Span::new(0, 6));
        let r = d.render("t.sy", src);
        assert_eq!(
            r,
            "t.sy:2:1: error: expected `;`\n\n^\nt.sy:1:1: error: multi\nint a\n^^^^^\n"
        );
    }

    /// An error in the middle of a 100 000-character line shows 60 characters on
    /// each side of it, marked as cut, with the caret under the error.
    #[test]
    fn long_lines_are_shown_around_the_column() {
        let mut src = "x".repeat(50_000);
        src.push('@');
        src.push_str(&"y".repeat(50_000));
        let mut d = Diagnostics::default();
        d.error("unexpected character `@`", Span::new(50_000, 50_001));
        let text = d.render("long.sy", &src);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "long.sy:1:50001: error: unexpected character `@`");
        assert_eq!(
            lines[1],
            format!("...{}@{}...", "x".repeat(60), "y".repeat(59))
        );
        assert_eq!(lines[2].find('^'), lines[1].find('@'));
        assert!(text.len() < 400, "{} bytes", text.len());
        // A short line is shown whole.
        let mut d = Diagnostics::default();
        d.error("bad", Span::new(2, 3));
        assert_eq!(
            d.render("s.sy", "ab@cd"),
            "s.sy:1:3: error: bad\nab@cd\n  ^\n"
        );
    }
}
