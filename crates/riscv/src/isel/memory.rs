//! Memory and addresses: pointers tracked symbolically (a frame slot, a global or a
//! register, plus a constant offset) so constant `gep`s fold into the offsets of loads
//! and stores; `alloc` (frame slots), `gep`, loads and stores; and the per-block cache
//! that materialises each constant and address once per block where used, marking the
//! instructions that do it rematerialisable for the register allocator.

use super::{CacheKey, Isel, Opnd, PBase, PtrLoc};
use crate::mir::*;
use crate::BackendError;
use ir::{EntityRef, Inst, InstKind, Type, Value};

/// The width of a load or store of type `t`.
pub(super) fn mem_op(t: Type) -> Result<MemOp, BackendError> {
    match t {
        Type::I32 => Ok(MemOp::W),
        Type::F32 => Ok(MemOp::FS),
        Type::Ptr => Ok(MemOp::D),
        t => Err(BackendError::Untranslatable(format!(
            "no load/store of type {t}"
        ))),
    }
}

/// The largest offset folded into a global's symbolic address (`lla g+off`): far
/// below the +-2 GiB a PC-relative address reaches, far above any SysY array.
pub(super) const MAX_SYMBOL_OFFSET: u64 = 1 << 30;

impl Isel<'_> {
    /// A frame slot for `res = alloc elem, len`, whose address is `res`.
    pub(super) fn alloc(&mut self, elem: Type, len: u32, res: Value) {
        let size = (elem.size() as u64 * len as u64).max(1);
        let align = if size >= 16 { 16 } else { 8 };
        let slot = self.mf.new_slot(SlotKind::Local { size, align });
        self.loc[res.index()] = Some(PtrLoc {
            base: PBase::Slot(slot),
            off: 0,
        });
    }

    /// `res = load ty, ptr` (instruction `i`).
    pub(super) fn load(
        &mut self,
        i: Inst,
        ty: Type,
        ptr: Value,
        res: Value,
    ) -> Result<(), BackendError> {
        let op = mem_op(ty)?;
        let addr = self.access_addr(i, ptr)?;
        let rd = self.def_reg(res);
        self.push(MInst::Load { op, rd, addr });
        Ok(())
    }

    /// `store value, ptr` (instruction `i`).
    pub(super) fn store(&mut self, i: Inst, value: Value, ptr: Value) -> Result<(), BackendError> {
        let op = mem_op(self.f.value_type(value))?;
        let src = self.reg(value)?;
        let addr = self.access_addr(i, ptr)?;
        self.push(MInst::Store { op, src, addr });
        Ok(())
    }

    /// A register holding the address `l` (computed once per block).
    pub(super) fn materialize(&mut self, l: PtrLoc) -> Reg {
        match l.base {
            PBase::Reg(r) if l.off == 0 => r,
            // `lla g+off` is PC-relative: the offset must keep the address within
            // reach (a constant index far outside the array, in code that never
            // runs, once gave `g+8589934588`, which no assembler takes). Such an
            // offset is added to the global's address instead.
            PBase::Global(_) if l.off.unsigned_abs() > MAX_SYMBOL_OFFSET => {
                let base = self.cached(CacheKey::Loc(PtrLoc { off: 0, ..l }));
                let t = self.new_vreg(RegClass::Int);
                self.push_remat(MInst::Li { rd: t, imm: l.off });
                let r = self.new_vreg(RegClass::Int);
                self.push(MInst::Alu {
                    op: AluOp::Add,
                    rd: r,
                    rs1: base,
                    rs2: t,
                });
                r
            }
            _ => self.cached(CacheKey::Loc(l)),
        }
    }

    /// A register holding the constant or address `k`, computed once per block.
    pub(super) fn cached(&mut self, k: CacheKey) -> Reg {
        if let Some(&r) = self.cache.get(&k) {
            return r;
        }
        let r = match k {
            CacheKey::Int(c) => {
                let r = self.new_vreg(RegClass::Int);
                self.push_remat(MInst::Li {
                    rd: r,
                    imm: c as i64,
                });
                r
            }
            CacheKey::Wide(c) => {
                let r = self.new_vreg(RegClass::Int);
                self.push_remat(MInst::Li { rd: r, imm: c });
                r
            }
            CacheKey::FBits(0) => {
                let r = self.new_vreg(RegClass::Float);
                self.push_remat(MInst::Cvt {
                    op: CvtOp::FmvWX,
                    rd: r,
                    rs: ZERO,
                });
                r
            }
            CacheKey::FBits(b) => {
                let t = self.cached(CacheKey::Int(b as i32));
                let r = self.new_vreg(RegClass::Float);
                self.push(MInst::Cvt {
                    op: CvtOp::FmvWX,
                    rd: r,
                    rs: t,
                });
                r
            }
            CacheKey::Loc(l) => {
                let r = self.new_vreg(RegClass::Int);
                match l.base {
                    PBase::Slot(slot) => self.push_remat(MInst::FrameAddr {
                        rd: r,
                        slot,
                        off: l.off,
                    }),
                    PBase::Global(g) => self.push_remat(MInst::La {
                        rd: r,
                        global: g,
                        off: l.off,
                    }),
                    PBase::Reg(b) => {
                        if fits_imm12(l.off) {
                            self.push(MInst::AluImm {
                                op: AluImmOp::Addi,
                                rd: r,
                                rs1: b,
                                imm: l.off as i32,
                            });
                        } else {
                            let t = self.new_vreg(RegClass::Int);
                            self.push_remat(MInst::Li { rd: t, imm: l.off });
                            self.push(MInst::Alu {
                                op: AluOp::Add,
                                rd: r,
                                rs1: b,
                                rs2: t,
                            });
                        }
                    }
                }
                r
            }
        };
        self.cache.insert(k, r);
        r
    }

    /// Emits an instruction defining a fresh vreg and records it as its recipe.
    pub(super) fn push_remat(&mut self, i: MInst) {
        let mut rd = None;
        i.for_each_def(|r| rd = Some(r));
        if let Some(r) = rd.filter(|r| r.is_virtual()) {
            self.mf.vreg_remat[r.vindex()] = Some(i.clone());
        }
        self.push(i);
    }

    /// A pointer operand as a location.
    pub(super) fn ptr_loc(&mut self, v: Value) -> Result<PtrLoc, BackendError> {
        Ok(match self.operand(v)? {
            Opnd::Loc(l) => l,
            Opnd::Reg(r) => PtrLoc {
                base: PBase::Reg(r),
                off: 0,
            },
            _ => PtrLoc {
                base: PBase::Reg(self.reg(v)?),
                off: 0,
            },
        })
    }

    /// The address of load or store `i` through `ptr`, in the access's alias region,
    /// with its start as an anchor plus an offset.
    fn access_addr(&mut self, i: Inst, ptr: Value) -> Result<Addr, BackendError> {
        let region = self.facts.regions.region(self.fid, i);
        let o = self.offsets.of(ptr);
        let n = self.bases.len() as u32;
        let anchor = *self.bases.entry(o.base).or_insert(n);
        Ok(Addr {
            region,
            sym: Some(SymAddr {
                anchor,
                off: o.bytes,
            }),
            ..self.addr(ptr)?
        })
    }

    /// The memory address `ptr` designates.
    pub(super) fn addr(&mut self, ptr: Value) -> Result<Addr, BackendError> {
        let l = self.ptr_loc(ptr)?;
        Ok(match l.base {
            PBase::Slot(s) => Addr::new(Base::Slot(s), l.off),
            PBase::Reg(r) if fits_imm12(l.off) => Addr::new(Base::Reg(r), l.off),
            PBase::Global(_) if fits_imm12(l.off) => {
                let r = self.materialize(PtrLoc { off: 0, ..l });
                Addr::new(Base::Reg(r), l.off)
            }
            // A far offset from a register: `r + hi` (computed once per block and
            // shared by the accesses near it) plus a 12-bit `lo`, as `%hi`/`%lo`
            // split addresses.
            PBase::Reg(_) => {
                let hi = (l.off + 0x800) & !0xfff;
                let r = self.materialize(PtrLoc { off: hi, ..l });
                Addr::new(Base::Reg(r), l.off - hi)
            }
            _ => Addr::new(Base::Reg(self.materialize(l)), 0),
        })
    }

    /// `res = gep base, index, stride`: folded into `res`'s location when the index is
    /// constant; else the base register plus the scaled index (shifts shared where a
    /// dominating block computed them).
    pub(super) fn gep(
        &mut self,
        res: Value,
        base: Value,
        index: Value,
        stride: u32,
    ) -> Result<(), BackendError> {
        let bl = self.ptr_loc(base)?;
        if let Some(c) = self.iconst(index) {
            let l = PtrLoc {
                base: bl.base,
                off: bl.off + c as i64 * stride as i64,
            };
            // Folded into the accesses; but a register plus an offset compared or
            // passed in another block (a loop's end pointer) is computed here, once,
            // not at each use. (Frame and global addresses are rematerialised
            // cheaply where used instead.)
            let reg_based = matches!(l.base, PBase::Reg(_)) && l.off != 0;
            self.loc[res.index()] = Some(if reg_based && self.used_as_value_elsewhere(res) {
                let r = self.materialize(l);
                PtrLoc {
                    base: PBase::Reg(r),
                    off: 0,
                }
            } else {
                l
            });
            return Ok(());
        }
        let idx = self.reg(index)?;
        let scaled = if stride == 1 {
            idx
        } else if stride.is_power_of_two() {
            let shift = stride.trailing_zeros();
            match self.scaled.get(&(idx, shift)) {
                Some(&(t, at)) if self.dt.dominates(at, self.ir_block) => t,
                _ => {
                    let t = self.tmp();
                    self.alui(AluImmOp::Slli, t, idx, shift as i32);
                    self.scaled.insert((idx, shift), (t, self.ir_block));
                    t
                }
            }
        } else if stride == 0 {
            self.loc[res.index()] = Some(bl);
            return Ok(());
        } else {
            let s = self.cached(CacheKey::Int(stride as i32));
            let t = self.tmp();
            self.alu(AluOp::Mul, t, idx, s);
            t
        };
        let b = self.materialize(PtrLoc { off: 0, ..bl });
        let sum = self.tmp();
        self.alu(AluOp::Add, sum, b, scaled);
        self.loc[res.index()] = Some(PtrLoc {
            base: PBase::Reg(sum),
            off: bl.off,
        });
        Ok(())
    }

    /// Whether the pointer `v` has a use outside its block other than as an address
    /// (of an access, or the base of a gep).
    fn used_as_value_elsewhere(&self, v: Value) -> bool {
        let f = self.f;
        let home = f.value_block(v);
        f.users(v).iter().any(|&u| {
            f.layout.inst_block(u) != home
                && !matches!(f.kind(u),
                    InstKind::Load { ptr, .. } if *ptr == v)
                && !matches!(f.kind(u),
                    InstKind::Store { ptr, value } if *ptr == v && *value != v)
                && !matches!(f.kind(u), InstKind::Gep { base, .. } if *base == v)
        })
    }
}
