//! Expression checking: name resolution, typing, implicit conversions and folding.

use super::fold;
use super::scope::Symbol;
use super::{type_name, warn, ConstInfo, Reported, Sema, VarInfo, R};
use crate::ast;
use crate::span::Span;
use crate::tast::*;

impl<'a> Sema<'a> {
    /// Checks an expression of any type (scalar, `Ptr` for arrays, `Str`, `Void`).
    pub fn expr(&mut self, e: &'a ast::Expr) -> R<Expr> {
        let span = e.span;
        match &e.kind {
            ast::ExprKind::IntLit(v) => {
                self.check_int_literal(span, false);
                Ok(fold::int_lit(*v, span))
            }
            ast::ExprKind::FloatLit(v) => Ok(fold::float_lit(*v, span)),
            ast::ExprKind::StrLit(bytes) => Ok(Expr {
                kind: ExprKind::StrLit(bytes.clone()),
                ty: Type::Str,
                span,
            }),
            ast::ExprKind::LVal(lv) => self.lval_expr(lv),
            ast::ExprKind::Call { name, args } => self.call(name, args, span),
            ast::ExprKind::Unary(ast::UnOp::Neg, operand)
                if matches!(operand.kind, ast::ExprKind::IntLit(_)) =>
            {
                // `-2147483648` is INT_MIN, not an overflow.
                self.check_int_literal(operand.span, true);
                let v = self.expr_unchecked_literal(operand);
                Ok(fold::unary(UnOp::Neg, v, span))
            }
            ast::ExprKind::Unary(op, operand) => {
                let v = self.value(operand)?;
                Ok(match op {
                    ast::UnOp::Plus => Expr { span, ..v },
                    ast::UnOp::Neg => fold::unary(UnOp::Neg, v, span),
                    ast::UnOp::Not => fold::unary(UnOp::Not, v, span),
                })
            }
            ast::ExprKind::Binary(..) => self.binary_chain(e),
        }
    }

    /// An integer literal's typed form, without the overflow check.
    fn expr_unchecked_literal(&self, e: &ast::Expr) -> Expr {
        match e.kind {
            ast::ExprKind::IntLit(v) => fold::int_lit(v, e.span),
            _ => fold::int_lit(0, e.span),
        }
    }

    /// Checks an expression that must be an `int` or `float` value.
    pub fn value(&mut self, e: &'a ast::Expr) -> R<Expr> {
        let v = self.expr(e)?;
        self.checked_value(v, e.span)
    }

    /// Checks a scalar expression and converts it to `ty`.
    pub fn value_as(&mut self, e: &'a ast::Expr, ty: ScalarTy) -> R<Expr> {
        Ok(fold::convert(self.value(e)?, ty))
    }

    /// Checks an array subscript (must be int).
    fn subscript(&mut self, e: &'a ast::Expr) -> R<Expr> {
        let v = self.value(e)?;
        if v.ty != Type::Int {
            return self.err("array subscript is not an integer", e.span);
        }
        Ok(v)
    }

    /// Evaluates a constant int expression (array dimensions).
    pub fn const_dim(&mut self, e: &'a ast::Expr) -> R<u32> {
        self.const_ctx += 1;
        let v = self.value(e);
        self.const_ctx -= 1;
        let v = v?;
        match v.kind {
            ExprKind::IntLit(x) if x >= 0 => Ok(x as u32),
            ExprKind::IntLit(x) => self.err(format!("array dimension is negative ({x})"), e.span),
            ExprKind::FloatLit(_) => self.err("array dimension must be an integer", e.span),
            _ => self.err("array dimension is not a compile-time constant", e.span),
        }
    }

    /// Resolves a name used as a variable.
    pub fn resolve_var(&mut self, name: &ast::Ident) -> R<VarInfo> {
        match self.scopes.lookup(self.text(name)) {
            None => self.err(
                format!("use of undeclared identifier `{}`", self.text(name)),
                name.span,
            ),
            Some(sym) => match self.var_info(sym) {
                Some(info) => {
                    if let Symbol::Local(id) = sym {
                        if let Some(u) = self.used.get_mut(id.index()) {
                            *u = true;
                        }
                    }
                    Ok(info)
                }
                None => self.err(
                    format!("`{}` is a function, not a variable", self.text(name)),
                    name.span,
                ),
            },
        }
    }

    /// Checks the subscripts of `lv` against the variable's rank.
    pub fn lval_indices(&mut self, info: &VarInfo, lv: &'a ast::LVal) -> R<Vec<Expr>> {
        let rank = info.shape.rank();
        if lv.indices.len() > rank {
            let sp = lv.indices[rank].span;
            return if rank == 0 {
                self.err(
                    format!(
                        "subscripted value `{}` is not an array",
                        self.text(&lv.name)
                    ),
                    sp,
                )
            } else {
                self.err(
                    format!(
                        "too many subscripts for `{}` (it has {rank} dimension{})",
                        self.text(&lv.name),
                        if rank == 1 { "" } else { "s" }
                    ),
                    sp,
                )
            };
        }
        let mut out = Vec::with_capacity(lv.indices.len());
        let mut failed = false;
        for ix in &lv.indices {
            match self.subscript(ix) {
                Ok(e) => out.push(e),
                Err(Reported) => failed = true,
            }
        }
        if failed {
            Err(Reported)
        } else {
            Ok(out)
        }
    }

    /// A variable reference as an rvalue: a scalar's value, an element's value, or an
    /// array (partially indexed or not) as a pointer. Constants fold to literals.
    fn lval_expr(&mut self, lv: &'a ast::LVal) -> R<Expr> {
        let info = self.resolve_var(&lv.name)?;
        let indices = self.lval_indices(&info, lv)?;
        let span = lv.span;
        let rank = info.shape.rank();
        if indices.len() == rank {
            if info.is_const {
                if let Some(v) = self.fold_const_ref(&info, &indices) {
                    return Ok(fold::lit(v, span));
                }
            }
            let kind = if rank == 0 {
                ExprKind::Var(info.var)
            } else {
                ExprKind::Index {
                    base: info.var,
                    indices,
                }
            };
            return Ok(Expr {
                kind,
                ty: info.ty.into(),
                span,
            });
        }
        let k = indices.len();
        let dims = match &info.shape {
            Shape::Array(d) => d[k + 1..].to_vec(),
            Shape::Pointer(inner) => inner[k..].to_vec(),
            Shape::Scalar => Vec::new(),
        };
        let ty = Type::Ptr {
            elem: info.ty,
            dims,
        };
        let kind = if k == 0 {
            ExprKind::Var(info.var)
        } else {
            ExprKind::Index {
                base: info.var,
                indices,
            }
        };
        Ok(Expr { kind, ty, span })
    }

    /// The value of a fully indexed reference to a `const`, when all subscripts are
    /// literals in bounds.
    fn fold_const_ref(&self, info: &VarInfo, indices: &[Expr]) -> Option<ConstVal> {
        match self.const_info(info.var)? {
            ConstInfo::Scalar(v) => Some(*v),
            ConstInfo::Array(elems) => {
                let Shape::Array(dims) = &info.shape else {
                    return None;
                };
                let mut flat: u64 = 0;
                for (ix, &d) in indices.iter().zip(dims) {
                    let ExprKind::IntLit(i) = ix.kind else {
                        return None;
                    };
                    if i < 0 || i as u32 >= d {
                        return None;
                    }
                    flat = flat * u64::from(d) + i as u64;
                }
                let zero = match info.ty {
                    ScalarTy::Int => ConstVal::Int(0),
                    ScalarTy::Float => ConstVal::Float(0.0),
                };
                Some(
                    match elems.binary_search_by_key(&flat, |p| u64::from(p.0)) {
                        Ok(i) => elems[i].1,
                        Err(_) => zero,
                    },
                )
            }
        }
    }

    /// Checks a binary expression. The left spine (`((a + b) - c) * d`: long in
    /// generated code) is walked iteratively, so that stack depth only grows with
    /// right operands and parentheses.
    fn binary_chain(&mut self, top: &'a ast::Expr) -> R<Expr> {
        // Each binary node of the spine: operator, operands and the node itself.
        type Node<'e> = (ast::BinOp, &'e ast::Expr, &'e ast::Expr, &'e ast::Expr);
        let mut spine: Vec<Node<'a>> = Vec::new();
        let mut leaf = top;
        while let ast::ExprKind::Binary(op, l, r) = &leaf.kind {
            spine.push((*op, l, r, leaf));
            leaf = l;
        }
        let mut acc = self.value(leaf);
        for &(op, l, r, node) in spine.iter().rev() {
            let rv = self.value(r);
            acc = match (acc, rv) {
                (Ok(lv), Ok(rv)) => {
                    let literals = fold::as_const(&lv).is_some() && fold::as_const(&rv).is_some();
                    let v = self.binary(op, lv, rv, node.span);
                    // One warning per chain of comparisons (`1 < 8 != 0`): the innermost.
                    let nested = warn::is_comparison(l) || warn::is_comparison(r);
                    if literals
                        && warn::is_comparison(node)
                        && !nested
                        && !warn::mentions_name(node)
                    {
                        if let Ok(ExprKind::IntLit(x)) = v.as_ref().map(|v| &v.kind) {
                            let truth = if *x != 0 { "true" } else { "false" };
                            self.warn(
                                "tautological-compare",
                                format!("comparison of constants is always {truth}"),
                                node.span,
                            );
                        }
                    }
                    v
                }
                _ => Err(Reported),
            };
        }
        acc
    }

    /// Combines two checked operands with a binary operator.
    fn binary(&mut self, op: ast::BinOp, lv: Expr, rv: Expr, span: Span) -> R<Expr> {
        let op = match op {
            ast::BinOp::And => return Ok(fold::logic(true, lv, rv, span)),
            ast::BinOp::Or => return Ok(fold::logic(false, lv, rv, span)),
            ast::BinOp::Add => BinOp::Add,
            ast::BinOp::Sub => BinOp::Sub,
            ast::BinOp::Mul => BinOp::Mul,
            ast::BinOp::Div => BinOp::Div,
            ast::BinOp::Rem => BinOp::Rem,
            ast::BinOp::Lt => BinOp::Lt,
            ast::BinOp::Le => BinOp::Le,
            ast::BinOp::Gt => BinOp::Gt,
            ast::BinOp::Ge => BinOp::Ge,
            ast::BinOp::Eq => BinOp::Eq,
            ast::BinOp::Ne => BinOp::Ne,
        };
        let float = lv.ty == Type::Float || rv.ty == Type::Float;
        if op == BinOp::Rem && float {
            return self.err(
                format!(
                    "invalid operands to `%` (`{}` and `{}`)",
                    type_name(&lv.ty),
                    type_name(&rv.ty)
                ),
                span,
            );
        }
        if matches!(op, BinOp::Div | BinOp::Rem) && !float && matches!(rv.kind, ExprKind::IntLit(0))
        {
            if self.const_ctx > 0 {
                return self.err("division by zero in a constant expression", span);
            }
            self.warn("div-by-zero", "division by zero", span);
        }
        if let (ExprKind::IntLit(a), ExprKind::IntLit(b)) = (&lv.kind, &rv.kind) {
            let exact = match op {
                BinOp::Add => a.checked_add(*b),
                BinOp::Sub => a.checked_sub(*b),
                BinOp::Mul => a.checked_mul(*b),
                _ => Some(0),
            };
            if exact.is_none() {
                let wrapped = fold::eval_binary(op, ConstVal::Int(*a), ConstVal::Int(*b));
                if let Some(ConstVal::Int(w)) = wrapped {
                    self.warn(
                        "overflow",
                        format!(
                            "integer overflow in a constant expression; the result wraps to {w}"
                        ),
                        span,
                    );
                }
            }
        }
        let ty = if float {
            ScalarTy::Float
        } else {
            ScalarTy::Int
        };
        Ok(fold::binary(
            op,
            fold::convert(lv, ty),
            fold::convert(rv, ty),
            span,
        ))
    }

    /// A checked expression that must be an `int` or `float` value (see [`value`]).
    fn checked_value(&mut self, v: Expr, span: Span) -> R<Expr> {
        match v.ty {
            Type::Int | Type::Float => Ok(v),
            Type::Void => self.err("void value not ignored as it ought to be", span),
            Type::Str => self.err(
                "a string literal can only be the first argument of `putf`",
                span,
            ),
            Type::Ptr { .. } => self.err(
                format!(
                    "expected an `int` or `float` value, found array `{}`",
                    type_name(&v.ty)
                ),
                span,
            ),
        }
    }

    /// Reports an error about argument `i` of a call to `func`, with a note at the
    /// parameter it is passed to.
    fn arg_error<T>(&mut self, msg: String, span: Span, func: FuncId, i: usize) -> R<T> {
        self.diags.error(msg, span);
        self.param_note(func, i);
        Err(Reported)
    }

    /// Attaches "parameter `p` is declared here" to the last diagnostic (user
    /// functions only: the runtime library has no source).
    fn param_note(&mut self, func: FuncId, i: usize) {
        let param = self.param_spans.get(func.index()).and_then(|p| p.get(i));
        if let Some(&(span, name)) = param {
            self.diags
                .note(format!("parameter `{name}` is declared here"), span);
        }
    }

    /// Checks a call `name(args)`.
    fn call(&mut self, name: &'a ast::Ident, args: &'a [ast::Expr], span: Span) -> R<Expr> {
        let id = match self.scopes.lookup(self.text(name)) {
            Some(Symbol::Func(id)) => id,
            Some(sym @ (Symbol::StartTime | Symbol::StopTime)) => {
                if !args.is_empty() {
                    return self.err(
                        format!("`{}` takes no arguments", self.text(name)),
                        args[0].span,
                    );
                }
                let target = if sym == Symbol::StartTime {
                    "_sysy_starttime"
                } else {
                    "_sysy_stoptime"
                };
                let id = RUNTIME_FUNCS.iter().position(|&n| n == target).unwrap_or(0);
                let line = self.line_of(name.span.start);
                return Ok(Expr {
                    kind: ExprKind::Call {
                        func: FuncId(id as u32),
                        args: vec![fold::int_lit(line as i32, name.span)],
                    },
                    ty: Type::Void,
                    span,
                });
            }
            other => {
                for a in args {
                    let _ = self.expr(a);
                }
                let msg = if other.is_some() {
                    format!("called object `{}` is not a function", self.text(name))
                } else {
                    format!("call to undeclared function `{}`", self.text(name))
                };
                return self.err(msg, name.span);
            }
        };
        let f = &self.funcs[id.index()];
        let params = f.param_tys.clone();
        let (variadic, ret) = (f.variadic, f.ret);
        let mut failed = false;
        if args.len() < params.len() || (args.len() > params.len() && !variadic) {
            let which = if args.len() < params.len() {
                "few"
            } else {
                "many"
            };
            self.diags.error(
                format!(
                    "too {which} arguments to function `{}` (expected {}, found {})",
                    self.text(name),
                    params.len(),
                    args.len()
                ),
                span,
            );
            if let Some(at) = self.definition_span(Symbol::Func(id)) {
                self.diags
                    .note(format!("`{}` is declared here", self.text(name)), at);
            }
            failed = true;
        }
        let fname = self.text(name);
        let mut out = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let checked = match params.get(i) {
                Some(pt @ (Type::Int | Type::Float)) => match self.expr(a) {
                    Ok(e) if matches!(e.ty, Type::Ptr { .. }) => {
                        let msg = format!(
                            "incompatible type for argument {} of `{fname}`: expected `{}`, found `{}`",
                            i + 1,
                            type_name(pt),
                            type_name(&e.ty)
                        );
                        self.arg_error(msg, a.span, id, i)
                    }
                    Ok(e) => {
                        let ty = if *pt == Type::Int {
                            ScalarTy::Int
                        } else {
                            ScalarTy::Float
                        };
                        self.checked_value(e, a.span).map(|v| fold::convert(v, ty))
                    }
                    Err(r) => Err(r),
                },
                Some(Type::Str) => match &a.kind {
                    ast::ExprKind::StrLit(_) => self.expr(a),
                    _ => {
                        let _ = self.expr(a);
                        self.err(
                            format!(
                                "the first argument of `{}` must be a string literal",
                                self.text(name)
                            ),
                            a.span,
                        )
                    }
                },
                Some(pt @ Type::Ptr { elem, dims }) => match self.expr(a) {
                    Ok(e) if e.ty == *pt => Ok(e),
                    // Any array of the right element type may be passed where `T[]` is
                    // expected (flattened, as C compilers accept with a warning).
                    Ok(e)
                        if dims.is_empty()
                            && matches!(&e.ty, Type::Ptr { elem: el, .. } if el == elem) =>
                    {
                        self.warn(
                            "incompatible-pointer-types",
                            format!(
                                "argument {} of `{fname}` is `{}`, passed flattened as `{}`",
                                i + 1,
                                type_name(&e.ty),
                                type_name(pt)
                            ),
                            a.span,
                        );
                        self.param_note(id, i);
                        Ok(Expr {
                            ty: pt.clone(),
                            ..e
                        })
                    }
                    Ok(e) => {
                        let msg = format!(
                            "incompatible type for argument {} of `{fname}`: expected `{}`, found `{}`",
                            i + 1,
                            type_name(pt),
                            type_name(&e.ty)
                        );
                        self.arg_error(msg, a.span, id, i)
                    }
                    Err(r) => Err(r),
                },
                Some(Type::Void) => self.expr(a),
                None if variadic => self.value(a),
                None => self.expr(a),
            };
            match checked {
                Ok(e) => out.push(e),
                Err(Reported) => failed = true,
            }
        }
        if failed {
            return Err(Reported);
        }
        Ok(Expr {
            kind: ExprKind::Call {
                func: id,
                args: out,
            },
            ty: ret.into(),
            span,
        })
    }
}
