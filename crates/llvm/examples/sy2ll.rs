//! Debugging aid: SysY source to LLVM IR without the driver,
//! `cargo run -p llvm --example sy2ll -- FILE.sy [TRIPLE] > FILE.ll`.
//! (The driver's `sysyc --emit llvm` is the supported way.)

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first().cloned() else {
        eprintln!("usage: sy2ll FILE.sy [TRIPLE]");
        return ExitCode::FAILURE;
    };
    let triple = args.get(1).cloned();
    // The front end recurses on nested input: run it on a big stack.
    let worker = std::thread::Builder::new().stack_size(256 << 20).spawn(
        move || -> Result<String, String> {
            let src = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
            let program = front::check(&path, &src).map_err(|d| d.render(&path, &src))?;
            let module = lower::lower_program(&program, false);
            Ok(match &triple {
                Some(t) => llvm::emit_module_for(&module, t),
                None => llvm::emit_module(&module),
            })
        },
    );
    match worker.map(|w| w.join()) {
        Ok(Ok(Ok(ll))) => {
            print!("{ll}");
            ExitCode::SUCCESS
        }
        Ok(Ok(Err(e))) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
        _ => {
            eprintln!("the compiler thread failed");
            ExitCode::FAILURE
        }
    }
}
