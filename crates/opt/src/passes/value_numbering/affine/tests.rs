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

/// Random loops whose variables are updated affinely (and not) on two paths, with
/// linear combinations printed after: the pass must never change what they print.
/// `AFFINE_SEED=n` runs another 300 (seeds 1 to 8 were run when it was written).
#[test]
fn random_affine_loops_behave_the_same() {
    use crate::passes::testutil::XorShift;
    let mut rng = XorShift(
        std::env::var("AFFINE_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed_affe),
    );
    let mut pick = |n: u64| (rng.next() % n) as i64;
    let mut changed = 0;
    for _ in 0..300 {
        let k = 2 + pick(4) as usize;
        let mut next = 0usize;
        let mut fresh = || {
            next += 1;
            format!("%{}", next - 1)
        };
        let mut body = String::new();
        let n = fresh();
        body.push_str(&format!("bb0:\n  {n} = call @getint()\n"));
        let mut inits = Vec::new();
        for _ in 0..k {
            if pick(3) == 0 {
                let v = fresh();
                body.push_str(&format!("  {v} = call @getint()\n"));
                inits.push(v);
            } else {
                inits.push(format!("{}", pick(2001) - 1000));
            }
        }
        body.push_str(&format!("  jump bb1(0, {})\n", inits.join(", ")));
        let i = fresh();
        let vs: Vec<String> = (0..k).map(|_| fresh()).collect();
        let params: Vec<String> = vs.iter().map(|v| format!("{v}: i32")).collect();
        body.push_str(&format!("bb1({i}: i32, {}):\n", params.join(", ")));
        let c = fresh();
        body.push_str(&format!("  {c} = slt {i}, {n}\n  br {c}, bb2, bb5\nbb2:\n"));
        let g = fresh();
        let t = fresh();
        body.push_str(&format!(
            "  {g} = call @getint()\n  {t} = sgt {g}, 0\n  br {t}, bb3, bb4\n"
        ));
        let mut arms = Vec::new();
        for label in ["bb3", "bb4"] {
            body.push_str(&format!("{label}:\n"));
            let mut outs = Vec::new();
            for j in 0..k {
                let m = pick(k as u64) as usize;
                let kc = [1, -1, 2, 3, 7, 65536, -2147483647][pick(7) as usize];
                let v = fresh();
                let line = match pick(8) {
                    0 => format!("  {v} = add {}, {kc}\n", vs[j]),
                    1 => {
                        let p = fresh();
                        body.push_str(&format!("  {p} = mul {}, {kc}\n", vs[m]));
                        format!("  {v} = add {}, {p}\n", vs[j])
                    }
                    2 => format!("  {v} = sub {}, {}\n", vs[j], vs[m]),
                    3 => format!("  {v} = add {}, 0\n", vs[m]),
                    4 => format!("  {v} = mul {}, {kc}\n", vs[j]),
                    5 => format!("  {v} = call @getint()\n"),
                    6 => format!("  {v} = shl {}, {}\n", vs[j], pick(33)),
                    _ => format!("  {v} = add {}, {}\n", vs[j], i),
                };
                body.push_str(&line);
                outs.push(v);
            }
            body.push_str(&format!("  jump bb6({})\n", outs.join(", ")));
            arms.push(outs);
        }
        let ws: Vec<String> = (0..k).map(|_| fresh()).collect();
        let wparams: Vec<String> = ws.iter().map(|w| format!("{w}: i32")).collect();
        let i2 = fresh();
        body.push_str(&format!(
            "bb6({}):\n  {i2} = add {i}, 1\n  jump bb1({i2}, {})\nbb5:\n",
            wparams.join(", "),
            ws.join(", ")
        ));
        for _ in 0..3 {
            let mut acc = format!("{}", pick(11) - 5);
            for v in &vs {
                let coeff = pick(5) - 2;
                if coeff == 0 {
                    continue;
                }
                let p = fresh();
                let s = fresh();
                body.push_str(&format!(
                    "  {p} = mul {v}, {coeff}\n  {s} = add {acc}, {p}\n"
                ));
                acc = s;
            }
            let e = fresh();
            body.push_str(&format!(
                "  {e} = eq {acc}, {}\n  call @putint({acc})\n  call @putint({e})\n",
                vs[0]
            ));
        }
        body.push_str("  ret 0\n");
        let src = module(&format!("func @main() -> i32 {{\n{body}}}\n"));
        let input: Vec<String> = std::iter::once(pick(12).to_string())
            .chain((0..200).map(|_| (pick(4001) - 2000).to_string()))
            .collect();
        let out = same_behaviour(&src, &["affine", "dce"], &input.join(" "));
        if out != crate::passes::testutil::run(&src, &["dce"]) {
            changed += 1;
        }
    }
    // The programs are built to have relations: most must change.
    assert!(changed > 100, "only {changed} of 300 changed");
}

#[test]
fn a_relation_too_large_to_keep_leaves_the_parameter_alone() {
    // y - x == c - (a1 + … + a8): solved for y, the form has ten terms, more than a
    // form may keep; y stays a parameter (once this rebuilt y from itself).
    let mut body = String::from("bb0:\n  %0 = call @getint()\n");
    for k in 1..=9 {
        body.push_str(&format!("  %{k} = call @getint()\n"));
    }
    // %10 = a1 + ... + a8 (the values %1..%8); %9 is c.
    body.push_str("  %10 = add %1, %2\n");
    for k in 3..=8 {
        body.push_str(&format!("  %{} = add %{}, %{k}\n", 8 + k, 7 + k));
    }
    body.push_str(
        "  jump bb1(0, %16, %9)\nbb1(%17: i32, %18: i32, %19: i32):\n  %20 = slt %17, %0\n  br %20, bb2, bb3\nbb2:\n  %21 = add %17, 1\n  %22 = add %18, 1\n  %23 = add %19, 1\n  jump bb1(%21, %22, %23)\nbb3:\n  %24 = sub %19, %18\n  call @putint(%24)\n  ret 0\n",
    );
    let src = module(&format!("func @main() -> i32 {{\n{body}}}\n"));
    same_behaviour(&src, &["affine"], "3 1 2 3 4 5 6 7 8 9");
}
