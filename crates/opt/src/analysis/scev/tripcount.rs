//! Trip counts and exit values.
//!
//! The exit count of an exiting block (one that runs on every iteration: it
//! dominates every latch) is the number of back edges taken before it leaves:
//! the first iteration `k` at which its test `{s,+,d} op n` fails, `n` invariant,
//! `d` a constant. The cases are LLVM's `howManyLessThans`/`howManyGreaterThans`
//! (`<`, `<=` counting up, `>`, `>=` counting down: `max(n - s, 0) /u d` rounded up,
//! valid when the last value below `n` cannot step past the end of `i32`, which is
//! a predicate on `n` unless the constants or the value ranges decide it) and
//! `howFarToZero` (`!=`: the solution of `s + k*d = n` modulo 2^32, which exists for
//! `d = ±1` and otherwise when the constants allow). The loop's exact count is the
//! single exiting block's (or the least of all when every one is constant); its
//! maximum the least constant count of any exiting block.
//!
//! The value of a recurrence `{a0,+,a1,+,...,+,am}` after `k` iterations is
//! `sum_j aj * C(k, j)` (Newton's forward-difference series, as LLVM's
//! `SCEVAddRecExpr::evaluateAtIteration`): for a symbolic `k` only when affine,
//! for a constant one in any order, the binomial coefficients computed exactly
//! and reduced modulo the type's width.

use super::expr::{Expr, ExprId};
use super::ScalarEvolution;
use crate::analysis::LoopId;
use ir::{Block, CmpOp, InstKind, Type, Value};

/// A condition on values at loop entry: `lhs op rhs` (signed, on `i64`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Predicate {
    pub lhs: ExprId,
    pub op: CmpOp,
    pub rhs: ExprId,
}

/// The number of back edges taken before an exit (an `i64` expression), valid when
/// every predicate holds.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ExitCount {
    pub count: ExprId,
    pub predicates: Vec<Predicate>,
}

/// An exit test solved for: the loop continues while `x op bound`, `x` the
/// affine recurrence `{start,+,step}` (`step` a non-zero constant; for a pointer,
/// in bytes), `bound` invariant in the loop.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ExitTest {
    pub op: CmpOp,
    pub start: ExprId,
    pub step: i64,
    pub bound: ExprId,
    /// The recurrence `{start,+,step}`.
    pub x: ExprId,
    /// The compared values: the recurrence's and the bound's (absent when the
    /// branch tests an integer against zero).
    pub tested: Value,
    pub bound_value: Option<Value>,
    /// The loop whose exit this is.
    pub lp: LoopId,
}

/// The back-edge-taken count of a loop: exact when known, and a constant bound.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct LoopCounts {
    pub exact: Option<ExitCount>,
    pub max: Option<i64>,
}

const MAX: i64 = i32::MAX as i64;
const MIN: i64 = i32::MIN as i64;

/// Which way an ordered exit test's counter moves toward its bound.
#[derive(Clone, Copy)]
enum Toward {
    Up,
    Down,
}

impl ScalarEvolution<'_> {
    /// The blocks of `lp` that leave it (a successor outside, or a return).
    pub fn exiting_blocks(&self, lp: LoopId) -> Vec<Block> {
        let all = self
            .exiting
            .get_or_init(|| self.loops.exiting_blocks(self.f, self.cfg));
        all[lp.0 as usize].clone()
    }

    /// The back-edge-taken count of `lp`.
    pub fn backedge_taken(&mut self, lp: LoopId) -> LoopCounts {
        let exiting = self.exiting_blocks(lp);
        let counts: Vec<Option<ExitCount>> =
            exiting.iter().map(|&e| self.exit_count(lp, e)).collect();
        let constant = |s: &Self, c: &Option<ExitCount>| {
            c.as_ref()
                .filter(|c| c.predicates.is_empty())
                .and_then(|c| s.exprs.as_const(c.count))
        };
        let consts: Vec<Option<i64>> = counts.iter().map(|c| constant(self, c)).collect();
        let max = consts.iter().flatten().copied().min();
        let exact = match &counts[..] {
            [one] => one.clone(),
            _ if consts.iter().all(|c| c.is_some()) => max.map(|m| ExitCount {
                count: self.exprs.constant(Type::I64, m),
                predicates: Vec::new(),
            }),
            _ => None,
        };
        LoopCounts { exact, max }
    }

    /// Whether `lp`, an innermost loop, certainly terminates: an exiting block has
    /// an exit count that holds unconditionally (whatever the count is).
    pub fn terminates(&mut self, lp: LoopId) -> bool {
        self.loops.get(lp).children.is_empty() && self.iterates_finitely(lp)
    }

    /// Whether `lp` starts finitely many iterations: an exiting block has an exit
    /// count that holds unconditionally. (The loop terminates if each iteration
    /// does: its inner loops may not.)
    pub fn iterates_finitely(&mut self, lp: LoopId) -> bool {
        self.exiting_blocks(lp).into_iter().any(|e| {
            self.exit_count(lp, e)
                .is_some_and(|c| c.predicates.is_empty())
        })
    }

    /// Whether `e` never wraps: its flag says so, or [`Self::exact_range`] finds
    /// its values.
    pub fn is_exact(&mut self, e: ExprId) -> bool {
        self.exprs.exact(e) || self.exact_range(e).is_some()
    }

    /// The interval of the values of an `i32` expression that provably never wraps:
    /// a constant, or an affine recurrence of a constant step whose start never
    /// wraps and whose values over the loop's largest iteration count (the exit
    /// test's bound) stay in `i32`.
    pub fn exact_range(&mut self, e: ExprId) -> Option<(i64, i64)> {
        match self.exprs.get(e).clone() {
            Expr::Const { ty: Type::I32, c } => Some((c, c)),
            Expr::AddRec {
                ty: Type::I32,
                ops,
                lp,
                ..
            } if ops.len() == 2 => {
                let d = self.exprs.as_const(ops[1])?;
                let (lo, hi) = self.exact_range(ops[0])?;
                let reach = self.max_count(lp)?.checked_mul(d)?;
                let (lo, hi) = (lo + reach.min(0), hi.checked_add(reach.max(0))?);
                (lo >= MIN && hi <= MAX).then_some((lo, hi))
            }
            _ => None,
        }
    }

    /// The loop's constant maximum back-edge-taken count, memoised.
    pub fn max_count(&mut self, lp: LoopId) -> Option<i64> {
        if let Some(&m) = self.max_counts.get(&lp) {
            return m;
        }
        let m = self.backedge_taken(lp).max;
        self.max_counts.insert(lp, m);
        m
    }

    /// The exit count of `exiting`, a block of `lp`, if its test is solvable.
    pub fn exit_count(&mut self, lp: LoopId, exiting: Block) -> Option<ExitCount> {
        let t = self.exit_test(lp, exiting)?;
        self.count_of_test(&t)
    }

    /// The exit test of `exiting`, a block of `lp` that runs on every iteration,
    /// as `{s,+,d}<lp> op n` (the loop continuing while it holds), `d` a non-zero
    /// constant and `n` invariant.
    pub fn exit_test(&mut self, lp: LoopId, exiting: Block) -> Option<ExitTest> {
        let (f, loops) = (self.f, self.loops);
        if loops.innermost(exiting) != Some(lp)
            || !loops
                .get(lp)
                .latches
                .iter()
                .all(|&l| self.dt.dominates(exiting, l))
        {
            return None;
        }
        let InstKind::Br {
            cond,
            then_dest,
            else_dest,
        } = f.kind(f.terminator(exiting)?)
        else {
            return None;
        };
        let stays_on_true = match (
            loops.contains(lp, then_dest.block),
            loops.contains(lp, else_dest.block),
        ) {
            (true, false) => true,
            (false, true) => false,
            _ => return None,
        };
        let (op, a, b): (CmpOp, Value, Option<Value>) = match f.def_inst(*cond).map(|i| f.kind(i)) {
            Some(&InstKind::Cmp { op, args: [a, b] }) if !op.is_float() => (op, a, Some(b)),
            // A branch on an integer tests it against zero.
            _ if f.value_type(*cond) == Type::I32 => (CmpOp::Ne, *cond, None),
            _ => return None,
        };
        let op = if stays_on_true { op } else { op.inverse()? };
        if !matches!(f.value_type(a), Type::I32 | Type::Ptr) {
            return None;
        }
        let x = self.get(a);
        let y = match b {
            Some(b) => self.get(b),
            None => self.exprs.constant(Type::I32, 0),
        };
        // `x op y` with the recurrence on the left.
        let (op, x, n, tested, bound) = if self.invariant(x, lp) && !self.invariant(y, lp) {
            (op.swapped(), y, x, b?, Some(a))
        } else {
            (op, x, y, a, b)
        };
        if !self.invariant(n, lp) {
            return None;
        }
        let (xl, ops) = self.exprs.as_addrec(x)?;
        let &[s, d] = ops else { return None };
        let d = self.exprs.as_const(d)?;
        if xl != lp || d == 0 {
            return None;
        }
        Some(ExitTest {
            lp,
            op,
            start: s,
            step: d,
            bound: n,
            x,
            tested,
            bound_value: bound,
        })
    }

    /// The number of back edges taken before the test `t` fails.
    /// (Only `i32` tests are counted: a pointer's is in bytes of an address.)
    pub fn count_of_test(&mut self, t: &ExitTest) -> Option<ExitCount> {
        if self.exprs.ty(t.x) != Type::I32 {
            return None;
        }
        let (op, s, d, n) = (t.op, t.start, t.step, t.bound);
        match (op, d > 0) {
            (CmpOp::Slt, true) => self.count_toward(t.lp, (s, n), d, 0, Toward::Up),
            (CmpOp::Sle, true) => self.count_toward(t.lp, (s, n), d, 1, Toward::Up),
            (CmpOp::Sgt, false) => self.count_toward(t.lp, (s, n), -d, 0, Toward::Down),
            (CmpOp::Sge, false) => self.count_toward(t.lp, (s, n), -d, 1, Toward::Down),
            (CmpOp::Ne, _) => self.count_to_equal(s, n, d),
            (CmpOp::Eq, _) => {
                // Continues while equal: leaves on the first or the second test.
                let (s, n) = (self.exprs.as_const(s)?, self.exprs.as_const(n)?);
                Some(self.constant_count(i64::from(s == n)))
            }
            // Moving away from the bound: the first test leaves, or the
            // counter wraps round before it does.
            (CmpOp::Slt | CmpOp::Sle | CmpOp::Sgt | CmpOp::Sge, _) => {
                let (s, n) = (self.exprs.as_const(s)?, self.exprs.as_const(n)?);
                let holds = match op {
                    CmpOp::Slt => s < n,
                    CmpOp::Sle => s <= n,
                    CmpOp::Sgt => s > n,
                    _ => s >= n,
                };
                (!holds).then(|| self.constant_count(0))
            }
            _ => None,
        }
    }

    fn constant_count(&mut self, k: i64) -> ExitCount {
        ExitCount {
            count: self.exprs.constant(Type::I64, k),
            predicates: Vec::new(),
        }
    }

    /// `{s,+,d} < n + inclusive` (counting up) or `{s,+,-d} > n - inclusive`
    /// (counting down), with `d > 0`: the distance from the start to the exclusive
    /// bound `b = n ± inclusive`, rounded up in steps of `d` (none when the start
    /// is already past it), when the last value before the bound steps without
    /// wrapping: `b - 1 + d <= MAX` up, `b + 1 - d >= MIN` down.
    fn count_toward(
        &mut self,
        lp: LoopId,
        (s, n): (ExprId, ExprId),
        d: i64,
        inclusive: i64,
        dir: Toward,
    ) -> Option<ExitCount> {
        let (loops, f) = (self.loops, self.f);
        let offset = match dir {
            Toward::Up => inclusive,
            Toward::Down => -inclusive,
        };
        let s64 = self.exprs.sext(loops, f, s);
        let n64 = self.exprs.sext(loops, f, n);
        let inc = self.exprs.constant(Type::I64, offset);
        let b = self.exprs.add(loops, f, &[n64, inc], true);
        let (lo, hi) = self.bounds(b);
        let (limit, op) = match dir {
            Toward::Up => (MAX - d + 1, CmpOp::Sle),
            Toward::Down => (MIN + d - 1, CmpOp::Sge),
        };
        // Whether `b` is always within the limit, or never.
        let (always, never) = match dir {
            Toward::Up => (hi <= limit, lo > limit),
            Toward::Down => (lo >= limit, hi < limit),
        };
        let pred = if always {
            None
        } else if never {
            // Past the limit, the count holds only when the loop leaves at once.
            let (sc, bc) = (self.exprs.as_const(s64)?, self.exprs.as_const(b)?);
            let leaves = match dir {
                Toward::Up => sc >= bc,
                Toward::Down => sc <= bc,
            };
            return leaves.then(|| self.constant_count(0));
        } else {
            Some(Predicate {
                lhs: b,
                op,
                rhs: self.exprs.constant(Type::I64, limit),
            })
        };
        // The higher and the lower end of the walk; the maximum is the higher
        // end when the start is never past the bound on entry (`s <= b` up,
        // `s >= b` down: a start at the bound walks no step either way).
        let (high, low, start_within) = match dir {
            Toward::Up => (
                b,
                s64,
                self.compare_at_entry(lp, s, n, offset + 1) == Some(std::cmp::Ordering::Less),
            ),
            Toward::Down => (
                s64,
                b,
                self.compare_at_entry(lp, s, n, offset) == Some(std::cmp::Ordering::Greater),
            ),
        };
        let top = if start_within {
            high
        } else {
            self.exprs.smax(high, low)
        };
        Some(self.steps_across(top, low, d, pred))
    }

    /// Whether the recurrence `t` tests, stepping by one (up or down), starts at
    /// or before its bound whenever the loop is entered (at or below it counting
    /// up, at or above it down), from the constant ranges the dominating branches
    /// give the values (as [`Self::compare_at_entry`]): then it meets the bound
    /// before it could wrap, and a `!=` test behaves as `<` (or `>`).
    pub fn starts_toward_bound(&mut self, t: &ExitTest) -> bool {
        use std::cmp::Ordering::{Greater, Less};
        match t.step {
            1 => self.compare_at_entry(t.lp, t.start, t.bound, 1) == Some(Less),
            -1 => self.compare_at_entry(t.lp, t.start, t.bound, 0) == Some(Greater),
            _ => false,
        }
    }

    /// How `s` compares with `n + offset` (as integers) whenever the loop is
    /// entered: `Less` when always below, `Greater` when always at or above, from
    /// the constant ranges the branches dominating the loop give the values in
    /// them (LLVM's `applyLoopGuards`). A rotated loop's guard, which tests the
    /// counter's first value before the loop, so decides the maximum in its count.
    pub fn compare_at_entry(
        &mut self,
        lp: LoopId,
        s: ExprId,
        n: ExprId,
        offset: i64,
    ) -> Option<std::cmp::Ordering> {
        let facts = self.entry_facts(lp);
        let (slo, shi) = self.guarded_range(s, &facts)?;
        let (nlo, nhi) = self.guarded_range(n, &facts)?;
        let (nlo, nhi) = (nlo + offset, nhi + offset);
        if shi < nlo {
            Some(std::cmp::Ordering::Less)
        } else if slo >= nhi {
            Some(std::cmp::Ordering::Greater)
        } else {
            None
        }
    }

    /// The interval of an `i32` expression's values at the entry of the loop the
    /// facts are of: constants, unknowns within the facts' ranges, and sums of them
    /// that cannot wrap there.
    fn guarded_range(&mut self, e: ExprId, facts: &[(ExprId, i64, i64)]) -> Option<(i64, i64)> {
        let structural = match self.exprs.get(e).clone() {
            Expr::Const { ty: Type::I32, c } => Some((c, c)),
            Expr::Unknown { ty: Type::I32, v } => Some(match self.range(v) {
                Some(r) => (i64::from(r.lo), i64::from(r.hi)),
                None => (MIN, MAX),
            }),
            Expr::Add {
                ty: Type::I32, ops, ..
            } => {
                let mut acc = Some((0i64, 0i64));
                for &o in &ops {
                    acc = match (acc, self.guarded_range(o, facts)) {
                        (Some(a), Some((lo, hi))) => Some((a.0 + lo, a.1 + hi)),
                        _ => None,
                    };
                }
                let acc = acc.filter(|a| a.0 >= MIN && a.1 <= MAX);
                // A sum that contains a tested sum: the test's range plus the rest.
                acc.or_else(|| self.range_by_part(&ops, facts))
            }
            _ => None,
        };
        let mut known = structural.unwrap_or((MIN, MAX));
        let mut any = structural.is_some();
        for &(_, l, h) in facts.iter().filter(|&&(x, _, _)| x == e) {
            known = (known.0.max(l), known.1.min(h));
            any = true;
        }
        (any && known.0 <= known.1).then_some(known)
    }

    /// The range of the `i32` sum of `ops` when the terms of a fact's sum are among
    /// them: the fact's range plus the range of the other terms, if it cannot wrap.
    fn range_by_part(
        &mut self,
        ops: &[ExprId],
        facts: &[(ExprId, i64, i64)],
    ) -> Option<(i64, i64)> {
        for &(fe, lo, hi) in facts {
            let parts = match self.exprs.get(fe) {
                Expr::Add { ops, .. } => ops.clone(),
                _ => vec![fe],
            };
            let mut rest = ops.to_vec();
            let all_found = parts
                .iter()
                .all(|p| match rest.iter().position(|o| o == p) {
                    Some(i) => {
                        rest.remove(i);
                        true
                    }
                    None => false,
                });
            if !all_found || rest.len() == ops.len() {
                continue;
            }
            let mut acc = (lo, hi);
            for o in rest {
                let (l, h) = self.guarded_range(o, facts)?;
                acc = (acc.0 + l, acc.1 + h);
            }
            if acc.0 >= MIN && acc.1 <= MAX {
                return Some(acc);
            }
        }
        None
    }

    /// What the branches on the way to `lp`'s preheader say about single values:
    /// `(e, lo, hi)` for a comparison of a value of evolution `e` with a constant
    /// that holds there.
    /// Walks up the dominator tree a few blocks, taking the condition of each
    /// block entered by one edge from a two-way branch.
    fn entry_facts(&mut self, lp: LoopId) -> Vec<(ExprId, i64, i64)> {
        const STEPS: usize = 8;
        let f = self.f;
        let mut facts = Vec::new();
        let Some(mut b) = self.loops.preheader(lp, self.cfg) else {
            return facts;
        };
        for _ in 0..STEPS {
            if let [p] = self.cfg.preds(b) {
                if let Some(InstKind::Br {
                    cond,
                    then_dest,
                    else_dest,
                }) = f.terminator(*p).map(|t| f.kind(t))
                {
                    let taken = match (then_dest.block == b, else_dest.block == b) {
                        (true, false) => Some(true),
                        (false, true) => Some(false),
                        _ => None,
                    };
                    if let (Some(taken), Some(&InstKind::Cmp { op, args: [x, y] })) =
                        (taken, f.def_inst(*cond).map(|i| f.kind(i)))
                    {
                        let op = if taken { Some(op) } else { op.inverse() };
                        for (v, lo, hi) in op.map_or(Vec::new(), |op| comparison_facts(f, op, x, y))
                        {
                            let e = self.get(v);
                            facts.push((e, lo, hi));
                        }
                    }
                }
            }
            match self.dt.idom(b) {
                Some(up) => b = up,
                None => break,
            }
        }
        facts
    }

    /// The steps of `d` it takes to cover `top - low` (rounded up), as the count
    /// of [`Self::count_toward`], under `pred`.
    fn steps_across(
        &mut self,
        top: ExprId,
        low: ExprId,
        d: i64,
        pred: Option<Predicate>,
    ) -> ExitCount {
        let (loops, f) = (self.loops, self.f);
        let span = self.exprs.sub(loops, f, top, low);
        let round = self.exprs.constant(Type::I64, d - 1);
        let span = self.exprs.add(loops, f, &[span, round], true);
        let dd = self.exprs.constant(Type::I64, d);
        let count = self.exprs.udiv(span, dd);
        ExitCount {
            count,
            predicates: pred.into_iter().collect(),
        }
    }

    /// `{s,+,d} != n`: the least `k >= 0` with `s + k*d = n` modulo 2^32.
    fn count_to_equal(&mut self, s: ExprId, n: ExprId, d: i64) -> Option<ExitCount> {
        let (loops, f) = (self.loops, self.f);
        if let (Some(sc), Some(nc)) = (self.exprs.as_const(s), self.exprs.as_const(n)) {
            let diff = (nc - sc) as u64 & 0xffff_ffff;
            let du = d as u64 & 0xffff_ffff;
            let t = du.trailing_zeros();
            if diff & ((1u64 << t) - 1) != 0 {
                return None;
            }
            let modulus = 1u64 << (32 - t);
            let odd = du >> t;
            // The inverse of the odd part modulo 2^(32 - t), by Newton's iteration.
            let mut inv: u64 = odd;
            for _ in 0..5 {
                inv = inv.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(inv)));
            }
            let k = ((diff >> t).wrapping_mul(inv)) & (modulus - 1);
            return Some(self.constant_count(k as i64));
        }
        if d.abs() != 1 {
            return None;
        }
        let diff = self.exprs.sub(loops, f, n, s);
        let sign = self.exprs.constant(Type::I32, d);
        let k = self.exprs.mul(loops, f, &[sign, diff], false);
        let count = self.exprs.zext(k);
        Some(ExitCount {
            count,
            predicates: Vec::new(),
        })
    }

    /// Signed bounds of an `i64` expression built of sign-extended `i32` values.
    pub fn bounds(&mut self, e: ExprId) -> (i64, i64) {
        const ANY: (i64, i64) = (i64::MIN, i64::MAX);
        match self.exprs.get(e).clone() {
            Expr::Const { c, .. } => (c, c),
            Expr::SExt(a) => match self.exprs.get(a).clone() {
                Expr::Const { c, .. } => (c, c),
                Expr::Unknown { v, .. } => match self.range(v) {
                    Some(r) => (r.lo.into(), r.hi.into()),
                    None => (MIN, MAX),
                },
                _ => (MIN, MAX),
            },
            Expr::Add {
                ops, exact: true, ..
            } => {
                let mut acc = (0i64, 0i64);
                for o in ops {
                    let (lo, hi) = self.bounds(o);
                    match (acc.0.checked_add(lo), acc.1.checked_add(hi)) {
                        (Some(l), Some(h)) => acc = (l, h),
                        _ => return ANY,
                    }
                }
                acc
            }
            _ => ANY,
        }
    }

    /// The value of `e` after `k` iterations of `lp` (`k` an `i64` expression), for
    /// sums and products of recurrences of `lp` and invariants.
    pub fn value_at(&mut self, e: ExprId, lp: LoopId, k: ExprId) -> Option<ExprId> {
        let (loops, f) = (self.loops, self.f);
        if self.invariant(e, lp) {
            return Some(e);
        }
        match self.exprs.get(e).clone() {
            Expr::AddRec { ty, ops, lp: l, .. } if l == lp => {
                let int_ty = if ty == Type::Ptr { Type::I64 } else { ty };
                let mut terms = vec![ops[0]];
                match self.exprs.as_const(k) {
                    Some(kc) => {
                        for (j, &a) in ops.iter().enumerate().skip(1) {
                            let c = binomial(kc as u64, j as u64)?;
                            let c = self.exprs.constant(int_ty, c as i64);
                            terms.push(self.exprs.mul(loops, f, &[c, a], false));
                        }
                    }
                    None if ops.len() == 2 => {
                        let k = if int_ty == Type::I32 {
                            self.exprs.trunc(loops, f, k)
                        } else {
                            k
                        };
                        terms.push(self.exprs.mul(loops, f, &[k, ops[1]], false));
                    }
                    None => return None,
                }
                Some(self.exprs.add(loops, f, &terms, false))
            }
            Expr::Add { ops, .. } => {
                let vals: Option<Vec<ExprId>> =
                    ops.iter().map(|&o| self.value_at(o, lp, k)).collect();
                Some(self.exprs.add(loops, f, &vals?, false))
            }
            Expr::Mul { ops, .. } => {
                let vals: Option<Vec<ExprId>> =
                    ops.iter().map(|&o| self.value_at(o, lp, k)).collect();
                Some(self.exprs.mul(loops, f, &vals?, false))
            }
            _ => None,
        }
    }
}

/// The ranges `x op y` gives: that of `x` or `y` when the other is a constant,
/// those of both when neither is and they are `i32`s in a strict order.
fn comparison_facts(f: &ir::Function, op: CmpOp, x: Value, y: Value) -> Vec<(Value, i64, i64)> {
    let (op, v, c) = match (f.as_iconst(x), f.as_iconst(y)) {
        (None, Some(c)) => (op, x, i64::from(c)),
        (Some(c), None) => (op.swapped(), y, i64::from(c)),
        (None, None) if f.value_type(x) == Type::I32 => return strict_order_facts(op, x, y),
        _ => return Vec::new(),
    };
    let fact = match op {
        CmpOp::Slt => (v, MIN, c - 1),
        CmpOp::Sle => (v, MIN, c),
        CmpOp::Sgt => (v, c + 1, MAX),
        CmpOp::Sge => (v, c, MAX),
        CmpOp::Eq => (v, c, c),
        _ => return Vec::new(),
    };
    vec![fact]
}

/// What `x < y` (or `x > y`) between two unknowns says of each: the smaller is
/// not `i32::MAX` and the larger not `i32::MIN`, so that one more than the
/// smaller (one less than the larger) does not wrap.
fn strict_order_facts(op: CmpOp, x: Value, y: Value) -> Vec<(Value, i64, i64)> {
    let (lower, upper) = match op {
        CmpOp::Slt => (x, y),
        CmpOp::Sgt => (y, x),
        _ => return Vec::new(),
    };
    vec![(lower, MIN, MAX - 1), (upper, MIN + 1, MAX)]
}

/// `C(k, j)` modulo 2^64, computed exactly (so the division is exact).
fn binomial(k: u64, j: u64) -> Option<u64> {
    if k < j {
        return Some(0);
    }
    let mut c: u128 = 1;
    for i in 0..j {
        c = c.checked_mul(u128::from(k - i))? / u128::from(i + 1);
    }
    Some(c as u64)
}
