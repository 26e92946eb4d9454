//! Loads redundant across writes to other bytes of the same object.
//!
//! The hash GVN's memory state changes with every store to a base (a global or an
//! `alloc`), so `a[x]` loaded again after a store to `a[4][k]` is a new
//! expression even when the two cannot share a byte. Here, for each address
//! into a known base, the newest load or store of it is kept with the number of
//! writes to its base logged then; a load that misses the table is redundant
//! with that access when the memory epoch (unknown stores, calls writing
//! anything) is unchanged and every write to the base logged since provably
//! misses the bytes it reads. That is LLVM's GVN asking MemoryDependence for the
//! load's clobber, which walks back over stores that BasicAA's `aliasGEP` finds
//! disjoint, and GCC's FRE walking the virtual use-def chain with
//! `refs_may_alias_p`.
//!
//! Disjointness is the test of two offset windows in one object ([`crate::passes::memory::locmap::Span`]): the
//! constant offsets, the GCD of the variable indices' strides, and the value
//! ranges of those indices, as BasicAA bounds a variable index by its
//! `ConstantRange`. The ranges ([`Ranges`]) are solved only when a test needs
//! them: once per function and run, at the first pair that constant offsets and
//! strides alone cannot tell apart. A write whose address is unknown (a call, a
//! region between a block and its dominator) may touch any byte of its base,
//! and the check gives up past [`MAX_WRITES`] writes.

use super::memory::memory_base;
use super::{Scope, Undo};
use crate::analysis::ranges::Ranges;
use crate::passes::memory::locmap::disjoint_in_object;
use ir::analysis::ControlFlowGraph;
use ir::{Function, Type, Value};

/// Writes between an access and a later load that the check looks at.
pub(crate) const MAX_WRITES: usize = 64;

/// The newest access of an address: the value loaded or stored, the memory
/// epoch then, and how many writes to its base were logged then.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Recent {
    value: Value,
    epoch: u32,
    writes: usize,
}

/// A write to a base: the address written and its size, or `None` for any byte.
pub(crate) type Write = Option<(Value, i64)>;

/// The function's value ranges, solved on first use.
pub(crate) struct LazyRanges<'c> {
    cfg: &'c ControlFlowGraph,
    ranges: Option<Ranges>,
}

impl<'c> LazyRanges<'c> {
    pub(crate) fn new(cfg: &'c ControlFlowGraph) -> Self {
        LazyRanges { cfg, ranges: None }
    }

    /// The ranges of `f` as it is now. GVN's later rewrites replace values by
    /// equal ones, so the ranges stay true ([`Ranges::get`] of a value made
    /// since is unknown).
    fn get(&mut self, f: &Function) -> &Ranges {
        let cfg = self.cfg;
        self.ranges.get_or_insert_with(|| Ranges::compute(f, cfg))
    }
}

impl Scope {
    /// Logs a write to `base` (through `at` when known).
    pub(super) fn log_write(&mut self, base: Value, at: Write) {
        self.writes.entry(base).or_default().push(at);
        self.undo.push(Undo::Write(base));
    }

    /// Records a load or store of `value` (of type `ty`) at `ptr` as the newest
    /// access of that address, when its base is known.
    pub(super) fn note_access(&mut self, f: &Function, ty: Type, ptr: Value, value: Value) {
        let Some(base) = memory_base(f, ptr) else {
            return;
        };
        let new = Recent {
            value,
            epoch: self.epoch,
            writes: self.writes.get(&base).map_or(0, Vec::len),
        };
        let old = self.recent.insert((ty, ptr), new);
        self.undo.push(Undo::Recent((ty, ptr), old));
    }

    /// The value a load of `ty` at `ptr` reads, when the newest access of that
    /// address gave it and every write to the base since misses the load's bytes.
    pub(super) fn available_across_writes(
        &self,
        f: &Function,
        ty: Type,
        ptr: Value,
        ranges: &mut LazyRanges,
    ) -> Option<Value> {
        let base = memory_base(f, ptr)?;
        let recent = self.recent.get(&(ty, ptr))?;
        if recent.epoch != self.epoch {
            return None;
        }
        let log = self.writes.get(&base).map_or(&[][..], Vec::as_slice);
        let since = log.get(recent.writes..)?;
        if since.len() > MAX_WRITES {
            return None;
        }
        let size = i64::from(ty.size());
        for &w in since {
            let (at, at_size) = w?;
            // Offsets and strides first; the ranges only when they cannot tell.
            if !disjoint_in_object(f, None, (ptr, size), (at, at_size))
                && !disjoint_in_object(f, Some(ranges.get(f)), (ptr, size), (at, at_size))
            {
                return None;
            }
        }
        Some(recent.value)
    }
}
