//! Code sinking: a pure computation moves down the dominator tree to the block
//! where its uses are, so paths that do not use it no longer compute it.
//!
//! This is GCC's `tree-ssa-sink` (statement sinking, after Morel and Renvoise's
//! partial redundancy framework run backwards, i.e. partial dead code elimination
//! in its simplest form: Knoop, Rüthing and Steffen, "Partial Dead Code
//! Elimination", PLDI 1994) and LLVM's `Sink` pass. For an instruction in block
//! `D`, the nearest common dominator `L` of the blocks that use its result (a
//! branch argument is a use in the branching block) is the latest place every use
//! still sees it. The target is `L`, or, when `L` lies in a loop nested inside
//! `D`'s innermost loop (or outside it), the nearest dominator of `L` in `D`'s
//! innermost loop, so nothing moves into a loop or out of one (`exitsink` moves
//! computations out to a loop's exit). The instruction moves only when the target
//! does not post-dominate `D`: then some path through `D` avoids it, and every path
//! that reaches it has passed `D` once (no cycle leads back to it without `D`,
//! since both are in the same loop and not in an inner one), so it runs at most as
//! often as before, and less on the paths that skip it. As GCC sinks only into
//! blocks its estimated profile says run markedly less often than the source
//! (`param_sink_frequency_threshold`), the target must run at most half as often
//! as `D` by a static estimate ([`Frequencies`]: a branch on an equality is taken
//! 3/8 of the time, any other half the time): on an in-order core a division sunk
//! into a block that runs anyway only loses the latency the scheduler hid above
//! the branch.
//!
//! ```text
//! b0: %q = sdiv %x, %d           b0: br %c, b1, b3
//!     br %c, b1, b3              b1: br %e, b2, b3
//! b1: br %e, b2, b3       =>     b2: %q = sdiv %x, %d
//! b2: call @putint(%q)               call @putint(%q)
//! ```
//!
//! (A loop nest whose inner loop was unrolled leaves in the outer body what LICM
//! hoisted into the inner loop's preheader, above the tests that decide whether
//! the inner body runs at all; divisions among it are paid on every outer
//! iteration.)
//!
//! What moves: divisions and remainders (integer or float), computations whose
//! operands computed for them alone divide, and what only moved instructions use;
//! arithmetic, comparisons, conversions and address computations among these. Cheap
//! arithmetic alone stays: the back end's scheduler speculates it back above the
//! branch to fill latency. A division or remainder moves only when its divisor is
//! a constant other than 0 and -1 or its value range excludes both (it cannot
//! trap, so it may pass output on its way down). Not loads (a store on the way
//! could change what they read), calls or anything with an effect. Blocks are visited children first in the
//! dominator tree and each block bottom-up, so a chain `x -> y -> use` sinks as a
//! whole: `y` moves first, and `x` then follows it.

use crate::analysis::ranges::Ranges;
use crate::analysis::{FunctionAnalyses, LoopForest, PostDominatorTree, Preserved};
use crate::pipeline::FunctionTransform;
use ir::analysis::{distinct_in_order, ControlFlowGraph, DominatorTree};
use ir::{BinOp, Block, CmpOp, Function, Inst, InstKind, SecondaryMap, ValueDef};
use rustc_hash::{FxHashMap, FxHashSet};

/// The code sinking pass.
pub struct CodeSink;

impl FunctionTransform for CodeSink {
    const NAME: &'static str = "codesink";
    const DESCRIPTION: &'static str =
        "move pure computations down to the blocks that use them, off the paths that do not";
    /// Moves instructions only: no block or edge changes.
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// Steps a walk up the dominator tree may take per instruction, and instructions
/// a scan for the first use in the target block may pass: beyond them the
/// instruction stays, so the pass stays linear on long chains of blocks.
const WALK_BUDGET: usize = 256;

/// How often, at most, the target block may run per run of the source block
/// ([`Frequencies::region`]) for a move to pay: a division sunk into a block
/// that runs anyway only loses the latency the scheduler hid above the branch.
const MAX_RELATIVE_FREQUENCY: f64 = 0.5;

/// Blocks a frequency estimate may visit after the source in reverse post-order;
/// farther targets are not considered.
const REGION_BUDGET: usize = 512;

/// Sinks what can be sunk in `f`; the number of instructions moved.
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    // Only a division is worth moving, or what feeds or follows one.
    if !f
        .layout
        .blocks()
        .any(|b| f.layout.block_insts(b).any(|i| divides(f.kind(i))))
    {
        return 0;
    }
    let (cfg, dt, loops, ranges) = if has_variable_divisor(f) {
        let (cfg, dt, loops, ranges) = fa.loops_and_ranges(f);
        (cfg, dt, loops, Some(ranges))
    } else {
        let (cfg, dt, loops) = fa.loops(f);
        (cfg, dt, loops, None)
    };
    let pdt = PostDominatorTree::compute(f, cfg);
    let freq = Frequencies::new(cfg, dt, loops);
    let order: Vec<Block> = dt.preorder().into_iter().rev().collect();
    let mut sunk = FxHashSet::default();
    // The frequencies of the region of the block being visited, once asked.
    let mut region: Option<(Block, FxHashMap<Block, f64>)> = None;
    for b in order {
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for &i in insts.iter().rev() {
            let worth = worth_moving(f, i, b, 2, ranges) || follows(f, i, &sunk);
            if !worth || !movable(f, f.kind(i), ranges) {
                continue;
            }
            let Some(target) = target(f, dt, &pdt, loops, i, b) else {
                continue;
            };
            let region = match &region {
                Some((d, r)) if *d == b => r,
                _ => &region.insert((b, freq.region(f, b))).1,
            };
            if !region
                .get(&target)
                .is_some_and(|&x| x <= MAX_RELATIVE_FREQUENCY)
            {
                continue;
            }
            let Some(before) = first_use_in(f, i, target) else {
                continue;
            };
            f.layout.remove_inst(i);
            f.layout.insert_inst_before(i, before);
            sunk.insert(i);
        }
    }
    sunk.len()
}

/// Whether moving `i` (in block `b`) saves enough to be worth it: it divides, or
/// an operand computed in `b` for it alone (within `depth` levels) divides and
/// may move, so it would follow. Cheap arithmetic stays: the back end's scheduler
/// speculates it back above the branch to fill latency, and sinking it only
/// reorders what it does.
fn worth_moving(f: &Function, i: Inst, b: Block, depth: u32, ranges: Option<&Ranges>) -> bool {
    let k = f.kind(i);
    if divides(k) {
        return true;
    }
    let mut worth = false;
    if depth > 0 {
        k.for_each_arg(|a| {
            if let ValueDef::Inst(d) = f.value_def(a) {
                worth |= f.users(a).len() == 1
                    && f.layout.inst_block(d) == Some(b)
                    && movable(f, f.kind(d), ranges)
                    && worth_moving(f, d, b, depth - 1, ranges);
            }
        });
    }
    worth
}

/// Whether `k` is an integer or float division or remainder: the long-latency
/// operations worth keeping off the paths that do not need them.
fn divides(k: &InstKind) -> bool {
    matches!(k, InstKind::Binary { op, .. } if op.can_trap() || *op == BinOp::FDiv)
}

/// Whether every user of `i` is an instruction this pass moved: `i` then computes
/// only for them, and follows them down.
fn follows(f: &Function, i: Inst, sunk: &FxHashSet<Inst>) -> bool {
    f.inst_result(i).is_some_and(|r| {
        let users = f.users(r);
        !users.is_empty() && users.iter().all(|u| sunk.contains(u))
    })
}

/// Whether `f` divides by a value that is not a constant anywhere: only then do
/// [`movable`]'s questions need the value ranges.
fn has_variable_divisor(f: &Function) -> bool {
    f.layout.blocks().any(|b| {
        f.layout.block_insts(b).any(|i| {
            matches!(f.kind(i), InstKind::Binary { op, args }
                if op.can_trap() && f.as_iconst(args[1]).is_none())
        })
    })
}

/// Whether `k` has no effect and cannot trap, so it may run later or not at all.
fn movable(f: &Function, k: &InstKind, ranges: Option<&Ranges>) -> bool {
    match k {
        InstKind::Binary { op, args } if op.can_trap() => {
            Ranges::divisor_is_safe(ranges, f, args[1])
        }
        InstKind::Binary { .. } | InstKind::Cmp { .. } | InstKind::Unary { .. } => true,
        InstKind::Gep { .. } => true,
        _ => false,
    }
}

/// The block instruction `i` (in block `b`) should move to, if any: the nearest
/// common dominator of its uses, raised into `b`'s innermost loop, when that is
/// not `b` and does not post-dominate it.
fn target(
    f: &Function,
    dt: &DominatorTree,
    pdt: &PostDominatorTree,
    loops: &LoopForest,
    i: Inst,
    b: Block,
) -> Option<Block> {
    let r = f.inst_result(i)?;
    let mut common: Option<Block> = None;
    let mut budget = WALK_BUDGET;
    for &u in f.users(r) {
        let ub = f.layout.inst_block(u)?;
        let mut c = common.unwrap_or(ub);
        while !dt.dominates(c, ub) {
            c = dt.idom(c)?;
            budget = budget.checked_sub(1)?;
        }
        if c == b {
            return None;
        }
        common = Some(c);
    }
    let mut t = common?;
    let home = loops.innermost(b);
    while loops.innermost(t) != home {
        t = dt.idom(t)?;
        budget = budget.checked_sub(1)?;
    }
    (t != b && dt.dominates(b, t) && !pdt.post_dominates(t, b)).then_some(t)
}

/// Static frequency estimates within a loop body: each branch splits the
/// frequency of its block evenly among its edges, and joins add what reaches
/// them, as Wu and Larus ("Static Branch Frequency and Program Profile Analysis",
/// MICRO 1994) propagate branch probabilities over an acyclic region, here with
/// every branch taken half the time.
struct Frequencies<'a> {
    cfg: &'a ControlFlowGraph,
    dt: &'a DominatorTree,
    loops: &'a LoopForest,
    /// Position of each reachable block in the reverse post-order.
    position: SecondaryMap<Block, u32>,
}

impl<'a> Frequencies<'a> {
    fn new(cfg: &'a ControlFlowGraph, dt: &'a DominatorTree, loops: &'a LoopForest) -> Self {
        let mut position = SecondaryMap::new();
        for (k, &b) in cfg.rpo().iter().enumerate() {
            position[b] = k as u32;
        }
        Frequencies {
            cfg,
            dt,
            loops,
            position,
        }
    }

    /// How often each block runs per run of `d`, for the blocks `d` dominates
    /// within [`REGION_BUDGET`] places after it in reverse post-order:
    /// frequencies flow from `d` (1) along forward edges. A block of a loop
    /// nested in `d`'s, and every block after it, gets NaN (inner loops'
    /// iterations are not estimated), which no comparison accepts.
    fn region(&self, f: &Function, d: Block) -> FxHashMap<Block, f64> {
        let from = self.position[d] as usize;
        let to = (from + REGION_BUDGET).min(self.cfg.rpo().len() - 1);
        let home = self.loops.innermost(d);
        let mut freq: FxHashMap<Block, f64> = FxHashMap::default();
        freq.insert(d, 1.0);
        for &b in &self.cfg.rpo()[from + 1..=to] {
            if !self.dt.dominates(d, b) {
                continue;
            }
            let mut x = 0.0;
            for &p in distinct_in_order(self.cfg.preds(b)).iter() {
                if let Some(&fp) = freq.get(&p) {
                    if !self.dt.dominates(b, p) {
                        x += fp * self.probability(f, p, b);
                    }
                }
            }
            if x != 0.0 && self.loops.innermost(b) != home {
                x = f64::NAN;
            }
            freq.insert(b, x);
        }
        freq
    }

    /// The probability that `p` continues to `b`: a `br` on an equality is
    /// taken 3/8 of the time (Ball and Larus's opcode heuristic, with the
    /// weights of LLVM's `BranchProbabilityInfo`: values are seldom equal), any
    /// other branch splits evenly among its edges.
    fn probability(&self, f: &Function, p: Block, b: Block) -> f64 {
        let succs = self.cfg.succs(p);
        let even = succs.iter().filter(|&&s| s == b).count() as f64 / succs.len() as f64;
        let Some(InstKind::Br {
            cond,
            then_dest,
            else_dest,
        }) = f.terminator(p).map(|t| f.kind(t))
        else {
            return even;
        };
        if then_dest.block == else_dest.block {
            return 1.0;
        }
        let equal = match f.value_def(*cond) {
            ValueDef::Inst(i) => match f.kind(i) {
                InstKind::Cmp { op, .. } => match op {
                    CmpOp::Eq | CmpOp::FEq => Some(true),
                    CmpOp::Ne | CmpOp::FNe => Some(false),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        let taken = match equal {
            Some(true) => 0.375,
            Some(false) => 0.625,
            None => 0.5,
        };
        if then_dest.block == b {
            taken
        } else {
            1.0 - taken
        }
    }
}

/// Where in block `t` instruction `i` goes: before its first user there, or
/// before `t`'s first instruction when no user is in `t`.
fn first_use_in(f: &Function, i: Inst, t: Block) -> Option<Inst> {
    let r = f.inst_result(i)?;
    let users = f.users(r);
    if users.iter().all(|&u| f.layout.inst_block(u) != Some(t)) {
        return f.layout.first_inst(t);
    }
    f.layout
        .block_insts(t)
        .take(WALK_BUDGET * 4)
        .find(|x| users.contains(x))
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `bb0` computes a remainder and a product that only `bb2` uses, reached
    /// when two tests pass (a quarter of the time, by the static estimate).
    const ONE_ARM: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = srem %0, 14
  %3 = add %2, 15
  %4 = srem %1, %3
  %5 = mul %4, 3
  %6 = slt %0, %1
  br %6, bb1, bb3
bb1:
  %7 = sgt %0, 0
  br %7, bb2, bb3
bb2:
  call @putint(%5)
  jump bb3
bb3:
  ret 0
}
"#;

    fn block<'a>(out: &'a str, name: &str) -> &'a str {
        let at = out.find(&format!("\n{name}")).unwrap();
        let rest = &out[at + 1..];
        let end = rest[1..].find("\nbb").map_or(rest.len(), |e| e + 1);
        &rest[..end]
    }

    #[test]
    fn a_chain_used_on_a_rare_path_moves_there() {
        for stdin in ["3 100", "100 3", "-5 -2147483648", "7 7"] {
            let out = same_behaviour(ONE_ARM, &["codesink"], stdin);
            let arm = block(&out, "bb2:");
            // The remainder by a divisor in [2, 28] and everything after it move;
            // the comparison deciding the branch stays.
            for op in ["srem %0, 14", "add ", "srem %1, ", "mul "] {
                assert!(arm.contains(op), "{op} not sunk:\n{out}");
            }
            assert!(block(&out, "bb0:").contains("slt"), "{out}");
        }
    }

    /// A use on every path, a use on a path taken more than half the time (the
    /// sunk division would mostly lose the latency hidden above the branch), a divisor
    /// that may be 0 or -1, a chain without a division, and a use inside a loop
    /// the definition is not in: each keeps its instructions where they are.
    #[test]
    fn what_runs_often_or_could_trap_or_would_enter_a_loop_stays() {
        let stays = |src: &str| {
            let out = run(src, &["codesink"]);
            let entry = block(&out, "bb0:");
            assert!(
                entry.contains("srem %1, ") && entry.contains("mul"),
                "{out}"
            );
        };
        stays(&ONE_ARM.replace(
            "  jump bb3\nbb3:\n",
            "  jump bb3\nbb3:\n  call @putint(%5)\n",
        ));
        // `%0 != %1` holds 5/8 of the time by the estimate: more than half.
        stays(
            &ONE_ARM
                .replace("slt %0, %1", "ne %0, %1")
                .replace("br %7, bb2, bb3", "jump bb2"),
        );
        for divisor in ["add %2, 0", "add %2, -1"] {
            // The division stays, and so does the product of it, which alone
            // would save nothing.
            stays(&ONE_ARM.replace("add %2, 15", divisor));
        }
        // Cheap arithmetic alone stays too: the back end speculates it anyway.
        let cheap = ONE_ARM
            .replace("srem %0, 14", "and %0, 14")
            .replace("srem %1, %3", "add %1, %3");
        let out = run(&cheap, &["codesink"]);
        assert!(!block(&out, "bb2:").contains("mul"), "{out}");
        let looped = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sdiv %0, 7
  %2 = slt %0, 10
  br %2, bb1(0), bb3
bb1(%3: i32):
  call @putint(%1)
  %4 = add %3, 1
  %5 = slt %4, %0
  br %5, bb1(%4), bb3
bb3:
  ret 0
}
"#;
        let out = run(looped, &["codesink"]);
        assert!(block(&out, "bb0:").contains("sdiv %0, 7"), "{out}");
    }

    /// In a loop, a computation used only on a rarely taken path of the body
    /// moves there, not out of the loop; the result is unchanged.
    #[test]
    fn inside_a_loop_it_moves_to_the_rare_path_not_out_of_the_loop() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = slt %1, %0
  br %3, bb2, bb6
bb2:
  %4 = mul %1, %1
  %5 = sdiv %4, 3
  %6 = srem %1, 5
  %7 = eq %6, 0
  br %7, bb3, bb5(%2)
bb3:
  %8 = slt %1, 50
  br %8, bb4, bb5(%2)
bb4:
  %9 = add %2, %5
  jump bb5(%9)
bb5(%10: i32):
  %11 = add %1, 1
  jump bb1(%11, %10)
bb6:
  call @putint(%2)
  ret 0
}
"#;
        for stdin in ["0", "1", "17", "100"] {
            let out = same_behaviour(src, &["codesink"], stdin);
            let arm = block(&out, "bb4:");
            assert!(arm.contains("mul") && arm.contains("sdiv"), "{out}");
            assert!(block(&out, "bb2:").contains("srem"), "{out}");
        }
    }
}
