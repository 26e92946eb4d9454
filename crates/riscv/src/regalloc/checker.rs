//! The register allocation checker: a symbolic proof, for one function, that the
//! code after allocation moves every value where the code before allocation says
//! it goes.
//!
//! The algorithm is the checker of regalloc2 (`src/checker.rs` of
//! bytecodealliance/regalloc2, itself derived from regalloc.rs's
//! `lib/src/checker.rs`): a forward data-flow analysis over the allocated code whose
//! abstract state maps each location (physical register or spill slot) to the set
//! of symbolic values it certainly holds. A symbolic value names a register of the
//! code before allocation: a virtual register, or a physical one that code already
//! uses (argument and result registers, fixed operands). Here a set never has more
//! than one element (a copy of the original code defines a new value, and spill
//! code copies whole sets), so a location holds one known value or nothing known,
//! and the state is a flat array of those. The transfer functions:
//!
//! - an instruction of the original code ([`Origin::Inst`]) reads each use operand's
//!   value from the register the allocator put in its place, which must hold it;
//!   the call clobbers then overwrite each caller-saved register `r` with the value
//!   `r`; each def of value `v` into location `L` sets `L = {v}` and removes `v`
//!   from every other location (the code before allocation is not in SSA form: a
//!   value's older copies are stale once it is redefined);
//! - spill code (loads from and stores to spill slots) copies the set of its
//!   source to its destination; a recomputation of a spilled value by its recipe
//!   sets its register to that value;
//! - a copy one side of which is spilled ([`Origin::SpilledCopy`]) reads the source
//!   value from the slot or register and defines the destination value in the
//!   other;
//! - at a join point, the sets of the predecessors intersect. The entry block starts
//!   with every physical register holding itself and empty slots; the analysis
//!   iterates to its greatest fixed point (sets only shrink), then a last pass
//!   checks every instruction of every reachable block.
//!
//! Besides the data flow, each allocated instruction must be its original with only
//! virtual registers replaced, fixed physical operands kept, each virtual register
//! in an allocatable (or scratch) register of its file, early defs apart from uses,
//! and spill code must move whole spill slots. The errors are [`CheckError`]s naming
//! the block, the instruction, the value, the location and what it held.
//!
//! The allocator ([`super::spill::rewrite`]) records where each instruction it
//! emits came from ([`Provenance`]); with the function as it was before allocation,
//! that is all the checker needs.

use super::spill::{Origin, Provenance};
use crate::abi;
use crate::mir::*;
use std::collections::VecDeque;
use std::fmt;

/// A place a value can be in after allocation.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Loc {
    Reg(Reg),
    Slot(Slot),
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loc::Reg(r) => write!(f, "{r}"),
            Loc::Slot(s) => write!(f, "spill slot {}", s.0),
        }
    }
}

/// An instruction of the allocated function: its block and index there.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct InstRef {
    pub block: MBlock,
    pub index: usize,
}

/// What is wrong with an allocation.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum CheckErrorKind {
    /// A use of `value` reads `loc`, which holds `held` (`None` when nothing is
    /// known there: never written on some path, or different values on different
    /// paths).
    WrongValue {
        value: Reg,
        loc: Loc,
        held: Option<Reg>,
    },
    /// A use of `value` reads `loc`, a register the call `call` overwrote (on some
    /// path) after `value` was put there.
    ClobberedByCall { value: Reg, loc: Loc, call: InstRef },
    /// A physical register operand of the original instruction was replaced.
    FixedRegisterChanged { expected: Reg, found: Reg },
    /// A virtual register was given a register of the other file, or one the
    /// allocator must not use (`sp`, `zero`, ...).
    BadRegister { vreg: Reg, reg: Reg },
    /// A virtual register is left in the allocated code.
    Unallocated { vreg: Reg },
    /// An early def shares its register with a use of the same instruction.
    EarlyDefOverlapsUse { value: Reg, reg: Reg },
    /// The instruction is not `expected` with its virtual registers replaced (for a
    /// recomputation: not the value's recipe).
    Mismatch { expected: Box<MInst> },
    /// Spill code that is not a whole-slot load or store of a spill slot.
    NotSpillCode,
    /// Spill code moves `value` with a width other than its own
    /// ([`MFunction::spill_op`]): a double stored with `fsw` loses half its bits.
    SpillWidth { value: Reg, op: MemOp },
    /// The provenance does not describe the code (no such original instruction,
    /// a spilled copy that is not a copy, or a different instruction count).
    BadProvenance,
}

/// A failed check: where, and what.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CheckError {
    pub function: String,
    pub at: InstRef,
    /// The allocated instruction (`None` when the provenance has no instruction
    /// there).
    pub inst: Option<Box<MInst>>,
    pub kind: CheckErrorKind,
}

/// `inst` as `Debug` prints it, with registers by name (`t1`, `%v3`) instead of
/// number (`Reg(6)`).
fn named(inst: &MInst) -> String {
    let text = format!("{inst:?}");
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("Reg(") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 4..];
        let number = after
            .find(')')
            .and_then(|j| Some((j, after[..j].parse::<u32>().ok()?)));
        match number {
            Some((j, n)) => {
                out.push_str(&Reg(n).to_string());
                rest = &after[j + 1..];
            }
            None => {
                out.push_str("Reg(");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

impl fmt::Display for CheckErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckErrorKind::WrongValue { value, loc, held } => match held {
                Some(h) => write!(f, "{value} is read from {loc}, which holds {h}"),
                None => write!(f, "{value} is read from {loc}, which holds no known value"),
            },
            CheckErrorKind::ClobberedByCall { value, loc, call } => write!(
                f,
                "{value} is read from {loc}, clobbered by the call at block {} instruction {}",
                call.block.0, call.index
            ),
            CheckErrorKind::FixedRegisterChanged { expected, found } => {
                write!(f, "fixed register {expected} became {found}")
            }
            CheckErrorKind::BadRegister { vreg, reg } => {
                write!(f, "{vreg} was given {reg}, which it cannot have")
            }
            CheckErrorKind::Unallocated { vreg } => write!(f, "{vreg} has no register"),
            CheckErrorKind::EarlyDefOverlapsUse { value, reg } => {
                write!(f, "the early def of {value} shares {reg} with a use")
            }
            CheckErrorKind::Mismatch { expected } => {
                write!(f, "not the original instruction `{}`", named(expected))
            }
            CheckErrorKind::NotSpillCode => f.write_str("spill code that moves no spill slot"),
            CheckErrorKind::SpillWidth { value, op } => {
                write!(
                    f,
                    "spill code moves {value} with `{}`, not its width",
                    op.store_mnemonic()
                )
            }
            CheckErrorKind::BadProvenance => {
                f.write_str("the allocator's record does not match the code")
            }
        }
    }
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "register allocation of {} is wrong at block {} instruction {}",
            self.function, self.at.block.0, self.at.index
        )?;
        if let Some(i) = &self.inst {
            write!(f, " (`{}`)", named(i))?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for CheckError {}

/// What one location certainly holds.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
struct Cell {
    /// The value, if one is known (the set `{v}`, or the empty set).
    val: Option<Reg>,
    /// The call that last overwrote the location, on some path (for the error).
    clobbered_by: Option<InstRef>,
}

impl Cell {
    fn holding(v: Reg) -> Cell {
        Cell {
            val: Some(v),
            clobbered_by: None,
        }
    }

    /// `self ∩= other`; whether anything changed.
    fn meet(&mut self, other: &Cell) -> bool {
        let mut changed = false;
        if self.val.is_some() && self.val != other.val {
            self.val = None;
            changed = true;
        }
        let by = match (self.clobbered_by, other.clobbered_by) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        changed |= by != self.clobbered_by;
        self.clobbered_by = by;
        changed
    }
}

/// For each value (by register number), the cells it has ever been put in, in any
/// state: an over-approximation of where it can be, so that a def need not look at
/// every location for older copies (a value enters a location only by a def, a
/// copy or a recomputation, all noted here; meets only remove values).
struct Places(Vec<Vec<u32>>);

impl Places {
    fn note(&mut self, value: Reg, cell: usize) {
        let list = &mut self.0[value.0 as usize];
        if !list.contains(&(cell as u32)) {
            list.push(cell as u32);
        }
    }
}

/// The abstract state: physical registers `0..64`, then spill slots by number.
#[derive(Clone, PartialEq, Eq, Debug)]
struct State {
    cells: Vec<Cell>,
}

fn index(loc: Loc) -> usize {
    match loc {
        Loc::Reg(r) => r.0 as usize,
        Loc::Slot(s) => NUM_PREGS as usize + s.0 as usize,
    }
}

impl State {
    fn entry(num_slots: usize) -> State {
        let mut cells = vec![Cell::default(); NUM_PREGS as usize + num_slots];
        for (r, c) in cells.iter_mut().enumerate().take(NUM_PREGS as usize) {
            *c = Cell::holding(Reg(r as u32));
        }
        State { cells }
    }

    fn meet(&mut self, other: &State) -> bool {
        let mut changed = false;
        for (a, b) in self.cells.iter_mut().zip(&other.cells) {
            changed |= a.meet(b);
        }
        changed
    }

    /// An original instruction writes `value` into `loc`.
    fn def(&mut self, places: &mut Places, value: Reg, loc: Loc) {
        for &c in &places.0[value.0 as usize] {
            let cell = &mut self.cells[c as usize];
            if cell.val == Some(value) {
                cell.val = None;
            }
        }
        self.put(places, value, loc);
    }

    /// `loc` holds `value` only.
    fn put(&mut self, places: &mut Places, value: Reg, loc: Loc) {
        self.cells[index(loc)] = Cell::holding(value);
        places.note(value, index(loc));
    }

    /// Spill code copies `from` into `to`.
    fn copy(&mut self, places: &mut Places, from: Loc, to: Loc) {
        let cell = self.cells[index(from)];
        if let Some(v) = cell.val {
            places.note(v, index(to));
        }
        self.cells[index(to)] = cell;
    }

    /// A call overwrites `r`.
    fn clobber(&mut self, places: &mut Places, r: Reg, call: InstRef) {
        self.def(places, r, Loc::Reg(r));
        self.cells[r.0 as usize].clobbered_by = Some(call);
    }

    fn read(&self, value: Reg, loc: Loc) -> Result<(), CheckErrorKind> {
        let c = &self.cells[index(loc)];
        if c.val == Some(value) {
            return Ok(());
        }
        Err(match c.clobbered_by {
            Some(call) => CheckErrorKind::ClobberedByCall { value, loc, call },
            None => CheckErrorKind::WrongValue {
                value,
                loc,
                held: c.val,
            },
        })
    }
}

/// Whether a virtual register may live in `r` at some instruction: an allocatable
/// register, or a scratch register of spill code.
fn may_hold_vreg(r: Reg) -> bool {
    r.is_phys() && (abi::is_allocatable(r) || [T5, T6, FT10, FT11].contains(&r))
}

/// Whether `op` is a width spill code may use for physical register `r`: that of
/// a value of its file ([`MFunction::spill_op`]; which one the value's own is,
/// [`Checker::spill_width`] checks).
fn is_spill_op(op: MemOp, r: Reg) -> bool {
    r.is_phys()
        && matches!(
            (r.phys_class(), op),
            (RegClass::Int, MemOp::D) | (RegClass::Float, MemOp::FS | MemOp::FD)
        )
}

struct Checker<'a> {
    before: &'a MFunction,
    after: &'a MFunction,
    provenance: &'a Provenance,
    places: std::cell::RefCell<Places>,
}

impl Checker<'_> {
    /// A spill slot of the allocated function.
    fn spill_slot(&self, addr: &Addr) -> Option<Slot> {
        match addr.base {
            Base::Slot(s) if addr.off == 0 && self.after.slots.get(s) == Some(&SlotKind::Spill) => {
                Some(s)
            }
            _ => None,
        }
    }

    /// Spill code moves `value` with `op`: its own width, or the copy loses bits.
    fn spill_width(&self, value: Reg, op: MemOp) -> Result<(), CheckErrorKind> {
        if value.is_virtual() && self.before.spill_op(value) != op {
            return Err(CheckErrorKind::SpillWidth { value, op });
        }
        Ok(())
    }

    /// Spill code moves what `from` holds with `op` (see [`Checker::spill_width`]).
    fn spill_width_of(&self, st: &State, from: Loc, op: MemOp) -> Result<(), CheckErrorKind> {
        match st.cells[index(from)].val {
            Some(v) => self.spill_width(v, op),
            None => Ok(()),
        }
    }

    /// Where a value of the original code may be put: a physical register of its
    /// file that may hold it.
    fn placed(&self, value: Reg, reg: Reg) -> Result<(), CheckErrorKind> {
        if reg.is_virtual() {
            return Err(CheckErrorKind::Unallocated { vreg: reg });
        }
        if value.is_virtual()
            && (!may_hold_vreg(reg) || self.before.class_of(value) != reg.phys_class())
        {
            return Err(CheckErrorKind::BadRegister { vreg: value, reg });
        }
        Ok(())
    }

    /// `recipe` with its def replaced by the def of `inst` equals `inst`; returns
    /// that register.
    fn recomputes(&self, vreg: Reg, inst: &MInst) -> Result<Reg, CheckErrorKind> {
        let recipe = self
            .before
            .vreg_remat
            .get(vreg.vindex())
            .and_then(|r| r.clone())
            .ok_or(CheckErrorKind::BadProvenance)?;
        let mut dst = None;
        inst.for_each_operand(|o| {
            if o.kind != OperandKind::Use {
                dst = Some(o.reg);
            }
        });
        let mismatch = || CheckErrorKind::Mismatch {
            expected: Box::new(recipe.clone()),
        };
        let dst = dst.ok_or_else(mismatch)?;
        let mut want = recipe.clone();
        want.map_regs(|r, is_def| {
            if is_def {
                *r = dst;
            }
        });
        if &want != inst {
            return Err(mismatch());
        }
        self.placed(vreg, dst)?;
        Ok(dst)
    }

    /// Applies one allocated instruction to `st`, checking its reads.
    fn step(
        &self,
        st: &mut State,
        at: InstRef,
        inst: &MInst,
        origin: Origin,
    ) -> Result<(), CheckErrorKind> {
        let places = &mut *self.places.borrow_mut();
        let original = |k: u32| {
            self.before.blocks[at.block]
                .insts
                .get(k as usize)
                .ok_or(CheckErrorKind::BadProvenance)
        };
        match origin {
            Origin::Inst(k) => {
                let orig = original(k)?;
                // The same instruction up to registers: copy the allocated registers
                // into the original in operand order and compare.
                let mut regs = inst.operands().into_iter();
                let mut same = orig.clone();
                let mut short = false;
                same.map_regs(|r, _| match regs.next() {
                    Some(o) => *r = o.reg,
                    None => short = true,
                });
                if short || regs.next().is_some() || &same != inst {
                    return Err(CheckErrorKind::Mismatch {
                        expected: Box::new(orig.clone()),
                    });
                }
                let pairs: Vec<(Operand, Reg)> = orig
                    .operands()
                    .into_iter()
                    .zip(inst.operands().into_iter().map(|o| o.reg))
                    .collect();
                for &(o, r) in &pairs {
                    if o.is_fixed() && o.reg != r {
                        return Err(CheckErrorKind::FixedRegisterChanged {
                            expected: o.reg,
                            found: r,
                        });
                    }
                    self.placed(o.reg, r)?;
                }
                for &(o, r) in &pairs {
                    if o.kind == OperandKind::EarlyDef {
                        if pairs.iter().any(|&(u, ur)| u.is_use() && ur == r) {
                            return Err(CheckErrorKind::EarlyDefOverlapsUse {
                                value: o.reg,
                                reg: r,
                            });
                        }
                        st.def(places, o.reg, Loc::Reg(r));
                    }
                }
                for &(o, r) in &pairs {
                    if o.is_use() {
                        st.read(o.reg, Loc::Reg(r))?;
                    }
                }
                for c in inst.clobbers() {
                    st.clobber(places, c, at);
                }
                for &(o, r) in &pairs {
                    if o.kind == OperandKind::Def {
                        st.def(places, o.reg, Loc::Reg(r));
                    }
                }
                Ok(())
            }
            Origin::SpilledCopy(k) => {
                let &MInst::Mv { rd, rs } = original(k)? else {
                    return Err(CheckErrorKind::BadProvenance);
                };
                match inst {
                    // (A recipe may load too: from an incoming argument's slot.)
                    MInst::Load { op, rd: r, addr } if self.spill_slot(addr).is_some() => {
                        let s = self
                            .spill_slot(addr)
                            .filter(|_| is_spill_op(*op, *r))
                            .ok_or(CheckErrorKind::NotSpillCode)?;
                        self.spill_width(rs, *op)?;
                        self.placed(rd, *r)?;
                        st.read(rs, Loc::Slot(s))?;
                        st.def(places, rd, Loc::Reg(*r));
                    }
                    MInst::Store { op, src, addr } => {
                        let s = self
                            .spill_slot(addr)
                            .filter(|_| is_spill_op(*op, *src))
                            .ok_or(CheckErrorKind::NotSpillCode)?;
                        self.spill_width(rd, *op)?;
                        self.placed(rs, *src)?;
                        st.read(rs, Loc::Reg(*src))?;
                        st.def(places, rd, Loc::Slot(s));
                    }
                    _ => {
                        let r = self.recomputes(rs, inst)?;
                        self.placed(rd, r)?;
                        st.def(places, rd, Loc::Reg(r));
                    }
                }
                Ok(())
            }
            Origin::Spill => {
                match inst {
                    MInst::Load { op, rd, addr } if is_spill_op(*op, *rd) => {
                        let s = self.spill_slot(addr).ok_or(CheckErrorKind::NotSpillCode)?;
                        self.spill_width_of(st, Loc::Slot(s), *op)?;
                        st.copy(places, Loc::Slot(s), Loc::Reg(*rd));
                    }
                    MInst::Store { op, src, addr } if is_spill_op(*op, *src) => {
                        let s = self.spill_slot(addr).ok_or(CheckErrorKind::NotSpillCode)?;
                        self.spill_width_of(st, Loc::Reg(*src), *op)?;
                        st.copy(places, Loc::Reg(*src), Loc::Slot(s));
                    }
                    _ => return Err(CheckErrorKind::NotSpillCode),
                }
                Ok(())
            }
            Origin::Remat(v) => {
                let r = self.recomputes(v, inst)?;
                // The same value again: older copies stay valid.
                st.put(places, v, Loc::Reg(r));
                Ok(())
            }
        }
    }

    /// Runs block `b` from `st`; the first error, if any.
    fn block(&self, b: MBlock, st: &mut State) -> Result<(), CheckError> {
        let insts = &self.after.blocks[b].insts;
        let origins = self.provenance.get(b.index()).map_or(&[][..], |v| &v[..]);
        let fail = |index: usize, kind| CheckError {
            function: self.after.name.clone(),
            at: InstRef { block: b, index },
            inst: insts.get(index).cloned().map(Box::new),
            kind,
        };
        if origins.len() != insts.len() {
            return Err(fail(
                insts.len().min(origins.len()),
                CheckErrorKind::BadProvenance,
            ));
        }
        for (index, (inst, &origin)) in insts.iter().zip(origins).enumerate() {
            let at = InstRef { block: b, index };
            self.step(st, at, inst, origin)
                .map_err(|k| fail(index, k))?;
        }
        Ok(())
    }
}

/// Checks that `after`, the allocation of `before` with the record `provenance`
/// (from [`super::spill::rewrite`]), computes with the same values.
pub fn check(
    before: &MFunction,
    after: &MFunction,
    provenance: &Provenance,
) -> Result<(), CheckError> {
    let ck = Checker {
        before,
        after,
        provenance,
        places: std::cell::RefCell::new(Places(
            (0..NUM_PREGS as usize + before.num_vregs())
                .map(|r| {
                    if r < NUM_PREGS as usize {
                        vec![r as u32]
                    } else {
                        Vec::new()
                    }
                })
                .collect(),
        )),
    };
    let Some(&entry) = after.layout.first() else {
        return Ok(());
    };
    let n = after.blocks.len();
    let mut entry_state: Vec<Option<State>> = vec![None; n];
    entry_state[entry.index()] = Some(State::entry(after.slots.len()));
    let succs: Vec<Vec<MBlock>> = (0..n)
        .map(|b| after.succs(MBlock(b as u32)).to_vec())
        .collect();
    let mut queued = vec![false; n];
    let mut work = VecDeque::from([entry]);
    queued[entry.index()] = true;
    // Errors wait for the fixed point: the sets only shrink, so a block's first
    // visits see more than the final state holds.
    while let Some(b) = work.pop_front() {
        queued[b.index()] = false;
        let mut st = entry_state[b.index()]
            .clone()
            .expect("queued blocks have a state");
        if ck.block(b, &mut st).is_err() {
            // Stop the block here; the final pass reports the error.
            continue;
        }
        for &s in &succs[b.index()] {
            let changed = match &mut entry_state[s.index()] {
                Some(old) => old.meet(&st),
                slot @ None => {
                    *slot = Some(st.clone());
                    true
                }
            };
            if changed && !queued[s.index()] {
                queued[s.index()] = true;
                work.push_back(s);
            }
        }
    }
    for &b in &after.layout {
        if let Some(st) = &entry_state[b.index()] {
            ck.block(b, &mut st.clone())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::liveness::{build_intervals, compute_liveness, Intervals};
    use crate::regalloc::linear_scan::{linear_scan, Allocation};
    use crate::regalloc::spill::rewrite;

    /// A SysY function `f` with more integer and float values live across calls in
    /// a loop than there are registers, and arguments on the stack: its allocation
    /// has callee-saved registers, spill code and recomputed values.
    fn source() -> String {
        let n = 30;
        let mut s = String::from(
            "int g(int x) { return x + 1; }\nfloat h(float x) { return x * 2.0; }\n\
             int f(int n, float y, int c0, int c1, int c2, int c3, int c4, int c5, int c6, \
             int c7, int c8) {\n",
        );
        for i in 0..n {
            s += &format!(
                "  int a{i} = n * {} + {i};\n  float b{i} = y * {i}.5;\n",
                i + 2
            );
        }
        s += "  int i = 0;\n  int s = 0;\n  while (i < n) {\n    s = s + g(i)";
        for i in 0..n {
            s += &format!(" + a{i} * i");
        }
        s += ";\n    s = s * 70001;\n    y = h(y)";
        for i in 0..n {
            s += &format!(" + b{i}");
        }
        s += ";\n    i = i + 70001;\n  }\n  float t = y";
        for i in 0..n {
            s += &format!(" * b{i}");
        }
        s += ";\n  return s + c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8";
        for i in 0..n {
            s += &format!(" - a{i}");
        }
        s += " + t;\n}\nint main() { putint(f(getint(), 1.5, 1, 2, 3, 4, 5, 6, 7, 8, 9)); return 0; }\n";
        s
    }

    /// Function `f` of [`source`] after instruction selection.
    fn selected() -> MFunction {
        let src = source();
        let program =
            front::check("t.sy", &src).unwrap_or_else(|d| panic!("{}", d.render("t.sy", &src)));
        let m = lower::lower_program(&program, false);
        let facts = crate::ModuleFacts::of(&m);
        let (fid, _) = m.funcs.iter().find(|(_, f)| f.name == "f").expect("f");
        crate::isel::select_function(&m, fid, &facts).expect("isel")
    }

    fn allocation(before: &MFunction) -> (Intervals, Allocation) {
        let live = compute_liveness(before);
        let iv = build_intervals(before, &live);
        let depths = crate::loops::loop_depths(before);
        let alloc = linear_scan(before, &iv, &depths);
        (iv, alloc)
    }

    fn rewritten(before: &MFunction, alloc: &Allocation) -> (MFunction, Provenance) {
        let mut after = before.clone();
        let needs = crate::regalloc::spill::needs_slot(&after, alloc);
        let iv = build_intervals(before, &compute_liveness(before));
        let slots = crate::regalloc::slot_coloring::assign_spill_slots(&mut after, &needs, &iv);
        let prov = rewrite(&mut after, alloc, &slots).expect("rewrite");
        (after, prov)
    }

    /// Every allocated instruction with its origin.
    fn origins<'a>(
        after: &'a MFunction,
        prov: &'a Provenance,
    ) -> impl Iterator<Item = (MBlock, usize, &'a MInst, Origin)> + 'a {
        after.layout.iter().flat_map(move |&b| {
            let insts = &after.blocks[b].insts;
            insts
                .iter()
                .enumerate()
                .map(move |(i, inst)| (b, i, inst, prov[b.index()][i]))
        })
    }

    fn check_err(before: &MFunction, after: &MFunction, prov: &Provenance) -> CheckErrorKind {
        match check(before, after, prov) {
            Ok(()) => panic!("the corrupted allocation passes the checker"),
            Err(e) => {
                eprintln!("{e}");
                e.kind
            }
        }
    }

    #[test]
    fn instructions_print_with_register_names() {
        let i = MInst::Load {
            op: MemOp::W,
            rd: Reg::virt(3),
            addr: Addr::new(Base::Reg(Reg::x(10)), 4),
        };
        assert_eq!(
            named(&i),
            "Load { op: W, rd: %v3, addr: Addr { base: Reg(a0), off: 4, region: 0, sym: None } }"
        );
    }

    #[test]
    fn the_real_allocation_checks_and_has_spill_code_calls_and_recomputation() {
        let before = selected();
        let (_, alloc) = allocation(&before);
        let (after, prov) = rewritten(&before, &alloc);
        check(&before, &after, &prov).unwrap_or_else(|e| panic!("{e}"));
        let all: Vec<_> = origins(&after, &prov).collect();
        assert!(all.iter().any(|x| x.2.is_call()));
        assert!(all
            .iter()
            .any(|x| x.3 == Origin::Spill && matches!(x.2, MInst::Load { .. })));
        assert!(all
            .iter()
            .any(|x| x.3 == Origin::Spill && matches!(x.2, MInst::Store { .. })));
        assert!(all.iter().any(|x| matches!(x.3, Origin::Remat(_))));
    }

    #[test]
    fn operands_agree_with_map_regs_and_the_use_and_def_walks() {
        let before = selected();
        let (_, alloc) = allocation(&before);
        let (after, _) = rewritten(&before, &alloc);
        for mf in [&before, &after] {
            for &b in &mf.layout {
                for inst in &mf.blocks[b].insts {
                    let ops = inst.operands();
                    let mut mapped = Vec::new();
                    inst.clone().map_regs(|r, def| mapped.push((*r, def)));
                    let kinds: Vec<(Reg, bool)> =
                        ops.iter().map(|o| (o.reg, !o.is_use())).collect();
                    assert_eq!(kinds, mapped, "{inst:?}");
                    let mut uses = Vec::new();
                    inst.for_each_use(|r| uses.push(r));
                    let op_uses: Vec<Reg> =
                        ops.iter().filter(|o| o.is_use()).map(|o| o.reg).collect();
                    assert_eq!(uses, op_uses, "{inst:?}");
                    let mut defs = Vec::new();
                    inst.for_each_def(|r| defs.push(r));
                    let mut op_defs: Vec<Reg> =
                        ops.iter().filter(|o| !o.is_use()).map(|o| o.reg).collect();
                    op_defs.extend(inst.clobbers());
                    assert_eq!(defs, op_defs, "{inst:?}");
                    for o in &ops {
                        if let Some(c) = o.class {
                            assert_eq!(mf.class_of(o.reg), c, "{inst:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn swapped_registers_of_a_use_are_caught() {
        let before = selected();
        let (_, alloc) = allocation(&before);
        let (mut after, prov) = rewritten(&before, &alloc);
        let (b, i, orig_rs1, new_rs1) = origins(&after, &prov)
            .find_map(|(b, i, inst, o)| {
                let Origin::Inst(k) = o else { return None };
                let MInst::Alu {
                    op: AluOp::Addw | AluOp::Mulw,
                    rs1,
                    rs2,
                    ..
                } = *inst
                else {
                    return None;
                };
                let MInst::Alu {
                    rs1: v1, rs2: v2, ..
                } = before.blocks[b].insts[k as usize]
                else {
                    return None;
                };
                (rs1 != rs2 && v1 != v2 && v1.is_virtual() && v2.is_virtual())
                    .then_some((b, i, v1, rs2))
            })
            .expect("an addition or product of two registers");
        if let MInst::Alu { rs1, rs2, .. } = &mut after.blocks[b].insts[i] {
            std::mem::swap(rs1, rs2);
        }
        match check_err(&before, &after, &prov) {
            CheckErrorKind::WrongValue { value, loc, .. } => {
                assert_eq!((value, loc), (orig_rs1, Loc::Reg(new_rs1)))
            }
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn a_dropped_reload_is_caught() {
        let before = selected();
        let (_, alloc) = allocation(&before);
        let (mut after, mut prov) = rewritten(&before, &alloc);
        // A reload into a scratch register that the same block wrote before (not
        // by a call): without it, the register holds that older value.
        let (b, i, scratch) = after
            .layout
            .iter()
            .find_map(|&b| {
                let insts = &after.blocks[b].insts;
                let mut written = Vec::new();
                for (i, inst) in insts.iter().enumerate() {
                    if inst.is_call() {
                        written.clear();
                    }
                    if let (MInst::Load { rd, .. }, Origin::Spill) = (inst, prov[b.index()][i]) {
                        if written.contains(rd) {
                            return Some((b, i, *rd));
                        }
                    }
                    inst.for_each_operand(|o| {
                        if !o.is_use() {
                            written.push(o.reg)
                        }
                    });
                }
                None
            })
            .expect("a reload into a scratch register written earlier in its block");
        after.blocks[b].insts.remove(i);
        prov[b.index()].remove(i);
        match check_err(&before, &after, &prov) {
            CheckErrorKind::WrongValue { loc, held, .. } => {
                assert_eq!(loc, Loc::Reg(scratch));
                assert!(held.is_some());
            }
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn a_dropped_spill_store_is_caught() {
        let before = selected();
        let (_, alloc) = allocation(&before);
        let (mut after, mut prov) = rewritten(&before, &alloc);
        let (b, i, _, _) = origins(&after, &prov)
            .find(|x| x.3 == Origin::Spill && matches!(x.2, MInst::Store { .. }))
            .expect("a spill store");
        after.blocks[b].insts.remove(i);
        prov[b.index()].remove(i);
        // The reload copies the slot's unknown content into a scratch register.
        match check_err(&before, &after, &prov) {
            CheckErrorKind::WrongValue { held, .. } => assert_eq!(held, None),
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn two_overlapping_values_in_one_register_are_caught() {
        let before = selected();
        let (iv, mut alloc) = allocation(&before);
        let interval = |v: usize| &iv.regs[NUM_PREGS as usize + v];
        let in_callee_saved =
            |v: usize| alloc.assignment[v].is_some_and(|r| abi::is_callee_saved(r) && r.0 < 32);
        let nv = before.num_vregs();
        // Two integer values live at once, the first in a callee-saved register
        // (which no fixed interval or call touches).
        let (a, b) = (0..nv)
            .filter(|&a| in_callee_saved(a))
            .find_map(|a| {
                (0..nv)
                    .find(|&b| {
                        b != a
                            && before.vreg_class[b] == RegClass::Int
                            && alloc.assignment[b].is_some()
                            && crate::regalloc::linear_scan::overlaps(interval(a), interval(b))
                    })
                    .map(|b| (a, b))
            })
            .expect("two overlapping integer values");
        alloc.assignment[b] = alloc.assignment[a];
        let (after, prov) = rewritten(&before, &alloc);
        let (va, vb) = (Reg::virt(a as u32), Reg::virt(b as u32));
        match check_err(&before, &after, &prov) {
            CheckErrorKind::WrongValue { value, held, .. } => {
                assert!(
                    (value == va && held == Some(vb)) || (value == vb && held == Some(va)),
                    "{value} {held:?}"
                );
            }
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn a_value_in_a_caller_saved_register_across_a_call_is_caught() {
        let before = selected();
        let (iv, mut alloc) = allocation(&before);
        let interval = |v: usize| &iv.regs[NUM_PREGS as usize + v];
        // Positions of the calls (instruction k reads at 2k, writes at 2k + 1).
        let mut calls = Vec::new();
        let mut k = 0u32;
        for &b in &before.layout {
            for inst in &before.blocks[b].insts {
                if inst.is_call() {
                    calls.push(2 * k);
                }
                k += 1;
            }
        }
        let v = (0..before.num_vregs())
            .find(|&v| {
                before.vreg_class[v] == RegClass::Int
                    && alloc.assignment[v].is_some_and(abi::is_callee_saved)
                    && calls
                        .iter()
                        .any(|&p| interval(v).covers(p) && interval(v).covers(p + 2))
            })
            .expect("an integer value live across a call");
        // A temporary that no other value overlapping this one has.
        let t = [Reg::x(5), Reg::x(6), Reg::x(7), Reg::x(28), Reg::x(29)]
            .into_iter()
            .find(|&t| {
                (0..before.num_vregs()).all(|w| {
                    alloc.assignment[w] != Some(t)
                        || !crate::regalloc::linear_scan::overlaps(interval(v), interval(w))
                })
            })
            .expect("a free temporary");
        alloc.assignment[v] = Some(t);
        let (after, prov) = rewritten(&before, &alloc);
        match check_err(&before, &after, &prov) {
            CheckErrorKind::ClobberedByCall { value, loc, call } => {
                assert_eq!((value, loc), (Reg::virt(v as u32), Loc::Reg(t)));
                assert!(after.blocks[call.block].insts[call.index].is_call());
            }
            k => panic!("{k:?}"),
        }
    }

    /// Moving one value to another register of its file is accepted exactly when the
    /// live intervals allow it: when the value overlaps neither the register's fixed
    /// interval (arguments, results, call clobbers) nor a value already there.
    #[test]
    fn random_reassignments_are_accepted_exactly_when_the_intervals_allow_them() {
        use crate::regalloc::linear_scan::overlaps;
        let before = selected();
        let (iv, alloc) = allocation(&before);
        let nv = before.num_vregs();
        let interval = |v: usize| &iv.regs[NUM_PREGS as usize + v];
        let in_reg: Vec<usize> = (0..nv).filter(|&v| alloc.assignment[v].is_some()).collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        let (mut accepted, mut rejected) = (0, 0);
        for _ in 0..1000 {
            let v = in_reg[next(in_reg.len())];
            let regs = abi::allocatable(before.vreg_class[v]);
            let r = regs[next(regs.len())];
            let mut assignment = alloc.assignment.clone();
            assignment[v] = Some(r);
            let allowed = !overlaps(interval(v), &iv.regs[r.0 as usize])
                && (0..nv).all(|w| {
                    w == v || assignment[w] != Some(r) || !overlaps(interval(v), interval(w))
                });
            let moved = Allocation {
                assignment,
                spilled: alloc.spilled.clone(),
            };
            let (after, prov) = rewritten(&before, &moved);
            let got = check(&before, &after, &prov);
            assert_eq!(got.is_ok(), allowed, "%v{v} in {r}: {got:?}");
            if allowed {
                accepted += 1;
            } else {
                rejected += 1;
            }
        }
        eprintln!("{accepted} accepted, {rejected} rejected");
        assert!(accepted >= 50 && rejected >= 50, "{accepted} {rejected}");
    }

    /// Spilling any set of values is correct (spill code goes through the scratch
    /// registers), and the checker accepts it.
    #[test]
    fn spilling_random_sets_of_values_is_accepted() {
        let before = selected();
        let (_, alloc) = allocation(&before);
        let nv = before.num_vregs();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for round in 0..50 {
            let mut moved = Allocation {
                assignment: alloc.assignment.clone(),
                spilled: alloc.spilled.clone(),
            };
            for v in 0..nv {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                if moved.assignment[v].is_some() && seed % 100 < 2 * round {
                    moved.assignment[v] = None;
                    moved.spilled[v] = true;
                }
            }
            let (after, prov) = rewritten(&before, &moved);
            check(&before, &after, &prov).unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
    }

    #[test]
    fn a_moved_fixed_register_is_caught() {
        let before = selected();
        let (_, alloc) = allocation(&before);
        let (mut after, prov) = rewritten(&before, &alloc);
        let (b, i, _, _) = origins(&after, &prov)
            .find(|x| matches!(x.2, MInst::Mv { rd, .. } if *rd == A0))
            .expect("a copy into a0");
        if let MInst::Mv { rd, .. } = &mut after.blocks[b].insts[i] {
            *rd = Reg::x(11);
        }
        assert_eq!(
            check_err(&before, &after, &prov),
            CheckErrorKind::FixedRegisterChanged {
                expected: A0,
                found: Reg::x(11)
            }
        );
    }

    #[test]
    fn a_value_in_a_reserved_or_wrong_file_register_is_caught() {
        let before = selected();
        let (_, alloc) = allocation(&before);
        let v = (0..before.num_vregs())
            .find(|&v| before.vreg_class[v] == RegClass::Int && alloc.assignment[v].is_some())
            .expect("an integer value in a register");
        for bad in [SP, Reg::f(0)] {
            let mut alloc2 = Allocation {
                assignment: alloc.assignment.clone(),
                spilled: alloc.spilled.clone(),
            };
            alloc2.assignment[v] = Some(bad);
            let (after, prov) = rewritten(&before, &alloc2);
            assert_eq!(
                check_err(&before, &after, &prov),
                CheckErrorKind::BadRegister {
                    vreg: Reg::virt(v as u32),
                    reg: bad
                }
            );
        }
    }

    #[test]
    fn a_changed_instruction_and_a_wrong_provenance_are_caught() {
        let before = selected();
        let (_, alloc) = allocation(&before);
        let (mut after, mut prov) = rewritten(&before, &alloc);
        let (b, i, _, _) = origins(&after, &prov)
            .find(|x| matches!(x.2, MInst::AluImm { .. }) && matches!(x.3, Origin::Inst(_)))
            .expect("an instruction with an immediate");
        let original = after.blocks[b].insts[i].clone();
        if let MInst::AluImm { imm, .. } = &mut after.blocks[b].insts[i] {
            *imm += 1;
        }
        assert!(matches!(
            check_err(&before, &after, &prov),
            CheckErrorKind::Mismatch { .. }
        ));
        after.blocks[b].insts[i] = original;
        prov[b.index()].pop();
        assert_eq!(
            check_err(&before, &after, &prov),
            CheckErrorKind::BadProvenance
        );
    }
}
