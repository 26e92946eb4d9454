//! Stack slot colouring: spilled virtual registers whose live intervals do not
//! overlap share one spill slot, so a function that spills many short-lived values
//! (a long expression after inlining) keeps a small frame, whose slots stay within
//! reach of a load's or store's 12-bit offset from `sp`.
//!
//! The interval graph of the spilled registers' live ranges (each taken as its hull,
//! from its first to its last position) is coloured greedily in order of start, the
//! optimal colouring of an interval graph: a slot is reused by the next interval that
//! starts at or after the end of the last interval it holds. This is LLVM's
//! `StackSlotColoring` without its use of holes and spill weights.
//!
//! Sharing is exact under "spill everywhere" ([`super::spill`]): a spilled value is
//! stored to its slot right after each definition and reloaded right before each
//! use, all within its live interval, and intervals are half-open, so a value last
//! read by an instruction and one that instruction defines may share a slot (the
//! reload precedes the instruction, the store follows it). The allocation checker
//! follows every slot's contents and would report a value overwritten while live.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::liveness::Intervals;
use crate::mir::{MFunction, Slot, SlotKind, NUM_PREGS};

/// A spill slot for each virtual register `needs` marks, shared between registers
/// whose intervals in `iv` do not overlap; `None` for the others.
pub fn assign_spill_slots(mf: &mut MFunction, needs: &[bool], iv: &Intervals) -> Vec<Option<Slot>> {
    let mut order: Vec<(u32, u32, usize)> = needs
        .iter()
        .enumerate()
        .filter(|&(_, &n)| n)
        .map(|(v, _)| {
            let i = &iv.regs[NUM_PREGS as usize + v];
            (i.start(), i.end(), v)
        })
        .collect();
    order.sort_unstable();
    let mut slots = vec![None; needs.len()];
    // Slots in use, by the end of the last interval each holds (earliest first).
    let mut busy: BinaryHeap<Reverse<(u32, usize)>> = BinaryHeap::new();
    let mut made: Vec<Slot> = Vec::new();
    for (start, end, v) in order {
        let k = match busy.peek() {
            Some(&Reverse((free_at, k))) if free_at <= start => {
                busy.pop();
                k
            }
            _ => {
                made.push(mf.new_slot(SlotKind::Spill));
                made.len() - 1
            }
        };
        slots[v] = Some(made[k]);
        busy.push(Reverse((end.max(start), k)));
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::liveness::Interval;
    use crate::text::parse_function;

    fn intervals(vregs: &[&[(u32, u32)]]) -> Intervals {
        let mut regs: Vec<Interval> = (0..NUM_PREGS)
            .map(|_| Interval { ranges: Vec::new() })
            .collect();
        regs.extend(vregs.iter().map(|r| Interval { ranges: r.to_vec() }));
        Intervals {
            regs,
            block_start: vec![0],
            block_end: vec![40],
        }
    }

    #[test]
    fn registers_live_apart_share_a_slot() {
        let mut mf = parse_function("function f local\nbb0:\n  ret a0\nend\n").unwrap();
        // v0 ends where v1 starts (v0's last use is v1's definition): one slot.
        // v2 overlaps both; v3 lies in a hole of v4 but within its hull, so it
        // does not share v4's slot; v5 needs no slot.
        let iv = intervals(&[
            &[(1, 5)],
            &[(5, 9)],
            &[(3, 7)],
            &[(20, 22)],
            &[(11, 19), (23, 30)],
            &[(31, 33)],
        ]);
        let needs = [true, true, true, true, true, false];
        let slots = assign_spill_slots(&mut mf, &needs, &iv);
        assert_eq!(slots[0], slots[1]);
        assert_ne!(slots[0], slots[2]);
        assert_ne!(slots[3], slots[4]);
        assert_eq!(slots[5], None);
        // v4 and v3 reuse the slots v0/v1 and v2 left: two slots in all.
        assert_eq!(mf.slots.len(), 2, "{slots:?}");
    }
}
