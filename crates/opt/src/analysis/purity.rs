//! Side-effect summaries of functions: whether a function reads or writes global
//! memory, reads or writes memory through its pointer arguments, or does I/O (calls a
//! declared, external function such as the runtime library's `putint`).
//!
//! A local `alloc` is private to one call, so accesses to it are no effect at all. A
//! call contributes its callee's summary, except that the callee's accesses through
//! pointer arguments become accesses to whatever the caller passed (nothing, for a
//! local array). Summaries start empty (optimistically pure) and grow monotonically to
//! a fixed point over the call graph, so recursion needs no special case: a cycle of
//! functions that do nothing but call each other stays pure. External declarations
//! are assumed to do everything. This follows the seed write-up's rules for pure
//! functions (external functions impure, recursion does not make a function impure),
//! made precise per kind of memory.
//!
//! These summaries are a view of [`ModRef`]'s, which name the globals and the
//! parameters accessed: a callee's accesses through parameter `k` become accesses
//! to what the caller passes as argument `k` (so a local array passed where the
//! callee only reads another parameter costs nothing).
//!
//! The SysY runtime library is part of the language (../shared/SYSY.md), so its
//! declarations get the effects the library documents ([`runtime_effects`]): all do
//! I/O, `getarray`/`getfarray` also write through their array argument and
//! `putarray`/`putfarray`/`putf` read through theirs; none touches the program's
//! globals. C's `memset`, which [`crate::passes::loops::loopidiom`] calls, only writes
//! through its pointer argument. Any other declaration is assumed to do everything.

use super::modref::ModRef;
use ir::analysis::address_root;
use ir::{FuncId, Function, InstKind, Module, SecondaryMap, Value, ValueDef};

/// What calling a function may do.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Effects {
    /// Loads from globals (or from pointers of unknown origin).
    pub reads_global: bool,
    /// Stores to globals (or to pointers of unknown origin).
    pub writes_global: bool,
    /// Loads through pointer parameters.
    pub reads_args: bool,
    /// Stores through pointer parameters.
    pub writes_args: bool,
    /// Calls an external function: input/output, timing, anything.
    pub io: bool,
}

impl Effects {
    /// Everything: the summary of an external declaration.
    pub const ALL: Effects = Effects {
        reads_global: true,
        writes_global: true,
        reads_args: true,
        writes_args: true,
        io: true,
    };

    /// No memory access and no I/O: the result depends only on the arguments' values.
    pub fn is_pure(self) -> bool {
        self == Effects::default()
    }

    /// Whether a call could change state the caller (or the outside world) observes.
    /// A call without side effects whose result is unused can be deleted.
    pub fn has_side_effects(self) -> bool {
        self.writes_global || self.writes_args || self.io
    }

    /// Whether the result may depend on memory contents.
    pub fn reads_memory(self) -> bool {
        self.reads_global || self.reads_args
    }
}

/// Where a pointer points, found by following `gep` bases.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum PointerBase {
    /// Into a local `alloc` (the value given).
    Local(Value),
    /// Into a global.
    Global,
    /// Into memory passed in through a parameter of the function.
    Param,
    /// Anything (a loaded pointer, a block parameter merging pointers).
    Unknown,
}

/// Follows `gep` bases from `p` to the allocation it points into.
pub fn pointer_base(f: &Function, p: Value) -> PointerBase {
    let (root, _) = address_root(f, p);
    match f.value_def(root) {
        ValueDef::Global(_) => PointerBase::Global,
        ValueDef::Param(b, _) if b == f.entry_block() => PointerBase::Param,
        ValueDef::Inst(i) if matches!(f.kind(i), InstKind::Alloc { .. }) => {
            PointerBase::Local(root)
        }
        _ => PointerBase::Unknown,
    }
}

/// What the SysY runtime library function `name` does, if it is one (as a
/// declaration: a program that defines a function of that name gets the summary of
/// its body instead).
pub fn runtime_effects(name: &str) -> Option<Effects> {
    let io = Effects {
        io: true,
        ..Effects::default()
    };
    match name {
        "getint" | "getch" | "getfloat" | "putint" | "putch" | "putfloat" | "_sysy_starttime"
        | "_sysy_stoptime" => Some(io),
        "getarray" | "getfarray" => Some(Effects {
            writes_args: true,
            ..io
        }),
        "putarray" | "putfarray" | "putf" => Some(Effects {
            reads_args: true,
            ..io
        }),
        // C's, which the loop idiom pass calls: it writes its array argument.
        "memset" => Some(Effects {
            writes_args: true,
            ..Effects::default()
        }),
        _ => None,
    }
}

/// Effect summaries of all functions of a module.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Purity {
    effects: SecondaryMap<FuncId, Effects>,
}

impl Purity {
    /// Computes the summaries: the view by kind of memory of the mod/ref
    /// summaries ([`ModRef::compute`]), which name the globals and parameters.
    pub fn compute(m: &Module) -> Purity {
        ModRef::compute(m).purity()
    }

    /// The summaries given by function.
    pub(crate) fn from_effects(effects: impl Iterator<Item = (FuncId, Effects)>) -> Purity {
        let mut p = Purity::default();
        for (id, e) in effects {
            p.effects[id] = e;
        }
        p
    }

    /// The summary of function `f`.
    pub fn effects(&self, f: FuncId) -> Effects {
        self.effects[f]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testutil::{even_odd, fib};

    fn purity(src: &str) -> (Module, Purity) {
        let m = ir::parse_module(src).expect("test IR parses");
        let p = Purity::compute(&m);
        (m, p)
    }

    fn fx(m: &Module, p: &Purity, name: &str) -> Effects {
        p.effects(m.func_by_name(name).unwrap())
    }

    #[test]
    fn classifies_memory_and_io() {
        let (m, p) = purity(
            r#"
global @g: i32 = 0
declare @putint(i32) -> void

func @pure(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc [i32; 4]
  %2 = gep %1, 1, 4
  store %0, %2
  %3 = load i32, %2
  %4 = mul %3, %0
  ret %4
}

func @reads_g() -> i32 {
bb0:
  %0 = load i32, @g
  ret %0
}

func @writes_arg(ptr) -> void {
bb0(%0: ptr):
  %1 = gep %0, 3, 4
  store 1, %1
  ret
}

func @prints(i32) -> void {
bb0(%0: i32):
  call @putint(%0)
  ret
}

func @fills_local() -> i32 {
bb0:
  %0 = alloc [i32; 8]
  call @writes_arg(%0)
  %1 = load i32, %0
  ret %1
}

func @fills_global() -> void {
bb0:
  call @writes_arg(@g)
  ret
}
"#,
        );
        assert!(fx(&m, &p, "pure").is_pure());
        let r = fx(&m, &p, "reads_g");
        assert!(r.reads_global && !r.has_side_effects());
        let w = fx(&m, &p, "writes_arg");
        assert!(w.writes_args && !w.writes_global && w.has_side_effects());
        assert!(fx(&m, &p, "prints").io);
        assert!(
            fx(&m, &p, "fills_local").is_pure(),
            "writes only its own array"
        );
        let g = fx(&m, &p, "fills_global");
        assert!(g.writes_global && !g.writes_args);
        let io_only = Effects {
            io: true,
            ..Effects::default()
        };
        assert_eq!(fx(&m, &p, "putint"), io_only);
        assert!(
            !fx(&m, &p, "prints").writes_global,
            "putint writes no memory"
        );
    }

    #[test]
    fn runtime_library_and_unknown_declarations() {
        let (m, p) = purity(
            r#"
declare @getarray(ptr) -> i32
declare @putarray(i32, ptr) -> void
declare @mystery(ptr) -> void

func @fill_global() -> i32 {
bb0:
  %0 = call @getarray(@g)
  ret %0
}

func @show_local() -> void {
bb0:
  %0 = alloc [i32; 4]
  call @putarray(4, %0)
  ret
}

global @g: [i32; 4] = zeroinit
"#,
        );
        let g = fx(&m, &p, "getarray");
        assert!(g.io && g.writes_args && !g.writes_global && !g.reads_global);
        let pa = fx(&m, &p, "putarray");
        assert!(pa.io && pa.reads_args && !pa.writes_args && !pa.writes_global);
        assert_eq!(fx(&m, &p, "mystery"), Effects::ALL);
        // Reading input into a global array writes that global.
        let fg = fx(&m, &p, "fill_global");
        assert!(fg.writes_global && fg.io);
        // Printing a local array touches no memory of the caller's caller.
        let sl = fx(&m, &p, "show_local");
        assert!(sl.io && !sl.reads_global && !sl.writes_global);
    }

    #[test]
    fn recursion_reaches_a_fixed_point() {
        // odd(0) writes @g.
        let src = format!(
            "global @g: i32 = 0\n{}{}",
            fib(),
            even_odd("  store 1, @g\n")
        );
        let (m, p) = purity(&src);
        assert!(fx(&m, &p, "fib").is_pure());
        // even calls odd, which writes @g: both have the side effect.
        assert!(fx(&m, &p, "even").writes_global);
        assert!(fx(&m, &p, "odd").writes_global);
    }
}
