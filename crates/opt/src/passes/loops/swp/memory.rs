//! Which loads of a pipelined loop may run in the early stage although a store of
//! the loop writes the same alias region: a dependence test on the loop's
//! addresses written as a base plus constant bytes ([`PointerOffsets`]).
//!
//! This is the constant-distance case of array dependence testing (the GCD and
//! Banerjee tests reduce to it when every index steps by the same amount; Allen
//! and Kennedy, "Optimizing Compilers for Modern Architectures", §2-3), as
//! LLVM's `LoopAccessAnalysis` does it on SCEV `{start,+,step}` pairs with one
//! start minus the other constant. Two accesses of the loop's block with the same
//! base in one trip touch bytes a known distance apart; the base moves by a
//! constant `step` bytes from one trip to the next when its anchor and every
//! integer in it is loop-invariant or an induction variable of the block. Then:
//! - in one trip, a load moved above a store that comes before it in the body
//!   must touch other bytes (distance 0);
//! - the next trip's load runs beside this trip's late stage, whose stores the
//!   machine scheduler must be able to pass: it must touch other bytes than each
//!   of them at distance `step` (the kernel's cost is estimated that way).
//!
//! The test does not look at the trip count: two accesses it calls apart at
//! distance 0 and `step` may still meet several trips apart, which is fine, as
//! pipelining only brings adjacent trips together.

use crate::analysis::pointer_offsets::{Base, Offset, PointerOffsets};
use ir::{BinOp, Block, Function, Inst, InstKind, Value, ValueDef};
use rustc_hash::FxHashMap;

/// Whether the load `load` of loop `h` may run a trip early past the stores of
/// `stores` (every store of the body that may touch its alias region, in body
/// order, with whether each comes before the load). `next` are the arguments
/// of `h`'s back edge.
pub(super) fn load_may_run_early(
    f: &Function,
    h: Block,
    next: &[Value],
    offsets: &PointerOffsets,
    load: Inst,
    stores: &[(Inst, bool)],
) -> bool {
    let Some((at, bytes)) = access(f, offsets, load) else {
        return false;
    };
    let Some(step) = base_step(f, h, next, &at.base) else {
        return false;
    };
    stores.iter().all(|&(s, before)| {
        let Some((st, sbytes)) = access(f, offsets, s) else {
            return false;
        };
        if st.base != at.base {
            return false;
        }
        let apart = |shift: i64| {
            let Some(lo) = at.bytes.checked_add(shift) else {
                return false;
            };
            let distance = lo - st.bytes;
            distance.abs() < 1 << 31 && (lo + bytes <= st.bytes || st.bytes + sbytes <= lo)
        };
        (!before || apart(0)) && apart(step)
    })
}

/// An address and the width in bytes of what is accessed there.
type Access = (Offset, i64);

/// The address and width in bytes of load or store `i`.
fn access(f: &Function, offsets: &PointerOffsets, i: Inst) -> Option<Access> {
    let ty = match *f.kind(i) {
        InstKind::Load { ty, .. } => ty,
        InstKind::Store { value, .. } => f.value_type(value),
        _ => return None,
    };
    Some((offsets.access(f, i)?, i64::from(ty.size())))
}

/// How many bytes `base` moves from one trip of loop `h` to the next, when its
/// anchor and integer terms are invariant or induction variables of `h`.
fn base_step(f: &Function, h: Block, next: &[Value], base: &Base) -> Option<i64> {
    let mut step = value_step(f, h, next, base.anchor)?;
    for &(v, scale) in &base.terms {
        step = step.checked_add(value_step(f, h, next, v)?.checked_mul(scale)?)?;
    }
    Some(step)
}

/// How much `v` grows from one trip of loop `h` to the next: 0 for a value
/// defined outside the loop, `c` for a parameter whose next value is it plus the
/// constant `c` (bytes for a pointer); `None` otherwise.
fn value_step(f: &Function, h: Block, next: &[Value], v: Value) -> Option<i64> {
    match f.value_def(v) {
        ValueDef::Param(b, k) if b == h => {
            let mut n = *next.get(k as usize)?;
            let mut step = 0i64;
            // Follow constant increments back from the next value to `v`.
            for _ in 0..8 {
                if n == v {
                    return Some(step);
                }
                let d = f
                    .def_inst(n)
                    .filter(|&d| f.layout.inst_block(d) == Some(h))?;
                let (from, by) = match *f.kind(d) {
                    InstKind::Gep {
                        base,
                        index,
                        stride,
                    } => (base, i64::from(f.as_iconst(index)?) * i64::from(stride)),
                    InstKind::Binary {
                        op: BinOp::Add,
                        args: [a, c],
                    } => (a, i64::from(f.as_iconst(c)?)),
                    InstKind::Binary {
                        op: BinOp::Sub,
                        args: [a, c],
                    } => (a, -i64::from(f.as_iconst(c)?)),
                    _ => return None,
                };
                step = step.checked_add(by)?;
                n = from;
            }
            None
        }
        ValueDef::Param(..) => Some(0),
        ValueDef::Inst(i) if f.layout.inst_block(i) != Some(h) => Some(0),
        ValueDef::Inst(_) => None,
        ValueDef::IConst(_) | ValueDef::FConst(_) | ValueDef::Global(_) => Some(0),
    }
}

/// A partition of the loads and stores of `insts` (one trip of a loop body, in
/// order) into classes of accesses that may touch the same bytes in that trip,
/// as the machine scheduler tells them apart: two accesses are in one class when
/// one of them is a store, their alias regions may overlap, and their addresses
/// are not the same base at disjoint bytes. Transitively closed (union-find);
/// other instructions have no class.
pub(super) fn access_classes(
    f: &Function,
    offsets: &PointerOffsets,
    region: &dyn Fn(Inst) -> u32,
    insts: &[Inst],
) -> FxHashMap<Inst, u32> {
    // Each access: whether a store, its region, address and width.
    let accesses: Vec<(Inst, bool, u32, Option<Access>)> = insts
        .iter()
        .filter_map(|&i| {
            let store = match f.kind(i) {
                InstKind::Store { .. } => true,
                InstKind::Load { .. } => false,
                _ => return None,
            };
            Some((i, store, region(i), access(f, offsets, i)))
        })
        .collect();
    let mut parent: Vec<usize> = (0..accesses.len()).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for (a, (_, sa, ra, oa)) in accesses.iter().enumerate() {
        for (b, (_, sb, rb, ob)) in accesses.iter().enumerate().skip(a + 1) {
            if !(sa | sb) || (*ra != 0 && *rb != 0 && ra != rb) {
                continue;
            }
            let apart = match (oa, ob) {
                (Some((x, wx)), Some((y, wy))) => {
                    x.base == y.base
                        && (x.bytes - y.bytes).abs() < 1 << 31
                        && (x.bytes + wx <= y.bytes || y.bytes + wy <= x.bytes)
                }
                _ => false,
            };
            if !apart {
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                parent[ra] = rb;
            }
        }
    }
    (0..accesses.len())
        .map(|k| (accesses[k].0, root(&mut parent, k) as u32 + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accesses_of_other_bytes_of_one_base_are_in_other_classes() {
        let m = ir::parse_module(
            r#"
global @x: [i32; 64] = zeroinit

func @f(ptr, ptr) -> i32 {
bb0(%0: ptr, %9: ptr):
  %1 = gep %0, 1, 4
  %2 = load i32, %1
  store %2, %0
  %3 = load i32, %0
  %4 = load i32, %9
  %5 = gep %0, 2, 4
  %6 = load i32, %5
  %7 = add %3, %4
  %8 = add %7, %6
  ret %8
}
"#,
        )
        .unwrap();
        let f = m.funcs.values().next().unwrap();
        let offsets = PointerOffsets::compute(f);
        let insts: Vec<Inst> = f
            .layout
            .block_insts(f.layout.entry_block().unwrap())
            .collect();
        let classes = access_classes(f, &offsets, &|_| 1, &insts);
        let of = |k: usize| classes[&insts[k]];
        // insts: 0 gep, 1 load x[1], 2 store x[0], 3 load x[0], 4 load through
        // another pointer, 5 gep, 6 load x[2].
        assert_eq!(
            of(2),
            of(3),
            "a load of the stored bytes waits for the store"
        );
        assert_eq!(of(2), of(4), "so does a load through an unrelated pointer");
        assert_ne!(of(2), of(1), "a load of the next bytes does not");
        assert_ne!(of(2), of(6));
        // Other alias regions never meet.
        let classes = access_classes(f, &offsets, &|i| if i == insts[4] { 2 } else { 1 }, &insts);
        assert_ne!(classes[&insts[2]], classes[&insts[4]]);
        assert!(!classes.contains_key(&insts[0]));
    }
}
