//! What a loop header establishes about its counters.
//!
//! Take a block `h` with two predecessors: an entry `e` that `h` does not dominate,
//! and a latch `l` that it does (a loop with a single back edge). Let the latch
//! continue to `h` only while `x op bound` holds, where `bound` is defined before the
//! loop (its definition strictly dominates `h`) and `x` is the argument the latch
//! passes to a parameter `p` of `h`. Then every value `p` receives from the latch
//! satisfies `p op bound`; if the value `init` it receives from the entry does too
//! (known from the facts at the entry edge), `p op bound` holds everywhere `h`
//! dominates. This is induction on the executions of `h`, with nothing assumed
//! about how `x` is computed.
//!
//! The steps come from scalar evolution ([`Steps`]): `p` steps by the constant `s`
//! when it evolves as `{init,+,s}<loop>`, whatever chain of additions (through
//! parameters the latch forwards, as loop rotation leaves behind) computes it.
//!
//! When the latch tests `p` itself and `p` steps by 1 (-1) while `p < bound`
//! (`p > bound`), the values from the latch satisfy `p <= bound` (`p >= bound`): the
//! step cannot wrap around, since `p < bound <= i32::MAX`.
//!
//! The counter also never falls below its start. If `p` steps by a
//! constant `s > 0` and `p`'s upper bound `M` (`bound - 1` for `<`, `bound` for
//! `<=`; for an unknown `bound`, `i32::MAX - 1` or `i32::MAX`) leaves `M + s <=
//! i32::MAX`, no step wraps around, the values of `p` only grow, and `p >= init`
//! holds too. The mirror image holds for `s < 0`.

use super::facts::{branch_fact, known, Fact, FactStack};
use crate::analysis::scev::ScalarEvolution;
use crate::fold::{fold_cmp, Const};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, CmpOp, Function, InstKind, Type, Value, ValueDef};
use rustc_hash::FxHashMap;

/// The constant step of every `i32` loop-header parameter that scalar evolution
/// describes as an affine recurrence `{init,+,s}` of its loop, among those
/// [`loop_facts`] may ask about: the loop has its [`Shape`], and its latch tests
/// the parameter or its next value.
#[derive(Default)]
pub struct Steps(FxHashMap<Value, i32>);

impl Steps {
    /// The steps of the header parameters of every loop `se` describes.
    pub fn of(se: &mut ScalarEvolution) -> Self {
        let (f, loops) = (se.f, se.loops);
        let mut steps = FxHashMap::default();
        for (id, lp) in loops.loops() {
            let Some(shape) = Shape::of(f, se.cfg, se.dt, lp.header) else {
                continue;
            };
            let (_, a, b) = shape.test;
            for (&p, &next) in f.block_params(lp.header).iter().zip(&shape.next) {
                let tested = [p, next].iter().any(|&x| x == a || x == b);
                if f.value_type(p) != Type::I32 || !tested {
                    continue;
                }
                if let Some(s) = se.constant_step(p, id) {
                    steps.insert(p, s as i32);
                }
            }
        }
        Steps(steps)
    }

    /// The constant step of header parameter `p`, if it has one.
    fn of_param(&self, p: Value) -> Option<i32> {
        self.0.get(&p).copied()
    }
}

/// The facts about the counters of the loop headed by `h`, given the `facts` known
/// at `h`'s immediate dominator (left as they were).
pub fn loop_facts(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    steps: &Steps,
    h: Block,
    facts: &mut FactStack,
) -> Vec<Fact> {
    let mut out = Vec::new();
    let Some(shape) = Shape::of(f, cfg, dt, h) else {
        return out;
    };
    // What holds on the entry edge: the facts at `h`'s immediate dominator (which
    // dominates the entry block) and the edge's own condition.
    let before = facts.len();
    if let Some(fact) = branch_fact(f, shape.entry, h) {
        facts.push(f, fact);
    }
    let params = f.block_params(h);
    for (j, &p) in params.iter().enumerate() {
        let (init, next) = (shape.init[j], shape.next[j]);
        let step = steps.of_param(p);
        let Some((op, bound)) = upper_fact(&shape, p, next, step) else {
            continue;
        };
        if !defined_before(f, dt, bound, h) || !holds(f, facts, op, init, bound) {
            continue;
        }
        out.push(fact(op, p, bound));
        if let Some(lower) = step.and_then(|s| monotonic(f, s, op, bound)) {
            // A constant start helps the interval reasoning even when it reaches `h`
            // through a parameter that only ever receives it.
            let start = match forwarded(f, cfg, init) {
                c if f.as_iconst(c).is_some() => c,
                _ => init,
            };
            out.push(fact(lower, p, start));
        }
    }
    facts.truncate(before);
    out
}

/// The value `v` always equals: itself, or, for a block parameter to which every
/// predecessor passes the same value `w` (as loop rotation leaves behind), what `w`
/// equals, computed in the same pass through the block.
fn forwarded(f: &Function, cfg: &ControlFlowGraph, mut v: Value) -> Value {
    for _ in 0..8 {
        let ValueDef::Param(b, k) = f.value_def(v) else {
            break;
        };
        let mut incoming = None;
        for &pred in cfg.preds(b) {
            let Some(term) = f.terminator(pred) else {
                return v;
            };
            for t in f.kind(term).targets() {
                if t.block != b {
                    continue;
                }
                let w = t.args[k as usize];
                if incoming.is_some_and(|x| x != w) || w == v {
                    return v;
                }
                incoming = Some(w);
            }
        }
        match incoming {
            Some(w) => v = w,
            None => break,
        }
    }
    v
}

/// A true comparison fact `op(a, b)`.
fn fact(op: CmpOp, a: Value, b: Value) -> Fact {
    Fact {
        cond: None,
        cmp: Some((op, a, b)),
        truth: true,
    }
}

/// The loop around a header, as the module documentation describes it.
struct Shape {
    entry: Block,
    /// The arguments of the entry edge and of the latch's back edge.
    init: Vec<Value>,
    next: Vec<Value>,
    /// The latch's test, normalised to `a op b` holding when it goes back to `h`.
    test: (CmpOp, Value, Value),
}

impl Shape {
    fn of(f: &Function, cfg: &ControlFlowGraph, dt: &DominatorTree, h: Block) -> Option<Self> {
        let [p0, p1] = cfg.preds(h) else {
            return None;
        };
        let (entry, latch) = match (dt.dominates(h, *p0), dt.dominates(h, *p1)) {
            (false, true) => (*p0, *p1),
            (true, false) => (*p1, *p0),
            _ => return None,
        };
        let entry_targets = f.kind(f.terminator(entry)?).targets();
        let [into_h] = entry_targets
            .iter()
            .filter(|t| t.block == h)
            .collect::<Vec<_>>()[..]
        else {
            return None;
        };
        let InstKind::Br {
            cond,
            then_dest,
            else_dest,
        } = f.kind(f.terminator(latch)?)
        else {
            return None;
        };
        let (back, stays_on_true) = match (then_dest.block == h, else_dest.block == h) {
            (true, false) => (then_dest, true),
            (false, true) => (else_dest, false),
            _ => return None,
        };
        let InstKind::Cmp { op, args: [a, b] } = *f.kind(f.def_inst(*cond)?) else {
            return None;
        };
        let op = if stays_on_true { op } else { op.inverse()? };
        Some(Shape {
            entry,
            init: into_h.args.to_vec(),
            next: back.args.to_vec(),
            test: (op, a, b),
        })
    }
}

/// The comparison `(op, bound)` that every value parameter `p` (stepping by `step`)
/// receives from the latch satisfies, when the latch tests `next` (what it passes
/// to `p`) or `p`.
fn upper_fact(shape: &Shape, p: Value, next: Value, step: Option<i32>) -> Option<(CmpOp, Value)> {
    let (op, a, b) = shape.test;
    op.inverse()?; // integer comparisons only
                   // `x op bound` with `x` the tested operand.
    let (op, x, bound) = if a == next || a == p {
        (op, a, b)
    } else if b == next || b == p {
        (op.swapped(), b, a)
    } else {
        return None;
    };
    if x == next {
        return Some((op, bound));
    }
    // The latch tests `p`, which steps by ±1.
    match (step?, op) {
        (1, CmpOp::Slt) => Some((CmpOp::Sle, bound)),
        (-1, CmpOp::Sgt) => Some((CmpOp::Sge, bound)),
        _ => None,
    }
}

/// The comparison `p lower init` when `p` only grows (or only shrinks): it steps
/// by `s` and the upper fact `p op bound` leaves no room for `p + s` to wrap around.
fn monotonic(f: &Function, s: i32, op: CmpOp, bound: Value) -> Option<CmpOp> {
    let s = i64::from(s);
    let bound = f.as_iconst(bound).map(i64::from);
    let (min, max) = (i64::from(i32::MIN), i64::from(i32::MAX));
    match op {
        CmpOp::Slt | CmpOp::Sle if s > 0 => {
            let limit = bound.unwrap_or(max);
            let top = if op == CmpOp::Slt { limit - 1 } else { limit };
            (top + s <= max).then_some(CmpOp::Sge)
        }
        CmpOp::Sgt | CmpOp::Sge if s < 0 => {
            let limit = bound.unwrap_or(min);
            let bottom = if op == CmpOp::Sgt { limit + 1 } else { limit };
            (bottom + s >= min).then_some(CmpOp::Sle)
        }
        _ => None,
    }
}

/// Whether `v` is a constant or defined in a block that strictly dominates `h`.
fn defined_before(f: &Function, dt: &DominatorTree, v: Value, h: Block) -> bool {
    f.value_block(v)
        .is_none_or(|b| b != h && dt.dominates(b, h))
}

/// Whether `op(a, b)` is known to hold: both constants, or decided by `facts`.
fn holds(f: &Function, facts: &FactStack, op: CmpOp, a: Value, b: Value) -> bool {
    if let (Some(x), Some(y)) = (Const::of(f, a), Const::of(f, b)) {
        return fold_cmp(op, x, y) == Some(Const::I(1));
    }
    known(f, facts, None, Some((op, a, b))) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::Steps;
    use crate::analysis::scev::ScalarEvolution;
    use crate::analysis::LoopForest;
    use ir::analysis::{ControlFlowGraph, DominatorTree};

    #[test]
    fn steps_are_found_for_the_parameters_a_latch_tests() {
        // i counts by 3 and is tested after its step; j counts by 2, k by -1 and
        // neither is tested; the inner loop's header forwards its outer value and
        // tests its own counter as a parameter: only the tested ones are asked.
        let m = ir::parse_module(
            r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0, 0, 100)
bb1(%1: i32, %2: i32, %3: i32):
  jump bb2(0)
bb2(%4: i32):
  %5 = add %4, 1
  %6 = slt %4, %1
  br %6, bb2(%5), bb3
bb3:
  %7 = add %1, 3
  %8 = add %2, 2
  %9 = sub %3, 1
  %10 = slt %7, %0
  br %10, bb1(%7, %8, %9), bb4
bb4:
  ret %8
}
"#,
        )
        .unwrap();
        let f = m.funcs.values().next().unwrap();
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let loops = LoopForest::compute(f, &cfg, &dt);
        let steps = Steps::of(&mut ScalarEvolution::new(f, &cfg, &dt, &loops));
        let header = |k: usize| f.layout.blocks().nth(k).unwrap();
        let [i, j, k] = f.block_params(header(1))[..] else {
            panic!("three parameters")
        };
        let inner = f.block_params(header(2))[0];
        assert_eq!(steps.of_param(i), Some(3));
        assert_eq!(steps.of_param(inner), Some(1));
        assert_eq!(steps.of_param(j), None);
        assert_eq!(steps.of_param(k), None);
    }
}
