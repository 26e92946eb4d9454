//! Helpers shared by the integration tests of `opt`.

use std::path::{Path, PathBuf};

/// The SysY programs (`*.sy`) of `dir`, sorted; none when it does not exist.
pub fn sources(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sy"))
        .collect();
    v.sort();
    v
}
