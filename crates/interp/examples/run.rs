//! Runs a textual IR file in the interpreter with this process's stdin/stdout and
//! reports the exit status, executed instructions and throughput on stderr:
//! `cargo run --release -p interp --example run -- prog.ir < prog.in`

use std::time::Instant;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: run FILE.ir < input");
        std::process::exit(2);
    };
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let m = ir::parse_module(&src).unwrap_or_else(|e| {
        eprintln!("{path}:{e}");
        std::process::exit(2)
    });
    let mut input = Vec::new();
    std::io::Read::read_to_end(&mut std::io::stdin(), &mut input).expect("read stdin");
    let start = Instant::now();
    let opts = interp::RunOptions {
        wall_clock_timers: false,
        ..Default::default()
    };
    match interp::run_module(&m, &input, &opts) {
        Ok(out) => {
            let secs = start.elapsed().as_secs_f64();
            std::io::Write::write_all(&mut std::io::stdout(), &out.stdout).expect("write stdout");
            eprintln!(
                "exit {} after {} instructions in {secs:.3} s ({:.1} M/s wall)",
                out.exit_code,
                out.steps,
                out.steps as f64 / secs / 1e6
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
