//! Array accesses that stay inside their array: the bytes an address designates,
//! for every value the loop counters it depends on take, lie within the global or
//! local array it points into. This is what lets a pass execute a load the program
//! might have skipped (if-conversion speculating a conditional arm's loads), as
//! LLVM's `isDereferenceableAndAlignedPointer` and `isSafeToSpeculativelyExecute`
//! answer it from object sizes and scalar evolution.
//!
//! The counters are those of rotated loops with a constant start and bound
//! ([`Counter::trip_count`]): such a counter takes exactly `init, init + step, ...`
//! up to its last value (a rotated loop's parameter is set only on entering the
//! header), anywhere it is used. An address is a chain of `gep`s from a global or an
//! `alloc` whose indices are constants, counters, and sums, differences and
//! products of them that do not wrap.

use super::scev::ScalarEvolution;
use super::{Counter, RotatedLoop};
use ir::{BinOp, Function, InstKind, Value, ValueDef};
use rustc_hash::FxHashMap;

/// Known ranges of loop counters, to tell which array accesses stay inside their
/// array.
pub struct Bounds<'s> {
    /// Counter parameter -> the values it takes, `[lo, hi]`.
    counters: FxHashMap<Value, (i64, i64)>,
    global_sizes: &'s [u64],
}

impl<'s> Bounds<'s> {
    /// The counters of the rotated loops `se` describes with a constant start and
    /// bound ([`Counter::trip_count`]).
    pub fn of(se: &mut ScalarEvolution, global_sizes: &'s [u64]) -> Self {
        let (f, cfg, loops) = (se.f, se.cfg, se.loops);
        let mut counters = FxHashMap::default();
        for (id, _) in loops.loops() {
            let Some(l) = RotatedLoop::of(f, cfg, loops, id) else {
                continue;
            };
            let Some(c) = Counter::of_scev(se, id, &l) else {
                continue;
            };
            let (Some(n), Some(init)) = (c.trip_count(), f.as_iconst(c.init)) else {
                continue;
            };
            let last = i64::from(init) + i64::from(c.step) * (i64::from(n) - 1);
            let (lo, hi) = (i64::from(init).min(last), i64::from(init).max(last));
            counters.insert(c.param, (lo, hi));
        }
        Bounds {
            counters,
            global_sizes,
        }
    }

    /// The values `v` takes, when it is a constant, a known counter, or sums and
    /// constant multiples of them.
    fn range(&self, f: &Function, v: Value, depth: u32) -> Option<(i64, i64)> {
        if let Some(c) = f.as_iconst(v) {
            return Some((i64::from(c), i64::from(c)));
        }
        if let Some(&r) = self.counters.get(&v) {
            return Some(r);
        }
        if depth == 0 {
            return None;
        }
        let InstKind::Binary { op, args: [a, b] } = *f.kind(f.def_inst(v)?) else {
            return None;
        };
        let (x, y) = (self.range(f, a, depth - 1)?, self.range(f, b, depth - 1)?);
        let r = match op {
            BinOp::Add => (x.0 + y.0, x.1 + y.1),
            BinOp::Sub => (x.0 - y.1, x.1 - y.0),
            BinOp::Mul => {
                let p = [x.0 * y.0, x.0 * y.1, x.1 * y.0, x.1 * y.1];
                (*p.iter().min()?, *p.iter().max()?)
            }
            _ => return None,
        };
        // Exact only while no intermediate wraps.
        let fits = |x: i64| i32::try_from(x).is_ok();
        (fits(r.0) && fits(r.1)).then_some(r)
    }

    /// Whether the `size` bytes at `ptr` lie inside the global or local array it
    /// points into, for every value of the counters it depends on.
    pub fn dereferenceable(&self, f: &Function, mut ptr: Value, size: u32) -> bool {
        let (mut lo, mut hi) = (0i64, 0i64);
        loop {
            if let Some(bytes) = super::deref::object_bytes(f, ptr, self.global_sizes) {
                return lo >= 0 && hi + i64::from(size) <= bytes;
            }
            match f.value_def(ptr) {
                ValueDef::Inst(i) => match *f.kind(i) {
                    InstKind::Gep {
                        base,
                        index,
                        stride,
                    } => {
                        let Some((a, b)) = self.range(f, index, 4) else {
                            return false;
                        };
                        lo += a * i64::from(stride);
                        hi += b * i64::from(stride);
                        ptr = base;
                    }
                    _ => return false,
                },
                _ => return false,
            }
        }
    }
}
