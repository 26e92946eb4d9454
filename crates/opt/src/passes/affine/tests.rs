//! Textual-IR tests of the affine relations pass: what it folds and merges, the
//! induction variables it removes, and the equalities it must not claim.

use crate::passes::testutil::{check, same_behaviour};

const DECLS: &str = "declare @getint() -> i32\ndeclare @putint(i32) -> void\n";

fn module(body: &str) -> String {
    format!("{DECLS}\n{body}")
}

#[test]
fn equal_forms_are_one_value() {
    // b + a is a + b; (x + 1) + 1 is x + 2; x + x is x * 2 and x << 1; and
    // x * 65536 * 65536 wraps to 0.
    let src = module(
        r#"
func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = add %0, %1
  %3 = add %1, %0
  call @putint(%3)
  %4 = add %0, 1
  %5 = add %4, 1
  %6 = add %0, 2
  call @putint(%6)
  %7 = mul %0, 2
  %8 = add %0, %0
  %9 = shl %0, 1
  %10 = sub %9, %8
  call @putint(%10)
  %11 = mul %0, 65536
  %12 = mul %11, 65536
  call @putint(%12)
  call @putint(%2)
  call @putint(%5)
  call @putint(%7)
  ret 0
}
"#,
    );
    check(
        &["affine"],
        &src,
        r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = add %0, %1
  call @putint(%2)
  %3 = add %0, 1
  %4 = add %3, 1
  call @putint(%4)
  %5 = mul %0, 2
  call @putint(0)
  %6 = mul %0, 65536
  call @putint(0)
  call @putint(%2)
  call @putint(%4)
  call @putint(%5)
  ret 0
}
"#,
    );
}

/// `i` from 0 and `j` from 5, both stepping by one: `j` is `i + 5` in the loop and
/// after it.
const IN_STEP: &str = r#"
func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 5)
bb1(%1: i32, %2: i32):
  %3 = slt %1, %0
  br %3, bb2, bb3
bb2:
  %4 = add %1, 1
  %5 = add %2, 1
  jump bb1(%4, %5)
bb3:
  %6 = sub %2, %1
  call @putint(%6)
  call @putint(%2)
  ret 0
}
"#;

#[test]
fn an_induction_variable_in_step_is_computed_from_the_other() {
    check(
        &["affine", "dce"],
        &module(IN_STEP),
        r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0)
bb1(%1: i32):
  %2 = add %1, 5
  %3 = slt %1, %0
  br %3, bb2, bb3
bb2:
  %4 = add %1, 1
  jump bb1(%4)
bb3:
  call @putint(5)
  call @putint(%2)
  ret 0
}
"#,
    );
    same_behaviour(&module(IN_STEP), &["affine", "dce"], "10");
}

#[test]
fn a_scaled_induction_variable_folds_its_difference() {
    // j = 2 * i + 3 throughout, where 2 * i wraps: j - 2 * i is 3; j stays an
    // induction variable of its own (computing it would take two instructions).
    let src = module(
        r#"
func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 3)
bb1(%1: i32, %2: i32):
  %3 = slt %1, %0
  br %3, bb2, bb3
bb2:
  %4 = add %1, 1
  %5 = add %2, 2
  jump bb1(%4, %5)
bb3:
  %6 = mul %1, 2
  %7 = sub %2, %6
  call @putint(%7)
  call @putint(%2)
  ret 0
}
"#,
    );
    let out = same_behaviour(&src, &["affine", "dce"], "1000");
    assert!(out.contains("call @putint(3)"), "{out}");
    assert!(out.contains("bb1(%1: i32, %2: i32)"), "{out}");
}

#[test]
fn swapped_values_keep_their_sum() {
    let src = module(
        r#"
func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = call @getint()
  %3 = add %0, %1
  jump bb1(%0, %1, 0)
bb1(%4: i32, %5: i32, %6: i32):
  %7 = slt %6, %2
  br %7, bb2, bb3
bb2:
  %8 = add %6, 1
  jump bb1(%5, %4, %8)
bb3:
  %9 = add %4, %5
  %10 = sub %9, %3
  call @putint(%10)
  call @putint(%4)
  ret 0
}
"#,
    );
    let out = same_behaviour(&src, &["affine", "dce"], "3 -9 5");
    assert!(out.contains("call @putint(0)"), "{out}");
    // x itself is not a function of the rest: it stays.
    assert!(out.contains("call @putint(%3)"), "{out}");
}

#[test]
fn a_join_keeps_the_offset_of_both_paths() {
    // y == x + 2 on both paths, computed differently.
    let src = module(
        r#"
func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = sgt %0, %1
  br %2, bb1, bb2
bb1:
  %3 = mul %0, 3
  %4 = add %3, 2
  jump bb3(%3, %4)
bb2:
  %5 = sub %1, %0
  %6 = add %1, 2
  %7 = sub %6, %0
  jump bb3(%5, %7)
bb3(%8: i32, %9: i32):
  %10 = sub %9, %8
  call @putint(%10)
  call @putint(%9)
  ret 0
}
"#,
    );
    for input in ["10 2", "2 10"] {
        let out = same_behaviour(&src, &["affine", "dce"], input);
        assert!(out.contains("call @putint(2)"), "{out}");
        assert!(
            out.contains("bb3(%5: i32):\n  %6 = add %5, 2"),
            "y is rebuilt from x: {out}"
        );
    }
}

#[test]
fn known_differences_decide_equality_tests() {
    // j == i + 1 in the loop: `j != i` is 1 and `j - 1 == i` is 1; `j < i` is not
    // decided (false unless i + 1 wraps).
    let src = module(
        r#"
func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 1)
bb1(%1: i32, %2: i32):
  %3 = slt %1, %0
  br %3, bb2, bb3
bb2:
  %4 = ne %2, %1
  call @putint(%4)
  %5 = sub %2, 1
  %6 = eq %5, %1
  call @putint(%6)
  %7 = slt %2, %1
  call @putint(%7)
  %8 = add %1, 1
  %9 = add %2, 1
  jump bb1(%8, %9)
bb3:
  ret 0
}
"#,
    );
    let out = same_behaviour(&src, &["affine", "dce"], "3");
    assert_eq!(out.matches("call @putint(1)").count(), 2, "{out}");
    assert!(out.contains("slt "), "{out}");
}

#[test]
fn relations_that_fail_on_some_path_are_not_claimed() {
    // j steps only on some iterations; k is reset by one path; neither keeps a
    // fixed relation to i.
    let src = module(
        r#"
func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 0, 7)
bb1(%1: i32, %2: i32, %3: i32):
  %4 = slt %1, %0
  br %4, bb2, bb5
bb2:
  %5 = call @getint()
  br %5, bb3, bb4
bb3:
  %6 = add %2, 1
  %7 = add %3, 1
  jump bb6(%6, %7)
bb4:
  jump bb6(%2, 0)
bb6(%8: i32, %9: i32):
  %10 = add %1, 1
  jump bb1(%10, %8, %9)
bb5:
  %11 = sub %2, %1
  call @putint(%11)
  %12 = sub %3, %1
  call @putint(%12)
  ret 0
}
"#,
    );
    let out = same_behaviour(&src, &["affine", "dce"], "4 1 0 1 1");
    assert!(out.contains("bb1(%1: i32, %2: i32, %3: i32)"), "{out}");
    assert!(!out.contains("call @putint(0)"), "{out}");
    assert!(!out.contains("call @putint(7)"), "{out}");
}

#[test]
fn values_of_sibling_paths_are_not_used() {
    // a + b on both arms and again after the join: the join's copy is not
    // replaced by either arm's (neither dominates it).
    let src = module(
        r#"
func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  br %0, bb1, bb2
bb1:
  %2 = add %0, %1
  call @putint(%2)
  jump bb3
bb2:
  %3 = add %1, %0
  call @putint(%3)
  jump bb3
bb3:
  %4 = add %0, %1
  call @putint(%4)
  ret 0
}
"#,
    );
    let out = same_behaviour(&src, &["affine"], "1 2");
    assert_eq!(out.matches(" = add ").count(), 3, "{out}");
}

#[test]
fn nested_loops_relate_through_the_inner_join() {
    // The inner loop adds the same amount to x and y on every path, so y - x stays
    // 7 through both loops.
    let src = module(
        r#"
func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = add %1, 7
  jump bb1(0, %1, %2)
bb1(%3: i32, %4: i32, %5: i32):
  %6 = slt %3, %0
  br %6, bb2(0, %4, %5), bb5
bb2(%7: i32, %8: i32, %9: i32):
  %10 = slt %7, %3
  br %10, bb3, bb4
bb3:
  %11 = call @getint()
  %12 = add %8, %11
  %13 = add %9, %11
  %14 = add %7, 1
  jump bb2(%14, %12, %13)
bb4:
  %15 = add %3, 1
  jump bb1(%15, %8, %9)
bb5:
  %16 = sub %5, %4
  call @putint(%16)
  ret 0
}
"#,
    );
    let out = same_behaviour(&src, &["affine", "dce"], "3 5 1 2 3 4 5 6");
    assert!(out.contains("call @putint(7)"), "{out}");
}
