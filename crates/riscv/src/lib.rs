//! The RV64GC back end: IR module to GNU assembler text for
//! `riscv64-linux-gnu-gcc -march=rv64gc -mabi=lp64d`.
//!
//! Pipeline per function, one file (or folder) per stage:
//!
//! ```text
//! isel/ (+ out_of_ssa) IR -> machine IR over virtual registers; block arguments
//!                      become sequentialised parallel copies on (split) edges
//! store_merge          zero stores filling an aligned doubleword merged (-O1);
//!                      register bases proved aligned by known_align
//! licm                 loop-invariant materialisations move to preheaders (-O1)
//! speculate            cheap instructions above loop exits and into idle slots
//!                      of a block's predecessor (-O1)
//! interblock           a join's leading instructions into the idle slots of the
//!                      block dominating it (global scheduling, -O1)
//! schedule (pre-RA)    list scheduling over virtual registers, pressure-guarded
//! regalloc             loops (depths) + liveness (intervals) + linear scan + spill
//! postra_sink          copies into callee-saved registers sunk to their reader,
//!                      returns shared with the frame's region copied (tail_dup)
//! edge_copies          a loop's back-edge copies above its exit test (-O1)
//! frame                layout, prologue/epilogue (shrink_wrap places them), frame
//!                      slots -> sp offsets
//! peephole             self-moves, jump threading, unreachable blocks
//! placement            block order (chains by loop depth), small blocks copied in
//!                      place of jumps to them (tail_dup), fall-through branches,
//!                      copies forwarded to their readers (copy_forward)
//! schedule             list scheduling for the U74's dual-issue pipes (-O1; model
//!                      in u74)
//! emit                 text, with branch relaxation; labels in layout order
//! ```
//!
//! The functions are compiled on several threads at once ([`ir::parallel`]), each
//! from the module alone, and their texts joined in module order.
//!
//! With source lines asked for (`sysyc -g`), `srcloc` follows each instruction's
//! source position from isel through the stages, beside the machine function (no
//! stage sees it), and the emitter writes `# file:LINE: text` comments.
//!
//! Globals are emitted by `globals`. The calling convention lives in `abi`. With
//! [`Options::verify`], the machine IR verifier (`verify`) checks the function after
//! every stage. The stages are named in [`STAGES`]; [`run_stages`] runs named ones on
//! a function (read back from its text form, [`text`], in the filetests), and a
//! [`StageHook`] sees the function around each stage (`--print-after`).
//! The allocation checker (`regalloc::checker`) proves the register allocation with
//! the verifier (and always in debug builds).

pub mod abi;
pub mod anchors;
pub mod copy_forward;
pub mod copy_swap;
pub mod divinv;
pub mod edge_copies;
pub mod emit;
pub mod frame;
pub mod globals;
pub mod hoist_constants;
pub mod hoist_into_slots;
pub mod increments;
pub mod interblock;
pub mod isel;
pub mod known_align;
pub mod licm;
mod licm_pile;
pub mod liveness;
pub mod loop_forest;
pub mod loops;
pub mod machine_cse;
pub mod mir;
pub mod out_of_ssa;
pub mod peephole;
pub mod placement;
pub mod postra_sink;
pub mod reassociate;
pub mod redundant_loads;
pub mod regalloc;
pub mod region_regs;
pub mod rename;
pub mod schedule;
pub mod shrink_wrap;
pub mod speculate;
pub mod srcloc;
pub mod store_merge;
pub mod tail_dup;
#[cfg(test)]
mod testinsts;
pub mod text;
pub mod u74;
mod unit_order;
pub mod verify;

use ir::{EntityRef, Module};
use std::fmt;

/// Back-end options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Optimisation level: 0 selects and allocates only; 1 and above also hoist
    /// loop-invariant instructions and schedule.
    pub opt_level: u8,
    /// Run the machine IR verifier ([`verify`]) after every stage.
    pub verify: bool,
    /// Optimisations switched off by gcc's `-fno-...` options.
    pub flags: CodegenFlags,
    /// Threads compiling functions at the same time ([`ir::parallel`]); `0`: one per
    /// core when the module is large enough to gain. The output does not depend on
    /// it. Per-stage timing and stage hooks compile one function at a time.
    pub jobs: usize,
}

/// Back-end optimisations that gcc's `-f` options switch off by name (all on by
/// default, at `-O1` and above), so their effect can be measured by toggling.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodegenFlags {
    /// `-fno-schedule-insns`: no scheduling before register allocation: neither list
    /// scheduling nor its speculative motion above loop exits (`speculate`; gcc's
    /// `-fsched-spec` likewise acts only within `-fschedule-insns`) nor motion
    /// between blocks (`interblock`, gcc's interblock scheduling).
    pub no_schedule_insns: bool,
    /// `-fno-schedule-insns2`: no list scheduling after it.
    pub no_schedule_insns2: bool,
    /// `-fno-reorder-blocks`: blocks keep instruction selection's order (jumps to
    /// the next block still fall through).
    pub no_reorder_blocks: bool,
    /// `-fno-modulo-sched`: no software pipelining (the IR pass `swp`, which the
    /// driver leaves out of the `-O` pipeline).
    pub no_modulo_sched: bool,
}

impl CodegenFlags {
    /// Sets the flag of gcc's option `-f<name>` (`name` without `-f`, e.g.
    /// `no-schedule-insns` or `reorder-blocks`); `Err` for a name not known.
    pub fn set(&mut self, name: &str) -> Result<(), String> {
        let (on, base) = match name.strip_prefix("no-") {
            Some(base) => (false, base),
            None => (true, name),
        };
        let flag = match base {
            "schedule-insns" => &mut self.no_schedule_insns,
            "schedule-insns2" => &mut self.no_schedule_insns2,
            "reorder-blocks" => &mut self.no_reorder_blocks,
            "modulo-sched" => &mut self.no_modulo_sched,
            _ => {
                return Err(format!(
                    "unknown option '-f{name}': sysyc's -f options are -f[no-]schedule-insns, -f[no-]schedule-insns2, -f[no-]reorder-blocks and -f[no-]modulo-sched; -O0 to -O3 choose the optimisations, --passes lists them exactly"
                ))
            }
        };
        *flag = !on;
        Ok(())
    }

    /// Whether the stage named `stage` runs under these flags.
    pub fn runs(&self, stage: &str) -> bool {
        match stage {
            "speculate" | "interblock" | "reassociate" | "schedule-pre-ra" => {
                !self.no_schedule_insns
            }
            "schedule" => !self.no_schedule_insns2,
            _ => true,
        }
    }

    fn placement(&self) -> placement::Placement {
        if self.no_reorder_blocks {
            placement::Placement::KeepOrder
        } else {
            placement::Placement::Chains
        }
    }
}

/// An error the back end reports instead of panicking. Its text (`Display`) is what
/// the driver prints after `FILE: error: `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendError {
    /// IR the back end cannot translate (a type it cannot load, a value used before
    /// its definition is selected, a block without terminator).
    Untranslatable(String),
    /// An inconsistency inside a stage (printed after `internal: `).
    Internal(String),
    /// The machine IR verifier rejected the function after the stage `after`.
    Invalid {
        after: &'static str,
        error: verify::VerifyError,
    },
    /// The allocation checker could not prove the register allocation.
    Allocation(Box<regalloc::checker::CheckError>),
    /// An error in one function of the module.
    InFunction {
        function: String,
        error: Box<BackendError>,
    },
    /// Any other error, as text (for callers written against the former
    /// message-only error: [`BackendError::new`]).
    Other(String),
}

impl BackendError {
    /// An error with only a message ([`BackendError::Other`]).
    pub fn new(message: impl Into<String>) -> Self {
        BackendError::Other(message.into())
    }

    /// The error under any [`BackendError::InFunction`] context.
    pub fn innermost(&self) -> &BackendError {
        match self {
            BackendError::InFunction { error, .. } => error.innermost(),
            e => e,
        }
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendError::Untranslatable(m) | BackendError::Other(m) => f.write_str(m),
            BackendError::Internal(m) => write!(f, "internal: {m}"),
            BackendError::Invalid { after, error } => write!(f, "after {after}: {error}"),
            BackendError::Allocation(e) => write!(f, "after regalloc: {e}"),
            BackendError::InFunction { function, error } => {
                write!(f, "in function {function}: {error}")
            }
        }
    }
}

impl std::error::Error for BackendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BackendError::Invalid { error, .. } => Some(error),
            BackendError::Allocation(e) => Some(&**e),
            BackendError::InFunction { error, .. } => Some(&**error),
            _ => None,
        }
    }
}

/// Names that the assembler would read as registers.
fn is_register_name(s: &str) -> bool {
    const ABI: [&str; 7] = ["zero", "ra", "sp", "gp", "tp", "fp", "pc"];
    if ABI.contains(&s) {
        return true;
    }
    let numbered = |prefix: &str, max: u32| {
        s.strip_prefix(prefix)
            .and_then(|n| n.parse::<u32>().ok().filter(|_| !n.starts_with('+')))
            .is_some_and(|n| n <= max)
    };
    numbered("x", 31)
        || numbered("f", 31)
        || numbered("a", 7)
        || numbered("s", 11)
        || numbered("t", 6)
        || numbered("fa", 7)
        || numbered("fs", 11)
        || numbered("ft", 11)
}

/// The assembly symbol of every function of `m`, by `FuncId` index: declared
/// (runtime) functions and `main` keep their names; a defined function whose name the
/// assembler would take for a register gets an `f.` prefix.
pub fn function_symbols(m: &Module) -> Vec<String> {
    m.funcs
        .iter()
        .map(|(_, f)| {
            if !f.is_declaration() && f.name != "main" && is_register_name(&f.name) {
                format!("f.{}", f.name)
            } else {
                f.name.clone()
            }
        })
        .collect()
}

/// What the selection of every function needs to know about its module, computed
/// once per module: the symbols of the functions and the alias regions of the
/// loads and stores (which accesses the schedulers may reorder).
pub struct ModuleFacts {
    /// [`function_symbols`].
    pub names: Vec<String>,
    pub regions: ir::analysis::AliasRegions,
    /// [`globals::global_places`].
    pub places: Vec<globals::GlobalPlace>,
}

impl ModuleFacts {
    pub fn of(m: &Module) -> ModuleFacts {
        ModuleFacts {
            names: function_symbols(m),
            regions: ir::analysis::AliasRegions::compute(m),
            places: globals::global_places(m),
        }
    }
}

/// Wall time of each back-end stage summed over a module's functions, with the
/// machine instructions after it (`--time-passes`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageTimes {
    pub stages: Vec<StageTiming>,
}

/// One back-end stage's total.
#[derive(Clone, Debug, PartialEq)]
pub struct StageTiming {
    pub name: &'static str,
    pub seconds: f64,
    /// Machine instructions after the stage, over all functions so far.
    pub insts_after: usize,
}

impl StageTimes {
    fn add(&mut self, name: &'static str, seconds: f64, insts: usize) {
        match self.stages.iter_mut().find(|s| s.name == name) {
            Some(s) => {
                s.seconds += seconds;
                s.insts_after += insts;
            }
            None => self.stages.push(StageTiming {
                name,
                seconds,
                insts_after: insts,
            }),
        }
    }
}

fn mir_insts(mf: &mir::MFunction) -> usize {
    mf.layout.iter().map(|b| mf.blocks[*b].insts.len()).sum()
}

/// Machine code of one defined function after every back-end stage, ready to print.
pub fn compile_function(
    m: &Module,
    fid: ir::FuncId,
    facts: &ModuleFacts,
    opts: &Options,
) -> Result<mir::MFunction, BackendError> {
    compile_function_timed(m, fid, facts, opts, None)
}

/// [`compile_function`], adding each stage's time to `times` when given.
pub fn compile_function_timed(
    m: &Module,
    fid: ir::FuncId,
    facts: &ModuleFacts,
    opts: &Options,
    times: Option<&mut StageTimes>,
) -> Result<mir::MFunction, BackendError> {
    compile_function_located(m, fid, facts, opts, times, false).map(|(mf, _)| mf)
}

/// One back-end stage, as the driver's `--print-after`, `--time-passes` and the
/// filetests name it.
#[derive(Debug, PartialEq, Eq)]
pub struct StageInfo {
    /// The name to select it by: `regalloc`, `machine-licm`, ...
    pub name: &'static str,
    /// The verifier's rules for the function after it.
    pub after: verify::Stage,
    /// Whether only `-O1` and above run it.
    pub optimising: bool,
    /// One line on what it does.
    pub description: &'static str,
}

const fn stage(
    name: &'static str,
    after: verify::Stage,
    optimising: bool,
    description: &'static str,
) -> StageInfo {
    StageInfo {
        name,
        after,
        optimising,
        description,
    }
}

/// Every back-end stage, in pipeline order. `liveness` changes nothing: it computes
/// the block liveness that `schedule-pre-ra` and `regalloc` share (run on their own,
/// they compute it themselves).
pub static STAGES: &[StageInfo] = {
    use verify::Stage::*;
    &[
        stage(
            "isel",
            Virtual,
            false,
            "instruction selection and out-of-SSA copies",
        ),
        stage(
            "store-merge",
            Virtual,
            true,
            "pairs of 4-byte zero stores filling an aligned doubleword of a local array become one 8-byte store",
        ),
        stage(
            "divinv",
            Virtual,
            true,
            "loop-invariant divisors become multiplications by the inverse",
        ),
        stage(
            "machine-cse",
            Virtual,
            true,
            "integer operations repeated within a block computed once (local value numbering)",
        ),
        stage(
            "machine-licm",
            Virtual,
            true,
            "loop-invariant materialisations move to preheaders, shared constants to dominators",
        ),
        stage(
            "speculate",
            Virtual,
            true,
            "cheap instructions hoisted above loop exits",
        ),
        stage(
            "section-anchors",
            Virtual,
            true,
            "elements of globals of one data section addressed from one another (section anchors)",
        ),
        stage(
            "interblock",
            Virtual,
            true,
            "a join's leading instructions moved into the idle issue slots of the block dominating it",
        ),
        stage(
            "reassociate",
            Virtual,
            true,
            "chains of adds, ands, ors and xors rebuilt as trees with a shorter critical path",
        ),
        stage(
            "liveness",
            Virtual,
            false,
            "block liveness (an analysis: the function is unchanged)",
        ),
        stage(
            "schedule-pre-ra",
            Virtual,
            true,
            "list scheduling over virtual registers, pressure-guarded",
        ),
        stage(
            "regalloc",
            Allocated,
            false,
            "linear-scan register allocation with spilling",
        ),
        stage(
            "redundant-loads",
            Allocated,
            true,
            "reloads of a value still in a register removed",
        ),
        stage(
            "postra-sink",
            Allocated,
            true,
            "copies into callee-saved registers sunk to the successor that reads them, returns shared with the frame's region copied into it (both for shrink-wrapping)",
        ),
        stage(
            "edge-copies",
            Allocated,
            true,
            "a loop's back-edge copies moved above its exit test, out of their edge block",
        ),
        stage(
            "frame",
            FrameLaidOut,
            false,
            "frame layout, prologue and epilogue, slots to sp offsets",
        ),
        stage(
            "peephole",
            FrameLaidOut,
            false,
            "self-moves, jump threading, unreachable blocks removed",
        ),
        stage(
            "placement",
            Final,
            false,
            "block order in chains by loop depth, fall-through branches",
        ),
        stage(
            "schedule",
            Final,
            true,
            "list scheduling for the U74's dual-issue pipes",
        ),
    ]
};

/// The stage named `name`.
pub fn lookup_stage(name: &str) -> Option<&'static StageInfo> {
    STAGES.iter().find(|s| s.name == name)
}

/// The stages run at `-O<opt_level>`, in order (`isel` first).
pub fn stage_pipeline(opt_level: u8) -> impl Iterator<Item = &'static StageInfo> {
    STAGES
        .iter()
        .filter(move |s| opt_level >= 1 || !s.optimising)
}

/// The verifier's rules for the function a stage reads.
pub fn stage_input(info: &StageInfo) -> verify::Stage {
    let k = STAGES.iter().position(|s| s == info).unwrap_or(0);
    match k {
        0 => verify::Stage::Virtual,
        _ => STAGES[k - 1].after,
    }
}

/// Runs the stage `info` (any but `isel`, which reads IR) on `mf`. `live` carries the
/// block liveness from `liveness` to `schedule-pre-ra` and `regalloc` (each
/// computes it when it is absent; reordering within blocks keeps it valid). The
/// schedulers take blocks on up to `jobs` threads ([`ir::parallel`]).
fn apply_stage(
    info: &StageInfo,
    mf: &mut mir::MFunction,
    live: &mut Option<liveness::Liveness>,
    check: bool,
    flags: &CodegenFlags,
    jobs: usize,
) -> Result<(), BackendError> {
    match info.name {
        "store-merge" => {
            store_merge::run(mf);
        }
        "divinv" => {
            divinv::run(mf);
        }
        "machine-cse" => {
            machine_cse::run(mf);
        }
        "machine-licm" => {
            licm::hoist_invariants(mf);
            hoist_constants::hoist_constants(mf);
        }
        "speculate" => {
            speculate::hoist_above_exits(mf);
            hoist_into_slots::hoist_into_slots(mf);
        }
        "section-anchors" => {
            anchors::run(mf);
        }
        "interblock" => {
            interblock::run(mf);
        }
        "reassociate" => {
            reassociate::run(mf);
        }
        "liveness" => *live = Some(liveness::compute_liveness(mf)),
        "schedule-pre-ra" => {
            if live.is_none() {
                *live = Some(liveness::compute_liveness(mf));
            }
            if let Some(l) = live {
                schedule::run_before_allocation(mf, l, jobs);
            }
        }
        "regalloc" => {
            let l = match live.take() {
                Some(l) => l,
                None => liveness::compute_liveness(mf),
            };
            // The allocation checker runs with the verifier, and always in debug builds.
            regalloc::allocate_checked(mf, l, check)?;
        }
        "redundant-loads" => {
            redundant_loads::run(mf);
        }
        "postra-sink" => {
            postra_sink::run(mf);
            if let Some(wrap) = shrink_wrap::tentative(mf, &frame::lay_out(mf)) {
                tail_dup::copy_returns(mf, &wrap.inside);
            }
        }
        "edge-copies" => {
            edge_copies::run(mf, jobs);
        }
        "frame" => {
            let fr = frame::lay_out(mf);
            frame::lower_frame(mf, &fr)?;
        }
        "peephole" => {
            peephole::run(mf);
        }
        "placement" => {
            placement::run(mf, flags.placement());
        }
        "schedule" => {
            schedule::run(mf, jobs);
        }
        other => {
            return Err(BackendError::new(format!(
                "stage {other} does not run on machine IR"
            )))
        }
    }
    Ok(())
}

/// Runs the named stages in order on `mf` (as the pipeline would, liveness shared),
/// verifying the result of each when `verify`.
pub fn run_stages(
    mf: &mut mir::MFunction,
    names: &[&str],
    verify: bool,
) -> Result<(), BackendError> {
    let mut live = None;
    for name in names {
        let info = lookup_stage(name)
            .ok_or_else(|| BackendError::Other(format!("unknown stage {name}")))?;
        apply_stage(
            info,
            mf,
            &mut live,
            verify || cfg!(debug_assertions),
            &CodegenFlags::default(),
            1,
        )?;
        if verify {
            verify::verify(mf, info.after).map_err(|error| BackendError::Invalid {
                after: info.name,
                error,
            })?;
        }
    }
    Ok(())
}

/// Before or after a stage, for a [`StageHook`].
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum When {
    Before,
    After,
}

/// Called with the function before and after every stage (`--print-after`, the
/// text round-trip test, the explorer page), with the source positions of its
/// instructions when the compile locates them (after a stage; see [`srcloc`]).
/// Before `isel` there is no machine function: the hook sees `isel` only after it.
pub type StageHook<'a> =
    &'a mut dyn FnMut(When, &'static StageInfo, &mir::MFunction, Option<&srcloc::InstLocs>);

/// [`compile_function_timed`], also giving the source position of every final
/// instruction when `locate` (see [`srcloc`]; the code is the same either way).
pub fn compile_function_located(
    m: &Module,
    fid: ir::FuncId,
    facts: &ModuleFacts,
    opts: &Options,
    times: Option<&mut StageTimes>,
    locate: bool,
) -> Result<(mir::MFunction, Option<srcloc::InstLocs>), BackendError> {
    compile_function_hooked(m, fid, facts, opts, times, locate, None)
}

/// [`compile_function_located`], calling `hook` around every stage.
pub fn compile_function_hooked(
    m: &Module,
    fid: ir::FuncId,
    facts: &ModuleFacts,
    opts: &Options,
    mut times: Option<&mut StageTimes>,
    locate: bool,
    mut hook: Option<StageHook<'_>>,
) -> Result<(mir::MFunction, Option<srcloc::InstLocs>), BackendError> {
    // The clock starts before isel, whose row is the selection's time.
    let mut clock = std::time::Instant::now();
    let (mut mf, locs) = isel::select_function_located(m, fid, facts)?;
    // The function before the last stage with its positions, when locating.
    let mut located = locate.then(|| (srcloc::code_copy(&mf), locs));
    let mut live = None;
    for info in stage_pipeline(opts.opt_level).filter(|s| opts.flags.runs(s.name)) {
        if info.name != "isel" {
            if let Some(h) = hook.as_deref_mut() {
                h(When::Before, info, &mf, None);
                clock = std::time::Instant::now();
            }
            apply_stage(
                info,
                &mut mf,
                &mut live,
                opts.verify || cfg!(debug_assertions),
                &opts.flags,
                if times.is_some() { 1 } else { opts.jobs },
            )?;
        }
        if let Some(t) = times.as_deref_mut() {
            t.add(info.name, clock.elapsed().as_secs_f64(), mir_insts(&mf));
        }
        if opts.verify {
            verify::verify(&mf, info.after).map_err(|error| BackendError::Invalid {
                after: info.name,
                error,
            })?;
        }
        if let Some((before, locs)) = &mut located {
            *locs = locs.follow(before, &mf);
            *before = srcloc::code_copy(&mf);
        }
        if let Some(h) = hook.as_deref_mut() {
            h(When::After, info, &mf, located.as_ref().map(|(_, l)| l));
        }
        clock = std::time::Instant::now();
    }
    Ok((mf, located.map(|(_, l)| l)))
}

/// Translates a whole module to assembly text.
pub fn emit_module(m: &Module, opts: &Options) -> Result<String, BackendError> {
    emit_module_timed(m, opts, None)
}

/// [`emit_module`], adding each stage's time (and the text emission's) to `times`.
pub fn emit_module_timed(
    m: &Module,
    opts: &Options,
    times: Option<&mut StageTimes>,
) -> Result<String, BackendError> {
    emit_module_annotated(m, opts, times, None)
}

/// [`emit_module_timed`], with `source`: each run of instructions from one source line
/// is preceded by a comment `# file:LINE: text` (as far as positions survive the
/// passes; see [`srcloc`]). The instructions are the same as without.
pub fn emit_module_annotated(
    m: &Module,
    opts: &Options,
    times: Option<&mut StageTimes>,
    source: Option<&srcloc::SourceLines<'_>>,
) -> Result<String, BackendError> {
    emit_module_hooked(m, opts, times, source, None)
}

/// [`emit_module_annotated`], calling `hook` around every stage of every function.
pub fn emit_module_hooked(
    m: &Module,
    opts: &Options,
    mut times: Option<&mut StageTimes>,
    source: Option<&srcloc::SourceLines<'_>>,
    mut hook: Option<StageHook<'_>>,
) -> Result<String, BackendError> {
    let facts = ModuleFacts::of(m);
    let global_names: Vec<String> = m
        .globals
        .iter()
        .map(|(_, g)| globals::global_symbol(&g.name))
        .collect();
    let global = |g: u32| global_names[g as usize].clone();
    let mut out = String::new();
    out.push_str("\t.option nopic\n");
    out.push_str(&globals::emit_globals(m));
    let defined: Vec<ir::FuncId> = m
        .funcs
        .iter()
        .filter(|(_, f)| !f.is_declaration())
        .map(|(fid, _)| fid)
        .collect();
    let in_function = |fid: ir::FuncId, e: BackendError| BackendError::InFunction {
        function: m.funcs[fid].name.clone(),
        error: Box::new(e),
    };
    if times.is_none() && hook.is_none() {
        // Nothing observes the stages: the functions are compiled at the same time
        // (and a function's blocks are scheduled on the threads when they are not).
        let size = |&fid: &ir::FuncId| m.funcs[fid].num_insts();
        let outer = ir::parallel::threads_for(&defined, opts.jobs, &size);
        let inner = Options {
            jobs: if outer > 1 { 1 } else { opts.jobs },
            ..opts.clone()
        };
        let texts = ir::parallel::map_in_order(&defined, opts.jobs, size, |&fid| {
            let (mf, locs) =
                compile_function_located(m, fid, &facts, &inner, None, source.is_some())
                    .map_err(|e| in_function(fid, e))?;
            let annotate = locs.as_ref().zip(source);
            Ok(emit::emit_function_annotated(
                &mf,
                fid.index(),
                &global,
                annotate,
            ))
        });
        for text in texts {
            out.push_str(&text?);
        }
        return Ok(out);
    }
    for fid in defined {
        let (mf, locs) = compile_function_hooked(
            m,
            fid,
            &facts,
            opts,
            times.as_deref_mut(),
            source.is_some(),
            match &mut hook {
                Some(h) => Some(&mut **h),
                None => None,
            },
        )
        .map_err(|e| in_function(fid, e))?;
        let clock = std::time::Instant::now();
        let annotate = locs.as_ref().zip(source);
        out.push_str(&emit::emit_function_annotated(
            &mf,
            fid.index(),
            &global,
            annotate,
        ));
        if let Some(t) = times.as_deref_mut() {
            t.add("emit", clock.elapsed().as_secs_f64(), mir_insts(&mf));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stage_verifies_on_a_module_with_calls_loops_and_floats() {
        let src = r#"
declare @putint(i32) -> void
declare @putfloat(f32) -> void

func @f(i32, f32) -> f32 {
bb0(%0: i32, %1: f32):
  %2 = alloc [i32; 4]
  jump bb1(0, %1)
bb1(%3: i32, %4: f32):
  %5 = gep %2, %3, 4
  store %3, %5
  %6 = sitofp %3
  %7 = fmul %4, %6
  %8 = add %3, 1
  %9 = slt %8, %0
  br %9, bb1(%8, %7), bb2
bb2:
  %10 = gep %2, 1, 4
  %11 = load i32, %10
  call @putint(%11)
  ret %7
}

func @main() -> i32 {
bb0:
  %0 = call @f(4, 1.5)
  call @putfloat(%0)
  ret 0
}
"#;
        let m = ir::parse_module(src).unwrap();
        for opt_level in [0, 1, 2] {
            let opts = Options {
                opt_level,
                verify: true,
                ..Options::default()
            };
            emit_module(&m, &opts).unwrap_or_else(|e| panic!("-O{opt_level}: {e}"));
        }
    }

    /// The -O2 assembly of `m` compiled on `jobs` threads.
    fn assembly_on(m: &Module, jobs: usize) -> String {
        let opts = Options {
            opt_level: 2,
            jobs,
            ..Options::default()
        };
        emit_module(m, &opts).unwrap()
    }

    #[test]
    fn the_assembly_does_not_depend_on_the_number_of_threads() {
        // Functions of different sizes, so the largest-first order differs from
        // the module's.
        let mut src = String::from("declare @putint(i32) -> void\n");
        for k in 0..7 {
            src.push_str(&format!("func @f{k}(i32) -> i32 {{\nbb0(%0: i32):\n"));
            let mut last = 0;
            for j in 0..(k * 5 % 11) {
                src.push_str(&format!("  %{} = mul %{last}, {}\n", j + 1, j + 3));
                last = j + 1;
            }
            src.push_str(&format!("  ret %{last}\n}}\n"));
        }
        src.push_str("func @main() -> i32 {\nbb0:\n");
        for k in 0..7 {
            src.push_str(&format!("  %{k} = call @f{k}({k})\n  call @putint(%{k})\n"));
        }
        src.push_str("  ret 0\n}\n");
        let m = ir::parse_module(&src).unwrap();
        let text = |jobs| assembly_on(&m, jobs);
        let one = text(1);
        for k in 0..7 {
            assert!(one.contains(&format!("f{k}:")), "f{k} is emitted");
        }
        for jobs in [2, 3, 8] {
            assert_eq!(text(jobs), one, "{jobs} threads");
        }
    }

    #[test]
    fn one_function_of_many_blocks_schedules_alike_on_any_number_of_threads() {
        // Sixty loops in a row, each with a body worth scheduling.
        let mut src = String::from("func @main(i32) -> i32 {\nbb0(%0: i32):\n  jump bb1(0, 0)\n");
        let mut v = 1;
        for k in 0..60 {
            let (h, x) = (2 * k + 1, 2 * k + 2);
            let (i, s) = (v, v + 1);
            src.push_str(&format!("bb{h}(%{i}: i32, %{s}: i32):\n"));
            let mut last = s;
            for j in 0..6 {
                let t = v + 2 + j;
                src.push_str(&format!("  %{t} = mul %{last}, %{i}\n"));
                last = t;
            }
            let (next, c) = (v + 8, v + 9);
            src.push_str(&format!(
                "  %{next} = add %{i}, 1\n  %{c} = slt %{next}, %0\n"
            ));
            src.push_str(&format!("  br %{c}, bb{h}(%{next}, %{last}), bb{x}\n"));
            src.push_str(&format!("bb{x}:\n  jump bb{}(0, %{last})\n", h + 2));
            v += 10;
        }
        src.push_str(&format!(
            "bb121(%{}: i32, %{}: i32):\n  ret %{}\n}}\n",
            v,
            v + 1,
            v + 1
        ));
        let m = ir::parse_module(&src).unwrap();
        let text = |jobs| assembly_on(&m, jobs);
        let one = text(1);
        assert_eq!(text(4), one);
    }

    #[test]
    fn error_texts_are_the_driver_messages() {
        let inner = BackendError::Internal("out of scratch registers".into());
        let e = BackendError::InFunction {
            function: "f".into(),
            error: Box::new(inner.clone()),
        };
        assert_eq!(
            e.to_string(),
            "in function f: internal: out of scratch registers"
        );
        assert_eq!(e.innermost(), &inner);
        let mut mf = mir::MFunction::new("g".into(), false);
        let b = mf.new_block();
        mf.layout.push(b);
        let error = verify::verify(&mf, verify::Stage::Virtual).expect_err("no terminator");
        let e = BackendError::Invalid {
            after: "isel",
            error,
        };
        assert!(
            e.to_string()
                .starts_with("after isel: machine IR of g is invalid at block 0 (Virtual): "),
            "{e}"
        );
        assert_eq!(
            BackendError::new("no such thing").to_string(),
            "no such thing"
        );
    }

    #[test]
    fn register_like_names() {
        for n in ["a0", "t6", "s11", "fs3", "x31", "zero", "ft11"] {
            assert!(is_register_name(n), "{n}");
        }
        for n in ["a8", "main", "s12", "foo", "t", "f", "x32", "ab"] {
            assert!(!is_register_name(n), "{n}");
        }
    }
}
