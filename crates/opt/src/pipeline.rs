//! The pass manager: passes registered by name, run in any order (`--passes a,b,c`, as
//! LLVM's `opt`), with optional verification and IR dumps after each; and the `-O`
//! pipelines as plain lists of names.
//!
//! Every pass works on the whole module (some need it: DCE asks which callees have
//! side effects) and reports whether it changed anything. The per-function
//! analyses (CFG, dominators, post-dominators, loops) live in an
//! [`AnalysisManager`]: a pass may take them from it ([`Pass::run_with`]) and says
//! what it keeps valid ([`Pass::preserves`]); after a pass that changed something,
//! the rest is compared with the function before its next use and dropped if the
//! edges changed. A pass that does not take them (localconst, inline) computes
//! its own. The manager also keeps each body's purity summary until a pass
//! reports changing that function ([`Preserved::other_functions`]), so the
//! passes that ask which callees have side effects walk only the changed bodies.
//!
//! A [`FunctionPass`] transforms each function on its own and reads nothing
//! else. Consecutive function passes run function by function: each function
//! goes through the whole run while its IR is in the cache, as in LLVM's
//! function pass manager, with the same result as running them pass by pass.
//! Most are written as a [`FunctionTransform`]: the registry entry as constants
//! and one function's transform, from which both traits follow.

use crate::analysis::manager::FunctionShare;
use crate::analysis::{AnalysisManager, FunctionAnalyses, Preserved};
use crate::passes;
use ir::{Function, Module};
use std::io::Write;

/// An optimisation pass.
pub trait Pass: Sync {
    /// The name it is registered and selected by (`--passes`, `--print-after`).
    fn name(&self) -> &'static str;
    /// One line on what it does.
    fn description(&self) -> &'static str;
    /// Runs the pass over `m` on its own; returns whether anything changed. By
    /// default through [`Pass::run_with`] with a fresh analysis manager: a pass
    /// writes `run_with` (taking its analyses from the manager), or is a
    /// [`FunctionPass`], or writes this instead (a module pass that needs no
    /// cached analysis).
    fn run(&self, m: &mut Module) -> bool {
        self.run_with(m, &mut AnalysisManager::new())
    }
    /// What the pass keeps valid when it changes something (by default nothing).
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING
    }
    /// Runs the pass with the cached analyses of `am`: a function pass on each
    /// function in turn ([`FunctionPass::run_on`]), any other by default through
    /// [`Pass::run`], which computes its own.
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        match self.function_pass() {
            Some(p) => am.each_function(m, |f, fa| p.run_on(f, fa)),
            None => self.run(m),
        }
    }
    /// `Some` for a [`FunctionPass`].
    fn function_pass(&self) -> Option<&dyn FunctionPass> {
        None
    }
}

/// A pass that transforms each function on its own: what it does to a function
/// depends only on that function (no other body, no fact about the module that
/// a change to another function could alter). Consecutive function passes run
/// function by function ([`run_passes`]), with the same result as pass by pass.
pub trait FunctionPass: Pass {
    /// Runs the pass on `f` with its cached analyses; whether it changed `f`.
    fn run_on(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool;
}

/// A function pass written once: its registry entry as constants and what it
/// does to one function, from which its [`Pass`] and [`FunctionPass`] impls
/// follow (`function_pass` is `Some`, `run_on` is [`FunctionTransform::transform`]).
pub trait FunctionTransform: Sync {
    /// [`Pass::name`].
    const NAME: &'static str;
    /// [`Pass::description`].
    const DESCRIPTION: &'static str;
    /// [`Pass::preserves`].
    const PRESERVES: Preserved = Preserved::NOTHING;
    /// [`FunctionPass::run_on`]: transforms `f` with its cached analyses; whether
    /// it changed `f`.
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool;
}

impl<T: FunctionTransform> Pass for T {
    fn name(&self) -> &'static str {
        T::NAME
    }
    fn description(&self) -> &'static str {
        T::DESCRIPTION
    }
    fn preserves(&self) -> Preserved {
        T::PRESERVES
    }
    fn function_pass(&self) -> Option<&dyn FunctionPass> {
        Some(self)
    }
}

impl<T: FunctionTransform> FunctionPass for T {
    fn run_on(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        self.transform(f, fa)
    }
}

/// Every pass, by name.
static REGISTRY: &[&dyn Pass] = &[
    &passes::scalar::mem2reg::Mem2Reg,
    &passes::scalar::dce::Dce,
    &passes::scalar::sccp::Sccp,
    &passes::scalar::simplifycfg::SimplifyCfg,
    &passes::scalar::instcombine::InstCombine,
    &passes::memory::memforward::MemForward,
    &passes::loops::looprotate::LoopRotate,
    &passes::loops::licm::Licm,
    &passes::loops::invselect::InvariantChoices,
    &passes::interprocedural::partial_inline::PartialInline,
    &passes::interprocedural::inline::Inline,
    &passes::interprocedural::inline::Reinline,
    &passes::interprocedural::globaldce::GlobalDce,
    &passes::loops::strength::StrengthReduce,
    &passes::loops::finalvalue::FinalValue,
    &passes::loops::loopdelete::LoopDelete,
    &passes::loops::loopidiom::LoopIdiom,
    &passes::loops::loopsplit::LoopSplit,
    &passes::scalar::reassoc::Reassociate,
    &passes::scalar::linearize::Linearize,
    &passes::scalar::balance::Balance,
    &passes::loops::lftr::Lftr,
    &passes::value_numbering::condprop::CondProp,
    &passes::scalar::jumpthread::JumpThread,
    &passes::value_numbering::gvn::Gvn,
    &passes::value_numbering::cgvn::Cgvn,
    &passes::value_numbering::affine::Affine,
    &passes::value_numbering::pre::Pre,
    &passes::scalar::codehoist::CodeHoist,
    &passes::scalar::codesink::CodeSink,
    &passes::memory::loadpre::LoadPre,
    &passes::scalar::rangechain::RangeChain,
    &passes::scalar::sink::Sink,
    &passes::memory::storesink::StoreSink,
    &passes::loops::loopsimplify::LoopSimplify,
    &passes::loops::exitsink::ExitSink,
    &passes::scalar::fabs::Fabs,
    &passes::loops::idemloop::IdemLoop,
    &passes::scalar::tailrec::TailRec,
    &passes::scalar::phiopt::PhiOpt,
    &passes::loops::ifconvert::IfConvert,
    &passes::value_numbering::mergeargs::MergeArgs,
    &passes::memory::globalforward::GlobalForward,
    &passes::memory::dse::Dse,
    &passes::interprocedural::memoize::Memoize,
    &passes::interprocedural::constglobals::ConstGlobals,
    &passes::interprocedural::deadargs::DeadArgs,
    &passes::interprocedural::specialize::Specialize,
    &passes::interprocedural::ipconst::IpConst,
    &passes::interprocedural::ipvrp::IpVrp,
    &passes::scalar::constoffset::ConstOffset,
    &passes::loops::closedform::ClosedForm,
    &passes::loops::hoistloops::HoistLoops,
    &passes::loops::unroll::Unroll,
    &passes::loops::cunroll::CompleteUnroll,
    &passes::memory::localconst::LocalConst,
    &passes::memory::predcom::PredCom,
    &passes::memory::promote::PromoteGlobals,
    &passes::memory::silentstore::SilentStore,
    &passes::loops::postinc::PostInc,
    &passes::loops::pow2div::Pow2Div,
    &passes::scalar::divrem::DivRem,
    &passes::loops::rtunroll::RuntimeUnroll,
    &passes::loops::mve::ModuloVariableExpansion,
    &passes::loops::looppeel::LoopPeel,
    &passes::loops::peelinv::PeelInvariant,
    &passes::loops::unswitch::Unswitch,
    &passes::loops::trivial_unswitch::TrivialUnswitch,
    &passes::loops::first_exit::FirstExit,
    &passes::scalar::foldbranch::FoldBranch,
    &passes::loops::unrolljam::UnrollAndJam,
    &passes::loops::indexsplit::IndexSplit,
    &passes::loops::polyiv::PolyIv,
    &passes::loops::swp::SoftwarePipelining,
    &passes::value_numbering::vrp::Vrp,
    &passes::loops::ptrwalk::PtrWalk,
    &passes::memory::checkpromote::CheckPromote,
    &passes::memory::sroa::Sroa,
    &passes::loops::lastiter::LastIter,
];

/// The pass registered as `name`.
pub fn lookup(name: &str) -> Option<&'static dyn Pass> {
    REGISTRY.iter().copied().find(|p| p.name() == name)
}

/// Names and descriptions of all passes, in registration order.
pub fn pass_names() -> Vec<(&'static str, &'static str)> {
    REGISTRY
        .iter()
        .map(|p| (p.name(), p.description()))
        .collect()
}

/// The passes run at `-O<opt_level>`, in order. `-O0` runs none (SSA construction
/// happens before, in lowering or by mem2reg). The contest compiles its performance
/// cases with `-O1`, so `-O1` and above run the full pipeline, iterating the scalar
/// passes so each exposes work for the next. Value numbering runs once the first
/// round has cleaned up: `gvn` (redundant expressions and loads along dominance),
/// `cgvn` (equalities through block parameters), `pre` (values available on every
/// path into a join); the second round folds and deletes what they leave. After
/// loop deletion and strength reduction, `gvn` runs again: the bounds checks that
/// `condprop` removed leave blocks that simplifycfg merges, and the address
/// arithmetic they had kept apart (`i * n + j` in a test and in the access) becomes
/// redundant along dominance (floyd: 1.47x -> 1.18x gcc).
///
/// `cgvn` also runs first, on the SSA as built: the canonicalising passes
/// (instcombine's `x + 1 + 1` -> `x + 2`, reassociation, conditions replaced by the
/// constants their branches imply) can destroy the Herbrand structure an equality
/// needs, so every equality the complete GVN finds alone is applied before they run
/// (`tests/equalities_survive.rs` checks this over all programs; fft: -5% cycles).
///
/// `affine` (affine relations modulo 2^32) right after that first `cgvn`, and
/// again after the second round's `reassoc`/`linearize`/`instcombine`/`sccp`, once
/// the tests the first run decided are folded (`j != i` with `j == i + 1`: a count
/// of both tests is then `2 * i`). Not before `linearize`: merging parts of the sums
/// it rebuilds (exclusive-or written with additions, once inlined) changed their
/// association in crypto and cost the scheduler its interleaving there.
///
/// `jumpthread` once loops are rotated and the guards' facts are propagated: an
/// inner loop's guard in an outer header is decided on both edges when the inner
/// loop runs only in the first outer iteration, and a test repeated after a join
/// follows the first. It runs without a CFG clean-up of its own: removing the empty
/// preheaders it leaves before the value numbering passes costs PRE's and strength
/// reduction's loop shapes (stencil); the next `simplifycfg` merges its copies.
/// A last `condprop` after the last value numbering: tests of a value loaded
/// twice (`head[h] == 0`, then the loop guard `p != 0` on the same element) are the
/// same question only once GVN has merged the loads.
///
/// `looppeel` before it: a loop whose later iterations all decide a test the first
/// does not (an inner loop that only the first runs) is peeled, and `jumpthread`
/// folds the test in the rest. `unswitch` before `hoistloops`: an inner loop
/// guarded by an invariant test (`n > 0` of an inlined `for` loop) runs on every
/// outer iteration of one copy, which hoisting needs.
///
/// `peelinv` before the second `licm` too: an array parameter that is one global
/// after the first iteration (a tail recursion made a loop) then names its object,
/// and `licm` takes out of the loop the loads the accesses through it kept in.
/// `peelinv` after `vrp`, which makes `y / 2` of a `y` in `[0, 1]` the constant
/// `0`: a header parameter that is a constant after one iteration and that a branch
/// tests is peeled, `sccp` folds the test in the rest of the loop, and `loopdelete`
/// removes a loop left empty.
///
/// `ipvrp` just before `vrp`, at the same place and for the same reason (the
/// remainder rewrites): a callee whose every call passes a parameter in a narrow
/// range (a comparison's result) has its tests decided under that range, which
/// can leave it small and loop-free for `reinline`.
///
/// `reinline` after that clean-up: a callee whose constant loops complete
/// unrolling removed and whose range-decided tests `vrp` folded is inlined when it
/// is now small and has no loop left (LLVM simplifies each function before its
/// callers consider it, in the CGSCC pipeline); `sccp` and `instcombine` then fold
/// the copy with the call's arguments. Not earlier: a `vrp` before the loop
/// work-removal passes rewrites remainders into compare-and-subtract forms that
/// `closedform` no longer recognises (sysy2022 hoist-1..3 and
/// integer-divide-optimization-1/2: 75 instructions to millions), and callees
/// with loops are left to the first inliner, whose callers' loop passes have run.
/// `memforward` right after it: a copy's loads of a local array its caller passed
/// read the caller's fill and stores (GCC's FRE folds such loads through the
/// `memset` of the declaration), and an array left only written goes with its
/// clear (a 15x247 `int` array zeroed on each call and read at a few elements:
/// the whole clear per call).
///
/// `rtunroll` after `lftr` (loops counted by a pointer) and `promote`; `postinc`
/// last, on the final order of the accesses.
///
/// `promote` late, once the work-removal passes are done (a global carried through a
/// loop in registers hides the store-once and closed-form shapes they look for):
/// scalar globals a remaining loop updates stay in registers through it.
/// `checkpromote` right after it: a load from an invariant address that every
/// iteration runs, past conditional stores that may hit it (Floyd's `d[i][k]`
/// with the store to `d[i][j]`), becomes one load before the loop and a check of
/// each store's address.
///
/// `lftr` after closed forms (which need the counters it makes dead) and after the
/// `dce` that clears the index arithmetic strength reduction left unused.
///
/// `constoffset` after strength reduction: addresses it left (straight-line code,
/// unrolled loops) share one base for `a[k + c]`, which the following `gvn` merges.
///
/// `fabs` after inlining and its clean-up (an absolute-value helper is then a
/// branch in its caller, where the comparisons reading it are seen); the next
/// `dce` and `simplifycfg` remove the branch it empties.
///
/// `codehoist` right after `pre` and `loadpre`, on the complete value numbers'
/// canonical operands: what both arms of a branch compute is computed once before it.
///
/// `linearize` follows each `reassoc`: sums whose shared subterms cancel (an
/// exclusive-or written with additions, once inlined) are rebuilt shorter.
///
/// Work removal: `constglobals` first (never-written globals are constants before
/// anything else looks), again after inlining (a callee's loads through its
/// parameters now load the global itself; and after `reinline`, before the
/// clean-up that folds what the loaded constants feed) and after `localconst` (a local table
/// it made a global may be uniform), `exitsink` before inlining (a pure call whose result only
/// the loop's exit needs runs once there; inlined, it would be a loop nest nothing
/// moves), `memoize` before inlining (the cache wraps the whole recursion),
/// `specialize` before inlining (a copy for constant arguments is folded, and
/// its now small callees inlined, where the general body keeps its calls),
/// `ipconst` and `deadargs` after inlining's clean-up and again after the loop passes (the
/// parameters callees no longer read stop being computed by their callers),
/// `tailrec` after it and before inlining (a recursion in tail position becomes a
/// loop, which inlining can then place in its callers), `idemloop` after the second
/// round of scalar clean-up (SCCP has made the bounds its sections compare plain
/// values) and before complete unrolling (a repeat loop whose iterations all do the
/// same work runs once, where unrolled its copies would all run), `unroll` once loops are rotated and again after the second round
/// (with `memforward` and `instcombine`, a table-filling loop becomes constant
/// stores), `hoistloops` after LICM has moved invariant stores out (an inner loop
/// left without inputs from the outer iteration runs once), `silentstore` after the
/// last value numbering, `loopsplit` after loop deletion (a loop whose last
/// iterations only count is left early, before strength reduction looks at it),
/// `predcom` on the pointer induction variables strength
/// reduction made, `closedform` on the loops that are left single blocks, once,
/// after `promote` (a global recurrence carried in a register is a sum; run twice,
/// it versioned again the loop its first run kept as the fallback), and
/// `localconst` after the first `memforward` (a zeroed table read through
/// callees) and at the end, when the stores of a table are constants in one block,
/// `constglobals` again after the first two SCCP rounds (an index such as
/// `((x) % 1 + 1) % 1` is a constant only then), `sroa` after inlining (not before:
/// a loop nest that only filled a local array would be left empty in a shape
/// `loopdelete` does not remove) and again once folding, unrolling and the late
/// clean-up have made more indices constant, `lastiter` after `idemloop` and after
/// `checkpromote` (promoted globals leave a loop's body without stores),
/// `globalforward` again after the last `simplifycfg` (the stores `promote` leaves
/// on a loop's exit and those after it are then in one block: all but the last
/// are dead) and `loopdelete` after it (a loop that only computed the value of a
/// dead store goes), `dse` after each `globalforward` (the loads forwarded, the
/// stores every path overwrites before a read go, across blocks),
/// `storesink` after the last loop and memory passes (the initialisation of a local
/// array moves past early exits once no pass would hoist it back), and `balance`
/// last of all, once nothing canonicalises sums into chains again.
pub fn pipeline(opt_level: u8) -> Vec<&'static str> {
    match opt_level {
        0 => vec![],
        _ => vec![
            "mem2reg",
            "cgvn",
            "affine",
            "constglobals",
            "simplifycfg",
            "instcombine",
            "sccp",
            "constglobals",
            "dce",
            "simplifycfg",
            "exitsink",
            "memoize",
            "tailrec",
            "specialize",
            "partialinline",
            "inline",
            "globaldce",
            "condprop",
            "instcombine",
            "ipconst",
            "sccp",
            "deadargs",
            "constglobals",
            "sroa",
            "dce",
            "rangechain",
            "simplifycfg",
            "fabs",
            "reassoc",
            "linearize",
            "looprotate",
            "loopsimplify",
            "mergeargs",
            "licm",
            "condprop",
            "indexsplit",
            "looppeel",
            "jumpthread",
            // Jump threading copies a block into each path it threads: what the
            // copies compute alike for a join is computed once there.
            "mergeargs",
            "loopidiom",
            "unroll",
            "memforward",
            "globalforward",
            "dse",
            "localconst",
            "constglobals",
            "gvn",
            "cgvn",
            "pre",
            "loadpre",
            "codehoist",
            "reassoc",
            "linearize",
            "instcombine",
            "sccp",
            "sroa",
            "affine",
            "dce",
            "simplifycfg",
            "loopsimplify",
            "idemloop",
            "lastiter",
            "loopdelete",
            // A recursion that is a tail call only now (its result replaced by
            // the constant every return gives, or the code after it dead) loses
            // its tail recursion too.
            "tailrec",
            "cunroll",
            "unroll",
            // And once more after complete unrolling, which can leave a call in
            // tail position (the code after it folded away), before `licm` takes
            // what the new loop does not change out of it.
            "tailrec",
            "memforward",
            "instcombine",
            // Complete unrolling copies a loop's invariant tests once per
            // iteration: the copies after the first are decided on the edges
            // the first leaves by, and the loads they repeat are the first's.
            "jumpthread",
            "gvn",
            "condprop",
            "simplifycfg",
            // Tables full unrolling and forwarding made constant, while their
            // addresses are still geps of the `alloc` (before `strength`), and
            // before `pow2div` divides by their powers of two.
            "localconst",
            "constglobals",
            "sroa",
            "pow2div",
            // Two invariant tests to one exit become one (`a || b`), which trivial
            // unswitching then takes out of the loop.
            "foldbranch",
            "peelinv",
            "licm",
            // An exit only a counter's first value can take tests that value,
            // which trivial unswitching then takes out of the loop.
            "firstexit",
            "trivunswitch",
            "unswitch",
            "hoistloops",
            "finalvalue",
            "loopdelete",
            "instcombine",
            "finalvalue",
            "loopdelete",
            "loopsplit",
            "ifconvert",
            "unrolljam",
            "polyiv",
            "strength",
            "ptrwalk",
            "constoffset",
            "instcombine",
            "gvn",
            "condprop",
            "silentstore",
            "mergeargs",
            "ipconst",
            "deadargs",
            "dce",
            "simplifycfg",
            "sroa",
            "predcom",
            "promote",
            "checkpromote",
            "lastiter",
            "closedform",
            "lftr",
            "rtunroll",
            "mve",
            "ipvrp",
            "vrp",
            // The run-time checks closed forms, LFTR and runtime unrolling put
            // before their loops, where the tests above them decide them.
            "condprop",
            "peelinv",
            "sccp",
            "instcombine",
            "dce",
            "simplifycfg",
            // Clamps of globals promoted to values are choices now: decided
            // before their loops, with what they feed.
            "invselect",
            // Callees the unrolling, range and clean-up passes made small and
            // loop-free are inlined, and folded with their arguments.
            "reinline",
            // A callee's loads through its parameters, inlined, load the
            // global itself: never-written ones are constants.
            "constglobals",
            // The copies' loads of the callers' local arrays (an array passed
            // to the callee, filled with zeros by its declaration) read what
            // the caller stored; arrays left only written are deleted.
            "memforward",
            "sccp",
            "instcombine",
            "dce",
            "simplifycfg",
            "loopdelete",
            "phiopt",
            // Range propagation, `sccp` and the CFG clean-up above fold diamonds
            // that unrolling and peeling copied: parameters of different blocks
            // become one value, and pure or read-only calls of them the same
            // expression. (A `licm` here would also hoist them, but it hoists
            // inner loops' entry tests into outer preheaders too, where they
            // are spilled: crypto +0.5%.)
            "gvn",
            "dce",
            "simplifycfg",
            "globalforward",
            "dse",
            "loopdelete",
            "localconst",
            "constglobals",
            "pow2div",
            "divrem",
            "swp",
            "dce",
            "globaldce",
            // What hoisting left above the tests deciding whether it is used
            // (an unrolled inner loop's preheader) moves down to its uses.
            "codesink",
            "storesink",
            "sink",
            "postinc",
            "balance",
        ],
    }
}

/// How [`run_passes`] reports and checks.
#[derive(Default)]
pub struct PassOptions<'a> {
    /// Run the IR verifier after every pass; the first failure stops the run with an
    /// error naming the pass.
    pub verify_each: bool,
    /// Where IR dumps go; when set, the module is printed after every pass that
    /// changed it.
    pub print_after_all: Option<&'a mut dyn Write>,
    /// Names of passes after which to print the module (to the `print_after_all` sink
    /// when it is set, otherwise to standard error).
    pub print_after: Vec<String>,
    /// When set, receives the wall time and IR size of every pass run
    /// (`--time-passes`).
    pub timings: Option<&'a mut Vec<PassTiming>>,
    /// Threads that runs of function passes go through functions on
    /// ([`ir::parallel`]); `0`: one per core when the module is large enough to
    /// gain. The output does not depend on it.
    pub jobs: usize,
}

/// Wall time and module size (instructions) around one pass run.
#[derive(Clone, Debug, PartialEq)]
pub struct PassTiming {
    pub name: &'static str,
    pub seconds: f64,
    pub insts_before: usize,
    pub insts_after: usize,
}

/// Instructions in the module's function bodies.
pub fn module_insts(m: &Module) -> usize {
    m.funcs.values().map(function_insts).sum()
}

/// Instructions in `f`'s layout.
fn function_insts(f: &Function) -> usize {
    f.layout
        .blocks()
        .map(|b| f.layout.block_insts(b).count())
        .sum()
}

/// How alike a name is to a known one, for suggestions: the Jaro-Winkler
/// similarity (clap's suggestions take 0.8 and above), and at least 0.9 for a name
/// one edit or one transposition away (Jaro-Winkler misses those in short names:
/// `gnv` for `gvn` scores 0.56).
pub fn name_similarity(name: &str, known: &str) -> f64 {
    let jw = strsim::jaro_winkler(name, known);
    if strsim::osa_distance(name, known) <= 1 {
        jw.max(0.9)
    } else {
        jw
    }
}

/// The message for an unknown pass name: the registered name it most likely
/// misspells ([`name_similarity`] of at least 0.8), or the list of all of them.
pub fn unknown_pass(name: &str) -> String {
    let closest = REGISTRY
        .iter()
        .map(|p| (name_similarity(name, p.name()), p.name()))
        .filter(|&(score, _)| score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match closest {
        Some((_, near)) => format!("unknown pass '{name}' (did you mean '{near}'?)"),
        None => {
            let known: Vec<&str> = REGISTRY.iter().map(|p| p.name()).collect();
            format!("unknown pass '{name}' (known passes: {})", known.join(", "))
        }
    }
}

/// Runs the passes `names` in order over `m`. Fails on an unknown pass name (in
/// `names` or `opts.print_after`, before
/// running anything), when verification fails after a pass, or when a dump cannot be
/// written.
pub fn run_passes(m: &mut Module, names: &[&str], opts: &mut PassOptions) -> Result<(), String> {
    let passes: Vec<&dyn Pass> = names
        .iter()
        .map(|&n| lookup(n).ok_or_else(|| unknown_pass(n)))
        .collect::<Result<_, _>>()?;
    if let Some(n) = opts.print_after.iter().find(|n| lookup(n).is_none()) {
        return Err(unknown_pass(n));
    }
    run_pass_list(m, &passes, opts)
}

/// [`run_passes`] on passes already looked up. A run of consecutive
/// [`FunctionPass`]es goes function by function: each function passes through the
/// whole run while its IR is in the cache (LLVM's function pass manager nested
/// in a module pass manager), instead of every pass walking the whole module in
/// turn, which on a module larger than the cache reloads every function from
/// memory for every pass; and functions go through it on several threads at
/// once (`opts.jobs`). The result is the same, since each of those passes
/// reads only the function it transforms; the run goes pass by pass, on one
/// thread, when the IR is to be verified or printed between its passes.
pub fn run_pass_list(
    m: &mut Module,
    passes: &[&dyn Pass],
    opts: &mut PassOptions,
) -> Result<(), String> {
    let total = passes.len();
    let mut am = if opts.verify_each {
        AnalysisManager::verifying()
    } else {
        AnalysisManager::new()
    };
    let mut k = 0;
    while k < total {
        let run = passes[k..]
            .iter()
            .take_while(|p| p.function_pass().is_some())
            .count();
        let observed = opts.verify_each
            || opts.print_after_all.is_some()
            || passes[k..k + run]
                .iter()
                .any(|p| opts.print_after.iter().any(|n| n == p.name()));
        if run > 0 && !observed {
            run_function_by_function(m, &passes[k..k + run], &mut am, opts);
            k += run;
            continue;
        }
        run_one(m, passes[k], k, total, &mut am, opts)?;
        k += 1;
    }
    Ok(())
}

/// Runs the function passes `run` over `m` function by function (see
/// [`run_pass_list`]), with the invalidation and timings [`run_one`] would give
/// each pass. The functions go through the run on up to `opts.jobs` threads at
/// once ([`ir::parallel`]): each pass reads only the function it transforms, so
/// each function comes out the same as on one thread. When timed, one function
/// at a time, so that the times add up to the wall time.
fn run_function_by_function(
    m: &mut Module,
    run: &[&dyn Pass],
    am: &mut AnalysisManager,
    opts: &mut PassOptions,
) {
    let timed = opts.timings.is_some();
    let jobs = if timed { 1 } else { opts.jobs };
    /// One function's way through the run: which passes changed it, and the
    /// time and instructions before and after each.
    struct Way<'a> {
        f: &'a mut Function,
        share: FunctionShare<'a>,
        changed: smallvec::SmallVec<[bool; 32]>,
        /// Empty unless timed.
        timings: Vec<(f64, usize, usize)>,
    }
    let mut ways: Vec<Way<'_>> = am
        .shares(m)
        .into_iter()
        .map(|(_, f, share)| Way {
            f,
            share,
            changed: smallvec::smallvec![false; run.len()],
            timings: if timed {
                vec![(0.0, 0, 0); run.len()]
            } else {
                Vec::new()
            },
        })
        .collect();
    ir::parallel::for_each_mut(
        &mut ways,
        jobs,
        |w| w.f.num_insts(),
        |w| {
            for (k, p) in run.iter().enumerate() {
                let pass = p.function_pass().expect("a run holds function passes");
                let start = timed.then(|| (std::time::Instant::now(), function_insts(w.f)));
                // A verified run goes pass by pass, so this one checks nothing.
                let ran = run_unless_settled(&mut w.share, w.f, *p, pass, false);
                let Some(c) = ran.expect("no check fails without verification") else {
                    continue;
                };
                if c {
                    w.share.invalidate(p.preserves());
                }
                w.share.compact_if_sparse(w.f);
                w.changed[k] |= c;
                if let Some((start, insts)) = start {
                    let t = &mut w.timings[k];
                    t.0 += start.elapsed().as_secs_f64();
                    t.1 += insts;
                    t.2 += function_insts(w.f);
                }
            }
        },
    );
    let mut changed = vec![false; run.len()];
    let mut timings: Vec<PassTiming> = run
        .iter()
        .map(|p| PassTiming {
            name: p.name(),
            seconds: 0.0,
            insts_before: 0,
            insts_after: 0,
        })
        .collect();
    let mut reports = Vec::with_capacity(ways.len());
    for w in ways {
        for (c, &wc) in changed.iter_mut().zip(&w.changed) {
            *c |= wc;
        }
        for (t, &(seconds, before, after)) in timings.iter_mut().zip(&w.timings) {
            t.seconds += seconds;
            t.insts_before += before;
            t.insts_after += after;
        }
        reports.push(w.share.reported());
    }
    am.absorb(reports);
    // Each function's analyses were invalidated as it went; what is left is the
    // purity summaries, for a pass that changed a function without saying which.
    let unreported = run
        .iter()
        .zip(&changed)
        .any(|(p, &c)| c && !p.preserves().other_functions);
    if unreported {
        am.invalidate(Preserved::CFG);
    }
    if let Some(t) = opts.timings.as_mut() {
        t.extend(timings);
    }
}

/// Runs the function pass `fp` (`p`) on every function of `m` but those it
/// has settled ([`run_unless_settled`]); whether it changed any.
fn run_function_pass(
    m: &mut Module,
    p: &dyn Pass,
    fp: &dyn FunctionPass,
    am: &mut AnalysisManager,
    verify: bool,
) -> Result<bool, String> {
    let mut changed = false;
    let mut reports = Vec::new();
    let mut result = Ok(());
    for (_, f, mut share) in am.shares(m) {
        if result.is_ok() {
            match run_unless_settled(&mut share, f, p, fp, verify) {
                Ok(c) => changed |= c.unwrap_or(false),
                Err(e) => result = Err(e),
            }
        }
        reports.push(share.reported());
    }
    am.absorb(reports);
    result.map(|()| changed)
}

/// Runs the function pass `fp` (`p`) on `f`, the function of `share`, unless
/// it has settled it ([`FunctionShare::is_settled`]): whether it changed `f`,
/// `None` when skipped. When verifying, a settled function is run anyway and
/// must come out unchanged: the check of the premise that skips it.
fn run_unless_settled(
    share: &mut FunctionShare<'_>,
    f: &mut Function,
    p: &dyn Pass,
    fp: &dyn FunctionPass,
    verify: bool,
) -> Result<Option<bool>, String> {
    let settled = share.is_settled(p.name());
    if settled && !verify {
        return Ok(None);
    }
    let before = settled.then(|| crate::analysis::manager::fingerprint(f));
    let c = share.on_function(f, |f, fa| fp.run_on(f, fa));
    if let Some(before) = before {
        if c || crate::analysis::manager::fingerprint(f) != before {
            return Err(format!(
                "pass '{}' changed '{}', which it had left unchanged as it was",
                p.name(),
                f.name
            ));
        }
    }
    if !c {
        share.settle(p.name());
    }
    Ok(Some(c))
}

/// Runs the module pass `p` unless it has settled the module
/// ([`AnalysisManager::is_settled_module`]); whether it changed anything. When
/// verifying, a settled module is run anyway and must come out unchanged.
fn run_module_pass(
    m: &mut Module,
    p: &dyn Pass,
    am: &mut AnalysisManager,
    verify: bool,
) -> Result<bool, String> {
    let settled = am.is_settled_module(p.name());
    if settled && !verify {
        return Ok(false);
    }
    let before = settled.then(|| ir::print_module(m));
    let clock = am.changes();
    let changed = p.run_with(m, am);
    if let Some(before) = before {
        if changed || ir::print_module(m) != before {
            return Err(format!(
                "pass '{}' changed the module, which it had left unchanged as it was",
                p.name()
            ));
        }
    }
    if !changed && am.changes() == clock {
        am.settle_module(p.name());
    }
    Ok(changed)
}

/// Runs pass number `k` (of `total`) over the whole module, then verifies and
/// prints as `opts` asks.
fn run_one(
    m: &mut Module,
    p: &dyn Pass,
    k: usize,
    total: usize,
    am: &mut AnalysisManager,
    opts: &mut PassOptions,
) -> Result<(), String> {
    let before = opts.timings.is_some().then(|| module_insts(m));
    let start = std::time::Instant::now();
    let changed = match p.function_pass() {
        Some(fp) => run_function_pass(m, p, fp, am, opts.verify_each)?,
        None => run_module_pass(m, p, am, opts.verify_each)?,
    };
    if changed {
        am.invalidate(p.preserves());
        am.compact_sparse_functions(m);
    }
    let seconds = start.elapsed().as_secs_f64();
    if let (Some(t), Some(insts_before)) = (opts.timings.as_mut(), before) {
        t.push(PassTiming {
            name: p.name(),
            seconds,
            insts_before,
            insts_after: module_insts(m),
        });
    }
    if opts.verify_each {
        ir::verify_module(m).map_err(|e| {
            format!(
                "invalid IR after pass '{}':\n{e}\n{}",
                p.name(),
                ir::print_module(m)
            )
        })?;
        am.check(m)
            .map_err(|e| format!("after pass '{}': {e}", p.name()))?;
    }
    // `--print-after NAME` prints every time NAME runs; `--print-after-all`
    // only after the passes that changed something (as LLVM's
    // `-print-changed`), numbered in the run.
    let wanted = opts.print_after.iter().any(|n| n == p.name());
    if wanted || (opts.print_after_all.is_some() && changed) {
        let text = format!(
            "; IR after {} (pass {} of {total}{})\n{}",
            p.name(),
            k + 1,
            if changed { "" } else { ", unchanged" },
            ir::print_module(m)
        );
        let res = match opts.print_after_all.as_mut() {
            Some(w) => w.write_all(text.as_bytes()),
            None => std::io::stderr().write_all(text.as_bytes()),
        };
        res.map_err(|e| format!("cannot write IR dump: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = r#"
func @main() -> i32 {
bb0:
  %0 = alloc i32
  store 2, %0
  %1 = load i32, %0
  %2 = add %1, 3
  ret %2
}
"#;

    #[test]
    fn unknown_pass_is_an_error_and_nothing_runs() {
        let mut m = ir::parse_module(PROGRAM).unwrap();
        let before = ir::print_module(&m);
        let err = run_passes(
            &mut m,
            &["mem2reg", "nosuchpass"],
            &mut PassOptions::default(),
        )
        .unwrap_err();
        assert!(
            err.contains("nosuchpass") && err.contains("mem2reg"),
            "{err}"
        );
        assert_eq!(ir::print_module(&m), before);
    }

    #[test]
    fn pipelines_name_registered_passes() {
        for level in 0..=3 {
            for name in pipeline(level) {
                assert!(lookup(name).is_some(), "-O{level}: {name}");
            }
        }
        assert!(pipeline(0).is_empty());
        assert!(!pipeline(1).is_empty());
        assert!(pipeline(2).len() >= pipeline(1).len());
        let names: Vec<&str> = pass_names().iter().map(|p| p.0).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "names are unique");
    }

    #[test]
    fn prints_after_the_requested_passes() {
        let mut m = ir::parse_module(PROGRAM).unwrap();
        let mut sink: Vec<u8> = Vec::new();
        let mut opts = PassOptions {
            verify_each: true,
            print_after_all: Some(&mut sink),
            ..Default::default()
        };
        run_passes(&mut m, &["mem2reg", "instcombine"], &mut opts).unwrap();
        let text = String::from_utf8(sink).unwrap();
        let first = text.find("; IR after mem2reg").expect("dump after mem2reg");
        let second = text
            .find("; IR after instcombine")
            .expect("dump after instcombine");
        assert!(first < second);
        assert!(text[first..second].contains("add 2, 3"));
        assert!(text[second..].contains("ret 5"));
        assert!(
            text.contains("; IR after instcombine (pass 2 of 2)\n"),
            "{text}"
        );
    }

    #[test]
    fn timings_record_every_run_with_module_sizes() {
        let mut m = ir::parse_module(PROGRAM).unwrap();
        let mut timings = Vec::new();
        let mut opts = PassOptions {
            timings: Some(&mut timings),
            ..Default::default()
        };
        run_passes(&mut m, &["mem2reg", "instcombine", "dce"], &mut opts).unwrap();
        let names: Vec<&str> = timings.iter().map(|t| t.name).collect();
        assert_eq!(names, ["mem2reg", "instcombine", "dce"]);
        // alloc, store, load, add, ret: mem2reg leaves the add and the return.
        assert_eq!((timings[0].insts_before, timings[0].insts_after), (5, 2));
        assert_eq!(timings[2].insts_after, module_insts(&m));
        assert!(timings.iter().all(|t| t.seconds >= 0.0));
    }

    /// A pass that records which function it ran on, and changes nothing.
    struct Recorder<'a> {
        name: &'static str,
        function: bool,
        log: &'a std::sync::Mutex<Vec<String>>,
    }

    impl Recorder<'_> {
        fn record(&self, f: &Function) {
            self.log
                .lock()
                .unwrap()
                .push(format!("{}@{}", self.name, f.name));
        }
    }

    impl Pass for Recorder<'_> {
        fn name(&self) -> &'static str {
            self.name
        }
        fn description(&self) -> &'static str {
            "records the functions it runs on"
        }
        fn run(&self, m: &mut Module) -> bool {
            m.funcs.values().for_each(|f| self.record(f));
            false
        }
        fn function_pass(&self) -> Option<&dyn FunctionPass> {
            self.function.then_some(self as &dyn FunctionPass)
        }
    }

    impl FunctionPass for Recorder<'_> {
        fn run_on(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
            self.record(f);
            false
        }
    }

    /// Runs `passes` over the module `src`; what the recorders logged.
    fn logged_run(
        src: &str,
        passes: &[&dyn Pass],
        verify_each: bool,
        log: &std::sync::Mutex<Vec<String>>,
    ) -> Vec<String> {
        logged_run_on(src, passes, verify_each, 1, log)
    }

    /// [`logged_run`] on `jobs` threads.
    fn logged_run_on(
        src: &str,
        passes: &[&dyn Pass],
        verify_each: bool,
        jobs: usize,
        log: &std::sync::Mutex<Vec<String>>,
    ) -> Vec<String> {
        let mut m = ir::parse_module(src).unwrap();
        let mut opts = PassOptions {
            verify_each,
            jobs,
            ..Default::default()
        };
        run_pass_list(&mut m, passes, &mut opts).unwrap();
        std::mem::take(&mut *log.lock().unwrap())
    }

    #[test]
    fn functions_go_through_a_run_on_several_threads_each_in_pass_order() {
        let mut src = String::new();
        for k in 0..9 {
            src.push_str(&format!("func @f{k}() -> i32 {{\nbb0:\n  ret {k}\n}}\n"));
        }
        let log = std::sync::Mutex::new(Vec::new());
        let pass = |name, function| Recorder {
            name,
            function,
            log: &log,
        };
        let (f1, f2, module) = (pass("f1", true), pass("f2", true), pass("m", false));
        let passes: [&dyn Pass; 3] = [&f1, &f2, &module];
        let order = logged_run_on(&src, &passes, false, 3, &log);
        // Each function sees f1 then f2; the module pass starts after the run.
        for k in 0..9 {
            let mine: Vec<&str> = order
                .iter()
                .filter(|e| e.ends_with(&format!("@f{k}")))
                .map(|e| e.split('@').next().unwrap())
                .collect();
            assert_eq!(mine, ["f1", "f2", "m"], "f{k}");
        }
        let first_m = order.iter().position(|e| e.starts_with("m@")).unwrap();
        assert_eq!(first_m, 18, "{order:?}");
    }

    #[test]
    fn function_passes_in_a_row_run_function_by_function() {
        let two = "func @a() -> i32 {\nbb0:\n  ret 1\n}\nfunc @main() -> i32 {\nbb0:\n  ret 0\n}\n";
        let log = std::sync::Mutex::new(Vec::new());
        let pass = |name, function| Recorder {
            name,
            function,
            log: &log,
        };
        let (f1, f2, module, f3) = (
            pass("f1", true),
            pass("f2", true),
            pass("m", false),
            pass("f3", true),
        );
        let passes: [&dyn Pass; 4] = [&f1, &f2, &module, &f3];
        let order = |verify_each| logged_run(two, &passes, verify_each, &log);
        // f1 and f2 go function by function; a module pass ends the run, and f3,
        // alone, runs as any pass does.
        assert_eq!(
            order(false),
            ["f1@a", "f2@a", "f1@main", "f2@main", "m@a", "m@main", "f3@a", "f3@main"]
        );
        // Verifying after each pass needs every pass over the whole module.
        assert_eq!(
            order(true),
            ["f1@a", "f1@main", "f2@a", "f2@main", "m@a", "m@main", "f3@a", "f3@main"]
        );
    }

    /// A transform that counts the functions it runs on and changes those named
    /// `main` (by reporting a change only).
    struct Counting(std::sync::atomic::AtomicUsize);

    impl FunctionTransform for Counting {
        const NAME: &'static str = "counting";
        const DESCRIPTION: &'static str = "counts the functions it runs on";
        const PRESERVES: Preserved = Preserved::CFG;
        fn transform(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            f.name == "main"
        }
    }

    #[test]
    fn a_pass_that_changed_nothing_is_skipped_until_its_function_changes() {
        let two = "func @a() -> i32 {\nbb0:\n  ret 1\n}\nfunc @main() -> i32 {\nbb0:\n  ret 0\n}\n";
        let log = std::sync::Mutex::new(Vec::new());
        let (f1, module) = (
            Recorder {
                name: "f1",
                function: true,
                log: &log,
            },
            Recorder {
                name: "m",
                function: false,
                log: &log,
            },
        );
        // `counting` changes `main` only.
        let counting = Counting(Default::default());
        let passes: [&dyn Pass; 6] = [&f1, &counting, &f1, &f1, &module, &module];
        let order = |verify_each| logged_run(two, &passes, verify_each, &log);
        // f1 runs again on `main` only, which changed since it ran; its third
        // run finds both functions as it left them. The module pass, which
        // changes nothing, runs once.
        assert_eq!(
            order(false),
            ["f1@a", "f1@main", "f1@main", "m@a", "m@main"]
        );
        // Verifying, every pass runs, to check that the skipped would change
        // nothing.
        assert_eq!(
            order(true),
            [
                "f1@a", "f1@main", "f1@a", "f1@main", "f1@a", "f1@main", "m@a", "m@main", "m@a",
                "m@main"
            ]
        );
    }

    /// A transform that changes nothing the first time it runs on a function,
    /// and afterwards changes `ret 0` to `ret 1` without saying so.
    struct Unreported(std::sync::atomic::AtomicUsize);

    impl FunctionTransform for Unreported {
        const NAME: &'static str = "unreported";
        const DESCRIPTION: &'static str = "changes functions without saying so";
        fn transform(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
            if self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed) > 0 {
                let one = f.iconst(1);
                let ret = f.terminator(f.entry_block()).expect("a body");
                f.map_inst_args(ret, |_| one);
            }
            false
        }
    }

    #[test]
    fn verification_catches_a_skipped_pass_that_would_have_changed_its_function() {
        let main = "func @main() -> i32 {\nbb0:\n  ret 0\n}\n";
        let run = |verify_each| {
            let pass = Unreported(Default::default());
            let passes: [&dyn Pass; 2] = [&pass, &pass];
            let mut m = ir::parse_module(main).unwrap();
            let mut opts = PassOptions {
                verify_each,
                ..Default::default()
            };
            run_pass_list(&mut m, &passes, &mut opts).map(|()| ir::print_module(&m))
        };
        // Not verifying, the second run is skipped: the function keeps `ret 0`.
        assert!(run(false).unwrap().contains("ret 0"));
        let err = run(true).unwrap_err();
        assert!(err.contains("'unreported' changed 'main'"), "{err}");
    }

    #[test]
    fn a_function_transform_is_a_function_pass_with_its_constants() {
        let two = "func @a() -> i32 {\nbb0:\n  ret 1\n}\nfunc @main() -> i32 {\nbb0:\n  ret 0\n}\n";
        let pass = Counting(Default::default());
        let p: &dyn Pass = &pass;
        assert_eq!(p.name(), "counting");
        assert_eq!(p.description(), "counts the functions it runs on");
        assert!(p.preserves().cfg && !p.preserves().other_functions);
        assert!(p.function_pass().is_some());
        // Run on its own, it transforms each function once; one changed.
        let mut m = ir::parse_module(two).unwrap();
        assert!(p.run(&mut m));
        assert_eq!(pass.0.load(std::sync::atomic::Ordering::Relaxed), 2);
    }

    #[test]
    fn print_after_all_skips_passes_that_changed_nothing() {
        let mut m = ir::parse_module(PROGRAM).unwrap();
        let mut sink: Vec<u8> = Vec::new();
        let mut opts = PassOptions {
            verify_each: true,
            print_after_all: Some(&mut sink),
            ..Default::default()
        };
        // The second mem2reg finds no alloc left.
        run_passes(&mut m, &["mem2reg", "mem2reg", "instcombine"], &mut opts).unwrap();
        let text = String::from_utf8(sink).unwrap();
        let headers: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("; IR after"))
            .collect();
        assert_eq!(
            headers,
            [
                "; IR after mem2reg (pass 1 of 3)",
                "; IR after instcombine (pass 3 of 3)"
            ]
        );
    }

    #[test]
    fn complete_gvn_runs_at_o1_and_o2() {
        // The complete-GVN paper's Figure 1 (a): only cgvn proves x2 == c + 1.
        let src = r#"
declare @putint(i32) -> void

func @f(i32, i32, i32) -> void {
bb0(%0: i32, %1: i32, %2: i32):
  br %2, bb1, bb2
bb1:
  %3 = add %0, 1
  jump bb3(%0, %3)
bb2:
  %4 = add %1, 1
  jump bb3(%1, %4)
bb3(%5: i32, %6: i32):
  %7 = add %5, 1
  %8 = sub %6, %7
  call @putint(%8)
  ret
}
"#;
        for level in [1, 2] {
            let mut m = ir::parse_module(src).unwrap();
            let mut opts = PassOptions {
                verify_each: true,
                ..Default::default()
            };
            run_passes(&mut m, &pipeline(level), &mut opts).unwrap();
            let out = ir::print_module(&m);
            assert!(out.contains("call @putint(0)"), "-O{level}:\n{out}");
        }
    }

    /// A program with a global, a global and a local array, loops, a branch, a
    /// call in a loop and a recursion (SysY through `mem2reg`).
    fn every_pass_program() -> String {
        r#"
global @g: i32 = 3
global @tab: [i32; 8] = zeroinit

func @sq(i32) -> i32 {
bb0(%0: i32):
  %1 = mul %0, %0
  ret %1
}

FACT
func @main() -> i32 {
bb0:
  %0 = alloc [i32; 8]
  %1 = call @getint()
  jump bb1(0)
bb1(%2: i32):
  %3 = slt %2, 8
  br %3, bb2, bb3
bb2:
  %4 = load i32, @g
  %5 = mul %2, %4
  %6 = gep %0, %2, 4
  store %5, %6
  %7 = call @sq(%2)
  %8 = srem %7, 7
  %9 = gep @tab, %2, 4
  store %8, %9
  %10 = add %2, 1
  jump bb1(%10)
bb3:
  jump bb4(0, 0)
bb4(%11: i32, %12: i32):
  %13 = slt %11, %1
  br %13, bb5, bb6
bb5:
  %14 = srem %11, 8
  %15 = gep %0, %14, 4
  %16 = load i32, %15
  %17 = sgt %16, 6
  br %17, bb7, bb9
bb6:
  %18 = call @fact(5)
  %19 = add %12, %18
  %20 = load i32, @g
  %21 = add %19, %20
  call @putint(%21)
  ret 0
bb7:
  %22 = gep %0, %14, 4
  %23 = load i32, %22
  %24 = sdiv %23, 2
  %25 = add %12, %24
  jump bb8(%25)
bb8(%26: i32):
  %27 = add %11, 1
  jump bb4(%27, %26)
bb9:
  %28 = gep @tab, %14, 4
  %29 = load i32, %28
  %30 = sub %12, %29
  jump bb8(%30)
}

declare @getint() -> i32
declare @putint(i32) -> void
"#
        .replace("FACT\n", crate::passes::testutil::FACT)
    }

    /// Every registered pass, run alone on its own entry point ([`Pass::run`], with
    /// analyses of its own) and through a manager ([`Pass::run_with`]), leaves a
    /// module that verifies, behaves as before and is the same both ways.
    #[test]
    fn every_pass_runs_alone_both_ways() {
        let expected =
            crate::passes::testutil::exec(&ir::parse_module(&every_pass_program()).unwrap(), "10");
        assert_eq!(expected, ("153".to_string(), 0));
        for p in REGISTRY {
            let mut alone = ir::parse_module(&every_pass_program()).unwrap();
            p.run(&mut alone);
            let mut managed = ir::parse_module(&every_pass_program()).unwrap();
            p.run_with(&mut managed, &mut AnalysisManager::new());
            for m in [&alone, &managed] {
                if let Err(e) = ir::verify_module(m) {
                    panic!("{}: {e:?}\n{}", p.name(), ir::print_module(m));
                }
                let got = crate::passes::testutil::exec(m, "10");
                assert_eq!(got, expected, "{}:\n{}", p.name(), ir::print_module(m));
            }
            assert_eq!(
                ir::print_module(&alone),
                ir::print_module(&managed),
                "{}",
                p.name()
            );
        }
    }

    #[test]
    fn o2_pipeline_keeps_behaviour_and_verifies() {
        let mut m = ir::parse_module(PROGRAM).unwrap();
        let names = pipeline(2);
        run_passes(
            &mut m,
            &names,
            &mut PassOptions {
                verify_each: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            ir::print_module(&m).trim(),
            "func @main() -> i32 {\nbb0:\n  ret 5\n}"
        );
    }

    #[test]
    fn the_o2_pipeline_gives_the_same_module_on_any_number_of_threads() {
        for src in [
            LATE_CALLS.replace("WRITE", "store %2, @g"),
            every_pass_program(),
        ] {
            let optimised = |jobs| {
                let mut m = ir::parse_module(&src).unwrap();
                let mut opts = PassOptions {
                    jobs,
                    ..Default::default()
                };
                run_passes(&mut m, &pipeline(2), &mut opts).unwrap();
                ir::print_module(&m)
            };
            let one = optimised(1);
            for jobs in [2, 4] {
                assert_eq!(optimised(jobs), one, "{jobs} threads");
            }
        }
    }

    /// Pure and read-only calls whose arguments become equal only late (range
    /// propagation proves a test true, the diamond it guarded folds) in a loop.
    const LATE_CALLS: &str = r#"
global @g: i32 = 3
declare @getint() -> i32
declare @putint(i32) -> void

func @sq(i32) -> i32 {
bb0(%0: i32):
  %1 = mul %0, %0
  %2 = srem %1, 7
  ret %2
}

func @rd(i32) -> i32 {
bb0(%0: i32):
  %1 = load i32, @g
  %2 = add %0, %1
  ret %2
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = and %0, 7
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  %4 = slt %1, 8
  br %4, bb3(%0), bb2
bb2:
  jump bb3(0)
bb3(%5: i32):
  %6 = call @sq(%0)
  %7 = call @sq(%5)
  %8 = call @rd(%0)
  WRITE
  %9 = call @rd(%5)
  %10 = add %3, %6
  %11 = add %10, %7
  %12 = add %11, %8
  %13 = add %12, %9
  %14 = add %2, 1
  %15 = slt %14, 4
  br %15, bb1(%14, %13), bb4
bb4:
  call @putint(%13)
  ret 0
}
"#;

    /// `main` clears a local array and passes it to a small callee that
    /// `reinline` copies in; the copy's loads read the caller's fill and store.
    const LATE_FILL: &str = r#"
declare @memset(ptr, i32, i64) -> ptr
declare @putint(i32) -> void
declare @getint() -> i32

func @second(ptr) -> i32 {
bb0(%0: ptr):
  %1 = gep %0, 1, 4
  %2 = load i32, %1
  %3 = gep %0, 5, 4
  %4 = load i32, %3
  %5 = add %2, %4
  ret %5
}

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 1000]
  %1 = sext 4000
  %2 = call @memset(%0, 0, %1)
  %3 = call @getint()
  %4 = gep %0, 5, 4
  store %3, %4
  %5 = call @second(%0)
  call @putint(%5)
  %6 = call @second(%0)
  call @putint(%6)
  ret 0
}
"#;

    #[test]
    fn a_late_inlined_callee_reads_the_callers_fill() {
        let late = pipeline(2);
        let from = late.iter().position(|&p| p == "reinline").unwrap();
        let out = crate::passes::testutil::same_behaviour(LATE_FILL, &late[from..], "7");
        // The array is only written once the copies' loads are forwarded: the
        // 4000-byte clear and the array are gone.
        assert!(
            !out.contains("alloc") && !out.contains("call @memset"),
            "{out}"
        );
    }

    #[test]
    fn late_equal_calls_merge() {
        let late = pipeline(2);
        let from = late.iter().rposition(|&p| p == "vrp").unwrap();
        // Without `reinline`, which would inline these small callees: the
        // calls stand for any that stay calls.
        let late: Vec<&str> = late[from..]
            .iter()
            .copied()
            .filter(|&p| p != "reinline")
            .collect();
        let late = &late[..];
        let src = LATE_CALLS.replace("WRITE", "");
        let out = crate::passes::testutil::same_behaviour(&src, late, "5");
        assert_eq!(out.matches("call @sq").count(), 1, "{out}");
        assert_eq!(out.matches("call @rd").count(), 1, "{out}");
        // A store to what `@rd` reads between the two calls keeps both.
        let src = LATE_CALLS.replace("WRITE", "store %2, @g");
        let out = crate::passes::testutil::same_behaviour(&src, late, "5");
        assert_eq!(out.matches("call @sq").count(), 1, "{out}");
        assert_eq!(out.matches("call @rd").count(), 2, "{out}");
    }

    /// A loop nest testing `c || x <= p[0]` (both invariant) on every iteration,
    /// as complete unrolling finds it: its inner loops' iterations become a chain
    /// of copies of the test.
    const UNROLLED_INVARIANT_TEST: &str = r#"
declare @getint() -> i32
declare @getfloat() -> f32
declare @putint(i32) -> void

func @f(ptr, f32) -> i32 {
bb0(%0: ptr, %1: f32):
  %2 = fadd %1, -6.0
  %3 = fne %2, 0.0
  jump bb1(0, -3)
bb1(%6: i32, %7: i32):
  jump bb3(%6, 3)
bb2:
  %8 = add %7, 1
  %9 = slt %8, 8
  br %9, bb1(%21, %8), bb8(%21)
bb3(%10: i32, %11: i32):
  jump bb5(3, %10)
bb4:
  %12 = add %11, 3
  %13 = slt %12, 12
  br %13, bb3(%21, %12), bb2
bb5(%14: i32, %15: i32):
  br %3, bb7, bb6
bb6:
  %16 = load i32, %0
  %17 = sitofp %16
  %18 = fle %1, %17
  br %18, bb7, bb8(516)
bb7:
  %20 = add %14, 1
  %21 = add %15, %14
  %22 = slt %20, 8
  br %22, bb5(%20, %21), bb4
bb8(%23: i32):
  ret %23
}

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 1]
  %1 = call @getint()
  store %1, %0
  %2 = call @getfloat()
  %3 = call @f(%0, %2)
  call @putint(%3)
  ret 0
}
"#;

    #[test]
    fn tests_copied_by_complete_unrolling_are_decided_by_the_first_copy() {
        let late = pipeline(2);
        let from = late.iter().position(|&p| p == "cunroll").unwrap();
        // Every way: the first part of the test true, the second true, neither.
        for input in ["3 7.5", "9 6.0", "3 6.0"] {
            let out = crate::passes::testutil::same_behaviour(
                UNROLLED_INVARIANT_TEST,
                &late[from..],
                input,
            );
            let f = &out[out.find("func @f").unwrap()..out.find("func @main").unwrap()];
            // One load and one comparison of it, not one per unrolled iteration.
            assert_eq!(f.matches("load i32").count(), 1, "{out}");
            assert_eq!(f.matches("fle").count(), 1, "{out}");
        }
    }
    /// A loop-free callee reading through its pointer parameter, inlined late
    /// (`reinline`): the caller passes a row of a global nothing writes.
    const LATE_INLINED_GLOBAL_READ: &str = r#"
global @g: [i32; 6] = zeroinit
declare @getint() -> i32
declare @putint(i32) -> void

func @f(ptr, i32) -> i32 {
bb0(%0: ptr, %1: i32):
  %2 = load i32, %0
  %3 = srem %2, 887
  %4 = add %3, 887
  %5 = srem %4, 887
  %6 = mul %5, %1
  %7 = add %6, %1
  ret %7
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = gep @g, 3, 4
  %2 = call @f(%1, %0)
  call @putint(%2)
  ret 0
}
"#;

    #[test]
    fn a_never_written_global_read_by_a_late_inlined_callee_folds_its_uses() {
        let late = pipeline(2);
        let from = late.iter().position(|&p| p == "reinline").unwrap();
        let to = late[from..].iter().position(|&p| p == "phiopt").unwrap();
        for input in ["5", "-3"] {
            let out = crate::passes::testutil::same_behaviour(
                LATE_INLINED_GLOBAL_READ,
                &late[from..from + to],
                input,
            );
            let main = &out[out.find("func @main").unwrap()..];
            // Inlined, the load reads 0 and the remainders fold away.
            assert!(!main.contains("call @f"), "{out}");
            assert!(!main.contains("srem"), "{out}");
            assert!(!main.contains("load"), "{out}");
        }
    }

    /// A copy of an address on each arm of a branch (as jump threading leaves
    /// them) into a local array cleared by `memset`: as a pointer parameter the
    /// array escapes `memforward`; computed once at the join it does not.
    const THREADED_ADDRESS: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @memset(ptr, i32, i64) -> ptr

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 64]
  %1 = sext 256
  %2 = call @memset(%0, 0, %1)
  %3 = call @getint()
  %4 = and %3, 7
  store 5, %0
  %5 = slt %3, 4
  br %5, bb1, bb2
bb1:
  %6 = add %4, 20
  %7 = gep %0, %6, 4
  jump bb3(%7, 1)
bb2:
  %8 = add %4, 20
  %9 = gep %0, %8, 4
  jump bb3(%9, 2)
bb3(%10: ptr, %11: i32):
  %12 = load i32, %10
  %13 = add %12, %11
  call @putint(%13)
  ret 0
}
"#;

    #[test]
    fn addresses_copied_into_the_arms_of_a_branch_do_not_hide_an_array() {
        let passes = ["mergeargs", "memforward", "dce"];
        for input in ["2", "6"] {
            let out = crate::passes::testutil::same_behaviour(THREADED_ADDRESS, &passes, input);
            // The load reads the fill; the array and its clearing go.
            assert!(!out.contains("load"), "{out}");
            assert!(!out.contains("alloc"), "{out}");
        }
        // Without the merge the pointer parameter keeps the array.
        let out = crate::passes::testutil::run(THREADED_ADDRESS, &passes[1..]);
        assert!(out.contains("load"), "{out}");
    }

    /// A run-time check a loop transformation put before its loop (that `n`
    /// is small enough for a closed form), below a test that already decides it.
    const DECIDED_CHECK: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 625
  br %1, bb3(0), bb1
bb1:
  %2 = sle %0, 1073741823
  br %2, bb2, bb3(7)
bb2:
  %3 = mul %0, 3
  jump bb3(%3)
bb3(%4: i32):
  call @putint(%4)
  ret 0
}
"#;

    #[test]
    fn late_run_time_checks_decided_by_the_tests_above_them_fold() {
        let late = pipeline(2);
        let from = late.iter().rposition(|&p| p == "vrp").unwrap();
        for input in ["5", "900", "-7"] {
            let out = crate::passes::testutil::same_behaviour(DECIDED_CHECK, &late[from..], input);
            assert!(!out.contains("1073741823"), "{out}");
        }
    }
}
