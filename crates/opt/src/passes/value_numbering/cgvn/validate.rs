//! Checking (and repairing) value numbers before anything is rewritten with them, so
//! that a transformation never rests on an equality that does not hold, whatever the
//! iteration computed (it may also have been stopped early by a limit).
//!
//! Read a value number as an expression over the *current* values of its leaders. The
//! numbering is sound — at any point a value's definition dominates, evaluating its
//! number cannot fail and gives the value — when these local conditions hold (an
//! induction over executions, using that a leader defined in a block dominating a
//! definition keeps its value throughout that definition's dominance region):
//!
//! 1. a leader's own number is itself: loads, impure calls, allocations and function
//!    parameters;
//! 2. an operator's number is the operator over its operands' numbers (built by
//!    [`Dag::op`]), and a copy's (a parameter of a block with one incoming edge) is
//!    its argument's;
//! 3. for a parameter `x` of a join: every leader in its number is a constant, a
//!    parameter of the join, or defined in a block strictly dominating the join; and
//!    along every incoming edge, substituting each parameter leader by the number of
//!    its argument on that edge gives exactly the number of `x`'s own argument. (A
//!    parameter numbered by itself satisfies this trivially.)
//!
//! For 3, the join's other leaders have the same values before and after the edge,
//! so `x`'s number evaluated after the edge is the substituted expression evaluated
//! before it, which is the argument's number, which is the argument: the value `x`
//! receives. The substitution is built with [`Dag::op_strict`], which never simplifies
//! away a sub-expression that could trap (`(c / d) * e` with `e` becoming 0 stays a
//! product), so the substituted expression fails to evaluate exactly when the
//! argument's number does: never. Hence a join parameter's number is safe to evaluate
//! where the parameter is defined, and an instruction equal to it may be replaced by
//! the parameter or by an instruction computing the number.
//!
//! [`reconcile`] recomputes 1 and 2 from the join parameters' numbers in reverse
//! post-order, checks 3, and *demotes* every join parameter that fails to a leader of
//! its own; demotion can change other numbers, so it repeats (a few times, then demotes
//! every join parameter, which always satisfies the conditions). A correct fixed point
//! of the iteration passes unchanged; the number of demotions is reported.

use super::dag::{Dag, Node, NodeId, TOP};
use super::graph::Graph;
use crate::analysis::Purity;
use crate::fold::Const;
use crate::passes::value_numbering::gvn::expr::pure_op;
use ir::analysis::DominatorTree;
use ir::{Block, Function, SecondaryMap, Value, ValueDef};
use rustc_hash::FxHashMap;

/// Check-and-demote rounds before every join parameter is demoted.
const MAX_REPAIRS: usize = 6;

/// The number of constant or global value `v`, or its entry in `vn`.
pub(crate) fn value_node(
    dag: &mut Dag,
    f: &Function,
    vn: &SecondaryMap<Value, NodeId>,
    v: Value,
) -> NodeId {
    match f.value_def(v) {
        ValueDef::IConst(c) => dag.konst(Const::I(c)),
        ValueDef::FConst(bits) => dag.konst(Const::F(bits)),
        ValueDef::Global(_) => dag.leaf(v),
        _ => vn[v],
    }
}

/// Makes `vn` satisfy the conditions of the module documentation; returns how many
/// join parameters were demoted.
pub(crate) fn reconcile(
    f: &Function,
    g: &Graph,
    dt: &DominatorTree,
    purity: &Purity,
    dag: &mut Dag,
    vn: &mut SecondaryMap<Value, NodeId>,
) -> usize {
    let joins: Vec<Block> = g
        .preorder
        .iter()
        .copied()
        .filter(|&b| g.is_join(b) && !f.block_params(b).is_empty())
        .collect();
    let mut budget = 8 * f.num_values() + 200_000;
    let mut demoted = 0;
    for attempt in 0..=MAX_REPAIRS {
        recompute(f, g, dt, purity, dag, vn);
        let mut failed = Vec::new();
        for &b in &joins {
            check_join(f, g, dt, dag, vn, b, &mut budget, &mut failed);
        }
        if failed.is_empty() {
            return demoted;
        }
        if attempt == MAX_REPAIRS {
            break;
        }
        demoted += failed.len();
        for p in failed {
            vn[p] = dag.leaf(p);
        }
    }
    for &b in &joins {
        for &p in f.block_params(b) {
            let l = dag.leaf(p);
            if vn[p] != l {
                vn[p] = l;
                demoted += 1;
            }
        }
    }
    recompute(f, g, dt, purity, dag, vn);
    demoted
}

/// Conditions 1 and 2: every number but a join parameter's, in reverse post-order.
fn recompute(
    f: &Function,
    g: &Graph,
    dt: &DominatorTree,
    purity: &Purity,
    dag: &mut Dag,
    vn: &mut SecondaryMap<Value, NodeId>,
) {
    let entry = f.entry_block();
    for &b in dt.rpo() {
        let params = f.block_params(b);
        if b == entry {
            for &p in params {
                vn[p] = dag.leaf(p);
            }
        } else if !g.is_join(b) {
            if let Some(edge) = g.edges[b].first() {
                let args = &f.kind(edge.term).targets()[edge.arm as usize].args;
                for (&p, &a) in params.iter().zip(args.iter()) {
                    vn[p] = value_node(dag, f, vn, a);
                }
            }
        } else {
            for &p in params {
                if vn[p] == TOP {
                    vn[p] = dag.leaf(p);
                }
            }
        }
        for i in f.layout.block_insts(b) {
            let Some(r) = f.inst_result(i) else { continue };
            vn[r] = match pure_op(f, i, purity) {
                Some((op, args)) => {
                    let ns: Vec<NodeId> = args.iter().map(|&a| value_node(dag, f, vn, a)).collect();
                    dag.op(op, &ns)
                }
                None => dag.leaf(r),
            };
        }
    }
}

/// Condition 3 for the parameters of join `b`; failing ones are added to `failed`.
#[allow(clippy::too_many_arguments)]
fn check_join(
    f: &Function,
    g: &Graph,
    dt: &DominatorTree,
    dag: &mut Dag,
    vn: &SecondaryMap<Value, NodeId>,
    b: Block,
    budget: &mut usize,
    failed: &mut Vec<Value>,
) {
    let params = f.block_params(b);
    let mut todo: Vec<usize> = (0..params.len())
        .filter(|&j| !matches!(dag.node(vn[params[j]]), Node::Leaf(x) if *x == params[j]))
        .collect();
    if todo.is_empty() {
        return;
    }
    // Leaders must be available at the join.
    let mut ok_memo: FxHashMap<NodeId, bool> = FxHashMap::default();
    todo.retain(|&j| {
        let good = leaders_available(f, dt, dag, b, vn[params[j]], &mut ok_memo, budget);
        if !good {
            failed.push(params[j]);
        }
        good
    });
    for edge in &g.edges[b] {
        if todo.is_empty() {
            return;
        }
        let args = &f.kind(edge.term).targets()[edge.arm as usize].args;
        let arg_nodes: Vec<NodeId> = args.iter().map(|&a| value_node(dag, f, vn, a)).collect();
        let mut memo: FxHashMap<NodeId, NodeId> = FxHashMap::default();
        todo.retain(|&j| {
            let s = substitute(f, dag, b, &arg_nodes, vn[params[j]], &mut memo, budget);
            let good = s == Some(arg_nodes[j]);
            if !good {
                failed.push(params[j]);
            }
            good
        });
    }
}

/// Whether every leader of `root` is a constant, a parameter of `b` or defined in a
/// block strictly dominating `b` (false when the budget runs out).
pub(crate) fn leaders_available(
    f: &Function,
    dt: &DominatorTree,
    dag: &Dag,
    b: Block,
    root: NodeId,
    memo: &mut FxHashMap<NodeId, bool>,
    budget: &mut usize,
) -> bool {
    let mut stack = vec![(root, false)];
    while let Some((n, expanded)) = stack.pop() {
        if memo.contains_key(&n) {
            continue;
        }
        let ok = match dag.node(n) {
            Node::Op(_, args) if !expanded => {
                if *budget == 0 {
                    return false;
                }
                *budget -= 1;
                stack.push((n, true));
                for &a in args.as_slice() {
                    if !memo.contains_key(&a) {
                        stack.push((a, false));
                    }
                }
                continue;
            }
            Node::Op(_, args) => args.as_slice().iter().all(|a| memo[a]),
            Node::Top | Node::Bot => false,
            Node::Const(_) => true,
            Node::Leaf(x) => match f.value_def(*x) {
                ValueDef::Param(pb, _) if pb == b => true,
                ValueDef::Global(_) => true,
                _ => f
                    .value_block(*x)
                    .is_some_and(|xb| dt.strictly_dominates(xb, b)),
            },
        };
        memo.insert(n, ok);
    }
    memo[&root]
}

/// `root` with every leader that is a parameter of `b` replaced by the number of its
/// argument (`args`); `None` when the budget runs out.
pub(crate) fn substitute(
    f: &Function,
    dag: &mut Dag,
    b: Block,
    args: &[NodeId],
    root: NodeId,
    memo: &mut FxHashMap<NodeId, NodeId>,
    budget: &mut usize,
) -> Option<NodeId> {
    let mut stack = vec![(root, false)];
    while let Some((n, expanded)) = stack.pop() {
        if memo.contains_key(&n) {
            continue;
        }
        match dag.node(n).clone() {
            Node::Op(_, kids) if !expanded => {
                if *budget == 0 {
                    return None;
                }
                *budget -= 1;
                stack.push((n, true));
                for &k in kids.as_slice() {
                    if !memo.contains_key(&k) {
                        stack.push((k, false));
                    }
                }
            }
            Node::Op(op, kids) => {
                let ks: Vec<NodeId> = kids.as_slice().iter().map(|k| memo[k]).collect();
                let r = dag.op_strict(op, &ks);
                memo.insert(n, r);
            }
            Node::Leaf(x) => {
                let r = match f.value_def(x) {
                    ValueDef::Param(pb, j) if pb == b => args[j as usize],
                    _ => n,
                };
                memo.insert(n, r);
            }
            _ => {
                memo.insert(n, n);
            }
        }
    }
    memo.get(&root).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::value_numbering::cgvn::solve::solve;
    use crate::passes::value_numbering::gvn::expr::Opcode;
    use ir::analysis::ControlFlowGraph;
    use ir::{BinOp, EntityRef, Module};

    /// Parses `src` and numbers its first defined function with the iteration.
    fn numbered(src: &str) -> (Module, Dag, SecondaryMap<Value, NodeId>) {
        let m = ir::parse_module(src).unwrap();
        let purity = Purity::compute(&m);
        let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
        let g = Graph::compute(f);
        let mut dag = Dag::new();
        let vn = solve(f, &g, &purity, &mut dag).vn;
        (m, dag, vn)
    }

    /// Runs [`reconcile`] on the first defined function of `m`.
    fn reconciled(m: &Module, dag: &mut Dag, vn: &mut SecondaryMap<Value, NodeId>) -> usize {
        let purity = Purity::compute(m);
        let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        reconcile(f, &Graph::compute(f), &dt, &purity, dag, vn)
    }

    const JOIN: &str = r#"
func @f(i32, i32, i32) -> i32 {
bb0(%0: i32, %1: i32, %2: i32):
  br %2, bb1, bb2
bb1:
  %3 = add %0, 1
  jump bb3(%0, %3)
bb2:
  %4 = add %1, 1
  jump bb3(%1, %4)
bb3(%5: i32, %6: i32):
  %7 = add %5, 1
  ret %7
}
"#;

    #[test]
    fn a_correct_numbering_passes_unchanged() {
        let (m, mut dag, mut vn) = numbered(JOIN);
        let before = vn.clone();
        assert_eq!(reconciled(&m, &mut dag, &mut vn), 0);
        let x2 = Value::new(6);
        assert_eq!(vn[x2], before[x2]);
        assert_eq!(vn[x2], vn[Value::new(7)], "x2 = c + 1");
    }

    #[test]
    fn a_wrong_number_is_demoted() {
        // Claim x2 = c + 2: the substitution gives a + 2 on the first edge, but the
        // argument there is a + 1.
        let (m, mut dag, mut vn) = numbered(JOIN);
        let (c, x2) = (Value::new(5), Value::new(6));
        let two = dag.konst(Const::I(2));
        vn[x2] = dag.op(Opcode::Bin(BinOp::Add), &[vn[c], two]);
        assert_eq!(reconciled(&m, &mut dag, &mut vn), 1);
        assert_eq!(vn[x2], dag.leaf(x2));
    }

    #[test]
    fn a_number_that_could_trap_where_the_value_does_not_is_demoted() {
        // p receives (a / b) * 7 on one edge and 0 on the other, where c = a, d = 0,
        // e = 0. The claim p = (c / d) * e holds in value on both edges if (a / 0) * 0
        // is simplified to 0, but evaluating it would divide by zero: rejected.
        let src = r#"
func @f(i32, i32, i32) -> i32 {
bb0(%0: i32, %1: i32, %2: i32):
  br %2, bb1, bb2
bb1:
  %3 = sdiv %0, %1
  %4 = mul %3, 7
  jump bb3(%0, %1, 7, %4)
bb2:
  jump bb3(%0, 0, 0, 0)
bb3(%5: i32, %6: i32, %7: i32, %8: i32):
  ret %8
}
"#;
        let (m, mut dag, mut vn) = numbered(src);
        let (c, d, e, p) = (Value::new(5), Value::new(6), Value::new(7), Value::new(8));
        let div = dag.op(Opcode::Bin(BinOp::SDiv), &[vn[c], vn[d]]);
        vn[p] = dag.op(Opcode::Bin(BinOp::Mul), &[div, vn[e]]);
        assert_eq!(reconciled(&m, &mut dag, &mut vn), 1);
        assert_eq!(vn[p], dag.leaf(p));
    }
}
