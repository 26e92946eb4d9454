//! Register renaming before post-allocation scheduling: a value that the allocator
//! put in a register the block already used moves to a register the block does
//! not touch, so that the scheduler is not held by the write-after-read and
//! write-after-write dependences the reuse created.
//!
//! ```text
//!   li  s5, 0            li  s5, 0
//!   sw  s5, 0(a0)        sw  s5, 0(a0)
//!   add s5, s4, a6   ->  add t3, s4, a6     (t3 free in the block: the add may
//!   bge s5, a2, L        bge t3, a2, L       now issue beside the li)
//! ```
//!
//! This is GCC's `regrename` (`-frename-registers`, run just before its second
//! scheduling pass), restricted to one block: a live range is a definition and the
//! reads after it up to the next definition of its register (the reads of that
//! next definition included); it is renamed when the register was read or written
//! earlier in the block, the range ends inside the block (the register is
//! redefined there, or not live out), no call, return or tail call reads it, it
//! does not live across a call, and a register of its file is free: not read or
//! written in the block, not live into or out of it, and either caller-saved or
//! already saved by the function (a callee-saved register used elsewhere in it).
//! The post-allocation scheduler ([`crate::schedule::run`]) schedules each block
//! with and without the renaming and keeps the faster.
//!
//! Liveness is [`allocated_liveness`]: over the final layout, where blocks fall
//! through to the next one, with the callee-saved registers read at a return.

use crate::abi;
use crate::liveness::{allocated_liveness, reg_bit as bit, RegMask as Mask};
use crate::mir::{MFunction, MInst, Reg};

/// What renaming in one block of a function needs to know: which registers are
/// live into and out of each block, and which the function uses at all.
pub struct Renamer {
    live_in: Vec<Mask>,
    live_out: Vec<Mask>,
    used_in_function: Mask,
}

impl Renamer {
    /// The facts of allocated `mf` in its final layout.
    pub fn new(mf: &MFunction) -> Self {
        let (live_in, live_out) = allocated_liveness(mf);
        let mut used_in_function: Mask = 0;
        for &b in &mf.layout {
            for inst in &mf.blocks[b].insts {
                inst.for_each_use(|r| used_in_function |= bit(r));
                if !inst.is_call() {
                    inst.for_each_def(|r| used_in_function |= bit(r));
                }
            }
        }
        Renamer {
            live_in,
            live_out,
            used_in_function,
        }
    }

    /// Renames the reused registers' live ranges of `insts`, the code of block
    /// number `b`; returns how many ranges moved.
    pub fn rename_block(&self, b: usize, insts: &mut [MInst]) -> usize {
        let out = self.live_out[b];
        let mut touched = self.live_in[b] | out;
        for inst in insts.iter() {
            inst.for_each_use(|r| touched |= bit(r));
            inst.for_each_def(|r| touched |= bit(r));
        }
        let mut renamed = 0;
        let mut seen: Mask = 0;
        for i in 0..insts.len() {
            insts[i].for_each_use(|r| seen |= bit(r));
            let Some(r) = single_def(&insts[i]) else {
                continue;
            };
            let reused = seen & bit(r) != 0;
            seen |= bit(r);
            if !reused || !abi::is_allocatable(r) {
                continue;
            }
            let Some(end) = range_end(insts, i, r, out & bit(r) != 0) else {
                continue;
            };
            let free = |f: &&Reg| {
                touched & bit(**f) == 0
                    && (!abi::is_read_by_return(**f) || self.used_in_function & bit(**f) != 0)
            };
            let Some(&f) = abi::allocatable(r.phys_class()).iter().find(free) else {
                continue;
            };
            touched |= bit(f);
            seen |= bit(f);
            rename_range(insts, i, end, r, f);
            renamed += 1;
        }
        renamed
    }
}

/// The register `inst` writes, when it writes exactly one and is not a call.
fn single_def(inst: &MInst) -> Option<Reg> {
    if inst.is_call() {
        return None;
    }
    let mut def = None;
    inst.for_each_def(|r| def = Some(r));
    def.filter(|r| r.is_phys())
}

/// The last position that reads the value `insts[i]` writes into `r`: the range
/// ends at the next definition of `r` (which may read it too) or, when `r` is not
/// live out, at its last read in the block. `None` when the value is live out, or
/// read by a call, return or tail call (they read registers by number), or may
/// live across a call.
fn range_end(insts: &[MInst], i: usize, r: Reg, live_out: bool) -> Option<usize> {
    let mut last = i;
    for (k, inst) in insts.iter().enumerate().skip(i + 1) {
        let mut reads = false;
        inst.for_each_use(|u| reads |= u == r);
        // A return or tail call ends the value unless it reads it, or the caller
        // does (a callee-saved register, restored by the epilogue); a call ends
        // it when it clobbers it (a callee-saved register's value may live on).
        if matches!(inst, MInst::Ret { .. } | MInst::TailCall { .. }) {
            return (!reads && !abi::is_read_by_return(r)).then_some(last);
        }
        if inst.is_call() && !abi::is_callee_saved(r) {
            return (!reads).then_some(last);
        }
        if inst.is_call() {
            return None;
        }
        if reads {
            last = k;
        }
        let mut writes = false;
        inst.for_each_def(|d| writes |= d == r);
        if writes {
            return Some(last);
        }
    }
    (!live_out).then_some(last)
}

/// Renames the definition of `r` at `i` and its reads up to `end` to `f`.
fn rename_range(insts: &mut [MInst], i: usize, end: usize, r: Reg, f: Reg) {
    insts[i].map_regs(|x, is_def| {
        if is_def && *x == r {
            *x = f;
        }
    });
    for inst in &mut insts[i + 1..=end] {
        inst.map_regs(|x, is_def| {
            if !is_def && *x == r {
                *x = f;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testinsts::{addi, addw, lw, one_block, ret_a0, sw};

    /// One block returning `a0`, its code `insts` followed by `ret a0`.
    fn function(mut insts: Vec<MInst>) -> MFunction {
        insts.push(ret_a0());
        one_block(insts)
    }

    fn rename(mf: &mut MFunction) -> usize {
        let r = Renamer::new(mf);
        let b = mf.layout[0];
        r.rename_block(b.index(), &mut mf.blocks[b].insts)
    }

    #[test]
    fn a_reused_register_moves_to_one_the_block_does_not_touch() {
        // t0 holds a loaded value, then (after the store reads it) a sum: the sum
        // moves to t1, the first allocatable register the block leaves alone.
        let mut mf = function(vec![
            lw(5, 11, 0),
            sw(5, 11, 4),
            addi(5, 12, 1),
            addw(10, 5, 5),
        ]);
        assert_eq!(rename(&mut mf), 1);
        assert_eq!(
            mf.blocks[mf.layout[0]].insts[..4],
            [lw(5, 11, 0), sw(5, 11, 4), addi(6, 12, 1), addw(10, 6, 6)]
        );
    }

    #[test]
    fn live_out_values_calls_and_unsaved_registers_stay() {
        // The reused register's value is returned (read by `ret`): it stays.
        let mut mf = function(vec![lw(10, 11, 0), sw(10, 11, 4), addi(10, 12, 1)]);
        assert_eq!(rename(&mut mf), 0);
        // An epilogue restoring a callee-saved register (s1) after the block used
        // it: the caller reads it after the return.
        let mut mf = function(vec![
            addi(9, 11, 1),
            sw(9, 11, 4),
            MInst::Load {
                op: crate::mir::MemOp::D,
                rd: Reg::x(9),
                addr: crate::mir::Addr::new(crate::mir::Base::Reg(crate::mir::SP), 8),
            },
        ]);
        assert_eq!(rename(&mut mf), 0);
        // The same with `ra`, which the allocator gave a value: `ret` reads the
        // return address the epilogue restores.
        let mut mf = function(vec![
            addi(1, 11, 1),
            sw(1, 11, 4),
            MInst::Load {
                op: crate::mir::MemOp::D,
                rd: crate::mir::RA,
                addr: crate::mir::Addr::new(crate::mir::Base::Reg(crate::mir::SP), 8),
            },
        ]);
        assert_eq!(rename(&mut mf), 0);
        // A call between the definition and its read: the value stays where it is.
        let mut mf = function(vec![
            lw(9, 11, 0),
            sw(9, 11, 4),
            addi(9, 12, 1),
            MInst::Call {
                callee: "g".into(),
                args: vec![],
            },
            addw(10, 9, 9),
        ]);
        assert_eq!(rename(&mut mf), 0);
        // Every caller-saved register taken: only callee-saved ones and `ra`, which
        // the function does not save, are left, and none is used.
        let mut insts: Vec<MInst> = abi::allocatable(crate::mir::RegClass::Int)
            .iter()
            .filter(|r| !abi::is_read_by_return(**r) && r.0 != 10)
            .map(|r| lw(r.0, 10, 0))
            .collect();
        let n = insts.len();
        insts.push(sw(5, 10, 4));
        insts.push(addi(5, 12, 1));
        insts.push(addw(10, 5, 5));
        let mut mf = function(insts);
        assert_eq!(rename(&mut mf), 0, "{n} loads");
    }
}
