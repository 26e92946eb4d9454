//! Steps shared by the tests that compile a program with the `sysyc` binary and
//! run it under qemu.

use std::path::Path;
use std::process::Command;

/// Compiles `src` to the assembly file `asm` with `sysyc OPTS -S`, panicking with
/// the compiler's message (under `label`) when it fails.
pub fn compile(sysyc: &str, opts: &[&str], src: &Path, asm: &Path, label: &str) {
    let out = Command::new(sysyc)
        .args(opts)
        .args(["-S", "-o"])
        .arg(asm)
        .arg(src)
        .output()
        .expect("run sysyc");
    assert!(
        out.status.success(),
        "{label}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Links `asm`, runs it under qemu with `input` as its standard input and judges
/// its output and exit status against `expected`, panicking (under `label`) on
/// any difference.
pub fn run_judged(
    h: &harness::Harness,
    asm: &Path,
    input: Option<&Path>,
    opts: &harness::RunOptions,
    expected: &[u8],
    label: &str,
) {
    let exe = asm.with_extension("exe");
    h.link(asm, &exe).unwrap_or_else(|e| panic!("{label}: {e}"));
    let run = h
        .run_with(&exe, input, opts)
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    if let Err(e) = run.judge(expected) {
        panic!("{label}: {e}\nassembly: {}", asm.display());
    }
}
