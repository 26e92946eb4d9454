//! Instruction selection: one IR function to machine IR over virtual registers, by a
//! walk over the blocks in reverse post-order (definitions before uses) that expands
//! each IR instruction into RV64GC instructions with simple local pattern matching:
//!
//! - 12-bit immediates folded into `addiw`/`slti`/`andi`/...; `*w` operations for i32
//!   so every i32 lives sign-extended in its 64-bit register (hence `sext` is a move
//!   and `trunc` an `addiw rd, rs, 0`); the i64 operations are plain `add`, `sub`,
//!   `mul`, `div`, `rem` on registers;
//! - multiplication by constants through shifts, division and remainder by constants
//!   through shifts (powers of two) or a multiply-high by a magic number (Granlund and
//!   Montgomery, "Division by Invariant Integers using Multiplication", PLDI 1994, in
//!   the formulation of Warren's *Hacker's Delight*, 2nd ed., section 10-4);
//! - a comparison used only by the `br` ending its block becomes a compare-and-branch;
//! - pointers are tracked symbolically (frame slot, global, or register plus a
//!   constant offset) so constant `gep`s fold into load/store offsets;
//! - constants, global and frame addresses are materialised once per block where used
//!   and marked rematerialisable for the register allocator;
//! - block arguments become parallel copies on edges: a `br` arm that passes arguments
//!   gets its own block (splitting the critical edge), and a block with a single
//!   predecessor simply aliases its parameters to the arguments.

use crate::abi::{self, ArgKind, ArgLoc};
use crate::mir::*;
use crate::out_of_ssa::sequentialize;
use crate::srcloc::InstLocs;
use crate::BackendError;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{
    BinOp, Block, BlockCall, CmpOp, EntityRef, FuncId, Function, Inst, InstKind, Module, Type,
    UnOp, Value, ValueDef,
};
use rustc_hash::FxHashMap;

/// Base of a symbolic pointer.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
enum PBase {
    Slot(Slot),
    Global(u32),
    Reg(Reg),
}

/// A pointer known as `base + off`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
struct PtrLoc {
    base: PBase,
    off: i64,
}

/// What an IR operand is, after following aliases.
#[derive(Copy, Clone, Debug)]
enum Opnd {
    Int(i32),
    FBits(u32),
    Loc(PtrLoc),
    Reg(Reg),
}

/// Key of the per-block materialisation cache.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
enum CacheKey {
    Int(i32),
    FBits(u32),
    Loc(PtrLoc),
}

/// Selects machine code for the defined function `fid` of `m`. `func_names` gives the
/// assembly symbol of every function of the module, by `FuncId` index.
pub fn select_function(
    m: &Module,
    fid: FuncId,
    func_names: &[String],
) -> Result<MFunction, BackendError> {
    select_function_located(m, fid, func_names).map(|(mf, _)| mf)
}

/// [`select_function`], with the source position of each machine instruction: that of
/// the IR instruction it was selected for.
pub fn select_function_located(
    m: &Module,
    fid: FuncId,
    func_names: &[String],
) -> Result<(MFunction, InstLocs), BackendError> {
    let f = &m.funcs[fid];
    let mf = MFunction::new(func_names[fid.index()].clone(), f.name == "main");
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let n_values = f.num_values();
    let mut s = Isel {
        m,
        f,
        func_names,
        mf,
        mblock: vec![None; f.num_blocks()],
        vreg: vec![None; n_values],
        loc: vec![None; n_values],
        alias: vec![None; n_values],
        deferred: vec![false; f.num_insts()],
        cur: MBlock(0),
        cache: FxHashMap::default(),
        scaled: FxHashMap::default(),
        dt,
        ir_block: f.entry_block(),
        split_after: Vec::new(),
        locs: InstLocs::default(),
        cur_loc: 0,
    };
    s.run(&cfg)?;
    let mut locs = s.locs;
    locs.blocks.resize(s.mf.blocks.len(), Vec::new());
    for (l, b) in locs.blocks.iter_mut().zip(&s.mf.blocks) {
        l.resize(b.insts.len(), 0);
    }
    Ok((s.mf, locs))
}

struct Isel<'a> {
    m: &'a Module,
    f: &'a Function,
    func_names: &'a [String],
    mf: MFunction,
    mblock: Vec<Option<MBlock>>,
    /// Register holding each value computed into a register.
    vreg: Vec<Option<Reg>>,
    /// Symbolic location of pointer values that are not plain registers.
    loc: Vec<Option<PtrLoc>>,
    /// Parameters of single-predecessor blocks: equal to the argument passed.
    alias: Vec<Option<Value>>,
    /// Comparisons left for the branch that uses them.
    deferred: Vec<bool>,
    cur: MBlock,
    cache: FxHashMap<CacheKey, Reg>,
    /// Indices shifted for a gep, by (index, shift), with the IR block that shifted
    /// them: the same element of several arrays (`key[p]`, `next[p]`) shares one
    /// shift in the blocks that block dominates (blocks are selected in reverse
    /// postorder, so a dominator's shifts are known first).
    scaled: FxHashMap<(Reg, u32), (Reg, Block)>,
    dt: DominatorTree,
    /// The IR block being selected.
    ir_block: Block,
    /// Edge blocks to lay out right after a block, by block index.
    split_after: Vec<Vec<MBlock>>,
    /// The source position of each instruction pushed (see [`InstLocs`]).
    locs: InstLocs,
    /// The position of the IR instruction being selected (plus one; 0 unknown).
    cur_loc: u32,
}

fn class_of_type(t: Type) -> RegClass {
    if t == Type::F32 {
        RegClass::Float
    } else {
        RegClass::Int
    }
}

fn mem_op(t: Type) -> Result<MemOp, BackendError> {
    match t {
        Type::I32 => Ok(MemOp::W),
        Type::F32 => Ok(MemOp::FS),
        Type::Ptr => Ok(MemOp::D),
        t => Err(BackendError::Untranslatable(format!(
            "no load/store of type {t}"
        ))),
    }
}

/// Signed magic number and shift for division by `d` (|d| >= 2), Hacker's Delight
/// figure 10-1.
pub(crate) fn magic_signed(d: i32) -> (i32, u32) {
    let two31: u32 = 0x8000_0000;
    let ad = d.unsigned_abs();
    let t = two31.wrapping_add((d as u32) >> 31);
    let anc = t - 1 - t % ad;
    let mut p = 31u32;
    let mut q1 = two31 / anc;
    let mut r1 = two31 - q1 * anc;
    let mut q2 = two31 / ad;
    let mut r2 = two31 - q2 * ad;
    loop {
        p += 1;
        q1 = q1.wrapping_mul(2);
        r1 = r1.wrapping_mul(2);
        if r1 >= anc {
            q1 = q1.wrapping_add(1);
            r1 = r1.wrapping_sub(anc);
        }
        q2 = q2.wrapping_mul(2);
        r2 = r2.wrapping_mul(2);
        if r2 >= ad {
            q2 = q2.wrapping_add(1);
            r2 = r2.wrapping_sub(ad);
        }
        let delta = ad - r2;
        if !(q1 < delta || (q1 == delta && r1 == 0)) {
            break;
        }
    }
    let mut mg = q2.wrapping_add(1) as i32;
    if d < 0 {
        mg = mg.wrapping_neg();
    }
    (mg, p - 32)
}

impl<'a> Isel<'a> {
    fn run(&mut self, cfg: &ControlFlowGraph) -> Result<(), BackendError> {
        let f = self.f;
        let rpo = cfg.rpo().to_vec();
        let mut reachable = vec![false; f.num_blocks()];
        for &b in &rpo {
            reachable[b.index()] = true;
        }
        // Machine blocks in IR layout order; vregs for block parameters.
        for b in f.layout.blocks() {
            if !reachable[b.index()] {
                continue;
            }
            let mb = self.mf.new_block();
            self.mblock[b.index()] = Some(mb);
            self.mf.layout.push(mb);
        }
        let entry = f.entry_block();
        for &b in &rpo {
            if b == entry {
                continue;
            }
            let preds = cfg.preds(b);
            if preds.len() == 1 {
                let term = f.terminator(preds[0]).ok_or_else(|| {
                    BackendError::Untranslatable(format!("block {} has no terminator", preds[0]))
                })?;
                let call = f
                    .kind(term)
                    .targets()
                    .into_iter()
                    .find(|c| c.block == b)
                    .cloned();
                if let Some(call) = call {
                    for (&p, &a) in f.block_params(b).iter().zip(&call.args) {
                        self.alias[p.index()] = Some(a);
                    }
                    continue;
                }
            }
            for &p in f.block_params(b) {
                let r = self.mf.new_vreg(class_of_type(f.value_type(p)));
                self.vreg[p.index()] = Some(r);
            }
        }
        self.split_after = vec![Vec::new(); self.mf.blocks.len()];

        self.switch_to(self.mblock[entry.index()].expect("entry is reachable"));
        self.entry_params()?;
        for &b in &rpo {
            self.switch_to(self.mblock[b.index()].expect("reachable"));
            self.ir_block = b;
            let insts: Vec<Inst> = f.layout.block_insts(b).collect();
            for i in insts {
                self.cur_loc = f.src_loc(i).map_or(0, |p| p.saturating_add(1));
                self.inst(i)?;
            }
            self.cur_loc = 0;
        }
        // Final layout: every block followed by its edge blocks.
        let mut layout = Vec::with_capacity(self.mf.blocks.len());
        for &b in &self.mf.layout {
            layout.push(b);
            if let Some(extra) = self.split_after.get(b.index()) {
                layout.extend_from_slice(extra);
            }
        }
        self.mf.layout = layout;
        Ok(())
    }

    fn switch_to(&mut self, b: MBlock) {
        self.cur = b;
        self.cache.clear();
    }

    fn push(&mut self, i: MInst) {
        let b = self.cur.index();
        self.mf.blocks[b].insts.push(i);
        if self.locs.blocks.len() <= b {
            self.locs.blocks.resize(b + 1, Vec::new());
        }
        let l = &mut self.locs.blocks[b];
        // Keep the table parallel to the block's instructions.
        l.resize(self.mf.blocks[b].insts.len() - 1, 0);
        l.push(self.cur_loc);
    }

    fn new_vreg(&mut self, c: RegClass) -> Reg {
        self.mf.new_vreg(c)
    }

    // ---- operands -----------------------------------------------------------

    fn resolve(&self, mut v: Value) -> Value {
        let mut guard = 0;
        while let Some(a) = self.alias[v.index()] {
            v = a;
            guard += 1;
            if guard > 1_000_000 {
                break;
            }
        }
        v
    }

    fn operand(&self, v: Value) -> Result<Opnd, BackendError> {
        let v = self.resolve(v);
        Ok(match self.f.value_def(v) {
            ValueDef::IConst(c) => Opnd::Int(c),
            ValueDef::FConst(b) => Opnd::FBits(b),
            ValueDef::Global(g) => Opnd::Loc(PtrLoc {
                base: PBase::Global(g.index() as u32),
                off: 0,
            }),
            _ => {
                if let Some(l) = self.loc[v.index()] {
                    Opnd::Loc(l)
                } else if let Some(r) = self.vreg[v.index()] {
                    Opnd::Reg(r)
                } else {
                    return Err(BackendError::Untranslatable(format!(
                        "{}: value {v} used before its definition was selected",
                        self.f.name
                    )));
                }
            }
        })
    }

    fn iconst(&self, v: Value) -> Option<i32> {
        self.f.as_iconst(self.resolve(v))
    }

    /// The value in a register, materialising constants and addresses.
    fn reg(&mut self, v: Value) -> Result<Reg, BackendError> {
        Ok(match self.operand(v)? {
            Opnd::Reg(r) => r,
            Opnd::Int(0) => ZERO,
            Opnd::Int(c) => self.cached(CacheKey::Int(c)),
            Opnd::FBits(b) => self.cached(CacheKey::FBits(b)),
            Opnd::Loc(l) => self.materialize(l),
        })
    }

    fn materialize(&mut self, l: PtrLoc) -> Reg {
        match l.base {
            PBase::Reg(r) if l.off == 0 => r,
            _ => self.cached(CacheKey::Loc(l)),
        }
    }

    /// A register holding the constant or address `k`, computed once per block.
    fn cached(&mut self, k: CacheKey) -> Reg {
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
    fn push_remat(&mut self, i: MInst) {
        let mut rd = None;
        i.for_each_def(|r| rd = Some(r));
        if let Some(r) = rd.filter(|r| r.is_virtual()) {
            self.mf.vreg_remat[r.vindex()] = Some(i.clone());
        }
        self.push(i);
    }

    /// A pointer operand as a location.
    fn ptr_loc(&mut self, v: Value) -> Result<PtrLoc, BackendError> {
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

    /// The memory address `ptr` designates.
    fn addr(&mut self, ptr: Value) -> Result<Addr, BackendError> {
        let l = self.ptr_loc(ptr)?;
        Ok(match l.base {
            PBase::Slot(s) => Addr {
                base: Base::Slot(s),
                off: l.off,
            },
            PBase::Reg(r) if fits_imm12(l.off) => Addr {
                base: Base::Reg(r),
                off: l.off,
            },
            PBase::Global(_) if fits_imm12(l.off) => {
                let r = self.materialize(PtrLoc { off: 0, ..l });
                Addr {
                    base: Base::Reg(r),
                    off: l.off,
                }
            }
            // A far offset from a register: `r + hi` (computed once per block and
            // shared by the accesses near it) plus a 12-bit `lo`, as `%hi`/`%lo`
            // split addresses.
            PBase::Reg(_) => {
                let hi = (l.off + 0x800) & !0xfff;
                let r = self.materialize(PtrLoc { off: hi, ..l });
                Addr {
                    base: Base::Reg(r),
                    off: l.off - hi,
                }
            }
            _ => Addr {
                base: Base::Reg(self.materialize(l)),
                off: 0,
            },
        })
    }

    fn result(&self, i: Inst) -> Option<Value> {
        self.f.inst_result(i)
    }

    fn def_reg(&mut self, v: Value) -> Reg {
        let r = self.new_vreg(class_of_type(self.f.value_type(v)));
        self.vreg[v.index()] = Some(r);
        r
    }

    // ---- function entry -----------------------------------------------------

    fn entry_params(&mut self) -> Result<(), BackendError> {
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
                    let slot = self.mf.new_slot(SlotKind::Incoming(k));
                    self.push_remat(MInst::Load {
                        op: mem_op(ty)?,
                        rd: r,
                        addr: Addr {
                            base: Base::Slot(slot),
                            off: 0,
                        },
                    });
                }
            }
        }
        Ok(())
    }

    // ---- instructions -------------------------------------------------------

    fn inst(&mut self, i: Inst) -> Result<(), BackendError> {
        let f = self.f;
        let kind = f.kind(i);
        let res = self.result(i);
        let dead = match kind {
            InstKind::Store { .. } | InstKind::Call { .. } => false,
            k if k.is_terminator() => false,
            _ => res.is_none_or(|r| !f.has_users(r)),
        };
        if dead {
            return Ok(());
        }
        match kind {
            InstKind::Binary { op, args } => {
                let rd = self.def_reg(res.expect("binary has a result"));
                if op.is_float() {
                    let a = self.reg(args[0])?;
                    let b = self.reg(args[1])?;
                    let fop = match op {
                        BinOp::FAdd => FAluOp::Add,
                        BinOp::FSub => FAluOp::Sub,
                        BinOp::FMul => FAluOp::Mul,
                        _ => FAluOp::Div,
                    };
                    self.push(MInst::FAlu {
                        op: fop,
                        rd,
                        rs1: a,
                        rs2: b,
                    });
                } else if let Some(k) = self.sdiv64_shift(*op, args[1]) {
                    // 64-bit division by 2^k (a sign-extended constant): bias a
                    // negative dividend by 2^k - 1, then shift (rounds toward zero).
                    let a = self.reg(args[0])?;
                    let sign = self.tmp();
                    self.alui(AluImmOp::Srai, sign, a, 63);
                    let bias = self.tmp();
                    self.alui(AluImmOp::Srli, bias, sign, 64 - k);
                    let sum = self.tmp();
                    self.alu(AluOp::Add, sum, a, bias);
                    self.alui(AluImmOp::Srai, rd, sum, k);
                } else if op.is_i64() {
                    let a = self.reg(args[0])?;
                    let b = self.reg(args[1])?;
                    let aop = match op {
                        BinOp::Add64 => AluOp::Add,
                        BinOp::Sub64 => AluOp::Sub,
                        BinOp::Mul64 => AluOp::Mul,
                        BinOp::SDiv64 => AluOp::Div,
                        _ => AluOp::Rem,
                    };
                    self.alu(aop, rd, a, b);
                } else {
                    self.int_binary(*op, rd, args[0], args[1])?;
                }
            }
            InstKind::Cmp { op, args } => {
                if self.fusable(i) {
                    self.deferred[i.index()] = true;
                } else {
                    let rd = self.def_reg(res.expect("cmp has a result"));
                    self.cmp(*op, rd, args[0], args[1])?;
                }
            }
            InstKind::Unary { op, arg } => {
                let rd = self.def_reg(res.expect("unary has a result"));
                let a = self.reg(*arg)?;
                match op {
                    UnOp::FNeg => self.push(MInst::FAlu {
                        op: FAluOp::Sgnjn,
                        rd,
                        rs1: a,
                        rs2: a,
                    }),
                    UnOp::SIToFP => self.push(MInst::Cvt {
                        op: CvtOp::FcvtSW,
                        rd,
                        rs: a,
                    }),
                    UnOp::FPToSI => self.push(MInst::Cvt {
                        op: CvtOp::FcvtWS,
                        rd,
                        rs: a,
                    }),
                    // The i32 is already sign-extended to 64 bits.
                    UnOp::SExt => self.push(MInst::Mv { rd, rs: a }),
                    UnOp::Trunc => self.alui(AluImmOp::Addiw, rd, a, 0),
                    // `fmv.x.w` sign-extends bit 31, as the i32 invariant wants.
                    UnOp::FBits => self.push(MInst::Cvt {
                        op: CvtOp::FmvXW,
                        rd,
                        rs: a,
                    }),
                }
            }
            InstKind::Alloc { elem, len } => {
                let size = (elem.size() as u64 * *len as u64).max(1);
                let align = if size >= 16 { 16 } else { 8 };
                let slot = self.mf.new_slot(SlotKind::Local { size, align });
                self.loc[res.expect("alloc has a result").index()] = Some(PtrLoc {
                    base: PBase::Slot(slot),
                    off: 0,
                });
            }
            InstKind::Load { ty, ptr } => {
                let op = mem_op(*ty)?;
                let addr = self.addr(*ptr)?;
                let rd = self.def_reg(res.expect("load has a result"));
                self.push(MInst::Load { op, rd, addr });
            }
            InstKind::Store { value, ptr } => {
                let op = mem_op(f.value_type(*value))?;
                let src = self.reg(*value)?;
                let addr = self.addr(*ptr)?;
                self.push(MInst::Store { op, src, addr });
            }
            InstKind::Gep {
                base,
                index,
                stride,
            } => self.gep(res.expect("gep has a result"), *base, *index, *stride)?,
            InstKind::Call { callee, args } => self.call(res, *callee, args)?,
            InstKind::Jump { dest } => {
                self.edge_copies(dest)?;
                let t = self.target(dest.block)?;
                self.push(MInst::Jump { target: t });
            }
            InstKind::Br {
                cond,
                then_dest,
                else_dest,
            } => self.br(*cond, then_dest, else_dest)?,
            InstKind::Ret { value } => match value {
                None => self.push(MInst::Ret { value: None }),
                Some(v) => {
                    let v = *v;
                    let r = if f.value_type(v) == Type::F32 {
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
            },
        }
        Ok(())
    }

    fn target(&self, b: Block) -> Result<MBlock, BackendError> {
        self.mblock[b.index()]
            .ok_or_else(|| BackendError::Untranslatable(format!("branch to unreachable block {b}")))
    }

    /// Whether the comparison `i` can be folded into the branch ending its block.
    fn fusable(&self, i: Inst) -> bool {
        let f = self.f;
        let Some(r) = f.inst_result(i) else {
            return false;
        };
        let [user] = f.users(r) else {
            return false;
        };
        let Some(b) = f.layout.inst_block(i) else {
            return false;
        };
        f.layout.inst_block(*user) == Some(b)
            && matches!(f.kind(*user), InstKind::Br { cond, .. } if *cond == r)
    }

    fn alu(&mut self, op: AluOp, rd: Reg, rs1: Reg, rs2: Reg) {
        self.push(MInst::Alu { op, rd, rs1, rs2 });
    }

    fn alui(&mut self, op: AluImmOp, rd: Reg, rs1: Reg, imm: i32) {
        self.push(MInst::AluImm { op, rd, rs1, imm });
    }

    fn tmp(&mut self) -> Reg {
        self.new_vreg(RegClass::Int)
    }

    fn int_binary(&mut self, op: BinOp, rd: Reg, a: Value, b: Value) -> Result<(), BackendError> {
        let ca = self.iconst(a);
        let cb = self.iconst(b);
        let imm = |c: Option<i32>| c.filter(|&c| fits_imm12(c as i64));
        match op {
            BinOp::Add => {
                if let Some(c) = imm(cb) {
                    let ra = self.reg(a)?;
                    self.alui(AluImmOp::Addiw, rd, ra, c);
                } else if let Some(c) = imm(ca) {
                    let rb = self.reg(b)?;
                    self.alui(AluImmOp::Addiw, rd, rb, c);
                } else {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(AluOp::Addw, rd, ra, rb);
                }
            }
            BinOp::Sub => {
                if let Some(c) = cb.filter(|&c| fits_imm12(-(c as i64))) {
                    let ra = self.reg(a)?;
                    self.alui(AluImmOp::Addiw, rd, ra, -c);
                } else {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(AluOp::Subw, rd, ra, rb);
                }
            }
            BinOp::Mul => {
                if let Some(c) = cb {
                    self.mul_const(rd, a, c)?;
                } else if let Some(c) = ca {
                    self.mul_const(rd, b, c)?;
                } else {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(AluOp::Mulw, rd, ra, rb);
                }
            }
            BinOp::SDiv => match cb {
                Some(c) if c != 0 && c != i32::MIN => self.div_const(rd, a, c)?,
                _ => {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(AluOp::Divw, rd, ra, rb);
                }
            },
            BinOp::SRem => match cb {
                Some(c) if c != 0 && c != i32::MIN => self.rem_const(rd, a, c)?,
                _ => {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(AluOp::Remw, rd, ra, rb);
                }
            },
            BinOp::And | BinOp::Or | BinOp::Xor => {
                let (iop, rop) = match op {
                    BinOp::And => (AluImmOp::Andi, AluOp::And),
                    BinOp::Or => (AluImmOp::Ori, AluOp::Or),
                    _ => (AluImmOp::Xori, AluOp::Xor),
                };
                if let Some(c) = imm(cb) {
                    let ra = self.reg(a)?;
                    self.alui(iop, rd, ra, c);
                } else if let Some(c) = imm(ca) {
                    let rb = self.reg(b)?;
                    self.alui(iop, rd, rb, c);
                } else {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(rop, rd, ra, rb);
                }
            }
            BinOp::Shl | BinOp::LShr | BinOp::AShr => {
                let (iop, rop) = match op {
                    BinOp::Shl => (AluImmOp::Slliw, AluOp::Sllw),
                    BinOp::LShr => (AluImmOp::Srliw, AluOp::Srlw),
                    _ => (AluImmOp::Sraiw, AluOp::Sraw),
                };
                if let Some(c) = cb {
                    let ra = self.reg(a)?;
                    self.alui(iop, rd, ra, c & 31);
                } else {
                    let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                    self.alu(rop, rd, ra, rb);
                }
            }
            _ => unreachable!("float or i64 op in int_binary"),
        }
        Ok(())
    }

    /// `rd = x * c` (wrapping i32).
    fn mul_const(&mut self, rd: Reg, x: Value, c: i32) -> Result<(), BackendError> {
        let rx = self.reg(x)?;
        let u = c as u32;
        if c == 0 {
            self.push(MInst::Mv { rd, rs: ZERO });
        } else if c == 1 {
            // Keep the i32 invariant explicit: x is already sign-extended.
            self.push(MInst::Mv { rd, rs: rx });
        } else if c == -1 {
            self.alu(AluOp::Subw, rd, ZERO, rx);
        } else if u.is_power_of_two() {
            self.alui(AluImmOp::Slliw, rd, rx, u.trailing_zeros() as i32);
        } else if c > 0 && (c.unsigned_abs() as u64 - 1).is_power_of_two() {
            let t = self.tmp();
            self.alui(AluImmOp::Slliw, t, rx, (u - 1).trailing_zeros() as i32);
            self.alu(AluOp::Addw, rd, t, rx);
        } else if c > 0 && (c as u64 + 1).is_power_of_two() {
            let t = self.tmp();
            self.alui(AluImmOp::Slliw, t, rx, (u + 1).trailing_zeros() as i32);
            self.alu(AluOp::Subw, rd, t, rx);
        } else if c < 0 && c.unsigned_abs().is_power_of_two() {
            let t = self.tmp();
            self.alui(
                AluImmOp::Slliw,
                t,
                rx,
                c.unsigned_abs().trailing_zeros() as i32,
            );
            self.alu(AluOp::Subw, rd, ZERO, t);
        } else {
            let rc = self.cached(CacheKey::Int(c));
            self.alu(AluOp::Mulw, rd, rx, rc);
        }
        Ok(())
    }

    /// `q = x / c` truncating, for `c` not 0 or `i32::MIN`.
    /// `k` when `op` is `sdiv64` by `sext` of the constant `2^k`, `1 <= k <= 30`.
    fn sdiv64_shift(&self, op: BinOp, divisor: Value) -> Option<i32> {
        if op != BinOp::SDiv64 {
            return None;
        }
        let def = self.f.def_inst(divisor)?;
        let InstKind::Unary {
            op: UnOp::SExt,
            arg,
        } = *self.f.kind(def)
        else {
            return None;
        };
        let c = self.f.as_iconst(arg)?;
        (c > 1 && (c as u32).is_power_of_two()).then(|| c.trailing_zeros() as i32)
    }

    fn div_const(&mut self, rd: Reg, x: Value, c: i32) -> Result<(), BackendError> {
        let rx = self.reg(x)?;
        let ad = c.unsigned_abs();
        if c == 1 {
            self.push(MInst::Mv { rd, rs: rx });
            return Ok(());
        }
        if c == -1 {
            self.alu(AluOp::Subw, rd, ZERO, rx);
            return Ok(());
        }
        if ad.is_power_of_two() {
            let k = ad.trailing_zeros() as i32;
            // Bias negative dividends by 2^k - 1 so the shift rounds toward zero.
            let bias = self.tmp();
            if k == 1 {
                self.alui(AluImmOp::Srliw, bias, rx, 31);
            } else {
                let sign = self.tmp();
                self.alui(AluImmOp::Sraiw, sign, rx, 31);
                self.alui(AluImmOp::Srliw, bias, sign, 32 - k);
            }
            let sum = self.tmp();
            self.alu(AluOp::Addw, sum, rx, bias);
            if c > 0 {
                self.alui(AluImmOp::Sraiw, rd, sum, k);
            } else {
                let q = self.tmp();
                self.alui(AluImmOp::Sraiw, q, sum, k);
                self.alu(AluOp::Subw, rd, ZERO, q);
            }
            return Ok(());
        }
        let (mg, sh) = magic_signed(c);
        let rm = self.cached(CacheKey::Int(mg));
        // mulhs(mg, x): both are sign-extended, so the 64-bit product is exact.
        let prod = self.tmp();
        self.alu(AluOp::Mul, prod, rx, rm);
        let mut q = self.tmp();
        self.alui(AluImmOp::Srai, q, prod, 32);
        if c > 0 && mg < 0 {
            let t = self.tmp();
            self.alu(AluOp::Addw, t, q, rx);
            q = t;
        } else if c < 0 && mg > 0 {
            let t = self.tmp();
            self.alu(AluOp::Subw, t, q, rx);
            q = t;
        }
        if sh > 0 {
            let t = self.tmp();
            self.alui(AluImmOp::Sraiw, t, q, sh as i32);
            q = t;
        }
        // Add one when the quotient so far is negative.
        let sign = self.tmp();
        self.alui(AluImmOp::Srliw, sign, q, 31);
        self.alu(AluOp::Addw, rd, q, sign);
        Ok(())
    }

    /// `r = x % c` with the sign of `x`, for `c` not 0 or `i32::MIN`.
    fn rem_const(&mut self, rd: Reg, x: Value, c: i32) -> Result<(), BackendError> {
        let ad = c.unsigned_abs();
        if ad == 1 {
            self.push(MInst::Mv { rd, rs: ZERO });
            return Ok(());
        }
        let rx = self.reg(x)?;
        if ad.is_power_of_two() {
            let k = ad.trailing_zeros() as i32;
            let bias = self.tmp();
            if k == 1 {
                self.alui(AluImmOp::Srliw, bias, rx, 31);
            } else {
                let sign = self.tmp();
                self.alui(AluImmOp::Sraiw, sign, rx, 31);
                self.alui(AluImmOp::Srliw, bias, sign, 32 - k);
            }
            let sum = self.tmp();
            self.alu(AluOp::Addw, sum, rx, bias);
            let mask = -(ad as i64);
            let rounded = self.tmp();
            if fits_imm12(mask) {
                self.alui(AluImmOp::Andi, rounded, sum, mask as i32);
            } else {
                let m = self.cached(CacheKey::Int(mask as i32));
                self.alu(AluOp::And, rounded, sum, m);
            }
            self.alu(AluOp::Subw, rd, rx, rounded);
            return Ok(());
        }
        let q = self.tmp();
        self.div_const(q, x, c)?;
        let rc = self.cached(CacheKey::Int(c));
        let p = self.tmp();
        self.alu(AluOp::Mulw, p, q, rc);
        self.alu(AluOp::Subw, rd, rx, p);
        Ok(())
    }

    /// `rd = (a op b) ? 1 : 0`.
    fn cmp(&mut self, op: CmpOp, rd: Reg, a: Value, b: Value) -> Result<(), BackendError> {
        let ca = self.iconst(a);
        let cb = self.iconst(b);
        let imm = |c: Option<i32>| c.filter(|&c| fits_imm12(c as i64));
        match op {
            CmpOp::Slt | CmpOp::Sgt => {
                let (x, y, cy) = if op == CmpOp::Slt {
                    (a, b, cb)
                } else {
                    (b, a, ca)
                };
                if let Some(c) = imm(cy) {
                    let rx = self.reg(x)?;
                    self.alui(AluImmOp::Slti, rd, rx, c);
                } else {
                    let (rx, ry) = (self.reg(x)?, self.reg(y)?);
                    self.alu(AluOp::Slt, rd, rx, ry);
                }
            }
            CmpOp::Sle | CmpOp::Sge => {
                // x <= y  ==  !(y < x)
                let (x, y, cy) = if op == CmpOp::Sle {
                    (a, b, cb)
                } else {
                    (b, a, ca)
                };
                if let Some(c) = cy.filter(|&c| fits_imm12(c as i64 + 1)) {
                    let rx = self.reg(x)?;
                    self.alui(AluImmOp::Slti, rd, rx, c + 1);
                } else {
                    let (rx, ry) = (self.reg(x)?, self.reg(y)?);
                    let t = self.tmp();
                    self.alu(AluOp::Slt, t, ry, rx);
                    self.alui(AluImmOp::Xori, rd, t, 1);
                }
            }
            CmpOp::Eq | CmpOp::Ne => {
                let (x, y, cy) = if ca.is_some() && cb.is_none() {
                    (b, a, ca)
                } else {
                    (a, b, cb)
                };
                let rx = self.reg(x)?;
                let diff = match cy {
                    Some(0) => rx,
                    Some(c) if fits_imm12(c as i64) => {
                        let t = self.tmp();
                        self.alui(AluImmOp::Xori, t, rx, c);
                        t
                    }
                    _ => {
                        let ry = self.reg(y)?;
                        let t = self.tmp();
                        self.alu(AluOp::Xor, t, rx, ry);
                        t
                    }
                };
                if op == CmpOp::Eq {
                    self.alui(AluImmOp::Sltiu, rd, diff, 1);
                } else {
                    self.alu(AluOp::Sltu, rd, ZERO, diff);
                }
            }
            _ => {
                let (fop, swap) = match op {
                    CmpOp::FEq | CmpOp::FNe => (FCmpOp::Eq, false),
                    CmpOp::FLt => (FCmpOp::Lt, false),
                    CmpOp::FLe => (FCmpOp::Le, false),
                    CmpOp::FGt => (FCmpOp::Lt, true),
                    _ => (FCmpOp::Le, true),
                };
                let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                let (r1, r2) = if swap { (rb, ra) } else { (ra, rb) };
                if op == CmpOp::FNe {
                    let t = self.tmp();
                    self.push(MInst::FCmp {
                        op: fop,
                        rd: t,
                        rs1: r1,
                        rs2: r2,
                    });
                    self.alui(AluImmOp::Xori, rd, t, 1);
                } else {
                    self.push(MInst::FCmp {
                        op: fop,
                        rd,
                        rs1: r1,
                        rs2: r2,
                    });
                }
            }
        }
        Ok(())
    }

    /// The branch condition under which `cond` is true.
    fn branch_cond(&mut self, cond: Value) -> Result<(Cond, Reg, Reg), BackendError> {
        let c = self.resolve(cond);
        if let Some(i) = self.f.def_inst(c) {
            if self.deferred[i.index()] {
                if let InstKind::Cmp { op, args } = self.f.kind(i) {
                    let (a, b) = (args[0], args[1]);
                    let int = |s: &mut Self, cc, x, y| -> Result<(Cond, Reg, Reg), BackendError> {
                        Ok((cc, s.reg(x)?, s.reg(y)?))
                    };
                    return match op {
                        CmpOp::Eq => int(self, Cond::Eq, a, b),
                        CmpOp::Ne => int(self, Cond::Ne, a, b),
                        CmpOp::Slt => int(self, Cond::Lt, a, b),
                        CmpOp::Sge => int(self, Cond::Ge, a, b),
                        CmpOp::Sgt => int(self, Cond::Lt, b, a),
                        CmpOp::Sle => int(self, Cond::Ge, b, a),
                        _ => {
                            let (fop, swap, cc) = match op {
                                CmpOp::FEq => (FCmpOp::Eq, false, Cond::Ne),
                                CmpOp::FNe => (FCmpOp::Eq, false, Cond::Eq),
                                CmpOp::FLt => (FCmpOp::Lt, false, Cond::Ne),
                                CmpOp::FLe => (FCmpOp::Le, false, Cond::Ne),
                                CmpOp::FGt => (FCmpOp::Lt, true, Cond::Ne),
                                _ => (FCmpOp::Le, true, Cond::Ne),
                            };
                            let (ra, rb) = (self.reg(a)?, self.reg(b)?);
                            let (r1, r2) = if swap { (rb, ra) } else { (ra, rb) };
                            let t = self.tmp();
                            self.push(MInst::FCmp {
                                op: fop,
                                rd: t,
                                rs1: r1,
                                rs2: r2,
                            });
                            Ok((cc, t, ZERO))
                        }
                    };
                }
            }
        }
        let r = self.reg(cond)?;
        Ok((Cond::Ne, r, ZERO))
    }

    fn gep(
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

    fn call(
        &mut self,
        res: Option<Value>,
        callee: FuncId,
        args: &[Value],
    ) -> Result<(), BackendError> {
        let f = self.f;
        let sig = &self.m.funcs[callee].sig;
        let kinds: Vec<ArgKind> = args
            .iter()
            .enumerate()
            .map(|(i, &a)| match f.value_type(a) {
                Type::F32 if sig.variadic && i >= sig.params.len() => ArgKind::VariadicDouble,
                Type::F32 => ArgKind::Float,
                _ => ArgKind::Int,
            })
            .collect();
        let (locs, nstack) = abi::classify_args(&kinds);
        self.mf.outgoing_size = self.mf.outgoing_size.max(nstack as u64 * 8);
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
                    let d = self.new_vreg(RegClass::Float);
                    self.push(MInst::Cvt {
                        op: CvtOp::FcvtDS,
                        rd: d,
                        rs: r,
                    });
                    match loc {
                        ArgLoc::Stack(k) => {
                            let addr = self.out_arg_addr(k);
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
                    let addr = self.out_arg_addr(k);
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
        let name = self.func_names[callee.index()].clone();
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

    /// Address of outgoing stack argument `k`.
    fn out_arg_addr(&mut self, k: u32) -> Addr {
        let off = k as i64 * 8;
        if fits_imm12(off) {
            Addr {
                base: Base::Reg(SP),
                off,
            }
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
            Addr {
                base: Base::Reg(a),
                off: off - hi,
            }
        }
    }

    /// Whether passing `dest`'s arguments needs copies.
    fn needs_copies(&self, dest: &BlockCall) -> bool {
        self.f.block_params(dest.block).iter().any(|&p| {
            self.alias[p.index()].is_none() && self.vreg[p.index()].is_some() && self.f.has_users(p)
        })
    }

    /// Emits the parallel copy from `dest`'s arguments to its block's parameters.
    fn edge_copies(&mut self, dest: &BlockCall) -> Result<(), BackendError> {
        if !self.needs_copies(dest) {
            return Ok(());
        }
        let params = self.f.block_params(dest.block).to_vec();
        let mut reg_copies = Vec::new();
        let mut late: Vec<(Reg, Opnd)> = Vec::new();
        for (&p, &a) in params.iter().zip(&dest.args) {
            if !self.f.has_users(p) {
                continue;
            }
            let Some(dst) = self.vreg[p.index()] else {
                continue;
            };
            match self.operand(a)? {
                Opnd::Reg(r) => reg_copies.push((dst, r)),
                Opnd::Loc(l) if matches!(l.base, PBase::Reg(_)) => {
                    let r = self.materialize(l);
                    reg_copies.push((dst, r));
                }
                o => late.push((dst, o)),
            }
        }
        let moves = {
            let mf = &mut self.mf;
            sequentialize(&reg_copies, |like| {
                let c = mf.class_of(like);
                mf.new_vreg(c)
            })
        };
        for (d, s) in moves {
            self.push(MInst::Mv { rd: d, rs: s });
        }
        for (dst, o) in late {
            match o {
                Opnd::Int(c) => self.push(MInst::Li {
                    rd: dst,
                    imm: c as i64,
                }),
                Opnd::FBits(0) => self.push(MInst::Cvt {
                    op: CvtOp::FmvWX,
                    rd: dst,
                    rs: ZERO,
                }),
                Opnd::FBits(b) => {
                    let t = self.cached(CacheKey::Int(b as i32));
                    self.push(MInst::Cvt {
                        op: CvtOp::FmvWX,
                        rd: dst,
                        rs: t,
                    });
                }
                Opnd::Loc(PtrLoc {
                    base: PBase::Slot(slot),
                    off,
                }) => self.push(MInst::FrameAddr { rd: dst, slot, off }),
                Opnd::Loc(PtrLoc {
                    base: PBase::Global(g),
                    off,
                }) => self.push(MInst::La {
                    rd: dst,
                    global: g,
                    off,
                }),
                Opnd::Loc(_) | Opnd::Reg(_) => unreachable!("register copies handled above"),
            }
        }
        Ok(())
    }

    /// The machine block a `br` arm jumps to: the target itself, or a new edge block
    /// holding the arm's copies.
    fn arm(&mut self, dest: &BlockCall) -> Result<MBlock, BackendError> {
        let target = self.target(dest.block)?;
        if !self.needs_copies(dest) {
            return Ok(target);
        }
        // Addresses passed as arguments are computed here, before the branch, so the
        // edge only moves registers: when the allocator gives an argument its
        // parameter's register the edge block ends up empty and the branch goes
        // straight to the target (a pointer advanced on a loop's back edge costs one
        // `addi` in the latch rather than an edge block with a jump).
        for &a in &dest.args {
            if let Opnd::Loc(l) = self.operand(a)? {
                if matches!(l.base, PBase::Reg(_)) {
                    self.materialize(l);
                }
            }
        }
        let edge = self.mf.new_block();
        let saved_block = self.cur;
        // Everything cached so far was computed before the branch: the edge, whose only
        // predecessor is this block, may use it.
        let saved_cache = self.cache.clone();
        self.split_after[saved_block.index()].push(edge);
        self.split_after.push(Vec::new());
        self.switch_to(edge);
        self.cache = saved_cache.clone();
        self.edge_copies(dest)?;
        self.push(MInst::Jump { target });
        self.cur = saved_block;
        self.cache = saved_cache;
        Ok(edge)
    }

    fn br(
        &mut self,
        cond: Value,
        then_dest: &BlockCall,
        else_dest: &BlockCall,
    ) -> Result<(), BackendError> {
        if let Some(c) = self.iconst(cond) {
            let d = if c != 0 { then_dest } else { else_dest };
            self.edge_copies(d)?;
            let t = self.target(d.block)?;
            self.push(MInst::Jump { target: t });
            return Ok(());
        }
        if then_dest == else_dest {
            self.edge_copies(then_dest)?;
            let t = self.target(then_dest.block)?;
            self.push(MInst::Jump { target: t });
            return Ok(());
        }
        let (cc, r1, r2) = self.branch_cond(cond)?;
        let else_mb = self.arm(else_dest)?;
        let then_mb = self.arm(then_dest)?;
        self.push(MInst::Branch {
            cond: cc,
            rs1: r1,
            rs2: r2,
            target: then_mb,
        });
        self.push(MInst::Jump { target: else_mb });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::magic_signed;

    /// Evaluates the selected division sequence on the host.
    fn div_by_magic(x: i32, d: i32) -> i32 {
        let (mg, sh) = magic_signed(d);
        let prod = (x as i64) * (mg as i64);
        let mut q = (prod >> 32) as i32;
        if d > 0 && mg < 0 {
            q = q.wrapping_add(x);
        } else if d < 0 && mg > 0 {
            q = q.wrapping_sub(x);
        }
        q >>= sh;
        q.wrapping_add(((q as u32) >> 31) as i32)
    }

    #[test]
    fn magic_division_matches_truncating_division() {
        let divisors = [
            3,
            5,
            6,
            7,
            9,
            10,
            11,
            12,
            13,
            25,
            100,
            641,
            1000,
            10007,
            998244353,
            i32::MAX,
            -3,
            -7,
            -10,
            -1000,
            i32::MIN + 1,
        ];
        let xs = [
            0,
            1,
            -1,
            2,
            -2,
            7,
            -7,
            100,
            -100,
            12345,
            -12345,
            i32::MAX,
            i32::MIN,
            i32::MIN + 1,
            1 << 30,
            -(1 << 30),
            999_999_999,
            -999_999_999,
        ];
        for &d in &divisors {
            for &x in &xs {
                assert_eq!(div_by_magic(x, d), x.wrapping_div(d), "{x} / {d}");
            }
            for x in (-100_000..100_000).step_by(37) {
                assert_eq!(div_by_magic(x, d), x / d, "{x} / {d}");
            }
        }
    }
}
