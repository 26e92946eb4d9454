//! Judging a run against a `.out` file, exactly as SYSY.md describes.
//!
//! The expected file holds the program's stdout, then a newline if stdout is
//! non-empty and does not end in one, then the exit status on its own line.
//! Trailing whitespace at the very end of both sides is ignored (a few `.out`
//! files lack the final newline), and so is trailing whitespace at the end of each
//! line: `functional/68_brainfk` prints `\r\n` (gcc's binary does too) where its
//! `.out` has `\n`, as contest judges compare lines without trailing blanks. On
//! mismatch the error names the first line that differs and shows both lines
//! around the first differing column.

/// The `.out` contents a run with this stdout and exit status should match.
pub fn expected_output(stdout: &[u8], exit_code: i32) -> Vec<u8> {
    let mut out = stdout.to_vec();
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(format!("{exit_code}\n").as_bytes());
    out
}

/// Compares a run (stdout and exit status) with the expected `.out` contents.
pub fn judge(stdout: &[u8], exit_code: i32, expected_out: &[u8]) -> Result<(), String> {
    let actual = expected_output(stdout, exit_code);
    let (a, e) = (trim_end(&actual), trim_end(expected_out));
    let lines = |s: &[u8]| -> Vec<Vec<u8>> {
        s.split(|&b| b == b'\n')
            .map(|l| trim_end(l).to_vec())
            .collect()
    };
    if a == e || lines(a) == lines(e) {
        Ok(())
    } else {
        Err(first_difference(a, e))
    }
}

fn trim_end(s: &[u8]) -> &[u8] {
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &s[..end]
}

/// A short description of the first differing line.
fn first_difference(actual: &[u8], expected: &[u8]) -> String {
    let a: Vec<&[u8]> = actual.split(|&b| b == b'\n').collect();
    let e: Vec<&[u8]> = expected.split(|&b| b == b'\n').collect();
    let n = a.iter().zip(&e).take_while(|(x, y)| x == y).count();
    let line = n + 1;
    let summary = format!("(got {} lines, expected {})", a.len(), e.len());
    match (a.get(n), e.get(n)) {
        (Some(got), Some(want)) => {
            let col = got.iter().zip(*want).take_while(|(x, y)| x == y).count() + 1;
            let last = if n + 1 == e.len() {
                " (the exit-status line)"
            } else {
                ""
            };
            let from = col.saturating_sub(40);
            format!(
                "line {line}{last}, column {col} differs {summary}\n  expected: {}\n  got:      {}",
                show(want, from),
                show(got, from)
            )
        }
        (None, Some(want)) => {
            format!(
                "output ends before line {line} {summary}\n  expected: {}",
                show(want, 0)
            )
        }
        (Some(got), None) => {
            format!(
                "extra output at line {line} {summary}\n  got:      {}",
                show(got, 0)
            )
        }
        (None, None) => "outputs differ".to_string(),
    }
}

/// A line for display from byte `from` on: lossy UTF-8, escaped, cut to 100
/// characters, with `...` where something was cut.
fn show(line: &[u8], from: usize) -> String {
    let from = from.min(line.len());
    let s: String = String::from_utf8_lossy(&line[from..])
        .escape_debug()
        .collect();
    let head = if from > 0 { "..." } else { "" };
    if s.chars().count() > 100 {
        let cut: String = s.chars().take(100).collect();
        format!("{head}\"{cut}\"...")
    } else {
        format!("{head}\"{s}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_stdout_is_just_the_status() {
        assert_eq!(expected_output(b"", 0), b"0\n");
        assert!(judge(b"", 0, b"0\n").is_ok());
        assert!(judge(b"", 0, b"0").is_ok());
        assert!(judge(b"", 3, b"0\n").is_err());
    }

    #[test]
    fn newline_added_when_stdout_lacks_one() {
        assert_eq!(expected_output(b"12", 5), b"12\n5\n");
        assert!(judge(b"12", 5, b"12\n5\n").is_ok());
        // Stdout already ends in a newline: none is added.
        assert_eq!(expected_output(b"12\n", 5), b"12\n5\n");
        assert!(judge(b"12\n", 5, b"12\n5\n").is_ok());
        // A blank line before the status only when stdout ends in two newlines.
        assert!(judge(b"12\n\n", 5, b"12\n\n5\n").is_ok());
        assert!(judge(b"12\n\n", 5, b"12\n5\n").is_err());
    }

    #[test]
    fn lenient_on_trailing_whitespace_only() {
        assert!(judge(b"a b\n", 0, b"a b\n0").is_ok());
        assert!(judge(b"a b\n", 0, b"a b\n0\n\n  \n").is_ok());
        // Trailing blanks and carriage returns at line ends do not count...
        assert!(judge(b"a b \n", 0, b"a b\n0\n").is_ok());
        assert!(judge(b"all.\r\n", 0, b"all.\n0\n").is_ok());
        // ...but leading and inner whitespace does, and so do missing lines.
        assert!(judge(b" a b\n", 0, b"a b\n0\n").is_err());
        assert!(judge(b"a  b\n", 0, b"a b\n0\n").is_err());
        assert!(judge(b"a\n\nb\n", 0, b"a\nb\n0\n").is_err());
    }

    #[test]
    fn crlf_counts_as_lf() {
        assert!(judge(b"a\r\nb\r\n", 0, b"a\nb\n0\n").is_ok());
        assert!(judge(b"a\rb\n", 0, b"ab\n0\n").is_err());
    }

    #[test]
    fn long_lines_show_the_differing_column() {
        let mut got = vec![b'x'; 300];
        let want = got.clone();
        got[250] = b'y';
        let err = judge(&got, 0, &[want.as_slice(), b"\n0\n"].concat()).unwrap_err();
        assert!(err.contains("column 251"), "{err}");
        assert!(err.contains("...\"xxx"), "{err}");
        assert!(err.contains('y'), "{err}");
    }

    #[test]
    fn exit_status_line_is_compared() {
        let err = judge(b"1\n2\n", 255, b"1\n2\n0\n").unwrap_err();
        assert!(err.contains("line 3"), "{err}");
        assert!(err.contains("exit-status"), "{err}");
        assert!(err.contains("\"255\""), "{err}");
    }

    #[test]
    fn reports_first_differing_line() {
        let err = judge(b"1\n2\n3\n", 0, b"1\n4\n3\n0\n").unwrap_err();
        assert!(err.starts_with("line 2, column 1"), "{err}");
        assert!(err.contains("expected: \"4\""), "{err}");
        assert!(err.contains("got:      \"2\""), "{err}");
    }

    #[test]
    fn reports_missing_and_extra_output() {
        let err = judge(b"1\n", 0, b"1\n2\n3\n0\n").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
        let err = judge(b"1\n2\n3\n4\n", 0, b"1\n2\n").unwrap_err();
        assert!(err.contains("line 3"), "{err}");
    }
}
