//! Scalar promotion of globals in loops: a scalar global that a loop reads and writes
//! only by name, with no call in the loop able to see it, lives in a register for the
//! loop: it is loaded once before the loop and stored back on every way out, and the
//! accesses in between become SSA values.
//!
//! Register promotion (Lu and Cooper, "Register Promotion in C Programs", PLDI 1997;
//! LLVM's `LICM::promoteLoopAccessesToScalars`). Done with the SSA construction the
//! compiler already has: the loop's accesses are redirected to a fresh local slot,
//! copied from the global in the preheader and back to it on each exit edge (split
//! for the purpose) and before each return inside the loop, and
//! [`crate::ssa::mem2reg`] turns the slot into values and block parameters.
//!
//! A scalar global (one element) can only be reached through its own name in SysY
//! unless it is a one-element array whose address the program passes on (arrays,
//! not scalars, are passed by address): such a global, whose address some function
//! uses other than to load or store through it, is not promoted. The conditions are
//! then: every use of
//! the global's address in the loop is a load from it or a store to it, all of one
//! type, and every call in the loop is to a function that neither reads nor writes
//! globals ([`Purity`]). The store back writes the value the global would hold at that
//! point anyway; when the loop never wrote it, that is the value it already held.

use crate::analysis::{
    AnalysisManager, FunctionAnalyses, LoopForest, LoopId, PointerRoots, Preserved, Purity,
};
use crate::pipeline::Pass;
use ir::{Block, BlockCall, Function, GlobalId, Inst, InstKind, Module, Type, Value, ValueDef};
use rustc_hash::FxHashSet;

/// The scalar promotion pass.
pub struct PromoteGlobals;

impl Pass for PromoteGlobals {
    fn name(&self) -> &'static str {
        "promote"
    }
    fn description(&self) -> &'static str {
        "keep scalar globals in registers across loops that no call can see them from"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let purity = am.purity(m);
        let escaping = escaping_globals(m);
        let scalars: FxHashSet<GlobalId> = m
            .globals
            .iter()
            .filter(|(_, g)| g.len == 1)
            .map(|(id, _)| id)
            .filter(|g| !escaping.contains(g))
            .collect();
        am.each_function(m, |f, fa| run_in(f, &purity, &scalars, fa) > 0)
    }
}

/// The globals whose address some function uses other than to load from or store
/// to it (directly or through `gep`s): passes it to a call, stores it, passes it
/// to a block or returns it. A one-element array is such a global when passed to
/// a function, which may then write it through its parameter. (Uses of a
/// global's address are not tracked: every instruction is scanned.)
fn escaping_globals(m: &Module) -> FxHashSet<GlobalId> {
    let mut escaping = FxHashSet::default();
    for f in m.funcs.values().filter(|f| !f.is_declaration()) {
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                let kind = f.kind(i);
                kind.for_each_arg(|a| {
                    let ValueDef::Global(g) = f.value_def(a) else {
                        return;
                    };
                    let accessed = match *kind {
                        InstKind::Load { .. } => true,
                        InstKind::Store { value, .. } => value != a,
                        InstKind::Gep { base, index, .. } => {
                            base == a && index != a && only_accessed_through(f, i)
                        }
                        _ => false,
                    };
                    if !accessed {
                        escaping.insert(g);
                    }
                });
            }
        }
    }
    escaping
}

/// Whether the address `gep` computes is only loaded from or stored to, directly
/// or through further `gep`s.
fn only_accessed_through(f: &Function, gep: Inst) -> bool {
    let mut work: Vec<Value> = f.inst_result(gep).into_iter().collect();
    while let Some(a) = work.pop() {
        for &u in f.users(a) {
            match *f.kind(u) {
                InstKind::Load { .. } => {}
                InstKind::Store { value, .. } if value != a => {}
                InstKind::Gep { base, index, .. } if base == a && index != a => {
                    work.extend(f.inst_result(u));
                }
                _ => return false,
            }
        }
    }
    true
}

/// Promotes the scalar globals of `f`'s loops that qualify; returns how many
/// (loop, global) pairs, plus the preheaders it added.
pub fn run(f: &mut Function, purity: &Purity, scalars: &FxHashSet<GlobalId>) -> usize {
    run_in(f, purity, scalars, &mut FunctionAnalyses::default())
}

/// [`run`], the first candidate found with the analyses cached in `fa`.
fn run_in(
    f: &mut Function,
    purity: &Purity,
    scalars: &FxHashSet<GlobalId>,
    fa: &mut FunctionAnalyses,
) -> usize {
    if f.is_declaration() {
        return 0;
    }
    // The load goes in a preheader: loops without one get one (LLVM's LICM runs
    // on loops in LoopSimplify form); simplifycfg removes those left unused.
    let split = crate::passes::loops::licm::add_preheaders(f);
    if split > 0 {
        fa.forget();
    }
    let mut promoted = 0;
    // One promotion at a time: each splits edges, so the loops are recomputed.
    // Outer loops first, so a global is promoted over the widest loop that allows it.
    while let Some(c) = next_candidate(f, purity, scalars, fa) {
        promote(f, &c);
        fa.forget();
        promoted += 1;
        if promoted > 64 {
            break;
        }
    }
    if promoted > 0 {
        crate::ssa::mem2reg(f);
    }
    promoted + split
}

/// A global address to promote over a loop (its preheader and blocks).
struct Candidate {
    preheader: Block,
    blocks: Vec<Block>,
    global: Value,
}

fn next_candidate(
    f: &Function,
    purity: &Purity,
    scalars: &FxHashSet<GlobalId>,
    fa: &mut FunctionAnalyses,
) -> Option<Candidate> {
    let (cfg, dt, loops) = fa.loops(f);
    let accesses = scalar_accesses(f, loops, scalars);
    let elements = super::promote_elements::ElementBudget::new(f, loops, purity);
    let roots = PointerRoots::compute(f);
    let mut ids: Vec<LoopId> = loops.loops().map(|(id, _)| id).collect();
    ids.sort_by_key(|&id| loops.get(id).depth);
    for id in ids {
        let Some(preheader) = loops.preheader(id, cfg) else {
            continue;
        };
        // Nothing to scan for a scalar global without an access to one in the loop.
        let global = if accesses[id.0 as usize] > 0 {
            scalar_global(f, purity, scalars, loops, id)
        } else {
            None
        };
        let promoted = global.or_else(|| {
            elements.worth_scanning(id).then(|| {
                super::promote_elements::element_candidate(f, cfg, dt, loops, id, purity, &roots)
            })?
        });
        if let Some(global) = promoted {
            return Some(Candidate {
                preheader,
                blocks: loops.get(id).blocks.to_vec(),
                global,
            });
        }
    }
    None
}

/// A scalar global of `scalars` that loop `id` writes and accesses only by name,
/// with no call in the loop reading or writing globals.
fn scalar_global(
    f: &Function,
    purity: &Purity,
    scalars: &FxHashSet<GlobalId>,
    loops: &LoopForest,
    id: LoopId,
) -> Option<Value> {
    // Calls in the loop must leave globals alone.
    let mut globals: Vec<Value> = Vec::new();
    let mut calls_ok = true;
    for &b in &loops.get(id).blocks {
        for i in f.layout.block_insts(b) {
            match f.kind(i) {
                InstKind::Call { callee, .. } => {
                    let e = purity.effects(*callee);
                    calls_ok &= !e.reads_global && !e.writes_global;
                }
                InstKind::Load { ptr, .. } | InstKind::Store { ptr, .. }
                    if matches!(f.value_def(*ptr), ValueDef::Global(g) if scalars.contains(&g))
                        && !globals.contains(ptr) =>
                {
                    globals.push(*ptr);
                }
                _ => {}
            }
        }
    }
    if !calls_ok {
        return None;
    }
    for g in globals {
        // (Constants and global addresses do not record their users: scan.)
        let mut ty = None;
        let mut writes = false;
        let mut only_accesses = true;
        for &b in &loops.get(id).blocks {
            for i in f.layout.block_insts(b) {
                let k = f.kind(i);
                if !k.args().contains(&g) {
                    continue;
                }
                let t = match k {
                    InstKind::Load { ty, ptr } if *ptr == g => *ty,
                    InstKind::Store { value, ptr } if *ptr == g && *value != g => {
                        writes = true;
                        f.value_type(*value)
                    }
                    _ => {
                        only_accesses = false;
                        continue;
                    }
                };
                only_accesses &= *ty.get_or_insert(t) == t;
            }
        }
        // Promote only what the loop writes: loads alone are licm's business.
        if only_accesses && writes && matches!(ty, Some(Type::I32 | Type::F32)) {
            return Some(g);
        }
    }
    None
}

/// Per loop, the number of loads and stores in it (inner loops' included) whose
/// address is a scalar global: counted once per block and summed up the nest,
/// so a deep nest costs no scan of each block once per loop around it.
fn scalar_accesses(f: &Function, loops: &LoopForest, scalars: &FxHashSet<GlobalId>) -> Vec<usize> {
    loops.sum_over_blocks(f, |b| {
        f.layout
            .block_insts(b)
            .filter(|&i| match f.kind(i) {
                InstKind::Load { ptr, .. } | InstKind::Store { ptr, .. } => {
                    matches!(f.value_def(*ptr), ValueDef::Global(g) if scalars.contains(&g))
                }
                _ => false,
            })
            .count()
    })
}

/// Redirects the accesses to the candidate's global in its loop to a new slot,
/// copied in and out around the loop.
fn promote(f: &mut Function, c: &Candidate) {
    let (preheader, blocks, g) = (c.preheader, &c.blocks, c.global);
    let in_loop = |b: Block| blocks.contains(&b);
    // The accesses in the loop, and their type.
    let inside: Vec<ir::Inst> = blocks
        .iter()
        .flat_map(|&b| f.layout.block_insts(b))
        .filter(|&i| f.kind(i).args().contains(&g))
        .collect();
    let ty = match f.kind(inside[0]) {
        InstKind::Load { ty, .. } => *ty,
        InstKind::Store { value, .. } => f.value_type(*value),
        _ => unreachable!("checked: only loads and stores"),
    };
    let slot = slot_loaded_in(f, preheader, ty, g);
    // Accesses in the loop go to the slot.
    for u in inside {
        let k = match f.kind(u).clone() {
            InstKind::Load { ty, .. } => InstKind::Load { ty, ptr: slot },
            InstKind::Store { value, .. } => InstKind::Store { value, ptr: slot },
            _ => unreachable!("checked: only loads and stores"),
        };
        f.replace_kind(u, k);
    }
    // Copy out: on each edge leaving the loop (through a new block) and before each
    // return inside it.
    for &b in blocks {
        let term = f.terminator(b).expect("a block ends in a terminator");
        if matches!(f.kind(term), InstKind::Ret { .. }) {
            copy_out(f, term, ty, slot, g);
            continue;
        }
        let targets: Vec<BlockCall> = f.kind(term).targets().into_iter().cloned().collect();
        for (k, t) in targets.into_iter().enumerate() {
            if in_loop(t.block) {
                continue;
            }
            let e = f.create_block();
            f.layout.insert_block_after(e, b);
            let jump = f.append_inst(e, InstKind::Jump { dest: Box::new(t) }, Type::Void);
            copy_out(f, jump, ty, slot, g);
            f.set_target(term, k, BlockCall::new(e, Vec::new()));
        }
    }
}

/// A new slot for one `ty` at the start of `f`, given the value at `addr` at the
/// end of `preheader` (where a loop's accesses to `addr` are to begin reading
/// it); the slot's address.
pub(super) fn slot_loaded_in(f: &mut Function, preheader: Block, ty: Type, addr: Value) -> Value {
    let entry = f.entry_block();
    let first = f
        .layout
        .first_inst(entry)
        .expect("the entry block has a terminator");
    let slot = f.insert_inst_before(first, InstKind::Alloc { elem: ty, len: 1 }, Type::Ptr);
    let slot = f.inst_result(slot).expect("alloc has a result");
    let pterm = f.terminator(preheader).expect("preheader has a jump");
    let v = f.insert_inst_before(pterm, InstKind::Load { ty, ptr: addr }, ty);
    let v = f.inst_result(v).expect("load has a result");
    f.insert_inst_before(
        pterm,
        InstKind::Store {
            value: v,
            ptr: slot,
        },
        Type::Void,
    );
    slot
}

/// `store (load slot), g` before `at`.
fn copy_out(f: &mut Function, at: ir::Inst, ty: Type, slot: Value, g: Value) {
    let x = f.insert_inst_before(at, InstKind::Load { ty, ptr: slot }, ty);
    let x = f.inst_result(x).expect("load has a result");
    f.insert_inst_before(at, InstKind::Store { value: x, ptr: g }, Type::Void);
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `while (i < n) { cnt = cnt + a[i]; if (cnt > 50) cnt = cnt - 7; i++; }` with a
    /// print (a call that cannot see `cnt`) in the loop, and `cnt` printed after.
    const COUNTER: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
global @cnt: i32 = 3
global @a: [i32; 8] = [5, 9, 14, 2, 30, 7, 11, 4]

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = slt 0, %0
  br %1, bb5, bb4
bb5:
  jump bb1(0)
bb1(%2: i32):
  %3 = load i32, @cnt
  %4 = gep @a, %2, 4
  %5 = load i32, %4
  %6 = add %3, %5
  store %6, @cnt
  %7 = sgt %6, 50
  br %7, bb2, bb3
bb2:
  %8 = load i32, @cnt
  %9 = add %8, -7
  store %9, @cnt
  call @putint(%9)
  jump bb3
bb3:
  %10 = add %2, 1
  %11 = slt %10, %0
  br %11, bb1(%10), bb4
bb4:
  %12 = load i32, @cnt
  call @putint(%12)
  ret 0
}
"#;

    #[test]
    fn a_global_counter_lives_in_a_register_in_the_loop() {
        for n in ["0", "1", "4", "8"] {
            let out = same_behaviour(COUNTER, &["promote"], n);
            let body = &out[out.find("bb2(").unwrap()..out.find("bb5").unwrap()];
            assert!(!body.contains("@cnt"), "{out}");
            assert_eq!(out.matches("load i32, @cnt").count(), 2, "{out}");
        }
    }

    /// A loop entered straight from a branch (no preheader) gets one to load the
    /// global in.
    #[test]
    fn a_loop_without_a_preheader_gets_one() {
        let src = COUNTER.replace(
            "  br %1, bb5, bb4\nbb5:\n  jump bb1(0)\n",
            "  br %1, bb1(0), bb4\n",
        );
        assert!(!src.contains("bb5"));
        for n in ["0", "1", "8"] {
            let out = same_behaviour(&src, &["promote"], n);
            assert_eq!(out.matches("load i32, @cnt").count(), 2, "{out}");
        }
    }

    /// Not promoted: a call in the loop to a function that reads globals, and a
    /// global accessed by address (passed to a call).
    #[test]
    fn calls_that_see_globals_keep_them_in_memory() {
        let reader = COUNTER
            .replace("  call @putint(%9)\n", "  call @show()\n")
            .replace(
                "func @main()",
                "func @show() -> void {\nbb0:\n  %0 = load i32, @cnt\n  call @putint(%0)\n  ret\n}\n\nfunc @main()",
            );
        let out = same_behaviour(&reader, &["promote"], "8");
        assert!(out.contains("store %"), "{out}");
        let main = &out[out.find("func @main").unwrap()..];
        assert!(main.matches("@cnt").count() >= 4, "{out}");
        let no_writes = COUNTER
            .replace("  store %6, @cnt\n", "")
            .replace("  store %9, @cnt\n", "");
        let out = run(&no_writes, &["promote"]);
        assert!(!out.contains("alloc"), "{out}");
        same_behaviour(&no_writes, &["promote"], "8");
    }

    /// A one-element global whose address a caller passes on stays in memory:
    /// `@bump` adds to `@g` by name and doubles what its parameter points to, in
    /// one loop, and `@main` passes `@g` itself (as SysY passes `int g[1]`).
    #[test]
    fn a_global_whose_address_is_passed_on_stays_in_memory() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void
global @g: i32 = 0

func @bump(ptr, i32) -> i32 {
bb0(%0: ptr, %1: i32):
  %2 = slt 0, %1
  br %2, bb1, bb3
bb1:
  jump bb2(0)
bb2(%3: i32):
  %4 = load i32, @g
  %5 = add %4, %3
  store %5, @g
  %6 = load i32, %0
  %7 = mul %6, 2
  %8 = add %7, 1
  store %8, %0
  %9 = add %3, 1
  %10 = slt %9, %1
  br %10, bb2(%9), bb3
bb3:
  %11 = load i32, @g
  ret %11
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @bump(@g, %0)
  call @putint(%1)
  ret 0
}
"#;
        let out = same_behaviour(src, &["promote"], "7");
        assert!(!out.contains("alloc"), "{out}");
        assert_eq!(
            out.matches("@g").count(),
            src.matches("@g").count(),
            "{out}"
        );
    }

    /// Accesses to scalar globals are counted per loop, inner loops' included,
    /// and not for loops without any (`@a` is not a scalar).
    #[test]
    fn scalar_accesses_are_summed_up_the_nest() {
        use ir::analysis::{ControlFlowGraph, DominatorTree};
        // An inner self-loop bb6 in bb1's loop that touches only the array.
        let src = COUNTER
            .replace("  jump bb3\nbb3:", "  jump bb6(0)\nbb6(%20: i32):\n  %21 = gep @a, %20, 4\n  %22 = load i32, %21\n  %23 = add %20, 1\n  %24 = slt %23, %22\n  br %24, bb6(%23), bb3\nbb3:");
        let m = ir::parse_module(&src).expect("parses");
        ir::verify_module(&m).expect("valid");
        let scalars: super::FxHashSet<ir::GlobalId> = m
            .globals
            .iter()
            .filter(|(_, g)| g.len == 1)
            .map(|(id, _)| id)
            .collect();
        let f = m.funcs.values().find(|f| f.name == "main").unwrap();
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let loops = super::LoopForest::compute(f, &cfg, &dt);
        assert_eq!(loops.len(), 2);
        let counts = super::scalar_accesses(f, &loops, &scalars);
        let mut by_depth: Vec<(u32, usize)> = loops
            .loops()
            .map(|(id, lp)| (lp.depth, counts[id.0 as usize]))
            .collect();
        by_depth.sort();
        assert_eq!(by_depth, vec![(1, 4), (2, 0)]);
        same_behaviour(&src, &["promote"], "8");
    }
}
