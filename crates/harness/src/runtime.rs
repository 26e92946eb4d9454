//! Building the SysY runtime library (`runtime/sylib.c`) for riscv64.
//!
//! The C source is embedded at compile time, so the harness works from any
//! directory. The archive is cached as `libsysy-<hash>.a` (the hash covers the
//! source and the flags) in a cache directory; it is built in a private temporary
//! directory and renamed into place, so concurrent test processes never see a
//! half-written file and never race.

use std::env;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::tools::Toolchain;

/// The runtime's C source.
pub const SYLIB_C: &str = include_str!("../../../runtime/sylib.c");
/// The runtime's header.
pub const SYLIB_H: &str = include_str!("../../../runtime/sylib.h");
/// Put before the runtime's source when it is compiled: its code starts on a page
/// boundary, and so the C library linked after it sits at the same offsets in its
/// pages wherever the program's own code ends. QEMU ends a translation block at a
/// page boundary and the counting plugin charges each block its own issue cycles,
/// so without this the cycle estimate of a library routine (a `getint` loop,
/// `memset`) moved by a few cycles per call whenever the program's code grew or
/// shrank by a few bytes.
pub const PAGE_ALIGNED_START: &str = "__asm__(\".text\\n.p2align 12\");\n";
/// Flags used to compile the runtime.
pub const CFLAGS: &[&str] = &["-O2", "-std=c11", "-march=rv64gc", "-mabi=lp64d"];

/// A built runtime: the archive to link and the header for C test programs.
#[derive(Debug, Clone)]
pub struct Runtime {
    /// Path of `libsysy-<hash>.a`.
    pub lib: PathBuf,
    /// Directory containing `sylib.h`.
    pub include_dir: PathBuf,
}

/// The default cache directory: `$SYSY_CACHE_DIR`, else `sysy-cache` inside the
/// cargo target directory this binary lives in, else one under the temp dir.
pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = env::var_os("SYSY_CACHE_DIR") {
        return PathBuf::from(d);
    }
    if let Ok(exe) = env::current_exe() {
        // Cargo marks its target directory with CACHEDIR.TAG.
        if let Some(target) = exe.ancestors().find(|d| d.join("CACHEDIR.TAG").is_file()) {
            return target.join("sysy-cache");
        }
    }
    env::temp_dir().join("sysy-cache")
}

/// Builds (or reuses) the runtime in [`default_cache_dir`].
pub fn runtime_lib(tc: &Toolchain) -> io::Result<Runtime> {
    Runtime::build(tc, &default_cache_dir())
}

impl Runtime {
    /// Builds the runtime into `cache_dir` unless an up-to-date copy is there.
    pub fn build(tc: &Toolchain, cache_dir: &Path) -> io::Result<Runtime> {
        let key = format!(
            "{:016x}",
            fnv1a(&[PAGE_ALIGNED_START, SYLIB_C, SYLIB_H, &CFLAGS.join(" ")])
        );
        let lib = cache_dir.join(format!("libsysy-{key}.a"));
        let include_dir = cache_dir.join(format!("include-{key}"));
        if lib.is_file() && include_dir.join("sylib.h").is_file() {
            return Ok(Runtime { lib, include_dir });
        }
        fs::create_dir_all(cache_dir)?;
        let tmp = unique_temp_dir(cache_dir)?;
        let result = build_in(tc, &tmp, &lib, &include_dir);
        let _ = fs::remove_dir_all(&tmp);
        result?;
        Ok(Runtime { lib, include_dir })
    }
}

fn build_in(tc: &Toolchain, tmp: &Path, lib: &Path, include_dir: &Path) -> io::Result<()> {
    let src = tmp.join("sylib.c");
    fs::write(&src, format!("{PAGE_ALIGNED_START}{SYLIB_C}"))?;
    fs::write(tmp.join("sylib.h"), SYLIB_H)?;
    let obj = tmp.join("sylib.o");
    let out = Command::new(&tc.cc)
        .args(CFLAGS)
        .arg("-c")
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .output()?;
    check(&out, "compiling runtime/sylib.c")?;
    let archive = tmp.join("libsysy.a");
    let out = Command::new(archiver(tc))
        .arg("rcs")
        .arg(&archive)
        .arg(&obj)
        .output()?;
    check(&out, "archiving libsysy.a")?;
    // Header directory first, archive last: the archive's presence marks completion.
    let inc_tmp = tmp.join("include");
    fs::create_dir(&inc_tmp)?;
    fs::write(inc_tmp.join("sylib.h"), SYLIB_H)?;
    if let Err(e) = fs::rename(&inc_tmp, include_dir) {
        // Another process may have won the race; that copy is identical.
        if !include_dir.join("sylib.h").is_file() {
            return Err(e);
        }
    }
    fs::rename(&archive, lib)
}

/// `riscv64-linux-gnu-ar` next to the compiler, else the host `ar`.
fn archiver(tc: &Toolchain) -> PathBuf {
    let name = tc
        .cc
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix("gcc"))
        .map(|prefix| format!("{prefix}ar"));
    if let (Some(dir), Some(name)) = (tc.cc.parent(), name) {
        let p = dir.join(name);
        if p.is_file() {
            return p;
        }
    }
    PathBuf::from("ar")
}

fn check(out: &std::process::Output, what: &str) -> io::Result<()> {
    if out.status.success() {
        return Ok(());
    }
    Err(io::Error::other(format!(
        "{what} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    )))
}

/// A fresh directory inside `parent`, unique to this process and moment.
pub fn unique_temp_dir(parent: &Path) -> io::Result<PathBuf> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    for i in 0..1000 {
        // Fixed-width fields: the name has the same length in every run, so the
        // paths of the programs run from it do too. A guest's path lies on its
        // stack (argv[0], AT_EXECFN), and a path one digit longer moves the stack
        // and changes the C library's alignment-dependent loops: instruction counts
        // of a whole run would differ between runs whose process ids differ in
        // their number of digits.
        let dir = parent.join(format!(
            ".tmp-{:010}-{nanos:020}-{i:03}",
            std::process::id()
        ));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("cannot create a temporary directory"))
}

/// 64-bit FNV-1a over several strings (with separators), for cache keys.
pub fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_stable_and_separates_parts() {
        assert_eq!(fnv1a(&["ab"]), fnv1a(&["ab"]));
        assert_ne!(fnv1a(&["ab", "c"]), fnv1a(&["a", "bc"]));
    }

    #[test]
    fn embedded_runtime_has_the_api() {
        for f in ["getint", "getfarray", "putfarray", "putf", "_sysy_stoptime"] {
            assert!(SYLIB_C.contains(f) && SYLIB_H.contains(f), "{f}");
        }
    }
}
