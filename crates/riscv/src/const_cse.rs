//! Wide constants materialised once per dominator subtree.
//!
//! Instruction selection materialises a constant in every block that uses it,
//! which keeps live ranges short; machine LICM then takes those of loops out to
//! the preheaders. Code without loops that repeats the same arithmetic block
//! after block (an inlined recursion, a chain of tests) keeps paying for every
//! copy: a constant outside the 12-bit immediate range is a `lui` and an `addi`
//! each time. This stage reuses a wide constant from a block that dominates the
//! use, as LLVM's MachineCSE does for cheap instructions along the dominator
//! tree: no path executes more instructions than before (the first block on
//! each path still materialises it), and the uses in later blocks read the
//! register. The longer live range costs nothing when registers are free and
//! little when they are not: the constant's register keeps its
//! rematerialisation recipe, so a spilled constant is recreated before each use
//! rather than reloaded.
//!
//! Only `li` of a single-definition virtual register with an immediate that
//! needs two or more instructions is reused; constants of one instruction stay
//! per block (reuse would lengthen live ranges to save nothing).

use crate::mir::{fits_imm12, MBlock, MFunction, MInst, Reg};
use rustc_hash::FxHashMap;

/// Replaces the wide `li` dominated by an equal one; returns how many.
pub fn run(mf: &mut MFunction) -> usize {
    let Some(dt) = crate::loops::dom_tree(mf) else {
        return 0;
    };
    let (defs, _) = mf.vreg_defs();
    // For each immediate, its definitions on the dominator-tree path to the
    // current block (innermost last).
    let mut avail: FxHashMap<i64, Vec<(MBlock, Reg)>> = FxHashMap::default();
    let mut rename: FxHashMap<Reg, Reg> = FxHashMap::default();
    for b in dt.preorder() {
        let mut k = 0;
        while k < mf.blocks[b].insts.len() {
            let MInst::Li { rd, imm } = mf.blocks[b].insts[k] else {
                k += 1;
                continue;
            };
            if !rd.is_virtual() || defs[rd.vindex()] != 1 || fits_imm12(imm) || lui_only(imm) {
                k += 1;
                continue;
            }
            let stack = avail.entry(imm).or_default();
            // Preorder: a definition that does not dominate this block dominates
            // no later one either.
            while stack.last().is_some_and(|&(d, _)| !dt.dominates(d, b)) {
                stack.pop();
            }
            match stack.last() {
                Some(&(_, r)) if mf.class_of(r) == mf.class_of(rd) => {
                    rename.insert(rd, r);
                    mf.blocks[b].insts.remove(k);
                    mf.vreg_remat[rd.vindex()] = None;
                }
                _ => {
                    stack.push((b, rd));
                    k += 1;
                }
            }
        }
    }
    if rename.is_empty() {
        return 0;
    }
    for &b in &mf.layout {
        for inst in &mut mf.blocks[b].insts {
            inst.map_regs(|r, is_def| {
                if !is_def {
                    if let Some(&to) = rename.get(r) {
                        *r = to;
                    }
                }
            });
        }
    }
    rename.len()
}

/// Whether `li imm` is a single `lui` (a multiple of 4096 in the 32-bit range).
fn lui_only(imm: i64) -> bool {
    imm & 0xfff == 0 && imm == imm as i32 as i64
}
