//! Which array elements [`super::promote`] may keep in a register across a loop:
//! an element at a loop-invariant address that the loop stores to, such as
//! `c[i][j]` in `while (k < n) { c[i][j] = c[i][j] + a[i][k] * b[k][j]; k++; }`.
//!
//! This is LLVM's scalar promotion in LICM (`promoteLoopAccessesToScalars`) and
//! GCC's store motion (`tree-ssa-loop-im`), after Lu and Cooper, "Register
//! Promotion in C Programs" (PLDI 1997). An address `p` qualifies for a loop when
//!
//! - `p` is defined outside the loop, and inside it is used only as the address
//!   of loads and stores, all of one type (`i32` or `f32`), at least one a store;
//! - every other load or store of the loop (inner loops' included) cannot
//!   overlap `p` ([`may_overlap`]: another object, or disjoint constant offsets
//!   in the same one; a pointer walking an array is followed to the array,
//!   [`PointerRoots`]), and no call in the loop touches memory (it may print);
//! - some access to `p` is in a block that dominates every way out of the loop
//!   (each exiting block and each return in it), so whenever the loop runs, the
//!   original program accesses `p`: the load before the loop and the stores on
//!   its exits touch memory the program touches anyway. Storing on an exit what
//!   the loop left in the register writes either the loop's last store or the
//!   value loaded before the loop, which `p` still holds.
//!
//! A one-element `alloc` is left to `mem2reg`, and so is the slot a promotion
//! itself makes.

use crate::analysis::pointer_roots::is_object;
use crate::analysis::{
    address_root, pointer_base, LoopForest, LoopId, PointerBase, PointerRoots, Purity,
};
use crate::passes::loops::licm::may_overlap;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Function, InstKind, Type, Value, ValueDef};

/// Loops larger than this many instructions (inner loops' included) are not
/// scanned for elements: the scan of a loop is linear in its size and is made
/// for every loop of a nest, so without a bound a deep nest costs the square of
/// its size (a budget as LLVM's LICM caps its alias sets).
const MAX_LOOP_INSTS: usize = 2000;
/// Loops with more loads and stores than this are not scanned: every store is
/// tested against every access.
const MAX_ACCESSES: usize = 256;

/// Which loops [`element_candidate`] need look at, counted once per function
/// (each block visited once, [`LoopForest::sum_over_blocks`]): a loop qualifies
/// only if it stores, calls nothing that touches memory, and stays within the
/// budget above.
pub(super) struct ElementBudget {
    stores: Vec<usize>,
    accesses: Vec<usize>,
    memory_calls: Vec<usize>,
    insts: Vec<usize>,
}

impl ElementBudget {
    pub(super) fn new(f: &Function, loops: &LoopForest, purity: &Purity) -> Self {
        let count = |pred: &dyn Fn(&InstKind) -> bool| {
            loops.sum_over_blocks(f, |b| {
                f.layout.block_insts(b).filter(|&i| pred(f.kind(i))).count()
            })
        };
        ElementBudget {
            stores: count(&|k| matches!(k, InstKind::Store { .. })),
            accesses: count(&|k| matches!(k, InstKind::Load { .. } | InstKind::Store { .. })),
            memory_calls: count(&|k| match *k {
                InstKind::Call { callee, .. } => touches_memory(purity, callee),
                _ => false,
            }),
            insts: count(&|_| true),
        }
    }

    /// Whether loop `id` may have an element to promote and is small enough to
    /// look for it.
    pub(super) fn worth_scanning(&self, id: LoopId) -> bool {
        let l = id.0 as usize;
        self.stores[l] > 0
            && self.memory_calls[l] == 0
            && self.accesses[l] <= MAX_ACCESSES
            && self.insts[l] <= MAX_LOOP_INSTS
    }
}

/// Whether a call to `callee` may read or write memory the loop accesses.
fn touches_memory(purity: &Purity, callee: ir::FuncId) -> bool {
    let e = purity.effects(callee);
    e.reads_global || e.writes_global || e.reads_args || e.writes_args
}

/// The first address of loop `id` that qualifies (in the order its stores
/// appear), if any.
pub(super) fn element_candidate(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    loops: &LoopForest,
    id: LoopId,
    purity: &Purity,
    roots: &PointerRoots,
) -> Option<Value> {
    let lp = loops.get(id);
    let mut accesses: Vec<(Value, Type, bool)> = Vec::new();
    for &b in &lp.blocks {
        for i in f.layout.block_insts(b) {
            match *f.kind(i) {
                InstKind::Call { callee, .. } if touches_memory(purity, callee) => return None,
                InstKind::Load { ty, ptr } => accesses.push((ptr, ty, false)),
                InstKind::Store { value, ptr } => {
                    accesses.push((ptr, f.value_type(value), true));
                }
                _ => {}
            }
        }
    }
    // The ways out: exiting blocks and returns.
    let exits: Vec<ir::Block> = lp
        .blocks
        .iter()
        .copied()
        .filter(|&b| {
            f.successors(b).is_empty() || cfg.succs(b).iter().any(|&s| !loops.contains(id, s))
        })
        .collect();
    let mut tried: Vec<Value> = Vec::new();
    for &(p, ty, store) in &accesses {
        if !store || tried.contains(&p) {
            continue;
        }
        tried.push(p);
        if !matches!(ty, Type::I32 | Type::F32) || !outside(f, loops, id, p) || scalar_slot(f, p) {
            continue;
        }
        let same_type = accesses.iter().all(|&(q, t, _)| q != p || t == ty);
        let apart = accesses
            .iter()
            .all(|&(q, t, _)| q == p || !overlap(f, roots, p, ty, q, t));
        if same_type
            && apart
            && only_accessed(f, &lp.blocks, p)
            && guaranteed(f, dt, &lp.blocks, &exits, p)
        {
            return Some(p);
        }
    }
    None
}

/// Whether a `ta` access at `p` and a `tb` access at `q` may overlap. When both
/// addresses are offsets from an object (a global, an `alloc`, a parameter of
/// the function), [`may_overlap`] compares objects and constant offsets; a
/// pointer that a block parameter carries has no known offset, and overlaps
/// anything in its object, which [`PointerRoots`] finds when it walks one array.
fn overlap(f: &Function, roots: &PointerRoots, p: Value, ta: Type, q: Value, tb: Type) -> bool {
    if is_object(f, address_root(f, p).0) && is_object(f, address_root(f, q).0) {
        may_overlap(f, p, ta, q, tb)
    } else {
        !distinct_objects(f, roots, p, q)
    }
}

/// Whether `p` and `q` point into two different objects: two globals, two
/// `alloc`s, or an `alloc` and a global or a parameter of the function (which
/// never points into this call's frame). Offsets do not matter here.
fn distinct_objects(f: &Function, roots: &PointerRoots, p: Value, q: Value) -> bool {
    // The object's kind, and its address (which global).
    let object = |v: Value| {
        let o = roots.object_pointer(f, v);
        (pointer_base(f, o), address_root(f, o).0)
    };
    match (object(p), object(q)) {
        ((PointerBase::Local(a), _), (PointerBase::Local(b), _)) => a != b,
        ((PointerBase::Local(_), _), (other, _)) | ((other, _), (PointerBase::Local(_), _)) => {
            other != PointerBase::Unknown
        }
        ((PointerBase::Global, g), (PointerBase::Global, h)) => g != h,
        _ => false,
    }
}

/// Whether `p` is defined outside loop `id` (a constant, global or function
/// parameter, or a value of a block outside it).
fn outside(f: &Function, loops: &LoopForest, id: LoopId, p: Value) -> bool {
    f.value_block(p).is_none_or(|b| !loops.contains(id, b))
}

/// Whether `p` is a one-element `alloc`: `mem2reg`'s business.
fn scalar_slot(f: &Function, p: Value) -> bool {
    matches!(f.value_def(p), ValueDef::Inst(i) if matches!(f.kind(i), InstKind::Alloc { len: 1, .. }))
}

/// Whether every use of `p` in `blocks` is as the address of a load or store.
fn only_accessed(f: &Function, blocks: &[ir::Block], p: Value) -> bool {
    blocks.iter().all(|&b| {
        f.layout.block_insts(b).all(|i| match *f.kind(i) {
            InstKind::Load { ptr, .. } => ptr == p || !f.kind(i).args().contains(&p),
            InstKind::Store { value, .. } => value != p,
            ref k => !k.args().contains(&p),
        })
    })
}

/// Whether an access to `p` is in a block dominating every way out of the loop.
fn guaranteed(
    f: &Function,
    dt: &DominatorTree,
    blocks: &[ir::Block],
    exits: &[ir::Block],
    p: Value,
) -> bool {
    blocks.iter().any(|&b| {
        exits.iter().all(|&e| dt.dominates(b, e))
            && f.layout.block_insts(b).any(|i| {
                matches!(*f.kind(i), InstKind::Load { ptr, .. } | InstKind::Store { ptr, .. } if ptr == p)
            })
    })
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// `c[j] = c[j] + a[k]` for `k` below `n`, with `a` walked by a pointer and
    /// `c[j]` printed after the loop (`n` and `j` read from the input).
    const ROW_SUM: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
global @c: [i32; 8] = [1, 2, 3, 4, 5, 6, 7, 8]
global @a: [i32; 8] = [5, 9, 14, 2, 30, 7, 11, 4]

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = gep @c, %1, 4
  %3 = slt 0, %0
  br %3, bb5, bb4
bb5:
  jump bb1(0, @a)
bb1(%4: i32, %5: ptr):
  %6 = load i32, %2
  %7 = load i32, %5
  %8 = add %6, %7
  store %8, %2
  %9 = gep %5, 1, 4
  %10 = add %4, 1
  %11 = slt %10, %0
  br %11, bb1(%10, %9), bb4
bb4:
  %12 = load i32, %2
  call @putint(%12)
  %13 = gep @c, 3, 4
  %14 = load i32, %13
  call @putint(%14)
  ret 0
}
"#;

    /// The block of `out` whose parameters' text contains `marker`, up to the
    /// next block (the pass renumbers blocks).
    fn block_with<'a>(out: &'a str, marker: &str) -> &'a str {
        let start = out
            .find(marker)
            .and_then(|i| out[..i].rfind("\nbb"))
            .unwrap();
        let end = out[start + 1..]
            .find("\nbb")
            .map_or(out.len(), |e| start + 1 + e);
        &out[start..end]
    }

    /// The loop's block: the one with the walking pointer as a parameter.
    fn loop_body(out: &str) -> &str {
        block_with(out, ": ptr")
    }

    #[test]
    fn an_element_the_loop_updates_lives_in_a_register() {
        for input in ["0 3", "1 3", "8 3", "5 0"] {
            let out = same_behaviour(ROW_SUM, &["promote"], input);
            let body = loop_body(&out);
            assert!(!body.contains("store"), "{out}");
            assert_eq!(body.matches("load").count(), 1, "only a's load: {out}");
        }
    }

    /// Not promoted: a store to `c[k]` in the loop may write `c[j]`.
    #[test]
    fn a_store_that_may_overlap_keeps_the_element_in_memory() {
        let src = ROW_SUM.replace(
            "  %9 = gep %5, 1, 4\n",
            "  %9 = gep %5, 1, 4\n  %20 = gep @c, %4, 4\n  store %7, %20\n",
        );
        let out = same_behaviour(&src, &["promote"], "8 3");
        assert_eq!(loop_body(&out).matches("store").count(), 2, "{out}");
        assert!(!out.contains("alloc"), "{out}");
    }

    /// Not promoted: the update runs on some iterations only (no access to
    /// `c[j]` is guaranteed once the loop runs), or a call in the loop reads
    /// globals.
    #[test]
    fn conditional_updates_and_calls_that_read_memory_keep_it_in_memory() {
        let conditional = ROW_SUM
            .replace(
                "  %6 = load i32, %2\n  %7 = load i32, %5\n  %8 = add %6, %7\n  store %8, %2\n",
                "  %7 = load i32, %5\n  %21 = slt %7, 10\n  br %21, bb2, bb3\nbb2:\n  %6 = load i32, %2\n  %8 = add %6, %7\n  store %8, %2\n  jump bb3\nbb3:\n",
            );
        assert!(conditional.contains("bb3:"));
        for input in ["0 3", "8 3"] {
            let out = same_behaviour(&conditional, &["promote"], input);
            assert!(!out.contains("alloc"), "{out}");
        }
        let reader = ROW_SUM
            .replace("  %9 = gep %5, 1, 4\n", "  %9 = gep %5, 1, 4\n  call @show()\n")
            .replace(
                "func @main()",
                "func @show() -> void {\nbb0:\n  %0 = gep @c, 3, 4\n  %1 = load i32, %0\n  call @putint(%1)\n  ret\n}\n\nfunc @main()",
            );
        let out = same_behaviour(&reader, &["promote"], "8 3");
        assert!(!out.contains("alloc"), "{out}");
    }

    /// Not promoted: the loop also reads the local array through a pointer that
    /// walks it, which reaches `c[j]` at `k == j` (the pointer has no known
    /// offset; its object is the element's).
    #[test]
    fn a_pointer_walking_the_same_local_array_keeps_the_element_in_memory() {
        let inits: String = (0..8)
            .map(|k| {
                format!(
                    "  %{} = gep %2, {k}, 4\n  store {}, %{}\n",
                    40 + k,
                    3 * k + 1,
                    40 + k
                )
            })
            .collect();
        let src = format!(
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = alloc [i32; 8]
{inits}  %3 = gep %2, %1, 4
  %4 = slt 0, %0
  br %4, bb5, bb4
bb5:
  jump bb1(0, %2)
bb1(%5: i32, %6: ptr):
  %7 = load i32, %3
  %8 = load i32, %6
  %9 = add %7, %8
  store %9, %3
  %10 = gep %6, 1, 4
  %11 = add %5, 1
  %12 = slt %11, %0
  br %12, bb1(%11, %10), bb4
bb4:
  %13 = load i32, %3
  call @putint(%13)
  ret 0
}}
"#
        );
        for input in ["8 3", "2 5", "0 1"] {
            let out = same_behaviour(&src, &["promote"], input);
            assert!(loop_body(&out).contains("store"), "{out}");
        }
    }

    /// `t[1][1] = t[x][2] + 1` of a `float t[3][3]` on every iteration, with
    /// `x` read from the input: the loads at `8 + 12x` bytes never reach the
    /// element at 16 (the GCD test: 16 - 8 is not a multiple of 12 within an
    /// element's size), so `t[1][1]` is promoted; with `t[x][1]` (at `4 + 12x`,
    /// which is 16 for `x = 1`) it is not.
    const COLUMN: &str = r#"
declare @getint() -> i32
declare @putfloat(f32) -> void
global @t: [f32; 9] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = gep @t, 4, 4
  %3 = gep @t, %1, 12
  %4 = gep %3, COL, 4
  %5 = slt 0, %0
  br %5, bb5, bb4
bb5:
  jump bb1(0)
bb1(%6: i32):
  %7 = load f32, %4
  %8 = fadd %7, 1.0
  store %8, %2
  %9 = add %6, 1
  %10 = slt %9, %0
  br %10, bb1(%9), bb4
bb4:
  %11 = load f32, %2
  call @putfloat(%11)
  ret 0
}
"#;

    /// The loop's block: the one with the counter as a parameter.
    fn header(out: &str) -> &str {
        block_with(out, ": i32)")
    }

    #[test]
    fn a_column_the_loop_reads_leaves_another_column_promotable() {
        let src = COLUMN.replace("COL", "2");
        for input in ["3 0", "3 1", "3 2", "0 1"] {
            let out = same_behaviour(&src, &["promote"], input);
            assert!(!header(&out).contains("store"), "{out}");
        }
    }

    #[test]
    fn the_column_of_the_element_keeps_it_in_memory() {
        let src = COLUMN.replace("COL", "1");
        for input in ["3 1", "3 0"] {
            let out = same_behaviour(&src, &["promote"], input);
            assert!(header(&out).contains("store"), "{out}");
        }
        // A whole row (stride 4 into the flat array) may reach it too.
        let flat = COLUMN
            .replace("%3 = gep @t, %1, 12", "%3 = gep @t, %1, 4")
            .replace("COL", "0");
        let out = same_behaviour(&flat, &["promote"], "3 4");
        assert!(header(&out).contains("store"), "{out}");
    }
}
