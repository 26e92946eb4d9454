//! Machine common-subexpression elimination: the integer operations that
//! instruction selection repeats within a block are computed once (the place of
//! LLVM's `MachineCSE`).
//!
//! Instruction selection expands each IR instruction alone, so what the IR
//! shares can come out twice: the row offset `u * 40` of `to[u][k]`,
//! `cap[u][k]` and `rev[u][k]` is one multiply per access, and `g + 4096`
//! adds a constant materialised once per use.
//!
//! Algorithm: local value numbering (Cocke and Schwartz, 1970; Cooper and
//! Torczon, "Engineering a Compiler", §8.4.1) over each block, on virtual
//! registers written once in the function (so a register names one value
//! everywhere). An operation's key is the operation with its result left out
//! and each operand replaced by what it holds: a copy by its source, a
//! constant (`li`) or a global's address (`lla`) by the first register holding
//! it. An operation whose key an earlier operation of the block computed is
//! deleted, and its result's readers read the earlier result instead.
//!
//! Profitability, as `MachineCSE` weighs it: the table is emptied at each call
//! (a value kept across a call takes a callee-saved register or a spill), and a
//! one-cycle operation is merged only into a twin that is live past it anyway
//! (read later in the block, or after it), so that no register lives longer:
//! in a long unrolled block, keeping a sign `x >> 31` alive from one use to a
//! distant second one costs a register throughout, and a spill where they run
//! short. A multiply, division or remainder is always merged.

use rustc_hash::FxHashMap;

use crate::mir::{AluOp, MFunction, MInst, Reg, ZERO};
use crate::u74::{timing_with, Pipe};

/// Longest chain of copies followed to find what a register holds.
const MAX_COPIES: usize = 8;

/// Merges the repeated integer operations of each block of `mf`; returns how
/// many were deleted.
pub fn run(mf: &mut MFunction) -> usize {
    let n = mf.num_vregs();
    let (defs, def_block) = mf.vreg_defs();
    let once = |r: Reg| r.is_virtual() && defs[r.vindex()] == 1;
    // What each register written once holds, when a copy, constant or address
    // tells: its source, or the first register holding the constant.
    let mut holds: Vec<Option<Reg>> = vec![None; n];
    let mut first_of: FxHashMap<MInst, Reg> = FxHashMap::default();
    // Per register: whether a block other than its definition's reads it.
    let read_elsewhere = mf.vregs_read_elsewhere(&def_block);
    for &b in &mf.layout {
        for i in &mf.blocks[b].insts {
            match *i {
                MInst::Mv { rd, rs } if once(rd) && once(rs) => holds[rd.vindex()] = Some(rs),
                MInst::Li { rd, .. } | MInst::La { rd, .. } if once(rd) => {
                    let first = *first_of.entry(key_of(i, |r| r)).or_insert(rd);
                    if first != rd {
                        holds[rd.vindex()] = Some(first);
                    }
                }
                _ => {}
            }
        }
    }
    let value = |mut r: Reg| {
        for _ in 0..MAX_COPIES {
            match r.is_virtual().then(|| holds[r.vindex()]).flatten() {
                Some(s) => r = s,
                None => break,
            }
        }
        r
    };
    let mut replace: FxHashMap<Reg, Reg> = FxHashMap::default();
    let mut deleted = 0;
    for b in mf.layout.clone() {
        let mut available: FxHashMap<MInst, Reg> = FxHashMap::default();
        let insts = std::mem::take(&mut mf.blocks[b].insts);
        // Per register read in the block: the position of its last reader.
        let mut last_read: FxHashMap<Reg, usize> = FxHashMap::default();
        for (k, i) in insts.iter().enumerate() {
            i.for_each_use(|u| {
                last_read.insert(u, k);
            });
        }
        let mut kept = Vec::with_capacity(insts.len());
        for (k, mut i) in insts.into_iter().enumerate() {
            read_through(&mut i, &replace);
            if i.is_call() {
                available.clear();
            }
            let Some((rd, expensive)) = candidate(&i, &once) else {
                kept.push(i);
                continue;
            };
            let key = key_of(&i, value);
            // A one-cycle operation is merged only into a twin live past it
            // anyway (read later in the block, or after it).
            let live_past = |twin: Reg, last_read: &FxHashMap<Reg, usize>| {
                read_elsewhere[twin.vindex()]
                    || (!read_elsewhere[rd.vindex()] && last_read.get(&twin) > Some(&k))
            };
            match available.get(&key) {
                Some(&twin) if expensive || live_past(twin, &last_read) => {
                    // The deleted register is read nowhere now: no recipe.
                    mf.vreg_remat[rd.vindex()] = None;
                    if let Some(&last) = last_read.get(&rd) {
                        let t = last_read.entry(twin).or_default();
                        *t = (*t).max(last);
                    }
                    replace.insert(rd, twin);
                    deleted += 1;
                }
                _ => {
                    available.insert(key, rd);
                    kept.push(i);
                }
            }
        }
        mf.blocks[b].insts = kept;
    }
    if deleted > 0 {
        for &b in &mf.layout {
            for i in &mut mf.blocks[b].insts {
                read_through(i, &replace);
            }
        }
    }
    deleted
}

/// Makes `i` read each deleted register's twin instead.
fn read_through(i: &mut MInst, replace: &FxHashMap<Reg, Reg>) {
    i.map_regs(|r, is_def| {
        if let Some(&to) = replace.get(r).filter(|_| !is_def) {
            *r = to;
        }
    });
}

/// When `i` is an integer operation the pass may merge (its result and its
/// virtual operands written once, its other operands `zero`): its result, and
/// whether it is a multiply, division or remainder.
fn candidate(i: &MInst, once: &dyn Fn(Reg) -> bool) -> Option<(Reg, bool)> {
    let (rd, expensive) = match *i {
        // The operations the U74 runs on pipe B: multiplies and divisions.
        MInst::Alu { rd, .. } => (rd, timing_with(i, &|_| false).pipe == Pipe::B),
        MInst::AluImm { rd, .. } => (rd, false),
        _ => return None,
    };
    let mut ok = once(rd);
    i.for_each_use(|u| ok &= u == ZERO || once(u));
    ok.then_some((rd, expensive))
}

/// `i` with its result `zero` and each operand replaced by `value` of it (the
/// operands of a commutative operation in a fixed order).
fn key_of(i: &MInst, value: impl Fn(Reg) -> Reg) -> MInst {
    let mut key = i.clone();
    key.map_regs(|r, is_def| *r = if is_def { ZERO } else { value(*r) });
    if let MInst::Alu { op, rs1, rs2, .. } = &mut key {
        let commutes = matches!(
            op,
            AluOp::Add
                | AluOp::Addw
                | AluOp::Mul
                | AluOp::Mulw
                | AluOp::Mulh
                | AluOp::Mulhu
                | AluOp::And
                | AluOp::Or
                | AluOp::Xor
        );
        if commutes && rs1.0 > rs2.0 {
            std::mem::swap(rs1, rs2);
        }
    }
    key
}
