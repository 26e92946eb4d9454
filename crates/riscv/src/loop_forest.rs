//! Ancestor queries on the loop-nesting forest of [`crate::loops`], for analyses
//! that must not walk a deep nest one level at a time.
//!
//! Jump pointers (binary lifting; Bender and Farach-Colton, "The Level Ancestor
//! Problem Simplified", 2004, section 3): every loop keeps its `2^j`-th ancestor
//! for each `j`, so the ancestor at a given depth and the depth of the deepest
//! common ancestor of two loops take `O(log depth)` steps.
//!
//! The deepest common ancestor of a loop with any loop of a set is found among
//! the set's two neighbours of that loop in pre-order (a subtree is numbered
//! consecutively, so the set member sharing the deepest ancestor is the nearest
//! one before or after it).

use crate::loops::LoopInfo;
use crate::mir::MBlock;

const NONE: u32 = u32::MAX;

/// Jump pointers over the loops of a [`LoopInfo`].
pub struct LoopAncestors {
    depth: Vec<u32>,
    /// `up[j][l]`: the `2^j`-th ancestor of loop `l`, or `NONE`.
    up: Vec<Vec<u32>>,
}

impl LoopAncestors {
    pub fn new(info: &LoopInfo) -> Self {
        let n = info.loops.len();
        let depth: Vec<u32> = (0..n).map(|l| info.loop_depth(l)).collect();
        let max = depth.iter().copied().max().unwrap_or(0);
        let mut up = vec![info
            .loops
            .iter()
            .map(|l| l.parent.map_or(NONE, |p| p as u32))
            .collect::<Vec<u32>>()];
        while (1u32 << up.len()) < max {
            let prev = up.last().expect("one level at least");
            let next = prev
                .iter()
                .map(|&a| if a == NONE { NONE } else { prev[a as usize] })
                .collect();
            up.push(next);
        }
        LoopAncestors { depth, up }
    }

    /// Nesting depth of loop `l` (1 for an outermost loop).
    pub fn depth(&self, l: usize) -> u32 {
        self.depth[l]
    }

    /// The ancestor-or-self of `l` at depth `d` (`1 <= d <= depth(l)`).
    pub fn ancestor_at(&self, l: usize, d: u32) -> usize {
        debug_assert!(d >= 1 && d <= self.depth[l]);
        let mut l = l as u32;
        let mut climb = self.depth[l as usize] - d;
        let mut j = 0;
        while climb > 0 {
            if climb & 1 == 1 {
                l = self.up[j][l as usize];
            }
            climb >>= 1;
            j += 1;
        }
        l as usize
    }

    /// Depth of the deepest loop containing both `a` and `b` (0 when none does).
    pub fn common_depth(&self, a: usize, b: usize) -> u32 {
        let d = self.depth[a].min(self.depth[b]);
        let (mut a, mut b) = (self.ancestor_at(a, d) as u32, self.ancestor_at(b, d) as u32);
        if a == b {
            return d;
        }
        for j in (0..self.up.len()).rev() {
            let (x, y) = (self.up[j][a as usize], self.up[j][b as usize]);
            if x != y {
                a = x;
                b = y;
            }
        }
        // `a` and `b` are now distinct children of the common ancestor (or roots).
        self.depth[a as usize] - 1
    }

    /// Depth of the deepest loop containing `l` and some loop of `set`, given as
    /// `(pre-order number, loop)` pairs sorted by number (0 when none does).
    pub fn deepest_common_depth(&self, info: &LoopInfo, l: usize, set: &[(u32, u32)]) -> u32 {
        let at = set.partition_point(|&(p, _)| p < info.preorder(l));
        let mut best = 0;
        for k in [at.wrapping_sub(1), at] {
            if let Some(&(_, m)) = set.get(k) {
                best = best.max(self.common_depth(l, m as usize));
            }
        }
        best
    }
}

/// The runs of consecutive blocks of each loop in `layout`, as half-open
/// position ranges (`start[b]..end[b]` for block number `b`, each block's range
/// starting where the previous one's ends), by loop. Between two neighbouring
/// blocks the walk climbs only the loops that one of them holds and the other
/// not, so the cost is the layout plus the number of runs.
pub fn layout_runs(
    info: &LoopInfo,
    layout: &[MBlock],
    start: &[u32],
    end: &[u32],
) -> Vec<Vec<(u32, u32)>> {
    let mut runs: Vec<Vec<(u32, u32)>> = vec![Vec::new(); info.loops.len()];
    let mut open = vec![0u32; info.loops.len()];
    let mut prev: Option<MBlock> = None;
    for &b in layout.iter().chain(std::iter::once(&MBlock(u32::MAX))) {
        let real = b.0 != u32::MAX;
        if let Some(w) = prev {
            let mut l = info.innermost(w);
            while let Some(x) = l {
                if real && info.contains(x, b) {
                    break;
                }
                if open[x] < end[w.index()] {
                    runs[x].push((open[x], end[w.index()]));
                }
                l = info.loops[x].parent;
            }
        }
        if !real {
            break;
        }
        let mut l = info.innermost(b);
        while let Some(x) = l {
            if prev.is_some_and(|w| info.contains(x, w)) {
                break;
            }
            open[x] = start[b.index()];
            l = info.loops[x].parent;
        }
        prev = Some(b);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loops::loop_info;
    use crate::testinsts::cfg_func as func;

    /// Depth of the deepest common ancestor by walking parents one at a time.
    fn slow_common_depth(info: &LoopInfo, a: usize, b: usize) -> u32 {
        let chain = |mut l: Option<usize>| {
            let mut v = Vec::new();
            while let Some(x) = l {
                v.push(x);
                l = info.loops[x].parent;
            }
            v
        };
        let ca = chain(Some(a));
        chain(Some(b))
            .into_iter()
            .filter(|x| ca.contains(x))
            .map(|x| info.loop_depth(x))
            .max()
            .unwrap_or(0)
    }

    /// Two nests: a chain of 11 loops (blocks 1..=11 headers, each body the next
    /// header, latches 12..=22 going back), then two sibling loops inside one.
    #[test]
    fn ancestors_and_common_depths_match_a_parent_walk() {
        let mut edges: Vec<Vec<u32>> = vec![vec![1]];
        // Headers 1..=11: header k enters k + 1 (the last one its latch, 12).
        for k in 1..=11u32 {
            edges.push(vec![k + 1]);
        }
        // Latches 12..=22: the latch of loop k (block 23 - k) goes back to header
        // k or out to the latch of loop k - 1 (the last one to block 23).
        for j in 12..=22u32 {
            edges.push(vec![23 - j, j + 1]);
        }
        // 23: outer loop header for the siblings, 24 and 26 two inner loops.
        edges.push(vec![24]);
        edges.push(vec![24, 25]);
        edges.push(vec![26]);
        edges.push(vec![26, 27]);
        edges.push(vec![23, 28]);
        edges.push(vec![]);
        let refs: Vec<&[u32]> = edges.iter().map(|e| e.as_slice()).collect();
        let mf = func(&refs);
        let info = loop_info(&mf);
        assert_eq!(info.loops.len(), 14);
        let anc = LoopAncestors::new(&info);
        let n = info.loops.len();
        for a in 0..n {
            assert_eq!(anc.depth(a), info.loop_depth(a));
            for d in 1..=anc.depth(a) {
                let mut x = a;
                while info.loop_depth(x) > d {
                    x = info.loops[x].parent.unwrap();
                }
                assert_eq!(anc.ancestor_at(a, d), x);
            }
            for b in 0..n {
                assert_eq!(anc.common_depth(a, b), slow_common_depth(&info, a, b));
            }
        }
        // Against every subset of a few loops: the pre-order neighbours suffice.
        let pick = [0usize, 5, 10, 11, 12, 13];
        for mask in 1u32..(1 << pick.len()) {
            let mut set: Vec<(u32, u32)> = pick
                .iter()
                .enumerate()
                .filter(|&(i, _)| mask & (1 << i) != 0)
                .map(|(_, &l)| (info.preorder(l), l as u32))
                .collect();
            set.sort_unstable();
            for l in 0..n {
                let want = set
                    .iter()
                    .map(|&(_, m)| slow_common_depth(&info, l, m as usize))
                    .max()
                    .unwrap();
                assert_eq!(anc.deepest_common_depth(&info, l, &set), want);
            }
        }
    }
}
