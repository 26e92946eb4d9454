//! One function as an LLVM `define` (or `declare`), instruction by instruction.
//!
//! The translation is direct (each IR instruction becomes one to three LLVM
//! instructions) with these conventions:
//!
//! - **Names.** Values and blocks are numbered densely in layout order exactly as the
//!   textual IR printer numbers them (block parameters, then results), and printed as
//!   `%vN` and `bbN`, so the LLVM output can be read side by side with `--emit ir`.
//!   Helper instructions get `%tK` (a per-function counter); a comparison's `i1` is
//!   `%vN.b`, an `alloca` is `%vN.a`, the split block on a `br`'s else-arm is
//!   `bbN.s`. Letters keep these namespaces (values, labels) apart.
//! - **Entry.** A fresh `entry:` block holds every `alloc` of the function as an
//!   `alloca` (IR slots live for the whole call; static allocas in the entry block are
//!   what LLVM's mem2reg/SROA and frame layout expect) and jumps to the IR entry block.
//! - **Pointers.** Every `ptr` is `i8*`. `gep b, i, s` is
//!   `getelementptr i8, i8* b, i64 (sext(i) * s)` (the product cannot overflow `i64`,
//!   so it is `mul nsw`; no `inbounds`, as the IR promises nothing about bounds);
//!   loads and stores bitcast the address to the element pointer type first.
//! - **Arithmetic.** Integer ops (on `i64` for the `*64` ones) carry no `nsw`/`nuw`
//!   (IR arithmetic wraps); shift amounts are masked with 31 (IR shifts are modulo 32,
//!   LLVM's give poison past 31); float ops carry no fast-math flags, so LLVM may not
//!   contract `a*b+c` into an FMA. `sext`, `trunc` and `fbits` are LLVM's `sext`,
//!   `trunc` and `bitcast float to i32`.
//!   Comparisons produce `i1` and are zero-extended to the IR's `i32` 0/1; `fne` is the
//!   unordered `une` (C's `!=`), the other float comparisons ordered.
//! - **Branches.** `br` tests `icmp ne i32 %c, 0`, or uses the comparison's `i1`
//!   directly when the condition is a comparison result. Block parameters become
//!   phis at the top of their block (see [`crate::edges`]).
//! - **Calls.** `i32` parameters, arguments and results carry `signext`, as the RV64
//!   C ABI requires (see [`crate::consts::abi_param`]). Variadic calls (`putf`) name the callee's function type and pass `float`
//!   varargs as `double`, per C's default argument promotions.
//! - **Constants.** An `i32` constant used where a pointer is expected (`Function::zero`
//!   of `ptr`) is `null` (or `inttoptr`); a global's address is a `bitcast` constant
//!   expression to `i8*` (see [`crate::globals`]).
//!
//! `fptosi` is LLVM's plain one: for out-of-range inputs the IR specifies RISC-V's
//! saturation while LLVM gives poison; SysY programs never rely on either. Likewise
//! `sdiv`/`srem` of the minimum by -1 (defined in the IR as RISC-V does) is undefined
//! behaviour in LLVM, for `i32` and `i64` alike.

use crate::consts::{abi_param, abi_ret, align_of, float_literal, llvm_type};
use crate::edges::{br_shape, BrShape, EdgePlan, Incoming};
use crate::globals::GlobalLayout;
use crate::symbols::{is_external, Symbols};
use ir::{
    BinOp, Block, BlockCall, CmpOp, EntityRef, FuncId, Function, Inst, InstKind, Module,
    SecondaryMap, Type, UnOp, Value, ValueDef,
};
use std::fmt::Write;

/// What a function's emission needs to know about the rest of the module.
pub struct ModuleCtx<'a> {
    pub module: &'a Module,
    pub symbols: &'a Symbols,
    /// The layout of each global, indexed by `GlobalId::index`.
    pub globals: &'a [GlobalLayout],
    /// Written after a definition's parameter list, e.g. `" #0"` (or empty).
    pub define_attrs: &'a str,
}

/// The `declare` or `define` of function `id`, with a trailing newline.
pub fn emit_function(ctx: &ModuleCtx<'_>, id: FuncId) -> String {
    let f = &ctx.module.funcs[id];
    let Some(entry) = f.layout.entry_block() else {
        let params: Vec<&str> = f.sig.params.iter().map(|&t| abi_param(t)).collect();
        return format!(
            "declare {} {}({})\n",
            abi_ret(f.sig.ret),
            ctx.symbols.func(id),
            param_list(&params, f.sig.variadic)
        );
    };
    let mut e = FuncEmitter::new(ctx, f, entry);
    e.emit(id);
    e.out
}

/// `a, b` or `a, b, ...`.
fn param_list(params: &[&str], variadic: bool) -> String {
    let mut s = params.join(", ");
    if variadic {
        s.push_str(if params.is_empty() { "..." } else { ", ..." });
    }
    s
}

struct FuncEmitter<'a> {
    ctx: &'a ModuleCtx<'a>,
    f: &'a Function,
    entry: Block,
    plan: EdgePlan,
    /// The reachable blocks in layout order: the ones emitted.
    blocks: Vec<Block>,
    /// Dense number + 1 of each value (0: not numbered).
    value_num: SecondaryMap<Value, u32>,
    /// Dense number + 1 of each block (0: not in the layout).
    block_num: SecondaryMap<Block, u32>,
    next_tmp: u32,
    out: String,
}

impl<'a> FuncEmitter<'a> {
    fn new(ctx: &'a ModuleCtx<'a>, f: &'a Function, entry: Block) -> Self {
        let mut value_num = SecondaryMap::new();
        let mut block_num = SecondaryMap::new();
        let mut nv = 0u32;
        for (nb, b) in f.layout.blocks().enumerate() {
            block_num[b] = nb as u32 + 1;
            let results = f.layout.block_insts(b).filter_map(|i| f.inst_result(i));
            for v in f.block_params(b).iter().copied().chain(results) {
                if value_num[v] == 0 {
                    nv += 1;
                    value_num[v] = nv;
                }
            }
        }
        let plan = EdgePlan::new(f, entry);
        let blocks = f.layout.blocks().filter(|&b| plan.reachable[b]).collect();
        FuncEmitter {
            ctx,
            f,
            entry,
            plan,
            blocks,
            value_num,
            block_num,
            next_tmp: 0,
            out: String::new(),
        }
    }

    // ---- names --------------------------------------------------------------

    /// `%vN` for a value defined in the layout; `%xK` (never defined, so LLVM reports
    /// it) for anything else.
    fn name(&self, v: Value) -> String {
        match self.value_num.get(v).copied().unwrap_or(0) {
            0 => format!("%x{}", v.index()),
            n => format!("%v{}", n - 1),
        }
    }

    /// `bbN` (without `%`).
    fn label(&self, b: Block) -> String {
        match self.block_num.get(b).copied().unwrap_or(0) {
            0 => format!("bbx{}", b.index()),
            n => format!("bb{}", n - 1),
        }
    }

    /// The label of the split block on the else-arm of `b`'s `br`.
    fn split_label(&self, b: Block) -> String {
        format!("{}.s", self.label(b))
    }

    fn tmp(&mut self) -> String {
        self.next_tmp += 1;
        format!("%t{}", self.next_tmp - 1)
    }

    /// `v` as an operand where LLVM expects IR type `ty`.
    fn op(&self, v: Value, ty: Type) -> String {
        if v.index() >= self.f.num_values() {
            return "undef".to_string();
        }
        match self.f.value_def(v) {
            ValueDef::IConst(c) => match ty {
                Type::Ptr if c == 0 => "null".to_string(),
                Type::Ptr => format!("inttoptr (i64 {c} to i8*)"),
                Type::F32 => float_literal((c as f32).to_bits()),
                Type::I8 => (c as i8).to_string(),
                Type::I32 | Type::I64 | Type::Void => c.to_string(),
            },
            ValueDef::FConst(bits) => float_literal(bits),
            ValueDef::Global(g) => match self.ctx.globals.get(g.index()) {
                Some(layout) => layout.address(&self.ctx.symbols.global(g)),
                None => "undef".to_string(),
            },
            ValueDef::Inst(_) | ValueDef::Param(..) => self.name(v),
        }
    }

    /// `T v`.
    fn typed(&self, v: Value, ty: Type) -> String {
        format!("{} {}", llvm_type(ty), self.op(v, ty))
    }

    fn line(&mut self, s: impl AsRef<str>) {
        self.out.push_str("  ");
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    // ---- structure ----------------------------------------------------------

    fn emit(&mut self, id: FuncId) {
        let f = self.f;
        let entry_phis = self.plan.entry_is_target(self.entry);
        let entry_params = f.block_params(self.entry);
        let params: Vec<String> = f
            .sig
            .params
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let name = match entry_params.get(i) {
                    Some(&p) if !entry_phis => self.name(p),
                    _ => format!("%a{i}"),
                };
                format!("{} {name}", abi_param(t))
            })
            .collect();
        let params: Vec<&str> = params.iter().map(String::as_str).collect();
        let linkage = if is_external(f) { "" } else { "internal " };
        let header = format!(
            "define {linkage}{} {}({}){} {{\n",
            abi_ret(f.sig.ret),
            self.ctx.symbols.func(id),
            param_list(&params, f.sig.variadic),
            self.ctx.define_attrs
        );
        self.out.push_str(&header);

        self.out.push_str("entry:\n");
        self.emit_allocas();
        let first = format!("br label %{}", self.label(self.entry));
        self.line(first);

        for b in std::mem::take(&mut self.blocks) {
            self.emit_block(b);
        }
        self.out.push_str("}\n");
    }

    /// Every `alloc` of a reachable block, as an `alloca` plus its `i8*` address.
    fn emit_allocas(&mut self) {
        let f = self.f;
        for b in self.blocks.clone() {
            for i in f.layout.block_insts(b) {
                let (InstKind::Alloc { elem, len }, Some(r)) = (f.kind(i), f.inst_result(i)) else {
                    continue;
                };
                let elem = if *elem == Type::Void { Type::I8 } else { *elem };
                let arr = format!("[{len} x {}]", llvm_type(elem));
                let r = self.name(r);
                let align = align_of(elem).max(4);
                self.line(format!("{r}.a = alloca {arr}, align {align}"));
                self.line(format!("{r} = bitcast {arr}* {r}.a to i8*"));
            }
        }
    }

    fn emit_block(&mut self, b: Block) {
        let f = self.f;
        let _ = writeln!(self.out, "{}:", self.label(b));
        self.emit_phis(b);
        for i in f.layout.block_insts(b) {
            self.emit_inst(i);
            if f.kind(i).is_terminator() {
                // Anything after a terminator is dead (and LLVM rejects it).
                return;
            }
        }
        self.line("unreachable");
    }

    fn emit_phis(&mut self, b: Block) {
        let f = self.f;
        if b == self.entry && !self.plan.entry_is_target(b) {
            return; // The parameters are the function's arguments.
        }
        let incoming = std::mem::take(&mut self.plan.incoming[b]);
        for (k, &p) in f.block_params(b).iter().enumerate() {
            let ty = f.value_type(p);
            let entries: Vec<String> = incoming
                .iter()
                .map(|inc| {
                    let (val, from) = match inc {
                        Incoming::Entry => (format!("%a{k}"), "entry".to_string()),
                        Incoming::Block(src, args) => (self.arg(args, k, ty), self.label(*src)),
                        Incoming::Split(src, args) => {
                            (self.arg(args, k, ty), self.split_label(*src))
                        }
                    };
                    format!("[ {val}, %{from} ]")
                })
                .collect();
            let line = format!(
                "{} = phi {} {}",
                self.name(p),
                llvm_type(ty),
                entries.join(", ")
            );
            self.line(line);
        }
        self.plan.incoming[b] = incoming;
    }

    /// Branch argument `k` (`undef` if the branch passes too few).
    fn arg(&self, args: &[Value], k: usize, ty: Type) -> String {
        args.get(k).map_or("undef".to_string(), |&a| self.op(a, ty))
    }

    // ---- instructions -------------------------------------------------------

    fn emit_inst(&mut self, inst: Inst) {
        let f = self.f;
        let kind = f.kind(inst);
        let has_value = matches!(
            kind,
            InstKind::Binary { .. }
                | InstKind::Cmp { .. }
                | InstKind::Unary { .. }
                | InstKind::Load { .. }
                | InstKind::Gep { .. }
        );
        let r = match f.inst_result(inst) {
            Some(v) => self.name(v),
            // Malformed (a value-producing instruction without a result): any fresh
            // name keeps the output well-formed.
            None if has_value => self.tmp(),
            None => String::new(),
        };
        let res = || r.clone();
        match kind {
            InstKind::Binary { op, args } => {
                let ty = op.ty();
                let a = self.op(args[0], ty);
                let mut b = self.op(args[1], ty);
                if matches!(op, BinOp::Shl | BinOp::LShr | BinOp::AShr) {
                    b = match f.as_iconst(args[1]) {
                        Some(c) => (c & 31).to_string(),
                        None => {
                            let t = self.tmp();
                            self.line(format!("{t} = and i32 {b}, 31"));
                            t
                        }
                    };
                }
                let line = format!("{} = {} {} {a}, {b}", res(), binop(*op), llvm_type(ty));
                self.line(line);
            }
            InstKind::Cmp { op, args } => {
                // (Integer comparisons may also order two pointers.)
                let ty = if op.is_float() {
                    op.operand_ty()
                } else {
                    self.f.value_type(args[0])
                };
                let (instr, pred) = cmp(*op);
                let a = self.typed(args[0], ty);
                let b = self.op(args[1], ty);
                let r = res();
                self.line(format!("{r}.b = {instr} {pred} {a}, {b}"));
                self.line(format!("{r} = zext i1 {r}.b to i32"));
            }
            InstKind::Unary { op, arg } => {
                let a = self.typed(*arg, op.operand_ty());
                let line = match op {
                    UnOp::FNeg => format!("{} = fneg {a}", res()),
                    UnOp::FAbs => format!("{} = call float @llvm.fabs.f32({a})", res()),
                    UnOp::SIToFP => format!("{} = sitofp {a} to float", res()),
                    UnOp::FPToSI => format!("{} = fptosi {a} to i32", res()),
                    UnOp::SExt => format!("{} = sext {a} to i64", res()),
                    UnOp::Trunc => format!("{} = trunc {a} to i32", res()),
                    UnOp::FBits => format!("{} = bitcast {a} to i32", res()),
                };
                self.line(line);
            }
            InstKind::Alloc { .. } => {} // Hoisted into the entry block.
            InstKind::Load { ty, ptr } => {
                let p = self.elem_ptr(*ptr, *ty);
                let t = llvm_type(*ty);
                let line = format!("{} = load {t}, {t}* {p}, align {}", res(), align_of(*ty));
                self.line(line);
            }
            InstKind::Store { value, ptr } => {
                let ty = f.value_type(*value);
                let p = self.elem_ptr(*ptr, ty);
                let v = self.typed(*value, ty);
                let line = format!("store {v}, {}* {p}, align {}", llvm_type(ty), align_of(ty));
                self.line(line);
            }
            InstKind::Gep {
                base,
                index,
                stride,
            } => {
                let base = self.typed(*base, Type::Ptr);
                let offset = match f.as_iconst(*index) {
                    Some(c) => (c as i64 * *stride as i64).to_string(),
                    None => {
                        let ext = self.tmp();
                        let idx = self.op(*index, Type::I32);
                        self.line(format!("{ext} = sext i32 {idx} to i64"));
                        if *stride == 1 {
                            ext
                        } else {
                            let mul = self.tmp();
                            self.line(format!("{mul} = mul nsw i64 {ext}, {stride}"));
                            mul
                        }
                    }
                };
                let line = format!("{} = getelementptr i8, {base}, i64 {offset}", res());
                self.line(line);
            }
            InstKind::Call { callee, args } => self.emit_call(inst, *callee, args),
            InstKind::Jump { dest } => {
                let line = format!("br label %{}", self.label(dest.block));
                self.line(line);
            }
            InstKind::Br {
                cond,
                then_dest,
                else_dest,
            } => self.emit_br(inst, *cond, then_dest, else_dest),
            InstKind::Ret { value } => {
                let ty = f.sig.ret;
                let line = match (ty, value) {
                    (Type::Void, _) => "ret void".to_string(),
                    (_, Some(v)) => format!("ret {}", self.typed(*v, ty)),
                    (_, None) => format!("ret {} {}", llvm_type(ty), zero(ty)),
                };
                self.line(line);
            }
        }
    }

    /// `ptr` bitcast to a pointer to `ty` (a fresh temporary), for a load or store.
    fn elem_ptr(&mut self, ptr: Value, ty: Type) -> String {
        let p = self.typed(ptr, Type::Ptr);
        if ty == Type::I8 {
            return self.op(ptr, Type::Ptr);
        }
        let t = self.tmp();
        self.line(format!("{t} = bitcast {p} to {}*", llvm_type(ty)));
        t
    }

    fn emit_call(&mut self, inst: Inst, callee: FuncId, args: &[Value]) {
        let Some(g) = self.ctx.module.funcs.get(callee) else {
            self.line("unreachable ; call to a function outside the module");
            return;
        };
        let sig = &g.sig;
        let mut actual = Vec::with_capacity(args.len());
        for (k, &a) in args.iter().enumerate() {
            match sig.params.get(k) {
                Some(&ty) => actual.push(format!("{} {}", abi_param(ty), self.op(a, ty))),
                None => {
                    let ty = self.f.value_type(a);
                    if ty == Type::F32 {
                        // C's default argument promotion for variadic arguments.
                        let t = self.tmp();
                        let v = self.typed(a, ty);
                        self.line(format!("{t} = fpext {v} to double"));
                        actual.push(format!("double {t}"));
                    } else {
                        actual.push(format!("{} {}", abi_param(ty), self.op(a, ty)));
                    }
                }
            }
        }
        let fn_ty = if sig.variadic {
            let params: Vec<&str> = sig.params.iter().map(|&t| llvm_type(t)).collect();
            format!("{} ({})", abi_ret(sig.ret), param_list(&params, true))
        } else {
            abi_ret(sig.ret).to_string()
        };
        let call = format!(
            "call {fn_ty} {}({})",
            self.ctx.symbols.func(callee),
            actual.join(", ")
        );
        match self.f.inst_result(inst) {
            Some(r) if sig.ret != Type::Void => {
                let line = format!("{} = {call}", self.name(r));
                self.line(line);
            }
            _ => self.line(call),
        }
    }

    fn emit_br(&mut self, inst: Inst, cond: Value, then_dest: &BlockCall, else_dest: &BlockCall) {
        let f = self.f;
        let src = f.layout.inst_block(inst);
        let shape = br_shape(then_dest, else_dest);
        if shape == BrShape::Merged {
            let line = format!("br label %{}", self.label(then_dest.block));
            self.line(line);
            return;
        }
        // A comparison's i1 is reused when it is a result in the layout.
        let from_cmp = f
            .def_inst(cond)
            .filter(|&i| matches!(f.kind(i), InstKind::Cmp { .. }) && f.layout.is_inst_inserted(i));
        let c = match from_cmp {
            Some(_) => format!("{}.b", self.name(cond)),
            None => {
                let t = self.tmp();
                let v = self.typed(cond, Type::I32);
                self.line(format!("{t} = icmp ne {v}, 0"));
                t
            }
        };
        let then_label = self.label(then_dest.block);
        let else_label = match (shape, src) {
            (BrShape::SplitElse, Some(src)) => self.split_label(src),
            _ => self.label(else_dest.block),
        };
        self.line(format!(
            "br i1 {c}, label %{then_label}, label %{else_label}"
        ));
        if let (BrShape::SplitElse, Some(src)) = (shape, src) {
            let _ = writeln!(self.out, "{}:", self.split_label(src));
            self.line(format!("br label %{}", self.label(else_dest.block)));
        }
    }
}

/// The LLVM opcode of a binary operation.
fn binop(op: BinOp) -> &'static str {
    match op {
        BinOp::Add | BinOp::Add64 => "add",
        BinOp::Sub | BinOp::Sub64 => "sub",
        BinOp::Mul | BinOp::Mul64 => "mul",
        BinOp::SDiv | BinOp::SDiv64 => "sdiv",
        BinOp::SRem | BinOp::SRem64 => "srem",
        BinOp::And => "and",
        BinOp::Or => "or",
        BinOp::Xor => "xor",
        BinOp::Shl => "shl",
        BinOp::LShr => "lshr",
        BinOp::AShr => "ashr",
        BinOp::FAdd => "fadd",
        BinOp::FSub => "fsub",
        BinOp::FMul => "fmul",
        BinOp::FDiv => "fdiv",
    }
}

/// The LLVM instruction and predicate of a comparison.
fn cmp(op: CmpOp) -> (&'static str, &'static str) {
    match op {
        CmpOp::Eq => ("icmp", "eq"),
        CmpOp::Ne => ("icmp", "ne"),
        CmpOp::Slt => ("icmp", "slt"),
        CmpOp::Sle => ("icmp", "sle"),
        CmpOp::Sgt => ("icmp", "sgt"),
        CmpOp::Sge => ("icmp", "sge"),
        CmpOp::FEq => ("fcmp", "oeq"),
        CmpOp::FNe => ("fcmp", "une"),
        CmpOp::FLt => ("fcmp", "olt"),
        CmpOp::FLe => ("fcmp", "ole"),
        CmpOp::FGt => ("fcmp", "ogt"),
        CmpOp::FGe => ("fcmp", "oge"),
    }
}

/// The zero constant of `ty`, for a `ret` without a value in a non-void function.
fn zero(ty: Type) -> &'static str {
    match ty {
        Type::F32 => "0.0",
        Type::Ptr => "null",
        _ => "0",
    }
}
