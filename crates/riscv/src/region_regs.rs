//! Dense numbers for the registers a scheduling region mentions, for the
//! per-register state of [`crate::schedule`]'s dependence graph and of
//! [`crate::increments`], kept in arrays indexed by them.
//!
//! A region is short (at most [`crate::schedule::WINDOW`] instructions, seven on
//! average), so its registers go into one small open-addressing table sized
//! for them (Knuth's multiplicative hashing, linear probing): one allocation per
//! region, where a hash map per analysis cost its allocation and its growth on
//! every region.

use crate::mir::Reg;
use crate::u74::Timing;

/// A slot no register takes.
const EMPTY: u32 = u32::MAX;

/// The registers a region reads or writes, numbered `0..len()` in order of
/// first mention, after `x0` (number 0): timings leave out `x0`, which the code
/// may still name (as a base, or as a destination that discards the result).
pub struct RegionRegs {
    /// `(register, number)`, or `EMPTY` as the register; a power of two long, at
    /// most half full.
    slots: Vec<(u32, u32)>,
    /// `32 - log2(slots.len())`: the hash is the top bits of the product.
    shift: u32,
    len: usize,
}

impl RegionRegs {
    /// The registers of the region whose timings are `t`.
    pub fn of(t: &[Timing]) -> Self {
        let mentions: usize = t.iter().map(|x| x.uses.len() + x.defs.len()).sum();
        let size = (2 * (mentions + 1)).next_power_of_two().max(8);
        let mut regs = RegionRegs {
            slots: vec![(EMPTY, 0); size],
            shift: 32 - size.trailing_zeros(),
            len: 0,
        };
        regs.insert(Reg::x(0));
        for x in t {
            for &(r, _) in &x.uses {
                regs.insert(r);
            }
            for &r in &x.defs {
                regs.insert(r);
            }
        }
        regs
    }

    /// The slot of `r`, or the empty one where it would go.
    fn slot(&self, r: Reg) -> usize {
        let mask = self.slots.len() - 1;
        let mut k = (r.0.wrapping_mul(0x9E37_79B9) >> self.shift) as usize;
        while self.slots[k].0 != r.0 && self.slots[k].0 != EMPTY {
            k = (k + 1) & mask;
        }
        k
    }

    fn insert(&mut self, r: Reg) {
        let k = self.slot(r);
        if self.slots[k].0 == EMPTY {
            self.slots[k] = (r.0, self.len as u32);
            self.len += 1;
        }
    }

    /// How many registers the region mentions.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region mentions no register.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of `r`, if the region mentions it.
    pub fn get(&self, r: Reg) -> Option<usize> {
        let (key, number) = self.slots[self.slot(r)];
        (key == r.0).then_some(number as usize)
    }

    /// The number of `r`, which the region mentions.
    pub fn index(&self, r: Reg) -> usize {
        self.get(r).expect("a register the region mentions")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testinsts::{addi, addw, lw};
    use crate::u74::timing;

    #[test]
    fn every_register_mentioned_gets_its_own_number() {
        let code = [lw(15, 10, 0), addw(13, 15, 13), addi(10, 10, 4)];
        let t: Vec<Timing> = code.iter().map(timing).collect();
        let regs = RegionRegs::of(&t);
        assert_eq!(regs.len(), 4);
        // `x0`, then in order of first mention: the load's base, its result,
        // the add's other operand.
        let numbers: Vec<usize> = [0, 10, 15, 13]
            .iter()
            .map(|&k| regs.index(Reg::x(k)))
            .collect();
        assert_eq!(numbers, [0, 1, 2, 3]);
        assert_eq!(regs.get(Reg::x(11)), None);
    }

    #[test]
    fn a_full_window_of_registers_is_numbered_apart() {
        // Registers that collide in the table (equal low or high bits) each
        // keep their own number.
        let code: Vec<_> = (0..64u32)
            .map(|k| crate::mir::MInst::Mv {
                rd: Reg::virt(1024 * k),
                rs: Reg::virt(1024 * k + 64),
            })
            .collect();
        let t: Vec<Timing> = code.iter().map(timing).collect();
        let regs = RegionRegs::of(&t);
        assert_eq!(regs.len(), 129);
        for k in 0..64u32 {
            assert_eq!(regs.index(Reg::virt(1024 * k)), 2 * k as usize + 2);
            assert_eq!(regs.index(Reg::virt(1024 * k + 64)), 2 * k as usize + 1);
        }
        assert_eq!(regs.get(Reg::virt(5)), None);
    }
}
