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

/// Hoists loop-invariant instructions of `mf` into loop preheaders.
///
/// Each loop looks only at the blocks of its body that hold a candidate (see
/// [`candidate`]); a loop hands the blocks still holding one, and its new
/// preheader, to its parent. Instructions that are no candidate never move, so
/// skipping the blocks without any changes nothing, and a deep nest whose
/// blocks are mostly left behind is no longer scanned once per enclosing loop.
pub fn hoist_invariants(mf: &mut MFunction) {
    let mut info = loop_info(mf);
    if info.loops.is_empty() {
        return;
    }
    let nv = mf.num_vregs();
    let (def_count, mut def_block) = mf.vreg_defs();
    let preds = std::mem::take(&mut info.preds);
    let nloops = info.loops.len();
    let mut rename: FxHashMap<Reg, Reg> = FxHashMap::default();
    // Candidates of every block, and the blocks' order: odd keys for the layout,
    // the even key below its header for a new preheader.
    let old_layout = mf.layout.clone();
    let mut cands = vec![0u32; mf.blocks.len()];
    let mut order_key = vec![u64::MAX; mf.blocks.len()];
    // Blocks to look at, per loop: its own, then what its inner loops leave.
    let mut pending: Vec<Vec<MBlock>> = vec![Vec::new(); nloops];
    for (k, &b) in old_layout.iter().enumerate() {
        order_key[b.index()] = 2 * k as u64 + 1;
        cands[b.index()] = mf.blocks[b.index()]
            .insts
            .iter()
            .filter(|i| candidate(i, &def_count))
            .count() as u32;
        if cands[b.index()] > 0 {
            if let Some(l) = info.innermost(b) {
                pending[l].push(b);
            }
        }
    }
    // The preheader created before each header.
    let mut preheader_of: FxHashMap<MBlock, MBlock> = FxHashMap::default();
    let mut appended: Vec<MBlock> = Vec::new();
    // Loop in whose scan each register was hoisted (`moved` of that loop).
    let mut moved_in = vec![u32::MAX; nv];
    for li in (0..nloops).rev() {
        let header = info.loops[li].header;
        let parent = info.loops[li].parent;
        let mut body_blocks = std::mem::take(&mut pending[li]);
        body_blocks.retain(|b| cands[b.index()] > 0);
        body_blocks.sort_unstable_by_key(|b| order_key[b.index()]);
        body_blocks.dedup();
        // The blocks of the body still holding candidates go to the enclosing
        // loop; a block outside it goes to the innermost unvisited loop holding
        // it (loops are visited in decreasing index).
        let hand_on = |pending: &mut Vec<Vec<MBlock>>, info: &LoopInfo, b: MBlock| {
            let mut l = info.innermost(b);
            while let Some(x) = l {
                if x < li {
                    pending[x].push(b);
                    return;
                }
                l = info.loops[x].parent;
            }
        };
        let outside: Vec<MBlock> = preds[header.index()]
            .iter()
            .copied()
            .filter(|&p| !info.contains(li, p))
            .collect();
        if outside.is_empty() {
            if let Some(p) = parent {
                pending[p].extend(body_blocks);
            }
            continue;
        }
        let mut hoisted: Vec<MInst> = Vec::new();
        // Hoisted instructions with their result register zeroed, to the result.
        let mut hoisted_by_key: FxHashMap<MInst, Reg> = FxHashMap::default();
        // Registers each class's hoisted results occupy across the loop.
        let mut budget = [HOIST_LIMIT; 2];
        for &b in &body_blocks {
            let insts = std::mem::take(&mut mf.blocks[b.index()].insts);
            let before = insts.len();
            let mut keep = Vec::with_capacity(insts.len());
            for mut inst in insts {
                let mut ok = hoistable_kind(&inst);
                if ok {
                    inst.for_each_def(|d| {
                        ok &= d.is_virtual() && def_count[d.vindex()] == 1;
                    });
                    inst.for_each_use(|u| {
                        let invariant = if u.is_virtual() {
                            let v = u.vindex();
                            def_count[v] == 1
                                && (moved_in[v] == li as u32
                                    || !info.contains_index(li, def_block[v]))
                        } else {
                            u == ZERO || u == SP
                        };
                        ok &= invariant;
                    });
                }
                if ok {
                    inst.map_regs(|r, is_def| {
                        if !is_def {
                            if let Some(&n) = rename.get(r) {
                                *r = n;
                            }
                        }
                    });
                    let mut rd = ZERO;
                    inst.for_each_def(|d| rd = d);
                    // Merge with an identical hoisted instruction.
                    let mut key = inst.clone();
                    key.map_regs(|r, is_def| {
                        if is_def {
                            *r = ZERO;
                        }
                    });
                    let class = usize::from(mf.class_of(rd) == RegClass::Float);
                    match hoisted_by_key.get(&key) {
                        Some(&first) if mf.class_of(first) == mf.class_of(rd) => {
                            moved_in[rd.vindex()] = li as u32;
                            rename.insert(rd, first);
                            continue;
                        }
                        _ if budget[class] > 0 => {
                            budget[class] -= 1;
                            moved_in[rd.vindex()] = li as u32;
                            hoisted_by_key.entry(key).or_insert(rd);
                            hoisted.push(inst);
                            continue;
                        }
                        _ => {}
                    }
                }
                keep.push(inst);
            }
            cands[b.index()] -= (before - keep.len()) as u32;
            mf.blocks[b.index()].insts = keep;
        }
        if let Some(p) = parent {
            pending[p].extend(body_blocks.iter().filter(|b| cands[b.index()] > 0));
        }
        if hoisted.is_empty() {
            continue;
        }
        let single = outside.len() == 1 && mf.succs(outside[0]) == vec![header];
        let pre = if single {
            outside[0]
        } else {
            let pre = mf.new_block();
            mf.blocks[pre.index()]
                .insts
                .push(MInst::Jump { target: header });
            for &p in &outside {
                for i in &mut mf.blocks[p.index()].insts {
                    if let Some(t) = i.branch_target_mut() {
                        if *t == header {
                            *t = pre;
                        }
                    }
                }
            }
            // Placed right before the header (the layout is rebuilt at the end).
            cands.push(0);
            order_key.push(match order_key[header.index()] {
                // A header outside the layout: the preheader goes at its end.
                u64::MAX => {
                    appended.push(pre);
                    (1 << 62) + appended.len() as u64
                }
                k => k - 1,
            });
            preheader_of.insert(header, pre);
            // The preheader belongs to every loop enclosing this one.
            info.add_block(pre, parent);
            pre
        };
        cands[pre.index()] += hoisted.len() as u32;
        if order_key[pre.index()] != u64::MAX {
            hand_on(&mut pending, &info, pre);
        }
        for inst in &hoisted {
            inst.for_each_def(|d| def_block[d.vindex()] = pre.index());
        }
        let insts = &mut mf.blocks[pre.index()].insts;
        let at = insert_point(insts);
        insts.splice(at..at, hoisted);
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
    if rename.is_empty() {
        return;
    }
    // Resolve chains and rewrite uses of merged registers.
    let resolve = |mut r: Reg| {
        while let Some(&n) = rename.get(&r) {
            r = n;
        }
        r
    };
    for b in &mut mf.blocks {
        for i in &mut b.insts {
            i.map_regs(|r, is_def| {
                if !is_def && r.is_virtual() {
                    *r = resolve(*r);
                }
            });
        }
    }
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
        mf.blocks[0].insts = vec![
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
        mf.blocks[1].insts = body;
        mf.blocks[2].insts = vec![MInst::Ret { value: None }];
        hoist_invariants(&mut mf);
        let count_li = |insts: &[MInst]| {
            insts
                .iter()
                .filter(|i| matches!(i, MInst::Li { imm, .. } if *imm >= 1000))
                .count()
        };
        assert_eq!(count_li(&mf.blocks[0].insts), HOIST_LIMIT);
        assert_eq!(count_li(&mf.blocks[1].insts), n - HOIST_LIMIT);
        let kept: Vec<i64> = mf.blocks[1]
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
