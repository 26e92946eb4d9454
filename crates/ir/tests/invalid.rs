//! Invalid IR in `tests/invalid/*.ir`: each file states its expected errors in
//! `; expect: TEXT` comment lines. A file that fails to parse must report exactly one
//! of them (as `line:col: message`); a file that parses must fail verification with
//! every expected text contained in some reported error. Nothing may panic.

use std::fs;
use std::path::{Path, PathBuf};

fn files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("tests/invalid exists")
        .map(|e| e.expect("readable dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
        .collect();
    files.sort();
    files
}

fn expectations(src: &str) -> Vec<String> {
    src.lines()
        .filter_map(|l| l.trim().strip_prefix("; expect: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn there_are_enough_invalid_files() {
    assert!(files().len() >= 12);
}

#[test]
fn invalid_files_report_the_expected_errors() {
    let mut failures = Vec::new();
    for path in files() {
        let name = path.display();
        let src = fs::read_to_string(&path).expect("readable test file");
        let expected = expectations(&src);
        assert!(!expected.is_empty(), "{name}: no `; expect:` line");
        match ir::parse_module(&src) {
            Err(e) => {
                if expected.len() != 1 || e.to_string() != expected[0] {
                    failures.push(format!("{name}: parse error `{e}`, expected {expected:?}"));
                }
            }
            Ok(m) => match ir::verify_module(&m) {
                Ok(()) => failures.push(format!("{name}: verified, expected {expected:?}")),
                Err(errs) => {
                    let lines: Vec<String> = errs.0.iter().map(|e| e.to_string()).collect();
                    for exp in &expected {
                        if !lines.iter().any(|l| l.contains(exp.as_str())) {
                            failures.push(format!(
                                "{name}: missing error `{exp}`; got:\n{}",
                                lines.join("\n")
                            ));
                        }
                    }
                    // Display lists every error, one per line.
                    assert_eq!(errs.to_string(), lines.join("\n"));
                }
            },
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
