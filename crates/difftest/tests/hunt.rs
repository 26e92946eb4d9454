//! The missed-optimisation hunter end to end, when the riscv64 toolchain, qemu and
//! clang-14 are installed and sysyc's binary is built beside this test: one small
//! program measured under the three compilers, flagged (the threshold is 0, so
//! every measured program is), written out and reduced.

use difftest::gen::GenConfig;
use difftest::hunt::{hunt, HuntOptions};
use std::path::{Path, PathBuf};

fn sysyc_binary() -> Option<PathBuf> {
    // target/<profile>/deps/hunt-HASH -> target/<profile>/sysyc
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.parent()?.join("sysyc");
    path.is_file().then_some(path)
}

#[test]
fn the_hunter_measures_flags_and_reduces_a_program() {
    let h = match harness::Harness::global() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("note: skipped, no riscv64 toolchain: {e}");
            return;
        }
    };
    let (Some(sysyc), Some(_)) = (sysyc_binary(), bench::compile::find_clang()) else {
        eprintln!("note: skipped, no sysyc binary beside the test or no clang-14");
        return;
    };
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("difftest-hunt");
    let _ = std::fs::remove_dir_all(&out);
    let opts = HuntOptions {
        seeds: 3..4,
        gen: GenConfig::small(),
        sysyc,
        out: out.clone(),
        threshold: 0.0,
        max_reduce_tests: 3,
        jobs: 1,
    };
    let s = hunt(&opts, h).expect("the hunt runs");
    assert_eq!(s.measured + s.failed.len(), 1, "{:?}", s.failed);
    if s.measured == 0 {
        eprintln!("note: the program was not measured: {:?}", s.failed);
        return;
    }
    assert_eq!(s.flags.len(), 1);
    let f = &s.flags[0];
    assert_eq!(f.seed, 3);
    assert!(f.cycles.sysyc > 0 && f.cycles.gcc > 0 && f.cycles.clang.is_some());
    assert!((s.geomean - f.cycles.ratio()).abs() < 1e-9);
    assert_eq!(f.dir, out.join("hunt-3"));
    let original = std::fs::read_to_string(f.dir.join("original.sy")).unwrap();
    let report = std::fs::read_to_string(f.dir.join("report.txt")).unwrap();
    assert!(report.starts_with(&format!(
        "original: sysyc {} gcc {}",
        f.cycles.sysyc, f.cycles.gcc
    )));
    if f.reduced.is_some() {
        let reduced = std::fs::read_to_string(f.dir.join("reduced.sy")).unwrap();
        assert!(reduced.len() <= original.len());
        assert!(report.contains("reduced:  sysyc"));
    }
}
