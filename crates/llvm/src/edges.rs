//! From block arguments to `phi` nodes: which LLVM block each incoming edge of a block
//! comes from, and which edges need a block of their own.
//!
//! Block parameters are phis in disguise: parameter `i` of block `B` becomes
//! `phi [arg_i, %P]` with one entry per edge `P -> B`. LLVM identifies an edge by its
//! source block and requires one entry per predecessor edge, equal values for equal
//! sources (LLVM Language Reference, `phi`). A `br` whose two arms go to the same block
//! therefore cannot pass different arguments; the standard fix (as in Cranelift's and
//! Koopa's LLVM back ends, and critical-edge splitting in general) is to route one arm
//! through a new block holding only `br label %B`:
//!
//! - `br c, B(x), B(x)` (or without arguments) is an unconditional jump: same target,
//!   same values, so the condition does not matter.
//! - `br c, B(x), B(y)` with `x != y`: the else-arm is split.
//!
//! Only edges from reachable blocks count: unreachable blocks are not emitted at all
//! (LLVM rejects a phi without entries, which a parameter of a block that nothing
//! reachable branches to would need, and no reachable code can use their values).
//!
//! The function's own LLVM entry block (holding the hoisted `alloca`s) jumps to the IR
//! entry block, so when the IR entry block is also a branch target its parameters
//! become phis whose entry-edge values are the function's arguments.

use ir::analysis::cfg::ControlFlowGraph;
use ir::{Block, BlockCall, Function, InstKind, SecondaryMap, Value};

/// How a `br` instruction is emitted.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum BrShape {
    /// Two different targets: a plain conditional branch.
    Distinct,
    /// Same target, same arguments: an unconditional branch.
    Merged,
    /// Same target, different arguments: the else-arm goes through a split block.
    SplitElse,
}

/// The shape of `br _, then_dest, else_dest`.
pub fn br_shape(then_dest: &BlockCall, else_dest: &BlockCall) -> BrShape {
    if then_dest.block != else_dest.block {
        BrShape::Distinct
    } else if then_dest.args == else_dest.args {
        BrShape::Merged
    } else {
        BrShape::SplitElse
    }
}

/// Where an edge into a block comes from.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Incoming {
    /// The LLVM entry block; values are the function's arguments.
    Entry,
    /// The end of IR block `.0`, passing `.1`.
    Block(Block, Vec<Value>),
    /// The split block on the else-arm of IR block `.0`'s `br`, passing `.1`.
    Split(Block, Vec<Value>),
}

/// Every block's incoming edges, in layout order of their sources.
pub struct EdgePlan {
    /// Whether each block is reachable from the entry (and so emitted).
    pub reachable: SecondaryMap<Block, bool>,
    /// The incoming edges of each reachable block.
    pub incoming: SecondaryMap<Block, Vec<Incoming>>,
}

impl EdgePlan {
    /// Collects the edges of `f`, a function with a body.
    pub fn new(f: &Function, entry: Block) -> EdgePlan {
        let mut reachable: SecondaryMap<Block, bool> = SecondaryMap::new();
        for &b in ControlFlowGraph::compute(f).rpo() {
            reachable[b] = true;
        }
        let mut incoming: SecondaryMap<Block, Vec<Incoming>> = SecondaryMap::new();
        let blocks: Vec<Block> = f.layout.blocks().filter(|&b| reachable[b]).collect();
        let entry_has_preds = blocks.iter().any(|&b| f.successors(b).contains(&entry));
        if entry_has_preds {
            incoming[entry].push(Incoming::Entry);
        }
        for &b in &blocks {
            let Some(term) = f.terminator(b) else {
                continue;
            };
            match f.kind(term) {
                InstKind::Jump { dest } => {
                    incoming[dest.block].push(Incoming::Block(b, dest.args.to_vec()));
                }
                InstKind::Br {
                    then_dest,
                    else_dest,
                    ..
                } => {
                    let (t, e) = (then_dest.block, else_dest.block);
                    match br_shape(then_dest, else_dest) {
                        BrShape::Distinct => {
                            incoming[t].push(Incoming::Block(b, then_dest.args.to_vec()));
                            incoming[e].push(Incoming::Block(b, else_dest.args.to_vec()));
                        }
                        BrShape::Merged => {
                            incoming[t].push(Incoming::Block(b, then_dest.args.to_vec()));
                        }
                        BrShape::SplitElse => {
                            incoming[t].push(Incoming::Block(b, then_dest.args.to_vec()));
                            incoming[e].push(Incoming::Split(b, else_dest.args.to_vec()));
                        }
                    }
                }
                _ => {}
            }
        }
        EdgePlan {
            reachable,
            incoming,
        }
    }

    /// Whether the IR entry block is a branch target (so its parameters are phis).
    pub fn entry_is_target(&self, entry: Block) -> bool {
        self.incoming[entry].first() == Some(&Incoming::Entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::{FuncBuilder, Signature, Type};

    #[test]
    fn same_target_arms_merge_or_split() {
        let mut f = Function::new(
            "f",
            Signature {
                params: vec![Type::I32],
                ret: Type::I32,
                variadic: false,
            },
        );
        let b0 = f.append_new_block();
        let x = f.append_block_param(b0, Type::I32);
        let b1 = f.append_new_block();
        let p = f.append_block_param(b1, Type::I32);
        let b2 = f.append_new_block();
        let mut fb = FuncBuilder::new(&mut f);
        fb.switch_to_block(b0);
        let one = fb.iconst(1);
        fb.br(x, b1, vec![x], b1, vec![one]);
        fb.switch_to_block(b1);
        fb.br(p, b2, vec![], b2, vec![]);
        fb.switch_to_block(b2);
        fb.jump(b0, vec![one]);
        // Unreachable, so its edge into b2 does not count.
        let b3 = fb.func.append_new_block();
        fb.switch_to_block(b3);
        fb.jump(b2, vec![]);

        let plan = EdgePlan::new(&f, b0);
        assert_eq!(
            plan.incoming[b1],
            vec![Incoming::Block(b0, vec![x]), Incoming::Split(b0, vec![one])]
        );
        assert_eq!(plan.incoming[b2], vec![Incoming::Block(b1, vec![])]);
        assert!(plan.entry_is_target(b0));
        assert!(!plan.reachable[b3]);
        assert_eq!(
            plan.incoming[b0],
            vec![Incoming::Entry, Incoming::Block(b2, vec![one])]
        );
    }
}
