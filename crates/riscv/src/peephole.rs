//! Peephole clean-ups on allocated machine code, the ones the seed write-up lists plus
//! the branch rewrites fall-through layout needs:
//!
//! - moves from a register to itself vanish (copy coalescing through move hints
//!   leaves many);
//! - jumps to blocks that only jump elsewhere are threaded to the final target, and
//!   blocks no longer reachable are dropped;
//! - blocks are placed in chains so that a block whose successors are both away
//!   from it gets one of them next (greedy chain formation, the profile-free form
//!   of Pettis and Hansen, "Profile Guided Code Positioning", PLDI 1990): a loop
//!   body whose `if` arms would otherwise end in a branch *and* a jump falls
//!   through instead;
//! - a jump to the next block in layout order is removed, and `bcc T; j F` with `T`
//!   next becomes `b!cc F` falling through to `T`.

use crate::mir::{MBlock, MFunction, MInst};

/// Runs all clean-ups on `mf`.
pub fn run(mf: &mut MFunction) {
    remove_self_moves(mf);
    thread_jumps(mf);
    remove_unreachable(mf);
    place_blocks(mf);
    fall_through(mf);
}

fn remove_self_moves(mf: &mut MFunction) {
    for b in &mut mf.blocks {
        b.insts
            .retain(|i| !matches!(i, MInst::Mv { rd, rs } if rd == rs));
    }
}

/// The block control ends up in when entering `b`, skipping blocks that are a lone jump.
fn final_target(mf: &MFunction, mut b: MBlock) -> MBlock {
    let mut steps = 0;
    while let [MInst::Jump { target }] = mf.blocks[b.index()].insts.as_slice() {
        if *target == b || steps > mf.blocks.len() {
            break;
        }
        b = *target;
        steps += 1;
    }
    b
}

fn thread_jumps(mf: &mut MFunction) {
    let finals: Vec<MBlock> = (0..mf.blocks.len())
        .map(|b| final_target(mf, MBlock(b as u32)))
        .collect();
    for b in &mut mf.blocks {
        for i in &mut b.insts {
            if let Some(t) = i.branch_target_mut() {
                *t = finals[t.index()];
            }
        }
        // `bcc T; j T` is `j T`.
        if let [.., MInst::Branch { target: a, .. }, MInst::Jump { target: c }] = b.insts.as_slice()
        {
            if a == c {
                let n = b.insts.len();
                b.insts.remove(n - 2);
            }
        }
    }
}

fn remove_unreachable(mf: &mut MFunction) {
    let Some(&entry) = mf.layout.first() else {
        return;
    };
    let mut seen = vec![false; mf.blocks.len()];
    let mut work = vec![entry];
    seen[entry.index()] = true;
    while let Some(b) = work.pop() {
        for s in mf.succs(b) {
            if !seen[s.index()] {
                seen[s.index()] = true;
                work.push(s);
            }
        }
    }
    mf.layout.retain(|b| seen[b.index()]);
}

/// Reorders `mf.layout` in chains. After a block comes the block that followed it
/// before when that is one of its successors (the order instruction selection made
/// from the IR keeps most fall-throughs already); otherwise its successor of greatest
/// loop depth not yet placed (a loop's body follows its header and its exit stays out
/// of the way), then the one leading deeper (a preheader before a latch), then the
/// target of the final jump (for `bcc T; j F`, `F`). When no successor is free, the
/// next unplaced block of the old order. A loop header whose only back edge comes
/// from a block ending in a plain jump (the copies for the header's arguments) gets
/// that block right before it, so each iteration falls into the header instead of
/// jumping (loop rotation, as LLVM's MachineBlockPlacement does; the entry edge jumps
/// instead, once per loop). The entry stays first. Every block ends in explicit
/// control flow (module `mir`), so any order is correct.
fn place_blocks(mf: &mut MFunction) {
    let info = crate::loops::loop_info(mf);
    let depth = &info.depth;
    // A loop's only back edge leaving an unconditional block (the latch's copies
    // for the header's arguments): that block goes right before the header.
    let mut back_block: Vec<Option<MBlock>> = vec![None; mf.blocks.len()];
    for (li, l) in info.loops.iter().enumerate() {
        let h = l.header;
        let backs: Vec<MBlock> = info.preds[h.index()]
            .iter()
            .copied()
            .filter(|&p| info.contains(li, p))
            .collect();
        if let [b] = backs[..] {
            let insts = &mf.blocks[b.index()].insts;
            let only_jump = insts
                .iter()
                .all(|i| i.branch_target().is_none() || i.is_barrier());
            if b != h
                && only_jump
                && matches!(insts.last(), Some(MInst::Jump { target }) if *target == h)
            {
                back_block[h.index()] = Some(b);
            }
        }
    }
    let old = std::mem::take(&mut mf.layout);
    let mut placed = vec![false; mf.blocks.len()];
    let mut in_layout = vec![false; mf.blocks.len()];
    let mut old_next = vec![None; mf.blocks.len()];
    for (k, b) in old.iter().enumerate() {
        in_layout[b.index()] = true;
        old_next[b.index()] = old.get(k + 1).copied();
    }
    let free = |b: MBlock, placed: &[bool]| in_layout[b.index()] && !placed[b.index()];
    let leads_to = |b: MBlock| {
        let succ_depth = mf.succs(b).iter().map(|s| depth[s.index()]).max();
        (depth[b.index()], succ_depth.unwrap_or(0))
    };
    let mut layout = Vec::with_capacity(old.len());
    let mut rest = old.iter().copied();
    let mut cur = old.first().copied();
    while let Some(b) = cur {
        if let Some(back) = back_block[b.index()].filter(|&k| free(k, &placed)) {
            placed[back.index()] = true;
            layout.push(back);
        }
        placed[b.index()] = true;
        layout.push(b);
        let insts = &mf.blocks[b.index()].insts;
        let n = insts.len();
        let mut succs = Vec::with_capacity(2);
        if let Some(MInst::Jump { target }) = insts.last() {
            succs.push(*target);
            if let Some(MInst::Branch { target, .. }) = n.checked_sub(2).map(|k| &insts[k]) {
                succs.push(*target);
            }
        }
        succs.retain(|&t| free(t, &placed));
        let kept = old_next[b.index()].filter(|t| succs.contains(t));
        cur = kept
            .or_else(|| succs.iter().rev().copied().max_by_key(|&t| leads_to(t)))
            .or_else(|| rest.by_ref().find(|&t| free(t, &placed)));
    }
    mf.layout = layout;
}

fn fall_through(mf: &mut MFunction) {
    for k in 0..mf.layout.len() {
        let b = mf.layout[k];
        let next = mf.layout.get(k + 1).copied();
        let insts = &mut mf.blocks[b.index()].insts;
        let n = insts.len();
        if n >= 2 {
            if let (MInst::Branch { cond, target, .. }, MInst::Jump { target: f }) =
                (&insts[n - 2], &insts[n - 1])
            {
                if Some(*target) == next {
                    let (inv, f) = (cond.inverse(), *f);
                    if let MInst::Branch { cond, target, .. } = &mut insts[n - 2] {
                        *cond = inv;
                        *target = f;
                    }
                    insts.pop();
                    continue;
                }
            }
        }
        if let Some(MInst::Jump { target }) = insts.last() {
            if Some(*target) == next {
                insts.pop();
            }
        }
    }
}

// Tests: crates/riscv/filetests/peephole-*.mir.
