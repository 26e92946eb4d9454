//! The rules that make a generated program well defined, checked on the tree.
//!
//! The generator builds programs that satisfy them; the reducer checks every
//! candidate with [`validate`] (and with sysyc's front end, for names and types), so a
//! reduced program is as well defined as the original. The rules:
//!
//! - **indices**: every element access is fully indexed and every index is in range:
//!   a constant below the dimension, a wrapped expression whose modulus is the
//!   dimension, or `v + offset` for an enclosing loop's variable `v` whose whole range
//!   plus the offset is within the dimension; an array argument matches the callee's
//!   inner dimensions and is at least as long as the callee assumes;
//! - **division**: integer divisors are non-zero constants other than -1, or
//!   `e % k + k + 1`; `%` is integer-only; float divisors are at least 1/4 in
//!   magnitude;
//! - **floats** (see [`crate::bounds`]): no float subexpression can overflow; a float
//!   converted to `int` where the printer cannot clamp it (call arguments, initialiser
//!   lists, `putint`) stays below 2^31; a float array initialiser is within the store
//!   bound;
//! - **loops**: steps are non-zero, loop variables are never assigned, `continue`
//!   names its innermost loop (it steps the variable), `break`/`continue` are inside
//!   loops;
//! - **evaluation order**: C leaves the order of operand evaluation open, so a call
//!   with side effects (an impure function, see [`Func::pure_fn`]) appears only where
//!   the order is fixed: as a statement, as the whole right-hand side of an
//!   assignment, initialiser or `return`, or as an operand of `&&`/`||`/`!` in a
//!   condition, alone or compared with an expression over local scalars; its
//!   arguments never contain such a call. A pure function touches no globals (except
//!   constants), never writes through its array parameters, prints nothing and calls
//!   only pure functions;
//! - **recursion**: a function calls itself only when it has a [`Recursion`] (its
//!   depth parameter is an `int` nobody assigns, its base case returns at once for a
//!   depth outside `[1, limit]` and calls nothing of its own), and each such call
//!   passes `depth - c` with a literal `c >= 1`: the recursion ends within `limit`
//!   levels; other calls go to functions defined earlier;
//! - **input**: `getint()`/`getfloat()` only initialise variables at the top level of
//!   `main`, so they read the generated input in a fixed order.

use crate::ast::*;
use crate::bounds::{bound, max_float_bound, FLOAT_EXPR_LIMIT};
use std::collections::HashMap;

/// Checks every rule; the error names the first violation.
pub fn validate(p: &Program) -> Result<(), String> {
    let mut v = Validator {
        funcs: HashMap::new(),
        vars: Scopes::default(),
        loops: Vec::new(),
        func: None,
        recursive: None,
    };
    for g in &p.globals {
        v.decl(g, true)?;
    }
    let globals = v.vars.clone();
    for f in &p.funcs {
        v.vars = globals.clone();
        // Parameters and the body's top level share one scope, as in C.
        v.vars.open();
        v.loops.clear();
        v.func(f)?;
        v.funcs.insert(f.name.clone(), f.clone());
    }
    match p.funcs.last() {
        Some(f) if f.name == "main" && f.params.is_empty() && f.ret == Some(Ty::Int) => Ok(()),
        _ => Err("the last function is not `int main()`".into()),
    }
}

#[derive(Clone, Debug)]
struct VarInfo {
    ty: Ty,
    shape: Vec<usize>,
    is_const: bool,
    global: bool,
    /// An array parameter (pure functions may not write through it).
    param_array: bool,
    loop_var: bool,
    /// The value of a scalar `const int` with a computable initialiser.
    value: Option<i64>,
}

/// The variables in scope: the globals, then one map per open block. A declaration
/// may hide one of an enclosing block or a global (shadowing), never one of its own
/// block.
#[derive(Clone, Debug, Default)]
struct Scopes(Vec<HashMap<String, VarInfo>>);

impl Scopes {
    /// The innermost variable named `name`.
    fn get(&self, name: &str) -> Option<&VarInfo> {
        self.0.iter().rev().find_map(|s| s.get(name))
    }

    /// Whether the innermost block declares `name` already.
    fn declared_here(&self, name: &str) -> bool {
        self.0.last().is_some_and(|s| s.contains_key(name))
    }

    fn insert(&mut self, name: String, info: VarInfo) {
        if self.0.is_empty() {
            self.open();
        }
        self.0
            .last_mut()
            .expect("a scope is open")
            .insert(name, info);
    }

    fn open(&mut self) {
        self.0.push(HashMap::new());
    }

    fn close(&mut self) {
        self.0.pop();
    }
}

/// An enclosing loop: its variable and the range of values it takes in the body.
struct LoopInfo {
    var: String,
    step: i32,
    min: i64,
    max: i64,
}

struct Validator {
    funcs: HashMap<String, Func>,
    vars: Scopes,
    loops: Vec<LoopInfo>,
    /// The function being checked: (pure, return type).
    func: Option<(bool, Option<Ty>)>,
    /// The recursive function being checked and its depth parameter.
    recursive: Option<(String, String)>,
}

type R = Result<(), String>;

impl Validator {
    fn pure_ctx(&self) -> bool {
        self.func.is_some_and(|(p, _)| p)
    }

    fn var(&self, name: &str) -> Result<&VarInfo, String> {
        self.vars
            .get(name)
            .ok_or_else(|| format!("`{name}` is not declared"))
    }

    fn func(&mut self, f: &Func) -> R {
        self.func = Some((f.pure_fn, f.ret));
        self.recursive = None;
        self.recursion(f)
            .map_err(|e| format!("in {}: {e}", f.name))?;
        for p in &f.params {
            self.vars.insert(
                p.name.clone(),
                VarInfo {
                    ty: p.ty,
                    shape: p.array.as_ref().map(ArrayParam::shape).unwrap_or_default(),
                    is_const: false,
                    global: false,
                    param_array: p.array.is_some(),
                    // The depth of a recursion is never assigned.
                    loop_var: self.recursive.as_ref().is_some_and(|(_, d)| *d == p.name),
                    value: None,
                },
            );
        }
        // The base case comes first: only the parameters are in scope.
        if let Some(b) = f.recursion.as_ref().and_then(|r| r.base.as_ref()) {
            self.return_value(b)
                .map_err(|e| format!("in {}: base case: {e}", f.name))?;
        }
        for s in &f.body {
            match s {
                // `T v = getint();` / `getfloat()` at the top level of main.
                Stmt::Decl(Decl {
                    name,
                    ty,
                    is_const: false,
                    dims,
                    init: Some(Init::Expr(Expr::Input(t))),
                }) if f.name == "main" && dims.is_empty() && t == ty => {
                    if self.vars.declared_here(name) {
                        return Err(format!("`{name}` declared twice"));
                    }
                    self.vars.insert(
                        name.clone(),
                        VarInfo {
                            ty: *ty,
                            shape: vec![],
                            is_const: false,
                            global: false,
                            param_array: false,
                            loop_var: false,
                            value: None,
                        },
                    );
                }
                _ => self.stmt(s)?,
            }
        }
        match (&f.tail, f.ret) {
            (Some(e), Some(_)) => self.return_value(e),
            (None, None) => Ok(()),
            _ => Err(format!("{}: tail return does not match the type", f.name)),
        }
        .map_err(|e| format!("in {}: {e}", f.name))
    }

    /// A recursive function's depth parameter and base case; makes the function
    /// callable from its own body (with a decreasing depth, see [`Self::call`]).
    fn recursion(&mut self, f: &Func) -> R {
        let Some(r) = &f.recursion else {
            return Ok(());
        };
        if !f
            .params
            .iter()
            .any(|p| p.name == r.depth && p.ty == Ty::Int && p.array.is_none())
        {
            return Err(format!("the depth `{}` is not an int parameter", r.depth));
        }
        if r.limit < 1 {
            return Err("a recursion limit below 1".into());
        }
        // The base case runs before the parameters are in scope here, but it is
        // printed inside the function: check it as the final return is checked.
        let mut calls_self = false;
        if let Some(b) = &r.base {
            let mut b = b.clone();
            crate::visit::expr(&mut b, &mut |e| {
                calls_self |= matches!(e, Expr::Call(c) if c.func == f.name);
                false
            });
        }
        if calls_self {
            return Err("the base case calls the function itself".into());
        }
        if r.base.is_some() != f.ret.is_some() {
            return Err("the base case does not match the return type".into());
        }
        self.recursive = Some((f.name.clone(), r.depth.clone()));
        self.funcs.insert(f.name.clone(), f.clone());
        Ok(())
    }

    fn decl(&mut self, d: &Decl, global: bool) -> R {
        if self.vars.declared_here(&d.name) || self.funcs.contains_key(&d.name) {
            return Err(format!("`{}` declared twice", d.name));
        }
        // A loop's increment is printed at the end of its body: hiding the loop
        // variable there would step the wrong variable.
        if self.vars.get(&d.name).is_some_and(|v| v.loop_var) {
            return Err(format!("`{}` hides a loop variable", d.name));
        }
        // In C a variable is in scope in its own initialiser: `int x = x + 1;`
        // reads the new, uninitialised `x`, not the one it hides.
        let init: Vec<&Expr> = match &d.init {
            Some(Init::Expr(e)) => vec![e],
            Some(Init::List(items)) => init_exprs(items),
            None => vec![],
        };
        if init.iter().any(|e| mentions(e, &d.name)) {
            return Err(format!("`{}` is read in its own initialiser", d.name));
        }
        for dim in &d.dims {
            if dim.size == 0 {
                return Err(format!("`{}` has a zero dimension", d.name));
            }
            self.constant(&dim.expr)?;
            if self.const_value(&dim.expr) != Some(dim.size as i64) {
                return Err(format!(
                    "`{}`: dimension {} is not {}",
                    d.name,
                    crate::print::print_expr(&dim.expr),
                    dim.size
                ));
            }
        }
        match &d.init {
            None if !global => return Err(format!("local `{}` is not initialised", d.name)),
            None => {}
            Some(Init::Expr(e)) if d.dims.is_empty() => {
                if global || d.is_const {
                    // Not clamped by the printer.
                    self.constant(e)?;
                    self.stored(e, d.ty, false)?;
                } else {
                    self.root_value(e)?;
                }
            }
            Some(Init::List(items)) if !d.dims.is_empty() => {
                for e in init_exprs(items) {
                    if global || d.is_const {
                        self.constant(e)?;
                    } else {
                        self.pure_expr(e)?;
                    }
                    self.stored(e, d.ty, false)?;
                }
            }
            Some(_) => return Err(format!("`{}`: initialiser shape", d.name)),
        }
        let value = match (&d.init, d.is_const, d.ty, d.dims.is_empty()) {
            (Some(Init::Expr(e)), true, Ty::Int, true) => self.const_value(e),
            _ => None,
        };
        self.vars.insert(
            d.name.clone(),
            VarInfo {
                ty: d.ty,
                shape: d.shape(),
                is_const: d.is_const,
                global,
                param_array: false,
                loop_var: false,
                value,
            },
        );
        Ok(())
    }

    /// The value of an integer constant expression, when it has one.
    fn const_value(&self, e: &Expr) -> Option<i64> {
        match e {
            Expr::Int(v) => Some(*v as i64),
            Expr::Var { name, .. } => self.vars.get(name)?.value,
            Expr::Neg(x) => self.const_value(x).map(|v| -v),
            Expr::Bin(op, l, r) => {
                let (a, b) = (self.const_value(l)?, self.const_value(r)?);
                match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// A constant expression (global and `const` initialisers): literals and
    /// scalar integer constants, no division.
    fn constant(&self, e: &Expr) -> R {
        match e {
            Expr::Int(_) | Expr::Float(_) => Ok(()),
            Expr::Var { name, .. } => {
                let v = self.var(name)?;
                if v.is_const && v.shape.is_empty() && v.ty == Ty::Int {
                    Ok(())
                } else {
                    Err(format!("`{name}` in a constant expression"))
                }
            }
            Expr::Neg(x) => self.constant(x),
            Expr::Bin(op, l, r) if op.is_arith() => {
                self.constant(l)?;
                self.constant(r)
            }
            _ => Err("not a constant expression".into()),
        }
    }

    /// A value stored into a place of type `to` that the printer cannot clamp
    /// (`clampable` false) or can.
    fn stored(&self, e: &Expr, to: Ty, clampable: bool) -> R {
        if !clampable && crate::bounds::needs_clamp(e, to) {
            return Err(format!(
                "float value bounded by {:e} stored unclamped",
                bound(e)
            ));
        }
        Ok(())
    }

    /// The statements of a nested block, in a scope of their own.
    fn stmts(&mut self, body: &[Stmt]) -> R {
        self.vars.open();
        let r = body.iter().try_for_each(|s| self.stmt(s));
        self.vars.close();
        r
    }

    fn stmt(&mut self, s: &Stmt) -> R {
        match s {
            Stmt::Decl(d) => self.decl(d, false),
            Stmt::Assign { target, value } => {
                self.lvalue(target)?;
                if let Expr::Call(c) = value {
                    if !c.pure_fn {
                        self.sequenced_place(target)?;
                    }
                }
                self.root_value(value)
            }
            Stmt::Call(c) => self.call(c, true),
            Stmt::If { cond, then, els } => {
                self.cond(cond)?;
                self.stmts(then)?;
                els.as_ref().map_or(Ok(()), |e| self.stmts(e))
            }
            Stmt::Loop {
                var,
                start,
                end,
                step,
                cond,
                body,
            } => {
                if *step == 0 {
                    return Err(format!("loop `{var}` has step 0"));
                }
                let (min, max) = loop_range(*start, *end, *step);
                if self.vars.get(var).is_some() {
                    return Err(format!("loop variable `{var}` declared twice"));
                }
                self.vars.insert(
                    var.clone(),
                    VarInfo {
                        ty: Ty::Int,
                        shape: vec![],
                        is_const: false,
                        global: false,
                        param_array: false,
                        loop_var: true,
                        value: None,
                    },
                );
                if let Some(c) = cond {
                    self.cond(c)?;
                }
                self.loops.push(LoopInfo {
                    var: var.clone(),
                    step: *step,
                    min,
                    max,
                });
                let r = self.stmts(body);
                self.loops.pop();
                r
            }
            Stmt::Break => match self.loops.last() {
                Some(_) => Ok(()),
                None => Err("break outside a loop".into()),
            },
            Stmt::Continue { var, step } => match self.loops.last() {
                Some(l) if l.var == *var && l.step == *step => Ok(()),
                _ => Err(format!("continue of `{var}` outside its loop")),
            },
            Stmt::Return(e) => match (e, self.func.and_then(|f| f.1)) {
                (Some(e), Some(_)) => self.return_value(e),
                (None, None) => Ok(()),
                _ => Err("return does not match the function type".into()),
            },
            Stmt::Block(b) => self.stmts(b),
            Stmt::Print(p) => {
                if self.pure_ctx() {
                    return Err("a pure function prints".into());
                }
                match p {
                    Print::Int(e) => {
                        self.pure_expr(e)?;
                        self.stored(e, Ty::Int, false)
                    }
                    Print::Float(e) => self.pure_expr(e),
                    // Arguments are evaluated in an unspecified order: none may call.
                    Print::Format(args) => args.iter().try_for_each(|e| {
                        self.pure_expr(e)?;
                        match e.ty() {
                            Ty::Int => self.stored(e, Ty::Int, false),
                            Ty::Float => Ok(()),
                        }
                    }),
                    Print::Array { ty, n, array } => {
                        let v = self.var(&array.name)?;
                        if v.ty != *ty || v.is_const {
                            return Err("putarray of the wrong type or a const".into());
                        }
                        let rest = self.array_ref(array)?;
                        if rest.len() != 1 || rest[0] < *n {
                            return Err(format!("putarray({n}) of a {rest:?} array"));
                        }
                        Ok(())
                    }
                }
            }
        }
    }

    fn lvalue(&mut self, l: &LValue) -> R {
        let v = self.var(l.name())?.clone();
        if v.is_const || v.loop_var {
            return Err(format!("assignment to `{}`", l.name()));
        }
        if v.ty != l.ty() {
            return Err(format!("`{}` has the wrong type", l.name()));
        }
        if self.pure_ctx() && (v.global || v.param_array) {
            return Err(format!("pure function writes `{}`", l.name()));
        }
        match l {
            LValue::Var { .. } if v.shape.is_empty() => Ok(()),
            LValue::Elem { index, .. } if index.len() == v.shape.len() => {
                self.indices(index, &v.shape)
            }
            _ => Err(format!("`{}` indexed wrongly", l.name())),
        }
    }

    /// The place assigned the result of an impure call: its address must not depend
    /// on anything the call may change.
    fn sequenced_place(&self, l: &LValue) -> R {
        if let LValue::Elem { index, .. } = l {
            for i in index {
                if let Index::Wrap { expr, .. } = i {
                    self.local_scalars_only(expr)?;
                }
            }
        }
        Ok(())
    }

    /// `e` reads only literals, constants and local scalars, and calls nothing: a
    /// call cannot change its value.
    fn local_scalars_only(&self, e: &Expr) -> R {
        let mut ok = true;
        walk(e, &mut |x| match x {
            Expr::Var { name, .. } => {
                if let Some(v) = self.vars.get(name) {
                    ok &= v.is_const || !v.global;
                }
            }
            Expr::Elem { .. } | Expr::Call(_) => ok = false,
            _ => {}
        });
        if ok {
            Ok(())
        } else {
            Err("operand of an impure call's context reads memory".into())
        }
    }

    /// An expression whose value is used whole (right-hand side, initialiser,
    /// return): it may be an impure call.
    fn root_value(&self, e: &Expr) -> R {
        match e {
            Expr::Call(c) => self.call(c, true),
            _ => self.pure_expr(e),
        }
    }

    /// A returned value: a root value, or `x op f(...)` with an impure call and an
    /// `x` over local scalars (which the call cannot change).
    fn return_value(&self, e: &Expr) -> R {
        match e {
            Expr::Bin(op, x, call) if op.is_arith() => match &**call {
                Expr::Call(c) if !c.pure_fn => {
                    self.call(c, true)?;
                    self.pure_expr(x)?;
                    self.local_scalars_only(x)
                }
                _ => self.pure_expr(e),
            },
            _ => self.root_value(e),
        }
    }

    /// A condition: `&&`, `||` and `!` trees whose operands may be impure calls
    /// (alone or compared with local scalars).
    fn cond(&self, e: &Expr) -> R {
        match e {
            Expr::Bin(op, l, r) if op.is_logic() => {
                self.cond(l)?;
                self.cond(r)
            }
            Expr::Not(x) => self.cond(x),
            Expr::Call(c) => self.call(c, true),
            Expr::Bin(_, l, r) if matches!(**l, Expr::Call(_)) || matches!(**r, Expr::Call(_)) => {
                let (call, other) = if let Expr::Call(c) = &**l {
                    (c, r)
                } else if let Expr::Call(c) = &**r {
                    (c, l)
                } else {
                    unreachable!()
                };
                if call.pure_fn {
                    return self.pure_expr(e);
                }
                self.call(call, true)?;
                self.pure_expr(other)?;
                self.local_scalars_only(other)
            }
            _ => self.pure_expr(e),
        }
    }

    /// A call; `impure_ok` when its position sequences it.
    fn call(&self, c: &Call, impure_ok: bool) -> R {
        let f = self
            .funcs
            .get(&c.func)
            .ok_or_else(|| format!("call of `{}` before its definition", c.func))?;
        if f.pure_fn != c.pure_fn || f.ret != c.ret {
            return Err(format!("call of `{}` with a stale signature", c.func));
        }
        if !c.pure_fn && (!impure_ok || self.pure_ctx()) {
            return Err(format!("impure call of `{}` where order is open", c.func));
        }
        if f.params.len() != c.args.len() {
            return Err(format!("call of `{}` with the wrong arity", c.func));
        }
        if let Some((name, depth)) = &self.recursive {
            if *name == c.func {
                let i = f.params.iter().position(|p| p.name == *depth);
                let decreasing = i.and_then(|i| c.args.get(i)).is_some_and(|a| {
                    matches!(a, Arg::Value(Expr::Bin(BinOp::Sub, l, r))
                        if matches!(&**l, Expr::Var { name, .. } if name == depth)
                            && matches!(**r, Expr::Int(k) if k >= 1))
                });
                if !decreasing {
                    return Err(format!("`{name}` calls itself without `{depth} - c`"));
                }
            }
        }
        for (p, a) in f.params.iter().zip(&c.args) {
            match (a, &p.array) {
                (Arg::Value(e), None) => {
                    self.pure_expr(e)?;
                    self.stored(e, p.ty, p.ty == Ty::Float)?;
                }
                (Arg::Array(r), Some(ap)) => {
                    let v = self.var(&r.name)?;
                    if v.ty != p.ty || v.is_const {
                        return Err(format!("array argument `{}`: type or const", r.name));
                    }
                    if self.pure_ctx() && v.global {
                        return Err("pure function passes a global array".into());
                    }
                    let rest = self.array_ref(r)?;
                    if rest.is_empty() || rest[0] < ap.len || rest[1..] != ap.inner[..] {
                        return Err(format!(
                            "array argument `{}` ({rest:?}) does not fit {:?}",
                            r.name,
                            ap.shape()
                        ));
                    }
                }
                _ => return Err(format!("call of `{}`: argument kinds", c.func)),
            }
        }
        Ok(())
    }

    /// The remaining shape of a partially indexed array.
    fn array_ref(&self, r: &ArrayRef) -> Result<Vec<usize>, String> {
        let v = self.var(&r.name)?;
        if r.index.len() >= v.shape.len() {
            return Err(format!("`{}` is not an array here", r.name));
        }
        self.indices(&r.index, &v.shape)?;
        Ok(v.shape[r.index.len()..].to_vec())
    }

    /// An expression without impure calls, every part of it well defined.
    fn pure_expr(&self, e: &Expr) -> R {
        if max_float_bound(e) >= FLOAT_EXPR_LIMIT {
            return Err(format!(
                "float overflow possible in {}",
                crate::print::print_expr(e)
            ));
        }
        self.expr(e)
    }

    fn expr(&self, e: &Expr) -> R {
        match e {
            Expr::Int(_) => Ok(()),
            Expr::Float(v) => {
                if v.is_finite() {
                    Ok(())
                } else {
                    Err("non-finite literal".into())
                }
            }
            Expr::Var { name, ty } => {
                let v = self.var(name)?;
                if !v.shape.is_empty() || v.ty != *ty {
                    return Err(format!("`{name}` used as a scalar"));
                }
                if self.pure_ctx() && v.global && !v.is_const {
                    return Err(format!("pure function reads global `{name}`"));
                }
                Ok(())
            }
            Expr::Elem { name, ty, index } => {
                let v = self.var(name)?;
                if v.ty != *ty || index.len() != v.shape.len() {
                    return Err(format!("`{name}` indexed wrongly"));
                }
                if self.pure_ctx() && v.global && !v.is_const {
                    return Err(format!("pure function reads global `{name}`"));
                }
                self.indices(index, &v.shape)
            }
            Expr::Neg(x) | Expr::Not(x) => self.expr(x),
            Expr::Bin(_, l, r) => {
                self.expr(l)?;
                self.expr(r)
            }
            Expr::Div(l, d) | Expr::Rem(l, d) => {
                self.expr(l)?;
                let rem = matches!(e, Expr::Rem(..));
                if rem && l.ty() != Ty::Int {
                    return Err("% of a float".into());
                }
                match d {
                    Divisor::Int(k) if *k != 0 && *k != -1 => Ok(()),
                    Divisor::IntExpr { expr, k } if *k > 0 && expr.ty() == Ty::Int => {
                        self.expr(expr)
                    }
                    Divisor::Float(c) if !rem && c.is_finite() && c.abs() >= 0.25 => Ok(()),
                    Divisor::FloatSquare(x) if !rem && x.ty() == Ty::Float => self.expr(x),
                    _ => Err(format!("unsafe divisor in {}", crate::print::print_expr(e))),
                }
            }
            Expr::Call(c) => {
                if c.ret.is_none() {
                    return Err("void call used as a value".into());
                }
                self.call(c, false)
            }
            Expr::Input(_) => Err("input read outside a top-level initialiser of main".into()),
        }
    }

    fn indices(&self, index: &[Index], shape: &[usize]) -> R {
        for (i, &size) in index.iter().zip(shape) {
            match i {
                Index::Const(k) if *k < size => {}
                Index::Wrap { expr, size: s } if *s == size && expr.ty() == Ty::Int => {
                    self.expr(expr)?
                }
                Index::Loop { var, offset } => {
                    let l = self
                        .loops
                        .iter()
                        .find(|l| l.var == *var)
                        .ok_or_else(|| format!("index `{var}` outside its loop"))?;
                    let (lo, hi) = (l.min + *offset as i64, l.max + *offset as i64);
                    if lo < 0 || hi >= size as i64 {
                        return Err(format!("index `{var}` in [{lo}, {hi}] for size {size}"));
                    }
                }
                _ => return Err(format!("index {i:?} out of range for size {size}")),
            }
        }
        Ok(())
    }
}

/// The expressions of an initialiser list, depth first.
pub fn init_exprs(items: &[Init]) -> Vec<&Expr> {
    let mut out = Vec::new();
    for i in items {
        match i {
            Init::Expr(e) => out.push(e),
            Init::List(l) => out.extend(init_exprs(l)),
        }
    }
    out
}

/// Whether `e` names the variable `name` (as a scalar, an element or an array
/// argument).
pub fn mentions(e: &Expr, name: &str) -> bool {
    let mut found = false;
    walk(e, &mut |x| match x {
        Expr::Var { name: n, .. } | Expr::Elem { name: n, .. } => found |= n == name,
        Expr::Call(c) => {
            found |= c
                .args
                .iter()
                .any(|a| matches!(a, Arg::Array(r) if r.name == name))
        }
        _ => {}
    });
    found
}

/// Calls `f` on `e` and every subexpression (indices, divisors, arguments included).
pub fn walk(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    let index = |ix: &[Index], f: &mut dyn FnMut(&Expr)| {
        for i in ix {
            if let Index::Wrap { expr, .. } = i {
                walk(expr, f);
            }
        }
    };
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Var { .. } | Expr::Input(_) => {}
        Expr::Elem { index: ix, .. } => index(ix, f),
        Expr::Neg(x) | Expr::Not(x) => walk(x, f),
        Expr::Bin(_, l, r) => {
            walk(l, f);
            walk(r, f);
        }
        Expr::Div(l, d) | Expr::Rem(l, d) => {
            walk(l, f);
            match d {
                Divisor::IntExpr { expr, .. } | Divisor::FloatSquare(expr) => walk(expr, f),
                Divisor::Int(_) | Divisor::Float(_) => {}
            }
        }
        Expr::Call(c) => {
            for a in &c.args {
                match a {
                    Arg::Value(x) => walk(x, f),
                    Arg::Array(r) => index(&r.index, f),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn main_with(globals: Vec<Decl>, funcs: Vec<Func>, body: Vec<Stmt>) -> Program {
        let mut funcs = funcs;
        funcs.push(Func {
            name: "main".into(),
            ret: Some(Ty::Int),
            params: vec![],
            body,
            tail: Some(Expr::Int(0)),
            recursion: None,
            pure_fn: false,
        });
        Program {
            globals,
            funcs,
            input: String::new(),
        }
    }

    fn konst(name: &str, v: i32) -> Decl {
        Decl {
            name: name.into(),
            ty: Ty::Int,
            is_const: true,
            dims: vec![],
            init: Some(Init::Expr(Expr::Int(v))),
        }
    }

    fn array(name: &str, size: usize, expr: Expr) -> Decl {
        Decl {
            name: name.into(),
            ty: Ty::Int,
            is_const: false,
            dims: vec![Dim { size, expr }],
            init: None,
        }
    }

    #[test]
    fn dimensions_must_match_their_constants() {
        let n = Expr::bin(BinOp::Add, Expr::var("n", Ty::Int), Expr::Int(1));
        let ok = main_with(
            vec![konst("n", 3), array("a", 4, n.clone())],
            vec![],
            vec![],
        );
        assert_eq!(validate(&ok), Ok(()));
        // The reducer simplified `n` to 0: `a` has one element, not four.
        let bad = main_with(vec![konst("n", 0), array("a", 4, n)], vec![], vec![]);
        assert!(validate(&bad).unwrap_err().contains("dimension"));
    }

    fn float_local(name: &str, init: Expr) -> Stmt {
        Stmt::Decl(Decl {
            name: name.into(),
            ty: Ty::Float,
            is_const: false,
            dims: vec![],
            init: Some(Init::Expr(init)),
        })
    }

    #[test]
    fn a_local_may_hide_a_variable_of_an_enclosing_block_only() {
        let g = || konst("g", 2);
        let inner = |init: Expr| Stmt::Block(vec![float_local("g", init)]);
        // `{ float g = 1.5; }` hides the global `g`.
        let ok = main_with(vec![g()], vec![], vec![inner(Expr::Float(1.5))]);
        assert_eq!(validate(&ok), Ok(()));
        // The hiding ends with its block: the global is an int again after it.
        let after = Stmt::Decl(Decl {
            name: "k".into(),
            ty: Ty::Int,
            is_const: false,
            dims: vec![],
            init: Some(Init::Expr(Expr::var("g", Ty::Int))),
        });
        let ok = main_with(vec![g()], vec![], vec![inner(Expr::Float(1.5)), after]);
        assert_eq!(validate(&ok), Ok(()));
        // In C the new `g` is in scope in its own initialiser.
        let own = main_with(vec![g()], vec![], vec![inner(Expr::var("g", Ty::Int))]);
        assert!(validate(&own).unwrap_err().contains("own initialiser"));
        // Two declarations of one name in one block.
        let twice = main_with(
            vec![],
            vec![],
            vec![Stmt::Block(vec![
                float_local("x", Expr::Float(1.0)),
                float_local("x", Expr::Float(2.0)),
            ])],
        );
        assert!(validate(&twice).unwrap_err().contains("declared twice"));
    }

    #[test]
    fn a_loop_variable_is_never_hidden() {
        let hiding = Stmt::Loop {
            var: "i".into(),
            start: 0,
            end: 2,
            step: 1,
            cond: None,
            body: vec![float_local("i", Expr::Float(0.5))],
        };
        let p = main_with(vec![], vec![], vec![hiding]);
        assert!(validate(&p).unwrap_err().contains("hides a loop variable"));
    }

    fn loop_writing(offset: i32) -> Stmt {
        Stmt::Loop {
            var: "i".into(),
            start: 0,
            end: 4,
            step: 1,
            cond: None,
            body: vec![Stmt::Assign {
                target: LValue::Elem {
                    name: "a".into(),
                    ty: Ty::Int,
                    index: vec![Index::Loop {
                        var: "i".into(),
                        offset,
                    }],
                },
                value: Expr::Int(1),
            }],
        }
    }

    #[test]
    fn loop_indices_stay_in_range() {
        let a = || array("a", 5, Expr::Int(5));
        assert_eq!(
            validate(&main_with(vec![a()], vec![], vec![loop_writing(1)])),
            Ok(())
        );
        assert!(validate(&main_with(vec![a()], vec![], vec![loop_writing(2)])).is_err());
        assert!(validate(&main_with(vec![a()], vec![], vec![loop_writing(-1)])).is_err());
    }

    #[test]
    fn continue_must_step_its_own_loop() {
        let inner = |var: &str| Stmt::Loop {
            var: "j".into(),
            start: 0,
            end: 2,
            step: 1,
            cond: None,
            body: vec![Stmt::Continue {
                var: var.into(),
                step: 1,
            }],
        };
        let outer = |var: &str| Stmt::Loop {
            var: "i".into(),
            start: 0,
            end: 2,
            step: 1,
            cond: None,
            body: vec![inner(var)],
        };
        assert_eq!(
            validate(&main_with(vec![], vec![], vec![outer("j")])),
            Ok(())
        );
        // Skipping the inner loop's step would loop forever.
        assert!(validate(&main_with(vec![], vec![], vec![outer("i")])).is_err());
    }

    #[test]
    fn impure_calls_only_where_the_order_is_fixed() {
        let g = Decl {
            name: "g".into(),
            ty: Ty::Int,
            is_const: false,
            dims: vec![],
            init: None,
        };
        let bump = Func {
            name: "bump".into(),
            ret: Some(Ty::Int),
            params: vec![],
            body: vec![Stmt::Assign {
                target: LValue::Var {
                    name: "g".into(),
                    ty: Ty::Int,
                },
                value: Expr::Int(1),
            }],
            tail: Some(Expr::Int(2)),
            recursion: None,
            pure_fn: false,
        };
        let call = Expr::Call(Call {
            func: "bump".into(),
            args: vec![],
            pure_fn: false,
            ret: Some(Ty::Int),
        });
        let assign = |value| {
            vec![Stmt::Assign {
                target: LValue::Var {
                    name: "g".into(),
                    ty: Ty::Int,
                },
                value,
            }]
        };
        let prog = |body| main_with(vec![g.clone()], vec![bump.clone()], body);
        // `g = bump();` is sequenced; `g = g + bump();` is not.
        assert_eq!(validate(&prog(assign(call.clone()))), Ok(()));
        let sum = Expr::bin(BinOp::Add, Expr::var("g", Ty::Int), call.clone());
        assert!(validate(&prog(assign(sum))).is_err());
        // In a condition, `&&` orders the operands.
        let cond = Expr::bin(
            BinOp::And,
            Expr::var("g", Ty::Int),
            Expr::bin(BinOp::Gt, call.clone(), Expr::Int(1)),
        );
        let stmt = |cond| Stmt::If {
            cond,
            then: vec![],
            els: None,
        };
        assert_eq!(validate(&prog(vec![stmt(cond)])), Ok(()));
        // ... but not `bump() > g`: `g` may be read before or after the call.
        let racy = Expr::bin(BinOp::Gt, call, Expr::var("g", Ty::Int));
        assert!(validate(&prog(vec![stmt(racy)])).is_err());
    }

    /// `int f(int d, int x) { if (d <= 0 || d > 50) return x; ...; return TAIL; }`
    fn recursive(tail: Expr, base: Expr, body: Vec<Stmt>) -> Func {
        Func {
            name: "f".into(),
            ret: Some(Ty::Int),
            params: ["d", "x"]
                .map(|n| Param {
                    name: n.into(),
                    ty: Ty::Int,
                    array: None,
                })
                .to_vec(),
            body,
            tail: Some(tail),
            pure_fn: true,
            recursion: Some(Recursion {
                depth: "d".into(),
                limit: 50,
                base: Some(base),
            }),
        }
    }

    fn self_call(depth: Expr) -> Expr {
        Expr::Call(Call {
            func: "f".into(),
            args: vec![Arg::Value(depth), Arg::Value(Expr::var("x", Ty::Int))],
            pure_fn: true,
            ret: Some(Ty::Int),
        })
    }

    #[test]
    fn a_recursion_must_count_its_depth_down() {
        let d = || Expr::var("d", Ty::Int);
        let down = |k| self_call(Expr::bin(BinOp::Sub, d(), Expr::Int(k)));
        let x = || Expr::var("x", Ty::Int);
        let check = |f: Func| validate(&main_with(vec![], vec![f], vec![]));
        // return f(d - 1, x); and return d + f(d - 2, x);
        assert_eq!(check(recursive(down(1), x(), vec![])), Ok(()));
        let acc = Expr::bin(BinOp::Add, d(), down(2));
        assert_eq!(check(recursive(acc, x(), vec![])), Ok(()));
        // f(d, x) and f(d - 0, x) do not end; neither does f(d + 1, x).
        assert!(check(recursive(self_call(d()), x(), vec![])).is_err());
        assert!(check(recursive(down(0), x(), vec![])).is_err());
        let up = self_call(Expr::bin(BinOp::Add, d(), Expr::Int(1)));
        assert!(check(recursive(up, x(), vec![])).is_err());
        // A base case that recurses runs forever below zero.
        assert!(check(recursive(down(1), down(1), vec![])).is_err());
        // The depth is never assigned.
        let assign = Stmt::Assign {
            target: LValue::Var {
                name: "d".into(),
                ty: Ty::Int,
            },
            value: Expr::Int(3),
        };
        assert!(check(recursive(down(1), x(), vec![assign])).is_err());
        // Without a Recursion, a function cannot call itself.
        let mut plain = recursive(down(1), x(), vec![]);
        plain.recursion = None;
        assert!(check(plain).is_err());
    }
}
