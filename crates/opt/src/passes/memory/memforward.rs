//! Store-to-load forwarding and dead store elimination for local memory (`alloc`s).
//!
//! A local allocation is private to one call of the function. If its address never
//! escapes (is never stored to memory, passed as a branch argument or returned; being
//! passed to a call is allowed and tracked), then only this function's loads and
//! stores, and the calls it is passed to, can touch it. For such allocations:
//!
//! 1. **Write-only allocations**: if nothing ever reads one (no load through it or a
//!    `gep` of it, and no call sees it), every store to it is dead; the stores, the
//!    `gep`s and the `alloc` are removed.
//! 2. **Within each block**, scanning forward with the contents known at each point
//!    (addresses are an allocation plus a constant byte offset, through `gep`s with
//!    constant indices, or indices whose value range ([`Ranges`]) is one number:
//!    full unrolling leaves `add 1, 1` for `instcombine` to fold after this pass):
//!    - a load of a location whose contents are known (stored or loaded earlier in the
//!      block, with the same type) is replaced by that value (store-to-load and
//!      load-to-load forwarding);
//!    - a load at a variable offset is replaced by the value every location of
//!      its window within the allocation is known to hold, when that is one
//!      value (`int t[5] = {}` stored as five zeros, then `t[i]` is 0: the
//!      known-contents counterpart of reading a fill, below);
//!    - a store of the value a location already holds is removed;
//!    - a store overwritten by a later store to the same location, with no possible
//!      read in between, is removed (dead store elimination), and so are stores not
//!      read before a `ret` (the frame dies);
//!    - a store at an unknown offset forgets everything known about that allocation;
//!      a load at an unknown offset counts as a read of all of it; a call forgets
//!      what it knows about, and counts as reading, the allocations passed to calls.
//!
//! 3. **Across blocks**, a block with a single predecessor starts from what that
//!    predecessor knows at its end (the contents, not the stores still unread: the
//!    dead-store part stays within a block), so facts flow down extended basic
//!    blocks (Muchnick, 13.1: local methods extended to EBBs). A store at a
//!    variable offset `c + s * k` forgets only the locations it may overlap:
//!    those whose distance from `c`, modulo the GCD of the variable indices'
//!    strides, leaves room for one of the two accesses (the GCD test LLVM's
//!    BasicAA applies to `gep`s with variable indices): a store to `t[i][4]` of
//!    `float t[3][7]` leaves `t[2][0]` known.
//! 4. **At joins** (a block with several predecessors, or a loop header), a block
//!    starts from what its immediate dominator knows at its end, less what any
//!    block on a path from the dominator to it may write: the blocks found by
//!    walking predecessors back from the join up to the dominator (the loop body,
//!    for a header). This is the dominator-based scheme of redundant load
//!    elimination over memory (GCC's FRE and LLVM's GVN walk up clobbers to the
//!    dominating access the same way); the walk stops at [`REGION_BLOCKS`] blocks
//!    and [`REGION_INSTS`] instructions, past which the join starts knowing
//!    nothing, so the pass stays linear.
//!
//! 5. **Stores no read follows** (on no path from the store to the function's
//!    exit) are deleted: see [`unread_stores`].
//!
//! A call of C's `memset` (which [`crate::passes::loops::loopidiom`] makes of fill loops) on an
//! allocation is a write, not a read: an allocation only cleared and stored to is
//! still write-only, and within a block, a load inside the cleared range that no
//! later store overlaps reads the repeated byte (`int c[1024][4] = {{1, 2}}`, then
//! `c[2][0]` is 0). A `memset` of a constant length at a variable offset (a
//! fill loop over a row `a[i][k..]`) forgets only the span it may cover, as a
//! store there does, and leaves a fill of its own byte intact: a load of
//! another column, or of a `0` under a cleared row, still reads the fill.
//!
//! A `memset` of a local allocation whose constant length is at most
//! [`SMALL_MEMSET`] bytes is first made the stores it stands for (LLVM's
//! InstCombine turns a memset of a small constant length into stores,
//! `SimplifyAnyMemSet`; GCC's `gimple_fold_builtin_memset`): a one-element fill
//! loop that [`crate::passes::loops::loopidiom`] saw before its trip count folded
//! to one costs a call, and as stores the steps above see through it.
//!
//! Memory not from a local `alloc` (globals, pointer parameters) is left alone: calls
//! and other pointers may alias it. This is the local (basic-block) redundant load and
//! dead store elimination of the textbooks (Muchnick, "Advanced Compiler Design and
//! Implementation", 13.1), restricted to memory that provably has no other name.

use crate::analysis::ranges::Ranges;
use crate::analysis::AnalysisManager;
use crate::analysis::Preserved;
use crate::passes::loops::loopidiom::{memset_call, memset_of};
use crate::pipeline::Pass;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, FuncId, Function, Inst, InstKind, Module, SecondaryMap, Type, Value, ValueDef};
use rustc_hash::{FxHashMap, FxHashSet};

/// The memforward pass.
pub struct MemForward;

impl Pass for MemForward {
    fn name(&self) -> &'static str {
        "memforward"
    }
    fn description(&self) -> &'static str {
        "store-to-load forwarding and dead store elimination for local memory"
    }
    /// Rewrites instructions only: no block or edge changes.
    fn preserves(&self) -> Preserved {
        Preserved::CFG.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let memset = memset_of(m);
        am.each_function(m, |f, _| run(f, memset))
    }
}

/// What the function does with one allocation's address.
#[derive(Copy, Clone, Default, Debug)]
struct AllocInfo {
    /// The address (or one derived from it) goes somewhere we cannot follow.
    escaped: bool,
    /// The address is passed to a call.
    call_visible: bool,
    /// Something loads through the address.
    loaded: bool,
}

/// Classifies every `alloc` of `f` (keyed by its result) and lists, per allocation,
/// the instructions deriving from or accessing it.
fn classify(f: &Function, memset: Option<FuncId>) -> Vec<(Value, AllocInfo, Vec<Inst>)> {
    let mut out = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            if !matches!(f.kind(i), InstKind::Alloc { .. }) {
                continue;
            }
            let a = f.inst_result(i).expect("alloc has a result");
            let mut info = AllocInfo::default();
            let mut derived: Vec<Inst> = Vec::new();
            let mut seen: FxHashSet<Inst> = FxHashSet::default();
            let mut work = vec![a];
            while let Some(p) = work.pop() {
                for &u in f.users(p) {
                    match f.kind(u) {
                        InstKind::Load { .. } => info.loaded = true,
                        InstKind::Store { value, .. } if *value == p => info.escaped = true,
                        InstKind::Store { .. } => {}
                        InstKind::Gep { base, .. } if *base == p => {
                            work.push(f.inst_result(u).expect("gep has a result"));
                        }
                        // `memset` writes through its pointer, its only one.
                        InstKind::Call { .. } if memset_call(f, memset, u).is_some() => {}
                        InstKind::Call { .. } => info.call_visible = true,
                        _ => info.escaped = true,
                    }
                    if seen.insert(u) {
                        derived.push(u);
                    }
                }
            }
            out.push((a, info, derived));
        }
    }
    out
}

/// A pointer into local memory: the allocation and, when constant, the byte offset.
/// An index is constant when it is a constant or when value ranges give it a
/// single value (`add 1, 1` that full unrolling left for `instcombine` to fold, a
/// counter of a loop run once), so what the pass sees does not depend on whether
/// the index arithmetic was folded before it ran.
fn resolve(f: &Function, ranges: &Ranges, p: Value) -> Option<(Value, Option<i64>)> {
    let (p, off) = ir::analysis::address_root_by(f, p, |v| constant(f, Some(ranges), v));
    let alloc = f.def_inst(p)?;
    matches!(f.kind(alloc), InstKind::Alloc { .. }).then_some((p, off))
}

/// A location: allocation, byte offset, size in bytes.
type Loc = super::locmap::Loc<Value>;
use super::locmap::{single_value as constant, span_of, LocMap, Span, UNBOUNDED};

/// What the scan of every block consults about the function.
struct Ctx<'a> {
    /// The allocations whose every access is seen.
    tracked: &'a SecondaryMap<Value, bool>,
    /// Those of them passed to calls.
    call_visible: &'a [Value],
    memset: Option<FuncId>,
    ranges: &'a Ranges,
}

/// Runs memforward over `f`.
pub fn run(f: &mut Function, memset: Option<FuncId>) -> bool {
    let mut changed = small_memsets(f, memset);
    let mut tracked: SecondaryMap<Value, bool> = SecondaryMap::new();
    let mut call_visible: Vec<Value> = Vec::new();
    let mut any = false;
    for (a, info, derived) in classify(f, memset) {
        if info.escaped {
            continue;
        }
        if !info.loaded && !info.call_visible {
            remove_write_only(f, a, &derived);
            changed = true;
            continue;
        }
        tracked[a] = true;
        any = true;
        if info.call_visible {
            call_visible.push(a);
        }
    }
    if !any {
        return changed;
    }
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let ranges = Ranges::compute(f, &cfg);
    let cx = Ctx {
        tracked: &tracked,
        call_visible: &call_visible,
        memset,
        ranges: &ranges,
    };
    let mut forwarded = false;
    let mut at_end: SecondaryMap<Block, Option<Known>> = SecondaryMap::new();
    for &b in cfg.rpo() {
        let start = dt.idom(b).and_then(|d| {
            let mut known = at_end[d].clone()?;
            let region = between(f, &cfg, &dt, d, b)?;
            for &r in &region {
                clobber(f, r, &mut known, &cx);
            }
            Some(known)
        });
        let (done, end) = forward_in_block(f, b, start, &cx);
        forwarded |= done;
        // Kept for the blocks `b` immediately dominates.
        if !dt.children(b).is_empty() {
            at_end[b] = Some(end);
        }
    }
    forwarded |= unread_stores(f, &cfg, &cx);
    if forwarded {
        // Loads answered by forwarding may have been an allocation's last readers.
        for (a, info, derived) in classify(f, memset) {
            if !(info.escaped || info.loaded || info.call_visible) {
                remove_write_only(f, a, &derived);
            }
        }
    }
    changed || forwarded
}

/// The longest `memset` of a local allocation made stores (four-byte ones).
pub const SMALL_MEMSET: i64 = 16;

/// Replaces each `memset` of a local `i32` or `f32` allocation whose result is
/// unused and whose length is a constant multiple of four up to
/// [`SMALL_MEMSET`] by stores of the byte repeated, as elements of the
/// allocation's type (four-byte elements: the pointer is four-byte aligned).
/// Whether any was replaced.
fn small_memsets(f: &mut Function, memset: Option<FuncId>) -> bool {
    let mut calls = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            let Some((ptr, byte, Some(len))) = memset_call(f, memset, i) else {
                continue;
            };
            let elem = f
                .def_inst(ir::analysis::address_root(f, ptr).0)
                .and_then(|a| match *f.kind(a) {
                    InstKind::Alloc { elem, .. } if matches!(elem, Type::I32 | Type::F32) => {
                        Some(elem)
                    }
                    _ => None,
                });
            let unused = f.inst_result(i).is_none_or(|r| f.users(r).is_empty());
            if let Some(elem) = elem.filter(|_| unused && len > 0 && len % 4 == 0) {
                if len <= SMALL_MEMSET {
                    calls.push((i, ptr, byte, len, elem));
                }
            }
        }
    }
    for &(call, ptr, byte, len, elem) in &calls {
        let bits = u32::from(byte) * 0x0101_0101;
        let value = match elem {
            Type::F32 => f.fconst(f32::from_bits(bits)),
            _ => f.iconst(bits as i32),
        };
        for k in 0..(len / 4) as i32 {
            let at = if k == 0 {
                ptr
            } else {
                let index = f.iconst(k);
                let gep = f.insert_inst_before(
                    call,
                    InstKind::Gep {
                        base: ptr,
                        index,
                        stride: 4,
                    },
                    Type::Ptr,
                );
                f.copy_src_loc(call, gep);
                f.inst_result(gep).expect("gep has a result")
            };
            let store = f.insert_inst_before(call, InstKind::Store { value, ptr: at }, Type::Void);
            f.copy_src_loc(call, store);
        }
        f.remove_inst(call);
    }
    !calls.is_empty()
}

/// Blocks visited at most, over all allocations, by [`unread_stores`].
const UNREAD_VISITS: usize = 1 << 16;

/// Step 5: deletes the stores (and `memset`s) of tracked allocations that no
/// read can follow. Then, location by location: a store at a constant offset
/// that no read which may overlap it ([`Span::may_overlap`], with the index
/// ranges of variable accesses) can follow is deleted too (when it stores no
/// constant: see [`stores_variable`]), as LLVM's
/// DeadStoreElimination asks MemorySSA whether any later access may alias
/// (`t[1][0]` stored on every iteration, only `t[2][k]` read afterwards). The blocks from which a read of the allocation (a load
/// through it, or any call when calls see it) is reachable are found by walking
/// predecessors back from the blocks that read it; scanning each block
/// backwards, a store with no read after it in the block, and none reachable
/// from the block's end, writes memory nothing reads before the frame dies
/// (dead store elimination at the function's exit, as LLVM's DSE deletes stores
/// to an `alloca` no path reads).
fn unread_stores(f: &mut Function, cfg: &ControlFlowGraph, cx: &Ctx) -> bool {
    // One scan: per allocation, the blocks reading and writing it; the blocks
    // with calls (which read every allocation calls see).
    let mut readers: FxHashMap<Value, Vec<Block>> = FxHashMap::default();
    let mut writers: FxHashMap<Value, Vec<Block>> = FxHashMap::default();
    let mut calls: Vec<Block> = Vec::new();
    for &b in cfg.rpo() {
        for i in f.layout.block_insts(b) {
            match access(f, cx, i) {
                Some((a, false)) => readers.entry(a).or_default().push(b),
                Some((a, true)) => writers.entry(a).or_default().push(b),
                None if matches!(f.kind(i), InstKind::Call { .. }) => calls.push(b),
                None => {}
            }
        }
    }
    let mut changed = false;
    let mut visits = 0;
    // Blocks a read of the allocation of round `stamp` is reachable from.
    let mut reach: SecondaryMap<Block, u32> = SecondaryMap::new();
    let mut writers: Vec<(Value, Vec<Block>)> = writers.into_iter().collect();
    writers.sort_by_key(|(a, _)| *a);
    for (stamp, (a, mut written)) in (1u32..).zip(writers) {
        let visible = cx.call_visible.contains(&a);
        let mut work: Vec<Block> = readers.get(&a).cloned().unwrap_or_default();
        if visible {
            work.extend_from_slice(&calls);
        }
        for &b in &work {
            reach[b] = stamp;
        }
        while let Some(b) = work.pop() {
            visits += 1;
            for &p in cfg.preds(b) {
                if reach[p] != stamp {
                    reach[p] = stamp;
                    work.push(p);
                }
            }
        }
        written.dedup();
        for b in written {
            let mut read_later = cfg.succs(b).iter().any(|&s| reach[s] == stamp);
            let insts: Vec<Inst> = f.layout.block_insts(b).collect();
            visits += insts.len();
            for &i in insts.iter().rev() {
                match access(f, cx, i) {
                    Some((r, false)) if r == a => read_later = true,
                    None if visible && matches!(f.kind(i), InstKind::Call { .. }) => {
                        read_later = true
                    }
                    Some((r, true)) if r == a && !read_later => {
                        f.remove_inst(i);
                        changed = true;
                    }
                    _ => {}
                }
            }
        }
        if visits > UNREAD_VISITS {
            return changed;
        }
    }
    changed | unread_locations(f, cfg, cx, visits)
}

/// Distinct store locations per allocation [`unread_locations`] looks at.
const UNREAD_LOCATIONS: usize = 64;

/// The location-by-location part of [`unread_stores`], within the remaining
/// budget of `visits`.
fn unread_locations(f: &mut Function, cfg: &ControlFlowGraph, cx: &Ctx, mut visits: usize) -> bool {
    // Per allocation: the blocks reading it with the span read; the stores at a
    // constant offset with their span; the blocks with calls.
    let mut readers: FxHashMap<Value, Vec<(Block, Span)>> = FxHashMap::default();
    let mut stores: FxHashMap<Value, Vec<Span>> = FxHashMap::default();
    let mut calls: Vec<Block> = Vec::new();
    for &b in cfg.rpo() {
        for i in f.layout.block_insts(b) {
            match access_span(f, cx, i) {
                Some((a, false, at)) => readers.entry(a).or_default().push((b, at)),
                Some((a, true, at)) if at.stride == 0 && stores_variable(f, i) => {
                    let list = stores.entry(a).or_default();
                    if !list.contains(&at) {
                        list.push(at);
                    }
                }
                None if matches!(f.kind(i), InstKind::Call { .. }) => calls.push(b),
                _ => {}
            }
        }
    }
    let mut changed = false;
    let mut reach: SecondaryMap<Block, u32> = SecondaryMap::new();
    let mut stores: Vec<(Value, Vec<Span>)> = stores.into_iter().collect();
    stores.sort_by_key(|(a, _)| *a);
    let mut stamp = 0u32;
    for (a, spans) in stores {
        let visible = cx.call_visible.contains(&a);
        let no_reads = Vec::new();
        let reads = readers.get(&a).unwrap_or(&no_reads);
        for &w in spans.iter().take(UNREAD_LOCATIONS) {
            stamp += 1;
            let mut work: Vec<Block> = reads
                .iter()
                .filter(|(_, r)| r.may_overlap(w))
                .map(|&(b, _)| b)
                .collect();
            if visible {
                work.extend_from_slice(&calls);
            }
            for &b in &work {
                reach[b] = stamp;
            }
            while let Some(b) = work.pop() {
                visits += 1;
                for &p in cfg.preds(b) {
                    if reach[p] != stamp {
                        reach[p] = stamp;
                        work.push(p);
                    }
                }
            }
            for &b in cfg.rpo() {
                let mut read_later = cfg.succs(b).iter().any(|&s| reach[s] == stamp);
                let insts: Vec<Inst> = f.layout.block_insts(b).collect();
                visits += insts.len();
                for &i in insts.iter().rev() {
                    match access_span(f, cx, i) {
                        Some((r, false, at)) if r == a && at.may_overlap(w) => read_later = true,
                        None if visible && matches!(f.kind(i), InstKind::Call { .. }) => {
                            read_later = true
                        }
                        Some((r, true, at))
                            if r == a && at == w && !read_later && stores_variable(f, i) =>
                        {
                            f.remove_inst(i);
                            changed = true;
                        }
                        _ => {}
                    }
                }
            }
            if visits > UNREAD_VISITS {
                return changed;
            }
        }
    }
    changed
}

/// Whether `i` stores a value that is not a constant. Constant stores are left
/// to the allocation-wide deletion: an array of constants becomes a table
/// (`localconst`), where a dead element costs nothing, and its value keeps the
/// table regular (`x[k] = 1 << k` for every `k`, which division by `x[k]` turns
/// into a shift, fails on one element cleared to zero: 00_bitset 33% slower).
fn stores_variable(f: &Function, i: Inst) -> bool {
    matches!(*f.kind(i), InstKind::Store { value, .. } if !f.value_def(value).is_constant())
}

/// As [`access`], with the bytes accessed: a store's or load's span, a
/// `memset`'s range (its span at a variable offset; all of the allocation when
/// its length is not constant).
fn access_span(f: &Function, cx: &Ctx, i: Inst) -> Option<(Value, bool, Span)> {
    let (ptr, write, size) = match *f.kind(i) {
        InstKind::Load { ptr, ty } => (ptr, false, ty.size() as i64),
        InstKind::Store { ptr, value } => (ptr, true, f.value_type(value).size() as i64),
        _ => {
            let (ptr, _, len) = memset_call(f, cx.memset, i)?;
            let (a, off) = resolve(f, cx.ranges, ptr).filter(|&(a, _)| cx.tracked[a])?;
            let at = match (off, len) {
                (Some(off), Some(len)) => Span::exact(off, len),
                (None, Some(len)) => span(f, cx.ranges, ptr, len),
                _ => Span {
                    lo: -UNBOUNDED,
                    hi: UNBOUNDED,
                    start: 0,
                    stride: 1,
                    size: 1,
                },
            };
            return Some((a, true, at));
        }
    };
    let (a, off) = resolve(f, cx.ranges, ptr).filter(|&(a, _)| cx.tracked[a])?;
    let at = match off {
        Some(off) => Span::exact(off, size),
        None => span(f, cx.ranges, ptr, size),
    };
    Some((a, write, at))
}

/// The tracked allocation `i` reads (`false`: a load) or writes (`true`: a
/// store or a `memset`), if any.
fn access(f: &Function, cx: &Ctx, i: Inst) -> Option<(Value, bool)> {
    let (ptr, write) = match *f.kind(i) {
        InstKind::Load { ptr, .. } => (ptr, false),
        InstKind::Store { ptr, .. } => (ptr, true),
        _ => (memset_call(f, cx.memset, i)?.0, true),
    };
    resolve(f, cx.ranges, ptr)
        .map(|(a, _)| a)
        .filter(|&a| cx.tracked[a])
        .map(|a| (a, write))
}

/// Most blocks and instructions [`between`] a join and its dominator may span.
const REGION_BLOCKS: usize = 32;
const REGION_INSTS: usize = 1024;

/// The blocks on paths from `d` to its dominated block `b` (neither end
/// included, but `b` when it lies on a cycle avoiding `d`): predecessors walked
/// back from `b` up to `d`. `None` past [`REGION_BLOCKS`] blocks or
/// [`REGION_INSTS`] instructions.
fn between(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    d: Block,
    b: Block,
) -> Option<Vec<Block>> {
    let mut seen: FxHashSet<Block> = FxHashSet::default();
    let mut region = Vec::new();
    let mut work: Vec<Block> = cfg.preds(b).to_vec();
    let mut insts = 0;
    while let Some(p) = work.pop() {
        if p == d || !dt.is_reachable(p) || !seen.insert(p) {
            continue;
        }
        region.push(p);
        insts += f.layout.block_insts(p).take(REGION_INSTS + 1).count();
        if region.len() > REGION_BLOCKS || insts > REGION_INSTS {
            return None;
        }
        if p != b {
            work.extend_from_slice(cfg.preds(p));
        }
    }
    Some(region)
}

/// Forgets from `known` whatever block `r` may write: the effects of its stores,
/// `memset`s and calls in [`forward_in_block`], without forwarding anything.
fn clobber(f: &Function, r: Block, known: &mut Known, cx: &Ctx) {
    let (contents, fills) = known;
    for i in f.layout.block_insts(r) {
        if let Some((ptr, byte, len)) = memset_call(f, cx.memset, i) {
            if let Some((alloc, off)) = resolve(f, cx.ranges, ptr).filter(|&(a, _)| cx.tracked[a]) {
                match (off, len) {
                    (Some(off), Some(size)) => {
                        contents.forget_overlapping(Loc {
                            obj: alloc,
                            off,
                            size,
                        });
                        fills.overwrite(alloc, Span::exact(off, size), Some(byte));
                    }
                    (None, Some(len)) => {
                        let at = span(f, cx.ranges, ptr, len);
                        contents.forget_span(alloc, at);
                        fills.overwrite(alloc, at, Some(byte));
                    }
                    _ => {
                        contents.forget_object(alloc);
                        fills.forget_object(alloc);
                    }
                }
            }
            continue;
        }
        match *f.kind(i) {
            InstKind::Store { value, ptr } => {
                let Some((alloc, off)) = resolve(f, cx.ranges, ptr).filter(|&(a, _)| cx.tracked[a])
                else {
                    continue;
                };
                let size = f.value_type(value).size() as i64;
                let at = match off {
                    Some(off) => Span::exact(off, size),
                    None => span(f, cx.ranges, ptr, size),
                };
                contents.forget_span(alloc, at);
                fills.overwrite(alloc, at, fill_byte(f, value));
            }
            InstKind::Call { .. } => {
                for &a in cx.call_visible {
                    contents.forget_object(a);
                    fills.forget_object(a);
                }
            }
            _ => {}
        }
    }
}

/// Step 1: deletes every store to allocation `a` (never read) and every `memset` of
/// it, then its `gep`s and the allocation itself.
fn remove_write_only(f: &mut Function, a: Value, derived: &[Inst]) {
    for &i in derived {
        if matches!(f.kind(i), InstKind::Store { .. } | InstKind::Call { .. }) {
            f.remove_inst(i);
        }
    }
    // `derived` lists each gep before the geps of its result: delete users first.
    for &i in derived.iter().rev() {
        if matches!(f.kind(i), InstKind::Gep { .. }) {
            f.remove_inst(i);
        }
    }
    let alloc = f.def_inst(a).expect("alloc result");
    f.remove_inst(alloc);
}

/// What is known about local memory at a point: contents and fills.
type Known = (LocMap<Value, Value>, Fills);

/// Steps 2 and 3 for one block, starting from what is known on entry; whether it
/// changed anything, and what is known at its end.
fn forward_in_block(f: &mut Function, b: Block, start: Option<Known>, cx: &Ctx) -> (bool, Known) {
    let mut changed = false;
    // Known contents, and stores not (yet) possibly read.
    let (mut known, mut fills) = start.unwrap_or_else(|| (LocMap::new(), Fills::default()));
    let mut pending: LocMap<Value, Inst> = LocMap::new();
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    for i in insts {
        if let Some((ptr, byte, len)) = memset_call(f, cx.memset, i) {
            let Some((alloc, off)) = resolve(f, cx.ranges, ptr).filter(|&(a, _)| cx.tracked[a])
            else {
                continue;
            };
            match (off, len) {
                (Some(off), Some(size)) => {
                    let loc = Loc {
                        obj: alloc,
                        off,
                        size,
                    };
                    known.forget_overlapping(loc);
                    pending.forget_overlapping(loc);
                    fills.add(loc, byte);
                }
                // A fill at a variable offset (a row of a matrix) forgets what
                // it may overlap, as a store there does.
                (None, Some(len)) => {
                    let at = span(f, cx.ranges, ptr, len);
                    known.forget_span(alloc, at);
                    pending.forget_span(alloc, at);
                    fills.overwrite(alloc, at, Some(byte));
                }
                _ => {
                    known.forget_object(alloc);
                    pending.forget_object(alloc);
                    fills.forget_object(alloc);
                }
            }
            continue;
        }
        match *f.kind(i) {
            InstKind::Load { ty, ptr } => {
                let Some((alloc, off)) = resolve(f, cx.ranges, ptr) else {
                    continue;
                };
                if !cx.tracked[alloc] {
                    continue;
                }
                let r = f.inst_result(i).expect("load has a result");
                let size = ty.size() as i64;
                let Some(off) = off else {
                    pending.forget_object(alloc);
                    // A fill nothing overwrote wherever the index points.
                    let at = span(f, cx.ranges, ptr, size);
                    let hit = fills.value_at(f, alloc, at, ty);
                    let hit = hit.or_else(|| same_everywhere(f, &known, alloc, at, ty));
                    if let Some(v) = hit {
                        f.replace_all_uses(r, v);
                        f.remove_inst(i);
                        changed = true;
                    }
                    continue;
                };
                let loc = Loc {
                    obj: alloc,
                    off,
                    size,
                };
                let hit = known.at(loc).find(|&v| f.value_type(v) == ty);
                let hit = hit.or_else(|| fills.value_at(f, alloc, Span::exact(off, size), ty));
                if let Some(v) = hit {
                    f.replace_all_uses(r, v);
                    f.remove_inst(i);
                    changed = true;
                } else {
                    pending.forget_overlapping(loc);
                    known.push(loc, r);
                }
            }
            InstKind::Store { value, ptr } => {
                let Some((alloc, off)) = resolve(f, cx.ranges, ptr) else {
                    continue;
                };
                if !cx.tracked[alloc] {
                    continue;
                }
                let size = f.value_type(value).size() as i64;
                let byte = fill_byte(f, value);
                let at = match off {
                    Some(off) => Span::exact(off, size),
                    None => span(f, cx.ranges, ptr, size),
                };
                if byte.is_some() && fills.byte_at(alloc, at) == byte {
                    // Stores the byte a fill left wherever it may point.
                    f.remove_inst(i);
                    changed = true;
                    continue;
                }
                fills.overwrite(alloc, at, byte);
                let Some(off) = off else {
                    known.forget_span(alloc, at);
                    continue;
                };
                let loc = Loc {
                    obj: alloc,
                    off,
                    size,
                };
                if known.at(loc).any(|v| v == value) {
                    f.remove_inst(i); // stores what is already there
                    changed = true;
                    continue;
                }
                if let Some(dead) = pending.take(loc) {
                    f.remove_inst(dead);
                    changed = true;
                }
                known.forget_overlapping(loc);
                known.push(loc, value);
                pending.push(loc, i);
            }
            InstKind::Call { .. } => {
                for &a in cx.call_visible {
                    known.forget_object(a);
                    pending.forget_object(a);
                    fills.forget_object(a);
                }
            }
            InstKind::Ret { .. } => {
                for s in pending.drain() {
                    f.remove_inst(s);
                    changed = true;
                }
            }
            _ => {}
        }
    }
    (changed, (known, fills))
}

/// Locations a load at a variable offset may read that [`same_everywhere`]
/// looks up, at most.
const MAX_WINDOW_LOCATIONS: i64 = 64;

/// The value every location a load of `ty` at `at` in allocation `a` may read
/// is known to hold, when it is one value: the load reads it whatever the
/// index (`int t[5] = {}` made five stores of 0, then `t[i]` is 0). Offsets
/// outside the allocation are no access a program may make, so the window is
/// cut to it.
fn same_everywhere(
    f: &Function,
    known: &LocMap<Value, Value>,
    a: Value,
    at: Span,
    ty: Type,
) -> Option<Value> {
    let InstKind::Alloc { elem, len } = *f.kind(f.def_inst(a)?) else {
        return None;
    };
    let last = i64::from(elem.size()) * i64::from(len) - at.size;
    let (lo, hi) = (at.lo.max(0), at.hi.min(last));
    if at.stride <= 0 || lo > hi || (hi - lo) / at.stride >= MAX_WINDOW_LOCATIONS {
        return None;
    }
    let first = lo + (at.start - lo).rem_euclid(at.stride);
    let mut offsets = (first..=hi).step_by(at.stride as usize);
    let loc = |off| Loc {
        obj: a,
        off,
        size: at.size,
    };
    let candidates: Vec<Value> = known
        .at(loc(offsets.next()?))
        .filter(|&v| f.value_type(v) == ty)
        .collect();
    let rest: Vec<i64> = offsets.collect();
    candidates
        .into_iter()
        .find(|&v| rest.iter().all(|&off| known.at(loc(off)).any(|w| w == v)))
}

/// [`span_of`] with this function's ranges.
fn span(f: &Function, ranges: &Ranges, p: Value, size: i64) -> Span {
    span_of(f, Some(ranges), p, size).1
}

/// The ranges of local memory a `memset` of this block cleared, with the places
/// stored to since (whose loads the stores answer).
#[derive(Default, Clone)]
struct Fills {
    fills: Vec<Fill>,
}

#[derive(Clone)]
struct Fill {
    loc: Loc,
    byte: u8,
    overwritten: Vec<Span>,
}

/// A fill stops being tracked once this many stores have overwritten parts of it.
const MAX_OVERWRITES: usize = 64;

impl Fills {
    fn add(&mut self, loc: Loc, byte: u8) {
        self.fills.push(Fill {
            loc,
            byte,
            overwritten: Vec::new(),
        });
    }

    fn forget_object(&mut self, a: Value) {
        self.fills.retain(|fill| fill.loc.obj != a);
    }

    /// Records a store to `at` in `obj` of a value made of the repeated `byte`
    /// (when it is): the bytes it may write no longer hold the byte of any other
    /// fill; a fill of the same byte still holds it everywhere (LLVM's
    /// DeadStoreElimination likewise sees a store of a `memset`'s byte pattern
    /// into its range as a no-op, `storeIsNoop`).
    fn overwrite(&mut self, obj: Value, at: Span, byte: Option<u8>) {
        for fill in &mut self.fills {
            if fill.loc.obj == obj
                && Some(fill.byte) != byte
                && at.may_overlap(Span::exact(fill.loc.off, fill.loc.size))
            {
                fill.overwritten.push(at);
            }
        }
        self.fills
            .retain(|fill| fill.overwritten.len() <= MAX_OVERWRITES);
    }

    /// What a load of `ty` from `at` in `obj` reads, when the newest fill it may
    /// touch covers every byte it may read, and no store since may have written
    /// one of them: the byte repeated, as an `i32` or `f32` constant.
    fn value_at(&self, f: &mut Function, obj: Value, at: Span, ty: Type) -> Option<Value> {
        let bits = u32::from(self.byte_at(obj, at)?) * 0x0101_0101;
        match ty {
            Type::I32 => Some(f.iconst(bits as i32)),
            Type::F32 => Some(f.fconst(f32::from_bits(bits))),
            _ => None,
        }
    }

    /// The byte every byte of `at` in `obj` holds, when the newest fill it may
    /// touch covers every byte it may access and no store since may have
    /// written one of them with another byte.
    fn byte_at(&self, obj: Value, at: Span) -> Option<u8> {
        let fill = self.fills.iter().rev().find(|fill| {
            fill.loc.obj == obj && at.may_overlap(Span::exact(fill.loc.off, fill.loc.size))
        })?;
        let inside = fill.loc.off <= at.lo && at.hi + at.size <= fill.loc.off + fill.loc.size;
        let intact = !fill.overwritten.iter().any(|&w| w.may_overlap(at));
        (inside && intact).then_some(fill.byte)
    }
}

/// The byte `v` repeats in each of its four bytes, when it is an `i32` or `f32`
/// constant made of one byte (0 and 0.0 for a zero fill; not -0.0).
fn fill_byte(f: &Function, v: Value) -> Option<u8> {
    let bits = match f.value_def(v) {
        ValueDef::IConst(c) => c as u32,
        ValueDef::FConst(bits) => bits,
        _ => return None,
    };
    let byte = bits as u8;
    (bits == u32::from(byte) * 0x0101_0101).then_some(byte)
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    #[test]
    fn calls_see_the_arrays_passed_to_them() {
        // After the call, a[0] may have changed: the load stays.
        let src = r#"
declare @g(ptr) -> void

func @f() -> i32 {
bb0:
  %0 = alloc [i32; 2]
  store 1, %0
  call @g(%0)
  %1 = load i32, %0
  ret %1
}
"#;
        check(&["memforward"], src, src);
    }

    #[test]
    fn unknown_offsets_and_global_memory_are_respected() {
        let src = r#"
global @a: [i32; 4] = zeroinit

func @f(i32, ptr) -> i32 {
bb0(%0: i32, %1: ptr):
  %2 = alloc [i32; 4]
  store 1, %2
  %3 = gep %2, %0, 4
  store 9, %3
  %4 = load i32, %2
  store 2, @a
  store 3, %1
  %5 = load i32, @a
  %6 = add %4, %5
  store %6, %2
  %7 = load i32, %3
  ret %7
}
"#;
        check(&["memforward"], src, src);
    }

    #[test]
    fn stores_through_an_escaped_address_are_seen() {
        // %1's address is stored in %0 and written through the loaded copy: the load
        // of %1 must see 2, not the 1 stored directly.
        let out = same_behaviour(
            r#"
func @main() -> i32 {
bb0:
  %0 = alloc ptr
  %1 = alloc i32
  store %1, %0
  store 1, %1
  %2 = load ptr, %0
  store 2, %2
  %3 = load i32, %1
  ret %3
}
"#,
            &["memforward"],
            "",
        );
        assert!(!out.contains("ret 1"), "{out}");
    }

    #[test]
    fn type_punning_is_not_forwarded() {
        let src = r#"
func @f() -> f32 {
bb0:
  %0 = alloc i32
  store 1065353216, %0
  %1 = load f32, %0
  ret %1
}
"#;
        check(&["memforward"], src, src);
    }

    #[test]
    fn behaviour_is_preserved_on_a_program() {
        same_behaviour(
            r#"
declare @putint(i32) -> void
declare @putch(i32) -> void
declare @getint() -> i32
declare @putarray(i32, ptr) -> void

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 3]
  %1 = gep %0, 1, 4
  %2 = gep %0, 2, 4
  %3 = call @getint()
  store 0, %0
  store 0, %1
  store 0, %2
  store %3, %0
  %4 = mul %3, 2
  store %4, %1
  %5 = load i32, %0
  %6 = load i32, %1
  %7 = add %5, %6
  store %7, %2
  call @putarray(3, %0)
  %8 = load i32, %2
  call @putint(%8)
  call @putch(10)
  ret 0
}
"#,
            &["memforward"],
            "5",
        );
    }
}

#[cfg(test)]
mod across_blocks_tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `float t[3][7]`: the first row's start and `t[2][0]` stored, then
    /// `t[r][COL]` for a row `r` from input, then a branch; each arm loads
    /// `t[2][0]` (LOADED, from the first arm) and the join loads again.
    const ROWS: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %t = alloc [i32; 21]
  %n = call @getint()
  %r = and %n, 1
  store 5, %t
  %p = gep %t, 14, 4
  store 11, %p
  %row = gep %t, %r, 28
  %q = gep %row, COL, 4
  store 3, %q
  %c = slt %n, 4
  br %c, bb1, bb2
bb1:
  %a = gep %t, LOADED, 4
  %v = load i32, %a
  call @putint(%v)
  jump bb3
bb2:
  store 6, %p
  jump bb3
bb3:
  %w = load i32, %p
  call @putint(%w)
  ret 0
}
"#;

    fn rows(col: &str, loaded: &str) -> String {
        ROWS.replace("COL", col).replace("LOADED", loaded)
    }

    #[test]
    fn a_single_predecessor_passes_its_contents_on() {
        // Column 4 of a row never is `t[2][0]` (offset 56 = 2 * 28 + 0) or `t[0][0]`.
        for input in ["0", "1", "5", "6"] {
            let out = same_behaviour(&rows("4", "14"), &["memforward"], input);
            assert!(out.contains("call @putint(11)"), "{out}");
            // The join has two predecessors storing different values: its load stays.
            assert_eq!(out.matches("load").count(), 1, "{out}");
        }
        let out = run(&rows("4", "0"), &["memforward"]);
        assert!(out.contains("call @putint(5)"), "{out}");
    }

    #[test]
    fn a_variable_store_that_may_hit_the_location_stops_forwarding() {
        // Column 0 of row `r` is `t[2][0]` when `r` is 2: (56 - 0) % 28 == 0.
        let any_row = |src: String| src.replace("%r = and %n, 1", "%r = srem %n, 3");
        for input in ["0", "1", "2"] {
            let out = same_behaviour(&any_row(rows("0", "14")), &["memforward"], input);
            assert_eq!(out.matches("load").count(), 2, "{out}");
        }
        // With `r` in [0, 1], its range keeps the store off `t[2][0]`.
        for input in ["0", "1", "2"] {
            let out = same_behaviour(&rows("0", "14"), &["memforward"], input);
            assert!(out.contains("call @putint(11)"), "{out}");
        }
        // Column 0 also may be `t[0][0]`; an element-wise index may be anything.
        let out = run(&rows("0", "0"), &["memforward"]);
        assert_eq!(out.matches("load").count(), 2, "{out}");
        let src = rows("4", "14")
            .replace("%r = and %n, 1", "%r = add %n, 0")
            .replace("%row = gep %t, %r, 28", "%row = gep %t, %r, 4");
        let out = same_behaviour(&src, &["memforward"], "1");
        assert_eq!(out.matches("load").count(), 2, "{out}");
    }

    #[test]
    fn a_join_starts_from_its_dominator_less_what_the_arms_write() {
        // The second arm stores to `t[0][0]` instead: nothing on the way from bb0
        // to the join writes `t[2][0]`, which still holds 11 there.
        let src = rows("4", "14").replace("store 6, %p", "store 6, %t");
        for input in ["0", "1", "5", "6"] {
            let out = same_behaviour(&src, &["memforward"], input);
            assert_eq!(out.matches("load").count(), 0, "{out}");
        }
        // An arm writing it at a variable index that may be `t[2][0]` keeps the load.
        let src = rows("4", "14")
            .replace("store 6, %p", "store 6, %row")
            .replace("%r = and %n, 1", "%r = srem %n, 3");
        for input in ["0", "1", "5", "6"] {
            let out = same_behaviour(&src, &["memforward"], input);
            assert_eq!(out.matches("load").count(), 1, "{out}");
        }
        // So does an arm with a call that sees the array.
        let src = rows("4", "14")
            .replace("store 6, %p", "call @putarray(21, %t)")
            .replace(
                "declare @putint(i32) -> void",
                "declare @putint(i32) -> void\ndeclare @putarray(i32, ptr) -> void",
            );
        let out = same_behaviour(&src, &["memforward"], "6");
        assert_eq!(out.matches("load").count(), 1, "{out}");
    }

    /// A loop reads `a[1]` in its header; its body stores BODY.
    const LOOP: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %a = alloc [i32; 4]
  %n = call @getint()
  %p = gep %a, 1, 4
  store 7, %p
  %q = gep %a, 2, 4
  store 0, %q
  jump bb1(0)
bb1(%i: i32):
  %v = load i32, %p
  call @putint(%v)
  %c = slt %i, %n
  br %c, bb2, bb3
bb2:
  %j = and %i, 3
  %x = gep %a, %j, 4
  BODY
  %k = add %i, 1
  jump bb1(%k)
bb3:
  %w = load i32, %q
  ret %w
}
"#;

    #[test]
    fn a_loop_header_starts_from_the_preheader_less_what_the_body_writes() {
        // The body writes only `a[2]`: every iteration's `a[1]` is the 7 stored
        // before the loop (the exit's `a[2]` is not known: the body wrote it).
        let src = LOOP.replace("BODY", "store %i, %q");
        let out = same_behaviour(&src, &["memforward"], "3");
        assert!(out.contains("call @putint(7)"), "{out}");
        assert_eq!(out.matches("load").count(), 1, "{out}");
        // A store at `a[i & 3]` may be `a[1]`: the header's load stays.
        let src = LOOP.replace("BODY", "store %i, %x");
        let out = same_behaviour(&src, &["memforward"], "3");
        assert_eq!(out.matches("load").count(), 2, "{out}");
    }

    #[test]
    fn a_call_that_sees_the_array_stops_forwarding() {
        let src = rows("4", "14").replace(
            "  br %c, bb1, bb2",
            "  call @putarray(21, %t)\n  br %c, bb1, bb2",
        );
        let src = src.replace(
            "declare @putint(i32) -> void",
            "declare @putint(i32) -> void\ndeclare @putarray(i32, ptr) -> void",
        );
        // putarray may not write, but memforward counts a call as a write.
        let out = same_behaviour(&src, &["memforward"], "3");
        assert_eq!(out.matches("load").count(), 2, "{out}");
    }
}

#[cfg(test)]
mod memset_tests {
    use crate::passes::testutil::{run, same_behaviour};

    const CLEARED: &str = r#"
declare @memset(ptr, i32, i64) -> ptr
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 64]
  %1 = sext 256
  %2 = call @memset(%0, BYTE, %1)
  %3 = gep %0, 1, 4
  store 5, %3
STORE
  %4 = gep %0, IDX, 4
  %5 = load LOADTY, %4
  %6 = LOADUSE
  call @putint(%6)
  ret 0
}
"#;

    fn cleared(byte: &str, idx: &str, store: &str, load_f32: bool) -> String {
        let (ty, usage) = if load_f32 {
            ("f32", "fptosi %5")
        } else {
            ("i32", "add %5, 0")
        };
        CLEARED
            .replace("BYTE", byte)
            .replace("IDX", idx)
            .replace("STORE", store)
            .replace("LOADTY", ty)
            .replace("LOADUSE", usage)
    }

    #[test]
    fn a_load_from_a_cleared_range_reads_the_byte() {
        let out = same_behaviour(&cleared("0", "7", "", false), &["memforward"], "");
        // Nothing reads the array any more: the call and the array are gone too.
        assert!(!out.contains("load") && !out.contains("memset(%"), "{out}");
        assert!(out.contains("add 0, 0"), "{out}");
        let out = same_behaviour(&cleared("255", "63", "", false), &["memforward"], "");
        assert!(out.contains("add -1, 0"), "{out}");
        let out = same_behaviour(&cleared("0", "9", "", true), &["memforward"], "");
        assert!(out.contains("fptosi 0.0"), "{out}");
        // The element stored after the call reads the store.
        let out = same_behaviour(&cleared("0", "1", "", false), &["memforward"], "");
        assert!(out.contains("add 5, 0"), "{out}");
    }

    /// `CLEARED` with a store of `value` (of `ty`) at element `%22` in `[8, 15]`
    /// and the load at that same variable index.
    fn fill_pattern_store(byte: &str, value: &str, ty: &str) -> String {
        let store = format!(
            "  %20 = call @getint()\n  %21 = and %20, 7\n  %22 = add %21, 8\n  \
             %23 = gep %0, %22, 4\n  store {value}, %23"
        );
        let mut src = cleared(byte, "%22", &store, ty == "f32");
        if ty == "f32" {
            src = src.replace("alloc [i32; 64]", "alloc [f32; 64]");
        }
        src
    }

    #[test]
    fn a_store_of_the_fill_byte_keeps_the_fill() {
        // 0 into a zero fill, wherever it points: silent, and the load reads 0.
        let out = same_behaviour(&fill_pattern_store("0", "0", "i32"), &["memforward"], "3");
        assert!(
            out.contains("add 0, 0") && !out.contains("store 0"),
            "{out}"
        );
        let out = same_behaviour(&fill_pattern_store("0", "0.0", "f32"), &["memforward"], "3");
        assert!(
            out.contains("fptosi 0.0") && !out.contains("store 0.0"),
            "{out}"
        );
        // -1 is the byte 255 repeated.
        let out = same_behaviour(
            &fill_pattern_store("255", "-1", "i32"),
            &["memforward"],
            "3",
        );
        assert!(
            out.contains("add -1, 0") && !out.contains("store -1"),
            "{out}"
        );
    }

    #[test]
    fn a_store_of_another_byte_overwrites_the_fill() {
        // Must not fire: 7, -0.0 (a sign bit only) and 0 into a 255 fill are not
        // the fill's byte repeated; each store stays and the load reads it.
        for (byte, value, ty) in [("0", "7", "i32"), ("0", "-0.0", "f32"), ("255", "0", "i32")] {
            let out = run(&fill_pattern_store(byte, value, ty), &["memforward"]);
            assert!(out.contains(&format!("store {value}")), "{out}");
            assert!(out.contains(&format!("load {ty}")), "{out}");
        }
    }

    /// A `memset` of `len` bytes (byte 0) at element `%2` of a local `[TY; 8]`
    /// (or of `@g` when `global`), element `%2 + 1` printed.
    fn short_memset(ty: &str, len: &str, global: bool) -> String {
        let base = if global { "@g" } else { "%0" };
        format!(
            "global @g: [{ty}; 8] = zeroinit\n\
             declare @memset(ptr, i32, i64) -> ptr\ndeclare @putint(i32) -> void\ndeclare @getint() -> i32\n\n\
             func @main() -> i32 {{\nbb0:\n  %0 = alloc [{ty}; 8]\n  %1 = call @getint()\n  %2 = and %1, 3\n  \
             %3 = gep {base}, %2, 4\n  %4 = sext {len}\n  %5 = call @memset(%3, 0, %4)\n  \
             %6 = gep %3, 1, 4\n  %7 = load {ty}, %6\n  %8 = LOADUSE\n  call @putint(%8)\n  ret 0\n}}\n"
        )
        .replace(
            "LOADUSE",
            if ty == "f32" { "fptosi %7" } else { "add %7, 0" },
        )
    }

    #[test]
    fn a_short_memset_of_a_local_array_is_its_stores() {
        // 8 bytes of a float array: two stores of 0.0; the load reads the second.
        let out = same_behaviour(&short_memset("f32", "8", false), &["memforward"], "0");
        assert!(!out.contains("call @memset"), "{out}");
        assert_eq!(out.matches("store 0.0").count(), 2, "{out}");
        // At a constant element, forwarding sees the stores.
        let constant = short_memset("f32", "8", false).replace("gep %0, %2, 4", "gep %0, 2, 4");
        let out = same_behaviour(&constant, &["memforward"], "0");
        assert!(out.contains("fptosi 0.0"), "{out}");
        let out = run(&short_memset("i32", "16", false), &["memforward"]);
        assert!(!out.contains("call @memset"), "{out}");
        assert_eq!(out.matches("store 0,").count(), 4, "{out}");
        // Must not fire: longer than SMALL_MEMSET, or global memory.
        let out = run(&short_memset("i32", "20", false), &["memforward"]);
        assert!(out.contains("call @memset"), "{out}");
        let out = run(&short_memset("i32", "8", true), &["memforward"]);
        assert!(out.contains("call @memset"), "{out}");
    }

    #[test]
    fn a_load_at_a_variable_index_reads_the_byte_where_nothing_overwrote_it() {
        let index =
            |lo: &str| format!("  %20 = call @getint()\n  %21 = and %20, 7\n  %22 = add %21, {lo}");
        // Elements 8 to 15: element 1 was stored, not those.
        let out = same_behaviour(
            &cleared("0", "%22", &index("8"), false),
            &["memforward"],
            "3",
        );
        assert!(out.contains("add 0, 0"), "{out}");
        // Elements 0 to 7 include element 1.
        let out = same_behaviour(
            &cleared("0", "%22", &index("0"), false),
            &["memforward"],
            "1",
        );
        assert!(out.contains("load i32"), "{out}");
        // Odd elements stored at a variable index leave the even ones cleared.
        let odd = format!(
            "{}\n  %23 = gep %0, %21, 8\n  %24 = gep %23, 1, 4\n  store 9, %24",
            index("0")
        );
        let even = cleared("0", "%21", &odd, false).replace("gep %0, %21, 4", "gep %0, %21, 8");
        let out = same_behaviour(&even, &["memforward"], "2");
        assert!(out.contains("add 0, 0"), "{out}");
        let out = run(
            &even.replace("%4 = gep %0, %21, 8", "%4 = gep %23, 1, 4"),
            &["memforward"],
        );
        assert!(out.contains("load i32"), "{out}");
    }

    /// `int t[3] = {}` as three stores of 0, then `t[i % 3]` at a variable
    /// index: 0 wherever the index points (offsets out of the array are no
    /// access). TAIL replaces the last store, CALL goes before the load.
    const STORED_ZEROS: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putarray(i32, ptr) -> void

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 3]
  %1 = gep %0, 1, 4
  %2 = gep %0, 2, 4
  %3 = call @getint()
  store 0, %0
  store 0, %1
  TAIL
  %4 = srem %3, 3
  br %4, bb1, bb1
bb1:
  %5 = gep %0, %4, 4
  CALL
  %6 = load i32, %5
  call @putint(%6)
  ret 0
}
"#;

    #[test]
    fn a_load_of_a_window_every_location_of_which_holds_one_value_reads_it() {
        let src = STORED_ZEROS
            .replace("TAIL", "store 0, %2")
            .replace("  CALL\n", "");
        let out = same_behaviour(&src, &["memforward"], "5");
        assert!(out.contains("call @putint(0)"), "{out}");
        // Must not fire: another value in one location, a location not known,
        // a call that sees the array in between.
        for (tail, call) in [
            ("store 1, %2", ""),
            ("%7 = add %3, 0", ""),
            ("store 0, %2", "call @putarray(3, %0)"),
        ] {
            let src = STORED_ZEROS.replace("TAIL", tail).replace("CALL", call);
            for input in ["2", "4"] {
                let out = same_behaviour(&src, &["memforward"], input);
                assert!(out.contains("load i32"), "{tail} {call}: {out}");
            }
        }
    }

    /// A row `i = 4, 6, ..., 12` of a `float a[520][5]` cleared on every
    /// iteration: the load of `a[i][2]` reads the byte once the counter's range
    /// stays below the compared constant (`i + 2 < 14`); with the row read from
    /// the input it may fall outside the cleared rows.
    const LOOP_FILL: &str = r#"
declare @getint() -> i32
declare @putfloat(f32) -> void
declare @memset(ptr, i32, i64) -> ptr

func @main() -> i32 {
bb0:
  %20 = call @getint()
  %0 = alloc [f32; 2600]
  %1 = sext LEN
  jump bb1(4, 1.5)
bb1(%2: i32, %3: f32):
  %4 = call @memset(%0, 0, %1)
  %5 = gep %0, ROW, 20
  %6 = gep %5, 2, 4
  %7 = load f32, %6
  %8 = fadd %3, %7
  %9 = add %2, 2
  %10 = slt %9, 14
  br %10, bb1(%9, %8), bb2
bb2:
  call @putfloat(%8)
  ret 0
}
"#;

    #[test]
    fn a_counter_stepping_by_two_reads_the_fill_in_its_loop() {
        let src = LOOP_FILL.replace("LEN", "10400").replace("ROW", "%2");
        let out = same_behaviour(&src, &["memforward"], "");
        assert!(!out.contains("load") && !out.contains("alloc"), "{out}");
        // Only the first 12 rows cleared (row 12 is not).
        let short = LOOP_FILL.replace("LEN", "240").replace("ROW", "%2");
        let out = run(&short, &["memforward"]);
        assert!(out.contains("load f32"), "{out}");
        let param = LOOP_FILL.replace("LEN", "10400").replace("ROW", "%20");
        let out = run(&param, &["memforward"]);
        assert!(out.contains("load f32"), "{out}");
    }

    #[test]
    fn a_load_the_fill_does_not_answer_stays() {
        // Outside the cleared 64 elements (the array is 64 long: index 64 would be
        // past the end, so clear fewer bytes instead).
        let short = cleared("0", "40", "", false).replace("sext 256", "sext 128");
        let out = run(&short, &["memforward"]);
        assert!(out.contains("load i32"), "{out}");
        // A store at an unknown offset may have hit it.
        let unknown = cleared(
            "0",
            "7",
            "  %20 = call @getint()\n  %21 = gep %0, %20, 4\n  store 9, %21",
            false,
        );
        let out = same_behaviour(&unknown, &["memforward"], "7");
        assert!(out.contains("load i32"), "{out}");
        // Another call that sees the array may change it.
        let seen = cleared("0", "7", "  call @g(%0)", false).replace(
            "declare @getint() -> i32",
            "declare @getint() -> i32\ndeclare @g(ptr) -> void",
        );
        let out = run(&seen, &["memforward"]);
        assert!(out.contains("load i32"), "{out}");
        // A byte-sized overlap: an 8-byte pointer store over elements 6 and 7.
        let partial = cleared(
            "0",
            "7",
            "  %22 = gep %0, 6, 4\n  %23 = alloc i32\n  store %23, %22",
            false,
        );
        let out = run(&partial, &["memforward"]);
        assert!(out.contains("load i32"), "{out}");
    }
}

#[cfg(test)]
mod unread_tests {
    use crate::passes::testutil::same_behaviour;

    /// An array read on one arm and filled by a loop on the other before the
    /// function returns; AFTER follows the fill.
    const FILL: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putarray(i32, ptr) -> void

func @main() -> i32 {
bb0:
  %a = alloc [i32; 8]
  %n = call @getint()
  %i = and %n, 7
  %p = gep %a, %i, 4
  store %n, %p
  %c = slt %n, 4
  br %c, bb1, bb2(0)
bb1:
  %v = load i32, %a
  call @putint(%v)
  ret 0
bb2(%k: i32):
  %q = gep %a, %k, 4
  store 9, %q
  %k1 = add %k, 1
  %d = slt %k1, 8
  br %d, bb2(%k1), bb3
bb3:
AFTER
  ret 1
}
"#;

    #[test]
    fn stores_no_read_follows_are_deleted() {
        // The loop's stores reach only the return: they go; the first store is
        // read on the other arm and stays.
        for input in ["0", "5"] {
            let out = same_behaviour(&FILL.replace("AFTER", ""), &["memforward"], input);
            assert_eq!(out.matches("store").count(), 1, "{out}");
        }
    }

    #[test]
    fn stores_a_later_read_may_see_stay() {
        // A load after the loop reads what it stored.
        let src = FILL.replace("AFTER", "  %w = load i32, %a\n  call @putint(%w)");
        let out = same_behaviour(&src, &["memforward"], "5");
        assert_eq!(out.matches("store").count(), 2, "{out}");
        // A call that sees the array may read it.
        let src = FILL.replace("AFTER", "  call @putarray(8, %a)");
        let out = same_behaviour(&src, &["memforward"], "5");
        assert_eq!(out.matches("store").count(), 2, "{out}");
        // A loop that reads the array on its next iteration keeps its store.
        let src = FILL.replace(
            "  %q = gep %a, %k, 4\n",
            "  %q = gep %a, %k, 4\n  %r = load i32, %q\n  call @putint(%r)\n",
        );
        let out = same_behaviour(&src.replace("AFTER", ""), &["memforward"], "5");
        assert_eq!(out.matches("store").count(), 2, "{out}");
    }

    /// An array of four written at `[2]` through the index `IDX`, then at `[2]`
    /// again, and read at `[2]`: `%0` is the input.
    const UNFOLDED: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %a = alloc [i32; 4]
  %i = IDX
  %p = gep %a, %i, 4
  store 5, %p
  %q = gep %a, 2, 4
  store 7, %q
  %r = gep %a, %i, 4
  %v = load i32, %r
  call @putint(%v)
  ret 0
}
"#;

    #[test]
    fn index_arithmetic_left_unfolded_is_a_constant_offset() {
        // `add 1, 1` (full unrolling's counter before instcombine folds it) is
        // element 2: the first store is dead and the load reads 7.
        let out = same_behaviour(&UNFOLDED.replace("IDX", "add 1, 1"), &["memforward"], "3");
        assert!(out.contains("call @putint(7)"), "{out}");
        assert!(!out.contains("store 5"), "{out}");
        assert!(!out.contains("load"), "{out}");
    }

    #[test]
    fn an_index_with_several_values_is_not_a_constant_offset() {
        // `and %0, 2` is 0 or 2: the store of 5 may be to another element, and
        // the load may read it.
        for input in ["0", "2"] {
            let out = same_behaviour(
                &UNFOLDED.replace("IDX", "and %0, 2"),
                &["memforward"],
                input,
            );
            assert!(out.contains("store 5"), "{out}");
            assert!(out.contains("load"), "{out}");
        }
    }

    /// `a[1]` stored on every iteration of a loop, `a[2]` and `a[3]` before it,
    /// then `a[IDX]` read after it, `%x` being the input.
    const LAST_ROW: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %x = call @getint()
  %a = alloc [i32; 8]
  %p2 = gep %a, 2, 4
  store %x, %p2
  %p3 = gep %a, 3, 4
  store 9, %p3
  jump bb1(0)
bb1(%i: i32):
  %p1 = gep %a, 1, 4
  %m = mul %i, %x
  store %m, %p1
BETWEEN
  %n = add %i, 1
  %c = slt %n, 4
  br %c, bb1(%n), bb2
bb2:
  %k = IDX
  %q = gep %a, %k, 4
  %v = load i32, %q
  call @putint(%v)
  ret 0
}
"#;

    #[test]
    fn a_store_no_overlapping_read_follows_is_deleted() {
        // `2 + (x < 0)` is 2 or 3: never element 1, so the loop's store goes
        // (the stores before the loop stay).
        let src = LAST_ROW
            .replace("BETWEEN\n", "")
            .replace("IDX", "slt %x, 0\n  %k2 = add %k, 2")
            .replace("gep %a, %k, 4", "gep %a, %k2, 4");
        for input in ["-3", "5"] {
            let out = same_behaviour(&src, &["memforward"], input);
            assert_eq!(out.matches("store").count(), 2, "{out}");
        }
    }

    #[test]
    fn a_store_a_later_read_may_overlap_stays() {
        // `x & 3` may be 1.
        let src = LAST_ROW
            .replace("BETWEEN\n", "")
            .replace("IDX", "and %x, 3");
        for input in ["1", "2"] {
            let out = same_behaviour(&src, &["memforward"], input);
            assert_eq!(out.matches("store").count(), 3, "{out}");
        }
        // Read on the next iteration (before the store that overwrites it); the
        // read after the loop is forwarded, and the store of `%x` before it goes
        // (the constant `a[3] = 9`, never read, is left to the allocation-wide
        // rule, which the loop's read of `a[1]` keeps from firing).
        let src = LAST_ROW
            .replace(
                "  %p1 = gep %a, 1, 4\n",
                "  %p1 = gep %a, 1, 4\n  %o = load i32, %p1\n  call @putint(%o)\n",
            )
            .replace("BETWEEN\n", "")
            .replace("IDX", "add 2, 0");
        let out = same_behaviour(&src, &["memforward"], "3");
        assert_eq!(out.matches("store").count(), 2, "{out}");
        assert!(!out.contains("store %0"), "{out}");
        assert!(out.contains("call @putint(%0)"), "{out}");
    }
}

#[cfg(test)]
mod variable_fill_tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// An `int a[4][16]` cleared, then, on one arm of a branch (or in the same
    /// block), `SIZE` bytes from `a[row][1]` set to `BYTE` for a row read from
    /// the input (`ROW`: in `[0, 3]`, or not bounded); the join loads `a[IDX]`.
    /// (Fills longer than [`super::SMALL_MEMSET`] stay calls.)
    const ROW_FILL: &str = r#"
declare @memset(ptr, i32, i64) -> ptr
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 64]
  %1 = sext 256
  %2 = call @memset(%0, 0, %1)
  %3 = call @getint()
  %4 = and %3, 3
  %12 = call @getint()
  br %3, bb1, bb2
bb1:
  %6 = gep %0, ROW, 64
  %7 = gep %6, 1, 4
  %8 = sext SIZE
  %9 = call @memset(%7, BYTE, %8)
  jump bb2
bb2:
  %10 = gep %0, IDX, 4
  %11 = load i32, %10
  call @putint(%11)
  ret 0
}
"#;

    fn row_fill(row: &str, size: &str, byte: &str, idx: &str) -> String {
        ROW_FILL
            .replace("ROW", row)
            .replace("SIZE", size)
            .replace("BYTE", byte)
            .replace("IDX", idx)
    }

    #[test]
    fn a_row_fill_on_a_branch_leaves_the_columns_it_skips_known() {
        // Columns 1 to 8 of some row set to 1: `a[2][12]` (distance 44 modulo
        // the row's 64 bytes from the fill's start) still reads the first
        // fill's 0.
        let out = same_behaviour(&row_fill("%4", "32", "1", "44"), &["memforward"], "6 0");
        assert!(!out.contains("load"), "{out}");
        // With the row not bounded, the stride alone decides.
        let out = same_behaviour(&row_fill("%12", "32", "1", "44"), &["memforward"], "6 0");
        assert!(!out.contains("load"), "{out}");
        // A fill of the first fill's byte changes nothing it may touch.
        let out = same_behaviour(&row_fill("%4", "32", "0", "33"), &["memforward"], "6 0");
        assert!(!out.contains("load"), "{out}");
    }

    #[test]
    fn a_row_fill_that_may_cover_the_element_keeps_the_load() {
        // `a[2][1]` is column 1 of row 2, which the fill sets when the input says
        // so; `a[2][12]` lies 44 bytes past the fill's start, inside its 48 bytes.
        for (size, idx) in [("32", "33"), ("48", "44")] {
            let src = row_fill("%4", size, "1", idx);
            let out = same_behaviour(&src, &["memforward"], "6 0");
            assert!(out.contains("load i32"), "{out}");
            let out = same_behaviour(&src, &["memforward"], "2 0");
            assert!(out.contains("load i32"), "{out}");
        }
        // A fill of a length not known may reach anywhere.
        let src = row_fill("%4", "32", "1", "44").replace("%8 = sext 32", "%8 = sext %12");
        let out = run(&src, &["memforward"]);
        assert!(out.contains("load i32"), "{out}");
    }

    #[test]
    fn a_row_fill_in_the_same_block_forgets_only_what_it_may_cover() {
        // The fill moved into the first block, before the branch.
        let straight = |idx: &str| {
            row_fill("%4", "32", "1", idx)
                .replace("  br %3, bb1, bb2\nbb1:\n", "")
                .replace("  jump bb2\nbb2:\n", "")
        };
        let out = same_behaviour(&straight("44"), &["memforward"], "6 0");
        assert!(!out.contains("load"), "{out}");
        let out = same_behaviour(&straight("17"), &["memforward"], "5 0");
        assert!(out.contains("load i32"), "{out}");
    }
}
