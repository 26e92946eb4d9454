//! Helpers for pass tests: run passes over textual IR, compare the printed result,
//! and compare program behaviour in the interpreter before and after.

use crate::pipeline::{run_passes, PassOptions};

/// Parses `src`, runs `passes` with verification after each, and prints the result.
pub fn run(src: &str, passes: &[&str]) -> String {
    let mut m = ir::parse_module(src).expect("test IR parses");
    ir::verify_module(&m).expect("test IR is valid");
    let mut opts = PassOptions {
        verify_each: true,
        ..Default::default()
    };
    run_passes(&mut m, passes, &mut opts).unwrap_or_else(|e| panic!("{e}"));
    ir::print_module(&m)
}

/// Asserts that running `passes` over `src` prints exactly `expected` (both trimmed).
#[track_caller]
pub fn check(passes: &[&str], src: &str, expected: &str) {
    let out = run(src, passes);
    assert_eq!(out.trim(), expected.trim(), "\n--- got ---\n{out}");
}

/// Runs a module's `main` in the interpreter: (stdout, exit code).
pub fn exec(m: &ir::Module, stdin: &str) -> (String, i32) {
    let opts = interp::RunOptions {
        max_steps: Some(50_000_000),
        wall_clock_timers: false,
        ..Default::default()
    };
    let out = interp::run_module(m, stdin.as_bytes(), &opts).unwrap_or_else(|e| panic!("{e}"));
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.exit_code,
    )
}

/// Runs a module's `main` in the interpreter with a budget of `max_steps`
/// instructions: its stdout when it finishes within them.
pub fn exec_within(m: &ir::Module, stdin: &str, max_steps: u64) -> Option<String> {
    let opts = interp::RunOptions {
        max_steps: Some(max_steps),
        wall_clock_timers: false,
        ..Default::default()
    };
    let out = interp::run_module(m, stdin.as_bytes(), &opts).ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Marsaglia's xorshift64: deterministic pseudo-random numbers for randomised
/// pass tests (no seed from the environment, so a failure reproduces).
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Asserts that `src` behaves the same (output and exit code) before and after
/// `passes`, and returns the optimised module's text.
#[track_caller]
pub fn same_behaviour(src: &str, passes: &[&str], stdin: &str) -> String {
    let before = ir::parse_module(src).expect("test IR parses");
    let expected = exec(&before, stdin);
    let out = run(src, passes);
    let after = ir::parse_module(&out).expect("printed IR parses");
    assert_eq!(exec(&after, stdin), expected, "\n--- optimised ---\n{out}");
    out
}

#[test]
fn exec_runs_the_interpreter() {
    let m = ir::parse_module(
        "declare @putint(i32) -> void\ndeclare @getint() -> i32\n\nfunc @main() -> i32 {\nbb0:\n  %0 = call @getint()\n  %1 = mul %0, 3\n  call @putint(%1)\n  ret 7\n}\n",
    )
    .unwrap();
    assert_eq!(exec(&m, "14"), ("42".to_string(), 7));
}
