//! Live-range splitting around loops, guided by a first allocation.
//!
//! Linear scan spills a whole interval ("spill everywhere", `spill.rs`): a value
//! spilled because some stretch of the function is crowded is then reloaded before
//! every use, inside loops too, even where a register would be free for the length
//! of the loop. Splitting a live range at a loop boundary gives the loop its own
//! copy of the value, a new virtual register defined once in the loop's preheader
//! (a `mv` from the original, or the original's recomputation when it has one) and
//! used instead of the original everywhere in the loop. The allocator then decides
//! again: the copy competes only over the loop, with the loop's spill weight, and
//! when it gets a register the loop reads the value from it and the one reload
//! happens in the preheader, outside the loop.
//!
//! This is splitting at loop boundaries as in the region-based splitting of
//! production allocators (LLVM's greedy allocator splits around loops and blocks;
//! Wimmer and Franz, "Linear Scan Register Allocation on SSA Form", CGO 2010, split
//! intervals at block boundaries and place spill code outside loops), done here as
//! a rewrite between two linear-scan rounds:
//!
//! 1. Round one allocates as usual. For every spilled virtual register `v` and every
//!    loop `L` that contains a use of `v` in its own blocks (not those of an inner
//!    loop) but no definition of `v`, a new register `v.L` is defined at the end of
//!    `L`'s preheader (created when the header has several outside predecessors)
//!    and replaces `v` in those blocks. Loops are visited innermost first: the copy
//!    in an inner loop's preheader reads `v` in the enclosing loop, so it becomes a
//!    use there, and the enclosing loop's own copy feeds it.
//! 2. Round two allocates the split function. A copy that still found no register
//!    gained nothing (its preheader copy would add a reload and a store), so it is
//!    undone (its uses read what it was copied from; its definition goes) and
//!    round three allocates the result. Loops without a spilled use are untouched.
//!
//! Only loops with uses of spilled values are split, so functions that allocate
//! without spilling, or spill only outside loops, compile exactly as before. Since
//! a copy lives across its whole loop, the blocks of the split loops (nested loops
//! included) are budgeted: at most [`BUDGET`] times the function's blocks in all,
//! so the liveness the next round computes stays linear in the function (a deep
//! nest whose every level reads a spilled value would otherwise add a copy live
//! through every level below).
//! Each further round costs about the size of the liveness, so a function whose
//! liveness stores more than [`DENSE`] registers per instruction (only generated
//! code with hundreds of values live everywhere) is not split at all.

use crate::liveness::Liveness;
use crate::loops::loop_info;
use crate::mir::*;
use std::collections::BTreeMap;

/// The blocks of all split loops together (a loop counted once per copy made
/// for it, with its nested loops) may be this many times the function's blocks.
pub const BUDGET: usize = 4;

/// Registers stored in the liveness per instruction above which a function is not
/// split.
pub const DENSE: usize = 32;

/// One split: `new`, defined at the end of `preheader`, replaces `old` in a loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    pub new: Reg,
    pub old: Reg,
    pub preheader: MBlock,
}

/// Index where instructions can be appended to `insts` before its closing branches.
fn insert_point(insts: &[MInst]) -> usize {
    let mut k = insts.len();
    while k > 0 && matches!(insts[k - 1], MInst::Branch { .. } | MInst::Jump { .. }) {
        k -= 1;
    }
    k
}

/// Splits the live ranges of the registers `spilled` marks at the boundaries of
/// the loops that use them (step 1 of the module comment), given the liveness
/// the allocation used. Returns the splits made, innermost loops first.
pub fn split_around_loops(mf: &mut MFunction, spilled: &[bool], live: &Liveness) -> Vec<Split> {
    if !spilled.iter().any(|&s| s) {
        return Vec::new();
    }
    let insts: usize = mf.layout.iter().map(|b| mf.blocks[*b].insts.len()).sum();
    if live.stored() > DENSE * insts.max(1) {
        return Vec::new();
    }
    let mut info = loop_info(mf);
    if info.loops.is_empty() {
        return Vec::new();
    }
    // Blocks defining each spilled register, and its uses grouped by the
    // innermost loop of the using block: (loop, register) -> blocks.
    let mut def_blocks: BTreeMap<u32, Vec<MBlock>> = BTreeMap::new();
    let mut uses: BTreeMap<(usize, u32), Vec<MBlock>> = BTreeMap::new();
    for &b in &mf.layout {
        let innermost = info.innermost(b);
        for inst in &mf.blocks[b].insts {
            inst.for_each_def(|d| {
                if d.is_virtual() && spilled[d.vindex()] {
                    def_blocks.entry(d.0).or_default().push(b);
                }
            });
            if let Some(l) = innermost {
                inst.for_each_use(|u| {
                    if u.is_virtual() && spilled[u.vindex()] {
                        let blocks = uses.entry((l, u.0)).or_default();
                        if blocks.last() != Some(&b) {
                            blocks.push(b);
                        }
                    }
                });
            }
        }
    }
    if uses.is_empty() {
        return Vec::new();
    }
    // Blocks of each loop, nested loops included (inner loops have greater
    // indices than the loops around them).
    let mut size = vec![0usize; info.loops.len()];
    for &b in &mf.layout {
        if let Some(l) = info.innermost(b) {
            size[l] += 1;
        }
    }
    for l in (0..info.loops.len()).rev() {
        if let Some(p) = info.loops[l].parent {
            size[p] += size[l];
        }
    }
    let mut budget = BUDGET * mf.layout.len();
    let mut splits = Vec::new();
    let mut preheader_of: BTreeMap<MBlock, MBlock> = BTreeMap::new();
    // Blocks numbered from here on are preheaders made here, not in the layout.
    let first_new = mf.blocks.len();
    for li in (0..info.loops.len()).rev() {
        let groups: Vec<(u32, Vec<MBlock>)> = uses
            .range((li, 0)..=(li, u32::MAX))
            .map(|(&(_, v), blocks)| (v, blocks.clone()))
            .collect();
        let header = info.loops[li].header;
        for (v, blocks) in groups {
            let old = Reg(v);
            let defined_inside = def_blocks
                .get(&v)
                .is_some_and(|ds| ds.iter().any(|&d| info.contains(li, d)));
            if defined_inside || size[li] > budget {
                continue;
            }
            budget -= size[li];
            let parent = info.loops[li].parent;
            let pre = match preheader_of.get(&header) {
                Some(&p) => p,
                None => {
                    let p = preheader(mf, &info.preds[header.index()], header, li, &info);
                    if p.index() >= first_new {
                        info.add_block(p, parent);
                    }
                    preheader_of.insert(header, p);
                    p
                }
            };
            let new = mf.new_vreg_like(old);
            let def = match mf.vreg_remat[old.vindex()].clone() {
                Some(mut recipe) => {
                    recipe.map_regs(|r, is_def| {
                        if is_def {
                            *r = new;
                        }
                    });
                    mf.vreg_remat[new.vindex()] = Some(recipe.clone());
                    recipe
                }
                None => MInst::Mv { rd: new, rs: old },
            };
            let insts = &mut mf.blocks[pre].insts;
            let at = insert_point(insts);
            insts.insert(at, def.clone());
            for &b in &blocks {
                for inst in &mut mf.blocks[b].insts {
                    inst.map_regs(|r, is_def| {
                        if !is_def && *r == old {
                            *r = new;
                        }
                    });
                }
            }
            // A copy from `old` in the preheader reads it in the enclosing loop.
            if let (Some(p), MInst::Mv { .. }) = (parent, &def) {
                let blocks = uses.entry((p, v)).or_default();
                if !blocks.contains(&pre) {
                    blocks.push(pre);
                }
            }
            splits.push(Split {
                new,
                old,
                preheader: pre,
            });
        }
    }
    // New preheaders go right before their headers.
    let created: BTreeMap<MBlock, MBlock> = preheader_of
        .into_iter()
        .filter(|(_, p)| p.index() >= first_new)
        .collect();
    if !created.is_empty() {
        let mut layout = Vec::with_capacity(mf.layout.len() + created.len());
        for &b in &mf.layout {
            if let Some(&p) = created.get(&b) {
                layout.push(p);
            }
            layout.push(b);
        }
        mf.layout = layout;
    }
    splits
}

/// The preheader of loop `l` with header `header`: its only outside predecessor
/// when that jumps nowhere else, or a new block (not yet in the layout) that the
/// outside predecessors branch to instead.
fn preheader(
    mf: &mut MFunction,
    preds: &[MBlock],
    header: MBlock,
    l: usize,
    info: &crate::loops::LoopInfo,
) -> MBlock {
    let outside: Vec<MBlock> = preds
        .iter()
        .copied()
        .filter(|&p| !info.contains(l, p))
        .collect();
    if let [p] = outside[..] {
        if mf.succs(p)[..] == [header] {
            return p;
        }
    }
    let pre = mf.new_block();
    mf.blocks[pre].insts.push(MInst::Jump { target: header });
    for &p in &outside {
        for i in &mut mf.blocks[p].insts {
            if let Some(t) = i.branch_target_mut() {
                if *t == header {
                    *t = pre;
                }
            }
        }
    }
    pre
}

/// Undoes `splits` (step 2 of the module comment): each one's uses read what it
/// was copied from again (through chains of undone splits), and its definition
/// in the preheader goes. Preheaders created stay (a lone jump, which the
/// peephole threads away).
pub fn undo(mf: &mut MFunction, splits: &[Split]) {
    if splits.is_empty() {
        return;
    }
    let undone: std::collections::BTreeSet<Reg> = splits.iter().map(|s| s.new).collect();
    // What each undone register was copied from: the `mv` source as it is now
    // (an enclosing loop's copy, or the original).
    let mut source: BTreeMap<Reg, Reg> = BTreeMap::new();
    for s in splits {
        let from = mf.blocks[s.preheader]
            .insts
            .iter()
            .find_map(|i| match i {
                MInst::Mv { rd, rs } if *rd == s.new => Some(*rs),
                _ => None,
            })
            .unwrap_or(s.old);
        source.insert(s.new, from);
    }
    let resolve = |mut r: Reg| {
        while let Some(&s) = source.get(&r) {
            r = s;
        }
        r
    };
    for s in splits {
        mf.blocks[s.preheader].insts.retain(|i| {
            let mut defines_undone = false;
            i.for_each_def(|d| defines_undone |= undone.contains(&d));
            !defines_undone
        });
    }
    for &b in &mf.layout {
        for inst in &mut mf.blocks[b].insts {
            inst.map_regs(|r, is_def| {
                if !is_def && undone.contains(r) {
                    *r = resolve(*r);
                }
            });
        }
    }
    for s in splits {
        mf.vreg_remat[s.new.vindex()] = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::liveness::compute_liveness;
    use crate::text::{parse_function, print_function};

    /// An outer loop (bb1, bb3) around an inner one (bb2), both reading `%v0`,
    /// which is defined before them.
    const NEST: &str = "function t local
  int %v0..%v3
bb0:
  mv %v0, a0
  li %v1, 0
  j bb1
bb1:
  addw %v1, %v1, %v0
  li %v2, 0
  j bb2
bb2:
  addw %v1, %v1, %v0
  addiw %v2, %v2, 1
  blt %v2, %v0, bb2
  j bb3
bb3:
  blt %v1, %v0, bb1
  j bb4
bb4:
  mv a0, %v1
  ret a0
end
";

    fn split(mf: &mut MFunction, spilled: &[bool]) -> Vec<Split> {
        let live = compute_liveness(mf);
        split_around_loops(mf, spilled, &live)
    }

    fn spilled(mf: &MFunction, regs: &[u32]) -> Vec<bool> {
        (0..mf.num_vregs() as u32)
            .map(|v| regs.contains(&v))
            .collect()
    }

    /// The inner loop gets its copy first (`%v4`, in bb1, its preheader, which
    /// belongs to the outer loop), then the outer loop (`%v5`, in bb0), whose
    /// copy feeds the inner one.
    #[test]
    fn nested_loops_each_get_a_copy_fed_from_outside() {
        let mut mf = parse_function(NEST).unwrap();
        let s = spilled(&mf, &[0]);
        let splits = split(&mut mf, &s);
        let pairs: Vec<(MBlock, Reg, Reg)> =
            splits.iter().map(|s| (s.preheader, s.new, s.old)).collect();
        assert_eq!(
            pairs,
            [
                (MBlock(1), Reg::virt(4), Reg::virt(0)),
                (MBlock(0), Reg::virt(5), Reg::virt(0)),
            ]
        );
        let expected = "function t local
  int %v0..%v5
bb0:
  mv %v0, a0
  li %v1, 0
  mv %v5, %v0
  j bb1
bb1:
  addw %v1, %v1, %v5
  li %v2, 0
  mv %v4, %v5
  j bb2
bb2:
  addw %v1, %v1, %v4
  addiw %v2, %v2, 1
  blt %v2, %v4, bb2
  j bb3
bb3:
  blt %v1, %v5, bb1
  j bb4
bb4:
  mv a0, %v1
  ret a0
end
";
        assert_eq!(print_function(&mf), expected);
        crate::verify::verify(&mf, crate::verify::Stage::Virtual).unwrap();

        // Undoing the inner copy: the inner loop reads the outer copy again.
        let inner = splits[0].clone();
        undo(&mut mf, &[inner]);
        let text = print_function(&mf);
        assert!(!text.contains("mv %v4"), "{text}");
        assert!(text.contains("  blt %v2, %v5, bb2\n"), "{text}");
        assert!(text.contains("  addw %v1, %v1, %v5\n  addiw"), "{text}");
        // And undoing the outer one too gives back the original uses.
        let outer = splits[1].clone();
        undo(&mut mf, &[outer]);
        let mut original = parse_function(NEST).unwrap();
        original.new_vreg(RegClass::Int);
        original.new_vreg(RegClass::Int);
        assert_eq!(print_function(&mf), print_function(&original));
    }

    /// Nothing splits where the value is defined in the loop, where it is not
    /// spilled, or where it is used outside loops only.
    #[test]
    fn values_defined_inside_or_not_spilled_stay() {
        let mut mf = parse_function(NEST).unwrap();
        // %v1 and %v2 are defined in the loops that use them; %v3 is unused.
        let s = spilled(&mf, &[1, 2, 3]);
        assert!(split(&mut mf, &s).is_empty());
        assert_eq!(print_function(&mf), NEST);
        let s = spilled(&mf, &[]);
        assert!(split(&mut mf, &s).is_empty());
        assert_eq!(print_function(&mf), NEST);
    }

    /// A header entered from two outside blocks gets a new preheader, placed
    /// right before it; a value with a recomputation is recomputed there (and
    /// the copy can be recomputed too) rather than copied.
    #[test]
    fn a_new_preheader_and_a_recomputed_copy() {
        let text = "function t local
  int %v0..%v2
  remat %v0: li %v0, 70000
bb0:
  li %v0, 70000
  li %v1, 0
  beq a0, zero, bb2
  j bb1
bb1:
  li %v1, 5
  j bb2
bb2:
  addw %v1, %v1, %v0
  blt %v1, a1, bb2
  j bb3
bb3:
  mv a0, %v1
  ret a0
end
";
        let mut mf = parse_function(text).unwrap();
        let s = spilled(&mf, &[0]);
        let splits = split(&mut mf, &s);
        assert_eq!(splits.len(), 1);
        let pre = splits[0].preheader;
        assert_eq!(pre, MBlock(4));
        assert_eq!(mf.layout, [MBlock(0), MBlock(1), pre, MBlock(2), MBlock(3)]);
        let out = print_function(&mf);
        assert!(
            out.contains("bb4:\n  li %v3, 70000\n  j bb2\nbb2:\n  addw %v1, %v1, %v3\n"),
            "{out}"
        );
        assert!(out.contains("  remat %v3: li %v3, 70000\n"), "{out}");
        assert!(out.contains("  beq a0, zero, bb4\n"), "{out}");
        assert!(out.contains("bb1:\n  li %v1, 5\n  j bb4\n"), "{out}");
        crate::verify::verify(&mf, crate::verify::Stage::Virtual).unwrap();
    }
}
