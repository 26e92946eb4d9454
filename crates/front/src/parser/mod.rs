//! The parser: tokens to the untyped [`ast`](crate::ast), by recursive descent with
//! precedence climbing for binary operators.
//!
//! Errors are reported to [`Diagnostics`]; the parser then resynchronises at the next
//! statement or top-level item, so that several syntax errors are reported at once.
//! Nesting (parentheses, unary operators, blocks, statements and initialiser braces) is
//! limited to [`MAX_DEPTH`] levels: deeper input gets a clean "nesting too deep" error
//! instead of exhausting the stack. The length of a chain of binary operators is not
//! nesting: every stage walks such chains iteratively. Parsing up to
//! the limit needs a few MB of stack in debug builds; run on a thread with a large
//! stack (the driver uses 256 MB).

use crate::ast::*;
use crate::diag::Diagnostics;
use crate::lexer::{Lexed, Tok, Token};

mod expr;
mod stmt;

/// Deepest nesting accepted (see the module doc).
pub const MAX_DEPTH: u32 = 20_000;

/// Marker for "an error was reported; unwind to the nearest recovery point".
#[derive(Debug)]
struct Fail;

type PResult<T> = Result<T, Fail>;

/// Parses a lexed file. Returns the tree even when errors were reported (the items that
/// could not be parsed are missing from it).
pub fn parse(source: &str, lexed: &Lexed, diags: &mut Diagnostics) -> CompUnit {
    let mut p = Parser {
        src: source,
        toks: &lexed.tokens,
        strings: &lexed.strings,
        pos: 0,
        depth: 0,
        fatal: false,
        diags,
    };
    p.comp_unit()
}

struct Parser<'a> {
    src: &'a str,
    toks: &'a [Token],
    strings: &'a [Vec<u8>],
    pos: usize,
    depth: u32,
    /// Set after "nesting too deep": stop parsing altogether.
    fatal: bool,
    diags: &'a mut Diagnostics,
}

impl<'a> Parser<'a> {
    // ----- token helpers -----

    fn peek(&self) -> Token {
        self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn nth(&self, n: usize) -> Tok {
        self.toks[(self.pos + n).min(self.toks.len() - 1)].tok
    }

    fn at(&self, t: Tok) -> bool {
        self.peek().tok == t
    }

    fn bump(&mut self) -> Token {
        let t = self.peek();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, t: Tok) -> bool {
        if self.at(t) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// End of the previous token (for "expected `;`" errors).
    fn prev_end(&self) -> Span {
        match self.pos.checked_sub(1) {
            Some(i) => Span {
                start: self.toks[i].span.end,
                end: self.toks[i].span.end,
            },
            None => Span::default(),
        }
    }

    fn prev_span(&self) -> Span {
        match self.pos.checked_sub(1) {
            Some(i) => self.toks[i].span,
            None => Span::default(),
        }
    }

    fn error<T>(&mut self, msg: impl Into<String>, span: Span) -> PResult<T> {
        self.diags.error(msg, span);
        Err(Fail)
    }

    fn expect(&mut self, t: Tok) -> PResult<Token> {
        if self.at(t) {
            return Ok(self.bump());
        }
        if t == Tok::Semi || self.at(Tok::Eof) {
            let sp = self.prev_end();
            if t != Tok::Semi {
                return self.error(format!("expected {}, found end of file", t.describe()), sp);
            }
            return self.error("expected `;`", sp);
        }
        let found = self.peek();
        self.error(
            format!("expected {}, found {}", t.describe(), found.tok.describe()),
            found.span,
        )
    }

    /// Expects `t`, which closes the bracket opened at `open`; a failure gets a note
    /// pointing at that opening bracket ("to match this `{`").
    fn expect_closing(&mut self, t: Tok, open: Span) -> PResult<Token> {
        let r = self.expect(t);
        if r.is_err() {
            let what = match t {
                Tok::RBrace => "`{`",
                Tok::RParen => "`(`",
                _ => "`[`",
            };
            self.diags.note(format!("to match this {what}"), open);
        }
        r
    }

    fn ident(&mut self) -> PResult<Ident> {
        let t = self.peek();
        if t.tok != Tok::Ident {
            return self.error(
                format!("expected identifier, found {}", t.tok.describe()),
                t.span,
            );
        }
        self.bump();
        Ok(Ident { span: t.span })
    }

    /// Enters one nesting level.
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.fatal = true;
            let sp = self.peek().span;
            return self.error(format!("nesting too deep (limit {MAX_DEPTH} levels)"), sp);
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Skips to a plausible statement start after an error inside a block: past the next
    /// `;` at this brace level, or up to (not past) the `}` closing the block.
    fn sync_stmt(&mut self) {
        let mut braces = 0u32;
        loop {
            match self.peek().tok {
                Tok::Eof => return,
                Tok::Semi if braces == 0 => {
                    self.bump();
                    return;
                }
                Tok::LBrace => braces += 1,
                Tok::RBrace => {
                    if braces == 0 {
                        // Left for the enclosing block (which then ends).
                        return;
                    }
                    braces -= 1;
                    if braces == 0 {
                        self.bump();
                        return;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// Skips to the next top-level item after an error: past a `;` or balanced `}` at
    /// brace level 0.
    fn sync_item(&mut self) {
        let start = self.pos;
        let mut braces = 0u32;
        loop {
            match self.peek().tok {
                Tok::Eof => return,
                Tok::Semi if braces == 0 => {
                    self.bump();
                    return;
                }
                Tok::LBrace => braces += 1,
                Tok::RBrace => {
                    braces = braces.saturating_sub(1);
                    if braces == 0 {
                        self.bump();
                        return;
                    }
                }
                Tok::Int | Tok::Float | Tok::Void | Tok::Const
                    if braces == 0 && self.pos > start =>
                {
                    return
                }
                _ => {}
            }
            self.bump();
        }
    }

    fn stop(&self) -> bool {
        self.fatal || self.diags.is_full()
    }

    // ----- items -----

    fn comp_unit(&mut self) -> CompUnit {
        let mut items = Vec::new();
        while !self.at(Tok::Eof) && !self.stop() {
            let before = self.pos;
            self.depth = 0;
            match self.item() {
                Ok(it) => items.push(it),
                Err(Fail) => {
                    if self.stop() {
                        break;
                    }
                    self.sync_item();
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        CompUnit { items }
    }

    fn item(&mut self) -> PResult<Item> {
        let t = self.peek();
        match t.tok {
            Tok::Const => Ok(Item::Decl(self.decl()?)),
            Tok::Int | Tok::Float | Tok::Void => {
                if self.nth(1) == Tok::Ident && self.nth(2) == Tok::LParen {
                    Ok(Item::Func(self.func_def()?))
                } else if t.tok == Tok::Void {
                    self.error("variables cannot be declared `void`", t.span)
                } else {
                    Ok(Item::Decl(self.decl()?))
                }
            }
            _ => self.error(
                format!(
                    "expected a declaration or function definition, found {}",
                    t.tok.describe()
                ),
                t.span,
            ),
        }
    }

    fn btype(&mut self) -> PResult<BType> {
        let t = self.peek();
        match t.tok {
            Tok::Int => {
                self.bump();
                Ok(BType::Int)
            }
            Tok::Float => {
                self.bump();
                Ok(BType::Float)
            }
            _ => self.error(
                format!("expected `int` or `float`, found {}", t.tok.describe()),
                t.span,
            ),
        }
    }

    fn decl(&mut self) -> PResult<Decl> {
        let start = self.peek().span;
        let is_const = self.eat(Tok::Const);
        let ty = self.btype()?;
        let mut defs = vec![self.var_def(is_const)?];
        while self.eat(Tok::Comma) {
            defs.push(self.var_def(is_const)?);
        }
        self.expect(Tok::Semi)?;
        Ok(Decl {
            is_const,
            ty,
            defs,
            span: start.to(self.prev_span()),
        })
    }

    fn var_def(&mut self, is_const: bool) -> PResult<VarDef> {
        let name = self.ident()?;
        let mut dims = Vec::new();
        while self.eat(Tok::LBracket) {
            let open = self.prev_span();
            dims.push(self.expr()?);
            self.expect_closing(Tok::RBracket, open)?;
        }
        let init = if self.eat(Tok::Assign) {
            Some(self.init_val()?)
        } else {
            if is_const {
                let sp = name.span;
                self.diags.error(
                    format!("constant `{}` must be initialised", name.text(self.src)),
                    sp,
                );
            }
            None
        };
        Ok(VarDef {
            span: name.span.to(self.prev_span()),
            name,
            dims,
            init,
        })
    }

    fn init_val(&mut self) -> PResult<InitVal> {
        if !self.at(Tok::LBrace) {
            return Ok(InitVal::Expr(self.expr()?));
        }
        self.enter()?;
        let open = self.bump().span;
        let mut items = Vec::new();
        while !self.at(Tok::RBrace) {
            items.push(self.init_val()?);
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        let close = self.expect_closing(Tok::RBrace, open)?.span;
        self.leave();
        Ok(InitVal::List(items, open.to(close)))
    }

    fn func_def(&mut self) -> PResult<FuncDef> {
        let start = self.peek().span;
        let ret = match self.bump().tok {
            Tok::Int => FuncType::Int,
            Tok::Float => FuncType::Float,
            _ => FuncType::Void,
        };
        let name = self.ident()?;
        let open = self.expect(Tok::LParen)?.span;
        let mut params = Vec::new();
        if self.at(Tok::Void) && self.nth(1) == Tok::RParen {
            self.bump();
        } else if !self.at(Tok::RParen) {
            loop {
                params.push(self.param()?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        self.expect_closing(Tok::RParen, open)?;
        let body = self.block()?;
        Ok(FuncDef {
            span: start.to(body.span),
            ret,
            name,
            params,
            body,
        })
    }

    fn param(&mut self) -> PResult<Param> {
        let start = self.peek().span;
        let ty = self.btype()?;
        let name = self.ident()?;
        let dims = if self.eat(Tok::LBracket) {
            if !self.at(Tok::RBracket) {
                // `int a[10]` as a parameter: C ignores the size.
                self.expr()?;
            }
            self.expect(Tok::RBracket)?;
            let mut inner = Vec::new();
            while self.eat(Tok::LBracket) {
                inner.push(self.expr()?);
                self.expect(Tok::RBracket)?;
            }
            Some(inner)
        } else {
            None
        };
        Ok(Param {
            ty,
            name,
            dims,
            span: start.to(self.prev_span()),
        })
    }
}
