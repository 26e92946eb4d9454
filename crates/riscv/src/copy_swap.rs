//! Copies removed after allocation by swapping two registers' names over a stretch
//! of a block: backward copy propagation with a register swap.
//!
//! A copy `mv p, x` whose source dies there exists because `x`'s value was
//! computed in another register than the one it has to end up in. LLVM's
//! `MachineCopyPropagation` (backward propagation) renames the definition of `x`
//! to `p` when nothing reads or writes `p` between the two. Here `p` may be busy
//! in between, holding other short-lived values (a software-pipelined kernel's
//! temporaries take the register of the carried value they are computed
//! beside): if some point above the definition of `x` has neither register
//! holding a value that is read later, swapping the names `p` and `x` in every
//! instruction from that point to the copy changes no value anything reads, and
//! leaves `x`'s value in `p`, so the copy goes.
//!
//! Conditions, for `mv p, x` at position `e` of a block (`p`, `x` allocatable,
//! of one register file):
//! - `x` dies at the copy: the block reads it no more before writing it, and it is
//!   not live out of the block;
//! - walking up from the copy, a point `s` is found where neither `p` nor `x` is
//!   live (or the block's start, where neither is live in), with no call between
//!   `s` and `e` (a call reads and clobbers registers by number).
//!
//! At `s` both registers hold dead values and at `e` the copy overwrites `p` and
//! `x` dies, so the renaming is invisible outside `[s, e)`; inside, it is a
//! consistent renaming. Liveness is [`allocated_liveness`]: after frame layout a
//! return reads the callee-saved registers the epilogue restored.

use crate::abi;
use crate::liveness::{allocated_liveness, reg_bit};
use crate::mir::{MFunction, MInst, Reg};

/// Removes the copies of `mf` that a register swap makes redundant; returns how
/// many went.
pub fn run(mf: &mut MFunction) -> usize {
    let (live_in, live_out) = allocated_liveness(mf);
    let mut removed = 0;
    for &b in &mf.layout {
        let (block_in, block_out) = (live_in[b.index()], live_out[b.index()]);
        let live_out = |r: Reg| block_out & reg_bit(r) != 0;
        let insts = &mut mf.blocks[b].insts;
        let mut e = 0;
        while e < insts.len() {
            if let MInst::Mv { rd: p, rs: x } = insts[e] {
                let swappable = p != x
                    && abi::is_allocatable(p)
                    && abi::is_allocatable(x)
                    && p.is_phys()
                    && x.is_phys()
                    && p.phys_class() == x.phys_class();
                if swappable && dies_at(insts, e, x, live_out(x)) {
                    let live_at_start = |r: Reg| block_in & reg_bit(r) != 0;
                    if let Some(s) = dead_point(insts, e, p, x, &live_at_start) {
                        for inst in &mut insts[s..e] {
                            inst.map_regs(|r, _| {
                                if *r == p {
                                    *r = x;
                                } else if *r == x {
                                    *r = p;
                                }
                            });
                        }
                        insts.remove(e);
                        removed += 1;
                        continue;
                    }
                }
            }
            e += 1;
        }
    }
    removed
}

/// Whether `x`, read by the copy at `e`, is read no more: the rest of the block
/// writes it before any read, or never touches it and it is not live out.
fn dies_at(insts: &[MInst], e: usize, x: Reg, live_out: bool) -> bool {
    for inst in &insts[e + 1..] {
        let mut reads = false;
        inst.for_each_use(|r| reads |= r == x);
        if reads {
            return false;
        }
        let mut writes = false;
        inst.for_each_def(|r| writes |= r == x);
        if writes {
            return true;
        }
    }
    !live_out
}

/// The latest position `s < e` before which neither `p` nor `x` holds a value read
/// at or after `s` (the block's start if neither is live into it), with no call in
/// `[s, e)`.
fn dead_point(
    insts: &[MInst],
    e: usize,
    p: Reg,
    x: Reg,
    live_in: &dyn Fn(Reg) -> bool,
) -> Option<usize> {
    // Just above the copy, `x` is live (the copy reads it) and `p` is not (the
    // copy overwrites it).
    let (mut p_live, mut x_live) = (false, true);
    for k in (0..e).rev() {
        let inst = &insts[k];
        if inst.is_call() {
            return None;
        }
        inst.for_each_def(|r| {
            if r == p {
                p_live = false;
            }
            if r == x {
                x_live = false;
            }
        });
        inst.for_each_use(|r| {
            if r == p {
                p_live = true;
            }
            if r == x {
                x_live = true;
            }
        });
        if !p_live && !x_live {
            return Some(k);
        }
    }
    (!live_in(p) && !live_in(x)).then_some(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testinsts::{addi, addw, lw, one_block as block, ret_a0 as ret, sw};

    fn mv(rd: u32, rs: u32) -> MInst {
        MInst::Mv {
            rd: Reg::x(rd),
            rs: Reg::x(rs),
        }
    }

    #[test]
    fn a_register_busy_between_definition_and_copy_is_swapped() {
        // t0 = a0 + 1 is the value a2 must get; meanwhile a2 holds a temporary.
        // Swapping t0 and a2 from the top computes the value in a2 directly.
        let mut mf = block(vec![
            addi(5, 10, 1),
            lw(12, 10, 0),
            addw(11, 12, 12),
            mv(12, 5),
            addw(10, 12, 11),
            ret(),
        ]);
        assert_eq!(run(&mut mf), 1);
        let b = mf.layout[0];
        assert_eq!(
            mf.blocks[b].insts,
            vec![
                addi(12, 10, 1),
                lw(5, 10, 0),
                addw(11, 5, 5),
                addw(10, 12, 11),
                ret(),
            ]
        );
    }

    #[test]
    fn live_values_and_calls_keep_the_copy() {
        let cases = [
            // The source is read after the copy.
            vec![addi(5, 10, 1), mv(12, 5), addw(10, 12, 5), ret()],
            // The target's old value (live into the block) is read between.
            vec![
                addi(5, 10, 1),
                sw(12, 10, 0),
                mv(12, 5),
                addw(10, 12, 12),
                ret(),
            ],
            // A call between the definition and the copy.
            vec![
                addi(5, 10, 1),
                MInst::Call {
                    callee: "g".into(),
                    args: vec![],
                },
                mv(12, 5),
                addw(10, 12, 12),
                ret(),
            ],
        ];
        for insts in cases {
            let mut mf = block(insts.clone());
            assert_eq!(run(&mut mf), 0, "{insts:?}");
            assert_eq!(mf.blocks[mf.layout[0]].insts, insts);
        }
    }
}
