//! The mem2reg pass: [`crate::ssa::cytron::mem2reg`] over every function (a no-op on
//! functions already in SSA form).

use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::{FunctionPass, Pass};
use ir::Function;

/// Promotes scalar stack slots to SSA values.
pub struct Mem2Reg;

impl Pass for Mem2Reg {
    fn name(&self) -> &'static str {
        "mem2reg"
    }
    fn description(&self) -> &'static str {
        "promote scalar allocs to SSA values (Cytron et al.)"
    }
    fn function_pass(&self) -> Option<&dyn FunctionPass> {
        Some(self)
    }
    /// Rewrites instructions only: no block or edge changes.
    fn preserves(&self) -> Preserved {
        Preserved::CFG.with_other_functions()
    }
}

impl FunctionPass for Mem2Reg {
    fn run_on(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
        crate::ssa::mem2reg(f)
    }
}
