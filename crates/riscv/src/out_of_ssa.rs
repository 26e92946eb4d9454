//! Sequentialisation of parallel copies, the last step of leaving SSA form.
//!
//! Block arguments become a parallel copy `(p1, .., pn) := (a1, .., an)` on each edge
//! (critical edges are split by instruction selection so the copies run on that edge
//! only; `isel::edges` builds the copies). A parallel copy reads all sources before
//! writing any destination; emitted as a sequence of moves it must order them so that
//! no source is overwritten before it is read, and break cycles (`a, b := b, a`)
//! through a temporary. This is the classic algorithm (e.g. Boissinot et al.,
//! "Revisiting Out-of-SSA Translation for Correctness, Code Quality, and Efficiency",
//! CGO 2009, Algorithm 1, in its simple form with a fresh temporary per cycle).
//! Copies of constants and addresses, which read no register, go after all the moves
//! ([`sequentialize_edge`]).

use crate::mir::Reg;

/// Orders the parallel copy `copies` (destination, source pairs with distinct
/// destinations) into sequential moves with the same effect. `new_temp(like)` returns
/// a fresh register of the class of `like`, used to break cycles.
pub fn sequentialize(
    copies: &[(Reg, Reg)],
    mut new_temp: impl FnMut(Reg) -> Reg,
) -> Vec<(Reg, Reg)> {
    let mut pending: Vec<(Reg, Reg)> = copies.iter().copied().filter(|(d, s)| d != s).collect();
    let mut out = Vec::with_capacity(pending.len() + 1);
    while !pending.is_empty() {
        // A copy whose destination no other pending copy still reads can go now.
        let ready = (0..pending.len()).find(|&i| {
            let d = pending[i].0;
            !pending.iter().any(|&(_, s)| s == d)
        });
        match ready {
            Some(i) => {
                out.push(pending.remove(i));
            }
            None => {
                // Only cycles remain: save one destination's old value in a temporary
                // and let its readers read the temporary instead.
                let d = pending[0].0;
                let t = new_temp(d);
                out.push((t, d));
                for c in pending.iter_mut() {
                    if c.1 == d {
                        c.1 = t;
                    }
                }
            }
        }
    }
    out
}

/// The source of one copy of an edge's parallel copy: a register, or a value that
/// reads no register (a constant or an address) and is computed into the destination.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum CopySource<V> {
    Reg(Reg),
    Value(V),
}

/// Orders the parallel copy `copies` (distinct destinations): first the register
/// copies, sequentialised by [`sequentialize`] (with `new_temp` for cycles), then the
/// values in the order given. A value reads no register, so written last it cannot
/// overwrite a source another copy still has to read (`i, j := j, 0` on a loop's back
/// edge moves `j` into `i` before zeroing `j`).
pub fn sequentialize_edge<V: Copy>(
    copies: &[(Reg, CopySource<V>)],
    new_temp: impl FnMut(Reg) -> Reg,
) -> Vec<(Reg, CopySource<V>)> {
    let regs: Vec<(Reg, Reg)> = copies
        .iter()
        .filter_map(|&(d, s)| match s {
            CopySource::Reg(r) => Some((d, r)),
            CopySource::Value(_) => None,
        })
        .collect();
    let mut out: Vec<(Reg, CopySource<V>)> = sequentialize(&regs, new_temp)
        .into_iter()
        .map(|(d, s)| (d, CopySource::Reg(s)))
        .collect();
    out.extend(
        copies
            .iter()
            .filter(|(_, s)| matches!(s, CopySource::Value(_)))
            .copied(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxHashMap;

    /// Runs moves on a register file of initial values `r -> r.0`.
    fn simulate(moves: &[(Reg, Reg)]) -> FxHashMap<Reg, u32> {
        let mut st: FxHashMap<Reg, u32> = FxHashMap::default();
        for &(d, s) in moves {
            let v = *st.get(&s).unwrap_or(&s.0);
            st.insert(d, v);
        }
        st
    }

    fn check(copies: &[(Reg, Reg)]) -> usize {
        let mut next = 1000;
        let moves = sequentialize(copies, |_| {
            next += 1;
            Reg::virt(next)
        });
        let st = simulate(&moves);
        for &(d, s) in copies {
            assert_eq!(
                st.get(&d).copied().unwrap_or(d.0),
                s.0,
                "{d} should hold {s}"
            );
        }
        moves.len()
    }

    #[test]
    fn swap_uses_one_temporary() {
        let (a, b) = (Reg::virt(1), Reg::virt(2));
        assert_eq!(check(&[(a, b), (b, a)]), 3);
    }

    #[test]
    fn rotation_and_chain() {
        let r: Vec<Reg> = (0..6).map(Reg::virt).collect();
        check(&[(r[0], r[1]), (r[1], r[2]), (r[2], r[0])]);
        check(&[(r[0], r[1]), (r[1], r[2]), (r[2], r[3]), (r[4], r[1])]);
        check(&[
            (r[0], r[1]),
            (r[1], r[0]),
            (r[2], r[3]),
            (r[3], r[2]),
            (r[4], r[0]),
        ]);
    }

    #[test]
    fn self_copies_vanish_and_fanout_works() {
        let r: Vec<Reg> = (0..4).map(Reg::virt).collect();
        assert_eq!(check(&[(r[0], r[0])]), 0);
        check(&[(r[1], r[0]), (r[2], r[0]), (r[0], r[3])]);
    }

    #[test]
    fn edge_values_come_after_the_moves() {
        let r: Vec<Reg> = (0..4).map(Reg::virt).collect();
        // i, j, k, l := j, 0, i, 7: the moves (k from the old i first) before the values.
        let copies = [
            (r[0], CopySource::Reg(r[1])),
            (r[1], CopySource::Value(0)),
            (r[2], CopySource::Reg(r[0])),
            (r[3], CopySource::Value(7)),
        ];
        let out = sequentialize_edge(&copies, |_| unreachable!("no cycle"));
        assert_eq!(
            out,
            vec![
                (r[2], CopySource::Reg(r[0])),
                (r[0], CopySource::Reg(r[1])),
                (r[1], CopySource::Value(0)),
                (r[3], CopySource::Value(7)),
            ]
        );
        // A cycle among the registers still gets its temporary, before the values.
        let mut next = 100;
        let swap = [
            (r[0], CopySource::Value(5)),
            (r[1], CopySource::Reg(r[2])),
            (r[2], CopySource::Reg(r[1])),
        ];
        let out = sequentialize_edge(&swap, |_| {
            next += 1;
            Reg::virt(next)
        });
        assert_eq!(out.len(), 4);
        assert_eq!(out[3], (r[0], CopySource::Value(5)));
        let moves: Vec<(Reg, Reg)> = out[..3]
            .iter()
            .map(|&(d, s)| match s {
                CopySource::Reg(s) => (d, s),
                CopySource::Value(_) => unreachable!(),
            })
            .collect();
        let st = simulate(&moves);
        assert_eq!(st[&r[1]], r[2].0);
        assert_eq!(st[&r[2]], r[1].0);
    }
}
