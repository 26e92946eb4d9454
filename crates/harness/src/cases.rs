//! Test-case discovery: `NAME.sy` with optional `NAME.in` and required `NAME.out`,
//! and locating the official suite (`<repo>/../shared/sysy2022`, or `$SYSY_SUITE`).

use std::env;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One test case of a suite directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// File stem, e.g. `00_bitset1`.
    pub name: String,
    /// The SysY source.
    pub sy: PathBuf,
    /// Standard input, when the case has a `.in` file.
    pub input: Option<PathBuf>,
    /// The expected output (stdout plus exit status).
    pub expected_out: PathBuf,
}

impl Case {
    /// Reads the expected output file.
    pub fn expected(&self) -> io::Result<Vec<u8>> {
        fs::read(&self.expected_out)
    }
}

/// The cases in `dir` (not recursive), sorted by name. A `.sy` without a `.out`
/// is not a case; an unreadable directory has no cases.
pub fn cases(dir: &Path) -> Vec<Case> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<Case> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sy"))
        .filter_map(|sy| {
            let name = sy.file_stem()?.to_str()?.to_string();
            let expected_out = sy.with_extension("out");
            if !expected_out.is_file() {
                return None;
            }
            let input = Some(sy.with_extension("in")).filter(|p| p.is_file());
            Some(Case {
                name,
                sy,
                input,
                expected_out,
            })
        })
        .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// The official suite root: `$SYSY_SUITE`, else the first `shared/sysy2022` found
/// beside an ancestor of this crate or of the current directory.
pub fn suite_root() -> Option<PathBuf> {
    if let Some(p) = env::var_os("SYSY_SUITE") {
        let p = PathBuf::from(p);
        return p.is_dir().then_some(p);
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let cwd = env::current_dir().ok();
    let starts = std::iter::once(manifest).chain(cwd);
    for start in starts {
        for dir in start.ancestors() {
            let candidate = dir.join("shared").join("sysy2022");
            if candidate.is_dir() {
                return Some(candidate);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovers_sorted_cases_with_optional_input() {
        let dir = crate::runtime::unique_temp_dir(&env::temp_dir()).unwrap();
        for f in [
            "b.sy",
            "b.out",
            "b.in",
            "a.sy",
            "a.out",
            "orphan.sy",
            "x.txt",
        ] {
            fs::write(dir.join(f), "").unwrap();
        }
        let found = cases(&dir);
        let names: Vec<&str> = found.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(found[0].input, None);
        assert_eq!(found[1].input, Some(dir.join("b.in")));
        assert_eq!(found[1].expected_out, dir.join("b.out"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_dir_has_no_cases() {
        assert!(cases(Path::new("/definitely/not/here")).is_empty());
    }
}
