//! Scalar evolution on text IR: the expected expressions and counts are worked out
//! by hand in the comments.

use super::{print, ScalarEvolution};
use crate::analysis::LoopForest;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::Type;

fn scev_of(src: &str) -> String {
    let m = ir::parse_module(src).unwrap();
    ir::verify_module(&m).unwrap();
    let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
    print(&m, f)
}

#[track_caller]
fn has(out: &str, lines: &[&str]) {
    for l in lines {
        assert!(out.lines().any(|x| x == *l), "missing `{l}` in\n{out}");
    }
}

#[test]
fn affine_and_second_order_recurrences_of_a_rotated_loop() {
    // i = 3; s = 0; do { t = s + i; i = i + 1; s = t } while (i < 10)
    let out = scev_of(
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(3, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, %1
  %4 = add %1, 1
  %5 = slt %4, 10
  br %5, bb1(%4, %3), bb2
bb2:
  ret %3
}
"#,
    );
    has(
        &out,
        &[
            "%0 = %0",
            // i takes 3..=9: no wrap.
            "%1 = {3,+,1}<nsw><bb1>",
            // s grows by i: 0, 3, 7, 12: s_k = 3k + k(k-1)/2.
            "%2 = {0,+,3,+,1}<bb1>",
            "%3 = {3,+,4,+,1}<bb1>",
            "%4 = {4,+,1}<nsw><bb1>",
            // The comparison is no integer expression.
            "%5 = %5",
            // i + 1 = 4, ..., 9 go back, 10 leaves: 6 back edges.
            "loop bb1 exit bb1: 6",
            "loop bb1: backedges 6, max 6",
        ],
    );
}

#[test]
fn step_two_with_an_inclusive_symbolic_bound_needs_a_predicate() {
    // i = 0; do { i = i + 2 } while (i <= n)
    let out = scev_of(
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0)
bb1(%1: i32):
  %2 = add %1, 2
  %3 = sle %2, %0
  br %3, bb1(%2), bb2
bb2:
  ret %1
}
"#,
    );
    // Exclusive bound b = n + 1; count ceil((max(b, 2) - 2) / 2), valid when the
    // last value below b plus 2 does not pass i32::MAX: b <= MAX - 1.
    let count = "((-1 + (2 smax (1 + (sext %0)))) /u 2) if (1 + (sext %0)) sle 2147483646";
    has(
        &out,
        &[
            &format!("loop bb1 exit bb1: {count}"),
            &format!("loop bb1: backedges {count}, max ?"),
        ],
    );
}

const DOWN_BY_THREE: &str = r#"
func @f() -> i32 {
bb0:
  jump bb1(20, 0)
bb1(%0: i32, %1: i32):
  %2 = sgt %0, 0
  br %2, bb2, bb3
bb2:
  %3 = add %0, -3
  %4 = add %1, %0
  jump bb1(%3, %4)
bb3:
  ret %1
}
"#;

#[test]
fn counting_down_by_three_with_the_exit_in_the_header() {
    // for (i = 20, s = 0; i > 0; i -= 3) s += i;
    let out = scev_of(DOWN_BY_THREE);
    assert!(out.contains("%0 = {20,+,-3}"), "{out}");
    has(
        &out,
        &[
            "%1 = {0,+,20,+,-3}<bb1>",
            // 20, 17, 14, 11, 8, 5, 2 pass the test, -1 leaves.
            "loop bb1 exit bb1: 7",
            "loop bb1: backedges 7, max 7",
        ],
    );
}

#[test]
fn a_second_order_recurrence_leaves_with_its_binomial_value() {
    let m = ir::parse_module(DOWN_BY_THREE).unwrap();
    let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops);
    let (id, _) = loops.loops().next().unwrap();
    let s = f.block_params(loops.get(id).header)[1];
    let e = se.get(s);
    let n = se.backedge_taken(id).exact.unwrap().count;
    let v = se.value_at(e, id, n).unwrap();
    // 0 + 20 * 7 - 3 * C(7, 2) = 140 - 63 = 20 + 17 + ... + 2.
    assert_eq!(se.exprs.as_const(v), Some(77));
    assert_eq!(se.exprs.ty(v), Type::I32);
}

#[test]
fn nested_loops_give_a_recurrence_starting_at_an_outer_one() {
    // for (i = 0; i < 5; i++) for (j = 0; j < 10; j++) use(i * 100 + j)
    let out = scev_of(
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0)
bb1(%1: i32):
  %2 = mul %1, 100
  jump bb2(0)
bb2(%3: i32):
  %4 = add %2, %3
  %5 = add %3, 1
  %6 = slt %5, 10
  br %6, bb2(%5), bb3
bb3:
  %7 = add %1, 1
  %8 = slt %7, 5
  br %8, bb1(%7), bb4
bb4:
  ret 0
}
"#,
    );
    has(
        &out,
        &[
            "%1 = {0,+,1}<nsw><bb1>",
            "%2 = {0,+,100}<nsw><bb1>",
            "%3 = {0,+,1}<nsw><bb2>",
            "%4 = {{0,+,100}<nsw><bb1>,+,1}<nsw><bb2>",
            "%7 = {1,+,1}<nsw><bb1>",
            "loop bb1 exit bb3: 4",
            "loop bb2 exit bb2: 9",
        ],
    );
}

#[test]
fn a_pointer_walks_as_base_plus_a_recurrence() {
    let out = scev_of(
        r#"
global @a: [i32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
func @f() -> i32 {
bb0:
  %0 = gep @a, 0, 4
  jump bb1(%0, 0)
bb1(%1: ptr, %2: i32):
  %3 = load i32, %1
  %4 = gep %1, 1, 4
  %5 = add %2, 1
  %6 = slt %5, 16
  br %6, bb1(%4, %5), bb2
bb2:
  ret %3
}
"#,
    );
    has(
        &out,
        &[
            "%0 = @a",
            "%1 = {@a,+,4}<bb1>",
            "%3 = %3",
            "%4 = {(4 + @a),+,4}<bb1>",
            "loop bb1: backedges 15, max 15",
        ],
    );
}

/// `i = s; do { i = i + d } while (i OP n)`, as text.
fn simple(start: i32, step: i32, test: &str) -> String {
    format!(
        r#"
func @f(i32) -> i32 {{
bb0(%0: i32):
  jump bb1({start})
bb1(%1: i32):
  %2 = add %1, {step}
  %3 = {test}
  br %3, bb1(%2), bb2
bb2:
  ret %1
}}
"#
    )
}

fn count(start: i32, step: i32, test: &str) -> String {
    let out = scev_of(&simple(start, step, test));
    let line = out
        .lines()
        .find(|l| l.starts_with("loop bb1 exit bb1: "))
        .unwrap();
    line["loop bb1 exit bb1: ".len()..].to_string()
}

#[test]
fn not_equal_tests_solve_modulo_two_to_the_thirty_two() {
    // 1, 2, 3, 4 go back; 5 leaves.
    assert_eq!(count(0, 1, "ne %2, 5"), "4");
    // Step 2 from 0: 2, 4, 6, 8 go back, 10 leaves.
    assert_eq!(count(0, 2, "ne %2, 10"), "4");
    // Step 2 never meets an odd bound.
    assert_eq!(count(0, 2, "ne %2, 7"), "?");
    // Step -1 from 0 to -3: -1, -2 go back.
    assert_eq!(count(0, -1, "ne %2, -3"), "2");
    // From 0 up to -1 by wrapping round: 2^32 - 2 back edges.
    assert_eq!(count(0, 1, "ne %2, -1"), "4294967294");
    // An unknown bound: n - 1 back edges modulo 2^32.
    assert_eq!(count(0, 1, "ne %2, %0"), "(zext (-1 + %0))");
    // A branch on the counter itself tests it against zero: -4, ..., -1 go back.
    assert_eq!(count(-5, 1, "add %2, 0"), "4");
}

#[test]
fn ordered_tests_count_up_and_down_by_any_step() {
    // 3, 6, 9 go back; 12 leaves.
    assert_eq!(count(0, 3, "slt %2, 10"), "3");
    // 3, 6, 9, 12 pass `<= 12`; 15 leaves.
    assert_eq!(count(0, 3, "sle %2, 12"), "4");
    // Down by 4 from 100 while >= 0: 96, ..., 0 pass (25 values).
    assert_eq!(count(100, -4, "sge %2, 0"), "25");
    // The bound on the left: 10 > i.
    assert_eq!(count(0, 1, "sgt 10, %2"), "9");
    // Testing the old value: 0..=9 pass `i < 10`.
    assert_eq!(count(0, 1, "slt %1, 10"), "10");
    // Already past the bound: leaves on the first test.
    assert_eq!(count(50, 1, "slt %2, 10"), "0");
    // Unknown bound, step 1: no predicate (the counter cannot step past MAX).
    assert_eq!(count(0, 1, "slt %2, %0"), "(-1 + (1 smax (sext %0)))");
}

#[test]
fn counts_that_need_a_wrap_are_unknown() {
    // From 0 by 2 while < MAX: 2147483646 + 2 wraps to a negative value.
    assert_eq!(count(0, 2, "slt %2, 2147483647"), "?");
    // `<= MAX` holds for every i32.
    assert_eq!(count(0, 1, "sle %2, 2147483647"), "?");
    // Down to `>= MIN` likewise.
    assert_eq!(count(0, -1, "sge %2, -2147483648"), "?");
    // Counting down while below a bound leaves only by wrapping.
    assert_eq!(count(0, -1, "slt %2, 10"), "?");
}

#[test]
fn a_counter_past_the_wrap_limit_counts_only_when_it_leaves_at_once() {
    // Up by 4 while <= MAX - 1: the first tested value, MAX, leaves.
    assert_eq!(count(2147483643, 4, "sle %2, 2147483646"), "0");
    // The mirror image: down by 4 while >= MIN + 1; the first value, MIN, leaves.
    assert_eq!(count(-2147483644, -4, "sge %2, -2147483647"), "0");
}

#[test]
fn a_wrapping_counter_is_not_exact() {
    // i + 1 != n: i takes every value up to a wrap.
    let out = scev_of(&simple(0, 1, "ne %2, %0"));
    has(&out, &["%1 = {0,+,1}<bb1>", "%2 = {1,+,1}<bb1>"]);
}

#[test]
fn loops_without_a_solvable_test_have_no_count() {
    // i = i * 2 is no recurrence; a loaded value is unknown.
    let doubling = simple(1, 1, "slt %2, 100").replace("add %1, 1", "mul %1, 2");
    let out = scev_of(&doubling);
    has(
        &out,
        &["%1 = %1", "%2 = (2 * %1)", "loop bb1: backedges ?, max ?"],
    );
    let loaded = r#"
func @f(ptr) -> i32 {
bb0(%0: ptr):
  jump bb1(0)
bb1(%1: i32):
  %2 = add %1, 1
  %3 = load i32, %0
  %4 = slt %2, %3
  br %4, bb1(%2), bb2
bb2:
  ret %1
}
"#;
    let out = scev_of(loaded);
    // The counter stays below the loaded bound (at most MAX) on the back edge,
    // so its step cannot wrap (<nsw>, from the ranges' narrowing); its count is
    // still unknown.
    has(
        &out,
        &["%1 = {0,+,1}<nsw><bb1>", "loop bb1: backedges ?, max ?"],
    );
}

#[test]
fn two_exits_give_the_least_count() {
    // do { i++; if (i == 7) break; } while (i < 100): leaves at i = 7.
    let out = scev_of(
        r#"
func @f() -> i32 {
bb0:
  jump bb1(0)
bb1(%0: i32):
  %1 = add %0, 1
  %2 = eq %1, 7
  br %2, bb3, bb2
bb2:
  %3 = slt %1, 100
  br %3, bb1(%1), bb3
bb3:
  ret %0
}
"#,
    );
    has(
        &out,
        &[
            "loop bb1 exit bb1: 6",
            "loop bb1 exit bb2: 99",
            "loop bb1: backedges 6, max 6",
        ],
    );
}

/// `if (%0 > G) { x = START; do { x = x + STEP } while (TEST x) }`, the loop
/// rotated as [`crate::passes::loops::looprotate`] leaves it.
fn guarded_loop(guard: i32, start: &str, step: i32, test: &str) -> String {
    scev_of(&format!(
        r#"
func @f(i32) -> i32 {{
bb0(%0: i32):
  %1 = sgt %0, {guard}
  br %1, bb1, bb3
bb1:
  jump bb2({start})
bb2(%2: i32):
  %3 = add %2, {step}
  %4 = {test}
  br %4, bb2(%3), bb3
bb3:
  ret 0
}}
"#
    ))
}

/// `if (a > G) { do { a = a - 1 } while (a > 3) }`: the rotated loop's count
/// `max(a - 1, 3) - 3`, where a guard `a > 3` (as the rotation leaves) shows the
/// maximum is `a - 1`, and a guard `a > 0` does not. Below either guard `a - 1`
/// cannot wrap (the preheader's jump passes `a` refined by the guard), so the
/// subtraction is done after the extension.
fn guarded_countdown(guard: i32) -> String {
    guarded_loop(guard, "%0", -1, "sgt %3, 3")
}

#[test]
fn a_guard_before_the_loop_decides_the_maximum_in_its_count() {
    has(
        &guarded_countdown(3),
        &["loop bb2 exit bb2: (-4 + (sext %0))"],
    );
    has(
        &guarded_countdown(0),
        &["loop bb2 exit bb2: (-3 + ((-1 + (sext %0)) smax 3))"],
    );
}

/// `if (n > G) { i = 0; do { i = i + 1 } while (i < n) }`: the count is
/// `max(n, 1) - 1`, and `n - 1` when the guard shows the first value tested, 1,
/// is never past the bound: a guard `n > 0` does (`1 <= n`: a start at the
/// bound walks no step, so the maximum is `n` even when `n` is 1), a guard
/// `n > -1` does not.
fn guarded_countup(guard: i32) -> String {
    guarded_loop(guard, "0", 1, "slt %3, %0")
}

#[test]
fn a_guard_putting_the_start_at_the_bound_drops_the_maximum() {
    has(
        &guarded_countup(0),
        &["loop bb2 exit bb2: (-1 + (sext %0))"],
    );
    has(
        &guarded_countup(-1),
        &["loop bb2 exit bb2: (-1 + (1 smax (sext %0)))"],
    );
}

/// The constant differences [`ScalarEvolution::constant_difference`] finds
/// between the values numbered (as printed) in `f` of `src`.
fn differences(src: &str, pairs: &[(u32, u32)]) -> Vec<Option<i64>> {
    let m = ir::parse_module(src).unwrap();
    ir::verify_module(&m).unwrap();
    let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops);
    let names = ir::text::Names::new(f);
    let mut values = Vec::new();
    for b in f.layout.blocks() {
        values.extend(f.block_params(b).iter().copied());
        values.extend(f.layout.block_insts(b).filter_map(|i| f.inst_result(i)));
    }
    let value = |n: u32| {
        *values
            .iter()
            .find(|&&v| names.value_number(v) == Some(n))
            .unwrap()
    };
    pairs
        .iter()
        .map(|&(a, b)| se.constant_difference(value(a), value(b)))
        .collect()
}

#[test]
fn constant_differences_of_recurrences_unknowns_and_pointers() {
    // A walk `%4` from a start that differs per entry (no recurrence), beside a
    // counter `%5 = {0,+,2}` and a pointer `%6 = {@a,+,8}`.
    let src = r#"
global @a: [i32; 64] = zeroinit
func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = gep @a, 0, 4
  %3 = slt %0, %1
  br %3, bb1(%0, 0, %2), bb1(%1, 0, %2)
bb1(%4: i32, %5: i32, %6: ptr):
  %7 = sub %4, -3
  %8 = add %7, 1
  %9 = add %5, 2
  %10 = add %5, 1
  %11 = gep %6, 3, 4
  %12 = gep %6, 2, 8
  %13 = mul %4, 2
  %14 = add %4, %1
  %15 = add %5, %1
  %16 = gep %6, %4, 4
  %17 = gep %6, 1, 8
  %18 = add %4, 1
  %19 = slt %9, 30
  br %19, bb1(%18, %9, %17), bb2
bb2:
  ret %8
}
"#;
    let got = differences(
        src,
        &[
            // (i - -3) + 1 - i, whatever i is, and back.
            (8, 4),
            (4, 7),
            // {2,+,2} - {1,+,2}, and back.
            (9, 10),
            (10, 9),
            // Pointers, in bytes: 12 and 16 from %6, 4 between them.
            (11, 6),
            (12, 11),
            (9, 9),
            // Not constant: 2i - i, (i + n) - i, (j + n) - j, a variable offset,
            // a pointer and an integer.
            (13, 4),
            (14, 4),
            (15, 5),
            (16, 6),
            (11, 4),
        ],
    );
    assert_eq!(
        got,
        [
            Some(4),
            Some(-3),
            Some(1),
            Some(-1),
            Some(12),
            Some(4),
            Some(0),
            None,
            None,
            None,
            None,
            None
        ]
    );
}

fn predicated_of(src: &str) -> String {
    let m = ir::parse_module(src).unwrap();
    ir::verify_module(&m).unwrap();
    let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
    super::predicated::print(&m, f)
}

/// `for (i = 0; i < n; i++) { BODY; s += t }` (`%2` the counter, `%3` the sum,
/// `%0` the bound, `%1` an invariant), the body's values numbered from `%4` and
/// `t` its last.
fn predicated_loop(body: &[&str]) -> String {
    let mut text = String::new();
    for (k, line) in body.iter().enumerate() {
        text += &format!("  %{} = {line}\n", k + 4);
    }
    let (t, n) = (body.len() + 3, body.len() + 4);
    format!(
        r#"
func @f(i32, i32) -> i32 {{
bb0(%0: i32, %1: i32):
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
{text}  %{n} = add %3, %{t}
  %{} = add %2, 1
  %{} = slt %{}, %0
  br %{}, bb1(%{}, %{n}), bb2
bb2:
  ret %{n}
}}
"#,
        n + 1,
        n + 2,
        n + 1,
        n + 2,
        n + 1
    )
}

/// t = (i * 60 + 2000000000) - (i << 2).
const WRAPPING: [&str; 4] = [
    "mul %2, 60",
    "add %4, 2000000000",
    "shl %2, 2",
    "sub %5, %6",
];

#[test]
fn predicated_affine_values_record_their_no_wrap_ranges() {
    // Each operation is exact while its mathematical value stays in i32.
    let out = predicated_of(&predicated_loop(&WRAPPING));
    has(
        &out,
        &[
            "loop bb1",
            // The counter, proven exact by its range: no predicate.
            "%2 = {0,+,1}<nsw><bb1>",
            // A sum of a varying term is no affine recurrence: not described.
            "%3 = ?",
            // The values, exact in 64 bits under the predicates below.
            "%4 = {0,+,60}<nsw><bb1>",
            "%5 = {2000000000,+,60}<nsw><bb1>",
            "%6 = {0,+,4}<nsw><bb1>",
            "%7 = {2000000000,+,56}<nsw><bb1>",
            "%8 = ?",
            "%9 = {1,+,1}<nsw><bb1>",
            // The comparison is no arithmetic.
            "%10 = ?",
            "if -2147483648 <= {0,+,60}<nsw><bb1> <= 2147483647",
            // The wrapping case: 2000000000 + 60 i passes INT_MAX for i > 2458060.
            "if -2147483648 <= {2000000000,+,60}<nsw><bb1> <= 2147483647",
            "if -2147483648 <= {0,+,4}<nsw><bb1> <= 2147483647",
            "if -2147483648 <= {2000000000,+,56}<nsw><bb1> <= 2147483647",
            "if -2147483648 <= {1,+,1}<nsw><bb1> <= 2147483647",
        ],
    );
    assert_eq!(
        out.lines().filter(|l| l.starts_with("if")).count(),
        5,
        "{out}"
    );
}

#[test]
fn predicated_products_of_recurrences_and_inexact_divisions_are_rejected() {
    let out = predicated_of(&predicated_loop(&[
        "mul %2, %2",
        "mul %2, 6",
        "sdiv %5, 4",
        "sdiv %5, 3",
        "mul %2, %1",
        "shl %2, 3",
        "ashr %9, 3",
        "add %7, %10",
        "add %11, %4",
    ]));
    has(
        &out,
        &[
            // i * i is quadratic: rejected.
            "%4 = ?",
            "%5 = {0,+,6}<nsw><bb1>",
            // 6 i / 4 is no exact division: rejected; 6 i / 3 is exact.
            "%6 = ?",
            "%7 = {0,+,2}<nsw><bb1>",
            // i times an invariant: affine, with a symbolic step.
            "%8 = {0,+,(sext %1)}<nsw><bb1>",
            // (i << 3) >> 3 is the exact division of 8 i by 8.
            "%9 = {0,+,8}<nsw><bb1>",
            "%10 = {0,+,1}<nsw><bb1>",
            "%11 = {0,+,3}<nsw><bb1>",
            // An operand not described: neither is the sum.
            "%12 = ?",
        ],
    );
    // One predicate per described operation (%5, %7 to %11, the counter's
    // step %14), none for what was rejected (nor for the counter, proven exact).
    has(
        &out,
        &["if -2147483648 <= {0,+,(sext %1)}<nsw><bb1> <= 2147483647"],
    );
    assert_eq!(
        out.lines().filter(|l| l.starts_with("if")).count(),
        7,
        "{out}"
    );
}

#[test]
fn predicated_bounds_on_the_counter() {
    // The predicates of 60 i, 60 i + 2e9, 4 i and 56 i + 2e9 as bounds on the
    // counter i: within i32 for i in [-35791394, 35791394], [-69124727, 2458060],
    // [-536870912, 536870911] and [-74062208, 2633636].
    let src = predicated_loop(&WRAPPING);
    let m = ir::parse_module(&src).unwrap();
    let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops);
    let (id, _) = loops.loops().next().unwrap();
    let mut pse = super::predicated::Predicated::new(&mut se, id);
    let names = ir::text::Names::new(f);
    let v = |name: &str| {
        f.layout
            .blocks()
            .flat_map(|b| {
                let insts = f.layout.block_insts(b).filter_map(|i| f.inst_result(i));
                f.block_params(b)
                    .iter()
                    .copied()
                    .chain(insts)
                    .collect::<Vec<_>>()
            })
            .find(|&v| names.value(v) == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let x = pse.get(v("%2")).unwrap();
    let t = pse.get(v("%7")).unwrap();
    assert_eq!(pse.linear_in(t, x), Some((56, 2_000_000_000)));
    let bounds = pse.bounds_in(x).unwrap();
    let all = (i64::from(i32::MIN), i64::from(i32::MAX));
    assert_eq!(
        super::predicated::range_of(&bounds, all),
        Some((-35_791_394, 2_458_060))
    );
    // An invariant is no constant coefficient: no bound from it.
    let k = pse.get(v("%1")).unwrap();
    assert_eq!(pse.linear_in(k, x), None);
    // A predicate on it leaves no bounds on the counter.
    pse.add_predicate(super::predicated::NoWrap {
        e: k,
        lo: 0,
        hi: 10,
    });
    assert!(pse.bounds_in(x).is_none());
}

#[test]
fn constant_steps_of_affine_recurrences() {
    // An outer loop bb1 over `j` (step -3) around an inner loop bb2 walking a
    // pointer by two geps of 4 bytes each, with `i` (step 1), `s += i` (second
    // order) and the invariant `%0`.
    let src = r#"
global @a: [i32; 64] = zeroinit
func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = gep @a, 0, 4
  jump bb1(30)
bb1(%2: i32):
  jump bb2(%1, 0, 0)
bb2(%3: ptr, %4: i32, %5: i32):
  %6 = load i32, %3
  %7 = gep %3, 1, 4
  %8 = gep %7, 1, 4
  %9 = add %4, 1
  %10 = add %5, %4
  %11 = slt %9, 8
  br %11, bb2(%8, %9, %10), bb3
bb3:
  %12 = sub %2, 3
  %13 = sgt %12, 0
  br %13, bb1(%12), bb4
bb4:
  ret %10
}
"#;
    let m = ir::parse_module(src).unwrap();
    ir::verify_module(&m).unwrap();
    let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops);
    let names = ir::text::Names::new(f);
    let v = |name: &str| {
        f.layout
            .blocks()
            .flat_map(|b| {
                let insts = f.layout.block_insts(b).filter_map(|i| f.inst_result(i));
                f.block_params(b)
                    .iter()
                    .copied()
                    .chain(insts)
                    .collect::<Vec<_>>()
            })
            .find(|&v| names.value(v) == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let header = |b: &str| {
        loops
            .loops()
            .find(|(_, l)| names.block(l.header) == b)
            .unwrap()
            .0
    };
    let (outer, inner) = (header("bb1"), header("bb2"));
    assert_eq!(se.constant_step(v("%3"), inner), Some(8));
    assert_eq!(se.constant_step(v("%8"), inner), Some(8));
    assert_eq!(se.constant_step(v("%4"), inner), Some(1));
    assert_eq!(se.constant_step(v("%2"), outer), Some(-3));
    // Not a recurrence of this loop, of second order, invariant, not analysed.
    assert_eq!(se.constant_step(v("%2"), inner), None);
    assert_eq!(se.constant_step(v("%4"), outer), None);
    assert_eq!(se.constant_step(v("%5"), inner), None);
    assert_eq!(se.constant_step(v("%0"), inner), None);
    assert_eq!(se.constant_step(v("%6"), inner), None);
}

#[test]
fn outer_recurrences_as_header_parameters() {
    // for (i = 2; ...; i += 1) { for (j = 0; ...; j += 1) t = i * n + j + 5 }
    // and, after the inner loop, k = j (its exit value, a recurrence of bb2).
    let src = r#"
func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  jump bb1(2)
bb1(%2: i32):
  jump bb2(0)
bb2(%3: i32):
  %4 = mul %2, %1
  %5 = add %4, %3
  %6 = add %5, 5
  %7 = add %3, 1
  %8 = slt %7, %0
  br %8, bb2(%7), bb3
bb3:
  %9 = add %2, 1
  %10 = slt %9, %0
  br %10, bb1(%9), bb4
bb4:
  ret %6
}
"#;
    let m = ir::parse_module(src).unwrap();
    ir::verify_module(&m).unwrap();
    let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops);
    let names = ir::text::Names::new(f);
    let value = |name: &str| {
        f.layout
            .blocks()
            .flat_map(|b| {
                let insts = f.layout.block_insts(b).filter_map(|i| f.inst_result(i));
                f.block_params(b)
                    .iter()
                    .copied()
                    .chain(insts)
                    .collect::<Vec<_>>()
            })
            .find(|&v| names.value(v) == name)
            .unwrap()
    };
    let header = |b: &str| {
        loops
            .loops()
            .find(|(_, l)| names.block(l.header) == b)
            .unwrap()
            .0
    };
    let (outer, inner) = (header("bb1"), header("bb2"));
    let show = |se: &ScalarEvolution, e| se.exprs.get(e).clone();
    // %6 = {{2n+5,+,n}<bb1>,+,1}<bb2>: its start is the outer recurrence
    // {2n+5,+,n}<bb1> = %2 * n + 5, written with the parameter %2.
    let t = se.get(value("%6"));
    let (l, ops) = se.exprs.as_addrec(t).map(|(l, o)| (l, o.to_vec())).unwrap();
    assert_eq!(l, inner);
    let start = se.with_header_parameters(ops[0], inner).unwrap();
    let (f2, n) = (value("%2"), value("%1"));
    let (p, nn) = (
        se.exprs.unknown(Type::I32, f2),
        se.exprs.unknown(Type::I32, n),
    );
    let pn = se.exprs.mul(&loops, f, &[p, nn], false);
    let five = se.exprs.constant(Type::I32, 5);
    let expected = se.exprs.add(&loops, f, &[pn, five], false);
    assert_eq!(start, expected, "{:?}", show(&se, start));
    // Invariants stay; the step 1 too.
    assert_eq!(se.with_header_parameters(ops[1], inner), Some(ops[1]));
    // A recurrence of the loop itself, or of a loop not around it, has none.
    let j = se.get(value("%3"));
    assert_eq!(se.with_header_parameters(j, inner), None);
    assert_eq!(se.with_header_parameters(j, outer), None);
}

#[test]
fn a_parameter_every_predecessor_passes_one_value_is_that_value() {
    // Rotated: the latch bb3 receives the step `i + 1` as a parameter and passes
    // it back; bb4's parameter gets `i` from both arms of a branch, bb5's gets
    // `i` from one predecessor and 7 from the other.
    let out = scev_of(
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0)
bb1(%1: i32):
  %2 = add %1, 1
  %3 = slt %1, %0
  br %3, bb4(%1), bb4(%1)
bb4(%4: i32):
  br %3, bb5(%4), bb5(7)
bb5(%5: i32):
  jump bb3(%2)
bb3(%6: i32):
  %7 = slt %6, 10
  br %7, bb1(%6), bb2
bb2:
  ret %5
}
"#,
    );
    has(
        &out,
        &[
            // i = 0..=8 and i + 1 = 1..=9: no wrap.
            "%1 = {0,+,1}<nsw><bb1>",
            "%4 = {0,+,1}<nsw><bb1>",
            "%5 = %5",
            "%6 = {1,+,1}<nsw><bb1>",
        ],
    );
}

#[test]
fn a_parameter_carrying_the_latchs_recurrence_is_one_step_behind_it() {
    // q = n; i = 1; do { t = i * 8 + n; i = i + 1; q = t } while (i < 7): the latch
    // passes q `{n+8,+,8}`, and q starts at n = (n + 8) - 8, so q is `{n,+,8}`.
    // With a start of n + 1 it is not (q = n+1, n+8, n+16, ...): no recurrence.
    let src = r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(1, %0)
bb1(%1: i32, %2: i32):
  %3 = shl %1, 3
  %4 = add %0, %3
  %5 = add %1, 1
  %6 = slt %5, 7
  br %6, bb1(%5, %4), bb2
bb2:
  ret %2
}
"#;
    let out = scev_of(src);
    has(&out, &["%2 = {%0,+,8}<bb1>", "%4 = {(8 + %0),+,8}<bb1>"]);
    let off = src.replace("jump bb1(1, %0)", "%9 = add %0, 1\n  jump bb1(1, %9)");
    let out = scev_of(&off);
    // (The printer numbers values afresh: q is %3 there.)
    has(&out, &["%3 = %3", "%5 = {(8 + %0),+,8}<bb1>"]);
}

#[test]
fn linear_forms_in_a_counter_modulo_two_to_the_thirty_two() {
    // i = {%0,+,1} from an unknown start; g = 3 * i + 5 = {3 %0 + 5,+,3} is
    // 3 i + 5; h = i * 65536 * 65536 - i wraps to -i = {-%0,+,-1}, which is
    // -1 i + 0 modulo 2^32; j = {7,+,2} beside it is 2 i + (7 - 2 %0): no
    // constant c; s += i is of second order; k * i (k unknown) has no constant a.
    let src = r#"
func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  jump bb1(%0, 7, 0)
bb1(%2: i32, %3: i32, %4: i32):
  %5 = mul %2, 3
  %6 = add %5, 5
  %7 = mul %2, 65536
  %8 = mul %7, 65536
  %9 = sub %8, %2
  %10 = mul %2, %1
  %11 = add %2, 1
  %12 = add %3, 2
  %13 = add %4, %2
  %14 = slt %11, 100
  br %14, bb1(%11, %12, %13), bb2
bb2:
  ret %13
}
"#;
    let m = ir::parse_module(src).unwrap();
    ir::verify_module(&m).unwrap();
    let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops);
    let names = ir::text::Names::new(f);
    let v = |name: &str| {
        f.layout
            .blocks()
            .flat_map(|b| {
                let insts = f.layout.block_insts(b).filter_map(|i| f.inst_result(i));
                f.block_params(b)
                    .iter()
                    .copied()
                    .chain(insts)
                    .collect::<Vec<_>>()
            })
            .find(|&v| names.value(v) == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let (lp, _) = loops.loops().next().unwrap();
    let i = se.get(v("%2"));
    let mut linear = |name: &str| {
        let e = se.get(v(name));
        se.exprs.linear_in(&loops, f, e, i, lp)
    };
    assert_eq!(linear("%6"), Some((3, 5)));
    assert_eq!(linear("%9"), Some((-1, 0)));
    assert_eq!(linear("%11"), Some((1, 1)));
    assert_eq!(linear("%3"), None);
    assert_eq!(linear("%4"), None);
    assert_eq!(linear("%10"), None);
    assert_eq!(linear("%1"), None);
}

/// Each integer value of the first defined function of `src` with its expression,
/// the values asked for in block order, or in reverse when `reverse`.
fn expressions_asked_in_order(src: &str, reverse: bool) -> Vec<String> {
    let m = ir::parse_module(src).unwrap();
    let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops);
    let names = ir::text::Names::new(f);
    let mut values: Vec<ir::Value> = Vec::new();
    for b in f.layout.blocks() {
        values.extend(f.block_params(b));
        values.extend(f.layout.block_insts(b).filter_map(|i| f.inst_result(i)));
    }
    values.retain(|&v| matches!(f.value_type(v), Type::I32 | Type::I64 | Type::Ptr));
    let asked: Vec<ir::Value> = if reverse {
        values.iter().rev().copied().collect()
    } else {
        values.clone()
    };
    for &v in &asked {
        se.get(v);
    }
    values
        .iter()
        .map(|&v| {
            let e = se.get(v);
            format!("{} = {}", names.value(v), se.display(&m, &names, e))
        })
        .collect()
}

/// A nest: the outer loop carries `s += i * j` summed by the inner one and a
/// pointer walked by both; the inner loop's counter starts at the outer's.
const NEST: &str = r#"
func @f(i32, ptr) -> i32 {
bb0(%0: i32, %1: ptr):
  jump bb1(0, 0, %1)
bb1(%2: i32, %3: i32, %4: ptr):
  jump bb2(%2, %3, %4)
bb2(%5: i32, %6: i32, %7: ptr):
  %8 = mul %2, %5
  %9 = add %6, %8
  %10 = gep %7, 1, 4
  %11 = add %5, 1
  %12 = slt %11, %0
  br %12, bb2(%11, %9, %10), bb3
bb3:
  %13 = add %2, 1
  %14 = gep %10, 2, 4
  %15 = slt %13, %0
  br %15, bb1(%13, %9, %14), bb4
bb4:
  ret %9
}
"#;

#[test]
fn expressions_do_not_depend_on_the_order_values_are_asked_in() {
    // A header parameter stands for itself while its latch argument is built;
    // what was built from it then is rebuilt, and the rest kept. Either way
    // round, every value gets the expression it gets alone.
    // A counter and a sum of it carried together, each other's latch argument
    // built while the other stands for itself.
    let crossed = r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = add %1, 1
  %4 = add %2, %3
  %5 = slt %3, %0
  br %5, bb1(%3, %4), bb2
bb2:
  ret %4
}
"#;
    for src in [NEST, crossed] {
        let forward = expressions_asked_in_order(src, false);
        let backward = expressions_asked_in_order(src, true);
        assert_eq!(forward, backward);
    }
    // The inner counter is a recurrence of the inner loop starting at the outer
    // counter: what a header parameter is built from is kept right.
    let nest = expressions_asked_in_order(NEST, true);
    assert!(
        nest.iter()
            .any(|l| l == "%11 = {{1,+,1}<nsw><bb1>,+,1}<nsw><bb2>"),
        "{nest:#?}"
    );
}

#[test]
fn what_a_header_parameter_does_not_depend_on_stays_known_after_it() {
    // s = s + i in a loop counting i: building s builds i on the way, while s
    // stands for itself; i does not depend on s, so asking for it afterwards
    // builds nothing more.
    let m = ir::parse_module(
        r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, %1
  %4 = add %1, 1
  %5 = slt %4, %0
  br %5, bb1(%4, %3), bb2
bb2:
  ret %3
}
"#,
    )
    .unwrap();
    let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops);
    let block = f.layout.blocks().nth(1).unwrap();
    let (i, s) = (f.block_params(block)[0], f.block_params(block)[1]);
    let s_expr = se.get(s);
    assert!(se
        .exprs
        .as_addrec(s_expr)
        .is_some_and(|(_, ops)| ops.len() == 3));
    let known = se.analysed();
    let i_expr = se.get(i);
    assert_eq!(se.analysed(), known, "i was built again");
    assert!(se
        .exprs
        .as_addrec(i_expr)
        .is_some_and(|(_, ops)| ops.len() == 2));
}

/// The expander's signed maximum of two `i32` values moved by constants
/// (`smax(sext(a) + cx, sext(b) + cy)`, where `a + cx` may leave `i32`) and its
/// zero extension, run in the interpreter on values at the ends of `i32`: each
/// result printed as its low word and its quotient by 2^32, against the same
/// computed here in `i64`.
#[test]
fn wide_maximum_and_zero_extension_expand_exactly() {
    use super::expand::Expander;
    use ir::{BinOp, InstKind, UnOp};
    const SRC: &str = "declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  ret 0
}
";
    // An expression of the two numbers read, and its value for them.
    type Build = dyn Fn(&mut ScalarEvolution, ir::Value, ir::Value) -> super::ExprId;
    let check = |build: &Build, value: &dyn Fn(i64, i64) -> i64| {
        let mut m = ir::parse_module(SRC).unwrap();
        let main = m.funcs.keys().find(|&k| m.funcs[k].name == "main").unwrap();
        let callee = |name: &str| m.funcs.keys().find(|&k| m.funcs[k].name == name).unwrap();
        let (putint, putch) = (callee("putint"), callee("putch"));
        let (exprs, e, ret) = {
            let f = &m.funcs[main];
            let cfg = ControlFlowGraph::compute(f);
            let dt = DominatorTree::compute(f, &cfg);
            let loops = LoopForest::compute(f, &cfg, &dt);
            let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops);
            let vals: Vec<ir::Value> = f
                .layout
                .block_insts(f.entry_block())
                .filter_map(|i| f.inst_result(i))
                .collect();
            let e = build(&mut se, vals[0], vals[1]);
            let ret = f.terminator(f.entry_block()).unwrap();
            (std::mem::take(&mut se.exprs), e, ret)
        };
        let f = &mut m.funcs[main];
        let mut ex = Expander::new(&exprs, ret, ret, 64);
        let r = ex.expand(f, e, &|_, _| true).expect("expands");
        let emit = |f: &mut ir::Function, kind: InstKind, ty: Type| {
            let i = f.insert_inst_before(ret, kind, ty);
            f.inst_result(i)
        };
        let k = f.iconst(65536);
        let k = emit(
            f,
            InstKind::Unary {
                op: UnOp::SExt,
                arg: k,
            },
            Type::I64,
        )
        .unwrap();
        let two32 = emit(
            f,
            InstKind::Binary {
                op: BinOp::Mul64,
                args: [k, k],
            },
            Type::I64,
        );
        let q = emit(
            f,
            InstKind::Binary {
                op: BinOp::SDiv64,
                args: [r, two32.unwrap()],
            },
            Type::I64,
        );
        let lo = emit(
            f,
            InstKind::Unary {
                op: UnOp::Trunc,
                arg: r,
            },
            Type::I32,
        )
        .unwrap();
        let hi = emit(
            f,
            InstKind::Unary {
                op: UnOp::Trunc,
                arg: q.unwrap(),
            },
            Type::I32,
        )
        .unwrap();
        let space = f.iconst(32);
        for arg in [lo, space, hi] {
            let callee = if arg == space { putch } else { putint };
            emit(
                f,
                InstKind::Call {
                    callee,
                    args: Box::new([arg]),
                },
                Type::Void,
            );
        }
        ir::verify_module(&m).unwrap();
        let ends = [
            i32::MIN,
            i32::MIN + 1,
            -7,
            -1,
            0,
            1,
            5,
            i32::MAX - 1,
            i32::MAX,
        ];
        for a in ends {
            for b in ends {
                let (out, _) = crate::passes::testutil::exec(&m, &format!("{a} {b}"));
                let v = value(a.into(), b.into());
                let want = format!("{} {}", v as i32, (v / (1i64 << 32)) as i32);
                assert_eq!(out, want, "a = {a}, b = {b}\n{}", ir::print_module(&m));
            }
        }
    };
    for (cx, cy) in [(0, 1), (1, 0), (0, -1), (-1, 0), (3, -5), (-5, 3), (7, 7)] {
        let moved = move |se: &mut ScalarEvolution, v: ir::Value, c: i64| {
            let (loops, f) = (se.loops, se.f);
            let x = se.get(v);
            let x = se.exprs.sext(loops, f, x);
            let c = se.exprs.constant(Type::I64, c);
            se.exprs.add(loops, f, &[x, c], true)
        };
        check(
            &move |se, a, b| {
                let (x, y) = (moved(se, a, cx), moved(se, b, cy));
                se.exprs.smax(x, y)
            },
            &move |a, b| (a + cx).max(b + cy),
        );
        // Against a constant, either side.
        check(
            &move |se, a, _| {
                let x = moved(se, a, cx);
                let y = se.exprs.constant(Type::I64, cy * 1000);
                se.exprs.smax(x, y)
            },
            &move |a, _| (a + cx).max(cy * 1000),
        );
    }
    check(
        &|se, a, _| {
            let x = se.get(a);
            se.exprs.zext(x)
        },
        &|a, _| i64::from(a as i32 as u32),
    );
}

#[test]
fn a_chain_of_squarings_stays_small() {
    // %k = %(k-1) * %(k-1), forty times: as one flat product the last would have
    // 2^40 factors. A product takes in at most 32 factors of the products among
    // its operands, and a value whose expression would exceed 4096 nodes as a
    // tree is left unknown.
    let mut body = String::new();
    for k in 1..=40 {
        body += &format!("  %{k} = mul %{p}, %{p}\n", p = k - 1);
    }
    let out = scev_of(&format!(
        "func @f(i32) -> i32 {{\nbb0(%0: i32):\n{body}  ret %40\n}}\n"
    ));
    has(
        &out,
        &[
            "%2 = (%0 * %0 * %0 * %0)",
            // 32 factors flattened, then products of products.
            "%5 = (%0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0 * %0)",
            // 2^12 factors and the products holding them: beyond the limit.
            "%12 = %12",
            "%13 = (%12 * %12)",
            "%40 = (%36 * %36 * %36 * %36 * %36 * %36 * %36 * %36 * %36 * %36 * %36 * %36 * %36 * %36 * %36 * %36)",
        ],
    );
    assert!(out.len() < 100_000, "{} bytes printed", out.len());
}

/// Each loop's bound from its accesses ([`ScalarEvolution::max_count_from_accesses`]),
/// in the order of the loops' headers.
fn access_bounds(src: &str) -> Vec<Option<i64>> {
    let m = ir::parse_module(src).unwrap();
    ir::verify_module(&m).unwrap();
    let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops);
    let sizes = crate::analysis::deref::global_sizes(&m);
    let mut ids: Vec<_> = loops.loops().map(|(id, l)| (l.header, id)).collect();
    ids.sort();
    ids.into_iter()
        .map(|(_, id)| se.max_count_from_accesses(id, &sizes))
        .collect()
}

/// Rows of `int a[7][6]` (168 bytes) zeroed by a pointer stepping two rows (48
/// bytes), the exit test against an unknown `n`.
const ROWS: &str = r#"
global @a: [i32; 42] = zeroinit

declare @getint() -> i32

func @f() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, @a)
bb1(%1: i32, %2: ptr):
  store 0, %2
  %3 = gep %2, 5, 4
  store 0, %3
  %4 = add %1, 2
  %5 = slt %4, %0
  %6 = gep %2, 2, 24
  br %5, bb1(%4, %6), bb2
bb2:
  ret 0
}
"#;

#[test]
fn an_access_in_the_header_bounds_the_loop_by_its_last_iteration_in_bounds() {
    // a[i][5] is at 48k + 20: in bounds while 48k + 24 <= 168, k <= 3. Iteration
    // 4 would reach the store, so it never starts: at most 3 back edges.
    assert_eq!(access_bounds(ROWS), vec![Some(3)]);
    // Without the store at offset 20, a[i][0] (48k + 4 <= 168) bounds it too.
    assert_eq!(
        access_bounds(&ROWS.replace("  store 0, %3\n", "")),
        vec![Some(3)]
    );
    // A larger object, a larger bound: 48k + 24 <= 4 * 420, k <= 34.
    assert_eq!(
        access_bounds(&ROWS.replace("[i32; 42]", "[i32; 420]")),
        vec![Some(34)]
    );
    // A call before the access might not return: iteration 4 may start.
    let call_first = ROWS.replace("  store 0, %2\n", "  %9 = call @getint()\n  store 0, %2\n");
    assert_eq!(access_bounds(&call_first), vec![Some(4)]);
}

#[test]
fn an_access_after_the_header_bounds_the_loop_one_iteration_later() {
    // The stores move to a block of their own that every iteration passes.
    let src = ROWS.replace(
        "bb1(%1: i32, %2: ptr):\n  store 0, %2\n",
        "bb1(%1: i32, %2: ptr):\n  jump bb3\nbb3:\n  store 0, %2\n",
    );
    assert_eq!(access_bounds(&src), vec![Some(4)]);
}

#[test]
fn accesses_that_not_every_iteration_makes_bound_nothing() {
    // The stores only when `i < 3`: the other iterations go round without them.
    let src = ROWS
        .replace(
            "bb1(%1: i32, %2: ptr):\n  store 0, %2\n",
            "bb1(%1: i32, %2: ptr):\n  %7 = slt %1, 3\n  br %7, bb3, bb4\nbb3:\n  store 0, %2\n",
        )
        .replace("  store 0, %3\n", "  store 0, %3\n  jump bb4\nbb4:\n");
    assert_eq!(access_bounds(&src), vec![None]);
    // An array parameter: its size is unknown.
    let param = ROWS
        .replace(
            "func @f() -> i32 {\nbb0:",
            "func @f(ptr) -> i32 {\nbb0(%8: ptr):",
        )
        .replace("jump bb1(0, @a)", "jump bb1(0, %8)");
    assert_eq!(access_bounds(&param), vec![None]);
}

#[test]
fn a_local_array_walked_down_bounds_the_loop_by_its_first_element() {
    // p = &x[9]; do { *p = 0; p--; } while (p != q): x[9 - k] in bounds while
    // 36 - 4k >= 0, k <= 9.
    let out = access_bounds(
        r#"
declare @getint() -> i32

func @f() -> i32 {
bb0:
  %0 = alloc [i32; 10]
  %1 = gep %0, 9, 4
  %2 = call @getint()
  %3 = gep %0, %2, 4
  jump bb1(%1)
bb1(%4: ptr):
  store 0, %4
  %5 = gep %4, -1, 4
  %6 = ne %5, %3
  br %6, bb1(%5), bb2
bb2:
  ret 0
}
"#,
    );
    assert_eq!(out, vec![Some(9)]);
}

/// An outer loop stepping a pointer into `b` two words a trip, around an inner
/// loop walking `a` until a zero.
const WALK_NEST: &str = r#"
global @a: [i32; 42] = zeroinit
global @b: [i32; 42] = zeroinit

declare @getint() -> i32

func @f() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, @b)
bb1(%1: i32, %8: ptr):
  jump bb2(@a)
bb2(%2: ptr):
  store %1, %2
  store %1, %8
  %3 = gep %2, 1, 4
  %4 = load i32, %3
  %5 = ne %4, 0
  br %5, bb2(%3), bb3
bb3:
  %6 = add %1, 1
  %7 = slt %6, %0
  %9 = gep %8, 2, 4
  br %7, bb1(%6, %9), bb4
bb4:
  ret 0
}
"#;

#[test]
fn an_inner_loops_accesses_bound_the_loop_they_step_in() {
    // Each outer iteration enters the inner loop, whose header stores to
    // b[2i] (8 bytes a step, of the outer loop: in bounds while 8i + 4 <= 168,
    // i <= 20; the store is after the outer header, so at most 21 back edges)
    // and to a[k] (4 bytes a step of the inner loop). The load of a[k + 1] bounds
    // the inner loop: in bounds while 4k + 8 <= 168, k <= 40.
    assert_eq!(access_bounds(WALK_NEST), vec![Some(21), Some(40)]);
    // Stepping through the inner loop, a[k] does not bound the outer one.
    let inner_only = WALK_NEST.replace("  store %1, %8\n", "");
    assert_eq!(access_bounds(&inner_only), vec![None, Some(40)]);
}
