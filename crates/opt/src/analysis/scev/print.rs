//! The printed form of a function's scalar evolution, for tests and debugging:
//! one line per analysed value (`%4 = {1,+,1}<nsw><bb1>`, the `<nsw>` marking an
//! exact recurrence as LLVM prints its no-signed-wrap flag), then per loop the exit
//! count of each exiting block and the loop's back-edge-taken count.

use super::expr::{Expr, ExprId, Exprs};
use super::tripcount::ExitCount;
use super::ScalarEvolution;
use crate::analysis::LoopForest;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::text::Names;
use ir::{Function, Module, Type};
use rustc_hash::FxHashSet;

/// The scalar evolution of `f` (a function of `m`) as text.
pub fn print(m: &Module, f: &Function) -> String {
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut se = ScalarEvolution::new(f, &cfg, &dt, &loops);
    let names = Names::new(f);
    let mut out = String::new();
    let mut values = Vec::new();
    for b in f.layout.blocks() {
        let insts = f.layout.block_insts(b).filter_map(|i| f.inst_result(i));
        let vals: Vec<_> = f.block_params(b).iter().copied().chain(insts).collect();
        for v in vals {
            if !matches!(f.value_type(v), Type::I32 | Type::I64 | Type::Ptr) {
                continue;
            }
            values.push((v, se.get(v)));
        }
    }
    // Flags the exit tests prove, for the recurrences printed above.
    let proven: FxHashSet<ExprId> = (0..se.exprs.len() as u32)
        .map(ExprId)
        .filter(|&e| matches!(se.exprs.get(e), Expr::AddRec { exact: false, .. }))
        .collect::<Vec<_>>()
        .into_iter()
        .filter(|&e| se.is_exact(e))
        .collect();
    se.proven = proven;
    for (v, e) in values {
        let text = se.display(m, &names, e);
        out += &format!("{} = {text}\n", names.value(v));
    }
    let mut ids: Vec<_> = loops.loops().map(|(id, _)| id).collect();
    ids.sort_by_key(|&id| names.block_number(loops.get(id).header));
    for id in ids {
        let h = names.block(loops.get(id).header);
        for e in se.exiting_blocks(id) {
            let c = se.exit_count(id, e);
            let text = se.display_count(m, &names, c.as_ref());
            out += &format!("loop {h} exit {}: {text}\n", names.block(e));
        }
        let counts = se.backedge_taken(id);
        let exact = se.display_count(m, &names, counts.exact.as_ref());
        let max = counts.max.map_or("?".to_string(), |m| m.to_string());
        out += &format!("loop {h}: backedges {exact}, max {max}\n");
    }
    out
}

impl ScalarEvolution<'_> {
    /// `e` as text.
    pub fn display(&self, m: &Module, names: &Names, e: ExprId) -> String {
        fmt(&self.exprs, &self.proven, self.loops, self.f, m, names, e)
    }

    /// An exit count as text: `?` when unknown, else the count and its predicates.
    pub fn display_count(&self, m: &Module, names: &Names, c: Option<&ExitCount>) -> String {
        let Some(c) = c else {
            return "?".to_string();
        };
        let mut s = self.display(m, names, c.count);
        for p in &c.predicates {
            s += &format!(
                " if {} {} {}",
                self.display(m, names, p.lhs),
                p.op.name(),
                self.display(m, names, p.rhs)
            );
        }
        s
    }
}

fn fmt(
    x: &Exprs,
    proven: &FxHashSet<ExprId>,
    loops: &LoopForest,
    f: &Function,
    m: &Module,
    names: &Names,
    e: ExprId,
) -> String {
    let list = |ops: &[ExprId], sep: &str| {
        ops.iter()
            .map(|&o| fmt(x, proven, loops, f, m, names, o))
            .collect::<Vec<_>>()
            .join(sep)
    };
    match x.get(e) {
        Expr::Const { c, .. } => c.to_string(),
        Expr::Unknown { v, .. } => names.operand(m, f, *v),
        Expr::Add { ops, .. } => format!("({})", list(ops, " + ")),
        Expr::Mul { ops, .. } => format!("({})", list(ops, " * ")),
        Expr::AddRec { ops, lp, exact, .. } => {
            format!(
                "{{{}}}{}<{}>",
                list(ops, ",+,"),
                if *exact || proven.contains(&e) {
                    "<nsw>"
                } else {
                    ""
                },
                names.block(loops.get(*lp).header)
            )
        }
        Expr::SExt(a) => format!("(sext {})", fmt(x, proven, loops, f, m, names, *a)),
        Expr::ZExt(a) => format!("(zext {})", fmt(x, proven, loops, f, m, names, *a)),
        Expr::Trunc(a) => format!("(trunc {})", fmt(x, proven, loops, f, m, names, *a)),
        Expr::SMax(a, b) => format!(
            "({} smax {})",
            fmt(x, proven, loops, f, m, names, *a),
            fmt(x, proven, loops, f, m, names, *b)
        ),
        Expr::UDiv(a, b) => format!(
            "({} /u {})",
            fmt(x, proven, loops, f, m, names, *a),
            fmt(x, proven, loops, f, m, names, *b)
        ),
    }
}
