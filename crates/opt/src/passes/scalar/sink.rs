//! Local sinking: a pure computation used once, later in its own block, moves down to
//! just before that use, so its result is not live across the code in between.
//!
//! This is the register-pressure side of list scheduling (the "sink to the single
//! use" heuristic of LLVM's machine sinking and of bottom-up list schedulers that
//! minimise live ranges, e.g. Sethi-Ullman order for expression trees): source code
//! such as `a = a / 2; b = b / 2; ...; return a + b + ...` computes a thousand values
//! before the first is consumed, and a register allocator can only spill them. Moving
//! each division next to the addition that consumes it keeps one value live instead.
//!
//! An instruction moves only when moving cannot lengthen other live ranges more than
//! it shortens its own: it has at most one operand that is not a constant (that
//! operand's live range grows to the new position, the result's shrinks to nothing).
//! Only instructions without effects move: arithmetic, comparisons, conversions and
//! address computations; not loads (a store in between could change the value), not
//! divisions that could trap (the trap would move past an output), not calls.
//! Instructions are visited bottom-up, so a chain `x -> y -> use` sinks as a whole.

use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::FunctionTransform;
use ir::{Function, Inst, InstKind, Value};

/// The local sinking pass.
pub struct Sink;

impl FunctionTransform for Sink {
    const NAME: &'static str = "sink";
    const DESCRIPTION: &'static str =
        "move single-use pure computations down to their use in the same block";
    /// Rewrites instructions only: no block or edge changes.
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
        run(f) > 0
    }
}

/// Sinks what can be sunk in `f`; the number of instructions moved.
pub fn run(f: &mut Function) -> usize {
    let mut moved = 0;
    let blocks: Vec<_> = f.layout.blocks().collect();
    for b in blocks {
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for &i in insts.iter().rev() {
            let Some(user) = single_later_user(f, i) else {
                continue;
            };
            if f.layout.next_inst(i) == Some(user) {
                continue;
            }
            f.layout.remove_inst(i);
            f.layout.insert_inst_before(i, user);
            moved += 1;
        }
    }
    moved
}

/// The one instruction that uses `i`'s result, when it is in `i`'s block and `i` may
/// move down to it.
fn single_later_user(f: &Function, i: Inst) -> Option<Inst> {
    if !movable(f, f.kind(i)) {
        return None;
    }
    let r = f.inst_result(i)?;
    let [user] = f.users(r)[..] else {
        return None;
    };
    // A use in the same block is later (SSA), unless the block loops to itself and the
    // use is a branch argument: then it is still the terminator, later in the order.
    (f.layout.inst_block(user) == f.layout.inst_block(i)).then_some(user)
}

/// Whether moving `k` down within its block keeps behaviour and does not lengthen
/// live ranges: no effects, no trap, at most one non-constant operand.
fn movable(f: &Function, k: &InstKind) -> bool {
    let pure = match k {
        InstKind::Binary { op, args } if op.can_trap() => {
            matches!(f.as_iconst(args[1]), Some(c) if c != 0 && c != -1)
        }
        InstKind::Binary { .. } | InstKind::Cmp { .. } | InstKind::Unary { .. } => true,
        InstKind::Gep { .. } => true,
        _ => false,
    };
    if !pure {
        return false;
    }
    let mut variables: Vec<Value> = Vec::with_capacity(2);
    k.for_each_arg(|a| {
        if !f.value_def(a).is_constant() && !variables.contains(&a) {
            variables.push(a);
        }
    });
    variables.len() <= 1
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    const SPREAD: &str = r#"
declare @putint(i32) -> void

func @f(i32, i32, i32) -> i32 {
bb0(%0: i32, %1: i32, %2: i32):
  %3 = sdiv %0, 2
  %4 = sdiv %1, 2
  %5 = mul %2, 3
  %6 = add %3, %4
  %7 = add %6, %5
  ret %7
}

func @main() -> i32 {
bb0:
  %0 = call @f(7, -9, 4)
  call @putint(%0)
  ret 0
}
"#;

    #[test]
    fn single_use_computations_move_to_their_use() {
        let out = same_behaviour(SPREAD, &["sink"], "");
        let body = &out[out.find("func @f").unwrap()..out.find("func @main").unwrap()];
        let lines: Vec<&str> = body.lines().map(str::trim).collect();
        // The multiplication now comes right before the addition that uses it, the
        // two divisions right before theirs (values are renumbered in the new order).
        for (op, within) in [("mul %2, 3", 1), ("sdiv %0, 2", 2), ("sdiv %1, 2", 2)] {
            let at = lines.iter().position(|l| l.contains(op)).unwrap();
            let name = lines[at].split(' ').next().unwrap();
            let used = (1..=within).any(|d| {
                let mut operands = lines[at + d].split([' ', ',']).skip(3);
                lines[at + d].contains("add") && operands.any(|t| t == name)
            });
            assert!(used, "{op} not right before its use:\n{body}");
        }
    }

    #[test]
    fn what_must_not_move() {
        // A division that may trap stays before the output; a load stays before the
        // store; an operation of two variables stays (it would lengthen two ranges).
        let src = r#"
global @g: i32 = 5
declare @putint(i32) -> void

func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = sdiv %0, %1
  %3 = load i32, @g
  %4 = add %0, %1
  call @putint(1)
  store 9, @g
  %5 = add %2, %3
  %6 = add %5, %4
  ret %6
}
"#;
        let out = run(src, &["sink"]);
        let order = |s: &str| out.find(s).unwrap();
        assert!(order("sdiv %0, %1") < order("call @putint"), "{out}");
        assert!(order("load i32, @g") < order("store 9"), "{out}");
        assert!(order("add %0, %1") < order("call @putint"), "{out}");
    }

    #[test]
    fn uses_in_other_blocks_and_multiple_uses_stay() {
        let src = r#"
declare @putint(i32) -> void

func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = mul %0, 3
  %2 = mul %0, 5
  call @putint(%0)
  %3 = add %2, %2
  br %0, bb1, bb2
bb1:
  ret %1
bb2:
  ret %3
}
"#;
        let out = run(src, &["sink"]);
        let order = |s: &str| out.find(s).unwrap();
        assert!(order("mul %0, 3") < order("call @putint"), "{out}");
        assert!(order("mul %0, 5") < order("call @putint"), "{out}");
    }
}
