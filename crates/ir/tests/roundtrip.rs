//! Round-trip tests over the corpus in `tests/ir/*.ir`: each file parses, prints to
//! exactly the canonical text stored next to it in `*.expect`, and that text parses and
//! prints back to itself. `UPDATE_EXPECT=1 cargo test -p ir` rewrites the `.expect`
//! files from the current printer (review the diff by eye before committing).

use std::fs;
use std::path::{Path, PathBuf};

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ir");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("tests/ir exists")
        .map(|e| e.expect("readable dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
        .collect();
    files.sort();
    files
}

#[test]
fn corpus_is_large_enough() {
    assert!(corpus().len() >= 10);
}

#[test]
fn corpus_round_trips_to_canonical_text() {
    let bless = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1");
    let mut failures = Vec::new();
    for path in corpus() {
        let name = path.display();
        let src = fs::read_to_string(&path).expect("readable test file");
        let m = ir::parse_module(&src).unwrap_or_else(|e| panic!("{name}:{e}"));
        if let Err(e) = ir::verifier::verify_module(&m) {
            panic!("{name}: invalid IR:\n{e}");
        }
        let printed = ir::print_module(&m);
        let again = ir::parse_module(&printed)
            .unwrap_or_else(|e| panic!("{name}: canonical text does not parse: {e}\n{printed}"));
        assert_eq!(
            ir::print_module(&again),
            printed,
            "{name}: print(parse(print(m))) != print(m)"
        );
        let expect_path = path.with_extension("expect");
        if bless {
            fs::write(&expect_path, &printed).expect("writable expect file");
            continue;
        }
        match fs::read_to_string(&expect_path) {
            Ok(expected) if expected == printed => {}
            Ok(expected) => failures.push(format!(
                "{name}: canonical text differs\n--- expected\n{expected}--- actual\n{printed}"
            )),
            Err(_) => failures.push(format!(
                "{name}: missing {} (run with UPDATE_EXPECT=1)",
                expect_path.display()
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
