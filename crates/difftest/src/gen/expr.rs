//! Expressions, conditions, indices, literals and calls.

use super::{FuncSym, Gen, Sym};
use crate::ast::*;
use crate::bounds::{bound, max_float_bound, FLOAT_STORE, FLOAT_TO_INT};

/// Float subexpressions stay well below [`crate::bounds::FLOAT_EXPR_LIMIT`].
const FLOAT_EXPR_TARGET: f64 = 1e25;

/// Integer literals worth seeing often: boundaries of the int range, of immediate
/// fields (12-bit, 32-bit), powers of two and their neighbours.
const SPECIAL_INTS: &[i32] = &[
    i32::MAX,
    i32::MIN,
    i32::MIN + 1,
    -1,
    2047,
    2048,
    -2048,
    -2049,
    4095,
    65535,
    65536,
    -65536,
    1 << 30,
    46341,
    0x7fff,
    1_000_000_007,
];

const SPECIAL_FLOATS: &[f32] = &[
    0.0, 1.0, 0.5, 2.0, -1.0, 0.1, 0.3, 2.71, 1e-3, 1000.5, 123456.78, 1e6, -2.5, 0.75, 16777216.0,
    8388608.5, 1e-5,
];

/// Integer divisors: powers of two (shifts), small odd numbers and large values
/// (multiply-high sequences), negatives; never 0 or -1.
const INT_DIVISORS: &[i32] = &[
    1,
    2,
    3,
    4,
    5,
    7,
    8,
    10,
    16,
    100,
    1000,
    3,
    7,
    -2,
    -3,
    -7,
    -8,
    -16,
    65536,
    2147483647,
    i32::MIN,
    641,
    6700417,
];

const FLOAT_DIVISORS: &[f32] = &[2.0, 0.5, 3.0, 0.25, -1.5, 10.0, 7.0, 1.0, -4.0, 1.1];

impl Gen<'_> {
    /// An expression of type `ty` (with C's conversions, the value may come from the
    /// other type) free of impure calls.
    pub(super) fn expr(&mut self, ty: Ty, depth: usize) -> Expr {
        match ty {
            Ty::Int => self.int_expr(depth),
            Ty::Float => self.float_expr(depth),
        }
    }

    pub(super) fn int_expr(&mut self, depth: usize) -> Expr {
        let depth = depth.min(self.cfg.max_expr_depth);
        if depth == 0 || self.chance(0.25) {
            return self.int_leaf();
        }
        let d = depth - 1;
        match self.weighted(&[10, 3, 2, 1, 2, 3, 1, 2, 2]) {
            0 => {
                let op = *self.pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul]);
                let l = self.int_expr(d);
                let r = self.int_expr(d);
                Expr::bin(op, l, r)
            }
            1 => {
                let l = self.int_expr(d);
                let div = self.int_divisor(d);
                if self.chance(0.5) {
                    Expr::Div(Box::new(l), div)
                } else {
                    Expr::Rem(Box::new(l), div)
                }
            }
            2 => Expr::Neg(Box::new(self.int_expr(d))),
            3 => {
                let ty = self.any_ty();
                Expr::Not(Box::new(self.expr(ty, d)))
            }
            4 => self.comparison(d),
            5 => self
                .pure_call(Some(Ty::Int))
                .map(Expr::Call)
                .unwrap_or_else(|| self.int_leaf()),
            6 => {
                let op = *self.pick(&[BinOp::And, BinOp::Or]);
                let l = self.comparison(d);
                let r = self.comparison(d);
                Expr::bin(op, l, r)
            }
            8 => {
                let x = self.int_expr(d.min(1));
                self.int_idiom(x)
            }
            _ => {
                // Mixed arithmetic with a float, compared: an int without conversion.
                let f = self.float_expr(d);
                let i = self.int_expr(d);
                let op = *self.pick(&[BinOp::Lt, BinOp::Ge, BinOp::Ne]);
                Expr::bin(op, Expr::bin(BinOp::Add, f, i), Expr::Float(0.0))
            }
        }
    }

    fn int_leaf(&mut self) -> Expr {
        match self.weighted(&[3, 6, 3]) {
            0 => Expr::Int(self.int_literal()),
            1 => self
                .scalar_read(Ty::Int)
                .unwrap_or_else(|| Expr::Int(self.int_literal())),
            _ => self
                .element_read(Ty::Int)
                .or_else(|| self.scalar_read(Ty::Int))
                .unwrap_or_else(|| Expr::Int(self.int_literal())),
        }
    }

    /// A float expression whose subexpressions stay far from overflow.
    pub(super) fn float_expr(&mut self, depth: usize) -> Expr {
        for d in (0..=depth.min(self.cfg.max_expr_depth)).rev() {
            let e = self.float_expr_raw(d);
            if max_float_bound(&e) < FLOAT_EXPR_TARGET {
                return e;
            }
        }
        self.float_leaf()
    }

    /// A float expression bounded by the store bound: fits an initialiser list.
    pub(super) fn small_float_expr(&mut self, depth: usize) -> Expr {
        let e = self.float_expr(depth);
        if bound(&e) <= FLOAT_STORE {
            e
        } else {
            Expr::Float(self.store_float_literal())
        }
    }

    fn float_expr_raw(&mut self, depth: usize) -> Expr {
        if depth == 0 || self.chance(0.25) {
            return self.float_leaf();
        }
        let d = depth - 1;
        match self.weighted(&[10, 3, 2, 2, 2, 2]) {
            0 => {
                let op = *self.pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul]);
                let l = self.float_expr_raw(d);
                let r = if self.chance(0.25) {
                    self.int_expr(d)
                } else {
                    self.float_expr_raw(d)
                };
                if self.chance(0.5) {
                    Expr::bin(op, l, r)
                } else {
                    Expr::bin(op, r, l)
                }
            }
            1 => {
                let l = self.float_expr_raw(d);
                let div = match self.weighted(&[3, 2, 1]) {
                    0 => Divisor::Float(*self.pick(FLOAT_DIVISORS)),
                    1 => {
                        let x = self.float_expr_raw(d.min(1));
                        if x.ty() == Ty::Float && bound(&x) < 1e12 {
                            Divisor::FloatSquare(Box::new(x))
                        } else {
                            Divisor::Float(2.0)
                        }
                    }
                    _ => Divisor::Int(*self.pick(&[3, 10, -7, 4])),
                };
                Expr::Div(Box::new(l), div)
            }
            2 => Expr::Neg(Box::new(self.float_expr_raw(d))),
            3 => self
                .pure_call(Some(Ty::Float))
                .map(Expr::Call)
                .unwrap_or_else(|| self.float_leaf()),
            5 => {
                let x = self.float_expr_raw(d.min(1));
                self.float_idiom(x)
            }
            _ => {
                // An int subexpression, converted where it meets a float.
                let i = self.int_expr(d);
                let f = self.float_leaf();
                Expr::bin(BinOp::Add, i, f)
            }
        }
    }

    /// `x` in a pattern that algebraic simplification looks for: identities that
    /// hold (`x + 0`, `x * 1`, `x - x`), ones that do not with wrapping (`x + 1 > x`),
    /// powers of two (`x / 8` rounds toward zero, unlike a shift), double negation.
    fn int_idiom(&mut self, x: Expr) -> Expr {
        use BinOp::*;
        let b = |op, l: &Expr, r: Expr| Expr::bin(op, l.clone(), r);
        let div = |l: &Expr, k: i32| Expr::Div(Box::new(l.clone()), Divisor::Int(k));
        let rem = |l: &Expr, k: i32| Expr::Rem(Box::new(l.clone()), Divisor::Int(k));
        match self.between(0, 17) {
            0 => b(Add, &x, Expr::Int(0)),
            1 => b(Sub, &Expr::Int(0), x),
            2 => b(Mul, &x, Expr::Int(1)),
            3 => b(Mul, &x, Expr::Int(0)),
            4 => b(Mul, &x, Expr::Int(-1)),
            5 => b(Sub, &x, x.clone()),
            6 => div(&x, *self.pick(&[2, 4, 8, 1024, -2, -8, 1 << 30])),
            7 => rem(&x, *self.pick(&[2, 4, 8, 1024, -2, -8, 1 << 30])),
            8 => div(&b(Mul, &x, Expr::Int(2)), 2),
            9 => b(
                Mul,
                &x,
                Expr::Int(*self.pick(&[2, 8, 16, 4096, 3, 5, 7, 9])),
            ),
            10 => Expr::Not(Box::new(Expr::Not(Box::new(x)))),
            11 => Expr::Neg(Box::new(Expr::Neg(Box::new(x)))),
            12 => b(Gt, &b(Add, &x, Expr::Int(1)), x),
            13 => b(Lt, &b(Sub, &x, Expr::Int(1)), x),
            14 => b(Eq, &x, x.clone()),
            15 => b(Sub, &b(Add, &x, Expr::Int(i32::MAX)), Expr::Int(i32::MAX)),
            16 => div(&x, 1),
            _ => rem(&x, 1),
        }
    }

    /// `x` in a float pattern that is *not* an identity under IEEE rules unless
    /// noted: `x + 0.0` (-0.0 + 0.0 is +0.0), `x * 0.0` (-0.0 or 0.0), `0.0 - x`
    /// against `-x`, `(x + c) - c` (rounding); and ones that are: `x * 1.0`,
    /// `x / 2.0` = `x * 0.5`, `-(-x)`.
    fn float_idiom(&mut self, x: Expr) -> Expr {
        use BinOp::*;
        let b = |op, l: &Expr, r: Expr| Expr::bin(op, l.clone(), r);
        match self.between(0, 11) {
            0 => b(Add, &x, Expr::Float(0.0)),
            1 => b(Sub, &Expr::Float(0.0), x),
            2 => b(Mul, &x, Expr::Float(1.0)),
            3 => b(Mul, &x, Expr::Float(0.0)),
            4 => b(Mul, &x, Expr::Float(-1.0)),
            5 => b(Sub, &x, x.clone()),
            6 => Expr::Div(Box::new(x), Divisor::Float(2.0)),
            7 => b(Mul, &x, Expr::Float(0.5)),
            8 => Expr::Neg(Box::new(Expr::Neg(Box::new(x)))),
            9 => {
                let c = *self.pick(&[1.0, 16777216.0, 0.1, 3.0]);
                b(Sub, &b(Add, &x, Expr::Float(c)), Expr::Float(c))
            }
            10 => b(Sub, &x, Expr::Float(0.0)),
            _ => b(Mul, &Expr::Float(-0.0), x),
        }
    }

    fn float_leaf(&mut self) -> Expr {
        match self.weighted(&[3, 5, 3, 1]) {
            0 => Expr::Float(self.float_literal()),
            1 => self
                .scalar_read(Ty::Float)
                .unwrap_or_else(|| Expr::Float(self.float_literal())),
            2 => self
                .element_read(Ty::Float)
                .or_else(|| self.scalar_read(Ty::Float))
                .unwrap_or_else(|| Expr::Float(self.float_literal())),
            _ => self.int_leaf(),
        }
    }

    fn any_ty(&mut self) -> Ty {
        if self.chance(0.65) {
            Ty::Int
        } else {
            Ty::Float
        }
    }

    /// `l op r` with a comparison operator, on ints, floats or both.
    pub(super) fn comparison(&mut self, depth: usize) -> Expr {
        let op = *self.pick(&[
            BinOp::Lt,
            BinOp::Le,
            BinOp::Gt,
            BinOp::Ge,
            BinOp::Eq,
            BinOp::Ne,
        ]);
        let lt = self.any_ty();
        let rt = if self.chance(0.8) { lt } else { self.any_ty() };
        let l = self.expr(lt, depth);
        let r = self.expr(rt, depth);
        Expr::bin(op, l, r)
    }

    /// A condition: `&&`, `||`, `!` over comparisons and values; where `impure_ok`,
    /// some operands call impure functions (their effects happen in the order
    /// short-circuit evaluation fixes).
    pub(super) fn cond(&mut self, depth: usize, impure_ok: bool) -> Expr {
        let impure_ok = impure_ok && !self.pure_fn;
        if depth == 0 || self.chance(0.4) {
            return self.cond_atom(impure_ok);
        }
        match self.weighted(&[4, 4, 1]) {
            0 | 1 => {
                let op = if self.chance(0.5) {
                    BinOp::And
                } else {
                    BinOp::Or
                };
                let l = self.cond(depth - 1, impure_ok);
                let r = self.cond(depth - 1, impure_ok);
                Expr::bin(op, l, r)
            }
            _ => Expr::Not(Box::new(self.cond(depth - 1, impure_ok))),
        }
    }

    fn cond_atom(&mut self, impure_ok: bool) -> Expr {
        if impure_ok && self.chance(0.3) {
            let ret = Some(self.any_ty());
            if let Some(c) = self.impure_call(Some(ret)) {
                let call = Expr::Call(c);
                if self.chance(0.3) {
                    return call;
                }
                let other = self.local_scalar_or_literal(call.ty());
                let op = *self.pick(&[BinOp::Lt, BinOp::Gt, BinOp::Eq, BinOp::Ne, BinOp::Ge]);
                return if self.chance(0.5) {
                    Expr::bin(op, call, other)
                } else {
                    Expr::bin(op, other, call)
                };
            }
        }
        match self.weighted(&[6, 2, 1]) {
            0 => self.comparison(2),
            1 => self.int_expr(2),
            _ => self.float_expr(1),
        }
    }

    /// A literal or a local (non-global) scalar: a value no call can change.
    fn local_scalar_or_literal(&mut self, ty: Ty) -> Expr {
        let locals: Vec<Sym> = self
            .visible()
            .into_iter()
            .filter(|s| !s.global && s.shape.is_empty())
            .collect();
        if !locals.is_empty() && self.chance(0.6) {
            let s = self.pick(&locals).clone();
            return Expr::var(&s.name, s.ty);
        }
        match ty {
            Ty::Int => Expr::Int(self.between(-5, 20) as i32),
            Ty::Float => Expr::Float(self.float_literal()),
        }
    }

    // ---------------------------------------------------------------- leaves

    pub(super) fn int_literal(&mut self) -> i32 {
        match self.weighted(&[6, 4, 2, 1]) {
            0 => self.between(0, 10) as i32,
            1 => self.between(-1000, 1000) as i32,
            2 => *self.pick(SPECIAL_INTS),
            _ => self.between(i32::MIN as i64, i32::MAX as i64) as i32,
        }
    }

    /// A finite, normal (or zero) float.
    pub(super) fn float_literal(&mut self) -> f32 {
        match self.weighted(&[3, 3, 2]) {
            0 => *self.pick(SPECIAL_FLOATS),
            1 => self.between(-800, 800) as f32 / 8.0,
            _ => {
                // A random mantissa: most such values have no short decimal form.
                let bits = self.between(0, (1 << 23) - 1) as u32;
                let exp = self.between(120, 140) as u32;
                let v = f32::from_bits((exp << 23) | bits);
                if self.chance(0.5) {
                    -v
                } else {
                    v
                }
            }
        }
    }

    /// A visible scalar of type `ty`.
    fn scalar_read(&mut self, ty: Ty) -> Option<Expr> {
        let cands: Vec<Sym> = self
            .visible()
            .into_iter()
            .filter(|s| s.ty == ty && s.shape.is_empty())
            .collect();
        if cands.is_empty() {
            return None;
        }
        let s = self.pick(&cands).clone();
        Some(Expr::var(&s.name, ty))
    }

    /// An element of a visible array of type `ty`, with safe indices.
    fn element_read(&mut self, ty: Ty) -> Option<Expr> {
        let cands: Vec<Sym> = self
            .visible()
            .into_iter()
            .filter(|s| s.ty == ty && !s.shape.is_empty())
            .collect();
        if cands.is_empty() {
            return None;
        }
        let s = self.pick(&cands).clone();
        let index = self.indices(&s.shape);
        Some(Expr::Elem {
            name: s.name,
            ty,
            index,
        })
    }

    pub(super) fn indices(&mut self, shape: &[usize]) -> Vec<Index> {
        shape.iter().map(|&n| self.index(n)).collect()
    }

    /// An index in `[0, size)`: a constant, an enclosing loop's variable (plus an
    /// offset that keeps its whole range inside), or a wrapped expression.
    pub(super) fn index(&mut self, size: usize) -> Index {
        let fitting: Vec<(String, i64, i64)> = self
            .loops
            .iter()
            .filter_map(|l| {
                let (lo, hi) = (-(l.min as i64), size as i64 - 1 - l.max as i64);
                (lo <= hi).then(|| (l.var.clone(), lo, hi))
            })
            .collect();
        match self.weighted(&[2, if fitting.is_empty() { 0 } else { 6 }, 2]) {
            0 => Index::Const(self.between(0, size as i64 - 1) as usize),
            1 => {
                let (var, lo, hi) = self.pick(&fitting).clone();
                let offset = if lo <= 0 && 0 <= hi && self.chance(0.6) {
                    0
                } else {
                    self.between(lo, hi)
                };
                Index::Loop {
                    var,
                    offset: offset as i32,
                }
            }
            _ => Index::Wrap {
                expr: Box::new(self.int_expr(1)),
                size,
            },
        }
    }

    fn int_divisor(&mut self, depth: usize) -> Divisor {
        if self.chance(0.6) {
            Divisor::Int(*self.pick(INT_DIVISORS))
        } else {
            let k = self.between(1, 20) as i32;
            Divisor::IntExpr {
                expr: Box::new(self.int_expr(depth.min(1))),
                k,
            }
        }
    }

    // ---------------------------------------------------------------- calls

    /// A call of a pure function returning `ret`, if one fits the cost budget.
    pub(super) fn pure_call(&mut self, ret: Option<Ty>) -> Option<Call> {
        let cands: Vec<FuncSym> = self
            .funcs
            .iter()
            .filter(|f| f.pure_fn && f.ret == ret)
            .cloned()
            .collect();
        self.call_one_of(cands)
    }

    /// A call of an impure function (`ret`: `None` any, `Some(r)` returning `r`),
    /// in an impure context, if one fits.
    pub(super) fn impure_call(&mut self, ret: Option<Option<Ty>>) -> Option<Call> {
        if self.pure_fn {
            return None;
        }
        let cands: Vec<FuncSym> = self
            .funcs
            .iter()
            .filter(|f| !f.pure_fn && ret.is_none_or(|r| f.ret == r))
            .cloned()
            .collect();
        self.call_one_of(cands)
    }

    /// A call of any function (statement context).
    pub(super) fn any_call(&mut self) -> Option<Call> {
        let cands: Vec<FuncSym> = self
            .funcs
            .iter()
            .filter(|f| !self.pure_fn || f.pure_fn)
            .cloned()
            .collect();
        self.call_one_of(cands)
    }

    fn call_one_of(&mut self, cands: Vec<FuncSym>) -> Option<Call> {
        // Calls in arguments of calls in arguments: enough.
        if cands.is_empty() || self.call_nesting >= 2 {
            return None;
        }
        let f = self.pick(&cands).clone();
        let cost = self.mult.saturating_mul(f.cost);
        if self.cost.saturating_add(cost) > self.budget {
            return None;
        }
        self.call_nesting += 1;
        let args = self.args(&f);
        self.call_nesting -= 1;
        let args = args?;
        self.cost += cost;
        Some(Call {
            func: f.name,
            args,
            pure_fn: f.pure_fn,
            ret: f.ret,
        })
    }

    pub(super) fn args(&mut self, f: &FuncSym) -> Option<Vec<Arg>> {
        let mut args = Vec::new();
        for p in &f.params {
            if let Some((d, limit)) = &f.depth {
                if *d == p.name {
                    args.push(Arg::Value(self.depth_arg(*limit)));
                    continue;
                }
            }
            match &p.array {
                None => {
                    let ty = if self.chance(0.85) {
                        p.ty
                    } else {
                        self.any_ty()
                    };
                    let mut e = self.expr(ty, 2);
                    if p.ty == Ty::Int && e.ty() == Ty::Float && bound(&e) >= FLOAT_TO_INT {
                        e = self.int_expr(1);
                    }
                    args.push(Arg::Value(e));
                }
                Some(ap) => args.push(Arg::Array(self.array_arg(p.ty, ap)?)),
            }
        }
        Some(args)
    }

    /// The depth passed to a recursive function of depth `limit`: a constant, an
    /// enclosing loop's variable or a value reduced modulo `limit + 1` (a negative
    /// one stops at once).
    pub(super) fn depth_arg(&mut self, limit: i32) -> Expr {
        match self.weighted(&[2, 1, 2]) {
            0 => Expr::Int(self.between(0, limit as i64) as i32),
            1 if !self.loops.is_empty() => {
                let l = self.pick(&self.loops.clone()).clone();
                Expr::var(&l.var, Ty::Int)
            }
            _ => Expr::Rem(Box::new(self.int_expr(1)), Divisor::Int(limit + 1)),
        }
    }

    /// A visible array, indexed down to a shape that fits `ap`.
    fn array_arg(&mut self, ty: Ty, ap: &ArrayParam) -> Option<ArrayRef> {
        let mut cands = Vec::new();
        for s in self.visible() {
            // A `const` array cannot be passed: the parameter is not `const`.
            if s.ty != ty || s.shape.is_empty() || s.is_const {
                continue;
            }
            for k in 0..s.shape.len() {
                let rest = &s.shape[k..];
                if rest[0] >= ap.len && rest[1..] == ap.inner[..] {
                    cands.push((s.clone(), k));
                }
            }
        }
        if cands.is_empty() {
            return None;
        }
        let (s, k) = self.pick(&cands).clone();
        let index = self.indices(&s.shape[..k]);
        Some(ArrayRef {
            name: s.name,
            index,
        })
    }
}
