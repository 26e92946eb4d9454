//! The object behind a pointer that a block parameter carries: a pointer walking an
//! array in a loop (`p = p + 4` on the back edge, `&a[0]` on entry) is a block
//! parameter, where [`address_root`] stops; every value it receives is derived
//! from the array, so it points into the array too. This is LLVM's
//! `getUnderlyingObjects` looking through phis.
//!
//! Each pointer parameter of a block other than the entry gets the root (a global,
//! an `alloc` or a parameter of the function) common to the arguments it receives,
//! each followed through `gep`s ([`address_root`]) and, when it reaches another
//! block parameter, through that one's root. The roots are found optimistically
//! (as SCCP finds constants): a parameter starts with no root known, takes the one
//! its arguments agree on, and has none once two disagree or one is anything else
//! (a loaded pointer); arguments that are parameters not yet given a root, or the
//! parameter itself, are passed over. By induction on the execution, a parameter
//! with a root only ever holds a pointer derived from it.

use super::address_root;
use ir::{Function, InstKind, Type, Value, ValueDef};
use rustc_hash::FxHashMap;

/// The roots of the pointer block parameters of one function.
#[derive(Clone, Debug, Default)]
pub struct PointerRoots {
    root: FxHashMap<Value, Value>,
}

/// A parameter's root as the fixed point is built.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum State {
    /// Nothing known yet (optimistic).
    Open,
    Root(Value),
    /// Two roots, or an argument with none.
    Mixed,
}

impl PointerRoots {
    /// The roots of `f`'s pointer block parameters.
    pub fn compute(f: &Function) -> Self {
        let entry = f.entry_block();
        let mut index: FxHashMap<Value, usize> = FxHashMap::default();
        let mut sources: Vec<(Value, Vec<Value>)> = Vec::new();
        for b in f.layout.blocks() {
            let Some(t) = f.terminator(b) else {
                continue;
            };
            for call in f.kind(t).targets() {
                if call.block == entry {
                    continue;
                }
                for (&p, &a) in f.block_params(call.block).iter().zip(call.args.iter()) {
                    if f.value_type(p) != Type::Ptr {
                        continue;
                    }
                    let k = *index.entry(p).or_insert_with(|| {
                        sources.push((p, Vec::new()));
                        sources.len() - 1
                    });
                    sources[k].1.push(a);
                }
            }
        }
        let mut state = vec![State::Open; sources.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for (k, (p, args)) in sources.iter().enumerate() {
                if state[k] == State::Mixed {
                    continue;
                }
                let mut now = State::Open;
                for &a in args {
                    let r = address_root(f, a).0;
                    let s = match index.get(&r) {
                        Some(_) if r == *p => State::Open,
                        Some(&j) => state[j],
                        None if is_object(f, r) => State::Root(r),
                        None => State::Mixed,
                    };
                    now = match (now, s) {
                        (x, State::Open) | (State::Open, x) => x,
                        (State::Root(x), State::Root(y)) if x == y => now,
                        _ => State::Mixed,
                    };
                }
                if now != state[k] {
                    state[k] = now;
                    changed = true;
                }
            }
        }
        let root = sources
            .iter()
            .zip(&state)
            .filter_map(|((p, _), s)| match s {
                State::Root(r) => Some((*p, *r)),
                _ => None,
            })
            .collect();
        PointerRoots { root }
    }

    /// `p`, or when [`address_root`] stops at a block parameter with a root, that
    /// root: a pointer into the same object, for the questions that only ask which
    /// object ([`super::pointer_base`], the global or parameter it comes from), not
    /// at which offset.
    pub fn object_pointer(&self, f: &Function, p: Value) -> Value {
        let r = address_root(f, p).0;
        self.root.get(&r).copied().unwrap_or(p)
    }

    /// The global, `alloc` or parameter of the function that `p` points into,
    /// when [`address_root`] or the root of the block parameter it stops at
    /// finds one.
    pub fn object(&self, f: &Function, p: Value) -> Option<Value> {
        let r = address_root(f, self.object_pointer(f, p)).0;
        is_object(f, r).then_some(r)
    }
}

/// Whether `v` is an object's own pointer: a global, a parameter of the function,
/// or an `alloc`.
pub(crate) fn is_object(f: &Function, v: Value) -> bool {
    match f.value_def(v) {
        ValueDef::Global(_) => true,
        ValueDef::Param(b, _) => b == f.entry_block(),
        ValueDef::Inst(i) => matches!(f.kind(i), InstKind::Alloc { .. }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `%4` walks `@a` (from `gep @a` and its own step); `%5` merges `@a` and `@b`
    /// and has no root; `%6` takes `%4` or `@a`: `@a`; `%7` takes only the
    /// function's parameter `%0`, its root.
    #[test]
    fn parameters_take_the_root_their_arguments_agree_on() {
        let src = r#"
global @a: [i32; 10] = zeroinit
global @b: [i32; 10] = zeroinit

func @f(ptr, i32) -> i32 {
bb0(%0: ptr, %1: i32):
  %2 = gep @a, 1, 4
  %3 = slt %1, 3
  br %3, bb1(%2, %2), bb2(%0)
bb1(%4: ptr, %5: ptr):
  %8 = gep %4, 1, 4
  %9 = load i32, %8
  %10 = slt %9, 5
  br %10, bb1(%8, @b), bb3(%4)
bb2(%7: ptr):
  jump bb3(@a)
bb3(%6: ptr):
  %11 = load i32, %6
  ret %11
}
"#;
        let m = ir::parse_module(src).unwrap();
        let f = &m.funcs.values().next().unwrap();
        let roots = PointerRoots::compute(f);
        let blocks: Vec<_> = f.layout.blocks().collect();
        let param = |b: usize, k: usize| f.block_params(blocks[b])[k];
        let first = |b: usize| {
            let i = f.layout.first_inst(blocks[b]).unwrap();
            f.inst_result(i).unwrap()
        };
        let a = address_root(f, first(0)).0;
        assert!(matches!(f.value_def(a), ValueDef::Global(_)));
        assert_eq!(roots.object_pointer(f, param(1, 0)), a);
        assert_eq!(roots.object_pointer(f, first(1)), a, "through the gep");
        assert_eq!(
            roots.object_pointer(f, param(1, 1)),
            param(1, 1),
            "@a and @b"
        );
        assert_eq!(roots.object_pointer(f, param(3, 0)), a, "%4 and @a");
        assert_eq!(
            roots.object_pointer(f, param(2, 0)),
            f.block_params(blocks[0])[0]
        );
        // The objects: the global, the function's parameter, none for the mix.
        assert_eq!(roots.object(f, first(1)), Some(a));
        assert_eq!(
            roots.object(f, param(2, 0)),
            Some(f.block_params(blocks[0])[0])
        );
        assert_eq!(roots.object(f, param(1, 1)), None);
        assert_eq!(roots.object(f, first(3)), None, "a loaded value");
    }
}
