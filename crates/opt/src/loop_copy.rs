//! Copying a whole loop, for the transformations that duplicate one (peeling,
//! unswitching): every block with its parameters and instructions, edges inside the
//! loop redirected to the copies, exits kept. The values the loop defines then have
//! two definitions, and [`LoopCopy::repair_uses_outside`] gives the blocks beyond
//! the loop the parameters that merge them (the SSA updater, [`crate::ssa::update`]).

use crate::analysis::loops::Loop;
use crate::ssa::update::repair_uses;
use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, Inst, Type, Value};
use rustc_hash::{FxHashMap, FxHashSet};

/// A copy of a loop: each block's and each value's counterpart.
pub struct LoopCopy {
    pub blocks: FxHashMap<Block, Block>,
    pub values: FxHashMap<Value, Value>,
}

impl LoopCopy {
    /// Copies loop `lp` of `f`, placing the copy before the loop. The copy's back
    /// edges go to the original header when `back_to_original` (the copy is then a
    /// first iteration, run once), else to the copy's own header (a second loop).
    /// Nothing enters the copy yet.
    pub fn new(f: &mut Function, lp: &Loop, back_to_original: bool) -> LoopCopy {
        let h = lp.header;
        let mut values: FxHashMap<Value, Value> = FxHashMap::default();
        let mut blocks: FxHashMap<Block, Block> = FxHashMap::default();
        let mut after = f
            .layout
            .prev_block(h)
            .expect("a loop header is not the entry");
        for &b in &lp.blocks {
            let nb = f.create_block();
            f.layout.insert_block_after(nb, after);
            after = nb;
            blocks.insert(b, nb);
            for p in f.block_params(b).to_vec() {
                let ty = f.value_type(p);
                let np = f.append_block_param(nb, ty);
                values.insert(p, np);
            }
        }
        // Blocks in reverse postorder: a value is copied before its uses (phis'
        // arguments on back edges excepted, which are mapped after the loop below).
        for &b in &lp.blocks {
            let nb = blocks[&b];
            let insts: Vec<Inst> = f.layout.block_insts(b).collect();
            for i in insts {
                let kind = f.kind(i).clone();
                let ty = f.inst_result(i).map_or(Type::Void, |r| f.value_type(r));
                let c = f.append_inst(nb, kind, ty);
                f.copy_src_loc(i, c);
                if let (Some(r), Some(cr)) = (f.inst_result(i), f.inst_result(c)) {
                    values.insert(r, cr);
                }
            }
        }
        for &b in &lp.blocks {
            let nb = blocks[&b];
            let insts: Vec<Inst> = f.layout.block_insts(nb).collect();
            for i in insts {
                let mut kind = f.kind(i).clone();
                kind.map_args(|a| {
                    if let Some(&c) = values.get(a) {
                        *a = c;
                    }
                });
                for t in kind.targets_mut() {
                    if t.block == h && back_to_original {
                        continue;
                    }
                    if let Some(&nt) = blocks.get(&t.block) {
                        t.block = nt;
                    }
                }
                f.replace_kind(i, kind);
            }
        }
        LoopCopy { blocks, values }
    }

    /// Rewrites the uses beyond both copies of values `lp` defines, once the copy is
    /// entered: each reads whichever copy's definition reaches it. Returns the block
    /// parameters created, for [`crate::ssa::remove_trivial_params`] once the CFG is final.
    pub fn repair_uses_outside(&self, f: &mut Function, lp: &Loop) -> Vec<Value> {
        repair_uses_outside(f, lp, std::slice::from_ref(self))
    }
}

/// [`LoopCopy::repair_uses_outside`] for any number of copies of `lp`: each value
/// `lp` defines has its original definition and one per copy.
pub fn repair_uses_outside(f: &mut Function, lp: &Loop, copies: &[LoopCopy]) -> Vec<Value> {
    let cfg = ControlFlowGraph::compute(f);
    let all: FxHashSet<Block> = lp
        .blocks
        .iter()
        .copied()
        .chain(copies.iter().flat_map(|c| c.blocks.values().copied()))
        .collect();
    let inside = |b: Block| all.contains(&b);
    // What the loop defined when copied: the repair itself adds parameters
    // (to blocks of the loop too), which have no counterpart.
    let defined: Vec<(Block, Value)> = lp
        .blocks
        .iter()
        .flat_map(|&b| f.block_values(b).into_iter().map(move |v| (b, v)))
        .collect();
    let mut created = Vec::new();
    for (b, v) in defined {
        let mut defs = vec![(b, v)];
        for c in copies {
            defs.push((c.blocks[&b], c.values[&v]));
        }
        created.extend(repair_uses(f, &cfg, v, &defs, inside));
    }
    created
}
