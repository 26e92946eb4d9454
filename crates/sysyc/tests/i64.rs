//! The back end's `i64` IR program (`crates/riscv/tests/programs/i64.ir`, whose
//! expected output comes from a C oracle) through the whole driver at -O0, -O1 and
//! -O2, so every optimisation pass of the pipelines meets the `i64` operations: run by
//! `sysyc --interpret`, and as assembly under qemu (skipped with a message when the
//! cross toolchain is missing).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const SYSYC: &str = env!("CARGO_BIN_EXE_sysyc");

fn program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../riscv/tests/programs/i64.ir")
}

fn expected() -> Vec<u8> {
    std::fs::read(program().with_extension("out")).expect("i64.out")
}

fn stdin() -> std::fs::File {
    std::fs::File::open(program().with_extension("in")).expect("i64.in")
}

#[test]
fn interpreted_at_every_level() {
    for opt in ["-O0", "-O1", "-O2"] {
        let out = Command::new(SYSYC)
            .args([opt, "--interpret"])
            .arg(program())
            .stdin(Stdio::from(stdin()))
            .output()
            .expect("run sysyc");
        let code = out.status.code().expect("exit status");
        if let Err(e) = harness::judge(&out.stdout, code, &expected()) {
            panic!("{opt}: {e}\n{}", String::from_utf8_lossy(&out.stderr));
        }
    }
}

#[test]
fn under_qemu_at_every_level() {
    let h = match harness::Harness::global() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("skipping: {e}");
            return;
        }
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("i64");
    std::fs::create_dir_all(&dir).unwrap();
    for opt in ["-O0", "-O1", "-O2"] {
        let asm = dir.join(format!("i64{opt}.s"));
        common::compile(SYSYC, &[opt], &program(), &asm, opt);
        let opts = harness::RunOptions {
            timeout: Some(Duration::from_secs(120)),
            ..Default::default()
        };
        let input = program().with_extension("in");
        common::run_judged(h, &asm, Some(&input), &opts, &expected(), opt);
    }
}
