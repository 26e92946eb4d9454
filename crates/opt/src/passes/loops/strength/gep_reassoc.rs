//! Reassociation of nested address arithmetic so the part that varies in a loop is
//! outermost: `gep (gep base, i, s1), j, s2` with `base` and `j` loop-invariant and
//! `i` varying becomes `gep (gep base, j, s2), i, s1`, whose inner gep moves to the
//! preheader. The address is the same (`base + i * s1 + j * s2`, each index
//! sign-extended on its own, in wrapping 64-bit pointer arithmetic), and the outer gep
//! now has an invariant base, which strength reduction turns into a pointer that
//! advances by `s1` per step: `b[k][j]` in a loop over `k` (a column walk) costs one
//! add per iteration instead of a shift and two adds.
//!
//! When `j` is `j0 + c` for a constant `c` (an exact addition: its value range,
//! from the analysis manager's [`Ranges`], is not the full one, which an addition
//! that may wrap gets), the
//! inner gep takes `j0` and `c` stays as a constant offset, so the neighbours
//! `b[k][j - 1]`, `b[k][j]`, `b[k][j + 1]` share one pointer. A constant `j` is left
//! where it is: it is already a constant offset from the pointer the inner gep
//! becomes.
//!
//! An inner gep computed already where the preheader ends (in a block that
//! dominates it) is reused rather than hoisted again, as LLVM's `SCEVExpander`
//! reuses an existing value: `b[i][j]` and the column walk `b[k][j]` from `k = i`
//! then have the same base `&b[i]`, and strength reduction gives their rows one
//! pointer over `j`, not two with the same start.

use crate::analysis::ranges::{Range, Ranges};
use ir::analysis::DominatorTree;
use ir::{Block, Function, Inst, InstKind, Type, Value};
use rustc_hash::FxHashMap;

/// Rewrites the nested geps of the loop made of `blocks` (whose values `in_loop`
/// tells), hoisting the new inner geps to the end of `preheader` unless computed
/// already; returns how many.
pub fn reassociate(
    f: &mut Function,
    ranges: &Ranges,
    dt: &DominatorTree,
    blocks: &[Block],
    preheader: Block,
    in_loop: &dyn Fn(&Function, Value) -> bool,
) -> usize {
    let mut candidates: Vec<(Inst, Value, Value, u32, Value, u32)> = Vec::new();
    for &b in blocks {
        for g in f.layout.block_insts(b) {
            let InstKind::Gep {
                base: inner,
                index: j,
                stride: s2,
            } = *f.kind(g)
            else {
                continue;
            };
            let Some(inner_inst) = f.def_inst(inner) else {
                continue;
            };
            let InstKind::Gep {
                base,
                index: i,
                stride: s1,
            } = *f.kind(inner_inst)
            else {
                continue;
            };
            // A constant `j` is already a constant offset from the walking pointer
            // the inner gep becomes: reassociated, every constant would start a
            // pointer of its own (a fully unrolled inner loop's 32 columns, 32
            // pointers).
            if in_loop(f, inner)
                && !in_loop(f, base)
                && !in_loop(f, j)
                && in_loop(f, i)
                && f.as_iconst(j).is_none()
            {
                candidates.push((g, base, i, s1, j, s2));
            }
        }
    }
    let term = f.terminator(preheader).expect("preheader ends in a jump");
    // One hoisted gep per (base, j0, s2), so accesses to neighbouring columns share
    // it and, after strength reduction, one pointer.
    let mut hoisted_geps: FxHashMap<(Value, Value, u32), Value> = FxHashMap::default();
    for &(g, base, i, s1, j, s2) in &candidates {
        let (j0, c) = exact_constant_term(f, ranges, j);
        let hoisted = *hoisted_geps.entry((base, j0, s2)).or_insert_with(|| {
            if let Some(h) = super::computed_gep(f, dt, preheader, base, j0, s2) {
                return h;
            }
            let h = f.insert_inst_before(
                term,
                InstKind::Gep {
                    base,
                    index: j0,
                    stride: s2,
                },
                Type::Ptr,
            );
            f.inst_result(h).expect("gep has a result")
        });
        let walk = InstKind::Gep {
            base: hoisted,
            index: i,
            stride: s1,
        };
        if c == 0 {
            f.replace_kind(g, walk);
        } else {
            let walk = f.insert_inst_before(g, walk, Type::Ptr);
            let walk = f.inst_result(walk).expect("gep has a result");
            let c = f.iconst(i32::try_from(c).expect("peeled from an i32 constant"));
            f.replace_kind(
                g,
                InstKind::Gep {
                    base: walk,
                    index: c,
                    stride: s2,
                },
            );
        }
    }
    candidates.len()
}

/// `(x, c)` when `v` is `add x, c` for a constant `c` and the addition never
/// wraps (its range is not the full one), else `(v, 0)`.
fn exact_constant_term(f: &Function, ranges: &Ranges, v: Value) -> (Value, i64) {
    let def = f.def_inst(v).map(|i| f.kind(i));
    if let Some(InstKind::Binary {
        op: ir::BinOp::Add,
        args: [x, y],
    }) = def
    {
        let exact = ranges.of(f, v).is_some_and(|r| r != Range::FULL);
        if let (Some(c), true) = (f.as_iconst(*y), exact) {
            return (*x, i64::from(c));
        }
    }
    (v, 0)
}
