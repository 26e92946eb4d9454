//! Functions: helpers with their parameters, `main` with its input and checksum.

use super::{FuncSym, Gen, Sym};
use crate::ast::*;

impl Gen<'_> {
    pub(super) fn begin_function(&mut self, pure_fn: bool, ret: Option<Ty>, budget: u64) {
        self.scopes = vec![Vec::new()];
        self.loops.clear();
        self.pure_fn = pure_fn;
        self.ret = ret;
        self.mult = 1;
        self.cost = 0;
        self.budget = budget;
        let max = self.cfg.max_stmts as i64;
        self.stmts_left = self.between(max / 3, max) as usize;
    }

    /// A helper function `f*`.
    pub(super) fn helper(&mut self) -> Func {
        let pure_fn = self.chance(0.35);
        let ret = match self.weighted(&[5, 3, 2]) {
            0 => Some(Ty::Int),
            1 => Some(Ty::Float),
            _ if pure_fn => Some(Ty::Int),
            _ => None,
        };
        let name = self.name("f");
        let budget = (self.cfg.max_cost / 20).max(50);
        self.begin_function(pure_fn, ret, budget);
        self.in_main = false;
        let params = self.params();
        for p in &params {
            self.declare(Sym {
                name: p.name.clone(),
                ty: p.ty,
                shape: p.array.as_ref().map(ArrayParam::shape).unwrap_or_default(),
                is_const: false,
                global: false,
                param_array: p.array.is_some(),
                loop_var: false,
                value: None,
            });
        }
        let body = self.block_body(0);
        let tail = ret.map(|ty| self.tail_value(ty));
        self.funcs.push(FuncSym {
            name: name.clone(),
            params: params.clone(),
            ret,
            pure_fn,
            cost: self.cost + 1,
        });
        Func {
            name,
            ret,
            params,
            body,
            tail,
            pure_fn,
        }
    }

    /// Parameters: a few scalars and up to two arrays shaped like visible global
    /// arrays (so callers have something to pass).
    pub(super) fn params(&mut self) -> Vec<Param> {
        let mut out = Vec::new();
        // Now and then more than fit the argument registers (8 integer, 8 float).
        let n_scalars = if self.chance(0.15) {
            self.between(6, 20)
        } else {
            self.between(0, 4)
        };
        for _ in 0..n_scalars {
            let ty = if self.chance(0.65) {
                Ty::Int
            } else {
                Ty::Float
            };
            let name = self.name("p");
            out.push(Param {
                name,
                ty,
                array: None,
            });
        }
        let arrays: Vec<Sym> = self
            .globals
            .iter()
            .filter(|g| !g.shape.is_empty())
            .cloned()
            .collect();
        let n_arrays = if arrays.is_empty() {
            0
        } else {
            self.between(0, 2)
        };
        for _ in 0..n_arrays {
            let g = self.pick(&arrays).clone();
            // A suffix of the global's shape: `T a[][d2]` for `g[i]` and so on.
            let skip = self.between(0, g.shape.len() as i64 - 1) as usize;
            let shape = &g.shape[skip..];
            let len = self.between(1, shape[0] as i64) as usize;
            let name = self.name("p");
            let at = self.between(0, out.len() as i64) as usize;
            out.insert(
                at,
                Param {
                    name,
                    ty: g.ty,
                    array: Some(ArrayParam {
                        len,
                        inner: shape[1..].to_vec(),
                    }),
                },
            );
        }
        out
    }

    /// A call returning `ty` (impure ones too, in an impure function) for
    /// `return f(...);`.
    pub(super) fn tail_call(&mut self, ty: Ty) -> Option<crate::ast::Call> {
        if self.chance(0.5) {
            self.impure_call(Some(Some(ty)))
        } else {
            None
        }
        .or_else(|| self.pure_call(Some(ty)))
    }

    /// The function's final return value.
    pub(super) fn tail_value(&mut self, ty: Ty) -> Expr {
        // Sometimes `return f(...);`: a call in tail position.
        if !self.in_main && self.chance(0.35) {
            if let Some(c) = self.tail_call(ty) {
                return Expr::Call(c);
            }
        }
        // Fold in the scalars declared at the top level, so they all matter.
        let mut e = self.expr(ty, 2);
        let scalars: Vec<Sym> = self.scopes[0]
            .iter()
            .filter(|s| s.shape.is_empty())
            .cloned()
            .collect();
        for s in scalars.iter().take(6) {
            let v = Expr::var(&s.name, s.ty);
            let v = if ty == Ty::Int && s.ty == Ty::Float {
                // Compare rather than convert: no range concern.
                Expr::bin(BinOp::Lt, v, Expr::Float(0.5))
            } else {
                v
            };
            e = Expr::bin(BinOp::Add, e, v);
        }
        e
    }

    pub(super) fn main(&mut self) -> Func {
        self.begin_function(false, Some(Ty::Int), self.cfg.max_cost);
        self.in_main = true;
        let mut body = self.inputs();
        body.extend(self.live_locals());
        body.extend(self.block_body(0));
        body.extend(self.checksum());
        let tail = self.tail_value(Ty::Int);
        Func {
            name: "main".into(),
            ret: Some(Ty::Int),
            params: vec![],
            body,
            tail: Some(tail),
            pure_fn: false,
        }
    }

    /// [`GenConfig::live_locals`] scalars of `main`'s top level, ints and floats
    /// (floats often from ints: `e * 1.0`), which the checksum prints at the end.
    fn live_locals(&mut self) -> Vec<Stmt> {
        let mut out = Vec::new();
        for _ in 0..self.cfg.live_locals {
            let ty = if self.chance(0.5) { Ty::Int } else { Ty::Float };
            let init = match ty {
                Ty::Float if self.chance(0.5) => {
                    Expr::bin(BinOp::Mul, self.int_expr(2), Expr::Float(1.0))
                }
                _ => {
                    let t = self.any_ty_for(ty);
                    self.expr(t, 2)
                }
            };
            let name = self.name("l");
            self.declare(Self::local(&name, ty, vec![]));
            out.push(Stmt::Decl(Decl {
                name,
                ty,
                is_const: false,
                dims: vec![],
                init: Some(Init::Expr(init)),
            }));
        }
        out
    }

    /// `int v = getint();` / `float v = getfloat();` declarations reading the
    /// generated input: values the compiler cannot fold.
    pub(super) fn inputs(&mut self) -> Vec<Stmt> {
        let n = if self.chance(0.7) {
            self.between(1, 4)
        } else {
            0
        };
        let mut out = Vec::new();
        for _ in 0..n {
            let name = self.name("l");
            let ty = if self.chance(0.7) { Ty::Int } else { Ty::Float };
            let value = match ty {
                Ty::Int => self.int_literal().to_string(),
                Ty::Float => crate::print::input_float(self.store_float_literal()),
            };
            self.input.push_str(&value);
            self.input.push('\n');
            self.declare(Self::local(&name, ty, vec![]));
            out.push(Stmt::Decl(Decl {
                name,
                ty,
                is_const: false,
                dims: vec![],
                init: Some(Init::Expr(Expr::Input(ty))),
            }));
        }
        out
    }

    /// Prints of `main`'s top-level scalars and arrays and of every global variable.
    pub(super) fn checksum(&mut self) -> Vec<Stmt> {
        let mut out = Vec::new();
        let syms: Vec<Sym> = self.scopes[0]
            .iter()
            .chain(self.globals.iter().filter(|g| !g.is_const))
            .cloned()
            .collect();
        for s in syms {
            if s.loop_var {
                continue;
            }
            if s.shape.is_empty() {
                let e = Expr::var(&s.name, s.ty);
                out.push(Stmt::Print(match s.ty {
                    Ty::Int => Print::Int(e),
                    Ty::Float => Print::Float(e),
                }));
            } else {
                out.push(self.print_array(&s.name, s.ty, &s.shape, Vec::new()));
            }
        }
        out
    }

    /// `putarray` of every row of an array, by loops over the leading dimensions.
    pub(super) fn print_array(
        &mut self,
        name: &str,
        ty: Ty,
        shape: &[usize],
        index: Vec<Index>,
    ) -> Stmt {
        if shape.len() == 1 {
            return Stmt::Print(Print::Array {
                ty,
                n: shape[0],
                array: ArrayRef {
                    name: name.to_string(),
                    index,
                },
            });
        }
        let var = self.name("i");
        let mut inner = index;
        inner.push(Index::Loop {
            var: var.clone(),
            offset: 0,
        });
        let body = vec![self.print_array(name, ty, &shape[1..], inner)];
        Stmt::Loop {
            var,
            start: 0,
            end: shape[0] as i32,
            step: 1,
            cond: None,
            body,
        }
    }
}
