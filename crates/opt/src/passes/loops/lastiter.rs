//! Only the last iteration: a counted loop without side effects, whose iterations
//! share nothing but the counter, leaves the values of its last iteration and
//! nothing else, so it runs that iteration alone.
//!
//! ```text
//!   i = 2; do { x = clamp(g + i); i = i + 1; } while (i < 21);   use(x)
//!   =>
//!   i = 20; x = clamp(g + 20);                                   use(x)
//! ```
//!
//! This is what LLVM obtains by combining the sinking half of `LICM` (a loop
//! computation whose uses are all outside the loop moves into the exit block, a
//! whole side-effect-free body included once its control flow is flattened) with
//! `IndVarSimplify`'s exit value rewriting (the counter's value on exit is a closed
//! form of its start and the trip count), after which `LoopDeletion` removes the
//! empty loop; GCC's final value replacement (`tree-scalar-evolution.c`,
//! `final_value_replacement_loop`) and loop deletion do the same for values with a
//! closed form. Here the body is kept, with its control flow, and run once with the
//! counter at its last value, which covers values without a closed form
//! (conversions, comparisons, a clamp made of branches):
//!
//! - the loop is rotated ([`RotatedLoop`]) and leaves only at its latch;
//! - no block of the loop (inner loops included) writes memory, calls a function
//!   with side effects or allocates: every iteration then reads the same memory;
//! - one header parameter, the counter, is an add-recurrence `{start,+,step}` of
//!   the loop, whatever arithmetic passes it back (`i + c`, `i - c`,
//!   `(i + 1) + 1`), and the scalar evolution
//!   ([`crate::analysis::scev::tripcount`]) finds a constant number of back edges
//!   taken at the latch that holds without predicates (any test it solves: `<`,
//!   `<=`, `>`, `>=`, `!=`, on the counter or its next value, against a bound
//!   invariant in the loop); the counter's last value is the scalar evolution's
//!   value of its recurrence after that many iterations
//!   ([`ScalarEvolution::value_at`], modulo 2^32 as the loop's own steps): a
//!   constant when the start and step are, else an invariant expression (`n + 4`
//!   for `i = n; do ... while (++i != n + 5)`) expanded before the preheader's
//!   jump ([`crate::analysis::scev::expand`]; the loop stays when it cannot be);
//! - every other header parameter is invariant (the same value on entry and on the
//!   back edge), read by nothing but the back edge (a variable each iteration
//!   overwrites before reading it), or given on the back edge a value defined
//!   before the loop (`x = 0; do { use(x); x = n; } while (...)`: invariant after
//!   the first iteration, as LLVM's `LoopPeel` finds a phi's iterations to
//!   invariance): no other value flows from one iteration to the next.
//!
//! Then an iteration's values depend only on the counter, and the values leaving
//! the loop are those of the last iteration. The counter starts at its last value
//! and the latch's branch becomes a jump to the exit; a parameter invariant after
//! the first iteration starts at its back edge's value, which the last iteration
//! (never the first: the loop runs at least twice) sees. Earlier iterations could
//! only have trapped (a division by zero, an access out of bounds): behaviour the
//! program does not define.

use crate::analysis::scev::expand::{remove_emitted, Expander};
use crate::analysis::scev::{ExprId, ScalarEvolution};
use crate::analysis::RotatedLoop;
use crate::analysis::{AnalysisManager, FunctionAnalyses, LoopId, Preserved, Purity};
use crate::pipeline::Pass;
use ir::{BlockCall, Function, InstKind, Module, Value};

/// The pass.
pub struct LastIter;

impl Pass for LastIter {
    fn name(&self) -> &'static str {
        "lastiter"
    }
    fn description(&self) -> &'static str {
        "a side-effect-free counted loop sharing only its counter runs its last iteration alone"
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let purity = am.purity(m);
        am.each_function(m, |f, fa| run_in(f, &purity, fa) > 0)
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
}

/// Makes every qualifying loop of `f` run its last iteration only; how many.
pub fn run(f: &mut Function, purity: &Purity) -> usize {
    run_in(f, purity, &mut FunctionAnalyses::default())
}

/// A loop found: its shape, the counter's header parameter index and last value.
struct Found {
    rl: RotatedLoop,
    index: usize,
    /// The counter's last value: an `i32` expression invariant in the loop.
    last: ExprId,
    /// Header parameters invariant after the first iteration, with the value
    /// the back edge gives them.
    settled: Vec<(usize, Value)>,
}

fn run_in(f: &mut Function, purity: &Purity, fa: &mut FunctionAnalyses) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let (found, exprs) = {
        let mut se = fa.scev(f);
        let loops = se.loops;
        // Outermost first; a loop inside one already chosen is left alone (its
        // outer loop's blocks are rewritten below, and both rewrites would be
        // valid, but one at a time keeps the analysis simple).
        let mut chosen: Vec<(LoopId, Found)> = Vec::new();
        for (l, _) in loops.loops() {
            if let Some(found) = qualifies(&mut se, l, purity) {
                chosen.push((l, found));
            }
        }
        if chosen.is_empty() {
            return 0;
        }
        let mut keep = Vec::new();
        for (l, found) in &chosen {
            let h = loops.get(*l).header;
            let nested = chosen.iter().any(|(o, _)| o != l && loops.contains(*o, h));
            if !nested {
                keep.push(Found {
                    rl: found.rl.clone(),
                    index: found.index,
                    last: found.last,
                    settled: found.settled.clone(),
                });
            }
        }
        (keep, std::mem::take(&mut se.exprs))
    };
    // Its expressions are taken: the analysis is started anew next time.
    fa.forget_scev();
    let dt = fa.loops(f).1;
    let mut done = 0;
    for fd in &found {
        let pre = f.terminator(fd.rl.preheader).expect("preheader has a jump");
        // The last value before the preheader's jump. Values that dominate the
        // preheader still do after the rewrites of other loops (which only take
        // edges away), so the dominator tree from before them is safe to ask.
        let preheader = fd.rl.preheader;
        let available =
            |f: &Function, v: Value| f.value_block(v).is_none_or(|b| dt.dominates(b, preheader));
        let emitted_after = f.layout.prev_inst(pre);
        let mut ex = Expander::new(&exprs, pre, pre, EXPANSION_BUDGET);
        let Some(last) = ex.expand(f, fd.last, &available) else {
            remove_emitted(f, emitted_after, pre);
            continue;
        };
        // The counter starts at its last value: in the preheader's jump, and in
        // the loop itself (the header keeps the entry edge only).
        let mut call: BlockCall = f.kind(pre).targets()[0].clone();
        call.args[fd.index] = last;
        // Defined before the loop, so before the preheader's jump too (a block
        // outside the loop that dominates the latch dominates the preheader).
        for &(k, v) in &fd.settled {
            call.args[k] = v;
        }
        f.set_target(pre, 0, call);
        let param = f.block_params(fd.rl.header)[fd.index];
        f.replace_all_uses(param, last);
        let exit = f.kind(fd.rl.branch).targets()[fd.rl.exit()].clone();
        f.replace_kind(
            fd.rl.branch,
            InstKind::Jump {
                dest: Box::new(exit),
            },
        );
        done += 1;
    }
    if done > 0 {
        fa.forget();
    }
    done
}

/// How many instructions the counter's last value may take to expand.
const EXPANSION_BUDGET: usize = 8;

/// Loop `l` when it qualifies (module documentation), with its counter.
fn qualifies(se: &mut ScalarEvolution, l: LoopId, purity: &Purity) -> Option<Found> {
    let (f, loops) = (se.f, se.loops);
    let rl = RotatedLoop::of(f, se.cfg, loops, l)?;
    let lp = loops.get(l);
    let inside = |v: Value| f.value_block(v).is_some_and(|b| loops.contains(l, b));
    let (init, next) = (rl.init_args(f), rl.next_args(f));
    let mut counter = None;
    let mut settled = Vec::new();
    for (k, &p) in f.block_params(rl.header).iter().enumerate() {
        let invariant = (next[k] == init[k] || next[k] == p) && !inside(init[k]);
        let exit_args = &f.kind(rl.branch).targets()[rl.exit()].args;
        let unread = f.users(p).iter().all(|&u| u == rl.branch) && !exit_args.contains(&p);
        if invariant || unread {
            continue;
        }
        if next[k] != p && !inside(next[k]) {
            settled.push((k, next[k]));
            continue;
        }
        if counter.is_some() {
            return None;
        }
        counter = Some(k);
    }
    let index = counter?;
    let last = last_value(se, l, &rl, f.block_params(rl.header)[index])?;
    // Last, the walks over the loop's blocks (inner loops' included: run for every
    // loop of a deep nest before the cheap tests, they made the pass quadratic).
    if lp
        .blocks
        .iter()
        .any(|&b| b != rl.latch && f.successors(b).iter().any(|&s| !loops.contains(l, s)))
    {
        return None;
    }
    for &b in lp.blocks.iter() {
        for i in f.layout.block_insts(b) {
            match f.kind(i) {
                InstKind::Store { .. } | InstKind::Alloc { .. } => return None,
                InstKind::Call { callee, .. } if purity.effects(*callee).has_side_effects() => {
                    return None
                }
                _ => {}
            }
        }
    }
    Some(Found {
        rl,
        index,
        last,
        settled,
    })
}

/// The value of `counter`, a header parameter of rotated loop `l`, on the loop's
/// last iteration, as an expression invariant in `l`: its scalar evolution's
/// value ([`ScalarEvolution::value_at`]) after the constant number `taken >= 1`
/// of times the latch is taken back (the loop runs at least twice), when the
/// counter is an `i32` add-recurrence `{start,+,step}<l>`.
fn last_value(
    se: &mut ScalarEvolution,
    l: LoopId,
    rl: &RotatedLoop,
    counter: Value,
) -> Option<ExprId> {
    if se.f.value_type(counter) != ir::Type::I32 {
        return None;
    }
    let e = se.get(counter);
    let (el, ops) = se.exprs.as_addrec(e)?;
    if el != l || ops.len() < 2 {
        return None;
    }
    let count = se.exit_count(l, rl.latch)?;
    if !count.predicates.is_empty() {
        return None;
    }
    se.exprs.as_const(count.count).filter(|&t| t >= 1)?;
    let last = se.value_at(e, l, count.count)?;
    se.invariant(last, l).then_some(last)
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    const PRELUDE: &str =
        "declare @putint(i32) -> void\ndeclare @putfloat(f32) -> void\ndeclare @getint() -> i32\n";

    /// `i = 2; do { x = clamp(g + i) } while (++i < 21)`: runs once with `i = 20`.
    #[test]
    fn runs_the_last_iteration_of_a_clamp_loop() {
        let src = format!(
            "global @g: f32 = 1000000.5
{PRELUDE}
func @main() -> i32 {{
bb0:
  %0 = load f32, @g
  %1 = call @getint()
  jump bb1(2)
bb1(%2: i32):
  %3 = add %1, %2
  %4 = sitofp %3
  %5 = fadd %0, %4
  %6 = fgt %5, 1000012.0
  br %6, bb2(1000012.0), bb2(%5)
bb2(%7: f32):
  %8 = add %2, 3
  %9 = slt %8, 21
  br %9, bb1(%8), bb3
bb3:
  call @putfloat(%7)
  call @putint(%8)
  ret 0
}}
"
        );
        for input in ["0", "-5", "7"] {
            let out = same_behaviour(&src, &["lastiter"], input);
            assert!(out.contains("jump bb1(20)"), "{out}");
            assert!(!out.contains("br %9"), "{out}");
        }
    }

    /// A counter stepping down, tested before the step with `sge`.
    #[test]
    fn steps_down() {
        let src = format!(
            "{PRELUDE}
func @main() -> i32 {{
bb0:
  %0 = call @getint()
  jump bb1(9)
bb1(%1: i32):
  %2 = mul %1, %0
  %3 = add %1, -2
  %4 = sge %1, 0
  br %4, bb1(%3), bb2
bb2:
  call @putint(%2)
  call @putint(%3)
  ret 0
}}
"
        );
        let out = same_behaviour(&src, &["lastiter"], "3");
        assert!(out.contains("jump bb1(-1)"), "{out}");
    }

    /// `x` is `%0` on entry and `n` on every back edge: the last iteration
    /// (the loop runs 5 times) sees `n`.
    #[test]
    fn a_parameter_invariant_after_the_first_iteration_takes_its_back_value() {
        let src = format!(
            "{PRELUDE}
func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %10 = call @getint()
  jump bb1(0, %0)
bb1(%1: i32, %2: i32):
  %3 = mul %2, 3
  %4 = add %3, %1
  %5 = add %1, 1
  %6 = slt %5, 5
  br %6, bb1(%5, %10), bb2
bb2:
  call @putint(%4)
  ret 0
}}
"
        );
        for input in ["1 2", "7 -3"] {
            let out = same_behaviour(&src, &["lastiter"], input);
            assert!(out.contains("jump bb1(4, %1)"), "{out}");
        }
        // Once only (the test fails at 0 + 1): the first iteration is the
        // last and sees the entry value; the loop is left alone.
        let once = src.replace("slt %5, 5", "slt %5, 1");
        let out = same_behaviour(&once, &["lastiter"], "1 2");
        assert!(out.contains("jump bb1(0, %0)"), "{out}");
        // The back edge passes a value of the loop (the previous iteration's):
        // carried, the loop stays.
        let carried = src.replace("bb1(%5, %10)", "bb1(%5, %4)");
        let out = same_behaviour(&carried, &["lastiter"], "1 2");
        assert_eq!(out, run(&carried, &[]), "{out}");
    }

    /// A store, a value carried from one iteration to the next, a second exit
    /// or a bound that is not a constant keep the loop.
    #[test]
    fn keeps_loops_whose_earlier_iterations_matter() {
        let store = format!(
            "global @a: [i32; 8] = zeroinit
{PRELUDE}
func @main() -> i32 {{
bb0:
  jump bb1(0)
bb1(%1: i32):
  %2 = gep @a, %1, 4
  store %1, %2
  %3 = add %1, 1
  %4 = slt %3, 8
  br %4, bb1(%3), bb2
bb2:
  %5 = gep @a, 3, 4
  %6 = load i32, %5
  call @putint(%6)
  ret 0
}}
"
        );
        let carried = format!(
            "{PRELUDE}
func @main() -> i32 {{
bb0:
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, %1
  %4 = add %1, 1
  %5 = slt %4, 8
  br %5, bb1(%4, %3), bb2
bb2:
  call @putint(%3)
  ret 0
}}
"
        );
        let exits = format!(
            "{PRELUDE}
func @main() -> i32 {{
bb0:
  %0 = call @getint()
  jump bb1(0)
bb1(%1: i32):
  %2 = eq %1, %0
  br %2, bb3, bb4
bb4:
  %3 = add %1, 1
  %4 = slt %3, 8
  br %4, bb1(%3), bb2
bb2:
  call @putint(%3)
  ret 0
bb3:
  call @putint(%1)
  ret 1
}}
"
        );
        let bound = format!(
            "{PRELUDE}
func @main() -> i32 {{
bb0:
  %0 = call @getint()
  jump bb1(0)
bb1(%1: i32):
  %2 = mul %1, 3
  %3 = add %1, 1
  %4 = slt %3, %0
  br %4, bb1(%3), bb2
bb2:
  call @putint(%2)
  ret 0
}}
"
        );
        for src in [&store, &carried, &exits, &bound] {
            let out = same_behaviour(src, &["lastiter"], "5");
            assert_eq!(out, run(src, &[]), "{out}");
        }
    }

    /// `i = 1; do { x = i * n; i = STEP(i) } while (TEST)`, printing `x`:
    /// `step` defines `%3` from `%1`, `test` defines `%4`.
    fn stepped(step: &str, test: &str) -> String {
        format!(
            "{PRELUDE}
func @main() -> i32 {{
bb0:
  %0 = call @getint()
  jump bb1(1)
bb1(%1: i32):
  %2 = mul %1, %0
{step}
  %4 = {test}
  br %4, bb1(%3), bb2
bb2:
  call @putint(%2)
  ret 0
}}
"
        )
    }

    /// Counters passed back by a subtraction or by two additions, and tests
    /// the scalar evolution solves (`!=`, `>` on a counter stepping down).
    #[test]
    fn counters_the_scalar_evolution_describes_run_their_last_iteration() {
        for (step, test, last) in [
            // 1, 4, 7, 10: the last is 10.
            ("  %3 = sub %1, -3", "slt %3, 12", "jump bb1(10)"),
            // 1, 3, 5, 7.
            (
                "  %5 = add %1, 1\n  %3 = add %5, 1",
                "ne %3, 9",
                "jump bb1(7)",
            ),
            // 1, -1, -3: tested before the step.
            ("  %3 = sub %1, 2", "sgt %1, -3", "jump bb1(-3)"),
        ] {
            let out = same_behaviour(&stepped(step, test), &["lastiter"], "5");
            assert!(out.contains(last), "{step} / {test}:\n{out}");
        }
    }

    /// A counter that doubles is no add-recurrence; a count that holds only if
    /// the bound read from the input is reached without a wrap; a `!=` test the
    /// counter steps over: the loops stay.
    #[test]
    fn counters_without_a_constant_count_stay() {
        for (step, test) in [
            ("  %3 = mul %1, 2", "slt %3, 100"),
            ("  %3 = add %1, 1", "sle %3, %0"),
            ("  %3 = add %1, 2", "ne %3, 10"),
        ] {
            let src = stepped(step, test);
            assert_eq!(run(&src, &["lastiter"]), run(&src, &[]), "{step} / {test}");
        }
    }

    /// `i = n; do { x = i * n } while (++i != n + 5)`: the start is not a
    /// constant, the count (4 back edges) is; the last value `n + 4` that the
    /// scalar evolution gives is computed before the loop, wrapping as the loop
    /// does at the end of `i32`.
    #[test]
    fn a_counter_from_an_invariant_start_takes_its_value_after_the_count() {
        let src = stepped("  %3 = add %1, 1", "ne %3, %10")
            .replace("jump bb1(1)", "%10 = add %0, 5\n  jump bb1(%0)");
        for input in ["0", "-7", "2147483645", "2147483647"] {
            let out = same_behaviour(&src, &["lastiter"], input);
            assert!(!out.contains("br %4"), "{out}");
            assert!(out.contains("add %0, 4"), "{out}");
        }
    }
}
