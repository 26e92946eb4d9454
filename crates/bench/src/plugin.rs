//! The instruction-counting QEMU plugin: building it with the host compiler and
//! reading the counts it writes.
//!
//! The C source (`plugin/insn_count.c`) is embedded; the shared object is cached
//! as `insn_count-<hash>.so` next to the runtime archive, built under a temporary
//! name and renamed into place so concurrent runs never race.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use harness::runtime::{fnv1a, unique_temp_dir};
use serde::{Deserialize, Serialize};

/// The plugin's C source.
pub const PLUGIN_C: &str = include_str!("../plugin/insn_count.c");
const HOST_CFLAGS: &[&str] = &["-shared", "-fPIC", "-O2", "-fvisibility=hidden"];

/// Builds (or reuses) the plugin in `cache_dir`, with the host `gcc` (or `$CC`).
pub fn build_plugin(cache_dir: &Path) -> Result<PathBuf, String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "gcc".to_string());
    let key = fnv1a(&[PLUGIN_C, &HOST_CFLAGS.join(" "), &cc]);
    let so = cache_dir.join(format!("insn_count-{key:016x}.so"));
    if so.is_file() {
        return Ok(so);
    }
    fs::create_dir_all(cache_dir).map_err(|e| format!("{}: {e}", cache_dir.display()))?;
    let tmp = unique_temp_dir(cache_dir).map_err(|e| e.to_string())?;
    let src = tmp.join("insn_count.c");
    let out = tmp.join("insn_count.so");
    let result = fs::write(&src, PLUGIN_C)
        .map_err(|e| e.to_string())
        .and_then(|()| {
            Command::new(&cc)
                .args(HOST_CFLAGS)
                .arg(&src)
                .arg("-o")
                .arg(&out)
                .output()
                .map_err(|e| format!("cannot run host compiler `{cc}`: {e}"))
        })
        .and_then(|o| {
            if o.status.success() {
                fs::rename(&out, &so).map_err(|e| e.to_string())
            } else {
                Err(format!(
                    "building the qemu plugin failed:\n{}",
                    String::from_utf8_lossy(&o.stderr)
                ))
            }
        });
    let _ = fs::remove_dir_all(&tmp);
    result.map(|()| so)
}

/// The qemu arguments loading the plugin: `-plugin SO,out=FILE[,start=A,stop=B]`.
pub fn qemu_args(so: &Path, out: &Path, markers: Option<(u64, u64)>) -> Vec<OsString> {
    let mut spec = OsString::from(so);
    spec.push(",out=");
    spec.push(out);
    if let Some((start, stop)) = markers {
        spec.push(format!(",start={start:#x},stop={stop:#x}"));
    }
    vec![OsString::from("-plugin"), spec]
}

/// Dynamic counts of one run (the timed region, or the whole run without one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Instructions executed.
    pub insns: u64,
    /// Weighted cycle estimate (cost model in the plugin and README).
    pub cycles: u64,
    /// Dependence-aware cycle estimate for the SiFive U74 (dual-issue in-order
    /// core; model in the plugin and README). Absent (0) in older reports.
    #[serde(default)]
    pub u74: u64,
    /// Integer and float loads.
    pub loads: u64,
    /// Integer and float stores.
    pub stores: u64,
    /// Integer multiplies.
    pub mul: u64,
    /// Integer divides and remainders.
    pub div: u64,
    /// Float operations other than divide / square root.
    pub fp: u64,
    /// Float divides and square roots.
    pub fdiv: u64,
    /// Conditional branches.
    pub branches: u64,
    /// Jumps, calls and returns.
    pub jumps: u64,
    /// Integer ALU instructions.
    pub alu: u64,
    /// System, fence and other instructions.
    pub other: u64,
    /// Completed starttime/stoptime pairs (0: the counts cover the whole run).
    pub pairs: u64,
}

impl Counts {
    /// Parses the plugin's `key value` report, taking the `timed.*` counters.
    pub fn parse(text: &str) -> Result<Counts, String> {
        let mut c = Counts::default();
        let mut seen = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (key, value) = line
                .split_once(' ')
                .ok_or_else(|| format!("bad plugin output line `{line}`"))?;
            let v: u64 = value
                .trim()
                .parse()
                .map_err(|_| format!("bad number in plugin output line `{line}`"))?;
            let slot = match key {
                "pairs" => &mut c.pairs,
                "timed.insns" => &mut c.insns,
                "timed.cycles" => &mut c.cycles,
                "timed.u74" => &mut c.u74,
                "timed.loads" => &mut c.loads,
                "timed.stores" => &mut c.stores,
                "timed.mul" => &mut c.mul,
                "timed.div" => &mut c.div,
                "timed.fp" => &mut c.fp,
                "timed.fdiv" => &mut c.fdiv,
                "timed.branches" => &mut c.branches,
                "timed.jumps" => &mut c.jumps,
                "timed.alu" => &mut c.alu,
                "timed.other" => &mut c.other,
                _ => continue,
            };
            *slot = v;
            seen += 1;
        }
        if seen < 14 {
            return Err(format!("incomplete plugin output ({seen} of 14 counters)"));
        }
        Ok(c)
    }

    /// Reads and parses a plugin output file.
    pub fn read(path: &Path) -> Result<Counts, String> {
        let text = fs::read_to_string(path)
            .map_err(|e| format!("no plugin output {}: {e}", path.display()))?;
        Counts::parse(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_timed_counters() {
        let mut text = String::from("pairs 2\n");
        for (i, k) in [
            "alu", "loads", "stores", "mul", "div", "fp", "fdiv", "branches", "jumps", "other",
            "insns", "cycles", "u74",
        ]
        .iter()
        .enumerate()
        {
            text.push_str(&format!("timed.{k} {}\ntotal.{k} 999\n", i + 1));
        }
        let c = Counts::parse(&text).unwrap();
        assert_eq!(c.pairs, 2);
        assert_eq!(c.alu, 1);
        assert_eq!(c.insns, 11);
        assert_eq!(c.cycles, 12);
        assert_eq!(c.u74, 13);
        assert!(Counts::parse("pairs 1\n").is_err());
        assert!(Counts::parse("timed.insns x\n").is_err());
    }

    #[test]
    fn plugin_args_use_name_value_syntax() {
        let a = qemu_args(Path::new("/p.so"), Path::new("/o.txt"), Some((0x10, 0x20)));
        assert_eq!(a[0], "-plugin");
        assert_eq!(a[1], "/p.so,out=/o.txt,start=0x10,stop=0x20");
    }
}
