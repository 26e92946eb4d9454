//! Sinking to the loop exit: a computation in a loop whose result is used only
//! after the loop, and which no iteration needs, moves out of the loop onto its
//! exit edge, where it runs once instead of once per iteration.
//!
//! ```text
//!   while (n) { ans = f(a, n) % K; n = n - 1; }   // f has no side effects
//!   =>
//!   while (n) { m = n; n = n - 1; }  ans = f(a, m) % K;   // (when the loop ran)
//! ```
//!
//! This is the sinking half of LLVM's `LICM` (instructions used only outside the
//! loop sink into its exit blocks) and GCC's `tree-ssa-sink` (statements sink to
//! where their uses are, out of loops when possible), on a rotated loop
//! ([`super::looprotate`]). There the exit leaves from the bottom of an iteration,
//! so every value the iteration computed is still available on the exit edge: an
//! instruction whose only users are outside the loop (the exit edge's arguments,
//! blocks after the exit) or are themselves sunk gives the value of its last
//! execution there, and computing it once on that edge gives the same value from
//! the same operands. It is moved, not copied, so its operands are the same SSA
//! values.
//!
//! What may move (the instruction's block is in the loop itself, not in an inner
//! loop, and it is not a block parameter):
//!
//! - arithmetic, comparisons, conversions and address computations, division
//!   included (it runs on the exit edge with the operands of the last iteration,
//!   which ran it too, so it traps there only if the original did);
//! - loads, and calls to functions without side effects (pure, or only reading
//!   memory), when nothing in the loop writes memory: no store and no call that has
//!   side effects. Like DCE, this assumes such a call terminates.
//!
//! The loop has a single exit edge, and the instruction's users outside the loop
//! are on it or after it (SSA dominance gives this). The exit edge gets a block of
//! its own, and the instructions move there in their order.
//!
//! A loop that is not rotated yet, and carries a value no iteration reads (a
//! header parameter used only outside the loop: `ans` above, overwritten in every
//! iteration) while writing no memory, is rotated first, and the CFG simplified
//! ([`crate::passes::scalar::simplifycfg`]: the old header, now the latch, merges into the body).
//! The pass runs before inlining, which would turn a sinkable call into a loop nest
//! nothing moves.

use crate::analysis::{AnalysisManager, FunctionAnalyses, LoopForest, LoopId, Preserved, Purity};
use crate::pipeline::Pass;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, BlockCall, Function, Inst, InstKind, Module, Type};
use rustc_hash::FxHashSet;

/// The sink-to-exit pass.
pub struct ExitSink;

impl Pass for ExitSink {
    fn name(&self) -> &'static str {
        "exitsink"
    }
    fn description(&self) -> &'static str {
        "sink loop computations used only after the loop onto its exit edge"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        am.each_function_with_purity(m, |f, purity, fa| run_in(f, purity, fa) > 0)
    }
}

/// Sinks what it can in every loop of `f`; the number of instructions moved.
fn run_in(f: &mut Function, purity: &Purity, fa: &mut FunctionAnalyses) -> usize {
    let writes = {
        let (cfg, _, loops) = fa.loops(f);
        Summaries::compute(f, cfg, loops, purity).writes
    };
    let rotated = super::looprotate::rotate_some(f, fa, |f, loops, l| {
        carries_an_unread_value(f, loops, l) && !writes[l.0 as usize]
    });
    if rotated > 0 {
        // The rotated loop's old header, now its latch, is merged into the body
        // that jumps to it, so the values the body computes reach the exit edge
        // directly rather than through the latch's parameters.
        crate::passes::scalar::simplifycfg::run(f);
        fa.forget();
    }
    let (cfg, dt, loops) = fa.loops(f);
    let summaries = Summaries::compute(f, cfg, loops, purity);
    let mut plans = Vec::new();
    for (l, _) in loops.loops() {
        if let Some(plan) = plan(f, dt, loops, l, &summaries, purity) {
            plans.push(plan);
        }
    }
    let mut moved = 0;
    for p in &plans {
        moved += p.insts.len();
        apply(f, p);
    }
    if moved > 0 {
        fa.forget();
    }
    moved
}

/// What [`plan`] asks of every loop, computed bottom-up over the loop forest in
/// time linear in the function (asking each loop's block list would be quadratic
/// in the depth of a nest).
struct Summaries {
    /// Per loop: its own blocks (not inner loops'), in reverse post-order.
    own: Vec<Vec<Block>>,
    /// Per loop: whether it (inner loops included) may write memory or do I/O: a
    /// store, or a call with side effects.
    writes: Vec<bool>,
    /// Per loop: its exit edges (exiting block, which target, target), or `None`
    /// when there are more than [`Summaries::MAX_EXITS`] or a block of it returns.
    exits: Vec<Option<Vec<(Block, usize, Block)>>>,
}

impl Summaries {
    /// Exit edges tracked per loop: a plan needs exactly one, but an inner loop's
    /// exits may stay inside its parent.
    const MAX_EXITS: usize = 8;

    fn compute(f: &Function, cfg: &ControlFlowGraph, loops: &LoopForest, purity: &Purity) -> Self {
        let n = loops.len();
        let own = loops.own_blocks(cfg);
        let mut writes = vec![false; n];
        let mut exits: Vec<Option<Vec<(Block, usize, Block)>>> = vec![Some(Vec::new()); n];
        // Children have smaller ids than their parents.
        for (l, lp) in loops.loops() {
            let k = l.0 as usize;
            let mut w = lp.children.iter().any(|c| writes[c.0 as usize]);
            let mut list = Some(Vec::new());
            let add = |e: (Block, usize, Block), list: &mut Option<Vec<_>>| {
                if let Some(v) = list {
                    v.push(e);
                    if v.len() > Self::MAX_EXITS {
                        *list = None;
                    }
                }
            };
            for &b in &own[k] {
                for i in f.layout.block_insts(b) {
                    w |= match f.kind(i) {
                        InstKind::Store { .. } => true,
                        InstKind::Call { callee, .. } => purity.effects(*callee).has_side_effects(),
                        _ => false,
                    };
                }
                match f.terminator(b).map(|t| f.kind(t)) {
                    None | Some(InstKind::Ret { .. }) => list = None,
                    Some(kind) => {
                        for (which, t) in kind.targets().iter().enumerate() {
                            if !loops.contains(l, t.block) {
                                add((b, which, t.block), &mut list);
                            }
                        }
                    }
                }
            }
            for c in &lp.children {
                match &exits[c.0 as usize] {
                    Some(inner) => {
                        for &e in inner {
                            if !loops.contains(l, e.2) {
                                add(e, &mut list);
                            }
                        }
                    }
                    None => list = None,
                }
            }
            writes[k] = w;
            exits[k] = list;
        }
        Summaries { own, writes, exits }
    }
}

/// Whether the header of loop `l` has a parameter that nothing in the loop reads:
/// a value each iteration overwrites, wanted only after the loop.
fn carries_an_unread_value(f: &Function, loops: &LoopForest, l: LoopId) -> bool {
    let h = loops.get(l).header;
    f.block_params(h).iter().any(|&p| {
        f.users(p).iter().all(|&u| {
            f.layout
                .inst_block(u)
                .is_some_and(|b| !loops.contains(l, b))
        })
    })
}

/// What to sink from one loop: its instructions, in program order, and the exit
/// edge (the exiting block, which of its terminator's targets, the target).
struct Plan {
    insts: Vec<Inst>,
    exiting: Block,
    which: usize,
    exit: Block,
}

/// The instructions of loop `l` that can sink to its exit edge, if any.
fn plan(
    f: &Function,
    dt: &DominatorTree,
    loops: &LoopForest,
    l: LoopId,
    summaries: &Summaries,
    purity: &Purity,
) -> Option<Plan> {
    let k = l.0 as usize;
    // The single exit edge.
    let &[(exiting, which, exit)] = summaries.exits[k].as_deref()? else {
        return None;
    };
    let memory_ok = !summaries.writes[k];
    // Blocks of the loop itself (not of inner loops) that run on every iteration
    // that reaches the exit, innermost instructions last: visited bottom-up, so
    // a chain sinks whole.
    let own: Vec<Block> = summaries.own[k]
        .iter()
        .copied()
        .filter(|&b| dt.dominates(b, exiting))
        .collect();
    let mut sunk: FxHashSet<Inst> = FxHashSet::default();
    for &b in own.iter().rev() {
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for &i in insts.iter().rev() {
            if movable(f.kind(i), memory_ok, purity)
                && used_only_after(f, i, loops, l, exiting, &sunk)
            {
                sunk.insert(i);
            }
        }
    }
    if sunk.is_empty() {
        return None;
    }
    let insts: Vec<Inst> = own
        .iter()
        .flat_map(|&b| f.layout.block_insts(b))
        .filter(|i| sunk.contains(i))
        .collect();
    Some(Plan {
        insts,
        exiting,
        which,
        exit,
    })
}

/// Whether `k` computes a value without side effects that may run on the exit edge
/// instead (loads and calls only when the loop writes no memory).
fn movable(k: &InstKind, memory_ok: bool, purity: &Purity) -> bool {
    match k {
        InstKind::Load { .. } => memory_ok,
        InstKind::Call { callee, .. } => memory_ok && !purity.effects(*callee).has_side_effects(),
        InstKind::Alloc { .. } => false,
        k => !k.is_terminator() && !k.has_side_effects(),
    }
}

/// Whether every user of `i`'s result is outside loop `l`, is an instruction
/// already chosen to sink, or is the exiting block's terminator passing it only to
/// the exit (never around the loop).
fn used_only_after(
    f: &Function,
    i: Inst,
    loops: &LoopForest,
    l: LoopId,
    exiting: Block,
    sunk: &FxHashSet<Inst>,
) -> bool {
    let Some(v) = f.inst_result(i) else {
        return false;
    };
    if f.value_type(v) == Type::Void || !f.has_users(v) {
        return false;
    }
    f.users(v).iter().all(|&u| {
        if sunk.contains(&u) {
            return true;
        }
        let Some(b) = f.layout.inst_block(u) else {
            return false;
        };
        if !loops.contains(l, b) {
            return true;
        }
        b == exiting
            && f.kind(u).is_terminator()
            && f.kind(u)
                .targets()
                .iter()
                .all(|t| !t.args.contains(&v) || !loops.contains(l, t.block))
            && !matches!(f.kind(u), InstKind::Br { cond, .. } if *cond == v)
    })
}

/// Moves the plan's instructions onto the exit edge, into a new block there (which
/// `simplifycfg` merges into the exit block when it is the exit's only
/// predecessor): the edge's arguments may be the moved values.
fn apply(f: &mut Function, p: &Plan) {
    let term = f
        .terminator(p.exiting)
        .expect("the exiting block ends in a branch");
    let args = f.kind(term).targets()[p.which].args.to_vec();
    let s = f.create_block();
    f.layout.insert_block_after(s, p.exiting);
    for &i in &p.insts {
        f.layout.remove_inst(i);
        f.layout.append_inst(i, s);
    }
    f.append_inst(
        s,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(p.exit, args)),
        },
        Type::Void,
    );
    f.set_target(term, p.which, BlockCall::new(s, Vec::new()));
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{exec, run, same_behaviour};

    /// `while (n) { ans = f(a, n) % 7; n = n - 1; } putint(ans);` with `f`
    /// reading the global array it is given, and `loop_body` put before the
    /// overwriting assignment.
    fn overwritten(f_body: &str, loop_body: &str) -> String {
        format!(
            r#"
global @a: [i32; 4] = [3, 5, 7, 11]

declare @putint(i32) -> void
declare @getint() -> i32

func @f(ptr, i32) -> i32 {{
bb0(%0: ptr, %1: i32):
{f_body}
}}

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  jump bb1(%0, 0)
bb1(%1: i32, %2: i32):
  br %1, bb2, bb3
bb2:
{loop_body}
  %3 = call @f(@a, %1)
  %4 = srem %3, 7
  %5 = add %1, -1
  jump bb1(%5, %4)
bb3:
  call @putint(%2)
  ret 0
}}
"#
        )
    }

    const READS_ARRAY: &str =
        "  %2 = and %1, 3\n  %3 = gep %0, %2, 4\n  %4 = load i32, %3\n  %5 = mul %4, %1\n  ret %5";

    /// The block holding the call to `@f` in `main` and whether it is a loop
    /// block (it branches back to a block before it).
    fn call_block_of_main(out: &str) -> String {
        let main = &out[out.find("func @main").unwrap()..];
        let mut block = String::new();
        for line in main.lines() {
            if line.starts_with("bb") {
                block = line.to_string();
            }
            if line.contains("call @f(") {
                return block;
            }
        }
        panic!("no call to @f in\n{out}")
    }

    #[test]
    fn a_call_overwritten_every_iteration_runs_once_after_the_loop() {
        let src = overwritten(READS_ARRAY, "");
        for input in ["0", "1", "6"] {
            same_behaviour(&src, &["exitsink"], input);
        }
        let out = run(&src, &["exitsink"]);
        // The loop is rotated, and the call and the remainder sit on its exit edge,
        // in a block of their own that jumps to the exit with the result.
        let block = call_block_of_main(&out);
        assert!(
            !block.contains('('),
            "the call's block has no parameters: {out}"
        );
        let after_call = &out[out.find("call @f(").unwrap()..];
        let next_lines: Vec<&str> = after_call.lines().take(3).collect();
        assert!(next_lines[1].contains("srem"), "{out}");
        assert!(next_lines[2].starts_with("  jump bb"), "{out}");
        // The last of six iterations has n = 1: f = a[1] * 1 = 5, and 5 % 7 = 5.
        let m = ir::parse_module(&out).unwrap();
        assert_eq!(exec(&m, "6").0, "5");
    }

    #[test]
    fn the_call_keeps_the_last_iterations_argument() {
        // `n` is decremented after the call: the sunk call must see the last
        // iteration's `n` (1), not the value the loop exits with (0).
        let src = overwritten("  %2 = mul %1, 10\n  %3 = add %2, 3\n  ret %3", "");
        let out = same_behaviour(&src, &["exitsink"], "4");
        let m = ir::parse_module(&out).unwrap();
        assert_eq!(exec(&m, "4").0, "6"); // (1 * 10 + 3) % 7
    }

    #[test]
    fn a_loop_that_writes_memory_keeps_its_call() {
        // A store in the loop may change what `f` reads.
        let src = overwritten(READS_ARRAY, "  %10 = gep @a, 1, 4\n  store %1, %10");
        for input in ["0", "3"] {
            same_behaviour(&src, &["exitsink"], input);
        }
        let out = run(&src, &["exitsink"]);
        assert_eq!(out.matches("call @f(").count(), 1);
        let main = &out[out.find("func @main").unwrap()..];
        assert!(
            main.contains("store") && !main.contains("bb4"),
            "unchanged:\n{out}"
        );
    }

    #[test]
    fn a_call_with_side_effects_stays() {
        let src = overwritten("  call @putint(%1)\n  ret %1", "");
        let out = same_behaviour(&src, &["exitsink"], "3");
        let main = &out[out.find("func @main").unwrap()..];
        assert!(!main.contains("bb4"), "unchanged:\n{out}");
    }

    #[test]
    fn an_accumulated_value_stays() {
        // `s = s + f(n)`: every iteration's call is needed.
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = mul %0, %0
  ret %1
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  br %0, bb1(%0, 0), bb2(0)
bb1(%1: i32, %2: i32):
  %3 = call @f(%1)
  %4 = add %2, %3
  %5 = add %1, -1
  br %5, bb1(%5, %4), bb2(%4)
bb2(%6: i32):
  call @putint(%6)
  ret 0
}
"#;
        let out = same_behaviour(src, &["exitsink"], "5");
        assert_eq!(out.trim(), run(src, &[]).trim());
    }

    #[test]
    fn a_value_computed_on_some_iterations_only_stays() {
        // `if (n % 2) ans = f(n);`: the last call is not in the last iteration.
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = mul %0, 3
  ret %1
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  br %0, bb1(%0, 0), bb4(0)
bb1(%1: i32, %2: i32):
  %3 = srem %1, 2
  br %3, bb2, bb3(%2)
bb2:
  %4 = call @f(%1)
  jump bb3(%4)
bb3(%5: i32):
  %6 = add %1, -1
  br %6, bb1(%6, %5), bb4(%5)
bb4(%7: i32):
  call @putint(%7)
  ret 0
}
"#;
        for input in ["4", "5"] {
            same_behaviour(src, &["exitsink"], input);
        }
        assert_eq!(run(src, &["exitsink"]).trim(), run(src, &[]).trim());
    }

    #[test]
    fn a_loop_with_two_exits_keeps_its_code() {
        // `while (n) { ans = n * 3; if (ans == 9) break; n = n - 1; }`
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  br %0, bb1(%0), bb3(0)
bb1(%1: i32):
  %2 = mul %1, 3
  %3 = eq %2, 9
  br %3, bb3(%2), bb2
bb2:
  %4 = add %1, -1
  br %4, bb1(%4), bb3(%2)
bb3(%5: i32):
  call @putint(%5)
  ret 0
}
"#;
        for input in ["5", "2"] {
            same_behaviour(src, &["exitsink"], input);
        }
        assert_eq!(run(src, &["exitsink"]).trim(), run(src, &[]).trim());
    }
}
