//! Reassociation of integer operation chains for a shorter critical path
//! (tree-height reduction), part of scheduling for the U74.
//!
//! Source code sums left to right: `8 * c - n0 - n1 - ... - n7` is a chain of
//! eight dependent subtractions, and no order of issue shortens it. Addition
//! (with subtraction), `and`, `or` and `xor` are associative and commutative
//! in the machine's wrapping arithmetic, so such a chain may be computed as a
//! balanced tree instead, exactly: the same low 32 bits for `addw`/`subw`, the
//! same 64 for `add`/`sub`.
//!
//! Algorithm: in each block, a tree is a root operation together with the
//! operations of the same kind (its group: 32-bit add and subtract, 64-bit add
//! and subtract, `and`, `or`, `xor`) that feed it and are read nowhere else
//! (defined once, used once, in this block, with no call in between). Its
//! leaves are the other operands, each with a sign for the add groups. Each
//! leaf is ready at a cycle the U74 model ([`crate::u74`]) gives by following
//! the block's dependences only, as soon as possible: an instruction issues
//! once its operands are ready and its pipe is free, the pipes taken in the
//! block's order (pipe A a memory operation per cycle, pipe B a multiply, FP
//! operation or branch; the ALU operations' width is the scheduler's to
//! fill), except that a store takes pipe A at its own cycle and a load waits
//! only for the stores it may not pass, as the scheduler after this step may
//! move it ([`Asap`]). The tree is rebuilt by
//! repeatedly combining the two leaves (or partial results) ready first, as a
//! Huffman tree over ready times: optimal for operations of one cycle (Baer
//! and Bovet, "Compilation of Arithmetic Expressions for Parallel
//! Computations", 1968; tree-height reduction, Kuck, "The Structure of
//! Computers and Computations", 1978). Subtracted leaves are summed among
//! themselves and subtracted once, or subtracted from a positive partial
//! result. The new tree replaces the old, at the root's place, only when its
//! root is ready earlier and it uses no more operations.
//!
//! An `addi`/`addiw` is a node of its add group too, its immediate a leaf
//! ready at once: the immediates of a tree are summed (when the sum fits 12
//! bits) and added to the added leaf ready first (`acc = (acc + x) + 3` with
//! `x` late becomes `(acc + 3) + x`, shortening the recurrence through `acc`),
//! right before the operation that reads that sum. When the block already
//! computes that leaf plus that sum, before the tree reads the leaf (the next
//! index `i + 4` of an unrolled loop, for `(i + 3) + x + 1`), the tree reads
//! it instead and adds no immediate (local value numbering of the sum).
//!
//! LLVM's `MachineCombiner` reassociates after instruction selection with the
//! same test (a shorter critical path under the scheduling model); GCC's
//! `reassoc` pass builds such parallel trees when the target's reassociation
//! width is above one. Here it runs before register allocation, on virtual
//! registers, and only when the pre-allocation scheduler does (`-fschedule-insns`):
//! it exists to give the scheduler independent work to pair.

use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::mir::{AluImmOp, AluOp, MFunction, MInst, Reg, RegClass, ZERO};
use crate::u74::{timing_with, MemAccess, Pipe, Timing, UseKind};

/// Trees with more leaves than this are left alone (compile time; longer sums
/// are rare, and a tree of this size is already shallow when rebuilt).
const MAX_LEAVES: usize = 32;

/// At most this many partial results of a tree are alive at once (GCC's
/// reassociation width): the tree keeps both issue slots busy without holding
/// many of its leaves' sums in registers.
const WIDTH: usize = 2;

/// Operations that reassociate with each other.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Group {
    Add32,
    Add64,
    And,
    Or,
    Xor,
}

fn group(op: AluOp) -> Option<Group> {
    match op {
        AluOp::Addw | AluOp::Subw => Some(Group::Add32),
        AluOp::Add | AluOp::Sub => Some(Group::Add64),
        AluOp::And => Some(Group::And),
        AluOp::Or => Some(Group::Or),
        AluOp::Xor => Some(Group::Xor),
        _ => None,
    }
}

/// The operation of `g` combining two terms; `subtract` for the add groups.
fn op_of(g: Group, subtract: bool) -> AluOp {
    match (g, subtract) {
        (Group::Add32, false) => AluOp::Addw,
        (Group::Add32, true) => AluOp::Subw,
        (Group::Add64, false) => AluOp::Add,
        (Group::Add64, true) => AluOp::Sub,
        (Group::And, _) => AluOp::And,
        (Group::Or, _) => AluOp::Or,
        (Group::Xor, _) => AluOp::Xor,
    }
}

/// The second operand of a grouped operation: a register, or the immediate of
/// an `addi` or `addiw`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Operand {
    Reg(Reg),
    Imm(i32),
}

/// A grouped operation at a block position: `(group, rd, rs1, rs2, subtract)`.
fn grouped(i: &MInst) -> Option<(Group, Reg, Reg, Operand, bool)> {
    match *i {
        MInst::Alu { op, rd, rs1, rs2 } => {
            let g = group(op)?;
            let subtract = matches!(op, AluOp::Sub | AluOp::Subw);
            Some((g, rd, rs1, Operand::Reg(rs2), subtract))
        }
        MInst::AluImm { op, rd, rs1, imm } => {
            let g = match op {
                AluImmOp::Addiw => Group::Add32,
                AluImmOp::Addi => Group::Add64,
                _ => return None,
            };
            Some((g, rd, rs1, Operand::Imm(imm), false))
        }
        _ => None,
    }
}

/// A rebuilt tree: its new operations, each with the position it takes, and
/// the positions of the old inner nodes it replaces.
type Rebuilt = (Vec<(usize, MInst)>, Vec<usize>);

/// Per `(operation, register, immediate)`: the positions of the `addi`s or
/// `addiw`s adding that immediate to that register, each with its result
/// (defined nowhere else).
type ImmAdds = FxHashMap<(AluImmOp, Reg, i32), Vec<(usize, Reg)>>;

/// A leaf of a tree: its register, whether it is subtracted, and the position
/// of the operation that reads it.
#[derive(Copy, Clone, Debug)]
struct Leaf {
    reg: Reg,
    negative: bool,
    read_at: usize,
    /// Where the tree read it: the reading operation's position, and which
    /// operand.
    order: (usize, usize),
}

/// Rebalances the operation trees of every block of `mf`; returns how many
/// trees changed.
pub fn run(mf: &mut MFunction) -> usize {
    let (defs, _) = mf.vreg_defs();
    let mut uses = vec![0u32; mf.num_vregs()];
    for &b in &mf.layout {
        for i in &mf.blocks[b].insts {
            i.for_each_use(|r| {
                if r.is_virtual() {
                    uses[r.vindex()] += 1;
                }
            });
        }
    }
    // The classes of the registers the blocks hold now (new ones are integers
    // that no ready time is asked of).
    let classes = mf.vreg_class.clone();
    let mut changed = 0;
    for b in mf.layout.clone() {
        let insts = std::mem::take(&mut mf.blocks[b].insts);
        let (new, n) = rebalance_block(mf, insts, &classes, &defs, &uses);
        mf.blocks[b].insts = new;
        changed += n;
    }
    changed
}

/// Rebalances the trees of one block's `insts`; `classes` are the registers'
/// files, `defs` and `uses` count each
/// virtual register's definitions and reads in the function.
fn rebalance_block(
    mf: &mut MFunction,
    insts: Vec<MInst>,
    classes: &[RegClass],
    defs: &[u32],
    uses: &[u32],
) -> (Vec<MInst>, usize) {
    let n = insts.len();
    let once_defined = |r: Reg| r.is_virtual() && defs[r.vindex()] == 1;
    let once = |r: Reg| once_defined(r) && uses[r.vindex()] == 1;
    // The position of each grouped operation's single reader of the same group
    // in this block, when the operation is a tree's inner node.
    let mut def_at: FxHashMap<Reg, usize> = FxHashMap::default();
    let mut inner_of: Vec<Option<usize>> = vec![None; n];
    // Per grouped operation: the inner node computing each operand.
    let mut feeds: Vec<[Option<usize>; 2]> = vec![[None; 2]; n];
    let mut calls: Vec<usize> = Vec::new();
    let mut def_positions: FxHashMap<Reg, Vec<usize>> = FxHashMap::default();
    for (k, i) in insts.iter().enumerate() {
        if i.is_call() {
            calls.push(k);
        }
        if let Some((g, _, rs1, rs2, _)) = grouped(i) {
            for (x, r) in [Operand::Reg(rs1), rs2].into_iter().enumerate() {
                let Operand::Reg(r) = r else {
                    continue;
                };
                if let Some(&j) = def_at.get(&r) {
                    let same = grouped(&insts[j]).is_some_and(|(h, ..)| h == g);
                    if same && once(r) && Operand::Reg(rs1) != rs2 {
                        inner_of[j] = Some(k);
                        feeds[k][x] = Some(j);
                    }
                }
            }
        }
        // Only virtual registers can be a tree's inner value or leaf (a call's
        // clobbers of physical registers are not looked up).
        i.for_each_def(|r| {
            if r.is_virtual() {
                def_at.insert(r, k);
                def_positions.entry(r).or_default().push(k);
            }
        });
    }
    // The `addi`/`addiw` results that stay where they are (no tree's inner
    // node), by what they add: a tree whose immediate sum is already added to
    // one of its leaves reads that result instead of adding it again.
    let mut imm_adds: ImmAdds = FxHashMap::default();
    for (p, i) in insts.iter().enumerate() {
        if let MInst::AluImm { op, rd, rs1, imm } = *i {
            let kept = inner_of[p].is_none() && rd != rs1 && rs1.is_virtual();
            if kept && matches!(op, AluImmOp::Addi | AluImmOp::Addiw) && once_defined(rd) {
                imm_adds.entry((op, rs1, imm)).or_default().push((p, rd));
            }
        }
    }
    // Ready times as soon as possible, by dependences alone: per register, the
    // cycle its value is early- and late-ready.
    let is_float = |r: Reg| {
        let class = if r.is_virtual() {
            classes[r.vindex()]
        } else {
            r.phys_class()
        };
        class == RegClass::Float
    };
    let mut asap = Asap::default();
    let mut late_at: Vec<u64> = vec![0; n];
    // The rebuilt operations, by the position they take.
    let mut rebuilt: FxHashMap<usize, Vec<MInst>> = FxHashMap::default();
    let mut removed = vec![false; n];
    let mut count = 0;
    for (k, i) in insts.iter().enumerate() {
        if let Some((g, rd, ..)) = grouped(i) {
            if inner_of[k].is_none() {
                if let Some(new) = rebalance_tree(
                    mf,
                    &insts,
                    k,
                    g,
                    rd,
                    &feeds,
                    &calls,
                    &def_positions,
                    &imm_adds,
                    &asap.ready,
                    &late_at,
                ) {
                    for (at, inst) in new.0 {
                        rebuilt.entry(at).or_default().push(inst);
                    }
                    for j in new.1 {
                        removed[j] = true;
                    }
                    removed[k] = true;
                    count += 1;
                }
            }
        }
        late_at[k] = asap.issue(i, &timing_with(i, &is_float));
    }
    if count == 0 {
        return (insts, 0);
    }
    let mut out = Vec::with_capacity(n);
    for (k, i) in insts.into_iter().enumerate() {
        if let Some(new) = rebuilt.remove(&k) {
            out.extend(new);
        }
        if !removed[k] {
            out.push(i);
        }
    }
    (out, count)
}

/// How many of the latest stores a load is compared with; it waits for the
/// older ones all together (the walk stays linear in a long block).
const STORES_COMPARED: usize = 64;

/// Ready times of a block's values as soon as their operands and the pipes
/// allow: each instruction issues at or after its operands are ready and after
/// the previous user of its pipe in the block's order (one memory operation
/// per cycle on pipe A, one multiply, FP operation or branch on pipe B). Stores
/// are out of that order: each takes pipe A at its own cycle, and a load waits
/// only for the earlier stores and calls it may not pass (the scheduler's
/// memory dependences: accesses through one base value to disjoint bytes, or
/// of two alias regions, are independent). Ordering every pipe freely was
/// measured: multiplies that cannot all go first then look early.
#[derive(Default)]
struct Asap {
    /// Per register: the cycles its value is early- and late-ready.
    ready: FxHashMap<Reg, (u64, u64)>,
    /// Per pipe (A, B): the first cycle it is free, in the block's order
    /// (stores apart).
    pipe_free: [u64; 2],
    /// The latest stores: the access, the version of its base register (how
    /// many times it was written before), and the cycle it issues.
    stores: std::collections::VecDeque<(MemAccess, u32, u64)>,
    /// The cycle after which a load may pass every store and call older than
    /// those kept.
    fence: u64,
    /// Per register: how many times the block wrote it so far.
    version: FxHashMap<Reg, u32>,
}

impl Asap {
    /// Issues `i` (of timing `t`) at its earliest cycle; returns the cycle its
    /// result is late-ready.
    fn issue(&mut self, i: &MInst, t: &Timing) -> u64 {
        let mut at = 0;
        let mut early_all = 0;
        for &(r, kind) in &t.uses {
            let (e, l) = self.ready.get(&r).copied().unwrap_or((0, 0));
            early_all = early_all.max(e);
            at = at.max(match kind {
                UseKind::Early if !t.late_alu => e,
                _ => l,
            });
        }
        let base_version = |a: &MemAccess, version: &FxHashMap<Reg, u32>| {
            a.base.map_or(0, |b| version.get(&b).copied().unwrap_or(0))
        };
        if let Some(m) = t.mem.as_ref().filter(|m| !m.store) {
            let v = base_version(m, &self.version);
            at = at.max(self.fence);
            for (s, sv, cycle) in &self.stores {
                let any = crate::mir::Addr::ANY_REGION;
                let regions = s.region != any && m.region != any && s.region != m.region;
                let apart = s.disjoint(m) && (*sv == v || regions || s.sym_disjoint(m));
                if !apart {
                    at = at.max(cycle + 1);
                }
            }
        }
        // Stores take pipe A at their own cycle, out of the order: the loads
        // after them go first when they may pass them.
        let store = t.mem.as_ref().is_some_and(|m| m.store);
        match t.pipe {
            Pipe::A if !store => {
                at = at.max(self.pipe_free[0]);
                self.pipe_free[0] = at + 1;
            }
            Pipe::B => {
                at = at.max(self.pipe_free[1]);
                self.pipe_free[1] = at + 1;
            }
            _ => {}
        }
        let ran_late = t.late_alu && early_all > at;
        if i.is_call() {
            self.fence = self.fence.max(at + 1);
        }
        if let Some(m) = t.mem.as_ref().filter(|m| m.store) {
            if self.stores.len() == STORES_COMPARED {
                if let Some((_, _, cycle)) = self.stores.pop_front() {
                    self.fence = self.fence.max(cycle + 1);
                }
            }
            let v = base_version(m, &self.version);
            self.stores.push_back((*m, v, at));
        }
        let early = at + if ran_late { 3 } else { t.early as u64 };
        let late = at + t.late as u64;
        for &d in &t.defs {
            self.ready.insert(d, (early, late));
            *self.version.entry(d).or_default() += 1;
        }
        late
    }
}

/// The rebuilt operations of the tree rooted at position `root` (group `g`,
/// result `rd`), each with the position it takes (where its operands first
/// exist: a partial sum of values read early is computed early, so those
/// values' lifetimes end where they did), and the positions of its old inner
/// nodes, when rebuilding
/// makes its result ready earlier; `ready` holds the ready times of the
/// registers as the root reads them, `late_at` each earlier position's result.
#[allow(clippy::too_many_arguments)]
fn rebalance_tree(
    mf: &mut MFunction,
    insts: &[MInst],
    root: usize,
    g: Group,
    rd: Reg,
    feeds: &[[Option<usize>; 2]],
    calls: &[usize],
    def_positions: &FxHashMap<Reg, Vec<usize>>,
    imm_adds: &ImmAdds,
    ready: &FxHashMap<Reg, (u64, u64)>,
    late_at: &[u64],
) -> Option<Rebuilt> {
    // Gather the leaves and inner nodes, and the root's ready time as the
    // tree stands.
    let mut leaves: Vec<Leaf> = Vec::new();
    let mut inner: Vec<usize> = Vec::new();
    let mut stack = vec![(root, false)];
    let mut ops = 0usize;
    // The sum of the immediates of `addi`s in the tree, each with its sign.
    let mut constant: Option<i64> = None;
    while let Some((k, negative)) = stack.pop() {
        let (_, _, rs1, rs2, subtract) = grouped(&insts[k])?;
        ops += 1;
        let rs2 = match rs2 {
            Operand::Reg(r) => r,
            Operand::Imm(c) => {
                let c = if negative {
                    -i64::from(c)
                } else {
                    i64::from(c)
                };
                constant = Some(constant.unwrap_or(0).wrapping_add(c));
                ZERO
            }
        };
        let operands = [(rs1, negative), (rs2, negative ^ subtract)];
        for (x, (r, neg)) in operands.into_iter().enumerate() {
            match feeds[k][x] {
                Some(j) => {
                    inner.push(j);
                    stack.push((j, neg));
                }
                None => leaves.push(Leaf {
                    reg: r,
                    negative: neg,
                    read_at: k,
                    order: (k, x),
                }),
            }
        }
        if leaves.len() > MAX_LEAVES {
            return None;
        }
    }
    if inner.is_empty() {
        return None;
    }
    // `zero` adds nothing to a sum, an `or` or a `xor`: it stays a leaf only
    // as the first term of a difference with nothing to subtract from
    // (`0 - a - b`).
    if g != Group::And && leaves.iter().any(|l| l.reg != ZERO && !l.negative) {
        leaves.retain(|l| l.reg != ZERO);
    }
    if leaves.len() < 2 {
        return None;
    }
    let first = *inner.iter().min()?;
    if calls.iter().any(|&c| c > first && c < root) {
        return None;
    }
    // Whether `r` is defined at a position in `from..to`.
    let defined_within = |r: Reg, from: usize, to: usize| {
        def_positions
            .get(&r)
            .is_some_and(|ps| ps.iter().any(|&p| p >= from && p < to))
    };
    // Every leaf must hold, at the root, the value it held where it was read.
    for l in &leaves {
        if l.reg == ZERO {
            continue;
        }
        if !l.reg.is_virtual() || defined_within(l.reg, l.read_at, root) {
            return None;
        }
    }
    // The root's ready time as the tree stands: one cycle after its operands.
    let operand = |x: usize, r: Reg| match feeds[root][x] {
        Some(j) => late_at[j],
        None => ready.get(&r).map_or(0, |v| v.1),
    };
    let (_, _, rs1, rs2, _) = grouped(&insts[root])?;
    let old = match rs2 {
        Operand::Reg(rs2) => operand(0, rs1).max(operand(1, rs2)),
        Operand::Imm(_) => operand(0, rs1),
    } + 1;
    // Huffman over ready times.
    let late = |r: Reg| ready.get(&r).map_or(0, |v| v.1);
    // Ties go to the term the tree read first, so that a tree whose leaves are
    // all ready keeps its order (and the registers' lifetimes with it).
    type Key = Reverse<(u64, (usize, usize), usize)>;
    let mut pending: BinaryHeap<Key> = BinaryHeap::new();
    let mut partials: BinaryHeap<Key> = BinaryHeap::new();
    // Terms: (register, negative).
    let mut terms: Vec<(Reg, bool)> = Vec::new();
    // The immediates' sum is added first, to the added leaf ready first (tree
    // height reduction counts it as a leaf ready at once): `(x + y) + 5` with
    // `x` late becomes `x + (y + 5)`.
    let mut with_constant: Option<(usize, i32)> = None;
    if let Some(c) = constant {
        let c = if g == Group::Add32 {
            c as i32 as i64
        } else {
            c
        };
        if !(-2048..2048).contains(&c) {
            return None;
        }
        let op = match g {
            Group::Add32 => AluImmOp::Addiw,
            _ => AluImmOp::Addi,
        };
        // An added leaf whose sum with the immediates the block computes
        // already, before the tree reads the leaf: that sum (ready first among
        // such) becomes the leaf, and the immediates cost no operation.
        let computed = (0..leaves.len())
            .filter(|&k| !leaves[k].negative && leaves[k].reg != ZERO)
            .filter_map(|k| {
                let l = leaves[k];
                let ps = imm_adds.get(&(op, l.reg, c as i32))?;
                let &(_, sum) = ps
                    .iter()
                    .rev()
                    .find(|&&(p, _)| p < l.read_at && !defined_within(l.reg, p + 1, l.read_at))?;
                Some((k, sum))
            })
            .min_by_key(|&(k, sum)| (late(sum), leaves[k].order));
        if let Some((k, sum)) = computed {
            leaves[k].reg = sum;
        } else if c != 0 {
            let first = (0..leaves.len())
                .filter(|&k| !leaves[k].negative && leaves[k].reg != ZERO)
                .min_by_key(|&k| (late(leaves[k].reg), leaves[k].order))?;
            with_constant = Some((first, c as i32));
        }
    }
    for (k, l) in leaves.iter().enumerate() {
        let time = late(l.reg) + u64::from(with_constant.is_some_and(|(f, _)| f == k));
        pending.push(Reverse((time, l.order, terms.len())));
        terms.push((l.reg, l.negative));
    }
    let signed = matches!(g, Group::Add32 | Group::Add64);
    // Per new operation: its term, the two it combines, whether it subtracts.
    let mut combined: Vec<(usize, usize, usize, bool)> = Vec::new();
    // Per term: where its value exists first (a leaf: where the tree read it;
    // a partial result: where both its terms exist).
    let mut exists_at: Vec<usize> = leaves.iter().map(|l| l.read_at).collect();
    let mut root_time = 0;
    while pending.len() + partials.len() > 1 {
        // The two terms ready first; but two leaves start another partial
        // result only while fewer than `WIDTH` are alive.
        let earliest = |p: &BinaryHeap<Key>, q: &BinaryHeap<Key>| match (p.peek(), q.peek()) {
            (Some(x), Some(y)) => x >= y,
            (Some(_), None) => true,
            _ => false,
        };
        let Reverse((ta, oa, a)) = if earliest(&pending, &partials) {
            pending.pop()?
        } else {
            partials.pop()?
        };
        let full = a < leaves.len() && partials.len() >= WIDTH;
        let Reverse((tb, ob, b)) = if full || !earliest(&pending, &partials) {
            partials.pop()?
        } else {
            pending.pop()?
        };
        let (na, nb) = (terms[a].1, terms[b].1);
        let (first, second, subtract, negative) = match (signed, na, nb) {
            (false, ..) | (true, false, false) => (a, b, false, false),
            (true, true, true) => (a, b, false, true),
            (true, false, true) => (a, b, true, false),
            (true, true, false) => (b, a, true, false),
        };
        if pending.is_empty() && partials.is_empty() && negative {
            return None;
        }
        let t = ta.max(tb) + 1;
        root_time = t;
        combined.push((terms.len(), first, second, subtract));
        partials.push(Reverse((t, oa.max(ob), terms.len())));
        exists_at.push(exists_at[a].max(exists_at[b]));
        terms.push((rd, negative));
    }
    let added = usize::from(with_constant.is_some());
    if combined.len() + added > ops || root_time >= old {
        return None;
    }
    // Registers for the partial results; the last operation writes the root's.
    let last = combined.len() - 1;
    for (k, &(term, ..)) in combined.iter().enumerate() {
        if k != last {
            terms[term].0 = mf.new_vreg(RegClass::Int);
        }
    }
    let op_imm = match g {
        Group::Add32 => AluImmOp::Addiw,
        _ => AluImmOp::Addi,
    };
    // The immediate's sum goes right before the operation that reads it (it is
    // ready in time there, and holds no register longer).
    let mut pre = with_constant.map(|(k, imm)| {
        let leaf = terms[k].0;
        terms[k].0 = mf.new_vreg(RegClass::Int);
        let (op, rd, rs1) = (op_imm, terms[k].0, leaf);
        (k, MInst::AluImm { op, rd, rs1, imm })
    });
    let mut new = Vec::with_capacity(combined.len() + added);
    for (k, &(term, a, b, subtract)) in combined.iter().enumerate() {
        let at = if k == last { root } else { exists_at[term] };
        if let Some((_, inst)) = pre.take_if(|(l, _)| *l == a || *l == b) {
            new.push((at, inst));
        }
        let inst = MInst::Alu {
            op: op_of(g, subtract),
            rd: terms[term].0,
            rs1: terms[a].0,
            rs2: terms[b].0,
        };
        new.push((at, inst));
    }
    Some((new, inner))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse::parse_function;
    use crate::text::print::print_function;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Runs the straight-line code of block 0 from `args` in `a0`.. (integer
    /// operations of the pass's groups, shifts, copies), returning `a0`.
    fn eval(mf: &MFunction, args: &[u64]) -> u64 {
        let mut regs: FxHashMap<Reg, u64> = FxHashMap::default();
        for (k, &a) in args.iter().enumerate() {
            regs.insert(Reg::x(10 + k as u32), a);
        }
        let get = |regs: &FxHashMap<Reg, u64>, r: Reg| if r == ZERO { 0 } else { regs[&r] };
        let sext = |x: u64| x as u32 as i32 as i64 as u64;
        for i in &mf.blocks[mf.layout[0]].insts {
            match *i {
                MInst::Mv { rd, rs } => {
                    let v = get(&regs, rs);
                    regs.insert(rd, v);
                }
                MInst::Alu { op, rd, rs1, rs2 } => {
                    let (a, b) = (get(&regs, rs1), get(&regs, rs2));
                    let v = match op {
                        AluOp::Addw => sext(a.wrapping_add(b)),
                        AluOp::Subw => sext(a.wrapping_sub(b)),
                        AluOp::Add => a.wrapping_add(b),
                        AluOp::Sub => a.wrapping_sub(b),
                        AluOp::And => a & b,
                        AluOp::Or => a | b,
                        AluOp::Xor => a ^ b,
                        AluOp::Mulw => sext(a.wrapping_mul(b)),
                        other => panic!("not evaluated: {other:?}"),
                    };
                    regs.insert(rd, v);
                }
                MInst::AluImm { op, rd, rs1, imm } => {
                    let a = get(&regs, rs1).wrapping_add(imm as i64 as u64);
                    let v = match op {
                        AluImmOp::Addiw => sext(a),
                        AluImmOp::Addi => a,
                        other => panic!("not evaluated: {other:?}"),
                    };
                    regs.insert(rd, v);
                }
                MInst::Ret { .. } => break,
                ref other => panic!("not evaluated: {other:?}"),
            }
        }
        regs[&Reg::x(10)]
    }

    /// Runs the pass on `text`, checking that the result computes what the
    /// input does from each of `args`; returns the trees changed and the
    /// function.
    fn run_checked(text: &str, args: &[&[u64]]) -> (usize, MFunction) {
        let before = parse_function(text).expect("parses");
        let mut mf = parse_function(text).expect("parses");
        let n = run(&mut mf);
        for a in args {
            assert_eq!(eval(&mf, a), eval(&before, a), "{}", print_function(&mf));
        }
        (n, mf)
    }

    /// A chain of `ops` over eight arguments, each step reading the previous
    /// result on one side and an argument (or `zero`) on the other.
    fn chain(rng: &mut ChaCha8Rng, ops: &[&str]) -> String {
        let mut text = String::from("function f local\n  int %v0..%v40\nbb0:\n");
        for k in 0..8 {
            text += &format!("  mv %v{k}, a{k}\n");
        }
        let mut prev = "%v0".to_string();
        let steps = rng.random_range(2..12);
        for s in 0..steps {
            let op = ops[rng.random_range(0..ops.len())];
            let leaf = match rng.random_range(0..9) {
                8 => "zero".to_string(),
                k => format!("%v{k}"),
            };
            let rd = format!("%v{}", 10 + s);
            text += &if op.ends_with('i') || op.ends_with("iw") {
                let imm = match rng.random_range(0..4) {
                    0 => -2048,
                    1 => 2047,
                    _ => rng.random_range(-2048..2048),
                };
                format!("  {op} {rd}, {prev}, {imm}\n")
            } else if rng.random_bool(0.5) {
                format!("  {op} {rd}, {prev}, {leaf}\n")
            } else {
                format!("  {op} {rd}, {leaf}, {prev}\n")
            };
            prev = rd;
        }
        text + &format!("  mv a0, {prev}\n  ret a0\nend\n")
    }

    #[test]
    fn rebuilt_trees_compute_the_same_values() {
        let groups: [&[&str]; 7] = [
            &["addw", "subw"],
            &["add", "sub"],
            &["addw", "subw", "addiw"],
            &["add", "sub", "addi"],
            &["and"],
            &["or"],
            &["xor"],
        ];
        let edges = [
            0,
            1,
            u64::MAX,
            i32::MAX as u64,
            i32::MIN as i64 as u64,
            1 << 31,
            0x8000_0000_0000_0000,
            0xdead_beef_0000_0001,
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let mut changed = 0;
        for _ in 0..400 {
            let ops = groups[rng.random_range(0..groups.len())];
            let text = chain(&mut rng, ops);
            let before = parse_function(&text).expect("parses");
            let mut after = parse_function(&text).expect("parses");
            if run(&mut after) > 0 {
                changed += 1;
            }
            crate::verify::verify(&after, crate::verify::Stage::Virtual)
                .unwrap_or_else(|e| panic!("{e:?}\n{}", print_function(&after)));
            for trial in 0..40 {
                let args: Vec<u64> = (0..8)
                    .map(|_| match trial % 3 {
                        0 => edges[rng.random_range(0..edges.len())],
                        _ => rng.random::<u64>(),
                    })
                    .collect();
                assert_eq!(
                    eval(&before, &args),
                    eval(&after, &args),
                    "{text}\nbecame\n{}",
                    print_function(&after)
                );
            }
        }
        // Most chains of three or more terms ready together are rebuilt.
        assert!(changed > 200, "only {changed} of 400 chains rebuilt");
    }

    #[test]
    fn a_chain_of_registers_becomes_two_chains_of_half_the_depth() {
        let text = "function f local
  int %v0..%v20
bb0:
  mv %v0, a0
  mv %v1, a1
  mv %v2, a2
  mv %v3, a3
  mv %v4, a4
  mv %v5, a5
  mv %v6, a6
  mv %v7, a7
  xor %v10, %v0, %v1
  xor %v11, %v10, %v2
  xor %v12, %v11, %v3
  xor %v13, %v12, %v4
  xor %v14, %v13, %v5
  xor %v15, %v14, %v6
  xor %v16, %v15, %v7
  mv a0, %v16
  ret a0
end
";
        let mut mf = parse_function(text).expect("parses");
        let before = crate::u74::cycles_with(&mf.blocks[mf.layout[0]].insts, &|_| false);
        assert_eq!(run(&mut mf), 1);
        let insts = &mf.blocks[mf.layout[0]].insts;
        let after = crate::u74::cycles_with(insts, &|_| false);
        assert!(after < before, "{before} -> {after} cycles");
        // Seven operations still, the root's result where it was.
        let xors = insts
            .iter()
            .filter(|i| matches!(i, MInst::Alu { op: AluOp::Xor, .. }))
            .count();
        assert_eq!(xors, 7);
        assert!(matches!(insts[insts.len() - 3], MInst::Alu { rd, .. } if rd == Reg::virt(16)));
    }

    /// `((0 - a) op b) op c` over the first three arguments, returned in `a0`.
    fn negated_then(op: &str) -> String {
        format!(
            "function f local
  int %v0..%v20
bb0:
  mv %v0, a0
  mv %v1, a1
  mv %v2, a2
  subw %v10, zero, %v0
  {op} %v11, %v10, %v1
  {op} %v12, %v11, %v2
  mv a0, %v12
  ret a0
end
"
        )
    }

    #[test]
    fn zero_is_no_leaf_of_a_sum_with_something_to_subtract_from() {
        // `(0 - a) + b + c`: rebuilt as `(b - a) + c`, two operations, none
        // reading `zero`; `0 - a - b` keeps `zero` as its first term.
        let sum = &negated_then("addw");
        let mut mf = parse_function(sum).expect("parses");
        let before = parse_function(sum).expect("parses");
        assert_eq!(run(&mut mf), 1);
        let alu: Vec<&MInst> = mf.blocks[mf.layout[0]]
            .insts
            .iter()
            .filter(|i| matches!(i, MInst::Alu { .. }))
            .collect();
        assert_eq!(alu.len(), 2, "{}", print_function(&mf));
        let reads_zero =
            |i: &&MInst| matches!(i, MInst::Alu { rs1, rs2, .. } if *rs1 == ZERO || *rs2 == ZERO);
        assert!(!alu.iter().any(reads_zero), "{}", print_function(&mf));
        for args in [[5, 7, 11], [u64::MAX, 0, 1 << 31], [1, i32::MAX as u64, 3]] {
            assert_eq!(eval(&mf, &args), eval(&before, &args));
        }
        let negation = &negated_then("subw");
        let mut mf = parse_function(negation).expect("parses");
        let before = parse_function(negation).expect("parses");
        run(&mut mf);
        for args in [[5, 7, 11], [u64::MAX, 0, 1 << 31]] {
            assert_eq!(eval(&mf, &args), eval(&before, &args));
        }
    }

    #[test]
    fn an_immediate_joins_the_leaf_ready_first() {
        // `(x * y + z) + 5`: the sum waits for the multiply, the immediate need
        // not. It becomes `x * y + (z + 5)`: two operations still, the root one
        // step after the multiply instead of two.
        let text = "function f local
  int %v0..%v20
bb0:
  mv %v0, a0
  mv %v1, a1
  mv %v2, a2
  mulw %v10, %v0, %v1
  addw %v11, %v10, %v2
  addiw %v12, %v11, 5
  mulw %v14, %v12, %v0
  mv a0, %v14
  ret a0
end
";
        let rebuilt = |text: &str| {
            run_checked(
                text,
                &[
                    &[5, 7, 11],
                    &[u64::MAX, 3, 1 << 31],
                    &[1, i32::MAX as u64, 3],
                ],
            )
        };
        let (n, mf) = rebuilt(text);
        assert_eq!(n, 1);
        let insts = &mf.blocks[mf.layout[0]].insts;
        assert!(
            matches!(insts[..], [.., MInst::AluImm { op: AluImmOp::Addiw, rs1, imm: 5, .. }, MInst::Alu { op: AluOp::Addw, rd, .. }, _, _, _]
                if rs1 == Reg::virt(2) && rd == Reg::virt(12)),
            "{}",
            print_function(&mf)
        );
        // Two immediates fold into one: three operations become two.
        let (n, mf) = rebuilt(&text.replace(
            "addiw %v12, %v11, 5",
            "addiw %v13, %v11, 2\n  addiw %v12, %v13, 3",
        ));
        assert_eq!(n, 1);
        let imm =
            |i: &MInst| matches!(i, MInst::AluImm { rs1, imm: 5, .. } if *rs1 == Reg::virt(2));
        assert!(
            mf.blocks[mf.layout[0]].insts.iter().any(imm),
            "{}",
            print_function(&mf)
        );
        // Two leaves ready together: the immediate joins the one read first.
        let (n, mf) = rebuilt(&text.replace("mulw %v10, %v0, %v1", "addw %v10, %v0, %v1"));
        assert_eq!(n, 1);
        let joins_first =
            |i: &MInst| matches!(i, MInst::AluImm { rs1, imm: 5, .. } if *rs1 == Reg::virt(0));
        let insts = &mf.blocks[mf.layout[0]].insts;
        assert!(insts.iter().any(joins_first), "{}", print_function(&mf));
        // Subtracted, `z` cannot take the immediate; immediates summing past
        // 12 bits stay where they are.
        for (from, to) in [
            (
                "addw %v11, %v10, %v2",
                "subw %v11, zero, %v2\n  subw %v13, %v11, %v10",
            ),
            (
                "addiw %v12, %v11, 5",
                "addiw %v13, %v11, 2047\n  addiw %v12, %v13, 1",
            ),
        ] {
            let text = text
                .replace(from, to)
                .replace("addiw %v12, %v11, 5", "addiw %v12, %v13, 5");
            let (_, mf) = rebuilt(&text);
            let joined = mf.blocks[mf.layout[0]]
                .insts
                .iter()
                .filter(|i| matches!(i, MInst::AluImm { rs1, .. } if *rs1 == Reg::virt(2)))
                .count();
            assert_eq!(joined, 0, "{}", print_function(&mf));
        }
    }

    #[test]
    fn a_tree_reads_a_sum_the_block_computes_already() {
        // `((x + 3) + y) + 1` where the block has `x + 4` already (the next
        // index of an unrolled loop): the tree becomes `(x + 4) + y`, one
        // operation, and no second `x + 4`.
        let text = "function f local
  int %v0..%v20
bb0:
  mv %v0, a0
  mv %v1, a1
  addiw %v10, %v0, 4
  addiw %v11, %v0, 3
  addw %v12, %v11, %v1
  addiw %v13, %v12, 1
  mulw %v14, %v13, %v10
  mv a0, %v14
  ret a0
end
";
        let run_on = |text: &str| {
            let (n, mf) = run_checked(
                text,
                &[&[5, 7], &[u64::MAX, 3], &[i32::MAX as u64, 1 << 31]],
            );
            assert_eq!(n, 1);
            mf
        };
        let mf = run_on(text);
        let insts = &mf.blocks[mf.layout[0]].insts;
        let adds_four = |i: &&MInst| matches!(i, MInst::AluImm { imm: 4, .. });
        assert_eq!(
            insts.iter().filter(adds_four).count(),
            1,
            "{}",
            print_function(&mf)
        );
        assert!(
            insts.iter().any(
                |i| matches!(*i, MInst::Alu { op: AluOp::Addw, rd, rs1, rs2 }
                if rd == Reg::virt(13) && [rs1, rs2].contains(&Reg::virt(10)))
            ),
            "{}",
            print_function(&mf)
        );
        // Computed only after the tree reads `x`, the sum is not there to be
        // read: the tree adds its own.
        let late = text
            .replace("  addiw %v10, %v0, 4\n", "")
            .replace("  addw %v12", "  addiw %v10, %v0, 4\n  addw %v12");
        let mf = run_on(&late);
        let insts = &mf.blocks[mf.layout[0]].insts;
        assert_eq!(
            insts.iter().filter(adds_four).count(),
            2,
            "{}",
            print_function(&mf)
        );
    }

    #[test]
    fn a_load_past_a_store_to_other_bytes_is_ready_early() {
        // `(l + x) + y` with `l` late (a chain of multiplies) and stored before
        // `x` and `y` are loaded: the loads may pass the store when they read
        // other bytes through the same base, and are then ready long before
        // `l`: the tree becomes `(x + y) + l`. When the store may overlap a
        // load (the same bytes, or another base), the load waits for it, is
        // ready after `l`, and the tree stays (an 8-byte store over both).
        let text = "function f local
  int %v0..%v20
bb0:
  mv %v0, a0
  mv %v1, a1
  mulw %v10, %v1, %v1
  mulw %v11, %v10, %v10
  mulw %v12, %v11, %v11
  sw %v12, 0(%v0)
  lw %v13, 4(%v0)
  lw %v14, 8(%v0)
  addw %v15, %v12, %v13
  addw %v16, %v15, %v14
  mv a0, %v16
  ret a0
end
";
        let rebuilt = |text: &str| run(&mut parse_function(text).expect("parses"));
        assert_eq!(rebuilt(text), 1);
        assert_eq!(
            rebuilt(&text.replace("sw %v12, 0(%v0)", "sd %v12, 4(%v0)")),
            0
        );
        assert_eq!(
            rebuilt(&text.replace("sw %v12, 0(%v0)", "sw %v12, 0(%v1)")),
            0
        );
        // The base written between the store and the loads: another address.
        let moved = "sw %v12, 0(%v0)\n  addi %v0, %v0, -8";
        assert_eq!(rebuilt(&text.replace("sw %v12, 0(%v0)", moved)), 0);
    }
}
