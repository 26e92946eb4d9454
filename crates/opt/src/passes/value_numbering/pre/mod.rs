//! Partial redundancy elimination at joins, on complete value numbers: a computation
//! whose value is already available at the end of every predecessor of its block is
//! not recomputed, and one available on all predecessors but one is computed on that
//! one instead, where that costs nothing extra.
//!
//! This is the value-based PRE of VanDrunen and Hosking ("Value-Based Partial
//! Redundancy Elimination", CC 2004, the GVN-PRE of the complete-GVN paper's
//! comparison), restricted to one level of translation, in the form LLVM's GVN calls
//! scalar PRE, with the value numbers of the complete GVN ([`super::cgvn`]; Nie, Cheng
//! and Wang's OSCM uses theirs the same way). For each instruction `I` of a join `B`
//! (a block with several incoming edges), in reverse post-order:
//!
//! 1. `I`'s value number `n` is an expression over leaders available at the top of
//!    `B` (constants, `B`'s parameters, values of blocks strictly dominating `B`);
//!    otherwise `I` depends on something computed in `B` and is left alone.
//! 2. For each incoming edge `P → B`, `n` is *translated* to the end of `P` by
//!    substituting each parameter of `B` by the number of the argument `P` passes
//!    (`cgvn::validate::substitute`), giving `n_P`.
//! 3. `n_P` is *available* at the end of `P` if it is a constant or some value whose
//!    definition dominates `P` has number `n_P`.
//! 4. If every `n_P` is available, `I` is fully redundant: `B` gets a new parameter
//!    that receives the available value on each edge, and `I` is replaced by it. Its
//!    number is `n`, which satisfies exactly the condition the complete GVN checks for
//!    a parameter (`cgvn::validate`), so the replacement is sound; nothing new
//!    is evaluated, so this applies to divisions and calls too.
//! 5. If all but one are available, the missing one is on an edge that is not a loop
//!    back edge, and `n_P` is an operator that cannot trap (no division or remainder
//!    by a possibly-zero divisor, no call) over available operands, that operator is
//!    inserted on that edge and step 4 applies: at the end of `P` when `B` is its only
//!    successor, else in a new block splitting the edge (LLVM's scalar PRE splits
//!    such a critical edge the same way). Every path through `B` still computes the
//!    value once, but paths through the other predecessors no longer compute it
//!    twice. On a loop header this hoists a computation the loop repeats into the
//!    preheader (the value available on the back edge is then the header's own
//!    computation, and the new parameter just carries the hoisted value round the
//!    loop).
//!
//! A critical edge is split only when it passes arguments: the back end gives such
//! an edge a block of its own for their copies anyway (`riscv`'s instruction
//! selection), so the insertion rides in a block that exists either way, where on
//! an edge passing nothing the new block would cost a jump on its path. Such edges
//! enter a loop whose guard branches straight to its header (`i * b` of the header
//! is then computed on the way in, and the latch's `(i + 1) * b` carried round),
//! and the join of a clamp `x > hi ? hi : x` (its `x < lo` is decided on the edge
//! bringing `hi`, and computed on the other). An add of a constant is not inserted
//! on a split edge: the join's add saved on the other paths costs a parameter
//! carried across the join, as the add would have cost.
//!
//! An address at a constant offset from a pointer (`gep %p, 3, 4`) gets no new
//! parameter, as LLVM's scalar PRE gives none to a `getelementptr`: the parameter
//! is one more register live across the join (round the loop, for a value the
//! back edge carries), where recomputing the address costs at most an add, and
//! nothing when the offset folds into the loads and stores through it. A
//! recomputation at a variable index costs a shift and an add, and is carried.
//!
//! What it must not do: evaluate something where the program did not. A division or
//! remainder (which may trap) or a call (which may not return) is never inserted, so
//! `if (b != 0) x = a / b;` followed by `a / b` keeps the second division where it is;
//! nothing is inserted on a back edge (that would compute the value inside the loop
//! rather than save it); loads are leaders of the numbering and never moved.

use super::cgvn::dag::{Dag, Node, NodeId};
use super::cgvn::validate::{leaders_available, substitute, value_node};
use super::cgvn::{numbering, Numbering};
use super::gvn::expr::{constant_second, pure_op, Opcode};
use crate::analysis::{AnalysisManager, FunctionAnalyses, Preserved, Purity};
use crate::pipeline::Pass;
use ir::analysis::DominatorTree;
use ir::{BinOp, Block, BlockCall, Function, Inst, InstKind, Module, SecondaryMap, Type, Value};
use rustc_hash::FxHashMap;

/// The PRE pass.
pub struct Pre;

impl Pass for Pre {
    fn name(&self) -> &'static str {
        "pre"
    }
    fn description(&self) -> &'static str {
        "partial redundancy elimination at joins on complete value numbers"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let purity = am.purity(m);
        am.each_function(m, |f, fa| run_in(f, &purity, fa).changed())
    }
}

/// What [`run`] did to one function.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PreStats {
    /// Instructions available on every incoming edge, replaced by a new parameter.
    pub full: usize,
    /// Instructions made fully redundant by one insertion in a predecessor.
    pub partial: usize,
}

impl PreStats {
    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        self.full + self.partial > 0
    }

    /// Adds `o` into `self`.
    pub fn add(&mut self, o: &PreStats) {
        self.full += o.full;
        self.partial += o.partial;
    }
}

/// Work limit for translating one block's value numbers (per edge).
const TRANSLATE_BUDGET: usize = 4096;
/// Values with one number examined when looking for one available at a point.
const SCAN_LIMIT: usize = 64;

/// Values by value number, to find one available at the end of a block.
struct Avail {
    by_vn: FxHashMap<NodeId, Vec<Value>>,
    removed: SecondaryMap<Value, bool>,
}

impl Avail {
    fn add(&mut self, n: NodeId, v: Value) {
        self.by_vn.entry(n).or_default().push(v);
    }

    /// A value numbered `n` available at the end of `pred`, or of `edge_block`, the
    /// block splitting an edge from `pred` (available there: what `pred` has, and
    /// what was inserted in it).
    fn find(
        &self,
        f: &mut Function,
        dt: &DominatorTree,
        dag: &Dag,
        n: NodeId,
        pred: Block,
        edge_block: Option<Block>,
    ) -> Option<Value> {
        if let Node::Const(c) = dag.node(n) {
            return Some(c.value(f));
        }
        let vs = self.by_vn.get(&n)?;
        vs.iter().take(SCAN_LIMIT).copied().find(|&v| {
            !self.removed[v]
                && f.value_block(v)
                    .is_some_and(|b| Some(b) == edge_block || dt.dominates(b, pred))
        })
    }
}

/// Runs PRE over `f`.
pub fn run(f: &mut Function, purity: &Purity) -> PreStats {
    run_in(f, purity, &mut FunctionAnalyses::default())
}

/// [`run`] with the CFG and dominator tree taken from `fa`. PRE adds parameters,
/// instructions and the blocks that split critical edges (step 5), which the
/// dominator tree does not know: dominance at the end of such a block is asked of
/// the predecessor it was split from ([`Join::split`]).
fn run_in(f: &mut Function, purity: &Purity, fa: &mut FunctionAnalyses) -> PreStats {
    let mut stats = PreStats::default();
    if f.is_declaration() {
        return stats;
    }
    let Numbering {
        mut dag,
        mut vn,
        graph,
        ..
    } = numbering(f, purity, fa);
    let (cfg, dt) = fa.domtree(f);
    let mut avail = Avail {
        by_vn: FxHashMap::default(),
        removed: SecondaryMap::new(),
    };
    for &b in dt.rpo() {
        let results = f.layout.block_insts(b).filter_map(|i| f.inst_result(i));
        for v in f.block_params(b).iter().copied().chain(results) {
            avail.add(vn[v], v);
        }
    }
    for &b in dt.rpo() {
        let edges = &graph.edges[b];
        // Joins only, and only those all of whose predecessors are reachable (a new
        // parameter needs an argument on every branch to the block).
        if edges.len() < 2 || cfg.preds(b).len() != edges.len() {
            continue;
        }
        let mut join = Join {
            b,
            edges: edges.clone(),
            split: vec![None; edges.len()],
            arg_nodes: Vec::new(),
            memos: vec![FxHashMap::default(); edges.len()],
            budget: TRANSLATE_BUDGET * edges.len(),
        };
        for e in &join.edges {
            let args = f.kind(e.term).targets()[e.arm as usize].args.clone();
            let nodes = args
                .iter()
                .map(|&a| value_node(&mut dag, f, &vn, a))
                .collect();
            join.arg_nodes.push(nodes);
        }
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for i in insts {
            if let Some(kind) = join.try_inst(f, dt, purity, &mut dag, &mut vn, &mut avail, i) {
                match kind {
                    Redundancy::Full => stats.full += 1,
                    Redundancy::Partial => stats.partial += 1,
                }
            }
        }
    }
    stats
}

enum Redundancy {
    Full,
    Partial,
}

/// One join being worked on.
struct Join {
    b: Block,
    edges: Vec<super::cgvn::graph::Edge>,
    /// Per edge, the block made to split it (its `term` and `arm` then that block's
    /// jump; its `pred` stays the block branching to it, which the dominator tree
    /// knows).
    split: Vec<Option<Block>>,
    /// Value numbers of the arguments of the block's original parameters, per edge.
    arg_nodes: Vec<Vec<NodeId>>,
    /// Translation memo per edge.
    memos: Vec<FxHashMap<NodeId, NodeId>>,
    budget: usize,
}

impl Join {
    /// Eliminates instruction `i` of the join if it is (partially) redundant.
    #[allow(clippy::too_many_arguments)]
    fn try_inst(
        &mut self,
        f: &mut Function,
        dt: &DominatorTree,
        purity: &Purity,
        dag: &mut Dag,
        vn: &mut SecondaryMap<Value, NodeId>,
        avail: &mut Avail,
        i: Inst,
    ) -> Option<Redundancy> {
        pure_op(f, i, purity)?;
        let is_offset =
            matches!(*f.kind(i), InstKind::Gep { index, .. } if f.as_iconst(index).is_some());
        let r = f.inst_result(i)?;
        let n = vn[r];
        if !matches!(dag.node(n), Node::Op(..)) {
            return None;
        }
        let mut ok_memo = FxHashMap::default();
        if !leaders_available(f, dt, dag, self.b, n, &mut ok_memo, &mut self.budget) {
            return None;
        }
        // Translate to each predecessor and look for an available value.
        let mut found: Vec<Option<Value>> = Vec::with_capacity(self.edges.len());
        let mut translated = Vec::with_capacity(self.edges.len());
        for (k, e) in self.edges.iter().enumerate() {
            let n_p = substitute(
                f,
                dag,
                self.b,
                &self.arg_nodes[k],
                n,
                &mut self.memos[k],
                &mut self.budget,
            )?;
            translated.push(n_p);
            found.push(avail.find(f, dt, dag, n_p, e.pred, self.split[k]));
        }
        let missing: Vec<usize> = (0..found.len()).filter(|&k| found[k].is_none()).collect();
        let kind = match missing.as_slice() {
            [] => Redundancy::Full,
            // An offset address goes into no new parameter (below), so none is
            // inserted.
            _ if is_offset => return None,
            &[k] => {
                let ty = f.value_type(r);
                let v = self.insert(f, dt, dag, avail, k, translated[k], ty)?;
                vn[v] = translated[k];
                avail.add(translated[k], v);
                found[k] = Some(v);
                Redundancy::Partial
            }
            _ => return None,
        };
        // One value on every edge that dominates the join (as when PRE runs before GVN):
        // it replaces `I` directly.
        let first = found[0].expect("all available");
        if found.iter().all(|&v| v == Some(first))
            && f.value_block(first)
                .is_some_and(|d| dt.strictly_dominates(d, self.b))
        {
            f.replace_all_uses(r, first);
            f.remove_inst(i);
            avail.removed[r] = true;
            return Some(kind);
        }
        // A new parameter receiving the available values; never for a constant
        // offset from a pointer (LLVM's scalar PRE refuses every `getelementptr`
        // for this reason): the parameter would be one more register live round
        // the join, where the `gep` costs at most an add, and nothing when the
        // offset folds into the accesses through it.
        if is_offset {
            return None;
        }
        let ty = f.value_type(r);
        let q = f.append_block_param(self.b, ty);
        for (k, e) in self.edges.iter().enumerate() {
            let mut call: BlockCall = f.kind(e.term).targets()[e.arm as usize].clone();
            call.args.push(found[k].expect("all available"));
            f.set_target(e.term, e.arm as usize, call);
        }
        vn[q] = n;
        avail.add(n, q);
        f.replace_all_uses(r, q);
        f.remove_inst(i);
        avail.removed[r] = true;
        Some(kind)
    }

    /// Computes `n_p`, missing on edge `k`, on that edge when that is allowed (see
    /// the module documentation): at the end of its predecessor, or in a block
    /// splitting it; the new value, of type `ty`.
    #[allow(clippy::too_many_arguments)]
    fn insert(
        &mut self,
        f: &mut Function,
        dt: &DominatorTree,
        dag: &Dag,
        avail: &Avail,
        k: usize,
        n_p: NodeId,
        ty: Type,
    ) -> Option<Value> {
        let e = &self.edges[k];
        let pred = e.pred;
        if dt.dominates(self.b, pred) {
            return None;
        }
        let critical = self.split[k].is_none() && f.successors(pred).len() != 1;
        if critical && f.kind(e.term).targets()[e.arm as usize].args.is_empty() {
            return None;
        }
        let Node::Op(op, kids) = dag.node(n_p) else {
            return None;
        };
        let op = *op;
        let kids = kids.as_slice().to_vec();
        let divisor = kids.get(1).and_then(|&d| dag.as_const(d));
        if op.unsafe_to_speculate(divisor) {
            return None;
        }
        // `x + c` on a split edge saves one add on the other paths, and costs a
        // parameter carried across the join: no gain (module documentation).
        let add_constant = matches!(op, Opcode::Bin(BinOp::Add | BinOp::Sub))
            && kids.iter().any(|&kid| dag.as_const(kid).is_some());
        if critical && add_constant {
            return None;
        }
        let mut args = Vec::with_capacity(kids.len());
        for kid in kids {
            args.push(avail.find(f, dt, dag, kid, pred, self.split[k])?);
        }
        let op = constant_second(f, op, &mut args);
        let (kind, built_ty) = op.build(&args)?;
        if built_ty != ty {
            return None;
        }
        if critical {
            self.split(f, k);
        }
        let at = self.split[k].unwrap_or(pred);
        let term = f.terminator(at)?;
        let inst = f.insert_inst_before(term, kind, ty);
        f.inst_result(inst)
    }

    /// Splits edge `k` with a new block that jumps on to the join with the edge's
    /// arguments, laid out after the edge's predecessor.
    fn split(&mut self, f: &mut Function, k: usize) {
        let e = self.edges[k];
        let call: BlockCall = f.kind(e.term).targets()[e.arm as usize].clone();
        let n = f.create_block();
        f.layout.insert_block_after(n, e.pred);
        let jump = f.append_inst(
            n,
            InstKind::Jump {
                dest: Box::new(call),
            },
            Type::Void,
        );
        f.set_target(e.term, e.arm as usize, BlockCall::new(n, Vec::new()));
        self.edges[k].term = jump;
        self.edges[k].arm = 0;
        self.split[k] = Some(n);
    }
}

#[cfg(test)]
mod tests;
