//! A module: the whole program, functions (defined or declared) and globals.

use crate::entities::{FuncId, GlobalId};
use crate::function::{Function, Signature};
use crate::types::Type;
use cranelift_entity::PrimaryMap;

/// The initial contents of a global.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum GlobalInit {
    /// All zero (goes to `.bss`).
    Zero,
    /// The bit patterns of the first `words.len()` elements (i32 or f32 bits); the
    /// remaining elements are zero, so large zero tails cost nothing.
    Words(Vec<u32>),
    /// Raw bytes (string data for `putf`), zero padded to the global's length.
    Bytes(Vec<u8>),
}

/// A global variable: `len` elements of type `elem` (a scalar has `len == 1`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct GlobalData {
    pub name: String,
    pub elem: Type,
    pub len: u32,
    pub init: GlobalInit,
}

impl GlobalData {
    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.elem.size() as u64 * self.len as u64
    }

    /// The bit pattern of element `i` (0 past the explicit initialiser).
    pub fn word(&self, i: usize) -> u32 {
        match &self.init {
            GlobalInit::Words(w) => w.get(i).copied().unwrap_or(0),
            GlobalInit::Bytes(b) => b.get(i).copied().unwrap_or(0) as u32,
            GlobalInit::Zero => 0,
        }
    }
}

/// A whole program.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub funcs: PrimaryMap<FuncId, Function>,
    pub globals: PrimaryMap<GlobalId, GlobalData>,
}

impl Module {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a function (a declaration until it gets blocks).
    pub fn add_function(&mut self, func: Function) -> FuncId {
        self.funcs.push(func)
    }

    /// Declares a function by name and signature.
    pub fn declare_function(&mut self, name: &str, sig: Signature) -> FuncId {
        self.funcs.push(Function::new(name, sig))
    }

    /// Adds a global.
    pub fn add_global(&mut self, data: GlobalData) -> GlobalId {
        self.globals.push(data)
    }

    /// Finds a function by name.
    pub fn func_by_name(&self, name: &str) -> Option<FuncId> {
        self.funcs
            .iter()
            .find(|(_, f)| f.name == name)
            .map(|(id, _)| id)
    }

    /// Finds a global by name.
    pub fn global_by_name(&self, name: &str) -> Option<GlobalId> {
        self.globals
            .iter()
            .find(|(_, g)| g.name == name)
            .map(|(id, _)| id)
    }
}
