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

/// `@name(n)`: fib by two self-calls (a tree recursion), whose base case
/// (`n < 2`) runs the instructions `base` (each line indented, ending in a
/// newline) before it returns `n`; the tests of the interprocedural passes and
/// of purity share it.
pub fn fib_named(name: &str, base: &str) -> String {
    format!(
        r#"
func @{name}(i32) -> i32 {{
bb0(%0: i32):
  %1 = slt %0, 2
  br %1, bb1, bb2
bb1:
{base}  ret %0
bb2:
  %2 = sub %0, 1
  %3 = call @{name}(%2)
  %4 = sub %0, 2
  %5 = call @{name}(%4)
  %6 = add %3, %5
  ret %6
}}
"#
    )
}

/// `@fib(n)`, [`fib_named`] without side effects.
pub fn fib() -> String {
    fib_named("fib", "")
}

/// `@fact(n)`, `n!` by one self-call (a linear recursion without side effects).
pub const FACT: &str = r#"func @fact(i32) -> i32 {
bb0(%0: i32):
  %1 = sle %0, 1
  br %1, bb1, bb2
bb1:
  ret 1
bb2:
  %2 = sub %0, 1
  %3 = call @fact(%2)
  %4 = mul %0, %3
  ret %4
}
"#;

/// A module of [`fib`] and a `main` that prints `fib(n)` for each `n` of `args`.
pub fn fib_module(args: &[i32]) -> String {
    let mut src = format!(
        "declare @putint(i32) -> void\n{}\nfunc @main() -> i32 {{\nbb0:\n",
        fib()
    );
    for (k, n) in args.iter().enumerate() {
        src += &format!("  %{k} = call @fib({n})\n  call @putint(%{k})\n");
    }
    src + "  ret 0\n}\n"
}

/// `even(n)` and `odd(n)` calling each other (mutual recursion), `odd(0)` running
/// the instructions `odd_base` (each line indented, ending in a newline) before
/// it returns 0.
pub fn even_odd(odd_base: &str) -> String {
    format!(
        r#"
func @even(i32) -> i32 {{
bb0(%0: i32):
  %1 = eq %0, 0
  br %1, bb1, bb2
bb1:
  ret 1
bb2:
  %2 = sub %0, 1
  %3 = call @odd(%2)
  ret %3
}}

func @odd(i32) -> i32 {{
bb0(%0: i32):
  %1 = eq %0, 0
  br %1, bb1, bb2
bb1:
{odd_base}  ret 0
bb2:
  %2 = sub %0, 1
  %3 = call @even(%2)
  ret %3
}}
"#
    )
}

/// `s += i` for `i` from 0 while `i + 1 < n` (the counter tested after its
/// step), then `s` printed: a loop whose result is used after it.
pub fn sum_below(n: i32) -> String {
    format!(
        r#"
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = add %1, %0
  %3 = add %0, 1
  %4 = slt %3, {n}
  br %4, bb1(%3, %2), bb2
bb2:
  call @putint(%2)
  ret 0
}}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixtures_compute_what_they_say() {
        let m = ir::parse_module(&fib_module(&[10, 1, 0])).unwrap();
        assert_eq!(exec(&m, ""), ("5510".to_string(), 0));
        // odd(0) writes @g: even(3) -> odd(2) -> even(1) -> odd(0) returns 0.
        let src = format!(
            "global @g: i32 = 0\n{}{FACT}{}",
            even_odd("  store 7, @g\n"),
            "func @main() -> i32 {\nbb0:\n  %0 = call @even(3)\n  %1 = load i32, @g\n  %2 = call @fact(5)\n  %3 = add %0, %1\n  %4 = add %3, %2\n  ret %4\n}\n"
        );
        let m = ir::parse_module(&src).unwrap();
        assert_eq!(exec(&m, "").1, 127);
        let m = ir::parse_module(&sum_below(10)).unwrap();
        assert_eq!(exec(&m, ""), ("45".to_string(), 0));
        let counted = fib_named("c", "  call @putint(%0)\n");
        let m = ir::parse_module(&format!(
            "declare @putint(i32) -> void\n{counted}\nfunc @main() -> i32 {{\nbb0:\n  %0 = call @c(3)\n  ret %0\n}}\n"
        ))
        .unwrap();
        assert_eq!(exec(&m, ""), ("101".to_string(), 2));
    }
}
