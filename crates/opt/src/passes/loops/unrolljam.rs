//! Unroll-and-jam: an outer loop is unrolled twice and the two copies of its inner
//! loop are fused into one, so that what the inner loop loads independently of the
//! outer iteration is loaded once for both.
//!
//! ```text
//!   for j:                          for j step 2:
//!     s = 0                           s0 = 0; s1 = 0
//!     for k: s += a[k] * b[k][j]      for k: x = a[k]; s0 += x * b[k][j]; s1 += x * b[k][j+1]
//!     c[j] = s                        c[j] = s0; c[j+1] = s1
//!                                   (a last odd j: the original loop)
//! ```
//!
//! Unroll-and-jam (Allen and Cocke 1972; Callahan, Carr and Kennedy, "Improving
//! Register Allocation for Subscripted Variables", PLDI 1990; LLVM's
//! `LoopUnrollAndJam`, GCC's `-floop-unroll-and-jam`) trades one pass over the inner
//! loop's control and its outer-invariant loads for twice the work per pass: the
//! load of `a[k]` above, its address and the counter `k` serve two outer
//! iterations. On a matrix product the inner loop goes from two loads per
//! multiply to one and a half.
//!
//! The jammed loop is entered while two more outer iterations are certain, and the
//! original loop runs what is left (as runtime unrolling does,
//! [`super::rtunroll`]):
//!
//! ```text
//!   pre:  br cont(x0), u(x0), h(x0)      u(x):   fore(x); fore(x')       (x' = next(x), computed early)
//!   h(x): fore; inner; aft;              ui(..): inner(x) || inner(x')   (one exit test)
//!         br cont, h(next), exit         ua:     aft(x); aft(x'); br cont', uc, exit(..')
//!                                        uc:     br cont(next'), u(next'), h(next')
//! ```
//!
//! The shape, all checked: the outer loop is rotated, its latch is its only exit,
//! and its blocks are a chain of jumps (`fore`) ending in the preheader of one
//! single-block inner loop, whose exit starts a chain of jumps (`aft`) ending in
//! the latch. Legality (the two copies' order is changed from `fore, inner, aft,
//! fore', inner', aft'` to `fore, fore', inner || inner', aft, aft'`):
//! - `fore` neither reads nor writes memory nor calls, and the inner loop neither
//!   writes memory nor calls; `aft` does not call, and what it stores is disjoint
//!   (another global or local array) from everything the inner loop loads;
//! - the inner loop's trip count is the same in both copies: its exit test depends
//!   only on header parameters (its *control*, which both copies then share) whose
//!   scalar evolution ([`crate::analysis::scev`]) is the same in every outer
//!   iteration: a recurrence of the inner loop of any constant or outer-invariant
//!   step, up or down, starting at a value invariant in the outer loop (a constant,
//!   or `m + 1` computed in the outer body from an invariant `m`);
//! - what the second copy needs before its inner loop (the outer header's next
//!   values that `fore` and the inner loop read) and the latch's continue test are
//!   computed from the header's parameters by instructions that cannot trap or
//!   touch memory (*early* values), so they can be recomputed up front;
//! - the inner loop loads something whose address is outer-invariant (else the
//!   jam saves little but loop control and adds register pressure).
//!
//! Only small loops are jammed ([`MAX_INNER`], [`MAX_OUTER`]), and a function grows
//! by at most [`MAX_GROWTH`] instructions.

use crate::analysis::scev::ScalarEvolution;
use crate::analysis::{FunctionAnalyses, Preserved};
use crate::analysis::{LoopId, RotatedLoop};
use crate::pipeline::FunctionTransform;
use crate::ssa::remove_trivial_params;
use crate::ssa::update::repair_uses;
use ir::analysis::address_root;
use ir::analysis::ControlFlowGraph;
use ir::{BinOp, Block, BlockCall, Function, Inst, InstKind, Type, Value, ValueDef};
use rustc_hash::{FxHashMap, FxHashSet};

/// The unroll-and-jam pass.
pub struct UnrollAndJam;

impl FunctionTransform for UnrollAndJam {
    const NAME: &'static str = "unrolljam";
    const DESCRIPTION: &'static str =
        "unroll an outer loop twice and fuse the copies of its inner loop";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// Inner loops of at most this many instructions are jammed.
pub const MAX_INNER: usize = 24;
/// Outer loops of at most this many instructions outside the inner loop.
pub const MAX_OUTER: usize = 40;
/// A function grows by at most this many instructions.
pub const MAX_GROWTH: usize = 300;

/// Jams the loop nests of `f` that qualify, one per round; returns how many.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// [`run`], starting from the analyses cached in `fa` (left holding those of the
/// last round).
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    let mut budget = MAX_GROWTH;
    let mut done: FxHashSet<Block> = FxHashSet::default();
    fa.rounds(f, usize::MAX, |f, fa| {
        let mut se = fa.scev(f);
        let loops = se.loops;
        let plan = loops.loops().find_map(|(id, lp)| {
            if done.contains(&lp.header) {
                return None;
            }
            let plan = Nest::of(&mut se, id)?;
            (plan.size <= budget).then_some(plan)
        });
        let plan = plan?;
        budget -= plan.size;
        done.insert(plan.outer.header);
        done.insert(jam(f, &plan));
        Some(1)
    })
}

/// A loop nest that can be jammed.
struct Nest {
    outer: RotatedLoop,
    /// The outer header, then the blocks jumping to the inner loop's preheader.
    fore: Vec<Block>,
    /// The inner loop's single block.
    inner: Block,
    /// The inner loop's exit, then the blocks jumping to the outer latch.
    aft: Vec<Block>,
    /// The inner loop's control: its parameters and results both copies share.
    control: FxHashSet<Value>,
    /// Instructions the jam adds.
    size: usize,
}

/// Whether `i` computes its result from its operands alone, without trapping.
fn pure(f: &Function, i: Inst) -> bool {
    match f.kind(i) {
        InstKind::Binary { op, .. } => !matches!(
            op,
            BinOp::SDiv | BinOp::SRem | BinOp::SDiv64 | BinOp::SRem64
        ),
        InstKind::Cmp { .. } | InstKind::Unary { .. } | InstKind::Gep { .. } => true,
        _ => false,
    }
}

impl Nest {
    fn of(se: &mut ScalarEvolution, id: LoopId) -> Option<Nest> {
        let (f, cfg, loops) = (se.f, se.cfg, se.loops);
        let lp = loops.get(id);
        let [child] = lp.children[..] else {
            return None;
        };
        let il = loops.get(child);
        if il.blocks.len() != 1 || !il.children.is_empty() {
            return None;
        }
        let inner = il.header;
        let outer = RotatedLoop::of(f, cfg, loops, id)?;
        let inner_loop = RotatedLoop::of(f, cfg, loops, child)?;
        let body: FxHashSet<Block> = lp.blocks.iter().copied().collect();
        // fore: the header's chain of jumps to the inner loop's preheader.
        let mut fore = vec![outer.header];
        loop {
            let last = *fore.last().expect("fore starts with the header");
            let InstKind::Jump { dest } = f.kind(f.terminator(last)?) else {
                return None;
            };
            if dest.block == inner {
                break;
            }
            if !body.contains(&dest.block) || fore.contains(&dest.block) {
                return None;
            }
            fore.push(dest.block);
        }
        if fore.last() != Some(&inner_loop.preheader) {
            return None;
        }
        // aft: from the inner loop's exit to the latch.
        let exit = f.kind(inner_loop.branch).targets()[inner_loop.exit()].block;
        if !body.contains(&exit) {
            return None;
        }
        let mut aft = vec![exit];
        while aft.last() != Some(&outer.latch) {
            let last = *aft.last().expect("aft starts with the exit");
            let InstKind::Jump { dest } = f.kind(f.terminator(last)?) else {
                return None;
            };
            if !body.contains(&dest.block) || aft.contains(&dest.block) || dest.block == inner {
                return None;
            }
            aft.push(dest.block);
        }
        if !matches!(
            f.kind(f.terminator(outer.preheader)?),
            InstKind::Jump { .. }
        ) {
            return None;
        }
        if fore.len() + aft.len() + 1 != lp.blocks.len() || fore.contains(&outer.latch) {
            return None;
        }
        // Each chain block but the first is entered only from the one before.
        for chain in [&fore, &aft] {
            if chain[1..].iter().any(|&b| cfg.unique_preds(b).len() != 1) {
                return None;
            }
        }
        if cfg.unique_preds(exit).len() != 1 {
            return None;
        }
        let outer_invariant = |v: Value| f.value_block(v).is_none_or(|b| !body.contains(&b));
        // Memory and size.
        let mut outer_size = 0;
        for &b in &fore {
            for i in f.layout.block_insts(b) {
                outer_size += 1;
                if !(pure(f, i) || f.kind(i).is_terminator()) {
                    return None;
                }
            }
        }
        let mut stored_roots = Vec::new();
        for &b in &aft {
            for i in f.layout.block_insts(b) {
                outer_size += 1;
                match f.kind(i) {
                    InstKind::Call { .. } | InstKind::Alloc { .. } => return None,
                    InstKind::Store { ptr, .. } => stored_roots.push(address_root(f, *ptr).0),
                    _ => {}
                }
            }
        }
        let mut inner_size = 0;
        let mut shared_load = false;
        let control = inner_control(se, id, &inner_loop, &outer_invariant)?;
        for i in f.layout.block_insts(inner) {
            inner_size += 1;
            match f.kind(i) {
                InstKind::Load { ptr, .. } => {
                    let root = address_root(f, *ptr).0;
                    if stored_roots.iter().any(|&s| !disjoint_roots(f, s, root)) {
                        return None;
                    }
                    shared_load |= depends_only_on(f, *ptr, inner, &control, &outer_invariant);
                }
                InstKind::Store { .. } | InstKind::Call { .. } | InstKind::Alloc { .. } => {
                    return None
                }
                _ => {}
            }
        }
        if !shared_load || inner_size > MAX_INNER || outer_size > MAX_OUTER {
            return None;
        }
        let nest = Nest {
            outer,
            fore,
            inner,
            aft,
            control,
            size: 2 * inner_size + 2 * outer_size + 8,
        };
        nest.early_values_exist(f).then_some(nest)
    }

    fn blocks(&self) -> impl Iterator<Item = Block> + '_ {
        self.fore
            .iter()
            .copied()
            .chain(std::iter::once(self.inner))
            .chain(self.aft.iter().copied())
    }

    /// Whether the continue test and the next values the second copy's `fore` and
    /// inner loop read are early (computable from the header's parameters).
    fn early_values_exist(&self, f: &Function) -> bool {
        let h = self.outer.header;
        let in_nest: FxHashSet<Block> = self.blocks().collect();
        let early = |v: Value| is_early(f, v, h, self.inner, &in_nest, 0);
        let InstKind::Br { cond, .. } = f.kind(self.outer.branch) else {
            return false;
        };
        if !early(*cond) {
            return false;
        }
        // Parameters whose next value is not early are late: nothing before the
        // aft may read them, directly or through `fore`.
        let next = self.outer.next_args(f);
        let late: FxHashSet<Value> = f
            .block_params(h)
            .iter()
            .zip(next)
            .filter(|&(_, &n)| !early(n))
            .map(|(&p, _)| p)
            .collect();
        for &b in &self.fore {
            for i in f.layout.block_insts(b) {
                let mut reads_late = false;
                f.kind(i).for_each_arg(|a| reads_late |= late.contains(&a));
                if reads_late {
                    return false;
                }
            }
        }
        f.layout.block_insts(self.inner).all(|i| {
            let mut ok = true;
            f.kind(i).for_each_arg(|a| ok &= !late.contains(&a));
            ok
        })
    }
}

/// Whether two address roots (see [`address_root`]) are different objects: two
/// different globals or local arrays.
fn disjoint_roots(f: &Function, a: Value, b: Value) -> bool {
    let object = |v: Value| match f.value_def(v) {
        ValueDef::Global(_) => true,
        ValueDef::Inst(i) => matches!(f.kind(i), InstKind::Alloc { .. }),
        _ => false,
    };
    a != b && object(a) && object(b)
}

/// Whether `v` is computed from the inner loop's control and outer-invariant values
/// only (through instructions of the inner loop).
fn depends_only_on(
    f: &Function,
    v: Value,
    inner: Block,
    control: &FxHashSet<Value>,
    outer_invariant: &impl Fn(Value) -> bool,
) -> bool {
    if control.contains(&v) || outer_invariant(v) {
        return true;
    }
    if f.value_block(v) != Some(inner) {
        return false;
    }
    let Some(i) = f.def_inst(v) else {
        return false;
    };
    if !pure(f, i) {
        return false;
    }
    let mut ok = true;
    f.kind(i)
        .for_each_arg(|a| ok &= depends_only_on(f, a, inner, control, outer_invariant));
    ok
}

/// The inner loop's control: the smallest set of its header parameters (with the
/// pure instructions computing from them) that decides its exit test, each one
/// taking the same values in every outer iteration: its scalar evolution is a
/// recurrence of the inner loop (of any order and step) whose operands are
/// invariant in the outer loop `outer`, or is invariant there itself.
fn inner_control(
    se: &mut ScalarEvolution,
    outer: LoopId,
    l: &RotatedLoop,
    outer_invariant: &impl Fn(Value) -> bool,
) -> Option<FxHashSet<Value>> {
    let (f, loops) = (se.f, se.loops);
    let b = l.header;
    let params = f.block_params(b);
    let next = l.next_args(f);
    let InstKind::Br { cond, .. } = f.kind(l.branch) else {
        return None;
    };
    let mut control: FxHashSet<Value> = FxHashSet::default();
    let mut work = vec![*cond];
    while let Some(v) = work.pop() {
        if outer_invariant(v) || !control.insert(v) {
            continue;
        }
        if let Some(k) = params.iter().position(|&p| p == v) {
            let e = se.get(v);
            if !se.exprs.same_in_each_iteration(f, loops, e, outer) {
                return None;
            }
            work.push(next[k]);
            continue;
        }
        let i = f.def_inst(v)?;
        if f.layout.inst_block(i) != Some(b) || !pure(f, i) {
            return None;
        }
        f.kind(i).for_each_arg(|a| work.push(a));
    }
    Some(control)
}

/// Whether `v` is early: outer-invariant, a parameter of the outer header `h`, or
/// the pure result of early operands, computed in the nest outside the inner loop.
fn is_early(
    f: &Function,
    v: Value,
    h: Block,
    inner: Block,
    nest: &FxHashSet<Block>,
    depth: u32,
) -> bool {
    let Some(b) = f.value_block(v) else {
        return true;
    };
    if !nest.contains(&b) {
        return true;
    }
    if b == inner || depth > 32 {
        return false;
    }
    match f.value_def(v) {
        ValueDef::Param(pb, _) => pb == h,
        ValueDef::Inst(i) => {
            let mut ok = pure(f, i);
            f.kind(i)
                .for_each_arg(|a| ok = ok && is_early(f, a, h, inner, nest, depth + 1));
            ok
        }
        _ => false,
    }
}

/// Copies instruction `i` before `before` with its operands renamed by `map`,
/// recording the copy's result in `map`.
fn clone_before(f: &mut Function, i: Inst, before: Inst, map: &mut FxHashMap<Value, Value>) {
    let mut kind = f.kind(i).clone();
    kind.map_args(|a| {
        if let Some(&c) = map.get(a) {
            *a = c;
        }
    });
    let ty = f.inst_result(i).map_or(Type::Void, |r| f.value_type(r));
    let c = f.insert_inst_before(before, kind, ty);
    f.copy_src_loc(i, c);
    if let (Some(r), Some(cr)) = (f.inst_result(i), f.inst_result(c)) {
        map.insert(r, cr);
    }
}

/// The value `v` (early, see [`is_early`]) computed before `before` from the header
/// parameters as `map` gives them: its instructions are copied, each once per map.
fn materialise(
    f: &mut Function,
    v: Value,
    nest: &FxHashSet<Block>,
    before: Inst,
    map: &mut FxHashMap<Value, Value>,
) -> Value {
    if let Some(&m) = map.get(&v) {
        return m;
    }
    let Some(b) = f.value_block(v) else {
        return v;
    };
    if !nest.contains(&b) {
        return v;
    }
    let i = f
        .def_inst(v)
        .expect("an early value in the nest is an instruction's");
    let mut args = Vec::new();
    f.kind(i).for_each_arg(|a| args.push(a));
    for a in args {
        materialise(f, a, nest, before, map);
    }
    clone_before(f, i, before, map);
    map[&v]
}

/// The second copy of the inner loop's instruction `i`, when it need not be computed
/// again: the first copy `first` computes the same (the inner loop stores nothing,
/// so equal loads read equal values), or, for an address `base[x + c]` only loaded
/// from or stored to where the first copy's is `base[x]`, `gep first, c` (one
/// address for both, the offset folded into the accesses; exact for in-bounds
/// accesses as [`crate::passes::scalar::constoffset`] explains).
fn share_with_first(
    f: &mut Function,
    i: Inst,
    first: Value,
    m2: &FxHashMap<Value, Value>,
    before: Inst,
) -> Option<Value> {
    let mut kind = f.kind(i).clone();
    kind.map_args(|a| {
        if let Some(&c) = m2.get(a) {
            *a = c;
        }
    });
    let first_kind = f.kind(f.def_inst(first)?).clone();
    if kind == first_kind && (pure(f, i) || matches!(kind, InstKind::Load { .. })) {
        return Some(first);
    }
    let (
        InstKind::Gep {
            base,
            index,
            stride,
        },
        InstKind::Gep {
            base: base1,
            index: index1,
            stride: stride1,
        },
    ) = (kind, first_kind)
    else {
        return None;
    };
    if base != base1 || stride != stride1 {
        return None;
    }
    let r = f.inst_result(i)?;
    if !f
        .users(r)
        .iter()
        .all(|&u| crate::passes::accesses_through(f, u, r))
    {
        return None;
    }
    let InstKind::Binary {
        op: BinOp::Add,
        args: [a, b],
    } = *f.kind(f.def_inst(index)?)
    else {
        return None;
    };
    let c = match (a == index1, b == index1) {
        (true, _) => f.as_iconst(b)?,
        (_, true) => f.as_iconst(a)?,
        _ => return None,
    };
    if c.unsigned_abs() > 1 << 16 {
        return None;
    }
    let c = f.iconst(c);
    let g = f.insert_inst_before(
        before,
        InstKind::Gep {
            base: first,
            index: c,
            stride,
        },
        Type::Ptr,
    );
    f.copy_src_loc(i, g);
    f.inst_result(g)
}

/// A placeholder terminator for a new block, replaced once its targets exist.
fn placeholder(f: &mut Function, b: Block) -> Inst {
    f.append_inst(
        b,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(b, Vec::new())),
        },
        Type::Void,
    )
}

/// Maps the parameters of each chain block after the first to the arguments of the
/// jump into it (renamed by `map`).
fn map_chain_params(f: &Function, chain: &[Block], map: &mut FxHashMap<Value, Value>) {
    for w in chain.windows(2) {
        let t = f.terminator(w[0]).expect("chain blocks end in jumps");
        let args = f.kind(t).targets()[0].args.clone();
        for (&p, a) in f.block_params(w[1]).iter().zip(args) {
            let a = map.get(&a).copied().unwrap_or(a);
            map.insert(p, a);
        }
    }
}

/// Copies the non-terminator instructions of `chain` before `before`, renamed by
/// `map` (which receives the copies' results).
fn clone_chain(f: &mut Function, chain: &[Block], before: Inst, map: &mut FxHashMap<Value, Value>) {
    map_chain_params(f, chain, map);
    for &b in chain {
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for &i in &insts[..insts.len() - 1] {
            clone_before(f, i, before, map);
        }
    }
}

fn renamed(map: &FxHashMap<Value, Value>, v: Value) -> Value {
    map.get(&v).copied().unwrap_or(v)
}

/// Jams nest `n`; returns the jammed loop's header.
fn jam(f: &mut Function, n: &Nest) -> Block {
    let h = n.outer.header;
    let nest: FxHashSet<Block> = n.blocks().collect();
    let params = f.block_params(h).to_vec();
    let next = n.outer.next_args(f).to_vec();
    let InstKind::Br { cond, .. } = *f.kind(n.outer.branch) else {
        unreachable!("a rotated loop's latch branches");
    };
    let exit = f.kind(n.outer.branch).targets()[n.outer.exit()].clone();
    let before_h = f
        .layout
        .prev_block(h)
        .expect("a loop header is not the entry");

    // u: both copies' fore, the second's parameters computed early.
    let u = f.create_block();
    f.layout.insert_block_after(u, before_h);
    let mut m1: FxHashMap<Value, Value> = FxHashMap::default();
    for &p in &params {
        let ty = f.value_type(p);
        let up = f.append_block_param(u, ty);
        m1.insert(p, up);
    }
    let u_end = placeholder(f, u);
    clone_chain(f, &n.fore, u_end, &mut m1);
    let mut early1 = m1.clone();
    let mut m2: FxHashMap<Value, Value> = FxHashMap::default();
    let mut late = Vec::new();
    for (&p, &nx) in params.iter().zip(&next) {
        if is_early(f, nx, h, n.inner, &nest, 0) {
            let v = materialise(f, nx, &nest, u_end, &mut early1);
            m2.insert(p, v);
        } else {
            late.push((p, nx));
        }
    }
    clone_chain(f, &n.fore, u_end, &mut m2);

    // ui: the inner loop, the second copy sharing the first's control.
    let inner = n.inner;
    let ui = f.create_block();
    f.layout.insert_block_after(ui, u);
    let inner_params = f.block_params(inner).to_vec();
    let pi = *n.fore.last().expect("fore ends in the inner preheader");
    let pi_jump = f.terminator(pi).expect("a preheader jumps");
    let init = f.kind(pi_jump).targets()[0].args.clone();
    let mut entry_args = Vec::new();
    for (&p, &a) in inner_params.iter().zip(&init) {
        let ty = f.value_type(p);
        let np = f.append_block_param(ui, ty);
        m1.insert(p, np);
        entry_args.push(renamed(&m1, a));
    }
    for (&p, &a) in inner_params.iter().zip(&init) {
        if n.control.contains(&p) {
            m2.insert(p, m1[&p]);
        } else {
            let ty = f.value_type(p);
            let np = f.append_block_param(ui, ty);
            m2.insert(p, np);
            entry_args.push(renamed(&m2, a));
        }
    }
    f.replace_kind(
        u_end,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(ui, entry_args)),
        },
    );
    let ui_end = placeholder(f, ui);
    let insts: Vec<Inst> = f.layout.block_insts(inner).collect();
    let (&inner_br, inner_body) = insts.split_last().expect("a loop block ends in a branch");
    for &i in inner_body {
        clone_before(f, i, ui_end, &mut m1);
    }
    for &i in inner_body {
        match f.inst_result(i) {
            Some(r) if n.control.contains(&r) => {
                m2.insert(r, m1[&r]);
            }
            Some(r) => {
                let second = share_with_first(f, i, m1[&r], &m2, ui_end);
                match second {
                    Some(v) => {
                        m2.insert(r, v);
                    }
                    None => clone_before(f, i, ui_end, &mut m2),
                }
            }
            None => clone_before(f, i, ui_end, &mut m2),
        }
    }
    let InstKind::Br {
        cond: icond,
        then_dest,
        else_dest,
    } = f.kind(inner_br).clone()
    else {
        unreachable!("a rotated loop's latch branches");
    };
    let inner_back = usize::from(else_dest.block == inner);
    let (back_dest, exit_dest) = if inner_back == 0 {
        (then_dest, else_dest)
    } else {
        (else_dest, then_dest)
    };
    let mut back_args: Vec<Value> = back_dest.args.iter().map(|&a| renamed(&m1, a)).collect();
    for (&p, &a) in inner_params.iter().zip(&back_dest.args) {
        if !n.control.contains(&p) {
            back_args.push(renamed(&m2, a));
        }
    }
    let ua = f.create_block();
    f.layout.insert_block_after(ua, ui);
    let again = BlockCall::new(ui, back_args);
    let leave = BlockCall::new(ua, Vec::new());
    let (then_dest, else_dest) = if inner_back == 0 {
        (again, leave)
    } else {
        (leave, again)
    };
    f.replace_kind(
        ui_end,
        InstKind::Br {
            cond: renamed(&m1, icond),
            then_dest: Box::new(then_dest),
            else_dest: Box::new(else_dest),
        },
    );

    // ua: both copies' aft; the second copy's late parameters from the first's.
    let ua_end = placeholder(f, ua);
    let exit_block = n.aft[0];
    for map in [&mut m1, &mut m2] {
        for (&p, &a) in f.block_params(exit_block).iter().zip(&exit_dest.args) {
            let a = renamed(map, a);
            map.insert(p, a);
        }
    }
    clone_chain(f, &n.aft, ua_end, &mut m1);
    for &(p, nx) in &late {
        m2.insert(p, renamed(&m1, nx));
    }
    clone_chain(f, &n.aft, ua_end, &mut m2);
    let next2: Vec<Value> = next.iter().map(|&v| renamed(&m2, v)).collect();
    let exit2 = BlockCall::new(
        exit.block,
        exit.args
            .iter()
            .map(|&a| renamed(&m2, a))
            .collect::<Vec<_>>(),
    );
    // uc: another pair when the iteration after the next one runs too.
    let uc = f.create_block();
    f.layout.insert_block_after(uc, ua);
    let (then_dest, else_dest) = if n.outer.back == 0 {
        (BlockCall::new(uc, Vec::new()), exit2)
    } else {
        (exit2, BlockCall::new(uc, Vec::new()))
    };
    f.replace_kind(
        ua_end,
        InstKind::Br {
            cond: renamed(&m2, cond),
            then_dest: Box::new(then_dest),
            else_dest: Box::new(else_dest),
        },
    );
    let uc_end = placeholder(f, uc);
    branch_on_pair(f, n, uc_end, cond, &nest, &params, &next2, u);

    // The preheader enters the jammed loop when two iterations are certain.
    let pre_jump = f.terminator(n.outer.preheader).expect("a preheader jumps");
    let init = n.outer.init_args(f).to_vec();
    branch_on_pair(f, n, pre_jump, cond, &nest, &params, &init, u);

    // Values of the nest used beyond it now also come from the second copy.
    let cfg = ControlFlowGraph::compute(f);
    let mut created = Vec::new();
    let jammed = [u, ui, ua, uc];
    for b in n.blocks().collect::<Vec<_>>() {
        for v in f.block_values(b) {
            let second = renamed(&m2, v);
            created.extend(repair_uses(f, &cfg, v, &[(b, v), (ua, second)], |x| {
                nest.contains(&x) || jammed.contains(&x)
            }));
        }
    }
    remove_trivial_params(f, &created);
    u
}

/// Replaces `at` (a block's terminator) by a branch to the jammed loop `u` when the
/// outer iteration after the one entered with parameters `args` runs too (the
/// latch's condition `cond`, early, evaluated on `args`), else to the original
/// header.
#[allow(clippy::too_many_arguments)]
fn branch_on_pair(
    f: &mut Function,
    n: &Nest,
    at: Inst,
    cond: Value,
    nest: &FxHashSet<Block>,
    params: &[Value],
    args: &[Value],
    u: Block,
) {
    let h = n.outer.header;
    let mut map: FxHashMap<Value, Value> =
        params.iter().copied().zip(args.iter().copied()).collect();
    let c = materialise(f, cond, nest, at, &mut map);
    let pair = BlockCall::new(u, args.to_vec());
    let single = BlockCall::new(h, args.to_vec());
    let (then_dest, else_dest) = if n.outer.back == 0 {
        (pair, single)
    } else {
        (single, pair)
    };
    f.replace_kind(
        at,
        InstKind::Br {
            cond: c,
            then_dest: Box::new(then_dest),
            else_dest: Box::new(else_dest),
        },
    );
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// `c[j] = sum_k a[k][j] * b[k]` for `j < n` (`n` read), then `c` printed: the
    /// inner loop's `b[k]` does not depend on `j`.
    const COLUMNS: &str = r#"
global @a: [i32; 64] = zeroinit
global @b: [i32; 64] = zeroinit
global @c: [i32; 8] = zeroinit

declare @getint() -> i32
declare @putint(i32) -> void
declare @putch(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0)
bb1(%1: i32):
  %2 = gep @a, %1, 4
  %3 = mul %1, 7
  %4 = sub %3, 20
  store %4, %2
  %5 = gep @b, %1, 4
  %6 = sub 3, %1
  store %6, %5
  %7 = add %1, 1
  %8 = slt %7, 64
  br %8, bb1(%7), bb2
bb2:
  %9 = sgt %0, 0
  br %9, bb3, bb7(0)
bb3:
  jump bb4(0, 5)
bb4(%10: i32, %30: i32):
  jump bb5(0, 0)
bb5(%11: i32, %12: i32):
  %13 = gep @a, %11, 32
  %14 = gep %13, %10, 4
  %15 = load i32, %14
  %16 = gep @b, %11, 4
  %17 = load i32, %16
  %18 = mul %15, %17
  %19 = add %12, %18
  %20 = add %11, 1
  %21 = slt %20, 8
  br %21, bb5(%20, %19), bb6
bb6:
  %22 = gep @c, %10, 4
  store %19, %22
  %31 = mul %30, 31
  %32 = add %31, %19
  %23 = add %10, 1
  %24 = slt %23, %0
  br %24, bb4(%23, %32), bb7(%32)
bb7(%33: i32):
  call @putint(%33)
  call @putch(10)
  jump bb8(0)
bb8(%25: i32):
  %26 = gep @c, %25, 4
  %27 = load i32, %26
  call @putint(%27)
  call @putch(32)
  %28 = add %25, 1
  %29 = slt %28, 8
  br %29, bb8(%28), bb9
bb9:
  ret 0
}
"#;

    fn loads(ir: &str) -> usize {
        ir.matches("= load ").count()
    }

    #[test]
    fn every_outer_trip_count_runs_the_same() {
        // 0 to 8 columns: the jammed loop alone, with the remainder, the remainder
        // alone; the outer loop also carries a running value out of the nest.
        for n in 0..=8 {
            let out = same_behaviour(COLUMNS, &["unrolljam"], &n.to_string());
            // Two copies of the inner loop's a[k][j], one b[k] for both, and the
            // original nest (the remainder) and the printing loop.
            assert_eq!(loads(&out), 2 + 3 + 1, "{out}");
            // The second column's address is the first's plus one element.
            assert_eq!(out.matches(", 1, 4\n").count(), 1, "{out}");
        }
    }

    #[test]
    fn stores_into_what_the_inner_loop_reads_keep_the_order() {
        let src = COLUMNS.replace("%22 = gep @c, %10, 4", "%22 = gep @b, %10, 4");
        let out = same_behaviour(&src, &["unrolljam"], "8");
        assert_eq!(loads(&out), 3, "{out}");
    }

    #[test]
    fn inner_trip_counts_that_follow_the_outer_counter_are_left() {
        // `k < j`: a triangular nest; the copies would not run in step.
        let src = COLUMNS.replace("%21 = slt %20, 8", "%21 = slt %20, %10");
        let out = same_behaviour(&src, &["unrolljam"], "8");
        assert_eq!(loads(&out), 3, "{out}");
    }

    /// The inner counter starting at `m + 1`, computed in the outer body from an
    /// `m` invariant there: its evolution is the same in every outer iteration.
    /// Stepping by 3 too.
    #[test]
    fn inner_counters_of_outer_invariant_evolution_are_shared() {
        let from_m = COLUMNS
            .replace(
                "bb3:\n  jump bb4(0, 5)",
                "bb3:\n  %41 = and %0, 1\n  jump bb4(0, 5)",
            )
            .replace(
                "bb4(%10: i32, %30: i32):\n  jump bb5(0, 0)",
                "bb4(%10: i32, %30: i32):\n  %40 = add %41, 1\n  jump bb5(%40, 0)",
            );
        for src in [from_m.clone(), from_m.replace("add %11, 1", "add %11, 3")] {
            for n in [3, 6, 7] {
                let out = same_behaviour(&src, &["unrolljam"], &n.to_string());
                assert_eq!(loads(&out), 2 + 3 + 1, "{out}");
            }
        }
    }

    #[test]
    fn inner_counters_that_vary_with_the_outer_loop_are_left() {
        // Starting at the outer counter, or stepping by it.
        for src in [
            COLUMNS.replace("jump bb5(0, 0)", "jump bb5(%10, 0)"),
            COLUMNS.replace("%20 = add %11, 1", "%42 = add %10, 1\n  %20 = add %11, %42"),
        ] {
            let out = same_behaviour(&src, &["unrolljam"], "8");
            assert_eq!(loads(&out), 3, "{out}");
        }
    }

    #[test]
    fn inner_loops_without_shared_loads_are_left() {
        // `b[k][j]` for both loads: nothing is loaded once for two columns.
        let src = COLUMNS
            .replace("%16 = gep @b, %11, 4", "%16 = gep @b, %11, 32")
            .replace(
                "%17 = load i32, %16",
                "%34 = gep %16, %10, 4\n  %17 = load i32, %34",
            );
        let out = same_behaviour(&src, &["unrolljam"], "8");
        assert_eq!(loads(&out), 3, "{out}");
    }
}
