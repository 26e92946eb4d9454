//! Register promotion past stores that may alias, checked at run time: a load
//! from a loop-invariant address that every iteration runs, in a loop whose only
//! writes to memory are stores that run on some iterations only, each to an
//! address that may or may not be the loaded one.
//!
//! `while (j < n) { if (d[k] >= 0 && ...) d[j] = ...; j++; }` loads `d[k]` on
//! every iteration because the store to `d[j]` writes it when `j == k`. Here the
//! value is loaded once before the loop and kept in a register; after each store
//! the store's address is compared with the loaded one, and on equality the
//! register takes the stored value. The loads become SSA values, and each store
//! gains a comparison and a branch, which pays when the stores are rarer than the
//! loads (they are conditional, the load is not).
//!
//! This is register promotion (Lu and Cooper, "Register Promotion in C Programs",
//! PLDI 1997) with the aliasing decided at run time, as in run-time
//! disambiguation (Nicolau, "Run-time disambiguation: coping with statically
//! unpredictable dependencies", IEEE Trans. Computers, 1989) and the software
//! check of speculative register promotion (Lin et al., "Speculative register
//! promotion using Advanced Load Address Table (ALAT)", CGO 2003). It uses the
//! machinery of [`super::promote`]: the loads are redirected to a new slot,
//! filled in the preheader and written after each store whose address equals the
//! loaded one, and [`crate::ssa::mem2reg`] turns the slot into values.
//!
//! Why it is exact: memory at the loaded address `a` changes in the loop only
//! through its stores (calls in it must not write memory, [`Purity`]). Each store
//! writes a whole element of the same type as the load (or is left alone when no
//! store is of another type), at an address that is either `a` or apart from it
//! (SysY's elements never overlap partially), so after it `*a` is the stored
//! value exactly when the addresses are equal, which is what the slot records.

use crate::analysis::{AnalysisManager, FunctionAnalyses, LoopId, Preserved, Purity};
use crate::pipeline::Pass;
use ir::{Block, BlockCall, Function, Inst, InstKind, Module, Type, Value};

/// The checked promotion pass.
pub struct CheckPromote;

impl Pass for CheckPromote {
    fn name(&self) -> &'static str {
        "checkpromote"
    }
    fn description(&self) -> &'static str {
        "keep a loop-invariant load in a register, checking each store that may alias it"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let purity = am.purity(m);
        am.each_function(m, |f, fa| run_in(f, &purity, fa) > 0)
    }
}

/// Stores a loop may hold (each gains a check, at the end of its block).
const MAX_STORES: usize = 4;

/// A load address to promote over a loop.
struct Candidate {
    preheader: Block,
    ty: Type,
    addr: Value,
    /// The loads of `addr` in the loop.
    loads: Vec<Inst>,
    /// The loop's stores: each in a block that ends in a jump.
    stores: Vec<Inst>,
}

/// Promotes the loads of `f`'s innermost loops that qualify; returns how many
/// loops.
pub fn run(f: &mut Function, purity: &Purity) -> usize {
    run_in(f, purity, &mut FunctionAnalyses::default())
}

fn run_in(f: &mut Function, purity: &Purity, fa: &mut FunctionAnalyses) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let candidates = {
        let (cfg, dt, loops) = fa.loops(f);
        let mut found = Vec::new();
        for (id, _) in loops.loops() {
            if let Some(c) = candidate(f, cfg, dt, loops, id, purity) {
                found.push(c);
            }
        }
        found
    };
    let mut promoted = 0;
    for c in candidates {
        promote(f, &c);
        promoted += 1;
    }
    if promoted > 0 {
        fa.forget();
        crate::ssa::mem2reg(f);
    }
    promoted
}

fn candidate(
    f: &Function,
    cfg: &ir::analysis::ControlFlowGraph,
    dt: &ir::analysis::DominatorTree,
    loops: &crate::analysis::LoopForest,
    id: LoopId,
    purity: &Purity,
) -> Option<Candidate> {
    let l = loops.get(id);
    // Innermost loops only: they are disjoint, so no two promotions meet.
    if !l.children.is_empty() {
        return None;
    }
    let preheader = loops.preheader(id, cfg)?;
    let [latch] = l.latches[..] else {
        return None;
    };
    let in_loop = |b: Block| loops.contains(id, b);
    let invariant = |v: Value| f.value_block(v).is_none_or(|b| !in_loop(b));
    let every_iteration = |b: Block| dt.dominates(b, latch);
    let mut stores = Vec::new();
    let mut loads = Vec::new();
    for &b in &l.blocks {
        for i in f.layout.block_insts(b) {
            match f.kind(i) {
                InstKind::Call { callee, .. } => {
                    let e = purity.effects(*callee);
                    if e.writes_global || e.writes_args {
                        return None;
                    }
                }
                InstKind::Store { .. } => {
                    // Conditional stores only, one in a block that ends in a jump
                    // (the check replaces the jump).
                    let ends_in_jump = f
                        .terminator(b)
                        .is_some_and(|t| matches!(f.kind(t), InstKind::Jump { .. }));
                    let shares_block = stores
                        .last()
                        .is_some_and(|&s| f.layout.inst_block(s) == Some(b));
                    if every_iteration(b)
                        || !ends_in_jump
                        || shares_block
                        || stores.len() == MAX_STORES
                    {
                        return None;
                    }
                    stores.push(i);
                }
                InstKind::Load { ty, ptr }
                    if matches!(ty, Type::I32 | Type::F32)
                        && f.value_type(*ptr) == Type::Ptr
                        && invariant(*ptr)
                        && every_iteration(b) =>
                {
                    loads.push((i, *ty, *ptr));
                }
                _ => {}
            }
        }
    }
    if stores.is_empty() {
        return None;
    }
    let &(_, ty, addr) = loads.first()?;
    // Every store writes a whole element of the load's type; no load of the
    // address follows a store in the store's block (the slot is written at the
    // block's end).
    let stores_ok = stores.iter().all(|&s| {
        let InstKind::Store { value, .. } = *f.kind(s) else {
            return false;
        };
        let b = f.layout.inst_block(s).expect("in the layout");
        let after_store = f.layout.block_insts(b).skip_while(|&i| i != s).skip(1);
        f.value_type(value) == ty
            && !after_store
                .into_iter()
                .any(|i| matches!(f.kind(i), InstKind::Load { ptr, .. } if *ptr == addr))
    });
    if !stores_ok {
        return None;
    }
    // All the loop's loads of that address, wherever they are.
    let loads: Vec<Inst> = l
        .blocks
        .iter()
        .flat_map(|&b| f.layout.block_insts(b))
        .filter(|&i| matches!(f.kind(i), InstKind::Load { ty: t, ptr } if *ptr == addr && *t == ty))
        .collect();
    Some(Candidate {
        preheader,
        ty,
        addr,
        loads,
        stores,
    })
}

/// Redirects the candidate's loads to a new slot, filled in the preheader and
/// written after each store to the same address.
fn promote(f: &mut Function, c: &Candidate) {
    let (ty, addr) = (c.ty, c.addr);
    let slot = super::promote::slot_loaded_in(f, c.preheader, ty, addr);
    for &i in &c.loads {
        f.replace_kind(i, InstKind::Load { ty, ptr: slot });
    }
    for &s in &c.stores {
        let InstKind::Store { value, ptr } = *f.kind(s) else {
            unreachable!("a store")
        };
        let b = f.layout.inst_block(s).expect("in the layout");
        let term = f.terminator(b).expect("a block ends in a terminator");
        let InstKind::Jump { dest } = f.kind(term).clone() else {
            unreachable!("checked: the block ends in a jump")
        };
        if ptr == addr {
            f.insert_inst_before(term, InstKind::Store { value, ptr: slot }, Type::Void);
            continue;
        }
        // `if (ptr == addr) slot = value`, then on to the old successor.
        let same = f.insert_inst_before(
            term,
            InstKind::Cmp {
                op: ir::CmpOp::Eq,
                args: [ptr, addr],
            },
            Type::I32,
        );
        let same = f.inst_result(same).expect("a comparison has a result");
        let update = f.create_block();
        f.layout.insert_block_after(update, b);
        f.append_inst(update, InstKind::Store { value, ptr: slot }, Type::Void);
        f.append_inst(update, InstKind::Jump { dest: dest.clone() }, Type::Void);
        f.replace_kind(
            term,
            InstKind::Br {
                cond: same,
                then_dest: Box::new(BlockCall::new(update, vec![])),
                else_dest: dest,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// Floyd's relaxation over one row: `for j < n: if (d[k] >= 0 && d[k] + w[j]
    /// < d[j]) d[j] = d[k] + w[j];` with `k` read, and the row printed. The store
    /// hits `d[k]` itself when `j == k`.
    const RELAX: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void
global @d: [i32; 16] = [9, 3, -1, 8, 2, 7, 5, 1, 6, 4, 0, 12, 11, 10, 2, 3]
global @w: [i32; 16] = [-2, 1, 4, -6, 3, -1, 2, 0, -3, 5, 1, -4, 2, 6, -5, 1]

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = gep @d, %1, 4
  %3 = sgt %0, 0
  br %3, bb1, bb6
bb1:
  jump bb2(0)
bb2(%4: i32):
  %5 = load i32, %2
  %6 = sge %5, 0
  br %6, bb3, bb5
bb3:
  %7 = gep @w, %4, 4
  %8 = load i32, %7
  %9 = add %5, %8
  %10 = gep @d, %4, 4
  %11 = load i32, %10
  %12 = slt %9, %11
  br %12, bb4, bb5
bb4:
  store %9, %10
  jump bb5
bb5:
  %13 = add %4, 1
  %14 = slt %13, %0
  br %14, bb2(%13), bb6
bb6:
  jump bb7(0)
bb7(%15: i32):
  %16 = gep @d, %15, 4
  %17 = load i32, %16
  call @putint(%17)
  call @putch(32)
  %18 = add %15, 1
  %19 = slt %18, 16
  br %19, bb7(%18), bb8
bb8:
  ret 0
}
"#;

    /// The load of `d[k]` leaves the loop; the store checks its address. Every
    /// `k` (the store hitting `d[k]` at some `j` or never) behaves the same.
    #[test]
    fn the_invariant_load_becomes_a_value_and_the_store_checks() {
        for k in 0..16 {
            for n in [1, 5, 16] {
                let out = same_behaviour(RELAX, &["checkpromote"], &format!("{n} {k}"));
                // The loop is bb2..bb6, the load of d[k] now in bb1.
                let body = &out[out.find("bb2(").unwrap()..out.find("bb7:").unwrap()];
                assert!(out.contains("bb1:\n  %4 = load i32, %2\n"), "{out}");
                assert!(!body.contains("load i32, %2"), "{out}");
                assert!(
                    body.contains("store %10, %11\n  %14 = eq %11, %2\n"),
                    "{out}"
                );
            }
        }
    }

    /// Left alone: a store on every iteration, two stores in one block (one check
    /// per block), and a call that may write memory.
    #[test]
    fn left_alone_when_stores_are_unconditional_or_memory_escapes() {
        let every = RELAX.replace(
            "bb5:\n  %13 = add %4, 1\n",
            "bb5:\n  %13 = add %4, 1\n  store %13, %2\n",
        );
        let two = RELAX.replace("  store %9, %10\n", "  store %9, %10\n  store %9, %7\n");
        let call = RELAX.replace(
            "  store %9, %10\n",
            "  store %9, %10\n  call @getarray(@w)\n",
        );
        let call = format!("declare @getarray(ptr) -> i32\n{call}");
        for src in [every, two, call] {
            let out = run(&src, &["checkpromote"]);
            assert!(out.contains("%5 = load i32, %2"), "{out}");
        }
    }
}
