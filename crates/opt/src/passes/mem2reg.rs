//! The mem2reg pass: [`crate::ssa::cytron::mem2reg`] over every function (a no-op on
//! functions already in SSA form).

use crate::analysis::{AnalysisManager, Preserved};
use crate::pipeline::Pass;
use ir::Module;

/// Promotes scalar stack slots to SSA values.
pub struct Mem2Reg;

impl Pass for Mem2Reg {
    fn name(&self) -> &'static str {
        "mem2reg"
    }
    fn description(&self) -> &'static str {
        "promote scalar allocs to SSA values (Cytron et al.)"
    }
    fn run(&self, m: &mut Module) -> bool {
        super::each_function(m, crate::ssa::mem2reg)
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        am.each_function(m, |f, _| crate::ssa::mem2reg(f))
    }
    /// Rewrites instructions only: no block or edge changes.
    fn preserves(&self) -> Preserved {
        Preserved::CFG.with_other_functions()
    }
}
