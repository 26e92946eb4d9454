//! Read-only globals become constants: a global that no instruction of the program
//! can write keeps its initial value for the whole run, so a load of it at a
//! constant offset is that value, and a load at any offset of a global whose
//! elements all start equal (an all-zero table) is that one value.
//!
//! This is the "global is never stored to, mark it constant" step of LLVM's
//! `GlobalOpt` (and GCC's read-only promotion in `ipa-reference`), followed by the
//! load folding of a constant global (LLVM's `ConstantFoldLoadFromConstPtr`, which
//! also folds a load at an unknown index of a uniform initialiser). Which globals
//! may be written is [`WrittenGlobals`]: every use of a global's address is in the
//! module, and a callee only counts as a writer when its effects say it writes
//! through its pointer parameters. An out-of-bounds load is undefined, so the
//! uniform value serves every offset.

use crate::analysis::{address_root, AnalysisManager, Preserved, WrittenGlobals};
use crate::pipeline::Pass;
use ir::{Function, GlobalData, GlobalInit, InstKind, Module, Type, Value, ValueDef};

/// The read-only global folding pass.
pub struct ConstGlobals;

impl Pass for ConstGlobals {
    fn name(&self) -> &'static str {
        "constglobals"
    }
    fn description(&self) -> &'static str {
        "replace loads of globals that are never written by their initial values"
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let written = WrittenGlobals::compute(m, &am.purity(m));
        run(m, &written) > 0
    }
    /// Rewrites instructions only: no block or edge changes.
    fn preserves(&self) -> Preserved {
        Preserved::CFG
    }
}

/// Folds loads of the globals of `m` that `written` says are read-only; returns
/// how many.
pub fn run(m: &mut Module, written: &WrittenGlobals) -> usize {
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
            let ValueDef::Global(g) = f.value_def(root) else {
                continue;
            };
            if written.is_written(g) {
                continue;
            }
            let value = match offset {
                Some(offset) => initial(f, &m.globals[g], ty, offset),
                None => uniform(f, &m.globals[g], ty),
            };
            let Some(value) = value else {
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

/// The initial value of the element of `g` at byte `offset`, read as `ty`.
fn initial(f: &mut Function, g: &GlobalData, ty: Type, offset: i64) -> Option<Value> {
    word_value(f, initial_word(g, ty, offset)?, ty)
}

/// The bits of the element of `g` at byte `offset` in its initialiser, when a
/// load of `ty` there reads one whole element.
pub(crate) fn initial_word(g: &GlobalData, ty: Type, offset: i64) -> Option<u32> {
    let size = i64::from(ty.size());
    if g.elem.size() != ty.size() || offset < 0 || offset % size != 0 || offset >= g.size() as i64 {
        return None;
    }
    Some(g.word((offset / size) as usize))
}

/// The value every element of `g` starts with, read as `ty`, when they all start
/// equal.
fn uniform(f: &mut Function, g: &GlobalData, ty: Type) -> Option<Value> {
    word_value(f, uniform_word(g, ty)?, ty)
}

/// The bits every element of `g` starts with, when they all start equal and a
/// load of `ty` reads one element.
pub(crate) fn uniform_word(g: &GlobalData, ty: Type) -> Option<u32> {
    if g.elem.size() != ty.size() || g.len == 0 {
        return None;
    }
    let word = match &g.init {
        GlobalInit::Zero => 0,
        GlobalInit::Words(w) => {
            let first = w.first().copied().unwrap_or(0);
            let tail_zero = w.len() < g.len as usize;
            if w.iter().any(|&x| x != first) || (tail_zero && first != 0) {
                return None;
            }
            first
        }
        GlobalInit::Bytes(_) => return None,
    };
    Some(word)
}

fn word_value(f: &mut Function, word: u32, ty: Type) -> Option<Value> {
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
global @shown: [i32; 2] = [8, 9]
global @zeros: [i32; 8] = zeroinit
global @sevens: [f32; 3] = [7.0, 7.0, 7.0]
global @partly: [i32; 3] = [4, 4]

declare @getint() -> i32
declare @getarray(ptr) -> i32
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
  %20 = call @getarray(@passed)
  %10 = load i32, @passed
  call @putint(%10)
  call @putarray(2, @shown)
  %11 = gep @shown, 1, 4
  %12 = load i32, %11
  call @putint(%12)
  %13 = gep @zeros, %5, 4
  %14 = load i32, %13
  call @putint(%14)
  %15 = gep @sevens, %5, 4
  %16 = load f32, %15
  call @putfloat(%16)
  %17 = gep @partly, %5, 4
  %18 = load i32, %17
  call @putint(%18)
  ret 0
}
"#;

    #[test]
    fn loads_of_never_written_globals_fold() {
        let out = same_behaviour(SRC, &["constglobals"], "2\n2 1 1");
        assert!(out.contains("call @putint(7)"), "{out}");
        assert!(out.contains("call @putint(20)"), "{out}");
        assert!(out.contains("call @putint(0)"), "{out}"); // zero tail
        assert!(out.contains("call @putfloat(0.5)"), "{out}");
        // Shown by a function that only reads it: still read-only.
        assert!(out.contains("call @putint(9)"), "{out}");
        // A variable index stays a load, unless every element starts equal.
        assert!(out.contains("gep @table, %"), "{out}");
        // Left: @table's, @rw's, @passed's and @partly's loads; @zeros' folded.
        assert_eq!(out.matches("= load").count(), 4, "{out}");
        assert!(out.contains("call @putfloat(7.0)"), "{out}");
        // [4, 4, 0]: not uniform.
        assert!(out.contains("gep @partly, %"), "{out}");
    }

    #[test]
    fn written_or_escaping_globals_stay() {
        let out = same_behaviour(SRC, &["constglobals"], "2\n2 1 1");
        assert!(out.contains("load i32, @rw"), "{out}");
        // Passed to a call that writes through it.
        assert!(out.contains("load i32, @passed"), "{out}");
    }
}
