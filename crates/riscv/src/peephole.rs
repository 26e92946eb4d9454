//! Peephole clean-ups on allocated machine code, the ones the seed write-up lists:
//!
//! - moves from a register to itself vanish (copy coalescing through move hints
//!   leaves many);
//! - jumps to blocks that only jump elsewhere are threaded to the final target, and
//!   blocks no longer reachable are dropped.
//!
//! Block order and fall-through branches come after, in [`crate::placement`].

use crate::mir::{MBlock, MFunction, MInst};

/// Runs all clean-ups on `mf`.
pub fn run(mf: &mut MFunction) {
    remove_self_moves(mf);
    thread_jumps(mf);
    remove_unreachable(mf);
}

fn remove_self_moves(mf: &mut MFunction) {
    for b in mf.blocks.values_mut() {
        b.insts
            .retain(|i| !matches!(i, MInst::Mv { rd, rs } if rd == rs));
    }
}

/// The block control ends up in when entering `b`, skipping blocks that are a lone jump.
fn final_target(mf: &MFunction, mut b: MBlock) -> MBlock {
    let mut steps = 0;
    while let [MInst::Jump { target }] = mf.blocks[b].insts.as_slice() {
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
    for b in mf.blocks.values_mut() {
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

// Tests: crates/riscv/filetests/peephole-*.mir and placement-after-peephole-*.mir.
