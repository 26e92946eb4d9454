//! Cross-checks of the native runtime against the host C library (glibc), which the
//! real runtime uses: `%a` output of thousands of random `f32` bit patterns,
//! `getfloat`/`getint` on random decimal and hexadecimal input, and `putf` over many
//! format/value pairs. Each test compiles a small C program with the host `cc`; when
//! no `cc` is found the test passes with a skip message.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// xorshift64*: deterministic pseudo-random numbers for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Compiles `c_src` with the host C compiler and runs it with `stdin`; `None` when
/// there is no C compiler.
fn run_c(name: &str, c_src: &str, stdin: &[u8]) -> Option<Vec<u8>> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    if Command::new(&cc).arg("--version").output().is_err() {
        eprintln!("skipping {name}: no host C compiler `{cc}`");
        return None;
    }
    let dir: PathBuf = std::env::temp_dir().join(format!("interp-c-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("t.c");
    let exe = dir.join("t");
    std::fs::write(&src, c_src).unwrap();
    let st = Command::new(&cc)
        .args(["-O0", "-w", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lm")
        .status()
        .unwrap();
    assert!(st.success(), "cc failed on\n{c_src}");
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut si = child.stdin.take().unwrap();
        si.write_all(stdin).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Some(out.stdout)
}

fn run_ir(src: &str, stdin: &[u8]) -> Vec<u8> {
    let m = ir::parse_module(src).unwrap_or_else(|e| panic!("parse: {e}"));
    let opts = interp::RunOptions {
        wall_clock_timers: false,
        ..Default::default()
    };
    interp::run_module(&m, stdin, &opts).unwrap().stdout
}

fn assert_same_lines(ours: &[u8], theirs: &[u8], inputs: &[String]) {
    let ours = String::from_utf8_lossy(ours);
    let theirs = String::from_utf8_lossy(theirs);
    let (a, b): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), theirs.lines().collect());
    assert_eq!(a.len(), b.len(), "line counts differ");
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "line {i} differs for input {:?}", inputs.get(i));
    }
}

/// An IR program that prints `%a` of each f32 bit pattern in a global, one per line.
fn putfloat_program(bits: &[u32]) -> String {
    let words: Vec<String> = bits.iter().map(|b| (*b as i32).to_string()).collect();
    format!(
        "global @bits: [i32; {n}] = [{w}]\ndeclare @putfloat(f32) -> void\ndeclare @putch(i32) -> void\n\
         func @main() -> i32 {{\nbb0:\n  jump head(0)\nhead(%i: i32):\n  %c = slt %i, {n}\n  br %c, body, exit\n\
         body:\n  %p = gep @bits, %i, 4\n  %f = load f32, %p\n  call @putfloat(%f)\n  call @putch(10)\n  %j = add %i, 1\n  jump head(%j)\n\
         exit:\n  ret 0\n}}\n",
        n = bits.len(),
        w = words.join(", ")
    )
}

#[test]
fn putfloat_matches_glibc_on_random_bit_patterns() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut bits: Vec<u32> = vec![
        0,
        0x8000_0000,
        1,
        0x8000_0001,
        0x007f_ffff,
        0x0080_0000,
        0x7f7f_ffff,
        0xff7f_ffff,
        0x3f80_0000,
        0x3dcc_cccd,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0001,
        0x0000_0100,
    ];
    for _ in 0..4000 {
        let b = match rng.below(4) {
            0 => rng.next() as u32 & 0x807f_ffff, // subnormals and zeros
            _ => rng.next() as u32,
        };
        bits.push(b);
    }
    let ours = run_ir(&putfloat_program(&bits), b"");
    let mut c = String::from(
        "#include <stdio.h>\n#include <string.h>\n#include <math.h>\nstatic const unsigned bits[] = {",
    );
    for b in &bits {
        write!(c, "{b}u,").unwrap();
    }
    c.push_str(
        "};\nint main(void) { for (unsigned i = 0; i < sizeof bits / sizeof bits[0]; i++) { float f; memcpy(&f, &bits[i], 4);\n\
         /* RV64's fcvt.d.s makes every NaN the canonical positive one */\n\
         double d = isnan(f) ? (double)NAN : (double)f; printf(\"%a\\n\", d); } return 0; }\n",
    );
    let Some(theirs) = run_c("putfloat", &c, b"") else {
        return;
    };
    let inputs: Vec<String> = bits.iter().map(|b| format!("{b:#010x}")).collect();
    assert_same_lines(&ours, &theirs, &inputs);
}

/// Random float text: decimal or hexadecimal, with and without exponents, long
/// mantissas, values near the subnormal and overflow boundaries.
fn random_float_text(rng: &mut Rng) -> String {
    let mut s = String::new();
    if rng.below(3) == 0 {
        s.push('-');
    }
    let hex = rng.below(2) == 0;
    let digits = if hex {
        "0123456789abcdefABCDEF"
    } else {
        "0123456789"
    };
    if hex {
        s.push_str(if rng.below(2) == 0 { "0x" } else { "0X" });
    }
    let long = rng.below(4) == 0;
    let int_len = rng.below(if long { 30 } else { 4 });
    for _ in 0..int_len {
        s.push(digits.as_bytes()[rng.below(digits.len() as u64) as usize] as char);
    }
    if int_len == 0 || rng.below(2) == 0 {
        s.push('.');
        let long = rng.below(3) == 0;
        let frac_len = 1 + rng.below(if long { 40 } else { 8 });
        for _ in 0..frac_len {
            s.push(digits.as_bytes()[rng.below(digits.len() as u64) as usize] as char);
        }
    }
    if rng.below(3) != 0 {
        s.push(if hex { 'p' } else { 'e' });
        let e = if hex {
            rng.below(320) as i64 - 170
        } else {
            rng.below(100) as i64 - 50
        };
        write!(s, "{e:+}").unwrap();
    }
    s
}

/// An IR program that reads `n` floats and prints each one's bits as an int.
fn getfloat_program(n: usize) -> String {
    format!(
        "declare @getfloat() -> f32\ndeclare @putint(i32) -> void\ndeclare @putch(i32) -> void\n\
         func @main() -> i32 {{\nbb0:\n  %slot = alloc f32\n  jump head(0)\nhead(%i: i32):\n  %c = slt %i, {n}\n  br %c, body, exit\n\
         body:\n  %f = call @getfloat()\n  store %f, %slot\n  %b = load i32, %slot\n  call @putint(%b)\n  call @putch(10)\n  %j = add %i, 1\n  jump head(%j)\n\
         exit:\n  ret 0\n}}\n"
    )
}

#[test]
fn getfloat_matches_glibc_scanf() {
    let mut rng = Rng(12345);
    let mut texts: Vec<String> = [
        "0x1.999999999999ap-4",
        "0x0.0p+0",
        "-0x1.6000000000000p+2",
        "1e-45",
        "7e-46",
        "3.4028235e38",
        "3.4028236e38",
        "1e39",
        "0x1.fffffefffffffp+127",
        "0x1.ffffffp127",
        "0x1p-150",
        "0x1.000001p-150",
        "inf",
        "-Infinity",
        "nan",
        ".5",
        "5.",
        "0x.8p1",
        "1.17549435e-38",
        "0x1.fffffcp-127",
        "2.5e-1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for _ in 0..3000 {
        texts.push(random_float_text(&mut rng));
    }
    let input = texts.join("\n") + "\n";
    let ours = run_ir(&getfloat_program(texts.len()), input.as_bytes());
    let c = format!(
        "#include <stdio.h>\n#include <string.h>\nint main(void) {{ for (int i = 0; i < {}; i++) {{ float f = 0; scanf(\"%a\", &f); int b; memcpy(&b, &f, 4); printf(\"%d\\n\", b); }} return 0; }}\n",
        texts.len()
    );
    let Some(theirs) = run_c("getfloat", &c, input.as_bytes()) else {
        return;
    };
    // glibc's NaN from "nan" is positive quiet, as ours; compare bits exactly.
    assert_same_lines(&ours, &theirs, &texts);
}

#[test]
fn getint_matches_glibc_scanf() {
    let mut rng = Rng(777);
    let mut texts: Vec<String> = [
        "0",
        "-0",
        "+5",
        "2147483647",
        "2147483648",
        "-2147483649",
        "4294967296",
        "99999999999999999999999",
        "-9223372036854775809",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for _ in 0..2000 {
        let long = rng.below(5) == 0;
        let len = 1 + rng.below(if long { 22 } else { 10 });
        let mut s = String::new();
        match rng.below(3) {
            0 => s.push('-'),
            1 => s.push('+'),
            _ => {}
        }
        for _ in 0..len {
            s.push((b'0' + rng.below(10) as u8) as char);
        }
        texts.push(s);
    }
    let n = texts.len();
    let input = texts.join(" \t\n ");
    let ir = format!(
        "declare @getint() -> i32\ndeclare @putint(i32) -> void\ndeclare @putch(i32) -> void\n\
         func @main() -> i32 {{\nbb0:\n  jump head(0)\nhead(%i: i32):\n  %c = slt %i, {n}\n  br %c, body, exit\n\
         body:\n  %v = call @getint()\n  call @putint(%v)\n  call @putch(10)\n  %j = add %i, 1\n  jump head(%j)\nexit:\n  ret 0\n}}\n"
    );
    let ours = run_ir(&ir, input.as_bytes());
    let c = format!("#include <stdio.h>\nint main(void) {{ for (int i = 0; i < {n}; i++) {{ int v = 0; scanf(\"%d\", &v); printf(\"%d\\n\", v); }} return 0; }}\n");
    let Some(theirs) = run_c("getint", &c, input.as_bytes()) else {
        return;
    };
    assert_same_lines(&ours, &theirs, &texts);
}

/// Escapes `s` for a `c"..."` IR string (with the NUL).
fn ir_string(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes().chain([b'\n', 0]) {
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
            o.push(b as char);
        } else {
            write!(o, "\\{b:02X}").unwrap();
        }
    }
    o
}

fn c_string(s: &str) -> String {
    format!("\"{}\\n\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[test]
fn putf_matches_glibc_printf() {
    let int_formats = [
        "%d", "%i", "%5d|", "%-5d|", "%05d", "%+d", "% d", "%.3d", "%.0d|", "%8.3d|", "%x", "%#x",
        "%X", "%#X", "%o", "%#o", "%u", "%c", "%hd", "%hhu", "%hhd", "%*d|", "%-*d|", "[%%%d%%]",
    ];
    let float_formats = [
        "%f", "%.0f", "%#.0f", "%.1f", "%.10f", "%10.4f|", "%-10.2f|", "%+.2f", "% f", "%010.3f",
        "%e", "%.0e", "%.3e", "%E", "%12.4e|", "%g", "%.0g", "%.3g", "%.10g", "%#g", "%#.3g",
        "%#.1g", "%G", "%a", "%.0a", "%.2a", "%A", "%#a", "%015a", "%F", "%.*f",
    ];
    let ints = [
        0i32,
        1,
        -1,
        42,
        -42,
        255,
        65,
        1000000,
        i32::MIN,
        i32::MAX,
        300,
        7,
    ];
    let floats: [u32; 23] = [
        0.0f32.to_bits(),
        (-0.0f32).to_bits(),
        1.5f32.to_bits(),
        0.1f32.to_bits(),
        0x4049_0fd0, /* 3.14159 */
        1e-5f32.to_bits(),
        123456.79f32.to_bits(),
        1e30f32.to_bits(),
        (-2.5f32).to_bits(),
        0.5f32.to_bits(),
        2.5f32.to_bits(),
        1e-40f32.to_bits(),
        f32::INFINITY.to_bits(),
        f32::NEG_INFINITY.to_bits(),
        0x7fc0_0000,
        0.125f32.to_bits(),
        999999.5f32.to_bits(),
        0.375f32.to_bits(),
        9.5f32.to_bits(),
        999.99994f32.to_bits(),
        99.96f32.to_bits(),
        9.96f32.to_bits(),
        0x38d1_b716, /* just below 1e-4 */
    ];
    let mut ir = String::from("declare @putf(ptr, ...) -> void\ndeclare @putch(i32) -> void\n");
    let mut body = String::new();
    let mut c = String::from(
        "#include <stdio.h>\n#include <string.h>\nstatic double f(unsigned b) { float x; memcpy(&x, &b, 4); return x; }\nint main(void) {\n",
    );
    let mut labels = Vec::new();
    for (k, fmt) in int_formats.iter().enumerate() {
        writeln!(
            ir,
            "global @i{k}: [i8; {}] = c\"{}\"",
            fmt.len() + 2,
            ir_string(fmt)
        )
        .unwrap();
        for &v in &ints {
            if fmt.contains('*') {
                writeln!(body, "  call @putf(@i{k}, 6, {v})").unwrap();
                writeln!(c, "printf({}, 6, {v});", c_string(fmt)).unwrap();
            } else {
                writeln!(body, "  call @putf(@i{k}, {v})").unwrap();
                writeln!(c, "printf({}, {v});", c_string(fmt)).unwrap();
            }
            labels.push(format!("{fmt} {v}"));
        }
    }
    for (k, fmt) in float_formats.iter().enumerate() {
        writeln!(
            ir,
            "global @f{k}: [i8; {}] = c\"{}\"",
            fmt.len() + 2,
            ir_string(fmt)
        )
        .unwrap();
        for &b in &floats {
            if fmt.contains('*') {
                writeln!(body, "  call @putf(@f{k}, 3, 0f{b:08X})").unwrap();
                writeln!(c, "printf({}, 3, f({b}u));", c_string(fmt)).unwrap();
            } else {
                writeln!(body, "  call @putf(@f{k}, 0f{b:08X})").unwrap();
                writeln!(c, "printf({}, f({b}u));", c_string(fmt)).unwrap();
            }
            labels.push(format!("{fmt} {:?}", f32::from_bits(b)));
        }
    }
    // Strings, with precision and width.
    writeln!(ir, "global @word: [i8; 6] = c\"hello\\00\"").unwrap();
    for (k, fmt) in ["%s", "%.2s", "%8s|", "%-8s|", "%.0s|"].iter().enumerate() {
        writeln!(
            ir,
            "global @s{k}: [i8; {}] = c\"{}\"",
            fmt.len() + 2,
            ir_string(fmt)
        )
        .unwrap();
        writeln!(body, "  call @putf(@s{k}, @word)").unwrap();
        writeln!(c, "printf({}, \"hello\");", c_string(fmt)).unwrap();
        labels.push(fmt.to_string());
    }
    write!(ir, "func @main() -> i32 {{\nbb0:\n{body}  ret 0\n}}\n").unwrap();
    c.push_str("return 0; }\n");
    let ours = run_ir(&ir, b"");
    let Some(theirs) = run_c("putf", &c, b"") else {
        return;
    };
    assert_same_lines(&ours, &theirs, &labels);
}
