//! Control dependence, from post-dominance frontiers (Cytron, Ferrante, Rosen, Wegman
//! and Zadeck, TOPLAS 1991, section 6).
//!
//! Block `y` is control dependent on block `x` when `x` has an edge to some `s` that `y`
//! post-dominates while `y` does not strictly post-dominate `x`: `x`'s branch decides
//! whether `y` runs. The blocks `y` depends on are its post-dominance frontier (the
//! dominance frontier in the reverse CFG), computed like the forward frontier: for
//! every edge `x -> s`, walk up the post-dominator tree from `s` to `ipdom(x)`, making
//! every block passed control dependent on `x`. Only real CFG edges count (not the
//! virtual exit edges of infinite loops), so a block that no branch decides (the entry,
//! blocks every path goes through) depends on nothing, as if on the paper's `Entry`.

use super::postdom::PostDominatorTree;
use ir::analysis::ControlFlowGraph;
use ir::{Block, SecondaryMap};

/// For every reachable block, the branch blocks it is control dependent on, and the
/// inverse relation.
#[derive(Clone, Debug, Default)]
pub struct ControlDependence {
    deps: SecondaryMap<Block, Vec<Block>>,
    dependents: SecondaryMap<Block, Vec<Block>>,
}

impl ControlDependence {
    /// Computes control dependence from the CFG and post-dominator tree.
    pub fn compute(cfg: &ControlFlowGraph, pdt: &PostDominatorTree) -> Self {
        let mut cd = ControlDependence::default();
        for &x in cfg.rpo() {
            let stop = pdt.ipdom(x);
            let mut seen_succ: Vec<Block> = Vec::with_capacity(2);
            for &s in cfg.succs(x) {
                if seen_succ.contains(&s) {
                    continue; // both arms of a br to the same block: one dependence
                }
                seen_succ.push(s);
                let mut runner = Some(s);
                while let Some(r) = runner {
                    if Some(r) == stop {
                        break;
                    }
                    // Blocks are visited once each, so `x` is among `r`'s
                    // dependences only if it was the last one added (a scan of
                    // the list is quadratic when a block depends on many).
                    if cd.deps[r].last() != Some(&x) {
                        cd.deps[r].push(x);
                        cd.dependents[x].push(r);
                    }
                    runner = pdt.ipdom(r);
                }
            }
        }
        cd
    }

    /// The blocks whose terminators decide whether `b` executes.
    pub fn deps(&self, b: Block) -> &[Block] {
        &self.deps[b]
    }

    /// The blocks whose execution the terminator of `x` decides.
    pub fn dependents(&self, x: Block) -> &[Block] {
        &self.dependents[x]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testcfg::{cfg_func, idx, CYTRON_FIG5};

    #[test]
    fn cytron_figure_5_control_dependence() {
        let (f, b) = cfg_func(14, CYTRON_FIG5);
        let cfg = ControlFlowGraph::compute(&f);
        let pdt = PostDominatorTree::compute(&f, &cfg);
        let cd = ControlDependence::compute(&cfg, &pdt);
        // The control dependence graph of the paper (Figure 11 there): which nodes each
        // branch node decides.
        assert_eq!(idx(&b, cd.dependents(b[0])), vec![1, 2, 8, 9, 11, 12]);
        assert_eq!(idx(&b, cd.dependents(b[2])), vec![3, 6, 7]);
        assert_eq!(idx(&b, cd.dependents(b[3])), vec![4, 5]);
        assert_eq!(idx(&b, cd.dependents(b[9])), vec![10]);
        assert_eq!(idx(&b, cd.dependents(b[11])), vec![9, 11]);
        assert_eq!(idx(&b, cd.dependents(b[12])), vec![2, 8, 9, 11, 12]);
        for i in [1, 4, 5, 6, 7, 8, 10, 13] {
            assert!(cd.dependents(b[i]).is_empty(), "{i} has no branch");
        }
        // And the other direction.
        assert_eq!(idx(&b, cd.deps(b[9])), vec![0, 11, 12]);
        assert_eq!(idx(&b, cd.deps(b[6])), vec![2]);
        assert_eq!(idx(&b, cd.deps(b[13])), Vec::<usize>::new());
    }

    #[test]
    fn while_loop_body_depends_on_the_header() {
        // 0 -> 1; header 1 -> {2, 3}; body 2 -> 1; 3 returns.
        let (f, b) = cfg_func(4, &[(0, 1), (1, 2), (1, 3), (2, 1)]);
        let cfg = ControlFlowGraph::compute(&f);
        let pdt = PostDominatorTree::compute(&f, &cfg);
        let cd = ControlDependence::compute(&cfg, &pdt);
        assert_eq!(idx(&b, cd.deps(b[2])), vec![1]);
        // The header runs again only if the test was true: it depends on itself.
        assert_eq!(idx(&b, cd.deps(b[1])), vec![1]);
        assert!(cd.deps(b[0]).is_empty() && cd.deps(b[3]).is_empty());
    }
}
