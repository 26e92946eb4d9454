//! The random program generator: a seed in, a well-defined SysY [`Program`] out.
//!
//! The same seed and [`GenConfig`] always give the same program (ChaCha8, a stream
//! cipher with a documented, portable output, seeded from the number). A program has
//!
//! - globals: `const int`s (used in dimensions and expressions), a `const float`, a
//!   `const int` table, int and float scalars and arrays of up to three dimensions,
//!   with and without (brace-elided, nested, partial) initialisers;
//! - helper functions `f*` called in definition order, pure ones (callable anywhere
//!   in an expression) and impure ones (touching globals, writing through array
//!   parameters, printing), with scalar and array parameters; some call themselves
//!   with a depth parameter counting down (see [`crate::ast::Recursion`]): tail calls,
//!   accumulators `x + f(d - 1, ...)`, void recursions, up to thousands deep;
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

mod decls;
mod expr;
mod funcs;
mod stmt;

use crate::ast::*;
use crate::validate::mentions;
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
    /// Scalars `main` declares before its body and prints at its end, so that they
    /// are all live across the body's loops and calls (register pressure).
    pub live_locals: usize,
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
            live_locals: 0,
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
            live_locals: 0,
        }
    }

    /// Large programs (several hundred to a few thousand lines): many helpers,
    /// long functions, deep nesting, and a `main` holding dozens of values live
    /// across its loops and calls, so that the register allocator spills.
    pub fn large() -> Self {
        GenConfig {
            max_funcs: 12,
            max_globals: 20,
            max_stmts: 150,
            max_depth: 5,
            max_expr_depth: 4,
            max_cost: 1_000_000,
            live_locals: 28,
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
    /// A recursive function's depth parameter and limit: callers pass depths
    /// that recurse (see [`Gen::depth_arg`]).
    depth: Option<(String, i32)>,
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
    /// in a pure function); a variable hidden by a later declaration of its name is
    /// not visible.
    fn visible(&self) -> Vec<Sym> {
        let mut out: Vec<Sym> = Vec::new();
        let locals = self.scopes.iter().rev().flatten();
        for sym in locals.chain(self.globals.iter()) {
            if !out.iter().any(|o| o.name == sym.name) {
                out.push(sym.clone());
            }
        }
        if self.pure_fn {
            out.retain(|s| !s.global || s.is_const);
        }
        out
    }

    /// A name for a new local of the current block initialised by `init`:
    /// sometimes that of a variable of an enclosing block or a global, which it
    /// hides until the block ends (never a loop variable, whose increment ends its
    /// body, nor one `init` reads: the new variable is in scope there already).
    fn local_name(&mut self, init: &[&Expr]) -> String {
        if self.scopes.len() > 1 && self.chance(0.15) {
            let here = self.scopes.last().expect("a scope is open");
            let hidable: Vec<String> = self
                .visible()
                .into_iter()
                .filter(|s| !s.loop_var && !here.iter().any(|h| h.name == s.name))
                .filter(|s| !init.iter().any(|e| mentions(e, &s.name)))
                .map(|s| s.name)
                .collect();
            if !hidable.is_empty() {
                return self.pick(&hidable).clone();
            }
        }
        self.name("l")
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
}
