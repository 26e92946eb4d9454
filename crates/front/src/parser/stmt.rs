//! Statements and blocks.

use super::{Fail, PResult, Parser};
use crate::ast::*;
use crate::lexer::Tok;

impl<'a> Parser<'a> {
    pub(super) fn block(&mut self) -> PResult<Block> {
        self.enter()?;
        let open = self.expect(Tok::LBrace)?.span;
        let mut items = Vec::new();
        while !self.at(Tok::RBrace) && !self.at(Tok::Eof) {
            let before = self.pos;
            let depth = self.depth;
            match self.block_item() {
                Ok(it) => items.push(it),
                Err(Fail) => {
                    if self.stop() {
                        return Err(Fail);
                    }
                    self.depth = depth;
                    self.sync_stmt();
                    if self.pos == before && !self.at(Tok::RBrace) {
                        self.bump();
                    }
                }
            }
        }
        let close = self.expect_closing(Tok::RBrace, open)?.span;
        self.leave();
        Ok(Block {
            items,
            span: open.to(close),
        })
    }

    pub(super) fn block_item(&mut self) -> PResult<BlockItem> {
        match self.peek().tok {
            Tok::Const | Tok::Int | Tok::Float => Ok(BlockItem::Decl(self.decl()?)),
            Tok::Void => {
                let sp = self.peek().span;
                self.error("variables cannot be declared `void`", sp)
            }
            _ => Ok(BlockItem::Stmt(self.stmt()?)),
        }
    }

    pub(super) fn stmt(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let s = self.stmt_inner()?;
        self.leave();
        Ok(s)
    }

    pub(super) fn stmt_inner(&mut self) -> PResult<Stmt> {
        let t = self.peek();
        match t.tok {
            Tok::LBrace => Ok(Stmt::Block(self.block()?)),
            Tok::Semi => {
                self.bump();
                Ok(Stmt::Expr(None, t.span))
            }
            Tok::If => {
                self.bump();
                let open = self.expect(Tok::LParen)?.span;
                let cond = self.expr()?;
                self.expect_closing(Tok::RParen, open)?;
                let then = Box::new(self.stmt()?);
                let els = if self.eat(Tok::Else) {
                    Some(Box::new(self.stmt()?))
                } else {
                    None
                };
                Ok(Stmt::If {
                    cond,
                    then,
                    els,
                    span: t.span.to(self.prev_span()),
                })
            }
            Tok::While => {
                self.bump();
                let open = self.expect(Tok::LParen)?.span;
                let cond = self.expr()?;
                self.expect_closing(Tok::RParen, open)?;
                let body = Box::new(self.stmt()?);
                Ok(Stmt::While {
                    cond,
                    body,
                    span: t.span.to(self.prev_span()),
                })
            }
            Tok::Break => {
                self.bump();
                self.expect(Tok::Semi)?;
                Ok(Stmt::Break(t.span))
            }
            Tok::Continue => {
                self.bump();
                self.expect(Tok::Semi)?;
                Ok(Stmt::Continue(t.span))
            }
            Tok::Return => {
                self.bump();
                let value = if self.at(Tok::Semi) {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect(Tok::Semi)?;
                Ok(Stmt::Return(value, t.span.to(self.prev_span())))
            }
            _ => {
                let e = self.expr()?;
                if self.eat(Tok::Assign) {
                    let rhs = self.expr()?;
                    self.expect(Tok::Semi)?;
                    let span = e.span.to(self.prev_span());
                    match e.kind {
                        ExprKind::LVal(lhs) => Ok(Stmt::Assign { lhs, rhs, span }),
                        _ => self.error("expression is not assignable", e.span),
                    }
                } else {
                    self.expect(Tok::Semi)?;
                    let span = e.span.to(self.prev_span());
                    Ok(Stmt::Expr(Some(e), span))
                }
            }
        }
    }
}
