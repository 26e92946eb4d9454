//! Strength reduction of products of induction variables: `(i + a) * (i + b)` in a
//! loop where `i` steps by a constant `s` becomes a header parameter `P` updated by
//! additions, `P += D; D += 2s²`, instead of a multiply per iteration.
//!
//! A product of two affine functions of `i` is a second-order polynomial in the
//! iteration number, the chain of recurrences `{P0, +, D0, +, 2s²}` (Bachmann, Wang
//! and Zima, "Chains of Recurrences", ISSAC 1994; LLVM's scalar evolution expands
//! such add recurrences the same way): with `x = i + a` and `y = i + b`,
//!
//! ```text
//!   (x + s)(y + s) = xy + D,   D = s(x + y) + s²,   D' - D = 2s²
//! ```
//!
//! Every operation is in the ring of integers modulo 2^32, where `i32` addition and
//! multiplication live, so the recurrence gives exactly the wrapped product on every
//! iteration, whatever wraps: no bound on `i` is needed. Triangular numbers
//! `i * (i + 1) / 2` and similar index formulas lose their multiply this way.
//!
//! Conditions: the loop is innermost and rotated (a preheader and one latch); `i`
//! is a header parameter whose next value is `i + s` with `s` a constant; `a` and
//! `b` are loop-invariant (or absent); the multiply runs on every iteration (its
//! block dominates the latch), since the two additions then replace it. Products
//! of the same pair share one recurrence.

use crate::analysis::induction::step_of;
use crate::analysis::FunctionAnalyses;
use crate::analysis::{LoopForest, Preserved, RotatedLoop};
use crate::pipeline::{FunctionPass, Pass};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{BinOp, Function, Inst, InstKind, Type, Value};
use rustc_hash::FxHashMap;

/// The pass.
pub struct PolyIv;

impl Pass for PolyIv {
    fn name(&self) -> &'static str {
        "polyiv"
    }
    fn description(&self) -> &'static str {
        "replace products of induction variables by second-order add recurrences"
    }
    fn preserves(&self) -> Preserved {
        Preserved::CFG.with_other_functions()
    }
    fn function_pass(&self) -> Option<&dyn FunctionPass> {
        Some(self)
    }
}

impl FunctionPass for PolyIv {
    fn run_on(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        let (cfg, dt, loops) = fa.loops(f);
        run_on(f, cfg, dt, loops) > 0
    }
}

/// At most this many recurrences per loop (each costs two registers).
pub const MAX_PER_LOOP: usize = 2;

/// `(param index, offset)`: the value is the header parameter plus the offset.
type Affine = (usize, Option<Value>);

/// A product to reduce: the multiply, and its two factors.
struct Product {
    mul: Inst,
    x: Affine,
    y: Affine,
}

/// Reduces the products of `f`; returns how many multiplies were replaced.
pub fn run(f: &mut Function) -> usize {
    crate::passes::with_loops(f, run_on)
}

/// [`run`] with the function's analyses given: the pass adds instructions, block
/// parameters and jump arguments, but no block or edge, so they stay valid (and
/// the pass manager's cached ones serve).
pub fn run_on(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    loops: &LoopForest,
) -> usize {
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
        let in_loop = |v: Value| f.value_block(v).is_some_and(|b| loops.contains(id, b));
        let params = f.block_params(l.header);
        let next = l.next_args(f);
        // Induction variables: parameters stepping by a constant.
        let steps: Vec<Option<i32>> = params
            .iter()
            .zip(next)
            .map(|(&p, &n)| step_of(f, p, n).and_then(|c| f.as_iconst(c)))
            .collect();
        let affine = |v: Value| -> Option<Affine> {
            if let Some(k) = params.iter().position(|&p| p == v) {
                return steps[k].map(|_| (k, None));
            }
            let InstKind::Binary {
                op: BinOp::Add,
                args: [a, b],
            } = *f.kind(f.def_inst(v)?)
            else {
                return None;
            };
            for (p, off) in [(a, b), (b, a)] {
                if let Some(k) = params.iter().position(|&q| q == p) {
                    if steps[k].is_some() && !in_loop(off) {
                        return Some((k, Some(off)));
                    }
                }
            }
            None
        };
        let mut products = Vec::new();
        for &b in &lp.blocks {
            if !dt.dominates(b, l.latch) {
                continue;
            }
            for i in f.layout.block_insts(b) {
                let InstKind::Binary {
                    op: BinOp::Mul,
                    args: [x, y],
                } = *f.kind(i)
                else {
                    continue;
                };
                if let (Some(x), Some(y)) = (affine(x), affine(y)) {
                    if x.0 == y.0 {
                        products.push(Product { mul: i, x, y });
                    }
                }
            }
        }
        if !products.is_empty() {
            let steps: Vec<i32> = steps.iter().map(|s| s.unwrap_or(0)).collect();
            work.push((l, steps, products));
        }
    }
    let mut replaced = 0;
    for (l, steps, products) in work {
        replaced += reduce(f, &l, &steps, &products);
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

/// `p + offset` before `at.0` (or `p` itself).
fn offset(f: &mut Function, at: (Inst, Inst), p: Value, off: Option<Value>) -> Value {
    match off {
        Some(o) => binary(f, at, BinOp::Add, p, o),
        None => p,
    }
}

fn reduce(f: &mut Function, l: &RotatedLoop, steps: &[i32], products: &[Product]) -> usize {
    let mut shared: FxHashMap<(usize, Option<Value>, Option<Value>), Value> = FxHashMap::default();
    let mut replaced = 0;
    let pre_end = f.terminator(l.preheader).expect("a preheader jumps");
    for prod in products {
        let key = (prod.x.0, prod.x.1, prod.y.1);
        let r = f.inst_result(prod.mul).expect("mul has a result");
        if let Some(&p) = shared.get(&key) {
            f.replace_all_uses(r, p);
            replaced += 1;
            continue;
        }
        if shared.len() == MAX_PER_LOOP {
            continue;
        }
        let k = prod.x.0;
        let s = steps[k];
        let init = l.init_args(f)[k];
        // P0 = (i0 + a)(i0 + b); D0 = s(x0 + y0) + s².
        let at = (pre_end, prod.mul);
        let x0 = offset(f, at, init, prod.x.1);
        let y0 = offset(f, at, init, prod.y.1);
        let p0 = binary(f, at, BinOp::Mul, x0, y0);
        let sum0 = binary(f, at, BinOp::Add, x0, y0);
        let sc = f.iconst(s);
        let scaled0 = binary(f, at, BinOp::Mul, sum0, sc);
        let ss = f.iconst(s.wrapping_mul(s));
        let d0 = binary(f, at, BinOp::Add, scaled0, ss);
        let pp = f.append_block_param(l.header, Type::I32);
        let dp = f.append_block_param(l.header, Type::I32);
        // P' = P + D, D' = D + 2s² on the latch.
        let p1 = binary(f, (l.branch, prod.mul), BinOp::Add, pp, dp);
        let two_ss = f.iconst(s.wrapping_mul(s).wrapping_mul(2));
        let d1 = binary(f, (l.branch, prod.mul), BinOp::Add, dp, two_ss);
        let mut kind = f.kind(pre_end).clone();
        kind.targets_mut()[0].args.extend([p0, d0]);
        f.replace_kind(pre_end, kind);
        let mut kind = f.kind(l.branch).clone();
        kind.targets_mut()[l.back].args.extend([p1, d1]);
        f.replace_kind(l.branch, kind);
        f.replace_all_uses(r, pp);
        shared.insert(key, pp);
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
    fn factors_of_two_counters_are_left() {
        // `i * x` with `x` not affine in `i` (the running sum).
        let src = SQUARES.replace("%9 = mul %4, %4", "%9 = mul %4, %5");
        let out = same_behaviour(&src, &["polyiv"], "0 20 2");
        assert!(out.contains("mul %4, %5"), "{out}");
    }
}
