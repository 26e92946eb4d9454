//! Checking (and repairing) value numbers before anything is rewritten with them, so
//! that a transformation never rests on an equality that does not hold, whatever the
//! iteration computed (it may also have been stopped early by a limit).
//!
//! Read a value number as an expression over the *current* values of its leaders. The
//! numbering is sound — every value equals its number evaluated at any point its
//! definition dominates — when these local conditions hold (a simple induction over
//! executions, using that a leader dominating a definition keeps its value throughout
//! that definition's dominance region):
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
//! [`reconcile`] recomputes 1 and 2 from the join parameters' numbers in reverse
//! post-order, checks 3, and *demotes* every join parameter that fails to a leader of
//! its own; demotion can change other numbers, so it repeats (a few times, then demotes
//! every join parameter, which always satisfies the conditions). A correct fixed point
//! of the iteration passes unchanged; the number of demotions is reported.

use super::dag::{Dag, Node, NodeId, TOP};
use super::graph::Graph;
use crate::analysis::Purity;
use crate::fold::Const;
use crate::passes::gvn::expr::pure_op;
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
fn leaders_available(
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
fn substitute(
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
                let r = dag.op(op, &ks);
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
