//! Lowering of one function body: statements, expressions, short-circuit conditions,
//! array addressing and initialisers, and the bookkeeping the SSA builder needs (every
//! edge recorded, every block sealed once its predecessors are all known).
//!
//! Sealing follows the order of the seed notes' `while` example: a loop header is
//! sealed after the body (whose back edge and `continue`s are its last predecessors),
//! the loop exit after the body (for `break`s); branch targets of `if` right after the
//! condition is lowered.

use crate::ssa_builder::{SsaBuilder, Var};
use front::tast::{self, Expr, ExprKind, Init, LocalId, Shape, Stmt};
use ir::{
    BinOp, Block, CmpOp, FuncId, Function, GlobalData, GlobalId, GlobalInit, InstKind, Module,
    Type, UnOp, Value,
};

/// State shared by the lowering of all functions of a module.
pub(crate) struct ModuleCtx<'p> {
    pub program: &'p tast::Program,
    pub globals: Vec<GlobalId>,
    /// IR function of each tast function (runtime ones declared on first call).
    pub func_ids: Vec<Option<FuncId>>,
    /// Number of string literals emitted so far (for unique global names).
    pub strings: usize,
    /// Number of constant initialiser images emitted so far (for unique global names).
    pub images: usize,
    pub memory_form: bool,
}

/// Where a local lives.
#[derive(Copy, Clone)]
enum Storage {
    /// A scalar tracked by the SSA builder.
    Ssa(Var),
    /// A scalar in an `alloc` (memory form).
    Slot(Value),
    /// An array: the address of its first element (an `alloc`, or a pointer parameter).
    Array(Value),
}

struct LoopTargets {
    header: Block,
    exit: Block,
}

struct FnLower<'a, 'p> {
    ctx: &'a mut ModuleCtx<'p>,
    module: &'a mut Module,
    tf: &'p tast::Function,
    f: Function,
    ssa: SsaBuilder,
    storage: Vec<Storage>,
    block: Block,
    /// Set after `return`/`break`/`continue`: the current block is unreachable, so
    /// branches out of it are not emitted (they would give live blocks phantom
    /// predecessors and needless parameters).
    dead: bool,
    loops: Vec<LoopTargets>,
    /// Source position (byte offset) the instructions appended now come from: the
    /// innermost statement or expression being lowered.
    loc: Option<u32>,
}

/// Lowers `tf` (whose body is `body`) to an IR function.
pub(crate) fn lower_function<'p>(
    ctx: &mut ModuleCtx<'p>,
    module: &mut Module,
    tf: &'p tast::Function,
    body: &[Stmt],
) -> Function {
    let mut f = Function::new(tf.name.clone(), crate::signature(tf));
    let entry = f.append_new_block();
    let params: Vec<Value> = f
        .sig
        .params
        .clone()
        .into_iter()
        .map(|t| f.append_block_param(entry, t))
        .collect();
    let mut lw = FnLower {
        ctx,
        module,
        tf,
        f,
        ssa: SsaBuilder::new(),
        storage: Vec::with_capacity(tf.locals.len()),
        block: entry,
        dead: false,
        loops: Vec::new(),
        loc: Some(tf.span.start),
    };
    lw.ssa.seal_block(&mut lw.f, entry);
    lw.allocate_locals(&params);
    lw.stmts(body);
    // Falling off the end: `return;`, or 0 for value-returning functions (only
    // reachable in programs with undefined behaviour, or `main`, where C says 0).
    if !lw.is_terminated() {
        let v = match lw.f.sig.ret {
            Type::Void => None,
            t => Some(lw.f.zero(t)),
        };
        lw.append(InstKind::Ret { value: v }, Type::Void);
    }
    debug_assert!(lw.ssa.all_sealed(), "unsealed block in {}", tf.name);
    let mut f = lw.f;
    remove_unreachable_blocks(&mut f);
    f
}

/// Deletes blocks not reachable from the entry (dead code after `return`, `break`,
/// `continue`, and merge blocks nobody jumps to).
fn remove_unreachable_blocks(f: &mut Function) {
    let cfg = ir::analysis::ControlFlowGraph::compute(f);
    let mut reachable = f.block_map::<bool>();
    for &b in cfg.rpo() {
        reachable[b] = true;
    }
    let dead: Vec<Block> = f.layout.blocks().filter(|&b| !reachable[b]).collect();
    // Drop instructions first (uses may cross between dead blocks), then the blocks.
    for &b in &dead {
        let insts: Vec<_> = f.layout.block_insts(b).collect();
        for &i in insts.iter().rev() {
            if let Some(r) = f.inst_result(i) {
                // A dead value may still be used by another dead block; detach those
                // uses by pointing them at a constant of the same type.
                if f.has_users(r) {
                    let ty = f.value_type(r);
                    let z = dead_placeholder(f, ty);
                    f.replace_all_uses(r, z);
                }
            }
            f.remove_inst(i);
        }
    }
    for &b in &dead {
        for &p in f.block_params(b).to_vec().iter() {
            if f.has_users(p) {
                let ty = f.value_type(p);
                let z = dead_placeholder(f, ty);
                f.replace_all_uses(p, z);
            }
        }
        f.layout.remove_block(b);
    }
}

fn dead_placeholder(f: &mut Function, ty: Type) -> Value {
    match ty {
        Type::F32 => f.fconst(0.0),
        _ => f.iconst(0),
    }
}

impl<'a, 'p> FnLower<'a, 'p> {
    // ---- blocks and edges -----------------------------------------------------

    fn append(&mut self, kind: InstKind, ty: Type) -> ir::Inst {
        let i = self.f.append_inst(self.block, kind, ty);
        self.f.set_src_loc(i, self.loc);
        i
    }

    /// Runs `lower` with the instructions it appends placed at `pos` (when known).
    fn at<T>(&mut self, pos: Option<u32>, lower: impl FnOnce(&mut Self) -> T) -> T {
        let outer = self.loc;
        if pos.is_some() {
            self.loc = pos;
        }
        let r = lower(self);
        self.loc = outer;
        r
    }

    fn value(&mut self, kind: InstKind, ty: Type) -> Value {
        let i = self.append(kind, ty);
        self.f.inst_result(i).expect("has result")
    }

    fn is_terminated(&self) -> bool {
        self.dead || self.f.terminator(self.block).is_some()
    }

    fn new_block(&mut self) -> Block {
        self.f.append_new_block()
    }

    /// Continues lowering in `b`. A sealed block without predecessors (other than the
    /// entry) is unreachable, and so is everything lowered into it.
    fn switch_to(&mut self, b: Block) {
        self.block = b;
        self.dead = self.ssa.is_sealed(b)
            && self.ssa.preds(b).is_empty()
            && self.f.layout.entry_block() != Some(b);
    }

    fn seal(&mut self, b: Block) {
        self.ssa.seal_block(&mut self.f, b);
    }

    /// Continues lowering in a fresh block no edge reaches (after `return`, `break`
    /// and `continue`); it is deleted at the end.
    fn start_dead_block(&mut self) {
        let b = self.new_block();
        self.seal(b);
        self.switch_to(b);
    }

    fn jump(&mut self, to: Block, args: Vec<Value>) {
        if self.dead {
            return;
        }
        let from = self.block;
        self.append(
            InstKind::Jump {
                dest: Box::new(ir::BlockCall::new(to, args)),
            },
            Type::Void,
        );
        self.ssa.add_edge(from, to);
    }

    fn br(&mut self, cond: Value, t: Block, targs: Vec<Value>, e: Block, eargs: Vec<Value>) {
        if self.dead {
            return;
        }
        let from = self.block;
        self.append(
            InstKind::Br {
                cond,
                then_dest: Box::new(ir::BlockCall::new(t, targs)),
                else_dest: Box::new(ir::BlockCall::new(e, eargs)),
            },
            Type::Void,
        );
        self.ssa.add_edge(from, t);
        self.ssa.add_edge(from, e);
    }

    // ---- locals -----------------------------------------------------------------

    /// Decides where each local lives and emits the entry-block `alloc`s.
    fn allocate_locals(&mut self, params: &[Value]) {
        let tf = self.tf;
        let mut param_index = vec![None; tf.locals.len()];
        for (i, &id) in tf.params.iter().enumerate() {
            param_index[id.index()] = Some(i);
        }
        for (i, local) in tf.locals.iter().enumerate() {
            let ty = crate::scalar_type(local.ty);
            let st = match &local.shape {
                Shape::Scalar if self.ctx.memory_form => {
                    let slot = self.value(InstKind::Alloc { elem: ty, len: 1 }, Type::Ptr);
                    Storage::Slot(slot)
                }
                Shape::Scalar => {
                    let var = Var(i as u32);
                    self.ssa.declare_var(var, ty);
                    Storage::Ssa(var)
                }
                Shape::Array(_) => {
                    let n = local.shape.num_elems().min(u32::MAX as u64) as u32;
                    Storage::Array(self.value(InstKind::Alloc { elem: ty, len: n }, Type::Ptr))
                }
                Shape::Pointer(_) => match param_index[i] {
                    Some(p) => Storage::Array(params[p]),
                    None => Storage::Array(self.f.iconst(0)),
                },
            };
            self.storage.push(st);
        }
        for (i, &id) in tf.params.iter().enumerate() {
            match self.storage[id.index()] {
                Storage::Ssa(var) => self.ssa.def_var(var, self.block, params[i]),
                Storage::Slot(slot) => {
                    self.append(
                        InstKind::Store {
                            value: params[i],
                            ptr: slot,
                        },
                        Type::Void,
                    );
                }
                Storage::Array(_) => {}
            }
        }
    }

    fn read_local(&mut self, id: LocalId) -> Value {
        match self.storage[id.index()] {
            Storage::Ssa(var) => self.ssa.use_var(&mut self.f, var, self.block),
            Storage::Slot(slot) => {
                let ty = crate::scalar_type(self.tf.local(id).ty);
                self.value(InstKind::Load { ty, ptr: slot }, ty)
            }
            Storage::Array(addr) => addr,
        }
    }

    fn write_local(&mut self, id: LocalId, v: Value) {
        match self.storage[id.index()] {
            Storage::Ssa(var) => self.ssa.def_var(var, self.block, v),
            Storage::Slot(slot) => {
                self.append(
                    InstKind::Store {
                        value: v,
                        ptr: slot,
                    },
                    Type::Void,
                );
            }
            Storage::Array(_) => unreachable!("sema rejects assignment to an array"),
        }
    }

    // ---- statements ---------------------------------------------------------------

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        let pos = match s {
            Stmt::Assign { lhs, .. } => Some(lhs.span.start),
            Stmt::Expr(e) | Stmt::Return(Some(e)) => Some(e.span.start),
            Stmt::If { cond, .. } | Stmt::While { cond, .. } => Some(cond.span.start),
            Stmt::Decl { local, .. } => Some(self.tf.local(*local).span.start),
            Stmt::Block(_) | Stmt::Break | Stmt::Continue | Stmt::Return(None) => None,
        };
        self.at(pos, |lw| lw.stmt_here(s));
    }

    fn stmt_here(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign { lhs, rhs } => {
                let v = self.expr(rhs);
                match (&lhs.base, lhs.indices.is_empty()) {
                    (tast::Var::Local(id), true) => self.write_local(*id, v),
                    (tast::Var::Global(g), true) => {
                        let ptr = self.f.global_addr(self.ctx.globals[g.index()]);
                        self.append(InstKind::Store { value: v, ptr }, Type::Void);
                    }
                    (base, false) => {
                        let ptr = self.element_addr(*base, &lhs.indices);
                        self.append(InstKind::Store { value: v, ptr }, Type::Void);
                    }
                }
            }
            Stmt::Expr(e) => {
                self.expr_for_effect(e);
            }
            Stmt::Block(b) => self.stmts(b),
            Stmt::If { cond, then, els } => {
                let then_b = self.new_block();
                let end = self.new_block();
                let else_b = if els.is_some() { self.new_block() } else { end };
                self.cond(cond, then_b, else_b);
                self.seal(then_b);
                if else_b != end {
                    self.seal(else_b);
                }
                self.switch_to(then_b);
                self.stmt(then);
                if !self.is_terminated() {
                    self.jump(end, vec![]);
                }
                if let Some(els) = els {
                    self.switch_to(else_b);
                    self.stmt(els);
                    if !self.is_terminated() {
                        self.jump(end, vec![]);
                    }
                }
                self.seal(end);
                self.switch_to(end);
            }
            Stmt::While { cond, body } => {
                let header = self.new_block();
                let body_b = self.new_block();
                let exit = self.new_block();
                let entry = self.block;
                let since = self.ssa.next_assignment();
                self.jump(header, vec![]);
                self.switch_to(header);
                self.cond(cond, body_b, exit);
                self.seal(body_b);
                self.switch_to(body_b);
                self.loops.push(LoopTargets { header, exit });
                self.stmt(body);
                self.loops.pop();
                if !self.is_terminated() {
                    self.jump(header, vec![]);
                }
                self.seal(header);
                self.ssa.finish_loop(header, entry, since);
                self.seal(exit);
                self.switch_to(exit);
            }
            Stmt::Break => {
                let exit = self.loops.last().expect("sema checks break").exit;
                self.jump(exit, vec![]);
                self.start_dead_block();
            }
            Stmt::Continue => {
                let header = self.loops.last().expect("sema checks continue").header;
                self.jump(header, vec![]);
                self.start_dead_block();
            }
            Stmt::Return(e) => {
                let value = e.as_ref().map(|e| self.expr(e));
                self.append(InstKind::Ret { value }, Type::Void);
                self.start_dead_block();
            }
            Stmt::Decl { local, init } => self.decl(*local, init),
        }
    }

    fn decl(&mut self, id: LocalId, init: &Init) {
        match init {
            Init::None => {}
            Init::Scalar(e) => {
                let v = self.expr(e);
                self.write_local(id, v);
            }
            Init::Array(elems) => {
                let Storage::Array(base) = self.storage[id.index()] else {
                    unreachable!("array initialiser on a scalar")
                };
                let local = self.tf.local(id);
                let n = local.shape.num_elems() as u32;
                let ty = crate::scalar_type(local.ty);
                // Zero what the list does not cover, then store the listed values in
                // source order; a listed zero constant can be skipped only when the
                // fill zeroed every element (the loop form), not just the unlisted.
                if let Some(words) = constant_image(elems) {
                    self.copy_constant_image(base, ty, n, words);
                    return;
                }
                let covered = elems.len() as u32 == n;
                let all_zeroed = !covered && self.zero_fill(base, ty, n, elems);
                for (idx, e) in elems {
                    let v = self.expr(e);
                    if all_zeroed && self.is_zero_const(v) {
                        continue;
                    }
                    let idx = self.f.iconst(*idx as i32);
                    let ptr = self.value(
                        InstKind::Gep {
                            base,
                            index: idx,
                            stride: 4,
                        },
                        Type::Ptr,
                    );
                    self.append(InstKind::Store { value: v, ptr }, Type::Void);
                }
            }
        }
    }

    /// Initialises the array at `base` (`n` elements of `ty`) from a constant image:
    /// the image becomes a module global, copied in by a loop, and the elements past
    /// its end are zeroed. The function then holds a fixed number of instructions
    /// however long the list is, as gcc and clang copy large initialisers from
    /// read-only data.
    fn copy_constant_image(&mut self, base: Value, ty: Type, n: u32, words: Vec<u32>) {
        let len = words.len() as u32;
        let name = format!("__sysy_init_{}", self.ctx.images);
        self.ctx.images += 1;
        let image = self.module.add_global(GlobalData {
            name,
            elem: ty,
            len,
            init: GlobalInit::Words(words),
        });
        let image = self.f.global_addr(image);
        self.counted_loop(0, len, |lw, i| {
            let from = lw.element_ptr(image, i);
            let v = lw.value(InstKind::Load { ty, ptr: from }, ty);
            let to = lw.element_ptr(base, i);
            lw.append(InstKind::Store { value: v, ptr: to }, Type::Void);
        });
        if len < n {
            let zero = self.f.zero(ty);
            self.counted_loop(len, n, |lw, i| {
                let to = lw.element_ptr(base, i);
                lw.append(
                    InstKind::Store {
                        value: zero,
                        ptr: to,
                    },
                    Type::Void,
                );
            });
        }
    }

    /// The address of 4-byte element `i` of the array at `base`.
    fn element_ptr(&mut self, base: Value, i: Value) -> Value {
        self.value(
            InstKind::Gep {
                base,
                index: i,
                stride: 4,
            },
            Type::Ptr,
        )
    }

    /// Emits `i = start; do { body(i); i += 1 } while (i < end)` (`start < end`) and
    /// continues after it.
    fn counted_loop(&mut self, start: u32, end: u32, mut body: impl FnMut(&mut Self, Value)) {
        let header = self.new_block();
        let exit = self.new_block();
        let i0 = self.f.iconst(start as i32);
        self.jump(header, vec![i0]);
        let i = self.f.append_block_param(header, Type::I32);
        self.switch_to(header);
        body(self, i);
        let one = self.f.iconst(1);
        let next = self.value(
            InstKind::Binary {
                op: BinOp::Add,
                args: [i, one],
            },
            Type::I32,
        );
        let limit = self.f.iconst(end as i32);
        let more = self.value(
            InstKind::Cmp {
                op: CmpOp::Slt,
                args: [next, limit],
            },
            Type::I32,
        );
        self.br(more, header, vec![next], exit, vec![]);
        self.seal(header);
        self.seal(exit);
        self.switch_to(exit);
    }

    fn is_zero_const(&self, v: Value) -> bool {
        self.f.as_iconst(v) == Some(0) || self.f.as_fconst(v).is_some_and(|x| x.to_bits() == 0)
    }

    /// Stores zero into elements `0..n` of the array at `base` (`elems` are the ones
    /// about to be stored anyway). Small arrays get straight-line stores to the
    /// unlisted elements only; large ones a loop over all of them. Returns whether
    /// every element, listed ones included, was zeroed.
    fn zero_fill(&mut self, base: Value, ty: Type, n: u32, elems: &[(u32, Expr)]) -> bool {
        let zero = self.f.zero(ty);
        if n <= 16 {
            for i in 0..n {
                if elems.iter().any(|(j, _)| *j == i) {
                    continue;
                }
                let idx = self.f.iconst(i as i32);
                let ptr = self.value(
                    InstKind::Gep {
                        base,
                        index: idx,
                        stride: 4,
                    },
                    Type::Ptr,
                );
                self.append(InstKind::Store { value: zero, ptr }, Type::Void);
            }
            return false;
        }
        self.counted_loop(0, n, |lw, i| {
            let ptr = lw.element_ptr(base, i);
            lw.append(InstKind::Store { value: zero, ptr }, Type::Void);
        });
        true
    }

    // ---- expressions --------------------------------------------------------------

    /// Lowers an expression statement: the value (if any) is dropped.
    fn expr_for_effect(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Call { .. } => {
                self.call(e);
            }
            _ => {
                // Pure expressions may still contain calls deep inside; lower them all
                // and let DCE remove what is unused.
                if e.ty != tast::Type::Void {
                    self.expr(e);
                }
            }
        }
    }

    /// Lowers a value-producing expression.
    fn expr(&mut self, e: &Expr) -> Value {
        self.at(Some(e.span.start), |lw| lw.expr_here(e))
    }

    fn expr_here(&mut self, e: &Expr) -> Value {
        match &e.kind {
            ExprKind::IntLit(c) => self.f.iconst(*c),
            ExprKind::FloatLit(c) => self.f.fconst(*c),
            ExprKind::StrLit(bytes) => self.string(bytes),
            ExprKind::Var(tast::Var::Local(id)) => self.read_local(*id),
            ExprKind::Var(tast::Var::Global(g)) => {
                let addr = self.f.global_addr(self.ctx.globals[g.index()]);
                match e.ty {
                    tast::Type::Int | tast::Type::Float => {
                        let ty = crate::ir_type(&e.ty);
                        self.value(InstKind::Load { ty, ptr: addr }, ty)
                    }
                    _ => addr,
                }
            }
            ExprKind::Index { base, indices } => {
                let ptr = self.element_addr(*base, indices);
                match e.ty {
                    tast::Type::Int | tast::Type::Float => {
                        let ty = crate::ir_type(&e.ty);
                        self.value(InstKind::Load { ty, ptr }, ty)
                    }
                    _ => ptr,
                }
            }
            ExprKind::Unary(op, a) => {
                let v = self.expr(a);
                let float = a.ty == tast::Type::Float;
                match (op, float) {
                    (tast::UnOp::Neg, false) => {
                        let z = self.f.iconst(0);
                        self.binary(BinOp::Sub, z, v)
                    }
                    (tast::UnOp::Neg, true) => self.value(
                        InstKind::Unary {
                            op: UnOp::FNeg,
                            arg: v,
                        },
                        Type::F32,
                    ),
                    (tast::UnOp::Not, false) => {
                        let z = self.f.iconst(0);
                        self.cmp(CmpOp::Eq, v, z)
                    }
                    (tast::UnOp::Not, true) => {
                        let z = self.f.fconst(0.0);
                        self.cmp(CmpOp::FEq, v, z)
                    }
                }
            }
            ExprKind::Binary(op, a, b) => {
                let float = a.ty == tast::Type::Float;
                let x = self.expr(a);
                let y = self.expr(b);
                use tast::BinOp as B;
                let arith = |i: BinOp, fl: BinOp| if float { fl } else { i };
                let cmp = |i: CmpOp, fl: CmpOp| if float { fl } else { i };
                match op {
                    B::Add => self.binary(arith(BinOp::Add, BinOp::FAdd), x, y),
                    B::Sub => self.binary(arith(BinOp::Sub, BinOp::FSub), x, y),
                    B::Mul => self.binary(arith(BinOp::Mul, BinOp::FMul), x, y),
                    B::Div => self.binary(arith(BinOp::SDiv, BinOp::FDiv), x, y),
                    B::Rem => self.binary(BinOp::SRem, x, y),
                    B::Lt => self.cmp(cmp(CmpOp::Slt, CmpOp::FLt), x, y),
                    B::Le => self.cmp(cmp(CmpOp::Sle, CmpOp::FLe), x, y),
                    B::Gt => self.cmp(cmp(CmpOp::Sgt, CmpOp::FGt), x, y),
                    B::Ge => self.cmp(cmp(CmpOp::Sge, CmpOp::FGe), x, y),
                    B::Eq => self.cmp(cmp(CmpOp::Eq, CmpOp::FEq), x, y),
                    B::Ne => self.cmp(cmp(CmpOp::Ne, CmpOp::FNe), x, y),
                }
            }
            ExprKind::And(..) | ExprKind::Or(..) => {
                // Materialise the 0/1 result through a block parameter.
                let t = self.new_block();
                let fb = self.new_block();
                let end = self.new_block();
                self.cond(e, t, fb);
                self.seal(t);
                self.seal(fb);
                self.switch_to(t);
                let one = self.f.iconst(1);
                self.jump(end, vec![one]);
                self.switch_to(fb);
                let zero = self.f.iconst(0);
                self.jump(end, vec![zero]);
                let r = self.f.append_block_param(end, Type::I32);
                self.seal(end);
                self.switch_to(end);
                r
            }
            ExprKind::IntToFloat(a) => {
                let v = self.expr(a);
                self.value(
                    InstKind::Unary {
                        op: UnOp::SIToFP,
                        arg: v,
                    },
                    Type::F32,
                )
            }
            ExprKind::FloatToInt(a) => {
                let v = self.expr(a);
                self.value(
                    InstKind::Unary {
                        op: UnOp::FPToSI,
                        arg: v,
                    },
                    Type::I32,
                )
            }
            ExprKind::Call { .. } => match self.call(e) {
                Some(v) => v,
                // A void call used as a value is rejected by sema.
                None => self.f.iconst(0),
            },
        }
    }

    fn binary(&mut self, op: BinOp, a: Value, b: Value) -> Value {
        self.value(InstKind::Binary { op, args: [a, b] }, op.ty())
    }

    fn cmp(&mut self, op: CmpOp, a: Value, b: Value) -> Value {
        self.value(InstKind::Cmp { op, args: [a, b] }, Type::I32)
    }

    fn call(&mut self, e: &Expr) -> Option<Value> {
        let ExprKind::Call { func, args } = &e.kind else {
            unreachable!()
        };
        let args: Vec<Value> = args.iter().map(|a| self.expr(a)).collect();
        let callee = self.callee(*func);
        let ret = self.module.funcs[callee].sig.ret;
        let inst = self.append(
            InstKind::Call {
                callee,
                args: args.into(),
            },
            ret,
        );
        self.f.inst_result(inst)
    }

    /// The IR function for a tast function; runtime functions are declared on first use
    /// (or resolve to a user function of the same name, which then replaces them).
    fn callee(&mut self, id: tast::FuncId) -> FuncId {
        if let Some(f) = self.ctx.func_ids[id.index()] {
            return f;
        }
        let tf = self.ctx.program.func(id);
        let f = match self.module.func_by_name(&tf.name) {
            Some(existing) => existing,
            None => self.module.declare_function(&tf.name, crate::signature(tf)),
        };
        self.ctx.func_ids[id.index()] = Some(f);
        f
    }

    /// A NUL-terminated string constant as a global; returns its address.
    fn string(&mut self, bytes: &[u8]) -> Value {
        let mut data = bytes.to_vec();
        data.push(0);
        let name = format!("__sysy_str_{}", self.ctx.strings);
        self.ctx.strings += 1;
        let g = self.module.add_global(GlobalData {
            name,
            elem: Type::I8,
            len: data.len() as u32,
            init: GlobalInit::Bytes(data),
        });
        self.f.global_addr(g)
    }

    /// The address `base[i0][i1]...` (all or a prefix of the subscripts).
    fn element_addr(&mut self, base: tast::Var, indices: &[Expr]) -> Value {
        let (mut ptr, full_dims): (Value, Vec<u32>) = match base {
            tast::Var::Local(id) => {
                let addr = self.read_local(id);
                let dims = match &self.tf.local(id).shape {
                    Shape::Array(d) => d.clone(),
                    Shape::Pointer(inner) => {
                        std::iter::once(0).chain(inner.iter().copied()).collect()
                    }
                    Shape::Scalar => Vec::new(),
                };
                (addr, dims)
            }
            tast::Var::Global(g) => {
                let addr = self.f.global_addr(self.ctx.globals[g.index()]);
                (addr, self.ctx.program.global(g).dims.clone())
            }
        };
        for (k, idx) in indices.iter().enumerate() {
            let inner: u64 = full_dims
                .get(k + 1..)
                .unwrap_or(&[])
                .iter()
                .map(|&d| d as u64)
                .product();
            let stride = (inner * 4).min(u32::MAX as u64) as u32;
            let i = self.expr(idx);
            ptr = self.value(
                InstKind::Gep {
                    base: ptr,
                    index: i,
                    stride,
                },
                Type::Ptr,
            );
        }
        ptr
    }

    // ---- conditions ---------------------------------------------------------------

    /// Lowers `e` as a branch condition: jumps to `t` when it is non-zero, else `f`.
    /// `&&`, `||` and `!` become control flow (short-circuit); the blocks created on the
    /// way are sealed here, `t` and `f` are left to the caller.
    fn cond(&mut self, e: &Expr, t: Block, fb: Block) {
        self.at(Some(e.span.start), |lw| lw.cond_here(e, t, fb))
    }

    fn cond_here(&mut self, e: &Expr, t: Block, fb: Block) {
        match &e.kind {
            ExprKind::And(a, b) => {
                let mid = self.new_block();
                self.cond(a, mid, fb);
                self.seal(mid);
                self.switch_to(mid);
                self.cond(b, t, fb);
            }
            ExprKind::Or(a, b) => {
                let mid = self.new_block();
                self.cond(a, t, mid);
                self.seal(mid);
                self.switch_to(mid);
                self.cond(b, t, fb);
            }
            ExprKind::Unary(tast::UnOp::Not, a) => self.cond(a, fb, t),
            ExprKind::IntLit(c) => {
                let dest = if *c != 0 { t } else { fb };
                self.jump(dest, vec![]);
            }
            _ => {
                let v = self.expr(e);
                let c = if e.ty == tast::Type::Float {
                    let z = self.f.fconst(0.0);
                    self.cmp(CmpOp::FNe, v, z)
                } else {
                    v
                };
                self.br(c, t, vec![], fb, vec![]);
            }
        }
    }
}

/// Listed elements from which an all-constant initialiser is copied from a global
/// image instead of being stored one by one.
const IMAGE_MIN_ELEMS: usize = 64;

/// The bit patterns of an initialiser list up to its last non-zero element, when the
/// list is long (at least [`IMAGE_MIN_ELEMS`] elements), every element is a constant
/// and some element is non-zero.
fn constant_image(elems: &[(u32, Expr)]) -> Option<Vec<u32>> {
    if elems.len() < IMAGE_MIN_ELEMS {
        return None;
    }
    let mut listed = Vec::with_capacity(elems.len());
    for (i, e) in elems {
        let c = front::sema::fold::as_const(e)?;
        if !c.is_zero_bits() {
            listed.push((*i, c.bits()));
        }
    }
    let &(last, _) = listed.last()?;
    let mut words = vec![0u32; last as usize + 1];
    for (i, bits) in listed {
        words[i as usize] = bits;
    }
    Some(words)
}
