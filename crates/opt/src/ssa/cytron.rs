//! mem2reg: promotion of scalar stack slots to SSA values by the method of Cytron,
//! Ferrante, Rosen, Wegman and Zadeck, "Efficiently Computing Static Single Assignment
//! Form and the Control Dependence Graph" (TOPLAS 1991), as the seed notes describe it
//! (and as LLVM's `PromoteMemToReg` organises it).
//!
//! A variable is an `alloc i32` or `alloc f32` of one element whose address is only
//! ever the `ptr` operand of loads and stores of its type (never stored as a value,
//! passed to a call or offset by a `gep`). For each variable:
//!
//! 1. **Definitions and uses.** One scan records the blocks that store to it and the
//!    blocks that load it before storing to it (upward-exposed uses).
//! 2. **Liveness.** It is live on entry to the blocks with upward-exposed uses and,
//!    walking predecessors backwards, to every block reaching them without a store.
//! 3. **Placement.** A block parameter (our phi) goes at each block of the iterated
//!    dominance frontier of the defining blocks where the variable is live on entry:
//!    pruned SSA, so no dead parameters are created.
//! 4. **Renaming.** A pre-order walk of the dominator tree keeps the current value of
//!    every variable (initially zero: a load before any store reads 0). A block's new
//!    parameters become current, each load is replaced by the current value and each
//!    store makes its operand current, and every branch passes the current values to
//!    its targets' new parameters. Leaving a subtree restores the values current
//!    before it (an undo log instead of one stack per variable). The walk uses an
//!    explicit stack: functions can nest blocks thousands deep.
//!
//! Unreachable blocks are renamed too, each starting from zeros, so their branches to
//! reachable blocks get arguments and every slot can be removed. Finally the new
//! parameters that turned out trivial (one value on every edge) are removed, as LLVM
//! does after renaming.

use super::trivial::remove_trivial_params;
use crate::analysis::frontiers::{iterated_frontier, DominanceFrontiers};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, BlockCall, Function, Inst, InstKind, Module, SecondaryMap, Type, Value};

/// A promotable slot.
struct Var {
    alloc: Inst,
    ty: Type,
}

/// Promotes every promotable scalar `alloc` of `f` to SSA values. Returns whether
/// anything changed.
pub fn mem2reg(f: &mut Function) -> bool {
    if f.is_declaration() {
        return false;
    }
    let vars = find_promotable(f);
    if vars.is_empty() {
        return false;
    }
    // var_of[ptr] = index + 1 of the variable whose slot `ptr` is (0: none).
    let mut var_of: SecondaryMap<Value, u32> = SecondaryMap::new();
    for (i, v) in vars.iter().enumerate() {
        let ptr = f.inst_result(v.alloc).expect("alloc has a result");
        var_of[ptr] = i as u32 + 1;
    }
    let var_index =
        |ptr: Value| -> Option<usize> { var_of[ptr].checked_sub(1).map(|i| i as usize) };

    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let df = DominanceFrontiers::compute(f, &cfg, &dt);

    // 1. Defining blocks and blocks with upward-exposed loads, per variable.
    let n = vars.len();
    let mut def_blocks: Vec<Vec<Block>> = vec![Vec::new(); n];
    let mut use_blocks: Vec<Vec<Block>> = vec![Vec::new(); n];
    {
        // Last block in which each variable was stored / seen as an upward use.
        let mut stored_in: Vec<Option<Block>> = vec![None; n];
        let mut used_in: Vec<Option<Block>> = vec![None; n];
        for &b in cfg.rpo() {
            for i in f.layout.block_insts(b) {
                match f.kind(i) {
                    InstKind::Load { ptr, .. } => {
                        if let Some(v) = var_index(*ptr) {
                            if stored_in[v] != Some(b) && used_in[v] != Some(b) {
                                used_in[v] = Some(b);
                                use_blocks[v].push(b);
                            }
                        }
                    }
                    InstKind::Store { ptr, .. } => {
                        if let Some(v) = var_index(*ptr) {
                            if stored_in[v] != Some(b) {
                                stored_in[v] = Some(b);
                                def_blocks[v].push(b);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    // 2 and 3. Live-in blocks, then parameters at the pruned iterated frontier.
    let entry = f.entry_block();
    let mut placed: SecondaryMap<Block, Vec<(usize, Value)>> = SecondaryMap::new();
    let mut new_params: Vec<Value> = Vec::new();
    // Stamps: var index + 1 for "is a def block of" and "is live-in for" the variable
    // being processed, so the maps need no clearing between variables.
    let mut def_stamp: SecondaryMap<Block, u32> = SecondaryMap::new();
    let mut live_stamp: SecondaryMap<Block, u32> = SecondaryMap::new();
    for v in 0..n {
        if def_blocks[v].is_empty() || use_blocks[v].is_empty() {
            continue; // never stored (all loads read zero) or never loaded
        }
        let stamp = v as u32 + 1;
        for &b in &def_blocks[v] {
            def_stamp[b] = stamp;
        }
        let mut work: Vec<Block> = Vec::new();
        for &b in &use_blocks[v] {
            live_stamp[b] = stamp;
            work.push(b);
        }
        while let Some(b) = work.pop() {
            for &p in cfg.preds(b) {
                if live_stamp[p] == stamp || def_stamp[p] == stamp || !dt.is_reachable(p) {
                    continue;
                }
                live_stamp[p] = stamp;
                work.push(p);
            }
        }
        let live = |b: Block| live_stamp[b] == stamp;
        for b in iterated_frontier(&df, &def_blocks[v], Some(&live)) {
            if b == entry {
                continue; // has no predecessors in valid IR
            }
            let p = f.append_block_param(b, vars[v].ty);
            placed[b].push((v, p));
            new_params.push(p);
        }
    }

    // 4. Renaming, in dominator-tree pre-order.
    let zeros: Vec<Value> = vars.iter().map(|v| f.zero(v.ty)).collect();
    let mut cur = zeros.clone();
    let mut undo: Vec<(usize, Value)> = Vec::new();
    enum Step {
        Enter(Block),
        Leave(usize),
    }
    let mut stack = vec![Step::Enter(entry)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Leave(mark) => {
                while undo.len() > mark {
                    let (v, old) = undo.pop().expect("undo entry");
                    cur[v] = old;
                }
            }
            Step::Enter(b) => {
                stack.push(Step::Leave(undo.len()));
                rename_block(f, b, &placed, &var_index, &mut cur, &mut undo);
                for &c in dt.children(b).iter().rev() {
                    stack.push(Step::Enter(c));
                }
            }
        }
    }
    let unreachable: Vec<Block> = f.layout.blocks().filter(|&b| !dt.is_reachable(b)).collect();
    for b in unreachable {
        cur.clone_from(&zeros);
        rename_block(f, b, &placed, &var_index, &mut cur, &mut undo);
        undo.clear();
    }

    for v in &vars {
        f.remove_inst(v.alloc);
    }
    remove_trivial_params(f, &new_params);
    true
}

/// Renames one block: see step 4 of the module documentation.
fn rename_block(
    f: &mut Function,
    b: Block,
    placed: &SecondaryMap<Block, Vec<(usize, Value)>>,
    var_index: &dyn Fn(Value) -> Option<usize>,
    cur: &mut [Value],
    undo: &mut Vec<(usize, Value)>,
) {
    for &(v, p) in &placed[b] {
        undo.push((v, cur[v]));
        cur[v] = p;
    }
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    for i in insts {
        match *f.kind(i) {
            InstKind::Load { ptr, .. } => {
                if let Some(v) = var_index(ptr) {
                    let r = f.inst_result(i).expect("load has a result");
                    f.replace_all_uses(r, cur[v]);
                    f.remove_inst(i);
                }
            }
            InstKind::Store { value, ptr } => {
                if let Some(v) = var_index(ptr) {
                    undo.push((v, cur[v]));
                    cur[v] = value;
                    f.remove_inst(i);
                }
            }
            _ => {}
        }
    }
    let Some(term) = f.terminator(b) else {
        return;
    };
    let targets: Vec<BlockCall> = f.kind(term).targets().into_iter().cloned().collect();
    for (which, t) in targets.into_iter().enumerate() {
        if placed[t.block].is_empty() {
            continue;
        }
        let mut args = t.args;
        args.extend(placed[t.block].iter().map(|&(v, _)| cur[v]));
        f.set_target(term, which, BlockCall::new(t.block, args));
    }
}

/// The promotable slots of `f`, in layout order.
fn find_promotable(f: &Function) -> Vec<Var> {
    let mut vars = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            let InstKind::Alloc { elem, len: 1 } = *f.kind(i) else {
                continue;
            };
            if elem != Type::I32 && elem != Type::F32 {
                continue;
            }
            let a = f.inst_result(i).expect("alloc has a result");
            let only_loads_and_stores = f.users(a).iter().all(|&u| match *f.kind(u) {
                InstKind::Load { ty, ptr } => ptr == a && ty == elem,
                InstKind::Store { value, ptr } => {
                    ptr == a && value != a && f.value_type(value) == elem
                }
                _ => false,
            });
            if only_loads_and_stores {
                vars.push(Var { alloc: i, ty: elem });
            }
        }
    }
    vars
}

/// The number of block parameters of all non-entry blocks of all defined functions
/// (entry parameters are the function's own): a measure of how many phis an SSA
/// construction created, to compare mem2reg with the Braun builder.
pub fn count_block_params(m: &Module) -> usize {
    m.funcs
        .values()
        .filter(|f| !f.is_declaration())
        .map(|f| {
            let entry = f.entry_block();
            f.layout
                .blocks()
                .filter(|&b| b != entry)
                .map(|b| f.block_params(b).len())
                .sum::<usize>()
        })
        .sum()
}

#[cfg(test)]
mod tests;
