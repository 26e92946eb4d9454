//! Which pairs of a function's pointer parameters always point into different
//! objects: an interprocedural "no alias" inference from the arguments at every
//! call site (what C programmers state with `restrict`, derived here).
//!
//! Parameters `i` and `j` of `f` are *disjoint* when at every call of `f` the two
//! arguments point into different objects: two different globals, two different
//! local `alloc`s, a global and a local, a local of the caller and any parameter
//! of the caller (a parameter cannot point into the current activation's
//! locals), a parameter of the caller and a global it never points into
//! ([`ParamTargets`]), or two parameters of the caller that are themselves
//! disjoint. Anything else (the same object, a pointer merged by a block
//! parameter or loaded from memory) is not. Since SysY arrays are accessed
//! within bounds (an out-of-bounds access is undefined), memory reached through
//! `i` is then never memory reached through `j`.
//!
//! The pairs form a greatest fixed point: every pair starts disjoint and a call
//! site that does not prove it removes it, until nothing changes; recursion
//! needs no special case. A function that is never called keeps every pair (its
//! body never runs).
//!
//! `step(int a[][500], int b[][500])` called only as `step(sheet1, sheet2)` and
//! `step(sheet2, sheet1)`: `a` and `b` may each be either global, but never the
//! same one, so a store through `b` leaves every value loaded through `a` valid.

use super::param_targets::{ParamTargets, Targets};
use crate::{FuncId, Function, InstKind, Module, SecondaryMap, Type, Value, ValueDef};

/// Disjoint pointer-parameter pairs of every function.
#[derive(Clone, Debug, Default)]
pub struct DisjointParams {
    /// Per function, sorted pairs `(i, j)` with `i < j`.
    pairs: SecondaryMap<FuncId, Vec<(usize, usize)>>,
}

/// What an argument points into, as far as disjointness is concerned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Object {
    Global(crate::GlobalId),
    Local(Value),
    Param(usize),
    Unknown,
}

fn object(f: &Function, p: Value) -> Object {
    let (root, _) = super::address_root(f, p);
    match f.value_def(root) {
        ValueDef::Global(g) => Object::Global(g),
        ValueDef::Param(b, k) if b == f.entry_block() => Object::Param(k as usize),
        ValueDef::Inst(i) if matches!(f.kind(i), InstKind::Alloc { .. }) => Object::Local(root),
        _ => Object::Unknown,
    }
}

impl DisjointParams {
    /// Computes the pairs of every function of `m`; `targets` are its
    /// [`ParamTargets`].
    pub fn compute(m: &Module, targets: &ParamTargets) -> DisjointParams {
        let mut pairs: SecondaryMap<FuncId, Vec<(usize, usize)>> = SecondaryMap::new();
        for (id, f) in m.funcs.iter() {
            if f.is_declaration() {
                continue;
            }
            let ptrs: Vec<usize> = f
                .block_params(f.entry_block())
                .iter()
                .enumerate()
                .filter(|(_, &p)| f.value_type(p) == Type::Ptr)
                .map(|(k, _)| k)
                .collect();
            for (a, &i) in ptrs.iter().enumerate() {
                for &j in &ptrs[a + 1..] {
                    pairs[id].push((i, j));
                }
            }
        }
        let mut d = DisjointParams { pairs };
        let mut changed = true;
        while changed {
            changed = false;
            for (caller, f) in m.funcs.iter() {
                if f.is_declaration() {
                    continue;
                }
                for b in f.layout.blocks() {
                    for inst in f.layout.block_insts(b) {
                        let InstKind::Call { callee, args } = f.kind(inst) else {
                            continue;
                        };
                        if d.pairs[*callee].is_empty() {
                            continue;
                        }
                        let before = d.pairs[*callee].len();
                        let kept: Vec<(usize, usize)> = d.pairs[*callee]
                            .iter()
                            .copied()
                            .filter(|&(i, j)| d.distinct(f, caller, targets, args[i], args[j]))
                            .collect();
                        if kept.len() != before {
                            d.pairs[*callee] = kept;
                            changed = true;
                        }
                    }
                }
            }
        }
        d
    }

    /// Whether parameters `i` and `j` of `f` are disjoint.
    pub fn disjoint(&self, f: FuncId, i: usize, j: usize) -> bool {
        let key = (i.min(j), i.max(j));
        i != j && self.pairs[f].binary_search(&key).is_ok()
    }

    /// Whether pointers `a` and `b` of `f` (function `id`) point into different
    /// objects, given the pairs found so far.
    fn distinct(
        &self,
        f: &Function,
        id: FuncId,
        targets: &ParamTargets,
        a: Value,
        b: Value,
    ) -> bool {
        let not_into = |k: usize, g: crate::GlobalId| matches!(targets.of(id).get(k), Some(Targets::Known(gs)) if !gs.contains(&g));
        match (object(f, a), object(f, b)) {
            (Object::Unknown, _) | (_, Object::Unknown) => false,
            (Object::Global(x), Object::Global(y)) => x != y,
            (Object::Local(x), Object::Local(y)) => x != y,
            (Object::Global(_), Object::Local(_)) | (Object::Local(_), Object::Global(_)) => true,
            (Object::Local(_), Object::Param(_)) | (Object::Param(_), Object::Local(_)) => true,
            (Object::Param(k), Object::Global(g)) | (Object::Global(g), Object::Param(k)) => {
                not_into(k, g)
            }
            (Object::Param(x), Object::Param(y)) => self.disjoint(id, x, y),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
global @a: [i32; 10] = zeroinit
global @b: [i32; 10] = zeroinit

func @step(ptr, ptr, ptr) -> void {
bb0(%0: ptr, %1: ptr, %2: ptr):
  ret
}

func @relay(ptr, ptr) -> void {
bb0(%0: ptr, %1: ptr):
  %2 = gep %0, 1, 4
  %3 = alloc [i32; 4]
  call @step(%2, %1, %3)
  ret
}

func @same(ptr) -> void {
bb0(%0: ptr):
  %1 = gep %0, 1, 4
  call @relay(%0, %1)
  ret
}

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 4]
  call @step(@a, @b, %0)
  %1 = gep @b, 2, 4
  call @step(%1, @a, @a)
  call @relay(@b, @a)
  ret 0
}
"#;

    fn compute(src: &str) -> (Module, DisjointParams) {
        let m = crate::parse_module(src).unwrap();
        let t = ParamTargets::compute(&m);
        let d = DisjointParams::compute(&m, &t);
        (m, d)
    }

    #[test]
    fn pairs_hold_when_every_call_passes_different_objects() {
        let (m, d) = compute(&SRC.replace("  call @relay(%0, %1)\n", ""));
        let id = |n: &str| m.func_by_name(n).unwrap();
        // step(0, 1): @a/@b in either order, or relay's pair (main passes @b, @a).
        assert!(d.disjoint(id("relay"), 0, 1));
        assert!(d.disjoint(id("step"), 0, 1) && d.disjoint(id("step"), 1, 0));
        // step(1, 2): main passes @a twice in its second call.
        assert!(!d.disjoint(id("step"), 1, 2));
        // step(0, 2): a global and a local, or relay's parameter and its own local.
        assert!(d.disjoint(id("step"), 0, 2));
        assert!(!d.disjoint(id("step"), 0, 0));
    }

    /// `same` passes relay two pointers into one array: relay's pair fails, and
    /// with it step's pair 0/1, which relay's call needed.
    #[test]
    fn a_caller_pair_that_fails_fails_its_callees_pair() {
        let (m, d) = compute(SRC);
        let id = |n: &str| m.func_by_name(n).unwrap();
        assert!(!d.disjoint(id("relay"), 0, 1));
        assert!(!d.disjoint(id("step"), 0, 1));
        assert!(d.disjoint(id("step"), 0, 2));
    }
}
