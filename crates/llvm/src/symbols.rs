//! Module-level symbols: the LLVM name and linkage of every function and global.
//!
//! LLVM keeps functions and globals in one namespace, reserves the `llvm.` prefix for
//! intrinsics, and only accepts unquoted names matching `[-a-zA-Z$._][-a-zA-Z$._0-9]*`
//! (LLVM Language Reference, "Identifiers"). The rules here:
//!
//! - Declarations (the runtime library) and `main` are external and keep their names,
//!   so they link; they are named first, so they win any clash.
//! - Every other definition and every global is `internal`: a SysY program may name a
//!   function or variable like a C library symbol (`printf`, `stdout`, `time`) that
//!   the runtime itself uses, and internal linkage keeps the two apart at link time.
//!   A clash inside the module is resolved by appending `.N` (a character no SysY
//!   identifier contains), trying N = 1, 2, ... in entity order, so naming is
//!   deterministic.
//! - Names that are not plain identifiers are quoted with `\XX` escapes.

use ir::{FuncId, GlobalId, Module, SecondaryMap};
use std::collections::BTreeSet;
use std::fmt::Write;

/// The LLVM names of a module's functions and globals.
pub struct Symbols {
    funcs: SecondaryMap<FuncId, String>,
    globals: SecondaryMap<GlobalId, String>,
}

impl Symbols {
    /// Names every function and global of `m`.
    pub fn new(m: &Module) -> Symbols {
        let mut taken = BTreeSet::new();
        let mut funcs = SecondaryMap::new();
        let mut globals = SecondaryMap::new();
        for (id, f) in m.funcs.iter() {
            if is_external(f) {
                funcs[id] = reserve(&mut taken, &f.name);
            }
        }
        for (id, f) in m.funcs.iter() {
            if !is_external(f) {
                funcs[id] = reserve(&mut taken, &f.name);
            }
        }
        for (id, g) in m.globals.iter() {
            globals[id] = reserve(&mut taken, &g.name);
        }
        Symbols { funcs, globals }
    }

    /// `@name` of a function, ready to print.
    pub fn func(&self, id: FuncId) -> String {
        quote(&self.funcs[id])
    }

    /// `@name` of a global, ready to print.
    pub fn global(&self, id: GlobalId) -> String {
        quote(&self.globals[id])
    }
}

/// Whether `f` keeps external linkage: declarations and `main`.
pub fn is_external(f: &ir::Function) -> bool {
    f.is_declaration() || f.name == "main"
}

/// Claims `want`, or the first free `want.N`.
fn reserve(taken: &mut BTreeSet<String>, want: &str) -> String {
    let base = if want.is_empty() || want.starts_with("llvm.") {
        format!("_{want}")
    } else {
        want.to_string()
    };
    let mut name = base.clone();
    let mut n = 0u32;
    while taken.contains(&name) {
        n += 1;
        name = format!("{base}.{n}");
    }
    taken.insert(name.clone());
    name
}

/// `@name`, quoted and escaped unless `name` is a plain LLVM identifier.
fn quote(name: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '$' | '.' | '_');
    let first_ok = name.chars().next().is_some_and(|c| !c.is_ascii_digit());
    if first_ok && name.chars().all(plain) {
        return format!("@{name}");
    }
    let mut s = String::from("@\"");
    for &b in name.as_bytes() {
        if (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\' {
            s.push(b as char);
        } else {
            let _ = write!(s, "\\{b:02X}");
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::{Function, GlobalData, GlobalInit, Signature, Type};

    #[test]
    fn externals_win_clashes_and_others_get_suffixes() {
        let mut m = Module::new();
        let body = |name: &str| {
            let mut f = Function::new(name, Signature::default());
            f.append_new_block();
            f
        };
        let user = m.add_function(body("putint"));
        let main = m.add_function(body("main"));
        let decl = m.declare_function("putint", Signature::default());
        let g = m.add_global(GlobalData {
            name: "main".into(),
            elem: Type::I32,
            len: 1,
            init: GlobalInit::Zero,
        });
        let s = Symbols::new(&m);
        assert_eq!(s.func(decl), "@putint");
        assert_eq!(s.func(main), "@main");
        assert_eq!(s.func(user), "@putint.1");
        assert_eq!(s.global(g), "@main.1");
    }

    #[test]
    fn odd_names_are_quoted() {
        assert_eq!(quote("a.b_$-1"), "@a.b_$-1");
        assert_eq!(quote("1x"), "@\"1x\"");
        assert_eq!(quote("a b\"c"), "@\"a b\\22c\"");
        let mut taken = BTreeSet::new();
        assert_eq!(reserve(&mut taken, "llvm.memcpy"), "_llvm.memcpy");
        assert_eq!(reserve(&mut taken, ""), "_");
    }
}
