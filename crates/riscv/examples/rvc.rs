//! Debugging aid: `rvc FILE.{ir,sy} [-o OUT.s]` prints the assembly the back end
//! produces for a textual IR module, or for a SysY program lowered without
//! optimisation (front + lower, Braun SSA).

use std::process::ExitCode;

fn main() -> ExitCode {
    // Deeply nested programs recurse in the front end: give it a big stack.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(run)
        .expect("spawn compiler thread")
        .join()
        .unwrap_or(ExitCode::from(101))
}

fn run() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(input) = args.first() else {
        eprintln!("usage: rvc FILE.{{ir,sy}} [-o OUT.s]");
        return ExitCode::from(2);
    };
    let out = args
        .iter()
        .position(|a| a == "-o")
        .and_then(|i| args.get(i + 1));
    let src = match std::fs::read_to_string(input) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{input}: {e}");
            return ExitCode::from(1);
        }
    };
    let module = if input.ends_with(".ir") {
        match ir::parse_module(&src) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{input}:{e}");
                return ExitCode::from(1);
            }
        }
    } else {
        match front::check(input, &src) {
            Ok(p) => lower::lower_program(&p, false),
            Err(d) => {
                eprintln!("{}", d.render(input, &src));
                return ExitCode::from(1);
            }
        }
    };
    if std::env::var_os("RVC_PRINT_IR").is_some() {
        eprintln!("{}", ir::print_module(&module));
    }
    match riscv::emit_module(
        &module,
        &riscv::Options {
            opt_level: 1,
            verify: true,
            ..Default::default()
        },
    ) {
        Ok(asm) => {
            match out {
                Some(o) => {
                    if let Err(e) = std::fs::write(o, asm) {
                        eprintln!("{o}: {e}");
                        return ExitCode::from(1);
                    }
                }
                None => print!("{asm}"),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{input}: error: {e}");
            ExitCode::from(1)
        }
    }
}
