//! Textual-IR tests of the hash-based GVN: what it merges, and what it must not.

use crate::passes::testutil::{run, same_behaviour};

/// How many instructions of the printed module contain `needle`.
fn count(text: &str, needle: &str) -> usize {
    text.lines().filter(|l| l.contains(needle)).count()
}

#[test]
fn loads_are_not_merged_across_possible_writes() {
    // Each second load may see a different value: a store to the same global, a
    // store through a pointer parameter (may be @a), a call that writes globals, a
    // call to an external function outside the runtime library (whose effects are
    // known), a store to an element of the same array at an index that may be equal.
    let src = r#"
global @a: i32 = 1
global @arr: [i32; 8] = zeroinit
declare @opaque(i32) -> void

func @bump() -> void {
bb0:
  %0 = load i32, @a
  %1 = add %0, 1
  store %1, @a
  ret
}

func @f(ptr, i32, i32) -> i32 {
bb0(%0: ptr, %1: i32, %2: i32):
  %3 = load i32, @a
  store 7, @a
  %4 = load i32, @a
  store 8, %0
  %5 = load i32, @a
  call @bump()
  %6 = load i32, @a
  call @opaque(%6)
  %7 = load i32, @a
  %8 = gep @arr, %1, 4
  %9 = load i32, %8
  %10 = gep @arr, %2, 4
  store 9, %10
  %11 = gep @arr, %1, 4
  %12 = load i32, %11
  %13 = add %3, %4
  %14 = add %13, %5
  %15 = add %14, %7
  %16 = add %15, %9
  %17 = add %16, %12
  ret %17
}
"#;
    let out = run(src, &["gvn"]);
    // Only the load right after `store 7, @a` goes (it is 7): four loads of @a are
    // left in @f, one in @bump. The gep of @arr at %1 is merged, its loads are not.
    assert_eq!(count(&out, "= load i32, @a"), 4 + 1, "{out}");
    assert_eq!(count(&out, "= gep @arr, %1, 4"), 1, "{out}");
    assert_eq!(count(&out, "= load i32, %"), 2, "{out}");
    assert!(out.contains("add %3, 7"), "{out}");
}

#[test]
fn local_arrays_are_separate_from_globals_and_each_other() {
    // Stores to local arrays cannot change @g or each other; a call that receives
    // one array may write it, but not the other.
    let src = r#"
global @g: i32 = 3

func @fill(ptr) -> void {
bb0(%0: ptr):
  store 1, %0
  ret
}

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 4]
  %1 = alloc [i32; 4]
  store 10, %0
  store 20, %1
  %2 = load i32, @g
  store 30, %0
  %3 = load i32, @g
  %4 = load i32, %1
  call @fill(%0)
  %5 = load i32, %0
  %6 = load i32, %1
  %7 = add %2, %3
  %8 = add %7, %4
  %9 = add %8, %5
  %10 = add %9, %6
  ret %10
}
"#;
    let out = same_behaviour(src, &["gvn"], "");
    assert_eq!(count(&out, "load i32, @g"), 1, "{out}");
    // %4 is forwarded from `store 20, %1`; after the call only %0, which it writes
    // through its argument, is reloaded (its mod/ref summary): %6 is 20 too.
    assert_eq!(count(&out, "load i32, %"), 1, "{out}");
    assert!(out.contains("%3 = load i32, %0"), "{out}");
}

#[test]
fn a_store_in_a_loop_kills_loads_of_the_header_and_exit() {
    // g is loaded before the loop, in the header and after the loop; the body stores
    // to g, so neither later load may reuse the first.
    let src = r#"
global @g: i32 = 0

func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = load i32, @g
  jump bb1(0)
bb1(%2: i32):
  %3 = load i32, @g
  %4 = slt %2, %0
  br %4, bb2, bb3
bb2:
  %5 = add %3, 1
  store %5, @g
  %6 = add %2, 1
  jump bb1(%6)
bb3:
  %7 = load i32, @g
  %8 = add %1, %3
  %9 = add %8, %7
  ret %9
}

func @main() -> i32 {
bb0:
  %0 = call @f(5)
  ret %0
}
"#;
    let out = run(src, &["gvn"]);
    // The exit's load equals the header's (nothing writes between them).
    assert_eq!(count(&out, "load i32, @g"), 2, "{out}");
    assert!(
        out.contains("add %1, %3") && out.contains("add %7, %3"),
        "{out}"
    );
    same_behaviour(src, &["gvn"], "");
}

#[test]
fn loads_survive_a_loop_that_does_not_write() {
    // The loop only reads @g: its load equals the one before the loop. A call to an
    // external function (which may do anything) would stop that; see below.
    let src = r#"
global @g: i32 = 0
declare @opaque(i32) -> void

func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = load i32, @g
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  %4 = slt %2, %0
  br %4, bb2, bb3
bb2:
  %5 = load i32, @g
  %6 = add %3, %5
  %7 = add %2, 1
  jump bb1(%7, %6)
bb3:
  %8 = load i32, @g
  %9 = add %3, %8
  ret %9
}
"#;
    let out = run(src, &["gvn"]);
    assert_eq!(count(&out, "load i32, @g"), 1, "{out}");
    let with_call = src.replace("%7 = add %2, 1", "call @opaque(%6)\n  %7 = add %2, 1");
    let out = run(&with_call, &["gvn"]);
    assert_eq!(count(&out, "load i32, @g"), 3, "{out}");
}

#[test]
fn calls_merge_only_when_pure() {
    let src = r#"
global @g: i32 = 0
declare @getint() -> i32

func @sq(i32) -> i32 {
bb0(%0: i32):
  %1 = mul %0, %0
  ret %1
}

func @next() -> i32 {
bb0:
  %0 = load i32, @g
  %1 = add %0, 1
  store %1, @g
  ret %1
}

func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = call @sq(%0)
  %2 = call @sq(%0)
  %3 = call @next()
  %4 = call @next()
  %5 = call @getint()
  %6 = call @getint()
  %7 = add %1, %2
  %8 = add %7, %3
  %9 = add %8, %4
  %10 = add %9, %5
  %11 = add %10, %6
  ret %11
}
"#;
    let out = run(src, &["gvn"]);
    assert_eq!(count(&out, "call @sq"), 1, "{out}");
    assert_eq!(count(&out, "call @next"), 2, "{out}");
    assert_eq!(count(&out, "call @getint"), 2, "{out}");
}

#[test]
fn allocations_are_never_merged() {
    let src = r#"
func @main() -> i32 {
bb0:
  %0 = alloc [i32; 2]
  %1 = alloc [i32; 2]
  store 1, %0
  store 2, %1
  %2 = load i32, %0
  ret %2
}
"#;
    let out = same_behaviour(src, &["gvn"], "");
    assert_eq!(count(&out, "alloc"), 2, "{out}");
    assert!(out.contains("ret 1"), "{out}");
}

#[test]
fn keeps_behaviour_on_a_program_with_memory_and_loops() {
    same_behaviour(
        r#"
global @g: [i32; 16] = [3, 1, 4, 1, 5, 9, 2, 6]
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = slt %0, 15
  br %2, bb2, bb5
bb2:
  %3 = gep @g, %0, 4
  %4 = load i32, %3
  %5 = add %0, 1
  %6 = gep @g, %5, 4
  %7 = load i32, %6
  %8 = slt %7, %4
  br %8, bb3, bb4(%1)
bb3:
  store %4, %6
  %9 = gep @g, %0, 4
  store %7, %9
  %10 = gep @g, %5, 4
  %11 = load i32, %10
  %12 = add %1, %11
  jump bb4(%12)
bb4(%13: i32):
  %14 = gep @g, %0, 4
  %15 = load i32, %14
  %16 = add %13, %15
  call @putint(%16)
  call @putch(32)
  jump bb1(%5, %16)
bb5:
  ret 0
}
"#,
        &["gvn"],
        "",
    );
}

/// Functions that touch named memory, for the mod/ref tests: `seta` writes @a,
/// `setb` @b, `fill` what its argument points to; `geta` reads @a, `at` what its
/// argument points to.
const MODREF: &str = r#"
global @a: [i32; 4] = zeroinit
global @b: i32 = 0
declare @getint() -> i32
declare @putint(i32) -> void

func @seta(i32) -> void {
bb0(%0: i32):
  %1 = gep @a, 1, 4
  store %0, %1
  ret
}

func @setb(i32) -> void {
bb0(%0: i32):
  store %0, @b
  ret
}

func @fill(ptr, i32) -> void {
bb0(%0: ptr, %1: i32):
  store %1, %0
  ret
}

func @geta(i32) -> i32 {
bb0(%0: i32):
  %1 = and %0, 3
  %2 = gep @a, %1, 4
  %3 = load i32, %2
  ret %3
}

func @at(ptr) -> i32 {
bb0(%0: ptr):
  %1 = load i32, %0
  ret %1
}
"#;

#[test]
fn a_call_leaves_the_memory_its_callee_does_not_write() {
    let src = format!(
        "{MODREF}{}",
        r#"
func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = load i32, @a
  %2 = call @geta(%0)
  call @setb(%0)
  %4 = load i32, @a
  %5 = call @geta(%0)
  %6 = alloc [i32; 2]
  call @fill(%6, %0)
  %7 = call @geta(%0)
  %8 = load i32, @a
  br %0, bb1, bb2
bb1:
  call @setb(7)
  jump bb2
bb2:
  %9 = call @geta(%0)
  %10 = load i32, @a
  %11 = add %1, %2
  %12 = add %11, %4
  %13 = add %12, %5
  %14 = add %13, %7
  %15 = add %14, %8
  %16 = add %15, %9
  %17 = add %16, %10
  call @putint(%17)
  ret 0
}
"#
    );
    let out = same_behaviour(&src, &["gvn"], "2");
    // @setb, @fill of a local array and the branch calling @setb write no @a:
    // one load of @a and one call of @geta are left.
    assert_eq!(count(&out, "= load i32, @a"), 1, "{out}");
    assert_eq!(count(&out, "= call @geta("), 1, "{out}");
}

#[test]
fn a_call_writing_the_memory_kills_its_loads_and_readers() {
    let src = format!(
        "{MODREF}{}",
        r#"
func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = load i32, @a
  %2 = call @geta(%0)
  call @seta(%0)
  %3 = load i32, @a
  %4 = call @geta(%0)
  call @fill(@a, 5)
  %5 = load i32, @a
  %6 = call @geta(%0)
  %7 = call @at(@b)
  br %0, bb1, bb2
bb1:
  call @fill(@b, 9)
  jump bb2
bb2:
  %8 = call @at(@b)
  %9 = load i32, @b
  %10 = add %1, %2
  %11 = add %10, %3
  %12 = add %11, %4
  %13 = add %12, %5
  %14 = add %13, %6
  %15 = add %14, %7
  %16 = add %15, %8
  %17 = add %16, %9
  call @putint(%17)
  ret 0
}
"#
    );
    let out = same_behaviour(&src, &["gvn"], "1");
    // @seta writes @a directly, @fill through the @a passed (a load of element 0
    // after it is the 5 stored, which GVN does not see through a call); the
    // branch's @fill writes @b.
    assert_eq!(count(&out, "= load i32, @a"), 3, "{out}");
    assert_eq!(count(&out, "= call @geta("), 3, "{out}");
    assert_eq!(count(&out, "= call @at(@b)"), 2, "{out}");
    assert_eq!(count(&out, "= load i32, @b"), 1, "{out}");
}

#[test]
fn a_reader_through_an_unknown_pointer_sees_every_write() {
    let src = format!(
        "{MODREF}{}",
        r#"
func @twice(ptr, i32) -> i32 {
bb0(%0: ptr, %1: i32):
  %2 = call @at(%0)
  call @setb(%1)
  %3 = call @at(%0)
  %4 = add %2, %3
  ret %4
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @twice(@b, %0)
  call @putint(%1)
  ret 0
}
"#
    );
    let out = same_behaviour(&src, &["gvn"], "4");
    // %0 may be @b: both calls stay.
    assert_eq!(count(&out, "= call @at(%0)"), 2, "{out}");
}

#[test]
fn a_load_is_redundant_across_stores_to_other_bytes_of_its_array() {
    // `@m` is `int m[7][6]`. Between the two loads of `m[5][%r]` (%r in [0, 5],
    // a remainder made non-negative) and of `m[%1][3]` (any row) come stores to
    // `m[4][0]`, `m[4][1]` (row 4 ends before row 5 starts) and to `m[3][2]`
    // (column 2 of a row, never column 3 of any row: the GCD of the strides, 24
    // bytes a row, leaves them 20 bytes apart modulo 24): the second loads go.
    let src = r#"
global @m: [i32; 42] = zeroinit

func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = srem %0, 6
  %3 = add %2, 6
  %4 = slt %3, 6
  %5 = add %4, -1
  %6 = and %5, 6
  %r = sub %3, %6
  %7 = gep @m, 5, 24
  %8 = gep %7, %r, 4
  %9 = load i32, %8
  %10 = gep @m, %1, 24
  %11 = gep %10, 3, 4
  %12 = load i32, %11
  %13 = gep @m, 4, 24
  store %9, %13
  %14 = gep %13, 1, 4
  store %12, %14
  %15 = gep @m, 3, 24
  %19 = gep %15, 2, 4
  store %0, %19
  %16 = load i32, %8
  %17 = load i32, %11
  %18 = add %16, %17
  ret %18
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = call @f(%0, %1)
  %3 = call @f(%1, %0)
  %6 = sub 0, %0
  %7 = call @f(%6, %1)
  call @putint(%2)
  call @putint(%3)
  call @putint(%7)
  %4 = gep @m, 4, 24
  %5 = load i32, %4
  ret %5
}

declare @getint() -> i32
declare @putint(i32) -> void
"#;
    let out = run(src, &["gvn"]);
    assert_eq!(count(&out, "= load i32"), 2 + 1, "{out}");
    for stdin in ["5 3", "0 6", "6 1", "4 4"] {
        same_behaviour(src, &["gvn"], stdin);
    }
}

#[test]
fn a_load_stays_when_a_store_since_may_write_its_bytes() {
    // Must not: `m[%r][0]` with %r in [-5, 11] (the plain remainder plus 6, not
    // corrected) may be `m[4][0]`; `m[5][%1]` (any column) may be any element
    // of rows 4 to 6; a call writing memory, or a store through a pointer
    // parameter, may write anything; an `i32` store overlaps an `f32` load of the
    // same address.
    let src = r#"
global @m: [i32; 42] = zeroinit
global @g: [f32; 4] = zeroinit
declare @opaque(i32) -> void

func @f(i32, i32, ptr) -> i32 {
bb0(%0: i32, %1: i32, %2: ptr):
  %3 = srem %0, 6
  %r = add %3, 6
  %4 = gep @m, %r, 24
  %5 = load i32, %4
  %6 = gep @m, 4, 24
  store 1, %6
  %7 = load i32, %4
  %8 = gep @m, 5, 24
  %9 = gep %8, %1, 4
  %10 = gep @m, 6, 24
  %11 = load i32, %10
  store 2, %9
  %12 = load i32, %10
  %13 = gep @m, 0, 24
  %14 = load i32, %13
  call @opaque(%14)
  %15 = load i32, %13
  %16 = gep @m, 1, 24
  %17 = load i32, %16
  store 3, %2
  %18 = load i32, %16
  %19 = gep @g, 2, 4
  %20 = load f32, %19
  store 5, %19
  %21 = load f32, %19
  %22 = fptosi %21
  %23 = add %5, %7
  %24 = add %23, %11
  %25 = add %24, %12
  %26 = add %25, %14
  %27 = add %26, %15
  %28 = add %27, %17
  %29 = add %28, %18
  %30 = add %29, %22
  ret %30
}
"#;
    let out = run(src, &["gvn"]);
    assert_eq!(count(&out, "= load i32"), 8, "{out}");
    assert_eq!(count(&out, "= load f32"), 2, "{out}");
}
