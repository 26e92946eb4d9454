//! On-the-fly SSA construction: Braun, Buchwald, Hack, Leißa, Mallon and Zwinkau,
//! "Simple and Efficient Construction of Static Single Assignment Form" (CC 2013),
//! adapted to block parameters (see seeds/ir-ssa-construction-notes and
//! seeds/block-arguments-instead-of-phi).
//!
//! Lowering calls [`SsaBuilder::def_var`] for every assignment and
//! [`SsaBuilder::use_var`] for every read of a scalar local. A read in a block with no
//! local definition looks into the predecessors:
//! - in an unsealed block (not all predecessors known yet, e.g. a loop header while the
//!   body is being lowered) it creates an *incomplete* block parameter, completed when
//!   the block is sealed;
//! - in a block with a single predecessor it continues there (iteratively, so long
//!   chains of blocks cost no recursion);
//! - otherwise it creates a block parameter and reads the variable in every
//!   predecessor to pass as that edge's argument.
//!
//! A parameter whose incoming arguments are all one value `v` (or the parameter itself)
//! is *trivial*: it is replaced by `v`, removed with its arguments, and the parameters
//! that received it as an argument are re-examined, recursively (worklist).
//! Replaced values are remembered in an alias map, so the builder's own tables never
//! hand out a removed parameter.
//!
//! Finished loops are crossed in one step: a read at the header of a `while`
//! loop already lowered and sealed, of a variable the loop never assigns,
//! continues at the block that entered the loop. The parameter the read would
//! create there receives that block's value on entry and only itself around
//! the loop, so it is trivial and would be removed again; creating it first
//! walked every block of the loop (every loop nested in it creating and
//! removing a parameter of its own), which made reading an outer loop's
//! counter after an inner nest cost the depth of the nest. Assignments are
//! numbered as they are lowered, and each loop records the numbers its lowering
//! spanned, so "the loop assigns `var`" is a binary search in `var`'s list.

use ir::{Block, Function, Type, Value, ValueDef};
use rustc_hash::FxHashMap;

/// A source-level variable (a scalar local whose address is never taken).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Var(pub u32);

#[derive(Default)]
struct BlockState {
    sealed: bool,
    preds: Vec<Block>,
    /// Parameters created while the block was unsealed, with their variable.
    incomplete: Vec<(Var, Value)>,
}

/// Braun et al.'s SSA builder for one function.
#[derive(Default)]
pub struct SsaBuilder {
    var_types: Vec<Type>,
    current_def: FxHashMap<(Var, Block), Value>,
    blocks: FxHashMap<Block, BlockState>,
    /// Removed trivial parameters and the value that replaced each.
    alias: FxHashMap<Value, Value>,
    /// Which variable each live block parameter stands for (for diagnostics/tests).
    param_count: usize,
    /// Assignments lowered so far.
    assignments: u32,
    /// Per variable, the numbers of its assignments (increasing).
    assigned_at: FxHashMap<Var, Vec<u32>>,
    /// Finished loops by header: the block entering the loop, and the numbers of
    /// the assignments lowered within it (a half-open range).
    loops: FxHashMap<Block, (Block, u32, u32)>,
}

impl SsaBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares variable `var` (numbered densely from 0) with its type.
    pub fn declare_var(&mut self, var: Var, ty: Type) {
        let i = var.0 as usize;
        if self.var_types.len() <= i {
            self.var_types.resize(i + 1, Type::I32);
        }
        self.var_types[i] = ty;
    }

    /// Records a control-flow edge `from -> to`. Must be called for every branch
    /// target before `to` is sealed, and after the branch instruction exists.
    pub fn add_edge(&mut self, from: Block, to: Block) {
        let st = self.blocks.entry(to).or_default();
        debug_assert!(!st.sealed, "edge into a sealed block");
        st.preds.push(from);
    }

    /// Whether `block` has been sealed.
    pub fn is_sealed(&self, block: Block) -> bool {
        self.blocks.get(&block).is_some_and(|s| s.sealed)
    }

    /// Predecessors recorded so far for `block`.
    pub fn preds(&self, block: Block) -> &[Block] {
        self.blocks.get(&block).map_or(&[], |s| s.preds.as_slice())
    }

    /// `var = value` at the end of what has been lowered into `block` so far.
    pub fn def_var(&mut self, var: Var, block: Block, value: Value) {
        self.current_def.insert((var, block), value);
        self.assigned_at
            .entry(var)
            .or_default()
            .push(self.assignments);
        self.assignments += 1;
    }

    /// The number the next assignment will get (taken before lowering a loop,
    /// for [`SsaBuilder::finish_loop`]).
    pub fn next_assignment(&self) -> u32 {
        self.assignments
    }

    /// Records that the loop headed by `header`, entered from `entry`, is
    /// lowered and sealed, its assignments numbered from `since`. (A loop entered
    /// from unreachable code has no entering edge and is not recorded.)
    pub fn finish_loop(&mut self, header: Block, entry: Block, since: u32) {
        if self.is_sealed(header) && self.preds(header).first() == Some(&entry) {
            self.loops.insert(header, (entry, since, self.assignments));
        }
    }

    /// Whether `var` was assigned by an assignment numbered in `from..to`.
    fn assigned_between(&self, var: Var, from: u32, to: u32) -> bool {
        self.assigned_at.get(&var).is_some_and(|at| {
            let k = at.partition_point(|&n| n < from);
            at.get(k).is_some_and(|&n| n < to)
        })
    }

    fn resolve(&self, mut v: Value) -> Value {
        while let Some(&n) = self.alias.get(&v) {
            v = n;
        }
        v
    }

    /// The current value of `var` in `block`.
    pub fn use_var(&mut self, func: &mut Function, var: Var, block: Block) -> Value {
        // Walk single-predecessor chains iteratively; remember the blocks passed so the
        // answer can be cached in each of them.
        let mut chain = Vec::new();
        let mut b = block;
        let value = loop {
            if let Some(&v) = self.current_def.get(&(var, b)) {
                break self.resolve(v);
            }
            let (sealed, npreds) = match self.blocks.get(&b) {
                Some(s) => (s.sealed, s.preds.len()),
                None => (false, 0),
            };
            if !sealed {
                let ty = self.var_types[var.0 as usize];
                let p = func.append_block_param(b, ty);
                self.param_count += 1;
                self.blocks.entry(b).or_default().incomplete.push((var, p));
                self.current_def.insert((var, b), p);
                break p;
            }
            // A single-predecessor chain longer than the function has blocks is a
            // cycle: only possible in unreachable code, where any value will do.
            if npreds == 1 && chain.len() <= func.num_blocks() {
                chain.push(b);
                b = self.blocks[&b].preds[0];
                continue;
            }
            // A finished loop that never assigns `var`: read where it was entered.
            if let Some(&(entry, from, to)) = self.loops.get(&b) {
                if !self.assigned_between(var, from, to) && chain.len() <= func.num_blocks() {
                    chain.push(b);
                    b = entry;
                    continue;
                }
            }
            if npreds <= 1 {
                // Read before any write (undefined in SysY): use zero.
                let ty = self.var_types[var.0 as usize];
                let z = func.zero(ty);
                self.current_def.insert((var, b), z);
                break z;
            }
            let ty = self.var_types[var.0 as usize];
            let p = func.append_block_param(b, ty);
            self.param_count += 1;
            // Define before reading the predecessors, to break cycles.
            self.current_def.insert((var, b), p);
            let v = self.add_param_args(func, var, b, p);
            self.current_def.insert((var, b), v);
            break v;
        };
        for c in chain {
            self.current_def.insert((var, c), value);
        }
        value
    }

    /// Reads `var` in every predecessor of `block` and appends the values as the
    /// arguments for parameter `param` on each incoming edge; then removes the
    /// parameter if it is trivial. Returns the value now standing for it.
    fn add_param_args(
        &mut self,
        func: &mut Function,
        var: Var,
        block: Block,
        param: Value,
    ) -> Value {
        let preds = ir::analysis::distinct_in_order(&self.blocks[&block].preds);
        for pred in preds {
            let v = self.use_var(func, var, pred);
            let term = func.terminator(pred).expect("predecessor has a terminator");
            let mut kind = func.kind(term).clone();
            for t in kind.targets_mut() {
                if t.block == block {
                    t.args.push(v);
                }
            }
            func.replace_kind(term, kind);
        }
        self.try_remove_trivial(func, param)
    }

    /// Seals `block`: all its predecessors are known. Completes its incomplete
    /// parameters.
    pub fn seal_block(&mut self, func: &mut Function, block: Block) {
        let st = self.blocks.entry(block).or_default();
        if st.sealed {
            return;
        }
        st.sealed = true;
        let incomplete = std::mem::take(&mut st.incomplete);
        for (var, p) in incomplete {
            self.add_param_args(func, var, block, p);
        }
    }

    /// If `param` is trivial, replaces it and re-examines the parameters it fed.
    /// Returns what now stands for `param`.
    fn try_remove_trivial(&mut self, func: &mut Function, param: Value) -> Value {
        let mut worklist = vec![param];
        while let Some(p) = worklist.pop() {
            let p = self.resolve(p);
            let ValueDef::Param(block, idx) = func.value_def(p) else {
                continue;
            };
            // A phi replaced by a function parameter resolves to it: the entry
            // block's parameters are the arguments, never phis (with no
            // predecessors, one would look trivial and become zero).
            if block == func.entry_block() {
                continue;
            }
            if func.block_params(block).get(idx as usize) != Some(&p) {
                continue; // already removed
            }
            if !self.blocks.get(&block).is_some_and(|s| s.sealed) {
                continue; // still collecting arguments
            }
            let preds = self.blocks[&block].preds.clone();
            let mut same: Option<Value> = None;
            let mut trivial = true;
            let mut complete = true;
            for &pred in &preds {
                let term = func.terminator(pred).expect("predecessor has a terminator");
                for t in func.kind(term).targets() {
                    if t.block != block {
                        continue;
                    }
                    // While `add_param_args` is filling this parameter, a recursive
                    // lookup can come back to it: edges not yet given their argument
                    // mean it cannot be judged (or removed) yet; the filling call
                    // examines it when done.
                    let Some(&a) = t.args.get(idx as usize) else {
                        complete = false;
                        continue;
                    };
                    if a == p || Some(a) == same {
                        continue;
                    }
                    if same.is_some() {
                        trivial = false;
                    }
                    same = Some(a);
                }
            }
            if !trivial || !complete {
                continue;
            }
            let same = match same {
                Some(v) => v,
                None => {
                    let ty = func.value_type(p);
                    func.zero(ty)
                }
            };
            // Parameters that receive `p` on some edge may become trivial in turn.
            let mut fed: Vec<Value> = Vec::new();
            for &u in func.users(p) {
                for t in func.kind(u).targets() {
                    for (i, &a) in t.args.iter().enumerate() {
                        if a == p {
                            if let Some(&q) = func.block_params(t.block).get(i) {
                                if q != p {
                                    fed.push(q);
                                }
                            }
                        }
                    }
                }
            }
            func.replace_all_uses(p, same);
            let mut unique_preds = preds.clone();
            unique_preds.sort();
            unique_preds.dedup();
            func.remove_block_param(block, idx as usize, &unique_preds);
            self.param_count -= 1;
            self.alias.insert(p, same);
            worklist.extend(fed);
        }
        self.resolve(param)
    }

    /// Number of block parameters this builder created that are still in place.
    pub fn live_param_count(&self) -> usize {
        self.param_count
    }

    /// Debug check: every block that got edges or definitions was sealed.
    pub fn all_sealed(&self) -> bool {
        self.blocks.values().all(|s| s.sealed)
    }
}
