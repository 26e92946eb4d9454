//! Propagation of branch conditions: below the `then` edge of `br c, ..` the
//! condition `c` is known true, below the `else` edge known false. Every use of `c`
//! that such an edge dominates, and every comparison there that asks the same
//! question (the same operands and operator, swapped, or inverted), becomes a
//! constant; SCCP and CFG simplification then fold the branches they decide.
//!
//! Redundant tests are common after loop rotation (the guard of an inner loop tests
//! again what the outer guard established), partial inlining and recursive unrolling
//! (a copied body tests what its call site just tested). This is the dominator-based
//! part of what LLVM's `CorrelatedValuePropagation` and GVN's propagation of branch
//! conditions (`propagateEquality`) do: a walk of the dominator tree keeping the
//! facts established by the edges leading into each subtree.
//!
//! An edge establishes a fact only when it dominates its target: the target has that
//! single predecessor and the branch's two arms go to different blocks.
//!
//! Two extensions decide more than the literal question:
//! - Loop headers establish facts about their counters ([`loop_facts`]): below the
//!   header of `for (i = 0; i < n; i++)`, `i < n` and `i >= 0` hold. This is what
//!   removes the bounds checks of an inlined accessor such as
//!   `if (i < 0 || i >= n) return -1;` from the loops that call it. A counter is
//!   any header parameter scalar evolution finds affine with a constant step
//!   (`{init,+,s}<loop>`: `i += 2`, `i--`, `i = i + c` with `c` a constant
//!   reached through additions), not only `i + 1` tested with `<`.
//! - Facts comparing a value with constants bound it to an interval, which decides
//!   other comparisons of it with constants ([`facts::known`]): `i >= 0` decides
//!   `i < 0` and `i > -5`.
//! - An edge on which an integer equals a constant ([`pinned`]: `x == c`, or a
//!   non-comparison condition that is false) pins it, and the operands it is an
//!   invertible function of, to constants: every use below becomes the constant.
//!   So do facts confining an integer to one value (`x <= 0 || x > 1` false).
//! - A branch on an integer (not a comparison) whose facts confine it to an
//!   interval without 0 is taken: `if (i)` inside `for (i = -2; i < 0; i++)`.
//! - A comparison (or branch) of expressions no fact compares is decided by the
//!   intervals of the expressions, derived from those the facts give their
//!   operands ([`derived`], LLVM's `LazyValueInfo`): below `0 < d <= 19`,
//!   `-d == 0` is false.

mod derived;
pub(crate) mod dom_facts;
pub(crate) mod facts;
mod loop_facts;
mod pinned;

use crate::analysis::scev::ScalarEvolution;
use crate::analysis::Preserved;
use crate::analysis::{FunctionAnalyses, LoopForest};
use crate::pipeline::FunctionTransform;
use facts::{known, Fact, FactStack, Facts};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, Function, Inst, InstKind, Type, Value};
pub use loop_facts::Steps;
use rustc_hash::FxHashMap;

/// The condition propagation pass.
pub struct CondProp;

impl FunctionTransform for CondProp {
    const NAME: &'static str = "condprop";
    const DESCRIPTION: &'static str =
        "replace conditions known from dominating branches by constants";
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        // The steps are facts about values, which the rewrites keep.
        let steps = Steps::of(&mut fa.scev(f));
        let (cfg, dt) = fa.domtree(f);
        run_on(f, cfg, dt, &steps) > 0
    }
}

/// Replaces known conditions in `f`; returns how many uses or comparisons changed.
pub fn run(f: &mut Function) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let steps = Steps::of(&mut ScalarEvolution::new(f, &cfg, &dt, &loops).without_ranges());
    run_on(f, &cfg, &dt, &steps)
}

/// [`run`] with the function's CFG, dominator tree and counters' steps given (the
/// pass changes no edges: it rewrites uses and comparisons).
pub fn run_on(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    steps: &Steps,
) -> usize {
    let mut facts = FactStack::default();
    let mut pins = Pins::default();
    let mut zero_bits = Pins::default();
    let mut changed = 0;
    enum Step {
        Enter(Block),
        Leave(usize, usize, usize),
    }
    let mut stack = vec![Step::Enter(f.entry_block())];
    while let Some(step) = stack.pop() {
        match step {
            Step::Leave(n, p, z) => {
                facts.truncate(n);
                pins.truncate(p);
                zero_bits.truncate(z);
            }
            Step::Enter(b) => {
                stack.push(Step::Leave(facts.len(), pins.len(), zero_bits.len()));
                if let Some(fact) = edge_fact(f, cfg, b) {
                    facts.push(f, fact);
                    let mut pinned = pinned::pinned_by(f, &fact);
                    if pinned.is_empty() {
                        pinned = confined_to_one_value(f, &facts, &fact)
                            .map_or_else(Vec::new, |(x, c)| pinned::pinned_to(f, x, c));
                    }
                    for (v, m) in pinned::zero_bits_by(f, &pinned) {
                        zero_bits.push(v, m);
                    }
                    for (v, c) in pinned {
                        pins.push(v, c);
                    }
                }
                if !pins.is_empty() {
                    changed += substitute_pinned(f, b, &pins, &zero_bits);
                }
                let from_loop = loop_facts::loop_facts(f, cfg, dt, steps, b, &mut facts);
                for fact in from_loop {
                    facts.push(f, fact);
                }
                if !facts.is_empty() {
                    changed += rewrite_block(f, b, &facts);
                }
                for &c in dt.children(b).iter().rev() {
                    stack.push(Step::Enter(c));
                }
            }
        }
    }
    changed
}

/// The value `fact` compares with a constant, with the constant it is, when the
/// facts (`fact` the latest) confine it to that one value.
fn confined_to_one_value(f: &Function, facts: &FactStack, fact: &Fact) -> Option<(Value, i32)> {
    let (_, x, _) = facts::against_constant(f, fact.cmp?)?;
    match facts.interval(f, x)? {
        (lo, hi) if lo == hi => Some((x, i32::try_from(lo).ok()?)),
        _ => None,
    }
}

/// Values pinned to constants (or, as masks, known-zero bits) by the edges on the
/// current dominator-tree path, latest last.
#[derive(Default)]
struct Pins {
    log: Vec<Value>,
    value: FxHashMap<Value, Vec<i32>>,
}

impl Pins {
    fn len(&self) -> usize {
        self.log.len()
    }
    fn is_empty(&self) -> bool {
        self.log.is_empty()
    }
    fn push(&mut self, v: Value, c: i32) {
        self.log.push(v);
        self.value.entry(v).or_default().push(c);
    }
    fn truncate(&mut self, n: usize) {
        while self.log.len() > n {
            let v = self.log.pop().expect("longer than n");
            let cs = self.value.get_mut(&v).expect("logged");
            cs.pop();
            if cs.is_empty() {
                self.value.remove(&v);
            }
        }
    }
    fn get(&self, v: Value) -> Option<i32> {
        self.value.get(&v).and_then(|cs| cs.last().copied())
    }
}

/// Replaces the pinned operands of `b`'s instructions by their constants, and
/// divisions made exact by known-zero bits by shifts; returns how many
/// instructions changed.
fn substitute_pinned(f: &mut Function, b: Block, pins: &Pins, zero_bits: &Pins) -> usize {
    let mut changed = 0;
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    for i in insts {
        let kind = f.kind(i).clone();
        match pinned::exact_division(f, &kind, |x| zero_bits.get(x)) {
            Some(Ok(shift)) => {
                f.replace_kind(i, shift);
                changed += 1;
            }
            Some(Err(zero)) => {
                let r = f.inst_result(i).expect("a remainder has a result");
                f.replace_all_uses(r, zero);
                f.remove_inst(i);
                changed += 1;
                continue;
            }
            None => {}
        }
        let known: Vec<Option<i32>> = f.kind(i).args().iter().map(|&a| pins.get(a)).collect();
        if known.iter().any(Option::is_some) {
            replace_operands(f, i, &known);
            changed += 1;
        }
    }
    changed
}

/// Replaces operand `k` of `i` (in textual order) by the constant `known[k]`
/// where that is `Some`.
fn replace_operands(f: &mut Function, i: Inst, known: &[Option<i32>]) {
    let consts: Vec<Option<Value>> = known.iter().map(|k| k.map(|c| f.iconst(c))).collect();
    let mut kind = f.kind(i).clone();
    let mut k = 0;
    kind.map_args(|a| {
        if let Some(c) = consts[k] {
            *a = c;
        }
        k += 1;
    });
    f.replace_kind(i, kind);
}

/// The fact the edge into `b` establishes, when `b` has a single predecessor ending
/// in a `br` whose arms differ.
fn edge_fact(f: &Function, cfg: &ControlFlowGraph, b: Block) -> Option<Fact> {
    let [p] = cfg.preds(b) else {
        return None;
    };
    facts::branch_fact(f, *p, b)
}

/// Whether the facts comparing the `i32` `v` with constants confine it to an
/// interval without 0 (a counter of `for (i = -2; i < 0; i++)` below its
/// header): a branch on `v` is then taken (LLVM's CorrelatedValuePropagation
/// decides such a branch by `LazyValueInfo`'s range of `v`).
fn excludes_zero(f: &Function, facts: &FactStack, v: Value) -> bool {
    if f.value_type(v) != Type::I32 || f.as_iconst(v).is_some() {
        return false;
    }
    facts
        .interval(f, v)
        .is_some_and(|(lo, hi)| lo > 0 || hi < 0)
}

/// Rewrites the instructions of `b` with what `facts` know; returns the count.
fn rewrite_block(f: &mut Function, b: Block, facts: &FactStack) -> usize {
    let mut changed = 0;
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    for i in insts {
        // A comparison asking a known question is a constant.
        if let InstKind::Cmp { op, args: [x, y] } = *f.kind(i) {
            let r = f.inst_result(i).expect("cmp has a result");
            let t = known(f, facts, Some(r), Some((op, x, y)))
                .or_else(|| derived::decide_by_operands(f, facts, op, x, y));
            if let Some(t) = t {
                let c = f.iconst(i32::from(t));
                f.replace_all_uses(r, c);
                f.remove_inst(i);
                changed += 1;
                continue;
            }
        }
        // Uses of a known condition value. A comparison is exactly 0 or 1 and can be
        // replaced anywhere; any other condition is only known to be non-zero (or
        // zero), which decides a branch on it and nothing else. Operands are visited
        // in textual order (a `br`'s condition first).
        let is_br = matches!(f.kind(i), InstKind::Br { .. });
        let mut known_ops: Vec<Option<bool>> = Vec::new();
        f.kind(i).for_each_arg(|a| {
            let fact = facts.about_cond(a);
            let is_cond = is_br && known_ops.is_empty();
            known_ops.push(fact.filter(|x| x.cmp.is_some() || is_cond).map(|x| x.truth));
        });
        if let InstKind::Br { cond, .. } = *f.kind(i) {
            if known_ops[0].is_none() {
                known_ops[0] = if excludes_zero(f, facts, cond) {
                    Some(true)
                } else {
                    derived::truth_by_operands(f, facts, cond)
                };
            }
        }
        if known_ops.iter().all(Option::is_none) {
            continue;
        }
        let known: Vec<Option<i32>> = known_ops.iter().map(|k| k.map(i32::from)).collect();
        replace_operands(f, i, &known);
        changed += 1;
    }
    changed
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, run, same_behaviour};

    #[test]
    fn joins_and_shared_targets_establish_nothing() {
        // bb2 is reached from both arms of bb0 (through bb1): nothing is known there.
        let src = r#"
declare @putint(i32) -> void

func @f(i32) -> void {
bb0(%0: i32):
  %1 = slt %0, 10
  br %1, bb1, bb2
bb1:
  jump bb2
bb2:
  %2 = slt %0, 10
  call @putint(%2)
  br %1, bb3, bb3
bb3:
  ret
}
"#;
        check(&["condprop"], src, src);
    }

    #[test]
    fn behaviour_on_a_nest_of_tests() {
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb1, bb4
bb1:
  %2 = slt 0, %0
  br %2, bb2, bb3
bb2:
  call @putint(1)
  jump bb4
bb3:
  call @putint(2)
  jump bb4
bb4:
  %3 = sle %0, 0
  call @putint(%3)
  ret 0
}
"#;
        for input in ["5", "-3", "0"] {
            let out = same_behaviour(src, &["condprop"], input);
            assert!(out.contains("br 1, bb2, bb3"), "{out}");
        }
    }

    /// `for (i = -2; i < 0; i++) if (i) ..`: below the header `i` is in
    /// [-2, -1], so the branch on it is taken. Not when the loop runs up to 0.
    #[test]
    fn a_branch_on_a_counter_whose_interval_excludes_zero_is_taken() {
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(-2)
bb1(%0: i32):
  br %0, bb2, bb3
bb2:
  call @putint(1)
  jump bb4
bb3:
  call @putint(2)
  jump bb4
bb4:
  %1 = add %0, 1
  %2 = slt %1, 0
  br %2, bb1(%1), bb5
bb5:
  ret 0
}
"#;
        let out = same_behaviour(src, &["condprop"], "");
        assert!(out.contains("br 1, bb2, bb3"), "{out}");
        let to_zero = src.replace("slt %1, 0", "slt %1, 1");
        let out = same_behaviour(&to_zero, &["condprop"], "");
        assert!(out.contains("br %0, bb2, bb3"), "{out}");
    }

    /// Regression (functional/69_expr_eval and others): a condition that is not a
    /// comparison is only known to be non-zero below its `then` edge, not to be 1.
    #[test]
    fn a_non_comparison_condition_only_decides_branches() {
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  br %0, bb1, bb2
bb1:
  %1 = add %0, 1
  call @putint(%1)
  br %0, bb2, bb3
bb2:
  ret 0
bb3:
  ret 1
}
"#;
        let out = same_behaviour(src, &["condprop"], "41");
        assert!(
            out.contains("add %0, 1") && out.contains("br 1, bb2, bb3"),
            "{out}"
        );
    }

    /// What must not be concluded: without the guard the first iteration may have
    /// `i >= n`; counting while `i + 1 <= n` (`n` unknown) may wrap around from
    /// `i32::MAX`, so `i` is not known to stay above its start; neither is it for a
    /// step of 2 below an unknown bound.
    #[test]
    fn counters_that_may_start_out_of_range_or_wrap_prove_nothing() {
        let src = r#"
declare @putint(i32) -> void

func @f(i32) -> void {
bb0(%0: i32):
  jump bb1(0)
bb1(%2: i32):
  %3 = slt %2, 0
  %4 = sge %2, %0
  call @putint(%3)
  call @putint(%4)
  %7 = add %2, 1
  %8 = slt %7, %0
  br %8, bb1(%7), bb2
bb2:
  ret
}
"#;
        check(&["condprop"], src, &run(src, &[]));
        let guarded = src.replace("jump bb1(0)", "%1 = sgt %0, 0\n  br %1, bb1(0), bb2");
        for (from, to) in [("slt %7, %0", "sle %7, %0"), ("add %2, 1", "add %2, 2")] {
            let out = run(&guarded.replace(from, to), &["condprop"]);
            assert!(out.contains("slt %2, 0"), "{from} -> {to}:\n{out}");
        }
        // With a constant bound, a step of 2 cannot wrap: i <= 98, i + 2 <= 100.
        let out = run(
            &guarded
                .replace("add %2, 1", "add %2, 2")
                .replace("slt %7, %0", "slt %7, 100")
                .replace("sgt %0, 0", "sgt 100, 0"),
            &["condprop"],
        );
        assert!(!out.contains("slt %2, 0"), "{out}");
    }

    /// Loop rotation leaves the step behind a parameter of the latch and the start
    /// behind a parameter of the block before the loop; both are looked through.
    #[test]
    fn the_step_and_start_are_found_through_forwarding_parameters() {
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0)
bb1(%1: i32):
  %2 = slt %1, %0
  br %2, bb2(%1), bb5
bb2(%3: i32):
  %4 = slt %3, 0
  call @putint(%4)
  %5 = add %3, 1
  jump bb3(%5)
bb3(%6: i32):
  %7 = slt %6, %0
  br %7, bb2(%6), bb5
bb5:
  ret 0
}
"#;
        for input in ["3", "0", "-2"] {
            let out = same_behaviour(src, &["condprop"], input);
            assert!(out.contains("call @putint(0)"), "{out}");
        }
    }

    /// A counter stepping down by a `sub` (scalar evolution's `{n,+,-1}`) never
    /// rises above its start: `i > n` is false in the loop.
    #[test]
    fn a_counter_counting_down_by_sub_stays_below_its_start() {
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb1(%0), bb2
bb1(%2: i32):
  %3 = sgt %2, %0
  call @putint(%3)
  %4 = sub %2, 1
  %5 = sgt %4, 0
  br %5, bb1(%4), bb2
bb2:
  ret 0
}
"#;
        for input in ["3", "0"] {
            let out = same_behaviour(src, &["condprop"], input);
            assert!(out.contains("call @putint(0)"), "{out}");
        }
        // Stepping by 2 through two additions, below a constant bound: `i >= 0`.
        let src = src
            .replace("%1 = sgt %0, 0", "%1 = slt %0, 50")
            .replace("br %1, bb1(%0), bb2", "br %1, bb1(0), bb2")
            .replace("%3 = sgt %2, %0", "%3 = slt %2, 0")
            .replace("%4 = sub %2, 1", "%6 = add %2, 1\n  %4 = add %6, 1")
            .replace("%5 = sgt %4, 0", "%5 = slt %4, %0");
        let src = src.replace("slt %4, %0", "slt %4, 50");
        for input in ["3", "60"] {
            let out = same_behaviour(&src, &["condprop"], input);
            assert!(out.contains("call @putint(0)"), "{out}");
        }
    }

    /// `x = x + i` is no affine counter: `x` falls below its start (0, -5, -9, ..)
    /// before it grows, and `x < 0` stays a question.
    #[test]
    fn a_counter_stepping_by_another_counter_has_no_lower_bound() {
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, -5)
bb1(%1: i32, %2: i32):
  %3 = slt %1, 0
  call @putint(%3)
  %4 = add %1, %2
  %5 = add %2, 1
  %6 = slt %4, 100
  br %6, bb1(%4, %5), bb2
bb2:
  ret 0
}
"#;
        // (The output numbers values from %0.)
        let out = same_behaviour(src, &["condprop"], "");
        assert!(out.contains("call @putint(%2)"), "{out}");
    }
}
