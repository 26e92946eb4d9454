//! Machine instructions over physical registers for the back end's unit tests:
//! `lw rd, off(base)`, `sw src, off(base)`, `addw`, `mulw`, `addi` and `bnez`, with
//! registers given by number (`x10` is `a0`), `ret a0`; [`one_block`], a function
//! of one block; and [`cfg_func`], a function of empty blocks with a given
//! control-flow graph.

use crate::mir::{Addr, AluImmOp, AluOp, Base, Cond, MBlock, MInst, MemOp, Reg};

pub fn lw(rd: u32, base: u32, off: i64) -> MInst {
    MInst::Load {
        op: MemOp::W,
        rd: Reg::x(rd),
        addr: Addr::new(Base::Reg(Reg::x(base)), off),
    }
}

pub fn sw(src: u32, base: u32, off: i64) -> MInst {
    MInst::Store {
        op: MemOp::W,
        src: Reg::x(src),
        addr: Addr::new(Base::Reg(Reg::x(base)), off),
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

pub fn divw(rd: u32, a: u32, b: u32) -> MInst {
    MInst::Alu {
        op: AluOp::Divw,
        rd: Reg::x(rd),
        rs1: Reg::x(a),
        rs2: Reg::x(b),
    }
}

/// `ret a0`.
pub fn ret_a0() -> MInst {
    MInst::Ret {
        value: Some(Reg::x(10)),
    }
}

/// A function of one block holding `insts`.
pub fn one_block(insts: Vec<MInst>) -> crate::mir::MFunction {
    let mut mf = crate::mir::MFunction::new("f".into(), true);
    let b = mf.new_block();
    mf.layout.push(b);
    mf.blocks[b].insts = insts;
    mf
}

/// A function whose blocks branch as `edges` says (block 0 is the entry; a block
/// with no successor returns, one with two branches to the first).
pub fn cfg_func(edges: &[&[u32]]) -> crate::mir::MFunction {
    let mut mf = crate::mir::MFunction::new("t".into(), false);
    for _ in edges {
        let b = mf.new_block();
        mf.layout.push(b);
    }
    for (i, ss) in edges.iter().enumerate() {
        let insts = &mut mf.blocks[MBlock(i as u32)].insts;
        match ss {
            [] => insts.push(MInst::Ret { value: None }),
            [a] => insts.push(MInst::Jump { target: MBlock(*a) }),
            [a, b] => {
                insts.push(MInst::Branch {
                    cond: Cond::Ne,
                    rs1: crate::mir::ZERO,
                    rs2: crate::mir::ZERO,
                    target: MBlock(*a),
                });
                insts.push(MInst::Jump { target: MBlock(*b) });
            }
            _ => unreachable!("at most two successors"),
        }
    }
    mf
}
