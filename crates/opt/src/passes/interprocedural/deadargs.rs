//! Dead argument elimination: a parameter that its function never reads is removed
//! from the function and from every call, so the callers stop computing its
//! arguments; a return value that no caller reads is replaced by zero, so the
//! callee stops computing it.
//!
//! This is LLVM's `DeadArgumentElimination` (and the parameter removal of GCC's
//! IPA-SRA, which makes `f.constprop` clones "for all known contexts"): SysY has no
//! function pointers and one translation unit, so every call site is known and a
//! signature can change freely. A parameter counts as dead when its only uses are
//! as the same argument of the function's own recursive calls (LLVM's "live only if
//! the caller's argument is live"): it then carries a value nobody reads. `main`
//! keeps its signature. The arguments and return computations left without users
//! are deleted by the `dce` that follows.

use crate::pipeline::Pass;
use ir::analysis::ControlFlowGraph;
use ir::{FuncId, Function, InstKind, Module, Type};

/// The dead argument elimination pass.
pub struct DeadArgs;

impl Pass for DeadArgs {
    fn name(&self) -> &'static str {
        "deadargs"
    }
    fn description(&self) -> &'static str {
        "remove parameters no function reads and return values no caller reads"
    }
    fn run(&self, m: &mut Module) -> bool {
        run(m) > 0
    }
}

/// Removes the dead parameters and return values of `m`'s functions; returns how
/// many parameters and return values went.
pub fn run(m: &mut Module) -> usize {
    let ids: Vec<FuncId> = m.funcs.keys().collect();
    let mut changed = 0;
    // Every function's dead parameters first, then one sweep over all calls: a
    // parameter passed on to a dead position is read until the next run.
    let mut dead: Vec<Vec<usize>> = vec![Vec::new(); m.funcs.len()];
    for &id in &ids {
        let f = &m.funcs[id];
        if f.is_declaration() || f.name == "main" || f.sig.variadic {
            continue;
        }
        dead[ir::EntityRef::index(id)] = dead_params(f, id);
    }
    if dead.iter().any(|d| !d.is_empty()) {
        for &g in &ids {
            drop_call_args(&mut m.funcs[g], &dead);
        }
    }
    for &id in &ids {
        let dead = &dead[ir::EntityRef::index(id)];
        if dead.is_empty() {
            continue;
        }
        changed += dead.len();
        let f = &mut m.funcs[id];
        let entry = f.entry_block();
        let preds = ControlFlowGraph::compute(f).preds(entry).to_vec();
        for &k in dead.iter().rev() {
            f.remove_block_param(entry, k, &preds);
            f.sig.params.remove(k);
        }
    }
    let mut result_read = vec![false; m.funcs.len()];
    for f in m.funcs.values() {
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                if let InstKind::Call { callee, .. } = *f.kind(i) {
                    if f.inst_result(i).is_some_and(|r| f.has_users(r)) {
                        result_read[ir::EntityRef::index(callee)] = true;
                    }
                }
            }
        }
    }
    for &id in &ids {
        let f = &mut m.funcs[id];
        if f.is_declaration() || f.name == "main" || result_read[ir::EntityRef::index(id)] {
            continue;
        }
        changed += usize::from(zero_returns(f));
    }
    changed
}

/// The indices (ascending) of `f`'s parameters whose only uses are as the same
/// argument of `f`'s own calls (`f` is function `id`).
fn dead_params(f: &Function, id: FuncId) -> Vec<usize> {
    let params = f.block_params(f.entry_block());
    (0..params.len())
        .filter(|&k| {
            f.users(params[k]).iter().all(|&u| match f.kind(u) {
                InstKind::Call { callee, args } if *callee == id => args
                    .iter()
                    .enumerate()
                    .all(|(j, &a)| a != params[k] || j == k),
                _ => false,
            })
        })
        .collect()
}

/// Removes from every call in `f` the arguments at its callee's dead positions
/// (`dead` by function index, ascending).
fn drop_call_args(f: &mut Function, dead: &[Vec<usize>]) {
    let calls: Vec<_> = f
        .layout
        .blocks()
        .flat_map(|b| f.layout.block_insts(b))
        .filter(|&i| {
            matches!(f.kind(i), InstKind::Call { callee, .. }
                if !dead[ir::EntityRef::index(*callee)].is_empty())
        })
        .collect();
    for i in calls {
        let InstKind::Call { callee, args } = f.kind(i).clone() else {
            unreachable!("a call")
        };
        let gone = &dead[ir::EntityRef::index(callee)];
        let args = args
            .iter()
            .enumerate()
            .filter(|(k, _)| gone.binary_search(k).is_err())
            .map(|(_, a)| *a)
            .collect();
        f.replace_kind(i, InstKind::Call { callee, args });
    }
}

/// Makes every `ret v` of `f` return zero of its type when `v` is not already a
/// constant; returns whether one changed.
fn zero_returns(f: &mut Function) -> bool {
    let zero = match f.sig.ret {
        Type::I32 => f.iconst(0),
        Type::F32 => f.fconst(0.0),
        _ => return false,
    };
    let rets: Vec<_> = f
        .layout
        .blocks()
        .filter_map(|b| f.terminator(b))
        .filter(|&t| {
            matches!(*f.kind(t), InstKind::Ret { value: Some(v) }
                if f.as_iconst(v).is_none() && f.as_fconst(v).is_none())
        })
        .collect();
    for &t in &rets {
        f.replace_kind(t, InstKind::Ret { value: Some(zero) });
    }
    !rets.is_empty()
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    const SRC: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @scale(i32, i32, f32) -> i32 {
bb0(%0: i32, %1: i32, %2: f32):
  %3 = mul %0, 3
  ret %3
}

func @walk(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = slt %0, 1
  br %2, bb1, bb2
bb1:
  ret 0
bb2:
  %3 = add %0, -1
  %4 = call @walk(%3, %1)
  %5 = add %4, %0
  ret %5
}

func @swap(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = slt %0, 1
  br %2, bb1, bb2
bb1:
  ret %1
bb2:
  %3 = add %0, -1
  %4 = call @swap(%1, %3)
  ret %4
}

func @side(i32) -> i32 {
bb0(%0: i32):
  call @putint(%0)
  %1 = mul %0, %0
  ret %1
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = mul %0, %0
  %2 = sitofp %0
  %3 = call @scale(%0, %1, %2)
  call @putint(%3)
  %4 = call @walk(%0, %1)
  call @putint(%4)
  %5 = call @swap(%0, 7)
  call @putint(%5)
  %6 = call @side(%0)
  ret 0
}
"#;

    #[test]
    fn unread_parameters_leave_function_and_calls() {
        let out = same_behaviour(SRC, &["deadargs"], "5");
        assert!(out.contains("func @scale(i32) -> i32"), "{out}");
        assert!(out.contains("call @scale(%0)"), "{out}");
        // Read only by the recursion, at its own position.
        assert!(out.contains("func @walk(i32) -> i32"), "{out}");
        assert!(out.contains("call @walk(%2)"), "{out}");
    }

    #[test]
    fn parameters_passed_elsewhere_stay() {
        let out = same_behaviour(SRC, &["deadargs"], "5");
        // @swap passes each parameter in the other's place: both are read.
        assert!(out.contains("func @swap(i32, i32) -> i32"), "{out}");
        assert!(out.contains("func @side(i32) -> i32"), "{out}");
    }

    #[test]
    fn an_unread_result_is_not_computed() {
        let out = same_behaviour(SRC, &["deadargs", "dce"], "5");
        // @side's output stays; its square, read by nobody, goes.
        assert!(out.contains("call @putint(%0)\n  ret 0"), "{out}");
        // A read result stays.
        assert!(out.contains("%1 = mul %0, 3\n  ret %1"), "{out}");
    }
}
