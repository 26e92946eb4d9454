//! The mem2reg pass: [`crate::ssa::cytron::mem2reg`] over every function (a no-op on
//! functions already in SSA form).

use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::FunctionTransform;
use ir::Function;

/// Promotes scalar stack slots to SSA values.
pub struct Mem2Reg;

impl FunctionTransform for Mem2Reg {
    const NAME: &'static str = "mem2reg";
    const DESCRIPTION: &'static str = "promote scalar allocs to SSA values (Cytron et al.)";
    /// Rewrites instructions only: no block or edge changes.
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
        crate::ssa::mem2reg(f)
    }
}
