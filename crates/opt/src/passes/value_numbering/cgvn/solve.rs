//! The iterative abstract execution that computes complete value numbers: procedures
//! `GVN`, `AbstractExec` and `Intersect` of Nie, Cheng and Wang, "An Efficient Complete
//! Global Value Numbering Algorithm" (Acta Electronica Sinica 38(2), 2010, Figure 2).
//!
//! Every variable `x` has a partial value number `v1[x]`, starting at ⊤ (no path seen).
//! Work items are pairs ⟨n, i⟩ of a program node and one of its incoming edges, taken
//! in depth-first order of the node, then edge number (the order Δ), so ancestors in
//! the depth-first tree come first and a join's tree edge (number 0 here, 1 in the
//! paper) before its other edges. Executing ⟨n, i⟩ evaluates `n` over value numbers:
//! an operator node builds `o(v1[y], v1[z])` in the shared [`Dag`]; a node with global
//! effects (a load, an impure call, an allocation, a function parameter) yields its
//! own leader; a join's parameters *intersect* what they had on the paths seen so far
//! with what edge `i` brings. A changed variable queues its users: through tree edges
//! into the current round (`W1`), through other edges into the next round (`W2`).
//! Rounds repeat, each starting from a snapshot `v2` of `v1` (kept as an undo list, not
//! a copy), until no other edge has work.
//!
//! `Intersect(tl, tr)` finds the least expression equal to `tl` on the left paths and to
//! `tr` on the right paths: a leader on one side that has the other side's number; the
//! same operator over pairwise intersections; or else a parameter of the join that is
//! `tl` on the left and receives `tr` along edge `i` (the set `A`), the least by
//! parameter order; `BOT` if none.
//!
//! Two details the figure leaves implicit, made explicit here:
//! - a join's parameters are one parallel assignment, so all of them are intersected
//!   with the values from *before* the node is executed, then assigned together;
//! - on the right, a leader that is a parameter of the join itself means the value it
//!   had *before* the edge was taken, not after: its right-hand number after the edge
//!   is the number of its argument on that edge. So the test "`v_r[x] = t_r`" uses the
//!   argument's number for such an `x`, and a right leader that is a parameter of the
//!   join is never returned as it stands (only through the set `A`).
//!
//! The computation is bounded for huge functions: a depth and step limit on each
//! `Intersect` (beyond them it answers `BOT`, which only loses equalities), and limits
//! on rounds, executed items and DAG size (beyond them the iteration stops early).
//! Whatever the iteration produced is checked and repaired afterwards
//! ([`super::validate`]), so stopping early is safe.

use super::dag::{Dag, Node, NodeId, BOT, TOP};
use super::graph::Graph;
use crate::analysis::Purity;
use crate::fold::Const;
use crate::passes::value_numbering::gvn::expr::{pure_op, Opcode};
use ir::{Block, Function, Inst, SecondaryMap, Value, ValueDef};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Recursion depth of one `Intersect` beyond which it gives up (answers `BOT`).
const MAX_DEPTH: u32 = 48;
/// `Intersect` calls per executed join beyond which it stops recursing.
const MAX_MEET_STEPS: u32 = 20_000;
/// Rounds of the outer loop.
const MAX_ROUNDS: u32 = 64;

/// What the iteration computed.
pub(crate) struct Solution {
    /// The value number of every value of reachable code (and of constants used there).
    pub vn: SecondaryMap<Value, NodeId>,
    /// Rounds of the outer loop.
    pub rounds: u32,
    /// Whether the iteration reached its fixed point within the limits.
    pub complete: bool,
}

/// How a program node is executed.
enum Exec {
    /// An operator over operands, defining the result.
    Op(Opcode, Box<[Value]>, Value),
    /// A node with global effects defining a leader.
    Opaque(Value),
    /// The parameters of a non-entry block.
    Params(Block),
}

struct Solver<'a> {
    f: &'a Function,
    g: &'a Graph,
    dag: &'a mut Dag,
    /// Program nodes in depth-first order.
    nodes: Vec<Exec>,
    /// Node index + 1 of each instruction node and parameter node (0: none).
    inst_node: SecondaryMap<Inst, u32>,
    param_node: SecondaryMap<Block, u32>,
    /// First work-item slot of each node (one slot per incoming edge).
    slot: Vec<u32>,
    in_w1: Vec<bool>,
    in_w2: Vec<bool>,
    w1: BinaryHeap<Reverse<(u32, u32)>>,
    w2: Vec<(u32, u32)>,
    v1: SecondaryMap<Value, NodeId>,
    /// `v2` as an undo list: the value at the start of round `.0`, if changed since.
    saved: SecondaryMap<Value, (u32, NodeId)>,
    round: u32,
}

/// Runs the iteration over `f`, building value numbers in `dag`.
pub(crate) fn solve(f: &Function, g: &Graph, purity: &Purity, dag: &mut Dag) -> Solution {
    let mut s = Solver {
        f,
        g,
        dag,
        nodes: Vec::new(),
        inst_node: f.inst_map(),
        param_node: f.block_map(),
        slot: Vec::new(),
        in_w1: Vec::new(),
        in_w2: Vec::new(),
        w1: BinaryHeap::new(),
        w2: Vec::new(),
        v1: f.value_map(),
        saved: f.value_map(),
        round: 1,
    };
    s.build_nodes(purity);
    let num_values = f.num_values();
    let max_execs = 64 * s.nodes.len() + 10_000;
    let max_dag = 32 * num_values + 10_000;
    // Round 1 executes every node along its tree edge (the paper seeds only nodes with
    // global effects and lets changes spread; seeding all is the same, since executing
    // a node whose operands are still ⊤ changes nothing, and it also covers operators
    // over constants, which the paper's start node defines). Other edges go to round 2.
    for n in 0..s.nodes.len() as u32 {
        s.push(n, 0);
        if let Exec::Params(b) = s.nodes[n as usize] {
            for e in 1..g.edges[b].len() as u32 {
                s.push(n, e);
            }
        }
    }
    let mut execs = 0usize;
    let mut complete = false;
    'rounds: loop {
        while let Some(Reverse((n, e))) = s.w1.pop() {
            s.in_w1[(s.slot[n as usize] + e) as usize] = false;
            s.exec(n, e);
            execs += 1;
            if execs > max_execs || s.dag.len() > max_dag {
                break 'rounds;
            }
        }
        if s.w2.is_empty() {
            complete = true;
            break;
        }
        if s.round >= MAX_ROUNDS {
            break;
        }
        s.round += 1;
        for (n, e) in std::mem::take(&mut s.w2) {
            let slot = (s.slot[n as usize] + e) as usize;
            s.in_w2[slot] = false;
            if !s.in_w1[slot] {
                s.in_w1[slot] = true;
                s.w1.push(Reverse((n, e)));
            }
        }
    }
    Solution {
        vn: s.v1,
        rounds: s.round,
        complete,
    }
}

impl Solver<'_> {
    /// Numbers the program nodes in depth-first order and gives constants, global
    /// addresses and function parameters their fixed value numbers.
    fn build_nodes(&mut self, purity: &Purity) {
        let f = self.f;
        let entry = f.entry_block();
        for &p in f.block_params(entry) {
            self.v1[p] = self.dag.leaf(p);
        }
        let mut next_slot = 0u32;
        for &b in &self.g.preorder {
            if b != entry && !f.block_params(b).is_empty() {
                self.nodes.push(Exec::Params(b));
                self.param_node[b] = self.nodes.len() as u32;
                self.slot.push(next_slot);
                next_slot += self.g.edges[b].len().max(1) as u32;
            }
            for i in f.layout.block_insts(b) {
                f.kind(i).for_each_arg(|a| self.init_constant(a));
                let Some(r) = f.inst_result(i) else { continue };
                let exec = match pure_op(f, i, purity) {
                    Some((op, args)) => Exec::Op(op, args.into_boxed_slice(), r),
                    None => Exec::Opaque(r),
                };
                self.nodes.push(exec);
                self.inst_node[i] = self.nodes.len() as u32;
                self.slot.push(next_slot);
                next_slot += 1;
            }
        }
        self.in_w1 = vec![false; next_slot as usize];
        self.in_w2 = vec![false; next_slot as usize];
    }

    fn init_constant(&mut self, a: Value) {
        let n = match self.f.value_def(a) {
            ValueDef::IConst(c) => self.dag.konst(Const::I(c)),
            ValueDef::FConst(bits) => self.dag.konst(Const::F(bits)),
            ValueDef::Global(_) => self.dag.leaf(a),
            _ => return,
        };
        self.v1[a] = n;
    }

    /// Queues ⟨node, edge⟩: into this round for a tree edge, the next for others.
    fn push(&mut self, n: u32, e: u32) {
        let slot = (self.slot[n as usize] + e) as usize;
        if e == 0 {
            if !self.in_w1[slot] {
                self.in_w1[slot] = true;
                self.w1.push(Reverse((n, e)));
            }
        } else if !self.in_w2[slot] {
            self.in_w2[slot] = true;
            self.w2.push((n, e));
        }
    }

    /// Sets `v1[x]`, queueing the nodes that use `x` if it changed.
    fn set(&mut self, x: Value, n: NodeId) {
        let cur = self.v1[x];
        if cur == n {
            return;
        }
        if self.saved[x].0 != self.round {
            self.saved[x] = (self.round, cur);
        }
        self.v1[x] = n;
        let f = self.f;
        for &u in f.users(x) {
            let Some(ub) = f.layout.inst_block(u) else {
                continue;
            };
            if !self.g.reachable[ub] {
                continue;
            }
            let kind = f.kind(u);
            if kind.is_terminator() {
                for (k, t) in kind.targets().iter().enumerate() {
                    if !t.args.contains(&x) {
                        continue;
                    }
                    if let Some((target, e)) = self.g.out[ub][k] {
                        let pn = self.param_node[target];
                        if pn != 0 {
                            self.push(pn - 1, e);
                        }
                    }
                }
            } else {
                let n = self.inst_node[u];
                if n != 0 && matches!(self.nodes[n as usize - 1], Exec::Op(..)) {
                    self.push(n - 1, 0);
                }
            }
        }
    }

    /// `AbstractExec(n, e)`.
    fn exec(&mut self, n: u32, e: u32) {
        match &self.nodes[n as usize] {
            Exec::Op(op, args, x) => {
                let (op, x) = (*op, *x);
                let ns: Vec<NodeId> = args.iter().map(|&a| self.v1[a]).collect();
                let v = self.dag.op(op, &ns);
                self.set(x, v);
            }
            Exec::Opaque(x) => {
                let x = *x;
                let l = self.dag.leaf(x);
                self.set(x, l);
            }
            Exec::Params(b) => {
                let b = *b;
                if self.g.is_join(b) {
                    self.exec_join(b, e);
                } else {
                    self.exec_copies(b);
                }
            }
        }
    }
}

impl Solver<'_> {
    /// A block with one incoming edge: its parameters are copies of the arguments.
    fn exec_copies(&mut self, b: Block) {
        let f = self.f;
        let Some(edge) = self.g.edges[b].first().copied() else {
            return;
        };
        let args = &f.kind(edge.term).targets()[edge.arm as usize].args;
        for (&p, &a) in f.block_params(b).iter().zip(args.iter()) {
            let n = self.v1[a];
            self.set(p, n);
        }
    }

    /// A join reached along edge `e`: every parameter becomes the intersection of its
    /// number on the paths seen so far (left) and its argument's number on edge `e`
    /// (right); on the tree edge the left is the previous round's and the right this
    /// round's, on other edges the other way round.
    fn exec_join(&mut self, b: Block, e: u32) {
        let f = self.f;
        let edge = self.g.edges[b][e as usize];
        let args = &f.kind(edge.term).targets()[edge.arm as usize].args;
        let params = f.block_params(b);
        let mut meet = Meet {
            f,
            block: b,
            params,
            args,
            left_old: e == 0,
            v1: &self.v1,
            saved: &self.saved,
            round: self.round,
            set_a: FxHashMap::default(),
            memo: FxHashMap::default(),
            steps: 0,
        };
        for (j, (&p, &a)) in params.iter().zip(args.iter()).enumerate() {
            let key = (meet.left(p), meet.right(a));
            meet.set_a.entry(key).or_insert(j as u32);
        }
        let mut new = Vec::with_capacity(params.len());
        for (&p, &a) in params.iter().zip(args.iter()) {
            let (tl, tr) = (meet.left(p), meet.right(a));
            let mut r = meet.intersect(self.dag, tl, tr, 0);
            if r == BOT {
                r = self.dag.leaf(p);
            }
            new.push(r);
        }
        for (&p, n) in params.iter().zip(new) {
            self.set(p, n);
        }
    }
}

/// One execution of a join along one edge: the two sides' numbers and the memo of
/// `Intersect`.
struct Meet<'a> {
    f: &'a Function,
    block: Block,
    params: &'a [Value],
    args: &'a [Value],
    /// On the tree edge the left side is `v2` and the right `v1`; otherwise reversed.
    left_old: bool,
    v1: &'a SecondaryMap<Value, NodeId>,
    saved: &'a SecondaryMap<Value, (u32, NodeId)>,
    round: u32,
    /// The set `A`: (left number of a parameter, right number of its argument) to the
    /// first such parameter.
    set_a: FxHashMap<(NodeId, NodeId), u32>,
    memo: FxHashMap<(NodeId, NodeId), NodeId>,
    steps: u32,
}

impl Meet<'_> {
    fn old(&self, x: Value) -> NodeId {
        let (r, n) = self.saved[x];
        if r == self.round {
            n
        } else {
            self.v1[x]
        }
    }

    /// `v_l[x]`.
    fn left(&self, x: Value) -> NodeId {
        if self.left_old {
            self.old(x)
        } else {
            self.v1[x]
        }
    }

    /// `v_r[x]`.
    fn right(&self, x: Value) -> NodeId {
        if self.left_old {
            self.v1[x]
        } else {
            self.old(x)
        }
    }

    /// The index of `x` among the join's parameters.
    fn param_index(&self, x: Value) -> Option<usize> {
        match self.f.value_def(x) {
            ValueDef::Param(b, j) if b == self.block => Some(j as usize),
            _ => None,
        }
    }

    /// The right-hand number of variable `x` once the edge has been taken.
    fn right_after(&self, x: Value) -> NodeId {
        match self.param_index(x) {
            Some(j) => self.right(self.args[j]),
            None => self.right(x),
        }
    }

    /// `Intersect(tl, tr)`.
    fn intersect(&mut self, dag: &mut Dag, tl: NodeId, tr: NodeId, depth: u32) -> NodeId {
        if tl == TOP {
            return tr;
        }
        if tr == TOP {
            return tl;
        }
        if let Some(&r) = self.memo.get(&(tl, tr)) {
            return r;
        }
        self.steps += 1;
        let r = self.intersect_uncached(dag, tl, tr, depth);
        self.memo.insert((tl, tr), r);
        r
    }

    fn intersect_uncached(&mut self, dag: &mut Dag, tl: NodeId, tr: NodeId, depth: u32) -> NodeId {
        // A leader on the left that has the right-hand number on the right.
        match dag.node(tl) {
            Node::Leaf(x) if self.right_after(*x) == tr => return tl,
            Node::Const(_) if tl == tr => return tl,
            _ => {}
        }
        // A leader on the right (not one the edge reassigns) with the left number.
        if let Node::Leaf(x) = dag.node(tr) {
            if self.param_index(*x).is_none() && self.left(*x) == tl {
                return tr;
            }
        }
        // The same operator on both sides: intersect the operands.
        if depth < MAX_DEPTH && self.steps < MAX_MEET_STEPS {
            if let (Node::Op(o1, a1), Node::Op(o2, a2)) = (dag.node(tl), dag.node(tr)) {
                if o1 == o2 && a1.as_slice().len() == a2.as_slice().len() {
                    let (op, a1, a2) = (*o1, a1.clone(), a2.clone());
                    if let Some(r) =
                        self.intersect_args(dag, op, a1.as_slice(), a2.as_slice(), depth)
                    {
                        return r;
                    }
                    if let (true, &[x, y]) = (op.is_commutative(), a2.as_slice()) {
                        if let Some(r) = self.intersect_args(dag, op, a1.as_slice(), &[y, x], depth)
                        {
                            return r;
                        }
                    }
                }
            }
        }
        // A parameter of the join that is `tl` on the left and receives `tr`.
        match self.set_a.get(&(tl, tr)) {
            Some(&j) => dag.leaf(self.params[j as usize]),
            None => BOT,
        }
    }

    fn intersect_args(
        &mut self,
        dag: &mut Dag,
        op: Opcode,
        a1: &[NodeId],
        a2: &[NodeId],
        depth: u32,
    ) -> Option<NodeId> {
        let mut kids = Vec::with_capacity(a1.len());
        for (&l, &r) in a1.iter().zip(a2) {
            let k = self.intersect(dag, l, r, depth + 1);
            if k == BOT {
                return None;
            }
            kids.push(k);
        }
        Some(dag.op(op, &kids))
    }
}

#[cfg(test)]
mod tests {
    //! The worked examples of the paper's section 4 (Figure 1 (a), (b), (c)): the
    //! final value numbers and the number of rounds it reports.
    use super::*;
    use ir::EntityRef;

    /// Solves the only function of `src`; names values `%N` as the printer does,
    /// or by `names` (index → name).
    fn solved(src: &str, names: &[(usize, &str)]) -> (Vec<String>, u32) {
        let m = ir::parse_module(src).unwrap();
        let purity = Purity::compute(&m);
        let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
        let g = Graph::compute(f);
        let mut dag = Dag::new();
        let sol = solve(f, &g, &purity, &mut dag);
        let name = |v: Value| {
            names
                .iter()
                .find(|(i, _)| *i == v.index())
                .map_or(format!("%{}", v.index()), |(_, n)| n.to_string())
        };
        let shown = names
            .iter()
            .map(|&(i, n)| format!("{n}: {}", dag.render(sol.vn[Value::new(i)], &name)))
            .collect();
        (shown, sol.rounds)
    }

    #[test]
    fn figure_1a() {
        let (vn, rounds) = solved(
            r#"
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
"#,
            &[
                (0, "a"),
                (1, "b"),
                (3, "x0"),
                (4, "x1"),
                (5, "c"),
                (6, "x2"),
                (7, "y0"),
            ],
        );
        assert_eq!(
            vn,
            [
                "a: a",
                "b: b",
                "x0: (a + 1)",
                "x1: (b + 1)",
                "c: c",
                "x2: (c + 1)",
                "y0: (c + 1)"
            ]
        );
        assert_eq!(rounds, 2);
    }

    #[test]
    fn figure_1b() {
        // The paper: after round 1, x2: x0, y2: x0 + 1; after round 2, x2: x2,
        // y2: x2 + 1, x1: x2 + 1, y1: (x2 + 1) + 1. The text says nothing is left to
        // do then, but x1 and y1 changed in round 2 and reach the join along the back
        // edge, so Figure 2 queues ⟨n3, 2⟩ once more: a third round confirms the
        // numbers (as the paper's third round does for (c)).
        let (vn, rounds) = solved(
            r#"
func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = add %0, 1
  jump bb1(%0, %2)
bb1(%3: i32, %4: i32):
  %5 = add %3, 1
  %6 = add %4, 1
  %7 = slt %5, %1
  br %7, bb1(%5, %6), bb2
bb2:
  ret %6
}
"#,
            &[
                (0, "x0"),
                (2, "y0"),
                (3, "x2"),
                (4, "y2"),
                (5, "x1"),
                (6, "y1"),
            ],
        );
        assert_eq!(
            vn,
            [
                "x0: x0",
                "y0: (x0 + 1)",
                "x2: x2",
                "y2: (x2 + 1)",
                "x1: (x2 + 1)",
                "y1: ((x2 + 1) + 1)"
            ]
        );
        assert_eq!(rounds, 3);
    }

    #[test]
    fn figure_1c() {
        // The paper: round 2 gives a1: a1, b1: b1, x1: a1 + 1, y1: b1 + 1,
        // z0: a1 + 1; round 3 changes nothing.
        let (vn, rounds) = solved(
            r#"
func @f(i32, i32, i32) -> i32 {
bb0(%0: i32, %1: i32, %2: i32):
  %3 = add %0, 1
  %4 = add %1, 1
  jump bb1(%1, %0, %4, %3, 0)
bb1(%5: i32, %6: i32, %7: i32, %8: i32, %9: i32):
  %10 = add %5, 1
  %11 = add %9, 1
  %12 = slt %11, %2
  br %12, bb1(%6, %5, %8, %7, %11), bb2
bb2:
  ret %10
}
"#,
            &[
                (0, "a0"),
                (1, "b0"),
                (5, "a1"),
                (6, "b1"),
                (7, "x1"),
                (8, "y1"),
                (10, "z0"),
            ],
        );
        assert_eq!(
            vn,
            [
                "a0: a0",
                "b0: b0",
                "a1: a1",
                "b1: b1",
                "x1: (a1 + 1)",
                "y1: (b1 + 1)",
                "z0: (a1 + 1)"
            ]
        );
        assert_eq!(rounds, 3);
    }
}
