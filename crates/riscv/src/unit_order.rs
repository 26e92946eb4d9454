//! Priorities for list scheduling that see the unpipelined units: heights raised
//! by an order of each unit's instructions chosen with Schrage's rule.
//!
//! The height of an instruction (its longest latency path to the region's end)
//! ignores that a divider takes one instruction at a time. In a region of four
//! independent divisions, each fed by a chain of address arithmetic and a load,
//! the four chains have about equal heights; a list scheduler driven by height
//! interleaves them, so no division can start before all four chains are done,
//! and the divider then runs the four back to back after an idle start.
//!
//! Algorithm: for each unit with two or more instructions in the region, the
//! instructions are ordered as jobs on one machine with release dates (their
//! depth: the longest latency path from the region's start) and tails (their
//! height), by Schrage's rule ("Solving resource-constrained network problems
//! by implicit enumeration", Schrage 1971; the heuristic of Carlier's
//! single-machine algorithm, 1982): at each point the released job with the
//! longest tail goes next, and the machine is busy for the unit's occupancy.
//! Consecutive jobs of that order are linked by edges whose latency is the
//! occupancy, and heights are computed again over the graph with those edges: the
//! chain feeding the first division then carries the whole divider's work, and
//! the scheduler completes it first (as Hu's level algorithm ranks by path
//! length, with the unit's serialisation made a path).
//!
//! The raised heights are a priority only: the edges constrain no order, and the
//! scheduler judges every order it finds by the timing model.

use crate::u74::{Timing, Unit};

/// The heights `h` of the region `t` (with successors `succs`, edges going to
/// later instructions), raised by each unpipelined unit's serial order, or `None`
/// when that raises none (no unit has two instructions in the region, or its
/// order adds no longer path).
pub(crate) fn unit_heights(
    t: &[Timing],
    succs: &[Vec<(usize, u32)>],
    h: &[u32],
) -> Option<Vec<u32>> {
    let n = t.len();
    let on = |unit: Unit| -> Vec<usize> {
        (0..n)
            .filter(|&k| t[k].unit.is_some_and(|(u, _)| u == unit))
            .collect()
    };
    let units: Vec<(Vec<usize>, u32)> = [Unit::IntDiv, Unit::FpDiv]
        .into_iter()
        .map(on)
        .filter(|jobs| jobs.len() >= 2)
        .map(|jobs| {
            let busy = t[jobs[0]].unit.map_or(0, |(_, b)| b);
            (jobs, busy)
        })
        .collect();
    if units.is_empty() {
        return None;
    }
    let depth = depths(succs);
    // The extra edges, per instruction: to the next job of its unit.
    let mut next: Vec<Option<(usize, u32)>> = vec![None; n];
    for (jobs, busy) in &units {
        let order = schrage(jobs, &depth, h, *busy);
        for pair in order.windows(2) {
            next[pair[0]] = Some((pair[1], *busy));
        }
    }
    raised_heights(succs, &next, h).filter(|raised| raised != h)
}

/// The longest latency path from the region's start to each instruction.
fn depths(succs: &[Vec<(usize, u32)>]) -> Vec<u32> {
    let mut depth = vec![0u32; succs.len()];
    for i in 0..succs.len() {
        for &(s, l) in &succs[i] {
            depth[s] = depth[s].max(depth[i] + l);
        }
    }
    depth
}

/// Schrage's rule for `jobs` on one machine busy `busy` cycles per job, with
/// release dates `release` and tails `tail`: whenever the machine is free, the
/// released job with the longest tail (then the earliest release, then the
/// first) goes next; when none is released, time moves to the next release.
fn schrage(jobs: &[usize], release: &[u32], tail: &[u32], busy: u32) -> Vec<usize> {
    let mut left: Vec<usize> = jobs.to_vec();
    let mut order = Vec::with_capacity(jobs.len());
    let mut now = 0u32;
    while !left.is_empty() {
        let first_release = left.iter().map(|&j| release[j]).min().unwrap_or(0);
        now = now.max(first_release);
        let (slot, &job) = left
            .iter()
            .enumerate()
            .filter(|&(_, &j)| release[j] <= now)
            .min_by_key(|&(_, &j)| (std::cmp::Reverse(tail[j]), release[j], j))
            .expect("a job is released by now");
        left.remove(slot);
        order.push(job);
        now = now.max(release[job]) + busy;
    }
    order
}

/// Heights over the graph `succs` plus one `next` edge per instruction (which
/// may go to an earlier instruction), starting from `h` (which counts the code
/// after the region): in reverse topological order of the combined graph, or
/// `None` should the edges make a cycle.
fn raised_heights(
    succs: &[Vec<(usize, u32)>],
    next: &[Option<(usize, u32)>],
    h: &[u32],
) -> Option<Vec<u32>> {
    let n = succs.len();
    let out = |i: usize| succs[i].iter().copied().chain(next[i]);
    // Kahn's algorithm on the reversed graph: an instruction is done once all
    // its successors are.
    let mut waiting: Vec<usize> = (0..n).map(|i| out(i).count()).collect();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        for (s, _) in out(i) {
            preds[s].push(i);
        }
    }
    let mut done: Vec<usize> = (0..n).filter(|&i| waiting[i] == 0).collect();
    let mut raised = h.to_vec();
    let mut at = 0;
    while at < done.len() {
        let i = done[at];
        at += 1;
        raised[i] = out(i).fold(raised[i], |best, (s, l)| best.max(l + raised[s]));
        for &p in &preds[i] {
            waiting[p] -= 1;
            if waiting[p] == 0 {
                done.push(p);
            }
        }
    }
    (done.len() == n).then_some(raised)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schrage_takes_the_released_job_with_the_longest_tail() {
        // Job 0 is released at 0 with no tail, job 1 at 1 with a long tail,
        // job 2 at 50. At 0 only job 0 is released; at 20 job 1 is; at 40
        // job 2 is not yet, so time moves to 50.
        let release = [0, 1, 50];
        let tail = [0, 30, 5];
        assert_eq!(schrage(&[0, 1, 2], &release, &tail, 20), vec![0, 1, 2]);
        // Released together, the longer tail goes first.
        let release = [0, 0, 0];
        let tail = [1, 9, 5];
        assert_eq!(schrage(&[0, 1, 2], &release, &tail, 20), vec![1, 2, 0]);
    }

    #[test]
    fn the_first_divisions_feeder_carries_the_dividers_work() {
        // 0 -> 2 (latency 3) and 1 -> 3 (latency 1); 2 and 3 are divisions
        // with nothing after them. Division 3 is released first (depth 1
        // against 3), so it goes first, and its feeder 1 gets the other
        // division's occupancy on top: 1 + 20 + 0.
        let succs = vec![vec![(2, 3)], vec![(3, 1)], vec![], vec![]];
        let next = vec![None, None, None, Some((2, 20))];
        let h = vec![3, 1, 0, 0];
        let raised = raised_heights(&succs, &next, &h).unwrap();
        assert_eq!(raised, vec![3, 21, 0, 20]);
    }

    #[test]
    fn a_cycle_of_extra_edges_gives_no_heights() {
        let succs = vec![vec![(1, 1)], vec![]];
        let next = vec![None, Some((0, 20))];
        assert_eq!(raised_heights(&succs, &next, &[1, 0]), None);
    }
}
