//! Times the front end's phases on one file (cold, single run):
//! `cargo run --release --example phases -- FILE`.

use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: phases FILE");
    let src = std::fs::read_to_string(&path).expect("read");
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut d = front::Diagnostics::default();
            let t0 = Instant::now();
            let lexed = front::lexer::lex(&src, &mut d);
            let t1 = Instant::now();
            let unit = front::parser::parse(&src, &lexed, &mut d);
            let t2 = Instant::now();
            let p = front::sema::analyze(&unit, &src, &mut d);
            let t3 = Instant::now();
            drop(unit);
            drop(lexed);
            let t4 = Instant::now();
            let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
            println!(
                "lex {:.2} ms ({} tokens), parse {:.2} ms, sema {:.2} ms, drop ast {:.2} ms; {} errors, {} funcs",
                ms(t0, t1),
                lexed_len(&src),
                ms(t1, t2),
                ms(t2, t3),
                ms(t3, t4),
                d.len(),
                p.funcs.len()
            );
        })
        .expect("spawn")
        .join()
        .expect("join");
}

fn lexed_len(src: &str) -> usize {
    let mut d = front::Diagnostics::default();
    front::lexer::lex(src, &mut d).tokens.len()
}
