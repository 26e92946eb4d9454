//! Copies of a loop's back edge moved out of their edge block, above the loop's
//! exit test.
//!
//! Instruction selection splits a critical edge that carries block-argument copies
//! ([`crate::isel`]): a block `b` ending in `br c, E, X` whose arm `E` stays in the
//! loop gets an edge block `E` of copies followed by a jump to the header. Every
//! trip then runs one more block, and the copies wait for the branch to resolve.
//! When none of the copies' destinations is live into the other successor `X`,
//! the copies can run in `b` before its branch instead: on the way to `X` they
//! write registers nobody reads. `b` then branches straight to the header, `E`
//! goes away, and the copies issue beside the branch. A pointer-chasing loop whose
//! next pointer is loaded before the exit test (`crate::speculate`) keeps its
//! back-edge copy `mv p, next` off the critical path this way.
//!
//! This is LLVM's PHI elimination placing copies in the predecessor and splitting
//! a critical edge only when the copied register is live into another successor
//! (`PHIElimination::SplitPHIEdges` asks `LiveVariables::isLiveIn`). It is done
//! only where the other successor leaves `b`'s innermost loop and the edge stays
//! in it: the copies then run once more per loop exit, and the loop saves them a
//! block on every trip.
//!
//! It runs after register allocation (the copies' destinations are physical
//! registers, their liveness exact) and before frame layout, so shrink-wrapping
//! sees where the copies went; a return reads the callee-saved registers
//! ([`allocated_liveness`]), so a copy into one is never moved onto a path that
//! returns.

use crate::liveness::{allocated_liveness, reg_bit};
use crate::loops::loop_info;
use crate::mir::{MBlock, MFunction, MInst};

/// Moves the copies of back-edge blocks above their loop's exit tests (see the
/// module comment); how many edge blocks went away.
pub fn run(mf: &mut MFunction) -> usize {
    let info = loop_info(mf);
    if info.loops.is_empty() {
        return 0;
    }
    let (live_in, _) = allocated_liveness(mf);
    // Blocks another one may fall into (the block before them in the layout does
    // not end in a barrier): their predecessors are not all branches to them.
    let mut fallen_into = vec![false; mf.blocks.len()];
    for w in mf.layout.windows(2) {
        fallen_into[w[1].index()] = !mf.blocks[w[0]].insts.last().is_some_and(MInst::is_barrier);
    }
    let mut moved = 0;
    for b in mf.layout.clone() {
        let Some(l) = info.innermost(b) else {
            continue;
        };
        let insts = &mf.blocks[b].insts;
        let n = insts.len();
        let (Some(&MInst::Branch { target: t, .. }), Some(&MInst::Jump { target: f })) =
            (n.checked_sub(2).map(|k| &insts[k]), insts.last())
        else {
            continue;
        };
        for (edge, other) in [(t, f), (f, t)] {
            if edge == other
                || edge == b
                || info.preds[edge.index()][..] != [b]
                || fallen_into[edge.index()]
            {
                continue;
            }
            let Some(header) = copies_then_jump(&mf.blocks[edge].insts) else {
                continue;
            };
            if !info.contains(l, header) || info.contains(l, other) {
                continue;
            }
            let copies = &mf.blocks[edge].insts[..mf.blocks[edge].insts.len() - 1];
            let branch = &mf.blocks[b].insts[n - 2];
            let mut written = 0;
            for c in copies {
                c.for_each_def(|d| written |= reg_bit(d));
            }
            let mut branch_reads = 0;
            branch.for_each_use(|u| branch_reads |= reg_bit(u));
            if written & (live_in[other.index()] | branch_reads) != 0 {
                continue;
            }
            let copies: Vec<MInst> = copies.to_vec();
            if !saves_cycles(
                &mf.blocks[b].insts,
                &copies,
                &mf.blocks[header].insts,
                header == b,
            ) {
                continue;
            }
            let insts = &mut mf.blocks[b].insts;
            for k in [n - 2, n - 1] {
                match &mut insts[k] {
                    MInst::Branch { target, .. } | MInst::Jump { target } if *target == edge => {
                        *target = header
                    }
                    _ => {}
                }
            }
            insts.splice(n - 2..n - 2, copies);
            // The edge block is unreachable now; peephole drops it.
            mf.blocks[edge].insts = vec![MInst::Jump { target: header }];
            moved += 1;
            break;
        }
    }
    moved
}

/// Whether the trip through `b` and on into the header takes no more cycles in
/// the timing model ([`crate::u74`]) with `copies` at the end of `b` (before
/// its branch) than at the start of the header, each block list-scheduled
/// ([`crate::schedule::schedule_block`]). A copy whose destination the header
/// reads at once waits less beside `b`'s branch; one whose source `b`
/// computes last, or whose destination `b` still reads late, would lengthen
/// `b` instead.
fn saves_cycles(b: &[MInst], copies: &[MInst], header: &[MInst], header_is_b: bool) -> bool {
    let scheduled = |code: Vec<MInst>| {
        let mut code = code;
        crate::schedule::schedule_block(&mut code);
        crate::u74::cycles(&code)
    };
    let n = b.len();
    let mut moved = b[..n - 2].to_vec();
    moved.extend_from_slice(copies);
    moved.extend_from_slice(&b[n - 2..]);
    let before = scheduled(b.to_vec()) + scheduled([copies, header].concat());
    let moved_cycles = scheduled(moved);
    // When `b` is the header, the trip runs the moved code twice: scheduled once.
    let header_after = if header_is_b {
        moved_cycles
    } else {
        scheduled(header.to_vec())
    };
    moved_cycles + header_after <= before
}

/// The jump target of a block of register copies ending in a jump.
fn copies_then_jump(insts: &[MInst]) -> Option<MBlock> {
    let (MInst::Jump { target }, copies) = insts.split_last()? else {
        return None;
    };
    let all_copies = !copies.is_empty() && copies.iter().all(|i| matches!(i, MInst::Mv { .. }));
    all_copies.then_some(*target)
}
