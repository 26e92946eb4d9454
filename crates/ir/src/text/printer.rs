//! The IR printer. Output is canonical: values and blocks are renumbered densely in
//! layout order (per block: its parameters, then its instruction results), floats are
//! printed in Rust's shortest round-trip form (or as exact bits), and everything is
//! emitted in entity/layout order, so the same module always prints the same text and
//! the parser reads it back to a module that prints identically.

use crate::entities::{Block, Inst, Value};
use crate::function::{Function, ValueDef};
use crate::inst::{BlockCall, InstKind};
use crate::module::{GlobalData, GlobalInit, Module};
use crate::types::Type;
use cranelift_entity::{EntityRef, SecondaryMap};
use std::fmt::Write;

/// The printed names of a function's values (`%N`) and blocks (`bbN`): dense numbers in
/// layout order. Values or blocks outside the layout (removed or never inserted) have no
/// number and print by their raw entity index (`%v12`, `block3`), which never collides
/// with a numbered name. Build once per function and reuse, so messages that mention
/// several entities (the verifier's) agree with each other and with the printed IR.
#[derive(Clone, Debug, Default)]
pub struct Names {
    /// Number + 1 of each value; 0 when not numbered.
    values: SecondaryMap<Value, u32>,
    /// Number + 1 of each block; 0 when not in the layout.
    blocks: SecondaryMap<Block, u32>,
}

impl Names {
    /// Numbers the blocks, block parameters and instruction results of `f` in layout order.
    pub fn new(f: &Function) -> Names {
        let mut names = Names::default();
        let mut nv = 0u32;
        // Entities out of range (a corrupt function) stay unnumbered rather than panic.
        let valid = |v: Value| v.index() < f.num_values();
        for (nb, b) in f.layout.blocks().enumerate() {
            if b.index() >= f.num_blocks() {
                continue;
            }
            names.blocks[b] = nb as u32 + 1;
            for &p in f.block_params(b) {
                if valid(p) && names.values[p] == 0 {
                    nv += 1;
                    names.values[p] = nv;
                }
            }
            for i in f.layout.block_insts(b) {
                if i.index() >= f.num_insts() {
                    break;
                }
                if let Some(r) = f.inst_result(i) {
                    if valid(r) && names.values[r] == 0 {
                        nv += 1;
                        names.values[r] = nv;
                    }
                }
            }
        }
        names
    }

    /// The dense number of `v`, if it is a block parameter or result in the layout.
    pub fn value_number(&self, v: Value) -> Option<u32> {
        self.values[v].checked_sub(1)
    }

    /// The dense number of `b`, if it is in the layout.
    pub fn block_number(&self, b: Block) -> Option<u32> {
        self.blocks[b].checked_sub(1)
    }

    /// The name of a non-constant value: `%N`, or `%vK` (raw index) when not numbered.
    /// Constants and global addresses need [`Names::operand`].
    pub fn value(&self, v: Value) -> String {
        match self.value_number(v) {
            Some(n) => format!("%{n}"),
            None => format!("%{v}"),
        }
    }

    /// The name of a block: `bbN`, or `blockK` (raw index) when not in the layout.
    pub fn block(&self, b: Block) -> String {
        match self.block_number(b) {
            Some(n) => format!("bb{n}"),
            None => format!("block{}", b.index()),
        }
    }

    /// How `v` prints as an operand: a literal for constants, `@name` for a global's
    /// address, otherwise [`Names::value`]. Out-of-range entities (from another function
    /// or module) print as `<bad vK>` instead of panicking.
    pub fn operand(&self, m: &Module, f: &Function, v: Value) -> String {
        if v.index() >= f.num_values() {
            return format!("<bad {v}>");
        }
        match f.value_def(v) {
            ValueDef::IConst(c) => c.to_string(),
            ValueDef::FConst(bits) => format_f32(bits),
            ValueDef::Global(g) => match m.globals.get(g) {
                Some(gd) => format!("@{}", gd.name),
                None => format!("<bad {g}>"),
            },
            ValueDef::Inst(_) | ValueDef::Param(..) => self.value(v),
        }
    }
}

/// Formats the `f32` with bit pattern `bits` so that the parser reads back the same
/// bits: Rust's shortest round-trip decimal (`1.5`, `-0.0`, `1e-40`), `inf`/`-inf`,
/// `nan` for the canonical quiet NaN `0x7FC00000`, and `0fXXXXXXXX` for other NaNs.
pub fn format_f32(bits: u32) -> String {
    let x = f32::from_bits(bits);
    if x.is_nan() {
        if bits == 0x7FC0_0000 {
            "nan".to_string()
        } else {
            format!("0f{bits:08X}")
        }
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        // `{:?}` always includes a `.` or an exponent, so it reads back as a float.
        format!("{x:?}")
    }
}

/// Prints a whole module: globals, then functions (declarations and definitions) in
/// creation order, separated by blank lines.
pub fn print_module(m: &Module) -> String {
    let mut out = String::new();
    for (_, g) in m.globals.iter() {
        out.push_str(&print_global(g));
        out.push('\n');
    }
    let mut prev_decl = false;
    for (_, f) in m.funcs.iter() {
        let decl = f.is_declaration();
        // Consecutive declarations stay together; anything else is set apart.
        let together = out.is_empty() || (decl && prev_decl);
        if !together {
            out.push('\n');
        }
        out.push_str(&print_function(m, f));
        prev_decl = decl;
    }
    out
}

/// Prints one global: `global @name: ty = init`.
pub fn print_global(g: &GlobalData) -> String {
    let mut s = format!("global @{}: ", g.name);
    // One element prints as a scalar, unless the initialiser would not fit that form.
    let scalar = g.len == 1
        && match &g.init {
            GlobalInit::Zero => true,
            GlobalInit::Words(w) => w.len() <= 1,
            GlobalInit::Bytes(_) => false,
        };
    if scalar {
        s.push_str(g.elem.name());
    } else {
        let _ = write!(s, "[{}; {}]", g.elem, g.len);
    }
    s.push_str(" = ");
    let elem = |w: u32| -> String {
        match g.elem {
            Type::F32 => format_f32(w),
            Type::I32 => (w as i32).to_string(),
            _ => w.to_string(),
        }
    };
    match &g.init {
        GlobalInit::Bytes(bytes) => s.push_str(&format_bytes(bytes)),
        _ if scalar => s.push_str(&elem(g.word(0))),
        GlobalInit::Zero => s.push_str("zeroinit"),
        GlobalInit::Words(words) => {
            let n = words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
            if n == 0 {
                s.push_str("zeroinit");
            } else {
                s.push('[');
                for (i, &w) in words[..n].iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    s.push_str(&elem(w));
                }
                s.push(']');
            }
        }
    }
    s
}

/// `c"..."` with printable ASCII other than `"` and `\` kept and every other byte as
/// a `\XX` hex escape.
fn format_bytes(bytes: &[u8]) -> String {
    let mut s = String::from("c\"");
    for &b in bytes {
        if (0x20..0x7F).contains(&b) && b != b'"' && b != b'\\' {
            s.push(b as char);
        } else {
            let _ = write!(s, "\\{b:02X}");
        }
    }
    s.push('"');
    s
}

fn print_signature(out: &mut String, f: &Function) {
    let _ = write!(out, "@{}(", f.name);
    for (i, t) in f.sig.params.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(t.name());
    }
    if f.sig.variadic {
        if !f.sig.params.is_empty() {
            out.push_str(", ");
        }
        out.push_str("...");
    }
    let _ = write!(out, ") -> {}", f.sig.ret);
}

/// Prints a function: a `declare` line for a declaration, otherwise its header and
/// body. `m` supplies the names of callees and globals.
pub fn print_function(m: &Module, f: &Function) -> String {
    let mut out = String::new();
    if f.is_declaration() {
        out.push_str("declare ");
        print_signature(&mut out, f);
        out.push('\n');
        return out;
    }
    out.push_str("func ");
    print_signature(&mut out, f);
    out.push_str(" {\n");
    let names = Names::new(f);
    for b in f.layout.blocks() {
        out.push_str(&print_block_header(f, &names, b));
        out.push('\n');
        for i in f.layout.block_insts(b) {
            if i.index() >= f.num_insts() {
                out.push_str("  <bad instruction>\n");
                break;
            }
            out.push_str("  ");
            out.push_str(&print_inst(m, f, &names, i));
            out.push('\n');
        }
    }
    out.push_str("}\n");
    out
}

/// A block's label line: `bbN:` or `bbN(%a: ty, ...):`.
pub fn print_block_header(f: &Function, names: &Names, b: Block) -> String {
    let mut s = names.block(b);
    if b.index() >= f.num_blocks() {
        s.push(':');
        return s;
    }
    let params = f.block_params(b);
    if !params.is_empty() {
        s.push('(');
        for (i, &p) in params.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            if p.index() < f.num_values() {
                let _ = write!(s, "{}: {}", names.value(p), f.value_type(p));
            } else {
                let _ = write!(s, "<bad {p}>");
            }
        }
        s.push(')');
    }
    s.push(':');
    s
}

/// Prints one instruction as it appears in a function body (without indentation), e.g.
/// `%7 = add %5, %9` or `br %3, bb1(%4), bb2`.
pub fn print_inst(m: &Module, f: &Function, names: &Names, inst: Inst) -> String {
    if inst.index() >= f.num_insts() {
        return format!("<bad {inst}>");
    }
    let op = |v: Value| names.operand(m, f, v);
    let mut s = String::new();
    if let Some(r) = f.inst_result(inst) {
        let _ = write!(s, "{} = ", names.value(r));
    }
    match f.kind(inst) {
        InstKind::Binary { op: o, args } => {
            let _ = write!(s, "{} {}, {}", o.name(), op(args[0]), op(args[1]));
        }
        InstKind::Cmp { op: o, args } => {
            let _ = write!(s, "{} {}, {}", o.name(), op(args[0]), op(args[1]));
        }
        InstKind::Unary { op: o, arg } => {
            let _ = write!(s, "{} {}", o.name(), op(*arg));
        }
        InstKind::Alloc { elem, len } => {
            if *len == 1 {
                let _ = write!(s, "alloc {elem}");
            } else {
                let _ = write!(s, "alloc [{elem}; {len}]");
            }
        }
        InstKind::Load { ty, ptr } => {
            let _ = write!(s, "load {ty}, {}", op(*ptr));
        }
        InstKind::Store { value, ptr } => {
            let _ = write!(s, "store {}, {}", op(*value), op(*ptr));
        }
        InstKind::Gep {
            base,
            index,
            stride,
        } => {
            let _ = write!(s, "gep {}, {}, {stride}", op(*base), op(*index));
        }
        InstKind::Call { callee, args } => {
            match m.funcs.get(*callee) {
                Some(c) => {
                    let _ = write!(s, "call @{}(", c.name);
                }
                None => {
                    let _ = write!(s, "call <bad {callee}>(");
                }
            }
            for (i, &a) in args.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                s.push_str(&op(a));
            }
            s.push(')');
        }
        InstKind::Jump { dest } => {
            s.push_str("jump ");
            print_block_call(&mut s, m, f, names, dest);
        }
        InstKind::Br {
            cond,
            then_dest,
            else_dest,
        } => {
            let _ = write!(s, "br {}, ", op(*cond));
            print_block_call(&mut s, m, f, names, then_dest);
            s.push_str(", ");
            print_block_call(&mut s, m, f, names, else_dest);
        }
        InstKind::Ret { value } => {
            s.push_str("ret");
            if let Some(v) = value {
                let _ = write!(s, " {}", op(*v));
            }
        }
    }
    s
}

fn print_block_call(s: &mut String, m: &Module, f: &Function, names: &Names, c: &BlockCall) {
    s.push_str(&names.block(c.block));
    if !c.args.is_empty() {
        s.push('(');
        for (i, &a) in c.args.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(&names.operand(m, f, a));
        }
        s.push(')');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_round_trippably() {
        assert_eq!(format_f32(1.5f32.to_bits()), "1.5");
        assert_eq!(format_f32((-0.0f32).to_bits()), "-0.0");
        assert_eq!(format_f32(1e-40f32.to_bits()), "1e-40");
        assert_eq!(format_f32(f32::INFINITY.to_bits()), "inf");
        assert_eq!(format_f32(f32::NEG_INFINITY.to_bits()), "-inf");
        assert_eq!(format_f32(0x7FC0_0000), "nan");
        assert_eq!(format_f32(0x7FC0_0001), "0f7FC00001");
        assert_eq!(format_f32(1.0f32.to_bits()), "1.0");
    }

    #[test]
    fn bytes_escape_everything_unprintable() {
        assert_eq!(format_bytes(b"%d\n\0\"\\"), "c\"%d\\0A\\00\\22\\5C\"");
    }
}
