//! Final value replacement: when a loop runs a number of times known at compile
//! time, the values it hands to its exit that grow by a loop-invariant amount per
//! iteration are computed in closed form before the loop, so nothing after the loop
//! depends on the loop's iterations any more. A loop that only computed such values
//! is then dead, and aggressive DCE ([`crate::passes::scalar::dce`]) deletes it.
//!
//! This is the exit-value rewriting of induction-variable simplification (LLVM's
//! `IndVarSimplify` on scalar evolutions; GCC's final value replacement in
//! `tree-scalar-evolution.c`), on the scalar evolution of [`crate::analysis::scev`]:
//!
//! - The loop has a preheader and one exiting block, which runs on every iteration
//!   (it dominates the latches; it may be the latch of a rotated loop or the header
//!   of a `while` loop), and its exit test has a constant exit count `b` (the back
//!   edges taken): any constant step, `<`, `<=`, `>`, `>=` or `!=`, the counter
//!   tested before or after its step (see [`crate::analysis::scev::tripcount`]).
//! - A header parameter whose evolution is `{x0,+,c}` or `{x0,+,c,+,e}` with `c`
//!   and `e` invariant has the value `x0 + k*c (+ C(k,2)*e)` on iteration `k`
//!   (wrapping, like the loop's own additions). Uses after the loop see iteration
//!   `b`: the parameter there, and (when the exiting block is the only latch) the
//!   argument it passes back, which is the parameter's value on iteration `b + 1`.
//!   Those uses are replaced by that expression, computed in the preheader. The
//!   recurrence and its steps are the scalar evolution's, whatever arithmetic
//!   passes the parameter back (`x + c`, `x - c`, `(x + 1) + 1`, `(x + i) + n`);
//!   a first-order step must be made of values from before the loop, and an
//!   operand of the value passed back that equals it is reused, else it is
//!   expanded ([`crate::analysis::scev::expand`]).
//! - Values computed from the parameters in blocks that run on every iteration up
//!   to the exit, by arithmetic that cannot trap, are recomputed in the preheader
//!   from the parameters' final values.
//! - A loop that stays after the replacement (a parameter is no recurrence, or
//!   it stores or calls) gets it only when its count costs at most
//!   [`CHEAP_COUNT`] instructions before it, as LLVM's `OnlyCheapRepl` expands a
//!   high-cost exit value only for a loop it can then delete.

use crate::analysis::scev::expand::{emitted_since, remove_emitted, Expander, Operand};
use crate::analysis::scev::{Expr, ExprId, Exprs, ScalarEvolution};
use crate::analysis::FunctionAnalyses;
use crate::analysis::{LoopForest, LoopId, Preserved};
use crate::pipeline::FunctionTransform;
use ir::analysis::DominatorTree;
use ir::{BinOp, Block, Function, Inst, InstKind, Type, Value, ValueDef};
use rustc_hash::{FxHashMap, FxHashSet};

/// The final value replacement pass.
pub struct FinalValue;

impl FunctionTransform for FinalValue {
    const NAME: &'static str = "finalvalue";
    const DESCRIPTION: &'static str = "compute the exit values of counted loops in closed form";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_on(f, fa) > 0
    }
}

/// Replaces exit values in every qualifying loop of `f`; returns how many.
fn run_on(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    // Only instructions in preheaders and branch arguments change: the loop
    // structure stays valid. The loops are analysed together, in rounds: a loop
    // waits for the next round when a loop inside it changed in this one (its
    // recurrences may then see the inner loop's exit values in closed form). A
    // plan stays right when an inner loop changes first (it names values, which
    // keep their meaning), so after a few rounds everything left is applied: a
    // deep nest costs a few analyses of the function, not one per level.
    const ROUNDS: usize = 3;
    let loops = fa.loops(f).2;
    let mut pending: Vec<LoopId> = loops.loops().map(|(id, _)| id).collect();
    let mut replaced = 0;
    for round in 0..ROUNDS {
        if pending.is_empty() {
            break;
        }
        let (plans, exprs) = {
            // No value ranges: counts of `<` and `>` tests stepping by one, and of
            // constant bounds, need none (and the ranges of the whole function on
            // every round would cost more than the rest of the pass).
            // The analysis the manager keeps, while the function is unchanged.
            let mut se = fa.scev(f);
            let plans: Vec<Plan> = pending
                .iter()
                .filter_map(|&id| analyse(&mut se, id))
                .collect();
            if plans.is_empty() {
                break;
            }
            (plans, std::mem::take(&mut se.exprs))
        };
        // Its expressions are taken: it is started anew next time.
        fa.forget_scev();
        let (_, dt, loops) = fa.loops(f);
        // The loops around a planned loop, each found once (walking up from
        // every plan stops at a loop already marked): linear in the plans and
        // the depth, where testing every pair of plans is quadratic.
        let mut around_planned: FxHashSet<LoopId> = FxHashSet::default();
        for plan in &plans {
            let mut up = loops.get(plan.id).parent;
            while let Some(l) = up {
                if !around_planned.insert(l) {
                    break;
                }
                up = loops.get(l).parent;
            }
        }
        let inside_planned = |id: LoopId| around_planned.contains(&id);
        // Each round applies at least the innermost plans, so fewer loops wait.
        let mut waiting = Vec::new();
        for plan in &plans {
            if round + 1 < ROUNDS && inside_planned(plan.id) {
                waiting.push(plan.id);
            } else {
                replaced += replace_exit_values(f, dt, loops, &exprs, plan);
            }
        }
        pending = waiting;
    }
    replaced
}

/// The back edges a loop takes before it leaves.
#[derive(Clone, Copy)]
enum Taken {
    /// Known at compile time.
    Const(i32),
    /// An `i32` scalar-evolution expression of values available before the loop:
    /// the count (below 2^32) modulo 2^32.
    Symbolic(ExprId),
}

/// What the scalar evolution says about one loop.
struct Plan {
    id: LoopId,
    header: Block,
    preheader: Block,
    /// The only block leaving the loop, its branch and the index of its exit target.
    exiting: Block,
    branch: Inst,
    exit: usize,
    taken: Taken,
    /// Per header parameter, the steps of its recurrence (first order, or second).
    steps: Vec<Option<Vec<Operand>>>,
    /// Whether the exiting block is the only latch.
    latch_exits: bool,
}

/// The plan for loop `id`, if it has a count that holds without predicates and
/// one exiting block.
fn analyse(se: &mut ScalarEvolution, id: LoopId) -> Option<Plan> {
    let (f, loops) = (se.f, se.loops);
    let preheader = loops.preheader(id, se.cfg)?;
    let [exiting] = se.exiting_blocks(id)[..] else {
        return None;
    };
    let count = se.exit_count(id, exiting)?;
    if !count.predicates.is_empty() {
        return None;
    }
    let taken = match se.exprs.as_const(count.count) {
        // The body runs `taken + 1` times: that must be an i32.
        Some(c) => Taken::Const(i32::try_from(c).ok().filter(|&t| t < i32::MAX)?),
        // A run-time count of a counter stepping by more than one divides by the
        // step: more than the few iterations such loops usually run cost (as LLVM
        // counts a division a high-cost expansion).
        None if se.exit_test(id, exiting)?.step.abs() != 1 => return None,
        None => Taken::Symbolic(se.exprs.trunc(loops, f, count.count)),
    };
    let branch = f.terminator(exiting)?;
    let exit = f
        .kind(branch)
        .targets()
        .iter()
        .position(|t| !loops.contains(id, t.block))?;
    let lp = loops.get(id);
    let latch_exits = lp.latches[..] == [exiting];
    let symbolic = matches!(taken, Taken::Symbolic(_));
    let steps: Vec<Option<Vec<Operand>>> = f
        .block_params(lp.header)
        .iter()
        .map(|&x| {
            let steps = recurrence_steps(se, id, x)?;
            // With a run-time count a second-order value costs a dozen
            // instructions before the loop: worth it when the loop then no longer
            // computes it (as LLVM's `OnlyCheapRepl` weighs expansion cost).
            (!symbolic || steps.len() == 1 || only_feeds_itself(f, loops, id, x)).then_some(steps)
        })
        .collect();
    if steps.iter().all(Option::is_none) {
        return None;
    }
    Some(Plan {
        id,
        header: lp.header,
        preheader,
        exiting,
        branch,
        exit,
        taken,
        steps,
        latch_exits,
    })
}

/// Whether loop `id` stores or calls (so it stays when its values are replaced).
fn has_effects(f: &Function, loops: &LoopForest, id: LoopId) -> bool {
    loops.get(id).blocks.iter().any(|&b| {
        f.layout
            .block_insts(b)
            .any(|i| matches!(f.kind(i), InstKind::Store { .. } | InstKind::Call { .. }))
    })
}

/// The steps of `x` when it is an `i32` recurrence `{x0,+,c}` or `{x0,+,c,+,e}`
/// of `id` (as the scalar evolution describes it, whatever arithmetic passes it
/// back: `x + c`, `x - c`, `(x + 1) + 1`): for the first order the step `c` is
/// built from values defined before the loop, the operand of the value passed
/// back that equals it reused (as LLVM's `SCEVExpander` reuses a value that
/// already computes an expression), else a constant, a value or an invariant
/// expression expanded before the loop; for the second order `c` and `e` are
/// constants, values defined outside the loop or invariant expressions.
fn recurrence_steps(se: &mut ScalarEvolution, id: LoopId, x: Value) -> Option<Vec<Operand>> {
    let (f, loops) = (se.f, se.loops);
    if f.value_type(x) != Type::I32 {
        return None;
    }
    let e = se.get(x);
    let (l, ops) = se.exprs.as_addrec(e)?;
    let ops = ops.to_vec();
    if l != id || ops.len() > 3 {
        return None;
    }
    let outside = |v: Value| f.value_block(v).is_none_or(|b| !loops.contains(id, b));
    let operand = |se: &ScalarEvolution, o| match *se.exprs.get(o) {
        Expr::Const { c, .. } => Some(Operand::Const(c as i32)),
        Expr::Unknown { v, .. } if outside(v) => Some(Operand::Value(v)),
        _ if se.invariant(o, id) => Some(Operand::Expr(o)),
        _ => None,
    };
    if ops.len() == 3 {
        return ops[1..].iter().map(|&o| operand(se, o)).collect();
    }
    // The step must be made of values available before the loop (a step the
    // loop computes, even one that folds to a constant, stays: a deep nest of
    // such loops would keep every level's final value live at once).
    let inputs = step_inputs(f, loops, id, x)?;
    if let Some(&w) = inputs.iter().find(|&&w| se.get(w) == ops[1]) {
        return Some(vec![Operand::Value(w)]);
    }
    Some(vec![operand(se, ops[1])?])
}

/// How many instructions [`step_inputs`] follows.
const STEP_WALK: usize = 8;

/// The values from before loop `id` (one latch) that the value header parameter
/// `x` passes back is computed from, besides `x`: `None` when that computation
/// reads another value of the loop that does not come from `x` (a header
/// parameter, a block parameter, an instruction reading neither), or is longer
/// than [`STEP_WALK`] instructions.
fn step_inputs(f: &Function, loops: &LoopForest, id: LoopId, x: Value) -> Option<Vec<Value>> {
    let lp = loops.get(id);
    let [latch] = lp.latches[..] else {
        return None;
    };
    let k = f.block_params(lp.header).iter().position(|&p| p == x)?;
    let term = f.terminator(latch)?;
    let back = f
        .kind(term)
        .targets()
        .into_iter()
        .find(|t| t.block == lp.header)?;
    let inside = |v: Value| f.value_block(v).is_some_and(|b| loops.contains(id, b));
    let mut inputs = Vec::new();
    let mut work = vec![back.args[k]];
    let mut seen = FxHashSet::default();
    let mut walked = 0;
    while let Some(v) = work.pop() {
        if v == x || !seen.insert(v) {
            continue;
        }
        if !inside(v) {
            inputs.push(v);
            continue;
        }
        walked += 1;
        if walked > STEP_WALK {
            return None;
        }
        let i = f.def_inst(v)?;
        let mut from_x = false;
        f.kind(i).for_each_arg(|a| {
            from_x |= a == x || inside(a);
            work.push(a);
        });
        if !from_x {
            return None;
        }
    }
    Some(inputs)
}

/// How many instructions the invariant steps and the count may take to expand.
const EXPANSION_BUDGET: usize = 24;

/// The most instructions the trip count may take before a loop that stays: a
/// final value then only saves the loop one live value and its step, which a
/// count of more than an add or two costs more than (a maximum, for a body that
/// may run fewer times than its bounds differ by, is a comparison, a product and
/// two adds). As LLVM's `OnlyCheapRepl`: a high-cost expansion only when the
/// loop can then be deleted.
const CHEAP_COUNT: usize = 2;

fn replace_exit_values(
    f: &mut Function,
    dt: &DominatorTree,
    loops: &LoopForest,
    exprs: &Exprs,
    plan: &Plan,
) -> usize {
    let id = plan.id;
    let pterm = f.terminator(plan.preheader).expect("preheader has a jump");
    let init: Vec<Value> = f
        .kind(pterm)
        .targets()
        .iter()
        .find(|t| t.block == plan.header)
        .expect("the preheader enters the header")
        .args
        .to_vec();
    let nexts: Vec<Value> = if plan.latch_exits {
        let t = f.kind(plan.branch).targets();
        let back = t
            .iter()
            .find(|t| t.block == plan.header)
            .expect("a back edge");
        back.args.to_vec()
    } else {
        Vec::new()
    };
    let params = f.block_params(plan.header).to_vec();
    let preheader = plan.preheader;
    let available =
        move |f: &Function, v: Value| f.value_block(v).is_none_or(|b| dt.dominates(b, preheader));
    // What is emitted goes between this and the preheader's jump; taken out
    // again when nothing is replaced (so an unchanged function stays unchanged).
    let emitted_after = f.layout.prev_inst(pterm);
    let mut ex = Expander::new(exprs, pterm, pterm, EXPANSION_BUDGET);
    let Some(counts) = Coefficients::new(f, &mut ex, &available, plan.taken) else {
        remove_emitted(f, emitted_after, pterm);
        return 0;
    };
    // Whether the loop stays after its values are replaced (some parameter is
    // no recurrence, or it stores or calls), asked only of a costly count: the
    // walk of its blocks, for every loop of a deep nest, would cost the nest's
    // size times its depth.
    if emitted_since(f, emitted_after, pterm) > CHEAP_COUNT
        && (plan.steps.iter().any(Option::is_none) || has_effects(f, loops, id))
    {
        remove_emitted(f, emitted_after, pterm);
        return 0;
    }

    let steps: Vec<Option<Vec<Value>>> = plan
        .steps
        .iter()
        .map(|steps| {
            steps
                .as_ref()?
                .iter()
                .map(|o| o.value(f, &mut ex, &available))
                .collect()
        })
        .collect();
    let mut derived = Derived {
        plan,
        pterm,
        init: &init,
        steps,
        counts,
        memo: FxHashMap::default(),
    };

    let mut exit = f.kind(plan.branch).targets()[plan.exit].clone();
    let mut replaced = 0;
    for (j, &param) in params.iter().enumerate() {
        // Uses after the loop see the last iteration: `x` after `taken` steps, the
        // value it passes back after one more. They are outside the loop, or
        // arguments on the exit edge.
        let mut uses = vec![(param, false)];
        if let Some(&next) = nexts.get(j) {
            uses.push((next, true));
        }
        for (v, one_more) in uses {
            let outside = users_outside(f, loops, id, v);
            let on_exit = exit.args.contains(&v);
            if outside.is_empty() && !on_exit {
                continue;
            }
            let Some(value) = derived.param(f, j, one_more) else {
                continue;
            };
            for u in outside {
                f.map_inst_args(u, |a| if a == v { value } else { a });
            }
            for a in exit.args.iter_mut() {
                if *a == v {
                    *a = value;
                }
            }
            replaced += 1;
        }
    }
    // Values computed from the counters on every iteration (the exiting block is
    // the only exit, so their last iteration's value is what leaves): recomputed
    // before the loop from the parameters' last values. They lie in the loop's
    // blocks that dominate the exiting block: its dominators up to the header,
    // found up the dominator tree in reverse RPO order (linear in their number,
    // where filtering the loop's block list costs the loop's size, and a nest the
    // square of its depth).
    let mut chain = vec![plan.exiting];
    while let Some(&b) = chain.last().filter(|&&b| b != plan.header) {
        chain.push(dt.idom(b).expect("the header dominates the exiting block"));
    }
    let body: Vec<ir::Inst> = chain
        .iter()
        .rev()
        .flat_map(|&b| f.layout.block_insts(b))
        .collect();
    for i in body {
        let Some(v) = f.inst_result(i) else {
            continue;
        };
        if params.contains(&v) || nexts.contains(&v) {
            continue;
        }
        let on_exit = exit.args.contains(&v);
        if !on_exit && !loops.used_outside(f, id, v) {
            continue;
        }
        let outside = users_outside(f, loops, id, v);
        if outside.is_empty() && !on_exit {
            continue;
        }
        let Some(value) = derived.exit_value(f, dt, loops, v, 0) else {
            continue;
        };
        for u in outside {
            f.map_inst_args(u, |a| if a == v { value } else { a });
        }
        for a in exit.args.iter_mut() {
            if *a == v {
                *a = value;
            }
        }
        replaced += 1;
    }
    if replaced > 0 {
        f.set_target(plan.branch, plan.exit, exit);
    } else {
        remove_emitted(f, emitted_after, pterm);
    }
    replaced
}

/// Whether header parameter `x` of loop `id` is read in the loop only by the
/// computation of its next value, which the loop only passes back or out.
fn only_feeds_itself(f: &Function, loops: &LoopForest, id: LoopId, x: Value) -> bool {
    let inside = |u: &Inst| {
        f.layout
            .inst_block(*u)
            .is_some_and(|b| loops.contains(id, b))
    };
    let users: Vec<Inst> = f.users(x).iter().copied().filter(inside).collect();
    let [next] = users[..] else {
        return false;
    };
    let Some(n) = f.inst_result(next) else {
        return false;
    };
    f.users(n)
        .iter()
        .filter(|u| inside(u))
        .all(|&u| f.kind(u).is_terminator())
}

/// The instructions outside loop `id` that use `v`.
fn users_outside(f: &Function, loops: &LoopForest, id: LoopId, v: Value) -> Vec<ir::Inst> {
    f.users(v)
        .iter()
        .copied()
        .filter(|&u| {
            f.layout
                .inst_block(u)
                .is_some_and(|b| !loops.contains(id, b))
        })
        .collect()
}

/// How deep [`Derived::exit_value`] follows operands.
const MAX_DEPTH: usize = 12;

/// Exit values of values computed from a counted loop's parameters.
struct Derived<'a> {
    plan: &'a Plan,
    pterm: ir::Inst,
    init: &'a [Value],
    /// Per header parameter, the steps of its recurrence, expanded.
    steps: Vec<Option<Vec<Value>>>,
    counts: Coefficients,
    memo: FxHashMap<Value, Option<Value>>,
}

impl Derived<'_> {
    /// Header parameter `j` after the last iteration's steps (and one more):
    /// `x0 + C(k,1)*c` (and `+ C(k,2)*e` for a second step `e`).
    fn param(&mut self, f: &mut Function, j: usize, one_more: bool) -> Option<Value> {
        let steps = self.steps[j].clone()?;
        let mut acc = self.init[j];
        for (order, &c) in steps.iter().enumerate() {
            let coefficient = self.counts.get(f, self.pterm, one_more, order + 1);
            let prod = binary(f, self.pterm, BinOp::Mul, c, coefficient);
            acc = binary(f, self.pterm, BinOp::Add, acc, prod);
        }
        Some(acc)
    }

    /// The value `v` has in the loop's last iteration, computed before the loop:
    /// invariants as they are, a stepping header parameter in closed form, and
    /// arithmetic that cannot trap, computed on every iteration (its block dominates
    /// the latch), over such values.
    fn exit_value(
        &mut self,
        f: &mut Function,
        dt: &DominatorTree,
        loops: &LoopForest,
        v: Value,
        depth: usize,
    ) -> Option<Value> {
        let Some(b) = f.value_block(v) else {
            return Some(v);
        };
        if !loops.contains(self.plan.id, b) {
            return Some(v);
        }
        if let Some(&known) = self.memo.get(&v) {
            return known;
        }
        let found = self.compute(f, dt, loops, v, b, depth);
        self.memo.insert(v, found);
        found
    }

    fn compute(
        &mut self,
        f: &mut Function,
        dt: &DominatorTree,
        loops: &LoopForest,
        v: Value,
        b: ir::Block,
        depth: usize,
    ) -> Option<Value> {
        if depth > MAX_DEPTH || f.value_type(v) != Type::I32 {
            return None;
        }
        if let ValueDef::Param(pb, k) = f.value_def(v) {
            if pb != self.plan.header {
                return None;
            }
            return self.param(f, k as usize, false);
        }
        if !dt.dominates(b, self.plan.exiting) {
            return None;
        }
        let i = f.def_inst(v)?;
        let mut kind = f.kind(i).clone();
        match &kind {
            InstKind::Binary { op, args } => {
                let safe_divisor = matches!(f.as_iconst(args[1]), Some(c) if c != 0 && c != -1);
                if op.can_trap() && !safe_divisor {
                    return None;
                }
            }
            InstKind::Cmp { .. } => {}
            _ => return None,
        }
        let mut args = Vec::new();
        kind.for_each_arg(|a| args.push(a));
        let mut mapped = Vec::with_capacity(args.len());
        for a in args {
            mapped.push(self.exit_value(f, dt, loops, a, depth + 1)?);
        }
        let mut it = mapped.into_iter();
        kind.map_args(|a| *a = it.next().expect("one value per operand"));
        let ty = f.value_type(v);
        let clone = f.insert_inst_before(self.pterm, kind, ty);
        f.inst_result(clone)
    }
}

/// The binomial coefficients `C(k, 1)` and `C(k, 2)` modulo 2^32 for the loop's
/// count `k` and for `k + 1`, emitted before the preheader's jump on first use.
struct Coefficients {
    k: CountValue,
    /// Indexed by `[one_more][order - 1]`.
    made: [[Option<Value>; 2]; 2],
}

#[derive(Clone, Copy)]
enum CountValue {
    Const(i32),
    /// `k` as an `i32` (its value modulo 2^32; the count is below 2^32).
    Value(Value),
}

impl Coefficients {
    /// The count expanded before the preheader's jump, `None` when it cannot be.
    fn new(
        f: &mut Function,
        ex: &mut Expander,
        available: &dyn Fn(&Function, Value) -> bool,
        taken: Taken,
    ) -> Option<Self> {
        let k = match taken {
            Taken::Const(k) => CountValue::Const(k),
            Taken::Symbolic(e) => CountValue::Value(ex.expand(f, e, available)?),
        };
        Some(Coefficients {
            k,
            made: [[None; 2]; 2],
        })
    }

    /// `C(k', order)` for `k' = k` or `k + 1`, `order` 1 or 2.
    fn get(&mut self, f: &mut Function, at: Inst, one_more: bool, order: usize) -> Value {
        if let Some(c) = self.made[usize::from(one_more)][order - 1] {
            return c;
        }
        let c = match (self.k, one_more, order) {
            (CountValue::Const(k), _, _) => {
                // Exactly for k >= 0: by a 64-bit product, before halving.
                let k = i64::from(k) + i64::from(one_more);
                f.iconst(if order == 1 {
                    k as i32
                } else {
                    (k * (k - 1) / 2) as i32
                })
            }
            (CountValue::Value(k), false, 1) => k,
            (CountValue::Value(k), false, _) => half_product(f, at, k),
            (CountValue::Value(k), true, 1) => {
                let one = f.iconst(1);
                binary(f, at, BinOp::Add, k, one)
            }
            (CountValue::Value(k), true, _) => {
                // C(k + 1, 2) = C(k, 2) + k (Pascal's rule), exact modulo 2^32.
                let c2 = self.get(f, at, false, 2);
                binary(f, at, BinOp::Add, c2, k)
            }
        };
        self.made[usize::from(one_more)][order - 1] = Some(c);
        c
    }
}

/// `C(k, 2) = k * (k - 1) / 2` modulo 2^32 for `0 <= k < 2^32` given as an `i32`:
/// of `k` and `k - 1` one is even, and halving it first keeps the product exact
/// modulo 2^32 (as LLVM's `BinomialCoefficient` divides out the powers of two
/// before multiplying): with `t = k & 1`, the even one is `k - t` and the odd one
/// `k - 1 + t`.
fn half_product(f: &mut Function, at: Inst, k: Value) -> Value {
    let one = f.iconst(1);
    let minus_one = f.iconst(-1);
    let t = binary(f, at, BinOp::And, k, one);
    let even = binary(f, at, BinOp::Sub, k, t);
    let half = binary(f, at, BinOp::LShr, even, one);
    let odd = binary(f, at, BinOp::Add, k, t);
    let odd = binary(f, at, BinOp::Add, odd, minus_one);
    binary(f, at, BinOp::Mul, half, odd)
}

/// `a op b` (i32), inserted before `at`.
fn binary(f: &mut Function, at: Inst, op: BinOp, a: Value, b: Value) -> Value {
    let i = f.insert_inst_before(at, InstKind::Binary { op, args: [a, b] }, Type::I32);
    f.inst_result(i).expect("a binary operation has a result")
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour, sum_below};

    #[test]
    fn accumulation_in_a_counted_loop_is_computed_before_it() {
        // tmp = 0; j = 0; do { tmp += x; j++ } while (j < 60); print(tmp)
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, %0
  %4 = add %1, 1
  %5 = slt %4, 60
  br %5, bb1(%4, %3), bb2
bb2:
  call @putint(%3)
  call @putint(%2)
  ret 0
}
"#;
        let out = same_behaviour(src, &["finalvalue", "loopdelete", "simplifycfg"], "7");
        assert!(!out.contains("slt"), "the loop is gone:\n{out}");
        assert!(
            out.contains("mul %0, 60") && out.contains("mul %0, 59"),
            "{out}"
        );
    }

    /// `for (i = 0; i + 1 TEST n; i++) s += 5; print(s)`, `n` read from the input.
    fn fives_to_input(test: &str) -> String {
        format!(
            r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, 5
  %4 = add %1, 1
  %5 = {test} %4, %0
  br %5, bb1(%4, %3), bb2
bb2:
  call @putint(%3)
  ret 0
}}
"#
        )
    }

    #[test]
    fn a_count_known_only_at_run_time_is_computed_before_the_loop() {
        // for (i = 0; i + 1 < n; i++) s += 5; print(s): s = 5 * max(n, 1).
        let unknown = &fives_to_input("slt");
        let passes = ["finalvalue", "sccp", "dce", "loopdelete", "simplifycfg"];
        for n in ["9", "1", "0", "-5", "1000"] {
            let out = same_behaviour(unknown, &passes, n);
            assert!(!out.contains("slt"), "the loop is gone:\n{out}");
        }
    }

    /// `for (i = 0; i + 1 < n; i++) { print(i); s += 5; } print(s)`, `n` read
    /// from the input, entered only when `n > GUARD`: [`fives_to_input`] with
    /// the print and the guard.
    fn fives_printed(guard: i32) -> String {
        fives_to_input("slt")
            .replace(
                "  jump bb1(0, 0)\n",
                &format!("  %6 = sgt %0, {guard}\n  br %6, bb3, bb4\nbb3:\n  jump bb1(0, 0)\n"),
            )
            .replace("i32):\n  %3", "i32):\n  call @putint(%1)\n  %3")
            .replace("  ret 0\n", "  jump bb4\nbb4:\n  ret 0\n")
    }

    #[test]
    fn a_loop_that_stays_gets_final_values_only_for_a_cheap_count() {
        // The loop prints, so it stays whatever is replaced. Entered when
        // `n > 0`, it runs `n` times: `s = 5 * n` costs a product. Entered when
        // `n > -1`, it runs `max(n, 1)` times: the maximum costs more than
        // carrying `s` out of the loop, which it computes anyway.
        let changes = |src: &str| run(src, &["finalvalue"]) != run(src, &[]);
        let cheap = fives_printed(0);
        assert!(changes(&cheap));
        let dear = fives_printed(-1);
        assert!(!changes(&dear));
        for n in ["3", "1", "0", "-2"] {
            same_behaviour(&cheap, &["finalvalue", "dce"], n);
            same_behaviour(&dear, &["finalvalue", "dce"], n);
        }
    }

    /// Whether some block of the printed IR names itself as a target (a loop of one block).
    fn branches_to_itself(ir: &str) -> bool {
        let mut label = String::new();
        ir.lines().any(|l| {
            if let Some(head) = l.strip_prefix("bb") {
                label = format!("bb{}", head.split(['(', ':']).next().unwrap_or(""));
                return false;
            }
            let t = l.trim_start();
            (t.starts_with("br ") || t.starts_with("jump "))
                && t.split([' ', ',', '(']).any(|w| w == label)
        })
    }

    #[test]
    fn a_second_order_sum_with_a_run_time_count_wraps_like_the_loop() {
        // if (a > 3) do { s += a * 40000; a--; } while (a > 3); print(s, a): a
        // second-order recurrence over `a - 3` iterations, wrapping for large `a`,
        // whose C(k, 2) must be exact modulo 2^32 for odd and even counts.
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 3
  br %1, bb1, bb3(0, %0)
bb1:
  jump bb2(%0, 0)
bb2(%2: i32, %3: i32):
  %4 = mul %2, 40000
  %5 = add %3, %4
  %6 = add %2, -1
  %7 = sgt %6, 3
  br %7, bb2(%6, %5), bb3(%5, %6)
bb3(%8: i32, %9: i32):
  call @putint(%8)
  call @putint(%9)
  ret 0
}
"#;
        assert!(branches_to_itself(src));
        let passes = ["finalvalue", "sccp", "dce", "loopdelete", "simplifycfg"];
        for a in ["10", "4", "5", "3", "-7", "100000", "100001", "2147483647"] {
            if a.len() > 7 {
                // 2^31 iterations are too many for the interpreter: the shape only.
                let out = crate::passes::testutil::run(src, &passes);
                assert!(!branches_to_itself(&out), "{out}");
                continue;
            }
            let out = same_behaviour(src, &passes, a);
            assert!(!branches_to_itself(&out), "the loop is gone:\n{out}");
        }
    }

    #[test]
    fn a_second_order_value_the_loop_still_reads_keeps_a_run_time_count_loop_alone() {
        // do { print(s); s += i; i++ } while (i < n): s is still computed in the
        // loop, so its closed form before the loop would only add work; with a
        // constant count it is replaced (the cost is a constant).
        let src = |bound: &str| {
            format!(
                r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  call @putint(%2)
  %3 = add %2, %1
  %4 = add %1, 1
  %5 = slt %4, {bound}
  br %5, bb1(%4, %3), bb2
bb2:
  call @putint(%3)
  ret 0
}}
"#
            )
        };
        // A run-time C(k, 2) needs a halving (`lshr`); the constant one is 45.
        let out = same_behaviour(&src("%0"), &["finalvalue"], "6");
        assert!(!out.contains("lshr"), "{out}");
        let out = same_behaviour(&src("10"), &["finalvalue"], "");
        assert!(out.contains("45"), "{out}");
    }

    #[test]
    fn other_exits_and_counts_under_a_predicate_are_left_alone() {
        // `i <= n` for an unknown `n` counts only when `n < INT_MAX` (else the
        // loop never ends): the count needs a predicate, and the loop stays.
        let inclusive = &fives_to_input("sle");
        let out = same_behaviour(inclusive, &["finalvalue"], "9");
        assert!(!out.contains("mul"), "{out}");
        let break_out = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, 5
  %4 = eq %3, %0
  br %4, bb3, bb2
bb2:
  %5 = add %1, 1
  %6 = slt %5, 60
  br %6, bb1(%5, %3), bb3
bb3:
  call @putint(%3)
  ret 0
}
"#;
        let out = same_behaviour(break_out, &["finalvalue"], "25");
        assert!(!out.contains("mul"), "{out}");
    }

    #[test]
    fn counts_with_the_old_value_and_a_late_start() {
        // while (i < 10) from i = 3, testing i before the increment: 7 + 1 runs.
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(3, 100)
bb1(%1: i32, %2: i32):
  %3 = add %2, -7
  %4 = add %1, 1
  %5 = slt %1, 10
  br %5, bb1(%4, %3), bb2
bb2:
  call @putint(%3)
  call @putint(%4)
  ret 0
}
"#;
        same_behaviour(src, &["finalvalue", "dce", "simplifycfg"], "");
    }

    #[test]
    fn a_value_computed_from_the_counter_leaves_in_closed_form() {
        // A recursion turned into a loop counting down from 1000, computing
        // 1000 - i + 1 on every trip: after the loop it is 1000, and the loop is dead.
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(1000)
bb1(%0: i32):
  %1 = add %0, -1
  %2 = sub 1000, %0
  %3 = add %2, 1
  %4 = mul %3, 3
  %5 = eq %1, 0
  br %5, bb2, bb1(%1)
bb2:
  call @putint(%4)
  ret 0
}
"#;
        let passes = ["finalvalue", "sccp", "dce", "loopdelete", "simplifycfg"];
        let out = same_behaviour(src, &passes, "");
        assert!(out.contains("call @putint(3000)"), "{out}");
        assert!(!out.contains("bb1"), "{out}");
    }

    #[test]
    fn conditional_or_trapping_values_stay_in_the_loop() {
        // %6 is computed only on some trips (its block does not dominate the latch),
        // and %4 divides by a variable: neither is recomputed before the loop.
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0)
bb1(%1: i32):
  %2 = add %1, 1
  %3 = and %1, 1
  %4 = sdiv 100, %0
  br %3, bb2, bb3(%1)
bb2:
  %6 = mul %1, 7
  jump bb3(%6)
bb3(%7: i32):
  %8 = slt %2, 10
  br %8, bb1(%2), bb4
bb4:
  %9 = add %4, %7
  call @putint(%9)
  ret 0
}
"#;
        let out = same_behaviour(src, &["finalvalue", "dce"], "7");
        assert!(out.contains("sdiv 100, %0"), "{out}");
        assert_eq!(out.matches("sdiv").count(), 1, "{out}");
        assert!(
            out.contains("mul %1, 7") || out.matches("mul").count() == 1,
            "{out}"
        );
    }

    /// `i = S; s = 0; do { s += 5; i += STEP } while (i TEST B)`, printing `s` and `i`.
    fn shaped(start: i32, step: i32, test: &str) -> String {
        format!(
            r#"
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  jump bb1({start}, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, 5
  %4 = add %1, {step}
  %5 = {test}
  br %5, bb1(%4, %3), bb2
bb2:
  call @putint(%3)
  call @putint(%4)
  ret 0
}}
"#
        )
    }

    /// Whether final value replacement emptied the loop (the test is gone).
    fn replaced(src: &str) -> bool {
        let out = same_behaviour(
            src,
            &["finalvalue", "sccp", "dce", "loopdelete", "simplifycfg"],
            "",
        );
        !out.contains("bb1(")
    }

    #[test]
    fn counters_with_other_steps_and_tests_are_counted() {
        // Step 2 up to 100 (50 trips), `<=` (0..=20 step 4: 6 trips), `!=` by 3
        // (0 to 30: 10 trips), counting down by 7 while `>= 0` (from 50: 8 trips).
        for (start, step, test) in [
            (0, 2, "slt %4, 100"),
            (0, 4, "sle %4, 20"),
            (0, 3, "ne %4, 30"),
            (50, -7, "sge %4, 0"),
        ] {
            assert!(replaced(&shaped(start, step, test)), "{step} {test}");
        }
    }

    #[test]
    fn counts_that_need_a_wrap_or_never_meet_are_left_alone() {
        for (start, step, test) in [
            // 2147483646 + 2 wraps before reaching the bound.
            (0, 2, "slt %4, 2147483647"),
            // Step 2 never equals 31.
            (0, 2, "ne %4, 31"),
        ] {
            let out = crate::passes::testutil::run(&shaped(start, step, test), &["finalvalue"]);
            assert!(!out.contains("mul"), "{test}:\n{out}");
        }
    }

    #[test]
    fn a_while_loop_tested_in_its_header_is_counted() {
        // for (i = 0; i < 10; i++) s += 3; print(s, i): the exit is the header.
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = slt %0, 10
  br %2, bb2, bb3
bb2:
  %3 = add %1, 3
  %4 = add %0, 1
  jump bb1(%4, %3)
bb3:
  call @putint(%1)
  call @putint(%0)
  ret 0
}
"#;
        let out = same_behaviour(
            src,
            &["finalvalue", "sccp", "dce", "loopdelete", "simplifycfg"],
            "",
        );
        assert!(
            out.contains("call @putint(30)") && out.contains("call @putint(10)"),
            "{out}"
        );
    }

    #[test]
    fn a_second_order_sum_leaves_in_closed_form() {
        // s += i for i = 0..10 (s = 45 after), i tested after its step.
        let src = &sum_below(10);
        let out = same_behaviour(
            src,
            &["finalvalue", "sccp", "dce", "loopdelete", "simplifycfg"],
            "",
        );
        assert!(out.contains("call @putint(45)"), "{out}");
    }

    /// `i = 0; s = 0; do { s = NEXT(s); i = COUNTER(i) } while (i < 10)`,
    /// printing `s` (as `%6`) and `i` (as `%4`): `next` defines `%6` from `%2`,
    /// `counter` defines `%4` from `%1`.
    fn passed_back(next: &str, counter: &str) -> String {
        format!(
            r#"
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
{next}
{counter}
  %5 = slt %4, 10
  br %5, bb1(%4, %6), bb2
bb2:
  call @putint(%6)
  call @putint(%4)
  ret 0
}}
"#
        )
    }

    #[test]
    fn recurrences_passed_back_by_other_arithmetic_leave_in_closed_form() {
        // s - 3 ten times: -30; (s + 1) + 1: 20; a counter i - -1 reaches 10.
        for (next, counter, printed) in [
            ("  %6 = sub %2, 3", "  %4 = add %1, 1", "call @putint(-30)"),
            (
                "  %3 = add %2, 1\n  %6 = add %3, 1",
                "  %4 = add %1, 1",
                "call @putint(20)",
            ),
            ("  %6 = add %2, 7", "  %4 = sub %1, -1", "call @putint(70)"),
        ] {
            let src = passed_back(next, counter);
            assert!(replaced(&src), "{next} / {counter}");
            let out = same_behaviour(
                &src,
                &["finalvalue", "sccp", "dce", "loopdelete", "simplifycfg"],
                "",
            );
            assert!(
                out.contains(printed) && out.contains("call @putint(10)"),
                "{next} / {counter}:\n{out}"
            );
        }
    }

    #[test]
    fn values_that_are_not_recurrences_stay_in_the_loop() {
        // s doubles (not an add-recurrence); s grows by an amount the loop loads
        // anew on every iteration; s grows by an amount computed in the loop.
        for next in [
            "  %6 = mul %2, 2",
            "  %3 = load i32, @g\n  %6 = add %2, %3",
            "  %3 = mul %1, 0\n  %7 = add %3, 4\n  %6 = add %2, %7",
        ] {
            let src = passed_back(next, "  %4 = add %1, 1")
                .replace("declare", "global @g: i32 = 4\ndeclare");
            let out = crate::passes::testutil::run(&src, &["finalvalue"]);
            // The value printed is still the one the loop passes back.
            let back = out.split("bb1(").nth(3).and_then(|a| a.split(')').next());
            let passed = back
                .and_then(|a| a.split(", ").nth(1))
                .expect("a back edge");
            let printed = format!("call @putint({passed})");
            assert!(out.contains(&printed), "{next}:\n{out}");
        }
    }
}
