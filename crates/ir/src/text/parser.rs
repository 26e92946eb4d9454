//! The parser of textual IR, in two phases. A recursive-descent pass over the tokens
//! builds a syntax tree that keeps names as written, with positions; resolution then
//! creates the [`Module`]: globals and function signatures first (so any item may refer
//! to any other), then each body in two sweeps — blocks, block parameters and
//! instructions with placeholder operands (creating every named value), then the real
//! operands — so values and blocks may be used before their definition.

use super::lexer::{tokenize, Tok, Token};
use super::{ParseError, Pos};
use crate::entities::{Block, FuncId, GlobalId, Value};
use crate::function::{Function, Signature};
use crate::inst::{BinOp, BlockCall, CmpOp, InstKind, UnOp};
use crate::module::{GlobalData, GlobalInit, Module};
use crate::types::Type;
use cranelift_entity::EntityRef;
use rustc_hash::FxHashMap;

/// Parses a whole module. Errors carry the line and column of the offending token.
pub fn parse_module(src: &str) -> Result<Module, ParseError> {
    let toks = tokenize(src)?;
    let items = Parser { toks, i: 0 }.module()?;
    resolve(items)
}

// ---- syntax tree ------------------------------------------------------------

/// A name as written, with its position.
#[derive(Clone, Debug)]
struct Name {
    text: String,
    pos: Pos,
}

/// A literal in an operand or initialiser position.
#[derive(Copy, Clone, Debug)]
enum Lit {
    Int(i64),
    /// Float bit pattern.
    Float(u32),
}

#[derive(Clone, Debug)]
enum Operand {
    Local(Name),
    Global(Name),
    Lit(Lit, Pos),
}

#[derive(Clone, Debug)]
struct Target {
    block: Name,
    args: Vec<Operand>,
}

#[derive(Clone, Debug)]
enum Op {
    Binary(BinOp, Operand, Operand),
    Cmp(CmpOp, Operand, Operand),
    Unary(UnOp, Operand),
    Alloc(Type, u32),
    Load(Type, Operand),
    Store(Operand, Operand),
    Gep(Operand, Operand, u32),
    Call(Name, Vec<Operand>),
    Jump(Target),
    Br(Operand, Target, Target),
    Ret(Option<Operand>),
}

#[derive(Clone, Debug)]
struct InstSyn {
    result: Option<Name>,
    opcode: String,
    pos: Pos,
    op: Op,
}

#[derive(Clone, Debug)]
struct BlockSyn {
    name: Name,
    params: Vec<(Name, Type)>,
    insts: Vec<InstSyn>,
}

#[derive(Clone, Debug)]
enum InitSyn {
    Zero,
    Scalar(Lit, Pos),
    List(Vec<(Lit, Pos)>),
    Bytes(Vec<u8>),
}

#[derive(Clone, Debug)]
enum Item {
    Global {
        name: Name,
        elem: Type,
        len: u32,
        init: InitSyn,
    },
    Func {
        name: Name,
        sig: Signature,
        /// `None` for a declaration; otherwise the `{` position and the blocks.
        body: Option<(Pos, Vec<BlockSyn>)>,
    },
}

// ---- recursive descent ------------------------------------------------------

struct Parser {
    toks: Vec<Token>,
    i: usize,
}

type PResult<T> = Result<T, ParseError>;

impl Parser {
    fn peek(&self) -> &Token {
        // `tokenize` always ends with Eof, and `bump` never moves past it.
        &self.toks[self.i.min(self.toks.len() - 1)]
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].tok
    }

    fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if t.tok != Tok::Eof {
            self.i += 1;
        }
        t
    }

    fn err<T>(&self, what: &str) -> PResult<T> {
        let t = self.peek();
        Err(ParseError::new(
            t.pos,
            format!("expected {what}, found {}", t.tok.describe()),
        ))
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if &self.peek().tok == tok {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: &Tok) -> PResult<Pos> {
        if &self.peek().tok == tok {
            Ok(self.bump().pos)
        } else {
            self.err(&tok.describe())
        }
    }

    fn is_keyword(&self, kw: &str) -> bool {
        matches!(&self.peek().tok, Tok::Ident(s) if s == kw)
    }

    fn global_name(&mut self) -> PResult<Name> {
        match &self.peek().tok {
            Tok::Global(s) => {
                let text = s.clone();
                let pos = self.bump().pos;
                Ok(Name { text, pos })
            }
            _ => self.err("an `@name`"),
        }
    }

    fn local_name(&mut self) -> PResult<Name> {
        match &self.peek().tok {
            Tok::Local(s) => {
                let text = s.clone();
                let pos = self.bump().pos;
                Ok(Name { text, pos })
            }
            _ => self.err("a `%name`"),
        }
    }

    fn block_name(&mut self) -> PResult<Name> {
        match &self.peek().tok {
            Tok::Ident(s) => {
                let text = s.clone();
                let pos = self.bump().pos;
                Ok(Name { text, pos })
            }
            _ => self.err("a block name"),
        }
    }

    fn ty(&mut self) -> PResult<Type> {
        if let Tok::Ident(s) = &self.peek().tok {
            if let Some(t) = Type::from_name(s) {
                self.bump();
                return Ok(t);
            }
        }
        self.err("a type")
    }

    /// An unsigned 32-bit count (array length, stride).
    fn count(&mut self, what: &str) -> PResult<u32> {
        let t = self.peek().clone();
        match t.tok {
            Tok::Int(v) => match u32::try_from(v) {
                Ok(n) => {
                    self.bump();
                    Ok(n)
                }
                Err(_) => Err(ParseError::new(
                    t.pos,
                    format!("{what} {v} is out of range (0 to 4294967295)"),
                )),
            },
            _ => self.err(what),
        }
    }

    /// `ty` or `[ty; n]`.
    fn sized_type(&mut self) -> PResult<(Type, u32)> {
        if self.eat(&Tok::LBracket) {
            let ty = self.ty()?;
            self.expect(&Tok::Semi)?;
            let n = self.count("an element count")?;
            self.expect(&Tok::RBracket)?;
            Ok((ty, n))
        } else {
            Ok((self.ty()?, 1))
        }
    }

    fn literal(&mut self) -> Option<(Lit, Pos)> {
        let t = self.peek().clone();
        let lit = match &t.tok {
            Tok::Int(v) => Lit::Int(*v),
            Tok::Float(bits) => Lit::Float(*bits),
            Tok::Ident(s) if s == "inf" => Lit::Float(f32::INFINITY.to_bits()),
            Tok::Ident(s) if s == "nan" => Lit::Float(0x7FC0_0000),
            _ => return None,
        };
        self.bump();
        Some((lit, t.pos))
    }

    fn operand(&mut self) -> PResult<Operand> {
        if let Some((lit, pos)) = self.literal() {
            return Ok(Operand::Lit(lit, pos));
        }
        match &self.peek().tok {
            Tok::Local(_) => Ok(Operand::Local(self.local_name()?)),
            Tok::Global(_) => Ok(Operand::Global(self.global_name()?)),
            _ => self.err("an operand"),
        }
    }

    /// `(a, b, ...)`, possibly empty.
    fn operand_list(&mut self) -> PResult<Vec<Operand>> {
        self.expect(&Tok::LParen)?;
        let mut args = Vec::new();
        if self.eat(&Tok::RParen) {
            return Ok(args);
        }
        loop {
            args.push(self.operand()?);
            if self.eat(&Tok::RParen) {
                return Ok(args);
            }
            self.expect(&Tok::Comma)?;
        }
    }

    fn target(&mut self) -> PResult<Target> {
        let block = self.block_name()?;
        let args = if self.peek().tok == Tok::LParen {
            self.operand_list()?
        } else {
            Vec::new()
        };
        Ok(Target { block, args })
    }

    fn module(mut self) -> PResult<Vec<Item>> {
        let mut items = Vec::new();
        loop {
            let t = self.peek().clone();
            match &t.tok {
                Tok::Eof => return Ok(items),
                Tok::Ident(kw) if kw == "global" => {
                    self.bump();
                    items.push(self.global()?);
                }
                Tok::Ident(kw) if kw == "declare" || kw == "func" => {
                    let is_def = kw == "func";
                    self.bump();
                    items.push(self.function(is_def)?);
                }
                _ => return self.err("`global`, `declare` or `func`"),
            }
        }
    }

    fn global(&mut self) -> PResult<Item> {
        let name = self.global_name()?;
        self.expect(&Tok::Colon)?;
        let (elem, len) = self.sized_type()?;
        self.expect(&Tok::Equals)?;
        let init = if self.is_keyword("zeroinit") {
            self.bump();
            InitSyn::Zero
        } else if let Some((lit, pos)) = self.literal() {
            InitSyn::Scalar(lit, pos)
        } else if let Tok::Bytes(b) = &self.peek().tok {
            let b = b.clone();
            self.bump();
            InitSyn::Bytes(b)
        } else if self.eat(&Tok::LBracket) {
            let mut elems = Vec::new();
            if !self.eat(&Tok::RBracket) {
                loop {
                    match self.literal() {
                        Some(l) => elems.push(l),
                        None => return self.err("a literal"),
                    }
                    if self.eat(&Tok::RBracket) {
                        break;
                    }
                    self.expect(&Tok::Comma)?;
                }
            }
            InitSyn::List(elems)
        } else {
            return self.err("an initialiser (`zeroinit`, a literal, `[...]` or `c\"...\"`)");
        };
        Ok(Item::Global {
            name,
            elem,
            len,
            init,
        })
    }

    fn function(&mut self, is_def: bool) -> PResult<Item> {
        let name = self.global_name()?;
        let mut sig = Signature::default();
        self.expect(&Tok::LParen)?;
        if !self.eat(&Tok::RParen) {
            loop {
                if self.eat(&Tok::Ellipsis) {
                    sig.variadic = true;
                    self.expect(&Tok::RParen)?;
                    break;
                }
                sig.params.push(self.ty()?);
                if self.eat(&Tok::RParen) {
                    break;
                }
                self.expect(&Tok::Comma)?;
            }
        }
        sig.ret = if self.eat(&Tok::Arrow) {
            self.ty()?
        } else {
            Type::Void
        };
        let body = if is_def {
            let open = self.expect(&Tok::LBrace)?;
            let mut blocks = Vec::new();
            while !self.eat(&Tok::RBrace) {
                blocks.push(self.block()?);
            }
            Some((open, blocks))
        } else {
            None
        };
        Ok(Item::Func { name, sig, body })
    }

    fn block(&mut self) -> PResult<BlockSyn> {
        let is_label = matches!(self.peek().tok, Tok::Ident(_))
            && matches!(self.peek_at(1), Tok::Colon | Tok::LParen);
        if !is_label {
            return self.err("a block label");
        }
        let name = self.block_name()?;
        let mut params = Vec::new();
        if self.eat(&Tok::LParen) && !self.eat(&Tok::RParen) {
            loop {
                let p = self.local_name()?;
                self.expect(&Tok::Colon)?;
                params.push((p, self.ty()?));
                if self.eat(&Tok::RParen) {
                    break;
                }
                self.expect(&Tok::Comma)?;
            }
        }
        self.expect(&Tok::Colon)?;
        let mut insts = Vec::new();
        loop {
            let starts_label = matches!(self.peek().tok, Tok::Ident(_))
                && matches!(self.peek_at(1), Tok::Colon | Tok::LParen);
            match &self.peek().tok {
                Tok::RBrace | Tok::Eof => break,
                Tok::Ident(_) if starts_label => break,
                _ => insts.push(self.inst()?),
            }
        }
        Ok(BlockSyn {
            name,
            params,
            insts,
        })
    }

    fn inst(&mut self) -> PResult<InstSyn> {
        let result = if let Tok::Local(_) = self.peek().tok {
            let r = self.local_name()?;
            self.expect(&Tok::Equals)?;
            Some(r)
        } else {
            None
        };
        let t = self.peek().clone();
        let Tok::Ident(opcode) = t.tok else {
            return self.err("an instruction");
        };
        let pos = t.pos;
        let line = pos.line;
        self.bump();
        let op = if let Some(&op) = BinOp::ALL.iter().find(|o| o.name() == opcode) {
            let a = self.operand()?;
            self.expect(&Tok::Comma)?;
            Op::Binary(op, a, self.operand()?)
        } else if let Some(&op) = CmpOp::ALL.iter().find(|o| o.name() == opcode) {
            let a = self.operand()?;
            self.expect(&Tok::Comma)?;
            Op::Cmp(op, a, self.operand()?)
        } else if let Some(&op) = UnOp::ALL.iter().find(|o| o.name() == opcode) {
            Op::Unary(op, self.operand()?)
        } else {
            match opcode.as_str() {
                "alloc" => {
                    let (ty, n) = self.sized_type()?;
                    Op::Alloc(ty, n)
                }
                "load" => {
                    let ty = self.ty()?;
                    self.expect(&Tok::Comma)?;
                    Op::Load(ty, self.operand()?)
                }
                "store" => {
                    let v = self.operand()?;
                    self.expect(&Tok::Comma)?;
                    Op::Store(v, self.operand()?)
                }
                "gep" => {
                    let base = self.operand()?;
                    self.expect(&Tok::Comma)?;
                    let index = self.operand()?;
                    self.expect(&Tok::Comma)?;
                    Op::Gep(base, index, self.count("a stride")?)
                }
                "call" => {
                    let callee = self.global_name()?;
                    Op::Call(callee, self.operand_list()?)
                }
                "jump" => Op::Jump(self.target()?),
                "br" => {
                    let cond = self.operand()?;
                    self.expect(&Tok::Comma)?;
                    let t = self.target()?;
                    self.expect(&Tok::Comma)?;
                    Op::Br(cond, t, self.target()?)
                }
                "ret" => {
                    // A value follows only on the same line: `ret` then a new line
                    // starting with `%x = ...` is a `ret` without a value.
                    let next = self.peek();
                    if next.pos.line == line && !matches!(next.tok, Tok::RBrace | Tok::Eof) {
                        Op::Ret(Some(self.operand()?))
                    } else {
                        Op::Ret(None)
                    }
                }
                _ => {
                    return Err(ParseError::new(
                        pos,
                        format!("unknown instruction `{opcode}`"),
                    ))
                }
            }
        };
        Ok(InstSyn {
            result,
            opcode,
            pos,
            op,
        })
    }
}

// ---- resolution -------------------------------------------------------------

fn int_in_i32(v: i64, pos: Pos) -> PResult<i32> {
    i32::try_from(v)
        .map_err(|_| ParseError::new(pos, format!("integer literal {v} is out of the i32 range")))
}

/// The stored bit pattern of one element of a global of element type `elem`.
fn init_word(elem: Type, lit: Lit, pos: Pos) -> PResult<u32> {
    match (elem, lit) {
        (Type::F32, Lit::Float(bits)) => Ok(bits),
        // Integers in float data mean the float of that value: `[1, 2.5]`.
        (Type::F32, Lit::Int(v)) => Ok((v as f32).to_bits()),
        (Type::I8, Lit::Int(v)) if (-128..=255).contains(&v) => Ok(v as u8 as u32),
        (Type::I8, Lit::Int(v)) => Err(ParseError::new(pos, format!("{v} does not fit in an i8"))),
        (Type::I32 | Type::Ptr, Lit::Int(v)) => Ok(int_in_i32(v, pos)? as u32),
        (Type::Void, _) => Err(ParseError::new(pos, "a void global has no elements")),
        (Type::I64, _) => Err(ParseError::new(pos, "i64 values cannot be in memory")),
        (_, Lit::Float(_)) => Err(ParseError::new(
            pos,
            format!("a float literal cannot initialise {elem} data"),
        )),
    }
}

fn resolve_init(elem: Type, init: InitSyn) -> PResult<GlobalInit> {
    let words = |lits: &[(Lit, Pos)]| -> PResult<Vec<u32>> {
        lits.iter().map(|&(l, p)| init_word(elem, l, p)).collect()
    };
    Ok(match init {
        InitSyn::Zero => GlobalInit::Zero,
        InitSyn::Bytes(b) => GlobalInit::Bytes(b),
        InitSyn::Scalar(l, p) if elem == Type::I8 => {
            GlobalInit::Bytes(vec![init_word(elem, l, p)? as u8])
        }
        InitSyn::Scalar(l, p) => GlobalInit::Words(vec![init_word(elem, l, p)?]),
        InitSyn::List(ls) if elem == Type::I8 => {
            GlobalInit::Bytes(words(&ls)?.into_iter().map(|w| w as u8).collect())
        }
        InitSyn::List(ls) => GlobalInit::Words(words(&ls)?),
    })
}

fn resolve(items: Vec<Item>) -> PResult<Module> {
    let mut m = Module::new();
    let mut global_ids: FxHashMap<String, GlobalId> = FxHashMap::default();
    let mut func_ids: FxHashMap<String, FuncId> = FxHashMap::default();
    let mut bodies = Vec::new();
    for item in items {
        match item {
            Item::Global {
                name,
                elem,
                len,
                init,
            } => {
                if global_ids.contains_key(&name.text) {
                    return Err(ParseError::new(
                        name.pos,
                        format!("global @{} is defined twice", name.text),
                    ));
                }
                let init = resolve_init(elem, init)?;
                let id = m.add_global(GlobalData {
                    name: name.text.clone(),
                    elem,
                    len,
                    init,
                });
                global_ids.insert(name.text, id);
            }
            Item::Func { name, sig, body } => {
                if func_ids.contains_key(&name.text) {
                    return Err(ParseError::new(
                        name.pos,
                        format!("function @{} is defined twice", name.text),
                    ));
                }
                let id = m.add_function(Function::new(name.text.clone(), sig));
                func_ids.insert(name.text, id);
                if let Some(body) = body {
                    bodies.push((id, body));
                }
            }
        }
    }
    let names = ModuleNames {
        globals: &global_ids,
        funcs: &func_ids,
    };
    let rets: Vec<Type> = m.funcs.values().map(|f| f.sig.ret).collect();
    for (id, (open, blocks)) in bodies {
        build_body(&mut m.funcs[id], &names, &rets, open, blocks)?;
    }
    Ok(m)
}

struct ModuleNames<'a> {
    globals: &'a FxHashMap<String, GlobalId>,
    funcs: &'a FxHashMap<String, FuncId>,
}

/// Local name tables of one function body.
struct Scope {
    values: FxHashMap<String, Value>,
    blocks: FxHashMap<String, Block>,
}

impl Scope {
    fn value(&self, n: &Name) -> PResult<Value> {
        self.values
            .get(&n.text)
            .copied()
            .ok_or_else(|| ParseError::new(n.pos, format!("undefined value %{}", n.text)))
    }

    fn block(&self, n: &Name) -> PResult<Block> {
        self.blocks
            .get(&n.text)
            .copied()
            .ok_or_else(|| ParseError::new(n.pos, format!("undefined block {}", n.text)))
    }

    fn define(&mut self, n: &Name, v: Value) -> PResult<()> {
        if self.values.insert(n.text.clone(), v).is_some() {
            return Err(ParseError::new(
                n.pos,
                format!("value %{} is defined twice", n.text),
            ));
        }
        Ok(())
    }
}

fn callee(names: &ModuleNames, n: &Name) -> PResult<FuncId> {
    names
        .funcs
        .get(&n.text)
        .copied()
        .ok_or_else(|| ParseError::new(n.pos, format!("undefined function @{}", n.text)))
}

fn build_body(
    f: &mut Function,
    names: &ModuleNames,
    rets: &[Type],
    open: Pos,
    blocks: Vec<BlockSyn>,
) -> PResult<()> {
    if blocks.is_empty() {
        return Err(ParseError::new(
            open,
            "a function body needs at least one block",
        ));
    }
    let mut scope = Scope {
        values: FxHashMap::default(),
        blocks: FxHashMap::default(),
    };
    // Sweep 1: blocks, parameters, and instructions with placeholder operands, so
    // every name is defined before any operand is resolved.
    let mut insts = Vec::new();
    for bs in &blocks {
        let b = f.append_new_block();
        if scope.blocks.insert(bs.name.text.clone(), b).is_some() {
            return Err(ParseError::new(
                bs.name.pos,
                format!("block {} is defined twice", bs.name.text),
            ));
        }
        for (p, ty) in &bs.params {
            let v = f.append_block_param(b, *ty);
            scope.define(p, v)?;
        }
        for is in &bs.insts {
            let ty = match &is.op {
                Op::Binary(op, ..) => op.ty(),
                Op::Cmp(..) => Type::I32,
                Op::Unary(op, _) => op.result_ty(),
                Op::Alloc(..) | Op::Gep(..) => Type::Ptr,
                Op::Load(ty, _) => *ty,
                Op::Call(c, _) => rets[callee(names, c)?.index()],
                Op::Store(..) | Op::Jump(_) | Op::Br(..) | Op::Ret(_) => Type::Void,
            };
            match (&is.result, ty) {
                (Some(r), Type::Void) => {
                    let msg = if let Op::Call(c, _) = &is.op {
                        format!("@{} returns void, so its call has no result", c.text)
                    } else {
                        format!("`{}` has no result", is.opcode)
                    };
                    return Err(ParseError::new(r.pos, msg));
                }
                (None, t) if t != Type::Void && !matches!(is.op, Op::Call(..)) => {
                    return Err(ParseError::new(
                        is.pos,
                        format!("`{0}` produces a value: write `%name = {0} ...`", is.opcode),
                    ));
                }
                _ => {}
            }
            let placeholder = InstKind::Alloc {
                elem: Type::Void,
                len: 0,
            };
            let inst = f.append_inst(b, placeholder, ty);
            if let (Some(r), Some(v)) = (&is.result, f.inst_result(inst)) {
                scope.define(r, v)?;
            }
            insts.push(inst);
        }
    }
    // Sweep 2: the real operands.
    let all = blocks.iter().flat_map(|b| &b.insts);
    for (is, inst) in all.zip(insts) {
        let kind = resolve_op(f, names, &scope, &is.op)?;
        f.replace_kind(inst, kind);
    }
    Ok(())
}

fn resolve_operand(
    f: &mut Function,
    names: &ModuleNames,
    scope: &Scope,
    o: &Operand,
) -> PResult<Value> {
    match o {
        Operand::Local(n) => scope.value(n),
        Operand::Global(n) => match names.globals.get(&n.text) {
            Some(&g) => Ok(f.global_addr(g)),
            None if names.funcs.contains_key(&n.text) => Err(ParseError::new(
                n.pos,
                format!("@{} is a function, not a global", n.text),
            )),
            None => Err(ParseError::new(
                n.pos,
                format!("undefined global @{}", n.text),
            )),
        },
        Operand::Lit(Lit::Int(v), pos) => Ok(f.iconst(int_in_i32(*v, *pos)?)),
        Operand::Lit(Lit::Float(bits), _) => Ok(f.fconst(f32::from_bits(*bits))),
    }
}

fn resolve_target(
    f: &mut Function,
    names: &ModuleNames,
    scope: &Scope,
    t: &Target,
) -> PResult<BlockCall> {
    let block = scope.block(&t.block)?;
    let args = t
        .args
        .iter()
        .map(|a| resolve_operand(f, names, scope, a))
        .collect::<PResult<Vec<_>>>()?;
    Ok(BlockCall::new(block, args))
}

fn resolve_op(f: &mut Function, names: &ModuleNames, scope: &Scope, op: &Op) -> PResult<InstKind> {
    let v = |f: &mut Function, o: &Operand| resolve_operand(f, names, scope, o);
    Ok(match op {
        Op::Binary(op, a, b) => InstKind::Binary {
            op: *op,
            args: [v(f, a)?, v(f, b)?],
        },
        Op::Cmp(op, a, b) => InstKind::Cmp {
            op: *op,
            args: [v(f, a)?, v(f, b)?],
        },
        Op::Unary(op, a) => InstKind::Unary {
            op: *op,
            arg: v(f, a)?,
        },
        Op::Alloc(elem, len) => InstKind::Alloc {
            elem: *elem,
            len: *len,
        },
        Op::Load(ty, p) => InstKind::Load {
            ty: *ty,
            ptr: v(f, p)?,
        },
        Op::Store(x, p) => InstKind::Store {
            value: v(f, x)?,
            ptr: v(f, p)?,
        },
        Op::Gep(base, index, stride) => InstKind::Gep {
            base: v(f, base)?,
            index: v(f, index)?,
            stride: *stride,
        },
        Op::Call(c, args) => InstKind::Call {
            callee: callee(names, c)?,
            args: args
                .iter()
                .map(|a| v(f, a))
                .collect::<PResult<Box<[_]>>>()?,
        },
        Op::Jump(t) => InstKind::Jump {
            dest: Box::new(resolve_target(f, names, scope, t)?),
        },
        Op::Br(c, t, e) => InstKind::Br {
            cond: v(f, c)?,
            then_dest: Box::new(resolve_target(f, names, scope, t)?),
            else_dest: Box::new(resolve_target(f, names, scope, e)?),
        },
        Op::Ret(x) => InstKind::Ret {
            value: match x {
                Some(x) => Some(v(f, x)?),
                None => None,
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::print_module;

    #[test]
    fn forward_references_resolve() {
        let src = "func @main() -> i32 {\nbb0:\n  jump later(%x)\nearly(%y: i32):\n  ret %y\nlater(%a: i32):\n  jump early(%a)\nbb9:\n  %x = call @g()\n  jump later(%x)\n}\ndeclare @g() -> i32\n";
        let m = parse_module(src).unwrap();
        let text = print_module(&m);
        assert!(text.contains("jump bb2(%2)"), "{text}");
        assert_eq!(print_module(&parse_module(&text).unwrap()), text);
    }

    #[test]
    fn errors_point_at_the_name() {
        let e = parse_module("func @f() -> void {\nbb0:\n  ret %nope\n}\n").unwrap_err();
        assert_eq!(e.to_string(), "3:7: undefined value %nope");
        let e =
            parse_module("func @f() -> void {\nbb0:\n  %1 = add 1, 2\n  %1 = add 1, 2\n  ret\n}")
                .unwrap_err();
        assert_eq!(e.to_string(), "4:3: value %1 is defined twice");
    }

    #[test]
    fn ret_without_value_before_next_line() {
        let m = parse_module("func @f() -> void {\nbb0:\n  ret\nbb1:\n  %x = add 1, 2\n  ret\n}")
            .unwrap();
        assert!(print_module(&m).contains("bb1:\n  %0 = add 1, 2\n  ret\n"));
    }
}
