//! The blocks machine LICM ([`crate::licm`]) looks at for one loop, indexed so
//! that a loop whose hoisting budget is spent visits only the blocks where its
//! scan can still change something.
//!
//! A pile holds the blocks of a loop (and of the loops inside it) that hold a
//! hoisting candidate, in layout order. Beside that order it keeps two
//! over-approximations: the blocks holding a candidate that reads registers,
//! per register class the blocks holding a candidate that reads none (`li`,
//! `lla`, frame addresses), and per merge key of such a candidate the blocks
//! holding one. Entries may be stale (the candidate
//! left); users check them. A loop hands its pile to the enclosing loop, and
//! piles are merged smaller into larger (the "small to large" merging of
//! disjoint sets), so a deep nest does not copy its blocks once per level.

use crate::mir::{MBlock, MInst};
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;

/// A block with its position in the layout order (the key sorts first).
pub type Place = (u64, MBlock);

/// The candidate blocks of a loop, see the module documentation.
#[derive(Default, Debug)]
pub struct Pile {
    /// Blocks holding a candidate, in layout order.
    pub order: BTreeSet<Place>,
    /// Blocks that held a candidate reading registers when last summarised.
    pub complex: BTreeSet<Place>,
    /// Per class of its result: blocks that held a candidate reading none.
    pub simple: [BTreeSet<Place>; 2],
    /// Per merge key of a candidate reading no register: blocks that held one.
    pub by_key: FxHashMap<MInst, Vec<Place>>,
}

/// How [`Pile::add`] sees an instruction: not a candidate, a candidate reading
/// registers, or a candidate reading none, with its merge key and the class
/// of its result (0 integer, 1 float).
pub enum Kind {
    Other,
    Complex,
    Simple(MInst, usize),
}

impl Pile {
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Adds block `place` holding `insts` (again, if it is in already: its
    /// summary is extended).
    pub fn add(&mut self, place: Place, insts: &[MInst], kind: impl Fn(&MInst) -> Kind) {
        self.order.insert(place);
        for i in insts {
            match kind(i) {
                Kind::Other => {}
                Kind::Complex => {
                    self.complex.insert(place);
                }
                Kind::Simple(key, class) => {
                    self.simple[class].insert(place);
                    let list = self.by_key.entry(key).or_default();
                    if list.last() != Some(&place) {
                        list.push(place);
                    }
                }
            }
        }
    }

    /// Moves the blocks of `other` into `self`, walking the smaller of the two.
    pub fn absorb(&mut self, mut other: Pile) {
        if other.order.len() + other.by_key.len() > self.order.len() + self.by_key.len() {
            std::mem::swap(self, &mut other);
        }
        self.order.extend(other.order);
        self.complex.extend(other.complex);
        let [int, float] = other.simple;
        self.simple[0].extend(int);
        self.simple[1].extend(float);
        for (key, mut list) in other.by_key {
            let mine = self.by_key.entry(key).or_default();
            if mine.len() < list.len() {
                std::mem::swap(mine, &mut list);
            }
            mine.extend(list);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::{AluImmOp, Reg, ZERO};

    fn li(imm: i64) -> MInst {
        MInst::Li { rd: ZERO, imm }
    }

    fn kind(i: &MInst) -> Kind {
        match i {
            MInst::Li { .. } => Kind::Simple(i.clone(), 0),
            MInst::AluImm { .. } => Kind::Complex,
            _ => Kind::Other,
        }
    }

    /// Merging keeps every block in order and every summary entry, whichever
    /// pile is the larger.
    #[test]
    fn absorbing_keeps_order_and_summaries() {
        let addi = MInst::AluImm {
            op: AluImmOp::Addi,
            rd: Reg(40),
            rs1: Reg(41),
            imm: 1,
        };
        let mut a = Pile::default();
        a.add((5, MBlock(5)), &[li(1), li(2), li(1)], kind);
        a.add((1, MBlock(9)), std::slice::from_ref(&addi), kind);
        let mut b = Pile::default();
        for k in 0..4u32 {
            b.add((10 + u64::from(k), MBlock(k)), &[li(1)], kind);
        }
        b.add((3, MBlock(7)), &[li(3), addi], kind);
        a.absorb(b);
        let order: Vec<u32> = a.order.iter().map(|p| p.1 .0).collect();
        assert_eq!(order, vec![9, 7, 5, 0, 1, 2, 3]);
        let complex: Vec<u32> = a.complex.iter().map(|p| p.1 .0).collect();
        assert_eq!(complex, vec![9, 7]);
        let simple: Vec<u32> = a.simple[0].iter().map(|p| p.1 .0).collect();
        assert_eq!(simple, vec![7, 5, 0, 1, 2, 3]);
        assert!(a.simple[1].is_empty());
        let mut ones: Vec<u64> = a.by_key[&li(1)].iter().map(|p| p.0).collect();
        ones.sort_unstable();
        assert_eq!(ones, vec![5, 10, 11, 12, 13]);
        assert_eq!(a.by_key[&li(2)], vec![(5, MBlock(5))]);
        assert_eq!(a.by_key[&li(3)], vec![(3, MBlock(7))]);
        assert!(!a.is_empty());
    }
}
