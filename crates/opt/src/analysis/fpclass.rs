//! Which kinds of IEEE single values an `f32` may hold: NaN, +infinity,
//! -infinity, finite. This is LLVM's `computeKnownFPClass` (and its older
//! `isKnownNeverNaN`/`isKnownNeverInfinity`), solved over the whole function as
//! SCCP solves constants, since SSA block parameters merge values.
//!
//! The classes start empty (optimistically) and grow to a fixed point:
//! - a constant has its own class; `sitofp` gives a finite value (every `i32`
//!   rounds to a finite `f32`); `fneg` swaps the infinities, `fabs` folds
//!   -infinity into +infinity;
//! - `fadd`/`fsub` are NaN only from a NaN operand or infinities of opposite
//!   signs meeting (`inf - inf`), and may overflow to either infinity;
//!   `fmul` is NaN from a NaN operand or an infinity (`0 * inf`), and may
//!   overflow; `fdiv` may be anything (`0 / 0`);
//! - a block parameter takes the union over the edges reaching it, each edge
//!   refined by the branch it leaves on: on the edge where `x > c` (for a finite
//!   constant `c`) held, `x` is neither NaN nor -infinity; where it failed,
//!   `x` is not +infinity (NaN fails every ordered comparison), and so on for
//!   `<`, `<=`, `>=`, `==`, `!=`. So `if (p > 1e6) p = 1e6; if (p < -1e6) p =
//!   -1e6;` leaves a value that is not NaN finite;
//! - anything else (a parameter of the function, a load, a call) may be anything.
//!
//! What it proves: `x != x` is 0 and `x == x` is 1 for `x` never NaN, and
//! `x - x` is +0.0 for `x` finite ([`crate::passes::value_numbering::vrp`]).

use ir::{BinOp, Block, CmpOp, Function, InstKind, Type, UnOp, Value, ValueDef};
use rustc_hash::FxHashMap;

/// A set of value kinds.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct FpClass(u8);

impl FpClass {
    pub const NONE: FpClass = FpClass(0);
    pub const NAN: FpClass = FpClass(1);
    pub const POS_INF: FpClass = FpClass(2);
    pub const NEG_INF: FpClass = FpClass(4);
    pub const FINITE: FpClass = FpClass(8);
    pub const INF: FpClass = FpClass(2 | 4);
    pub const ALL: FpClass = FpClass(15);

    /// The class of the constant `x`.
    pub fn of(x: f32) -> FpClass {
        if x.is_nan() {
            FpClass::NAN
        } else if x == f32::INFINITY {
            FpClass::POS_INF
        } else if x == f32::NEG_INFINITY {
            FpClass::NEG_INF
        } else {
            FpClass::FINITE
        }
    }

    pub fn union(self, other: FpClass) -> FpClass {
        FpClass(self.0 | other.0)
    }

    pub fn without(self, other: FpClass) -> FpClass {
        FpClass(self.0 & !other.0)
    }

    pub fn may_be(self, other: FpClass) -> bool {
        self.0 & other.0 != 0
    }

    /// Never NaN.
    pub fn is_ordered(self) -> bool {
        !self.may_be(FpClass::NAN)
    }

    /// Always finite (no NaN, no infinity).
    pub fn is_finite(self) -> bool {
        self.without(FpClass::FINITE) == FpClass::NONE
    }

    fn negated(self) -> FpClass {
        let mut r = self.without(FpClass::INF);
        if self.may_be(FpClass::POS_INF) {
            r = r.union(FpClass::NEG_INF);
        }
        if self.may_be(FpClass::NEG_INF) {
            r = r.union(FpClass::POS_INF);
        }
        r
    }
}

/// The classes of the `f32` values of one function.
#[derive(Clone, Debug, Default)]
pub struct FpClasses {
    class: FxHashMap<Value, FpClass>,
}

impl FpClasses {
    /// The class of `v` (an `f32`); constants and values the solve did not reach
    /// (unreachable code, which has none: the empty class) included.
    pub fn get(&self, f: &Function, v: Value) -> FpClass {
        class_in(&self.class, f, v)
    }

    /// Solves the classes of `f`'s `f32` values.
    pub fn compute(f: &Function) -> FpClasses {
        let mut s = Solver {
            f,
            class: FxHashMap::default(),
            users: FxHashMap::default(),
            incoming: FxHashMap::default(),
        };
        s.index();
        s.solve();
        FpClasses { class: s.class }
    }
}

struct Solver<'a> {
    f: &'a Function,
    class: FxHashMap<Value, FpClass>,
    /// The `f32` values computed from each `f32` value (instruction results and
    /// the block parameters it is passed to).
    users: FxHashMap<Value, Vec<Value>>,
    /// For each `f32` block parameter: the edges reaching it, as (argument,
    /// refinement the edge's branch allows).
    incoming: FxHashMap<Value, Vec<(Value, FpClass)>>,
}

impl Solver<'_> {
    fn is_f32(&self, v: Value) -> bool {
        self.f.value_type(v) == Type::F32
    }

    fn index(&mut self) {
        let f = self.f;
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                if let Some(r) = f.inst_result(i).filter(|&r| self.is_f32(r)) {
                    f.kind(i).for_each_arg(|a| {
                        if self.is_f32(a) {
                            self.users.entry(a).or_default().push(r);
                        }
                    });
                }
            }
            let Some(t) = f.terminator(b) else { continue };
            let kind = f.kind(t);
            let targets = kind.targets();
            for (k, call) in targets.iter().enumerate() {
                let params = f.block_params(call.block);
                for (&p, &a) in params.iter().zip(call.args.iter()) {
                    if !self.is_f32(p) {
                        continue;
                    }
                    let keep = edge_refinement(f, kind, k, targets.len(), a);
                    self.incoming.entry(p).or_default().push((a, keep));
                    self.users.entry(a).or_default().push(p);
                }
            }
        }
    }

    fn solve(&mut self) {
        let f = self.f;
        let entry = f.entry_block();
        let mut work: Vec<Value> = Vec::new();
        for &p in f.block_params(entry) {
            if self.is_f32(p) {
                self.class.insert(p, FpClass::ALL);
            }
        }
        for b in f.layout.blocks() {
            if b != entry {
                work.extend(f.block_params(b).iter().filter(|&&p| self.is_f32(p)));
            }
            for i in f.layout.block_insts(b) {
                work.extend(f.inst_result(i).filter(|&r| self.is_f32(r)));
            }
        }
        work.reverse();
        while let Some(v) = work.pop() {
            let new = self.eval(v, entry);
            let old = self.class.get(&v).copied().unwrap_or(FpClass::NONE);
            let grown = old.union(new);
            if grown != old {
                self.class.insert(v, grown);
                if let Some(us) = self.users.get(&v) {
                    work.extend(us.iter().copied());
                }
            }
        }
    }

    fn get(&self, v: Value) -> FpClass {
        class_in(&self.class, self.f, v)
    }

    fn eval(&self, v: Value, entry: Block) -> FpClass {
        let f = self.f;
        match f.value_def(v) {
            ValueDef::FConst(bits) => FpClass::of(f32::from_bits(bits)),
            ValueDef::Param(b, _) if b == entry => FpClass::ALL,
            ValueDef::Param(..) => self.incoming.get(&v).map_or(FpClass::ALL, |edges| {
                edges.iter().fold(FpClass::NONE, |acc, &(a, keep)| {
                    let c = self.get(a);
                    acc.union(FpClass(c.0 & keep.0))
                })
            }),
            ValueDef::Inst(i) => match *f.kind(i) {
                InstKind::Unary { op, arg } => match op {
                    UnOp::SIToFP => FpClass::FINITE,
                    UnOp::FNeg => self.get(arg).negated(),
                    UnOp::FAbs => {
                        let c = self.get(arg);
                        if c.may_be(FpClass::NEG_INF) {
                            c.without(FpClass::NEG_INF).union(FpClass::POS_INF)
                        } else {
                            c
                        }
                    }
                    _ => FpClass::ALL,
                },
                InstKind::Binary { op, args: [a, b] } => {
                    let (x, y) = (self.get(a), self.get(b));
                    if x == FpClass::NONE || y == FpClass::NONE {
                        return FpClass::NONE; // not reached yet
                    }
                    arithmetic(op, x, y)
                }
                _ => FpClass::ALL,
            },
            _ => FpClass::ALL,
        }
    }
}

/// The class of `v` in `class`: a constant's own, else what the solve found
/// (nothing yet, or unreachable: the empty class).
fn class_in(class: &FxHashMap<Value, FpClass>, f: &Function, v: Value) -> FpClass {
    match f.value_def(v) {
        ValueDef::FConst(bits) => FpClass::of(f32::from_bits(bits)),
        _ => class.get(&v).copied().unwrap_or(FpClass::NONE),
    }
}

/// The class of `x op y` for operands of classes `x` and `y`.
fn arithmetic(op: BinOp, x: FpClass, y: FpClass) -> FpClass {
    let nan_in = x.may_be(FpClass::NAN) || y.may_be(FpClass::NAN);
    let finite_or_inf = FpClass::FINITE.union(FpClass::INF);
    match op {
        BinOp::FAdd | BinOp::FSub => {
            // `y` as added: `x - y` is `x + (-y)`.
            let y = if op == BinOp::FSub { y.negated() } else { y };
            let opposite = (x.may_be(FpClass::POS_INF) && y.may_be(FpClass::NEG_INF))
                || (x.may_be(FpClass::NEG_INF) && y.may_be(FpClass::POS_INF));
            if nan_in || opposite {
                FpClass::ALL
            } else {
                finite_or_inf
            }
        }
        BinOp::FMul => {
            if nan_in || x.may_be(FpClass::INF) || y.may_be(FpClass::INF) {
                FpClass::ALL
            } else {
                finite_or_inf
            }
        }
        _ => FpClass::ALL,
    }
}

/// What an argument `a` passed on target `k` (of `n`) of the terminator `kind`
/// may still be: everything, unless the terminator is a branch on an ordered
/// comparison of `a` with a finite constant, whose outcome on that edge rules
/// kinds out.
fn edge_refinement(f: &Function, kind: &InstKind, k: usize, n: usize, a: Value) -> FpClass {
    let InstKind::Br { cond, .. } = *kind else {
        return FpClass::ALL;
    };
    if n != 2 {
        return FpClass::ALL;
    }
    let Some(ci) = f.def_inst(cond) else {
        return FpClass::ALL;
    };
    let InstKind::Cmp { op, args: [x, y] } = *f.kind(ci) else {
        return FpClass::ALL;
    };
    // As `a op c`, with the comparison swapped when the constant is on the left.
    let (op, c) = if x == a {
        (op, y)
    } else if y == a {
        (swapped(op), x)
    } else {
        return FpClass::ALL;
    };
    if !f.as_fconst(c).is_some_and(f32::is_finite) {
        return FpClass::ALL;
    }
    let holds = k == 0;
    let not_nan = FpClass::ALL.without(FpClass::NAN);
    match (op, holds) {
        (CmpOp::FGt | CmpOp::FGe, true) => not_nan.without(FpClass::NEG_INF),
        (CmpOp::FGt | CmpOp::FGe, false) => FpClass::ALL.without(FpClass::POS_INF),
        (CmpOp::FLt | CmpOp::FLe, true) => not_nan.without(FpClass::POS_INF),
        (CmpOp::FLt | CmpOp::FLe, false) => FpClass::ALL.without(FpClass::NEG_INF),
        (CmpOp::FEq, true) | (CmpOp::FNe, false) => FpClass::FINITE,
        _ => FpClass::ALL,
    }
}

/// `op` with its operands exchanged.
fn swapped(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::FGt => CmpOp::FLt,
        CmpOp::FGe => CmpOp::FLe,
        CmpOp::FLt => CmpOp::FGt,
        CmpOp::FLe => CmpOp::FGe,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classes of the values `%k` names (numbered as the printer numbers
    /// them: block parameters, then results, in layout order).
    fn classes(src: &str) -> (Function, FpClasses, Vec<Value>) {
        let m = ir::parse_module(src).expect("parses");
        let f = m
            .funcs
            .values()
            .find(|f| !f.is_declaration())
            .unwrap()
            .clone();
        let c = FpClasses::compute(&f);
        let mut values = Vec::new();
        for b in f.layout.blocks() {
            values.extend_from_slice(f.block_params(b));
            values.extend(f.layout.block_insts(b).filter_map(|i| f.inst_result(i)));
        }
        (f, c, values)
    }

    /// An integer converted is finite; clamped, a sum of two such is finite again
    /// (each clamp removes one infinity, and the sum is never NaN); a function
    /// parameter clamped the same way may still be NaN; a quotient may be anything.
    #[test]
    fn conversions_sums_and_clamps() {
        let src = r#"
func @f(i32, f32) -> f32 {
bb0(%0: i32, %1: f32):
  %2 = sitofp %0
  %3 = fadd %2, %2
  %4 = fgt %3, 1048576.0
  br %4, bb1(1048576.0), bb1(%3)
bb1(%5: f32):
  %6 = flt %5, -1048576.0
  br %6, bb2(-1048576.0), bb2(%5)
bb2(%7: f32):
  %8 = fgt %1, 1048576.0
  br %8, bb3(1048576.0), bb3(%1)
bb3(%9: f32):
  %10 = flt %9, -1048576.0
  br %10, bb4(-1048576.0), bb4(%9)
bb4(%11: f32):
  %12 = fdiv %7, %7
  ret %12
}
"#;
        let (f, c, v) = classes(src);
        assert_eq!(c.get(&f, v[2]), FpClass::FINITE);
        assert!(c.get(&f, v[3]).is_ordered() && !c.get(&f, v[3]).is_finite());
        assert!(c.get(&f, v[5]).is_ordered() && c.get(&f, v[5]).may_be(FpClass::NEG_INF));
        assert!(c.get(&f, v[7]).is_finite(), "{:?}", c.get(&f, v[7]));
        assert_eq!(c.get(&f, v[11]), FpClass::ALL.without(FpClass::INF));
        assert_eq!(c.get(&f, v[12]), FpClass::ALL);
    }

    /// A loop carrying `x = x * 0.5 + 1.0` from a finite start may overflow to
    /// infinity in the solve's eyes (it does not track magnitudes), and then a
    /// product with it may be NaN (`inf * 0`): the fixed point grows to that.
    #[test]
    fn loops_grow_to_the_fixed_point() {
        let src = r#"
func @f(i32) -> f32 {
bb0(%0: i32):
  jump bb1(1.0, 0)
bb1(%1: f32, %2: i32):
  %3 = fmul %1, 0.5
  %4 = fadd %3, 1.0
  %5 = add %2, 1
  %6 = slt %5, %0
  br %6, bb1(%4, %5), bb2
bb2:
  ret %1
}
"#;
        let (f, c, v) = classes(src);
        assert_eq!(c.get(&f, v[1]), FpClass::ALL, "{:?}", c.get(&f, v[1]));
    }
}
