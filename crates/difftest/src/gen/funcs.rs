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
        let mut params = self.params();
        // Now and then a function that calls itself, counting a depth down.
        let depth = self.chance(0.25).then(|| self.name("d"));
        if let Some(d) = &depth {
            params.insert(
                0,
                Param {
                    name: d.clone(),
                    ty: Ty::Int,
                    array: None,
                },
            );
        }
        for p in &params {
            self.declare(Sym {
                name: p.name.clone(),
                ty: p.ty,
                shape: p.array.as_ref().map(ArrayParam::shape).unwrap_or_default(),
                is_const: false,
                global: false,
                param_array: p.array.is_some(),
                loop_var: depth.as_ref() == Some(&p.name),
                value: None,
            });
        }
        // The base case sees the parameters only: it is printed first.
        let base = depth.as_ref().and_then(|_| ret.map(|ty| self.expr(ty, 1)));
        let mut body = self.block_body(0);
        let mut sym = FuncSym {
            name: name.clone(),
            params: params.clone(),
            ret,
            pure_fn,
            cost: self.cost + 1,
            depth: None,
        };
        let (tail, recursion) = match depth {
            Some(d) => {
                let (tail, r) = self.recursive_end(&mut sym, d, base, &mut body);
                (tail, Some(r))
            }
            None => (ret.map(|ty| self.tail_value(ty)), None),
        };
        self.funcs.push(sym);
        Func {
            name,
            ret,
            params,
            body,
            tail,
            pure_fn,
            recursion,
        }
    }

    /// The end of a recursive function: its call to itself with `depth - c` (the
    /// final return, alone or after `x +` / `x *`, or a void function's last
    /// statement), and its [`Recursion`] with `base`. Sets `sym`'s limit and cost (a call costs up to
    /// `limit` levels of the body), keeping the cost within the budget.
    fn recursive_end(
        &mut self,
        sym: &mut FuncSym,
        depth: String,
        base: Option<Expr>,
        body: &mut Vec<Stmt>,
    ) -> (Option<Expr>, Recursion) {
        // The parameters themselves when no other arguments fit (and the arrays
        // mostly: a recursion over one array).
        let generated = self.args(sym);
        let mut args: Vec<Arg> = sym
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| match (&generated, &p.array) {
                (Some(g), None) => g[i].clone(),
                (Some(g), Some(_)) if self.chance(0.3) => g[i].clone(),
                (_, Some(_)) => Arg::Array(ArrayRef {
                    name: p.name.clone(),
                    index: vec![],
                }),
                (None, None) => Arg::Value(Expr::var(&p.name, p.ty)),
            })
            .collect();
        let at = sym.params.iter().position(|p| p.name == depth);
        let step = if self.chance(0.85) { 1 } else { 2 };
        if let Some(a) = at.and_then(|i| args.get_mut(i)) {
            *a = Arg::Value(Expr::bin(
                BinOp::Sub,
                Expr::var(&depth, Ty::Int),
                Expr::Int(step),
            ));
        }
        let level = self.cost + 2;
        // Mostly a few levels; now and then thousands (tail calls must not grow
        // the stack).
        let want = if self.chance(0.3) {
            self.between(100, 3000)
        } else {
            self.between(2, 40)
        };
        let limit = want.min((self.budget / level.max(1)) as i64).max(1) as i32;
        let call = Call {
            func: sym.name.clone(),
            args,
            pure_fn: sym.pure_fn,
            ret: sym.ret,
        };
        let tail = match sym.ret {
            None => {
                body.push(Stmt::Call(call));
                None
            }
            Some(ty) => Some(match self.accumulator(ty, &depth) {
                Some((op, x)) if self.chance(0.5) => Expr::bin(op, x, Expr::Call(call)),
                _ => Expr::Call(call),
            }),
        };
        sym.cost = (limit as u64).saturating_mul(level);
        sym.depth = Some((depth.clone(), limit));
        (tail, Recursion { depth, limit, base })
    }

    /// What a recursive function of type `ty` adds to (or multiplies by) its
    /// recursive call's result: a local scalar (the depth, often), so the return
    /// stays well-ordered when the function has side effects.
    fn accumulator(&mut self, ty: Ty, depth: &str) -> Option<(BinOp, Expr)> {
        let scalars: Vec<Sym> = self.scopes[0]
            .iter()
            .filter(|s| s.shape.is_empty() && s.ty == ty && !s.global)
            .cloned()
            .collect();
        let x = if ty == Ty::Int && self.chance(0.5) {
            Expr::var(depth, Ty::Int)
        } else if scalars.is_empty() {
            return None;
        } else {
            let s = self.pick(&scalars).clone();
            Expr::var(&s.name, s.ty)
        };
        let op = if ty == Ty::Int && self.chance(0.3) {
            BinOp::Mul
        } else {
            BinOp::Add
        };
        Some((op, x))
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
            recursion: None,
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
