//! Hash-based global value numbering over the dominator tree, in the manner of Click's
//! "Global Code Motion / Global Value Numbering" (PLDI 1995) and the dominator-based
//! scheme of Briggs, Cooper and Simpson ("Value Numbering", SP&E 1997): a pre-order
//! walk of the dominator tree (with an explicit stack) keeps a scoped hash table from
//! expressions to the first value computing them; an instruction whose expression is
//! already in the table is redundant with a computation that dominates it, so its
//! uses take that value and it goes away. Leaving a subtree undoes its insertions, so
//! only dominating computations are ever found.
//!
//! - Operands are looked up after earlier replacements, so equal operands are the same
//!   value; commutative operands and comparisons are put in a canonical order.
//! - Instructions with constant operands are folded ([`crate::fold`], never a division
//!   by zero).
//! - Calls to pure functions ([`Purity`]) are expressions like any other; calls that
//!   only read memory are expressions of their arguments and the state of the memory
//!   they read. Which globals and which pointer arguments' memory a call reads or
//!   writes comes from the callee's mod/ref summary ([`ModRef`], GCC's `ipa-modref`
//!   and LLVM's `GlobalsAA` as GVN uses them): a call writing one global leaves
//!   loads of others and calls reading only others available.
//! - Loads are expressions of their address and the memory state: a load is redundant
//!   only when no store or call may have written the loaded memory since the earlier
//!   load (or store of that address, whose value it then takes). The memory state is
//!   split by base object and inherited from the immediate dominator only when no path
//!   between them writes (see the `memory` module). A load the table misses is still
//!   redundant with the last access of its address when every write to its base since
//!   misses its bytes, by offsets, strides and value ranges (the `disjoint` module).
//! - Block parameters: one whose arguments on all reachable edges are one value (or
//!   itself) is that value; two of one block with the same arguments on every edge are
//!   the same value; and one of a join below another, choosing between the same
//!   values by the same branch condition, is the other's (the `predicated` module).
//!
//! Hash-based GVN sees a block parameter only through its arguments: it cannot find
//! that a parameter equals an ordinary expression. That is what the complete GVN
//! ([`crate::passes::value_numbering::cgvn`]) adds.

mod disjoint;
pub(crate) mod expr;
pub(crate) mod memory;
mod predicated;
#[cfg(test)]
mod tests;

use crate::analysis::{AnalysisManager, FunctionAnalyses, ModRef, Preserved, Purity};
use crate::fold::Const;
use crate::pipeline::Pass;
use expr::{call_writes_memory, normalise, pure_op, Opcode};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, FuncId, Function, Inst, InstKind, Module, Type, Value};
use memory::{block_clobbers, memory_base, CallMemory, Clobbers, RegionWalker, REGION_LIMIT};
use rustc_hash::FxHashMap;

/// The hash-based GVN pass.
pub struct Gvn;

impl Pass for Gvn {
    fn name(&self) -> &'static str {
        "gvn"
    }
    fn description(&self) -> &'static str {
        "hash-based global value numbering over the dominator tree"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let modref = am.modref(m);
        let purity = modref.purity();
        am.each_function(m, |f, fa| {
            run_with_modref(f, &purity, Some(&modref), fa).changed()
        })
    }
}

/// What [`run`] removed from one function.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct GvnStats {
    /// Instructions replaced by a dominating equal value (loads included).
    pub redundant: usize,
    /// Instructions folded to constants.
    pub folded: usize,
    /// Block parameters replaced by another value.
    pub params: usize,
}

impl GvnStats {
    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        self.redundant + self.folded + self.params > 0
    }

    /// Instructions and parameters removed in total.
    pub fn total(&self) -> usize {
        self.redundant + self.folded + self.params
    }
}

/// An expression in the table.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    /// A pure operator over at most two operands (a unary one repeats its operand).
    Op(Opcode, Value, Value),
    /// A call to a function that writes nothing, over its arguments and (for one that
    /// reads memory) the state of the memory it reads, empty otherwise.
    Call(FuncId, Box<[Value]>, Box<[u32]>),
    /// A load of a type from an address in a memory state.
    Load(Type, Value, u32, u32),
}

enum Undo {
    /// Remove this key (it was absent before).
    Key(Key),
    /// Restore the generation of a base.
    Gen(Value, Option<u32>),
    /// Restore the global memory state.
    Mem(u32, u32),
    /// Restore the newest access of an address ([`disjoint`]).
    Recent((Type, Value), Option<disjoint::Recent>),
    /// Drop the newest write logged for a base ([`disjoint`]).
    Write(Value),
}

/// The scoped table and the memory state of the walk.
struct Scope {
    table: FxHashMap<Key, Value>,
    /// Generation of each base's memory (absent: 0).
    gens: FxHashMap<Value, u32>,
    /// Changes whenever any memory may be written by an unknown store or a call.
    epoch: u32,
    /// Changes whenever any memory may be written at all.
    any: u32,
    /// Source of fresh state numbers.
    fresh: u32,
    /// The newest load or store of each address into a known base, by type and
    /// address ([`disjoint`]).
    recent: FxHashMap<(Type, Value), disjoint::Recent>,
    /// Per base: the writes to it on the dominator path so far ([`disjoint`]).
    writes: FxHashMap<Value, Vec<disjoint::Write>>,
    undo: Vec<Undo>,
}

impl Scope {
    fn new_id(&mut self) -> u32 {
        self.fresh += 1;
        self.fresh
    }

    fn lookup_or_insert(&mut self, key: Key, v: Value) -> Option<Value> {
        if let Some(&w) = self.table.get(&key) {
            return Some(w);
        }
        self.table.insert(key.clone(), v);
        self.undo.push(Undo::Key(key));
        None
    }

    fn clobber_all(&mut self) {
        self.undo.push(Undo::Mem(self.epoch, self.any));
        self.epoch = self.new_id();
        self.any = self.new_id();
    }

    /// A write to `base`, through `at` (address and size) when known.
    fn clobber_base(&mut self, base: Value, at: Option<(Value, i64)>) {
        self.log_write(base, at);
        self.undo.push(Undo::Mem(self.epoch, self.any));
        self.any = self.new_id();
        let g = self.new_id();
        let old = self.gens.insert(base, g);
        self.undo.push(Undo::Gen(base, old));
    }

    fn clobber(&mut self, c: &Clobbers) {
        if c.all {
            self.clobber_all();
        } else {
            for &b in &c.bases {
                self.clobber_base(b, None);
            }
        }
    }

    /// The state of the memory a call reads: of the bases it reads (`Some`), or of
    /// all memory.
    fn read_state(&self, bases: Option<&[Value]>) -> Box<[u32]> {
        match bases {
            None => Box::new([self.any]),
            Some(bs) => std::iter::once(self.epoch)
                .chain(bs.iter().map(|b| self.gens.get(b).copied().unwrap_or(0)))
                .collect(),
        }
    }

    /// The memory state a load through `ptr` depends on.
    fn mem_key(&self, f: &Function, ptr: Value) -> (u32, u32) {
        match memory_base(f, ptr) {
            Some(b) => (self.epoch, self.gens.get(&b).copied().unwrap_or(0)),
            None => (self.any, 0),
        }
    }

    fn undo_to(&mut self, mark: usize) {
        while self.undo.len() > mark {
            match self.undo.pop().expect("len > mark") {
                Undo::Key(k) => {
                    self.table.remove(&k);
                }
                Undo::Gen(b, Some(g)) => {
                    self.gens.insert(b, g);
                }
                Undo::Gen(b, None) => {
                    self.gens.remove(&b);
                }
                Undo::Mem(e, a) => {
                    self.epoch = e;
                    self.any = a;
                }
                Undo::Recent(k, Some(r)) => {
                    self.recent.insert(k, r);
                }
                Undo::Recent(k, None) => {
                    self.recent.remove(&k);
                }
                Undo::Write(b) => {
                    self.writes.get_mut(&b).and_then(Vec::pop);
                }
            }
        }
    }
}

/// Runs the hash-based GVN over `f`.
pub fn run(f: &mut Function, purity: &Purity) -> GvnStats {
    run_in(f, purity, &mut FunctionAnalyses::default())
}

/// [`run`] with the CFG and dominator tree taken from `fa` (GVN rewrites
/// instructions only).
pub(crate) fn run_in(f: &mut Function, purity: &Purity, fa: &mut FunctionAnalyses) -> GvnStats {
    run_with_modref(f, purity, None, fa)
}

/// [`run_in`] with the callees' mod/ref summaries (without them, a call that writes
/// memory may write any, and one that reads may read any).
pub(crate) fn run_with_modref(
    f: &mut Function,
    purity: &Purity,
    modref: Option<&ModRef>,
    fa: &mut FunctionAnalyses,
) -> GvnStats {
    let mut stats = GvnStats::default();
    if f.is_declaration() {
        return stats;
    }
    let calls = CallMemory::new(f, purity, modref);
    // Only a CFG larger than the region limit has regions the loops can answer for.
    let (cfg, dt, loops) = if fa.cfg(f).rpo().len() > REGION_LIMIT {
        let (cfg, dt, loops) = fa.loops(f);
        (cfg, dt, Some(loops))
    } else {
        let (cfg, dt) = fa.domtree(f);
        (cfg, dt, None)
    };
    let clobbers = block_clobbers(f, &calls);
    let mut walker = RegionWalker::new();
    let mut scope = Scope {
        table: FxHashMap::default(),
        gens: FxHashMap::default(),
        epoch: 0,
        any: 0,
        fresh: 0,
        recent: FxHashMap::default(),
        writes: FxHashMap::default(),
        undo: Vec::new(),
    };
    let mut ranges = disjoint::LazyRanges::new(cfg);
    let mut choices = predicated::Choices::default();
    let entry = f.entry_block();
    enum Step {
        Enter(Block),
        Exit(usize, usize),
    }
    let mut stack = vec![Step::Enter(entry)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Exit(mark, chosen) => {
                scope.undo_to(mark);
                choices.undo_to(chosen);
            }
            Step::Enter(b) => {
                stack.push(Step::Exit(scope.undo.len(), choices.mark()));
                match dt.idom(b) {
                    None => scope.clobber_all(),
                    Some(d) => {
                        let c = walker.region_clobbers(cfg, dt, loops, &clobbers, b, d);
                        if !c.is_empty() {
                            scope.clobber(&c);
                        }
                    }
                }
                if b != entry {
                    number_params(f, cfg, dt, b, &mut stats);
                    choices.number(f, cfg, dt, b, &mut stats);
                }
                number_insts(f, purity, &calls, b, &mut scope, &mut ranges, &mut stats);
                for &c in dt.children(b).iter().rev() {
                    stack.push(Step::Enter(c));
                }
            }
        }
    }
    stats
}

/// The arguments each parameter of `b` receives on the reachable incoming edges, one
/// list per edge (in predecessor order).
pub(crate) fn incoming_args(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    b: Block,
) -> Vec<Vec<Value>> {
    let mut edges = Vec::new();
    for p in cfg.unique_preds(b) {
        if !dt.is_reachable(p) {
            continue;
        }
        let Some(term) = f.terminator(p) else {
            continue;
        };
        for t in f.kind(term).targets() {
            if t.block == b {
                edges.push(t.args.to_vec());
            }
        }
    }
    edges
}

/// Replaces parameters of `b` that are one value on every edge, or that duplicate an
/// earlier parameter, and removes them.
fn number_params(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    b: Block,
    stats: &mut GvnStats,
) {
    let params = f.block_params(b).to_vec();
    if params.is_empty() {
        return;
    }
    let edges = incoming_args(f, cfg, dt, b);
    let mut seen: FxHashMap<Vec<Value>, Value> = FxHashMap::default();
    let mut dead = Vec::new();
    // Parameters replaced so far: `edges` still names them in later arguments.
    let mut replaced: FxHashMap<Value, Value> = FxHashMap::default();
    for (j, &p) in params.iter().enumerate() {
        let args: Vec<Value> = edges
            .iter()
            .map(|e| replaced.get(&e[j]).copied().unwrap_or(e[j]))
            .collect();
        let mut single = None;
        let mut trivial = true;
        for &a in &args {
            if a == p || Some(a) == single {
                continue;
            }
            if single.is_some() {
                trivial = false;
                break;
            }
            single = Some(a);
        }
        let replacement = match (trivial, single) {
            (true, Some(v)) => Some(v),
            _ => seen.get(&args).copied(),
        };
        match replacement {
            Some(v) => {
                f.replace_all_uses(p, v);
                replaced.insert(p, v);
                dead.push(j);
                stats.params += 1;
            }
            None => {
                seen.insert(args, p);
            }
        }
    }
    if !dead.is_empty() {
        let preds = cfg.unique_preds(b);
        for &j in dead.iter().rev() {
            f.remove_block_param(b, j, &preds);
        }
    }
}

/// The value of an integer operation of a value with itself, where that does not
/// depend on the value (`x - x`, `x ^ x`, `x == x`), as LLVM's GVN folds through
/// InstSimplify: two copies of one computation merged leave their difference.
fn same_operands(op: Opcode) -> Option<Const> {
    use ir::{BinOp as B, CmpOp as C};
    match op {
        Opcode::Bin(B::Sub | B::Xor) => Some(Const::I(0)),
        Opcode::Cmp(C::Eq | C::Sle | C::Sge) => Some(Const::I(1)),
        Opcode::Cmp(C::Ne | C::Slt | C::Sgt) => Some(Const::I(0)),
        _ => None,
    }
}

/// Numbers the instructions of `b` in order.
fn number_insts(
    f: &mut Function,
    purity: &Purity,
    calls: &CallMemory,
    b: Block,
    scope: &mut Scope,
    ranges: &mut disjoint::LazyRanges,
    stats: &mut GvnStats,
) {
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    for i in insts {
        let Some(r) = f.inst_result(i) else {
            match f.kind(i).clone() {
                InstKind::Store { value, ptr } => {
                    let ty = f.value_type(value);
                    match memory_base(f, ptr) {
                        Some(base) => {
                            scope.clobber_base(base, Some((ptr, i64::from(ty.size()))));
                            scope.note_access(f, ty, ptr, value);
                        }
                        None => scope.clobber_all(),
                    }
                    // A later load of this address in this state reads `value`.
                    let (s, g) = scope.mem_key(f, ptr);
                    scope.lookup_or_insert(Key::Load(ty, ptr, s, g), value);
                }
                InstKind::Call { callee, args } if call_writes_memory(purity.effects(callee)) => {
                    scope.clobber(&calls.writes(f, callee, &args))
                }
                _ => {}
            }
            continue;
        };
        let key = match f.kind(i).clone() {
            InstKind::Load { ty, ptr } => {
                let (s, g) = scope.mem_key(f, ptr);
                Some(Key::Load(ty, ptr, s, g))
            }
            InstKind::Call { callee, args } => {
                let e = purity.effects(callee);
                if e.is_pure() {
                    Some(Key::Call(callee, args, Box::new([])))
                } else if !e.has_side_effects() {
                    let state = scope.read_state(calls.reads(f, callee, &args).as_deref());
                    Some(Key::Call(callee, args, state))
                } else {
                    if call_writes_memory(e) {
                        scope.clobber(&calls.writes(f, callee, &args));
                    }
                    None
                }
            }
            _ => match pure_op(f, i, purity) {
                Some((op, mut args)) => {
                    let consts: Option<Vec<Const>> =
                        args.iter().map(|&a| Const::of(f, a)).collect();
                    let same = (args.len() == 2 && args[0] == args[1])
                        .then(|| same_operands(op))
                        .flatten();
                    if let Some(c) = consts.and_then(|cs| op.fold(&cs)).or(same) {
                        let v = c.value(f);
                        f.replace_all_uses(r, v);
                        f.remove_inst(i);
                        stats.folded += 1;
                        continue;
                    }
                    let op = normalise(op, &mut args);
                    match args.as_slice() {
                        [a] => Some(Key::Op(op, *a, *a)),
                        [a, b] => Some(Key::Op(op, *a, *b)),
                        _ => None,
                    }
                }
                None => None,
            },
        };
        let Some(key) = key else { continue };
        // A load not found in this memory state may still read what an access
        // of its address gave before writes to other bytes of its base.
        if let Key::Load(ty, ptr, ..) = key {
            if !scope.table.contains_key(&key) {
                if let Some(v) = scope.available_across_writes(f, ty, ptr, ranges) {
                    scope.lookup_or_insert(key, v);
                    f.replace_all_uses(r, v);
                    f.remove_inst(i);
                    stats.redundant += 1;
                    continue;
                }
                scope.note_access(f, ty, ptr, r);
            }
        }
        if let Some(v) = scope.lookup_or_insert(key, r) {
            f.replace_all_uses(r, v);
            f.remove_inst(i);
            stats.redundant += 1;
        }
    }
}
