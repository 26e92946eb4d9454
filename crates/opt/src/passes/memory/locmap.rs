//! Facts about the memory locations of one block (what a location holds, which
//! store to it nothing has read yet), for the passes that forward stores to loads
//! within a block: `memforward` (local arrays) and `globalforward` (globals). A
//! location is an object (an allocation, a global) plus a constant byte offset
//! and a size.

use crate::analysis::ranges::Ranges;
use ir::{Function, InstKind, Value};
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

/// Where in its object an access at a variable offset may fall: at byte offsets
/// `start + stride * k` for integers `k` (only `start` when `stride` is 0), within
/// `[lo, hi]`, each access `size` bytes long. The offsets are what a chain of
/// `gep`s gives: constant indices add to `start`; variable ones make `stride`
/// the GCD of their strides (the GCD test of LLVM's BasicAA), and their value
/// ranges bound `[lo, hi]` (as BasicAA bounds a variable index by its
/// `ConstantRange`).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) struct Span {
    pub lo: i64,
    pub hi: i64,
    pub start: i64,
    pub stride: i64,
    pub size: i64,
}

/// A bound on offsets no object reaches, yet far from overflowing `i64`.
pub(crate) const UNBOUNDED: i64 = 1 << 48;

impl Span {
    /// The `size` bytes at `off`.
    pub(crate) fn exact(off: i64, size: i64) -> Span {
        Span {
            lo: off,
            hi: off,
            start: off,
            stride: 0,
            size,
        }
    }

    /// Whether an access of `self` and one of `o` may share a byte: their
    /// windows overlap, and the distance between two of their offsets, a
    /// multiple of the GCD of the strides away from `o.start - self.start`, can
    /// be less than the size of the access it follows.
    pub(crate) fn may_overlap(self, o: Span) -> bool {
        if self.hi + self.size <= o.lo || o.hi + o.size <= self.lo {
            return false;
        }
        let g = gcd(self.stride, o.stride);
        if g == 0 {
            return true;
        }
        let d = (o.start - self.start).rem_euclid(g);
        d < self.size || g - d < o.size
    }
}

/// The value every execution gives the `i32` index `v`, if one: a constant, or
/// a value whose range is a single number.
pub(crate) fn single_value(f: &Function, ranges: Option<&Ranges>, v: Value) -> Option<i64> {
    match f.as_iconst(v) {
        Some(k) => Some(i64::from(k)),
        None => ranges?
            .get(v)
            .filter(|r| r.lo == r.hi)
            .map(|r| i64::from(r.lo)),
    }
}

/// The object a pointer `p` points into (the root of its `gep`s) and the byte
/// offsets from it an access of `size` bytes through `p` may have ([`Span`]):
/// constant indices add to the start, each variable one makes the stride the
/// GCD of the strides so far and widens the window by its value range times its
/// stride (unbounded when its range is unknown, or without `ranges`).
pub(crate) fn span_of(
    f: &Function,
    ranges: Option<&Ranges>,
    mut p: Value,
    size: i64,
) -> (Value, Span) {
    let (mut start, mut stride) = (0i64, 0i64);
    let (mut lo, mut hi) = (0i64, 0i64);
    let mut bounded = true;
    while let Some(i) = f.def_inst(p) {
        let InstKind::Gep {
            base,
            index,
            stride: s,
        } = *f.kind(i)
        else {
            break;
        };
        let s = i64::from(s);
        match single_value(f, ranges, index) {
            Some(k) => {
                start += k * s;
                lo += k * s;
                hi += k * s;
            }
            None => {
                stride = gcd(stride, s);
                match ranges.and_then(|r| r.get(index)) {
                    Some(r) => {
                        lo += i64::from(r.lo) * s;
                        hi += i64::from(r.hi) * s;
                    }
                    None => bounded = false,
                }
            }
        }
        p = base;
    }
    if !bounded {
        (lo, hi) = (-UNBOUNDED, UNBOUNDED);
    }
    let span = Span {
        lo,
        hi,
        start,
        stride,
        size,
    };
    (p, span)
}

/// Whether an access of `a_size` bytes at `a` and one of `b_size` bytes at `b`
/// provably share no byte: both point into the same object and their windows
/// ([`span_of`]) cannot meet. Different roots answer `false` (not proven).
pub(crate) fn disjoint_in_object(
    f: &Function,
    ranges: Option<&Ranges>,
    (a, a_size): (Value, i64),
    (b, b_size): (Value, i64),
) -> bool {
    let (ra, sa) = span_of(f, ranges, a, a_size);
    let (rb, sb) = span_of(f, ranges, b, b_size);
    ra == rb && !sa.may_overlap(sb)
}

/// The greatest common divisor (`gcd(0, b) = |b|`).
pub(crate) fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
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

    /// Forgets every fact about a location that an access of `span` in `obj`
    /// may overlap ([`Span::may_overlap`]).
    pub(crate) fn forget_span(&mut self, obj: K, span: Span) {
        let Some(m) = self.by_obj.get_mut(&obj) else {
            return;
        };
        m.retain(|&o, v| {
            v.retain(|&(sz, _)| !span.may_overlap(Span::exact(o, sz)));
            !v.is_empty()
        });
    }

    /// Forgets everything about object `a`.
    pub(crate) fn forget_object(&mut self, a: K) {
        self.by_obj.remove(&a);
    }

    /// Every fact with its location.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Loc<K>, T)> + '_ {
        self.by_obj.iter().flat_map(|(&obj, m)| {
            m.iter().flat_map(move |(&off, v)| {
                v.iter().map(move |&(size, t)| (Loc { obj, off, size }, t))
            })
        })
    }

    /// Keeps the facts about the objects `keep` accepts.
    pub(crate) fn retain_objects(&mut self, keep: impl Fn(K) -> bool) {
        self.by_obj.retain(|&k, _| keep(k));
    }

    /// Forgets everything.
    pub(crate) fn clear(&mut self) {
        self.by_obj.clear();
    }

    /// How many facts there are.
    pub(crate) fn len(&self) -> usize {
        self.by_obj
            .values()
            .flat_map(|m| m.values())
            .map(Vec::len)
            .sum()
    }

    /// Keeps only the facts `other` records too (the same fact about the same
    /// location): what holds at a join is what holds on every edge into it.
    pub(crate) fn keep_common(&mut self, other: &LocMap<K, T>)
    where
        T: PartialEq,
    {
        self.by_obj.retain(|&obj, m| {
            m.retain(|&off, v| {
                v.retain(|&(size, t)| other.at(Loc { obj, off, size }).any(|u| u == t));
                !v.is_empty()
            });
            !m.is_empty()
        });
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
    use super::{Loc, LocMap, Span, UNBOUNDED};

    #[test]
    fn keep_common_keeps_the_facts_both_maps_record() {
        let sig = ir::Signature {
            params: vec![],
            ret: ir::Type::Void,
            variadic: false,
        };
        let mut f = ir::Function::new("f", sig);
        let a = f.iconst(1);
        let loc = |off, size| Loc { obj: a, off, size };
        let mut left: LocMap<ir::Value, u32> = LocMap::new();
        let mut right: LocMap<ir::Value, u32> = LocMap::new();
        left.push(loc(0, 4), 1); // in both
        right.push(loc(0, 4), 1);
        left.push(loc(4, 4), 2); // another fact on the right
        right.push(loc(4, 4), 3);
        left.push(loc(8, 4), 4); // another size on the right
        right.push(loc(8, 8), 4);
        left.push(loc(16, 4), 5); // only on the left
        assert_eq!(left.len(), 4);
        left.keep_common(&right);
        assert_eq!(left.len(), 1);
        assert_eq!(left.at(loc(0, 4)).collect::<Vec<_>>(), [1]);
    }

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
        // Offsets 4 + 8k of 4 bytes, within [8, 24]: [12, 16) and [20, 24) only
        // (28 is past the window, 8 and 16 between the strides).
        m.push(loc(a, 8, 4), 6);
        m.push(loc(a, 12, 4), 7);
        m.push(loc(a, 16, 4), 8);
        m.push(loc(a, 20, 4), 9);
        m.push(loc(a, 28, 4), 10);
        let span = Span {
            lo: 8,
            hi: 24,
            start: 4,
            stride: 8,
            size: 4,
        };
        m.forget_span(a, span);
        for (off, kept) in [(8, true), (12, false), (20, false), (28, true)] {
            assert_eq!(m.at(loc(a, off, 4)).count() == 1, kept, "{off}");
        }
        // 8 bytes at 4 + 8k, unbounded, overlap every 4-byte location.
        let wide = Span {
            lo: -UNBOUNDED,
            hi: UNBOUNDED,
            size: 8,
            ..span
        };
        m.forget_span(a, wide);
        assert_eq!(m.at(loc(a, 8, 4)).count(), 0);
        m.forget_object(a);
        let mut rest = m.drain();
        rest.sort();
        assert_eq!(rest, [5]);
    }
}
