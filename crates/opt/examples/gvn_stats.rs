//! Measures the value-numbering passes over every `.sy` file of some directories:
//!
//! ```sh
//! cargo run --release -p opt --example gvn_stats -- DIR...
//! ```
//!
//! For each file: front end, lowering, and the `-O2` pipeline up to (not including)
//! its first `gvn`, `cgvn` or `pre`; then, on copies of that module, `gvn`, `cgvn` and
//! `pre` each alone, timed (the best of `REPEAT` runs, default 5), with their
//! statistics; then the whole pipeline pass by pass, counting the instructions and
//! block parameters each pass removes. Prints one line per file, then the totals, the
//! slowest file of each pass, and the file where `cgvn` is slowest relative to `gvn`.
//! The environment variable `PIPELINE=a,b,c` replaces the `-O2` pipeline.

use opt::analysis::Purity;
use opt::passes::{value_numbering::cgvn, value_numbering::gvn, value_numbering::pre};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Instructions and block parameters of the module's defined functions.
fn size(m: &ir::Module) -> (usize, usize) {
    let (mut insts, mut params) = (0, 0);
    for f in m.funcs.values() {
        for b in f.layout.blocks() {
            params += f.block_params(b).len();
            insts += f.layout.block_insts(b).count();
        }
    }
    (insts, params)
}

/// One pass run alone on copies of a module: best time and what it removed.
struct Alone<S> {
    time: Duration,
    removed: isize,
    stats: S,
}

/// Runs `pass` over every function of copies of `m`, `repeat` times.
fn alone<S: Default>(
    m: &ir::Module,
    repeat: usize,
    mut pass: impl FnMut(&mut ir::Function, &Purity, &mut S),
) -> Alone<S> {
    let purity = Purity::compute(m);
    let mut best = Duration::MAX;
    let mut result = None;
    for _ in 0..repeat {
        let mut copy = m.clone();
        let mut stats = S::default();
        let start = Instant::now();
        for f in copy.funcs.values_mut() {
            if !f.is_declaration() {
                pass(f, &purity, &mut stats);
            }
        }
        best = best.min(start.elapsed());
        ir::verify_module(&copy).expect("output verifies");
        result = Some((copy, stats));
    }
    let (copy, stats) = result.expect("repeat > 0");
    Alone {
        time: best,
        removed: size(m).0 as isize - size(&copy).0 as isize,
        stats,
    }
}

#[derive(Default)]
struct PassTotals {
    runs: usize,
    insts_removed: isize,
    params_removed: isize,
    time: Duration,
}

#[derive(Default)]
struct Slowest {
    time: Duration,
    file: String,
}

impl Slowest {
    fn see(&mut self, time: Duration, file: &str) {
        if time > self.time {
            self.time = time;
            self.file = file.to_string();
        }
    }
}

#[derive(Default)]
struct Totals {
    files: usize,
    insts_before: usize,
    gvn: gvn::GvnStats,
    cgvn: cgvn::CgvnStats,
    pre: pre::PreStats,
    removed: [isize; 3],
    time: [Duration; 3],
    slowest: [Slowest; 3],
    /// Largest cgvn / gvn time ratio among files where cgvn takes over 0.1 ms.
    worst_ratio: (f64, String),
    pipeline: BTreeMap<String, PassTotals>,
    insts_lowered: usize,
    insts_final: usize,
}

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sy"))
        .collect();
    v.sort();
    v
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn measure(path: &Path, pipeline: &[&str], repeat: usize, t: &mut Totals) {
    let name = path.display().to_string();
    let src = std::fs::read_to_string(path).expect("read");
    let program = match front::check(&name, &src) {
        Ok(p) => p,
        Err(d) => {
            eprintln!("{}", d.render(&name, &src));
            return;
        }
    };
    let cut = pipeline
        .iter()
        .position(|p| matches!(*p, "gvn" | "cgvn" | "pre"))
        .unwrap_or(pipeline.len());
    let mut m = lower::lower_program(&program, false);
    let mut opts = opt::PassOptions::default();
    opt::run_passes(&mut m, &pipeline[..cut], &mut opts).expect("pipeline prefix");
    let before = size(&m).0;

    let g = alone(&m, repeat, |f, p, s: &mut gvn::GvnStats| {
        let r = gvn::run(f, p);
        s.redundant += r.redundant;
        s.folded += r.folded;
        s.params += r.params;
    });
    let c = alone(&m, repeat, |f, p, s: &mut cgvn::CgvnStats| {
        s.add(&cgvn::run(f, p))
    });
    let r = alone(&m, repeat, |f, p, s: &mut pre::PreStats| {
        s.add(&pre::run(f, p))
    });
    println!(
        "{name}: {before} insts; gvn -{} in {:.3} ms {:?}; cgvn -{} in {:.3} ms {:?}; pre -{} in {:.3} ms {:?}",
        g.removed,
        ms(g.time),
        g.stats,
        c.removed,
        ms(c.time),
        c.stats,
        r.removed,
        ms(r.time),
        r.stats,
    );
    t.files += 1;
    t.insts_before += before;
    t.gvn.redundant += g.stats.redundant;
    t.gvn.folded += g.stats.folded;
    t.gvn.params += g.stats.params;
    t.cgvn.add(&c.stats);
    t.pre.add(&r.stats);
    for (k, (time, removed)) in [
        (g.time, g.removed),
        (c.time, c.removed),
        (r.time, r.removed),
    ]
    .into_iter()
    .enumerate()
    {
        t.removed[k] += removed;
        t.time[k] += time;
        t.slowest[k].see(time, &name);
    }
    if c.time > Duration::from_micros(100) {
        let ratio = c.time.as_secs_f64() / g.time.as_secs_f64().max(1e-9);
        if ratio > t.worst_ratio.0 {
            t.worst_ratio = (ratio, name.clone());
        }
    }

    // The whole pipeline, pass by pass.
    let mut m = lower::lower_program(&program, false);
    t.insts_lowered += size(&m).0;
    for &p in pipeline {
        let (i0, p0) = size(&m);
        let start = Instant::now();
        opt::run_passes(&mut m, &[p], &mut opts).expect("pipeline");
        let el = start.elapsed();
        let (i1, p1) = size(&m);
        let e = t.pipeline.entry(p.to_string()).or_default();
        e.runs += 1;
        e.insts_removed += i0 as isize - i1 as isize;
        e.params_removed += p0 as isize - p1 as isize;
        e.time += el;
    }
    t.insts_final += size(&m).0;
}

fn main() {
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    assert!(!dirs.is_empty(), "usage: gvn_stats DIR...");
    let repeat: usize = std::env::var("REPEAT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
        .max(1);
    let custom = std::env::var("PIPELINE").ok();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let pipeline: Vec<&str> = match &custom {
                Some(list) => list.split(',').collect(),
                None => opt::pipeline(2),
            };
            let mut t = Totals::default();
            for d in &dirs {
                for p in sources(Path::new(d)) {
                    measure(&p, &pipeline, repeat, &mut t);
                }
            }
            println!("\n== {} files in {}", t.files, dirs.join(" "));
            println!(
                "each pass alone after the pipeline prefix ({} insts):",
                t.insts_before
            );
            println!("  gvn  removes {:>6} insts: {:?}", t.removed[0], t.gvn);
            println!("  cgvn removes {:>6} insts: {:?}", t.removed[1], t.cgvn);
            println!("  pre  removes {:>6} insts: {:?}", t.removed[2], t.pre);
            for (k, p) in ["gvn", "cgvn", "pre"].iter().enumerate() {
                println!(
                    "  {p:4} time {:8.2} ms total (best of {repeat}), slowest {:.2} ms: {}",
                    ms(t.time[k]),
                    ms(t.slowest[k].time),
                    t.slowest[k].file
                );
            }
            println!(
                "  cgvn/gvn time: {:.2} overall, worst {:.2} ({})",
                t.time[1].as_secs_f64() / t.time[0].as_secs_f64().max(1e-9),
                t.worst_ratio.0,
                t.worst_ratio.1
            );
            println!(
                "pipeline: {} insts lowered, {} after (static); per pass: runs per file, insts removed, params removed, time",
                t.insts_lowered, t.insts_final
            );
            for (p, e) in &t.pipeline {
                println!(
                    "  {p:12} x{:<3} {:>8} {:>7} {:>9.1} ms",
                    e.runs / t.files.max(1),
                    e.insts_removed,
                    e.params_removed,
                    ms(e.time)
                );
            }
        })
        .expect("spawn")
        .join()
        .expect("join");
}
