//! Redundant load elimination within a block, after register allocation: a load from
//! an address whose value a register still holds (loaded there, or stored to a
//! frame slot from it, earlier in the block, with no other store, call or change
//! of that register or of the address's base in between) becomes a register move, or disappears when it loads into that same
//! register.
//!
//! The register allocator rematerialises a spilled value defined by a load from an
//! incoming argument slot by reloading it at each use, so a parameter passed on the
//! stack and used twice in a row is loaded twice (`lw t5, 232(sp)`, `srliw`, `lw t5,
//! 232(sp)`, `addw`); with a thousand parameters, as in the contest's
//! `integer-divide-optimization`, that is a thousand loads per call. This is local
//! value numbering of loads (Muchnick, "Advanced Compiler Design and
//! Implementation", 12.4), kept to what survives allocation.
//!
//! A store through a register invalidates everything (it may write a frame slot:
//! local arrays live there), as does every call. A store to a frame slot (a
//! spill) invalidates that slot and what registers point to, and the slot then
//! holds the stored register: the allocator spills a value where it is defined
//! and reloads it at each use, and a use right after the definition reloads what
//! was just stored (`sd t5, 0(slot0)`, `ld t5, 0(slot0)`). Only 64-bit and single
//! float slots forward: a 32-bit load sign-extends, which need not give back the
//! register a `sw` stored.

//!
//! The same goes for constants: the allocator recomputes a spilled constant or
//! global address (`li`, `lla`) into a scratch register before each use, so a
//! global read and written back (`lla t5, g`, `lw`, `lla t5, g`, `sw`) computes its
//! address twice. A `li` or `lla` into a register that still holds that very
//! constant, defined earlier in the block, goes away; one into another register
//! becomes a move from the register holding it, when the constant takes two
//! instructions to build (`lla` is `auipc` and `addi`; `li` of a value beyond 12
//! bits is `lui` and `addiw`): a pointer and its loop's end both start at a
//! global (`lla t0, g`, `lla s1, g`, `add s2, t0, t1`).

use crate::mir::{fits_imm12, Addr, Base, MFunction, MInst, MemOp, Reg, T5, T6};

/// Removes or turns into moves the redundant loads of every block of `mf`; returns
/// how many.
pub fn run(mf: &mut MFunction) -> usize {
    let mut changed = 0;
    for block in mf.blocks.values_mut() {
        changed += remove_repeated_constants(&mut block.insts);
        // (address, width) -> register holding what a load from it gave.
        let mut held: Vec<((Addr, MemOp), Reg)> = Vec::new();
        for inst in &mut block.insts {
            if let MInst::Load { op, rd, addr } = *inst {
                let addr = place(addr);
                if let Some(&(_, r)) = held.iter().find(|(k, _)| *k == (addr, op)) {
                    *inst = MInst::Mv { rd, rs: r };
                    changed += 1;
                    if r == rd {
                        continue; // removed below; `rd` keeps its value
                    }
                }
            }
            // Frame layout builds a slot offset too large for an immediate in
            // `t5` or `t6` when the access is a store or a float load (an
            // integer load builds it in its destination): their values do not
            // survive such an access.
            if takes_scratch(inst) {
                held.retain(|(_, r)| *r != T5 && *r != T6);
            }
            match *inst {
                // A store to a frame slot changes only that slot's bytes, and what
                // a register may point to (a local array's slot); afterwards the
                // slot holds the stored register, when a load of that width gives
                // the register's value back exactly.
                MInst::Store { op, src, addr } if matches!(addr.base, Base::Slot(_)) => {
                    held.retain(|((a, _), _)| {
                        matches!(a.base, Base::Slot(_)) && a.base != addr.base
                    });
                    if matches!(op, MemOp::D | MemOp::FS | MemOp::FD) {
                        held.push(((place(addr), op), src));
                    }
                }
                MInst::Store { .. } | MInst::Call { .. } => held.clear(),
                _ => {
                    let mut defs: Vec<Reg> = Vec::new();
                    inst.for_each_def(|r| defs.push(r));
                    held.retain(|((addr, _), r)| {
                        !defs.contains(r) && !matches!(addr.base, Base::Reg(b) if defs.contains(&b))
                    });
                }
            }
            if let MInst::Load { op, rd, addr } = *inst {
                let base_is_rd = matches!(addr.base, Base::Reg(b) if b == rd);
                if !base_is_rd {
                    held.push(((place(addr), op), rd));
                }
            }
        }
        block
            .insts
            .retain(|i| !matches!(i, MInst::Mv { rd, rs } if rd == rs));
    }
    changed
}

/// Turns each `li` or `lla` whose register holds that constant already (defined by
/// the same instruction earlier in `insts`, and not written since) into a move of
/// the register to itself, which [`run`] removes, and one whose constant another
/// register holds into a move from it when that saves an instruction; returns
/// how many.
fn remove_repeated_constants(insts: &mut [MInst]) -> usize {
    let mut removed = 0;
    // Registers and the constant instruction that defined each (one entry per
    // register).
    let mut known: Vec<(Reg, MInst)> = Vec::new();
    for inst in insts {
        let constant = match *inst {
            MInst::Li { rd, .. } | MInst::La { rd, .. } => Some((rd, inst.clone())),
            _ => None,
        };
        if let Some((rd, built)) = &constant {
            if known.iter().any(|(r, i)| r == rd && i == built) {
                *inst = MInst::Mv { rd: *rd, rs: *rd };
                removed += 1;
                continue;
            }
            if takes_two(built) {
                if let Some(&(rs, _)) = known.iter().find(|(_, i)| same_constant(i, built)) {
                    *inst = MInst::Mv { rd: *rd, rs };
                    removed += 1;
                }
            }
        }
        if !known.is_empty() {
            if inst.is_call() {
                // A call may clobber any caller-saved register.
                known.clear();
            } else if takes_scratch(inst) {
                // Frame layout may build a large slot offset in `t5` or `t6`.
                known.retain(|(r, _)| *r != T5 && *r != T6);
            }
            inst.for_each_def(|d| known.retain(|(r, _)| *r != d));
        }
        if let Some((rd, built)) = constant {
            known.push((rd, built));
        }
    }
    removed
}

/// Whether `a` and `b` build the same constant (into any registers).
fn same_constant(a: &MInst, b: &MInst) -> bool {
    match (a, b) {
        (MInst::Li { imm: x, .. }, MInst::Li { imm: y, .. }) => x == y,
        (
            MInst::La {
                global: g, off: o, ..
            },
            MInst::La {
                global: h, off: p, ..
            },
        ) => g == h && o == p,
        _ => false,
    }
}

/// Whether building the constant of `inst` takes more than one instruction.
fn takes_two(inst: &MInst) -> bool {
    match *inst {
        MInst::La { .. } => true,
        MInst::Li { imm, .. } => {
            // `addi` builds a 12-bit value, `lui` alone a 32-bit one whose low 12
            // bits are zero.
            let lui_alone = i32::try_from(imm).is_ok() && imm & 0xfff == 0;
            !(fits_imm12(imm) || lui_alone)
        }
        _ => false,
    }
}

/// Whether frame layout may build the slot offset of `inst` in `t5` or `t6`: a
/// store or float load from a frame slot (an integer load builds it in its
/// destination).
fn takes_scratch(inst: &MInst) -> bool {
    match *inst {
        MInst::Store { addr, .. } => matches!(addr.base, Base::Slot(_)),
        MInst::Load { op, addr, .. } => {
            matches!(addr.base, Base::Slot(_)) && matches!(op, MemOp::FS | MemOp::FD)
        }
        _ => false,
    }
}

/// The address as the place it names (register or slot, offset, region), without
/// the symbolic start by which two spellings of one place may differ.
fn place(addr: Addr) -> Addr {
    Addr { sym: None, ..addr }
}

// Tests: crates/riscv/filetests/redundant-loads-*.mir.
