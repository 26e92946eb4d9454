//! When two loads of one address must see the same memory: the memory model of the
//! hash-based GVN.
//!
//! Memory is split by *base*: a local `alloc` or a global, found by following `gep`
//! bases ([`memory_base`]). A store through a pointer with a known base can change only
//! that base's memory (SysY has no pointer arithmetic across objects); a store through
//! any other pointer (a parameter, a loaded pointer, a merge of pointers) or a call
//! that may write memory can change what its callee's mod/ref summary says it writes
//! ([`CallMemory`]: named globals and what its pointer arguments point into, or
//! anything). Loads through pointers without a known base may observe any store.
//!
//! The hash GVN walks the dominator tree; a block's memory equals its immediate
//! dominator's memory at the end of the dominator's body unless some path between
//! them writes. [`RegionWalker::region_clobbers`] finds what those paths may write by walking
//! predecessors backwards from the block until the dominator (the region is the set
//! of blocks on such paths, the block itself included when it lies on a cycle that
//! avoids the dominator); a region larger than a limit counts as writing everything.
//!
//! A region holds every block of each loop that contains a predecessor of the block
//! but not the dominator (the walk reaches the loop's header and, through its back
//! edges, all of its body), so when such a loop is larger than the limit the answer
//! is known without walking: in a deep nest, every header and exit below a large
//! loop would otherwise walk the limit's worth of blocks.

use super::expr::call_writes_memory;
use crate::analysis::modref::Access;
use crate::analysis::{LoopForest, ModRef, Purity};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, FuncId, Function, GlobalId, InstKind, SecondaryMap, Value, ValueDef};
use rustc_hash::FxHashMap;

/// The `alloc` or global address `p` points into, if known.
pub(crate) fn memory_base(f: &Function, mut p: Value) -> Option<Value> {
    loop {
        match f.value_def(p) {
            ValueDef::Global(_) => return Some(p),
            ValueDef::Inst(i) => match f.kind(i) {
                InstKind::Alloc { .. } => return Some(p),
                InstKind::Gep { base, .. } => p = *base,
                _ => return None,
            },
            _ => return None,
        }
    }
}

/// What a block, or a set of blocks, may write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Clobbers {
    /// May write any memory.
    pub all: bool,
    /// The bases stored to (meaningful only when `all` is false), without duplicates.
    pub bases: Vec<Value>,
}

impl Clobbers {
    fn add_base(&mut self, b: Value) {
        if !self.bases.contains(&b) {
            self.bases.push(b);
        }
    }

    fn union(&mut self, o: &Clobbers) {
        self.all |= o.all;
        if !self.all {
            for &b in &o.bases {
                self.add_base(b);
            }
        }
    }

    /// Whether nothing is written.
    pub(crate) fn is_empty(&self) -> bool {
        !self.all && self.bases.is_empty()
    }
}

/// The memory the calls of one function read and write, as bases of that function.
pub(crate) struct CallMemory<'a> {
    purity: &'a Purity,
    modref: Option<&'a ModRef>,
    /// The address of each global some callee's summary names.
    globals: FxHashMap<GlobalId, Value>,
}

impl<'a> CallMemory<'a> {
    /// Gives `f` the address values of the globals its callees access (unused ones
    /// are harmless), so that they can stand as bases. Without `modref`, every call
    /// that writes memory may write any, and every call that reads may read any.
    pub(crate) fn new(f: &mut Function, purity: &'a Purity, modref: Option<&'a ModRef>) -> Self {
        let mut globals = FxHashMap::default();
        if let Some(mr) = modref {
            let callees: Vec<FuncId> = f
                .layout
                .blocks()
                .flat_map(|b| f.layout.block_insts(b))
                .filter_map(|i| match f.kind(i) {
                    InstKind::Call { callee, .. } => Some(*callee),
                    _ => None,
                })
                .collect();
            for c in callees {
                let info = mr.info(c);
                for &g in info.reads.globals.iter().chain(&info.writes.globals) {
                    globals.entry(g).or_insert_with(|| f.global_addr(g));
                }
            }
        }
        CallMemory {
            purity,
            modref,
            globals,
        }
    }

    /// The bases of `f` an access summary of a call with arguments `args` reaches,
    /// sorted; `None` for any memory.
    fn bases(&self, f: &Function, acc: &Access, args: &[Value]) -> Option<Vec<Value>> {
        if acc.any || acc.any_global {
            return None;
        }
        let mut out: Vec<Value> = acc.globals.iter().map(|g| self.globals[g]).collect();
        for &k in &acc.params {
            out.push(memory_base(f, *args.get(k as usize)?)?);
        }
        if acc.all_params {
            for &a in args {
                if f.value_type(a) == ir::Type::Ptr {
                    out.push(memory_base(f, a)?);
                }
            }
        }
        out.sort();
        out.dedup();
        Some(out)
    }

    /// What a call of `callee` with `args` may write.
    pub(crate) fn writes(&self, f: &Function, callee: FuncId, args: &[Value]) -> Clobbers {
        if !call_writes_memory(self.purity.effects(callee)) {
            return Clobbers::default();
        }
        match self
            .modref
            .and_then(|m| self.bases(f, &m.info(callee).writes, args))
        {
            Some(bases) => Clobbers { all: false, bases },
            None => Clobbers {
                all: true,
                bases: Vec::new(),
            },
        }
    }

    /// The bases a call of `callee` with `args` may read (`None`: any memory).
    pub(crate) fn reads(&self, f: &Function, callee: FuncId, args: &[Value]) -> Option<Vec<Value>> {
        self.modref
            .and_then(|m| self.bases(f, &m.info(callee).reads, args))
    }
}

/// What each block writes.
pub(crate) fn block_clobbers(f: &Function, calls: &CallMemory) -> SecondaryMap<Block, Clobbers> {
    let mut out: SecondaryMap<Block, Clobbers> = f.block_map();
    for b in f.layout.blocks() {
        let mut c = Clobbers::default();
        for i in f.layout.block_insts(b) {
            match f.kind(i) {
                InstKind::Store { ptr, .. } => match memory_base(f, *ptr) {
                    Some(base) => c.add_base(base),
                    None => c.all = true,
                },
                InstKind::Call { callee, args } => c.union(&calls.writes(f, *callee, args)),
                _ => {}
            }
            if c.all {
                c.bases.clear();
                break;
            }
        }
        out[b] = c;
    }
    out
}

/// Largest region (in blocks) examined before assuming everything is written.
pub(crate) const REGION_LIMIT: usize = 512;

/// Reusable state of the backward walks of [`RegionWalker::region_clobbers`].
pub(crate) struct RegionWalker {
    stamp: SecondaryMap<Block, u32>,
    current: u32,
    stack: Vec<Block>,
}

impl RegionWalker {
    pub(crate) fn new() -> Self {
        RegionWalker {
            stamp: SecondaryMap::new(),
            current: 0,
            stack: Vec::new(),
        }
    }

    /// What the paths from the end of `idom` (the immediate dominator of `b`) to the
    /// start of `b` may write. `loops`, the loops of the same CFG (wanted only when
    /// it has more blocks than the limit), answers for regions holding a loop larger
    /// than the limit without the walk.
    pub(crate) fn region_clobbers(
        &mut self,
        cfg: &ControlFlowGraph,
        dt: &DominatorTree,
        loops: Option<&LoopForest>,
        clobbers: &SecondaryMap<Block, Clobbers>,
        b: Block,
        idom: Block,
    ) -> Clobbers {
        let mut out = Clobbers::default();
        if let Some(lf) = loops {
            let large_loop_below = cfg.preds(b).iter().any(|&p| {
                lf.innermost(p)
                    .is_some_and(|l| lf.get(l).blocks.len() > REGION_LIMIT && !lf.contains(l, idom))
            });
            if large_loop_below {
                out.all = true;
                return out;
            }
        }
        self.current += 1;
        self.stack.clear();
        self.stack.extend(cfg.preds(b).iter().copied());
        let mut seen = 0usize;
        while let Some(x) = self.stack.pop() {
            if x == idom || !dt.is_reachable(x) || self.stamp[x] == self.current {
                continue;
            }
            self.stamp[x] = self.current;
            seen += 1;
            if seen > REGION_LIMIT {
                out.all = true;
                out.bases.clear();
                return out;
            }
            out.union(&clobbers[x]);
            self.stack.extend(cfg.preds(x).iter().copied());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testcfg::cfg_func;

    /// A nest of `depth` loops: header `1 + 2k` enters the next loop or skips to
    /// its latch `2 + 2k`, which goes back to the header or on to the latch of the
    /// loop around it (the outermost latch to the exit, the last block).
    fn nest(depth: usize) -> (usize, Vec<(usize, usize)>) {
        let (h, x) = (|k: usize| 1 + 2 * k, |k: usize| 2 + 2 * k);
        let exit = 1 + 2 * depth;
        let mut edges = vec![(0, h(0))];
        for k in 0..depth {
            if k + 1 < depth {
                edges.push((h(k), h(k + 1)));
            }
            edges.push((h(k), x(k)));
            edges.push((x(k), h(k)));
            edges.push((x(k), if k == 0 { exit } else { x(k - 1) }));
        }
        (exit + 1, edges)
    }

    /// A random graph of `n` blocks: a spine keeps most blocks reachable, and
    /// every block gets up to one more edge anywhere (back edges make loops).
    fn random(n: usize, seed: u64) -> Vec<(usize, usize)> {
        let mut state = seed;
        let mut next = |m: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % m
        };
        let mut edges = Vec::new();
        for b in 0..n - 1 {
            edges.push((b, b + 1));
            if next(3) > 0 {
                let t = next(n);
                if t != b + 1 {
                    edges.push((b, t));
                }
            }
        }
        edges
    }

    /// The answers with the loops equal the walk's for every block, and the
    /// shortcut is taken at least `min_shortcuts` times.
    fn check(n: usize, edges: &[(usize, usize)], min_shortcuts: usize) {
        let (f, blocks) = cfg_func(n, edges);
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        let lf = LoopForest::compute(&f, &cfg, &dt);
        let clobbers: SecondaryMap<Block, Clobbers> = f.block_map();
        let (mut plain, mut with_loops) = (RegionWalker::new(), RegionWalker::new());
        let mut shortcuts = 0;
        for &b in &blocks {
            let Some(d) = dt.idom(b) else { continue };
            let walked = plain.region_clobbers(&cfg, &dt, None, &clobbers, b, d);
            let before = with_loops.current;
            let fast = with_loops.region_clobbers(&cfg, &dt, Some(&lf), &clobbers, b, d);
            assert_eq!(walked, fast, "block {b}");
            shortcuts += usize::from(with_loops.current == before);
        }
        assert!(shortcuts >= min_shortcuts, "{shortcuts} shortcuts");
    }

    #[test]
    fn loops_answer_as_the_walk_does_in_a_deep_nest() {
        let (n, edges) = nest(400);
        // Loops 0..144 have more than 512 blocks: their inner headers and latches.
        check(n, &edges, 200);
    }

    #[test]
    fn loops_answer_as_the_walk_does_on_random_graphs() {
        for seed in 0..20 {
            check(700, &random(700, seed), 0);
        }
    }
}
