//! Constant hoisting: a wide constant, a single-precision constant or a global's
//! address that several blocks materialise is materialised once, in the nearest
//! block that dominates them all.
//!
//! Instruction selection materialises constants and addresses once per block
//! (machine LICM then takes them out of loops). Outside loops, a function whose
//! blocks each test or mask with the same wide constant (`lui` and `addiw`, two
//! instructions) pays for it in every block. Here every `li` of a constant that
//! takes two instructions or more, every `lla`, and every `fmv.w.x` of a
//! constant's bits (a float constant: `li` and `fmv.w.x`, the move taking three
//! cycles), defining a register written once, is grouped by what it computes; a group spread over two blocks or more
//! becomes one instruction at the start of the blocks' nearest common dominator,
//! and its registers one. The new register keeps the instruction as its
//! rematerialisation recipe: where registers run short, the allocator recomputes
//! it before its uses instead of spilling it.
//!
//! Sharing is free when the common dominator is one of the group's blocks (it
//! materialises the constant already, so no path runs the materialisation more
//! often than before) and the shared register lives across no call. Otherwise
//! it costs: paths through the dominator that needed no constant now
//! materialise one, and a register live across a call is callee-saved, saved
//! and restored once per activation (a recursive function's memo key kept
//! across its recursive calls). Then only a constant that at least
//! [`MIN_COSTLY_SHARE`] blocks materialise is shared: a function whose many
//! levels each reduce modulo one prime (a recursion inlined several levels
//! deep) gains far more than the save costs. The nearest common dominator is found as in Cooper, Harvey and
//! Kennedy's "A Simple, Fast Dominance Algorithm" (2001), walking up the tree by
//! reverse post-order numbers. This is LLVM's `ConstantHoisting` with that rule
//! in place of its profile-driven choice of insertion points.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::loops::dominator_tree;
use crate::mir::{fits_imm12, CvtOp, MBlock, MFunction, MInst, Reg, RegClass, ZERO};

/// Steps up the dominator tree allowed per group, to keep the pass linear on
/// long chains of blocks.
const MAX_STEPS: usize = 4096;
/// Blocks walked, over all groups, looking for calls the shared register would
/// live across (a group whose walk does not fit is taken to cross one).
const MAX_WALK: usize = 1 << 16;
/// The fewest blocks that must share a constant when sharing has a cost.
const MIN_COSTLY_SHARE: usize = 8;

/// What a hoistable instruction computes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Value {
    Imm(i64),
    Address(u32, i64),
    /// A single-precision constant: `fmv.w.x` of a register holding these bits
    /// (from `li`, or `zero`).
    Float(i64),
}

/// Whether `li imm` takes more than one instruction: not a 12-bit immediate
/// (`addi`), nor a 32-bit one with its low 12 bits clear (`lui` alone).
fn wide(imm: i64) -> bool {
    let lui_only = imm & 0xfff == 0 && i32::try_from(imm).is_ok();
    !fits_imm12(imm) && !lui_only
}

/// The constants held by virtual registers that one `li` defines (indexed by
/// virtual register number).
type LiConsts = Vec<Option<i64>>;

fn li_consts(mf: &MFunction, defs: &[u32]) -> LiConsts {
    let mut consts = vec![None; mf.num_vregs()];
    for &b in &mf.layout {
        for i in &mf.blocks[b].insts {
            if let MInst::Li { rd, imm } = *i {
                if rd.is_virtual() && defs[rd.vindex()] == 1 {
                    consts[rd.vindex()] = Some(imm);
                }
            }
        }
    }
    consts
}

fn hoistable(i: &MInst, consts: &LiConsts) -> Option<(Reg, Value)> {
    match *i {
        MInst::Li { rd, imm } if wide(imm) => Some((rd, Value::Imm(imm))),
        MInst::La { rd, global, off } => Some((rd, Value::Address(global, off))),
        MInst::Cvt {
            op: CvtOp::FmvWX,
            rd,
            rs,
        } => {
            let bits = if rs == ZERO {
                0
            } else if rs.is_virtual() {
                consts.get(rs.vindex()).copied().flatten()?
            } else {
                return None;
            };
            Some((rd, Value::Float(bits)))
        }
        _ => None,
    }
}

/// Materialises each wide constant and global address of `mf` that several
/// blocks materialise once, where it dominates them; returns how many
/// instructions went.
pub fn hoist_constants(mf: &mut MFunction) -> usize {
    let (defs, _) = mf.vreg_defs();
    let consts = li_consts(mf, &defs);
    let mut groups: BTreeMap<Value, Vec<(MBlock, Reg)>> = BTreeMap::new();
    for &b in &mf.layout {
        for i in &mf.blocks[b].insts {
            if let Some((rd, v)) = hoistable(i, &consts) {
                if rd.is_virtual() && defs[rd.vindex()] == 1 {
                    groups.entry(v).or_default().push((b, rd));
                }
            }
        }
    }
    groups.retain(|_, g| g.iter().any(|&(b, _)| b != g[0].0));
    if groups.is_empty() {
        return 0;
    }
    let Some(dt) = dominator_tree(mf) else {
        return 0;
    };
    let mut rpo_num = vec![usize::MAX; mf.blocks.len()];
    for (k, &b) in dt.rpo().iter().enumerate() {
        rpo_num[b.index()] = k;
    }
    let groups: Vec<(Value, Vec<(MBlock, Reg)>)> = groups.into_iter().collect();
    let sites = use_sites(mf, &groups);
    let preds = predecessors(mf);
    let mut budget = MAX_WALK;
    let mut rename: Vec<Option<Reg>> = vec![None; mf.num_vregs()];
    let mut removed = 0;
    for (k, (v, group)) in groups.iter().enumerate() {
        let Some(at) = common_dominator(&dt, &rpo_num, group.iter().map(|&(b, _)| b)) else {
            continue;
        };
        // Sharing costs something when the dominator did not materialise the
        // constant (paths through it that did not need it now do) or when the
        // shared register must live across a call (a callee-saved register,
        // saved and restored once per activation): then only a constant that
        // many blocks materialise is shared.
        let free = group.iter().any(|&(b, _)| b == at)
            && !crosses_call(mf, &preds, at, &sites[k], &mut budget).unwrap_or(true);
        let blocks = group.len();
        if !free && blocks < MIN_COSTLY_SHARE {
            continue;
        }
        let r = match *v {
            Value::Imm(imm) => materialise(mf, at, MInst::Li { rd: Reg::x(0), imm }),
            Value::Address(global, off) => materialise(
                mf,
                at,
                MInst::La {
                    rd: Reg::x(0),
                    global,
                    off,
                },
            ),
            Value::Float(0) => materialise(
                mf,
                at,
                MInst::Cvt {
                    op: CvtOp::FmvWX,
                    rd: Reg::x(0),
                    rs: ZERO,
                },
            ),
            Value::Float(imm) => {
                // `li` (rematerialisable) then `fmv.w.x`, whose register is
                // spilled rather than recomputed where registers run short.
                let r = mf.new_vreg(RegClass::Float);
                let t = materialise(mf, at, MInst::Li { rd: Reg::x(0), imm });
                let fmv = MInst::Cvt {
                    op: CvtOp::FmvWX,
                    rd: r,
                    rs: t,
                };
                mf.blocks[at].insts.insert(1, fmv);
                r
            }
        };
        for &(_, old) in group {
            rename[old.vindex()] = Some(r);
        }
        // The shared materialisation replaces one per block; a float constant's
        // is two instructions (the `li`s left unread go below).
        removed += match *v {
            Value::Float(imm) if imm != 0 => blocks - 2,
            _ => blocks - 1,
        };
    }
    // The registers of the groups (the new ones come after them).
    let renamed = |r: Reg| {
        r.is_virtual()
            .then(|| rename.get(r.vindex()).copied().flatten())
            .flatten()
    };
    for &b in &mf.layout.clone() {
        let insts = &mut mf.blocks[b].insts;
        insts.retain(|i| hoistable(i, &consts).is_none_or(|(rd, _)| renamed(rd).is_none()));
        for i in insts.iter_mut() {
            i.map_regs(|r, _| {
                if let Some(n) = renamed(*r) {
                    *r = n;
                }
            });
        }
    }
    removed + remove_unread_li(mf)
}

/// Materialises `inst` (whose destination is replaced by a new register of its
/// class, rematerialisable by `inst`) at the start of `at`; returns the register.
fn materialise(mf: &mut MFunction, at: MBlock, mut inst: MInst) -> Reg {
    let class = match inst {
        MInst::Cvt { .. } => RegClass::Float,
        _ => RegClass::Int,
    };
    let r = mf.new_vreg(class);
    inst.map_regs(|d, is_def| {
        if is_def {
            *d = r;
        }
    });
    mf.vreg_remat[r.vindex()] = Some(inst.clone());
    mf.blocks[at].insts.insert(0, inst);
    r
}

/// Removes each `li` into a virtual register nothing reads (one that only fed a
/// shared float constant's `fmv.w.x`); returns how many.
fn remove_unread_li(mf: &mut MFunction) -> usize {
    let mut read = vec![false; mf.num_vregs()];
    for &b in &mf.layout {
        for i in &mf.blocks[b].insts {
            i.for_each_use(|u| {
                if u.is_virtual() {
                    read[u.vindex()] = true;
                }
            });
        }
    }
    let mut removed = 0;
    for &b in &mf.layout.clone() {
        let insts = &mut mf.blocks[b].insts;
        let before = insts.len();
        insts.retain(
            |i| !matches!(*i, MInst::Li { rd, .. } if rd.is_virtual() && !read[rd.vindex()]),
        );
        removed += before - insts.len();
    }
    removed
}

/// Where each group's registers are read: block and position.
fn use_sites(mf: &MFunction, groups: &[(Value, Vec<(MBlock, Reg)>)]) -> Vec<Vec<(MBlock, usize)>> {
    let mut group_of: FxHashMap<Reg, usize> = FxHashMap::default();
    for (k, (_, g)) in groups.iter().enumerate() {
        for &(_, r) in g {
            group_of.insert(r, k);
        }
    }
    let mut sites = vec![Vec::new(); groups.len()];
    for &b in &mf.layout {
        for (pos, i) in mf.blocks[b].insts.iter().enumerate() {
            i.for_each_use(|u| {
                if let Some(&k) = group_of.get(&u) {
                    sites[k].push((b, pos));
                }
            });
        }
    }
    sites
}

fn predecessors(mf: &MFunction) -> Vec<Vec<MBlock>> {
    let mut preds = vec![Vec::new(); mf.blocks.len()];
    for &b in &mf.layout {
        for s in mf.succs(b) {
            preds[s.index()].push(b);
        }
    }
    preds
}

/// Whether a register defined at the start of `at` and read at `sites` (in
/// blocks `at` dominates) would be live across a call: walking backwards from
/// each read to `at`. `None` when the walk would exceed what is left of `budget`.
fn crosses_call(
    mf: &MFunction,
    preds: &[Vec<MBlock>],
    at: MBlock,
    sites: &[(MBlock, usize)],
    budget: &mut usize,
) -> Option<bool> {
    let calls_before = |b: MBlock, end: usize| mf.blocks[b].insts[..end].iter().any(MInst::is_call);
    let mut live_out = vec![false; mf.blocks.len()];
    let mut work: Vec<MBlock> = Vec::new();
    for &(b, pos) in sites {
        if calls_before(b, pos) {
            return Some(true);
        }
        if b != at {
            work.push(b);
        }
    }
    // `work` holds blocks the register is live into (other than `at`).
    while let Some(b) = work.pop() {
        for &p in &preds[b.index()] {
            if live_out[p.index()] {
                continue;
            }
            *budget = budget.checked_sub(1)?;
            live_out[p.index()] = true;
            if calls_before(p, mf.blocks[p].insts.len()) {
                return Some(true);
            }
            if p != at {
                work.push(p);
            }
        }
    }
    Some(false)
}

/// The nearest block dominating every block of `blocks` (reachable ones), if
/// found within [`MAX_STEPS`] steps up the tree.
fn common_dominator(
    dt: &ir::analysis::DomTree<MBlock>,
    rpo_num: &[usize],
    blocks: impl Iterator<Item = MBlock>,
) -> Option<MBlock> {
    let mut steps = 0;
    let mut at: Option<MBlock> = None;
    for b in blocks {
        if rpo_num[b.index()] == usize::MAX {
            return None;
        }
        let Some(mut a) = at else {
            at = Some(b);
            continue;
        };
        let mut b = b;
        while a != b {
            steps += 1;
            if steps > MAX_STEPS {
                return None;
            }
            if rpo_num[a.index()] > rpo_num[b.index()] {
                a = dt.idom(a)?;
            } else {
                b = dt.idom(b)?;
            }
        }
        at = Some(a);
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{parse_function, print_function};

    /// Both arms of a branch materialise the constant, their dominator does
    /// not: materialised there, it would run on every path as before but stay
    /// live across the branch. Nothing moves.
    #[test]
    fn a_dominator_that_does_not_materialise_the_constant_is_not_used() {
        let text = "function f local
  int %v0..%v8
bb0:
  mv %v0, a0
  blt %v0, zero, bb1
  j bb2
bb1:
  li %v1, 998244353
  and %v2, %v0, %v1
  mv a0, %v2
  ret a0
bb2:
  li %v3, 998244353
  or %v4, %v0, %v3
  mv a0, %v4
  ret a0
end
";
        let mut mf = parse_function(text).unwrap();
        assert_eq!(hoist_constants(&mut mf), 0);
        assert_eq!(
            print_function(&mf),
            print_function(&parse_function(text).unwrap())
        );
    }

    /// The entry materialises the constant and so does a block after a call:
    /// shared, the register would live across the call. Nothing moves.
    #[test]
    fn a_register_that_would_live_across_a_call_is_not_shared() {
        let text = "function f local
  int %v0..%v8
bb0:
  mv %v0, a0
  li %v1, 998244353
  blt %v0, %v1, bb1
  j bb2
bb1:
  call g()
  li %v2, 998244353
  and %v3, %v0, %v2
  mv a0, %v3
  ret a0
bb2:
  mv a0, %v0
  ret a0
end
";
        let mut mf = parse_function(text).unwrap();
        assert_eq!(hoist_constants(&mut mf), 0);
        // Without the call, bb1's materialisation goes.
        let mut mf = parse_function(&text.replace("  call g()\n", "")).unwrap();
        assert_eq!(hoist_constants(&mut mf), 1, "{}", print_function(&mf));
    }

    /// The same constant in a chain of blocks, as a function whose levels each
    /// test a value against it: one `li` is left, in the first block, which
    /// dominates the others.
    #[test]
    fn a_chain_shares_one_materialisation() {
        let mut mf = parse_function(
            "function f local
  int %v0..%v9
bb0:
  mv %v0, a0
  li %v1, 305419896
  blt %v0, %v1, bb1
  j bb3
bb1:
  li %v2, 305419896
  blt %v2, %v0, bb2
  j bb3
bb2:
  lla %v4, g0+8
  li %v3, 305419896
  lw %v5, 0(%v4)
  add %v6, %v5, %v3
  mv a0, %v6
  ret a0
bb3:
  lla %v7, g0+8
  lw %v8, 0(%v7)
  mv a0, %v8
  ret a0
end
",
        )
        .unwrap();
        // Two `li` go; the two `lla` stay, as bb0, their nearest common
        // dominator, has none.
        assert_eq!(hoist_constants(&mut mf), 2, "{}", print_function(&mf));
        let text = print_function(&mf);
        assert_eq!(text.matches("  li ").count(), 1, "{text}");
        assert_eq!(text.matches("  lla ").count(), 2, "{text}");
        let bb0 = &text[text.find("bb0:").unwrap()..text.find("bb1:").unwrap()];
        assert!(bb0.contains("li "), "{text}");
    }

    /// A float constant (`li` and `fmv.w.x`) in a chain of blocks, as a
    /// recursion inlined into itself divides by 3.0 at each level: one `li` and
    /// one `fmv.w.x` are left, in the first block; an integer use of the same
    /// bits keeps its own `li`.
    #[test]
    fn a_float_constant_is_shared_with_its_li() {
        let mut mf = parse_function(
            "function f local
  int %v0..%v9
  float %v10..%v19
bb0:
  mv %v10, fa0
  li %v1, 1077936128
  fmv.w.x %v11, %v1
  fdiv.s %v12, %v10, %v11
  flt.s %v2, %v12, %v10
  bne %v2, zero, bb1
  j bb2
bb1:
  li %v3, 1077936128
  fmv.w.x %v13, %v3
  fdiv.s %v14, %v12, %v13
  mv fa0, %v14
  ret fa0
bb2:
  li %v4, 1077936128
  fmv.w.x %v15, %v4
  fmul.s %v16, %v12, %v15
  mv fa0, %v16
  addw a0, %v4, %v4
  ret fa0
end
",
        )
        .unwrap();
        assert_eq!(hoist_constants(&mut mf), 3, "{}", print_function(&mf));
        let text = print_function(&mf);
        assert_eq!(text.matches("fmv.w.x").count(), 1, "{text}");
        // bb0's and bb1's `li` go, bb2's stays for its `addw`; bb0 gets the
        // shared one.
        assert_eq!(text.matches("  li ").count(), 2, "{text}");
        let bb0 = &text[text.find("bb0:").unwrap()..text.find("bb1:").unwrap()];
        assert!(bb0.contains("li ") && bb0.contains("fmv.w.x"), "{text}");
    }
}
