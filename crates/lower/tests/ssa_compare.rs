//! Cross-check of the two SSA constructions over the official suite (and the project's
//! own programs): Braun et al. during lowering versus memory form + Cytron et al.'s
//! mem2reg. Both must verify, and after trivial-parameter removal they must create
//! about the same number of block parameters (both are minimal up to the pruning
//! differences of the two algorithms). The totals are printed for the record.

use std::path::{Path, PathBuf};

fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut dirs = vec![root.join("tests/programs")];
    let suite = root.join("../shared/sysy2022");
    for d in ["functional", "hidden_functional", "performance"] {
        dirs.push(suite.join(d));
    }
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sy"))
        .collect();
    files.sort();
    files
}

#[test]
fn braun_and_cytron_agree_on_block_parameter_counts() {
    let mut braun_total = 0usize;
    let mut cytron_total = 0usize;
    let files = sources();
    assert!(
        !files.is_empty(),
        "the project's own programs are always there"
    );
    for path in &files {
        let name = path.display().to_string();
        let src = std::fs::read_to_string(path).expect("read source");
        let program =
            front::check(&name, &src).unwrap_or_else(|d| panic!("{}", d.render(&name, &src)));

        let braun = lower::lower_program(&program, false);
        ir::verify_module(&braun).unwrap_or_else(|e| panic!("{name}: after Braun lowering:\n{e}"));

        let mut memory = lower::lower_program(&program, true);
        ir::verify_module(&memory).unwrap_or_else(|e| panic!("{name}: memory form:\n{e}"));
        for (_, f) in memory.funcs.iter_mut() {
            if !f.is_declaration() {
                opt::mem2reg(f);
            }
        }
        ir::verify_module(&memory).unwrap_or_else(|e| panic!("{name}: after mem2reg:\n{e}"));

        let b = opt::count_block_params(&braun);
        let c = opt::count_block_params(&memory);
        if std::env::var("SSA_COMPARE_VERBOSE").is_ok() && b != c {
            eprintln!("{name}: Braun {b}, Cytron {c}");
        }
        braun_total += b;
        cytron_total += c;
    }
    eprintln!(
        "block parameters over {} programs: Braun {braun_total}, Cytron (mem2reg) {cytron_total}",
        files.len()
    );
    let diff = braun_total.abs_diff(cytron_total) as f64;
    let base = braun_total.max(cytron_total).max(1) as f64;
    assert!(
        diff / base <= 0.05,
        "Braun {braun_total} vs Cytron {cytron_total}: more than 5% apart"
    );
}
