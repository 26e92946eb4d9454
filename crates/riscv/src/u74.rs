//! A timing model of the SiFive U74, the in-order dual-issue core the contest runs
//! on, for the instruction scheduler (and its tests).
//!
//! It is the model the bench's dependence-aware estimate uses (the QEMU plugin in
//! `crates/bench/plugin/insn_count.c` evaluates it per translation block):
//!
//! - instructions issue in program order, at most two per cycle; pipe A takes memory
//!   operations, pipe B branches, jumps, multiplies, divides and FP; ALU operations
//!   take either;
//! - a register scoreboard: a result is *early*-ready (for an address, multiply,
//!   divide or FP operand) and *late*-ready (for an ALU operand, a branch or store
//!   data) a fixed number of cycles after issue: ALU 1/1, load 3/1, FP load 2/2,
//!   multiply 3/1, divide 20/18, FP add and multiply 5/5, FP divide 27/27, other FP
//!   3/3 (2/2 into an integer register);
//! - an ALU operation or branch whose operands are late- but not early-ready issues
//!   anyway and runs two stages later (the U74's late ALU); its result is then
//!   early-ready only after 3 cycles;
//! - the integer and FP dividers are not pipelined;
//! - a branch or jump costs one bubble cycle.
//!
//! A machine instruction that the assembler expands (`li` of a wide constant, `lla`)
//! is modelled as one operation whose latency counts its parts.

use crate::mir::{AluOp, Base, CvtOp, FAluOp, MInst, MemOp, Reg, NUM_PREGS};
use smallvec::SmallVec;

/// Issue pipes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Pipe {
    /// Either pipe (integer ALU operations).
    Any,
    /// Memory operations.
    A,
    /// Branches, jumps, multiplies, divides and FP.
    B,
}

/// How an instruction reads an operand.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum UseKind {
    /// An address, multiply, divide or FP operand: needs the early result.
    Early,
    /// An ALU operand, branch operand or store data: the late result is enough.
    Late,
}

/// Unpipelined units.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Unit {
    IntDiv,
    FpDiv,
}

/// A memory access, for dependences between loads and stores.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct MemAccess {
    pub store: bool,
    /// Base register (`None`: a frame slot not yet resolved, compared by slot).
    pub base: Option<Reg>,
    pub slot: Option<u32>,
    pub off: i64,
    pub size: i64,
    /// The alias region ([`crate::mir::Addr::region`]).
    pub region: u32,
    /// The start as an anchor plus an offset ([`crate::mir::Addr::sym`]).
    pub sym: Option<crate::mir::SymAddr>,
}

impl MemAccess {
    /// Whether the two accesses provably touch disjoint bytes: they are in two
    /// different alias regions, or they have the same base (whose value the caller
    /// guarantees is the same, or the two are ordered anyway) and non-overlapping
    /// ranges.
    pub fn disjoint(&self, other: &MemAccess) -> bool {
        let any = crate::mir::Addr::ANY_REGION;
        if self.region != any && other.region != any && self.region != other.region {
            return true;
        }
        if self.sym_disjoint(other) {
            return true;
        }
        let same_base = match (self.base, other.base) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.slot == other.slot,
            _ => false,
        };
        same_base && (self.off + self.size <= other.off || other.off + other.size <= self.off)
    }
}

impl MemAccess {
    /// Whether the two accesses, of one block, start at offsets from one anchor
    /// whose ranges do not meet ([`crate::mir::SymAddr`]).
    pub fn sym_disjoint(&self, other: &MemAccess) -> bool {
        match (self.sym, other.sym) {
            (Some(a), Some(b)) if a.anchor == b.anchor => {
                let near = a.off.abs_diff(b.off) < 1 << 31;
                near && (a.off.saturating_add(self.size) <= b.off
                    || b.off.saturating_add(other.size) <= a.off)
            }
            _ => false,
        }
    }
}

/// Timing facts of one machine instruction.
#[derive(Clone, Debug)]
pub struct Timing {
    pub pipe: Pipe,
    /// Registers read, with how (inline: the timing of every instruction is
    /// taken many times over by the schedulers, which should not allocate).
    pub uses: SmallVec<[(Reg, UseKind); 4]>,
    /// Registers written.
    pub defs: SmallVec<[Reg; 2]>,
    /// Cycles until the result is early- and late-ready.
    pub early: u32,
    pub late: u32,
    /// An ALU operation or branch (may run in the late ALU).
    pub late_alu: bool,
    /// An unpipelined unit and how long it stays busy.
    pub unit: Option<(Unit, u32)>,
    /// A branch or jump (one bubble cycle).
    pub control: bool,
    pub mem: Option<MemAccess>,
}

fn access(store: bool, op: MemOp, addr: &crate::mir::Addr) -> MemAccess {
    let (base, slot) = match addr.base {
        Base::Reg(r) => (Some(r), None),
        Base::Slot(s) => (None, Some(s.0)),
    };
    MemAccess {
        store,
        base,
        slot,
        off: addr.off,
        size: op.size() as i64,
        region: addr.region,
        sym: addr.sym,
    }
}

/// The timing of `i`, an instruction over physical registers. Calls are not
/// modelled (the scheduler never moves anything across one).
pub fn timing(i: &MInst) -> Timing {
    timing_with(i, &|r: Reg| {
        r.is_phys() && r.phys_class() == crate::mir::RegClass::Float
    })
}

/// The timing of `i`, where `is_float` tells the register file of a register
/// (virtual ones included).
pub fn timing_with(i: &MInst, is_float: &dyn Fn(Reg) -> bool) -> Timing {
    let mut t = Timing {
        pipe: Pipe::Any,
        uses: SmallVec::new(),
        defs: SmallVec::new(),
        early: 1,
        late: 1,
        late_alu: true,
        unit: None,
        control: false,
        mem: None,
    };
    let uses_as = |t: &mut Timing, kind: UseKind| i.for_each_use(|r| t.uses.push((r, kind)));
    match i {
        MInst::Alu { op, .. } => match op {
            AluOp::Mul | AluOp::Mulw | AluOp::Mulh | AluOp::Mulhu => {
                t.pipe = Pipe::B;
                (t.early, t.late, t.late_alu) = (3, 1, false);
                uses_as(&mut t, UseKind::Early);
            }
            AluOp::Div | AluOp::Divu | AluOp::Divw | AluOp::Rem | AluOp::Remw => {
                t.pipe = Pipe::B;
                (t.early, t.late, t.late_alu) = (20, 18, false);
                t.unit = Some((Unit::IntDiv, 20));
                uses_as(&mut t, UseKind::Early);
            }
            _ => uses_as(&mut t, UseKind::Late),
        },
        MInst::AluImm { .. } | MInst::FrameAddr { .. } => uses_as(&mut t, UseKind::Late),
        MInst::Mv { rd, .. } if is_float(*rd) => {
            t.pipe = Pipe::B;
            (t.early, t.late, t.late_alu) = (3, 3, false);
            uses_as(&mut t, UseKind::Early);
        }
        MInst::Mv { .. } => uses_as(&mut t, UseKind::Late),
        MInst::Li { imm, .. } => {
            let parts = if crate::mir::fits_imm12(*imm) {
                1
            } else if i32::try_from(*imm).is_ok() {
                2
            } else {
                6
            };
            (t.early, t.late) = (parts, parts);
        }
        MInst::La { .. } => (t.early, t.late) = (2, 2),
        MInst::FAlu { op, .. } => {
            t.pipe = Pipe::B;
            t.late_alu = false;
            match op {
                FAluOp::Add | FAluOp::Sub | FAluOp::Mul => (t.early, t.late) = (5, 5),
                FAluOp::Div => {
                    (t.early, t.late) = (27, 27);
                    t.unit = Some((Unit::FpDiv, 27));
                }
                FAluOp::Sgnjn | FAluOp::Sgnjx => (t.early, t.late) = (3, 3),
            }
            uses_as(&mut t, UseKind::Early);
        }
        MInst::FCmp { .. } => {
            t.pipe = Pipe::B;
            (t.early, t.late, t.late_alu) = (2, 2, false);
            uses_as(&mut t, UseKind::Early);
        }
        MInst::Cvt { op, .. } => {
            t.pipe = Pipe::B;
            t.late_alu = false;
            (t.early, t.late) = match op {
                CvtOp::FcvtWS | CvtOp::FmvXW | CvtOp::FmvXD => (2, 2),
                CvtOp::FcvtSW | CvtOp::FmvWX | CvtOp::FcvtDS => (3, 3),
            };
            uses_as(&mut t, UseKind::Early);
        }
        MInst::Load { op, addr, .. } => {
            t.pipe = Pipe::A;
            t.late_alu = false;
            (t.early, t.late) = if op.class() == crate::mir::RegClass::Float {
                (2, 2)
            } else {
                (3, 1)
            };
            uses_as(&mut t, UseKind::Early);
            t.mem = Some(access(false, *op, addr));
        }
        MInst::Store { op, src, addr } => {
            t.pipe = Pipe::A;
            t.late_alu = false;
            t.uses.push((*src, UseKind::Late));
            if let Base::Reg(r) = addr.base {
                t.uses.push((r, UseKind::Early));
            }
            t.mem = Some(access(true, *op, addr));
        }
        MInst::Branch { .. } => {
            t.pipe = Pipe::B;
            t.control = true;
            uses_as(&mut t, UseKind::Late);
        }
        MInst::Jump { .. } | MInst::Ret { .. } | MInst::TailCall { .. } | MInst::Call { .. } => {
            t.pipe = Pipe::B;
            t.control = true;
            t.late_alu = false;
            uses_as(&mut t, UseKind::Early);
        }
    }
    t.uses.retain(|(r, _)| r.0 != 0);
    i.for_each_def(|r| {
        if r.0 != 0 {
            t.defs.push(r)
        }
    });
    t
}

/// Virtual registers the scoreboard makes room for at its first one: about what
/// a scheduling region of [`crate::schedule::WINDOW`] instructions defines.
const VIRT_CAPACITY: usize = 64;

/// The issue state of the core: the register scoreboard, the dividers, and the
/// cycle being filled.
#[derive(Clone, Debug)]
pub struct Machine {
    /// Cycle each physical register's value is ready for early and late use.
    early: [u64; NUM_PREGS as usize],
    late: [u64; NUM_PREGS as usize],
    /// The same for virtual registers (scheduling before allocation), hashed: a
    /// region touches few of a function's many virtual registers.
    virt: rustc_hash::FxHashMap<u32, (u64, u64)>,
    int_div_free: u64,
    fp_div_free: u64,
    /// Cycle of the last issue and what it holds.
    cycle: u64,
    slots: u32,
    /// Pipe of the first instruction issued in `cycle` (an ALU op leaves the
    /// other pipe to its partner).
    first_pipe: Pipe,
    /// Earliest cycle for the next issue (after a branch bubble).
    next_min: u64,
}

impl Default for Machine {
    fn default() -> Self {
        Machine {
            early: [0; NUM_PREGS as usize],
            late: [0; NUM_PREGS as usize],
            virt: Default::default(),
            int_div_free: 0,
            fp_div_free: 0,
            cycle: 0,
            slots: 0,
            first_pipe: Pipe::Any,
            next_min: 0,
        }
    }
}

impl Machine {
    /// When `r` is ready for an early and for a late use (one lookup for both).
    fn ready(&self, r: Reg) -> (u64, u64) {
        let k = r.0 as usize;
        match (self.early.get(k), self.late.get(k)) {
            (Some(&e), Some(&l)) => (e, l),
            _ => self.virt.get(&r.0).copied().unwrap_or((0, 0)),
        }
    }

    /// The cycle `t` would issue in if it came next, and whether it would run in
    /// the late ALU.
    pub fn issue_cycle(&self, t: &Timing) -> (u64, bool) {
        let mut at = self.cycle.max(self.next_min);
        // Every operand's early and late readiness, and what each operand needs
        // by its kind.
        let mut early_all = 0;
        let mut late_all = 0;
        let mut need = 0;
        for &(r, kind) in &t.uses {
            let (e, l) = self.ready(r);
            early_all = early_all.max(e);
            late_all = late_all.max(l);
            need = need.max(match kind {
                UseKind::Early => e,
                UseKind::Late => l,
            });
        }
        if t.late_alu {
            // The late ALU waits for late readiness only.
            at = at.max(late_all);
        } else {
            at = at.max(need);
        }
        match t.unit {
            Some((Unit::IntDiv, _)) => at = at.max(self.int_div_free),
            Some((Unit::FpDiv, _)) => at = at.max(self.fp_div_free),
            None => {}
        }
        if at == self.cycle && self.slots > 0 {
            let clash = self.slots >= 2 || (t.pipe != Pipe::Any && t.pipe == self.first_pipe);
            if clash {
                at += 1;
            }
        }
        (at, t.late_alu && early_all > at)
    }

    /// Issues `t` next; returns its issue cycle.
    pub fn issue(&mut self, t: &Timing) -> u64 {
        let (at, ran_late) = self.issue_cycle(t);
        if at != self.cycle || self.slots == 0 {
            self.cycle = at;
            self.slots = 0;
            self.first_pipe = t.pipe;
        }
        self.slots += 1;
        match t.unit {
            Some((Unit::IntDiv, busy)) => self.int_div_free = at + busy as u64,
            Some((Unit::FpDiv, busy)) => self.fp_div_free = at + busy as u64,
            None => {}
        }
        for &r in &t.defs {
            let k = r.0 as usize;
            let early = at + if ran_late { 3 } else { t.early as u64 };
            let late = at + t.late as u64;
            if k < self.early.len() {
                self.early[k] = early;
                self.late[k] = late;
            } else {
                if self.virt.capacity() == 0 {
                    // One allocation for a region's registers, not a rehash per
                    // doubling from one.
                    self.virt.reserve(VIRT_CAPACITY);
                }
                self.virt.insert(r.0, (early, late));
            }
        }
        if t.control {
            self.next_min = at + 2;
        }
        at
    }

    /// Makes each `dst` of `copies` ready when its `src` is, all at once: the
    /// copies of a loop's back edge, which the allocator coalesces, so that the
    /// next iteration reads the parameter `dst` when the value `src` is ready.
    pub fn copy_ready(&mut self, copies: &[(Reg, Reg)]) {
        let ready: Vec<(u64, u64)> = copies.iter().map(|&(_, src)| self.ready(src)).collect();
        for (&(dst, _), (early, late)) in copies.iter().zip(ready) {
            let k = dst.0 as usize;
            if k < self.early.len() {
                self.early[k] = early;
                self.late[k] = late;
            } else {
                self.virt.insert(dst.0, (early, late));
            }
        }
    }

    /// The cycle after the last issue (and after a branch's bubble).
    pub fn end(&self) -> u64 {
        (self.cycle + 1).max(self.next_min)
    }

    /// Starts the next iteration of a one-block loop: issue resumes after the
    /// block's end, with the scoreboard (results still in flight) kept.
    pub fn next_iteration(&mut self) {
        let end = self.end();
        self.cycle = end;
        self.slots = 0;
        self.next_min = end;
    }
}

/// Cycles of one iteration of a one-block loop in its steady state: the second
/// iteration, which starts with the first one's results still in flight (as the
/// bench charges a block that branches to its own start).
pub fn steady_state_cycles(insts: &[MInst], is_float: &dyn Fn(Reg) -> bool) -> u64 {
    steady_state_cycles_with_copies(insts, &[], is_float)
}

/// [`steady_state_cycles`] of a loop whose back edge copies each `(dst, src)` of
/// `copies` (before allocation: the edge's copies into the header's parameters,
/// taken as coalesced, so free).
pub fn steady_state_cycles_with_copies(
    insts: &[MInst],
    copies: &[(Reg, Reg)],
    is_float: &dyn Fn(Reg) -> bool,
) -> u64 {
    let timings: Vec<Timing> = insts.iter().map(|i| timing_with(i, is_float)).collect();
    let timings: Vec<&Timing> = timings.iter().collect();
    steady_state_cycles_of(&timings, copies)
}

/// [`steady_state_cycles_with_copies`] of code given by its timings.
pub fn steady_state_cycles_of(timings: &[&Timing], copies: &[(Reg, Reg)]) -> u64 {
    let mut m = Machine::default();
    timings.iter().for_each(|t| {
        m.issue(t);
    });
    m.copy_ready(copies);
    m.next_iteration();
    let start = m.cycle;
    timings.iter().for_each(|t| {
        m.issue(t);
    });
    m.end() - start
}

/// Cycles of straight-line code in the model, starting with every register ready.
pub fn cycles(insts: &[MInst]) -> u64 {
    cycles_with(insts, &|r: Reg| {
        r.is_phys() && r.phys_class() == crate::mir::RegClass::Float
    })
}

/// [`cycles`] of code over virtual registers, whose files `is_float` tells.
pub fn cycles_with(insts: &[MInst], is_float: &dyn Fn(Reg) -> bool) -> u64 {
    let mut m = Machine::default();
    for i in insts {
        m.issue(&timing_with(i, is_float));
    }
    if insts.is_empty() {
        0
    } else {
        m.end()
    }
}

/// [`cycles_with`] of code given by its timings (the cycles depend on nothing
/// else of an instruction).
pub fn cycles_of<'a>(timings: impl IntoIterator<Item = &'a Timing>) -> u64 {
    let mut m = Machine::default();
    let mut any = false;
    for t in timings {
        m.issue(t);
        any = true;
    }
    if any {
        m.end()
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testinsts::{addi, lw, mulw};

    #[test]
    fn cycles_of_timings_are_those_of_the_code() {
        // A load feeding a multiply feeding an address: every prefix, from
        // none, costs by its timings what it costs as code, whatever the
        // offsets of its accesses (a scheduler's reordering rewrites them).
        let code = [
            lw(10, 11, 0),
            mulw(12, 10, 10),
            addi(13, 12, 1),
            lw(14, 13, 8),
            addi(11, 11, 4),
        ];
        let t: Vec<Timing> = code.iter().map(timing).collect();
        for k in 0..=code.len() {
            assert_eq!(cycles_of(&t[..k]), cycles(&code[..k]), "prefix {k}");
        }
        assert_eq!(cycles_of(&[]), 0);
        let moved = [lw(10, 11, -4), mulw(12, 10, 10), addi(13, 12, 1)];
        assert_eq!(cycles_of(&t[..3]), cycles(&moved));
        let refs: Vec<&Timing> = t.iter().collect();
        let is_float = |r: Reg| r.is_phys() && r.phys_class() == crate::mir::RegClass::Float;
        assert_eq!(
            steady_state_cycles_of(&refs, &[]),
            steady_state_cycles(&code, &is_float)
        );
        assert!(cycles_of(&t) > 3, "the chain is timed, not counted");
    }

    #[test]
    fn independent_alu_ops_pair() {
        // Two independent adds issue together; a dependent third waits a cycle.
        assert_eq!(cycles(&[addi(10, 11, 1), addi(12, 13, 1)]), 1);
        assert_eq!(
            cycles(&[addi(10, 11, 1), addi(12, 13, 1), addi(14, 10, 1)]),
            2
        );
    }

    #[test]
    fn back_edge_copies_carry_readiness_into_the_next_iteration() {
        let is_float = |_: Reg| false;
        // `a2 = *a1`, and the back edge copies a2 into a1: chasing a pointer, each
        // load waits for the last one (3 cycles to an address).
        let body = [lw(12, 11, 0)];
        let chase = [(Reg::x(11), Reg::x(12))];
        assert_eq!(steady_state_cycles_with_copies(&body, &chase, &is_float), 3);
        // Without the copy the loads are independent: one a cycle.
        assert_eq!(steady_state_cycles_with_copies(&body, &[], &is_float), 1);
        assert_eq!(steady_state_cycles(&body, &is_float), 1);
    }

    #[test]
    fn loads_do_not_pair_with_loads() {
        assert_eq!(cycles(&[lw(10, 2, 0), lw(11, 2, 4)]), 2);
        assert_eq!(cycles(&[lw(10, 2, 0), addi(11, 12, 1)]), 1);
    }

    #[test]
    fn late_alu_hides_load_latency_but_not_for_addresses() {
        // lw a0; addi a1, a0: the add runs late, one cycle after the load.
        assert_eq!(cycles(&[lw(10, 2, 0), addi(11, 10, 1)]), 2);
        // lw a0; lw a1, 0(a0): the address waits the full 3 cycles.
        assert_eq!(cycles(&[lw(10, 2, 0), lw(11, 10, 0)]), 4);
        // lw a0; addi a1, a0 (late); lw a2, 0(a1): the late add's result reaches an
        // address 3 cycles after it issued.
        assert_eq!(cycles(&[lw(10, 2, 0), addi(11, 10, 1), lw(12, 11, 0)]), 5);
    }

    #[test]
    fn multiply_feeds_an_add_after_one_cycle_and_a_multiply_after_three() {
        assert_eq!(cycles(&[mulw(10, 11, 12), addi(13, 10, 1)]), 2);
        assert_eq!(cycles(&[mulw(10, 11, 12), mulw(13, 10, 10)]), 4);
    }

    #[test]
    fn steady_state_overlaps_iterations() {
        // lw a0, 0(a1); addi a1, a1, 4; mulw a2, a0, a0; addw a3, a3, a2;
        // bnez a1: a fresh block waits for the load (3) and the multiply; in the
        // steady state the scoreboard carries over, and the cost is the same here
        // because every iteration starts its own load first.
        let body = [
            lw(10, 11, 0),
            addi(11, 11, 1),
            mulw(12, 10, 10),
            addi(13, 12, 1),
            MInst::Branch {
                cond: crate::mir::Cond::Ne,
                rs1: Reg::x(11),
                rs2: Reg::x(0),
                target: crate::mir::MBlock(0),
            },
        ];
        let phys = |r: Reg| r.phys_class() == crate::mir::RegClass::Float;
        // lw 0, addi 0, mulw 3, addi 4 (late ALU), bnez 4 (pairs), end 6.
        assert_eq!(cycles(&body), 6);
        assert_eq!(steady_state_cycles(&body, &phys), 6);
        // A loop-carried divide: a fresh block pays one cycle for it, the steady
        // state waits each iteration for the previous quotient (20 cycles).
        let carried = [
            MInst::Alu {
                op: AluOp::Divw,
                rd: Reg::x(14),
                rs1: Reg::x(14),
                rs2: Reg::x(15),
            },
            addi(13, 12, 1),
            MInst::Branch {
                cond: crate::mir::Cond::Ne,
                rs1: Reg::x(11),
                rs2: Reg::x(0),
                target: crate::mir::MBlock(0),
            },
        ];
        // Fresh: divw 0, addi 0 (pairs), bnez 1, end 3.
        assert_eq!(cycles(&carried), 3);
        // Steady: the second divw issues at 20 (its operand and the divider),
        // addi 20, bnez 21, end 23: 23 - 3.
        assert_eq!(steady_state_cycles(&carried, &phys), 20);
    }

    #[test]
    fn disjoint_accesses() {
        let a = timing(&lw(10, 2, 0)).mem.unwrap();
        let b = timing(&lw(10, 2, 4)).mem.unwrap();
        let c = timing(&lw(10, 3, 4)).mem.unwrap();
        assert!(a.disjoint(&b));
        assert!(!b.disjoint(&c), "different bases may alias");
        assert!(!b.disjoint(&b));
    }
}
