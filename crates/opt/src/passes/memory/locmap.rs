//! Facts about the memory locations of one block (what a location holds, which
//! store to it nothing has read yet), for the passes that forward stores to loads
//! within a block: `memforward` (local arrays) and `globalforward` (globals). A
//! location is an object (an allocation, a global) plus a constant byte offset
//! and a size.

use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::hash::Hash;

/// A location: object, byte offset, size in bytes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) struct Loc<K> {
    pub obj: K,
    pub off: i64,
    pub size: i64,
}

/// The facts about one object: by byte offset, each with its location's size.
type Offsets<T> = BTreeMap<i64, Vec<(i64, T)>>;

/// Facts about locations of one block, indexed by object and offset so that
/// looking one up, or forgetting those that overlap a store, costs a logarithm and
/// not a scan: a block of `n` stores to one array is `O(n log n)`.
#[derive(Clone)]
pub(crate) struct LocMap<K, T> {
    /// object -> offset -> (size, fact), facts at one offset in insertion order.
    by_obj: FxHashMap<K, Offsets<T>>,
    /// The largest size recorded, bounding how far before an offset an overlapping
    /// location can start.
    max_size: i64,
}

impl<K: Copy + Eq + Hash, T: Copy> LocMap<K, T> {
    pub(crate) fn new() -> Self {
        LocMap {
            by_obj: FxHashMap::default(),
            max_size: 1,
        }
    }

    /// The facts recorded for exactly `loc`, oldest first.
    pub(crate) fn at(&self, loc: Loc<K>) -> impl Iterator<Item = T> + '_ {
        self.by_obj
            .get(&loc.obj)
            .and_then(|m| m.get(&loc.off))
            .into_iter()
            .flatten()
            .filter(move |(size, _)| *size == loc.size)
            .map(|&(_, t)| t)
    }

    pub(crate) fn push(&mut self, loc: Loc<K>, t: T) {
        self.max_size = self.max_size.max(loc.size);
        let m = self.by_obj.entry(loc.obj).or_default();
        m.entry(loc.off).or_default().push((loc.size, t));
    }

    /// Forgets every fact about a location overlapping `loc`.
    pub(crate) fn forget_overlapping(&mut self, loc: Loc<K>) {
        let Some(m) = self.by_obj.get_mut(&loc.obj) else {
            return;
        };
        let from = loc.off - self.max_size + 1;
        let offs: Vec<i64> = m.range(from..loc.off + loc.size).map(|(&o, _)| o).collect();
        for o in offs {
            let v = m.get_mut(&o).expect("listed");
            v.retain(|&(size, _)| o + size <= loc.off);
            if v.is_empty() {
                m.remove(&o);
            }
        }
    }

    /// Removes and returns the oldest fact about exactly `loc`.
    pub(crate) fn take(&mut self, loc: Loc<K>) -> Option<T> {
        let m = self.by_obj.get_mut(&loc.obj)?;
        let v = m.get_mut(&loc.off)?;
        let pos = v.iter().position(|&(size, _)| size == loc.size)?;
        let (_, t) = v.remove(pos);
        if v.is_empty() {
            m.remove(&loc.off);
        }
        Some(t)
    }

    /// Forgets every fact about a location that may overlap one of the `size`
    /// bytes at `start + stride * k` of `obj`, for any integer `k` (`stride > 0`).
    /// The facts at an offset whose distance from `start`, modulo `stride`,
    /// leaves room for neither access stay (the GCD test of LLVM's BasicAA on
    /// `gep`s with variable indices).
    pub(crate) fn forget_strided(&mut self, obj: K, start: i64, stride: i64, size: i64) {
        let Some(m) = self.by_obj.get_mut(&obj) else {
            return;
        };
        m.retain(|&o, v| {
            let d = (o - start).rem_euclid(stride);
            v.retain(|&(sz, _)| d >= size && stride - d >= sz);
            !v.is_empty()
        });
    }

    /// Forgets everything about object `a`.
    pub(crate) fn forget_object(&mut self, a: K) {
        self.by_obj.remove(&a);
    }

    /// Forgets everything.
    pub(crate) fn clear(&mut self) {
        self.by_obj.clear();
    }

    /// Removes and returns every fact.
    pub(crate) fn drain(&mut self) -> Vec<T> {
        let mut out = Vec::new();
        for (_, m) in self.by_obj.drain() {
            out.extend(m.into_values().flatten().map(|(_, t)| t));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{Loc, LocMap};

    #[test]
    fn loc_map_forgets_exactly_the_overlapping_locations() {
        let sig = ir::Signature {
            params: vec![],
            ret: ir::Type::Void,
            variadic: false,
        };
        let mut f = ir::Function::new("f", sig);
        let a = f.iconst(1);
        let b = f.iconst(2);
        let loc = |obj, off, size| Loc { obj, off, size };
        let mut m: LocMap<ir::Value, u32> = LocMap::new();
        m.push(loc(a, 0, 4), 1);
        m.push(loc(a, 4, 4), 2);
        m.push(loc(a, 8, 8), 3);
        m.push(loc(a, 16, 4), 4);
        m.push(loc(b, 4, 4), 5);
        // An 8-byte location at 4 overlaps [4, 8) and [8, 16), not [0, 4) or [16, 20).
        m.forget_overlapping(loc(a, 4, 8));
        assert_eq!(m.at(loc(a, 0, 4)).collect::<Vec<_>>(), [1]);
        assert_eq!(m.at(loc(a, 4, 4)).count(), 0);
        assert_eq!(m.at(loc(a, 8, 8)).count(), 0);
        assert_eq!(m.at(loc(a, 16, 4)).collect::<Vec<_>>(), [4]);
        assert_eq!(
            m.at(loc(b, 4, 4)).collect::<Vec<_>>(),
            [5],
            "another object"
        );
        // Same offset, another size: not the same location.
        assert_eq!(m.at(loc(a, 0, 8)).count(), 0);
        assert_eq!(m.take(loc(a, 0, 4)), Some(1));
        assert_eq!(m.take(loc(a, 0, 4)), None);
        m.forget_object(a);
        let mut rest = m.drain();
        rest.sort();
        assert_eq!(rest, [5]);
    }
}
