//! Mod/ref summaries of functions: *which* globals a call may read or write, and
//! through which of its pointer parameters, so that a pass can tell that a call
//! leaves some memory alone. This is the interprocedural half of GCC's `ipa-modref`
//! and `ipa-reference` (per function, the sets of static variables read and
//! written, and the parameters whose pointees are accessed) and of LLVM's
//! `GlobalsAA` (mod/ref of a call site with respect to a global), which
//! [`super::Purity`] answers only per kind of memory ("writes some global").
//!
//! An access through a pointer counts against the object its `gep` chain starts
//! from: a global (by id), a parameter of the function (by position), a local
//! `alloc` (private to the call: no effect) or anything else (a merged or loaded
//! pointer: any memory). A call contributes its callee's globals, and its
//! accesses through parameter `k` become accesses to whatever the caller passes
//! as argument `k`. Summaries start empty and grow to a fixed point over the call
//! graph, so recursion needs no special case. Declarations of the runtime library
//! access what [`runtime_effects`] says (their array argument); any other
//! declaration may access any memory.

use std::collections::VecDeque;

use super::purity::runtime_effects;
use ir::analysis::address_root;
use ir::{FuncId, Function, GlobalId, InstKind, Module, SecondaryMap, Type, Value, ValueDef};

/// One direction (reads or writes) of a function's memory accesses.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct Access {
    /// Any memory at all (through a pointer of unknown origin).
    pub any: bool,
    /// The globals accessed, sorted and without duplicates.
    pub globals: Vec<GlobalId>,
    /// The pointer parameters accessed through, by position, sorted.
    pub params: Vec<u32>,
}

impl Access {
    /// Whether nothing is accessed.
    pub fn is_empty(&self) -> bool {
        !self.any && self.globals.is_empty() && self.params.is_empty()
    }

    fn add_global(&mut self, g: GlobalId) -> bool {
        match self.globals.binary_search(&g) {
            Ok(_) => false,
            Err(k) => {
                self.globals.insert(k, g);
                true
            }
        }
    }

    fn add_param(&mut self, p: u32) -> bool {
        match self.params.binary_search(&p) {
            Ok(_) => false,
            Err(k) => {
                self.params.insert(k, p);
                true
            }
        }
    }

    fn add(&mut self, o: Object) -> bool {
        match o {
            Object::Local => false,
            Object::Global(g) => self.add_global(g),
            Object::Param(p) => self.add_param(p),
            Object::Any => !std::mem::replace(&mut self.any, true),
        }
    }
}

/// What a function may read and write.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct ModRefInfo {
    pub reads: Access,
    pub writes: Access,
}

/// The object an address points into, as a summary sees it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Object {
    /// A local `alloc` of the function.
    Local,
    /// A global.
    Global(GlobalId),
    /// What parameter `k` of the function points to.
    Param(u32),
    /// Unknown.
    Any,
}

/// The object `p` points into in `f`.
pub fn object_of(f: &Function, p: Value) -> Object {
    let (root, _) = address_root(f, p);
    match f.value_def(root) {
        ValueDef::Global(g) => Object::Global(g),
        ValueDef::Param(b, k) if b == f.entry_block() => Object::Param(k),
        ValueDef::Inst(i) if matches!(f.kind(i), InstKind::Alloc { .. }) => Object::Local,
        _ => Object::Any,
    }
}

/// A body's own accesses and its calls (callee and, per argument, the object a
/// pointer argument points into).
#[derive(Clone, Default)]
struct Body {
    own: ModRefInfo,
    calls: Vec<(FuncId, Vec<Option<Object>>)>,
}

impl Body {
    fn of(f: &Function) -> Body {
        let mut own = ModRefInfo::default();
        let mut calls = Vec::new();
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                match f.kind(i) {
                    InstKind::Load { ptr, .. } => {
                        own.reads.add(object_of(f, *ptr));
                    }
                    InstKind::Store { ptr, .. } => {
                        own.writes.add(object_of(f, *ptr));
                    }
                    InstKind::Call { callee, args } => {
                        let objs = args
                            .iter()
                            .map(|&a| (f.value_type(a) == Type::Ptr).then(|| object_of(f, a)))
                            .collect();
                        calls.push((*callee, objs));
                    }
                    _ => {}
                }
            }
        }
        calls.sort_by_key(|c| c.0);
        calls.dedup();
        Body { own, calls }
    }

    /// The body's accesses given its callees' current summaries.
    fn summary(&self, callee: impl Fn(FuncId) -> ModRefInfo) -> ModRefInfo {
        let mut s = self.own.clone();
        for (id, objs) in &self.calls {
            let c = callee(*id);
            for (mine, theirs) in [(&mut s.reads, &c.reads), (&mut s.writes, &c.writes)] {
                mine.any |= theirs.any;
                for &g in &theirs.globals {
                    mine.add_global(g);
                }
                for &k in &theirs.params {
                    // A parameter the call passes no pointer for is never accessed.
                    if let Some(Some(o)) = objs.get(k as usize) {
                        mine.add(*o);
                    }
                }
            }
        }
        s
    }
}

/// The summary of a declaration `d`.
fn declared(d: &Function) -> ModRefInfo {
    let all_params: Vec<u32> = d
        .sig
        .params
        .iter()
        .enumerate()
        .filter(|(_, t)| **t == Type::Ptr)
        .map(|(k, _)| k as u32)
        .collect();
    let Some(e) = runtime_effects(&d.name) else {
        let any = Access {
            any: true,
            ..Access::default()
        };
        return ModRefInfo {
            reads: any.clone(),
            writes: any,
        };
    };
    let side = |global: bool, args: bool| Access {
        any: global,
        globals: Vec::new(),
        params: if args { all_params.clone() } else { Vec::new() },
    };
    ModRefInfo {
        reads: side(e.reads_global, e.reads_args),
        writes: side(e.writes_global, e.writes_args),
    }
}

/// Mod/ref summaries of all functions of a module.
#[derive(Clone, Debug, Default)]
pub struct ModRef {
    info: SecondaryMap<FuncId, ModRefInfo>,
}

impl ModRef {
    /// Walks every body once and solves the summaries with a work list over the
    /// callers (each only grows, so this ends).
    pub fn compute(m: &Module) -> ModRef {
        let mut r = ModRef::default();
        let mut bodies: SecondaryMap<FuncId, Option<Body>> = SecondaryMap::new();
        let mut callers: SecondaryMap<FuncId, Vec<FuncId>> = SecondaryMap::new();
        let mut work: VecDeque<FuncId> = VecDeque::new();
        let mut queued: SecondaryMap<FuncId, bool> = SecondaryMap::new();
        for (id, f) in m.funcs.iter() {
            if f.is_declaration() {
                r.info[id] = declared(f);
                continue;
            }
            let body = Body::of(f);
            for (c, _) in &body.calls {
                if callers[*c].last() != Some(&id) {
                    callers[*c].push(id);
                }
            }
            bodies[id] = Some(body);
            work.push_back(id);
            queued[id] = true;
        }
        while let Some(id) = work.pop_front() {
            queued[id] = false;
            let body = bodies[id].as_ref().expect("queued functions have bodies");
            let s = body.summary(|c| r.info[c].clone());
            if s != r.info[id] {
                r.info[id] = s;
                for &c in &callers[id] {
                    if !queued[c] {
                        queued[c] = true;
                        work.push_back(c);
                    }
                }
            }
        }
        r
    }

    /// What calling `f` may read and write.
    pub fn info(&self, f: FuncId) -> &ModRefInfo {
        &self.info[f]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modref(src: &str) -> (Module, ModRef) {
        let m = ir::parse_module(src).expect("test IR parses");
        let r = ModRef::compute(&m);
        (m, r)
    }

    const SRC: &str = r#"
global @a: [i32; 4] = zeroinit
global @b: i32 = 0
global @c: f32 = 0.0

declare @putint(i32) -> void
declare @getarray(ptr) -> i32
declare @mystery(ptr) -> void

func @sum(ptr, i32, ptr) -> i32 {
bb0(%0: ptr, %1: i32, %2: ptr):
  %3 = gep %0, %1, 4
  %4 = load i32, %3
  %5 = load i32, @b
  %6 = add %4, %5
  store %6, %2
  ret %6
}

func @local(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc [i32; 4]
  %2 = call @sum(%1, %0, %1)
  ret %2
}

func @onto_globals(i32) -> i32 {
bb0(%0: i32):
  %1 = call @sum(@a, %0, @b)
  store 1.0, @c
  call @putint(%1)
  ret %1
}

func @rec(i32, ptr) -> i32 {
bb0(%0: i32, %1: ptr):
  %2 = slt %0, 1
  br %2, bb1, bb2
bb1:
  %3 = load i32, %1
  ret %3
bb2:
  %4 = add %0, -1
  %5 = call @rec(%4, @a)
  ret %5
}

func @merged(i32, ptr) -> i32 {
bb0(%0: i32, %1: ptr):
  br %0, bb1(%1), bb1(@a)
bb1(%2: ptr):
  %3 = load i32, %2
  ret %3
}

func @reads_input() -> i32 {
bb0:
  %0 = call @getarray(@a)
  call @mystery(@a)
  ret %0
}
"#;

    fn info<'r>(m: &Module, r: &'r ModRef, name: &str) -> &'r ModRefInfo {
        r.info(m.func_by_name(name).unwrap())
    }

    fn global(m: &Module, name: &str) -> GlobalId {
        m.globals
            .iter()
            .find(|(_, g)| g.name == name)
            .map(|(id, _)| id)
            .unwrap()
    }

    #[test]
    fn names_the_globals_and_parameters_accessed() {
        let (m, r) = modref(SRC);
        let (a, b, c) = (global(&m, "a"), global(&m, "b"), global(&m, "c"));
        let s = info(&m, &r, "sum");
        assert_eq!(s.reads.globals, vec![b]);
        assert_eq!(s.reads.params, vec![0]);
        assert_eq!(s.writes.params, vec![2]);
        assert!(s.writes.globals.is_empty() && !s.writes.any && !s.reads.any);
        // Through its own arrays: nothing.
        let l = info(&m, &r, "local");
        assert_eq!(l.reads.globals, vec![b]);
        assert!(l.writes.is_empty() && l.reads.params.is_empty());
        // The parameters become the globals passed.
        let o = info(&m, &r, "onto_globals");
        assert_eq!(o.reads.globals, vec![a, b]);
        let mut w = vec![b, c];
        w.sort();
        assert_eq!(o.writes.globals, w);
        assert!(!o.writes.any, "putint writes no memory");
    }

    #[test]
    fn recursion_merged_pointers_and_declarations() {
        let (m, r) = modref(SRC);
        let a = global(&m, "a");
        let rec = info(&m, &r, "rec");
        assert_eq!(rec.reads.params, vec![1]);
        assert_eq!(rec.reads.globals, vec![a], "its own call passes @a");
        assert!(rec.writes.is_empty());
        assert!(info(&m, &r, "merged").reads.any);
        let i = info(&m, &r, "reads_input");
        assert!(i.writes.any, "an unknown declaration may write anything");
        assert_eq!(info(&m, &r, "getarray").writes.params, vec![0]);
        assert!(!info(&m, &r, "getarray").writes.any);
    }
}
