//! Repairing SSA form when a value gets more than one definition.
//!
//! Transformations that duplicate code (loop rotation, tail duplication, jump
//! threading) leave a value `v` defined in two places: the original and its copy.
//! Uses that both can reach must then read a block parameter merging the two. This is
//! Braun et al.'s `readVariable` ("Simple and Efficient Construction of Static Single
//! Assignment Form", CC 2013, Algorithms 1 and 2) on a finished CFG, where every block
//! is sealed: the value at the start of a block is the value at the end of its single
//! predecessor, or a new parameter whose arguments are read at the end of each
//! predecessor. The parameters that turn out trivial are for the caller to remove
//! afterwards ([`super::remove_trivial_params`]). Walks are iterative (no recursion on long chains of
//! blocks), and each block is resolved at most once per value.
//!
//! A caller may also name def-free regions ([`Regions`]): sets of blocks entered only
//! from one block `e` and holding no definition, such as a loop nest the duplicated
//! code does not belong to. Every parameter the walk would place inside one receives
//! the value at `e`'s end or another such parameter, so it turns out trivial (on a
//! reducible CFG Braun et al.'s walk followed by trivial-parameter removal places
//! parameters exactly at the iterated dominance frontier, and a region's blocks are
//! dominated by `e`). The walk therefore steps from a region's block straight to
//! `e`, and the repair costs the blocks around the definitions, not the nests in
//! between. What the skipped parameters would still have done on their removal
//! is kept: existing parameters passed one of them (a use rewritten to a value
//! read through a region) are returned as candidates too, so that the removal
//! revisits them as it would have (it removes those left trivial).

use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, Inst, Type, Value};
use rustc_hash::{FxHashMap, FxHashSet};

/// [`rewrite_uses`] for every use of `old` outside the blocks `skip` accepts (where
/// the right value is the block's own definition, or the copy's own copy): the
/// common repair after copying blocks that define `old`. Returns the parameters
/// created.
pub fn repair_uses(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    old: Value,
    defs: &[(Block, Value)],
    skip: impl Fn(Block) -> bool,
) -> Vec<Value> {
    repair_uses_in(f, cfg, old, defs, skip, &NoRegions)
}

/// Def-free regions the SSA repair may step over (see the module documentation).
pub trait Regions {
    /// For a block inside a region, the single block the region is entered from:
    /// every block of the region is dominated by it, no definition being repaired
    /// lies in the region, and the region's blocks have no predecessor outside it
    /// but that block (and none unreachable). `None` for a block in no region.
    fn entry(&self, b: Block) -> Option<Block>;
}

/// No regions: the plain walk.
pub struct NoRegions;

impl Regions for NoRegions {
    fn entry(&self, _: Block) -> Option<Block> {
        None
    }
}

/// [`repair_uses`] stepping over the def-free `regions`. Returns the parameters
/// created and the existing parameters to revisit for trivial-parameter removal.
pub fn repair_uses_in(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    old: Value,
    defs: &[(Block, Value)],
    skip: impl Fn(Block) -> bool,
    regions: &dyn Regions,
) -> Vec<Value> {
    let mut uses: Vec<Inst> = f
        .users(old)
        .iter()
        .copied()
        .filter(|&u| f.layout.inst_block(u).is_some_and(|b| !skip(b)))
        .collect();
    if uses.is_empty() {
        return Vec::new();
    }
    uses.sort_unstable();
    uses.dedup();
    rewrite_uses_in(f, cfg, old, defs, &uses, regions)
}

/// Rewrites the uses of `old` in `uses` to the definition among `defs` that reaches
/// them. `defs` pairs a block with the value available at its end (one per block);
/// no instruction of `uses` may lie in one of those blocks, since there the right
/// value is the block's own definition. `cfg` must describe the function's current
/// edges. Returns the block parameters created.
///
/// Some of the parameters may be trivial (receive one value); the caller removes them
/// with [`super::remove_trivial_params`] once every value it is repairing has been repaired:
/// removing one can cascade into parameters of the definitions themselves, whose
/// other uses must not still be waiting for repair.
pub fn rewrite_uses(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    old: Value,
    defs: &[(Block, Value)],
    uses: &[Inst],
) -> Vec<Value> {
    rewrite_uses_in(f, cfg, old, defs, uses, &NoRegions)
}

/// [`rewrite_uses`] stepping over the def-free `regions`: returns the parameters
/// created, then the existing parameters that received a value read through a
/// region (each a candidate for trivial-parameter removal, as when the walk's
/// parameter inside the region was removed and its users revisited).
pub fn rewrite_uses_in(
    f: &mut Function,
    cfg: &ControlFlowGraph,
    old: Value,
    defs: &[(Block, Value)],
    uses: &[Inst],
    regions: &dyn Regions,
) -> Vec<Value> {
    let ty = f.value_type(old);
    let mut u = Updater {
        cfg,
        regions,
        ty,
        old,
        def: FxHashMap::default(),
        start: FxHashMap::default(),
        pending: Vec::new(),
        created: Vec::new(),
        visiting: FxHashSet::default(),
    };
    for &(b, v) in defs {
        u.def.insert(b, v);
    }
    let mut revisit = Vec::new();
    for &inst in uses {
        let Some(b) = f.layout.inst_block(inst) else {
            continue;
        };
        debug_assert!(!u.def.contains_key(&b), "a use in a defining block");
        let (v, through_region) = u.read_start(f, b);
        u.complete(f);
        if through_region {
            for t in f.kind(inst).targets() {
                for (j, &a) in t.args.iter().enumerate() {
                    if a == old {
                        revisit.push(f.block_params(t.block)[j]);
                    }
                }
            }
        }
        f.map_inst_args(inst, |a| if a == old { v } else { a });
    }
    u.created.extend(revisit);
    u.created
}

struct Updater<'a> {
    cfg: &'a ControlFlowGraph,
    regions: &'a dyn Regions,
    ty: Type,
    old: Value,
    /// The definition at the end of each defining block. (The maps are hashed:
    /// a repair visits a few blocks, and maps over every block of the function
    /// cost its size per repaired value.)
    def: FxHashMap<Block, Value>,
    /// The value at the start of each block resolved so far, and whether it was
    /// read through a region.
    start: FxHashMap<Block, (Value, bool)>,
    /// Parameters created whose incoming arguments are not yet added.
    pending: Vec<(Block, Value)>,
    created: Vec<Value>,
    /// Blocks on the current chain of single predecessors (to stop on a cycle of
    /// unreachable blocks).
    visiting: FxHashSet<Block>,
}

impl Updater<'_> {
    /// The value read where no definition reaches (unreachable code): zero, or `old`
    /// itself for an `i64` (there are no `i64` constants; the verifier only checks
    /// types in unreachable blocks, and `old` has the right one).
    fn undefined(&self, f: &mut Function) -> Value {
        if self.ty == Type::I64 {
            self.old
        } else {
            f.zero(self.ty)
        }
    }

    /// The value at the end of `b`.
    fn read_end(&mut self, f: &mut Function, b: Block) -> Value {
        match self.def.get(&b).copied() {
            Some(v) => v,
            None => self.read_start(f, b).0,
        }
    }

    /// The value at the start of `b`, and whether it was read through a region:
    /// follows single predecessors (and steps from a region's block to its entry)
    /// up to a defining block, a resolved block, or a join (which gets a new
    /// parameter).
    fn read_start(&mut self, f: &mut Function, b: Block) -> (Value, bool) {
        // The blocks passed, each with whether it was left through a region.
        let mut chain: Vec<(Block, bool)> = Vec::new();
        let mut cur = b;
        let found = loop {
            if let Some(&r) = self.start.get(&cur) {
                break r;
            }
            if self.visiting.contains(&cur) {
                // A cycle of single-predecessor blocks: unreachable code.
                break (self.undefined(f), false);
            }
            // The block whose end value `cur` starts with, if there is one.
            let (next, region) = match self.regions.entry(cur) {
                Some(e) => (e, true),
                None => match self.cfg.unique_preds(cur).as_slice() {
                    [] => break (self.undefined(f), false), // unreachable
                    &[p] => (p, false),
                    _ => {
                        let p = f.append_block_param(cur, self.ty);
                        self.start.insert(cur, (p, false));
                        self.pending.push((cur, p));
                        self.created.push(p);
                        break (p, false);
                    }
                },
            };
            self.visiting.insert(cur);
            chain.push((cur, region));
            match self.def.get(&next).copied() {
                Some(v) => break (v, false),
                None => cur = next,
            }
        };
        let (v, mut through) = found;
        for &(c, region) in chain.iter().rev() {
            through |= region;
            self.visiting.remove(&c);
            self.start.insert(c, (v, through));
        }
        (v, through)
    }

    /// Adds the incoming arguments of every new parameter (which may create more).
    fn complete(&mut self, f: &mut Function) {
        while let Some((b, _param)) = self.pending.pop() {
            for pred in self.cfg.unique_preds(b) {
                let arg = self.read_end(f, pred);
                crate::cfg_edit::append_edge_arg(f, pred, b, arg);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A diamond where the value is defined again on one arm: the join needs a
    /// parameter, uses before the join keep their definitions.
    #[test]
    fn join_gets_a_parameter_and_chains_are_followed() {
        let mut m = ir::parse_module(
            r#"
declare @putint(i32) -> void

func @f(i32) -> void {
bb0(%0: i32):
  %1 = add %0, 1
  br %0, bb1, bb2
bb1:
  %2 = mul %0, 5
  jump bb3
bb2:
  jump bb3
bb3:
  jump bb4
bb4:
  call @putint(%1)
  ret
}
"#,
        )
        .unwrap();
        let fid = m.func_by_name("f").unwrap();
        let f = &mut m.funcs[fid];
        let blocks: Vec<Block> = f.layout.blocks().collect();
        let v1 = f
            .inst_result(f.layout.first_inst(blocks[0]).unwrap())
            .unwrap();
        let v2 = f
            .inst_result(f.layout.first_inst(blocks[1]).unwrap())
            .unwrap();
        let uses = f.users(v1).to_vec();
        let cfg = ControlFlowGraph::compute(f);
        // Pretend %2 redefines %1 on the bb1 path.
        let created = rewrite_uses(f, &cfg, v1, &[(blocks[0], v1), (blocks[1], v2)], &uses);
        assert_eq!(created.len(), 1);
        assert_eq!(crate::ssa::remove_trivial_params(f, &created), 0);
        ir::verify_module(&m).unwrap();
        let text = ir::print_module(&m);
        assert!(text.contains("jump bb3(%2)"), "{text}");
        assert!(text.contains("jump bb3(%1)"), "{text}");
        assert!(text.contains("call @putint(%3)"), "{text}");
        assert!(text.contains("bb3(%3: i32):"), "{text}");
    }

    /// In a loop, the parameter created at the header takes the loop's own value
    /// around the back edge; one that is trivial disappears.
    #[test]
    fn loop_parameters_and_trivial_removal() {
        let mut m = ir::parse_module(
            r#"
declare @putint(i32) -> void

func @f(i32) -> void {
bb0(%0: i32):
  %1 = add %0, 1
  jump bb1
bb1:
  br %0, bb2, bb3
bb2:
  call @putint(%1)
  jump bb1
bb3:
  call @putint(%1)
  ret
}
"#,
        )
        .unwrap();
        let fid = m.func_by_name("f").unwrap();
        let f = &mut m.funcs[fid];
        let b0 = f.layout.entry_block().unwrap();
        let v1 = f.inst_result(f.layout.first_inst(b0).unwrap()).unwrap();
        let uses = f.users(v1).to_vec();
        let cfg = ControlFlowGraph::compute(f);
        // A single definition: every parameter placed is trivial and goes away.
        let created = rewrite_uses(f, &cfg, v1, &[(b0, v1)], &uses);
        assert_eq!(created.len(), 1, "at the header, which both uses reach");
        assert_eq!(crate::ssa::remove_trivial_params(f, &created), 1);
        ir::verify_module(&m).unwrap();
        let text = ir::print_module(&m);
        assert_eq!(text.matches("call @putint(%1)").count(), 2, "{text}");
    }

    /// An `i64` read where no definition reaches (an unreachable predecessor) is the
    /// old value itself, as there are no `i64` constants to stand in.
    #[test]
    fn unreachable_i64_reads_keep_the_type() {
        let mut m = ir::parse_module(
            r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = sext %0
  jump bb1
bb1:
  %2 = add64 %1, %1
  jump bb3
bb2:
  jump bb3
bb3:
  %3 = trunc %1
  ret %3
}
"#,
        )
        .unwrap();
        let fid = m.func_by_name("f").unwrap();
        let f = &mut m.funcs[fid];
        let blocks: Vec<Block> = f.layout.blocks().collect();
        let v1 = f
            .inst_result(f.layout.first_inst(blocks[0]).unwrap())
            .unwrap();
        let v2 = f
            .inst_result(f.layout.first_inst(blocks[1]).unwrap())
            .unwrap();
        let uses = f.users(v1).to_vec();
        let uses: Vec<Inst> = uses
            .into_iter()
            .filter(|&u| f.layout.inst_block(u) == Some(blocks[3]))
            .collect();
        let cfg = ControlFlowGraph::compute(f);
        let created = rewrite_uses(f, &cfg, v1, &[(blocks[0], v1), (blocks[1], v2)], &uses);
        assert_eq!(created.len(), 1);
        ir::verify_module(&m).unwrap_or_else(|e| panic!("{e}\n{}", ir::print_module(&m)));
        let text = ir::print_module(&m);
        assert!(text.contains("bb3(%3: i64):"), "{text}");
        assert!(text.contains("jump bb3(%1)"), "{text}");
    }

    /// A loop the value is used in but not defined in: stepping over it (as a
    /// region entered from its preheader) gives the same code as the walk through
    /// it, without the parameters the walk places there only for them to be removed,
    /// and still revisits the existing parameter passed a value read through it.
    #[test]
    fn regions_are_stepped_over_with_the_same_result() {
        const SRC: &str = r#"
declare @putint(i32) -> void

func @f(i32) -> void {
bb0(%0: i32):
  %1 = add %0, 1
  br %0, bb1, bb2
bb1:
  %2 = mul %0, 5
  jump bb3
bb2:
  jump bb3
bb3:
  jump bb4(0)
bb4(%3: i32):
  %4 = slt %3, %0
  br %4, bb5, bb6
bb5:
  call @putint(%1)
  %5 = add %3, 1
  jump bb4(%5)
bb6:
  jump bb7(%1)
bb7(%6: i32):
  call @putint(%6)
  ret
}
"#;
        /// The inner loop (bb4, bb5), entered from bb3.
        struct Loop(Vec<Block>);
        impl Regions for Loop {
            fn entry(&self, b: Block) -> Option<Block> {
                (b == self.0[4] || b == self.0[5]).then_some(self.0[3])
            }
        }
        // Repairs %1 as redefined by %2 on the bb1 arm; returns the candidates
        // for removal, how many parameters were created, and the result.
        let repair = |stepped: bool| {
            let mut m = ir::parse_module(SRC).unwrap();
            let fid = m.func_by_name("f").unwrap();
            let f = &mut m.funcs[fid];
            let blocks: Vec<Block> = f.layout.blocks().collect();
            let first = |f: &Function, b: Block| f.inst_result(f.layout.first_inst(b).unwrap());
            let (v1, v2) = (first(f, blocks[0]).unwrap(), first(f, blocks[1]).unwrap());
            let params_before = count_params(f);
            let cfg = ControlFlowGraph::compute(f);
            let defs = [(blocks[0], v1), (blocks[1], v2)];
            let not_def = |b: Block| b == blocks[0] || b == blocks[1];
            let inner = Loop(blocks.clone());
            let regions: &dyn Regions = if stepped { &inner } else { &NoRegions };
            let candidates = repair_uses_in(f, &cfg, v1, &defs, not_def, regions);
            let created = count_params(f) - params_before;
            crate::ssa::remove_trivial_params(f, &candidates);
            ir::verify_module(&m).unwrap();
            (candidates.len(), created, ir::print_module(&m))
        };
        let (walked_candidates, walked_created, walked) = repair(false);
        let (stepped_candidates, stepped_created, stepped) = repair(true);
        assert_eq!(stepped, walked);
        // The walk places parameters in bb3 and the loop header bb4; stepping over
        // the loop only in bb3, and revisits bb7's parameter instead, which is
        // trivial once it receives bb3's parameter directly.
        assert_eq!((walked_created, walked_candidates), (2, 2));
        assert_eq!((stepped_created, stepped_candidates), (1, 2));
        assert!(walked.contains("bb3(%3: i32):"), "{walked}");
        assert!(walked.contains("call @putint(%3)\n  ret"), "{walked}");
    }

    fn count_params(f: &Function) -> usize {
        f.layout.blocks().map(|b| f.block_params(b).len()).sum()
    }
}
