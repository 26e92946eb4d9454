//! Dominance frontiers and iterated dominance frontiers.
//!
//! `DF(x)` is the set of blocks `y` such that `x` dominates a predecessor of `y` but does
//! not strictly dominate `y` (Cytron, Ferrante, Rosen, Wegman and Zadeck, "Efficiently
//! Computing Static Single Assignment Form and the Control Dependence Graph", TOPLAS
//! 1991, section 4). We compute it the way Cooper, Harvey and Kennedy ("A Simple, Fast
//! Dominance Algorithm", 2001, Figure 5) do: for every edge `p -> y`, walk up the
//! dominator tree from `p` until reaching `idom(y)`; every block passed on the way has
//! `y` in its frontier. The iterated frontier `DF+(S)` (the blocks that need a phi, i.e.
//! a block parameter, for a variable defined in `S`) is the usual worklist closure.

use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, Function, SecondaryMap};

/// The dominance frontier of every reachable block.
#[derive(Clone, Debug, Default)]
pub struct DominanceFrontiers {
    df: SecondaryMap<Block, Vec<Block>>,
}

impl DominanceFrontiers {
    /// Computes the frontiers of the reachable blocks of `func`. Each frontier lists its
    /// blocks once, in the order the edges were found (predecessor lists in RPO order).
    pub fn compute(func: &Function, cfg: &ControlFlowGraph, dt: &DominatorTree) -> Self {
        let _ = func;
        let mut df: SecondaryMap<Block, Vec<Block>> = SecondaryMap::new();
        for &y in cfg.rpo() {
            let stop = dt.idom(y);
            for &p in cfg.preds(y) {
                if !dt.is_reachable(p) {
                    continue;
                }
                // Walk from p up to (not including) idom(y). For the entry block (which
                // has no idom, and in valid IR no predecessors) this walks to the root.
                let mut runner = Some(p);
                while let Some(r) = runner {
                    if Some(r) == stop {
                        break;
                    }
                    // Entries for y are pushed while y is processed, so a duplicate
                    // is the last entry, and it means the walk from another
                    // predecessor already went from here up to idom(y): stop.
                    if df[r].last() == Some(&y) {
                        break;
                    }
                    df[r].push(y);
                    runner = dt.idom(r);
                }
            }
        }
        DominanceFrontiers { df }
    }

    /// `DF(b)`: empty for unreachable blocks.
    pub fn frontier(&self, b: Block) -> &[Block] {
        &self.df[b]
    }
}

/// The iterated dominance frontier `DF+(defs)`: the closure of the frontier under
/// "a block parameter placed in `y` is a new definition in `y`".
///
/// When `live_in` is given, only blocks for which it returns true are added (and only
/// those generate further frontiers): a variable dead on entry to `y` needs no block
/// parameter there, and with none there is no new definition to propagate (pruned SSA,
/// as LLVM's `IDFCalculator` with live-in blocks). The result is sorted by block index.
pub fn iterated_frontier(
    df: &DominanceFrontiers,
    defs: &[Block],
    live_in: Option<&dyn Fn(Block) -> bool>,
) -> Vec<Block> {
    let mut in_result: SecondaryMap<Block, bool> = SecondaryMap::new();
    let mut queued: SecondaryMap<Block, bool> = SecondaryMap::new();
    let mut work: Vec<Block> = Vec::with_capacity(defs.len());
    for &d in defs {
        if !queued[d] {
            queued[d] = true;
            work.push(d);
        }
    }
    let mut result = Vec::new();
    while let Some(x) = work.pop() {
        for &y in df.frontier(x) {
            if in_result[y] {
                continue;
            }
            if let Some(live) = live_in {
                if !live(y) {
                    continue;
                }
            }
            in_result[y] = true;
            result.push(y);
            if !queued[y] {
                queued[y] = true;
                work.push(y);
            }
        }
    }
    result.sort_unstable();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testcfg::{cfg_func, idx, CYTRON_FIG5};

    #[test]
    fn cytron_figure_5_frontiers_match_the_paper() {
        let (f, b) = cfg_func(14, CYTRON_FIG5);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        let df = DominanceFrontiers::compute(&f, &cfg, &dt);
        // The table of DF values in the paper (Exit = 13).
        let expected: [&[usize]; 14] = [
            &[],
            &[13],
            &[2, 13],
            &[8],
            &[6],
            &[6],
            &[8],
            &[8],
            &[2, 13],
            &[2, 9, 13],
            &[11],
            &[2, 9, 13],
            &[2, 13],
            &[],
        ];
        for (i, exp) in expected.iter().enumerate() {
            assert_eq!(idx(&b, df.frontier(b[i])), *exp, "DF({i})");
        }
    }

    #[test]
    fn cytron_figure_5_iterated_frontiers() {
        let (f, b) = cfg_func(14, CYTRON_FIG5);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        let df = DominanceFrontiers::compute(&f, &cfg, &dt);
        // Variable K is assigned in 1, 6 and 7: phis at 8 (join of the if), 2 (loop
        // header) and Exit, as in Figure 6.
        let k = iterated_frontier(&df, &[b[1], b[6], b[7]], None);
        assert_eq!(idx(&b, &k), vec![2, 8, 13]);
        // L is assigned in 1, 4, 5 and 10: phis at 6, 8, 2, 11, 9, Exit.
        let l = iterated_frontier(&df, &[b[1], b[4], b[5], b[10]], None);
        assert_eq!(idx(&b, &l), vec![2, 6, 8, 9, 11, 13]);
        // Pruned: if L were dead on entry to Exit and 2, neither gets a parameter.
        let live = |x: Block| x != b[13] && x != b[2];
        let l = iterated_frontier(&df, &[b[1], b[4], b[5], b[10]], Some(&live));
        assert_eq!(idx(&b, &l), vec![6, 8, 9, 11]);
    }

    #[test]
    fn while_loop_frontiers() {
        // entry 0 -> header 1 -> {body 2, exit 3}; body 2 -> 1.
        let (f, b) = cfg_func(4, &[(0, 1), (1, 2), (1, 3), (2, 1)]);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        let df = DominanceFrontiers::compute(&f, &cfg, &dt);
        assert_eq!(idx(&b, df.frontier(b[0])), Vec::<usize>::new());
        assert_eq!(idx(&b, df.frontier(b[1])), vec![1]);
        assert_eq!(idx(&b, df.frontier(b[2])), vec![1]);
        assert_eq!(idx(&b, df.frontier(b[3])), Vec::<usize>::new());
        // A variable assigned in the body needs a parameter at the header only.
        assert_eq!(idx(&b, &iterated_frontier(&df, &[b[2]], None)), vec![1]);
    }

    #[test]
    fn both_arms_to_the_same_block_is_one_frontier_entry() {
        // 0 -> {1, 1}, 1 -> 2, and 0 -> ... : a br whose arms coincide.
        let (f, b) = cfg_func(3, &[(0, 1), (0, 1), (1, 2)]);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        let df = DominanceFrontiers::compute(&f, &cfg, &dt);
        for &x in &b {
            assert!(df.frontier(x).is_empty());
        }
    }
}
