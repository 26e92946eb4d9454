//! Filetests (Cranelift's, in small): each file of a directory holds a header line
//! `; run: NAME[, NAME...]` (the passes or stages to run), the input, a line
//! `; output:`, and the expected text. A test runner gives [`main`] the directory and
//! a function computing the output from a file's input; each file is one test, and a
//! differing output fails with the lines from the first difference on.
//!
//! With `BLESS=1` in the environment, every output section is rewritten with what the
//! run produces now (a missing one is added), and the tests pass.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

/// The line that separates the input from the expected output.
pub const OUTPUT_MARK: &str = "; output:";

/// The names of the header line `; run: a, b` (an error without one).
pub fn run_names(input: &str) -> Result<Vec<String>, String> {
    let line = input
        .lines()
        .find_map(|l| l.trim().strip_prefix("; run:"))
        .ok_or("no `; run: NAME` line")?;
    let names: Vec<String> = line
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        return Err("`; run:` names nothing".into());
    }
    Ok(names)
}

/// The input part and the expected output (`None` without an output section).
pub fn split(text: &str) -> (&str, Option<&str>) {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end() == OUTPUT_MARK {
            return (&text[..at], Some(&text[at + line.len()..]));
        }
        at += line.len();
    }
    (text, None)
}

/// Checks one file: `Ok` when `run` gives its output section (or, blessing, after
/// rewriting it).
pub fn check(
    path: &Path,
    bless: bool,
    run: fn(&Path, &str) -> Result<String, String>,
) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (input, expected) = split(&text);
    let actual = run(path, input)?;
    if expected.map(str::trim) == Some(actual.trim()) {
        return Ok(());
    }
    if bless {
        let new = format!(
            "{}\n\n{OUTPUT_MARK}\n{}\n",
            input.trim_end(),
            actual.trim_end()
        );
        return std::fs::write(path, new).map_err(|e| e.to_string());
    }
    Err(match expected {
        None => format!("no `{OUTPUT_MARK}` section (BLESS=1 adds it); the run gives:\n{actual}"),
        Some(e) => format!(
            "output differs (BLESS=1 to accept)\n{}",
            diff(e.trim(), actual.trim())
        ),
    })
}

/// The lines from the first difference on, expected (`-`) then actual (`+`).
pub fn diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let same = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let mut out = format!("first difference at output line {}:\n", same + 1);
    for l in &e[same..] {
        out += &format!("-{l}\n");
    }
    for l in &a[same..] {
        out += &format!("+{l}\n");
    }
    out
}

/// Runs every file of `dir` whose name ends in one of `exts` (without the dot) as a
/// test named by the file, under libtest-mimic's command line.
pub fn main(dir: &Path, exts: &[&str], run: fn(&Path, &str) -> Result<String, String>) -> ! {
    let args = Arguments::from_args();
    let bless = std::env::var_os("BLESS").is_some_and(|v| !v.is_empty() && v != "0");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| exts.iter().any(|x| e == *x)));
    files.sort();
    let trials = files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            Trial::test(name, move || check(&p, bless, run).map_err(Failed::from))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_at_the_output_mark() {
        assert_eq!(
            split("; run: x\nin\n; output:\nout\n"),
            ("; run: x\nin\n", Some("out\n"))
        );
        assert_eq!(split("; run: x\nin\n"), ("; run: x\nin\n", None));
        assert_eq!(run_names("; c\n; run: a, b\n").unwrap(), ["a", "b"]);
        assert!(run_names("; run:\n").is_err());
    }

    #[test]
    fn a_wrong_expectation_fails_and_bless_rewrites_it() {
        let dir = std::env::temp_dir().join(format!("filetest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.txt");
        std::fs::write(&path, "; run: upper\nabc\n\n; output:\nABD\n").unwrap();
        fn upper(_: &Path, input: &str) -> Result<String, String> {
            Ok(input.lines().nth(1).unwrap_or("").to_uppercase())
        }
        let e = check(&path, false, upper).unwrap_err();
        assert!(e.contains("-ABD\n+ABC"), "{e}");
        check(&path, true, upper).unwrap();
        let blessed = std::fs::read_to_string(&path).unwrap();
        assert_eq!(blessed, "; run: upper\nabc\n\n; output:\nABC\n");
        check(&path, false, upper).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
