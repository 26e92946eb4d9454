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
//! `alloc` (private to the call: no effect) or anything else (a pointer merged
//! from several: some global or what some parameter points to, as SysY keeps no
//! pointers in memory). A call contributes its callee's globals, and its
//! accesses through parameter `k` become accesses to whatever the caller passes
//! as argument `k` (through every pointer argument, for a merged pointer). Summaries start empty and grow to a fixed point over the call
//! graph, so recursion needs no special case. Declarations of the runtime library
//! access what [`runtime_effects`] says (their array argument); any other
//! declaration may access any memory.
//!
//! [`super::Purity`] is a view of these summaries ([`ModRef::purity`]), and the
//! analysis manager keeps each body's walk ([`Body`]) until the body changes, so
//! the module is walked once for both and only changed bodies are walked again.

use std::collections::VecDeque;

use super::pointer_roots::PointerRoots;
use super::purity::{runtime_effects, Effects, Purity};
use ir::analysis::address_root;
use ir::{FuncId, Function, GlobalId, InstKind, Module, SecondaryMap, Type, Value, ValueDef};

/// One direction (reads or writes) of a function's memory accesses.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct Access {
    /// Any memory at all (an unknown declaration, or a call of a function that
    /// calls one).
    pub any: bool,
    /// Some global, unknown which (through a merged pointer).
    pub any_global: bool,
    /// Through every pointer parameter (through a merged pointer).
    pub all_params: bool,
    /// The globals accessed, sorted and without duplicates.
    pub globals: Vec<GlobalId>,
    /// The pointer parameters accessed through, by position, sorted.
    pub params: Vec<u32>,
}

impl Access {
    /// Whether some global may be accessed.
    pub fn reaches_globals(&self) -> bool {
        self.any || self.any_global || !self.globals.is_empty()
    }

    /// Whether memory reached through some pointer parameter may be accessed.
    pub fn reaches_params(&self) -> bool {
        self.any || self.all_params || !self.params.is_empty()
    }

    /// Whether nothing is accessed.
    pub fn is_empty(&self) -> bool {
        !self.any
            && !self.any_global
            && !self.all_params
            && self.globals.is_empty()
            && self.params.is_empty()
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
            Object::Any => {
                let grew = !self.any_global || !self.all_params;
                self.any_global = true;
                self.all_params = true;
                grew
            }
        }
    }
}

/// What a function may read and write.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct ModRefInfo {
    pub reads: Access,
    pub writes: Access,
    /// Calls an external function: input/output, timing, anything.
    pub io: bool,
}

impl ModRefInfo {
    /// The same summary by kind of memory: globals (or memory of unknown
    /// origin), memory reached through parameters (or of unknown origin), I/O.
    pub fn effects(&self) -> Effects {
        Effects {
            reads_global: self.reads.reaches_globals(),
            writes_global: self.writes.reaches_globals(),
            reads_args: self.reads.reaches_params(),
            writes_args: self.writes.reaches_params(),
            io: self.io,
        }
    }
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

/// The object `p` points into in `f`; a pointer block parameter (a pointer walking
/// an array in a loop) points into the object its arguments agree on, when
/// `roots` has it ([`PointerRoots`]).
pub fn object_of(f: &Function, roots: Option<&PointerRoots>, p: Value) -> Object {
    let p = roots.map_or(p, |r| r.object_pointer(f, p));
    let (root, _) = address_root(f, p);
    match f.value_def(root) {
        ValueDef::Global(g) => Object::Global(g),
        ValueDef::Param(b, k) if b == f.entry_block() => Object::Param(k),
        ValueDef::Inst(i) if matches!(f.kind(i), InstKind::Alloc { .. }) => Object::Local,
        _ => Object::Any,
    }
}

/// A body's own accesses and its calls (callee and, per argument, the object a
/// pointer argument points into): one walk of the body, which the fixed point over
/// the call graph reads instead of walking the body again.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub(crate) struct Body {
    own: ModRefInfo,
    calls: Vec<(FuncId, Vec<Option<Object>>)>,
}

impl Body {
    pub(crate) fn of(f: &Function) -> Body {
        let walks_pointers = f.layout.blocks().any(|b| {
            b != f.entry_block()
                && f.block_params(b)
                    .iter()
                    .any(|&p| f.value_type(p) == Type::Ptr)
        });
        let roots = walks_pointers.then(|| PointerRoots::compute(f));
        let roots = roots.as_ref();
        let mut own = ModRefInfo::default();
        let mut calls = Vec::new();
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                match f.kind(i) {
                    InstKind::Load { ptr, .. } => {
                        own.reads.add(object_of(f, roots, *ptr));
                    }
                    InstKind::Store { ptr, .. } => {
                        own.writes.add(object_of(f, roots, *ptr));
                    }
                    InstKind::Call { callee, args } => {
                        let objs = args
                            .iter()
                            .map(|&a| {
                                (f.value_type(a) == Type::Ptr).then(|| object_of(f, roots, a))
                            })
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
    fn summary<'c>(&self, callee: impl Fn(FuncId) -> &'c ModRefInfo) -> ModRefInfo {
        let mut s = self.own.clone();
        for (id, objs) in &self.calls {
            let c = callee(*id);
            s.io |= c.io;
            for (mine, theirs) in [(&mut s.reads, &c.reads), (&mut s.writes, &c.writes)] {
                mine.any |= theirs.any;
                mine.any_global |= theirs.any_global;
                for &g in &theirs.globals {
                    mine.add_global(g);
                }
                if theirs.all_params {
                    for o in objs.iter().flatten() {
                        mine.add(*o);
                    }
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
            io: true,
        };
    };
    let side = |global: bool, args: bool| Access {
        any_global: global,
        params: if args { all_params.clone() } else { Vec::new() },
        ..Access::default()
    };
    ModRefInfo {
        reads: side(e.reads_global, e.reads_args),
        writes: side(e.writes_global, e.writes_args),
        io: e.io,
    }
}

/// Mod/ref summaries of all functions of a module.
#[derive(Clone, Debug, Default)]
pub struct ModRef {
    info: SecondaryMap<FuncId, ModRefInfo>,
}

impl ModRef {
    /// Walks every body once and solves the summaries ([`ModRef::solve`]).
    pub fn compute(m: &Module) -> ModRef {
        let mut bodies: SecondaryMap<FuncId, Body> = SecondaryMap::new();
        for (id, f) in m.funcs.iter() {
            if !f.is_declaration() {
                bodies[id] = Body::of(f);
            }
        }
        ModRef::solve(m, |id| &bodies[id])
    }

    /// The fixed point from the bodies' walks, given by function (the analysis
    /// manager keeps them while the bodies are unchanged): a work list seeded with
    /// every function in id order reevaluates a summary against its callees' and
    /// requeues the callers when it grows. Each summary only grows (finite sets),
    /// so this ends.
    pub(crate) fn solve<'b>(m: &Module, body: impl Fn(FuncId) -> &'b Body) -> ModRef {
        let mut r = ModRef::default();
        let mut callers: SecondaryMap<FuncId, Vec<FuncId>> = SecondaryMap::new();
        let mut work: VecDeque<FuncId> = VecDeque::new();
        let mut queued: SecondaryMap<FuncId, bool> = SecondaryMap::new();
        for (id, f) in m.funcs.iter() {
            if f.is_declaration() {
                r.info[id] = declared(f);
                continue;
            }
            for (c, _) in &body(id).calls {
                if callers[*c].last() != Some(&id) {
                    callers[*c].push(id);
                }
            }
            work.push_back(id);
            queued[id] = true;
        }
        while let Some(id) = work.pop_front() {
            queued[id] = false;
            let s = body(id).summary(|c| &r.info[c]);
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

    /// Every function's summary by kind of memory.
    pub fn purity(&self) -> Purity {
        Purity::from_effects(self.info.iter().map(|(id, i)| (id, i.effects())))
    }

    /// What calling `f` may read and write.
    pub fn info(&self, f: FuncId) -> &ModRefInfo {
        &self.info[f]
    }
}

#[cfg(test)]
mod tests {
    use super::super::purity::{pointer_base, PointerBase};
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
        let merged = &info(&m, &r, "merged").reads;
        assert!(merged.any_global && merged.all_params && !merged.any);
        let i = info(&m, &r, "reads_input");
        assert!(i.writes.any, "an unknown declaration may write anything");
        assert_eq!(info(&m, &r, "getarray").writes.params, vec![0]);
        assert!(!info(&m, &r, "getarray").writes.any);
    }

    /// Marks an access through `ptr` (a write when `write`) by kind of memory,
    /// a block parameter taking the object its arguments agree on.
    fn access(f: &Function, e: &mut Effects, ptr: Value, write: bool) {
        let ptr = PointerRoots::compute(f).object_pointer(f, ptr);
        let (global, param) = match pointer_base(f, ptr) {
            PointerBase::Local(_) => (false, false),
            PointerBase::Global => (true, false),
            PointerBase::Param => (false, true),
            PointerBase::Unknown => (true, true),
        };
        if write {
            e.writes_global |= global;
            e.writes_args |= param;
        } else {
            e.reads_global |= global;
            e.reads_args |= param;
        }
    }

    /// The effects as the walk of every body, repeated until nothing changes,
    /// finds them by kind of memory (the rules' plain reading, and the computation
    /// before [`Purity`] became a view of these summaries, except that a call of an
    /// unknown declaration then counted only as reaching the caller's globals and
    /// what it passed). A callee's accesses
    /// through its pointer parameters count against every pointer argument: the
    /// same as by position in the random modules below, whose callees take at most
    /// one pointer.
    fn reference(m: &Module) -> Vec<Effects> {
        let n = m.funcs.len();
        let mut e: Vec<Effects> = m
            .funcs
            .values()
            .map(|f| match f.is_declaration() {
                true => runtime_effects(&f.name).unwrap_or(Effects::ALL),
                false => Effects::default(),
            })
            .collect();
        let mut anything: Vec<bool> = m
            .funcs
            .values()
            .map(|f| f.is_declaration() && runtime_effects(&f.name).is_none())
            .collect();
        let mut changed = true;
        while changed {
            changed = false;
            for (id, f) in m.funcs.iter() {
                if f.is_declaration() {
                    continue;
                }
                let mut x = Effects::default();
                for b in f.layout.blocks() {
                    for i in f.layout.block_insts(b) {
                        match f.kind(i) {
                            InstKind::Load { ptr, .. } => access(f, &mut x, *ptr, false),
                            InstKind::Store { ptr, .. } => access(f, &mut x, *ptr, true),
                            InstKind::Call { callee, args } => {
                                let c = e[callee.as_u32() as usize];
                                if anything[callee.as_u32() as usize] {
                                    // An unknown declaration may reach any memory,
                                    // the caller's parameters' included, and so may
                                    // a function that calls one.
                                    x = Effects::ALL;
                                    anything[id.as_u32() as usize] = true;
                                }
                                x.reads_global |= c.reads_global;
                                x.writes_global |= c.writes_global;
                                x.io |= c.io;
                                for &a in args {
                                    if f.value_type(a) == ir::Type::Ptr {
                                        if c.reads_args {
                                            access(f, &mut x, a, false);
                                        }
                                        if c.writes_args {
                                            access(f, &mut x, a, true);
                                        }
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                }
                let k = id.as_u32() as usize;
                if x != e[k] {
                    e[k] = x;
                    changed = true;
                }
            }
        }
        assert_eq!(e.len(), n);
        e
    }

    /// A random module: functions taking a pointer, which load, store and call
    /// (each other in any order, recursion included, and library and unknown
    /// declarations) through pointers into globals, their parameter, a local
    /// array and a block parameter (taking the parameter, the local array, the
    /// global, or either of the parameter and the global).
    fn random_module(seed: u64) -> String {
        let mut state = seed;
        let mut below = |m: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % m
        };
        let nf = 2 + below(6);
        let mut s = String::from(
            "global @g: i32 = 0\ndeclare @putint(i32) -> void\ndeclare @getint() -> i32\n\
             declare @getarray(ptr) -> i32\ndeclare @putarray(i32, ptr) -> void\n\
             declare @mystery(ptr) -> void\n",
        );
        for k in 0..nf {
            let entry = match below(4) {
                0 => "jump bb1(%0)",
                1 => "jump bb1(%1)",
                2 => "jump bb1(@g)",
                _ => "%9 = call @getint()\n  br %9, bb1(%0), bb1(@g)",
            };
            s += &format!(
                "func @f{k}(ptr) -> void {{\nbb0(%0: ptr):\n  %1 = alloc [i32; 4]\n  \
                 {entry}\nbb1(%2: ptr):\n"
            );
            let len = below(6);
            for next in 3..3 + len {
                let p = ["%0", "%1", "%2", "@g"][below(4)];
                match below(7) {
                    0 => s += &format!("  %{next} = load i32, {p}\n"),
                    1 => s += &format!("  store 1, {p}\n"),
                    2 => s += "  call @putint(1)\n",
                    3 => s += &format!("  %{next} = call @getarray({p})\n"),
                    4 => s += &format!("  call @putarray(1, {p})\n"),
                    5 => s += &format!("  call @mystery({p})\n"),
                    _ => s += &format!("  call @f{}({p})\n", below(nf)),
                }
            }
            s += "  ret\n}\n";
        }
        s
    }

    #[test]
    fn summaries_reach_the_walks_fixed_point() {
        let mut impure = 0;
        for seed in 0..300 {
            let src = random_module(seed);
            let m = ir::parse_module(&src).unwrap_or_else(|e| panic!("{e:?}\n{src}"));
            let p = Purity::compute(&m);
            let want = reference(&m);
            for (id, _) in m.funcs.iter() {
                let got = p.effects(id);
                assert_eq!(got, want[id.as_u32() as usize], "{id} in\n{src}");
                impure += usize::from(!got.is_pure());
            }
        }
        assert!(impure > 300);
    }

    /// A pointer walking a local array in a loop (a block parameter taking the
    /// array's address and its own step) writes only the array: the function
    /// is pure, and a call of it whose result is unused may go. A walk that may
    /// also start at a global writes globals.
    #[test]
    fn a_pointer_walking_a_local_array_writes_only_the_array() {
        let src = r#"
global @g: [i32; 8] = zeroinit

func @fill(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc [i32; 8]
  jump bb1(%1, 0)
bb1(%2: ptr, %3: i32):
  store %3, %2
  %4 = gep %2, 1, 4
  %5 = add %3, 1
  %6 = slt %5, %0
  br %6, bb1(%4, %5), bb2
bb2:
  %7 = load i32, %1
  ret %7
}

func @either(i32) -> i32 {
bb0(%0: i32):
  %1 = alloc [i32; 8]
  br %0, bb1(%1, 0), bb1(@g, 0)
bb1(%2: ptr, %3: i32):
  store %3, %2
  %4 = gep %2, 1, 4
  %5 = add %3, 1
  %6 = slt %5, %0
  br %6, bb1(%4, %5), bb2
bb2:
  ret %3
}
"#;
        let (m, r) = modref(src);
        let fill = info(&m, &r, "fill");
        assert!(fill.writes.is_empty() && fill.reads.is_empty(), "{fill:?}");
        assert!(Purity::compute(&m)
            .effects(m.func_by_name("fill").unwrap())
            .is_pure());
        let either = info(&m, &r, "either");
        assert!(either.writes.reaches_globals(), "{either:?}");
    }

    /// A callee that reads only its first pointer parameter: a caller passing a
    /// local array there and a global as the second reads nothing of its own
    /// callers' memory (by kind of memory alone, the global would count).
    #[test]
    fn purity_counts_a_parameter_only_where_it_is_accessed() {
        let src = r#"
global @g: [i32; 4] = zeroinit

func @first(ptr, ptr) -> i32 {
bb0(%0: ptr, %1: ptr):
  %2 = load i32, %0
  ret %2
}

func @caller() -> i32 {
bb0:
  %0 = alloc [i32; 4]
  %1 = call @first(%0, @g)
  ret %1
}

func @other() -> i32 {
bb0:
  %0 = alloc [i32; 4]
  %1 = call @first(@g, %0)
  ret %1
}
"#;
        let m = ir::parse_module(src).unwrap();
        let p = Purity::compute(&m);
        let e = |name: &str| p.effects(m.func_by_name(name).unwrap());
        assert!(e("first").reads_args && !e("first").reads_global);
        assert!(e("caller").is_pure(), "{:?}", e("caller"));
        let o = e("other");
        assert!(o.reads_global && !o.reads_args && !o.has_side_effects());
    }
}
