//! Sibling calls (`crates/riscv/src/isel/sibling.rs`): a program whose calls in tail
//! position recurse ten million deep (to itself, to another function with stack
//! arguments, through a shared return) runs under qemu with an 8 MiB stack (qemu's
//! default) when neither inlining nor the IR's tail-recursion elimination ran
//! (`--passes mem2reg`), at -O0, and with the whole -O2 pipeline but `tailrec`
//! (which then leaves the recursion to the back end): only if every such call
//! became a `tail`. The
//! expected output was computed by a separate Python model of the program (32-bit
//! wrapping sums, single-precision floats). Skipped with a message when the cross
//! toolchain is missing.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

const SYSYC: &str = env!("CARGO_BIN_EXE_sysyc");

fn program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sibling/deep_tail_calls.sy")
}

#[test]
fn tail_calls_ten_million_deep_run_in_constant_stack() {
    let h = match harness::Harness::global() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("skipping: {e}");
            return;
        }
    };
    let expected = std::fs::read(program().with_extension("out")).expect("expected output");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sibling");
    std::fs::create_dir_all(&dir).unwrap();
    let without_tailrec = pipeline_without_tailrec();
    for (name, opts) in [
        ("passes", &["-O2", "--passes", "mem2reg"][..]),
        ("O0", &["-O0"][..]),
        ("O2-tailrec", &["-O2", "--passes", &without_tailrec][..]),
    ] {
        let asm = dir.join(format!("deep-{name}.s"));
        common::compile(SYSYC, opts, &program(), &asm, name);
        let text = std::fs::read_to_string(&asm).unwrap();
        // The full pipeline renames and inlines functions: only the minimal ones
        // keep the four calls to look for.
        let callees: &[&str] = if name == "O2-tailrec" {
            &[]
        } else {
            &["down", "total", "rotate", "pong"]
        };
        for callee in callees {
            assert!(
                text.contains(&format!("\ttail {callee}\n")),
                "{name}: no sibling call of {callee}"
            );
        }
        let run_opts = harness::RunOptions {
            timeout: Some(Duration::from_secs(120)),
            stack: "8M".into(),
            ..Default::default()
        };
        common::run_judged(h, &asm, None, &run_opts, &expected, name);
    }
}

/// The -O2 pipeline (`sysyc -O2 --print-pipeline`) without either `tailrec` run, as a
/// `--passes` list.
fn pipeline_without_tailrec() -> String {
    let out = std::process::Command::new(SYSYC)
        .args(["-O2", "--print-pipeline"])
        .output()
        .expect("run sysyc");
    let text = String::from_utf8(out.stdout).unwrap();
    let passes = text
        .lines()
        .find_map(|l| l.strip_prefix("passes: "))
        .expect("a passes line");
    let kept: Vec<&str> = passes.split(',').filter(|&p| p != "tailrec").collect();
    assert!(
        kept.len() < passes.split(',').count(),
        "tailrec in the pipeline"
    );
    kept.join(",")
}
