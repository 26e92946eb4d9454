//! Loop-invariant code motion: computations whose operands do not change inside a
//! loop move to the loop's preheader, so they run once per entry into the loop
//! instead of once per iteration.
//!
//! The classic algorithm (Aho, Lam, Sethi, Ullman, "Compilers", 9.5.2; Muchnick,
//! "Advanced Compiler Design and Implementation", 13.2), on SSA: loops are visited
//! innermost first; in each, the blocks in reverse post-order and their instructions
//! in order. An instruction is invariant when every operand is defined outside the
//! loop (constants included) — operands hoisted a moment earlier count, so chains of
//! invariant computations move together. What is then moved depends on what the
//! instruction could do if executed when the original program would not run it:
//!
//! - Arithmetic that cannot trap, comparisons, conversions, address arithmetic and
//!   division by a constant other than 0 and -1 are *speculatable*: they move
//!   whenever invariant.
//! - A load moves when nothing in the loop may write the memory it reads (stores and
//!   calls are summarised per loop, by base object: a local `alloc`, a global, memory
//!   reached through a pointer parameter — which can be a global but never this
//!   call's own `alloc`s; a pointer block parameter counts as the object all its
//!   values point into, [`PointerRoots`]), or every write of the loop to its object is a
//!   store whose bytes miss it by offsets, strides and value ranges (`m[x][3]` while the
//!   loop stores `m[i][2]`: [`Hoist::stores_miss`]), and either its address is provably
//!   valid or the load is guaranteed to execute. Valid ([`crate::analysis::deref`]):
//!   inside a global or `alloc`, or inside what accesses through a pointer parameter made
//!   before the loop prove of its object (LLVM's `isSafeToSpeculativelyExecute` with the
//!   dereferenceable bytes its Attributor deduces), at offsets bounded by constant indices
//!   or the [`Ranges`] of variable ones (`p[x & 1]` after a load of `p[1]`).
//! - Division by a variable, and calls to functions without side effects (pure, or
//!   only reading memory nothing in the loop writes), move only when guaranteed to
//!   execute: they might trap or not terminate.
//! - A store of an invariant value to an invariant address moves when guaranteed to
//!   execute and nothing else in the loop may read or write that memory (no aliasing
//!   load or store, no call that touches memory): storing the same value on every
//!   iteration is storing it once.
//!
//! *Guaranteed to execute* means: whenever the loop is entered, the instruction runs
//! before anything observable happens and before the loop is left. That holds when
//! every path from the header reaches its block without passing a block that leaves
//! the loop (or returns), a latch, an inner loop, or an instruction that might trap,
//! not terminate or show in the output (a call, a division; not a store:
//! [`stops_execution`]) — and the same for the instructions before it in its block. In a rotated loop
//! ([`super::looprotate`]) the body's first block satisfies this.
//!
//! Loops without a preheader (a block whose only successor is the header, entered
//! from outside) get one first.

use crate::analysis::deref::{self, DerefContext, ParamAccesses};
use crate::analysis::modref::Access;
use crate::analysis::param_targets::origin;
use crate::analysis::ranges::Ranges;
use crate::analysis::{
    address_root, pointer_base, AnalysisManager, DisjointParams, FunctionAnalyses, LoopForest,
    LoopId, ModRef, ParamTargets, PointerBase, PointerRoots, Preserved, Targets,
};
use crate::passes::memory::locmap::disjoint_in_object;
use crate::passes::value_numbering::gvn::memory::memory_base;
use crate::pipeline::Pass;
use ir::analysis::{address_residue, residues_may_overlap, ControlFlowGraph, DominatorTree};
use ir::{Block, Function, Inst, InstKind, Module, SecondaryMap, Type, Value, ValueDef};
use rustc_hash::FxHashMap;

/// The loop-invariant code motion pass.
pub struct Licm;

impl Pass for Licm {
    fn name(&self) -> &'static str {
        "licm"
    }
    fn description(&self) -> &'static str {
        "hoist loop-invariant computations, loads and pure calls into preheaders"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let modref = am.modref(m);
        let sizes = GlobalSizes::of(m);
        let targets = ParamTargets::compute(m);
        let disjoint = DisjointParams::compute(m, &targets);
        am.each_function_by_id(m, |id, f, fa| {
            let apart = |i: usize, j: usize| disjoint.disjoint(id, i, j);
            run_in(f, &modref, &sizes, targets.of(id), &apart, fa) > 0
        })
    }
}

/// Byte sizes of the module's globals, for proving loads in bounds.
pub struct GlobalSizes(Vec<u64>);

impl GlobalSizes {
    /// The sizes of `m`'s globals.
    pub fn of(m: &Module) -> Self {
        GlobalSizes(crate::analysis::deref::global_sizes(m))
    }
}

/// Hoists what it can out of every loop of `f`, whose pointer parameters point
/// into `params` ([`ParamTargets`]) and, by position, never share an object when
/// `apart` says so ([`DisjointParams`]), with the CFG, dominator tree and loops
/// taken from `fa` (computed anew after preheaders are added; hoisting itself
/// changes no edge). Returns how many instructions moved plus how many preheaders
/// were created (so that a change to the CFG alone counts as a change).
fn run_in(
    f: &mut Function,
    modref: &ModRef,
    sizes: &GlobalSizes,
    params: &[Targets],
    apart: &dyn Fn(usize, usize) -> bool,
    fa: &mut FunctionAnalyses,
) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let (cfg, _, loops) = fa.loops(f);
    if loops.is_empty() {
        return 0;
    }
    let ids: Vec<LoopId> = loops.loops().map(|(id, _)| id).collect();
    let mut added = 0;
    if ids.iter().any(|&id| loops.preheader(id, cfg).is_none()) {
        // Preheaders are inserted one by one into a CFG kept up to date.
        let mut cfg = cfg.clone();
        let loops = loops.clone();
        for &id in &ids {
            if loops.preheader(id, &cfg).is_none() {
                insert_preheader(f, &mut cfg, &loops, id);
                added += 1;
            }
        }
        fa.forget();
    }
    let ranges = {
        let (cfg, _, loops) = fa.loops(f);
        ranges_for_speculation(f, cfg, loops)
    };
    let ranges = ranges.as_ref();
    let mut moved = added + hoist_loops(f, modref, sizes, params, apart, fa, ranges);
    // Choices made invariant let more move; a chain of clamps takes a round each.
    for _ in 0..MAX_CHOICE_ROUNDS {
        let (cfg, _, loops) = fa.loops(f);
        let n = super::invselect::hoist_choices(f, cfg, loops);
        if n == 0 {
            break;
        }
        fa.forget();
        moved += n + hoist_loops(f, modref, sizes, params, apart, fa, ranges);
    }
    moved
}

/// Rounds of [`super::invselect`] (each followed by hoisting) per function.
const MAX_CHOICE_ROUNDS: usize = 8;

/// Hoists what it can out of every loop of `f`, each of which has a preheader.
fn hoist_loops(
    f: &mut Function,
    modref: &ModRef,
    sizes: &GlobalSizes,
    params: &[Targets],
    apart: &dyn Fn(usize, usize) -> bool,
    fa: &mut FunctionAnalyses,
    ranges: Option<&Ranges>,
) -> usize {
    let (cfg, dt, loops) = fa.loops(f);
    let mut moved = 0;
    let ids: Vec<LoopId> = loops.loops().map(|(id, _)| id).collect();
    // What each loop writes, inner loops' writes included, built innermost first
    // from each loop's own blocks (hoisting only moves code within a loop's
    // region, so the sets stay right as the inner loops are processed).
    // Each loop's own blocks (not its inner loops'), listed in one pass.
    let own = loops.own_blocks(cfg);
    let roots = PointerRoots::compute(f);
    let accesses = ParamAccesses::of(f);
    let mut all_writes: Vec<LoopWrites> = Vec::with_capacity(ids.len());
    for &id in &ids {
        let mut w = LoopWrites::of(f, modref, params, &roots, &own[id.0 as usize]);
        for c in &loops.get(id).children {
            let inner = &all_writes[c.0 as usize];
            w.union(inner);
        }
        all_writes.push(w);
    }
    // With every loop given a preheader, an inner loop has already hoisted all
    // that its enclosing loops could take from its blocks (invariance in the outer
    // loop implies it in the inner one, and the outer loop may hoist nothing from
    // an inner loop's blocks that needs guaranteed execution), so each loop visits
    // only its own blocks: linear in the code, not in code x nesting depth.
    let own_blocks_only = ids.iter().all(|&id| loops.preheader(id, cfg).is_some());
    for id in ids {
        let Some(ph) = loops.preheader(id, cfg) else {
            continue;
        };
        let writes = std::mem::take(&mut all_writes[id.0 as usize]);
        let mut ctx = Hoist {
            apart,
            params,
            f,
            cfg,
            dt,
            loops,
            id,
            modref,
            sizes,
            writes,
            roots: &roots,
            guaranteed: SecondaryMap::new(),
            own_blocks: own_blocks_only.then_some(&own[id.0 as usize][..]),
            ranges,
            stores: None,
            ph,
            accesses: &accesses,
        };
        moved += ctx.hoist_into(ph);
    }
    moved
}

/// Gives every loop without a preheader one ([`insert_preheader`]); returns how
/// many were added. Simplifycfg removes those left unused.
pub(crate) fn add_preheaders(f: &mut Function) -> usize {
    let mut cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let missing: Vec<LoopId> = loops
        .loops()
        .map(|(id, _)| id)
        .filter(|&id| loops.preheader(id, &cfg).is_none())
        .collect();
    for &id in &missing {
        super::licm::insert_preheader(f, &mut cfg, &loops, id);
    }
    missing.len()
}

/// Gives loop `id` a preheader: a new block taking every edge that enters the header
/// from outside the loop and jumping to the header. The edges of `cfg` are kept up
/// to date (its reverse post-order is not); `loops` stays valid for the other
/// loops (the preheader belongs to the loop enclosing `id`, which the forest
/// does not record).
pub(crate) fn insert_preheader(
    f: &mut Function,
    cfg: &mut ControlFlowGraph,
    loops: &LoopForest,
    id: LoopId,
) {
    let header = loops.get(id).header;
    let outside: Vec<Block> = cfg
        .unique_preds(header)
        .into_iter()
        .filter(|&p| !loops.contains(id, p))
        .collect();
    let ph = f.create_block();
    let before = f
        .layout
        .prev_block(header)
        .expect("a loop header is not the entry");
    f.layout.insert_block_after(ph, before);
    let tys: Vec<Type> = f
        .block_params(header)
        .iter()
        .map(|&p| f.value_type(p))
        .collect();
    let params: Vec<Value> = tys.iter().map(|&t| f.append_block_param(ph, t)).collect();
    f.append_inst(
        ph,
        InstKind::Jump {
            dest: Box::new(ir::BlockCall::new(header, params.clone())),
        },
        Type::Void,
    );
    cfg.update_edges_of(f, ph);
    for pred in outside {
        let Some(term) = f.terminator(pred) else {
            continue;
        };
        let n = f.kind(term).targets().len();
        for which in 0..n {
            let mut t = f.kind(term).targets()[which].clone();
            if t.block == header {
                t.block = ph;
                f.set_target(term, which, t);
            }
        }
        cfg.update_edges_of(f, pred);
    }
    // With a single entering edge the parameters just rename its arguments.
    crate::ssa::remove_trivial_params_with(f, cfg, &params);
}

/// What the instructions of a loop may write.
#[derive(Default)]
struct LoopWrites {
    /// Some store or call may write memory we cannot name.
    unknown: bool,
    /// Locals (`alloc` results) stored to.
    locals: Vec<Value>,
    /// Globals stored to.
    globals: Vec<ir::GlobalId>,
    /// Some store writes through a pointer parameter that may point anywhere, or a
    /// call writes through one of its pointer arguments that is not a local.
    params: bool,
    /// Some store writes through a pointer parameter known to point into `globals`
    /// (which it was added to) or into a caller's local.
    param_memory: bool,
    /// Some call writes globals, unknown which.
    all_globals: bool,
    /// Globals stored to directly (not through a parameter).
    direct_globals: Vec<ir::GlobalId>,
    /// Positions of the pointer parameters stored through.
    param_roots: Vec<usize>,
    /// Some call writes through a pointer argument that is not a local.
    call_args: bool,
}

impl LoopWrites {
    /// The writes of `own`, the blocks whose innermost loop is the loop (not
    /// those of its inner loops: see [`LoopWrites::union`]).
    fn of(
        f: &Function,
        modref: &ModRef,
        params: &[Targets],
        roots: &PointerRoots,
        own: &[Block],
    ) -> Self {
        let mut w = LoopWrites::default();
        for &b in own {
            for i in f.layout.block_insts(b) {
                match f.kind(i) {
                    InstKind::Store { ptr, .. } => {
                        w.add_write(f, params, roots.object_pointer(f, *ptr))
                    }
                    InstKind::Call { callee, args } => {
                        let writes = &modref.info(*callee).writes;
                        w.unknown |= writes.any;
                        w.all_globals |= writes.any_global;
                        for &g in &writes.globals {
                            w.add_global(g);
                        }
                        // The pointers it passes where the callee writes.
                        for (k, &a) in args.iter().enumerate() {
                            let written = writes.all_params || writes.params.contains(&(k as u32));
                            if written && f.value_type(a) == Type::Ptr {
                                let a = roots.object_pointer(f, a);
                                if !matches!(pointer_base(f, a), PointerBase::Local(_)) {
                                    w.call_args = true;
                                }
                                w.add_write(f, params, a);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        w
    }

    /// Adds what `other` writes.
    fn union(&mut self, other: &LoopWrites) {
        self.unknown |= other.unknown;
        self.params |= other.params;
        self.param_memory |= other.param_memory;
        self.all_globals |= other.all_globals;
        self.call_args |= other.call_args;
        for &g in &other.direct_globals {
            if !self.direct_globals.contains(&g) {
                self.direct_globals.push(g);
            }
        }
        for &k in &other.param_roots {
            if !self.param_roots.contains(&k) {
                self.param_roots.push(k);
            }
        }
        for &a in &other.locals {
            if !self.locals.contains(&a) {
                self.locals.push(a);
            }
        }
        for &g in &other.globals {
            if !self.globals.contains(&g) {
                self.globals.push(g);
            }
        }
    }

    /// A write of global `g` by name (not through a parameter).
    fn add_global(&mut self, g: ir::GlobalId) {
        if !self.globals.contains(&g) {
            self.globals.push(g);
        }
        if !self.direct_globals.contains(&g) {
            self.direct_globals.push(g);
        }
    }

    fn add_write(&mut self, f: &Function, params: &[Targets], ptr: Value) {
        match pointer_base(f, ptr) {
            PointerBase::Local(a) => {
                if !self.locals.contains(&a) {
                    self.locals.push(a);
                }
            }
            PointerBase::Global => match global_of(f, ptr) {
                Some(g) => self.add_global(g),
                None => self.unknown = true,
            },
            PointerBase::Param => match origin(f, ptr, params) {
                Targets::Known(gs) => {
                    self.param_memory = true;
                    for g in gs {
                        if !self.globals.contains(&g) {
                            self.globals.push(g);
                        }
                    }
                }
                Targets::Unknown => self.params = true,
            },
            PointerBase::Unknown => self.unknown = true,
        }
        if let Some(k) = param_position(f, ptr) {
            if !self.param_roots.contains(&k) {
                self.param_roots.push(k);
            }
        }
    }

    /// Whether a load through parameter `k` (which points into `targets`) may
    /// read something the loop writes, when parameters `apart` never share an
    /// object: only stores through parameters it may share one with, stores to
    /// globals it may point into, and unknown writes count.
    fn may_clobber_param(
        &self,
        k: usize,
        targets: &Targets,
        apart: &dyn Fn(usize, usize) -> bool,
    ) -> bool {
        if self.unknown || self.all_globals || self.call_args {
            return true;
        }
        if self.param_roots.iter().any(|&j| j == k || !apart(j, k)) {
            return true;
        }
        match targets {
            Targets::Known(gs) => self.direct_globals.iter().any(|g| gs.contains(g)),
            Targets::Unknown => !self.direct_globals.is_empty(),
        }
    }

    fn is_empty(&self) -> bool {
        !self.unknown
            && self.locals.is_empty()
            && self.globals.is_empty()
            && !self.params
            && !self.param_memory
            && !self.all_globals
    }

    /// Whether the loop may write global `g` (named, or through a pointer
    /// parameter, which may point into any global).
    fn may_clobber_global(&self, g: ir::GlobalId) -> bool {
        self.unknown || self.params || self.all_globals || self.globals.contains(&g)
    }

    /// Whether the loop may write some global.
    fn may_write_globals(&self) -> bool {
        self.unknown || self.params || self.all_globals || !self.globals.is_empty()
    }

    /// Whether a load through `ptr` may read something the loop writes.
    fn may_clobber(&self, f: &Function, ptr: Value) -> bool {
        if self.unknown {
            return true;
        }
        match pointer_base(f, ptr) {
            PointerBase::Local(a) => self.locals.contains(&a),
            // A pointer parameter may point into a global (not into this call's
            // own allocations).
            PointerBase::Global => match global_of(f, ptr) {
                Some(g) => self.may_clobber_global(g),
                None => true,
            },
            PointerBase::Param => {
                self.params || self.param_memory || self.all_globals || !self.globals.is_empty()
            }
            PointerBase::Unknown => !self.is_empty(),
        }
    }
}

/// The global a pointer into a global points into.
/// The position of the function parameter `p` points into, if its base is one.
fn param_position(f: &Function, p: Value) -> Option<usize> {
    let (root, _) = address_root(f, p);
    match f.value_def(root) {
        ValueDef::Param(b, k) if b == f.entry_block() => Some(k as usize),
        _ => None,
    }
}

fn global_of(f: &Function, p: Value) -> Option<ir::GlobalId> {
    match f.value_def(address_root(f, p).0) {
        ValueDef::Global(g) => Some(g),
        _ => None,
    }
}

/// Whether the code after `k` might not run when `k` does, or the program's output
/// might show `k` ran before it (which code moved above `k` must not change): a
/// call, a trapping instruction. A store neither traps (an access outside its
/// array is undefined in SysY) nor shows in the output by itself, so it stops
/// nothing: a load after it, which no store of the loop may clobber, still runs
/// whenever the loop is entered.
fn stops_execution(f: &Function, k: &InstKind, ranges: Option<&Ranges>) -> bool {
    !matches!(k, InstKind::Store { .. }) && (k.has_side_effects() || may_trap(f, k, ranges))
}

/// Whether accesses through `p` and `q` may touch the same memory: unless they point
/// into different objects (distinct `alloc`s or globals, or a local and anything
/// else — a pointer parameter never points into this call's own allocations).
fn may_alias(f: &Function, p: Value, q: Value) -> bool {
    match (pointer_base(f, p), pointer_base(f, q)) {
        (PointerBase::Local(a), PointerBase::Local(b)) => a == b,
        (PointerBase::Local(_), _) | (_, PointerBase::Local(_)) => false,
        (PointerBase::Global, PointerBase::Global) => match (global_of(f, p), global_of(f, q)) {
            (Some(g), Some(h)) => g == h,
            _ => true,
        },
        _ => true,
    }
}

/// Whether a `ta` access at `p` and a `tb` access at `q` may overlap: they may
/// alias ([`may_alias`]), and when both are offsets from the same pointer, some
/// offsets they can be at put their byte ranges in contact: constant offsets are
/// compared, and variable indices leave offsets in a residue class modulo their
/// strides' greatest common divisor (`a[x][2]` never meets `a[1][1]` in a
/// `float a[3][3]`: BasicAA's GCD test, [`residues_may_overlap`]).
pub(crate) fn may_overlap(f: &Function, p: Value, ta: Type, q: Value, tb: Type) -> bool {
    may_alias(f, p, q)
        && residues_may_overlap(
            address_residue(f, p),
            i64::from(ta.size()),
            address_residue(f, q),
            i64::from(tb.size()),
        )
}

/// Whether an instruction could trap or fail to terminate: divisions by anything
/// but a value whose range (`ranges`, when solved) excludes 0 and -1 (a constant
/// other than those, or `x % 14 + 15`: as LLVM's `isSafeToSpeculativelyExecute`
/// asks whether the divisor is known non-zero and not -1), and calls.
fn may_trap(f: &Function, k: &InstKind, ranges: Option<&Ranges>) -> bool {
    match k {
        InstKind::Binary { op, args } if op.can_trap() => {
            !Ranges::divisor_is_safe(ranges, f, args[1])
        }
        InstKind::Call { .. } => true,
        _ => false,
    }
}

/// The value ranges of `f` when some loop divides by a value that is not a
/// constant (what [`may_trap`] asks them, for every division of a loop), or when
/// loops load at an index that is not one (what [`deref::extent`] and
/// [`disjoint_in_object`] bound with them) and some load's address may become
/// invariant (they are asked only for the loads that are candidates for
/// hoisting), else none: the solve is skipped for the many functions that have
/// neither (a load `a[i]` of a loop's counter `i` stays in its loop).
fn ranges_for_speculation(
    f: &Function,
    cfg: &ControlFlowGraph,
    loops: &LoopForest,
) -> Option<Ranges> {
    let variable = |v: Value| f.as_iconst(v).is_none();
    let indexed = |p: Value| {
        let mut any = false;
        ir::analysis::walk_geps(f, p, |index, _| any |= variable(index));
        any
    };
    let mut invariant = MayBecomeInvariant {
        f,
        cfg,
        loops,
        memo: FxHashMap::default(),
    };
    // The ranges are asked of every division of a loop, and, for a load that
    // may be hoisted, of its address and of every store of the loop.
    let (mut divides, mut indexed_load, mut candidate_load) = (false, false, false);
    for b in f.layout.blocks() {
        let Some(lp) = loops.innermost(b) else {
            continue;
        };
        for i in f.layout.block_insts(b) {
            match *f.kind(i) {
                InstKind::Binary { op, args } => divides |= op.can_trap() && variable(args[1]),
                InstKind::Load { ptr, .. } => {
                    indexed_load |= indexed(ptr);
                    candidate_load = candidate_load || invariant.value(ptr, lp);
                }
                _ => {}
            }
        }
    }
    let asks = divides || (indexed_load && candidate_load);
    asks.then(|| Ranges::compute(f, cfg))
}

/// Which values may become invariant in a loop as licm goes (a superset of those
/// it can hoist): defined outside the loop, computed by an instruction from such
/// values (hoisted in turn), or a parameter of a block of the loop other than
/// its header (or an inner loop's) whose every incoming value is such a value
/// ([`super::invselect`] decides such a choice in the preheader). A parameter of
/// the header of the loop or of an inner loop takes a new value on each trip: it
/// stays, and so does what is computed from it.
struct MayBecomeInvariant<'a> {
    f: &'a Function,
    cfg: &'a ControlFlowGraph,
    loops: &'a LoopForest,
    memo: FxHashMap<(Value, LoopId), bool>,
}

impl MayBecomeInvariant<'_> {
    fn value(&mut self, v: Value, lp: LoopId) -> bool {
        let (f, loops) = (self.f, self.loops);
        let Some(b) = f.value_block(v) else {
            return true;
        };
        if !loops.contains(lp, b) {
            return true;
        }
        if let Some(&known) = self.memo.get(&(v, lp)) {
            return known;
        }
        // Parameters reach back only through blocks of `lp` that are no loop
        // header (each cycle of the loop passes one), so the walk ends.
        let result = match f.value_def(v) {
            ValueDef::Inst(i) => {
                let mut args = Vec::new();
                f.kind(i).for_each_arg(|a| args.push(a));
                args.into_iter().all(|a| self.value(a, lp))
            }
            ValueDef::Param(pb, idx) => {
                let header = loops
                    .innermost(pb)
                    .is_some_and(|l| loops.get(l).header == pb);
                !header && {
                    let mut incoming = Vec::new();
                    for &p in self.cfg.preds(pb) {
                        if let Some(term) = f.terminator(p) {
                            for t in f.kind(term).targets() {
                                if t.block == pb {
                                    incoming.push(t.args[idx as usize]);
                                }
                            }
                        }
                    }
                    incoming.into_iter().all(|a| self.value(a, lp))
                }
            }
            _ => true,
        };
        self.memo.insert((v, lp), result);
        result
    }
}

struct Hoist<'a> {
    /// Whether two pointer parameters (by position) never share an object.
    apart: &'a dyn Fn(usize, usize) -> bool,
    /// What the pointer parameters may point into.
    params: &'a [Targets],
    f: &'a mut Function,
    cfg: &'a ControlFlowGraph,
    dt: &'a DominatorTree,
    loops: &'a LoopForest,
    id: LoopId,
    modref: &'a ModRef,
    sizes: &'a GlobalSizes,
    writes: LoopWrites,
    /// The objects behind pointer block parameters.
    roots: &'a PointerRoots,
    /// Per block of the loop: whether reaching its first instruction is guaranteed
    /// once the loop is entered (computed on demand).
    guaranteed: SecondaryMap<Block, Option<bool>>,
    /// Visit only these blocks, those whose innermost loop is this one (all
    /// the loop's blocks when `None`).
    own_blocks: Option<&'a [Block]>,
    /// Value ranges of the function as it was before this pass ([`may_trap`]);
    /// values made since have none and count as unknown.
    ranges: Option<&'a Ranges>,
    /// The loop's stores by object ([`Hoist::loop_stores`]), found on first use.
    stores: Option<Option<StoresByObject>>,
    /// The loop's preheader, where hoisted code goes.
    ph: Block,
    /// The accesses through pointer parameters, which prove how far they reach.
    accesses: &'a ParamAccesses,
}

/// Stores by the object they write (a global or `alloc`): address and size.
type StoresByObject = FxHashMap<Value, Vec<(Value, i64)>>;

/// Instructions of a loop (inner loops included) [`Hoist::loop_stores`] looks
/// at before giving up: deep nests would otherwise be scanned once per level.
const STORE_SCAN_LIMIT: usize = 2048;

impl Hoist<'_> {
    /// Moves the loop's invariant instructions to the end of `ph`.
    fn hoist_into(&mut self, ph: Block) -> usize {
        let mut moved = 0;
        let blocks: Vec<Block> = match self.own_blocks {
            Some(own) => own.to_vec(),
            None => self.loops.get(self.id).blocks.to_vec(),
        };
        for b in blocks {
            // Still on the guaranteed prefix of the block: nothing before the current
            // instruction could trap, loop or have a side effect.
            let mut clear = true;
            let insts: Vec<Inst> = self.f.layout.block_insts(b).collect();
            for i in insts {
                let k = self.f.kind(i);
                if k.is_terminator() {
                    break;
                }
                if self.invariant(i) && self.may_hoist(b, i, clear) {
                    let term = self.f.terminator(ph).expect("preheader ends in a jump");
                    self.f.layout.remove_inst(i);
                    self.f.layout.insert_inst_before(i, term);
                    moved += 1;
                    continue;
                }
                if stops_execution(self.f, self.f.kind(i), self.ranges) {
                    clear = false;
                }
            }
        }
        moved
    }

    /// Whether every operand of `i` is defined outside the loop.
    fn invariant(&self, i: Inst) -> bool {
        let mut ok = true;
        self.f.kind(i).for_each_arg(|a| {
            if let Some(b) = self.f.value_block(a) {
                ok &= !self.loops.contains(self.id, b);
            }
        });
        ok
    }

    /// Whether moving invariant `i` of block `b` to the preheader is safe; `clear`
    /// says nothing before it in `b` could trap, loop or have a side effect.
    fn may_hoist(&mut self, b: Block, i: Inst, clear: bool) -> bool {
        let k = self.f.kind(i).clone();
        let guaranteed = |s: &mut Self| clear && s.block_guaranteed(b);
        match k {
            InstKind::Binary { .. } if !may_trap(self.f, &k, self.ranges) => true,
            InstKind::Binary { .. } => guaranteed(self),
            InstKind::Cmp { .. } | InstKind::Unary { .. } | InstKind::Gep { .. } => true,
            InstKind::Load { ty, ptr } => {
                let unwritten = !self.clobbered(ptr) || self.stores_miss(ptr, ty);
                unwritten && (self.valid_address(ptr, ty) || guaranteed(self))
            }
            InstKind::Call { callee, args } => {
                let info = self.modref.info(callee);
                let reads_ok =
                    self.writes.is_empty() || !self.call_reads_clobbered(&info.reads, &args);
                !info.effects().has_side_effects() && reads_ok && guaranteed(self)
            }
            InstKind::Store { ptr, .. } => guaranteed(self) && self.only_access(i, ptr),
            _ => false,
        }
    }

    /// Whether the loop may write the memory a load through `ptr` reads.
    fn clobbered(&self, ptr: Value) -> bool {
        // Which object it reads (through pointer block parameters).
        let obj = self.roots.object_pointer(self.f, ptr);
        match param_position(self.f, obj) {
            Some(k) => {
                let targets = self.params.get(k).unwrap_or(&Targets::Unknown);
                self.writes.may_clobber(self.f, obj)
                    && self.writes.may_clobber_param(k, targets, self.apart)
            }
            None => self.writes.may_clobber(self.f, obj),
        }
    }

    /// Whether every write of the loop to the object `ptr` points into (a global
    /// or an `alloc`) is a store whose bytes miss those of a `ty` load at `ptr`,
    /// by constant offsets, the GCD of variable strides and the indices' value
    /// ranges when solved ([`disjoint_in_object`]; BasicAA's `aliasGEP` answers LLVM's LICM
    /// the same way): `m[5][x]` (x in [0, 5]) stays put while the loop writes
    /// `m[4][j]`. Nothing else of the loop may write memory: no store through a
    /// pointer of unknown object, no call that writes.
    fn stores_miss(&mut self, ptr: Value, ty: Type) -> bool {
        let Some(base) = memory_base(self.f, ptr) else {
            return false;
        };
        if self.stores.is_none() {
            self.stores = Some(self.loop_stores());
        }
        let Some(Some(stores)) = &self.stores else {
            return false;
        };
        let size = i64::from(ty.size());
        let Some(list) = stores.get(&base) else {
            return true;
        };
        list.iter()
            .all(|&q| disjoint_in_object(self.f, self.ranges, (ptr, size), q))
    }

    /// The stores of the loop (inner loops' included) by the object they write,
    /// as address and size, when every write of the loop is a store into a known
    /// global or `alloc` (no store through another pointer, no call that may
    /// write memory) and the loop has at most [`STORE_SCAN_LIMIT`] instructions.
    fn loop_stores(&self) -> Option<StoresByObject> {
        let f = &*self.f;
        let mut by_base = StoresByObject::default();
        let mut scanned = 0;
        for &b in &self.loops.get(self.id).blocks {
            for i in f.layout.block_insts(b) {
                scanned += 1;
                if scanned > STORE_SCAN_LIMIT {
                    return None;
                }
                match *f.kind(i) {
                    InstKind::Store { value, ptr } => {
                        let base = memory_base(f, ptr)?;
                        let size = i64::from(f.value_type(value).size());
                        by_base.entry(base).or_default().push((ptr, size));
                    }
                    InstKind::Call { callee, .. } => {
                        let e = self.modref.info(callee).effects();
                        if e.writes_global || e.writes_args {
                            return None;
                        }
                    }
                    _ => {}
                }
            }
        }
        Some(by_base)
    }

    /// Whether the loop may write some memory a call with `args` whose callee
    /// reads `reads` ([`ModRef`]) reads: the globals it names and what it reads
    /// through the pointers passed.
    fn call_reads_clobbered(&self, reads: &Access, args: &[Value]) -> bool {
        if reads.any || (reads.any_global && self.writes.may_write_globals()) {
            return true;
        }
        if reads
            .globals
            .iter()
            .any(|&g| self.writes.may_clobber_global(g))
        {
            return true;
        }
        args.iter().enumerate().any(|(k, &a)| {
            let read = reads.all_params || reads.params.contains(&(k as u32));
            read && self.f.value_type(a) == Type::Ptr && self.clobbered(a)
        })
    }

    /// Whether store `store` through `ptr` is the only instruction of the loop that
    /// may write the memory `ptr` points to, and every load that may read it runs
    /// after the store in the same iteration (the store's block dominates the load's,
    /// or the load follows it in its block): storing the same value there on every
    /// iteration is then the same as storing it once before the loop, and each load
    /// sees that value either way.
    fn only_access(&self, store: Inst, ptr: Value) -> bool {
        let f = &*self.f;
        let store_block = f
            .layout
            .inst_block(store)
            .expect("the store is in the loop");
        let after_store = |load: Inst| {
            let b = f.layout.inst_block(load).expect("the load is in the loop");
            if b == store_block {
                let mut at = f.layout.next_inst(store);
                while let Some(i) = at {
                    if i == load {
                        return true;
                    }
                    at = f.layout.next_inst(i);
                }
                false
            } else {
                self.dt.dominates(store_block, b)
            }
        };
        let size = f.value_type(match f.kind(store) {
            InstKind::Store { value, .. } => *value,
            _ => unreachable!("only stores are asked about"),
        });
        for &b in &self.loops.get(self.id).blocks {
            for i in f.layout.block_insts(b) {
                if i == store {
                    continue;
                }
                let clash = match f.kind(i) {
                    InstKind::Load { ptr: q, ty } => {
                        may_overlap(f, ptr, size, *q, *ty) && !after_store(i)
                    }
                    InstKind::Store { ptr: q, value } => {
                        may_overlap(f, ptr, size, *q, f.value_type(*value))
                    }
                    InstKind::Call { callee, .. } => {
                        let e = self.modref.info(*callee).effects();
                        e.reads_memory() || e.writes_global || e.writes_args
                    }
                    _ => false,
                };
                if clash {
                    return false;
                }
            }
        }
        true
    }

    /// Whether a `ty` access at `ptr` stays inside its object wherever the loop
    /// runs ([`deref::dereferenceable`]): a global or local object, or a pointer
    /// parameter that accesses dominating the preheader prove large enough, at
    /// offsets bounded by constant indices or their ranges.
    fn valid_address(&self, ptr: Value, ty: Type) -> bool {
        let ctx = DerefContext {
            global_sizes: &self.sizes.0,
            accesses: self.accesses,
            dt: self.dt,
            ranges: self.ranges,
        };
        deref::dereferenceable(self.f, ptr, ty.size(), self.ph, &ctx)
    }

    /// Whether every path from the loop header reaches `b` without leaving the loop,
    /// returning, taking a back edge, entering an inner loop, or passing an
    /// instruction that could trap, loop or have a side effect.
    fn block_guaranteed(&mut self, b: Block) -> bool {
        if let Some(g) = self.guaranteed[b] {
            return g;
        }
        let lp = self.loops.get(self.id);
        let header = lp.header;
        let mut seen: Vec<Block> = Vec::new();
        let mut work = if b == header { vec![] } else { vec![header] };
        let mut ok = true;
        while let Some(x) = work.pop() {
            if seen.contains(&x) {
                continue;
            }
            seen.push(x);
            let inner = self.loops.innermost(x) != Some(self.id);
            let leaves = self.f.successors(x).is_empty()
                || self
                    .cfg
                    .succs(x)
                    .iter()
                    .any(|&s| !self.loops.contains(self.id, s) || s == header);
            let effects = self.f.layout.block_insts(x).any(|i| {
                let k = self.f.kind(i);
                !k.is_terminator() && stops_execution(self.f, k, self.ranges)
            });
            if inner || leaves || effects || seen.len() > 64 {
                ok = false;
                break;
            }
            for &s in self.cfg.succs(x) {
                if s != b {
                    work.push(s);
                }
            }
        }
        self.guaranteed[b] = Some(ok);
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, run, same_behaviour};

    /// Whether licm solves the value ranges of the only function of `src`.
    fn solves_ranges(src: &str) -> bool {
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
        let cfg = ir::analysis::ControlFlowGraph::compute(f);
        let dt = ir::analysis::DominatorTree::compute(f, &cfg);
        let loops = crate::analysis::LoopForest::compute(f, &cfg, &dt);
        super::ranges_for_speculation(f, &cfg, &loops).is_some()
    }

    /// A loop that loads `a[i]` of its counter and stores `a[k]`; `LOAD` is
    /// another load of the loop.
    const INDEXED: &str = r#"
global @a: [i32; 100] = zeroinit

func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  %4 = gep @a, %2, 4
  %5 = load i32, %4
  LOAD
  %6 = add %3, %5
  %7 = gep @a, %1, 4
  store %6, %7
  %8 = add %2, 1
  %9 = slt %8, %0
  br %9, bb1(%8, %6), bb2
bb2:
  ret %6
}
"#;

    /// The ranges are solved only when something may ask them: a division of a
    /// loop, or a load that may be hoisted while loops load at variable indices.
    #[test]
    fn ranges_are_solved_only_for_what_may_ask_them() {
        // The counter's load stays in the loop: nothing asks.
        assert!(!solves_ranges(&INDEXED.replace("LOAD\n", "")));
        // A load of an invariant address (the store's `a[k]` may hit it).
        assert!(solves_ranges(
            &INDEXED.replace("LOAD", "%20 = gep @a, %1, 4\n  %21 = load i32, %20")
        ));
        // A division by a variable, even one that stays.
        assert!(solves_ranges(&INDEXED.replace("LOAD", "%20 = sdiv %5, %2")));
        // A choice between invariant values in the loop may be decided in the
        // preheader (invselect), and a load through it hoisted then.
        let choice = r#"
global @a: [i32; 100] = zeroinit

func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  %4 = gep @a, %2, 4
  %5 = load i32, %4
  %6 = sgt %1, 7
  br %6, bb3(%1), bb3(7)
bb3(%7: i32):
  %8 = gep @a, %7, 4
  %9 = load i32, %8
  %10 = add %3, %9
  %11 = add %2, 1
  %12 = slt %11, %0
  br %12, bb1(%11, %10), bb2
bb2:
  ret %10
}
"#;
        assert!(solves_ranges(choice));
        // The same join of the counter and an invariant value: stays.
        assert!(!solves_ranges(&choice.replace("bb3(%1)", "bb3(%2)")));
        // Computed from the counter: stays.
        assert!(!solves_ranges(&INDEXED.replace(
            "LOAD",
            "%20 = add %2, 3\n  %21 = gep @a, %20, 4\n  %22 = load i32, %21"
        )));
    }

    #[test]
    fn keeps_loads_of_memory_the_loop_writes() {
        let src = r#"
global @g: i32 = 3

func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0)
bb1(%1: i32):
  %2 = load i32, @g
  %3 = add %2, 1
  store %3, @g
  %4 = add %1, 1
  %5 = slt %4, %0
  br %5, bb1(%4), bb2
bb2:
  ret %2
}
"#;
        check(&["licm"], src, src);
    }

    /// A division whose divisor's range excludes 0 and -1 (`%1 % 14 + 15`, in
    /// `[2, 28]`) cannot trap: it moves out of a loop whose body may not run.
    /// One whose divisor may be 0 (`%1 % 14`) or -1 (`%1 % 14 - 1`) stays.
    #[test]
    fn a_load_moves_past_the_loops_stores_to_other_bytes_of_its_array() {
        // `@m` is `int m[7][6]`; the loop stores to column 2 of row %2 (every
        // row over the iterations) and loads `m[%1][3]`, invariant: column 3 of
        // any row is never column 2 of another (24-byte rows, the columns 4 bytes
        // apart modulo 24), so the load moves to the preheader. Must not: a store
        // to column 3 of row %2, a store at a variable word (`m` as a flat
        // array), a call that writes memory, a store through a pointer parameter.
        let src = |store: &str| {
            format!(
                r#"
global @m: [i32; 42] = zeroinit
declare @getint() -> i32
declare @putint(i32) -> void

func @bump() -> void {{
bb0:
  %0 = gep @m, 40, 4
  store 1, %0
  ret
}}

func @f(i32, i32, ptr) -> i32 {{
bb0(%0: i32, %1: i32, %9: ptr):
  %20 = gep @m, %1, 24
  %4 = slt 0, %0
  br %4, bb2(0, 0), bb3(0)
bb2(%2: i32, %3: i32):
  %5 = gep %20, 3, 4
  %6 = load i32, %5
{store}
  %10 = add %3, %6
  %11 = add %2, 1
  %12 = slt %11, %0
  br %12, bb2(%11, %10), bb3(%10)
bb3(%13: i32):
  ret %13
}}

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = gep @m, 0, 4
  %3 = call @f(%0, %1, %2)
  call @putint(%3)
  ret 0
}}
"#
            )
        };
        let in_body = |out: &str| {
            let f = &out[out.find("func @f").unwrap()..];
            f[f.find("\nbb2(").unwrap()..].contains("= load i32")
        };
        let other_column = src("  %7 = gep @m, %2, 24\n  %8 = gep %7, 2, 4\n  store %3, %8");
        for stdin in ["6 1", "7 0", "0 3"] {
            let out = same_behaviour(&other_column, &["licm"], stdin);
            assert!(!in_body(&out), "{out}");
        }
        for store in [
            "  %7 = gep @m, %2, 24\n  %8 = gep %7, 3, 4\n  store %3, %8",
            "  %8 = gep @m, %2, 4\n  store %3, %8",
            "  call @bump()",
            "  store %3, %9",
        ] {
            let out = run(&src(store), &["licm"]);
            assert!(in_body(&out), "{store}\n{out}");
        }
    }

    #[test]
    fn a_division_by_a_value_whose_range_excludes_zero_and_minus_one_moves() {
        let src = |divisor: &str| {
            format!(
                r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %20 = srem %1, 14
{divisor}
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  %4 = slt %2, %0
  br %4, bb2, bb3
bb2:
  %5 = srem %1, %21
  %10 = add %3, %5
  %11 = add %2, 1
  jump bb1(%11, %10)
bb3:
  call @putint(%3)
  ret 0
}}
"#
            )
        };
        let in_body = |out: &str| out[out.find("\nbb2:").unwrap()..].contains("srem %1, %");
        let safe = src("  %21 = add %20, 15");
        for stdin in ["3 100", "0 -2147483648", "5 -7"] {
            let out = same_behaviour(&safe, &["licm"], stdin);
            assert!(!in_body(&out), "{out}");
        }
        for divisor in ["  %21 = add %20, 0", "  %21 = add %20, -1"] {
            let out = run(&src(divisor), &["licm"]);
            assert!(in_body(&out), "{out}");
        }
    }

    #[test]
    fn division_and_calls_only_when_guaranteed() {
        // The loop body runs only when %0 > 0 (a while loop, not rotated): the
        // division by %1 and the pure call must stay inside, or a program that never
        // enters the loop could trap or hang. The division by 4 can move.
        let src = r#"
declare @putint(i32) -> void

func @pure(i32) -> i32 {
bb0(%0: i32):
  %1 = mul %0, %0
  ret %1
}

func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  %4 = slt %2, %0
  br %4, bb2, bb3
bb2:
  %5 = sdiv 100, %1
  %6 = call @pure(%1)
  %7 = sdiv %1, 4
  %8 = add %5, %6
  %9 = add %8, %7
  %10 = add %3, %9
  %11 = add %2, 1
  jump bb1(%11, %10)
bb3:
  ret %3
}
"#;
        let out = crate::passes::testutil::run(src, &["licm"]);
        let body = &out[out.find("bb2:").unwrap()..];
        assert!(body.contains("sdiv 100"), "{out}");
        assert!(body.contains("call @pure"), "{out}");
        assert!(
            !body.contains("sdiv %1, 4") && !body.contains("sdiv %2, 4"),
            "{out}"
        );
        // Rotated, the body is guaranteed to run once entered: both move.
        let out = crate::passes::testutil::run(src, &["looprotate", "licm"]);
        // bb3 is the new preheader between the guard and the loop (header bb4).
        let body_start = out.find("sdiv 100").unwrap();
        let loop_start = out.find("\nbb4(").unwrap();
        assert!(body_start < loop_start, "{out}");
        let call = out.find("call @pure").unwrap();
        assert!(call < loop_start, "{out}");
    }

    #[test]
    fn calls_with_side_effects_and_stores_stay() {
        let src = r#"
global @g: i32 = 0

declare @putint(i32) -> void

func @f(i32) -> void {
bb0(%0: i32):
  jump bb1(0)
bb1(%1: i32):
  call @putint(%0)
  store %0, @g
  %2 = add %1, 1
  %3 = slt %2, %0
  br %3, bb1(%2), bb2
bb2:
  ret
}
"#;
        check(&["licm"], src, src);
    }

    #[test]
    fn invariant_stores_move_when_nothing_else_touches_the_memory() {
        // A store of the same value on every iteration: stored once, before the loop.
        let src = r#"
global @g: i32 = 0
global @h: i32 = 0

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  store 5, @g
  %2 = load i32, @h
  %3 = add %1, %2
  %4 = add %0, 1
  %5 = slt %4, 10
  br %5, bb1(%4, %3), bb2
bb2:
  %6 = load i32, @g
  call @putint(%6)
  call @putint(%3)
  ret 0
}
"#;
        let out = same_behaviour(src, &["licm"], "");
        assert!(
            out.find("store 5, @g").unwrap() < out.find("bb1(").unwrap(),
            "{out}"
        );
        // A load of the same global before the store keeps the store in the loop
        // (the first iteration reads the old value)...
        let read = src.replace(
            "  store 5, @g\n  %2 = load i32, @h",
            "  %2 = load i32, @g\n  store 5, @g",
        );
        assert_ne!(read, src);
        let out = same_behaviour(&read, &["licm"], "");
        assert!(
            out.find("store 5, @g").unwrap() > out.find("bb1(").unwrap(),
            "{out}"
        );
        // ...but one after it reads the stored value either way: the store moves.
        let after = src.replace("load i32, @h", "load i32, @g");
        let out = same_behaviour(&after, &["licm"], "");
        assert!(
            out.find("store 5, @g").unwrap() < out.find("bb1(").unwrap(),
            "{out}"
        );
        // Stores to different elements of one array do not stop each other.
        let array = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 4]
  %1 = gep %0, 1, 4
  %2 = gep %0, 2, 4
  store 0, %0
  jump bb1(0, 0)
bb1(%3: i32, %4: i32):
  store 7, %1
  store 9, %2
  %5 = gep %0, %3, 4
  %6 = load i32, %5
  %7 = add %4, %6
  %8 = add %3, 1
  %9 = slt %8, 3
  br %9, bb1(%8, %7), bb2
bb2:
  call @putint(%7)
  ret 0
}
"#;
        let out = same_behaviour(array, &["licm"], "");
        assert!(
            out.find("store 9, %").unwrap() < out.find("bb1(").unwrap(),
            "{out}"
        );
        // The same two stores to one element: the order matters, both stay.
        let same = array.replace("%2 = gep %0, 2, 4", "%2 = gep %0, 1, 4");
        let out = same_behaviour(&same, &["licm"], "");
        assert!(
            out.find("store 9, %").unwrap() > out.find("bb1(").unwrap(),
            "{out}"
        );
        // A store that runs only on some iterations stays too.
        let guarded = r#"
global @g: i32 = 0

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0)
bb1(%0: i32):
  %1 = sgt %0, 20
  br %1, bb2, bb3
bb2:
  store 5, @g
  jump bb3
bb3:
  %2 = add %0, 1
  %3 = slt %2, 10
  br %3, bb1(%2), bb4
bb4:
  %4 = load i32, @g
  call @putint(%4)
  ret 0
}
"#;
        let out = same_behaviour(guarded, &["licm"], "");
        assert!(
            out.find("store 5, @g").unwrap() > out.find("bb1(").unwrap(),
            "{out}"
        );
    }

    #[test]
    fn preheader_is_inserted_and_behaviour_kept() {
        // Two edges enter the loop: a preheader merges them.
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  br %0, bb1(0), bb1(5)
bb1(%2: i32):
  %3 = mul %1, %1
  %4 = add %2, %3
  call @putint(%4)
  %5 = add %2, 1
  %6 = slt %5, 8
  br %6, bb1(%5), bb2
bb2:
  ret 0
}
"#;
        let out = same_behaviour(src, &["licm"], "1 4");
        assert!(out.find("mul").unwrap() < out.find("call @putint").unwrap());
        same_behaviour(src, &["licm"], "0 3");
    }

    #[test]
    fn loads_through_parameters_and_locals() {
        // A store to a local array cannot change memory reached through a pointer
        // parameter; a store to a global can.
        let src = r#"
global @g: [i32; 4] = zeroinit

func @f(ptr, i32) -> i32 {
bb0(%0: ptr, %1: i32):
  %2 = alloc [i32; 4]
  jump bb1(0, 0)
bb1(%3: i32, %4: i32):
  %5 = load i32, %0
  store %3, %2
  %6 = add %4, %5
  %7 = add %3, 1
  %8 = slt %7, %1
  br %8, bb1(%7, %6), bb2
bb2:
  ret %6
}
"#;
        let out = crate::passes::testutil::run(src, &["licm"]);
        assert!(
            out.find("load").unwrap() < out.find("bb1(").unwrap(),
            "{out}"
        );
        // (Called with @g: a function never called may assume anything.)
        let aliased = src.replace("store %3, %2", "store %3, @g")
            + "\nfunc @main() -> i32 {\nbb0:\n  %0 = gep @g, 1, 4\n  %1 = call @f(%0, 3)\n  ret %1\n}\n";
        let out = crate::passes::testutil::run(&aliased, &["licm"]);
        assert!(
            out.find("load").unwrap() > out.find("bb1(").unwrap(),
            "{out}"
        );
    }

    /// The outer loop walks a pointer `%4` along local array `%2`; the inner loop
    /// stores into local array `%3` first and then loads through `%4`: the load
    /// reads `%2` (the object all of `%4`'s values point into), which the inner
    /// loop never writes, and the store before it stops nothing, so it leaves the
    /// inner loop. When the walk starts in `%3` instead, it stays.
    #[test]
    fn loads_through_a_walking_pointer_after_a_store_move() {
        let src = r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  %2 = alloc [i32; 8]
  %3 = alloc [i32; 8]
  jump bb1(0, %2, 0)
bb1(%1: i32, %4: ptr, %5: i32):
  jump bb2(0, %5)
bb2(%6: i32, %7: i32):
  store %6, %3
  %8 = load i32, %4
  %9 = add %7, %8
  %10 = add %6, 1
  %11 = slt %10, %0
  br %11, bb2(%10, %9), bb3
bb3:
  %12 = gep %4, 1, 4
  %13 = add %1, 1
  %14 = slt %13, 4
  br %14, bb1(%13, %12, %9), bb4
bb4:
  ret %9
}
"#;
        let out = crate::passes::testutil::run(src, &["licm"]);
        let inner = out.find("store").unwrap();
        assert!(out.find("load").unwrap() < inner, "{out}");
        let same = src.replace("jump bb1(0, %2, 0)", "jump bb1(0, %3, 0)");
        let out = crate::passes::testutil::run(&same, &["licm"]);
        assert!(
            out.find("load").unwrap() > out.find("store").unwrap(),
            "{out}"
        );
    }

    /// `row(a, c, n)` stores through `c` and loads through `a` in its loop; every
    /// caller passes different arrays, so the load is invariant and leaves the
    /// loop. When one caller passes the same array twice it stays.
    #[test]
    fn loads_through_a_parameter_kept_apart_from_the_stored_one_move() {
        let src = r#"
global @x: [i32; 8] = [1, 2, 3, 4, 5, 6, 7, 8]
global @y: [i32; 8] = zeroinit

declare @putint(i32) -> void

func @row(ptr, ptr, i32) -> void {
bb0(%0: ptr, %1: ptr, %2: i32):
  jump bb1(0)
bb1(%3: i32):
  %4 = load i32, %0
  %5 = gep %1, %3, 4
  %6 = mul %4, %3
  store %6, %5
  %7 = add %3, 1
  %8 = slt %7, %2
  br %8, bb1(%7), bb2
bb2:
  ret
}

func @main() -> i32 {
bb0:
  call @row(@x, @y, 8)
  %0 = gep @y, 2, 4
  call @row(%0, @x, 8)
  %1 = gep @y, 7, 4
  %2 = load i32, %1
  call @putint(%2)
  ret 0
}
"#;
        let row = |out: &str| {
            out[out.find("func @row").unwrap()..out.find("func @main").unwrap()].to_string()
        };
        let out = same_behaviour(src, &["licm"], "");
        let r = row(&out);
        assert!(r.find("load").unwrap() < r.find("bb1(").unwrap(), "{out}");
        let same = src.replace("call @row(%0, @x, 8)", "call @row(%0, @y, 8)");
        let out = same_behaviour(&same, &["licm"], "");
        let r = row(&out);
        assert!(r.find("load").unwrap() > r.find("bb1(").unwrap(), "{out}");
    }

    /// A store through a pointer parameter that every call site points into @a or @b
    /// does not write @w: the load of @w leaves the loop. With one call passing @w,
    /// it stays.
    #[test]
    fn stores_through_parameters_clobber_only_what_callers_pass() {
        let src = r#"
global @a: [i32; 10] = zeroinit
global @b: [i32; 10] = zeroinit
global @w: i32 = 5

func @fill(ptr) -> void {
bb0(%0: ptr):
  jump bb1(0)
bb1(%1: i32):
  %2 = gep %0, %1, 4
  store %1, %2
  %3 = add %1, 1
  %4 = load i32, @w
  %5 = slt %3, %4
  br %5, bb1(%3), bb2
bb2:
  ret
}

func @main() -> i32 {
bb0:
  call @fill(@a)
  call @fill(@b)
  ret 0
}
"#;
        let out = run(src, &["licm"]);
        let entry = out.split("bb1(").next().unwrap();
        assert!(entry.contains("load i32, @w"), "{out}");
        let clobbering = src.replace("call @fill(@b)", "call @fill(@w)");
        let out = run(&clobbering, &["licm"]);
        let entry = out.split("bb1(").next().unwrap();
        assert!(!entry.contains("load i32, @w"), "{out}");
    }

    /// Calls in the loop that write only @b (their mod/ref summaries name it,
    /// directly or through a pointer parameter) leave @a alone: the load of @a,
    /// and a call that only reads @a, leave the loop. When a callee writes @a
    /// through its pointer parameter or directly, both stay.
    #[test]
    fn calls_clobber_only_the_globals_their_summaries_name() {
        let src = r#"
global @a: i32 = 3
global @b: [i32; 8] = zeroinit
declare @putint(i32) -> void

func @bump(ptr, i32) -> void {
bb0(%0: ptr, %1: i32):
  %2 = gep %0, %1, 4
  store %1, %2
  ret
}

func @clear_b() -> void {
bb0:
  %0 = gep @b, 1, 4
  store 0, %0
  ret
}

func @twice_a() -> i32 {
bb0:
  %0 = load i32, @a
  %1 = add %0, %0
  ret %1
}

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = call @twice_a()
  %3 = load i32, @a
  %4 = add %1, %2
  %5 = add %4, %3
  %6 = and %0, 7
  call @bump(@b, %6)
  call @clear_b()
  %7 = add %0, 1
  %8 = slt %7, 100
  br %8, bb1(%7, %5), bb2
bb2:
  call @putint(%5)
  ret 0
}
"#;
        let main = |out: &str| out[out.find("func @main").unwrap()..].to_string();
        let out = same_behaviour(src, &["licm"], "");
        let entry = main(&out);
        let entry = entry.split("bb1(").next().unwrap();
        assert!(entry.contains("load i32, @a"), "{out}");
        assert!(entry.contains("call @twice_a"), "{out}");
        let clobbering = src.replace("call @bump(@b, %6)", "call @bump(@a, 0)");
        let out = same_behaviour(&clobbering, &["licm"], "");
        let entry = main(&out);
        let entry = entry.split("bb1(").next().unwrap();
        assert!(!entry.contains("load i32, @a"), "{out}");
        assert!(!entry.contains("call @twice_a"), "{out}");
        let direct = src.replace("  %0 = gep @b, 1, 4\n  store 0, %0\n", "  store 0, @a\n");
        assert_ne!(direct, src);
        let out = same_behaviour(&direct, &["licm"], "");
        let entry = main(&out);
        let entry = entry.split("bb1(").next().unwrap();
        assert!(!entry.contains("load i32, @a"), "{out}");
        assert!(!entry.contains("call @twice_a"), "{out}");
    }

    /// `f` sums `p[index]` over a loop, in an arm the loop may skip (`x > 0`), so
    /// the load moves only if its address is known valid: `proof` (in the entry
    /// block unless it says otherwise) makes accesses through `p` first; `index`
    /// is `0`, `1`, or `%7`, which is `x & mask`.
    fn param_loop(proof: &str, mask: i32, index: &str) -> String {
        format!(
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @f(ptr, i32, i32) -> i32 {{
bb0(%0: ptr, %1: i32, %2: i32):
{proof}
  %7 = and %2, {mask}
  jump bb1(0, 0)
bb1(%3: i32, %4: i32):
  %5 = slt %3, %1
  br %5, bb2, bb5
bb2:
  %6 = sgt %2, 0
  br %6, bb3, bb4(%4)
bb3:
  %8 = gep %0, {index}, 4
  %9 = load i32, %8
  %10 = add %4, %9
  jump bb4(%10)
bb4(%11: i32):
  %12 = add %3, 1
  jump bb1(%12, %11)
bb5:
  ret %4
}}

func @main() -> i32 {{
bb0:
  %0 = alloc [i32; 2]
  store 5, %0
  %1 = gep %0, 1, 4
  store 7, %1
  %2 = call @getint()
  %3 = call @getint()
  %4 = call @f(%0, %2, %3)
  call @putint(%4)
  ret 0
}}
"#
        )
    }

    /// Whether `f`'s conditional arm (`bb3`) still loads.
    fn arm_loads(out: &str) -> bool {
        let arm = &out[out.find("\nbb3:").unwrap()..];
        arm[..arm.find("\nbb4").unwrap()].contains("load")
    }

    /// A load of `p[1]` before the loop proves `p[0]` and `p[1]` inside the object
    /// `p` points into (an argument designates an element, so the object holds
    /// all of `[p, p + 8)`): a load of either, or of `p[x & 1]`, leaves the arm it
    /// was skipped in. A store proves the same.
    #[test]
    fn a_parameter_access_before_the_loop_lets_loads_below_its_end_move() {
        let load_p1 = "  %20 = gep %0, 1, 4\n  %21 = load i32, %20";
        for index in ["0", "1", "%7"] {
            let src = param_loop(load_p1, 1, index);
            for stdin in ["3 5", "0 1", "2 -4", "4 2"] {
                let out = same_behaviour(&src, &["licm"], stdin);
                assert!(!arm_loads(&out), "{out}");
            }
        }
        let store_p1 = "  %20 = gep %0, 1, 4\n  store 9, %20";
        let out = same_behaviour(&param_loop(store_p1, 1, "0"), &["licm"], "3 5");
        assert!(!arm_loads(&out), "{out}");
    }

    /// What an access proves goes no further than its end, only from where it
    /// dominates, and not below the parameter: the arm keeps its load when nothing
    /// before the loop touches `p`, when the load reads past the proof (`p[1]`
    /// after `p[0]`, `p[x & 3]` after `p[1]`), when the index is unknown, and when
    /// the proof sits in the arm itself (it does not run before the loop).
    #[test]
    fn loads_past_what_dominating_accesses_prove_stay() {
        let load_p0 = "  %21 = load i32, %0";
        let load_p1 = "  %20 = gep %0, 1, 4\n  %21 = load i32, %20";
        let unknown = "  %20 = gep %0, 1, 4\n  %21 = load i32, %20\n  %22 = call @getint()";
        for src in [
            param_loop("", 1, "0"),
            param_loop(load_p0, 1, "1"),
            param_loop(load_p1, 3, "%7"),
            param_loop(unknown, 1, "%22"),
            param_loop(load_p1, 1, "-1"),
        ] {
            let out = run(&src, &["licm"]);
            assert!(arm_loads(&out), "{out}");
        }
        // The arm's own access to p[1], ahead of the load of p[0], proves it valid
        // only where the arm runs.
        let in_arm = param_loop("", 1, "0").replace(
            "bb3:\n",
            "bb3:\n  %30 = gep %0, 1, 4\n  %31 = load i32, %30\n  %32 = add %31, 0\n",
        );
        let out = run(&in_arm, &["licm"]);
        assert!(arm_loads(&out), "{out}");
    }

    /// A global's element at an index whose range lies inside it moves out of an
    /// arm the loop may skip; one whose range may leave it stays.
    #[test]
    fn a_global_load_at_an_index_of_known_range_moves() {
        let src = |len: u32, mask: i32| {
            format!(
                r#"
declare @getint() -> i32
declare @putint(i32) -> void

global @g: [i32; {len}] = zeroinit

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = and %1, {mask}
  %3 = gep @g, 1, 4
  store 6, %3
  jump bb1(0, 0)
bb1(%4: i32, %5: i32):
  %6 = slt %4, %0
  br %6, bb2, bb5
bb2:
  %7 = sgt %1, 0
  br %7, bb3, bb4(%5)
bb3:
  %8 = gep @g, %2, 4
  %9 = load i32, %8
  %10 = add %5, %9
  jump bb4(%10)
bb4(%11: i32):
  %12 = add %4, 1
  jump bb1(%12, %11)
bb5:
  call @putint(%5)
  ret 0
}}
"#
            )
        };
        for stdin in ["3 5", "0 1", "2 -4", "4 2"] {
            let out = same_behaviour(&src(2, 1), &["licm"], stdin);
            assert!(!arm_loads(&out), "{out}");
        }
        assert!(arm_loads(&run(&src(2, 3), &["licm"])));
        assert!(arm_loads(&run(&src(4, -1), &["licm"])));
    }
}
