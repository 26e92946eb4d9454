//! The call graph of a module: who calls whom, how often, and an order that
//! visits callees before their callers.
//!
//! SysY has no function pointers and one translation unit, so the graph is
//! exact: every `call` names its callee. Used by the inliner (bottom-up order,
//! call-site counts), purity (summaries propagated callers-ward) and dead
//! function elimination (reachability).

use ir::{FuncId, Function, InstKind, Module, SecondaryMap};

/// Who calls whom.
pub struct CallGraph {
    /// Distinct callees of each function, in order of first call.
    pub callees: SecondaryMap<FuncId, Vec<FuncId>>,
    /// Call instructions naming each function, over the whole module.
    pub sites: SecondaryMap<FuncId, usize>,
    /// The function holding the calls of each function, when they are all in one.
    pub only_caller: SecondaryMap<FuncId, Option<FuncId>>,
    /// Every function, in id order.
    pub funcs: Vec<FuncId>,
}

impl CallGraph {
    /// The call graph of `m`.
    pub fn of(m: &Module) -> Self {
        let mut g = CallGraph {
            callees: SecondaryMap::new(),
            sites: SecondaryMap::new(),
            only_caller: SecondaryMap::new(),
            funcs: m.funcs.keys().collect(),
        };
        for (id, f) in m.funcs.iter() {
            for i in call_sites(f) {
                if let InstKind::Call { callee, .. } = *f.kind(i) {
                    g.sites[callee] += 1;
                    let first = g.sites[callee] == 1;
                    g.only_caller[callee] = if first || g.only_caller[callee] == Some(id) {
                        Some(id)
                    } else {
                        None
                    };
                }
            }
            g.callees[id] = callees_of(f);
        }
        g
    }

    /// The callers of each function (each once, in id order).
    pub fn callers(&self) -> SecondaryMap<FuncId, Vec<FuncId>> {
        let mut callers: SecondaryMap<FuncId, Vec<FuncId>> = SecondaryMap::new();
        for &f in &self.funcs {
            for &c in &self.callees[f] {
                callers[c].push(f);
            }
        }
        callers
    }

    /// Every function, callees before callers (post-order of depth-first walks
    /// from each function in id order; within a cycle, any order).
    pub fn post_order(&self) -> Vec<FuncId> {
        let mut done: SecondaryMap<FuncId, bool> = SecondaryMap::new();
        let mut out = Vec::new();
        for &root in &self.funcs {
            if done[root] {
                continue;
            }
            done[root] = true;
            let mut stack = vec![(root, 0usize)];
            while let Some((f, next)) = stack.pop() {
                match self.callees[f].get(next) {
                    Some(&c) => {
                        stack.push((f, next + 1));
                        if !done[c] {
                            done[c] = true;
                            stack.push((c, 0));
                        }
                    }
                    None => out.push(f),
                }
            }
        }
        out
    }
}

impl CallGraph {
    /// Whether each function is on a cycle of calls (calls itself, directly or
    /// through others): the strongly connected components of more than one
    /// function, and self-calls (Tarjan's algorithm, iteratively).
    pub fn recursive(&self) -> SecondaryMap<FuncId, bool> {
        let mut index: SecondaryMap<FuncId, u32> = SecondaryMap::new(); // 0 = unvisited
        let mut low: SecondaryMap<FuncId, u32> = SecondaryMap::new();
        let mut on_stack: SecondaryMap<FuncId, bool> = SecondaryMap::new();
        let mut out: SecondaryMap<FuncId, bool> = SecondaryMap::new();
        let mut stack: Vec<FuncId> = Vec::new();
        let mut next = 1;
        for &root in &self.funcs {
            if index[root] != 0 {
                continue;
            }
            let mut walk = vec![(root, 0usize)];
            index[root] = next;
            low[root] = next;
            next += 1;
            stack.push(root);
            on_stack[root] = true;
            while let Some(&mut (f, ref mut k)) = walk.last_mut() {
                if let Some(&c) = self.callees[f].get(*k) {
                    *k += 1;
                    if c == f {
                        out[f] = true;
                    } else if index[c] == 0 {
                        index[c] = next;
                        low[c] = next;
                        next += 1;
                        stack.push(c);
                        on_stack[c] = true;
                        walk.push((c, 0));
                    } else if on_stack[c] {
                        low[f] = low[f].min(index[c]);
                    }
                    continue;
                }
                walk.pop();
                if let Some(&(parent, _)) = walk.last() {
                    low[parent] = low[parent].min(low[f]);
                }
                if low[f] == index[f] {
                    let mut component = Vec::new();
                    loop {
                        let g = stack.pop().expect("f is on the stack");
                        on_stack[g] = false;
                        component.push(g);
                        if g == f {
                            break;
                        }
                    }
                    if component.len() > 1 {
                        for g in component {
                            out[g] = true;
                        }
                    }
                }
            }
        }
        out
    }
}

/// The calls in `f`, in layout order.
pub fn call_sites(f: &Function) -> Vec<ir::Inst> {
    f.layout
        .blocks()
        .flat_map(|b| f.layout.block_insts(b))
        .filter(|&i| matches!(f.kind(i), InstKind::Call { .. }))
        .collect()
}

/// The distinct callees of `f`, in order of first call.
pub fn callees_of(f: &Function) -> Vec<FuncId> {
    let mut out: Vec<FuncId> = Vec::new();
    let mut seen: rustc_hash::FxHashSet<FuncId> = Default::default();
    for i in call_sites(f) {
        if let InstKind::Call { callee, .. } = f.kind(i) {
            if seen.insert(*callee) {
                out.push(*callee);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
declare @putint(i32) -> void

func @leaf(i32) -> i32 {
bb0(%0: i32):
  ret %0
}

func @mid(i32) -> i32 {
bb0(%0: i32):
  %1 = call @leaf(%0)
  %2 = call @leaf(%1)
  ret %2
}

func @top() -> void {
bb0:
  %0 = call @mid(1)
  call @putint(%0)
  ret
}

func @main() -> i32 {
bb0:
  call @top()
  %0 = call @mid(2)
  ret %0
}
"#;

    #[test]
    fn counts_sites_and_finds_single_callers() {
        let m = ir::parse_module(SRC).unwrap();
        let g = CallGraph::of(&m);
        let id = |n: &str| m.func_by_name(n).unwrap();
        assert_eq!(g.sites[id("leaf")], 2);
        assert_eq!(g.only_caller[id("leaf")], Some(id("mid")));
        assert_eq!(g.sites[id("mid")], 2);
        assert_eq!(g.only_caller[id("mid")], None);
        assert_eq!(g.only_caller[id("top")], Some(id("main")));
        assert_eq!(g.callees[id("main")], vec![id("top"), id("mid")]);
        let callers = g.callers();
        assert_eq!(callers[id("mid")], vec![id("top"), id("main")]);
    }

    #[test]
    fn finds_the_functions_on_call_cycles() {
        let src = r#"
func @self(i32) -> i32 {
bb0(%0: i32):
  %1 = call @self(%0)
  ret %1
}

func @a(i32) -> i32 {
bb0(%0: i32):
  %1 = call @b(%0)
  ret %1
}

func @b(i32) -> i32 {
bb0(%0: i32):
  %1 = call @c(%0)
  %2 = call @leaf(%1)
  ret %2
}

func @c(i32) -> i32 {
bb0(%0: i32):
  %1 = call @a(%0)
  ret %1
}

func @leaf(i32) -> i32 {
bb0(%0: i32):
  ret %0
}

func @main() -> i32 {
bb0:
  %0 = call @a(1)
  %1 = call @self(%0)
  ret %1
}
"#;
        let m = ir::parse_module(src).unwrap();
        let rec = CallGraph::of(&m).recursive();
        let on_cycle: Vec<&str> = m
            .funcs
            .iter()
            .filter(|(id, _)| rec[*id])
            .map(|(_, f)| f.name.as_str())
            .collect();
        assert_eq!(on_cycle, ["self", "a", "b", "c"]);
    }

    #[test]
    fn post_order_puts_callees_first() {
        let m = ir::parse_module(SRC).unwrap();
        let g = CallGraph::of(&m);
        let order = g.post_order();
        let pos = |n: &str| {
            let id = m.func_by_name(n).unwrap();
            order.iter().position(|&f| f == id).unwrap()
        };
        assert_eq!(order.len(), 5);
        assert!(pos("leaf") < pos("mid"));
        assert!(pos("mid") < pos("top"));
        assert!(pos("top") < pos("main"));
        assert!(pos("putint") < pos("top"));
    }
}
