//! The blocks of each loop that hold `gep`s, for strength reduction to scan: an
//! ordered set of reverse post-order positions, queried with the range of
//! positions a loop's blocks lie in ([`crate::analysis::loops::LoopBlocks::rpo_range`])
//! and filtered by membership. Scanning every block of every loop instead costs
//! the square of the depth of a nest (each block is in every loop around it);
//! this costs the blocks with `gep`s once per loop around them (or, for a loop
//! whose positions span far more than its blocks, its own blocks). Positions stay
//! valid (strength reduction changes no edge); the blocks that receive new `gep`s
//! are added as they do.

use crate::analysis::{LoopForest, LoopId};
use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, InstKind, SecondaryMap};
use std::collections::BTreeSet;

/// The blocks holding `gep`s, by position in the reverse post-order.
pub struct GepBlocks {
    rpo: Vec<Block>,
    pos: SecondaryMap<Block, usize>,
    with_geps: BTreeSet<usize>,
}

impl GepBlocks {
    /// Indexes the reachable blocks of `f` (in `cfg`'s order) that hold `gep`s.
    pub fn new(f: &Function, cfg: &ControlFlowGraph) -> Self {
        let mut g = GepBlocks {
            rpo: cfg.rpo().to_vec(),
            pos: SecondaryMap::new(),
            with_geps: BTreeSet::new(),
        };
        for (i, &b) in cfg.rpo().iter().enumerate() {
            g.pos[b] = i;
            let mut insts = f.layout.block_insts(b);
            if insts.any(|i| matches!(f.kind(i), InstKind::Gep { .. })) {
                g.with_geps.insert(i);
            }
        }
        g
    }

    /// The blocks of loop `id` that may hold `gep`s, in reverse post-order (the
    /// order of [`crate::analysis::Loop::blocks`]).
    pub fn of_loop(&self, loops: &LoopForest, id: LoopId) -> Vec<Block> {
        let blocks = &loops.get(id).blocks;
        let range = blocks.rpo_range();
        // A loop whose positions span much more than its blocks (its body placed
        // after the code that follows it) is scanned by its own list instead:
        // otherwise a sequence of such loops costs the square of their number.
        if blocks.len() * 4 < range.len() {
            return blocks
                .iter()
                .copied()
                .filter(|b| self.with_geps.contains(&self.pos[*b]))
                .collect();
        }
        self.with_geps
            .range(range)
            .map(|&i| self.rpo[i])
            .filter(|&b| loops.contains(id, b))
            .collect()
    }

    /// `b` may hold `gep`s from now on.
    pub fn add(&mut self, b: Block) {
        self.with_geps.insert(self.pos[b]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::analysis::DominatorTree;

    /// The blocks scanned for a loop are its blocks holding geps, in reverse
    /// post-order, and the blocks that receive geps (the inner loop's preheader,
    /// inside the outer loop) join them.
    #[test]
    fn gep_blocks_of_a_nest() {
        let src = r#"
global @b: [i32; 64] = [1, 2, 3]

func @main() -> i32 {
bb0:
  jump bb1(1)
bb1(%0: i32):
  jump bb2(0, 0)
bb2(%1: i32, %2: i32):
  %3 = gep @b, %1, 32
  %4 = gep %3, %0, 4
  %5 = load i32, %4
  %6 = add %2, %5
  %7 = add %1, 1
  %8 = slt %7, 7
  br %8, bb2(%7, %6), bb3
bb3:
  %9 = add %0, 1
  %10 = slt %9, 7
  br %10, bb1(%9), bb4
bb4:
  ret %6
}
"#;
        let m = ir::parse_module(src).unwrap();
        let f = &m.funcs[m.func_by_name("main").unwrap()];
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let loops = LoopForest::compute(f, &cfg, &dt);
        let b: Vec<Block> = f.layout.blocks().collect();
        let (inner, outer) = (
            loops.innermost(b[2]).unwrap(),
            loops.innermost(b[1]).unwrap(),
        );
        let mut geps = GepBlocks::new(f, &cfg);
        assert_eq!(geps.of_loop(&loops, inner), [b[2]]);
        assert_eq!(geps.of_loop(&loops, outer), [b[2]]);
        geps.add(b[1]);
        geps.add(b[4]);
        assert_eq!(geps.of_loop(&loops, outer), [b[1], b[2]]);
        assert_eq!(geps.of_loop(&loops, inner), [b[2]]);
    }
}
