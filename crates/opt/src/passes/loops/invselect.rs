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
//! with `%c` defined outside the loop; its edges reach the join `j` directly or
//! through blocks of the loop that hold nothing but a jump, or a branch on another
//! condition defined outside the loop: a short-circuit `x > K || x < -K` is a
//! branch whose arm is another branch, an arm assigning an invariant value is a
//! block holding nothing but its jump to `j` once [`super::licm`] has hoisted its
//! speculatable instructions (an arm with anything else in it, a store, a call, a
//! load that may not be moved, is not a region). Only `b` is entered from outside
//! the region, and `j` is a block of the same loop, not its header, entered only
//! from the region (at most [`MAX_REGION_BLOCKS`] blocks besides `b` and `j`).
//! Every parameter of `j` whose values on all edges into it are defined outside
//! the loop is replaced by a parameter of the new block, and the region's decisions
//! are copied into the preheader, one new block per block of the region. Moving the choice executes nothing new: it is
//! safe whatever the region does not hold.
//!
//! The same choices are also a pass of their own, [`InvariantChoices`]
//! (`invselect`), run late, after store promotion has made clamps of globals
//! into choices: it hoists only what the chosen values feed, not everything
//! `licm` would.

use crate::analysis::{FunctionAnalyses, LoopForest, LoopId, Preserved};
use crate::pipeline::FunctionTransform;
use ir::analysis::ControlFlowGraph;
use ir::{Block, BlockCall, EntityRef, Function, Inst, InstKind, Type, Value};

/// The choices alone, late in the pipeline: after store promotion has turned a
/// clamp of a global (`g = ..; if (g > K) g = K;`, stores in its arms) into a
/// choice between values, the choices are decided in the preheader as in
/// [`super::licm`], and what they feed is hoisted after them: the arithmetic,
/// comparisons and addresses whose operands are all defined outside the loop and
/// one of which is a chosen value or was hoisted so (a second clamp's test of the
/// first clamp's result). Nothing else moves, so a loop keeps the code a full
/// `licm` would take out of it at this point (an inner loop's entry test, which
/// would stay live across the outer loop in a register).
pub struct InvariantChoices;

impl FunctionTransform for InvariantChoices {
    const NAME: &'static str = "invselect";
    const DESCRIPTION: &'static str =
        "decide loops' invariant choices in their preheaders and hoist what they feed";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        let mut changed = false;
        for _ in 0..MAX_ROUNDS {
            let first_new = f.num_blocks();
            let (cfg, _, loops) = fa.loops(f);
            if loops.is_empty() || hoist_choices(f, cfg, loops) == 0 {
                break;
            }
            changed = true;
            fa.forget();
            let (cfg, _, loops) = fa.loops(f);
            hoist_fed(f, cfg, loops, first_new);
            fa.forget();
        }
        changed
    }
}

/// Rounds of [`InvariantChoices`] per function (a chain of clamps takes a round each).
const MAX_ROUNDS: usize = 8;

/// Moves to each loop's preheader (innermost loops first) the instructions of
/// the loop that cannot trap or have an effect, whose operands are all defined
/// outside it, and one of whose operands is a parameter of a block made since
/// `first_new` (a chosen value) or the result of an instruction moved here.
fn hoist_fed(f: &mut Function, cfg: &ControlFlowGraph, loops: &LoopForest, first_new: usize) {
    let own = loops.own_blocks(cfg);
    let mut moved: Vec<Value> = Vec::new();
    for (id, _) in loops.loops() {
        let Some(ph) = loops.preheader(id, cfg) else {
            continue;
        };
        let outside =
            |f: &Function, v: Value| f.value_block(v).is_none_or(|d| !loops.contains(id, d));
        let fed = |f: &Function, v: Value, moved: &[Value]| {
            moved.contains(&v)
                || matches!(f.value_def(v), ir::ValueDef::Param(b, _) if b.index() >= first_new)
        };
        // The loop's own blocks (its inner loops' preheaders among them: what
        // they took is looked at again), in RPO, until nothing more moves.
        loop {
            let mut any = false;
            for &b in &own[id.0 as usize] {
                let insts: Vec<Inst> = f.layout.block_insts(b).collect();
                for i in insts {
                    let k = f.kind(i);
                    if k.is_terminator() || !speculatable(f, k) {
                        continue;
                    }
                    let args = k.args();
                    if !args.iter().all(|&a| outside(f, a))
                        || !args.iter().any(|&a| fed(f, a, &moved))
                    {
                        continue;
                    }
                    let term = f.terminator(ph).expect("a preheader ends in a jump");
                    f.layout.remove_inst(i);
                    f.layout.insert_inst_before(i, term);
                    moved.extend(f.inst_result(i));
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
    }
}

/// Whether running `k` when the program would not cannot trap or be observed:
/// arithmetic (a division only by a constant other than 0 and -1),
/// comparisons, conversions and addresses.
fn speculatable(f: &Function, k: &InstKind) -> bool {
    match k {
        InstKind::Binary { op, args } => {
            !op.can_trap() || f.as_iconst(args[1]).is_some_and(|c| c != 0 && c != -1)
        }
        InstKind::Cmp { .. } | InstKind::Unary { .. } | InstKind::Gep { .. } => true,
        _ => false,
    }
}

/// At most this many blocks between a region's branch and its join.
const MAX_REGION_BLOCKS: usize = 8;

/// A region found by [`region`]: its first block, the blocks between it and the
/// join, the values the inner blocks' parameters receive (each such block has one
/// edge into it), and the positions of the join's parameters whose values are
/// invariant on every edge into it.
struct Region {
    branch: Block,
    inside: Vec<Block>,
    join: Block,
    env: Vec<(Value, Value)>,
    chosen: Vec<usize>,
}

impl Region {
    /// `v`, or the value it stands for when it is an inner block's parameter.
    fn value(&self, v: Value) -> Value {
        self.env
            .iter()
            .find(|(p, _)| *p == v)
            .map_or(v, |&(_, a)| a)
    }
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
            let Some(mut r) = region(f, cfg, loops, id, b, first_new) else {
                continue;
            };
            let params = f.block_params(r.join).to_vec();
            let incoming = join_args(f, &r);
            let mut selected = Vec::new();
            for &k in &r.chosen {
                let first = incoming[0][k];
                if incoming.iter().all(|args| args[k] == first) {
                    f.replace_all_uses(params[k], first);
                } else {
                    selected.push(k);
                }
                replaced += 1;
            }
            if !selected.is_empty() {
                split.push(ph);
                r.chosen = selected;
                ph = choose_in(f, ph, &r);
            }
            // The parameters, now unused, go with their arguments.
            let preds = cfg.unique_preds(r.join);
            for k in (0..f.block_params(r.join).len()).rev() {
                if !f.has_users(f.block_params(r.join)[k]) {
                    f.remove_block_param(r.join, k, &preds);
                }
            }
        }
    }
    replaced
}

/// The arguments of every edge of region `r` into its join, inner blocks'
/// parameters replaced by their values.
fn join_args(f: &Function, r: &Region) -> Vec<Vec<Value>> {
    std::iter::once(r.branch)
        .chain(r.inside.iter().copied())
        .flat_map(|x| {
            let term = f.terminator(x).expect("a region block ends in a branch");
            f.kind(term)
                .targets()
                .iter()
                .filter(|t| t.block == r.join)
                .map(|t| t.args.iter().map(|&v| r.value(v)).collect())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Copies the decisions of region `r` to the end of `ph`: the branch ending `ph`,
/// each inner block a new block between `ph` and `s`, a new block taking `ph`'s
/// jump and one parameter per chosen parameter of the join, which it replaces;
/// each edge into the join goes to `s` with its values. Returns `s`, the loop's
/// preheader now.
fn choose_in(f: &mut Function, ph: Block, r: &Region) -> Block {
    let term = f.terminator(ph).expect("a preheader ends in a jump");
    let jump = f.kind(term).clone();
    f.remove_inst(term);
    let s = f.create_block();
    f.layout.insert_block_after(s, ph);
    let copies: Vec<Block> = r
        .inside
        .iter()
        .rev()
        .map(|_| {
            let c = f.create_block();
            f.layout.insert_block_after(c, ph);
            c
        })
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let params = f.block_params(r.join).to_vec();
    for &k in &r.chosen {
        let q = f.append_block_param(s, f.value_type(params[k]));
        f.replace_all_uses(params[k], q);
    }
    f.append_inst(s, jump, Type::Void);
    let target = |dest: &BlockCall| -> BlockCall {
        if dest.block == r.join {
            let args: Vec<Value> = r.chosen.iter().map(|&k| r.value(dest.args[k])).collect();
            return BlockCall::new(s, args);
        }
        let k = r.inside.iter().position(|&x| x == dest.block);
        BlockCall::new(copies[k.expect("an inner block")], Vec::new())
    };
    let from =
        std::iter::once((r.branch, ph)).chain(r.inside.iter().copied().zip(copies.iter().copied()));
    for (x, into) in from {
        let new = match f.kind(f.terminator(x).expect("a region block ends in a branch")) {
            InstKind::Jump { dest } => InstKind::Jump {
                dest: Box::new(target(dest)),
            },
            InstKind::Br {
                cond,
                then_dest,
                else_dest,
            } => InstKind::Br {
                cond: *cond,
                then_dest: Box::new(target(then_dest)),
                else_dest: Box::new(target(else_dest)),
            },
            _ => unreachable!("a region block ends in a jump or branch"),
        };
        f.append_inst(into, new, Type::Void);
    }
    s
}

/// The region starting at `b` ([`hoist_choices`]), if it is one with a parameter to
/// hoist. `b` ends in a branch on an invariant condition; the blocks it leads to
/// before the join hold nothing but a jump, or a branch on an invariant condition,
/// and have no parameters (or are an arm: one edge from one predecessor, a jump,
/// whose parameters only pass on the edge's values); only `b` is entered from
/// outside the region.
fn region(
    f: &Function,
    cfg: &ControlFlowGraph,
    loops: &LoopForest,
    id: LoopId,
    b: Block,
    first_new: usize,
) -> Option<Region> {
    let invariant = |v: Value| match f.value_block(v) {
        None => true,
        Some(d) => d.index() < first_new && !loops.contains(id, d),
    };
    let header = loops.get(id).header;
    let in_loop = |x: Block| x.index() < first_new && loops.innermost(x) == Some(id);
    let InstKind::Br { cond, .. } = f.kind(f.terminator(b)?) else {
        return None;
    };
    if !invariant(*cond) {
        return None;
    }
    // Edges into `x` from the terminator of `from`.
    let edges_into = |x: Block, from: Block| f.successors(from).iter().filter(|&&s| s == x).count();
    // Whether `x`, entered from `from`, lies inside the region.
    let inner = |x: Block, from: Block| -> bool {
        if x == header || x == b || !in_loop(x) {
            return false;
        }
        let Some(first) = f.layout.block_insts(x).next() else {
            return false;
        };
        match f.kind(first) {
            InstKind::Jump { .. } => {
                f.block_params(x).is_empty()
                    || (cfg.unique_preds(x)[..] == [from] && edges_into(x, from) == 1)
            }
            InstKind::Br { cond, .. } => f.block_params(x).is_empty() && invariant(*cond),
            _ => false,
        }
    };
    // The region's inner blocks and the join, by a walk from `b`.
    let mut r = Region {
        branch: b,
        inside: Vec::new(),
        join: b,
        env: Vec::new(),
        chosen: Vec::new(),
    };
    let mut join: Option<Block> = None;
    let mut stack = vec![b];
    while let Some(at) = stack.pop() {
        let term = f.terminator(at)?;
        for dest in f.kind(term).targets() {
            let s = dest.block;
            if r.inside.contains(&s) {
                continue;
            }
            if inner(s, at) {
                if r.inside.len() == MAX_REGION_BLOCKS {
                    return None;
                }
                let args: Vec<Value> = dest.args.iter().map(|&v| r.value(v)).collect();
                r.env.extend(f.block_params(s).iter().copied().zip(args));
                r.inside.push(s);
                stack.push(s);
            } else if join.is_some_and(|j| j != s) {
                return None;
            } else {
                join = Some(s);
            }
        }
    }
    r.join = join?;
    if r.join == header || r.join == b || !in_loop(r.join) {
        return None;
    }
    let entered_inside = |x: Block| {
        cfg.unique_preds(x)
            .iter()
            .all(|p| *p == b || r.inside.contains(p))
    };
    if !entered_inside(r.join) || !r.inside.iter().all(|&x| entered_inside(x)) {
        return None;
    }
    let incoming = join_args(f, &r);
    r.chosen = (0..f.block_params(r.join).len())
        .filter(|&k| incoming.iter().all(|args| invariant(args[k])))
        .collect();
    (!r.chosen.is_empty()).then_some(r)
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

    /// Two clamps of an invariant float (`x = a; if (x > K) x = K; if (x < -K)
    /// x = -K; s = s + x / 3.0 + n * 3;`) as store promotion leaves them late in
    /// the pipeline: the first test is already outside the loop, the second
    /// tests the first's result in it; `n * 3` is invariant but fed by no choice.
    const CLAMPS: &str = r#"
declare @putfloat(f32) -> void

func @f(f32, i32) -> f32 {
bb0(%0: f32, %1: i32):
  %2 = fgt %0, 1048576.0
  jump bb1(0, 0.0)
bb1(%3: i32, %4: f32):
  %5 = slt %3, %1
  br %5, bb2, bb5
bb2:
  %6 = mul %1, 3
  br %2, bb3(1048576.0), bb3(%0)
bb3(%7: f32):
  %8 = flt %7, -1048576.0
  br %8, bb4(-1048576.0), bb4(%7)
bb4(%9: f32):
  %10 = fdiv %9, 3.0
  %11 = fadd %4, %10
  %12 = sitofp %6
  %13 = fadd %11, %12
  %14 = add %3, 1
  jump bb1(%14, %13)
bb5:
  ret %4
}

func @main() -> i32 {
bb0:
  %0 = call @f(5.5, 3)
  call @putfloat(%0)
  %1 = call @f(2000000.0, 2)
  call @putfloat(%1)
  %2 = call @f(-3000000.0, 4)
  call @putfloat(%2)
  %3 = call @f(7.0, 0)
  call @putfloat(%3)
  ret 0
}
"#;

    #[test]
    fn the_late_pass_decides_chained_clamps_and_hoists_only_what_they_feed() {
        let out = same_behaviour(CLAMPS, &["invselect"], "");
        // Both choices and the division of their result leave the loop; the
        // product `n * 3`, which no choice feeds, stays (as after `licm` it would not).
        assert_eq!(
            loop_ops(&out),
            ["slt", "mul", "fadd", "sitofp", "fadd", "add"],
            "{out}"
        );
        assert!(
            out.contains("br %2, bb1(1048576.0), bb1(%0)"),
            "the first choice in the preheader:\n{out}"
        );
    }

    #[test]
    fn the_late_pass_keeps_a_choice_of_a_varying_value() {
        // The first clamp chooses the running sum on one side: nothing is invariant.
        let src = CLAMPS.replace("bb3(1048576.0), bb3(%0)", "bb3(1048576.0), bb3(%4)");
        let out = same_behaviour(&src, &["invselect"], "");
        assert_eq!(
            loop_ops(&out),
            ["slt", "mul", "flt", "fdiv", "fadd", "sitofp", "fadd", "add"],
            "{out}"
        );
    }

    #[test]
    fn the_late_pass_keeps_a_choice_on_a_varying_condition() {
        // The first test reads the counter: the choices stay in the loop.
        let src = CLAMPS
            .replace("  %2 = fgt %0, 1048576.0\n", "")
            .replace("  %6 = mul %1, 3\n", "  %6 = mul %1, 3\n  %2 = sgt %3, 1\n");
        let out = same_behaviour(&src, &["invselect"], "");
        assert_eq!(
            loop_ops(&out),
            ["slt", "mul", "sgt", "flt", "fdiv", "fadd", "sitofp", "fadd", "add"],
            "{out}"
        );
    }

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

    /// `if (x > 100 || x < -100) x = 0;` of an invariant `x`: the short-circuit test
    /// is a branch whose arm is another branch, and the arm assigning 0 is entered
    /// from both.
    fn short_circuit(second_test: &str, arm: &str) -> String {
        CLAMP
            .replace(
                "  br %7, bb3(100), bb3(%6)\n",
                &format!(
                    "  br %7, bb5, bb6\nbb6:\n{second_test}  br %20, bb5, bb3(%6)\nbb5:\n{arm}  jump bb3(0)\n"
                ),
            )
            .replace(
                "  %2 = call @f(7, 5, 0)\n",
                "  %2 = call @f(7, 5, 0)\n  %9 = call @f(-300, 5, 10)\n  call @putint(%9)\n",
            )
    }

    /// Whether the multiply of the clamped value comes before the loop's entry
    /// (`jump bbN(0, 0)`) in `@f` of `out`.
    fn mul_hoisted(out: &str) -> bool {
        let f = out
            .split("\nfunc ")
            .find(|t| t.starts_with("@f("))
            .expect("@f");
        let mul = f.find(" = mul ").expect("a multiply");
        mul < f.find("(0, 0)\n").expect("the loop's entry")
    }

    #[test]
    fn hoists_a_short_circuit_choice() {
        let src = short_circuit("  %20 = slt %6, -100\n", "");
        let out = same_behaviour(&src, &["licm"], "");
        assert!(mul_hoisted(&out), "{out}");
        // Once the branches left in the loop are folded, it is one block.
        let out = run(&src, &["licm", "simplifycfg"]);
        assert_eq!(loop_ops(&out), ["slt", "sdiv", "add", "add"], "{out}");
    }

    /// The second test of the short circuit varies (it reads the counter): the choice
    /// stays in the loop.
    #[test]
    fn keeps_a_short_circuit_with_a_varying_test() {
        let src = short_circuit("  %20 = slt %3, 2\n", "");
        let out = same_behaviour(&src, &["licm"], "");
        assert!(!mul_hoisted(&out), "{out}");
    }

    /// An inner block that prints, or a shared arm that prints, is not a decision.
    #[test]
    fn keeps_a_short_circuit_with_output() {
        for (test, arm) in [
            ("  %20 = slt %6, -100\n  call @putint(1)\n", ""),
            ("  %20 = slt %6, -100\n", "  call @putint(2)\n"),
        ] {
            let src = short_circuit(test, arm);
            let out = same_behaviour(&src, &["licm"], "");
            assert!(!mul_hoisted(&out), "{out}");
        }
    }

    /// The inner test is also reached from outside the region (from the header):
    /// not a region (while the same test entered only from the region is one).
    #[test]
    fn keeps_a_short_circuit_entered_in_the_middle() {
        let inner =
            short_circuit("  %20 = slt %0, -100\n", "").replace("bb3(%6)\nbb5:", "bb3(%0)\nbb5:");
        let src = inner.replace(
            "  br %5, bb2, bb4\n",
            "  br %5, bb7, bb4\nbb7:\n  %30 = slt %3, 3\n  br %30, bb2, bb6\n",
        );
        let out = same_behaviour(&src, &["licm"], "");
        assert!(!mul_hoisted(&out), "{out}");
        let out = same_behaviour(&inner, &["licm"], "");
        assert!(mul_hoisted(&out), "{out}");
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
