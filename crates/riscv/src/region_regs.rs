//! Dense numbers for the registers a scheduling region mentions, for the
//! per-register state of [`crate::schedule`]'s dependence graph and of
//! [`crate::increments`], kept in arrays indexed by them.
//!
//! A region is short (at most [`crate::schedule::WINDOW`] instructions, seven on
//! average), so its registers go into one small open-addressing table sized
//! for them (Knuth's multiplicative hashing, linear probing): one allocation per
//! region, where a hash map per analysis cost its allocation and its growth on
//! every region.
//!
//! The numbers also serve the timing model: [`crate::u74::Machine`] keeps the
//! readiness of registers below [`NUM_PREGS`] in arrays and hashes the others
//! (virtual registers), so a region's timings renumbered ([`RegionRegs::renumber`])
//! are issued without hashing, and their machine states clone without
//! allocating. The model compares registers only for equality, so the cycles
//! it finds are the same.

use crate::mir::{Reg, NUM_PREGS};
use crate::u74::Timing;

/// A slot no register takes.
const EMPTY: u32 = u32::MAX;

/// The registers a region reads or writes, numbered `0..len()` in order of
/// first mention, after `x0` (number 0): timings leave out `x0`, which the code
/// may still name (as a base, or as a destination that discards the result).
pub struct RegionRegs {
    /// `(register, number)`, or `EMPTY` as the register; a power of two long,
    /// never full.
    slots: Vec<(u32, u32)>,
    /// `32 - log2(slots.len())`: the hash is the top bits of the product.
    shift: u32,
    len: usize,
}

impl RegionRegs {
    /// The registers of the code whose timings are `t`.
    pub fn of<'a>(t: impl Iterator<Item = &'a Timing> + Clone) -> Self {
        let mentions: usize = t.clone().map(|x| x.uses.len() + x.defs.len()).sum();
        // Room for every mention and `x0` with a slot to spare, so that a probe
        // always ends; a register is mentioned two or three times on average,
        // so the table is about a third full.
        let size = (mentions + 2).next_power_of_two().max(8);
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

    /// Whether the numbers, as registers, all lie below [`NUM_PREGS`] with one to
    /// spare (see [`RegionRegs::renumber_copies`]).
    pub fn fit_the_model(&self) -> bool {
        self.len < NUM_PREGS as usize
    }

    /// `x` with each register replaced by its number, as a register.
    pub fn renumber(&self, x: &mut Timing) {
        for (r, _) in &mut x.uses {
            *r = Reg(self.index(*r) as u32);
        }
        for r in &mut x.defs {
            *r = Reg(self.index(*r) as u32);
        }
    }

    /// Copies `(destination, source)` at the end of an iteration of the region,
    /// renumbered as [`RegionRegs::renumber`] does: a copy into a register the
    /// region does not mention is dropped (no instruction of the region reads
    /// it), and a source it does not mention becomes the first number it does
    /// not use (never written: ready at once, as such a source is).
    pub fn renumber_copies(&self, copies: &[(Reg, Reg)]) -> Vec<(Reg, Reg)> {
        let spare = Reg(self.len as u32);
        copies
            .iter()
            .filter_map(|&(dst, src)| {
                let dst = Reg(self.get(dst)? as u32);
                Some((dst, self.get(src).map_or(spare, |k| Reg(k as u32))))
            })
            .collect()
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
        let regs = RegionRegs::of(t.iter());
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
        let regs = RegionRegs::of(t.iter());
        assert_eq!(regs.len(), 129);
        for k in 0..64u32 {
            assert_eq!(regs.index(Reg::virt(1024 * k)), 2 * k as usize + 2);
            assert_eq!(regs.index(Reg::virt(1024 * k + 64)), 2 * k as usize + 1);
        }
        assert_eq!(regs.get(Reg::virt(5)), None);
    }

    #[test]
    fn the_model_finds_renumbered_timings_as_fast_as_the_originals() {
        // Random code over sparse virtual registers (loads, stores, increments,
        // adds, multiplies), with a tail, and copies at the end of an iteration
        // that name registers the code does not mention: from a fresh start
        // and in the steady state, the model counts the same cycles for the
        // timings renumbered.
        use crate::mir::MInst;
        use crate::testinsts::{mulw, sw};
        use crate::u74::{cycles_of, steady_state_cycles_of, timing_with};
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(73);
        let virt = |k: u32| Reg::virt(997 * k);
        let mut renumbered_some = 0;
        for _ in 0..300 {
            let n = rng.random_range(1..24);
            let code: Vec<MInst> = (0..n)
                .map(|_| {
                    let (a, b, c) = (
                        rng.random_range(0..10),
                        rng.random_range(0..10),
                        rng.random_range(0..10),
                    );
                    let mut i = match rng.random_range(0..5) {
                        0 => lw(a, b, 4),
                        1 => sw(a, b, 8),
                        2 => addi(a, a, 4),
                        3 => addw(a, b, c),
                        _ => mulw(a, b, c),
                    };
                    i.map_regs(|r, _| *r = virt(r.0));
                    i
                })
                .collect();
            let t: Vec<Timing> = code.iter().map(|i| timing_with(i, &|_| false)).collect();
            let regs = RegionRegs::of(t.iter());
            if !regs.fit_the_model() {
                continue;
            }
            let mut local = t.clone();
            for x in &mut local {
                regs.renumber(x);
            }
            let copies: Vec<(Reg, Reg)> = (0..rng.random_range(0..8))
                .map(|_| (virt(rng.random_range(0..10)), virt(rng.random_range(0..14))))
                .collect();
            let local_copies = regs.renumber_copies(&copies);
            assert_eq!(cycles_of(&t), cycles_of(&local), "{code:?}");
            assert_eq!(
                steady_state_cycles_of(&t.iter().collect::<Vec<_>>(), &copies),
                steady_state_cycles_of(&local.iter().collect::<Vec<_>>(), &local_copies),
                "{code:?} with {copies:?}"
            );
            renumbered_some += 1;
        }
        assert!(renumbered_some > 200);
    }
}
