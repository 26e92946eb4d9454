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

use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, Inst, Type, Value};
use rustc_hash::{FxHashMap, FxHashSet};

/// The values block `b` defines: its parameters, then its instructions' results.
pub fn defined_in(f: &Function, b: Block) -> Vec<Value> {
    f.block_params(b)
        .iter()
        .copied()
        .chain(f.layout.block_insts(b).filter_map(|i| f.inst_result(i)))
        .collect()
}

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
    rewrite_uses(f, cfg, old, defs, &uses)
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
    let ty = f.value_type(old);
    let mut u = Updater {
        cfg,
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
    for &inst in uses {
        let Some(b) = f.layout.inst_block(inst) else {
            continue;
        };
        debug_assert!(!u.def.contains_key(&b), "a use in a defining block");
        let v = u.read_start(f, b);
        u.complete(f);
        f.map_inst_args(inst, |a| if a == old { v } else { a });
    }
    u.created
}

struct Updater<'a> {
    cfg: &'a ControlFlowGraph,
    ty: Type,
    old: Value,
    /// The definition at the end of each defining block. (The maps are hashed:
    /// a repair visits a few blocks, and maps over every block of the function
    /// cost its size per repaired value.)
    def: FxHashMap<Block, Value>,
    /// The value at the start of each block resolved so far.
    start: FxHashMap<Block, Value>,
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
            None => self.read_start(f, b),
        }
    }

    /// The value at the start of `b`: follows single predecessors up to a defining
    /// block, a resolved block, or a join (which gets a new parameter).
    fn read_start(&mut self, f: &mut Function, b: Block) -> Value {
        let mut chain = Vec::new();
        let mut cur = b;
        let v = loop {
            if let Some(&v) = self.start.get(&cur) {
                break v;
            }
            if self.visiting.contains(&cur) {
                // A cycle of single-predecessor blocks: unreachable code.
                break self.undefined(f);
            }
            let preds = self.cfg.unique_preds(cur);
            match preds.as_slice() {
                [] => break self.undefined(f), // no definition reaches: unreachable
                [p] => {
                    self.visiting.insert(cur);
                    chain.push(cur);
                    match self.def.get(p).copied() {
                        Some(v) => break v,
                        None => cur = *p,
                    }
                }
                _ => {
                    let p = f.append_block_param(cur, self.ty);
                    self.start.insert(cur, p);
                    self.pending.push((cur, p));
                    self.created.push(p);
                    break p;
                }
            }
        };
        for c in chain {
            self.visiting.remove(&c);
            self.start.insert(c, v);
        }
        v
    }

    /// Adds the incoming arguments of every new parameter (which may create more).
    fn complete(&mut self, f: &mut Function) {
        while let Some((b, _param)) = self.pending.pop() {
            for pred in self.cfg.unique_preds(b) {
                let arg = self.read_end(f, pred);
                let Some(term) = f.terminator(pred) else {
                    continue;
                };
                let n = f.kind(term).targets().len();
                for which in 0..n {
                    let t = f.kind(term).targets()[which].clone();
                    if t.block == b {
                        let mut t = t;
                        t.args.push(arg);
                        f.set_target(term, which, t);
                    }
                }
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
}
