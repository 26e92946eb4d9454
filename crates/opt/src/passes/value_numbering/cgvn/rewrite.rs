//! Using complete value numbers: every value whose number is already computed by an
//! available value is replaced by it, in a pre-order walk of the dominator tree with a
//! scoped table from value numbers to the first value (parameter or instruction) that
//! has them, as the hash-based GVN does with expressions. Since the numbers identify
//! block parameters with ordinary expressions, this removes what hash-based GVN cannot:
//! an instruction equal to an earlier join parameter, a parameter equal to a dominating
//! instruction, a parameter whose value is a constant on every path.
//!
//! - A value numbered by a constant becomes that constant; with the normalising DAG
//!   this is also how `x - y`, `x == y`, ... between equivalent values fold.
//! - A join parameter numbered by an operator whose operands all have available values
//!   is *rebuilt*: replaced by that operator computed at the top of its block, when
//!   that is cheap — the operator cannot trap, and the argument on each incoming edge
//!   is a constant, the parameter itself, or a pure instruction of the predecessor
//!   used only there (so the argument computations die and the block computes the
//!   value once instead). A loop's second induction variable `y = x + 1` becomes one
//!   addition this way.
//! - Parameters replaced are removed with their arguments, and pure, non-trapping
//!   instructions left without users are deleted.

use super::dag::{Dag, Node, NodeId, BOT, TOP};
use super::graph::Graph;
use crate::analysis::Purity;
use crate::fold::Const;
use crate::passes::value_numbering::gvn::expr::{constant_second, pure_op};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, Function, Inst, SecondaryMap, Value, ValueDef};
use rustc_hash::FxHashMap;

/// What the rewrite did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rewritten {
    pub insts: usize,
    pub params: usize,
    pub constants: usize,
    pub rebuilt: usize,
    pub dead: usize,
}

struct Walk<'a> {
    f: &'a mut Function,
    g: &'a Graph,
    purity: &'a Purity,
    dag: &'a mut Dag,
    vn: &'a mut SecondaryMap<Value, NodeId>,
    table: FxHashMap<NodeId, Value>,
    undo: Vec<NodeId>,
    out: Rewritten,
    /// Instructions whose operands lost a use (candidates for deletion).
    maybe_dead: Vec<Value>,
}

/// Rewrites `f` with the (validated) numbering `vn`.
pub(crate) fn rewrite(
    f: &mut Function,
    g: &Graph,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    purity: &Purity,
    dag: &mut Dag,
    vn: &mut SecondaryMap<Value, NodeId>,
) -> Rewritten {
    let entry = f.entry_block();
    let mut w = Walk {
        f,
        g,
        purity,
        dag,
        vn,
        table: FxHashMap::default(),
        undo: Vec::new(),
        out: Rewritten::default(),
        maybe_dead: Vec::new(),
    };
    enum Step {
        Enter(Block),
        Exit(usize),
    }
    let mut stack = vec![Step::Enter(entry)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Exit(mark) => {
                while w.undo.len() > mark {
                    let n = w.undo.pop().expect("len > mark");
                    w.table.remove(&n);
                }
            }
            Step::Enter(b) => {
                stack.push(Step::Exit(w.undo.len()));
                if b != entry {
                    w.params(cfg, b);
                } else {
                    for p in w.f.block_params(b).to_vec() {
                        w.offer(p);
                    }
                }
                w.insts(b);
                for &c in dt.children(b).iter().rev() {
                    stack.push(Step::Enter(c));
                }
            }
        }
    }
    w.delete_dead();
    w.out
}

impl Walk<'_> {
    /// Makes `v` the available value of its number if there is none yet.
    fn offer(&mut self, v: Value) {
        let n = self.vn[v];
        if n == TOP || n == BOT || self.table.contains_key(&n) {
            return;
        }
        self.table.insert(n, v);
        self.undo.push(n);
    }

    /// An available value equal to number `n`: its constant or a table entry.
    fn available(&mut self, n: NodeId) -> Option<Value> {
        match self.dag.node(n) {
            Node::Const(c) => Some(c.value(self.f)),
            _ => self.table.get(&n).copied(),
        }
    }

    fn replace(&mut self, old: Value, new: Value) {
        self.f.replace_all_uses(old, new);
    }

    fn params(&mut self, cfg: &ControlFlowGraph, b: Block) {
        let params = self.f.block_params(b).to_vec();
        let mut dead = Vec::new();
        for (j, &p) in params.iter().enumerate() {
            let n = self.vn[p];
            if n == TOP || n == BOT {
                continue;
            }
            if let Some(v) = self.available(n) {
                if v != p {
                    if matches!(self.dag.node(n), Node::Const(_)) {
                        self.out.constants += 1;
                    } else {
                        self.out.params += 1;
                    }
                    self.replace(p, v);
                    dead.push(j);
                    continue;
                }
            }
            if self.g.is_join(b) {
                if let Some(v) = self.rebuild(b, p, n) {
                    self.out.rebuilt += 1;
                    self.replace(p, v);
                    dead.push(j);
                    self.offer(v);
                    continue;
                }
            }
            self.offer(p);
        }
        if dead.is_empty() {
            return;
        }
        let preds = cfg.unique_preds(b);
        for &j in dead.iter().rev() {
            for &pred in &preds {
                if let Some(t) = self.f.terminator(pred) {
                    for call in self.f.kind(t).targets() {
                        if call.block == b {
                            self.maybe_dead.push(call.args[j]);
                        }
                    }
                }
            }
            self.f.remove_block_param(b, j, &preds);
        }
    }

    /// Computes join parameter `p`, numbered `n`, as an instruction at the top of `b`
    /// when that is cheap (see the module documentation).
    fn rebuild(&mut self, b: Block, p: Value, n: NodeId) -> Option<Value> {
        let Node::Op(op, kids) = self.dag.node(n).clone() else {
            return None;
        };
        let divisor = kids.as_slice().get(1).and_then(|&k| self.dag.as_const(k));
        if op.unsafe_to_speculate(divisor) {
            return None;
        }
        for e in &self.g.edges[b] {
            let a = self.f.kind(e.term).targets()[e.arm as usize].args[param_index(self.f, p)?];
            if a == p || self.f.value_def(a).is_constant() {
                continue;
            }
            let i = self.f.def_inst(a)?;
            let cheap = self.f.layout.inst_block(i) == Some(e.pred)
                && self.f.users(a).len() == 1
                && pure_op(self.f, i, self.purity).is_some_and(|(o, args)| {
                    !o.unsafe_to_speculate(args.get(1).and_then(|&d| Const::of(self.f, d)))
                });
            if !cheap {
                return None;
            }
        }
        let mut args = Vec::new();
        for &k in kids.as_slice() {
            args.push(self.available(k)?);
        }
        let op = constant_second(self.f, op, &mut args);
        let (kind, ty) = op.build(&args)?;
        if ty != self.f.value_type(p) {
            return None;
        }
        let inst = match self.f.layout.first_inst(b) {
            Some(first) => self.f.insert_inst_before(first, kind, ty),
            None => return None,
        };
        let v = self.f.inst_result(inst)?;
        self.vn[v] = n;
        Some(v)
    }

    fn insts(&mut self, b: Block) {
        let insts: Vec<Inst> = self.f.layout.block_insts(b).collect();
        for i in insts {
            let Some(r) = self.f.inst_result(i) else {
                continue;
            };
            let n = self.vn[r];
            if n == TOP || n == BOT {
                continue;
            }
            if pure_op(self.f, i, self.purity).is_some() {
                if let Some(v) = self.available(n) {
                    if v != r {
                        if matches!(self.dag.node(n), Node::Const(_)) {
                            self.out.constants += 1;
                        } else {
                            self.out.insts += 1;
                        }
                        self.replace(r, v);
                        self.maybe_dead.extend(self.f.kind(i).args());
                        self.f.remove_inst(i);
                        continue;
                    }
                }
            }
            self.offer(r);
        }
    }

    /// Deletes pure, non-trapping instructions left without users, transitively.
    fn delete_dead(&mut self) {
        while let Some(v) = self.maybe_dead.pop() {
            let Some(i) = self.f.def_inst(v) else {
                continue;
            };
            if !self.f.layout.is_inst_inserted(i) || self.f.has_users(v) {
                continue;
            }
            let Some((op, args)) = pure_op(self.f, i, self.purity) else {
                continue;
            };
            if op.unsafe_to_speculate(args.get(1).and_then(|&d| Const::of(self.f, d))) {
                continue;
            }
            self.maybe_dead.extend(args);
            self.f.remove_inst(i);
            self.out.dead += 1;
        }
    }
}

fn param_index(f: &Function, p: Value) -> Option<usize> {
    match f.value_def(p) {
        ValueDef::Param(_, j) => Some(j as usize),
        _ => None,
    }
}
