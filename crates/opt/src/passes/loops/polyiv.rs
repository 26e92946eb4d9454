//! Strength reduction of products of induction variables: `(i + a) * (i + b)` in a
//! loop where `i` steps by `s` becomes a header parameter `P` updated by additions,
//! `P += D; D += 2s²`, instead of a multiply per iteration.
//!
//! A product of two affine functions of the iteration number is a second-order
//! polynomial in it, the chain of recurrences `{P0, +, D0, +, C}` (Bachmann, Wang
//! and Zima, "Chains of Recurrences", ISSAC 1994): scalar evolution
//! ([`crate::analysis::scev`]) describes the multiply so, as LLVM's does, and the
//! pass expands the recurrence into two header parameters, `P' = P + D` and
//! `D' = D + C`, the three operands materialised in the preheader
//! ([`crate::analysis::scev::expand`], LLVM's `SCEVExpander`). With `x = {x0,+,s}`
//! and `y = {y0,+,t}`: `P0 = x0·y0`, `D0 = x0·t + s·y0 + s·t`, `C = 2st`.
//!
//! Every operation is in the ring of integers modulo 2^32, where `i32` addition and
//! multiplication live, so the recurrence gives exactly the wrapped product on every
//! iteration, whatever wraps: no bound on the counters is needed. Triangular numbers
//! `i * (i + 1) / 2` and similar index formulas lose their multiply this way.
//!
//! Accepted: an `i32` multiply in an innermost rotated loop (a preheader ending in a
//! jump, one latch) whose block dominates the latch (it runs on every iteration,
//! since the two additions replace it), whose evolution is a second-order
//! recurrence of that loop with operands invariant in it and expandable in the
//! preheader: factors that are affine in any counters of the loop, each stepping by
//! any invariant amount (`(2i + a) * (j - 3)` with `i += 2`, `j += k`), times
//! invariants. Products with the same evolution share one recurrence; at most
//! [`MAX_PER_LOOP`] recurrences per loop.

use crate::analysis::scev::expand::Expander;
use crate::analysis::scev::ExprId;
use crate::analysis::FunctionAnalyses;
use crate::analysis::{Preserved, RotatedLoop};
use crate::pipeline::FunctionTransform;
use ir::analysis::DominatorTree;
use ir::{BinOp, Function, Inst, InstKind, Type, Value};
use rustc_hash::FxHashMap;

/// The pass.
pub struct PolyIv;

impl FunctionTransform for PolyIv {
    const NAME: &'static str = "polyiv";
    const DESCRIPTION: &'static str =
        "replace products of induction variables by second-order add recurrences";
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_on(f, fa) > 0
    }
}

/// At most this many recurrences per loop (each costs two registers).
pub const MAX_PER_LOOP: usize = 2;

/// At most this many instructions to compute one recurrence's operands in the
/// preheader.
const EXPANSION_BUDGET: usize = 16;

/// A multiply to replace, and its evolution `{P0,+,D0,+,C}`.
struct Product {
    mul: Inst,
    rec: ExprId,
    ops: [ExprId; 3],
}

/// Reduces the products of `f`; returns how many multiplies were replaced.
pub fn run(f: &mut Function) -> usize {
    if f.is_declaration() {
        return 0;
    }
    run_on(f, &mut FunctionAnalyses::default())
}

/// [`run`] with the function's analyses given: the pass adds instructions, block
/// parameters and jump arguments, but no block or edge, so they stay valid (and
/// the pass manager's cached ones serve).
pub fn run_on(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    let mut se = fa.scev(f);
    let (cfg, dt, loops) = (se.cfg, se.dt, se.loops);
    let mut work = Vec::new();
    for (id, lp) in loops.loops() {
        if !lp.children.is_empty() {
            continue;
        }
        let Some(l) = RotatedLoop::of(f, cfg, loops, id) else {
            continue;
        };
        let jumps = f
            .terminator(l.preheader)
            .is_some_and(|t| matches!(f.kind(t), InstKind::Jump { .. }));
        if !jumps {
            continue;
        }
        let mut products = Vec::new();
        for &b in &lp.blocks {
            if !dt.dominates(b, l.latch) {
                continue;
            }
            for i in f.layout.block_insts(b) {
                if !matches!(f.kind(i), InstKind::Binary { op: BinOp::Mul, .. }) {
                    continue;
                }
                let rec = se.get(f.inst_result(i).expect("mul has a result"));
                let Some((rl, &[a, b, c])) = se.exprs.as_addrec(rec) else {
                    continue;
                };
                if rl == id && [a, b, c].iter().all(|&o| se.invariant(o, id)) {
                    products.push(Product {
                        mul: i,
                        rec,
                        ops: [a, b, c],
                    });
                }
            }
        }
        if !products.is_empty() {
            work.push((l, products));
        }
    }
    if work.is_empty() {
        return 0;
    }
    let exprs = std::mem::take(&mut se.exprs);
    fa.forget_scev();
    let dt = fa.domtree(f).1;
    let mut replaced = 0;
    for (l, products) in work {
        replaced += reduce(f, dt, &exprs, &l, &products);
    }
    replaced
}

/// `op a, b` inserted before `before`, at the source line of `of` (the
/// multiply it stands for); its result.
fn binary(f: &mut Function, (before, of): (Inst, Inst), op: BinOp, a: Value, b: Value) -> Value {
    let i = f.insert_inst_before(before, InstKind::Binary { op, args: [a, b] }, Type::I32);
    f.copy_src_loc(of, i);
    f.inst_result(i).expect("a binary op has a result")
}

fn reduce(
    f: &mut Function,
    dt: &DominatorTree,
    exprs: &crate::analysis::scev::Exprs,
    l: &RotatedLoop,
    products: &[Product],
) -> usize {
    let mut shared: FxHashMap<ExprId, Value> = FxHashMap::default();
    let mut replaced = 0;
    let pre_end = f.terminator(l.preheader).expect("a preheader jumps");
    let preheader = l.preheader;
    // Values the preheader's end can use: those defined in blocks dominating it.
    let available =
        move |f: &Function, v: Value| f.value_block(v).is_none_or(|b| dt.dominates(b, preheader));
    for prod in products {
        let r = f.inst_result(prod.mul).expect("mul has a result");
        if let Some(&p) = shared.get(&prod.rec) {
            f.replace_all_uses(r, p);
            replaced += 1;
            continue;
        }
        if shared.len() == MAX_PER_LOOP {
            continue;
        }
        let mut ex = Expander::new(exprs, pre_end, prod.mul, EXPANSION_BUDGET);
        let Some([p0, d0, c]) = prod
            .ops
            .iter()
            .map(|&o| ex.expand(f, o, &available))
            .collect::<Option<Vec<Value>>>()
            .map(|v| [v[0], v[1], v[2]])
        else {
            continue;
        };
        let pp = f.append_block_param(l.header, Type::I32);
        let dp = f.append_block_param(l.header, Type::I32);
        // P' = P + D, D' = D + C on the latch.
        let p1 = binary(f, (l.branch, prod.mul), BinOp::Add, pp, dp);
        let d1 = binary(f, (l.branch, prod.mul), BinOp::Add, dp, c);
        let mut kind = f.kind(pre_end).clone();
        kind.targets_mut()[0].args.extend([p0, d0]);
        f.replace_kind(pre_end, kind);
        let mut kind = f.kind(l.branch).clone();
        kind.targets_mut()[l.back].args.extend([p1, d1]);
        f.replace_kind(l.branch, kind);
        f.replace_all_uses(r, pp);
        shared.insert(prod.rec, pp);
        replaced += 1;
    }
    replaced
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// `for (i = s; i < n; i += 3) t += (i + a) * (i + 5) ^ i * i;` with `s`, `n`,
    /// `a` read; `t` and the last product printed.
    const SQUARES: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = call @getint()
  %3 = slt %0, %1
  br %3, bb1, bb3(0, 0)
bb1:
  jump bb2(%0, 0)
bb2(%4: i32, %5: i32):
  %6 = add %4, %2
  %7 = add 5, %4
  %8 = mul %6, %7
  %9 = mul %4, %4
  %10 = xor %8, %9
  %11 = add %5, %10
  %12 = add %4, 3
  %13 = slt %12, %1
  br %13, bb2(%12, %11), bb3(%11, %8)
bb3(%14: i32, %15: i32):
  call @putint(%14)
  call @putch(32)
  call @putint(%15)
  ret 0
}
"#;

    #[test]
    fn products_become_recurrences_that_wrap_alike() {
        for input in [
            "0 10 1",
            "-7 40 -3",
            "5 6 100",
            "2147483000 2147483600 9",
            "-2147483648 -2147483000 -2147483648",
            "65000 70000 65536",
        ] {
            let out = same_behaviour(SQUARES, &["polyiv", "dce"], input);
            // Both multiplies left the loop (only the preheader's starts remain).
            let body = &out[out.find("\nbb2(").unwrap()..out.find("\nbb3(").unwrap()];
            assert!(!body.contains("= mul"), "{out}");
        }
    }

    #[test]
    fn products_on_some_iterations_only_are_left() {
        // The multiply in a block that not every iteration runs keeps its place.
        let src = SQUARES
            .replace(
                "  %9 = mul %4, %4\n  %10 = xor %8, %9\n",
                "  %16 = slt %4, 20\n  br %16, bb4, bb5(0)\nbb4:\n  %9 = mul %4, %4\n  jump bb5(%9)\nbb5(%17: i32):\n  %10 = xor %8, %17\n",
            );
        let out = same_behaviour(&src, &["polyiv", "dce"], "0 40 2");
        let conditional = &out[out.find("\nbb3:").unwrap()..out.find("\nbb4(").unwrap()];
        assert!(conditional.contains("= mul"), "{out}");
        // The other one is reduced.
        let header = &out[out.find("\nbb2(").unwrap()..out.find("\nbb3:").unwrap()];
        assert!(!header.contains("= mul"), "{out}");
    }

    #[test]
    fn a_factor_not_affine_in_the_loop_is_left() {
        // `i * x` with `x` not affine in `i` (the running sum).
        let src = SQUARES.replace("%9 = mul %4, %4", "%9 = mul %4, %5");
        let out = same_behaviour(&src, &["polyiv"], "0 20 2");
        assert!(out.contains("mul %4, %5"), "{out}");
    }

    /// Two counters of one loop with different steps, one of them read:
    /// `for (i = s, j = 1; i < n; i += 2, j += k) t += (2 * i + a) * (j - 3);`.
    const TWO_COUNTERS: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = call @getint()
  %3 = call @getint()
  %4 = slt %0, %1
  br %4, bb1, bb3(0, 0)
bb1:
  jump bb2(%0, 1, 0)
bb2(%5: i32, %6: i32, %7: i32):
  %8 = mul %5, 2
  %9 = add %8, %2
  %10 = sub %6, 3
  %11 = mul %9, %10
  %12 = add %7, %11
  %13 = add %5, 2
  %14 = add %6, %3
  %15 = slt %13, %1
  br %15, bb2(%13, %14, %12), bb3(%12, %11)
bb3(%16: i32, %17: i32):
  call @putint(%16)
  call @putch(32)
  call @putint(%17)
  ret 0
}
"#;

    #[test]
    fn counters_with_different_and_unknown_steps_share_a_recurrence() {
        for input in [
            "0 10 1 1",
            "-7 40 -3 5",
            "3 200 100000 -70000",
            "2147483000 2147483600 9 123456789",
        ] {
            let out = same_behaviour(TWO_COUNTERS, &["polyiv", "dce"], input);
            let body = &out[out.find("\nbb2(").unwrap()..out.find("\nbb3(").unwrap()];
            // The product of the two affine factors is gone, and with it `2 * i`
            // and the counter `j`, which only fed it.
            assert!(!body.contains("= mul"), "{out}");
            assert_eq!(body.matches("add").count(), 4, "{out}");
        }
    }

    /// The product times an invariant (`k * ((2i + a) * (j - 3))`) is a
    /// second-order recurrence too; the same product written the other way round
    /// (`(i + 5) * (i + a)` beside `(i + a) * (i + 5)`) shares its recurrence.
    #[test]
    fn products_times_invariants_and_equal_products_once() {
        let scaled = TWO_COUNTERS.replace(
            "  %12 = add %7, %11\n",
            "  %18 = mul %3, %11\n  %12 = add %7, %18\n",
        );
        assert!(scaled.contains("mul %3, %11"));
        for input in [
            "0 10 1 7",
            "-7 40 -3 -5",
            "2147483000 2147483600 9 123456789",
        ] {
            let out = same_behaviour(&scaled, &["polyiv", "dce"], input);
            let body = &out[out.find("\nbb2(").unwrap()..out.find("\nbb3(").unwrap()];
            assert!(!body.contains("= mul"), "{out}");
        }
        let twice = SQUARES.replace(
            "  %10 = xor %8, %9\n",
            "  %16 = mul %7, %6\n  %17 = xor %8, %9\n  %10 = add %17, %16\n",
        );
        assert!(twice.contains("mul %7, %6"));
        let out = same_behaviour(&twice, &["polyiv", "dce"], "-7 40 -3");
        let header = out[out.find("\nbb2(").unwrap() + 1..]
            .lines()
            .next()
            .unwrap();
        // The counter, the sum, and two parameters for each of the two distinct
        // products (`(i + a) * (i + 5)` once, `i * i`).
        assert_eq!(header.matches(": i32").count(), 6, "{out}");
    }

    #[test]
    fn a_product_affine_in_the_loop_is_left() {
        // `x * (j - 3)` with `x` invariant in the loop is a first-order
        // recurrence: not this pass's (strength reduction takes it).
        let src = TWO_COUNTERS.replace("%11 = mul %9, %10", "%11 = mul %2, %10");
        let out = same_behaviour(&src, &["polyiv"], "0 20 2 3");
        assert!(out.contains("mul %2, %10"), "{out}");
        assert!(
            out.contains("bb2(%5: i32, %6: i32, %7: i32):"),
            "no parameter added: {out}"
        );
    }
}
