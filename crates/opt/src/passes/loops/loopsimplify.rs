//! Separation of nested loops that share a header: when a header `S` has back
//! edges of two loops, one nested in the other, the outer loop gets a header of
//! its own, a block `O` that only jumps to `S`, and the edges entering the nest and
//! the outer loop's back edges go to `O`. `S` is then the inner loop's header
//! alone, with `O` (the inner loop's preheader) its only entry.
//!
//! Rotating `while (n) { fill a[0..256]; ...; n = n - 1; }` puts the outer loop's
//! test at its bottom, and that test branches straight into the fill loop's
//! header: the two loops share it, and a loop forest sees one loop with two back
//! edges. Loop idiom recognition, unrolling and loop deletion then never see the
//! fill loop on its own. This is the separation of LLVM's `LoopSimplify`
//! (`separateNestedLoop`).
//!
//! The back edges of `S` are told apart by their natural loops (the blocks that
//! reach the edge's source without passing `S`): an edge whose loop strictly
//! contains another's belongs to the outer loop. Two latches of one loop (a
//! `continue`) have loops neither of which contains the other's latch, and stay.
//! When neither natural loop contains the other (the outer loop's latch is
//! reached from the header without passing the inner loop's latch, as when a
//! rotated outer test follows an inner loop that also exits from its middle), a
//! header parameter tells them apart, as LLVM's `findPHIToPartitionLoops` does: a
//! parameter that some back edges pass unchanged (a variable of the outer loop the
//! inner loop does not write, such as the outer counter) and others do not; the
//! back edges passing it unchanged belong to the inner loop. Separating is correct
//! whatever the edges chosen (`O` only forwards its parameters); the choice only
//! decides which loop nest the later passes see. So that the two latches of one
//! loop (a `continue` that skips an update) stay one loop, the split also needs
//! what makes a loop nested: the outer back edges restart another parameter (pass
//! it a value from outside the loops, as `j = 0` before an inner loop) that the
//! inner back edges update.
//! `simplifycfg` keeps `O`, a forwarding block, because bypassing it would merge
//! the loops again.

use crate::pipeline::Pass;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, BlockCall, Function, InstKind, Module, Type, Value};
use rustc_hash::FxHashSet;

/// The pass.
pub struct LoopSimplify;

impl Pass for LoopSimplify {
    fn name(&self) -> &'static str {
        "loopsimplify"
    }
    fn description(&self) -> &'static str {
        "give an outer loop that shares its header with an inner loop a header of its own"
    }
    fn run(&self, m: &mut Module) -> bool {
        crate::passes::each_function(m, |f| run(f) > 0)
    }
}

/// At most this many headers are separated per function (each recomputes the
/// dominator tree).
const MAX_SEPARATIONS: usize = 64;

/// Separates the nested loops of every shared header of `f`; returns how many.
pub fn run(f: &mut Function) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let mut done = 0;
    while done < MAX_SEPARATIONS {
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let Some((s, outer)) = f
            .layout
            .blocks()
            .find_map(|s| outer_latches(f, &cfg, &dt, s).map(|o| (s, o)))
        else {
            break;
        };
        separate(f, &cfg, &dt, s, &outer);
        done += 1;
    }
    done
}

/// The sources of `s`'s back edges that belong to a loop enclosing another loop
/// headed by `s`, when there are some (and not all of them).
fn outer_latches(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    s: Block,
) -> Option<Vec<Block>> {
    let latches: Vec<Block> = cfg
        .unique_preds(s)
        .into_iter()
        .filter(|&p| dt.dominates(s, p))
        .collect();
    if latches.len() < 2 {
        return None;
    }
    let bodies: Vec<FxHashSet<Block>> = latches.iter().map(|&l| body(cfg, s, l)).collect();
    let outer: Vec<Block> = latches
        .iter()
        .enumerate()
        .filter(|&(j, _)| {
            (0..latches.len()).any(|i| {
                i != j && bodies[i].len() < bodies[j].len() && bodies[i].is_subset(&bodies[j])
            })
        })
        .map(|(_, &l)| l)
        .collect();
    if !outer.is_empty() && outer.len() < latches.len() {
        return Some(outer);
    }
    partition_by_param(f, dt, s, &latches)
}

/// The latches that change a parameter of `s` which the other latches pass
/// unchanged (`findPHIToPartitionLoops`), for the first such parameter.
fn partition_by_param(
    f: &Function,
    dt: &DominatorTree,
    s: Block,
    latches: &[Block],
) -> Option<Vec<Block>> {
    let params = f.block_params(s);
    // Per latch, per parameter: whether every edge to `s` passes it unchanged,
    // changed, or some of each (`None`).
    let passes_self: Vec<Vec<Option<bool>>> = latches
        .iter()
        .map(|&l| {
            let mut out: Vec<Option<bool>> = Vec::new();
            let term = f.terminator(l);
            for t in term.iter().flat_map(|&t| f.kind(t).targets()) {
                if t.block != s {
                    continue;
                }
                let same: Vec<bool> = t.args.iter().zip(params).map(|(a, p)| a == p).collect();
                if out.is_empty() {
                    out = same.into_iter().map(Some).collect();
                } else {
                    for (o, x) in out.iter_mut().zip(same) {
                        if *o != Some(x) {
                            *o = None;
                        }
                    }
                }
            }
            out
        })
        .collect();
    (0..params.len()).find_map(|k| {
        let mut outer = Vec::new();
        let mut inner = 0;
        for (j, &l) in latches.iter().enumerate() {
            match passes_self[j].get(k).copied().flatten() {
                Some(true) => inner += 1,
                Some(false) => outer.push(l),
                None => return None,
            }
        }
        (inner > 0 && !outer.is_empty() && restarts(f, dt, s, &outer)).then_some(outer)
    })
}

/// Whether the back edges from `outer` all pass some parameter of `s` one value
/// defined outside the loops headed by `s` while the other back edges change it.
fn restarts(f: &Function, dt: &DominatorTree, s: Block, outer: &[Block]) -> bool {
    let outside = |v: Value| f.value_block(v).is_none_or(|b| !dt.dominates(s, b));
    let params = f.block_params(s);
    let edges = |l: Block| -> Vec<Vec<Value>> {
        f.terminator(l)
            .iter()
            .flat_map(|&t| f.kind(t).targets())
            .filter(|t| t.block == s)
            .map(|t| t.args.to_vec())
            .collect()
    };
    let latches: Vec<Block> = f
        .layout
        .blocks()
        .filter(|&b| dt.dominates(s, b) && !outer.contains(&b))
        .filter(|&b| !edges(b).is_empty())
        .collect();
    (0..params.len()).any(|k| {
        let mut restart: Option<Value> = None;
        for &l in outer {
            for args in edges(l) {
                let v = args[k];
                if !outside(v) || restart.is_some_and(|r| r != v) {
                    return false;
                }
                restart = Some(v);
            }
        }
        latches
            .iter()
            .flat_map(|&l| edges(l))
            .all(|args| args[k] != params[k] && Some(args[k]) != restart)
    })
}

/// The natural loop of the back edge `latch -> s`: `s` and the blocks that reach
/// `latch` without passing `s`.
fn body(cfg: &ControlFlowGraph, s: Block, latch: Block) -> FxHashSet<Block> {
    let mut seen: FxHashSet<Block> = [s, latch].into_iter().collect();
    let mut work = vec![latch];
    while let Some(b) = work.pop() {
        if b == s {
            continue;
        }
        for &p in cfg.preds(b) {
            if seen.insert(p) {
                work.push(p);
            }
        }
    }
    seen
}

/// Makes a new block `O` the header of the loop whose back edges come from
/// `outer`: they and the edges entering `s` from outside its loops go to `O`,
/// which jumps to `s` with its parameters.
fn separate(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    s: Block,
    outer: &[Block],
) {
    let o = f.create_block();
    f.layout.insert_block_after(o, cfg.preds(s)[0]);
    let types: Vec<Type> = f.block_params(s).iter().map(|&p| f.value_type(p)).collect();
    let params: Vec<Value> = types
        .into_iter()
        .map(|ty| f.append_block_param(o, ty))
        .collect();
    for p in cfg.unique_preds(s) {
        if dt.dominates(s, p) && !outer.contains(&p) {
            continue;
        }
        let term = f.terminator(p).expect("a predecessor ends in a branch");
        let targets: Vec<BlockCall> = f.kind(term).targets().into_iter().cloned().collect();
        for (which, t) in targets.into_iter().enumerate() {
            if t.block == s {
                f.set_target(term, which, BlockCall::new(o, t.args));
            }
        }
    }
    f.append_inst(
        o,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(s, params)),
        },
        Type::Void,
    );
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// `while (n) { a[0..32] = 0 (a loop whose header the outer test enters);
    /// s += a[n % 32]; a[n % 32] = n; n = n - 1; }` after rotation: bb1 heads both
    /// loops.
    const SHARED: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %a = alloc [i32; 32]
  %n = call @getint()
  %t = ne %n, 0
  br %t, bb1(0, %n, 0), bb3(0)
bb1(%i: i32, %m: i32, %s: i32):
  %p = gep %a, %i, 4
  store 0, %p
  %i1 = add %i, 1
  %c = slt %i1, 32
  br %c, bb1(%i1, %m, %s), bb2
bb2:
  %k = srem %m, 32
  %q = gep %a, %k, 4
  %v = load i32, %q
  store %m, %q
  %s1 = add %s, %v
  %m1 = add %m, -1
  %u = ne %m1, 0
  br %u, bb1(0, %m1, %s1), bb3(%s1)
bb3(%r: i32):
  call @putint(%r)
  ret 0
}
"#;

    #[test]
    fn the_outer_loop_gets_its_own_header() {
        for input in ["0", "1", "7"] {
            same_behaviour(SHARED, &["loopsimplify"], input);
        }
        let out = same_behaviour(SHARED, &["loopsimplify"], "5");
        // The new header (bb1 in the printed layout) jumps to the fill loop (now
        // bb2); the entry and the outer latch go to it, the fill loop's own back
        // edge stays.
        assert!(out.contains("jump bb2("), "{out}");
        assert_eq!(out.matches("bb1(").count(), 3, "{out}");
        assert_eq!(out.matches("bb2(").count(), 3, "{out}");
        // simplifycfg keeps the new header: bypassed, it would merge the loops.
        let kept = crate::passes::testutil::run(SHARED, &["loopsimplify", "simplifycfg"]);
        assert!(kept.contains("jump bb2("), "{kept}");
        let lp = crate::passes::testutil::run(SHARED, &["loopsimplify", "loopidiom"]);
        assert!(
            lp.contains("@memset"),
            "the fill loop is seen on its own:\n{lp}"
        );
    }

    #[test]
    fn two_latches_of_one_loop_stay() {
        // A `continue` path (bb2) and the end of the body (bb3) both go back to
        // bb1: one loop, nothing to separate.
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%i: i32, %s: i32):
  %i1 = add %i, 1
  %odd = and %i, 1
  br %odd, bb2, bb3
bb2:
  %c = slt %i1, 10
  br %c, bb1(%i1, %s), bb4
bb3:
  %s1 = add %s, %i
  %d = slt %i1, 10
  br %d, bb1(%i1, %s1), bb4
bb4:
  call @putint(%s)
  ret 0
}
"#;
        let out = crate::passes::testutil::run(src, &["loopsimplify"]);
        assert!(!out.contains("bb5"), "{out}");
    }

    /// `for (o = 8; o > -12; o--) { i = 8; while (i > -4 && (i & n) < 3) i -= 2; }`
    /// rotated so that the outer latch (bb3) branches straight to the inner header
    /// (bb1), and the inner loop also exits from its middle (bb2): neither back
    /// edge's natural loop contains the other's latch. `o` goes round the inner
    /// back edge unchanged, and the outer back edge restarts `i` at 8. `USE`
    /// prints the inner loop's last `i` or nothing.
    const CROSSED: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %n = call @getint()
  jump bb1(8, 8, 0)
bb1(%i: i32, %o: i32, %s: i32):
  %c = sgt %i, -4
  br %c, bb2, bb3(%s)
bb2:
  %t = and %i, %n
  %e = slt %t, 3
  %s1 = add %s, %i
  br %e, bb4, bb3(%s1)
bb4:
  %i1 = add %i, -2
  jump bb1(%i1, %o, %s1)
bb3(%s2: i32):
  %o1 = add %o, -1
  %d = sgt %o1, -12
  br %d, bb1(8, %o1, %s2), bb5
bb5:
USE
  ret 0
}
"#;

    #[test]
    fn a_parameter_the_inner_loop_keeps_tells_the_loops_apart() {
        let src = CROSSED.replace("USE", "  call @putint(%s2)");
        for input in ["0", "1", "5", "-1", "12"] {
            let out = same_behaviour(&src, &["loopsimplify"], input);
            // bb1 is the new outer header, forwarding to the inner one (bb2).
            assert!(out.contains("jump bb2("), "{out}");
        }
        // Nothing is printed: loop deletion now sees an inner loop on its own,
        // then the outer one (without the split, one loop with two counters).
        let src = CROSSED.replace("USE\n", "");
        let alone = crate::passes::testutil::run(&src, &["dce", "simplifycfg", "loopdelete"]);
        assert!(alone.contains("bb2"), "{alone}");
        let split = same_behaviour(
            &src,
            &["dce", "loopsimplify", "simplifycfg", "loopdelete"],
            "3",
        );
        assert!(!split.contains("bb2"), "{split}");
    }

    #[test]
    fn no_restart_no_split() {
        // The same loops, except that the outer back edge passes `i` on instead of
        // restarting it: one loop with two latches.
        let src = CROSSED
            .replace("bb1(8, %o1, %s2)", "bb1(%i, %o1, %s2)")
            .replace("USE", "  call @putint(%s2)");
        let out = crate::passes::testutil::run(&src, &["loopsimplify"]);
        assert!(!out.contains("bb6"), "{out}");
    }
}
