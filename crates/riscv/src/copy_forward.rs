//! Copies removed after placement by forwarding their source to the readers of
//! their destination: forward copy propagation over extended basic blocks.
//!
//! This is the forward half of LLVM's `MachineCopyPropagation` (GCC's `cprop_hardreg`,
//! `regcprop.c`, does the same over extended basic blocks): after `mv p, x`, an
//! instruction that reads `p` while `x` still holds the same value may read `x`
//! instead; when every reader of the copied value has been rewritten so, the copy is
//! dead. Block placement and tail duplication ([`crate::tail_dup`]) leave such copies
//! behind: the copy an edge into a join needed for a block argument (the join's
//! value is still live in another register) ends up in a block that falls into its
//! own copy of the join, whose compare can read the source directly, so the copy no
//! longer sits between a computation and the compare that waits for it.
//!
//! For `mv p, x` (`p`, `x` distinct allocatable registers of one file), the walk goes
//! forward from the copy, into the next block when the current one ends by falling
//! or jumping into a block with no other way in (an extended basic block), and
//! - an instruction reading `p` is rewritten to read `x`, unless `x` was written since
//!   the copy, or it is a call, a tail call or a return (they read `p` by number);
//! - an instruction writing `p` ends the walk: the copied value is dead;
//! - a branch to a block into which `p` is live, or the end of a block out of which
//!   `p` is live (other than into the next block of the walk), or a return when `p`
//!   is callee-saved or a result register (the caller reads it), keeps the copy.
//!
//! Liveness is [`allocated_liveness`], computed once and updated after a removal whose
//! walk left its block: the source register is then live along the walked blocks up
//! to its last new reader (the copied register's sets are left as they were, an
//! over-approximation that only keeps more copies).

use crate::abi;
use crate::liveness::{allocated_liveness, reg_bit, RegMask};
use crate::mir::{MBlock, MFunction, MInst, Reg};

/// Removes the copies of `mf` whose value forwarding makes dead; returns how many
/// went. Runs on final layout, with jumps to the next block removed.
pub fn run(mf: &mut MFunction) -> usize {
    let mut entries = vec![0usize; mf.blocks.len()];
    for (k, &b) in mf.layout.iter().enumerate() {
        for s in mf.succs(b) {
            entries[s.index()] += 1;
        }
        if let (true, Some(&next)) = (falls_through(mf, b), mf.layout.get(k + 1)) {
            entries[next.index()] += 1;
        }
    }
    if let Some(&entry) = mf.layout.first() {
        entries[entry.index()] += 1;
    }
    let mut liveness = allocated_liveness(mf);
    let mut position = vec![None; mf.blocks.len()];
    for (k, &b) in mf.layout.iter().enumerate() {
        position[b.index()] = Some(k);
    }
    let mut removed = 0;
    for k in 0..mf.layout.len() {
        let b = mf.layout[k];
        let mut e = 0;
        while e < mf.blocks[b].insts.len() {
            let MInst::Mv { rd: p, rs: x } = mf.blocks[b].insts[e] else {
                e += 1;
                continue;
            };
            let candidate = p != x
                && abi::is_allocatable(p)
                && abi::is_allocatable(x)
                && p.is_phys()
                && x.is_phys()
                && p.phys_class() == x.phys_class();
            let plan = if candidate {
                walk(mf, &entries, &position, &liveness, k, e, p, x)
            } else {
                None
            };
            let Some((readers, chain)) = plan else {
                e += 1;
                continue;
            };
            // `x` is now read up to the last reader's block of the walk.
            if let Some(&(last, _)) = readers.last() {
                let upto = chain.iter().position(|&c| c == last).unwrap_or(0);
                for (j, &c) in chain[..=upto].iter().enumerate() {
                    if j > 0 {
                        liveness.0[c.index()] |= reg_bit(x);
                    }
                    if j < upto {
                        liveness.1[c.index()] |= reg_bit(x);
                    }
                }
            }
            for (rb, ri) in readers {
                mf.blocks[rb].insts[ri].map_regs(|r, def| {
                    if !def && *r == p {
                        *r = x;
                    }
                });
            }
            mf.blocks[b].insts.remove(e);
            removed += 1;
        }
    }
    removed
}

/// Whether `r` may carry a result out of the function (`a0`, `a1`, `fa0`, `fa1`):
/// a return reads it whether or not it names it.
fn result_reg(r: Reg) -> bool {
    (0..2).any(|i| r == abi::int_arg_reg(i) || r == abi::float_arg_reg(i))
}

/// Whether `b` may continue into the next block of the layout.
fn falls_through(mf: &MFunction, b: MBlock) -> bool {
    !mf.blocks[b].insts.last().is_some_and(MInst::is_barrier)
}

/// What [`walk`] found: the readers (block, index) and the blocks walked, in order.
type Walked = (Vec<(MBlock, usize)>, Vec<MBlock>);

/// The instructions (block, index) that read the value `mv p, x` at index `e` of
/// the `k`-th block of the layout copies, when all of them can read `x` instead and
/// the copied value is needed nowhere else, and the blocks walked, in order.
#[allow(clippy::too_many_arguments)]
fn walk(
    mf: &MFunction,
    entries: &[usize],
    position: &[Option<usize>],
    (live_in, live_out): &(Vec<RegMask>, Vec<RegMask>),
    mut k: usize,
    e: usize,
    p: Reg,
    x: Reg,
) -> Option<Walked> {
    let start = mf.layout[k];
    let mut chain = vec![start];
    let live = |m: &[RegMask], b: MBlock| m[b.index()] & reg_bit(p) != 0;
    let mut readers = Vec::new();
    let mut x_written = false;
    let mut from = e + 1;
    loop {
        let b = mf.layout[k];
        for (i, inst) in mf.blocks[b].insts.iter().enumerate().skip(from) {
            let mut reads = false;
            inst.for_each_use(|r| reads |= r == p);
            let by_number = matches!(
                inst,
                MInst::Call { .. } | MInst::TailCall { .. } | MInst::Ret { .. }
            );
            if reads {
                if x_written || by_number {
                    return None;
                }
                readers.push((b, i));
            }
            if matches!(inst, MInst::Ret { .. } | MInst::TailCall { .. })
                && (abi::is_callee_saved(p) || result_reg(p))
            {
                return None;
            }
            let (mut writes_p, mut writes_x) = (false, false);
            inst.for_each_def(|r| {
                writes_p |= r == p;
                writes_x |= r == x;
            });
            if writes_p {
                return Some((readers, chain));
            }
            x_written |= writes_x;
            if let Some(t) = inst.branch_target() {
                // The walk follows a final jump into a block only reached by it.
                let last = i + 1 == mf.blocks[b].insts.len();
                let followed = last && matches!(inst, MInst::Jump { .. });
                if !(followed && entries[t.index()] == 1 && t != start) && live(live_in, t) {
                    return None;
                }
            }
        }
        // The block's end: continue into its only successor when nothing else
        // enters it, else the value must be dead out of the block.
        let next = match mf.blocks[b].insts.last() {
            Some(MInst::Jump { target }) => Some(*target),
            Some(MInst::Ret { .. } | MInst::TailCall { .. }) => None,
            _ if !mf.blocks[b]
                .insts
                .iter()
                .any(|i| i.branch_target().is_some()) =>
            {
                mf.layout.get(k + 1).copied()
            }
            _ => None,
        };
        match next {
            Some(t) if entries[t.index()] == 1 && t != start => {
                k = position[t.index()]?;
                chain.push(t);
                from = 0;
            }
            _ => return (!live(live_out, b)).then_some((readers, chain)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{parse_function, print_function};

    fn forward(src: &str) -> (usize, String) {
        let mut mf = parse_function(&format!("{src}end\n")).expect("parses");
        let n = run(&mut mf);
        (n, print_function(&mf))
    }

    #[test]
    fn a_copy_into_a_join_copy_is_forwarded() {
        // The edge copy falls into its own copy of the join: the compare reads ft1.
        let src = "function f local
bb0:
  flt.s t0, ft0, fa0
  beq t0, zero, bb1
bb2:
  mv ft3, fa0
bb3:
  fle.s t0, ft3, ft2
  bne t0, zero, bb4
bb5:
  fadd.s fa0, fa0, fa0
  ret fa0
bb1:
  fsgnjn.s ft3, fa0, fa0
  fle.s t0, ft3, ft2
  bne t0, zero, bb4
  j bb5
bb4:
  ret fa0
";
        let (n, out) = forward(src);
        assert_eq!(n, 1, "{out}");
        assert!(out.contains("fle.s t0, fa0, ft2"), "{out}");
        assert!(!out.contains("mv ft3, fa0"), "{out}");
        assert!(out.contains("fle.s t0, ft3, ft2"), "{out}");
    }

    #[test]
    fn copies_whose_value_is_needed_stay() {
        let cases = [
            // The destination is live out of the block (the return reads a0 too late
            // for a rewrite: returns read by number).
            "function f local
bb0:
  mv a0, a1
  addw a2, a0, a0
  ret a0
",
            // A return reads the result register even when it does not name it.
            "function f local
bb0:
  mv a0, a2
  ret
",
            // The source is overwritten before the destination is read.
            "function f local
bb0:
  mv a2, a1
  addi a1, a1, 1
  addw a0, a2, a1
  ret a0
",
            // The destination is live into a branch target.
            "function f local
bb0:
  mv a2, a1
  bne a1, zero, bb1
bb2:
  li a0, 0
  ret a0
bb1:
  mv a0, a2
  ret a0
",
            // The join has another way in: its reader of the copy cannot change.
            "function f local
bb0:
  bne a1, zero, bb1
bb2:
  mv a2, a1
bb3:
  addw a0, a2, a2
  ret a0
bb1:
  li a2, 3
  j bb3
",
        ];
        for src in cases {
            let (n, out) = forward(src);
            assert_eq!(n, 0, "{out}");
        }
    }

    #[test]
    fn a_copy_read_then_overwritten_goes() {
        let src = "function f local
bb0:
  mv a2, a1
  addw a0, a2, a2
  li a2, 7
  addw a0, a0, a2
  ret a0
";
        let (n, out) = forward(src);
        assert_eq!(n, 1, "{out}");
        assert!(out.contains("addw a0, a1, a1"), "{out}");
    }
}
