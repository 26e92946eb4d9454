//! Which globals a pointer parameter may point into, from the arguments at every call
//! site: an interprocedural, flow-insensitive points-to summary over the call graph
//! (the parameter-passing half of Andersen-style analysis; SysY has no pointer
//! variables or function pointers, so arguments are the only way a pointer reaches a
//! function).
//!
//! An argument `gep`-derived from global `g` contributes `g`; one derived from a local
//! `alloc` of the caller contributes no global (the callee cannot name that memory any
//! other way than through its parameters); one derived from a parameter of the caller
//! contributes that parameter's targets; anything else (a pointer loaded from memory
//! or merged by a block parameter) makes the targets unknown. Sets start empty and grow
//! to a fixed point, so recursion needs no special case. A function that is never
//! called keeps empty sets: its body never runs.
//!
//! `step(int a[][500], int b[][500])`, called only as `step(sheet1, sheet2)` and
//! `step(sheet2, sheet1)`, stores through `b` into `sheet1` or `sheet2` and never into
//! the global `width` its loops test, so the load of `width` is loop-invariant.

use crate::{FuncId, Function, GlobalId, InstKind, Module, SecondaryMap, Type, Value, ValueDef};

/// The globals a pointer may point into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Targets {
    /// Into one of these globals (sorted), or into memory that is no global.
    Known(Vec<GlobalId>),
    /// Anywhere.
    Unknown,
}

impl Targets {
    fn join(&mut self, other: &Targets) -> bool {
        match (&mut *self, other) {
            (Targets::Unknown, _) => false,
            (_, Targets::Unknown) => {
                *self = Targets::Unknown;
                true
            }
            (Targets::Known(a), Targets::Known(b)) => {
                let before = a.len();
                for g in b {
                    if let Err(at) = a.binary_search(g) {
                        a.insert(at, *g);
                    }
                }
                a.len() != before
            }
        }
    }
}

/// The targets of every function's parameters (by position; non-pointer parameters
/// have `Known(vec![])`).
#[derive(Clone, Debug, Default)]
pub struct ParamTargets {
    params: SecondaryMap<FuncId, Vec<Targets>>,
}

impl ParamTargets {
    pub fn compute(m: &Module) -> ParamTargets {
        let mut params: SecondaryMap<FuncId, Vec<Targets>> = SecondaryMap::new();
        for (id, f) in m.funcs.iter() {
            let n = if f.is_declaration() {
                0
            } else {
                f.block_params(f.entry_block()).len()
            };
            params[id] = vec![Targets::Known(Vec::new()); n];
        }
        let mut changed = true;
        while changed {
            changed = false;
            for (caller, f) in m.funcs.iter() {
                if f.is_declaration() {
                    continue;
                }
                for b in f.layout.blocks() {
                    for i in f.layout.block_insts(b) {
                        let InstKind::Call { callee, args } = f.kind(i) else {
                            continue;
                        };
                        if m.funcs[*callee].is_declaration() {
                            continue;
                        }
                        for (k, &a) in args.iter().enumerate() {
                            if f.value_type(a) != Type::Ptr {
                                continue;
                            }
                            let t = origin(f, a, &params[caller]);
                            changed |= params[*callee][k].join(&t);
                        }
                    }
                }
            }
        }
        ParamTargets { params }
    }

    /// The targets of the pointer parameters of `f`, by position.
    pub fn of(&self, f: FuncId) -> &[Targets] {
        &self.params[f]
    }
}

/// The globals pointer `p` of `f` may point into, given the targets of `f`'s
/// parameters.
pub fn origin(f: &Function, p: Value, params: &[Targets]) -> Targets {
    let (root, _) = super::address_root(f, p);
    match f.value_def(root) {
        ValueDef::Global(g) => Targets::Known(vec![g]),
        ValueDef::Param(b, k) if b == f.entry_block() => {
            params.get(k as usize).cloned().unwrap_or(Targets::Unknown)
        }
        ValueDef::Inst(i) if matches!(f.kind(i), InstKind::Alloc { .. }) => {
            Targets::Known(Vec::new())
        }
        _ => Targets::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
global @a: [i32; 10] = zeroinit
global @b: [i32; 10] = zeroinit
global @w: i32 = 5

func @step(ptr, ptr, i32) -> void {
bb0(%0: ptr, %1: ptr, %2: i32):
  store %2, %1
  ret
}

func @relay(ptr) -> void {
bb0(%0: ptr):
  %1 = gep %0, 1, 4
  call @step(%1, %1, 0)
  ret
}

func @merge(ptr, i32) -> void {
bb0(%0: ptr, %1: i32):
  br %1, bb1(%0), bb1(@w)
bb1(%2: ptr):
  call @sink(%2)
  ret
}

func @sink(ptr) -> void {
bb0(%0: ptr):
  ret
}

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 4]
  call @step(@a, @b, 1)
  %1 = gep @b, 2, 4
  call @step(%1, @a, 2)
  call @relay(%0)
  call @merge(@a, 1)
  ret 0
}
"#;

    fn targets(m: &Module, t: &ParamTargets, func: &str) -> Vec<Targets> {
        t.of(m.func_by_name(func).unwrap()).to_vec()
    }

    #[test]
    fn arguments_at_every_call_site_name_the_targets() {
        let m = crate::parse_module(SRC).unwrap();
        let t = ParamTargets::compute(&m);
        let g = |name: &str| {
            m.globals
                .iter()
                .find(|(_, x)| x.name == name)
                .map(|(id, _)| id)
                .unwrap()
        };
        let (a, b) = (g("a"), g("b"));
        let ab = Targets::Known(if a < b { vec![a, b] } else { vec![b, a] });
        // `step` gets @a and @b (through a gep) in both positions, plus from `relay`
        // a pointer into main's local array, which is no global.
        let step = targets(&m, &t, "step");
        assert_eq!(step[0], ab);
        assert_eq!(step[1], ab);
        assert_eq!(step[2], Targets::Known(vec![]));
        assert_eq!(targets(&m, &t, "relay")[0], Targets::Known(vec![]));
        // `merge` passes on a block parameter merging its argument and @w.
        assert_eq!(targets(&m, &t, "merge")[0], Targets::Known(vec![a]));
        assert_eq!(targets(&m, &t, "sink")[0], Targets::Unknown);
    }
}
