//! Diagnostics for textual IR input (`.ir` files), in the same form as for SysY:
//! `file:line:col: error: message`, the line and a caret.
//!
//! Parse errors carry their line and column. Verifier errors name their place as the
//! printer spells it (`in @main, bb3: %7 = add %5, %6`); that instruction, or else its
//! block's label, or else its function's header, is looked up in the text, so the
//! error points at the line where the problem is written.

use front::diag::{Diagnostic, Diagnostics, Style};
use front::span::Span;

/// Renders a parse error of `src` (named `name`).
pub fn parse_error(name: &str, src: &str, e: &ir::text::ParseError, style: Style) -> String {
    let start = offset_of(src, e.line, e.column);
    // The caret covers the token the error is at (up to white space).
    let len = src[start..]
        .find(|c: char| c.is_whitespace() || c == ',')
        .unwrap_or(src.len() - start)
        .max(1);
    let end = (start + len).min(src.len());
    let mut d = Diagnostics::default();
    d.error(e.message.clone(), Span::new(start, end));
    d.render_styled(name, src, style)
}

/// Renders the verifier's errors for `src` (named `name`), each at the line it is
/// about when that line can be found.
pub fn verifier_errors(
    name: &str,
    src: &str,
    errors: &ir::verifier::VerifierErrors,
    style: Style,
) -> String {
    let mut d = Diagnostics::default();
    for e in &errors.0 {
        // The snippet shows the instruction; the message keeps function and block.
        let place = match e.location.split_once(": ") {
            Some((place, _)) => place,
            None => &e.location,
        };
        let message = format!("invalid IR {place}: {}", e.message);
        match locate(src, &e.location) {
            Some(span) => d.error(message, span),
            None => d.push(Diagnostic::file_error(format!(
                "invalid IR {}: {}",
                e.location, e.message
            ))),
        }
    }
    d.render_styled(name, src, style)
}

/// The span of the header line of function `name` (`func @name(...`) in `src`.
pub fn function_span(src: &str, name: &str) -> Option<Span> {
    locate(src, &format!("in @{name}"))
}

/// The byte offset of 1-based `line` and `column` (in characters), clamped.
fn offset_of(src: &str, line: u32, column: u32) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match src[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return src.len(),
        }
    }
    let text = &src[start..];
    let line_len = text.find('\n').unwrap_or(text.len());
    let col = text[..line_len]
        .char_indices()
        .nth(column.saturating_sub(1) as usize)
        .map_or(line_len, |(i, _)| i);
    start + col
}

/// The span of the text a verifier location names: its instruction, block label or
/// function header (the trimmed line), the first found from the most precise.
fn locate(src: &str, location: &str) -> Option<Span> {
    let rest = location.strip_prefix("in ")?;
    let (func, rest) = match rest.split_once(", ") {
        Some((f, r)) => (f, Some(r)),
        None => (rest, None),
    };
    let (block, inst) = match rest {
        Some(r) => match r.split_once(": ") {
            Some((b, i)) => (Some(b), Some(i)),
            None => (Some(r), None),
        },
        None => (None, None),
    };
    let lines = lines_with_offsets(src);
    let header = format!("func {func}(");
    let f = lines
        .iter()
        .position(|(_, l)| l.trim_start().starts_with(&header))?;
    let body = lines[f..]
        .iter()
        .position(|(_, l)| l.trim() == "}")
        .map_or(lines.len(), |e| f + e);
    let trimmed = |i: usize| {
        let (off, l) = lines[i];
        let lead = l.len() - l.trim_start().len();
        Span::new(off + lead, off + l.trim_end().len())
    };
    let Some(block) = block else {
        return Some(trimmed(f));
    };
    let is_label = |l: &str| {
        let l = l.trim();
        l.strip_prefix(block)
            .is_some_and(|r| r.starts_with(':') || r.starts_with('('))
    };
    let Some(b) = (f..body).find(|&i| is_label(lines[i].1)) else {
        return Some(trimmed(f));
    };
    let block_end = (b + 1..body)
        .find(|&i| {
            let l = lines[i].1.trim();
            l.starts_with("bb") && (l.ends_with(':') || l.contains("):"))
        })
        .unwrap_or(body);
    let found = inst.and_then(|inst| (b + 1..block_end).find(|&i| lines[i].1.trim() == inst));
    Some(trimmed(found.unwrap_or(b)))
}

/// Each line of `src` with the byte offset it starts at.
fn lines_with_offsets(src: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut off = 0;
    for l in src.split('\n') {
        out.push((off, l));
        off += l.len() + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str =
        "func @main() -> i32 {\nbb0:\n  %0 = add 1, 2\n  jump bb1\nbb1:\n  ret %0\n}\n";

    #[test]
    fn verifier_locations_are_found_in_the_text() {
        let at = |loc: &str| locate(SRC, loc).map(|s| &SRC[s.range()]);
        assert_eq!(at("in @main, bb1: ret %0"), Some("ret %0"));
        assert_eq!(at("in @main, bb1: ret %9"), Some("bb1:"));
        assert_eq!(at("in @main, bb0"), Some("bb0:"));
        assert_eq!(at("in @main"), Some("func @main() -> i32 {"));
        assert_eq!(at("in @other, bb0"), None);
        assert_eq!(at("global @g"), None);
    }

    #[test]
    fn line_and_column_become_an_offset() {
        assert_eq!(offset_of(SRC, 3, 3), SRC.find("%0 =").unwrap());
        assert_eq!(offset_of(SRC, 99, 1), SRC.len());
        assert_eq!(offset_of("ab\n", 1, 50), 2);
    }
}
