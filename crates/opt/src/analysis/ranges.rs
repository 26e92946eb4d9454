//! Value ranges: for every `i32` value of a function, an interval `[lo, hi]` that
//! holds every value it takes in any execution.
//!
//! This is interval analysis (Cousot and Cousot, "Abstract Interpretation", POPL
//! 1977) solved sparsely on SSA, as Patterson's value range propagation ("Accurate
//! Static Branch Prediction by Value Range Propagation", PLDI 1995) and GCC's VRP
//! do, with the edge refinement of LLVM's LazyValueInfo: a value passed to a block
//! parameter along the edge of `br (slt %x, %n), ...` is known to be below `%n`
//! there. The solve is optimistic (a value starts with no range and grows only as
//! its operands do, so loop-carried values can settle below the full range) and
//! work-list driven: a value is recomputed when an operand changes.
//!
//! Termination: a value's range only grows, and a block parameter that has grown
//! [`WIDEN_AFTER`] times is widened, each bound that still moves jumping to the
//! next of a few thresholds (widening with thresholds, Blanchet et al., "A Static
//! Analyzer for Large Safety-Critical Software", PLDI 2003): the constants the
//! function compares integers with (at most [`THRESHOLD_JUMPS`] of them per
//! value), then one inside the `i32` end, then the end itself. A compared
//! constant is what lets a counter stepping by more than one settle at its exit
//! test (`i = 600, 598, ...` while `i > -599` widens to `[-599, 600]`, whose
//! successor `[-601, 598]` cannot wrap); the inner end threshold lets a counter
//! below a bound that is not a constant settle: `i = 0, 1, ...` with `i + 1 < n`
//! on the back edge widens to `[0, MAX - 1]`, whose successor `[1, MAX]` cannot
//! wrap. So every value changes a bounded number of times and the solve is linear
//! in the function's size. A few descending rounds follow
//! (narrowing, Cousot and Cousot 1977 again; GCC's VRP likewise iterates once more
//! after widening): each value recomputed from its operands and met with its range
//! takes back what widening gave away, e.g. a counter's exit test on its back edge.
//!
//! Exact semantics: `i32` arithmetic wraps, so an operation whose result could
//! leave `i32` for some operands in range gets the full range. Loads, calls,
//! parameters and float conversions give the full range (parameters: unless
//! their ranges over all calls are given, [`Ranges::compute_with_params`]). Values in unreachable
//! code may keep no range ([`Ranges::get`] is `None`); users treat that as unknown.

use crate::fold::{fold_binary, Const};
use ir::analysis::ControlFlowGraph;
use ir::{BinOp, Block, CmpOp, Function, Inst, InstKind, SecondaryMap, Type, Value, ValueDef};
use rustc_hash::FxHashMap;

/// An inclusive interval of `i32` values, `lo <= hi`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Range {
    pub lo: i32,
    pub hi: i32,
}

impl Range {
    /// Every `i32`.
    pub const FULL: Range = Range {
        lo: i32::MIN,
        hi: i32::MAX,
    };

    /// The single value `c`.
    pub fn constant(c: i32) -> Range {
        Range { lo: c, hi: c }
    }

    /// `[lo, hi]` when both fit `i32` and `lo <= hi`; the full range when the
    /// interval leaves `i32` (the operation may wrap).
    fn from_i64(lo: i64, hi: i64) -> Range {
        debug_assert!(lo <= hi);
        if lo < i32::MIN as i64 || hi > i32::MAX as i64 {
            Range::FULL
        } else {
            Range {
                lo: lo as i32,
                hi: hi as i32,
            }
        }
    }

    /// The smallest interval holding both.
    pub fn join(self, other: Range) -> Range {
        Range {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }

    /// The common part, if any.
    pub fn meet(self, other: Range) -> Option<Range> {
        let r = Range {
            lo: self.lo.max(other.lo),
            hi: self.hi.min(other.hi),
        };
        (r.lo <= r.hi).then_some(r)
    }

    /// Whether every value is at least zero.
    pub fn is_non_negative(self) -> bool {
        self.lo >= 0
    }

    /// Whether every value lies in `[lo, hi]`.
    pub fn within(self, lo: i64, hi: i64) -> bool {
        self.lo as i64 >= lo && self.hi as i64 <= hi
    }
}

/// Growths of a block parameter's range before it is widened.
pub const WIDEN_AFTER: u32 = 2;

/// Widenings of a value to compared constants before its moving bounds go to the
/// `i32` ends ([`widened`]).
pub const THRESHOLD_JUMPS: u32 = 4;

/// Descending rounds after the solve ([`Solver::narrow`]): each carries a bound
/// around one more loop of a nest.
pub const NARROW_ROUNDS: u32 = 3;

/// The ranges of the `i32` values of one function.
pub struct Ranges {
    range: SecondaryMap<Value, Option<Range>>,
}

impl Ranges {
    /// The range of `v`: `None` when `v` is not an `i32` or lies in code the
    /// solve never reached.
    pub fn get(&self, v: Value) -> Option<Range> {
        self.range[v]
    }

    /// The range of `v` in `f` as `f` may have changed since the solve by
    /// rewrites that keep every value's meaning (a value replaced by an equal one,
    /// an instruction by one computing the same result): an `i32` constant is
    /// itself (also one interned since), a value the solve gave a range has it
    /// still, and anything else (created since, not an `i32`, unreachable) is
    /// unknown.
    pub fn of(&self, f: &Function, v: Value) -> Option<Range> {
        if let Some(c) = f.as_iconst(v) {
            return Some(Range::constant(c));
        }
        if f.value_type(v) != Type::I32 {
            return None;
        }
        self.range[v]
    }

    /// Whether dividing by `divisor` in `f` cannot trap: its range (a constant's
    /// included) excludes both 0 and -1 (`INT_MIN / -1` overflows), as LLVM's
    /// `isSafeToSpeculativelyExecute` asks of a division's divisor.
    pub fn divisor_is_safe(ranges: Option<&Ranges>, f: &Function, divisor: Value) -> bool {
        let safe = |r: Range| r.hi < -1 || r.lo > 0;
        match f.as_iconst(divisor) {
            Some(c) => safe(Range::constant(c)),
            None => ranges.and_then(|r| r.of(f, divisor)).is_some_and(safe),
        }
    }

    /// Solves the ranges of `f`.
    pub fn compute(f: &Function, cfg: &ControlFlowGraph) -> Ranges {
        Solver::new(f, cfg).solve()
    }

    /// [`Ranges::compute`] with the function's `i32` parameters in the given
    /// ranges (one per parameter, in order; `None`: any value) instead of the
    /// full range: what every call passes, when all the calls are known
    /// (interprocedural range propagation, [`crate::passes::interprocedural::ipvrp`]).
    pub fn compute_with_params(
        f: &Function,
        cfg: &ControlFlowGraph,
        params: &[Option<Range>],
    ) -> Ranges {
        let mut s = Solver::new(f, cfg);
        for (&p, &r) in f.block_params(f.entry_block()).iter().zip(params) {
            if let (true, Some(r)) = (f.value_type(p) == Type::I32, r) {
                s.range[p] = Some(r);
            }
        }
        s.solve()
    }

    /// Checks that the ranges are closed under the equations (a post-fixed point,
    /// which is what makes them hold in every execution): every reachable block
    /// parameter's range holds what its edges pass, and every instruction's range
    /// what its operands give. The first value that fails, if any.
    pub fn check(&self, f: &Function, cfg: &ControlFlowGraph) -> Result<(), String> {
        let mut s = Solver::new(f, cfg);
        s.range = self.range.clone();
        let holds = |v: Value, r: Range| match self.range[v] {
            Some(x) if x.lo <= r.lo && r.hi <= x.hi => Ok(()),
            x => Err(format!("{v} in {}: {x:?} does not hold {r:?}", f.name)),
        };
        for &b in cfg.rpo() {
            if b != f.entry_block() {
                for (idx, &p) in f.block_params(b).iter().enumerate() {
                    if f.value_type(p) == Type::I32 {
                        if let Some(r) = s.incoming(b, idx) {
                            holds(p, r)?;
                        }
                    }
                }
            }
            for i in f.layout.block_insts(b) {
                if let Some(v) = f.inst_result(i).filter(|&v| f.value_type(v) == Type::I32) {
                    if let Some(r) = s.eval(f.kind(i)) {
                        holds(v, r)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// What the work list recomputes: an instruction's result or a block's parameter
/// (its index), each with the `i32` value it defines (only those are queued).
#[derive(Clone, Copy)]
enum Item {
    Inst(Inst, Value),
    Param(Block, u32, Value),
}

struct Solver<'f> {
    f: &'f Function,
    cfg: &'f ControlFlowGraph,
    range: SecondaryMap<Value, Option<Range>>,
    /// Whether each value is an `i32` (the value types, packed for the hot loops).
    int: SecondaryMap<Value, bool>,
    growths: SecondaryMap<Value, u32>,
    /// The `i32` constants the function's comparisons take, sorted, distinct.
    thresholds: Vec<i32>,
    work: Vec<Item>,
    /// Per value: whether something its range is computed from changed since it
    /// was last computed. A computation from unchanged inputs gives what the last
    /// one joined in, so it changes nothing and queues nothing: the solve skips
    /// it (the work list holds many such, e.g. every parameter of a block
    /// requeued when one argument of its edge grows, or an instruction queued
    /// once per operand), and the other computations happen in the same order,
    /// so the ranges are exactly those of computing everything queued.
    stale: SecondaryMap<Value, bool>,
    /// Whether to skip computations from unchanged inputs (tests compare with
    /// computing everything queued).
    skip_unchanged: bool,
    /// Computations done (for tests).
    computed: usize,
    /// For a block with many predecessors: the predecessors whose edges were
    /// requeued, in order (see [`Solver::param_input`]).
    requeued_edges: FxHashMap<Block, Vec<Block>>,
    /// For each parameter of such a block: how much of its block's
    /// `requeued_edges` it has joined in (absent until it is first computed).
    edges_seen: FxHashMap<(Block, usize), usize>,
    /// "Many": [`MANY_PREDS`] (tests compare with no incremental joins at all).
    many_preds: usize,
    /// Every edge into each block with `i32` parameters, as
    /// [`Solver::edge_input`] reads them off the terminators: the arguments it
    /// passes and the test it is refined by. Taken once, since the CFG and the
    /// instructions stay as they are while the solve reads them over and over.
    edges: Vec<EdgeIn<'f>>,
    /// Per block: its range of `edges`.
    edges_of: SecondaryMap<Block, (u32, u32)>,
}

/// An edge into a block with parameters: the arguments it passes, and the
/// comparison (and which way it went) that every value passed along it passed.
struct EdgeIn<'f> {
    args: &'f [Value],
    test: Option<(Value, bool)>,
}

/// Blocks with more predecessors than this recompute a parameter from the edges
/// requeued since its last computation only.
const MANY_PREDS: usize = 16;

impl<'f> Solver<'f> {
    fn new(f: &'f Function, cfg: &'f ControlFlowGraph) -> Self {
        // The per-value maps are sized once: grown by their writes, they were
        // copied at every doubling.
        let n = f.num_values();
        let mut range = SecondaryMap::new();
        range.resize(n);
        let mut growths = SecondaryMap::new();
        growths.resize(n);
        let mut stale = SecondaryMap::with_default(true);
        stale.resize(n);
        for v in f.all_values() {
            if let Some(c) = f.as_iconst(v) {
                range[v] = Some(Range::constant(c));
            }
        }
        let mut thresholds: Vec<i32> = f
            .layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b))
            .filter_map(|i| match *f.kind(i) {
                InstKind::Cmp { args, .. } => Some(args),
                _ => None,
            })
            .flatten()
            .filter_map(|a| f.as_iconst(a))
            .collect();
        thresholds.sort_unstable();
        thresholds.dedup();
        // Function parameters take any value.
        let entry = f.entry_block();
        for &p in f.block_params(entry) {
            if f.value_type(p) == Type::I32 {
                range[p] = Some(Range::FULL);
            }
        }
        let int = int_values(f);
        let mut edges = Vec::new();
        let mut edges_of = SecondaryMap::new();
        edges_of.resize(f.num_blocks());
        // Every block of the layout, unreachable ones too: a terminator there
        // may still queue its targets' parameters.
        for b in f.layout.blocks() {
            if !f.block_params(b).iter().any(|&p| int[p]) {
                continue;
            }
            let first = edges.len() as u32;
            for &p in cfg.preds(b) {
                edges_into(f, cfg, p, b, &mut edges);
            }
            edges_of[b] = (first, edges.len() as u32);
        }
        Solver {
            f,
            cfg,
            range,
            int,
            growths,
            thresholds,
            work: Vec::with_capacity(f.num_insts()),
            stale,
            skip_unchanged: true,
            computed: 0,
            requeued_edges: FxHashMap::default(),
            edges_seen: FxHashMap::default(),
            many_preds: MANY_PREDS,
            edges,
            edges_of,
        }
    }

    fn solve(mut self) -> Ranges {
        self.solve_only();
        self.finish()
    }

    /// The work-list solve (ascending, with widening).
    fn solve_only(&mut self) {
        // Seed in reverse so that popping visits blocks in reverse post-order.
        let entry = self.f.entry_block();
        let f = self.f;
        for &b in self.cfg.rpo().iter().rev() {
            // The block's instructions, last first.
            let first = self.work.len();
            self.work.extend(f.layout.block_insts(b).filter_map(|i| {
                let v = f.inst_result(i)?;
                self.int[v].then_some(Item::Inst(i, v))
            }));
            self.work[first..].reverse();
            if b != entry {
                for (idx, &p) in f.block_params(b).iter().enumerate().rev() {
                    if self.int[p] {
                        self.work.push(Item::Param(b, idx as u32, p));
                    }
                }
            }
        }
        while let Some(item) = self.work.pop() {
            match item {
                Item::Inst(i, v) => {
                    if self.skip_unchanged && !self.stale[v] {
                        continue;
                    }
                    self.stale[v] = false;
                    self.computed += 1;
                    if let Some(r) = self.eval(f.kind(i)) {
                        self.grow(v, r, false);
                    }
                }
                Item::Param(b, idx, v) => {
                    // A block of many predecessors joins the edges requeued since
                    // its last computation (`param_input`): always computed.
                    if self.skip_unchanged
                        && !self.stale[v]
                        && self.cfg.preds(b).len() <= self.many_preds
                    {
                        continue;
                    }
                    self.stale[v] = false;
                    self.computed += 1;
                    if let Some(r) = self.param_input(b, idx as usize) {
                        self.grow(v, r, true);
                    }
                }
            }
        }
    }

    /// The descending rounds after [`Solver::solve_only`]; the ranges.
    fn finish(mut self) -> Ranges {
        for _ in 0..NARROW_ROUNDS {
            if !self.narrow() {
                break;
            }
        }
        Ranges { range: self.range }
    }

    /// One descending round after the widened solve (Cousot and Cousot's
    /// narrowing): every reachable value, in reverse post-order, recomputed from
    /// its operands' current ranges and met with its own. Widening pushes a
    /// counter's moving bound to the `i32` end although the loop's exit test
    /// keeps it far inside: `i = 6, 5, ...` while `i > -6` widens to
    /// `[MIN + 1, 6]`, while its back edge only passes `[-5, 5]`; recomputing the
    /// parameter from its edges gives back `[-5, 6]`. Each recomputation takes the
    /// transfer function of the solve on ranges that hold in every execution, so
    /// its result holds too; a round only shrinks ranges, and the rounds are
    /// bounded ([`NARROW_ROUNDS`]). Whether any range shrank.
    fn narrow(&mut self) -> bool {
        let mut changed = false;
        let entry = self.f.entry_block();
        for &b in self.cfg.rpo() {
            if b != entry {
                for idx in 0..self.f.block_params(b).len() {
                    let v = self.f.block_params(b)[idx];
                    if !self.int[v] {
                        continue;
                    }
                    let new = self.incoming(b, idx);
                    changed |= self.shrink(v, new);
                }
            }
            for i in self.f.layout.block_insts(b) {
                let Some(v) = self.f.inst_result(i) else {
                    continue;
                };
                if !self.int[v] || self.f.as_iconst(v).is_some() {
                    continue;
                }
                let new = self.eval(self.f.kind(i));
                changed |= self.shrink(v, new);
            }
        }
        changed
    }

    /// Meets the range of `v` with `new` (a recomputation that holds in every
    /// execution); whether it shrank.
    fn shrink(&mut self, v: Value, new: Option<Range>) -> bool {
        let (Some(old), Some(new)) = (self.range[v], new) else {
            return false;
        };
        match old.meet(new) {
            Some(r) if r != old => {
                self.range[v] = Some(r);
                true
            }
            _ => false,
        }
    }

    /// Joins `r` into the range of `v`; on a change, queues what uses `v`.
    fn grow(&mut self, v: Value, r: Range, widen: bool) {
        let old = self.range[v];
        let mut new = old.map_or(r, |o| o.join(r));
        if old == Some(new) {
            return;
        }
        if let (true, Some(o)) = (widen, old) {
            self.growths[v] += 1;
            if self.growths[v] > WIDEN_AFTER {
                let thresholds = if self.growths[v] <= WIDEN_AFTER + THRESHOLD_JUMPS {
                    &self.thresholds[..]
                } else {
                    &[]
                };
                new = widened(o, new, thresholds);
            }
        }
        self.range[v] = Some(new);
        for &user in self.f.users(v) {
            match self.f.kind(user) {
                InstKind::Jump { .. } | InstKind::Br { .. } => self.requeue_changed(user, Some(v)),
                InstKind::Cmp { .. } => {
                    // The comparison's result stays in [0, 1] (recomputed once it
                    // has that range, it changes nothing), but the refinement of
                    // the arguments on its branch's edges depends on `v`.
                    let c = self.f.inst_result(user);
                    if !self.skip_unchanged || c.is_none_or(|c| self.range[c].is_none()) {
                        self.queue_inst(user);
                    }
                    if let Some(c) = c {
                        for &b in self.f.users(c) {
                            if matches!(self.f.kind(b), InstKind::Br { .. }) {
                                self.requeue_changed(b, None);
                            }
                        }
                    }
                }
                _ => self.queue_inst(user),
            }
        }
    }

    /// Queues instruction `i`, one of whose operands changed (unless it has no
    /// `i32` result: popped, it would compute nothing).
    fn queue_inst(&mut self, i: Inst) {
        let Some(v) = self.f.inst_result(i) else {
            return;
        };
        if !self.int[v] {
            return;
        }
        self.stale[v] = true;
        self.work.push(Item::Inst(i, v));
    }

    /// Queues what may change after the range of `changed` grew (`None`: of an
    /// operand of the comparison `term` branches on): the parameters whose edge
    /// input may have changed are marked stale. An edge passes argument `a` refined
    /// by the branch's comparison only when `a` is one of its operands, against
    /// the other; so a grown argument marks the parameters it is passed to, a
    /// grown operand of the comparison those its operands are passed to, and a
    /// grown condition (or a branch on anything but a comparison) every parameter;
    /// those marked are queued ([`Solver::queue_params`]).
    fn requeue_changed(&mut self, term: Inst, changed: Option<Value>) {
        let f = self.f;
        let (cond, calls): (Option<Value>, [Option<&ir::BlockCall>; 2]) = match f.kind(term) {
            InstKind::Jump { dest } => (None, [Some(dest), None]),
            InstKind::Br {
                cond,
                then_dest,
                else_dest,
            } => (Some(*cond), [Some(then_dest), Some(else_dest)]),
            _ => (None, [None, None]),
        };
        // The arguments whose parameters are marked; `None`: every parameter.
        let named: Option<[Value; 2]> = match changed {
            Some(v) if Some(v) != cond => Some([v, v]),
            Some(_) => None,
            None => cond.and_then(|c| compared(f, c)),
        };
        let Some(block) = f.layout.inst_block(term) else {
            return;
        };
        // Each target's parameters are marked, then queued (a target reached
        // by both edges is marked in full the first time).
        for &s in self.cfg.succs(block) {
            let params = f.block_params(s);
            let mut to_s = calls.iter().flatten().filter(|c| c.block == s).peekable();
            match named {
                // Every parameter: all asked for, or no edge of `term` reaches
                // `s` (the CFG and the terminator disagree).
                _ if named.is_none() || to_s.peek().is_none() => {
                    for &p in params {
                        self.stale[p] = true;
                    }
                }
                // The parameters the named values are passed to.
                Some(named) => {
                    for c in to_s {
                        for (&a, &p) in c.args.iter().zip(params) {
                            if named.contains(&a) {
                                self.stale[p] = true;
                            }
                        }
                    }
                }
                None => unreachable!("every parameter when nothing is named"),
            }
            self.queue_params(block, s);
        }
    }

    /// Queues the parameters of `s`, a target of `block`'s terminator, but not
    /// those the pop would skip: a parameter that is not stale now (with skipping
    /// on, in a block of few predecessors) is not stale when this entry is popped
    /// either, since whatever marks it stale later also queues it, above this
    /// entry, and that entry's computation clears the mark first.
    fn queue_params(&mut self, block: Block, s: Block) {
        let many = self.cfg.preds(s).len() > self.many_preds;
        if many {
            self.requeued_edges.entry(s).or_default().push(block);
        }
        let every = many || !self.skip_unchanged;
        for (idx, &p) in self.f.block_params(s).iter().enumerate() {
            if (every || self.stale[p]) && self.int[p] {
                self.work.push(Item::Param(s, idx as u32, p));
            }
        }
    }

    /// What to join into parameter `idx` of `b`: [`Solver::incoming`] over every
    /// edge, or, for a block of many predecessors computed before, over the edges
    /// requeued since. The two give the parameter the same range: it only
    /// grows (each computation is joined into it), each edge's contribution only
    /// grows with the ranges it is computed from, and a change to any of those
    /// requeues the edge; so the edges not requeued add nothing new. (A long `||`
    /// condition ends in a join of thousands of edges, each requeued when its
    /// comparison settles: recomputing all of them each time is quadratic.)
    fn param_input(&mut self, b: Block, idx: usize) -> Option<Range> {
        if self.cfg.preds(b).len() <= self.many_preds {
            return self.incoming(b, idx);
        }
        let log = self
            .requeued_edges
            .get(&b)
            .map_or(&[][..], |v| v.as_slice());
        let seen = self.edges_seen.insert((b, idx), log.len());
        match seen {
            None => self.incoming(b, idx),
            Some(from) => {
                let preds = ir::analysis::distinct_in_order(&log[from..]);
                let mut acc = None;
                for p in preds {
                    self.edge_input(p, b, idx, &mut acc);
                }
                acc
            }
        }
    }

    /// The join of what every edge into `b` passes to its parameter `idx`, each
    /// refined by the branch condition of its edge.
    fn incoming(&self, b: Block, idx: usize) -> Option<Range> {
        let mut acc: Option<Range> = None;
        let (first, end) = self.edges_of[b];
        for e in &self.edges[first as usize..end as usize] {
            self.join_edge(e.args[idx], e.test, &mut acc);
        }
        acc
    }

    /// Joins into `acc` what the edges from `p` pass to parameter `idx` of `b`,
    /// each refined by its branch condition.
    fn edge_input(&self, p: Block, b: Block, idx: usize, acc: &mut Option<Range>) {
        let mut from_p: smallvec::SmallVec<[EdgeIn; 2]> = smallvec::SmallVec::new();
        edges_into(self.f, self.cfg, p, b, &mut from_p);
        for e in &from_p {
            self.join_edge(e.args[idx], e.test, acc);
        }
    }

    /// Joins into `acc` the range of `arg` passed along an edge, refined by the
    /// edge's `test` (nothing when the test rules the edge out).
    fn join_edge(&self, arg: Value, test: Option<(Value, bool)>, acc: &mut Option<Range>) {
        let Some(mut r) = self.range[arg] else {
            return;
        };
        if let Some((cond, taken)) = test {
            match self.refine(arg, r, cond, taken) {
                Some(refined) => r = refined,
                None => return, // the edge cannot pass this value
            }
        }
        *acc = Some(acc.map_or(r, |a| a.join(r)));
    }

    /// `r`, the range of `v`, narrowed by knowing that `cond` is `taken`.
    fn refine(&self, v: Value, r: Range, cond: Value, taken: bool) -> Option<Range> {
        let ValueDef::Inst(def) = self.f.value_def(cond) else {
            return Some(r);
        };
        let InstKind::Cmp { op, args } = *self.f.kind(def) else {
            return Some(r);
        };
        let (op, other) = if args[0] == v {
            (op, args[1])
        } else if args[1] == v {
            (op.swapped(), args[0])
        } else {
            return Some(r);
        };
        let Some(o) = self.range[other] else {
            return Some(r);
        };
        let op = match (taken, op.inverse()) {
            (true, _) => op,
            (false, Some(inverse)) => inverse,
            (false, None) => return Some(r),
        };
        let (lo, hi) = (i32::MIN as i64, i32::MAX as i64);
        let bound = match op {
            CmpOp::Slt => (lo, o.hi as i64 - 1),
            CmpOp::Sle => (lo, o.hi as i64),
            CmpOp::Sgt => (o.lo as i64 + 1, hi),
            CmpOp::Sge => (o.lo as i64, hi),
            CmpOp::Eq => (o.lo as i64, o.hi as i64),
            _ => return Some(r),
        };
        if bound.0 > bound.1 {
            return None;
        }
        r.meet(Range {
            lo: bound.0.max(lo) as i32,
            hi: bound.1.min(hi) as i32,
        })
    }

    /// The range of an instruction's `i32` result from its operands' ranges;
    /// `None` while an operand has none yet.
    fn eval(&self, kind: &InstKind) -> Option<Range> {
        let r = |v: Value| self.range[v];
        Some(match *kind {
            InstKind::Binary {
                op: op @ (BinOp::Add | BinOp::Sub),
                args: [a, b],
            } => {
                let plain = binary(op, r(a)?, r(b)?);
                let cases = self.select_cases(op, a, b, true).or_else(|| {
                    (op == BinOp::Add)
                        .then(|| self.select_cases(op, b, a, false))
                        .flatten()
                });
                match cases {
                    Some(c) => plain.meet(c).unwrap_or(c),
                    None => plain,
                }
            }
            InstKind::Binary { op, args: [a, b] } => binary(op, r(a)?, r(b)?),
            InstKind::Cmp { .. } => Range { lo: 0, hi: 1 },
            _ => Range::FULL,
        })
    }
}

impl Solver<'_> {
    /// `x op y` (`x` the left operand when `x_left`) where `y` is a masked
    /// select on a comparison of `x` with a constant ([`masked_select`]): the
    /// join of the two outcomes, each with `x` refined by it and `y` its value
    /// there (the selected constant, or `y`'s own range, or 0). LLVM's
    /// LazyValueInfo refines a `select`'s operands by its condition the same way;
    /// here the select is the arithmetic one (`vrp` writes a remainder of a value
    /// in `[0, 2m)` as `x - (m & ((x < m) - 1))`, which is in `[0, m)`, not in the
    /// `[-m, 2m)` the operands' ranges alone give). Only operands and constants
    /// are read, so the solver's requeueing on operand changes keeps it sound.
    fn select_cases(&self, op: BinOp, x: Value, y: Value, x_left: bool) -> Option<Range> {
        let (cond, when, v) = masked_select(self.f, y)?;
        let [c0, c1] = compared(self.f, cond)?;
        let other = if c0 == x {
            c1
        } else if c1 == x {
            c0
        } else {
            return None;
        };
        self.f.as_iconst(other)?;
        let rx = self.range[x]?;
        let selected = match self.f.as_iconst(v) {
            Some(c) => Range::constant(c),
            None => self.range[y]?,
        };
        let mut acc: Option<Range> = None;
        for taken in [true, false] {
            let Some(xr) = self.refine(x, rx, cond, taken) else {
                continue;
            };
            let yr = if taken == when {
                selected
            } else {
                Range::constant(0)
            };
            let r = if x_left {
                binary(op, xr, yr)
            } else {
                binary(op, yr, xr)
            };
            acc = Some(acc.map_or(r, |a| a.join(r)));
        }
        acc
    }
}

/// Pushes onto `out` the edges from `p` into `b` (both ways of a branch may go
/// there), as the solve joins them: the arguments each passes and the test it
/// is refined by.
fn edges_into<'f>(
    f: &'f Function,
    cfg: &ControlFlowGraph,
    p: Block,
    b: Block,
    out: &mut impl Extend<EdgeIn<'f>>,
) {
    let Some(term) = f.terminator(p) else {
        return;
    };
    match f.kind(term) {
        InstKind::Jump { dest } if dest.block == b => out.extend([EdgeIn {
            args: &dest.args[..],
            test: entry_test(f, cfg, p),
        }]),
        InstKind::Br {
            cond,
            then_dest,
            else_dest,
        } => {
            if then_dest.block == b {
                out.extend([EdgeIn {
                    args: &then_dest.args[..],
                    test: Some((*cond, true)),
                }]);
            }
            if else_dest.block == b {
                out.extend([EdgeIn {
                    args: &else_dest.args[..],
                    test: Some((*cond, false)),
                }]);
            }
        }
        _ => {}
    }
}

/// The test every way into `p` has passed, for a block `p` entered only by
/// one edge of a branch on a comparison with a constant (a preheader below a
/// loop's guard): `p`'s own jump passes its arguments refined by it, as
/// LazyValueInfo looks through single-predecessor blocks. Only a constant
/// may be compared: the refinement then never changes as the solve goes on
/// (the branch's other operand would not requeue the parameters below `p`).
fn entry_test(f: &Function, cfg: &ControlFlowGraph, p: Block) -> Option<(Value, bool)> {
    let &[q] = cfg.preds(p) else {
        return None;
    };
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = f.kind(f.terminator(q)?)
    else {
        return None;
    };
    if then_dest.block == else_dest.block || q == p {
        return None;
    }
    let ValueDef::Inst(def) = f.value_def(*cond) else {
        return None;
    };
    let InstKind::Cmp { args, .. } = f.kind(def) else {
        return None;
    };
    if f.as_iconst(args[0]).is_none() && f.as_iconst(args[1]).is_none() {
        return None;
    }
    Some((*cond, then_dest.block == p))
}

/// `y` as an arithmetic select (the branchless select of a target without
/// conditional moves, as `vrp` and `ifconvert` write it): `and m, v` (either
/// order) with the mask `m` all ones or zero by a comparison `c`: `add c, -1`
/// (all ones when `c` is false) or `sub 0, c` (all ones when `c` is true). Then
/// `y` is `v` when `c` is the returned truth value, else 0.
pub(crate) fn masked_select(f: &Function, y: Value) -> Option<(Value, bool, Value)> {
    let and = f.def_inst(y)?;
    let InstKind::Binary {
        op: BinOp::And,
        args: [p, q],
    } = *f.kind(and)
    else {
        return None;
    };
    let mask = |m: Value| -> Option<(Value, bool)> {
        let InstKind::Binary { op, args: [a, b] } = *f.kind(f.def_inst(m)?) else {
            return None;
        };
        let is_cmp = |c: Value| {
            f.def_inst(c)
                .is_some_and(|d| matches!(f.kind(d), InstKind::Cmp { .. }))
        };
        match op {
            BinOp::Add if f.as_iconst(b) == Some(-1) && is_cmp(a) => Some((a, false)),
            BinOp::Sub if f.as_iconst(a) == Some(0) && is_cmp(b) => Some((b, true)),
            _ => None,
        }
    };
    match (mask(p), mask(q)) {
        (Some((c, when)), _) => Some((c, when, q)),
        (None, Some((c, when))) => Some((c, when, p)),
        (None, None) => None,
    }
}

/// Whether each value of `f` is an `i32`.
fn int_values(f: &Function) -> SecondaryMap<Value, bool> {
    let mut int = SecondaryMap::new();
    int.resize(f.num_values());
    for v in f.all_values() {
        int[v] = f.value_type(v) == Type::I32;
    }
    int
}

/// Whether [`Ranges::compute`] gives the `i32` value `v` the full range by
/// its definition alone, whatever the rest of the function (when the solve
/// reaches it): a parameter of the function, or the result of an instruction
/// other than an integer operation or comparison (a load, a call, a
/// conversion). What [`Solver::new`] and [`Solver::eval`] give them, told
/// without a solve.
pub fn full_by_definition(f: &Function, v: Value) -> bool {
    match f.value_def(v) {
        ValueDef::Param(b, _) => b == f.entry_block(),
        ValueDef::Inst(i) => !matches!(f.kind(i), InstKind::Binary { .. } | InstKind::Cmp { .. }),
        _ => false,
    }
}

/// The operands of `cond` when it is an integer comparison.
fn compared(f: &Function, cond: Value) -> Option<[Value; 2]> {
    let def = f.def_inst(cond)?;
    match *f.kind(def) {
        InstKind::Cmp { args, .. } => Some(args),
        _ => None,
    }
}

/// `new`, grown from `old`, with each bound that moved pushed to its next
/// threshold: the nearest of `thresholds` (sorted) that holds it, else one short
/// of the `i32` end, then the end.
fn widened(old: Range, new: Range, thresholds: &[i32]) -> Range {
    let above = thresholds[thresholds.partition_point(|&t| t < new.hi)..].first();
    let below = thresholds[..thresholds.partition_point(|&t| t <= new.lo)].last();
    let hi = if new.hi > old.hi {
        if let Some(&t) = above.filter(|&&t| t < i32::MAX - 1) {
            t
        } else if new.hi < i32::MAX - 1 {
            i32::MAX - 1
        } else {
            i32::MAX
        }
    } else {
        new.hi
    };
    let lo = if new.lo < old.lo {
        if let Some(&t) = below.filter(|&&t| t > i32::MIN + 1) {
            t
        } else if new.lo > i32::MIN + 1 {
            i32::MIN + 1
        } else {
            i32::MIN
        }
    } else {
        new.lo
    };
    Range { lo, hi }
}

/// The range of `a op b` for `a` in `x` and `b` in `y`, wrapping as `i32` does.
pub fn binary(op: BinOp, x: Range, y: Range) -> Range {
    // Two single numbers: the one result, folded as the target computes it
    // (exact where the bounds below are not: `-18 % 686` is `-18`, which the
    // remainder's sign rule alone puts in `[-18, 0]`).
    if x.lo == x.hi && y.lo == y.hi {
        if let Some(Const::I(c)) = fold_binary(op, Const::I(x.lo), Const::I(y.lo)) {
            return Range { lo: c, hi: c };
        }
    }
    let (xl, xh, yl, yh) = (x.lo as i64, x.hi as i64, y.lo as i64, y.hi as i64);
    match op {
        BinOp::Add => Range::from_i64(xl + yl, xh + yh),
        BinOp::Sub => Range::from_i64(xl - yh, xh - yl),
        BinOp::Mul => {
            let p = [xl * yl, xl * yh, xh * yl, xh * yh];
            Range::from_i64(*p.iter().min().unwrap(), *p.iter().max().unwrap())
        }
        BinOp::SDiv if y.lo == y.hi && y.lo != 0 => {
            let d = yl;
            if d == -1 && x.lo == i32::MIN {
                return Range::FULL; // MIN / -1 wraps to MIN
            }
            // Truncating division by a constant is monotone in the dividend.
            let (a, b) = (xl / d, xh / d);
            Range::from_i64(a.min(b), a.max(b))
        }
        BinOp::SDiv if y.lo > 0 || y.hi < 0 => {
            // A divisor of one sign, at least `m` in magnitude: the quotient is at
            // most |x| / m in magnitude (`MIN / -1` wraps: excluded).
            if x.lo == i32::MIN && y.lo <= -1 && y.hi >= -1 {
                return Range::FULL;
            }
            let m = if y.lo > 0 { yl } else { -yh };
            let q = xl.abs().max(xh.abs()) / m;
            let (lo, hi) = match (x.lo >= 0, x.hi <= 0, y.lo > 0) {
                (true, _, true) | (_, true, false) => (0, q),
                (_, true, true) | (true, _, false) => (-q, 0),
                _ => (-q, q),
            };
            Range::from_i64(lo, hi)
        }
        BinOp::SRem if y.lo > i32::MIN && !(y.lo <= 0 && y.hi >= 0) => {
            // A dividend smaller in magnitude than every divisor is the remainder
            // (LLVM's `ConstantRange::srem`).
            let least = yl.abs().min(yh.abs());
            if -least < xl && xh < least {
                return x;
            }
            // |a % b| < |b| and |a % b| <= |a|, with the sign of `a`.
            let m = yl.abs().max(yh.abs()) - 1;
            let lo = if xl >= 0 { 0 } else { xl.max(-m) };
            let hi = if xh <= 0 { 0 } else { xh.min(m) };
            Range::from_i64(lo, hi)
        }
        BinOp::And if x.lo >= 0 || y.lo >= 0 => {
            let hi = match (x.lo >= 0, y.lo >= 0) {
                (true, true) => x.hi.min(y.hi),
                (true, false) => x.hi,
                _ => y.hi,
            };
            Range { lo: 0, hi }
        }
        // A mask that is all ones or zero gives the other operand or 0.
        BinOp::And if x.within(-1, 0) || y.within(-1, 0) => {
            let other = if x.within(-1, 0) { y } else { x };
            other.join(Range::constant(0))
        }
        BinOp::Or | BinOp::Xor if x.lo >= 0 && y.lo >= 0 => {
            // Below the next power of two of the larger operand.
            let top = x.hi.max(y.hi) as u32;
            let mask = if top == 0 {
                0
            } else {
                u32::MAX >> top.leading_zeros()
            };
            Range {
                lo: 0,
                hi: mask as i32,
            }
        }
        BinOp::Shl if y.lo == y.hi => {
            let k = (y.lo & 31) as u32;
            Range::from_i64(xl << k, xh << k)
        }
        BinOp::AShr if y.lo == y.hi => {
            let k = (y.lo & 31) as u32;
            Range {
                lo: x.lo >> k,
                hi: x.hi >> k,
            }
        }
        BinOp::LShr if y.lo == y.hi => {
            let k = (y.lo & 31) as u32;
            if x.lo >= 0 {
                Range {
                    lo: x.lo >> k,
                    hi: x.hi >> k,
                }
            } else if k > 0 {
                Range {
                    lo: 0,
                    hi: (u32::MAX >> k) as i32,
                }
            } else {
                Range::FULL
            }
        }
        _ => Range::FULL,
    }
}

/// `a op b` for every `a` in `x` and `b` in `y` (integer predicates): always
/// true, always false, or undecided (`None`).
pub fn compare(op: CmpOp, x: Range, y: Range) -> Option<bool> {
    let (always, never) = match op {
        CmpOp::Slt => (x.hi < y.lo, x.lo >= y.hi),
        CmpOp::Sle => (x.hi <= y.lo, x.lo > y.hi),
        CmpOp::Sgt => (x.lo > y.hi, x.hi <= y.lo),
        CmpOp::Sge => (x.lo >= y.hi, x.hi < y.lo),
        CmpOp::Eq => (x.lo == x.hi && x == y, x.meet(y).is_none()),
        CmpOp::Ne => (x.meet(y).is_none(), x.lo == x.hi && x == y),
        _ => return None,
    };
    if always {
        Some(true)
    } else if never {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges_of(src: &str) -> (Function, Ranges) {
        let m = ir::parse_module(src).expect("parses");
        let f = m.funcs.values().next().unwrap().clone();
        let cfg = ControlFlowGraph::compute(&f);
        let r = Ranges::compute(&f, &cfg);
        (f, r)
    }

    /// The range of `%k`: values are numbered as the printer numbers them, block
    /// parameters then instruction results in layout order (the sources here are
    /// written that way).
    fn range_of(f: &Function, r: &Ranges, k: usize) -> Option<Range> {
        r.get(numbered(f)[k])
    }

    /// The values of `f` in the printer's numbering (see [`range_of`]).
    fn numbered(f: &Function) -> Vec<Value> {
        let mut values = Vec::new();
        for b in f.layout.blocks() {
            values.extend_from_slice(f.block_params(b));
            values.extend(f.layout.block_insts(b).filter_map(|i| f.inst_result(i)));
        }
        values
    }

    /// What `full_by_definition` tells without a solve is what the solve gives:
    /// the full range, for the function's parameter, a load, a call and a
    /// conversion, and not for an operation, a comparison or a block parameter
    /// inside.
    #[test]
    fn values_full_by_definition_are_full_in_the_solve() {
        let src = "func @f(i32, ptr) -> i32 {\nbb0(%0: i32, %1: ptr):\n  %2 = load i32, %1\n\
             %3 = call @getint()\n  %4 = sitofp %3\n  %5 = fptosi %4\n  %6 = and %2, 7\n\
             %7 = slt %6, %5\n  jump bb1(%6)\nbb1(%8: i32):\n  ret %8\n}\n\
             declare @getint() -> i32\n";
        let (f, r) = ranges_of(src);
        let values = numbered(&f);
        let mut full = 0;
        for (k, &v) in values.iter().enumerate() {
            if f.value_type(v) != Type::I32 {
                continue;
            }
            if full_by_definition(&f, v) {
                assert_eq!(range_of(&f, &r, k), Some(Range::FULL), "%{k}");
                full += 1;
            } else {
                assert_ne!(range_of(&f, &r, k), Some(Range::FULL), "%{k}");
            }
        }
        assert_eq!(full, 4, "%0, %2, %3 and %5");
    }

    fn cfg_of(f: &Function) -> ControlFlowGraph {
        ControlFlowGraph::compute(f)
    }

    fn rg(lo: i32, hi: i32) -> Option<Range> {
        Some(Range { lo, hi })
    }

    /// A loop whose body is a chain of `n` tests of its counter, each branching to
    /// one join (block `n + 2`) with a constant or the counter, refined by the
    /// test. The counter is `%1`.
    fn chain_into_a_join(n: usize) -> Function {
        let join = 2 + n;
        let mut src = String::from(
            "func @f(i32) -> i32 {\nbb0(%0: i32):\n  jump bb1(0)\n\
             bb1(%1: i32):\n  %2 = slt %1, %0\n  br %2, bb2, bb99\n",
        );
        for k in 0..n {
            let (b, v) = (2 + k, 3 + k);
            let arg = if k % 2 == 0 {
                format!("{k}")
            } else {
                "%1".to_string()
            };
            let next = if k + 1 < n {
                format!("bb{}", b + 1)
            } else {
                format!("bb{join}(%1)")
            };
            src += &format!("bb{b}:\n  %{v} = slt %1, {k}\n  br %{v}, bb{join}({arg}), {next}\n");
        }
        let j = 3 + n;
        src += &format!(
            "bb{join}(%{j}: i32):\n  %{} = add %{j}, %1\n  %{} = add %1, 1\n  %{} = slt %{}, 100\n  br %{}, bb1(%{}), bb99\n\
             bb99:\n  ret %1\n}}\n",
            j + 1,
            j + 2,
            j + 3,
            j + 2,
            j + 3,
            j + 2
        );
        let m = ir::parse_module(&src).expect("parses");
        m.funcs.values().next().unwrap().clone()
    }

    /// The whole solve gives the same ranges with the join of 41 edges computed
    /// incrementally as with every computation over all edges.
    #[test]
    fn a_join_of_many_edges_gets_the_ranges_of_a_full_recompute() {
        let f = chain_into_a_join(40);
        let cfg = ControlFlowGraph::compute(&f);
        let incremental = Ranges::compute(&f, &cfg);
        let mut whole = Solver::new(&f, &cfg);
        whole.many_preds = usize::MAX;
        let whole = whole.solve();
        for v in f.all_values() {
            assert_eq!(incremental.get(v), whole.get(v), "{v}");
        }
        incremental.check(&f, &cfg).unwrap();
    }

    /// Loops in sequence and nested, as the front end makes them: a sum threaded
    /// through all of them, counters stepping up and down to constants and to the
    /// parameter, tests refining the values they pass.
    fn loops_in_sequence(n: usize) -> Function {
        let mut src = String::from("func @f(i32) -> i32 {\nbb0(%0: i32):\n  jump bb1(0, 0)\n");
        let mut v = 1;
        let mut b = 1;
        for k in 0..n {
            let (i, s, t) = (v, v + 1, v + 2);
            let (body, exit) = (b + 1, b + 2);
            let (step, bound, cmp) = match k % 4 {
                0 => ("1".to_string(), "%0".to_string(), "slt"),
                1 => ("2".to_string(), format!("{}", 10 * k + 7), "slt"),
                2 => ("1".to_string(), format!("{}", 3 * k), "sle"),
                _ => ("3".to_string(), "%0".to_string(), "sle"),
            };
            src += &format!("bb{b}(%{i}: i32, %{s}: i32):\n  %{t} = {cmp} %{i}, {bound}\n  br %{t}, bb{body}, bb{exit}(0, %{s})\n");
            let (x, y, z, w) = (v + 3, v + 4, v + 5, v + 6);
            src += &format!(
                "bb{body}:\n  %{x} = mul %{i}, {k}\n  %{y} = add %{s}, %{x}\n  %{z} = srem %{y}, 1000\n  %{w} = add %{i}, {step}\n  jump bb{b}(%{w}, %{z})\n"
            );
            v += 7;
            b += 2;
        }
        src += &format!("bb{b}(%{v}: i32, %{}: i32):\n  ret %{}\n}}\n", v + 1, v + 1);
        let m = ir::parse_module(&src).expect("parses");
        m.funcs.values().next().unwrap().clone()
    }

    /// Skipping the computations whose inputs did not change since their last one
    /// gives exactly the ranges of computing everything queued (widening makes the
    /// result depend on the order of the computations that change something).
    #[test]
    fn skipping_unchanged_computations_keeps_every_range() {
        let counter_loop = "func @f(i32) -> i32 {\n\
             bb0(%0: i32):\n  %1 = slt 0, %0\n  br %1, bb1(0, 5), bb2\n\
             bb1(%2: i32, %3: i32):\n  %4 = srem %2, 7\n  %5 = add %2, 2\n  %6 = sub %3, 1\n  %7 = slt %5, 600\n  br %7, bb1(%5, %6), bb2\n\
             bb2:\n  ret 0\n}\n";
        // A nest whose inner counter is widened and narrowed back to its exit
        // test; the inner loop's preheader passes a constant refined by its
        // guard (an entry test).
        let nest = "func @f(i32) -> i32 {\n\
             bb0(%0: i32):\n  jump bb1(0, 0)\n\
             bb1(%1: i32, %2: i32):\n  %3 = slt %1, 50\n  br %3, bb2, bb6(%2)\n\
             bb2:\n  %4 = slt %1, 9\n  br %4, bb3, bb5(%1)\n\
             bb3:\n  jump bb4(9, %2)\n\
             bb4(%5: i32, %6: i32):\n  %7 = add %5, 3\n  %8 = add %6, %5\n  %9 = slt %7, 300\n  br %9, bb4(%7, %8), bb5(%7)\n\
             bb5(%10: i32):\n  %11 = add %10, 1\n  %12 = srem %11, 64\n  jump bb1(%12, %11)\n\
             bb6(%13: i32):\n  ret %13\n}\n";
        let m = ir::parse_module(counter_loop).expect("parses");
        let n = ir::parse_module(nest).expect("parses");
        let functions = [
            loops_in_sequence(1),
            loops_in_sequence(12),
            chain_into_a_join(40),
            m.funcs.values().next().unwrap().clone(),
            n.funcs.values().next().unwrap().clone(),
        ];
        let mut skipped = 0;
        for f in &functions {
            let cfg = ControlFlowGraph::compute(f);
            let mut fast = Solver::new(f, &cfg);
            let mut all = Solver::new(f, &cfg);
            all.skip_unchanged = false;
            fast.solve_only();
            all.solve_only();
            skipped += all.computed - fast.computed;
            for v in f.all_values() {
                assert_eq!(fast.range[v], all.range[v], "{v}");
                assert_eq!(fast.growths[v], all.growths[v], "{v}");
            }
            let (fast, all) = (fast.finish(), all.finish());
            for v in f.all_values() {
                assert_eq!(fast.get(v), all.get(v), "{v}");
            }
            fast.check(f, &cfg).unwrap();
        }
        assert!(skipped > 0);
    }

    /// After the counter grows and the edges it feeds are requeued, the join's
    /// parameter takes in exactly what a recompute over every edge adds.
    #[test]
    fn a_big_join_takes_in_what_the_requeued_edges_add() {
        let n = 40;
        let f = chain_into_a_join(n);
        let cfg = ControlFlowGraph::compute(&f);
        let blocks: Vec<Block> = f.layout.blocks().collect();
        let (header, join) = (blocks[1], blocks[2 + n]);
        let counter = f.block_params(header)[0];
        let mut s = Solver::new(&f, &cfg);
        for v in f.all_values() {
            if s.range[v].is_none() {
                s.range[v] = Some(Range::FULL);
            }
        }
        s.range[counter] = rg(0, 0);
        let first = s.param_input(join, 0).unwrap();
        assert_eq!(first, Range { lo: 0, hi: 38 });
        // The counter grows: every test of it, and every edge passing it, requeued.
        s.range[counter] = rg(0, 60);
        for &b in &blocks[2..2 + n] {
            s.requeue_changed(f.terminator(b).unwrap(), None);
        }
        let added = s.param_input(join, 0).unwrap();
        let all = s.incoming(join, 0).unwrap();
        assert_eq!(first.join(added), first.join(all));
        assert_eq!(first.join(added), Range { lo: 0, hi: 60 });
    }

    #[test]
    fn a_counter_below_a_bound_settles_below_max() {
        let (f, r) = ranges_of(
            "func @f(i32) -> i32 {\n\
             bb0(%0: i32):\n  %1 = slt 0, %0\n  br %1, bb1(0), bb2\n\
             bb1(%2: i32):\n  %3 = srem %2, 7\n  %4 = add %2, 1\n  %5 = slt %4, %0\n  br %5, bb1(%4), bb2\n\
             bb2:\n  ret 0\n}\n",
        );
        assert_eq!(range_of(&f, &r, 2), rg(0, i32::MAX - 1));
        assert_eq!(range_of(&f, &r, 4), rg(1, i32::MAX));
        assert_eq!(range_of(&f, &r, 3), rg(0, 6));
    }

    #[test]
    fn a_counter_that_may_pass_max_wraps_to_the_full_range() {
        // `i <= n` on the back edge: n = MAX would wrap i to MIN.
        let (f, r) = ranges_of(
            "func @f(i32) -> i32 {\n\
             bb0(%0: i32):\n  jump bb1(0)\n\
             bb1(%1: i32):\n  %2 = add %1, 1\n  %3 = sle %2, %0\n  br %3, bb1(%2), bb2\n\
             bb2:\n  ret %1\n}\n",
        );
        assert_eq!(range_of(&f, &r, 1), Some(Range::FULL));
        assert_eq!(range_of(&f, &r, 2), Some(Range::FULL));
    }

    #[test]
    fn a_counter_stepping_by_two_to_a_constant_keeps_both_bounds() {
        // i = 4, 6, ..., 12 while i + 2 < 14: widened to the compared constant
        // (13), not to MAX - 1, where i + 2 would wrap.
        let (f, r) = ranges_of(
            "func @f() -> i32 {\n\
             bb0:\n  jump bb1(4)\n\
             bb1(%0: i32):\n  %1 = add %0, 2\n  %2 = slt %1, 14\n  br %2, bb1(%1), bb2\n\
             bb2:\n  ret %0\n}\n",
        );
        assert_eq!(range_of(&f, &r, 0), rg(4, 13));
        assert_eq!(range_of(&f, &r, 1), rg(6, 15));
        // Counting down by three from 5 while i - 3 > -14.
        let (f, r) = ranges_of(
            "func @f() -> i32 {\n\
             bb0:\n  jump bb1(5)\n\
             bb1(%0: i32):\n  %1 = add %0, -3\n  %2 = sgt %1, -14\n  br %2, bb1(%1), bb2\n\
             bb2:\n  ret %0\n}\n",
        );
        assert_eq!(range_of(&f, &r, 0), rg(-13, 5));
        r.check(&f, &cfg_of(&f)).unwrap();
    }

    #[test]
    fn a_counter_passing_every_compared_constant_still_wraps() {
        // The bound is a parameter: no constant stops the widening, and i + 2
        // may wrap past MAX, so nothing bounds i below.
        let (f, r) = ranges_of(
            "func @f(i32) -> i32 {\n\
             bb0(%0: i32):\n  jump bb1(0)\n\
             bb1(%1: i32):\n  %2 = add %1, 2\n  %3 = slt %2, %0\n  %4 = slt %1, 7\n  br %3, bb1(%2), bb2\n\
             bb2:\n  ret %1\n}\n",
        );
        assert_eq!(range_of(&f, &r, 1), rg(i32::MIN, i32::MAX - 1));
        r.check(&f, &cfg_of(&f)).unwrap();
    }

    #[test]
    fn single_numbers_fold_exactly() {
        let (f, r) = ranges_of(
            "func @f(i32) -> i32 {\n\
             bb0(%0: i32):\n  %1 = add -13, -5\n  %2 = srem %1, 686\n  %3 = add %2, 686\n  %4 = srem %3, 686\n\
             %5 = and %0, 7\n  %6 = srem %5, 9\n  %7 = srem %5, -8\n  %8 = srem %5, 5\n  ret %4\n}\n",
        );
        assert_eq!(range_of(&f, &r, 2), rg(-18, -18));
        assert_eq!(range_of(&f, &r, 4), rg(668, 668));
        // A dividend below every divisor's magnitude is its own remainder.
        assert_eq!(range_of(&f, &r, 6), rg(0, 7));
        assert_eq!(range_of(&f, &r, 7), rg(0, 7));
        // Not below 5: the remainder's bounds.
        assert_eq!(range_of(&f, &r, 8), rg(0, 4));
    }

    #[test]
    fn remainders_and_their_sums_stay_below_twice_the_divisor() {
        let (f, r) = ranges_of(
            "func @f(i32, i32) -> i32 {\n\
             bb0(%0: i32, %1: i32):\n  %2 = srem %0, 1000\n  %3 = add %2, %2\n  %4 = srem %1, -10\n\
             %5 = and %1, 255\n  %6 = sdiv %5, 4\n  %7 = mul %2, %2\n  %8 = mul %7, %7\n  ret %3\n}\n",
        );
        assert_eq!(range_of(&f, &r, 2), rg(-999, 999));
        assert_eq!(range_of(&f, &r, 3), rg(-1998, 1998));
        assert_eq!(range_of(&f, &r, 4), rg(-9, 9));
        assert_eq!(range_of(&f, &r, 6), rg(0, 63));
        assert_eq!(range_of(&f, &r, 7), rg(-998001, 998001));
        // 998001^2 leaves i32: the product may wrap.
        assert_eq!(range_of(&f, &r, 8), Some(Range::FULL));
    }

    #[test]
    fn a_bound_that_grows_later_widens_what_it_refines() {
        // The inner counter %2 is refined on its back edge by `%4 >= %1` being
        // false; the outer bound %1 grows only when the outer back edge is
        // reached, and the refinement must follow it (the solver revisits the
        // targets of a branch when an operand of its comparison changes).
        let (f, r) = ranges_of(
            "func @f() -> i32 {\n\
             bb0:\n  jump bb1(0)\n\
             bb1(%0: i32):\n  %1 = add %0, 0\n  jump bb2(0)\n\
             bb2(%2: i32):\n  %3 = add %2, 0\n  %4 = add %3, 1\n  %5 = sge %4, %1\n  br %5, bb3(%4), bb2(%4)\n\
             bb3(%6: i32):\n  %7 = add %6, 500\n  %8 = slt %0, 1\n  br %8, bb1(%7), bb4\n\
             bb4:\n  ret %3\n}\n",
        );
        // The first solve of the inner loop sees %1 = [0, 0], where its back edge
        // cannot be taken; %1 grows when the outer back edge is reached.
        let bound = range_of(&f, &r, 1).unwrap();
        assert!(bound.hi >= 500, "{bound:?}");
        let counter = range_of(&f, &r, 2).unwrap();
        assert!(counter.lo == 0 && counter.hi >= 499, "{counter:?}");
        r.check(&f, &ControlFlowGraph::compute(&f)).unwrap();
    }

    #[test]
    fn narrowing_takes_a_widened_counter_back_to_its_exit_test() {
        // i = 600, 599, ... while i > -600: widening takes the lower bound to the
        // i32 end, the back edge's test brings it back to -599; the quotient by
        // 1000 is then 0 and the remainder the counter itself.
        let (f, r) = ranges_of(
            "func @f() -> i32 {\n\
             bb0:\n  jump bb1(600)\n\
             bb1(%0: i32):\n  %1 = sdiv %0, 1000\n  %2 = srem %0, 1000\n  %3 = add %0, -1\n  %4 = sgt %3, -600\n  br %4, bb1(%3), bb2\n\
             bb2:\n  ret %1\n}\n",
        );
        assert_eq!(range_of(&f, &r, 0), rg(-599, 600));
        assert_eq!(range_of(&f, &r, 1), rg(0, 0));
        assert_eq!(range_of(&f, &r, 2), rg(-599, 600));
        assert_eq!(range_of(&f, &r, 3), rg(-600, 599));
        r.check(&f, &ControlFlowGraph::compute(&f)).unwrap();
    }

    #[test]
    fn a_counter_stepping_by_two_widens_to_its_compared_bound() {
        // i = 600, 598, ... while i - 2 > -599: the lower bound widens to the
        // compared -599, not to the i32 end, where i - 2 would wrap and take the
        // whole range with it (the quotient by 1000 would be unknown).
        let (f, r) = ranges_of(
            "func @f() -> i32 {\n\
             bb0:\n  jump bb1(600)\n\
             bb1(%0: i32):\n  %1 = sdiv %0, 1000\n  %2 = add %0, -2\n  %3 = sgt %2, -599\n  br %3, bb1(%2), bb2\n\
             bb2:\n  ret %1\n}\n",
        );
        assert_eq!(range_of(&f, &r, 0), rg(-598, 600));
        assert_eq!(range_of(&f, &r, 1), rg(0, 0));
        r.check(&f, &ControlFlowGraph::compute(&f)).unwrap();
    }

    #[test]
    fn a_compared_constant_the_counter_passes_does_not_bound_it() {
        // Must not stop at 10: the test on 10 does not guard the back edge, so the
        // counter climbs past it (to the i32 end: nothing bounds it).
        let (f, r) = ranges_of(
            "func @f(i32) -> i32 {\n\
             bb0(%0: i32):\n  jump bb1(0)\n\
             bb1(%1: i32):\n  %2 = slt %1, 10\n  %3 = add %1, 3\n  %4 = sgt %0, %1\n  br %4, bb1(%3), bb2\n\
             bb2:\n  ret %2\n}\n",
        );
        assert_eq!(range_of(&f, &r, 1), Some(Range::FULL));
        r.check(&f, &ControlFlowGraph::compute(&f)).unwrap();
    }

    #[test]
    fn narrowing_keeps_what_a_loop_may_reach() {
        // Must not shrink: the counter's back edge is guarded by a test on
        // another value (the parameter %0), so the counter may reach the i32 end;
        // and a nest whose inner counter restarts at the outer one keeps the
        // outer one's full span.
        let (f, r) = ranges_of(
            "func @f(i32) -> i32 {\n\
             bb0(%0: i32):\n  jump bb1(600, 0)\n\
             bb1(%1: i32, %2: i32):\n  %3 = add %1, -1\n  %4 = add %2, 1\n  %5 = slt %4, %0\n  br %5, bb1(%3, %4), bb2\n\
             bb2:\n  ret %1\n}\n",
        );
        assert_eq!(range_of(&f, &r, 1), Some(Range::FULL));
        assert_eq!(range_of(&f, &r, 2), rg(0, i32::MAX - 1));
        let (f, r) = ranges_of(
            "func @f() -> i32 {\n\
             bb0:\n  jump bb1(0)\n\
             bb1(%0: i32):\n  jump bb2(%0)\n\
             bb2(%1: i32):\n  %2 = add %1, 1\n  %3 = slt %2, 50\n  br %3, bb2(%2), bb3\n\
             bb3:\n  %4 = add %0, 1\n  %5 = slt %4, 40\n  br %5, bb1(%4), bb4\n\
             bb4:\n  ret %1\n}\n",
        );
        assert_eq!(range_of(&f, &r, 0), rg(0, 39));
        assert_eq!(range_of(&f, &r, 1), rg(0, 49));
        assert_eq!(range_of(&f, &r, 2), rg(1, 50));
        r.check(&f, &ControlFlowGraph::compute(&f)).unwrap();
    }

    #[test]
    fn a_countdown_refined_on_its_exit_test_stays_non_negative() {
        let (f, r) = ranges_of(
            "func @f(i32) -> i32 {\n\
             bb0(%0: i32):\n  %1 = sgt %0, 0\n  br %1, bb1(%0), bb2\n\
             bb1(%2: i32):\n  %3 = sdiv %2, 2\n  %4 = add %2, -1\n  %5 = sgt %4, 0\n  br %5, bb1(%4), bb2\n\
             bb2:\n  ret 0\n}\n",
        );
        assert_eq!(range_of(&f, &r, 2), rg(1, i32::MAX));
        assert_eq!(range_of(&f, &r, 3), rg(0, i32::MAX / 2));
    }

    /// A preheader below the loop's guard passes what the guard tested: its
    /// jump refines like the guard's edge. Not when the preheader has another
    /// way in, nor for a guard comparing two variables.
    #[test]
    fn a_preheaders_jump_passes_what_the_guard_above_it_tested() {
        let src = "func @f(i32, i32) -> i32 {\n\
             bb0(%0: i32, %1: i32):\n  %2 = sgt %0, 0\n  br %2, bb1, bb3\n\
             bb1:\n  jump bb2(%0)\n\
             bb2(%3: i32):\n  %4 = add %3, -1\n  %5 = sgt %4, 0\n  br %5, bb2(%4), bb3\n\
             bb3:\n  ret 0\n}\n";
        let (f, r) = ranges_of(src);
        assert_eq!(range_of(&f, &r, 3), rg(1, i32::MAX));
        r.check(&f, &cfg_of(&f)).unwrap();
        // bb1 is also entered from bb3's jump: nothing is known there.
        let two_ways = src
            .replace("br %2, bb1, bb3", "br %2, bb1, bb4")
            .replace("bb3:\n  ret 0", "bb4:\n  jump bb1\nbb3:\n  ret 0");
        let (f, r) = ranges_of(&two_ways);
        assert_eq!(range_of(&f, &r, 3), Some(Range::FULL));
        // A guard against a variable is not looked through.
        let (f, r) = ranges_of(&src.replace("sgt %0, 0", "sgt %0, %1"));
        assert_eq!(range_of(&f, &r, 3), Some(Range::FULL));
    }

    /// A grown argument marks stale the parameters it is passed to, on either
    /// arm, and only those; a grown condition (or a value the edges are refined
    /// by) marks every parameter of both targets.
    #[test]
    fn a_grown_argument_marks_the_parameters_it_is_passed_to() {
        let m = ir::parse_module(
            "func @f(i32, i32) -> i32 {\n\
             bb0(%0: i32, %1: i32):\n  %2 = slt %0, %1\n  br %2, bb1(%0, %1, %0), bb2(%1, %0)\n\
             bb1(%3: i32, %4: i32, %5: i32):\n  ret %3\n\
             bb2(%6: i32, %7: i32):\n  ret %6\n}\n",
        )
        .expect("parses");
        let f = m.funcs.values().next().unwrap().clone();
        let cfg = ControlFlowGraph::compute(&f);
        let b: Vec<Block> = f.layout.blocks().collect();
        let (x, y) = (f.block_params(b[0])[0], f.block_params(b[0])[1]);
        let cond = f
            .inst_result(f.layout.block_insts(b[0]).next().unwrap())
            .unwrap();
        let term = f.terminator(b[0]).unwrap();
        let params: Vec<Value> = [b[1], b[2]]
            .iter()
            .flat_map(|&t| f.block_params(t).to_vec())
            .collect();
        let marked = |changed: Option<Value>| {
            let mut s = Solver::new(&f, &cfg);
            for &p in &params {
                s.stale[p] = false;
            }
            s.requeue_changed(term, changed);
            let stale: Vec<bool> = params.iter().map(|&p| s.stale[p]).collect();
            // The stale parameters are queued, and only they.
            let queued: Vec<Value> = s
                .work
                .iter()
                .map(|item| match *item {
                    Item::Param(_, _, p) => p,
                    Item::Inst(..) => panic!("only parameters are requeued"),
                })
                .collect();
            let marked: Vec<Value> = params
                .iter()
                .zip(&stale)
                .filter(|(_, &st)| st)
                .map(|(&p, _)| p)
                .collect();
            assert_eq!(queued, marked);
            stale
        };
        assert_eq!(marked(Some(x)), [true, false, true, false, true]);
        assert_eq!(marked(Some(y)), [false, true, false, true, false]);
        assert_eq!(marked(Some(cond)), [true; 5]);
        // Every argument is an operand of the comparison.
        assert_eq!(marked(None), [true; 5]);
    }

    /// A grown operand of the comparison a branch tests marks the parameters its
    /// operands are passed to (their refinement changed), not those of other
    /// arguments; a branch on a value that is no comparison marks them all.
    #[test]
    fn a_grown_operand_of_the_condition_marks_the_parameters_of_its_operands() {
        let m = ir::parse_module(
            "func @f(i32, i32, i32) -> i32 {\n\
             bb0(%0: i32, %1: i32, %2: i32):\n  %3 = slt %0, %1\n  br %3, bb1(%0, %2, %2), bb2(%2, %1)\n\
             bb1(%4: i32, %5: i32, %6: i32):\n  ret %4\n\
             bb2(%7: i32, %8: i32):\n  ret %7\n}\n\
             func @g(i32, i32, i32) -> i32 {\n\
             bb0(%0: i32, %1: i32, %2: i32):\n  %3 = slt %0, %1\n  br %2, bb1(%0, %2), bb2(%3)\n\
             bb1(%4: i32, %5: i32):\n  ret %4\n\
             bb2(%6: i32):\n  ret %6\n}\n",
        )
        .expect("parses");
        let marked = |f: &Function| {
            let cfg = ControlFlowGraph::compute(f);
            let b: Vec<Block> = f.layout.blocks().collect();
            let params: Vec<Value> = [b[1], b[2]]
                .iter()
                .flat_map(|&t| f.block_params(t).to_vec())
                .collect();
            let mut s = Solver::new(f, &cfg);
            for &p in &params {
                s.stale[p] = false;
            }
            s.requeue_changed(f.terminator(b[0]).unwrap(), None);
            params.iter().map(|&p| s.stale[p]).collect::<Vec<bool>>()
        };
        let funcs: Vec<&Function> = m.funcs.values().collect();
        // `%0` and `%1` are compared; `%2` is refined by nothing.
        assert_eq!(marked(funcs[0]), [true, false, false, false, true]);
        // The branch tests a parameter: every target parameter is marked.
        assert_eq!(marked(funcs[1]), [true; 3]);
    }

    #[test]
    fn an_arithmetic_select_on_a_test_of_the_other_operand_is_split_by_the_test() {
        // %2 in [1, 11]; `%2 - (6 & ((%2 < 6) - 1))` is `%2 % 6`, in [0, 5] (the
        // operands alone give [-5, 11]); `%8 = %2 + (-3 & -(%2 > 8))` subtracts 3
        // only above 8: [1, 8]; a mask alone selects its value or 0: `%9` in
        // [-3, 0]. Must not: a test of another value (`%11` compares %0) or
        // against a non-constant leaves the plain interval.
        let (f, r) = ranges_of(
            "func @f(i32) -> i32 {\n\
             bb0(%0: i32):\n  %1 = srem %0, 6\n  %2 = add %1, 6\n  %3 = slt %2, 6\n  \
             %4 = add %3, -1\n  %5 = and %4, 6\n  %6 = sub %2, %5\n  %7 = sgt %2, 8\n  \
             %8 = sub 0, %7\n  %9 = and -3, %8\n  %10 = add %9, %2\n  %11 = slt %0, 6\n  \
             %12 = add %11, -1\n  %13 = and %12, 6\n  %14 = sub %2, %13\n  %15 = slt %2, %1\n  \
             %16 = add %15, -1\n  %17 = and %16, 6\n  %18 = sub %2, %17\n  ret %6\n}\n",
        );
        assert_eq!(range_of(&f, &r, 2), rg(1, 11));
        assert_eq!(range_of(&f, &r, 6), rg(0, 5));
        assert_eq!(range_of(&f, &r, 9), rg(-3, 0));
        assert_eq!(range_of(&f, &r, 10), rg(1, 8));
        assert_eq!(range_of(&f, &r, 14), rg(-5, 11));
        assert_eq!(range_of(&f, &r, 18), rg(-5, 11));
        r.check(&f, &cfg_of(&f)).unwrap();
    }
}
