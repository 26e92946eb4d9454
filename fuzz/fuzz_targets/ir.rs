//! Fuzz target `ir`: arbitrary bytes as a textual IR module.
//!
//! `ir::parse_module` and `ir::verify_module` must never panic. When the module parses
//! and verifies (what `sysyc x.ir` accepts), every later stage must accept it without
//! panicking:
//!
//! - the interpreter runs it with a small step limit (its errors are the program's
//!   traps, not crashes);
//! - the RISC-V back end compiles it at -O0 without panicking or reporting an error
//!   (what the verifier accepts, the back end must compile);
//! - the -O2 pipeline runs with the verifier after every pass (a verifier failure is a
//!   crash: the passes broke valid IR), then the optimised module is interpreted and
//!   compiled at -O2 again.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Interpreter step limit: enough for the seed programs' loops, small enough that an
/// infinite loop costs little.
const MAX_STEPS: u64 = 20_000;

/// Modules whose globals need more than this are not interpreted: the interpreter
/// allocates (lazily zeroed) memory for all globals up front, and a 3 GiB global is a
/// legitimate program, not a memory blow-up of the compiler.
const MAX_INTERPRETED_GLOBALS: u64 = 64 << 20;

const STACK: usize = 1 << 30;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let src = src.to_owned();
    let worker = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || check(&src))
        .expect("spawn worker thread");
    if let Err(panic) = worker.join() {
        std::panic::resume_unwind(panic);
    }
});

fn check(src: &str) {
    let Ok(mut module) = ir::parse_module(src) else {
        return;
    };
    if ir::verify_module(&module).is_err() {
        return;
    }
    interpret(&module);
    backend(&module, 0);
    let passes = opt::pipeline(2);
    let mut opts = opt::PassOptions {
        verify_each: true,
        ..Default::default()
    };
    if let Err(e) = opt::run_passes(&mut module, &passes, &mut opts) {
        panic!("-O2 pipeline broke valid IR: {e}");
    }
    interpret(&module);
    backend(&module, 2);
}

fn backend(module: &ir::Module, opt_level: u8) {
    if let Err(e) = riscv::emit_module(module, &riscv::Options { opt_level }) {
        panic!("riscv back end failed on valid IR at -O{opt_level}: {e}");
    }
}

fn interpret(module: &ir::Module) {
    let globals: u64 = module.globals.values().map(|g| g.size()).sum();
    if globals > MAX_INTERPRETED_GLOBALS {
        return;
    }
    let run = interp::RunOptions {
        max_steps: Some(MAX_STEPS),
        stack_limit_bytes: 1 << 20,
        wall_clock_timers: false,
        ..Default::default()
    };
    let _ = interp::run_module(module, b"1 2 3\n", &run);
}
