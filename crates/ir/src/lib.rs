//! The SSA intermediate representation of sysyc.
//!
//! Basic blocks take parameters instead of phi nodes (as in Koopa IR and Cranelift);
//! branches pass arguments. Entities are `u32` indices into arenas owned by a
//! [`Function`] (values, instructions, blocks) or [`Module`] (functions, globals).
//! Instruction data ([`InstKind`]) is kept apart from instruction order ([`Layout`]),
//! and every non-constant value knows its users, so [`Function::replace_all_uses`] is
//! one call.

pub mod analysis;
pub mod builder;
pub mod entities;
pub mod function;
pub mod inst;
pub mod layout;
pub mod module;
pub mod parallel;
pub mod text;
pub mod types;
mod user_index;
pub mod verifier;

pub use builder::FuncBuilder;
/// Re-exported so users can build side tables keyed by entities.
pub use cranelift_entity::{EntityRef, PrimaryMap, SecondaryMap};
pub use entities::{Block, FuncId, GlobalId, Inst, Value};
pub use function::{BlockData, Function, InstData, Signature, ValueData, ValueDef};
pub use inst::{BinOp, BlockArgs, BlockCall, CmpOp, InstKind, UnOp};
pub use layout::Layout;
pub use module::{GlobalData, GlobalInit, Module};
pub use text::{parse_module, print_function, print_module, ParseError};
pub use types::Type;
pub use verifier::{verify_function, verify_module, VerifierError, VerifierErrors};
