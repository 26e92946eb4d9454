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
//! stays under [`MAX_CALLER`] instructions. A call with constant arguments is
//! judged by what is left of the callee once they are substituted and folded
//! (LLVM's inline cost analysis, [`super::inline_cost`]), and only that is copied
//! (as LLVM's `CloneAndPruneFunctionInto`). Only the caller's own call sites are
//! considered, not the calls copied in, so a cycle of functions cannot unfold
//! itself.
//! Small self-recursive functions are then unrolled into themselves a few levels
//! ([`unroll_recursion`]).
//!
//! Inlining one call: the caller's block is split after the call; the callee's
//! reachable blocks (pruned: those the constants leave live) are copied in
//! reverse post-order (so every operand is copied before its uses; block
//! parameters are created first), with the function
//! parameters mapped to the call's arguments and constants re-interned in the
//! caller; every `ret v` becomes a jump to the continuation block, whose parameter
//! replaces the call's result. The callee's `alloc`s move to the caller's entry block:
//! an `alloc` lives for the whole call of the function holding it, and the copy's
//! contents are uninitialised on every entry just as the original's were.

use super::inline_cost::{simulate, Simulation};
use crate::analysis::callgraph::{call_sites, callees_of};
use crate::analysis::{CallGraph, LoopForest};
use crate::fold::Const;
use crate::pipeline::Pass;
use ir::analysis::{ControlFlowGraph, DominatorTree};
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
        run(m).calls > 0
    }
}

/// Inlining again once the callees are simplified: the size decisions of
/// [`Inline`], taken on the bodies that complete unrolling, range propagation and
/// their clean-up have shrunk, for callees left without loops (up to
/// [`LATE_SMALL`] instructions, the simplified size being what a copy costs), and
/// without unrolling recursion again. LLVM reaches this by simplifying each function
/// before its callers consider it (the CGSCC pipeline); in a pipeline of module
/// passes it is a second inliner after the callees' clean-up. A callee with a
/// loop stays a call: the loop passes (`licm`, `unswitch`, `hoistloops`,
/// `closedform`) have run by then, on the callee itself, and would not run again
/// on its copy in the caller's context.
pub struct Reinline;

impl Pass for Reinline {
    fn name(&self) -> &'static str {
        "reinline"
    }
    fn description(&self) -> &'static str {
        "inline again the calls of callees the unrolling and range passes made small and loop-free"
    }
    fn run(&self, m: &mut Module) -> bool {
        run_with(m, Round::Late).calls > 0
    }
}

/// Which inliner [`run_with`] is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Round {
    /// [`Inline`]: every call site, small recursion unrolled.
    Early,
    /// [`Reinline`]: callees without loops, recursion left alone.
    Late,
}

/// Callees with at most this many instructions are always inlined.
pub const SMALL: usize = 40;
/// [`Reinline`]'s bound for a loop-free callee: its size is then that of the
/// simplified body (the branches on values forwarded from stores, the comparisons
/// their ranges decide and the loops they guarded are gone), which is what the
/// copy costs, and the copy lets the passes that follow see the call's
/// neighbours: stores to globals the caller reads again forward, values the callee
/// reloads merge with the caller's. LLVM judges a callee likewise on its
/// simplified body; its default threshold (225 cost units, about five per
/// instruction) is of this order.
pub const LATE_SMALL: usize = 100;
/// A callee called from a single place is inlined up to this many instructions.
pub const SINGLE_SITE: usize = 5000;
/// No inlining makes a caller larger than this many instructions.
pub const MAX_CALLER: usize = 6000;
/// A small self-recursive function is unrolled (inlined into itself) while it stays
/// under this many instructions.
pub const RECURSIVE_BUDGET: usize = 400;

/// What [`run`] did.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Inlined {
    /// Calls replaced by a copy of the callee.
    pub calls: usize,
    /// Instructions copied, over all those calls: the pass's work.
    pub copied: usize,
}

/// Inlines what qualifies in `m`.
///
/// Functions are visited callees first. A function with a single call site, in
/// another function, is the exception: it is not visited on its own but inlined
/// top-down when its caller reaches that site, and its own calls (now the
/// caller's) are considered next, in the caller. A chain of such functions is
/// thus copied once, not once per level (bottom-up, the `k`-th function of a chain
/// would be copied with the `k - 1` it had absorbed: quadratic). A single-site
/// function its caller declines is visited on its own afterwards. Functions on a
/// cycle of calls are always visited bottom-up (inlining a function into its
/// only caller on the same cycle would make that caller call itself).
pub fn run(m: &mut Module) -> Inlined {
    run_with(m, Round::Early)
}

/// [`run`] for the given round.
fn run_with(m: &mut Module, round: Round) -> Inlined {
    let mut graph = CallGraph::of(m);
    let mut sizes: SecondaryMap<FuncId, usize> = SecondaryMap::new();
    for (id, f) in m.funcs.iter() {
        sizes[id] = size(f);
    }
    let order = graph.post_order();
    let main = m.func_by_name("main");
    let recursive = graph.recursive();
    let mut state: SecondaryMap<FuncId, Visit> = SecondaryMap::new();
    for &f in &order {
        if graph.sites[f] == 1 && !recursive[f] && Some(f) != main {
            state[f] = Visit::Deferred;
        }
    }
    let mut inlined = Inlined::default();
    for &caller in &order {
        if state[caller] == Visit::Pending {
            visit(
                m,
                &mut graph,
                &mut sizes,
                &mut state,
                caller,
                round,
                &mut inlined,
            );
        }
    }
    // Single-site functions whose caller declined them (or was never visited),
    // callers first, so that a declined chain is again inlined top-down.
    for &f in order.iter().rev() {
        if state[f] == Visit::Deferred {
            visit(
                m,
                &mut graph,
                &mut sizes,
                &mut state,
                f,
                round,
                &mut inlined,
            );
        }
    }
    for (id, f) in m.funcs.iter_mut() {
        if round == Round::Early && !f.is_declaration() && graph.callees[id].contains(&id) {
            let calls = unroll_recursion(f, id);
            inlined.calls += calls;
            inlined.copied += calls * sizes[id];
        }
    }
    inlined
}

/// Where a function stands in [`run`]'s walk.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
enum Visit {
    /// Not visited yet.
    #[default]
    Pending,
    /// Single-site: waits for its caller to inline it.
    Deferred,
    /// Its call sites have been considered (or it was inlined into its caller).
    Done,
}

/// Considers the call sites of `caller`, inlining what qualifies; the call sites
/// copied in from a deferred (single-site) callee are considered too.
fn visit(
    m: &mut Module,
    graph: &mut CallGraph,
    sizes: &mut SecondaryMap<FuncId, usize>,
    state: &mut SecondaryMap<FuncId, Visit>,
    caller: FuncId,
    round: Round,
    inlined: &mut Inlined,
) {
    state[caller] = Visit::Done;
    if m.funcs[caller].is_declaration() {
        return;
    }
    // A stack of sites, first call on top: the calls copied in from a deferred
    // callee go on top, so they are considered where the callee's call was.
    let mut sites: Vec<Inst> = call_sites(&m.funcs[caller]);
    sites.reverse();
    while let Some(call) = sites.pop() {
        let InstKind::Call { callee, ref args } = *m.funcs[caller].kind(call) else {
            continue;
        };
        let args: Vec<Option<Const>> = args
            .iter()
            .map(|&a| Const::of(&m.funcs[caller], a))
            .collect();
        let Some(plan) = worth_inlining(m, graph, sizes, caller, callee, &args, round) else {
            continue;
        };
        let body = m.funcs[callee].clone();
        let before = sizes[caller];
        let copied = copy_body(&mut m.funcs[caller], call, &body, plan.as_ref());
        graph.sites[callee] -= 1;
        for &c in &copied {
            if let InstKind::Call { callee: c, .. } = *m.funcs[caller].kind(c) {
                graph.sites[c] += 1;
            }
        }
        if state[callee] == Visit::Deferred {
            state[callee] = Visit::Done;
            sites.extend(copied.into_iter().rev());
        }
        sizes[caller] = size(&m.funcs[caller]);
        inlined.calls += 1;
        inlined.copied += sizes[caller] + 1 - before;
    }
    graph.callees[caller] = callees_of(&m.funcs[caller]);
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

/// The loops of `f`.
fn loop_forest(f: &Function) -> LoopForest {
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    LoopForest::compute(f, &cfg, &dt)
}

/// Whether `f` has a loop.
fn has_loop(f: &Function) -> bool {
    let loops = loop_forest(f);
    f.layout.blocks().any(|b| loops.depth(b) > 0)
}

/// Instructions in the layout of `f`.
fn size(f: &Function) -> usize {
    f.layout
        .blocks()
        .map(|b| f.layout.block_insts(b).count())
        .sum()
}

/// Whether to inline a call of `callee` in `caller`, passing `args` (`Some` for a
/// constant): `None` if not, else how to copy the callee (`Some` simulation: only
/// what it leaves, the whole body otherwise). A callee that calls itself is never
/// inlined (its copy would call it again); one on a longer cycle may be, once per
/// call site of the caller. The late round takes no callee with a loop.
///
/// With a constant argument the callee is judged, and copied, as what is left of
/// it once the constants are substituted ([`super::inline_cost`], LLVM's
/// `CallAnalyzer`; the copy is pruned likewise, as LLVM's
/// `CloneAndPruneFunctionInto`): a callee too large as it stands may then be
/// small, and the caller grows only by what the copy keeps, which is what the
/// callers of the caller see when they judge it in turn. A loop the constants
/// leave dead is not copied, so the late round takes such a callee.
fn worth_inlining(
    m: &Module,
    graph: &CallGraph,
    sizes: &SecondaryMap<FuncId, usize>,
    caller: FuncId,
    callee: FuncId,
    args: &[Option<Const>],
    round: Round,
) -> Option<Option<Simulation>> {
    let body = &m.funcs[callee];
    if body.is_declaration() || callee == caller || graph.callees[callee].contains(&callee) {
        return None;
    }
    let n = sizes[callee];
    let small = match round {
        Round::Early => SMALL,
        Round::Late => LATE_SMALL,
    };
    let by_size = n <= small || (graph.sites[callee] == 1 && n <= SINGLE_SITE);
    let sim = if args.iter().any(Option::is_some) {
        simulate(body, args, if by_size { n } else { small })
    } else {
        None
    };
    let (growth, loops) = match &sim {
        Some(s) => (s.copy_size(), s.loops),
        None if by_size => (n, round == Round::Late && has_loop(body)),
        None => return None,
    };
    let fits = sizes[caller] + growth <= MAX_CALLER;
    (fits && (round == Round::Early || !loops)).then_some(sim)
}

/// Replaces `call` in `f` by a copy of `callee`'s body; returns the calls of the
/// copy, in the callee's block order.
pub fn inline_call(f: &mut Function, call: Inst, callee: &Function) -> Vec<Inst> {
    copy_body(f, call, callee, None)
}

/// [`inline_call`], pruned by `sim`, the callee simulated with the call's
/// constant arguments, when given: only the blocks the call can reach are
/// copied, the instructions it folds become their constants, and a branch on a
/// known condition becomes a jump to its taken target.
fn copy_body(
    f: &mut Function,
    call: Inst,
    callee: &Function,
    sim: Option<&Simulation>,
) -> Vec<Inst> {
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
    let live: Vec<Block> = cfg
        .rpo()
        .iter()
        .copied()
        .filter(|&b| sim.is_none_or(|s| s.is_live(b)))
        .collect();
    for &cb in &live {
        let nb = f.create_block();
        f.layout.insert_block_after(nb, after);
        after = nb;
        bmap.insert(cb, nb);
        if cb != centry {
            for &p in callee.block_params(cb) {
                let np = f.append_block_param(nb, callee.value_type(p));
                let known = sim.and_then(|s| s.constant(p));
                vmap.insert(p, known.map_or(np, |c| c.value(f)));
            }
        }
    }
    let entry = f.entry_block();
    let mut copied_calls = Vec::new();
    for &cb in &live {
        let nb = bmap[&cb];
        for ci in callee.layout.block_insts(cb) {
            let mut kind = callee.kind(ci).clone();
            if let Some(s) = sim {
                if let Some(c) = callee.inst_result(ci).and_then(|r| s.constant(r)) {
                    let r = callee
                        .inst_result(ci)
                        .expect("a folded instruction has a result");
                    let cv = c.value(f);
                    vmap.insert(r, cv);
                    continue;
                }
                if let Some(taken) = decided_target(callee, s, &kind) {
                    kind = InstKind::Jump {
                        dest: Box::new(taken),
                    };
                }
            }
            kind.map_args(|a| *a = map_value(f, callee, &vmap, *a));
            for t in kind.targets_mut() {
                t.block = bmap[&t.block];
            }
            if let InstKind::Ret { value } = kind {
                let dest = BlockCall::new(cont, value.into_iter().collect::<Vec<_>>());
                f.append_inst(
                    nb,
                    InstKind::Jump {
                        dest: Box::new(dest),
                    },
                    Type::Void,
                );
                continue;
            }
            let ty = callee
                .inst_result(ci)
                .map_or(Type::Void, |r| callee.value_type(r));
            let is_alloc = matches!(kind, InstKind::Alloc { .. });
            let is_call = matches!(kind, InstKind::Call { .. });
            let ni = f.make_inst(kind, ty);
            f.set_src_loc(ni, callee.src_loc(ci));
            if is_call {
                copied_calls.push(ni);
            }
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
    f.append_inst(
        block,
        InstKind::Jump {
            dest: Box::new(dest),
        },
        Type::Void,
    );
    copied_calls
}

/// The target a `br` takes under the simulation `sim`, when its condition is
/// known.
fn decided_target(callee: &Function, sim: &Simulation, kind: &InstKind) -> Option<BlockCall> {
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = kind
    else {
        return None;
    };
    match Const::of(callee, *cond).or_else(|| sim.constant(*cond))? {
        Const::I(0) => Some(*else_dest.clone()),
        Const::I(_) => Some(*then_dest.clone()),
        Const::F(_) => None,
    }
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
    use crate::passes::testutil::{fib, fib_module, same_behaviour};

    #[test]
    fn recursion_is_not_inlined_and_chains_are() {
        let src = [
            "declare @putint(i32) -> void\n",
            &fib(),
            r#"
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
"#,
        ]
        .concat();
        let out = same_behaviour(&src, &["inline"], "");
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

    /// A chain of single-site functions is inlined top-down: main absorbs the
    /// chain up to its size limit, the rest of the chain (declined) is absorbed
    /// by its first function in turn, and so on, so the module ends with a few
    /// functions of bounded size instead of one copy of the chain's tail in every
    /// function (which bottom-up inlining leaves: quadratic in the chain).
    #[test]
    fn a_chain_of_single_site_functions_is_absorbed_top_down() {
        const N: usize = 3000;
        let mut src = String::from("declare @putint(i32) -> void\n");
        for k in 0..N {
            if k + 1 < N {
                src += &format!(
                    "\nfunc @g{k}(i32) -> i32 {{\nbb0(%0: i32):\n  %1 = add %0, {k}\n  %2 = call @g{}(%1)\n  ret %2\n}}\n",
                    k + 1
                );
            } else {
                src += &format!("\nfunc @g{k}(i32) -> i32 {{\nbb0(%0: i32):\n  ret %0\n}}\n");
            }
        }
        src +=
            "\nfunc @main() -> i32 {\nbb0:\n  %0 = call @g0(1)\n  call @putint(%0)\n  ret 0\n}\n";
        let out = same_behaviour(&src, &["inline", "globaldce"], "");
        let mut work = ir::parse_module(&src).unwrap();
        let done = super::run(&mut work);
        assert_eq!(done.calls, N - 1);
        assert!(
            done.copied <= 4 * N,
            "{} instructions copied for a chain of {N}",
            done.copied
        );
        let m = ir::parse_module(&out).unwrap();
        let defined: Vec<usize> = m
            .funcs
            .values()
            .filter(|f| !f.is_declaration())
            .map(super::size)
            .collect();
        assert!(defined.len() <= 5, "{} functions left", defined.len());
        assert!(
            defined.iter().all(|&n| n <= super::MAX_CALLER),
            "{defined:?}"
        );
        let total: usize = defined.iter().sum();
        assert!(total <= 6 * N, "{total} instructions for a chain of {N}");
    }

    #[test]
    fn small_recursion_is_unrolled_a_few_levels() {
        let out = same_behaviour(&fib_module(&[20]), &["inline"], "");
        let fib = &out[out.find("func @fib").unwrap()..out.find("func @main").unwrap()];
        let calls = fib.matches("call @fib").count();
        assert!(
            calls >= 8,
            "unrolled at least two levels: {calls} calls\n{fib}"
        );
        let insts = fib.lines().filter(|l| l.starts_with("  ")).count();
        assert!(insts <= super::RECURSIVE_BUDGET, "{insts}");
    }

    /// A callee over [`super::SMALL`] instructions, called twice, whose loop of two
    /// iterations complete unrolling removes and whose arithmetic on the counter
    /// then folds: the first inliner keeps the calls, the -O2 pipeline inlines it
    /// once simplified (and folds it with the constant argument), and without
    /// `reinline` it stays a call.
    const SHRINKS: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  %4 = slt %2, 2
  br %4, bb2, bb3
bb2:
BODY  %9 = add %2, 1
  jump bb1(%9, %ACC)
bb3:
  %99 = mul %3, %0
  ret %99
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @f(5, %0)
  %2 = call @f(%1, 7)
  call @putint(%2)
  ret 0
}
"#;

    /// [`SHRINKS`] with its loop body: nine terms `((i * k) % 13 < 6) * x`,
    /// summed (the remainder's range, `[-12, 12]`, does not decide the test: only
    /// the counter's two values do, once the loop is unrolled).
    fn shrinks() -> String {
        let mut body = String::new();
        let mut acc = "%3".to_string();
        for j in 1..10 {
            body += &format!(
                "  %{j}1 = mul %2, {}\n  %{j}2 = srem %{j}1, 13\n  %{j}3 = slt %{j}2, 6\n  %{j}4 = mul %{j}3, %1\n  %{j}5 = add {acc}, %{j}4\n",
                j + 3
            );
            acc = format!("%{j}5");
        }
        SHRINKS.replace("BODY", &body).replace("%ACC", &acc)
    }

    #[test]
    fn reinline_takes_callees_the_pipeline_made_small() {
        let src = shrinks();
        let first = same_behaviour(&src, &["inline"], "4");
        let main = &first[first.find("func @main").unwrap()..];
        assert_eq!(main.matches("call @f").count(), 2, "{main}");

        let o2 = crate::pipeline::pipeline(2);
        let out = same_behaviour(&src, &o2, "4");
        let main = &out[out.find("func @main").unwrap()..];
        assert!(!main.contains("call @f"), "{out}");
        // Folded with the constant argument, for the first call.
        assert!(!main.contains("srem") && !main.contains("br "), "{out}");

        let without: Vec<&str> = o2.iter().copied().filter(|&p| p != "reinline").collect();
        let out = same_behaviour(&src, &without, "4");
        let main = &out[out.find("func @main").unwrap()..];
        assert!(main.contains("call @f"), "{out}");
    }

    #[test]
    fn reinline_folds_the_copy_with_constant_arguments() {
        // `@pick` is small and loop-free: `reinline` inlines it and `sccp` keeps
        // only the arm its constant selects.
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @pick(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = eq %0, 0
  br %2, bb1, bb2
bb1:
  %3 = mul %1, 3
  ret %3
bb2:
  %4 = sdiv %1, %0
  %5 = srem %4, 11
  ret %5
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @pick(0, %0)
  call @putint(%1)
  ret 0
}
"#;
        let out = same_behaviour(
            src,
            &["reinline", "sccp", "instcombine", "dce", "simplifycfg"],
            "14",
        );
        let main = &out[out.find("func @main").unwrap()..];
        assert!(!main.contains("call @pick"), "{main}");
        assert!(main.contains("mul") && !main.contains("sdiv"), "{main}");
    }

    /// Fifty-nine steps `v = (v * x) ^ k` on the argument `x`: nothing folds.
    fn big() -> String {
        steps(59)
    }

    /// `n` steps `v = (v * x) ^ k` on the argument `x` (`2n` instructions, the
    /// last value `%{n}0`).
    fn steps(n: usize) -> String {
        (1..=n)
            .map(|i| {
                let prev = if i == 1 {
                    "%0".to_string()
                } else {
                    format!("%{}0", i - 1)
                };
                format!("  %{i}1 = mul {prev}, %0\n  %{i}0 = xor %{i}1, {i}\n")
            })
            .collect()
    }

    /// `@g`, `2n + 1` instructions without loops, called twice by `@main`.
    fn called_twice(n: usize) -> String {
        format!(
            "declare @getint() -> i32\ndeclare @putint(i32) -> void\n\n\
             func @g(i32) -> i32 {{\nbb0(%0: i32):\n{}  ret %{n}0\n}}\n\n\
             func @main() -> i32 {{\nbb0:\n  %0 = call @getint()\n  %1 = call @g(%0)\n  \
             %2 = call @g(%1)\n  call @putint(%2)\n  ret 0\n}}\n",
            steps(n)
        )
    }

    #[test]
    fn reinline_takes_loop_free_callees_up_to_its_own_bound() {
        // 61 instructions: over the first inliner's bound, under reinline's.
        let src = called_twice(30);
        const { assert!(61 > super::SMALL && 61 <= super::LATE_SMALL) };
        let first = same_behaviour(&src, &["inline"], "3");
        let main = &first[first.find("func @main").unwrap()..];
        assert_eq!(main.matches("call @g(").count(), 2, "{main}");
        let late = same_behaviour(&src, &["reinline"], "3");
        let main = &late[late.find("func @main").unwrap()..];
        assert!(!main.contains("call @g("), "{main}");
        // 101 instructions: over both.
        let src = called_twice(50);
        const { assert!(101 > super::LATE_SMALL) };
        let late = same_behaviour(&src, &["reinline"], "3");
        let main = &late[late.find("func @main").unwrap()..];
        assert_eq!(main.matches("call @g(").count(), 2, "{main}");
    }

    #[test]
    fn reinline_leaves_large_callees_loops_and_recursion() {
        // `@big` does not simplify (its work depends on its argument), `@sum` is
        // small but has a loop, `@fib` calls itself: all stay calls, and `fib` is
        // not unrolled into itself as the first inliner does.
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @big(i32) -> i32 {
bb0(%0: i32):
BIG  ret %590
}

func @sum(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = slt %1, %0
  br %3, bb2, bb3
bb2:
  %4 = add %2, %1
  %5 = add %1, 1
  jump bb1(%5, %4)
bb3:
  ret %2
}
FIB
func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @big(%0)
  %2 = call @big(%1)
  %3 = call @sum(%0)
  %4 = call @fib(%0)
  call @putint(%2)
  call @putint(%3)
  call @putint(%4)
  ret 0
}
"#
        .replace("BIG", &big())
        .replace("FIB\n", &fib());
        let out = same_behaviour(&src, &["reinline"], "9");
        let main = &out[out.find("func @main").unwrap()..];
        assert_eq!(main.matches("call @big").count(), 2, "{main}");
        assert!(main.contains("call @sum"), "{main}");
        assert!(main.contains("call @fib"), "{main}");
        let fib = &out[out.find("func @fib").unwrap()..out.find("func @main").unwrap()];
        assert_eq!(fib.matches("call @fib").count(), 2, "{fib}");
        // The first inliner takes the small loop.
        let first = same_behaviour(&src, &["inline"], "9");
        let main = &first[first.find("func @main").unwrap()..];
        assert!(!main.contains("call @sum"), "{main}");
    }

    /// `@f(n, x)`: a loop whose header returns `x` when `n <= 0` (a tail
    /// recursion turned into a loop) around sixty steps `x = (x * x) ^ k`, 126
    /// instructions; `@main` calls it with a constant 0 (the early return), a
    /// variable depth, and a constant 5 (the loop runs).
    fn guarded_loop() -> String {
        let mut body = String::new();
        let mut prev = "%3".to_string();
        for k in 1..=60 {
            body += &format!("  %{k}1 = mul {prev}, {prev}\n  %{k}0 = xor %{k}1, {k}\n");
            prev = format!("%{k}0");
        }
        format!(
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @f(i32, i32) -> i32 {{
bb0(%0: i32, %1: i32):
  jump bb1(%0, %1)
bb1(%2: i32, %3: i32):
  %4 = sle %2, 0
  br %4, bb2, bb3
bb2:
  ret %3
bb3:
{body}  %5 = sub %2, 1
  jump bb1(%5, {prev})
}}

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @f(0, %0)
  %2 = call @f(%0, 3)
  %3 = call @f(5, %0)
  %4 = add %1, %2
  %5 = add %4, %3
  call @putint(%5)
  ret 0
}}
"#
        )
    }

    #[test]
    fn a_call_whose_constants_take_the_early_return_is_inlined_pruned() {
        let src = guarded_loop();
        let n = ir::parse_module(&src)
            .unwrap()
            .funcs
            .values()
            .map(super::size)
            .max();
        assert!(n > Some(super::LATE_SMALL), "{n:?}");
        let out = same_behaviour(&src, &["inline"], "2");
        let main = &out[out.find("func @main").unwrap()..];
        // `f(0, x)` is gone; the variable depth and the depth 5 stay calls.
        assert!(!main.contains("call @f(0,"), "{main}");
        assert!(main.contains("call @f(%0, 3)"), "{main}");
        assert!(main.contains("call @f(5, %0)"), "{main}");
        // The copy is pruned: its test folded, its loop not copied.
        assert!(!main.contains("sle") && !main.contains("mul"), "{main}");
    }

    #[test]
    fn reinline_takes_a_callee_whose_loop_the_constants_leave_dead() {
        let src = guarded_loop();
        let out = same_behaviour(&src, &["reinline"], "2");
        let main = &out[out.find("func @main").unwrap()..];
        assert!(!main.contains("call @f(0,"), "{main}");
        assert_eq!(main.matches("call @f(").count(), 2, "{main}");
        // A small callee with a loop the call runs stays a call in the late
        // round, constant arguments or not.
        let small = src.replace("%5 = sub %2, 1", "%5 = sub %2, 1\n  %6 = add %5, 0");
        let small = small
            .lines()
            .filter(|l| !l.contains("= mul ") && !l.contains("= xor "))
            .collect::<Vec<_>>()
            .join("\n")
            .replace("jump bb1(%5, %600)", "jump bb1(%6, %3)");
        let out = same_behaviour(&small, &["reinline"], "2");
        let main = &out[out.find("func @main").unwrap()..];
        assert!(!main.contains("call @f(0,"), "{main}");
        assert!(main.contains("call @f(%0, 3)"), "{main}");
        assert!(main.contains("call @f(5, %0)"), "{main}");
    }
}
