//! Expressions: precedence climbing for binary operators.

use super::{PResult, Parser};
use crate::ast::*;
use crate::lexer::Tok;

impl<'a> Parser<'a> {
    pub(super) fn expr(&mut self) -> PResult<Expr> {
        self.binary(1)
    }

    pub(super) fn bin_op(t: Tok) -> Option<BinOp> {
        Some(match t {
            Tok::OrOr => BinOp::Or,
            Tok::AndAnd => BinOp::And,
            Tok::EqEq => BinOp::Eq,
            Tok::Ne => BinOp::Ne,
            Tok::Lt => BinOp::Lt,
            Tok::Le => BinOp::Le,
            Tok::Gt => BinOp::Gt,
            Tok::Ge => BinOp::Ge,
            Tok::Plus => BinOp::Add,
            Tok::Minus => BinOp::Sub,
            Tok::Star => BinOp::Mul,
            Tok::Slash => BinOp::Div,
            Tok::Percent => BinOp::Rem,
            _ => return None,
        })
    }

    /// Precedence climbing: parses operators binding at least as tightly as `min_prec`.
    /// A chain of operators (`a + b + ... + z`) is a loop here and a left-deep tree
    /// after, which every later stage walks iteratively: its length is not nesting,
    /// and is not limited.
    pub(super) fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        while let Some(op) = Self::bin_op(self.peek().tok) {
            let prec = op.precedence();
            if prec < min_prec {
                break;
            }
            self.bump();
            let rhs = self.binary(prec + 1)?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
        }
        Ok(lhs)
    }

    pub(super) fn unary(&mut self) -> PResult<Expr> {
        self.enter()?;
        let t = self.peek();
        let op = match t.tok {
            Tok::Plus => Some(UnOp::Plus),
            Tok::Minus => Some(UnOp::Neg),
            Tok::Not => Some(UnOp::Not),
            _ => None,
        };
        let e = match op {
            Some(op) => {
                self.bump();
                let operand = self.unary()?;
                let span = t.span.to(operand.span);
                Expr {
                    kind: ExprKind::Unary(op, Box::new(operand)),
                    span,
                }
            }
            None => self.primary()?,
        };
        self.leave();
        Ok(e)
    }

    pub(super) fn primary(&mut self) -> PResult<Expr> {
        let t = self.peek();
        let kind = match t.tok {
            Tok::LParen => {
                self.bump();
                let e = self.expr()?;
                let close = self.expect_closing(Tok::RParen, t.span)?.span;
                return Ok(Expr {
                    kind: e.kind,
                    span: t.span.to(close),
                });
            }
            Tok::IntLit(v) => {
                self.bump();
                ExprKind::IntLit(v)
            }
            Tok::FloatLit(v) => {
                self.bump();
                ExprKind::FloatLit(v)
            }
            Tok::Str(i) => {
                self.bump();
                ExprKind::StrLit(self.strings.get(i as usize).cloned().unwrap_or_default())
            }
            Tok::Ident => {
                let name = self.ident()?;
                if self.eat(Tok::LParen) {
                    let open = self.prev_span();
                    let mut args = Vec::new();
                    if !self.at(Tok::RParen) {
                        loop {
                            args.push(self.expr()?);
                            if !self.eat(Tok::Comma) {
                                break;
                            }
                        }
                    }
                    let close = self.expect_closing(Tok::RParen, open)?.span;
                    return Ok(Expr {
                        span: name.span.to(close),
                        kind: ExprKind::Call { name, args },
                    });
                }
                let mut indices = Vec::new();
                while self.eat(Tok::LBracket) {
                    let open = self.prev_span();
                    indices.push(self.expr()?);
                    self.expect_closing(Tok::RBracket, open)?;
                }
                let span = name.span.to(self.prev_span());
                return Ok(Expr {
                    kind: ExprKind::LVal(LVal {
                        name,
                        indices,
                        span,
                    }),
                    span,
                });
            }
            _ => {
                return self.error(
                    format!("expected expression, found {}", t.tok.describe()),
                    t.span,
                )
            }
        };
        Ok(Expr { kind, span: t.span })
    }
}
