//! When two loads of one address must see the same memory: the memory model of the
//! hash-based GVN.
//!
//! Memory is split by *base*: a local `alloc` or a global, found by following `gep`
//! bases ([`memory_base`]). A store through a pointer with a known base can change only
//! that base's memory (SysY has no pointer arithmetic across objects); a store through
//! any other pointer (a parameter, a loaded pointer, a merge of pointers) or a call
//! that may write memory can change anything. Loads through pointers without a known
//! base may observe any store.
//!
//! The hash GVN walks the dominator tree; a block's memory equals its immediate
//! dominator's memory at the end of the dominator's body unless some path between
//! them writes. [`RegionWalker::region_clobbers`] finds what those paths may write by walking
//! predecessors backwards from the block until the dominator (the region is the set
//! of blocks on such paths, the block itself included when it lies on a cycle that
//! avoids the dominator); a region larger than a limit counts as writing everything.

use super::expr::call_writes_memory;
use crate::analysis::Purity;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, Function, InstKind, SecondaryMap, Value, ValueDef};

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

/// What each block writes.
pub(crate) fn block_clobbers(f: &Function, purity: &Purity) -> SecondaryMap<Block, Clobbers> {
    let mut out: SecondaryMap<Block, Clobbers> = f.block_map();
    for b in f.layout.blocks() {
        let mut c = Clobbers::default();
        for i in f.layout.block_insts(b) {
            match f.kind(i) {
                InstKind::Store { ptr, .. } => match memory_base(f, *ptr) {
                    Some(base) => c.add_base(base),
                    None => c.all = true,
                },
                InstKind::Call { callee, .. } if call_writes_memory(purity.effects(*callee)) => {
                    c.all = true
                }
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
const REGION_LIMIT: usize = 512;

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
    /// start of `b` may write.
    pub(crate) fn region_clobbers(
        &mut self,
        cfg: &ControlFlowGraph,
        dt: &DominatorTree,
        clobbers: &SecondaryMap<Block, Clobbers>,
        b: Block,
        idom: Block,
    ) -> Clobbers {
        self.current += 1;
        let mut out = Clobbers::default();
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
