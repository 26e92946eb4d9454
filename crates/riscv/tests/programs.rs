//! End-to-end tests of the back end: textual IR programs (`tests/programs/*.ir`, with
//! `.in` stdin and `.out` expected output in the contest format) and generated IR
//! (a loop body larger than a conditional branch's reach) are compiled to assembly,
//! linked with the SysY runtime by `riscv64-linux-gnu-gcc`, run under `qemu-riscv64`
//! and judged. The expected outputs come from equivalent C programs compiled by gcc
//! (the oracle sources are in `tests/programs/oracle/`).
//!
//! Without the cross toolchain every test passes with a skip message.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

fn scratch_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("riscv-programs-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}

/// Compiles `module`, links, runs with `stdin`, and judges against `expected`.
fn compile_and_run(
    name: &str,
    module: &ir::Module,
    stdin: Option<&Path>,
    expected: &[u8],
) -> Result<(), Failed> {
    ir::verify_module(module).map_err(|e| format!("invalid IR: {e}"))?;
    let asm =
        emit_o1(module).map_err(|e| format!("back end: {}", e.message().unwrap_or_default()))?;
    let h = match harness::Harness::global() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("skipping {name}: {e}");
            return Ok(());
        }
    };
    let dir = scratch_dir();
    let s = dir.join(format!("{name}.s"));
    let exe = dir.join(name);
    std::fs::write(&s, &asm).map_err(|e| e.to_string())?;
    h.link(&s, &exe)?;
    let opts = harness::RunOptions {
        timeout: Some(Duration::from_secs(120)),
        ..Default::default()
    };
    let run = h.run_with(&exe, stdin, &opts)?;
    run.judge(expected)
        .map_err(|e| format!("{e}\nassembly: {}", s.display()))?;
    let _ = std::fs::remove_file(&exe);
    let _ = std::fs::remove_file(&s);
    Ok(())
}

/// The assembly of `module` at -O1, with the verifier after every stage.
fn emit_o1(module: &ir::Module) -> Result<String, Failed> {
    riscv::emit_module(
        module,
        &riscv::Options {
            opt_level: 1,
            verify: true,
            ..Default::default()
        },
    )
    .map_err(|e| e.to_string().into())
}

fn ir_program_trial(path: PathBuf) -> Trial {
    let name = path.file_stem().unwrap().to_string_lossy().to_string();
    Trial::test(format!("ir::{name}"), move || {
        let src = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let module = ir::parse_module(&src).map_err(|e| format!("{}:{e}", path.display()))?;
        let expected = std::fs::read(path.with_extension("out")).map_err(|e| e.to_string())?;
        let input = path.with_extension("in");
        compile_and_run(
            &name,
            &module,
            input.exists().then_some(input.as_path()),
            &expected,
        )
    })
}

/// A loop whose body is `n` dependent additions: with large `n` the loop's
/// conditional branches span more than 4 KiB and must be relaxed.
fn big_loop_module(n: usize) -> (String, Vec<u8>) {
    let mut s = String::new();
    s.push_str("declare @putint(i32) -> void\n");
    s.push_str("func @main() -> i32 {\nbb0:\n  jump bb1(0, 1)\n");
    s.push_str("bb1(%i: i32, %x0: i32):\n  %c = slt %i, 50\n  br %c, bb2, bb3\nbb2:\n");
    for k in 1..=n {
        s.push_str(&format!("  %x{k} = add %x{}, {}\n", k - 1, k % 7 + 1));
    }
    s.push_str(&format!(
        "  %y = xor %x{n}, %i\n  %i1 = add %i, 1\n  jump bb1(%i1, %y)\n"
    ));
    s.push_str("bb3:\n  call @putint(%x0)\n  ret 0\n}\n");
    // The same computation on the host.
    let mut x: i32 = 1;
    for i in 0..50 {
        for k in 1..=n {
            x = x.wrapping_add((k % 7 + 1) as i32);
        }
        x ^= i;
    }
    (s, format!("{x}\n0\n").into_bytes())
}

/// A loop calling a function with `n` arguments (most of them on the stack, at offsets
/// beyond 12 bits), `3i` and `3i + 1` alternately; the callee sums them with weights.
fn many_arguments_module(n: usize) -> (String, Vec<u8>) {
    let params: Vec<String> = (0..n).map(|_| "i32".to_string()).collect();
    let mut s = String::from("declare @putint(i32) -> void\n");
    s.push_str(&format!("func @f({}) -> i32 {{\nbb0(", params.join(", ")));
    let names: Vec<String> = (0..n).map(|k| format!("%p{k}: i32")).collect();
    s.push_str(&names.join(", "));
    s.push_str("):\n  %s0 = add %p0, 0\n");
    for k in 1..n {
        s.push_str(&format!("  %w{k} = mul %p{k}, {}\n", k % 5 + 1));
        s.push_str(&format!("  %s{k} = add %s{}, %w{k}\n", k - 1));
    }
    s.push_str(&format!("  ret %s{}\n}}\n", n - 1));
    s.push_str("func @main() -> i32 {\nbb0:\n  jump bb1(0, 0)\n");
    s.push_str("bb1(%i: i32, %acc: i32):\n");
    s.push_str("  %a = mul %i, 3\n");
    let args: Vec<String> = (0..n).map(|k| format!("%a{}", k % 2)).collect();
    s.push_str("  %a0 = add %a, 0\n  %a1 = add %a, 1\n");
    s.push_str(&format!("  %r = call @f({})\n", args.join(", ")));
    s.push_str("  %acc1 = xor %acc, %r\n  %i1 = add %i, 1\n  %c = slt %i1, 4\n");
    s.push_str("  br %c, bb1(%i1, %acc1), bb2\nbb2:\n  call @putint(%acc1)\n  ret 0\n}\n");
    let mut acc: i32 = 0;
    for i in 0..4i32 {
        let mut r: i32 = 0;
        for k in 0..n {
            let a = i * 3 + (k % 2) as i32;
            let w = if k == 0 { 1 } else { (k % 5 + 1) as i32 };
            r = r.wrapping_add(a.wrapping_mul(w));
        }
        acc ^= r;
    }
    (s, format!("{acc}\n0\n").into_bytes())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(programs_dir())
        .expect("tests/programs exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
        .collect();
    files.sort();
    for f in files {
        trials.push(ir_program_trial(f));
    }
    for n in [100usize, 3000] {
        trials.push(Trial::test(format!("generated::big_loop_{n}"), move || {
            let (src, expected) = big_loop_module(n);
            let module = ir::parse_module(&src).map_err(|e| e.to_string())?;
            let asm = riscv::emit_module(&module, &riscv::Options::default())
                .map_err(|e| e.to_string())?;
            if n >= 3000 && !asm.contains(".LBX") {
                return Err("expected a relaxed branch in a loop body over 4 KiB".into());
            }
            compile_and_run(&format!("big_loop_{n}"), &module, None, &expected)
        }));
    }
    trials.push(Trial::test("generated::many_stack_arguments", || {
        let (src, expected) = many_arguments_module(700);
        let module = ir::parse_module(&src).map_err(|e| e.to_string())?;
        let asm = emit_o1(&module)?;
        // Outgoing arguments beyond 2 KiB are addressed from a few shared bases
        // (sp + 2048, sp + 4096) computed before the loop, not one address each
        // computed in the loop (or hoisted, and spilled).
        let main = &asm[asm.find("main:").ok_or("no main")?..];
        let call = main.find("call f").ok_or("no call")?;
        let body = &main[main[..call].rfind(".LBB").ok_or("no loop label")?..call];
        let sp_adds = body.lines().filter(|l| l.contains(", sp, ")).count();
        if sp_adds > 0 || body.contains("ld ") {
            return Err(format!("{sp_adds} additions to sp, or reloads, in the loop").into());
        }
        compile_and_run("many_stack_arguments", &module, None, &expected)
    }));
    trials.push(Trial::test("ir::leafpressure_gives_ra_a_value", || {
        // The leaf `churn` carries more integer values through its loop than the
        // caller- and callee-saved registers hold: `ra` takes one too, saved by
        // the prologue and restored before `ret` (the run in `ir::leafpressure`
        // shows the return address survives).
        let path = programs_dir().join("leafpressure.ir");
        let src = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let module = ir::parse_module(&src).map_err(|e| e.to_string())?;
        let asm = emit_o1(&module)?;
        let start = asm.find("churn:").ok_or("no churn")?;
        let end = asm[start..].find("main:").map_or(asm.len(), |e| start + e);
        let churn: Vec<&str> = asm[start..end].lines().map(str::trim).collect();
        let written = |l: &&str| {
            l.split_once(' ').is_some_and(|(op, rest)| {
                !op.starts_with('s') && op != "ld" && rest.starts_with("ra,")
            })
        };
        if !churn.iter().any(|l| l.starts_with("sd ra,")) || !churn.iter().any(written) {
            return Err(
                format!("`ra` is not saved and given a value:\n{}", churn.join("\n")).into(),
            );
        }
        Ok(())
    }));
    trials.push(Trial::test("generated::pointer_loop_addressing", || {
        // A loop over a pointer to `a[k]`, reading `a[k + 600]` and `a[k + 601]`
        // (2400 and 2404 bytes on: beyond a 12-bit offset), tested against
        // `&a[100]`. The end pointer is computed once before the loop, and both far
        // loads share one `add` for their upper offset bits: the loop body has that
        // one register `add` (and the pointer's `addi` step).
        let src = "declare @putint(i32) -> void\n\
            global @a: [i32; 1000] = zeroinit\n\
            func @main() -> i32 {\nbb0:\n  %s = gep @a, 0, 4\n  %e = gep @a, 100, 4\n\
            jump bb1(%s, 7)\nbb1(%p: ptr, %x: i32):\n  store %x, %p\n\
            %q = gep %p, 600, 4\n  %u = load i32, %q\n  %r = gep %p, 601, 4\n\
            %w = load i32, %r\n  %y = xor %x, %u\n  %z = xor %y, %w\n\
            %x1 = mul %z, 3\n  %n = gep %p, 1, 4\n  %c = slt %n, %e\n\
            br %c, bb1(%n, %x1), bb2\nbb2:\n  call @putint(%x1)\n  ret 0\n}\n";
        let module = ir::parse_module(src).map_err(|e| e.to_string())?;
        let asm = emit_o1(&module)?;
        let main = &asm[asm.find("main:").ok_or("no main")?..];
        let head = main.find("xor").ok_or("no xor")?;
        let start = main[..head].rfind(".LBB").ok_or("no loop label")?;
        let end = start + main[start..].find("\tblt").ok_or("no latch")?;
        let adds = main[start..end]
            .lines()
            .filter(|l| l.trim_start().starts_with("add "))
            .count();
        if adds != 1 || main[start..end].contains("lla") {
            return Err(format!("{adds} adds in the loop body:\n{}", &main[start..end]).into());
        }
        let mut x: i32 = 7;
        for _ in 0..100 {
            x = x.wrapping_mul(3);
        }
        compile_and_run(
            "pointer_loop_addressing",
            &module,
            None,
            format!("{x}\n0\n").as_bytes(),
        )
    }));
    libtest_mimic::run(&args, trials).exit();
}
