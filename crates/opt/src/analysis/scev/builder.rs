//! Building scalar-evolution expressions from IR values, lazily and memoised, as
//! LLVM's `ScalarEvolution::createSCEV`: arithmetic maps to sums and products,
//! `sext`/`trunc` to extensions, `gep base, i, s` to `base + sext(i) * s`, and a loop
//! header's parameter to a recurrence when every latch passes it back plus a step
//! that is invariant in the loop or itself a recurrence of the loop (then the
//! parameter is of higher order: `s += i` gives `{s0,+,i0,+,1}`), found as LLVM's
//! `createAddRecFromPHI` does: the parameter first stands for itself (an unknown),
//! the latch argument is analysed, and the parameter must appear in it as one term.
//! A parameter of another block to which every predecessor passes one value is
//! that value. Everything else is an unknown.

use super::expr::{Expr, ExprId};
use super::{Memo, ScalarEvolution};
use crate::analysis::LoopId;
use ir::{BinOp, Function, InstKind, Type, UnOp, Value, ValueDef};

/// How deep operands are followed before a value is left unknown.
const MAX_DEPTH: usize = 24;

/// The largest expression (as a tree, [`super::expr::Exprs::size`]) a value is
/// described by; a larger one is left unknown. Passes walk expressions without
/// memoising shared operands, so a larger one would cost them its size at every
/// walk (LLVM's threshold is 2^20; the largest of the corpus is far below this).
const MAX_EXPR_SIZE: u32 = 4096;

/// The type an analysed value has, if it is one the analysis describes.
fn scev_type(f: &Function, v: Value) -> Option<Type> {
    match f.value_type(v) {
        t @ (Type::I32 | Type::I64 | Type::Ptr) => Some(t),
        _ => None,
    }
}

impl ScalarEvolution<'_> {
    /// The expression of `v`.
    pub fn get(&mut self, v: Value) -> ExprId {
        if let Some(&m) = self.memo.get(&v) {
            self.pending |= m.pending;
            return m.e;
        }
        let outer = std::mem::take(&mut self.pending);
        self.depth += 1;
        let e = if self.depth > MAX_DEPTH {
            // Cut short where it was asked: inside a header parameter's analysis,
            // forgotten with what that analysis built.
            if self.open > 0 {
                self.pending |= 1 << (self.open - 1);
            }
            let ty = self.f.value_type(v);
            self.exprs.unknown(ty, v)
        } else {
            let e = self.create(v);
            // An expression too large to walk (its operands shared, as a tree it
            // grows exponentially along a chain of products) is not seen
            // through: LLVM's `scalar-evolution-huge-expr-threshold`.
            if self.exprs.size(e) > MAX_EXPR_SIZE {
                let ty = self.f.value_type(v);
                self.exprs.unknown(ty, v)
            } else {
                e
            }
        };
        self.depth -= 1;
        let pending = self.pending;
        self.memo.insert(v, Memo { e, pending });
        if self.open > 0 {
            self.log.push(v);
        }
        self.pending = outer | pending;
        e
    }

    /// `a - b` when it is the same constant on every execution where both are
    /// defined in one iteration (LLVM's `computeConstantDifference`): two integers
    /// of one type, in their type's arithmetic (an `i32` difference modulo 2^32,
    /// sign-extended), or two pointers, in bytes. `i + 3` and `i - 1` differ by 4
    /// whatever `i` is, a recurrence `{s,+,d}` or a value the analysis does not see
    /// through; `{0,+,2}` and `{1,+,2}` of one loop differ by -1.
    pub fn constant_difference(&mut self, a: Value, b: Value) -> Option<i64> {
        let ty = self.f.value_type(a);
        if ty != self.f.value_type(b) || scev_type(self.f, a).is_none() {
            return None;
        }
        let (x, y) = (self.get(a), self.get(b));
        if x == y {
            return Some(0);
        }
        let (loops, f) = (self.loops, self.f);
        let d = self.exprs.sub(loops, f, x, y);
        self.exprs.as_const(d)
    }

    /// The step `d` when `v` evolves as the affine recurrence `{s,+,d}<lp>` with
    /// `d` a non-zero constant (in its type's arithmetic, or bytes for a pointer):
    /// LLVM's `getConstantStride`. A pointer the latch advances by `gep p, 2, 4`, or
    /// by any chain of constant steps, moves 8 bytes per iteration; a recurrence of
    /// another loop, one of higher order and an invariant have none.
    pub fn constant_step(&mut self, v: Value, lp: LoopId) -> Option<i64> {
        scev_type(self.f, v)?;
        let e = self.get(v);
        match self.exprs.as_addrec(e)? {
            (l, &[_, step]) if l == lp => self.exprs.as_const(step).filter(|&d| d != 0),
            _ => None,
        }
    }

    /// Whether the `i32` operation defining `v` never wraps: its value range (which
    /// is the full range whenever it could) is narrower.
    fn no_wrap(&mut self, v: Value) -> bool {
        self.f.value_type(v) == Type::I32
            && self
                .range(v)
                .is_some_and(|r| r != crate::analysis::ranges::Range::FULL)
    }

    fn create(&mut self, v: Value) -> ExprId {
        let f = self.f;
        let Some(ty) = scev_type(f, v) else {
            return self.exprs.unknown(f.value_type(v), v);
        };
        let unknown = |s: &mut Self| s.exprs.unknown(ty, v);
        let i = match f.value_def(v) {
            ValueDef::IConst(c) => return self.exprs.constant(Type::I32, c.into()),
            ValueDef::Param(b, k) => {
                return if self.loops.is_header(b) {
                    self.header_param(v, b, k as usize, ty)
                        .unwrap_or_else(|| unknown(self))
                } else {
                    match self.forwarded(v, b, k as usize) {
                        Some(w) => self.get(w),
                        None => unknown(self),
                    }
                };
            }
            ValueDef::Inst(i) => i,
            _ => return unknown(self),
        };
        let (loops, f) = (self.loops, self.f);
        match *f.kind(i) {
            InstKind::Binary { op, args: [a, b] } => {
                let exact = self.no_wrap(v);
                match op {
                    BinOp::Add | BinOp::Add64 => {
                        let (x, y) = (self.get(a), self.get(b));
                        self.exprs.add(loops, f, &[x, y], exact)
                    }
                    BinOp::Sub | BinOp::Sub64 => {
                        let (x, y) = (self.get(a), self.get(b));
                        let m1 = self.exprs.constant(ty, -1);
                        let ny = self.exprs.mul(loops, f, &[m1, y], exact);
                        self.exprs.add(loops, f, &[x, ny], exact)
                    }
                    BinOp::Mul | BinOp::Mul64 => {
                        let (x, y) = (self.get(a), self.get(b));
                        self.exprs.mul(loops, f, &[x, y], exact)
                    }
                    BinOp::Shl => match f.as_iconst(b) {
                        Some(c) if (0..31).contains(&c) => {
                            let x = self.get(a);
                            let p = self.exprs.constant(ty, 1i64 << c);
                            self.exprs.mul(loops, f, &[x, p], exact)
                        }
                        _ => unknown(self),
                    },
                    _ => unknown(self),
                }
            }
            InstKind::Unary {
                op: UnOp::SExt,
                arg,
            } => {
                let x = self.get(arg);
                self.exprs.sext(loops, f, x)
            }
            InstKind::Unary {
                op: UnOp::Trunc,
                arg,
            } => {
                let x = self.get(arg);
                self.exprs.trunc(loops, f, x)
            }
            InstKind::Gep {
                base,
                index,
                stride,
            } => {
                let (p, x) = (self.get(base), self.get(index));
                let x = if self.exprs.ty(x) == Type::I32 {
                    self.exprs.sext(loops, f, x)
                } else {
                    x
                };
                let s = self.exprs.constant(Type::I64, stride.into());
                let off = self.exprs.mul(loops, f, &[x, s], false);
                self.exprs.add(loops, f, &[p, off], false)
            }
            _ => unknown(self),
        }
    }

    /// The value every predecessor of `b` passes to its parameter `v` (number `k`),
    /// when they all pass the same one: such a parameter equals it (LLVM's
    /// `createNodeForPHI` simplifying a phi of identical incoming values). Loop
    /// rotation leaves them behind, as the latch's copy of a step.
    fn forwarded(&self, v: Value, b: ir::Block, k: usize) -> Option<Value> {
        let mut incoming = None;
        for &p in self.cfg.preds(b) {
            for t in self.f.kind(self.f.terminator(p)?).targets() {
                if t.block != b {
                    continue;
                }
                let w = *t.args.get(k)?;
                if w == v || incoming.is_some_and(|x| x != w) {
                    return None;
                }
                incoming = Some(w);
            }
        }
        incoming
    }

    /// The recurrence of header parameter `v` (number `k` of `header`), if it is one.
    fn header_param(&mut self, v: Value, header: ir::Block, k: usize, ty: Type) -> Option<ExprId> {
        let (f, loops, cfg) = (self.f, self.loops, self.cfg);
        let lp = loops.innermost(header)?;
        // The argument passed to the parameter by each predecessor, entries and
        // latches apart.
        let mut start_val = None;
        let mut back_vals = Vec::new();
        for &p in cfg.unique_preds(header).iter() {
            let term = f.terminator(p)?;
            for t in f.kind(term).targets() {
                if t.block != header {
                    continue;
                }
                let a = *t.args.get(k)?;
                if loops.contains(lp, p) {
                    back_vals.push(a);
                } else if start_val.is_some_and(|s| s != a) {
                    return None;
                } else {
                    start_val = Some(a);
                }
            }
        }
        let (start_val, false) = (start_val?, back_vals.is_empty()) else {
            return None;
        };
        let start = self.get(start_val);
        // The parameter stands for itself while the latch arguments are analysed;
        // whatever was built from it then (which the `pending` bit of its level
        // marks) is forgotten afterwards, and the rest kept.
        let me = self.exprs.unknown(ty, v);
        let mark = self.log.len();
        let bit = 1u32 << self.open;
        self.open += 1;
        self.memo.insert(
            v,
            Memo {
                e: me,
                pending: bit,
            },
        );
        self.log.push(v);
        let backs: Vec<ExprId> = back_vals.iter().map(|&a| self.get(a)).collect();
        let st = &mut **self;
        st.open -= 1;
        st.pending &= !bit;
        let mut kept = mark;
        for k in mark..st.log.len() {
            let w = st.log[k];
            if st.memo.get(&w).is_some_and(|m| m.pending & bit != 0) {
                st.memo.remove(&w);
            } else if st.open > 0 {
                st.log[kept] = w;
                kept += 1;
            }
        }
        st.log.truncate(kept);
        let be = backs[0];
        if backs.iter().any(|&b| b != be) {
            return None;
        }
        if be == me {
            return Some(start);
        }
        if let Some(rec) = self.carried_recurrence(lp, start, be, v) {
            return Some(rec);
        }
        let Expr::Add { ops, .. } = self.exprs.get(be).clone() else {
            return None;
        };
        let pos = ops.iter().position(|&o| o == me)?;
        let others: Vec<ExprId> = ops.iter().copied().filter(|&o| o != me).collect();
        if others.len() != ops.len() - 1 {
            return None;
        }
        let step = if others.len() == 1 {
            others[0]
        } else {
            self.exprs.add(loops, f, &others, false)
        };
        let _ = pos;
        let mut rec_ops = vec![start];
        if self.invariant(step, lp) {
            rec_ops.push(step);
        } else {
            let (sl, sops) = self.exprs.as_addrec(step)?;
            let sops = sops.to_vec();
            if sl != lp || !sops.iter().all(|&o| self.invariant(o, lp)) {
                return None;
            }
            rec_ops.extend(sops);
        }
        let exact = rec_ops.len() == 2 && self.affine_no_wrap(v, rec_ops[1], start);
        Some(self.exprs.addrec(rec_ops, lp, exact))
    }

    /// The parameter `v` of `lp`'s header as `{start,+,d}<lp>` when every latch
    /// passes it an affine recurrence `{a,+,d}<lp>` of invariants with `a = start +
    /// d`: on iteration `k + 1` it holds what the latch computed on iteration `k`,
    /// `a + k * d = start + (k + 1) * d`, and on iteration 0 its start, so it is the
    /// recurrence one step behind the latch's (LLVM's `createAddRecFromPHI`, for a
    /// phi whose back-edge value is an add-recurrence: `q = i * n + j` carried over
    /// from the previous iteration). In the type's modular arithmetic.
    fn carried_recurrence(
        &mut self,
        lp: LoopId,
        start: ExprId,
        be: ExprId,
        v: Value,
    ) -> Option<ExprId> {
        let (l, ops) = self.exprs.as_addrec(be)?;
        let &[a, d] = ops else {
            return None;
        };
        if l != lp || !self.invariant(a, lp) || !self.invariant(d, lp) {
            return None;
        }
        let (loops, f) = (self.loops, self.f);
        if self.exprs.add(loops, f, &[start, d], false) != a {
            return None;
        }
        let exact = self.affine_no_wrap(v, d, start);
        Some(self.exprs.addrec(vec![start, d], lp, exact))
    }

    /// Whether the `i32` parameter `v`, stepping by the constant `step` from an exact
    /// start, never wraps: a step across the end of `i32` lands at least `2^32 - |step|`
    /// below (or above) where it left, so no wrap happens when the values the parameter
    /// takes (its range) span less than that.
    fn affine_no_wrap(&mut self, v: Value, step: ExprId, start: ExprId) -> bool {
        let Some(d) = self.exprs.as_const(step) else {
            return false;
        };
        if self.f.value_type(v) != Type::I32 || !self.exprs.exact(start) {
            return false;
        }
        let Some(r) = self.range(v) else {
            return false;
        };
        i64::from(r.hi) - i64::from(r.lo) + d.abs() < 1i64 << 32
    }
}
