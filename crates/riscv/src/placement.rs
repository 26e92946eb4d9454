//! Block placement: the order of a function's blocks in memory, and the branches
//! that order lets fall through.
//!
//! - Blocks are placed in chains so that a block whose successors are both away
//!   from it gets one of them next (greedy chain formation, the profile-free form
//!   of Pettis and Hansen, "Profile Guided Code Positioning", PLDI 1990, with loop
//!   depth in place of a profile): a loop body whose `if` arms would otherwise end
//!   in a branch *and* a jump falls through instead, a loop's latch goes after the
//!   loops nested in it, and a loop's back-edge copy block goes right before its
//!   header.
//! - Then a loop whose latch ends its run of blocks, with an exit test earlier
//!   in the run, is rotated to end with that test (LLVM's `rotateLoop`): the
//!   latch falls into the header instead of jumping back once per iteration
//!   (`rotate_loops_to_exits`).
//! - A jump to the next block in layout order is removed, and `bcc T; j F` with `T`
//!   next becomes `b!cc F` falling through to `T`.
//!
//! - In between, a jump to a small block placed elsewhere is replaced by a copy of
//!   that block ([`crate::tail_dup`]).
//! - Last, copies whose value their readers can take from the source instead are
//!   removed ([`crate::copy_forward`]): tail duplication leaves some.
//!
//! With [`Placement::KeepOrder`] (`-fno-reorder-blocks`) only the last step runs,
//! on the order instruction selection made.

use crate::loops::LoopInfo;
use crate::mir::{MBlock, MFunction, MInst};

/// Whether to reorder blocks before making fall-throughs explicit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Chain blocks by loop depth and successors (the default).
    Chains,
    /// Keep instruction selection's order.
    KeepOrder,
}

/// Places the blocks of `mf` (unless `KeepOrder`) and removes jumps to the next block.
pub fn run(mf: &mut MFunction, placement: Placement) {
    if placement == Placement::Chains {
        place_blocks(mf);
        crate::tail_dup::run(mf);
        let info = crate::loops::loop_info(mf);
        fall_through(mf, Some(&info));
        crate::copy_forward::run(mf);
    } else {
        fall_through(mf, None);
    }
}

/// Reorders `mf.layout` in chains. A latch (a block other than the header that
/// branches back to a loop's header) is not chosen to come next while another
/// successor is free: latches go last in their loop, after any inner loop, whose
/// exit then falls into the latch instead of jumping back up to it once per outer
/// iteration. Among the rest, after a block comes the block that followed it
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
    // Blocks other than a loop's header that branch back to it (its latches).
    let mut latch = vec![false; mf.blocks.len()];
    for (li, l) in info.loops.iter().enumerate() {
        let h = l.header;
        let backs: Vec<MBlock> = info.preds[h.index()]
            .iter()
            .copied()
            .filter(|&p| info.contains(li, p))
            .collect();
        for &b in &backs {
            latch[b.index()] |= b != h;
        }
        if let [b] = backs[..] {
            let insts = &mf.blocks[b].insts;
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
        let insts = &mf.blocks[b].insts;
        let n = insts.len();
        let mut succs = Vec::with_capacity(2);
        if let Some(MInst::Jump { target }) = insts.last() {
            succs.push(*target);
            if let Some(MInst::Branch { target, .. }) = n.checked_sub(2).map(|k| &insts[k]) {
                succs.push(*target);
            }
        }
        succs.retain(|&t| free(t, &placed));
        // A latch waits while another successor can come next: it goes last in
        // its loop, after the inner loops, so their exits fall into it.
        if succs.iter().any(|t| !latch[t.index()]) {
            succs.retain(|t| !latch[t.index()]);
        }
        let kept = old_next[b.index()].filter(|t| succs.contains(t));
        cur = kept
            .or_else(|| succs.iter().rev().copied().max_by_key(|&t| leads_to(t)))
            .or_else(|| rest.by_ref().find(|&t| free(t, &placed)));
    }
    mf.layout = layout;
    rotate_loops_to_exits(mf);
}

/// Rotates each loop whose one latch ends the run of its blocks that the header
/// starts in the layout, without leaving the loop, so that the run ends
/// instead with an exiting block that dominates the latch and leaves for the
/// block after the run (LLVM's `MachineBlockPlacement::rotateLoop`, which moves
/// the best exiting block to the bottom of the loop's chain). The latch then
/// falls into the header, and the exiting block branches back up to its
/// successor in the loop and falls out of it: per iteration a branch taken
/// where it was not, and a jump fewer (or a branch fewer taken) at the latch;
/// the entry jumps to the header, once per loop.
fn rotate_loops_to_exits(mf: &mut MFunction) {
    let info = crate::loops::loop_info(mf);
    // Asked for only once a loop passes the other tests (most do not).
    let mut dt = None;
    let mut pos = vec![usize::MAX; mf.blocks.len()];
    for (k, &b) in mf.layout.iter().enumerate() {
        pos[b.index()] = k;
    }
    // Inner loops first: an outer loop's rotation carries them along.
    for (li, l) in info.loops.iter().enumerate().rev() {
        let h = l.header;
        let s = pos[h.index()];
        let inside = |b: MBlock| info.contains(li, b);
        // The run of the loop's blocks from the header (others may be placed
        // apart, out of line).
        let run = mf.layout[s..].iter().take_while(|&&b| inside(b)).count();
        let e = s + run - 1;
        // The entry stays first.
        if s == 0 || e + 1 >= mf.layout.len() {
            continue;
        }
        let latch = mf.layout[e];
        let latches: Vec<MBlock> = info.preds[h.index()]
            .iter()
            .copied()
            .filter(|&p| inside(p))
            .collect();
        let succs = mf.succs(latch);
        if latch == h || latches != [latch] || !succs.iter().all(|&t| inside(t)) {
            continue;
        }
        let after = mf.layout[e + 1];
        let exits_to_after = |k: usize| {
            let mut succs = mf.succs(mf.layout[k]);
            succs.sort();
            let mut want = [mf.layout[k + 1], after];
            want.sort();
            succs[..] == want
        };
        if !(s..e).any(exits_to_after) {
            continue;
        }
        let Some(dt) = dt.get_or_insert_with(|| crate::loops::dominator_tree(mf)) else {
            return;
        };
        let exiting = (s..e)
            .rev()
            .find(|&k| exits_to_after(k) && dt.dominates(mf.layout[k], latch));
        if let Some(k) = exiting {
            mf.layout[s..=e].rotate_left(k + 1 - s);
            for (p, &b) in mf.layout.iter().enumerate().take(e + 1).skip(s) {
                pos[b.index()] = p;
            }
        }
    }
}

/// Removes jumps to the next block, inverting `bcc T; j F` to fall through to `T`
/// when `T` is next. With the function's `loops`, a `bcc T; j F` with neither next
/// whose jump is a back edge (`F` heads a loop holding the block) and whose branch
/// leaves that loop becomes `b!cc F; j T`, so that each iteration takes one branch
/// and the jump runs once, on the way out.
fn fall_through(mf: &mut MFunction, loops: Option<&LoopInfo>) {
    // The loops each block heads, so that the test below does not scan every loop.
    let mut headed: Vec<Vec<usize>> = vec![Vec::new(); mf.blocks.len()];
    if let Some(info) = loops {
        for (li, l) in info.loops.iter().enumerate() {
            headed[l.header.index()].push(li);
        }
    }
    for k in 0..mf.layout.len() {
        let b = mf.layout[k];
        let next = mf.layout.get(k + 1).copied();
        let insts = &mut mf.blocks[b].insts;
        let n = insts.len();
        if n >= 2 {
            if let (MInst::Branch { cond, target, .. }, MInst::Jump { target: f }) =
                (&insts[n - 2], &insts[n - 1])
            {
                let (t, f) = (*target, *f);
                let back_edge_past_exit = loops.is_some_and(|info| {
                    headed[f.index()]
                        .iter()
                        .any(|&li| info.contains(li, b) && !info.contains(li, t))
                });
                if Some(t) == next || (Some(f) != next && back_edge_past_exit) {
                    let inv = cond.inverse();
                    if let MInst::Branch { cond, target, .. } = &mut insts[n - 2] {
                        *cond = inv;
                        *target = f;
                    }
                    if Some(t) == next {
                        insts.pop();
                    } else {
                        insts[n - 1] = MInst::Jump { target: t };
                    }
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

// Tests: crates/riscv/filetests/placement-*.mir.
