//! Silent store elimination: a store that writes back the value its location
//! already holds changes nothing and is deleted.
//!
//! Silent stores (Lepak and Lipasti, "On the value locality of store instructions",
//! ISCA 2000) found statically, within a block: after `v = load p`, the location `p`
//! holds `v` until something may write it. A later `store v, p` is then silent.
//! What keeps `p` holding `v`: loads and arithmetic; calls that write no memory;
//! stores to locations that cannot overlap `p` (another object, or a disjoint
//! constant offset in the same one); and stores of `v` itself to any location (if
//! that location is `p`, it still holds `v`). The swap idiom
//! `t = a[x]; a[y] = a[x]; a[x] = t` loses its last store this way whether or not
//! `x == y`.

use crate::analysis::Purity;
use crate::analysis::{AnalysisManager, Preserved};
use crate::passes::loops::licm::may_overlap;
use crate::pipeline::Pass;
use ir::{Function, Inst, InstKind, Module, Type, Value, ValueDef};
use rustc_hash::FxHashMap;

/// The silent store elimination pass.
pub struct SilentStore;

impl Pass for SilentStore {
    fn name(&self) -> &'static str {
        "silentstore"
    }
    fn description(&self) -> &'static str {
        "delete stores of the value the location was just loaded with"
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let purity = am.purity(m);
        am.each_function(m, |f, _| run(f, &purity) > 0)
    }
    /// Rewrites instructions only: no block or edge changes.
    fn preserves(&self) -> Preserved {
        Preserved::CFG.with_other_functions()
    }
}

/// Deletes the silent stores of `f`; returns how many.
pub fn run(f: &mut Function, purity: &Purity) -> usize {
    let mut silent: Vec<Inst> = Vec::new();
    for b in f.layout.blocks() {
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        let mut position: FxHashMap<Inst, usize> = FxHashMap::default();
        for (k, &i) in insts.iter().enumerate() {
            // A store `store v, p` is silent when `v` was loaded from `p` earlier in
            // this block with nothing in between that may write `p`: the only
            // candidate is the load defining `v`, so the scan runs from it.
            position.insert(i, k);
            let InstKind::Store { value, ptr: q } = *f.kind(i) else {
                continue;
            };
            let ValueDef::Inst(load) = f.value_def(value) else {
                continue;
            };
            let InstKind::Load { ptr, ty } = *f.kind(load) else {
                continue;
            };
            let Some(&from) = position.get(&load).filter(|_| ptr == q) else {
                continue;
            };
            if insts[from + 1..k]
                .iter()
                .all(|&j| !may_write(f, purity, j, ptr, ty, value))
            {
                silent.push(i);
            }
        }
    }
    // Removed in instruction order, as before (user lists keep their order).
    silent.sort();
    for &s in &silent {
        f.remove_inst(s);
    }
    silent.len()
}

/// Whether `j` may change what `ptr` (of type `ty`) holds, when it holds `v`: a
/// store of another value to a location that may overlap it, or a call that
/// writes memory.
fn may_write(f: &Function, purity: &Purity, j: Inst, ptr: Value, ty: Type, v: Value) -> bool {
    match *f.kind(j) {
        InstKind::Store { value, .. } if value == v => false,
        InstKind::Store { value, ptr: q } => may_overlap(f, ptr, ty, q, f.value_type(value)),
        InstKind::Call { callee, .. } => {
            let e = purity.effects(callee);
            e.writes_global || e.writes_args
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// The swap idiom: t = a[x]; a[y] = t; a[x] = t.
    const SWAP: &str = r#"
global @a: [i32; 8] = [10, 11, 12, 13, 14, 15, 16, 17]

declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = gep @a, %0, 4
  %3 = load i32, %2
  %4 = gep @a, %1, 4
  store %3, %4
  store %3, %2
  %5 = load i32, %2
  call @putint(%5)
  call @putch(32)
  %6 = load i32, %4
  call @putint(%6)
  ret 0
}
"#;

    #[test]
    fn write_back_of_the_loaded_value_goes() {
        for input in ["1 5", "3 3"] {
            let out = same_behaviour(SWAP, &["silentstore"], input);
            assert_eq!(out.matches("store").count(), 1, "{out}");
        }
    }

    #[test]
    fn other_values_or_calls_in_between_keep_it() {
        // Another value stored where %2 may point: the write-back restores it.
        let other = SWAP.replace("  store %3, %4\n", "  store 99, %4\n");
        for input in ["1 5", "3 3"] {
            let out = same_behaviour(&other, &["silentstore"], input);
            assert_eq!(out.matches("store").count(), 2, "{out}");
        }
        // An unknown call may write @a.
        let call = SWAP
            .replace(
                "declare @putch(i32) -> void",
                "declare @putch(i32) -> void\ndeclare @ext() -> void",
            )
            .replace("  store %3, %4\n", "  call @ext()\n");
        let out = crate::passes::testutil::run(&call, &["silentstore"]);
        assert_eq!(out.matches("store").count(), 1, "{out}");
    }
}
