//! Globals: each tast global becomes a module global with its constant initialiser.
//! Zero elements are never materialised: an all-zero global is `GlobalInit::Zero`
//! (`.bss`), and an initialised array stores only up to its last non-zero element.

use front::tast;
use ir::{GlobalData, GlobalId, GlobalInit, Module};

/// Adds every global of `program` to `module`; the result maps tast ids to IR ids.
pub(crate) fn lower_globals(program: &tast::Program, module: &mut Module) -> Vec<GlobalId> {
    program
        .globals
        .iter()
        .map(|g| {
            let len: u64 = g.dims.iter().map(|&d| d as u64).product();
            let init = match &g.init {
                tast::GlobalInit::Scalar(c) if !c.is_zero_bits() => {
                    GlobalInit::Words(vec![c.bits()])
                }
                tast::GlobalInit::Scalar(_) => GlobalInit::Zero,
                tast::GlobalInit::Array(elems) => match elems.last() {
                    None => GlobalInit::Zero,
                    Some(&(last, _)) => {
                        let mut words = vec![0u32; last as usize + 1];
                        for &(i, c) in elems {
                            words[i as usize] = c.bits();
                        }
                        GlobalInit::Words(words)
                    }
                },
            };
            module.add_global(GlobalData {
                name: g.name.clone(),
                elem: crate::scalar_type(g.ty),
                len: len.min(u32::MAX as u64) as u32,
                init,
            })
        })
        .collect()
}
