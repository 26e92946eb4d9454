//! Division, remainder and comparisons simplified by value ranges.
//!
//! With the intervals of [`crate::analysis::ranges`], as LLVM's
//! CorrelatedValuePropagation and GCC's VRP use theirs:
//! - `x % c` (`c` a constant, `|c| = m >= 2`):
//!   - is `x` when `|x| < m`;
//!   - is `and x, m - 1` when `x >= 0` and `m` is a power of two (no bias for a
//!     negative dividend needed);
//!   - is `x - k*m` when every `x` has the same quotient `k` ([`one_period`]);
//!   - is `x - (m & ((x < m) - 1))` when `0 <= x < 2m` (the one subtraction a
//!     remainder can need, as LLVM's `expandUDivOrURem` does for `X u< 2C`);
//!   - is that plus `m & -(x <= -m)` when `-2m < x < 2m` and `m` is not a power of
//!     two: a sum of two remainders keeps the sign of neither, so both corrections.
//!
//!   The last two replace a multiply-high, a multiply and their sign fixes (about
//!   twelve cycles of dependent latency on the U74) by single-cycle operations that
//!   pair, which matters where the result feeds the next remainder (modular
//!   arithmetic chains: `r = (r + r) % p`).
//! - `x / c` (`c` a constant) is the constant quotient every `x` shares when there
//!   is one ([`one_period`]: `0` when `|x| < |c|`), else (`c > 0`) `ashr x, k`
//!   when `x >= 0` and `c = 2^k`.
//! - `x / y` and `x % y` with `y` not a constant: `0` and `x` when every value of
//!   `y` has one sign and a magnitude above every `|x|`.
//! - An integer comparison whose operands' ranges decide it becomes 0 or 1.
//! - So does `a op b` where `a - b` is a constant `d` on every execution
//!   ([`ScalarEvolution::constant_difference`]: `i - 2` against `i - 1`, a counter
//!   against its next value) and `b + d` cannot wrap in `b`'s range: then
//!   `a = b + d` exactly and the sign of `d` decides (LLVM's InstCombine folds
//!   `icmp (add nsw X, C1), (add nsw X, C2)` this way, with no-wrap flags where
//!   this uses ranges; SCEV's `isKnownPredicate` by the difference's sign).
//! - A branch on an `i32` whose range excludes 0 (say a counter's value after its
//!   loop, in `{5, 6}`), or is exactly 0, branches on that constant instead: the
//!   edges stay (the CFG is unchanged) for SCCP and CFG simplification to fold.
//!   (LLVM's CorrelatedValuePropagation folds such branches through
//!   `LazyValueInfo`; GCC's VRP folds `if (x != 0)` by ranges.)
//!
//! - With the kinds of floating-point value each `f32` may hold
//!   ([`FpClasses`], LLVM's `computeKnownFPClass`): `x == x`, `x <= x` and
//!   `x >= x` are 1 and `x != x` is 0 when `x` is never NaN, and `x - x` is +0.0
//!   when `x` is always finite (an `i32` converted, a clamped sum of such). An
//!   IEEE `x - x` is NaN for an infinite or NaN `x`, so these need the proof.
//!
//! Everything rests on the ranges holding in every execution (see the analysis
//! on wrapping); values without a range (unreachable code) are left alone.

use crate::analysis::fpclass::FpClasses;
use crate::analysis::ranges::{Range, Ranges};
use crate::analysis::scev::ScalarEvolution;
use crate::analysis::{FunctionAnalyses, Preserved};
use crate::pipeline::FunctionTransform;
use ir::analysis::ControlFlowGraph;
use ir::{BinOp, CmpOp, Function, Inst, InstKind, Type, Value};
use rustc_hash::FxHashMap;

/// The range-based simplification pass.
pub struct Vrp;

impl FunctionTransform for Vrp {
    const NAME: &'static str = "vrp";
    const DESCRIPTION: &'static str =
        "simplify division, remainder and comparisons by value ranges";
    /// Rewrites instructions only.
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// Simplifies what the ranges of `f` allow; returns how many instructions changed.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// [`run`] with the function's `i32` parameters in the given ranges (one per
/// parameter; `None`: any value), which must hold on every call: what
/// interprocedural range propagation ([`crate::passes::interprocedural::ipvrp`])
/// found every call site to pass.
pub fn run_with_param_ranges(f: &mut Function, params: &[Option<Range>]) -> usize {
    let mut fa = FunctionAnalyses::default();
    let insts = layout_insts(f);
    let differences = compared_differences(f, &mut fa.scev(f), &insts);
    let classes = same_operand_floats(f, &insts).then(|| FpClasses::compute(f));
    let cfg = ControlFlowGraph::compute(f);
    let ranges = Ranges::compute_with_params(f, &cfg, params);
    simplify(f, &ranges, insts, &differences, classes.as_ref())
}

/// The instructions of `f`, in layout order.
fn layout_insts(f: &Function) -> Vec<Inst> {
    f.layout
        .blocks()
        .flat_map(|b| f.layout.block_insts(b))
        .collect()
}

/// [`run`] with the CFG taken from `fa`.
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    let insts = layout_insts(f);
    let differences = compared_differences(f, &mut fa.scev(f), &insts);
    let classes = same_operand_floats(f, &insts).then(|| FpClasses::compute(f));
    let ranges = fa.ranges(f);
    simplify(f, ranges, insts, &differences, classes.as_ref())
}

/// Applies the rules to `insts` under `ranges` (and the compared differences
/// and float classes computed beforehand); how many instructions changed.
fn simplify(
    f: &mut Function,
    ranges: &Ranges,
    insts: Vec<Inst>,
    differences: &FxHashMap<Inst, i64>,
    classes: Option<&FpClasses>,
) -> usize {
    let mut changed = 0;
    for inst in insts {
        let done = match *f.kind(inst) {
            InstKind::Binary {
                op: BinOp::SRem,
                args: [x, c],
            } => remainder(f, ranges, inst, x, c),
            InstKind::Binary {
                op: BinOp::SDiv,
                args: [x, c],
            } => division(f, ranges, inst, x, c),
            InstKind::Cmp { op, args: [a, b] } if a == b && op.is_float() => {
                classes.is_some_and(|c| float_self_comparison(f, c, inst, op, a))
            }
            InstKind::Binary {
                op: BinOp::FSub,
                args: [a, b],
            } if a == b => classes.is_some_and(|c| float_self_difference(f, c, inst, a)),
            InstKind::Cmp { op, args: [a, b] } => {
                let d = differences.get(&inst).copied();
                comparison(f, ranges, inst, op, [a, b], d)
            }
            InstKind::Br { cond, .. } => branch(f, ranges, inst, cond),
            _ => false,
        };
        changed += usize::from(done);
    }
    changed
}

/// The range of `v`, when it is an `i32` the solve reached.
fn range(f: &Function, ranges: &Ranges, v: Value) -> Option<Range> {
    (f.value_type(v) == Type::I32)
        .then(|| ranges.get(v))
        .flatten()
}

/// Replaces the result of `inst` by `v` and removes it.
fn replace(f: &mut Function, inst: Inst, v: Value) {
    let r = f.inst_result(inst).expect("a value");
    f.replace_all_uses(r, v);
    f.remove_inst(inst);
}

/// Inserts `op a, b` before `at`; returns its result.
fn emit(f: &mut Function, at: Inst, kind: InstKind) -> Value {
    let i = f.insert_inst_before(at, kind, Type::I32);
    f.copy_src_loc(at, i);
    f.inst_result(i).expect("a value")
}

fn bin(f: &mut Function, at: Inst, op: BinOp, a: Value, b: Value) -> Value {
    emit(f, at, InstKind::Binary { op, args: [a, b] })
}

fn cmp(f: &mut Function, at: Inst, op: CmpOp, a: Value, b: Value) -> Value {
    emit(f, at, InstKind::Cmp { op, args: [a, b] })
}

fn remainder(f: &mut Function, ranges: &Ranges, inst: Inst, x: Value, c: Value) -> bool {
    if small_dividend(f, ranges, inst, x, c) {
        return true;
    }
    let (Some(c), Some(r)) = (f.as_iconst(c), range(f, ranges, x)) else {
        return false;
    };
    if c == i32::MIN {
        return false;
    }
    let m = c.unsigned_abs() as i64;
    if m < 2 {
        return false;
    }
    if r.within(-(m - 1), m - 1) {
        replace(f, inst, x);
        return true;
    }
    let power_of_two = (m as u64).is_power_of_two();
    let m32 = f.iconst(m as i32);
    if r.is_non_negative() && power_of_two {
        let mask = f.iconst(m as i32 - 1);
        f.replace_kind(
            inst,
            InstKind::Binary {
                op: BinOp::And,
                args: [x, mask],
            },
        );
        return true;
    }
    if let Some(k) = one_period(r, m) {
        // x - k*m (wrapping: k*m can be -2^31, the result is in (-m, m)).
        let off = f.iconst((-k * m) as i32);
        f.replace_kind(
            inst,
            InstKind::Binary {
                op: BinOp::Add,
                args: [x, off],
            },
        );
        return true;
    }
    let one_sided = r.within(0, 2 * m - 1);
    if !one_sided && (power_of_two || !r.within(-(2 * m - 1), 2 * m - 1)) {
        return false;
    }
    // x - (m & ((x < m) - 1)): subtracts m exactly when x >= m.
    let below = cmp(f, inst, CmpOp::Slt, x, m32);
    let minus_one = f.iconst(-1);
    let all_ones_if_above = bin(f, inst, BinOp::Add, below, minus_one);
    let sub = bin(f, inst, BinOp::And, all_ones_if_above, m32);
    if one_sided {
        f.replace_kind(
            inst,
            InstKind::Binary {
                op: BinOp::Sub,
                args: [x, sub],
            },
        );
        return true;
    }
    // ... + (m & -(x < 1 - m)): adds m exactly when x <= -m.
    let down = bin(f, inst, BinOp::Sub, x, sub);
    let floor = f.iconst(1 - m as i32);
    let under = cmp(f, inst, CmpOp::Slt, x, floor);
    let zero = f.iconst(0);
    let all_ones_if_under = bin(f, inst, BinOp::Sub, zero, under);
    let add = bin(f, inst, BinOp::And, all_ones_if_under, m32);
    f.replace_kind(
        inst,
        InstKind::Binary {
            op: BinOp::Add,
            args: [down, add],
        },
    );
    true
}

/// The quotient `k` of `x / m` (truncated, as C divides) shared by every `x` in
/// `r`, when there is one: `r` lies in one period `[k*m, (k+1)*m)` for `k >= 0`,
/// or `(k*m - m, k*m]` for `k <= 0` (truncation is monotonic, so the quotients of
/// the bounds decide; a range across 0 has one only within `(-m, m)`, `k = 0`).
/// Then `x / m = k` and `x % m = x - k*m` (LLVM's CorrelatedValuePropagation,
/// `processUDivOrURem` on `X` in `[C, 2C)`, generalised to any period).
fn one_period(r: Range, m: i64) -> Option<i64> {
    let k = i64::from(r.lo) / m;
    (k == i64::from(r.hi) / m).then_some(k)
}

/// The least magnitude of a divisor in `y` when every value of it has the same
/// sign (none is zero).
fn least_magnitude(y: Range) -> Option<i64> {
    if y.lo > 0 {
        Some(i64::from(y.lo))
    } else if y.hi < 0 {
        Some(-i64::from(y.hi))
    } else {
        None
    }
}

/// `x / y` is 0 and `x % y` is `x` when the divisor is not a constant but every
/// value it takes exceeds `|x|` in magnitude (LLVM's CorrelatedValuePropagation,
/// `processSDivOrSRem` on `|X| < |Y|`; GCC's `simplify_div_or_mod_using_ranges`).
fn small_dividend(f: &mut Function, ranges: &Ranges, inst: Inst, x: Value, y: Value) -> bool {
    if f.as_iconst(y).is_some() {
        return false;
    }
    let (Some(ry), Some(rx)) = (range(f, ranges, y), range(f, ranges, x)) else {
        return false;
    };
    let Some(m) = least_magnitude(ry) else {
        return false;
    };
    if !rx.within(-(m - 1), m - 1) {
        return false;
    }
    let v = match *f.kind(inst) {
        InstKind::Binary {
            op: BinOp::SDiv, ..
        } => f.iconst(0),
        _ => x,
    };
    replace(f, inst, v);
    true
}

fn division(f: &mut Function, ranges: &Ranges, inst: Inst, x: Value, c: Value) -> bool {
    if small_dividend(f, ranges, inst, x, c) {
        return true;
    }
    let (Some(c), Some(r)) = (f.as_iconst(c), range(f, ranges, x)) else {
        return false;
    };
    if c != i32::MIN && c.unsigned_abs() >= 2 {
        if let Some(k) = one_period(r, i64::from(c.unsigned_abs())) {
            let q = f.iconst(if c > 0 { k } else { -k } as i32);
            replace(f, inst, q);
            return true;
        }
    }
    if c < 1 {
        return false;
    }
    if r.within(-(c as i64 - 1), c as i64 - 1) {
        let zero = f.iconst(0);
        replace(f, inst, zero);
        return true;
    }
    if r.is_non_negative() && (c as u32).is_power_of_two() && c > 1 {
        let k = f.iconst(c.trailing_zeros() as i32);
        f.replace_kind(
            inst,
            InstKind::Binary {
                op: BinOp::AShr,
                args: [x, k],
            },
        );
        return true;
    }
    false
}

/// Whether `f` compares or subtracts an `f32` with itself (so the classes are
/// worth solving).
fn same_operand_floats(f: &Function, insts: &[Inst]) -> bool {
    insts.iter().any(|&i| match *f.kind(i) {
        InstKind::Cmp { op, args: [a, b] } => a == b && op.is_float(),
        InstKind::Binary {
            op: BinOp::FSub,
            args: [a, b],
        } => a == b,
        _ => false,
    })
}

/// `x op x` for a float comparison: ordered `<` and `>` are always false, and
/// the others are decided when `x` is never NaN.
fn float_self_comparison(
    f: &mut Function,
    classes: &FpClasses,
    inst: Inst,
    op: CmpOp,
    x: Value,
) -> bool {
    let ordered = classes.get(f, x).is_ordered();
    let value = match op {
        CmpOp::FLt | CmpOp::FGt => false,
        CmpOp::FEq | CmpOp::FLe | CmpOp::FGe if ordered => true,
        CmpOp::FNe if ordered => false,
        _ => return false,
    };
    let v = f.iconst(i32::from(value));
    replace(f, inst, v);
    true
}

/// `x - x` is +0.0 when `x` is always finite.
fn float_self_difference(f: &mut Function, classes: &FpClasses, inst: Inst, x: Value) -> bool {
    if !classes.get(f, x).is_finite() {
        return false;
    }
    let zero = f.fconst(0.0);
    replace(f, inst, zero);
    true
}

/// `a - b` for each integer comparison `a op b` of two non-constant `i32`s where
/// scalar evolution finds it constant (modulo 2^32, sign-extended).
fn compared_differences(
    f: &Function,
    se: &mut ScalarEvolution,
    insts: &[Inst],
) -> FxHashMap<Inst, i64> {
    let mut differences = FxHashMap::default();
    for &inst in insts {
        let InstKind::Cmp { op, args: [a, b] } = *f.kind(inst) else {
            continue;
        };
        let integer = matches!(
            op,
            CmpOp::Eq | CmpOp::Ne | CmpOp::Slt | CmpOp::Sle | CmpOp::Sgt | CmpOp::Sge
        );
        if !integer
            || a == b
            || f.value_type(a) != Type::I32
            || f.as_iconst(a).is_some()
            || f.as_iconst(b).is_some()
        {
            continue;
        }
        if let Some(d) = se.constant_difference(a, b) {
            differences.insert(inst, d);
        }
    }
    differences
}

/// `a op b` decided by `d = a - b` (modulo 2^32, sign-extended) and the range of
/// `b`: equality by `d` alone, an order when `b + d` stays an `i32` for every `b`
/// in `rb` (so `a` is exactly `b + d`).
fn decided_by_difference(op: CmpOp, d: i64, rb: Option<Range>) -> Option<bool> {
    match op {
        CmpOp::Eq => return Some(d == 0),
        CmpOp::Ne => return Some(d != 0),
        _ => {}
    }
    let rb = rb?;
    let exact =
        i64::from(rb.lo) + d >= i64::from(i32::MIN) && i64::from(rb.hi) + d <= i64::from(i32::MAX);
    if !exact {
        return None;
    }
    match op {
        CmpOp::Slt => Some(d < 0),
        CmpOp::Sle => Some(d <= 0),
        CmpOp::Sgt => Some(d > 0),
        CmpOp::Sge => Some(d >= 0),
        _ => None,
    }
}

/// `a op b` (`args`) decided by the operands' ranges, or by their constant
/// difference `d` when there is one.
fn comparison(
    f: &mut Function,
    ranges: &Ranges,
    inst: Inst,
    op: CmpOp,
    args: [Value; 2],
    d: Option<i64>,
) -> bool {
    let [a, b] = args;
    if f.as_iconst(a).is_some() && f.as_iconst(b).is_some() {
        return false; // constant folding's
    }
    let (x, y) = (range(f, ranges, a), range(f, ranges, b));
    let by_ranges = match (x, y) {
        (Some(x), Some(y)) => crate::analysis::ranges::compare(op, x, y),
        _ => None,
    };
    let decided = by_ranges.or_else(|| decided_by_difference(op, d?, y));
    let Some(value) = decided else {
        return false;
    };
    let v = f.iconst(i32::from(value));
    replace(f, inst, v);
    true
}

/// A branch on `cond`, an `i32` whose range decides it, branches on the constant
/// it always is as a truth value.
fn branch(f: &mut Function, ranges: &Ranges, inst: Inst, cond: Value) -> bool {
    if f.as_iconst(cond).is_some() {
        return false;
    }
    let Some(r) = range(f, ranges, cond) else {
        return false;
    };
    let taken = if r.lo > 0 || r.hi < 0 {
        1
    } else if r.lo == 0 && r.hi == 0 {
        0
    } else {
        return false;
    };
    let InstKind::Br {
        then_dest,
        else_dest,
        ..
    } = f.kind(inst).clone()
    else {
        return false;
    };
    let cond = f.iconst(taken);
    f.replace_kind(
        inst,
        InstKind::Br {
            cond,
            then_dest,
            else_dest,
        },
    );
    true
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    /// `(a < b) / (g % 9 + 10)`: a 0-or-1 dividend under a divisor in [2, 18] is 0,
    /// and the remainder is the dividend; a divisor that may be 1 (or 0) keeps both.
    #[test]
    fn a_small_dividend_over_a_variable_divisor_folds() {
        let src = "declare @getint() -> i32\ndeclare @putint(i32) -> void\n\
            func @main() -> i32 {\nbb0:\n  %0 = call @getint()\n  %1 = call @getint()\n  \
            %2 = slt %0, %1\n  %3 = srem %0, 9\n  %4 = add %3, 10\n  %5 = sdiv %2, %4\n  \
            %6 = srem %2, %4\n  %7 = sub -10, %3\n  %8 = sdiv %2, %7\n  %9 = add %3, 9\n  \
            %10 = sdiv %2, %9\n  %11 = srem %2, %9\n  call @putint(%5)\n  call @putint(%6)\n  \
            call @putint(%8)\n  call @putint(%10)\n  call @putint(%11)\n  ret 0\n}\n";
        for input in ["1 2", "2 1", "-17 -3", "9 100"] {
            let out = same_behaviour(src, &["vrp"], input);
            assert!(out.contains("call @putint(0)"), "{out}");
            assert!(out.contains("call @putint(%2)"), "{out}");
            // The divisor `g % 9 + 9` may be 1: its division and remainder stay.
            assert_eq!(out.matches("sdiv %2").count(), 1, "{out}");
            assert_eq!(out.matches("srem %2").count(), 1, "{out}");
        }
    }

    /// `i - 2 < i - 1` with `i` in {-3, -2} (a counter after its loop): the
    /// difference is -1 and neither side wraps, so it is 1. So is `x + 1 != x + 2`
    /// for any `x` (equality needs no range). With `x` from input, `x + 2 > x + 1`
    /// and `x - 2 < x - 1` stay: at `x = 2^31 - 1` and `x = -2^31 + 1`, one side
    /// wraps.
    #[test]
    fn comparisons_of_values_a_constant_apart_fold_when_neither_wraps() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = slt %0, 3
  br %1, bb1(-3), bb1(-2)
bb1(%2: i32):
  %3 = add %2, -2
  %4 = add %2, -1
  %5 = slt %3, %4
  call @putint(%5)
  %6 = add %0, 1
  %7 = add %0, 2
  %8 = ne %6, %7
  call @putint(%8)
  %9 = sgt %7, %6
  call @putint(%9)
  %10 = add %0, -2
  %11 = add %0, -1
  %12 = slt %10, %11
  call @putint(%12)
  ret 0
}
"#;
        for input in ["1", "7", "-2147483647", "2147483647"] {
            let out = same_behaviour(src, &["vrp"], input);
            assert_eq!(out.matches("call @putint(1)").count(), 2, "{out}");
            assert!(!out.contains("ne %"), "{out}");
            assert!(out.contains("sgt %6, %5"), "{out}");
            assert!(out.contains("slt %8, %9"), "{out}");
        }
    }

    /// `p = (float)n`, clamped to [-2^20, 2^20]: never NaN and finite, so
    /// `p != p` is 0, `p == p` is 1 and `p - p` is 0.0. A float read from input,
    /// clamped the same way, may be NaN (it fails both tests and stays): its
    /// comparisons with itself stay, and so does its difference (NaN for NaN).
    #[test]
    fn float_self_comparisons_fold_for_values_never_nan() {
        let src = r#"
declare @getint() -> i32
declare @getfloat() -> f32
declare @putint(i32) -> void
declare @putfloat(f32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getfloat()
  %2 = sitofp %0
  %3 = fmul %2, %2
  %4 = fgt %3, 1048576.0
  br %4, bb1(1048576.0), bb1(%3)
bb1(%5: f32):
  %6 = flt %5, -1048576.0
  br %6, bb2(-1048576.0), bb2(%5)
bb2(%7: f32):
  %8 = fne %7, %7
  call @putint(%8)
  %9 = feq %7, %7
  call @putint(%9)
  %10 = fsub %7, %7
  call @putfloat(%10)
  %11 = fgt %1, 1048576.0
  br %11, bb3(1048576.0), bb3(%1)
bb3(%12: f32):
  %13 = flt %12, -1048576.0
  br %13, bb4(-1048576.0), bb4(%12)
bb4(%14: f32):
  %15 = fne %14, %14
  call @putint(%15)
  %16 = fsub %14, %14
  call @putfloat(%16)
  %17 = fsub %3, %3
  call @putfloat(%17)
  ret 0
}
"#;
        for input in ["3 2.5", "-100000 nan", "7 inf"] {
            let out = same_behaviour(src, &["vrp"], input);
            assert!(out.contains("call @putint(0)"), "{out}");
            assert!(out.contains("call @putint(1)"), "{out}");
            assert!(out.contains("call @putfloat(0.0)"), "{out}");
            // The input's and the unclamped square's stay.
            assert_eq!(out.matches("fne ").count(), 1, "{out}");
            assert_eq!(out.matches("fsub ").count(), 2, "{out}");
        }
    }

    /// `i = 5; while (i < 6 && c) i = i + 1;` leaves `i` in {5, 6} (here as the
    /// two constants final value replacement leaves); a branch on it (`x || i`)
    /// always takes its true edge. `ONE` and `OTHER` are the values `i` may have.
    const EITHER: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = slt %0, 3
  br %1, bb1(ONE), bb1(OTHER)
bb1(%2: i32):
  br %2, bb2, bb3
bb2:
  call @putint(1)
  ret 0
bb3:
  call @putint(2)
  ret 0
}
"#;

    fn either(one: &str, other: &str) -> String {
        EITHER.replace("ONE", one).replace("OTHER", other)
    }

    #[test]
    fn a_branch_on_a_value_never_zero_takes_its_true_edge() {
        for input in ["0", "7"] {
            let out = same_behaviour(&either("5", "6"), &["vrp"], input);
            assert!(out.contains("br 1, bb2, bb3"), "{out}");
            let out = same_behaviour(&either("-5", "-1"), &["vrp"], input);
            assert!(out.contains("br 1, bb2, bb3"), "{out}");
            // Always 0 (a parameter, not a constant): the false edge.
            let out = same_behaviour(&either("0", "0"), &["vrp"], input);
            assert!(out.contains("br 0, bb2, bb3"), "{out}");
            // 0 or 6: the branch stays.
            let out = same_behaviour(&either("0", "6"), &["vrp"], input);
            assert!(out.contains("br %2, bb2, bb3"), "{out}");
        }
    }

    #[test]
    fn a_remainder_of_a_sum_of_remainders_becomes_two_corrections() {
        check(
            &["vrp"],
            "func @f(i32, i32) -> i32 {\n\
             bb0(%0: i32, %1: i32):\n  %2 = srem %0, 1000\n  %3 = add %2, %2\n  %4 = srem %3, 1000\n  ret %4\n}\n",
            "func @f(i32, i32) -> i32 {\n\
             bb0(%0: i32, %1: i32):\n  %2 = srem %0, 1000\n  %3 = add %2, %2\n  %4 = slt %3, 1000\n  \
             %5 = add %4, -1\n  %6 = and %5, 1000\n  %7 = sub %3, %6\n  %8 = slt %3, -999\n  \
             %9 = sub 0, %8\n  %10 = and %9, 1000\n  %11 = add %7, %10\n  ret %11\n}\n",
        );
    }

    #[test]
    fn non_negative_counters_divide_and_reduce_by_shifts_and_masks() {
        check(
            &["vrp"],
            "func @f(i32) -> i32 {\n\
             bb0(%0: i32):\n  %1 = slt 0, %0\n  br %1, bb1(0, 0), bb2(0)\n\
             bb1(%2: i32, %3: i32):\n  %4 = srem %2, 2\n  %5 = sdiv %2, 8\n  %6 = add %3, %4\n  \
             %7 = add %6, %5\n  %8 = srem %4, 5\n  %9 = slt %2, 0\n  %10 = add %7, %9\n  %11 = add %10, %8\n  \
             %12 = add %2, 1\n  %13 = slt %12, %0\n  br %13, bb1(%12, %11), bb2(%11)\n\
             bb2(%14: i32):\n  ret %14\n}\n",
            "func @f(i32) -> i32 {\n\
             bb0(%0: i32):\n  %1 = slt 0, %0\n  br %1, bb1(0, 0), bb2(0)\n\
             bb1(%2: i32, %3: i32):\n  %4 = and %2, 1\n  %5 = ashr %2, 3\n  %6 = add %3, %4\n  \
             %7 = add %6, %5\n  %8 = add %7, 0\n  %9 = add %8, %4\n  \
             %10 = add %2, 1\n  %11 = slt %10, %0\n  br %11, bb1(%10, %9), bb2(%9)\n\
             bb2(%12: i32):\n  ret %12\n}\n",
        );
    }

    #[test]
    fn remainders_that_might_need_more_than_one_correction_stay() {
        let src = "func @f(i32, i32) -> i32 {\n\
             bb0(%0: i32, %1: i32):\n  %2 = srem %0, 1000\n  %3 = mul %2, 3\n  %4 = srem %3, 1000\n  \
             %5 = srem %0, 1024\n  %6 = add %5, %5\n  %7 = srem %6, 1024\n  %8 = srem %1, 7\n  %9 = add %4, %7\n  \
             %10 = add %9, %8\n  ret %10\n}\n";
        check(&["vrp"], src, src);
    }

    #[test]
    fn corrected_remainders_agree_with_the_interpreter() {
        // Sums and differences of remainders, positive and negative, at the edges.
        let src = "func @main() -> i32 {\n\
             bb0:\n  jump bb1(-2000003, 0)\n\
             bb1(%0: i32, %1: i32):\n  %2 = srem %0, 1000003\n  %3 = add %2, %2\n  %4 = srem %3, 1000003\n  \
             %5 = sub 0, %2\n  %6 = sub %5, %2\n  %7 = srem %6, -1000003\n  %8 = srem %2, 1000003\n  \
             %9 = add %2, 1000002\n  %10 = srem %9, 1000003\n  %11 = mul %4, 31\n  %12 = add %11, %7\n  \
             %13 = mul %12, 17\n  %14 = add %13, %8\n  %15 = mul %14, 7\n  %16 = add %15, %10\n  \
             %17 = add %1, %16\n  %18 = add %0, 99991\n  %19 = slt %18, 2000004\n  br %19, bb1(%18, %17), bb2\n\
             bb2:\n  call @putint(%17)\n  ret 0\n}\n\
             declare @putint(i32) -> void\n";
        let out = same_behaviour(src, &["vrp"], "");
        assert!(out.contains("and"), "the remainders were rewritten:\n{out}");
    }

    #[test]
    fn every_sum_and_difference_of_small_remainders_is_reduced_exactly() {
        // a = i % 7 and b = j % 7 for i, j in -20..=20: (a + b) % 7 and (a - b) % 7 at
        // every value the corrections can meet, folded into a checksum.
        let src = "func @main() -> i32 {\n\
             bb0:\n  jump bb1(-20, 0)\n\
             bb1(%0: i32, %1: i32):\n  jump bb2(-20, %1)\n\
             bb2(%2: i32, %3: i32):\n  %4 = srem %0, 7\n  %5 = srem %2, -7\n  %6 = add %4, %5\n  \
             %7 = srem %6, 7\n  %8 = sub %4, %5\n  %9 = srem %8, 7\n  %10 = mul %3, 31\n  \
             %11 = add %10, %7\n  %12 = mul %11, 13\n  %13 = add %12, %9\n  %14 = add %2, 1\n  \
             %15 = slt %14, 21\n  br %15, bb2(%14, %13), bb3\n\
             bb3:\n  %16 = add %0, 1\n  %17 = slt %16, 21\n  br %17, bb1(%16, %13), bb4\n\
             bb4:\n  call @putint(%13)\n  ret 0\n}\n\
             declare @putint(i32) -> void\n";
        let out = same_behaviour(src, &["vrp"], "");
        assert_eq!(
            out.matches("and").count(),
            4,
            "both remainders rewritten:\n{out}"
        );
    }

    /// `x / m` and `x % m` when every `x` lies in one period: `x = i % 3 + K` in
    /// `[5, 9]`, `[-9, -5]` (remainder negative, as C's), near `i32::MAX`, by
    /// positive and negative divisors, for every `i` in -20..=20. Ranges across a
    /// multiple of the divisor (`[1, 5] / 5`, `[-5, -1] / 5`, `[-5, -1] % 4`) or
    /// across 0 beyond `(-m, m)` (`[-3, 1] / 3`) keep their divisions.
    #[test]
    fn a_dividend_within_one_period_has_a_constant_quotient() {
        let src = "func @main() -> i32 {\n\
             bb0:\n  jump bb1(-20, 0)\n\
             bb1(%0: i32, %1: i32):\n  %2 = srem %0, 3\n  %3 = add %2, 7\n  %4 = srem %3, 5\n  %5 = add %2, 7\n  %6 = sdiv %5, 5\n  %7 = sub %2, 7\n  %8 = srem %7, -5\n  %9 = sub %2, 7\n  %10 = sdiv %9, -5\n  %11 = add %2, 2147483645\n  %12 = srem %11, 1000\n  %13 = add %2, 2147483645\n  %14 = sdiv %13, -1000\n  %15 = add %2, 3\n  %16 = sdiv %15, 5\n  %17 = sub %2, 3\n  %18 = sdiv %17, 5\n  %19 = sub %2, 3\n  %20 = srem %19, 4\n  %21 = sub %2, 1\n  %22 = sdiv %21, 3\n  %23 = mul %1, 31\n  %24 = add %23, %4\n  %25 = mul %24, 31\n  %26 = add %25, %6\n  %27 = mul %26, 31\n  %28 = add %27, %8\n  %29 = mul %28, 31\n  %30 = add %29, %10\n  %31 = mul %30, 31\n  %32 = add %31, %12\n  %33 = mul %32, 31\n  %34 = add %33, %14\n  %35 = mul %34, 31\n  %36 = add %35, %16\n  %37 = mul %36, 31\n  %38 = add %37, %18\n  %39 = mul %38, 31\n  %40 = add %39, %20\n  %41 = mul %40, 31\n  %42 = add %41, %22\n  %43 = add %0, 1\n  %44 = slt %43, 21\n  br %44, bb1(%43, %42), bb2\n\
             bb2:\n  call @putint(%42)\n  ret 0\n}\n\
             declare @putint(i32) -> void\n";
        let out = same_behaviour(src, &["vrp"], "");
        assert_eq!(out.matches("sdiv").count(), 3, "{out}");
        assert_eq!(out.matches("srem").count(), 2, "{out}");
        for folded in ["add %3, -5", "add %6, 5", "add %9, -2147483000"] {
            assert!(out.contains(folded), "{folded}:\n{out}");
        }
    }
}
