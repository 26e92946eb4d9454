//! Runtime unrolling of single-block counted loops: `k` iterations run per trip
//! of an unrolled copy of the loop with one exit test, and the original loop runs
//! what is left (fewer than `k`).
//!
//! ```text
//!   pre:  jump b(x0)                      pre:  e = gep end, -(k-1)c, S; br slt(p0, e), u(x0), b(x0)
//!   b(x): body(x) -> x1                   u(x): body(x) -> x1; ...; body(x_k-1) -> x_k
//!         br slt(gep p, c, S), end),            br slt(p_k, e), u(x_k), m
//!            b(x1), exit(o)               m:    br slt(p_k, end), b(x_k), exit(o_k)
//!                                         b(x): (unchanged: the remainder)
//! ```
//!
//! Unrolling with a remainder loop, as LLVM's runtime unrolling
//! (`UnrollRuntimeLoopRemainder`) and GCC's `-funroll-loops` do it: the unrolled
//! loop is entered only while `k` more iterations are certain, so its copies drop
//! their exit tests and the pointer increments of `k` iterations fold into the
//! offsets of one (the back end addresses `p + 4j` from `p`).
//!
//! The loop is counted when the scalar evolution ([`crate::analysis::scev`]) finds
//! its latch's exit test to be `x op end`, `end` from outside the loop, `x` a
//! header parameter `{x0,+,d}` or its latch argument `{x0+d,+,d}`, a pointer or an
//! `i32`, with a constant step `d` toward the end: `<` or `<=` counting up, `>` or
//! `>=` counting down (any step, tested before or after it; the analysis finds the
//! step through any arithmetic, and a pointer also through a `gep` of any stride).
//! "`k` more iterations" is then one test of the trip's first `x` against the end
//! moved back by the `k - 2` steps (`k - 1` when the test is after the step) that
//! the copies' dropped tests would have checked: `x op end - ahead`. A pointer does
//! not wrap, so that is exact; for an `i32` it is exact when `end - ahead` does not
//! wrap, which the preheader checks before entering the unrolled loop (inside it
//! the counter then stays between its first value and `end`, so no copy's step
//! wraps either). From a constant first value `x0` the two tests are one, `x0 +
//! ahead op end`, which holds exactly when `end - ahead` does not wrap and `x0 op
//! end - ahead` holds. A loop counted by an `i32` is left alone when a recurrence is
//! all its work and bounds its trip (`x = x / 16`: the counter's instructions issue
//! in the shadow of the chain, and unrolling would add only the entry test and the
//! remainder loop). Linear-function test replacement ([`super::lftr`]) gives most
//! counted loops the pointer form.
//!
//! A function with an unrolled loop is then cleaned up by instcombine and value
//! numbering (see [`RuntimeUnroll`]'s `run`).
//!
//! Only small bodies without calls are unrolled (by 4 up to [`SMALL_BODY`]
//! instructions, by 2 up to [`MAX_BODY`]), and a function grows by at most
//! [`MAX_GROWTH`] instructions. A loop known to run fewer than twice the unroll
//! factor iterations is left alone: its exit tests or its accesses to an array of
//! known size ([`ScalarEvolution::max_count_from_accesses`]) bound its trip count.

use crate::analysis::scev::ScalarEvolution;
use crate::analysis::{
    issue_estimate, AnalysisManager, FunctionAnalyses, LoopId, Preserved, RotatedLoop,
};
use crate::passes::{scalar::instcombine, value_numbering::gvn};
use crate::pipeline::Pass;
use crate::ssa::remove_trivial_params_with;
use crate::ssa::update::repair_uses;
use ir::analysis::ControlFlowGraph;
use ir::{BinOp, Block, BlockCall, CmpOp, FuncId, Function, Inst, InstKind, Module, Type, Value};
use rustc_hash::{FxHashMap, FxHashSet};

/// The runtime unrolling pass.
pub struct RuntimeUnroll;

impl Pass for RuntimeUnroll {
    fn name(&self) -> &'static str {
        "rtunroll"
    }
    fn description(&self) -> &'static str {
        "unroll counted single-block loops with a remainder loop"
    }
    /// Each function with an unrolled loop is then simplified: the copies name
    /// one address two ways (the second copy's `gep (gep p, 1, 4), -1, 4` is the
    /// first one's `p`), which instcombine folds, and value numbering then forwards
    /// a copy's store to the next copy's load of it. Only those functions: value
    /// numbering every function once more cost 3% of a large compile.
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let sizes = crate::analysis::deref::global_sizes(m);
        let unrolled: Vec<FuncId> = m
            .funcs
            .iter_mut()
            .filter(|(_, f)| !f.is_declaration())
            .filter_map(|(id, f)| {
                am.on_function(id, f, |f, fa| run_in(f, fa, &sizes) > 0)
                    .then_some(id)
            })
            .collect();
        if unrolled.is_empty() {
            return false;
        }
        // The unrolled functions' summaries are taken anew; every other stays.
        let purity = am.purity(m);
        for id in unrolled {
            am.on_function(id, &mut m.funcs[id], |f, fa| {
                instcombine::run(f);
                gvn::run_in(f, &purity, fa);
                true
            });
        }
        true
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
}

/// Bodies up to this many instructions are unrolled four times.
pub const SMALL_BODY: usize = 12;
/// Bodies up to this many instructions are unrolled twice; larger ones not at all.
pub const MAX_BODY: usize = 40;
/// A function grows by at most this many instructions.
pub const MAX_GROWTH: usize = 1000;
/// A loop counted by an `i32` whose work is all recurrences is unrolled only if a
/// trip takes at least this many cycles more than its longest recurrence.
pub const MIN_TRIP_GAIN: u32 = 2;

/// What unrolling a loop needs: its shape, the counter (the header parameter's
/// index), how it counts, how the latch tests it, and the end it is compared with.
struct Plan {
    l: RotatedLoop,
    iv: usize,
    count: Count,
    /// The latch continues while `x op end`.
    op: CmpOp,
    /// Whether `x` is the counter after its step (otherwise before).
    tests_next: bool,
    end: Value,
    factor: usize,
}

/// How a loop counts.
#[derive(Copy, Clone, Debug)]
enum Count {
    /// A pointer advanced by `step` bytes.
    Pointer { step: i32 },
    /// An `i32` advanced by `step`.
    Int { step: i32 },
}

impl Count {
    /// How far the counter moves in `n` iterations, in its own units.
    fn span(self, n: i32) -> i32 {
        match self {
            Count::Pointer { step } | Count::Int { step } => n * step,
        }
    }
}

/// Unrolls the loops of `f` that qualify; returns how many.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default(), &[])
}

/// [`run`] with the analyses taken from `fa` (forgotten when a loop was unrolled)
/// and the size in bytes of each global, by index.
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses, global_sizes: &[u64]) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let mut se = fa.scev(f);
    let (cfg, loops) = (se.cfg, se.loops);
    let mut budget = MAX_GROWTH;
    let mut plans = Vec::new();
    for (id, lp) in loops.loops() {
        if lp.blocks.len() != 1 || !lp.children.is_empty() {
            continue;
        }
        let Some(l) = RotatedLoop::of(f, cfg, loops, id) else {
            continue;
        };
        let Some(plan) = Plan::of(&mut se, id, l) else {
            continue;
        };
        // A loop that runs fewer than two trips of the unrolled copy gains
        // little from it (as LLVM leaves loops of a small constant maximum trip
        // count to full unrolling, `unroll-max-upperbound`).
        let max = [
            se.max_count(id),
            se.max_count_from_accesses(id, global_sizes),
        ];
        if max
            .into_iter()
            .flatten()
            .min()
            .is_some_and(|m| m + 1 < 2 * plan.factor as i64)
        {
            continue;
        }
        let body = f.layout.block_insts(plan.l.header).count() - 1;
        let growth = body * plan.factor + 6;
        if growth <= budget {
            budget -= growth;
            plans.push(plan);
        }
    }
    drop(se);
    // One CFG for all the loops, each unrolling updating the edges it changes (a
    // computation per loop made the pass quadratic in a function of many loops).
    let mut cfg = if plans.is_empty() {
        ControlFlowGraph::default()
    } else {
        ControlFlowGraph::compute(f)
    };
    for p in &plans {
        unroll(f, p, &mut cfg);
    }
    if !plans.is_empty() {
        fa.forget();
    }
    plans.len()
}

impl Plan {
    fn of(se: &mut ScalarEvolution, id: LoopId, l: RotatedLoop) -> Option<Plan> {
        let f = se.f;
        let b = l.header;
        let pt = f.terminator(l.preheader)?;
        if !matches!(f.kind(pt), InstKind::Jump { .. }) {
            return None;
        }
        let t = se.exit_test(id, l.latch)?;
        let end = t.bound_value?;
        if f.value_block(end) == Some(b) {
            return None;
        }
        match (t.op, t.step > 0) {
            (CmpOp::Slt | CmpOp::Sle, true) | (CmpOp::Sgt | CmpOp::Sge, false) => {}
            _ => return None,
        }
        let step = i32::try_from(t.step).ok()?;
        let (params, next) = (f.block_params(b), l.next_args(f));
        let (iv, tests_next) = (0..params.len()).find_map(|k| {
            if se.get(params[k]) == t.x {
                Some((k, false))
            } else {
                (se.get(next[k]) == t.x).then_some((k, true))
            }
        })?;
        let pe = se.get(params[iv]);
        let (pl, pops) = se.exprs.as_addrec(pe)?;
        if pl != id || pops.len() != 2 || se.exprs.as_const(pops[1]) != Some(t.step) {
            return None;
        }
        // A pointer's step is the scalar evolution's, in bytes.
        let count = match f.value_type(end) {
            Type::Ptr => Count::Pointer { step },
            Type::I32 => Count::Int { step },
            _ => return None,
        };
        let (Count::Pointer { step } | Count::Int { step }) = count;
        if step.unsigned_abs() > 1 << 16 {
            return None;
        }
        let mut body = 0;
        for i in f.layout.block_insts(b) {
            if i == l.branch {
                break;
            }
            body += 1;
            if matches!(f.kind(i), InstKind::Call { .. } | InstKind::Alloc { .. }) {
                return None;
            }
        }
        let factor = match body {
            0..=SMALL_BODY => 4,
            _ if body <= MAX_BODY => 2,
            _ => return None,
        };
        if matches!(count, Count::Int { .. }) && bound_by_recurrence(f, &l, iv) {
            return None;
        }
        Some(Plan {
            l,
            iv,
            count,
            op: t.op,
            tests_next,
            end,
            factor,
        })
    }
}

/// Whether a trip of loop `l` (a single block) is bound by a recurrence: every
/// instruction but the counter's step and test lies on a chain from a carried value
/// to its next value (`x = x / 16`, `x = (x << 1) + x % 2`), and the trip takes
/// fewer than [`MIN_TRIP_GAIN`] cycles more than the longest such chain. Unrolling
/// then removes at most the cycle of the counter's instructions, which short trips
/// (a rotation by an amount loaded from a table) lose again to the entry test and
/// the remainder loop. With work off the chains (`s = (s + 3 * i) % m`), the copies of
/// an unrolled loop overlap it with the chain, which an in-order core cannot do
/// across trips. (A pointer-counted loop gains more than that, its increments
/// folding into offsets, and is unrolled regardless.)
fn bound_by_recurrence(f: &Function, l: &RotatedLoop, iv: usize) -> bool {
    let body: Vec<Inst> = f
        .layout
        .block_insts(l.header)
        .filter(|&i| i != l.branch)
        .collect();
    let params = f.block_params(l.header);
    let next = l.next_args(f);
    let previous = |v: Value| params.iter().position(|&p| p == v).map(|k| next[k]);
    let InstKind::Br { cond, .. } = *f.kind(l.branch) else {
        return false;
    };
    let overhead = [f.def_inst(next[iv]), f.def_inst(cond)];
    // Instructions reached from a carried value (not the counter), and those
    // reaching the next value of one.
    let carried = |v: Value| previous(v).is_some() && v != params[iv];
    let mut from: FxHashSet<Inst> = FxHashSet::default();
    for &i in &body {
        let mut reached = false;
        f.kind(i).for_each_arg(|a| {
            reached |= carried(a) || f.def_inst(a).is_some_and(|d| from.contains(&d));
        });
        if reached {
            from.insert(i);
        }
    }
    let mut to: FxHashSet<Inst> = (0..params.len())
        .filter(|&k| k != iv)
        .filter_map(|k| f.def_inst(next[k]))
        .collect();
    for &i in body.iter().rev() {
        if to.contains(&i) {
            f.kind(i).for_each_arg(|a| {
                if let Some(d) = f.def_inst(a) {
                    to.insert(d);
                }
            });
        }
    }
    let all_on_chains = body
        .iter()
        .filter(|&&i| !overhead.contains(&Some(i)))
        .all(|i| from.contains(i) && to.contains(i));
    all_on_chains
        && issue_estimate::steady_state_length(f, &body, &previous, &|_| 0)
            < issue_estimate::recurrence_length(f, &body, &previous) + MIN_TRIP_GAIN
}

/// `a op b`, inserted before `before`.
fn cmp_before(f: &mut Function, before: Inst, op: CmpOp, a: Value, b: Value) -> Value {
    let c = f.insert_inst_before(before, InstKind::Cmp { op, args: [a, b] }, Type::I32);
    f.inst_result(c).expect("cmp has a result")
}

/// `gep p, k, 1` (`p` moved by `k` bytes), inserted before `before`.
fn gep_before(f: &mut Function, before: Inst, p: Value, k: i32) -> Value {
    let index = f.iconst(k);
    let g = f.insert_inst_before(
        before,
        InstKind::Gep {
            base: p,
            index,
            stride: 1,
        },
        Type::Ptr,
    );
    f.inst_result(g).expect("gep has a result")
}

/// Unrolls the loop of `p` in `f`, keeping `cfg` (the CFG of `f`, edge lists in
/// the order a fresh computation gives them) up to date.
fn unroll(f: &mut Function, p: &Plan, cfg: &mut ControlFlowGraph) {
    let b = p.l.header;
    // With the preheader just before the header, the new blocks land between them
    // and the edges' order is known without recomputing the CFG.
    let adjacent = f.layout.prev_block(b) == Some(p.l.preheader);
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    let (&branch, body) = insts.split_last().expect("a loop block ends in a branch");
    let params = f.block_params(b).to_vec();
    let next = p.l.next_args(f).to_vec();
    let exit = f.kind(branch).targets()[p.l.exit()].clone();
    // The copies' dropped tests are of the trip's first `x` and the `k - 2` after
    // it (one more when `x` is after the step).
    let ahead = p.count.span(p.factor as i32 - 2 + i32::from(p.tests_next));

    // The unrolled loop: `factor` copies chained through the next values.
    let u = f.create_block();
    let before = f
        .layout
        .prev_block(b)
        .expect("a loop header is not the entry");
    f.layout.insert_block_after(u, before);
    let mut map: FxHashMap<Value, Value> = FxHashMap::default();
    for &x in &params {
        let ty = f.value_type(x);
        let up = f.append_block_param(u, ty);
        map.insert(x, up);
    }
    let jump_placeholder = f.append_inst(
        u,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(u, Vec::new())),
        },
        Type::Void,
    );
    for copy in 0..p.factor {
        if copy > 0 {
            map = params
                .iter()
                .zip(&next)
                .map(|(&x, &n)| (x, map.get(&n).copied().unwrap_or(n)))
                .collect();
        }
        for &i in body {
            let mut kind = f.kind(i).clone();
            kind.map_args(|a| {
                if let Some(&c) = map.get(a) {
                    *a = c;
                }
            });
            let ty = f.inst_result(i).map_or(Type::Void, |r| f.value_type(r));
            let c = f.insert_inst_before(jump_placeholder, kind, ty);
            f.copy_src_loc(i, c);
            if let (Some(r), Some(cr)) = (f.inst_result(i), f.inst_result(c)) {
                map.insert(r, cr);
            }
        }
    }
    let at = |map: &FxHashMap<Value, Value>, v: Value| map.get(&v).copied().unwrap_or(v);
    let next_k: Vec<Value> = next.iter().map(|&n| at(&map, n)).collect();
    // `p + ahead op end` as `p op end - ahead`, the bound computed once before the
    // loop (addresses are far from the ends of the signed range: no wrap either
    // way; an `i32` end may be, and then the unrolled loop is not entered).
    let pt = f
        .terminator(p.l.preheader)
        .expect("preheader ends in a jump");
    let (end_ahead, no_wrap) = match p.count {
        _ if ahead == 0 => (p.end, None),
        Count::Pointer { .. } => (gep_before(f, pt, p.end, -ahead), None),
        Count::Int { .. } => {
            let minus = f.iconst(-ahead);
            let e = f.insert_inst_before(
                pt,
                InstKind::Binary {
                    op: BinOp::Add,
                    args: [p.end, minus],
                },
                Type::I32,
            );
            let e = f.inst_result(e).expect("add has a result");
            // Moved back (toward the start) without wrapping.
            let (a, b) = if ahead > 0 { (e, p.end) } else { (p.end, e) };
            (e, Some(crate::passes::slt_before(f, pt, a, b)))
        }
    };
    let more = cmp_before(f, jump_placeholder, p.op, next_k[p.iv], end_ahead);
    // Fewer than `factor` left: the remainder loop, or the exit.
    let m = f.create_block();
    f.layout.insert_block_after(m, u);
    let exit_k = BlockCall::new(
        exit.block,
        exit.args.iter().map(|&a| at(&map, a)).collect::<Vec<_>>(),
    );
    let m_branch = f.append_inst(
        m,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(m, Vec::new())),
        },
        Type::Void,
    );
    // The last copy's test, made here (the copies' own tests are dead).
    let tested_k = if p.tests_next {
        next_k[p.iv]
    } else {
        at(&map, params[p.iv])
    };
    let cond_k = cmp_before(f, m_branch, p.op, tested_k, p.end);
    f.replace_kind(
        m_branch,
        InstKind::Br {
            cond: cond_k,
            then_dest: Box::new(BlockCall::new(b, next_k.clone())),
            else_dest: Box::new(exit_k),
        },
    );
    f.replace_kind(
        jump_placeholder,
        InstKind::Br {
            cond: more,
            then_dest: Box::new(BlockCall::new(u, next_k)),
            else_dest: Box::new(BlockCall::new(m, Vec::new())),
        },
    );
    // The preheader enters the unrolled loop when `factor` iterations are certain.
    let init = p.l.init_args(f).to_vec();
    // From a constant `x0`, `x0 op end - ahead` with `end - ahead` not wrapping is
    // `x0 + ahead op end` (exact when `x0 + ahead` fits in an `i32`: `end` beyond
    // it is at least `ahead` from the wrapping end, and the other way round).
    let from_constant = no_wrap
        .and(f.as_iconst(init[p.iv]))
        .and_then(|x0| x0.checked_add(ahead));
    let mut enter = match from_constant {
        Some(k) => {
            let k = f.iconst(k);
            cmp_before(f, pt, p.op, k, p.end)
        }
        None => cmp_before(f, pt, p.op, init[p.iv], end_ahead),
    };
    if let Some(ok) = no_wrap.filter(|_| from_constant.is_none()) {
        let both = f.insert_inst_before(
            pt,
            InstKind::Binary {
                op: BinOp::And,
                args: [ok, enter],
            },
            Type::I32,
        );
        enter = f.inst_result(both).expect("and has a result");
    }
    f.replace_kind(
        pt,
        InstKind::Br {
            cond: enter,
            then_dest: Box::new(BlockCall::new(u, init.clone())),
            else_dest: Box::new(BlockCall::new(b, init)),
        },
    );
    if !(adjacent && update_edges(f, cfg, p.l.preheader, b, u, m, exit.block)) {
        *cfg = ControlFlowGraph::compute(f);
    }
    #[cfg(test)]
    assert!(
        cfg.same_edges(&ControlFlowGraph::compute(f), f),
        "the updated CFG differs from a fresh one"
    );
    // Values of b used beyond it now also come from the last copy, through m.
    let mut created = Vec::new();
    for v in f.block_values(b) {
        let last = at(&map, v);
        created.extend(repair_uses(f, cfg, v, &[(b, v), (m, last)], |x| {
            x == b || x == u || x == m
        }));
    }
    remove_trivial_params_with(f, cfg, &created);
}

/// Brings `cfg` up to date after [`unroll`] of the loop `b` with preheader `pre`,
/// laid out `pre, u, m, b` (the new blocks between them) and exiting to `exit`,
/// listing every edge where [`ControlFlowGraph::compute`] would: a block's
/// predecessors by their place in the layout. `pre` now branches to `u` and `b`,
/// `u` to itself and `m`, and `m` to `b` and `exit`; `m`, just before `b`, goes
/// before `b`'s edges into `b` and `exit`. False, with `cfg` left as it was, when
/// `b` has no edge to itself to place `m` by.
fn update_edges(
    f: &Function,
    cfg: &mut ControlFlowGraph,
    pre: Block,
    b: Block,
    u: Block,
    m: Block,
    exit: Block,
) -> bool {
    let before_b = |preds: &[Block]| -> Option<Vec<Block>> {
        let k = preds.iter().position(|&x| x == b)?;
        let mut v = preds.to_vec();
        v.insert(k, m);
        Some(v)
    };
    let (Some(into_b), Some(into_exit)) = (before_b(cfg.preds(b)), before_b(cfg.preds(exit)))
    else {
        return false;
    };
    let pre_preds = cfg.preds(pre).to_vec();
    cfg.set_edges(pre, &pre_preds, &f.successors(pre));
    cfg.set_edges(u, &[pre, u], &f.successors(u));
    cfg.set_edges(m, &[u], &f.successors(m));
    let b_succs = cfg.succs(b).to_vec();
    cfg.set_edges(b, &into_b, &b_succs);
    let exit_succs = cfg.succs(exit).to_vec();
    cfg.set_edges(exit, &into_exit, &exit_succs);
    true
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// Sums `a[0..n)` and stores the running sums into `b`, counted by a pointer
    /// into `a`: `n` read; the sum, the end pointer's last element and `b[n-1]`
    /// printed.
    const MARCH: &str = r#"
global @a: [i32; 64] = zeroinit
global @b: [i32; 64] = zeroinit

declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb1, bb4(0)
bb1:
  %2 = gep @a, 0, 4
  %3 = gep @a, %0, 4
  %4 = gep @b, 0, 4
  jump bb2(%2, %4, 0, 0)
bb2(%5: ptr, %6: ptr, %7: i32, %8: i32):
  %9 = mul %8, 7
  %10 = add %9, 3
  store %10, %5
  %11 = load i32, %5
  %12 = add %7, %11
  store %12, %6
  %13 = gep %5, 1, 4
  %14 = gep %6, 1, 4
  %15 = add %8, 1
  %16 = slt %13, %3
  br %16, bb2(%13, %14, %12, %15), bb3(%12)
bb3(%17: i32):
  %18 = add %15, 100
  call @putint(%18)
  call @putch(32)
  jump bb4(%17)
bb4(%19: i32):
  call @putint(%19)
  call @putch(32)
  %20 = gep @b, 0, 4
  %21 = load i32, %20
  call @putint(%21)
  ret 0
}
"#;

    #[test]
    fn every_trip_count_runs_the_same() {
        // 0 to 9 iterations: the unrolled loop alone, the remainder alone, both.
        for n in 0..10 {
            let out = same_behaviour(MARCH, &["rtunroll"], &n.to_string());
            assert_eq!(
                out.matches("store %").count(),
                2 * 5,
                "4 copies + remainder:\n{out}"
            );
        }
    }

    /// A loop whose accesses stay inside an object of a few elements runs at most
    /// that many iterations: fewer than two trips of the unrolled copy are left
    /// alone, more are unrolled.
    #[test]
    fn loops_over_small_arrays_are_not_unrolled() {
        // Stores to a[0..n) of `int a[7]`: at most 7 iterations, under 2 * 4.
        let small = MARCH.replace("global @a: [i32; 64]", "global @a: [i32; 7]");
        for n in 0..=7 {
            let out = same_behaviour(&small, &["rtunroll"], &n.to_string());
            assert_eq!(out.matches("store %").count(), 2, "{out}");
        }
        // `int a[8]` lets the unrolled copy run two trips.
        let eight = MARCH.replace("global @a: [i32; 64]", "global @a: [i32; 8]");
        for n in 0..=8 {
            let out = same_behaviour(&eight, &["rtunroll"], &n.to_string());
            assert_eq!(out.matches("store %").count(), 2 * 5, "{out}");
        }
    }

    #[test]
    fn loops_counted_by_an_integer_unroll_too() {
        // Counted by the i32 `%8` against `n`: 4 copies and the remainder, every
        // trip count running the same.
        let src = MARCH.replace("%16 = slt %13, %3", "%16 = slt %15, %0");
        for n in 0..10 {
            let out = same_behaviour(&src, &["rtunroll"], &n.to_string());
            assert_eq!(out.matches("store %").count(), 2 * 5, "{out}");
        }
    }

    /// Integer counters of other shapes: by 2, down to 0, an inclusive bound, the
    /// test before the step; every trip count runs the same.
    #[test]
    fn integer_counters_of_any_constant_step_and_test() {
        let int = MARCH.replace("%16 = slt %13, %3", "%16 = slt %15, %0");
        let down = int
            .replace("jump bb2(%2, %4, 0, 0)", "jump bb2(%2, %4, 0, %0)")
            .replace("add %8, 1", "add %8, -1")
            .replace("slt %15, %0", "sgt %15, 0");
        for src in [
            int.replace("add %8, 1", "add %8, 2"),
            down,
            int.replace("slt %15, %0", "sle %15, %0"),
            int.replace("slt %15, %0", "slt %8, %0"),
        ] {
            for n in 0..12 {
                let out = same_behaviour(&src, &["rtunroll"], &n.to_string());
                assert_eq!(out.matches("store %").count(), 2 * 5, "{out}");
            }
        }
    }

    /// Left alone: a step that is not a constant, and a `!=` test (by 2, the
    /// counter meets an odd bound only after wrapping round).
    #[test]
    fn no_unrolling_of_uncounted_integer_loops() {
        let int = MARCH.replace("%16 = slt %13, %3", "%16 = slt %15, %0");
        for src in [
            int.replace("add %8, 1", "add %8, %0"),
            int.replace("add %8, 1", "add %8, 2")
                .replace("slt %15, %0", "ne %15, %0"),
        ] {
            let out = crate::passes::testutil::run(&src, &["rtunroll"]);
            assert_eq!(out.matches("store %").count(), 2, "{out}");
        }
    }

    /// `for (i = 2^31 - 1; i - 2 > n; i -= 2) s += i & 7;` with `n` read: near the
    /// top of the range `n + 6` wraps round, and the unrolled loop is not entered.
    #[test]
    fn a_down_counter_near_the_top_of_the_range_keeps_the_trip_count() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = slt %0, 2147483647
  br %1, bb1, bb3(0)
bb1:
  jump bb2(2147483647, 0)
bb2(%2: i32, %3: i32):
  %4 = and %2, 7
  %5 = add %3, %4
  %6 = add %2, -2
  %7 = sgt %6, %0
  br %7, bb2(%6, %5), bb3(%5)
bb3(%8: i32):
  call @putint(%8)
  ret 0
}
"#;
        for n in [
            "2147483646",
            "2147483643",
            "2147483641",
            "2147483638",
            "2147483600",
        ] {
            let out = same_behaviour(src, &["rtunroll"], n);
            assert_eq!(out.matches(", 7\n").count(), 5, "{out}");
        }
    }

    /// `for (i = x0; i < n; i++) s += i & 7;` with `n` read, `s` printed.
    fn up_from(x0: &str) -> String {
        format!(
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = slt {x0}, %0
  br %1, bb1, bb3(0)
bb1:
  jump bb2({x0}, 0)
bb2(%2: i32, %3: i32):
  %4 = and %2, 7
  %5 = add %3, %4
  %6 = add %2, 1
  %7 = slt %6, %0
  br %7, bb2(%6, %5), bb3(%5)
bb3(%8: i32):
  call @putint(%8)
  ret 0
}}
"#
        )
    }

    /// `for (i = -2^31; i < n; i++) s += i & 7;` with `n` read: near the bottom of
    /// the range `n - 3` wraps round to a large positive bound, which must not
    /// let the unrolled loop run four iterations where one or two are left.
    #[test]
    fn an_integer_end_near_the_bottom_of_the_range_keeps_the_trip_count() {
        let src = up_from("-2147483648");
        for n in [
            "-2147483647",
            "-2147483646",
            "-2147483645",
            "-2147483644",
            "-2147483630",
        ] {
            let out = same_behaviour(&src, &["rtunroll"], n);
            assert_eq!(out.matches(", 7\n").count(), 5, "{out}");
        }
    }

    /// `for (i = 0; i < n; i++) s += i & 7;` with `n` read: from a constant start
    /// the entry test is one comparison, `n > 3` (three more steps than the first
    /// are certain), with no separate test that `n - 3` does not wrap.
    #[test]
    fn an_integer_loop_from_a_constant_is_entered_by_one_comparison() {
        let src = up_from("0");
        for n in ["1", "3", "4", "5", "8", "13", "-2147483648", "2147483647"] {
            let input = if n == "2147483647" { "40" } else { n };
            let out = same_behaviour(&src, &["rtunroll", "dce"], input);
            assert!(out.contains("= sgt %0, 3\n"), "{out}");
            let ands = out.lines().filter(|l| l.contains("= and ")).count();
            let masks = out
                .lines()
                .filter(|l| l.contains("= and ") && l.ends_with(", 7"))
                .count();
            assert_eq!(ands, masks, "only the body's masks: {out}");
        }
    }

    /// `for (i = 0; i < m; i++) x = x OP 16;`, `x` and `m` read, `x` printed.
    fn chain(op: &str) -> String {
        format!(
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = slt 0, %1
  br %2, bb1, bb3(%0)
bb1:
  jump bb2(0, %0)
bb2(%3: i32, %4: i32):
  %5 = {op} %4, 16
  %6 = add %3, 1
  %7 = slt %6, %1
  br %7, bb2(%6, %5), bb3(%5)
bb3(%8: i32):
  call @putint(%8)
  ret 0
}}
"#
        )
    }

    #[test]
    fn an_integer_loop_bound_by_its_recurrence_is_left() {
        // A division a trip: the counter's add and test issue in its shadow.
        let out = same_behaviour(&chain("sdiv"), &["rtunroll"], "1000000 6");
        assert_eq!(out.matches("sdiv").count(), 1, "{out}");
        // An add a trip: the counter's instructions are half the trip; unrolled,
        // the four adds of 16 fold into one of 64.
        let out = same_behaviour(&chain("add"), &["rtunroll"], "7 6");
        assert!(out.contains(", 64\n"), "{out}");
    }

    /// `a[k] = 3 * a[k - 1] + 1` walked by a pointer: in the unrolled body each
    /// copy's load of the left neighbour is the previous copy's store, forwarded
    /// by the cleanup after unrolling: one load in the unrolled body, one in the
    /// remainder, one after the loop (six without it).
    #[test]
    fn a_copy_reads_the_previous_copys_store_without_a_load() {
        let src = r#"
global @a: [i32; 64] = zeroinit

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 1
  br %1, bb1, bb3
bb1:
  %2 = gep @a, 1, 4
  %3 = gep @a, %0, 4
  jump bb2(%2)
bb2(%4: ptr):
  %5 = gep %4, -1, 4
  %6 = load i32, %5
  %7 = mul %6, 3
  %8 = add %7, 1
  store %8, %4
  %9 = gep %4, 1, 4
  %10 = slt %9, %3
  br %10, bb2(%9), bb3
bb3:
  %11 = gep @a, %0, 4
  %12 = gep %11, -1, 4
  %13 = load i32, %12
  call @putint(%13)
  ret 0
}
"#;
        for n in 1..12 {
            let out = same_behaviour(src, &["rtunroll"], &n.to_string());
            assert_eq!(out.matches("load i32").count(), 3, "{out}");
        }
    }
}
