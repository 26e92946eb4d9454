//! Section anchors: the address of an element of one global computed from the
//! address of the same element of another global of the same data section (GCC's
//! `-fsection-anchors`, which addresses the objects of a section from one anchor
//! symbol; LLVM's `GlobalMerge` gets the same by merging globals into one).
//!
//! Parallel arrays indexed alike (`key[p]`, `next[p]`, `val[p]`) each get an
//! address `add t, base, x` after instruction selection, one `lla` base per
//! array. Within one object file a section's globals lie at distances known
//! when the functions are compiled ([`crate::globals::global_places`]), so
//! `lla g2 + x` is `lla g1 + x` plus the distance from `g1` to `g2`, and that
//! constant folds into the offsets of the accesses: one `add` and one base
//! register serve every array of the section.
//!
//! Algorithm: local value numbering within each block, of
//! `add t, b, x` where `b` holds `lla g+c` (defined once), keyed by `g`'s section
//! and the register `x` (until `x` is written again). When the key is known as
//! `t0` at position `p0` and `t` (defined once) is read only as the base of memory
//! accesses whose offsets, moved by `p - p0`, still fit 12 bits, those accesses
//! read `t0` instead and the `add` goes; an `lla` left unread goes too.
//!
//! It runs after `speculate`, which proves a load inside its object from the
//! `lla` of its own address.

use crate::globals::DataSection;
use crate::mir::{AluOp, Base, MFunction, MInst, Reg};
use rustc_hash::FxHashMap;

const SECTIONS: [DataSection; 3] = [DataSection::Data, DataSection::Bss, DataSection::Rodata];

/// Rewrites the addresses of `mf` as above; returns how many `add`s went.
pub fn run(mf: &mut MFunction) -> usize {
    if mf.global_places.len() < 2 {
        return 0;
    }
    let (defs, _) = mf.vreg_defs();
    let once = |r: Reg| r.is_virtual() && defs[r.vindex()] == 1;
    // Registers holding `lla g+c`, defined once: g's section and c's position in
    // it. Per virtual register: its reads as a memory base and in all, and the
    // offsets of the accesses it is the base of.
    let mut anchored: FxHashMap<Reg, (DataSection, i64)> = FxHashMap::default();
    let mut reads = vec![(0u32, 0u32); mf.num_vregs()];
    let mut offsets: FxHashMap<Reg, Vec<i64>> = FxHashMap::default();
    for &b in &mf.layout {
        for i in &mf.blocks[b].insts {
            if let MInst::La { rd, global, off } = *i {
                if let Some(place) = mf.global_places.get(&global).filter(|_| once(rd)) {
                    anchored.insert(rd, (place.section, place.offset as i64 + off));
                }
            }
            i.for_each_use(|u| {
                if u.is_virtual() {
                    reads[u.vindex()].1 += 1;
                }
            });
            if let (Some(r), Some(off)) = (base_reg(i), access_offset(i)) {
                if r.is_virtual() {
                    reads[r.vindex()].0 += 1;
                    offsets.entry(r).or_default().push(off);
                }
            }
        }
    }
    if anchored.len() < 2 {
        return 0;
    }
    let only_a_base = |r: Reg| {
        let (base, all) = reads[r.vindex()];
        base == all
    };
    // `t` -> (`t0`, distance): `t` is `t0 + distance`.
    let mut moved: FxHashMap<Reg, (Reg, i64)> = FxHashMap::default();
    let mut removed = 0;
    // Per block: (section, index register) -> (address register, position).
    let mut known: FxHashMap<(DataSection, Reg), (Reg, i64)> = FxHashMap::default();
    for bi in 0..mf.layout.len() {
        let b = mf.layout[bi];
        known.clear();
        let insts = std::mem::take(&mut mf.blocks[b].insts);
        let mut kept = Vec::with_capacity(insts.len());
        for i in insts {
            if let MInst::Alu {
                op: AluOp::Add,
                rd,
                rs1,
                rs2,
            } = i
            {
                let operand = [(rs1, rs2), (rs2, rs1)]
                    .into_iter()
                    .find_map(|(b, x)| anchored.get(&b).map(|&(s, p)| (s, p, x)));
                if let Some((section, pos, x)) = operand.filter(|_| once(rd)) {
                    let earlier = known.get(&(section, x)).map(|&(t0, p0)| (t0, pos - p0));
                    let fits = |(_, d): &(Reg, i64)| {
                        only_a_base(rd)
                            && offsets
                                .get(&rd)
                                .is_none_or(|o| o.iter().all(|&off| fits_imm12(off + d)))
                    };
                    match earlier.filter(fits) {
                        Some(to) => {
                            moved.insert(rd, to);
                            removed += 1;
                            continue;
                        }
                        None if earlier.is_none() => {
                            known.insert((section, x), (rd, pos));
                        }
                        None => {}
                    }
                }
            }
            // A write of an index register ends what is known of it.
            i.for_each_def(|d| {
                for section in SECTIONS {
                    known.remove(&(section, d));
                }
            });
            kept.push(i);
        }
        mf.blocks[b].insts = kept;
    }
    if removed == 0 {
        return 0;
    }
    for &b in &mf.layout {
        for i in &mut mf.blocks[b].insts {
            if let MInst::Load { addr, .. } | MInst::Store { addr, .. } = i {
                if let Base::Reg(r) = addr.base {
                    if let Some(&(t0, d)) = moved.get(&r) {
                        addr.base = Base::Reg(t0);
                        addr.off += d;
                    }
                }
            }
        }
    }
    remove_unread_anchors(mf, &anchored);
    removed
}

/// The register `i` reads as the base of its memory access.
fn base_reg(i: &MInst) -> Option<Reg> {
    match i {
        MInst::Load { addr, .. } | MInst::Store { addr, .. } => match addr.base {
            Base::Reg(r) => Some(r),
            Base::Slot(_) => None,
        },
        _ => None,
    }
}

fn access_offset(i: &MInst) -> Option<i64> {
    match i {
        MInst::Load { addr, .. } | MInst::Store { addr, .. } => Some(addr.off),
        _ => None,
    }
}

fn fits_imm12(v: i64) -> bool {
    (-2048..=2047).contains(&v)
}

/// Deletes the `lla`s of `anchored` that nothing reads any more.
fn remove_unread_anchors(mf: &mut MFunction, anchored: &FxHashMap<Reg, (DataSection, i64)>) {
    let mut read: rustc_hash::FxHashSet<Reg> = Default::default();
    for &b in &mf.layout {
        for i in &mf.blocks[b].insts {
            i.for_each_use(|u| {
                read.insert(u);
            });
        }
    }
    for &b in &mf.layout {
        mf.blocks[b].insts.retain(|i| match *i {
            MInst::La { rd, .. } => read.contains(&rd) || !anchored.contains_key(&rd),
            _ => true,
        });
    }
}
