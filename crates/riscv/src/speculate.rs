//! Speculative hoisting of cheap instructions above a loop's exit branch.
//!
//! In a loop, a block `b` that ends in a conditional branch with one arm leaving
//! the loop and the other staying in it, on a successor `s` that only `b`
//! reaches, runs `s` on every iteration but the last. The first instructions of
//! `s` can then move above `b`'s branch when they cannot trap and have no side
//! effects (integer ALU operations, constants, addresses): executing them once
//! more on the exit path is harmless, and in `b` they issue while `b`'s own loads
//! are in flight, so the loads of `s` that need them start earlier. A
//! pointer-chasing loop (`while (p) { if (key[p] == k) break; p = next[p]; }`)
//! gets the address of `next[p]` ready when the `key[p]` test resolves instead of
//! one cycle after.
//!
//! Only instructions whose results are used in `s` alone, and there (directly
//! or through each other) by the addresses of loads, move: that is where the
//! earlier start pays.
//!
//! The load those addresses feed moves too when an access of `b` proves it
//! inside its global ([`proven_in_bounds`]). When it loads the loop's next
//! pointer and the exit still reads the current one, the two overlap and the
//! back edge copies the next into the current one's register; that copy then
//! moves above the loop's exit test, beside its branch ([`crate::edge_copies`]).
//!
//! This is the speculative motion of global (extended basic block) instruction
//! scheduling (GCC's `sched-ebb` and interblock scheduling with speculation,
//! Bernstein and Rodeh, "Global Instruction Scheduling for Superscalar
//! Machines", PLDI 1991), restricted to the exit branches of loops, where the
//! direction that stays in the loop is the likely one. It runs before register
//! allocation, on virtual registers defined once, so a hoisted result cannot
//! clobber anything the exit path reads.

use crate::loops::loop_info;
use crate::mir::{AluOp, MBlock, MFunction, MInst, Reg, ZERO};
use rustc_hash::FxHashMap;

/// At most this many instructions move above one branch.
const MAX_HOISTED: usize = 3;

fn speculatable(i: &MInst) -> bool {
    matches!(
        i,
        MInst::Li { .. } | MInst::La { .. } | MInst::AluImm { .. } | MInst::Alu { .. }
    ) && !may_trap(i)
}

/// Integer ALU operations that can trap: none on RISC-V (division by zero gives a
/// defined result), but division is slow and stays where the program put it.
fn may_trap(i: &MInst) -> bool {
    match i {
        MInst::Alu { op, .. } => matches!(
            op,
            AluOp::Div | AluOp::Divu | AluOp::Divw | AluOp::Rem | AluOp::Remw
        ),
        _ => false,
    }
}

/// Hoists the leading cheap instructions of in-loop successors above loop exit
/// branches in `mf`; returns how many moved.
pub fn hoist_above_exits(mf: &mut MFunction) -> usize {
    let info = loop_info(mf);
    if info.loops.is_empty() {
        return 0;
    }
    let (defs, def_block) = mf.vreg_defs();
    // Registers read outside the block that defines them.
    let escapes = mf.vregs_read_elsewhere(&def_block);
    let single_def = |r: Reg| r.is_virtual() && defs[r.vindex()] == 1;
    // The defining instruction of each register defined once.
    let mut single_defs: FxHashMap<Reg, MInst> = FxHashMap::default();
    for &b in &mf.layout {
        for i in &mf.blocks[b].insts {
            i.for_each_def(|d| {
                if single_def(d) {
                    single_defs.insert(d, i.clone());
                }
            });
        }
    }
    let mut moved = 0;
    for b in mf.layout.clone() {
        let depth = info.depth[b.index()];
        if depth == 0 {
            continue;
        }
        let insts = &mf.blocks[b].insts;
        let n = insts.len();
        let (Some(MInst::Branch { target: t, .. }), Some(MInst::Jump { target: f })) =
            (n.checked_sub(2).map(|k| &insts[k]), insts.last())
        else {
            continue;
        };
        let (t, f) = (*t, *f);
        let stays = |s: MBlock| info.depth[s.index()] == depth && info.preds[s.index()][..] == [b];
        let leaves = |s: MBlock| info.depth[s.index()] < depth;
        let s = if stays(f) && leaves(t) {
            f
        } else if stays(t) && leaves(f) {
            t
        } else {
            continue;
        };
        if s == b {
            continue;
        }
        let code = &mf.blocks[s].insts;
        let mut take = 0;
        for i in code.iter().take(MAX_HOISTED) {
            let mut ok = speculatable(i);
            i.for_each_def(|d| ok &= single_def(d) && !escapes[d.vindex()]);
            i.for_each_use(|u| ok &= u.is_virtual() || u == ZERO);
            if !ok {
                break;
            }
            take += 1;
        }
        // Worth it only for addresses: every hoisted result must feed a load of
        // `s`, directly or through the other hoisted instructions. (A counter
        // update moved above the branch would only lengthen its live range.)
        while take > 0 && !feeds_loads(&code[..take], &code[take..]) {
            take -= 1;
        }
        // The load after them, when it provably reads inside its object.
        let before_branch = &mf.blocks[b].insts[..n - 2];
        if code.get(take).is_some_and(|i| {
            let mut once = true;
            i.for_each_def(|d| once &= single_def(d));
            once && proven_in_bounds(mf, i, before_branch, &single_defs)
        }) {
            take += 1;
        }
        if take == 0 {
            continue;
        }
        let hoisted: Vec<MInst> = mf.blocks[s].insts.drain(..take).collect();
        let at = mf.blocks[b].insts.len() - 2;
        mf.blocks[b].insts.splice(at..at, hoisted);
        moved += take;
    }
    moved
}

/// An access `off(G + idx)` into a global: `(global, idx, off, bytes)`, when
/// its base register is defined once, as the sum of a register holding the
/// global's start (`lla`, also as a rematerialisation) and another register
/// defined once.
fn global_access(
    mf: &MFunction,
    i: &MInst,
    single_defs: &FxHashMap<Reg, MInst>,
) -> Option<(u32, Reg, i64, i64)> {
    let (op, addr) = match i {
        MInst::Load { op, addr, .. } | MInst::Store { op, addr, .. } => (*op, addr),
        _ => return None,
    };
    let crate::mir::Base::Reg(base) = addr.base else {
        return None;
    };
    let Some(&MInst::Alu {
        op: AluOp::Add,
        rs1,
        rs2,
        ..
    }) = single_defs.get(&base)
    else {
        return None;
    };
    let start = |r: Reg| {
        let def = single_defs
            .get(&r)
            .or_else(|| mf.vreg_remat.get(r.vindex())?.as_ref())?;
        match *def {
            MInst::La { global, off: 0, .. } => Some(global),
            _ => None,
        }
    };
    let (global, idx) = match (start(rs1), start(rs2)) {
        (Some(g), None) => (g, rs2),
        (None, Some(g)) => (g, rs1),
        _ => return None,
    };
    (idx.is_virtual() && single_defs.contains_key(&idx)).then_some((
        global,
        idx,
        addr.off,
        op.size() as i64,
    ))
}

/// Whether the load `i`, moved to the end of `before` (a block's code before
/// its branch), provably reads inside its object: `before` accesses, at the
/// same offset and size, the element of the same index of a global no larger
/// than the load's. That access runs whenever the moved load does, and it is
/// inside its object (the program is undefined otherwise), so the index is
/// inside the load's object too (the deference proof of LLVM's
/// `isSafeToLoadUnconditionally`, from an access that dominates the load).
fn proven_in_bounds(
    mf: &MFunction,
    i: &MInst,
    before: &[MInst],
    single_defs: &FxHashMap<Reg, MInst>,
) -> bool {
    if !matches!(i, MInst::Load { .. }) {
        return false;
    }
    let Some((global, idx, off, bytes)) = global_access(mf, i, single_defs) else {
        return false;
    };
    let Some(&size) = mf.global_sizes.get(&global) else {
        return false;
    };
    before.iter().any(|a| {
        global_access(mf, a, single_defs).is_some_and(|(g, x, o, n)| {
            x == idx
                && o == off
                && n == bytes
                && mf.global_sizes.get(&g).is_some_and(|&s| s <= size)
        })
    })
}

/// Whether every result of `hoisted` is read, directly or through later hoisted
/// instructions, by the address of a load in `rest`.
fn feeds_loads(hoisted: &[MInst], rest: &[MInst]) -> bool {
    let mut needed: Vec<Reg> = Vec::new();
    for i in rest {
        if let MInst::Load { addr, .. } = i {
            if let crate::mir::Base::Reg(r) = addr.base {
                needed.push(r);
            }
        }
    }
    for i in hoisted.iter().rev() {
        let mut rd = ZERO;
        i.for_each_def(|d| rd = d);
        if !needed.contains(&rd) {
            return false;
        }
        i.for_each_use(|u| needed.push(u));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::{Addr, Base, Cond, MemOp, RegClass};

    fn lw(rd: Reg, base: Reg) -> MInst {
        MInst::Load {
            op: MemOp::W,
            rd,
            addr: Addr::new(Base::Reg(base), 0),
        }
    }

    /// `b1: load key; br key == k -> exit; jump b2`, `b2: addr = next + p;
    /// p = load addr; br p != 0 -> b1; jump b3`: the address moves into b1; the
    /// load stays (it could fault).
    #[test]
    fn address_of_the_next_load_moves_above_the_exit_test() {
        let mut mf = MFunction::new("t".into(), false);
        let b: Vec<MBlock> = (0..5).map(|_| mf.new_block()).collect();
        mf.layout = b.clone();
        let v = |mf: &mut MFunction| mf.new_vreg(RegClass::Int);
        let (p, key, k, addr, base) = (v(&mut mf), v(&mut mf), v(&mut mf), v(&mut mf), v(&mut mf));
        mf.blocks[MBlock(0)].insts = vec![
            MInst::Li { rd: base, imm: 64 },
            MInst::Li { rd: k, imm: 7 },
            MInst::Li { rd: p, imm: 1 },
            MInst::Jump { target: b[1] },
        ];
        mf.blocks[MBlock(1)].insts = vec![
            lw(key, p),
            MInst::Branch {
                cond: Cond::Eq,
                rs1: key,
                rs2: k,
                target: b[4],
            },
            MInst::Jump { target: b[2] },
        ];
        mf.blocks[MBlock(2)].insts = vec![
            MInst::Alu {
                op: AluOp::Add,
                rd: addr,
                rs1: base,
                rs2: p,
            },
            lw(p, addr),
            MInst::Branch {
                cond: Cond::Ne,
                rs1: p,
                rs2: ZERO,
                target: b[1],
            },
            MInst::Jump { target: b[3] },
        ];
        mf.blocks[MBlock(3)].insts = vec![MInst::Ret { value: None }];
        mf.blocks[MBlock(4)].insts = vec![MInst::Ret { value: None }];
        // `p` is defined twice (before and in the loop): only `addr` may move.
        assert_eq!(hoist_above_exits(&mut mf), 1);
        assert!(matches!(mf.blocks[MBlock(1)].insts[1], MInst::Alu { rd, .. } if rd == addr));
        assert!(matches!(mf.blocks[MBlock(2)].insts[0], MInst::Load { .. }));
        assert!(matches!(
            mf.blocks[MBlock(1)].insts[2],
            MInst::Branch { .. }
        ));
    }

    /// A successor with another predecessor, or a branch whose arms both stay in
    /// the loop, is left alone.
    #[test]
    fn only_exit_branches_to_single_predecessor_successors() {
        let mut mf = MFunction::new("t".into(), false);
        let b: Vec<MBlock> = (0..4).map(|_| mf.new_block()).collect();
        mf.layout = b.clone();
        let (i, c, x) = (
            mf.new_vreg(RegClass::Int),
            mf.new_vreg(RegClass::Int),
            mf.new_vreg(RegClass::Int),
        );
        mf.blocks[MBlock(0)].insts =
            vec![MInst::Li { rd: i, imm: 0 }, MInst::Jump { target: b[1] }];
        // b1 -> b2 | b2 (both arms stay); b2 -> b1 | b3.
        mf.blocks[MBlock(1)].insts = vec![
            MInst::Li { rd: c, imm: 3 },
            MInst::Branch {
                cond: Cond::Lt,
                rs1: i,
                rs2: c,
                target: b[2],
            },
            MInst::Jump { target: b[2] },
        ];
        mf.blocks[MBlock(2)].insts = vec![
            MInst::AluImm {
                op: crate::mir::AluImmOp::Addi,
                rd: x,
                rs1: c,
                imm: 1,
            },
            MInst::Branch {
                cond: Cond::Lt,
                rs1: x,
                rs2: c,
                target: b[1],
            },
            MInst::Jump { target: b[3] },
        ];
        mf.blocks[MBlock(3)].insts = vec![MInst::Ret { value: None }];
        assert_eq!(hoist_above_exits(&mut mf), 0);
    }
}
