//! Measures the value-numbering passes over every `.sy` file of some directories:
//!
//! ```sh
//! cargo run --release -p opt --example gvn_stats -- DIR...
//! ```
//!
//! For each file: front end, lowering, and the `-O2` pipeline up to (not including)
//! its first `gvn`, `cgvn` or `pre`; then, on copies of that module, `gvn` alone and
//! `cgvn` alone, timed, with their statistics; then the whole `-O2` pipeline pass by
//! pass, counting the instructions each pass removes (and block parameters). Prints
//! one line per file and the totals, with the slowest file for `gvn` and `cgvn`.

use opt::passes::{cgvn, gvn};
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

#[derive(Default)]
struct PassTotals {
    runs: usize,
    insts_removed: isize,
    params_removed: isize,
    time: Duration,
}

#[derive(Default)]
struct Totals {
    files: usize,
    gvn: gvn::GvnStats,
    cgvn: cgvn::CgvnStats,
    gvn_time: Duration,
    cgvn_time: Duration,
    worst_gvn: (Duration, String),
    worst_cgvn: (Duration, String),
    /// Instructions before the value numbering, and removed by each pass alone.
    insts_before: usize,
    gvn_removed: isize,
    cgvn_removed: isize,
    pipeline: BTreeMap<&'static str, PassTotals>,
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

fn measure(path: &Path, t: &mut Totals) {
    let name = path.display().to_string();
    let src = std::fs::read_to_string(path).expect("read");
    let program = match front::check(&name, &src) {
        Ok(p) => p,
        Err(d) => {
            eprintln!("{}", d.render(&name, &src));
            return;
        }
    };
    let full = opt::pipeline(2);
    let cut = full
        .iter()
        .position(|p| matches!(*p, "gvn" | "cgvn" | "pre"))
        .unwrap_or(full.len());
    let mut m = lower::lower_program(&program, false);
    let mut opts = opt::PassOptions::default();
    opt::run_passes(&mut m, &full[..cut], &mut opts).expect("pipeline prefix");
    let before = size(&m).0;

    let mut mg = m.clone();
    let purity = opt::analysis::Purity::compute(&mg);
    let start = Instant::now();
    let mut gs = gvn::GvnStats::default();
    for f in mg.funcs.values_mut() {
        let s = gvn::run(f, &purity);
        gs.redundant += s.redundant;
        gs.folded += s.folded;
        gs.params += s.params;
    }
    let gt = start.elapsed();

    let mut mc = m.clone();
    let start = Instant::now();
    let mut cs = cgvn::CgvnStats::default();
    for f in mc.funcs.values_mut() {
        cs.add(&cgvn::run(f, &purity));
    }
    let ct = start.elapsed();
    ir::verify_module(&mg).expect("gvn output verifies");
    ir::verify_module(&mc).expect("cgvn output verifies");
    let (ga, ca) = (size(&mg).0, size(&mc).0);
    println!(
        "{name}: {before} insts; gvn -{} in {:.1} ms {gs:?}; cgvn -{} in {:.1} ms {cs:?}",
        before as isize - ga as isize,
        gt.as_secs_f64() * 1e3,
        before as isize - ca as isize,
        ct.as_secs_f64() * 1e3,
    );
    t.files += 1;
    t.insts_before += before;
    t.gvn_removed += before as isize - ga as isize;
    t.cgvn_removed += before as isize - ca as isize;
    t.gvn.redundant += gs.redundant;
    t.gvn.folded += gs.folded;
    t.gvn.params += gs.params;
    t.cgvn.add(&cs);
    t.gvn_time += gt;
    t.cgvn_time += ct;
    if gt > t.worst_gvn.0 {
        t.worst_gvn = (gt, name.clone());
    }
    if ct > t.worst_cgvn.0 {
        t.worst_cgvn = (ct, name.clone());
    }

    // The whole pipeline, pass by pass.
    let mut m = lower::lower_program(&program, false);
    for &p in &full {
        let (i0, p0) = size(&m);
        let start = Instant::now();
        opt::run_passes(&mut m, &[p], &mut opts).expect("pipeline");
        let el = start.elapsed();
        let (i1, p1) = size(&m);
        let e = t.pipeline.entry(p).or_default();
        e.runs += 1;
        e.insts_removed += i0 as isize - i1 as isize;
        e.params_removed += p0 as isize - p1 as isize;
        e.time += el;
    }
}

fn main() {
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    assert!(!dirs.is_empty(), "usage: gvn_stats DIR...");
    let dirs2 = dirs.clone();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut t = Totals::default();
            for d in &dirs2 {
                for p in sources(Path::new(d)) {
                    measure(&p, &mut t);
                }
            }
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            println!("\n== {} files in {}", t.files, dirs.join(" "));
            println!(
                "alone, after the pipeline prefix ({} insts): gvn removes {} ({:?}), cgvn removes {} ({:?})",
                t.insts_before, t.gvn_removed, t.gvn, t.cgvn_removed, t.cgvn
            );
            println!(
                "time: gvn {:.1} ms total, worst {:.1} ms ({}); cgvn {:.1} ms total, worst {:.1} ms ({})",
                ms(t.gvn_time),
                ms(t.worst_gvn.0),
                t.worst_gvn.1,
                ms(t.cgvn_time),
                ms(t.worst_cgvn.0),
                t.worst_cgvn.1
            );
            println!("-O2 pipeline, per pass (all runs): insts removed, params removed, time");
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
