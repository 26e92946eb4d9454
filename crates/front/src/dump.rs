//! A readable, deterministic text dump of the typed AST (the driver's `--emit ast`).
//!
//! Globals print as `global g<N> name: <type> = <init>`, functions as a header, their
//! locals (`l<N>`) and their body, one statement per line, indented by nesting.
//! Expressions are prefix forms with the operand type as suffix (`(add.i a b)`,
//! `(lt.f x y)`), conversions as `(i2f e)` / `(f2i e)`, variables as `name@l3` (local)
//! or `name@g0` (global); a pointer-typed (array) expression is wrapped as
//! `(ptr <type> e)`.
//!
//! [`dump_with_positions`] (the driver's form) ends each line of a declaration or a
//! statement with where it is in the source, as `; line:col`.

use std::fmt::Write;

use crate::sema::type_name;
use crate::tast::*;

/// Dumps a checked program.
pub fn dump(p: &Program) -> String {
    dump_inner(p, None)
}

/// Dumps a checked program with the source position (`; line:col`) of every
/// declaration and statement; `source` is the text `p` was checked from.
pub fn dump_with_positions(p: &Program, source: &str) -> String {
    dump_inner(p, Some(source))
}

fn dump_inner(p: &Program, source: Option<&str>) -> String {
    let mut d = Dumper {
        p,
        f: None,
        out: String::new(),
        source,
        line_starts: source.map_or_else(Vec::new, |s| {
            std::iter::once(0)
                .chain(s.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        }),
    };
    for (i, g) in p.globals.iter().enumerate() {
        d.global(i, g);
    }
    for (i, f) in p.funcs.iter().enumerate() {
        if !f.is_runtime {
            d.func(i, f);
        }
    }
    d.out
}

/// Deepest indentation written as spaces.
const MAX_INDENT: usize = 40;

struct Dumper<'p> {
    p: &'p Program,
    f: Option<&'p Function>,
    out: String,
    /// The source, when positions are wanted, and its line start offsets.
    source: Option<&'p str>,
    line_starts: Vec<usize>,
}

fn scalar(t: ScalarTy) -> &'static str {
    match t {
        ScalarTy::Int => "int",
        ScalarTy::Float => "float",
    }
}

fn konst(v: ConstVal) -> String {
    match v {
        ConstVal::Int(i) => i.to_string(),
        ConstVal::Float(f) => format!("{f:?}f"),
    }
}

fn shape_str(ty: ScalarTy, shape: &Shape) -> String {
    let mut s = scalar(ty).to_string();
    match shape {
        Shape::Scalar => {}
        Shape::Array(d) => d.iter().for_each(|x| write!(s, "[{x}]").unwrap_or(())),
        Shape::Pointer(d) => {
            s.push_str("[]");
            d.iter().for_each(|x| write!(s, "[{x}]").unwrap_or(()));
        }
    }
    s
}

impl<'p> Dumper<'p> {
    /// Writes one line indented by nesting level (levels beyond [`MAX_INDENT`] are
    /// written as a `[level]` prefix, so that output stays linear in the tree size).
    fn line(&mut self, indent: usize, text: &str) {
        for _ in 0..indent.min(MAX_INDENT) {
            self.out.push_str("  ");
        }
        if indent > MAX_INDENT {
            let _ = write!(self.out, "[{indent}] ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// [`line`](Self::line), followed by `  ; line:col` of `span` when positions are
    /// wanted.
    fn line_at(&mut self, indent: usize, text: &str, span: Span) {
        self.line(indent, text);
        let Some(src) = self.source else {
            return;
        };
        let pos = (span.start as usize).min(src.len());
        let i = self
            .line_starts
            .partition_point(|&s| s <= pos)
            .saturating_sub(1);
        let start = self.line_starts.get(i).copied().unwrap_or(0);
        let col = src.get(start..pos).map_or(0, |t| t.chars().count()) + 1;
        self.out.pop();
        let _ = writeln!(self.out, "  ; {}:{col}", i + 1);
    }

    fn global(&mut self, i: usize, g: &GlobalVar) {
        let shape = if g.dims.is_empty() {
            Shape::Scalar
        } else {
            Shape::Array(g.dims.clone())
        };
        let init = match &g.init {
            GlobalInit::Scalar(v) => konst(*v),
            GlobalInit::Array(elems) => {
                let items: Vec<String> = elems
                    .iter()
                    .map(|(i, v)| format!("{i}: {}", konst(*v)))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
        };
        let c = if g.is_const { "const " } else { "" };
        let text = format!(
            "global g{i} {}: {c}{} = {init}",
            g.name,
            shape_str(g.ty, &shape)
        );
        self.line_at(0, &text, g.span);
    }

    fn func(&mut self, i: usize, f: &'p Function) {
        self.f = Some(f);
        let params: Vec<String> = f.params.iter().map(|&l| format!("l{}", l.0)).collect();
        let ret = match f.ret {
            RetTy::Int => "int",
            RetTy::Float => "float",
            RetTy::Void => "void",
        };
        let text = format!("fn f{i} {}({}) -> {ret}", f.name, params.join(", "));
        self.line_at(0, &text, f.span);
        for (j, l) in f.locals.iter().enumerate() {
            let kind = if l.is_param {
                "param"
            } else if l.is_const {
                "const"
            } else {
                "local"
            };
            let text = format!("{kind} l{j} {}: {}", l.name, shape_str(l.ty, &l.shape));
            self.line_at(1, &text, l.span);
        }
        if let Some(body) = &f.body {
            for s in body {
                self.stmt(1, s);
            }
        }
    }

    fn stmt(&mut self, ind: usize, s: &Stmt) {
        match s {
            Stmt::Assign { lhs, rhs } => {
                let mut t = self.var(lhs.base);
                for ix in &lhs.indices {
                    t.push('[');
                    t.push_str(&self.expr(ix));
                    t.push(']');
                }
                let text = format!("{t} = {}", self.expr(rhs));
                self.line_at(ind, &text, lhs.span);
            }
            Stmt::Expr(e) => {
                let text = self.expr(e);
                self.line_at(ind, &text, e.span);
            }
            Stmt::Block(b) => {
                self.line(ind, "{");
                for s in b {
                    self.stmt(ind + 1, s);
                }
                self.line(ind, "}");
            }
            Stmt::If { cond, then, els } => {
                let text = format!("if {}", self.expr(cond));
                self.line_at(ind, &text, cond.span);
                self.stmt(ind + 1, then);
                if let Some(e) = els {
                    self.line(ind, "else");
                    self.stmt(ind + 1, e);
                }
            }
            Stmt::While { cond, body } => {
                let text = format!("while {}", self.expr(cond));
                self.line_at(ind, &text, cond.span);
                self.stmt(ind + 1, body);
            }
            Stmt::Break => self.line(ind, "break"),
            Stmt::Continue => self.line(ind, "continue"),
            Stmt::Return(None) => self.line(ind, "return"),
            Stmt::Return(Some(e)) => {
                let text = format!("return {}", self.expr(e));
                self.line_at(ind, &text, e.span);
            }
            Stmt::Decl { local, init } => {
                let name = self.var(Var::Local(*local));
                let text = match init {
                    Init::None => format!("decl {name}"),
                    Init::Scalar(e) => format!("decl {name} = {}", self.expr(e)),
                    Init::Array(elems) => {
                        let items: Vec<String> = elems
                            .iter()
                            .map(|(i, e)| format!("{i}: {}", self.expr(e)))
                            .collect();
                        format!("decl {name} = {{{}}}", items.join(", "))
                    }
                };
                let at = self
                    .f
                    .and_then(|f| f.locals.get(local.index()))
                    .map(|l| l.span);
                match at {
                    Some(span) => self.line_at(ind, &text, span),
                    None => self.line(ind, &text),
                }
            }
        }
    }

    fn var(&self, v: Var) -> String {
        let mut s = String::new();
        self.var_into(v, &mut s);
        s
    }

    fn var_into(&self, v: Var, s: &mut String) {
        match v {
            Var::Local(l) => {
                let name = self
                    .f
                    .and_then(|f| f.locals.get(l.index()))
                    .map_or("?", |x| x.name.as_str());
                let _ = write!(s, "{name}@l{}", l.0);
            }
            Var::Global(g) => {
                let name = self
                    .p
                    .globals
                    .get(g.index())
                    .map_or("?", |x| x.name.as_str());
                let _ = write!(s, "{name}@g{}", g.0);
            }
        }
    }

    fn expr(&self, e: &Expr) -> String {
        let mut s = String::new();
        self.expr_into(e, &mut s);
        s
    }

    /// Appends the expression to `s` (one buffer: linear in the size of the tree).
    fn expr_into(&self, e: &Expr, s: &mut String) {
        let suffix = |t: &Type| if *t == Type::Float { "f" } else { "i" };
        let is_ptr = matches!(e.ty, Type::Ptr { .. });
        if is_ptr {
            let _ = write!(s, "(ptr {} ", type_name(&e.ty));
        }
        match &e.kind {
            ExprKind::IntLit(v) => {
                let _ = write!(s, "{v}");
            }
            ExprKind::FloatLit(v) => {
                let _ = write!(s, "{v:?}f");
            }
            ExprKind::StrLit(b) => {
                let _ = write!(s, "\"{}\"", b.escape_ascii());
            }
            ExprKind::Var(v) => self.var_into(*v, s),
            ExprKind::Index { base, indices } => {
                self.var_into(*base, s);
                for ix in indices {
                    s.push('[');
                    self.expr_into(ix, s);
                    s.push(']');
                }
            }
            ExprKind::Unary(op, a) => {
                let name = match op {
                    UnOp::Neg => "neg",
                    UnOp::Not => "not",
                };
                let _ = write!(s, "({name}.{} ", suffix(&a.ty));
                self.expr_into(a, s);
                s.push(')');
            }
            ExprKind::Binary(..) | ExprKind::And(..) | ExprKind::Or(..) => self.chain_into(e, s),
            ExprKind::IntToFloat(a) | ExprKind::FloatToInt(a) => {
                s.push_str(if matches!(e.kind, ExprKind::IntToFloat(_)) {
                    "(i2f "
                } else {
                    "(f2i "
                });
                self.expr_into(a, s);
                s.push(')');
            }
            ExprKind::Call { func, args } => {
                let name = self
                    .p
                    .funcs
                    .get(func.index())
                    .map_or("?", |f| f.name.as_str());
                let _ = write!(s, "(call {name}@f{}", func.0);
                for a in args {
                    s.push(' ');
                    self.expr_into(a, s);
                }
                s.push(')');
            }
        }
        if is_ptr {
            s.push(')');
        }
    }

    /// Appends a binary / logical expression, walking its left spine iteratively (long
    /// left-deep chains must not need deep recursion).
    fn chain_into(&self, top: &Expr, s: &mut String) {
        let mut spine: Vec<&Expr> = Vec::new();
        let mut leaf = top;
        while let ExprKind::Binary(_, a, _) | ExprKind::And(a, _) | ExprKind::Or(a, _) = &leaf.kind
        {
            spine.push(leaf);
            leaf = a;
        }
        for node in &spine {
            match &node.kind {
                ExprKind::Binary(op, a, _) => {
                    let name = match op {
                        BinOp::Add => "add",
                        BinOp::Sub => "sub",
                        BinOp::Mul => "mul",
                        BinOp::Div => "div",
                        BinOp::Rem => "rem",
                        BinOp::Lt => "lt",
                        BinOp::Le => "le",
                        BinOp::Gt => "gt",
                        BinOp::Ge => "ge",
                        BinOp::Eq => "eq",
                        BinOp::Ne => "ne",
                    };
                    let t = if a.ty == Type::Float { "f" } else { "i" };
                    let _ = write!(s, "({name}.{t} ");
                }
                ExprKind::And(..) => s.push_str("(and "),
                _ => s.push_str("(or "),
            }
        }
        self.expr_into(leaf, s);
        for node in spine.iter().rev() {
            if let ExprKind::Binary(_, _, b) | ExprKind::And(_, b) | ExprKind::Or(_, b) = &node.kind
            {
                s.push(' ');
                self.expr_into(b, s);
            }
            s.push(')');
        }
    }
}
