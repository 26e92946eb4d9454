//! Array sections: the addresses a load or store touches over the iterations of the
//! counted loops around it, described as a box (one interval per loop counter), and
//! whether one section covers another.
//!
//! These are the regular section descriptors of Havlak and Kennedy ("An
//! implementation of interprocedural bounded regular section analysis", IEEE TPDS
//! 1991) with the must/may distinction of array data-flow analysis (Tu and Padua,
//! "Automatic array privatization", LCPC 1993; Maydan, Amarasinghe and Lam, "Array
//! data-flow analysis and its use in array privatization", POPL 1993): a store's
//! *must-write* section is written completely every time its loop nest runs, a
//! load's *may-read* section contains every address it can read. A read whose
//! may-read section lies inside a must-write section that is complete before the
//! read is not *upward exposed*: it sees a value written earlier in the same
//! iteration of the enclosing loop.
//!
//! An address is decomposed along its `gep` chain into an object (a global, an
//! `alloc` or a parameter), a constant byte offset and terms `index * stride`.
//! An index that is the counter of a counted loop inside the enclosing loop (a
//! [`Counter`] stepping by one, tested after the step with `slt`) ranges over the
//! interval `[init, bound)` of that loop (exact integers: such a counter never
//! wraps); any other index is a fixed value, which a covering section must share.
//! Bounds are `value + constant`, compared by substituting a counter's own
//! interval: a value whose evolution is a counter's plus one (a bound `i + 1` of
//! an inner loop starting after the outer counter `i`, however it is computed,
//! [`ScalarEvolution::constant_difference`]) is that counter plus one, exactly
//! (the counter's test keeps `i + 1` below its bound).
//!
//! A counter ranges over `[init, bound)` only when its loop is entered only if
//! `init < bound`: a rotated loop runs once before its first test, so without such
//! a guard it would run with `init` even when `init >= bound`. Either the scalar
//! evolution finds `init < bound` whenever the loop is entered (constants, or the
//! constant ranges the dominating branches give them,
//! [`ScalarEvolution::compare_at_entry`]), or a dominating branch decides it: one
//! of its edges is the only way to the loop, and the branch's condition there is a
//! signed comparison of values with the evolutions of `init` and `bound` that
//! says `init < bound` (`slt init, bound`, `sgt bound, init`, or `sge init,
//! bound` on the false edge). For a must-write section every loop of the
//! nest also has to run every time its parent iteration does (or be skipped by that
//! guard, when its interval is empty), leave only through its counter's test, and
//! the store has to run on every iteration of its innermost loop.

use super::scev::{ExprId, ScalarEvolution};
use super::{Counter, LoopForest, LoopId, RotatedLoop};
use ir::analysis::{walk_geps, DominatorTree};
use ir::{Block, CmpOp, Function, Inst, InstKind, Value, ValueDef};
use rustc_hash::FxHashMap;

/// How many dominators up from a preheader a guard is looked for.
const MAX_GUARD_DISTANCE: usize = 16;

/// An exact integer `atom + offset` (`offset` alone without an atom).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Bound {
    pub atom: Option<Value>,
    pub offset: i64,
}

impl Bound {
    fn plus(self, k: i64) -> Bound {
        Bound {
            atom: self.atom,
            offset: self.offset + k,
        }
    }
}

/// One dimension of a section: a loop counter scaled by `stride` bytes, over the
/// counter's half-open interval `[lo, hi)`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Dim {
    pub counter: Value,
    pub stride: i64,
    pub lo: Bound,
    pub hi: Bound,
}

/// The addresses `object + offset + sum(fixed value * stride) + sum(counter *
/// stride)` for every counter value in its interval.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Section {
    pub object: Value,
    pub offset: i64,
    /// Index values that are not counters, with their strides, sorted.
    pub fixed: Vec<(Value, i64)>,
    pub dims: Vec<Dim>,
}

/// A store's must-write section and where its loop nest is entered: the section is
/// complete at every point, outside the nest, that one of `entries` dominates.
#[derive(Clone, Debug)]
pub struct MustWrite {
    pub section: Section,
    /// Blocks from which the nest's outermost loop runs fully whenever its interval
    /// is not empty (its preheader, its guard); the store's own block when it is in
    /// no loop of the nest.
    pub entries: Vec<Block>,
    /// The outermost loop of the nest.
    pub nest: Option<LoopId>,
    pub store: Inst,
}

/// A counted loop: its counter's interval and how it is entered.
#[derive(Clone, Debug)]
struct Counted {
    id: LoopId,
    preheader: Block,
    lo: Bound,
    hi: Bound,
    /// Whether the loop is entered only when `lo < hi`, so the counter takes
    /// exactly the values of `[lo, hi)`.
    exact: bool,
    /// A dominating branch on `lo < hi` whose edge where it holds leads to the
    /// preheader.
    guard: Option<Guard>,
    /// Whether the counter's test is the loop's only exit.
    single_exit: bool,
}

/// A branch deciding whether a counted loop runs: the loop is entered only
/// through `toward`, one of `block`'s successors, where `init < bound` holds; on
/// the other edge it fails.
#[derive(Clone, Copy, Debug)]
struct Guard {
    block: Block,
    toward: Block,
}

/// The sections of the accesses inside one loop (`within`).
pub struct Sections<'a> {
    f: &'a Function,
    dt: &'a DominatorTree,
    loops: &'a LoopForest,
    within: LoopId,
    /// The counted loops inside `within`, by counter.
    counted: FxHashMap<Value, Counted>,
    /// Their counters, by loop.
    counter_of: FxHashMap<LoopId, Value>,
}

impl<'a> Sections<'a> {
    /// The counted loops nested in `within` (not `within` itself), as `se`
    /// describes them.
    pub fn new(se: &mut ScalarEvolution<'a>, within: LoopId) -> Self {
        let (f, cfg, dt, loops) = (se.f, se.cfg, se.dt, se.loops);
        let mut counters = Vec::new();
        for (id, _) in loops.loops() {
            if id == within || !loops.nested_in(id, within) {
                continue;
            }
            if let Some(rl) = RotatedLoop::of(f, cfg, loops, id) {
                if let Some(c) = Counter::of_scev(se, id, &rl) {
                    if c.step == 1 && c.tests_next && !c.inclusive {
                        counters.push((id, rl, c));
                    }
                }
            }
        }
        let params: Vec<Value> = counters.iter().map(|(_, _, c)| c.param).collect();
        let mut counted = FxHashMap::default();
        let mut counter_of = FxHashMap::default();
        for (id, rl, c) in counters {
            let lo = bound_of(se, &params, c.init);
            let hi = bound_of(se, &params, c.bound);
            let (init, bound) = (se.get(c.init), se.get(c.bound));
            let guard = find_guard(se, rl.preheader, init, bound);
            let nonempty =
                se.compare_at_entry(id, init, bound, 0) == Some(std::cmp::Ordering::Less);
            let single_exit =
                loops.get(id).blocks.iter().all(|&b| {
                    b == rl.latch || f.successors(b).iter().all(|&s| loops.contains(id, s))
                });
            counter_of.insert(id, c.param);
            counted.insert(
                c.param,
                Counted {
                    id,
                    preheader: rl.preheader,
                    lo,
                    hi,
                    exact: nonempty || guard.is_some(),
                    guard,
                    single_exit,
                },
            );
        }
        Sections {
            f,
            dt,
            loops,
            within,
            counted,
            counter_of,
        }
    }

    /// The counted loop whose counter is `v`, if its interval is exact.
    fn exact(&self, v: Value) -> Option<&Counted> {
        self.counted.get(&v).filter(|c| c.exact)
    }

    /// The section a load or store may touch, over all the values its counters
    /// take. Counters of loops that may run with an empty interval count as fixed
    /// values (a covering section must have the same value there).
    pub fn may_touch(&self, access: Inst) -> Option<Section> {
        let (object, offset, terms) = decompose(self.f, access_pointer(self.f, access)?)?;
        let mut fixed = Vec::new();
        let mut dims = Vec::new();
        for (v, stride) in terms {
            match self.exact(v) {
                Some(c) => dims.push(Dim {
                    counter: v,
                    stride,
                    lo: c.lo,
                    hi: c.hi,
                }),
                None => fixed.push((v, stride)),
            }
        }
        fixed.sort();
        Some(Section {
            object,
            offset,
            fixed,
            dims,
        })
    }

    /// The section `store` writes completely each time its loop nest (the loops
    /// between `within` and the store) runs, if it has one.
    pub fn must_write(&self, store: Inst) -> Option<MustWrite> {
        let f = self.f;
        let block = f.layout.inst_block(store)?;
        // The nest, innermost first.
        let mut nest = Vec::new();
        let mut l = self.loops.innermost(block);
        while let Some(id) = l {
            if id == self.within {
                break;
            }
            nest.push(id);
            l = self.loops.get(id).parent;
        }
        if l != Some(self.within) {
            return None;
        }
        let (object, offset, terms) = decompose(f, access_pointer(f, store)?)?;
        let outermost = nest.last().copied();
        let inside_nest = |v: Value| {
            outermost.is_some_and(|o| f.value_block(v).is_some_and(|b| self.loops.contains(o, b)))
        };
        // Every loop of the nest contributes its counter, with a stride of its own,
        // and nothing else in the address changes within the nest.
        let mut fixed = Vec::new();
        let mut dims = Vec::new();
        for (v, stride) in terms {
            match self.counted.get(&v) {
                Some(c) if nest.contains(&c.id) => dims.push(Dim {
                    counter: v,
                    stride,
                    lo: c.lo,
                    hi: c.hi,
                }),
                _ if inside_nest(v) => return None,
                _ => fixed.push((v, stride)),
            }
        }
        fixed.sort();
        let mut strides: Vec<i64> = dims.iter().map(|d| d.stride).collect();
        strides.sort_unstable();
        strides.dedup();
        if dims.len() != nest.len() || strides.len() != dims.len() {
            return None;
        }
        // From the innermost loop out: the store runs on every iteration of its
        // loop, and each loop runs fully on every iteration of its parent.
        let mut entries = vec![block];
        for &id in &nest {
            let c = &self.counted[self.counter_of.get(&id)?];
            if !c.single_exit
                || [c.lo.atom, c.hi.atom]
                    .into_iter()
                    .flatten()
                    .any(inside_nest)
            {
                return None;
            }
            let latch = self.loops.get(id).latches[0];
            if !entries.iter().any(|&e| self.dt.dominates(e, latch)) {
                return None;
            }
            let parent = self.loops.get(id).parent?;
            entries = self.entries_of(c, parent);
        }
        Some(MustWrite {
            section: Section {
                object,
                offset,
                fixed,
                dims,
            },
            entries,
            nest: outermost,
            store,
        })
    }

    /// The blocks of `parent` from which loop `c` runs fully whenever its interval
    /// is not empty: its preheader, and the guard whose true edge jumps straight to
    /// it (a false guard means an empty interval).
    fn entries_of(&self, c: &Counted, parent: LoopId) -> Vec<Block> {
        let f = self.f;
        let mut entries = vec![c.preheader];
        let Some(g) = c.guard.filter(|g| self.loops.contains(parent, g.block)) else {
            return entries;
        };
        // Through at most a few blocks that only jump on.
        let mut b = g.toward;
        for _ in 0..4 {
            if b == c.preheader {
                entries.push(g.block);
                break;
            }
            match f.terminator(b).map(|t| f.kind(t)) {
                Some(InstKind::Jump { dest }) if f.layout.block_insts(b).count() == 1 => {
                    b = dest.block
                }
                _ => break,
            }
        }
        entries
    }

    /// Whether the must-write section `w` is complete when `access` runs: the
    /// access is outside the nest, in the loop of one of the nest's entries (or a
    /// loop inside it) and dominated by that entry, so the nest ran in the same
    /// iteration; a store in no loop of the nest precedes the access in its block.
    pub fn complete_before(&self, w: &MustWrite, access: Inst) -> bool {
        let f = self.f;
        let Some(b) = f.layout.inst_block(access) else {
            return false;
        };
        if w.nest.is_some_and(|n| self.loops.contains(n, b)) {
            return false;
        }
        w.entries.iter().any(|&e| {
            let same_iteration = match (self.loops.innermost(e), self.loops.innermost(b)) {
                (Some(outer), Some(inner)) => inner == outer || self.loops.nested_in(inner, outer),
                _ => false,
            };
            if !same_iteration {
                return false;
            }
            if e == b {
                // Only the store's own block can be an entry holding the access.
                return w.nest.is_none()
                    && f.layout
                        .block_insts(b)
                        .take_while(|&i| i != access)
                        .any(|i| i == w.store);
            }
            self.dt.dominates(e, b)
        })
    }

    /// Whether every address of `r` is in `w`: each counter of `r` ranges inside a
    /// dimension of `w` with its stride; each fixed index of `r` is one of `w`'s,
    /// or provably inside a dimension of `w` with its stride; and the dimensions
    /// of `w` left over take constant positions that make up the difference of
    /// the constant offsets (`b[k][7]` in a section of `b[i][j]`, `j` in `[0, 8)`).
    pub fn covers(&self, w: &Section, r: &Section) -> bool {
        if w.object != r.object {
            return false;
        }
        let mut used = vec![false; w.dims.len()];
        let take = |used: &mut Vec<bool>, stride: i64, lo: Bound, hi: Bound| {
            let k = w.dims.iter().enumerate().position(|(k, wd)| {
                !used[k]
                    && wd.stride == stride
                    && self.at_least(lo, wd.lo, 4)
                    && self.at_most(hi, wd.hi, 4)
            });
            k.map(|k| used[k] = true).is_some()
        };
        for rd in &r.dims {
            if !take(&mut used, rd.stride, rd.lo, rd.hi) {
                return false;
            }
        }
        let mut fixed = w.fixed.clone();
        for &(v, stride) in &r.fixed {
            if let Some(k) = fixed.iter().position(|&x| x == (v, stride)) {
                fixed.remove(k);
                continue;
            }
            let at = |offset| Bound {
                atom: Some(v),
                offset,
            };
            if !take(&mut used, stride, at(0), at(1)) {
                return false;
            }
        }
        if !fixed.is_empty() {
            return false;
        }
        let mut rest: Vec<&Dim> = (0..w.dims.len())
            .filter(|&k| !used[k])
            .map(|k| &w.dims[k])
            .collect();
        rest.sort_by_key(|d| std::cmp::Reverse(d.stride));
        let mut diff = r.offset - w.offset;
        for d in rest {
            let c = diff.div_euclid(d.stride);
            let at = |offset| Bound { atom: None, offset };
            if !(self.at_least(at(c), d.lo, 4) && self.at_most(at(c + 1), d.hi, 4)) {
                return false;
            }
            diff -= c * d.stride;
        }
        diff == 0
    }

    /// Whether `a >= b` for every value the counters in `a` take.
    fn at_least(&self, a: Bound, b: Bound, depth: u32) -> bool {
        if a.atom == b.atom {
            return a.offset >= b.offset;
        }
        match a.atom.and_then(|x| self.exact(x)) {
            Some(c) if depth > 0 => self.at_least(c.lo.plus(a.offset), b, depth - 1),
            _ => false,
        }
    }

    /// Whether `a <= b` for every value the counters in `a` take.
    fn at_most(&self, a: Bound, b: Bound, depth: u32) -> bool {
        if a.atom == b.atom {
            return a.offset <= b.offset;
        }
        match a.atom.and_then(|x| self.exact(x)) {
            // x <= hi - 1
            Some(c) if depth > 0 => self.at_most(c.hi.plus(a.offset - 1), b, depth - 1),
            _ => false,
        }
    }
}

/// The pointer a load or store accesses.
fn access_pointer(f: &Function, i: Inst) -> Option<Value> {
    match f.kind(i) {
        InstKind::Load { ptr, .. } | InstKind::Store { ptr, .. } => Some(*ptr),
        _ => None,
    }
}

/// Index values with their strides (`index * stride` bytes each).
type Terms = Vec<(Value, i64)>;

/// `p` as object + constant offset + sum of `index * stride` along its `gep`s; the
/// object is a global, an `alloc` or a parameter of the function.
fn decompose(f: &Function, p: Value) -> Option<(Value, i64, Terms)> {
    let mut offset = 0i64;
    let mut terms: Terms = Vec::new();
    let p = walk_geps(f, p, |index, stride| match f.as_iconst(index) {
        Some(k) => offset += i64::from(k) * stride,
        None => match terms.iter_mut().find(|(v, _)| *v == index) {
            Some(t) => t.1 += stride,
            None => terms.push((index, stride)),
        },
    });
    let object = match f.value_def(p) {
        ValueDef::Global(_) => true,
        ValueDef::Param(b, _) => b == f.entry_block(),
        ValueDef::Inst(i) => matches!(f.kind(i), InstKind::Alloc { .. }),
        _ => false,
    };
    terms.retain(|&(_, s)| s != 0);
    object.then_some((p, offset, terms))
}

/// `v` as an exact bound: a constant, `x + 1` for one of `counters` (counters
/// that step by one and continue while `x + 1 < bound`, so `x + 1` never wraps)
/// when `v` evolves as `x` plus one, or `v` itself.
fn bound_of(se: &mut ScalarEvolution, counters: &[Value], v: Value) -> Bound {
    if let Some(k) = se.f.as_iconst(v) {
        return Bound {
            atom: None,
            offset: i64::from(k),
        };
    }
    let plus_one = counters
        .iter()
        .find(|&&x| se.constant_difference(v, x) == Some(1));
    match plus_one {
        Some(&x) => Bound {
            atom: Some(x),
            offset: 1,
        },
        None => Bound {
            atom: Some(v),
            offset: 0,
        },
    }
}

/// A branch dominating `preheader` that decides whether the loop runs: one of
/// its edges is the only way to `preheader`, and its condition says there that
/// `init < bound` (the evolutions of the counter's first value and bound).
fn find_guard(
    se: &mut ScalarEvolution,
    preheader: Block,
    init: ExprId,
    bound: ExprId,
) -> Option<Guard> {
    let (f, cfg, dt) = (se.f, se.cfg, se.dt);
    let mut b = preheader;
    // A guard is near its loop: a bounded walk keeps the analysis linear.
    for _ in 0..MAX_GUARD_DISTANCE {
        let g = dt.idom(b)?;
        if let Some(&InstKind::Br {
            cond,
            ref then_dest,
            ref else_dest,
        }) = f.terminator(g).map(|t| f.kind(t))
        {
            let (t, e) = (then_dest.block, else_dest.block);
            for (toward, holds) in [(t, true), (e, false)] {
                if t != e
                    && dt.dominates(toward, preheader)
                    && cfg.preds(toward) == [g]
                    && says_below(se, cond, holds, init, bound)
                {
                    return Some(Guard { block: g, toward });
                }
            }
        }
        b = g;
    }
    None
}

/// Whether the branch condition `cond`, where it `holds` (or where it fails),
/// says `a < b` for values of evolutions `a` and `b`: it is a signed comparison
/// of two such values.
fn says_below(se: &mut ScalarEvolution, cond: Value, holds: bool, a: ExprId, b: ExprId) -> bool {
    let f = se.f;
    let Some(&InstKind::Cmp { op, args: [x, y] }) = f.def_inst(cond).map(|i| f.kind(i)) else {
        return false;
    };
    let op = if holds { Some(op) } else { op.inverse() };
    let (lo, hi) = match op {
        Some(CmpOp::Slt) => (x, y),
        Some(CmpOp::Sgt) => (y, x),
        _ => return false,
    };
    se.get(lo) == a && se.get(hi) == b
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::analysis::ControlFlowGraph;
    use ir::EntityRef;

    /// A repeat loop `bb1` (`%1 < 3`) around a nest writing `b[i][j] = 1` for `i` in
    /// `[0, n)` (guarded by `0 < n`) and `j` in `[0, 8)`, then a loop over `k` in
    /// `[1, n)` (guarded by `1 < n`) loading `b[k][7]`, `b[k][8]`, `b[k + 1][0]`
    /// and `c[k][0]`; `%0` is n, `b` has rows of 8 ints.
    const NEST: &str = r#"
global @b: [i32; 64] = zeroinit
global @c: [i32; 64] = zeroinit

func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0)
bb1(%1: i32):
  %2 = slt 0, %0
  br %2, bb2, bb6
bb2:
  jump bb3(0)
bb3(%3: i32):
  jump bb4(0)
bb4(%4: i32):
  %5 = gep @b, %3, 32
  %6 = gep %5, %4, 4
  store 1, %6
  %7 = add %4, 1
  %8 = slt %7, 8
  br %8, bb4(%7), bb5
bb5:
  %9 = add %3, 1
  %10 = slt %9, %0
  br %10, bb3(%9), bb6
bb6:
  %20 = slt 1, %0
  br %20, bb7, bb9
bb7:
  jump bb8(1)
bb8(%21: i32):
  %22 = gep @b, %21, 32
  %23 = gep %22, 7, 4
  %24 = load i32, %23
  %25 = gep %22, 8, 4
  %26 = load i32, %25
  %27 = add %21, 1
  %28 = gep @b, %27, 32
  %29 = load i32, %28
  %30 = gep @c, %21, 32
  %31 = load i32, %30
  %32 = slt %27, %0
  br %32, bb8(%27), bb9
bb9:
  %11 = add %1, 1
  %12 = slt %11, 3
  br %12, bb1(%11), bb10
bb10:
  ret 0
}
"#;

    /// The loads of `f` (of `src`) in order, its store, and the sections of the
    /// loop at `bb1`.
    fn with_sections(src: &str, check: impl Fn(&Sections, &Function, Inst, &[Inst])) {
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().next().unwrap();
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let loops = LoopForest::compute(f, &cfg, &dt);
        let within = loops
            .loops()
            .find(|(_, l)| l.header.index() == 1)
            .map(|(id, _)| id)
            .unwrap();
        let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops).without_ranges();
        let s = Sections::new(&mut se, within);
        let mut loads = Vec::new();
        let mut store = None;
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                match f.kind(i) {
                    InstKind::Load { .. } => loads.push(i),
                    InstKind::Store { .. } => store = Some(i),
                    _ => {}
                }
            }
        }
        check(&s, f, store.unwrap(), &loads);
    }

    #[test]
    fn the_nest_writes_its_whole_box() {
        with_sections(NEST, |s, f, store, _| {
            let w = s.must_write(store).expect("a must-write section");
            let n = f.block_params(f.entry_block())[0];
            let dim = |stride| w.section.dims.iter().find(|d| d.stride == stride).unwrap();
            assert_eq!(w.section.dims.len(), 2);
            let zero = Bound {
                atom: None,
                offset: 0,
            };
            assert_eq!(
                (dim(32).lo, dim(32).hi),
                (
                    zero,
                    Bound {
                        atom: Some(n),
                        offset: 0
                    }
                )
            );
            assert_eq!(
                (dim(4).lo, dim(4).hi),
                (
                    zero,
                    Bound {
                        atom: None,
                        offset: 8
                    }
                )
            );
            assert!(w.nest.is_some());
        });
    }

    #[test]
    fn reads_inside_the_box_are_covered_and_reads_outside_are_not() {
        with_sections(NEST, |s, _, store, loads| {
            let w = s.must_write(store).unwrap();
            let covered: Vec<bool> = loads
                .iter()
                .map(|&l| {
                    let r = s.may_touch(l).unwrap();
                    s.covers(&w.section, &r) && s.complete_before(&w, l)
                })
                .collect();
            // b[k][7]: inside; b[k][8]: column 8 is past the box (it is b[k + 1][0]
            // in memory, but the box's own description has no column 8);
            // b[k + 1][0] with k + 1 up to n: row n is outside; c[k][0]: another
            // array.
            assert_eq!(covered, [true, false, false, false]);
        });
    }

    #[test]
    fn a_read_counter_needs_its_guard() {
        // Without `1 < n` before it, the reading loop runs once with k = 1 even
        // when n <= 1, and b[1][7] is then not written: k is not exact, and the
        // read is not covered.
        let src = NEST.replace("br %20, bb7, bb9", "jump bb7");
        with_sections(&src, |s, _, store, loads| {
            let w = s.must_write(store).unwrap();
            let r = s.may_touch(loads[0]).unwrap();
            assert!(r.dims.is_empty() && r.fixed.len() == 1, "{r:?}");
            assert!(!s.covers(&w.section, &r));
        });
    }
}
