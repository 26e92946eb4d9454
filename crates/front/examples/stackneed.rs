//! Finds the smallest thread stack (in 256 KB steps) on which `check` + `dump` succeed
//! for a file: `cargo run --example stackneed -- FILE`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 4 && args[1] == "--child" {
        let src = std::fs::read_to_string(&args[2]).expect("read");
        let kb: usize = args[3].parse().expect("kb");
        let r = std::thread::Builder::new()
            .stack_size(kb << 10)
            .spawn(move || {
                front::check("x", &src)
                    .map(|p| front::dump(&p).len())
                    .is_ok()
            })
            .expect("spawn")
            .join();
        std::process::exit(if matches!(r, Ok(true)) { 0 } else { 1 });
    }
    let path = args.get(1).cloned().expect("usage: stackneed FILE");
    let mut kb = 256;
    loop {
        let ok = std::process::Command::new(std::env::current_exe().expect("exe"))
            .arg("--child")
            .arg(&path)
            .arg(kb.to_string())
            .status()
            .map(|st| st.success())
            .unwrap_or(false);
        if ok {
            println!("{path}: ok with {kb} KB stack");
            return;
        }
        kb += 256;
        if kb > 65536 {
            println!("{path}: needs more than 64 MB");
            return;
        }
    }
}
