//! The cost of inlining one call, with the call's constant arguments substituted:
//! LLVM's `InlineCost` (its `CallAnalyzer`, whose `SimplifiedValues` map the
//! callee's values to the constants the call site makes them). The callee is
//! walked from its entry with the constant arguments in place of its parameters:
//!
//! - an arithmetic, comparison or conversion whose operands are all known
//!   constants folds (with [`crate::fold`], the folder SCCP uses) and costs
//!   nothing;
//! - a `br` on a known condition follows only the taken edge and costs nothing
//!   (LLVM's model too: the jump it becomes merges its blocks away), so blocks
//!   reached only through untaken edges are dead and cost nothing;
//! - a block parameter is a constant when every feasible edge into it passes that
//!   same constant;
//! - every other instruction of a live block costs one (as in the raw size the
//!   inliner's thresholds are stated in).
//!
//! The inliner copies what the simulation leaves (LLVM's
//! `CloneAndPruneFunctionInto`): only the live blocks, with the folded values
//! replaced by their constants and the decided branches by jumps; the copy's
//! size is the cost plus those jumps ([`Simulation::copy_size`]).
//!
//! A call `f(0, p)` of a large function that returns at once when its first
//! argument is 0 then costs the few instructions of that path, and the passes
//! after the inliner fold the copy down to them.
//!
//! The walk is one pass over the blocks in reverse post-order, so it is linear in
//! the callee's size; it stops as soon as the cost exceeds the caller's budget.
//! Loops are handled optimistically, as SCCP does: the edges coming back to a
//! block already walked (loop back edges) are assumed not to change what was
//! concluded for it, and checked when they are met; if one does (a loop header's
//! parameter that is not the same constant around the loop, or a header reached
//! only through a back edge), the walk is redone once pessimistically, with every
//! parameter fed by a back edge merged beforehand with what the edge passes
//! (unknown unless it is a constant), and if that too fails the whole body counts.
//! The optimistic walk is what reaches LLVM's result on a loop whose header is the
//! function's first test (a tail recursion turned into a loop): under a constant
//! that leaves at the first test, the loop body, and its back edge, are dead.

use crate::fold::{fold_binary, fold_cmp, fold_unary, Const};
use ir::analysis::ControlFlowGraph;
use ir::{Block, BlockCall, Function, InstKind, SecondaryMap, Value};

/// What the walk knows of a value.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
enum Known {
    /// Nothing has reached it yet (a parameter of a block no feasible edge
    /// entered so far).
    #[default]
    Unreached,
    /// Always this constant.
    Const(Const),
    /// Not known.
    Varying,
}

impl Known {
    /// The knowledge of a value that is either `self` or `other`.
    fn meet(self, other: Known) -> Known {
        match (self, other) {
            (Known::Unreached, k) | (k, Known::Unreached) => k,
            (Known::Const(a), Known::Const(b)) if a == b => Known::Const(a),
            _ => Known::Varying,
        }
    }
}

/// The callee as one call sees it.
#[derive(Clone, Debug)]
pub struct Simulation {
    /// Instructions left in the blocks the call can reach, once those on known
    /// constants have folded and the branches on known conditions are decided.
    pub cost: usize,
    /// Branches on known conditions, which the copy keeps as jumps.
    decided: usize,
    /// Whether a feasible edge leads back to a block already walked: a loop runs.
    pub loops: bool,
    /// Blocks the call can reach.
    live: SecondaryMap<Block, bool>,
    /// What is known of the parameters and instruction results of live blocks.
    known: SecondaryMap<Value, Known>,
}

impl Simulation {
    /// Instructions of the pruned copy: the cost and a jump per decided branch.
    pub fn copy_size(&self) -> usize {
        self.cost + self.decided
    }

    /// Whether the call can reach `b`.
    pub fn is_live(&self, b: Block) -> bool {
        self.live[b]
    }

    /// The constant the block parameter or instruction result `v` always is
    /// under the call's arguments, if known (an instruction with this result
    /// folds; constants of the callee itself are not reported).
    pub fn constant(&self, v: Value) -> Option<Const> {
        match self.known[v] {
            Known::Const(c) => Some(c),
            _ => None,
        }
    }
}

/// The walk failed: the cost is over the budget, or a back edge contradicted the
/// optimistic assumptions (or, in the pessimistic walk, entered a dead block).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stop {
    OverBudget,
    Contradicted,
}

/// Whether back-edge parameters are assumed unaffected by their back edges.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Optimistic,
    Pessimistic,
}

/// Simulates `callee` called with `args` (`Some` for a constant argument, one per
/// parameter): `None` when the cost is over `budget`.
pub fn simulate(callee: &Function, args: &[Option<Const>], budget: usize) -> Option<Simulation> {
    let cfg = ControlFlowGraph::compute(callee);
    for mode in [Mode::Optimistic, Mode::Pessimistic] {
        match Walk::new(callee, &cfg, args, budget, mode).run() {
            Ok(sim) => return Some(sim),
            // More knowledge never costs more: the pessimistic walk would be over too.
            Err(Stop::OverBudget) => return None,
            Err(Stop::Contradicted) => {}
        }
    }
    whole_body(callee, &cfg, budget)
}

/// Every reachable block live and every instruction counted; a loop runs if an
/// edge leads back to a block at or before its source in reverse post-order.
fn whole_body(f: &Function, cfg: &ControlFlowGraph, budget: usize) -> Option<Simulation> {
    let mut live: SecondaryMap<Block, bool> = f.block_map();
    let mut cost = 0;
    let mut loops = false;
    for &b in cfg.rpo() {
        live[b] = true;
        cost += f.layout.block_insts(b).count();
        loops |= cfg.succs(b).iter().any(|&s| live[s]);
    }
    (cost <= budget).then_some(Simulation {
        cost,
        decided: 0,
        loops,
        live,
        known: SecondaryMap::new(),
    })
}

/// One walk over the callee.
struct Walk<'a> {
    f: &'a Function,
    cfg: &'a ControlFlowGraph,
    budget: usize,
    /// Values with what is known of them (parameters and instruction results;
    /// constants are read from the function).
    known: SecondaryMap<Value, Known>,
    live: SecondaryMap<Block, bool>,
    /// Blocks the walk has passed, live or not.
    walked: SecondaryMap<Block, bool>,
    cost: usize,
    decided: usize,
    loops: bool,
}

impl<'a> Walk<'a> {
    fn new(
        f: &'a Function,
        cfg: &'a ControlFlowGraph,
        args: &[Option<Const>],
        budget: usize,
        mode: Mode,
    ) -> Self {
        let mut w = Walk {
            f,
            cfg,
            budget,
            known: SecondaryMap::new(),
            live: f.block_map(),
            walked: f.block_map(),
            cost: 0,
            decided: 0,
            loops: false,
        };
        let entry = f.entry_block();
        w.live[entry] = true;
        for (&p, a) in f.block_params(entry).iter().zip(args) {
            w.known[p] = a.map_or(Known::Varying, Known::Const);
        }
        if mode == Mode::Pessimistic {
            w.merge_back_edges();
        }
        w
    }

    /// Merges into every parameter fed by a back edge (in reverse post-order)
    /// what that edge passes, as far as it is known without the walk: the
    /// constant, or unknown.
    fn merge_back_edges(&mut self) {
        let f = self.f;
        let mut seen: SecondaryMap<Block, bool> = f.block_map();
        for &b in self.cfg.rpo() {
            seen[b] = true;
            let term = f.terminator(b).expect("a block ends in a terminator");
            for t in f.kind(term).targets() {
                if !seen[t.block] {
                    continue;
                }
                for (&p, &a) in f.block_params(t.block).iter().zip(&t.args) {
                    let k = Const::of(f, a).map_or(Known::Varying, Known::Const);
                    self.known[p] = self.known[p].meet(k);
                }
            }
        }
    }

    fn run(mut self) -> Result<Simulation, Stop> {
        for &b in self.cfg.rpo() {
            self.walked[b] = true;
            if self.live[b] {
                self.walk_block(b)?;
            }
        }
        Ok(Simulation {
            cost: self.cost,
            decided: self.decided,
            loops: self.loops,
            live: self.live,
            known: self.known,
        })
    }

    /// What is known of `v`.
    fn get(&self, v: Value) -> Known {
        match Const::of(self.f, v) {
            Some(c) => Known::Const(c),
            // A value not set is a parameter of an entry left without argument
            // (never, in a verified call) or defined in a dead block (never, for
            // an operand in a live block, as its definition dominates it).
            None => match self.known[v] {
                Known::Unreached => Known::Varying,
                k => k,
            },
        }
    }

    fn constant(&self, v: Value) -> Option<Const> {
        match self.get(v) {
            Known::Const(c) => Some(c),
            _ => None,
        }
    }

    fn walk_block(&mut self, b: Block) -> Result<(), Stop> {
        let f = self.f;
        for i in f.layout.block_insts(b) {
            let folded = match f.kind(i) {
                InstKind::Binary { op, args: [a, x] } => self
                    .constant(*a)
                    .zip(self.constant(*x))
                    .and_then(|(a, x)| fold_binary(*op, a, x)),
                InstKind::Cmp { op, args: [a, x] } => self
                    .constant(*a)
                    .zip(self.constant(*x))
                    .and_then(|(a, x)| fold_cmp(*op, a, x)),
                InstKind::Unary { op, arg } => self.constant(*arg).and_then(|a| fold_unary(*op, a)),
                InstKind::Br {
                    cond,
                    then_dest,
                    else_dest,
                } => {
                    match self.constant(*cond) {
                        Some(Const::I(c)) => {
                            self.flow(if c != 0 { then_dest } else { else_dest })?;
                            self.decided += 1;
                            continue;
                        }
                        _ => {
                            self.flow(then_dest)?;
                            self.flow(else_dest)?;
                        }
                    }
                    None
                }
                InstKind::Jump { dest } => {
                    self.flow(dest)?;
                    None
                }
                _ => None,
            };
            if let Some(r) = f.inst_result(i) {
                self.known[r] = folded.map_or(Known::Varying, Known::Const);
            }
            if folded.is_none() {
                self.cost += 1;
                if self.cost > self.budget {
                    return Err(Stop::OverBudget);
                }
            }
        }
        Ok(())
    }

    /// Takes the feasible edge `t`: its target is live, its parameters meet its
    /// arguments. An edge to a block already walked must not change what the walk
    /// concluded there.
    fn flow(&mut self, t: &BlockCall) -> Result<(), Stop> {
        let params = self.f.block_params(t.block);
        if self.walked[t.block] {
            self.loops = true;
            if !self.live[t.block] {
                return Err(Stop::Contradicted);
            }
            for (&p, &a) in params.iter().zip(&t.args) {
                if self.known[p].meet(self.get(a)) != self.known[p] {
                    return Err(Stop::Contradicted);
                }
            }
            return Ok(());
        }
        self.live[t.block] = true;
        for (&p, &a) in params.iter().zip(&t.args) {
            self.known[p] = self.known[p].meet(self.get(a));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `@f` of the module `src`, simulated with `args` under a large budget.
    fn sim(src: &str, args: &[Option<i32>]) -> Simulation {
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().find(|f| f.name == "f").unwrap();
        let args: Vec<Option<Const>> = args.iter().map(|a| a.map(Const::I)).collect();
        simulate(f, &args, usize::MAX).unwrap()
    }

    /// Raw instruction count of `@f`.
    fn raw(src: &str) -> usize {
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().find(|f| f.name == "f").unwrap();
        f.num_insts()
    }

    /// `if (n <= 0 || n > 19) return -1;` then twelve multiplications of the
    /// second argument and a call: 19 instructions.
    fn guarded() -> String {
        let mut body = String::new();
        for k in 0..12 {
            let prev = if k == 0 {
                "%1".to_string()
            } else {
                format!("%{}", 9 + k)
            };
            body += &format!("  %{} = mul {prev}, %1\n", 10 + k);
        }
        format!(
            r#"
declare @putint(i32) -> void

func @f(i32, i32) -> i32 {{
bb0(%0: i32, %1: i32):
  %2 = sle %0, 0
  br %2, bb1, bb2
bb1:
  ret -1
bb2:
  %3 = sgt %0, 19
  br %3, bb1, bb3
bb3:
{body}  call @putint(%21)
  ret %21
}}
"#
        )
    }

    #[test]
    fn a_constant_that_takes_the_guard_costs_the_guard() {
        let src = guarded();
        // `sle 0, 0` folds, the branch is decided, `ret -1` is all that is left
        // (and a jump to it in the copy).
        let s = sim(&src, &[Some(0), None]);
        assert_eq!((s.cost, s.copy_size()), (1, 2));
        assert!(!s.loops);
        // 25 is over 19: the second test folds too.
        let s = sim(&src, &[Some(25), None]);
        assert_eq!((s.cost, s.copy_size()), (1, 3));
    }

    #[test]
    fn a_constant_that_passes_the_guard_or_none_costs_the_body() {
        let src = guarded();
        let n = raw(&src);
        assert_eq!(n, 19);
        // 5 passes both tests: they fold, the body and its return stay.
        assert_eq!(sim(&src, &[Some(5), None]).cost, n - 4 - 1);
        assert_eq!(sim(&src, &[None, None]).cost, n);
        // Unknown first argument: the guard stays; a constant second one folds
        // the multiplications.
        assert_eq!(sim(&src, &[None, Some(3)]).cost, n - 12);
    }

    #[test]
    fn the_walk_stops_over_budget() {
        let src = guarded();
        let m = ir::parse_module(&src).unwrap();
        let f = m.funcs.values().find(|f| f.name == "f").unwrap();
        assert!(simulate(f, &[None, None], 18).is_none());
        assert!(simulate(f, &[None, None], 19).is_some());
        assert!(simulate(f, &[Some(Const::I(0)), None], 1).is_some());
    }

    /// Two arms pass the same constant, or different ones, to a join.
    const JOIN: &str = r#"
func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  br %1, bb1, bb2
bb1:
  %2 = add %0, 0
  jump bb3(%2)
bb2:
  %3 = mul %0, 1
  jump bb3(%3)
bb3(%4: i32):
  %5 = eq %4, 7
  br %5, bb4, bb5
bb4:
  ret 1
bb5:
  %6 = mul %1, %1
  %7 = mul %6, %6
  %8 = mul %7, %7
  ret %8
}
"#;

    #[test]
    fn a_join_of_equal_constants_is_that_constant() {
        // Both arms compute 7: the join's parameter is 7, `bb5` is dead.
        let s = sim(JOIN, &[Some(7), None]);
        assert_eq!(s.cost, 4, "a branch, two jumps and the return");
        let m = ir::parse_module(JOIN).unwrap();
        let f = m.funcs.values().find(|f| f.name == "f").unwrap();
        let blocks: Vec<Block> = f.layout.blocks().collect();
        assert!(s.is_live(blocks[4]) && !s.is_live(blocks[5]));
        // Unknown first argument: nothing is decided after the first branch.
        assert_eq!(sim(JOIN, &[None, None]).cost, raw(JOIN));
    }

    #[test]
    fn a_join_of_different_constants_is_unknown() {
        let src = JOIN.replace("%3 = mul %0, 1", "%3 = add %0, 1");
        // 7 on one arm, 8 on the other: the comparison stays, both returns live.
        let s = sim(&src, &[Some(7), None]);
        assert_eq!(s.cost, raw(&src) - 2);
        // Known condition: only one arm reaches the join, whose value (8) is
        // known; the multiplications of 0 fold: a jump and the return are left.
        assert_eq!(sim(&src, &[Some(7), Some(0)]).cost, 2);
    }

    /// A loop whose header is the function's first test (a tail recursion turned
    /// into a loop): `while (n > 0) { putint(n); n = n - 1; } return 5;`.
    const LOOP: &str = r#"
declare @putint(i32) -> void

func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(%0)
bb1(%1: i32):
  %2 = sgt %1, 0
  br %2, bb2, bb3
bb2:
  call @putint(%1)
  %3 = sub %1, 1
  jump bb1(%3)
bb3:
  ret 5
}
"#;

    #[test]
    fn a_loop_the_constant_skips_is_dead() {
        let s = sim(LOOP, &[Some(0)]);
        assert_eq!(s.cost, 2, "the entry's jump and the return");
        assert!(!s.loops);
    }

    #[test]
    fn a_loop_the_constant_enters_is_counted_pessimistically() {
        // 3 enters the loop; the back edge passes 2, contradicting the optimistic
        // header parameter 3: the parameter is unknown, the whole body counts.
        let s = sim(LOOP, &[Some(3)]);
        assert_eq!(s.cost, raw(LOOP));
        assert!(s.loops);
        let s = sim(LOOP, &[None]);
        assert_eq!(s.cost, raw(LOOP));
        assert!(s.loops);
    }

    #[test]
    fn a_loop_invariant_constant_survives_the_back_edge() {
        // The header's second parameter is 4 on entry and around the loop.
        let src = r#"
declare @putint(i32) -> void

func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  jump bb1(%0, %1)
bb1(%2: i32, %3: i32):
  %4 = sgt %2, 0
  br %4, bb2, bb3
bb2:
  %5 = mul %3, 2
  call @putint(%5)
  %6 = sub %2, 1
  jump bb1(%6, %3)
bb3:
  ret 5
}
"#;
        let s = sim(src, &[None, Some(4)]);
        // `mul 4, 2` folds.
        assert_eq!(s.cost, raw(src) - 1);
        assert!(s.loops);
    }
}
