//! Loop rotation: turns a `while` loop, whose header tests the condition and then
//! enters the body, into a guarded `do-while` loop, whose test sits at the bottom.
//!
//! ```text
//!   pre:  jump h(a0)                    pre:  <h's code on a0>
//!   h(x): <code>; br c, body, exit      g:    br c0, body(a0..), exit
//!   body: ...; jump h(a1)         =>    body(x..): ...; jump h(a1)
//!                                       h(x): <code>; br c, body(x..), exit
//! ```
//!
//! The header's instructions are copied into a new guard block `g` that takes over
//! the edges entering the loop; the original header is then reached only around the
//! back edges and becomes the loop's exiting latch, and the header's in-loop
//! successor becomes the new header. Every value the header defined now has two
//! definitions (the original and the copy), so its uses outside the header are
//! rewritten with the SSA updater ([`crate::ssa::update`]), which gives the new
//! header (and the exits) the parameters that merge them.
//!
//! Why: a rotated loop runs one conditional branch per iteration instead of a branch
//! and a jump; its body is entered only when the loop runs at least once, so code
//! that runs on every iteration can be hoisted into its preheader without executing
//! it speculatively (see [`super::licm`]); and the guard's condition often folds
//! (`j = 0; while (j < 300)`). This is the transformation of LLVM's `LoopRotate`
//! (and of GCC's loop header copying, `tree-ssa-loop-ch`).
//!
//! A loop is rotated when its header ends in a conditional branch with one target
//! inside the loop and one outside, the header is not itself a latch, and the
//! header is small and free of side effects (it is duplicated). A loop whose latch
//! already leaves it (a `break` at the end of the body: `while (l < r) { r--; if
//! (a[r] < p) break; }`) is rotated only when its header is a pure test, every value
//! it computes used only to decide its own branch: the test then moves to the
//! bottom beside the latch's, so an iteration runs two conditional branches and no
//! jump, and the body gets the guard that `licm` and the induction analyses expect. LLVM rotates such
//! loops too when it deems it profitable (`profitableToRotateLoopExitingLatch`).
//! After rotation the new header does the body's work and passes it on to the latch,
//! so it is no pure test and the loop is not rotated back.

use crate::analysis::{FunctionAnalyses, LoopForest, LoopId, Preserved};
use crate::pipeline::FunctionTransform;
use crate::ssa::remove_trivial_params_with;
use crate::ssa::update::{repair_uses_in, Regions};
use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, Inst, InstKind, Type, Value};
use rustc_hash::FxHashMap;

/// The loop rotation pass.
pub struct LoopRotate;

impl FunctionTransform for LoopRotate {
    const NAME: &'static str = "looprotate";
    const DESCRIPTION: &'static str = "rotate while loops into guarded do-while loops";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        rotate_all(f, true, fa) > 0
    }
}

/// Headers with more instructions than this (besides the branch) are not copied.
const MAX_HEADER_INSTS: usize = 16;

/// Rotates every loop of `f` that qualifies; returns how many were rotated.
///
/// The analyses are computed once: loops are rotated innermost first, each
/// checked again on the current code just before its rotation, with the CFG
/// updated edge by edge ([`ControlFlowGraph::update_edges_of`]) and the guard
/// blocks created so far placed in the loop enclosing their own (a rotation
/// changes no other block's loop). Recomputing the CFG, dominators and loops
/// after each rotation made the pass quadratic in the number of loops.
pub fn run(f: &mut Function) -> usize {
    rotate_all(f, true, &mut FunctionAnalyses::default())
}

/// [`run`], with the SSA repair stepping over the loops that do not hold the
/// rotated header when `step_over_loops` (the same result, faster: see
/// [`crate::ssa::update`]) and walking through them otherwise.
/// The analyses are taken from `fa` (the CFG copied, to be updated), which
/// forgets them when a loop was rotated.
fn rotate_all(f: &mut Function, step_over_loops: bool, fa: &mut FunctionAnalyses) -> usize {
    rotate_where(f, step_over_loops, fa, |_, _, _| true)
}

/// Rotates the loops of `f` that qualify and that `wanted` picks (given the
/// function, the loop forest and the loop, before any rotation); returns how
/// many. For a pass that needs some loops rotated before `looprotate` runs
/// (see [`super::exitsink`]).
pub(crate) fn rotate_some(
    f: &mut Function,
    fa: &mut FunctionAnalyses,
    wanted: impl Fn(&Function, &LoopForest, LoopId) -> bool,
) -> usize {
    rotate_where(f, true, fa, wanted)
}

fn rotate_where(
    f: &mut Function,
    step_over_loops: bool,
    fa: &mut FunctionAnalyses,
    wanted: impl Fn(&Function, &LoopForest, LoopId) -> bool,
) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let (cfg, _, loops) = fa.loops(f);
    let wanted: Vec<LoopId> = loops
        .loops()
        .map(|(id, _)| id)
        .filter(|&id| wanted(f, loops, id))
        .collect();
    if wanted.is_empty() {
        return 0;
    }
    let mut cfg = cfg.clone();
    // Regions are stepped over only where every block is reachable (see
    // [`Regions::entry`]).
    let reachable = step_over_loops && cfg.rpo().len() == f.layout.blocks().count();
    let mut members = Membership {
        loops,
        guards: FxHashMap::default(),
        headers: FxHashMap::default(),
        regions: reachable,
    };
    let mut rotated = 0;
    for id in wanted {
        let Some((header, inside)) = candidate(f, &cfg, &members, id) else {
            continue;
        };
        let guard = rotate(f, &mut cfg, &members, id, header, inside);
        members.guards.insert(guard, loops.get(id).parent);
        members.headers.insert(id, inside);
        rotated += 1;
    }
    if rotated > 0 {
        fa.forget();
    }
    rotated
}

/// Which loops a block belongs to: the loop forest computed before any rotation,
/// and the guard blocks added since (each in the loop enclosing the loop it
/// guards), with the header of each loop rotated so far (its old header's
/// in-loop successor).
struct Membership<'a> {
    loops: &'a LoopForest,
    guards: FxHashMap<Block, Option<LoopId>>,
    headers: FxHashMap<LoopId, Block>,
    /// Whether the SSA repair may step over loops (every block is reachable).
    regions: bool,
}

impl Membership<'_> {
    fn contains(&self, l: LoopId, b: Block) -> bool {
        match self.guards.get(&b) {
            Some(&parent) => parent.is_some_and(|p| self.loops.nested_in(p, l)),
            None => self.loops.contains(l, b),
        }
    }

    fn innermost(&self, b: Block) -> Option<LoopId> {
        match self.guards.get(&b) {
            Some(&parent) => parent,
            None => self.loops.innermost(b),
        }
    }
}

/// The def-free regions while loop `rotating` is rotated: the loops around neither
/// its header nor its guard, each entered only from the one block outside it that
/// branches to its (current) header. A natural loop's other blocks have no
/// predecessor outside it, and a rotation keeps that (the guard it adds lies in
/// the enclosing loop).
struct LoopRegions<'a, 'b> {
    members: &'a Membership<'b>,
    cfg: &'a ControlFlowGraph,
    rotating: LoopId,
}

impl Regions for LoopRegions<'_, '_> {
    fn entry(&self, b: Block) -> Option<Block> {
        let m = self.members;
        if !m.regions {
            return None;
        }
        // The outermost loop around `b` not around the rotated loop.
        let mut l = m.innermost(b)?;
        if m.loops.nested_in(self.rotating, l) {
            return None;
        }
        while let Some(p) = m.loops.get(l).parent {
            if m.loops.nested_in(self.rotating, p) {
                break;
            }
            l = p;
        }
        let header = m.headers.get(&l).copied().unwrap_or(m.loops.get(l).header);
        let mut outside = self
            .cfg
            .unique_preds(header)
            .into_iter()
            .filter(|&p| !m.contains(l, p));
        let e = outside.next()?;
        outside.next().is_none().then_some(e)
    }
}

/// The header and its in-loop successor, if loop `id` can be rotated.
fn candidate(
    f: &Function,
    cfg: &ControlFlowGraph,
    members: &Membership,
    id: LoopId,
) -> Option<(Block, Block)> {
    let h = members.loops.get(id).header;
    let latches: Vec<Block> = cfg
        .unique_preds(h)
        .into_iter()
        .filter(|&p| members.contains(id, p))
        .collect();
    if latches.contains(&h) {
        return None;
    }
    let exits_loop = |b: Block| cfg.succs(b).iter().any(|&s| !members.contains(id, s));
    let latch_exits = latches.iter().any(|&l| exits_loop(l));
    let term = f.terminator(h)?;
    // Used past the header: by another block, or passed on as a block argument.
    let used_past_header = |v: Value| {
        f.users(v)
            .iter()
            .any(|&u| f.layout.inst_block(u) != Some(h))
            || f.kind(term).targets().iter().any(|c| c.args.contains(&v))
    };
    let (t, e) = f.branch_arms(h)?;
    let inside = match (members.contains(id, t), members.contains(id, e)) {
        (true, false) => t,
        (false, true) => e,
        _ => return None,
    };
    let mut n = 0;
    for i in f.layout.block_insts(h) {
        if i == term {
            break;
        }
        n += 1;
        let k = f.kind(i);
        if n > MAX_HEADER_INSTS
            || k.has_side_effects()
            || matches!(k, InstKind::Call { .. } | InstKind::Alloc { .. })
        {
            return None;
        }
        if latch_exits && f.inst_result(i).is_some_and(used_past_header) {
            return None;
        }
    }
    Some((h, inside))
}

/// Rotates loop `id`, whose header is `h`; `cfg` is kept up to date. Returns the
/// guard block.
fn rotate(
    f: &mut Function,
    cfg: &mut ControlFlowGraph,
    members: &Membership,
    id: LoopId,
    h: Block,
    _inside: Block,
) -> Block {
    // The guard: a copy of the header with its own parameters.
    let g = f.create_block();
    let before = f
        .layout
        .prev_block(h)
        .expect("a loop header is not the entry");
    f.layout.insert_block_after(g, before);
    let mut copy: FxHashMap<Value, Value> = FxHashMap::default();
    let params = f.block_params(h).to_vec();
    for &p in &params {
        let ty = f.value_type(p);
        let gp = f.append_block_param(g, ty);
        copy.insert(p, gp);
    }
    let insts: Vec<Inst> = f.layout.block_insts(h).collect();
    for &i in &insts {
        let mut kind = f.kind(i).clone();
        kind.map_args(|a| {
            if let Some(&c) = copy.get(a) {
                *a = c;
            }
        });
        let ty = f.inst_result(i).map_or(Type::Void, |r| f.value_type(r));
        let c = f.append_inst(g, kind, ty);
        f.copy_src_loc(i, c);
        if let (Some(r), Some(cr)) = (f.inst_result(i), f.inst_result(c)) {
            copy.insert(r, cr);
        }
    }
    cfg.update_edges_of(f, g);
    // Edges entering the loop now enter the guard.
    for pred in cfg.unique_preds(h) {
        if members.contains(id, pred) {
            continue; // a latch
        }
        let Some(term) = f.terminator(pred) else {
            continue;
        };
        let n = f.kind(term).targets().len();
        for which in 0..n {
            let mut t = f.kind(term).targets()[which].clone();
            if t.block == h {
                t.block = g;
                f.set_target(term, which, t);
            }
        }
        cfg.update_edges_of(f, pred);
    }
    // Every value of the header is now defined twice: repair its outside uses.
    // Inner and sibling loops define none of them: the repair steps over them.
    let regions = LoopRegions {
        members,
        cfg,
        rotating: id,
    };
    let mut created = Vec::new();
    for v in f.block_values(h) {
        let defs = [(h, v), (g, copy[&v])];
        created.extend(repair_uses_in(f, cfg, v, &defs, |b| b == h, &regions));
    }
    // Only now, with every use repaired, may parameters be simplified: removing one
    // can cascade into the header's own parameters (the header now has a single
    // predecessor, the latch).
    remove_trivial_params_with(f, cfg, &created);
    g
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    const WHILE: &str = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = slt %0, 10
  br %2, bb2, bb3(%1)
bb2:
  %3 = mul %0, 3
  %4 = add %1, %3
  %5 = sgt %4, 50
  br %5, bb3(%4), bb4
bb3(%6: i32):
  %7 = add %6, %0
  call @putint(%7)
  ret 0
bb4:
  %8 = add %0, 1
  jump bb1(%8, %4)
}
"#;

    #[test]
    fn rotates_a_while_loop_with_a_break() {
        // The guard copies the test on the initial values; the old header is the
        // latch; the body and the exit take parameters for the header's values.
        check(
            &["looprotate"],
            WHILE,
            r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = slt %0, 10
  br %2, bb3(%0, %1), bb4(%1, %0)
bb2(%3: i32, %4: i32):
  %5 = slt %3, 10
  br %5, bb3(%3, %4), bb4(%4, %3)
bb3(%6: i32, %7: i32):
  %8 = mul %6, 3
  %9 = add %7, %8
  %10 = sgt %9, 50
  br %10, bb4(%9, %6), bb5
bb4(%11: i32, %12: i32):
  %13 = add %11, %12
  call @putint(%13)
  ret 0
bb5:
  %14 = add %6, 1
  jump bb2(%14, %9)
}
"#,
        );
    }

    #[test]
    fn keeps_behaviour() {
        let out = same_behaviour(WHILE, &["looprotate", "sccp", "simplifycfg", "dce"], "");
        // The guard folds: 0 < 10.
        assert!(!out.contains("slt 0, 10"), "{out}");
    }

    #[test]
    fn leaves_rotated_loops_and_side_effects_alone() {
        // Already a do-while: the latch exits.
        let rotated = r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0)
bb1(%1: i32):
  %2 = add %1, 1
  %3 = slt %2, %0
  br %3, bb1(%2), bb2
bb2:
  ret %2
}
"#;
        check(&["looprotate"], rotated, rotated);
        // A header that calls a function is not copied.
        let calls = r#"
declare @getint() -> i32

func @f() -> i32 {
bb0:
  jump bb1(0)
bb1(%0: i32):
  %1 = call @getint()
  br %1, bb2, bb3
bb2:
  %2 = add %0, 1
  jump bb1(%2)
bb3:
  ret %0
}
"#;
        check(&["looprotate"], calls, calls);
    }

    /// `while (l < r) { r = r - 1; if (a[r] < p) break; }`, the latch leaving the
    /// loop on the `break`; `use_test` makes the body read the header's comparison
    /// (then the header is no pure test).
    fn break_at_the_end(use_test: bool) -> String {
        let body_add = if use_test {
            "%4 = add %3, %0"
        } else {
            "%4 = add %0, 0"
        };
        format!(
            r#"
global @a: [i32; 8] = [5, 1, 7, 3, 9, 2, 8, 4]

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  jump bb1(%1)
bb1(%2: i32):
  %3 = slt %0, %2
  br %3, bb2, bb3(%2)
bb2:
  %9 = add %2, -1
  {body_add}
  %5 = gep @a, %9, 4
  %6 = load i32, %5
  %7 = slt %6, %4
  br %7, bb3(%9), bb1(%9)
bb3(%8: i32):
  call @putint(%8)
  ret 0
}}
"#
        )
    }

    #[test]
    fn a_loop_whose_latch_breaks_is_rotated_when_its_header_only_tests() {
        let src = break_at_the_end(false);
        for input in ["0 8", "3 8", "7 8", "8 2"] {
            same_behaviour(&src, &["looprotate"], input);
        }
        let out = crate::passes::testutil::run(&src, &["looprotate"]);
        // The header's test is copied: once as the guard, once at the bottom.
        assert_eq!(out.matches("slt %0,").count(), 2, "{out}");
        // Rotating again changes nothing: the new header passes its work on.
        let twice = crate::passes::testutil::run(&src, &["looprotate", "looprotate"]);
        assert_eq!(twice, out);
    }

    #[test]
    fn a_loop_whose_latch_breaks_keeps_a_header_that_does_work() {
        // The body reads the header's comparison: the header is not a pure test.
        let src = break_at_the_end(true);
        same_behaviour(&src, &["looprotate"], "3 8");
        let out = crate::passes::testutil::run(&src, &["looprotate"]);
        assert_eq!(out.matches("slt %0,").count(), 1, "{out}");
    }

    #[test]
    fn nested_loops_keep_behaviour() {
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = slt %0, 7
  br %2, bb2, bb5
bb2:
  jump bb3(0, %1)
bb3(%3: i32, %4: i32):
  %5 = slt %3, %0
  br %5, bb4, bb6
bb4:
  %6 = mul %3, %0
  %7 = add %4, %6
  %8 = add %3, 1
  jump bb3(%8, %7)
bb6:
  %9 = add %0, 1
  jump bb1(%9, %4)
bb5:
  call @putint(%1)
  call @putint(%0)
  ret 0
}
"#;
        let out = same_behaviour(src, &["looprotate"], "");
        assert_eq!(out.matches("slt").count(), 4, "both loops rotated:\n{out}");
    }

    /// Regression (performance/crypto-1): values rotating through the header's
    /// parameters (`b = a`) used on both arms of a branch in the body. Repairing
    /// one value made the header's parameters trivial (the header has one
    /// predecessor after rotation) while the other values' uses outside the header
    /// still waited for repair; trivial parameters are now removed at the end.
    #[test]
    fn rotating_variables_used_across_a_join() {
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 1, 2)
bb1(%0: i32, %1: i32, %2: i32):
  %3 = slt %0, 80
  br %3, bb2, bb6
bb2:
  %4 = slt %0, 20
  br %4, bb3, bb4
bb3:
  %5 = add %1, %2
  jump bb5(%5)
bb4:
  %6 = sub %2, %1
  jump bb5(%6)
bb5(%7: i32):
  %8 = add %1, %7
  %9 = add %0, 1
  jump bb1(%9, %8, %1)
bb6:
  call @putint(%1)
  call @putint(%2)
  ret 0
}
"#;
        let out = same_behaviour(src, &["looprotate"], "");
        assert_eq!(out.matches("slt %").count(), 3, "rotated:\n{out}");
    }

    /// Stepping over the loops a rotation does not touch repairs SSA exactly as
    /// walking through them: on a nest of three loops whose middle one passes an
    /// outer value to the inner loop's header (rotation first gives the inner
    /// guard a parameter receiving it, which the outer rotation's repair revisits
    /// and removes), and on the tests' other loops.
    #[test]
    fn stepping_over_inner_loops_changes_nothing() {
        let nest = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0, 0)
bb1(%0: i32, %1: i32, %2: i32):
  %3 = slt %0, 3
  br %3, bb2, bb9
bb2:
  jump bb3(0, %1)
bb3(%4: i32, %5: i32):
  %6 = slt %4, %0
  br %6, bb4, bb8
bb4:
  jump bb5(%2, %5)
bb5(%7: i32, %8: i32):
  %9 = slt %7, %4
  br %9, bb6, bb7
bb6:
  %10 = add %8, %7
  %11 = add %7, 1
  jump bb5(%11, %10)
bb7:
  %12 = add %4, 1
  jump bb3(%12, %8)
bb8:
  %13 = add %0, 1
  jump bb1(%13, %5, %4)
bb9:
  call @putint(%1)
  call @putint(%2)
  ret 0
}
"#;
        for src in [nest, WHILE] {
            let rotated = |step: bool| {
                let mut m = ir::parse_module(src).unwrap();
                let fid = m.func_by_name("main").unwrap();
                let n = super::rotate_all(&mut m.funcs[fid], step, &mut Default::default());
                ir::verify_module(&m).unwrap();
                (n, ir::print_module(&m))
            };
            let (stepped, walked) = (rotated(true), rotated(false));
            assert_eq!(stepped, walked);
            assert!(stepped.0 >= 1, "{}", stepped.1);
        }
        let out = same_behaviour(nest, &["looprotate"], "");
        assert_eq!(out.matches("slt").count(), 6, "all three rotated:\n{out}");
    }
}
