//! Dereferenceable addresses: whether an access at an address stays inside the
//! object the address points into, so that a pass may execute it where the
//! program might not (LICM hoisting a load out of a conditional path).
//!
//! An address is a root plus `gep` offsets. Each index is a constant or a value
//! whose range ([`Ranges`]) is known, which bounds the byte offsets from the root
//! to `[lo, hi]`. The root's known size is:
//!
//! - a global's or local `alloc`'s size;
//! - for a pointer parameter, the bytes that accesses already made through it
//!   prove inside its object. This is the deduction of LLVM's Attributor
//!   (`AADereferenceable`: an argument's known dereferenceable bytes from the
//!   constant-offset accesses in the must-be-executed context of its uses):
//!   a SysY array argument designates an element of an array object (an index
//!   out of range is undefined, as in C11 6.5.6p8), so the parameter `p` lies
//!   inside its object; when a load or store of `s` bytes at `p + k` (`k >= 0`)
//!   has executed, `p + k + s` is at most the object's end, and every byte of
//!   `[p, p + k + s)` lies inside the object. An access has executed at a point
//!   when its block dominates that point.

use super::ranges::{Range, Ranges};
use ir::analysis::{address_root, walk_geps, DominatorTree};
use ir::{Block, EntityRef, Function, InstKind, Module, Value, ValueDef};

/// The byte sizes of `m`'s globals, by global index (the `global_sizes` the
/// analyses below take).
pub fn global_sizes(m: &Module) -> Vec<u64> {
    m.globals.values().map(|g| g.size()).collect()
}

/// The size in bytes of the object `root` names, when it is a global
/// (`global_sizes` by index) or a local `alloc`.
pub fn object_bytes(f: &Function, root: Value, global_sizes: &[u64]) -> Option<i64> {
    match f.value_def(root) {
        ValueDef::Global(g) => global_sizes
            .get(g.index())
            .and_then(|&s| i64::try_from(s).ok()),
        ValueDef::Inst(i) => match *f.kind(i) {
            InstKind::Alloc { elem, len } => Some(i64::from(elem.size()) * i64::from(len)),
            _ => None,
        },
        _ => None,
    }
}

/// The accesses through pointer parameters at constant offsets: what each proves
/// dereferenceable, and where.
pub struct ParamAccesses {
    /// (parameter position, bytes from the parameter to the access's end, block).
    proofs: Vec<(usize, i64, Block)>,
}

impl ParamAccesses {
    /// Every load and store of `f` at a constant, non-negative offset from a
    /// parameter.
    pub fn of(f: &Function) -> Self {
        let mut proofs = Vec::new();
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                let (ptr, ty) = match *f.kind(i) {
                    InstKind::Load { ty, ptr } => (ptr, ty),
                    InstKind::Store { ptr, value } => (ptr, f.value_type(value)),
                    _ => continue,
                };
                let (root, offset) = address_root(f, ptr);
                let (Some(k), Some(offset)) = (param_position(f, root), offset) else {
                    continue;
                };
                if offset >= 0 {
                    proofs.push((k, offset + i64::from(ty.size()), b));
                }
            }
        }
        ParamAccesses { proofs }
    }

    /// The bytes from parameter `k` that lie inside its object whenever control
    /// reaches block `at` (0 when nothing proves any).
    pub fn extent(&self, k: usize, at: Block, dt: &DominatorTree) -> i64 {
        self.proofs
            .iter()
            .filter(|&&(p, _, b)| p == k && dt.dominates(b, at))
            .map(|&(_, end, _)| end)
            .max()
            .unwrap_or(0)
    }
}

/// The position of `root` among `f`'s parameters, if it is one.
fn param_position(f: &Function, root: Value) -> Option<usize> {
    match f.value_def(root) {
        ValueDef::Param(b, k) if b == f.entry_block() => Some(k as usize),
        _ => None,
    }
}

/// Where an address points: its root and the byte offsets from it it may be at.
pub struct Extent {
    pub root: Value,
    pub lo: i64,
    pub hi: i64,
}

/// The root of `ptr` and the bounds of its byte offset from it, when every index
/// on the way is a constant or has a range in `ranges`.
pub fn extent(f: &Function, ptr: Value, ranges: Option<&Ranges>) -> Option<Extent> {
    let (mut lo, mut hi, mut known) = (0i64, 0i64, true);
    let root = walk_geps(f, ptr, |index, stride| {
        let Some(r) = ranges
            .and_then(|r| r.of(f, index))
            .or_else(|| f.as_iconst(index).map(Range::constant))
        else {
            known = false;
            return;
        };
        let (a, b) = (i64::from(r.lo) * stride, i64::from(r.hi) * stride);
        lo += a.min(b);
        hi += a.max(b);
    });
    known.then_some(Extent { root, lo, hi })
}

/// Whether a `size`-byte access at `ptr` made at block `at` stays inside its
/// object: a global or local `alloc`, or a parameter that accesses dominating
/// `at` ([`ParamAccesses`]) prove large enough, at every offset the indices allow.
pub fn dereferenceable(f: &Function, ptr: Value, size: u32, at: Block, ctx: &DerefContext) -> bool {
    let Some(e) = extent(f, ptr, ctx.ranges) else {
        return false;
    };
    let bytes = match f.value_def(e.root) {
        ValueDef::Param(..) => {
            param_position(f, e.root).map(|k| ctx.accesses.extent(k, at, ctx.dt))
        }
        _ => object_bytes(f, e.root, ctx.global_sizes),
    };
    let Some(bytes) = bytes else {
        return false;
    };
    e.lo >= 0 && e.hi + i64::from(size) <= bytes
}

/// What [`dereferenceable`] needs to know of the function and module.
pub struct DerefContext<'a> {
    /// Byte sizes of the module's globals, by index.
    pub global_sizes: &'a [u64],
    pub accesses: &'a ParamAccesses,
    pub dt: &'a DominatorTree,
    pub ranges: Option<&'a Ranges>,
}
