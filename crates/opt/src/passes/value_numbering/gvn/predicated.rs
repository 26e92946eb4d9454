//! Block parameters equal by their controlling predicate (GCC's SCCVN, `vn_phi_eq`
//! for two-argument phis in different blocks): a parameter of a join whose
//! immediate dominator ends in `br %c, ...`, receiving `x` on every edge the
//! `then` side reaches it by and `y` on every edge of the `else` side, is
//! `%c ? x : y`. A parameter of a later join, below this one in the dominator
//! tree, controlled by the same `%c` and receiving the same `x` and `y` (or the
//! same pure computations of the same values), is the same value: two copies of
//! `a || b` computed as values give one truth value, and what each copy feeds
//! (an inlined call of it, a load it indexes) is then one expression.
//!
//! Why the values agree: `%c`, and every leaf of `x` and `y` but those defined
//! on one side (which cannot reach the later join's arguments), are defined
//! above the first join's dominator, so no path from the first join to the
//! second redefines them without passing the first join again.

use super::GvnStats;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, Function, InstKind, Value};
use rustc_hash::FxHashMap;

/// How deep the arguments' computations are compared.
const DEPTH: u32 = 3;

/// How many of the choices by one condition (the nearest joins above first) a
/// parameter is compared with: a condition tested before each of thousands of
/// joins (a flag guarding every loop of a long function) must not make the
/// walk quadratic.
const MAX_COMPARED: usize = 16;

/// A parameter known to be `cond ? then_arg : else_arg` (the condition is the
/// key it is filed under).
#[derive(Clone, Copy)]
struct Choice {
    then_arg: Value,
    else_arg: Value,
    param: Value,
}

/// The choices of the joins on the dominator path so far, by condition (so a
/// lookup sees only the choices made by the same condition), and the order
/// they were filed in, to undo.
#[derive(Default)]
pub(super) struct Choices {
    known: FxHashMap<Value, Vec<Choice>>,
    filed: Vec<Value>,
}

impl Choices {
    /// How many are known (to undo to).
    pub(super) fn mark(&self) -> usize {
        self.filed.len()
    }

    pub(super) fn undo_to(&mut self, mark: usize) {
        while self.filed.len() > mark {
            let cond = self.filed.pop().expect("len > mark");
            if let Some(list) = self.known.get_mut(&cond) {
                list.pop();
                if list.is_empty() {
                    self.known.remove(&cond);
                }
            }
        }
    }

    /// Replaces each parameter of `b` that is a choice already known by the
    /// parameter that holds it, and records the others.
    pub(super) fn number(
        &mut self,
        f: &mut Function,
        cfg: &ControlFlowGraph,
        dt: &DominatorTree,
        b: Block,
        stats: &mut GvnStats,
    ) {
        let Some(sides) = sides(f, cfg, dt, b) else {
            return;
        };
        let mut dead = Vec::new();
        for (j, &p) in f.block_params(b).to_vec().iter().enumerate() {
            let Some((then_arg, else_arg)) = sides.args(f, b, j) else {
                continue;
            };
            let list = self.known.entry(sides.cond).or_default();
            let found = list.iter().rev().take(MAX_COMPARED).find(|k| {
                same(f, k.then_arg, then_arg, DEPTH) && same(f, k.else_arg, else_arg, DEPTH)
            });
            match found {
                Some(k) => {
                    f.replace_all_uses(p, k.param);
                    dead.push(j);
                    stats.params += 1;
                }
                None => {
                    list.push(Choice {
                        then_arg,
                        else_arg,
                        param: p,
                    });
                    self.filed.push(sides.cond);
                }
            }
        }
        if !dead.is_empty() {
            let preds = cfg.unique_preds(b);
            for &j in dead.iter().rev() {
                f.remove_block_param(b, j, &preds);
            }
        }
    }
}

/// The incoming edges of a join split by the branch of its immediate dominator.
struct Sides {
    cond: Value,
    /// Per incoming edge (predecessor, index among its targets into the join):
    /// whether the `then` side reaches the join by it.
    edges: Vec<(Block, usize, bool)>,
}

impl Sides {
    /// The one argument `j` of the `then` edges and the one of the `else` edges.
    fn args(&self, f: &Function, b: Block, j: usize) -> Option<(Value, Value)> {
        let (mut then_arg, mut else_arg) = (None, None);
        for &(p, k, then_side) in &self.edges {
            let term = f.terminator(p)?;
            let targets = f.kind(term).targets();
            let call = targets.iter().filter(|t| t.block == b).nth(k)?;
            let slot = if then_side {
                &mut then_arg
            } else {
                &mut else_arg
            };
            match *slot {
                None => *slot = Some(call.args[j]),
                Some(v) if v == call.args[j] => {}
                Some(_) => return None,
            }
        }
        Some((then_arg?, else_arg?))
    }
}

/// How the edges into `b` divide between the two sides of the branch ending
/// its immediate dominator: an edge from the dominator itself is on the side of
/// its target; one from another block is on the side whose target has the
/// dominator as its only predecessor and dominates that block. `None` when an
/// edge is on neither side, or a side has no edge.
fn sides(f: &Function, cfg: &ControlFlowGraph, dt: &DominatorTree, b: Block) -> Option<Sides> {
    let d = dt.idom(b)?;
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = f.kind(f.terminator(d)?)
    else {
        return None;
    };
    let (t, e) = (then_dest.block, else_dest.block);
    if t == e {
        return None;
    }
    // A side's target entered only from the dominator, by one edge.
    let owns = |s: Block| s != b && cfg.preds(s) == [d];
    let mut edges = Vec::new();
    let (mut then_seen, mut else_seen) = (false, false);
    for p in cfg.unique_preds(b) {
        if !dt.is_reachable(p) {
            continue;
        }
        let into = f
            .kind(f.terminator(p)?)
            .targets()
            .iter()
            .filter(|c| c.block == b)
            .count();
        let side = if p == d {
            // Only the side whose target is `b`.
            match (t == b, e == b) {
                (true, false) => true,
                (false, true) => false,
                _ => return None,
            }
        } else if owns(t) && dt.dominates(t, p) {
            true
        } else if owns(e) && dt.dominates(e, p) {
            false
        } else {
            return None;
        };
        then_seen |= side;
        else_seen |= !side;
        edges.extend((0..into).map(|k| (p, k, side)));
    }
    (then_seen && else_seen).then_some(Sides { cond: *cond, edges })
}

/// Whether `a` and `b` are the same value, or the same pure operation (integer
/// arithmetic that cannot trap, comparisons, addresses) of arguments that are,
/// `depth` levels down.
fn same(f: &Function, a: Value, b: Value, depth: u32) -> bool {
    if a == b {
        return true;
    }
    if depth == 0 || f.value_type(a) != f.value_type(b) {
        return false;
    }
    let (Some(i), Some(j)) = (f.def_inst(a), f.def_inst(b)) else {
        return false;
    };
    let (ki, kj) = (f.kind(i), f.kind(j));
    let pure = match ki {
        InstKind::Binary { op, .. } => !op.can_trap(),
        InstKind::Cmp { .. } | InstKind::Unary { .. } | InstKind::Gep { .. } => true,
        _ => false,
    };
    if !pure {
        return false;
    }
    let (xs, ys) = (ki.args(), kj.args());
    let mut shape = ki.clone();
    let mut next = ys.iter();
    let mut arity_ok = xs.len() == ys.len();
    shape.map_args(|v| match next.next() {
        Some(&y) => *v = y,
        None => arity_ok = false,
    });
    arity_ok && shape == *kj && xs.iter().zip(&ys).all(|(&x, &y)| same(f, x, y, depth - 1))
}
