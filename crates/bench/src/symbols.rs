//! Reading the timer entry points (`_sysy_starttime`, `_sysy_stoptime`) from an
//! executable with `riscv64-linux-gnu-nm`, to pass them to the plugin.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `riscv64-linux-gnu-nm` next to the cross compiler, else the host `nm`.
pub fn nm_for(cc: &Path) -> PathBuf {
    let sibling = cc
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix("gcc"))
        .and_then(|prefix| Some(cc.parent()?.join(format!("{prefix}nm"))));
    match sibling {
        Some(p) if p.is_file() => p,
        _ => PathBuf::from("nm"),
    }
}

/// The addresses of `_sysy_starttime` and `_sysy_stoptime` in `exe`, when both
/// are defined.
pub fn timer_markers(nm: &Path, exe: &Path) -> Result<Option<(u64, u64)>, String> {
    let out = Command::new(nm)
        .arg(exe)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", nm.display()))?;
    if !out.status.success() {
        return Err(format!(
            "nm failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(find(&text, "_sysy_starttime").zip(find(&text, "_sysy_stoptime")))
}

/// Finds a text symbol in `nm` output (`ADDR T NAME`).
fn find(nm_output: &str, name: &str) -> Option<u64> {
    nm_output.lines().find_map(|line| {
        let mut parts = line.split_whitespace();
        let (addr, kind, sym) = (parts.next()?, parts.next()?, parts.next()?);
        (sym == name && kind.eq_ignore_ascii_case("t"))
            .then(|| u64::from_str_radix(addr, 16).ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_text_symbols_only() {
        let out = "0000000000010a3a T _sysy_starttime\n\
                   0000000000085408 b _sysy_stoptime_data\n\
                   0000000000010a64 T _sysy_stoptime\n\
                                    U undefined_thing\n";
        assert_eq!(find(out, "_sysy_starttime"), Some(0x10a3a));
        assert_eq!(find(out, "_sysy_stoptime"), Some(0x10a64));
        assert_eq!(find(out, "undefined_thing"), None);
    }
}
