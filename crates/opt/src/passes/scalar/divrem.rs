//! Division-remainder pairs: a remainder `a % b` whose quotient `a / b` is also
//! computed, at a point that dominates it, becomes `a - (a / b) * b`.
//!
//! This is LLVM's `DivRemPairs` for a target without an instruction that gives
//! both: RV64 has `divw` and `remw`, each a 20-cycle division, and a division by
//! a constant is a multiply-high sequence of several instructions that a
//! remainder computed on its own repeats. A multiply and a subtraction instead
//! share the quotient.
//!
//! Exact under SysY's wrapping arithmetic: for `b != 0`, truncating division
//! gives `a = (a / b) * b + a % b`, and the identity survives wrapping, including
//! `INT_MIN / -1`, whose quotient wraps to `INT_MIN`: `INT_MIN - INT_MIN * -1` is
//! `0`, the remainder. A divisor of zero traps at the division, which runs first.

use crate::analysis::{AnalysisManager, Preserved};
use crate::pipeline::Pass;
use ir::analysis::DominatorTree;
use ir::{BinOp, Function, Inst, InstKind, Module, Type, Value};
use rustc_hash::FxHashMap;

/// The division-remainder pairs pass.
pub struct DivRem;

impl Pass for DivRem {
    fn name(&self) -> &'static str {
        "divrem"
    }
    fn description(&self) -> &'static str {
        "compute a remainder from the quotient of the same division when that is computed too"
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        am.each_function(m, |f, fa| {
            let (_, dt) = fa.domtree(f);
            run(f, dt) > 0
        })
    }
    fn preserves(&self) -> Preserved {
        Preserved::CFG
    }
}

/// The division paired with each remainder operation, and the multiply and
/// subtraction of the same width.
fn pair(op: BinOp) -> Option<(BinOp, BinOp, BinOp)> {
    match op {
        BinOp::SRem => Some((BinOp::SDiv, BinOp::Mul, BinOp::Sub)),
        BinOp::SRem64 => Some((BinOp::SDiv64, BinOp::Mul64, BinOp::Sub64)),
        _ => None,
    }
}

/// Rewrites the remainders of `f` whose quotient a dominating division computes;
/// returns how many.
pub fn run(f: &mut Function, dt: &DominatorTree) -> usize {
    // Divisions by operands, in layout order within each block.
    let mut divisions: FxHashMap<(BinOp, Value, Value), Vec<Inst>> = FxHashMap::default();
    let mut remainders: Vec<Inst> = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            if let InstKind::Binary { op, args: [a, d] } = *f.kind(i) {
                if matches!(op, BinOp::SDiv | BinOp::SDiv64) {
                    divisions.entry((op, a, d)).or_default().push(i);
                } else if pair(op).is_some() {
                    remainders.push(i);
                }
            }
        }
    }
    let mut done = 0;
    for r in remainders {
        let InstKind::Binary { op, args: [a, d] } = *f.kind(r) else {
            continue;
        };
        let (div, mul, sub) = pair(op).expect("collected remainders pair");
        let Some(rb) = f.layout.inst_block(r) else {
            continue;
        };
        let dominating = divisions.get(&(div, a, d)).and_then(|qs| {
            qs.iter().copied().find(|&q| {
                let qb = f.layout.inst_block(q).expect("a division in the layout");
                if qb == rb {
                    f.layout.block_insts(rb).position(|i| i == q)
                        < f.layout.block_insts(rb).position(|i| i == r)
                } else {
                    dt.dominates(qb, rb)
                }
            })
        });
        let Some(q) = dominating else {
            continue;
        };
        let quotient = f.inst_result(q).expect("a division has a result");
        let ty = if div == BinOp::SDiv {
            Type::I32
        } else {
            Type::I64
        };
        let product = f.insert_inst_before(
            r,
            InstKind::Binary {
                op: mul,
                args: [quotient, d],
            },
            ty,
        );
        f.copy_src_loc(r, product);
        let product = f.inst_result(product).expect("a multiply has a result");
        f.replace_kind(
            r,
            InstKind::Binary {
                op: sub,
                args: [a, product],
            },
        );
        done += 1;
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testutil::exec;

    fn rewritten(src: &str) -> (Module, Module, bool) {
        let before = ir::parse_module(src).unwrap();
        let mut after = before.clone();
        let changed = DivRem.run(&mut after);
        ir::verify_module(&after).unwrap_or_else(|e| panic!("{e}\n{}", ir::print_module(&after)));
        (before, after, changed)
    }

    /// Prints `x / d` and `x % d` for each `x` read, `d` read first; the
    /// division comes before the remainder in `first`, after it otherwise.
    fn quotient_and_remainder(division_first: bool) -> String {
        let (one, two) = (
            "%3 = sdiv %2, %0\n  call @putint(%3)",
            "%4 = srem %2, %0\n  call @putint(%4)",
        );
        let (one, two) = if division_first {
            (one, two)
        } else {
            (two, one)
        };
        format!(
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  jump bb1(0)
bb1(%1: i32):
  %2 = call @getint()
  {one}
  {two}
  %5 = add %1, 1
  %6 = slt %5, 6
  br %6, bb1(%5), bb2
bb2:
  ret 0
}}
"#
        )
    }

    #[test]
    fn a_remainder_after_its_quotient_uses_it() {
        let (before, after, changed) = rewritten(&quotient_and_remainder(true));
        let text = ir::print_module(&after);
        assert!(changed);
        assert!(!text.contains("srem"), "{text}");
        assert_eq!(text.matches("sdiv").count(), 1, "{text}");
        // Both signs, INT_MIN / -1, and a divisor of each sign.
        for input in [
            "7 22 -22 0 6 -6 2147483647 -2147483648",
            "-7 22 -22 0 6 -6 2147483647 -2147483648",
            "-1 22 -22 0 6 -6 2147483647 -2147483648",
        ] {
            assert_eq!(exec(&before, input), exec(&after, input), "{input}");
        }
    }

    #[test]
    fn a_remainder_before_its_quotient_stays() {
        // The division does not dominate the remainder: nothing to share.
        let (_, after, changed) = rewritten(&quotient_and_remainder(false));
        assert!(!changed, "{}", ir::print_module(&after));
    }

    #[test]
    fn a_remainder_of_other_operands_stays() {
        let src = quotient_and_remainder(true).replace("%4 = srem %2, %0", "%4 = srem %0, %2");
        let (_, after, changed) = rewritten(&src);
        assert!(!changed, "{}", ir::print_module(&after));
    }
}
