//! Strength reduction of array addressing in loops: `gep base, i, stride` with `i`
//! an induction variable becomes a pointer that advances by `step * stride` each
//! iteration, replacing a multiply (or shift) and an add per access by one add per
//! iteration shared by every access to the same row.
//!
//! The classic induction-variable strength reduction (Cocke and Kennedy, "An
//! Algorithm for Reduction of Operator Strength", CACM 1977; Aho, Lam, Sethi,
//! Ullman, "Compilers", 9.7.4), restricted to the address arithmetic of `gep`, on
//! rotated loops in SSA form:
//!
//! - The induction variable `i` is the loop's counter
//!   ([`crate::analysis::induction`]): it steps by a constant (any, up or down)
//!   and the latch's test bounds it, so it never wraps around. Every value `i`
//!   takes is then reached by exact 64-bit arithmetic, and the pointer
//!   `base + sext(i) * stride` can be updated incrementally.
//! - For each loop-invariant `base` and `stride` used with `i`, a new header
//!   parameter `p` starts at `gep base, init, stride` (in the preheader) and advances
//!   by `gep p, step, stride` on the latch. `gep base, i, stride` becomes `p`, and
//!   `gep base, i + c, stride` becomes `gep p, c, stride` (which the back end folds
//!   into the load or store offset) when the address is only used to access memory
//!   (an in-bounds access means `i + c` did not wrap either).
//! - More generally, an index whose scalar evolution is `{start + c,+,step}<loop>`
//!   (`c` a constant, `start` and `step` invariant sums and products) and whose
//!   values provably never wrap ([`affine`]: interval arithmetic over the
//!   expression with the analysis manager's value ranges, over as many
//!   iterations as the scalar evolution's maximum count or the counter's range
//!   allow) is `base + (start + k *
//!   step) * stride + c * stride` on iteration `k`. Geps whose bases are one root
//!   pointer plus constant bytes (`&t[i]` and `&t[i + 1]`, `gep row, 1, s`) and
//!   whose indices share `start` and `step` share one pointer that starts at
//!   `root + start * stride` and advances by `step * stride`, each a constant offset
//!   from it (issue 46); offsets farther apart than a load's immediate reaches get
//!   pointers of their own. A stencil's nine neighbours `in[(i + di) * n + j + dj]`
//!   are nine loads at fixed offsets from one pointer that advances by a row per
//!   iteration, and an unrolled row's columns `a[i][0..15]` are fifteen. A
//!   pointer where the counter's own index points starts at `gep root, init,
//!   stride` from the counter's value on entry (`i + 1` of `j = i + 1`) rather
//!   than `root + start * stride` plus the constant, unless that start's gep is
//!   computed already (LLVM's loop strength reduction weighs the formulae so:
//!   instructions added, those computed already reused).
//!
//!   Compared with the affine recogniser this replaces (its own counter intervals
//!   and pattern walk), it accepts: rows a constant apart (`t[i][j]`, `t[i + 1][j]`,
//!   one pointer instead of two); indices that step down in an up-counting loop
//!   (`a[15 - i]`); invariant steps (`a[i * m + j]` with `m` bounded); and counters
//!   whose bound the value ranges limit although it is no constant or counter (a
//!   bound clamped by a branch).
//! - Any other index the scalar evolution describes as an `i32` recurrence
//!   `{start,+,step}<loop>` (of the counter or of any other header parameter
//!   stepping by an invariant, wrapping or not: `j * n + i`, `k += m`) becomes a
//!   pointer starting at `base + sext(start) * stride` and advancing by
//!   `sext(step) * stride` when the address is only used to access memory and an
//!   access through it runs on every iteration that goes round again
//!   ([`recurrence`]).
//! - Before that, nested geps are reassociated so the varying index is outermost
//!   ([`gep_reassoc`]): a column walk `b[k][j]` over `k` becomes a pointer down the
//!   column.
//!
//! The loops come from [`super::looprotate`] and have preheaders from
//! [`super::licm`]; loops of another shape are left alone. Each loop's blocks
//! holding `gep`s are found through an index ([`gep_blocks`]), not by scanning
//! every block of its inner loops.

mod affine;
mod gep_blocks;
mod gep_reassoc;
mod recurrence;

use crate::analysis::ranges::Ranges;
use crate::analysis::scev::expand::Expander;
use crate::analysis::scev::{Expr, ExprId, ScalarEvolution, ScevState};
use crate::analysis::FunctionAnalyses;
use crate::analysis::{Counter, LoopForest, LoopId, Preserved, RotatedLoop};
use crate::pipeline::FunctionTransform;
use affine::ExactIndices;
use gep_blocks::GepBlocks;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, BlockCall, Function, Inst, InstKind, Type, Value};
use recurrence::Recurrences;
use rustc_hash::FxHashMap;

/// The strength reduction pass.
pub struct StrengthReduce;

impl FunctionTransform for StrengthReduce {
    const NAME: &'static str = "strength";
    const DESCRIPTION: &'static str =
        "strength-reduce array addresses of induction variables into pointer increments";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_on(f, fa) > 0
    }
}

/// Reduces the addressing of every qualifying loop of `f`; returns how many `gep`s
/// were rewritten.
pub fn run(f: &mut Function) -> usize {
    if f.is_declaration() {
        return 0;
    }
    run_on(f, &mut FunctionAnalyses::default())
}

/// [`run`] with the function's cached analyses (the scalar evolution among them).
pub fn run_on(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    // The rotated loops with a counter (of any constant step), as the scalar evolution
    // describes them, all found before the first rewrite: adding header
    // parameters (appended after the counters) and instructions changes no edge
    // and no counter, so the analyses, the counters and their ranges stay valid.
    let (counted, mut geps, recurrences) = {
        let mut se = fa.scev(f);
        let (g, cfg, loops) = (se.f, se.cfg, se.loops);
        // Each loop's maximum back-edge-taken count, asked of this one analysis
        // (the exiting blocks of every loop, found once).
        let counted: Vec<(LoopId, RotatedLoop, Counter, Option<i64>)> = loops
            .loops()
            .filter_map(|(id, _)| {
                let s = RotatedLoop::of(g, cfg, loops, id)?;
                let c = Counter::of_scev(&mut se, id, &s)?;
                Some((id, s, c, se.max_count(id)))
            })
            .collect();
        let geps = GepBlocks::new(g, cfg);
        let recurrences = Recurrences::find(&mut se, &geps, counted.iter().map(|c| c.0));
        (counted, geps, recurrences)
    };
    if !recurrences.is_empty() {
        // Its arena went to `recurrences`.
        fa.forget_scev();
    }
    let (cfg, dt, loops, ranges) = fa.loops_and_ranges(f);
    let a = Analyses {
        cfg,
        dt,
        loops,
        ranges,
    };
    let mut rewritten = 0;
    for (id, s, iv, max_count) in counted {
        rewritten += reduce_loop(f, &a, &recurrences, &mut geps, (id, max_count), s, iv);
    }
    rewritten
}

/// The analyses of the function before its first rewrite, all still valid after
/// (no edge changes; the ranges read through [`Ranges::of`]).
struct Analyses<'a> {
    cfg: &'a ControlFlowGraph,
    dt: &'a DominatorTree,
    loops: &'a LoopForest,
    ranges: &'a Ranges,
}

/// The geps one pointer induction variable replaces: the same root pointer, the
/// same invariant index added first (when the index is the counter plus one), the
/// same stride, and the same start (without its constant term) and step of the
/// index, as expressions of the loop's scalar evolution.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
struct GroupKey {
    root: Value,
    added: Option<Value>,
    stride: u32,
    start: ExprId,
    step: ExprId,
}

/// A gep to rewrite and its constant offset, in bytes, from its group's pointer.
type Member = (Inst, i64);

/// The geps of one key.
struct Group {
    key: GroupKey,
    /// The byte offset at which the counter's own index would point
    /// ([`clusters`]).
    natural: i64,
    /// Whether the key's start and step are the counter's: its value on entry
    /// is then the index at `natural`.
    of_counter: bool,
    members: Vec<Member>,
}

/// The largest byte offset a load or store takes as an immediate (RV64's signed
/// 12 bits): members of one group farther apart get pointers of their own, as
/// LLVM's loop strength reduction keeps to the target's legal addressing modes.
const MAX_IMMEDIATE: i64 = 2047;

/// Reduces the addressing of loop `id` (at most `max_count` back edges taken, when
/// known), rotated as `s` with the counter `iv`.
fn reduce_loop(
    f: &mut Function,
    a: &Analyses,
    recurrences: &Recurrences,
    geps: &mut GepBlocks,
    (id, max_count): (LoopId, Option<i64>),
    s: RotatedLoop,
    iv: Counter,
) -> usize {
    let loops = a.loops;
    let in_loop = |f: &Function, v: Value| f.value_block(v).is_some_and(|b| loops.contains(id, b));
    let blocks = geps.of_loop(loops, id);
    let mut rewritten = gep_reassoc::reassociate(f, a.ranges, a.dt, &blocks, s.preheader, &in_loop);
    // A scalar evolution of the function as it is now (earlier loops rewritten),
    // kept until the starts and steps are emitted.
    let mut state = ScevState::new(false);
    let (groups, recurrent) = {
        let mut se = ScalarEvolution::with_state(f, a.cfg, a.dt, loops, &mut state);
        let mut exact = ExactIndices::new(&mut se, a.ranges, id, &iv, max_count);
        plan_loop(&mut exact, a.dt, recurrences, &blocks, id, &s, &iv)
    };
    let pterm = f.terminator(s.preheader).expect("preheader has a jump");
    let mut ex = Expander::new(&state.exprs, pterm, pterm, usize::MAX);
    let available = |_: &Function, _: Value| true;
    for group in groups {
        let key = group.key;
        let init = init_index(f, a.dt, &state, &s, &iv, &group);
        let runs = clusters(group.members, group.natural);
        let from_init = |first: i64| init.filter(|_| first == group.natural);
        // Every unknown of the start and step is invariant and used in the loop
        // (or passed to its header by the preheader), so available at the end of
        // the preheader; sums and products of them expand.
        let start = runs
            .iter()
            .any(|&(first, _)| from_init(first).is_none())
            .then(|| ex.expand(f, key.start, &available).expect("expandable"));
        let step = ex.expand(f, key.step, &available).expect("expandable");
        let mut root = key.root;
        if let Some(b) = key.added {
            root = insert_gep(f, pterm, root, b, key.stride);
        }
        let base = match start {
            Some(start) if f.as_iconst(start) != Some(0) => {
                insert_gep(f, pterm, root, start, key.stride)
            }
            _ => root,
        };
        for (first, cluster) in runs {
            let start = match from_init(first) {
                Some(init) => insert_gep(f, pterm, root, init, key.stride),
                None => offset_gep(f, pterm, base, first, key.stride),
            };
            let p = pointer_param(f, &s, start, step, key.stride);
            for (g, offset) in cluster {
                replace_by_offset(f, g, p, offset - first, key.stride);
                rewritten += 1;
            }
        }
    }
    for g in recurrent {
        let InstKind::Gep {
            base,
            index,
            stride,
        } = *f.kind(g)
        else {
            unreachable!("collected as a gep")
        };
        let (start, step) = recurrences.start_and_step(f, id, pterm, index);
        let start = insert_gep(f, pterm, base, start, stride);
        let p = pointer_param(f, &s, start, step, stride);
        let r = f.inst_result(g).expect("gep has a result");
        f.replace_all_uses(r, p);
        f.remove_inst(g);
        rewritten += 1;
    }
    if rewritten > 0 {
        // New geps went to the preheader, the latch, or next to the geps they
        // replace.
        geps.add(s.preheader);
        geps.add(s.latch);
    }
    rewritten
}

/// The counter's value on entry as the index of the pointer of `group`'s run
/// at `natural`, when that is cheaper than the start plus a constant offset.
/// The costs are those of LLVM's loop strength reduction (instructions outside
/// the loop, what is computed already reused): `gep root, init, stride` is a
/// shift and an add, none when computed already (GVN merges the two); the
/// start's gep plus the offset is one add when the start's gep is computed
/// already, else more. A constant `init` is no better than the offset.
fn init_index(
    f: &Function,
    dt: &DominatorTree,
    state: &ScevState,
    s: &RotatedLoop,
    iv: &Counter,
    group: &Group,
) -> Option<Value> {
    if !group.of_counter || f.as_iconst(iv.init).is_some() {
        return None;
    }
    let key = &group.key;
    let at = s.preheader;
    let computed = |index: Value| computed_gep(f, dt, at, key.root, index, key.stride).is_some();
    if key.added.is_some() || computed(iv.init) {
        return Some(iv.init);
    }
    let start_computed = match state.exprs.get(key.start) {
        Expr::Unknown { v, .. } => computed(*v),
        _ => false,
    };
    (!start_computed).then_some(iv.init)
}

/// An existing `gep base, index, stride` in a block that dominates `at` (or is
/// it): GVN merges a new one with it.
fn computed_gep(
    f: &Function,
    dt: &DominatorTree,
    at: Block,
    base: Value,
    index: Value,
    stride: u32,
) -> Option<Value> {
    f.users(index).iter().find_map(|&u| {
        let same = matches!(*f.kind(u), InstKind::Gep { base: b, index: i, stride: w }
            if b == base && i == index && w == stride);
        let available = f.layout.inst_block(u).is_some_and(|b| dt.dominates(b, at));
        (same && available).then(|| f.inst_result(u).expect("gep has a result"))
    })
}

/// The geps of loop `id` (blocks `blocks`) to rewrite: grouped by the pointer
/// that replaces them, in order of first appearance, and those whose index is a
/// recurrence only modulo 2^32 ([`recurrence`]).
#[allow(clippy::too_many_arguments)]
fn plan_loop(
    exact: &mut ExactIndices,
    dt: &DominatorTree,
    recurrences: &Recurrences,
    blocks: &[Block],
    id: LoopId,
    s: &RotatedLoop,
    iv: &Counter,
) -> (Vec<Group>, Vec<Inst>) {
    let f = exact.se.f;
    // Where the counter itself would point in a group of its start and step.
    let counter_start = exact.counter_start(iv);
    let counter_step = exact.se.exprs.constant(Type::I32, iv.step.into());
    let loops = exact.se.loops;
    let in_loop = |v: Value| f.value_block(v).is_some_and(|b| loops.contains(id, b));
    let mut groups: Vec<Group> = Vec::new();
    let mut recurrent: Vec<Inst> = Vec::new();
    let mut group_of: FxHashMap<GroupKey, usize> = FxHashMap::default();
    for &b in blocks {
        for i in f.layout.block_insts(b) {
            let InstKind::Gep {
                base,
                index,
                stride,
            } = *f.kind(i)
            else {
                continue;
            };
            if in_loop(base) {
                continue;
            }
            let Some((added, start, step, offset)) = split_index(exact, iv, &in_loop, i) else {
                if only_addresses(f, i)
                    && accessed_every_iteration(f, dt, s, i)
                    && recurrences.is_varying(id, index)
                {
                    recurrent.push(i);
                }
                continue;
            };
            let (root, root_offset) = root_of(f, base);
            let Some(offset) = offset
                .checked_mul(stride.into())
                .and_then(|o| o.checked_add(root_offset))
                .filter(|o| i32::try_from(*o).is_ok())
            else {
                continue;
            };
            let key = GroupKey {
                root,
                added,
                stride,
                start,
                step,
            };
            let g = *group_of.entry(key).or_insert_with(|| {
                let of_counter = start == counter_start.0 && step == counter_step;
                groups.push(Group {
                    key,
                    natural: if of_counter {
                        counter_start.1 * i64::from(stride)
                    } else {
                        0
                    },
                    of_counter,
                    members: Vec::new(),
                });
                groups.len() - 1
            });
            groups[g].members.push((i, offset));
        }
    }
    (groups, recurrent)
}

/// Whether a load or store through the gep `g` runs on every iteration that goes
/// round again (its block dominates the latch).
fn accessed_every_iteration(f: &Function, dt: &DominatorTree, s: &RotatedLoop, g: Inst) -> bool {
    let r = f.inst_result(g).expect("gep has a result");
    f.users(r).iter().any(|&u| {
        crate::passes::accesses_through(f, u, r)
            && f.layout
                .inst_block(u)
                .is_some_and(|b| dt.dominates(b, s.latch))
    })
}

/// `gep base, index, stride` (instruction `g`) as `root + (added + start + k *
/// step) * stride` on iteration `k`, plus `offset * stride` bytes: `(added,
/// start, step, offset)`, `start` and `step` expressions of the scalar evolution.
///
/// Either the index is exact ([`ExactIndices`]), or it is the counter plus an
/// invariant or a small constant and the address is only used to access memory
/// (see [`counter_plus_invariant`] and [`counter_plus_constant`]).
fn split_index(
    exact: &mut ExactIndices,
    iv: &Counter,
    in_loop: &dyn Fn(Value) -> bool,
    g: Inst,
) -> Option<(Option<Value>, ExprId, ExprId, i64)> {
    let f = exact.se.f;
    let InstKind::Gep { index, .. } = *f.kind(g) else {
        return None;
    };
    if let Some(x) = exact.exact(index) {
        return Some((None, x.start, x.step, x.offset));
    }
    let (added, offset) = if let Some(b) = counter_plus_invariant(exact.se, iv, in_loop, g, index) {
        (Some(b), 0)
    } else {
        let offset = counter_plus_constant(exact.se, iv.param, index)?;
        // (`i + c` wrapped can only land back in an object when `|c|` is near 2^31.)
        if offset != 0 && (offset.unsigned_abs() > 1 << 16 || !only_addresses(f, g)) {
            return None;
        }
        (None, i64::from(offset))
    };
    let (start, c) = exact.counter_start(iv);
    let step = exact.se.exprs.constant(Type::I32, iv.step.into());
    Some((added, start, step, offset + c))
}

/// `(root, bytes)` with `base` the pointer `root + bytes`: geps of constant
/// indices peeled off (pointer arithmetic wraps modulo 2^64, so this is exact).
fn root_of(f: &Function, mut base: Value) -> (Value, i64) {
    let mut bytes = 0i64;
    for _ in 0..8 {
        let Some(InstKind::Gep {
            base: b,
            index,
            stride,
        }) = f.def_inst(base).map(|i| f.kind(i))
        else {
            break;
        };
        let Some(c) = f.as_iconst(*index) else {
            break;
        };
        let Some(total) = i64::from(c)
            .checked_mul((*stride).into())
            .and_then(|o| o.checked_add(bytes))
            .filter(|o| i32::try_from(*o).is_ok())
        else {
            break;
        };
        bytes = total;
        base = *b;
    }
    (base, bytes)
}

/// The members of a group in runs whose byte offsets span at most
/// [`MAX_IMMEDIATE`], each with where its pointer points: at `natural` (where the
/// counter's own index points, so the pointer is the one the counter's address
/// would have, which a pointer passed round the loop may equal, and its start
/// needs no offset of its own in the preheader) when every offset of the run is
/// an immediate from it, else at its smallest offset.
fn clusters(mut members: Vec<Member>, natural: i64) -> Vec<(i64, Vec<Member>)> {
    members.sort_by_key(|&(g, o)| (o, g));
    let mut runs: Vec<(i64, Vec<Member>)> = Vec::new();
    for m in members {
        match runs.last_mut() {
            Some((first, c)) if m.1 - *first <= MAX_IMMEDIATE => c.push(m),
            _ => runs.push((m.1, vec![m])),
        }
    }
    for (anchor, c) in &mut runs {
        let last = c.last().expect("runs are not empty").1;
        if last - natural <= MAX_IMMEDIATE && natural - *anchor <= MAX_IMMEDIATE + 1 {
            *anchor = natural;
        }
    }
    runs
}

/// Makes the gep `g` the pointer `p` plus `offset` bytes.
fn replace_by_offset(f: &mut Function, g: Inst, p: Value, offset: i64, stride: u32) {
    let r = f.inst_result(g).expect("gep has a result");
    if offset == 0 {
        f.replace_all_uses(r, p);
        f.remove_inst(g);
        return;
    }
    let (index, stride) = offset_index(f, offset, stride);
    f.replace_kind(
        g,
        InstKind::Gep {
            base: p,
            index,
            stride,
        },
    );
}

/// `offset` bytes as a gep's constant index and stride: in units of `stride`
/// when it divides them, else of bytes.
fn offset_index(f: &mut Function, offset: i64, stride: u32) -> (Value, u32) {
    let s = i64::from(stride);
    let (index, stride) = if offset % s == 0 {
        (offset / s, stride)
    } else {
        (offset, 1)
    };
    let index = f.iconst(i32::try_from(index).expect("offsets are within i32"));
    (index, stride)
}

/// `base` plus `offset` bytes, a gep inserted before `at` unless the offset is 0.
fn offset_gep(f: &mut Function, at: Inst, base: Value, offset: i64, stride: u32) -> Value {
    if offset == 0 {
        return base;
    }
    let (index, stride) = offset_index(f, offset, stride);
    insert_gep(f, at, base, index, stride)
}

/// Inserts `gep base, index, stride` before `at`.
fn insert_gep(f: &mut Function, at: Inst, base: Value, index: Value, stride: u32) -> Value {
    let g = f.insert_inst_before(
        at,
        InstKind::Gep {
            base,
            index,
            stride,
        },
        Type::Ptr,
    );
    f.inst_result(g).expect("gep has a result")
}

/// Creates the pointer induction variable starting at `start` (a pointer
/// available at the end of the preheader) and advancing by `sext(step) * stride`
/// bytes per iteration.
fn pointer_param(
    f: &mut Function,
    s: &RotatedLoop,
    start: Value,
    step: Value,
    stride: u32,
) -> Value {
    let p = f.append_block_param(s.header, Type::Ptr);
    let pterm = f.terminator(s.preheader).expect("preheader has a jump");
    let lterm = s.branch;
    let next = insert_gep(f, lterm, p, step, stride);
    for (term, which, arg) in [(pterm, 0, start), (lterm, s.back, next)] {
        let mut t: BlockCall = f.kind(term).targets()[which].clone();
        debug_assert_eq!(t.block, s.header);
        t.args.push(arg);
        f.set_target(term, which, t);
    }
    p
}

/// `index = i + b` (modulo 2^32: the scalar evolution's difference of the two
/// is the value `b`, or the evolution of `b`, an operand of the index's
/// computation) with `b` loop-invariant (any value but a constant), when the
/// gep `g` may follow
/// the exact pointer `base + (i + b) * stride` although no access through it need
/// run on every iteration: the counter `i` counts up by one from a constant `>= 0`
/// under a strict bound (so it never wraps and stays `>= 0`), `base` is the start of
/// an object (a global or an `alloc`), and the address is only used to access
/// memory. Then `i + b` is exact while it is at most `i32::MAX`; once it passes
/// that (only possible for `b > 0`) the `i32` index is negative, before the start
/// of the object, so the original could not access memory through it. Either way
/// the accesses that do run see the same address.
fn counter_plus_invariant(
    se: &mut ScalarEvolution,
    c: &Counter,
    in_loop: &dyn Fn(Value) -> bool,
    g: Inst,
    index: Value,
) -> Option<Value> {
    let f = se.f;
    if c.step != 1 || c.inclusive || f.as_iconst(c.init).is_none_or(|v| v < 0) {
        return None;
    }
    let InstKind::Gep { base, .. } = *f.kind(g) else {
        return None;
    };
    let object_start = matches!(f.value_def(base), ir::ValueDef::Global(_))
        || f.def_inst(base)
            .is_some_and(|i| matches!(f.kind(i), InstKind::Alloc { .. }));
    if !object_start || !only_addresses(f, g) {
        return None;
    }
    let d = difference_from(se, c.param, index)?;
    let invariant = |v: Value| !in_loop(v) && f.as_iconst(v).is_none();
    if let Expr::Unknown { v, .. } = *se.exprs.get(d) {
        return invariant(v).then_some(v);
    }
    // A difference the evolution folds (`i * n` of an outer counter) is the
    // value of an operand of the index's computation when one equals it (as
    // LLVM's `SCEVExpander` reuses existing values).
    let mut operands = Vec::new();
    f.kind(f.def_inst(index)?)
        .for_each_arg(|a| operands.push(a));
    operands
        .into_iter()
        .find(|&a| invariant(a) && f.value_type(a) == Type::I32 && se.get(a) == d)
}

/// `v` as the counter `iv` plus a constant (modulo 2^32), by the scalar
/// evolution's difference of the two.
fn counter_plus_constant(se: &mut ScalarEvolution, iv: Value, v: Value) -> Option<i32> {
    let d = difference_from(se, iv, v)?;
    i32::try_from(se.exprs.as_const(d)?).ok()
}

/// The scalar evolution of `v - iv`, when both are `i32` values.
fn difference_from(se: &mut ScalarEvolution, iv: Value, v: Value) -> Option<ExprId> {
    let (loops, f) = (se.loops, se.f);
    if f.value_type(v) != Type::I32 || f.value_type(iv) != Type::I32 {
        return None;
    }
    let (a, b) = (se.get(v), se.get(iv));
    Some(se.exprs.sub(loops, f, a, b))
}

/// Whether every use of the gep `g` is as the address of a load or store, directly or
/// through block parameters that are themselves only used so (PRE passes the address
/// of the next iteration's element around the loop that way).
fn only_addresses(f: &Function, g: Inst) -> bool {
    let r = f.inst_result(g).expect("gep has a result");
    let mut seen = vec![r];
    let mut work = vec![r];
    while let Some(v) = work.pop() {
        for &u in f.users(v) {
            match f.kind(u) {
                _ if crate::passes::accesses_through(f, u, v) => {}
                k @ (InstKind::Jump { .. } | InstKind::Br { .. }) => {
                    if matches!(k, InstKind::Br { cond, .. } if *cond == v) {
                        return false;
                    }
                    for t in k.targets() {
                        for (j, &a) in t.args.iter().enumerate() {
                            let p = f.block_params(t.block)[j];
                            if a == v && !seen.contains(&p) {
                                seen.push(p);
                                work.push(p);
                            }
                        }
                    }
                }
                _ => return false,
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, run, same_behaviour};

    /// A rotated loop summing `a[i]` and `a[i + 2]`.
    const SUM: &str = r#"
declare @putint(i32) -> void
global @a: [i32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = gep @a, %0, 4
  %3 = load i32, %2
  %4 = add %0, 2
  %5 = gep @a, %4, 4
  %6 = load i32, %5
  %7 = add %1, %3
  %8 = add %7, %6
  %9 = add %0, 1
  %10 = slt %9, 14
  br %10, bb1(%9, %8), bb2
bb2:
  call @putint(%8)
  ret 0
}
"#;

    #[test]
    fn geps_of_an_induction_variable_become_a_pointer() {
        check(
            &["strength"],
            SUM,
            r#"
global @a: [i32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0, @a)
bb1(%0: i32, %1: i32, %2: ptr):
  %3 = load i32, %2
  %4 = add %0, 2
  %5 = gep %2, 2, 4
  %6 = load i32, %5
  %7 = add %1, %3
  %8 = add %7, %6
  %9 = add %0, 1
  %10 = slt %9, 14
  %11 = gep %2, 1, 4
  br %10, bb1(%9, %8, %11), bb2
bb2:
  call @putint(%8)
  ret 0
}
"#,
        );
        same_behaviour(SUM, &["strength"], "");
    }

    #[test]
    fn loops_that_might_wrap_are_left_alone() {
        // `ne` with a bound the counter, from 0 up, never meets (it wraps round to
        // -1); a step of 2 toward a bound it could step over the end of `i32`
        // for; a step of 2 that steps over its `ne` bound.
        for changes in [
            &[("slt %9, 14", "ne %9, -1")][..],
            &[
                ("add %0, 1\n", "add %0, 2\n"),
                ("slt %9, 14", "slt %9, 2147483647"),
            ],
            &[("add %0, 1\n", "add %0, 2\n"), ("slt %9, 14", "ne %9, 13")],
        ] {
            let mut src = SUM.to_string();
            for (from, to) in changes {
                src = src.replace(from, to);
            }
            let out = crate::passes::testutil::run(&src, &["strength"]);
            assert!(!out.contains(": ptr"), "{out}");
        }
    }

    #[test]
    fn counters_of_any_constant_step_become_pointers() {
        // i = 0, 2, ..., 12: the pointer advances by two elements.
        let up = SUM.replace("add %0, 1\n", "add %0, 2\n");
        let out = same_behaviour(&up, &["strength"], "");
        assert!(!out.contains("gep @a, %"), "{out}");
        assert!(out.contains(", 2, 4\n  br"), "{out}");
        // i = 13, 10, ..., 1 down while i - 3 > -1: back by three elements.
        let down = SUM
            .replace("jump bb1(0, 0)", "jump bb1(13, 0)")
            .replace("add %0, 1\n", "add %0, -3\n")
            .replace("slt %9, 14", "sgt %9, -1");
        let out = same_behaviour(&down, &["strength"], "");
        assert!(!out.contains("gep @a, %"), "{out}");
        assert!(out.contains(", -3, 4\n  br"), "{out}");
        // An index affine in a counter of step 3 (i = 0, 3, ..., 12): `i * 1 + 2`
        // is exact over the counter's interval [0, 13].
        let affine = SUM
            .replace("add %0, 1\n", "add %0, 3\n")
            .replace("%4 = add %0, 2", "%20 = mul %0, 1\n  %4 = add %20, 2");
        let out = same_behaviour(&affine, &["strength"], "");
        assert!(!out.contains("gep @a, %"), "{out}");
    }

    #[test]
    fn counting_down_and_pipeline_behaviour() {
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 10]
  jump bb1(9)
bb1(%1: i32):
  %2 = gep %0, %1, 4
  %3 = mul %1, %1
  store %3, %2
  %4 = add %1, -1
  %5 = sgt %4, -1
  br %5, bb1(%4), bb2
bb2:
  jump bb3(0, 0)
bb3(%6: i32, %7: i32):
  %8 = gep %0, %6, 4
  %9 = load i32, %8
  %10 = add %7, %9
  %11 = add %6, 1
  %12 = slt %11, 10
  br %12, bb3(%11, %10), bb4
bb4:
  call @putint(%10)
  ret 0
}
"#;
        let out = same_behaviour(src, &["strength"], "");
        assert_eq!(out.matches(": ptr").count(), 2, "{out}");
    }

    #[test]
    fn a_branch_with_both_arms_into_the_loop_is_not_a_preheader() {
        // Regression (difftest seed 91): bb1 ends in `br` with both arms to the header,
        // with different arguments. The pointer's start was added to one arm only
        // (invalid IR); the loop has no preheader, so it is left alone.
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 8]
  %1 = call @getint()
  br %1, bb1(0, 5), bb1(0, 7)
bb1(%2: i32, %3: i32):
  %4 = gep %0, %2, 4
  store %3, %4
  %5 = add %2, 1
  %6 = slt %5, 8
  br %6, bb1(%5, %3), bb2
bb2:
  %7 = gep %0, 7, 4
  %8 = load i32, %7
  call @putint(%8)
  ret 0
}
"#;
        same_behaviour(src, &["strength"], "1");
        same_behaviour(src, &["strength"], "0");
        let out = same_behaviour(src, &["licm", "strength"], "0");
        assert_eq!(out.matches(": ptr").count(), 1, "{out}");
    }

    /// A loop nest addressing `a[(i - 1) * 8 + j]` and `a[(i - 1) * 8 + j - 1]`, with
    /// `i` in [1, 6] and `j` in [1, 5].
    const NEST: &str = r#"
declare @putint(i32) -> void
global @a: [i32; 64] = zeroinit

func @main() -> i32 {
bb0:
  jump bb1(1)
bb1(%0: i32):
  jump bb2(1, 0)
bb2(%1: i32, %2: i32):
  %3 = add %1, -1
  %4 = shl %3, 3
  %5 = add %0, %4
  %6 = gep @a, %5, 4
  store %1, %6
  %7 = add %5, -1
  %8 = gep @a, %7, 4
  %9 = load i32, %8
  %10 = add %2, %9
  %11 = add %1, 1
  %12 = slt %11, 7
  br %12, bb2(%11, %10), bb3
bb3:
  call @putint(%10)
  %13 = add %0, 1
  %14 = slt %13, 6
  br %14, bb1(%13), bb4
bb4:
  ret 0
}
"#;

    /// The ranges of both counters prove `(i - 1) * 8 + j - 1` exact, so the inner
    /// loop steps a pointer by 32 bytes, and both accesses are constant offsets from
    /// it; the pointer's start, `&a[j]`, is the outer loop's one pointer.
    #[test]
    fn affine_indices_of_counters_with_known_ranges_become_pointers() {
        let out = same_behaviour(NEST, &["strength"], "");
        assert!(!out.contains("gep @a, %"), "{out}");
        for line in [
            "jump bb2(1, 0, %2)",
            "store %3, %5",
            "%10 = gep %5, -1, 4",
            "%15 = gep %5, 8, 4",
            "%18 = gep %2, 1, 4",
        ] {
            assert!(out.contains(line), "{line}:\n{out}");
        }
    }

    /// Without an interval for `j` (a bound read at run time), or when `(i - 1) << 29`
    /// may exceed `i32`, the index is not proven exact: no pointer steps by the
    /// constant row of 32 bytes. (The store runs on every iteration, so its address
    /// still becomes a pointer advancing by the index's step, see
    /// `recurrences_accessed_every_iteration_become_pointers`.)
    #[test]
    fn affine_indices_that_may_wrap_are_left_alone() {
        let unknown_bound = NEST
            .replace("  jump bb1(1)\n", "  %99 = call @getint()\n  jump bb1(1)\n")
            .replace("slt %13, 6", "slt %13, %99")
            .replace(
                "declare @putint(i32) -> void\n",
                "declare @putint(i32) -> void\ndeclare @getint() -> i32\n",
            );
        let wide = NEST.replace("shl %3, 3", "shl %3, 29");
        same_behaviour(&unknown_bound, &["strength"], "4");
        for src in [unknown_bound, wide] {
            let out = run(&src, &["strength"]);
            assert!(!out.contains(", 32\n"), "{out}");
        }
    }

    /// `q` carries `i * 8 + j` from one iteration to the next (as PRE leaves it), so
    /// it is `(i - 1) * 8 + j` on every iteration (the scalar evolution's `{j,+,8}`,
    /// as the other index's) and joins the same pointer.
    #[test]
    fn parameters_carrying_an_affine_value_join_the_pointer() {
        let carried = NEST
            .replace("  jump bb2(1, 0)\n", "  jump bb2(1, 0, %0)\n")
            .replace(
                "bb2(%1: i32, %2: i32):\n",
                "bb2(%1: i32, %2: i32, %30: i32):\n  %31 = shl %1, 3\n  %32 = add %0, %31\n",
            )
            .replace("  %6 = gep @a, %5, 4\n", "  %6 = gep @a, %30, 4\n")
            .replace("bb2(%11, %10)", "bb2(%11, %10, %32)");
        let out = same_behaviour(&carried, &["strength"], "");
        assert!(!out.contains("gep @a, %"), "{out}");
        let inner = &out[out.find("bb2(").unwrap()..out.find("bb3:").unwrap()];
        assert_eq!(inner.matches(": ptr").count(), 1, "{out}");
        assert!(inner.contains(", -1, 4\n"), "{out}");
    }

    /// `b[k][j - 1] + b[k][j + 1]` in a loop over `k` (with `j` fixed, from an outer
    /// loop over [1, 6]): the row varies, so the column part moves out (`&b[0][j]`,
    /// hoisted) and one pointer walks down the column by a row per iteration, the two
    /// accesses at offsets -1 and +1 from it. With `j` read at run time, `j + 1` might
    /// wrap, and each access gets its own pointer.
    #[test]
    fn a_column_walk_becomes_one_pointer_down_the_column() {
        let src = r#"
declare @putint(i32) -> void
global @b: [i32; 64] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]

func @main() -> i32 {
bb0:
  jump bb1(1)
bb1(%0: i32):
  %1 = add %0, -1
  %2 = add %0, 1
  jump bb2(0, 0)
bb2(%3: i32, %4: i32):
  %5 = gep @b, %3, 32
  %6 = gep %5, %1, 4
  %7 = load i32, %6
  %8 = gep %5, %2, 4
  %9 = load i32, %8
  %10 = add %4, %7
  %11 = add %10, %9
  %12 = add %3, 1
  %13 = slt %12, 7
  br %13, bb2(%12, %11), bb3
bb3:
  call @putint(%11)
  %14 = add %0, 1
  %15 = slt %14, 7
  br %15, bb1(%14), bb4
bb4:
  ret 0
}
"#;
        // (dce drops the pointer of the original row walk, left without uses.)
        let out = same_behaviour(src, &["strength", "dce"], "");
        let inner = &out[out.find("bb2(").unwrap()..out.find("bb3:").unwrap()];
        assert_eq!(inner.matches(": ptr").count(), 1, "{out}");
        for line in [", -1, 4", ", 1, 4", ", 1, 32"] {
            assert!(inner.contains(line), "{line}:\n{out}");
        }
        let unknown = src
            .replace("jump bb1(1)", "%99 = call @getint()\n  jump bb1(%99)")
            .replace("slt %14, 7", "slt %14, %99")
            .replace(
                "declare @putint",
                "declare @getint() -> i32\ndeclare @putint",
            );
        let out = same_behaviour(&unknown, &["strength", "dce"], "3");
        let inner = &out[out.find("bb2(").unwrap()..out.find("bb3:").unwrap()];
        assert_eq!(inner.matches(": ptr").count(), 2, "{out}");
    }

    /// `while (i <= n) s = s + a[i - 1] + a[i + 1]` with `n` read at run time: the
    /// accesses every iteration makes keep `i` from wrapping (`Counter`), so both
    /// become offsets from one pointer; the loads of the next iteration's element, passed
    /// around the loop in a parameter (as PRE leaves it), join it too.
    const INCLUSIVE: &str = r#"
declare @putint(i32) -> void
declare @getint() -> i32
global @a: [i32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = gep @a, 1, 4
  jump bb1(1, 0, %1)
bb1(%2: i32, %3: i32, %4: ptr):
  %5 = add %2, -1
  %6 = gep @a, %5, 4
  %7 = load i32, %6
  %8 = load i32, %4
  %9 = add %2, 1
  %10 = gep @a, %9, 4
  %11 = load i32, %10
  %12 = add %3, %7
  %13 = add %12, %11
  %14 = add %13, %8
  %15 = sle %9, %0
  br %15, bb1(%9, %14, %10), bb2
bb2:
  call @putint(%14)
  ret 0
}
"#;

    #[test]
    fn inclusive_loops_with_accesses_every_iteration_are_reduced() {
        for n in ["1", "7", "14"] {
            let out = same_behaviour(INCLUSIVE, &["strength"], n);
            let body = &out[out.find("bb1(").unwrap()..];
            assert!(!body.contains("gep @a, %"), "{out}");
            // One pointer at `a[i]`: `a[i - 1]` (exact: `i - 1` is in [0, MAX - 1])
            // and `a[i + 1]` (the counter plus a constant, accessed every time)
            // are offsets from it.
            assert!(
                out.contains(", -1, 4\n") && out.contains(", 1, 4\n"),
                "{out}"
            );
        }
    }

    /// `a[i + b]` read only on some iterations, `b` read at run time: the counter
    /// counts up from 0, so the exact pointer is safe (a wrapped `i + b` is negative
    /// and the guard keeps the access from running then), and the gep goes.
    #[test]
    fn conditional_access_at_counter_plus_invariant() {
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32
global @a: [i32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  %4 = add %2, %0
  %5 = slt %4, 16
  %6 = sge %4, 0
  %7 = and %5, %6
  br %7, bb2, bb3(%3)
bb2:
  %8 = add %2, %0
  %9 = gep @a, %8, 4
  %10 = load i32, %9
  %11 = mul %3, 3
  %12 = add %11, %10
  jump bb3(%12)
bb3(%13: i32):
  %14 = add %2, 1
  %15 = slt %14, %1
  br %15, bb1(%14, %13), bb4
bb4:
  call @putint(%13)
  ret 0
}
"#;
        for stdin in ["3 10", "-5 12", "2147483640 20", "-2147483648 30", "0 0"] {
            let out = same_behaviour(src, &["strength"], stdin);
            let body = &out[out.find("bb1(").unwrap()..];
            assert!(!body.contains("gep @a, %8"), "{stdin}: {out}");
            assert!(out.contains(": ptr"), "{out}");
        }
        // Counting down, or from an unknown start, the pointer is not used.
        let down = src.replace("jump bb1(0, 0)", "jump bb1(%1, 0)").replace(
            "%14 = add %2, 1\n  %15 = slt %14, %1",
            "%14 = add %2, -1\n  %15 = sgt %14, 0",
        );
        assert!(down.contains("sgt %14, 0"));
        let out = same_behaviour(&down, &["strength"], "-3 9");
        assert!(out.contains("gep @a, %8"), "{out}");
    }

    /// `a[4 * i + 3]` read only on some iterations of `i = 0; do ... while (++i !=
    /// 100)`: the counter's range does not bound it (a `!=` test), the scalar
    /// evolution's maximum count (99) does, so the index is exact (at most 399)
    /// and becomes a pointer stepping by 4 elements; with a bound read at run time
    /// it is not (and, accessed conditionally, stays a gep).
    #[test]
    fn conditional_access_bounded_by_the_maximum_count() {
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32
global @a: [i32; 400] = zeroinit

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  %4 = and %2, 7
  %5 = slt %4, %0
  br %5, bb2, bb3(%3)
bb2:
  %6 = mul %2, 4
  %7 = add %6, 3
  %8 = gep @a, %7, 4
  %9 = load i32, %8
  %10 = add %3, %9
  %11 = add %10, %2
  jump bb3(%11)
bb3(%13: i32):
  %14 = add %2, 1
  %15 = ne %14, 100
  br %15, bb1(%14, %13), bb4
bb4:
  call @putint(%13)
  ret 0
}
"#;
        for stdin in ["3", "0", "8"] {
            let out = same_behaviour(src, &["strength"], stdin);
            assert!(!out.contains("gep @a, %7"), "{stdin}: {out}");
            assert!(out.contains(": ptr"), "{out}");
        }
        let unknown = src
            .replace(
                "  jump bb1(0, 0)",
                "  %1 = call @getint()\n  jump bb1(0, 0)",
            )
            .replace("ne %14, 100", "ne %14, %1");
        let out = same_behaviour(&unknown, &["strength"], "3 100");
        assert!(out.contains("gep @a, %7"), "{out}");
    }

    /// The same conditional access with the index computed other ways, which the
    /// scalar evolution sees as the counter plus a constant (`(i + 1) + 1`) or
    /// plus an invariant (`i - (0 - b)`, whose operand `0 - b` evolves as the
    /// difference negated, so the invariant is found as `b`... through the
    /// evolution of the operand): the gep in the loop goes; an index that is not
    /// the counter plus an invariant (`i + i`) stays.
    #[test]
    fn a_conditional_access_at_the_counter_plus_anything_the_evolution_sees() {
        let src = |index: &str| {
            format!(
                r#"
declare @putint(i32) -> void
declare @getint() -> i32
global @a: [i32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %20 = add %0, 0
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  %4 = add %2, %0
  %5 = slt %4, 14
  %6 = sge %4, 0
  %7 = and %5, %6
  br %7, bb2, bb3(%3)
bb2:
{index}
  %9 = gep @a, %8, 4
  %10 = load i32, %9
  %11 = mul %3, 3
  %12 = add %11, %10
  jump bb3(%12)
bb3(%13: i32):
  %14 = add %2, 1
  %15 = slt %14, %1
  br %15, bb1(%14, %13), bb4
bb4:
  call @putint(%13)
  ret 0
}}
"#
            )
        };
        // Whether the loop (from its header on) indexes `@a` with a variable.
        let indexes_in_loop = |out: &str| out[out.find("\nbb1(").unwrap()..].contains("gep @a, %");
        // `(i + 1) + 1`: the counter plus the constant 2.
        let plus_two = src("  %21 = add %2, 1\n  %8 = add %21, 1");
        for stdin in ["3 10", "-5 12", "0 0"] {
            let out = same_behaviour(&plus_two, &["strength"], stdin);
            assert!(!indexes_in_loop(&out), "{stdin}: {out}");
        }
        // `i - (0 - b')` with `b'` an invariant computed before the loop: the
        // counter plus that invariant.
        let plus_b = src("  %22 = sub 0, %20\n  %8 = sub %2, %22");
        for stdin in ["3 10", "-5 12", "2147483640 20", "-2147483648 30"] {
            let out = same_behaviour(&plus_b, &["strength"], stdin);
            assert!(!indexes_in_loop(&out), "{stdin}: {out}");
        }
        // `i + i` is no counter plus an invariant.
        let twice = src("  %8 = add %2, %2");
        let out = same_behaviour(&twice, &["strength"], "3 6");
        assert!(indexes_in_loop(&out), "{out}");
    }

    /// Without an access on every iteration (the loads only run when `s` is even), an
    /// unknown bound could be `i32::MAX` and `i` wrap: nothing changes.
    #[test]
    fn inclusive_loops_that_might_wrap_are_left_alone() {
        let conditional = r#"
declare @putint(i32) -> void
declare @getint() -> i32
global @a: [i32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(1, 0)
bb1(%2: i32, %3: i32):
  %4 = and %3, 1
  %5 = eq %4, 0
  br %5, bb2, bb3(1)
bb2:
  %6 = add %2, -1
  %7 = gep @a, %6, 4
  %8 = load i32, %7
  jump bb3(%8)
bb3(%9: i32):
  %10 = add %3, %9
  %11 = add %2, 1
  %12 = sle %11, %0
  br %12, bb1(%11, %10), bb4
bb4:
  call @putint(%10)
  ret 0
}
"#;
        let out = same_behaviour(conditional, &["strength"], "9");
        assert!(out.contains("gep @a, %"), "{out}");
        assert!(!out.contains(": ptr"), "{out}");
    }

    /// `for j < n: b[j * m + i] = a[x + j]` with `n`, `m`, `i`, `x` read at run time:
    /// neither index is provably exact, but both accesses run on every iteration, so
    /// both addresses become pointers (advancing by `m` and by one element); an access
    /// on one path only keeps its gep.
    const TRANSPOSE: &str = r#"
declare @putint(i32) -> void
declare @getint() -> i32
global @a: [i32; 64] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
global @b: [i32; 64] = zeroinit

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = call @getint()
  %3 = call @getint()
  jump bb1(0)
bb1(%4: i32):
  %5 = add %3, %4
  %6 = gep @a, %5, 4
  %7 = load i32, %6
  %8 = mul %4, %1
  %9 = add %8, %2
  %10 = gep @b, %9, 4
  store %7, %10
  %11 = add %4, 1
  %12 = slt %11, %0
  br %12, bb1(%11), bb2
bb2:
  %13 = gep @b, 13, 4
  %14 = load i32, %13
  call @putint(%14)
  ret 0
}
"#;

    #[test]
    fn recurrences_accessed_every_iteration_become_pointers() {
        for input in ["8 5 3 2", "3 7 -2 5", "1 100 13 0", "5 -3 40 1"] {
            let out = same_behaviour(TRANSPOSE, &["strength"], input);
            let body = &out[out.find("bb1(").unwrap()..out.find("bb2:").unwrap()];
            assert!(!body.contains("gep @"), "{out}");
            assert_eq!(body.matches(": ptr").count(), 2, "{out}");
        }
        let conditional = TRANSPOSE.replace(
            "  store %7, %10\n",
            "  %20 = slt %7, 5\n  br %20, bb3, bb4\nbb3:\n  store %7, %10\n  jump bb4\nbb4:\n",
        );
        let out = same_behaviour(&conditional, &["strength"], "8 5 3 2");
        let body = &out[out.find("bb1(").unwrap()..out.find("bb2:").unwrap()];
        assert!(
            body.contains("gep @b, %") && !body.contains("gep @a, %"),
            "{out}"
        );
    }

    /// `k = x; for j < n: { b[k] = j; k = k + m }` with `n`, `m`, `x` read at run
    /// time: `k` is no counter but the recurrence `{x,+,m}` of the scalar
    /// evolution, stored through every iteration, so its address becomes a
    /// pointer advancing by `m` elements; `k = k * m` (no recurrence) keeps its gep.
    const SECOND_PARAMETER: &str = r#"
declare @putint(i32) -> void
declare @getint() -> i32
global @b: [i32; 64] = zeroinit

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = call @getint()
  jump bb1(0, %2)
bb1(%3: i32, %4: i32):
  %5 = gep @b, %4, 4
  store %3, %5
  %6 = add %4, %1
  %7 = add %3, 1
  %8 = slt %7, %0
  br %8, bb1(%7, %6), bb2
bb2:
  %9 = gep @b, 13, 4
  %10 = load i32, %9
  call @putint(%10)
  ret 0
}
"#;

    #[test]
    fn recurrences_of_other_parameters_become_pointers() {
        for input in ["8 5 3", "3 -2 20", "1 100 13", "5 0 13"] {
            let out = same_behaviour(SECOND_PARAMETER, &["strength"], input);
            let body = &out[out.find("bb1(").unwrap()..out.find("bb2:").unwrap()];
            assert!(!body.contains("gep @b"), "{out}");
            assert_eq!(body.matches(": ptr").count(), 1, "{out}");
        }
        let geometric = SECOND_PARAMETER.replace("%6 = add %4, %1", "%6 = mul %4, %1");
        let out = same_behaviour(&geometric, &["strength"], "4 2 3");
        let body = &out[out.find("bb1(").unwrap()..out.find("bb2:").unwrap()];
        assert!(body.contains("gep @b, %4"), "{out}");
        assert!(!body.contains(": ptr"), "{out}");
    }

    #[test]
    fn constant_columns_of_a_row_share_the_row_pointer() {
        // A row walk with its four columns at constant indices (an unrolled inner
        // loop): one pointer down the rows, each column a constant offset from it.
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %a = alloc [i32; 40]
  jump bb1(0)
bb1(%i: i32):
  %row = gep %a, %i, 16
  %c0 = gep %row, 0, 4
  store %i, %c0
  %c1 = gep %row, 1, 4
  store %i, %c1
  %c2 = gep %row, 1, 8
  store %i, %c2
  %c3 = gep %row, 3, 4
  store %i, %c3
  %n = add %i, 1
  %t = slt %n, 10
  br %t, bb1(%n), bb2
bb2:
  %x = call @getint()
  %px = gep %a, %x, 4
  %v = load i32, %px
  call @putint(%v)
  ret 0
}
"#;
        let out = same_behaviour(src, &["strength"], "37");
        same_behaviour(src, &["strength"], "2");
        assert_eq!(out.matches(": ptr").count(), 1, "{out}");
        assert!(out.contains("gep %2, 1, 8"), "{out}");
    }

    /// The inner loop of `t[i][j] = t[i][j - 1] + t[i + 1][j]` over `j` in [1, 15],
    /// with `i` read at run time: the rows `&t[i]` and `&t[i + 1]` are one root
    /// plus constant bytes, so all three accesses are offsets from one pointer
    /// (issue 46), not a pointer per row.
    const ROWS: &str = r#"
declare @putint(i32) -> void
declare @getint() -> i32
global @t: [i32; 256] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33]

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = gep @t, %0, 64
  %2 = gep %1, 1, 64
  jump bb1(1)
bb1(%3: i32):
  %4 = add %3, -1
  %5 = gep %1, %4, 4
  %6 = load i32, %5
  %7 = gep %2, %3, 4
  %8 = load i32, %7
  %9 = add %6, %8
  %10 = gep %1, %3, 4
  store %9, %10
  %11 = add %3, 1
  %12 = slt %11, 16
  br %12, bb1(%11), bb2
bb2:
  %13 = gep %1, 15, 4
  %14 = load i32, %13
  call @putint(%14)
  ret 0
}
"#;

    #[test]
    fn rows_a_constant_apart_share_one_pointer() {
        for stdin in ["0", "1", "7"] {
            let out = same_behaviour(ROWS, &["strength"], stdin);
            let body = &out[out.find("bb1(").unwrap()..out.find("bb2:").unwrap()];
            assert_eq!(body.matches(": ptr").count(), 1, "{out}");
            assert!(
                !body.contains("gep %1, %") && !body.contains("gep %2, %"),
                "{out}"
            );
            // The pointer walks `t[i][j]` (where the counter points); `t[i][j - 1]`
            // is one element back, `t[i + 1][j]` sixteen on.
            assert!(
                body.contains(", 16, 4\n") && body.contains(", -1, 4\n"),
                "{out}"
            );
        }
    }

    /// `s += t[i][j]` for `j` from `i + 1` to 3 (the triangle above the diagonal,
    /// as a graph's adjacency matrix is walked): the inner loop's index is
    /// `{i + 1,+,1}`, its pointer starts at `t[i] + (i + 1) * 4`.
    const TRIANGLE: &str = r#"
declare @putint(i32) -> void
global @t: [i32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = add %0, 1
  %3 = gep @t, %0, 16
  jump bb2(%2, %1)
bb2(%4: i32, %5: i32):
  %6 = gep %3, %4, 4
  %7 = load i32, %6
  %8 = add %5, %7
  %9 = add %4, 1
  %10 = slt %9, 4
  br %10, bb2(%9, %8), bb3
bb3:
  %11 = slt %2, 3
  br %11, bb1(%2, %8), bb4
bb4:
  call @putint(%8)
  ret 0
}
"#;

    /// The inner pointer of [`TRIANGLE`] starts at `gep row, i + 1, 4`: the
    /// counter's value on entry, computed already, is its index (a shift and an
    /// add), not `gep (gep row, i, 4), 1, 4` (an add more, and `i` and `i + 1`
    /// both live). Must not fire when `gep row, i, 4` is computed already (the
    /// diagonal `t[i][i]` read before the inner loop): one add from it is cheaper.
    #[test]
    fn a_pointer_starts_from_the_counters_entry_value_unless_its_start_is_computed() {
        let out = same_behaviour(TRIANGLE, &["strength"], "");
        let outer = &out[out.find("bb1(").unwrap()..out.find("bb2(").unwrap()];
        // (`%2` is the row pointer, `%3` is `i + 1`.)
        assert!(outer.contains("%3 = add %0, 1\n"), "{out}");
        assert!(outer.contains("%4 = gep %2, %3, 4\n"), "{out}");
        assert!(!outer.contains(", 1, 4\n"), "{out}");
        let diagonal = TRIANGLE.replace(
            "  jump bb2(%2, %1)",
            "  %20 = gep %3, %0, 4\n  %21 = load i32, %20\n  %22 = add %1, %21\n  jump bb2(%2, %22)",
        );
        let out = same_behaviour(&diagonal, &["strength"], "");
        let outer = &out[out.find("bb1(").unwrap()..out.find("bb2(").unwrap()];
        assert!(outer.contains("%7 = gep %2, %0, 4\n"), "{out}");
        assert!(outer.contains("%8 = gep %7, 1, 4\n"), "{out}");
        assert!(!outer.contains("gep %2, %3, 4"), "{out}");
    }

    /// Row `i` read over `j` twice: as `b[i][j]` through the row's address
    /// computed before the loop, and as `b[j][i]` of the transpose written
    /// column-first (`gep (gep @b, j, 4), i, 32`, as a column walk from `k = i`
    /// leaves its start). Reassociated, the second's inner gep is `gep @b, i, 32`,
    /// the row's address already computed: reused, both loads go through one
    /// pointer (they had two with the same start). Must not reuse a gep that
    /// does not dominate the loop (computed in a branch arm before it).
    #[test]
    fn a_reassociated_gep_reuses_the_rows_address_and_its_pointer() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void
global @b: [i32; 64] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = gep @b, %0, 32
  jump bb2(0, %1)
bb2(%3: i32, %4: i32):
  %5 = gep %2, %3, 4
  %6 = load i32, %5
  %7 = gep @b, %3, 4
  %8 = gep %7, %0, 32
  %9 = load i32, %8
  %10 = mul %4, 3
  %11 = add %10, %6
  %12 = add %11, %9
  %13 = add %3, 1
  %14 = slt %13, 8
  br %14, bb2(%13, %12), bb3
bb3:
  %15 = add %0, 1
  %16 = slt %15, 8
  br %16, bb1(%15, %12), bb4
bb4:
  call @putint(%12)
  ret 0
}
"#;
        let inner =
            |out: &str| out[out.find("bb2(").unwrap()..out.find("bb3:").unwrap()].to_string();
        // (dce drops the pointer of the original inner gep, left without uses.)
        let out = same_behaviour(src, &["strength", "dce"], "");
        let body = inner(&out);
        assert_eq!(body.matches(": ptr").count(), 1, "{out}");
        assert_eq!(body.matches("load i32, %5\n").count(), 2, "{out}");
        // The row's address only on one arm of a branch before the loop: the
        // preheader computes its own.
        let arm = r#"
declare @getint() -> i32
declare @putint(i32) -> void
global @b: [i32; 64] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  br %1, bb1, bb2
bb1:
  %2 = gep @b, %0, 32
  %3 = load i32, %2
  call @putint(%3)
  jump bb2
bb2:
  jump bb3(0, 0)
bb3(%4: i32, %5: i32):
  %6 = gep @b, %4, 4
  %7 = gep %6, %0, 32
  %8 = load i32, %7
  %9 = add %5, %8
  %10 = add %4, 1
  %11 = slt %10, 8
  br %11, bb3(%10, %9), bb4
bb4:
  call @putint(%9)
  ret 0
}
"#;
        for stdin in ["3 1", "5 0"] {
            let out = same_behaviour(arm, &["strength"], stdin);
            let preheader = &out[out.find("bb2:").unwrap()..out.find("bb3(").unwrap()];
            assert!(preheader.contains("= gep @b, %0, 32\n"), "{out}");
        }
    }

    /// `s += a[4 * i] + a[4 * i + 1] + a[4 * i + 3]` with `i = 5, 7, ..., 13` (a
    /// counter from 5 by 2) and `i = 14, 12, ..., 4` (down by 2): the three columns
    /// of a row are constant offsets from one pointer advancing by 8 elements (or
    /// going back by 8).
    const COLUMNS: &str = r#"
declare @putint(i32) -> void
global @a: [i32; 64] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60]

func @main() -> i32 {
bb0:
  jump bb1(5, 0)
bb1(%0: i32, %1: i32):
  %2 = shl %0, 2
  %3 = gep @a, %2, 4
  %4 = load i32, %3
  %5 = add %2, 1
  %6 = gep @a, %5, 4
  %7 = load i32, %6
  %8 = add %2, 3
  %9 = gep @a, %8, 4
  %10 = load i32, %9
  %11 = add %1, %4
  %12 = add %11, %7
  %13 = add %12, %10
  %14 = add %0, 2
  %15 = slt %14, 15
  br %15, bb1(%14, %13), bb2
bb2:
  call @putint(%13)
  ret 0
}
"#;

    #[test]
    fn constant_columns_of_counters_from_anywhere_by_any_step_share_one_pointer() {
        let down = COLUMNS
            .replace("jump bb1(5, 0)", "jump bb1(14, 0)")
            .replace("add %0, 2\n", "add %0, -2\n")
            .replace("slt %14, 15", "sgt %14, 3");
        // The pointer starts at `a` itself (nothing to compute on entry), the
        // columns of row `i` at `4 * i0` (20 or 56) elements on from it.
        let up = [
            "%2, 20, 4\n",
            "%2, 21, 4\n",
            "%2, 23, 4\n",
            "%2, 8, 4\n  br",
        ];
        let back = [
            "%2, 56, 4\n",
            "%2, 57, 4\n",
            "%2, 59, 4\n",
            "%2, -8, 4\n  br",
        ];
        for (src, columns) in [(COLUMNS.to_string(), up), (down, back)] {
            let out = same_behaviour(&src, &["strength"], "");
            let body = &out[out.find("bb1(").unwrap()..out.find("bb2:").unwrap()];
            assert_eq!(body.matches(": ptr").count(), 1, "{out}");
            assert!(!body.contains("gep @a, %"), "{out}");
            assert!(out.contains(", @a)\n"), "{out}");
            for line in columns {
                assert!(body.contains(line), "{line}: {out}");
            }
        }
    }

    /// `a[15 - i]` in a loop counting `i` up over [0, 15] (an index stepping down),
    /// and `a[3 * i + 2]` with the bound `n` read at run time but clamped to 12 by
    /// a branch (the value ranges bound `i`, so `3 * i + 2` is in [2, 35]): each
    /// becomes a pointer with its accesses at constant offsets, although the loads
    /// run only on some iterations.
    #[test]
    fn indices_stepping_down_or_bounded_by_ranges_become_pointers() {
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32
global @a: [i32; 64] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38]

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 12
  br %1, bb1(12), bb1(%0)
bb1(%2: i32):
  %3 = sgt %2, 0
  br %3, bb6, bb5(0)
bb6:
  jump bb2(0, 0)
bb2(%4: i32, %5: i32):
  %6 = and %5, 1
  %7 = eq %6, 0
  br %7, bb3, bb4(%5)
bb3:
  %8 = sub 15, %4
  %9 = gep @a, %8, 4
  %10 = load i32, %9
  %11 = mul %4, 3
  %12 = add %11, 2
  %13 = gep @a, %12, 4
  %14 = load i32, %13
  %15 = gep @a, %11, 4
  %16 = load i32, %15
  %17 = add %5, %10
  %18 = add %17, %14
  %19 = add %18, %16
  jump bb4(%19)
bb4(%20: i32):
  %21 = add %20, 1
  %22 = add %4, 1
  %23 = slt %22, %2
  br %23, bb2(%22, %21), bb5(%21)
bb5(%24: i32):
  call @putint(%24)
  ret 0
}
"#;
        for stdin in ["5", "12", "40", "-3"] {
            let out = same_behaviour(src, &["strength"], stdin);
            assert!(!out.contains("gep @a, %"), "{out}");
            // (The printer numbers blocks afresh: the loop's header is bb3.)
            let header = out.lines().find(|l| l.starts_with("bb3(")).unwrap();
            assert_eq!(header.matches(": ptr").count(), 2, "{out}");
            for line in [", -1, 4\n", ", 3, 4\n", ", 2, 4\n"] {
                assert!(out.contains(line), "{line}: {out}");
            }
        }
    }

    /// Not exact, so left alone when the access does not run on every iteration:
    /// `a[i * n]` with `i` in [0, 15] and `n` up to 2^28 (the product may pass the
    /// end of `i32`), and `r[i]` through a row `r = &t[k]` that the loop reloads
    /// (a base that is not invariant).
    #[test]
    fn indices_that_may_wrap_and_varying_bases_are_left_alone() {
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32
global @a: [i32; 64] = zeroinit
global @t: [i32; 256] = zeroinit

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 268435456
  br %1, bb1(268435456), bb1(%0)
bb1(%2: i32):
  jump bb2(0, 0)
bb2(%3: i32, %4: i32):
  %5 = and %4, 1
  %6 = eq %5, 0
  br %6, bb3, bb4(%4)
bb3:
  %7 = mul %3, %2
  %8 = gep @a, %7, 4
  %9 = load i32, %8
  %10 = and %9, 3
  %11 = gep @t, %10, 64
  %12 = gep %11, %3, 4
  %13 = load i32, %12
  %14 = add %4, %9
  %15 = add %14, %13
  jump bb4(%15)
bb4(%16: i32):
  %17 = add %16, 1
  %18 = add %3, 1
  %19 = slt %18, 16
  br %19, bb2(%18, %17), bb5
bb5:
  call @putint(%17)
  ret 0
}
"#;
        for stdin in ["0", "1", "3"] {
            let out = same_behaviour(src, &["strength"], stdin);
            assert!(!out.contains(": ptr"), "{out}");
            assert!(
                out.contains("gep @a, %") && out.contains(", %3, 4"),
                "{out}"
            );
        }
    }
}
