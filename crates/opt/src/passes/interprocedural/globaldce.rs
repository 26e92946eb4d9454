//! Dead function elimination: a function that no chain of calls from `main`
//! reaches is removed from the module.
//!
//! This is the function half of LLVM's `GlobalDCE` (and GCC's removal of
//! unreachable cgraph nodes): mark every function reachable from the roots over
//! the call graph, sweep the rest. SysY has no function pointers and one
//! translation unit, so the call graph is exact and `main` is the only root.
//! After inlining, a function whose every call site was inlined is dead; removing
//! it saves the later passes and the back end from optimising and emitting it.
//!
//! Declarations (the runtime library) are kept: they cost nothing and the IR text
//! keeps naming them. A module without a defined `main` (a library of functions in
//! a test) is left alone. The surviving functions keep their order; their ids are
//! renumbered and every call is rewritten to the new ids.

use crate::pipeline::Pass;
use ir::{FuncId, InstKind, Module, PrimaryMap, SecondaryMap};

/// The dead function elimination pass.
pub struct GlobalDce;

impl Pass for GlobalDce {
    fn name(&self) -> &'static str {
        "globaldce"
    }
    fn description(&self) -> &'static str {
        "remove functions that no call chain from main reaches"
    }
    fn run(&self, m: &mut Module) -> bool {
        run(m) > 0
    }
}

/// Removes the unreachable function definitions of `m`; returns how many.
pub fn run(m: &mut Module) -> usize {
    let Some(main) = m.func_by_name("main") else {
        return 0;
    };
    if m.funcs[main].is_declaration() {
        return 0;
    }
    let live = reachable_from(m, main);
    let dead = m
        .funcs
        .iter()
        .filter(|(id, f)| !live[*id] && !f.is_declaration())
        .count();
    if dead == 0 {
        return 0;
    }
    let old = std::mem::take(&mut m.funcs);
    let mut renumber: SecondaryMap<FuncId, Option<FuncId>> = SecondaryMap::new();
    let mut funcs = PrimaryMap::new();
    for (id, f) in old.into_iter() {
        if live[id] || f.is_declaration() {
            renumber[id] = Some(funcs.push(f));
        }
    }
    for f in funcs.values_mut() {
        let calls: Vec<_> = f
            .layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b))
            .filter(|&i| matches!(f.kind(i), InstKind::Call { .. }))
            .collect();
        for i in calls {
            if let InstKind::Call { callee, args } = f.kind(i).clone() {
                let callee = renumber[callee].expect("a live function calls only live ones");
                f.replace_kind(i, InstKind::Call { callee, args });
            }
        }
    }
    m.funcs = funcs;
    dead
}

/// The functions reachable from `root` over calls (`root` included).
fn reachable_from(m: &Module, root: FuncId) -> SecondaryMap<FuncId, bool> {
    let mut live: SecondaryMap<FuncId, bool> = SecondaryMap::new();
    live[root] = true;
    let mut work = vec![root];
    while let Some(id) = work.pop() {
        let f = &m.funcs[id];
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                if let InstKind::Call { callee, .. } = *f.kind(i) {
                    if !live[callee] {
                        live[callee] = true;
                        work.push(callee);
                    }
                }
            }
        }
    }
    live
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, even_odd};

    #[test]
    fn keeps_mutually_recursive_functions_reached_from_main_and_drops_a_dead_cycle() {
        let src = even_odd("")
            + r#"
func @ping(i32) -> i32 {
bb0(%0: i32):
  %1 = call @pong(%0)
  ret %1
}

func @pong(i32) -> i32 {
bb0(%0: i32):
  %1 = call @ping(%0)
  ret %1
}

func @main() -> i32 {
bb0:
  %0 = call @odd(9)
  ret %0
}
"#;
        let out = crate::passes::testutil::run(&src, &["globaldce"]);
        assert!(
            out.contains("func @even") && out.contains("func @odd"),
            "{out}"
        );
        assert!(!out.contains("@ping") && !out.contains("@pong"), "{out}");
        let m = ir::parse_module(&out).unwrap();
        assert_eq!(crate::passes::testutil::exec(&m, "").1, 1);
    }

    #[test]
    fn a_module_without_main_is_left_alone() {
        let src = r#"
func @lonely() -> i32 {
bb0:
  ret 3
}
"#;
        check(&["globaldce"], src, src);
    }
}
