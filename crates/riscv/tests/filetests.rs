//! Filetests of the back-end stages (Cranelift's filetests, in small): each file of
//! `crates/riscv/filetests` holds a header `; run: STAGE[, STAGE...]`, the input,
//! a line `; output:`, and the expected text after the stages run.
//!
//! - A `.mir` file's input is machine IR text (`docs/mir-text.md`); the named stages
//!   of `riscv::STAGES` run on each function (liveness shared as in the pipeline;
//!   the input is verified with the rules of the first stage's input, the result of
//!   every stage with its own), and the output is the functions' text.
//! - A `.ir` file's input is IR text; the first stage must be `isel`, which selects
//!   every defined function, then the rest run as above.
//!
//! `BLESS=1 cargo test --release -p riscv --test filetests` rewrites every
//! `; output:` section with what the stages produce now (a missing one is added).

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

const OUTPUT_MARK: &str = "; output:";

/// The header's stage names.
fn stages(input: &str) -> Result<Vec<String>, String> {
    let line = input
        .lines()
        .find_map(|l| l.trim().strip_prefix("; run:"))
        .ok_or("no `; run: STAGE` line")?;
    let names: Vec<String> = line
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        return Err("`; run:` names no stage".into());
    }
    Ok(names)
}

/// Runs the test's stages on its input; the output text.
fn run(path: &Path, input: &str) -> Result<String, String> {
    let names = stages(input)?;
    let mut names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut funcs = if path.extension().is_some_and(|e| e == "ir") {
        if names.first() != Some(&"isel") {
            return Err("an .ir filetest runs isel first".into());
        }
        names.remove(0);
        let m = ir::parse_module(input).map_err(|e| format!("input: {e}"))?;
        ir::verify_module(&m).map_err(|e| format!("input: {e}"))?;
        let symbols = riscv::function_symbols(&m);
        let mut funcs = Vec::new();
        for (fid, f) in m.funcs.iter() {
            if !f.is_declaration() {
                let mf = riscv::isel::select_function(&m, fid, &symbols)
                    .map_err(|e| format!("isel: {e}"))?;
                riscv::verify::verify(&mf, riscv::verify::Stage::Virtual)
                    .map_err(|e| format!("after isel: {e}"))?;
                funcs.push(mf);
            }
        }
        funcs
    } else {
        let funcs = riscv::text::parse_functions(input).map_err(|e| format!("input: {e}"))?;
        if let Some(first) = names.first() {
            let info = riscv::lookup_stage(first).ok_or(format!("unknown stage {first}"))?;
            for mf in &funcs {
                riscv::verify::verify(mf, riscv::stage_input(info))
                    .map_err(|e| format!("input: {e}"))?;
            }
        }
        funcs
    };
    for mf in &mut funcs {
        riscv::run_stages(mf, &names, true).map_err(|e| e.to_string())?;
    }
    let texts: Vec<String> = funcs.iter().map(riscv::text::print_function).collect();
    Ok(texts.join("\n"))
}

/// The input part and the expected output (`None` without an output section).
fn split(text: &str) -> (&str, Option<&str>) {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end() == OUTPUT_MARK {
            let rest = &text[at + line.len()..];
            return (&text[..at], Some(rest));
        }
        at += line.len();
    }
    (text, None)
}

fn check(path: &Path, bless: bool) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (input, expected) = split(&text);
    let actual = run(path, input)?;
    if expected.map(str::trim) == Some(actual.trim()) {
        return Ok(());
    }
    if bless {
        let mut new = input.trim_end().to_string();
        new.push_str(&format!("\n\n{OUTPUT_MARK}\n{}\n", actual.trim_end()));
        std::fs::write(path, new).map_err(|e| e.to_string())?;
        return Ok(());
    }
    Err(match expected {
        None => format!("no `{OUTPUT_MARK}` section; the stages give:\n{actual}"),
        Some(e) => format!(
            "output differs (BLESS=1 to accept)\n{}",
            diff(e.trim(), actual.trim())
        ),
    }
    .into())
}

/// The lines from the first difference on, expected (`-`) then actual (`+`).
fn diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let same = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let mut out = format!("first difference at output line {}:\n", same + 1);
    for l in &e[same..] {
        out += &format!("-{l}\n");
    }
    for l in &a[same..] {
        out += &format!("+{l}\n");
    }
    out
}

fn main() {
    let args = Arguments::from_args();
    let bless = std::env::var_os("BLESS").is_some_and(|v| v != "0" && !v.is_empty());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "mir" || e == "ir"));
    files.sort();
    let trials = files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            Trial::test(name, move || check(&p, bless))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
