//! Complete global value numbering: the algorithm of Nie Jiutao, Cheng Xu and Wang
//! Keyi, "An Efficient Complete Global Value Numbering Algorithm" (一种高效的完全值编号
//! 算法, Acta Electronica Sinica 38(2):416–421, 2010), on block parameters.
//!
//! Value numbers are expressions defined by Herbrand equivalence on SSA form (the
//! paper's Definition 2): two values have the same number when they are equal on
//! every path treating operators as uninterpreted (and, here, also when constant
//! folding and a few integer identities say so); the paper proves the converse, which
//! holds here within the limits that bound the iteration on huge functions. Unlike hash-based GVN
//! ([`crate::passes::value_numbering::gvn`]), which treats a block parameter as an opaque operator of
//! its arguments, this finds equalities *between block parameters and ordinary
//! expressions*, which is what the paper's Figure 1 shows:
//!
//! - (a) after `if (…) x0 = a + 1 else x1 = b + 1`, the join's `x2 = φ(x0, x1)` equals
//!   `c + 1` for the join's `c = φ(a, b)`;
//! - (b) in a loop with `x2 = φ(x0, x1)`, `y2 = φ(x0 + 1, y1)`, `x1 = x2 + 1`,
//!   `y1 = y2 + 1`, the value `x1` equals `y2`;
//! - (c) two pairs of parameters swapped on every iteration, mutually dependent, where
//!   `x1 = φ(…)` still equals `a1 + 1`.
//!
//! The pass has four parts, one file each:
//! - `graph`: the program graph in depth-first order with numbered edges;
//! - `solve`: the paper's iterative abstract execution (`GVN`, `AbstractExec`,
//!   `Intersect`) over ⟨node, edge⟩ pairs, with the value numbers in a shared DAG
//!   (`dag`) and bounded for huge functions;
//! - `validate`: a local soundness check of the numbers, demoting any block
//!   parameter whose number cannot be justified (none, when the iteration is right);
//! - `rewrite`: replacing values by equal available ones, rebuilding parameters as
//!   expressions when cheap, folding comparisons and differences of equal values.
//!
//! Nothing is rewritten on the iteration's word alone: `validate` checks every block
//! parameter's number by a local, inductive condition first, so a limit that stopped
//! the iteration early (or a bug in it) can cost equalities but never correctness.
//! The partial redundancy elimination ([`crate::passes::value_numbering::pre`]) uses the same checked
//! numbers.
//!
//! Loads are not numbered through memory (the paper uses GCC's memory SSA for that);
//! the hash-based GVN handles redundant loads.

pub(crate) mod dag;
pub(crate) mod graph;
pub(crate) mod rewrite;
pub(crate) mod solve;
#[cfg(test)]
mod tests;
pub(crate) mod validate;

use crate::analysis::{AnalysisManager, FunctionAnalyses, Preserved, Purity};
use crate::pipeline::Pass;
use dag::{Dag, Node, NodeId};
use graph::Graph;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Function, Module, SecondaryMap, Value};

/// The complete GVN pass.
pub struct Cgvn;

impl Pass for Cgvn {
    fn name(&self) -> &'static str {
        "cgvn"
    }
    fn description(&self) -> &'static str {
        "complete (Herbrand) global value numbering (Nie, Cheng and Wang 2010)"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let purity = am.purity(m);
        am.each_function(m, |f, fa| run_in(f, &purity, fa).changed())
    }
}

/// What [`run`] did to one function (or, summed, to many).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CgvnStats {
    /// Instructions replaced by an equal available value.
    pub redundant: usize,
    /// Block parameters replaced by an equal available value.
    pub params: usize,
    /// Values found to be constants.
    pub constants: usize,
    /// Block parameters replaced by their expression rebuilt at the top of the block.
    pub rebuilt: usize,
    /// Pure instructions left without users and deleted.
    pub dead: usize,
    /// Rounds of the iteration (the largest over the functions, when summed).
    pub rounds: u32,
    /// Block parameters whose number failed validation and was demoted.
    pub demoted: usize,
    /// Functions where a limit stopped the iteration before its fixed point.
    pub incomplete: usize,
}

impl CgvnStats {
    /// Whether the function changed.
    pub fn changed(&self) -> bool {
        self.merged() + self.dead > 0
    }

    /// Values replaced by an equal one (instructions and parameters, constants and
    /// rebuilt parameters included).
    pub fn merged(&self) -> usize {
        self.redundant + self.params + self.constants + self.rebuilt
    }

    /// Adds `o` into `self`.
    pub fn add(&mut self, o: &CgvnStats) {
        self.redundant += o.redundant;
        self.params += o.params;
        self.constants += o.constants;
        self.rebuilt += o.rebuilt;
        self.dead += o.dead;
        self.rounds = self.rounds.max(o.rounds);
        self.demoted += o.demoted;
        self.incomplete += o.incomplete;
    }
}

/// Complete value numbers of one function, validated.
pub(crate) struct Numbering {
    pub dag: Dag,
    pub vn: SecondaryMap<Value, NodeId>,
    pub graph: Graph,
    pub rounds: u32,
    pub complete: bool,
    pub demoted: usize,
}

impl Numbering {
    /// Whether `self` and `other` give every value the same number, in the same
    /// DAG.
    fn same_numbers(&self, other: &Numbering) -> bool {
        self.dag.same_nodes(&other.dag) && self.vn == other.vn
    }
}

/// Computes and validates the complete value numbers of `f` (which has a body).
pub(crate) fn analyze(f: &Function, dt: &DominatorTree, purity: &Purity) -> Numbering {
    let graph = Graph::compute(f);
    let mut dag = Dag::new();
    let sol = solve::solve(f, &graph, purity, &mut dag);
    let mut vn = sol.vn;
    let demoted = validate::reconcile(f, &graph, dt, purity, &mut dag, &mut vn);
    Numbering {
        dag,
        vn,
        graph,
        rounds: sol.rounds,
        complete: sol.complete,
        demoted,
    }
}

/// Runs the complete GVN over `f`.
pub fn run(f: &mut Function, purity: &Purity) -> CgvnStats {
    run_in(f, purity, &mut FunctionAnalyses::default())
}

/// [`run`] with the CFG and dominator tree taken from `fa`.
fn run_in(f: &mut Function, purity: &Purity, fa: &mut FunctionAnalyses) -> CgvnStats {
    if f.is_declaration() {
        return CgvnStats::default();
    }
    let Numbering {
        mut dag,
        mut vn,
        graph,
        rounds,
        complete,
        demoted,
    } = numbering(f, purity, fa);
    let (cfg, dt) = fa.domtree(f);
    let values = f.num_values();
    let r = rewrite::rewrite(f, &graph, cfg, dt, purity, &mut dag, &mut vn);
    let stats = CgvnStats {
        redundant: r.insts,
        params: r.params,
        constants: r.constants,
        rebuilt: r.rebuilt,
        dead: r.dead,
        rounds,
        demoted,
        incomplete: usize::from(!complete),
    };
    // A rewrite that changed nothing left the numbers as computed (it changes
    // them only where it replaces a value), and made no constant that a fresh
    // computation would number: they serve the next pass that needs them (pre).
    if !stats.changed() && f.num_values() == values {
        let kept = Numbering {
            dag,
            vn,
            graph,
            rounds,
            complete,
            demoted,
        };
        fa.keep_numbering(f, purity, kept);
    }
    stats
}

/// The complete value numbers of `f` under `purity`: those a pass that changed
/// nothing left in `fa` ([`FunctionAnalyses::keep_numbering`]), or computed now.
/// With verification on, kept numbers are compared with a fresh computation.
pub(crate) fn numbering(f: &Function, purity: &Purity, fa: &mut FunctionAnalyses) -> Numbering {
    let kept = fa.take_numbering(purity);
    let verify = fa.verifies();
    let (_, dt) = fa.domtree(f);
    match kept {
        Some(kept) => {
            if verify {
                assert!(
                    kept.same_numbers(&analyze(f, dt, purity)),
                    "kept value numbers of @{} differ from fresh ones",
                    f.name
                );
            }
            kept
        }
        None => analyze(f, dt, purity),
    }
}

/// The classes of values of `f` with equal complete value numbers (each with at least
/// two members, listed in definition order), for inspection and tests. Values are
/// those of reachable code; a class's values are equal wherever all are defined.
pub fn congruence_classes(f: &Function, purity: &Purity) -> Vec<Vec<Value>> {
    if f.is_declaration() {
        return Vec::new();
    }
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let num = analyze(f, &dt, purity);
    let mut classes: Vec<(NodeId, Vec<Value>)> = Vec::new();
    let mut index: rustc_hash::FxHashMap<NodeId, usize> = Default::default();
    for &b in dt.rpo() {
        let results = f.layout.block_insts(b).filter_map(|i| f.inst_result(i));
        for v in f.block_params(b).iter().copied().chain(results) {
            let n = num.vn[v];
            if matches!(num.dag.node(n), Node::Top | Node::Bot) {
                continue;
            }
            let k = *index.entry(n).or_insert_with(|| {
                classes.push((n, Vec::new()));
                classes.len() - 1
            });
            classes[k].1.push(v);
        }
    }
    classes
        .into_iter()
        .map(|(_, vs)| vs)
        .filter(|vs| vs.len() >= 2)
        .collect()
}
