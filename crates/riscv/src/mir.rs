//! Machine IR: RV64GC instructions over physical and virtual registers, grouped in
//! blocks that end in explicit branches (a conditional `Branch` followed by a `Jump`,
//! or a lone `Jump`/`Ret`/`TailCall`).
//!
//! Every instruction reads all its uses before it writes its defs, so the register
//! allocator may give a def the register of a use that dies at the same instruction.
//! Stack memory is addressed through frame [`Slot`]s until the frame is laid out
//! (the "frame index" idea of LLVM's MachineFunction), since offsets from `sp` are
//! only known once spill slots and callee-saved registers are counted.

use cranelift_entity::PrimaryMap;
use std::fmt;

/// The two register files.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum RegClass {
    Int,
    Float,
}

/// A register: `x0..x31` are 0..32, `f0..f31` are 32..64, virtual registers follow.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Reg(pub u32);

/// Number of physical registers (both files).
pub const NUM_PREGS: u32 = 64;

impl Reg {
    /// Integer register `xN`.
    pub const fn x(n: u32) -> Reg {
        Reg(n)
    }
    /// Float register `fN`.
    pub const fn f(n: u32) -> Reg {
        Reg(32 + n)
    }
    /// Virtual register number `n`.
    pub const fn virt(n: u32) -> Reg {
        Reg(NUM_PREGS + n)
    }
    pub fn is_virtual(self) -> bool {
        self.0 >= NUM_PREGS
    }
    pub fn is_phys(self) -> bool {
        self.0 < NUM_PREGS
    }
    /// Index of a virtual register.
    pub fn vindex(self) -> usize {
        (self.0 - NUM_PREGS) as usize
    }
    /// Class of a physical register.
    pub fn phys_class(self) -> RegClass {
        if self.0 < 32 {
            RegClass::Int
        } else {
            RegClass::Float
        }
    }
    /// ABI name of a physical register.
    pub fn abi_name(self) -> &'static str {
        const X: [&str; 32] = [
            "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3",
            "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11",
            "t3", "t4", "t5", "t6",
        ];
        const F: [&str; 32] = [
            "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1", "fa0", "fa1",
            "fa2", "fa3", "fa4", "fa5", "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7",
            "fs8", "fs9", "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
        ];
        match self.0 {
            n @ 0..32 => X[n as usize],
            n @ 32..64 => F[(n - 32) as usize],
            _ => "<virtual>",
        }
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_virtual() {
            write!(f, "%v{}", self.vindex())
        } else {
            f.write_str(self.abi_name())
        }
    }
}

pub const ZERO: Reg = Reg::x(0);
pub const RA: Reg = Reg::x(1);
pub const SP: Reg = Reg::x(2);
pub const T0: Reg = Reg::x(5);
/// Scratch registers reserved for spill code and large frame offsets; never allocated
/// and never live across instructions.
pub const T5: Reg = Reg::x(30);
pub const T6: Reg = Reg::x(31);
pub const FT10: Reg = Reg::f(30);
pub const FT11: Reg = Reg::f(31);
pub const A0: Reg = Reg::x(10);
pub const FA0: Reg = Reg::f(10);

/// A block of a machine function: an entity of the function's block arena
/// ([`MFunction::blocks`]), which also numbers the nodes of the machine CFG for
/// the IR's graph analyses.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MBlock(pub u32);
cranelift_entity::entity_impl!(MBlock, "bb");

impl MBlock {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A stack object of the frame, placed after register allocation: an entity of
/// the function's slot arena ([`MFunction::slots`]).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slot(pub u32);
cranelift_entity::entity_impl!(Slot, "slot");

impl Slot {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a frame slot holds.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum SlotKind {
    /// Local memory (an IR `alloc`).
    Local { size: u64, align: u64 },
    /// A spilled virtual register (8 bytes).
    Spill,
    /// Incoming stack argument number `k`, in the caller's frame at `sp + frame + 8k`.
    Incoming(u32),
}

/// Integer register-register operations.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum AluOp {
    Add,
    Sub,
    Addw,
    Subw,
    Mul,
    Mulw,
    Mulh,
    /// High 64 bits of the unsigned 128-bit product.
    Mulhu,
    Div,
    /// Unsigned 64-bit division.
    Divu,
    Divw,
    Rem,
    Remw,
    Sll,
    Srl,
    Sra,
    Sllw,
    Srlw,
    Sraw,
    And,
    Or,
    Xor,
    Slt,
    Sltu,
}

impl AluOp {
    pub fn mnemonic(self) -> &'static str {
        match self {
            AluOp::Add => "add",
            AluOp::Sub => "sub",
            AluOp::Addw => "addw",
            AluOp::Subw => "subw",
            AluOp::Mul => "mul",
            AluOp::Mulw => "mulw",
            AluOp::Mulh => "mulh",
            AluOp::Mulhu => "mulhu",
            AluOp::Div => "div",
            AluOp::Divu => "divu",
            AluOp::Divw => "divw",
            AluOp::Rem => "rem",
            AluOp::Remw => "remw",
            AluOp::Sll => "sll",
            AluOp::Srl => "srl",
            AluOp::Sra => "sra",
            AluOp::Sllw => "sllw",
            AluOp::Srlw => "srlw",
            AluOp::Sraw => "sraw",
            AluOp::And => "and",
            AluOp::Or => "or",
            AluOp::Xor => "xor",
            AluOp::Slt => "slt",
            AluOp::Sltu => "sltu",
        }
    }
}

/// Integer register-immediate operations (12-bit signed immediate, or a shift amount).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum AluImmOp {
    Addi,
    Addiw,
    Slli,
    Srli,
    Srai,
    Slliw,
    Srliw,
    Sraiw,
    Andi,
    Ori,
    Xori,
    Slti,
    Sltiu,
}

impl AluImmOp {
    pub fn mnemonic(self) -> &'static str {
        match self {
            AluImmOp::Addi => "addi",
            AluImmOp::Addiw => "addiw",
            AluImmOp::Slli => "slli",
            AluImmOp::Srli => "srli",
            AluImmOp::Srai => "srai",
            AluImmOp::Slliw => "slliw",
            AluImmOp::Srliw => "srliw",
            AluImmOp::Sraiw => "sraiw",
            AluImmOp::Andi => "andi",
            AluImmOp::Ori => "ori",
            AluImmOp::Xori => "xori",
            AluImmOp::Slti => "slti",
            AluImmOp::Sltiu => "sltiu",
        }
    }
}

/// Single-precision register-register operations.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FAluOp {
    Add,
    Sub,
    Mul,
    Div,
    /// `fsgnjn.s rd, a, a` is `fneg.s`.
    Sgnjn,
    /// `fsgnjx.s rd, a, a` is `fabs.s`.
    Sgnjx,
}

impl FAluOp {
    pub fn mnemonic(self) -> &'static str {
        match self {
            FAluOp::Add => "fadd.s",
            FAluOp::Sub => "fsub.s",
            FAluOp::Mul => "fmul.s",
            FAluOp::Div => "fdiv.s",
            FAluOp::Sgnjn => "fsgnjn.s",
            FAluOp::Sgnjx => "fsgnjx.s",
        }
    }
}

/// Float comparisons writing 0/1 to an integer register.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FCmpOp {
    Eq,
    Lt,
    Le,
}

impl FCmpOp {
    pub fn mnemonic(self) -> &'static str {
        match self {
            FCmpOp::Eq => "feq.s",
            FCmpOp::Lt => "flt.s",
            FCmpOp::Le => "fle.s",
        }
    }
}

/// Conversions and moves between (or within) the register files.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum CvtOp {
    /// int -> float: `fcvt.s.w` (round to nearest).
    FcvtSW,
    /// float -> int truncating: `fcvt.w.s rd, rs, rtz`.
    FcvtWS,
    /// int bits -> float: `fmv.w.x`.
    FmvWX,
    /// float bits -> int (sign-extended): `fmv.x.w`.
    FmvXW,
    /// float -> double in a float register: `fcvt.d.s`.
    FcvtDS,
    /// double bits -> int: `fmv.x.d`.
    FmvXD,
}

impl CvtOp {
    /// (destination class, source class)
    pub fn classes(self) -> (RegClass, RegClass) {
        match self {
            CvtOp::FcvtSW | CvtOp::FmvWX => (RegClass::Float, RegClass::Int),
            CvtOp::FcvtWS | CvtOp::FmvXW | CvtOp::FmvXD => (RegClass::Int, RegClass::Float),
            CvtOp::FcvtDS => (RegClass::Float, RegClass::Float),
        }
    }
}

/// Memory access widths and register files.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum MemOp {
    /// 32-bit integer (loads sign-extend).
    W,
    /// 64-bit integer.
    D,
    /// single float.
    FS,
    /// double float.
    FD,
}

impl MemOp {
    /// Bytes accessed.
    pub fn size(self) -> u32 {
        match self {
            MemOp::W | MemOp::FS => 4,
            MemOp::D | MemOp::FD => 8,
        }
    }
    pub fn load_mnemonic(self) -> &'static str {
        match self {
            MemOp::W => "lw",
            MemOp::D => "ld",
            MemOp::FS => "flw",
            MemOp::FD => "fld",
        }
    }
    pub fn store_mnemonic(self) -> &'static str {
        match self {
            MemOp::W => "sw",
            MemOp::D => "sd",
            MemOp::FS => "fsw",
            MemOp::FD => "fsd",
        }
    }
    /// Register file of the transferred value.
    pub fn class(self) -> RegClass {
        match self {
            MemOp::W | MemOp::D => RegClass::Int,
            MemOp::FS | MemOp::FD => RegClass::Float,
        }
    }
}

/// Base of a memory address.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Base {
    Reg(Reg),
    /// A frame slot; resolved to `sp + offset` after frame layout.
    Slot(Slot),
}

/// A memory address `base + off`, with the alias region of the access.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Addr {
    pub base: Base,
    pub off: i64,
    /// The alias region of the IR access this one was selected for
    /// (`ir::analysis::AliasRegions`): accesses of two different regions other
    /// than [`Addr::ANY_REGION`] never overlap. Printed as `!N` after the address.
    pub region: u32,
    /// Where the accessed bytes start, as an IR value plus a constant, when the
    /// instruction is in the block its IR access was selected into. Printed as
    /// `&N+C` after the region.
    pub sym: Option<SymAddr>,
}

/// The start of an access as a base plus a constant number of bytes
/// (`ir::analysis::PointerOffsets`: the base is an IR value plus integer values
/// times constants; `anchor` numbers the bases of a function). Two accesses of
/// one block with the same base see the same instance of its values (SSA), so
/// they touch disjoint bytes when their ranges from it do not meet (offsets
/// less than 2^31 apart: see that module on wrapping). Code copied into another
/// block must drop the fact (`None`): there it may see the next instance (a
/// loop header's code copied into the latch).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct SymAddr {
    pub anchor: u32,
    pub off: i64,
}

impl Addr {
    /// The region of accesses that may overlap anything: those the back end makes
    /// (spills, outgoing arguments) and those whose object is unknown.
    pub const ANY_REGION: u32 = 0;

    /// `base + off`, in [`Addr::ANY_REGION`].
    pub fn new(base: Base, off: i64) -> Addr {
        Addr {
            base,
            off,
            region: Addr::ANY_REGION,
            sym: None,
        }
    }
}

/// Integer branch conditions.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Cond {
    Eq,
    Ne,
    Lt,
    Ge,
    Ltu,
    Geu,
}

impl Cond {
    pub fn inverse(self) -> Cond {
        match self {
            Cond::Eq => Cond::Ne,
            Cond::Ne => Cond::Eq,
            Cond::Lt => Cond::Ge,
            Cond::Ge => Cond::Lt,
            Cond::Ltu => Cond::Geu,
            Cond::Geu => Cond::Ltu,
        }
    }
    pub fn mnemonic(self) -> &'static str {
        match self {
            Cond::Eq => "beq",
            Cond::Ne => "bne",
            Cond::Lt => "blt",
            Cond::Ge => "bge",
            Cond::Ltu => "bltu",
            Cond::Geu => "bgeu",
        }
    }
}

/// A machine instruction.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum MInst {
    Alu {
        op: AluOp,
        rd: Reg,
        rs1: Reg,
        rs2: Reg,
    },
    AluImm {
        op: AluImmOp,
        rd: Reg,
        rs1: Reg,
        imm: i32,
    },
    /// `li rd, imm`
    Li {
        rd: Reg,
        imm: i64,
    },
    /// `lla rd, sym+off` where `sym` is a global's index in the module.
    La {
        rd: Reg,
        global: u32,
        off: i64,
    },
    /// `rd = sp + offset(slot) + off`
    FrameAddr {
        rd: Reg,
        slot: Slot,
        off: i64,
    },
    /// Register copy within one file (`mv`, or `fmv.d`: all 64 bits of a float register).
    Mv {
        rd: Reg,
        rs: Reg,
    },
    FAlu {
        op: FAluOp,
        rd: Reg,
        rs1: Reg,
        rs2: Reg,
    },
    FCmp {
        op: FCmpOp,
        rd: Reg,
        rs1: Reg,
        rs2: Reg,
    },
    Cvt {
        op: CvtOp,
        rd: Reg,
        rs: Reg,
    },
    Load {
        op: MemOp,
        rd: Reg,
        addr: Addr,
    },
    Store {
        op: MemOp,
        src: Reg,
        addr: Addr,
    },
    /// A call: reads the argument registers `args`, clobbers every caller-saved
    /// register (results arrive in `a0`/`fa0`).
    Call {
        callee: String,
        args: Vec<Reg>,
    },
    /// A tail call (a terminator): the epilogue runs, then `tail callee`.
    TailCall {
        callee: String,
        args: Vec<Reg>,
    },
    /// Return, reading `a0`/`fa0` when the function returns a value.
    Ret {
        value: Option<Reg>,
    },
    /// Conditional branch to `target`; falls through to the next instruction.
    Branch {
        cond: Cond,
        rs1: Reg,
        rs2: Reg,
        target: MBlock,
    },
    Jump {
        target: MBlock,
    },
}

/// Caller-saved registers, clobbered by every call.
pub fn call_clobbers() -> impl Iterator<Item = Reg> {
    // ra, t0-t2, a0-a7, t3-t6; ft0-ft7, fa0-fa7, ft8-ft11.
    [
        1u32, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 28, 29, 30, 31,
    ]
    .into_iter()
    .map(Reg::x)
    .chain(
        [
            0u32, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 28, 29, 30, 31,
        ]
        .into_iter()
        .map(Reg::f),
    )
}

/// How an instruction accesses one of its register operands.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum OperandKind {
    /// Read before any def of the instruction is written.
    Use,
    /// Written after every use is read, so it may share a register with a use that
    /// dies at the instruction.
    Def,
    /// Written before the uses are read (an early clobber): it must not share a
    /// register with any use. No instruction has one today.
    EarlyDef,
}

/// A register operand as the register allocator sees it: the register (virtual, or
/// physical for a fixed-register constraint that allocation must keep), how it is
/// accessed, and the register file the instruction needs there.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Operand {
    pub reg: Reg,
    pub kind: OperandKind,
    /// The register file the instruction requires; `None` where it works in either
    /// (a copy, a call or return argument: the file of the register itself).
    pub class: Option<RegClass>,
}

impl Operand {
    /// Whether the operand names a physical register, which the allocator must leave
    /// in place.
    pub fn is_fixed(&self) -> bool {
        self.reg.is_phys()
    }
    pub fn is_use(&self) -> bool {
        self.kind == OperandKind::Use
    }
}

impl MInst {
    /// Calls `f` on every register read.
    pub fn for_each_use(&self, mut f: impl FnMut(Reg)) {
        match self {
            MInst::Alu { rs1, rs2, .. }
            | MInst::FAlu { rs1, rs2, .. }
            | MInst::FCmp { rs1, rs2, .. }
            | MInst::Branch { rs1, rs2, .. } => {
                f(*rs1);
                f(*rs2);
            }
            MInst::AluImm { rs1, .. } => f(*rs1),
            MInst::Mv { rs, .. } | MInst::Cvt { rs, .. } => f(*rs),
            MInst::Load { addr, .. } => {
                if let Base::Reg(r) = addr.base {
                    f(r)
                }
            }
            MInst::Store { src, addr, .. } => {
                f(*src);
                if let Base::Reg(r) = addr.base {
                    f(r)
                }
            }
            MInst::Call { args, .. } | MInst::TailCall { args, .. } => {
                args.iter().for_each(|&r| f(r))
            }
            MInst::Ret { value } => {
                if let Some(r) = value {
                    f(*r)
                }
            }
            MInst::Li { .. } | MInst::La { .. } | MInst::FrameAddr { .. } | MInst::Jump { .. } => {}
        }
    }

    /// Calls `f` on every register written (for calls: every caller-saved register).
    pub fn for_each_def(&self, mut f: impl FnMut(Reg)) {
        match self {
            MInst::Alu { rd, .. }
            | MInst::AluImm { rd, .. }
            | MInst::Li { rd, .. }
            | MInst::La { rd, .. }
            | MInst::FrameAddr { rd, .. }
            | MInst::Mv { rd, .. }
            | MInst::FAlu { rd, .. }
            | MInst::FCmp { rd, .. }
            | MInst::Cvt { rd, .. }
            | MInst::Load { rd, .. } => f(*rd),
            MInst::Call { .. } => call_clobbers().for_each(f),
            MInst::Store { .. }
            | MInst::TailCall { .. }
            | MInst::Ret { .. }
            | MInst::Branch { .. }
            | MInst::Jump { .. } => {}
        }
    }

    /// Calls `f` on every explicit register operand (`true` for defs). Call clobbers
    /// are implicit and not visited.
    pub fn map_regs(&mut self, mut f: impl FnMut(&mut Reg, bool)) {
        match self {
            MInst::Alu { rd, rs1, rs2, .. }
            | MInst::FAlu { rd, rs1, rs2, .. }
            | MInst::FCmp { rd, rs1, rs2, .. } => {
                f(rs1, false);
                f(rs2, false);
                f(rd, true);
            }
            MInst::AluImm { rd, rs1, .. } => {
                f(rs1, false);
                f(rd, true);
            }
            MInst::Mv { rd, rs } | MInst::Cvt { rd, rs, .. } => {
                f(rs, false);
                f(rd, true);
            }
            MInst::Li { rd, .. } | MInst::La { rd, .. } | MInst::FrameAddr { rd, .. } => {
                f(rd, true)
            }
            MInst::Load { rd, addr, .. } => {
                if let Base::Reg(r) = &mut addr.base {
                    f(r, false)
                }
                f(rd, true);
            }
            MInst::Store { src, addr, .. } => {
                f(src, false);
                if let Base::Reg(r) = &mut addr.base {
                    f(r, false)
                }
            }
            MInst::Branch { rs1, rs2, .. } => {
                f(rs1, false);
                f(rs2, false);
            }
            MInst::Call { args, .. } | MInst::TailCall { args, .. } => {
                args.iter_mut().for_each(|r| f(r, false))
            }
            MInst::Ret { value } => {
                if let Some(r) = value {
                    f(r, false)
                }
            }
            MInst::Jump { .. } => {}
        }
    }

    /// Calls `f` on every explicit register operand with its kind and register file,
    /// in the order of [`MInst::map_regs`] (so the operands of an instruction and of
    /// a copy with other registers pair up by position). Implicit clobbers are not
    /// operands: see [`MInst::clobbers`].
    pub fn for_each_operand(&self, mut f: impl FnMut(Operand)) {
        use OperandKind::{Def, Use};
        use RegClass::{Float, Int};
        let mut op =
            |reg: Reg, kind: OperandKind, class: Option<RegClass>| f(Operand { reg, kind, class });
        match self {
            MInst::Alu { rd, rs1, rs2, .. } => {
                op(*rs1, Use, Some(Int));
                op(*rs2, Use, Some(Int));
                op(*rd, Def, Some(Int));
            }
            MInst::FAlu { rd, rs1, rs2, .. } => {
                op(*rs1, Use, Some(Float));
                op(*rs2, Use, Some(Float));
                op(*rd, Def, Some(Float));
            }
            MInst::FCmp { rd, rs1, rs2, .. } => {
                op(*rs1, Use, Some(Float));
                op(*rs2, Use, Some(Float));
                op(*rd, Def, Some(Int));
            }
            MInst::AluImm { rd, rs1, .. } => {
                op(*rs1, Use, Some(Int));
                op(*rd, Def, Some(Int));
            }
            MInst::Mv { rd, rs } => {
                op(*rs, Use, None);
                op(*rd, Def, None);
            }
            MInst::Cvt { op: c, rd, rs } => {
                let (d, s) = c.classes();
                op(*rs, Use, Some(s));
                op(*rd, Def, Some(d));
            }
            MInst::Li { rd, .. } | MInst::La { rd, .. } | MInst::FrameAddr { rd, .. } => {
                op(*rd, Def, Some(Int))
            }
            MInst::Load { op: m, rd, addr } => {
                if let Base::Reg(r) = addr.base {
                    op(r, Use, Some(Int))
                }
                op(*rd, Def, Some(m.class()));
            }
            MInst::Store { op: m, src, addr } => {
                op(*src, Use, Some(m.class()));
                if let Base::Reg(r) = addr.base {
                    op(r, Use, Some(Int))
                }
            }
            MInst::Branch { rs1, rs2, .. } => {
                op(*rs1, Use, Some(Int));
                op(*rs2, Use, Some(Int));
            }
            MInst::Call { args, .. } | MInst::TailCall { args, .. } => {
                args.iter().for_each(|&r| op(r, Use, None))
            }
            MInst::Ret { value } => {
                if let Some(r) = value {
                    op(*r, Use, None)
                }
            }
            MInst::Jump { .. } => {}
        }
    }

    /// The explicit register operands (see [`MInst::for_each_operand`]).
    pub fn operands(&self) -> Vec<Operand> {
        let mut v = Vec::new();
        self.for_each_operand(|o| v.push(o));
        v
    }

    /// Registers the instruction overwrites without naming them (a call's
    /// caller-saved registers, its results among them), after its uses are read.
    pub fn clobbers(&self) -> impl Iterator<Item = Reg> {
        self.is_call().then(call_clobbers).into_iter().flatten()
    }

    /// The block this instruction may transfer control to.
    pub fn branch_target(&self) -> Option<MBlock> {
        match self {
            MInst::Branch { target, .. } | MInst::Jump { target } => Some(*target),
            _ => None,
        }
    }

    /// Mutable access to the branch target.
    pub fn branch_target_mut(&mut self) -> Option<&mut MBlock> {
        match self {
            MInst::Branch { target, .. } | MInst::Jump { target } => Some(target),
            _ => None,
        }
    }

    /// Whether control never falls through to the next instruction.
    pub fn is_barrier(&self) -> bool {
        matches!(
            self,
            MInst::Jump { .. } | MInst::Ret { .. } | MInst::TailCall { .. }
        )
    }

    /// Whether this ends a block: a branch, jump, return or tail call.
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            MInst::Branch { .. } | MInst::Jump { .. } | MInst::Ret { .. } | MInst::TailCall { .. }
        )
    }

    /// Whether this is a call (clobbering caller-saved registers).
    pub fn is_call(&self) -> bool {
        matches!(self, MInst::Call { .. })
    }
}

/// One block: straight-line code ending in branches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MBlockData {
    pub insts: Vec<MInst>,
}

/// A function in machine IR. Everything a stage reads is here, so the function
/// prints and parses back (see [`crate::text`]) between any two stages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MFunction {
    pub name: String,
    /// Whether the symbol is exported (`.globl`).
    pub global: bool,
    /// The block arena: every block ever created, by [`MBlock`] (as the SSA IR's
    /// `PrimaryMap`s); those in use are the ones in `layout`.
    pub blocks: PrimaryMap<MBlock, MBlockData>,
    /// Block order for emission; the first is the entry.
    pub layout: Vec<MBlock>,
    /// Class of each virtual register.
    pub vreg_class: Vec<RegClass>,
    /// Whether each virtual register holds a double: the whole 64 bits of a float
    /// register (a variadic argument converted by `fcvt.d.s`), not a NaN-boxed
    /// single. Spill code moves such a register with `fsd`/`fld`. Printed as
    /// `double %vN` among the declarations.
    pub vreg_double: Vec<bool>,
    /// How each virtual register can be recomputed instead of reloaded when spilled:
    /// its single defining instruction, which reads no register that could change
    /// (`Li`, `La`, `FrameAddr`, a load from an incoming argument slot, or
    /// `fmv.w.x rd, zero`). Its `rd` is replaced when re-emitted.
    pub vreg_remat: Vec<Option<MInst>>,
    /// The frame-slot arena, by [`Slot`].
    pub slots: PrimaryMap<Slot, SlotKind>,
    /// Bytes needed at the bottom of the frame for outgoing stack arguments.
    pub outgoing_size: u64,
    /// Byte size of each global the function addresses (`lla`), by its index in
    /// the module: what speculation needs to prove a load stays inside its
    /// object. Printed as `size gN BYTES`.
    pub global_sizes: std::collections::BTreeMap<u32, u64>,
    /// Where each global the function addresses lies in its data section
    /// ([`crate::globals::global_places`]), by its index: what
    /// [`crate::anchors`] computes one address from another with. Printed as
    /// `place gN SECTION OFFSET`.
    pub global_places: std::collections::BTreeMap<u32, crate::globals::GlobalPlace>,
}

/// A block of register copies ending in a jump (where out of SSA puts the block
/// arguments of a split edge): its copies, possibly none, and the jump's target.
pub fn copies_then_jump(insts: &[MInst]) -> Option<(&[MInst], MBlock)> {
    let (MInst::Jump { target }, copies) = insts.split_last()? else {
        return None;
    };
    let all_copies = copies.iter().all(|i| matches!(i, MInst::Mv { .. }));
    all_copies.then_some((copies, *target))
}

impl MFunction {
    pub fn new(name: String, global: bool) -> Self {
        MFunction {
            name,
            global,
            blocks: PrimaryMap::new(),
            layout: Vec::new(),
            vreg_class: Vec::new(),
            vreg_double: Vec::new(),
            vreg_remat: Vec::new(),
            slots: PrimaryMap::new(),
            outgoing_size: 0,
            global_sizes: Default::default(),
            global_places: Default::default(),
        }
    }

    /// A fresh virtual register.
    pub fn new_vreg(&mut self, class: RegClass) -> Reg {
        let n = self.vreg_class.len() as u32;
        self.vreg_class.push(class);
        self.vreg_double.push(false);
        self.vreg_remat.push(None);
        Reg::virt(n)
    }

    /// A fresh virtual float register holding a double.
    pub fn new_double_vreg(&mut self) -> Reg {
        let r = self.new_vreg(RegClass::Float);
        self.vreg_double[r.vindex()] = true;
        r
    }

    /// A fresh virtual register of the class and width of `like`.
    pub fn new_vreg_like(&mut self, like: Reg) -> Reg {
        let r = self.new_vreg(self.class_of(like));
        if self.is_double(like) {
            self.vreg_double[r.vindex()] = true;
        }
        r
    }

    /// Whether virtual register `r` holds a double (never true of a physical one:
    /// its width is the value's it holds).
    pub fn is_double(&self, r: Reg) -> bool {
        r.is_virtual() && self.vreg_double[r.vindex()]
    }

    /// The load and store width that saves virtual register `r` in a spill slot and
    /// gives its value back exactly: 8 bytes for an integer register (`sd`/`ld`) or a
    /// double (`fsd`/`fld`), 4 for a single (`fsw`/`flw`).
    pub fn spill_op(&self, r: Reg) -> MemOp {
        match self.class_of(r) {
            RegClass::Int => MemOp::D,
            RegClass::Float if self.is_double(r) => MemOp::FD,
            RegClass::Float => MemOp::FS,
        }
    }

    /// Class of any register.
    pub fn class_of(&self, r: Reg) -> RegClass {
        if r.is_virtual() {
            self.vreg_class[r.vindex()]
        } else {
            r.phys_class()
        }
    }

    /// A fresh block (not yet in the layout).
    pub fn new_block(&mut self) -> MBlock {
        self.blocks.push(MBlockData::default())
    }

    /// A fresh frame slot.
    pub fn new_slot(&mut self, kind: SlotKind) -> Slot {
        self.slots.push(kind)
    }

    pub fn num_vregs(&self) -> usize {
        self.vreg_class.len()
    }

    /// For each virtual register: how many instructions define it, and the
    /// number of the (last, in layout order) block defining it (`usize::MAX`
    /// when none does).
    pub fn vreg_defs(&self) -> (Vec<u32>, Vec<usize>) {
        let nv = self.num_vregs();
        let mut count = vec![0u32; nv];
        let mut block = vec![usize::MAX; nv];
        for &b in &self.layout {
            for i in &self.blocks[b].insts {
                i.for_each_def(|r| {
                    if r.is_virtual() {
                        count[r.vindex()] += 1;
                        block[r.vindex()] = b.index();
                    }
                });
            }
        }
        (count, block)
    }

    /// For each virtual register: whether an instruction outside the block
    /// defining it (`def_block`, as [`MFunction::vreg_defs`] gives it) reads it.
    pub fn vregs_read_elsewhere(&self, def_block: &[usize]) -> Vec<bool> {
        let mut escapes = vec![false; self.num_vregs()];
        for &b in &self.layout {
            for i in &self.blocks[b].insts {
                i.for_each_use(|r| {
                    if r.is_virtual() && def_block[r.vindex()] != b.index() {
                        escapes[r.vindex()] = true;
                    }
                });
            }
        }
        escapes
    }

    /// Successors of a block, from its branches, in order, without duplicates.
    pub fn succs(&self, b: MBlock) -> smallvec::SmallVec<[MBlock; 2]> {
        let mut v = smallvec::SmallVec::new();
        // Branches and jumps are terminators, and terminators end the block (the
        // verifier's rule): only its tail is read.
        let insts = &self.blocks[b].insts;
        let tail = insts
            .iter()
            .rposition(|i| !i.is_terminator())
            .map_or(0, |p| p + 1);
        debug_assert!(
            insts[..tail].iter().all(|i| i.branch_target().is_none()),
            "a branch before the block's terminators"
        );
        for i in &insts[tail..] {
            if let Some(t) = i.branch_target() {
                if !v.contains(&t) {
                    v.push(t);
                }
            }
        }
        v
    }

    /// Whether any instruction is a call.
    pub fn has_calls(&self) -> bool {
        self.layout
            .iter()
            .any(|b| self.blocks[*b].insts.iter().any(|i| i.is_call()))
    }
}

/// Whether `v` fits a 12-bit signed immediate.
pub fn fits_imm12(v: i64) -> bool {
    (-2048..=2047).contains(&v)
}
