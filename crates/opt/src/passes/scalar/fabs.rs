//! Absolute values written as branches become `fabs` where only comparisons read
//! them.
//!
//! `if (x > 0) y = x; else y = -x;` selects `x` or `-x` by the sign of `x`: this is
//! `fabs(x)` except that `x = +0.0` gives `-0.0` and a NaN may keep its sign bit set.
//! LLVM's InstCombine (`foldSelectWithFCmpToFabs`) makes such a select `fabs` when the
//! sign of a zero cannot matter (`nsz`, or every user ignores it); GCC's phiopt
//! (`minmax_replacement`/`abs_replacement`) recognises the same diamond for integers.
//! Here every user must be a floating-point comparison: a comparison cannot tell
//! `+0.0` from `-0.0`, nor one NaN from another, so it gives the same answer on the
//! select and on `fabs(x)`. The uses are rewritten to a `fabs` at the top of the join;
//! the branch, left without work, is then removed by `dce` and `simplifycfg`.
//!
//! The shape: a block `H` ends in `br %c, ...` with `%c` an ordered comparison of `x`
//! with zero (`x > 0`, `x >= 0`, `x < 0`, `x <= 0`, either operand order); a join
//! `J` has exactly two incoming edges, each either from `H` or from a block whose
//! only predecessor is `H` and that ends in a jump to `J`, one on each side of the
//! branch; a parameter of `J` receives `x` on the side where `x` is positive and
//! `fneg x` on the other.

use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::FunctionTransform;
use ir::{Block, CmpOp, Function, InstKind, SecondaryMap, Type, UnOp, Value};

/// The `fabs` recognition pass.
pub struct Fabs;

impl FunctionTransform for Fabs {
    const NAME: &'static str = "fabs";
    const DESCRIPTION: &'static str =
        "absolute values selected by branches and only compared become fabs";
    /// Adds instructions and rewrites uses: no block or edge changes.
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
        run(f) > 0
    }
}

/// One incoming edge of a join: the branching block, the side of its branch the
/// edge is on (`true` for the then side), and the arguments it passes.
type Edge = (Block, bool, Vec<Value>);

/// Rewrites what it can in `f`; the number of `fabs` inserted.
pub fn run(f: &mut Function) -> usize {
    let mut preds: SecondaryMap<Block, Vec<Block>> = f.block_map();
    for b in f.layout.blocks() {
        for s in f.successors(b) {
            preds[s].push(b);
        }
    }
    let blocks: Vec<Block> = f.layout.blocks().collect();
    let mut inserted = 0;
    for j in blocks {
        let params = f.block_params(j).to_vec();
        if params.is_empty() || preds[j].len() != 2 {
            continue;
        }
        let Some([e1, e2]) = incoming(f, j, &preds) else {
            continue;
        };
        if e1.0 != e2.0 || e1.1 == e2.1 {
            continue;
        }
        let (then_args, else_args) = if e1.1 { (&e1.2, &e2.2) } else { (&e2.2, &e1.2) };
        let Some((x, positive_on_then)) = sign_test(f, e1.0) else {
            continue;
        };
        for (k, &p) in params.iter().enumerate() {
            let (pos, neg) = if positive_on_then {
                (then_args[k], else_args[k])
            } else {
                (else_args[k], then_args[k])
            };
            let negated = f.def_inst(neg).is_some_and(|i| {
                *f.kind(i)
                    == InstKind::Unary {
                        op: UnOp::FNeg,
                        arg: x,
                    }
            });
            if pos != x || !negated || !only_compared(f, p) {
                continue;
            }
            let kind = InstKind::Unary {
                op: UnOp::FAbs,
                arg: x,
            };
            let abs = match f.layout.first_inst(j) {
                Some(first) => f.insert_inst_before(first, kind, Type::F32),
                None => continue,
            };
            let r = f.inst_result(abs).expect("fabs has a result");
            f.replace_all_uses(p, r);
            inserted += 1;
        }
    }
    inserted
}

/// The two incoming edges of `j` as seen from the branch they come from.
fn incoming(f: &Function, j: Block, preds: &SecondaryMap<Block, Vec<Block>>) -> Option<[Edge; 2]> {
    let mut edges = Vec::with_capacity(2);
    let mut seen = Vec::new();
    for &p in &preds[j] {
        if seen.contains(&p) {
            continue;
        }
        seen.push(p);
        let term = f.terminator(p)?;
        match f.kind(term) {
            InstKind::Br {
                then_dest,
                else_dest,
                ..
            } => {
                for (side, d) in [(true, then_dest), (false, else_dest)] {
                    if d.block == j {
                        edges.push((p, side, d.args.to_vec()));
                    }
                }
            }
            InstKind::Jump { dest } => {
                // An arm: reached only from a branch, on one side.
                let [h] = preds[p][..] else {
                    return None;
                };
                let InstKind::Br {
                    then_dest,
                    else_dest,
                    ..
                } = f.kind(f.terminator(h)?)
                else {
                    return None;
                };
                if then_dest.block == else_dest.block || h == p {
                    return None;
                }
                edges.push((h, then_dest.block == p, dest.args.to_vec()));
            }
            _ => return None,
        }
    }
    edges.try_into().ok()
}

/// When `h` branches on an ordered comparison of some `x` with zero: `x`, and
/// whether `x` is positive (or zero) on the then side.
fn sign_test(f: &Function, h: Block) -> Option<(Value, bool)> {
    let InstKind::Br { cond, .. } = f.kind(f.terminator(h)?) else {
        return None;
    };
    let InstKind::Cmp { op, args } = f.kind(f.def_inst(*cond)?) else {
        return None;
    };
    let zero = |v: Value| f.as_fconst(v) == Some(0.0);
    // `x op 0`: the then side has x > 0 for > and >=.
    let (x, greater) = if zero(args[1]) {
        (args[0], matches!(op, CmpOp::FGt | CmpOp::FGe))
    } else if zero(args[0]) {
        (args[1], matches!(op, CmpOp::FLt | CmpOp::FLe))
    } else {
        return None;
    };
    let ordered = matches!(op, CmpOp::FGt | CmpOp::FGe | CmpOp::FLt | CmpOp::FLe);
    (ordered && f.value_type(x) == Type::F32).then_some((x, greater))
}

/// Whether every use of `v` is as an operand of a floating-point comparison.
fn only_compared(f: &Function, v: Value) -> bool {
    let users = f.users(v);
    !users.is_empty()
        && users
            .iter()
            .all(|&u| matches!(f.kind(u), InstKind::Cmp { op, .. } if op.is_float()))
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `|x| <= 1e-6` and `|x| > 2.5`, with `|x|` computed by a branch.
    const ABS: &str = r#"
declare @getfloat() -> f32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getfloat()
  %1 = fgt %0, 0.0
  br %1, bb2(%0), bb1
bb1:
  %2 = fneg %0
  jump bb2(%2)
bb2(%3: f32):
  %4 = fle %3, 1e-6
  %5 = fgt %3, 2.5
  call @putint(%4)
  call @putint(%5)
  ret 0
}
"#;

    #[test]
    fn a_compared_absolute_value_becomes_fabs() {
        for input in ["0", "-0", "3", "-3", "1e-7", "-1e-7", "nan", "-nan", "-2.5"] {
            let out = same_behaviour(ABS, &["fabs", "dce", "simplifycfg"], input);
            assert!(out.contains("fabs %0"), "{out}");
            assert!(!out.contains("br "), "{out}");
        }
    }

    #[test]
    fn other_orders_and_tests_are_recognised() {
        // `0 < x`, and `x < 0` with the negation on the then side, as a diamond.
        for (test, arms) in [
            ("flt 0.0, %0", "br %1, bb2, bb1"),
            ("flt %0, 0.0", "br %1, bb1, bb2"),
            ("fge %0, 0.0", "br %1, bb2, bb1"),
        ] {
            let src = format!(
                r#"
declare @getfloat() -> f32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getfloat()
  %1 = {test}
  {arms}
bb1:
  %2 = fneg %0
  jump bb3(%2)
bb2:
  jump bb3(%0)
bb3(%3: f32):
  %4 = fle %3, 1e-6
  call @putint(%4)
  ret 0
}}
"#
            );
            for input in ["0", "-0", "3", "-3", "1e-7", "-1e-7"] {
                let out = same_behaviour(&src, &["fabs"], input);
                assert!(out.contains("fabs %0"), "{test}: {out}");
            }
        }
    }

    #[test]
    fn what_must_not_become_fabs() {
        // The value is printed (the sign of a zero shows), the test is against
        // another constant, the arms are the wrong way round, and the test is
        // unordered (`ne`, true on NaN).
        let cases = [
            (
                "fgt %0, 0.0",
                "%2 = fneg %0",
                "%4 = fle %3, 1e-6\n  call @putfloat(%3)",
            ),
            ("fgt %0, 1.0", "%2 = fneg %0", "%4 = fle %3, 1e-6"),
            ("flt %0, 0.0", "%2 = fneg %0", "%4 = fle %3, 1e-6"),
            ("fne %0, 0.0", "%2 = fneg %0", "%4 = fle %3, 1e-6"),
            ("fgt %0, 0.0", "%2 = fsub %0, 1.0", "%4 = fle %3, 1e-6"),
        ];
        for (test, arm, uses) in cases {
            let src = format!(
                r#"
declare @getfloat() -> f32
declare @putint(i32) -> void
declare @putfloat(f32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getfloat()
  %1 = {test}
  br %1, bb2(%0), bb1
bb1:
  {arm}
  jump bb2(%2)
bb2(%3: f32):
  {uses}
  call @putint(%4)
  ret 0
}}
"#
            );
            let out = run(&src, &["fabs"]);
            assert!(!out.contains("fabs"), "{test} / {arm}: {out}");
        }
    }
}
