//! Data sections for a module's globals: zero-initialised globals go to `.bss`,
//! initialised words to `.data` (explicit words, then one `.zero` for the tail), byte
//! strings to `.rodata`. Globals are local symbols with a `g.` prefix, which no SysY
//! identifier can produce: they can clash neither with functions nor with libc.

use ir::{GlobalData, GlobalInit, Module, Type};
use std::fmt::Write;

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
    let section = match g.init {
        GlobalInit::Zero => "\t.bss",
        GlobalInit::Words(_) => "\t.data",
        GlobalInit::Bytes(_) => "\t.section .rodata",
    };
    let _ = writeln!(s, "{section}");
    // Every global 8-byte aligned: `known_align` relies on it.
    let _ = writeln!(s, "\t.p2align 3");
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
    if size > written {
        let _ = writeln!(s, "\t.zero {}", size - written);
    }
    if size == 0 {
        let _ = writeln!(s, "\t.zero 1");
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
}
