//! Predictive commoning of loads: in a loop that walks memory with a pointer that
//! advances by a constant stride `s`, a load at offset `o` reads in iteration `k + 1`
//! what the load at offset `o + s` read in iteration `k`. When nothing in the loop
//! can write that memory, the value is carried to the next iteration in a block
//! parameter instead of being loaded again: a 3x3 stencil walking down a column
//! loads three new values per point instead of nine.
//!
//! Scalar replacement of array elements carried across iterations (Carr and
//! Kennedy, "Scalar replacement in the presence of conditional control flow",
//! SPE 1994; GCC's predictive commoning, `tree-predcom.c`; LLVM's
//! `LoopLoadElimination` for the store-to-load case), for loads through a pointer
//! induction variable (what strength reduction, [`crate::passes::loops::strength`], leaves):
//!
//! - The loop is rotated, leaves only through its latch, and has a header
//!   parameter `p` whose scalar evolution ([`crate::analysis::scev`], asked
//!   through the analysis manager) is `{p0,+,s}<loop>` with `s` a non-zero
//!   constant number of bytes: the latch passes `gep p, k, w`, or any chain of
//!   constant steps (`gep (gep p, 1, 4), 1, 4` of an unrolled walk).
//! - The loads considered are those whose address the scalar evolution finds a
//!   constant offset from `p`, in blocks that run on every iteration (they
//!   dominate the latch), so a load the first iteration would do may move to the
//!   preheader. A load another pointer of the loop carries (one a constant away
//!   from `p`) is left to that pointer.
//! - No store in the loop may write the object `p` walks (the global or local array
//!   its starting value points into, followed through outer loops' pointer
//!   parameters by [`PointerRoots`], or the function's pointer parameter, which a store through
//!   another parameter cannot reach when every caller passes the two different
//!   objects: [`crate::analysis::DisjointParams`]), and no call writes memory.
//! - Every pointer of the loop that qualifies carries its loads (rows of a
//!   stencil walked by one pointer each), up to [`MAX_CARRIED`] values in all:
//!   when the loads a constant from the pointer are more than the budget, those
//!   whose address is the pointer itself or constant steps from it (a pointer
//!   that PRE passes round the loop a constant from another has its own).
//!
//! For every loaded offset `o` with `o + s` also loaded, the load at `o` becomes a
//! new header parameter: the preheader loads `p0 + o` for the first iteration, and
//! the latch passes the value of offset `o + s` (itself carried, or loaded).
//!
//! When the loop does write the object, a value it stores can still be carried
//! (store-to-load forwarding across iterations, as LLVM's `LoopLoadElimination`
//! does): if every store that may write the object goes through `p` at a constant
//! offset (again a difference the scalar evolution finds) in a block every
//! iteration runs, a load at `o` whose offset no store
//! touches reads in iteration `k + 1` what the one store at `o + s` wrote in
//! iteration `k`. The latch passes that stored value (an in-place stencil
//! `x[k] = (x[k - 1] + ...) / f` keeps `x[k - 1]` in a register).

use crate::analysis::scev::ScalarEvolution;
use crate::analysis::{
    AnalysisManager, DisjointParams, FunctionAnalyses, LoopId, ParamTargets, PointerRoots,
    Preserved, Purity, RotatedLoop, Targets,
};
use crate::pipeline::Pass;
use ir::{Block, FuncId, Function, Inst, InstKind, Module, Type, Value, ValueDef};
use std::collections::BTreeMap;

/// The predictive commoning pass.
pub struct PredCom;

impl Pass for PredCom {
    fn name(&self) -> &'static str {
        "predcom"
    }
    fn description(&self) -> &'static str {
        "carry values loaded through a pointer induction variable to the next iteration"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let purity = am.purity(m);
        let targets = ParamTargets::compute(m);
        let disjoint = DisjointParams::compute(m, &targets);
        am.each_function_by_id(m, |id, f, fa| {
            let memory = Memory {
                func: id,
                targets: &targets,
                disjoint: &disjoint,
            };
            run_in(f, &purity, &memory, fa) > 0
        })
    }
}

/// At most this many values carried per loop (registers).
const MAX_CARRIED: usize = 8;

/// What is known of the objects `f`'s pointer parameters point into.
pub struct Memory<'a> {
    /// The function being transformed.
    pub func: FuncId,
    pub targets: &'a ParamTargets,
    pub disjoint: &'a DisjointParams,
}

impl Memory<'_> {
    /// Whether objects `a` and `b` (as [`PointerRoots::object`] returns them: a global, an
    /// `alloc`, or a parameter of the function) may be the same memory.
    fn may_share(&self, f: &Function, a: Value, b: Value) -> bool {
        if a == b {
            return true;
        }
        let param = |v: Value| match f.value_def(v) {
            ValueDef::Param(_, k) => Some(k as usize),
            _ => None,
        };
        match (param(a), param(b)) {
            (Some(i), Some(j)) => !self.disjoint.disjoint(self.func, i, j),
            (Some(k), None) | (None, Some(k)) => {
                let other = if param(a).is_some() { b } else { a };
                match f.value_def(other) {
                    // A parameter never points into this activation's locals.
                    ValueDef::Inst(_) => false,
                    ValueDef::Global(g) => !matches!(
                        self.targets.of(self.func).get(k),
                        Some(Targets::Known(gs)) if !gs.contains(&g)
                    ),
                    _ => true,
                }
            }
            // Two different globals or locals.
            (None, None) => false,
        }
    }
}

/// Carries loads in every qualifying loop of `f`; returns how many loads went.
pub fn run(f: &mut Function, purity: &Purity, memory: &Memory) -> usize {
    run_in(f, purity, memory, &mut FunctionAnalyses::default())
}

/// [`run`] with the analyses taken from `fa` (the plans add parameters and
/// instructions, no edge).
fn run_in(f: &mut Function, purity: &Purity, memory: &Memory, fa: &mut FunctionAnalyses) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let mut plans = Vec::new();
    {
        let mut se = fa.scev(f);
        let loops = se.loops;
        // The objects block parameters point into, found once for all loops.
        let roots = std::cell::OnceCell::new();
        for (id, lp) in loops.loops() {
            if !lp.children.is_empty() {
                continue;
            }
            plans.extend(plan(&mut se, &roots, id, purity, memory));
        }
    }
    // Each plan only adds parameters to its loop's header (after the existing
    // ones, so the pointer indices of other plans of the loop stay valid),
    // instructions to its preheader, and replaces its own loads.
    plans.into_iter().map(|p| apply(f, p)).sum()
}

struct Plan {
    l: RotatedLoop,
    /// Index of the pointer parameter among the header's.
    ptr: usize,
    stride: i64,
    /// Loads by byte offset from the pointer (one per offset, the others GVN'd).
    loads: BTreeMap<i64, (Inst, Type)>,
    /// Values the loop stores by byte offset from the pointer, every iteration,
    /// and that the load a stride below reads in the next one.
    stored: BTreeMap<i64, Value>,
}

/// The plans for loop `id`: one per pointer parameter with loads to carry, at
/// most [`MAX_CARRIED`] carried values in all.
fn plan(
    se: &mut ScalarEvolution,
    roots: &std::cell::OnceCell<PointerRoots>,
    id: LoopId,
    purity: &Purity,
    memory: &Memory,
) -> Vec<Plan> {
    let (f, cfg, loops) = (se.f, se.cfg, se.loops);
    let mut plans = Vec::new();
    let Some(l) = RotatedLoop::of(f, cfg, loops, id) else {
        return plans;
    };
    let lp = loops.get(id);
    // Only the latch leaves.
    for &b in &lp.blocks {
        if b != l.latch && cfg.succs(b).iter().any(|&s| !loops.contains(id, s)) {
            return plans;
        }
        if b != l.latch && f.successors(b).is_empty() {
            return plans;
        }
    }
    // The pointer parameters that walk by a constant stride: `(k, p, s)`.
    let walking: Vec<(usize, Value, i64)> = f
        .block_params(l.header)
        .iter()
        .enumerate()
        .filter(|&(_, &p)| f.value_type(p) == Type::Ptr)
        .filter_map(|(k, &p)| se.constant_step(p, id).map(|s| (k, p, s)))
        .collect();
    if walking.is_empty() {
        return plans;
    }
    let roots = roots.get_or_init(|| PointerRoots::compute(f));
    // What the loop writes: its stores with their objects (None: unknown).
    let mut written: Vec<(Inst, Option<Value>)> = Vec::new();
    for &b in &lp.blocks {
        for i in f.layout.block_insts(b) {
            match f.kind(i) {
                InstKind::Store { ptr, .. } => written.push((i, roots.object(f, *ptr))),
                InstKind::Call { callee, .. }
                    if purity.effects(*callee).writes_global
                        || purity.effects(*callee).writes_args =>
                {
                    return plans
                }
                _ => {}
            }
        }
    }
    let mut budget = MAX_CARRIED;
    // Loads another pointer's plan carries (two pointers a constant apart see
    // each other's loads).
    let mut claimed: Vec<Inst> = Vec::new();
    for (k, p, s) in walking {
        let Some(object) = roots.object(f, p) else {
            continue;
        };
        let writers: Vec<Inst> = written
            .iter()
            .filter(|(_, w)| w.is_none_or(|o| memory.may_share(f, o, object)))
            .map(|&(i, _)| i)
            .collect();
        if !writers.is_empty() {
            // The loop writes the object: only what it stores through `p` itself
            // can be carried.
            if let Some(plan) = forwarding_plan(se, lp, &l, k, s, &writers, budget, &claimed) {
                budget -= plan.loads.len();
                claimed.extend(plan.loads.values().map(|&(i, _)| i));
                plans.push(plan);
            }
            continue;
        }
        let found = every_iteration_loads(se, lp, l.latch, p);
        let mut loads = carriable(&found, &claimed, |_| true);
        if carried(&loads, s) > budget {
            // Over budget with the loads of the pointers a constant from `p`
            // too: those through `p` itself may fit.
            loads = carriable(&found, &claimed, |i| loads_through(f, i, p));
        }
        let carried = carried(&loads, s);
        if carried == 0 || carried > budget {
            continue;
        }
        budget -= carried;
        claimed.extend(loads.values().map(|&(i, _)| i));
        plans.push(Plan {
            l: l.clone(),
            ptr: k,
            stride: s,
            loads,
            stored: BTreeMap::new(),
        });
    }
    plans
}

/// Store-to-load forwarding across iterations (LLVM's `LoopLoadElimination`):
/// in a loop whose stores to the object `p` walks (`writers`) all go through `p`
/// at constant offsets, in blocks every iteration runs, a load at offset `o`
/// reads in iteration `k + 1` what the store at `o + s` wrote in iteration `k`
/// (`s` the stride, in bytes), provided that store is the only one that can
/// write offset `o + s` and none writes offset `o`: nothing else wrote those
/// bytes in between. The stored value is carried to the load instead.
#[allow(clippy::too_many_arguments)]
fn forwarding_plan(
    se: &mut ScalarEvolution,
    lp: &crate::analysis::Loop,
    l: &RotatedLoop,
    k: usize,
    s: i64,
    writers: &[Inst],
    budget: usize,
    claimed: &[Inst],
) -> Option<Plan> {
    let (f, dt) = (se.f, se.dt);
    let p = f.block_params(l.header)[k];
    // Offset, bytes and value of every store that may write the object.
    let mut stores: Vec<(i64, i64, Value)> = Vec::new();
    for &w in writers {
        let InstKind::Store { value, ptr } = *f.kind(w) else {
            return None;
        };
        let every_iteration = f
            .layout
            .inst_block(w)
            .is_some_and(|b| dt.dominates(b, l.latch));
        match se.constant_difference(ptr, p) {
            Some(off) if every_iteration => {
                stores.push((off, i64::from(f.value_type(value).size()), value));
            }
            _ => return None,
        }
    }
    let overlapping = |o: i64, n: i64| {
        stores
            .iter()
            .filter(move |&&(a, m, _)| a < o + n && o < a + m)
    };
    let mut loads: BTreeMap<i64, (Inst, Type)> = BTreeMap::new();
    let mut stored: BTreeMap<i64, Value> = BTreeMap::new();
    for (off, i, ty) in every_iteration_loads(se, lp, l.latch, p) {
        let n = i64::from(ty.size());
        if loads.contains_key(&off) || claimed.contains(&i) {
            continue;
        }
        let source: Vec<_> = overlapping(off + s, n).collect();
        let forwarded = match source.as_slice() {
            [&(a, m, v)] if a == off + s && m == n && f.value_type(v) == ty => v,
            _ => continue,
        };
        if overlapping(off, n).next().is_some() || loads.len() == budget {
            continue;
        }
        loads.insert(off, (i, ty));
        stored.insert(off + s, forwarded);
    }
    (!loads.is_empty()).then(|| Plan {
        l: l.clone(),
        ptr: k,
        stride: s,
        loads,
        stored,
    })
}

/// The `i32` and `f32` loads at a constant offset from `p` (a difference the
/// scalar evolution finds) in the blocks of loop `lp` that run on every
/// iteration (they dominate its `latch`), in order: offset, load, type.
fn every_iteration_loads(
    se: &mut ScalarEvolution,
    lp: &crate::analysis::Loop,
    latch: Block,
    p: Value,
) -> Vec<(i64, Inst, Type)> {
    let (f, dt) = (se.f, se.dt);
    let mut out = Vec::new();
    for &b in &lp.blocks {
        if !dt.dominates(b, latch) {
            continue;
        }
        for i in f.layout.block_insts(b) {
            let InstKind::Load { ty, ptr } = *f.kind(i) else {
                continue;
            };
            if !matches!(ty, Type::I32 | Type::F32) {
                continue;
            }
            if let Some(off) = se.constant_difference(ptr, p) {
                out.push((off, i, ty));
            }
        }
    }
    out
}

/// The loads of `found` (offset, load, type) that no other pointer claimed and
/// `keep` accepts, one per offset.
fn carriable(
    found: &[(i64, Inst, Type)],
    claimed: &[Inst],
    keep: impl Fn(Inst) -> bool,
) -> BTreeMap<i64, (Inst, Type)> {
    let mut loads = BTreeMap::new();
    for &(off, i, ty) in found {
        if !claimed.contains(&i) && keep(i) {
            loads.entry(off).or_insert((i, ty));
        }
    }
    loads
}

/// How many of `loads` the next iteration can take from this one (a load of
/// the same type a stride `s` on).
fn carried(loads: &BTreeMap<i64, (Inst, Type)>, s: i64) -> usize {
    loads
        .iter()
        .filter(|(o, (_, t))| loads.get(&(**o + s)).is_some_and(|(_, u)| u == t))
        .count()
}

/// Whether the load `i` goes through the pointer `p` itself: its address is `p`
/// or constant steps from it (`gep (gep p, 1, 4), 1, 4`). When pointers a
/// constant apart that PRE passes round the loop (`p + 4` of the previous
/// iteration's `p`) give one more loads to carry than the budget, those through
/// it alone may fit: with every load of the loop seen by each, a stencil's rows
/// walked by thirteen such pointers were all over budget and none carried
/// anything.
fn loads_through(f: &Function, i: Inst, p: Value) -> bool {
    let InstKind::Load { ptr: mut a, .. } = *f.kind(i) else {
        return false;
    };
    for _ in 0..8 {
        if a == p {
            return true;
        }
        match f.def_inst(a).map(|g| f.kind(g)) {
            Some(&InstKind::Gep { base, index, .. }) if f.as_iconst(index).is_some() => a = base,
            _ => return false,
        }
    }
    false
}

fn apply(f: &mut Function, plan: Plan) -> usize {
    let Plan {
        l,
        ptr,
        stride,
        loads,
        stored,
    } = plan;
    let init_ptr = l.init_args(f)[ptr];
    let pterm = f
        .terminator(l.preheader)
        .expect("a preheader ends in a jump");
    // A parameter for each carried offset, created first so chains can refer to
    // the next offset's parameter.
    let mut carried: BTreeMap<i64, Value> = BTreeMap::new();
    for (&o, &(_, ty)) in &loads {
        let next = o + stride;
        if stored.contains_key(&next) || loads.get(&next).is_some_and(|&(_, t)| t == ty) {
            carried.insert(o, f.append_block_param(l.header, ty));
        }
    }
    // The value of offset `o` at the end of the current iteration.
    let current = |f: &Function, o: i64| -> Value {
        match (stored.get(&o), carried.get(&o)) {
            (Some(&v), _) => v,
            (None, Some(&q)) => q,
            (None, None) => f.inst_result(loads[&o].0).expect("a load has a result"),
        }
    };
    let mut entry = f.kind(pterm).targets()[0].clone();
    let mut back = f.kind(l.branch).targets()[l.back].clone();
    for &o in carried.keys() {
        let ty = loads[&o].1;
        // First iteration: load p0 + o in the preheader.
        let offset = f.iconst(o as i32);
        let addr = f.insert_inst_before(
            pterm,
            InstKind::Gep {
                base: init_ptr,
                index: offset,
                stride: 1,
            },
            Type::Ptr,
        );
        let addr = f.inst_result(addr).expect("a gep has a result");
        let first = f.insert_inst_before(pterm, InstKind::Load { ty, ptr: addr }, ty);
        entry
            .args
            .push(f.inst_result(first).expect("a load has a result"));
        back.args.push(current(f, o + stride));
    }
    f.set_target(pterm, 0, entry);
    f.set_target(l.branch, l.back, back);
    for (&o, &q) in &carried {
        let load = loads[&o].0;
        let r = f.inst_result(load).expect("a load has a result");
        f.replace_all_uses(r, q);
        f.remove_inst(load);
    }
    carried.len()
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// Sums t[i] * t[i + 1] - t[i + 2] over a pointer walking `@t` by one element.
    const WALK: &str = r#"
global @t: [i32; 40] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4]
global @u: [i32; 40] = zeroinit

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = gep @t, 0, 4
  %2 = gep @u, 0, 4
  jump bb1(0, %1, %2, 0)
bb1(%3: i32, %4: ptr, %5: ptr, %6: i32):
  %7 = load i32, %4
  %8 = gep %4, 1, 4
  %9 = load i32, %8
  %10 = gep %4, 2, 4
  %11 = load i32, %10
  %12 = mul %7, %9
  %13 = sub %12, %11
  %14 = add %6, %13
  store %14, %5
  %15 = gep %4, 1, 4
  %16 = gep %5, 1, 4
  %17 = add %3, 1
  %18 = slt %17, %0
  br %18, bb1(%17, %15, %16, %14), bb2
bb2:
  call @putint(%14)
  ret 0
}
"#;

    #[test]
    fn loads_of_the_next_element_are_carried() {
        let out = same_behaviour(WALK, &["predcom"], "30");
        let body = &out[out.find("bb1(").unwrap()..];
        let body = &body[..body.find("bb2").unwrap()];
        // t[i] and t[i + 1] come from the previous iteration: one load remains.
        assert_eq!(body.matches("load").count(), 1, "{out}");
        for n in ["1", "2", "37"] {
            same_behaviour(WALK, &["predcom"], n);
        }
    }

    #[test]
    fn stores_into_the_walked_array_or_conditional_loads_stay() {
        // The store goes to @t itself: a carried value could be stale.
        let src = WALK.replace("%2 = gep @u, 0, 4", "%2 = gep @t, 1, 4");
        let out = same_behaviour(&src, &["predcom"], "30");
        assert_eq!(out.matches("load").count(), 3, "{out}");
        // The loads sit in a block that not every iteration runs.
        let cond = WALK
            .replace(
                "  %7 = load i32, %4\n",
                "  %20 = srem %3, 2\n  %21 = eq %20, 0\n  br %21, bb3, bb4(0, 0, 0)\nbb3:\n  %7 = load i32, %4\n",
            )
            .replace(
                "  %12 = mul %7, %9\n",
                "  jump bb4(%7, %9, %11)\nbb4(%22: i32, %23: i32, %24: i32):\n  %12 = mul %22, %23\n",
            )
            .replace("%13 = sub %12, %11", "%13 = sub %12, %24");
        let out = same_behaviour(&cond, &["predcom"], "30");
        assert_eq!(out.matches("load").count(), 3, "{out}");
    }

    /// The walk of [`WALK`] unrolled by two: the pointer advances by two steps
    /// of one element each (`gep (gep p, 1, 4), 1, 4`), and loads `t[i]`,
    /// `t[i + 2]` and `t[i + 4]`, the last through a gep of a gep. The scalar
    /// evolution finds the stride of 8 bytes and the offsets 0, 8 and 16, so two
    /// loads are carried (the latch's `gep p, k, w` match before saw no stride).
    #[test]
    fn a_pointer_advanced_by_a_chain_of_steps_carries_its_loads() {
        let src = WALK
            .replace("  %10 = gep %4, 2, 4\n", "  %10 = gep %8, 2, 4\n")
            .replace("  %8 = gep %4, 1, 4\n", "  %8 = gep %4, 2, 4\n")
            .replace(
                "  %15 = gep %4, 1, 4\n",
                "  %30 = gep %4, 1, 4\n  %15 = gep %30, 1, 4\n",
            );
        let out = same_behaviour(&src, &["predcom"], "15");
        assert_eq!(loop_loads(&out), 1, "{out}");
        for n in ["1", "2", "16"] {
            same_behaviour(&src, &["predcom"], n);
        }
    }

    /// Must not fire: a pointer that advances by an amount read at run time has
    /// no constant stride, and a load at a variable offset from it none either.
    #[test]
    fn pointers_without_a_constant_step_or_offset_carry_nothing() {
        let variable_step = WALK.replace("  %15 = gep %4, 1, 4\n", "  %15 = gep %4, %0, 4\n");
        let out = crate::passes::testutil::run(&variable_step, &["predcom"]);
        assert_eq!(loop_loads(&out), 3, "{out}");
        let variable_offset = WALK.replace("  %8 = gep %4, 1, 4\n", "  %8 = gep %4, %3, 4\n");
        let out = same_behaviour(&variable_offset, &["predcom"], "12");
        // `t[i]` and `t[i + 2]` are no stride apart, and `t[i + k]` (`%8`) no constant
        // offset: nothing is carried.
        assert_eq!(loop_loads(&out), 3, "{out}");
    }

    /// `s = s * 3 + t[i + k]` for `k` in 0..10 while `i < n`: ten loads an
    /// element apart, through `p` alone or the upper five through a second
    /// pointer `q` five elements on (passed round the loop as `p + 1 + 5`, as PRE
    /// leaves it, so the two are a constant apart and see each other's loads).
    fn ten_loads(two_pointers: bool) -> String {
        let mut loads = String::new();
        let mut acc = "%6".to_string();
        for k in 0..10 {
            let (p, o) = if two_pointers && k >= 5 {
                ("%5", k - 5)
            } else {
                ("%4", k)
            };
            loads += &format!("  %a{k} = gep {p}, {o}, 4\n  %l{k} = load i32, %a{k}\n");
            loads += &format!("  %m{k} = mul {acc}, 3\n  %s{k} = add %m{k}, %l{k}\n");
            acc = format!("%s{k}");
        }
        format!(
            r#"
global @t: [i32; 40] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4]

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = gep @t, 0, 4
  %2 = gep @t, 5, 4
  jump bb1(0, %1, %2, 0)
bb1(%3: i32, %4: ptr, %5: ptr, %6: i32):
{loads}  %15 = gep %4, 1, 4
  %16 = gep %15, 5, 4
  %17 = add %3, 1
  %18 = slt %17, %0
  br %18, bb1(%17, %15, %16, {acc}), bb2
bb2:
  call @putint({acc})
  ret 0
}}
"#
        )
    }

    /// With two pointers a constant apart, each sees the nine loads of the
    /// loop the next iteration could take from this one, more than
    /// [`super::MAX_CARRIED`]; those through each pointer itself, four and
    /// four, fit: eight values carried, two loads remain (none was carried when
    /// each pointer took every load). Must not fire through one pointer: its own
    /// nine are over budget, and the ten loads stay.
    #[test]
    fn pointers_a_constant_apart_over_budget_carry_their_own_loads() {
        let src = ten_loads(true);
        let out = same_behaviour(&src, &["predcom"], "20");
        assert_eq!(loop_loads(&out), 2, "{out}");
        let body = &out[out.find("bb1(").unwrap()..out.find("bb2").unwrap()];
        assert_eq!(
            body.matches(": i32").count(),
            2 + super::MAX_CARRIED,
            "{out}"
        );
        for n in ["1", "2", "30"] {
            same_behaviour(&src, &["predcom"], n);
        }
        let out = same_behaviour(&ten_loads(false), &["predcom"], "20");
        assert_eq!(loop_loads(&out), 10, "{out}");
    }

    /// `a[i] = (a[i - 1] + b[i]) * 3` for `i` from 1 while `i < n`: each iteration
    /// reads what the previous one stored.
    const RECURRENCE: &str = r#"
global @a: [i32; 40] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4]
global @b: [i32; 40] = [2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5, 9, 0, 4, 5, 2, 3, 5, 3]

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = gep @a, 1, 4
  %2 = gep @b, 1, 4
  jump bb1(1, %1, %2)
bb1(%3: i32, %4: ptr, %5: ptr):
  %6 = gep %4, -1, 4
  %7 = load i32, %6
  %8 = load i32, %5
  %9 = add %7, %8
  %10 = mul %9, 3
  store %10, %4
  %11 = gep %4, 1, 4
  %12 = gep %5, 1, 4
  %13 = add %3, 1
  %14 = slt %13, %0
  br %14, bb1(%13, %11, %12), bb2
bb2:
  %15 = gep @a, 3, 4
  %16 = load i32, %15
  call @putint(%16)
  call @putint(%10)
  ret 0
}
"#;

    /// The loads of the loop `bb1` (up to `bb2`).
    fn loop_loads(out: &str) -> usize {
        let body = &out[out.find("bb1(").unwrap()..];
        body[..body.find("bb2").unwrap()].matches("load").count()
    }

    #[test]
    fn a_stored_value_is_carried_to_the_next_iterations_load() {
        let out = same_behaviour(RECURRENCE, &["predcom"], "30");
        // a[i - 1] comes from the previous iteration's store: only b[i] is loaded.
        assert_eq!(loop_loads(&out), 1, "{out}");
        for n in ["0", "1", "2", "40"] {
            same_behaviour(RECURRENCE, &["predcom"], n);
        }
    }

    #[test]
    fn other_writes_to_the_stored_array_keep_the_load() {
        // A store into @a not through the walking pointer could write a[i - 1].
        let elsewhere = RECURRENCE.replace(
            "  store %10, %4\n",
            "  store %10, %4\n  %20 = gep @a, 30, 4\n  store %8, %20\n",
        );
        let out = same_behaviour(&elsewhere, &["predcom"], "30");
        assert_eq!(loop_loads(&out), 2, "{out}");
        // A store to a[i - 1] itself, after the load: the next iteration does not
        // read what the store of a[i] wrote.
        let over = RECURRENCE.replace("  store %10, %4\n", "  store %10, %4\n  store %8, %6\n");
        let out = same_behaviour(&over, &["predcom"], "30");
        assert_eq!(loop_loads(&out), 2, "{out}");
        // A second store to a[i]: the value carried would have to be the last.
        let twice = RECURRENCE.replace("  store %10, %4\n", "  store %10, %4\n  store %9, %4\n");
        let out = same_behaviour(&twice, &["predcom"], "30");
        assert_eq!(loop_loads(&out), 2, "{out}");
        // A store that not every iteration runs (only when the sum is odd).
        let cond = RECURRENCE.replace(
            "  store %10, %4\n",
            "  %21 = and %9, 1\n  br %21, bb3, bb4\nbb3:\n  store %10, %4\n  jump bb4\nbb4:\n",
        );
        let out = same_behaviour(&cond, &["predcom"], "30");
        let body = &out[out.find("bb1(").unwrap()..];
        assert_eq!(
            body[..body.find("bb2:").unwrap()].matches("load").count(),
            2,
            "{out}"
        );
    }

    /// `smooth(src, dst)` sums three neighbours of `src` into `dst` along two
    /// rows walked by two pointers. `main` calls it with `CALLS`.
    const SMOOTH: &str = r#"
global @a: [i32; 64] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4]
global @b: [i32; 64] = [2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5, 9, 0, 4, 5, 2, 3, 5, 3, 6, 0, 2, 8]

declare @putint(i32) -> void

func @smooth(ptr, ptr) -> void {
bb0(%0: ptr, %1: ptr):
  %2 = gep %0, 8, 4
  jump bb1(0, %0, %2, %1)
bb1(%3: i32, %4: ptr, %5: ptr, %6: ptr):
  %7 = load i32, %4
  %8 = gep %4, 1, 4
  %9 = load i32, %8
  %10 = load i32, %5
  %11 = gep %5, 1, 4
  %12 = load i32, %11
  %13 = add %7, %9
  %14 = add %13, %10
  %15 = add %14, %12
  store %15, %6
  %16 = gep %6, 1, 4
  %17 = add %3, 1
  %18 = slt %17, 20
  br %18, bb1(%17, %8, %11, %16), bb2
bb2:
  ret
}

func @main() -> i32 {
bb0:
CALLS
  %0 = gep @a, 5, 4
  %1 = load i32, %0
  %2 = gep @b, 7, 4
  %3 = load i32, %2
  %4 = gep @a, 30, 4
  %5 = load i32, %4
  %6 = gep @b, 25, 4
  %7 = load i32, %6
  %8 = add %1, %3
  %9 = add %8, %5
  %10 = add %9, %7
  call @putint(%10)
  ret 0
}
"#;

    /// The callers always pass two different arrays: the store through the
    /// second parameter cannot change what the first walks, and both rows carry
    /// a value (two loads of four remain).
    #[test]
    fn parameters_the_callers_keep_apart_carry_values() {
        let src = SMOOTH.replace(
            "CALLS",
            "  call @smooth(@a, @b)\n  %20 = gep @a, 30, 4\n  call @smooth(@b, %20)",
        );
        let out = same_behaviour(&src, &["predcom"], "");
        assert_eq!(loop_loads(&out), 2, "{out}");
    }

    /// One call passes two pointers into the same array: the store may write what
    /// the loop reads next, so every load stays.
    #[test]
    fn parameters_that_may_alias_carry_nothing() {
        let src = SMOOTH.replace(
            "CALLS",
            "  call @smooth(@a, @b)\n  %20 = gep @a, 1, 4\n  call @smooth(@a, %20)",
        );
        let out = same_behaviour(&src, &["predcom"], "");
        assert_eq!(loop_loads(&out), 4, "{out}");
    }
}

/// Random walks: strides, loaded offsets, where the loop stores and how far it
/// runs vary; each program runs in the interpreter before and after the pass.
#[cfg(test)]
mod random_tests {
    use crate::passes::testutil::{exec, run, XorShift};

    #[test]
    fn random_walks_keep_their_output() {
        let mut rng = XorShift(0x853c_49e6_748f_ea9b);
        let mut next = move || rng.next();
        let mut changed = 0;
        for _ in 0..300 {
            let step = [1, 1, 2, -1, -2, 3][(next() % 6) as usize];
            let n_loads = 2 + next() % 4;
            let offsets: Vec<i64> = (0..n_loads).map(|_| (next() % 7) as i64 - 3).collect();
            let target = ["@u", "@u", "@t"][(next() % 3) as usize];
            let table: Vec<String> = (0..64).map(|_| (next() % 100).to_string()).collect();
            let mut body = String::new();
            let mut acc = "%6".to_string();
            for (k, o) in offsets.iter().enumerate() {
                body += &format!("  %a{k} = gep %4, {o}, 4\n  %l{k} = load i32, %a{k}\n");
                body += &format!("  %s{k} = mul {acc}, 3\n  %t{k} = add %s{k}, %l{k}\n");
                acc = format!("%t{k}");
            }
            let src = format!(
                r#"
global @t: [i32; 64] = [{table}]
global @u: [i32; 64] = zeroinit

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = gep @t, 30, 4
  %2 = gep {target}, 28, 4
  jump bb1(0, %1, %2, 0)
bb1(%3: i32, %4: ptr, %5: ptr, %6: i32):
{body}  store {acc}, %5
  %15 = gep %4, {step}, 4
  %16 = gep %5, 1, 4
  %17 = add %3, 1
  %18 = slt %17, %0
  br %18, bb1(%17, %15, %16, {acc}), bb2
bb2:
  call @putint({acc})
  %19 = load i32, @t
  call @putint(%19)
  ret 0
}}
"#,
                table = table.join(", ")
            );
            let before = ir::parse_module(&src).unwrap();
            let out = run(&src, &["predcom"]);
            changed += usize::from(out.matches(": i32").count() > src.matches(": i32").count());
            let after = ir::parse_module(&out).unwrap();
            for n in ["1", "2", "5", "9"] {
                assert_eq!(exec(&after, n), exec(&before, n), "n = {n}\n{src}\n{out}");
            }
        }
        assert!(changed > 50, "only {changed} of 300 changed");
    }
}
