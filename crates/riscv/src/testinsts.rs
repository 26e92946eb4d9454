//! Machine instructions over physical registers for the back end's unit tests:
//! `lw rd, off(base)`, `sw src, off(base)`, `addw`, `mulw`, `addi` and `bnez`, with
//! registers given by number (`x10` is `a0`).

use crate::mir::{Addr, AluImmOp, AluOp, Base, Cond, MBlock, MInst, MemOp, Reg};

pub fn lw(rd: u32, base: u32, off: i64) -> MInst {
    MInst::Load {
        op: MemOp::W,
        rd: Reg::x(rd),
        addr: Addr {
            base: Base::Reg(Reg::x(base)),
            off,
        },
    }
}

pub fn sw(src: u32, base: u32, off: i64) -> MInst {
    MInst::Store {
        op: MemOp::W,
        src: Reg::x(src),
        addr: Addr {
            base: Base::Reg(Reg::x(base)),
            off,
        },
    }
}

pub fn addw(rd: u32, a: u32, b: u32) -> MInst {
    MInst::Alu {
        op: AluOp::Addw,
        rd: Reg::x(rd),
        rs1: Reg::x(a),
        rs2: Reg::x(b),
    }
}

pub fn addi(rd: u32, rs1: u32, imm: i32) -> MInst {
    MInst::AluImm {
        op: AluImmOp::Addi,
        rd: Reg::x(rd),
        rs1: Reg::x(rs1),
        imm,
    }
}

pub fn bnez(r: u32) -> MInst {
    MInst::Branch {
        cond: Cond::Ne,
        rs1: Reg::x(r),
        rs2: Reg::x(0),
        target: MBlock(0),
    }
}

pub fn mulw(rd: u32, a: u32, b: u32) -> MInst {
    MInst::Alu {
        op: AluOp::Mulw,
        rd: Reg::x(rd),
        rs1: Reg::x(a),
        rs2: Reg::x(b),
    }
}
