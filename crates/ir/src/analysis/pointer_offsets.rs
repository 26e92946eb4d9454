//! Pointer offsets: each address written as a *base* (an anchor value plus a few
//! integer values times constants) plus a constant number of bytes, for the back
//! end's dependence tests between accesses that alias regions cannot tell apart
//! (two rows of one array).
//!
//! This is the linear part of scalar evolution as LLVM's alias analysis uses it
//! (`BasicAA`'s decomposition of GEPs into a base, variable indices times scales
//! and a constant offset; SCEV's recurrences `{start,+,step}`): `gep b, i + c, s`
//! is `b`'s form plus `s * i` plus `s * c` bytes. Parameters of one block get
//! forms of their own when every edge into the block agrees:
//! - `p_j = p_i + d`, two pointers stepping in lockstep (the rows `&x[i-1][j]`,
//!   `&x[i][j]`, `&x[i+1][j]` of a loop over `j`);
//! - `p = b + s * q`, a pointer stepping `s` bytes per step of an integer
//!   parameter `q` (a row pointer and the row's index).
//!
//! These relations are found optimistically (as SCCP finds constants): the ones
//! the forward edges (from blocks earlier in reverse post-order) and the steps of
//! the other edges suggest are assumed, every value is decomposed under them, and
//! each is checked on every edge into its block; a refuted one is dropped and the
//! decomposition made anew. What survives holds on every edge given that it held
//! before, so by induction on the execution it holds at every entry to the block.
//!
//! What the forms tell: two accesses in one execution of one block whose
//! addresses have the same base see the same instance of every value in it (in
//! SSA an address computed from an earlier instance would not be dominated by
//! its definition where it is used), so their addresses differ by the difference
//! of their constants, up to a multiple of 2^32: integer arithmetic wraps, and an
//! index or a counter that wrapped moves the true address by a multiple of 2^32
//! times its scale. Both accesses fall in the object their base points into (an
//! access outside its object is undefined in SysY, as [`super::AliasRegions`]
//! assumes), and no object exceeds 2^31 bytes (the front end caps arrays at 2^29
//! elements), so the true difference is below 2^31 and, when the constants differ
//! by less than 2^31, equal to theirs. Code copied into another
//! block (tail duplication) may run with the next instance, so copies must drop
//! the fact.

use super::ControlFlowGraph;
use crate::{BinOp, Block, Function, Inst, InstKind, SecondaryMap, Type, Value, ValueDef};
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

/// Rounds of refutation before all parameter relations are given up.
const MAX_ROUNDS: usize = 4;
/// Most integer values in one base.
const MAX_TERMS: usize = 3;
/// Additions of constants followed back from an integer.
const MAX_STEP_CHAIN: usize = 8;

/// Integer values times constants, sorted by value, no zero coefficient.
type Terms = SmallVec<[(Value, i64); 2]>;

/// The variable part of an address: an anchor value plus integer values times
/// constants (in bytes).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Base {
    pub anchor: Value,
    pub terms: Terms,
}

/// An address as a base plus a constant number of bytes.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Offset {
    pub base: Base,
    pub bytes: i64,
}

impl Offset {
    fn own(v: Value) -> Offset {
        Offset {
            base: Base {
                anchor: v,
                terms: Terms::new(),
            },
            bytes: 0,
        }
    }

    /// `self + k * lin`, if the result has at most [`MAX_TERMS`] terms and no
    /// constant overflows.
    fn plus(&self, k: i64, lin: &Linear) -> Option<Offset> {
        let mut terms = self.base.terms.clone();
        for &(v, c) in &lin.terms {
            let add = c.checked_mul(k)?;
            match terms.iter().position(|&(w, _)| w == v) {
                Some(x) => {
                    terms[x].1 = terms[x].1.checked_add(add)?;
                    if terms[x].1 == 0 {
                        terms.remove(x);
                    }
                }
                None => {
                    let at = terms.partition_point(|&(w, _)| w < v);
                    terms.insert(at, (v, add));
                }
            }
        }
        (terms.len() <= MAX_TERMS).then_some(())?;
        Some(Offset {
            base: Base {
                anchor: self.base.anchor,
                terms,
            },
            bytes: self.bytes.checked_add(lin.constant.checked_mul(k)?)?,
        })
    }
}

/// An integer as values times constants plus a constant.
#[derive(Clone, Debug, Default)]
struct Linear {
    terms: Terms,
    constant: i64,
}

/// `v` through additions of constants: `(root, c)` with `v = root + c`
/// (wrapping), or `(None, c)` for a constant.
fn linear(f: &Function, v: Value) -> Linear {
    let mut constant = 0i64;
    let mut v = v;
    for _ in 0..MAX_STEP_CHAIN {
        if let Some(c) = f.as_iconst(v) {
            return Linear {
                terms: Terms::new(),
                constant: constant + i64::from(c),
            };
        }
        let ValueDef::Inst(i) = f.value_def(v) else {
            break;
        };
        let InstKind::Binary {
            op: op @ (BinOp::Add | BinOp::Sub),
            args: [a, b],
        } = *f.kind(i)
        else {
            break;
        };
        let (y, c) = match (f.as_iconst(a), f.as_iconst(b)) {
            (_, Some(c)) if op == BinOp::Sub => (a, -i64::from(c)),
            (_, Some(c)) => (a, i64::from(c)),
            (Some(c), None) if op == BinOp::Add => (b, i64::from(c)),
            _ => break,
        };
        constant += c;
        v = y;
    }
    Linear {
        terms: smallvec::smallvec![(v, 1)],
        constant,
    }
}

/// The form of every pointer of a function.
#[derive(Clone, Debug, Default)]
pub struct PointerOffsets {
    of: SecondaryMap<Value, Option<Offset>>,
}

impl PointerOffsets {
    /// The forms of `f`'s pointers.
    pub fn compute(f: &Function) -> PointerOffsets {
        if f.is_declaration() {
            return PointerOffsets::default();
        }
        PointerOffsets::compute_with(f, &ControlFlowGraph::compute(f))
    }

    /// [`PointerOffsets::compute`] given `f`'s CFG.
    pub fn compute_with(f: &Function, cfg: &ControlFlowGraph) -> PointerOffsets {
        let mut order: SecondaryMap<Block, u32> = SecondaryMap::with_default(u32::MAX);
        for (k, &b) in cfg.rpo().iter().enumerate() {
            order[b] = k as u32;
        }
        let ctx = Ctx { f, cfg, order };
        let mut refuted: FxHashSet<Value> = FxHashSet::default();
        for _ in 0..MAX_ROUNDS {
            let (offsets, relations) = ctx.decompose(&refuted);
            let wrong = ctx.refutations(&offsets, &relations);
            if wrong.is_empty() {
                return offsets;
            }
            refuted.extend(wrong);
        }
        // Give every relation up: the plain decomposition needs no assumption.
        let all: FxHashSet<Value> = f
            .layout
            .blocks()
            .flat_map(|b| f.block_params(b).iter().copied())
            .collect();
        ctx.decompose(&all).0
    }

    /// `v` as a base plus an offset (`v` itself plus 0 when nothing better is
    /// known).
    pub fn of(&self, v: Value) -> Offset {
        self.of[v].clone().unwrap_or_else(|| Offset::own(v))
    }

    /// The address of load or store `i` of `f` as a base plus an offset.
    pub fn access(&self, f: &Function, i: Inst) -> Option<Offset> {
        match *f.kind(i) {
            InstKind::Load { ptr, .. } | InstKind::Store { ptr, .. } => Some(self.of(ptr)),
            _ => None,
        }
    }
}

/// An assumed form of a block parameter.
#[derive(Clone, Debug)]
enum Relation {
    /// `p = rep + d`, `rep` a pointer parameter of the same block related to
    /// nothing itself.
    Lockstep { rep: Value, d: i64 },
    /// `p = start + step * q`, `q` an integer parameter of the same block.
    Counted { start: Offset, step: i64, q: Value },
}

type Relations = FxHashMap<Value, Relation>;

struct Ctx<'a> {
    f: &'a Function,
    cfg: &'a ControlFlowGraph,
    order: SecondaryMap<Block, u32>,
}

impl Ctx<'_> {
    /// The arguments each edge into `b` passes, with whether the edge is forward
    /// (from a block earlier in reverse post-order).
    fn incoming(&self, b: Block) -> Vec<(bool, &[Value])> {
        let f = self.f;
        let mut preds = self.cfg.preds(b).to_vec();
        preds.sort_unstable();
        preds.dedup();
        let mut edges = Vec::new();
        for p in preds {
            let forward = self.order[p] < self.order[b];
            let Some(t) = f.terminator(p) else { continue };
            for call in f.kind(t).targets() {
                if call.block == b {
                    edges.push((forward, &call.args[..]));
                }
            }
        }
        edges
    }

    /// Decomposes every pointer in reverse post-order, assuming the relations
    /// between parameters that the edges suggest (except `refuted` ones).
    fn decompose(&self, refuted: &FxHashSet<Value>) -> (PointerOffsets, Relations) {
        let f = self.f;
        let mut offsets = PointerOffsets { of: f.value_map() };
        let mut relations = Relations::default();
        for &b in self.cfg.rpo() {
            self.relate_params(b, refuted, &offsets, &mut relations);
            for &p in f.block_params(b) {
                let form = match relations.get(&p) {
                    Some(Relation::Lockstep { rep, d }) => Offset::own(*rep).plus(
                        1,
                        &Linear {
                            terms: Terms::new(),
                            constant: *d,
                        },
                    ),
                    Some(Relation::Counted { start, step, q }) => start.plus(
                        *step,
                        &Linear {
                            terms: smallvec::smallvec![(*q, 1)],
                            constant: 0,
                        },
                    ),
                    None => None,
                };
                offsets.of[p] = form;
            }
            for i in f.layout.block_insts(b) {
                if let InstKind::Gep {
                    base,
                    index,
                    stride,
                } = *f.kind(i)
                {
                    let Some(r) = f.inst_result(i) else { continue };
                    let form = offsets.of(base).plus(i64::from(stride), &linear(f, index));
                    offsets.of[r] = form;
                }
            }
        }
        (offsets, relations)
    }

    /// Assumes relations for the parameters of `b` that the edges suggest.
    fn relate_params(
        &self,
        b: Block,
        refuted: &FxHashSet<Value>,
        offsets: &PointerOffsets,
        relations: &mut Relations,
    ) {
        let f = self.f;
        let params = f.block_params(b);
        if !params.iter().any(|&p| f.value_type(p) == Type::Ptr) {
            return;
        }
        let edges = self.incoming(b);
        let forward: Vec<&[Value]> = edges.iter().filter(|e| e.0).map(|e| e.1).collect();
        let back: Vec<&[Value]> = edges.iter().filter(|e| !e.0).map(|e| e.1).collect();
        if forward.is_empty() {
            return;
        }
        let mut reps: Vec<usize> = Vec::new();
        for (k, &p) in params.iter().enumerate() {
            if f.value_type(p) != Type::Ptr || refuted.contains(&p) {
                continue;
            }
            let form = |args: &[Value]| offsets.of(args[k]);
            // In lockstep with an earlier pointer.
            let lockstep = reps.iter().find_map(|&y| {
                let d = delta(&offsets.of(forward[0][y]), &form(forward[0]))?;
                forward
                    .iter()
                    .all(|e| delta(&offsets.of(e[y]), &form(e)) == Some(d))
                    .then_some(Relation::Lockstep { rep: params[y], d })
            });
            let rel = lockstep.or_else(|| self.counted(params, k, &forward, &back, offsets));
            match rel {
                Some(r) => {
                    relations.insert(p, r);
                }
                None => reps.push(k),
            }
        }
    }

    /// `params[k] = start + step * q` for an integer parameter `q`: each back
    /// edge advances the pointer by `step` times what it advances `q` by, and
    /// each forward edge passes `start + step * c` with `q`'s argument `c`
    /// constant.
    fn counted(
        &self,
        params: &[Value],
        k: usize,
        forward: &[&[Value]],
        back: &[&[Value]],
        offsets: &PointerOffsets,
    ) -> Option<Relation> {
        let f = self.f;
        let p = params[k];
        if back.is_empty() {
            return None;
        }
        let pointer_steps: Vec<i64> = back
            .iter()
            .map(|e| self.pointer_step(e[k], p))
            .collect::<Option<_>>()?;
        params.iter().enumerate().find_map(|(x, &q)| {
            if f.value_type(q) != Type::I32 {
                return None;
            }
            let mut step = None;
            for (e, &dp) in back.iter().zip(&pointer_steps) {
                let lin = linear(f, e[x]);
                if lin.terms.as_slice() != [(q, 1)] || lin.constant == 0 {
                    return None;
                }
                if dp % lin.constant != 0 {
                    return None;
                }
                let s = dp / lin.constant;
                if *step.get_or_insert(s) != s {
                    return None;
                }
            }
            let step = step?;
            let mut start: Option<Offset> = None;
            for e in forward {
                // The counter may enter as any value: `p = start + step * q` holds
                // on entry with `start = p0 - step * q0`.
                let s = offsets.of(e[k]).plus(-step, &linear(f, e[x]))?;
                if *start.get_or_insert_with(|| s.clone()) != s {
                    return None;
                }
            }
            Some(Relation::Counted {
                start: start?,
                step,
                q,
            })
        })
    }

    /// How many bytes `arg` lies past `p`, following constant `gep`s back to it.
    fn pointer_step(&self, arg: Value, p: Value) -> Option<i64> {
        match super::address_root(self.f, arg) {
            (root, Some(bytes)) if root == p => Some(bytes),
            _ => None,
        }
    }

    /// The assumed relations that some edge contradicts.
    fn refutations(&self, offsets: &PointerOffsets, relations: &Relations) -> Vec<Value> {
        let f = self.f;
        let mut wrong = Vec::new();
        for &b in self.cfg.rpo() {
            let params = f.block_params(b);
            let edges = self.incoming(b);
            for (k, &p) in params.iter().enumerate() {
                let Some(rel) = relations.get(&p) else {
                    continue;
                };
                let position = |v: Value| {
                    params
                        .iter()
                        .position(|&w| w == v)
                        .expect("a relation names a parameter of the same block")
                };
                let holds = match rel {
                    Relation::Lockstep { rep, d } => {
                        let r = position(*rep);
                        edges.iter().all(|(_, args)| {
                            delta(&offsets.of(args[r]), &offsets.of(args[k])) == Some(*d)
                        })
                    }
                    Relation::Counted { start, step, q } => {
                        let x = position(*q);
                        edges.iter().all(|(_, args)| {
                            start.plus(*step, &linear(f, args[x])) == Some(offsets.of(args[k]))
                        })
                    }
                };
                if !holds {
                    wrong.push(p);
                }
            }
        }
        wrong
    }
}

/// `b - a` in bytes when both have one base.
fn delta(a: &Offset, b: &Offset) -> Option<i64> {
    (a.base == b.base)
        .then(|| b.bytes.checked_sub(a.bytes))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(src: &str) -> (Function, PointerOffsets) {
        let m = crate::parse_module(src).expect("test IR parses");
        let f = m.funcs.values().find(|f| f.name == "main").unwrap().clone();
        let o = PointerOffsets::compute(&f);
        (f, o)
    }

    /// The addresses of `main`'s loads and stores, in order.
    fn accesses(f: &Function, o: &PointerOffsets) -> Vec<Offset> {
        f.layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b))
            .filter_map(|i| o.access(f, i))
            .collect()
    }

    /// Three row pointers of one array, each stepped by 8 bytes: one base.
    const ROWS: &str = r#"
global @x: [i32; 4000] = zeroinit

func @main() -> i32 {
bb0:
  %0 = gep @x, 0, 4
  %1 = gep @x, 100, 4
  %2 = gep @x, 200, 4
  jump bb1(%0, %1, %2, 0)
bb1(%3: ptr, %4: ptr, %5: ptr, %6: i32):
  %7 = load i32, %3
  %8 = gep %5, 1, 4
  %9 = load i32, %8
  %10 = add %7, %9
  store %10, %4
  %11 = gep %3, 2, 4
  %12 = gep %4, 2, 4
  %13 = gep %5, 2, 4
  %14 = add %6, 1
  %15 = slt %14, 50
  br %15, bb1(%11, %12, %13, %14), bb2
bb2:
  ret 0
}
"#;

    #[test]
    fn row_pointers_stepping_together_share_a_base() {
        let (f, o) = offsets(ROWS);
        let a = accesses(&f, &o);
        assert_eq!(a.len(), 3);
        assert!(a.iter().all(|x| x.base == a[0].base), "{a:?}");
        let bytes: Vec<i64> = a.iter().map(|x| x.bytes).collect();
        assert_eq!(bytes, vec![0, 804, 400]);
    }

    /// The same loop where the back edge steps one pointer by 12 bytes: not in
    /// lockstep with the others, it is counted with the loop's counter instead
    /// (`@x + 400 + 12 * %6`), in a base of its own.
    #[test]
    fn a_pointer_stepping_otherwise_is_counted_apart() {
        let src = ROWS.replace("%12 = gep %4, 2, 4", "%12 = gep %4, 3, 4");
        let (f, o) = offsets(&src);
        let a = accesses(&f, &o);
        assert_eq!(a[0].base, a[1].base);
        assert_ne!(a[2].base, a[0].base, "{a:?}");
        assert_eq!(a[2].bytes, 400);
        assert_eq!(
            a[2].base.terms.as_slice(),
            [(f.block_params(f.layout.blocks().nth(1).unwrap())[3], 12)]
        );
    }

    /// Pointers from two objects are not related, whatever their steps.
    #[test]
    fn pointers_into_different_objects_are_not_related() {
        let src = ROWS
            .replace(
                "global @x: [i32; 4000] = zeroinit",
                "global @x: [i32; 4000] = zeroinit\nglobal @y: [i32; 4000] = zeroinit",
            )
            .replace("%2 = gep @x, 200, 4", "%2 = gep @y, 200, 4");
        let (f, o) = offsets(&src);
        let a = accesses(&f, &o);
        assert_eq!(a[0].base, a[2].base);
        assert_ne!(a[1].base, a[0].base, "{a:?}");
    }

    /// `x[i-1][j]`, `x[i][j]`, `x[i+1][j]` with `x[i]` a pointer stepped with
    /// `i` and the other rows indexed by `i - 1` and `i + 1`: one base, the rows
    /// 40 bytes apart.
    const COUNTED: &str = r#"
global @x: [i32; 4000] = zeroinit

func @main() -> i32 {
bb0:
  %0 = gep @x, 10, 4
  jump bb1(%0, 1)
bb1(%1: ptr, %2: i32):
  %3 = add %2, -1
  %4 = add %2, 1
  %5 = gep @x, %3, 40
  %6 = gep @x, %4, 40
  %7 = load i32, %5
  %8 = load i32, %6
  %9 = add %7, %8
  store %9, %1
  %10 = gep %1, 1, 40
  %11 = slt %4, 50
  br %11, bb1(%10, %4), bb2
bb2:
  ret 0
}
"#;

    #[test]
    fn a_pointer_counted_with_an_index_shares_the_indexed_base() {
        let (f, o) = offsets(COUNTED);
        let a = accesses(&f, &o);
        assert_eq!(a.len(), 3);
        assert!(a.iter().all(|x| x.base == a[0].base), "{a:?}");
        let bytes: Vec<i64> = a.iter().map(|x| x.bytes).collect();
        assert_eq!(bytes, vec![-40, 40, 0]);
    }

    /// The pointer steps 40 bytes while the index steps 2: the pointer is 20
    /// bytes per unit of the index, the rows 40, so it is not in their base.
    #[test]
    fn a_pointer_counted_at_another_rate_has_another_base() {
        let src = COUNTED
            .replace("%4 = add %2, 1\n", "%4 = add %2, 2\n")
            .replace("%3 = add %2, -1", "%3 = add %2, -2");
        let (f, o) = offsets(&src);
        let a = accesses(&f, &o);
        assert_eq!(a[0].base, a[1].base);
        assert_ne!(a[2].base, a[0].base, "{a:?}");
    }

    /// The counter enters with a parameter's value, `%s`, and the pointer with
    /// `&x[%s + 1]`: the pointer is still `@x + 40 + 40 * %2`, in the rows'
    /// base (the terms of `%s` cancel).
    #[test]
    fn a_pointer_counted_from_a_variable_start_shares_the_indexed_base() {
        let src = COUNTED
            .replace(
                "func @main() -> i32 {\nbb0:",
                "func @main(i32) -> i32 {\nbb0(%12: i32):",
            )
            .replace(
                "%0 = gep @x, 10, 4",
                "%13 = add %12, 1\n  %0 = gep @x, %13, 40",
            )
            .replace("jump bb1(%0, 1)", "jump bb1(%0, %12)");
        let (f, o) = offsets(&src);
        let a = accesses(&f, &o);
        assert!(a.iter().all(|x| x.base == a[0].base), "{a:?}\n{src}");
        let bytes: Vec<i64> = a.iter().map(|x| x.bytes).collect();
        assert_eq!(bytes, vec![-40, 40, 40]);
    }
}
