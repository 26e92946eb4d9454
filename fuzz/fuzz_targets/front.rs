//! Fuzz target `front`: arbitrary bytes as a SysY source file.
//!
//! `front::check` must never panic. When it accepts the program, the rest of the
//! compiler must handle it too: lowering must produce IR that verifies, the pass
//! pipeline must run with the verifier after every pass, and the RISC-V back end must
//! emit assembly without panicking or reporting an error. Any failure is turned into a
//! panic, which libFuzzer records as a crash.
//!
//! The input's length picks the configuration, so that every mode is exercised without
//! spending input bytes on it: bit 0 chooses Braun SSA or memory form (+ mem2reg in the
//! pipeline), bit 1 chooses -O0 (no passes) or -O2.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// The compiler recurses on nesting; like the `sysyc` driver, run it on a thread with
/// a large stack so that only unbounded recursion counts as a crash.
const STACK: usize = 1 << 30;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let src = src.to_owned();
    let memory_form = data.len() & 1 == 1;
    let opt_level = if data.len() & 2 == 0 { 2 } else { 0 };
    let worker = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || compile(&src, memory_form, opt_level))
        .expect("spawn worker thread");
    if let Err(panic) = worker.join() {
        std::panic::resume_unwind(panic);
    }
});

fn compile(src: &str, memory_form: bool, opt_level: u8) {
    let Ok(program) = front::check("fuzz.sy", src) else {
        return;
    };
    let mut module = lower::lower_program(&program, memory_form);
    if let Err(e) = ir::verify_module(&module) {
        panic!("lowering produced invalid IR:\n{e}");
    }
    if memory_form && opt_level == 0 {
        // What the driver does for `--ssa memory`: mem2reg before any pipeline.
        for (_, f) in module.funcs.iter_mut() {
            if !f.is_declaration() {
                opt::mem2reg(f);
            }
        }
        if let Err(e) = ir::verify_module(&module) {
            panic!("mem2reg produced invalid IR:\n{e}");
        }
    }
    let passes = opt::pipeline(opt_level);
    let mut opts = opt::PassOptions {
        verify_each: true,
        ..Default::default()
    };
    if let Err(e) = opt::run_passes(&mut module, &passes, &mut opts) {
        panic!("-O{opt_level} pipeline failed: {e}");
    }
    if let Err(e) = riscv::emit_module(&module, &riscv::Options { opt_level }) {
        panic!("riscv back end failed on valid IR: {e}");
    }
}
