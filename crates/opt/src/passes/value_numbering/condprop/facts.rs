//! Facts and what follows from them: the exact question (the same comparison, swapped
//! or inverted) and, for comparisons with constants, the interval the facts confine a
//! value to.

use crate::analysis::ranges::{compare, Range};
use ir::{Block, CmpOp, Function, InstKind, Value};
use rustc_hash::FxHashMap;

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

/// Facts, latest last, as [`known`] asks them.
pub trait Facts {
    /// What the latest fact about condition value `v` or answering comparison
    /// `q` (the same question, swapped or inverted) says.
    fn answer(&self, v: Option<Value>, q: Option<(CmpOp, Value, Value)>) -> Option<bool>;
    /// The interval the facts comparing `x` with constants confine it to
    /// (`None` when they contradict each other).
    fn interval(&self, f: &Function, x: Value) -> Option<(i64, i64)>;
}

impl Facts for [Fact] {
    fn answer(&self, v: Option<Value>, cmp: Option<(CmpOp, Value, Value)>) -> Option<bool> {
        for fact in self.iter().rev() {
            if v.is_some() && fact.cond == v {
                return Some(fact.truth);
            }
            if let (Some(q), Some(c)) = (cmp, fact.cmp) {
                if let Some(t) = same_question(q, c) {
                    return Some(fact.truth == t);
                }
            }
        }
        None
    }
    fn interval(&self, f: &Function, x: Value) -> Option<(i64, i64)> {
        interval(f, self.iter(), x)
    }
}

impl Facts for Vec<Fact> {
    fn answer(&self, v: Option<Value>, q: Option<(CmpOp, Value, Value)>) -> Option<bool> {
        self[..].answer(v, q)
    }
    fn interval(&self, f: &Function, x: Value) -> Option<(i64, i64)> {
        self[..].interval(f, x)
    }
}

/// A stack of facts (those of the dominating edges, as a walk of the dominator
/// tree pushes and pops them) indexed by condition value, by the pair of
/// values compared and by the value compared with a constant, so a question
/// looks at the facts about its own values only, not at every fact on the
/// stack (a deep nest holds one per loop around).
#[derive(Default)]
pub struct FactStack {
    facts: Vec<Fact>,
    /// Per fact, the value compared with a constant, if any (as indexed).
    var: Vec<Option<Value>>,
    by_cond: FxHashMap<Value, Vec<u32>>,
    by_pair: FxHashMap<(Value, Value), Vec<u32>>,
    /// Per value compared with constants: the bounds the facts about it give,
    /// after each of them (a stack, so a question takes the top instead of
    /// folding all of them: an `else if` chain on one value holds one per arm).
    by_var: FxHashMap<Value, Vec<Bounds>>,
}

/// The unordered pair of a comparison's operands.
pub(crate) fn pair(a: Value, b: Value) -> (Value, Value) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

impl FactStack {
    pub fn len(&self) -> usize {
        self.facts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
    }

    pub fn push(&mut self, f: &Function, fact: Fact) {
        let i = self.facts.len() as u32;
        if let Some(c) = fact.cond {
            self.by_cond.entry(c).or_default().push(i);
        }
        let var = fact.cmp.and_then(|cmp| {
            let (a, b) = (cmp.1, cmp.2);
            self.by_pair.entry(pair(a, b)).or_default().push(i);
            against_constant(f, cmp)
        });
        if let Some((op, x, c)) = var {
            let list = self.by_var.entry(x).or_default();
            let before = list.last().copied().unwrap_or(Bounds::FULL);
            list.push(before.and(op, fact.truth, c));
        }
        let var = var.map(|(_, x, _)| x);
        self.facts.push(fact);
        self.var.push(var);
    }

    /// Drops the facts pushed after the first `n`.
    pub fn truncate(&mut self, n: usize) {
        while self.facts.len() > n {
            let fact = self.facts.pop().expect("more than n facts");
            let var = self.var.pop().expect("one per fact");
            if let Some(c) = fact.cond {
                self.by_cond.get_mut(&c).and_then(Vec::pop);
            }
            if let Some((_, a, b)) = fact.cmp {
                self.by_pair.get_mut(&pair(a, b)).and_then(Vec::pop);
            }
            if let Some(x) = var {
                self.by_var.get_mut(&x).and_then(Vec::pop);
            }
        }
    }

    /// The latest fact about condition value `v`.
    pub fn about_cond(&self, v: Value) -> Option<&Fact> {
        let &i = self.by_cond.get(&v)?.last()?;
        Some(&self.facts[i as usize])
    }
}

impl Facts for FactStack {
    fn answer(&self, v: Option<Value>, cmp: Option<(CmpOp, Value, Value)>) -> Option<bool> {
        // The latest fact about `v` answers unless a later one asks `cmp`.
        let by_cond = v.and_then(|v| self.by_cond.get(&v)?.last().copied());
        if let Some(q) = cmp {
            if let Some(list) = self.by_pair.get(&pair(q.1, q.2)) {
                for &i in list.iter().rev() {
                    if by_cond.is_some_and(|c| i <= c) {
                        break;
                    }
                    let fact = &self.facts[i as usize];
                    if let Some(t) = fact.cmp.and_then(|c| same_question(q, c)) {
                        return Some(fact.truth == t);
                    }
                }
            }
        }
        by_cond.map(|c| self.facts[c as usize].truth)
    }
    fn interval(&self, _f: &Function, x: Value) -> Option<(i64, i64)> {
        let top = self.by_var.get(&x).and_then(|l| l.last().copied());
        top.unwrap_or(Bounds::FULL).interval()
    }
}

/// What the facts say about comparison `op(a, b)` or about condition value `v`.
pub fn known<F: Facts + ?Sized>(
    f: &Function,
    facts: &F,
    v: Option<Value>,
    cmp: Option<(CmpOp, Value, Value)>,
) -> Option<bool> {
    if let Some(t) = facts.answer(v, cmp) {
        return Some(t);
    }
    let (op, x, c) = against_constant(f, cmp?)?;
    decide(op, c, facts.interval(f, x)?)
}

/// Whether comparison `q` asks what `c` asks (`Some(true)`), its negation
/// (`Some(false)`), or something else (`None`).
pub(crate) fn same_question(q: (CmpOp, Value, Value), c: (CmpOp, Value, Value)) -> Option<bool> {
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
pub(crate) fn against_constant(
    f: &Function,
    cmp: (CmpOp, Value, Value),
) -> Option<(CmpOp, Value, i64)> {
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
pub(crate) fn interval<'a>(
    f: &Function,
    facts: impl Iterator<Item = &'a Fact>,
    x: Value,
) -> Option<(i64, i64)> {
    let mut bounds = Bounds::FULL;
    for fact in facts {
        let Some((op, y, c)) = fact.cmp.and_then(|cmp| against_constant(f, cmp)) else {
            continue;
        };
        if y == x {
            bounds = bounds.and(op, fact.truth, c);
        }
    }
    bounds.interval()
}

/// Bounds on a value from facts comparing it with constants, folded one fact at
/// a time.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Bounds {
    lo: i64,
    hi: i64,
    /// False once a fact could not be used (a false comparison without an
    /// inverse): the interval is then unknown.
    usable: bool,
}

impl Bounds {
    /// No fact yet: every `i32`.
    pub(crate) const FULL: Bounds = Bounds {
        lo: i32::MIN as i64,
        hi: i32::MAX as i64,
        usable: true,
    };

    /// With the fact that `x op c` is `truth` as well.
    pub(crate) fn and(self, op: CmpOp, truth: bool, c: i64) -> Bounds {
        let op = if truth { Some(op) } else { op.inverse() };
        let Some(op) = op else {
            return Bounds {
                usable: false,
                ..self
            };
        };
        let (mut lo, mut hi) = (self.lo, self.hi);
        match op {
            CmpOp::Slt => hi = hi.min(c - 1),
            CmpOp::Sle => hi = hi.min(c),
            CmpOp::Sgt => lo = lo.max(c + 1),
            CmpOp::Sge => lo = lo.max(c),
            CmpOp::Eq => (lo, hi) = (lo.max(c), hi.min(c)),
            _ => {}
        }
        Bounds { lo, hi, ..self }
    }

    /// The interval, `None` when the facts contradict each other or one could
    /// not be used.
    pub(crate) fn interval(self) -> Option<(i64, i64)> {
        (self.usable && self.lo <= self.hi).then_some((self.lo, self.hi))
    }
}

/// `x op c` for every `x` in `[lo, hi]` (an interval of `i32` values): always true,
/// always false, or either.
fn decide(op: CmpOp, c: i64, (lo, hi): (i64, i64)) -> Option<bool> {
    let x = Range {
        lo: lo as i32,
        hi: hi as i32,
    };
    let c = c as i32;
    compare(op, x, Range { lo: c, hi: c })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::{Signature, Type};

    /// The indexed stack answers every question as the plain list of the same
    /// facts does, through pushes and pops.
    #[test]
    fn fact_stack_answers_as_the_list_does() {
        let mut f = Function::new(
            "t",
            Signature {
                params: vec![],
                ret: Type::Void,
                variadic: false,
            },
        );
        let b = f.append_new_block();
        let mut vals: Vec<Value> = (0..4).map(|_| f.append_block_param(b, Type::I32)).collect();
        vals.extend([-1, 0, 3, 7].map(|c| f.iconst(c)));
        let ops = [
            CmpOp::Slt,
            CmpOp::Sle,
            CmpOp::Sgt,
            CmpOp::Sge,
            CmpOp::Eq,
            CmpOp::Ne,
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut stack = FactStack::default();
        let mut list: Vec<Fact> = Vec::new();
        let mut decided = 0;
        for _ in 0..2000 {
            match next(5) {
                0 if !list.is_empty() => {
                    let n = next(list.len() + 1);
                    stack.truncate(n);
                    list.truncate(n);
                }
                _ => {
                    let cmp = (ops[next(6)], vals[next(8)], vals[next(8)]);
                    let fact = Fact {
                        cond: (next(3) > 0).then(|| vals[next(4)]),
                        cmp: (next(4) > 0).then_some(cmp),
                        truth: next(2) == 0,
                    };
                    stack.push(&f, fact);
                    list.push(fact);
                }
            }
            assert_eq!(stack.len(), list.len());
            for _ in 0..8 {
                let v = (next(2) == 0).then(|| vals[next(8)]);
                let q = (next(4) > 0).then(|| (ops[next(6)], vals[next(8)], vals[next(8)]));
                let answer = known(&f, &stack, v, q);
                assert_eq!(answer, known(&f, &list[..], v, q), "{v:?} {q:?}");
                decided += usize::from(answer.is_some());
                let a = vals[next(8)];
                let latest = list.iter().rev().find(|x| x.cond == Some(a));
                assert_eq!(
                    stack.about_cond(a).map(|x| x.truth),
                    latest.map(|x| x.truth)
                );
            }
        }
        assert!(decided > 1000, "{decided}");
    }

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
