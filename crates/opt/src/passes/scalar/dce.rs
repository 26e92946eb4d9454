//! Aggressive dead code elimination: assume everything dead, prove it live.
//!
//! The mark-and-sweep algorithm of Cytron, Ferrante, Rosen, Wegman and Zadeck
//! (TOPLAS 1991, section 7.1), adapted to block parameters:
//!
//! - **Roots.** Instructions with effects are live: stores, returns, and calls to
//!   functions that may have side effects ([`Purity`]). So is the terminator of every
//!   block with a back edge (found by depth-first search), as LLVM's ADCE does by
//!   default: loops are kept even when nothing they compute is used, so a loop that
//!   might not terminate never disappears. The exception are the latches of natural
//!   loops that scalar evolution proves to start finitely many iterations (an exit
//!   test on every iteration has an unconditional exit count,
//!   [`crate::analysis::scev::ScalarEvolution::iterates_finitely`]): such a loop
//!   terminates unless an inner loop does not, and inner loops not proven finite
//!   keep their latches, whose liveness reaches the outer loop's exit branches
//!   through control dependence. A whole nest computing nothing used after it
//!   (even one storing into private arrays it alone reads) then dies at once, as
//!   with LLVM's `adce-remove-loops` restricted to loops whose termination is
//!   proven (the condition of LLVM's `LoopDeletion`).
//! - **Propagation.** The operands of a live instruction are live. A live block
//!   parameter makes its block live and, on every incoming edge, the argument and the
//!   branch passing it (which edge is taken decides the value). A block with anything
//!   live in it is live, and so are the terminators of the blocks it is control
//!   dependent on (via post-dominance frontiers): they decide whether it runs. A `br`
//!   makes only its condition live; arguments count only for live parameters. Each
//!   deciding branch is found once ([`Deciders`]), without listing the control
//!   dependences, which are quadratic in the depth of a loop nest.
//! - **Sweep.** A `br` that is not live decides nothing that matters: it becomes a
//!   `jump` to its nearest live post-dominator (the blocks in between are dead and
//!   become unreachable). Dead block parameters go with their arguments on every edge,
//!   dead instructions go, and unreachable blocks are removed.
//!
//! - **Memory of local arrays.** A store into an `alloc` whose address never escapes
//!   (it is used only as the address of loads and stores and the base of `gep`s, and
//!   as the pointer of `memset` calls whose result is unused) is observable only
//!   through the function's own loads of that `alloc`. Such stores and `memset`s are
//!   not roots: they become live when a load of their `alloc` does. Arrays whose
//!   loaded values only feed stores back into local arrays (load-store cycles) die
//!   whole. This is dead-store elimination folded into the mark phase, at the
//!   granularity of whole objects, as GCC's `cd-dce` treats stores to non-aliased
//!   local aggregates and LLVM removes allocas whose only uses are stores.
//!
//! Like C compilers, this drops an unused computation even if it would have trapped (a
//! division by zero is undefined behaviour in C) and an unused call to a function
//! without side effects even if that call would never return (C lets compilers
//! assume side-effect-free loops terminate; loops in the function being optimised
//! are kept unless proven finite, see the roots above).

use crate::analysis::scev::ScalarEvolution;
use crate::analysis::{AnalysisManager, Deciders, FunctionAnalyses, Preserved, Purity};
use crate::cfg_edit::remove_unreachable_blocks;
use crate::passes::loops::loopidiom::memset_of;
use crate::pipeline::Pass;
use ir::analysis::ControlFlowGraph;
use ir::{
    Block, BlockCall, FuncId, Function, Inst, InstKind, Module, SecondaryMap, Value, ValueDef,
};
use rustc_hash::FxHashSet;

/// The DCE pass.
pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }
    fn description(&self) -> &'static str {
        "aggressive dead code elimination with control dependence (Cytron et al.)"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let purity = am.purity(m);
        let memset = memset_of(m);
        am.each_function(m, |f, fa| {
            let removed = remove_unreachable_blocks(f);
            if removed {
                fa.forget();
            }
            run_on(f, &purity, memset, fa) | removed
        })
    }
}

enum Item {
    Inst(Inst),
    Param(Value),
    Block(Block),
}

/// What is proven live.
struct Marks<'a> {
    f: &'a Function,
    cfg: &'a ControlFlowGraph,
    /// The branches deciding the blocks marked live, each reported once.
    deciders: Deciders,
    decided: Vec<Block>,
    inst: SecondaryMap<Inst, bool>,
    param: SecondaryMap<Value, bool>,
    block: SecondaryMap<Block, bool>,
    work: Vec<Item>,
    local: LocalMemory,
}

impl Marks<'_> {
    fn inst(&mut self, i: Inst) {
        if !self.inst[i] {
            self.inst[i] = true;
            self.work.push(Item::Inst(i));
            // A live load of a private array makes every write of the array live.
            if let Some(a) = self.local.read_by[i].take() {
                for w in std::mem::take(&mut self.local.writes[a]) {
                    self.inst(w);
                }
            }
        }
    }

    fn value(&mut self, v: Value) {
        match self.f.value_def(v) {
            ValueDef::Inst(i) => self.inst(i),
            ValueDef::Param(b, _) if b != self.f.entry_block() && !self.param[v] => {
                self.param[v] = true;
                self.work.push(Item::Param(v));
            }
            _ => {}
        }
    }

    fn block(&mut self, b: Block) {
        if !self.block[b] {
            self.block[b] = true;
            self.work.push(Item::Block(b));
        }
    }

    fn propagate(&mut self) {
        let f = self.f;
        while let Some(item) = self.work.pop() {
            match item {
                Item::Inst(i) => {
                    if let Some(b) = f.layout.inst_block(i) {
                        self.block(b);
                    }
                    match f.kind(i) {
                        InstKind::Br { cond, .. } => self.value(*cond),
                        InstKind::Jump { .. } => {}
                        k => k.for_each_arg(|a| self.value(a)),
                    }
                }
                Item::Param(p) => {
                    let ValueDef::Param(b, idx) = f.value_def(p) else {
                        continue;
                    };
                    self.block(b);
                    for pred in self.cfg.unique_preds(b) {
                        let Some(term) = f.terminator(pred) else {
                            continue;
                        };
                        self.inst(term);
                        for t in f.kind(term).targets() {
                            if t.block == b {
                                self.value(t.args[idx as usize]);
                            }
                        }
                    }
                }
                Item::Block(b) => {
                    let mut decided = std::mem::take(&mut self.decided);
                    self.deciders.take(b, &mut decided);
                    for x in decided.drain(..) {
                        if let Some(t) = f.terminator(x) {
                            self.inst(t);
                        }
                    }
                    self.decided = decided;
                }
            }
        }
    }
}

/// The `alloc`s whose address never escapes, with their writes and reads.
#[derive(Default)]
struct LocalMemory {
    /// Per load of such an `alloc`: the `alloc` (cleared once the load is live).
    read_by: SecondaryMap<Inst, Option<Value>>,
    /// Per such `alloc`: its stores and `memset`s not yet live.
    writes: SecondaryMap<Value, Vec<Inst>>,
    /// The stores and `memset`s of such `alloc`s (not roots).
    private_write: SecondaryMap<Inst, bool>,
}

impl LocalMemory {
    /// Classifies the `alloc`s of `f`; `memset` is the module's C `memset`.
    fn of(f: &Function, memset: Option<FuncId>) -> LocalMemory {
        // The loads' table sized once: marking takes each live load's entry, and
        // a table filled from empty would grow at every one.
        let mut out = LocalMemory {
            read_by: f.inst_map(),
            ..LocalMemory::default()
        };
        let mut reads: Vec<Inst> = Vec::new();
        let mut writes: Vec<Inst> = Vec::new();
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                if !matches!(f.kind(i), InstKind::Alloc { .. }) {
                    continue;
                }
                let a = f.inst_result(i).expect("alloc has a result");
                reads.clear();
                writes.clear();
                let mut escaped = false;
                let mut work = vec![a];
                'walk: while let Some(p) = work.pop() {
                    for &u in f.users(p) {
                        match f.kind(u) {
                            InstKind::Load { .. } => reads.push(u),
                            InstKind::Store { value, .. } if *value != p => writes.push(u),
                            InstKind::Gep { base, index, .. } if *base == p && *index != p => {
                                work.push(f.inst_result(u).expect("gep has a result"));
                            }
                            InstKind::Call { callee, args }
                                if Some(*callee) == memset
                                    && args.len() == 3
                                    && args[0] == p
                                    && args[1..].iter().all(|&x| x != p)
                                    && f.inst_result(u).is_none_or(|r| f.users(r).is_empty()) =>
                            {
                                writes.push(u)
                            }
                            _ => {
                                escaped = true;
                                break 'walk;
                            }
                        }
                    }
                }
                if escaped {
                    continue;
                }
                for &r in &reads {
                    out.read_by[r] = Some(a);
                }
                for &w in &writes {
                    out.private_write[w] = true;
                }
                out.writes[a] = writes.clone();
            }
        }
        out
    }
}

/// Whether `i` must stay whatever its result's uses.
fn is_root(f: &Function, purity: &Purity, local: &LocalMemory, i: Inst) -> bool {
    if local.private_write[i] {
        return false;
    }
    match f.kind(i) {
        InstKind::Store { .. } | InstKind::Ret { .. } => true,
        InstKind::Call { callee, .. } => purity.effects(*callee).has_side_effects(),
        _ => false,
    }
}

/// The edges to a block on the depth-first search stack (back edges, also of
/// irreducible cycles): every cycle has one.
fn back_edges(f: &Function, cfg: &ControlFlowGraph) -> Vec<(Block, Block)> {
    let mut state: SecondaryMap<Block, u8> = f.block_map(); // 1 on stack, 2 done
    let mut out = Vec::new();
    let entry = f.entry_block();
    let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
    state[entry] = 1;
    while let Some(&mut (b, ref mut i)) = stack.last_mut() {
        if let Some(&s) = cfg.succs(b).get(*i) {
            *i += 1;
            match state[s] {
                0 => {
                    state[s] = 1;
                    stack.push((s, 0));
                }
                1 => out.push((b, s)),
                _ => {}
            }
        } else {
            state[b] = 2;
            stack.pop();
        }
    }
    out
}

/// The sources of the back `edges` whose terminators are still dead after
/// marking and must be roots after all: all but the latches of natural loops
/// proven to iterate finitely (each source once). Only these loops are asked
/// about: a loop whose exit test is live anyway (it computes something live)
/// needs no termination proof, and proving it costs scalar evolution per loop on
/// every run of the pass.
fn live_back_edges(
    f: &Function,
    edges: &[(Block, Block)],
    live: &SecondaryMap<Inst, bool>,
    se: &mut ScalarEvolution,
) -> Vec<Block> {
    let dead = |b: Block| f.terminator(b).is_some_and(|t| !live[t]);
    let pending: FxHashSet<(Block, Block)> =
        edges.iter().copied().filter(|&(b, _)| dead(b)).collect();
    if pending.is_empty() {
        return Vec::new();
    }
    let loops = se.loops;
    let mut finite: FxHashSet<(Block, Block)> = FxHashSet::default();
    for (id, lp) in loops.loops() {
        let asked = lp
            .latches
            .iter()
            .any(|&l| pending.contains(&(l, lp.header)));
        if asked && se.iterates_finitely(id) {
            finite.extend(lp.latches.iter().map(|&l| (l, lp.header)));
        }
    }
    let mut out: Vec<Block> = edges
        .iter()
        .filter(|e| pending.contains(e) && !finite.contains(e))
        .map(|&(b, _)| b)
        .collect();
    out.dedup();
    out
}

/// Removes dead code from `f`; `purity` tells which calls may be deleted.
pub fn run(f: &mut Function, purity: &Purity, memset: Option<FuncId>) -> bool {
    let removed = remove_unreachable_blocks(f);
    run_on(f, purity, memset, &mut FunctionAnalyses::default()) | removed
}

/// [`run`] on `f` without unreachable blocks, with its CFG and post-dominator
/// tree from `fa` (the same between runs that changed no edge).
fn run_on(
    f: &mut Function,
    purity: &Purity,
    memset: Option<FuncId>,
    fa: &mut FunctionAnalyses,
) -> bool {
    let mut changed = false;
    let edges = back_edges(f, fa.cfg(f));
    let (cfg, pdt, mut scev) = if edges.is_empty() {
        let (cfg, pdt) = fa.postdom(f);
        (cfg, pdt, None)
    } else {
        let (cfg, pdt, parts) = fa.postdom_and_scev(f);
        (cfg, pdt, Some(parts))
    };
    let deciders = Deciders::new(cfg, pdt);

    let (redirects, live_inst, live_param) = {
        let mut marks = Marks {
            f,
            cfg,
            deciders,
            decided: Vec::new(),
            inst: f.inst_map(),
            param: f.value_map(),
            block: f.block_map(),
            work: Vec::new(),
            local: LocalMemory::of(f, memset),
        };
        for &b in cfg.rpo() {
            for i in f.layout.block_insts(b) {
                if is_root(f, purity, &marks.local, i) {
                    marks.inst(i);
                }
            }
        }
        marks.propagate();
        // The back edges left dead are roots unless proven finite; marking from
        // them after the other roots gives the same live set (it is the closure
        // of all the roots, in whatever order they are marked).
        if let Some(parts) = &mut scev {
            let mut se = parts.evolution(f, cfg);
            for b in live_back_edges(f, &edges, &marks.inst, &mut se) {
                if let Some(t) = f.terminator(b) {
                    marks.inst(t);
                }
            }
            marks.propagate();
        }

        // Each dead `br` jumps to its nearest live post-dominator instead. That block
        // has no live parameters (they would have made the branch live); if there is
        // none, or it has, the branch is kept live after all and marking resumes.
        let redirects = loop {
            let mut redirects: Vec<(Inst, Block)> = Vec::new();
            let mut kept = false;
            // The first live block up the post-dominator tree from each dead block
            // walked so far (blocks become live only in `propagate`, after this
            // round): a chain of dead branches, each post-dominated by the next,
            // is walked once, not once from each of them.
            let mut first_live: SecondaryMap<Block, Option<Option<Block>>> = f.block_map();
            let mut path: Vec<Block> = Vec::new();
            for &b in cfg.rpo() {
                let Some(t) = f.terminator(b) else { continue };
                if marks.inst[t] || !matches!(f.kind(t), InstKind::Br { .. }) {
                    continue;
                }
                let mut up = pdt.ipdom(b);
                let target = loop {
                    let Some(x) = up else { break None };
                    if marks.block[x] {
                        break Some(x);
                    }
                    if let Some(known) = first_live[x] {
                        break known;
                    }
                    path.push(x);
                    up = pdt.ipdom(x);
                };
                for x in path.drain(..) {
                    first_live[x] = Some(target);
                }
                match target {
                    Some(l) if !f.block_params(l).iter().any(|&p| marks.param[p]) => {
                        redirects.push((t, l))
                    }
                    _ => {
                        marks.inst(t);
                        kept = true;
                    }
                }
            }
            if !kept {
                break redirects;
            }
            marks.propagate();
        };
        (redirects, marks.inst, marks.param)
    };

    // Sweep. First the branches, so dead values lose their last uses as conditions.
    for &(t, l) in &redirects {
        f.replace_kind(
            t,
            InstKind::Jump {
                dest: Box::new(BlockCall::new(l, vec![])),
            },
        );
    }
    changed |= !redirects.is_empty();
    // Dead instructions lose their operands (so they can go in any order).
    let mut dead: Vec<Inst> = Vec::new();
    for &b in cfg.rpo() {
        for i in f.layout.block_insts(b) {
            if !live_inst[i] && !f.kind(i).is_terminator() {
                dead.push(i);
            }
        }
    }
    for &i in &dead {
        f.replace_kind(i, InstKind::Ret { value: None });
    }
    // Dead parameters: drop their arguments on every edge, then the parameters.
    let entry = f.entry_block();
    let is_dead_param = |f: &Function, b: Block, j: usize| {
        b != entry && f.block_params(b).get(j).is_some_and(|&p| !live_param[p])
    };
    for &b in cfg.rpo() {
        let Some(t) = f.terminator(b) else { continue };
        let targets: Vec<BlockCall> = f.kind(t).targets().into_iter().cloned().collect();
        for (which, call) in targets.into_iter().enumerate() {
            if (0..call.args.len()).any(|j| is_dead_param(f, call.block, j)) {
                let args = call
                    .args
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| !is_dead_param(f, call.block, j))
                    .map(|(_, &a)| a)
                    .collect::<Vec<_>>();
                f.set_target(t, which, BlockCall::new(call.block, args));
            }
        }
    }
    for &b in cfg.rpo() {
        for j in (0..f.block_params(b).len()).rev() {
            if is_dead_param(f, b, j) {
                f.remove_block_param(b, j, &[]);
                changed = true;
            }
        }
    }
    for &i in &dead {
        f.remove_inst(i);
    }
    changed |= !dead.is_empty();
    changed |= remove_unreachable_blocks(f);
    changed
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    #[test]
    fn infinite_loop_is_kept() {
        let src = r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  br %0, bb1, bb2
bb1:
  jump bb1
bb2:
  ret 0
}
"#;
        check(&["dce"], src, src);
    }

    /// A nest like a generated program's: the outer loop branches on a private
    /// array `%a` that only its inner loop stores into, and nothing the nest
    /// computes is used after it. `INNER` is the inner loop's exit test, `STORE`
    /// the inner loop's store.
    const NEST: &str = r#"
global @g: i32 = 0

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %a = alloc [i32; 4]
  %n = call @getint()
  store %n, %a
  jump bb1(-3)
bb1(%i: i32):
  %k = and %i, 3
  %p = gep %a, %k, 4
  %v = load i32, %p
  %c = slt %v, 5
  br %c, bb2(1), bb4
bb2(%j: i32):
  %q = gep %a, 1, 4
STORE
  %j1 = INNER
  %d = sgt %j1, -17
  br %d, bb2(%j1), bb4
bb4:
  %i1 = add %i, 1
  %e = slt %i1, 6
  br %e, bb1(%i1), bb5
bb5:
  call @putint(%n)
  ret 0
}
"#;

    fn nest(inner: &str, store: &str) -> String {
        NEST.replace("INNER", inner).replace("STORE", store)
    }

    #[test]
    fn a_finite_nest_computing_nothing_used_dies() {
        let src = nest("add %j, -1", "  store %j, %q");
        for input in ["0", "7"] {
            let out = same_behaviour(&src, &["dce"], input);
            assert!(!out.contains("br "), "{out}");
            assert!(!out.contains("alloc"), "{out}");
        }
    }

    #[test]
    fn a_loop_not_proven_finite_is_kept() {
        // `j = j * 3` from 1 while `j > -17`: no exit count (it happens to end
        // when the product wraps negative, but that is not proven). The inner
        // loop stays, and with it the outer one and the array it reads.
        let src = nest("mul %j, 3", "  store %j, %q");
        let out = same_behaviour(&src, &["dce"], "0");
        assert!(out.contains("mul %"), "{out}");
        assert!(out.contains("slt %"), "{out}");
        assert!(out.contains("store %"), "{out}");
        // `while (x != 0) x = x * 3` alone, from input: kept.
        let src = r#"
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(%0)
bb1(%1: i32):
  %2 = ne %1, 0
  br %2, bb2, bb3
bb2:
  %3 = mul %1, 3
  jump bb1(%3)
bb3:
  ret 0
}
"#;
        check(&["dce"], src, src);
    }

    /// A loop whose exit test is live anyway (it stores to a global on every
    /// iteration) needs no termination proof: the pass changes nothing and asks
    /// scalar evolution about no value (its state stays with the manager).
    #[test]
    fn a_loop_with_a_live_exit_test_is_not_asked_to_terminate() {
        use crate::pipeline::Pass;
        let src = r#"
global @g: i32 = 0

func @main() -> i32 {
bb0:
  jump bb1(0)
bb1(%i: i32):
  store %i, @g
  %i1 = add %i, 1
  %c = slt %i1, 10
  br %c, bb1(%i1), bb2
bb2:
  ret 0
}
"#;
        let mut m = ir::parse_module(src).unwrap();
        let mut am = crate::analysis::AnalysisManager::new();
        assert!(!super::Dce.run_with(&mut m, &mut am), "nothing is dead");
        let (id, f) = m.funcs.iter().find(|(_, f)| f.name == "main").unwrap();
        assert_eq!(am.function(id).scev(f).analysed(), 0);
    }

    #[test]
    fn a_finite_loop_storing_to_a_global_is_kept() {
        let src = nest("add %j, -1", "  store %j, @g");
        let out = same_behaviour(&src, &["dce"], "0");
        assert!(out.contains("store %"), "{out}");
        assert!(out.contains("sgt %"), "{out}");
        assert!(out.contains("slt %"), "{out}");
    }

    #[test]
    fn behaviour_is_preserved_on_a_program() {
        same_behaviour(
            r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 0, 7)
bb1(%1: i32, %2: i32, %3: i32):
  %4 = slt %1, %0
  br %4, bb2, bb5
bb2:
  %5 = srem %1, 3
  %6 = eq %5, 0
  %7 = mul %3, 5
  br %6, bb3, bb4(%2)
bb3:
  %8 = add %2, %1
  call @putint(%8)
  jump bb4(%8)
bb4(%9: i32):
  %10 = add %1, 1
  jump bb1(%10, %9, %7)
bb5:
  ret %2
}
"#,
            &["dce"],
            "10",
        );
    }

    /// A local array `a` filled from input, and a second one `b` whose values only
    /// go back into `a` and `b` (load-store cycles across two arrays and a loop);
    /// `LAST` decides what the function returns.
    const CYCLE: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putarray(i32, ptr) -> void
declare @memset(ptr, i32, i64) -> ptr

func @main() -> i32 {
bb0:
  %a = alloc [i32; 8]
  %b = alloc [i32; 8]
  %len = sext 32
  %m = call @memset(%b, 0, %len)
  %n = call @getint()
  %k = and %n, 7
  %p0 = gep %a, 0, 4
  store %n, %p0
  %pk = gep %a, %k, 4
  store 3, %pk
  jump bb1(0)
bb1(%i: i32):
  %pa = gep %a, %i, 4
  %va = load i32, %pa
  %j = xor %i, %k
  %pb = gep %b, %j, 4
  %vb = load i32, %pb
  %s = add %va, %vb
  store %s, %pb
  %q = gep %a, %j, 4
  store %vb, %q
  %i1 = add %i, 1
  %c = slt %i1, 8
  br %c, bb1(%i1), bb2
bb2:
LAST
}
"#;

    fn cycle(last: &str) -> String {
        CYCLE.replace("LAST", last)
    }

    #[test]
    fn arrays_read_only_to_write_themselves_die() {
        let out = same_behaviour(&cycle("  call @putint(%n)\n  ret 0"), &["dce"], "13");
        assert!(!out.contains("alloc"), "{out}");
        assert!(!out.contains("store"), "{out}");
        assert!(!out.contains("memset(%"), "{out}");
        assert!(!out.contains("load"), "{out}");
    }

    #[test]
    fn a_load_whose_value_is_used_keeps_every_write_of_its_array() {
        // Reads `b` at another index than the stores: every store of `b` (and the
        // memset) may be what it reads, and `a`'s stores feed them.
        let src = cycle("  %r = gep %b, 5, 4\n  %v = load i32, %r\n  call @putint(%v)\n  ret 0");
        for input in ["0", "5", "13", "-3"] {
            let out = same_behaviour(&src, &["dce"], input);
            assert_eq!(out.matches("store").count(), 4, "{out}");
            assert!(out.contains("call @memset(%1,"), "{out}");
        }
    }

    #[test]
    fn an_array_passed_to_a_call_keeps_its_stores() {
        let src = cycle("  call @putarray(8, %a)\n  ret 0");
        for input in ["0", "6", "13"] {
            let out = same_behaviour(&src, &["dce"], input);
            // `a`'s stores stay; `b`'s are read by them (through the loop's loads).
            assert_eq!(out.matches("store").count(), 4, "{out}");
        }
    }

    #[test]
    fn an_escaping_address_keeps_the_stores() {
        // The address of `a` leaves through a block argument: loads through the
        // parameter read it.
        let src = cycle("  jump bb3(%a)\nbb3(%x: ptr):\n  %y = gep %x, 2, 4\n  %w = load i32, %y\n  call @putint(%w)\n  ret 0");
        for input in ["2", "10"] {
            let out = same_behaviour(&src, &["dce"], input);
            assert_eq!(out.matches("store").count(), 4, "{out}");
        }
        // Stored as a value, the address escapes too: `a`'s stores stay (the store
        // of the address itself goes: nothing reads the slot it went to).
        let src = cycle("  %h = alloc [ptr; 1]\n  store %a, %h\n  ret 0");
        let out = same_behaviour(&src, &["dce"], "1");
        assert_eq!(out.matches("store").count(), 4, "{out}");
    }

    #[test]
    fn a_memset_whose_result_is_used_is_kept() {
        let src = cycle("  %z = load i32, %m\n  call @putint(%z)\n  ret 0");
        let out = same_behaviour(&src, &["dce"], "4");
        assert!(out.contains("call @memset(%1,"), "{out}");
    }
}
