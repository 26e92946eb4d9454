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
        let mut same: Option<Value> = None;
        let mut trivial = true;
        // Every edge, a predecessor's as often as it has edges to `b`: looking
        // at its terminator again finds the arguments already seen.
        'edges: for &pred in cfg.preds(b) {
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
        f.remove_block_param(b, idx, &cfg.unique_preds(b));
        removed += 1;
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::remove_trivial_params;

    /// Removes every trivial parameter of the only function of `src`: (how many,
    /// the printed result).
    fn remove_all(src: &str) -> (usize, String) {
        let mut m = ir::parse_module(src).unwrap();
        let f = m.funcs.values_mut().next().unwrap();
        let entry = f.entry_block();
        let params: Vec<_> = f
            .layout
            .blocks()
            .filter(|&b| b != entry)
            .flat_map(|b| f.block_params(b).to_vec())
            .collect();
        let n = remove_trivial_params(f, &params);
        ir::verify_module(&m).unwrap();
        (n, ir::print_module(&m))
    }

    #[test]
    fn a_loop_parameter_passed_itself_and_one_value_is_that_value() {
        let (n, out) = remove_all(
            r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(%0, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, %1
  %4 = slt %3, 10
  br %4, bb1(%1, %3), bb2
bb2:
  ret %3
}
"#,
        );
        assert_eq!(n, 1, "{out}");
        assert!(
            out.contains("bb1(%1: i32):") && out.contains("add %1, %0"),
            "{out}"
        );
    }

    #[test]
    fn a_parameter_passed_two_values_stays() {
        let src = r#"
func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = slt %0, %1
  br %2, bb1(%0), bb1(%1)
bb1(%3: i32):
  ret %3
}
"#;
        assert_eq!(remove_all(src).0, 0);
    }

    /// `n` blocks, the one after the entry first: each passes its parameter to the
    /// block before it, so the first block's parameter is trivial with the second's
    /// as its value, which is trivial with the third's, and so on to the entry's
    /// `%0` (the exit blocks of a deep loop nest, innermost first).
    fn chain(n: usize) -> String {
        let mut src = String::from("func @f(i32) -> i32 {\nbb0(%0: i32):\n");
        src += &format!("  jump bb{n}(%0)\n");
        for k in 1..=n {
            src += &format!("bb{k}(%{k}: i32):\n");
            let v = n + k;
            src += &format!("  %{v} = add %{k}, {k}\n");
            src += &format!("  call @g(%{v})\n");
            if k == 1 {
                src += "  ret %1\n";
            } else {
                src += &format!("  jump bb{}(%{k})\n", k - 1);
            }
        }
        src + "}\ndeclare @g(i32) -> void\n"
    }

    #[test]
    fn a_chain_of_trivial_parameters_ends_at_its_root() {
        let (n, out) = remove_all(&chain(64));
        // Each parameter's users move to the next one's as it goes: every use
        // ends at `%0`.
        assert_eq!(n, 64, "{out}");
        assert_eq!(out.matches(": i32)").count(), 1, "{out}");
        assert_eq!(out.matches("add %0, ").count(), 64, "{out}");
        assert!(out.contains("ret %0"), "{out}");
    }

    #[test]
    fn parameters_passed_only_each_other_stay_one() {
        // An unreachable cycle: `%1` receives `%2` only, `%2` receives `%1` only.
        // Replacing one by the other leaves a parameter that receives itself.
        let (n, out) = remove_all(
            r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  ret %0
bb1(%1: i32):
  jump bb2(%1)
bb2(%2: i32):
  jump bb1(%2)
}
"#,
        );
        assert_eq!(n, 1, "{out}");
        assert_eq!(out.matches(": i32)").count(), 2, "{out}");
    }
}
