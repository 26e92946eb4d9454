//! The `-O2` pipeline keeps every equality the complete GVN finds alone (issue: value
//! relations). For each program, the equalities `cgvn` proves on the freshly built SSA
//! (`--passes mem2reg,cgvn`) are turned into probes: after a value `v` equal to an
//! earlier, dominating `w` of its class, `call @__probe(sub v, w)`. The probed module
//! then goes through the whole `-O2` pipeline, and every probe that survives must pass
//! the constant 0: an equality the pipeline lost leaves a subtraction of two different
//! values. Run over the project's programs, the relation programs of `tests/relations`
//! and the official suite when present.

use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, FuncId, Function, InstKind, Module, Signature, Type, Value, ValueDef};
use opt::analysis::Purity;
use opt::passes::value_numbering::cgvn::congruence_classes;
use opt::{pipeline, run_passes, PassOptions};
use std::path::{Path, PathBuf};

/// Probes per function at most (the suite's large functions have hundreds of classes).
const MAX_PROBES: usize = 64;

/// Where `v` becomes available: its block and position (parameters before
/// instructions; `None` for constants, available everywhere).
fn position(f: &Function, v: Value) -> Option<(Block, usize)> {
    let b = f.value_block(v)?;
    let pos = match f.value_def(v) {
        ValueDef::Inst(i) => 1 + f.layout.block_insts(b).position(|j| j == i).unwrap(),
        _ => 0,
    };
    Some((b, pos))
}

/// Whether `w` is available where `v` is defined.
fn available(f: &Function, dt: &DominatorTree, w: Value, v: Value) -> bool {
    match (position(f, w), position(f, v)) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some((bw, pw)), Some((bv, pv))) => {
            if bw == bv {
                pw <= pv && w != v
            } else {
                dt.dominates(bw, bv)
            }
        }
    }
}

/// Adds the probes to every function of `m`; returns how many.
fn instrument(m: &mut Module, probe: FuncId) -> usize {
    let purity = Purity::compute(m);
    let mut total = 0;
    let ids: Vec<FuncId> = m.funcs.keys().collect();
    for id in ids {
        let f = &mut m.funcs[id];
        if f.is_declaration() {
            continue;
        }
        let classes = congruence_classes(f, &purity);
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let mut pairs = Vec::new();
        for class in &classes {
            let ints: Vec<Value> = class
                .iter()
                .copied()
                .filter(|&v| f.value_type(v) == Type::I32)
                .collect();
            for (k, &v) in ints.iter().enumerate() {
                if f.value_def(v).is_constant() {
                    continue;
                }
                if let Some(&w) = ints[..k].iter().find(|&&w| available(f, &dt, w, v)) {
                    pairs.push((v, w));
                }
            }
        }
        for &(v, w) in pairs.iter().take(MAX_PROBES) {
            let (b, pos) = position(f, v).unwrap();
            let before = f
                .layout
                .block_insts(b)
                .nth(pos)
                .expect("a terminator follows");
            let diff = InstKind::Binary {
                op: ir::BinOp::Sub,
                args: [v, w],
            };
            let d = f.insert_inst_before(before, diff, Type::I32);
            let d = f.inst_result(d).unwrap();
            let call = InstKind::Call {
                callee: probe,
                args: Box::new([d]),
            };
            f.insert_inst_before(before, call, Type::Void);
            total += 1;
        }
    }
    total
}

/// The probes left in `m` whose argument is not the constant 0, as `function: arg`.
fn failed_probes(m: &Module, probe: FuncId) -> Vec<String> {
    let mut bad = Vec::new();
    for f in m.funcs.values() {
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                if let InstKind::Call { callee, args } = f.kind(i) {
                    if *callee == probe && f.as_iconst(args[0]) != Some(0) {
                        bad.push(format!("{}: {:?}", f.name, f.value_def(args[0])));
                    }
                }
            }
        }
    }
    bad
}

/// Checks one program; returns the number of probes.
fn check(path: &Path) -> Result<usize, String> {
    let src = std::fs::read_to_string(path).unwrap();
    let name = path.display().to_string();
    let program = front::check(&name, &src).map_err(|d| d.render(&name, &src))?;
    let mut m = lower::lower_program(&program, true);
    run_passes(&mut m, &["mem2reg"], &mut PassOptions::default())?;
    let sig = Signature {
        params: vec![Type::I32],
        ret: Type::Void,
        variadic: false,
    };
    let probe = m.declare_function("__probe", sig);
    let probes = instrument(&mut m, probe);
    // `PROBE_DEBUG=substring` prints the probed module before and after the pipeline.
    let debug = std::env::var("PROBE_DEBUG").is_ok_and(|d| name.contains(&d));
    if debug {
        eprintln!("{}", ir::print_module(&m));
    }
    let mut opts = PassOptions {
        verify_each: true,
        ..Default::default()
    };
    run_passes(&mut m, &pipeline(2), &mut opts).map_err(|e| format!("{name}: {e}"))?;
    if debug {
        eprintln!("{}", ir::print_module(&m));
    }
    // Passes may renumber functions (global DCE): find the probe again by name.
    let bad = match m.func_by_name("__probe") {
        Some(probe) => failed_probes(&m, probe),
        None => Vec::new(),
    };
    if bad.is_empty() {
        Ok(probes)
    } else {
        Err(format!(
            "{name}: {} of {probes} equalities found by cgvn alone lost at -O2: {}",
            bad.len(),
            bad.join(", ")
        ))
    }
}

mod common;
use common::sources;

/// Checks every program of `dirs` (on a thread with the driver's stack); returns the
/// number of programs and probes.
fn check_dirs(dirs: Vec<PathBuf>) -> (usize, usize) {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut failures = Vec::new();
            let (mut programs, mut probes) = (0, 0);
            for dir in dirs {
                for path in sources(&dir) {
                    programs += 1;
                    match check(&path) {
                        Ok(n) => probes += n,
                        Err(e) => failures.push(e),
                    }
                }
            }
            assert!(failures.is_empty(), "{}", failures.join("\n"));
            (programs, probes)
        })
        .unwrap()
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

#[test]
fn project_programs_keep_cgvn_equalities() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let (programs, probes) = check_dirs(vec![
        root.join("tests/programs"),
        root.join("tests/relations"),
    ]);
    assert!(programs > 20);
    // The Figure 1 programs alone give several.
    assert!(probes > 10, "only {probes} probes");
}

#[test]
fn suite_keeps_cgvn_equalities() {
    let root = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/sysy2022"
    ));
    if !root.exists() {
        eprintln!("skipped: {} not found", root.display());
        return;
    }
    let dirs = ["functional", "hidden_functional", "performance"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    let (programs, probes) = check_dirs(dirs);
    eprintln!("{programs} programs, {probes} probes");
}
