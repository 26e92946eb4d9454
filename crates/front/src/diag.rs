//! Diagnostics: errors, warnings and their notes, with source spans, and their
//! rendering in the compact compiler style used in tests and by the driver:
//!
//! ```text
//! file.sy:3:5: error: redefinition of `x`
//!     int x = 2;
//!         ^
//! file.sy:2:9: note: previous definition is here
//!     int x = 1;
//!         ^
//! ```
//!
//! Rendering is plain text, or coloured with ANSI escapes as gcc colours it
//! ([`Style::color`]). The driver decides which (terminal, `NO_COLOR`, `--color`).

use crate::span::Span;

/// Most errors (and, separately, warnings) reported for one file; later ones are
/// dropped and counted (one final note says how many).
pub const MAX_ERRORS: usize = 100;

/// The warnings the front end gives, by the name of the `-W` option controlling each.
pub const WARNING_FLAGS: &[(&str, &str)] = &[
    (
        "return-type",
        "a non-void function can reach its end without `return`",
    ),
    ("unused-variable", "a local variable is never used"),
    ("unused-parameter", "a parameter is never used"),
    (
        "overflow",
        "an integer or float constant does not fit its type",
    ),
    (
        "div-by-zero",
        "integer division or remainder by a constant zero",
    ),
    (
        "tautological-compare",
        "a comparison of constants is always true or false",
    ),
    (
        "unreachable-code",
        "code after `return`, `break` or `continue` in a block",
    ),
    (
        "incompatible-pointer-types",
        "an array passed flattened to a `T[]` parameter",
    ),
];

/// How serious a diagnostic is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The program is rejected.
    Error,
    /// Compilation goes on; `-Werror` makes it an error, `-w` hides it.
    Warning,
}

/// A note attached to a diagnostic: a related place ("previous definition is here").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The note's text, without the `note:` prefix.
    pub message: String,
    /// Where it points.
    pub span: Span,
}

/// One error or warning: a message about a span of the source, with notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The message, without the `error:` prefix.
    pub message: String,
    /// The primary location; `None` for diagnostics about the file as a whole.
    pub span: Option<Span>,
    /// For warnings, the name of the option that controls it (`unused-variable`),
    /// shown as `[-Wunused-variable]`.
    pub flag: Option<&'static str>,
    /// Related places, shown after the diagnostic.
    pub notes: Vec<Note>,
}

impl Diagnostic {
    /// An error with `message` at `span`.
    pub fn error(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span: Some(span),
            flag: None,
            notes: Vec::new(),
        }
    }

    /// An error about the whole file (rendered without a source line).
    pub fn file_error(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span: None,
            ..Diagnostic::error(message, Span::default())
        }
    }

    /// A warning with `message` at `span`, controlled by `-W<flag>`.
    pub fn warning(flag: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            flag: Some(flag),
            ..Diagnostic::error(message, span)
        }
    }

    /// The same diagnostic with a note at `span`.
    pub fn with_note(mut self, message: impl Into<String>, span: Span) -> Diagnostic {
        self.notes.push(Note {
            message: message.into(),
            span,
        });
        self
    }
}

/// The errors and warnings found in one file, in the order they were found.
///
/// [`len`](Self::len), [`is_empty`](Self::is_empty) and [`is_full`](Self::is_full)
/// count errors only: warnings never stop the compiler.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
    errors: usize,
    warnings: usize,
    dropped_errors: usize,
    dropped_warnings: usize,
    /// Whether the last [`push`](Self::push) was kept (notes attach to it).
    last_kept: bool,
}

/// How to render diagnostics.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Style {
    /// ANSI colours (bold locations, red errors, magenta warnings, cyan notes, green
    /// carets), as gcc and clang use on a terminal.
    pub color: bool,
}

impl Diagnostics {
    /// Adds a diagnostic (dropped, but counted, beyond [`MAX_ERRORS`] of its kind).
    pub fn push(&mut self, d: Diagnostic) {
        let (kept, dropped) = match d.severity {
            Severity::Error => (&mut self.errors, &mut self.dropped_errors),
            Severity::Warning => (&mut self.warnings, &mut self.dropped_warnings),
        };
        self.last_kept = *kept < MAX_ERRORS;
        if self.last_kept {
            *kept += 1;
            self.items.push(d);
        } else {
            *dropped += 1;
        }
    }

    /// Adds an error with `message` at `span`.
    pub fn error(&mut self, message: impl Into<String>, span: Span) {
        self.push(Diagnostic::error(message, span));
    }

    /// Adds a warning with `message` at `span`, controlled by `-W<flag>`.
    pub fn warning(&mut self, flag: &'static str, message: impl Into<String>, span: Span) {
        self.push(Diagnostic::warning(flag, message, span));
    }

    /// Attaches a note to the diagnostic added last (nothing if it was dropped).
    pub fn note(&mut self, message: impl Into<String>, span: Span) {
        if self.last_kept {
            if let Some(d) = self.items.last_mut() {
                d.notes.push(Note {
                    message: message.into(),
                    span,
                });
            }
        }
    }

    /// Number of errors kept.
    pub fn len(&self) -> usize {
        self.errors
    }

    /// True when there are no errors (there may be warnings).
    pub fn is_empty(&self) -> bool {
        self.errors == 0
    }

    /// Number of warnings kept.
    pub fn warning_count(&self) -> usize {
        self.warnings
    }

    /// True once [`MAX_ERRORS`] errors have been reported (further work is pointless).
    pub fn is_full(&self) -> bool {
        self.errors >= MAX_ERRORS
    }

    /// The errors and warnings, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }

    /// Removes every warning (`-w`).
    pub fn drop_warnings(&mut self) {
        self.items.retain(|d| d.severity == Severity::Error);
        self.warnings = 0;
        self.dropped_warnings = 0;
    }

    /// Removes the warnings controlled by `flag` (`-Wno-<flag>`). Dropped warnings
    /// beyond the limit are not known by flag and stay counted.
    pub fn drop_warnings_of(&mut self, flag: &str) {
        let before = self.items.len();
        self.items
            .retain(|d| d.severity == Severity::Error || d.flag != Some(flag));
        self.warnings -= before - self.items.len();
    }

    /// Makes the warnings controlled by `flag` errors (`-Werror=<flag>`), read as
    /// `[-Werror=<flag>]`.
    pub fn promote_warnings_of(&mut self, flag: &str) {
        for d in &mut self.items {
            if d.severity == Severity::Warning && d.flag == Some(flag) {
                d.severity = Severity::Error;
                self.warnings -= 1;
                self.errors += 1;
            }
        }
    }

    /// Makes every warning an error (`-Werror`); its flag then reads
    /// `[-Werror=unused-variable]`.
    pub fn promote_warnings(&mut self) {
        for d in &mut self.items {
            d.severity = Severity::Error;
        }
        self.errors += self.warnings;
        self.dropped_errors += self.dropped_warnings;
        self.warnings = 0;
        self.dropped_warnings = 0;
    }

    /// Renders plainly (see [`render_styled`](Self::render_styled)).
    pub fn render(&self, file_name: &str, source: &str) -> String {
        self.render_styled(file_name, source, Style::default())
    }

    /// Renders every diagnostic as `file:line:col: error: message`, the source line,
    /// and a line of carets under the span (clipped to that line), then its notes the
    /// same way. Columns count characters, from 1; tabs before the span are kept in
    /// the caret line so that it lines up.
    pub fn render_styled(&self, file_name: &str, source: &str, style: Style) -> String {
        let lines = LineIndex::new(source);
        let mut out = String::new();
        // Warnings in source order among themselves (a stable sort, in the places
        // the warnings held; errors stay where they were found): a function's
        // unused-variable warnings, found when its body is done, come out where
        // its variables are declared, before what its body said later.
        let mut items: Vec<&Diagnostic> = self.items.iter().collect();
        let mut warnings: Vec<&Diagnostic> = self
            .items
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .collect();
        warnings.sort_by_key(|d| d.span.map_or(0, |s| s.start));
        let mut sorted = warnings.into_iter();
        for slot in items.iter_mut().filter(|d| d.severity == Severity::Warning) {
            *slot = sorted.next().expect("as many warnings as warning places");
        }
        for d in items {
            let (label, flag) = match (d.severity, d.flag) {
                (Severity::Warning, Some(f)) => (Label::Warning, format!(" [-W{f}]")),
                (Severity::Error, Some(f)) => (Label::Error, format!(" [-Werror={f}]")),
                (Severity::Warning, None) => (Label::Warning, String::new()),
                (Severity::Error, None) => (Label::Error, String::new()),
            };
            let message = format!("{}{flag}", d.message);
            let at = d.span.map(|s| (&lines, s));
            render_one(&mut out, style, file_name, source, at, label, &message);
            for n in &d.notes {
                let at = Some((&lines, n.span));
                render_one(
                    &mut out,
                    style,
                    file_name,
                    source,
                    at,
                    Label::Note,
                    &n.message,
                );
            }
        }
        for (n, what) in [
            (self.dropped_errors, "errors"),
            (self.dropped_warnings, "warnings"),
        ] {
            if n > 0 {
                let msg = format!("{n} more {what} not shown");
                render_one(&mut out, style, file_name, source, None, Label::Note, &msg);
            }
        }
        out
    }
}

/// The word before a message, and its colour.
#[derive(Copy, Clone)]
enum Label {
    Error,
    Warning,
    Note,
}

impl Label {
    fn word(self) -> &'static str {
        match self {
            Label::Error => "error",
            Label::Warning => "warning",
            Label::Note => "note",
        }
    }

    /// ANSI: bold red, bold magenta, bold cyan.
    fn color(self) -> &'static str {
        match self {
            Label::Error => "\x1b[1;31m",
            Label::Warning => "\x1b[1;35m",
            Label::Note => "\x1b[1;36m",
        }
    }
}

const BOLD: &str = "\x1b[1m";
const GREEN: &str = "\x1b[1;32m";
const RESET: &str = "\x1b[0m";

/// Byte offsets of line starts, for line numbers by binary search.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(source: &str) -> LineIndex {
        let starts = std::iter::once(0)
            .chain(source.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { starts }
    }

    /// The 0-based line of byte `pos` and that line's byte range (with its newline).
    fn line(&self, pos: usize, len: usize) -> (usize, std::ops::Range<usize>) {
        let i = self.starts.partition_point(|&s| s <= pos).saturating_sub(1);
        let end = self.starts.get(i + 1).copied().unwrap_or(len);
        (i, self.starts[i]..end)
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

/// One `file:line:col: label: message` line with its snippet and carets (or
/// `file: label: message` without a place).
fn render_one(
    out: &mut String,
    style: Style,
    file_name: &str,
    source: &str,
    at: Option<(&LineIndex, Span)>,
    label: Label,
    message: &str,
) {
    let (bold, color, green, reset) = if style.color {
        (BOLD, label.color(), GREEN, RESET)
    } else {
        ("", "", "", "")
    };
    // Neither the message (which may quote the source) nor the file name may send
    // a control character to the terminal.
    let message = escape_text(message);
    let file_name = escape_text(file_name);
    let head = |out: &mut String, place: &str| {
        out.push_str(&format!(
            "{bold}{place}:{reset} {color}{}:{reset} {bold}{message}{reset}\n",
            label.word()
        ));
    };
    let Some((lines, span)) = at else {
        head(out, &file_name);
        return;
    };
    let r = clamp(span, source);
    let (line_idx, line_range) = lines.line(r.start, source.len());
    let line_text = source[line_range.clone()].trim_end_matches(['\n', '\r']);
    let before = &source[line_range.start..r.start];
    let col = before.chars().count() + 1;
    head(out, &format!("{file_name}:{}:{col}", line_idx + 1));
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
    for c in line_text.chars().skip(skip).take(take) {
        match escaped_char(c) {
            Some(e) => out.push_str(&e),
            None => out.push(c),
        }
    }
    if cut_right {
        out.push_str("...");
    }
    out.push('\n');
    let mut caret: String = if cut_left {
        "   ".into()
    } else {
        String::new()
    };
    for c in before.chars().skip(skip) {
        match c {
            '\t' => caret.push('\t'),
            c => caret.extend(std::iter::repeat_n(' ', shown_width(c))),
        }
    }
    let line_end = line_range.start + line_text.len();
    let under = &source[r.start..r.end.min(line_end).max(r.start)];
    // Carets under the span, not past the part of the line shown.
    let shown_from_col = (skip + take).saturating_sub(col - 1).max(1);
    let n: usize = under
        .chars()
        .take(shown_from_col)
        .map(|c| escaped_char(c).map_or(1, |e| e.len()))
        .sum();
    let n = n.max(1);
    caret.push_str(green);
    caret.extend(std::iter::repeat_n('^', n));
    caret.push_str(reset);
    out.push_str(&caret);
    out.push('\n');
}

/// How a character of the source is shown in a diagnostic, when not as itself: a
/// control character (C0, DEL, C1) as `\r`, `\0` or `\x1b`, a character that
/// reorders text (bidirectional overrides and isolates, the marks) as `\u{202e}`,
/// so that a file cannot send an escape sequence to the terminal or make the
/// shown line read differently from what the compiler read. A tab is shown as
/// itself (the caret line keeps it).
pub fn escaped_char(c: char) -> Option<String> {
    Some(match c {
        '\t' => return None,
        '\r' => "\\r".into(),
        '\n' => "\\n".into(),
        '\0' => "\\0".into(),
        c if c.is_control() => format!("\\x{:02x}", c as u32),
        '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
            format!("\\u{{{:x}}}", c as u32)
        }
        _ => return None,
    })
}

/// `text` with the characters [`escaped_char`] escapes escaped (for a source line,
/// a message, a file name).
pub fn escape_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| escaped_char(c).is_some()) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match escaped_char(c) {
            Some(e) => out.push_str(&e),
            None => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Columns `c` takes in a snippet: its escape's length, two for a wide character,
/// else one.
fn shown_width(c: char) -> usize {
    match escaped_char(c) {
        Some(e) => e.len(),
        None if is_wide(c) => 2,
        None => 1,
    }
}

/// True for characters a terminal shows two columns wide (CJK ideographs, Hangul,
/// full-width forms), so that carets after them line up.
fn is_wide(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x115f
        | 0x2e80..=0x303e
        | 0x3041..=0x33ff
        | 0x3400..=0x4dbf
        | 0x4e00..=0x9fff
        | 0xa000..=0xa4cf
        | 0xac00..=0xd7a3
        | 0xf900..=0xfaff
        | 0xfe30..=0xfe4f
        | 0xff00..=0xff60
        | 0xffe0..=0xffe6
        | 0x20000..=0x3fffd)
}

/// Lines longer than this many characters are shown in part.
const LONG_LINE: usize = 160;
/// Characters shown on each side of the column in a long line.
const WINDOW: usize = 60;

#[cfg(test)]
mod tests {
    use super::*;

    /// Control characters of the source reach the terminal escaped, never raw, in
    /// the snippet, the message and the file name, and the carets stay under the
    /// escaped text (issue 48).
    #[test]
    fn control_characters_are_shown_escaped() {
        let src = "int main() {\n  int x;\x1b[2J\r y = 1;\n}\n";
        let at = src.find('y').unwrap();
        let mut d = Diagnostics::default();
        d.error("use of undeclared identifier `y`", Span::new(at, at + 1));
        let esc = src.find('\x1b').unwrap();
        d.error("unexpected character `\x1b`", Span::new(esc, esc + 1));
        d.push(Diagnostic::file_error("bell \x07 in a message"));
        assert_eq!(
            d.render("a\x1bb.sy", src),
            "a\\x1bb.sy:2:15: error: use of undeclared identifier `y`\n\
             \x20 int x;\\x1b[2J\\r y = 1;\n\
             \x20                 ^\n\
             a\\x1bb.sy:2:9: error: unexpected character `\\x1b`\n\
             \x20 int x;\\x1b[2J\\r y = 1;\n\
             \x20       ^^^^\n\
             a\\x1bb.sy: error: bell \\x07 in a message\n"
        );
        // Text that reorders the line (a "Trojan source") is escaped too.
        assert_eq!(escape_text("a\u{202e}b\u{2066}"), "a\\u{202e}b\\u{2066}");
        assert_eq!(escape_text("\0\x7f\u{85}\tok"), "\\0\\x7f\\x85\tok");
    }

    #[test]
    fn renders_line_col_and_carets() {
        let src = "int main() {\n\treturn x;\n}\n";
        let mut d = Diagnostics::default();
        d.error("use of undeclared identifier `x`", Span::new(21, 22));
        assert_eq!(
            d.render("t.sy", src),
            "t.sy:2:9: error: use of undeclared identifier `x`\n\treturn x;\n\t       ^\n"
        );
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

    /// Warnings carry their flag, notes follow their diagnostic, `-Werror` turns
    /// warnings into errors, `-w` removes them, and colour wraps the parts in ANSI.
    #[test]
    fn warnings_notes_and_colour() {
        let src = "int a;\nint a;\n";
        let mut d = Diagnostics::default();
        d.error("redefinition of `a`", Span::new(11, 12));
        d.note("previous definition is here", Span::new(4, 5));
        d.warning("unused-variable", "unused variable `a`", Span::new(4, 5));
        assert_eq!((d.len(), d.warning_count()), (1, 1));
        let plain = d.render("t.sy", src);
        assert_eq!(
            plain,
            "t.sy:2:5: error: redefinition of `a`\nint a;\n    ^\n\
             t.sy:1:5: note: previous definition is here\nint a;\n    ^\n\
             t.sy:1:5: warning: unused variable `a` [-Wunused-variable]\nint a;\n    ^\n"
        );
        let coloured = d.render_styled("t.sy", src, Style { color: true });
        assert!(coloured.contains("\x1b[1;31merror:\x1b[0m"), "{coloured}");
        assert!(coloured.contains("\x1b[1;35mwarning:\x1b[0m"));
        assert!(coloured.contains("\x1b[1;36mnote:\x1b[0m"));
        assert_eq!(
            coloured
                .replace(BOLD, "")
                .replace(RESET, "")
                .replace(GREEN, "")
                .replace("\x1b[1;31m", "")
                .replace("\x1b[1;35m", "")
                .replace("\x1b[1;36m", ""),
            plain
        );
        let mut w = d.clone();
        w.drop_warnings();
        assert_eq!(w.warning_count(), 0);
        assert!(!w.render("t.sy", src).contains("warning"));
        d.promote_warnings();
        assert_eq!((d.len(), d.warning_count()), (2, 0));
        assert!(d
            .render("t.sy", src)
            .contains("error: unused variable `a` [-Werror=unused-variable]"));
    }

    /// A caret after full-width characters lines up under the terminal's columns.
    #[test]
    fn carets_count_wide_characters_twice() {
        let src = "putint（a）;";
        let mut d = Diagnostics::default();
        let at = src.find('）').unwrap();
        d.error("bad", Span::new(at, at + '）'.len_utf8()));
        assert_eq!(
            d.render("w.sy", src),
            format!("w.sy:1:9: error: bad\n{src}\n         ^\n")
        );
    }

    /// Beyond the limit, errors are counted and one note says how many were left out.
    #[test]
    fn dropped_errors_are_counted() {
        let mut d = Diagnostics::default();
        for _ in 0..MAX_ERRORS + 7 {
            d.error("bad", Span::new(0, 1));
            d.note("dropped with its error", Span::new(0, 1));
        }
        let text = d.render("t.sy", "x");
        assert_eq!(text.matches("error: bad").count(), MAX_ERRORS);
        assert_eq!(text.matches("note: dropped").count(), MAX_ERRORS);
        assert!(
            text.ends_with("t.sy: note: 7 more errors not shown\n"),
            "{text}"
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

    /// Warnings found out of order (a function's unused variable after a division
    /// by zero in its body) render in source order; an error keeps its place.
    #[test]
    fn warnings_render_in_source_order_errors_in_place() {
        let src = "int u;\nint x = 1 / 0;\nint y;\n";
        let mut d = Diagnostics::default();
        d.warning("div-by-zero", "division by zero", Span::new(15, 20));
        d.error("some error", Span::new(26, 27));
        d.warning("unused-variable", "unused variable `u`", Span::new(4, 5));
        let text = d.render("t.sy", src);
        let heads: Vec<&str> = text.lines().filter(|l| l.starts_with("t.sy:")).collect();
        assert_eq!(
            heads,
            [
                "t.sy:1:5: warning: unused variable `u` [-Wunused-variable]",
                "t.sy:3:5: error: some error",
                "t.sy:2:9: warning: division by zero [-Wdiv-by-zero]",
            ]
        );
    }
}
