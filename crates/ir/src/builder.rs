//! A cursor-style builder that appends instructions at the end of a current block,
//! computing result types. Used by lowering and by passes that create code.

use crate::entities::{Block, FuncId, Inst, Value};
use crate::function::Function;
use crate::inst::{BinOp, BlockCall, CmpOp, InstKind, UnOp};
use crate::types::Type;

/// Appends instructions to the end of the current block of a function.
pub struct FuncBuilder<'f> {
    pub func: &'f mut Function,
    block: Option<Block>,
}

impl<'f> FuncBuilder<'f> {
    pub fn new(func: &'f mut Function) -> Self {
        FuncBuilder { func, block: None }
    }

    /// Makes `block` the insertion block.
    pub fn switch_to_block(&mut self, block: Block) {
        self.block = Some(block);
    }

    /// The insertion block.
    pub fn current_block(&self) -> Option<Block> {
        self.block
    }

    /// Whether the current block already ends in a terminator.
    pub fn is_terminated(&self) -> bool {
        match self.block {
            Some(b) => self.func.terminator(b).is_some(),
            None => true,
        }
    }

    fn append(&mut self, kind: InstKind, ty: Type) -> Inst {
        let b = self.block.expect("no current block");
        self.func.append_inst(b, kind, ty)
    }

    fn append_value(&mut self, kind: InstKind, ty: Type) -> Value {
        let i = self.append(kind, ty);
        self.func.inst_result(i).expect("instruction has a result")
    }

    pub fn binary(&mut self, op: BinOp, a: Value, b: Value) -> Value {
        self.append_value(InstKind::Binary { op, args: [a, b] }, op.ty())
    }

    pub fn cmp(&mut self, op: CmpOp, a: Value, b: Value) -> Value {
        self.append_value(InstKind::Cmp { op, args: [a, b] }, Type::I32)
    }

    pub fn unary(&mut self, op: UnOp, arg: Value) -> Value {
        self.append_value(InstKind::Unary { op, arg }, op.result_ty())
    }

    pub fn alloc(&mut self, elem: Type, len: u32) -> Value {
        self.append_value(InstKind::Alloc { elem, len }, Type::Ptr)
    }

    pub fn load(&mut self, ty: Type, ptr: Value) -> Value {
        self.append_value(InstKind::Load { ty, ptr }, ty)
    }

    pub fn store(&mut self, value: Value, ptr: Value) -> Inst {
        self.append(InstKind::Store { value, ptr }, Type::Void)
    }

    pub fn gep(&mut self, base: Value, index: Value, stride: u32) -> Value {
        self.append_value(
            InstKind::Gep {
                base,
                index,
                stride,
            },
            Type::Ptr,
        )
    }

    /// A call; `ret` is the callee's return type. Returns the result, if non-void.
    pub fn call(&mut self, callee: FuncId, args: Vec<Value>, ret: Type) -> Option<Value> {
        let i = self.append(
            InstKind::Call {
                callee,
                args: args.into(),
            },
            ret,
        );
        self.func.inst_result(i)
    }

    pub fn jump(&mut self, dest: Block, args: Vec<Value>) -> Inst {
        self.append(
            InstKind::Jump {
                dest: Box::new(BlockCall::new(dest, args)),
            },
            Type::Void,
        )
    }

    pub fn br(
        &mut self,
        cond: Value,
        then_block: Block,
        then_args: Vec<Value>,
        else_block: Block,
        else_args: Vec<Value>,
    ) -> Inst {
        self.append(
            InstKind::Br {
                cond,
                then_dest: Box::new(BlockCall::new(then_block, then_args)),
                else_dest: Box::new(BlockCall::new(else_block, else_args)),
            },
            Type::Void,
        )
    }

    pub fn ret(&mut self, value: Option<Value>) -> Inst {
        self.append(InstKind::Ret { value }, Type::Void)
    }

    pub fn iconst(&mut self, c: i32) -> Value {
        self.func.iconst(c)
    }

    pub fn fconst(&mut self, c: f32) -> Value {
        self.func.fconst(c)
    }
}
