//! The analysis manager: per-function analyses computed once and kept until a
//! pass that changes what they depend on invalidates them (the design of LLVM's
//! new pass manager and of Cranelift's `Context`, reduced to what the passes
//! here share).
//!
//! The CFG, the dominator tree and the loop forest of a function depend only on
//! its control flow: its blocks and the edges between them. A pass states what
//! it keeps valid ([`Preserved`]). A pass that leaves the edges alone (it
//! rewrites instructions, adds block parameters or moves code within the CFG)
//! preserves the CFG and so its dominators and loops, and the next pass that asks
//! for them gets the cached ones. After a pass that changed the module without
//! preserving them, a function's cached analyses are compared with it before
//! their next use: the layout's block order and each block's successors, one walk
//! over the terminators. If those are unchanged, a fresh computation would give
//! the same CFG, dominator tree and loops, and the cached ones serve on (most
//! changes touch instructions only: in a long pipeline the edges of a function
//! change a few times, while dozens of passes ask for them); otherwise they are
//! dropped and computed anew.
//!
//! The scalar evolution ([`FunctionAnalyses::scev`]) is kept with the loop forest
//! it describes, but it depends on the instructions too: it is dropped with the
//! loops, and also whenever a pass reports a change to the function
//! ([`AnalysisManager::on_function`]) or changed the module without saying which
//! functions ([`AnalysisManager::invalidate`]), whatever else the pass preserves. So passes that
//! change nothing (most loop passes, on most functions) share one analysis, and a
//! pass that changes the function and then asks again calls
//! [`FunctionAnalyses::forget_scev`] (or [`FunctionAnalyses::forget`]) first.
//!
//! The value ranges ([`FunctionAnalyses::ranges`]) depend on the instructions
//! too, and are kept and dropped with the scalar evolution: a pass that asks for
//! them on a function no pass changed since the last solve (an instcombine or
//! value range propagation that found nothing to do, and the passes after it
//! that changed nothing) gets the cached ones.
//!
//! One module-level analysis is kept by function: the mod/ref summaries
//! ([`ModRef`], of which [`Purity`] is a view), which walk every body of the
//! module. A body's walk is kept until a pass reports that function changed;
//! [`AnalysisManager::modref`] and [`AnalysisManager::purity`] walk only the
//! bodies changed since and solve the call graph's fixed point on the walks. A
//! pass that changes functions only inside the closures it gives to
//! [`AnalysisManager::each_function`], and reports each change there, says so
//! ([`Preserved::with_other_functions`]); after any other pass that changed
//! something, every summary is dropped.
//!
//! Getting this wrong would be a miscompile waiting to happen, so with
//! verification on (`--verify-each`, every test) [`AnalysisManager::check`]
//! compares each cached analysis with a fresh computation after every pass.

use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, FuncId, Function, Module, SecondaryMap};

use super::modref::Body;
use super::ranges::Ranges;
use super::scev::{ScalarEvolution, ScevState};
use super::{LoopForest, LoopId, ModRef, PostDominatorTree, Purity};
use crate::passes::value_numbering::cgvn::Numbering;

/// What a pass keeps valid when it changes the module.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Preserved {
    /// The blocks and edges of every function (so the CFG, dominator tree and
    /// loop forest).
    pub cfg: bool,
    /// Every function the pass did not report changed: it changes bodies only in
    /// the closures it gives [`AnalysisManager::each_function`] (or
    /// [`AnalysisManager::each_function_by_id`]), each of which returns true when
    /// it changed its function, and adds or removes no function. The facts
    /// kept by function (purity summaries) of the other functions stay exact.
    pub other_functions: bool,
}

impl Preserved {
    /// The pass may change anything.
    pub const NOTHING: Preserved = Preserved {
        cfg: false,
        other_functions: false,
    };
    /// The pass changes no function's blocks or edges, and adds or removes no
    /// function.
    pub const CFG: Preserved = Preserved {
        cfg: true,
        other_functions: false,
    };

    /// `self`, and the functions the pass did not report changed.
    pub const fn with_other_functions(self) -> Preserved {
        Preserved {
            other_functions: true,
            ..self
        }
    }
}

/// The passes that ran on something (a function or the module) at one of its
/// versions (a function's, or the module's change clock) and changed nothing,
/// each with that version ([`FunctionShare::is_settled`]).
#[derive(Default)]
struct Settled(Vec<(&'static str, u64)>);

impl Settled {
    /// Whether `name` ran at time `now` and changed nothing.
    fn contains(&self, name: &str, now: u64) -> bool {
        self.0.iter().any(|&(n, at)| n == name && at == now)
    }

    /// Records that `name` ran at time `now` and changed nothing; entries of
    /// other times, stale, go.
    fn record(&mut self, name: &'static str, now: u64) {
        self.0.retain(|&(n, at)| at == now && n != name);
        self.0.push((name, now));
    }
}

/// The cached analyses of one function.
#[derive(Default)]
pub struct FunctionAnalyses {
    cfg: Option<ControlFlowGraph>,
    /// The layout's blocks when `cfg` was computed. A fresh computation walks them
    /// in this order, so it gives the same CFG (edges, their order, the reverse
    /// post-order) while the layout and every block's successors are unchanged.
    order: Vec<Block>,
    /// A pass that may have changed the edges ran since: compare before use.
    unverified: bool,
    domtree: Option<DominatorTree>,
    loops: Option<LoopForest>,
    postdom: Option<PostDominatorTree>,
    /// The scalar evolution found so far (without value ranges), valid while the
    /// function is unchanged.
    scev: Option<ScevState>,
    /// With verification on: the function's text when `scev` was started, so
    /// [`AnalysisManager::check`] finds a change made behind its back.
    scev_text: Option<String>,
    /// The value ranges, valid while the function is unchanged (dropped with
    /// `scev`).
    ranges: Option<Ranges>,
    /// With verification on: the function's text when `ranges` were solved.
    ranges_text: Option<String>,
    /// The complete value numbers of the function as it is now, left by a pass
    /// that computed them and changed nothing, for the next pass that needs them
    /// (dropped with `scev`).
    numbering: Option<KeptNumbering>,
    /// Whether the manager verifies its caches (`scev_text` is kept).
    verify: bool,
    /// Analyses computed (not served from the cache) so far.
    computations: usize,
    /// The number of instruction slots below which the function is not looked at
    /// for compaction ([`AnalysisManager::compact_if_sparse`]).
    next_compaction_check: usize,
    /// How many changes were reported to the function: its version, which
    /// moves whenever it may have changed.
    version: u64,
    /// The function passes that ran on the function as it is now (at
    /// `version`) and changed nothing.
    settled: Settled,
}

/// Complete value numbers kept between passes ([`FunctionAnalyses::keep_numbering`]).
struct KeptNumbering {
    /// The function's version when they were computed.
    version: u64,
    /// The effects of the function's callees they were computed under (the
    /// numbers of a call depend on what its callee may do): only these, so keeping
    /// the numbers of every function costs time and memory linear in the module.
    callee_effects: Vec<(FuncId, super::Effects)>,
    /// With verification on: the function's text when they were kept.
    text: Option<String>,
    numbering: Numbering,
}

/// A copy of the cached analyses of the edges (the scalar evolution, which has
/// no copy, is computed anew on demand).
impl Clone for FunctionAnalyses {
    fn clone(&self) -> Self {
        FunctionAnalyses {
            cfg: self.cfg.clone(),
            order: self.order.clone(),
            unverified: self.unverified,
            domtree: self.domtree.clone(),
            loops: self.loops.clone(),
            postdom: self.postdom.clone(),
            scev: None,
            scev_text: None,
            ranges: None,
            ranges_text: None,
            numbering: None,
            verify: self.verify,
            computations: self.computations,
            next_compaction_check: self.next_compaction_check,
            version: self.version,
            settled: Settled::default(),
        }
    }
}

impl FunctionAnalyses {
    /// Drops the cached analyses if `f`'s edges changed since they were computed
    /// (when a pass that may change them ran since). The CFG is then what a fresh
    /// computation would give, and the dominator tree and loops, which depend on
    /// nothing else, stay exact too.
    fn revalidate(&mut self, f: &Function) {
        if !std::mem::take(&mut self.unverified) {
            return;
        }
        let Some(cfg) = &self.cfg else {
            return;
        };
        let same = f.layout.blocks().eq(self.order.iter().copied())
            && self
                .order
                .iter()
                .all(|&b| f.successors(b).as_slice() == cfg.succs(b));
        if !same {
            self.forget();
        }
    }

    /// Drops every cached analysis (a pass that changes the edges and then asks
    /// again calls this first).
    pub fn forget(&mut self) {
        self.cfg = None;
        self.order = Vec::new();
        self.domtree = None;
        self.loops = None;
        self.postdom = None;
        self.forget_scev();
    }

    /// Runs `round` on `f` again and again, at most `limit` times, until it
    /// returns `None`; the sum of the changes the rounds report. A transformation
    /// that finds one change (or one set of independent changes) per round on the
    /// analyses of `f` as it then is: the first round takes the cached analyses,
    /// each later one computes them anew, after what the last round did. The
    /// analyses left are those of the last round.
    pub fn rounds(
        &mut self,
        f: &mut Function,
        limit: usize,
        mut round: impl FnMut(&mut Function, &mut FunctionAnalyses) -> Option<usize>,
    ) -> usize {
        if f.is_declaration() {
            return 0;
        }
        let mut changes = 0;
        for k in 0..limit {
            if k > 0 {
                self.forget();
            }
            match round(f, self) {
                Some(n) => changes += n,
                None => break,
            }
        }
        changes
    }

    /// Drops the scalar evolution, the value ranges and the kept value numbers
    /// (a pass that changed the function's instructions and asks for them again
    /// calls this first).
    pub fn forget_scev(&mut self) {
        self.scev = None;
        self.scev_text = None;
        self.ranges = None;
        self.ranges_text = None;
        self.numbering = None;
    }

    /// Keeps `numbering`, the complete value numbers of `f` under `purity`
    /// ([`crate::passes::value_numbering::cgvn`]), for the next pass that needs them while `f` is
    /// unchanged: the caller computed them and changed nothing.
    pub(crate) fn keep_numbering(&mut self, f: &Function, purity: &Purity, numbering: Numbering) {
        self.numbering = Some(KeptNumbering {
            version: self.version,
            callee_effects: super::callgraph::callees_of(f)
                .into_iter()
                .map(|g| (g, purity.effects(g)))
                .collect(),
            text: self.verify.then(|| fingerprint(f)),
            numbering,
        });
    }

    /// The complete value numbers kept by [`FunctionAnalyses::keep_numbering`], if
    /// the function has not changed since and they were computed under `purity`
    /// (the numbers of a call depend on what its callee may do).
    pub(crate) fn take_numbering(&mut self, purity: &Purity) -> Option<Numbering> {
        let kept = self.numbering.take()?;
        let same_effects = kept
            .callee_effects
            .iter()
            .all(|&(g, e)| purity.effects(g) == e);
        (kept.version == self.version && same_effects).then_some(kept.numbering)
    }

    /// Whether the manager checks its caches ([`AnalysisManager::verifying`]):
    /// a pass given a cached result may then compare it with a fresh one.
    pub fn verifies(&self) -> bool {
        self.verify
    }

    /// The value ranges of `f` ([`Ranges::compute`]), solved once while `f` is
    /// unchanged. A pass that changes `f` may go on reading the ones it got (as
    /// with any [`Ranges`], by [`Ranges::of`] after meaning-preserving rewrites),
    /// but must not ask again: the cache is dropped only when it reports the
    /// change.
    pub fn ranges(&mut self, f: &Function) -> &Ranges {
        if self.ranges.is_none() {
            self.cfg_slot(f);
            self.computations += 1;
            self.ranges_text = self.verify.then(|| fingerprint(f));
            let cfg = self.cfg.as_ref().expect("computed above");
            self.ranges = Some(Ranges::compute(f, cfg));
        }
        self.ranges.as_ref().expect("computed above")
    }

    /// The CFG, dominator tree and loop forest of `f` with its value ranges
    /// ([`Self::loops`] and [`Self::ranges`] at once), on the same terms as
    /// [`Self::ranges`].
    pub fn loops_and_ranges(
        &mut self,
        f: &Function,
    ) -> (&ControlFlowGraph, &DominatorTree, &LoopForest, &Ranges) {
        self.ranges(f);
        self.loops(f);
        let cfg = self.cfg.as_ref().expect("computed above");
        let dt = self.domtree.as_ref().expect("computed above");
        let loops = self.loops.as_ref().expect("computed above");
        let ranges = self.ranges.as_ref().expect("computed above");
        (cfg, dt, loops, ranges)
    }

    /// The scalar evolution of `f` (without value ranges), continuing from what
    /// earlier passes found while `f` was unchanged; its `cfg`, `dt` and `loops`
    /// are the cached ones.
    pub fn scev<'a>(&'a mut self, f: &'a Function) -> ScalarEvolution<'a> {
        self.loops(f);
        if self.scev.is_none() {
            self.computations += 1;
            self.scev_text = self.verify.then(|| fingerprint(f));
        }
        let FunctionAnalyses {
            cfg,
            domtree,
            loops,
            scev,
            ..
        } = self;
        let (cfg, dt, loops) = (
            cfg.as_ref().expect("computed above"),
            domtree.as_ref().expect("computed above"),
            loops.as_ref().expect("computed above"),
        );
        let state = scev.get_or_insert_with(|| ScevState::new(false));
        ScalarEvolution::with_state(f, cfg, dt, loops, state)
    }

    /// The CFG and post-dominator tree of `f` with what its scalar evolution
    /// needs ([`Self::postdom`] and [`Self::scev`] at once): for a pass that
    /// consults the evolution while it holds the trees, then changes `f`.
    pub fn postdom_and_scev<'a>(
        &'a mut self,
        f: &Function,
    ) -> (&'a ControlFlowGraph, &'a PostDominatorTree, ScevParts<'a>) {
        self.scev(f);
        self.postdom(f);
        let FunctionAnalyses {
            cfg,
            domtree,
            loops,
            postdom,
            scev,
            ..
        } = self;
        let parts = ScevParts {
            dt: domtree.as_ref().expect("computed above"),
            loops: loops.as_ref().expect("computed above"),
            state: scev.as_mut().expect("started above"),
        };
        let cfg = cfg.as_ref().expect("computed above");
        let pdt = postdom.as_ref().expect("computed above");
        (cfg, pdt, parts)
    }

    /// What `plan` finds in each loop of `f` (in the forest's order), all from one
    /// scalar evolution of `f`: for a pass that plans every loop before it edits
    /// any, with edits that leave the other plans valid.
    pub fn plan_loops<T>(
        &mut self,
        f: &Function,
        mut plan: impl FnMut(&mut ScalarEvolution, LoopId) -> Option<T>,
    ) -> Vec<T> {
        let mut se = self.scev(f);
        let loops = se.loops;
        loops
            .loops()
            .filter_map(|(id, _)| plan(&mut se, id))
            .collect()
    }

    fn cfg_slot(&mut self, f: &Function) -> &mut ControlFlowGraph {
        self.revalidate(f);
        if self.cfg.is_none() {
            self.order = f.layout.blocks().collect();
            self.computations += 1;
        }
        self.cfg.get_or_insert_with(|| ControlFlowGraph::compute(f))
    }

    /// The CFG of `f`.
    pub fn cfg(&mut self, f: &Function) -> &ControlFlowGraph {
        self.cfg_slot(f)
    }

    /// The CFG and dominator tree of `f`.
    pub fn domtree(&mut self, f: &Function) -> (&ControlFlowGraph, &DominatorTree) {
        self.cfg_slot(f);
        self.computations += usize::from(self.domtree.is_none());
        let cfg = self.cfg.as_ref().expect("computed above");
        let dt = self
            .domtree
            .get_or_insert_with(|| DominatorTree::compute(f, cfg));
        (cfg, dt)
    }

    /// The CFG and post-dominator tree of `f`.
    pub fn postdom(&mut self, f: &Function) -> (&ControlFlowGraph, &PostDominatorTree) {
        self.cfg_slot(f);
        self.computations += usize::from(self.postdom.is_none());
        let cfg = self.cfg.as_ref().expect("computed above");
        let pdt = self
            .postdom
            .get_or_insert_with(|| PostDominatorTree::compute(f, cfg));
        (cfg, pdt)
    }

    /// The CFG, dominator tree and loop forest of `f`.
    pub fn loops(&mut self, f: &Function) -> (&ControlFlowGraph, &DominatorTree, &LoopForest) {
        self.cfg_slot(f);
        self.computations +=
            usize::from(self.domtree.is_none()) + usize::from(self.loops.is_none());
        let cfg = self.cfg.as_ref().expect("computed above");
        let dt = self
            .domtree
            .get_or_insert_with(|| DominatorTree::compute(f, cfg));
        let loops = self
            .loops
            .get_or_insert_with(|| LoopForest::compute(f, cfg, dt));
        (cfg, dt, loops)
    }
}

/// The cached dominator tree, loops and scalar evolution state of a function
/// ([`FunctionAnalyses::postdom_and_scev`]).
pub struct ScevParts<'a> {
    dt: &'a DominatorTree,
    loops: &'a LoopForest,
    state: &'a mut ScevState,
}

impl ScevParts<'_> {
    /// The scalar evolution of `f` (unchanged since the parts were taken), whose
    /// CFG is `cfg`.
    pub fn evolution<'s>(
        &'s mut self,
        f: &'s Function,
        cfg: &'s ControlFlowGraph,
    ) -> ScalarEvolution<'s> {
        ScalarEvolution::with_state(f, cfg, self.dt, self.loops, self.state)
    }
}

/// What the scalar evolution of `f` depends on, as text: every block's
/// parameters and instructions, in layout order (for [`AnalysisManager::check`],
/// and for the pass manager's check that a settled function pass changes
/// nothing, [`FunctionShare::is_settled`]).
pub(crate) fn fingerprint(f: &Function) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for b in f.layout.blocks() {
        let _ = writeln!(out, "{b}{:?}", f.block_params(b));
        for i in f.layout.block_insts(b) {
            let _ = writeln!(out, "{:?} {:?}", f.inst_result(i), f.kind(i));
        }
    }
    out
}

/// One defined function's part of the [`AnalysisManager`]: its cached analyses
/// and summary, with the changes and computations reported to it, which the
/// manager counts when the share comes back ([`AnalysisManager::absorb`]).
/// Function passes run through shares, so that they can run on several
/// functions at once, each share on one thread.
pub struct FunctionShare<'a> {
    fa: &'a mut FunctionAnalyses,
    /// The function's mod/ref walk, dropped when it changes.
    summary: &'a mut Option<Body>,
    verify: bool,
    /// Changes reported to the function.
    changes: u64,
    /// Analyses computed (not served from the cache).
    computed: usize,
}

/// What a [`FunctionShare`] had reported to it, for its manager to count.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reported {
    changes: u64,
    computed: usize,
}

impl<'a> FunctionShare<'a> {
    fn new(fa: &'a mut FunctionAnalyses, summary: &'a mut Option<Body>, verify: bool) -> Self {
        FunctionShare {
            fa,
            summary,
            verify,
            changes: 0,
            computed: 0,
        }
    }

    /// The changes and computations reported so far, for
    /// [`AnalysisManager::absorb`].
    pub fn reported(&self) -> Reported {
        Reported {
            changes: self.changes,
            computed: self.computed,
        }
    }

    /// Runs `pass` on `f`, the share's function, with its cached analyses;
    /// whether it changed `f` (which drops `f`'s scalar evolution and summary).
    pub fn on_function(
        &mut self,
        f: &mut Function,
        pass: impl FnOnce(&mut Function, &mut FunctionAnalyses) -> bool,
    ) -> bool {
        let fa = &mut *self.fa;
        fa.verify = self.verify;
        let before = fa.computations;
        let changed = pass(f, fa);
        self.computed += self.fa.computations - before;
        if changed {
            self.note_change();
            self.fa.forget_scev();
            *self.summary = None;
        }
        changed
    }

    /// The function changed.
    fn note_change(&mut self) {
        self.changes += 1;
        self.fa.version += 1;
    }

    /// Compacts `f` when a quarter of its instruction slots are dead
    /// ([`Function::compact`]), dropping its cached analyses of instructions and
    /// values, which name the old entities; those of the edges name only blocks,
    /// which keep their numbers, and stay. The function's layout is counted only
    /// after it has made a quarter as many slots as it had instructions at the
    /// last look, so the check costs a constant per slot made.
    pub fn compact_if_sparse(&mut self, f: &mut Function) -> bool {
        if f.num_insts() < self.fa.next_compaction_check {
            return false;
        }
        let live = f
            .layout
            .blocks()
            .map(|b| f.layout.block_insts(b).count())
            .sum();
        let compacted = f.is_sparse(live) && f.compact();
        // Compaction changes no instruction's meaning or relative order, so it is
        // not reported as a change: the passes that found nothing to do in the
        // function (they compare entities only by their order) still find
        // nothing, and stay settled.
        if compacted {
            self.fa.forget_scev();
            *self.summary = None;
        }
        // A quarter as many slots again as there are instructions: a check costs
        // at most four units per slot made since the last.
        self.fa.next_compaction_check = f.num_insts() + live / 4;
        compacted
    }

    /// Whether the function pass `name` already ran on the function as it is now
    /// (no change reported to it since) and changed nothing. A pass is a
    /// deterministic function of what it reads, and a function pass reads only its
    /// function ([`crate::pipeline::FunctionPass`]): run again, it would change
    /// nothing again, so the pass manager skips it. (LLVM keeps analyses valid
    /// across passes that preserve them; this keeps the knowledge that a
    /// transformation has nothing left to do.)
    pub fn is_settled(&self, name: &str) -> bool {
        self.fa.settled.contains(name, self.fa.version)
    }

    /// Records that the function pass `name` ran on the function and changed
    /// nothing ([`FunctionShare::is_settled`]).
    pub fn settle(&mut self, name: &'static str) {
        self.fa.settled.record(name, self.fa.version);
    }

    /// After a function pass changed the function: what it does not keep valid
    /// ([`Preserved::cfg`]) is compared with the function before its next use.
    pub fn invalidate(&mut self, kept: Preserved) {
        if !kept.cfg {
            self.fa.unverified = true;
        }
    }
}

/// Cached analyses of every function of a module.
#[derive(Default)]
pub struct AnalysisManager {
    funcs: SecondaryMap<FuncId, FunctionAnalyses>,
    /// Each body's walk for the mod/ref summaries, while the body is unchanged.
    summaries: SecondaryMap<FuncId, Option<Body>>,
    /// Analyses computed (not served from the cache) so far.
    computed: usize,
    /// Whether [`AnalysisManager::check`] will be called (the scalar
    /// evolution's caches then keep the text of the function they describe).
    verify: bool,
    /// Changes reported so far, to any function or to the module: a clock
    /// that moves whenever the module may have changed.
    changes: u64,
    /// The module passes that ran on the module as it is now (at `changes`)
    /// and changed nothing ([`AnalysisManager::is_settled_module`]).
    settled: Settled,
}

impl AnalysisManager {
    pub fn new() -> Self {
        Self::default()
    }

    /// A manager whose caches are checked after every pass
    /// ([`AnalysisManager::check`]).
    pub fn verifying() -> Self {
        AnalysisManager {
            verify: true,
            ..Self::default()
        }
    }

    /// The analyses of function `id`, to be asked for `f`, which must be that
    /// function as it is now.
    pub fn function(&mut self, id: FuncId) -> &mut FunctionAnalyses {
        &mut self.funcs[id]
    }

    /// Runs `pass` over every defined function of `m` with its cached analyses;
    /// whether any changed. (Invalidation is the pass manager's, by what the
    /// pass preserves.)
    pub fn each_function(
        &mut self,
        m: &mut Module,
        mut pass: impl FnMut(&mut Function, &mut FunctionAnalyses) -> bool,
    ) -> bool {
        self.each_function_by_id(m, |_, f, fa| pass(f, fa))
    }

    /// [`AnalysisManager::each_function`] for a pass that reads, besides each
    /// function, only the module's purity summary (which callees have side
    /// effects), computed once before the first function.
    pub fn each_function_with_purity(
        &mut self,
        m: &mut Module,
        mut pass: impl FnMut(&mut Function, &Purity, &mut FunctionAnalyses) -> bool,
    ) -> bool {
        let purity = self.purity(m);
        self.each_function(m, |f, fa| pass(f, &purity, fa))
    }

    /// [`AnalysisManager::each_function`] for a pass that also needs to know which
    /// function it is given (for module-level facts kept by function).
    pub fn each_function_by_id(
        &mut self,
        m: &mut Module,
        mut pass: impl FnMut(FuncId, &mut Function, &mut FunctionAnalyses) -> bool,
    ) -> bool {
        let mut changed = false;
        for (id, f) in m.funcs.iter_mut() {
            if f.is_declaration() {
                continue;
            }
            changed |= self.on_function(id, f, |f, fa| pass(id, f, fa));
        }
        changed
    }

    /// Runs `pass` on `f`, the defined function `id`, with its cached analyses,
    /// as [`AnalysisManager::each_function_by_id`] does on each function; whether
    /// it changed `f` (which drops `f`'s purity summary).
    pub fn on_function(
        &mut self,
        id: FuncId,
        f: &mut Function,
        pass: impl FnOnce(&mut Function, &mut FunctionAnalyses) -> bool,
    ) -> bool {
        self.with_share(id, |share| share.on_function(f, pass))
    }

    /// Compacts `f`, the defined function `id`, when most of its instruction slots
    /// are dead ([`FunctionShare::compact_if_sparse`]).
    pub fn compact_if_sparse(&mut self, id: FuncId, f: &mut Function) -> bool {
        self.with_share(id, |share| share.compact_if_sparse(f))
    }

    /// Runs `work` on the share of function `id`, then counts what it reported.
    fn with_share<R>(&mut self, id: FuncId, work: impl FnOnce(&mut FunctionShare<'_>) -> R) -> R {
        let mut share =
            FunctionShare::new(&mut self.funcs[id], &mut self.summaries[id], self.verify);
        let r = work(&mut share);
        let reported = share.reported();
        self.absorb([reported]);
        r
    }

    /// The share of each defined function of `m`, with the function, in the
    /// module's order: what function passes need to run on several functions at
    /// once ([`crate::pipeline::run_passes`]). Give them back to
    /// [`AnalysisManager::absorb`].
    pub fn shares<'a>(
        &'a mut self,
        m: &'a mut Module,
    ) -> Vec<(FuncId, &'a mut Function, FunctionShare<'a>)> {
        let n = m.funcs.len();
        if n > 0 {
            // Every function gets its slots (reading the last one creates them all).
            let last = <FuncId as ir::EntityRef>::new(n - 1);
            let _ = &mut self.funcs[last];
            let _ = &mut self.summaries[last];
        }
        let verify = self.verify;
        m.funcs
            .iter_mut()
            .zip(self.funcs.values_mut())
            .zip(self.summaries.values_mut())
            .filter(|(((_, f), _), _)| !f.is_declaration())
            .map(|(((id, f), fa), summary)| (id, f, FunctionShare::new(fa, summary, verify)))
            .collect()
    }

    /// Counts the changes and computations reported to the shares
    /// ([`AnalysisManager::shares`], [`FunctionShare::reported`]).
    pub fn absorb(&mut self, reports: impl IntoIterator<Item = Reported>) {
        for r in reports {
            self.changes += r.changes;
            self.computed += r.computed;
        }
    }

    /// [`AnalysisManager::compact_if_sparse`] on every defined function of `m`.
    pub fn compact_sparse_functions(&mut self, m: &mut Module) {
        for (id, f) in m.funcs.iter_mut() {
            if !f.is_declaration() {
                self.compact_if_sparse(id, f);
            }
        }
    }

    /// What every function of `m` may read and write ([`ModRef::compute`]),
    /// walking only the bodies changed since they were last walked.
    pub fn modref(&mut self, m: &Module) -> ModRef {
        for (id, f) in m.funcs.iter() {
            if !f.is_declaration() && self.summaries[id].is_none() {
                self.summaries[id] = Some(Body::of(f));
                self.computed += 1;
            }
        }
        let summaries = &self.summaries;
        ModRef::solve(m, |id| summaries[id].as_ref().expect("walked above"))
    }

    /// The effects of every function of `m` ([`Purity::compute`]): the view by
    /// kind of memory of [`AnalysisManager::modref`].
    pub fn purity(&mut self, m: &Module) -> Purity {
        self.modref(m).purity()
    }

    /// After a pass that changed the module: what it did not declare preserved is
    /// compared with the function before its next use, and dropped if the edges
    /// changed (most passes change instructions only, and the analyses of the
    /// edges then serve on).
    pub fn invalidate(&mut self, kept: Preserved) {
        self.changes += 1;
        if !kept.other_functions {
            // Any function may have changed.
            for (_, fa) in self.funcs.iter_mut() {
                fa.version += 1;
            }
        }
        // The functions a pass reported changed lost theirs already
        // ([`AnalysisManager::on_function`]); after any other pass, every one goes.
        if !kept.other_functions {
            for (_, fa) in self.funcs.iter_mut() {
                fa.forget_scev();
            }
        }
        if !kept.cfg {
            for (_, fa) in self.funcs.iter_mut() {
                fa.unverified = true;
            }
        }
        if !kept.other_functions {
            self.summaries.clear();
        }
    }

    /// The change clock: how many changes were reported so far.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// Whether the module pass `name` already ran on the module as it is now
    /// (no change reported anywhere since) and changed nothing: as
    /// [`FunctionShare::is_settled`], for a pass that may read the whole
    /// module.
    pub fn is_settled_module(&self, name: &str) -> bool {
        self.settled.contains(name, self.changes)
    }

    /// Records that the module pass `name` ran and changed nothing
    /// ([`AnalysisManager::is_settled_module`]).
    pub fn settle_module(&mut self, name: &'static str) {
        self.settled.record(name, self.changes);
    }

    /// How many analyses were computed rather than taken from the cache.
    pub fn computed(&self) -> usize {
        self.computed
    }

    /// Compares every cached analysis of `m` with a fresh computation: an error
    /// names the first that differs (a pass preserved what it changed).
    pub fn check(&self, m: &Module) -> Result<(), String> {
        for (id, f) in m.funcs.iter() {
            if f.is_declaration() {
                continue;
            }
            if let Some(summary) = &self.summaries[id] {
                if *summary != Body::of(f) {
                    return Err(format!(
                        "stale purity summary of @{}: a pass changed it without reporting it",
                        f.name
                    ));
                }
            }
            let fa = &self.funcs[id];
            if let Some(text) = &fa.scev_text {
                if *text != fingerprint(f) {
                    return Err(format!(
                        "stale scalar evolution of @{}: a pass changed it without reporting it",
                        f.name
                    ));
                }
            }
            if let Some(text) = fa.numbering.as_ref().and_then(|k| k.text.as_ref()) {
                if *text != fingerprint(f) {
                    return Err(format!(
                        "stale value numbers of @{}: a pass changed it without reporting it",
                        f.name
                    ));
                }
            }
            if let Some(text) = &fa.ranges_text {
                if *text != fingerprint(f) {
                    return Err(format!(
                        "stale value ranges of @{}: a pass changed it without reporting it",
                        f.name
                    ));
                }
            }
            // An unverified cache is compared with the function before its use.
            let Some(cached) = fa.cfg.as_ref().filter(|_| !fa.unverified) else {
                continue;
            };
            let fresh = ControlFlowGraph::compute(f);
            let blocks: Vec<ir::Block> = f.layout.blocks().collect();
            // Exactly equal, order included: a pass given the cached CFG must
            // see what a fresh computation would give it.
            for &b in &blocks {
                if cached.preds(b) != fresh.preds(b) || cached.succs(b) != fresh.succs(b) {
                    return Err(format!(
                        "stale CFG of @{} at {b}: a pass preserved the CFG but changed it",
                        f.name
                    ));
                }
            }
            if cached.rpo() != fresh.rpo() {
                return Err(format!("stale block order of @{}", f.name));
            }
            if let Some(pdt) = &fa.postdom {
                let fresh_pdt = PostDominatorTree::compute(f, &fresh);
                if let Some(&b) = blocks.iter().find(|&&b| pdt.ipdom(b) != fresh_pdt.ipdom(b)) {
                    return Err(format!("stale post-dominator tree of @{} at {b}", f.name));
                }
            }
            if let Some(dt) = &fa.domtree {
                let fresh_dt = DominatorTree::compute(f, &fresh);
                for &b in &blocks {
                    if dt.idom(b) != fresh_dt.idom(b) {
                        return Err(format!("stale dominator tree of @{} at {b}", f.name));
                    }
                }
                if let Some(loops) = &fa.loops {
                    let fresh_loops = LoopForest::compute(f, &fresh, &fresh_dt);
                    let shape = |lf: &LoopForest| -> Vec<(ir::Block, Vec<ir::Block>)> {
                        lf.loops()
                            .map(|(_, l)| (l.header, l.blocks.to_vec()))
                            .collect()
                    };
                    if shape(loops) != shape(&fresh_loops) {
                        return Err(format!("stale loop forest of @{}", f.name));
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ranges::Range;
    use crate::pipeline::{run_passes, PassOptions};
    use ir::{Inst, Type};

    const SRC: &str = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0)
bb1(%0: i32):
  %1 = slt %0, 10
  br %1, bb2, bb3
bb2:
  %2 = add %0, 1
  jump bb1(%2)
bb3:
  call @putint(%0)
  ret 0
}
"#;

    #[test]
    fn analyses_are_computed_once_and_served_from_the_cache() {
        let mut m = ir::parse_module(SRC).unwrap();
        let mut am = AnalysisManager::new();
        for _ in 0..3 {
            am.each_function(&mut m, |f, fa| {
                let (_, _, loops) = fa.loops(f);
                assert_eq!(loops.len(), 1);
                false
            });
        }
        assert_eq!(am.computed(), 3, "CFG, dominator tree, loops: once each");
        am.invalidate(Preserved::CFG);
        am.each_function(&mut m, |f, fa| fa.loops(f).2.len() == 2);
        assert_eq!(am.computed(), 3);
        // A pass that may have changed the edges but did not: the cache is
        // compared with the function and serves on.
        am.invalidate(Preserved::NOTHING);
        am.each_function(&mut m, |f, fa| fa.loops(f).2.is_empty());
        assert_eq!(am.computed(), 3);
        assert!(am.check(&m).is_ok());
        // One that did: the loop's exit test becomes a jump to the exit, and the
        // next use computes all three anew (no loop left).
        exit_the_loop(&mut m);
        am.invalidate(Preserved::NOTHING);
        am.each_function(&mut m, |f, fa| {
            assert_eq!(fa.loops(f).2.len(), 0);
            false
        });
        assert_eq!(am.computed(), 6);
        assert!(am.check(&m).is_ok());
    }

    /// A function whose instruction slots are mostly dead is compacted, its
    /// cached analyses of values dropped (they name the old entities) and those
    /// of the edges kept (blocks keep their numbers); it stays settled for the
    /// passes that found nothing to do. A dense one is left as it is, with its
    /// analyses.
    #[test]
    fn sparse_functions_are_compacted_and_their_analyses_of_values_dropped() {
        let mut text = String::from("func @main(i32) -> i32 {\nbb0(%0: i32):\n");
        for k in 1..=3000 {
            text += &format!("  %{k} = add %{}, {k}\n", k - 1);
        }
        text += "  ret %3000\n}\n";
        let mut m = ir::parse_module(&text).unwrap();
        let id = m.funcs.keys().next().unwrap();
        let mut am = AnalysisManager::new();
        let f = &mut m.funcs[id];
        // Asks for both kinds of analysis and changes nothing.
        let ask = |f: &mut Function, fa: &mut FunctionAnalyses| {
            fa.ranges(f);
            !fa.loops(f).2.is_empty()
        };
        am.on_function(id, f, ask);
        // Dense: nothing to do, and the cache stays.
        assert!(!am.compact_if_sparse(id, f));
        let computed = am.computed();
        am.on_function(id, f, ask);
        assert_eq!(am.computed(), computed);
        am.with_share(id, |share| share.settle("somepass"));
        // Replace each `add` by a copy and drop the old ones, twice: two thirds
        // of the slots dead.
        for _ in 0..2 {
            let old: Vec<Inst> = f.layout.block_insts(f.entry_block()).collect();
            for &i in &old[..old.len() - 1] {
                let kind = f.kind(i).clone();
                let copy = f.insert_inst_before(i, kind, Type::I32);
                let (was, now) = (f.inst_result(i).unwrap(), f.inst_result(copy).unwrap());
                f.replace_all_uses(was, now);
                f.remove_inst(i);
            }
        }
        let text = ir::print_module(&m);
        let f = &mut m.funcs[id];
        let slots = f.num_insts();
        assert!(am.compact_if_sparse(id, f));
        assert_eq!((slots, f.num_insts()), (9001, 3001));
        assert_eq!(ir::print_module(&m), text);
        ir::verify_module(&m).unwrap();
        assert!(am.with_share(id, |share| share.is_settled("somepass")));
        let f = &mut m.funcs[id];
        am.on_function(id, f, ask);
        assert_eq!(
            am.computed(),
            computed + 1,
            "the ranges anew, the loops kept"
        );
    }

    #[test]
    fn every_loop_is_planned_from_one_scalar_evolution() {
        // Two loops in sequence: bb1 and bb4.
        let src = SRC.replace(
            "bb3:\n  call @putint(%0)\n  ret 0",
            "bb3:\n  jump bb4(%0)\nbb4(%3: i32):\n  %4 = sub %3, 1\n  %5 = sgt %4, 0\n  br %5, bb4(%4), bb5\nbb5:\n  call @putint(%4)\n  ret 0",
        );
        let mut m = ir::parse_module(&src).unwrap();
        let mut am = AnalysisManager::new();
        am.each_function(&mut m, |f, fa| {
            let headers = fa.plan_loops(f, |se, id| Some(se.loops.get(id).header));
            let forest: Vec<Block> = fa.loops(f).2.loops().map(|(_, l)| l.header).collect();
            assert_eq!(headers, forest, "the forest's order");
            let mut names: Vec<String> = headers.iter().map(|b| b.to_string()).collect();
            names.sort();
            assert_eq!(names, ["bb1", "bb4"]);
            // Only what `plan` finds.
            let kept = fa.plan_loops(f, |se, id| {
                (se.loops.get(id).header == headers[1]).then_some(id)
            });
            assert_eq!(kept.len(), 1);
            false
        });
        // CFG, dominators, loops and the scalar evolution: once each.
        assert_eq!(am.computed(), 4);
    }

    #[test]
    fn function_passes_are_given_the_purity_of_the_module() {
        let src = r#"
declare @putint(i32) -> void

func @show(i32) -> void {
bb0(%0: i32):
  call @putint(%0)
  ret
}

func @twice(i32) -> i32 {
bb0(%0: i32):
  %1 = add %0, %0
  ret %1
}
"#;
        let mut m = ir::parse_module(src).unwrap();
        let (show, twice) = (
            m.func_by_name("show").unwrap(),
            m.func_by_name("twice").unwrap(),
        );
        let mut am = AnalysisManager::new();
        let mut seen = Vec::new();
        am.each_function_with_purity(&mut m, |f, purity, _| {
            seen.push(f.name.clone());
            assert!(purity.effects(show).io && purity.effects(twice).is_pure());
            false
        });
        // The declaration is not given to the pass.
        assert_eq!(seen, ["show", "twice"]);
    }

    #[test]
    fn the_post_dominator_tree_is_cached_with_the_cfg() {
        let mut m = ir::parse_module(SRC).unwrap();
        let mut am = AnalysisManager::new();
        // bb1 (the loop's header) is post-dominated by the exit bb3.
        let exit_of = |f: &Function, fa: &mut FunctionAnalyses| {
            let header = f.layout.blocks().nth(1).unwrap();
            fa.postdom(f).1.ipdom(header)
        };
        for _ in 0..2 {
            am.each_function(&mut m, |f, fa| {
                let bb3 = f.layout.blocks().nth(3);
                assert_eq!(exit_of(f, fa), bb3);
                false
            });
        }
        assert_eq!(am.computed(), 2, "CFG and post-dominator tree: once each");
        am.invalidate(Preserved::NOTHING);
        am.each_function(&mut m, |f, fa| exit_of(f, fa).is_none());
        assert_eq!(am.computed(), 2, "unchanged edges: served on");
        // The header now jumps to the exit: it is post-dominated by it still,
        // through a new tree (the loop's body is unreachable).
        exit_the_loop(&mut m);
        am.invalidate(Preserved::NOTHING);
        am.each_function(&mut m, |f, fa| {
            let bb3 = f.layout.blocks().nth(3);
            assert_eq!(exit_of(f, fa), bb3);
            false
        });
        assert_eq!(am.computed(), 4);
        assert!(am.check(&m).is_ok());
    }

    /// Turns the loop's exit test in `SRC`'s `main` into a jump straight to the exit.
    fn exit_the_loop(m: &mut Module) {
        let f = m.funcs.values_mut().find(|f| f.name == "main").unwrap();
        let header = f.layout.blocks().nth(1).unwrap();
        let exit = f.layout.blocks().nth(3).unwrap();
        let term = f.terminator(header).unwrap();
        f.replace_kind(
            term,
            ir::InstKind::Jump {
                dest: Box::new(ir::BlockCall::new(exit, vec![])),
            },
        );
    }

    /// `%1 = and (getint), 7`, printed.
    const MASKED: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = and %0, 7
  call @putint(%1)
  ret 0
}
"#;

    #[test]
    fn value_ranges_are_cached_until_a_pass_reports_a_change() {
        let mut m = ir::parse_module(MASKED).unwrap();
        let mut am = AnalysisManager::verifying();
        let mask = |f: &Function| f.layout.block_insts(f.entry_block()).nth(1).unwrap();
        let masked = |f: &Function, fa: &mut FunctionAnalyses| {
            let v = f.inst_result(mask(f)).unwrap();
            fa.ranges(f).get(v)
        };
        am.each_function(&mut m, |f, fa| {
            assert_eq!(masked(f, fa), Some(Range { lo: 0, hi: 7 }));
            false
        });
        let solved = am.computed();
        // Passes that change nothing share one solve.
        am.each_function(&mut m, |f, fa| {
            masked(f, fa);
            false
        });
        am.invalidate(Preserved::CFG.with_other_functions());
        am.each_function(&mut m, |f, fa| {
            masked(f, fa);
            false
        });
        assert_eq!(am.computed(), solved);
        assert!(am.check(&m).is_ok());
        // A pass that changes the function and says so: the next one solves anew,
        // and sees the change (the mask is now 15).
        let remask = |f: &mut Function, c: i32| {
            let (i, c) = (mask(f), f.iconst(c));
            let x = f.kind(i).args()[0];
            f.replace_kind(
                i,
                ir::InstKind::Binary {
                    op: ir::BinOp::And,
                    args: [x, c],
                },
            );
        };
        am.each_function(&mut m, |f, _| {
            remask(f, 15);
            true
        });
        am.invalidate(Preserved::CFG.with_other_functions());
        am.each_function(&mut m, |f, fa| {
            assert_eq!(masked(f, fa), Some(Range { lo: 0, hi: 15 }));
            false
        });
        assert_eq!(am.computed(), solved + 1);
        assert!(am.check(&m).is_ok());
        // A change behind the manager's back is caught by verification.
        remask(m.funcs.values_mut().find(|f| f.name == "main").unwrap(), 3);
        assert!(am.check(&m).unwrap_err().contains("stale value ranges"));
    }

    const TWO_FUNCTIONS: &str = r#"
global @g: i32 = 0
declare @putint(i32) -> void

func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = add %0, 1
  ret %1
}

func @main() -> i32 {
bb0:
  %0 = call @f(1)
  call @putint(%0)
  ret 0
}
"#;

    /// `store 1, @g` at the top of `@f`: `@f` then writes a global.
    fn store_to_global_in_f(m: &mut Module) {
        let g = m.globals.keys().next().unwrap();
        let f = m.funcs.values_mut().find(|f| f.name == "f").unwrap();
        let first = f.layout.block_insts(f.entry_block()).next().unwrap();
        let (value, ptr) = (f.iconst(1), f.global_addr(g));
        f.insert_inst_before(first, ir::InstKind::Store { value, ptr }, ir::Type::Void);
    }

    fn effects_of(m: &Module, purity: &Purity, name: &str) -> super::super::Effects {
        let id = m.funcs.iter().find(|(_, f)| f.name == name).unwrap().0;
        purity.effects(id)
    }

    #[test]
    fn purity_summaries_are_taken_anew_only_for_reported_functions() {
        let mut m = ir::parse_module(TWO_FUNCTIONS).unwrap();
        let mut am = AnalysisManager::new();
        let purity = am.purity(&m);
        assert!(effects_of(&m, &purity, "f").is_pure());
        assert!(effects_of(&m, &purity, "main").io);
        assert_eq!(am.computed(), 2, "one summary per body");
        am.purity(&m);
        assert_eq!(am.computed(), 2, "served from the cache");
        // A pass that reports changing only @main: @f's summary serves on.
        am.each_function(&mut m, |f, _| f.name == "main");
        am.invalidate(Preserved::CFG.with_other_functions());
        am.purity(&m);
        assert_eq!(am.computed(), 3);
        // @f changes, and the pass reports it: its new effects are seen.
        am.each_function_by_id(&mut m, |_, f, _| f.name == "f");
        store_to_global_in_f(&mut m);
        am.invalidate(Preserved::CFG.with_other_functions());
        let purity = am.purity(&m);
        assert_eq!(am.computed(), 4);
        assert!(effects_of(&m, &purity, "f").writes_global);
        assert!(
            effects_of(&m, &purity, "main").writes_global,
            "through the call"
        );
        assert!(am.check(&m).is_ok());
        // A pass that does not say it reports its changes: every summary goes.
        am.invalidate(Preserved::CFG);
        am.purity(&m);
        assert_eq!(am.computed(), 6);
    }

    /// A body changed without being reported is caught by the check.
    #[test]
    fn the_check_finds_a_stale_purity_summary() {
        let mut m = ir::parse_module(TWO_FUNCTIONS).unwrap();
        let mut am = AnalysisManager::new();
        am.purity(&m);
        assert!(am.check(&m).is_ok());
        store_to_global_in_f(&mut m);
        am.invalidate(Preserved::CFG.with_other_functions());
        let err = am.check(&m).unwrap_err();
        assert!(err.contains("stale purity summary of @f"), "{err}");
    }

    /// A change to the edges behind the cache's back is caught by the check.
    #[test]
    fn the_check_finds_a_stale_cfg() {
        let mut m = ir::parse_module(SRC).unwrap();
        let mut am = AnalysisManager::new();
        am.each_function(&mut m, |f, fa| {
            fa.domtree(f);
            false
        });
        exit_the_loop(&mut m);
        let err = am.check(&m).unwrap_err();
        assert!(err.contains("stale CFG of @main"), "{err}");
    }

    /// The scalar evolution is kept while passes change nothing, and dropped when
    /// one reports a change (whatever it preserves) or forgets it.
    #[test]
    fn the_scalar_evolution_is_kept_until_a_change() {
        let mut m = ir::parse_module(SRC).unwrap();
        let mut am = AnalysisManager::new();
        // The counter `%0` of `main` is `{0,+,1}`; each use asks for it.
        let analysed = |am: &mut AnalysisManager, m: &mut Module| {
            let mut seen = 0;
            am.each_function(m, |f, fa| {
                let header = f.layout.blocks().nth(1).unwrap();
                let counter = f.block_params(header)[0];
                let mut se = fa.scev(f);
                let e = se.get(counter);
                assert!(se.exprs.as_addrec(e).is_some());
                seen = se.analysed();
                false
            });
            seen
        };
        analysed(&mut am, &mut m);
        // CFG, dominator tree, loops and the scalar evolution.
        assert_eq!(am.computed(), 4);
        analysed(&mut am, &mut m);
        assert_eq!(am.computed(), 4, "served from the cache");
        // A pass that preserves the CFG but changed instructions: the analysis of
        // the edges serves on, the scalar evolution is started anew.
        am.invalidate(Preserved::CFG);
        analysed(&mut am, &mut m);
        assert_eq!(am.computed(), 5);
        // A pass that reports changing `main`, even with the other functions
        // preserved, drops it too.
        am.each_function(&mut m, |_, _| true);
        am.invalidate(Preserved::CFG.with_other_functions());
        analysed(&mut am, &mut m);
        assert_eq!(am.computed(), 6);
        // Forgotten by a pass that changed the function and asks again.
        am.each_function(&mut m, |f, fa| {
            fa.forget_scev();
            fa.scev(f).analysed() == 1
        });
        assert_eq!(am.computed(), 7);
    }

    /// A change to the instructions behind the cache's back is caught by the
    /// check (with verification on, the manager keeps the function's text).
    #[test]
    fn the_check_finds_a_stale_scalar_evolution() {
        let mut m = ir::parse_module(SRC).unwrap();
        let mut am = AnalysisManager::verifying();
        am.each_function(&mut m, |f, fa| {
            fa.scev(f);
            false
        });
        assert!(am.check(&m).is_ok());
        add_before_the_call(&mut m);
        let err = am.check(&m).unwrap_err();
        assert!(err.contains("stale scalar evolution of @main"), "{err}");
    }

    /// `add %0, 1` before the call in `SRC`'s exit block, its argument from then on.
    fn add_before_the_call(m: &mut Module) {
        let f = m.funcs.values_mut().find(|f| f.name == "main").unwrap();
        let exit = f.layout.blocks().nth(3).unwrap();
        let call = f.layout.block_insts(exit).next().unwrap();
        let arg = f.block_params(f.layout.blocks().nth(1).unwrap())[0];
        let one = f.iconst(1);
        let bin = ir::InstKind::Binary {
            op: ir::BinOp::Add,
            args: [arg, one],
        };
        f.insert_inst_before(call, bin, ir::Type::I32);
    }

    /// The -O2 pipeline with verification: every cached analysis a pass
    /// preserved matches a fresh one after it.
    #[test]
    fn preserved_analyses_stay_exact_through_the_pipeline() {
        let mut m = ir::parse_module(SRC).unwrap();
        let mut opts = PassOptions {
            verify_each: true,
            ..Default::default()
        };
        run_passes(&mut m, &crate::pipeline::pipeline(2), &mut opts).unwrap();
    }
}
