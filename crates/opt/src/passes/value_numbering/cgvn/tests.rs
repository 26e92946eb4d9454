//! Textual-IR tests of the complete GVN: the paper's Figure 1, which hash-based GVN
//! cannot do, and the equalities it must not claim.

use super::congruence_classes;
use crate::analysis::Purity;
use crate::passes::testutil::{check, run, same_behaviour};

/// Figure 1 (a) of the paper: `if (…) x0 = a + 1 else x1 = b + 1`; at the join
/// `c = φ(a, b)`, `x2 = φ(x0, x1)`, then `y0 = c + 1`. `x2 == y0` on every path.
const FIG1A: &str = r#"
declare @putint(i32) -> void

func @fig1a(i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32):
  br %2, bb1, bb2
bb1:
  %3 = add %0, 1
  jump bb3(%0, %3)
bb2:
  %4 = add %1, 1
  jump bb3(%1, %4)
bb3(%5: i32, %6: i32):
  %7 = add %5, 1
  %8 = sub %6, %7
  call @putint(%8)
  ret
}
"#;

/// Figure 1 (b): a loop with `x2 = φ(x0, x1)`, `y2 = φ(y0, y1)`, `y0 = x0 + 1`,
/// `x1 = x2 + 1`, `y1 = y2 + 1`: `x1 == y2` in every iteration.
const FIG1B: &str = r#"
declare @putint(i32) -> void

func @fig1b(i32, i32) -> void {
bb0(%0: i32, %1: i32):
  %2 = add %0, 1
  jump bb1(%0, %2)
bb1(%3: i32, %4: i32):
  %5 = add %3, 1
  %6 = add %4, 1
  %7 = sub %5, %4
  call @putint(%7)
  %8 = slt %5, %1
  br %8, bb1(%5, %6), bb2
bb2:
  ret
}
"#;

/// Figure 1 (c): two pairs of parameters swapped on every iteration, mutually
/// dependent: `a1 = φ(b0, b1)`, `b1 = φ(a0, a1)`, `x1 = φ(y0, y1)`,
/// `y1 = φ(x0, x1)` with `x0 = a0 + 1`, `y0 = b0 + 1`; then `z0 = a1 + 1 == x1`.
const FIG1C: &str = r#"
declare @putint(i32) -> void

func @fig1c(i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32):
  %3 = add %0, 1
  %4 = add %1, 1
  jump bb1(%1, %0, %4, %3, 0)
bb1(%5: i32, %6: i32, %7: i32, %8: i32, %9: i32):
  %10 = add %5, 1
  %11 = sub %7, %10
  call @putint(%11)
  %12 = add %9, 1
  %13 = slt %12, %2
  br %13, bb1(%6, %5, %8, %7, %12), bb2
bb2:
  ret
}
"#;

/// Adds a `@main` calling `@name` with `args` (for running a figure).
fn with_main(src: &str, name: &str, args: &str) -> String {
    format!("{src}\nfunc @main() -> i32 {{\nbb0:\n  call @{name}({args})\n  ret 0\n}}\n")
}

/// The congruence classes of the first function of `src`, as printed value names.
fn classes(src: &str) -> Vec<Vec<String>> {
    let m = ir::parse_module(src).unwrap();
    let purity = Purity::compute(&m);
    let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
    // Values are numbered densely in layout order by both parser and printer, so a
    // value's index is its printed number.
    congruence_classes(f, &purity)
        .into_iter()
        .map(|c| c.iter().map(|v| format!("%{}", v.index())).collect())
        .collect()
}

use ir::EntityRef;

#[test]
fn figure_1a_join_parameter_equals_an_expression() {
    assert!(classes(FIG1A).contains(&vec!["%6".to_string(), "%7".to_string()]));
    check(
        &["cgvn"],
        FIG1A,
        r#"
declare @putint(i32) -> void

func @fig1a(i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32):
  br %2, bb1, bb2
bb1:
  jump bb3(%0)
bb2:
  jump bb3(%1)
bb3(%3: i32):
  call @putint(0)
  ret
}
"#,
    );
    same_behaviour(&with_main(FIG1A, "fig1a", "3, 8, 1"), &["cgvn"], "");
}

#[test]
fn figure_1b_loop_parameter_equals_the_incremented_other() {
    assert!(classes(FIG1B).contains(&vec!["%4".to_string(), "%5".to_string()]));
    check(
        &["cgvn"],
        FIG1B,
        r#"
declare @putint(i32) -> void

func @fig1b(i32, i32) -> void {
bb0(%0: i32, %1: i32):
  jump bb1(%0)
bb1(%2: i32):
  %3 = add %2, 1
  call @putint(0)
  %4 = slt %3, %1
  br %4, bb1(%3), bb2
bb2:
  ret
}
"#,
    );
    same_behaviour(&with_main(FIG1B, "fig1b", "2, 9"), &["cgvn"], "");
}

#[test]
fn figure_1c_mutually_dependent_parameter_pairs() {
    // x1 (%7) and z0 = a1 + 1 (%10) are congruent; so are y1 (%8) and b1 + 1.
    assert!(classes(FIG1C).contains(&vec!["%7".to_string(), "%10".to_string()]));
    let out = run(FIG1C, &["cgvn"]);
    assert!(out.contains("call @putint(0)"), "{out}");
    assert!(!out.contains("sub"), "{out}");
    same_behaviour(&with_main(FIG1C, "fig1c", "4, 11, 5"), &["cgvn"], "");
}

#[test]
fn hash_gvn_alone_finds_none_of_figure_1() {
    for src in [FIG1A, FIG1B, FIG1C] {
        let out = run(src, &["gvn"]);
        assert!(out.contains("sub"), "{out}");
        assert!(!out.contains("putint(0)"), "{out}");
    }
}

#[test]
fn different_increments_are_not_equal() {
    // Figure 1 (a) with `b + 2` on one side: x2 is not c + 1.
    let src = FIG1A.replace("%4 = add %1, 1", "%4 = add %1, 2");
    assert!(classes(&src).is_empty(), "{:?}", classes(&src));
    check(&["cgvn"], &src, &src);
    // Figure 1 (b) where y steps by 2: x1 == y2 only in the first iteration.
    let src = FIG1B.replace("%6 = add %4, 1", "%6 = add %4, 2");
    let out = run(&src, &["cgvn"]);
    assert!(out.contains("sub"), "{out}");
    same_behaviour(&with_main(&src, "fig1b", "2, 9"), &["cgvn"], "");
}

#[test]
fn parameters_equal_in_the_first_iteration_only_stay_apart() {
    // p = φ(a, L) and q = φ(a, p) are both a when the loop is entered, but q lags
    // one iteration behind p; L is a fresh value each time round.
    let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @f(i32) -> void {
bb0(%0: i32):
  jump bb1(%0, %0, 0)
bb1(%1: i32, %2: i32, %3: i32):
  %4 = sub %1, %2
  call @putint(%4)
  %5 = call @getint()
  %6 = add %3, 1
  %7 = slt %6, 4
  br %7, bb1(%5, %1, %6), bb2
bb2:
  ret
}

func @main() -> i32 {
bb0:
  call @f(7)
  ret 0
}
"#;
    assert!(classes(src).is_empty(), "{:?}", classes(src));
    let out = same_behaviour(src, &["cgvn"], "10 20 30 40");
    assert!(out.contains("sub %1, %2"), "{out}");
}

#[test]
fn a_swap_is_not_an_identity() {
    // a1 = φ(a0, b1), b1 = φ(b0, a1): the pair swaps each iteration, so neither is
    // ever a0 or b0 on every path, and they are not equal to each other.
    let src = r#"
declare @putint(i32) -> void

func @f(i32, i32) -> void {
bb0(%0: i32, %1: i32):
  jump bb1(%0, %1, 0)
bb1(%2: i32, %3: i32, %4: i32):
  %5 = sub %2, %0
  call @putint(%5)
  %6 = sub %2, %3
  call @putint(%6)
  %7 = add %4, 1
  %8 = slt %7, 3
  br %8, bb1(%3, %2, %7), bb2
bb2:
  ret
}

func @main() -> i32 {
bb0:
  call @f(1, 5)
  ret 0
}
"#;
    let out = same_behaviour(src, &["cgvn"], "");
    assert_eq!(out.matches("sub").count(), 2, "{out}");
}

#[test]
fn comparisons_and_differences_of_congruent_values_fold() {
    // In Figure 1 (b), x1 < y2, x1 == y2, x1 - y2 and y2 - x1 are constants.
    let src = FIG1B.replace(
        "  %7 = sub %5, %4\n  call @putint(%7)\n",
        "  %7 = sub %5, %4\n  call @putint(%7)\n  %20 = slt %5, %4\n  call @putint(%20)\n  %21 = eq %4, %5\n  call @putint(%21)\n  %22 = sub %4, %5\n  call @putint(%22)\n",
    );
    let out = run(&src, &["cgvn"]);
    assert_eq!(out.matches("call @putint(0)").count(), 3, "{out}");
    assert_eq!(out.matches("call @putint(1)").count(), 1, "{out}");
}

#[test]
fn divisions_are_merged_but_never_rebuilt_at_a_join() {
    // x2 = φ(a / b, c / d) is `p / q` for the join's p = φ(a, c), q = φ(b, d): the
    // later `p / q` is x2 (it was computed on every path), but x2 itself is not
    // replaced by a division at the top of the join (the divisor may be zero).
    let src = r#"
declare @putint(i32) -> void

func @f(i32, i32, i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32, %3: i32, %4: i32):
  br %4, bb1, bb2
bb1:
  %5 = sdiv %0, %1
  jump bb3(%0, %1, %5)
bb2:
  %6 = sdiv %2, %3
  jump bb3(%2, %3, %6)
bb3(%7: i32, %8: i32, %9: i32):
  %10 = sdiv %7, %8
  %11 = add %9, %10
  call @putint(%11)
  ret
}
"#;
    check(
        &["cgvn"],
        src,
        r#"
declare @putint(i32) -> void

func @f(i32, i32, i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32, %3: i32, %4: i32):
  br %4, bb1, bb2
bb1:
  %5 = sdiv %0, %1
  jump bb3(%0, %1, %5)
bb2:
  %6 = sdiv %2, %3
  jump bb3(%2, %3, %6)
bb3(%7: i32, %8: i32, %9: i32):
  %10 = add %9, %9
  call @putint(%10)
  ret
}
"#,
    );
}

#[test]
fn loads_and_impure_calls_are_leaders() {
    // Complete GVN does not number memory: two loads of @g, even with nothing in
    // between, are different leaders (hash GVN merges them), and so are two calls.
    let src = r#"
global @g: i32 = 0
declare @getint() -> i32

func @f() -> i32 {
bb0:
  %0 = load i32, @g
  %1 = load i32, @g
  %2 = call @getint()
  %3 = call @getint()
  %4 = sub %0, %1
  %5 = sub %2, %3
  %6 = add %4, %5
  ret %6
}
"#;
    assert_eq!(run(src, &["cgvn"]), run(src, &[]));
}

#[test]
fn pure_calls_are_operators() {
    // sq is pure: x = φ(sq(a), sq(b)) is sq(c) for c = φ(a, b), so the join's own
    // call sq(c) is x. Calls are never rebuilt.
    let src = r#"
declare @putint(i32) -> void

func @sq(i32) -> i32 {
bb0(%0: i32):
  %1 = mul %0, %0
  ret %1
}

func @f(i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32):
  br %2, bb1, bb2
bb1:
  %3 = call @sq(%0)
  jump bb3(%0, %3)
bb2:
  %4 = call @sq(%1)
  jump bb3(%1, %4)
bb3(%5: i32, %6: i32):
  %7 = call @sq(%5)
  %8 = sub %6, %7
  call @putint(%8)
  ret
}
"#;
    let out = run(src, &["cgvn"]);
    assert!(out.contains("call @putint(0)"), "{out}");
    assert_eq!(out.matches("call @sq").count(), 2, "{out}");
}

#[test]
fn unreachable_code_is_left_alone() {
    let src = r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = add %0, 1
  ret %1
bb1:
  %2 = add %0, 1
  jump bb2(%2)
bb2(%3: i32):
  %4 = add %3, 1
  jump bb2(%4)
}
"#;
    check(&["cgvn"], src, src);
}

#[test]
fn behaviour_is_kept_on_nested_loops_and_joins() {
    same_behaviour(
        r#"
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0, 1)
bb1(%0: i32, %1: i32, %2: i32):
  %3 = slt %0, 6
  br %3, bb2(0, %1, %2), bb6
bb2(%4: i32, %5: i32, %6: i32):
  %7 = slt %4, %0
  br %7, bb3, bb5
bb3:
  %8 = srem %4, 2
  %9 = add %4, 1
  br %8, bb4(%6, %9), bb4(%5, %9)
bb4(%10: i32, %11: i32):
  %12 = add %10, %4
  %13 = add %5, %4
  %14 = sub %12, %13
  call @putint(%14)
  call @putch(32)
  jump bb2(%11, %12, %6)
bb5:
  %15 = add %0, 1
  %16 = add %5, %6
  jump bb1(%15, %16, %5)
bb6:
  call @putint(%1)
  ret 0
}
"#,
        &["cgvn"],
        "",
    );
}

/// `@f(a, b)` prints `a * b`: nothing for cgvn to change.
const PRINTS_A_PRODUCT: &str = r#"
declare @putint(i32) -> void

func @f(i32, i32) -> void {
bb0(%0: i32, %1: i32):
  %2 = mul %0, %1
  call @putint(%2)
  ret
}
"#;

/// A cgvn that changes nothing leaves its numbers in the function's analyses for
/// the next pass (pre), which gets them only while the function is unchanged and
/// for the purity they were computed under. A cgvn that changes the function
/// leaves none.
#[test]
fn numbers_are_kept_for_the_next_pass_only_while_they_hold() {
    use crate::analysis::FunctionAnalyses;
    let src = PRINTS_A_PRODUCT;
    let first = |src: &str| {
        let m = ir::parse_module(src).expect("test IR parses");
        let purity = Purity::compute(&m);
        let f = m
            .funcs
            .values()
            .find(|f| !f.is_declaration())
            .unwrap()
            .clone();
        (f, purity)
    };
    let (mut f, purity) = first(src);
    assert_ne!(purity, Purity::default(), "@putint has effects");
    let mut fa = FunctionAnalyses::default();
    assert!(!super::run_in(&mut f, &purity, &mut fa).changed());
    assert!(fa.take_numbering(&purity).is_some());
    assert!(fa.take_numbering(&purity).is_none(), "taken once");

    assert!(!super::run_in(&mut f, &purity, &mut fa).changed());
    assert!(fa.take_numbering(&Purity::default()).is_none());

    assert!(!super::run_in(&mut f, &purity, &mut fa).changed());
    fa.forget_scev(); // what the manager does when a pass reports a change
    assert!(fa.take_numbering(&purity).is_none());

    let (mut f, purity) = first(FIG1A);
    let mut fa = FunctionAnalyses::default();
    assert!(super::run_in(&mut f, &purity, &mut fa).changed());
    assert!(fa.take_numbering(&purity).is_none());
}

/// pre after a cgvn that changed nothing takes cgvn's numbers (checked against
/// fresh ones, as the tests verify each pass) and does what it does alone.
#[test]
fn pre_given_the_numbers_of_cgvn_does_what_it_does_alone() {
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
  call @putint(%4)
  jump bb3
bb3:
  %5 = mul %0, %1
  call @putint(%5)
  ret
}
"#;
    assert_eq!(run(src, &["cgvn"]), run(src, &[]), "cgvn changes nothing");
    let alone = run(src, &["pre"]);
    assert_eq!(
        alone.matches("mul").count(),
        2,
        "pre merges the join's product"
    );
    assert_eq!(run(src, &["cgvn", "pre"]), alone);
}

/// The kept numbers depend on the effects of the function's own callees only: a
/// change in another function's summary leaves them valid (so keeping them costs
/// memory linear in the module, not a copy of every summary per function), a
/// change in a callee's does not.
#[test]
fn kept_numbers_depend_on_the_effects_of_their_callees_only() {
    use crate::analysis::{Effects, FunctionAnalyses};
    let src = format!("declare @getint() -> i32\n{PRINTS_A_PRODUCT}");
    let m = ir::parse_module(&src).expect("test IR parses");
    let id = |name: &str| m.funcs.keys().find(|&k| m.funcs[k].name == name).unwrap();
    let (putint, getint, f) = (id("putint"), id("getint"), id("f"));
    let purity = Purity::compute(&m);
    let with = |changed: ir::FuncId| {
        Purity::from_effects(m.funcs.keys().map(|k| {
            let e = purity.effects(k);
            (k, if k == changed { Effects::default() } else { e })
        }))
    };
    let mut body = m.funcs[f].clone();
    let mut fa = FunctionAnalyses::default();
    assert!(!super::run_in(&mut body, &purity, &mut fa).changed());
    assert!(
        fa.take_numbering(&with(getint)).is_some(),
        "@getint is not called"
    );
    assert!(!super::run_in(&mut body, &purity, &mut fa).changed());
    assert!(
        fa.take_numbering(&with(putint)).is_none(),
        "@putint is called"
    );
}
