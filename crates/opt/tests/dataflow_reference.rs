//! The data-flow framework's work-list solver against the textbook round-robin
//! iteration (every block, in layout order, until nothing changes), on every
//! function of the project's programs before and after -O2: both must reach the
//! same fixed point for each problem.

use std::path::Path;

use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, SecondaryMap};
use opt::analysis::dataflow::{
    solve, AvailableLoads, Direction, Liveness, Problem, ReachingStores,
};
use opt::analysis::Purity;

/// Round-robin iteration of the same equations.
fn round_robin<P: Problem>(
    f: &Function,
    cfg: &ControlFlowGraph,
    p: &P,
) -> (SecondaryMap<Block, P::Fact>, SecondaryMap<Block, P::Fact>) {
    let top = p.top(f);
    let mut start = SecondaryMap::with_default(top.clone());
    let mut end = SecondaryMap::with_default(top.clone());
    let reachable: Vec<Block> = cfg.rpo().to_vec();
    let forward = P::DIRECTION == Direction::Forward;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &reachable {
            let near = if forward { cfg.preds(b) } else { cfg.succs(b) };
            let boundary = if forward {
                b == f.entry_block()
            } else {
                near.is_empty()
            };
            let mut input = if boundary { p.boundary(f) } else { top.clone() };
            for &n in near {
                if reachable.contains(&n) {
                    p.meet(&mut input, if forward { &end[n] } else { &start[n] });
                }
            }
            let output = p.transfer(f, b, &input);
            let (near_map, far_map) = if forward {
                (&mut start, &mut end)
            } else {
                (&mut end, &mut start)
            };
            near_map[b] = input;
            if far_map[b] != output {
                far_map[b] = output;
                changed = true;
            }
        }
    }
    (start, end)
}

fn check<P: Problem>(f: &Function, p: &P, what: &str)
where
    P::Fact: std::fmt::Debug,
{
    let cfg = ControlFlowGraph::compute(f);
    let s = solve(f, &cfg, p);
    let (start, end) = round_robin(f, &cfg, p);
    for &b in cfg.rpo() {
        assert_eq!(
            s.at_start[b], start[b],
            "{what} at the start of {b} in {}",
            f.name
        );
        assert_eq!(
            s.at_end[b], end[b],
            "{what} at the end of {b} in {}",
            f.name
        );
    }
}

#[test]
fn work_list_reaches_the_round_robin_fixed_point() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/programs"));
    let mut functions = 0;
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "sy") {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        let name = path.display().to_string();
        let program = front::check(&name, &src).unwrap();
        for optimise in [false, true] {
            let mut m = lower::lower_program(&program, false);
            if optimise {
                let mut opts = opt::pipeline::PassOptions::default();
                opt::pipeline::run_passes(&mut m, &opt::pipeline::pipeline(2), &mut opts).unwrap();
            }
            let purity = Purity::compute(&m);
            for f in m.funcs.values().filter(|f| !f.is_declaration()) {
                check(f, &Liveness, "liveness");
                check(f, &ReachingStores, "reaching stores");
                check(f, &AvailableLoads { purity: &purity }, "available loads");
                functions += 1;
            }
        }
    }
    assert!(functions > 50, "{functions} functions");
}
