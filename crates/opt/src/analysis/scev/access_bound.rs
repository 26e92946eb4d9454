//! Loop bounds inferred from the loop's memory accesses: an access executed on
//! every iteration whose address steps through an object of known size must stay
//! inside it, since an access out of bounds is undefined behaviour (SysY, like C,
//! never executes one). Its last iteration in bounds then bounds the loop's
//! back-edge-taken count, whatever the exit tests say.
//!
//! This is GCC's `infer_loop_bounds_from_array` (`tree-ssa-loop-niter.cc`, the
//! `nb_iterations_upper_bound` that its unroller consults) and LLVM's
//! `ScalarEvolution::getConstantMaxTripCountFromArray`. The access's address must be
//! an affine recurrence `{base + o,+,d}<loop>` of the loop with a constant step `d`,
//! `base` a global or a local array (sizes known), and `o` a constant or a sum of
//! sign-extended values of known range ([`ScalarEvolution::bounds`]). The access
//! must lie in a block that dominates every latch, so that every iteration that
//! goes round reaches it (in an inner loop, at least once: its address is a
//! recurrence of this loop, so it is the same on each of those times).
//!
//! The bound is as sound as the accesses are the program's own: a load that a
//! pass made speculative (run on an iteration that would not have made it) could
//! lie outside its object without undefined behaviour. Its one user so far,
//! [`crate::passes::loops::rtunroll`], takes it as a profitability estimate only,
//! never to drop a test.

use super::expr::Expr;
use super::ScalarEvolution;
use crate::analysis::deref::object_bytes;
use crate::analysis::LoopId;
use ir::{InstKind, Type, Value};

impl ScalarEvolution<'_> {
    /// A constant bound on the back-edge-taken count of `lp` from the accesses of
    /// its iterations (see the module documentation), given the size in bytes of
    /// each global by index. `None` when no access bounds it.
    pub fn max_count_from_accesses(&mut self, lp: LoopId, global_sizes: &[u64]) -> Option<i64> {
        let (f, dt) = (self.f, self.dt);
        let l = self.loops.get(lp);
        let mut best: Option<i64> = None;
        for &b in l.blocks.iter() {
            if !l.latches.iter().all(|&t| dt.dominates(b, t)) {
                continue;
            }
            let mut call_before = false;
            for i in f.layout.block_insts(b) {
                let (ptr, ty) = match *f.kind(i) {
                    InstKind::Call { .. } => {
                        call_before = true;
                        continue;
                    }
                    InstKind::Load { ty, ptr } => (ptr, ty),
                    InstKind::Store { value, ptr } => (ptr, f.value_type(value)),
                    _ => continue,
                };
                let Some(k) = self.last_iteration_in_bounds(lp, ptr, ty, global_sizes) else {
                    continue;
                };
                // Iteration `k + 1` does not reach the access, so it does not go
                // round: at most `k + 1` back edges. In the header, before any call
                // (which might not return), it does not even start.
                let count = if b == l.header && !call_before {
                    k
                } else {
                    k + 1
                };
                best = Some(best.map_or(count, |c| c.min(count)).max(0));
            }
        }
        best
    }

    /// The last iteration `k` of `lp` at which an access of type `ty` at `ptr`
    /// stays inside its object, when `ptr` is `{base + o,+,d}<lp>` as described in
    /// the module documentation; `-1` when no iteration does.
    fn last_iteration_in_bounds(
        &mut self,
        lp: LoopId,
        ptr: Value,
        ty: Type,
        global_sizes: &[u64],
    ) -> Option<i64> {
        let e = self.get(ptr);
        let (l, ops) = self.exprs.as_addrec(e)?;
        let [start, step] = *ops else {
            return None;
        };
        let d = self.exprs.as_const(step).filter(|&d| d != 0 && l == lp)?;
        let terms = match self.exprs.get(start) {
            Expr::Add { ops, .. } => ops.clone(),
            _ => vec![start],
        };
        let mut base = None;
        let (mut lo, mut hi) = (0i64, 0i64);
        for t in terms {
            match *self.exprs.get(t) {
                Expr::Unknown { ty: Type::Ptr, v } if base.is_none() => base = Some(v),
                _ if self.exprs.ty(t) == Type::I64 => {
                    let (a, b) = self.bounds(t);
                    // Offsets beyond 2^40 bytes come from a term of unknown range.
                    const FAR: i64 = 1 << 40;
                    if a < -FAR || b > FAR {
                        return None;
                    }
                    (lo, hi) = (lo + a, hi + b);
                }
                _ => return None,
            }
        }
        let size = object_bytes(self.f, base?, global_sizes)?;
        let width = i64::from(ty.size());
        // In bounds at iteration `k`: `0 <= o + k d` and `o + k d + width <= size`.
        let k = if d > 0 {
            (size - width - lo).div_euclid(d)
        } else {
            hi.div_euclid(-d)
        };
        Some(k.max(-1))
    }
}
