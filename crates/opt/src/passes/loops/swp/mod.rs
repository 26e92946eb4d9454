//! Software pipelining of single-block loops, in two stages: each trip of the new
//! loop runs the late stage of iteration `i` together with the early stage of
//! iteration `i + 1`, so the in-order core overlaps the early stage's latencies
//! (loads, multiplies, divisions) with the late stage's work.
//!
//! This is modulo scheduling (Rau, "Iterative Modulo Scheduling", MICRO 1994; Lam,
//! "Software Pipelining: An Effective Scheduling Technique for VLIW Machines", PLDI
//! 1988) with a fixed assignment of two stages, done on SSA form so that the
//! values crossing from one stage to the next become block parameters (modulo
//! variable expansion for free); the machine scheduler then interleaves the two
//! independent halves of the kernel. GCC's `-fmodulo-sched` and LLVM's
//! `MachinePipeliner` do the general form after instruction selection.
//!
//! The early stage `S0` is the greatest set of the header's instructions that are
//! loads, or arithmetic that cannot trap, whose operands are loop-invariant, in
//! `S0`, or parameters whose next value (the back edge's argument) is invariant or
//! in `S0` (induction variables); the loop's exit test must be in it. A load is in
//! `S0` only if no store of the loop may touch what it reads, since the next
//! iteration's load now runs beside this iteration's stores: by alias region
//! ([`AliasRegions`]), or by address ([`memory`]: the same base at other bytes
//! than every store of the region in the next trip, and than the stores before
//! it in its own). The late stage `S1` is the rest. Smaller early stages are
//! tried too: without some of the loads ([`early_subsets`]), for a loop whose
//! every load a trip early would need more registers than there are, and with
//! only the loads and their addresses (multiplies of loaded values stay late).
//!
//! ```text
//!   P:    jump H(init)                 P:  S0(init); br c0, K(init, V0), L(init, V0)
//!   H(p): S0; S1; br c, H(n), X(e)     K(p, v): S1(p, v); S0(n) -> V', c'
//!                                               br c', K(n, V'), L(n, V')
//!                                      L(p, v): S1(p, v); jump X(e)
//! ```
//!
//! `K` is entered for iteration `i` only when iteration `i + 1` runs too, so its
//! early stage is never speculative: nothing runs that the original loop would not
//! have run, and loads are never moved past the end of an array. `L` runs the late
//! stage of the last iteration.
//!
//! A loop is pipelined when that shortens a trip in its steady state by at least
//! [`MIN_GAIN`] cycles, as [`issue_estimate::steady_state_length`] estimates it on
//! the in-order, dual-issue U74 (the previous trip's results still in flight when
//! a trip starts): before, a trip of the loop; after, a trip of the kernel. A
//! split that moves loads by address is compared with the loop's trip whose
//! accesses pass each other where their addresses differ (the machine scheduler
//! does that in the loop as it is). It must hold at most [`MAX_INSTS`]
//! instructions and carry at most [`MAX_CARRIED`] values from one stage to the
//! next (registers live across the back edge). A pointer the late stage reads at
//! a constant offset from an induction variable is not carried: it is
//! recomputed from the variable's next value, which is (an address offset the
//! back end folds into the access); the next value of an induction variable
//! that only the early stage reads takes the variable's place, and does not
//! count.

use crate::analysis::dataflow::{self, Liveness, Solution};
use crate::analysis::{
    issue_estimate, AliasRegions, AnalysisManager, FunctionAnalyses, PointerOffsets, Preserved,
};
use crate::pipeline::Pass;
use ir::analysis::ControlFlowGraph;
use ir::{BinOp, Block, BlockCall, Function, Inst, InstKind, Module, Type, Value, ValueDef};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::OnceCell;
use std::collections::BTreeSet;

mod memory;

/// The software pipelining pass.
pub struct SoftwarePipelining;

impl Pass for SoftwarePipelining {
    fn name(&self) -> &'static str {
        "swp"
    }
    fn description(&self) -> &'static str {
        "overlap each single-block loop iteration's loads and arithmetic with the previous one's stores"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let regions = AliasRegions::compute(m);
        am.each_function_by_id(m, |id, f, fa| run_in(f, &|i| regions.region(id, i), fa) > 0)
    }
}

/// A loop is pipelined when that shortens its critical path by at least this
/// many U74 cycles per iteration.
pub const MIN_GAIN: u32 = 3;
/// Loops of at most this many instructions are pipelined (the late stage is
/// copied once more, the early stage once).
pub const MAX_INSTS: usize = 64;
/// Loops with at most this many loads that may run early try every subset of
/// them as the early stage's loads (`2^6` splits at most).
pub const MAX_LOAD_SUBSETS: usize = 6;
/// At most this many values cross from the early to the late stage.
pub const MAX_CARRIED: usize = 8;
/// At most this many values (integer, float) may be live in the kernel: those
/// live across the loop and twice the carried ones (the previous iteration's,
/// which the late stage reads, and the next one's, which the early stage
/// writes). Near the machine scheduler's bounds (`PRESSURE_LIMIT` in the back
/// end's `schedule.rs`, 26 integer registers) it keeps the next iteration's
/// loads after the late stage's reads, and the allocator copies carried values
/// on the back edge; beyond 28 that costs more than the overlap gains
/// (matmul's unroll-and-jammed loop: U74 estimate 0.466 -> 0.502 of gcc when
/// pipelined with 29), at 28 the overlap still wins (sl's in-place stencil,
/// whose carried chain of divisions by an invariant the next trip's five row
/// loads overlap: 0.478 -> 0.424 of gcc, with four copies on the back edge).
pub const MAX_PRESSURE: [usize; 2] = [28, 28];
/// Functions with more blocks times values than this are not pipelined: the
/// liveness that counts the pressure holds a set of live values per block, which
/// grows with the product in a deep loop nest (640 nested loops: a quarter of the
/// compile time).
pub const LIVENESS_BUDGET: usize = 1 << 21;

/// Pipelines the single-block loops of `f` that qualify; `region` gives the alias
/// region of each load and store. Returns how many, with the preheaders added.
pub fn run(f: &mut Function, region: &dyn Fn(Inst) -> u32) -> usize {
    run_in(f, region, &mut FunctionAnalyses::default())
}

/// [`run`] with the CFG taken from `fa` (forgotten after each pipelined loop,
/// whose new blocks change the edges).
fn run_in(f: &mut Function, region: &dyn Fn(Inst) -> u32, fa: &mut FunctionAnalyses) -> usize {
    // A one-block loop entered from several blocks gets a preheader first (as
    // LLVM's LoopSimplify gives every loop one), so that it has the one entry
    // edge the pipelined form replaces: a loop entered both from a guard and
    // from the end of an earlier loop was left alone.
    let mut added = 0;
    let cfg = fa.cfg(f);
    let entered_often = f.layout.blocks().any(|h| {
        f.successors(h).contains(&h) && cfg.unique_preds(h).iter().filter(|&&p| p != h).count() > 1
    });
    if entered_often {
        let mut cfg = cfg.clone();
        let dt = ir::analysis::DominatorTree::compute(f, &cfg);
        let loops = crate::analysis::LoopForest::compute(f, &cfg, &dt);
        // Only one-block loops: other loops keep their shape (and layout).
        let missing: Vec<_> = loops
            .loops()
            .filter(|(id, l)| {
                f.successors(l.header).contains(&l.header)
                    && l.blocks.len() == 1
                    && loops.preheader(*id, &cfg).is_none()
            })
            .map(|(id, _)| id)
            .collect();
        for &id in &missing {
            crate::passes::loops::licm::insert_preheader(f, &mut cfg, &loops, id);
        }
        added = missing.len();
        fa.forget();
    }
    let cfg = fa.cfg(f);
    let loops: Vec<(Block, Block)> = f
        .layout
        .blocks()
        .filter_map(|h| self_loop(f, cfg, h).map(|p| (h, p)))
        .collect();
    let mut done = 0;
    // A pipelined loop's exits leave from its last-iteration block.
    let mut exit_block: FxHashMap<Block, Block> = FxHashMap::default();
    // Values live into each header, recomputed after each change.
    let mut live: Option<Solution<BTreeSet<Value>>> = None;
    // Addresses as bases plus bytes, computed when a loop first needs them.
    let mut offsets: OnceCell<PointerOffsets> = OnceCell::new();
    for (h, pred) in loops {
        let mut live_across = || {
            if f.num_blocks().saturating_mul(f.num_values()) > LIVENESS_BUDGET {
                // Too big to count exactly: taken as too many.
                return [usize::MAX / 4; 2];
            }
            let live = live.get_or_insert_with(|| dataflow::solve(f, fa.cfg(f), &Liveness));
            let mut count = [0; 2];
            for &v in live.at_start[h].iter().chain(f.block_params(h)) {
                count[usize::from(f.value_type(v) == Type::F32)] += 1;
            }
            count
        };
        let offsets_of = || offsets.get_or_init(|| PointerOffsets::compute(f));
        if let Some(stages) = Stages::find(f, h, region, &offsets_of, &mut live_across) {
            live = None;
            offsets = OnceCell::new();
            let pred = exit_block.get(&pred).copied().unwrap_or(pred);
            let pre = preheader(f, h, pred);
            let last = pipeline(f, h, pre, &stages);
            fa.forget();
            exit_block.insert(h, last);
            done += 1;
        }
    }
    done + added
}

/// The other predecessor of `h` when `h` is a loop of one block: it branches to
/// itself and to another block, and one other edge enters it.
fn self_loop(f: &Function, cfg: &ControlFlowGraph, h: Block) -> Option<Block> {
    let (t, e) = f.branch_arms(h)?;
    if (t == h) == (e == h) {
        return None;
    }
    match *cfg.preds(h) {
        [a, b] if a == h && b != h => Some(b),
        [a, b] if b == h && a != h => Some(a),
        _ => None,
    }
}

/// A block that only jumps to `h`, on the edge from `pred`: `pred` itself when it
/// does, else a new block placed before `h` taking over the edge's arguments.
fn preheader(f: &mut Function, h: Block, pred: Block) -> Block {
    let term = f.terminator(pred).expect("a predecessor ends in a branch");
    if matches!(f.kind(term), InstKind::Jump { .. }) {
        return pred;
    }
    let (which, args) = f
        .kind(term)
        .targets()
        .iter()
        .enumerate()
        .find(|(_, t)| t.block == h)
        .map(|(k, t)| (k, t.args.clone()))
        .expect("the predecessor branches to the loop");
    let p = f.create_block();
    let before = f
        .layout
        .prev_block(h)
        .expect("a loop header is not the entry");
    f.layout.insert_block_after(p, before);
    f.append_inst(
        p,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(h, args)),
        },
        Type::Void,
    );
    f.set_target(term, which, BlockCall::new(p, Vec::new()));
    p
}

/// Whether an instruction may be part of the early stage: no effect but its
/// result, and no trap (integer division is left in the late stage).
fn early_kind(k: &InstKind) -> bool {
    match k {
        InstKind::Binary { op, .. } => !matches!(
            op,
            BinOp::SDiv | BinOp::SRem | BinOp::SDiv64 | BinOp::SRem64
        ),
        InstKind::Cmp { .. } | InstKind::Unary { .. } | InstKind::Gep { .. } => true,
        InstKind::Load { .. } => true,
        _ => false,
    }
}

/// Whether header parameter `k` of loop `h` (whose back edge passes `next`) is in a
/// recurrence: its next value depends on itself through the body, other than as
/// an induction variable (`p` plus a chain of `+ c`, `- c` and `gep _, c`, with
/// each `c` computed without `p` and without loads: invariants, other parameters
/// and arithmetic of those, as in a second-order induction variable `s + d`,
/// `d + 2`, or unrolled, `s + d + (d + 2)`). A sum of loaded values stays a
/// recurrence: its additions wait for the loads.
fn recurrent(f: &Function, h: Block, next: &[Value], k: usize) -> bool {
    let params = f.block_params(h);
    let p = params[k];
    // An addend computed without `p`'s value in this iteration and without
    // loads: an invariant, another parameter, or arithmetic of those, as `d + 2`
    // in an unrolled second-order induction variable `s + d + (d + 2)` (whether
    // they are early is for the caller's fixed point to decide).
    let invariant = |v: Value| !depends_on_or_loads(f, h, v, p);
    // Walk back from the next value through steps that add invariants.
    let mut v = next[k];
    while let Some(d) = f.def_inst(v).filter(|&d| f.layout.inst_block(d) == Some(h)) {
        v = match *f.kind(d) {
            InstKind::Binary {
                op: BinOp::Add | BinOp::Add64,
                args: [a, b],
            } if invariant(b) => a,
            InstKind::Binary {
                op: BinOp::Add | BinOp::Add64,
                args: [a, b],
            } if invariant(a) => b,
            InstKind::Binary {
                op: BinOp::Sub | BinOp::Sub64,
                args: [a, b],
            } if invariant(b) => a,
            InstKind::Gep { base, index, .. } if invariant(index) => base,
            _ => break,
        };
    }
    if v == p {
        return false;
    }
    // Depth-first search from `next[k]` back through operands and parameters.
    let mut seen: FxHashSet<Value> = FxHashSet::default();
    let mut stack = vec![next[k]];
    while let Some(v) = stack.pop() {
        if !seen.insert(v) {
            continue;
        }
        if v == p {
            return true;
        }
        if let Some(j) = params.iter().position(|&q| q == v) {
            stack.push(next[j]);
        } else if let Some(d) = f.def_inst(v) {
            if f.layout.inst_block(d) == Some(h) {
                f.kind(d).for_each_arg(|a| stack.push(a));
            }
        }
    }
    false
}

/// Whether `v` is computed in block `h` from `p` (or is `p`), or from a load.
fn depends_on_or_loads(f: &Function, h: Block, v: Value, p: Value) -> bool {
    let mut seen: FxHashSet<Value> = FxHashSet::default();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        if v == p {
            return true;
        }
        if !seen.insert(v) {
            continue;
        }
        if let Some(d) = f.def_inst(v).filter(|&d| f.layout.inst_block(d) == Some(h)) {
            if matches!(f.kind(d), InstKind::Load { .. }) {
                return true;
            }
            f.kind(d).for_each_arg(|a| stack.push(a));
        }
    }
    false
}

/// The header parameter `p` and byte offset `o` when `v` is `p` plus constant
/// offsets (a chain of `gep` with constant indices in block `h`).
fn offset_from(f: &Function, h: Block, mut v: Value) -> Option<(Value, i64)> {
    let mut off = 0i64;
    loop {
        match f.value_def(v) {
            ValueDef::Param(b, _) if b == h => return Some((v, off)),
            ValueDef::Inst(i) if f.layout.inst_block(i) == Some(h) => match *f.kind(i) {
                InstKind::Gep {
                    base,
                    index,
                    stride,
                } => {
                    off += i64::from(f.as_iconst(index)?) * i64::from(stride);
                    v = base;
                }
                _ => return None,
            },
            _ => return None,
        }
    }
}

/// The greatest subset of `early` (instructions of loop `h`'s body that may run
/// early by kind) whose operands are invariant, early, or early parameters, with
/// which parameters are early: those whose next value is, but parameters in a
/// recurrence (other than an induction variable), which are what the early stage
/// does not wait for.
fn early_closure(
    f: &Function,
    h: Block,
    back: &BlockCall,
    body: &[Inst],
    mut early: FxHashSet<Inst>,
) -> (FxHashSet<Inst>, Vec<bool>) {
    let params = f.block_params(h);
    let param_index = |v: Value| match f.value_def(v) {
        ValueDef::Param(b, k) if b == h => Some(k as usize),
        _ => None,
    };
    let in_body = |v: Value| {
        f.def_inst(v)
            .is_some_and(|i| f.layout.inst_block(i) == Some(h))
    };
    let mut early_param: Vec<bool> = (0..params.len())
        .map(|k| !recurrent(f, h, &back.args, k))
        .collect();
    // Greatest fixed point: drop what depends on the late stage.
    let mut changed = true;
    while changed {
        changed = false;
        for (k, &n) in back.args.iter().enumerate() {
            if !early_param[k] {
                continue;
            }
            let ok = match param_index(n) {
                Some(j) => early_param[j],
                None => !in_body(n) || f.def_inst(n).is_some_and(|d| early.contains(&d)),
            };
            if !ok {
                early_param[k] = false;
                changed = true;
            }
        }
        for &i in body {
            if !early.contains(&i) {
                continue;
            }
            let mut ok = true;
            f.kind(i).for_each_arg(|a| {
                ok &= match param_index(a) {
                    Some(j) => early_param[j],
                    None => !in_body(a) || f.def_inst(a).is_some_and(|d| early.contains(&d)),
                };
            });
            if !ok {
                early.remove(&i);
                changed = true;
            }
        }
    }
    (early, early_param)
}

/// The early sets to try, each closed under operands ([`early_closure`]) with
/// its early parameters: the greatest set `early` allows, then, when the loop
/// has at most [`MAX_LOAD_SUBSETS`] loads that may run early, the set without
/// each subset of them (and what depends on them). Fewer loads a trip early
/// carry fewer values across the back edge: an unroll-and-jammed loop whose
/// every load a trip early would take more registers than the kernel has can
/// still have its last loads, whose latency ends the trip, run early.
fn early_subsets(
    f: &Function,
    h: Block,
    back: &BlockCall,
    body: &[Inst],
    early: FxHashSet<Inst>,
) -> Vec<(FxHashSet<Inst>, Vec<bool>)> {
    let greatest = early_closure(f, h, back, body, early);
    let loads: Vec<Inst> = body
        .iter()
        .copied()
        .filter(|i| greatest.0.contains(i) && matches!(f.kind(*i), InstKind::Load { .. }))
        .collect();
    if loads.is_empty() || loads.len() > MAX_LOAD_SUBSETS {
        return vec![greatest];
    }
    // By how many loads each keeps, from all (the greatest set) down to none,
    // so that of splits the estimate finds equally fast the one with more loads
    // early is kept (the caller keeps the first of equals).
    let mut masks: Vec<u32> = (0..(1u32 << loads.len()) - 1).collect();
    masks.sort_by_key(|m| (std::cmp::Reverse(m.count_ones()), std::cmp::Reverse(*m)));
    let mut sets = Vec::with_capacity(1 << loads.len());
    for mask in masks {
        let mut subset = greatest.0.clone();
        for (k, l) in loads.iter().enumerate() {
            if mask & (1 << k) == 0 {
                subset.remove(l);
            }
        }
        sets.push(early_closure(f, h, back, body, subset));
    }
    sets.insert(0, greatest);
    sets
}

/// The split of a loop's header into stages.
struct Stages {
    /// The early stage, in block order.
    early: Vec<Inst>,
    /// The late stage (the header's other instructions but the terminator), in
    /// block order.
    late: Vec<Inst>,
    /// Values of the early stage the late stage, the terminator or code after the
    /// loop reads: they become parameters of the new blocks.
    carried: Vec<Value>,
    /// Pointers `w` recomputed as `gep n, delta, 1` from the carried next value
    /// `n` of the induction variable they are offsets of.
    remat: Vec<(Value, Value, i64)>,
}

impl Stages {
    /// The best split of loop `h` by the estimate, if it gains at least
    /// [`MIN_GAIN`] cycles a trip; `live_across()` counts the values (integer,
    /// float) live into the header, its parameters included.
    fn find<'o>(
        f: &Function,
        h: Block,
        region: &dyn Fn(Inst) -> u32,
        offsets: &dyn Fn() -> &'o PointerOffsets,
        live_across: &mut dyn FnMut() -> [usize; 2],
    ) -> Option<Stages> {
        let term = f.terminator(h)?;
        let InstKind::Br {
            cond,
            then_dest,
            else_dest,
        } = f.kind(term)
        else {
            return None;
        };
        let back = if then_dest.block == h {
            then_dest
        } else {
            else_dest
        };
        let body: Vec<Inst> = f.layout.block_insts(h).filter(|&i| i != term).collect();
        if body.len() > MAX_INSTS {
            return None;
        }
        if body
            .iter()
            .any(|&i| matches!(f.kind(i), InstKind::Call { .. } | InstKind::Alloc { .. }))
        {
            return None;
        }
        let param_index = |v: Value| match f.value_def(v) {
            ValueDef::Param(b, k) if b == h => Some(k as usize),
            _ => None,
        };
        let stores: Vec<(usize, Inst, u32)> = body
            .iter()
            .enumerate()
            .filter(|&(_, &i)| matches!(f.kind(i), InstKind::Store { .. }))
            .map(|(k, &i)| (k, i, region(i)))
            .collect();
        // A load may move a trip early when no store of the loop may write what
        // it reads by alias region, or, `by_address`, by address ([`memory`]).
        let load_may_move = |k: usize, i: Inst, by_address: bool| {
            let r = region(i);
            let touching: Vec<(Inst, bool)> = stores
                .iter()
                .filter(|&&(_, _, sr)| r == 0 || sr == 0 || sr == r)
                .map(|&(sk, s, _)| (s, sk < k))
                .collect();
            touching.is_empty()
                || (by_address
                    && memory::load_may_run_early(f, h, &back.args, offsets(), i, &touching))
        };
        let previous = |v: Value| param_index(v).map(|k| back.args[k]);
        let mut best: Option<(u32, Stages)> = None;
        // Splits with the loads that alias regions let move, then with those
        // their addresses let move too. Each must gain on the trip as it runs
        // now. For the first, its accesses of one alias region keep their order
        // (the estimate the pipelining gains were tuned against). The second
        // relies on the machine scheduler telling accesses apart by address,
        // which it does in the loop as it is too: the trip is estimated with
        // the accesses it can tell apart free to pass each other, so that a
        // loop whose memory pipe is full anyway is not pipelined for nothing.
        // The trip as it runs now, estimated when a split first needs it (most
        // loops have none to judge).
        let whole_length = |by_address: bool| {
            if by_address {
                let classes = memory::access_classes(f, offsets(), region, &body);
                issue_estimate::steady_state_length(f, &body, &previous, &|i| {
                    classes.get(&i).copied().unwrap_or(0)
                })
            } else {
                issue_estimate::steady_state_length(f, &body, &previous, &|_| 0)
            }
        };
        for by_address in [false, true] {
            let mut whole: Option<u32> = None;
            let early: FxHashSet<Inst> = body
                .iter()
                .enumerate()
                .filter(|&(k, &i)| {
                    early_kind(f.kind(i))
                        && (!matches!(f.kind(i), InstKind::Load { .. })
                            || load_may_move(k, i, by_address))
                })
                .map(|(_, &i)| i)
                .collect();
            let mut tried: FxHashSet<Vec<Inst>> = FxHashSet::default();
            for (early, early_param) in early_subsets(f, h, back, &body, early) {
                // The exit test must be early: it decides whether the next
                // early stage runs.
                if !f.def_inst(*cond).is_some_and(|d| early.contains(&d)) {
                    continue;
                }
                let ctx = Split {
                    f,
                    h,
                    term,
                    cond: *cond,
                    back,
                    body: &body,
                    early_param: &early_param,
                };
                // Two splits: every instruction that may run early, or only the
                // loads and what they and the exit test need (so that multiplies
                // and other long operations of the loaded values are not carried
                // across the back edge, where the next trip would wait for
                // them). The better by the estimate wins.
                let loads_only = ctx.loads_and_their_operands(&early);
                for candidate in [early, loads_only] {
                    let key: Vec<Inst> = body
                        .iter()
                        .copied()
                        .filter(|i| candidate.contains(i))
                        .collect();
                    if !tried.insert(key) {
                        continue;
                    }
                    let Some(stages) = ctx.stages(&candidate) else {
                        continue;
                    };
                    // In the kernel the carried values of two iterations may be
                    // live at once, beside what lives across the loop.
                    let mut pressure = live_across();
                    for &v in &stages.carried {
                        if !ctx.replaces_param(v, &stages.late) {
                            pressure[usize::from(f.value_type(v) == Type::F32)] += 2;
                        }
                    }
                    if pressure[0] > MAX_PRESSURE[0] || pressure[1] > MAX_PRESSURE[1] {
                        continue;
                    }
                    let cost = stages.kernel_estimate(f, &previous);
                    let whole = *whole.get_or_insert_with(|| whole_length(by_address));
                    if cost + MIN_GAIN <= whole && best.as_ref().is_none_or(|(c, _)| cost < *c) {
                        best = Some((cost, stages));
                    }
                }
            }
        }
        best.map(|(_, stages)| stages)
    }

    /// The estimated cycles of one trip of the kernel in its steady state: this
    /// iteration's late stage and the next one's early stage, whose loads do not
    /// wait for the late stage's stores (they touch other memory). The late stage
    /// reads what the previous trip's early stage left in flight; `previous` maps
    /// the loop header's parameters to their next values.
    fn kernel_estimate(&self, f: &Function, previous: &dyn Fn(Value) -> Option<Value>) -> u32 {
        let kernel: Vec<Inst> = self.late.iter().chain(&self.early).copied().collect();
        let late: FxHashSet<Inst> = self.late.iter().copied().collect();
        issue_estimate::steady_state_length(f, &kernel, previous, &|i| {
            u32::from(!late.contains(&i))
        })
    }
}

/// What choosing an early stage of loop `h` needs to know.
struct Split<'a> {
    f: &'a Function,
    h: Block,
    term: Inst,
    cond: Value,
    back: &'a BlockCall,
    /// The header's instructions but the terminator.
    body: &'a [Inst],
    /// Whether each header parameter is an early one (its next value is early).
    early_param: &'a [bool],
}

impl Split<'_> {
    fn param_index(&self, v: Value) -> Option<usize> {
        match self.f.value_def(v) {
            ValueDef::Param(b, k) if b == self.h => Some(k as usize),
            _ => None,
        }
    }

    fn in_body(&self, v: Value) -> bool {
        self.f
            .def_inst(v)
            .is_some_and(|i| self.f.layout.inst_block(i) == Some(self.h))
    }

    /// Whether carried value `v` is the next value of an early parameter that
    /// nothing but the early stage reads (an induction variable whose late uses
    /// are rematerialised): in the kernel it takes the parameter's place, so it
    /// costs no register beside it.
    fn replaces_param(&self, v: Value, late: &[Inst]) -> bool {
        let f = self.f;
        self.back.args.iter().enumerate().any(|(k, &n)| {
            n == v && self.early_param[k] && {
                let p = f.block_params(self.h)[k];
                f.users(p).iter().all(|&u| {
                    u != self.term && f.layout.inst_block(u) == Some(self.h) && !late.contains(&u)
                })
            }
        })
    }

    /// The part of the (closed) early set `early` that the loads, the exit test
    /// and the early parameters' next values need.
    fn loads_and_their_operands(&self, early: &FxHashSet<Inst>) -> FxHashSet<Inst> {
        let f = self.f;
        let mut keep: FxHashSet<Inst> = FxHashSet::default();
        let mut work: Vec<Inst> = self
            .body
            .iter()
            .copied()
            .filter(|i| early.contains(i) && matches!(f.kind(*i), InstKind::Load { .. }))
            .collect();
        let need = |v: Value, work: &mut Vec<Inst>| {
            if let Some(d) = f.def_inst(v).filter(|d| early.contains(d)) {
                work.push(d);
            }
        };
        need(self.cond, &mut work);
        for (k, &n) in self.back.args.iter().enumerate() {
            if self.early_param[k] {
                need(n, &mut work);
            }
        }
        while let Some(i) = work.pop() {
            if !keep.insert(i) {
                continue;
            }
            f.kind(i).for_each_arg(|a| {
                if let Some(d) = f.def_inst(a).filter(|d| early.contains(d)) {
                    work.push(d);
                }
            });
        }
        keep
    }

    /// The stages with early stage `early` (closed under operands, holding the
    /// exit test), unless the late stage would be empty or too many values would
    /// cross from one stage to the next.
    fn stages(&self, early: &FxHashSet<Inst>) -> Option<Stages> {
        let (f, h, term, body) = (self.f, self.h, self.term, self.body);
        let late: Vec<Inst> = body
            .iter()
            .copied()
            .filter(|i| !early.contains(i))
            .collect();
        if late.is_empty() {
            return None;
        }
        // Pointers at a constant offset from an induction variable whose next
        // value is early: recomputed from that next value where read late.
        let params = f.block_params(h);
        let mut remat: Vec<(Value, Value, i64)> = Vec::new();
        let nexts: FxHashSet<Value> = self.back.args.iter().copied().collect();
        let candidates = params
            .iter()
            .copied()
            .filter(|&p| self.param_index(p).is_some_and(|k| self.early_param[k]))
            .chain(
                body.iter()
                    .filter(|i| early.contains(i))
                    .filter_map(|&i| f.inst_result(i)),
            );
        for w in candidates {
            if f.value_type(w) != Type::Ptr || nexts.contains(&w) {
                continue;
            }
            let Some((p, o)) = offset_from(f, h, w) else {
                continue;
            };
            let k = self
                .param_index(p)
                .expect("offsets are from header parameters");
            let n = self.back.args[k];
            let step = match offset_from(f, h, n) {
                Some((q, d)) if q == p && self.in_body(n) => d,
                _ => continue,
            };
            if let Ok(delta) = i32::try_from(o - step) {
                remat.push((w, n, i64::from(delta)));
            }
        }
        let rematerialised = |v: Value| remat.iter().any(|&(w, _, _)| w == v);
        // The early values read outside the early stage.
        let mut carried: Vec<Value> = body
            .iter()
            .filter(|i| early.contains(i))
            .filter_map(|&i| f.inst_result(i))
            .filter(|&v| {
                f.users(v).iter().any(|&u| {
                    if u == term {
                        return nexts.contains(&v) || (v != self.cond && !rematerialised(v));
                    }
                    (f.layout.inst_block(u) != Some(h) || !early.contains(&u)) && !rematerialised(v)
                })
            })
            .collect();
        for &(w, n, _) in &remat {
            let used_late = f
                .users(w)
                .iter()
                .any(|&u| u == term || f.layout.inst_block(u) != Some(h) || !early.contains(&u));
            if used_late && !carried.contains(&n) {
                carried.push(n);
            }
        }
        if carried
            .iter()
            .filter(|&&v| !self.replaces_param(v, &late))
            .count()
            > MAX_CARRIED
        {
            if std::env::var("SWP_DEBUG").is_ok() {
                eprintln!("swp {h}: carried {}", carried.len());
            }
            return None;
        }
        let early = body.iter().copied().filter(|i| early.contains(i)).collect();
        Some(Stages {
            early,
            late,
            carried,
            remat,
        })
    }
}

/// Copies `insts` to the end of `block` (before its terminator when it has one),
/// reading operands through `map` and adding each result's copy to it.
fn copy_into(f: &mut Function, block: Block, insts: &[Inst], map: &mut FxHashMap<Value, Value>) {
    for &i in insts {
        let mut kind = f.kind(i).clone();
        kind.map_args(|a| {
            if let Some(&c) = map.get(a) {
                *a = c;
            }
        });
        let ty = f.inst_result(i).map_or(Type::Void, |r| f.value_type(r));
        let c = match f.terminator(block) {
            Some(t) => f.insert_inst_before(t, kind, ty),
            None => f.append_inst(block, kind, ty),
        };
        f.copy_src_loc(i, c);
        if let (Some(r), Some(cr)) = (f.inst_result(i), f.inst_result(c)) {
            map.insert(r, cr);
        }
    }
}

/// A block after `after` with one parameter per header parameter and per carried
/// value, mapping those to the new parameters.
fn staged_block(
    f: &mut Function,
    h: Block,
    after: Block,
    carried: &[Value],
) -> (Block, FxHashMap<Value, Value>) {
    let b = f.create_block();
    f.layout.insert_block_after(b, after);
    let mut map = FxHashMap::default();
    for p in f.block_params(h).to_vec() {
        let ty = f.value_type(p);
        map.insert(p, f.append_block_param(b, ty));
    }
    for &v in carried {
        let ty = f.value_type(v);
        map.insert(v, f.append_block_param(b, ty));
    }
    (b, map)
}

/// Recomputes the pointers of `remat` at the end of `block` from the next values
/// `map` gives, mapping each to its new definition (unused ones are left to DCE).
fn rematerialise(
    f: &mut Function,
    block: Block,
    remat: &[(Value, Value, i64)],
    map: &mut FxHashMap<Value, Value>,
) {
    for &(w, n, delta) in remat {
        // Only the pointers read late have their next value carried.
        let Some(&base) = map.get(&n) else { continue };
        let index = f.iconst(delta as i32);
        let i = f.append_inst(
            block,
            InstKind::Gep {
                base,
                index,
                stride: 1,
            },
            Type::Ptr,
        );
        map.insert(w, f.inst_result(i).expect("gep has a result"));
    }
}

fn mapped(map: &FxHashMap<Value, Value>, v: Value) -> Value {
    map.get(&v).copied().unwrap_or(v)
}

/// Rewrites loop `h` with preheader `pre` into the pipelined form (see the module
/// documentation); returns the block of the last iteration, which takes over
/// `h`'s exit edge.
fn pipeline(f: &mut Function, h: Block, pre: Block, s: &Stages) -> Block {
    let term = f.terminator(h).expect("loop header has a terminator");
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = f.kind(term).clone()
    else {
        unreachable!("a self loop ends in a branch")
    };
    let continue_on_true = then_dest.block == h;
    let (back, exit) = if continue_on_true {
        (then_dest, else_dest)
    } else {
        (else_dest, then_dest)
    };
    let (kernel, mut kmap) = staged_block(f, h, h, &s.carried);
    let (last, mut lmap) = staged_block(f, h, kernel, &s.carried);
    let branch = |f: &mut Function, at: Block, c: Value, args: Vec<Value>| {
        let (t, e) = (
            BlockCall::new(kernel, args.clone()),
            BlockCall::new(last, args),
        );
        let (then_dest, else_dest) = if continue_on_true { (t, e) } else { (e, t) };
        let kind = InstKind::Br {
            cond: c,
            then_dest: Box::new(then_dest),
            else_dest: Box::new(else_dest),
        };
        match f.terminator(at) {
            Some(old) => {
                f.replace_kind(old, kind);
            }
            None => {
                f.append_inst(at, kind, Type::Void);
            }
        }
    };
    // Preheader: the first iteration's early stage.
    let jump = f.terminator(pre).expect("preheader jumps");
    let InstKind::Jump { dest } = f.kind(jump).clone() else {
        unreachable!("the preheader jumps to the loop")
    };
    let mut pmap: FxHashMap<Value, Value> = f
        .block_params(h)
        .iter()
        .copied()
        .zip(dest.args.iter().copied())
        .collect();
    copy_into(f, pre, &s.early, &mut pmap);
    let mut args = dest.args.to_vec();
    args.extend(s.carried.iter().map(|&v| mapped(&pmap, v)));
    branch(f, pre, mapped(&pmap, cond), args);
    // Kernel: this iteration's late stage, then the next one's early stage.
    rematerialise(f, kernel, &s.remat, &mut kmap);
    copy_into(f, kernel, &s.late, &mut kmap);
    let next: Vec<Value> = back.args.iter().map(|&n| mapped(&kmap, n)).collect();
    let mut nmap: FxHashMap<Value, Value> = f
        .block_params(h)
        .iter()
        .copied()
        .zip(next.iter().copied())
        .collect();
    copy_into(f, kernel, &s.early, &mut nmap);
    let mut args = next;
    args.extend(s.carried.iter().map(|&v| mapped(&nmap, v)));
    branch(f, kernel, mapped(&nmap, cond), args);
    // Last iteration: its late stage, then the exit.
    rematerialise(f, last, &s.remat, &mut lmap);
    copy_into(f, last, &s.late, &mut lmap);
    let exit_args: Vec<Value> = exit.args.iter().map(|&v| mapped(&lmap, v)).collect();
    f.append_inst(
        last,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(exit.block, exit_args)),
        },
        Type::Void,
    );
    // Code after the loop reads the last iteration's values.
    for v in f.block_values(h) {
        let Some(&nv) = lmap.get(&v) else { continue };
        for u in f.users_outside(v, h) {
            f.map_inst_args(u, |a| if a == v { nv } else { a });
        }
    }
    let insts: Vec<Inst> = f.layout.block_insts(h).collect();
    for i in insts.into_iter().rev() {
        f.remove_inst(i);
    }
    f.layout.remove_block(h);
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testutil::exec;

    fn pipelined(src: &str) -> (Module, Module, bool) {
        let before = ir::parse_module(src).unwrap();
        let mut after = before.clone();
        let changed = SoftwarePipelining.run(&mut after);
        ir::verify_module(&after).unwrap_or_else(|e| panic!("{e}\n{}", ir::print_module(&after)));
        (before, after, changed)
    }

    /// `y[i] = x[i] * k + y[i-1] * c` over two arrays: the load and multiply of
    /// `x` are the early stage, the recurrence and store the late one.
    const RECURRENCE: &str = r#"
global @x: [f32; 64] = zeroinit
global @y: [f32; 64] = zeroinit

func @main() -> i32 {
bb0:
  jump bb1(0, 0.0)
bb1(%0: i32, %1: f32):
  %2 = gep @x, %0, 4
  %3 = load f32, %2
  %4 = fmul %3, 3.0
  %5 = fmul %1, 0.5
  %6 = fadd %4, %5
  %7 = gep @y, %0, 4
  store %6, %7
  %8 = add %0, 1
  %9 = slt %8, 64
  br %9, bb1(%8, %6), bb2
bb2:
  %10 = fptosi %6
  ret %10
}
"#;

    /// How often `Stages::find` asks for pointer offsets on the self loop `bb1`
    /// of `src`, and whether it finds a split.
    fn offsets_asked(src: &str) -> (usize, bool) {
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().next().unwrap();
        let h = f.layout.blocks().nth(1).unwrap();
        let asked = std::cell::Cell::new(0);
        let cell: OnceCell<PointerOffsets> = OnceCell::new();
        let offsets = || {
            asked.set(asked.get() + 1);
            cell.get_or_init(|| PointerOffsets::compute(f))
        };
        let found = Stages::find(f, h, &|_| 0, &offsets, &mut || [0, 0]).is_some();
        (asked.get(), found)
    }

    /// The trip as it runs is estimated only when a split is judged against it:
    /// a loop whose exit test cannot run early (it needs a division) has no
    /// split, and, without loads, nothing else asks for the offsets that the
    /// estimate needs (the pipelining tests above check that loops with a split
    /// are still judged and split).
    #[test]
    fn a_loop_without_a_split_to_judge_is_not_estimated() {
        let late_exit = r#"
func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = add %1, %0
  %3 = add %0, 1
  %4 = sdiv %3, 7
  %5 = slt %4, 64
  br %5, bb1(%3, %2), bb2
bb2:
  ret %2
}
"#;
        assert_eq!(offsets_asked(late_exit), (0, false));
    }

    #[test]
    fn a_recurrence_overlaps_the_next_iterations_loads() {
        let (before, after, changed) = pipelined(RECURRENCE);
        assert!(changed);
        let text = ir::print_module(&after);
        // The kernel is one block that loops to itself, holding the late stage
        // (the store) before the next iteration's load.
        let f = &after.funcs.values().next().unwrap();
        let cfg = ControlFlowGraph::compute(f);
        let kernel = f
            .layout
            .blocks()
            .find(|&b| cfg.preds(b).contains(&b))
            .unwrap_or_else(|| panic!("no self loop:\n{text}"));
        let kinds: Vec<&InstKind> = f.layout.block_insts(kernel).map(|i| f.kind(i)).collect();
        let store = kinds
            .iter()
            .position(|k| matches!(k, InstKind::Store { .. }));
        let load = kinds
            .iter()
            .position(|k| matches!(k, InstKind::Load { .. }));
        assert!(store.unwrap() < load.unwrap(), "{text}");
        // One load before the loop, one in the kernel.
        let loads = text.matches("load f32").count();
        assert_eq!(loads, 2, "{text}");
        assert_eq!(exec(&before, ""), exec(&after, ""));
    }

    #[test]
    fn a_loop_entered_from_a_pipelined_loop_is_pipelined_too() {
        // The second loop's only way in is the first loop's exit edge, which the
        // first loop's last-iteration block takes over.
        let src = r#"
global @x: [f32; 64] = zeroinit
global @y: [f32; 64] = zeroinit

func @main() -> i32 {
bb0:
  store 6.0, @x
  jump bb1(0, 1.0)
bb1(%0: i32, %1: f32):
  %2 = gep @x, %0, 4
  %3 = load f32, %2
  %4 = fdiv %3, 3.0
  %5 = fmul %1, 0.5
  %6 = fadd %4, %5
  %7 = gep @y, %0, 4
  store %6, %7
  %8 = add %0, 1
  %9 = slt %8, 64
  br %9, bb1(%8, %6), bb2(0, %6)
bb2(%10: i32, %11: f32):
  %12 = gep @y, %10, 4
  %13 = load f32, %12
  %14 = fdiv %13, 7.0
  %15 = fmul %11, 0.25
  %16 = fadd %14, %15
  %17 = gep @x, %10, 4
  store %16, %17
  %18 = add %10, 1
  %19 = slt %18, 64
  br %19, bb2(%18, %16), bb3
bb3:
  %20 = fmul %16, 1000.0
  %21 = fptosi %20
  ret %21
}
"#;
        let (before, after, changed) = pipelined(src);
        assert!(changed);
        let f = after.funcs.values().next().unwrap();
        assert_eq!(f.layout.blocks().count(), 6, "{}", ir::print_module(&after));
        assert_eq!(exec(&before, ""), exec(&after, ""));
    }

    /// A one-block loop that two blocks enter (a guard skipping a first loop, and
    /// that loop's exit) gets a preheader and is pipelined (vector_mul's second
    /// loop once its bound was a constant).
    #[test]
    fn a_loop_entered_from_two_blocks_gets_a_preheader_and_is_pipelined() {
        let src = r#"
global @x: [f32; 64] = zeroinit
global @y: [f32; 64] = zeroinit

declare @getint() -> i32

func @main() -> i32 {
bb0:
  store 6.0, @x
  %20 = call @getint()
  br %20, bb1(0), bb2(0, 1.0)
bb1(%21: i32):
  %22 = gep @x, %21, 4
  store 2.0, %22
  %23 = add %21, 1
  %24 = slt %23, 8
  br %24, bb1(%23), bb2(0, 1.0)
bb2(%0: i32, %1: f32):
  %2 = gep @x, %0, 4
  %3 = load f32, %2
  %4 = fdiv %3, 3.0
  %5 = fmul %1, 0.5
  %6 = fadd %4, %5
  %7 = gep @y, %0, 4
  store %6, %7
  %8 = add %0, 1
  %9 = slt %8, 64
  br %9, bb2(%8, %6), bb3
bb3:
  %10 = fmul %6, 1000.0
  %11 = fptosi %10
  ret %11
}
"#;
        let (before, after, changed) = pipelined(src);
        assert!(changed);
        let text = ir::print_module(&after);
        // The division of the next iteration is computed before the loop too.
        let f = after.funcs.values().find(|f| f.name == "main").unwrap();
        let divisions = f
            .layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b))
            .filter(|&i| {
                matches!(
                    f.kind(i),
                    InstKind::Binary {
                        op: BinOp::FDiv,
                        ..
                    }
                )
            })
            .count();
        assert!(divisions >= 2, "{text}");
        for input in ["0", "1"] {
            assert_eq!(exec(&before, input), exec(&after, input), "{text}");
        }
    }

    /// `x[i] = i + 0.5; y[i] = i + 1.5`: the conversion and additions take eight
    /// cycles before the stores can go. Pipelined, each trip stores the previous
    /// iteration's sums while this iteration's are computed: the critical path
    /// of a stage is no shorter, but a trip in the steady state is (11 cycles to
    /// 6), since the next trip's stores find the sums ready.
    #[test]
    fn values_only_the_next_trip_stores_are_computed_a_trip_ahead() {
        let src = r#"
global @x: [f32; 64] = zeroinit
global @y: [f32; 64] = zeroinit

func @main() -> i32 {
bb0:
  jump bb1(0)
bb1(%0: i32):
  %1 = sitofp %0
  %2 = fadd %1, 0.5
  %3 = gep @x, %0, 4
  store %2, %3
  %4 = fadd %1, 1.5
  %5 = gep @y, %0, 4
  store %4, %5
  %6 = add %0, 1
  %7 = slt %6, 64
  br %7, bb1(%6), bb2
bb2:
  %8 = gep @x, 63, 4
  %9 = load f32, %8
  %10 = gep @y, 7, 4
  %11 = load f32, %10
  %12 = fadd %9, %11
  %13 = fptosi %12
  ret %13
}
"#;
        let (before, after, changed) = pipelined(src);
        assert!(changed, "{}", ir::print_module(&after));
        assert_eq!(exec(&before, ""), exec(&after, ""));
    }

    /// `sum += x[i] / s` where `s` grows by `d`, then `d + 2`, and `d` by 4 (a
    /// second-order induction variable unrolled twice, as strength reduction
    /// leaves a quadratic): `s` is no recurrence, so the division is early and
    /// overlaps the previous trip's addition to `sum`.
    #[test]
    fn an_unrolled_second_order_induction_variable_is_early() {
        let src = r#"
global @x: [f32; 64] = zeroinit

func @main() -> i32 {
bb0:
  store 6.0, @x
  %20 = gep @x, 5, 4
  store 7.5, %20
  jump bb1(0, 1, 3, 0.0)
bb1(%0: i32, %1: i32, %2: i32, %3: f32):
  %4 = add %1, %2
  %5 = add %2, 2
  %6 = add %4, %5
  %7 = sitofp %6
  %8 = gep @x, %0, 4
  %9 = load f32, %8
  %10 = fdiv %9, %7
  %11 = fadd %3, %10
  %12 = add %5, 2
  %13 = add %0, 1
  %14 = slt %13, 64
  br %14, bb1(%13, %6, %12, %11), bb2
bb2:
  %15 = fmul %11, 100000.0
  %16 = fptosi %15
  ret %16
}
"#;
        let (before, after, changed) = pipelined(src);
        assert!(changed, "{}", ir::print_module(&after));
        // The stored elements make the sum nonzero: not a comparison of zeros.
        assert_ne!(exec(&before, "").1, 0);
        assert_eq!(exec(&before, ""), exec(&after, ""));
    }

    /// Which header parameters are recurrences: an unrolled second-order
    /// induction variable is not (its addends need neither itself nor memory),
    /// an integer sum of loaded products is (each addition waits for loads).
    #[test]
    fn a_sum_of_loaded_values_is_a_recurrence_an_induction_variable_is_not() {
        let src = r#"
global @x: [i32; 64] = zeroinit

func @main() -> i32 {
bb0:
  jump bb1(0, 1, 3, 0)
bb1(%0: i32, %1: i32, %2: i32, %3: i32):
  %4 = add %1, %2
  %5 = add %2, 2
  %6 = add %4, %5
  %7 = gep @x, %0, 4
  %8 = load i32, %7
  %9 = mul %8, %8
  %10 = add %3, %9
  %11 = add %5, 2
  %12 = add %0, 1
  %13 = slt %12, 64
  br %13, bb1(%12, %6, %11, %10), bb2
bb2:
  ret %10
}
"#;
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().next().unwrap();
        let h = f.layout.blocks().nth(1).unwrap();
        let InstKind::Br { then_dest, .. } = f.kind(f.terminator(h).unwrap()) else {
            panic!("bb1 ends in a branch")
        };
        let recurrences: Vec<bool> = (0..4)
            .map(|k| recurrent(f, h, &then_dest.args, k))
            .collect();
        assert_eq!(recurrences, [false, false, false, true]);
    }

    /// `y[k] = x[k] * 3.0 + y[k-1] * 0.5` where `x` and `y` are two rows of one
    /// array, walked by one pointer (`STEP` is how it is indexed: a pointer
    /// parameter, or an integer index into the array).
    fn rows_of_one_array(pointer: bool) -> String {
        let (param, load_at, store_at, next) = if pointer {
            (
                "%0: ptr",
                "%2 = gep %0, 0, 4",
                "%7 = gep %0, 128, 4",
                "%8 = gep %0, 1, 4",
            )
        } else {
            (
                "%0: i32",
                "%2 = gep @x, %0, 4",
                "%7 = gep %2, 128, 4",
                "%8 = add %0, 1",
            )
        };
        let start = if pointer { "@x" } else { "0" };
        format!(
            r#"
global @x: [f32; 192] = zeroinit

func @main() -> i32 {{
bb0:
  store 2.0, @x
  %20 = gep @x, 5, 4
  store 7.0, %20
  jump bb1({start}, 1.0, 0)
bb1({param}, %1: f32, %9: i32):
  {load_at}
  %3 = load f32, %2
  %4 = fdiv %3, 3.0
  %5 = fmul %1, 0.5
  %6 = fadd %4, %5
  {store_at}
  store %6, %7
  {next}
  %10 = add %9, 1
  %11 = slt %10, 64
  br %11, bb1(%8, %6, %10), bb2
bb2:
  %12 = gep @x, 133, 4
  %13 = load f32, %12
  %14 = fmul %13, 1000.0
  %15 = fptosi %14
  ret %15
}}
"#
        )
    }

    #[test]
    fn a_load_of_other_bytes_than_the_loops_stores_runs_early() {
        // The load and the store share an alias region (one array), but their
        // addresses are one base 512 bytes apart, and the base moves 4 bytes a
        // trip: the next trip's load touches neither this trip's store nor its
        // own, so it joins the early stage.
        for pointer in [true, false] {
            let src = rows_of_one_array(pointer);
            let (before, after, changed) = pipelined(&src);
            let text = ir::print_module(&after);
            assert!(changed, "{text}");
            // One load before the loop, one in the kernel, and the result's.
            assert_eq!(text.matches("load f32").count(), 3, "{text}");
            assert_eq!(exec(&before, ""), exec(&after, ""));
        }
    }

    #[test]
    fn a_load_of_bytes_stored_earlier_in_the_trip_stays_late() {
        // `x[k] = x[k+1] / 3.0 + c * 0.5; c = x[k] * 2.0`: the load of `x[k]` reads
        // back what the store before it in the trip wrote, so it must stay after
        // it (the load of `x[k+1]`, which no store of the loop touches first,
        // may run early).
        let src = r#"
global @x: [f32; 66] = zeroinit

func @main() -> i32 {
bb0:
  store 2.0, @x
  %20 = gep @x, 5, 4
  store 7.0, %20
  jump bb1(@x, 1.0, 0)
bb1(%0: ptr, %1: f32, %9: i32):
  %2 = gep %0, 1, 4
  %3 = load f32, %2
  %4 = fdiv %3, 3.0
  %5 = fmul %1, 0.5
  %6 = fadd %4, %5
  store %6, %0
  %7 = load f32, %0
  %16 = fdiv %7, 3.0
  %17 = fmul %16, 2.0
  %8 = gep %0, 1, 4
  %10 = add %9, 1
  %11 = slt %10, 64
  br %11, bb1(%8, %17, %10), bb2
bb2:
  %12 = gep @x, 5, 4
  %13 = load f32, %12
  %14 = fmul %13, 1000.0
  %15 = fptosi %14
  ret %15
}
"#;
        let (before, after, changed) = pipelined(src);
        // The loop is pipelined (the division of x[k+1] is early), and gives
        // what it gave: had the load of x[k] moved too, it would read x[k]
        // before this trip's store and the chain would differ.
        assert!(changed, "{}", ir::print_module(&after));
        assert_eq!(exec(&before, ""), exec(&after, ""));
    }

    #[test]
    fn a_loop_that_fills_the_memory_pipe_anyway_is_left_alone() {
        // `c[k..k+4] += b[k..k+4] * a`, unrolled, with `b` and `c` rows of one
        // array: twelve accesses a trip keep the memory pipe busy however the
        // trip is ordered. Loads of `c` may run early by their addresses, but the
        // machine scheduler can already put them above the stores before them,
        // so against the trip as it can run, pipelining gains nothing.
        let body: String = (0..4)
            .map(|j| {
                format!(
                    "  %c{j}p = gep %0, {j}, 4\n  %c{j} = load i32, %c{j}p\n  \
                     %b{j}p = gep %0, {}, 4\n  %b{j} = load i32, %b{j}p\n  \
                     %m{j} = mul %b{j}, %2\n  %s{j} = add %c{j}, %m{j}\n  store %s{j}, %c{j}p\n",
                    256 + j
                )
            })
            .collect();
        let src = format!(
            r#"
global @x: [i32; 512] = zeroinit

func @main() -> i32 {{
bb0:
  %2 = call @getint()
  jump bb1(@x, 0)
bb1(%0: ptr, %1: i32):
{body}  %n = gep %0, 4, 4
  %i = add %1, 4
  %t = slt %i, 128
  br %t, bb1(%n, %i), bb2
bb2:
  %r = load i32, @x
  ret %r
}}

declare @getint() -> i32
"#
        );
        let (_, after, changed) = pipelined(&src);
        assert!(!changed, "{}", ir::print_module(&after));
    }

    #[test]
    fn induction_variables_cost_one_register_each() {
        // Nine row pointers walk in lockstep; the early stage loads and sums
        // the rows, the late stage divides. Ten values cross the stages (the
        // sum and nine next pointers), but a next pointer takes its parameter's
        // place in the kernel: only the sum counts against MAX_CARRIED.
        let rows = 0..9;
        let each = |f: &dyn Fn(usize) -> String| rows.clone().map(f).collect::<String>();
        let list = |f: &dyn Fn(usize) -> String| rows.clone().map(f).collect::<Vec<_>>().join(", ");
        let src = format!(
            r#"
global @x: [f32; 640] = zeroinit

func @main() -> i32 {{
bb0:
{starts}  jump bb1({first}, 1.0, 0)
bb1({params}, %a: f32, %i: i32):
{loads}  %s0 = fadd %l0, 0.0
{sums}  %t = fadd %a, %s8
  %d = fdiv %t, 3.0
  store %d, %p0
{nexts}  %j = add %i, 1
  %c = slt %j, 60
  br %c, bb1({next}, %d, %j), bb2
bb2:
  %r = fptosi %d
  ret %r
}}
"#,
            starts = each(&|r| format!("  %q{r} = gep @x, {}, 4\n", 64 * r)),
            first = list(&|r| format!("%q{r}")),
            params = list(&|r| format!("%p{r}: ptr")),
            loads = each(&|r| format!("  %l{r} = load f32, %p{r}\n")),
            sums = each(&|r| if r == 0 {
                String::new()
            } else {
                format!("  %s{r} = fadd %s{}, %l{r}\n", r - 1)
            }),
            nexts = each(&|r| format!("  %n{r} = gep %p{r}, 1, 4\n")),
            next = list(&|r| format!("%n{r}")),
        );
        let (before, after, changed) = pipelined(&src);
        assert!(changed, "{}", ir::print_module(&after));
        assert_eq!(exec(&before, ""), exec(&after, ""));
    }

    #[test]
    fn a_load_that_a_store_of_the_loop_may_write_stays_late() {
        // `a[i+1] = a[i] * 3.0`: the load reads what the previous iteration
        // stored, so nothing long-latency is early and the loop is left alone.
        let src = r#"
global @a: [f32; 65] = zeroinit

func @main() -> i32 {
bb0:
  store 1.0, @a
  jump bb1(0)
bb1(%0: i32):
  %1 = gep @a, %0, 4
  %2 = load f32, %1
  %3 = fmul %2, 3.0
  %4 = add %0, 1
  %5 = gep @a, %4, 4
  store %3, %5
  %6 = slt %4, 64
  br %6, bb1(%4), bb2
bb2:
  %7 = gep @a, 64, 4
  %8 = load f32, %7
  %9 = fptosi %8
  ret %9
}
"#;
        let (_, _, changed) = pipelined(src);
        assert!(!changed);
    }

    #[test]
    fn short_latencies_are_left_alone() {
        // `b[i] = a[i] + 1`: the store waits three cycles for the load and add.
        let src = r#"
global @a: [i32; 64] = zeroinit
global @b: [i32; 64] = zeroinit

func @main() -> i32 {
bb0:
  jump bb1(0)
bb1(%0: i32):
  %1 = gep @a, %0, 4
  %2 = load i32, %1
  %3 = add %2, 1
  %4 = gep @b, %0, 4
  store %3, %4
  %5 = add %0, 1
  %6 = slt %5, 64
  br %6, bb1(%5), bb2
bb2:
  ret 0
}
"#;
        let (_, _, changed) = pipelined(src);
        assert!(!changed);
    }

    #[test]
    fn a_single_iteration_runs_only_the_last_block() {
        // The loop runs once when n = 1 (read from the input): the first early
        // stage is in the preheader and the late stage in the exit block.
        let src = r#"
global @x: [f32; 64] = zeroinit
global @y: [f32; 64] = zeroinit

func @main() -> i32 {
bb0:
  %0 = call @getint()
  store 2.0, @x
  jump bb1(0, 0.0)
bb1(%1: i32, %2: f32):
  %3 = gep @x, %1, 4
  %4 = load f32, %3
  %5 = fdiv %4, 3.0
  %6 = fadd %2, %5
  %7 = gep @y, %1, 4
  store %6, %7
  %8 = add %1, 1
  %9 = slt %8, %0
  br %9, bb1(%8, %6), bb2
bb2:
  %10 = fmul %6, 300.0
  %11 = fptosi %10
  ret %11
}

declare @getint() -> i32
"#;
        let (before, after, changed) = pipelined(src);
        assert!(changed);
        for input in ["1", "2", "5", "64"] {
            assert_eq!(exec(&before, input), exec(&after, input), "input {input}");
        }
    }

    /// `b[i] = a[i] * 3 * 5` (a second multiply so that overlapping pays), in a
    /// function whose `live` integer parameters are all read after the loop (so
    /// they live across it): carrying the loaded value and leaving both
    /// multiplies late lets the kernel start on them at once, where carrying the
    /// products would make the next trip wait for the multiplies of the last one.
    fn products(live: usize) -> String {
        with_live_params(
            live,
            "global @a: [i32; 64] = zeroinit\nglobal @b: [i32; 64] = zeroinit\n",
            r#"  store 7, @a
  jump bb1(0)
bb1(%0: i32):
  %1 = gep @a, %0, 4
  %2 = load i32, %1
  %3 = mul %2, 3
  %4 = mul %3, 5
  %5 = gep @b, %0, 4
  store %4, %5
  %6 = add %0, 1
  %7 = slt %6, 64
  br %7, bb1(%6), bb2
bb2:
  %s0 = load i32, @b
"#,
        )
    }

    /// `func @main` with `live` integer parameters, all added to `%s0` after
    /// the body (so that they live across it): `globals`, then `body` (the
    /// blocks from the entry's first instruction on, the last one computing
    /// `%s0`), then the sum and its return.
    fn with_live_params(live: usize, globals: &str, body: &str) -> String {
        let params: Vec<String> = (0..live).map(|k| format!("%p{k}: i32")).collect();
        let sum: String = (0..live)
            .map(|k| format!("  %s{} = add %s{k}, %p{k}\n", k + 1))
            .collect();
        format!(
            "{globals}\nfunc @main({}) -> i32 {{\nbb0({}):\n{body}{sum}  ret %s{live}\n}}\n",
            vec!["i32"; live].join(", "),
            params.join(", ")
        )
    }

    #[test]
    fn multiplies_of_loaded_values_stay_late() {
        let (before, after, changed) = pipelined(&products(0));
        assert!(changed);
        let f = after.funcs.values().next().unwrap();
        let entry = f.entry_block();
        let kinds: Vec<&InstKind> = f.layout.block_insts(entry).map(|i| f.kind(i)).collect();
        assert!(
            kinds.iter().any(|k| matches!(k, InstKind::Load { .. })),
            "{}",
            ir::print_module(&after)
        );
        assert!(
            !kinds
                .iter()
                .any(|k| matches!(k, InstKind::Binary { op: BinOp::Mul, .. })),
            "{}",
            ir::print_module(&after)
        );
        assert_eq!(exec(&before, ""), exec(&after, ""));
    }

    /// The same loop where 26 integer values live across it: overlapping two
    /// iterations would need more registers than the machine has, and the loop
    /// is left alone.
    #[test]
    fn a_loop_under_register_pressure_is_left_alone() {
        let (_, _, changed) = pipelined(&products(26));
        assert!(!changed);
        let (_, _, changed) = pipelined(&products(8));
        assert!(changed);
    }

    /// A 2x2 unroll-and-jammed row-times-matrix loop (the shape of a matrix
    /// product after unroll-and-jam): each trip loads two elements of a row of
    /// `a` and a 2x2 block of `b`, and adds four products to two sums, with
    /// `live` integer parameters live across it.
    fn blocked_products(live: usize) -> String {
        with_live_params(
            live,
            "global @a: [i32; 16] = zeroinit\nglobal @b: [i32; 256] = zeroinit\n",
            r#"  jump bb1(0)
bb1(%i: i32):
  %bi = gep @b, %i, 4
  %v = mul %i, 7
  %w = and %v, 31
  store %w, %bi
  %ai = and %i, 15
  %aj = gep @a, %ai, 4
  %u = add %w, %ai
  store %u, %aj
  %ni = add %i, 1
  %ci = slt %ni, 256
  br %ci, bb1(%ni), bb2(0, 0, @a, @b)
bb2(%x: i32, %y: i32, %r: ptr, %q: ptr):
  %r0 = load i32, %r
  %b00 = load i32, %q
  %m00 = mul %r0, %b00
  %x1 = add %x, %m00
  %q01 = gep %q, 1, 4
  %b01 = load i32, %q01
  %m01 = mul %r0, %b01
  %y1 = add %y, %m01
  %r1p = gep %r, 1, 4
  %q10 = gep %q, 16, 4
  %r1 = load i32, %r1p
  %b10 = load i32, %q10
  %m10 = mul %r1, %b10
  %x2 = add %x1, %m10
  %q11 = gep %q, 17, 4
  %b11 = load i32, %q11
  %m11 = mul %r1, %b11
  %y2 = add %y1, %m11
  %nr = gep %r, 2, 4
  %nq = gep %q, 32, 4
  %end = gep @b, 256, 4
  %c = slt %nq, %end
  br %c, bb2(%x2, %y2, %nr, %nq), bb3
bb3:
  %t = mul %x2, 3
  %s0 = add %t, %y2
"#,
        )
    }

    /// With seventeen integers live across the loop (thirteen parameters, two
    /// sums and two pointers), every load a trip early would take more
    /// registers than [`MAX_PRESSURE`] (six loaded values carried, two of each
    /// live at once); the loop is pipelined with fewer of its loads early, and
    /// computes the same.
    #[test]
    fn a_loop_too_wide_to_run_every_load_early_runs_some() {
        let count_loads = |f: &Function, b: Block| {
            f.layout
                .block_insts(b)
                .filter(|&i| matches!(f.kind(i), InstKind::Load { .. }))
                .count()
        };
        let (before, after, changed) = pipelined(&blocked_products(0));
        assert!(changed);
        assert_eq!(exec(&before, ""), exec(&after, ""));
        let (before, after, changed) = pipelined(&blocked_products(13));
        assert!(changed, "{}", ir::print_module(&after));
        assert_eq!(exec(&before, ""), exec(&after, ""));
        // The kernel is the block that branches to itself; it holds the early
        // loads of the next trip and the late ones of this trip.
        let f = after.funcs.values().next().unwrap();
        let kernel = f
            .layout
            .blocks()
            .filter(|&b| {
                f.terminator(b)
                    .is_some_and(|t| f.kind(t).targets().iter().any(|c| c.block == b))
            })
            .last()
            .unwrap();
        let pre = f.layout.prev_block(kernel).unwrap();
        let early = count_loads(f, pre);
        assert!(
            (1..6).contains(&early),
            "{early} early loads\n{}",
            ir::print_module(&after)
        );
        assert_eq!(count_loads(f, kernel), 6);
    }

    /// Random unrolled loops, each trip loading one to six values from two
    /// arrays at small offsets, combining them with the sums it carries and
    /// storing one value to a third array, with up to eighteen integers live
    /// across the loop (so that the greatest early stage often does not fit and
    /// a smaller one is chosen): pipelined or not, each computes the same.
    #[test]
    fn random_unrolled_loops_compute_the_same() {
        use rand::{Rng, SeedableRng};
        let mut pipelined_count = 0;
        for seed in 0..300u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let sums = rng.random_range(1..=3usize);
            let mut body = String::new();
            let mut values: Vec<String> = (0..sums).map(|k| format!("%x{k}")).collect();
            for k in 0..rng.random_range(1..=6usize) {
                let (base, at) = if rng.random_bool(0.5) {
                    ("%r", rng.random_range(0..4))
                } else {
                    ("%q", rng.random_range(0..9))
                };
                body += &format!("  %g{k} = gep {base}, {at}, 4\n  %l{k} = load i32, %g{k}\n");
                values.push(format!("%l{k}"));
            }
            // Half the loops are products of loaded values added to the
            // sums, as in a matrix product; the others mix operations.
            let products = rng.random_bool(0.5);
            for k in 0..rng.random_range(2..=8usize) {
                let op = if products {
                    "mul"
                } else {
                    ["add", "sub", "mul", "xor"][rng.random_range(0..4)]
                };
                let a = values[rng.random_range(0..values.len())].clone();
                let b = if rng.random_bool(0.2) {
                    rng.random_range(-9..10).to_string()
                } else {
                    values[rng.random_range(0..values.len())].clone()
                };
                body += &format!("  %o{k} = {op} {a}, {b}\n");
                values.push(format!("%o{k}"));
            }
            for k in 0..sums {
                let v = values[rng.random_range(sums..values.len())].clone();
                body += &format!("  %y{k} = add %x{k}, {v}\n");
            }
            body += &format!("  store {}, %s\n", values.last().unwrap());
            let params: Vec<String> = (0..sums).map(|k| format!("%x{k}: i32")).collect();
            let next: Vec<String> = (0..sums).map(|k| format!("%y{k}")).collect();
            let zeros = vec!["0"; sums].join(", ");
            let total: String = (1..sums)
                .map(|k| format!("  %t{k} = add %t{}, %y{k}\n", k - 1))
                .collect();
            let src = with_live_params(
                rng.random_range(0..=18),
                "global @a: [i32; 80] = zeroinit\nglobal @b: [i32; 512] = zeroinit\n\
                 global @c: [i32; 64] = zeroinit\n",
                &format!(
                    r#"  jump bb1(0)
bb1(%i: i32):
  %bi = gep @b, %i, 4
  %v = mul %i, 2654435
  store %v, %bi
  %ai = and %i, 63
  %aj = gep @a, %ai, 4
  %u = xor %v, %ai
  store %u, %aj
  %ni = add %i, 1
  %ci = slt %ni, 512
  br %ci, bb1(%ni), bb2({zeros}, @a, @b, @c)
bb2({params}, %r: ptr, %q: ptr, %s: ptr):
{body}  %nr = gep %r, 2, 4
  %nq = gep %q, 16, 4
  %ns = gep %s, 1, 4
  %end = gep @b, 496, 4
  %c = slt %nq, %end
  br %c, bb2({next}, %nr, %nq, %ns), bb3
bb3:
  %t0 = add %y0, 0
{total}  %cz = gep @c, 30, 4
  %c30 = load i32, %cz
  %s0 = add %t{last}, %c30
"#,
                    params = params.join(", "),
                    next = next.join(", "),
                    last = sums - 1,
                ),
            );
            let (before, after, changed) = pipelined(&src);
            pipelined_count += usize::from(changed);
            assert_eq!(exec(&before, ""), exec(&after, ""), "seed {seed}\n{src}");
        }
        assert!(pipelined_count >= 60, "{pipelined_count} of 300 pipelined");
    }
}
