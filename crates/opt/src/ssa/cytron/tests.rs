//! mem2reg tests: textual IR in, printed IR out.

use super::*;

fn m2r(src: &str) -> String {
    let mut m = ir::parse_module(src).expect("test IR parses");
    for f in m.funcs.values_mut() {
        mem2reg(f);
    }
    ir::print_module(&m)
}

#[track_caller]
fn check(src: &str, expected: &str) {
    let out = m2r(src);
    assert_eq!(out.trim(), expected.trim(), "\n--- got ---\n{out}");
}

#[test]
fn straight_line() {
    check(
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc i32
  store %0, %1
  %2 = load i32, %1
  %3 = add %2, 1
  store %3, %1
  %4 = load i32, %1
  ret %4
}
"#,
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = add %0, 1
  ret %1
}
"#,
    );
}

#[test]
fn if_else_join_gets_one_parameter() {
    check(
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc i32
  %2 = alloc i32
  store 7, %2
  br %0, bb1, bb2
bb1:
  store 1, %1
  jump bb3
bb2:
  store 2, %1
  jump bb3
bb3:
  %3 = load i32, %1
  %4 = load i32, %2
  %5 = add %3, %4
  ret %5
}
"#,
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  br %0, bb1, bb2
bb1:
  jump bb3(1)
bb2:
  jump bb3(2)
bb3(%1: i32):
  %2 = add %1, 7
  ret %2
}
"#,
    );
}

#[test]
fn if_without_else_merges_with_the_value_before() {
    check(
        r#"
func @f(i32) -> f32 {
bb0(%0: i32):
  %1 = alloc f32
  store 1.5, %1
  br %0, bb1, bb2
bb1:
  store 2.5, %1
  jump bb2
bb2:
  %2 = load f32, %1
  ret %2
}
"#,
        r#"
func @f(i32) -> f32 {
bb0(%0: i32):
  br %0, bb1, bb2(1.5)
bb1:
  jump bb2(2.5)
bb2(%1: f32):
  ret %1
}
"#,
    );
}

/// `int s = 0, i = 0; while (i < n) { s = s + i; i = i + 1; } return s;`
const SUM_LOOP: &str = r#"
func @sum(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc i32
  %2 = alloc i32
  %3 = alloc i32
  store %0, %3
  store 0, %1
  store 0, %2
  jump bb1
bb1:
  %4 = load i32, %2
  %5 = load i32, %3
  %6 = slt %4, %5
  br %6, bb2, bb3
bb2:
  %7 = load i32, %1
  %8 = load i32, %2
  %9 = add %7, %8
  store %9, %1
  %10 = load i32, %2
  %11 = add %10, 1
  store %11, %2
  jump bb1
bb3:
  %12 = load i32, %1
  ret %12
}
"#;

#[test]
fn while_loop_header_gets_parameters_for_the_loop_variables() {
    // n is never stored in the loop: no parameter for it.
    check(
        SUM_LOOP,
        r#"
func @sum(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = slt %2, %0
  br %3, bb2, bb3
bb2:
  %4 = add %1, %2
  %5 = add %2, 1
  jump bb1(%4, %5)
bb3:
  ret %1
}
"#,
    );
}

#[test]
fn nested_loops() {
    // for i in 0..n { for j in 0..i { s += j } }; return s
    check(
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc i32
  %2 = alloc i32
  %3 = alloc i32
  store 0, %1
  store 0, %2
  jump bb1
bb1:
  %4 = load i32, %2
  %5 = slt %4, %0
  br %5, bb2, bb6
bb2:
  store 0, %3
  jump bb3
bb3:
  %6 = load i32, %3
  %7 = load i32, %2
  %8 = slt %6, %7
  br %8, bb4, bb5
bb4:
  %9 = load i32, %1
  %10 = load i32, %3
  %11 = add %9, %10
  store %11, %1
  %12 = add %10, 1
  store %12, %3
  jump bb3
bb5:
  %13 = load i32, %2
  %14 = add %13, 1
  store %14, %2
  jump bb1
bb6:
  %15 = load i32, %1
  ret %15
}
"#,
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = slt %2, %0
  br %3, bb2, bb6
bb2:
  jump bb3(%1, 0)
bb3(%4: i32, %5: i32):
  %6 = slt %5, %2
  br %6, bb4, bb5
bb4:
  %7 = add %4, %5
  %8 = add %5, 1
  jump bb3(%7, %8)
bb5:
  %9 = add %2, 1
  jump bb1(%4, %9)
bb6:
  ret %1
}
"#,
    );
}

#[test]
fn variable_local_to_one_block_gets_no_parameter() {
    // t is written and read only inside the loop body: pruned SSA places nothing for
    // it at the header, although the body is in the header's frontier.
    let src = r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc i32
  %2 = alloc i32
  store 0, %1
  jump bb1
bb1:
  %3 = load i32, %1
  %4 = slt %3, %0
  br %4, bb2, bb3
bb2:
  %5 = load i32, %1
  %6 = mul %5, 2
  store %6, %2
  %7 = load i32, %2
  %8 = add %7, 1
  store %8, %1
  jump bb1
bb3:
  %9 = load i32, %1
  ret %9
}
"#;
    check(
        src,
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0)
bb1(%1: i32):
  %2 = slt %1, %0
  br %2, bb2, bb3
bb2:
  %3 = mul %1, 2
  %4 = add %3, 1
  jump bb1(%4)
bb3:
  ret %1
}
"#,
    );
    let mut m = ir::parse_module(src).unwrap();
    mem2reg(&mut m.funcs[ir::FuncId::from_u32(0)]);
    assert_eq!(count_block_params(&m), 1);
}

#[test]
fn escaping_slots_are_not_promoted() {
    // %1 is passed to a call, %2 is offset by a gep, %3's address is stored, %4 is an
    // array, %5 is read with the wrong type; only %6 is promoted.
    check(
        r#"
declare @g(ptr) -> void

func @f() -> i32 {
bb0:
  %0 = alloc ptr
  %1 = alloc i32
  %2 = alloc i32
  %3 = alloc i32
  %4 = alloc [i32; 2]
  %5 = alloc i32
  %6 = alloc i32
  call @g(%1)
  %7 = gep %2, 0, 4
  store %3, %0
  store 1, %4
  store 2, %5
  %8 = load f32, %5
  store 3, %6
  %9 = load i32, %6
  ret %9
}
"#,
        r#"
declare @g(ptr) -> void

func @f() -> i32 {
bb0:
  %0 = alloc ptr
  %1 = alloc i32
  %2 = alloc i32
  %3 = alloc i32
  %4 = alloc [i32; 2]
  %5 = alloc i32
  call @g(%1)
  %6 = gep %2, 0, 4
  store %3, %0
  store 1, %4
  store 2, %5
  %7 = load f32, %5
  ret 3
}
"#,
    );
}

#[test]
fn load_before_any_store_reads_zero() {
    check(
        r#"
func @f(i32) -> f32 {
bb0(%0: i32):
  %1 = alloc f32
  %2 = alloc i32
  br %0, bb1, bb2
bb1:
  store 2.0, %1
  jump bb2
bb2:
  %3 = load f32, %1
  %4 = load i32, %2
  %5 = sitofp %4
  %6 = fadd %3, %5
  ret %6
}
"#,
        r#"
func @f(i32) -> f32 {
bb0(%0: i32):
  br %0, bb1, bb2(0.0)
bb1:
  jump bb2(2.0)
bb2(%1: f32):
  %2 = sitofp 0
  %3 = fadd %1, %2
  ret %3
}
"#,
    );
}

#[test]
fn trivial_parameters_are_removed() {
    // x = 5; while (x < n) { x = x; ... }: the header would receive x from both edges.
    check(
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc i32
  store 5, %1
  jump bb1
bb1:
  %2 = load i32, %1
  %3 = slt %2, %0
  br %3, bb2, bb3
bb2:
  %4 = load i32, %1
  store %4, %1
  jump bb1
bb3:
  %5 = load i32, %1
  ret %5
}
"#,
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1
bb1:
  %1 = slt 5, %0
  br %1, bb2, bb3
bb2:
  jump bb1
bb3:
  ret 5
}
"#,
    );
}

#[test]
fn unreachable_blocks_pass_arguments_too() {
    check(
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc i32
  store 1, %1
  br %0, bb1, bb2
bb1:
  store 2, %1
  jump bb2
bb3:
  %2 = load i32, %1
  store 9, %1
  jump bb2
bb2:
  %3 = load i32, %1
  ret %3
}
"#,
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  br %0, bb1, bb3(1)
bb1:
  jump bb3(2)
bb2:
  jump bb3(9)
bb3(%1: i32):
  ret %1
}
"#,
    );
}

#[test]
fn both_arms_to_the_same_block_each_get_arguments() {
    check(
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc i32
  br %0, bb1, bb2
bb1:
  store 1, %1
  br %0, bb2, bb2
bb2:
  %2 = load i32, %1
  ret %2
}
"#,
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  br %0, bb1, bb2(0)
bb1:
  br %0, bb2(1), bb2(1)
bb2(%1: i32):
  ret %1
}
"#,
    );
}

#[test]
fn thousands_of_nested_blocks_do_not_overflow_the_stack() {
    // A chain of 5000 nested ifs, each storing the variable: the dominator tree is 5000
    // deep.
    let n = 5000;
    let mut s = String::from(
        "func @f(i32) -> i32 {\nbb0(%0: i32):\n  %1 = alloc i32\n  store 0, %1\n  jump bb1\n",
    );
    for i in 1..=n {
        s.push_str(&format!(
            "bb{i}:\n  store {i}, %1\n  br %0, bb{}, bb{}\n",
            i + 1,
            n + 1
        ));
    }
    s.push_str(&format!(
        "bb{}:\n  %2 = load i32, %1\n  ret %2\n}}\n",
        n + 1
    ));
    let mut m = ir::parse_module(&s).unwrap();
    let f = &mut m.funcs[ir::FuncId::from_u32(0)];
    assert!(mem2reg(f));
    // The last block merges n + 1 edges into one parameter; nothing else needs one.
    assert_eq!(count_block_params(&m), 1);
    let printed = ir::print_module(&m);
    assert!(!printed.contains("alloc") && !printed.contains("load"));
}

#[test]
fn nothing_to_promote_reports_no_change() {
    let mut m = ir::parse_module("func @f() -> i32 {\nbb0:\n  ret 0\n}\n").unwrap();
    assert!(!mem2reg(&mut m.funcs[ir::FuncId::from_u32(0)]));
}

#[test]
fn behaviour_is_preserved_in_the_interpreter() {
    // Nested loops with a conditional update, a float slot and reads before writes.
    let out = crate::passes::testutil::same_behaviour(
        r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void
declare @putfloat(f32) -> void

func @main() -> i32 {
bb0:
  %0 = alloc i32
  %1 = alloc i32
  %2 = alloc i32
  %3 = alloc f32
  %4 = alloc i32
  %5 = call @getint()
  store %5, %0
  store 0, %1
  jump bb1
bb1:
  %6 = load i32, %1
  %7 = load i32, %0
  %8 = slt %6, %7
  br %8, bb2, bb6
bb2:
  store 0, %2
  jump bb3
bb3:
  %9 = load i32, %2
  %10 = load i32, %1
  %11 = sle %9, %10
  br %11, bb4, bb5
bb4:
  %12 = load f32, %3
  %13 = sitofp %9
  %14 = fadd %12, %13
  store %14, %3
  %15 = srem %9, 2
  br %15, bb7, bb8
bb7:
  %16 = load i32, %4
  %17 = add %16, %9
  store %17, %4
  jump bb8
bb8:
  %18 = add %9, 1
  store %18, %2
  jump bb3
bb5:
  %19 = add %10, 1
  store %19, %1
  jump bb1
bb6:
  %20 = load i32, %4
  call @putint(%20)
  call @putch(32)
  %21 = load f32, %3
  call @putfloat(%21)
  call @putch(10)
  ret 0
}
"#,
        &["mem2reg"],
        "9",
    );
    assert!(!out.contains("alloc") && !out.contains("load"), "{out}");
}
