//! Spelling types and constants in LLVM's textual syntax (LLVM Language Reference,
//! "Type System" and "Simple Constants"/"Complex Constants").
//!
//! - Every IR `ptr` becomes `i8*` (typed pointers, the LLVM 14 default): memory is
//!   addressed in bytes and bitcast to the element pointer type at each load and store.
//! - `float` constants are written as the 64-bit hexadecimal form of the `double` that
//!   equals the `float` exactly (the only hex form LLVM accepts for `float`); NaNs, whose
//!   payload and signalling bit a `double` round trip might not keep, are written as
//!   `bitcast (i32 BITS to float)` so every bit survives.
//! - Byte strings are `c"..."` literals with `\XX` escapes for anything not printable.

use ir::Type;
use std::fmt::Write;

/// The LLVM type of an SSA value or memory element of IR type `ty`.
pub fn llvm_type(ty: Type) -> &'static str {
    match ty {
        Type::Void => "void",
        Type::I8 => "i8",
        Type::I32 => "i32",
        Type::F32 => "float",
        Type::I64 => "i64",
        Type::Ptr => "i8*",
    }
}

/// The type of a function parameter or call argument of IR type `ty`, with the
/// extension attribute the C ABI of RV64 needs: `int` is passed sign-extended to 64
/// bits (RISC-V psABI, "Integer Calling Convention"; clang writes `signext` too), so a
/// gcc-compiled runtime may rely on it. Other targets ignore the attribute for `i32`.
pub fn abi_param(ty: Type) -> &'static str {
    match ty {
        Type::I32 => "i32 signext",
        other => llvm_type(other),
    }
}

/// The return type of a function returning IR type `ty` (see [`abi_param`]).
pub fn abi_ret(ty: Type) -> &'static str {
    match ty {
        Type::I32 => "signext i32",
        other => llvm_type(other),
    }
}

/// The alignment (bytes) of a memory access or element of type `ty`.
pub fn align_of(ty: Type) -> u32 {
    ty.size().max(1)
}

/// The LLVM constant for the `f32` with bit pattern `bits`.
pub fn float_literal(bits: u32) -> String {
    let x = f32::from_bits(bits);
    if x.is_nan() {
        format!("bitcast (i32 {} to float)", bits as i32)
    } else {
        // Widening a finite (or infinite) f32 to f64 is exact.
        format!("0x{:016X}", (x as f64).to_bits())
    }
}

/// The constant of LLVM type `llvm_type(ty)` whose memory representation has the low
/// bits `word` (an element of a global's initialiser).
pub fn word_literal(ty: Type, word: u32) -> String {
    match ty {
        Type::F32 => float_literal(word),
        Type::I8 => (word as u8).to_string(),
        Type::Ptr if word == 0 => "null".to_string(),
        Type::Ptr => format!("inttoptr (i64 {word} to i8*)"),
        Type::I32 | Type::I64 | Type::Void => (word as i32).to_string(),
    }
}

/// A `c"..."` literal holding exactly `bytes`.
pub fn c_string(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 3);
    s.push_str("c\"");
    for &b in bytes {
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

    #[test]
    fn floats_are_exact_double_hex() {
        assert_eq!(float_literal(1.5f32.to_bits()), "0x3FF8000000000000");
        assert_eq!(float_literal((-0.0f32).to_bits()), "0x8000000000000000");
        // 0.1f is not 0.1: the double spelled must be the float's exact value.
        assert_eq!(float_literal(0.1f32.to_bits()), "0x3FB99999A0000000");
        assert_eq!(float_literal(f32::INFINITY.to_bits()), "0x7FF0000000000000");
        // The smallest subnormal float is a normal double.
        assert_eq!(float_literal(1), "0x36A0000000000000");
        assert_eq!(
            float_literal(0x7FC0_0001),
            "bitcast (i32 2143289345 to float)"
        );
    }

    #[test]
    fn words_follow_the_element_type() {
        assert_eq!(word_literal(Type::I32, u32::MAX), "-1");
        assert_eq!(
            word_literal(Type::F32, 2.0f32.to_bits()),
            "0x4000000000000000"
        );
        assert_eq!(word_literal(Type::I8, 0x41), "65");
        assert_eq!(word_literal(Type::Ptr, 0), "null");
    }

    #[test]
    fn strings_escape_quotes_backslashes_and_control_bytes() {
        assert_eq!(c_string(b"a \"b\"\\\n\0"), r#"c"a \22b\22\5C\0A\00""#);
    }
}
