//! Tail duplication after block placement: a block that ends in a jump to a small
//! block placed elsewhere gets a copy of that block in place of the jump.
//!
//! The technique is the tail duplication of code layout (GCC's `bb-reorder`
//! duplicates small blocks while forming traces, `copy_bb_p`; LLVM's
//! `TailDuplicator` runs it inside `MachineBlockPlacement`). Its typical use is the
//! join of an `if`-`else` chain in a loop: every arm but one ends in `j latch`, and
//! the latch is an increment and the loop's branch. With a copy of the latch at the
//! end of each arm, an iteration runs the arm, the increment and the branch
//! straight through: one instruction and one jump fewer per iteration.
//!
//! A block `T` is copied into a block `B` when
//! - `B` ends in a lone `j T` (no conditional branch before it) and `T` is not the
//!   block after `B` in the layout (placement could not make the edge fall through);
//! - `T` holds at most [`MAX_BODY`] instructions besides its terminators, and ends
//!   in a conditional branch and a jump, or in a return or tail call (copying a
//!   block that ends in a lone jump would only move the jump).
//!
//! The copy is exact (but for the symbolic starts of its accesses, which it drops:
//! see [`crate::mir::SymAddr`]): after register allocation and frame layout an instruction
//! means the same wherever it runs, and `B` reaches `T` only by the jump, so `B`
//! followed by the copy behaves as `B` followed by `T`. Blocks are visited in layout
//! order once; `B` then ends in a conditional branch or a return and is not
//! extended again, so each block grows at most once and the code by at most
//! `MAX_BODY + 2` instructions per block.

use crate::mir::{MFunction, MInst};

/// Most instructions, terminators aside, of a block copied in place of a jump.
pub const MAX_BODY: usize = 4;

/// Replaces jumps to small blocks placed elsewhere by copies of them; returns how
/// many jumps were replaced. Runs on explicit control flow (before the jumps to the
/// next block are removed), with `mf.layout` final.
pub fn run(mf: &mut MFunction) -> usize {
    let mut copied = 0;
    for k in 0..mf.layout.len() {
        let b = mf.layout[k];
        let next = mf.layout.get(k + 1).copied();
        let insts = &mf.blocks[b].insts;
        let n = insts.len();
        let Some(&MInst::Jump { target }) = insts.last() else {
            continue;
        };
        let lone = n < 2 || !matches!(insts[n - 2], MInst::Branch { .. });
        if !lone || Some(target) == next || target == b || !worth_copying(&mf.blocks[target].insts)
        {
            continue;
        }
        let mut copy = mf.blocks[target].insts.clone();
        // The copy may run with the next instance of an anchor (a loop header's
        // test copied into the latch): its accesses drop their symbolic starts.
        for i in &mut copy {
            if let MInst::Load { addr, .. } | MInst::Store { addr, .. } = i {
                addr.sym = None;
            }
        }
        let insts = &mut mf.blocks[b].insts;
        insts.pop();
        insts.extend(copy);
        copied += 1;
    }
    copied
}

/// Before frame layout: a block of the region that shrink-wrapping would give the
/// frame (`inside`, see `crate::shrink_wrap::tentative`) ending in a lone jump to
/// a small return block outside it (ending in a return or tail call, at most
/// [`MAX_BODY`] instructions besides) gets a copy of that block. The region's
/// paths then return from blocks of their own, which restore, and the others
/// from the original, which does not (LLVM's `TailDuplicator` duplicates returns
/// before its `ShrinkWrap` likewise). Returns how many jumps were replaced.
pub fn copy_returns(mf: &mut MFunction, inside: &[bool]) -> usize {
    let mut copied = 0;
    for k in 0..mf.layout.len() {
        let b = mf.layout[k];
        let insts = &mf.blocks[b].insts;
        let n = insts.len();
        let Some(&MInst::Jump { target }) = insts.last() else {
            continue;
        };
        let lone = n < 2 || !matches!(insts[n - 2], MInst::Branch { .. });
        let returns = matches!(
            mf.blocks[target].insts.last(),
            Some(MInst::Ret { .. } | MInst::TailCall { .. })
        );
        if !lone || !returns || !inside[b.index()] || inside[target.index()] {
            continue;
        }
        if !worth_copying(&mf.blocks[target].insts) {
            continue;
        }
        let copy = mf.blocks[target].insts.clone();
        let insts = &mut mf.blocks[b].insts;
        insts.pop();
        insts.extend(copy);
        copied += 1;
    }
    copied
}

/// Whether `insts` (a block) is small and ends in a conditional branch and a jump,
/// a return or a tail call.
fn worth_copying(insts: &[MInst]) -> bool {
    let n = insts.len();
    let terminators = match insts.last() {
        Some(MInst::Ret { .. } | MInst::TailCall { .. }) => 1,
        Some(MInst::Jump { .. }) if n >= 2 && matches!(insts[n - 2], MInst::Branch { .. }) => 2,
        _ => return false,
    };
    n - terminators <= MAX_BODY
}

// Tests: crates/riscv/filetests/placement-tail-dup-*.mir.
