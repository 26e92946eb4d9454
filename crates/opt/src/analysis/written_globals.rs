//! Which globals the program may write: the "is this global ever stored to" half of
//! LLVM's `GlobalOpt` (`GlobalStatus::StoredType`) and GCC's `ipa-reference`, with
//! the callees' effects deciding what a passed address does.
//!
//! SysY has no separate compilation, so every use of a global's address is in the
//! module. A global may be written when some address derived from it (through
//! `gep`s) is the address of a store, is stored itself, is merged into a block
//! parameter, returned or selected (it could then reach a store unseen), or is
//! passed to a call whose callee may write through its pointer parameters
//! ([`Effects::writes_args`] of the [`Purity`] summaries, which follow the address
//! into the callee's own calls). An address passed to a function that only reads
//! through its parameters (`putarray`, a sum over an array) leaves it read-only.

use super::purity::Purity;
use ir::analysis::address_root;
use ir::{EntityRef, Function, GlobalId, InstKind, Module, Type, ValueDef};

/// Per global, whether some instruction of the program may write it.
pub struct WrittenGlobals {
    written: Vec<bool>,
}

impl WrittenGlobals {
    /// Scans every function of `m` once; `purity` gives the callees' effects.
    pub fn compute(m: &Module, purity: &Purity) -> WrittenGlobals {
        let mut written = vec![false; m.globals.len()];
        for f in m.funcs.values() {
            for g in escaping_globals(f, purity) {
                written[g.index()] = true;
            }
        }
        WrittenGlobals { written }
    }

    /// Whether `g` may be written.
    pub fn is_written(&self, g: GlobalId) -> bool {
        self.written[g.index()]
    }
}

/// The globals some address of which `f` uses other than to load from it, to
/// compute another address (a `gep` base), or to pass it to a callee that only
/// reads through its parameters.
fn escaping_globals(f: &Function, purity: &Purity) -> Vec<GlobalId> {
    let mut out = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            let kind = f.kind(i);
            match kind {
                InstKind::Load { .. } | InstKind::Gep { .. } => continue,
                InstKind::Call { callee, .. } if !purity.effects(*callee).writes_args => continue,
                _ => {}
            }
            kind.for_each_arg(|v| {
                if f.value_type(v) != Type::Ptr {
                    return;
                }
                if let ValueDef::Global(g) = f.value_def(address_root(f, v).0) {
                    out.push(g);
                }
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(src: &str) -> Vec<(String, bool)> {
        let m = ir::parse_module(src).expect("test IR parses");
        let w = WrittenGlobals::compute(&m, &Purity::compute(&m));
        m.globals
            .iter()
            .map(|(id, g)| (g.name.clone(), w.is_written(id)))
            .collect()
    }

    #[test]
    fn passing_to_a_reader_keeps_a_global_read_only() {
        let w = written(
            r#"
global @ro: [i32; 4] = zeroinit
global @stored: [i32; 4] = zeroinit
global @to_writer: [i32; 4] = zeroinit
global @to_runtime: [i32; 4] = zeroinit
global @merged: [i32; 4] = zeroinit

declare @putarray(i32, ptr) -> void
declare @getarray(ptr) -> i32

func @sum(ptr) -> i32 {
bb0(%0: ptr):
  %1 = gep %0, 1, 4
  %2 = load i32, %1
  ret %2
}

func @clear(ptr) -> void {
bb0(%0: ptr):
  %1 = gep %0, 2, 4
  store 0, %1
  ret
}

func @twice(ptr) -> void {
bb0(%0: ptr):
  call @clear(%0)
  ret
}

func @main(i32) -> i32 {
bb0(%0: i32):
  %1 = call @sum(@ro)
  call @putarray(4, @ro)
  %2 = gep @stored, %0, 4
  store 1, %2
  call @twice(@to_writer)
  %3 = call @getarray(@to_runtime)
  jump bb1(@merged)
bb1(%4: ptr):
  %5 = load i32, %4
  ret %5
}
"#,
        );
        let get = |n: &str| w.iter().find(|(g, _)| g == n).expect("global").1;
        assert!(!get("ro"), "{w:?}");
        assert!(get("stored"), "{w:?}");
        // Written by a callee of the callee.
        assert!(get("to_writer"), "{w:?}");
        assert!(get("to_runtime"), "{w:?}");
        // A merged address could reach a store unseen.
        assert!(get("merged"), "{w:?}");
    }
}
