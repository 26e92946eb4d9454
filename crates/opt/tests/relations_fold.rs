//! The value-relation programs of `tests/relations` (the complete GVN's Figure 1
//! programs, induction variables in step, swaps, joins keeping an offset): each
//! prints one value that an equality or affine relation decides, and after `-O2`
//! every `putint` of the program must print a constant. (Their behaviour is checked
//! against g++'s output by `pipeline_programs`.)

use ir::InstKind;
use opt::{pipeline, run_passes, PassOptions};
use std::path::Path;

mod common;

#[test]
fn every_relation_program_prints_a_constant_at_o2() {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/relations"
    ));
    let files = common::sources(dir);
    assert!(files.len() >= 12);
    let mut unfolded = Vec::new();
    for path in &files {
        let name = path.display().to_string();
        let src = std::fs::read_to_string(path).unwrap();
        let program =
            front::check(&name, &src).unwrap_or_else(|d| panic!("{}", d.render(&name, &src)));
        let mut m = lower::lower_program(&program, true);
        let mut opts = PassOptions {
            verify_each: true,
            ..Default::default()
        };
        run_passes(&mut m, &pipeline(2), &mut opts).unwrap();
        let putint = m.func_by_name("putint").expect("the program prints");
        let mut printed = 0;
        for f in m.funcs.values() {
            for b in f.layout.blocks() {
                for i in f.layout.block_insts(b) {
                    if let InstKind::Call { callee, args } = f.kind(i) {
                        if *callee == putint {
                            printed += 1;
                            if f.as_iconst(args[0]).is_none() {
                                unfolded.push(name.clone());
                            }
                        }
                    }
                }
            }
        }
        assert!(printed > 0, "{name}: no putint left");
    }
    assert!(unfolded.is_empty(), "not folded at -O2: {unfolded:?}");
}
