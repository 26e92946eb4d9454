//! Times `front::check` on the largest suite file (about 2 MB) and measures its peak
//! heap use: `cargo bench -p front --bench front`. Prints the best and median time of
//! several runs, and the most memory live at once during one run (the typed AST the
//! check returns included), counted by a global allocator that wraps the system's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The system allocator, counting the bytes live now and the most ever live.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

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
            let before = LIVE.load(Ordering::Relaxed);
            PEAK.store(before, Ordering::Relaxed);
            let r = front::check(&name, &src);
            let peak = PEAK.load(Ordering::Relaxed) - before;
            assert!(r.is_ok(), "check failed");
            drop(r);
            let mut times: Vec<Duration> = Vec::new();
            for _ in 0..15 {
                let t = Instant::now();
                let r = front::check(&name, &src);
                times.push(t.elapsed());
                assert!(r.is_ok(), "check failed");
            }
            times.sort();
            println!(
                "front::check {} ({} bytes): best {:.2} ms, median {:.2} ms, peak heap {:.1} MiB",
                name,
                src.len(),
                times[0].as_secs_f64() * 1e3,
                times[times.len() / 2].as_secs_f64() * 1e3,
                peak as f64 / (1 << 20) as f64
            );
        })
        .expect("spawn");
    h.join().expect("bench thread");
}
