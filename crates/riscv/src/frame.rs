//! Stack frame layout, prologue and epilogue (where `shrink_wrap` places them), and
//! resolution of frame slots to `sp`-relative addresses, once register allocation
//! has fixed the spill slots and the callee-saved registers in use.
//!
//! The frame grows down from the caller's `sp` and stays 16-byte aligned:
//!
//! ```text
//!  caller's sp + 8k   incoming stack argument k
//!  caller's sp        ---------------------------------------------
//!                     local arrays (`alloc`), smallest nearest to sp
//!                     spill slots (8 bytes each)
//!                     saved ra, s0-s11, fs0-fs11 (only those used)
//!  sp                 outgoing stack arguments (the largest call's)
//! ```
//!
//! Small objects sit near `sp` so most offsets fit a 12-bit immediate; larger offsets
//! (frames can be megabytes) are built in a temporary: the destination itself for
//! integer loads and address computations, otherwise a scratch register (`t5`/`t6`)
//! the instruction does not mention, or `t0` in the entry's prologue and the
//! epilogues (where it holds nothing; `t5` in a prologue that shrink-wrapping moved
//! out of the entry).

use crate::abi;
use crate::mir::*;
use crate::shrink_wrap;
use crate::BackendError;

/// Where everything lives in a function's frame.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Bytes subtracted from `sp` in the prologue (a multiple of 16).
    pub size: i64,
    /// Offset from `sp` of each slot.
    pub slot_off: Vec<i64>,
    /// Saved registers and their offsets from `sp`.
    pub saves: Vec<(Reg, i64)>,
}

fn align(x: i64, a: i64) -> i64 {
    (x + a - 1) / a * a
}

/// Computes the frame layout of an allocated function.
pub fn lay_out(mf: &MFunction) -> Frame {
    let mut used = [false; NUM_PREGS as usize];
    for &b in &mf.layout {
        for inst in &mf.blocks[b].insts {
            let mut i = inst.clone();
            i.map_regs(|r, _| {
                if r.is_phys() {
                    used[r.0 as usize] = true;
                }
            });
        }
    }
    let mut saves_regs: Vec<Reg> = Vec::new();
    // `ra` holds the return address until a call overwrites it, or until the
    // allocator gives it a value.
    if mf.has_calls() || used[RA.0 as usize] {
        saves_regs.push(RA);
    }
    saves_regs.extend(
        (0..NUM_PREGS)
            .map(Reg)
            .filter(|&r| used[r.0 as usize] && abi::is_callee_saved(r)),
    );
    let mut off = align(mf.outgoing_size as i64, 8);
    let mut saves = Vec::new();
    for r in saves_regs {
        saves.push((r, off));
        off += 8;
    }
    let mut slot_off = vec![0i64; mf.slots.len()];
    for (i, k) in mf.slots.values().enumerate() {
        if *k == SlotKind::Spill {
            slot_off[i] = off;
            off += 8;
        }
    }
    let mut locals: Vec<(usize, u64, u64)> = mf
        .slots
        .values()
        .enumerate()
        .filter_map(|(i, k)| match *k {
            SlotKind::Local { size, align } => Some((i, size, align)),
            _ => None,
        })
        .collect();
    locals.sort_by_key(|&(i, size, _)| (size, i));
    for (i, size, a) in locals {
        off = align(off, a as i64);
        slot_off[i] = off;
        off += size as i64;
    }
    let size = align(off, 16);
    for (i, k) in mf.slots.values().enumerate() {
        if let SlotKind::Incoming(n) = *k {
            slot_off[i] = size + 8 * n as i64;
        }
    }
    Frame {
        size,
        slot_off,
        saves,
    }
}

/// A scratch register that `inst` does not mention.
fn free_scratch(inst: &MInst) -> Result<Reg, BackendError> {
    [T5, T6]
        .into_iter()
        .find(|&r| !mentions(inst, r))
        .ok_or_else(|| {
            BackendError::Internal("no scratch register for a large frame offset".into())
        })
}

/// `tmp = sp + off` for an offset beyond 12 bits.
fn sp_plus(tmp: Reg, off: i64, out: &mut Vec<MInst>) {
    out.push(MInst::Li { rd: tmp, imm: off });
    out.push(MInst::Alu {
        op: AluOp::Add,
        rd: tmp,
        rs1: SP,
        rs2: tmp,
    });
}

fn save_op(r: Reg) -> MemOp {
    if r.phys_class() == RegClass::Int {
        MemOp::D
    } else {
        MemOp::FD
    }
}

/// An `sp`-relative access at any offset, using `tmp` (which the access itself does
/// not need) for large offsets; `like` gives the access's alias facts.
fn sp_access(load: bool, op: MemOp, r: Reg, off: i64, like: Addr, tmp: Reg, out: &mut Vec<MInst>) {
    let addr = if fits_imm12(off) {
        Addr {
            base: Base::Reg(SP),
            off,
            ..like
        }
    } else {
        sp_plus(tmp, off, out);
        Addr {
            base: Base::Reg(tmp),
            off: 0,
            ..like
        }
    };
    out.push(if load {
        MInst::Load { op, rd: r, addr }
    } else {
        MInst::Store { op, src: r, addr }
    });
}

/// `sp += delta`, through `tmp` when `delta` exceeds 12 bits.
fn adjust_sp(delta: i64, tmp: Reg, out: &mut Vec<MInst>) {
    if delta == 0 {
        return;
    }
    if fits_imm12(delta) {
        out.push(MInst::AluImm {
            op: AluImmOp::Addi,
            rd: SP,
            rs1: SP,
            imm: delta as i32,
        });
    } else {
        out.push(MInst::Li {
            rd: tmp,
            imm: delta,
        });
        out.push(MInst::Alu {
            op: AluOp::Add,
            rd: SP,
            rs1: SP,
            rs2: tmp,
        });
    }
}

/// Restores the saved registers and releases the frame before a return or tail
/// call, where `t0` holds nothing (a return reads `a0`/`fa0`, a tail call the
/// argument registers).
fn epilogue(fr: &Frame, out: &mut Vec<MInst>) {
    save_area_access(true, fr, T0, out);
    adjust_sp(fr.size, T0, out);
}

/// Allocates the frame and saves the registers at the start of a block, through
/// `tmp` for large offsets: `t0` in the entry, where it holds nothing yet; `t5`
/// elsewhere (a shrink-wrapped prologue, where `t0` may hold a value), a spill
/// scratch register, which never carries a value into a block.
fn prologue(fr: &Frame, tmp: Reg, out: &mut Vec<MInst>) {
    adjust_sp(-fr.size, tmp, out);
    save_area_access(false, fr, tmp, out);
}

/// Saves (or restores) the callee-saved registers. When their offsets are beyond 12
/// bits (a large frame), `tmp` is set once to a base near them and each access is
/// relative to it, instead of building every address anew.
fn save_area_access(load: bool, fr: &Frame, tmp: Reg, out: &mut Vec<MInst>) {
    let offsets = fr.saves.iter().map(|&(_, off)| off);
    let (lo, hi) = (offsets.clone().min(), offsets.max());
    let base = match (lo, hi) {
        (Some(lo), Some(hi)) if !fits_imm12(hi) && fits_imm12(hi - lo) => {
            sp_plus(tmp, lo, out);
            Some(lo)
        }
        _ => None,
    };
    for &(r, off) in &fr.saves {
        match base {
            Some(k) => {
                let addr = Addr::new(Base::Reg(tmp), off - k);
                out.push(if load {
                    MInst::Load {
                        op: save_op(r),
                        rd: r,
                        addr,
                    }
                } else {
                    MInst::Store {
                        op: save_op(r),
                        src: r,
                        addr,
                    }
                });
            }
            None => sp_access(
                load,
                save_op(r),
                r,
                off,
                Addr::new(Base::Reg(SP), 0),
                tmp,
                out,
            ),
        }
    }
}

/// Whether `inst` reads or writes `r` (explicitly).
fn mentions(inst: &MInst, r: Reg) -> bool {
    let mut i = inst.clone();
    let mut found = false;
    i.map_regs(|x, _| found |= *x == r);
    found
}

/// For each instruction of a block: whether `r` is read after it (before being
/// written) later in the block. The spill scratch registers never carry a value
/// across blocks.
fn live_after(insts: &[MInst], r: Reg) -> Vec<bool> {
    let mut live = vec![false; insts.len()];
    let mut now = false;
    for (i, inst) in insts.iter().enumerate().rev() {
        live[i] = now;
        let mut defines = false;
        inst.for_each_def(|d| defines |= d == r);
        let mut uses = false;
        inst.for_each_use(|u| uses |= u == r);
        if defines {
            now = false;
        }
        if uses {
            now = true;
        }
    }
    live
}

/// `t6` as a base `sp + k` shared by the frame accesses of a block whose offsets
/// exceed 12 bits: set once (to a multiple of 2048), then each access within 2 KiB of
/// it is a single instruction. Only used where `t6` holds nothing.
struct BaseCache {
    k: Option<i64>,
}

impl BaseCache {
    /// The base register and offset for `sp + total`, setting `t6` when needed.
    fn addr(&mut self, total: i64, out: &mut Vec<MInst>) -> Addr {
        let k = match self.k {
            Some(k) if fits_imm12(total - k) => k,
            _ => {
                let k = total - total.rem_euclid(2048);
                sp_plus(T6, k, out);
                self.k = Some(k);
                k
            }
        };
        Addr::new(Base::Reg(T6), total - k)
    }
}

/// Inserts prologue and epilogues and resolves every frame slot reference. The
/// prologue goes where shrink-wrapping places it ([`shrink_wrap::place`]), an
/// epilogue before each return it reaches; outside that region the frame is empty
/// (incoming stack arguments lie at `sp`).
pub fn lower_frame(mf: &mut MFunction, fr: &Frame) -> Result<(), BackendError> {
    let wrap = shrink_wrap::place(mf, fr);
    let outside = Frame {
        size: 0,
        slot_off: fr.slot_off.iter().map(|off| off - fr.size).collect(),
        saves: Vec::new(),
    };
    let entry = mf.layout[0];
    let layout = mf.layout.clone();
    for b in layout {
        let fr = if wrap.inside[b.index()] { fr } else { &outside };
        let insts = std::mem::take(&mut mf.blocks[b].insts);
        let mut out = Vec::with_capacity(insts.len() + 8);
        if b == wrap.save {
            prologue(fr, if b == entry { T0 } else { T5 }, &mut out);
        }
        let t6_live = live_after(&insts, T6);
        let mut cache = BaseCache { k: None };
        for (n, inst) in insts.into_iter().enumerate() {
            let start = out.len();
            // Whether this instruction may use `t6` as the shared base.
            let t6_free = !t6_live[n] && !mentions(&inst, T6);
            let mut cached = false;
            let slot_total = |addr: &Addr| match addr.base {
                Base::Slot(s) => Some(fr.slot_off[s.0 as usize] + addr.off),
                Base::Reg(_) => None,
            };
            match &inst {
                MInst::Load { op, rd, addr } | MInst::Store { op, src: rd, addr }
                    if t6_free && slot_total(addr).is_some_and(|t| !fits_imm12(t)) =>
                {
                    let addr = cache.addr(slot_total(addr).expect("a slot"), &mut out);
                    out.push(match inst {
                        MInst::Load { .. } => MInst::Load {
                            op: *op,
                            rd: *rd,
                            addr,
                        },
                        _ => MInst::Store {
                            op: *op,
                            src: *rd,
                            addr,
                        },
                    });
                    cached = true;
                }
                MInst::FrameAddr { rd, slot, off }
                    if t6_free && !fits_imm12(fr.slot_off[slot.0 as usize] + off) =>
                {
                    let addr = cache.addr(fr.slot_off[slot.0 as usize] + off, &mut out);
                    out.push(MInst::AluImm {
                        op: AluImmOp::Addi,
                        rd: *rd,
                        rs1: T6,
                        imm: addr.off as i32,
                    });
                    cached = true;
                }
                _ => {}
            }
            if cached {
                continue;
            }
            lower_inst(fr, inst, &mut out)?;
            if out[start..].iter().any(|x| {
                let mut d = false;
                x.for_each_def(|r| d |= r == T6);
                d
            }) {
                cache.k = None;
            }
        }
        mf.blocks[b].insts = out;
    }
    Ok(())
}

/// Appends `inst` with its frame slot references resolved (and the epilogue before a
/// return).
fn lower_inst(fr: &Frame, inst: MInst, out: &mut Vec<MInst>) -> Result<(), BackendError> {
    match inst {
        MInst::Ret { .. } | MInst::TailCall { .. } => {
            epilogue(fr, out);
            out.push(inst);
        }
        MInst::FrameAddr { rd, slot, off } => {
            let total = fr.slot_off[slot.0 as usize] + off;
            if fits_imm12(total) {
                out.push(MInst::AluImm {
                    op: AluImmOp::Addi,
                    rd,
                    rs1: SP,
                    imm: total as i32,
                });
            } else {
                sp_plus(rd, total, out);
            }
        }
        MInst::Load {
            op,
            rd,
            addr:
                addr @ Addr {
                    base: Base::Slot(s),
                    off,
                    ..
                },
        } => {
            let total = fr.slot_off[s.0 as usize] + off;
            let tmp = if op.class() == RegClass::Int {
                rd
            } else {
                free_scratch(&inst)?
            };
            sp_access(true, op, rd, total, addr, tmp, out);
        }
        MInst::Store {
            op,
            src,
            addr:
                addr @ Addr {
                    base: Base::Slot(s),
                    off,
                    ..
                },
        } => {
            let total = fr.slot_off[s.0 as usize] + off;
            let tmp = free_scratch(&inst)?;
            sp_access(false, op, src, total, addr, tmp, out);
        }
        other => out.push(other),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_without_calls_saves_ra_when_it_gives_ra_a_value() {
        let mut mf = MFunction::new("t".into(), false);
        let b = mf.new_block();
        mf.layout.push(b);
        let leaf = |insts: Vec<MInst>| {
            let mut mf = mf.clone();
            mf.blocks[b].insts = insts;
            lay_out(&mf)
        };
        let ret = MInst::Ret { value: Some(A0) };
        let add = |rd: Reg| MInst::Alu {
            op: AluOp::Addw,
            rd,
            rs1: A0,
            rs2: A0,
        };
        assert_eq!(leaf(vec![add(A0), ret.clone()]).saves, vec![]);
        let fr = leaf(vec![add(RA), add(A0), ret]);
        assert_eq!(fr.saves, vec![(RA, 0)]);
        assert_eq!(fr.size, 16);
    }

    #[test]
    fn small_objects_near_sp_and_alignment() {
        let mut mf = MFunction::new("t".into(), false);
        let b = mf.new_block();
        mf.layout.push(b);
        let big = mf.new_slot(SlotKind::Local {
            size: 4 << 20,
            align: 16,
        });
        let small = mf.new_slot(SlotKind::Local { size: 4, align: 8 });
        let spill = mf.new_slot(SlotKind::Spill);
        let inc = mf.new_slot(SlotKind::Incoming(2));
        mf.outgoing_size = 24;
        mf.blocks[MBlock(0)].insts = vec![
            MInst::Call {
                callee: "f".into(),
                args: vec![],
            },
            MInst::Mv {
                rd: Reg::x(8),
                rs: A0,
            },
            MInst::Ret { value: None },
        ];
        let fr = lay_out(&mf);
        assert_eq!(fr.saves, vec![(RA, 24), (Reg::x(8), 32)]);
        assert_eq!(fr.slot_off[spill.0 as usize], 40);
        assert_eq!(fr.slot_off[small.0 as usize], 48);
        assert_eq!(fr.slot_off[big.0 as usize], 64);
        assert_eq!(fr.size % 16, 0);
        assert_eq!(fr.slot_off[inc.0 as usize], fr.size + 16);
        lower_frame(&mut mf, &fr).unwrap();
        // Large frame: sp adjusted through t0.
        assert_eq!(
            mf.blocks[MBlock(0)].insts[0],
            MInst::Li {
                rd: T0,
                imm: -fr.size
            }
        );
    }

    /// Incoming arguments 300 and 301 lie beyond 2 KiB: once `t6` is free, the first
    /// access sets it to a base near them and the second reuses it. While `t6` holds
    /// a value still to be read (a reload for the next instruction), an access builds
    /// its own address as before.
    #[test]
    fn large_offsets_in_a_block_share_a_base_in_t6() {
        let mut mf = MFunction::new("t".into(), false);
        let b = mf.new_block();
        mf.layout.push(b);
        let x = mf.new_slot(SlotKind::Incoming(300));
        let y = mf.new_slot(SlotKind::Incoming(301));
        let load = |rd, slot| MInst::Load {
            op: MemOp::W,
            rd,
            addr: Addr::new(Base::Slot(slot), 0),
        };
        let add = MInst::Alu {
            op: AluOp::Add,
            rd: A0,
            rs1: T5,
            rs2: T6,
        };
        mf.blocks[MBlock(0)].insts = vec![
            load(T6, y),
            load(T5, x),
            add.clone(),
            load(T5, x),
            load(Reg::x(11), y),
            MInst::Ret { value: None },
        ];
        let fr = lay_out(&mf);
        let (ox, oy) = (fr.slot_off[x.0 as usize], fr.slot_off[y.0 as usize]);
        assert!(!fits_imm12(ox) && oy == ox + 8);
        let k = ox - ox.rem_euclid(2048);
        lower_frame(&mut mf, &fr).unwrap();
        let at = |base, off| Addr::new(Base::Reg(base), off);
        let lw = |rd, addr| MInst::Load {
            op: MemOp::W,
            rd,
            addr,
        };
        let insts = &mf.blocks[MBlock(0)].insts;
        // y's load into `t6` builds its address in `t6` itself; `t6` then holds y
        // for the add, so x's load builds its own address in `t5`.
        assert_eq!(
            insts[..7],
            [
                MInst::Li { rd: T6, imm: oy },
                MInst::Alu {
                    op: AluOp::Add,
                    rd: T6,
                    rs1: SP,
                    rs2: T6,
                },
                lw(T6, at(T6, 0)),
                MInst::Li { rd: T5, imm: ox },
                MInst::Alu {
                    op: AluOp::Add,
                    rd: T5,
                    rs1: SP,
                    rs2: T5,
                },
                lw(T5, at(T5, 0)),
                add,
            ]
        );
        // After the add, `t6` is free: one base, two single loads.
        assert_eq!(
            insts[7..11],
            [
                MInst::Li { rd: T6, imm: k },
                MInst::Alu {
                    op: AluOp::Add,
                    rd: T6,
                    rs1: SP,
                    rs2: T6,
                },
                lw(T5, at(T6, ox - k)),
                lw(Reg::x(11), at(T6, oy - k)),
            ]
        );
    }
}
