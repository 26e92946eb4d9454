//! Dead store elimination across blocks for globals and parameters' arrays: a
//! store is removed when on every path from it the location is written again
//! before anything may read it.
//!
//! The analysis is liveness of memory locations, the backward "may" data-flow
//! problem dual to live variables (Aho, Lam, Sethi and Ullman, "Compilers",
//! 9.2.5; the dead-store problem of Knoop, Rüthing and Steffen's "Partial Dead
//! Code Elimination", PLDI 1994, restricted to stores and full deadness), over the
//! locations LLVM's DSE and GCC's `tree-ssa-dse` reason about through their memory
//! SSA: a location is live at a point when some path from there reads it before
//! a store that certainly overwrites it. The locations are those the function
//! stores to at a constant offset of a global or of a parameter's array
//! ([`super::objects`]); a store to one that is not live just after the store is
//! dead. `globalforward` removes such stores within a block; this pass finds
//! those overwritten on every path out of a diamond (`g = x; if (g > M) g = M;
//! g = y;`: both stores before `g = y` go) or around a loop.
//!
//! What reads a location, conservatively:
//! - a load at a constant offset reads the locations of its object that overlap
//!   it and every location of the objects that may share its memory (a load
//!   through a parameter may read any global); at an unknown offset, every
//!   location of its object too; through a pointer of unknown origin, everything;
//! - a call reads what its callee's mod/ref summary ([`ModRef`]) says it may
//!   read: named globals, the objects its pointer arguments point into, any
//!   global, or anything;
//! - the end of the function reads everything (globals and the caller's arrays
//!   outlive the call): every location is live where a block has no successor.
//!
//! Only a store of the same bytes kills a location (a store at an unknown offset
//! or through an unknown pointer kills nothing). The problem is solved by
//! [`crate::analysis::dataflow::solve`] on per-block gen and kill sets; a
//! function with more locations times blocks than [`MAX_BITS`] is left alone.

use super::dselocal;
use super::locmap::Loc as LocOf;
use super::objects::{target, Object, Target};
use crate::analysis::dataflow::{solve, Direction, Problem};
use crate::analysis::{AnalysisManager, ModRef, Preserved};
use crate::passes::loops::loopidiom::memset_of;
use crate::pipeline::Pass;
use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, Inst, InstKind, Module, SecondaryMap, Type, Value};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::collections::BTreeMap;

/// The pass.
pub struct Dse;

impl Pass for Dse {
    fn name(&self) -> &'static str {
        "dse"
    }
    fn description(&self) -> &'static str {
        "remove stores overwritten on every path before a read (globals, parameters' and local arrays)"
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let modref = am.modref(m);
        let memset = memset_of(m);
        am.each_function(m, |f, fa| {
            let mut removed = 0;
            if dselocal::has_candidates(f) {
                let (cfg, _, _, ranges) = fa.loops_and_ranges(f);
                removed += dselocal::run(f, cfg, ranges, memset);
            }
            removed += run(f, fa.cfg(f), &modref);
            removed > 0
        })
    }
    /// Removes stores only.
    fn preserves(&self) -> Preserved {
        Preserved::CFG.with_other_functions()
    }
}

/// Functions whose locations times blocks exceed this many bits are skipped,
/// which bounds the memory and time of the data-flow problem.
pub const MAX_BITS: usize = 1 << 22;

type Loc = LocOf<Object>;

/// Removes the dead stores of `f`; returns how many.
pub fn run(f: &mut Function, cfg: &ControlFlowGraph, modref: &ModRef) -> usize {
    let locs = Locations::of(f);
    if locs.len() == 0 || locs.len().saturating_mul(cfg.rpo().len()) > MAX_BITS {
        return 0;
    }
    let effects = Effects::of(f, cfg, &locs, modref);
    let solution = solve(f, cfg, &effects.live);
    let mut dead = Vec::new();
    for &b in cfg.rpo() {
        let mut live = solution.at_end[b].clone();
        for &(i, ref e) in effects.by_block[b].iter().rev() {
            match e {
                Effect::Store(k) => {
                    if !live.contains(*k) {
                        dead.push(i);
                    }
                    live.remove(*k);
                }
                Effect::Read(r) => locs.add_reads(r, &mut live),
            }
        }
    }
    for &i in &dead {
        f.remove_inst(i);
    }
    dead.len()
}

/// A set of locations (or of bytes, for [`dselocal`]), by index.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(super) struct Bits(Vec<u64>);

impl Bits {
    pub(super) fn empty(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn full(n: usize) -> Bits {
        let mut b = Bits::empty(n);
        for k in 0..n {
            b.insert(k);
        }
        b
    }
    pub(super) fn insert(&mut self, k: usize) {
        self.0[k / 64] |= 1 << (k % 64);
    }
    pub(super) fn remove(&mut self, k: usize) {
        self.0[k / 64] &= !(1 << (k % 64));
    }
    fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
    pub(super) fn contains(&self, k: usize) -> bool {
        self.0[k / 64] & (1 << (k % 64)) != 0
    }
    pub(super) fn union_with(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    /// `self` minus `o`.
    pub(super) fn difference_with(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a &= !b;
        }
    }
}

/// The locations `f` stores to at a constant offset of an object, numbered in
/// program order, with the sets the reads of each object reach.
struct Locations {
    locs: Vec<Loc>,
    index: FxHashMap<(Object, i64, i64), usize>,
    /// Each object's locations, sorted by offset.
    by_object: BTreeMap<Object, Vec<usize>>,
    /// Every location of each object.
    of_object: BTreeMap<Object, Bits>,
    /// Per parameter's array with locations: those of every global and of the
    /// other parameters' arrays (the memory it may share).
    sharing: BTreeMap<Object, Bits>,
    globals: Bits,
    params: Bits,
    all: Bits,
    /// The largest location, in bytes.
    max_size: i64,
}

impl Locations {
    fn of(f: &Function) -> Locations {
        let mut locs = Vec::new();
        let mut index = FxHashMap::default();
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                let InstKind::Store { value, ptr } = *f.kind(i) else {
                    continue;
                };
                if let Target::Object(obj, Some(off)) = target(f, ptr) {
                    let size = i64::from(f.value_type(value).size());
                    index.entry((obj, off, size)).or_insert_with(|| {
                        locs.push(Loc { obj, off, size });
                        locs.len() - 1
                    });
                }
            }
        }
        let n = locs.len();
        let mut by_object: BTreeMap<Object, Vec<usize>> = BTreeMap::new();
        let mut of_object: BTreeMap<Object, Bits> = BTreeMap::new();
        let (mut globals, mut params) = (Bits::empty(n), Bits::empty(n));
        for (k, l) in locs.iter().enumerate() {
            by_object.entry(l.obj).or_default().push(k);
            of_object
                .entry(l.obj)
                .or_insert_with(|| Bits::empty(n))
                .insert(k);
            match l.obj {
                Object::Global(_) => globals.insert(k),
                Object::Param(_) => params.insert(k),
            }
        }
        for ks in by_object.values_mut() {
            ks.sort_by_key(|&k| locs[k].off);
        }
        let max_size = locs.iter().map(|l| l.size).max().unwrap_or(0);
        let mut sharing = BTreeMap::new();
        for (&obj, own) in &of_object {
            if let Object::Param(_) = obj {
                let mut others = params.clone();
                others.difference_with(own);
                others.union_with(&globals);
                sharing.insert(obj, others);
            }
        }
        Locations {
            sharing,
            all: Bits::full(n),
            locs,
            index,
            by_object,
            of_object,
            globals,
            params,
            max_size,
        }
    }

    fn len(&self) -> usize {
        self.locs.len()
    }

    /// Adds to `r` the locations of objects other than `obj` that may share its
    /// memory: every parameter's array for a global; for a parameter's array,
    /// every global and the other parameters' arrays.
    fn add_sharing(&self, obj: Object, r: &mut Reads) {
        match obj {
            // Most functions store through no parameter.
            Object::Global(_) if self.params.is_empty() => {}
            Object::Global(_) => r.sets.push(Set::Params),
            Object::Param(_) => r.sets.push(Set::Sharing(obj)),
        }
    }

    /// Adds to `r` what a read of `size` bytes at `off` in `obj` may read.
    fn add_exact(&self, obj: Object, off: i64, size: i64, r: &mut Reads) {
        self.add_sharing(obj, r);
        let Some(ks) = self.by_object.get(&obj) else {
            return;
        };
        let first = ks.partition_point(|&k| self.locs[k].off + self.max_size <= off);
        for &k in &ks[first..] {
            let l = self.locs[k];
            if l.off >= off + size {
                break;
            }
            if l.off + l.size > off {
                r.locs.push(k);
            }
        }
    }

    /// Adds to `r` what a read anywhere in `obj` may read.
    fn add_object(&self, obj: Object, r: &mut Reads) {
        self.add_sharing(obj, r);
        r.sets.push(Set::Object(obj));
    }

    /// Adds to `r` what a read anywhere from pointer `p` on may read.
    fn add_pointee(&self, f: &Function, p: Value, r: &mut Reads) {
        match target(f, p) {
            Target::Local => {}
            Target::Unknown => r.sets.push(Set::All),
            Target::Object(obj, _) => self.add_object(obj, r),
        }
    }

    /// Adds the locations `r` may read to `live`.
    fn add_reads(&self, r: &Reads, live: &mut Bits) {
        for s in &r.sets {
            let set = match s {
                Set::All => Some(&self.all),
                Set::Globals => Some(&self.globals),
                Set::Params => Some(&self.params),
                Set::Object(o) => self.of_object.get(o),
                Set::Sharing(o) => Some(self.sharing.get(o).unwrap_or(&self.all)),
            };
            if let Some(set) = set {
                live.union_with(set);
            }
        }
        for &k in &r.locs {
            live.insert(k);
        }
    }
}

/// A set of tracked locations named without building it.
#[derive(Clone, Copy)]
enum Set {
    All,
    Globals,
    Params,
    /// Every location of an object.
    Object(Object),
    /// What a parameter's array may share ([`Locations::sharing`]; all
    /// locations when it has none of its own).
    Sharing(Object),
}

/// What a read may read: some sets and single locations.
#[derive(Clone, Default)]
struct Reads {
    sets: SmallVec<[Set; 2]>,
    locs: SmallVec<[usize; 2]>,
}

/// What one instruction does to the tracked locations.
#[derive(Clone)]
enum Effect {
    /// Writes location `k` in full.
    Store(usize),
    /// May read these locations.
    Read(Reads),
}

/// The effects of every reachable block's instructions, in order, with each
/// block's gen and kill sets: the data-flow problem.
struct Effects {
    by_block: SecondaryMap<Block, Vec<(Inst, Effect)>>,
    live: LiveBits,
}

impl Effects {
    fn of(f: &Function, cfg: &ControlFlowGraph, locs: &Locations, modref: &ModRef) -> Effects {
        let n = locs.len();
        let mut by_block: SecondaryMap<Block, Vec<(Inst, Effect)>> = SecondaryMap::new();
        let mut live = LiveBits::new(n, true);
        for &b in cfg.rpo() {
            let effects: Vec<(Inst, Effect)> = f
                .layout
                .block_insts(b)
                .filter_map(|i| effect(f, i, locs, modref).map(|e| (i, e)))
                .collect();
            let (mut g, mut k) = (Bits::empty(n), Bits::empty(n));
            for (_, e) in effects.iter().rev() {
                match e {
                    Effect::Store(l) => {
                        g.remove(*l);
                        k.insert(*l);
                    }
                    Effect::Read(r) => locs.add_reads(r, &mut g),
                }
            }
            by_block[b] = effects;
            live.gen[b] = g;
            live.kill[b] = k;
        }
        Effects { by_block, live }
    }
}

/// What instruction `i` does to the tracked locations, if anything.
fn effect(f: &Function, i: Inst, locs: &Locations, modref: &ModRef) -> Option<Effect> {
    if !matches!(
        f.kind(i),
        InstKind::Store { .. } | InstKind::Load { .. } | InstKind::Call { .. }
    ) {
        return None;
    }
    let mut r = Reads::default();
    match f.kind(i) {
        InstKind::Store { value, ptr } => {
            if let Target::Object(obj, Some(off)) = target(f, *ptr) {
                let size = i64::from(f.value_type(*value).size());
                return Some(Effect::Store(locs.index[&(obj, off, size)]));
            }
            return None;
        }
        InstKind::Load { ty, ptr } => match target(f, *ptr) {
            Target::Local => return None,
            Target::Unknown => r.sets.push(Set::All),
            Target::Object(obj, None) => locs.add_object(obj, &mut r),
            Target::Object(obj, Some(off)) => {
                locs.add_exact(obj, off, i64::from(ty.size()), &mut r)
            }
        },
        InstKind::Call { callee, args } => {
            let reads = &modref.info(*callee).reads;
            if reads.any {
                r.sets.push(Set::All);
                return Some(Effect::Read(r));
            }
            if reads.any_global {
                r.sets.extend([Set::Globals, Set::Params]);
            }
            for &g in &reads.globals {
                locs.add_object(Object::Global(g), &mut r);
            }
            let pointers = args.iter().filter(|&&a| f.value_type(a) == Type::Ptr);
            if reads.all_params {
                for &a in pointers {
                    locs.add_pointee(f, a, &mut r);
                }
            } else {
                for &k in &reads.params {
                    if let Some(&a) = args.get(k as usize) {
                        locs.add_pointee(f, a, &mut r);
                    }
                }
            }
        }
        _ => return None,
    }
    Some(Effect::Read(r))
}

/// Which of `bits` locations may still be read before each block, backward:
/// a block's reads (`gen`) are live before it, its certain writes (`kill`) end
/// the liveness of what follows. At the function's exits everything is live
/// (`exit_live`: memory others see) or nothing is (a frame that dies with the
/// call). Both dead-store passes solve it: [`run`] over every location,
/// [`super::dselocal`] over the bytes of local arrays.
pub(super) struct LiveBits {
    pub(super) gen: SecondaryMap<Block, Bits>,
    pub(super) kill: SecondaryMap<Block, Bits>,
    bits: usize,
    exit_live: bool,
}

impl LiveBits {
    pub(super) fn new(bits: usize, exit_live: bool) -> LiveBits {
        LiveBits {
            gen: SecondaryMap::with_default(Bits::empty(bits)),
            kill: SecondaryMap::with_default(Bits::empty(bits)),
            bits,
            exit_live,
        }
    }
}

impl Problem for LiveBits {
    type Fact = Bits;
    const DIRECTION: Direction = Direction::Backward;
    fn boundary(&self, _: &Function) -> Bits {
        if self.exit_live {
            Bits::full(self.bits)
        } else {
            Bits::empty(self.bits)
        }
    }
    fn top(&self, _: &Function) -> Bits {
        Bits::empty(self.bits)
    }
    fn meet(&self, acc: &mut Bits, incoming: &Bits) {
        acc.union_with(incoming);
    }
    fn transfer(&self, _: &Function, b: Block, live_out: &Bits) -> Bits {
        let mut live = live_out.clone();
        live.difference_with(&self.kill[b]);
        live.union_with(&self.gen[b]);
        live
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, run, same_behaviour};

    /// `g = x; if (g > 100) g = 100; g = y;` and the clamp's store too: both
    /// are overwritten on every path before anything reads `@g`.
    #[test]
    fn stores_overwritten_on_every_path_out_of_a_diamond_go() {
        let src = r#"
global @g: i32 = 0

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  store %0, @g
  %1 = sgt %0, 100
  br %1, bb1, bb2
bb1:
  store 100, @g
  jump bb2
bb2:
  %2 = call @getint()
  store %2, @g
  %3 = load i32, @g
  call @putint(%3)
  ret 0
}
"#;
        same_behaviour(src, &["dse"], "150 7");
        check(
            &["dse"],
            src,
            r#"
global @g: i32 = 0

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 100
  br %1, bb1, bb2
bb1:
  jump bb2
bb2:
  %2 = call @getint()
  store %2, @g
  %3 = load i32, @g
  call @putint(%3)
  ret 0
}
"#,
        );
    }

    /// A store in a loop overwritten by the next iteration's store, and after
    /// the loop by a store before the exit: only the last one stays.
    #[test]
    fn a_store_overwritten_around_a_loop_and_after_it_goes() {
        let src = r#"
global @a: [i32; 4] = zeroinit

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = gep @a, 2, 4
  jump bb1(0)
bb1(%2: i32):
  store %2, %1
  %3 = add %2, 1
  %4 = slt %3, %0
  br %4, bb1(%3), bb2
bb2:
  store 9, %1
  %5 = load i32, %1
  call @putint(%5)
  ret 0
}
"#;
        let out = same_behaviour(src, &["dse"], "5");
        assert!(!out.contains("store %2"), "the loop's store goes:\n{out}");
        assert!(out.contains("store 9"), "{out}");
    }

    /// Must not fire: a read on one path (a load, a call whose callee reads the
    /// global, a load through a parameter that may point into it), a store of
    /// another element, and the function's end (the caller may read it).
    #[test]
    fn stores_some_path_may_read_stay() {
        let src = r#"
global @g: i32 = 0
global @h: [i32; 2] = zeroinit

declare @getint() -> i32
declare @putint(i32) -> void

func @show() -> void {
bb0:
  %0 = load i32, @g
  call @putint(%0)
  ret
}

func @f(ptr, i32) -> void {
bb0(%0: ptr, %1: i32):
  store 1, @g
  %2 = sgt %1, 0
  br %2, bb1, bb2
bb1:
  %3 = load i32, @g
  call @putint(%3)
  jump bb2
bb2:
  store 2, @g
  call @show()
  store 3, @g
  %4 = load i32, %0
  call @putint(%4)
  store 4, @g
  %5 = gep @h, 1, 4
  store 5, @h
  store 6, %5
  ret
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  call @f(@g, %0)
  %1 = load i32, @g
  call @putint(%1)
  %2 = load i32, @h
  call @putint(%2)
  ret 0
}
"#;
        same_behaviour(src, &["dse"], "1");
        let out = run(src, &["dse"]);
        for s in [
            "store 1, @g",
            "store 2, @g",
            "store 3, @g",
            "store 4, @g",
            "store 5, @h",
            "store 6, %5",
        ] {
            assert!(out.contains(s), "{s} stays:\n{out}");
        }
    }

    /// Parameters' arrays: `p[0]` overwritten on both arms goes, while a load
    /// of `q[0]` (another parameter: maybe the same array) keeps `p[1]`'s store.
    #[test]
    fn a_parameters_array_element_is_a_location_too() {
        let src = r#"
declare @putint(i32) -> void

func @f(ptr, ptr, i32) -> void {
bb0(%0: ptr, %1: ptr, %2: i32):
  %3 = gep %0, 1, 4
  store 8, %3
  %4 = load i32, %1
  call @putint(%4)
  store 7, %0
  %5 = sgt %2, 0
  br %5, bb1, bb2
bb1:
  store 1, %0
  jump bb3
bb2:
  store 2, %0
  jump bb3
bb3:
  store 3, %3
  ret
}

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 2]
  call @f(%0, %0, 1)
  %1 = load i32, %0
  call @putint(%1)
  ret 0
}
"#;
        same_behaviour(src, &["dse"], "");
        let out = run(src, &["dse"]);
        assert!(out.contains("store 8, %3"), "q may alias p:\n{out}");
        assert!(!out.contains("store 7"), "overwritten on both arms:\n{out}");
        assert!(
            out.contains("store 1, %0") && out.contains("store 2, %0"),
            "{out}"
        );
    }
}
