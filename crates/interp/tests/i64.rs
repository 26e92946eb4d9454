//! The `i64` operations and the conversions `sext`, `trunc`, `fbits`, on hand-written
//! IR. Expected values were computed independently (Python, with C's truncating
//! division), not with the interpreter.

use interp::{run_module, ErrorKind, RunOptions};

fn opts() -> RunOptions {
    RunOptions {
        wall_clock_timers: false,
        ..Default::default()
    }
}

/// Runs `@main` with `body` (which must `ret`) and the runtime declared; returns the
/// printed integers.
fn printed(body: &str) -> Vec<i64> {
    let src = format!(
        "declare @putint(i32) -> void\ndeclare @putch(i32) -> void\n\
         func @main() -> i32 {{\nbb0:\n{body}}}\n"
    );
    let m = ir::parse_module(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    ir::verify_module(&m).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let out = run_module(&m, b"", &opts()).unwrap_or_else(|e| panic!("{e}"));
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect()
}

/// `call @putint(%v)` and a space, for each `%v`.
fn put(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| format!("  call @putint({v})\n  call @putch(32)\n"))
        .collect()
}

#[test]
fn product_modulo_needs_64_bits() {
    // (2e9 * 2e9) mod (1e9 + 7) = 196; the i32 product would wrap.
    let body = format!(
        "  %a = sext 2000000000\n  %b = sext 2000000000\n  %m = sext 1000000007\n\
         %p = mul64 %a, %b\n  %r = srem64 %p, %m\n  %t = trunc %r\n{}  ret 0\n",
        put(&["%t"])
    );
    assert_eq!(printed(&body), vec![196]);
}

#[test]
fn mul64_wraps_and_divides_as_c() {
    // y = 4e18 fits; w = 3y wraps to -6446744073709551616.
    let body = format!(
        "  %x = sext 2000000000\n  %y = mul64 %x, %x\n  %three = sext 3\n  %w = mul64 %y, %three\n\
         %wt = trunc %w\n  %g = sext 1000000000\n  %q = sdiv64 %w, %g\n  %qt = trunc %q\n\
         %r = srem64 %w, %g\n  %rt = trunc %r\n{}  ret 0\n",
        put(&["%wt", "%qt", "%rt"])
    );
    // w / 1e9 = -6446744073 (low 32 bits 2143190519), w % 1e9 = -709551616.
    assert_eq!(printed(&body), vec![-659554304, 2143190519, -709551616]);
}

#[test]
fn division_of_negative_numbers_truncates() {
    let body = format!(
        "  %m7 = sext -7\n  %p7 = sext 7\n  %p2 = sext 2\n  %m2 = sext -2\n\
         %a = sdiv64 %m7, %p2\n  %b = srem64 %m7, %p2\n  %c = sdiv64 %p7, %m2\n  %d = srem64 %p7, %m2\n\
         %x = sext -2000000000\n  %y = sext 2000000000\n  %big = mul64 %x, %y\n\
         %k = sext 1500000000\n  %k2 = add64 %k, %k\n\
         %e = sdiv64 %big, %k2\n  %f = srem64 %big, %k2\n  %g = sub64 %f, %k2\n\
         %at = trunc %a\n  %bt = trunc %b\n  %ct = trunc %c\n  %dt = trunc %d\n\
         %et = trunc %e\n  %ft = trunc %f\n  %gt = trunc %g\n{}  ret 0\n",
        put(&["%at", "%bt", "%ct", "%dt", "%et", "%ft", "%gt"])
    );
    // -4e18 / 3e9 = -1333333333, remainder -1e9; -1e9 - 3e9 = -4e9 has low bits 294967296.
    assert_eq!(
        printed(&body),
        vec![-3, -1, -3, 1, -1333333333, -1000000000, 294967296]
    );
}

#[test]
fn int64_min_divided_by_minus_one() {
    // i64::MIN = (-2^31)^2 * -2; MIN / -1 = MIN (as RISC-V `div`), MIN % -1 = 0.
    let body = format!(
        "  %h = sext -2147483648\n  %s = mul64 %h, %h\n  %n2 = sext -2\n  %min = mul64 %s, %n2\n\
         %n1 = sext -1\n  %q = sdiv64 %min, %n1\n  %r = srem64 %min, %n1\n\
         %three = sext 3\n  %q3 = sdiv64 %q, %three\n  %q3t = trunc %q3\n\
         %five = sext 5\n  %r5 = add64 %r, %five\n  %r5t = trunc %r5\n{}  ret 0\n",
        put(&["%q3t", "%r5t"])
    );
    // MIN / 3 = -3074457345618258602, whose low 32 bits are 1431655766.
    assert_eq!(printed(&body), vec![1431655766, 5]);
}

#[test]
fn sext_trunc_and_fbits() {
    let body = format!(
        "  %one = fbits 1.0\n  %nz = fbits -0.0\n  %w = sext %nz\n  %h = sext 65536\n\
         %w2 = sdiv64 %w, %h\n  %k = sext 1\n  %w3 = add64 %w2, %k\n  %t = trunc %w3\n\
         %neg = slt %nz, 0\n  %m1 = sext -1\n  %p1 = add64 %m1, %k\n  %z = trunc %p1\n{}  ret 0\n",
        put(&["%one", "%nz", "%t", "%neg", "%z"])
    );
    // fbits(-0.0) is negative as an i32, and sign-extends: -2^31 / 2^16 + 1 = -32767.
    assert_eq!(printed(&body), vec![1065353216, -2147483648, -32767, 1, 0]);
}

#[test]
fn an_i64_block_parameter_carries_64_bits() {
    // acc = 3^39 = 4052555153018976267 (< 2^63), computed in a loop.
    let body = format!(
        "  %one = sext 1\n  %three = sext 3\n  jump bb1(%one, 0)\n\
         bb1(%acc: i64, %i: i32):\n  %c = slt %i, 39\n  br %c, bb2, bb3\n\
         bb2:\n  %next = mul64 %acc, %three\n  %i1 = add %i, 1\n  jump bb1(%next, %i1)\n\
         bb3:\n  %g = sext 1000000000\n  %hi = sdiv64 %acc, %g\n  %hit = trunc %hi\n\
         %lo = srem64 %acc, %g\n  %lot = trunc %lo\n{}  ret 0\n",
        put(&["%hit", "%lot"])
    );
    // 4052555153018976267 = 4052555153 * 1e9 + 18976267; 4052555153 - 2^32 = -242412143.
    assert_eq!(printed(&body), vec![-242412143, 18976267]);
}

#[test]
fn i64_division_by_zero_traps() {
    let src = "func @main() -> i32 {\nbb0:\n  %a = sext 1\n  %z = sext 0\n  %q = sdiv64 %a, %z\n  %t = trunc %q\n  ret %t\n}\n";
    let m = ir::parse_module(src).unwrap();
    let e = run_module(&m, b"", &opts()).expect_err("division by zero");
    assert_eq!(e.kind, ErrorKind::DivisionByZero);
    let rem = src.replace("sdiv64", "srem64");
    let m = ir::parse_module(&rem).unwrap();
    let e = run_module(&m, b"", &opts()).expect_err("remainder by zero");
    assert_eq!(e.kind, ErrorKind::DivisionByZero);
}

/// Integer comparisons of two pointers order them as addresses: elements of one
/// array compare by index, in a branch and as values.
#[test]
fn pointers_compare_as_addresses() {
    let body = format!(
        "  %a = alloc [i32; 8]\n  %p = gep %a, 2, 4\n  %q = gep %a, 5, 4\n  %r = gep %q, -3, 4\n\
         %lt = slt %p, %q\n  %gt = sgt %p, %q\n  %le = sle %r, %p\n  %ge = sge %q, %r\n\
         %eq = eq %r, %p\n  %ne = ne %r, %p\n{}  %c = slt %q, %p\n  br %c, bb1, bb2\n\
         bb1:\n  ret 1\nbb2:\n{}  ret 0\n",
        put(&["%lt", "%gt", "%le", "%ge", "%eq", "%ne"]),
        put(&["7"])
    );
    assert_eq!(printed(&body), vec![1, 0, 1, 1, 1, 0, 7]);
}
