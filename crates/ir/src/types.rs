//! Value types. Scalars only: arrays exist as the element type and length of an
//! `alloc` or a global, never as SSA values.

use std::fmt;

/// The type of an SSA value (or of memory elements, for `I8` string data).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum Type {
    /// No value: the result type of calls to void functions and of stores.
    #[default]
    Void,
    /// A byte; only as the element type of string globals (putf formats).
    I8,
    /// 32-bit two's complement integer; arithmetic wraps.
    I32,
    /// IEEE-754 single.
    F32,
    /// 64-bit two's complement integer; arithmetic wraps. Created only by optimisation
    /// passes, and only as an SSA temporary or block parameter, or as the `size_t`
    /// argument of a C library function (`memset`); never in memory or in a defined
    /// function's signature.
    I64,
    /// A 64-bit address.
    Ptr,
}

impl Type {
    /// Size in bytes of a value of this type in memory.
    pub fn size(self) -> u32 {
        match self {
            Type::Void => 0,
            Type::I8 => 1,
            Type::I32 | Type::F32 => 4,
            Type::I64 | Type::Ptr => 8,
        }
    }

    /// The textual IR name of the type.
    pub fn name(self) -> &'static str {
        match self {
            Type::Void => "void",
            Type::I8 => "i8",
            Type::I32 => "i32",
            Type::F32 => "f32",
            Type::I64 => "i64",
            Type::Ptr => "ptr",
        }
    }

    /// Parses a textual type name.
    pub fn from_name(s: &str) -> Option<Type> {
        Some(match s {
            "void" => Type::Void,
            "i8" => Type::I8,
            "i32" => Type::I32,
            "f32" => Type::F32,
            "i64" => Type::I64,
            "ptr" => Type::Ptr,
            _ => return None,
        })
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
