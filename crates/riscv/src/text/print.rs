//! Machine IR to text.

use crate::mir::*;
use std::fmt::Write;

fn alu_imm_text(off: i64) -> String {
    format!("{off:+}")
}

fn addr_text(a: &Addr) -> String {
    let mut region = match a.region {
        Addr::ANY_REGION => String::new(),
        r => format!(" !{r}"),
    };
    if let Some(s) = a.sym {
        write!(region, " &{}{:+}", s.anchor, s.off).expect("writing to a String");
    }
    match a.base {
        Base::Reg(r) => format!("{}({r}){region}", a.off),
        Base::Slot(s) => format!("{}(slot{}){region}", a.off, s.0),
    }
}

fn regs_text(rs: &[Reg]) -> String {
    rs.iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Mnemonic of a conversion.
pub fn cvt_mnemonic(op: CvtOp) -> &'static str {
    match op {
        CvtOp::FcvtSW => "fcvt.s.w",
        CvtOp::FcvtWS => "fcvt.w.s",
        CvtOp::FmvWX => "fmv.w.x",
        CvtOp::FmvXW => "fmv.x.w",
        CvtOp::FcvtDS => "fcvt.d.s",
        CvtOp::FmvXD => "fmv.x.d",
    }
}

/// One instruction, without indentation: `addw %v3, %v1, a0`, `lw t0, 8(slot2)`,
/// `call putint(a0)`, `bne %v4, zero, bb2`.
pub fn print_inst(i: &MInst) -> String {
    match i {
        MInst::Alu { op, rd, rs1, rs2 } => format!("{} {rd}, {rs1}, {rs2}", op.mnemonic()),
        MInst::AluImm { op, rd, rs1, imm } => format!("{} {rd}, {rs1}, {imm}", op.mnemonic()),
        MInst::Li { rd, imm } => format!("li {rd}, {imm}"),
        MInst::La { rd, global, off } => format!("lla {rd}, g{global}{}", alu_imm_text(*off)),
        MInst::FrameAddr { rd, slot, off } => {
            format!("frameaddr {rd}, slot{}{}", slot.0, alu_imm_text(*off))
        }
        MInst::Mv { rd, rs } => format!("mv {rd}, {rs}"),
        MInst::FAlu { op, rd, rs1, rs2 } => format!("{} {rd}, {rs1}, {rs2}", op.mnemonic()),
        MInst::FCmp { op, rd, rs1, rs2 } => format!("{} {rd}, {rs1}, {rs2}", op.mnemonic()),
        MInst::Cvt { op, rd, rs } => format!("{} {rd}, {rs}", cvt_mnemonic(*op)),
        MInst::Load { op, rd, addr } => format!("{} {rd}, {}", op.load_mnemonic(), addr_text(addr)),
        MInst::Store { op, src, addr } => {
            format!("{} {src}, {}", op.store_mnemonic(), addr_text(addr))
        }
        MInst::Call { callee, args } => format!("call {callee}({})", regs_text(args)),
        MInst::TailCall { callee, args } => format!("tail {callee}({})", regs_text(args)),
        MInst::Ret { value: None } => "ret".to_string(),
        MInst::Ret { value: Some(r) } => format!("ret {r}"),
        MInst::Branch {
            cond,
            rs1,
            rs2,
            target,
        } => format!("{} {rs1}, {rs2}, bb{}", cond.mnemonic(), target.0),
        MInst::Jump { target } => format!("j bb{}", target.0),
    }
}

/// Runs of consecutive virtual register numbers of one kind (class, and whether a
/// double): `%v0..%v4 %v7`.
fn vreg_ranges(mf: &MFunction, class: RegClass, double: bool) -> String {
    let mut out = String::new();
    let n = mf.num_vregs();
    let kind = |i: usize| mf.vreg_class[i] == class && mf.vreg_double[i] == double;
    let mut i = 0;
    while i < n {
        if !kind(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i + 1 < n && kind(i + 1) {
            i += 1;
        }
        out.push(' ');
        if start == i {
            let _ = write!(out, "%v{start}");
        } else {
            let _ = write!(out, "%v{start}..%v{i}");
        }
        i += 1;
    }
    out
}

/// The whole function: header, declarations, then the blocks in layout order (and
/// any non-empty block outside the layout, marked `unplaced`), then `end`.
pub fn print_function(mf: &MFunction) -> String {
    print_function_mapped(mf).0
}

/// [`print_function`], with the instruction each line prints: `(block index,
/// index in the block)`, `None` for the header, declarations and labels.
pub fn print_function_mapped(mf: &MFunction) -> (String, Vec<Option<(usize, usize)>>) {
    let mut s = String::new();
    let mut map = Vec::new();
    let mut seen = 0;
    let linkage = if mf.global { "global" } else { "local" };
    let _ = writeln!(s, "function {} {linkage}", mf.name);
    if mf.outgoing_size != 0 {
        let _ = writeln!(s, "  outgoing {}", mf.outgoing_size);
    }
    for (g, size) in &mf.global_sizes {
        let _ = writeln!(s, "  size g{g} {size}");
    }
    for (g, place) in &mf.global_places {
        let _ = writeln!(s, "  place g{g} {} {}", place.section.name(), place.offset);
    }
    for (k, slot) in mf.slots.values().enumerate() {
        let _ = match slot {
            SlotKind::Local { size, align } => {
                writeln!(s, "  slot{k} local {size} align {align}")
            }
            SlotKind::Spill => writeln!(s, "  slot{k} spill"),
            SlotKind::Incoming(n) => writeln!(s, "  slot{k} incoming {n}"),
        };
    }
    for (class, double, name) in [
        (RegClass::Int, false, "int"),
        (RegClass::Float, false, "float"),
        (RegClass::Float, true, "double"),
    ] {
        let list = vreg_ranges(mf, class, double);
        if !list.is_empty() {
            let _ = writeln!(s, "  {name}{list}");
        }
    }
    for (v, remat) in mf.vreg_remat.iter().enumerate() {
        if let Some(i) = remat {
            let _ = writeln!(s, "  remat %v{v}: {}", print_inst(i));
        }
    }
    let mut placed = vec![false; mf.blocks.len()];
    let mut order: Vec<(MBlock, bool)> = Vec::new();
    for &b in &mf.layout {
        if let Some(p) = placed.get_mut(b.index()) {
            *p = true;
        }
        order.push((b, true));
    }
    for (k, data) in mf.blocks.values().enumerate() {
        if !placed[k] && !data.insts.is_empty() {
            order.push((MBlock(k as u32), false));
        }
    }
    let last = mf.blocks.len();
    let listed_last = order.iter().map(|(b, _)| b.index() + 1).max().unwrap_or(0);
    if last != listed_last {
        let _ = writeln!(s, "  blocks {last}");
    }
    for (b, in_layout) in order {
        if in_layout {
            let _ = writeln!(s, "bb{}:", b.0);
        } else {
            let _ = writeln!(s, "bb{} unplaced:", b.0);
        }
        if let Some(data) = mf.blocks.get(b) {
            for (k, i) in data.insts.iter().enumerate() {
                // The lines since the last instruction are not instructions.
                unmapped(&s, &mut seen, &mut map);
                let _ = writeln!(s, "  {}", print_inst(i));
                seen = s.len();
                map.push(Some((b.index(), k)));
            }
        }
    }
    s.push_str("end\n");
    unmapped(&s, &mut seen, &mut map);
    (s, map)
}

/// A `None` in `map` for every line of `s` after byte `seen`, which moves to the end.
fn unmapped(s: &str, seen: &mut usize, map: &mut Vec<Option<(usize, usize)>>) {
    let lines = s[*seen..].bytes().filter(|&c| c == b'\n').count();
    map.extend(std::iter::repeat_n(None, lines));
    *seen = s.len();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_names_the_instruction_of_each_line() {
        let mf = crate::text::parse_function(
            "function f global\n  int %v0..%v1\nbb0:\n  li %v0, 1\n  mv a0, %v0\nbb1:\n  ret a0\nend\n",
        )
        .unwrap();
        let (text, map) = print_function_mapped(&mf);
        assert_eq!(text, print_function(&mf));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), map.len());
        let mut insts = 0;
        for (line, at) in lines.iter().zip(&map) {
            match at {
                Some((b, k)) => {
                    insts += 1;
                    let i = &mf.blocks[MBlock(*b as u32)].insts[*k];
                    assert_eq!(line.trim(), print_inst(i));
                }
                None => assert!(!line.starts_with("  ") || line.contains("int %v"), "{line}"),
            }
        }
        assert_eq!(insts, 3);
    }
}
