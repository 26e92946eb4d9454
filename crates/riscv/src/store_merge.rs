//! Store merging: two 4-byte stores of zero that fill one aligned doubleword become
//! one 8-byte store of zero, as LLVM's `MergeConsecutiveStores` (in its DAG
//! combiner) and GCC's `store-merging` pass combine narrow stores of constants.
//! Zeroing an array element by element (a local initialiser `= {}`, a row of a
//! global matrix cleared in a loop) then takes half the stores.
//!
//! Only runs of consecutive `sw zero` (nothing else between them) are merged: they
//! all write zero, so they may run in any order, and no load or call sits between
//! two of them. The doubleword must be 8-byte aligned (an unaligned `sd` traps and
//! is emulated by the kernel, hundreds of times slower): its base is a local
//! array's frame slot aligned to at least 8 bytes, or a register whose remainder
//! modulo 8 [`KnownAlign`] knows (a global array or one of its rows, a local
//! array's address in a register), and base plus offset is a multiple of 8. The
//! two stores must lie in one alias region; the merged store keeps the lower
//! half's address (region and symbolic start).

use crate::known_align::KnownAlign;
use crate::mir::*;
use rustc_hash::FxHashMap;

/// Merges the stores of `mf` (see the module comment); how many pairs it merged.
pub fn run(mf: &mut MFunction) -> usize {
    let known = KnownAlign::of(mf);
    let mut merged = 0;
    for k in 0..mf.layout.len() {
        let b = mf.layout[k];
        let insts = std::mem::take(&mut mf.blocks[b].insts);
        let mut out = Vec::with_capacity(insts.len());
        let mut i = 0;
        while i < insts.len() {
            let mut j = i;
            while j < insts.len() && zero_word_store(mf, &known, &insts[j]).is_some() {
                j += 1;
            }
            if j - i >= 2 {
                merged += merge_run(mf, &known, &insts[i..j], &mut out);
                i = j;
            } else {
                out.push(insts[i].clone());
                i += 1;
            }
        }
        mf.blocks[b].insts = out;
    }
    merged
}

/// The base and offset of `inst` when it is `sw zero` to an address whose
/// remainder modulo 8 is known, with the offset of the aligned doubleword it lies
/// in: through a local slot aligned to 8 bytes or more, or a register whose low
/// three bits [`KnownAlign`] knows.
fn zero_word_store(mf: &MFunction, known: &KnownAlign, inst: &MInst) -> Option<(Base, i64, i64)> {
    let MInst::Store {
        op: MemOp::W,
        src: ZERO,
        addr,
    } = inst
    else {
        return None;
    };
    let base_mod8 = match addr.base {
        Base::Slot(s) => {
            matches!(mf.slots[s], SlotKind::Local { align, .. } if align >= 8).then_some(0)
        }
        Base::Reg(r) => {
            let low = known.low(r);
            (low.bits >= 3).then_some((low.val & 7) as i64)
        }
    }?;
    let low = match (base_mod8 + addr.off).rem_euclid(8) {
        0 => addr.off,
        4 => addr.off - 4,
        _ => return None,
    };
    Some((addr.base, addr.off, low))
}

/// Appends the run `stores` (all `sw zero` to addresses known modulo 8) to `out`, each
/// pair filling an aligned doubleword as one `sd zero` where the first of the two
/// stood; the number of pairs merged.
fn merge_run(mf: &MFunction, known: &KnownAlign, stores: &[MInst], out: &mut Vec<MInst>) -> usize {
    let mut at: FxHashMap<(Base, i64), Option<usize>> = FxHashMap::default();
    for (n, inst) in stores.iter().enumerate() {
        let (base, off, _) = zero_word_store(mf, known, inst).expect("a run of zero stores");
        // A location stored twice is left alone (`None`).
        at.entry((base, off))
            .and_modify(|e| *e = None)
            .or_insert(Some(n));
    }
    let region = |n: usize| match &stores[n] {
        MInst::Store { addr, .. } => addr.region,
        _ => unreachable!("a run of stores"),
    };
    // The partner of each store merged into an earlier one.
    let mut absorbed = vec![false; stores.len()];
    let mut merged = 0;
    for (n, inst) in stores.iter().enumerate() {
        if absorbed[n] {
            continue;
        }
        let (s, _, low) = zero_word_store(mf, known, inst).expect("a run of zero stores");
        let (lo, hi) = (at.get(&(s, low)), at.get(&(s, low + 4)));
        let pair = match (lo, hi) {
            (Some(&Some(a)), Some(&Some(b))) if region(a) == region(b) => Some((a, b)),
            _ => None,
        };
        let Some((a, b)) = pair else {
            out.push(inst.clone());
            continue;
        };
        let MInst::Store { addr, .. } = &stores[a] else {
            unreachable!("a run of stores")
        };
        out.push(MInst::Store {
            op: MemOp::D,
            src: ZERO,
            addr: *addr,
        });
        absorbed[if n == a { b } else { a }] = true;
        merged += 1;
    }
    merged
}
