//! Data-driven whole-program tests: every `tests/programs/NAME.ir` is parsed, run with
//! `NAME.in` as stdin (if present) and judged against `NAME.out` as the contest
//! judges: stdout, a newline if stdout is non-empty and lacks a final one, then the
//! exit status on its own line. One named test per program (libtest-mimic).

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

fn judge_text(stdout: &[u8], exit_code: i32) -> String {
    let mut s = String::from_utf8_lossy(stdout).into_owned();
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(&format!("{exit_code}\n"));
    s
}

fn run_case(ir_path: &Path) -> Result<(), Failed> {
    let src = std::fs::read_to_string(ir_path)?;
    let module = ir::parse_module(&src).map_err(|e| format!("parse: {e}"))?;
    let input = std::fs::read(ir_path.with_extension("in")).unwrap_or_default();
    let expected = std::fs::read_to_string(ir_path.with_extension("out"))?;
    let opts = interp::RunOptions {
        max_steps: Some(1 << 32),
        wall_clock_timers: false,
        ..Default::default()
    };
    let out = interp::run_module(&module, &input, &opts).map_err(|e| format!("run: {e}"))?;
    let got = judge_text(&out.stdout, out.exit_code);
    if got.trim_end() != expected.trim_end() {
        return Err(format!("expected:\n{expected}\ngot:\n{got}").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/programs"));
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/programs exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
        .collect();
    paths.sort();
    let trials = paths
        .into_iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            Trial::test(name, move || run_case(&p))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
