//! Closed forms of counted loops with a symbolic trip count, under a run-time guard:
//! a loop that only advances its counter, accumulates sums (`s = s + g(i)`) or sums
//! modulo a constant (`s = (s + g(i)) % m`), and stores to fixed addresses is
//! replaced by a few 64-bit operations before it, when a test of its bounds shows
//! that the closed form equals the loop. Otherwise the original loop runs.
//!
//! The ingredients are the classical ones, made exact for wrapping 32-bit
//! arithmetic, and every one is the scalar evolution's ([`crate::analysis::scev`]):
//! the pass has no induction or sum recogniser of its own.
//! - **Sums as recurrences** (LLVM's `createAddRecFromPHI`): a header parameter
//!   `s` is a wrapping sum when what it gains per iteration, its latch argument
//!   minus itself in the plain evolution (modulo 2^32), is a term: for a
//!   recurrence `{s0,+,d}<loop>` (`{s0,+,g0,+,a}` when it adds an affine `g`)
//!   that is the step `d`. A term is a constant, an invariant (a value, or an
//!   expression of values defined before the loop, reused from the loop's
//!   operands or expanded in the preheader as LLVM's `SCEVExpander` does), an
//!   affine recurrence `a * i + c` of the counter `i` with constant `a` and `c`
//!   (modulo 2^32), or a value only the predicated evolution describes (below).
//!   A sum modulo a constant is no recurrence: its `s' % m` is recognised on the
//!   instruction, and what `s'` adds to `s` is a term as above.
//! - **Predicated scalar evolution** ([`crate::analysis::scev::predicated`], LLVM's
//!   `PredicatedScalarEvolution`): a stored value, or a summed value the plain
//!   evolution does not see through, is an affine function `a * i + c` of the
//!   counter with constant `a` and `c` (of it or of another induction variable
//!   with constant start and step), or a loop-invariant value. Additions,
//!   subtractions, multiplications and shifts by constants, and exact divisions
//!   by constants (`(60 * i) / 60`) keep a value affine, provided no intermediate
//!   wraps: the analysis records that as a predicate, a range of the
//!   intermediate's value, which for an affine function (monotone) is a pair of
//!   bounds on the counter's first and last values.
//! - **Loop versioning** (as LLVM's `LoopVersioning` under SCEV predicates): the
//!   predicates' bounds on the counter, the trip count being at least one, and the
//!   conditions of the sums below become one test before the loop. When it holds,
//!   the closed form runs; when it fails, the original loop runs unchanged.
//! - **Sums in closed form** (final value replacement, as GCC's
//!   `tree-scalar-evolution.c` and LLVM's `IndVarSimplify`): over the `n` iterations
//!   `i = lo, lo + d, ..., hi` (`n = (hi - lo) / d + 1`, the last value computed
//!   before the guard for a step `d > 1`), `sum g(i) = n * c + a * (lo + hi) * n /
//!   2`, computed in 64-bit
//!   arithmetic (`add64`, `mul64`, ...; constants when the bounds are). A wrapping
//!   sum is that sum truncated to 32 bits (modulo 2^32 its term needs no
//!   predicate). A sum modulo a constant `m > 0`, `s = (s + g(i)) % m`, with
//!   SysY's truncating remainder, equals `(s0 + sum g(i)) mod m` when every
//!   operand is non-negative and no addition wraps: `0 <= s0 < m` and
//!   `0 <= a * i + c <= INT_MAX - (m - 1)` (then `g(i)`, equal to it modulo 2^32,
//!   is it), which the guard checks; each product is then reduced modulo `m` so
//!   that no 64-bit intermediate overflows (the guard also keeps `|lo|, |hi| <
//!   2^30`).
//! - A store of an affine or invariant value to a loop-invariant address, in a loop
//!   without loads or calls, leaves memory as the last iteration's store does: it is
//!   done once, with the value at the last `i`.
//!
//! Scope: single-block rotated loops with a counter ([`Counter`], as the scalar
//! evolution describes it: any constant step, up or down, tested before or after
//! its step with `<`/`>` or a `!=` it meets, or with `<=`/`>=` (by one, only on
//! its stepped value), and never wraps), whose every
//! instruction is pure arithmetic, a comparison, or such a store, whose header
//! parameters are the counter and such sums, and whose values leave only as
//! arguments of the exit edge (a loop stepping by more than one must also sum or
//! store something: its counter alone runs few iterations as a rule, cheaper
//! than the division of its last value). A loop whose exit values are then unused is deleted
//! by DCE on the fast path; the original stays for the inputs the guard rejects.
//!
//! Accepted since the sums are the scalar evolution's, where the former
//! recogniser wanted `s + g` or `(s + g) % m` with `g` a term (each with a test):
//! sums written in several steps or subtracting (`s - 3 * i - 2`,
//! `(s + 3 * i) + 7`), invariants the loop computes (`(s + 3 * k) % m`), a
//! parameter passed back unchanged, and wrapping sums whose term wraps (no guard
//! on it); and counters of any constant step (`i += 2`, `i -= 3`), tested before
//! or after it, where the former pass took only steps of one.

use crate::analysis::scev::expand::Expander;
use crate::analysis::scev::predicated::{range_of, NoWrap, Predicated};
use crate::analysis::scev::{Expr, ExprId, Exprs, Predicate, ScalarEvolution};
use crate::analysis::{Counter, LoopForest, LoopId, RotatedLoop};
use crate::analysis::{FunctionAnalyses, Preserved};
use crate::pipeline::FunctionTransform;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{BinOp, Block, BlockCall, CmpOp, Function, Inst, InstKind, Type, UnOp, Value};

/// The closed-form pass.
pub struct ClosedForm;

impl FunctionTransform for ClosedForm {
    const NAME: &'static str = "closedform";
    const DESCRIPTION: &'static str =
        "replace counted loops of sums and modular sums by closed forms under a guard";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// The counter stays within `±2^30` on the fast path, so `(lo + hi) * n` fits in 63 bits.
const COUNTER_LIMIT: i64 = 1 << 30;

/// Replaces every qualifying loop of `f`; returns how many.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// [`run`], starting from the analyses cached in `fa` (forgotten when it changes `f`).
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    if f.is_declaration() {
        return 0;
    }
    // The plan puts its guard in the preheader.
    let split = super::licm::add_preheaders(f);
    let routed = route_exit_values(f);
    if split > 0 || routed {
        fa.forget();
    }
    // Every plan is of a single-block loop, and applying one changes only its
    // preheader's terminator and adds blocks before its header: the plans of the
    // other loops, all computed from the same analyses, stay valid. (Planning again
    // after each rewrite made a function of n loops take O(n^2) time.)
    let (plans, exprs) = {
        let mut se = fa.scev(f);
        let loops = se.loops;
        let plans: Vec<Plan> = loops
            .loops()
            .filter_map(|(id, _)| Plan::of(&mut se, id))
            .collect();
        // The invariants the plans expand are expressions of this analysis,
        // which is forgotten below when a plan is applied.
        let exprs = match plans.is_empty() {
            true => Exprs::default(),
            false => std::mem::take(&mut se.exprs),
        };
        (plans, exprs)
    };
    let done = plans.len();
    if done > 0 {
        fa.forget();
    }
    for plan in plans {
        plan.apply(f, &exprs);
    }
    done + split + usize::from(routed)
}

/// Passes the values a single-block loop defines and code after it uses directly
/// (SSA dominance allows it: scalar promotion leaves `store %v, @g` after the
/// loop) through its exit edge instead, when the exit block has no other
/// predecessor: the exit block gets a parameter for each, and the uses outside the
/// loop read it (loop-closed SSA, as LLVM's `LCSSA`). The closed form then finds
/// every value leaving the loop among the exit edge's arguments. Whether it changed
/// anything.
fn route_exit_values(f: &mut Function) -> bool {
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut changed = false;
    for (_, lp) in loops.loops() {
        let h = lp.header;
        // A single block: its own latch (without touching `blocks`, which for
        // every loop of a deep nest would be quadratic).
        if lp.latches[..] != [h] {
            continue;
        }
        let Some(term) = f.terminator(h) else {
            continue;
        };
        let InstKind::Br { .. } = f.kind(term) else {
            continue;
        };
        let blocks: Vec<Block> = f.kind(term).targets().iter().map(|t| t.block).collect();
        let Some(which) = blocks.iter().position(|&b| b != h) else {
            continue;
        };
        let exit = blocks[which];
        if blocks.iter().filter(|&&b| b == exit).count() != 1 || cfg.unique_preds(exit).len() != 1 {
            continue;
        }
        for v in f.block_values(h) {
            let outside = f.users_outside(v, h);
            if outside.is_empty() {
                continue;
            }
            let p = f.append_block_param(exit, f.value_type(v));
            let mut call = f.kind(term).targets()[which].clone();
            call.args.push(v);
            f.set_target(term, which, call);
            for u in outside {
                f.map_inst_args(u, |a| if a == v { p } else { a });
            }
            changed = true;
        }
    }
    changed
}

/// A term of a sum or a stored value, as the predicated scalar evolution
/// describes it.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Term {
    /// Exactly `a * i + c` of the counter `i` (given the predicates).
    Linear { a: i64, c: i64 },
    /// The same value on every iteration.
    Invariant(Value),
    /// The same value on every iteration, an expression of values defined
    /// before the loop (`3 * k` when the loop computes it), expanded in the
    /// preheader (LLVM's `SCEVExpander`) before the plan is applied.
    Expr(ExprId),
}

/// The loop's values as terms: its predicated scalar evolution, with the
/// counter's recurrence.
struct Terms<'s, 'a> {
    pse: Predicated<'s, 'a>,
    id: LoopId,
    /// The counter's (sign-extended) recurrence.
    counter: ExprId,
    /// The counter's recurrence in the plain evolution (modulo 2^32).
    plain_counter: ExprId,
    preheader: Block,
}

impl Terms<'_, '_> {
    fn invariant(&self, v: Value) -> bool {
        let se = &self.pse.se;
        se.f.value_block(v)
            .is_none_or(|b| !se.loops.contains(self.id, b))
    }

    /// The term of `v`: an invariant, or a value the predicated evolution
    /// describes as linear in the counter with constant coefficients.
    fn term(&mut self, v: Value) -> Option<Term> {
        let f = self.pse.se.f;
        if f.value_type(v) != Type::I32 {
            return None;
        }
        if f.as_iconst(v).is_none() && self.invariant(v) {
            return Some(Term::Invariant(v));
        }
        let e = self.pse.get(v)?;
        let (a, c) = self.pse.linear_in(e, self.counter)?;
        Some(Term::Linear { a, c })
    }

    /// What header parameter `p` gains per iteration on the way to `v`, as a
    /// term: `v - p` in the plain evolution (modulo 2^32). For the latch argument
    /// of a parameter whose evolution is `{s0,+,d}<loop>`, that is the step `d`:
    /// an invariant, or `{g0,+,a}` (the parameter then of second order), or,
    /// when `p` is no recurrence the evolution describes, `p + g` gives `g`, a
    /// value only the predicated evolution describes (an exact division).
    fn increment(&mut self, p: Value, v: Value) -> Option<Term> {
        let se = &mut *self.pse.se;
        let (loops, f) = (se.loops, se.f);
        let (x, y) = (se.get(v), se.get(p));
        let d = se.exprs.sub(loops, f, x, y);
        self.term_of(d)
    }

    /// The term of the plain (`i32`, modulo 2^32) expression `d`: a constant, a
    /// value (as [`Self::term`] describes it), an affine recurrence of the loop
    /// linear in the counter with constant coefficients (modulo 2^32: a wrapping
    /// sum needs no more, and a modular sum's guard bounds the exact linear
    /// function, which the value then equals), or an invariant expression of
    /// values available in the preheader.
    fn term_of(&mut self, d: ExprId) -> Option<Term> {
        let se = &mut *self.pse.se;
        let (loops, f) = (se.loops, se.f);
        if let Some(c) = se.exprs.as_const(d) {
            return Some(Term::Linear { a: 0, c });
        }
        match *se.exprs.get(d) {
            Expr::Unknown { v, .. } => self.term(v),
            Expr::AddRec { lp, .. } if lp == self.id => {
                let (a, c) = se
                    .exprs
                    .linear_in(loops, f, d, self.plain_counter, self.id)?;
                Some(Term::Linear { a, c })
            }
            _ if se.invariant(d, self.id) => {
                if let Some(v) = self.value_of(d) {
                    return Some(Term::Invariant(v));
                }
                let se = &*self.pse.se;
                let mut budget = EXPANSION_LIMIT;
                expandable(se, d, self.preheader, &mut budget).then_some(Term::Expr(d))
            }
            _ => None,
        }
    }

    /// A value defined before the loop, which the loop reads, whose expression
    /// is `d`: the loop's own copy of an invariant, reused rather than computed
    /// again (as LLVM's `SCEVExpander` reuses the values its `ExprValueMap`
    /// holds for an expression).
    fn value_of(&mut self, d: ExprId) -> Option<Value> {
        let se = &mut *self.pse.se;
        let f = se.f;
        let header = se.loops.get(self.id).header;
        let mut read = Vec::new();
        for i in f.layout.block_insts(header) {
            f.kind(i).for_each_arg(|a| {
                if f.as_iconst(a).is_none() && self.invariant(a) {
                    read.push(a);
                }
            });
        }
        read.into_iter().find(|&a| self.pse.se.get(a) == d)
    }

    /// The exact (`i64`) value `a * i + c` of the counter `i`.
    fn exact_linear(&mut self, a: i64, c: i64) -> ExprId {
        let se = &mut *self.pse.se;
        let (loops, f) = (se.loops, se.f);
        let ka = se.exprs.constant(Type::I64, a);
        let kc = se.exprs.constant(Type::I64, c);
        let ai = se.exprs.mul(loops, f, &[ka, self.counter], true);
        se.exprs.add(loops, f, &[ai, kc], true)
    }
}

/// At most this many operations in an invariant term's expression.
const EXPANSION_LIMIT: usize = 16;

/// Whether `e` is an `i32` expression of constants and values defined in blocks
/// dominating `preheader`, by sums and products, of at most `budget` nodes:
/// what [`Expander`] always emits there.
fn expandable(se: &ScalarEvolution, e: ExprId, preheader: Block, budget: &mut usize) -> bool {
    let Some(left) = budget.checked_sub(1) else {
        return false;
    };
    *budget = left;
    match se.exprs.get(e) {
        Expr::Const { ty: Type::I32, .. } => true,
        Expr::Unknown { ty: Type::I32, v } => {
            se.f.value_block(*v)
                .is_none_or(|b| se.dt.dominates(b, preheader))
        }
        Expr::Add {
            ty: Type::I32, ops, ..
        }
        | Expr::Mul {
            ty: Type::I32, ops, ..
        } => ops.iter().all(|&o| expandable(se, o, preheader, budget)),
        _ => false,
    }
}

/// How a header parameter's next value is computed.
#[derive(Copy, Clone, Debug)]
enum Sum {
    /// `s + g`, wrapping.
    Wrapping(Term),
    /// `(s + g) % m`, with `m > 0` a constant.
    Modular(Term, i32),
}

/// What the fast path computes for one argument of the exit edge.
#[derive(Copy, Clone, Debug)]
enum ExitValue {
    Same(Value),
    CounterLast,
    CounterNext,
    Sum(usize),
}

/// Everything needed to rewrite one loop.
struct Plan {
    l: RotatedLoop,
    counter: Counter,
    /// Bounds on the latch's bound under which the counter never wraps (the
    /// predicates of its exit count).
    bound_within: (i64, i64),
    /// Per header parameter: its sum, or `None` for the counter.
    sums: Vec<Option<Sum>>,
    /// The stores of the loop, in order: (value's form, address).
    stores: Vec<(Term, Value)>,
    exit_values: Vec<ExitValue>,
    /// Bounds on `i` from the constraints.
    range: (i64, i64),
}

impl Plan {
    fn of(se: &mut ScalarEvolution, id: LoopId) -> Option<Plan> {
        let (f, cfg, loops) = (se.f, se.cfg, se.loops);
        let l = RotatedLoop::of(f, cfg, loops, id)?;
        if l.header != l.latch || loops.get(id).blocks.len() != 1 {
            return None;
        }
        // Counting by one, an inclusive test only on the stepped value (`next <=
        // bound`: the counter's last value is the bound itself, no `bound + 1` to
        // compute); by another step, any test (the last value is computed).
        let (counter, predicates) = Counter::of_scev_versioned(se, id, &l)?;
        if counter.unit_step() && counter.inclusive && !counter.tests_next {
            return None;
        }
        let bound_within = bound_within(se, &counter, &predicates)?;
        let mut pse = Predicated::new(se, id);
        let x = pse.get(counter.param)?;
        let plain_counter = pse.se.get(counter.param);
        let mut terms = Terms {
            pse,
            id,
            counter: x,
            plain_counter,
            preheader: l.preheader,
        };
        // Every instruction: pure arithmetic, a comparison, a store, the branch.
        let mut stores = Vec::new();
        for i in f.layout.block_insts(l.header) {
            match f.kind(i) {
                InstKind::Binary { op, args: [_, d] } => {
                    if op.can_trap() && f.as_iconst(*d).is_none_or(|c| c == 0) {
                        return None;
                    }
                }
                InstKind::Cmp { .. } | InstKind::Unary { .. } | InstKind::Gep { .. } => {}
                InstKind::Store { value, ptr } => {
                    if !terms.invariant(*ptr) {
                        return None;
                    }
                    stores.push((terms.term(*value)?, *ptr));
                }
                InstKind::Br { .. } if i == l.branch => {}
                _ => return None,
            }
        }
        let params = f.block_params(l.header).to_vec();
        let nexts = l.next_args(f).to_vec();
        let mut sums = Vec::new();
        for (k, (&p, &next)) in params.iter().zip(&nexts).enumerate() {
            if k == counter.index {
                sums.push(None);
                continue;
            }
            let sum = sum_of(&mut terms, p, next)?;
            if let Sum::Modular(Term::Linear { a, c }, m) = sum {
                // The summed value is `a * i + c` modulo 2^32: it is that exactly
                // when the guard keeps it within [0, INT_MAX - (m - 1)].
                let e = terms.exact_linear(a, c);
                terms.pse.add_predicate(NoWrap {
                    e,
                    lo: 0,
                    hi: i64::from(i32::MAX) - i64::from(m - 1),
                });
            }
            sums.push(Some(sum));
        }
        // Values leave only through the exit edge's arguments.
        let exit = &f.kind(l.branch).targets()[l.exit()];
        let mut exit_values = Vec::new();
        for &a in &exit.args {
            exit_values.push(if terms.invariant(a) {
                ExitValue::Same(a)
            } else if a == counter.param {
                ExitValue::CounterLast
            } else if a == counter.next {
                ExitValue::CounterNext
            } else if let Some(k) = nexts.iter().position(|&n| n == a) {
                sums[k]?;
                ExitValue::Sum(k)
            } else {
                return None;
            });
        }
        let results = f
            .layout
            .block_insts(l.header)
            .filter_map(|i| f.inst_result(i));
        for v in params.iter().copied().chain(results) {
            if f.users(v)
                .iter()
                .any(|&u| f.layout.inst_block(u) != Some(l.header))
            {
                return None;
            }
        }
        // A loop that only advances a counter by more than one runs few
        // iterations as a rule (`while (x < 0) x = x + m`): its last value's
        // division costs more than they do (finalvalue's rule, LLVM's high-cost
        // expansion). With a sum or a store, each iteration does more.
        if !counter.unit_step() && sums.iter().all(Option::is_none) && stores.is_empty() {
            return None;
        }
        // The sum of the counter's values, `(lo + hi) * n / 2`, fits in 63 bits
        // within the limit; without a sum that needs it, the counter may take
        // any `i32` value.
        let sums_counter = sums.iter().flatten().any(|s| {
            let (Sum::Wrapping(t) | Sum::Modular(t, _)) = s;
            matches!(t, Term::Linear { a, .. } if *a != 0)
        });
        let limit = match sums_counter {
            true => (-COUNTER_LIMIT, COUNTER_LIMIT - 1),
            false => (i64::from(i32::MIN), i64::from(i32::MAX)),
        };
        let bounds = terms.pse.bounds_in(x)?;
        let range = range_of(&bounds, limit)?;
        Some(Plan {
            l,
            counter,
            bound_within,
            sums,
            stores,
            exit_values,
            range,
        })
    }

    fn apply(mut self, f: &mut Function, exprs: &Exprs) {
        let pterm = f
            .terminator(self.l.preheader)
            .expect("the preheader ends in a jump");
        let mut ex = Expander::new(exprs, pterm, pterm, EXPANSION_LIMIT);
        for sum in self.sums.iter_mut().flatten() {
            let (Sum::Wrapping(t) | Sum::Modular(t, _)) = sum;
            if let Term::Expr(e) = *t {
                let v = ex.expand(f, e, &|_, _| true);
                *t = Term::Invariant(v.expect("Plan::of checked that it expands"));
            }
        }
        let init = self.l.init_args(f).to_vec();
        let mut e = Emitter { f, at: pterm };
        // The iterations run for i in [lo, hi].
        let c = self.counter;
        let one = e.f.iconst(1);
        let minus_one = e.f.iconst(-1);
        let (min, max) = self.range;
        // Whether the guard bounds the counter's ends (else a stepped counter's
        // last value is computed on the fast path only).
        let ends_in_guard = (min, max) != (i64::from(i32::MIN), i64::from(i32::MAX));
        let (runs, mut ends) = match (c.step, c.tests_next, c.inclusive) {
            _ if !c.unit_step() => (e.runs_stepped(c), None),
            (1, true, false) => (
                e.cmp(CmpOp::Slt, c.init, c.bound),
                Some((c.init, e.bin(BinOp::Add, c.bound, minus_one))),
            ),
            (1, true, true) | (1, false, false) => {
                (e.cmp(CmpOp::Sle, c.init, c.bound), Some((c.init, c.bound)))
            }
            (_, true, false) => (
                e.cmp(CmpOp::Sgt, c.init, c.bound),
                Some((e.bin(BinOp::Add, c.bound, one), c.init)),
            ),
            (_, true, true) | (_, false, false) => {
                (e.cmp(CmpOp::Sge, c.init, c.bound), Some((c.bound, c.init)))
            }
            (_, false, true) => unreachable!("refused by Plan::of"),
        };
        if ends.is_none() && ends_in_guard {
            ends = Some(e.stepped_ends(c));
        }
        let mut guard = runs;
        let (from, to) = self.bound_within;
        let mut checks: Vec<(Value, i64, i64)> = Vec::new();
        if let Some((lo, hi)) = ends {
            checks.extend([(lo, min, i64::MAX), (hi, i64::MIN, max)]);
        }
        if (from, to) != (i64::MIN, i64::MAX) {
            checks.push((c.bound, from, to));
        }
        for (k, sum) in self.sums.iter().enumerate() {
            let Some(Sum::Modular(g, m)) = *sum else {
                continue;
            };
            // 0 <= s0 < m, and an invariant g within [0, INT_MAX - (m - 1)].
            checks.push((init[k], 0, i64::from(m - 1)));
            if let Term::Invariant(v) = g {
                checks.push((v, 0, i64::from(i32::MAX - (m - 1))));
            }
        }
        for (v, from, to) in checks {
            guard = e.and_within(guard, v, from, to);
        }

        // The fast path, computing what leaves the loop.
        let fast = e.f.create_block();
        e.f.layout.insert_block_after(fast, self.l.preheader);
        let slow = e.f.create_block();
        e.f.layout.insert_block_after(slow, fast);
        let jump = e.f.append_inst(
            fast,
            InstKind::Jump {
                dest: Box::new(BlockCall::new(slow, Vec::new())),
            },
            Type::Void,
        );
        e.at = jump;
        let (lo, hi) = ends.unwrap_or_else(|| e.stepped_ends(c));
        let last = if c.step > 0 { hi } else { lo };
        let (n64, sum_i) = e.count_and_sum(lo, hi, c.step.unsigned_abs());
        let mut results = vec![None; self.sums.len()];
        for (k, sum) in self.sums.iter().enumerate() {
            let Some(sum) = *sum else {
                continue;
            };
            let s0 = e.un(UnOp::SExt, init[k]);
            let r = match sum {
                Sum::Wrapping(Term::Linear { a, c }) => {
                    let c = e.const64(c as i32);
                    let a = e.const64(a as i32);
                    let nc = e.bin(BinOp::Mul64, n64, c);
                    let ai = e.bin(BinOp::Mul64, sum_i, a);
                    let t = e.bin(BinOp::Add64, s0, nc);
                    let t = e.bin(BinOp::Add64, t, ai);
                    e.un(UnOp::Trunc, t)
                }
                Sum::Wrapping(Term::Expr(_)) => unreachable!("expanded above"),
                Sum::Wrapping(Term::Invariant(g)) => {
                    let n = e.un(UnOp::Trunc, n64);
                    let ng = e.bin(BinOp::Mul, n, g);
                    e.bin(BinOp::Add, init[k], ng)
                }
                Sum::Modular(g, m) => {
                    let m64 = e.const64(m);
                    let total = match g {
                        // |a| <= 1 and |c| < 2^31: s0 + n*c + a*sum_i is exact in 64
                        // bits (< 2^31 + 2^62 + 2^61), and it is the true s0 + sum g,
                        // which the guard made non-negative: one remainder suffices.
                        Term::Linear { a, c } if a.abs() <= 1 && i32::try_from(c).is_ok() => {
                            let mut t = s0;
                            if c != 0 {
                                let c = e.const64(c as i32);
                                let nc = e.bin(BinOp::Mul64, n64, c);
                                t = e.bin(BinOp::Add64, t, nc);
                            }
                            match a {
                                1 => e.bin(BinOp::Add64, t, sum_i),
                                -1 => e.bin(BinOp::Sub64, t, sum_i),
                                _ => t,
                            }
                        }
                        // Otherwise each product is reduced first: n < 2^31 and the
                        // residues are below m < 2^31, so no product reaches 2^62.
                        Term::Linear { a, c } => {
                            let cm = e.const64(c.rem_euclid(m.into()) as i32);
                            let am = e.const64(a.rem_euclid(m.into()) as i32);
                            let s1 = e.bin(BinOp::Mul64, n64, cm);
                            // (sum_i mod m), made non-negative.
                            let t = e.bin(BinOp::SRem64, sum_i, m64);
                            let t = e.bin(BinOp::Add64, t, m64);
                            let t = e.bin(BinOp::SRem64, t, m64);
                            let s2 = e.bin(BinOp::Mul64, t, am);
                            let t = e.bin(BinOp::Add64, s1, s2);
                            e.bin(BinOp::Add64, s0, t)
                        }
                        Term::Invariant(g) => {
                            let g64 = e.un(UnOp::SExt, g);
                            let ng = e.bin(BinOp::Mul64, n64, g64);
                            e.bin(BinOp::Add64, s0, ng)
                        }
                        Term::Expr(_) => unreachable!("expanded above"),
                    };
                    let t = e.bin(BinOp::SRem64, total, m64);
                    e.un(UnOp::Trunc, t)
                }
            };
            results[k] = Some(r);
        }
        for &(form, ptr) in &self.stores {
            let v = e.at_counter(form, last);
            e.f.insert_inst_before(e.at, InstKind::Store { value: v, ptr }, Type::Void);
        }
        let mut exit = e.f.kind(self.l.branch).targets()[self.l.exit()].clone();
        for (a, ev) in exit.args.iter_mut().zip(&self.exit_values) {
            *a = match *ev {
                ExitValue::Same(v) => v,
                ExitValue::CounterLast => last,
                ExitValue::CounterNext => {
                    let step = e.f.iconst(c.step);
                    e.bin(BinOp::Add, last, step)
                }
                ExitValue::Sum(k) => results[k].expect("every sum has a closed form"),
            };
        }
        e.f.replace_kind(
            jump,
            InstKind::Jump {
                dest: Box::new(exit),
            },
        );

        // The preheader chooses; the original loop is entered from `slow`.
        let header = self.l.header;
        e.f.append_inst(
            slow,
            InstKind::Jump {
                dest: Box::new(BlockCall::new(header, init)),
            },
            Type::Void,
        );
        f.replace_kind(
            pterm,
            InstKind::Br {
                cond: guard,
                then_dest: Box::new(BlockCall::new(fast, Vec::new())),
                else_dest: Box::new(BlockCall::new(slow, Vec::new())),
            },
        );
    }
}

/// The range of the latch's bound `n` within which the counter's exit count
/// holds: each predicate of the count is `sext(n) + c op k` (`sle` counting up,
/// `sge` down), so `n op k - c` in `i32`. `None` when a predicate is of another
/// form or no `i32` bound satisfies it.
fn bound_within(
    se: &mut ScalarEvolution,
    c: &Counter,
    predicates: &[Predicate],
) -> Option<(i64, i64)> {
    let (loops, f) = (se.loops, se.f);
    let n = se.get(c.bound);
    let n = se.exprs.sext(loops, f, n);
    let (mut from, mut to) = (i64::MIN, i64::MAX);
    for p in predicates {
        let (x, offset) = se.exprs.split_constant(loops, f, p.lhs);
        let k = se.exprs.as_const(p.rhs)?;
        if x != n {
            return None;
        }
        match p.op {
            CmpOp::Sle => to = to.min(k - offset),
            CmpOp::Sge => from = from.max(k - offset),
            _ => return None,
        }
    }
    let (min, max) = (i64::from(i32::MIN), i64::from(i32::MAX));
    (from <= max && to >= min && from <= to).then_some((from, to))
}

/// How `next` advances header parameter `p`, from the scalar evolution: a
/// wrapping sum when `next - p` is a term (the parameter's evolution is
/// `{s0,+,d}` with `d` the term, or it is `p + g` with `g` one), or a sum modulo
/// a constant `m > 0` when `next` is `s % m` and `s - p` is a term. The modular
/// sum is no recurrence the evolution describes: its remainder is recognised on
/// the instruction, and only what it adds is the evolution's.
fn sum_of(terms: &mut Terms, p: Value, next: Value) -> Option<Sum> {
    let f = terms.pse.se.f;
    if f.value_type(p) != Type::I32 {
        return None;
    }
    if let Some(t) = terms.increment(p, next) {
        return Some(Sum::Wrapping(t));
    }
    let InstKind::Binary {
        op: BinOp::SRem,
        args: [s, m],
    } = *f.kind(f.def_inst(next)?)
    else {
        return None;
    };
    let m = f.as_iconst(m).filter(|&m| m > 0)?;
    Some(Sum::Modular(terms.increment(p, s)?, m))
}

/// Inserts instructions before `at`.
struct Emitter<'f> {
    f: &'f mut Function,
    at: Inst,
}

impl Emitter<'_> {
    fn value(&mut self, kind: InstKind, ty: Type) -> Value {
        let i = self.f.insert_inst_before(self.at, kind, ty);
        self.f.inst_result(i).expect("an instruction with a result")
    }
    /// `op a, b`; the sum of two `i32` constants is folded (as LLVM's
    /// `IRBuilder` folds constants), so that a constant bound's last value is one.
    fn bin(&mut self, op: BinOp, a: Value, b: Value) -> Value {
        if let (BinOp::Add, Some(x), Some(y)) = (op, self.f.as_iconst(a), self.f.as_iconst(b)) {
            return self.f.iconst(x.wrapping_add(y));
        }
        self.value(InstKind::Binary { op, args: [a, b] }, op.ty())
    }
    fn cmp(&mut self, op: CmpOp, a: Value, b: Value) -> Value {
        self.value(InstKind::Cmp { op, args: [a, b] }, Type::I32)
    }
    fn un(&mut self, op: UnOp, arg: Value) -> Value {
        self.value(InstKind::Unary { op, arg }, op.result_ty())
    }
    /// `guard && from <= v && v <= to`, leaving out bounds that hold for every
    /// `i32` or, when `v` is a constant, that hold for it (a failing one makes the
    /// guard false).
    fn and_within(&mut self, guard: Value, v: Value, from: i64, to: i64) -> Value {
        let mut guard = guard;
        for (op, bound) in [(CmpOp::Sge, from), (CmpOp::Sle, to)] {
            let trivial = match op {
                CmpOp::Sge => bound <= i64::from(i32::MIN),
                _ => bound >= i64::from(i32::MAX),
            };
            if trivial {
                continue;
            }
            if let Some(c) = self.f.as_iconst(v) {
                let holds = match op {
                    CmpOp::Sge => i64::from(c) >= bound,
                    _ => i64::from(c) <= bound,
                };
                if holds {
                    continue;
                }
            }
            let k = self.f.iconst(bound as i32);
            let ok = self.cmp(op, v, k);
            guard = self.bin(BinOp::And, guard, ok);
        }
        guard
    }

    /// The number of iterations `n = (hi - lo) / step + 1` of a counter running
    /// from `lo` to `hi` (or down) by `step`, and the sum of the counter over
    /// them, `(lo + hi) * n / 2` (an arithmetic series), in 64 bits (exact
    /// within the limits): constants when `lo` and `hi` are (the later passes
    /// fold no `sdiv64`).
    fn count_and_sum(&mut self, lo: Value, hi: Value, step: u32) -> (Value, Value) {
        if let (Some(l), Some(h)) = (self.f.as_iconst(lo), self.f.as_iconst(hi)) {
            let n = (i64::from(h) - i64::from(l)) / i64::from(step) + 1;
            let sum = (i64::from(l) + i64::from(h)) * n / 2;
            if let (Ok(n), Ok(sum)) = (i32::try_from(n), i32::try_from(sum)) {
                return (self.const64(n), self.const64(sum));
            }
        }
        let lo64 = self.un(UnOp::SExt, lo);
        let hi64 = self.un(UnOp::SExt, hi);
        let one64 = self.const64(1);
        let mut span = self.bin(BinOp::Sub64, hi64, lo64);
        if step != 1 {
            let step64 = self.const64(step as i32);
            span = self.bin(BinOp::SDiv64, span, step64);
        }
        let n64 = self.bin(BinOp::Add64, span, one64);
        let two64 = self.const64(2);
        let ends = self.bin(BinOp::Add64, lo64, hi64);
        let twice = self.bin(BinOp::Mul64, ends, n64);
        let sum_i = self.bin(BinOp::SDiv64, twice, two64);
        (n64, sum_i)
    }

    /// For a counter stepping by `d`, `|d| > 1`, on the path where the loop runs
    /// more than once: its counter's lowest and its highest value. Counting up (down is the
    /// mirror image), the body runs for `i0 + k * d` while the tested value `t_k`
    /// (`i_k`, or `i_k + d` when the latch tests the stepped value) is below the
    /// exclusive bound `b` (`n`, or `n + 1` for `<=`): `k = 0 .. q` with `q =
    /// ceil((b - t_0) / d)`, which is `(b - t_0 + d - 1) / d` in 64 bits when
    /// `b - t_0 > -d` (the guard: `i0 < b` testing the stepped value, `i0 <= n`
    /// testing the counter). The last value `i0 + q * d` is exact in `i32` on
    /// the fast path: the counter never wraps ([`Counter`]).
    fn stepped_ends(&mut self, c: Counter) -> (Value, Value) {
        let up = c.step > 0;
        let d = i64::from(c.step.unsigned_abs());
        // q = ((b - t_0) + d - 1) / d = (±(n - i0) + k) / d.
        let k = i64::from(c.inclusive) - d * i64::from(c.tests_next) + d - 1;
        let (far, near) = match up {
            true => (c.bound, c.init),
            false => (c.init, c.bound),
        };
        let last = if let (Some(x), Some(y)) = (self.f.as_iconst(far), self.f.as_iconst(near)) {
            let q = (i64::from(x) - i64::from(y) + k) / d;
            let last = i64::from(self.f.as_iconst(c.init).unwrap()) + q * i64::from(c.step);
            self.f.iconst(last as i32)
        } else if (d as u64).is_power_of_two() {
            // In `i32`, as an unsigned number: `0 <= b - t_0 + d - 1 < 2^32` on the
            // fast path (`b <= MAX - d + 1` counting up, as the count's predicate
            // holds), so the wrapping difference and a logical shift are exact.
            let span = self.bin(BinOp::Sub, far, near);
            let k = self.f.iconst(k as i32);
            let num = self.bin(BinOp::Add, span, k);
            let shift = self.f.iconst(d.trailing_zeros() as i32);
            let q = self.bin(BinOp::LShr, num, shift);
            let walked = self.bin(BinOp::Shl, q, shift);
            match up {
                true => self.bin(BinOp::Add, c.init, walked),
                false => self.bin(BinOp::Sub, c.init, walked),
            }
        } else {
            let far = self.un(UnOp::SExt, far);
            let near = self.un(UnOp::SExt, near);
            let span = self.bin(BinOp::Sub64, far, near);
            let k = self.const64(k as i32);
            let num = self.bin(BinOp::Add64, span, k);
            let d = self.const64(d as i32);
            let q = self.bin(BinOp::SDiv64, num, d);
            let q = self.un(UnOp::Trunc, q);
            let step = self.f.iconst(c.step);
            let walked = self.bin(BinOp::Mul, q, step);
            self.bin(BinOp::Add, c.init, walked)
        };
        match up {
            true => (c.init, last),
            false => (last, c.init),
        }
    }

    /// The guard's first condition for a counter stepping by `d`, `|d| > 1`:
    /// `b - t_0 > -d` ([`Self::stepped_ends`]).
    fn runs_stepped(&mut self, c: Counter) -> Value {
        let op = match (c.step > 0, c.tests_next && !c.inclusive) {
            (true, true) => CmpOp::Slt,
            (true, false) => CmpOp::Sle,
            (false, true) => CmpOp::Sgt,
            (false, false) => CmpOp::Sge,
        };
        self.cmp(op, c.init, c.bound)
    }

    fn const64(&mut self, c: i32) -> Value {
        let c = self.f.iconst(c);
        self.un(UnOp::SExt, c)
    }
    /// The value of `form` when the counter is `i`, in wrapping 32-bit arithmetic
    /// (exact: the constraints keep the true value within 32 bits).
    fn at_counter(&mut self, term: Term, i: Value) -> Value {
        match term {
            Term::Invariant(v) => v,
            Term::Expr(_) => unreachable!("stored values are no expressions"),
            Term::Linear { a, c } => {
                let a = self.f.iconst(a as i32);
                let c = self.f.iconst(c as i32);
                let ai = self.bin(BinOp::Mul, i, a);
                self.bin(BinOp::Add, ai, c)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// `s = (s + A*i + C) % M` for `i` in `[start, n)`, then `s` printed; `n` read.
    fn modular(start: i32, a: i32, c: i32, m: i32, s0: i32) -> String {
        format!(
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = slt {start}, %0
  br %1, bb2({start}, {s0}), bb1({s0})
bb1(%2: i32):
  call @putint(%2)
  ret 0
bb2(%3: i32, %4: i32):
  %5 = mul %3, {a}
  %6 = add %5, {c}
  %7 = add %4, %6
  %8 = srem %7, {m}
  %9 = add %3, 1
  %10 = slt %9, %0
  br %10, bb2(%9, %8), bb1(%8)
}}
"#
        )
    }

    /// Runs `src` after the pass with a step budget far below the loop's length.
    fn runs_fast(src: &str, stdin: &str) -> String {
        let out = crate::passes::testutil::run(src, &["closedform", "dce", "simplifycfg"]);
        let m = ir::parse_module(&out).unwrap();
        crate::passes::testutil::exec_within(&m, stdin, 10_000).expect("within 10 000 steps")
    }

    #[test]
    fn modular_sum_of_an_affine_term() {
        let src = modular(0, 3, 7, 1_000_003, 0);
        for n in ["0", "1", "2", "17", "4000"] {
            same_behaviour(&src, &["closedform"], n);
        }
        // 3 * sum(i) + 7 * n over 10^8 iterations, by hand: 3 * (10^8 - 1) * 10^8 / 2
        // + 7 * 10^8 = 15_000_000_550_000_000 ... mod 1_000_003, computed independently.
        let n: i128 = 100_000_000;
        let expected = ((3 * (n - 1) * n / 2 + 7 * n) % 1_000_003).to_string();
        assert_eq!(runs_fast(&src, "100000000"), expected);
    }

    #[test]
    fn exact_division_and_a_store_of_the_counter() {
        // s = (s + (60 * i) / 60) % M and g = i every iteration: exact while 60 * i
        // fits, which the guard checks against n.
        let src = r#"
global @g: i32 = 0

declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb2(0, 0), bb1(0)
bb1(%2: i32):
  call @putint(%2)
  call @putch(32)
  %11 = load i32, @g
  call @putint(%11)
  ret 0
bb2(%3: i32, %4: i32):
  store %3, @g
  %5 = mul %3, 60
  %6 = sdiv %5, 60
  %7 = add %4, %6
  %8 = srem %7, 134209537
  %9 = add %3, 1
  %10 = slt %9, %0
  br %10, bb2(%9, %8), bb1(%8)
}
"#;
        for n in ["0", "1", "3", "1000"] {
            same_behaviour(src, &["closedform"], n);
        }
        let n: i128 = 30_000_000;
        let expected = format!("{} {}", (n * (n - 1) / 2) % 134_209_537, n - 1);
        assert_eq!(runs_fast(src, "30000000"), expected);
    }

    #[test]
    fn exact_division_as_a_shift() {
        // instcombine writes (8 * i) / 8 as (i << 3) >> 3: still i while 8 * i fits,
        // which the guard checks; beyond it the shift keeps 29 bits, and the loop
        // itself runs.
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb2(0, 0), bb1(0)
bb1(%2: i32):
  call @putint(%2)
  ret 0
bb2(%3: i32, %4: i32):
  %5 = shl %3, 3
  %6 = ashr %5, 3
  %7 = add %4, %6
  %8 = srem %7, 134209537
  %9 = add %3, 1
  %10 = slt %9, %0
  br %10, bb2(%9, %8), bb1(%8)
}
"#;
        for n in ["0", "1", "3", "1000"] {
            same_behaviour(src, &["closedform"], n);
        }
        let n: i128 = 30_000_000;
        assert_eq!(
            runs_fast(src, "30000000"),
            ((n * (n - 1) / 2) % 134_209_537).to_string()
        );
    }

    /// A loop over `i = start, start + step, ...` (down when `step < 0`) whose
    /// latch tests `i` (or `i + step` when `next`) with `op` against `n` (read),
    /// summing `s = (s + 5 * i + 3) % 1000003` and `w = w + 7 * i`, storing `i`
    /// to `@g` and leaving with `i + step`: all printed.
    fn stepped(start: i32, step: i32, op: &str, next: bool) -> String {
        let tested = if next { "%9" } else { "%3" };
        let enter = if step > 0 { "sle" } else { "sge" };
        format!(
            r#"
global @g: i32 = 0
declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = {enter} {start}, %0
  br %1, bb2({start}, 0, 0), bb1(0, 0, 0)
bb1(%2: i32, %12: i32, %13: i32):
  call @putint(%2)
  call @putch(32)
  call @putint(%12)
  call @putch(32)
  call @putint(%13)
  call @putch(32)
  %14 = load i32, @g
  call @putint(%14)
  ret 0
bb2(%3: i32, %4: i32, %11: i32):
  store %3, @g
  %5 = mul %3, 5
  %6 = add %5, 3
  %7 = add %4, %6
  %8 = srem %7, 1000003
  %15 = mul %3, 7
  %16 = add %11, %15
  %9 = add %3, {step}
  %10 = {op} {tested}, %0
  br %10, bb2(%9, %8, %16), bb1(%8, %9, %16)
}}
"#
        )
    }

    #[test]
    fn counters_of_any_step_are_summed() {
        // Every test the latch may make, before and after the step, up and down
        // by 2 and 3; the inputs land on, next to and far from the start, and
        // on each residue of the step.
        let shapes = [
            (0, 2, "slt"),
            (1, 3, "sle"),
            (-7, 2, "sle"),
            (100, -2, "sgt"),
            (5, -3, "sge"),
            // Near the ends of `i32`, where the last step would wrap for some
            // bounds: the guard's bound on `n` sends those to the loop.
            (i32::MAX - 5, 2, "slt"),
            (i32::MAX - 7, 3, "sle"),
            (i32::MIN + 5, -2, "sgt"),
            (i32::MIN + 7, -3, "sge"),
        ];
        for (start, step, op) in shapes {
            for next in [true, false] {
                let src = stepped(start, step, op, next);
                let out = crate::passes::testutil::run(&src, &["closedform"]);
                assert!(out.contains("sdiv64"), "{op} {step} {next}:\n{out}");
                let (start, step) = (i64::from(start), i64::from(step));
                let mut inputs: Vec<i64> = (-8..=8).map(|k| start + k).collect();
                inputs.extend([start + 100 * step, start + 301 * step + 1]);
                let before = ir::parse_module(&src).unwrap();
                let after = ir::parse_module(&out).unwrap();
                for n in inputs.into_iter().filter_map(|n| i32::try_from(n).ok()) {
                    super::random_tests::same_or_both_long(&before, &after, &n.to_string());
                }
            }
        }
    }

    #[test]
    fn a_loop_only_stepping_its_counter_by_more_than_one_stays() {
        // while (x < 0) x = x + 2^30: at most two iterations, cheaper than the
        // division of a closed form. By one, the same loop is rewritten.
        let src = |step: i32| {
            format!(
                r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = slt %0, 0
  br %1, bb1(%0), bb2(%0)
bb1(%2: i32):
  %3 = add %2, {step}
  %4 = slt %3, 0
  br %4, bb1(%3), bb2(%3)
bb2(%5: i32):
  call @putint(%5)
  ret 0
}}
"#
            )
        };
        // Only a preheader is added: no shift, division or guard.
        let out = crate::passes::testutil::run(&src(1 << 30), &["closedform"]);
        assert!(
            ["lshr", "sdiv64", "sle", "sext"]
                .iter()
                .all(|op| !out.contains(op)),
            "{out}"
        );
        for n in ["-1", "-50", "5"] {
            same_behaviour(&src(1), &["closedform"], n);
        }
        assert_eq!(runs_fast(&src(1), "-100000000"), "0");
    }

    #[test]
    fn a_stepped_sum_runs_in_constant_time() {
        // i = 1, 4, 7, ... while i + 3 <= n: the body runs for every such i up
        // to n (10^8 = 1 + 3 * 33 333 333), 33 333 334 times.
        let src = stepped(1, 3, "sle", true);
        let (first, step, n): (i128, i128, i128) = (1, 3, 100_000_000);
        let last = first + (n - first) / step * step;
        let count = (last - first) / step + 1;
        let sum_i = (first + last) * count / 2;
        let s = (5 * sum_i + 3 * count) % 1_000_003;
        let w = (7 * sum_i) as u32 as i32;
        let expected = format!("{s} {} {w} {last}", last + step);
        assert_eq!(last, 100_000_000);
        assert_eq!(runs_fast(&src, "100000000"), expected);
    }

    #[test]
    fn guard_failures_take_the_loop() {
        // Negative start value, a term that is negative for small i, a modulus
        // whose sums would wrap: all must print what the loop prints.
        for src in [
            modular(0, 1, 0, 1000, -5),
            modular(0, 1, -50, 1000, 0),
            modular(-10, 2, 0, 97, 3),
            modular(0, 1, 2_000_000_000, 2_147_483_647, 0),
        ] {
            for n in ["0", "1", "30", "200"] {
                same_behaviour(&src, &["closedform"], n);
            }
        }
    }

    #[test]
    fn wrapping_sum_with_an_invariant_and_a_down_counter() {
        // s = s + k (k read), i from n down to 1, plus a second sum of 7 * i + 1
        // that wraps around 2^32 for large n.
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = sgt %0, 0
  br %2, bb2(%0, 5, 0), bb1(5, 0)
bb1(%3: i32, %4: i32):
  call @putint(%3)
  call @putch(32)
  call @putint(%4)
  ret 0
bb2(%5: i32, %6: i32, %7: i32):
  %8 = add %6, %1
  %9 = mul %5, 7
  %10 = add %9, 1
  %11 = add %7, %10
  %12 = add %5, -1
  %13 = sgt %12, 0
  br %13, bb2(%12, %8, %11), bb1(%8, %11)
}
"#;
        for input in ["0 3", "1 -4", "9 100", "1000 7"] {
            same_behaviour(src, &["closedform"], input);
        }
        // 7 * i + 1 stays exact up to i = 306 783 378.
        let (n, k): (i64, i64) = (300_000_000, 123_456);
        let s = (5 + n * k) as i32;
        let t = (7 * (n * (n + 1) / 2) + n) as i32;
        assert_eq!(runs_fast(src, "300000000 123456"), format!("{s} {t}"));
    }

    #[test]
    fn inclusive_tests_of_the_stepped_counter_are_summed() {
        // i from 0 while i + 1 <= n (n a constant): i = 0..=n, n + 1 iterations.
        let src =
            modular(0, 3, 7, 1_000_003, 0).replace("%10 = slt %9, %0", "%10 = sle %9, 100000000");
        let n: i128 = 100_000_001;
        let expected = ((3 * (n - 1) * n / 2 + 7 * n) % 1_000_003).to_string();
        assert_eq!(runs_fast(&src, "5"), expected);
        // Down: i from n while i - 1 >= -3 (i = n..=-3).
        let down = modular(0, 3, 7, 1_000_003, 0)
            .replace("%1 = slt 0, %0", "%1 = sgt %0, -3")
            .replace("bb2(0, 0)", "bb2(%0, 0)")
            .replace("%9 = add %3, 1", "%9 = add %3, -1")
            .replace("%10 = slt %9, %0", "%10 = sge %9, -3");
        for n in ["-2", "0", "5", "40"] {
            same_behaviour(&down, &["closedform"], n);
        }
        let out = crate::passes::testutil::run(&down, &["closedform"]);
        assert!(out.contains("mul64"), "{out}");
        // The counter tested before its step by `<=` stays a loop.
        let before =
            modular(0, 3, 7, 1_000_003, 0).replace("%10 = slt %9, %0", "%10 = sle %3, 1000");
        let out = same_behaviour(&before, &["closedform"], "3");
        assert!(!out.contains("mul64"), "{out}");
    }

    #[test]
    fn loads_calls_and_unknown_divisors_stay() {
        let base = modular(0, 3, 7, 1_000_003, 0);
        for (from, to) in [
            ("  %5 = mul %3, 3\n", "  %5 = call @getint()\n"),
            ("  %5 = mul %3, 3\n", "  %5 = sdiv 1000, %0\n"),
            ("  %8 = srem %7, 1000003\n", "  %8 = srem %7, %0\n"),
            ("  %5 = mul %3, 3\n", "  %5 = mul %3, %3\n"),
        ] {
            assert!(base.contains(from));
            let src = base.replace(from, to);
            let out = same_behaviour(&src, &["closedform"], "20 1 2 3");
            assert!(!out.contains("mul64"), "{from} -> {to}:\n{out}");
        }
    }

    #[test]
    fn a_second_induction_variable_is_a_term_of_the_counter() {
        // j = 5, 7, 9, ... beside the counter i = 0, 1, ...: the predicated scalar
        // evolution describes j as 2 i + 5 (the form of the counter alone did not
        // see it), so s = (s + j) % M has its closed form; j's own exit value is a
        // wrapping sum of 2.
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = slt 0, %0
  br %1, bb2(0, 5, 0), bb1(5, 0)
bb1(%2: i32, %3: i32):
  call @putint(%2)
  call @putch(32)
  call @putint(%3)
  ret 0
bb2(%4: i32, %5: i32, %6: i32):
  %7 = add %6, %5
  %8 = srem %7, 1000003
  %9 = add %5, 2
  %10 = add %4, 1
  %11 = slt %10, %0
  br %11, bb2(%10, %9, %8), bb1(%9, %8)
}
"#;
        for n in ["0", "1", "2", "1000"] {
            same_behaviour(src, &["closedform"], n);
        }
        // sum of 2 i + 5 over i < n: n (n - 1) + 5 n.
        let n: i128 = 100_000_000;
        let expected = format!("{} {}", 5 + 2 * n, (n * (n - 1) + 5 * n) % 1_000_003);
        assert_eq!(runs_fast(src, "100000000"), expected);
    }

    #[test]
    fn values_used_after_the_loop_block_the_rewrite() {
        // The exit block is reached only from the loop and uses the term `%6`
        // directly, not through the exit edge: the fast path could not supply it.
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = slt 0, %0
  br %1, bb2(0, 0), bb3
bb1:
  call @putint(%8)
  call @putint(%6)
  ret 0
bb3:
  ret 1
bb2(%3: i32, %4: i32):
  %5 = mul %3, 3
  %6 = add %5, 7
  %7 = add %4, %6
  %8 = srem %7, 1000003
  %9 = add %3, 1
  %10 = slt %9, %0
  br %10, bb2(%9, %8), bb1
}
"#;
        let out = same_behaviour(src, &["closedform"], "50");
        assert!(!out.contains("mul64"), "{out}");
    }

    /// A loop counting `i` from 0 to `n` (read, with `k`) with a wrapping sum
    /// `%6` (from 7) and a modular sum `%7` (from 1), whose next values `%20`
    /// and `%21` `body` computes.
    fn two_sums(body: &str) -> String {
        format!(
            r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = slt 0, %0
  br %2, bb2(0, 7, 1), bb1(7, 1)
bb1(%3: i32, %4: i32):
  call @putint(%3)
  call @putch(32)
  call @putint(%4)
  ret 0
bb2(%5: i32, %6: i32, %7: i32):
{body}
  %8 = add %5, 1
  %9 = slt %8, %0
  br %9, bb2(%8, %20, %21), bb1(%20, %21)
}}
"#
        )
    }

    /// `(s + 1) % 1000003`, the modular sum of the tests of the wrapping one.
    const PLUS_ONE: &str = "  %30 = add %7, 1\n  %21 = srem %30, 1000003";

    #[test]
    fn sums_the_scalar_evolution_describes_beyond_one_addition() {
        // The wrapping sum subtracts 3 i and then adds -2 (s - (3 i + 2), the
        // evolution {7,+,-2,+,-3}); the modular sum adds 3 k, which the loop
        // computes: an invariant expression, expanded before the loop. Before,
        // neither was `p + g` with g a term.
        let src = two_sums(
            "  %10 = mul %5, 3\n  %11 = sub %6, %10\n  %20 = add %11, -2\n  \
             %12 = mul %1, 3\n  %13 = add %12, %7\n  %21 = srem %13, 1000003",
        );
        for input in ["0 5", "1 5", "7 -1", "1000 5", "1000 715827882"] {
            same_behaviour(&src, &["closedform"], input);
        }
        let out = crate::passes::testutil::run(&src, &["closedform"]);
        assert!(out.contains("mul64"), "{out}");
        let (n, k): (i64, i64) = (100_000_000, 5);
        let s = (7 - 3 * (n * (n - 1) / 2) - 2 * n) as i32;
        let t = (1 + 3 * k * n) % 1_000_003;
        assert_eq!(runs_fast(&src, "100000000 5"), format!("{s} {t}"));
        // 3 k beyond INT_MAX - (m - 1) (the guard fails): the loop runs.
        same_behaviour(&src, &["closedform"], "50 715827882");
    }

    #[test]
    fn a_parameter_passed_back_unchanged_is_a_sum_of_nothing() {
        let src = two_sums(PLUS_ONE).replace(
            "bb2(%8, %20, %21), bb1(%20, %21)",
            "bb2(%8, %6, %21), bb1(%6, %21)",
        );
        for input in ["0 0", "3 0", "100 0"] {
            same_behaviour(&src, &["closedform"], input);
        }
        assert_eq!(
            runs_fast(&src, "100000000 0"),
            format!("7 {}", 100_000_001 % 1_000_003)
        );
    }

    #[test]
    fn a_wrapping_sum_of_a_wrapping_term_needs_no_guard_on_it() {
        // 70000 i wraps from i = 30680 on: the sum modulo 2^32 is still the
        // closed form's, so only the counter's own limits are tested.
        let src = two_sums(&format!(
            "  %10 = mul %5, 70000\n  %20 = add %6, %10\n{PLUS_ONE}"
        ));
        for input in ["0 0", "1 0", "40000 0"] {
            same_behaviour(&src, &["closedform"], input);
        }
        let n: i64 = 100_000_000;
        let s = (7 + 70_000 * i128::from(n * (n - 1) / 2)) as i32;
        let t = (1 + n) % 1_000_003;
        assert_eq!(runs_fast(&src, "100000000 0"), format!("{s} {t}"));
    }

    #[test]
    fn constant_bounds_give_a_constant_count_and_sum() {
        // i = 0..=5: n = 6 and the sum of i, 15, are constants (no `sdiv64`).
        let src = two_sums(&format!("  %20 = add %6, %5\n{PLUS_ONE}"))
            .replace("%9 = slt %8, %0", "%9 = slt %8, 6");
        let out = same_behaviour(&src, &["closedform"], "1 0");
        assert!(out.contains("sext 15") && !out.contains("sdiv64"), "{out}");
    }

    #[test]
    fn sums_of_what_is_no_affine_term_stay_loops() {
        // s + s, s * 2 + i, s + i * i (third order), s + k * i (a coefficient
        // that is no constant), and a modular sum of s + s.
        for body in [
            "  %20 = add %6, %6",
            "  %10 = mul %6, 2\n  %20 = add %10, %5",
            "  %10 = mul %5, %5\n  %20 = add %6, %10",
            "  %10 = mul %5, %1\n  %20 = add %6, %10",
        ] {
            let src = two_sums(&format!("{body}\n{PLUS_ONE}"));
            let out = same_behaviour(&src, &["closedform"], "30 3");
            assert!(!out.contains("mul64"), "{body}:\n{out}");
        }
        let src = two_sums("  %20 = add %6, 1\n  %30 = add %7, %7\n  %21 = srem %30, 1000003");
        let out = same_behaviour(&src, &["closedform"], "30 3");
        assert!(!out.contains("mul64"), "{out}");
    }
}

/// Random loops of the shapes the pass handles, with constants and inputs chosen to
/// land on both sides of every guard (counters near ±2^30 and `INT_MAX`, terms that
/// wrap, negative starts, moduli from 1 to `INT_MAX`), each run in the interpreter
/// before and after the pass.
#[cfg(test)]
mod random_tests {
    use crate::passes::testutil::{exec_within, run, same_behaviour, XorShift};

    struct Rng(XorShift);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0.next()
        }
        fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
            xs[(self.next() % xs.len() as u64) as usize]
        }
        fn int(&mut self) -> i32 {
            match self.next() % 4 {
                0 => self.pick(&[0, 1, -1, 2, 7, -7, 60, 1000, i32::MAX, i32::MIN]),
                1 => (self.next() % 200) as i32 - 100,
                2 => self.next() as i32,
                _ => (self.next() % 2_000_000) as i32 - 1_000_000,
            }
        }
    }

    /// With `stepped`, the counter steps by 2 to 7 and the latch may test with `<=`/`>=`.
    fn program(r: &mut Rng, stepped: bool) -> String {
        let a = r.pick(&[0, 1, -1, 2, 3, -4, 60, 1000, 70_000, -123_457]);
        let c = r.pick(&[0, 1, -50, 7, 999, 2_000_000_000, -2_000_000_000]);
        // Exact divisions when d divides a and c, inexact otherwise.
        let d = r.pick(&[1, 1, 2, 3, 60, 1000, -1, 7]);
        let m = r.pick(&[1, 2, 7, 97, 65535, 1_000_003, 2_147_385_347, i32::MAX]);
        let term = if r.next().is_multiple_of(3) {
            "%3"
        } else {
            "%12"
        };
        let term2 = if r.next().is_multiple_of(2) {
            "%3"
        } else {
            "%11"
        };
        let (mut step, guard, test) = if r.next().is_multiple_of(2) {
            (1, "slt", "slt")
        } else {
            (-1, "sgt", "sgt")
        };
        let mut test = test.to_string();
        if stepped {
            step *= r.pick(&[2, 3, 4, 7]);
            if r.next().is_multiple_of(2) {
                test = test.replace('t', "e");
            }
        }
        let tested = if r.next().is_multiple_of(2) {
            "%16"
        } else {
            "%7"
        };
        format!(
            r#"
global @g: i32 = 0

declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = call @getint()
  %3 = call @getint()
  %4 = {guard} %1, %0
  br %4, bb2(%1, %2, %2), bb1(%2, %2)
bb1(%5: i32, %6: i32):
  call @putint(%5)
  call @putch(32)
  call @putint(%6)
  call @putch(32)
  %20 = load i32, @g
  call @putint(%20)
  ret 0
bb2(%7: i32, %8: i32, %9: i32):
  %10 = mul %7, {a}
  %11 = add %10, {c}
  %12 = sdiv %11, {d}
  %13 = add %8, {term}
  %14 = srem %13, {m}
  %15 = add %9, {term2}
  store %11, @g
  %16 = add %7, {step}
  %17 = {test} {tested}, %0
  br %17, bb2(%16, %14, %15), bb1(%14, %15)
}}
"#
        )
    }

    fn input(r: &mut Rng) -> String {
        let start = match r.next() % 5 {
            0 => 0,
            1 => r.pick(&[
                1 << 30,
                -(1 << 30),
                (1 << 30) - 5,
                i32::MAX - 50,
                i32::MIN + 50,
            ]),
            2 => r.int(),
            _ => (r.next() % 100) as i32 - 50,
        };
        let trips = (r.next() % 300) as i32;
        let bound = if r.next().is_multiple_of(2) {
            start.saturating_add(trips)
        } else {
            start.saturating_sub(trips)
        };
        let s0 = match r.next() % 3 {
            0 => 0,
            1 => r.int(),
            _ => r.pick(&[-5, 1, 6, 96, 65534, 1_000_002]),
        };
        format!("{bound} {start} {s0} {}", r.int())
    }

    /// Runs the pass on `count` random loops (`stepped` as [`program`] takes it,
    /// each edited by `edit`), six inputs each, checking [`same_or_both_long`];
    /// returns how many loops the pass rewrote (their output contains `marker`).
    fn campaign(
        seed: u64,
        count: usize,
        stepped: bool,
        edit: impl Fn(String) -> String,
        marker: &str,
    ) -> usize {
        let mut r = Rng(XorShift(seed));
        let mut transformed = 0;
        for _ in 0..count {
            let src = edit(program(&mut r, stepped));
            let before = ir::parse_module(&src).unwrap();
            let out = run(&src, &["closedform"]);
            transformed += usize::from(out.contains(marker));
            let after = ir::parse_module(&out).unwrap();
            for _ in 0..6 {
                same_or_both_long(&before, &after, &input(&mut r));
            }
        }
        transformed
    }

    /// Asserts that `after` prints what `before` prints on `stdin`, or, when
    /// `before` runs long (its counter wraps round `i32`: the loops that do not
    /// run a few hundred iterations at most), that `after` does too: its guard
    /// sent the input to the original loop, not to the closed form, which would
    /// end within a few dozen steps.
    pub(super) fn same_or_both_long(before: &ir::Module, after: &ir::Module, stdin: &str) {
        match exec_within(before, stdin, 1_000_000) {
            Some(out) => assert_eq!(
                exec_within(after, stdin, 1_000_000),
                Some(out),
                "input {stdin}\n{}\n--- after ---\n{}",
                ir::print_module(before),
                ir::print_module(after)
            ),
            None => assert_eq!(
                exec_within(after, stdin, 20_000),
                None,
                "input {stdin}: the closed form ran for a wrapping counter\n{}",
                ir::print_module(after)
            ),
        }
    }

    #[test]
    fn random_loops_keep_their_output() {
        let transformed = campaign(0x9e37_79b9_7f4a_7c15, 400, false, |s| s, "sext");
        // Most shapes qualify (inexact divisions and some invariants do not).
        assert!(transformed > 150, "only {transformed} of 400 transformed");
    }

    #[test]
    fn random_loops_with_sums_in_several_steps_keep_their_output() {
        // The same loops with the wrapping sum subtracting its term and the
        // modular one adding 3 before it: sums only the scalar evolution finds.
        let edit = |src: String| {
            let src = src
                .replace("%15 = add %9,", "%15 = sub %9,")
                .replace("%13 = add %8,", "%31 = add %8, 3\n  %13 = add %31,");
            assert!(src.contains("%15 = sub") && src.contains("%31 = add"));
            src
        };
        let transformed = campaign(0x2545_f491_4f6c_dd1d, 300, false, edit, "sext");
        assert!(transformed > 80, "only {transformed} of 300 transformed");
    }

    #[test]
    fn random_loops_by_any_step_keep_their_output() {
        let transformed = campaign(0x6a09_e667_f3bc_c909, 300, true, |s| s, "sdiv64");
        assert!(transformed > 80, "only {transformed} of 300 transformed");
    }

    /// `state = (state + 128) % 65535` on a global, `n` times (both from the input).
    const GLOBAL_STATE: &str = r#"
global @state: i32 = 0
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  store %0, @state
  %2 = sgt %1, 0
  br %2, bb3, bb2
bb3:
  jump bb1(0)
bb1(%3: i32):
  %4 = load i32, @state
  %5 = add %4, 128
  %6 = srem %5, 65535
  store %6, @state
  %7 = add %3, 1
  %8 = slt %7, %1
  br %8, bb1(%7), bb2
bb2:
  %9 = load i32, @state
  call @putint(%9)
  ret 0
}
"#;

    #[test]
    fn a_global_recurrence_has_its_closed_form_once_promoted() {
        // The pipeline runs `closedform` again after `promote`: the global, carried
        // in a register, is a modular sum.
        let passes = ["promote", "closedform"];
        for input in ["4561 2000", "65534 7", "-5 30", "70000 3", "0 1"] {
            let out = same_behaviour(GLOBAL_STATE, &passes, input);
            assert!(out.contains("srem64"), "{input}: {out}");
        }
        // Without the promotion, the loads and stores keep the loop as it is.
        let out = run(GLOBAL_STATE, &["closedform"]);
        assert!(!out.contains("srem64"), "{out}");
    }

    /// Regression (difftest seed 390231, -O1): routing a loop's exit values
    /// through its exit edge changes the function even when no closed form
    /// follows (the loop loads), and the pass must say so, or the purity summary
    /// an earlier pass cached goes stale (a store through the routed address no
    /// longer shows which object it writes).
    #[test]
    fn routing_exit_values_alone_is_reported() {
        let src = r#"
global @g: i32 = 3
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %a = alloc [i32; 16]
  jump bb1(0, 0)
bb1(%i: i32, %s: i32):
  %v = load i32, @g
  %s1 = add %s, %v
  %q = gep %a, %i, 4
  store %s1, %q
  %i1 = add %i, 1
  %c = slt %i1, 10
  br %c, bb1(%i1, %s1), bb2
bb2:
  store 7, %q
  %w = load i32, %q
  call @putint(%w)
  ret 0
}
"#;
        let out = same_behaviour(src, &["loopdelete", "closedform", "loopdelete"], "");
        assert!(
            out.contains(": ptr)"),
            "the exit block receives the address:\n{out}"
        );
    }
}
