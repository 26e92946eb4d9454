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

/// Appends the text of one instruction (without branch relaxation) to `out`;
/// `label` names blocks and `global` names globals. The emitter writes every
/// instruction into the function's text directly, not through a string of its
/// own.
fn write_inst(
    out: &mut String,
    i: &MInst,
    mf: &MFunction,
    label: &dyn Fn(MBlock) -> String,
    global: &dyn Fn(u32) -> String,
) {
    let class = |r: Reg| mf.class_of(r);
    let _ = match i {
        MInst::Alu { op, rd, rs1, rs2 } => write!(out, "{} {rd}, {rs1}, {rs2}", op.mnemonic()),
        MInst::AluImm { op, rd, rs1, imm } => write!(out, "{} {rd}, {rs1}, {imm}", op.mnemonic()),
        MInst::Li { rd, imm } => write!(out, "li {rd}, {imm}"),
        MInst::La { rd, global: g, off } => {
            if *off == 0 {
                write!(out, "lla {rd}, {}", global(*g))
            } else {
                write!(out, "lla {rd}, {}{off:+}", global(*g))
            }
        }
        MInst::FrameAddr { rd, slot, off } => write!(out, "frameaddr {rd}, slot{}{off:+}", slot.0),
        MInst::Mv { rd, rs } => {
            if class(*rd) == RegClass::Float {
                // The whole 64-bit register: exact for a NaN-boxed single and for a
                // double alike (`fmv.s` would turn a double into the canonical NaN),
                // and the register's width is no longer known after allocation.
                write!(out, "fmv.d {rd}, {rs}")
            } else {
                write!(out, "mv {rd}, {rs}")
            }
        }
        MInst::FAlu { op, rd, rs1, rs2 } => {
            if *op == FAluOp::Sgnjn && rs1 == rs2 {
                write!(out, "fneg.s {rd}, {rs1}")
            } else if *op == FAluOp::Sgnjx && rs1 == rs2 {
                write!(out, "fabs.s {rd}, {rs1}")
            } else {
                write!(out, "{} {rd}, {rs1}, {rs2}", op.mnemonic())
            }
        }
        MInst::FCmp { op, rd, rs1, rs2 } => write!(out, "{} {rd}, {rs1}, {rs2}", op.mnemonic()),
        MInst::Cvt { op, rd, rs } => match op {
            CvtOp::FcvtSW => write!(out, "fcvt.s.w {rd}, {rs}"),
            CvtOp::FcvtWS => write!(out, "fcvt.w.s {rd}, {rs}, rtz"),
            CvtOp::FmvWX => write!(out, "fmv.w.x {rd}, {rs}"),
            CvtOp::FmvXW => write!(out, "fmv.x.w {rd}, {rs}"),
            CvtOp::FcvtDS => write!(out, "fcvt.d.s {rd}, {rs}"),
            CvtOp::FmvXD => write!(out, "fmv.x.d {rd}, {rs}"),
        },
        MInst::Load { op, rd, addr } => {
            write!(out, "{} {rd}, {}", op.load_mnemonic(), AddrText(addr))
        }
        MInst::Store { op, src, addr } => {
            write!(out, "{} {src}, {}", op.store_mnemonic(), AddrText(addr))
        }
        MInst::Call { callee, .. } => write!(out, "call {callee}"),
        MInst::TailCall { callee, .. } => write!(out, "tail {callee}"),
        MInst::Ret { .. } => out.write_str("ret"),
        MInst::Branch {
            cond,
            rs1,
            rs2,
            target,
        } => write!(out, "{} {rs1}, {rs2}, {}", cond.mnemonic(), label(*target)),
        MInst::Jump { target } => write!(out, "j {}", label(*target)),
    };
}

/// An address as the assembler reads it: `off(base)`.
struct AddrText<'a>(&'a Addr);

impl std::fmt::Display for AddrText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = self.0;
        match a.base {
            Base::Reg(r) => write!(f, "{}({r})", a.off),
            Base::Slot(s) => write!(f, "{}(slot{})", a.off, s.0),
        }
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
                    s.push('\t');
                    write_inst(&mut s, i, mf, &label, global);
                    s.push('\n');
                }
            }
            k += 1;
        }
    }
    let _ = writeln!(s, "\t.size {name}, .-{name}");
    s
}
