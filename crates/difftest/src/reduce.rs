//! Shrinking a program while a property (a mismatch) persists.
//!
//! Greedy reduction over the program tree, in rounds until a round changes nothing:
//!
//! 1. delete unused functions and globals, and function parameters (with the
//!    matching argument of every call);
//! 2. delete statements, in chunks halving from the whole list down to single ones
//!    (the idea of Zeller's ddmin, applied per statement list);
//! 3. flatten statements: an `if` becomes its `then` or `else` branch spliced into the
//!    enclosing list, or loses its `else`; a block is spliced; a loop runs once, loses
//!    its extra condition, or becomes its body (after `int v = start;`);
//! 4. shorten initialiser lists: emptied, or cut to half;
//! 5. simplify expressions: each node is replaced by `0`/`1` (`0.0`/`1.0`) or by one
//!    of its operands of the same type;
//! 6. replace computed indices by 0, and spell a wrapped index of a literal as the
//!    constant it is.
//!
//! Every candidate must pass [`validate`] and sysyc's front end (names, types) before
//! the property is tested, so the result is as well defined as the input. Candidates
//! already tried (by text) are skipped. A limit on the number of property tests
//! bounds the time.

use crate::ast::*;
use crate::print::print_program;
use crate::validate::validate;
use crate::visit;
use std::collections::HashSet;

/// How a reduction went.
#[derive(Debug, Clone)]
pub struct Reduction {
    pub program: Program,
    /// Property tests run (valid candidates).
    pub tests: usize,
    /// Candidates accepted.
    pub accepted: usize,
}

/// Reduces `p`, for which `interesting` holds, to a smaller program for which it
/// still holds; runs `interesting` at most `max_tests` times.
pub fn reduce(
    p: &Program,
    interesting: &mut dyn FnMut(&Program, &str) -> bool,
    max_tests: usize,
) -> Reduction {
    let mut r = Reducer {
        best: p.clone(),
        seen: HashSet::new(),
        interesting,
        tests: 0,
        accepted: 0,
        max_tests,
    };
    r.seen.insert(print_program(p));
    loop {
        let before = r.accepted;
        r.remove_functions();
        r.remove_globals();
        r.remove_params();
        r.delete_statements();
        r.flatten_statements();
        r.simplify_inits();
        r.simplify_exprs();
        r.constant_indices();
        if r.accepted == before || r.tests >= r.max_tests {
            break;
        }
    }
    Reduction {
        program: r.best,
        tests: r.tests,
        accepted: r.accepted,
    }
}

struct Reducer<'a> {
    best: Program,
    seen: HashSet<String>,
    interesting: &'a mut dyn FnMut(&Program, &str) -> bool,
    tests: usize,
    accepted: usize,
    max_tests: usize,
}

impl Reducer<'_> {
    /// Tries a candidate; keeps it when valid and interesting.
    fn try_candidate(&mut self, cand: Program) -> bool {
        if self.tests >= self.max_tests {
            return false;
        }
        let text = print_program(&cand);
        if !self.seen.insert(text.clone()) {
            return false;
        }
        if validate(&cand).is_err() || front::check("reduce.sy", &text).is_err() {
            return false;
        }
        self.tests += 1;
        if (self.interesting)(&cand, &text) {
            self.best = cand;
            self.accepted += 1;
            true
        } else {
            false
        }
    }

    fn remove_functions(&mut self) {
        let mut i = 0;
        while i + 1 < self.best.funcs.len() {
            let mut cand = self.best.clone();
            cand.funcs.remove(i);
            if !self.try_candidate(cand) {
                i += 1;
            }
        }
    }

    fn remove_globals(&mut self) {
        let mut i = 0;
        while i < self.best.globals.len() {
            let mut cand = self.best.clone();
            cand.globals.remove(i);
            if !self.try_candidate(cand) {
                i += 1;
            }
        }
    }

    fn remove_params(&mut self) {
        for f in 0..self.best.funcs.len() {
            let mut j = 0;
            while j < self.best.funcs[f].params.len() {
                let mut cand = self.best.clone();
                let name = cand.funcs[f].name.clone();
                cand.funcs[f].params.remove(j);
                visit::calls(&mut cand, &mut |c| {
                    if c.func == name && j < c.args.len() {
                        c.args.remove(j);
                    }
                });
                if !self.try_candidate(cand) {
                    j += 1;
                }
            }
        }
    }

    fn delete_statements(&mut self) {
        let mut k = 0;
        while k < visit::count_lists(&self.best) {
            let len = list_len(&self.best, k);
            let mut chunk = len;
            while chunk >= 1 {
                let mut start = 0;
                while start < list_len(&self.best, k) {
                    let mut cand = self.best.clone();
                    visit::edit_list(&mut cand, k, &mut |l| {
                        let end = (start + chunk).min(l.len());
                        l.drain(start..end);
                    });
                    if !self.try_candidate(cand) {
                        start += chunk;
                    }
                }
                chunk /= 2;
            }
            k += 1;
        }
    }

    fn flatten_statements(&mut self) {
        let mut k = 0;
        while k < visit::count_lists(&self.best) {
            let mut i = 0;
            while i < list_len(&self.best, k) {
                let mut changed = false;
                for variant in 0..3 {
                    let mut cand = self.best.clone();
                    let mut applied = false;
                    visit::edit_list(&mut cand, k, &mut |l| applied = flatten(l, i, variant));
                    if applied && self.try_candidate(cand) {
                        changed = true;
                        break;
                    }
                }
                if !changed {
                    i += 1;
                }
            }
            k += 1;
        }
    }

    fn simplify_inits(&mut self) {
        let mut k = 0;
        loop {
            let mut list_len = None;
            visit::decls(
                &mut self.best.clone(),
                &mut nth(k, &mut |d: &mut Decl| {
                    list_len = Some(match &d.init {
                        Some(Init::List(items)) => items.len(),
                        _ => 0,
                    });
                }),
            );
            let Some(len) = list_len else { break };
            for keep in [0, len / 2] {
                if keep >= len {
                    continue;
                }
                let mut cand = self.best.clone();
                visit::decls(
                    &mut cand,
                    &mut nth(k, &mut |d: &mut Decl| {
                        if let Some(Init::List(items)) = &mut d.init {
                            items.truncate(keep);
                        }
                    }),
                );
                if self.try_candidate(cand) {
                    break;
                }
            }
            k += 1;
        }
    }

    /// Each index list in turn loses its computed indices (loop variables, wrapped
    /// expressions: index 0 instead); then, everywhere, `((v % n) + n) % n` with a
    /// literal `v` becomes the constant index it is.
    fn constant_indices(&mut self) {
        let mut k = 0;
        loop {
            let mut cand = self.best.clone();
            let (mut seen, mut changed) = (0, false);
            visit::index_lists(&mut cand, &mut |ix| {
                if seen == k {
                    for i in ix.iter_mut() {
                        if !matches!(i, Index::Const(_)) {
                            *i = Index::Const(0);
                            changed = true;
                        }
                    }
                }
                seen += 1;
            });
            if k >= seen {
                break;
            }
            if changed {
                self.try_candidate(cand);
            }
            k += 1;
        }
        let mut cand = self.best.clone();
        visit::index_lists(&mut cand, &mut |ix| {
            for i in ix.iter_mut() {
                if let Index::Wrap { expr, size } = i {
                    if let Expr::Int(v) = **expr {
                        *i = Index::Const((v as i64).rem_euclid(*size as i64) as usize);
                    }
                }
            }
        });
        self.try_candidate(cand);
    }

    fn simplify_exprs(&mut self) {
        let mut k = 0;
        while k < visit::count_exprs(&self.best) {
            let mut current = None;
            visit::edit_expr(&mut self.best.clone(), k, &mut |e| {
                current = Some(e.clone())
            });
            let Some(e) = current else { break };
            for replacement in simpler(&e) {
                let mut cand = self.best.clone();
                visit::edit_expr(&mut cand, k, &mut |x| *x = replacement.clone());
                if self.try_candidate(cand) {
                    break;
                }
            }
            k += 1;
        }
    }
}

/// A visitor that applies `f` to the `k`-th site and stops there.
fn nth<'a, T>(k: usize, f: &'a mut dyn FnMut(&mut T)) -> impl FnMut(&mut T) -> bool + 'a {
    let mut left = k;
    move |x| {
        if left == 0 {
            f(x);
            true
        } else {
            left -= 1;
            false
        }
    }
}

fn list_len(p: &Program, k: usize) -> usize {
    let mut q = p.clone();
    let mut n = 0;
    visit::edit_list(&mut q, k, &mut |l| n = l.len());
    n
}

/// Flattening edit `variant` of statement `i` in `l`; whether it applied.
fn flatten(l: &mut Vec<Stmt>, i: usize, variant: usize) -> bool {
    let splice = |l: &mut Vec<Stmt>, body: Vec<Stmt>| {
        l.splice(i..=i, body);
    };
    match (l[i].clone(), variant) {
        (Stmt::If { then, .. }, 0) => splice(l, then),
        (Stmt::If { els: Some(e), .. }, 1) => splice(l, e),
        (
            Stmt::If {
                cond,
                then,
                els: Some(_),
            },
            2,
        ) => {
            l[i] = Stmt::If {
                cond,
                then,
                els: None,
            }
        }
        (Stmt::Block(b), 0) => splice(l, b),
        (
            Stmt::Loop {
                var,
                start,
                end,
                step,
                cond,
                body,
            },
            v,
        ) => {
            if v == 2 {
                // The body once, straight: valid when it needs no loop (no break,
                // continue or index by the variable); the validator decides.
                let mut body = body;
                body.insert(
                    0,
                    Stmt::Decl(Decl {
                        name: var,
                        ty: Ty::Int,
                        is_const: false,
                        dims: vec![],
                        init: Some(Init::Expr(Expr::Int(start))),
                    }),
                );
                splice(l, body);
                return true;
            }
            let once = start.saturating_add(step);
            let (end, cond) = match v {
                0 if end != once => (once, cond),
                1 if cond.is_some() => (end, None),
                _ => return false,
            };
            l[i] = Stmt::Loop {
                var,
                start,
                end,
                step,
                cond,
                body,
            };
        }
        _ => return false,
    }
    true
}

/// Simpler replacements for `e`, most aggressive first: constants, then operands of
/// the same type.
fn simpler(e: &Expr) -> Vec<Expr> {
    let ty = e.ty();
    let mut out = match ty {
        Ty::Int => vec![Expr::Int(0), Expr::Int(1)],
        Ty::Float => vec![Expr::Float(0.0), Expr::Float(1.0)],
    };
    out.retain(|c| c != e);
    if matches!(e, Expr::Int(_) | Expr::Float(_)) {
        return out;
    }
    let mut operands: Vec<&Expr> = Vec::new();
    match e {
        Expr::Neg(x) | Expr::Not(x) => operands.push(x),
        Expr::Bin(_, l, r) => {
            operands.push(l);
            operands.push(r);
        }
        Expr::Div(l, d) | Expr::Rem(l, d) => {
            operands.push(l);
            if let Divisor::IntExpr { expr, .. } | Divisor::FloatSquare(expr) = d {
                operands.push(expr);
            }
        }
        Expr::Call(c) => {
            for a in &c.args {
                if let Arg::Value(x) = a {
                    operands.push(x);
                }
            }
        }
        Expr::Elem { index, .. } => operands.extend(crate::bounds::index_exprs(index)),
        _ => {}
    }
    out.extend(operands.into_iter().filter(|x| x.ty() == ty).cloned());
    out
}
