//! Interprocedural transformations: inlining (whole and partial), memoisation,
//! specialisation, interprocedural constants and value ranges, dead arguments, dead functions and
//! read-only globals (LLVM's `Transforms/IPO`).

pub mod constglobals;
pub mod deadargs;
pub mod globaldce;
pub mod inline;
pub mod inline_cost;
pub mod ipconst;
pub mod ipvrp;
pub mod memoize;
pub mod partial_inline;
pub mod specialize;
