//! Dependence breaking between an address increment and the memory accesses
//! through it, for the list scheduler ([`crate::schedule`]).
//!
//! After register allocation a loop that steps a pointer often reads
//!
//! ```text
//! addi a7, a7, -4
//! lw   a6, 0(a7)
//! ```
//!
//! where the load waits for the increment. The two may trade places if the load's
//! offset takes the increment: `lw a6, -4(a7)` before `addi a7, a7, -4` reads the
//! same word. The other way round, an access before the increment of its base may
//! go below it with the increment taken off its offset (`sw a6, 0(a7); addi a7,
//! a7, 16` as `addi a7, a7, 16; sw a6, -16(a7)`), so a loop's pointer bumps need
//! not wait for its last accesses. The scheduler is told that such a pair has no
//! dependence, orders the region as it sees fit, and then adjusts the offset of
//! every access it placed on the other side of its increment.
//!
//! This is GCC's scheduler's breaking of dependences by modifying instructions
//! (`find_modifiable_mems` and `apply_replacement` for "mem/inc pairs", Bernd
//! Schmidt, GCC 4.7), restricted to an `addi r, r, c` and the loads and stores whose
//! base is that `r` and nothing else of theirs reads or writes it.
//!
//! Memory dependences must then compare addresses by value, not by register name:
//! [`Increments::norm`] gives every access its offset from the value its base
//! register had at the last definition that was not an increment (or at the
//! region's start), so two accesses through one pointer bumped between them are
//! compared as they really lie.

use crate::mir::{fits_imm12, AluImmOp, Base, MInst, Reg, SP};
use crate::region_regs::RegionRegs;
use crate::u74::MemAccess;

/// An access that may move above the increment of its base register.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Breakable {
    /// The increment `addi base, base, delta` (index in the region).
    pub inc: usize,
    pub base: Reg,
    pub delta: i64,
    /// The definition of `r` before the increment, within the region, which the
    /// access must follow if it moves above the increment.
    pub before_inc: Option<usize>,
}

/// The increments and accesses of a region (a straight run of instructions).
pub struct Increments {
    /// Per instruction: the increment it may move above, if any.
    pub breakable: Vec<Option<Breakable>>,
    /// Per instruction: the later increment of its base it may move below, if
    /// any (the same breaking the other way: `sw a6, 0(a7); addi a7, a7, 16`
    /// may become `addi a7, a7, 16; sw a6, -16(a7)`); `before_inc` is unused.
    pub sinkable: Vec<Option<Breakable>>,
    /// Per memory access: the access with its offset from the base's root value,
    /// and that root (the index of the base's last non-increment definition, or
    /// `None` for its value at the region's start).
    pub norm: Vec<Option<(MemAccess, Option<usize>)>>,
}

/// The base register, offset and other register (loaded or stored) of an access.
fn access_parts(i: &MInst) -> Option<(Reg, i64, Reg)> {
    match i {
        MInst::Load { rd, addr, .. } => match addr.base {
            Base::Reg(r) => Some((r, addr.off, *rd)),
            Base::Slot(_) => None,
        },
        MInst::Store { src, addr, .. } => match addr.base {
            Base::Reg(r) => Some((r, addr.off, *src)),
            Base::Slot(_) => None,
        },
        _ => None,
    }
}

/// `addi r, r, c` (64-bit) as `(r, c)`.
fn increment(i: &MInst) -> Option<(Reg, i64)> {
    match *i {
        MInst::AluImm {
            op: AluImmOp::Addi,
            rd,
            rs1,
            imm,
        } if rd == rs1 && rd != SP => Some((rd, i64::from(imm))),
        _ => None,
    }
}

impl Increments {
    /// Analyses `code`, whose memory accesses are `mem` (from their timings) and
    /// whose registers are `regs`.
    pub fn new(code: &[MInst], mem: &[Option<MemAccess>], regs: &RegionRegs) -> Self {
        let n = code.len();
        let mut breakable = vec![None; n];
        let mut norm = vec![None; n];
        // Per register (by its number in `regs`): its last definition in the
        // region, its root and the sum of the increments since the root; per
        // increment (by index): the definition of its register before it.
        let mut last_def: Vec<Option<usize>> = vec![None; regs.len()];
        let mut root: Vec<(Option<usize>, i64)> = vec![(None, 0); regs.len()];
        let mut before: Vec<Option<usize>> = vec![None; n];
        for (k, inst) in code.iter().enumerate() {
            if let (Some(m), Some((base, off, other))) = (mem[k], access_parts(inst)) {
                let b = regs.index(base);
                let (r0, acc) = root[b];
                norm[k] = Some((
                    MemAccess {
                        off: m.off + acc,
                        ..m
                    },
                    r0,
                ));
                if let Some(i) = last_def[b] {
                    if let Some((_, delta)) = increment(&code[i]) {
                        if other != base && fits_imm12(off + delta) {
                            breakable[k] = Some(Breakable {
                                inc: i,
                                base,
                                delta,
                                before_inc: before[i],
                            });
                        }
                    }
                }
            } else if let Some(m) = mem[k] {
                norm[k] = Some((m, None));
            }
            let step = increment(inst);
            inst.for_each_def(|d| {
                let r = regs.index(d);
                let prev = last_def[r].replace(k);
                match step {
                    Some((inc, c)) if inc == d => {
                        before[k] = prev;
                        root[r].1 += c;
                    }
                    _ => root[r] = (Some(k), 0),
                }
            });
        }
        let mut sinkable = vec![None; n];
        for (i, inst) in code.iter().enumerate() {
            let Some((r, delta)) = increment(inst) else {
                continue;
            };
            for k in (0..i).rev() {
                if let Some((base, off, other)) = access_parts(&code[k]) {
                    if base == r && other != r && fits_imm12(off - delta) {
                        sinkable[k] = Some(Breakable {
                            inc: i,
                            base: r,
                            delta,
                            before_inc: None,
                        });
                    }
                }
                let mut defines = false;
                code[k].for_each_def(|d| defines |= d == r);
                if defines {
                    break;
                }
            }
        }
        Increments {
            breakable,
            sinkable,
            norm,
        }
    }

    /// Whether accesses `a` and `b` of the region touch disjoint bytes, comparing
    /// addresses through one base register by their offsets from its root value.
    /// (Asked of every pair of accesses the dependence graph considers: inlined.)
    #[inline]
    pub fn disjoint(&self, a: usize, b: usize) -> bool {
        match (self.norm[a], self.norm[b]) {
            (Some((x, rx)), Some((y, ry))) => {
                let any = crate::mir::Addr::ANY_REGION;
                if x.region != any && y.region != any && x.region != y.region {
                    return true;
                }
                if x.sym_disjoint(&y) {
                    return true;
                }
                if x.base.is_some() && rx != ry {
                    return false;
                }
                x.disjoint(&y)
            }
            _ => false,
        }
    }

    /// `code` (the region in its original order) in the order `order`, with the
    /// offset of every access placed above its increment adjusted.
    pub fn reorder(&self, code: &[MInst], order: &[usize]) -> Vec<MInst> {
        let mut pos = vec![0; order.len()];
        for (p, &i) in order.iter().enumerate() {
            pos[i] = p;
        }
        order
            .iter()
            .map(|&j| {
                let mut inst = code[j].clone();
                let mut shift = 0;
                if let Some(b) = self.breakable[j] {
                    if pos[j] < pos[b.inc] {
                        shift += b.delta;
                    }
                }
                if let Some(b) = self.sinkable[j] {
                    if pos[j] > pos[b.inc] {
                        shift -= b.delta;
                    }
                }
                if let MInst::Load { addr, .. } | MInst::Store { addr, .. } = &mut inst {
                    addr.off += shift;
                }
                inst
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testinsts::{addi, addw, lw, sw};
    use crate::u74::timing;

    fn analyse(code: &[MInst]) -> Increments {
        let t: Vec<_> = code.iter().map(timing).collect();
        let mem: Vec<_> = t.iter().map(|x| x.mem).collect();
        Increments::new(code, &mem, &RegionRegs::of(t.iter()))
    }

    #[test]
    fn an_access_through_an_incremented_base_may_move_above_it() {
        let code = [addi(17, 17, -4), lw(16, 17, 0), addw(5, 16, 16)];
        let inc = analyse(&code);
        assert_eq!(
            inc.breakable[1],
            Some(Breakable {
                inc: 0,
                base: Reg::x(17),
                delta: -4,
                before_inc: None
            })
        );
        assert_eq!(inc.breakable[2], None);
        let swapped = inc.reorder(&code, &[1, 0, 2]);
        assert_eq!(swapped, [lw(16, 17, -4), addi(17, 17, -4), addw(5, 16, 16)]);
        // In the original order the offset stays.
        assert_eq!(inc.reorder(&code, &[0, 1, 2]), code);
    }

    #[test]
    fn what_else_reads_or_writes_the_base_keeps_the_dependence() {
        // The load overwrites its base; the store writes the base's value; the base
        // was last set by something other than an increment; the offset would not
        // fit in 12 bits.
        for code in [
            [addi(17, 17, 4), lw(17, 17, 0)],
            [addi(17, 17, 4), sw(17, 17, 0)],
            [addw(17, 17, 5), lw(16, 17, 0)],
            [addi(17, 17, 100), lw(16, 17, 2000)],
        ] {
            assert_eq!(analyse(&code).breakable[1], None, "{code:?}");
        }
        // A second increment: the access may move above the second one only, and
        // then stays after the first.
        let code = [addi(17, 17, 4), addi(17, 17, 4), lw(16, 17, 0)];
        assert_eq!(
            analyse(&code).breakable[2].map(|b| (b.inc, b.before_inc)),
            Some((1, Some(0)))
        );
    }

    #[test]
    fn an_access_before_an_increment_of_its_base_may_move_below_it() {
        let code = [
            lw(16, 17, 8),
            sw(5, 17, 12),
            addi(17, 17, 16),
            addw(5, 16, 16),
        ];
        let inc = analyse(&code);
        let sink = |k: usize| inc.sinkable[k].map(|b| (b.inc, b.base, b.delta));
        assert_eq!(sink(0), Some((2, Reg::x(17), 16)));
        assert_eq!(sink(1), Some((2, Reg::x(17), 16)));
        assert_eq!(sink(3), None);
        let moved = inc.reorder(&code, &[2, 0, 1, 3]);
        assert_eq!(
            moved,
            [
                addi(17, 17, 16),
                lw(16, 17, -8),
                sw(5, 17, -4),
                addw(5, 16, 16)
            ]
        );
        assert_eq!(inc.reorder(&code, &[0, 1, 2, 3]), code);
    }

    #[test]
    fn what_else_reads_or_writes_the_base_keeps_it_above_the_increment() {
        // The store writes the base's value; the offset would not fit in 12 bits;
        // the base is redefined between the access and the increment (the access
        // reads the older value).
        for code in [
            vec![sw(17, 17, 0), addi(17, 17, 4)],
            vec![lw(16, 17, -2040), addi(17, 17, 100)],
            vec![lw(16, 17, 0), addw(17, 17, 5), addi(17, 17, 4)],
        ] {
            assert_eq!(analyse(&code).sinkable[0], None, "{code:?}");
        }
    }

    #[test]
    fn the_zero_register_is_a_register_like_any_other() {
        // Timings leave `x0` out; an access through it, or a write of it, is
        // still analysed (and no increment of it is mistaken for another's).
        let code = [addi(0, 0, 4), lw(16, 0, 8), sw(5, 17, 4), lw(15, 0, 12)];
        let inc = analyse(&code);
        assert_eq!(
            inc.breakable[1].map(|b| (b.inc, b.base)),
            Some((0, Reg::x(0)))
        );
        assert!(inc.disjoint(1, 3));
    }

    #[test]
    fn accesses_are_compared_by_address_not_by_register() {
        // sw 4(a7); a7 += 4; lw 0(a7): the same word. By register name the offsets
        // differ, by value they do not.
        let code = [sw(5, 17, 4), addi(17, 17, 4), lw(16, 17, 0), lw(15, 17, 4)];
        let inc = analyse(&code);
        assert!(!inc.disjoint(0, 2));
        assert!(inc.disjoint(0, 3));
        // After a redefinition that is not an increment, nothing is known.
        let code = [sw(5, 17, 0), addw(17, 17, 6), lw(16, 17, 8)];
        assert!(!analyse(&code).disjoint(0, 2));
    }
}
