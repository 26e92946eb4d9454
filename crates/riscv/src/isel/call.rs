//! The calling convention (`crate::abi` classifies): calls with their arguments in
//! registers or outgoing stack slots (floats of variadic calls as doubles), the
//! result read from `a0`/`fa0`; the entry block's parameters taken from the argument
//! registers or incoming stack slots; `ret`.

use super::memory::mem_op;
use super::{CacheKey, Isel, Opnd, PBase, PtrLoc};
use crate::abi::{self, ArgKind, ArgLoc};
use crate::mir::*;
use crate::BackendError;
use ir::{EntityRef, FuncId, Type, Value};

/// The longest `memset` expanded into stores, in bytes (16 `sw`).
pub const MAX_INLINE_MEMSET: i32 = 64;

/// The longest `memset` of zero into a local array expanded into stores, in bytes:
/// the array is 8-byte aligned, so [`crate::store_merge`] makes the `sw` pairs
/// `sd` (32 of them at most, as GCC's `store_by_pieces` and LLVM's
/// `MaxStoresPerMemset` expand zeroing of known-aligned memory).
pub const MAX_INLINE_MEMSET_FRAME: i32 = 256;

impl Isel<'_> {
    /// The entry block's parameters (those used), from their argument registers or
    /// incoming stack slots.
    pub(super) fn entry_params(&mut self) -> Result<(), BackendError> {
        let f = self.f;
        let params = f.block_params(f.entry_block()).to_vec();
        let kinds: Vec<ArgKind> = params
            .iter()
            .map(|&p| match f.value_type(p) {
                Type::F32 => ArgKind::Float,
                _ => ArgKind::Int,
            })
            .collect();
        let (locs, _) = abi::classify_args(&kinds);
        for (i, &p) in params.iter().enumerate() {
            if !f.has_users(p) {
                continue;
            }
            let ty = f.value_type(p);
            let r = self.def_reg(p);
            match locs[i] {
                ArgLoc::IntReg(a) if ty == Type::F32 => self.push(MInst::Cvt {
                    op: CvtOp::FmvWX,
                    rd: r,
                    rs: a,
                }),
                ArgLoc::IntReg(a) | ArgLoc::FloatReg(a) => self.push(MInst::Mv { rd: r, rs: a }),
                ArgLoc::Stack(k) => {
                    let slot = self.incoming_slot(k);
                    let load = MInst::Load {
                        op: mem_op(ty)?,
                        rd: r,
                        addr: Addr::new(Base::Slot(slot), 0),
                    };
                    if self.stack_siblings {
                        // A sibling call may overwrite the slot.
                        self.push(load);
                    } else {
                        self.push_remat(load);
                    }
                }
            }
        }
        Ok(())
    }

    /// How each argument of a call of `callee` travels (floats beyond a variadic
    /// function's parameters as doubles).
    pub(super) fn arg_kinds(&self, callee: FuncId, args: &[Value]) -> Vec<ArgKind> {
        let sig = &self.m.funcs[callee].sig;
        args.iter()
            .enumerate()
            .map(|(i, &a)| match self.f.value_type(a) {
                Type::F32 if sig.variadic && i >= sig.params.len() => ArgKind::VariadicDouble,
                Type::F32 => ArgKind::Float,
                _ => ArgKind::Int,
            })
            .collect()
    }

    /// `res = call callee(args)`: stack arguments stored, register arguments moved in
    /// (constants last), the call, the result moved out of `a0`/`fa0`; or, for a
    /// `sibling` call (see `sibling`), the arguments and a tail call, which ends the
    /// block (the return after it is not selected). A small
    /// `memset` is stores instead ([`Isel::inline_memset`]).
    pub(super) fn call(
        &mut self,
        res: Option<Value>,
        callee: FuncId,
        args: &[Value],
        sibling: bool,
    ) -> Result<(), BackendError> {
        if self.inline_memset(res, callee, args)? {
            return Ok(());
        }
        let f = self.f;
        let kinds = self.arg_kinds(callee, args);
        let (locs, nstack) = abi::classify_args(&kinds);
        if !sibling {
            self.mf.outgoing_size = self.mf.outgoing_size.max(nstack as u64 * 8);
        }
        let mut moves: Vec<(Reg, Reg)> = Vec::new();
        let mut consts: Vec<(Reg, i32)> = Vec::new();
        let mut arg_regs = Vec::new();
        for (i, &a) in args.iter().enumerate() {
            match (kinds[i], locs[i]) {
                (ArgKind::Int, ArgLoc::IntReg(p)) => {
                    arg_regs.push(p);
                    match self.operand(a)? {
                        Opnd::Int(c) => consts.push((p, c)),
                        _ => {
                            let r = self.reg(a)?;
                            moves.push((p, r));
                        }
                    }
                }
                (ArgKind::Float, ArgLoc::FloatReg(p)) => {
                    arg_regs.push(p);
                    let r = self.reg(a)?;
                    moves.push((p, r));
                }
                (ArgKind::Float, ArgLoc::IntReg(p)) => {
                    arg_regs.push(p);
                    let r = self.reg(a)?;
                    let t = self.tmp();
                    self.push(MInst::Cvt {
                        op: CvtOp::FmvXW,
                        rd: t,
                        rs: r,
                    });
                    moves.push((p, t));
                }
                (ArgKind::VariadicDouble, loc) => {
                    let r = self.reg(a)?;
                    let d = self.mf.new_double_vreg();
                    self.push(MInst::Cvt {
                        op: CvtOp::FcvtDS,
                        rd: d,
                        rs: r,
                    });
                    match loc {
                        ArgLoc::Stack(k) => {
                            let addr = self.stack_arg_addr(k, sibling);
                            self.push(MInst::Store {
                                op: MemOp::FD,
                                src: d,
                                addr,
                            });
                        }
                        ArgLoc::IntReg(p) | ArgLoc::FloatReg(p) => {
                            arg_regs.push(p);
                            let t = self.tmp();
                            self.push(MInst::Cvt {
                                op: CvtOp::FmvXD,
                                rd: t,
                                rs: d,
                            });
                            moves.push((p, t));
                        }
                    }
                }
                (kind, ArgLoc::Stack(k)) => {
                    let r = self.reg(a)?;
                    let op = if kind == ArgKind::Float {
                        MemOp::FS
                    } else {
                        MemOp::D
                    };
                    let addr = self.stack_arg_addr(k, sibling);
                    self.push(MInst::Store { op, src: r, addr });
                }
                (_, loc) => {
                    return Err(BackendError::Internal(format!(
                        "argument {i} classified as {loc:?}"
                    )))
                }
            }
        }
        for (p, r) in moves {
            self.push(MInst::Mv { rd: p, rs: r });
        }
        for (p, c) in consts {
            self.push(MInst::Li {
                rd: p,
                imm: c as i64,
            });
        }
        let name = self.facts.names[callee.index()].clone();
        if sibling {
            self.push(MInst::TailCall {
                callee: name,
                args: arg_regs,
            });
            self.after_sibling_call = true;
            return Ok(());
        }
        self.push(MInst::Call {
            callee: name,
            args: arg_regs,
        });
        if let Some(r) = res.filter(|&r| f.has_users(r)) {
            let ret = if f.value_type(r) == Type::F32 {
                FA0
            } else {
                A0
            };
            let rd = self.def_reg(r);
            self.push(MInst::Mv { rd, rs: ret });
        }
        Ok(())
    }

    /// C's `memset(p, b, n)` with a constant byte and a constant length of at most
    /// [`MAX_INLINE_MEMSET`] bytes ([`MAX_INLINE_MEMSET_FRAME`] for zero into a local
    /// array), a multiple of 4, and its result unused, as `sw`
    /// stores of the repeated byte (as LLVM's code generator expands small
    /// `memset`s, `MaxStoresPerMemset`): a call costs more than the stores. The
    /// pointer is 4-byte aligned (the loop idiom pass makes these calls of `i32` and
    /// `f32` elements). The stores are in [`Addr::ANY_REGION`]: they may overlap any
    /// access, as the call did. Whether it expanded the call.
    fn inline_memset(
        &mut self,
        res: Option<Value>,
        callee: FuncId,
        args: &[Value],
    ) -> Result<bool, BackendError> {
        let f = self.f;
        let decl = &self.m.funcs[callee];
        let &[ptr, byte, len] = args else {
            return Ok(false);
        };
        if !(decl.is_declaration() && decl.name == "memset") || res.is_some_and(|r| f.has_users(r))
        {
            return Ok(false);
        }
        let len = f.as_sext_iconst(len);
        let (Some(len), Some(byte)) = (len, f.as_iconst(byte)) else {
            return Ok(false);
        };
        let word = (byte as u8 as u32 * 0x0101_0101) as i32;
        let in_frame = word == 0 && matches!(self.ptr_loc(ptr)?.base, PBase::Slot(_));
        let max = if in_frame {
            MAX_INLINE_MEMSET_FRAME
        } else {
            MAX_INLINE_MEMSET
        };
        if !(0..=max).contains(&len) || len % 4 != 0 {
            return Ok(false);
        }
        let src = if word == 0 {
            ZERO
        } else {
            self.cached(CacheKey::Int(word))
        };
        let at = self.addr(ptr)?;
        let at = match at.base {
            Base::Reg(_) if !fits_imm12(at.off + i64::from(len)) => {
                Addr::new(Base::Reg(self.reg(ptr)?), 0)
            }
            _ => Addr::new(at.base, at.off),
        };
        for k in 0..i64::from(len / 4) {
            self.push(MInst::Store {
                op: MemOp::W,
                src,
                addr: Addr::new(at.base, at.off + 4 * k),
            });
        }
        Ok(true)
    }

    /// Address of stack argument `k` of a call: in the outgoing area, or for a
    /// sibling call where our caller passed ours.
    fn stack_arg_addr(&mut self, k: u32, sibling: bool) -> Addr {
        if sibling {
            Addr::new(Base::Slot(self.incoming_slot(k)), 0)
        } else {
            self.out_arg_addr(k)
        }
    }

    /// Address of outgoing stack argument `k`.
    fn out_arg_addr(&mut self, k: u32) -> Addr {
        let off = k as i64 * 8;
        if fits_imm12(off) {
            Addr::new(Base::Reg(SP), off)
        } else {
            // `sp + hi`, shared by the (up to 256) arguments in the same 2 KiB window
            // and cached per block, so a call with a thousand stack arguments computes
            // four bases, not a thousand addresses (which machine LICM would hoist out
            // of a loop and the allocator would then spill).
            let hi = off & !0x7ff;
            let a = self.cached(CacheKey::Loc(PtrLoc {
                base: PBase::Reg(SP),
                off: hi,
            }));
            Addr::new(Base::Reg(a), off - hi)
        }
    }

    /// `ret`, the value (if any) in `a0` or `fa0`.
    pub(super) fn ret(&mut self, value: Option<Value>) -> Result<(), BackendError> {
        match value {
            None => self.push(MInst::Ret { value: None }),
            Some(v) => {
                let r = if self.f.value_type(v) == Type::F32 {
                    FA0
                } else {
                    A0
                };
                match self.operand(v)? {
                    Opnd::Int(c) => self.push(MInst::Li {
                        rd: r,
                        imm: c as i64,
                    }),
                    _ => {
                        let s = self.reg(v)?;
                        self.push(MInst::Mv { rd: r, rs: s });
                    }
                }
                self.push(MInst::Ret { value: Some(r) });
            }
        }
        Ok(())
    }
}
