//! Filetests of the IR passes: each `.ir` file of `crates/opt/filetests` holds a
//! header `; run: PASS[, PASS...]`, an input module in textual IR
//! (`docs/ir-text.md`), a line `; output:` and the module expected after the passes
//! (run by the pass manager, verifying after each). `BLESS=1 cargo test --release -p
//! opt --test filetests` rewrites the output sections (see `harness::filetest`).

use std::path::Path;

fn run(_: &Path, input: &str) -> Result<String, String> {
    let names = harness::filetest::run_names(input)?;
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut m = ir::parse_module(input).map_err(|e| format!("input: {e}"))?;
    ir::verify_module(&m).map_err(|e| format!("input: {e}"))?;
    let mut opts = opt::PassOptions {
        verify_each: true,
        ..Default::default()
    };
    opt::run_passes(&mut m, &names, &mut opts)?;
    Ok(ir::print_module(&m))
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests");
    harness::filetest::main(&dir, &["ir"], run)
}
