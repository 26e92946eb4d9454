//! Hoisting of loop-invariant inner loops: an inner loop whose result does not
//! depend on the outer loop's iteration runs once, before the outer loop, instead of
//! once per outer iteration.
//!
//! Loop-invariant code motion (Aho, Lam, Sethi and Ullman, "Compilers", 9.5.2)
//! applied to a whole loop, as a region of invariant computations (loop-invariant
//! loop motion; GCC's `loop-im` moves invariant statements, and loop-nest
//! optimisers such as LLVM's LoopInterchange/LICM of sub-loops follow the same
//! conditions), with one addition from reduction analysis: an accumulator that the
//! inner loop only adds to (`acc = acc + x`, `x` not depending on `acc`) is
//! re-associated (wrapping addition is associative), so the inner loop sums from 0
//! and the outer iteration adds its own starting value afterwards. Then nothing in
//! the inner loop depends on the outer iteration.
//!
//! Conditions (the inner loop `I`, directly inside the outer loop `O`):
//! - `O` is rotated (its only exit is its latch) and has no store and no call, so
//!   the memory `I` reads is the same on every outer iteration and before `O`;
//! - `I` is rotated and certainly terminates, as the scalar evolution finds it
//!   ([`ScalarEvolution::terminates`]: its latch's test has an exit count that holds
//!   unconditionally, whatever recurrence of a constant step it tests with `<`,
//!   `<=`, `>`, `>=` or `!=`, up or down: `i != n` by one from any start,
//!   `2 * i < n`; or it has a [`Counter`] whose inclusive test the memory it
//!   accesses keeps from wrapping). A counter that could wrap before its test
//!   fails (`i < n` by 3 toward an unknown `n`, `i != 7` by 2 from 0) or one
//!   stepping by an unknown amount is refused. It has no inner loop, no
//!   store, no call, no division that could trap; it is entered by a `jump` from a
//!   block `A` of `O` that dominates `O`'s latch (so `I` runs on every outer
//!   iteration, the first included: running it once before `O` runs nothing the
//!   program would not have run), and left through one edge to a block `E` that
//!   only `I` reaches;
//! - every operand in `I` is defined in `I` or outside `O`, except the starting
//!   values of accumulators; an accumulator parameter is used only by its addition,
//!   and its values leave `I` only through the exit (used in `O`).
//!
//! The rewrite: `O`'s preheader enters `I` (accumulators starting at 0), `I` exits
//! to a new block that enters `O`, and `A` jumps straight to `E`, adding each
//! accumulator's outer starting value to the value `I` computed.

use crate::analysis::scev::ScalarEvolution;
use crate::analysis::{Counter, LoopId, RotatedLoop};
use crate::analysis::{FunctionAnalyses, Preserved};
use crate::pipeline::FunctionTransform;
use ir::{BinOp, Block, BlockCall, Function, Inst, InstKind, Type, Value};

/// The inner-loop hoisting pass.
pub struct HoistLoops;

impl FunctionTransform for HoistLoops {
    const NAME: &'static str = "hoistloops";
    const DESCRIPTION: &'static str =
        "run inner loops that do not depend on the outer iteration once, before it";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// Hoists every qualifying inner loop of `f`; returns how many.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// [`run`], starting from the analyses cached in `fa` (left holding those of the
/// last round).
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    // Each hoist changes the CFG; a function has finitely many loop pairs and a
    // hoisted loop leaves its outer loop, so this ends.
    fa.rounds(f, 64, |f, fa| {
        let mut se = fa.scev(f);
        let loops = se.loops;
        let plan = loops.loops().find_map(|(id, _)| Plan::of(&mut se, id))?;
        plan.apply(f);
        Some(1)
    })
}

struct Plan {
    /// The outer loop's preheader and header.
    outer_preheader: Block,
    /// The inner loop's entry block in the outer loop, its header and latch.
    entry: Block,
    inner: RotatedLoop,
    inner_blocks: Vec<Block>,
    /// Per inner header parameter: whether it is an accumulator.
    accumulators: Vec<bool>,
}

impl Plan {
    fn of(se: &mut ScalarEvolution, id: LoopId) -> Option<Plan> {
        let (f, cfg, dt, loops) = (se.f, se.cfg, se.dt, se.loops);
        let lp = loops.get(id);
        let outer_id = lp.parent?;
        if !lp.children.is_empty() {
            return None;
        }
        let outer = RotatedLoop::of(f, cfg, loops, outer_id)?;
        let inner = RotatedLoop::of(f, cfg, loops, id)?;
        if !se.terminates(id) && Counter::of_scev(se, id, &inner).is_none() {
            return None;
        }
        let in_outer = |b: Block| loops.contains(outer_id, b);
        let in_inner = |b: Block| loops.contains(id, b);
        // The outer loop neither stores nor calls.
        for &b in &loops.get(outer_id).blocks {
            for i in f.layout.block_insts(b) {
                if matches!(f.kind(i), InstKind::Store { .. } | InstKind::Call { .. }) {
                    return None;
                }
            }
        }
        // Entered by a jump from a block of O that runs on every outer iteration.
        let entry = inner.preheader;
        let entry_term = f.terminator(entry)?;
        if !matches!(f.kind(entry_term), InstKind::Jump { .. })
            || !in_outer(entry)
            || !dt.dominates(entry, outer.latch)
        {
            return None;
        }
        // Left through one edge, to a block only I reaches.
        let exit = f.kind(inner.branch).targets()[inner.exit()].block;
        if cfg.unique_preds(exit)[..] != [inner.latch] || !in_outer(exit) {
            return None;
        }
        for &b in &lp.blocks {
            if b != inner.latch && cfg.succs(b).iter().any(|&s| !in_inner(s)) {
                return None;
            }
        }
        // Nothing in I with an effect or a possible trap; operands from I or
        // outside O.
        let params = f.block_params(inner.header).to_vec();
        let inits = inner.init_args(f).to_vec();
        let invariant = |v: Value| f.value_block(v).is_none_or(|b| !in_outer(b));
        for &b in &lp.blocks {
            for i in f.layout.block_insts(b) {
                let k = f.kind(i);
                match k {
                    InstKind::Store { .. } | InstKind::Call { .. } | InstKind::Alloc { .. } => {
                        return None
                    }
                    InstKind::Binary { op, args }
                        if op.can_trap()
                            && !matches!(f.as_iconst(args[1]), Some(c) if c != 0 && c != -1) =>
                    {
                        return None
                    }
                    _ => {}
                }
                let mut ok = true;
                k.for_each_arg(|a| {
                    ok &= f.value_block(a).is_none_or(in_inner) || invariant(a);
                });
                if !ok {
                    return None;
                }
            }
        }
        // Each header parameter starts invariant or is an accumulator.
        let mut accumulators = Vec::new();
        for (k, &p) in params.iter().enumerate() {
            if invariant(inits[k]) {
                accumulators.push(false);
                continue;
            }
            if f.value_type(p) != Type::I32 || !is_accumulator(f, &inner, &in_inner, k) {
                return None;
            }
            accumulators.push(true);
        }
        // Values of I used outside I stay inside O.
        for &b in &lp.blocks {
            let results = f.layout.block_insts(b).filter_map(|i| f.inst_result(i));
            for v in f.block_params(b).iter().copied().chain(results) {
                for &u in f.users(v) {
                    let ub = f.layout.inst_block(u)?;
                    if in_inner(ub) {
                        continue;
                    }
                    if !in_outer(ub) {
                        return None;
                    }
                }
            }
        }
        Some(Plan {
            outer_preheader: outer.preheader,
            entry,
            inner,
            inner_blocks: lp.blocks.to_vec(),
            accumulators,
        })
    }

    fn apply(self, f: &mut Function) {
        let params = f.block_params(self.inner.header).to_vec();
        let inits = self.inner.init_args(f).to_vec();
        let nexts = self.inner.next_args(f).to_vec();
        let entry_term = f.terminator(self.entry).expect("the entry jumps into I");
        // In A: each accumulator's outer start plus what I computed from 0; uses
        // outside I take those sums.
        let zero = f.iconst(0);
        for (k, &acc) in self.accumulators.iter().enumerate() {
            if !acc {
                continue;
            }
            for v in [params[k], nexts[k]] {
                let outside: Vec<Inst> = f
                    .users(v)
                    .iter()
                    .copied()
                    .filter(|&u| {
                        let b = f.layout.inst_block(u).expect("a user is placed");
                        // The exit edge's arguments are handled below; the branch
                        // is in I.
                        !self.inner_blocks.contains(&b)
                    })
                    .collect();
                let exit_arg = f.kind(self.inner.branch).targets()[self.inner.exit()]
                    .args
                    .contains(&v);
                if outside.is_empty() && !exit_arg {
                    continue;
                }
                let sum = f.insert_inst_before(
                    entry_term,
                    InstKind::Binary {
                        op: BinOp::Add,
                        args: [inits[k], v],
                    },
                    Type::I32,
                );
                let sum = f.inst_result(sum).expect("an add has a result");
                for u in outside {
                    f.map_inst_args(u, |a| if a == v { sum } else { a });
                }
                let mut exit = f.kind(self.inner.branch).targets()[self.inner.exit()].clone();
                for a in exit.args.iter_mut() {
                    if *a == v {
                        *a = sum;
                    }
                }
                f.set_target(self.inner.branch, self.inner.exit(), exit);
            }
        }
        // A goes straight to E with the exit edge's arguments.
        let exit_call = f.kind(self.inner.branch).targets()[self.inner.exit()].clone();
        f.replace_kind(
            entry_term,
            InstKind::Jump {
                dest: Box::new(exit_call),
            },
        );
        // O's preheader runs I (accumulators from 0); I leaves to a new preheader.
        let outer_term = f
            .terminator(self.outer_preheader)
            .expect("a preheader ends in a jump");
        let outer_entry = f.kind(outer_term).targets()[0].clone();
        let starts: Vec<Value> = inits
            .iter()
            .zip(&self.accumulators)
            .map(|(&v, &acc)| if acc { zero } else { v })
            .collect();
        f.replace_kind(
            outer_term,
            InstKind::Jump {
                dest: Box::new(BlockCall::new(self.inner.header, starts)),
            },
        );
        let new_preheader = f.create_block();
        f.layout
            .insert_block_after(new_preheader, self.outer_preheader);
        f.append_inst(
            new_preheader,
            InstKind::Jump {
                dest: Box::new(outer_entry),
            },
            Type::Void,
        );
        f.set_target(
            self.inner.branch,
            self.inner.exit(),
            BlockCall::new(new_preheader, Vec::new()),
        );
    }
}

/// Whether header parameter `k` of `l` only accumulates: its next value is
/// `p + x`, `p`'s only user is that addition, and the next value is used in the
/// loop only as the back edge's argument `k` (and possibly on the exit edge).
fn is_accumulator(
    f: &Function,
    l: &RotatedLoop,
    in_loop: &dyn Fn(Block) -> bool,
    k: usize,
) -> bool {
    let p = f.block_params(l.header)[k];
    let next = l.next_args(f)[k];
    let Some(add) = f.def_inst(next) else {
        return false;
    };
    let InstKind::Binary {
        op: BinOp::Add,
        args: [x, y],
    } = *f.kind(add)
    else {
        return false;
    };
    if (x == p) == (y == p) || f.users(p).iter().any(|&u| u != add) {
        return false;
    }
    let back = l.next_args(f);
    if back.iter().enumerate().any(|(j, &a)| a == next && j != k) {
        return false;
    }
    f.users(next)
        .iter()
        .all(|&u| u == l.branch || !f.layout.inst_block(u).is_some_and(in_loop))
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// An outer loop over `j < n` whose inner loop sums a global table into the
    /// outer sum, then reduces it modulo 65521.
    const NEST: &str = r#"
global @t: [i32; 50] = [1, 2, 3, 4, 5, 6, 7]

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb1, bb5(0)
bb1:
  jump bb2(0, 0)
bb2(%2: i32, %3: i32):
  jump bb3(0, %3)
bb3(%4: i32, %5: i32):
  %6 = gep @t, %4, 4
  %7 = load i32, %6
  %8 = add %5, %7
  %9 = add %4, 1
  %10 = slt %9, 50
  br %10, bb3(%9, %8), bb4
bb4:
  %11 = add %2, 1
  %12 = srem %8, 65521
  %13 = slt %11, %0
  br %13, bb2(%11, %12), bb5(%12)
bb5(%14: i32):
  call @putint(%14)
  ret 0
}
"#;

    /// Whether `src` after `passes` finishes within `budget` interpreter steps.
    fn steps_within(src: &str, passes: &[&str], stdin: &str, budget: u64) -> bool {
        let out = crate::passes::testutil::run(src, passes);
        let m = ir::parse_module(&out).unwrap();
        crate::passes::testutil::exec_within(&m, stdin, budget).is_some()
    }

    #[test]
    fn invariant_inner_sum_runs_once() {
        for n in ["0", "1", "2", "300"] {
            same_behaviour(NEST, &["hoistloops"], n);
        }
        // 20 000 outer iterations: 50 inner ones each would take millions of steps.
        assert!(!steps_within(NEST, &[], "20000", 500_000));
        assert!(steps_within(NEST, &["hoistloops"], "20000", 500_000));
    }

    /// `NEST` with the inner loop summing squares up to `%21 = (n & 63) + 1`
    /// instead of reading the table, and with `edits` applied.
    fn squares(edits: &[(&str, &str)]) -> String {
        let mut src = NEST
            .replace(
                "  %1 = sgt %0, 0\n",
                "  %1 = sgt %0, 0\n  %20 = and %0, 63\n  %21 = add %20, 1\n",
            )
            .replace(
                "  %6 = gep @t, %4, 4\n  %7 = load i32, %6\n",
                "  %7 = mul %4, %4\n",
            );
        for (from, to) in edits {
            assert!(src.contains(from), "{from}");
            src = src.replace(from, to);
        }
        src
    }

    /// Whether `hoistloops` changes `src`.
    fn hoists(src: &str) -> bool {
        crate::passes::testutil::run(src, &["hoistloops"]) != crate::passes::testutil::run(src, &[])
    }

    /// Inner loops the scalar evolution proves finite whose counter the
    /// latch does not compare directly with a `<` or `>`: `i != n` by one
    /// toward an unknown bound, a test on `2 * (i + 1)`, a down-counting `!=`.
    #[test]
    fn inner_loops_with_any_counted_exit_test_are_hoisted() {
        for edits in [
            vec![("  %10 = slt %9, 50\n", "  %10 = ne %9, %21\n")],
            vec![(
                "  %10 = slt %9, 50\n",
                "  %22 = mul %9, 2\n  %10 = slt %22, 100\n",
            )],
            vec![
                ("  jump bb3(0, %3)\n", "  jump bb3(%21, %3)\n"),
                ("  %9 = add %4, 1\n", "  %9 = sub %4, 1\n"),
                ("  %10 = slt %9, 50\n", "  %10 = ne %9, 0\n"),
            ],
        ] {
            let src = squares(&edits);
            assert!(hoists(&src), "not hoisted: {edits:?}");
            for n in ["1", "7", "100"] {
                same_behaviour(&src, &["hoistloops"], n);
            }
            assert!(!steps_within(&src, &[], "20000", 500_000));
            assert!(steps_within(&src, &["hoistloops"], "20000", 500_000));
        }
    }

    /// Inner loops whose counter could wrap round before its test fails, or
    /// steps by an unknown amount, are not proven finite: they stay.
    #[test]
    fn inner_loops_not_proven_finite_stay() {
        for edits in [
            // By 3 toward an unknown bound: the last step could pass `i32::MAX`.
            vec![
                ("  %9 = add %4, 1\n", "  %9 = add %4, 3\n"),
                ("  %10 = slt %9, 50\n", "  %10 = slt %9, %21\n"),
            ],
            // By 2 from 0, until it equals 7: it never does (it wraps round).
            vec![
                ("  %9 = add %4, 1\n", "  %9 = add %4, 2\n"),
                ("  %10 = slt %9, 50\n", "  %10 = ne %9, 7\n"),
            ],
            // By an unknown step.
            vec![("  %9 = add %4, 1\n", "  %9 = add %4, %21\n")],
        ] {
            assert!(!hoists(&squares(&edits)), "hoisted: {edits:?}");
        }
        // The same nest with a step of one is hoisted (the refusals are the
        // counter's).
        assert!(hoists(&squares(&[])));
    }

    #[test]
    fn outer_stores_variant_bounds_and_non_sums_stay() {
        for (from, to) in [
            // The outer loop writes the table the inner loop reads.
            ("  %11 = add %2, 1\n", "  %11 = add %2, 1\n  store %2, %6\n"),
            // The inner bound is the outer counter.
            ("  %10 = slt %9, 50\n", "  %10 = slt %9, %2\n"),
            // The accumulator is multiplied, not summed.
            ("  %8 = add %5, %7\n", "  %8 = mul %5, %7\n"),
            // The inner loop reads the outer counter.
            ("  %7 = load i32, %6\n", "  %7 = add %2, %4\n"),
        ] {
            assert!(NEST.contains(from), "{from}");
            let src = NEST.replace(from, to);
            for n in ["1", "7"] {
                same_behaviour(&src, &["hoistloops"], n);
            }
            assert!(
                !steps_within(&src, &["hoistloops"], "20000", 500_000),
                "hoisted: {from} -> {to}"
            );
        }
    }
}

/// Random nests: inner trip counts, tables, accumulator operators and outer-loop
/// contents vary, so the pass fires on some and must leave the others; every one is
/// run in the interpreter before and after.
#[cfg(test)]
mod random_tests {
    use crate::passes::testutil::{exec, run, XorShift};

    #[test]
    fn random_nests_keep_their_output() {
        let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
        let mut next = move || rng.next();
        let mut hoisted = 0;
        for _ in 0..300 {
            let trips = next() % 40 + 1;
            let table: Vec<String> = (0..8).map(|_| (next() as i32 % 1000).to_string()).collect();
            let acc_op = ["add", "add", "add", "sub", "mul"][(next() % 5) as usize];
            let outer_extra =
                ["", "  store %2, @cell\n", "  %30 = load i32, @cell\n"][(next() % 3) as usize];
            let inner_read = ["%7", "%2", "%4"][(next() % 3) as usize];
            let modulus = [7, 65521, 2147483647][(next() % 3) as usize];
            let src = format!(
                r#"
global @t: [i32; 64] = [{table}]
global @cell: i32 = 3

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb1, bb5(0)
bb1:
  jump bb2(0, 0)
bb2(%2: i32, %3: i32):
  jump bb3(0, %3)
bb3(%4: i32, %5: i32):
  %6 = gep @t, %4, 4
  %7 = load i32, %6
  %8 = {acc_op} %5, {inner_read}
  %9 = add %4, 1
  %10 = slt %9, {trips}
  br %10, bb3(%9, %8), bb4
bb4:
{outer_extra}  %11 = add %2, 1
  %12 = srem %8, {modulus}
  %13 = slt %11, %0
  br %13, bb2(%11, %12), bb5(%12)
bb5(%14: i32):
  call @putint(%14)
  ret 0
}}
"#,
                table = table.join(", ")
            );
            let before = ir::parse_module(&src).unwrap();
            let out = run(&src, &["hoistloops"]);
            hoisted += usize::from(out != run(&src, &[]));
            let after = ir::parse_module(&out).unwrap();
            for n in ["0", "1", "2", "5", "33"] {
                assert_eq!(exec(&after, n), exec(&before, n), "n = {n}\n{src}\n{out}");
            }
        }
        assert!(hoisted > 30, "only {hoisted} of 300 hoisted");
    }
}
