//! Speculative motion of arithmetic into a predecessor's idle issue slots.
//!
//! In a loop, a block `b` that ends in a conditional branch issues its own work
//! and then waits on its branch; its successor `s` (when `b` is `s`'s only
//! predecessor) starts only after the branch. Where `b`'s schedule leaves slots
//! free, the first links of `s`'s dependence chains can issue there instead, so
//! that `s` starts with them done: a loop whose body tests one condition, then
//! computes another from the same inputs and tests it, runs the two computations
//! side by side.
//!
//! The moved instructions run on every path through `b`, also when the branch
//! goes the other way. Only instructions that cannot trap or touch memory move
//! (integer and FP arithmetic but division, constants, addresses), each defining
//! a virtual register written nowhere else and read only in `s`, so a result
//! computed for nothing is simply dead on the other path. A move is made only
//! when the timing model ([`crate::u74`]) says that `b`, scheduled with the moved
//! instructions, takes no more cycles than before, and that the path through `b`
//! into `s` takes fewer: the other successor never waits longer.
//!
//! This is the speculative motion of global instruction scheduling (Bernstein
//! and Rodeh, "Global Instruction Scheduling for Superscalar Machines", PLDI
//! 1991; GCC's interblock scheduling with `-fsched-spec`), with a schedule-based
//! gain test in place of their profile-free heuristics. [`crate::speculate`]
//! hoists addresses above loop exits without a model; this pass runs after it.

use rustc_hash::FxHashSet;

use crate::loops::loop_info;
use crate::mir::{AluOp, FAluOp, MFunction, MInst, Reg, RegClass, ZERO};
use crate::schedule::schedule_unguarded;
use crate::u74;

/// At most this many instructions move from one successor into its predecessor.
const MAX_MOVED: usize = 8;
/// Only the first this many instructions of a successor are looked at.
const LOOKAHEAD: usize = 24;

/// Whether `i` may run on a path where the program would not run it: it cannot
/// trap, has no effect besides its result, and is not slow (division stays where
/// the program put it).
pub(crate) fn speculatable(i: &MInst) -> bool {
    match i {
        MInst::Li { .. }
        | MInst::La { .. }
        | MInst::FrameAddr { .. }
        | MInst::AluImm { .. }
        | MInst::FCmp { .. }
        | MInst::Cvt { .. } => true,
        MInst::Alu { op, .. } => !matches!(
            op,
            AluOp::Div | AluOp::Divu | AluOp::Divw | AluOp::Rem | AluOp::Remw
        ),
        MInst::FAlu { op, .. } => *op != FAluOp::Div,
        _ => false,
    }
}

/// Moves the leading links of in-loop successors' dependence chains into their
/// predecessors' idle issue slots in `mf`; returns how many instructions moved.
pub fn hoist_into_slots(mf: &mut MFunction) -> usize {
    let info = loop_info(mf);
    if info.loops.is_empty() {
        return 0;
    }
    let (defs, def_block) = mf.vreg_defs();
    // Registers read outside the block that defines them.
    let escapes = mf.vregs_read_elsewhere(&def_block);
    let classes = mf.vreg_class.clone();
    let is_float = move |r: Reg| {
        let class = if r.is_virtual() {
            classes[r.vindex()]
        } else {
            r.phys_class()
        };
        class == RegClass::Float
    };
    // Results copied elsewhere: the allocator gives a copy's source and destination
    // one register when they do not interfere, which a result computed earlier, while
    // the destination's old value is still read, would prevent.
    let mut copied = vec![false; mf.num_vregs()];
    for &b in &mf.layout {
        for i in &mf.blocks[b].insts {
            if let MInst::Mv { rs, .. } = i {
                if rs.is_virtual() {
                    copied[rs.vindex()] = true;
                }
            }
        }
    }
    let movable_def = |d: Reg| {
        d.is_virtual() && defs[d.vindex()] == 1 && !escapes[d.vindex()] && !copied[d.vindex()]
    };
    let mut moved = 0;
    for b in mf.layout.clone() {
        if info.depth[b.index()] == 0 {
            continue;
        }
        let n = mf.blocks[b].insts.len();
        let (Some(MInst::Branch { target: t, .. }), Some(MInst::Jump { target: f })) = (
            n.checked_sub(2).map(|k| &mf.blocks[b].insts[k]),
            mf.blocks[b].insts.last(),
        ) else {
            continue;
        };
        for s in [*t, *f] {
            let in_loop = info.innermost(s) == info.innermost(b);
            if s == b || !in_loop || info.preds[s.index()][..] != [b] {
                continue;
            }
            let candidates = candidates(&mf.blocks[s].insts, &movable_def);
            let take = best_prefix(
                &mf.blocks[b].insts,
                &mf.blocks[s].insts,
                &candidates,
                &is_float,
            );
            if take == 0 {
                continue;
            }
            let chosen = &candidates[..take];
            let hoisted: Vec<MInst> = chosen
                .iter()
                .map(|&k| mf.blocks[s].insts[k].clone())
                .collect();
            let mut k = 0;
            mf.blocks[s].insts.retain(|_| {
                k += 1;
                !chosen.contains(&(k - 1))
            });
            let at = mf.blocks[b].insts.len() - 2;
            mf.blocks[b].insts.splice(at..at, hoisted);
            moved += take;
        }
    }
    moved
}

/// Positions in `code` (a block) of the instructions that may move above its start,
/// in order: speculatable, defining one register that `movable_def` allows, and
/// reading only virtual registers that no instruction left behind before it writes.
fn candidates(code: &[MInst], movable_def: &dyn Fn(Reg) -> bool) -> Vec<usize> {
    let mut out = Vec::new();
    // What the instructions that stay write and read before each position.
    let mut stays: FxHashSet<Reg> = FxHashSet::default();
    let mut read: FxHashSet<Reg> = FxHashSet::default();
    for (k, i) in code.iter().enumerate().take(LOOKAHEAD) {
        if i.is_terminator() || i.is_call() {
            break;
        }
        let mut ok = speculatable(i);
        let mut ndefs = 0;
        i.for_each_def(|d| {
            ndefs += 1;
            ok &= movable_def(d) && !read.contains(&d);
        });
        i.for_each_use(|u| ok &= (u.is_virtual() || u == ZERO) && !stays.contains(&u));
        if ok && ndefs == 1 {
            out.push(k);
            if out.len() == MAX_MOVED {
                break;
            }
        } else {
            i.for_each_def(|d| {
                stays.insert(d);
            });
            i.for_each_use(|u| {
                read.insert(u);
            });
        }
    }
    out
}

/// How many of `candidates` (positions in `s`, in order) to move into `b`: the
/// prefix that makes the path from `b` into `s` shortest while `b` alone takes no
/// more cycles, both scheduled; 0 when none gains.
fn best_prefix(
    b: &[MInst],
    s: &[MInst],
    candidates: &[usize],
    is_float: &dyn Fn(Reg) -> bool,
) -> usize {
    if candidates.is_empty() {
        return 0;
    }
    // `b` without its final jump: its conditional branch falls through to one of
    // its successors once blocks are placed.
    let (b_body, b_branch) = b[..b.len() - 1].split_at(b.len() - 2);
    let cost = |moved: &[usize]| {
        let mut nb: Vec<MInst> = b_body.to_vec();
        nb.extend(moved.iter().map(|&k| s[k].clone()));
        nb.extend_from_slice(b_branch);
        schedule_unguarded(&mut nb, is_float);
        let mut ns: Vec<MInst> = s
            .iter()
            .enumerate()
            .filter(|(k, _)| !moved.contains(k))
            .map(|(_, i)| i.clone())
            .collect();
        schedule_unguarded(&mut ns, is_float);
        let alone = u74::cycles_with(&nb, is_float);
        nb.extend(ns);
        (alone, u74::cycles_with(&nb, is_float))
    };
    let (alone, path) = cost(&[]);
    let mut best = (path, 0);
    for take in 1..=candidates.len() {
        let (a, p) = cost(&candidates[..take]);
        if a <= alone && p < best.0 {
            best = (p, take);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{parse_function, print_function};

    /// A loop whose header `bb1` tests one value and whose `bb2` (reached from
    /// `bb1` alone) computes `bb2_code` and tests its last result `%v10`.
    fn loop_with(bb2_code: &str) -> MFunction {
        parse_function(&format!(
            "function f local
  int %v0..%v20
bb0:
  mv %v0, a0
  mv %v1, a1
  li %v2, 1
  li %v11, 0
  j bb1
bb1:
  and %v3, %v0, %v2
  addw %v4, %v3, %v0
  sraw %v5, %v4, %v2
  andi %v6, %v5, 1
  bne %v6, zero, bb3
  j bb2
bb2:
{bb2_code}
  bne %v10, zero, bb3
  j bb4
bb3:
  addiw %v11, %v11, 1
  j bb5
bb4:
  addiw %v11, %v11, -1
  j bb5
bb5:
  slliw %v2, %v2, 1
  bne %v2, zero, bb1
  j bb6
bb6:
  mv a0, %v11
  ret a0
end
"
        ))
        .unwrap()
    }

    fn block_text(mf: &MFunction, b: usize) -> Vec<String> {
        mf.blocks[crate::mir::MBlock(b as u32)]
            .insts
            .iter()
            .map(crate::text::print_inst)
            .collect()
    }

    #[test]
    fn an_independent_chain_moves_into_the_free_slots() {
        let mut mf = loop_with(
            "  and %v7, %v1, %v2\n  addw %v8, %v7, %v1\n  sraw %v9, %v8, %v2\n  andi %v10, %v9, 1",
        );
        assert_eq!(hoist_into_slots(&mut mf), 4, "{}", print_function(&mf));
        assert_eq!(block_text(&mf, 2), ["bne %v10, zero, bb3", "j bb4"]);
        assert_eq!(block_text(&mf, 1).len(), 10);
    }

    #[test]
    fn a_division_stays() {
        let mut mf = loop_with("  divw %v9, %v1, %v2\n  andi %v10, %v9, 1");
        assert_eq!(hoist_into_slots(&mut mf), 0, "{}", print_function(&mf));
    }

    #[test]
    fn what_depends_on_a_load_stays() {
        let mut mf = loop_with("  lw %v9, 0(%v1)\n  andi %v10, %v9, 1");
        assert_eq!(hoist_into_slots(&mut mf), 0, "{}", print_function(&mf));
    }

    /// `%v9` is copied into `%v12`, which `bb3` reads: computed in `bb1`, it would
    /// be live together with `%v12`'s old value and could no longer share its
    /// register, costing a copy.
    #[test]
    fn a_result_that_is_copied_stays() {
        let mut mf = loop_with("  and %v9, %v1, %v2\n  mv %v12, %v9\n  andi %v10, %v12, 1");
        assert_eq!(hoist_into_slots(&mut mf), 0, "{}", print_function(&mf));
    }

    /// A result read in another block (here `bb4`) stays in its block.
    #[test]
    fn a_result_read_elsewhere_stays() {
        let mut mf = loop_with("  and %v10, %v1, %v2");
        let bb4 = crate::mir::MBlock(4);
        mf.blocks[bb4].insts.insert(
            0,
            MInst::Alu {
                op: AluOp::Addw,
                rd: Reg::virt(11),
                rs1: Reg::virt(11),
                rs2: Reg::virt(10),
            },
        );
        assert_eq!(hoist_into_slots(&mut mf), 0, "{}", print_function(&mf));
    }
}
