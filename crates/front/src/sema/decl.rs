//! Declarations: globals, locals (with initialisers) and function definitions.

use std::rc::Rc;

use super::fold;
use super::init::{normalise, scalar_from_list};
use super::scope::Symbol;
use super::{ConstInfo, Reported, Sema, MAX_ARRAY_ELEMS, R};
use crate::ast;
use crate::tast::*;

/// The tast element type of an AST basic type.
fn scalar(t: ast::BType) -> ScalarTy {
    match t {
        ast::BType::Int => ScalarTy::Int,
        ast::BType::Float => ScalarTy::Float,
    }
}

fn zero(t: ScalarTy) -> ConstVal {
    match t {
        ScalarTy::Int => ConstVal::Int(0),
        ScalarTy::Float => ConstVal::Float(0.0),
    }
}

/// An initialiser as placed elements: `None` for a scalar without initialiser.
enum Placed<'a> {
    /// No initialiser.
    None,
    /// A scalar initialiser (`None` for `= {}`, which is zero).
    Scalar(Option<&'a ast::Expr>),
    /// An array initialiser, normalised.
    Array(Vec<(u32, &'a ast::Expr)>),
}

impl<'a> Sema<'a> {
    /// Evaluates the dimensions of a declarator. Errors are reported and the failed
    /// dimensions replaced by 1, so that later uses of the name do not cascade.
    fn dims(&mut self, def: &'a ast::VarDef) -> Vec<u32> {
        let mut dims: Vec<u32> = def
            .dims
            .iter()
            .map(|d| self.const_dim(d).unwrap_or(1))
            .collect();
        let total = dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)));
        if total.is_none_or(|t| t > MAX_ARRAY_ELEMS) {
            self.diags.error(
                format!("array `{}` is too large", self.text(&def.name)),
                def.name.span,
            );
            dims.iter_mut().for_each(|d| *d = 1);
        }
        dims
    }

    /// Places the items of an initialiser (brace elision) without checking them.
    fn place(&mut self, def: &'a ast::VarDef, dims: &[u32]) -> R<Placed<'a>> {
        let Some(init) = &def.init else {
            return Ok(Placed::None);
        };
        match (dims.is_empty(), init) {
            (true, ast::InitVal::Expr(e)) => Ok(Placed::Scalar(Some(e))),
            (true, ast::InitVal::List(items, _)) => {
                Ok(Placed::Scalar(scalar_from_list(items, self.diags)))
            }
            (false, ast::InitVal::Expr(e)) => self.err(
                format!(
                    "array `{}` must be initialised with a brace-enclosed list",
                    self.text(&def.name)
                ),
                e.span,
            ),
            (false, ast::InitVal::List(items, _)) => {
                Ok(Placed::Array(normalise(items, dims, self.diags)))
            }
        }
    }

    /// Checks one initialiser value, converted to `ty`; when `need_const` is
    /// `Some((kind, name))`, it must fold to a literal (the message names "kind `name`").
    fn init_value(
        &mut self,
        e: &'a ast::Expr,
        ty: ScalarTy,
        need_const: Option<(&str, &str)>,
    ) -> R<Expr> {
        self.const_ctx += u32::from(need_const.is_some());
        let v = self.value_as(e, ty);
        self.const_ctx -= u32::from(need_const.is_some());
        let v = v?;
        if let Some((kind, name)) = need_const {
            if fold::as_const(&v).is_none() {
                return self.err(
                    format!("initialiser of {kind} `{name}` is not a compile-time constant"),
                    e.span,
                );
            }
        }
        Ok(v)
    }

    /// Checks the placed initialiser elements, in order.
    fn init_values(
        &mut self,
        placed: Vec<(u32, &'a ast::Expr)>,
        ty: ScalarTy,
        need_const: Option<(&str, &str)>,
    ) -> R<Vec<(u32, Expr)>> {
        let mut out = Vec::with_capacity(placed.len());
        let mut ok = Ok(());
        for (i, e) in placed {
            match self.init_value(e, ty, need_const) {
                Ok(v) => out.push((i, v)),
                Err(r) => ok = Err(r),
            }
        }
        ok.map(|()| out)
    }

    /// A global declaration: each declarator becomes a [`GlobalVar`] with a constant
    /// initial value.
    pub fn global_decl(&mut self, d: &'a ast::Decl) {
        let ty = scalar(d.ty);
        for def in &d.defs {
            let dims = self.dims(def);
            let name = self.text(&def.name);
            let redefined = self.check_redefinition("", name, def.name.span);
            let id = GlobalId(self.globals.len() as u32);
            let zero_init = if dims.is_empty() {
                GlobalInit::Scalar(zero(ty))
            } else {
                GlobalInit::Array(Vec::new())
            };
            self.globals.push(GlobalVar {
                name: name.to_string(),
                ty,
                dims: dims.clone(),
                is_const: d.is_const,
                init: zero_init,
                span: def.name.span,
            });
            self.global_consts.push(None);
            if !redefined {
                self.scopes.insert(name, Symbol::Global(id));
            }
            let what = (if d.is_const { "constant" } else { "global" }, name);
            let Ok(placed) = self.place(def, &dims) else {
                continue;
            };
            let init = match placed {
                Placed::None => continue,
                Placed::Scalar(None) => GlobalInit::Scalar(zero(ty)),
                Placed::Scalar(Some(e)) => match self.init_value(e, ty, Some(what)) {
                    Ok(v) => GlobalInit::Scalar(fold::as_const(&v).unwrap_or(zero(ty))),
                    Err(Reported) => continue,
                },
                Placed::Array(p) => match self.init_values(p, ty, Some(what)) {
                    Ok(vals) => GlobalInit::Array(
                        vals.iter()
                            .filter_map(|(i, v)| Some((*i, fold::as_const(v)?)))
                            .filter(|(_, c)| !c.is_zero_bits())
                            .collect(),
                    ),
                    Err(Reported) => continue,
                },
            };
            if d.is_const {
                self.global_consts[id.index()] = Some(match &init {
                    GlobalInit::Scalar(v) => ConstInfo::Scalar(*v),
                    GlobalInit::Array(a) => ConstInfo::Array(Rc::new(a.clone())),
                });
            }
            self.globals[id.index()].init = init;
        }
    }

    /// A local declaration: one [`Stmt::Decl`] per declarator.
    pub fn local_decl(&mut self, d: &'a ast::Decl, out: &mut Vec<Stmt>) {
        let ty = scalar(d.ty);
        for def in &d.defs {
            let dims = self.dims(def);
            let name = self.text(&def.name);
            let redefined = self.check_redefinition("", name, def.name.span);
            let id = LocalId(self.locals.len() as u32);
            self.locals.push(LocalVar {
                name: name.to_string(),
                ty,
                shape: if dims.is_empty() {
                    Shape::Scalar
                } else {
                    Shape::Array(dims.clone())
                },
                is_const: d.is_const,
                is_param: false,
                span: def.name.span,
            });
            self.local_consts.push(None);
            self.used.push(false);
            if !redefined {
                self.scopes.insert(name, Symbol::Local(id));
            }
            let need_const = d.is_const.then_some(("constant", name));
            let Ok(placed) = self.place(def, &dims) else {
                continue;
            };
            let init = match placed {
                Placed::None => Init::None,
                Placed::Scalar(None) => Init::Scalar(fold::lit(zero(ty), def.name.span)),
                Placed::Scalar(Some(e)) => match self.init_value(e, ty, need_const) {
                    Ok(v) => Init::Scalar(v),
                    Err(Reported) => continue,
                },
                Placed::Array(p) => match self.init_values(p, ty, need_const) {
                    Ok(vals) => Init::Array(vals),
                    Err(Reported) => continue,
                },
            };
            if d.is_const {
                self.local_consts[id.index()] = match &init {
                    Init::Scalar(v) => fold::as_const(v).map(ConstInfo::Scalar),
                    Init::Array(a) => Some(ConstInfo::Array(Rc::new(
                        a.iter()
                            .filter_map(|(i, v)| Some((*i, fold::as_const(v)?)))
                            .collect(),
                    ))),
                    Init::None => None,
                };
            }
            out.push(Stmt::Decl { local: id, init });
        }
    }

    /// A function definition.
    pub fn func_def(&mut self, f: &'a ast::FuncDef) {
        let ret = match f.ret {
            ast::FuncType::Int => RetTy::Int,
            ast::FuncType::Float => RetTy::Float,
            ast::FuncType::Void => RetTy::Void,
        };
        // Parameter shapes (dimensions are constants over globals).
        let mut shapes = Vec::with_capacity(f.params.len());
        for p in &f.params {
            let shape = match &p.dims {
                None => Shape::Scalar,
                Some(inner) => {
                    let mut dims = Vec::with_capacity(inner.len());
                    for d in inner {
                        dims.push(self.const_dim(d).unwrap_or(1));
                    }
                    Shape::Pointer(dims)
                }
            };
            shapes.push(shape);
        }
        let param_tys: Vec<Type> = f
            .params
            .iter()
            .zip(&shapes)
            .map(|(p, s)| match s {
                Shape::Pointer(d) => Type::Ptr {
                    elem: scalar(p.ty),
                    dims: d.clone(),
                },
                _ => scalar(p.ty).into(),
            })
            .collect();
        let name = self.text(&f.name);
        let id = FuncId(self.funcs.len() as u32);
        if !self.check_redefinition("", name, f.name.span) {
            self.scopes.insert(name, Symbol::Func(id));
        }
        let src = self.src;
        self.param_spans.push(
            f.params
                .iter()
                .map(|p| (p.span, p.name.text(src)))
                .collect(),
        );
        self.funcs.push(Function {
            name: name.to_string(),
            ret,
            param_tys,
            variadic: false,
            params: Vec::new(),
            locals: Vec::new(),
            body: None,
            is_runtime: false,
            span: f.name.span,
        });

        let errors_before = self.diags.len();
        self.locals = Vec::new();
        self.local_consts = Vec::new();
        self.used = Vec::new();
        self.ret = ret;
        self.loops = 0;
        self.scopes.push();
        let mut params = Vec::with_capacity(f.params.len());
        for (p, shape) in f.params.iter().zip(shapes) {
            let pid = LocalId(self.locals.len() as u32);
            self.locals.push(LocalVar {
                name: self.text(&p.name).to_string(),
                ty: scalar(p.ty),
                shape,
                is_const: false,
                is_param: true,
                span: p.name.span,
            });
            self.local_consts.push(None);
            self.used.push(false);
            if !self.check_redefinition("parameter ", self.text(&p.name), p.name.span) {
                self.scopes.insert(self.text(&p.name), Symbol::Local(pid));
            }
            params.push(pid);
        }
        self.func_name = name;
        let body = self.block_items(&f.body.items);
        self.scopes.pop();
        // After an error, the body is incomplete: its flow and uses would mislead.
        if self.diags.len() == errors_before {
            self.function_end_warnings(f, &body);
        }
        let func = &mut self.funcs[id.index()];
        func.params = params;
        func.locals = std::mem::take(&mut self.locals);
        func.body = Some(body);
        self.local_consts = Vec::new();
    }
}
