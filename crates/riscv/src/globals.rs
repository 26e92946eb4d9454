//! Data sections for a module's globals: zero-initialised globals go to `.bss`,
//! initialised words to `.data` (explicit words, then one `.zero` for the tail), byte
//! strings to `.rodata`. Globals are local symbols with a `g.` prefix, which no SysY
//! identifier can produce: they can clash neither with functions nor with libc.

use ir::{GlobalData, GlobalInit, Module, Type};
use std::fmt::Write;

/// The data section a global goes to.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum DataSection {
    Data,
    Bss,
    Rodata,
}

impl DataSection {
    /// Its name in the MIR text (`place g0 bss 256`).
    pub fn name(self) -> &'static str {
        match self {
            DataSection::Data => "data",
            DataSection::Bss => "bss",
            DataSection::Rodata => "rodata",
        }
    }

    /// The section named `name` in the MIR text.
    pub fn from_name(name: &str) -> Option<Self> {
        [DataSection::Data, DataSection::Bss, DataSection::Rodata]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

/// Where a global lies in the object file: its section, and its distance in
/// bytes from the first global the module emits to that section. Within one
/// object file a section is one contiguous piece, laid out in the order of the
/// assembly text, so the distance between two globals of one section is known
/// when the functions are compiled (what GCC's section anchors use).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct GlobalPlace {
    pub section: DataSection,
    pub offset: u64,
}

/// Every global's alignment: `known_align` and [`global_places`] rely on it.
const GLOBAL_ALIGN: u64 = 8;

fn section_of(g: &GlobalData) -> DataSection {
    match g.init {
        GlobalInit::Zero => DataSection::Bss,
        GlobalInit::Words(_) => DataSection::Data,
        GlobalInit::Bytes(_) => DataSection::Rodata,
    }
}

/// The bytes [`emit_global`] writes for `g`: its size, or one for an empty one.
fn footprint(g: &GlobalData) -> u64 {
    g.size().max(1)
}

/// The place of every global of `m`, by its index, as [`emit_globals`] lays
/// them out: each section's globals in module order, each aligned to
/// [`GLOBAL_ALIGN`] and taking its [`footprint`].
pub fn global_places(m: &Module) -> Vec<GlobalPlace> {
    let mut end = [0u64; 3];
    m.globals
        .iter()
        .map(|(_, g)| {
            let section = section_of(g);
            let cursor = &mut end[section as usize];
            let offset = cursor.next_multiple_of(GLOBAL_ALIGN);
            *cursor = offset + footprint(g);
            GlobalPlace { section, offset }
        })
        .collect()
}

/// The assembly symbol of a global named `name`.
pub fn global_symbol(name: &str) -> String {
    format!("g.{name}")
}

/// Emits every global of `m`.
pub fn emit_globals(m: &Module) -> String {
    let mut s = String::new();
    for (_, g) in m.globals.iter() {
        emit_global(&mut s, g);
    }
    s
}

fn emit_global(s: &mut String, g: &GlobalData) {
    let sym = global_symbol(&g.name);
    let size = g.size();
    let section = match section_of(g) {
        DataSection::Bss => "\t.bss",
        DataSection::Data => "\t.data",
        DataSection::Rodata => "\t.section .rodata",
    };
    let _ = writeln!(s, "{section}");
    let _ = writeln!(s, "\t.p2align {}", GLOBAL_ALIGN.trailing_zeros());
    let _ = writeln!(s, "\t.type {sym}, @object");
    let _ = writeln!(s, "\t.size {sym}, {size}");
    let _ = writeln!(s, "{sym}:");
    let mut written: u64 = 0;
    match &g.init {
        GlobalInit::Zero => {}
        GlobalInit::Words(words) => {
            let n = words.len().min(g.len as usize);
            if g.elem == Type::I8 {
                write_list(s, ".byte", words[..n].iter().map(|&w| (w & 0xff) as u64));
                written = n as u64;
            } else if g.elem == Type::Ptr {
                write_list(s, ".dword", words[..n].iter().map(|&w| w as u64));
                written = n as u64 * 8;
            } else {
                write_list(s, ".word", words[..n].iter().map(|&w| w as u64));
                written = n as u64 * 4;
            }
        }
        GlobalInit::Bytes(bytes) => {
            let n = (bytes.len() as u64).min(size) as usize;
            write_list(s, ".byte", bytes[..n].iter().map(|&b| b as u64));
            written = n as u64;
        }
    }
    if footprint(g) > written {
        let _ = writeln!(s, "\t.zero {}", footprint(g) - written);
    }
}

/// Writes values 16 per line after `directive`.
fn write_list(s: &mut String, directive: &str, vals: impl Iterator<Item = u64>) {
    let vals: Vec<u64> = vals.collect();
    for chunk in vals.chunks(16) {
        let items: Vec<String> = chunk.iter().map(|v| v.to_string()).collect();
        let _ = writeln!(s, "\t{directive} {}", items.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_then_zero_tail() {
        let mut m = Module::new();
        m.add_global(GlobalData {
            name: "a".into(),
            elem: Type::I32,
            len: 10,
            init: GlobalInit::Words(vec![1, 0xffff_ffff]),
        });
        m.add_global(GlobalData {
            name: "z".into(),
            elem: Type::F32,
            len: 1000,
            init: GlobalInit::Zero,
        });
        let s = emit_globals(&m);
        assert!(
            s.contains("g.a:\n\t.word 1, 4294967295\n\t.zero 32\n"),
            "{s}"
        );
        assert!(s.contains("\t.bss\n"));
        assert!(s.contains("g.z:\n\t.zero 4000\n"), "{s}");
    }

    #[test]
    fn places_follow_each_sections_order_and_alignment() {
        // .bss: z0 (12 bytes) at 0, z1 at 16 (aligned to 8), z2 (empty: one
        // byte) at 24, z3 at 32. .data: w0 at 0, w1 (20 bytes) at 8, w2 at 32.
        // .rodata: the string at 0. Each section counts on its own.
        let mut m = Module::new();
        let mut add = |name: &str, elem: Type, len: u32, init: GlobalInit| {
            m.add_global(GlobalData {
                name: name.into(),
                elem,
                len,
                init,
            });
        };
        add("z0", Type::I32, 3, GlobalInit::Zero);
        add("w0", Type::I32, 1, GlobalInit::Words(vec![7]));
        add("z1", Type::I32, 2, GlobalInit::Zero);
        add("s", Type::I8, 3, GlobalInit::Bytes(vec![104, 105, 0]));
        add("w1", Type::I32, 5, GlobalInit::Words(vec![1, 2]));
        add("z2", Type::I32, 0, GlobalInit::Zero);
        add("w2", Type::I32, 1, GlobalInit::Words(vec![3]));
        add("z3", Type::I32, 1, GlobalInit::Zero);
        let places: Vec<(&str, u64)> = global_places(&m)
            .iter()
            .map(|p| (p.section.name(), p.offset))
            .collect();
        assert_eq!(
            places,
            [
                ("bss", 0),
                ("data", 0),
                ("bss", 16),
                ("rodata", 0),
                ("data", 8),
                ("bss", 24),
                ("data", 32),
                ("bss", 32),
            ]
        );
        // The text puts each global at the next multiple of 8 of its section
        // and gives the empty one a byte.
        let text = emit_globals(&m);
        assert_eq!(text.matches("\t.p2align 3\n").count(), 8, "{text}");
        assert!(text.contains("g.z2:\n\t.zero 1\n"), "{text}");
        assert!(text.contains("g.w1:\n\t.word 1, 2\n\t.zero 12\n"), "{text}");
    }
}
