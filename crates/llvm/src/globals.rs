//! Global variables as LLVM global definitions with initialisers.
//!
//! A global of `n` elements of type `T` is stored as `[n x T]`. Its initialiser is:
//! - `zeroinitializer` when every element is zero;
//! - a full array constant when the explicit prefix (trailing zeros trimmed) reaches
//!   the end, or leaves only a short zero tail ([`SHORT_TAIL`] elements or fewer,
//!   e.g. the terminating NUL of a `putf` format string);
//! - otherwise a packed struct `<{ [k x T] [...], [n-k x T] zeroinitializer }>`, so a
//!   million-element array with three initialised elements costs three constants (the
//!   same layout clang uses for such arrays). The struct has the array's size and no
//!   padding, and every access goes through an `i8*` byte address anyway.
//!
//! Strings (`i8` elements) are written as `c"..."` literals. All SSA uses of a global
//! take its address as `bitcast (TY* @g to i8*)`, built by [`GlobalLayout::address`].

use crate::consts::{c_string, llvm_type, word_literal};
use ir::{GlobalData, GlobalInit, Type};
use std::fmt::Write;

/// A zero tail of at most this many elements is spelled out instead of split off.
pub const SHORT_TAIL: u32 = 16;

/// How one global is laid out in LLVM: its storage type and initialiser.
pub struct GlobalLayout {
    /// The LLVM type of the global's storage (`[n x T]` or a packed struct).
    pub ty: String,
    /// The initialiser constant, without its type.
    pub init: String,
    /// Alignment in bytes.
    pub align: u32,
}

impl GlobalLayout {
    /// Lays out `g`.
    pub fn new(g: &GlobalData) -> GlobalLayout {
        // `void` elements make no sense in memory; treat them as bytes (size 0).
        let elem = if g.elem == Type::Void {
            Type::I8
        } else {
            g.elem
        };
        let n = g.len;
        let t = llvm_type(elem);
        let explicit = match &g.init {
            GlobalInit::Zero => 0,
            GlobalInit::Words(w) => w.len(),
            GlobalInit::Bytes(b) => b.len(),
        };
        // The explicit prefix without its trailing zeros, never past the end.
        let k = (0..explicit.min(n as usize))
            .rev()
            .find(|&i| g.word(i) != 0)
            .map_or(0, |i| i as u32 + 1);
        let whole = format!("[{n} x {t}]");
        let (ty, init) = if k == 0 {
            (whole, "zeroinitializer".to_string())
        } else if n - k <= SHORT_TAIL {
            (whole, elements(g, elem, n))
        } else {
            let head = format!("[{k} x {t}]");
            let tail = format!("[{} x {t}]", n - k);
            (
                format!("<{{ {head}, {tail} }}>"),
                format!(
                    "<{{ {head} {}, {tail} zeroinitializer }}>",
                    elements(g, elem, k)
                ),
            )
        };
        let size = g.size();
        let align = if size >= 16 { 16 } else { elem.size().max(1) };
        GlobalLayout { ty, init, align }
    }

    /// The global's address as an `i8*` constant expression, given its `@name`.
    pub fn address(&self, name: &str) -> String {
        format!("bitcast ({}* {name} to i8*)", self.ty)
    }

    /// The definition line of the global named `name` (with its trailing newline).
    pub fn definition(&self, name: &str) -> String {
        format!(
            "{name} = internal global {} {}, align {}\n",
            self.ty, self.init, self.align
        )
    }
}

/// The array constant holding the first `count` elements of `g`.
fn elements(g: &GlobalData, elem: Type, count: u32) -> String {
    if elem == Type::I8 {
        let bytes: Vec<u8> = (0..count as usize).map(|i| g.word(i) as u8).collect();
        return c_string(&bytes);
    }
    let t = llvm_type(elem);
    let mut s = String::from("[");
    for i in 0..count as usize {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{t} {}", word_literal(elem, g.word(i)));
    }
    s.push(']');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global(elem: Type, len: u32, init: GlobalInit) -> GlobalData {
        GlobalData {
            name: "g".into(),
            elem,
            len,
            init,
        }
    }

    #[test]
    fn zero_and_all_zero_words_are_zeroinitializer() {
        let l = GlobalLayout::new(&global(Type::I32, 1000, GlobalInit::Zero));
        assert_eq!(l.ty, "[1000 x i32]");
        assert_eq!(l.init, "zeroinitializer");
        assert_eq!(l.align, 16);
        let l = GlobalLayout::new(&global(Type::F32, 1, GlobalInit::Words(vec![0])));
        assert_eq!(l.init, "zeroinitializer");
        assert_eq!(l.align, 4);
    }

    #[test]
    fn short_tails_are_spelled_out() {
        let l = GlobalLayout::new(&global(Type::I32, 4, GlobalInit::Words(vec![1, 2])));
        assert_eq!(l.ty, "[4 x i32]");
        assert_eq!(l.init, "[i32 1, i32 2, i32 0, i32 0]");
        let f = 1.5f32.to_bits();
        let l = GlobalLayout::new(&global(Type::F32, 1, GlobalInit::Words(vec![f])));
        assert_eq!(l.init, "[float 0x3FF8000000000000]");
    }

    #[test]
    fn long_zero_tails_become_a_packed_struct() {
        let l = GlobalLayout::new(&global(
            Type::I32,
            100,
            GlobalInit::Words(vec![7, 0, 9, 0, 0]),
        ));
        assert_eq!(l.ty, "<{ [3 x i32], [97 x i32] }>");
        assert_eq!(
            l.init,
            "<{ [3 x i32] [i32 7, i32 0, i32 9], [97 x i32] zeroinitializer }>"
        );
        assert_eq!(
            l.address("@g"),
            "bitcast (<{ [3 x i32], [97 x i32] }>* @g to i8*)"
        );
    }

    #[test]
    fn strings_are_c_literals_with_their_nul() {
        let l = GlobalLayout::new(&global(Type::I8, 4, GlobalInit::Bytes(b"%d\n".to_vec())));
        assert_eq!(l.ty, "[4 x i8]");
        assert_eq!(l.init, r#"c"%d\0A\00""#);
        assert_eq!(l.align, 1);
        assert_eq!(
            l.definition("@s"),
            "@s = internal global [4 x i8] c\"%d\\0A\\00\", align 1\n"
        );
    }

    #[test]
    fn overlong_initialisers_are_cut_to_the_length() {
        let l = GlobalLayout::new(&global(Type::I32, 2, GlobalInit::Words(vec![1, 2, 3])));
        assert_eq!(l.init, "[i32 1, i32 2]");
    }
}
