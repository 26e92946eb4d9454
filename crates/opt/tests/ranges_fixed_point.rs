//! The value ranges of `opt::analysis::ranges` hold what their equations give, on
//! every function of the project's programs before and after -O2: a work-list solve
//! that missed a dependence (a range that grew without its users being revisited)
//! would leave a range too small, and transformations trusting it would miscompile.

mod common;

use std::path::Path;

use ir::analysis::ControlFlowGraph;
use opt::analysis::ranges::Ranges;

#[test]
fn ranges_are_closed_under_their_equations() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/programs"));
    let mut functions = 0;
    for path in common::sources(dir) {
        let src = std::fs::read_to_string(&path).unwrap();
        let name = path.display().to_string();
        let program = front::check(&name, &src).unwrap();
        for optimise in [false, true] {
            let mut m = lower::lower_program(&program, false);
            if optimise {
                let mut opts = opt::pipeline::PassOptions::default();
                opt::pipeline::run_passes(&mut m, &opt::pipeline::pipeline(2), &mut opts).unwrap();
            }
            for f in m.funcs.values().filter(|f| !f.is_declaration()) {
                let cfg = ControlFlowGraph::compute(f);
                let r = Ranges::compute(f, &cfg);
                if let Err(e) = r.check(f, &cfg) {
                    panic!("{name} (optimised: {optimise}): {e}");
                }
                functions += 1;
            }
        }
    }
    assert!(functions > 50, "{functions} functions");
}
