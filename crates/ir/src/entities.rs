//! Entity references: small copyable `u32` indices into the arenas owned by a
//! [`Function`](crate::Function) or [`Module`](crate::Module), in the style of
//! Cranelift's `ir/entities.rs`. They print as the textual IR spells raw indices
//! (`v3`, `bb2`); the printer renumbers them for display (`%3`, `bb2`).

use cranelift_entity::entity_impl;

/// An SSA value: an instruction result, a block parameter, a constant or a global address.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(u32);
entity_impl!(Value, "v");

/// An instruction in a function's data-flow graph.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inst(u32);
entity_impl!(Inst, "i");

/// A basic block. Blocks take parameters instead of phi nodes.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(u32);
entity_impl!(Block, "bb");

/// A function (defined or only declared) of a module.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(u32);
entity_impl!(FuncId, "fn");

/// A global variable of a module.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(u32);
entity_impl!(GlobalId, "g");
