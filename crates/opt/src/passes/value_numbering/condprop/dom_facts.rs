//! The facts holding at the end of any block, for questions about arbitrary
//! edges (as jump threading asks them), without walking the dominator chain.
//!
//! The facts at the end of `p` are those of the edges into `p`'s dominators (and
//! `p` itself) that have a single predecessor, latest (deepest) last; an edge
//! `p -> b` adds its own branch's fact after them. Instead of listing the chain
//! per question (its depth in a deep nest), each block's fact is indexed by
//! condition value and by the pair of values compared; a question looks at the
//! facts about its own values and keeps those of blocks dominating `p`
//! (constant-time with the dominator tree's pre- and post-order numbers), the
//! deepest one answering first. For a value compared with constants, each block
//! comparing it keeps the bounds of all such facts down to it, so a question
//! takes those of the deepest one dominating `p` (found by its pre-order
//! number) instead of folding every fact about the value (an `else if` chain on
//! one value holds one per arm). The answers are those of the listed chain
//! ([`super::facts::known`] over a `[Fact]`).

use super::facts::{against_constant, branch_fact, pair, same_question, Bounds, Fact, Facts};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, CmpOp, Function, SecondaryMap, Value};
use rustc_hash::FxHashMap;

/// The fact of every block entered from a single predecessor, indexed.
#[derive(Default)]
pub struct DomFacts {
    fact: FxHashMap<Block, Fact>,
    by_cond: FxHashMap<Value, Vec<Block>>,
    by_pair: FxHashMap<(Value, Value), Vec<Block>>,
    /// Each reachable block's number in a pre-order walk of the dominator tree.
    pre: SecondaryMap<Block, u32>,
    /// Per value compared with constants: the blocks whose facts compare it, by
    /// pre-order number.
    var_blocks: FxHashMap<Value, Vec<(u32, Block)>>,
    /// Per such block: the bounds the facts about its value give at its start
    /// (its own and those of the blocks dominating it), and the nearest block
    /// dominating it with a fact about the same value.
    var_bounds: FxHashMap<Block, (Bounds, Option<Block>)>,
}

impl DomFacts {
    pub fn compute(f: &Function, cfg: &ControlFlowGraph, dt: &DominatorTree) -> Self {
        let mut d = DomFacts::default();
        for b in f.layout.blocks() {
            let [q] = cfg.preds(b) else {
                continue;
            };
            let Some(fact) = branch_fact(f, *q, b) else {
                continue;
            };
            if let Some(c) = fact.cond {
                d.by_cond.entry(c).or_default().push(b);
            }
            if let Some(cmp) = fact.cmp {
                d.by_pair.entry(pair(cmp.1, cmp.2)).or_default().push(b);
            }
            d.fact.insert(b, fact);
        }
        // The bounds at each block comparing a value with constants, down the
        // dominator tree: a stack per value of the blocks on the path from the
        // root, the ones no longer dominating dropped when met.
        let mut open: FxHashMap<Value, Vec<(Block, Bounds)>> = FxHashMap::default();
        for (k, b) in dt.preorder().into_iter().enumerate() {
            d.pre[b] = k as u32;
            let Some(fact) = d.fact.get(&b) else { continue };
            let Some((op, x, c)) = fact.cmp.and_then(|cmp| against_constant(f, cmp)) else {
                continue;
            };
            let stack = open.entry(x).or_default();
            while stack.last().is_some_and(|&(y, _)| !dt.dominates(y, b)) {
                stack.pop();
            }
            let (parent, before) = stack
                .last()
                .map_or((None, Bounds::FULL), |&(y, bd)| (Some(y), bd));
            let bounds = before.and(op, fact.truth, c);
            d.var_bounds.insert(b, (bounds, parent));
            d.var_blocks.entry(x).or_default().push((k as u32, b));
            stack.push((b, bounds));
        }
        d
    }

    /// The bounds the facts holding at the end of `p` give `x`: those of the
    /// deepest block dominating `p` (or `p` itself) with a fact about `x`.
    fn bounds_at(&self, dt: &DominatorTree, p: Block, x: Value) -> Bounds {
        let Some(list) = self.var_blocks.get(&x) else {
            return Bounds::FULL;
        };
        if !dt.is_reachable(p) {
            return Bounds::FULL;
        }
        // The last block in pre-order at or before `p`: `p`'s deepest dominator
        // among them if it dominates `p`, else one below that dominator.
        let at = list.partition_point(|&(k, _)| k <= self.pre[p]);
        let mut y = at.checked_sub(1).map(|i| list[i].1);
        while let Some(b) = y {
            let (bounds, parent) = self.var_bounds[&b];
            if dt.dominates(b, p) {
                return bounds;
            }
            y = parent;
        }
        Bounds::FULL
    }

    /// The facts on the edge from `p` to `b`.
    pub fn on_edge<'a>(
        &'a self,
        f: &Function,
        dt: &'a DominatorTree,
        p: Block,
        b: Block,
    ) -> EdgeFacts<'a> {
        EdgeFacts {
            index: self,
            dt,
            p,
            edge: branch_fact(f, p, b),
        }
    }
}

/// The facts of the dominator chain of one block, then those of one edge out of it.
pub struct EdgeFacts<'a> {
    index: &'a DomFacts,
    dt: &'a DominatorTree,
    p: Block,
    edge: Option<Fact>,
}

impl EdgeFacts<'_> {
    /// Whether block `x`'s fact holds at the end of `p`.
    fn holds(&self, x: Block) -> bool {
        x == self.p || self.dt.dominates(x, self.p)
    }

    /// The blocks of `list` whose facts hold at the end of `p`.
    fn holding<'b>(&'b self, list: Option<&'b Vec<Block>>) -> impl Iterator<Item = Block> + 'b {
        list.into_iter()
            .flatten()
            .copied()
            .filter(move |&x| self.holds(x))
    }
}

impl Facts for EdgeFacts<'_> {
    fn answer(&self, v: Option<Value>, cmp: Option<(CmpOp, Value, Value)>) -> Option<bool> {
        if let Some(e) = self.edge {
            let list = [e];
            if let Some(t) = list[..].answer(v, cmp) {
                return Some(t);
            }
        }
        // Of two blocks holding, the one the other dominates is the later.
        let later = |x: Block, y: Option<Block>| y.is_none_or(|y| self.dt.strictly_dominates(y, x));
        let mut by_cond: Option<Block> = None;
        if let Some(v) = v {
            for x in self.holding(self.index.by_cond.get(&v)) {
                if later(x, by_cond) {
                    by_cond = Some(x);
                }
            }
        }
        let mut best: Option<(Block, bool)> = None;
        if let Some(q) = cmp {
            for x in self.holding(self.index.by_pair.get(&pair(q.1, q.2))) {
                if !later(x, by_cond) || !later(x, best.map(|b| b.0)) {
                    continue;
                }
                let fact = &self.index.fact[&x];
                if let Some(t) = fact.cmp.and_then(|c| same_question(q, c)) {
                    best = Some((x, fact.truth == t));
                }
            }
        }
        match (best, by_cond) {
            (Some((_, t)), _) => Some(t),
            (None, Some(c)) => Some(self.index.fact[&c].truth),
            (None, None) => None,
        }
    }

    fn interval(&self, f: &Function, x: Value) -> Option<(i64, i64)> {
        let mut bounds = self.index.bounds_at(self.dt, self.p, x);
        let edge = self
            .edge
            .and_then(|e| Some((e.truth, against_constant(f, e.cmp?)?)));
        if let Some((truth, (op, y, c))) = edge {
            if y == x {
                bounds = bounds.and(op, truth, c);
            }
        }
        bounds.interval()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::value_numbering::condprop::facts::known;

    /// The facts on the edge from `p` to `b` listed along the dominator chain
    /// (jump threading's walk), the reference for the index.
    use crate::passes::scalar::jumpthread::facts_on_edge as chain;

    /// Asks every question about every edge of the function in `src` (the same
    /// comparisons again, swapped, inverted, against constants, and the
    /// conditions themselves) of the index and of the listed chain, which must
    /// agree; returns how many were asked and how many decided.
    fn index_against_chain(src: &str) -> (usize, usize) {
        let m = ir::parse_module(src).expect("test IR parses");
        let f = m
            .funcs
            .values()
            .find(|f| !f.is_declaration())
            .expect("main");
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let index = DomFacts::compute(f, &cfg, &dt);
        let params: Vec<Value> = f
            .layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b).collect::<Vec<_>>())
            .filter_map(|i| f.inst_result(i))
            .collect();
        let (x, y) = (params[0], params[1]);
        let mut f2 = f.clone();
        let consts: Vec<Value> = [-1, 3, 5, 9, 10, 11, 20, 21, 49, 50, 99, 100]
            .map(|c| f2.iconst(c))
            .to_vec();
        let mut operands = vec![x, y];
        operands.extend(consts);
        let ops = [
            CmpOp::Slt,
            CmpOp::Sle,
            CmpOp::Sgt,
            CmpOp::Sge,
            CmpOp::Eq,
            CmpOp::Ne,
        ];
        let mut asked = 0;
        let mut decided = 0;
        for b in f.layout.blocks() {
            for &p in cfg.preds(b) {
                let list = chain(&f2, &cfg, &dt, p, b);
                let edge = index.on_edge(&f2, &dt, p, b);
                for &v in &params {
                    let want = known(&f2, &list, Some(v), None);
                    assert_eq!(known(&f2, &edge, Some(v), None), want);
                }
                for op in ops {
                    for &a in &operands {
                        for &c in &operands {
                            let q = Some((op, a, c));
                            let want = known(&f2, &list, None, q);
                            asked += 1;
                            decided += usize::from(want.is_some());
                            assert_eq!(known(&f2, &edge, None, q), want, "{p} -> {b}: {q:?}");
                        }
                    }
                }
            }
        }
        (asked, decided)
    }

    /// A branchy function: every answer of the index is the listed chain's.
    #[test]
    fn index_answers_as_the_listed_chain() {
        let (asked, decided) = index_against_chain(
            r#"
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = slt %0, 10
  br %2, bb1, bb2
bb1:
  %3 = sgt %0, %1
  br %3, bb3, bb4
bb2:
  %4 = sge %0, 3
  br %4, bb4, bb5
bb3:
  %5 = slt %1, %0
  br %5, bb5, bb8
bb4:
  %6 = eq %1, 5
  br %6, bb8, bb6
bb5:
  %7 = sle %0, 20
  br %7, bb6, bb7
bb6:
  br %2, bb7, bb8
bb7:
  %8 = slt %0, 10
  br %8, bb9, bb8
bb8:
  ret 0
bb9:
  ret 1
}
"#,
        );
        assert!(decided > 100 && decided < asked, "{decided} of {asked}");
    }

    /// A join below a test whose arms test the same value again: the block
    /// before the join in the dominator tree's pre-order is in one arm and does
    /// not dominate it, so the index takes the bounds of the test above both.
    #[test]
    fn a_join_takes_the_bounds_of_the_test_dominating_it() {
        let (asked, decided) = index_against_chain(
            r#"
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = slt %0, 100
  br %2, bb1, bb9
bb1:
  %3 = sgt %0, 5
  br %3, bb2, bb3
bb2:
  %4 = slt %0, 50
  br %4, bb4, bb5
bb3:
  jump bb6
bb4:
  jump bb6
bb5:
  jump bb6
bb6:
  %5 = slt %0, 200
  br %5, bb7, bb8
bb7:
  ret 1
bb8:
  ret 2
bb9:
  ret 0
}
"#,
        );
        assert!(decided > 100 && decided < asked, "{decided} of {asked}");
    }
}
