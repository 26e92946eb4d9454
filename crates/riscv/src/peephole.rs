//! Peephole clean-ups on allocated machine code, the ones the seed write-up lists:
//!
//! - moves from a register to itself vanish (copy coalescing through move hints
//!   leaves many);
//! - instructions that both successors of a two-way branch start with, when the
//!   branch is their only way in, move above the branch (LLVM's branch folding,
//!   `HoistCommonCodeInSuccs`): a loop whose back edge and exit pass the same
//!   values (a software-pipelined kernel's carried values) then copies them in
//!   its own block, which becomes a loop of one block;
//! - copies whose source dies there vanish when the two registers' names can be
//!   swapped above them ([`crate::copy_swap`]);
//! - jumps to blocks that only jump elsewhere are threaded to the final target, and
//!   blocks no longer reachable are dropped.
//!
//! Block order and fall-through branches come after, in [`crate::placement`].

use crate::mir::{MBlock, MFunction, MInst};

/// Runs all clean-ups on `mf`.
pub fn run(mf: &mut MFunction) {
    remove_self_moves(mf);
    hoist_common_successor_code(mf);
    crate::copy_swap::run(mf);
    thread_jumps(mf);
    remove_unreachable(mf);
}

fn remove_self_moves(mf: &mut MFunction) {
    for b in mf.blocks.values_mut() {
        b.insts
            .retain(|i| !matches!(i, MInst::Mv { rd, rs } if rd == rs));
    }
}

fn hoist_common_successor_code(mf: &mut MFunction) {
    let mut entries = vec![0usize; mf.blocks.len()];
    for &b in &mf.layout {
        for s in mf.succs(b) {
            entries[s.index()] += 1;
        }
    }
    if let Some(&entry) = mf.layout.first() {
        // The function's entry is entered from outside too.
        entries[entry.index()] += 1;
    }
    for k in 0..mf.layout.len() {
        let b = mf.layout[k];
        let insts = &mf.blocks[b].insts;
        let n = insts.len();
        let (rs1, rs2, t, e) = match insts.get(n.wrapping_sub(2)..) {
            Some(
                [MInst::Branch {
                    rs1, rs2, target, ..
                }, MInst::Jump { target: e }],
            ) => (*rs1, *rs2, *target, *e),
            _ => continue,
        };
        if t == e || t == b || e == b || entries[t.index()] != 1 || entries[e.index()] != 1 {
            continue;
        }
        let (ti, ei) = (&mf.blocks[t].insts, &mf.blocks[e].insts);
        let common = ti
            .iter()
            .zip(ei)
            .take_while(|(x, y)| {
                let mut writes_operand = false;
                x.for_each_def(|r| writes_operand |= r == rs1 || r == rs2);
                x == y && !x.is_terminator() && !x.is_call() && !writes_operand
            })
            .count();
        if common == 0 {
            continue;
        }
        let moved: Vec<MInst> = mf.blocks[t].insts.drain(..common).collect();
        mf.blocks[e].insts.drain(..common);
        let at = mf.blocks[b].insts.len() - 2;
        mf.blocks[b].insts.splice(at..at, moved);
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

/// Drops the blocks the entry does not reach from the layout.
pub(crate) fn remove_unreachable(mf: &mut MFunction) {
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
