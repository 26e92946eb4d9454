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

use crate::abi;
use crate::liveness::{explicit_liveness, reg_bit};
use crate::mir::*;

/// Sinks the copies of `mf` (see the module comment); whether any moved.
pub fn run(mf: &mut MFunction) -> bool {
    let Some(dt) = crate::loops::dominator_tree(mf) else {
        return false;
    };
    let (live_in, _) = explicit_liveness(mf);
    let mut preds = vec![0u32; mf.blocks.len()];
    for &b in &mf.layout {
        for s in mf.succs(b) {
            preds[s.index()] += 1;
        }
    }
    let mut moved = false;
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
