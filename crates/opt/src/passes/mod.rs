//! The optimisation passes, one per file. Each file documents what the pass does, the
//! algorithm and its source, and has tests of what it must and must not do. Each
//! exposes a function over one function (`run(&mut Function, ...) -> bool`) and a unit
//! struct implementing [`Pass`](crate::Pass) for the registry.

pub mod affine;
pub mod balance;
pub mod cgvn;
pub mod checkpromote;
pub mod closedform;
pub mod codehoist;
pub mod condprop;
pub mod constglobals;
pub mod constoffset;
pub mod cunroll;
pub mod dce;
pub mod deadargs;
pub mod divrem;
pub mod exitsink;
pub mod fabs;
pub mod finalvalue;
pub mod globaldce;
pub mod globalforward;
pub mod gvn;
pub mod hoistloops;
pub mod idemloop;
pub mod ifconvert;
pub mod indexsplit;
pub mod inline;
pub mod instcombine;
pub mod invselect;
pub mod ipconst;
pub mod jumpthread;
pub mod lastiter;
pub mod lftr;
pub mod licm;
pub mod linearize;
pub mod loadpre;
pub mod localconst;
pub mod locmap;
pub mod loopdelete;
pub mod loopidiom;
pub mod looppeel;
pub mod looprotate;
pub mod loopsimplify;
pub mod loopsplit;
pub mod mem2reg;
pub mod memforward;
pub mod memoize;
pub mod mergeargs;
pub mod mve;
pub mod partial_inline;
pub mod phiopt;
pub mod polyiv;
pub mod postinc;
pub mod pow2div;
pub mod pre;
pub mod predcom;
pub mod promote;
pub mod ptrwalk;
pub mod rangechain;
pub mod reassoc;
pub mod rtunroll;
pub mod sccp;
pub mod silentstore;
pub mod simplifycfg;
pub mod sink;
pub mod specialize;
pub mod sroa;
pub mod storesink;
pub mod strength;
pub mod swp;
pub mod tailrec;
pub mod unroll;
pub mod unrolljam;
pub mod unswitch;
pub mod vrp;

#[cfg(test)]
pub(crate) mod testutil;

use ir::{Block, Function, Inst, InstKind, Module, SecondaryMap, Value};

/// Whether instruction `u` loads from or stores to the address `p` (and does not
/// store `p` itself).
pub(crate) fn accesses_through(f: &Function, u: Inst, p: Value) -> bool {
    match f.kind(u) {
        InstKind::Load { ptr, .. } => *ptr == p,
        InstKind::Store { value, ptr } => *ptr == p && *value != p,
        _ => false,
    }
}

/// `slt a, b`, inserted before `before`; its result.
pub(crate) fn slt_before(f: &mut Function, before: Inst, a: Value, b: Value) -> Value {
    let c = f.insert_inst_before(
        before,
        InstKind::Cmp {
            op: ir::CmpOp::Slt,
            args: [a, b],
        },
        ir::Type::I32,
    );
    f.inst_result(c).expect("cmp has a result")
}

/// How many edges enter each block of `f` (a branch with both arms to one block
/// counts twice), from every block of the layout.
pub(crate) fn pred_counts(f: &Function) -> SecondaryMap<Block, u32> {
    let mut preds = f.block_map::<u32>();
    for b in f.layout.blocks() {
        for s in f.successors(b) {
            preds[s] += 1;
        }
    }
    preds
}

/// A loop pass's standalone entry point (for tests and other passes; the pipeline
/// gives it the manager's analyses): `body` on `f` with its CFG, dominator tree
/// and loops computed afresh; 0 for a declaration.
pub(crate) fn with_loops(
    f: &mut Function,
    body: impl FnOnce(
        &mut Function,
        &ir::analysis::ControlFlowGraph,
        &ir::analysis::DominatorTree,
        &crate::analysis::LoopForest,
    ) -> usize,
) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let mut fa = crate::analysis::FunctionAnalyses::default();
    let (cfg, dt, loops) = fa.loops(f);
    body(f, cfg, dt, loops)
}

/// Runs `pass` over every defined function of `m`; whether any changed.
pub(crate) fn each_function(m: &mut Module, mut pass: impl FnMut(&mut Function) -> bool) -> bool {
    let mut changed = false;
    for f in m.funcs.values_mut() {
        if !f.is_declaration() {
            changed |= pass(f);
        }
    }
    changed
}
