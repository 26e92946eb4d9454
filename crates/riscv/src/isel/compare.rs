//! Comparisons and branches: a comparison as a 0/1 value (`slt`/`slti`, `xor` then
//! `seqz`/`snez`, `feq`/`flt`/`fle`), or, when the `br` ending its block is its only
//! user, deferred and fused into that branch (`blt`, `bge`, `beq`, `bne`, with a float
//! comparison's flag tested against zero); a branch on an integer comparison of its
//! own block that other instructions read too compares the operands again; `jump`
//! and `br` themselves, with the copies of their block arguments (see `edges`).

use super::Isel;
use crate::mir::*;
use crate::BackendError;
use ir::{BlockCall, CmpOp, EntityRef, Inst, InstKind, Value};

impl Isel<'_> {
    /// The comparison `i`: deferred to the branch that is its only user, or a 0/1 value.
    pub(super) fn compare(
        &mut self,
        i: Inst,
        op: CmpOp,
        args: &[Value; 2],
    ) -> Result<(), BackendError> {
        if self.fusable(i) {
            self.deferred[i.index()] = true;
        } else {
            let rd = self.def_reg(self.result(i).expect("cmp has a result"));
            self.cmp(op, rd, args[0], args[1])?;
        }
        Ok(())
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

    /// Whether the integer comparison `i`, which other instructions read as a 0/1
    /// value, is computed in the block being selected: its branch then compares
    /// the operands again (`blt a, b` rather than `bne t, zero` after `slt t, a,
    /// b`), which does not wait for the 0/1 value. Value numbering merges a
    /// branch's comparison with an equal one that feeds arithmetic; this keeps the
    /// branch fused.
    fn refusable(&self, i: Inst) -> bool {
        matches!(self.f.kind(i), InstKind::Cmp { op, .. } if !op.is_float())
            && self.f.layout.inst_block(i) == Some(self.ir_block)
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
            if self.deferred[i.index()] || self.refusable(i) {
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

    /// An unconditional jump, after the copies of its block arguments.
    pub(super) fn jump(&mut self, dest: &BlockCall) -> Result<(), BackendError> {
        self.edge_copies(dest)?;
        let t = self.target(dest.block)?;
        self.push(MInst::Jump { target: t });
        Ok(())
    }

    /// A conditional branch: a jump when the condition is constant or both arms are
    /// the same; otherwise a compare-and-branch to the then arm and a jump to the else
    /// arm, each arm through an edge block when it passes arguments.
    pub(super) fn br(
        &mut self,
        cond: Value,
        then_dest: &BlockCall,
        else_dest: &BlockCall,
    ) -> Result<(), BackendError> {
        if let Some(c) = self.iconst(cond) {
            return self.jump(if c != 0 { then_dest } else { else_dest });
        }
        if then_dest == else_dest {
            return self.jump(then_dest);
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
