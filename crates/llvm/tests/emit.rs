//! Hand-written IR (textual form, `docs/ir-text.md`) through `llvm::emit_module`:
//! every output must pass `opt-14 -verify` with no diagnostics, and programs are built
//! with `clang-14` at -O0 and -O2 against the host runtime and run, so the translation
//! is checked for meaning, not only for form. Skipped with a message when the LLVM 14
//! tools are missing.

mod common;

use std::fs;
use std::time::Duration;

use ir::{FuncBuilder, Function, Module, Signature, Type};

fn parse(text: &str) -> Module {
    ir::parse_module(text).unwrap_or_else(|e| panic!("bad test IR: {e}\n{text}"))
}

/// Emits `m` (for clang's target) and checks it with `opt-14 -verify`; returns the
/// LLVM text (also when the tools are missing, so the textual assertions still run).
fn emit_verified(m: &Module) -> String {
    match common::tools() {
        Ok(tools) => {
            let triple = common::host_triple(tools).unwrap();
            let ll = llvm::emit_module_for(m, triple);
            let dir = common::scratch_dir();
            let r = common::verify(tools, &ll, &dir);
            fs::remove_dir_all(&dir).ok();
            if let Err(e) = r {
                panic!("{e}\n--- emitted ---\n{ll}");
            }
            ll
        }
        Err(e) => {
            eprintln!("skipping opt-14 -verify: {e}");
            llvm::emit_module(m)
        }
    }
}

/// Emits, verifies, then builds at -O0 and -O2, runs with `stdin` and checks stdout
/// and the exit status.
fn check_run(text: &str, stdin: &str, stdout: &str, status: i32) -> String {
    let ll = emit_verified(&parse(text));
    let tools = match common::tools() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("skipping the run: {e}");
            return ll;
        }
    };
    let dir = common::scratch_dir();
    let input = dir.join("stdin");
    fs::write(&input, stdin).unwrap();
    for level in [0, 2] {
        let exe = common::build(tools, &ll, level, &dir)
            .unwrap_or_else(|e| panic!("{e}\n--- emitted ---\n{ll}"));
        let out = common::run(&exe, Some(&input), Duration::from_secs(30)).unwrap();
        let got = String::from_utf8_lossy(&out.stdout);
        assert_eq!(got, stdout, "stdout at -O{level}\n--- emitted ---\n{ll}");
        assert_eq!(
            common::exit_status(&out),
            Ok(status),
            "exit status at -O{level}"
        );
    }
    fs::remove_dir_all(&dir).ok();
    ll
}

const RUNTIME: &str = "
declare @getint() -> i32
declare @getfloat() -> f32
declare @getarray(ptr) -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void
declare @putfloat(f32) -> void
declare @putarray(i32, ptr) -> void
declare @putf(ptr, ...) -> void
declare @_sysy_starttime(i32) -> void
declare @_sysy_stoptime(i32) -> void

func @show(i32) -> void {
bb0(%0: i32):
  call @putint(%0)
  call @putch(32)
  ret
}
";

#[test]
fn integer_arithmetic_wraps_and_shifts_are_modulo_32() {
    let text = format!(
        "{RUNTIME}
func @main() -> i32 {{
bb0:
  %a = call @getint()
  %b = call @getint()
  %s = call @getint()
  %0 = add %a, %b
  call @show(%0)
  %1 = sub %a, %b
  call @show(%1)
  %2 = mul %a, %b
  call @show(%2)
  %3 = sdiv %a, %b
  call @show(%3)
  %4 = srem %a, %b
  call @show(%4)
  %5 = and %a, %b
  call @show(%5)
  %6 = or %a, %b
  call @show(%6)
  %7 = xor %a, %b
  call @show(%7)
  %8 = shl %a, %s
  call @show(%8)
  %9 = lshr %b, %s
  call @show(%9)
  %10 = ashr %b, %s
  call @show(%10)
  %11 = shl %a, 34
  call @show(%11)
  %12 = mul %a, 2147483647
  %13 = add %12, 2147483647
  call @show(%13)
  %14 = eq %a, %b
  %15 = ne %a, %b
  %16 = slt %a, %b
  %17 = sle %a, %a
  %18 = sgt %a, %b
  %19 = sge %b, %a
  call @show(%14)
  call @show(%15)
  call @show(%16)
  call @show(%17)
  call @show(%18)
  call @show(%19)
  ret %13
}}"
    );
    // 7*(2^31-1) + (2^31-1) = 8*(2^31-1) wraps to -8; the exit status is its low byte.
    check_run(
        &text,
        "7 -3 33",
        "4 10 -21 -2 1 5 -1 -6 14 2147483646 -2 28 -8 0 1 0 1 1 0 ",
        248,
    );
}

#[test]
fn float_arithmetic_and_comparisons_follow_c() {
    let text = format!(
        "{RUNTIME}
func @main() -> i32 {{
bb0:
  %x = call @getfloat()
  %b = call @getint()
  %y = sitofp %b
  %0 = fadd %x, %y
  call @putfloat(%0)
  call @putch(32)
  %1 = fsub %x, %y
  call @putfloat(%1)
  call @putch(32)
  %2 = fmul %x, %y
  call @putfloat(%2)
  call @putch(32)
  %3 = fdiv %x, %y
  call @putfloat(%3)
  call @putch(32)
  %4 = fneg %x
  call @putfloat(%4)
  call @putch(32)
  %5 = fptosi %2
  call @show(%5)
  %z = fsub %x, %x
  %nan = fdiv %z, %z
  %6 = feq %nan, %nan
  %7 = fne %nan, %nan
  %8 = flt %nan, %x
  %9 = fge %nan, %x
  %10 = fne %x, %x
  %11 = fle %y, %x
  %12 = fgt %x, 0.1
  call @show(%6)
  call @show(%7)
  call @show(%8)
  call @show(%9)
  call @show(%10)
  call @show(%11)
  call @show(%12)
  %13 = fmul %x, 0.1
  %14 = fadd %13, 1e-40
  %15 = feq %14, %13
  call @show(%15)
  ret 0
}}"
    );
    check_run(
        &text,
        "1.5 -3",
        "-0x1.8p+0 0x1.2p+2 -0x1.2p+2 -0x1p-1 -0x1.8p+0 -4 0 1 0 0 0 1 1 1 ",
        0,
    );
}

#[test]
fn block_arguments_become_phis_with_split_edges() {
    let text = format!(
        "{RUNTIME}
; Tail recursion as a jump back to the entry block: its parameters become phis.
func @tri(i32, i32) -> i32 {{
bb0(%n: i32, %acc: i32):
  %c = sgt %n, 0
  br %c, bb1, bb2
bb1:
  %acc2 = add %acc, %n
  %n2 = sub %n, 1
  jump bb0(%n2, %acc2)
bb2:
  ret %acc
}}

; Both arms to one block with different arguments: one arm must be split.
func @pick(i32) -> i32 {{
bb0(%c: i32):
  br %c, bb1(10), bb1(20)
bb1(%r: i32):
  ret %r
}}

; Both arms with the same arguments: just a jump.
func @same(i32) -> i32 {{
bb0(%c: i32):
  br %c, bb1(%c, 5), bb1(%c, 5)
bb1(%r: i32, %s: i32):
  %t = add %r, %s
  ret %t
}}

; Swapping parameters: phis read their inputs in parallel.
func @fib(i32) -> i32 {{
bb0(%n: i32):
  jump bb1(0, 1, %n)
bb1(%a: i32, %b: i32, %k: i32):
  %c = sgt %k, 0
  br %c, bb2, bb3
bb2:
  %s = add %a, %b
  %k2 = sub %k, 1
  jump bb1(%b, %s, %k2)
bb3:
  ret %a
; Unreachable, with a parameter no edge defines: not emitted.
bb4(%u: i32):
  jump bb1(%u, %u, %u)
}}

func @main() -> i32 {{
bb0:
  %n = call @getint()
  %0 = call @tri(%n, 0)
  call @show(%0)
  %1 = call @pick(%n)
  call @show(%1)
  %z = sub %n, %n
  %2 = call @pick(%z)
  call @show(%2)
  %3 = call @same(%n)
  call @show(%3)
  %4 = call @fib(%n)
  call @show(%4)
  ret %4
}}"
    );
    let ll = check_run(&text, "10", "55 10 20 15 55 ", 55);
    assert!(ll.contains("phi i32 [ %a0, %entry ]"), "{ll}");
    assert!(
        ll.contains("define internal signext i32 @tri(i32 signext %a0, i32 signext %a1)"),
        "{ll}"
    );
    assert!(ll.contains(".s:"), "a split block: {ll}");
    assert!(!ll.contains("%v4 = phi"), "unreachable block emitted: {ll}");
}

#[test]
fn i64_operations_and_conversions() {
    let text = format!(
        "{RUNTIME}
func @main() -> i32 {{
bb0:
  %a = call @getint()
  %m = call @getint()
  %x = call @getfloat()
  %wa = sext %a
  %wm = sext %m
  %p = mul64 %wa, %wa
  %r = srem64 %p, %wm
  %0 = trunc %r
  call @show(%0)
  %three = sext 3
  %w = mul64 %p, %three
  %1 = trunc %w
  call @show(%1)
  %g = sext 1000000000
  %q = sdiv64 %w, %g
  %2 = trunc %q
  call @show(%2)
  %d = sub64 %q, %wa
  %3 = trunc %d
  call @show(%3)
  %one = sext 1
  jump bb1(%one, 0)
bb1(%acc: i64, %i: i32):
  %c = slt %i, 39
  br %c, bb2, bb3
bb2:
  %next = mul64 %acc, %three
  %e = add64 %next, %acc
  %next2 = sub64 %e, %acc
  %i1 = add %i, 1
  jump bb1(%next2, %i1)
bb3:
  %lo = srem64 %acc, %g
  %4 = trunc %lo
  call @show(%4)
  %5 = fbits %x
  call @show(%5)
  %y = fneg %x
  %6 = fbits %y
  call @show(%6)
  ret %0
}}"
    );
    // Computed independently (Python): 2e9^2 mod (1e9+7) = 196; 3 * 4e18 wraps to
    // -6446744073709551616 (low 32 bits -659554304); / 1e9 = -6446744073 (low bits
    // 2143190519); minus 2e9: -8446744073 (low bits 143190519); 3^39 mod 1e9 =
    // 18976267; the bits of 1.0f and -1.0f.
    let ll = check_run(
        &text,
        "2000000000 1000000007 1.0",
        "196 -659554304 2143190519 143190519 18976267 1065353216 -1082130432 ",
        196,
    );
    for want in [
        "= sext i32 %v0 to i64",
        "= mul i64 ",
        "= srem i64 ",
        "= sdiv i64 ",
        "= add i64 ",
        "= sub i64 ",
        "= trunc i64 ",
        "= bitcast float %v2 to i32",
        "= phi i64 ",
    ] {
        assert!(ll.contains(want), "{want}: {ll}");
    }
}

#[test]
fn memory_globals_and_pointers() {
    let text = format!(
        "{RUNTIME}
global @n: i32 = 5
global @big: [i32; 100000] = [3, 0, 4]
global @fs: [f32; 3] = [0.5, -2.25]
global @zero: [f32; 1000000] = zeroinit

; Sums a[0..n] through a pointer parameter.
func @sum(ptr, i32) -> i32 {{
bb0(%a: ptr, %n: i32):
  jump bb1(0, 0)
bb1(%i: i32, %s: i32):
  %c = slt %i, %n
  br %c, bb2, bb3
bb2:
  %p = gep %a, %i, 4
  %v = load i32, %p
  %s2 = add %s, %v
  %i2 = add %i, 1
  jump bb1(%i2, %s2)
bb3:
  ret %s
}}

func @main() -> i32 {{
bb0:
  %arr = alloc [i32; 10]
  %k = call @getarray(%arr)
  %0 = call @sum(%arr, %k)
  call @show(%0)
  call @putarray(%k, %arr)
  jump bb1
bb1:
  ; An alloc outside the entry block: one slot for the whole call.
  %slot = alloc [ptr; 1]
  %end = gep %arr, %k, 4
  store %end, %slot
  %p = load ptr, %slot
  %m1 = gep %p, -1, 4
  %last = load i32, %m1
  call @show(%last)
  %g = load i32, @n
  %big2 = gep @big, 2, 4
  %b2 = load i32, %big2
  %bend = gep @big, 99999, 4
  store %g, %bend
  %b3 = load i32, %bend
  %x = add %b2, %b3
  call @show(%x)
  %f1p = gep @fs, 1, 4
  %f1 = load f32, %f1p
  %zp = gep @zero, 999999, 4
  %z = load f32, %zp
  %f = fadd %f1, %z
  %fi = fptosi %f
  call @show(%fi)
  %fl = alloc f32
  store 0.75, %fl
  %f2 = load f32, %fl
  %f3 = fadd %f2, %f
  call @putfloat(%f3)
  ret 0
}}"
    );
    let ll = check_run(&text, "4 1 2 3 40", "46 4: 1 2 3 40\n40 9 -2 -0x1.8p+0", 0);
    assert!(
        ll.contains("<{ [3 x i32], [99997 x i32] }>"),
        "a sparse initialiser: {ll}"
    );
    assert!(ll.contains("[1000000 x float] zeroinitializer"), "{ll}");
    assert!(ll.contains("alloca [1 x i8*], align 8"), "{ll}");
}

#[test]
fn putf_promotes_floats_and_timers_are_plain_calls() {
    let text = format!(
        "{RUNTIME}
global @fmt: [i8; 11] = c\"%d %f %c!\\0A\\00\"

func @main() -> i32 {{
bb0:
  call @_sysy_starttime(3)
  %x = call @getfloat()
  call @putf(@fmt, 42, %x, 65)
  call @_sysy_stoptime(4)
  ret 3
}}"
    );
    let ll = check_run(&text, "2.5", "42 2.500000 A!\n", 3);
    assert!(ll.contains("declare void @putf(i8*, ...)"), "{ll}");
    assert!(ll.contains("fpext float"), "{ll}");
    assert!(ll.contains("call void (i8*, ...) @putf("), "{ll}");
    assert!(
        ll.contains("declare void @_sysy_starttime(i32 signext)"),
        "{ll}"
    );
    assert!(ll.contains("i32 signext 42, double %t"), "{ll}");
}

#[test]
fn user_names_never_capture_c_library_symbols() {
    // A SysY program may define `printf` or a global `stdout`; internal linkage keeps
    // the runtime's own printf working.
    let text = format!(
        "{RUNTIME}
global @stdout: i32 = 7

func @printf(i32) -> i32 {{
bb0(%0: i32):
  %1 = mul %0, 2
  ret %1
}}

func @main() -> i32 {{
bb0:
  %v = load i32, @stdout
  %0 = call @printf(%v)
  call @putint(%0)
  ret 0
}}"
    );
    let ll = check_run(&text, "", "14", 0);
    assert!(
        ll.contains("define internal signext i32 @printf(i32"),
        "{ll}"
    );
    assert!(ll.contains("define signext i32 @main()"), "{ll}");
}

#[test]
fn no_fast_math_flags_and_exact_float_constants() {
    let text = "
func @f(f32, f32, f32) -> f32 {
bb0(%a: f32, %b: f32, %c: f32):
  %0 = fmul %a, %b
  %1 = fadd %0, %c
  %2 = fmul %1, 0.1
  %3 = fsub %2, -0.0
  %4 = fdiv %3, inf
  %5 = fadd %4, nan
  ret %5
}";
    let ll = emit_verified(&parse(text));
    for flag in [
        "contract", "fast", "reassoc", "afn", "nnan", "ninf", "nsz", "arcp",
    ] {
        assert!(!ll.contains(flag), "`{flag}` in {ll}");
    }
    assert!(
        ll.contains("%v5 = fmul float %v4, 0x3FB99999A0000000"),
        "{ll}"
    );
    assert!(ll.contains("0x8000000000000000"), "{ll}");
    assert!(ll.contains("0x7FF0000000000000"), "{ll}");
    assert!(ll.contains("bitcast (i32 2143289344 to float)"), "{ll}");
}

#[test]
fn output_is_deterministic() {
    let text = format!(
        "{RUNTIME}
global @a: [i32; 4] = [1, 2]
func @main() -> i32 {{
bb0:
  %0 = call @getint()
  br %0, bb1(%0), bb1(1)
bb1(%1: i32):
  %p = gep @a, %1, 4
  %2 = load i32, %p
  ret %2
}}"
    );
    emit_verified(&parse(&text));
    let first = llvm::emit_module(&parse(&text));
    for _ in 0..3 {
        assert_eq!(llvm::emit_module(&parse(&text)), first);
    }
}

#[test]
fn null_pointer_constants_and_odd_structure_do_not_break_the_output() {
    let mut m = Module::new();
    let ptr_sig = Signature {
        params: vec![Type::Ptr],
        ret: Type::Void,
        variadic: false,
    };
    let callee = m.declare_function("takes_ptr", ptr_sig);
    let mut f = Function::new(
        "main",
        Signature {
            params: vec![],
            ret: Type::I32,
            variadic: false,
        },
    );
    let b0 = f.append_new_block();
    let b1 = f.append_new_block();
    let b2 = f.append_new_block();
    let mut fb = FuncBuilder::new(&mut f);
    fb.switch_to_block(b0);
    let null = fb.func.zero(Type::Ptr);
    fb.call(callee, vec![null], Type::Void);
    let one = fb.iconst(1);
    fb.br(one, b1, vec![], b2, vec![]);
    // b1 has no terminator; b2 is a `ret` without a value in an i32 function.
    fb.switch_to_block(b1);
    fb.binary(ir::BinOp::Add, one, one);
    fb.switch_to_block(b2);
    fb.ret(None);
    m.add_function(f);
    let ll = emit_verified(&m);
    assert!(ll.contains("call void @takes_ptr(i8* null)"), "{ll}");
    assert!(ll.contains("unreachable"), "{ll}");
    assert!(ll.contains("ret i32 0"), "{ll}");
    // An empty module is fine too.
    emit_verified(&Module::new());
}

/// `emit_module_riscv64` (`sysyc --emit llvm`) names the contest's machine as clang-14
/// does for `--target=riscv64-linux-gnu -march=rv64gc -mabi=lp64d`: the same triple,
/// data layout, target features and ABI flag. LLVM accepts it (`opt-14 -verify`),
/// `llc-14 -mattr=+m,+a,+f,+d,+c` (no -march, no -target-abi) makes RV64GC code
/// passing floats in float registers, and that links with the RISC-V runtime and
/// runs under qemu when the cross toolchain is installed.
#[test]
fn riscv64_output_has_the_triple_and_data_layout_of_clang() {
    let text = format!(
        "{RUNTIME}
func @twice(f32) -> f32 {{
bb0(%x: f32):
  %0 = fadd %x, %x
  ret %0
}}
func @main() -> i32 {{
bb0:
  %0 = call @twice(1.25)
  call @putfloat(%0)
  call @putch(10)
  ret 3
}}"
    );
    let m = parse(&text);
    let ll = llvm::emit_module_riscv64(&m);
    let lines: Vec<&str> = ll.lines().collect();
    assert_eq!(
        lines[1],
        "target datalayout = \"e-m:e-p:64:64-i64:64-i128:128-n64-S128\""
    );
    assert_eq!(lines[2], "target triple = \"riscv64-unknown-linux-gnu\"");
    // Every definition (not the declarations) carries the target features.
    let defines: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("define "))
        .collect();
    assert_eq!(defines.len(), 3, "{ll}");
    assert!(defines.iter().all(|l| l.ends_with(") #0 {")), "{ll}");
    assert!(lines
        .iter()
        .any(|l| l.starts_with("declare ") && !l.contains('#')));
    assert!(ll.contains("attributes #0 = { \"target-features\"=\"+64bit,+a,+c,+d,+f,+m\" }"));
    assert!(ll.contains("!0 = !{i32 1, !\"target-abi\", !\"lp64d\"}"));
    // The target-neutral output is unchanged.
    assert!(!llvm::emit_module(&m).contains("target"));

    let tools = match common::tools() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("skipping the LLVM checks: {e}");
            return;
        }
    };
    // What clang-14 writes for the same target.
    let mut clang = std::process::Command::new(&tools.clang)
        .args([
            "--target=riscv64-linux-gnu",
            "-march=rv64gc",
            "-mabi=lp64d",
            "-S",
            "-emit-llvm",
            "-x",
            "c",
            "-",
            "-o",
            "-",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run clang-14");
    {
        use std::io::Write;
        let mut stdin = clang.stdin.take().unwrap();
        stdin
            .write_all(b"float twice(float x) { return x + x; }\n")
            .unwrap();
    }
    let c = clang.wait_with_output().unwrap();
    assert!(c.status.success());
    let c = String::from_utf8_lossy(&c.stdout).into_owned();
    for line in [lines[1], lines[2], "!{i32 1, !\"target-abi\", !\"lp64d\"}"] {
        let tail = line.split(" = ").last().unwrap_or(line);
        assert!(c.contains(tail), "clang-14 does not write {line}:\n{c}");
    }
    assert!(
        c.contains("\"target-features\"=\"+64bit,+a,+c,+d,+f,+m\""),
        "{c}"
    );

    let dir = common::scratch_dir();
    common::verify(tools, &ll, &dir).unwrap_or_else(|e| panic!("{e}\n{ll}"));
    let ll_path = dir.join("riscv.ll");
    let asm = dir.join("riscv.s");
    fs::write(&ll_path, &ll).unwrap();
    let out = std::process::Command::new(&tools.llc)
        .args(["-O2", "-mattr=+m,+a,+f,+d,+c"])
        .arg(&ll_path)
        .arg("-o")
        .arg(&asm)
        .output()
        .expect("run llc-14");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.is_empty(), "llc-14: {err}");
    let s = fs::read_to_string(&asm).unwrap();
    assert!(
        s.contains("\"rv64i2p0_m2p0_a2p0_f2p0_d2p0_c2p0\""),
        "not RV64GC:\n{s}"
    );
    assert!(s.contains("fadd.s\tfa0, fa0, fa0"), "not lp64d:\n{s}");
    if let Ok(h) = harness::Harness::global() {
        let exe = dir.join("riscv");
        h.link(&asm, &exe).unwrap();
        let r = h
            .run_with(&exe, None, &harness::RunOptions::default())
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&r.stdout), "0x1.4p+1\n");
        assert_eq!(r.exit_code, 3);
    } else {
        eprintln!("skipping the qemu run: no RISC-V toolchain");
    }
    fs::remove_dir_all(&dir).ok();
}
