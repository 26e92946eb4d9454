//! Tree-height reduction: a chain of one associative, commutative integer operation
//! (`add`, `mul`, `and`, `or`, `xor`) in one block is rebuilt as the tree that
//! finishes earliest, so its operations can issue side by side.
//!
//! Source order leaves sums as left-leaning chains: `a + b + c + d` waits for `a + b`,
//! then for that plus `c`; on a core that issues two instructions per cycle,
//! `(a + b) + (c + d)` takes two steps instead of three, and a sum of eight terms
//! three instead of seven. Integer operations wrap modulo 2^32 (2^64), so any
//! grouping and order of the operands gives the same value exactly; floating-point
//! operations are left alone.
//!
//! The algorithm is tree-height reduction (Baer and Bovet, "Compilation of Arithmetic
//! Expressions for Parallel Computations", 1968; Kuck, "The Structure of Computers and
//! Computations", 1978) in the form GCC's `tree-ssa-reassoc` (`rewrite_expr_tree_
//! parallel`, with a reassociation width) and LLVM's `MachineCombiner` apply it,
//! driven by when each operand is ready:
//!
//! 1. Each value of a block gets an estimated ready time: 0 for values from other
//!    blocks, else its instruction's issue cycle (its operands ready, and for loads
//!    and stores a free memory pipe, one access per cycle) plus its latency to the
//!    tree's operation, after the U74 the bench models ([`latencies`]); a load
//!    waits only for the earlier stores that may write what it reads (same base,
//!    overlapping bytes, by [`PointerOffsets`]), as the machine scheduler lets it
//!    pass the others ([`MemoryPipe`]); a load read
//!    by an addition is ready a cycle after it issues, because the core runs the
//!    addition late instead of stalling; so a sum of loads, one loaded per cycle, is
//!    already as fast as a chain, and what gains is a sum whose terms are ready
//!    together (registers, values from the previous iteration).
//! 2. A root is an operation whose result is not just the one operand of the same
//!    operation in the same block. Its tree grows through operands that the same
//!    operation in the same block computes and that have no other use; the rest are
//!    leaves (at most [`MAX_LEAVES`]).
//! 3. The two values ready first are combined, the result (ready one step after the
//!    later of the two) goes back among them, until one value is left (a Huffman
//!    merge), with at most two partial results alive at once (three for
//!    multiplications): GCC's reassociation width, so the tree keeps the issue slots
//!    busy without holding half its leaves' sums in registers. When that finishes
//!    earlier than the tree as written, and the tree as written finishes
//!    after the block could have issued all its instructions (two per cycle: a
//!    shorter chain would otherwise not shorten the block, and moving its operations
//!    only disturbs the schedule around it), the new operations replace the old
//!    ones (the root keeps its result value). A leaf that is the block's parameter
//!    fed by the tree's own result around a loop (`s = s + ...`) counts as ready
//!    last, so the loop's recurrence through it is one operation long, unless the
//!    block takes at least as many cycles to issue as a longer recurrence would:
//!    then the leaf counts as ready at the start, and the tree (as written, or
//!    rebuilt) is accepted when its path from the leaf fits in those cycles, so
//!    the sum need not wait for its slowest term before the carried value joins.
//!
//! A chain of subtractions `x - a - b - c` is first rewritten as `x - (a + b + c)`
//! ([`subtract_sums`]), so that its subtrahends form such a sum.
//!
//! It runs last in the pipeline, after reassociation and linear forms have chosen the
//! operands: they canonicalise sums into chains that this pass would otherwise undo.

use crate::analysis::pointer_offsets::{Offset, PointerOffsets};
use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::FunctionTransform;
use ir::{BinOp, Block, Function, Inst, InstKind, Type, Value, ValueDef};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// The tree-height reduction pass.
pub struct Balance;

impl FunctionTransform for Balance {
    const NAME: &'static str = "balance";
    const DESCRIPTION: &'static str = "tree-height reduction: chains of integer add/mul/and/or/xor rebuilt as the tree that finishes first";
    /// Rewrites instructions only: no block or edge changes.
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
        run(f) > 0
    }
}

/// Most leaves of a tree rebuilt (bounds the work per root).
pub const MAX_LEAVES: usize = 64;

/// Rebuilds the chains of `f` that a balanced tree finishes earlier; returns how many.
pub fn run(f: &mut Function) -> usize {
    let mut rebuilt = 0;
    let offsets = PointerOffsets::compute(f);
    let blocks: Vec<Block> = f.layout.blocks().collect();
    for b in blocks {
        rebuilt += subtract_sums(f, b);
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        // Two instructions issue per cycle: a chain that finishes within the cycles
        // the block needs to issue anyway is not what limits the block, and
        // rebuilding it would only disturb the schedule around it.
        let issue_bound = (insts.len() / 2) as u32;
        let mut block = BlockState {
            timing: FxHashMap::default(),
            memory: MemoryPipe::new(&offsets),
            pos: insts.iter().enumerate().map(|(k, &i)| (i, k)).collect(),
            run_end: FxHashMap::default(),
            seq: 0,
        };
        for i in insts {
            if is_root(f, i, b) {
                if let Some(tree) = Tree::of(f, i, b) {
                    let alu = is_alu_op(tree.op);
                    let ready = |v: Value| match tree.carried(f, b, v) {
                        true => CARRIED,
                        false => block.ready(v, alu),
                    };
                    let (mut plan, mut done) = tree.plan(&ready);
                    let mut finish = tree.finish(f, &ready);
                    let carried: Vec<usize> = (0..tree.leaves.len())
                        .filter(|&k| tree.carried(f, b, tree.leaves[k]))
                        .collect();
                    if !carried.is_empty() {
                        // The carried leaves as ready as they are: in a loop whose
                        // trip takes at least `issue_bound` cycles anyway, a
                        // recurrence no longer than that costs nothing, and
                        // combining the carried values early ends the tree sooner
                        // after its slowest leaf.
                        let now = |v: Value| block.ready(v, alu);
                        let fits = |ops: u32| ops * tree.step() <= issue_bound;
                        let (early_plan, early_done) = tree.plan(&now);
                        if carried
                            .iter()
                            .all(|&c| fits(tree.plan_depth(&early_plan, c)))
                        {
                            let last_done = tree.plan_finish(&plan, &now);
                            if early_done < last_done {
                                (plan, done) = (early_plan, early_done);
                            } else {
                                done = last_done;
                            }
                            if carried.iter().all(|&c| fits(tree.written_depth(f, c))) {
                                finish = tree.finish(f, &now);
                            }
                        }
                    }
                    if done < finish && finish > issue_bound {
                        tree.rebuild(f, plan, &mut block);
                        rebuilt += 1;
                    }
                }
            }
            block.issue(f, i);
        }
    }
    rebuilt
}

/// Shortest chain of subtractions [`subtract_sums`] rewrites.
pub const MIN_SUBTRACTIONS: usize = 3;

/// Rewrites each chain of integer subtractions in block `b`, `x - a1 - a2 - ... -
/// ak` (each inner difference used only by the next subtraction), as `x - (a1 +
/// a2 + ... + ak)`: the same number of operations, and the sum of the subtrahends
/// is then a chain of additions that the tree-height reduction may rebuild (GCC's
/// `tree-ssa-reassoc` likewise turns `x - y` into `x + -y` and sorts the negated
/// operands into the sum). Returns how many chains (of at least
/// [`MIN_SUBTRACTIONS`]) were rewritten.
fn subtract_sums(f: &mut Function, b: Block) -> usize {
    let sub_in_block = |f: &Function, i: Inst| match *f.kind(i) {
        InstKind::Binary {
            op: op @ (BinOp::Sub | BinOp::Sub64),
            args,
        } if f.layout.inst_block(i) == Some(b) => Some((op, args)),
        _ => None,
    };
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    let mut rewritten = 0;
    for root in insts {
        if !f.layout.is_inst_inserted(root) {
            continue;
        }
        let Some((op, [mut head, last])) = sub_in_block(f, root) else {
            continue;
        };
        // A root: its result is not the minuend of a subtraction that alone uses it.
        let r = f
            .inst_result(root)
            .expect("a binary instruction has a result");
        if let [u] = f.users(r) {
            if sub_in_block(f, *u).is_some_and(|(o, args)| o == op && args[0] == r) {
                continue;
            }
        }
        let mut subtrahends = vec![last];
        let mut inner = Vec::new();
        while let Some(i) = f.def_inst(head) {
            match sub_in_block(f, i) {
                Some((o, [x, y]))
                    if o == op && f.users(head) == [*inner.last().unwrap_or(&root)] =>
                {
                    inner.push(i);
                    subtrahends.push(y);
                    head = x;
                }
                _ => break,
            }
        }
        if subtrahends.len() < MIN_SUBTRACTIONS {
            continue;
        }
        subtrahends.reverse();
        // The subtractions in order: each addition takes the place of the
        // subtraction of its operand, so the subtrahends die where they did.
        let mut at: Vec<Inst> = inner.iter().rev().copied().collect();
        at.push(root);
        let add = if op == BinOp::Sub {
            BinOp::Add
        } else {
            BinOp::Add64
        };
        let ty = f.value_type(r);
        let mut sum = subtrahends[0];
        for (&a, &place) in subtrahends[1..].iter().zip(&at[1..]) {
            let i = f.insert_inst_before(
                place,
                InstKind::Binary {
                    op: add,
                    args: [sum, a],
                },
                ty,
            );
            f.copy_src_loc(place, i);
            sum = f.inst_result(i).expect("a binary instruction has a result");
        }
        f.replace_kind(
            root,
            InstKind::Binary {
                op,
                args: [head, sum],
            },
        );
        for i in inner {
            f.remove_inst(i);
        }
        rewritten += 1;
    }
    rewritten
}

/// The ready time given to a leaf carried around a loop by the tree's own result
/// (`s = s + ...`) where the recurrence would limit the loop: later than anything,
/// so it is combined last and the loop's recurrence through it is one operation
/// long.
const CARRIED: u32 = 1 << 20;

/// What the pass knows of the block being rewritten.
struct BlockState<'a> {
    /// Estimated issue cycle of each value defined in the block so far, and its
    /// latency to an ALU operation and to anything else ([`latencies`]).
    timing: FxHashMap<Value, (u32, [u32; 2])>,
    /// When the block's loads and stores issue.
    memory: MemoryPipe<'a>,
    /// Position of each of the block's original instructions.
    pos: FxHashMap<Inst, usize>,
    /// The last new instruction placed after original instruction `k` (-1: at the
    /// block's start): new instructions after `k` follow each other in the order made.
    run_end: FxHashMap<isize, Inst>,
    /// How many new instructions were made (orders those after one instruction).
    seq: usize,
}

/// The operation of `i` when it is an associative, commutative integer one.
fn assoc_op(f: &Function, i: Inst) -> Option<BinOp> {
    match *f.kind(i) {
        InstKind::Binary { op, .. }
            if matches!(
                op,
                BinOp::Add
                    | BinOp::Mul
                    | BinOp::And
                    | BinOp::Or
                    | BinOp::Xor
                    | BinOp::Add64
                    | BinOp::Mul64
            ) =>
        {
            Some(op)
        }
        _ => None,
    }
}

/// Whether `v` is an inner node of a tree of `op` rooted in block `b`: computed by
/// `op` in `b`, and used only once, by `parent`.
fn inner_node(f: &Function, v: Value, op: BinOp, b: Block, parent: Inst) -> Option<Inst> {
    let i = f.def_inst(v)?;
    (f.layout.inst_block(i) == Some(b) && assoc_op(f, i) == Some(op) && f.users(v) == [parent])
        .then_some(i)
}

/// Whether `i` is an associative operation whose result is not an inner node of a
/// bigger tree.
fn is_root(f: &Function, i: Inst, b: Block) -> bool {
    let Some(op) = assoc_op(f, i) else {
        return false;
    };
    let r = f.inst_result(i).expect("a binary instruction has a result");
    match f.users(r) {
        [u] => !(f.layout.inst_block(*u) == Some(b) && assoc_op(f, *u) == Some(op)),
        _ => true,
    }
}

/// Stores a load is compared with one by one; it waits for any older one.
const STORE_WINDOW: usize = 16;

/// The memory pipe of [`BlockState`]: one load or store a cycle. Stores keep their
/// order with every access before them; a load waits only for the stores before
/// it that may write what it reads, as the machine scheduler, which tells such
/// accesses apart by their bases and offsets, lets it go above the others. A sum
/// of loads that follows the store of a slow result (an in-place stencil's
/// quotient) is then ready early, and the slow result is added last.
struct MemoryPipe<'a> {
    offsets: &'a PointerOffsets,
    /// The last [`STORE_WINDOW`] stores: address, bytes, issue cycle.
    stores: VecDeque<(Offset, i64, u32)>,
    /// A load issues after this (the stores older than the window).
    older_stores_done: u32,
    /// A store issues after this (the latest access so far).
    last_access: Option<u32>,
    /// Taken cycles, as "the next cycle to try" links (a disjoint-set forest with
    /// path halving over the cycles: finding a free cycle costs nearly nothing).
    next_try: FxHashMap<u32, u32>,
}

impl<'a> MemoryPipe<'a> {
    fn new(offsets: &'a PointerOffsets) -> Self {
        MemoryPipe {
            offsets,
            stores: VecDeque::new(),
            older_stores_done: 0,
            last_access: None,
            next_try: FxHashMap::default(),
        }
    }

    /// The first free cycle from `c` on.
    fn free_from(&mut self, mut c: u32) -> u32 {
        while let Some(&n) = self.next_try.get(&c) {
            let skip = self.next_try.get(&n).copied().unwrap_or(n);
            self.next_try.insert(c, skip);
            c = skip;
        }
        c
    }

    /// The cycle access `i` (a load or store of `f`) issues, with its operands
    /// ready at `ready`.
    fn issue(&mut self, f: &Function, i: Inst, ready: u32) -> u32 {
        let (ptr, ty, store) = match *f.kind(i) {
            InstKind::Load { ty, ptr } => (ptr, ty, false),
            InstKind::Store { value, ptr } => (ptr, f.value_type(value), true),
            _ => unreachable!("only loads and stores use the memory pipe"),
        };
        let at = self.offsets.of(ptr);
        let bytes = i64::from(ty.size());
        let mut start = ready;
        if store {
            start = start.max(self.last_access.map_or(0, |c| c + 1));
        } else {
            start = start.max(self.older_stores_done);
            for (a, n, c) in &self.stores {
                let apart =
                    a.base == at.base && (a.bytes + n <= at.bytes || at.bytes + bytes <= a.bytes);
                if !apart {
                    start = start.max(c + 1);
                }
            }
        }
        let start = self.free_from(start);
        self.next_try.insert(start, start + 1);
        self.last_access = Some(self.last_access.map_or(start, |c| c.max(start)));
        if store {
            if self.stores.len() == STORE_WINDOW {
                let (_, _, c) = self.stores.pop_front().expect("the window is full");
                self.older_stores_done = self.older_stores_done.max(c + 1);
            }
            self.stores.push_back((at, bytes, start));
        }
        start
    }
}

impl BlockState<'_> {
    /// When `v` is ready for an ALU operation (`alu`) or another use; values from
    /// other blocks are ready at the start.
    fn ready(&self, v: Value, alu: bool) -> u32 {
        self.timing
            .get(&v)
            .map_or(0, |&(issue, lat)| issue + lat[usize::from(!alu)])
    }

    /// Records when `i` issues: once its operands are ready for it and, for a load
    /// or store, the memory pipe is free.
    fn issue(&mut self, f: &Function, i: Inst) {
        let kind = f.kind(i);
        let alu = matches!(kind, InstKind::Binary { op, .. } if is_alu_op(*op))
            || matches!(kind, InstKind::Cmp { .. });
        let mut start = kind
            .args()
            .into_iter()
            .map(|a| self.ready(a, alu))
            .max()
            .unwrap_or(0);
        if matches!(kind, InstKind::Load { .. } | InstKind::Store { .. }) {
            start = self.memory.issue(f, i, start);
        }
        if let Some(r) = f.inst_result(i) {
            self.timing.insert(r, (start, latencies(f, kind)));
        }
    }
}

/// Partial results a rebuilt tree of `op` keeps (GCC's reassociation width): two
/// for ALU operations, which issue two per cycle; three for multiplications, which
/// issue one per cycle with three cycles of latency.
fn width(op: BinOp) -> usize {
    if is_alu_op(op) {
        2
    } else {
        3
    }
}

/// Whether `op` runs in the integer ALU (the U74 runs such an operation late, two
/// stages down the pipe, when its operands are not ready at issue).
fn is_alu_op(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Add
            | BinOp::Sub
            | BinOp::And
            | BinOp::Or
            | BinOp::Xor
            | BinOp::Shl
            | BinOp::LShr
            | BinOp::AShr
            | BinOp::Add64
            | BinOp::Sub64
    )
}

/// Cycles from an instruction's issue to a use of its result by an ALU operation
/// and by anything else (an address, a multiply), after the SiFive U74 (the
/// dependence-aware model the bench measures with): a load or multiply feeds a
/// late-running ALU operation after one cycle and other uses after three;
/// divisions take 18 / 20, floating point 5 (27 to divide). A division by a
/// constant is not a division on the machine: a power of two takes four ALU
/// operations in a row, another constant a multiply and three ALU operations.
fn latencies(f: &Function, kind: &InstKind) -> [u32; 2] {
    match *kind {
        InstKind::Load { .. } => [1, 3],
        InstKind::Binary {
            op: BinOp::SDiv | BinOp::SRem,
            args: [_, d],
        } => match f.as_iconst(d) {
            Some(c) if c.unsigned_abs().is_power_of_two() => [4, 4],
            Some(_) => [6, 6],
            None => op_latencies(BinOp::SDiv),
        },
        InstKind::Binary { op, .. } => op_latencies(op),
        _ => [1, 1],
    }
}

fn op_latencies(op: BinOp) -> [u32; 2] {
    match op {
        BinOp::Mul | BinOp::Mul64 => [1, 3],
        BinOp::SDiv | BinOp::SRem | BinOp::SDiv64 | BinOp::SRem64 => [18, 20],
        BinOp::FAdd | BinOp::FSub | BinOp::FMul => [5, 5],
        BinOp::FDiv => [27, 27],
        _ => [1, 1],
    }
}

/// A tree of one operation: its root, inner nodes (parents before children) and
/// leaves (left to right).
struct Tree {
    op: BinOp,
    ty: Type,
    root: Inst,
    inner: Vec<Inst>,
    leaves: Vec<Value>,
}

impl Tree {
    fn of(f: &Function, root: Inst, b: Block) -> Option<Tree> {
        let op = assoc_op(f, root)?;
        let ty = f.value_type(f.inst_result(root)?);
        let mut tree = Tree {
            op,
            ty,
            root,
            inner: Vec::new(),
            leaves: Vec::new(),
        };
        if !tree.grow(f, b, root) {
            return None;
        }
        (tree.leaves.len() >= 3).then_some(tree)
    }

    /// Adds the operands of `n` to the tree, left to right: inner nodes (recursively)
    /// and leaves. False when the tree gets more than [`MAX_LEAVES`] leaves.
    fn grow(&mut self, f: &Function, b: Block, n: Inst) -> bool {
        let InstKind::Binary { args, .. } = *f.kind(n) else {
            unreachable!("an associative binary operation")
        };
        for a in args {
            match inner_node(f, a, self.op, b, n) {
                Some(i) => {
                    self.inner.push(i);
                    if self.inner.len() >= MAX_LEAVES || !self.grow(f, b, i) {
                        return false;
                    }
                }
                None => self.leaves.push(a),
            }
            if self.leaves.len() > MAX_LEAVES {
                return false;
            }
        }
        true
    }

    /// Cycles from one of the tree's operations to the next.
    fn step(&self) -> u32 {
        op_latencies(self.op)[usize::from(!is_alu_op(self.op))]
    }

    /// Whether leaf `v` is a parameter of block `b` to which an edge passes the
    /// tree's result: a value carried around a loop through this tree.
    fn carried(&self, f: &Function, b: Block, v: Value) -> bool {
        let ValueDef::Param(pb, k) = f.value_def(v) else {
            return false;
        };
        if pb != b {
            return false;
        }
        let r = f
            .inst_result(self.root)
            .expect("a binary instruction has a result");
        f.users(r).iter().any(|&u| {
            f.kind(u)
                .targets()
                .iter()
                .any(|t| t.block == b && t.args.get(k as usize) == Some(&r))
        })
    }

    /// How many of the planned operations lie between leaf `k` and the root.
    fn plan_depth(&self, plan: &[(usize, usize)], k: usize) -> u32 {
        let n = self.leaves.len();
        let mut node = k;
        let mut depth = 0;
        while let Some(j) = plan.iter().position(|&(a, b)| a == node || b == node) {
            node = n + j;
            depth += 1;
        }
        depth
    }

    /// When `plan` finishes with the leaves ready at `ready`.
    fn plan_finish(&self, plan: &[(usize, usize)], ready: &impl Fn(Value) -> u32) -> u32 {
        let mut at: Vec<u32> = self.leaves.iter().map(|&v| ready(v)).collect();
        for &(a, b) in plan {
            at.push(at[a].max(at[b]) + self.step());
        }
        *at.last().expect("a tree has leaves")
    }

    /// How many of the tree's operations as written lie between leaf `k` and the
    /// root.
    fn written_depth(&self, f: &Function, k: usize) -> u32 {
        let leaf = self.leaves[k];
        let nodes: Vec<Inst> = std::iter::once(self.root)
            .chain(self.inner.iter().copied())
            .collect();
        let reads = |n: Inst, v: Value| matches!(f.kind(n), InstKind::Binary { args: [x, y], .. } if *x == v || *y == v);
        let Some(mut node) = nodes.iter().copied().find(|&n| reads(n, leaf)) else {
            return 0;
        };
        let mut depth = 1;
        while node != self.root {
            let r = f
                .inst_result(node)
                .expect("a binary instruction has a result");
            let Some(parent) = nodes.iter().copied().find(|&n| reads(n, r)) else {
                break;
            };
            node = parent;
            depth += 1;
        }
        depth
    }

    /// When the tree as written finishes.
    fn finish(&self, f: &Function, ready: &impl Fn(Value) -> u32) -> u32 {
        let mut done: FxHashMap<Inst, u32> = FxHashMap::default();
        let at = |v: Value, done: &FxHashMap<Inst, u32>| {
            f.def_inst(v)
                .and_then(|i| done.get(&i).copied())
                .unwrap_or_else(|| ready(v))
        };
        // Children before parents: the inner nodes reversed, then the root.
        for &n in self.inner.iter().rev().chain(std::iter::once(&self.root)) {
            let InstKind::Binary { args: [x, y], .. } = *f.kind(n) else {
                unreachable!("an associative binary operation")
            };
            let t = at(x, &done).max(at(y, &done)) + self.step();
            done.insert(n, t);
        }
        done[&self.root]
    }

    /// The rebuilt tree as pairs to combine (indices into the leaves, then into the
    /// combined values in order), and when it finishes: a Huffman merge by ready
    /// time (the two values ready first are combined, the result ready one step
    /// after the later of them) limited to [`width`] partial results alive at once,
    /// so that the rebuilt tree does not keep half its leaves' sums in registers:
    /// when the two values ready first are both leaves and no more partial results
    /// may start, the partial result ready first takes the leaf ready first.
    fn plan(&self, ready: &impl Fn(Value) -> u32) -> (Vec<(usize, usize)>, u32) {
        let mut leaves: Vec<(u32, usize)> = self
            .leaves
            .iter()
            .enumerate()
            .map(|(k, &v)| (ready(v), k))
            .collect();
        // Ready last first: the next leaf is popped from the end.
        leaves.sort_unstable_by(|a, b| b.cmp(a));
        let mut partial: Vec<(u32, usize)> = Vec::new();
        let mut pairs = Vec::with_capacity(self.leaves.len() - 1);
        let width = width(self.op);
        while leaves.len() + partial.len() > 1 {
            partial.sort_unstable_by(|a, b| b.cmp(a));
            // The two values ready first: how many of them are partial results.
            let mut first: Vec<((u32, usize), bool)> = Vec::with_capacity(4);
            first.extend(partial.iter().rev().take(2).map(|&p| (p, true)));
            first.extend(leaves.iter().rev().take(2).map(|&l| (l, false)));
            first.sort_unstable();
            let partials_first = first.iter().take(2).filter(|(_, p)| *p).count();
            let take = if partials_first == 0 && partial.len() >= width {
                1
            } else {
                partials_first
            };
            let mut operands = Vec::with_capacity(2);
            for _ in 0..take {
                operands.push(partial.pop().expect("a partial result"));
            }
            while operands.len() < 2 {
                operands.push(leaves.pop().expect("a leaf"));
            }
            let ((ta, a), (tb, b)) = (operands[0], operands[1]);
            pairs.push((a, b));
            partial.push((
                ta.max(tb) + self.step(),
                self.leaves.len() + pairs.len() - 1,
            ));
        }
        let (t, _) = partial
            .pop()
            .or_else(|| leaves.pop())
            .expect("one value left");
        (pairs, t)
    }

    /// Emits the planned operations (the last one becomes the root) and removes the
    /// old inner nodes. Each new operation goes right after the later definition of
    /// its operands (operands from outside the block count as defined just before
    /// the tree's first node), so values die as early as in the chain written.
    fn rebuild(&self, f: &mut Function, plan: Vec<(usize, usize)>, block: &mut BlockState) {
        let first_node = self
            .inner
            .iter()
            .copied()
            .chain(std::iter::once(self.root))
            .min_by_key(|i| block.pos[i])
            .expect("a tree has a root");
        let first = block.pos[&first_node] as isize;
        // Where a value is defined: after original instruction `k`, `seq`-th among
        // the new instructions there (0: the original instruction itself).
        let place_of = |v: Value| match f.def_inst(v).and_then(|i| block.pos.get(&i)) {
            Some(&k) => ((k as isize).max(first - 1), 0),
            None => (first - 1, 0),
        };
        let mut values: Vec<(Value, (isize, usize))> =
            self.leaves.iter().map(|&v| (v, place_of(v))).collect();
        let last = plan.len() - 1;
        for (k, (a, b)) in plan.into_iter().enumerate() {
            let ((x, px), (y, py)) = (values[a], values[b]);
            let kind = InstKind::Binary {
                op: self.op,
                args: [x, y],
            };
            if k == last {
                f.replace_kind(self.root, kind);
                break;
            }
            let run = px.0.max(py.0);
            let i = f.make_inst(kind, self.ty);
            match block.run_end.get(&run) {
                Some(&end) => f.layout.insert_inst_after(i, end),
                // After the first node's predecessor: right before the first node.
                None if run == first - 1 => f.layout.insert_inst_before(i, first_node),
                None => {
                    let def = f.def_inst(if px.0 >= py.0 { x } else { y });
                    f.layout
                        .insert_inst_after(i, def.expect("defined in the block"))
                }
            }
            block.run_end.insert(run, i);
            block.seq += 1;
            block.issue(f, i);
            f.copy_src_loc(self.root, i);
            let r = f.inst_result(i).expect("a binary instruction has a result");
            values.push((r, (run, block.seq)));
        }
        for &n in &self.inner {
            f.remove_inst(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// A sum, a product and an exclusive-or chain of eight values each, called with
    /// input values that wrap around. The product (seven multiplications, three
    /// cycles each) and the exclusive-or (whose last operands, the sum and the
    /// product, are ready last) are rebuilt as trees; the sum finishes within the
    /// cycles the block needs to issue anyway and stays a chain.
    const CHAINS: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @chains(i32, i32, i32, i32, i32, i32, i32, i32) -> i32 {
bb0(%0: i32, %1: i32, %2: i32, %3: i32, %4: i32, %5: i32, %6: i32, %7: i32):
  %8 = add %0, %1
  %9 = add %8, %2
  %10 = add %9, %3
  %11 = add %10, %4
  %12 = add %11, %5
  %13 = add %12, %6
  %14 = add %13, %7
  %15 = mul %0, %1
  %16 = mul %15, %2
  %17 = mul %16, %3
  %18 = mul %17, %4
  %19 = mul %18, %5
  %20 = mul %19, %6
  %21 = mul %20, %7
  %22 = xor %0, %14
  %23 = xor %22, %2
  %24 = xor %23, %21
  %25 = xor %24, %4
  %26 = xor %25, %5
  %27 = xor %26, %6
  %28 = xor %27, %7
  ret %28
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = call @getint()
  %3 = call @getint()
  %4 = call @chains(%0, %1, %2, %3, %1, %0, %3, %2)
  call @putint(%4)
  %5 = call @chains(%3, %3, %2, %0, %1, %1, %0, %2)
  call @putint(%5)
  ret 0
}
"#;

    /// A chain of four subtractions, one whose middle difference is also
    /// printed (so only the part after it is one chain), and a chain of two.
    const SUBTRACTIONS: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = call @getint()
  %3 = call @getint()
  %4 = sub %0, %1
  %5 = sub %4, %2
  %6 = sub %5, %3
  %7 = sub %6, %1
  call @putint(%7)
  %8 = sub %3, %2
  %9 = sub %8, %1
  call @putint(%9)
  %10 = sub %9, %0
  %11 = sub %10, %2
  %12 = sub %11, %3
  call @putint(%12)
  %13 = sub %0, %3
  %14 = sub %13, %2
  call @putint(%14)
  ret 0
}
"#;

    #[test]
    fn subtraction_chains_subtract_a_sum_and_keep_behaviour() {
        for input in ["3 -7 2147483647 -2147483648", "100000 99991 -5 13"] {
            let out = same_behaviour(SUBTRACTIONS, &["balance"], input);
            // Four subtractions: one left, subtracting a sum of the subtrahends.
            assert!(out.contains("sub %0, "), "{out}");
            assert!(!out.contains("sub %4,"), "{out}");
            // %9 is printed: its chain stays; the three after it are one chain.
            assert!(out.contains("%9 = sub %8, %1"), "{out}");
            assert!(out.contains("%12 = sub %9, "), "{out}");
            // Two subtractions stay as written.
            assert!(out.contains("%14 = sub %13, %2"), "{out}");
        }
    }

    /// A quotient is stored to `@a` (or through `%2`, which may point anywhere in
    /// `@a`), then added to four other elements of `@a`, quotient first.
    fn stored_quotient_then_loads(store_to: &str) -> String {
        format!(
            r#"
declare @getint() -> i32
declare @putint(i32) -> void
global @a: [i32; 8] = zeroinit

func @f(i32, i32, ptr) -> i32 {{
bb0(%0: i32, %1: i32, %2: ptr):
  %3 = sdiv %0, %1
  store %3, {store_to}
  %4 = gep @a, 1, 4
  %5 = load i32, %4
  %6 = gep @a, 2, 4
  %7 = load i32, %6
  %8 = gep @a, 3, 4
  %9 = load i32, %8
  %10 = gep @a, 4, 4
  %11 = load i32, %10
  %12 = add %3, %5
  %13 = add %12, %7
  %14 = add %13, %9
  %15 = add %14, %11
  ret %15
}}

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = gep @a, 1, 4
  store %0, %2
  %3 = gep @a, 3, 4
  store %1, %3
  %4 = gep @a, 6, 4
  %5 = call @f(%0, %1, %4)
  call @putint(%5)
  ret 0
}}
"#
        )
    }

    /// The loads after the store of a slow quotient read other elements: the
    /// machine scheduler lets them go above the store, so their sum is ready long
    /// before the quotient, which is added last. Through a pointer that may alias
    /// them, the loads wait for the store and the chain stays as written.
    #[test]
    fn loads_after_an_unrelated_store_are_summed_before_the_slow_value() {
        for input in ["100 7", "-2147483648 -3"] {
            let out = same_behaviour(&stored_quotient_then_loads("@a"), &["balance"], input);
            assert!(out.contains("%15 = add %14, %3"), "{out}");
            assert!(!out.contains("add %3, %5"), "{out}");
            let out = same_behaviour(&stored_quotient_then_loads("%2"), &["balance"], input);
            assert!(out.contains("%12 = add %3, %5"), "{out}");
        }
    }

    #[test]
    fn rebuilds_chains_and_keeps_behaviour() {
        for input in ["3 -7 2147483647 -2147483648", "100000 99991 -5 13"] {
            let out = same_behaviour(CHAINS, &["balance"], input);
            for line in ["%9 = add %8, %2", "mul %2, %3", "mul %4, %5", "xor %4, %5"] {
                assert!(out.contains(line), "{line} missing:\n{out}");
            }
        }
    }
}
