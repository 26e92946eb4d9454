//! Mutable walks over a [`Program`]: every statement list and every expression, in a
//! fixed pre-order, so the reducer can name an edit site by its position ("the 12th
//! expression") and apply one edit at a time.
//!
//! A visitor returns `true` to stop the walk (the edit is done).

use crate::ast::*;

/// Calls `f` on every statement list (function bodies, branches, loop bodies,
/// blocks), a list before the lists nested in it. Stops when `f` returns true.
pub fn stmt_lists(p: &mut Program, f: &mut dyn FnMut(&mut Vec<Stmt>) -> bool) -> bool {
    p.funcs.iter_mut().any(|func| list(&mut func.body, f))
}

fn list(l: &mut Vec<Stmt>, f: &mut dyn FnMut(&mut Vec<Stmt>) -> bool) -> bool {
    if f(l) {
        return true;
    }
    for s in l.iter_mut() {
        let stop = match s {
            Stmt::If { then, els, .. } => list(then, f) || els.as_mut().is_some_and(|e| list(e, f)),
            Stmt::Loop { body, .. } | Stmt::Block(body) => list(body, f),
            _ => false,
        };
        if stop {
            return true;
        }
    }
    false
}

/// Calls `f` on every expression node, a node before its operands, in program
/// order (global initialisers, then each function's base case, statements and
/// final return).
/// Array dimensions are not visited: they fix shapes the indices rely on.
pub fn exprs(p: &mut Program, f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
    for g in &mut p.globals {
        if decl(g, f) {
            return true;
        }
    }
    for func in &mut p.funcs {
        let base = func.recursion.as_mut().and_then(|r| r.base.as_mut());
        if base.is_some_and(|e| expr(e, f))
            || stmts(&mut func.body, f)
            || func.tail.as_mut().is_some_and(|e| expr(e, f))
        {
            return true;
        }
    }
    false
}

fn decl(d: &mut Decl, f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
    d.init.as_mut().is_some_and(|i| init(i, f))
}

fn init(i: &mut Init, f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
    match i {
        Init::Expr(e) => expr(e, f),
        Init::List(items) => items.iter_mut().any(|i| init(i, f)),
    }
}

fn stmts(body: &mut [Stmt], f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
    body.iter_mut().any(|s| stmt(s, f))
}

fn stmt(s: &mut Stmt, f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
    match s {
        Stmt::Decl(d) => decl(d, f),
        Stmt::Assign { target, value } => {
            let stop = match target {
                LValue::Var { .. } => false,
                LValue::Elem { index, .. } => indices(index, f),
            };
            stop || expr(value, f)
        }
        Stmt::Call(c) => call(c, f),
        Stmt::If { cond, then, els } => {
            expr(cond, f) || stmts(then, f) || els.as_mut().is_some_and(|e| stmts(e, f))
        }
        Stmt::Loop { cond, body, .. } => {
            cond.as_mut().is_some_and(|c| expr(c, f)) || stmts(body, f)
        }
        Stmt::Return(e) => e.as_mut().is_some_and(|e| expr(e, f)),
        Stmt::Block(b) => stmts(b, f),
        Stmt::Print(Print::Int(e) | Print::Float(e)) => expr(e, f),
        Stmt::Print(Print::Format(args)) => args.iter_mut().any(|e| expr(e, f)),
        Stmt::Print(Print::Array { array, .. }) => indices(&mut array.index, f),
        Stmt::Break | Stmt::Continue { .. } => false,
    }
}

fn indices(ix: &mut [Index], f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
    ix.iter_mut().any(|i| match i {
        Index::Wrap { expr: e, .. } => expr(e, f),
        Index::Const(_) | Index::Loop { .. } => false,
    })
}

fn call(c: &mut Call, f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
    c.args.iter_mut().any(|a| match a {
        Arg::Value(e) => expr(e, f),
        Arg::Array(r) => indices(&mut r.index, f),
    })
}

/// Visits `e`, then its operands.
pub fn expr(e: &mut Expr, f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
    if f(e) {
        return true;
    }
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Var { .. } | Expr::Input(_) => false,
        Expr::Elem { index, .. } => indices(index, f),
        Expr::Neg(x) | Expr::Not(x) => expr(x, f),
        Expr::Bin(_, l, r) => expr(l, f) || expr(r, f),
        Expr::Div(l, d) | Expr::Rem(l, d) => {
            expr(l, f)
                || match d {
                    Divisor::IntExpr { expr: x, .. } | Divisor::FloatSquare(x) => expr(x, f),
                    Divisor::Int(_) | Divisor::Float(_) => false,
                }
        }
        Expr::Call(c) => call(c, f),
    }
}

/// Calls `f` on every call (statement calls and calls in expressions).
pub fn calls(p: &mut Program, f: &mut dyn FnMut(&mut Call)) {
    for func in &mut p.funcs {
        let mut on_list = |l: &mut Vec<Stmt>| {
            for s in l.iter_mut() {
                if let Stmt::Call(c) = s {
                    f(c);
                }
            }
            false
        };
        list(&mut func.body, &mut on_list);
    }
    exprs(p, &mut |e| {
        if let Expr::Call(c) = e {
            f(c);
        }
        false
    });
}

/// How many sites a walk visits.
pub fn count_lists(p: &Program) -> usize {
    let mut q = p.clone();
    let mut n = 0;
    stmt_lists(&mut q, &mut |_| {
        n += 1;
        false
    });
    n
}

/// How many expression nodes a walk visits.
pub fn count_exprs(p: &Program) -> usize {
    let mut q = p.clone();
    let mut n = 0;
    exprs(&mut q, &mut |_| {
        n += 1;
        false
    });
    n
}

/// Applies `edit` to the `k`-th statement list; whether there was one.
pub fn edit_list(p: &mut Program, k: usize, edit: &mut dyn FnMut(&mut Vec<Stmt>)) -> bool {
    let mut left = k;
    stmt_lists(p, &mut |l| {
        if left == 0 {
            edit(l);
            true
        } else {
            left -= 1;
            false
        }
    })
}

/// Applies `edit` to the `k`-th expression node; whether there was one.
pub fn edit_expr(p: &mut Program, k: usize, edit: &mut dyn FnMut(&mut Expr)) -> bool {
    let mut left = k;
    exprs(p, &mut |e| {
        if left == 0 {
            edit(e);
            true
        } else {
            left -= 1;
            false
        }
    })
}

/// Calls `f` on every declaration: globals, then locals in program order.
pub fn decls(p: &mut Program, f: &mut dyn FnMut(&mut Decl) -> bool) -> bool {
    if p.globals.iter_mut().any(&mut *f) {
        return true;
    }
    stmt_lists(p, &mut |l| {
        l.iter_mut().any(|s| match s {
            Stmt::Decl(d) => f(d),
            _ => false,
        })
    })
}

/// Calls `f` on every index list (element reads and writes, array arguments,
/// printed rows).
pub fn index_lists(p: &mut Program, f: &mut dyn FnMut(&mut Vec<Index>)) {
    exprs(p, &mut |e| {
        match e {
            Expr::Elem { index, .. } => f(index),
            Expr::Call(c) => call_index_lists(c, f),
            _ => {}
        }
        false
    });
    stmt_lists(p, &mut |l| {
        for s in l.iter_mut() {
            match s {
                Stmt::Assign {
                    target: LValue::Elem { index, .. },
                    ..
                } => f(index),
                Stmt::Call(c) => call_index_lists(c, f),
                Stmt::Print(Print::Array { array, .. }) => f(&mut array.index),
                _ => {}
            }
        }
        false
    });
}

fn call_index_lists(c: &mut Call, f: &mut dyn FnMut(&mut Vec<Index>)) {
    for a in &mut c.args {
        if let Arg::Array(r) = a {
            f(&mut r.index);
        }
    }
}
