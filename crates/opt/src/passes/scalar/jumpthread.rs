//! Jump threading: an edge into a block whose branch is already decided on that edge
//! goes straight to the decided successor, through a private copy of the block.
//!
//! ```text
//!   p:    ... jump b(x)                   p:    ... jump b'
//!   b(v): c = slt v, n; br c, t, e   =>   b':   c' = slt x, n; jump e   (x >= n known at p)
//!                                         b(v): c = slt v, n; br c, t, e  (other edges)
//! ```
//!
//! This is the transformation of LLVM's `JumpThreading` and GCC's jump threaders
//! (`tree-ssa-threadedge.cc`; Mueller and Whalley, "Avoiding Conditional Branches by
//! Code Replication", PLDI 1995). The block `b` is small and its copy `b'` replaces
//! it on the threaded edge; every value `b` defined then has two definitions, and
//! the SSA updater ([`crate::ssa::update`]) gives the blocks below the parameters that
//! merge them.
//!
//! Whether `b`'s branch is decided on the edge from `p` is asked of its condition with
//! `b`'s parameters replaced by the edge's arguments:
//! - the arguments may be constants that fold it;
//! - the facts established by the branches dominating the end of `p`, and by `p`'s
//!   own branch to `b`, may answer it ([`condprop`](crate::passes::value_numbering::condprop)'s facts:
//!   the same comparison, swapped or inverted, or intervals against constants);
//! - when it compares a block parameter with a value computed before that block,
//!   each edge into the block may answer it for the argument that edge passes, and
//!   all of them the same way (following parameters up to three joins back): what
//!   holds for every argument holds for the parameter wherever it is used.
//!
//! A branch decided the same way on every edge becomes a jump without copies.
//!
//! The last case is the loop that runs an inner loop only once: in
//! `while (i < n) { while (j < n) j++; i++; }` the inner guard `j < n` is false on the
//! outer back edge (both ways to the latch leave with `j >= n`), and true on entry
//! when `n > 0` was tested; threading both edges peels the first outer iteration and
//! leaves the others a loop without the inner one.
//!
//! Threading must not give a loop a second entry (the CFG stays reducible, which the
//! loop passes rely on). When `b` heads a loop, a back edge from `p` is threaded into
//! the loop only to a block that dominates `p` (the new cycle is a natural loop with
//! that header), and an entry edge into the loop's body only when every back edge is
//! threaded too (`b` then heads no loop at all). Edges of blocks that head no loop
//! are always safe: every path of the new CFG is a path of the old one with `b'`
//! read as `b`, so the old dominators still dominate.

use crate::analysis::{FunctionAnalyses, LoopForest, Preserved};
use crate::cfg_edit::single_edge;
use crate::passes::value_numbering::condprop::dom_facts::DomFacts;
use crate::passes::value_numbering::condprop::facts::{branch_fact, known, Fact};
use crate::pipeline::FunctionTransform;
use crate::ssa::remove_trivial_params;
use crate::ssa::update::repair_uses;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, BlockCall, CmpOp, Function, Inst, InstKind, Type, Value, ValueDef};
use rustc_hash::FxHashMap;

/// The jump threading pass.
pub struct JumpThread;

impl FunctionTransform for JumpThread {
    const NAME: &'static str = "jumpthread";
    const DESCRIPTION: &'static str =
        "send edges on which a block's branch is decided straight to its successor";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// Blocks with more instructions than this (besides the branch) are not copied.
const MAX_COPIED_INSTS: usize = 8;

/// Threaded edges per function at most (each copies a block).
const MAX_THREADS: usize = 64;

/// What to do with a block's branch.
enum Action {
    /// Thread these edges.
    Thread(Vec<Edge>),
    /// Every edge decides it this way: it becomes a jump.
    Fold(bool),
    Nothing,
}

/// One edge to thread: the predecessor, which of its branch targets goes to the
/// block, and whether the block's branch goes to its `then` side.
#[derive(Clone, Copy, Debug)]
struct Edge {
    pred: Block,
    which: usize,
    truth: bool,
}

/// Threads the edges of `f` that qualify; returns how many.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// [`run`], the first round on the CFG and dominator tree cached in `fa`, each
/// later one (after a change) on fresh ones.
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let mut threaded = 0;
    // Whether the function changed since `fa`'s analyses were computed.
    let mut stale = false;
    'rounds: while threaded < MAX_THREADS {
        if std::mem::take(&mut stale) {
            fa.forget();
        }
        let (cfg, dt) = fa.domtree(f);
        // Headers and membership only: the block lists are not needed, and in a
        // deep nest they would cost the square of its depth every round.
        let loops = LoopForest::compute_nest(f, cfg, dt);
        let facts = DomFacts::compute(f, cfg, dt);
        let src = FactSource::Indexed(&facts);
        for &b in cfg.rpo() {
            match plan(f, cfg, dt, &src, &loops, b) {
                Action::Thread(edges) => {
                    threaded += edges.len();
                    thread(f, b, &edges);
                    stale = true;
                    continue 'rounds;
                }
                Action::Fold(truth) => {
                    threaded += 1;
                    fold_branch(f, b, truth);
                    stale = true;
                    continue 'rounds;
                }
                Action::Nothing => {}
            }
        }
        break;
    }
    if stale {
        fa.forget();
    }
    threaded
}

/// The edges into `b` to thread.
fn plan(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    src: &FactSource,
    loops: &LoopForest,
    b: Block,
) -> Action {
    let Some(term) = f.terminator(b) else {
        return Action::Nothing;
    };
    let InstKind::Br {
        then_dest,
        else_dest,
        ..
    } = f.kind(term)
    else {
        return Action::Nothing;
    };
    if then_dest.block == else_dest.block || !copyable(f, b) {
        return Action::Nothing;
    }
    let (then_block, else_block) = (then_dest.block, else_dest.block);
    let preds = cfg.unique_preds(b);
    let preds_count = preds.len();
    let mut edges = Vec::new();
    for p in preds {
        if p == b {
            continue;
        }
        let Some((which, args)) = single_edge(f, p, b) else {
            continue; // two edges from p to b: their facts are not separate
        };
        if let Some(truth) = decide(f, cfg, dt, src, b, p, args) {
            edges.push(Edge {
                pred: p,
                which,
                truth,
            });
        }
    }
    // Decided the same way on every edge, the branch is decided in b itself: it
    // becomes a jump, and no copy is needed.
    if !edges.is_empty()
        && edges.len() == preds_count
        && edges.iter().all(|e| e.truth == edges[0].truth)
    {
        return Action::Fold(edges[0].truth);
    }
    if preds_count < 2 {
        return Action::Nothing;
    }
    // Keep the CFG reducible when b heads a loop.
    let Some(id) = loops.innermost(b).filter(|&l| loops.get(l).header == b) else {
        return thread_or_nothing(edges);
    };
    let target = |e: &Edge| if e.truth { then_block } else { else_block };
    let is_back = |p: Block| dt.dominates(b, p);
    edges.retain(|e| {
        !is_back(e.pred) || !loops.contains(id, target(e)) || dt.dominates(target(e), e.pred)
    });
    let every_back_edge_goes = cfg
        .unique_preds(b)
        .into_iter()
        .filter(|&p| is_back(p))
        .all(|p| edges.iter().any(|e| e.pred == p));
    if !every_back_edge_goes {
        edges.retain(|e| is_back(e.pred) || !loops.contains(id, target(e)));
    }
    thread_or_nothing(edges)
}

fn thread_or_nothing(edges: Vec<Edge>) -> Action {
    if edges.is_empty() {
        Action::Nothing
    } else {
        Action::Thread(edges)
    }
}

/// Replaces the branch ending `b` by a jump to its `then` (`truth`) or `else` side.
fn fold_branch(f: &mut Function, b: Block, truth: bool) {
    let term = f.terminator(b).expect("a planned block ends in a branch");
    let InstKind::Br {
        then_dest,
        else_dest,
        ..
    } = f.kind(term)
    else {
        unreachable!("planned blocks end in br");
    };
    let dest = if truth { then_dest } else { else_dest }.clone();
    f.replace_kind(term, InstKind::Jump { dest });
    crate::cfg_edit::remove_unreachable_blocks(f);
}

/// Whether `b` is small enough to copy and holds nothing a copy would change the
/// meaning or the cost of (calls, allocations).
fn copyable(f: &Function, b: Block) -> bool {
    let mut n = 0;
    for i in f.layout.block_insts(b) {
        let k = f.kind(i);
        if k.is_terminator() {
            break;
        }
        n += 1;
        if n > MAX_COPIED_INSTS || matches!(k, InstKind::Call { .. } | InstKind::Alloc { .. }) {
            return false;
        }
    }
    true
}

/// Whether the branch ending `b` goes to its `then` side whenever it is entered from
/// `p` with arguments `args`, as far as the facts at the end of `p` tell.
fn decide(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    src: &FactSource,
    b: Block,
    p: Block,
    args: &[Value],
) -> Option<bool> {
    let InstKind::Br { cond, .. } = f.kind(f.terminator(b)?) else {
        return None;
    };
    let params = f.block_params(b);
    let subst = |v: Value| match params.iter().position(|&x| x == v) {
        Some(k) => args[k],
        None => v,
    };
    let defined_in_b = |v: Value| f.value_block(v) == Some(b) && !params.contains(&v);
    let c = subst(*cond);
    if let Some(k) = f.as_iconst(c) {
        return Some(k != 0);
    }
    let question = match f.def_inst(*cond).map(|i| f.kind(i)) {
        Some(&InstKind::Cmp { op, args: [x, y] }) if defined_in_b(*cond) => {
            Some((op, subst(x), subst(y)))
        }
        _ if defined_in_b(*cond) => return None,
        Some(&InstKind::Cmp { op, args: [x, y] }) => Some((op, x, y)),
        _ => None,
    };
    // The comparison must be about values at the end of p: a value b computes anew
    // differs from the one p sees when p is a later point of a loop b heads.
    if question.is_some_and(|(_, x, y)| defined_in_b(x) || defined_in_b(y)) {
        return None;
    }
    match question {
        Some(q) => decides_with(f, cfg, dt, src, p, b, q),
        // A condition that is no comparison (a parameter of b, replaced by its
        // argument, or a value from before b) is known only as itself.
        None => known_on_edge(f, cfg, dt, src, p, b, Some(c), None),
    }
}

/// Whether comparison `q` of values available at the end of `p` holds on the edge
/// from `p` to `b`: constants, the facts of the branches dominating `p` and of
/// `p`'s branch to `b`, and what every edge into a parameter's block says of it.
pub(crate) fn decides_on_edge(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    p: Block,
    b: Block,
    q: (CmpOp, Value, Value),
) -> Option<bool> {
    decides_with(f, cfg, dt, &FactSource::Walk, p, b, q)
}

/// Where the facts of an edge come from: the dominator chain walked per question
/// (for a few questions), or an index of the whole function ([`DomFacts`], for
/// many).
enum FactSource<'a> {
    Walk,
    Indexed(&'a DomFacts),
}

/// What the facts on the edge from `p` to `b` say of condition `v` or comparison
/// `q`.
#[allow(clippy::too_many_arguments)]
fn known_on_edge(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    src: &FactSource,
    p: Block,
    b: Block,
    v: Option<Value>,
    q: Option<(CmpOp, Value, Value)>,
) -> Option<bool> {
    match src {
        FactSource::Walk => known(f, &facts_on_edge(f, cfg, dt, p, b), v, q),
        FactSource::Indexed(index) => known(f, &index.on_edge(f, dt, p, b), v, q),
    }
}

/// [`decides_on_edge`] with the facts from `src`.
fn decides_with(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    src: &FactSource,
    p: Block,
    b: Block,
    q: (CmpOp, Value, Value),
) -> Option<bool> {
    fold(f, q.0, q.1, q.2)
        .or_else(|| known_on_edge(f, cfg, dt, src, p, b, None, Some(q)))
        .or_else(|| ask_param(f, cfg, dt, src, q, JOIN_DEPTH))
}

/// How many joins back [`ask_param`] follows a parameter.
const JOIN_DEPTH: usize = 3;

/// Whether comparison `q` holds wherever its operands are available, when one of
/// them is a block parameter: asked of every edge into that block with its
/// parameters replaced by the edge's arguments, the answer when all edges agree. (A
/// parameter's value is one of its arguments, so what holds for each argument on
/// its edge holds for the parameter everywhere below.) The other operand must be
/// computed before the block: a value the block or a block after it computes is a
/// different one on each pass around a loop.
fn ask_param(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    src: &FactSource,
    (op, x, y): (CmpOp, Value, Value),
    depth: usize,
) -> Option<bool> {
    if depth == 0 {
        return None;
    }
    let param_block = |v: Value| match f.value_def(v) {
        ValueDef::Param(b, _) if b != f.entry_block() => Some(b),
        _ => None,
    };
    let d = param_block(x).or_else(|| param_block(y))?;
    let params = f.block_params(d);
    for v in [x, y] {
        let before = params.contains(&v)
            || f.value_block(v)
                .is_none_or(|vb| dt.strictly_dominates(vb, d));
        if !before {
            return None;
        }
    }
    let mut answer = None;
    for q in cfg.unique_preds(d) {
        let (_, args) = single_edge(f, q, d)?;
        let at_q = |v: Value| match params.iter().position(|&z| z == v) {
            Some(k) => args[k],
            None => v,
        };
        let asked = (op, at_q(x), at_q(y));
        let t = fold(f, op, asked.1, asked.2)
            .or_else(|| known_on_edge(f, cfg, dt, src, q, d, None, Some(asked)))
            .or_else(|| ask_param(f, cfg, dt, src, asked, depth - 1))?;
        if answer.is_some_and(|a| a != t) {
            return None;
        }
        answer = Some(t);
    }
    answer
}

/// The facts that hold on the edge from `p` to `b`: those of the edges dominating `p`
/// and that of `p`'s own branch to `b`.
pub(crate) fn facts_on_edge(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    p: Block,
    b: Block,
) -> Vec<Fact> {
    facts_on_edge_below(f, cfg, dt, p, b, None)
}

/// [`facts_on_edge`] from the edges below `top` (a block dominating `p`) only,
/// when given: all that can be known there of a value defined in `top`, whose
/// comparisons only branches below it can make.
pub(crate) fn facts_on_edge_below(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    p: Block,
    b: Block,
    top: Option<Block>,
) -> Vec<Fact> {
    let mut facts = Vec::new();
    let mut d = Some(p);
    while let Some(x) = d {
        if let [q] = cfg.preds(x) {
            facts.extend(branch_fact(f, *q, x));
        }
        d = dt.idom(x).filter(|_| Some(x) != top);
    }
    facts.reverse(); // outermost first: `known` prefers the nearest
    facts.extend(branch_fact(f, p, b));
    facts
}

/// `op(x, y)` when both are integer constants.
fn fold(f: &Function, op: CmpOp, x: Value, y: Value) -> Option<bool> {
    use crate::fold::{fold_cmp, Const};
    match fold_cmp(op, Const::of(f, x)?, Const::of(f, y)?)? {
        Const::I(r) => Some(r != 0),
        Const::F(_) => None,
    }
}

/// Threads `edges` into `b`: each gets its own copy of `b` ending in a jump to the
/// decided successor; uses of `b`'s values below are then repaired.
fn thread(f: &mut Function, b: Block, edges: &[Edge]) {
    let params = f.block_params(b).to_vec();
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    let (&term, body) = insts.split_last().expect("a branch ends the block");
    let mut copies: Vec<(Block, FxHashMap<Value, Value>)> = Vec::new();
    for e in edges {
        let pt = f
            .terminator(e.pred)
            .expect("a predecessor ends in a branch");
        let call = f.kind(pt).targets()[e.which].clone();
        let nb = f.create_block();
        f.layout.insert_block_after(nb, e.pred);
        // An argument that is a value of b itself (a loop's back edge passing the
        // header's parameter around unchanged) means that value as it reaches the
        // end of p, which the repair below may change: it keeps flowing in as an
        // argument, to a parameter of the copy, so that the repair sees its use in
        // p. (Mapped straight to the copy's code, it stayed the value b defines,
        // stale once the copy bypasses b.)
        let of_b = |f: &Function, v: Value| f.value_block(v) == Some(b);
        let mut map: FxHashMap<Value, Value> = FxHashMap::default();
        let mut passed = Vec::new();
        for (&param, &a) in params.iter().zip(call.args.iter()) {
            if of_b(f, a) {
                let ty = f.value_type(param);
                map.insert(param, f.append_block_param(nb, ty));
                passed.push(a);
            } else {
                map.insert(param, a);
            }
        }
        for &i in body {
            let mut kind = f.kind(i).clone();
            kind.map_args(|a| {
                if let Some(&c) = map.get(a) {
                    *a = c;
                }
            });
            let ty = f.inst_result(i).map_or(Type::Void, |r| f.value_type(r));
            let c = f.append_inst(nb, kind, ty);
            f.copy_src_loc(i, c);
            if let (Some(r), Some(cr)) = (f.inst_result(i), f.inst_result(c)) {
                map.insert(r, cr);
            }
        }
        let InstKind::Br {
            then_dest,
            else_dest,
            ..
        } = f.kind(term)
        else {
            unreachable!("planned blocks end in br");
        };
        let mut dest = if e.truth { then_dest } else { else_dest }.clone();
        for a in &mut dest.args {
            if let Some(&c) = map.get(a) {
                *a = c;
            }
        }
        f.append_inst(nb, InstKind::Jump { dest }, Type::Void);
        f.set_target(pt, e.which, BlockCall::new(nb, passed));
        copies.push((nb, map));
    }
    // Every value of b now has a definition per copy: repair its uses outside b.
    let cfg = ControlFlowGraph::compute(f);
    let mut created = Vec::new();
    for v in f.block_values(b) {
        let mut defs = vec![(b, v)];
        defs.extend(copies.iter().map(|(nb, map)| (*nb, map[&v])));
        created.extend(repair_uses(f, &cfg, v, &defs, |x| x == b));
    }
    // b may be left without predecessors; its edges must go before the new
    // parameters are judged trivial.
    crate::cfg_edit::remove_unreachable_blocks(f);
    remove_trivial_params(f, &created);
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    /// `while (i < n) { while (j < n) { s += j; j++; } putint(s); i++; }` with `j`
    /// never reset, after loop rotation: the inner guard in the outer header.
    const RUNS_ONCE: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb1(0, 0, 0), bb4
bb1(%2: i32, %3: i32, %4: i32):
  %5 = slt %3, %0
  br %5, bb2(%3, %4), bb3(%3, %4)
bb2(%6: i32, %7: i32):
  %8 = add %7, %6
  %9 = add %6, 1
  %10 = slt %9, %0
  br %10, bb2(%9, %8), bb3(%9, %8)
bb3(%11: i32, %12: i32):
  call @putint(%12)
  %13 = add %2, 1
  %14 = slt %13, %0
  br %14, bb1(%13, %11, %12), bb4
bb4:
  ret 0
}
"#;

    /// Regression (difftest --size large, seed 600183, once exitsink rotated its
    /// loops early): two loops share the header bb1, whose invariant test is false
    /// on both back edges. The inner back edge passes the outer counter `%3`
    /// through unchanged; threaded, that argument must be the counter reaching the
    /// inner latch (which the outer latch's copy now updates), not bb1's own
    /// parameter, which the copies bypass: the outer loop never ended.
    #[test]
    fn a_back_edge_passing_the_headers_parameter_through_keeps_it_current() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = eq %0, 7
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  br %1, bb5, bb2
bb2:
  call @putint(%3)
  %4 = add %2, 1
  %5 = slt %4, 2
  br %5, bb1(%4, %3), bb3
bb3:
  %6 = add %3, 1
  %7 = slt %6, 3
  br %7, bb1(0, %6), bb4
bb4:
  ret 0
bb5:
  ret 1
}
"#;
        let out = same_behaviour(src, &["jumpthread"], "3");
        // Both back edges skip the test.
        assert_eq!(out.matches("br %1,").count(), 1, "{out}");
        let m = ir::parse_module(&out).unwrap();
        assert_eq!(crate::passes::testutil::exec(&m, "3").0, "001122");
    }

    #[test]
    fn an_inner_loop_that_runs_once_is_peeled_off() {
        // Entering, `0 < n` follows from `n > 0`; around the back edge, both ways
        // into the latch leave `j >= n`. Both edges skip the guard: the inner loop
        // runs first, then a loop that only prints.
        check(
            &["jumpthread"],
            RUNS_ONCE,
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb1, bb5
bb1:
  %2 = slt 0, %0
  jump bb2(0, 0)
bb2(%3: i32, %4: i32):
  %5 = add %4, %3
  %6 = add %3, 1
  %7 = slt %6, %0
  br %7, bb2(%6, %5), bb3(%6, %5, 0)
bb3(%8: i32, %9: i32, %10: i32):
  call @putint(%9)
  %11 = add %10, 1
  %12 = slt %11, %0
  br %12, bb4, bb5
bb4:
  %13 = slt %8, %0
  jump bb3(%8, %9, %11)
bb5:
  ret 0
}
"#,
        );
        for n in ["0", "1", "4", "-2"] {
            same_behaviour(RUNS_ONCE, &["jumpthread", "simplifycfg", "dce"], n);
        }
    }

    #[test]
    fn an_entry_into_the_body_waits_for_every_back_edge() {
        // `0 < n` is known on entry, but the back edge's test is open: sending the
        // entry straight into the body would give the loop a second entry.
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb1(0), bb3
bb1(%2: i32):
  %3 = slt %2, %0
  br %3, bb2, bb3
bb2:
  call @putint(%2)
  %4 = add %2, 1
  jump bb1(%4)
bb3:
  ret 0
}
"#;
        check(&["jumpthread"], src, src);
    }

    #[test]
    fn a_value_the_block_computes_anew_is_not_decided_by_old_facts() {
        // Below the header `x < 10` holds for this iteration's `x`; the header
        // computes the next `x` from the argument, so the back edge decides nothing.
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0)
bb1(%0: i32):
  %1 = add %0, 1
  %2 = slt %1, 10
  br %2, bb2, bb3
bb2:
  call @putint(%1)
  jump bb1(%1)
bb3:
  ret 0
}
"#;
        check(&["jumpthread"], src, src);
        same_behaviour(src, &["jumpthread"], "");
    }

    #[test]
    fn a_test_repeated_after_a_join_follows_the_first() {
        // `if (x == 0) a else b; y = x + 1; if (x == 0) c else d`: each arm of the
        // first test knows the second; the join is copied into both.
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = eq %0, 0
  br %1, bb1, bb2
bb1:
  call @putint(1)
  jump bb3
bb2:
  call @putint(2)
  jump bb3
bb3:
  %2 = add %0, 1
  br %1, bb4, bb5
bb4:
  call @putint(%2)
  ret 0
bb5:
  %3 = mul %2, 3
  call @putint(%3)
  ret 0
}
"#;
        check(
            &["jumpthread"],
            src,
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = eq %0, 0
  br %1, bb1, bb3
bb1:
  call @putint(1)
  jump bb2
bb2:
  %2 = add %0, 1
  jump bb5
bb3:
  call @putint(2)
  jump bb4
bb4:
  %3 = add %0, 1
  jump bb6
bb5:
  call @putint(%2)
  ret 0
bb6:
  %4 = mul %3, 3
  call @putint(%4)
  ret 0
}
"#,
        );
        for x in ["0", "7"] {
            same_behaviour(src, &["jumpthread"], x);
        }
    }

    #[test]
    fn a_flag_set_on_both_arms_is_tested_once() {
        // `flag = x < 0 ? 1 : 0; if (flag) ...`: each arm knows the flag.
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = slt %0, 0
  br %1, bb1, bb2
bb1:
  call @putint(1)
  jump bb3(1)
bb2:
  call @putint(2)
  jump bb3(0)
bb3(%2: i32):
  %3 = ne %2, 0
  br %3, bb4, bb5
bb4:
  call @putint(%0)
  jump bb5
bb5:
  ret %2
}
"#;
        let out = same_behaviour(src, &["jumpthread"], "-5");
        same_behaviour(src, &["jumpthread"], "5");
        assert!(!out.contains("bb3("), "the join is gone:\n{out}");
        assert_eq!(out.matches("br ").count(), 1, "one test left:\n{out}");
    }
}
