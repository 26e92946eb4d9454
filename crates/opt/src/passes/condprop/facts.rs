//! Facts and what follows from them: the exact question (the same comparison, swapped
//! or inverted) and, for comparisons with constants, the interval the facts confine a
//! value to.

use ir::{Block, CmpOp, Function, InstKind, Value};

/// A fact: the comparison `cmp` (and the value `cond`, when the fact is a condition in
/// the IR) is `truth`.
#[derive(Clone, Copy, Debug)]
pub struct Fact {
    pub cond: Option<Value>,
    pub cmp: Option<(CmpOp, Value, Value)>,
    pub truth: bool,
}

/// The fact that taking the edge from `pred` (ending in a `br` whose arms differ) to
/// `target` establishes.
pub fn branch_fact(f: &Function, pred: Block, target: Block) -> Option<Fact> {
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = f.kind(f.terminator(pred)?)
    else {
        return None;
    };
    if then_dest.block == else_dest.block || f.as_iconst(*cond).is_some() {
        return None;
    }
    let cmp = f.def_inst(*cond).and_then(|i| match *f.kind(i) {
        InstKind::Cmp { op, args: [a, b] } => Some((op, a, b)),
        _ => None,
    });
    Some(Fact {
        cond: Some(*cond),
        cmp,
        truth: then_dest.block == target,
    })
}

/// What the facts say about comparison `op(a, b)` or about condition value `v`.
pub fn known(
    f: &Function,
    facts: &[Fact],
    v: Option<Value>,
    cmp: Option<(CmpOp, Value, Value)>,
) -> Option<bool> {
    for fact in facts.iter().rev() {
        if v.is_some() && fact.cond == v {
            return Some(fact.truth);
        }
        if let (Some(q), Some(c)) = (cmp, fact.cmp) {
            if let Some(t) = same_question(q, c) {
                return Some(fact.truth == t);
            }
        }
    }
    let (op, x, c) = against_constant(f, cmp?)?;
    decide(op, c, interval(f, facts, x)?)
}

/// Whether comparison `q` asks what `c` asks (`Some(true)`), its negation
/// (`Some(false)`), or something else (`None`).
fn same_question(q: (CmpOp, Value, Value), c: (CmpOp, Value, Value)) -> Option<bool> {
    let (op, a, b) = q;
    let (fop, fa, fb) = c;
    if (fa, fb) == (a, b) {
        if fop == op {
            return Some(true);
        }
        if fop.inverse() == Some(op) {
            return Some(false);
        }
    }
    if (fa, fb) == (b, a) {
        if fop.swapped() == op {
            return Some(true);
        }
        if fop.swapped().inverse() == Some(op) {
            return Some(false);
        }
    }
    None
}

/// An integer comparison of a value with a constant, as `(op, x, c)` meaning
/// `x op c`.
fn against_constant(f: &Function, cmp: (CmpOp, Value, Value)) -> Option<(CmpOp, Value, i64)> {
    let (op, a, b) = cmp;
    op.inverse()?; // integer comparisons only
    match (f.as_iconst(a), f.as_iconst(b)) {
        (None, Some(c)) => Some((op, a, i64::from(c))),
        (Some(c), None) => Some((op.swapped(), b, i64::from(c))),
        _ => None,
    }
}

/// The interval `[lo, hi]` that the facts comparing `x` with constants confine it to;
/// `None` when they contradict each other (the code is unreachable, and nothing is
/// worth deciding there).
fn interval(f: &Function, facts: &[Fact], x: Value) -> Option<(i64, i64)> {
    let (mut lo, mut hi) = (i64::from(i32::MIN), i64::from(i32::MAX));
    for fact in facts {
        let Some((op, y, c)) = fact.cmp.and_then(|cmp| against_constant(f, cmp)) else {
            continue;
        };
        if y != x {
            continue;
        }
        let op = if fact.truth { op } else { op.inverse()? };
        match op {
            CmpOp::Slt => hi = hi.min(c - 1),
            CmpOp::Sle => hi = hi.min(c),
            CmpOp::Sgt => lo = lo.max(c + 1),
            CmpOp::Sge => lo = lo.max(c),
            CmpOp::Eq => (lo, hi) = (lo.max(c), hi.min(c)),
            _ => {}
        }
    }
    (lo <= hi).then_some((lo, hi))
}

/// `x op c` for every `x` in `[lo, hi]`: always true, always false, or either.
fn decide(op: CmpOp, c: i64, (lo, hi): (i64, i64)) -> Option<bool> {
    let (always, never) = match op {
        CmpOp::Slt => (hi < c, lo >= c),
        CmpOp::Sle => (hi <= c, lo > c),
        CmpOp::Sgt => (lo > c, hi <= c),
        CmpOp::Sge => (lo >= c, hi < c),
        CmpOp::Eq => (lo == c && hi == c, c < lo || c > hi),
        CmpOp::Ne => (c < lo || c > hi, lo == c && hi == c),
        _ => return None,
    };
    if always {
        Some(true)
    } else if never {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_decide_comparisons_with_constants() {
        use CmpOp::*;
        let r = (0, 9); // 0 <= x <= 9
        assert_eq!(decide(Slt, 0, r), Some(false));
        assert_eq!(decide(Slt, 10, r), Some(true));
        assert_eq!(decide(Slt, 5, r), None);
        assert_eq!(decide(Sle, 9, r), Some(true));
        assert_eq!(decide(Sle, -1, r), Some(false));
        assert_eq!(decide(Sgt, -1, r), Some(true));
        assert_eq!(decide(Sgt, 9, r), Some(false));
        assert_eq!(decide(Sge, 0, r), Some(true));
        assert_eq!(decide(Sge, 10, r), Some(false));
        assert_eq!(decide(Eq, 12, r), Some(false));
        assert_eq!(decide(Eq, 3, r), None);
        assert_eq!(decide(Eq, 3, (3, 3)), Some(true));
        assert_eq!(decide(Ne, -4, r), Some(true));
        assert_eq!(decide(Ne, 3, (3, 3)), Some(false));
        assert_eq!(decide(FLt, 3, r), None);
    }
}
