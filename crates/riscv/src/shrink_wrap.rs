//! Shrink-wrapping: the prologue (the frame allocated, `ra` and the callee-saved
//! registers in use saved) goes to the first block that needs it instead of the
//! entry, and the epilogue to the returns after it, so a path that needs no frame
//! (an early return) runs without one. This is Chow's shrink-wrapping ("Minimizing
//! register usage penalty at procedure calls", PLDI 1988) in the form of LLVM's
//! `ShrinkWrap` pass: one save point for the whole frame.
//!
//! A block *needs the frame* when it calls (`ra`), mentions `sp` or a callee-saved
//! register the frame saves, or accesses a local or spill slot; incoming stack
//! arguments are addressed from whichever `sp` the block runs with. The save point
//! is the nearest common dominator of those blocks, moved up the dominator tree
//! while it lies in a loop (the prologue would run on every trip) or while the
//! region it dominates is not closed: a block the save point dominates must branch
//! only to blocks it dominates, so that every path either enters the region once,
//! through the save point, and leaves it by a return, or never enters it. Each
//! return (or tail call) in the region restores; the others find `sp` and every
//! callee-saved register as the caller left them.
//!
//! Copies into callee-saved registers in the entry (parameters kept across calls)
//! would pin the save point to the entry: `postra_sink` first sinks them to the
//! successors that read them. A return block shared by the region and the rest of
//! the function would keep the region open: `tail_dup::copy_returns` first gives
//! the region's jumps to it copies of their own.

use crate::frame::Frame;
use crate::loops;
use crate::mir::*;
use ir::analysis::DomTree;

/// Where the prologue goes and which blocks run with the frame.
pub struct Wrap {
    /// The block whose start allocates the frame.
    pub save: MBlock,
    /// For each block (by index), whether it runs with the frame allocated: the
    /// blocks `save` dominates.
    pub inside: Vec<bool>,
}

/// The save point of `mf`'s frame `fr` (the entry when nothing better is safe).
pub fn place(mf: &MFunction, fr: &Frame) -> Wrap {
    let entry = mf.layout[0];
    let everywhere = Wrap {
        save: entry,
        inside: vec![true; mf.blocks.len()],
    };
    let Some((mut save, dt)) = first_save(mf, fr) else {
        return everywhere;
    };
    let depth = loops::loop_depths(mf);
    loop {
        if save == entry {
            return everywhere;
        }
        let inside = dominated(mf, &dt, save);
        let closed = mf
            .layout
            .iter()
            .all(|&b| !inside[b.index()] || mf.succs(b).iter().all(|s| inside[s.index()]));
        if closed {
            return Wrap { save, inside };
        }
        save = dt.idom(save).unwrap_or(entry);
        while depth[save.index()] > 0 {
            save = dt.idom(save).unwrap_or(entry);
        }
    }
}

/// The save point before the region is closed: the nearest common dominator of
/// the blocks that need the frame, moved out of loops, with the blocks it
/// dominates. `None` when the entry is the only choice. `crate::tail_dup::
/// copy_returns` uses it to give the returns this region shares with the rest of
/// the function copies of their own, so that it closes.
pub fn tentative(mf: &MFunction, fr: &Frame) -> Option<Wrap> {
    let (save, dt) = first_save(mf, fr)?;
    (save != mf.layout[0]).then(|| Wrap {
        save,
        inside: dominated(mf, &dt, save),
    })
}

/// The nearest common dominator of the blocks needing the frame, moved up the
/// dominator tree out of any loop, with the dominator tree; `None` when no block
/// needs the frame (or it is empty).
fn first_save(mf: &MFunction, fr: &Frame) -> Option<(MBlock, DomTree<MBlock>)> {
    if fr.size == 0 && fr.saves.is_empty() {
        return None;
    }
    let dt = loops::dominator_tree(mf)?;
    let saved: Vec<Reg> = fr.saves.iter().map(|&(r, _)| r).collect();
    let mut users = mf
        .layout
        .iter()
        .copied()
        .filter(|&b| dt.is_reachable(b) && needs_frame(mf, b, &saved));
    let mut save = users.next()?;
    for u in users {
        save = common_dominator(&dt, save, u);
    }
    let depth = loops::loop_depths(mf);
    while depth[save.index()] > 0 {
        save = dt.idom(save)?;
    }
    Some((save, dt))
}

/// For each block (by index), whether `save` dominates it.
fn dominated(mf: &MFunction, dt: &DomTree<MBlock>, save: MBlock) -> Vec<bool> {
    (0..mf.blocks.len())
        .map(|b| {
            let b = MBlock(b as u32);
            dt.is_reachable(b) && dt.dominates(save, b)
        })
        .collect()
}

/// Whether block `b` needs the frame: see the module comment.
fn needs_frame(mf: &MFunction, b: MBlock, saved: &[Reg]) -> bool {
    mf.blocks[b].insts.iter().any(|inst| {
        if inst.is_call() {
            return true;
        }
        let local_slot = match inst {
            MInst::Load { addr, .. } | MInst::Store { addr, .. } => match addr.base {
                Base::Slot(s) => Some(s),
                Base::Reg(_) => None,
            },
            MInst::FrameAddr { slot, .. } => Some(*slot),
            _ => None,
        }
        .is_some_and(|s| !matches!(mf.slots[s], SlotKind::Incoming(_)));
        let mut uses_saved = false;
        let mut i = inst.clone();
        i.map_regs(|r, _| uses_saved |= *r == SP || saved.contains(r));
        local_slot || uses_saved
    })
}

/// The nearest block dominating both `a` and `b`.
fn common_dominator(dt: &DomTree<MBlock>, mut a: MBlock, b: MBlock) -> MBlock {
    while !dt.dominates(a, b) {
        match dt.idom(a) {
            Some(p) => a = p,
            None => return a,
        }
    }
    a
}
