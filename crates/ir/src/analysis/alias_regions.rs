//! Alias regions: a partition of each function's loads and stores into classes
//! that never touch the same bytes, for the back end's dependence tests (the
//! information LLVM's code generator gets from alias analysis through the IR value
//! of each machine memory operand).
//!
//! Every access is traced to the object it points into (its *underlying object*, as
//! LLVM's `getUnderlyingObject`): `gep` results belong to their base, and a block
//! parameter to the arguments passed to it, so a pointer induction variable
//! `phi(gep @a 0, gep %p 4)` belongs to `@a`. The derived pointers (`gep` results
//! and parameters of blocks other than the entry) that are connected this way are
//! put in one union-find class (Tarjan's disjoint sets) and collect the roots they
//! are derived from (globals, local `alloc`s, the function's parameters, pointers
//! loaded from memory). A class names an object when all its roots are the same
//! global, `alloc` or parameter; otherwise (pointers from two objects merged, a
//! pointer loaded from memory) its object is unknown. A root is its own object.
//! (A union-find class is coarser than following each pointer's sources: a `gep`
//! of `@a` merged with `@b` by a block parameter is unknown too. That is rare, and
//! it keeps the analysis one pass over the function.)
//!
//! Two objects may overlap when they are the same, when a parameter may point into
//! a global ([`ParamTargets`]), or when two parameters are not known to be
//! disjoint ([`DisjointParams`]); a local `alloc` of this activation overlaps
//! nothing else, and two globals never do. The objects are grouped by that
//! relation (again with union-find: the groups are its transitive closure, so
//! accesses in different groups never overlap), and each group is a region,
//! numbered from 1 in the order the function first accesses it. Region 0 is the
//! accesses whose object is unknown, or a parameter that may point anywhere: they
//! may overlap every access. Since SysY accesses arrays within bounds (an
//! out-of-bounds access is undefined), an access never reaches memory outside its
//! object.

use super::{DisjointParams, ParamTargets, Targets};
use crate::{
    EntityRef, FuncId, Function, GlobalId, Inst, InstKind, Module, SecondaryMap, Type, Value,
    ValueDef,
};
use rustc_hash::FxHashMap;

/// The region of every load and store of every function (0 for other instructions).
#[derive(Clone, Debug, Default)]
pub struct AliasRegions {
    regions: SecondaryMap<FuncId, SecondaryMap<Inst, u32>>,
}

impl AliasRegions {
    /// The regions of every function of `m`.
    pub fn compute(m: &Module) -> AliasRegions {
        let targets = ParamTargets::compute(m);
        let disjoint = DisjointParams::compute(m, &targets);
        let mut regions = SecondaryMap::new();
        for (id, f) in m.funcs.iter() {
            if !f.is_declaration() {
                regions[id] = function_regions(f, id, &targets, &disjoint);
            }
        }
        AliasRegions { regions }
    }

    /// The region of load or store `inst` of function `f`: accesses in two
    /// different regions other than 0 never overlap.
    pub fn region(&self, f: FuncId, inst: Inst) -> u32 {
        self.regions[f][inst]
    }
}

/// The object a pointer points into.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Object {
    Global(GlobalId),
    /// A local `alloc`, by its result.
    Local(Value),
    /// A pointer parameter, by position.
    Param(usize),
    Unknown,
}

/// Disjoint sets over dense indices, with path halving and union by index (the
/// smaller index becomes the root, which keeps results independent of the order of
/// unions).
struct DisjointSets(Vec<usize>);

impl DisjointSets {
    fn new(n: usize) -> Self {
        DisjointSets((0..n).collect())
    }
    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] != x {
            self.0[x] = self.0[self.0[x]];
            x = self.0[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.0[a.max(b)] = a.min(b);
        }
    }
}

/// The pointer operand of a load or store.
fn accessed_pointer(k: &InstKind) -> Option<Value> {
    match *k {
        InstKind::Load { ptr, .. } | InstKind::Store { ptr, .. } => Some(ptr),
        _ => None,
    }
}

/// The underlying object of every pointer value of `f`, by value index.
fn underlying_objects(f: &Function) -> Vec<Object> {
    let n = f.num_values();
    let entry = f.entry_block();
    // The object of a root pointer; `None` for a derived one.
    let root = |v: Value| -> Option<Object> {
        match f.value_def(v) {
            ValueDef::Global(g) => Some(Object::Global(g)),
            ValueDef::Param(b, k) if b == entry => Some(Object::Param(k as usize)),
            ValueDef::Param(..) => None,
            ValueDef::Inst(i) => match f.kind(i) {
                InstKind::Gep { .. } => None,
                InstKind::Alloc { .. } => Some(Object::Local(v)),
                _ => Some(Object::Unknown),
            },
            ValueDef::IConst(_) | ValueDef::FConst(_) => Some(Object::Unknown),
        }
    };
    let mut sets = DisjointSets::new(n);
    // Each derived pointer with the pointer it comes from (along one edge).
    let mut sources: Vec<(Value, Value)> = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            match f.kind(i) {
                InstKind::Gep { base, .. } => {
                    if let Some(r) = f.inst_result(i) {
                        sources.push((r, *base));
                    }
                }
                k => {
                    for call in k.targets() {
                        let params = f.block_params(call.block);
                        for (&p, &a) in params.iter().zip(&call.args) {
                            if f.value_type(p) == Type::Ptr {
                                sources.push((p, a));
                            }
                        }
                    }
                }
            }
        }
    }
    for &(v, s) in &sources {
        if root(s).is_none() {
            sets.union(v.index(), s.index());
        }
    }
    let mut object: Vec<Option<Object>> = vec![None; n];
    for &(v, s) in &sources {
        if let Some(o) = root(s) {
            let c = sets.find(v.index());
            object[c] = match object[c] {
                None => Some(o),
                Some(x) if x == o => Some(x),
                Some(_) => Some(Object::Unknown),
            };
        }
    }
    f.all_values()
        .map(|v| match root(v) {
            Some(o) => o,
            None => {
                let c = sets.find(v.index());
                object[c].unwrap_or(Object::Unknown)
            }
        })
        .collect()
}

/// The regions of the loads and stores of `f` (function `id`).
fn function_regions(
    f: &Function,
    id: FuncId,
    targets: &ParamTargets,
    disjoint: &DisjointParams,
) -> SecondaryMap<Inst, u32> {
    let objects = underlying_objects(f);
    let param_targets = targets.of(id);
    // The objects accessed, in order of first access; unknown ones and parameters
    // that may point anywhere are left out (region 0).
    let mut index: FxHashMap<Object, usize> = FxHashMap::default();
    let mut accessed: Vec<Object> = Vec::new();
    let mut access_object: Vec<(Inst, Option<usize>)> = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            let Some(p) = accessed_pointer(f.kind(i)) else {
                continue;
            };
            let o = objects[p.index()];
            let known = match o {
                Object::Unknown => false,
                Object::Param(k) => matches!(param_targets.get(k), Some(Targets::Known(_))),
                _ => true,
            };
            let slot = known.then(|| {
                *index.entry(o).or_insert_with(|| {
                    accessed.push(o);
                    accessed.len() - 1
                })
            });
            access_object.push((i, slot));
        }
    }
    // Group the objects that may overlap.
    let mut groups = DisjointSets::new(accessed.len());
    let params: Vec<(usize, usize)> = accessed
        .iter()
        .enumerate()
        .filter_map(|(x, o)| match *o {
            Object::Param(k) => Some((x, k)),
            _ => None,
        })
        .collect();
    for (a, &(x, i)) in params.iter().enumerate() {
        for &(y, j) in &params[a + 1..] {
            if !disjoint.disjoint(id, i, j) {
                groups.union(x, y);
            }
        }
        if let Some(Targets::Known(gs)) = param_targets.get(i) {
            for g in gs {
                if let Some(&y) = index.get(&Object::Global(*g)) {
                    groups.union(x, y);
                }
            }
        }
    }
    // Number the groups by first access.
    let mut number: Vec<u32> = vec![0; accessed.len()];
    let mut next = 1;
    let mut regions = SecondaryMap::new();
    for (i, slot) in access_object {
        let Some(x) = slot else { continue };
        let g = groups.find(x);
        if number[g] == 0 {
            number[g] = next;
            next += 1;
        }
        regions[i] = number[g];
    }
    regions
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The regions of the loads and stores of function `name`, in layout order.
    fn regions_of(src: &str, name: &str) -> Vec<u32> {
        let m = crate::parse_module(src).unwrap();
        let r = AliasRegions::compute(&m);
        let (id, f) = m.funcs.iter().find(|(_, f)| f.name == name).unwrap();
        let mut out = Vec::new();
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                if accessed_pointer(f.kind(i)).is_some() {
                    out.push(r.region(id, i));
                }
            }
        }
        out
    }

    #[test]
    fn pointer_induction_variables_belong_to_their_global() {
        // `@a[i] = @b[i] + @a[i]` through pointers advanced by block parameters.
        let src = r#"
global @a: [i32; 100] = zeroinit
global @b: [i32; 100] = zeroinit

func @main() -> i32 {
bb0:
  %0 = gep @a, 0, 4
  %1 = gep @b, 0, 4
  jump bb1(%0, %1, 0)
bb1(%2: ptr, %3: ptr, %4: i32):
  %5 = load i32, %3
  %6 = load i32, %2
  %7 = add %5, %6
  store %7, %2
  %8 = gep %2, 1, 4
  %9 = gep %3, 1, 4
  %10 = add %4, 1
  %11 = slt %10, 100
  br %11, bb1(%8, %9, %10), bb2
bb2:
  ret 0
}
"#;
        assert_eq!(regions_of(src, "main"), vec![1, 2, 2]);
    }

    #[test]
    fn merged_objects_and_loaded_pointers_are_unknown() {
        // A block parameter receiving @a on one edge and @b on the other may point
        // into either: region 0. The local array is a region of its own.
        let src = r#"
global @a: [i32; 10] = zeroinit
global @b: [i32; 10] = zeroinit

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 4]
  %1 = call @getint()
  br %1, bb1(@a), bb1(@b)
bb1(%2: ptr):
  store 1, %2
  store 2, %0
  %3 = load i32, @a
  ret %3
}

declare @getint() -> i32
"#;
        assert_eq!(regions_of(src, "main"), vec![0, 1, 2]);
    }

    #[test]
    fn parameters_share_a_region_with_what_they_may_point_into() {
        // `f(p, q)` is called as `f(@a, @b)` and `f(@b, @a)`: `p` and `q` are
        // disjoint, but each may be either global, so both share a region with the
        // globals; `@c` is never passed and has its own.
        let src = r#"
global @a: [i32; 10] = zeroinit
global @b: [i32; 10] = zeroinit
global @c: [i32; 10] = zeroinit

func @f(ptr, ptr) -> void {
bb0(%0: ptr, %1: ptr):
  %2 = load i32, %0
  store %2, %1
  store %2, @c
  ret
}

func @g(ptr, ptr) -> void {
bb0(%0: ptr, %1: ptr):
  %2 = load i32, %0
  store %2, %1
  store %2, @c
  ret
}

func @main() -> i32 {
bb0:
  call @f(@a, @b)
  call @f(@b, @a)
  call @g(@a, @b)
  call @g(@b, @c)
  ret 0
}
"#;
        // In @f the two parameters are disjoint and never point into @c.
        assert_eq!(regions_of(src, "f"), vec![1, 2, 3]);
        // In @g the second parameter may point into @c.
        assert_eq!(regions_of(src, "g"), vec![1, 2, 2]);
    }

    #[test]
    fn parameters_not_known_disjoint_share_a_region() {
        let src = r#"
global @a: [i32; 10] = zeroinit

func @f(ptr, ptr) -> void {
bb0(%0: ptr, %1: ptr):
  %2 = load i32, %0
  store %2, %1
  ret
}

func @main() -> i32 {
bb0:
  %0 = gep @a, 1, 4
  call @f(@a, %0)
  ret 0
}
"#;
        assert_eq!(regions_of(src, "f"), vec![1, 1]);
    }
}
