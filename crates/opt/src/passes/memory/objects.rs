//! The memory objects that names other than a function's own `alloc`s reach: a
//! global, or the array a pointer parameter points into. `globalforward` and
//! `dse` see memory this way.
//!
//! Two globals never share memory; a parameter's array may be any global or
//! another parameter's array (the caller may pass the same one twice, or a
//! pointer into the middle of a global array), but never a local `alloc` of this
//! call. Within one object, distinct constant offsets are distinct memory (`p[1]`
//! and `p[2]`), as LLVM's BasicAA tells apart two constant offsets from one base.

use ir::analysis::address_root;
use ir::{Function, GlobalId, InstKind, Value, ValueDef};

/// Memory other names may reach: a global, or the array a pointer parameter
/// (an entry block parameter) points into.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub(crate) enum Object {
    Global(GlobalId),
    Param(Value),
}

impl Object {
    /// Whether `self` and another object `o` may be the same memory: only
    /// distinct globals are known apart.
    pub(crate) fn may_share(self, o: Object) -> bool {
        self == o || matches!(self, Object::Param(_)) || matches!(o, Object::Param(_))
    }
}

/// Where a pointer points.
pub(crate) enum Target {
    /// Into an object, at a constant byte offset or an unknown one.
    Object(Object, Option<i64>),
    /// Into a local `alloc`: never a global or a parameter's array.
    Local,
    /// Anywhere.
    Unknown,
}

/// Where `p` points in `f`.
pub(crate) fn target(f: &Function, p: Value) -> Target {
    let (root, off) = address_root(f, p);
    match f.value_def(root) {
        ValueDef::Global(g) => Target::Object(Object::Global(g), off),
        ValueDef::Param(b, _) if b == f.entry_block() => Target::Object(Object::Param(root), off),
        ValueDef::Inst(i) if matches!(f.kind(i), InstKind::Alloc { .. }) => Target::Local,
        _ => Target::Unknown,
    }
}
