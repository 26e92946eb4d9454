//! Block arguments, out of SSA form: the parameters of a block with one predecessor
//! alias the arguments it passes; the others get a vreg each, and every edge into
//! their block carries a parallel copy from the arguments, emitted before the jump, or
//! in an edge block of its own for an arm of a `br` (splitting the critical edge).
//! Edge blocks are laid out right after the block that branches to them.
//!
//! The copies are made here, while selecting, and not by a separate out-of-SSA stage
//! after isel (`crate::out_of_ssa` only orders them, [`sequentialize_edge`]): the
//! forms of the arguments (constants, frame and global addresses, a register plus an
//! offset) and the block's cache of materialised constants and addresses exist only
//! during selection, where an argument's address is computed before the branch and
//! shared with the block's other uses and an edge block reuses what its branching
//! block computed. A later stage would also need a parallel-copy instruction in the
//! machine IR (and its text form), and would number the temporaries that break copy
//! cycles and the registers of the constants it materialises after every other vreg of
//! the function instead of in selection order: the machine IR, and so possibly the
//! allocation and the assembly, would not be the same as now.

use super::{class_of_type, CacheKey, Isel, Opnd, PBase, PtrLoc};
use crate::mir::*;
use crate::out_of_ssa::{sequentialize_edge, CopySource};
use crate::BackendError;
use ir::analysis::ControlFlowGraph;
use ir::{Block, BlockCall, EntityRef};

impl Isel<'_> {
    /// Block parameters: a parameter of a block with a single predecessor is an alias of
    /// the argument that predecessor passes (no copy); the others (not the entry's, see
    /// `entry_params`) get a vreg each, written by the copies on the incoming edges.
    pub(super) fn block_params(
        &mut self,
        cfg: &ControlFlowGraph,
        rpo: &[Block],
    ) -> Result<(), BackendError> {
        let f = self.f;
        let entry = f.entry_block();
        for &b in rpo {
            if b == entry {
                continue;
            }
            let preds = cfg.preds(b);
            if preds.len() == 1 {
                let term = f.terminator(preds[0]).ok_or_else(|| {
                    BackendError::Untranslatable(format!("block {} has no terminator", preds[0]))
                })?;
                let call = f
                    .kind(term)
                    .targets()
                    .into_iter()
                    .find(|c| c.block == b)
                    .cloned();
                if let Some(call) = call {
                    for (&p, &a) in f.block_params(b).iter().zip(&call.args) {
                        self.alias[p.index()] = Some(a);
                    }
                    continue;
                }
            }
            for &p in f.block_params(b) {
                let r = self.mf.new_vreg(class_of_type(f.value_type(p)));
                self.vreg[p.index()] = Some(r);
            }
        }
        Ok(())
    }

    /// Whether passing `dest`'s arguments needs copies.
    fn needs_copies(&self, dest: &BlockCall) -> bool {
        self.f.block_params(dest.block).iter().any(|&p| {
            self.alias[p.index()].is_none() && self.vreg[p.index()].is_some() && self.f.has_users(p)
        })
    }

    /// Emits the parallel copy from `dest`'s arguments to its block's parameters: an
    /// address based on a register is computed first (into a register of its own, in
    /// the block's cache); the copies from registers are then sequentialised, and
    /// constants and frame or global addresses written last (see
    /// [`sequentialize_edge`]).
    pub(super) fn edge_copies(&mut self, dest: &BlockCall) -> Result<(), BackendError> {
        if !self.needs_copies(dest) {
            return Ok(());
        }
        let params = self.f.block_params(dest.block).to_vec();
        let mut copies: Vec<(Reg, CopySource<Opnd>)> = Vec::new();
        for (&p, &a) in params.iter().zip(&dest.args) {
            if !self.f.has_users(p) {
                continue;
            }
            let Some(dst) = self.vreg[p.index()] else {
                continue;
            };
            let src = match self.operand(a)? {
                Opnd::Reg(r) => CopySource::Reg(r),
                Opnd::Loc(l) if matches!(l.base, PBase::Reg(_)) => {
                    CopySource::Reg(self.materialize(l))
                }
                o => CopySource::Value(o),
            };
            copies.push((dst, src));
        }
        let ordered = {
            let mf = &mut self.mf;
            sequentialize_edge(&copies, |like| mf.new_vreg_like(like))
        };
        for (dst, src) in ordered {
            match src {
                CopySource::Reg(s) => self.push(MInst::Mv { rd: dst, rs: s }),
                CopySource::Value(o) => self.copy_value(dst, o),
            }
        }
        Ok(())
    }

    /// `dst = o`, for a constant or a frame or global address.
    fn copy_value(&mut self, dst: Reg, o: Opnd) {
        match o {
            Opnd::Int(c) => self.push(MInst::Li {
                rd: dst,
                imm: c as i64,
            }),
            Opnd::FBits(0) => self.push(MInst::Cvt {
                op: CvtOp::FmvWX,
                rd: dst,
                rs: ZERO,
            }),
            Opnd::FBits(b) => {
                let t = self.cached(CacheKey::Int(b as i32));
                self.push(MInst::Cvt {
                    op: CvtOp::FmvWX,
                    rd: dst,
                    rs: t,
                });
            }
            Opnd::Loc(PtrLoc {
                base: PBase::Slot(slot),
                off,
            }) => self.push(MInst::FrameAddr { rd: dst, slot, off }),
            Opnd::Loc(
                l @ PtrLoc {
                    base: PBase::Global(g),
                    off,
                },
            ) => {
                if off.unsigned_abs() <= super::memory::MAX_SYMBOL_OFFSET {
                    self.push(MInst::La {
                        rd: dst,
                        global: g,
                        off,
                    })
                } else {
                    let r = self.materialize(l);
                    self.push(MInst::Mv { rd: dst, rs: r })
                }
            }
            Opnd::Loc(_) | Opnd::Reg(_) => unreachable!("register copies are moves"),
        }
    }

    /// The machine block a `br` arm jumps to: the target itself, or a new edge block
    /// holding the arm's copies.
    pub(super) fn arm(&mut self, dest: &BlockCall) -> Result<MBlock, BackendError> {
        let target = self.target(dest.block)?;
        if !self.needs_copies(dest) {
            return Ok(target);
        }
        // Addresses passed as arguments are computed here, before the branch, so the
        // edge only moves registers: when the allocator gives an argument its
        // parameter's register the edge block ends up empty and the branch goes
        // straight to the target (a pointer advanced on a loop's back edge costs one
        // `addi` in the latch rather than an edge block with a jump).
        for &a in &dest.args {
            if let Opnd::Loc(l) = self.operand(a)? {
                if matches!(l.base, PBase::Reg(_)) {
                    self.materialize(l);
                }
            }
        }
        let edge = self.mf.new_block();
        let saved_block = self.cur;
        // Everything cached so far was computed before the branch: the edge, whose only
        // predecessor is this block, may use it.
        let saved_cache = self.cache.clone();
        self.split_after[saved_block.index()].push(edge);
        self.split_after.push(Vec::new());
        self.switch_to(edge);
        self.cache = saved_cache.clone();
        self.edge_copies(dest)?;
        self.push(MInst::Jump { target });
        self.cur = saved_block;
        self.cache = saved_cache;
        Ok(edge)
    }

    /// The final layout: every block followed by the edge blocks of its branch.
    pub(super) fn place_edge_blocks(&mut self) {
        let mut layout = Vec::with_capacity(self.mf.blocks.len());
        for &b in &self.mf.layout {
            layout.push(b);
            if let Some(extra) = self.split_after.get(b.index()) {
                layout.extend_from_slice(extra);
            }
        }
        self.mf.layout = layout;
    }
}
