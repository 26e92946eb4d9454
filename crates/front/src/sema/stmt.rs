//! Statement checking.

use super::{Sema, R};
use crate::ast;
use crate::tast::*;

impl<'a> Sema<'a> {
    /// Checks the items of a block (in the current scope, which the caller opened).
    pub fn block_items(&mut self, items: &'a [ast::BlockItem]) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(items.len());
        // The `return`, `break` or `continue` that ended the block early, and whether
        // the code after it was warned about (once per block).
        let mut jumped: Option<&str> = None;
        let mut warned = false;
        for item in items {
            if self.diags.is_full() {
                break;
            }
            let empty = matches!(item, ast::BlockItem::Stmt(ast::Stmt::Expr(None, _)));
            if let (Some(kw), false, false) = (jumped, warned, empty) {
                self.warn(
                    "unreachable-code",
                    format!("code after `{kw}` is never executed"),
                    super::warn::item_span(item),
                );
                warned = true;
            }
            let errors_before = self.diags.len();
            match item {
                ast::BlockItem::Decl(d) => self.local_decl(d, &mut out),
                ast::BlockItem::Stmt(s) => {
                    if let Ok(Some(s)) = self.stmt(s) {
                        out.push(s);
                    }
                }
            }
            // A jump that was itself an error (`break` outside a loop) ends nothing.
            if jumped.is_none() && self.diags.len() == errors_before {
                jumped = super::warn::jump_keyword(item);
            }
        }
        out
    }

    /// Checks a statement; `None` for the empty statement.
    fn stmt(&mut self, s: &'a ast::Stmt) -> R<Option<Stmt>> {
        Ok(Some(match s {
            ast::Stmt::Assign { lhs, rhs, .. } => {
                let l = self.assign_target(lhs);
                let info = l.as_ref().ok().map(|l| l.ty);
                let r = match info {
                    Some(ty) => self.value_as(rhs, ty),
                    None => self.value(rhs),
                };
                Stmt::Assign { lhs: l?, rhs: r? }
            }
            ast::Stmt::Expr(None, _) => return Ok(None),
            ast::Stmt::Expr(Some(e), _) => {
                let v = self.expr(e)?;
                if v.ty == Type::Str {
                    return self.err(
                        "a string literal can only be the first argument of `putf`",
                        e.span,
                    );
                }
                Stmt::Expr(v)
            }
            ast::Stmt::Block(b) => {
                self.scopes.push();
                let body = self.block_items(&b.items);
                self.scopes.pop();
                Stmt::Block(body)
            }
            ast::Stmt::If {
                cond, then, els, ..
            } => {
                let c = self.value(cond);
                let t = self.stmt(then);
                let e = match els {
                    Some(e) => self.stmt(e).map(Some),
                    None => Ok(None),
                };
                Stmt::If {
                    cond: c?,
                    then: Box::new(t?.unwrap_or(Stmt::Block(Vec::new()))),
                    els: e?.flatten().map(Box::new),
                }
            }
            ast::Stmt::While { cond, body, .. } => {
                let c = self.value(cond);
                self.loops += 1;
                let b = self.stmt(body);
                self.loops -= 1;
                Stmt::While {
                    cond: c?,
                    body: Box::new(b?.unwrap_or(Stmt::Block(Vec::new()))),
                }
            }
            ast::Stmt::Break(sp) => {
                if self.loops == 0 {
                    return self.err("`break` statement not in a loop", *sp);
                }
                Stmt::Break
            }
            ast::Stmt::Continue(sp) => {
                if self.loops == 0 {
                    return self.err("`continue` statement not in a loop", *sp);
                }
                Stmt::Continue
            }
            ast::Stmt::Return(value, sp) => match (value, self.ret) {
                (None, RetTy::Void) => Stmt::Return(None),
                (None, _) => {
                    return self.err(
                        format!(
                            "non-void function `{}` should return a value",
                            self.func_name
                        ),
                        *sp,
                    )
                }
                (Some(e), RetTy::Void) => {
                    let _ = self.expr(e);
                    return self.err(
                        format!(
                            "void function `{}` should not return a value",
                            self.func_name
                        ),
                        e.span,
                    );
                }
                (Some(e), RetTy::Int) => Stmt::Return(Some(self.value_as(e, ScalarTy::Int)?)),
                (Some(e), RetTy::Float) => Stmt::Return(Some(self.value_as(e, ScalarTy::Float)?)),
            },
        }))
    }

    /// Checks the target of an assignment: a non-const scalar or fully indexed element.
    fn assign_target(&mut self, lv: &'a ast::LVal) -> R<LVal> {
        let info = self.resolve_var(&lv.name)?;
        let indices = self.lval_indices(&info, lv)?;
        if info.is_const {
            return self.err(
                format!("cannot assign to constant `{}`", self.text(&lv.name)),
                lv.span,
            );
        }
        if indices.len() < info.shape.rank() {
            return self.err(
                format!("cannot assign to array `{}`", self.text(&lv.name)),
                lv.span,
            );
        }
        Ok(LVal {
            base: info.var,
            indices,
            ty: info.ty,
            span: lv.span,
        })
    }
}
