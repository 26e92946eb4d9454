//! Assembly text for functions, with branch relaxation.
//!
//! Conditional branches reach ±4 KiB and `j` ±1 MiB. Sizes are known per instruction
//! (4 bytes, 8 for `call`/`tail`/`lla`/two-instruction `li`; the assembler's
//! compressed forms only make code smaller, so distances computed with these sizes
//! are upper bounds). Branch relaxation iterates to a fixed point: an out-of-range
//! `bcc rs1, rs2, L` becomes `b!cc rs1, rs2, 1f; j L; 1:`; since sizes only grow,
//! the iteration terminates. In a function too large for `j`, every jump uses the
//! `jump L, t6` pseudo (auipc + jalr; `t6` is a scratch register, dead at branches).

use crate::mir::*;
use crate::srcloc::{InstLocs, SourceLines};
use std::fmt::Write;

/// Text of one instruction (without branch relaxation); `label` names blocks and
/// `global` names globals.
pub fn inst_text(
    i: &MInst,
    mf: &MFunction,
    label: &dyn Fn(MBlock) -> String,
    global: &dyn Fn(u32) -> String,
) -> String {
    let class = |r: Reg| mf.class_of(r);
    match i {
        MInst::Alu { op, rd, rs1, rs2 } => format!("{} {rd}, {rs1}, {rs2}", op.mnemonic()),
        MInst::AluImm { op, rd, rs1, imm } => format!("{} {rd}, {rs1}, {imm}", op.mnemonic()),
        MInst::Li { rd, imm } => format!("li {rd}, {imm}"),
        MInst::La { rd, global: g, off } => {
            if *off == 0 {
                format!("lla {rd}, {}", global(*g))
            } else {
                format!("lla {rd}, {}{off:+}", global(*g))
            }
        }
        MInst::FrameAddr { rd, slot, off } => format!("frameaddr {rd}, slot{}{off:+}", slot.0),
        MInst::Mv { rd, rs } => {
            if class(*rd) == RegClass::Float {
                // The whole 64-bit register: exact for a NaN-boxed single and for a
                // double alike (`fmv.s` would turn a double into the canonical NaN),
                // and the register's width is no longer known after allocation.
                format!("fmv.d {rd}, {rs}")
            } else {
                format!("mv {rd}, {rs}")
            }
        }
        MInst::FAlu { op, rd, rs1, rs2 } => {
            if *op == FAluOp::Sgnjn && rs1 == rs2 {
                format!("fneg.s {rd}, {rs1}")
            } else if *op == FAluOp::Sgnjx && rs1 == rs2 {
                format!("fabs.s {rd}, {rs1}")
            } else {
                format!("{} {rd}, {rs1}, {rs2}", op.mnemonic())
            }
        }
        MInst::FCmp { op, rd, rs1, rs2 } => format!("{} {rd}, {rs1}, {rs2}", op.mnemonic()),
        MInst::Cvt { op, rd, rs } => match op {
            CvtOp::FcvtSW => format!("fcvt.s.w {rd}, {rs}"),
            CvtOp::FcvtWS => format!("fcvt.w.s {rd}, {rs}, rtz"),
            CvtOp::FmvWX => format!("fmv.w.x {rd}, {rs}"),
            CvtOp::FmvXW => format!("fmv.x.w {rd}, {rs}"),
            CvtOp::FcvtDS => format!("fcvt.d.s {rd}, {rs}"),
            CvtOp::FmvXD => format!("fmv.x.d {rd}, {rs}"),
        },
        MInst::Load { op, rd, addr } => format!("{} {rd}, {}", op.load_mnemonic(), addr_text(addr)),
        MInst::Store { op, src, addr } => {
            format!("{} {src}, {}", op.store_mnemonic(), addr_text(addr))
        }
        MInst::Call { callee, .. } => format!("call {callee}"),
        MInst::TailCall { callee, .. } => format!("tail {callee}"),
        MInst::Ret { .. } => "ret".to_string(),
        MInst::Branch {
            cond,
            rs1,
            rs2,
            target,
        } => format!("{} {rs1}, {rs2}, {}", cond.mnemonic(), label(*target)),
        MInst::Jump { target } => format!("j {}", label(*target)),
    }
}

fn addr_text(a: &Addr) -> String {
    match a.base {
        Base::Reg(r) => format!("{}({r})", a.off),
        Base::Slot(s) => format!("{}(slot{})", a.off, s.0),
    }
}

/// Upper bound of the encoded size of an instruction, in bytes.
fn size(i: &MInst) -> u32 {
    match i {
        MInst::Li { imm, .. } => {
            if fits_imm12(*imm) {
                4
            } else if i32::try_from(*imm).is_ok() {
                8
            } else {
                32
            }
        }
        MInst::La { .. } | MInst::Call { .. } | MInst::TailCall { .. } => 8,
        _ => 4,
    }
}

/// Text of a machine function, physical registers only. `fn_index` makes labels
/// unique in the module; `global` names globals. Block labels are numbered in layout
/// order (`.LBB{fn_index}_0` is the entry, then `_1`, `_2`, ... down the text), not
/// by block id, so reading the assembly they only go up.
pub fn emit_function(mf: &MFunction, fn_index: usize, global: &dyn Fn(u32) -> String) -> String {
    emit_function_annotated(mf, fn_index, global, None)
}

/// [`emit_function`], with `# file:LINE: text` before each instruction whose source
/// line differs from the previous instruction's in its block (the first located
/// instruction of each block always gets one) when `source` gives the positions of
/// the instructions and the source text. Instructions without a position (spill
/// code, prologue, epilogue) belong to the line above them.
pub fn emit_function_annotated(
    mf: &MFunction,
    fn_index: usize,
    global: &dyn Fn(u32) -> String,
    source: Option<(&InstLocs, &SourceLines<'_>)>,
) -> String {
    // A block outside the layout cannot be a target of valid code; it still gets a
    // distinct name after the laid-out ones.
    let mut number: Vec<usize> = (0..mf.blocks.len()).map(|i| mf.layout.len() + i).collect();
    for (n, &b) in mf.layout.iter().enumerate() {
        number[b.index()] = n;
    }
    let label = |b: MBlock| format!(".LBB{fn_index}_{}", number[b.index()]);
    // Branch relaxation.
    let insts: Vec<(MBlock, &MInst)> = mf
        .layout
        .iter()
        .flat_map(|&b| mf.blocks[b].insts.iter().map(move |i| (b, i)))
        .collect();
    let mut long = vec![false; insts.len()];
    let total: u64 = insts.iter().map(|(_, i)| size(i) as u64).sum();
    // Leave room for relaxation growth when deciding on far jumps.
    let far_jumps = total * 2 + 64 > (1 << 20) - 4096;
    let jump_size = if far_jumps { 8 } else { 4 };
    let mut block_pos = vec![0i64; mf.blocks.len()];
    loop {
        let mut pos = 0i64;
        let mut inst_pos = Vec::with_capacity(insts.len());
        let mut cur = None;
        for (k, (b, i)) in insts.iter().enumerate() {
            if cur != Some(*b) {
                block_pos[b.index()] = pos;
                cur = Some(*b);
            }
            inst_pos.push(pos);
            pos += match i {
                MInst::Branch { .. } if long[k] => 4 + jump_size,
                MInst::Jump { .. } => jump_size,
                _ => size(i) as i64,
            };
        }
        let mut changed = false;
        for (k, (_, i)) in insts.iter().enumerate() {
            if let MInst::Branch { target, .. } = i {
                let d = block_pos[target.index()] - inst_pos[k];
                // Margin for rounding by the assembler's alignment of nothing: exact.
                if !long[k] && !(-4096 + 16..=4094 - 16).contains(&d) {
                    long[k] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }

    let mut s = String::new();
    let name = &mf.name;
    let _ = writeln!(s, "\t.text");
    let _ = writeln!(s, "\t.p2align 2");
    if mf.global {
        let _ = writeln!(s, "\t.globl {name}");
    }
    let _ = writeln!(s, "\t.type {name}, @function");
    let _ = writeln!(s, "{name}:");
    let mut k = 0usize;
    let mut skip_label = 0usize;
    for &b in &mf.layout {
        let _ = writeln!(s, "{}:", label(b));
        let mut line = 0;
        for (n, i) in mf.blocks[b].insts.iter().enumerate() {
            if let Some((locs, src)) = source {
                if let Some(pos) = locs.get(b.index(), n) {
                    let l = src.line_of(pos);
                    if l != line {
                        line = l;
                        let _ = writeln!(s, "\t{}", src.comment(l));
                    }
                }
            }
            match i {
                MInst::Branch {
                    cond,
                    rs1,
                    rs2,
                    target,
                } if long[k] => {
                    let skip = format!(".LBX{fn_index}_{skip_label}");
                    skip_label += 1;
                    let _ = writeln!(s, "\t{} {rs1}, {rs2}, {skip}", cond.inverse().mnemonic());
                    if far_jumps {
                        let _ = writeln!(s, "\tjump {}, t6", label(*target));
                    } else {
                        let _ = writeln!(s, "\tj {}", label(*target));
                    }
                    let _ = writeln!(s, "{skip}:");
                }
                MInst::Jump { target } if far_jumps => {
                    let _ = writeln!(s, "\tjump {}, t6", label(*target));
                }
                _ => {
                    let _ = writeln!(s, "\t{}", inst_text(i, mf, &label, global));
                }
            }
            k += 1;
        }
    }
    let _ = writeln!(s, "\t.size {name}, .-{name}");
    s
}
