//! The random program generator: a seed in, a well-defined SysY [`Program`] out.
//!
//! The same seed and [`GenConfig`] always give the same program (ChaCha8, a stream
//! cipher with a documented, portable output, seeded from the number). A program has
//!
//! - globals: `const int`s (used in dimensions and expressions), a `const float`, a
//!   `const int` table, int and float scalars and arrays of up to three dimensions,
//!   with and without (brace-elided, nested, partial) initialisers;
//! - helper functions `f*` called in definition order (no recursion), pure ones
//!   (callable anywhere in an expression) and impure ones (touching globals, writing
//!   through array parameters, printing), with scalar and array parameters;
//! - `main`, which may start by reading a few numbers from stdin (generated with
//!   the program: [`Program::input`]), and whose body ends by printing every global and its own top-level
//!   variables (the checksum), and returns an exit status computed from them.
//!
//! Statements are assignments, declarations, `if`/`else`, counted loops (nested, with
//! extra short-circuit conditions that call impure functions), `break`, `continue`,
//! early `return`, calls and prints; expressions mix int and float arithmetic,
//! comparisons and logic as values, division and remainder by safe divisors, array
//! elements with safe indices and calls. Each construct follows [`crate::validate`]'s
//! rules by construction.
//!
//! A cost model keeps runs short: every function's estimated dynamic statement count
//! (loop trip counts multiply, a call costs its callee's estimate) stays within
//! [`GenConfig::max_cost`].

mod expr;
mod stmt;

use crate::ast::*;
use crate::bounds::FLOAT_STORE;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Size and shape limits of generated programs.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Helper functions besides `main` (at most).
    pub max_funcs: usize,
    /// Global variables and constants (at most).
    pub max_globals: usize,
    /// Statements per function body, nested ones included (about).
    pub max_stmts: usize,
    /// Statement nesting depth.
    pub max_depth: usize,
    /// Expression depth.
    pub max_expr_depth: usize,
    /// Estimated dynamic statement count of `main`, callees included.
    pub max_cost: u64,
}

impl Default for GenConfig {
    /// The campaign's programs: a few hundred lines, up to a few hundred thousand
    /// executed statements.
    fn default() -> Self {
        GenConfig {
            max_funcs: 6,
            max_globals: 12,
            max_stmts: 40,
            max_depth: 4,
            max_expr_depth: 4,
            max_cost: 200_000,
        }
    }
}

impl GenConfig {
    /// Smaller programs, for the quick round inside `cargo test`.
    pub fn small() -> Self {
        GenConfig {
            max_funcs: 4,
            max_globals: 8,
            max_stmts: 25,
            max_depth: 3,
            max_expr_depth: 3,
            max_cost: 20_000,
        }
    }
}

/// Generates the program for `seed`.
pub fn generate(seed: u64, cfg: &GenConfig) -> Program {
    let mut g = Gen::new(seed, cfg);
    g.program()
}

/// A variable in scope.
#[derive(Clone, Debug)]
struct Sym {
    name: String,
    ty: Ty,
    shape: Vec<usize>,
    is_const: bool,
    global: bool,
    /// An array parameter (read-only in pure functions).
    param_array: bool,
    /// A loop variable (never assigned).
    loop_var: bool,
    /// The value of a scalar `const int` (for dimensions and constant expressions).
    value: Option<i32>,
}

/// A generated function, as callers see it.
#[derive(Clone, Debug)]
struct FuncSym {
    name: String,
    params: Vec<Param>,
    ret: Option<Ty>,
    pure_fn: bool,
    /// Estimated dynamic statement count of one call.
    cost: u64,
}

/// An enclosing loop: its variable, the values it takes, and its step.
#[derive(Clone, Debug)]
struct LoopSym {
    var: String,
    step: i32,
    min: i32,
    max: i32,
}

/// The generator's state.
struct Gen<'c> {
    rng: ChaCha8Rng,
    cfg: &'c GenConfig,
    /// Counter making every name unique.
    next_name: usize,
    globals: Vec<Sym>,
    funcs: Vec<FuncSym>,
    /// Block scopes of the current function (params first).
    scopes: Vec<Vec<Sym>>,
    loops: Vec<LoopSym>,
    /// The current function: pure? return type? main?
    pure_fn: bool,
    ret: Option<Ty>,
    in_main: bool,
    /// Product of the enclosing loops' trip counts.
    mult: u64,
    /// Estimated cost of the current function so far, and its budget.
    cost: u64,
    budget: u64,
    /// Statements left to generate in the current function.
    stmts_left: usize,
    /// Calls being generated around the current expression.
    call_nesting: usize,
    /// The program's stdin, as the `main` prologue reads it.
    input: String,
}

impl<'c> Gen<'c> {
    fn new(seed: u64, cfg: &'c GenConfig) -> Self {
        Gen {
            rng: ChaCha8Rng::seed_from_u64(seed),
            cfg,
            next_name: 0,
            globals: Vec::new(),
            funcs: Vec::new(),
            scopes: Vec::new(),
            loops: Vec::new(),
            pure_fn: false,
            ret: None,
            in_main: false,
            mult: 1,
            cost: 0,
            budget: 0,
            stmts_left: 0,
            call_nesting: 0,
            input: String::new(),
        }
    }

    fn name(&mut self, prefix: &str) -> String {
        self.next_name += 1;
        format!("{prefix}{}", self.next_name)
    }

    /// True with probability `p`.
    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p.clamp(0.0, 1.0))
    }

    /// A uniform integer in `lo..=hi`.
    fn between(&mut self, lo: i64, hi: i64) -> i64 {
        self.rng.random_range(lo..=hi)
    }

    /// One of `items`, uniformly.
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.rng.random_range(0..items.len())]
    }

    /// An index into `weights`, with probability proportional to the weight.
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut r = self.rng.random_range(0..total.max(1));
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        0
    }

    fn program(&mut self) -> Program {
        let mut globals = Vec::new();
        let n_globals = self.between(3, self.cfg.max_globals.max(3) as i64) as usize;
        for k in 0..n_globals {
            globals.push(self.global(k));
        }
        let mut funcs = Vec::new();
        let n_funcs = self.between(1, self.cfg.max_funcs.max(1) as i64) as usize;
        for _ in 0..n_funcs {
            funcs.push(self.helper());
        }
        funcs.push(self.main());
        Program {
            globals,
            funcs,
            input: std::mem::take(&mut self.input),
        }
    }

    // ---------------------------------------------------------------- scopes

    /// Every visible variable: innermost scopes first, then globals (only constants
    /// in a pure function).
    fn visible(&self) -> Vec<Sym> {
        let mut out: Vec<Sym> = self.scopes.iter().rev().flatten().cloned().collect();
        out.extend(
            self.globals
                .iter()
                .filter(|g| !self.pure_fn || g.is_const)
                .cloned(),
        );
        out
    }

    fn declare(&mut self, sym: Sym) {
        self.scopes.last_mut().expect("a scope is open").push(sym);
    }

    fn local(name: &str, ty: Ty, shape: Vec<usize>) -> Sym {
        Sym {
            name: name.to_string(),
            ty,
            shape,
            is_const: false,
            global: false,
            param_array: false,
            loop_var: false,
            value: None,
        }
    }

    // ---------------------------------------------------------------- globals

    fn global(&mut self, k: usize) -> Decl {
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
    fn dims(&mut self, rank: usize) -> Vec<Dim> {
        self.dims_up_to(rank, 8, 96)
    }

    /// Sometimes a big array (up to 4096 elements): frames and offsets beyond the
    /// 12-bit immediates, long zero-initialisations.
    fn maybe_big_dims(&mut self, rank: usize) -> Vec<Dim> {
        if self.chance(0.08) {
            self.dims_up_to(rank, 1024, 4096)
        } else {
            self.dims(rank)
        }
    }

    /// Dimensions of at most `max_dim` each and `max_total` elements in all.
    fn dims_up_to(&mut self, rank: usize, max_dim: usize, max_total: usize) -> Vec<Dim> {
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
    /// `const int` plus or times something.
    fn const_int_expr(&mut self, v: i32) -> Expr {
        let consts: Vec<(String, i32)> = self
            .globals
            .iter()
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
    fn const_scalar(&mut self, ty: Ty) -> Expr {
        match (ty, self.chance(0.15)) {
            (Ty::Int, false) => Expr::Int(self.int_literal()),
            // Stored unclamped: within the float store bound.
            (Ty::Float, true) => Expr::Int(self.between(-1000, 1000) as i32),
            (Ty::Float, false) => Expr::Float(self.store_float_literal()),
            (Ty::Int, true) => Expr::Float(self.between(-1000, 1000) as f32 + 0.75),
        }
    }

    /// A float literal within the store bound (see [`crate::bounds`]).
    fn store_float_literal(&mut self) -> f32 {
        let v = self.float_literal();
        if f64::from(v.abs()) <= FLOAT_STORE {
            v
        } else {
            v / 64.0
        }
    }

    /// A constant initialiser list for an array of these dimensions: nested braces,
    /// brace elision or a partial list.
    fn const_list(&mut self, dims: &[Dim], ty: Ty, full: bool) -> Init {
        let shape: Vec<usize> = dims.iter().map(|d| d.size).collect();
        self.init_list(&shape, ty, full, &mut |g, ty| g.const_scalar(ty))
    }

    /// An initialiser list for `shape`; `elem` makes the elements. `full` fills
    /// every element.
    fn init_list(
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

    fn nested(
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

    // ---------------------------------------------------------------- functions

    fn begin_function(&mut self, pure_fn: bool, ret: Option<Ty>, budget: u64) {
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
    fn helper(&mut self) -> Func {
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
    fn params(&mut self) -> Vec<Param> {
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
    fn tail_call(&mut self, ty: Ty) -> Option<crate::ast::Call> {
        if self.chance(0.5) {
            self.impure_call(Some(Some(ty)))
        } else {
            None
        }
        .or_else(|| self.pure_call(Some(ty)))
    }

    /// The function's final return value.
    fn tail_value(&mut self, ty: Ty) -> Expr {
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

    fn main(&mut self) -> Func {
        self.begin_function(false, Some(Ty::Int), self.cfg.max_cost);
        self.in_main = true;
        let mut body = self.inputs();
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

    /// `int v = getint();` / `float v = getfloat();` declarations reading the
    /// generated input: values the compiler cannot fold.
    fn inputs(&mut self) -> Vec<Stmt> {
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
    fn checksum(&mut self) -> Vec<Stmt> {
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
    fn print_array(&mut self, name: &str, ty: Ty, shape: &[usize], index: Vec<Index>) -> Stmt {
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
