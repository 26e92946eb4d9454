//! Textual-IR tests of load PRE: loads it makes not repeat, and loads it must leave.

use crate::passes::testutil::{check, run, same_behaviour};

/// The index of the least element of `@a` (read with `getarray`): `if (a[j] < a[m])
/// m = j;`, loading `a[m]` again on every iteration. `LATCH` is put in the latch.
fn argmin(latch: &str) -> String {
    format!(
        r#"
global @a: [i32; 100] = zeroinit

declare @getarray(ptr) -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getarray(@a)
  %1 = slt 1, %0
  br %1, bb4, bb3(0)
bb4:
  jump bb1(1, 0)
bb1(%2: i32, %3: i32):
  %4 = gep @a, %2, 4
  %5 = load i32, %4
  %6 = gep @a, %3, 4
  %7 = load i32, %6
  %8 = slt %5, %7
  br %8, bb2(%2), bb2(%3)
bb2(%9: i32):
{latch}
  %10 = add %2, 1
  %11 = slt %10, %0
  br %11, bb1(%10, %9), bb3(%9)
bb3(%12: i32):
  call @putint(%12)
  ret 0
}}
"#
    )
}

#[test]
fn the_minimum_so_far_travels_in_a_register() {
    let src = argmin("");
    let out = same_behaviour(&src, &["loadpre"], "6 5 3 8 1 9 1");
    check(
        &["loadpre"],
        &src,
        r#"
global @a: [i32; 100] = zeroinit

declare @getarray(ptr) -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getarray(@a)
  %1 = slt 1, %0
  br %1, bb1, bb4(0)
bb1:
  %2 = gep @a, 0, 4
  %3 = load i32, %2
  jump bb2(1, 0, %3)
bb2(%4: i32, %5: i32, %6: i32):
  %7 = gep @a, %4, 4
  %8 = load i32, %7
  %9 = gep @a, %5, 4
  %10 = slt %8, %6
  br %10, bb3(%4, %8), bb3(%5, %6)
bb3(%11: i32, %12: i32):
  %13 = add %4, 1
  %14 = slt %13, %0
  br %14, bb2(%13, %11, %12), bb4(%11)
bb4(%15: i32):
  call @putint(%15)
  ret 0
}
"#,
    );
    assert_eq!(out.matches("load").count(), 2);
}

#[test]
fn a_store_into_the_same_array_keeps_the_load() {
    // `a[j] = a[m]` in the latch may overwrite the `a[m]` of the next iteration.
    let src = argmin("  %13 = gep @a, %2, 4\n  store %7, %13");
    let out = same_behaviour(&src, &["loadpre"], "6 5 3 8 1 9 1");
    assert_eq!(out.matches("load").count(), 2, "{out}");
    assert!(out.contains("%7 = load i32, %6"), "{out}");
}

#[test]
fn a_call_that_writes_memory_keeps_the_load() {
    let src = argmin("  %13 = call @getarray(@a)");
    let out = same_behaviour(&src, &["loadpre"], "6 5 3 8 1 9 1 3 1 2 3");
    assert!(out.contains("%7 = load i32, %6"), "{out}");
}

#[test]
fn a_stored_or_loaded_value_reaches_the_join() {
    // One arm stores 7 to p[i], the other loads p[i]: the join's load of p[i] takes
    // them, although p is a parameter (nothing else writes between).
    let src = r#"
declare @putint(i32) -> void

func @f(ptr, i32, i32) -> i32 {
bb0(%0: ptr, %1: i32, %2: i32):
  %3 = gep %0, %1, 4
  br %2, bb1, bb2
bb1:
  store 7, %3
  jump bb3
bb2:
  %4 = load i32, %3
  %5 = add %4, 1
  jump bb3
bb3:
  %6 = load i32, %3
  ret %6
}
"#;
    check(
        &["loadpre"],
        src,
        r#"
declare @putint(i32) -> void

func @f(ptr, i32, i32) -> i32 {
bb0(%0: ptr, %1: i32, %2: i32):
  %3 = gep %0, %1, 4
  br %2, bb1, bb2
bb1:
  store 7, %3
  jump bb3(7)
bb2:
  %4 = load i32, %3
  %5 = add %4, 1
  jump bb3(%4)
bb3(%6: i32):
  ret %6
}
"#,
    );
}

#[test]
fn a_load_missing_on_two_paths_stays() {
    let src = r#"
func @f(ptr, i32, i32) -> i32 {
bb0(%0: ptr, %1: i32, %2: i32):
  %3 = gep %0, %1, 4
  %4 = slt %1, 5
  br %2, bb1, bb2
bb1:
  %5 = load i32, %3
  br %4, bb4(%5), bb3
bb2:
  br %4, bb4(1), bb3
bb3:
  jump bb4(2)
bb4(%6: i32):
  %7 = load i32, %3
  %8 = add %6, %7
  ret %8
}
"#;
    let out = run(src, &["loadpre"]);
    assert_eq!(out.matches("load").count(), 2, "{out}");
}

#[test]
fn no_load_is_added_on_a_path_that_may_not_reach_the_original() {
    // bb0 -> bb2 misses the value, but bb0 also branches elsewhere: a load added at
    // its end would run on the path to bb3, where the program loads nothing.
    let src = r#"
func @f(ptr, i32, i32) -> i32 {
bb0(%0: ptr, %1: i32, %2: i32):
  %3 = gep %0, %1, 4
  %4 = slt %1, 5
  br %4, bb1, bb5
bb5:
  br %2, bb2, bb3
bb1:
  %5 = load i32, %3
  jump bb2
bb2:
  %7 = load i32, %3
  ret %7
bb3:
  ret 0
}
"#;
    let out = run(src, &["loadpre"]);
    assert_eq!(out.matches("load").count(), 2, "{out}");
}

#[test]
fn a_store_to_another_object_does_not_stop_the_search() {
    // Both paths load g[i] and store to another global on the way.
    let src = r#"
global @g: [i32; 8] = zeroinit
global @h: [i32; 8] = zeroinit

declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = gep @g, %0, 4
  store 5, %1
  %2 = call @getint()
  br %2, bb1, bb2
bb1:
  %3 = load i32, %1
  %4 = gep @h, %0, 4
  store %3, %4
  jump bb3
bb2:
  %5 = load i32, %1
  %7 = gep @h, 1, 4
  store %5, %7
  jump bb3
bb3:
  %6 = load i32, %1
  call @putint(%6)
  ret 0
}
"#;
    let out = same_behaviour(src, &["loadpre"], "3 1");
    same_behaviour(src, &["loadpre"], "3 0");
    assert_eq!(out.matches("load").count(), 2, "{out}");
}

#[test]
fn the_next_rows_load_is_left_to_predictive_commoning() {
    // s += a[i] + a[i+1]: the a[i] of one iteration is the a[i+1] of the one before,
    // which `predcom` reuses (unrolling to avoid copies); loadpre leaves it.
    let src = r#"
global @a: [i32; 100] = zeroinit

declare @getarray(ptr) -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getarray(@a)
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = gep @a, %1, 4
  %4 = load i32, %3
  %5 = add %1, 1
  %6 = gep @a, %5, 4
  %7 = load i32, %6
  %8 = add %2, %4
  %9 = add %8, %7
  %10 = slt %5, 50
  br %10, bb1(%5, %9), bb2
bb2:
  call @putint(%9)
  ret 0
}
"#;
    let out = same_behaviour(src, &["loadpre"], "5 1 2 3 4 5");
    assert_eq!(out.matches("load").count(), 2, "{out}");
}

#[test]
fn no_parameter_that_would_need_a_copy_block_on_a_critical_edge() {
    // bb0 -> bb2 is critical (bb0 branches, bb2 joins) and passes nothing: giving the
    // join a parameter would put a copy and a jump on it, which cost what the load
    // did. The store in bb1 is not forwarded.
    let src = r#"
global @g: i32 = 0

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = load i32, @g
  %2 = add %1, 3
  br %0, bb1, bb2
bb1:
  %3 = mul %2, 5
  store %3, @g
  jump bb2
bb2:
  %4 = load i32, @g
  call @putint(%4)
  ret 0
}
"#;
    let out = same_behaviour(src, &["loadpre"], "1");
    assert!(out.contains("%4 = load i32, @g"), "{out}");
}

#[test]
fn a_value_is_not_carried_across_a_call() {
    // The arm's loaded value would live across `putint`: the join loads again.
    let src = r#"
declare @putint(i32) -> void

func @f(ptr, i32, i32) -> i32 {
bb0(%0: ptr, %1: i32, %2: i32):
  %3 = gep %0, %1, 4
  br %2, bb1, bb2
bb1:
  %4 = load i32, %3
  call @putint(%4)
  jump bb3
bb2:
  %5 = load i32, %3
  jump bb3
bb3:
  %6 = load i32, %3
  ret %6
}
"#;
    let out = run(src, &["loadpre"]);
    assert_eq!(out.matches("load").count(), 3, "{out}");
}

/// `g = -1; if (g > 8) g = 8; if (g < 0) g = 0; putint(g);` after the first test was
/// folded to `br 0`: the first join is reached only from the store, which makes the
/// second test constant in the same run, and the last join's load is the `-1`.
const CLAMPS: &str = r#"
global @g: i32 = 0

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  store -1, @g
  br 0, bb1, bb2
bb1:
  store 8, @g
  jump bb2
bb2:
  %0 = load i32, @g
  %1 = slt %0, 0
  br %1, bb3, bb4
bb3:
  store 0, @g
  jump bb4
bb4:
  %2 = load i32, @g
  call @putint(%2)
  ret 0
}
"#;

#[test]
fn a_chain_of_clamps_reads_the_stored_value_past_never_taken_arms() {
    let out = same_behaviour(CLAMPS, &["loadpre"], "");
    assert!(!out.contains("load"), "{out}");
    assert!(out.contains("%0 = slt -1, 0"), "{out}");
    assert!(out.contains("call @putint(0)"), "{out}");
}

#[test]
fn a_live_arm_that_stores_gives_the_join_a_parameter() {
    // `g = x; if (g < 0) g = 0;` with `x` from input: both arms live, both stores
    // known, so the join's load becomes a parameter (the edge bb0 -> bb2 already
    // passes an argument, so no copy block is needed).
    let src = r#"
global @g: i32 = 0

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  store %0, @g
  %1 = slt %0, 0
  br %1, bb1, bb2(%0)
bb1:
  store 0, @g
  jump bb2(5)
bb2(%2: i32):
  %3 = load i32, @g
  %4 = add %3, %2
  call @putint(%4)
  ret 0
}
"#;
    for input in ["-4", "7"] {
        let out = same_behaviour(src, &["loadpre"], input);
        assert!(!out.contains("load"), "{out}");
    }
}

#[test]
fn a_call_on_one_arm_keeps_the_load() {
    // `putint` may write `@g`: the value stored before the diamond is not what the
    // join reads on that path.
    let src = r#"
global @g: i32 = 0

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  store 3, @g
  br %0, bb1, bb2(1)
bb1:
  call @putint(%0)
  jump bb2(2)
bb2(%1: i32):
  %2 = load i32, @g
  call @putint(%2)
  ret 0
}
"#;
    let out = same_behaviour(src, &["loadpre"], "1");
    assert!(out.contains("load i32, @g"), "{out}");
}

#[test]
fn a_store_through_an_unknown_pointer_on_one_arm_keeps_the_load() {
    // `%0` may point at `@g`.
    let src = r#"
global @g: i32 = 0

func @f(ptr, i32) -> i32 {
bb0(%0: ptr, %1: i32):
  store 3, @g
  br %1, bb1, bb2(1)
bb1:
  store 9, %0
  jump bb2(2)
bb2(%2: i32):
  %3 = load i32, @g
  %4 = add %3, %2
  ret %4
}
"#;
    let out = run(src, &["loadpre"]);
    assert!(out.contains("load i32, @g"), "{out}");
}

#[test]
fn a_test_that_does_not_fold_keeps_both_arms() {
    // As `CLAMPS`, but the first test is on an input: the first join may be reached
    // from the store of 8, so the second test stays, and the edge bb0 -> bb2 is
    // critical: no parameter.
    let src = CLAMPS
        .replace(
            "declare @putint",
            "declare @getint() -> i32\ndeclare @putint",
        )
        .replace(
            "  store -1, @g\n  br 0,",
            "  store -1, @g\n  %9 = call @getint()\n  br %9,",
        );
    for input in ["0", "1"] {
        let out = same_behaviour(&src, &["loadpre"], input);
        assert_eq!(out.matches("load i32, @g").count(), 2, "{out}");
    }
}

#[test]
fn a_value_stored_in_the_loop_is_carried_around_it() {
    // The header's load reads what the preheader or the latch stored: a parameter
    // of the header, no load left.
    let src = r#"
global @g: i32 = 0

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  store 1, @g
  jump bb1(0)
bb1(%1: i32):
  %2 = load i32, @g
  %3 = mul %2, 3
  store %3, @g
  %4 = add %1, 1
  %5 = slt %4, %0
  br %5, bb1(%4), bb2
bb2:
  %6 = load i32, @g
  call @putint(%6)
  ret 0
}
"#;
    let out = same_behaviour(src, &["loadpre"], "5");
    assert_eq!(out.matches("load").count(), 1, "{out}");
    assert!(!out.contains("%2 = load"), "{out}");
}

#[test]
fn matching_an_access_without_building_its_address_agrees_with_building_it() {
    // `Addr::is_of` (the walk's test) against `Addr::of` and `==` on every pair of
    // pointers: nested `gep`s, the same indices under another stride or base, a
    // parameter, a global, an `alloc`.
    let m = ir::parse_module(
        r#"
global @a: [i32; 100] = zeroinit
global @b: [i32; 100] = zeroinit

func @f(i32, ptr) -> i32 {
bb0(%0: i32, %1: ptr):
  %2 = alloc [i32; 100]
  %3 = gep @a, %0, 40
  %4 = gep %3, 1, 4
  %5 = gep @a, %0, 40
  %6 = gep %5, 1, 4
  %7 = gep %5, 2, 4
  %8 = gep @b, %0, 40
  %9 = gep %8, 1, 4
  %10 = gep @a, %0, 4
  %11 = gep %1, %0, 4
  %12 = gep %2, %0, 4
  %13 = gep %3, %0, 4
  ret 0
}
"#,
    )
    .expect("test IR parses");
    let f = m.funcs.values().next().expect("one function");
    let ptrs: Vec<ir::Value> = f
        .all_values()
        .filter(|&v| f.value_type(v) == ir::Type::Ptr)
        .collect();
    assert!(ptrs.len() >= 14, "{}", ptrs.len());
    let mut equal = 0;
    for &p in &ptrs {
        let a = super::Addr::of(f, p);
        for &q in &ptrs {
            let same = super::Addr::of(f, q) == a;
            equal += usize::from(same && p != q);
            assert_eq!(a.is_of(f, q), same, "{p} against {q}");
        }
        assert_eq!(
            crate::passes::value_numbering::gvn::memory::memory_base(f, p),
            a.object(f),
            "{p}"
        );
    }
    // %3 = %5 and %4 = %6, both ways.
    assert_eq!(equal, 4);
}
