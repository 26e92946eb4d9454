//! Post-allocation copy sinking: a copy into a callee-saved register moves down to
//! the one successor that reads it, when that successor has no other predecessor.
//! This is LLVM's `PostRAMachineSinking` (in `MachineSink.cpp`), made for the same
//! purpose: the allocator puts a parameter that lives across calls in a
//! callee-saved register with a copy in the entry block, which would make the
//! entry save that register and keep shrink-wrapping (`crate::shrink_wrap`) from
//! moving the prologue past an early return. Sunk, the copy (and so the save) runs
//! only on the paths that need it.
//!
//! A copy `mv rd, rs` sinks from block `b` into successor `s` when `rd` is
//! callee-saved; nothing after the copy in `b` reads or writes `rd` or writes `rs`;
//! `rd` is live into `s` and into no other successor (by the liveness of what the
//! function reads, [`explicit_liveness`]: a return does not read the callee-saved
//! registers, whose caller's values the copy would otherwise overwrite); and `b`
//! is `s`'s only predecessor. Blocks are visited in reverse post-order, so a copy
//! keeps sinking through a chain of such blocks. The instructions after a copy
//! may read its source instead of its destination where both still hold the value
//! ([`propagate_copy`]): a parameter tested in the entry block then no longer
//! keeps its copy there. They are rewritten only when the copy then sinks.
//!
//! A value computed in the entry block into a callee-saved register (an address
//! kept for a store after a recursive call, say) pins the frame to the entry the
//! same way. [`split_entry_defs`] computes it into a free caller-saved register
//! instead and copies it into the callee-saved one at the top of the one successor
//! that reads it, as LLVM's greedy allocator splits a live range rather than use a
//! callee-saved register on a path that needs none ("CSR cost"). It does so only
//! when nothing else in the entry needs the frame, so the prologue can move.

use crate::abi;
use crate::liveness::{explicit_liveness, reg_bit, RegMask as RegMaskT};
use crate::mir::*;

/// Sinks the copies of `mf` (see the module comment); whether any moved.
pub fn run(mf: &mut MFunction) -> bool {
    let Some(dt) = crate::loops::dominator_tree(mf) else {
        return false;
    };
    let mut preds = vec![0u32; mf.blocks.len()];
    for &b in &mf.layout {
        for s in mf.succs(b) {
            preds[s.index()] += 1;
        }
    }
    let mut moved = split_entry_defs(mf, &preds);
    let (live_in, _) = explicit_liveness(mf);
    for &b in dt.rpo() {
        let succs = mf.succs(b);
        let mut k = mf.blocks[b].insts.len();
        while k > 0 {
            k -= 1;
            let MInst::Mv { rd, rs } = mf.blocks[b].insts[k] else {
                continue;
            };
            if !abi::is_callee_saved(rd) || rd == rs || rs == SP {
                continue;
            }
            let mut readers = succs
                .iter()
                .filter(|s| live_in[s.index()] & reg_bit(rd) != 0);
            let (Some(&s), None) = (readers.next(), readers.next()) else {
                continue;
            };
            if preds[s.index()] != 1 || s == b {
                continue;
            }
            let later = &mf.blocks[b].insts[k + 1..];
            let rewritten = propagate_copy(later, rd, rs);
            let disturbed = rewritten.iter().chain(&later[rewritten.len()..]).any(|i| {
                let mut hit = false;
                i.for_each_use(|r| hit |= r == rd);
                i.for_each_def(|r| hit |= r == rd || r == rs);
                hit |= i.clobbers().any(|r| r == rd || r == rs);
                hit
            });
            if disturbed {
                continue;
            }
            let insts = &mut mf.blocks[b].insts;
            insts.splice(k + 1..k + 1 + rewritten.len(), rewritten);
            let copy = insts.remove(k);
            mf.blocks[s].insts.insert(0, copy);
            moved = true;
        }
    }
    moved
}

/// In the entry block, each instruction other than a copy or call that writes a
/// callee-saved register `rd` read by exactly one successor `s` (whose only
/// predecessor is the entry) writes a caller-saved register `t` instead, the entry's
/// later reads of `rd` read `t`, and `s` starts with `mv rd, t`. `t` must be
/// mentioned nowhere after the instruction in the entry and live into no
/// successor, and no call may follow (it would clobber `t`). Done only when every
/// callee-saved register the entry mentions goes this way or is the destination of
/// a copy, and the entry neither calls nor touches the stack; whether any moved.
fn split_entry_defs(mf: &mut MFunction, preds: &[u32]) -> bool {
    let entry = mf.layout[0];
    let succs = mf.succs(entry);
    let (live_in, _) = explicit_liveness(mf);
    let insts = &mf.blocks[entry].insts;
    let mut splits: Vec<(usize, Reg, Reg, MBlock)> = Vec::new();
    let mut taken: RegMaskT = 0;
    for (k, inst) in insts.iter().enumerate() {
        if inst.is_call() || matches!(inst, MInst::Ret { .. } | MInst::TailCall { .. }) {
            return false;
        }
        let mut touches_stack = matches!(inst, MInst::FrameAddr { .. })
            || matches!(inst, MInst::Load { addr, .. } | MInst::Store { addr, .. }
                if matches!(addr.base, Base::Slot(_)));
        let mut i = inst.clone();
        i.map_regs(|r, _| touches_stack |= *r == SP);
        if touches_stack {
            return false;
        }
        // Reads of a register already being split read `t` after the rewrite.
        let mut saved_uses = false;
        inst.for_each_use(|r| {
            saved_uses |= abi::is_callee_saved(r) && !splits.iter().any(|&(_, rd, _, _)| rd == r)
        });
        let mut defs = Vec::new();
        inst.for_each_def(|r| defs.push(r));
        let saved_def = defs.iter().any(|&r| abi::is_callee_saved(r));
        if matches!(inst, MInst::Mv { .. }) {
            if saved_uses {
                return false;
            }
            continue;
        }
        if saved_uses {
            return false;
        }
        if !saved_def {
            continue;
        }
        let &[rd] = defs.as_slice() else {
            return false;
        };
        if rd.phys_class() != RegClass::Int {
            return false;
        }
        let later = &insts[k + 1..];
        let mut readers = succs
            .iter()
            .filter(|s| live_in[s.index()] & reg_bit(rd) != 0);
        let (Some(&s), None) = (readers.next(), readers.next()) else {
            return false;
        };
        if preds[s.index()] != 1 || s == entry {
            return false;
        }
        let rewritten_later = later.iter().any(|i| {
            let mut w = false;
            i.for_each_def(|r| w |= r == rd);
            w
        });
        if rewritten_later {
            return false;
        }
        let free = abi::allocatable(RegClass::Int).iter().copied().find(|&t| {
            !abi::is_callee_saved(t)
                && taken & reg_bit(t) == 0
                && succs.iter().all(|s| live_in[s.index()] & reg_bit(t) == 0)
                && std::iter::once(inst).chain(later).all(|i| {
                    let mut hit = false;
                    let mut c = i.clone();
                    c.map_regs(|r, _| hit |= *r == t);
                    hit |= i.clobbers().any(|r| r == t);
                    !hit
                })
        });
        let Some(t) = free else {
            return false;
        };
        taken |= reg_bit(t);
        splits.push((k, rd, t, s));
    }
    for &(k, rd, t, s) in &splits {
        for inst in &mut mf.blocks[entry].insts[k..] {
            inst.map_regs(|r, _| {
                if *r == rd {
                    *r = t;
                }
            });
        }
        mf.blocks[s].insts.insert(0, MInst::Mv { rd, rs: t });
    }
    !splits.is_empty()
}

/// Forward copy propagation within a block (LLVM's `MachineCopyPropagation`) for
/// the copy `mv rd, rs` followed by `later`: the instructions that read `rd`, read
/// `rs` instead, until either is written (calls, returns and tail calls, which read
/// registers by convention, end it too). The rewritten instructions, a prefix of
/// `later`'s length.
fn propagate_copy(later: &[MInst], rd: Reg, rs: Reg) -> Vec<MInst> {
    let mut out = Vec::new();
    for inst in later {
        if inst.is_call() || matches!(inst, MInst::Ret { .. } | MInst::TailCall { .. }) {
            break;
        }
        let mut inst = inst.clone();
        inst.map_regs(|r, def| {
            if !def && *r == rd {
                *r = rs;
            }
        });
        let mut written = false;
        inst.for_each_def(|r| written |= r == rd || r == rs);
        out.push(inst);
        if written {
            break;
        }
    }
    out
}
