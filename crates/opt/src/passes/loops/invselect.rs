//! Loop-invariant conditional regions (part of [`super::licm`]): a branch inside a
//! loop on an invariant condition that only chooses between invariant values for a
//! join's parameter (a clamp `if (x > K) x = K;` of an invariant `x`) is decided
//! once, in the preheader, so the parameter, and everything computed from it,
//! becomes invariant.
//!
//! ```text
//! ph:  jump h(..)                      ph:  br %c, s(K), s(%x)
//!                                      s(%q): jump h(..)
//! h:   ..                              h:   ..
//!      br %c, j(K), j(%x)        =>         br %c, j, j
//! j(%p): %y = fdiv %p, ..              j:   %y = fdiv %q, ..     (then hoisted)
//! ```
//!
//! This is the hoisting of invariant PHIs of GCC's loop invariant motion
//! (`tree-ssa-loop-im.cc`, `move_computations`: a PHI with an invariant condition and
//! invariant arguments is rewritten as a `COND_EXPR` and moved to the preheader)
//! and of LLVM's LICM on the `select` SimplifyCFG makes of such a diamond
//! (`FoldTwoEntryPHINode`). The IR has no `select` (RV64GC has no conditional
//! move), so the choice stays a branch: the preheader ends in a conditional branch
//! to a new block whose parameters receive the chosen values.
//!
//! The region: a block `b` of the loop (not of an inner loop) ends in `br %c, ..`
//! with `%c` defined outside the loop; each arm goes to the join `j` directly or
//! through a block that has `b` as its only predecessor and holds nothing but its
//! jump to `j` (what an arm is once [`super::licm`] has hoisted its invariant,
//! speculatable instructions; an arm with anything else in it, a store, a call, a
//! load that may not be moved, is not a region). `j` is a block of the same loop,
//! not its header, whose only predecessors are `b` and the arms. Every parameter of
//! `j` whose values on both paths are defined outside the loop is replaced by a
//! parameter of the new block. Moving the choice executes nothing new: it is
//! safe whatever the region does not hold.

use crate::analysis::{LoopForest, LoopId};
use ir::analysis::ControlFlowGraph;
use ir::{Block, BlockCall, EntityRef, Function, InstKind, Type, Value};

/// A parameter of a join made invariant: its position and values on the then and
/// else paths.
struct Choice {
    param: Value,
    then_v: Value,
    else_v: Value,
}

/// Hoists the invariant choices of every loop of `f` into its preheader (`cfg` and
/// `loops` describe `f` as it is on entry; the new blocks are not in them).
/// Returns the number of join parameters replaced.
pub(crate) fn hoist_choices(f: &mut Function, cfg: &ControlFlowGraph, loops: &LoopForest) -> usize {
    // Blocks made here (their index is at least this) are in no loop of `loops`:
    // values they define are never taken as invariant, and preheaders split here
    // are not looked at as regions.
    let first_new = f.num_blocks();
    let mut split: Vec<Block> = Vec::new();
    let own = loops.own_blocks(cfg);
    let ids: Vec<LoopId> = loops.loops().map(|(id, _)| id).collect();
    let mut replaced = 0;
    for id in ids {
        let Some(mut ph) = loops.preheader(id, cfg) else {
            continue;
        };
        for &b in &own[id.0 as usize] {
            if split.contains(&b) {
                continue;
            }
            let Some((cond, join, choices)) = region(f, cfg, loops, id, b, first_new) else {
                continue;
            };
            let mut selected = Vec::new();
            for c in choices {
                if c.then_v == c.else_v {
                    f.replace_all_uses(c.param, c.then_v);
                } else {
                    selected.push(c);
                }
                replaced += 1;
            }
            if !selected.is_empty() {
                split.push(ph);
                ph = choose_in(f, ph, cond, &selected);
            }
            // The parameters, now unused, go with their arguments.
            let preds = cfg.unique_preds(join);
            for k in (0..f.block_params(join).len()).rev() {
                if !f.has_users(f.block_params(join)[k]) {
                    f.remove_block_param(join, k, &preds);
                }
            }
        }
    }
    replaced
}

/// Ends `ph` with `br cond, s(then values), s(else values)`, `s` a new block taking
/// `ph`'s jump and one parameter per choice, which replaces the join's parameter.
/// Returns `s`, the loop's preheader now.
fn choose_in(f: &mut Function, ph: Block, cond: Value, choices: &[Choice]) -> Block {
    let term = f.terminator(ph).expect("a preheader ends in a jump");
    let jump = f.kind(term).clone();
    let s = f.create_block();
    f.layout.insert_block_after(s, ph);
    let mut then_args = Vec::new();
    let mut else_args = Vec::new();
    for c in choices {
        let q = f.append_block_param(s, f.value_type(c.param));
        f.replace_all_uses(c.param, q);
        then_args.push(c.then_v);
        else_args.push(c.else_v);
    }
    f.remove_inst(term);
    f.append_inst(s, jump, Type::Void);
    let br = InstKind::Br {
        cond,
        then_dest: BlockCall::new(s, then_args),
        else_dest: BlockCall::new(s, else_args),
    };
    f.append_inst(ph, br, Type::Void);
    s
}

/// The region ending `b` ([`hoist_choices`]), if it is one with a parameter to hoist:
/// its condition, join and the join's invariant choices.
fn region(
    f: &Function,
    cfg: &ControlFlowGraph,
    loops: &LoopForest,
    id: LoopId,
    b: Block,
    first_new: usize,
) -> Option<(Value, Block, Vec<Choice>)> {
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = f.kind(f.terminator(b)?)
    else {
        return None;
    };
    let invariant = |v: Value| match f.value_block(v) {
        None => true,
        Some(d) => d.index() < first_new && !loops.contains(id, d),
    };
    if !invariant(*cond) {
        return None;
    }
    let (then_join, then_args) = path(f, cfg, b, then_dest)?;
    let (else_join, else_args) = path(f, cfg, b, else_dest)?;
    let join = then_join;
    if else_join != join
        || join == loops.get(id).header
        || loops.innermost(join) != Some(id)
        || join.index() >= first_new
    {
        return None;
    }
    let arms = [then_dest.block, else_dest.block];
    if cfg
        .unique_preds(join)
        .iter()
        .any(|p| *p != b && !arms.contains(p))
    {
        return None;
    }
    let choices: Vec<Choice> = f
        .block_params(join)
        .iter()
        .zip(then_args.iter().zip(&else_args))
        .filter(|(_, (t, e))| invariant(**t) && invariant(**e))
        .map(|(&param, (&then_v, &else_v))| Choice {
            param,
            then_v,
            else_v,
        })
        .collect();
    (!choices.is_empty()).then_some((*cond, join, choices))
}

/// Where the edge `dest` out of `b` leads: the join and the values its parameters
/// receive on this path. The edge's block is the join, or an empty arm (only
/// predecessor `b`, nothing but a jump) whose jump goes to the join.
fn path(
    f: &Function,
    cfg: &ControlFlowGraph,
    b: Block,
    dest: &BlockCall,
) -> Option<(Block, Vec<Value>)> {
    let arm = dest.block;
    let mut insts = f.layout.block_insts(arm);
    let first = insts.next()?;
    let InstKind::Jump { dest: to } = f.kind(first) else {
        return Some((arm, dest.args.to_vec()));
    };
    if cfg.unique_preds(arm) != [b] || f.successors(b).iter().all(|&s| s == arm) {
        // Entered from elsewhere too, or both edges of `b` go to it: `arm` is the
        // join itself.
        return Some((arm, dest.args.to_vec()));
    }
    // An arm's parameters take `dest`'s arguments.
    let params = f.block_params(arm);
    let args = to
        .args
        .iter()
        .map(|&v| match params.iter().position(|&p| p == v) {
            Some(k) => dest.args[k],
            None => v,
        })
        .collect();
    Some((to.block, args))
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// The operations inside the loop of `@f` in `out` (whose blocks are laid out
    /// from the header to the block with the back edge), e.g. `["slt", "sdiv", ..]`.
    fn loop_ops(out: &str) -> Vec<String> {
        let text: Vec<&str> = out
            .split("\nfunc ")
            .find(|t| t.starts_with("@f("))
            .expect("@f")
            .lines()
            .map(str::trim)
            .collect();
        let label = |t: &str| -> Option<usize> {
            let t = t.strip_prefix("bb")?;
            let n: String = t.chars().take_while(char::is_ascii_digit).collect();
            n.parse().ok()
        };
        let mut current = 0;
        let mut blocks: Vec<(usize, Vec<String>)> = Vec::new();
        let mut span = None;
        for t in &text {
            if t.starts_with("bb") && t.ends_with(':') {
                current = label(t).expect("a label");
                blocks.push((current, Vec::new()));
                continue;
            }
            if let Some((_, rhs)) = t.split_once(" = ") {
                let op = rhs.split(' ').next().unwrap().to_string();
                blocks.last_mut().expect("in a block").1.push(op);
            }
            for word in t.split([' ', ',']) {
                if let Some(to) = label(word) {
                    if to <= current && span.is_none() {
                        span = Some((to, current));
                    }
                }
            }
        }
        let (from, to) = span.expect("a loop");
        blocks
            .into_iter()
            .filter(|(b, _)| (from..=to).contains(b))
            .flat_map(|(_, ops)| ops)
            .collect()
    }

    /// A clamp of an invariant value in the loop, and a division of the clamped
    /// value: `while (i < n) { x = a - b; if (x > 100) x = 100; s = s + x / (x * x + 1); }`
    const CLAMP: &str = r#"
declare @putint(i32) -> void

func @f(i32, i32, i32) -> i32 {
bb0(%0: i32, %1: i32, %2: i32):
  jump bb1(0, 0)
bb1(%3: i32, %4: i32):
  %5 = slt %3, %2
  br %5, bb2, bb4
bb2:
  %6 = sub %0, %1
  %7 = sgt %6, 100
  br %7, bb3(100), bb3(%6)
bb3(%8: i32):
  %9 = mul %8, %8
  %10 = add %9, 1
  %11 = sdiv %8, %10
  %12 = add %4, %11
  %13 = add %3, 1
  jump bb1(%13, %12)
bb4:
  ret %4
}

func @main() -> i32 {
bb0:
  %0 = call @f(500, 7, 10)
  call @putint(%0)
  %1 = call @f(7, 5, 10)
  call @putint(%1)
  %2 = call @f(7, 5, 0)
  call @putint(%2)
  ret 0
}
"#;

    #[test]
    fn hoists_an_invariant_clamp_and_what_uses_it() {
        let out = same_behaviour(CLAMP, &["licm"], "");
        // The choice, and the multiply and add after it, leave the loop (the
        // division by a variable, not guaranteed to run, stays).
        let expected = r"
func @f(i32, i32, i32) -> i32 {
bb0(%0: i32, %1: i32, %2: i32):
  %3 = sub %0, %1
  %4 = sgt %3, 100
  br %4, bb1(100), bb1(%3)
bb1(%5: i32):
  %6 = mul %5, %5
  %7 = add %6, 1
  jump bb2(0, 0)
bb2(%8: i32, %9: i32):
  %10 = slt %8, %2
  br %10, bb3, bb5
bb3:
  br %4, bb4, bb4
bb4:
  %11 = sdiv %5, %7
  %12 = add %9, %11
  %13 = add %8, 1
  jump bb2(%13, %12)
bb5:
  ret %9
}";
        assert!(out.contains(expected), "{out}");
    }

    /// The same with a triangle: an empty arm block between the branch and the join.
    #[test]
    fn hoists_through_an_empty_arm() {
        let src = CLAMP.replace(
            "  br %7, bb3(100), bb3(%6)\n",
            "  br %7, bb5, bb3(%6)\nbb5:\n  jump bb3(100)\n",
        );
        let out = same_behaviour(&src, &["licm"], "");
        assert_eq!(loop_ops(&out), ["slt", "sdiv", "add", "add"], "{out}");
    }

    /// A condition computed in the loop (from the counter) is not invariant.
    #[test]
    fn keeps_a_varying_condition() {
        let src = CLAMP.replace("%7 = sgt %6, 100", "%7 = sgt %3, 5");
        let out = same_behaviour(&src, &["licm"], "");
        assert!(loop_ops(&out).contains(&"mul".to_string()), "{out}");
    }

    /// A value that varies (the counter) on one path keeps the parameter.
    #[test]
    fn keeps_a_varying_value() {
        let src = CLAMP.replace("bb3(100), bb3(%6)", "bb3(%3), bb3(%6)");
        let out = same_behaviour(&src, &["licm"], "");
        assert!(loop_ops(&out).contains(&"mul".to_string()), "{out}");
    }

    /// Arms with a store, a call with an effect, or a load of memory the loop
    /// writes are not empty once hoisting is done: no region.
    #[test]
    fn keeps_arms_with_effects_or_varying_loads() {
        let arms = [
            "bb5:\n  store 1, @g\n  jump bb3(100)\n",
            "bb5:\n  call @putint(1)\n  jump bb3(100)\n",
            "bb5:\n  %20 = load i32, @g\n  jump bb3(%20)\n",
        ];
        for arm in arms {
            let src = CLAMP
                .replace(
                    "  br %7, bb3(100), bb3(%6)\n",
                    &format!("  br %7, bb5, bb3(%6)\n{arm}"),
                )
                .replace(
                    "declare @putint(i32) -> void\n",
                    "declare @putint(i32) -> void\n\nglobal @g: i32 = 3\n",
                )
                .replace(
                    "  %13 = add %3, 1\n",
                    "  %13 = add %3, 1\n  store %13, @g\n",
                );
            let out = same_behaviour(&src, &["licm"], "");
            assert!(loop_ops(&out).contains(&"mul".to_string()), "{arm}:\n{out}");
        }
    }

    /// A join entered from outside the region (here from the loop header too) is
    /// not a choice between the region's two values.
    #[test]
    fn keeps_a_join_with_other_predecessors() {
        let src = CLAMP.replace(
            "  br %5, bb2, bb4\n",
            "  br %5, bb6, bb4\nbb6:\n  %30 = slt %3, 3\n  br %30, bb2, bb3(%3)\n",
        );
        let out = same_behaviour(&src, &["licm"], "");
        assert!(loop_ops(&out).contains(&"mul".to_string()), "{out}");
    }

    /// A float clamp chain (upper, then lower bound) of an invariant value: both
    /// rounds hoist, then the division.
    #[test]
    fn hoists_a_chain_of_float_clamps() {
        let src = r#"
declare @putfloat(f32) -> void

func @f(f32, i32) -> f32 {
bb0(%0: f32, %1: i32):
  jump bb1(0, 0.0)
bb1(%2: i32, %3: f32):
  %4 = slt %2, %1
  br %4, bb2, bb5
bb2:
  %5 = fsub %0, %0
  %6 = fgt %5, 1048576.0
  br %6, bb3(1048576.0), bb3(%5)
bb3(%7: f32):
  %8 = flt %7, -1048576.0
  br %8, bb4(-1048576.0), bb4(%7)
bb4(%9: f32):
  %10 = fmul %9, %9
  %11 = fadd %10, 1.0
  %12 = fdiv %9, %11
  %13 = fadd %3, %12
  %14 = add %2, 1
  jump bb1(%14, %13)
bb5:
  ret %3
}

func @main() -> i32 {
bb0:
  %0 = call @f(2.5, 10)
  call @putfloat(%0)
  %1 = call @f(2.5, 0)
  call @putfloat(%1)
  ret 0
}
"#;
        let out = same_behaviour(src, &["licm"], "");
        assert_eq!(loop_ops(&out), ["slt", "fadd", "add"], "{out}");
        // Once the branches left in the loop are folded, it is one block.
        let out = run(src, &["licm", "simplifycfg"]);
        assert_eq!(loop_ops(&out), ["slt", "fadd", "add"], "{out}");
    }
}
