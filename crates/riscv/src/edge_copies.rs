//! Copies of a loop's back edge moved out of their edge block, above the loop's
//! exit test.
//!
//! Instruction selection splits a critical edge that carries block-argument copies
//! ([`crate::isel`]): a block `b` ending in `br c, E, X` whose arm `E` stays in the
//! loop gets an edge block `E` of copies followed by a jump to the header. Every
//! trip then runs one more block, and the copies wait for the branch to resolve.
//! When none of the copies' destinations is live into the other successor `X`,
//! the copies can run in `b` before its branch instead: on the way to `X` they
//! write registers nobody reads. `b` then branches straight to the header, `E`
//! goes away, and the copies issue beside the branch. A pointer-chasing loop whose
//! next pointer is loaded before the exit test (`crate::speculate`) keeps its
//! back-edge copy `mv p, next` off the critical path this way.
//!
//! This is LLVM's PHI elimination placing copies in the predecessor and splitting
//! a critical edge only when the copied register is live into another successor
//! (`PHIElimination::SplitPHIEdges` asks `LiveVariables::isLiveIn`). It is done
//! only where the other successor leaves `b`'s innermost loop and the edge stays
//! in it: the copies then run once more per loop exit, and the loop saves them a
//! block on every trip.
//!
//! It runs after register allocation (the copies' destinations are physical
//! registers, their liveness exact) and before frame layout, so shrink-wrapping
//! sees where the copies went; a return reads the callee-saved registers
//! ([`allocated_liveness`]), so a copy into one is never moved onto a path that
//! returns.

use crate::liveness::{allocated_liveness, reg_bit, RegMask};
use crate::loops::{loop_info, LoopInfo};
use crate::mir::{MBlock, MFunction, MInst};

/// Moves the copies of back-edge blocks above their loop's exit tests (see the
/// module comment); how many edge blocks went away.
///
/// Whether a block's copies move is decided for every block at once, on up to
/// `jobs` threads ([`ir::parallel`]), on the function as it is; the moves are
/// then made in layout order, and a decision that read a block an earlier move
/// changed (the block its copies reach, when that block took copies of its own
/// and comes first in the layout; or an edge block the move emptied) is taken
/// again on the function as it is then. So the result is what deciding and
/// moving block by block gives, whatever the number of threads.
pub fn run(mf: &mut MFunction, jobs: usize) -> usize {
    move_copies(mf, jobs).moved
}

/// What [`run`] did.
#[derive(Default, Debug, PartialEq, Eq)]
struct Outcome {
    /// Edge blocks whose copies moved.
    moved: usize,
    /// Decisions taken again because a block they read had changed.
    decided_again: usize,
}

fn move_copies(mf: &mut MFunction, jobs: usize) -> Outcome {
    let info = loop_info(mf);
    if info.loops.is_empty() {
        return Outcome::default();
    }
    let (live_in, _) = allocated_liveness(mf);
    // Blocks another one may fall into (the block before them in the layout does
    // not end in a barrier): their predecessors are not all branches to them.
    let mut fallen_into = vec![false; mf.blocks.len()];
    for w in mf.layout.windows(2) {
        fallen_into[w[1].index()] = !mf.blocks[w[0]].insts.last().is_some_and(MInst::is_barrier);
    }
    let ctx = Context {
        info,
        live_in,
        fallen_into,
    };
    let frozen: &MFunction = mf;
    let decisions = ir::parallel::map_in_order(
        &frozen.layout,
        jobs,
        |&b| frozen.blocks[b].insts.len(),
        |&b| ctx.decide(frozen, b),
    );
    let mut changed = vec![false; mf.blocks.len()];
    let mut outcome = Outcome::default();
    for (k, decision) in decisions.into_iter().enumerate() {
        let b = mf.layout[k];
        let decision = if decision.read.iter().any(|r| changed[r.index()]) {
            outcome.decided_again += 1;
            ctx.decide(mf, b)
        } else {
            decision
        };
        let Some(Move { edge, header }) = decision.to_move else {
            continue;
        };
        let copies: Vec<MInst> = {
            let insts = &mf.blocks[edge].insts;
            insts[..insts.len() - 1].to_vec()
        };
        let insts = &mut mf.blocks[b].insts;
        let n = insts.len();
        for k in [n - 2, n - 1] {
            match &mut insts[k] {
                MInst::Branch { target, .. } | MInst::Jump { target } if *target == edge => {
                    *target = header
                }
                _ => {}
            }
        }
        insts.splice(n - 2..n - 2, copies);
        // The edge block is unreachable now; peephole drops it.
        mf.blocks[edge].insts = vec![MInst::Jump { target: header }];
        changed[b.index()] = true;
        changed[edge.index()] = true;
        outcome.moved += 1;
    }
    outcome
}

/// What the decisions read besides the blocks' code: computed once before any
/// move, as deciding block by block always did (the moves change no loop and
/// no predecessor list; the live-in sets are those of the function before them).
struct Context {
    info: LoopInfo,
    live_in: Vec<RegMask>,
    fallen_into: Vec<bool>,
}

/// The copies of the edge block `edge`, which jumps to `header`, go up into the
/// block branching to it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Move {
    edge: MBlock,
    header: MBlock,
}

/// Whether a block's copies move, and the blocks whose code that depended on.
struct Decision {
    to_move: Option<Move>,
    read: Vec<MBlock>,
}

impl Context {
    /// Whether the copies of one of `b`'s edge blocks move up into `b` (its taken
    /// arm's first, then its fall-through's).
    fn decide(&self, mf: &MFunction, b: MBlock) -> Decision {
        let mut read = vec![b];
        let to_move = self.edge_to_move(mf, b, &mut read);
        Decision { to_move, read }
    }

    fn edge_to_move(&self, mf: &MFunction, b: MBlock, read: &mut Vec<MBlock>) -> Option<Move> {
        let info = &self.info;
        let l = info.innermost(b)?;
        let insts = &mf.blocks[b].insts;
        let n = insts.len();
        let (Some(&MInst::Branch { target: t, .. }), Some(&MInst::Jump { target: f })) =
            (n.checked_sub(2).map(|k| &insts[k]), insts.last())
        else {
            return None;
        };
        for (edge, other) in [(t, f), (f, t)] {
            if edge == other
                || edge == b
                || info.preds[edge.index()][..] != [b]
                || self.fallen_into[edge.index()]
            {
                continue;
            }
            read.push(edge);
            let Some(header) = copies_then_jump(&mf.blocks[edge].insts) else {
                continue;
            };
            if !info.contains(l, header) || info.contains(l, other) {
                continue;
            }
            let copies = &mf.blocks[edge].insts[..mf.blocks[edge].insts.len() - 1];
            let branch = &insts[n - 2];
            let mut written = 0;
            for c in copies {
                c.for_each_def(|d| written |= reg_bit(d));
            }
            let mut branch_reads = 0;
            branch.for_each_use(|u| branch_reads |= reg_bit(u));
            if written & (self.live_in[other.index()] | branch_reads) != 0 {
                continue;
            }
            read.push(header);
            if saves_cycles(insts, copies, &mf.blocks[header].insts, header == b) {
                return Some(Move { edge, header });
            }
        }
        None
    }
}

/// Whether the trip through `b` and on into the header takes no more cycles in
/// the timing model ([`crate::u74`]) with `copies` at the end of `b` (before
/// its branch) than at the start of the header, each block list-scheduled
/// ([`crate::schedule::schedule_block`]). A copy whose destination the header
/// reads at once waits less beside `b`'s branch; one whose source `b`
/// computes last, or whose destination `b` still reads late, would lengthen
/// `b` instead.
fn saves_cycles(b: &[MInst], copies: &[MInst], header: &[MInst], header_is_b: bool) -> bool {
    let scheduled = |code: Vec<MInst>| {
        let mut code = code;
        crate::schedule::schedule_block(&mut code);
        crate::u74::cycles(&code)
    };
    let n = b.len();
    let mut moved = b[..n - 2].to_vec();
    moved.extend_from_slice(copies);
    moved.extend_from_slice(&b[n - 2..]);
    let before = scheduled(b.to_vec()) + scheduled([copies, header].concat());
    let moved_cycles = scheduled(moved);
    // When `b` is the header, the trip runs the moved code twice: scheduled once.
    let header_after = if header_is_b {
        moved_cycles
    } else {
        scheduled(header.to_vec())
    };
    moved_cycles + header_after <= before
}

/// The jump target of a block of register copies (at least one) ending in a jump.
fn copies_then_jump(insts: &[MInst]) -> Option<MBlock> {
    crate::mir::copies_then_jump(insts)
        .filter(|(copies, _)| !copies.is_empty())
        .map(|(_, target)| target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{parse_function, print_function};

    /// One loop of two copy blocks: the header bb1 leaves the loop or goes on
    /// through the edge block bb2 to bb3, which leaves it or goes back through the
    /// edge block bb4. bb3 is laid out first, so its copies move first, and the
    /// decision for bb1, whose copies reach bb3, was taken on bb3 as it was.
    fn ring(b: [u32; 6]) -> String {
        let [h, e1, x, e2, out1, out2] = b;
        format!(
            "bb{x}:\n  addi a5, a5, -1\n  lw t3, 0(a4)\n  mulw a7, a7, t3\n  bne a5, zero, bb{e2}\n  j bb{out2}\n\
             bb{e2}:\n  mv a0, a5\n  j bb{h}\n\
             bb{h}:\n  slli t0, a0, 2\n  add t1, a3, t0\n  lw a1, 0(t1)\n  mulw a7, a7, a7\n  bne a1, zero, bb{e1}\n  j bb{out1}\n\
             bb{e1}:\n  mv a4, t1\n  j bb{x}\n"
        )
    }

    fn one_ring() -> String {
        format!(
            "function ring local\nbb0:\n  j bb1\n{}bb5:\n  li a0, 0\n  ret a0\nbb6:\n  li a0, 1\n  ret a0\nend\n",
            ring([1, 2, 3, 4, 5, 6])
        )
    }

    fn moved(text: &str, jobs: usize) -> (Outcome, String) {
        let mut mf = parse_function(text).unwrap();
        let outcome = move_copies(&mut mf, jobs);
        (outcome, print_function(&mf))
    }

    #[test]
    fn both_copy_blocks_of_a_loop_move_up() {
        let (outcome, text) = moved(&one_ring(), 1);
        // bb3's copies moved first, then bb1's decision, which read bb3, was
        // taken again, as were those of the two edge blocks, each emptied by the
        // move before its turn.
        let both = Outcome {
            moved: 2,
            decided_again: 3,
        };
        assert_eq!(outcome, both, "{text}");
        assert!(
            text.contains("  mv a4, t1\n  bne a1, zero, bb3\n"),
            "{text}"
        );
        assert!(
            text.contains("  mv a0, a5\n  bne a5, zero, bb1\n"),
            "{text}"
        );
    }

    #[test]
    fn a_decision_reads_the_block_its_copies_reach() {
        let mf = parse_function(&one_ring()).unwrap();
        let info = loop_info(&mf);
        let (live_in, _) = allocated_liveness(&mf);
        let ctx = Context {
            info,
            live_in,
            fallen_into: vec![false; mf.blocks.len()],
        };
        let d = ctx.decide(&mf, MBlock(1));
        let to_x = Move {
            edge: MBlock(2),
            header: MBlock(3),
        };
        assert_eq!(d.to_move, Some(to_x));
        assert!(d.read.contains(&MBlock(3)), "{:?}", d.read);
    }

    #[test]
    fn the_moves_do_not_depend_on_the_number_of_threads() {
        // Rings in sequence, each leaving into the next: many blocks, so the
        // decisions are spread over threads.
        let rings = 40;
        let mut text = String::from("function many local\nbb0:\n  j bb1\n");
        for k in 0..rings {
            let b = 1 + 6 * k;
            let next = b + 6;
            text += &ring([b, b + 1, b + 2, b + 3, b + 4, b + 5]);
            // The second exit sets a0, which the next ring's header reads.
            text += &format!(
                "bb{}:\n  j bb{next}\nbb{}:\n  li a0, 1\n  j bb{next}\n",
                b + 4,
                b + 5
            );
        }
        text += &format!("bb{}:\n  li a0, 0\n  ret a0\nend\n", 1 + 6 * rings);
        let one = moved(&text, 1);
        let all = Outcome {
            moved: 2 * rings as usize,
            decided_again: 3 * rings as usize,
        };
        assert_eq!(one.0, all, "{}", one.1);
        for jobs in [2, 3, 8] {
            assert_eq!(moved(&text, jobs), one, "{jobs} threads");
        }
    }
}
