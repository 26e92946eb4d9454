//! Pure computations seen as an operator applied to operand values, the common ground
//! of the value-numbering passes ([`gvn`](super), [`cgvn`](crate::passes::value_numbering::cgvn) and
//! [`pre`](crate::passes::value_numbering::pre)): which instructions compute a result from their
//! operands alone, how their operators are named, normalised and folded, and how an
//! operator is turned back into an instruction.
//!
//! A computation is *pure* when its result depends only on its operand values:
//! arithmetic, comparisons, conversions, address arithmetic (`gep`), and calls to
//! functions that neither touch memory nor do I/O ([`Effects::is_pure`]). Integer
//! division and remainder are pure but may trap; two equal divisions still compute
//! the same value (the first one already ran), so they may be merged, but a division
//! must never be evaluated where the program did not evaluate it.

use crate::analysis::{Effects, Purity};
use crate::fold::{fold_binary, fold_cmp, fold_unary, Const};
use ir::{BinOp, CmpOp, FuncId, Function, Inst, InstKind, Type, UnOp, Value};

/// The operator of a pure computation, with whatever besides the operands decides its
/// result (a `gep`'s stride, a call's callee).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Opcode {
    Bin(BinOp),
    Cmp(CmpOp),
    Un(UnOp),
    Gep(u32),
    Call(FuncId),
}

impl Opcode {
    /// Whether the two operands may be swapped without changing the result.
    pub(crate) fn is_commutative(self) -> bool {
        matches!(self, Opcode::Bin(op) if op.is_commutative())
    }

    /// Whether evaluating the operator where the program did not could change what the
    /// program does: a call (it may not terminate), or an integer division or remainder
    /// unless the divisor is a constant other than zero.
    pub(crate) fn unsafe_to_speculate(self, divisor: Option<Const>) -> bool {
        match self {
            Opcode::Call(_) => true,
            Opcode::Bin(op) if op.can_trap() => !matches!(divisor, Some(Const::I(c)) if c != 0),
            _ => false,
        }
    }

    /// Folds the operator applied to constants, with the target's semantics; `None`
    /// when it cannot be folded (division by zero, calls, address arithmetic).
    pub(crate) fn fold(self, args: &[Const]) -> Option<Const> {
        match (self, args) {
            (Opcode::Bin(op), &[a, b]) => fold_binary(op, a, b),
            (Opcode::Cmp(op), &[a, b]) => fold_cmp(op, a, b),
            (Opcode::Un(op), &[a]) => fold_unary(op, a),
            _ => None,
        }
    }

    /// The instruction computing this operator over `args` and its result type; `None`
    /// for calls (never rebuilt) and for a wrong operand count.
    pub(crate) fn build(self, args: &[Value]) -> Option<(InstKind, Type)> {
        Some(match (self, args) {
            (Opcode::Bin(op), &[a, b]) => (InstKind::Binary { op, args: [a, b] }, op.ty()),
            (Opcode::Cmp(op), &[a, b]) => (InstKind::Cmp { op, args: [a, b] }, Type::I32),
            (Opcode::Un(op), &[arg]) => (InstKind::Unary { op, arg }, op.result_ty()),
            (Opcode::Gep(stride), &[base, index]) => (
                InstKind::Gep {
                    base,
                    index,
                    stride,
                },
                Type::Ptr,
            ),
            _ => return None,
        })
    }
}

/// The operator and operands of `inst` if it is a pure computation with a result.
pub(crate) fn pure_op(f: &Function, inst: Inst, purity: &Purity) -> Option<(Opcode, Vec<Value>)> {
    f.inst_result(inst)?;
    Some(match f.kind(inst) {
        InstKind::Binary { op, args } => (Opcode::Bin(*op), args.to_vec()),
        InstKind::Cmp { op, args } => (Opcode::Cmp(*op), args.to_vec()),
        InstKind::Unary { op, arg } => (Opcode::Un(*op), vec![*arg]),
        InstKind::Gep {
            base,
            index,
            stride,
        } => (Opcode::Gep(*stride), vec![*base, *index]),
        InstKind::Call { callee, args } if purity.effects(*callee).is_pure() => {
            (Opcode::Call(*callee), args.to_vec())
        }
        _ => return None,
    })
}

/// Whether a call to `callee` may write memory the caller can observe.
pub(crate) fn call_writes_memory(effects: Effects) -> bool {
    effects.writes_global || effects.writes_args
}

/// Puts a constant operand of a commutative operator or a comparison second (as
/// instcombine does), for instructions built from value numbers, whose operands are
/// in value-number order.
pub(crate) fn constant_second(f: &Function, op: Opcode, args: &mut [Value]) -> Opcode {
    if let [a, b] = args {
        let (ca, cb) = (f.value_def(*a).is_constant(), f.value_def(*b).is_constant());
        if ca && !cb {
            match op {
                Opcode::Bin(o) if o.is_commutative() => std::mem::swap(a, b),
                Opcode::Cmp(c) => {
                    std::mem::swap(a, b);
                    return Opcode::Cmp(c.swapped());
                }
                _ => {}
            }
        }
    }
    op
}

/// Puts the operands of a commutative operator or a comparison in a canonical order
/// (by `key`), so `a + b` and `b + a`, or `a < b` and `b > a`, look the same.
pub(crate) fn normalise<T: Copy + Ord>(op: Opcode, args: &mut [T]) -> Opcode {
    if let [a, b] = args {
        if *a > *b {
            match op {
                Opcode::Bin(o) if o.is_commutative() => {
                    std::mem::swap(a, b);
                }
                Opcode::Cmp(c) => {
                    std::mem::swap(a, b);
                    return Opcode::Cmp(c.swapped());
                }
                _ => {}
            }
        }
    }
    op
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_swaps_commutative_operands_and_comparisons() {
        let mut a = [3u32, 1];
        assert_eq!(
            normalise(Opcode::Bin(BinOp::Add), &mut a),
            Opcode::Bin(BinOp::Add)
        );
        assert_eq!(a, [1, 3]);
        let mut a = [3u32, 1];
        assert_eq!(
            normalise(Opcode::Bin(BinOp::Sub), &mut a),
            Opcode::Bin(BinOp::Sub)
        );
        assert_eq!(a, [3, 1]);
        let mut a = [3u32, 1];
        assert_eq!(
            normalise(Opcode::Cmp(CmpOp::Slt), &mut a),
            Opcode::Cmp(CmpOp::Sgt)
        );
        assert_eq!(a, [1, 3]);
    }

    #[test]
    fn speculation_safety() {
        let sdiv = Opcode::Bin(BinOp::SDiv);
        assert!(sdiv.unsafe_to_speculate(None));
        assert!(sdiv.unsafe_to_speculate(Some(Const::I(0))));
        assert!(!sdiv.unsafe_to_speculate(Some(Const::I(-1))));
        assert!(!Opcode::Bin(BinOp::Add).unsafe_to_speculate(None));
        assert!(!Opcode::Bin(BinOp::FDiv).unsafe_to_speculate(None));
    }
}
