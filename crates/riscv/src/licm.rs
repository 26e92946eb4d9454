//! Loop-invariant code motion on machine IR, before register allocation.
//!
//! Instruction selection materialises constants, global and frame addresses once per
//! block, so a loop re-creates them on every iteration; address arithmetic on
//! invariant bases is repeated the same way. This pass moves every pure, non-trapping
//! instruction (`li`, `lla`, frame addresses, integer ALU operations and register-file
//! conversions) whose operands are defined outside the loop into the loop's
//! preheader, creating one when the header has several outside predecessors, and
//! merges identical hoisted instructions. Loops are processed innermost first, so an
//! instruction can climb through a whole nest. Only virtual registers with a single
//! definition move (block parameters, defined once per incoming edge, stay).
//!
//! This is the classic algorithm of Aho, Sethi and Ullman (section 10.7, "code
//! motion"), restricted to instructions that may be executed speculatively.

use crate::licm_pile::{Kind, Pile, Place};
use crate::loops::{loop_info, LoopInfo};
use crate::mir::*;
use rustc_hash::FxHashMap;

/// At most this many registers of each class are hoisted into one loop's
/// preheader: each hoisted result stays live across the whole loop, and past the
/// registers the loop has free the allocator would spill them, turning one cheap
/// instruction per use into a reload (the register-pressure limit of LLVM's
/// `MachineLICM`, as a fixed budget: about half of each register file). The rest
/// stay in the loop, in layout order.
pub const HOIST_LIMIT: usize = 16;

fn hoistable_kind(i: &MInst) -> bool {
    matches!(
        i,
        MInst::Li { .. }
            | MInst::La { .. }
            | MInst::FrameAddr { .. }
            | MInst::AluImm { .. }
            | MInst::Alu { .. }
            | MInst::Cvt { .. }
    )
}

/// Index where instructions can be appended to `b` before its closing branches.
fn insert_point(insts: &[MInst]) -> usize {
    let mut k = insts.len();
    while k > 0 && matches!(insts[k - 1], MInst::Branch { .. } | MInst::Jump { .. }) {
        k -= 1;
    }
    k
}

/// Whether `inst` could ever be hoisted: a hoistable kind whose operands and
/// result are virtual registers with one definition (or `zero` and `sp`
/// operands). Whether its operands are invariant depends on the loop.
fn candidate(inst: &MInst, def_count: &[u32]) -> bool {
    let mut ok = hoistable_kind(inst);
    if ok {
        inst.for_each_def(|d| ok &= d.is_virtual() && def_count[d.vindex()] == 1);
        inst.for_each_use(|u| {
            ok &= if u.is_virtual() {
                def_count[u.vindex()] == 1
            } else {
                u == ZERO || u == SP
            }
        });
    }
    ok
}

/// The merge key of an instruction: itself with its result register zeroed.
fn merge_key(inst: &MInst) -> MInst {
    let mut key = inst.clone();
    key.map_regs(|r, is_def| {
        if is_def {
            *r = ZERO;
        }
    });
    key
}

/// How a [`Pile`] files `inst`: a candidate reading virtual registers
/// (whether it is invariant and what it merges with depend on the loop and on
/// renaming), one reading none (always invariant, with a fixed merge key), or no
/// candidate.
fn pile_kind(inst: &MInst, def_count: &[u32], classes: &[RegClass]) -> Kind {
    if !candidate(inst, def_count) {
        return Kind::Other;
    }
    let mut reads = false;
    inst.for_each_use(|u| reads |= u.is_virtual());
    if reads {
        return Kind::Complex;
    }
    let mut class = 0;
    inst.for_each_def(|d| class = usize::from(classes[d.vindex()] == RegClass::Float));
    Kind::Simple(merge_key(inst), class)
}

/// What the scans of all loops share.
struct Shared {
    def_count: Vec<u32>,
    /// Class of every virtual register (the pass creates none).
    classes: Vec<RegClass>,
    def_block: Vec<usize>,
    /// Loop in whose scan each register was hoisted (`moved` of that loop).
    moved_in: Vec<u32>,
    rename: FxHashMap<Reg, Reg>,
    /// Candidates of every block.
    cands: Vec<u32>,
}

/// The scan of one loop: what it hoisted so far.
struct LoopScan {
    li: usize,
    hoisted: Vec<MInst>,
    /// Hoisted instructions with their result register zeroed, to the result.
    by_key: FxHashMap<MInst, Reg>,
    /// Registers each class's hoisted results may still occupy across the loop.
    budget: [usize; 2],
}

/// Scans block `b` of loop `ls.li` in order: every invariant candidate merges
/// with an identical hoisted instruction, or is hoisted while the budget of its
/// class lasts, or stays.
fn scan_block(mf: &mut MFunction, info: &LoopInfo, sh: &mut Shared, ls: &mut LoopScan, b: MBlock) {
    let li = ls.li;
    let insts = std::mem::take(&mut mf.blocks[b].insts);
    let before = insts.len();
    let mut keep = Vec::with_capacity(insts.len());
    for mut inst in insts {
        let mut ok = hoistable_kind(&inst);
        if ok {
            inst.for_each_def(|d| {
                ok &= d.is_virtual() && sh.def_count[d.vindex()] == 1;
            });
            inst.for_each_use(|u| {
                let invariant = if u.is_virtual() {
                    let v = u.vindex();
                    sh.def_count[v] == 1
                        && (sh.moved_in[v] == li as u32
                            || !info.contains_index(li, sh.def_block[v]))
                } else {
                    u == ZERO || u == SP
                };
                ok &= invariant;
            });
        }
        if ok {
            inst.map_regs(|r, is_def| {
                if !is_def {
                    if let Some(&n) = sh.rename.get(r) {
                        *r = n;
                    }
                }
            });
            let mut rd = ZERO;
            inst.for_each_def(|d| rd = d);
            // Merge with an identical hoisted instruction.
            let key = merge_key(&inst);
            let class = usize::from(mf.class_of(rd) == RegClass::Float);
            match ls.by_key.get(&key) {
                Some(&first) if mf.class_of(first) == mf.class_of(rd) => {
                    sh.moved_in[rd.vindex()] = li as u32;
                    sh.rename.insert(rd, first);
                    continue;
                }
                _ if ls.budget[class] > 0 => {
                    ls.budget[class] -= 1;
                    sh.moved_in[rd.vindex()] = li as u32;
                    ls.by_key.entry(key).or_insert(rd);
                    ls.hoisted.push(inst);
                    continue;
                }
                _ => {}
            }
        }
        keep.push(inst);
    }
    sh.cands[b.index()] -= (before - keep.len()) as u32;
    mf.blocks[b].insts = keep;
}

/// Scans the blocks of `pile` for loop `ls.li`, in layout order, as if every
/// block were scanned; blocks whose scan would change nothing are skipped.
///
/// While both classes' budgets last every block is scanned. Once one is spent,
/// a candidate reading no register and of that class can only merge with an
/// instruction hoisted so far (its key is fixed, it is always invariant, and no
/// new key of its class can appear). So from then on only the blocks the pile
/// files under the hoisted keys, those holding candidates that read registers
/// (renaming and invariance change them), and those holding candidates of a
/// class whose budget lasts are scanned, still in layout order.
fn scan_pile(
    mf: &mut MFunction,
    info: &LoopInfo,
    sh: &mut Shared,
    ls: &mut LoopScan,
    pile: &mut Pile,
) {
    use std::ops::Bound::{Excluded, Unbounded};
    let after = |c: Option<Place>| match c {
        Some(c) => (Excluded(c), Unbounded),
        None => (Unbounded, Unbounded),
    };
    let scan =
        |mf: &mut MFunction, sh: &mut Shared, ls: &mut LoopScan, pile: &mut Pile, place: Place| {
            scan_block(mf, info, sh, ls, place.1);
            if sh.cands[place.1.index()] == 0 {
                pile.order.remove(&place);
                pile.complex.remove(&place);
                pile.simple[0].remove(&place);
                pile.simple[1].remove(&place);
                return;
            }
            // Forget the kinds of candidate the block no longer holds.
            let mut holds = [false; 3];
            for i in &mf.blocks[place.1].insts {
                match pile_kind(i, &sh.def_count, &sh.classes) {
                    Kind::Other => {}
                    Kind::Complex => holds[2] = true,
                    Kind::Simple(_, c) => holds[c] = true,
                }
            }
            if !holds[2] {
                pile.complex.remove(&place);
            }
            for (set, held) in pile.simple.iter_mut().zip(holds) {
                if !held {
                    set.remove(&place);
                }
            }
        };
    let mut cursor: Option<Place> = None;
    while ls.budget[0] > 0 && ls.budget[1] > 0 {
        let Some(&place) = pile.order.range(after(cursor)).next() else {
            return;
        };
        scan(mf, sh, ls, pile, place);
        cursor = Some(place);
    }
    let mut todo: Vec<Place> = pile.complex.range(after(cursor)).copied().collect();
    for c in 0..2 {
        if ls.budget[c] > 0 {
            todo.extend(pile.simple[c].range(after(cursor)));
        }
    }
    let mut filed: Vec<(MInst, Vec<Place>)> = Vec::new();
    for key in ls.by_key.keys() {
        if let Some(list) = pile.by_key.remove(key) {
            todo.extend(list.iter().filter(|&&p| cursor.is_none_or(|c| p > c)));
            filed.push((key.clone(), list));
        }
    }
    todo.sort_unstable();
    todo.dedup();
    for place in todo {
        if pile.order.contains(&place) {
            scan(mf, sh, ls, pile, place);
        }
    }
    // Keep filing the blocks that still hold a candidate under a hoisted key.
    for (key, mut list) in filed {
        list.sort_unstable();
        list.dedup();
        list.retain(|p| {
            pile.order.contains(p)
                && mf.blocks[p.1].insts.iter().any(|i| {
                    matches!(pile_kind(i, &sh.def_count, &sh.classes), Kind::Simple(k, _) if k == key)
                })
        });
        if !list.is_empty() {
            pile.by_key.insert(key, list);
        }
    }
}

/// Hoists loop-invariant instructions of `mf` into loop preheaders.
///
/// Each loop looks only at the blocks of its body that hold a candidate (see
/// [`candidate`]), kept in a [`Pile`]; a loop hands its pile, and its new
/// preheader, to its parent. Instructions that are no candidate never move, so
/// skipping the blocks without any changes nothing, and a deep nest whose
/// blocks are mostly left behind is no longer scanned once per enclosing loop
/// (see [`scan_pile`]).
pub fn hoist_invariants(mf: &mut MFunction) {
    let mut info = loop_info(mf);
    if info.loops.is_empty() {
        return;
    }
    let nv = mf.num_vregs();
    let (def_count, def_block) = mf.vreg_defs();
    let preds = std::mem::take(&mut info.preds);
    let nloops = info.loops.len();
    let mut sh = Shared {
        def_count,
        classes: mf.vreg_class.clone(),
        def_block,
        moved_in: vec![u32::MAX; nv],
        rename: FxHashMap::default(),
        cands: vec![0u32; mf.blocks.len()],
    };
    // The blocks' order: odd keys for the layout, the even key below its header
    // for a new preheader.
    let old_layout = mf.layout.clone();
    let mut order_key = vec![u64::MAX; mf.blocks.len()];
    // Blocks to look at, per loop: its own, then what its inner loops leave.
    let mut piles: Vec<Pile> = (0..nloops).map(|_| Pile::default()).collect();
    for (k, &b) in old_layout.iter().enumerate() {
        order_key[b.index()] = 2 * k as u64 + 1;
        let insts = &mf.blocks[b].insts;
        sh.cands[b.index()] = insts.iter().filter(|i| candidate(i, &sh.def_count)).count() as u32;
        if sh.cands[b.index()] > 0 {
            if let Some(l) = info.innermost(b) {
                piles[l].add((order_key[b.index()], b), insts, |i| {
                    pile_kind(i, &sh.def_count, &sh.classes)
                });
            }
        }
    }
    // The preheader created before each header.
    let mut preheader_of: FxHashMap<MBlock, MBlock> = FxHashMap::default();
    let mut appended: Vec<MBlock> = Vec::new();
    for li in (0..nloops).rev() {
        let header = info.loops[li].header;
        let parent = info.loops[li].parent;
        let mut pile = std::mem::take(&mut piles[li]);
        let outside: Vec<MBlock> = preds[header.index()]
            .iter()
            .copied()
            .filter(|&p| !info.contains(li, p))
            .collect();
        if !outside.is_empty() && !pile.is_empty() {
            let mut ls = LoopScan {
                li,
                hoisted: Vec::new(),
                by_key: FxHashMap::default(),
                budget: [HOIST_LIMIT; 2],
            };
            scan_pile(mf, &info, &mut sh, &mut ls, &mut pile);
            if let Some(p) = parent {
                piles[p].absorb(std::mem::take(&mut pile));
            }
            if !ls.hoisted.is_empty() {
                let pre = preheader(
                    mf,
                    &mut info,
                    &mut order_key,
                    &mut appended,
                    &outside,
                    header,
                    parent,
                );
                if pre != outside[0] || outside.len() > 1 {
                    preheader_of.insert(header, pre);
                }
                if sh.cands.len() <= pre.index() {
                    sh.cands.resize(pre.index() + 1, 0);
                }
                sh.cands[pre.index()] += ls.hoisted.len() as u32;
                for inst in &ls.hoisted {
                    inst.for_each_def(|d| sh.def_block[d.vindex()] = pre.index());
                }
                let insts = &mut mf.blocks[pre].insts;
                let at = insert_point(insts);
                insts.splice(at..at, ls.hoisted);
                // The preheader goes to the innermost unvisited loop holding it
                // (loops are visited in decreasing index).
                if order_key[pre.index()] != u64::MAX {
                    let mut l = info.innermost(pre);
                    while let Some(x) = l {
                        if x < li {
                            let insts = &mf.blocks[pre].insts;
                            piles[x].add((order_key[pre.index()], pre), insts, |i| {
                                pile_kind(i, &sh.def_count, &sh.classes)
                            });
                            break;
                        }
                        l = info.loops[x].parent;
                    }
                }
            }
        } else if let Some(p) = parent {
            piles[p].absorb(pile);
        }
    }
    if !preheader_of.is_empty() {
        let mut layout = Vec::with_capacity(old_layout.len() + preheader_of.len());
        for b in old_layout {
            if let Some(&pre) = preheader_of.get(&b) {
                layout.push(pre);
            }
            layout.push(b);
        }
        layout.extend(appended);
        mf.layout = layout;
    }
    if sh.rename.is_empty() {
        return;
    }
    // Resolve chains and rewrite uses of merged registers.
    let rename = sh.rename;
    let resolve = |mut r: Reg| {
        while let Some(&n) = rename.get(&r) {
            r = n;
        }
        r
    };
    for b in mf.blocks.values_mut() {
        for i in &mut b.insts {
            i.map_regs(|r, is_def| {
                if !is_def && r.is_virtual() {
                    *r = resolve(*r);
                }
            });
        }
    }
}

/// The block to hoist into for the loop headed by `header`: its only outside
/// predecessor when that jumps only there, or a new block placed right before
/// the header that the outside predecessors now jump to.
fn preheader(
    mf: &mut MFunction,
    info: &mut LoopInfo,
    order_key: &mut Vec<u64>,
    appended: &mut Vec<MBlock>,
    outside: &[MBlock],
    header: MBlock,
    parent: Option<usize>,
) -> MBlock {
    if outside.len() == 1 && mf.succs(outside[0])[..] == [header] {
        return outside[0];
    }
    let pre = mf.new_block();
    mf.blocks[pre].insts.push(MInst::Jump { target: header });
    for &p in outside {
        for i in &mut mf.blocks[p].insts {
            if let Some(t) = i.branch_target_mut() {
                if *t == header {
                    *t = pre;
                }
            }
        }
    }
    // Placed right before the header (the layout is rebuilt at the end).
    order_key.push(match order_key[header.index()] {
        // A header outside the layout: the preheader goes at its end.
        u64::MAX => {
            appended.push(pre);
            (1 << 62) + appended.len() as u64
        }
        k => k - 1,
    });
    // The preheader belongs to every loop enclosing this one.
    info.add_block(pre, parent);
    pre
}

#[cfg(test)]
mod tests {
    use super::*;

    // constants_leave_the_loop_and_merge: crates/riscv/filetests/machine-licm-*.mir.

    /// A loop using more distinct constants than the budget: the first
    /// `HOIST_LIMIT` leave it, the rest stay next to their uses; repeated
    /// constants still merge with the hoisted copy.
    #[test]
    fn hoisting_stops_at_the_register_budget() {
        // b0 -> b1 (header and latch) -> b1 | b2
        let mut mf = MFunction::new("t".into(), false);
        let b: Vec<MBlock> = (0..3).map(|_| mf.new_block()).collect();
        mf.layout = b.clone();
        let i = mf.new_vreg(RegClass::Int);
        let acc = mf.new_vreg(RegClass::Int);
        mf.blocks[MBlock(0)].insts = vec![
            MInst::Li { rd: i, imm: 0 },
            MInst::Mv { rd: i, rs: ZERO },
            MInst::Jump { target: b[1] },
        ];
        let mut body = Vec::new();
        let n = HOIST_LIMIT + 10;
        for k in 0..n + 1 {
            let c = mf.new_vreg(RegClass::Int);
            // The last constant repeats the first.
            let imm = if k == n { 1000 } else { 1000 + k as i64 };
            body.push(MInst::Li { rd: c, imm });
            body.push(MInst::Alu {
                op: AluOp::Add,
                rd: acc,
                rs1: i,
                rs2: c,
            });
        }
        body.push(MInst::Alu {
            op: AluOp::Add,
            rd: i,
            rs1: i,
            rs2: acc,
        });
        body.push(MInst::Branch {
            cond: Cond::Lt,
            rs1: i,
            rs2: acc,
            target: b[1],
        });
        body.push(MInst::Jump { target: b[2] });
        mf.blocks[MBlock(1)].insts = body;
        mf.blocks[MBlock(2)].insts = vec![MInst::Ret { value: None }];
        hoist_invariants(&mut mf);
        let count_li = |insts: &[MInst]| {
            insts
                .iter()
                .filter(|i| matches!(i, MInst::Li { imm, .. } if *imm >= 1000))
                .count()
        };
        assert_eq!(count_li(&mf.blocks[MBlock(0)].insts), HOIST_LIMIT);
        assert_eq!(count_li(&mf.blocks[MBlock(1)].insts), n - HOIST_LIMIT);
        let kept: Vec<i64> = mf.blocks[MBlock(1)]
            .insts
            .iter()
            .filter_map(|i| match i {
                MInst::Li { imm, .. } => Some(*imm),
                _ => None,
            })
            .collect();
        assert_eq!(kept[0], 1000 + HOIST_LIMIT as i64, "{kept:?}");
    }
}
