//! Decoding: each IR function is translated once, before execution, into a compact
//! form the interpreter loop can run without touching the IR's hash maps or layout
//! lists (the usual "pre-decoded threaded code" design of fast interpreters, e.g.
//! wasm3 or the CPython 3.11 specialising interpreter, here as a flat `Vec` of small
//! `Copy` instructions dispatched by one `match`):
//!
//! - every value gets a frame slot (a `u64` register): first the constants used by
//!   the function (their values are copied into a new frame on each call, so operands
//!   never distinguish constants from registers), then the parameters, then block
//!   parameters and instruction results, then one scratch slot;
//! - block targets become instruction indices;
//! - block arguments become precomputed sequential move lists (parallel copies
//!   sequentialised with the scratch slot), attached to an edge;
//! - `alloc`s get fixed offsets in the function's stack frame, whose size is known;
//! - calls of body-less functions resolve to runtime functions by name, or to a trap;
//! - two frequent pairs become one superinstruction when the first one's result has
//!   the second, which follows it directly, as its only user: `gep` + 32-bit
//!   `load`/`store`, and integer comparison + `br`. Steps still count IR
//!   instructions, so fusion is invisible in the results.

use crate::error::{ErrorKind, InterpError};
use crate::parallel_copy::sequentialize;
use crate::runtime::Builtin;
use ir::{BinOp, CmpOp, EntityRef, UnOp};
use ir::{Block, BlockCall, Function, InstKind, Module, Type, Value, ValueDef};

/// A frame slot index.
pub(crate) type Slot = u32;

/// One decoded instruction. `d` is the destination slot, `a`/`b` operand slots.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Op {
    Add {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Sub {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Mul {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    SDiv {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    SRem {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    And {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Or {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Xor {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Shl {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    LShr {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    AShr {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    FAdd {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    FSub {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    FMul {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    FDiv {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Add64 {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Sub64 {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Mul64 {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    SDiv64 {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    SRem64 {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Eq {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Ne {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Slt {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Sle {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Sgt {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    Sge {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    /// An integer comparison of two pointers, as 64-bit addresses.
    PtrCmp {
        op: CmpOp,
        d: Slot,
        a: Slot,
        b: Slot,
    },
    FEq {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    FNe {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    FLt {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    FLe {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    FGt {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    FGe {
        d: Slot,
        a: Slot,
        b: Slot,
    },
    FNeg {
        d: Slot,
        a: Slot,
    },
    FAbs {
        d: Slot,
        a: Slot,
    },
    SIToFP {
        d: Slot,
        a: Slot,
    },
    FPToSI {
        d: Slot,
        a: Slot,
    },
    SExt {
        d: Slot,
        a: Slot,
    },
    Trunc {
        d: Slot,
        a: Slot,
    },
    FBits {
        d: Slot,
        a: Slot,
    },
    /// `d = frame base + allocs[idx]`.
    Alloc {
        d: Slot,
        idx: u32,
    },
    Load8 {
        d: Slot,
        p: Slot,
    },
    Load32 {
        d: Slot,
        p: Slot,
    },
    Load64 {
        d: Slot,
        p: Slot,
    },
    Store8 {
        v: Slot,
        p: Slot,
    },
    Store32 {
        v: Slot,
        p: Slot,
    },
    Store64 {
        v: Slot,
        p: Slot,
    },
    /// `d = base + sext(index) * stride`.
    Gep {
        d: Slot,
        base: Slot,
        index: Slot,
        stride: u32,
    },
    /// `gep` fused with the `load i32/f32` that is its only user (counts 2 steps).
    LoadIdx32 {
        d: Slot,
        base: Slot,
        index: Slot,
        stride: u32,
    },
    /// `gep` fused with the 32-bit `store` that is its only user (counts 2 steps).
    StoreIdx32 {
        v: Slot,
        base: Slot,
        index: Slot,
        stride: u32,
    },
    /// Integer comparison fused with the `br` that is its only user (2 steps);
    /// `t`/`f` are edge indices.
    BrEq {
        a: Slot,
        b: Slot,
        t: u32,
        f: u32,
    },
    BrNe {
        a: Slot,
        b: Slot,
        t: u32,
        f: u32,
    },
    BrSlt {
        a: Slot,
        b: Slot,
        t: u32,
        f: u32,
    },
    BrSle {
        a: Slot,
        b: Slot,
        t: u32,
        f: u32,
    },
    BrSgt {
        a: Slot,
        b: Slot,
        t: u32,
        f: u32,
    },
    BrSge {
        a: Slot,
        b: Slot,
        t: u32,
        f: u32,
    },
    /// Jump to `target` with no block arguments.
    Goto {
        target: u32,
    },
    /// Jump along `edges[edge]` (moves, then target).
    Jump {
        edge: u32,
    },
    /// Conditional branch whose targets take no arguments.
    BrGoto {
        cond: Slot,
        t: u32,
        f: u32,
    },
    /// Conditional branch along `edges[t]` or `edges[f]`.
    Br {
        cond: Slot,
        t: u32,
        f: u32,
    },
    /// Return `v` (the scratch slot for `ret` without value).
    Ret {
        v: Slot,
    },
    /// Call of defined function `func` (a `FuncId` index); its arguments are the
    /// callee's parameter count of slots starting at `call_args[args]`.
    Call {
        d: Slot,
        func: u32,
        args: u32,
    },
    /// Call of runtime function `builtin_calls[idx]`.
    CallBuiltin {
        d: Slot,
        idx: u32,
    },
    /// Stop with `traps[idx]`.
    Trap {
        idx: u32,
    },
}

/// A CFG edge with block arguments: moves `(dst, src)` to run in order, then the
/// target instruction index.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Edge {
    pub target: u32,
    pub moves_start: u32,
    pub moves_end: u32,
}

/// A call of a runtime function: which one, argument slots and their IR types.
#[derive(Clone, Debug)]
pub(crate) struct BuiltinCall {
    pub builtin: Builtin,
    pub args: Vec<Slot>,
    pub types: Vec<Type>,
}

/// A function ready to run.
#[derive(Clone, Debug, Default)]
pub(crate) struct DecodedFunc {
    pub name: String,
    pub code: Vec<Op>,
    /// Frame size in slots.
    pub nslots: u32,
    /// Initial values of slots `0..consts.len()`.
    pub consts: Vec<u64>,
    /// Number of parameters, in slots `consts.len()..consts.len() + nparams`.
    pub nparams: u32,
    /// Offset of each `alloc` in the stack frame.
    pub allocs: Vec<u64>,
    /// Bytes of stack frame (all `alloc`s, 16-byte aligned).
    pub frame_bytes: u64,
    pub edges: Vec<Edge>,
    pub moves: Vec<(Slot, Slot)>,
    pub call_args: Vec<Slot>,
    pub builtin_calls: Vec<BuiltinCall>,
    pub traps: Vec<ErrorKind>,
    /// For each op of `code`, the source position of its IR instruction plus one (of
    /// the second of a fused pair, the load, store or branch; 0 when unknown), for
    /// placing a run-time error.
    pub locs: Vec<u32>,
}

impl DecodedFunc {
    /// The source position (a byte offset) of op `pc`, if known.
    pub(crate) fn pos(&self, pc: usize) -> Option<u32> {
        self.locs.get(pc)?.checked_sub(1)
    }
}

/// A module ready to run: decoded functions indexed by `FuncId` (declarations are
/// empty placeholders never called through `Op::Call`) and the index of `main`.
pub(crate) struct DecodedModule {
    pub funcs: Vec<DecodedFunc>,
    pub main: u32,
}

const NONE: u32 = u32::MAX;

/// What becomes one op: an instruction, or a fused pair.
enum Unit {
    Single(ir::Inst),
    Fused(ir::Inst, ir::Inst),
}

/// Decodes every defined function of `m`; `global_addrs` are the globals' addresses.
pub(crate) fn decode_module(
    m: &Module,
    global_addrs: &[u64],
) -> Result<DecodedModule, InterpError> {
    let mut funcs = Vec::with_capacity(m.funcs.len());
    let mut main = None;
    for (id, f) in m.funcs.iter() {
        if f.is_declaration() {
            funcs.push(DecodedFunc {
                name: f.name.clone(),
                ..Default::default()
            });
            continue;
        }
        if f.name == "main" {
            main = Some(id.index() as u32);
        }
        let d = Decoder::new(m, f, global_addrs)
            .decode()
            .map_err(|k| InterpError::in_func(k, &f.name))?;
        funcs.push(d);
    }
    let main = main.ok_or_else(|| InterpError::new(ErrorKind::NoMain))?;
    Ok(DecodedModule { funcs, main })
}

fn invalid(msg: String) -> ErrorKind {
    ErrorKind::InvalidIr(msg)
}

struct Decoder<'a> {
    m: &'a Module,
    f: &'a Function,
    global_addrs: &'a [u64],
    slots: Vec<u32>,
    next_slot: u32,
    block_pc: Vec<u32>,
    out: DecodedFunc,
}

impl<'a> Decoder<'a> {
    fn new(m: &'a Module, f: &'a Function, global_addrs: &'a [u64]) -> Self {
        Decoder {
            m,
            f,
            global_addrs,
            slots: vec![NONE; f.num_values()],
            next_slot: 0,
            block_pc: vec![NONE; f.num_blocks()],
            out: DecodedFunc {
                name: f.name.clone(),
                ..Default::default()
            },
        }
    }

    fn check_value(&self, v: Value) -> Result<(), ErrorKind> {
        if v.index() < self.f.num_values() {
            Ok(())
        } else {
            Err(invalid(format!("operand {v} does not exist")))
        }
    }

    fn assign(&mut self, v: Value) {
        if self.slots[v.index()] == NONE {
            self.slots[v.index()] = self.next_slot;
            self.next_slot += 1;
        }
    }

    /// The register value of a constant operand.
    fn const_bits(&self, def: ValueDef) -> Result<Option<u64>, ErrorKind> {
        Ok(match def {
            ValueDef::IConst(c) => Some(c as u32 as u64),
            ValueDef::FConst(bits) => Some(bits as u64),
            ValueDef::Global(g) => Some(
                *self
                    .global_addrs
                    .get(g.index())
                    .ok_or_else(|| invalid(format!("global {g} does not exist")))?,
            ),
            _ => None,
        })
    }

    fn all_operands(&self) -> Vec<Value> {
        let mut ops = Vec::new();
        for b in self.f.layout.blocks() {
            for i in self.f.layout.block_insts(b) {
                self.f.kind(i).for_each_arg(|v| ops.push(v));
            }
        }
        ops
    }

    fn assign_slots(&mut self) -> Result<(), ErrorKind> {
        let operands = self.all_operands();
        for &v in &operands {
            self.check_value(v)?;
        }
        // Constants first: their initial values form the frame's constant area.
        for &v in &operands {
            if let Some(bits) = self.const_bits(self.f.value_def(v))? {
                if self.slots[v.index()] == NONE {
                    self.assign(v);
                    self.out.consts.push(bits);
                }
            }
        }
        let entry = self.f.entry_block();
        for &p in self.f.block_params(entry) {
            self.assign(p);
        }
        self.out.nparams = self.f.block_params(entry).len() as u32;
        for b in self.f.layout.blocks() {
            for &p in self.f.block_params(b) {
                self.assign(p);
            }
            for i in self.f.layout.block_insts(b) {
                if let Some(r) = self.f.inst_result(i) {
                    self.assign(r);
                }
            }
        }
        // Operands defined nowhere in the layout (malformed IR) read as 0.
        for &v in &operands {
            self.assign(v);
        }
        Ok(())
    }

    fn slot(&self, v: Value) -> Slot {
        self.slots[v.index()]
    }

    fn scratch(&self) -> Slot {
        self.next_slot
    }

    fn target_pc(&self, b: Block) -> Result<u32, ErrorKind> {
        match self.block_pc.get(b.index()) {
            Some(&pc) if pc != NONE => Ok(pc),
            _ => Err(invalid(format!(
                "branch to {b}, which is not in the layout"
            ))),
        }
    }

    /// An edge for `call`, or `None` when it passes no arguments (or only moves that
    /// are no-ops).
    fn edge(&mut self, call: &BlockCall) -> Result<(u32, Option<u32>), ErrorKind> {
        let target = self.target_pc(call.block)?;
        let params = self.f.block_params(call.block);
        if params.len() != call.args.len() {
            return Err(invalid(format!(
                "{} arguments passed to {} which has {} parameters",
                call.args.len(),
                call.block,
                params.len()
            )));
        }
        let par: Vec<(Slot, Slot)> = params
            .iter()
            .zip(&call.args)
            .map(|(&p, &a)| (self.slot(p), self.slot(a)))
            .collect();
        let seq = sequentialize(&par, self.scratch());
        if seq.is_empty() {
            return Ok((target, None));
        }
        let start = self.out.moves.len() as u32;
        self.out.moves.extend(seq);
        let idx = self.out.edges.len() as u32;
        self.out.edges.push(Edge {
            target,
            moves_start: start,
            moves_end: self.out.moves.len() as u32,
        });
        Ok((target, Some(idx)))
    }

    /// An edge index for `call`, creating a move-less edge if needed.
    fn edge_index(&mut self, target: u32, edge: Option<u32>) -> u32 {
        edge.unwrap_or_else(|| {
            let idx = self.out.edges.len() as u32;
            let at = self.out.moves.len() as u32;
            self.out.edges.push(Edge {
                target,
                moves_start: at,
                moves_end: at,
            });
            idx
        })
    }

    fn decode(mut self) -> Result<DecodedFunc, ErrorKind> {
        self.assign_slots()?;
        // Group instructions into units (one op each), then number the blocks.
        let mut units: Vec<(Block, Vec<Unit>)> = Vec::new();
        let mut pc: u32 = 0;
        for b in self.f.layout.blocks() {
            self.block_pc[b.index()] = pc;
            match self.f.layout.last_inst(b) {
                Some(last) if self.f.kind(last).is_terminator() => {}
                _ => return Err(invalid(format!("{b} does not end in a terminator"))),
            }
            let u = self.units(b);
            pc += u.len() as u32;
            units.push((b, u));
        }
        for (_, us) in units {
            for u in us {
                let (op, pos) = match u {
                    Unit::Single(i) => (self.decode_inst(i)?, self.f.src_loc(i)),
                    Unit::Fused(first, second) => (
                        self.decode_fused(first, second)?,
                        self.f.src_loc(second).or(self.f.src_loc(first)),
                    ),
                };
                self.out.code.push(op);
                self.out.locs.push(pos.map_or(0, |p| p.saturating_add(1)));
            }
        }
        self.out.nslots = self.next_slot + 1;
        self.out.frame_bytes = crate::memory::align_up(self.out.frame_bytes, 16);
        Ok(self.out)
    }

    /// Splits `b` into units, fusing the pairs described in the module comment.
    fn units(&self, b: Block) -> Vec<Unit> {
        let f = self.f;
        let insts: Vec<ir::Inst> = f.layout.block_insts(b).collect();
        let mut out = Vec::with_capacity(insts.len());
        let mut k = 0;
        while k < insts.len() {
            let i = insts[k];
            if let Some(&next) = insts.get(k + 1) {
                if self.fusable(i, next) {
                    out.push(Unit::Fused(i, next));
                    k += 2;
                    continue;
                }
            }
            out.push(Unit::Single(i));
            k += 1;
        }
        out
    }

    /// Whether `first` and the directly following `second` can run as one op.
    fn fusable(&self, first: ir::Inst, second: ir::Inst) -> bool {
        let f = self.f;
        let Some(r) = f.inst_result(first) else {
            return false;
        };
        // The intermediate value must have no other use anywhere.
        if f.users(r) != [second] {
            return false;
        }
        match (f.kind(first), f.kind(second)) {
            (InstKind::Gep { .. }, InstKind::Load { ty, ptr }) => {
                *ptr == r && matches!(ty, Type::I32 | Type::F32)
            }
            (InstKind::Gep { .. }, InstKind::Store { value, ptr }) => {
                *ptr == r && *value != r && matches!(f.value_type(*value), Type::I32 | Type::F32)
            }
            (InstKind::Cmp { op, args }, InstKind::Br { cond, .. }) => {
                *cond == r && !op.is_float() && f.value_type(args[0]) == Type::I32
            }
            _ => false,
        }
    }

    fn decode_fused(&mut self, first: ir::Inst, second: ir::Inst) -> Result<Op, ErrorKind> {
        let f = self.f;
        Ok(match (f.kind(first), f.kind(second)) {
            (
                InstKind::Gep {
                    base,
                    index,
                    stride,
                },
                InstKind::Load { .. },
            ) => Op::LoadIdx32 {
                d: f.inst_result(second)
                    .map_or(self.scratch(), |v| self.slot(v)),
                base: self.slot(*base),
                index: self.slot(*index),
                stride: *stride,
            },
            (
                InstKind::Gep {
                    base,
                    index,
                    stride,
                },
                InstKind::Store { value, .. },
            ) => Op::StoreIdx32 {
                v: self.slot(*value),
                base: self.slot(*base),
                index: self.slot(*index),
                stride: *stride,
            },
            (
                InstKind::Cmp { op, args },
                InstKind::Br {
                    then_dest,
                    else_dest,
                    ..
                },
            ) => {
                let (a, b) = (self.slot(args[0]), self.slot(args[1]));
                let (tt, te) = self.edge(then_dest)?;
                let (ft, fe) = self.edge(else_dest)?;
                let t = self.edge_index(tt, te);
                let f = self.edge_index(ft, fe);
                match op {
                    CmpOp::Eq => Op::BrEq { a, b, t, f },
                    CmpOp::Ne => Op::BrNe { a, b, t, f },
                    CmpOp::Slt => Op::BrSlt { a, b, t, f },
                    CmpOp::Sle => Op::BrSle { a, b, t, f },
                    CmpOp::Sgt => Op::BrSgt { a, b, t, f },
                    CmpOp::Sge => Op::BrSge { a, b, t, f },
                    _ => return Err(invalid("fused float comparison".into())),
                }
            }
            _ => return Err(invalid("unexpected instruction pair in fusion".into())),
        })
    }

    fn decode_inst(&mut self, i: ir::Inst) -> Result<Op, ErrorKind> {
        let f = self.f;
        let d = f.inst_result(i).map_or(self.scratch(), |r| self.slot(r));
        Ok(match f.kind(i) {
            InstKind::Binary { op, args } => {
                let (a, b) = (self.slot(args[0]), self.slot(args[1]));
                match op {
                    BinOp::Add => Op::Add { d, a, b },
                    BinOp::Sub => Op::Sub { d, a, b },
                    BinOp::Mul => Op::Mul { d, a, b },
                    BinOp::SDiv => Op::SDiv { d, a, b },
                    BinOp::SRem => Op::SRem { d, a, b },
                    BinOp::And => Op::And { d, a, b },
                    BinOp::Or => Op::Or { d, a, b },
                    BinOp::Xor => Op::Xor { d, a, b },
                    BinOp::Shl => Op::Shl { d, a, b },
                    BinOp::LShr => Op::LShr { d, a, b },
                    BinOp::AShr => Op::AShr { d, a, b },
                    BinOp::FAdd => Op::FAdd { d, a, b },
                    BinOp::FSub => Op::FSub { d, a, b },
                    BinOp::FMul => Op::FMul { d, a, b },
                    BinOp::FDiv => Op::FDiv { d, a, b },
                    BinOp::Add64 => Op::Add64 { d, a, b },
                    BinOp::Sub64 => Op::Sub64 { d, a, b },
                    BinOp::Mul64 => Op::Mul64 { d, a, b },
                    BinOp::SDiv64 => Op::SDiv64 { d, a, b },
                    BinOp::SRem64 => Op::SRem64 { d, a, b },
                }
            }
            InstKind::Cmp { op, args } if f.value_type(args[0]) == Type::Ptr => Op::PtrCmp {
                op: *op,
                d,
                a: self.slot(args[0]),
                b: self.slot(args[1]),
            },
            InstKind::Cmp { op, args } => {
                let (a, b) = (self.slot(args[0]), self.slot(args[1]));
                match op {
                    CmpOp::Eq => Op::Eq { d, a, b },
                    CmpOp::Ne => Op::Ne { d, a, b },
                    CmpOp::Slt => Op::Slt { d, a, b },
                    CmpOp::Sle => Op::Sle { d, a, b },
                    CmpOp::Sgt => Op::Sgt { d, a, b },
                    CmpOp::Sge => Op::Sge { d, a, b },
                    CmpOp::FEq => Op::FEq { d, a, b },
                    CmpOp::FNe => Op::FNe { d, a, b },
                    CmpOp::FLt => Op::FLt { d, a, b },
                    CmpOp::FLe => Op::FLe { d, a, b },
                    CmpOp::FGt => Op::FGt { d, a, b },
                    CmpOp::FGe => Op::FGe { d, a, b },
                }
            }
            InstKind::Unary { op, arg } => {
                let a = self.slot(*arg);
                match op {
                    UnOp::FNeg => Op::FNeg { d, a },
                    UnOp::FAbs => Op::FAbs { d, a },
                    UnOp::SIToFP => Op::SIToFP { d, a },
                    UnOp::FPToSI => Op::FPToSI { d, a },
                    UnOp::SExt => Op::SExt { d, a },
                    UnOp::Trunc => Op::Trunc { d, a },
                    UnOp::FBits => Op::FBits { d, a },
                }
            }
            InstKind::Alloc { elem, len } => {
                let size = elem.size() as u64 * *len as u64;
                let off = crate::memory::align_up(self.out.frame_bytes, crate::memory::ALIGN);
                self.out.frame_bytes = off.saturating_add(size.max(1));
                let idx = self.out.allocs.len() as u32;
                self.out.allocs.push(off);
                Op::Alloc { d, idx }
            }
            InstKind::Load { ty, ptr } => {
                let p = self.slot(*ptr);
                match ty {
                    Type::I8 => Op::Load8 { d, p },
                    Type::I32 | Type::F32 => Op::Load32 { d, p },
                    Type::Ptr => Op::Load64 { d, p },
                    Type::Void | Type::I64 => return Err(invalid(format!("{i} loads {ty}"))),
                }
            }
            InstKind::Store { value, ptr } => {
                let (v, p) = (self.slot(*value), self.slot(*ptr));
                match f.value_type(*value) {
                    Type::I8 => Op::Store8 { v, p },
                    Type::I32 | Type::F32 => Op::Store32 { v, p },
                    Type::Ptr => Op::Store64 { v, p },
                    t @ (Type::Void | Type::I64) => return Err(invalid(format!("{i} stores {t}"))),
                }
            }
            InstKind::Gep {
                base,
                index,
                stride,
            } => Op::Gep {
                d,
                base: self.slot(*base),
                index: self.slot(*index),
                stride: *stride,
            },
            InstKind::Call { callee, args } => {
                let Some(callee_f) = self.m.funcs.get(*callee) else {
                    return Err(invalid(format!("{i} calls {callee}, which does not exist")));
                };
                if !callee_f.is_declaration() {
                    let nparams = callee_f.block_params(callee_f.entry_block()).len();
                    if nparams != args.len() {
                        return Err(invalid(format!(
                            "call of @{} with {} arguments; it has {nparams} parameters",
                            callee_f.name,
                            args.len()
                        )));
                    }
                    let start = self.out.call_args.len() as u32;
                    for &a in args {
                        self.out.call_args.push(self.slot(a));
                    }
                    Op::Call {
                        d,
                        func: callee.index() as u32,
                        args: start,
                    }
                } else if let Some(builtin) = Builtin::from_name(&callee_f.name) {
                    let ok = if builtin.is_variadic() {
                        args.len() >= builtin.arity()
                    } else {
                        args.len() == builtin.arity()
                    };
                    if !ok {
                        return Err(invalid(format!(
                            "runtime function @{} called with {} arguments",
                            callee_f.name,
                            args.len()
                        )));
                    }
                    let idx = self.out.builtin_calls.len() as u32;
                    self.out.builtin_calls.push(BuiltinCall {
                        builtin,
                        args: args.iter().map(|&a| self.slot(a)).collect(),
                        types: args.iter().map(|&a| f.value_type(a)).collect(),
                    });
                    Op::CallBuiltin { d, idx }
                } else {
                    self.trap(ErrorKind::UndefinedFunction {
                        name: callee_f.name.clone(),
                    })
                }
            }
            InstKind::Jump { dest } => match self.edge(dest)? {
                (target, None) => Op::Goto { target },
                (_, Some(edge)) => Op::Jump { edge },
            },
            InstKind::Br {
                cond,
                then_dest,
                else_dest,
            } => {
                let cond = self.slot(*cond);
                let (tt, te) = self.edge(then_dest)?;
                let (ft, fe) = self.edge(else_dest)?;
                if te.is_none() && fe.is_none() {
                    Op::BrGoto { cond, t: tt, f: ft }
                } else {
                    let t = self.edge_index(tt, te);
                    let f = self.edge_index(ft, fe);
                    Op::Br { cond, t, f }
                }
            }
            InstKind::Ret { value } => Op::Ret {
                v: value.map_or(self.scratch(), |v| self.slot(v)),
            },
        })
    }

    fn trap(&mut self, kind: ErrorKind) -> Op {
        let idx = self.out.traps.len() as u32;
        self.out.traps.push(kind);
        Op::Trap { idx }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_main(src: &str) -> DecodedFunc {
        let m = ir::parse_module(src).unwrap();
        let d = decode_module(&m, &vec![4096; m.globals.len()]).unwrap();
        d.funcs[d.main as usize].clone()
    }

    #[test]
    fn fuses_only_single_use_adjacent_pairs() {
        let f = decode_main(
            "func @main() -> i32 {\nbb0:\n  %a = alloc [i32; 4]\n  %p = gep %a, 1, 4\n  store 5, %p\n  %v = load i32, %p\n  %q = gep %a, 2, 4\n  %w = load i32, %q\n  %c = slt %v, %w\n  br %c, bb1, bb2(%c)\nbb1:\n  %d = eq %v, 5\n  br %d, bb2(1), bb2(0)\nbb2(%r: i32):\n  ret %r\n}\n",
        );
        let names: Vec<String> = f
            .code
            .iter()
            .map(|op| {
                format!("{op:?}")
                    .split([' ', '{'])
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            names,
            [
                "Alloc",
                "Gep",
                "Store32",
                "Load32",
                "LoadIdx32",
                "Slt",
                "Br",
                "BrEq",
                "Ret"
            ]
        );
        // Block numbering follows the fused ops: bb1 starts at op 7, bb2 at op 8.
        let Op::BrEq { t, f: e, .. } = f.code[7] else {
            panic!()
        };
        assert_eq!(f.edges[t as usize].target, 8);
        assert_eq!(f.edges[e as usize].target, 8);
    }

    #[test]
    fn constants_then_parameters_then_values() {
        let m = ir::parse_module(
            "global @g: i32 = 0\nfunc @f(i32, i32) -> i32 {\nbb0(%x: i32, %y: i32):\n  %s = add %x, 7\n  %t = add %s, %y\n  store %t, @g\n  ret %t\n}\nfunc @main() -> i32 {\nbb0:\n  %r = call @f(1, 2)\n  ret %r\n}\n",
        )
        .unwrap();
        let d = decode_module(&m, &[8000]).unwrap();
        let f = &d.funcs[0];
        assert_eq!(f.consts, vec![7, 8000]);
        assert_eq!(f.nparams, 2);
        // 2 constants, 2 params, 2 results, 1 scratch.
        assert_eq!(f.nslots, 7);
        assert!(matches!(f.code[0], Op::Add { d: 4, a: 2, b: 0 }));
    }
}
