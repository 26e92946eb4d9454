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

use std::path::Path;

/// Runs the test's stages on its input; the output text.
fn run(path: &Path, input: &str) -> Result<String, String> {
    let names = harness::filetest::run_names(input)?;
    let mut names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut funcs = if path.extension().is_some_and(|e| e == "ir") {
        if names.first() != Some(&"isel") {
            return Err("an .ir filetest runs isel first".into());
        }
        names.remove(0);
        let m = ir::parse_module(input).map_err(|e| format!("input: {e}"))?;
        ir::verify_module(&m).map_err(|e| format!("input: {e}"))?;
        let facts = riscv::ModuleFacts::of(&m);
        let mut funcs = Vec::new();
        for (fid, f) in m.funcs.iter() {
            if !f.is_declaration() {
                let mf = riscv::isel::select_function(&m, fid, &facts)
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

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests");
    harness::filetest::main(&dir, &["mir", "ir"], run)
}
