//! One walk per function for [`super::Purity`]: what the body does itself (loads,
//! stores) and, per callee, which kinds of memory the pointer arguments it passes
//! point into. A callee's summary then decides the call's contribution without
//! walking the body again, so the fixed point over the call graph costs the number
//! of calls per round of growth instead of the size of every requeued body, and no
//! call graph has to be built first (two more walks of every body).

use super::purity::{pointer_base, Effects, PointerBase};
use ir::{FuncId, Function, InstKind, Value};

/// Which memory the pointers passed at a function's calls of one callee may reach.
#[derive(Copy, Clone, Default, PartialEq, Eq, Debug)]
pub(crate) struct PassedPointers {
    /// Some pointer is into a global or of unknown origin.
    pub global: bool,
    /// Some pointer is into memory passed in through a parameter, or of unknown
    /// origin.
    pub param: bool,
}

/// A body's own effects and its callees, each once (in id order).
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub(crate) struct Summary {
    pub own: Effects,
    pub calls: Vec<(FuncId, PassedPointers)>,
}

/// Marks an access through `ptr` (a write when `write`).
fn access(f: &Function, e: &mut Effects, ptr: Value, write: bool) {
    let (global, param) = match pointer_base(f, ptr) {
        PointerBase::Local(_) => (false, false),
        PointerBase::Global => (true, false),
        PointerBase::Param => (false, true),
        PointerBase::Unknown => (true, true),
    };
    mark(e, global, param, write);
}

fn mark(e: &mut Effects, global: bool, param: bool, write: bool) {
    if write {
        e.writes_global |= global;
        e.writes_args |= param;
    } else {
        e.reads_global |= global;
        e.reads_args |= param;
    }
}

impl Summary {
    /// Walks `f` once.
    pub(crate) fn of(f: &Function) -> Summary {
        let mut s = Summary::default();
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                match f.kind(i) {
                    InstKind::Load { ptr, .. } => access(f, &mut s.own, *ptr, false),
                    InstKind::Store { ptr, .. } => access(f, &mut s.own, *ptr, true),
                    InstKind::Call { callee, args } => {
                        let mut passed = PassedPointers::default();
                        for &a in args {
                            if f.value_type(a) == ir::Type::Ptr {
                                match pointer_base(f, a) {
                                    PointerBase::Local(_) => {}
                                    PointerBase::Global => passed.global = true,
                                    PointerBase::Param => passed.param = true,
                                    PointerBase::Unknown => {
                                        passed.global = true;
                                        passed.param = true;
                                    }
                                }
                            }
                        }
                        s.calls.push((*callee, passed));
                    }
                    _ => {}
                }
            }
        }
        // One entry per callee: the sites' pointers together.
        s.calls.sort_by_key(|&(c, _)| c);
        s.calls.dedup_by(|(c, p), (kept, q)| {
            if c != kept {
                return false;
            }
            q.global |= p.global;
            q.param |= p.param;
            true
        });
        s
    }

    /// The body's effects given its callees' current summaries: a callee's global
    /// accesses and I/O are the caller's, its accesses through pointer arguments
    /// become accesses to what the caller passed.
    pub(crate) fn effects(&self, callee: impl Fn(FuncId) -> Effects) -> Effects {
        let mut e = self.own;
        for &(id, passed) in &self.calls {
            let c = callee(id);
            e.reads_global |= c.reads_global;
            e.writes_global |= c.writes_global;
            e.io |= c.io;
            if c.reads_args {
                mark(&mut e, passed.global, passed.param, false);
            }
            if c.writes_args {
                mark(&mut e, passed.global, passed.param, true);
            }
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::super::purity::runtime_effects;
    use super::super::Purity;
    use super::*;
    use ir::Module;

    /// The summaries as the walk of every body, repeated until nothing changes,
    /// finds them (the previous computation, and the rules' plain reading).
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
    /// array and a block parameter (of unknown origin).
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
            "global @g: i32 = 0\ndeclare @putint(i32) -> void\n\
             declare @getarray(ptr) -> i32\ndeclare @putarray(i32, ptr) -> void\n\
             declare @mystery(ptr) -> void\n",
        );
        for k in 0..nf {
            s += &format!(
                "func @f{k}(ptr) -> void {{\nbb0(%0: ptr):\n  %1 = alloc [i32; 4]\n  \
                 jump bb1(%0)\nbb1(%2: ptr):\n"
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
}
