//! Removal of trivial block parameters: a parameter whose every incoming argument is
//! one value `v` or the parameter itself carries nothing a plain use of `v` would not
//! (Braun, Buchwald, Hack, Leißa, Mallon, Zwinkau, "Simple and Efficient Construction
//! of Static Single Assignment Form", CC 2013, Algorithm 3, `tryRemoveTrivialPhi`).
//! Replacing it may make parameters it was passed to trivial in turn, so those are
//! revisited with a worklist (no recursion).

use ir::analysis::ControlFlowGraph;
use ir::{Function, Value, ValueDef};

/// Removes every trivial parameter among `candidates` (non-entry block parameters),
/// and those that become trivial as a consequence. Returns how many were removed.
///
/// A parameter that receives only itself (a cycle of unreachable blocks) is left alone.
pub fn remove_trivial_params(f: &mut Function, candidates: &[Value]) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let cfg = ControlFlowGraph::compute(f);
    remove_trivial_params_with(f, &cfg, candidates)
}

/// [`remove_trivial_params`] with the function's current CFG given (removing
/// parameters changes no edge), for callers that keep one up to date: the cost is
/// then proportional to the parameters visited, not to the function.
pub fn remove_trivial_params_with(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    candidates: &[Value],
) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let entry = f.entry_block();
    let mut work: Vec<Value> = candidates.iter().rev().copied().collect();
    let mut removed = 0;
    while let Some(p) = work.pop() {
        let ValueDef::Param(b, idx) = f.value_def(p) else {
            continue;
        };
        let idx = idx as usize;
        if b == entry || f.block_params(b).get(idx) != Some(&p) || !f.layout.is_block_inserted(b) {
            continue; // already removed, or a function parameter
        }
        let preds = cfg.unique_preds(b);
        let mut same: Option<Value> = None;
        let mut trivial = true;
        'edges: for &pred in &preds {
            let Some(term) = f.terminator(pred) else {
                continue;
            };
            for t in f.kind(term).targets() {
                if t.block != b {
                    continue;
                }
                let a = t.args[idx];
                if a == p || Some(a) == same {
                    continue;
                }
                if same.is_some() {
                    trivial = false;
                    break 'edges;
                }
                same = Some(a);
            }
        }
        let (true, Some(v)) = (trivial, same) else {
            continue;
        };
        // Parameters that receive `p` may become trivial once it is replaced.
        let users: Vec<_> = f.users(p).to_vec();
        for u in users {
            for t in f.kind(u).targets() {
                for (j, &a) in t.args.iter().enumerate() {
                    if a == p {
                        work.push(f.block_params(t.block)[j]);
                    }
                }
            }
        }
        f.replace_all_uses(p, v);
        f.remove_block_param(b, idx, &preds);
        removed += 1;
    }
    removed
}
