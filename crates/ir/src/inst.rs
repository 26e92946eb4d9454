//! Instructions: their opcodes and operands, independent of where they sit in the
//! layout. Every operand is a [`Value`]; the visitors [`InstKind::for_each_arg`] and
//! [`InstKind::map_args`] are the one place that knows where operands live, so def-use
//! maintenance and replace-all-uses never miss one.

use crate::entities::{Block, FuncId, Value};
use crate::types::Type;
use smallvec::SmallVec;

/// Two-operand arithmetic. Integer ops work on `i32` and wrap; `F*` ops work on `f32`;
/// `*64` ops work on `i64` and wrap. The `i64` ops are distinct opcodes (not `Add` at
/// another type) so that no rewrite written for the `i32` ones ever applies to them.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Signed division truncating toward zero.
    SDiv,
    /// Signed remainder with the sign of the dividend.
    SRem,
    And,
    Or,
    Xor,
    /// Shift left; the shift amount is taken modulo 32.
    Shl,
    /// Logical shift right; the shift amount is taken modulo 32.
    LShr,
    /// Arithmetic shift right; the shift amount is taken modulo 32.
    AShr,
    FAdd,
    FSub,
    FMul,
    FDiv,
    Add64,
    Sub64,
    Mul64,
    /// Signed division truncating toward zero; `i64::MIN / -1` is `i64::MIN`.
    SDiv64,
    /// Signed remainder with the sign of the dividend; `i64::MIN % -1` is 0.
    SRem64,
}

impl BinOp {
    pub const ALL: [BinOp; 20] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::SDiv,
        BinOp::SRem,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Shl,
        BinOp::LShr,
        BinOp::AShr,
        BinOp::FAdd,
        BinOp::FSub,
        BinOp::FMul,
        BinOp::FDiv,
        BinOp::Add64,
        BinOp::Sub64,
        BinOp::Mul64,
        BinOp::SDiv64,
        BinOp::SRem64,
    ];

    /// The textual IR mnemonic.
    pub fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::SDiv => "sdiv",
            BinOp::SRem => "srem",
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
            BinOp::Add64 => "add64",
            BinOp::Sub64 => "sub64",
            BinOp::Mul64 => "mul64",
            BinOp::SDiv64 => "sdiv64",
            BinOp::SRem64 => "srem64",
        }
    }

    /// Whether the operands and result are `f32`.
    pub fn is_float(self) -> bool {
        matches!(self, BinOp::FAdd | BinOp::FSub | BinOp::FMul | BinOp::FDiv)
    }

    /// Whether the operands and result are `i64`.
    pub fn is_i64(self) -> bool {
        matches!(
            self,
            BinOp::Add64 | BinOp::Sub64 | BinOp::Mul64 | BinOp::SDiv64 | BinOp::SRem64
        )
    }

    /// The type of both operands and of the result.
    pub fn ty(self) -> Type {
        if self.is_float() {
            Type::F32
        } else if self.is_i64() {
            Type::I64
        } else {
            Type::I32
        }
    }

    /// Whether `a op b == b op a` for all operands (exactly, for floats too).
    pub fn is_commutative(self) -> bool {
        matches!(
            self,
            BinOp::Add
                | BinOp::Mul
                | BinOp::And
                | BinOp::Or
                | BinOp::Xor
                | BinOp::FAdd
                | BinOp::FMul
                | BinOp::Add64
                | BinOp::Mul64
        )
    }

    /// Whether the operation can trap (integer division or remainder by zero).
    pub fn can_trap(self) -> bool {
        matches!(
            self,
            BinOp::SDiv | BinOp::SRem | BinOp::SDiv64 | BinOp::SRem64
        )
    }
}

/// Comparisons. The result is an `i32` that is 0 or 1.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum CmpOp {
    Eq,
    Ne,
    Slt,
    Sle,
    Sgt,
    Sge,
    /// Ordered float comparisons (false when either operand is NaN), except `FNe`,
    /// which is unordered (true when either is NaN), as C's `!=`.
    FEq,
    FNe,
    FLt,
    FLe,
    FGt,
    FGe,
}

impl CmpOp {
    pub const ALL: [CmpOp; 12] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Slt,
        CmpOp::Sle,
        CmpOp::Sgt,
        CmpOp::Sge,
        CmpOp::FEq,
        CmpOp::FNe,
        CmpOp::FLt,
        CmpOp::FLe,
        CmpOp::FGt,
        CmpOp::FGe,
    ];

    /// The textual IR mnemonic.
    pub fn name(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Slt => "slt",
            CmpOp::Sle => "sle",
            CmpOp::Sgt => "sgt",
            CmpOp::Sge => "sge",
            CmpOp::FEq => "feq",
            CmpOp::FNe => "fne",
            CmpOp::FLt => "flt",
            CmpOp::FLe => "fle",
            CmpOp::FGt => "fgt",
            CmpOp::FGe => "fge",
        }
    }

    /// Whether the operands are `f32` (otherwise `i32`).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            CmpOp::FEq | CmpOp::FNe | CmpOp::FLt | CmpOp::FLe | CmpOp::FGt | CmpOp::FGe
        )
    }

    /// The type of both operands.
    pub fn operand_ty(self) -> Type {
        if self.is_float() {
            Type::F32
        } else {
            Type::I32
        }
    }

    /// The comparison with operands swapped: `a op b == b op.swapped() a`.
    pub fn swapped(self) -> CmpOp {
        match self {
            CmpOp::Slt => CmpOp::Sgt,
            CmpOp::Sle => CmpOp::Sge,
            CmpOp::Sgt => CmpOp::Slt,
            CmpOp::Sge => CmpOp::Sle,
            CmpOp::FLt => CmpOp::FGt,
            CmpOp::FLe => CmpOp::FGe,
            CmpOp::FGt => CmpOp::FLt,
            CmpOp::FGe => CmpOp::FLe,
            other => other,
        }
    }

    /// The logical negation for integer comparisons: `!(a op b) == a op.inverse() b`.
    /// Float comparisons have no exact inverse among these (NaN), so `None`.
    pub fn inverse(self) -> Option<CmpOp> {
        Some(match self {
            CmpOp::Eq => CmpOp::Ne,
            CmpOp::Ne => CmpOp::Eq,
            CmpOp::Slt => CmpOp::Sge,
            CmpOp::Sle => CmpOp::Sgt,
            CmpOp::Sgt => CmpOp::Sle,
            CmpOp::Sge => CmpOp::Slt,
            _ => return None,
        })
    }
}

/// One-operand operations.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum UnOp {
    /// f32 negation (flips the sign bit).
    FNeg,
    /// f32 absolute value (clears the sign bit).
    FAbs,
    /// i32 to f32, rounding to nearest.
    SIToFP,
    /// f32 to i32, truncating toward zero (saturating on overflow, as RISC-V's `fcvt.w.s`).
    FPToSI,
    /// i32 to i64, sign-extending.
    SExt,
    /// i64 to i32, keeping the low 32 bits.
    Trunc,
    /// f32 to i32 with the same bits (IEEE-754 bit pattern).
    FBits,
}

impl UnOp {
    pub const ALL: [UnOp; 7] = [
        UnOp::FNeg,
        UnOp::FAbs,
        UnOp::SIToFP,
        UnOp::FPToSI,
        UnOp::SExt,
        UnOp::Trunc,
        UnOp::FBits,
    ];

    /// The textual IR mnemonic.
    pub fn name(self) -> &'static str {
        match self {
            UnOp::FNeg => "fneg",
            UnOp::FAbs => "fabs",
            UnOp::SIToFP => "sitofp",
            UnOp::FPToSI => "fptosi",
            UnOp::SExt => "sext",
            UnOp::Trunc => "trunc",
            UnOp::FBits => "fbits",
        }
    }

    /// Operand type.
    pub fn operand_ty(self) -> Type {
        match self {
            UnOp::FNeg | UnOp::FAbs | UnOp::FPToSI | UnOp::FBits => Type::F32,
            UnOp::SIToFP | UnOp::SExt => Type::I32,
            UnOp::Trunc => Type::I64,
        }
    }

    /// Result type.
    pub fn result_ty(self) -> Type {
        match self {
            UnOp::FNeg | UnOp::FAbs | UnOp::SIToFP => Type::F32,
            UnOp::FPToSI | UnOp::Trunc | UnOp::FBits => Type::I32,
            UnOp::SExt => Type::I64,
        }
    }
}

/// The arguments of a branch target: most edges pass at most four values, which
/// are kept inline in the target (no second allocation); more spill to the heap.
pub type BlockArgs = SmallVec<[Value; 4]>;

/// A branch target with the arguments passed to the target's block parameters.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct BlockCall {
    pub block: Block,
    pub args: BlockArgs,
}

impl BlockCall {
    pub fn new(block: Block, args: impl Into<BlockArgs>) -> Self {
        BlockCall {
            block,
            args: args.into(),
        }
    }
}

/// What an instruction does, with its operands.
///
/// Every pass walks the instructions, so their size is the compiler's memory
/// traffic: the variants with variable-length operands (branch targets, call
/// arguments) keep them behind a pointer, and an instruction with its result fits
/// in 32 bytes (`InstData`), half a cache line. With the targets inline it took
/// 80, and a function of 2000 loops missed the 1 MiB second-level cache 13% more
/// often (cachegrind).
#[derive(Clone, PartialEq, Debug)]
pub enum InstKind {
    /// `%r = op %a, %b`
    Binary { op: BinOp, args: [Value; 2] },
    /// `%r = op %a, %b` yielding i32 0/1; integer predicates also compare two pointers
    /// (as 64-bit addresses).
    Cmp { op: CmpOp, args: [Value; 2] },
    /// `%r = op %a`
    Unary { op: UnOp, arg: Value },
    /// `%p = alloc [elem; len]`: a stack slot of `len` elements in the function's frame,
    /// live for the whole call. Uninitialised.
    Alloc { elem: Type, len: u32 },
    /// `%r = load ty, %ptr`
    Load { ty: Type, ptr: Value },
    /// `store %value, %ptr`
    Store { value: Value, ptr: Value },
    /// `%p = gep %base, %index, stride`: `base + sext(index) * stride` in bytes.
    Gep {
        base: Value,
        index: Value,
        stride: u32,
    },
    /// `%r = call @f(args...)`; the result exists iff the callee returns non-void.
    Call { callee: FuncId, args: Box<[Value]> },
    /// `jump bb(args...)`
    Jump { dest: Box<BlockCall> },
    /// `br %cond, bbT(args...), bbF(args...)`: to `then_dest` when `cond != 0`.
    Br {
        cond: Value,
        then_dest: Box<BlockCall>,
        else_dest: Box<BlockCall>,
    },
    /// `ret` or `ret %v`
    Ret { value: Option<Value> },
}

impl InstKind {
    /// Calls `f` on every value operand, in textual order.
    pub fn for_each_arg(&self, mut f: impl FnMut(Value)) {
        match self {
            InstKind::Binary { args, .. } | InstKind::Cmp { args, .. } => {
                f(args[0]);
                f(args[1]);
            }
            InstKind::Unary { arg, .. } => f(*arg),
            InstKind::Alloc { .. } => {}
            InstKind::Load { ptr, .. } => f(*ptr),
            InstKind::Store { value, ptr } => {
                f(*value);
                f(*ptr);
            }
            InstKind::Gep { base, index, .. } => {
                f(*base);
                f(*index);
            }
            InstKind::Call { args, .. } => args.iter().for_each(|&a| f(a)),
            InstKind::Jump { dest } => dest.args.iter().for_each(|&a| f(a)),
            InstKind::Br {
                cond,
                then_dest,
                else_dest,
            } => {
                f(*cond);
                then_dest.args.iter().for_each(|&a| f(a));
                else_dest.args.iter().for_each(|&a| f(a));
            }
            InstKind::Ret { value } => {
                if let Some(v) = value {
                    f(*v)
                }
            }
        }
    }

    /// Calls `f` on a mutable reference to every value operand, in textual order.
    pub fn map_args(&mut self, mut f: impl FnMut(&mut Value)) {
        match self {
            InstKind::Binary { args, .. } | InstKind::Cmp { args, .. } => {
                f(&mut args[0]);
                f(&mut args[1]);
            }
            InstKind::Unary { arg, .. } => f(arg),
            InstKind::Alloc { .. } => {}
            InstKind::Load { ptr, .. } => f(ptr),
            InstKind::Store { value, ptr } => {
                f(value);
                f(ptr);
            }
            InstKind::Gep { base, index, .. } => {
                f(base);
                f(index);
            }
            InstKind::Call { args, .. } => args.iter_mut().for_each(f),
            InstKind::Jump { dest } => dest.args.iter_mut().for_each(f),
            InstKind::Br {
                cond,
                then_dest,
                else_dest,
            } => {
                f(cond);
                then_dest.args.iter_mut().for_each(&mut f);
                else_dest.args.iter_mut().for_each(f);
            }
            InstKind::Ret { value } => {
                if let Some(v) = value {
                    f(v)
                }
            }
        }
    }

    /// All value operands, in textual order.
    pub fn args(&self) -> SmallVec<[Value; 4]> {
        let mut v = SmallVec::new();
        self.for_each_arg(|a| v.push(a));
        v
    }

    /// Whether this ends a block (`jump`, `br`, `ret`).
    #[inline]
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            InstKind::Jump { .. } | InstKind::Br { .. } | InstKind::Ret { .. }
        )
    }

    /// The branch targets of a terminator (empty for `ret` and non-terminators).
    #[inline]
    pub fn targets(&self) -> SmallVec<[&BlockCall; 2]> {
        match self {
            InstKind::Jump { dest } => smallvec::smallvec![&**dest],
            InstKind::Br {
                then_dest,
                else_dest,
                ..
            } => smallvec::smallvec![&**then_dest, &**else_dest],
            _ => SmallVec::new(),
        }
    }

    /// Mutable branch targets of a terminator.
    pub fn targets_mut(&mut self) -> SmallVec<[&mut BlockCall; 2]> {
        match self {
            InstKind::Jump { dest } => smallvec::smallvec![&mut **dest],
            InstKind::Br {
                then_dest,
                else_dest,
                ..
            } => smallvec::smallvec![&mut **then_dest, &mut **else_dest],
            _ => SmallVec::new(),
        }
    }

    /// Whether removing the instruction (when its result is unused) could change the
    /// program's behaviour: stores, calls (unless a purity analysis says otherwise) and
    /// terminators. Division is not a side effect here; see [`BinOp::can_trap`].
    pub fn has_side_effects(&self) -> bool {
        matches!(
            self,
            InstKind::Store { .. } | InstKind::Call { .. } | InstKind::Jump { .. }
        ) || matches!(self, InstKind::Br { .. } | InstKind::Ret { .. })
    }
}
