//! The optimisation passes, one per file, grouped by what they are about (as
//! LLVM's `Transforms/{Scalar,IPO,...}`):
//!
//! - [`scalar`]: constants, dead code, local algebra, the control-flow graph;
//! - [`value_numbering`]: redundancy elimination (GVN, complete GVN, affine
//!   relations, PRE) and facts from conditions and ranges;
//! - [`loops`]: every loop transformation;
//! - [`memory`]: forwarding, promotion and elimination of loads and stores;
//! - [`interprocedural`]: inlining, memoisation, specialisation and other
//!   transformations across functions.
//!
//! Each file documents what the pass does, the algorithm and its source, and has
//! tests of what it must and must not do. Each exposes a function over one
//! function (`run(&mut Function, ...)`) and a unit struct implementing
//! [`Pass`](crate::Pass) for the registry ([`crate::pipeline`]); a function pass
//! also implements [`FunctionPass`](crate::pipeline::FunctionPass) and takes its
//! analyses from the manager. The helpers below are shared by passes of several
//! groups.

pub mod interprocedural;
pub mod loops;
pub mod memory;
pub mod scalar;
pub mod value_numbering;

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
