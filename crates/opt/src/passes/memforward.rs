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
//!    constant indices):
//!    - a load of a location whose contents are known (stored or loaded earlier in the
//!      block, with the same type) is replaced by that value (store-to-load and
//!      load-to-load forwarding);
//!    - a store of the value a location already holds is removed;
//!    - a store overwritten by a later store to the same location, with no possible
//!      read in between, is removed (dead store elimination), and so are stores not
//!      read before a `ret` (the frame dies);
//!    - a store at an unknown offset forgets everything known about that allocation;
//!      a load at an unknown offset counts as a read of all of it; a call forgets
//!      what it knows about, and counts as reading, the allocations passed to calls.
//!
//! Memory not from a local `alloc` (globals, pointer parameters) is left alone: calls
//! and other pointers may alias it. This is the local (basic-block) redundant load and
//! dead store elimination of the textbooks (Muchnick, "Advanced Compiler Design and
//! Implementation", 13.1), restricted to memory that provably has no other name.

use crate::analysis::address_root;
use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::{FunctionPass, Pass};
use ir::{Block, Function, Inst, InstKind, Module, SecondaryMap, Value};
use rustc_hash::FxHashSet;

/// The memforward pass.
pub struct MemForward;

impl Pass for MemForward {
    fn name(&self) -> &'static str {
        "memforward"
    }
    fn description(&self) -> &'static str {
        "store-to-load forwarding and dead store elimination for local memory"
    }
    fn run(&self, m: &mut Module) -> bool {
        super::each_function(m, run)
    }
    fn function_pass(&self) -> Option<&dyn FunctionPass> {
        Some(self)
    }
    /// Rewrites instructions only: no block or edge changes.
    fn preserves(&self) -> Preserved {
        Preserved::CFG.with_other_functions()
    }
}

impl FunctionPass for MemForward {
    fn run_on(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
        run(f)
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
fn classify(f: &Function) -> Vec<(Value, AllocInfo, Vec<Inst>)> {
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
fn resolve(f: &Function, p: Value) -> Option<(Value, Option<i64>)> {
    let (root, off) = address_root(f, p);
    let alloc = f.def_inst(root)?;
    matches!(f.kind(alloc), InstKind::Alloc { .. }).then_some((root, off))
}

/// A location: allocation, byte offset, size in bytes.
type Loc = super::locmap::Loc<Value>;
use super::locmap::LocMap;

/// Runs memforward over `f`.
pub fn run(f: &mut Function) -> bool {
    let mut changed = false;
    let mut tracked: SecondaryMap<Value, bool> = SecondaryMap::new();
    let mut call_visible: Vec<Value> = Vec::new();
    for (a, info, derived) in classify(f) {
        if info.escaped {
            continue;
        }
        if !info.loaded && !info.call_visible {
            remove_write_only(f, a, &derived);
            changed = true;
            continue;
        }
        tracked[a] = true;
        if info.call_visible {
            call_visible.push(a);
        }
    }
    let blocks: Vec<Block> = f.layout.blocks().collect();
    for b in blocks {
        changed |= forward_in_block(f, b, &tracked, &call_visible);
    }
    changed
}

/// Step 1: deletes every store to allocation `a` (never read), then its `gep`s and the
/// allocation itself.
fn remove_write_only(f: &mut Function, a: Value, derived: &[Inst]) {
    for &i in derived {
        if matches!(f.kind(i), InstKind::Store { .. }) {
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

/// Step 2 for one block.
fn forward_in_block(
    f: &mut Function,
    b: Block,
    tracked: &SecondaryMap<Value, bool>,
    call_visible: &[Value],
) -> bool {
    let mut changed = false;
    // Known contents, and stores not (yet) possibly read.
    let mut known: LocMap<Value, Value> = LocMap::new();
    let mut pending: LocMap<Value, Inst> = LocMap::new();
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    for i in insts {
        match *f.kind(i) {
            InstKind::Load { ty, ptr } => {
                let Some((alloc, off)) = resolve(f, ptr) else {
                    continue;
                };
                if !tracked[alloc] {
                    continue;
                }
                let Some(off) = off else {
                    pending.forget_object(alloc);
                    continue;
                };
                let loc = Loc {
                    obj: alloc,
                    off,
                    size: ty.size() as i64,
                };
                let r = f.inst_result(i).expect("load has a result");
                let hit = known.at(loc).find(|&v| f.value_type(v) == ty);
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
                let Some((alloc, off)) = resolve(f, ptr) else {
                    continue;
                };
                if !tracked[alloc] {
                    continue;
                }
                let Some(off) = off else {
                    known.forget_object(alloc);
                    continue;
                };
                let loc = Loc {
                    obj: alloc,
                    off,
                    size: f.value_type(value).size() as i64,
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
                for &a in call_visible {
                    known.forget_object(a);
                    pending.forget_object(a);
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
    changed
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
