//! The machine IR verifier: the structural rules every back-end stage must leave
//! intact, checked after each stage when [`crate::Options::verify`] is set (the
//! `--verify-each` of the driver, and the suite tests).
//!
//! - The layout names each block once, and every branch target is in it.
//! - Terminators come last: a block is straight-line code, then either one `Jump`,
//!   `Ret` or `TailCall` (after at most one conditional `Branch`), or, once the
//!   peephole pass has made fall-throughs explicit ([`Stage::Final`]), a `Branch`
//!   or nothing, falling through to the next block in the layout.
//! - Operands are in their register file: integer ALU, addresses, comparison
//!   results and branch operands in integer registers; FP operations on float ones;
//!   a load or store's value in the file of its width; a copy within one file.
//! - Before allocation, every virtual register read is written somewhere.
//! - After allocation, no virtual register is left; after frame layout, no frame
//!   slot (`FrameAddr`, slot-based address) is left.

use crate::mir::*;
use std::fmt;

/// How far the back end has got, which decides the rules.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Virtual registers and frame slots allowed.
    Virtual,
    /// Registers allocated; frame slots still allowed.
    Allocated,
    /// Frame laid out: physical registers and `sp` offsets only.
    FrameLaidOut,
    /// After the peephole pass: blocks may fall through.
    Final,
}

/// A broken rule: the function, the block, the stage's rules and the problem
/// (naming the instruction when there is one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    pub function: String,
    pub block: MBlock,
    pub stage: Stage,
    pub problem: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "machine IR of {} is invalid at block {} ({:?}): {}",
            self.function, self.block.0, self.stage, self.problem
        )
    }
}

impl std::error::Error for VerifyError {}

/// Checks `mf` against the rules of `stage`; the error names the block and the
/// instruction.
pub fn verify(mf: &MFunction, stage: Stage) -> Result<(), VerifyError> {
    let fail = |b: MBlock, what: String| {
        Err(VerifyError {
            function: mf.name.clone(),
            block: b,
            stage,
            problem: what,
        })
    };
    let mut in_layout = vec![false; mf.blocks.len()];
    for &b in &mf.layout {
        if b.index() >= mf.blocks.len() || in_layout[b.index()] {
            return fail(b, "in the layout twice, or not a block".into());
        }
        in_layout[b.index()] = true;
    }
    let mut written = vec![false; mf.num_vregs()];
    for &b in &mf.layout {
        for i in &mf.blocks[b].insts {
            i.for_each_def(|r| {
                if r.is_virtual() {
                    written[r.vindex()] = true;
                }
            });
        }
    }
    for (pos, &b) in mf.layout.iter().enumerate() {
        let insts = &mf.blocks[b].insts;
        if let Err(e) = terminators(insts, stage, pos + 1 < mf.layout.len()) {
            return fail(b, e);
        }
        for i in insts {
            if let Some(t) = i.branch_target() {
                if !in_layout.get(t.index()).copied().unwrap_or(false) {
                    return fail(b, format!("`{i:?}` targets a block outside the layout"));
                }
            }
            if let Err(e) = operands(mf, i, stage, &written) {
                return fail(b, format!("`{i:?}`: {e}"));
            }
        }
    }
    Ok(())
}

/// The terminator rules for one block's instructions.
fn terminators(insts: &[MInst], stage: Stage, has_next: bool) -> Result<(), String> {
    let body = insts.iter().take_while(|i| !i.is_terminator()).count();
    let tail = &insts[body..];
    let ok = match tail {
        [] => stage == Stage::Final && has_next,
        [MInst::Branch { .. }] => stage == Stage::Final && has_next,
        [t] | [MInst::Branch { .. }, t] => t.is_barrier(),
        _ => false,
    };
    if ok {
        Ok(())
    } else if tail.iter().skip(1).any(|i| !i.is_terminator()) {
        Err("an instruction after a terminator".into())
    } else {
        Err(format!(
            "the block ends in {tail:?}, not in a jump, return or tail call{}",
            if has_next { "" } else { " (it is last)" }
        ))
    }
}

fn class(mf: &MFunction, r: Reg) -> Option<RegClass> {
    if r.is_virtual() {
        mf.vreg_class.get(r.vindex()).copied()
    } else {
        Some(r.phys_class())
    }
}

/// The operand rules for one instruction.
fn operands(mf: &MFunction, i: &MInst, stage: Stage, written: &[bool]) -> Result<(), String> {
    use RegClass::{Float, Int};
    let mut problem: Option<String> = None;
    let mut regs = Vec::new();
    let mut inst = i.clone();
    inst.map_regs(|r, def| regs.push((*r, def)));
    for &(r, def) in &regs {
        if r.is_virtual() {
            if stage >= Stage::Allocated {
                problem = Some(format!("virtual register {r} after allocation"));
            } else if r.vindex() >= mf.num_vregs() {
                problem = Some(format!("{r} is not a register of the function"));
            } else if !def && !written[r.vindex()] {
                problem = Some(format!("{r} is read but never written"));
            }
        }
    }
    if let Some(p) = problem {
        return Err(p);
    }
    let want = |r: Reg, c: RegClass, what: &str| -> Result<(), String> {
        match class(mf, r) {
            Some(k) if k == c => Ok(()),
            k => Err(format!("{what} {r} is {k:?}, not {c:?}")),
        }
    };
    match i {
        MInst::Alu { rd, rs1, rs2, .. } => {
            want(*rd, Int, "result")?;
            want(*rs1, Int, "operand")?;
            want(*rs2, Int, "operand")
        }
        MInst::AluImm { rd, rs1, .. } => {
            want(*rd, Int, "result")?;
            want(*rs1, Int, "operand")
        }
        MInst::Li { rd, .. } | MInst::La { rd, .. } => want(*rd, Int, "result"),
        MInst::FrameAddr { rd, .. } => {
            if stage >= Stage::FrameLaidOut {
                return Err("a frame address after frame layout".into());
            }
            want(*rd, Int, "result")
        }
        MInst::Mv { rd, rs } => match (class(mf, *rd), class(mf, *rs)) {
            (Some(a), Some(b)) if a == b => Ok(()),
            (a, b) => Err(format!("a copy across register files ({a:?} from {b:?})")),
        },
        MInst::FAlu { rd, rs1, rs2, .. } => {
            want(*rd, Float, "result")?;
            want(*rs1, Float, "operand")?;
            want(*rs2, Float, "operand")
        }
        MInst::FCmp { rd, rs1, rs2, .. } => {
            want(*rd, Int, "result")?;
            want(*rs1, Float, "operand")?;
            want(*rs2, Float, "operand")
        }
        MInst::Cvt { op, rd, rs } => {
            let (d, s) = op.classes();
            want(*rd, d, "result")?;
            want(*rs, s, "operand")
        }
        MInst::Load { op, rd, addr } => {
            want(*rd, op.class(), "loaded value")?;
            address(mf, addr, stage)
        }
        MInst::Store { op, src, addr } => {
            want(*src, op.class(), "stored value")?;
            address(mf, addr, stage)
        }
        MInst::Branch { rs1, rs2, .. } => {
            want(*rs1, Int, "operand")?;
            want(*rs2, Int, "operand")
        }
        MInst::Call { .. } | MInst::TailCall { .. } | MInst::Ret { .. } | MInst::Jump { .. } => {
            Ok(())
        }
    }
}

fn address(mf: &MFunction, addr: &Addr, stage: Stage) -> Result<(), String> {
    match addr.base {
        Base::Reg(r) => match class(mf, r) {
            Some(RegClass::Int) => Ok(()),
            k => Err(format!("address base {r} is {k:?}")),
        },
        Base::Slot(s) if stage >= Stage::FrameLaidOut => {
            Err(format!("frame slot {} after frame layout", s.0))
        }
        Base::Slot(s) if s.0 as usize >= mf.slots.len() => Err(format!("no frame slot {}", s.0)),
        Base::Slot(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `v0 = li 1; v1 = addi v0, 2; bnez v1, b1; j b1` / `b1: ret`.
    fn small() -> MFunction {
        let mut mf = MFunction::new("f".into(), true);
        let b0 = mf.new_block();
        let b1 = mf.new_block();
        mf.layout = vec![b0, b1];
        let v0 = mf.new_vreg(RegClass::Int);
        let v1 = mf.new_vreg(RegClass::Int);
        mf.blocks[MBlock(0)].insts = vec![
            MInst::Li { rd: v0, imm: 1 },
            MInst::AluImm {
                op: AluImmOp::Addi,
                rd: v1,
                rs1: v0,
                imm: 2,
            },
            MInst::Branch {
                cond: Cond::Ne,
                rs1: v1,
                rs2: ZERO,
                target: b1,
            },
            MInst::Jump { target: b1 },
        ];
        mf.blocks[MBlock(1)].insts = vec![MInst::Ret { value: None }];
        mf
    }

    fn message(mf: &MFunction, stage: Stage) -> String {
        verify(mf, stage).expect_err("invalid").to_string()
    }

    #[test]
    fn a_valid_function_passes() {
        verify(&small(), Stage::Virtual).unwrap();
    }

    #[test]
    fn virtual_registers_after_allocation_are_caught() {
        assert!(message(&small(), Stage::Allocated).contains("virtual register"));
    }

    #[test]
    fn misplaced_terminators_are_caught() {
        let mut mf = small();
        mf.blocks[MBlock(0)].insts.swap(1, 2);
        assert!(message(&mf, Stage::Virtual).contains("after a terminator"));
        let mut mf = small();
        mf.blocks[MBlock(0)].insts.pop();
        assert!(message(&mf, Stage::Virtual).contains("not in a jump"));
        // Falling through is fine once the peephole pass made it explicit...
        let mut f = small();
        f.blocks[MBlock(0)].insts.pop();
        for i in f.blocks[MBlock(0)].insts.iter_mut() {
            i.map_regs(|r, _| *r = if r.is_virtual() { Reg::x(10) } else { *r });
        }
        verify(&f, Stage::Final).unwrap();
        // ...but not off the end of the function.
        f.layout.swap(0, 1);
        assert!(message(&f, Stage::Final).contains("it is last"));
    }

    #[test]
    fn wrong_register_files_and_unwritten_reads_are_caught() {
        let mut mf = small();
        let f0 = mf.new_vreg(RegClass::Float);
        mf.blocks[MBlock(0)].insts[0] = MInst::Li { rd: f0, imm: 1 };
        assert!(message(&mf, Stage::Virtual).contains("not Int"));
        let mut mf = small();
        mf.blocks[MBlock(0)].insts.remove(0);
        assert!(message(&mf, Stage::Virtual).contains("never written"));
    }

    #[test]
    fn frame_slots_after_layout_are_caught() {
        let mut mf = small();
        let s = mf.new_slot(SlotKind::Spill);
        mf.blocks[MBlock(0)].insts.insert(
            0,
            MInst::Load {
                op: MemOp::D,
                rd: Reg::x(10),
                addr: Addr::new(Base::Slot(s), 0),
            },
        );
        for i in mf.blocks[MBlock(0)].insts.iter_mut() {
            i.map_regs(|r, _| *r = if r.is_virtual() { Reg::x(11) } else { *r });
        }
        verify(&mf, Stage::Allocated).unwrap();
        assert!(message(&mf, Stage::FrameLaidOut).contains("frame slot"));
    }

    #[test]
    fn unknown_branch_targets_are_caught() {
        let mut mf = small();
        mf.layout.pop();
        assert!(message(&mf, Stage::Virtual).contains("outside the layout"));
    }
}
