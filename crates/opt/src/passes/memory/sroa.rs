//! Scalar replacement of aggregates: a local array whose every access is at a
//! constant position becomes one scalar slot per element used, and the slots
//! become SSA values.
//!
//! SROA (LLVM's `SROA` pass, GCC's `tree-sra`; Muchnick, "Advanced Compiler Design
//! and Implementation", 12.2 "Scalar Replacement of Aggregates"). An `alloc` of
//! `i32` or `f32` elements qualifies when its address is used only as the base of
//! `gep`s with constant indices (themselves used the same way) and as the address
//! of loads and stores: never stored as a value, passed to a call or a block, or
//! compared; or as the pointer of a `memset` with a constant byte and length whose
//! result is unused (how a local array is zeroed before its initialiser's
//! elements are stored). Every access must then be one whole element inside the
//! array (a `memset` whole elements), and all the accesses of one element must
//! have the same type. Each element loaded or stored gets its own `alloc` of one
//! element, the loads and stores move to it, a `memset` becomes stores of the
//! repeated byte to the slots in its range (as LLVM's SROA splits a `memset` over
//! the slices it covers), and [`crate::ssa::mem2reg`] turns the slots into values
//! and block parameters.
//! `memforward` only forwards within a block; here a small table such as
//! `float t[1][2]` indexed by folded constants lives in registers across the
//! whole function.

use crate::analysis::{AnalysisManager, Preserved};
use crate::passes::loops::loopidiom::{memset_call, memset_of};
use crate::pipeline::Pass;
use ir::{FuncId, Function, Inst, InstKind, Module, Type, Value};

/// The scalar replacement pass.
pub struct Sroa;

/// Arrays longer than this are left alone (each element becomes a live value).
const MAX_ELEMS: u32 = 64;

impl Pass for Sroa {
    fn name(&self) -> &'static str {
        "sroa"
    }
    fn description(&self) -> &'static str {
        "split local arrays accessed only at constant positions into scalars (SROA)"
    }
    /// Through the manager, so that it knows which functions changed (a split
    /// `memset` call leaves the function's purity summary).
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let memset = memset_of(m);
        am.each_function(m, |f, _| run(f, memset))
    }
    /// Rewrites instructions only: no block or edge changes.
    fn preserves(&self) -> Preserved {
        Preserved::CFG.with_other_functions()
    }
}

/// Splits the qualifying arrays of `f` and promotes the pieces; whether anything
/// changed.
pub fn run(f: &mut Function, memset: Option<FuncId>) -> bool {
    if f.is_declaration() {
        return false;
    }
    let mut allocs = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            if let InstKind::Alloc { elem, len } = *f.kind(i) {
                if (elem == Type::I32 || elem == Type::F32) && (2..=MAX_ELEMS).contains(&len) {
                    allocs.push(i);
                }
            }
        }
    }
    let mut split = false;
    for a in allocs {
        if let Some(accesses) = accesses(f, a, memset) {
            replace(f, a, &accesses);
            split = true;
        }
    }
    if split {
        crate::ssa::mem2reg(f);
    }
    split
}

/// One use of an array being split.
enum Access {
    /// A load or store of element `.1`.
    Element(Inst, u32),
    /// A `memset` of elements `.1...2` with byte `.3`.
    Fill(Inst, u32, u32, u8),
}

/// The uses of the array `a` with the elements each touches, when all its uses
/// qualify.
fn accesses(f: &Function, a: Inst, memset: Option<FuncId>) -> Option<Vec<Access>> {
    let InstKind::Alloc { elem, len } = *f.kind(a) else {
        return None;
    };
    let size = i64::from(elem.size());
    let root = f.inst_result(a)?;
    let mut out = Vec::new();
    let mut fills = Vec::new();
    // (pointer, its byte offset in the array)
    let mut work: Vec<(Value, i64)> = vec![(root, 0)];
    let mut ty_of: Vec<Option<Type>> = vec![None; len as usize];
    let end = size * i64::from(len);
    while let Some((p, off)) = work.pop() {
        for &u in f.users(p) {
            match *f.kind(u) {
                InstKind::Gep {
                    base,
                    index,
                    stride,
                } if base == p && index != p => {
                    let k = i64::from(f.as_iconst(index)?);
                    let q = f.inst_result(u)?;
                    work.push((q, off.checked_add(k.checked_mul(i64::from(stride))?)?));
                }
                InstKind::Load { ty, ptr } if ptr == p => out.push((u, ty, off)),
                InstKind::Store { value, ptr } if ptr == p && value != p => {
                    out.push((u, f.value_type(value), off))
                }
                InstKind::Call { .. } => {
                    let (ptr, byte, bytes) = memset_call(f, memset, u)?;
                    let bytes = bytes?;
                    let unused = f.inst_result(u).is_none_or(|r| f.users(r).is_empty());
                    if ptr != p
                        || !unused
                        || off < 0
                        || off % size != 0
                        || bytes % size != 0
                        || off + bytes > end
                    {
                        return None;
                    }
                    fills.push(Access::Fill(
                        u,
                        (off / size) as u32,
                        ((off + bytes) / size) as u32,
                        byte,
                    ));
                }
                _ => return None,
            }
        }
    }
    let mut res = Vec::with_capacity(out.len() + fills.len());
    for (u, ty, off) in out {
        if i64::from(ty.size()) != size || off < 0 || off % size != 0 || off >= end {
            return None;
        }
        let e = (off / size) as usize;
        if *ty_of[e].get_or_insert(ty) != ty {
            return None;
        }
        res.push(Access::Element(u, e as u32));
    }
    // Only the element types mem2reg promotes.
    if ty_of
        .iter()
        .flatten()
        .any(|&t| t != Type::I32 && t != Type::F32)
    {
        return None;
    }
    res.extend(fills);
    Some(res)
}

/// Gives each loaded or stored element of `a` its own slot, placed before `a`,
/// points the accesses at it, and turns each `memset` into stores to the slots in
/// its range; the array and its `gep`s are left for `dce`.
fn replace(f: &mut Function, a: Inst, accesses: &[Access]) {
    let InstKind::Alloc { len, .. } = *f.kind(a) else {
        unreachable!("replace is given an alloc");
    };
    let mut slot: Vec<Option<(Value, Type)>> = vec![None; len as usize];
    for acc in accesses {
        let &Access::Element(u, e) = acc else {
            continue;
        };
        let ty = match *f.kind(u) {
            InstKind::Load { ty, .. } => ty,
            InstKind::Store { value, .. } => f.value_type(value),
            _ => unreachable!("element accesses are loads and stores"),
        };
        let s = match slot[e as usize] {
            Some((s, _)) => s,
            None => {
                let i = f.insert_inst_before(a, InstKind::Alloc { elem: ty, len: 1 }, Type::Ptr);
                let s = f.inst_result(i).expect("alloc has a result");
                slot[e as usize] = Some((s, ty));
                s
            }
        };
        let kind = match *f.kind(u) {
            InstKind::Load { ty, .. } => InstKind::Load { ty, ptr: s },
            InstKind::Store { value, .. } => InstKind::Store { value, ptr: s },
            _ => unreachable!("element accesses are loads and stores"),
        };
        f.replace_kind(u, kind);
    }
    for acc in accesses {
        let &Access::Fill(call, from, to, byte) = acc else {
            continue;
        };
        let word = u32::from(byte) * 0x0101_0101;
        for e in from..to {
            let Some((s, ty)) = slot[e as usize] else {
                continue;
            };
            let value = if ty == Type::F32 {
                f.fconst(f32::from_bits(word))
            } else {
                f.iconst(word as i32)
            };
            let st = f.insert_inst_before(call, InstKind::Store { value, ptr: s }, Type::Void);
            f.copy_src_loc(call, st);
        }
        f.remove_inst(call);
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    const PRELUDE: &str =
        "declare @putint(i32) -> void\ndeclare @putfloat(f32) -> void\ndeclare @getint() -> i32\n";

    /// A two-element array written in one branch and read after the join becomes
    /// values: no `alloc`, no load, a block parameter at the join.
    #[test]
    fn splits_array_accessed_at_constant_positions() {
        let src = format!(
            "{PRELUDE}
func @main() -> i32 {{
bb0:
  %0 = alloc [f32; 2]
  %1 = gep %0, 1, 4
  store 0.0, %0
  store 1.5, %1
  %2 = call @getint()
  br %2, bb1, bb2
bb1:
  store 2.5, %1
  jump bb2
bb2:
  %3 = load f32, %1
  %4 = load f32, %0
  %5 = fadd %3, %4
  call @putfloat(%5)
  ret 0
}}
"
        );
        // `dce` first caches the purity summaries: the `memset` calls sroa removes
        // must leave `main`'s (difftest seed 560472: "stale purity summary").
        for input in ["0", "1"] {
            let out = same_behaviour(&src, &["dce", "sroa", "dce"], input);
            assert!(!out.contains("alloc"), "{out}");
            assert!(!out.contains("load"), "{out}");
        }
    }

    /// Nested `gep`s with constant indices (a two-dimensional local) qualify.
    #[test]
    fn follows_nested_constant_geps() {
        let src = format!(
            "{PRELUDE}
func @main() -> i32 {{
bb0:
  %0 = alloc [i32; 4]
  %1 = gep %0, 1, 8
  %2 = gep %1, 1, 4
  store 7, %2
  %3 = gep %0, 3, 4
  %4 = load i32, %3
  call @putint(%4)
  ret 0
}}
"
        );
        let out = same_behaviour(&src, &["sroa", "dce"], "");
        assert!(!out.contains("alloc"), "{out}");
    }

    /// A variable index, a call that sees the array, or an access of the wrong
    /// type keep the array in memory.
    #[test]
    fn keeps_arrays_it_cannot_split() {
        let variable = format!(
            "{PRELUDE}
func @main() -> i32 {{
bb0:
  %0 = alloc [i32; 2]
  %1 = gep %0, 1, 4
  store 3, %0
  store 4, %1
  %2 = call @getint()
  %3 = gep %0, %2, 4
  %4 = load i32, %3
  call @putint(%4)
  ret 0
}}
"
        );
        let out = same_behaviour(&variable, &["sroa", "dce"], "1");
        assert!(out.contains("alloc [i32; 2]"), "{out}");

        let escapes = format!(
            "{PRELUDE}
declare @putarray(i32, ptr) -> void
func @main() -> i32 {{
bb0:
  %0 = alloc [i32; 2]
  %1 = gep %0, 1, 4
  store 3, %0
  store 4, %1
  call @putarray(2, %0)
  ret 0
}}
"
        );
        let out = same_behaviour(&escapes, &["sroa", "dce"], "");
        assert!(out.contains("alloc [i32; 2]"), "{out}");

        let mixed = format!(
            "{PRELUDE}
func @main() -> i32 {{
bb0:
  %0 = alloc [i32; 2]
  store 1.0, %0
  %1 = load i32, %0
  call @putint(%1)
  ret 0
}}
"
        );
        let out = same_behaviour(&mixed, &["sroa", "dce"], "");
        assert!(out.contains("alloc [i32; 2]"), "{out}");
    }

    /// A zeroing `memset` of the whole array becomes stores of 0 to the slots; a
    /// `memset` of part of it (from element 1, two elements) only covers those.
    #[test]
    fn splits_memsets_into_stores() {
        let src = format!(
            "{PRELUDE}
declare @memset(ptr, i32, i64) -> ptr
func @main() -> i32 {{
bb0:
  %0 = alloc [f32; 4]
  %1 = sext 16
  %2 = call @memset(%0, 0, %1)
  %3 = gep %0, 3, 4
  store 2.5, %3
  %4 = gep %0, 1, 4
  %5 = sext 8
  %6 = call @memset(%4, 255, %5)
  %7 = call @getint()
  br %7, bb1, bb2
bb1:
  store 1.5, %0
  jump bb2
bb2:
  %8 = load f32, %0
  %9 = load f32, %3
  %10 = gep %0, 2, 4
  %11 = load i32, %10
  %12 = fadd %8, %9
  call @putfloat(%12)
  call @putint(%11)
  ret 0
}}
"
        );
        // `dce` first caches the purity summaries: the `memset` calls sroa removes
        // must leave `main`'s (difftest seed 560472: "stale purity summary").
        for input in ["0", "1"] {
            let out = same_behaviour(&src, &["dce", "sroa", "dce"], input);
            assert!(
                !out.contains("alloc") && !out.contains("call @memset"),
                "{out}"
            );
            assert!(out.contains("call @putint(-1)"), "{out}");
        }
    }

    /// A `memset` whose result is used, or of part of an element, keeps the array.
    #[test]
    fn keeps_arrays_with_other_memsets() {
        for (len, use_result) in [("6", false), ("8", true)] {
            let tail = if use_result {
                "  %9 = load i32, %2\n  call @putint(%9)\n"
            } else {
                ""
            };
            let src = format!(
                "{PRELUDE}
declare @memset(ptr, i32, i64) -> ptr
func @main() -> i32 {{
bb0:
  %0 = alloc [i32; 4]
  %1 = sext {len}
  %2 = call @memset(%0, 1, %1)
  %3 = gep %0, 1, 4
  %4 = load i32, %3
  call @putint(%4)
{tail}  ret 0
}}
"
            );
            let out = same_behaviour(&src, &["sroa", "dce"], "");
            assert!(out.contains("alloc [i32; 4]"), "{out}");
        }
    }

    /// An access past the end (or between elements) is left as it is.
    #[test]
    fn keeps_arrays_with_out_of_range_offsets() {
        let src = format!(
            "{PRELUDE}
func @f(i32) -> i32 {{
bb0(%0: i32):
  %1 = alloc [i32; 2]
  %2 = gep %1, 2, 4
  store %0, %2
  %3 = gep %1, 3, 2
  %4 = load i32, %3
  ret %4
}}
"
        );
        let out = run(&src, &["sroa"]);
        assert!(out.contains("alloc [i32; 2]"), "{out}");
    }
}
