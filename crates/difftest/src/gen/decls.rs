//! Globals: constants, scalars and arrays, their dimensions and initialiser lists.

use super::{Gen, Sym};
use crate::ast::*;
use crate::bounds::FLOAT_STORE;

impl Gen<'_> {
    pub(super) fn global(&mut self, k: usize) -> Decl {
        // The first global is a `const int`, so dimensions can use one.
        let kind = if k == 0 {
            0
        } else {
            self.weighted(&[2, 1, 1, 4, 3, 4, 3])
        };
        let name = self.name("g");
        let (decl, value) = match kind {
            0 => {
                let v = self.between(1, 9) as i32;
                let e = self.const_int_expr(v);
                (
                    Decl {
                        name: name.clone(),
                        ty: Ty::Int,
                        is_const: true,
                        dims: vec![],
                        init: Some(Init::Expr(e)),
                    },
                    Some(v),
                )
            }
            1 => {
                let v = self.store_float_literal();
                (
                    Decl {
                        name: name.clone(),
                        ty: Ty::Float,
                        is_const: true,
                        dims: vec![],
                        init: Some(Init::Expr(Expr::Float(v))),
                    },
                    None,
                )
            }
            2 => {
                let dims = self.dims(1);
                let init = self.const_list(&dims, Ty::Int, true);
                (
                    Decl {
                        name: name.clone(),
                        ty: Ty::Int,
                        is_const: true,
                        dims,
                        init: Some(init),
                    },
                    None,
                )
            }
            3 | 4 => {
                let ty = if kind == 3 { Ty::Int } else { Ty::Float };
                let init = if self.chance(0.6) {
                    Some(Init::Expr(self.const_scalar(ty)))
                } else {
                    None
                };
                (
                    Decl {
                        name: name.clone(),
                        ty,
                        is_const: false,
                        dims: vec![],
                        init,
                    },
                    None,
                )
            }
            _ => {
                let ty = if kind == 5 { Ty::Int } else { Ty::Float };
                let rank = self.weighted(&[5, 4, 1]) + 1;
                let dims = self.maybe_big_dims(rank);
                let init = if self.chance(0.5) {
                    Some(self.const_list(&dims, ty, false))
                } else {
                    None
                };
                (
                    Decl {
                        name: name.clone(),
                        ty,
                        is_const: false,
                        dims,
                        init,
                    },
                    None,
                )
            }
        };
        self.globals.push(Sym {
            name,
            ty: decl.ty,
            shape: decl.shape(),
            is_const: decl.is_const,
            global: true,
            param_array: false,
            loop_var: false,
            value,
        });
        decl
    }

    /// Array dimensions (sizes 1..=8, at most 96 elements), sometimes spelled with a
    /// global `const int`.
    pub(super) fn dims(&mut self, rank: usize) -> Vec<Dim> {
        self.dims_up_to(rank, 8, 96)
    }

    /// Sometimes a big array (up to 4096 elements): frames and offsets beyond the
    /// 12-bit immediates, long zero-initialisations.
    pub(super) fn maybe_big_dims(&mut self, rank: usize) -> Vec<Dim> {
        if self.chance(0.08) {
            self.dims_up_to(rank, 1024, 4096)
        } else {
            self.dims(rank)
        }
    }

    /// Dimensions of at most `max_dim` each and `max_total` elements in all.
    pub(super) fn dims_up_to(&mut self, rank: usize, max_dim: usize, max_total: usize) -> Vec<Dim> {
        let mut out = Vec::new();
        let mut total = 1;
        for _ in 0..rank {
            let max = (max_total / total).clamp(1, max_dim) as i64;
            let size = self.between(1, max) as usize;
            total *= size;
            let expr = self.const_int_expr(size as i32);
            out.push(Dim { size, expr });
        }
        out
    }

    /// A constant expression with value `v`: the literal, or a visible global
    /// `const int` plus or times something (not one a local hides).
    pub(super) fn const_int_expr(&mut self, v: i32) -> Expr {
        let consts: Vec<(String, i32)> = self
            .visible()
            .iter()
            .filter(|g| g.global)
            .filter_map(|g| Some((g.name.clone(), g.value?)))
            .collect();
        if consts.is_empty() || self.chance(0.5) {
            return Expr::Int(v);
        }
        let (name, c) = self.pick(&consts).clone();
        let var = Expr::var(&name, Ty::Int);
        if c != 0 && v % c == 0 && self.chance(0.5) {
            let q = v / c;
            if q == 1 {
                return var;
            }
            return Expr::bin(BinOp::Mul, var, Expr::Int(q));
        }
        let d = v - c;
        if d >= 0 {
            Expr::bin(BinOp::Add, var, Expr::Int(d))
        } else {
            Expr::bin(BinOp::Sub, var, Expr::Int(-d))
        }
    }

    /// A constant scalar initialiser of type `ty` (sometimes of the other type:
    /// SysY converts).
    pub(super) fn const_scalar(&mut self, ty: Ty) -> Expr {
        match (ty, self.chance(0.15)) {
            (Ty::Int, false) => Expr::Int(self.int_literal()),
            // Stored unclamped: within the float store bound.
            (Ty::Float, true) => Expr::Int(self.between(-1000, 1000) as i32),
            (Ty::Float, false) => Expr::Float(self.store_float_literal()),
            (Ty::Int, true) => Expr::Float(self.between(-1000, 1000) as f32 + 0.75),
        }
    }

    /// A float literal within the store bound (see [`crate::bounds`]).
    pub(super) fn store_float_literal(&mut self) -> f32 {
        let v = self.float_literal();
        if f64::from(v.abs()) <= FLOAT_STORE {
            v
        } else {
            v / 64.0
        }
    }

    /// A constant initialiser list for an array of these dimensions: nested braces,
    /// brace elision or a partial list.
    pub(super) fn const_list(&mut self, dims: &[Dim], ty: Ty, full: bool) -> Init {
        let shape: Vec<usize> = dims.iter().map(|d| d.size).collect();
        self.init_list(&shape, ty, full, &mut |g, ty| g.const_scalar(ty))
    }

    /// An initialiser list for `shape`; `elem` makes the elements. `full` fills
    /// every element.
    pub(super) fn init_list(
        &mut self,
        shape: &[usize],
        ty: Ty,
        full: bool,
        elem: &mut dyn FnMut(&mut Self, Ty) -> Expr,
    ) -> Init {
        let total: usize = shape.iter().product();
        let style = if total > 96 {
            // A big array: a short prefix or nothing, not thousands of values.
            2 + self.weighted(&[1, 1])
        } else if full {
            0
        } else {
            self.weighted(&[3, 3, 2, 1])
        };
        match style {
            // Nested braces, every element.
            0 => self.nested(shape, ty, elem, false),
            // Nested braces, rows cut short.
            1 => self.nested(shape, ty, elem, true),
            // Flat (brace elision), a prefix of the elements.
            2 => {
                let n = self.between(1, total.min(24) as i64) as usize;
                Init::List((0..n).map(|_| Init::Expr(elem(self, ty))).collect())
            }
            // Empty: all zero.
            _ => Init::List(vec![]),
        }
    }

    pub(super) fn nested(
        &mut self,
        shape: &[usize],
        ty: Ty,
        elem: &mut dyn FnMut(&mut Self, Ty) -> Expr,
        partial: bool,
    ) -> Init {
        let n = if partial {
            self.between(0, shape[0] as i64) as usize
        } else {
            shape[0]
        };
        let items = (0..n)
            .map(|_| {
                if shape.len() == 1 {
                    Init::Expr(elem(self, ty))
                } else {
                    self.nested(&shape[1..], ty, elem, partial)
                }
            })
            .collect();
        Init::List(items)
    }
}
