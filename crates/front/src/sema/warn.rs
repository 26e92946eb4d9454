//! Warnings that need a whole construct: a non-void function whose end is reachable,
//! unused locals and parameters, and the helpers the expression checks use (overflowing
//! literals, names in constant comparisons).
//!
//! Every warning names the `-W` option that controls it (as gcc does); none stops
//! compilation or changes the generated code.

use super::Sema;
use crate::ast;
use crate::span::Span;
use crate::tast::*;

/// How control can leave a statement.
#[derive(Copy, Clone)]
struct Flow {
    /// Control can reach the statement after it.
    falls: bool,
    /// A `break` in it can leave the innermost enclosing loop.
    breaks: bool,
}

/// Whether a condition is a literal, and which truth value it has.
fn constant_truth(e: &Expr) -> Option<bool> {
    match e.kind {
        ExprKind::IntLit(v) => Some(v != 0),
        ExprKind::FloatLit(v) => Some(v != 0.0),
        _ => None,
    }
}

/// How control leaves `s` (conditions that are literals are taken into account, as
/// `while (1)` loops without `break` never end).
fn flow(s: &Stmt) -> Flow {
    match s {
        Stmt::Return(_) | Stmt::Continue => Flow {
            falls: false,
            breaks: false,
        },
        Stmt::Break => Flow {
            falls: false,
            breaks: true,
        },
        Stmt::Block(items) => flow_seq(items),
        Stmt::If { cond, then, els } => {
            let through = Flow {
                falls: true,
                breaks: false,
            };
            let t = flow(then);
            let e = els.as_deref().map_or(through, flow);
            match constant_truth(cond) {
                Some(true) => t,
                Some(false) => e,
                None => Flow {
                    falls: t.falls || e.falls,
                    breaks: t.breaks || e.breaks,
                },
            }
        }
        Stmt::While { cond, body } => {
            let b = flow(body);
            Flow {
                falls: constant_truth(cond) != Some(true) || b.breaks,
                breaks: false,
            }
        }
        Stmt::Assign { .. } | Stmt::Expr(_) | Stmt::Decl { .. } => Flow {
            falls: true,
            breaks: false,
        },
    }
}

/// How control leaves a sequence of statements.
fn flow_seq(items: &[Stmt]) -> Flow {
    let mut breaks = false;
    for s in items {
        let f = flow(s);
        breaks |= f.breaks;
        if !f.falls {
            return Flow {
                falls: false,
                breaks,
            };
        }
    }
    Flow {
        falls: true,
        breaks,
    }
}

/// True when `body`, a function body, can reach its closing brace.
pub fn can_reach_end(body: &[Stmt]) -> bool {
    flow_seq(body).falls
}

/// True when the expression refers to a name (a variable, constant or function):
/// comparisons of named constants (`N > 10`) are deliberate, not suspicious.
pub fn mentions_name(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::IntLit(_) | ast::ExprKind::FloatLit(_) | ast::ExprKind::StrLit(_) => false,
        ast::ExprKind::LVal(_) | ast::ExprKind::Call { .. } => true,
        ast::ExprKind::Unary(_, x) => mentions_name(x),
        ast::ExprKind::Binary(_, l, r) => mentions_name(l) || mentions_name(r),
    }
}

/// True when the expression is a comparison (`a < b`, `a == b`, ...).
pub fn is_comparison(e: &ast::Expr) -> bool {
    use ast::BinOp::*;
    matches!(
        e.kind,
        ast::ExprKind::Binary(Lt | Le | Gt | Ge | Eq | Ne, ..)
    )
}

/// The span of a block item (for "code after `return`").
pub fn item_span(item: &ast::BlockItem) -> Span {
    match item {
        ast::BlockItem::Decl(d) => d.span,
        ast::BlockItem::Stmt(s) => match s {
            ast::Stmt::Assign { span, .. }
            | ast::Stmt::If { span, .. }
            | ast::Stmt::While { span, .. }
            | ast::Stmt::Expr(_, span)
            | ast::Stmt::Break(span)
            | ast::Stmt::Continue(span)
            | ast::Stmt::Return(_, span) => *span,
            ast::Stmt::Block(b) => b.span,
        },
    }
}

/// The keyword of a statement after which nothing in its block runs.
pub fn jump_keyword(item: &ast::BlockItem) -> Option<&'static str> {
    match item {
        ast::BlockItem::Stmt(ast::Stmt::Return(..)) => Some("return"),
        ast::BlockItem::Stmt(ast::Stmt::Break(_)) => Some("break"),
        ast::BlockItem::Stmt(ast::Stmt::Continue(_)) => Some("continue"),
        _ => None,
    }
}

impl<'a> Sema<'a> {
    /// Warns about a decimal integer literal too large for `int` (it wraps to a
    /// negative value). `negated` is true for the operand of unary minus, where
    /// `2147483648` is exactly `INT_MIN`. Octal and hexadecimal literals up to
    /// `0xffffffff` are bit patterns, as in C, and not warned about.
    pub fn check_int_literal(&mut self, span: Span, negated: bool) {
        let text = self.src.get(span.range()).unwrap_or("");
        if text.len() > 1 && text.starts_with('0') {
            return;
        }
        let Ok(v) = text.parse::<u64>() else {
            return;
        };
        let limit = if negated {
            1u64 << 31
        } else {
            (1u64 << 31) - 1
        };
        if v > limit {
            let wrapped = v as u32 as i32;
            let shown = if negated {
                wrapped.wrapping_neg()
            } else {
                wrapped
            };
            let sign = if negated { "-" } else { "" };
            self.warn(
                "overflow",
                format!("integer constant {sign}{v} does not fit in `int`; it becomes {shown}"),
                span,
            );
        }
    }

    /// Warnings once a function body is checked: a non-void function (other than
    /// `main`, which returns 0 as in C) whose end is reachable, then its unused
    /// parameters and local variables, in the order they were declared.
    pub fn function_end_warnings(&mut self, f: &ast::FuncDef, body: &[Stmt]) {
        let name = self.text(&f.name);
        if self.ret != RetTy::Void && name != "main" && can_reach_end(body) {
            let end = f.body.span.end.saturating_sub(1) as usize;
            self.warn(
                "return-type",
                format!(
                    "control can reach the end of non-void function `{name}` (it then returns 0)"
                ),
                Span::new(end, end + 1),
            );
        }
        for (local, &used) in self.locals.iter().zip(&self.used) {
            if used {
                continue;
            }
            let (flag, what) = if local.is_param {
                ("unused-parameter", "parameter")
            } else {
                ("unused-variable", "variable")
            };
            let msg = format!("unused {what} `{}`", local.name);
            self.diags.warning(flag, msg, local.span);
        }
    }
}
