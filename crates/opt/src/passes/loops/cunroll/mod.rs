//! Complete unrolling of loops whose control flow is constant: a loop whose every
//! branch, from its entry values on, is decided by constants (counters starting at
//! constants, tests of them, `break`s on them) runs a number of times known at
//! compile time, along a path known too. It is replaced by that many copies of its
//! body, one per iteration, each entering the next; constant propagation then folds
//! each copy's branches to the path it takes, and the loop itself, no longer
//! entered, disappears.
//!
//! ```text
//!   m = 0;                                    // three iterations: m = 0, 1, 2
//!   while (m < 3) {                           s = s + 1;
//!     if (m + 1 >= 3 && m) break;       =>    s = s + 1;
//!     m = m + 1; s = s + 1;                   // the third breaks
//!   }
//! ```
//!
//! This is GCC's complete unrolling (`cunroll`, `tree-ssa-loop-ivcanon.cc`) with the
//! iteration count found by brute-force evaluation of the exit conditions
//! (`loop_niter_by_eval`, `tree-ssa-loop-niter.cc`): the loop is run on the constants
//! alone ([`simulate`]): from the header with the constants every edge entering it
//! passes (a loop without a preheader, entered by a branch whose both arms reach
//! its header or from several blocks, starts from what they agree on), each
//! instruction whose operands are known constants is folded exactly as SCCP folds it
//! ([`crate::fold`]), anything else (loads, calls, values from before the loop) is
//! unknown, and every branch must be decided. The walk ends at the first edge out of
//! the loop, after at most [`MAX_TRIPS`] iterations and [`MAX_PATH_INSTS`]
//! instructions on the path (what the copies shrink to); a branch it cannot decide
//! leaves the loop alone, unless it is an exit (one target in the loop, one out):
//! the walk then stays in the loop, and the trips it finds bound the loop's, which
//! may leave earlier (`while (i > 3 && a[i] != x) i--;` runs at most 4 times from
//! `i = 7`). Each copy keeps that exit test, as in GCC's complete peeling
//! (`try_peel_loop`, with the bound `max_loop_iterations` gives), under tighter
//! limits ([`MAX_PEELED_TRIPS`], [`MAX_PEELED_INSTS`]), since the copies do not
//! fold away. Unlike [`super::unroll`], which takes single-block loops
//! with a counted latch, the loop may have any number of blocks and exits.
//!
//! A loop that only computes (no memory access, no call) and whose results at its
//! exit are all known from the walk is not copied at all: it is replaced by those
//! constants ([`evaluate`], with a longer walk of up to [`MAX_EVAL_STEPS`]
//! instructions, since nothing of it is left). A loop with a result that no walk
//! can know (computed from a value read before the loop) is not walked:
//! [`knowable`] finds those without walking.
//!
//! The copies are made with [`LoopCopy`] (the values the loop defines are repaired
//! outside it by the SSA updater), chained in order: the loop's entries go to the
//! first, each copy's back edges to the next, the last one's to the original loop.
//! [`crate::passes::scalar::sccp`] and [`crate::passes::scalar::simplifycfg`] then fold them; since they see every
//! constant the walk saw, the last copy leaves the loop and the original is
//! unreachable. Innermost loops of at least two blocks (single blocks are
//! [`super::unroll`]'s) and at most [`MAX_LOOP_INSTS`] instructions are copied; a
//! function grows by at most [`MAX_GROWTH`] instructions before folding, in at most
//! [`MAX_ROUNDS`] loops. A nest whose every level constants decide collapses from
//! the inside out: once its inner loop is gone, an outer loop is innermost.

use crate::analysis::{FunctionAnalyses, LoopForest, LoopId, Preserved};
use crate::fold::{fold_binary, fold_cmp, fold_unary, Const};
use crate::loop_copy::{repair_uses_outside, LoopCopy};
use crate::pipeline::FunctionTransform;
use ir::analysis::ControlFlowGraph;
use ir::{Block, BlockCall, Function, InstKind, Value};
use rustc_hash::{FxHashMap, FxHashSet};

mod knowable;

/// The complete unrolling pass.
pub struct CompleteUnroll;

impl FunctionTransform for CompleteUnroll {
    const NAME: &'static str = "cunroll";
    const DESCRIPTION: &'static str =
        "completely unroll loops whose branches constants decide, any shape";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// At most this many iterations are unrolled.
pub const MAX_TRIPS: usize = 32;
/// At most this many instructions on the path of all iterations together.
pub const MAX_PATH_INSTS: usize = 400;
/// Loops with more instructions than this are not copied.
pub const MAX_LOOP_INSTS: usize = 100;
/// A function grows by at most this many instructions (copies before folding).
pub const MAX_GROWTH: usize = 4000;
/// A loop with exits that data decide is copied at most this many times, into at
/// most this many instructions once folded (GCC's `max-completely-peel-times` and
/// `max-completely-peeled-insns`).
pub const MAX_PEELED_TRIPS: usize = 16;
pub const MAX_PEELED_INSTS: usize = 200;

/// At most this many loops of a function are unrolled (each round simulates every
/// loop again: the one unrolled may have made the next loop's entry constant).
pub const MAX_ROUNDS: usize = 64;

/// Unrolls the loops of `f` that qualify, one per round; returns how many.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let mut budget = MAX_GROWTH;
    // Loops already walked without a result: each walk may take thousands of
    // steps, so a loop is walked again only once an evaluation made constants
    // that may reach it (the copies of an unrolled loop are new loops).
    let mut tried: FxHashSet<Block> = FxHashSet::default();
    fa.rounds(f, MAX_ROUNDS, |f, fa| {
        let (cfg, _, loops) = fa.loops(f);
        let sizes = loops.inst_counts(f);
        // Instructions other than arithmetic and branches, per loop (linear in the
        // function, however deep the nest).
        let impure = loops.sum_over_blocks(f, |b| {
            f.layout
                .block_insts(b)
                .filter(|&i| !computes_only(f.kind(i)))
                .count()
        });
        // Loops no walk can evaluate, found for all loops at once when the first
        // pure one is met.
        let mut doomed: Option<Vec<bool>> = None;
        let candidate = loops.loops().find_map(|(id, lp)| {
            let size = sizes[id.0 as usize];
            if !tried.insert(lp.header) {
                return None;
            }
            // Single blocks are `unroll`'s; whole nests would be full of
            // addresses strength reduction then gives a pointer each (unless
            // nothing of them is left: `evaluate`).
            let entry = Entry::of(f, cfg, loops, id)?;
            let evaluable = impure[id.0 as usize] == 0
                && !doomed.get_or_insert_with(|| knowable::doomed_loops(f, cfg, loops))
                    [id.0 as usize];
            if let Some(fold) = evaluable.then(|| evaluate(f, loops, id, &entry)).flatten() {
                return Some(Plan::Evaluate(fold));
            }
            if !lp.children.is_empty() || lp.blocks.len() < 2 || size > MAX_LOOP_INSTS {
                return None;
            }
            let limits = Limits {
                trips: MAX_TRIPS,
                steps: MAX_PATH_INSTS,
            };
            let trips = match simulate(f, loops, id, &entry.values, limits) {
                Some(walk) => walk.trips,
                // Exits that data decide leave the copies' code in place: a
                // tighter limit, as GCC's complete peeling has.
                None => {
                    bound_trips(f, loops, id, &entry.values, MAX_PEELED_TRIPS)
                        .filter(|&(_, left)| left <= MAX_PEELED_INSTS)?
                        .0
                }
            };
            (trips * size <= budget).then_some(Plan::Unroll {
                id,
                trips,
                size,
                entry,
            })
        });
        match candidate? {
            Plan::Unroll {
                id,
                trips,
                size,
                entry,
            } => {
                budget -= trips * size;
                unroll(f, loops, id, trips, &entry.edges);
                crate::passes::scalar::sccp::run(f);
                crate::passes::scalar::simplifycfg::run(f);
            }
            Plan::Evaluate(fold) => {
                fold.apply(f);
                tried.clear();
            }
        }
        Some(1)
    })
}

/// What to do with one loop.
enum Plan {
    Unroll {
        id: LoopId,
        trips: usize,
        size: usize,
        entry: Entry,
    },
    Evaluate(Evaluated),
}

/// At most this many instructions are run to evaluate a loop.
pub const MAX_EVAL_STEPS: usize = 20_000;

/// A loop that computes only constants: where its entry edges go instead, and
/// the values its results take.
struct Evaluated {
    entry: Vec<(Block, usize)>,
    exit: BlockCall,
    results: Vec<(Value, Const)>,
}

impl Evaluated {
    /// Sends the entry edges to the exit and the results' uses to their constants;
    /// the loop becomes unreachable and goes.
    fn apply(self, f: &mut Function) {
        for &(pred, which) in &self.entry {
            let t = f.terminator(pred).expect("the entry ends in a branch");
            f.set_target(t, which, self.exit.clone());
        }
        for (v, c) in self.results {
            let k = c.value(f);
            f.replace_all_uses(v, k);
        }
        crate::cfg_edit::remove_unreachable_blocks(f);
    }
}

/// Whether an instruction only computes (a loop made of these can be evaluated).
fn computes_only(k: &InstKind) -> bool {
    matches!(
        k,
        InstKind::Binary { .. }
            | InstKind::Cmp { .. }
            | InstKind::Unary { .. }
            | InstKind::Gep { .. }
            | InstKind::Jump { .. }
            | InstKind::Br { .. }
    )
}

/// Loop `id` as the constants it computes, when it has no effect and reads no
/// memory (every instruction [`computes_only`], which the caller checks; so every
/// value in it comes from constants and values from before it),
/// constants decide its every branch within [`MAX_EVAL_STEPS`] instructions, and
/// every value used after it is a known constant at its exit: LLVM's exhaustive
/// exit count and exit values (`computeExitCountExhaustively`,
/// `getConstantEvolutionLoopExitValue`). `for (i = 0; i < 100; i++) { if (i == 50)
/// break; s += i; }` is `s = 1225`.
fn evaluate(f: &Function, loops: &LoopForest, id: LoopId, entry: &Entry) -> Option<Evaluated> {
    if !knowable::results_knowable(f, loops, id, &entry.values) {
        return None;
    }
    let limits = Limits {
        trips: usize::MAX,
        steps: MAX_EVAL_STEPS,
    };
    let walk = simulate(f, loops, id, &entry.values, limits)?;
    // The exit edge's arguments from the loop are among the results below; those
    // from before it stay.
    let exit = walk.exit?;
    let mut results = Vec::new();
    for v in loops.defined_values(f, id) {
        if loops.used_outside(f, id, v) || exit.args.contains(&v) {
            results.push((v, *walk.known.get(&v)?));
        }
    }
    Some(Evaluated {
        entry: entry.edges.clone(),
        exit,
        results,
    })
}

/// How a loop is entered: every edge reaching its header from outside it (its
/// source block and target index), and the constants the header's parameters take
/// on entry (those every edge agrees on; a parameter they disagree on is unknown,
/// as it would be in a preheader joining them).
struct Entry {
    edges: Vec<(Block, usize)>,
    values: Vec<Option<Const>>,
}

impl Entry {
    fn of(f: &Function, cfg: &ControlFlowGraph, loops: &LoopForest, id: LoopId) -> Option<Entry> {
        let h = loops.get(id).header;
        let mut edges = Vec::new();
        let mut values: Option<Vec<Option<Const>>> = None;
        for p in cfg.unique_preds(h) {
            if loops.contains(id, p) {
                continue;
            }
            let t = f.terminator(p)?;
            for (which, call) in f.kind(t).targets().iter().enumerate() {
                if call.block != h {
                    continue;
                }
                edges.push((p, which));
                let args = call.args.iter().map(|&a| Const::of(f, a));
                values = Some(match values {
                    None => args.collect(),
                    Some(old) => old
                        .into_iter()
                        .zip(args)
                        .map(|(x, y)| if x == y { x } else { None })
                        .collect(),
                });
            }
        }
        Some(Entry {
            edges,
            values: values?,
        })
    }
}

/// Where a walk through a loop on constants left it.
pub struct Walk {
    /// Header entries: how many times the body ran.
    pub trips: usize,
    /// The edge out of the loop (its arguments as in the IR), or `None` for a
    /// `ret` inside it.
    pub exit: Option<BlockCall>,
    /// The last value each instruction and parameter of the loop took, when known.
    pub known: FxHashMap<Value, Const>,
}

/// Limits of a walk: header entries and instructions.
#[derive(Clone, Copy)]
pub struct Limits {
    pub trips: usize,
    pub steps: usize,
}

/// Runs loop `id`, entered with the header parameters' constants `entry`, on
/// constants ([`Walk`]), if they decide every branch on the way out within
/// `limits`.
pub fn simulate(
    f: &Function,
    loops: &LoopForest,
    id: LoopId,
    entry: &[Option<Const>],
    limits: Limits,
) -> Option<Walk> {
    let h = loops.get(id).header;
    let mut known: FxHashMap<Value, Const> = FxHashMap::default();
    let mut b = h;
    let mut args: Vec<Option<Const>> = entry.to_vec();
    let mut trips = 0;
    let mut steps = 0;
    loop {
        if b == h {
            trips += 1;
            if trips > limits.trips {
                return None;
            }
        }
        // The block's parameters take the edge's arguments (all at once).
        for (&p, c) in f.block_params(b).iter().zip(args) {
            set(&mut known, p, c);
        }
        let mut next = None;
        for i in f.layout.block_insts(b) {
            steps += 1;
            if steps > limits.steps {
                return None;
            }
            match *f.kind(i) {
                InstKind::Jump { ref dest } => next = Some(dest.clone()),
                InstKind::Br {
                    cond,
                    ref then_dest,
                    ref else_dest,
                } => {
                    let Some(Const::I(c)) = value(f, &known, cond) else {
                        return None;
                    };
                    next = Some(Box::new(
                        *if c != 0 { then_dest } else { else_dest }.clone(),
                    ));
                }
                // A return leaves the loop.
                InstKind::Ret { .. } => {
                    return Some(Walk {
                        trips,
                        exit: None,
                        known,
                    })
                }
                ref kind => {
                    if let Some(r) = f.inst_result(i) {
                        let folded = fold(f, &known, kind);
                        set(&mut known, r, folded);
                    }
                }
            }
        }
        let target = next?;
        if !loops.contains(id, target.block) {
            return Some(Walk {
                trips,
                exit: Some(*target),
                known,
            });
        }
        args = target.args.iter().map(|&a| value(f, &known, a)).collect();
        b = target.block;
    }
}

/// An upper bound on the header entries of loop `id` (innermost, so acyclic but
/// for its back edges), entered with the header parameters' constants `entry`, when constants bound them but
/// need not decide every branch: each iteration is evaluated as SCCP would over
/// the loop's blocks from the header's known values, a branch it cannot decide
/// reaching both targets, and a block parameter known when every edge reaching it
/// this iteration agrees; the header's values for the next iteration are likewise
/// those all reached back edges agree on. The walk ends when no back edge is
/// reached (every way through leaves the loop), after at most `max_trips`. With
/// the bound comes the size of the copies once folded: the instructions of the
/// blocks reached whose results are not constants (as GCC's
/// `estimated_unrolled_size`).
fn bound_trips(
    f: &Function,
    loops: &LoopForest,
    id: LoopId,
    entry: &[Option<Const>],
    max_trips: usize,
) -> Option<(usize, usize)> {
    let lp = loops.get(id);
    let h = lp.header;
    let blocks: Vec<Block> = lp.blocks.iter().copied().collect();
    let mut header: Vec<Option<Const>> = entry.to_vec();
    let mut steps = 0;
    let mut left = 0;
    for trip in 1..=max_trips {
        let mut known: FxHashMap<Value, Const> = FxHashMap::default();
        // Per block of the loop reached this iteration: what its edges so far
        // bring to each of its parameters (None: disagreeing or unknown).
        let mut incoming: FxHashMap<Block, Option<Vec<Option<Const>>>> = FxHashMap::default();
        incoming.insert(h, Some(header.clone()));
        let mut back: Option<Vec<Option<Const>>> = None;
        for &b in &blocks {
            let Some(Some(params)) = incoming.remove(&b) else {
                continue;
            };
            for (&p, c) in f.block_params(b).iter().zip(params) {
                set(&mut known, p, c);
            }
            let mut reach = |t: &BlockCall, known: &FxHashMap<Value, Const>| {
                let args: Vec<Option<Const>> = t.args.iter().map(|&a| value(f, known, a)).collect();
                let slot = if t.block == h {
                    &mut back
                } else if loops.contains(id, t.block) {
                    // Blocks come in reverse post-order: every edge into one is
                    // seen before it is evaluated.
                    incoming.entry(t.block).or_insert(None)
                } else {
                    return;
                };
                *slot = Some(match slot.take() {
                    None => args,
                    Some(old) => old
                        .into_iter()
                        .zip(args)
                        .map(|(x, y)| if x == y { x } else { None })
                        .collect(),
                });
            };
            for i in f.layout.block_insts(b) {
                steps += 1;
                if steps > MAX_PATH_INSTS {
                    return None;
                }
                match *f.kind(i) {
                    InstKind::Jump { ref dest } => reach(dest, &known),
                    InstKind::Br {
                        cond,
                        ref then_dest,
                        ref else_dest,
                    } => match value(f, &known, cond) {
                        Some(Const::I(c)) => {
                            reach(if c != 0 { then_dest } else { else_dest }, &known)
                        }
                        _ => {
                            reach(then_dest, &known);
                            reach(else_dest, &known);
                        }
                    },
                    InstKind::Ret { .. } => {}
                    ref kind => {
                        let folded = fold(f, &known, kind);
                        if folded.is_none() {
                            left += 1;
                        }
                        if let Some(r) = f.inst_result(i) {
                            set(&mut known, r, folded);
                        }
                    }
                }
            }
        }
        match back {
            None => return Some((trip, left)),
            Some(next) => header = next,
        }
    }
    None
}

/// The constant an arithmetic instruction computes from known operands.
fn fold(f: &Function, known: &FxHashMap<Value, Const>, kind: &InstKind) -> Option<Const> {
    match *kind {
        InstKind::Binary { op, args: [a, b] } => {
            fold_binary(op, value(f, known, a)?, value(f, known, b)?)
        }
        InstKind::Cmp { op, args: [a, b] } => {
            fold_cmp(op, value(f, known, a)?, value(f, known, b)?)
        }
        InstKind::Unary { op, arg } => fold_unary(op, value(f, known, arg)?),
        _ => None,
    }
}

/// The constant `v` is or was computed to be.
fn value(f: &Function, known: &FxHashMap<Value, Const>, v: Value) -> Option<Const> {
    Const::of(f, v).or_else(|| known.get(&v).copied())
}

fn set(known: &mut FxHashMap<Value, Const>, v: Value, c: Option<Const>) {
    match c {
        Some(c) => known.insert(v, c),
        None => known.remove(&v),
    };
}

/// Replaces loop `id`, entered through the edges `entry`, by `trips` chained
/// copies in front of it (the last one's back edges still reach it).
fn unroll(
    f: &mut Function,
    loops: &LoopForest,
    id: LoopId,
    trips: usize,
    entry: &[(Block, usize)],
) {
    let lp = loops.get(id).clone();
    let h = lp.header;
    let copies: Vec<LoopCopy> = (0..trips).map(|_| LoopCopy::new(f, &lp, true)).collect();
    for (k, copy) in copies.iter().enumerate().skip(1) {
        let next_header = copy.blocks[&h];
        for &b in &lp.blocks {
            let t = f
                .terminator(copies[k - 1].blocks[&b])
                .expect("a copied block ends in a branch");
            let back: Vec<(usize, Vec<Value>)> = f
                .kind(t)
                .targets()
                .iter()
                .enumerate()
                .filter(|(_, call)| call.block == h)
                .map(|(which, call)| (which, call.args.to_vec()))
                .collect();
            for (which, args) in back {
                f.set_target(t, which, BlockCall::new(next_header, args));
            }
        }
    }
    for &(pred, which) in entry {
        let t = f.terminator(pred).expect("the entry ends in a branch");
        let args = f.kind(t).targets()[which].args.clone();
        f.set_target(t, which, BlockCall::new(copies[0].blocks[&h], args));
    }
    let created = repair_uses_outside(f, &lp, &copies);
    crate::ssa::remove_trivial_params(f, &created);
}

#[cfg(test)]
mod tests {
    use super::MAX_TRIPS;
    use crate::passes::testutil::same_behaviour;

    /// `m = 0; while (m < 3) { if (m + 1 >= 3) if (m) break; m++; s++; print(s) }`,
    /// with `s` read from stdin: the test on `m` and the break are constant, `s` is
    /// not. Prints `s` after the loop too.
    const BREAKS: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, %0)
bb1(%1: i32, %2: i32):
  %3 = add %1, 1
  %4 = sge %3, LIMIT
  br %4, bb2, bb3
bb2:
  br %1, bb5(%2), bb3
bb3:
  %5 = add %2, 1
  call @putint(%5)
  %6 = slt %3, LIMIT
  br %6, bb1(%3, %5), bb5(%5)
bb5(%7: i32):
  call @putint(%7)
  ret 0
}
"#;

    /// `i = 7; while (i > 3 && g[i - 3] != x) i = i - 1; print(i)` with `x` read:
    /// constants bound the trips (at most five header entries), data decide the
    /// exit on the way.
    const SEARCH: &str = r#"
global @g: [i32; 8] = [10, 11, 12, 13, 14, 15, 16, 17]

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(START)
bb1(%1: i32):
  %2 = sgt %1, 3
  br %2, bb2, bb4(%1)
bb2:
  %3 = add %1, -3
  %4 = gep @g, %3, 4
  %5 = load i32, %4
  %6 = eq %5, %0
  br %6, bb4(%1), bb3
bb3:
  %7 = add %1, -1
  jump bb1(%7)
bb4(%8: i32):
  call @putint(%8)
  ret 0
}
"#;

    #[test]
    fn a_loop_bounded_by_constants_with_data_exits_is_peeled_completely() {
        let src = SEARCH.replace("START", "7");
        for x in ["10", "11", "13", "14", "15", "99"] {
            let out = same_behaviour(&src, &["cunroll"], x);
            // Every copy's address is a constant: no `add` of the counter is left.
            assert!(!out.contains("bb1(") && !out.contains("add "), "{out}");
            assert_eq!(out.matches("load i32").count(), 4, "{out}");
        }
        // Too many copies for a loop whose exits stay: left alone.
        let long = SEARCH
            .replace("START", "60")
            .replace("[i32; 8]", "[i32; 64]");
        let long = long.replace(
            "[10, 11, 12, 13, 14, 15, 16, 17]",
            &format!(
                "[{}]",
                (0..64)
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        let out = same_behaviour(&long, &["cunroll"], "30");
        assert!(out.contains("bb1("), "{out}");
    }

    #[test]
    fn a_loop_with_a_constant_break_becomes_its_iterations() {
        let src = BREAKS.replace("LIMIT", "3");
        let out = same_behaviour(&src, &["cunroll"], "40");
        let main = &out[out.find("func @main").unwrap()..];
        // Two iterations print, the third breaks: no block is entered twice.
        assert_eq!(main.matches("call @putint(").count(), 3, "{out}");
        assert!(!main.contains(" br "), "every branch folded: {out}");
        for input in ["0", "-7"] {
            same_behaviour(&src, &["cunroll"], input);
        }
    }

    /// BREAKS entered by a branch whose both arms reach the header (no preheader:
    /// simplifycfg folds a jump block into the branch before it), passing the
    /// counter `first` and `second`.
    fn entered_by_a_branch(first: &str, second: &str) -> String {
        BREAKS.replace("LIMIT", "3").replace(
            "  jump bb1(0, %0)\n",
            &format!("  %9 = slt %0, 0\n  br %9, bb1({first}, %0), bb1({second}, 5)\n"),
        )
    }

    #[test]
    fn a_loop_entered_by_both_arms_of_a_branch_is_unrolled_from_what_they_agree_on() {
        let src = entered_by_a_branch("0", "0");
        for input in ["40", "-7"] {
            let out = same_behaviour(&src, &["cunroll"], input);
            let main = &out[out.find("func @main").unwrap()..];
            // Every copy's tests folded: straight-line code after the entry branch.
            assert!(!main.contains("sge") && !main.contains("jump"), "{out}");
            assert_eq!(main.matches("call @putint(").count(), 3, "{out}");
        }
    }

    #[test]
    fn a_loop_whose_entry_edges_disagree_on_the_counter_stays() {
        let src = entered_by_a_branch("0", "1");
        for input in ["40", "-7"] {
            let out = same_behaviour(&src, &["cunroll"], input);
            assert!(out.contains("sge"), "{out}");
        }
    }

    #[test]
    fn loops_that_constants_do_not_decide_or_that_run_long_stay() {
        // The limit is read at run time.
        let unknown = BREAKS.replace("LIMIT", "%8").replace(
            "  %0 = call @getint()\n",
            "  %0 = call @getint()\n  %8 = call @getint()\n",
        );
        let out = same_behaviour(&unknown, &["cunroll"], "5 4");
        assert!(out.contains("bb1("), "{out}");
        // More iterations than allowed.
        let long = BREAKS.replace("LIMIT", &(MAX_TRIPS + 2).to_string());
        let out = same_behaviour(&long, &["cunroll"], "5");
        assert!(out.contains("bb1("), "{out}");
        // Exactly the allowed number of iterations is unrolled.
        let most = BREAKS.replace("LIMIT", &MAX_TRIPS.to_string());
        let out = same_behaviour(&most, &["cunroll"], "5");
        assert!(!out.contains("bb1("), "{out}");
    }

    #[test]
    fn values_from_either_exit_reach_the_code_after_the_loop() {
        // `for (i = 0; i < 6; i++) { t = i * 5; if (t > 12) break; print(t); }` then print
        // `t` (defined in the loop, used after it directly) and `i`.
        let src = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0)
bb1(%0: i32):
  %1 = mul %0, 5
  %2 = sgt %1, 12
  br %2, bb3(%0), bb2
bb2:
  call @putint(%1)
  %3 = add %0, 1
  %4 = slt %3, 6
  br %4, bb1(%3), bb3(%3)
bb3(%5: i32):
  call @putint(%1)
  call @putint(%5)
  ret 0
}
"#;
        let out = same_behaviour(src, &["cunroll"], "");
        assert!(!out.contains(" br "), "{out}");
        // And when the loop runs to its end instead.
        let full = src.replace("sgt %1, 12", "sgt %1, 100");
        let out = same_behaviour(&full, &["cunroll"], "");
        assert!(!out.contains(" br "), "{out}");
    }

    /// for (i = 0; i < 4; i++) for (j = 0; j < 4; j++) { if (j > LIMIT) break;
    /// s += getint(); }
    const NEST: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  jump bb2(0, %1)
bb2(%2: i32, %3: i32):
  %4 = sgt %2, LIMIT
  br %4, bb4(%3), bb3
bb3:
  %5 = call @getint()
  %6 = add %3, %5
  %7 = add %2, 1
  %8 = slt %7, 4
  br %8, bb2(%7, %6), bb4(%6)
bb4(%9: i32):
  %10 = add %0, 1
  %11 = slt %10, 4
  br %11, bb1(%10, %9), bb5
bb5:
  call @putint(%9)
  ret 0
}
"#;

    #[test]
    fn a_nest_decided_by_constants_unrolls_from_the_inside() {
        // The inner loop reads twice: its two iterations. The outer loop is then a
        // single block, which is `unroll`'s to take.
        let src = NEST.replace("LIMIT", "1");
        let input = "1 2 3 4 5 6 7 8 9 10";
        let out = same_behaviour(&src, &["cunroll"], input);
        let main = &out[out.find("func @main").unwrap()..];
        assert_eq!(main.matches("call @getint()").count(), 2, "{out}");
        assert_eq!(main.matches(" br ").count(), 1, "{out}");
        let out = same_behaviour(&src, &["cunroll", "unroll", "sccp", "simplifycfg"], input);
        let main = &out[out.find("func @main").unwrap()..];
        assert_eq!(main.matches("call @getint()").count(), 8, "{out}");
        assert!(!main.contains(" br "), "{out}");
        // An inner loop whose exit also depends on the outer counter (`j > i`)
        // ends at its constant bound at the latest: its four iterations are
        // peeled, each keeping its test of `j > i`; the outer loop is then
        // decided by constants, and in each of its copies the tests fold: 1 + 2 +
        // 3 + 4 reads.
        let src = NEST.replace("LIMIT", "%0");
        let out = same_behaviour(&src, &["cunroll"], input);
        let main = &out[out.find("func @main").unwrap()..];
        assert_eq!(main.matches("call @getint()").count(), 10, "{out}");
        assert!(!main.contains(" br "), "{out}");
    }

    /// `for (i = 0; i < 100; i++) { if (i == STOP) break; s = s + i * K; }` then
    /// print `s` and `i`.
    const SUMS: &str = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %20 = call @getint()
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = eq %0, STOP
  br %2, bb3(%0, %1), bb2
bb2:
  %3 = mul %0, K
  %4 = add %1, %3
  %5 = add %0, 1
  %6 = slt %5, 100
  br %6, bb1(%5, %4), bb3(%5, %4)
bb3(%7: i32, %8: i32):
  call @putint(%8)
  call @putint(%7)
  ret 0
}
"#;

    #[test]
    fn a_loop_of_constants_is_its_results() {
        let src = SUMS.replace("STOP", "50").replace("K", "1");
        let out = same_behaviour(&src, &["cunroll"], "3");
        let main = &out[out.find("func @main").unwrap()..];
        assert!(main.contains("(50, 1225)"), "{out}");
        assert!(!main.contains(" br "), "{out}");
        // Running to the end: 100 iterations.
        let src = SUMS.replace("STOP", "-1").replace("K", "3");
        let out = same_behaviour(&src, &["cunroll"], "3");
        assert!(out.contains("(100, 14850)"), "{out}");
    }

    #[test]
    fn loops_with_unknown_results_or_too_long_are_not_evaluated() {
        // A result depends on the input: not constant (and too long to unroll).
        let src = SUMS.replace("STOP", "50").replace("K", "%20");
        let out = same_behaviour(&src, &["cunroll"], "3");
        assert!(out.contains("bb1("), "{out}");
        // A division by zero on the way stays to trap.
        let src = SUMS.replace("STOP", "50").replace("K", "1").replace(
            "  %4 = add %1, %3\n",
            "  %9 = sdiv %3, 0\n  %4 = add %1, %9\n",
        );
        let out = crate::passes::testutil::run(&src, &["cunroll"]);
        assert!(out.contains("sdiv"), "{out}");
        // More than MAX_EVAL_STEPS instructions: a nest would be, a counter to
        // 10^6 is.
        let src = SUMS
            .replace("STOP", "-1")
            .replace("K", "1")
            .replace("slt %5, 100", "slt %5, 1000000");
        let out = same_behaviour(&src, &["cunroll"], "3");
        assert!(out.contains("bb1("), "{out}");
    }
}
