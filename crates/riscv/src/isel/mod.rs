//! Instruction selection: one IR function to machine IR over virtual registers, by a
//! walk over the blocks in reverse post-order (definitions before uses) that expands
//! each IR instruction into RV64GC instructions with simple local pattern matching:
//!
//! - 12-bit immediates folded into `addiw`/`slti`/`andi`/...; `*w` operations for i32
//!   so every i32 lives sign-extended in its 64-bit register (hence `sext` is a move
//!   and `trunc` an `addiw rd, rs, 0`); the i64 operations are plain `add`, `sub`,
//!   `mul`, `div`, `rem` on registers;
//! - multiplication by constants through shifts, division and remainder by constants
//!   through shifts (powers of two) or a multiply-high by a magic number (Granlund and
//!   Montgomery, "Division by Invariant Integers using Multiplication", PLDI 1994, in
//!   the formulation of Warren's *Hacker's Delight*, 2nd ed., section 10-4; a
//!   remainder directly, Lemire, Kaser and Kurz, "Faster Remainder by Direct
//!   Computation", 2019);
//! - a comparison used only by the `br` ending its block becomes a compare-and-branch;
//! - pointers are tracked symbolically (frame slot, global, or register plus a
//!   constant offset) so constant `gep`s fold into load/store offsets;
//! - constants, global and frame addresses are materialised once per block where used
//!   and marked rematerialisable for the register allocator;
//! - block arguments become parallel copies on edges: a `br` arm that passes arguments
//!   gets its own block (splitting the critical edge), and a block with a single
//!   predecessor simply aliases its parameters to the arguments.
//!
//! The selector is one [`Isel`] state with its methods spread over files by concern:
//!
//! ```text
//! mod.rs      the state, the walk over blocks, operands (aliases followed, values in
//!             registers), and the dispatch of each IR instruction
//! arith.rs    integer and float binary and unary operations; multiplication and
//!             division by constants (magic numbers)
//! compare.rs  comparisons, compare-and-branch fusion, `jump` and `br`
//! memory.rs   symbolic pointers, addresses, `alloc`, `gep`, loads and stores; the
//!             per-block cache of constants and addresses, rematerialisation marks
//! call.rs     the calling convention: calls, their arguments, the entry's
//!             parameters, `ret`
//! edges.rs    block parameters and the copies passing block arguments on edges,
//!             critical-edge blocks (ordered by `crate::out_of_ssa`)
//! sibling.rs  calls in tail position that may become tail calls
//! ```

mod arith;
mod call;
mod compare;
mod edges;
mod memory;
mod sibling;

use crate::globals::GlobalPlace;
use crate::mir::*;
use crate::srcloc::InstLocs;
use crate::{BackendError, ModuleFacts};
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{Block, EntityRef, FuncId, Function, Inst, InstKind, Module, Type, Value, ValueDef};
use rustc_hash::{FxHashMap, FxHashSet};

/// Base of a symbolic pointer.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
enum PBase {
    Slot(Slot),
    Global(u32),
    Reg(Reg),
}

/// A pointer known as `base + off`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
struct PtrLoc {
    base: PBase,
    off: i64,
}

/// What an IR operand is, after following aliases.
#[derive(Copy, Clone, Debug)]
enum Opnd {
    Int(i32),
    FBits(u32),
    Loc(PtrLoc),
    Reg(Reg),
}

/// Key of the per-block materialisation cache.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
enum CacheKey {
    Int(i32),
    /// A 64-bit constant.
    Wide(i64),
    FBits(u32),
    Loc(PtrLoc),
}

/// Selects machine code for the defined function `fid` of `m`, given what is known of
/// the module (the symbols of its functions and the alias regions of its accesses).
pub fn select_function(
    m: &Module,
    fid: FuncId,
    facts: &ModuleFacts,
) -> Result<MFunction, BackendError> {
    select_function_located(m, fid, facts).map(|(mf, _)| mf)
}

/// [`select_function`], with the source position of each machine instruction: that of
/// the IR instruction it was selected for.
pub fn select_function_located(
    m: &Module,
    fid: FuncId,
    facts: &ModuleFacts,
) -> Result<(MFunction, InstLocs), BackendError> {
    let f = &m.funcs[fid];
    let mf = MFunction::new(facts.names[fid.index()].clone(), f.name == "main");
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let n_values = f.num_values();
    let mut s = Isel {
        m,
        f,
        fid,
        facts,
        mf,
        mblock: vec![None; f.num_blocks()],
        vreg: vec![None; n_values],
        loc: vec![None; n_values],
        alias: vec![None; n_values],
        deferred: vec![false; f.num_insts()],
        cur: MBlock(0),
        cache: FxHashMap::default(),
        scaled: FxHashMap::default(),
        dt,
        offsets: ir::analysis::PointerOffsets::compute_with(f, &cfg),
        bases: FxHashMap::default(),
        ir_block: f.entry_block(),
        split_after: Vec::new(),
        locs: InstLocs::default(),
        cur_loc: 0,
        siblings: FxHashSet::default(),
        stack_siblings: false,
        after_sibling_call: false,
        incoming_slots: FxHashMap::default(),
    };
    s.run(&cfg)?;
    record_global_sizes(m, &facts.places, &mut s.mf);
    let mut locs = s.locs;
    locs.blocks.resize(s.mf.blocks.len(), Vec::new());
    for (l, b) in locs.blocks.iter_mut().zip(s.mf.blocks.values()) {
        l.resize(b.insts.len(), 0);
    }
    Ok((s.mf, locs))
}

/// Fills `mf.global_sizes` and `mf.global_places` for the globals `mf` addresses.
fn record_global_sizes(m: &Module, places: &[GlobalPlace], mf: &mut MFunction) {
    let mut note = |i: &MInst| {
        if let MInst::La { global, .. } = *i {
            let size = m.globals[ir::GlobalId::from_u32(global)].size();
            mf.global_sizes.insert(global, size);
            if let Some(&place) = places.get(global as usize) {
                mf.global_places.insert(global, place);
            }
        }
    };
    for i in mf.vreg_remat.iter().flatten() {
        note(i);
    }
    for b in mf.blocks.values() {
        b.insts.iter().for_each(&mut note);
    }
}

/// The selector's state for one function. Its methods are spread over the submodules;
/// the fields, private to this module, are visible to them.
struct Isel<'a> {
    m: &'a Module,
    f: &'a Function,
    fid: FuncId,
    facts: &'a ModuleFacts,
    /// The function being built.
    mf: MFunction,
    /// The machine block of each reachable IR block.
    mblock: Vec<Option<MBlock>>,
    /// Register holding each value computed into a register.
    vreg: Vec<Option<Reg>>,
    /// Symbolic location of pointer values that are not plain registers.
    loc: Vec<Option<PtrLoc>>,
    /// Parameters of single-predecessor blocks: equal to the argument passed.
    alias: Vec<Option<Value>>,
    /// Comparisons left for the branch that uses them.
    deferred: Vec<bool>,
    /// The machine block being emitted into.
    cur: MBlock,
    /// Registers holding constants and addresses materialised in the current block.
    cache: FxHashMap<CacheKey, Reg>,
    /// Indices shifted for a gep, by (index, shift), with the IR block that shifted
    /// them: the same element of several arrays (`key[p]`, `next[p]`) shares one
    /// shift in the blocks that block dominates (blocks are selected in reverse
    /// postorder, so a dominator's shifts are known first).
    scaled: FxHashMap<(Reg, u32), (Reg, Block)>,
    dt: DominatorTree,
    /// Every pointer as a base plus an offset, for the accesses' [`SymAddr`]s,
    /// with the number given to each base.
    offsets: ir::analysis::PointerOffsets,
    bases: FxHashMap<ir::analysis::pointer_offsets::Base, u32>,
    /// The IR block being selected.
    ir_block: Block,
    /// Edge blocks to lay out right after a block, by block index.
    split_after: Vec<Vec<MBlock>>,
    /// The source position of each instruction pushed (see [`InstLocs`]).
    locs: InstLocs,
    /// The position of the IR instruction being selected (plus one; 0 unknown).
    cur_loc: u32,
    /// The calls selected as sibling calls (see [`sibling`]).
    siblings: FxHashSet<Inst>,
    /// Whether one of them passes stack arguments.
    stack_siblings: bool,
    /// Whether the block's last instruction selected was a sibling call (its
    /// terminator, the return, is then not selected).
    after_sibling_call: bool,
    /// The slot of each incoming stack argument used.
    incoming_slots: FxHashMap<u32, Slot>,
}

/// The register class of a value of type `t`.
fn class_of_type(t: Type) -> RegClass {
    if t == Type::F32 {
        RegClass::Float
    } else {
        RegClass::Int
    }
}

impl<'a> Isel<'a> {
    /// Selects the whole function: blocks and block parameters first, then the
    /// instructions of each block in reverse post-order, then the layout.
    fn run(&mut self, cfg: &ControlFlowGraph) -> Result<(), BackendError> {
        let f = self.f;
        let rpo = cfg.rpo().to_vec();
        let mut reachable = vec![false; f.num_blocks()];
        for &b in &rpo {
            reachable[b.index()] = true;
        }
        // Machine blocks in IR layout order.
        for b in f.layout.blocks() {
            if !reachable[b.index()] {
                continue;
            }
            let mb = self.mf.new_block();
            self.mblock[b.index()] = Some(mb);
            self.mf.layout.push(mb);
        }
        self.block_params(cfg, &rpo)?;
        self.split_after = vec![Vec::new(); self.mf.blocks.len()];

        self.find_sibling_calls();
        let entry = f.entry_block();
        self.switch_to(self.mblock[entry.index()].expect("entry is reachable"));
        self.entry_params()?;
        for &b in &rpo {
            self.switch_to(self.mblock[b.index()].expect("reachable"));
            self.ir_block = b;
            let insts: Vec<Inst> = f.layout.block_insts(b).collect();
            // Room for the machine instructions at once (about 1.3 per IR one at -O0):
            // a block of a million instructions grown by doubling leaves as much
            // freed memory behind as it uses.
            let room = insts.len() + insts.len() / 2;
            self.mf.blocks[self.cur].insts.reserve(room);
            if let Some(l) = self.locs.blocks.get_mut(self.cur.index()) {
                l.reserve(room);
            }
            self.after_sibling_call = false;
            for i in insts {
                self.cur_loc = f.src_loc(i).map_or(0, |p| p.saturating_add(1));
                if self.after_sibling_call {
                    // The return a sibling call replaced.
                    break;
                }
                self.inst(i)?;
            }
            self.cur_loc = 0;
        }
        self.place_edge_blocks();
        if !self.siblings.is_empty() {
            crate::peephole::remove_unreachable(&mut self.mf);
        }
        Ok(())
    }

    // ---- emission -----------------------------------------------------------

    /// Emits into the machine block `b` from now on (the materialisation cache is per
    /// block).
    fn switch_to(&mut self, b: MBlock) {
        self.cur = b;
        self.cache.clear();
    }

    /// Appends `i` to the current block, at the source position of the IR instruction
    /// being selected.
    fn push(&mut self, i: MInst) {
        let b = self.cur.index();
        self.mf.blocks[self.cur].insts.push(i);
        if self.locs.blocks.len() <= b {
            self.locs.blocks.resize(b + 1, Vec::new());
        }
        let l = &mut self.locs.blocks[b];
        // Keep the table parallel to the block's instructions.
        l.resize(self.mf.blocks[self.cur].insts.len() - 1, 0);
        l.push(self.cur_loc);
    }

    fn new_vreg(&mut self, c: RegClass) -> Reg {
        self.mf.new_vreg(c)
    }

    /// A fresh integer vreg for an intermediate result.
    fn tmp(&mut self) -> Reg {
        self.new_vreg(RegClass::Int)
    }

    fn alu(&mut self, op: AluOp, rd: Reg, rs1: Reg, rs2: Reg) {
        self.push(MInst::Alu { op, rd, rs1, rs2 });
    }

    fn alui(&mut self, op: AluImmOp, rd: Reg, rs1: Reg, imm: i32) {
        self.push(MInst::AluImm { op, rd, rs1, imm });
    }

    // ---- operands -----------------------------------------------------------

    /// `v` with the aliases of block parameters followed.
    fn resolve(&self, mut v: Value) -> Value {
        let mut guard = 0;
        while let Some(a) = self.alias[v.index()] {
            v = a;
            guard += 1;
            if guard > 1_000_000 {
                break;
            }
        }
        v
    }

    /// What `v` is: a constant, a symbolic pointer or a register (its definition must
    /// have been selected).
    fn operand(&self, v: Value) -> Result<Opnd, BackendError> {
        let v = self.resolve(v);
        Ok(match self.f.value_def(v) {
            ValueDef::IConst(c) => Opnd::Int(c),
            ValueDef::FConst(b) => Opnd::FBits(b),
            ValueDef::Global(g) => Opnd::Loc(PtrLoc {
                base: PBase::Global(g.index() as u32),
                off: 0,
            }),
            _ => {
                if let Some(l) = self.loc[v.index()] {
                    Opnd::Loc(l)
                } else if let Some(r) = self.vreg[v.index()] {
                    Opnd::Reg(r)
                } else {
                    return Err(BackendError::Untranslatable(format!(
                        "{}: value {v} used before its definition was selected",
                        self.f.name
                    )));
                }
            }
        })
    }

    /// The integer constant `v` is, if it is one.
    fn iconst(&self, v: Value) -> Option<i32> {
        self.f.as_iconst(self.resolve(v))
    }

    /// The value in a register, materialising constants and addresses.
    fn reg(&mut self, v: Value) -> Result<Reg, BackendError> {
        Ok(match self.operand(v)? {
            Opnd::Reg(r) => r,
            Opnd::Int(0) => ZERO,
            Opnd::Int(c) => self.cached(CacheKey::Int(c)),
            Opnd::FBits(b) => self.cached(CacheKey::FBits(b)),
            Opnd::Loc(l) => self.materialize(l),
        })
    }

    fn result(&self, i: Inst) -> Option<Value> {
        self.f.inst_result(i)
    }

    /// A fresh vreg of `v`'s class, recorded as the register holding `v`.
    fn def_reg(&mut self, v: Value) -> Reg {
        let r = self.new_vreg(class_of_type(self.f.value_type(v)));
        self.vreg[v.index()] = Some(r);
        r
    }

    // ---- instructions -------------------------------------------------------

    /// Selects the IR instruction `i` (nothing for a pure one whose result is unused).
    fn inst(&mut self, i: Inst) -> Result<(), BackendError> {
        let f = self.f;
        let kind = f.kind(i);
        let res = self.result(i);
        let dead = match kind {
            InstKind::Store { .. } | InstKind::Call { .. } => false,
            k if k.is_terminator() => false,
            _ => res.is_none_or(|r| !f.has_users(r)),
        };
        if dead {
            return Ok(());
        }
        // An `i32` lives sign-extended in its register: `sext` is that register (and
        // `sext` of a constant stays a constant, materialised where it is used).
        if let (
            InstKind::Unary {
                op: ir::UnOp::SExt,
                arg,
            },
            Some(r),
        ) = (kind, res)
        {
            self.alias[r.index()] = Some(*arg);
            return Ok(());
        }
        match kind {
            InstKind::Binary { op, args } => {
                self.binary(*op, args, res.expect("binary has a result"))?
            }
            InstKind::Cmp { op, args } => self.compare(i, *op, args)?,
            InstKind::Unary { op, arg } => {
                self.unary(*op, *arg, res.expect("unary has a result"))?
            }
            InstKind::Alloc { elem, len } => {
                self.alloc(*elem, *len, res.expect("alloc has a result"))
            }
            InstKind::Load { ty, ptr } => {
                self.load(i, *ty, *ptr, res.expect("load has a result"))?
            }
            InstKind::Store { value, ptr } => self.store(i, *value, *ptr)?,
            InstKind::Gep {
                base,
                index,
                stride,
            } => self.gep(res.expect("gep has a result"), *base, *index, *stride)?,
            InstKind::Call { callee, args } => {
                let sibling = self.siblings.contains(&i);
                self.call(res, *callee, args, sibling)?
            }
            InstKind::Jump { dest } => self.jump(dest)?,
            InstKind::Br {
                cond,
                then_dest,
                else_dest,
            } => self.br(*cond, then_dest, else_dest)?,
            InstKind::Ret { value } => self.ret(*value)?,
        }
        Ok(())
    }

    /// The machine block of the IR block `b`.
    fn target(&self, b: Block) -> Result<MBlock, BackendError> {
        self.mblock[b.index()]
            .ok_or_else(|| BackendError::Untranslatable(format!("branch to unreachable block {b}")))
    }
}
