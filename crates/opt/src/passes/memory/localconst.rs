//! Constant local tables become read-only globals: a local array that is filled
//! with constants at constant positions, in one block, before any read, and is
//! never written otherwise, holds the same contents whenever it is read, on every
//! call. It is replaced by a global initialised with those contents, and the stores
//! go away: a table of powers of two built element by element on each call costs
//! nothing.
//!
//! This is LLVM's InstCombine replacement of an `alloca` that is only initialised
//! from constant memory by that memory (`isOnlyCopiedFromConstantMemory`), for
//! tables built by stores (after full unrolling, [`crate::passes::loops::unroll`], and constant
//! folding have turned a filling loop into constant stores).
//!
//! Conditions on the `alloc` (of `i32` or `f32`): every use of its address, through
//! `gep`s with constant indices or any index for loads, is a load or a store of a
//! constant to a constant in-bounds position; all stores are in one block, and
//! every load runs after the last of them (later in that block, or in a block it
//! strictly dominates); the address is never stored or merged, and is passed only
//! to functions that do not write through their pointer parameters ([`Purity`]),
//! after the last store (such a call reads the table like a load). Elements no
//! store writes are never written at all (their contents were indeterminate), and
//! the global gives them zero. A `memset` of a constant byte over a constant range
//! (a zero initialiser, once [`crate::passes::loops::loopidiom`] made it a call) counts as stores
//! of that byte repeated to every element of the range.

use crate::analysis::{address_root, AnalysisManager, Preserved, Purity};
use crate::passes::loops::loopidiom::{memset_call, memset_of};
use crate::pipeline::Pass;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, FuncId, Function, GlobalData, GlobalInit, Inst, InstKind, Module, Type};
use std::collections::HashMap;

/// The constant local table promotion pass.
pub struct LocalConst;

impl Pass for LocalConst {
    fn name(&self) -> &'static str {
        "localconst"
    }
    fn description(&self) -> &'static str {
        "turn local arrays filled with constants before any read into read-only globals"
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let purity = am.purity(m);
        run(m, &purity) > 0
    }
    /// Rewrites instructions only: no block or edge changes.
    fn preserves(&self) -> Preserved {
        Preserved::CFG
    }
}

/// What promoting one `alloc` needs.
struct Table {
    alloc: Inst,
    elem: Type,
    len: u32,
    stores: Vec<Inst>,
    words: Vec<u32>,
}

/// Promotes every qualifying local table of `m`; `purity` says which callees only
/// read through their parameters. Returns how many.
pub fn run(m: &mut Module, purity: &Purity) -> usize {
    let mut promoted = 0;
    let memset = memset_of(m);
    let ids: Vec<ir::FuncId> = m.funcs.keys().collect();
    for id in ids {
        let f = &m.funcs[id];
        if f.is_declaration() {
            continue;
        }
        let tables = find_tables(f, memset, purity);
        // The first free names: an earlier run may have taken `table0`.
        let mut k = 0;
        for t in tables {
            let name = loop {
                let name = format!("{}.table{k}", m.funcs[id].name);
                k += 1;
                if m.global_by_name(&name).is_none() {
                    break name;
                }
            };
            let g = m.add_global(GlobalData {
                name,
                elem: t.elem,
                len: t.len,
                init: GlobalInit::Words(t.words),
            });
            let f = &mut m.funcs[id];
            for s in t.stores {
                f.remove_inst(s);
            }
            let addr = f.global_addr(g);
            let old = f.inst_result(t.alloc).expect("an alloc has a result");
            f.replace_all_uses(old, addr);
            f.remove_inst(t.alloc);
            promoted += 1;
        }
    }
    promoted
}

fn find_tables(f: &Function, memset: Option<FuncId>, purity: &Purity) -> Vec<Table> {
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let mut out = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            if let InstKind::Alloc { elem, len } = *f.kind(i) {
                if matches!(elem, Type::I32 | Type::F32) {
                    if let Some(t) = table(f, &dt, memset, purity, i, elem, len) {
                        out.push(t);
                    }
                }
            }
        }
    }
    out
}

/// The table `alloc` holds, if it meets the module doc's conditions.
fn table(
    f: &Function,
    dt: &DominatorTree,
    memset: Option<FuncId>,
    purity: &Purity,
    alloc: Inst,
    elem: Type,
    len: u32,
) -> Option<Table> {
    let base = f.inst_result(alloc)?;
    let mut stores: Vec<Inst> = Vec::new();
    // Loads, and calls that read through the table's addresses.
    let mut loads: Vec<Inst> = Vec::new();
    // Every address derived from the alloc, and what uses it.
    let mut work = vec![base];
    while let Some(p) = work.pop() {
        for &u in f.users(p) {
            match *f.kind(u) {
                InstKind::Gep { base: b, .. } if b == p => work.push(f.inst_result(u)?),
                InstKind::Load { ptr, ty } if ptr == p && ty == elem => loads.push(u),
                InstKind::Store { ptr, value } if ptr == p && value != p => stores.push(u),
                InstKind::Call { .. }
                    if memset_call(f, memset, u).is_some_and(|(ptr, _, _)| ptr == p) =>
                {
                    stores.push(u)
                }
                InstKind::Call { callee, .. } if !purity.effects(callee).writes_args => {
                    loads.push(u)
                }
                _ => return None,
            }
        }
    }
    // Stores: constants at constant in-bounds positions, all in one block, taken in
    // block order (positions computed once: tables can have 10^5 elements).
    let block: Block = f.layout.inst_block(*stores.first()?)?;
    let position: HashMap<Inst, usize> = f
        .layout
        .block_insts(block)
        .enumerate()
        .map(|(k, i)| (i, k))
        .collect();
    let mut order: Vec<(usize, Inst)> = Vec::with_capacity(stores.len());
    for &s in &stores {
        order.push((*position.get(&s)?, s));
    }
    order.sort_unstable();
    let mut words = vec![0u32; len as usize];
    let mut last_store = None;
    let size = i64::from(elem.size());
    for &(_, s) in &order {
        last_store = Some(s);
        let InstKind::Store { value, ptr } = *f.kind(s) else {
            // A `memset` of whole elements within the table.
            let (ptr, byte, bytes) = memset_call(f, memset, s)?;
            let (_, Some(off)) = address_root(f, ptr) else {
                return None;
            };
            let bytes = bytes?;
            let in_table = |at: i64| at >= 0 && at % size == 0 && at / size <= i64::from(len);
            if !(in_table(off) && in_table(off + bytes) && bytes >= 0) {
                return None;
            }
            let word = u32::from(byte) * 0x0101_0101;
            words[(off / size) as usize..((off + bytes) / size) as usize].fill(word);
            continue;
        };
        let (_, Some(off)) = address_root(f, ptr) else {
            return None;
        };
        if off < 0 || off % size != 0 || off / size >= i64::from(len) {
            return None;
        }
        let word = match (elem, f.as_iconst(value), f.as_fconst(value)) {
            (Type::I32, Some(c), _) => c as u32,
            (Type::F32, _, Some(x)) => x.to_bits(),
            _ => return None,
        };
        words[(off / size) as usize] = word;
    }
    let last_store = position[&last_store?];
    // Loads after the last store.
    for &l in &loads {
        let lb = f.layout.inst_block(l)?;
        let after = if lb == block {
            position[&l] > last_store
        } else {
            dt.dominates(block, lb)
        };
        if !after {
            return None;
        }
    }
    Some(Table {
        alloc,
        elem,
        len,
        stores,
        words,
    })
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    const SRC: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @pick(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc [i32; 4]
  %2 = gep %1, 0, 4
  store 0, %2
  store 5, %2
  %3 = gep %1, 1, 4
  store 7, %3
  %4 = gep %1, 3, 4
  store -2, %4
  %5 = srem %0, 4
  %6 = gep %1, %5, 4
  %7 = load i32, %6
  ret %7
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @pick(%0)
  call @putint(%1)
  %2 = add %0, 1
  %3 = call @pick(%2)
  call @putint(%3)
  %4 = add %0, 3
  %5 = call @pick(%4)
  call @putint(%5)
  ret 0
}
"#;

    #[test]
    fn constant_table_becomes_a_global() {
        let out = same_behaviour(SRC, &["localconst"], "4");
        assert!(
            out.contains("global @pick.table0: [i32; 4] = [5, 7, 0, -2]"),
            "{out}"
        );
        assert!(!out.contains("alloc"), "{out}");
        assert!(!out.contains("store"), "{out}");
    }

    #[test]
    fn a_later_run_takes_the_next_free_name() {
        // An earlier run took `@pick.table0` (a table promoted before full
        // unrolling made this one constant): this one still becomes a global.
        let src = format!("global @pick.table0: [i32; 2] = [3, 4]\n{SRC}");
        let out = same_behaviour(&src, &["localconst"], "4");
        assert!(
            out.contains("global @pick.table1: [i32; 4] = [5, 7, 0, -2]"),
            "{out}"
        );
        assert!(!out.contains("alloc"), "{out}");
    }

    #[test]
    fn tables_read_early_written_late_or_escaping_stay() {
        for (from, to) in [
            // A load before the last store.
            ("  store -2, %4\n", "  %9 = load i32, %2\n  store -2, %4\n"),
            // A variable value.
            ("  store 7, %3\n", "  store %0, %3\n"),
            // A variable position.
            ("  %4 = gep %1, 3, 4\n", "  %4 = gep %1, %0, 4\n"),
        ] {
            assert!(SRC.contains(from), "{from}");
            let src = SRC.replace(from, to);
            let out = same_behaviour(&src, &["localconst"], "0");
            assert!(out.contains("alloc"), "{from} -> {to}\n{out}");
        }
    }

    /// `SRC` with the table cleared to `byte` over `bytes` bytes from element
    /// `from` first.
    fn cleared(byte: i32, from: i32, bytes: i32) -> String {
        let src = SRC.replace(
            "  %1 = alloc [i32; 4]\n",
            &format!(
                "  %1 = alloc [i32; 4]\n  %20 = gep %1, {from}, 4\n  %21 = sext {bytes}\n  %22 = call @memset(%20, {byte}, %21)\n"
            ),
        );
        format!("declare @memset(ptr, i32, i64) -> ptr\n{src}")
    }

    #[test]
    fn a_cleared_table_holds_the_cleared_bytes() {
        // -1 into elements 1..4, then the stores: [5, 7, -1, -2].
        let out = same_behaviour(&cleared(255, 1, 12), &["localconst"], "4");
        assert!(
            out.contains("global @pick.table0: [i32; 4] = [5, 7, -1, -2]"),
            "{out}"
        );
        assert!(!out.contains("call @memset"), "{out}");
        // A range not of whole elements, or past the table's end (which the program
        // never runs), keeps it.
        let out = same_behaviour(&cleared(255, 0, 6), &["localconst"], "4");
        assert!(out.contains("alloc"), "{out}");
        let out = crate::passes::testutil::run(&cleared(255, 1, 16), &["localconst"]);
        assert!(out.contains("alloc"), "{out}");
    }

    /// `SRC` with the table's element `k` printed by `@show` (which reads through
    /// its parameter, or writes through it when `writes`) at `at`: `"start"` before
    /// the stores, `"end"` after them.
    fn shown(writes: bool, at: &str) -> String {
        let body = if writes {
            "  store 1, %0\n  ret\n"
        } else {
            "  %1 = gep %0, 1, 4\n  %2 = load i32, %1\n  call @putint(%2)\n  ret\n"
        };
        let call = "  call @show(%1)\n";
        let src = match at {
            "start" => SRC.replace(
                "  %2 = gep %1, 0, 4\n",
                &format!("{call}  %2 = gep %1, 0, 4\n"),
            ),
            _ => SRC.replace("  %5 = srem %0, 4\n", &format!("{call}  %5 = srem %0, 4\n")),
        };
        format!("func @show(ptr) -> void {{\nbb0(%0: ptr):\n{body}}}\n{src}")
    }

    #[test]
    fn a_table_passed_to_a_reader_after_its_stores_becomes_a_global() {
        let out = same_behaviour(&shown(false, "end"), &["localconst"], "4");
        assert!(out.contains("call @show(@pick.table0)"), "{out}");
        assert!(!out.contains("alloc"), "{out}");
        // Read before the stores, or written by the callee: it stays.
        let out = crate::passes::testutil::run(&shown(false, "start"), &["localconst"]);
        assert!(out.contains("alloc"), "{out}");
        let out = same_behaviour(&shown(true, "end"), &["localconst"], "4");
        assert!(out.contains("alloc"), "{out}");
    }
}
