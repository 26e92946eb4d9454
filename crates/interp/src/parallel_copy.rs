//! Sequentialising a parallel copy: the block-argument moves of one CFG edge
//! (`dst_i <- src_i` for all i at once) as an ordered list of plain moves, using one
//! scratch slot to break cycles. The classic algorithm (e.g. Boissinot et al.,
//! "Revisiting Out-of-SSA Translation for Correctness, Code Quality, and Efficiency",
//! CGO 2009): repeatedly emit a move whose destination no pending move still reads;
//! when only cycles remain, save one destination in the scratch slot and redirect its
//! readers there, which frees that destination.

/// Orders the parallel copy `moves` (pairs `(dst, src)`; destinations distinct) into
/// sequential moves with the same effect. `scratch` must not occur in `moves`.
pub(crate) fn sequentialize(moves: &[(u32, u32)], scratch: u32) -> Vec<(u32, u32)> {
    let mut pending: Vec<(u32, u32)> = moves.iter().copied().filter(|(d, s)| d != s).collect();
    let mut out = Vec::with_capacity(pending.len() + 1);
    while !pending.is_empty() {
        let free = (0..pending.len()).find(|&i| {
            let d = pending[i].0;
            !pending.iter().any(|&(_, s)| s == d)
        });
        match free {
            Some(i) => out.push(pending.remove(i)),
            None => {
                // Every destination is still read: all remaining moves form cycles.
                // Save the first destination and let its readers use the copy.
                let d = pending[0].0;
                out.push((scratch, d));
                for m in pending.iter_mut() {
                    if m.1 == d {
                        m.1 = scratch;
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sequentialize;

    /// Runs the moves on a register file and returns it.
    fn run(moves: &[(u32, u32)], n: usize) -> Vec<u64> {
        let mut regs: Vec<u64> = (0..n as u64).map(|i| i * 10).collect();
        for &(d, s) in moves {
            regs[d as usize] = regs[s as usize];
        }
        regs
    }

    fn check(par: &[(u32, u32)]) {
        let n = 8;
        let scratch = 7;
        let mut expected: Vec<u64> = (0..n as u64).map(|i| i * 10).collect();
        let before = expected.clone();
        for &(d, s) in par {
            expected[d as usize] = before[s as usize];
        }
        let got = run(&sequentialize(par, scratch), n);
        assert_eq!(&got[..7], &expected[..7], "moves {par:?}");
    }

    #[test]
    fn chains_cycles_and_self_moves() {
        check(&[]);
        check(&[(0, 0)]);
        check(&[(0, 1), (1, 2), (2, 3)]);
        check(&[(0, 1), (1, 0)]);
        check(&[(0, 1), (1, 2), (2, 0)]);
        check(&[(0, 1), (1, 0), (2, 3), (3, 2), (4, 4)]);
        check(&[(0, 1), (1, 0), (2, 0), (3, 1)]);
        check(&[(0, 5), (1, 5), (5, 0)]);
    }

    #[test]
    fn swap_uses_one_scratch_move() {
        let seq = sequentialize(&[(0, 1), (1, 0)], 9);
        assert_eq!(seq.len(), 3);
    }
}
