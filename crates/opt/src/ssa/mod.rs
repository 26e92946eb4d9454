//! SSA construction from memory form. Lowering's Braun et al. builder lives in the
//! `lower` crate (it needs the AST); here is the other classic: Cytron et al.'s
//! mem2reg over `alloc`/`load`/`store`, plus the removal of trivial block parameters
//! both constructions share, and the SSA repair that code duplication needs.

pub mod cytron;
pub mod trivial;
pub mod update;

pub use cytron::{count_block_params, mem2reg};
pub use trivial::{remove_trivial_params, remove_trivial_params_with};
