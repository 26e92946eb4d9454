//! Load PRE through joins: a load whose value is already in a register on every path
//! into its block (or on all paths but one, where one load is added) is not repeated.
//!
//! This is the load half of LLVM's GVN (`processNonLocalLoad` and `PerformLoadPRE`
//! over MemoryDependence's non-local walk with `PHITransAddr`), in block-argument
//! form. For a load `L` of address `A` in a block `B` with several incoming edges,
//! and nothing before `L` in `B` that may write `A` or leave the block:
//!
//! 1. On each incoming edge `P → B`, `A` is *translated*: every parameter of `B` in
//!    `A`'s address expression (a tree of `gep`s over values) is replaced by the
//!    argument the edge passes.
//! 2. The value at the translated address is looked for at the end of `P`, walking
//!    backwards: a load of the same address and type gives its result, a store of a
//!    value of that type gives the stored value, anything that may write the address
//!    (a store through another pointer into the same object or an unknown one) or
//!    any call (the value would live across it) stops the walk. At the top of `P` the walk
//!    continues into `P`'s predecessors the same way; where `P` has several incoming
//!    edges and the value is found on each, `P` gets a new parameter receiving them.
//! 3. If the value is found on every edge into `B`, `L` is replaced by a new
//!    parameter of `B`. If it is found on all but one edge, from a predecessor whose
//!    only successor is `B` and which `B` does not dominate (not a back edge), `L`'s
//!    translated load is added at the end of that predecessor first: every path still
//!    loads once, and the paths through the others no longer load at all.
//!
//! The case this is for: `if (a[j] < a[m]) m = j;` in a loop. The next iteration's
//! `a[m]` is the `a[j]` just loaded or the `a[m]` loaded before, so the minimum
//! travels in a register and `a[m]` is loaded once, before the loop.
//!
//! Not for predictive commoning: when a back edge brings the value of another load
//! of the previous iteration (`a[i+1]` loaded again as `a[i]`), the load stays for
//! `predcom`, which also unrolls to avoid the register copies.
//!
//! **Edges that are never taken** are left out, as GCC's RPO value numbering
//! (`tree-ssa-sccvn.cc`, which marks edges executable while it numbers) and SCCP do:
//! blocks are visited in reverse postorder, and an edge out of a `br` whose condition
//! folds to a constant ([`crate::fold`], through a few instructions whose operands
//! are constants) leads nowhere, nor does any edge out of a block that only such
//! edges enter. Its value does not matter: a join reached by one live edge takes that
//! value (`g = -1; if (g > 8) g = 8; x = g;` reads `-1` once the test folds), and
//! a new parameter gets a zero on the dead edges. Since the pass replaces loads
//! as it goes, a test below one it made constant folds in the same run, so a chain
//! of clamps (`if (g < lo) g = lo; if (g > hi) g = hi;`) is followed in one pass.
//! Blocks not yet visited (the sources of back edges) count as live.
//!
//! What it must not do: load where the program did not. The added load is on an edge
//! whose block always goes on to `L` with nothing between that could write the
//! address or not return (a call before `L` in `B` stops the pass for `L`), so it
//! reads the same memory `L` would have, only earlier; nothing is added on back
//! edges. Walks are bounded (blocks and instructions per load), and a cycle counts
//! as not available.

use crate::analysis::{FunctionAnalyses, Preserved};
use crate::fold::{fold_binary, fold_cmp, fold_unary, Const};
use crate::passes::value_numbering::gvn::memory::memory_base;
use crate::pipeline::FunctionTransform;
use ir::analysis::DominatorTree;
use ir::{Block, BlockCall, Function, Inst, InstKind, SecondaryMap, Type, Value, ValueDef};
use rustc_hash::FxHashMap;

/// The load PRE pass.
pub struct LoadPre;

impl FunctionTransform for LoadPre {
    const NAME: &'static str = "loadpre";
    const DESCRIPTION: &'static str =
        "loads available on every path into their block (or all but one) are not repeated";
    /// Adds block parameters and loads and removes loads: no block or edge changes.
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// Blocks one load's walk may enter.
const BLOCK_BUDGET: usize = 64;
/// Instructions one load's walk may look at.
const INST_BUDGET: usize = 2048;

/// An address as a tree of `gep`s over values, so that it can be rewritten in terms of
/// a predecessor's values.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Addr {
    Val(Value),
    Gep(Box<Addr>, Box<Addr>, u32),
}

impl Addr {
    /// `p` taken apart into its `gep`s.
    fn of(f: &Function, p: Value) -> Addr {
        if let Some(i) = f.def_inst(p) {
            if let InstKind::Gep {
                base,
                index,
                stride,
            } = *f.kind(i)
            {
                return Addr::Gep(
                    Box::new(Addr::of(f, base)),
                    Box::new(Addr::of(f, index)),
                    stride,
                );
            }
        }
        Addr::Val(p)
    }

    /// Whether `p` taken apart is this address: `Addr::of(f, p) == *self` without
    /// building the tree (the walk asks it of every access it passes).
    fn is_of(&self, f: &Function, p: Value) -> bool {
        let gep = f.def_inst(p).and_then(|i| match *f.kind(i) {
            InstKind::Gep {
                base,
                index,
                stride,
            } => Some((base, index, stride)),
            _ => None,
        });
        match (self, gep) {
            (Addr::Val(v), None) => *v == p,
            (Addr::Gep(b, i, s), Some((base, index, stride))) => {
                *s == stride && b.is_of(f, base) && i.is_of(f, index)
            }
            _ => false,
        }
    }

    /// The address with `b`'s parameters replaced by `args`.
    fn translate(&self, f: &Function, b: Block, args: &[Value]) -> Addr {
        self.translated(f, b, args).unwrap_or_else(|| self.clone())
    }

    /// [`Addr::translate`], or `None` when no parameter of `b` occurs in the
    /// address (it stays as it is: nothing is copied).
    fn translated(&self, f: &Function, b: Block, args: &[Value]) -> Option<Addr> {
        match self {
            Addr::Val(v) => match f.value_def(*v) {
                ValueDef::Param(pb, k) if pb == b => Some(Addr::of(f, args[k as usize])),
                _ => None,
            },
            Addr::Gep(base, index, s) => {
                let (tb, ti) = (base.translated(f, b, args), index.translated(f, b, args));
                if tb.is_none() && ti.is_none() {
                    return None;
                }
                let base = tb.unwrap_or_else(|| (**base).clone());
                let index = ti.unwrap_or_else(|| (**index).clone());
                Some(Addr::Gep(Box::new(base), Box::new(index), *s))
            }
        }
    }

    /// Whether every value of the address is defined at the end of `p`.
    fn valid_at(&self, f: &Function, dt: &DominatorTree, p: Block) -> bool {
        match self {
            Addr::Val(v) => f.value_block(*v).is_none_or(|d| dt.dominates(d, p)),
            Addr::Gep(base, index, _) => base.valid_at(f, dt, p) && index.valid_at(f, dt, p),
        }
    }

    /// The object the address points into (`alloc` or global), if known.
    fn object(&self, f: &Function) -> Option<Value> {
        match self {
            Addr::Val(v) => memory_base(f, *v),
            Addr::Gep(base, _, _) => base.object(f),
        }
    }

    /// Builds the address at the end of `p`, before its terminator `at`, reusing
    /// `gep`s that already compute a part of it there; the pointer.
    fn build(&self, f: &mut Function, dt: &DominatorTree, p: Block, at: Inst) -> Value {
        match self {
            Addr::Val(v) => *v,
            Addr::Gep(base, index, stride) => {
                let base = base.build(f, dt, p, at);
                let index = index.build(f, dt, p, at);
                // Constants and globals have no user lists: look among the other's.
                let tracked = if f.value_def(index).is_constant() {
                    base
                } else {
                    index
                };
                let existing = f.users(tracked).iter().copied().find(|&u| {
                    matches!(*f.kind(u), InstKind::Gep { base: b, index: i, stride: s }
                        if b == base && i == index && s == *stride)
                        && f.layout.inst_block(u).is_some_and(|d| dt.dominates(d, p))
                });
                if let Some(v) = existing.and_then(|u| f.inst_result(u)) {
                    return v;
                }
                let kind = InstKind::Gep {
                    base,
                    index,
                    stride: *stride,
                };
                let i = f.insert_inst_before(at, kind, Type::Ptr);
                f.inst_result(i).expect("gep has a result")
            }
        }
    }
}

/// One incoming edge: the branching block, its terminator and the target's position.
#[derive(Copy, Clone, Debug)]
struct Edge {
    pred: Block,
    term: Inst,
    arm: usize,
}

/// Where the loaded value is found: a value, or a parameter still to be added.
#[derive(Copy, Clone, Debug)]
enum Found {
    Value(Value),
    Join(usize),
}

/// Whether blocks are reached: `Unknown` until the reverse-postorder visit gets to
/// them (then they count as live).
#[derive(Copy, Clone, Default, PartialEq, Eq, Debug)]
enum Reach {
    #[default]
    Unknown,
    Live,
    Dead,
}

/// How many instructions deep a branch condition is folded.
const FOLD_DEPTH: u32 = 4;

/// The constant `v` always is, folding through instructions with constant operands.
fn const_value(f: &Function, v: Value, depth: u32) -> Option<Const> {
    if let Some(c) = Const::of(f, v) {
        return Some(c);
    }
    let depth = depth.checked_sub(1)?;
    match *f.kind(f.def_inst(v)?) {
        InstKind::Binary { op, args: [a, b] } => {
            fold_binary(op, const_value(f, a, depth)?, const_value(f, b, depth)?)
        }
        InstKind::Cmp { op, args: [a, b] } => {
            fold_cmp(op, const_value(f, a, depth)?, const_value(f, b, depth)?)
        }
        InstKind::Unary { op, arg } => fold_unary(op, const_value(f, arg, depth)?),
        _ => None,
    }
}

/// Whether edge `e` may be taken: its block may run, and it is not the arm of a `br`
/// whose condition folds the other way.
fn edge_live(f: &Function, reach: &SecondaryMap<Block, Reach>, e: &Edge) -> bool {
    if reach[e.pred] == Reach::Dead {
        return false;
    }
    match *f.kind(e.term) {
        InstKind::Br { cond, .. } => match const_value(f, cond, FOLD_DEPTH) {
            Some(Const::I(c)) => (e.arm == 0) == (c != 0),
            _ => true,
        },
        _ => true,
    }
}

/// The zero of `ty`, the argument a never-taken edge passes to a new parameter.
fn zero_of(f: &mut Function, ty: Type) -> Option<Value> {
    match ty {
        Type::I32 => Some(f.iconst(0)),
        Type::F32 => Some(f.fconst(0.0)),
        _ => None,
    }
}

/// A parameter to add: its block, and what each incoming edge passes (in the order
/// of the block's edge list).
struct NewParam {
    block: Block,
    args: Vec<Found>,
}

/// Runs the pass over `f`; the number of loads removed.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let (_, dt) = fa.domtree(f);
    // Every edge, from unreachable blocks too: a block with an unreachable
    // predecessor gets no parameter (that branch would lack the argument).
    let mut reachable: SecondaryMap<Block, bool> = f.block_map();
    for &b in dt.rpo() {
        reachable[b] = true;
    }
    let mut edges: SecondaryMap<Block, Vec<Edge>> = f.block_map();
    let mut joinable: SecondaryMap<Block, bool> = f.block_map();
    for b in f.layout.blocks() {
        joinable[b] = true;
    }
    for b in f.layout.blocks() {
        let Some(term) = f.terminator(b) else {
            continue;
        };
        for (arm, t) in f.kind(term).targets().iter().enumerate() {
            edges[t.block].push(Edge { pred: b, term, arm });
            if !reachable[b] {
                joinable[t.block] = false;
            }
        }
    }
    let mut removed = 0;
    let mut reach: SecondaryMap<Block, Reach> = f.block_map();
    for &b in dt.rpo() {
        // After the loads above were replaced: conditions may have become constant.
        reach[b] = if b == f.entry_block() || edges[b].iter().any(|e| edge_live(f, &reach, e)) {
            Reach::Live
        } else {
            Reach::Dead
        };
        if edges[b].len() < 2 || !joinable[b] || b == f.entry_block() || reach[b] == Reach::Dead {
            continue;
        }
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for i in insts {
            let kind = f.kind(i);
            if matches!(kind, InstKind::Store { .. } | InstKind::Call { .. }) {
                break;
            }
            if matches!(kind, InstKind::Load { .. })
                && try_load(f, dt, &edges, &joinable, &reach, b, i)
            {
                removed += 1;
            }
        }
    }
    removed
}

/// Replaces load `i` at the top of join `b` when its value is available (see the
/// module documentation); whether it did.
fn try_load(
    f: &mut Function,
    dt: &DominatorTree,
    edges: &SecondaryMap<Block, Vec<Edge>>,
    joinable: &SecondaryMap<Block, bool>,
    reach: &SecondaryMap<Block, Reach>,
    b: Block,
    i: Inst,
) -> bool {
    let InstKind::Load { ty, ptr } = *f.kind(i) else {
        return false;
    };
    let Some(r) = f.inst_result(i) else {
        return false;
    };
    let zero = zero_of(f, ty);
    let addr = Addr::of(f, ptr);
    let live: Vec<bool> = edges[b].iter().map(|e| edge_live(f, reach, e)).collect();
    if !live.contains(&true) {
        return false;
    }
    // What rules the load out whatever the walks find, before them.
    if edges[b]
        .iter()
        .zip(&live)
        .any(|(e, &l)| l && needs_edge_block(f, dt, e, b))
    {
        return false;
    }
    let mut walk = Walk {
        f,
        dt,
        edges,
        joinable,
        reach,
        zero,
        ty,
        joins: Vec::new(),
        memo: FxHashMap::default(),
        blocks: BLOCK_BUDGET,
        insts: INST_BUDGET,
    };
    let mut found = Vec::new();
    let mut translated = Vec::new();
    let mut missing = 0;
    for (k, e) in edges[b].iter().enumerate() {
        let a = addr.translate(walk.f, b, edge_args(walk.f, e));
        let v = if live[k] && a.valid_at(walk.f, dt, e.pred) {
            walk.at_end(e.pred, &a)
        } else {
            None
        };
        if live[k] && v.is_none() {
            // A load is added on at most one edge, the only way out of a block
            // `b` does not dominate (see below): past that, nothing the other
            // walks find matters.
            missing += 1;
            if missing > 1 || walk.f.successors(e.pred).len() != 1 || dt.dominates(b, e.pred) {
                return false;
            }
        }
        found.push(v);
        translated.push(a);
    }
    // A back edge bringing another load's value from the previous iteration (a
    // stencil's row loaded again one row on) is predictive commoning, `predcom`'s
    // work: carrying it here keeps the loop from unrolling and pipelining as well.
    let reused = edges[b].iter().zip(&found).any(|(e, v)| {
        dt.dominates(b, e.pred)
            && matches!(v, Some(Found::Value(v)) if *v != r
                && walk.f.def_inst(*v).is_some_and(|d| matches!(walk.f.kind(d), InstKind::Load { .. })))
    });
    if reused {
        return false;
    }
    let missing: Vec<usize> = (0..found.len())
        .filter(|&k| live[k] && found[k].is_none())
        .collect();
    let joins = std::mem::take(&mut walk.joins);
    // The value every live edge brings, when it is one value defined above `b`.
    let first = found[live.iter().position(|&l| l).expect("a live edge")];
    let same = match first {
        Some(Found::Value(v))
            if found
                .iter()
                .zip(&live)
                .all(|(x, &l)| !l || matches!(x, Some(Found::Value(w)) if *w == v))
                && f.value_block(v)
                    .is_none_or(|d| d != b && dt.dominates(d, b)) =>
        {
            Some(v)
        }
        _ => None,
    };
    if same.is_none() && live.contains(&false) && zero.is_none() {
        return false;
    }
    match missing.as_slice() {
        [] => {}
        &[k] => {
            let e = edges[b][k];
            if f.successors(e.pred).len() != 1
                || dt.dominates(b, e.pred)
                || !translated[k].valid_at(f, dt, e.pred)
            {
                return false;
            }
            let p = translated[k].build(f, dt, e.pred, e.term);
            let load = f.insert_inst_before(e.term, InstKind::Load { ty, ptr: p }, ty);
            found[k] = Some(Found::Value(
                f.inst_result(load).expect("load has a result"),
            ));
        }
        _ => return false,
    }
    // The added parameters, then their arguments (which may name each other).
    let params: Vec<Value> = joins
        .iter()
        .map(|j| f.append_block_param(j.block, ty))
        .collect();
    let resolve = |x: Found| match x {
        Found::Value(v) => v,
        Found::Join(j) => params[j],
    };
    for (j, p) in joins.iter().enumerate() {
        debug_assert_eq!(f.value_type(params[j]), ty);
        for (k, e) in edges[p.block].iter().enumerate() {
            push_arg(f, e, resolve(p.args[k]));
        }
    }
    let q = if let Some(v) = same.filter(|_| missing.is_empty()) {
        v
    } else {
        // A never-taken edge passes a zero (`zero` exists: checked above).
        let vals: Vec<Value> = found
            .into_iter()
            .zip(&live)
            .map(|(x, &l)| {
                if l {
                    resolve(x.expect("found"))
                } else {
                    zero.expect("a zero of the type")
                }
            })
            .collect();
        let q = f.append_block_param(b, ty);
        for (k, e) in edges[b].iter().enumerate() {
            push_arg(f, e, vals[k]);
        }
        q
    };
    f.replace_all_uses(r, q);
    f.remove_inst(i);
    true
}

/// Whether a new argument on edge `e` into `to` would need a block of its own for
/// the copy: a forward edge from a branch with several successors that passes
/// nothing yet (a critical edge the back end would otherwise not split). The copy
/// and jump cost about what the load did. A `br` whose condition folds has one
/// successor that counts (`simplifycfg` makes it a jump).
fn needs_edge_block(f: &Function, dt: &DominatorTree, e: &Edge, to: Block) -> bool {
    let folded = matches!(*f.kind(e.term), InstKind::Br { cond, .. }
        if const_value(f, cond, FOLD_DEPTH).is_some());
    !folded
        && f.successors(e.pred).len() > 1
        && edge_args(f, e).is_empty()
        && !dt.dominates(to, e.pred)
}

/// The arguments edge `e` passes.
fn edge_args<'f>(f: &'f Function, e: &Edge) -> &'f [Value] {
    let call: &'f BlockCall = f.kind(e.term).targets()[e.arm];
    &call.args
}

/// Appends `v` to the arguments edge `e` passes.
fn push_arg(f: &mut Function, e: &Edge, v: Value) {
    let mut call: BlockCall = f.kind(e.term).targets()[e.arm].clone();
    call.args.push(v);
    f.set_target(e.term, e.arm, call);
}

/// One load's backward search.
struct Walk<'a> {
    f: &'a Function,
    dt: &'a DominatorTree,
    edges: &'a SecondaryMap<Block, Vec<Edge>>,
    joinable: &'a SecondaryMap<Block, bool>,
    reach: &'a SecondaryMap<Block, Reach>,
    /// The zero of `ty`, passed on never-taken edges.
    zero: Option<Value>,
    ty: Type,
    joins: Vec<NewParam>,
    /// Per block, per address: the value at the block's top (`None` also while
    /// the block is being searched, so a cycle counts as not available). Keyed by
    /// block first, so that a lookup needs no copy of the address.
    memo: FxHashMap<Block, Vec<(Addr, Option<Found>)>>,
    blocks: usize,
    insts: usize,
}

impl Walk<'_> {
    /// The value at `a` at the end of `p`.
    fn at_end(&mut self, p: Block, a: &Addr) -> Option<Found> {
        let f = self.f;
        let mut at = f.layout.last_inst(p);
        while let Some(i) = at {
            at = f.layout.prev_inst(i);
            self.insts = self.insts.checked_sub(1)?;
            match *f.kind(i) {
                InstKind::Load { ty, ptr } if ty == self.ty && a.is_of(f, ptr) => {
                    return f.inst_result(i).map(Found::Value);
                }
                InstKind::Store { value, ptr } => {
                    if a.is_of(f, ptr) {
                        return (f.value_type(value) == self.ty).then_some(Found::Value(value));
                    }
                    // `memory_base` follows the `gep`s: `Addr::of(f, ptr).object(f)`.
                    match (memory_base(f, ptr), a.object(f)) {
                        (Some(x), Some(y)) if x != y => {}
                        _ => return None,
                    }
                }
                // A call that may write ends the search; so does one that cannot: the
                // value would have to live across it, in a callee-saved register
                // the function may not use otherwise (or on the stack).
                InstKind::Call { .. } => return None,
                _ => {}
            }
        }
        self.at_top(p, a)
    }

    /// The value at `a` at the top of `p`.
    fn at_top(&mut self, p: Block, a: &Addr) -> Option<Found> {
        let f = self.f;
        if p == f.entry_block() || !self.joinable[p] {
            return None;
        }
        if let Some(known) = self.memoised(p, a) {
            return known;
        }
        self.blocks = self.blocks.checked_sub(1)?;
        self.memo.entry(p).or_default().push((a.clone(), None));
        let edges = &self.edges[p];
        let mark = self.joins.len();
        // What each edge brings; `None` for a never-taken one.
        let mut args: Vec<Option<Found>> = Vec::with_capacity(edges.len());
        for e in edges {
            if !edge_live(f, self.reach, e) {
                args.push(None);
                continue;
            }
            let t = a.translated(f, p, edge_args(f, e));
            let t = t.as_ref().unwrap_or(a);
            let v = if t.valid_at(f, self.dt, e.pred) {
                self.at_end(e.pred, t)
            } else {
                None
            };
            match v {
                Some(v) => args.push(Some(v)),
                None => {
                    // Forget the parameters found on the way: nothing will use them.
                    self.forget(mark);
                    return None;
                }
            }
        }
        let live: Vec<Found> = args.iter().flatten().copied().collect();
        let same = match live.first() {
            Some(&Found::Value(v)) => live
                .iter()
                .all(|a| matches!(a, Found::Value(w) if *w == v))
                .then_some(v)
                .filter(|&v| {
                    f.value_block(v)
                        .is_none_or(|d| d != p && self.dt.dominates(d, p))
                }),
            _ => None,
        };
        let found = match live.as_slice() {
            [] => return None,
            [one] if args.len() == 1 => *one,
            // One value on every live edge, defined above: no parameter needed.
            _ if same.is_some() => Found::Value(same.expect("checked")),
            _ if edges
                .iter()
                .zip(&args)
                .any(|(e, x)| x.is_some() && needs_edge_block(f, self.dt, e, p))
                || (live.len() < args.len() && self.zero.is_none()) =>
            {
                self.forget(mark);
                return None;
            }
            _ => {
                let zero = self.zero;
                let args = args
                    .into_iter()
                    .map(|x| x.unwrap_or_else(|| Found::Value(zero.expect("checked"))))
                    .collect();
                self.joins.push(NewParam { block: p, args });
                Found::Join(self.joins.len() - 1)
            }
        };
        self.memoise(p, a, Some(found));
        Some(found)
    }

    /// What the memo holds for `a` at the top of `p`, if anything.
    fn memoised(&self, p: Block, a: &Addr) -> Option<Option<Found>> {
        let known = self.memo.get(&p)?;
        known.iter().find(|(x, _)| x == a).map(|&(_, r)| r)
    }

    /// Records `found` for `a` at the top of `p` (entered when its search began).
    fn memoise(&mut self, p: Block, a: &Addr, found: Option<Found>) {
        let known = self.memo.entry(p).or_default();
        match known.iter_mut().find(|(x, _)| x == a) {
            Some(entry) => entry.1 = found,
            None => known.push((a.clone(), found)),
        }
    }

    /// Drops the parameters from `mark` on, found on a walk that failed: nothing
    /// will use them.
    fn forget(&mut self, mark: usize) {
        if self.joins.len() <= mark {
            // No parameter from `mark` on: the memo holds none to drop (a `Join`
            // always names one of `joins`), and a walk that fails at every block
            // would otherwise go over the whole memo at each.
            return;
        }
        self.joins.truncate(mark);
        for known in self.memo.values_mut() {
            known.retain(|(_, x)| !matches!(x, Some(Found::Join(j)) if *j >= mark));
        }
    }
}

#[cfg(test)]
mod tests;
