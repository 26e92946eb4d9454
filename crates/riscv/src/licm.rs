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

use crate::loops::loop_info;
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

/// Hoists loop-invariant instructions of `mf` into loop preheaders.
pub fn hoist_invariants(mf: &mut MFunction) {
    let info = loop_info(mf);
    if info.loops.is_empty() {
        return;
    }
    let nv = mf.num_vregs();
    let (def_count, mut def_block) = mf.vreg_defs();
    let mut loops = info.loops;
    let preds = info.preds;
    let mut rename: FxHashMap<Reg, Reg> = FxHashMap::default();
    for li in (0..loops.len()).rev() {
        let header = loops[li].header;
        let outside: Vec<MBlock> = preds[header.index()]
            .iter()
            .copied()
            .filter(|p| !loops[li].body[p.index()])
            .collect();
        if outside.is_empty() {
            continue;
        }
        // Collect the hoistable instructions first; create a preheader only if needed.
        let body_blocks: Vec<MBlock> = mf
            .layout
            .iter()
            .copied()
            .filter(|b| loops[li].body.get(b.index()).copied().unwrap_or(false))
            .collect();
        let mut hoisted: Vec<MInst> = Vec::new();
        // Hoisted instructions with their result register zeroed, to the result.
        let mut hoisted_by_key: FxHashMap<MInst, Reg> = FxHashMap::default();
        // Registers each class's hoisted results occupy across the loop.
        let mut budget = [HOIST_LIMIT; 2];
        let mut moved: Vec<bool> = vec![false; nv];
        for &b in &body_blocks {
            let insts = std::mem::take(&mut mf.blocks[b.index()].insts);
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
                                && (moved[v]
                                    || !loops[li].body.get(def_block[v]).copied().unwrap_or(false))
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
                            moved[rd.vindex()] = true;
                            rename.insert(rd, first);
                            continue;
                        }
                        _ if budget[class] > 0 => {
                            budget[class] -= 1;
                            moved[rd.vindex()] = true;
                            hoisted_by_key.entry(key).or_insert(rd);
                            hoisted.push(inst);
                            continue;
                        }
                        _ => {}
                    }
                }
                keep.push(inst);
            }
            mf.blocks[b.index()].insts = keep;
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
            let pos = mf
                .layout
                .iter()
                .position(|&b| b == header)
                .unwrap_or(mf.layout.len());
            mf.layout.insert(pos, pre);
            // The preheader belongs to every loop enclosing this one.
            for (k, l) in loops.iter_mut().enumerate() {
                let inside = k != li && l.body[header.index()];
                l.body.push(inside);
            }
            pre
        };
        for inst in &hoisted {
            inst.for_each_def(|d| def_block[d.vindex()] = pre.index());
        }
        let insts = &mut mf.blocks[pre.index()].insts;
        let at = insert_point(insts);
        insts.splice(at..at, hoisted);
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
