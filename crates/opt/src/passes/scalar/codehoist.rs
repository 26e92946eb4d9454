//! Code hoisting: a computation that both arms of a conditional branch perform on the
//! same operands is done once, before the branch.
//!
//! This is GCC's code hoisting (the `hoist` phase of `tree-ssa-pre`, Steven Bosscher's
//! GCC 7 rewrite of the old RTL `gcse` hoisting; Muchnick, "Advanced Compiler Design
//! and Implementation", §13.5 "Code Hoisting", on very busy expressions) in the
//! restricted form of LLVM SimplifyCFG's `HoistThenElseCodeToIf` generalised to any
//! position in the arms: for a block `B` ending in `br %c, S1, S2` where `S1` and `S2`
//! are distinct blocks other than `B` whose only incoming edge is from `B` and that
//! take no parameters, an instruction `i1` of `S1` and an identical instruction `i2`
//! of `S2` (same operation, same operands, none defined in the arms) are replaced by
//! one copy of `i1` placed before `B`'s branch. The expression is *very busy* at the
//! end of `B` (evaluated on every path leaving it before any operand changes, which
//! SSA guarantees), so every path computes it exactly once as before and the code
//! shrinks; instructions of the arms that used hoisted values become hoistable in
//! turn, so chains move as a whole.
//!
//! ```text
//! b0: br %x, b1, b2                  b0: %a = and %y, 1
//! b1: %a = and %y, 1                     br %x, b1, b2
//!     br %a, b3, b4          =>      b1: br %a, b3, b4
//! b2: %a' = and %y, 1                b2: %e = eq %a, 0
//!     %e = eq %a', 0                     br %e, b5, b4
//!     br %e, b5, b4
//! ```
//!
//! (`if (x % 2) { if (y % 2 == 0) ... } else if (y % 2) ...`: without this the back
//! end's speculation moves both copies above the branch and computes `y & 1` twice
//! per iteration.)
//!
//! What moves: arithmetic, comparisons, conversions and address computations that
//! cannot trap (a division or remainder only by a constant other than 0 and -1), and
//! loads that nothing with an effect (a store or a call) precedes in either arm, so
//! the load reads the same memory before the branch. Nothing with an effect moves,
//! nor a possible trap (the arm could produce output before it).

use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::FunctionTransform;
use ir::{Block, Function, Inst, InstKind};

/// The code hoisting pass.
pub struct CodeHoist;

impl FunctionTransform for CodeHoist {
    const NAME: &'static str = "codehoist";
    const DESCRIPTION: &'static str = "compute once before a branch what both of its arms compute";
    /// Moves and removes instructions only: no block or edge changes.
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
        run(f) > 0
    }
}

/// Hoists what can be hoisted in `f`; the number of instructions removed.
pub fn run(f: &mut Function) -> usize {
    let preds = crate::passes::pred_counts(f);
    let blocks: Vec<Block> = f.layout.blocks().collect();
    let mut hoisted = 0;
    for b in blocks {
        let Some(term) = f.terminator(b) else {
            continue;
        };
        let InstKind::Br {
            then_dest,
            else_dest,
            ..
        } = f.kind(term)
        else {
            continue;
        };
        let (s1, s2) = (then_dest.block, else_dest.block);
        let arm = |s: Block| s != b && preds[s] == 1 && f.block_params(s).is_empty();
        if s1 == s2 || !arm(s1) || !arm(s2) {
            continue;
        }
        hoisted += hoist_common(f, term, s1, s2);
    }
    hoisted
}

/// Hoists the instructions `s1` and `s2` have in common to before `term`; how many.
fn hoist_common(f: &mut Function, term: Inst, s1: Block, s2: Block) -> usize {
    let mut hoisted = 0;
    let first: Vec<Inst> = f.layout.block_insts(s1).collect();
    for i1 in first {
        if !candidate(f, i1, s1, s2) {
            continue;
        }
        let twin = f
            .layout
            .block_insts(s2)
            .find(|&i2| f.kind(i2) == f.kind(i1) && candidate(f, i2, s1, s2));
        let Some(i2) = twin else {
            continue;
        };
        let (Some(r1), Some(r2)) = (f.inst_result(i1), f.inst_result(i2)) else {
            continue;
        };
        f.layout.remove_inst(i1);
        f.layout.insert_inst_before(i1, term);
        f.replace_all_uses(r2, r1);
        f.remove_inst(i2);
        hoisted += 1;
    }
    hoisted
}

/// Whether `i` (in arm `s1` or `s2`) may be computed before the branch instead: it
/// has no effect and cannot trap, its operands are all defined outside both arms,
/// and, for a load, nothing with an effect precedes it in its arm.
fn candidate(f: &Function, i: Inst, s1: Block, s2: Block) -> bool {
    let k = f.kind(i);
    let ok = match k {
        InstKind::Binary { op, args } if op.can_trap() => {
            matches!(f.as_iconst(args[1]), Some(c) if c != 0 && c != -1)
        }
        InstKind::Binary { .. } | InstKind::Cmp { .. } | InstKind::Unary { .. } => true,
        InstKind::Gep { .. } => true,
        InstKind::Load { .. } => {
            let arm = f.layout.inst_block(i);
            let effect_before = arm.is_some_and(|a| {
                f.layout
                    .block_insts(a)
                    .take_while(|&j| j != i)
                    .any(|j| matches!(f.kind(j), InstKind::Store { .. } | InstKind::Call { .. }))
            });
            !effect_before
        }
        _ => false,
    };
    if !ok {
        return false;
    }
    let mut outside = true;
    k.for_each_arg(|a| {
        if let Some(d) = f.value_block(a) {
            if d == s1 || d == s2 {
                outside = false;
            }
        }
    });
    outside
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `if (x % 2) { if (y % 2 == 0) s = 1; } else if (y % 2) s = 1;`, with loads
    /// of the same global in both arms.
    const XOR: &str = r#"
global @g: i32 = 5
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = and %0, 1
  br %2, bb1, bb2
bb1:
  %3 = load i32, @g
  %4 = and %1, 1
  %5 = eq %4, 0
  %6 = add %3, %5
  br %5, bb3(%6), bb3(0)
bb2:
  %7 = and %1, 1
  %8 = load i32, @g
  %9 = add %8, %7
  br %7, bb3(%9), bb3(0)
bb3(%10: i32):
  call @putint(%10)
  ret 0
}
"#;

    fn count(out: &str, s: &str) -> usize {
        out.matches(s).count()
    }

    #[test]
    fn common_computations_move_before_the_branch() {
        for input in ["0 0", "0 1", "1 0", "1 1", "7 -3"] {
            let out = same_behaviour(XOR, &["codehoist"], input);
            assert_eq!(count(&out, "and %1, 1"), 1, "{out}");
            assert_eq!(count(&out, "load i32, @g"), 1, "{out}");
            // Both now in the entry block, before its branch.
            let entry = &out[..out.find("bb1:").unwrap()];
            assert!(
                entry.contains("and %1, 1") && entry.contains("load i32, @g"),
                "{out}"
            );
            // `add %3, %5` and `add %8, %7` differ: both stay in their arms.
            assert_eq!(count(&out, " = add "), 2, "{out}");
        }
    }

    #[test]
    fn what_must_not_move() {
        // A load after a call in one arm (the call could store), a division by a
        // variable (it may trap), and a computation of only one arm stay put; so
        // does everything of an arm that another block also reaches.
        let src = r#"
global @g: i32 = 5
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  br %0, bb1, bb2
bb1:
  call @putint(1)
  %2 = load i32, @g
  %3 = sdiv 100, %1
  %4 = mul %1, 3
  br %1, bb4(%2), bb3
bb2:
  %5 = load i32, @g
  %6 = sdiv 100, %1
  %7 = mul %1, 5
  call @putint(%6)
  call @putint(%7)
  jump bb4(%5)
bb3:
  %8 = xor %1, 9
  jump bb4(%8)
bb4(%9: i32):
  %10 = xor %1, 9
  call @putint(%9)
  call @putint(%10)
  ret 0
}
"#;
        let out = run(src, &["codehoist"]);
        assert_eq!(count(&out, "load i32, @g"), 2, "{out}");
        assert_eq!(count(&out, "sdiv 100, %1"), 2, "{out}");
        assert_eq!(count(&out, "xor %1, 9"), 2, "{out}");
        let entry = &out[..out.find("bb1:").unwrap()];
        assert!(!entry.contains("mul"), "{out}");
        for input in ["0 4", "1 4", "3 -2"] {
            same_behaviour(src, &["codehoist"], input);
        }
    }
}
