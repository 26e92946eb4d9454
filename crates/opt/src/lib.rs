//! The middle end of sysyc: analyses over the SSA IR, SSA construction from memory form
//! (mem2reg, after Cytron et al. 1991), and the optimisation passes with the pass
//! manager that runs them by name.
//!
//! - [`analysis`]: dominance frontiers, post-dominators, control dependence, loops,
//!   function side effects (the CFG and dominator tree are [`ir::analysis`]'s).
//! - [`ssa`]: [`mem2reg`] and trivial block-parameter removal.
//! - [`fold`]: constant folding with the target's exact semantics.
//! - [`passes`]: one file per pass.
//! - [`mod@pipeline`]: the pass registry, [`run_passes`] and the `-O` pipelines.

pub mod analysis;
pub mod cfg_edit;
pub mod fold;
pub mod loop_copy;
pub mod passes;
pub mod pipeline;
pub mod ssa;

pub use pipeline::{
    lookup, module_insts, pass_names, pipeline, run_pass_list, run_passes, unknown_pass,
    FunctionPass, Pass, PassOptions, PassTiming,
};
pub use ssa::cytron::{count_block_params, mem2reg};
