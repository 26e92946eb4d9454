//! Control-flow editing helpers shared by the passes.

use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, Inst, InstKind, Value};

/// Removes the blocks not reachable from the entry, with their instructions and the
/// arguments their branches passed. Returns whether any block was removed.
///
/// Values defined in unreachable blocks can only be used in unreachable blocks (uses
/// must be dominated by their definitions), so all of them are dropped together: first
/// every instruction of those blocks loses its operands, then the blocks go.
pub fn remove_unreachable_blocks(f: &mut Function) -> bool {
    if f.is_declaration() {
        return false;
    }
    let cfg = ControlFlowGraph::compute(f);
    let mut reachable = f.block_map::<bool>();
    for &b in cfg.rpo() {
        reachable[b] = true;
    }
    let dead: Vec<Block> = f.layout.blocks().filter(|&b| !reachable[b]).collect();
    if dead.is_empty() {
        return false;
    }
    for &b in &dead {
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for i in insts {
            f.replace_kind(i, InstKind::Ret { value: None });
        }
    }
    for &b in &dead {
        f.remove_block(b);
    }
    true
}

/// The edge from `from` to `to` when `from`'s terminator has exactly one target
/// `to`: which target it is, and the arguments it passes. (Two edges between the
/// same blocks carry different facts and arguments; callers asking about "the"
/// edge skip them.)
pub fn single_edge(f: &Function, from: Block, to: Block) -> Option<(usize, &[Value])> {
    let targets = f.kind(f.terminator(from)?).targets();
    let mut to_b = targets.iter().enumerate().filter(|(_, t)| t.block == to);
    match (to_b.next(), to_b.next()) {
        (Some((which, call)), None) => Some((which, &call.args[..])),
        _ => None,
    }
}
