//! Function inlining: a call to a small function is replaced by a copy of the
//! callee's body, so the call's overhead disappears and the callee's code can be
//! optimised together with its arguments (constants fold, invariants hoist).
//!
//! Bottom-up over the call graph (Muchnick, "Advanced Compiler Design and
//! Implementation", 15.2): functions are visited callees first — in post-order of a
//! depth-first walk from every function — so a callee has already absorbed its own
//! inlinable calls when its callers consider it. A call is inlined when the callee is
//! defined, does not call itself, and is either small ([`SMALL`] instructions) or
//! called from exactly one place and not huge ([`SINGLE_SITE`]); and the caller
//! stays under [`MAX_CALLER`] instructions. Only the caller's own call sites are
//! considered, not the calls copied in, so a cycle of functions cannot unfold
//! itself.
//! Small self-recursive functions are then unrolled into themselves a few levels
//! ([`unroll_recursion`]).
//!
//! Inlining one call: the caller's block is split after the call; the callee's
//! reachable blocks are copied in reverse post-order (so every operand is copied
//! before its uses; block parameters are created first), with the function
//! parameters mapped to the call's arguments and constants re-interned in the
//! caller; every `ret v` becomes a jump to the continuation block, whose parameter
//! replaces the call's result. The callee's `alloc`s move to the caller's entry block:
//! an `alloc` lives for the whole call of the function holding it, and the copy's
//! contents are uninitialised on every entry just as the original's were.

use crate::pipeline::Pass;
use ir::analysis::ControlFlowGraph;
use ir::{
    Block, BlockCall, FuncId, Function, Inst, InstKind, Module, SecondaryMap, Type, Value, ValueDef,
};
use rustc_hash::FxHashMap;

/// The inlining pass.
pub struct Inline;

impl Pass for Inline {
    fn name(&self) -> &'static str {
        "inline"
    }
    fn description(&self) -> &'static str {
        "inline calls to small and single-use non-recursive functions"
    }
    fn run(&self, m: &mut Module) -> bool {
        run(m) > 0
    }
}

/// Callees with at most this many instructions are always inlined.
pub const SMALL: usize = 40;
/// A callee called from a single place is inlined up to this many instructions.
pub const SINGLE_SITE: usize = 5000;
/// No inlining makes a caller larger than this many instructions.
pub const MAX_CALLER: usize = 6000;
/// A small self-recursive function is unrolled (inlined into itself) while it stays
/// under this many instructions.
pub const RECURSIVE_BUDGET: usize = 400;

/// Inlines what qualifies in `m`; returns how many calls were inlined.
pub fn run(m: &mut Module) -> usize {
    let graph = CallGraph::of(m);
    let mut sizes: SecondaryMap<FuncId, usize> = SecondaryMap::new();
    for (id, f) in m.funcs.iter() {
        sizes[id] = size(f);
    }
    let mut inlined = 0;
    let mut graph = graph;
    for caller in graph.post_order() {
        if m.funcs[caller].is_declaration() {
            continue;
        }
        // The caller's own call sites: calls that inlining copies in come from
        // callees already processed (post-order), so nothing is lost by not
        // revisiting them, and a cycle of functions cannot unfold itself.
        let sites: Vec<Inst> = call_sites(&m.funcs[caller]);
        for call in sites {
            let InstKind::Call { callee, .. } = *m.funcs[caller].kind(call) else {
                continue;
            };
            if !worth_inlining(m, &graph, &sizes, caller, callee) {
                continue;
            }
            let body = m.funcs[callee].clone();
            inline_call(&mut m.funcs[caller], call, &body);
            sizes[caller] = size(&m.funcs[caller]);
            inlined += 1;
        }
        graph.callees[caller] = callees_of(&m.funcs[caller]);
    }
    for (id, f) in m.funcs.iter_mut() {
        if !f.is_declaration() && graph.callees[id].contains(&id) {
            inlined += unroll_recursion(f, id);
        }
    }
    inlined
}

/// Inlines a small self-recursive function into its own recursive calls, level by
/// level, while it stays under [`RECURSIVE_BUDGET`] (GCC's recursive inlining): each
/// level removes the call overhead of a fraction of all the calls made at run time
/// (for a function calling itself twice, unrolling `d` levels leaves one call in
/// `2^d`). Every copy is of the original body, so the growth is controlled. Functions
/// with local arrays are left alone: every level would add their frame to the
/// recursive frame.
fn unroll_recursion(f: &mut Function, id: FuncId) -> usize {
    let original = f.clone();
    let n = size(&original);
    let has_alloc = original.layout.blocks().any(|b| {
        original
            .layout
            .block_insts(b)
            .any(|i| matches!(original.kind(i), InstKind::Alloc { .. }))
    });
    if n > SMALL || has_alloc {
        return 0;
    }
    let mut inlined = 0;
    loop {
        let sites: Vec<Inst> = f
            .layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b).collect::<Vec<_>>())
            .filter(|&i| matches!(f.kind(i), InstKind::Call { callee, .. } if *callee == id))
            .collect();
        if sites.is_empty() || size(f) + sites.len() * n > RECURSIVE_BUDGET {
            return inlined;
        }
        for call in sites {
            inline_call(f, call, &original);
            inlined += 1;
        }
    }
}

/// Instructions in the layout of `f`.
fn size(f: &Function) -> usize {
    f.layout
        .blocks()
        .map(|b| f.layout.block_insts(b).count())
        .sum()
}

/// The calls in `f`, in layout order.
fn call_sites(f: &Function) -> Vec<Inst> {
    f.layout
        .blocks()
        .flat_map(|b| f.layout.block_insts(b))
        .filter(|&i| matches!(f.kind(i), InstKind::Call { .. }))
        .collect()
}

/// The distinct callees of `f`, in order of first call.
fn callees_of(f: &Function) -> Vec<FuncId> {
    let mut out = Vec::new();
    for i in call_sites(f) {
        if let InstKind::Call { callee, .. } = f.kind(i) {
            if !out.contains(callee) {
                out.push(*callee);
            }
        }
    }
    out
}

/// Whether to inline a call of `callee` in `caller`. A callee that calls itself is
/// never inlined (its copy would call it again); one on a longer cycle may be, once
/// per call site of the caller.
fn worth_inlining(
    m: &Module,
    graph: &CallGraph,
    sizes: &SecondaryMap<FuncId, usize>,
    caller: FuncId,
    callee: FuncId,
) -> bool {
    if m.funcs[callee].is_declaration()
        || callee == caller
        || graph.callees[callee].contains(&callee)
    {
        return false;
    }
    let n = sizes[callee];
    let wanted = n <= SMALL || (graph.sites[callee] == 1 && n <= SINGLE_SITE);
    wanted && sizes[caller] + n <= MAX_CALLER
}

/// Who calls whom.
struct CallGraph {
    /// Distinct callees of each function, in order of first call.
    callees: SecondaryMap<FuncId, Vec<FuncId>>,
    /// Call instructions naming each function, over the whole module.
    sites: SecondaryMap<FuncId, usize>,
    funcs: Vec<FuncId>,
}

impl CallGraph {
    fn of(m: &Module) -> Self {
        let mut g = CallGraph {
            callees: SecondaryMap::new(),
            sites: SecondaryMap::new(),
            funcs: m.funcs.keys().collect(),
        };
        for (id, f) in m.funcs.iter() {
            let mut out = Vec::new();
            for b in f.layout.blocks() {
                for i in f.layout.block_insts(b) {
                    if let InstKind::Call { callee, .. } = f.kind(i) {
                        g.sites[*callee] += 1;
                        if !out.contains(callee) {
                            out.push(*callee);
                        }
                    }
                }
            }
            g.callees[id] = out;
        }
        g
    }

    /// Every function, callees before callers (post-order of depth-first walks).
    fn post_order(&self) -> Vec<FuncId> {
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

/// Replaces `call` in `f` by a copy of `callee`'s body.
pub fn inline_call(f: &mut Function, call: Inst, callee: &Function) {
    let InstKind::Call { args, .. } = f.kind(call).clone() else {
        panic!("inline_call on a non-call");
    };
    let result = f.inst_result(call);
    let block = f
        .layout
        .inst_block(call)
        .expect("the call is in the layout");

    // The continuation: everything after the call, with the result as parameter.
    let cont = f.create_block();
    f.layout.insert_block_after(cont, block);
    let ret_param = result.map(|r| f.append_block_param(cont, f.value_type(r)));
    let mut next = f.layout.next_inst(call);
    while let Some(i) = next {
        next = f.layout.next_inst(i);
        f.layout.remove_inst(i);
        f.layout.append_inst(i, cont);
    }

    // Copy the callee's reachable blocks, parameters first.
    let cfg = ControlFlowGraph::compute(callee);
    let centry = callee.entry_block();
    let mut vmap: FxHashMap<Value, Value> = FxHashMap::default();
    for (&p, &a) in callee.block_params(centry).iter().zip(&args) {
        vmap.insert(p, a);
    }
    let mut bmap: FxHashMap<Block, Block> = FxHashMap::default();
    let mut after = block;
    for &cb in cfg.rpo() {
        let nb = f.create_block();
        f.layout.insert_block_after(nb, after);
        after = nb;
        bmap.insert(cb, nb);
        if cb != centry {
            for &p in callee.block_params(cb) {
                let np = f.append_block_param(nb, callee.value_type(p));
                vmap.insert(p, np);
            }
        }
    }
    let entry = f.entry_block();
    for &cb in cfg.rpo() {
        let nb = bmap[&cb];
        for ci in callee.layout.block_insts(cb) {
            let mut kind = callee.kind(ci).clone();
            kind.map_args(|a| *a = map_value(f, callee, &vmap, *a));
            for t in kind.targets_mut() {
                t.block = bmap[&t.block];
            }
            if let InstKind::Ret { value } = kind {
                let dest = BlockCall::new(cont, value.into_iter().collect());
                f.append_inst(nb, InstKind::Jump { dest }, Type::Void);
                continue;
            }
            let ty = callee
                .inst_result(ci)
                .map_or(Type::Void, |r| callee.value_type(r));
            let is_alloc = matches!(kind, InstKind::Alloc { .. });
            let ni = f.make_inst(kind, ty);
            if is_alloc {
                f.layout.prepend_inst(ni, entry);
            } else {
                f.layout.append_inst(ni, nb);
            }
            if let (Some(r), Some(nr)) = (callee.inst_result(ci), f.inst_result(ni)) {
                vmap.insert(r, nr);
            }
        }
    }

    // The call becomes a jump into the copy of the callee's entry.
    if let (Some(r), Some(p)) = (result, ret_param) {
        f.replace_all_uses(r, p);
    }
    f.remove_inst(call);
    let dest = BlockCall::new(bmap[&centry], Vec::new());
    f.append_inst(block, InstKind::Jump { dest }, Type::Void);
}

/// The caller's value for the callee's value `v`.
fn map_value(
    f: &mut Function,
    callee: &Function,
    vmap: &FxHashMap<Value, Value>,
    v: Value,
) -> Value {
    match callee.value_def(v) {
        ValueDef::IConst(c) => f.iconst(c),
        ValueDef::FConst(bits) => f.fconst(f32::from_bits(bits)),
        ValueDef::Global(g) => f.global_addr(g),
        _ => *vmap.get(&v).expect("operands are copied before their uses"),
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    #[test]
    fn inlines_a_small_function_with_branches() {
        check(
            &["inline"],
            r#"
declare @putint(i32) -> void

func @abs(i32) -> i32 {
bb0(%0: i32):
  %1 = slt %0, 0
  br %1, bb1, bb2(%0)
bb1:
  %2 = sub 0, %0
  jump bb2(%2)
bb2(%3: i32):
  ret %3
}

func @main() -> i32 {
bb0:
  %0 = call @abs(-5)
  %1 = add %0, 1
  call @putint(%1)
  ret 0
}
"#,
            r#"
declare @putint(i32) -> void

func @abs(i32) -> i32 {
bb0(%0: i32):
  %1 = slt %0, 0
  br %1, bb1, bb2(%0)
bb1:
  %2 = sub 0, %0
  jump bb2(%2)
bb2(%3: i32):
  ret %3
}

func @main() -> i32 {
bb0:
  jump bb1
bb1:
  %0 = slt -5, 0
  br %0, bb2, bb3(-5)
bb2:
  %1 = sub 0, -5
  jump bb3(%1)
bb3(%2: i32):
  jump bb4(%2)
bb4(%3: i32):
  %4 = add %3, 1
  call @putint(%4)
  ret 0
}
"#,
        );
    }

    #[test]
    fn recursion_is_not_inlined_and_chains_are() {
        let src = r#"
declare @putint(i32) -> void

func @fib(i32) -> i32 {
bb0(%0: i32):
  %1 = slt %0, 2
  br %1, bb1, bb2
bb1:
  ret %0
bb2:
  %2 = sub %0, 1
  %3 = call @fib(%2)
  %4 = sub %0, 2
  %5 = call @fib(%4)
  %6 = add %3, %5
  ret %6
}

func @twice(i32) -> i32 {
bb0(%0: i32):
  %1 = mul %0, 2
  ret %1
}

func @quad(i32) -> i32 {
bb0(%0: i32):
  %1 = call @twice(%0)
  %2 = call @twice(%1)
  ret %2
}

func @main() -> i32 {
bb0:
  %0 = call @fib(15)
  %1 = call @quad(%0)
  call @putint(%1)
  ret 0
}
"#;
        let out = same_behaviour(src, &["inline"], "");
        let main = &out[out.find("func @main").unwrap()..];
        assert!(main.contains("call @fib(15)"), "{main}");
        assert!(
            !main.contains("@quad") && !main.contains("@twice"),
            "{main}"
        );
        assert_eq!(main.matches("mul").count(), 2, "{main}");
        // fib itself is unrolled (see below) but still recursive.
        let fib = &out[out.find("func @fib").unwrap()..out.find("func @twice").unwrap()];
        assert!(fib.matches("call @fib").count() >= 2, "{fib}");
    }

    #[test]
    fn allocs_move_to_the_entry_and_loops_keep_behaviour() {
        // The callee's local array is filled on every call inside the caller's loop.
        let src = r#"
declare @putint(i32) -> void

func @sum3(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc [i32; 3]
  store %0, %1
  %2 = gep %1, 1, 4
  %3 = add %0, 1
  store %3, %2
  %4 = gep %1, 2, 4
  %5 = add %0, 2
  store %5, %4
  jump bb1(0, 0)
bb1(%6: i32, %7: i32):
  %8 = gep %1, %6, 4
  %9 = load i32, %8
  %10 = add %7, %9
  %11 = add %6, 1
  %12 = slt %11, 3
  br %12, bb1(%11, %10), bb2
bb2:
  ret %10
}

func @main() -> i32 {
bb0:
  jump bb1(0)
bb1(%0: i32):
  %1 = call @sum3(%0)
  call @putint(%1)
  %2 = add %0, 1
  %3 = slt %2, 4
  br %3, bb1(%2), bb2
bb2:
  ret %1
}
"#;
        let out = same_behaviour(src, &["inline"], "");
        let main = &out[out.find("func @main").unwrap()..];
        assert!(!main.contains("call @sum3"), "{main}");
        assert!(
            main.starts_with("func @main() -> i32 {\nbb0:\n  %0 = alloc"),
            "{main}"
        );
    }

    #[test]
    fn void_callee_with_several_returns() {
        let src = r#"
declare @putint(i32) -> void

func @show(i32) -> void {
bb0(%0: i32):
  %1 = slt %0, 2
  br %1, bb1, bb2
bb1:
  call @putint(1)
  ret
bb2:
  call @putint(%0)
  ret
}

func @main() -> i32 {
bb0:
  call @show(1)
  call @show(7)
  ret 3
}
"#;
        let out = same_behaviour(src, &["inline"], "");
        assert!(
            !out[out.find("func @main").unwrap()..].contains("call @show"),
            "{out}"
        );
    }

    #[test]
    fn small_recursion_is_unrolled_a_few_levels() {
        let src = r#"
declare @putint(i32) -> void

func @fib(i32) -> i32 {
bb0(%0: i32):
  %1 = slt %0, 2
  br %1, bb1, bb2
bb1:
  ret %0
bb2:
  %2 = sub %0, 1
  %3 = call @fib(%2)
  %4 = sub %0, 2
  %5 = call @fib(%4)
  %6 = add %3, %5
  ret %6
}

func @main() -> i32 {
bb0:
  %0 = call @fib(20)
  call @putint(%0)
  ret 0
}
"#;
        let out = same_behaviour(src, &["inline"], "");
        let fib = &out[out.find("func @fib").unwrap()..out.find("func @main").unwrap()];
        let calls = fib.matches("call @fib").count();
        assert!(
            calls >= 8,
            "unrolled at least two levels: {calls} calls\n{fib}"
        );
        let insts = fib.lines().filter(|l| l.starts_with("  ")).count();
        assert!(insts <= super::RECURSIVE_BUDGET, "{insts}");
    }
}
