//! Intervals of expressions below the dominating facts: the interval of `x op y`
//! from the intervals of `x` and `y` there, each confined by the facts comparing
//! it with constants. This is how LLVM's `LazyValueInfo` computes a value's range
//! in a block (`solveBlockValueBinaryOp`: the operation applied to the operands'
//! ranges in that block, each intersected with the conditions of the dominating
//! branches) and what lets `CorrelatedValuePropagation` decide a comparison of an
//! expression whose operands the branches bound: below `if (d > 0 && d <= 19)`,
//! `-d == 0` is false and `(d + 1) * (d % 2147483647) != -690` is true, though no
//! branch compares `-d` or the product.
//!
//! The global ranges ([`crate::analysis::ranges`]) give a value one interval for
//! the whole function, so they cannot use a test that only guards part of it.

use super::facts::Facts;
use crate::analysis::ranges::{binary, compare, Range};
use ir::{CmpOp, Function, InstKind, Type, Value};
use rustc_hash::FxHashMap;

/// How many definitions deep an operand's interval is derived: enough for a
/// remainder by a constant that division lowering expanded into compares, masks
/// and subtractions, and bounded so a long chain costs little.
const MAX_DEPTH: u32 = 8;

/// Decides the integer comparison `op(x, y)` from the intervals the facts give
/// `x` and `y` and the operands of their definitions; `None` when they overlap
/// so that either answer is possible.
pub fn decide_by_operands<F: Facts + ?Sized>(
    f: &Function,
    facts: &F,
    op: CmpOp,
    x: Value,
    y: Value,
) -> Option<bool> {
    op.inverse()?; // integer comparisons only
    let mut memo = FxHashMap::default();
    let rx = interval(f, facts, x, MAX_DEPTH, &mut memo);
    let ry = interval(f, facts, y, MAX_DEPTH, &mut memo);
    compare(op, rx, ry)
}

/// Whether the `i32` branch condition `v` (not a constant) is non-zero, from
/// its interval below the facts: `Some(true)` when the interval excludes 0,
/// `Some(false)` when it is exactly 0.
pub fn truth_by_operands<F: Facts + ?Sized>(f: &Function, facts: &F, v: Value) -> Option<bool> {
    if f.as_iconst(v).is_some() {
        return None;
    }
    let r = interval(f, facts, v, MAX_DEPTH, &mut FxHashMap::default());
    if r.lo > 0 || r.hi < 0 {
        Some(true)
    } else if r == Range::constant(0) {
        Some(false)
    } else {
        None
    }
}

/// The interval of the `i32` value `v` below the facts, looking `depth`
/// definitions deep.
fn interval<F: Facts + ?Sized>(
    f: &Function,
    facts: &F,
    v: Value,
    depth: u32,
    memo: &mut FxHashMap<Value, Range>,
) -> Range {
    if let Some(c) = f.as_iconst(v) {
        return Range::constant(c);
    }
    if f.value_type(v) != Type::I32 {
        return Range::FULL;
    }
    if let Some(&r) = memo.get(&v) {
        return r;
    }
    // Contradicting facts mean unreachable code: nothing is assumed there.
    let Some((lo, hi)) = facts.interval(f, v) else {
        return Range::FULL;
    };
    let bounded = Range {
        lo: lo as i32,
        hi: hi as i32,
    };
    let defined = match f.def_inst(v).map(|i| f.kind(i)) {
        Some(&InstKind::Binary { op, args: [a, b] }) if depth > 0 => {
            let ra = interval(f, facts, a, depth - 1, memo);
            let rb = interval(f, facts, b, depth - 1, memo);
            binary(op, ra, rb)
        }
        Some(&InstKind::Cmp { op, args: [a, b] }) => {
            let int = op.inverse().is_some() && f.value_type(a) == Type::I32;
            let decided = if int && depth > 0 {
                let ra = interval(f, facts, a, depth - 1, memo);
                let rb = interval(f, facts, b, depth - 1, memo);
                compare(op, ra, rb)
            } else {
                None
            };
            decided.map_or(Range { lo: 0, hi: 1 }, |t| Range::constant(i32::from(t)))
        }
        _ => Range::FULL,
    };
    // Both hold on every execution reaching here; an empty meet is unreachable.
    let r = bounded.meet(defined).unwrap_or(Range::FULL);
    memo.insert(v, r);
    r
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `d` read, then `if (d <= 0 || d > HI) return;` and comparisons of
    /// expressions of `d` below the guard (`CMPS`: instructions from `%3` on, each
    /// result printed).
    fn guarded(hi: i32, cmps: &str) -> String {
        format!(
            r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = sle %0, 0
  br %1, bb1, bb2
bb1:
  ret 0
bb2:
  %2 = sgt %0, {hi}
  br %2, bb1, bb3
bb3:
{cmps}  ret 0
}}
"#
        )
    }

    const NEGATION_AND_PRODUCT: &str = "  %3 = sub 0, %0
  %4 = eq %3, 0
  call @putint(%4)
  %5 = add %0, 1
  %6 = srem %0, 2147483647
  %7 = mul %5, %6
  %8 = ne %7, 690
  call @putint(%8)
";

    /// Below `0 < d <= 19`: `-d` is in [-19, -1], so `-d == 0` is false; `d + 1`
    /// is in [2, 20] and `d % 2147483647` is `d`, so their product is at most
    /// 380 and `!= 690` is true. No branch compares either expression.
    #[test]
    fn comparisons_of_expressions_of_a_guarded_value_are_decided() {
        let src = guarded(19, NEGATION_AND_PRODUCT);
        for input in ["5", "19", "1", "0", "20", "-7"] {
            let out = same_behaviour(&src, &["condprop"], input);
            assert!(
                out.contains("call @putint(0)") && out.contains("call @putint(1)"),
                "{out}"
            );
            assert!(!out.contains(" = eq ") && !out.contains(" = ne "), "{out}");
        }
    }

    /// What must stay a question: below `0 < d <= 30` the product reaches
    /// 930 (690 lies inside, though no `d` gives it: intervals do not know);
    /// `d * 200000000` may wrap; and after the guard's join (reached also with
    /// `d <= 0`) nothing bounds `d`.
    #[test]
    fn comparisons_the_intervals_do_not_decide_stay() {
        let src = guarded(30, NEGATION_AND_PRODUCT);
        let out = same_behaviour(&src, &["condprop"], "26");
        // (The printed result numbers values afresh: the `eq` is gone.)
        assert!(
            out.contains(", 690") && out.contains("call @putint(0)"),
            "{out}"
        );

        let wraps = "  %3 = mul %0, 200000000\n  %4 = sgt %3, 0\n  call @putint(%4)\n";
        for input in ["5", "11"] {
            let out = same_behaviour(&guarded(19, wraps), &["condprop"], input);
            assert!(out.contains("sgt %3, 0"), "{out}");
        }

        let joined = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sle %0, 0
  br %1, bb1, bb2
bb1:
  call @putint(7)
  jump bb2
bb2:
  %2 = sub 0, %0
  %3 = eq %2, 0
  call @putint(%3)
  ret 0
}
"#;
        let out = run(joined, &["condprop"]);
        assert!(out.contains("eq %2, 0"), "{out}");
    }

    /// A branch on an expression (no comparison) whose interval excludes 0 is
    /// taken; one that is exactly 0 is not; one whose interval holds 0 stays.
    #[test]
    fn branches_on_expressions_are_decided_by_their_intervals() {
        let src = |expr: &str| {
            guarded(
                19,
                &format!(
                    "  {expr}\n  br %4, bb4, bb5\nbb4:\n  call @putint(1)\n  ret 0\nbb5:\n  call @putint(2)\n"
                ),
            )
        };
        for (expr, decided) in [
            ("%3 = add %0, 5\n  %4 = srem %3, 100", "br 1, bb4, bb5"),
            ("%3 = sdiv %0, 20\n  %4 = mul %3, 7", "br 0, bb4, bb5"),
            ("%3 = sdiv %0, 10\n  %4 = mul %3, 7", "br %4, bb4, bb5"),
        ] {
            for input in ["1", "12", "19", "0"] {
                let out = same_behaviour(&src(expr), &["condprop"], input);
                assert!(out.contains(decided), "{expr}: {out}");
            }
        }
    }

    /// A comparison inside the expression counts as 0 or 1, decided when its own
    /// operands' intervals decide it: `(d < 100) + d` is `d + 1` in [2, 20].
    #[test]
    fn a_decided_inner_comparison_is_its_constant() {
        let cmps = "  %3 = slt %0, 100\n  %4 = add %3, %0\n  %5 = sgt %4, 1\n  call @putint(%5)\n";
        for input in ["1", "19"] {
            let out = same_behaviour(&guarded(19, cmps), &["condprop"], input);
            assert!(out.contains("call @putint(1)"), "{out}");
        }
        // Undecided inner comparison (`d < 10`): the sum is in [1, 20], `> 1` open.
        let open = cmps.replace("slt %0, 100", "slt %0, 10");
        let out = same_behaviour(&guarded(19, &open), &["condprop"], "1");
        assert!(out.contains("sgt %4, 1"), "{out}");
    }
}
