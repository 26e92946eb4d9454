//! Control-flow editing helpers shared by the passes. Unreachable blocks are found
//! by a depth-first search along successors ([`reachable_blocks`]).

#[cfg(doc)]
use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, Inst, InstKind, SecondaryMap, Value};

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
    let reachable = reachable_blocks(f);
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

/// The blocks reachable from the entry: a depth-first search along successors,
/// without the predecessor lists and order a full [`ControlFlowGraph`] builds.
pub fn reachable_blocks(f: &Function) -> SecondaryMap<Block, bool> {
    let mut reachable = f.block_map::<bool>();
    let entry = f.entry_block();
    reachable[entry] = true;
    let mut stack = vec![entry];
    while let Some(b) = stack.pop() {
        for s in f.successors(b) {
            if !reachable[s] {
                reachable[s] = true;
                stack.push(s);
            }
        }
    }
    reachable
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

/// Appends `arg` to the arguments of every edge from `pred` to `b` (for a
/// parameter just appended to `b`; a branch with both arms into `b` passes it
/// on each).
pub fn append_edge_arg(f: &mut Function, pred: Block, b: Block, arg: Value) {
    let Some(term) = f.terminator(pred) else {
        return;
    };
    let n = f.kind(term).targets().len();
    for which in 0..n {
        let mut t = f.kind(term).targets()[which].clone();
        if t.block == b {
            t.args.push(arg);
            f.set_target(term, which, t);
        }
    }
}

/// Puts edge `which` of `from`'s terminator on a block of its own, laid out
/// after `from`, that jumps on with the edge's arguments; returns that jump
/// (code for the edge alone goes before it).
pub fn split_edge(f: &mut Function, from: Block, which: usize) -> Inst {
    let term = f.terminator(from).expect("a block ends in a branch");
    let target = f.kind(term).targets()[which].clone();
    let e = f.create_block();
    f.layout.insert_block_after(e, from);
    let jump = f.append_inst(
        e,
        InstKind::Jump {
            dest: Box::new(target),
        },
        ir::Type::Void,
    );
    f.set_target(term, which, ir::BlockCall::new(e, Vec::new()));
    jump
}

/// Merges block `s` into `b`, whose terminator is a `jump` to `s` and `s`'s only
/// predecessor: `s`'s parameters are replaced by the jump's arguments and its
/// instructions follow `b`'s, in place of the jump.
pub fn merge_into_predecessor(f: &mut Function, b: Block, s: Block) {
    let t = f.terminator(b).expect("the predecessor ends in a jump");
    let InstKind::Jump { dest } = f.kind(t).clone() else {
        panic!("merge_into_predecessor: {b} does not end in a jump");
    };
    debug_assert_eq!(dest.block, s);
    let params = f.block_params(s).to_vec();
    for (p, a) in params.into_iter().zip(dest.args) {
        f.replace_all_uses(p, a);
    }
    f.remove_inst(t);
    let insts: Vec<Inst> = f.layout.block_insts(s).collect();
    for i in insts {
        f.layout.remove_inst(i);
        f.layout.append_inst(i, b);
    }
    f.remove_block(s);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testcfg::{cfg_func, CYTRON_FIG5};
    use ir::analysis::ControlFlowGraph;

    /// The search finds the blocks of the CFG's reverse post-order, on the paper
    /// figure and on random graphs with unreachable parts.
    #[test]
    fn reachable_blocks_are_those_of_the_reverse_post_order() {
        let mut graphs = vec![(14, CYTRON_FIG5.to_vec())];
        let mut state = 7u64;
        let mut next = |m: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % m
        };
        for _ in 0..200 {
            let n = 2 + next(30);
            let mut edges = Vec::new();
            for b in 0..n {
                for _ in 0..next(3) {
                    edges.push((b, next(n)));
                }
            }
            graphs.push((n, edges));
        }
        for (n, edges) in graphs {
            let (f, blocks) = cfg_func(n, &edges);
            let cfg = ControlFlowGraph::compute(&f);
            let reachable = reachable_blocks(&f);
            for &b in &blocks {
                assert_eq!(reachable[b], cfg.rpo().contains(&b), "{b} in {edges:?}");
            }
        }
    }
}
