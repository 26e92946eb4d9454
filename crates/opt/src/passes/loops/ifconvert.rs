//! If-conversion of a loop's conditional update: an innermost loop made of a
//! header that branches around a small arm into its latch becomes a single block,
//! the arm computed on every iteration and its effect selected with a mask.
//!
//! ```text
//!   while (k < n) {                          while (k < n) {
//!     if (a[i][k] * b[k][j] % 2 == 0)   =>     m = 0 - (a[i][k] * b[k][j] % 2 == 0);
//!       t = t + b[i][k] * a[k][j];              t = t + (b[i][k] * a[k][j] & m);
//!     k = k + 1;                               k = k + 1;
//!   }                                        }
//! ```
//!
//! RV64GC has no conditional move, so the selection is arithmetic (Allen, Kennedy,
//! Porterfield and Warren, "Conversion of Control Dependence to Data Dependence",
//! POPL 1983; the masks of GCC's `ifcvt` without `cmov` and of LLVM's select
//! lowering): with `m` all ones when the arm runs and zero otherwise, a value the
//! arm adds to (`v + w`) or subtracts from becomes `v + (w & m)`, any other value
//! `v ^ ((w ^ v) & m)`. Which values are sums is scalar evolution's answer: `w - v`
//! constant (`t + 1` selects as `t + c`, `t - 1` as `t - c`, with `c` the 0/1
//! condition), a value at hand (`t + x`, `t - x`, or `x + t` through any chain of
//! additions SCEV folds), or neither (`t * 2`, masked with `xor`). A data-dependent branch in an inner loop mispredicts often,
//! and the loop, now one block, is open to unrolling, pipelining and scheduling
//! (`matmul` of the 2026 suite: 1.08x gcc's cycles with the branch).
//!
//! The shape: the loop has exactly three blocks, header `B`, arm `T` and latch `J`;
//! `B` ends in `br c, ..` with one edge to `T` (its only predecessor, no
//! parameters) and one to `J`; `T` jumps to `J`. `T` holds at most [`MAX_ARM`]
//! instructions, none with an effect, none that can trap: integer arithmetic
//! (division only by a non-zero constant), comparisons, addresses, and loads
//! from addresses known to lie inside their array ([`Bounds`]: a global or local
//! array indexed by constants and counters of enclosing loops whose range is known
//! from their constant bounds), which the arm therefore may run when the branch
//! would have skipped it. `J`'s parameters must be integers. Biased branches in
//! larger loops (an interpreter's dispatch, a hash kernel's rare update) stay
//! branches: they do not make a single-block loop.

use crate::analysis::scev::{Expr, ScalarEvolution};
use crate::analysis::{AnalysisManager, Bounds, FunctionAnalyses, LoopId, Preserved};
use crate::cfg_edit::remove_unreachable_blocks;
use crate::pipeline::Pass;
use ir::{BinOp, Block, BlockCall, CmpOp, Function, Inst, InstKind, Module, Type, Value};

/// The if-conversion pass.
pub struct IfConvert;

/// Instructions (besides the jump) the arm may hold.
pub const MAX_ARM: usize = 8;

impl Pass for IfConvert {
    fn name(&self) -> &'static str {
        "ifconvert"
    }
    fn description(&self) -> &'static str {
        "if-convert a loop's conditional update into masked arithmetic (single-block loop)"
    }
    /// Through the manager, so that it knows which functions changed.
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let sizes = crate::analysis::deref::global_sizes(m);
        am.each_function(m, |f, fa| run(f, fa, &sizes) > 0)
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
}

/// Converts the qualifying loops of `f` (`global_sizes` by global index); returns
/// how many.
pub fn run(f: &mut Function, fa: &mut FunctionAnalyses, global_sizes: &[u64]) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let mut converted = 0;
    loop {
        let plan = {
            let mut se = fa.scev(f);
            let bounds = Bounds::of(&mut se, global_sizes);
            let loops = se.loops;
            loops.loops().find_map(|(id, lp)| {
                (lp.children.is_empty())
                    .then(|| plan(&mut se, id, &bounds))
                    .flatten()
            })
        };
        let Some(plan) = plan else {
            break;
        };
        apply(f, plan);
        fa.forget();
        converted += 1;
    }
    if converted > 0 {
        crate::passes::scalar::simplifycfg::run(f);
    }
    converted
}

/// One loop to convert.
struct Plan {
    header: Block,
    arm: Block,
    latch: Block,
    /// Whether the arm runs when the condition is non-zero.
    arm_when_true: bool,
    /// For each latch parameter, what the arm's argument adds to the direct one.
    deltas: Vec<Option<Delta>>,
}

/// `w - v` for the argument `v` the header passes to a latch parameter directly
/// and the argument `w` the arm passes, as scalar evolution finds it.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Delta {
    /// `w = v + c`.
    Const(i64),
    /// `w = v + d`.
    Plus(Value),
    /// `w = v - d`.
    Minus(Value),
}

impl Delta {
    /// `w - v` as a constant or a value at hand: an unknown of the difference, or
    /// an operand of `w`'s definition that equals it (or its negation), so that
    /// nothing is computed anew. Every value involved is available where the arm
    /// ends up, before the header's branch.
    fn of(se: &mut ScalarEvolution, v: Value, w: Value) -> Option<Delta> {
        let (f, loops) = (se.f, se.loops);
        let (ev, ew) = (se.get(v), se.get(w));
        let diff = se.exprs.sub(loops, f, ew, ev);
        if let Some(c) = se.exprs.as_const(diff) {
            return Some(Delta::Const(c));
        }
        let m1 = se.exprs.constant(Type::I32, -1);
        let neg = se.exprs.mul(loops, f, &[m1, diff], false);
        let value = |e| match *se.exprs.get(e) {
            Expr::Unknown { v, .. } => Some(v),
            _ => None,
        };
        if let Some(d) = value(diff) {
            return Some(Delta::Plus(d));
        }
        if let Some(d) = value(neg) {
            return Some(Delta::Minus(d));
        }
        let InstKind::Binary { args, .. } = *f.kind(f.def_inst(w)?) else {
            return None;
        };
        args.into_iter().find_map(|d| {
            let e = se.get(d);
            (e == diff)
                .then_some(Delta::Plus(d))
                .or((e == neg).then_some(Delta::Minus(d)))
        })
    }
}

fn plan(se: &mut ScalarEvolution, id: LoopId, bounds: &Bounds) -> Option<Plan> {
    let (f, loops) = (se.f, se.loops);
    let lp = loops.get(id);
    if lp.blocks.len() != 3 {
        return None;
    }
    let header = lp.header;
    let [latch] = lp.latches[..] else {
        return None;
    };
    let arm = *lp.blocks.iter().find(|&&b| b != header && b != latch)?;
    let InstKind::Br {
        then_dest,
        else_dest,
        ..
    } = f.kind(f.terminator(header)?)
    else {
        return None;
    };
    let arm_when_true = match (then_dest.block, else_dest.block) {
        (t, j) if t == arm && j == latch => true,
        (j, t) if t == arm && j == latch => false,
        _ => return None,
    };
    let arm_call = if arm_when_true { then_dest } else { else_dest };
    if !arm_call.args.is_empty() || !f.block_params(arm).is_empty() {
        return None;
    }
    let InstKind::Jump { dest } = f.kind(f.terminator(arm)?) else {
        return None;
    };
    if dest.block != latch
        || f.block_params(latch)
            .iter()
            .any(|&p| f.value_type(p) != Type::I32)
    {
        return None;
    }
    let insts: Vec<Inst> = f.layout.block_insts(arm).collect();
    if insts.len() > MAX_ARM + 1 {
        return None;
    }
    for &i in &insts[..insts.len() - 1] {
        let ok = match *f.kind(i) {
            InstKind::Binary { op, args: [_, d] } => {
                !op.can_trap() || f.as_iconst(d).is_some_and(|c| c != 0 && c != -1)
            }
            InstKind::Cmp { .. } | InstKind::Unary { .. } | InstKind::Gep { .. } => true,
            InstKind::Load { ty, ptr } => bounds.dereferenceable(f, ptr, ty.size()),
            _ => false,
        };
        if !ok {
            return None;
        }
    }
    let direct = if arm_when_true { else_dest } else { then_dest };
    let deltas = direct
        .args
        .iter()
        .zip(dest.args.iter())
        .map(|(&v, &w)| Delta::of(se, v, w))
        .collect();
    Some(Plan {
        header,
        arm,
        latch,
        arm_when_true,
        deltas,
    })
}

/// Moves the arm into the header and selects the latch's arguments with a mask.
fn apply(f: &mut Function, p: Plan) {
    let term = f.terminator(p.header).expect("the header branches");
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = f.kind(term).clone()
    else {
        unreachable!("planned on a branch");
    };
    let direct = if p.arm_when_true {
        else_dest
    } else {
        then_dest
    };
    let arm_term = f.terminator(p.arm).expect("the arm jumps");
    let InstKind::Jump { dest: via_arm } = f.kind(arm_term).clone() else {
        unreachable!("planned on a jump");
    };
    // The arm's instructions, in order, before the header's branch.
    let moved: Vec<Inst> = f.layout.block_insts(p.arm).collect();
    for &i in &moved[..moved.len() - 1] {
        f.layout.remove_inst(i);
        f.layout.insert_inst_before(i, term);
    }
    let mut at = Emitter { f, at: term };
    // 1 when the arm runs, 0 otherwise; then all ones or zero.
    let is_cmp = matches!(
        at.f.def_inst(cond).map(|d| at.f.kind(d)),
        Some(InstKind::Cmp { .. })
    );
    let zero = at.f.iconst(0);
    let runs = match (p.arm_when_true, is_cmp) {
        (true, true) => cond,
        (true, false) => at.emit(InstKind::Cmp {
            op: CmpOp::Ne,
            args: [cond, zero],
        }),
        (false, _) => at.emit(InstKind::Cmp {
            op: CmpOp::Eq,
            args: [cond, zero],
        }),
    };
    let mask = at.emit(InstKind::Binary {
        op: BinOp::Sub,
        args: [zero, runs],
    });
    let mut args = Vec::with_capacity(direct.args.len());
    for ((&v, &w), &delta) in direct.args.iter().zip(via_arm.args.iter()).zip(&p.deltas) {
        args.push(at.select(runs, mask, v, w, delta));
    }
    let f = at.f;
    f.replace_kind(
        term,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(p.latch, args)),
        },
    );
    remove_unreachable_blocks(f);
}

struct Emitter<'f> {
    f: &'f mut Function,
    at: Inst,
}

impl Emitter<'_> {
    fn emit(&mut self, kind: InstKind) -> Value {
        let i = self.f.insert_inst_before(self.at, kind, Type::I32);
        self.f.inst_result(i).expect("an i32 result")
    }

    /// `w` where the mask is all ones (and `runs` 1), else `v`, with `w = v + delta`
    /// when scalar evolution found the difference.
    fn select(
        &mut self,
        runs: Value,
        mask: Value,
        v: Value,
        w: Value,
        delta: Option<Delta>,
    ) -> Value {
        if v == w {
            return v;
        }
        // `w = v ± d`: `v ± (d & mask)`; `v ± runs` for `d = ±1`.
        let (op, d) = match delta {
            Some(Delta::Const(0)) => return v,
            Some(Delta::Const(1)) => (BinOp::Add, runs),
            Some(Delta::Const(-1)) => (BinOp::Sub, runs),
            Some(Delta::Const(c)) => {
                let d = self.f.iconst(c as i32);
                (BinOp::Add, self.and_mask(d, mask))
            }
            Some(Delta::Plus(d)) => (BinOp::Add, self.and_mask(d, mask)),
            Some(Delta::Minus(d)) => (BinOp::Sub, self.and_mask(d, mask)),
            None => return self.blend(mask, v, w),
        };
        self.emit(InstKind::Binary { op, args: [v, d] })
    }

    /// `d & mask`.
    fn and_mask(&mut self, d: Value, mask: Value) -> Value {
        self.emit(InstKind::Binary {
            op: BinOp::And,
            args: [d, mask],
        })
    }

    /// `v ^ ((w ^ v) & mask)`.
    fn blend(&mut self, mask: Value, v: Value, w: Value) -> Value {
        let diff = self.emit(InstKind::Binary {
            op: BinOp::Xor,
            args: [w, v],
        });
        let part = self.emit(InstKind::Binary {
            op: BinOp::And,
            args: [diff, mask],
        });
        self.emit(InstKind::Binary {
            op: BinOp::Xor,
            args: [v, part],
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `for k < 100: if (a[k] * b[k] % 2 == 0) t = t + b[k] * a[99 - k]` over two
    /// tables read from the input, printing `t`.
    const MATMUL_LIKE: &str = r#"
global @a: [i32; 100] = zeroinit
global @b: [i32; 100] = zeroinit
declare @getarray(ptr) -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getarray(@a)
  %1 = call @getarray(@b)
  jump bb1(0, 0)
bb1(%2: i32, %3: i32):
  %4 = gep @a, %2, 4
  %5 = load i32, %4
  %6 = gep @b, %2, 4
  %7 = load i32, %6
  %8 = mul %5, %7
  %9 = and %8, 1
  %10 = eq %9, 0
  br %10, bb2, bb3(%3)
bb2:
  %11 = sub 99, %2
  %12 = gep @a, %11, 4
  %13 = load i32, %12
  %14 = mul %7, %13
  %15 = add %3, %14
  jump bb3(%15)
bb3(%16: i32):
  %17 = add %2, 1
  %18 = slt %17, 100
  br %18, bb1(%17, %16), bb4
bb4:
  call @putint(%16)
  ret 0
}
"#;

    fn input() -> String {
        let a: Vec<String> = (0..100)
            .map(|i| ((i * 37 + 11) % 23 - 7).to_string())
            .collect();
        let b: Vec<String> = (0..100)
            .map(|i| ((i * 53 + 5) % 19 - 4).to_string())
            .collect();
        format!("100 {}\n100 {}\n", a.join(" "), b.join(" "))
    }

    #[test]
    fn a_conditional_sum_becomes_a_masked_sum() {
        let out = same_behaviour(MATMUL_LIKE, &["ifconvert"], &input());
        let main = &out[out.find("func @main").unwrap()..];
        // One block loops: no branch but the latch's.
        assert_eq!(main.matches(" br ").count(), 1, "{out}");
        assert!(main.contains(" and ") && main.contains("sub 0, "), "{out}");
    }

    #[test]
    fn arms_that_may_trap_or_touch_memory_stay_branches() {
        // The speculated load could fall outside the array: a[k + 1] at k = 99.
        let past_end = MATMUL_LIKE.replace("  %11 = sub 99, %2\n", "  %11 = add %2, 1\n");
        let out = run(&past_end, &["ifconvert"]);
        assert_eq!(out.matches(" br ").count(), 2, "{out}");
        // An index read from memory: unknown.
        let unknown = MATMUL_LIKE.replace("  %11 = sub 99, %2\n", "  %11 = add %7, 0\n");
        let out = run(&unknown, &["ifconvert"]);
        assert_eq!(out.matches(" br ").count(), 2, "{out}");
        // A division by a value that may be zero.
        let div = MATMUL_LIKE.replace("  %14 = mul %7, %13\n", "  %14 = sdiv %7, %13\n");
        let out = run(&div, &["ifconvert"]);
        assert_eq!(out.matches(" br ").count(), 2, "{out}");
        // A store in the arm.
        let store = MATMUL_LIKE.replace(
            "  %15 = add %3, %14\n",
            "  %15 = add %3, %14\n  store %15, %12\n",
        );
        let out = same_behaviour(&store, &["ifconvert"], &input());
        assert_eq!(out.matches(" br ").count(), 2, "{out}");
    }

    #[test]
    fn a_conditional_count_adds_the_condition() {
        // `if (a[k] * b[k] % 2 == 0) t = t + 1`: `t + (cond)`, no mask needed.
        let src = MATMUL_LIKE.replace("  %15 = add %3, %14\n", "  %15 = add %3, 1\n");
        let out = same_behaviour(&src, &["ifconvert", "dce"], &input());
        let main = &out[out.find("func @main").unwrap()..];
        assert_eq!(main.matches(" br ").count(), 1, "{out}");
        assert!(
            main.contains("add %3, %10") || main.contains(", %10\n"),
            "{out}"
        );
        assert!(!main.contains("sub 0, "), "{out}");
    }

    #[test]
    fn other_updates_select_with_a_mask() {
        // `t = t - x` and `t = x * 3` (a value unrelated to `t`), taken when the
        // test is false.
        for (from, to) in [
            ("  %15 = add %3, %14\n", "  %15 = sub %3, %14\n"),
            ("  %15 = add %3, %14\n", "  %15 = mul %14, 3\n"),
        ] {
            let src = MATMUL_LIKE
                .replace(from, to)
                .replace("br %10, bb2, bb3(%3)", "br %9, bb3(%3), bb2");
            let out = same_behaviour(&src, &["ifconvert"], &input());
            assert_eq!(out.matches(" br ").count(), 1, "{to}: {out}");
        }
    }

    #[test]
    fn differences_scalar_evolution_finds_select_by_addition() {
        // `t - 1`: `t - (cond)`; `(t + 2) + 3`: `t + (5 & m)`, one block both.
        for (to, expect) in [
            ("  %15 = sub %3, 1\n", "sub %3, %10"),
            ("  %20 = add %3, 2\n  %15 = add %20, 3\n", "and 5, "),
        ] {
            let src = MATMUL_LIKE.replace("  %15 = add %3, %14\n", to);
            let out = same_behaviour(&src, &["ifconvert", "dce"], &input());
            let main = &out[out.find("func @main").unwrap()..];
            assert_eq!(main.matches(" br ").count(), 1, "{out}");
            assert!(main.contains(expect) && !main.contains("xor"), "{out}");
        }
        // `t - x`: `t - (x & m)`, no xor.
        let src = MATMUL_LIKE.replace("  %15 = add %3, %14\n", "  %15 = sub %3, %14\n");
        let out = same_behaviour(&src, &["ifconvert", "dce"], &input());
        assert!(out.contains("and %14, ") && !out.contains("xor"), "{out}");
    }

    #[test]
    fn a_product_is_no_difference_and_selects_by_xor() {
        // `t * 3` and `t * t` are `t` plus `2t` and `t * t - t`, no value at hand.
        for to in ["  %15 = mul %3, 3\n", "  %15 = mul %3, %3\n"] {
            let src = MATMUL_LIKE.replace("  %15 = add %3, %14\n", to);
            let out = same_behaviour(&src, &["ifconvert", "dce"], &input());
            assert_eq!(out.matches(" br ").count(), 1, "{out}");
            assert!(out.contains("xor"), "{to}: {out}");
        }
    }
}
