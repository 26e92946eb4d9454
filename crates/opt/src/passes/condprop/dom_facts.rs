//! The facts holding at the end of any block, for questions about arbitrary
//! edges (as jump threading asks them), without walking the dominator chain.
//!
//! The facts at the end of `p` are those of the edges into `p`'s dominators (and
//! `p` itself) that have a single predecessor, latest (deepest) last; an edge
//! `p -> b` adds its own branch's fact after them. Instead of listing the chain
//! per question (its depth in a deep nest), each block's fact is indexed by
//! condition value, by the pair of values compared and by the value compared
//! with a constant; a question looks at the facts about its own values and keeps
//! those of blocks dominating `p` (constant-time with the dominator tree's
//! pre- and post-order numbers), the deepest one answering first. The answers
//! are those of the listed chain ([`super::facts::known`] over a `[Fact]`).

use super::facts::{against_constant, branch_fact, interval, pair, same_question, Fact, Facts};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, CmpOp, Function, Value};
use rustc_hash::FxHashMap;

/// The fact of every block entered from a single predecessor, indexed.
#[derive(Default)]
pub struct DomFacts {
    fact: FxHashMap<Block, Fact>,
    by_cond: FxHashMap<Value, Vec<Block>>,
    by_pair: FxHashMap<(Value, Value), Vec<Block>>,
    by_var: FxHashMap<Value, Vec<Block>>,
}

impl DomFacts {
    pub fn compute(f: &Function, cfg: &ControlFlowGraph) -> Self {
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
                if let Some((_, x, _)) = against_constant(f, cmp) {
                    d.by_var.entry(x).or_default().push(b);
                }
            }
            d.fact.insert(b, fact);
        }
        d
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
        let chain = self
            .holding(self.index.by_var.get(&x))
            .map(|b| &self.index.fact[&b]);
        interval(f, chain.chain(self.edge.iter()), x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::condprop::facts::known;

    /// The facts on the edge from `p` to `b` listed along the dominator chain
    /// (jump threading's walk), the reference for the index.
    use crate::passes::jumpthread::facts_on_edge as chain;

    /// Every question about every edge of a branchy function (the same
    /// comparisons again, swapped, inverted, against constants, and the
    /// conditions themselves) gets the listed chain's answer from the index.
    #[test]
    fn index_answers_as_the_listed_chain() {
        let m = ir::parse_module(
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
        )
        .expect("test IR parses");
        let f = m
            .funcs
            .values()
            .find(|f| !f.is_declaration())
            .expect("main");
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let index = DomFacts::compute(f, &cfg);
        let params: Vec<Value> = f
            .layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b).collect::<Vec<_>>())
            .filter_map(|i| f.inst_result(i))
            .collect();
        let (x, y) = (params[0], params[1]);
        let mut f2 = f.clone();
        let consts: Vec<Value> = [-1, 3, 5, 9, 10, 11, 20, 21].map(|c| f2.iconst(c)).to_vec();
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
        assert!(decided > 100 && decided < asked, "{decided} of {asked}");
    }
}
