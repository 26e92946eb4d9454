//! The IR verifier, after Cranelift's `verifier/mod.rs`: it checks every invariant the
//! rest of the compiler relies on, collects all violations instead of stopping at the
//! first, and names each one by function, block and instruction exactly as the printer
//! spells them (`in @main, bb3: %7 = add %5, %9: use of %9 not dominated by its
//! definition`). It never panics, whatever the module contains.
//!
//! # Invariants checked
//!
//! Module:
//! - function names are unique, and so are global names;
//! - a global's element type is not `void` or `i64`; an explicit initialiser is no
//!   longer than the global (`Words` and `Bytes` have at most `len` elements); `Bytes`
//!   only initialise `i8` data, and `i8` words fit in a byte.
//!
//! Signatures: parameters are `i32`, `f32` or `ptr` (a declaration's may also be
//! `i64`: a C library function's `size_t`); the return type is one of those or `void`.
//!
//! Function bodies:
//! - layout integrity: every instruction in the layout is a valid entity that the layout
//!   places in the block it is listed in;
//! - every block in the layout is non-empty, ends with a terminator (`jump`, `br`,
//!   `ret`) and has no terminator elsewhere;
//! - the entry block's parameters match the signature's parameter types, and no branch
//!   targets the entry block;
//! - block parameters have a value type or `i64` and are recorded as parameter `k` of
//!   their block; instruction results exist exactly when the opcode (or callee) yields a
//!   value, have the type it implies, and are recorded as results of their instruction;
//! - every operand is a valid value of this function; a global address names an
//!   existing global; an instruction result's defining instruction is still in the
//!   layout, and a block parameter's block is still in the layout and still lists it;
//! - operand types match the opcode: integer arithmetic and comparisons on `i32`, float
//!   ones on `f32`, `*64` arithmetic on `i64`, `fneg`/`fptosi`/`fbits` on `f32`,
//!   `sitofp`/`sext` on `i32`, `trunc` on `i64`; `load` of `i32`, `f32` or `ptr` through
//!   a `ptr`; `store` of a value type through a `ptr`; `gep` of a `ptr` base with an
//!   `i32` index; `alloc` of an element type other than `void` and `i64`; `br` on an
//!   `i32`; `ret` with a value of the return type, or none for `void`;
//! - calls: the callee exists; argument count and types match its signature (for a
//!   variadic callee at least the fixed ones, the rest of value types);
//! - branches: targets are blocks in the layout; argument counts and types match the
//!   target's parameters;
//! - dominance (in blocks reachable from the entry; unreachable blocks are only type
//!   checked): every use of a block parameter or instruction result is dominated by its
//!   definition. Block parameters dominate their whole block; a result dominates the
//!   rest of its block; branch arguments are uses at the end of the predecessor. Skipped
//!   when the control flow itself is malformed (bad branch targets);
//! - def-use lists: each instruction appears in `users(v)` exactly as many times as it
//!   has `v` as an operand (checked both ways, including instructions that are no longer
//!   in the layout but still listed), and constants have no recorded users.
//!
//! So `i64` values live only in instruction results and block parameters: never in
//! memory, nor in a defined function's signature or a call of it (only a C library
//! function, such as `memset`, takes them).

use crate::analysis::{ControlFlowGraph, DominatorTree};
use crate::entities::{Block, Inst, Value};
use crate::function::{Function, Signature, ValueDef};
use crate::inst::InstKind;
use crate::module::{GlobalInit, Module};
use crate::text::{print_inst, Names};
use crate::types::Type;
use cranelift_entity::{EntityRef, SecondaryMap};
use std::fmt;

/// One violated invariant: where (`in @f, bb3: %7 = add %5, %9`, `in @f, bb3`, `in @f`
/// or `global @g`) and what.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct VerifierError {
    pub location: String,
    pub message: String,
}

impl fmt::Display for VerifierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// All violations found, in a deterministic order (module, then each function in
/// order, its blocks in layout order).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct VerifierErrors(pub Vec<VerifierError>);

impl fmt::Display for VerifierErrors {
    /// One error per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for VerifierErrors {}

impl VerifierErrors {
    fn into_result(self) -> Result<(), VerifierErrors> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self)
        }
    }
}

/// Verifies the whole module: module-level invariants and every function.
pub fn verify_module(m: &Module) -> Result<(), VerifierErrors> {
    let mut errors = Vec::new();
    check_module(m, &mut errors);
    for (_, f) in m.funcs.iter() {
        check_function(m, f, &mut errors);
    }
    VerifierErrors(errors).into_result()
}

/// Verifies one function of `m` (its signature, and its body if it has one).
pub fn verify_function(m: &Module, f: &Function) -> Result<(), VerifierErrors> {
    let mut errors = Vec::new();
    check_function(m, f, &mut errors);
    VerifierErrors(errors).into_result()
}

/// The types of memory elements, parameters, arguments and return values.
fn is_value_type(t: Type) -> bool {
    matches!(t, Type::I32 | Type::F32 | Type::Ptr)
}

fn check_module(m: &Module, errors: &mut Vec<VerifierError>) {
    let mut names: Vec<(&str, usize)> = m
        .funcs
        .values()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    names.sort();
    for w in names.windows(2) {
        if w[0].0 == w[1].0 {
            errors.push(VerifierError {
                location: format!("in @{}", w[1].0),
                message: "function name is used twice".to_string(),
            });
        }
    }
    let mut gnames: Vec<&str> = m.globals.values().map(|g| g.name.as_str()).collect();
    gnames.sort();
    for w in gnames.windows(2) {
        if w[0] == w[1] {
            errors.push(VerifierError {
                location: format!("global @{}", w[1]),
                message: "global name is used twice".to_string(),
            });
        }
    }
    for g in m.globals.values() {
        let mut err = |message: String| {
            errors.push(VerifierError {
                location: format!("global @{}", g.name),
                message,
            })
        };
        if matches!(g.elem, Type::Void | Type::I64) {
            err(format!("element type is {}", g.elem));
        }
        let (n, kind) = match &g.init {
            GlobalInit::Zero => (0, "zero"),
            GlobalInit::Words(w) => (w.len(), "words"),
            GlobalInit::Bytes(b) => (b.len(), "bytes"),
        };
        if n as u64 > g.len as u64 {
            err(format!(
                "initialiser has {n} elements but the global only {}",
                g.len
            ));
        }
        match &g.init {
            GlobalInit::Bytes(_) if g.elem != Type::I8 => err(format!(
                "byte-string initialiser for {} data (only i8 data takes {kind})",
                g.elem
            )),
            GlobalInit::Words(w) if g.elem == Type::I8 && w.iter().any(|&x| x > 0xFF) => {
                err("i8 initialiser element does not fit in a byte".to_string())
            }
            _ => {}
        }
    }
}

fn check_signature(f: &Function, errors: &mut Vec<VerifierError>) {
    let loc = || format!("in @{}", f.name);
    // A declaration is a C library function: its `i64` parameters are `size_t`s
    // (`memset`'s length); a defined function's are SysY's types only.
    let external = f.is_declaration();
    for (i, &t) in f.sig.params.iter().enumerate() {
        if !(is_value_type(t) || external && t == Type::I64) {
            errors.push(VerifierError {
                location: loc(),
                message: format!("parameter {i} has type {t}, expected i32, f32 or ptr"),
            });
        }
    }
    if !(is_value_type(f.sig.ret) || f.sig.ret == Type::Void) {
        errors.push(VerifierError {
            location: loc(),
            message: format!("return type {} is not i32, f32, ptr or void", f.sig.ret),
        });
    }
}

fn check_function(m: &Module, f: &Function, errors: &mut Vec<VerifierError>) {
    check_signature(f, errors);
    if f.is_declaration() {
        return;
    }
    let mut v = Verifier {
        m,
        f,
        names: Names::new(f),
        errors,
        pos: SecondaryMap::new(),
        cfg_ok: true,
    };
    v.check_body();
}

struct Verifier<'a> {
    m: &'a Module,
    f: &'a Function,
    names: Names,
    errors: &'a mut Vec<VerifierError>,
    /// Position of each laid-out instruction within its block.
    pos: SecondaryMap<Inst, u32>,
    /// Whether every branch target is a block in the layout, so the CFG and dominator
    /// tree can be computed meaningfully.
    cfg_ok: bool,
}

impl Verifier<'_> {
    fn report(&mut self, location: String, message: String) {
        self.errors.push(VerifierError { location, message });
    }

    fn at_func(&mut self, message: String) {
        let loc = format!("in @{}", self.f.name);
        self.report(loc, message);
    }

    fn at_block(&mut self, b: Block, message: String) {
        let loc = format!("in @{}, {}", self.f.name, self.names.block(b));
        self.report(loc, message);
    }

    fn at_inst(&mut self, b: Option<Block>, i: Inst, message: String) {
        let text = print_inst(self.m, self.f, &self.names, i);
        let loc = match b {
            Some(b) => format!("in @{}, {}: {text}", self.f.name, self.names.block(b)),
            None => format!("in @{}, outside the layout: {text}", self.f.name),
        };
        self.report(loc, message);
    }

    fn valid_value(&self, v: Value) -> bool {
        v.index() < self.f.num_values()
    }

    fn operand(&self, v: Value) -> String {
        self.names.operand(self.m, self.f, v)
    }

    fn check_body(&mut self) {
        let f = self.f;
        let blocks: Vec<Block> = f.layout.blocks().collect();
        for &b in &blocks {
            if b.index() >= f.num_blocks() {
                self.at_func(format!("layout holds nonexistent block {b}"));
                return;
            }
        }
        // Layout integrity first: later checks index instruction data freely.
        let mut layout_ok = true;
        for &b in &blocks {
            for (k, i) in f.layout.block_insts(b).enumerate() {
                if i.index() >= f.num_insts() {
                    self.at_block(b, format!("layout holds nonexistent instruction {i}"));
                    layout_ok = false;
                    break;
                }
                if f.layout.inst_block(i) != Some(b) {
                    self.at_inst(
                        Some(b),
                        i,
                        "layout places this instruction in another block".into(),
                    );
                    layout_ok = false;
                }
                self.pos[i] = k as u32;
            }
        }
        if !layout_ok {
            return;
        }
        self.check_entry(blocks[0]);
        for &b in &blocks {
            self.check_block(b);
        }
        if self.cfg_ok {
            self.check_dominance(&blocks);
        }
        self.check_def_use(&blocks);
    }

    fn check_entry(&mut self, entry: Block) {
        let params: Vec<Type> = self
            .f
            .block_params(entry)
            .iter()
            .map(|&p| {
                if self.valid_value(p) {
                    self.f.value_type(p)
                } else {
                    Type::Void
                }
            })
            .collect();
        if params != self.f.sig.params {
            let show = |ts: &[Type]| ts.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ");
            let msg = format!(
                "entry block parameters ({}) do not match the signature's ({})",
                show(&params),
                show(&self.f.sig.params)
            );
            self.at_block(entry, msg);
        }
    }

    fn check_block(&mut self, b: Block) {
        let f = self.f;
        for (k, &p) in f.block_params(b).iter().enumerate() {
            if !self.valid_value(p) {
                self.at_block(b, format!("parameter {k} is a nonexistent value {p}"));
                continue;
            }
            if f.value_def(p) != ValueDef::Param(b, k as u32) {
                let msg = format!(
                    "parameter {} is not recorded as parameter {k} of this block",
                    self.names.value(p)
                );
                self.at_block(b, msg);
            }
            let t = f.value_type(p);
            if !is_value_type(t) && t != Type::I64 {
                let msg = format!(
                    "parameter {} has type {t}, expected i32, i64, f32 or ptr",
                    self.names.value(p)
                );
                self.at_block(b, msg);
            }
        }
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        match insts.last() {
            None => self.at_block(b, "block is empty (no terminator)".into()),
            Some(&last) if !f.kind(last).is_terminator() => {
                self.at_inst(Some(b), last, "block does not end with a terminator".into())
            }
            _ => {}
        }
        for (k, &i) in insts.iter().enumerate() {
            if k + 1 < insts.len() && f.kind(i).is_terminator() {
                self.at_inst(Some(b), i, "terminator in the middle of a block".into());
            }
            self.check_inst(b, i);
        }
    }

    /// Checks one operand's existence and definition; returns its type if it is sound.
    fn check_operand(&mut self, b: Block, i: Inst, v: Value) -> Option<Type> {
        if !self.valid_value(v) {
            self.at_inst(
                Some(b),
                i,
                format!("operand {v} is not a value of this function"),
            );
            return None;
        }
        let f = self.f;
        match f.value_def(v) {
            ValueDef::Inst(d) => {
                let inserted = d.index() < f.num_insts() && f.layout.is_inst_inserted(d);
                let in_layout_block = inserted
                    && f.layout
                        .inst_block(d)
                        .is_some_and(|db| f.layout.is_block_inserted(db));
                if !in_layout_block || f.inst_result(d) != Some(v) {
                    let msg = format!(
                        "use of {} whose defining instruction was removed",
                        self.operand(v)
                    );
                    self.at_inst(Some(b), i, msg);
                    return None;
                }
            }
            ValueDef::Param(pb, k) => {
                let listed =
                    pb.index() < f.num_blocks() && f.block_params(pb).get(k as usize) == Some(&v);
                if !listed || !f.layout.is_block_inserted(pb) {
                    let msg = format!(
                        "use of {} whose block or parameter was removed",
                        self.operand(v)
                    );
                    self.at_inst(Some(b), i, msg);
                    return None;
                }
            }
            ValueDef::Global(g) => {
                if g.index() >= self.m.globals.len() {
                    self.at_inst(Some(b), i, format!("address of nonexistent global {g}"));
                    return None;
                }
            }
            ValueDef::IConst(_) | ValueDef::FConst(_) => {}
        }
        Some(f.value_type(v))
    }

    /// Checks that operand `v` (described as `what`) has type `want`.
    fn expect_type(&mut self, b: Block, i: Inst, v: Value, want: Type, what: &str) {
        if let Some(t) = self.check_operand(b, i, v) {
            if t != want {
                let msg = format!("{what} {} has type {t}, expected {want}", self.operand(v));
                self.at_inst(Some(b), i, msg);
            }
        }
    }

    fn check_inst(&mut self, b: Block, i: Inst) {
        let f = self.f;
        let kind = f.kind(i);
        // The result type the instruction implies (None: unknown callee).
        let mut result_ty = Some(Type::Void);
        match kind {
            InstKind::Binary { op, args } => {
                result_ty = Some(op.ty());
                for &a in args {
                    self.expect_type(b, i, a, op.ty(), "operand");
                }
            }
            InstKind::Cmp { op, args } => {
                result_ty = Some(Type::I32);
                // Integer comparisons also order two pointers (as 64-bit addresses).
                let pointers = !op.is_float()
                    && args
                        .iter()
                        .all(|&a| a.index() < f.num_values() && f.value_type(a) == Type::Ptr);
                let want = if pointers { Type::Ptr } else { op.operand_ty() };
                for &a in args {
                    self.expect_type(b, i, a, want, "operand");
                }
            }
            InstKind::Unary { op, arg } => {
                result_ty = Some(op.result_ty());
                self.expect_type(b, i, *arg, op.operand_ty(), "operand");
            }
            InstKind::Alloc { elem, .. } => {
                result_ty = Some(Type::Ptr);
                if matches!(elem, Type::Void | Type::I64) {
                    self.at_inst(Some(b), i, format!("alloc of {elem} elements"));
                }
            }
            InstKind::Load { ty, ptr } => {
                result_ty = Some(*ty);
                if !is_value_type(*ty) {
                    self.at_inst(
                        Some(b),
                        i,
                        format!("load of type {ty}, expected i32, f32 or ptr"),
                    );
                }
                self.expect_type(b, i, *ptr, Type::Ptr, "address");
            }
            InstKind::Store { value, ptr } => {
                if let Some(t) = self.check_operand(b, i, *value) {
                    if !is_value_type(t) {
                        self.at_inst(Some(b), i, format!("store of a {t} value"));
                    }
                }
                self.expect_type(b, i, *ptr, Type::Ptr, "address");
            }
            InstKind::Gep { base, index, .. } => {
                result_ty = Some(Type::Ptr);
                self.expect_type(b, i, *base, Type::Ptr, "base");
                self.expect_type(b, i, *index, Type::I32, "index");
            }
            InstKind::Call { callee, args } => match self.m.funcs.get(*callee) {
                None => {
                    result_ty = None;
                    self.at_inst(Some(b), i, format!("call of nonexistent function {callee}"));
                    for &a in args {
                        self.check_operand(b, i, a);
                    }
                }
                Some(c) => {
                    result_ty = Some(c.sig.ret);
                    self.check_call_args(b, i, &c.sig, &c.name, args);
                }
            },
            InstKind::Jump { .. } | InstKind::Br { .. } => {
                if let InstKind::Br { cond, .. } = kind {
                    self.expect_type(b, i, *cond, Type::I32, "condition");
                }
                for t in kind.targets() {
                    self.check_target(b, i, t.block, &t.args);
                }
            }
            InstKind::Ret { value } => {
                let ret = f.sig.ret;
                match value {
                    None if ret != Type::Void => {
                        self.at_inst(Some(b), i, format!("missing return value of type {ret}"))
                    }
                    Some(_) if ret == Type::Void => {
                        self.at_inst(Some(b), i, "return value in a void function".into())
                    }
                    Some(v) => self.expect_type(b, i, *v, ret, "return value"),
                    None => {}
                }
            }
        }
        let result = f.inst_result(i);
        match (result, result_ty) {
            (_, None) => {}
            (None, Some(t)) if t != Type::Void => {
                self.at_inst(Some(b), i, format!("missing result of type {t}"))
            }
            (Some(r), Some(Type::Void)) => {
                let msg = format!("has a result {} but yields no value", self.operand(r));
                self.at_inst(Some(b), i, msg)
            }
            (Some(r), Some(t)) => {
                if !self.valid_value(r) {
                    self.at_inst(
                        Some(b),
                        i,
                        format!("result {r} is not a value of this function"),
                    );
                } else {
                    if f.value_def(r) != ValueDef::Inst(i) {
                        self.at_inst(Some(b), i, "result is not recorded as defined here".into());
                    }
                    if f.value_type(r) != t {
                        let msg = format!("result has type {}, expected {t}", f.value_type(r));
                        self.at_inst(Some(b), i, msg);
                    }
                }
            }
            (None, Some(_)) => {}
        }
    }

    fn check_call_args(&mut self, b: Block, i: Inst, sig: &Signature, name: &str, args: &[Value]) {
        let fixed = sig.params.len();
        let count_ok = if sig.variadic {
            args.len() >= fixed
        } else {
            args.len() == fixed
        };
        if !count_ok {
            let msg = format!(
                "@{name} takes {}{fixed} arguments, got {}",
                if sig.variadic { "at least " } else { "" },
                args.len()
            );
            self.at_inst(Some(b), i, msg);
        }
        for (k, &a) in args.iter().enumerate() {
            match sig.params.get(k) {
                Some(&want) => self.expect_type(b, i, a, want, &format!("argument {k}")),
                None => {
                    if let Some(t) = self.check_operand(b, i, a) {
                        if !is_value_type(t) {
                            self.at_inst(Some(b), i, format!("variadic argument {k} has type {t}"));
                        }
                    }
                }
            }
        }
    }

    fn check_target(&mut self, b: Block, i: Inst, target: Block, args: &[Value]) {
        let f = self.f;
        if target.index() >= f.num_blocks() || !f.layout.is_block_inserted(target) {
            self.cfg_ok = false;
            let msg = format!(
                "branch to {}, which is not in the layout",
                self.names.block(target)
            );
            self.at_inst(Some(b), i, msg);
            for &a in args {
                self.check_operand(b, i, a);
            }
            return;
        }
        if Some(target) == f.layout.entry_block() {
            self.at_inst(Some(b), i, "branch to the entry block".into());
        }
        let params = f.block_params(target);
        if params.len() != args.len() {
            let msg = format!(
                "{} takes {} arguments, got {}",
                self.names.block(target),
                params.len(),
                args.len()
            );
            self.at_inst(Some(b), i, msg);
        }
        for (k, (&a, &p)) in args.iter().zip(params).enumerate() {
            if self.valid_value(p) {
                let want = f.value_type(p);
                let what = format!("argument {k} to {}", self.names.block(target));
                self.expect_type(b, i, a, want, &what);
            }
        }
        for &a in args.iter().skip(params.len()) {
            self.check_operand(b, i, a);
        }
    }

    /// Whether the definition of `v` (a sound, non-constant operand) dominates a use by
    /// instruction `i` in reachable block `b`.
    fn dominates_use(&self, dt: &DominatorTree, v: Value, b: Block, i: Inst) -> bool {
        let f = self.f;
        match f.value_def(v) {
            ValueDef::Inst(d) => match f.layout.inst_block(d) {
                Some(db) if db == b => self.pos[d] < self.pos[i],
                Some(db) => dt.dominates(db, b),
                None => false,
            },
            ValueDef::Param(pb, _) => dt.dominates(pb, b),
            _ => true,
        }
    }

    fn check_dominance(&mut self, blocks: &[Block]) {
        let f = self.f;
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        for &b in blocks {
            if !dt.is_reachable(b) {
                continue;
            }
            for i in f.layout.block_insts(b) {
                let mut bad = Vec::new();
                f.kind(i).for_each_arg(|v| {
                    if self.valid_value(v)
                        && !f.value_def(v).is_constant()
                        && self.sound_def(v)
                        && !self.dominates_use(&dt, v, b, i)
                        && !bad.contains(&v)
                    {
                        bad.push(v);
                    }
                });
                for v in bad {
                    let msg = format!("use of {} not dominated by its definition", self.operand(v));
                    self.at_inst(Some(b), i, msg);
                }
            }
        }
    }

    /// Whether `v`'s definition is still in place (else `check_operand` reported it).
    fn sound_def(&self, v: Value) -> bool {
        let f = self.f;
        match f.value_def(v) {
            ValueDef::Inst(d) => {
                d.index() < f.num_insts()
                    && f.inst_result(d) == Some(v)
                    && f.layout
                        .inst_block(d)
                        .is_some_and(|db| f.layout.is_block_inserted(db))
            }
            ValueDef::Param(pb, k) => {
                pb.index() < f.num_blocks()
                    && f.layout.is_block_inserted(pb)
                    && f.block_params(pb).get(k as usize) == Some(&v)
            }
            _ => true,
        }
    }

    fn check_def_use(&mut self, blocks: &[Block]) {
        let f = self.f;
        // (value, user) pairs as the user lists record them.
        let mut recorded: Vec<(Value, Inst)> = Vec::new();
        let mut listed_insts: Vec<Inst> = Vec::new();
        for v in f.all_values() {
            let users = f.users(v);
            if f.value_def(v).is_constant() {
                if !users.is_empty() {
                    let msg = format!("constant {} has recorded users", self.operand(v));
                    self.at_func(msg);
                }
                continue;
            }
            for &u in users {
                if u.index() >= f.num_insts() {
                    let msg = format!(
                        "user list of {} holds nonexistent instruction {u}",
                        self.operand(v)
                    );
                    self.at_func(msg);
                    continue;
                }
                recorded.push((v, u));
                if !f.layout.is_inst_inserted(u) {
                    listed_insts.push(u);
                }
            }
        }
        // (value, user) pairs as the operands say, over laid-out instructions and any
        // others that user lists mention.
        let mut actual: Vec<(Value, Inst)> = Vec::new();
        let laid_out = blocks.iter().flat_map(|&b| f.layout.block_insts(b));
        listed_insts.sort_unstable();
        listed_insts.dedup();
        for i in laid_out.chain(listed_insts.iter().copied()) {
            f.kind(i).for_each_arg(|v| {
                if self.valid_value(v) && !f.value_def(v).is_constant() {
                    actual.push((v, i));
                }
            });
        }
        recorded.sort_unstable();
        actual.sort_unstable();
        let runs = |pairs: &[(Value, Inst)]| -> Vec<((Value, Inst), usize)> {
            let mut out: Vec<((Value, Inst), usize)> = Vec::new();
            for &p in pairs {
                match out.last_mut() {
                    Some((q, n)) if *q == p => *n += 1,
                    _ => out.push((p, 1)),
                }
            }
            out
        };
        let (rec, act) = (runs(&recorded), runs(&actual));
        let (mut x, mut y) = (0, 0);
        let mut mismatches = Vec::new();
        while x < rec.len() || y < act.len() {
            let (key, r, a) = match (rec.get(x), act.get(y)) {
                (Some(&(k1, n1)), Some(&(k2, n2))) if k1 == k2 => {
                    x += 1;
                    y += 1;
                    (k1, n1, n2)
                }
                (Some(&(k1, n1)), Some(&(k2, _))) if k1 < k2 => {
                    x += 1;
                    (k1, n1, 0)
                }
                (Some(&(k1, n1)), None) => {
                    x += 1;
                    (k1, n1, 0)
                }
                (_, Some(&(k2, n2))) => {
                    y += 1;
                    (k2, 0, n2)
                }
                (None, None) => break,
            };
            if r != a {
                mismatches.push((key, r, a));
            }
        }
        for ((v, i), r, a) in mismatches {
            let msg = format!(
                "def-use lists: uses {} {a} times but its user list records this instruction {r} times",
                self.operand(v)
            );
            let b = f.layout.inst_block(i);
            self.at_inst(b, i, msg);
        }
    }
}
