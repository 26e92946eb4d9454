//! Integration test of the runtime library: tiny C programs compiled with
//! `riscv64-linux-gnu-gcc` against `libsysy.a`, run under qemu and checked.
//! Skipped (passing with a message) when the cross toolchain is missing.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::runtime::unique_temp_dir;
use harness::{Harness, RunOptions, RunResult};

fn harness_or_skip() -> Option<&'static Harness> {
    match Harness::global() {
        Ok(h) => Some(h),
        Err(e) => {
            eprintln!("skipping runtime tests: {e}");
            None
        }
    }
}

/// Compiles `src` (C with `#include "sylib.h"`), runs it with `input` on stdin.
fn run_c(h: &Harness, name: &str, src: &str, input: Option<&str>) -> RunResult {
    let dir = scratch_dir();
    let c = dir.join(format!("{name}.c"));
    fs::write(&c, src).unwrap();
    let exe = dir.join(name);
    let inc = format!("-I{}", h.runtime.include_dir.display());
    h.link_files(&[&c], &["-O1", &inc], &exe).unwrap();
    let stdin: Option<PathBuf> = input.map(|text| {
        let p = dir.join(format!("{name}.in"));
        fs::write(&p, text).unwrap();
        p
    });
    let opts = RunOptions {
        timeout: Some(Duration::from_secs(60)),
        ..RunOptions::default()
    };
    let r = h.run_with(&exe, stdin.as_deref(), &opts).unwrap();
    fs::remove_dir_all(&dir).unwrap();
    r
}

fn scratch_dir() -> PathBuf {
    let base = std::env::temp_dir().join("harness-tests");
    fs::create_dir_all(&base).unwrap();
    unique_temp_dir(&base).unwrap()
}

fn stdout(r: &RunResult) -> String {
    String::from_utf8_lossy(&r.stdout).into_owned()
}

#[test]
fn output_formats() {
    let Some(h) = harness_or_skip() else { return };
    let src = r#"#include "sylib.h"
int main() {
    int a[3] = {1, -2, 3};
    float f[2] = {1.5f, 0.1f};
    putfloat(1.5f); putch(10);
    putint(-42); putch(32); putch(65); putch(10);
    putarray(3, a);
    putarray(0, a);
    putfarray(2, f);
    putf("x=%d y=%f %s%c\n", 7, 2.5f, "ok", 'Z');
    putint(5);
    return 300;
}
"#;
    let r = run_c(h, "fmt", src, None);
    let expected =
        "0x1.8p+0\n-42 A\n3: 1 -2 3\n0:\n2: 0x1.8p+0 0x1.99999ap-4\nx=7 y=2.500000 okZ\n5";
    assert_eq!(stdout(&r), expected);
    assert_eq!(r.exit_code, 300 & 0xff);
    // stdout lacks a final newline: the judge adds one before the status.
    r.judge(format!("{expected}\n44\n").as_bytes()).unwrap();
}

#[test]
fn input_functions_read_decimal_and_hex() {
    let Some(h) = harness_or_skip() else { return };
    let src = r#"#include "sylib.h"
int main() {
    int a[8]; float f[8];
    int x = getint();
    float p = getfloat(), q = getfloat(), r = getfloat();
    int c1 = getch(), c2 = getch();
    int n = getarray(a);
    int m = getfarray(f);
    putint(x); putch(10);
    putfloat(p); putch(32); putfloat(q); putch(32); putfloat(r); putch(10);
    putint(c1); putch(32); putint(c2); putch(10);
    putarray(n, a);
    putfarray(m, f);
    putint(getint()); putch(10);
    return 0;
}
"#;
    let input = "  -17\n0x1.8p+1 2.5e0 .75\nQ\n4 10 20 -30 40\n2 0x.Ap-3 1e1\n";
    let r = run_c(h, "inp", src, Some(input));
    assert_eq!(
        stdout(&r),
        "-17\n0x1.8p+1 0x1.4p+1 0x1.8p-1\n10 81\n4: 10 20 -30 40\n2: 0x1.4p-4 0x1.4p+3\n0\n"
    );
    assert_eq!(r.exit_code, 0);
}

#[test]
fn timer_reports_pairs_and_total_on_stderr() {
    let Some(h) = harness_or_skip() else { return };
    let src = r#"#include "sylib.h"
int main() {
    _sysy_starttime(10);
    putint(1);
    _sysy_stoptime(12);
    _sysy_starttime(20);
    _sysy_stoptime(2345);
    putch(10);
    return 0;
}
"#;
    let r = run_c(h, "timer", src, None);
    let err = String::from_utf8_lossy(&r.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(lines[0].starts_with("Timer@0010-0012: 0H-0M-0S-"), "{err}");
    assert!(lines[1].starts_with("Timer@0020-2345: 0H-0M-0S-"), "{err}");
    assert!(lines[2].starts_with("TOTAL: 0H-0M-0S-"), "{err}");
    assert!(lines[2].ends_with("us"), "{err}");
    assert!(r.timer_total().is_some());
    assert_eq!(stdout(&r), "1\n");
}

#[test]
fn big_stack_and_deep_recursion() {
    let Some(h) = harness_or_skip() else { return };
    let src = r#"#include "sylib.h"
int depth(int n) { int pad[16]; pad[n % 16] = n; if (n == 0) return 0; return depth(n - 1) + 1 + pad[n % 16] - n; }
int main() {
    int big[8 * 1024 * 1024]; /* 32 MiB of locals */
    for (int i = 0; i < 8 * 1024 * 1024; i += 4096) big[i] = i;
    putint(depth(500000) + big[4096]); putch(10);
    return 0;
}
"#;
    let r = run_c(h, "deep", src, None);
    assert_eq!(r.signal, None, "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(stdout(&r), "504096\n");
}

#[test]
fn timeout_kills_the_program() {
    let Some(h) = harness_or_skip() else { return };
    let dir = scratch_dir();
    let c = dir.join("spin.c");
    fs::write(&c, "int main() { volatile int x = 0; for (;;) x++; }\n").unwrap();
    let exe = dir.join("spin");
    h.link_files(&[Path::new(&c)], &[], &exe).unwrap();
    let opts = RunOptions {
        timeout: Some(Duration::from_millis(500)),
        ..RunOptions::default()
    };
    let r = h.run_with(&exe, None, &opts).unwrap();
    fs::remove_dir_all(&dir).unwrap();
    assert!(r.timed_out);
    assert!(r.judge(b"0\n").unwrap_err().contains("timed out"));
}

/// The address of each of `symbols` in `exe`, read with the cross `nm`.
fn symbol_addresses(h: &Harness, exe: &Path, symbols: &[&str]) -> Vec<u64> {
    let cc = h.toolchain.cc.to_string_lossy().into_owned();
    let nm = cc
        .strip_suffix("gcc")
        .map_or("nm".to_string(), |p| format!("{p}nm"));
    let out = std::process::Command::new(nm).arg(exe).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    symbols
        .iter()
        .map(|s| {
            let line = table
                .lines()
                .find(|l| l.split_whitespace().nth(2) == Some(s))
                .unwrap_or_else(|| panic!("{s} not in {}", exe.display()));
            u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).unwrap()
        })
        .collect()
}

#[test]
fn library_code_sits_at_the_same_page_offsets_whatever_the_program_size() {
    let Some(h) = harness_or_skip() else { return };
    let dir = scratch_dir();
    let mut layouts = Vec::new();
    for (name, statements) in [("small", 1), ("large", 300)] {
        let body = "x = x * 3 + 1;\n".repeat(statements);
        let src = format!(
            "#include \"sylib.h\"\nint main() {{ volatile int x = getint();\n{body}putint(x); return 0; }}\n"
        );
        let c = dir.join(format!("{name}.c"));
        fs::write(&c, src).unwrap();
        let exe = dir.join(name);
        let inc = format!("-I{}", h.runtime.include_dir.display());
        h.link_files(&[&c], &["-O1", &inc], &exe).unwrap();
        let at = symbol_addresses(h, &exe, &["main", "getint", "memset"]);
        layouts.push(at);
    }
    fs::remove_dir_all(&dir).unwrap();
    let (small, large) = (&layouts[0], &layouts[1]);
    assert!(
        large[1] - large[0] > small[1] - small[0] + 1000,
        "{layouts:x?}"
    );
    // The runtime's code starts at the same offset in a page, and the C library's
    // `memset` lies the same distance after it.
    assert_eq!(small[1] % 4096, large[1] % 4096, "{layouts:x?}");
    assert_eq!(small[2] - small[1], large[2] - large[1], "{layouts:x?}");
}
