//! Textual-IR tests of PRE: what it makes not recompute, and what it must not move.

use crate::passes::testutil::{check, run, same_behaviour};

#[test]
fn a_value_computed_on_every_incoming_path_is_not_recomputed() {
    // Both arms compute a * b (neither dominates the join, so GVN cannot help); the
    // join's a * b takes them through a new parameter.
    let src = r#"
declare @putint(i32) -> void

func @f(i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32):
  br %2, bb1, bb2
bb1:
  %3 = mul %0, %1
  call @putint(%3)
  jump bb3
bb2:
  %4 = mul %1, %0
  %5 = add %4, 1
  call @putint(%5)
  jump bb3
bb3:
  %6 = mul %0, %1
  call @putint(%6)
  ret
}
"#;
    check(
        &["pre"],
        src,
        r#"
declare @putint(i32) -> void

func @f(i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32):
  br %2, bb1, bb2
bb1:
  %3 = mul %0, %1
  call @putint(%3)
  jump bb3(%3)
bb2:
  %4 = mul %1, %0
  %5 = add %4, 1
  call @putint(%5)
  jump bb3(%4)
bb3(%6: i32):
  call @putint(%6)
  ret
}
"#,
    );
    assert_eq!(run(src, &["gvn"]).matches("mul").count(), 3);
}

#[test]
fn a_division_is_never_inserted_so_never_leaves_its_guard() {
    // `if (b != 0) x = a / b;` then `a / b` at the join: the else-arm must not get a
    // division (b is zero there). The join's division stays where it is.
    let src = r#"
declare @putint(i32) -> void

func @f(i32, i32) -> void {
bb0(%0: i32, %1: i32):
  %2 = ne %1, 0
  br %2, bb1, bb2
bb1:
  %3 = sdiv %0, %1
  call @putint(%3)
  jump bb3
bb2:
  call @putint(0)
  jump bb3
bb3:
  call @putint(1)
  %4 = srem %0, %1
  %5 = sdiv %0, %1
  call @putint(%5)
  ret
}
"#;
    assert_eq!(run(src, &["pre"]), run(src, &[]));
    // A division by a non-zero constant cannot trap and may be inserted.
    let out = run(
        &src.replace("%0, %1\n  call @putint(%5)", "%0, 3\n  call @putint(%5)")
            .replace("%3 = sdiv %0, %1", "%3 = sdiv %0, 3"),
        &["pre"],
    );
    assert!(out.contains("call @putint(0)\n  %4 = sdiv %0, 3"), "{out}");
}

#[test]
fn a_division_available_on_every_path_is_reused() {
    // Nothing new is evaluated when every path computed the quotient.
    let out = run(
        r#"
declare @putint(i32) -> void

func @f(i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32):
  br %2, bb1, bb2
bb1:
  %3 = sdiv %0, %1
  call @putint(%3)
  jump bb3
bb2:
  %4 = sdiv %0, %1
  %5 = add %4, %4
  call @putint(%5)
  jump bb3
bb3:
  %6 = sdiv %0, %1
  call @putint(%6)
  ret
}
"#,
        &["pre"],
    );
    assert_eq!(out.matches("sdiv").count(), 2, "{out}");
}

#[test]
fn a_loop_invariant_computation_of_the_header_moves_to_the_preheader() {
    // The header computes a * b every iteration; it is available on the back edge
    // (the header's own value), so it is inserted in the preheader and carried.
    let src = r#"
declare @putint(i32) -> void

func @f(i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32):
  jump bb1(0)
bb1(%3: i32):
  %4 = mul %0, %1
  %5 = add %4, %3
  call @putint(%5)
  %6 = add %3, 1
  %7 = slt %6, %2
  br %7, bb2, bb3
bb2:
  jump bb1(%6)
bb3:
  ret
}

func @main() -> i32 {
bb0:
  call @f(6, 7, 3)
  ret 0
}
"#;
    let out = same_behaviour(src, &["pre"], "");
    assert!(
        out.contains("bb0(%0: i32, %1: i32, %2: i32):\n  %3 = mul %0, %1\n  jump bb1(0, %3)"),
        "{out}"
    );
    let header = &out[out.find("bb1(").unwrap()..out.find("bb2:").unwrap()];
    assert!(!header.contains("mul"), "{out}");
}

#[test]
fn nothing_is_inserted_on_a_back_edge() {
    // i * 4 in the header is 0 on entry but needs a multiplication on the back edge:
    // moving it there would not save any work.
    let src = r#"
declare @putint(i32) -> void

func @f(i32) -> void {
bb0(%0: i32):
  jump bb1(0)
bb1(%1: i32):
  %2 = mul %1, 4
  call @putint(%2)
  %3 = add %1, 1
  %4 = slt %3, %0
  br %4, bb2, bb3
bb2:
  jump bb1(%3)
bb3:
  ret
}
"#;
    assert_eq!(run(src, &["pre"]), run(src, &[]));
}

#[test]
fn nothing_is_inserted_on_a_critical_edge_passing_no_arguments() {
    // The join's other predecessor is bb0, which also branches elsewhere: inserting
    // there would compute a * b on the path to bb1 as well, and a block splitting
    // the edge would cost a jump the edge does not need today.
    let src = r#"
declare @putint(i32) -> void

func @f(i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32):
  br %2, bb1, bb2
bb1:
  %3 = mul %0, %1
  call @putint(%3)
  jump bb2
bb2:
  %4 = mul %0, %1
  call @putint(%4)
  ret
}
"#;
    assert_eq!(run(src, &["pre"]), run(src, &[]));
}

/// A loop entered from `bb0`, which may branch past it (a critical edge into the
/// header, passing the start `%0`): the header computes `i * b`, which the latch
/// has computed for the next `i` already.
const LOOP_ENTERED_ON_A_CRITICAL_EDGE: &str = r#"
declare @putint(i32) -> void

func @f(i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32):
  br %2, bb1(%0), bb3
bb1(%3: i32):
  %4 = mul %3, %1
  call @putint(%4)
  %5 = add %3, 1
  %6 = mul %5, %1
  %7 = slt %6, 40
  br %7, bb2, bb3
bb2:
  jump bb1(%5)
bb3:
  ret
}

func @main() -> i32 {
bb0:
  call @f(2, 7, 1)
  call @f(9, 3, 0)
  ret 0
}
"#;

#[test]
fn a_critical_edge_passing_arguments_is_split_for_an_insertion() {
    // The entry edge gets a block of its own computing `%0 * %1`, and the header
    // takes the product as a parameter: the loop multiplies once per trip.
    let out = same_behaviour(LOOP_ENTERED_ON_A_CRITICAL_EDGE, &["pre"], "");
    let f = &out[..out.find("func @main").unwrap()];
    assert_eq!(f.matches("mul").count(), 2, "{out}");
    assert!(
        f.contains("  br %2, bb1, bb4\nbb1:\n  %3 = mul %0, %1\n  jump bb2(%0, %3)"),
        "{out}"
    );
    assert!(
        f.contains("bb2(%4: i32, %5: i32):\n  call @putint(%5)"),
        "{out}"
    );
}

#[test]
fn an_add_of_a_constant_is_not_inserted_on_a_split_edge() {
    // `i + 7` in the header: carried, it would cost the parameter the add costs.
    let src = LOOP_ENTERED_ON_A_CRITICAL_EDGE
        .replace("mul %3, %1", "add %3, 7")
        .replace("mul %5, %1", "add %5, 7");
    assert_eq!(run(&src, &["pre"]), run(&src, &[]));
}

#[test]
fn loads_and_impure_calls_are_not_moved_or_merged() {
    // Both arms load @g and call getint; the join does too. Memory is not numbered
    // by the complete GVN, so nothing here is redundant for PRE.
    let src = r#"
global @g: i32 = 4
declare @getint() -> i32
declare @putint(i32) -> void

func @f(i32) -> void {
bb0(%0: i32):
  br %0, bb1, bb2
bb1:
  %1 = load i32, @g
  %2 = call @getint()
  call @putint(%1)
  jump bb3
bb2:
  %3 = load i32, @g
  %4 = call @getint()
  call @putint(%3)
  jump bb3
bb3:
  %5 = load i32, @g
  %6 = call @getint()
  call @putint(%5)
  ret
}
"#;
    assert_eq!(run(src, &["pre"]), run(src, &[]));
}

#[test]
fn pure_calls_are_reused_but_never_inserted() {
    let src = r#"
declare @putint(i32) -> void

func @sq(i32) -> i32 {
bb0(%0: i32):
  %1 = mul %0, %0
  ret %1
}

func @f(i32, i32) -> void {
bb0(%0: i32, %1: i32):
  br %1, bb1, bb2
bb1:
  %2 = call @sq(%0)
  call @putint(%2)
  jump bb3
bb2:
  %3 = call @sq(%0)
  call @putint(%3)
  jump bb3
bb3:
  %4 = call @sq(%0)
  call @putint(%4)
  ret
}
"#;
    let out = run(src, &["pre"]);
    assert_eq!(out.matches("call @sq").count(), 2, "{out}");
    // With one arm not calling sq, the join's call stays.
    let one = src.replace("  %3 = call @sq(%0)\n  call @putint(%3)\n", "");
    assert_eq!(run(&one, &["pre"]), run(&one, &[]));
}

#[test]
fn values_depending_on_the_join_itself_are_left_alone() {
    // %4 = %3 + 1 where %3 is a load in the join: its number mentions a leader the
    // predecessors cannot have, even on the back edge (where it is the previous
    // iteration's load).
    let src = r#"
global @g: [i32; 4] = [1, 2, 3, 4]
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = gep @g, %0, 4
  %3 = load i32, %2
  %4 = add %3, 1
  call @putint(%4)
  %5 = add %0, 1
  %6 = slt %5, 4
  br %6, bb2, bb3
bb2:
  %7 = add %3, 1
  jump bb1(%5, %7)
bb3:
  ret 0
}
"#;
    let out = same_behaviour(src, &["pre"], "");
    assert_eq!(out, run(src, &[]));
}

#[test]
fn keeps_behaviour_on_nested_joins_and_loops() {
    same_behaviour(
        r#"
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 5, 9)
bb1(%0: i32, %1: i32, %2: i32):
  %3 = mul %1, %2
  %4 = srem %0, 3
  br %4, bb2, bb3
bb2:
  %5 = add %1, %2
  %6 = mul %1, %2
  call @putint(%6)
  jump bb4(%1, %5)
bb3:
  %7 = add %2, %1
  jump bb4(%2, %7)
bb4(%8: i32, %9: i32):
  %10 = add %1, %2
  %11 = mul %1, %2
  %12 = add %10, %11
  %13 = add %12, %3
  call @putint(%13)
  call @putch(32)
  %14 = add %0, 1
  %15 = slt %14, 7
  br %15, bb5, bb6
bb5:
  %16 = add %8, 1
  jump bb1(%14, %16, %9)
bb6:
  ret 0
}
"#,
        &["pre"],
        "",
    );
}

/// A loop over the rows `i` of a matrix of 12 `i32` per row at `%0`, reading
/// `row(i)[A]` and `row(i + 1)[B]`: with `A` as `B` one iteration reads what the
/// previous one read second, from the same address.
fn row_walk(offsets: [&str; 2]) -> String {
    r#"
global @g: [i32; 48] = zeroinit

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = gep @g, 13, 4
  store 7, %0
  %1 = gep @g, 26, 4
  store 5, %1
  call @f(@g, 3)
  ret 0
}

func @f(ptr, i32) -> void {
bb0(%0: ptr, %1: i32):
  jump bb1(0)
bb1(%2: i32):
  %3 = add %2, 1
  %4 = gep %0, %2, 48
  %5 = gep %4, A, 4
  %6 = load i32, %5
  call @putint(%6)
  %7 = gep %0, %3, 48
  %8 = gep %7, B, 4
  %9 = load i32, %8
  call @putint(%9)
  %10 = slt %3, %1
  br %10, bb1(%3), bb2
bb2:
  ret
}
"#
    .replace("A", offsets[0])
    .replace("B", offsets[1])
}

/// The pointers the loop of [`row_walk`] carries round after PRE.
fn carried_pointers(src: &str) -> usize {
    let out = run(src, &["pre"]);
    same_behaviour(src, &["pre"], "");
    let header = out
        .lines()
        .find(|l| l.starts_with("bb1("))
        .expect("the loop");
    header.matches(": ptr").count()
}

#[test]
fn a_constant_offset_from_a_pointer_is_not_carried_round_a_loop() {
    // Row `i + 1` is carried to the next iteration as its row `i` (its address
    // costs a multiplication), but not `row + 4`: carrying it would keep one
    // more register live round the loop, where `lw 4(row)` costs nothing.
    assert_eq!(carried_pointers(&row_walk(["1", "1"])), 1);
    // An element of a variable index (`row + 4 * i`) costs a shift and an add
    // where the loop recomputes it, and is carried.
    assert_eq!(carried_pointers(&row_walk(["%2", "%3"])), 2);
}
