//! The optimisation passes, one per file. Each file documents what the pass does, the
//! algorithm and its source, and has tests of what it must and must not do. Each
//! exposes a function over one function (`run(&mut Function, ...) -> bool`) and a unit
//! struct implementing [`Pass`](crate::Pass) for the registry.

pub mod cgvn;
pub mod closedform;
pub mod condprop;
pub mod constglobals;
pub mod dce;
pub mod finalvalue;
pub mod globalforward;
pub mod gvn;
pub mod hoistloops;
pub mod inline;
pub mod instcombine;
pub mod licm;
pub mod localconst;
pub mod loopdelete;
pub mod looprotate;
pub mod loopsplit;
pub mod mem2reg;
pub mod memforward;
pub mod memoize;
pub mod mergeargs;
pub mod partial_inline;
pub mod pre;
pub mod predcom;
pub mod reassoc;
pub mod sccp;
pub mod silentstore;
pub mod simplifycfg;
pub mod sink;
pub mod strength;
pub mod unroll;

#[cfg(test)]
pub(crate) mod testutil;

use ir::{Function, Module};

/// Runs `pass` over every defined function of `m`; whether any changed.
pub(crate) fn each_function(m: &mut Module, mut pass: impl FnMut(&mut Function) -> bool) -> bool {
    let mut changed = false;
    for f in m.funcs.values_mut() {
        if !f.is_declaration() {
            changed |= pass(f);
        }
    }
    changed
}
