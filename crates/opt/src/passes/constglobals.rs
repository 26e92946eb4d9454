//! Read-only globals become constants: a global that no instruction of the program
//! can write keeps its initial value for the whole run, so a load of it at a
//! constant offset is that value.
//!
//! This is the "global is never stored to, mark it constant" step of LLVM's
//! `GlobalOpt` (and GCC's read-only promotion in `ipa-reference`): the whole module
//! is visible (SysY has no separate compilation), so every use of a global's
//! address is known. The global is read-only when every address derived from it
//! (through `gep`s) is only loaded from: never the address of a store, never a
//! stored value, never a call argument (the callee could write through it), never
//! a branch argument (it could reach a store unseen). Loads at a constant offset
//! within the global become its initial element (`i32` or `f32` by the load's type);
//! loads at variable offsets stay.

use crate::analysis::address_root;
use crate::analysis::Preserved;
use crate::pipeline::Pass;
use ir::{Function, GlobalData, GlobalId, InstKind, Module, Type, Value, ValueDef};

/// The read-only global folding pass.
pub struct ConstGlobals;

impl Pass for ConstGlobals {
    fn name(&self) -> &'static str {
        "constglobals"
    }
    fn description(&self) -> &'static str {
        "replace loads of globals that are never written by their initial values"
    }
    fn run(&self, m: &mut Module) -> bool {
        run(m) > 0
    }
    /// Rewrites instructions only: no block or edge changes.
    fn preserves(&self) -> Preserved {
        Preserved::CFG
    }
}

/// Folds loads of read-only globals in `m`; returns how many.
pub fn run(m: &mut Module) -> usize {
    let mut written = vec![false; m.globals.len()];
    for f in m.funcs.values() {
        for g in escaping_globals(f) {
            written[ir::EntityRef::index(g)] = true;
        }
    }
    let mut folded = 0;
    for f in m.funcs.values_mut() {
        if f.is_declaration() {
            continue;
        }
        let mut loads = Vec::new();
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                if let InstKind::Load { ty, ptr } = *f.kind(i) {
                    loads.push((i, ty, ptr));
                }
            }
        }
        for (i, ty, ptr) in loads {
            let (root, offset) = address_root(f, ptr);
            let (ValueDef::Global(g), Some(offset)) = (f.value_def(root), offset) else {
                continue;
            };
            if written[ir::EntityRef::index(g)] {
                continue;
            }
            let Some(value) = initial(f, &m.globals[g], ty, offset) else {
                continue;
            };
            let r = f.inst_result(i).expect("a load has a result");
            f.replace_all_uses(r, value);
            f.remove_inst(i);
            folded += 1;
        }
    }
    folded
}

/// The globals some address of which `f` uses other than to load from it or to
/// compute another address (a `gep` base): stored to, stored, passed, merged.
pub(crate) fn escaping_globals(f: &Function) -> Vec<GlobalId> {
    let mut out = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            let kind = f.kind(i);
            let mut note = |v: Value| {
                if f.value_type(v) != Type::Ptr {
                    return;
                }
                if let ValueDef::Global(g) = f.value_def(address_root(f, v).0) {
                    out.push(g);
                }
            };
            match kind {
                InstKind::Load { .. } | InstKind::Gep { .. } => {}
                _ => kind.for_each_arg(&mut note),
            }
        }
    }
    out
}

/// The initial value of the element of `g` at byte `offset`, read as `ty`.
fn initial(f: &mut Function, g: &GlobalData, ty: Type, offset: i64) -> Option<Value> {
    let size = i64::from(ty.size());
    if g.elem.size() != ty.size() || offset < 0 || offset % size != 0 || offset >= g.size() as i64 {
        return None;
    }
    let word = g.word((offset / size) as usize);
    match ty {
        Type::I32 => Some(f.iconst(word as i32)),
        Type::F32 => Some(f.fconst(f32::from_bits(word))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    const SRC: &str = r#"
global @ro: i32 = 7
global @table: [i32; 4] = [10, 20, 30]
global @half: f32 = 0.5
global @rw: i32 = 1
global @passed: [i32; 2] = [5, 6]

declare @getint() -> i32
declare @putint(i32) -> void
declare @putfloat(f32) -> void
declare @putarray(i32, ptr) -> void

func @main() -> i32 {
bb0:
  %0 = load i32, @ro
  call @putint(%0)
  %1 = gep @table, 1, 4
  %2 = load i32, %1
  call @putint(%2)
  %3 = gep @table, 3, 4
  %4 = load i32, %3
  call @putint(%4)
  %5 = call @getint()
  %6 = gep @table, %5, 4
  %7 = load i32, %6
  call @putint(%7)
  %8 = load f32, @half
  call @putfloat(%8)
  store 9, @rw
  %9 = load i32, @rw
  call @putint(%9)
  call @putarray(2, @passed)
  %10 = load i32, @passed
  call @putint(%10)
  ret 0
}
"#;

    #[test]
    fn loads_of_never_written_globals_fold() {
        let out = same_behaviour(SRC, &["constglobals"], "2");
        assert!(out.contains("call @putint(7)"), "{out}");
        assert!(out.contains("call @putint(20)"), "{out}");
        assert!(out.contains("call @putint(0)"), "{out}"); // zero tail
        assert!(out.contains("call @putfloat(0.5)"), "{out}");
        // A variable index stays a load.
        assert!(out.contains("load i32, %"), "{out}");
    }

    #[test]
    fn written_or_escaping_globals_stay() {
        let out = same_behaviour(SRC, &["constglobals"], "2");
        assert!(out.contains("load i32, @rw"), "{out}");
        // Passed to a call: the callee may write it.
        assert!(out.contains("load i32, @passed"), "{out}");
    }
}
