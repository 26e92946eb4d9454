//! Instruction combining: local algebraic simplification, one instruction at a time,
//! driven by a worklist (an instruction is revisited when an operand's definition
//! changes), in the manner of LLVM's InstCombine; the rules are the identities of the
//! seed write-up's "指令合并" section plus canonicalisations that expose them.
//!
//! Rules (integers wrap, so every rule holds for all `i32` values):
//! - constant operands fold ([`crate::fold`]; never a division by zero);
//! - commutative operations and comparisons put a constant operand on the right;
//! - `x+0`, `x-0`, `x*1`, `x/1`, `x|0`, `x^0`, `x&-1`, shifts by 0 → `x`;
//!   `x*0`, `x&0`, `x%1`, `x%-1` → 0; `x|-1` → -1;
//! - `x-c` → `x+(-c)`; `x*-1` and `x/-1` → `0-x`; `x*2^k` → `x<<k`; shift amounts are
//!   reduced modulo 32;
//! - `(x op c1) op c2` → `x op (c1 op c2)` for `+ * & | ^`; `(x<<c1)<<c2` and `>>`
//!   likewise;
//! - `x-x`, `x^x` → 0; `x&x`, `x|x` → `x`; `x+x` → `x<<1`; `0-(0-x)` → `x`;
//!   `a+(0-x)` → `a-x`;
//! - `x==x`, `x<=x`, `x>=x` → 1; `x!=x`, `x<x`, `x>x` → 0; for floats only `x<x`,
//!   `x>x` → 0 (with NaN the others are not constant);
//! - `(a cmp b) != 0` and `(a cmp b) == 1` → `a cmp b`; `(a cmp b) == 0` and
//!   `(a cmp b) != 1` → the inverse comparison (integer comparisons only);
//! - `x % 2^k == c` and `!=`, the remainder used only there → a test of
//!   `x & (sign | 2^k - 1)`; `x % 2^k` used only as a truth value (a branch
//!   condition, or compared with 0) → `x & (2^k - 1)`;
//! - `x * c` used only as a truth value → `x`, for an odd `c`, or a non-zero `c`
//!   and a 0/1 `x`;
//! - `fneg (fneg x)` → `x` (the sign bit flips twice, NaN payload included);
//! - `sitofp x ± C` and `sitofp x ± sitofp y` → `sitofp (x ± ...)` when the value
//!   ranges keep every operand and the result within ±2^24, where the float
//!   operation is exact ([`int_float_sum`]); a comparison of a converted integer
//!   with a constant → an integer comparison ([`int_to_float_compare`]);
//! - a float comparison of arithmetic on one converted integer of at most four
//!   values → its value, when every value gives the same ([`float_cases`]);
//! - `x / c` → `x * (1 / c)` for a float `c` that is, like its reciprocal, a normal
//!   power of two (both round the same real number: exact for every `x`);
//! - `gep b, 0, s` → `b`, and `gep (gep b, c1, s1), c2, s2` → one `gep` of `b` by the
//!   summed constant offset (addresses are 64-bit: the sum is exact), so that two
//!   names of one address (unrolled copies stepping a pointer) become one.
//!
//! Deliberately **not** done, because they are wrong for some inputs: float `x+0.0`
//! (`-0.0+0.0 = +0.0`), float `x*0.0` (NaN, infinities, `-0.0`), float `x-x` (NaN,
//! infinities), float `x*1.0` and `x+(-0.0)` (a NaN operand would lose its sign and
//! payload, which RISC-V arithmetic canonicalises), `x/x` and `x%x` (x may be 0),
//! `0/x` (x may be 0).
//!
//! Arithmetic made dead by a rewrite is removed (not divisions, which might trap; DCE
//! decides about those).

use crate::analysis::ranges::{compare, Range, Ranges};
use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::fold::{fold_binary, fold_cmp, fold_unary, Const};
use crate::pipeline::FunctionTransform;
use ir::{BinOp, CmpOp, Function, Inst, InstKind, SecondaryMap, Type, UnOp, Value};

mod float_cases;
mod int_float_sum;
mod int_to_float_compare;
mod smaller_dividend;

/// The instcombine pass.
pub struct InstCombine;

impl FunctionTransform for InstCombine {
    const NAME: &'static str = "instcombine";
    const DESCRIPTION: &'static str =
        "algebraic simplification and canonicalisation of instructions";
    /// Rewrites instructions only: no block or edge changes.
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa)
    }
}

/// The value ranges of the function being combined ([`Ranges`]), solved when a
/// comparison first asks. They stay true while the pass runs: its rewrites keep
/// every value's meaning, values it creates get the range of their operation on
/// their operands' ([`LazyRanges::created`]), and the two
/// rules that give a remainder another value, because its only uses cannot tell
/// ([`remainder_as_truth`], [`remainder_test`]), make it unknown too
/// ([`LazyRanges::forget`]). When nothing changed before that first question,
/// they are the analysis manager's ([`FunctionAnalyses::ranges`]): cached from an
/// earlier pass if no pass changed the function since, and kept for the passes
/// after this one if it changes nothing.
struct LazyRanges<'a> {
    fa: &'a mut FunctionAnalyses,
    /// Ranges solved after a change of this pass (not the manager's).
    own: Option<Ranges>,
    /// Whether the ranges are the manager's.
    shared: bool,
    /// Whether the pass changed the function so far.
    dirty: bool,
    /// Values whose meaning changed since the solve.
    forgotten: Vec<Value>,
}

impl LazyRanges<'_> {
    fn of(&mut self, f: &Function, v: Value) -> Option<Range> {
        if f.as_iconst(v).is_none() && (f.value_type(v) != Type::I32 || self.forgotten.contains(&v))
        {
            return None;
        }
        // A constant is itself, and the solve would give a value of unknown
        // range the full range: neither needs a solve.
        if let Some(c) = f.as_iconst(v) {
            return Some(Range::constant(c));
        }
        if crate::analysis::ranges::full_by_definition(f, v) {
            return Some(Range::FULL);
        }
        if self.shared {
            let solved = self.fa.ranges(f).of(f, v);
            return solved.or_else(|| self.created(f, v));
        }
        if self.own.is_none() {
            if !self.dirty {
                // `f` is as the pass found it: the manager's ranges are those of `f`.
                self.shared = true;
                return self.fa.ranges(f).of(f, v);
            }
            let fa = &mut *self.fa;
            self.own = Some(Ranges::compute(f, fa.cfg(f)));
        }
        let solved = self.own.as_ref().expect("solved above").of(f, v);
        solved.or_else(|| self.created(f, v))
    }

    /// The range of a value this pass created after the solve (which the solve
    /// does not know): an integer operation of values with known ranges gets the
    /// range its operation gives them ([`crate::analysis::ranges::binary`]).
    fn created(&mut self, f: &Function, v: Value) -> Option<Range> {
        let InstKind::Binary { op, args: [a, b] } = *f.kind(f.def_inst(v)?) else {
            return None;
        };
        if op.is_float() || f.value_type(v) != Type::I32 {
            return None;
        }
        let (x, y) = (self.of(f, a)?, self.of(f, b)?);
        Some(crate::analysis::ranges::binary(op, x, y))
    }

    /// `v` now computes another value than it did when the ranges were solved.
    fn forget(&mut self, v: Value) {
        self.forgotten.push(v);
    }
}

/// What a rule decided for an instruction.
enum Action {
    /// Its result equals this value.
    Value(Value),
    /// Its result is this constant.
    Const(Const),
    /// It should compute the same result this way instead.
    Kind(InstKind),
}

/// Runs instcombine over `f`.
pub fn run(f: &mut Function) -> bool {
    run_in(f, &mut FunctionAnalyses::default())
}

/// [`run`] with the CFG taken from `fa`.
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
    let mut ranges = LazyRanges {
        fa,
        own: None,
        shared: false,
        dirty: false,
        forgotten: Vec::new(),
    };
    let mut work: Vec<Inst> = Vec::new();
    let mut queued: SecondaryMap<Inst, bool> = f.inst_map();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            work.push(i);
            queued[i] = true;
        }
    }
    work.reverse(); // pop in layout order
    let mut changed = false;
    let push = |work: &mut Vec<Inst>, queued: &mut SecondaryMap<Inst, bool>, i: Inst| {
        if !queued[i] {
            queued[i] = true;
            work.push(i);
        }
    };
    let mut steps = 0usize;
    while let Some(i) = work.pop() {
        queued[i] = false;
        if !f.layout.is_inst_inserted(i) {
            continue;
        }
        steps += 1;
        if steps > 100 * f.num_insts() + 1000 {
            break; // a safety net against rules undoing each other; never expected
        }
        let Some(r) = f.inst_result(i) else { continue };
        if !f.has_users(r) {
            // Nothing to simplify for; delete it if that is safe.
            if is_removable(f, f.kind(i)) {
                for a in f.kind(i).args() {
                    if let Some(d) = f.def_inst(a) {
                        push(&mut work, &mut queued, d);
                    }
                }
                f.remove_inst(i);
                changed = true;
            }
            continue;
        }
        ranges.dirty = changed;
        let Some(action) = simplify(f, &mut ranges, i) else {
            continue;
        };
        changed = true;
        match action {
            Action::Value(_) | Action::Const(_) => {
                let v = match action {
                    Action::Value(v) => v,
                    Action::Const(c) => c.value(f),
                    Action::Kind(_) => unreachable!(),
                };
                for &u in f.users(r) {
                    push(&mut work, &mut queued, u);
                }
                f.replace_all_uses(r, v);
                push(&mut work, &mut queued, i); // now unused: removed when popped
            }
            Action::Kind(k) => {
                // Old operands may lose their last use.
                for a in f.kind(i).args() {
                    if let Some(d) = f.def_inst(a) {
                        push(&mut work, &mut queued, d);
                    }
                }
                f.replace_kind(i, k);
                for &u in f.users(r) {
                    push(&mut work, &mut queued, u);
                }
                push(&mut work, &mut queued, i);
            }
        }
    }
    changed
}

/// Arithmetic and address computations that can be deleted when unused (not
/// divisions that might trap).
fn is_removable(f: &Function, k: &InstKind) -> bool {
    match k {
        InstKind::Binary { op, args } => {
            !op.can_trap() || f.as_iconst(args[1]).is_some_and(|c| c != 0)
        }
        InstKind::Cmp { .. } | InstKind::Unary { .. } | InstKind::Gep { .. } => true,
        _ => false,
    }
}

fn simplify(f: &mut Function, ranges: &mut LazyRanges, i: Inst) -> Option<Action> {
    match *f.kind(i) {
        InstKind::Binary {
            op: BinOp::SRem,
            args: [a, b],
        } => smaller_dividend::smaller_dividend(f, ranges, BinOp::SRem, a, b)
            .or_else(|| remainder_as_truth(f, ranges, i, a, b))
            .or_else(|| simplify_binary(f, BinOp::SRem, a, b)),
        InstKind::Binary {
            op: BinOp::SDiv,
            args: [a, b],
        } => smaller_dividend::smaller_dividend(f, ranges, BinOp::SDiv, a, b)
            .or_else(|| simplify_binary(f, BinOp::SDiv, a, b)),
        InstKind::Binary {
            op: op @ (BinOp::FAdd | BinOp::FSub),
            args: [a, b],
        } => simplify_binary(f, op, a, b)
            .or_else(|| int_float_sum::int_float_sum(f, ranges, i, op, a, b)),
        InstKind::Binary {
            op: BinOp::Mul,
            args: [a, b],
        } => product_as_truth(f, i, a, b).or_else(|| simplify_binary(f, BinOp::Mul, a, b)),
        InstKind::Binary { op, args: [a, b] } => simplify_binary(f, op, a, b),
        InstKind::Cmp { op, args: [a, b] } => simplify_cmp(f, ranges, op, a, b),
        InstKind::Unary { op, arg } => simplify_unary(f, op, arg),
        InstKind::Gep {
            base,
            index,
            stride,
        } => simplify_gep(f, base, index, stride),
        _ => None,
    }
}

/// `gep b, 0, s` → `b`; `gep (gep b, c1, s1), c2, s2` → `gep b, k, s` with the
/// constant byte offsets added, `k * s = c1 * s1 + c2 * s2` (`s` the outer stride
/// when it divides the sum, else the inner one, else 1). Addresses are 64-bit, so
/// the sum is exact; `k` must fit an `i32` index.
fn simplify_gep(f: &mut Function, base: Value, index: Value, stride: u32) -> Option<Action> {
    let c2 = f.as_iconst(index)?;
    if c2 == 0 {
        return Some(Action::Value(base));
    }
    let InstKind::Gep {
        base: inner,
        index: i1,
        stride: s1,
    } = *f.kind(f.def_inst(base)?)
    else {
        return None;
    };
    let c1 = f.as_iconst(i1)?;
    let bytes = i64::from(c1) * i64::from(s1) + i64::from(c2) * i64::from(stride);
    if bytes == 0 {
        return Some(Action::Value(inner));
    }
    let s = [stride, s1]
        .into_iter()
        .find(|&s| s != 0 && bytes % i64::from(s) == 0)
        .unwrap_or(1);
    let k = i32::try_from(bytes / i64::from(s)).ok()?;
    Some(Action::Kind(InstKind::Gep {
        base: inner,
        index: f.iconst(k),
        stride: s,
    }))
}

fn bin(op: BinOp, a: Value, b: Value) -> Option<Action> {
    Some(Action::Kind(InstKind::Binary { op, args: [a, b] }))
}

/// `Some((op, x, c))` when `v` is computed as `x op c` with a constant `c`.
fn with_const(f: &Function, v: Value) -> Option<(BinOp, Value, i32)> {
    match *f.kind(f.def_inst(v)?) {
        InstKind::Binary { op, args: [x, c] } => Some((op, x, f.as_iconst(c)?)),
        _ => None,
    }
}

/// `Some(x)` when `v` is `0 - x`.
fn negation_of(f: &Function, v: Value) -> Option<Value> {
    match *f.kind(f.def_inst(v)?) {
        InstKind::Binary {
            op: BinOp::Sub,
            args: [z, x],
        } if f.as_iconst(z) == Some(0) => Some(x),
        _ => None,
    }
}

fn simplify_binary(f: &mut Function, op: BinOp, a: Value, b: Value) -> Option<Action> {
    let (ca, cb) = (Const::of(f, a), Const::of(f, b));
    if let (Some(x), Some(y)) = (ca, cb) {
        return fold_binary(op, x, y).map(Action::Const);
    }
    if op.is_commutative() && ca.is_some() {
        return bin(op, b, a);
    }
    // No identities for floats (NaN, -0.0); i64 ops only drop a sign-extended 0 or 1.
    if op.is_i64() {
        return simplify_i64(f, op, a, b);
    }
    if op.is_float() {
        return simplify_float(f, op, a, b);
    }
    let zero = Action::Const(Const::I(0));
    if let Some(c) = f.as_iconst(b) {
        let same = Some(Action::Value(a));
        match (op, c) {
            (BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor, 0) => return same,
            (BinOp::Mul | BinOp::SDiv, 1) | (BinOp::And, -1) => return same,
            (BinOp::Shl | BinOp::LShr | BinOp::AShr, c) if c & 31 == 0 => return same,
            (BinOp::Mul | BinOp::And, 0) => return Some(zero),
            // Known bits: a 0/1 value masked with 1 is itself.
            (BinOp::And, 1) if is_boolean(f, a, 4) => return same,
            // Demanded bits: only the low bits of `a` count.
            (BinOp::And, c) if c > 0 && (c as u32 + 1).is_power_of_two() => {
                let source = low_bits_source(f, a, c.trailing_ones(), 4);
                if source != a {
                    return bin(BinOp::And, source, b);
                }
            }
            (BinOp::SRem, 1 | -1) => return Some(zero),
            (BinOp::Or, -1) => return Some(Action::Const(Const::I(-1))),
            (BinOp::Sub, c) => return bin(BinOp::Add, a, f.iconst(c.wrapping_neg())),
            (BinOp::Mul | BinOp::SDiv, -1) => return bin(BinOp::Sub, f.iconst(0), a),
            (BinOp::Mul, c) if (c as u32).is_power_of_two() => {
                return bin(BinOp::Shl, a, f.iconst(c.trailing_zeros() as i32))
            }
            (BinOp::Shl | BinOp::LShr | BinOp::AShr, c) if !(0..32).contains(&c) => {
                return bin(op, a, f.iconst(c & 31))
            }
            // An exact division by 2^k (the low k bits of `a` are known zero)
            // truncates nothing: it is the arithmetic shift, and the remainder is 0.
            (BinOp::SDiv | BinOp::SRem, c)
                if c > 1
                    && (c as u32).is_power_of_two()
                    && known_trailing_zeros(f, a, 4) >= c.trailing_zeros() =>
            {
                return match op {
                    BinOp::SDiv => bin(BinOp::AShr, a, f.iconst(c.trailing_zeros() as i32)),
                    _ => Some(zero),
                };
            }
            _ => {}
        }
        // Reassociate constants: (x op c1) op c2.
        if let Some((op1, x, c1)) = with_const(f, a) {
            if op1 == op
                && matches!(
                    op,
                    BinOp::Add | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor
                )
            {
                let Some(Const::I(c)) = fold_binary(op, Const::I(c1), Const::I(c)) else {
                    return None;
                };
                return bin(op, x, f.iconst(c));
            }
            // (x / c1) / c2 = x / (c1 * c2) for positive divisors (truncating
            // division composes: LLVM's InstCombine `foldSDivSDiv`); a product past
            // 2^31 leaves 0 for every `x`, since |x| <= 2^31. At exactly 2^31 (not an
            // i32) the chain stays. Only when the inner quotient has no other use:
            // else both divisions stay and the wider one costs more (x / 2 halved
            // again at each level of an inlined recursion).
            if op1 == BinOp::SDiv && op == BinOp::SDiv && c1 > 0 && c > 0 && f.users(a).len() == 1 {
                let product = i64::from(c1) * i64::from(c);
                if let Ok(p) = i32::try_from(product) {
                    return bin(BinOp::SDiv, x, f.iconst(p));
                }
                if product > 1 << 31 {
                    return Some(zero);
                }
            }
            if op1 == op && matches!(op, BinOp::Shl | BinOp::LShr | BinOp::AShr) {
                let total = (c1 & 31) + (c & 31);
                return match (op, total < 32) {
                    (_, true) => bin(op, x, f.iconst(total)),
                    (BinOp::AShr, false) => bin(op, x, f.iconst(31)),
                    _ => Some(zero),
                };
            }
        }
    }
    if a == b {
        match op {
            BinOp::Sub | BinOp::Xor => return Some(zero),
            BinOp::And | BinOp::Or => return Some(Action::Value(a)),
            BinOp::Add => return bin(BinOp::Shl, a, f.iconst(1)),
            _ => {}
        }
    }
    if let Some(action) = cancel(f, op, a, b) {
        return Some(action);
    }
    match op {
        BinOp::Sub if f.as_iconst(a) == Some(0) => negation_of(f, b).map(Action::Value),
        BinOp::Add => {
            if let Some(x) = negation_of(f, b) {
                bin(BinOp::Sub, a, x)
            } else {
                negation_of(f, a).and_then(|x| bin(BinOp::Sub, b, x))
            }
        }
        _ => None,
    }
}

/// `x * 1.0` and `x / 1.0` are `x` bit for bit when `x` is a result of arithmetic:
/// a NaN there is already the canonical one RISC-V arithmetic (and the interpreter)
/// produces, and every other value is exact. (A loaded or negated NaN may carry
/// another sign or payload, which the multiplication would canonicalise: those stay.)
fn simplify_float(f: &mut Function, op: BinOp, a: Value, b: Value) -> Option<Action> {
    let canonical = matches!(
        f.def_inst(a).map(|i| f.kind(i)),
        Some(InstKind::Binary {
            op: BinOp::FAdd | BinOp::FSub | BinOp::FMul | BinOp::FDiv,
            ..
        }) | Some(InstKind::Unary {
            op: UnOp::SIToFP,
            ..
        })
    );
    match op {
        BinOp::FMul | BinOp::FDiv if canonical && f.as_fconst(b) == Some(1.0) => {
            Some(Action::Value(a))
        }
        BinOp::FDiv => {
            let r = f.fconst(exact_reciprocal(f.as_fconst(b)?)?);
            Some(Action::Kind(InstKind::Binary {
                op: BinOp::FMul,
                args: [a, r],
            }))
        }
        _ => None,
    }
}

/// `1 / c` when both `c` and it are normal powers of two: then `x / c` and
/// `x * (1 / c)` are the rounding of the same real number for every `x` (NaN,
/// infinities, zeros and subnormal results included), and a multiply is several
/// times cheaper than a division.
fn exact_reciprocal(c: f32) -> Option<f32> {
    let power_of_two = |x: f32| x.is_normal() && x.to_bits() & 0x007f_ffff == 0;
    let r = 1.0 / c;
    (power_of_two(c) && power_of_two(r)).then_some(r)
}

/// How many low bits of the 32-bit value `v` are known to be zero (LLVM's
/// `computeKnownBits`, for trailing zeros only): constants, shifts left, products
/// (the factors' counts add up; a product of `x` and `x + odd` is even, since one
/// of two values of different parity is), sums and bitwise operations. `depth`
/// bounds the walk up the operands.
/// A value whose low `bits` bits are those of `v`, reached through operations
/// that leave them unchanged (LLVM's `SimplifyDemandedBits`, for a low mask):
/// adding, subtracting, or-ing or xor-ing a constant with none of those bits,
/// and-ing with one that has them all, multiplying by one that is 1 modulo
/// `2^bits`, or a remainder by `±2^m` with `m >= bits` (it differs from its
/// dividend by a multiple of `2^m`). At most `depth` operations are looked through.
fn low_bits_source(f: &Function, v: Value, bits: u32, depth: u32) -> Value {
    if depth == 0 {
        return v;
    }
    let Some((op, x, c)) = with_const(f, v) else {
        return v;
    };
    let mask = if bits >= 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    };
    let low = c as u32 & mask;
    let keeps = match op {
        BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor => low == 0,
        BinOp::And => low == mask,
        BinOp::Mul => low == 1,
        BinOp::SRem => {
            c.unsigned_abs().is_power_of_two() && c.unsigned_abs().trailing_zeros() >= bits
        }
        _ => false,
    };
    if keeps {
        low_bits_source(f, x, bits, depth - 1)
    } else {
        v
    }
}

/// Whether `v` is known to be 0 or 1 (LLVM's known bits, for the low bit only):
/// a comparison, or `and`/`or`/`xor` of such values, within `depth` operations.
fn is_boolean(f: &Function, v: Value, depth: u32) -> bool {
    if let Some(c) = f.as_iconst(v) {
        return c == 0 || c == 1;
    }
    match f.def_inst(v).map(|i| f.kind(i)) {
        Some(InstKind::Cmp { .. }) => true,
        Some(InstKind::Binary {
            op: BinOp::And | BinOp::Or | BinOp::Xor,
            args: [x, y],
        }) if depth > 0 => is_boolean(f, *x, depth - 1) && is_boolean(f, *y, depth - 1),
        _ => false,
    }
}

fn known_trailing_zeros(f: &Function, v: Value, depth: u32) -> u32 {
    if let Some(c) = f.as_iconst(v) {
        return c.trailing_zeros();
    }
    if depth == 0 {
        return 0;
    }
    let Some(InstKind::Binary { op, args: [x, y] }) = f.def_inst(v).map(|i| f.kind(i)) else {
        return 0;
    };
    let (x, y) = (*x, *y);
    let tz = |w: Value| known_trailing_zeros(f, w, depth - 1);
    match op {
        BinOp::Shl => match f.as_iconst(y) {
            Some(c) => (tz(x) + (c as u32 & 31)).min(32),
            None => 0,
        },
        BinOp::Mul => {
            let differ_by_odd = |a: Value, b: Value| matches!(with_const(f, a), Some((BinOp::Add, base, c)) if base == b && c & 1 == 1);
            let parity = u32::from(differ_by_odd(x, y) || differ_by_odd(y, x));
            (tz(x) + tz(y)).max(parity).min(32)
        }
        BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor => tz(x).min(tz(y)),
        BinOp::And => tz(x).max(tz(y)),
        _ => 0,
    }
}

/// The identities of 64-bit arithmetic with `sext 0` and `sext 1` (there are no
/// 64-bit constants; passes sign-extend 32-bit ones): `x + 0`, `0 + x`, `x - 0`,
/// `x * 1`, `1 * x` are `x`; `x * 0` and `0 * x` are that 0. Two sign-extended
/// constants fold when the exact result fits 32 bits (`sext (a op b)`), and so do
/// the constants of `(x + sext c1) + sext c2` and `(x - ...)` likewise.
fn simplify_i64(f: &mut Function, op: BinOp, a: Value, b: Value) -> Option<Action> {
    let sext_of = |f: &Function, v: Value| f.as_sext_iconst(v).map(i64::from);
    let exact = |op: BinOp, x: i64, y: i64| match op {
        BinOp::Add64 => x.checked_add(y),
        BinOp::Sub64 => x.checked_sub(y),
        BinOp::Mul64 => x.checked_mul(y),
        _ => None,
    };
    let sext_kind = |f: &mut Function, r: i64| {
        let arg = f.iconst(i32::try_from(r).ok()?);
        Some(Action::Kind(InstKind::Unary {
            op: UnOp::SExt,
            arg,
        }))
    };
    if let (Some(x), Some(y)) = (sext_of(f, a), sext_of(f, b)) {
        if let Some(action) = exact(op, x, y).and_then(|r| sext_kind(f, r)) {
            return Some(action);
        }
    }
    // `(x ± sext c1) ± sext c2`: one constant, the sum of the signed ones.
    let signed = |op: BinOp, c: i64| if op == BinOp::Sub64 { -c } else { c };
    if let (BinOp::Add64 | BinOp::Sub64, Some(c2)) = (op, sext_of(f, b)) {
        if let Some(InstKind::Binary {
            op: inner @ (BinOp::Add64 | BinOp::Sub64),
            args: [x, c],
        }) = f.def_inst(a).map(|d| f.kind(d).clone())
        {
            if let Some(c1) = sext_of(f, c) {
                let sum = signed(inner, c1) + signed(op, c2);
                if let Ok(k) = i32::try_from(sum) {
                    let kc = f.iconst(k);
                    let at = f.def_inst(a).expect("a is an instruction");
                    let ext = f.insert_inst_before(
                        at,
                        InstKind::Unary {
                            op: UnOp::SExt,
                            arg: kc,
                        },
                        ir::Type::I64,
                    );
                    let ext = f.inst_result(ext).expect("sext has a result");
                    return Some(Action::Kind(InstKind::Binary {
                        op: BinOp::Add64,
                        args: [x, ext],
                    }));
                }
            }
        }
    }
    simplify_i64_identity(f, op, a, b)
}

fn simplify_i64_identity(f: &Function, op: BinOp, a: Value, b: Value) -> Option<Action> {
    let (ca, cb) = (f.as_sext_iconst(a), f.as_sext_iconst(b));
    match (op, ca, cb) {
        (BinOp::Add64 | BinOp::Sub64, _, Some(0)) | (BinOp::Mul64, _, Some(1)) => {
            Some(Action::Value(a))
        }
        (BinOp::Add64, Some(0), _) | (BinOp::Mul64, Some(1), _) => Some(Action::Value(b)),
        (BinOp::Mul64, Some(0), _) => Some(Action::Value(a)),
        (BinOp::Mul64, _, Some(0)) => Some(Action::Value(b)),
        _ => None,
    }
}

/// The operands of `v` when it is `x op y`.
fn operands(f: &Function, v: Value, op: BinOp) -> Option<(Value, Value)> {
    match *f.kind(f.def_inst(v)?) {
        InstKind::Binary {
            op: o,
            args: [x, y],
        } if o == op => Some((x, y)),
        _ => None,
    }
}

/// Sums and differences that cancel a term (wrapping arithmetic is a ring, so each
/// holds for every value; LLVM's InstCombine `SimplifyAddInst`/`SimplifySubInst`):
/// `a - (a + b) = -b`, `(a + b) - a = b`, `(a - b) + b = a`, `a - (a - b) = b`,
/// `(a - b) - a = -b`, and `b + (a - b) = a`.
fn cancel(f: &mut Function, op: BinOp, a: Value, b: Value) -> Option<Action> {
    let other = |x: Value, y: Value, t: Value| {
        if x == t {
            Some(y)
        } else if y == t {
            Some(x)
        } else {
            None
        }
    };
    match op {
        BinOp::Sub => {
            if let Some(rest) = operands(f, b, BinOp::Add).and_then(|(x, y)| other(x, y, a)) {
                return bin(BinOp::Sub, f.iconst(0), rest);
            }
            if let Some(rest) = operands(f, a, BinOp::Add).and_then(|(x, y)| other(x, y, b)) {
                return Some(Action::Value(rest));
            }
            if let Some((x, y)) = operands(f, b, BinOp::Sub) {
                if x == a {
                    return Some(Action::Value(y));
                }
            }
            if let Some((x, y)) = operands(f, a, BinOp::Sub) {
                if x == b {
                    return bin(BinOp::Sub, f.iconst(0), y);
                }
            }
            None
        }
        BinOp::Add => {
            for (s, t) in [(a, b), (b, a)] {
                if let Some((x, y)) = operands(f, s, BinOp::Sub) {
                    if y == t {
                        return Some(Action::Value(x));
                    }
                }
            }
            None
        }
        _ => None,
    }
}

fn simplify_cmp(
    f: &mut Function,
    ranges: &mut LazyRanges,
    op: CmpOp,
    a: Value,
    b: Value,
) -> Option<Action> {
    let (ca, cb) = (Const::of(f, a), Const::of(f, b));
    if let (Some(x), Some(y)) = (ca, cb) {
        return fold_cmp(op, x, y).map(Action::Const);
    }
    if ca.is_some() {
        return Some(Action::Kind(InstKind::Cmp {
            op: op.swapped(),
            args: [b, a],
        }));
    }
    if a == b {
        let r = match op {
            CmpOp::Eq | CmpOp::Sle | CmpOp::Sge => 1,
            CmpOp::Ne | CmpOp::Slt | CmpOp::Sgt | CmpOp::FLt | CmpOp::FGt => 0,
            _ => return None,
        };
        return Some(Action::Const(Const::I(r)));
    }
    if let Some(action) = decided_by_ranges(f, ranges, op, a, b) {
        return Some(action);
    }
    if let Some(action) = int_to_float_compare::int_to_float_compare(f, op, a, b) {
        return Some(action);
    }
    if let Some(action) = float_cases::float_cases(f, ranges, op, a, b) {
        return Some(action);
    }
    let c = f.as_iconst(b)?;
    if let Some(action) = remainder_test(f, ranges, op, a, c) {
        return Some(action);
    }
    if let Some(action) = equality_with_constant(f, op, a, c) {
        return Some(action);
    }
    // Comparisons of a comparison's 0/1 result with 0 or 1.
    let InstKind::Cmp {
        op: inner,
        args: [x, y],
    } = *f.kind(f.def_inst(a)?)
    else {
        return None;
    };
    match (op, c) {
        (CmpOp::Ne, 0) | (CmpOp::Eq, 1) => Some(Action::Value(a)),
        (CmpOp::Eq, 0) | (CmpOp::Ne, 1) => Some(Action::Kind(InstKind::Cmp {
            op: inner.inverse()?,
            args: [x, y],
        })),
        _ => None,
    }
}

/// An integer comparison whose operands' value ranges ([`Ranges`]) decide it
/// becomes 0 or 1 (LLVM's InstSimplify, `simplifyICmpWithConstant` over
/// `computeConstantRange`, and `foldICmpUsingKnownBits`): `(x & 7) < 8`,
/// `x % 5 > 4`, a comparison's result against 2. A 0/1 value compared with a
/// constant that keeps only one of its values is the value itself (`b > 0`,
/// `b != 0`, `b == 1`) or its test against 0 (`b < 1`, `b != 1`), which the
/// rules for a comparison's result finish.
fn decided_by_ranges(
    f: &mut Function,
    ranges: &mut LazyRanges,
    op: CmpOp,
    a: Value,
    b: Value,
) -> Option<Action> {
    if !matches!(
        op,
        CmpOp::Eq | CmpOp::Ne | CmpOp::Slt | CmpOp::Sle | CmpOp::Sgt | CmpOp::Sge
    ) {
        return None;
    }
    // Against a value of unknown range (a load, a call, a parameter), only a
    // value at an end of `i32` decides a comparison (`x < MIN` never holds):
    // unless that value is a constant, the ranges of the whole function are not
    // solved for it (a value that is not a constant but has a one-value range
    // at an end of `i32` is left undecided).
    let unknown = |v: Value| crate::analysis::ranges::full_by_definition(f, v);
    if (unknown(a) && f.as_iconst(b).is_none()) || (unknown(b) && f.as_iconst(a).is_none()) {
        return None;
    }
    let (x, y) = (ranges.of(f, a)?, ranges.of(f, b)?);
    if let Some(always) = compare(op, x, y) {
        return Some(Action::Const(Const::I(always as i32)));
    }
    let c = f.as_iconst(b)?;
    if x != (Range { lo: 0, hi: 1 }) || (op, c) == (CmpOp::Eq, 0) {
        return None;
    }
    let holds = |v: i32| fold_cmp(op, Const::I(v), Const::I(c)) == Some(Const::I(1));
    // Undecided over {0, 1}: exactly one of them passes.
    if holds(1) {
        Some(Action::Value(a))
    } else {
        Some(Action::Kind(InstKind::Cmp {
            op: CmpOp::Eq,
            args: [a, f.iconst(0)],
        }))
    }
}

/// Equality tests against a constant that LLVM's InstCombine folds
/// (`foldICmpAddConstant`, and known bits for the 0/1 value):
/// - `x + c1 == c` is `x == c - c1` (wrapping addition is a bijection), so the
///   addition may lose its last use;
/// - `x * c1 == c` for an odd `c1` is `x == c * c1^-1`, the inverse modulo
///   2^32 (multiplication by an odd constant is a bijection of the wrapping
///   `i32`s; GCC's match.pd folds `X * C1 == C2` so for wrapping types), which
///   value ranges can then decide (`3 * x == -1` only for `x = 0x55555555`);
/// - a 0/1 value (a comparison's result) never equals a constant other than 0 or 1;
/// - a value whose low `k` bits are known zero (a product with an even factor, a
///   shift left) never equals a constant with one of those bits set (LLVM's
///   `foldICmpUsingKnownBits`: the known bits of the two sides conflict).
fn equality_with_constant(f: &mut Function, op: CmpOp, a: Value, c: i32) -> Option<Action> {
    if !matches!(op, CmpOp::Eq | CmpOp::Ne) || f.value_type(a) != Type::I32 {
        return None;
    }
    let never_equal = (c != 0 && c != 1 && is_boolean(f, a, 4))
        || c.trailing_zeros() < known_trailing_zeros(f, a, 4);
    if never_equal {
        return Some(Action::Const(Const::I((op == CmpOp::Ne) as i32)));
    }
    match with_const(f, a)? {
        (BinOp::Add, x, c1) => Some(Action::Kind(InstKind::Cmp {
            op,
            args: [x, f.iconst(c.wrapping_sub(c1))],
        })),
        (BinOp::Sub, x, c1) => Some(Action::Kind(InstKind::Cmp {
            op,
            args: [x, f.iconst(c.wrapping_add(c1))],
        })),
        (BinOp::Mul, x, c1) if c1 & 1 == 1 => Some(Action::Kind(InstKind::Cmp {
            op,
            args: [x, f.iconst(c.wrapping_mul(odd_inverse(c1)))],
        })),
        _ => None,
    }
}

/// The inverse of the odd `c` modulo 2^32: `c * odd_inverse(c)` wraps to 1.
/// Newton's iteration `y = y * (2 - c * y)` doubles the correct low bits, and
/// `y = c` has three (`c * c = 1 mod 8` for every odd `c`): 3, 6, 12, 24, 48.
fn odd_inverse(c: i32) -> i32 {
    debug_assert!(c & 1 == 1);
    let mut y = c;
    for _ in 0..4 {
        y = y.wrapping_mul(2i32.wrapping_sub(c.wrapping_mul(y)));
    }
    y
}

/// `x % 2^k` used only as a truth value (a branch's condition, or compared with 0):
/// the remainder is 0 exactly when the low `k` bits of `x` are, so it becomes
/// `x & (2^k - 1)`, one operation instead of four (`if (x % 2)`).
fn remainder_as_truth(
    f: &mut Function,
    ranges: &mut LazyRanges,
    i: Inst,
    a: Value,
    b: Value,
) -> Option<Action> {
    let m = f.as_iconst(b)?.unsigned_abs();
    if !m.is_power_of_two() || !(2..=1 << 30).contains(&m) {
        return None;
    }
    let r = f.inst_result(i)?;
    if !used_only_as_truth(f, r) {
        return None;
    }
    let mask = f.iconst((m - 1) as i32);
    ranges.forget(r);
    Some(Action::Kind(InstKind::Binary {
        op: BinOp::And,
        args: [a, mask],
    }))
}

/// Whether `r` has uses and every one only asks whether it is zero: a branch's
/// condition (not an argument of its edges), or a comparison `== 0` or `!= 0`.
fn used_only_as_truth(f: &Function, r: Value) -> bool {
    f.has_users(r)
        && f.users(r).iter().all(|&u| match f.kind(u) {
            InstKind::Br {
                cond,
                then_dest,
                else_dest,
            } => *cond == r && !then_dest.args.contains(&r) && !else_dest.args.contains(&r),
            InstKind::Cmp {
                op: CmpOp::Eq | CmpOp::Ne,
                args: [x, y],
            } => (*x == r && f.as_iconst(*y) == Some(0)) || (*y == r && f.as_iconst(*x) == Some(0)),
            _ => false,
        })
}

/// `x * c` used only as a truth value is `x` when the product is zero exactly
/// when `x` is: `c` odd (multiplying by an odd number is a bijection modulo
/// 2^32, and it maps 0 to 0), or `x` a 0/1 value and `c` non-zero. LLVM's
/// InstCombine folds `icmp eq (mul X, C), 0` to `icmp eq X, 0` for an odd `C`
/// (`foldICmpMulConstant`); the branch on `k * (a < b)` of a generated program
/// becomes a branch on the comparison, which later passes read.
fn product_as_truth(f: &Function, i: Inst, a: Value, b: Value) -> Option<Action> {
    let c = f.as_iconst(b)?;
    if f.as_iconst(a).is_some() || f.value_type(a) != Type::I32 {
        return None;
    }
    let keeps_zero = c & 1 == 1 || (c != 0 && is_boolean(f, a, 4));
    if !keeps_zero || !used_only_as_truth(f, f.inst_result(i)?) {
        return None;
    }
    Some(Action::Value(a))
}

/// `x % 2^k == c` (or `!=`), the remainder used by nothing else: a remainder
/// by a power of two is `c` exactly when the low `k` bits of `x` are those of `c`
/// and `x` has the sign of `c` (for `c != 0`), so the remainder becomes a mask
/// with the sign bit besides the low bits (LLVM's InstCombine does the same):
/// `x % 2 == 1` is `(x & 0x80000001) == 1`, one operation instead of four. The
/// remainder instruction is rewritten in place and the comparison then tests
/// the masked bits.
fn remainder_test(
    f: &mut Function,
    ranges: &mut LazyRanges,
    op: CmpOp,
    a: Value,
    c: i32,
) -> Option<Action> {
    if !matches!(op, CmpOp::Eq | CmpOp::Ne) {
        return None;
    }
    let rem = f.def_inst(a)?;
    let InstKind::Binary {
        op: BinOp::SRem,
        args: [x, d],
    } = *f.kind(rem)
    else {
        return None;
    };
    let d = f.as_iconst(d)?;
    let m = d.unsigned_abs();
    if !m.is_power_of_two() || !(2..=1 << 30).contains(&m) || f.users(a).len() != 1 {
        return None;
    }
    let low = (m - 1) as i32;
    let (mask, want) = match c {
        0 => (low, 0),
        c if c > 0 && (c as u32) < m => (i32::MIN | low, c),
        c if c < 0 && c.unsigned_abs() < m => (i32::MIN | low, i32::MIN | (c & low)),
        _ => return None, // never equal: constant folding's business
    };
    let mask = f.iconst(mask);
    ranges.forget(a);
    f.replace_kind(
        rem,
        InstKind::Binary {
            op: BinOp::And,
            args: [x, mask],
        },
    );
    let want = f.iconst(want);
    Some(Action::Kind(InstKind::Cmp {
        op,
        args: [a, want],
    }))
}

fn simplify_unary(f: &Function, op: UnOp, a: Value) -> Option<Action> {
    if let Some(c) = Const::of(f, a) {
        return fold_unary(op, c).map(Action::Const);
    }
    if op == UnOp::FNeg {
        if let InstKind::Unary {
            op: UnOp::FNeg,
            arg,
        } = *f.kind(f.def_inst(a)?)
        {
            return Some(Action::Value(arg));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    /// Wraps instructions (over parameters %0: i32, %1: i32, %2: f32) into a function
    /// that returns the last one's value, `%r`.
    fn func(body: &str, ret_ty: &str) -> String {
        format!("func @f(i32, i32, f32) -> {ret_ty} {{\nbb0(%0: i32, %1: i32, %2: f32):\n{body}  ret %r\n}}\n")
    }

    #[track_caller]
    fn combines(body: &str, expected_body: &str) {
        check(
            &["instcombine"],
            &func(body, "i32"),
            &func_out(expected_body, "i32"),
        );
    }

    #[track_caller]
    fn combines_f(body: &str, expected_body: &str) {
        check(
            &["instcombine"],
            &func(body, "f32"),
            &func_out(expected_body, "f32"),
        );
    }

    /// Expected output: `expected_body` is the printed body without the final `ret`
    /// line, followed by `ret X` given as the last line.
    fn func_out(body: &str, ret_ty: &str) -> String {
        format!(
            "func @f(i32, i32, f32) -> {ret_ty} {{\nbb0(%0: i32, %1: i32, %2: f32):\n{body}}}\n"
        )
    }

    #[test]
    fn identities() {
        combines("  %a = add %0, 0\n  %b = mul %a, 1\n  %c = sub %b, 0\n  %d = sdiv %c, 1\n  %e = or %d, 0\n  %f = xor %e, 0\n  %g = and %f, -1\n  %r = shl %g, 32\n", "  ret %0\n");
        combines("  %r = mul %0, 0\n", "  ret 0\n");
        combines("  %r = and %0, 0\n", "  ret 0\n");
        combines("  %r = srem %0, -1\n", "  ret 0\n");
        combines("  %r = or %0, -1\n", "  ret -1\n");
        combines("  %r = sub %0, %0\n", "  ret 0\n");
        combines("  %r = xor %0, %0\n", "  ret 0\n");
        combines("  %r = and %0, %0\n", "  ret %0\n");
    }

    #[test]
    fn a_low_mask_looks_through_what_keeps_the_low_bits() {
        // (x % 2 + 2) & 1 == x & 1: the remainder differs from x by an even
        // number, and so does adding 2.
        combines(
            "  %a = srem %0, 2\n  %b = add %a, 2\n  %r = and %b, 1\n",
            "  %3 = and %0, 1\n  ret %3\n",
        );
        // (x * 9 ^ 16) & 7 == x & 7.
        combines(
            "  %a = mul %0, 9\n  %b = xor %a, 16\n  %r = and %b, 7\n",
            "  %3 = and %0, 7\n  ret %3\n",
        );
        // Must not: an odd addend, a remainder by 3 or by 2 under a mask of 3,
        // and a quotient change the low bits.
        for (body, kept) in [
            ("  %a = add %0, 1\n  %r = and %a, 1\n", "add %0, 1"),
            ("  %a = srem %0, 3\n  %r = and %a, 1\n", "srem %0, 3"),
            ("  %a = srem %0, 2\n  %r = and %a, 3\n", "srem %0, 2"),
            ("  %a = sdiv %0, 2\n  %r = and %a, 1\n", "sdiv %0, 2"),
        ] {
            let out = crate::passes::testutil::run(&func(body, "i32"), &["instcombine"]);
            assert!(out.contains(kept), "{out}");
        }
    }

    #[test]
    fn masking_a_boolean_with_one_keeps_it() {
        combines(
            "  %a = slt %0, 7\n  %b = sgt %0, 2\n  %c = and %a, %b\n  %r = and %c, 1\n",
            "  %3 = slt %0, 7\n  %4 = sgt %0, 2\n  %5 = and %3, %4\n  ret %5\n",
        );
        // Not a known 0/1 value: the mask stays, and so does a mask of 2.
        combines("  %r = and %0, 1\n", "  %3 = and %0, 1\n  ret %3\n");
        combines(
            "  %a = slt %0, 7\n  %r = and %a, 2\n",
            "  %3 = slt %0, 7\n  %4 = and %3, 2\n  ret %4\n",
        );
    }

    #[test]
    fn canonical_forms() {
        combines("  %r = add 5, %0\n", "  %3 = add %0, 5\n  ret %3\n");
        combines("  %r = sub %0, 5\n", "  %3 = add %0, -5\n  ret %3\n");
        combines(
            "  %r = sub %0, -2147483648\n",
            "  %3 = add %0, -2147483648\n  ret %3\n",
        );
        combines("  %r = mul %0, 8\n", "  %3 = shl %0, 3\n  ret %3\n");
        combines("  %r = mul %0, -1\n", "  %3 = sub 0, %0\n  ret %3\n");
        combines("  %r = sdiv %0, -1\n", "  %3 = sub 0, %0\n  ret %3\n");
        combines("  %r = add %0, %0\n", "  %3 = shl %0, 1\n  ret %3\n");
        combines("  %r = ashr %0, 33\n", "  %3 = ashr %0, 1\n  ret %3\n");
        combines("  %r = slt 3, %0\n", "  %3 = sgt %0, 3\n  ret %3\n");
        // Not a power of two: stays a multiplication.
        combines("  %r = mul %0, 6\n", "  %3 = mul %0, 6\n  ret %3\n");
    }

    #[test]
    fn exact_divisions_by_powers_of_two_are_shifts() {
        // x * (x + 1) is even (of two numbers of different parity one is even),
        // also modulo 2^32: the division truncates nothing.
        combines(
            "  %a = add %0, 1\n  %b = mul %0, %a\n  %r = sdiv %b, 2\n",
            "  %3 = add %0, 1\n  %4 = mul %0, %3\n  %5 = ashr %4, 1\n  ret %5\n",
        );
        combines(
            "  %a = shl %0, 3\n  %b = add %a, 12\n  %r = sdiv %b, 4\n",
            "  %3 = shl %0, 3\n  %4 = add %3, 12\n  %5 = ashr %4, 2\n  ret %5\n",
        );
        combines("  %a = shl %0, 1\n  %r = srem %a, 2\n", "  ret 0\n");
        // x * (x + 2) and (x << 1) + 1 may be odd, x << 1 not a multiple of 4:
        // divisions that round stay divisions.
        combines(
            "  %a = add %0, 2\n  %b = mul %0, %a\n  %r = sdiv %b, 2\n",
            "  %3 = add %0, 2\n  %4 = mul %0, %3\n  %5 = sdiv %4, 2\n  ret %5\n",
        );
        combines(
            "  %a = shl %0, 1\n  %b = add %a, 1\n  %r = sdiv %b, 2\n",
            "  %3 = shl %0, 1\n  %4 = add %3, 1\n  %5 = sdiv %4, 2\n  ret %5\n",
        );
        combines(
            "  %a = shl %0, 1\n  %r = sdiv %a, 4\n",
            "  %3 = shl %0, 1\n  %4 = sdiv %3, 4\n  ret %4\n",
        );
    }

    #[test]
    fn multiplying_an_arithmetic_result_by_one_is_the_result() {
        combines_f(
            "  %a = fadd %2, %2\n  %b = fmul %a, 1.0\n  %r = fdiv %b, 1.0\n",
            "  %3 = fadd %2, %2\n  ret %3\n",
        );
        combines_f(
            "  %a = sitofp %0\n  %r = fmul 1.0, %a\n",
            "  %3 = sitofp %0\n  ret %3\n",
        );
        // A parameter (or a load, or a negation) may be a NaN with its sign set,
        // which fmul canonicalises: kept.
        combines_f("  %r = fmul %2, 1.0\n", "  %3 = fmul %2, 1.0\n  ret %3\n");
        combines_f(
            "  %a = fneg %2\n  %r = fmul %a, 1.0\n",
            "  %3 = fneg %2\n  %4 = fmul %3, 1.0\n  ret %4\n",
        );
    }

    #[test]
    fn exact_division_agrees_with_sdiv_on_every_sign() {
        // -3 * -2 = 6, 65535 * 65536 wraps to -65536, i32::MAX * i32::MIN wraps to
        // i32::MIN: the shift gives what the division gives.
        for x in ["-3", "65535", "2147483647", "-1", "0"] {
            same_behaviour(
                r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = add %0, 1
  %2 = mul %0, %1
  %3 = sdiv %2, 2
  call @putint(%3)
  ret 0
}
"#,
                &["instcombine"],
                x,
            );
        }
    }

    #[test]
    fn reassociation_of_constants() {
        combines(
            "  %a = add %0, 3\n  %r = add %a, 4\n",
            "  %3 = add %0, 7\n  ret %3\n",
        );
        combines("  %a = sub %0, 3\n  %r = add %a, 3\n", "  ret %0\n");
        combines(
            "  %a = mul %0, 3\n  %r = mul %a, 5\n",
            "  %3 = mul %0, 15\n  ret %3\n",
        );
        combines(
            "  %a = add %0, 2147483647\n  %r = add %a, 1\n",
            "  %3 = add %0, -2147483648\n  ret %3\n",
        );
        combines("  %a = shl %0, 20\n  %r = shl %a, 12\n", "  ret 0\n");
        combines(
            "  %a = ashr %0, 20\n  %r = ashr %a, 20\n",
            "  %3 = ashr %0, 31\n  ret %3\n",
        );
        // The inner add is still used: both stay, the outer one reassociated.
        combines(
            "  %a = add %0, 3\n  %b = add %a, 4\n  %r = mul %a, %b\n",
            "  %3 = add %0, 3\n  %4 = add %0, 7\n  %5 = mul %3, %4\n  ret %5\n",
        );
    }

    #[test]
    fn division_chains_divide_once() {
        combines(
            "  %a = sdiv %0, 16\n  %r = sdiv %a, 16\n",
            "  %3 = sdiv %0, 256\n  ret %3\n",
        );
        // Past 2^31 nothing is left; at exactly 2^31 (not an i32) and with a
        // negative divisor the chain stays.
        combines(
            "  %a = sdiv %0, 65536\n  %r = sdiv %a, 65537\n",
            "  ret 0\n",
        );
        combines(
            "  %a = sdiv %0, 65536\n  %r = sdiv %a, 32768\n",
            "  %3 = sdiv %0, 65536\n  %4 = sdiv %3, 32768\n  ret %4\n",
        );
        combines(
            "  %a = sdiv %0, -3\n  %r = sdiv %a, 5\n",
            "  %3 = sdiv %0, -3\n  %4 = sdiv %3, 5\n  ret %4\n",
        );
        // The inner quotient is used elsewhere: dividing it again is cheaper.
        combines(
            "  %a = sdiv %0, 2\n  %b = sdiv %a, 2\n  %r = add %a, %b\n",
            "  %3 = sdiv %0, 2\n  %4 = sdiv %3, 2\n  %5 = add %3, %4\n  ret %5\n",
        );
    }

    #[test]
    fn negations() {
        combines("  %a = sub 0, %0\n  %r = sub 0, %a\n", "  ret %0\n");
        combines(
            "  %a = sub 0, %0\n  %r = add %1, %a\n",
            "  %3 = sub %1, %0\n  ret %3\n",
        );
        combines_f("  %a = fneg %2\n  %r = fneg %a\n", "  ret %2\n");
    }

    #[test]
    fn i64_identities_with_sign_extended_zero_and_one() {
        combines(
            "  %z = sext 0\n  %o = sext 1\n  %x = sext %0\n  %a = add64 %x, %z\n  \
             %b = sub64 %a, %z\n  %c = mul64 %o, %b\n  %d = add64 %z, %c\n  %r = trunc %d\n",
            "  %3 = sext %0\n  %4 = trunc %3\n  ret %4\n",
        );
        // x - 0 only on the right; 0 - x stays. A product with zero is zero.
        combines(
            "  %z = sext 0\n  %x = sext %0\n  %a = sub64 %z, %x\n  %b = mul64 %a, %z\n  \
             %c = add64 %a, %b\n  %r = trunc %c\n",
            "  %3 = sext 0\n  %4 = sext %0\n  %5 = sub64 %3, %4\n  %6 = trunc %5\n  ret %6\n",
        );
    }

    #[test]
    fn i64_constants_fold_and_gather_when_exact() {
        // (10 + -1) + 1 = 10, times 4: 40; (x + 9) - 4 = x + 5; and (x + 5) + 40.
        combines(
            "  %a = sext 10\n  %m = sext -1\n  %o = sext 1\n  %f = sext 4\n  \
             %b = add64 %a, %m\n  %c = add64 %b, %o\n  %d = mul64 %c, %f\n  \
             %x = sext %0\n  %n = sext 9\n  %e = add64 %x, %n\n  %g = sub64 %e, %f\n  \
             %h = add64 %g, %d\n  %r = trunc %h\n",
            "  %3 = sext %0\n  %4 = sext 45\n  %5 = add64 %3, %4\n  %6 = trunc %5\n  ret %6\n",
        );
        // A product beyond 32 bits stays.
        combines(
            "  %a = sext 65536\n  %b = mul64 %a, %a\n  %x = sext %0\n  %c = add64 %x, %b\n  \
             %r = trunc %c\n",
            "  %3 = sext 65536\n  %4 = mul64 %3, %3\n  %5 = sext %0\n  %6 = add64 %5, %4\n  \
             %7 = trunc %6\n  ret %7\n",
        );
    }

    #[test]
    fn cancellations() {
        // a - (a + b) = -b, and the other orders.
        combines(
            "  %a = add %0, %1\n  %r = sub %0, %a\n",
            "  %3 = sub 0, %1\n  ret %3\n",
        );
        combines("  %a = add %1, %0\n  %r = sub %a, %0\n", "  ret %1\n");
        combines("  %a = sub %0, %1\n  %r = add %a, %1\n", "  ret %0\n");
        combines("  %a = sub %0, %1\n  %r = add %1, %a\n", "  ret %0\n");
        combines("  %a = sub %0, %1\n  %r = sub %0, %a\n", "  ret %1\n");
        combines(
            "  %a = sub %0, %1\n  %r = sub %a, %0\n",
            "  %3 = sub 0, %1\n  ret %3\n",
        );
        // Not a cancellation: (a - b) - b.
        combines(
            "  %a = sub %0, %1\n  %r = sub %a, %1\n",
            "  %3 = sub %0, %1\n  %4 = sub %3, %1\n  ret %4\n",
        );
    }

    #[test]
    fn comparisons() {
        combines("  %r = eq %0, %0\n", "  ret 1\n");
        combines("  %r = slt %0, %0\n", "  ret 0\n");
        combines("  %r = flt %2, %2\n", "  ret 0\n");
        // NaN != NaN, and NaN <= NaN is false: not constant.
        combines("  %r = feq %2, %2\n", "  %3 = feq %2, %2\n  ret %3\n");
        combines("  %r = fle %2, %2\n", "  %3 = fle %2, %2\n  ret %3\n");
        combines(
            "  %a = slt %0, %1\n  %r = ne %a, 0\n",
            "  %3 = slt %0, %1\n  ret %3\n",
        );
        combines(
            "  %a = slt %0, %1\n  %r = eq %a, 0\n",
            "  %3 = sge %0, %1\n  ret %3\n",
        );
        // Equality with a constant looks through an added constant (wrapping) ...
        combines(
            "  %a = add %0, -32767\n  %r = ne %a, 0\n",
            "  %3 = ne %0, 32767\n  ret %3\n",
        );
        combines(
            "  %a = sub %0, 5\n  %r = eq %a, 2147483647\n",
            "  %3 = eq %0, -2147483644\n  ret %3\n",
        );
        // ... and a 0/1 value never equals another constant.
        combines(
            "  %b = eq %0, %1\n  %a = add %b, -32767\n  %r = ne %a, 0\n",
            "  ret 1\n",
        );
        combines("  %b = slt %0, %1\n  %r = eq %b, -1\n", "  ret 0\n");
        // Not for orderings (`x + c < d` may wrap), nor for a value that may be 2.
        combines(
            "  %a = add %0, 1\n  %r = slt %a, 0\n",
            "  %3 = add %0, 1\n  %4 = slt %3, 0\n  ret %4\n",
        );
        combines(
            "  %b = slt %0, %1\n  %c = add %b, %b\n  %r = eq %c, 2\n",
            "  %3 = slt %0, %1\n  %4 = shl %3, 1\n  %5 = eq %4, 2\n  ret %5\n",
        );
        // A float comparison has no exact inverse.
        combines(
            "  %a = flt %2, 1.0\n  %r = eq %a, 0\n",
            "  %3 = flt %2, 1.0\n  %4 = eq %3, 0\n  ret %4\n",
        );
    }

    /// `x * c1 == c` with `c1` odd tests `x` against `c` times the inverse of
    /// `c1` modulo 2^32 (0xcccccccd for 5: 5 * 0xcccccccd = 4 * 2^32 + 1).
    #[test]
    fn equalities_through_an_odd_factor_test_the_factor() {
        combines(
            "  %a = mul %0, 5\n  %r = ne %a, 1\n",
            "  %3 = ne %0, -858993459\n  ret %3\n",
        );
        combines(
            "  %a = mul %0, -3\n  %r = eq %a, 3\n",
            "  %3 = eq %0, -1\n  ret %3\n",
        );
        combines(
            "  %a = mul %0, 9\n  %r = eq %a, 0\n",
            "  %3 = eq %0, 0\n  ret %3\n",
        );
        // An even factor has no inverse; its other uses keep the product.
        combines(
            "  %a = mul %0, 10\n  %r = eq %a, 20\n",
            "  %3 = mul %0, 10\n  %4 = eq %3, 20\n  ret %4\n",
        );
        combines(
            "  %a = mul %0, 3\n  %b = eq %a, 3\n  %r = add %a, %b\n",
            "  %3 = mul %0, 3\n  %4 = eq %0, 1\n  %5 = add %3, %4\n  ret %5\n",
        );
        for c in [1, 3, 5, -1, -3, 7, 0x7fff_ffff, i32::MIN + 1, 12345679] {
            assert_eq!(c.wrapping_mul(super::odd_inverse(c)), 1, "{c}");
        }
    }

    /// A value with known low zero bits never equals a constant that has one of
    /// them set: `x * even` is even, `x << 3` a multiple of 8.
    #[test]
    fn equalities_the_known_low_zero_bits_decide() {
        combines("  %a = mul %0, 2147465930\n  %r = eq %a, -3\n", "  ret 0\n");
        combines("  %a = shl %0, 3\n  %r = ne %a, 4\n", "  ret 1\n");
        combines(
            "  %a = mul %0, 6\n  %b = mul %a, %1\n  %c = add %b, 4\n  %r = eq %c, 7\n",
            "  ret 0\n",
        );
        // Not when the constant's low bits are zero as far as known (6 * x may be
        // 2), nor for an odd factor (which has an inverse instead: 3 * x == 1 for
        // x = 0xaaaaaaab alone), nor for orderings.
        combines(
            "  %a = mul %0, 6\n  %r = eq %a, 2\n",
            "  %3 = mul %0, 6\n  %4 = eq %3, 2\n  ret %4\n",
        );
        combines(
            "  %a = mul %0, 3\n  %r = eq %a, 1\n",
            "  %3 = eq %0, -1431655765\n  ret %3\n",
        );
        combines(
            "  %a = shl %0, 1\n  %r = slt %a, 1\n",
            "  %3 = shl %0, 1\n  %4 = slt %3, 1\n  ret %4\n",
        );
    }

    #[test]
    fn tests_of_a_remainder_by_a_power_of_two_mask_the_sign_and_low_bits() {
        combines(
            "  %m = srem %0, 2\n  %r = eq %m, 1\n",
            "  %3 = and %0, -2147483647\n  %4 = eq %3, 1\n  ret %4\n",
        );
        combines(
            "  %m = srem %0, -8\n  %r = ne %m, 0\n",
            "  %3 = and %0, 7\n  %4 = ne %3, 0\n  ret %4\n",
        );
        // The remainder, rewritten into a mask, takes values outside the
        // `[-3, 3]` its range was: that range must not decide the new test.
        combines(
            "  %m = srem %0, 4\n  %r = eq %m, -3\n",
            "  %3 = and %0, -2147483645\n  %4 = eq %3, -2147483647\n  ret %4\n",
        );
        // Another use keeps the remainder; 4 is never a remainder by 4 (the
        // remainder's range decides that test).
        combines(
            "  %m = srem %0, 4\n  %t = eq %m, 1\n  %r = add %m, %t\n",
            "  %3 = srem %0, 4\n  %4 = eq %3, 1\n  %5 = add %3, %4\n  ret %5\n",
        );
        combines("  %m = srem %0, 4\n  %r = eq %m, 4\n", "  ret 0\n");
    }

    #[test]
    fn comparisons_decided_by_the_operands_ranges() {
        // A 0/1 value against a constant outside [0, 1]: decided.
        combines("  %b = slt %0, %1\n  %r = sgt %b, 8\n", "  ret 0\n");
        combines("  %b = slt %0, %1\n  %r = sle %b, 8\n", "  ret 1\n");
        combines("  %b = fge %2, 0.0\n  %r = slt %b, -3\n", "  ret 0\n");
        combines("  %b = slt %0, %1\n  %r = sge %b, 0\n", "  ret 1\n");
        // Masks, remainders, logical shifts and sums of them bound their result.
        combines("  %a = and %0, 7\n  %r = slt %a, 8\n", "  ret 1\n");
        combines("  %a = and %0, 7\n  %r = eq %a, 9\n", "  ret 0\n");
        combines("  %a = srem %0, 5\n  %r = sgt %a, 4\n", "  ret 0\n");
        combines("  %a = srem %0, -5\n  %r = sge %a, -4\n", "  ret 1\n");
        combines("  %a = lshr %0, 28\n  %r = slt %a, 16\n", "  ret 1\n");
        combines("  %a = lshr %0, 28\n  %r = ne %a, 16\n", "  ret 1\n");
        combines(
            "  %a = srem %0, 3\n  %b = add %a, 3\n  %r = sgt %b, 0\n",
            "  ret 1\n",
        );
        // Two values that are not constants: [0, 7] is below [8, 15].
        combines(
            "  %a = and %0, 7\n  %b = and %1, 7\n  %c = add %b, 8\n  %r = slt %a, %c\n",
            "  ret 1\n",
        );
        // A 0/1 value passed to a block parameter on every edge stays one.
        check(
            &["instcombine"],
            "func @f(i32, i32) -> i32 {\nbb0(%0: i32, %1: i32):\n  %2 = slt %0, %1\n  br %2, bb1(%2), bb1(0)\n\
             bb1(%3: i32):\n  %4 = slt %3, 2\n  ret %4\n}\n",
            "func @f(i32, i32) -> i32 {\nbb0(%0: i32, %1: i32):\n  %2 = slt %0, %1\n  br %2, bb1(%2), bb1(0)\n\
             bb1(%3: i32):\n  ret 1\n}\n",
        );
    }

    /// A comparison with a value whose range is unknown by its definition (a
    /// call's result) is decided by a constant at an end of `i32` without a
    /// solve, and left alone against anything else without one either.
    #[test]
    fn comparisons_with_a_value_of_unknown_range_solve_no_ranges() {
        use crate::analysis::AnalysisManager;
        let src = "declare @getint() -> i32\ndeclare @putint(i32) -> void\n\
             func @main() -> i32 {\nbb0:\n  %0 = call @getint()\n  %1 = call @getint()\n\
             %2 = and %1, 7\n  %3 = slt %0, %2\n  call @putint(%3)\n\
             %4 = slt %0, -2147483648\n  call @putint(%4)\n  %5 = sle %0, 2147483647\n\
             call @putint(%5)\n  ret 0\n}\n";
        let mut m = ir::parse_module(src).unwrap();
        let mut am = AnalysisManager::verifying();
        assert!(am.each_function(&mut m, super::run_in));
        assert_eq!(am.computed(), 0, "no ranges solved");
        let text = ir::print_module(&m);
        assert!(text.contains("slt %0, %2"), "{text}");
        assert!(text.contains("call @putint(0)"), "{text}");
        assert!(text.contains("call @putint(1)"), "{text}");
    }

    /// Ranges the analysis manager solved for an earlier pass, the function
    /// unchanged since, decide comparisons without a new solve; a run that
    /// changed the function drops them.
    #[test]
    fn ranges_cached_by_the_manager_serve_while_the_function_is_unchanged() {
        use crate::analysis::{AnalysisManager, Preserved};
        let src = "declare @getint() -> i32\ndeclare @putint(i32) -> void\n\
             func @main() -> i32 {\nbb0:\n  %0 = call @getint()\n  %1 = and %0, 7\n\
             %2 = sgt %1, 20\n  call @putint(%2)\n  ret 0\n}\n";
        let mut m = ir::parse_module(src).unwrap();
        let mut am = AnalysisManager::verifying();
        am.each_function(&mut m, |f, fa| {
            fa.ranges(f);
            false
        });
        let solved = am.computed();
        assert!(am.each_function(&mut m, super::run_in));
        assert_eq!(am.computed(), solved, "no new solve");
        assert!(ir::print_module(&m).contains("call @putint(0)"));
        am.invalidate(Preserved::CFG.with_other_functions());
        assert!(am.check(&m).is_ok());
        // Changed: the next pass solves anew.
        am.each_function(&mut m, |f, fa| {
            fa.ranges(f);
            false
        });
        assert_eq!(am.computed(), solved + 1);
    }

    #[test]
    fn a_test_keeping_one_value_of_a_boolean_is_the_boolean_or_its_inverse() {
        combines(
            "  %b = slt %0, %1\n  %r = sgt %b, 0\n",
            "  %3 = slt %0, %1\n  ret %3\n",
        );
        combines(
            "  %b = slt %0, %1\n  %r = sle %b, 0\n",
            "  %3 = sge %0, %1\n  ret %3\n",
        );
        combines(
            "  %b = slt %0, %1\n  %r = slt %b, 1\n",
            "  %3 = sge %0, %1\n  ret %3\n",
        );
        // An `and` of two comparisons is 0/1 too; its test against 0 stays one.
        combines(
            "  %b = slt %0, %1\n  %c = eq %0, 3\n  %d = and %b, %c\n  %r = sge %d, 1\n",
            "  %3 = slt %0, %1\n  %4 = eq %0, 3\n  %5 = and %3, %4\n  ret %5\n",
        );
        combines(
            "  %b = slt %0, %1\n  %c = eq %0, 3\n  %d = and %b, %c\n  %r = ne %d, 1\n",
            "  %3 = slt %0, %1\n  %4 = eq %0, 3\n  %5 = and %3, %4\n  %6 = eq %5, 0\n  ret %6\n",
        );
        combines(
            "  %b = slt %0, %1\n  %c = eq %0, 3\n  %d = and %b, %c\n  %r = eq %d, 0\n",
            "  %3 = slt %0, %1\n  %4 = eq %0, 3\n  %5 = and %3, %4\n  %6 = eq %5, 0\n  ret %6\n",
        );
    }

    #[test]
    fn a_converted_integer_compared_with_a_float_constant_is_an_integer_comparison() {
        let conv = "  %a = sitofp %0\n";
        for (cmp, out) in [
            ("fge %a, 0.0", "sge %0, 0"),
            ("flt %a, 0.0", "slt %0, 0"),
            ("fgt %a, 2.5", "sge %0, 3"),
            ("fle %a, -2.5", "slt %0, -2"),
            ("feq %a, 7.0", "eq %0, 7"),
            ("fne %a, -1.0", "ne %0, -1"),
            // 16777217 converts to 16777216.0 too: `>` starts at 16777218.
            ("fgt %a, 16777216.0", "sge %0, 16777218"),
        ] {
            combines(
                &format!("{conv}  %r = {cmp}\n"),
                &format!("  %3 = {out}\n  ret %3\n"),
            );
        }
        // Constant results: no integer converts to 0.5, all are below 3e9.
        combines(&format!("{conv}  %r = feq %a, 0.5\n"), "  ret 0\n");
        combines(&format!("{conv}  %r = fne %a, 0.5\n"), "  ret 1\n");
        combines(&format!("{conv}  %r = flt %a, 3000000000.0\n"), "  ret 1\n");
        combines(
            &format!("{conv}  %r = fle %a, -3000000000.0\n"),
            "  ret 0\n",
        );
        // Must not: 16777216.0 is the conversion of two integers (an equality
        // would need a range test), and a float that is not a conversion.
        for (body, kept) in [
            (format!("{conv}  %r = feq %a, 16777216.0\n"), "feq"),
            ("  %r = fge %2, 0.0\n".to_string(), "fge %2, 0.0"),
        ] {
            let out = crate::passes::testutil::run(&func(&body, "i32"), &["instcombine"]);
            assert!(out.contains(kept), "{out}");
        }
    }

    #[test]
    fn comparisons_the_operands_ranges_do_not_decide() {
        // Both outcomes possible: the comparison stays.
        combines(
            "  %a = and %0, 7\n  %r = sgt %a, 0\n",
            "  %3 = and %0, 7\n  %4 = sgt %3, 0\n  ret %4\n",
        );
        combines(
            "  %a = srem %0, 5\n  %r = slt %a, 0\n",
            "  %3 = srem %0, 5\n  %4 = slt %3, 0\n  ret %4\n",
        );
        combines(
            "  %a = srem %0, 5\n  %r = sgt %a, 3\n",
            "  %3 = srem %0, 5\n  %4 = sgt %3, 3\n  ret %4\n",
        );
        // A negative mask keeps the sign bit; an arithmetic shift keeps the sign.
        combines(
            "  %a = and %0, -8\n  %r = sge %a, 0\n",
            "  %3 = and %0, -8\n  %4 = sge %3, 0\n  ret %4\n",
        );
        combines(
            "  %a = ashr %0, 28\n  %r = sge %a, 0\n",
            "  %3 = ashr %0, 28\n  %4 = sge %3, 0\n  ret %4\n",
        );
        // A sum of two 0/1 values may be 2; a sum that may wrap is unbounded.
        combines(
            "  %b = slt %0, %1\n  %c = eq %0, 3\n  %s = add %b, %c\n  %r = sgt %s, 1\n",
            "  %3 = slt %0, %1\n  %4 = eq %0, 3\n  %5 = add %3, %4\n  %6 = sgt %5, 1\n  ret %6\n",
        );
        combines(
            "  %a = lshr %0, 1\n  %b = add %a, 1\n  %r = sgt %b, 0\n",
            "  %3 = lshr %0, 1\n  %4 = add %3, 1\n  %5 = sgt %4, 0\n  ret %5\n",
        );
        // Float comparisons are not decided by integer ranges, except through
        // the integer comparison a converted integer's test becomes.
        combines(
            "  %a = and %0, 7\n  %b = sitofp %a\n  %r = flt %b, 8.0\n",
            "  ret 1\n",
        );
        // A converted sum in [1, 8] is below 9.0 (the float addition is exact).
        combines(
            "  %a = and %0, 7\n  %b = sitofp %a\n  %c = fadd %b, 1.0\n  %r = flt %c, 9.0\n",
            "  ret 1\n",
        );
    }

    #[test]
    fn exact_float_sums_of_converted_integers_become_integer_sums() {
        // A truth value plus one is never zero.
        combines(
            "  %b = slt %0, %1\n  %c = sitofp %b\n  %s = fadd %c, 1.0\n  %r = fne %s, 0.0\n",
            "  ret 1\n",
        );
        // A difference of two converted bytes, a constant minus a converted value.
        combines_f(
            "  %a = and %0, 255\n  %b = and %1, 255\n  %c = sitofp %a\n  %d = sitofp %b\n  %r = fsub %c, %d\n",
            "  %3 = and %0, 255\n  %4 = and %1, 255\n  %5 = sub %3, %4\n  %6 = sitofp %5\n  ret %6\n",
        );
        combines_f(
            "  %a = and %0, 255\n  %c = sitofp %a\n  %r = fsub 0.0, %c\n",
            "  %3 = and %0, 255\n  %4 = sub 0, %3\n  %5 = sitofp %4\n  ret %5\n",
        );
        // But `-0.0 - sitofp 0` is `-0.0`, and `sitofp (0 - 0)` is `+0.0`.
        combines_f(
            "  %a = and %0, 255\n  %c = sitofp %a\n  %r = fsub -0.0, %c\n",
            "  %3 = and %0, 255\n  %4 = sitofp %3\n  %5 = fsub -0.0, %4\n  ret %5\n",
        );
        // Adding `-0.0` is exact for every converted value (`+0.0 + -0.0` is `+0.0`).
        combines_f(
            "  %a = and %0, 255\n  %c = sitofp %a\n  %r = fadd -0.0, %c\n",
            "  %3 = and %0, 255\n  %4 = add %3, 0\n  %5 = sitofp %4\n  ret %5\n",
        );
    }

    #[test]
    fn float_comparisons_the_same_for_every_value_of_a_converted_integer_fold() {
        // A truth value minus 826.875 is never zero; a value in [0, 3], halved
        // and negated, is never above 0.
        combines(
            "  %b = slt %0, %1\n  %c = sitofp %b\n  %s = fadd %c, -826.875\n  %r = fne %s, 0.0\n",
            "  ret 1\n",
        );
        combines(
            "  %a = and %0, 3\n  %c = sitofp %a\n  %h = fmul %c, 0.5\n  %n = fneg %h\n  %r = fgt %n, 0.0\n",
            "  ret 0\n",
        );
        // Must not: the answer differs between cases (0.5 + 0.0 < 1.0 but not
        // 0.5 + 1.0); five values; two converted integers; a float parameter.
        let stays = |body: &str| {
            let out = crate::passes::testutil::run(&func(body, "i32"), &["instcombine"]);
            assert!(out.contains("fadd") || out.contains("fmul"), "{out}");
        };
        stays("  %b = slt %0, %1\n  %c = sitofp %b\n  %s = fadd %c, 0.5\n  %r = flt %s, 1.0\n");
        stays("  %a = and %0, 7\n  %c = sitofp %a\n  %s = fadd %c, 0.5\n  %r = fne %s, 0.0\n");
        stays("  %a = and %0, 1\n  %b = and %1, 1\n  %c = sitofp %a\n  %d = sitofp %b\n  %s = fmul %c, %d\n  %r = fgt %s, 1.5\n");
        stays("  %b = slt %0, %1\n  %c = sitofp %b\n  %s = fadd %c, %2\n  %r = fne %s, 0.0\n");
    }

    #[test]
    fn inexact_float_sums_of_converted_integers_stay() {
        // An unbounded integer: above 2^24 the conversion rounds.
        combines_f(
            "  %c = sitofp %0\n  %r = fadd %c, 1.0\n",
            "  %3 = sitofp %0\n  %4 = fadd %3, 1.0\n  ret %4\n",
        );
        // A result beyond 2^24: 2^24 + 1 is no f32.
        combines_f(
            "  %a = and %0, 255\n  %c = sitofp %a\n  %r = fadd %c, 16777216.0\n",
            "  %3 = and %0, 255\n  %4 = sitofp %3\n  %5 = fadd %4, 16777216.0\n  ret %5\n",
        );
        // A constant that is no integer; a multiplication (0 * -1.0 is -0.0); a
        // conversion used elsewhere too.
        combines_f(
            "  %a = and %0, 255\n  %c = sitofp %a\n  %r = fadd %c, 0.5\n",
            "  %3 = and %0, 255\n  %4 = sitofp %3\n  %5 = fadd %4, 0.5\n  ret %5\n",
        );
        combines_f(
            "  %a = and %0, 255\n  %c = sitofp %a\n  %r = fmul %c, -1.0\n",
            "  %3 = and %0, 255\n  %4 = sitofp %3\n  %5 = fmul %4, -1.0\n  ret %5\n",
        );
        combines_f(
            "  %a = and %0, 255\n  %c = sitofp %a\n  %s = fadd %c, 1.0\n  %r = fmul %s, %c\n",
            "  %3 = and %0, 255\n  %4 = sitofp %3\n  %5 = fadd %4, 1.0\n  %6 = fmul %5, %4\n  ret %6\n",
        );
    }

    #[test]
    fn remainder_tests_agree_with_srem_on_every_residue_and_sign() {
        for d in [2, -2, 4, 8, -16] {
            for c in -17..=17 {
                for op in ["eq", "ne"] {
                    let src = format!(
                        "func @main() -> i32 {{\n\
                         bb0:\n  jump bb1(-40, 0)\n\
                         bb1(%0: i32, %1: i32):\n  %2 = srem %0, {d}\n  %3 = {op} %2, {c}\n  \
                         %4 = mul %1, 3\n  %5 = add %4, %3\n  %6 = add %0, 1\n  %7 = slt %6, 41\n  \
                         br %7, bb1(%6, %5), bb2\n\
                         bb2:\n  call @putint(%5)\n  ret 0\n}}\n\
                         declare @putint(i32) -> void\n"
                    );
                    crate::passes::testutil::same_behaviour(&src, &["instcombine"], "");
                }
            }
        }
    }

    #[test]
    fn a_remainder_used_as_a_truth_value_is_a_mask() {
        // `if (x % d)` and `x % d != 0` for every residue and sign: the remainder
        // is non-zero exactly when the masked bits are.
        for d in [2i32, -2, 8] {
            let src = format!(
                "func @main() -> i32 {{\n\
                 bb0:\n  jump bb1(-20, 0)\n\
                 bb1(%0: i32, %1: i32):\n  %2 = srem %0, {d}\n  br %2, bb2, bb3(%1)\n\
                 bb2:\n  %3 = mul %1, 3\n  %4 = add %3, %0\n  jump bb3(%4)\n\
                 bb3(%5: i32):\n  %6 = add %0, 1\n  %7 = slt %6, 21\n  br %7, bb1(%6, %5), bb4\n\
                 bb4:\n  call @putint(%5)\n  ret 0\n}}\n\
                 declare @putint(i32) -> void\n"
            );
            let out = crate::passes::testutil::same_behaviour(&src, &["instcombine"], "");
            let mask = d.unsigned_abs() - 1;
            assert!(out.contains(&format!("and %0, {mask}")), "{out}");
        }
        // A remainder whose value is used, not only its truth, stays.
        combines(
            "  %a = srem %0, 2
  %r = add %a, 1
",
            "  %3 = srem %0, 2
  %4 = add %3, 1
  ret %4
",
        );
    }

    /// `if (x * k)` and `if (k * (a < b))` for a program reading `x`, `a`, `b`.
    const PRODUCT_TESTS: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = mul %0, 3
  br %2, bb1, bb2
bb1:
  %3 = slt %0, %1
  %4 = mul %3, 4
  %5 = ne %4, 0
  call @putint(%5)
  %6 = mul %0, -5
  %7 = eq %6, 0
  call @putint(%7)
  ret 1
bb2:
  ret 0
}
"#;

    #[test]
    fn a_product_that_is_zero_only_with_its_factor_is_tested_as_the_factor() {
        // An odd factor (3, -5) keeps every non-zero `x` non-zero modulo 2^32; a
        // comparison's 0/1 result times 4 is 0 or 4.
        check(
            &["instcombine"],
            PRODUCT_TESTS,
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  br %0, bb1, bb2
bb1:
  %2 = slt %0, %1
  call @putint(%2)
  %3 = eq %0, 0
  call @putint(%3)
  ret 1
bb2:
  ret 0
}
"#,
        );
        for input in [
            "0 5",
            "1 5",
            "7 -2",
            "-2147483648 0",
            "1073741824 1",
            "-1 -1",
        ] {
            same_behaviour(PRODUCT_TESTS, &["instcombine"], input);
        }
    }

    #[test]
    fn a_product_that_may_wrap_to_zero_or_whose_value_is_used_stays() {
        // `x * 2` is 0 for x = 2^31: the test stays (as a shift).
        let even = PRODUCT_TESTS.replace("%2 = mul %0, 3", "%2 = mul %0, 2");
        let out = same_behaviour(&even, &["instcombine"], "-2147483648 0");
        assert!(out.contains("%2 = shl %0, 1\n  br %2,"), "{out}");
        // `x * 4` of a value that is not 0/1 may wrap to 0 too.
        let wide = PRODUCT_TESTS.replace("%3 = slt %0, %1", "%3 = add %0, %1");
        let out = same_behaviour(&wide, &["instcombine"], "1073741824 0");
        assert!(out.contains("shl %2, 2"), "{out}");
        // The product's value is printed, not only tested: it stays.
        let used = PRODUCT_TESTS.replace("call @putint(%7)", "call @putint(%6)");
        let out = same_behaviour(&used, &["instcombine"], "7 1");
        assert!(out.contains("mul %0, -5"), "{out}");
    }

    #[test]
    fn constants_fold_exactly() {
        combines("  %r = sdiv -2147483648, -1\n", "  ret -2147483648\n");
        combines(
            "  %a = sitofp 16777217\n  %r = fptosi %a\n",
            "  ret 16777216\n",
        );
        combines_f("  %r = fmul 0.1, 3.0\n", "  ret 0.3\n");
    }

    #[test]
    fn must_not_fold() {
        // Division by zero stays (and is not deleted: it may trap).
        combines("  %r = sdiv %0, 0\n", "  %3 = sdiv %0, 0\n  ret %3\n");
        combines(
            "  %a = sdiv 1, 0\n  %r = add %0, 1\n",
            "  %3 = sdiv 1, 0\n  %4 = add %0, 1\n  ret %4\n",
        );
        combines("  %r = sdiv %0, %0\n", "  %3 = sdiv %0, %0\n  ret %3\n");
        combines("  %r = srem 0, %0\n", "  %3 = srem 0, %0\n  ret %3\n");
        // Floats: x + 0.0 is not x for x = -0.0; x * 0.0 is not 0 for NaN, inf, -x;
        // x - x is not 0 for NaN or inf; x * 1.0 would keep a NaN's sign.
        combines_f("  %r = fadd %2, 0.0\n", "  %3 = fadd %2, 0.0\n  ret %3\n");
        combines_f("  %r = fadd 0.0, %2\n", "  %3 = fadd %2, 0.0\n  ret %3\n");
        combines_f("  %r = fmul %2, 0.0\n", "  %3 = fmul %2, 0.0\n  ret %3\n");
        combines_f("  %r = fsub %2, %2\n", "  %3 = fsub %2, %2\n  ret %3\n");
        combines_f("  %r = fmul %2, 1.0\n", "  %3 = fmul %2, 1.0\n  ret %3\n");
    }

    #[test]
    fn division_by_a_power_of_two_is_a_multiplication() {
        combines_f("  %r = fdiv %2, 4.0\n", "  %3 = fmul %2, 0.25\n  ret %3\n");
        combines_f("  %r = fdiv %2, -0.5\n", "  %3 = fmul %2, -2.0\n  ret %3\n");
        // 3.0 has no exact reciprocal; 2^127's reciprocal is subnormal.
        combines_f("  %r = fdiv %2, 3.0\n", "  %3 = fdiv %2, 3.0\n  ret %3\n");
        combines_f(
            "  %r = fdiv %2, 1.7014118e38\n",
            "  %3 = fdiv %2, 1.7014118e38\n  ret %3\n",
        );
        // Both spellings agree bit for bit on awkward operands, subnormal
        // results included.
        for x in [
            1.5f32,
            -0.0,
            f32::MIN_POSITIVE,
            3.0e38,
            1.0e-40,
            f32::INFINITY,
        ] {
            for c in [2.0f32, 0.125, -1024.0, 2.0f32.powi(-126), 2.0f32.powi(126)] {
                let r = super::exact_reciprocal(c).expect("a power of two");
                assert_eq!((x / c).to_bits(), (x * r).to_bits(), "{x} / {c}");
            }
        }
    }

    #[test]
    fn float_add_of_zero_differs_on_negative_zero() {
        // The reason fadd x, 0.0 must stay: putfloat(-0.0 + 0.0) prints 0x0p+0, not
        // -0x0p+0.
        let out = same_behaviour(
            r#"
declare @putfloat(f32) -> void

func @main() -> i32 {
bb0:
  %0 = fneg 0.0
  %1 = fadd %0, 0.0
  call @putfloat(%1)
  ret 0
}
"#,
            &["instcombine"],
            "",
        );
        assert!(out.contains("call @putfloat(0.0)"), "{out}");
    }

    #[test]
    fn behaviour_is_preserved_on_a_program() {
        same_behaviour(
            r#"
declare @putint(i32) -> void
declare @putch(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = mul %0, 16
  %2 = sub %1, 7
  %3 = add %2, 7
  %4 = sdiv %3, -1
  %5 = add %4, %4
  %6 = slt %5, %0
  %7 = eq %6, 0
  %8 = sub 0, %5
  %9 = sub 0, %8
  %10 = ashr %9, 35
  %11 = add %10, %7
  call @putint(%11)
  call @putch(10)
  ret %7
}
"#,
            &["instcombine"],
            "-123456",
        );
    }

    /// Constant offsets of nested `gep`s add up; a zero offset is the base itself.
    /// Mixed strides sum in bytes (the outer stride kept when it divides the sum).
    #[test]
    fn constant_geps_fold() {
        check(
            &["instcombine"],
            r#"
global @a: [i32; 64] = zeroinit

func @f(ptr) -> i32 {
bb0(%0: ptr):
  %1 = gep %0, 1, 4
  %2 = gep %1, -1, 4
  store 5, %0
  %3 = load i32, %2
  %4 = gep %0, 0, 8
  %5 = load i32, %4
  %6 = gep @a, 3, 4
  %7 = gep %6, 1, 8
  %8 = load i32, %7
  %9 = gep %6, 1, 2
  %10 = load i32, %9
  %11 = add %3, %5
  %12 = add %11, %8
  %13 = add %12, %10
  ret %13
}
"#,
            r#"
global @a: [i32; 64] = zeroinit

func @f(ptr) -> i32 {
bb0(%0: ptr):
  store 5, %0
  %1 = load i32, %0
  %2 = load i32, %0
  %3 = gep @a, 5, 4
  %4 = load i32, %3
  %5 = gep @a, 7, 2
  %6 = load i32, %5
  %7 = add %1, %2
  %8 = add %7, %4
  %9 = add %8, %6
  ret %9
}
"#,
        );
    }
}
