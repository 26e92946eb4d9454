//! Runs the front end on one file: `cargo run --example check -- FILE [--dump]`.
//! Prints the diagnostics (exit status 1) or `ok` and the time taken (or the typed-AST
//! dump with `--dump`). Runs on a 256 MB stack, as the driver does.

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.iter().find(|a| !a.starts_with("--")).cloned() else {
        eprintln!("usage: check FILE [--dump]");
        std::process::exit(2);
    };
    let dump = args.iter().any(|a| a == "--dump");
    let source = match std::fs::read(&path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let code = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let t = Instant::now();
            let r = front::check(&path, &source);
            let el = t.elapsed();
            match r {
                Ok(p) => {
                    if dump {
                        print!("{}", front::dump(&p));
                    } else {
                        println!("ok ({:.2} ms)", el.as_secs_f64() * 1e3);
                    }
                    0
                }
                Err(d) => {
                    eprint!("{}", d.render(&path, &source));
                    1
                }
            }
        })
        .expect("spawn")
        .join()
        .unwrap_or(101);
    std::process::exit(code);
}
