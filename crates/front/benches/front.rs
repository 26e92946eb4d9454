//! Times `front::check` on the largest suite file (about 2 MB):
//! `cargo bench -p front --bench front`. Prints the best and median of several runs.

use std::time::{Duration, Instant};

fn main() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/sysy2022/performance/dead-code-elimination-1.sy");
    let Ok(src) = std::fs::read_to_string(&path) else {
        println!("bench: {} not found, skipping", path.display());
        return;
    };
    let name = path.display().to_string();
    let h = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut times: Vec<Duration> = Vec::new();
            for _ in 0..15 {
                let t = Instant::now();
                let r = front::check(&name, &src);
                times.push(t.elapsed());
                assert!(r.is_ok(), "check failed");
            }
            times.sort();
            println!(
                "front::check {} ({} bytes): best {:.2} ms, median {:.2} ms",
                name,
                src.len(),
                times[0].as_secs_f64() * 1e3,
                times[times.len() / 2].as_secs_f64() * 1e3
            );
        })
        .expect("spawn");
    h.join().expect("bench thread");
}
