//! Peephole clean-ups on allocated machine code, the ones the seed write-up lists plus
//! the branch rewrites fall-through layout needs:
//!
//! - moves from a register to itself vanish (copy coalescing through move hints
//!   leaves many);
//! - jumps to blocks that only jump elsewhere are threaded to the final target, and
//!   blocks no longer reachable are dropped;
//! - a jump to the next block in layout order is removed, and `bcc T; j F` with `T`
//!   next becomes `b!cc F` falling through to `T`.

use crate::mir::{MBlock, MFunction, MInst};

/// Runs all clean-ups on `mf`.
pub fn run(mf: &mut MFunction) {
    remove_self_moves(mf);
    thread_jumps(mf);
    remove_unreachable(mf);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::{Cond, Reg, ZERO};

    #[test]
    fn inverts_branch_over_next_block_and_threads_jumps() {
        let mut mf = MFunction::new("t".into(), false);
        let b: Vec<MBlock> = (0..4).map(|_| mf.new_block()).collect();
        mf.layout = b.clone();
        let a0 = Reg::x(10);
        mf.blocks[0].insts = vec![
            MInst::Mv { rd: a0, rs: a0 },
            MInst::Branch {
                cond: Cond::Lt,
                rs1: a0,
                rs2: ZERO,
                target: b[1],
            },
            MInst::Jump { target: b[2] },
        ];
        mf.blocks[1].insts = vec![MInst::Ret { value: None }];
        mf.blocks[2].insts = vec![MInst::Jump { target: b[3] }];
        mf.blocks[3].insts = vec![MInst::Ret { value: None }];
        run(&mut mf);
        assert_eq!(mf.layout, vec![b[0], b[1], b[3]]);
        assert_eq!(
            mf.blocks[0].insts,
            vec![MInst::Branch {
                cond: Cond::Ge,
                rs1: a0,
                rs2: ZERO,
                target: b[3],
            }]
        );
    }
}
