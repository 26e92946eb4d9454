//! Rewriting machine code after allocation: virtual registers become their physical
//! registers, and every spilled virtual register is reloaded (or recomputed, when it
//! has a rematerialisation recipe) into a reserved scratch register right before each
//! instruction that reads it, and stored right after each instruction that writes it
//! ("spill everywhere"). Scratch registers (`t5`, `t6`, `ft10`, `ft11`) are never live
//! across instructions. Float reloads are emitted before integer ones, so that a
//! float reload whose slot offset needs an integer temporary (see `frame.rs`) finds
//! one free.
//!
//! The rewrite records where each instruction of its result came from ([`Origin`]),
//! for the allocation checker (`checker.rs`).

use super::linear_scan::Allocation;
use crate::mir::*;
use crate::BackendError;

/// Where an instruction after the rewrite came from.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Origin {
    /// Instruction `k` of the block before allocation, its virtual registers
    /// replaced by physical ones (a spilled one by a scratch register).
    Inst(u32),
    /// Instruction `k` of the block, a copy one side of which is spilled, done as
    /// the load (or recomputation) or the store between the allocated side's
    /// register and the spilled side's slot.
    SpilledCopy(u32),
    /// Spill code: a load from, or store to, a spill slot.
    Spill,
    /// The recomputation of the spilled virtual register by its recipe
    /// ([`MFunction::vreg_remat`]).
    Remat(Reg),
}

/// The origin of every instruction after the rewrite: by block number, one per
/// instruction of the block.
pub type Provenance = Vec<Vec<Origin>>;

/// Which virtual registers of `mf` live in a spill slot under `alloc`: the spilled
/// ones that have no rematerialisation recipe.
pub fn needs_slot(mf: &MFunction, alloc: &Allocation) -> Vec<bool> {
    (0..mf.num_vregs())
        .map(|v| alloc.spilled[v] && mf.vreg_remat[v].is_none())
        .collect()
}

/// Applies `alloc` to `mf`, returning where each resulting instruction came from.
/// Each spilled virtual register without a recipe has a slot in `slot` ([`needs_slot`]).
pub fn rewrite(
    mf: &mut MFunction,
    alloc: &Allocation,
    slot: &[Option<Slot>],
) -> Result<Provenance, BackendError> {
    let phys = |r: Reg| -> Result<Reg, BackendError> {
        if r.is_phys() {
            return Ok(r);
        }
        alloc.assignment[r.vindex()]
            .ok_or_else(|| BackendError::Internal(format!("{r} has no register")))
    };
    let spilled = |r: Reg| r.is_virtual() && alloc.spilled[r.vindex()];
    let mut provenance: Provenance = vec![Vec::new(); mf.blocks.len()];
    let layout = mf.layout.clone();
    for b in layout {
        let insts = std::mem::take(&mut mf.blocks[b].insts);
        let mut out = Vec::with_capacity(insts.len());
        let origins = &mut provenance[b.index()];
        for (k, mut inst) in insts.into_iter().enumerate() {
            let k = k as u32;
            // The defining instruction of a rematerialised value disappears.
            let mut def_remat = false;
            inst.for_each_def(|d| {
                if spilled(d) && mf.vreg_remat[d.vindex()].is_some() {
                    def_remat = true;
                }
            });
            if def_remat {
                continue;
            }
            if let MInst::Mv { rd, rs } = inst {
                if spilled(rs) && !spilled(rd) {
                    reload(mf, slot, rs, phys(rd)?, &mut out)?;
                    origins.push(Origin::SpilledCopy(k));
                    continue;
                }
                if spilled(rd) && !spilled(rs) {
                    let s = slot[rd.vindex()].expect("spilled move target has a slot");
                    out.push(store(mf.spill_op(rd), phys(rs)?, s));
                    origins.push(Origin::SpilledCopy(k));
                    continue;
                }
            }
            // Scratch registers for this instruction.
            let mut int_pool = vec![T5, T6].into_iter();
            let mut float_pool = vec![FT10, FT11].into_iter();
            let mut use_map: Vec<(Reg, Reg)> = Vec::new();
            let mut spilled_uses: Vec<Reg> = Vec::new();
            inst.for_each_use(|u| {
                if spilled(u) && !spilled_uses.contains(&u) {
                    spilled_uses.push(u);
                }
            });
            // Floats first (see the module comment).
            spilled_uses.sort_by_key(|&u| mf.class_of(u) == RegClass::Int);
            for u in spilled_uses {
                let class = mf.class_of(u);
                let scratch = match class {
                    RegClass::Int => int_pool.next(),
                    RegClass::Float => float_pool.next(),
                }
                .ok_or_else(|| BackendError::Internal("out of scratch registers".into()))?;
                reload(mf, slot, u, scratch, &mut out)?;
                origins.push(match mf.vreg_remat[u.vindex()] {
                    Some(_) => Origin::Remat(u),
                    None => Origin::Spill,
                });
                use_map.push((u, scratch));
            }
            let mut def_stores: Vec<(Reg, Slot, MemOp)> = Vec::new();
            let mut err = None;
            inst.map_regs(|r, is_def| {
                if r.is_phys() {
                    return;
                }
                if is_def {
                    if spilled(*r) {
                        let class = mf.class_of(*r);
                        let scratch = if class == RegClass::Int { T5 } else { FT10 };
                        let s = slot[r.vindex()].expect("spilled def has a slot");
                        def_stores.push((scratch, s, mf.spill_op(*r)));
                        *r = scratch;
                    } else {
                        match phys(*r) {
                            Ok(p) => *r = p,
                            Err(e) => err = Some(e),
                        }
                    }
                } else if let Some(&(_, s)) = use_map.iter().find(|(v, _)| v == r) {
                    *r = s;
                } else {
                    match phys(*r) {
                        Ok(p) => *r = p,
                        Err(e) => err = Some(e),
                    }
                }
            });
            if let Some(e) = err {
                return Err(e);
            }
            out.push(inst);
            origins.push(Origin::Inst(k));
            for (scratch, s, op) in def_stores {
                out.push(store(op, scratch, s));
                origins.push(Origin::Spill);
            }
        }
        debug_assert_eq!(out.len(), origins.len());
        mf.blocks[b].insts = out;
    }
    Ok(provenance)
}

/// Stores `src` into spill slot `s` with `op`, the spilled register's width
/// ([`MFunction::spill_op`]).
fn store(op: MemOp, src: Reg, s: Slot) -> MInst {
    MInst::Store {
        op,
        src,
        addr: Addr::new(Base::Slot(s), 0),
    }
}

/// Loads or recomputes spilled `v` into `dst`.
fn reload(
    mf: &MFunction,
    slot: &[Option<Slot>],
    v: Reg,
    dst: Reg,
    out: &mut Vec<MInst>,
) -> Result<(), BackendError> {
    if let Some(recipe) = &mf.vreg_remat[v.vindex()] {
        let mut i = recipe.clone();
        i.map_regs(|r, is_def| {
            if is_def {
                *r = dst;
            }
        });
        out.push(i);
        return Ok(());
    }
    let s = slot[v.vindex()].ok_or_else(|| BackendError::Internal(format!("{v} has no slot")))?;
    out.push(MInst::Load {
        op: mf.spill_op(v),
        rd: dst,
        addr: Addr::new(Base::Slot(s), 0),
    });
    Ok(())
}
