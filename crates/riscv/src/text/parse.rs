//! Text to machine IR: a line-based reader (one declaration, label or instruction a
//! line; `;` starts a comment) over a small tokenizer.

use super::print::cvt_mnemonic;
use super::ParseError;
use crate::mir::*;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// A name, mnemonic or register: letters, digits, `_ . % $`, not starting with a
    /// digit.
    Word(String),
    /// An integer with optional sign: `8`, `-16`, `+4`.
    Num(String),
    /// `, ( ) :`
    Punct(char),
}

fn tokenize(line: &str, ln: u32) -> Result<Vec<Tok>, ParseError> {
    let mut toks = Vec::new();
    let cs: Vec<char> = line.chars().collect();
    let mut i = 0;
    let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%' | '$');
    while i < cs.len() {
        let c = cs[i];
        if c == ';' {
            break;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let signed = (c == '-' || c == '+') && cs.get(i + 1).is_some_and(|d| d.is_ascii_digit());
        if c.is_ascii_digit() || signed {
            let start = i;
            i += 1;
            while i < cs.len() && cs[i].is_ascii_digit() {
                i += 1;
            }
            toks.push(Tok::Num(cs[start..i].iter().collect()));
        } else if word(c) {
            let start = i;
            while i < cs.len() && word(cs[i]) {
                i += 1;
            }
            toks.push(Tok::Word(cs[start..i].iter().collect()));
        } else if matches!(c, ',' | '(' | ')' | ':' | '!' | '&') {
            toks.push(Tok::Punct(c));
            i += 1;
        } else {
            return Err(ParseError {
                line: ln,
                message: format!("unexpected character `{c}`"),
            });
        }
    }
    Ok(toks)
}

/// The tokens of one line, consumed from the front.
struct Line {
    toks: Vec<Tok>,
    pos: usize,
    ln: u32,
}

impl Line {
    fn err<T>(&self, message: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            line: self.ln,
            message: message.into(),
        })
    }
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn word(&mut self) -> Result<String, ParseError> {
        match self.next() {
            Some(Tok::Word(w)) => Ok(w),
            t => self.err(format!("expected a name, found {}", show(t.as_ref()))),
        }
    }
    fn num<T: std::str::FromStr>(&mut self) -> Result<T, ParseError> {
        match self.next() {
            Some(Tok::Num(n)) => match n.parse() {
                Ok(v) => Ok(v),
                Err(_) => self.err(format!("number `{n}` out of range")),
            },
            t => self.err(format!("expected a number, found {}", show(t.as_ref()))),
        }
    }
    fn punct(&mut self, c: char) -> Result<(), ParseError> {
        match self.next() {
            Some(Tok::Punct(p)) if p == c => Ok(()),
            t => self.err(format!("expected `{c}`, found {}", show(t.as_ref()))),
        }
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn end(&self) -> Result<(), ParseError> {
        match self.peek() {
            None => Ok(()),
            t => self.err(format!("unexpected {} at the end of the line", show(t))),
        }
    }
    fn reg(&mut self) -> Result<Reg, ParseError> {
        let w = self.word()?;
        match reg_named(&w) {
            Some(r) => Ok(r),
            None => self.err(format!("expected a register, found `{w}`")),
        }
    }
    /// `name`, then `+N`/`-N` (the offset, required).
    fn numbered_plus(&mut self, prefix: &str) -> Result<(u32, i64), ParseError> {
        let w = self.word()?;
        let Some(n) = w.strip_prefix(prefix).and_then(|n| n.parse::<u32>().ok()) else {
            return self.err(format!("expected `{prefix}N`, found `{w}`"));
        };
        Ok((n, self.num()?))
    }
    fn block(&mut self) -> Result<MBlock, ParseError> {
        let w = self.word()?;
        match block_named(&w) {
            Some(b) => Ok(b),
            None => self.err(format!("expected a block `bbN`, found `{w}`")),
        }
    }
    /// `off(base)` with a register or `slotN` base, then `!N` for an alias region
    /// other than 0.
    fn addr(&mut self) -> Result<Addr, ParseError> {
        let off = self.num()?;
        self.punct('(')?;
        let w = self.word()?;
        let base = if let Some(r) = reg_named(&w) {
            Base::Reg(r)
        } else if let Some(s) = w.strip_prefix("slot").and_then(|n| n.parse().ok()) {
            Base::Slot(Slot(s))
        } else {
            return self.err(format!("expected a register or `slotN`, found `{w}`"));
        };
        self.punct(')')?;
        let region = if self.eat('!') {
            self.num()?
        } else {
            Addr::ANY_REGION
        };
        let sym = if self.eat('&') {
            let anchor = self.num()?;
            let off = self.num()?;
            Some(SymAddr { anchor, off })
        } else {
            None
        };
        Ok(Addr {
            base,
            off,
            region,
            sym,
        })
    }
    /// `(r, r, ...)`
    fn reg_list(&mut self) -> Result<Vec<Reg>, ParseError> {
        self.punct('(')?;
        let mut v = Vec::new();
        if self.eat(')') {
            return Ok(v);
        }
        loop {
            v.push(self.reg()?);
            if self.eat(')') {
                return Ok(v);
            }
            self.punct(',')?;
        }
    }
}

fn show(t: Option<&Tok>) -> String {
    match t {
        None => "the end of the line".to_string(),
        Some(Tok::Word(w)) => format!("`{w}`"),
        Some(Tok::Num(n)) => format!("`{n}`"),
        Some(Tok::Punct(c)) => format!("`{c}`"),
    }
}

/// A register by its ABI name (`a0`, `fs3`, `zero`) or `%vN`.
pub fn reg_named(w: &str) -> Option<Reg> {
    if let Some(n) = w.strip_prefix("%v") {
        if n.starts_with('+') || (n.len() > 1 && n.starts_with('0')) {
            return None;
        }
        return n
            .parse::<u32>()
            .ok()
            .filter(|&n| n < u32::MAX - NUM_PREGS)
            .map(Reg::virt);
    }
    (0..NUM_PREGS).map(Reg).find(|r| r.abi_name() == w)
}

fn block_named(w: &str) -> Option<MBlock> {
    let n = w.strip_prefix("bb")?;
    if n.starts_with('+') {
        return None;
    }
    n.parse().ok().map(MBlock)
}

const ALU: [AluOp; 24] = [
    AluOp::Add,
    AluOp::Sub,
    AluOp::Addw,
    AluOp::Subw,
    AluOp::Mul,
    AluOp::Mulw,
    AluOp::Mulh,
    AluOp::Mulhu,
    AluOp::Div,
    AluOp::Divu,
    AluOp::Divw,
    AluOp::Rem,
    AluOp::Remw,
    AluOp::Sll,
    AluOp::Srl,
    AluOp::Sra,
    AluOp::Sllw,
    AluOp::Srlw,
    AluOp::Sraw,
    AluOp::And,
    AluOp::Or,
    AluOp::Xor,
    AluOp::Slt,
    AluOp::Sltu,
];
const ALU_IMM: [AluImmOp; 13] = [
    AluImmOp::Addi,
    AluImmOp::Addiw,
    AluImmOp::Slli,
    AluImmOp::Srli,
    AluImmOp::Srai,
    AluImmOp::Slliw,
    AluImmOp::Srliw,
    AluImmOp::Sraiw,
    AluImmOp::Andi,
    AluImmOp::Ori,
    AluImmOp::Xori,
    AluImmOp::Slti,
    AluImmOp::Sltiu,
];
const FALU: [FAluOp; 6] = [
    FAluOp::Add,
    FAluOp::Sub,
    FAluOp::Mul,
    FAluOp::Div,
    FAluOp::Sgnjn,
    FAluOp::Sgnjx,
];
const FCMP: [FCmpOp; 3] = [FCmpOp::Eq, FCmpOp::Lt, FCmpOp::Le];
const CVT: [CvtOp; 6] = [
    CvtOp::FcvtSW,
    CvtOp::FcvtWS,
    CvtOp::FmvWX,
    CvtOp::FmvXW,
    CvtOp::FcvtDS,
    CvtOp::FmvXD,
];
const MEM: [MemOp; 4] = [MemOp::W, MemOp::D, MemOp::FS, MemOp::FD];
const COND: [Cond; 6] = [Cond::Eq, Cond::Ne, Cond::Lt, Cond::Ge, Cond::Ltu, Cond::Geu];

/// One instruction (the rest of `l`).
fn inst(l: &mut Line) -> Result<MInst, ParseError> {
    let m = l.word()?;
    let m = m.as_str();
    let i = if let Some(&op) = ALU.iter().find(|o| o.mnemonic() == m) {
        let rd = l.reg()?;
        l.punct(',')?;
        let rs1 = l.reg()?;
        l.punct(',')?;
        let rs2 = l.reg()?;
        MInst::Alu { op, rd, rs1, rs2 }
    } else if let Some(&op) = ALU_IMM.iter().find(|o| o.mnemonic() == m) {
        let rd = l.reg()?;
        l.punct(',')?;
        let rs1 = l.reg()?;
        l.punct(',')?;
        let imm = l.num()?;
        MInst::AluImm { op, rd, rs1, imm }
    } else if let Some(&op) = FALU.iter().find(|o| o.mnemonic() == m) {
        let rd = l.reg()?;
        l.punct(',')?;
        let rs1 = l.reg()?;
        l.punct(',')?;
        let rs2 = l.reg()?;
        MInst::FAlu { op, rd, rs1, rs2 }
    } else if let Some(&op) = FCMP.iter().find(|o| o.mnemonic() == m) {
        let rd = l.reg()?;
        l.punct(',')?;
        let rs1 = l.reg()?;
        l.punct(',')?;
        let rs2 = l.reg()?;
        MInst::FCmp { op, rd, rs1, rs2 }
    } else if let Some(&op) = CVT.iter().find(|o| cvt_mnemonic(**o) == m) {
        let rd = l.reg()?;
        l.punct(',')?;
        let rs = l.reg()?;
        MInst::Cvt { op, rd, rs }
    } else if let Some(&op) = MEM.iter().find(|o| o.load_mnemonic() == m) {
        let rd = l.reg()?;
        l.punct(',')?;
        let addr = l.addr()?;
        MInst::Load { op, rd, addr }
    } else if let Some(&op) = MEM.iter().find(|o| o.store_mnemonic() == m) {
        let src = l.reg()?;
        l.punct(',')?;
        let addr = l.addr()?;
        MInst::Store { op, src, addr }
    } else if let Some(&cond) = COND.iter().find(|o| o.mnemonic() == m) {
        let rs1 = l.reg()?;
        l.punct(',')?;
        let rs2 = l.reg()?;
        l.punct(',')?;
        let target = l.block()?;
        MInst::Branch {
            cond,
            rs1,
            rs2,
            target,
        }
    } else {
        match m {
            "li" => {
                let rd = l.reg()?;
                l.punct(',')?;
                let imm = l.num()?;
                MInst::Li { rd, imm }
            }
            "lla" => {
                let rd = l.reg()?;
                l.punct(',')?;
                let (global, off) = l.numbered_plus("g")?;
                MInst::La { rd, global, off }
            }
            "frameaddr" => {
                let rd = l.reg()?;
                l.punct(',')?;
                let (slot, off) = l.numbered_plus("slot")?;
                MInst::FrameAddr {
                    rd,
                    slot: Slot(slot),
                    off,
                }
            }
            "mv" => {
                let rd = l.reg()?;
                l.punct(',')?;
                let rs = l.reg()?;
                MInst::Mv { rd, rs }
            }
            "call" | "tail" => {
                let callee = l.word()?;
                let args = l.reg_list()?;
                if m == "call" {
                    MInst::Call { callee, args }
                } else {
                    MInst::TailCall { callee, args }
                }
            }
            "ret" => MInst::Ret {
                value: if l.peek().is_some() {
                    Some(l.reg()?)
                } else {
                    None
                },
            },
            "j" => MInst::Jump { target: l.block()? },
            _ => return l.err(format!("unknown instruction `{m}`")),
        }
    };
    l.end()?;
    Ok(i)
}

/// The frame slot an instruction addresses.
fn slot_of(i: &MInst) -> Option<Slot> {
    match i {
        MInst::FrameAddr { slot, .. } => Some(*slot),
        MInst::Load { addr, .. } | MInst::Store { addr, .. } => match addr.base {
            Base::Slot(s) => Some(s),
            Base::Reg(_) => None,
        },
        _ => None,
    }
}

/// Parses every function of `text` (each from `function` to `end`).
pub fn parse_functions(text: &str) -> Result<Vec<MFunction>, ParseError> {
    let mut lines = Vec::new();
    for (k, raw) in text.lines().enumerate() {
        let ln = k as u32 + 1;
        let toks = tokenize(raw, ln)?;
        if !toks.is_empty() {
            lines.push(Line { toks, pos: 0, ln });
        }
    }
    let mut funcs = Vec::new();
    let mut it = lines.into_iter().peekable();
    while let Some(first) = it.next() {
        funcs.push(function(first, &mut it, text.lines().count() as u32)?);
    }
    Ok(funcs)
}

/// Parses text holding exactly one function.
pub fn parse_function(text: &str) -> Result<MFunction, ParseError> {
    let mut fs = parse_functions(text)?;
    match fs.len() {
        1 => Ok(fs.pop().unwrap()),
        n => Err(ParseError {
            line: 1,
            message: format!("expected one function, found {n}"),
        }),
    }
}

/// One function, from its `function` line `head` to `end`.
fn function(
    mut head: Line,
    rest: &mut impl Iterator<Item = Line>,
    last_line: u32,
) -> Result<MFunction, ParseError> {
    if head.word()? != "function" {
        return head.err("expected `function NAME global|local`");
    }
    let name = head.word()?;
    let global = match head.word()?.as_str() {
        "global" => true,
        "local" => false,
        w => return head.err(format!("expected `global` or `local`, found `{w}`")),
    };
    head.end()?;
    let mut mf = MFunction::new(name, global);
    // The class of each virtual register, and whether it holds a double.
    let mut classes: Vec<Option<(RegClass, bool)>> = Vec::new();
    let mut remat: Vec<(usize, MInst)> = Vec::new();
    let mut nblocks: Option<usize> = None;
    let mut current: Option<MBlock> = None;
    let mut defined: Vec<bool> = Vec::new();
    let mut unplaced: Vec<(MBlock, Vec<MInst>)> = Vec::new();
    let mut header_line = head.ln;
    loop {
        let Some(mut l) = rest.next() else {
            return Err(ParseError {
                line: last_line,
                message: format!("function {} has no `end`", mf.name),
            });
        };
        let first = match l.peek() {
            Some(Tok::Word(w)) => w.clone(),
            t => return l.err(format!("unexpected {}", show(t))),
        };
        // A block label: `bbN:` or `bbN unplaced:`.
        if let Some(b) = block_named(&first) {
            l.next();
            let placed = !matches!(l.peek(), Some(Tok::Word(w)) if w == "unplaced");
            if !placed {
                l.next();
            }
            l.punct(':')?;
            l.end()?;
            if defined.len() <= b.index() {
                defined.resize(b.index() + 1, false);
            }
            if defined[b.index()] {
                return l.err(format!("block bb{} defined twice", b.0));
            }
            defined[b.index()] = true;
            if placed {
                if !unplaced.is_empty() {
                    return l.err("a laid-out block after an unplaced one");
                }
                mf.layout.push(b);
            } else {
                unplaced.push((b, Vec::new()));
            }
            while mf.blocks.len() <= b.index() {
                mf.new_block();
            }
            current = Some(b);
            continue;
        }
        if first == "end" {
            l.next();
            l.end()?;
            break;
        }
        if let Some(b) = current {
            let mut i = inst(&mut l)?;
            let mut undeclared = None;
            i.map_regs(|r, _| {
                if r.is_virtual() && r.vindex() >= classes.len() {
                    undeclared = Some(*r);
                }
            });
            if let Some(r) = undeclared {
                return l.err(format!("{r} has no declared class"));
            }
            if let Some(s) = slot_of(&i).filter(|s| s.0 as usize >= mf.slots.len()) {
                return l.err(format!("slot{} is not declared", s.0));
            }
            match unplaced.last_mut() {
                Some((_, insts)) => insts.push(i),
                None => mf.blocks[b].insts.push(i),
            }
            continue;
        }
        // Declarations, before the first block.
        header_line = l.ln;
        l.next();
        match first.as_str() {
            "outgoing" => mf.outgoing_size = l.num()?,
            "size" => {
                let w = l.word()?;
                let Some(g) = w.strip_prefix('g').and_then(|n| n.parse::<u32>().ok()) else {
                    return l.err(format!("expected a global `gN`, found `{w}`"));
                };
                mf.global_sizes.insert(g, l.num()?);
            }
            "place" => {
                let w = l.word()?;
                let Some(g) = w.strip_prefix('g').and_then(|n| n.parse::<u32>().ok()) else {
                    return l.err(format!("expected a global `gN`, found `{w}`"));
                };
                let name = l.word()?;
                let Some(section) = crate::globals::DataSection::from_name(&name) else {
                    return l.err(format!(
                        "expected a section `data`, `bss` or `rodata`, found `{name}`"
                    ));
                };
                let offset = l.num()?;
                mf.global_places
                    .insert(g, crate::globals::GlobalPlace { section, offset });
            }
            "blocks" => nblocks = Some(l.num()?),
            "int" | "float" | "double" => {
                let class = match first.as_str() {
                    "int" => (RegClass::Int, false),
                    "float" => (RegClass::Float, false),
                    _ => (RegClass::Float, true),
                };
                while l.peek().is_some() {
                    let w = l.word()?;
                    let (a, b) = match w.split_once("..") {
                        Some((a, b)) => (a, b),
                        None => (w.as_str(), w.as_str()),
                    };
                    let (Some(a), Some(b)) = (reg_named(a), reg_named(b)) else {
                        return l.err(format!("expected `%vN` or `%vN..%vM`, found `{w}`"));
                    };
                    if !a.is_virtual() || !b.is_virtual() || a > b {
                        return l.err(format!("`{w}` is not a range of virtual registers"));
                    }
                    if classes.len() <= b.vindex() {
                        classes.resize(b.vindex() + 1, None);
                    }
                    for c in &mut classes[a.vindex()..=b.vindex()] {
                        if c.is_some() {
                            return l.err(format!("a register of `{w}` is declared twice"));
                        }
                        *c = Some(class);
                    }
                }
            }
            "remat" => {
                let v = l.reg()?;
                if !v.is_virtual() {
                    return l.err("only virtual registers are rematerialised");
                }
                l.punct(':')?;
                remat.push((v.vindex(), inst(&mut l)?));
            }
            s if s.starts_with("slot") => {
                let Some(k) = s["slot".len()..].parse::<usize>().ok() else {
                    return l.err(format!("unknown declaration `{s}`"));
                };
                if k != mf.slots.len() {
                    return l.err(format!("expected slot{} next, found `{s}`", mf.slots.len()));
                }
                let kind = match l.word()?.as_str() {
                    "local" => {
                        let size = l.num()?;
                        if l.word()? != "align" {
                            return l.err("expected `align`");
                        }
                        SlotKind::Local {
                            size,
                            align: l.num()?,
                        }
                    }
                    "spill" => SlotKind::Spill,
                    "incoming" => SlotKind::Incoming(l.num()?),
                    w => return l.err(format!("unknown slot kind `{w}`")),
                };
                mf.slots.push(kind);
            }
            s => return l.err(format!("unknown declaration `{s}`")),
        }
        l.end()?;
    }
    for (v, c) in classes.iter().enumerate() {
        match c {
            Some((RegClass::Float, true)) => {
                mf.new_double_vreg();
            }
            Some((c, _)) => {
                mf.new_vreg(*c);
            }
            None => {
                return Err(ParseError {
                    line: header_line,
                    message: format!("no class declared for %v{v}"),
                })
            }
        }
    }
    for (v, i) in remat {
        if slot_of(&i).is_some_and(|s| s.0 as usize >= mf.slots.len()) {
            return Err(ParseError {
                line: header_line,
                message: format!("the remat of %v{v} addresses an undeclared slot"),
            });
        }
        if v >= mf.vreg_remat.len() {
            return Err(ParseError {
                line: header_line,
                message: format!("remat of undeclared %v{v}"),
            });
        }
        mf.vreg_remat[v] = Some(i);
    }
    for (b, insts) in unplaced {
        mf.blocks[b].insts = insts;
    }
    if let Some(n) = nblocks {
        if n < mf.blocks.len() {
            return Err(ParseError {
                line: header_line,
                message: format!("`blocks {n}` but bb{} is defined", mf.blocks.len() - 1),
            });
        }
        while mf.blocks.len() < n {
            mf.new_block();
        }
    }
    Ok(mf)
}
