//! Strength reduction of array walks in loops without a counter: in a loop whose
//! header loads or stores `a[i + d]` and whose back edges pass `i + c`, the address
//! becomes a pointer that advances by `c` elements per iteration.
//!
//! ```text
//!   h(%i):  %n = add %i, 1                h(%i, %q):  %n = add %i, 1
//!           %p = gep @a, %n, 4      =>                %v = load i32, %q
//!           %v = load i32, %p                         %q2 = gep %q, 1, 4
//!           %c = ne %v, 93                            %c = ne %v, 93
//!           br %c, h(%n), exit                        br %c, h(%n, %q2), exit
//! ```
//!
//! (`while (a[i] != x) i = i + 1;`, the search loops of interpreters and parsers.)
//! [`super::strength`] reduces the addresses of a loop's counter, whose exit test
//! bounds it; here nothing bounds `i`, and it is the access that proves the
//! pointer exact, as LLVM's scalar evolution infers no-wrap from an in-bounds
//! `getelementptr`: the header runs in every iteration, and its access reads
//! `a[i + d]`, so every value `i + d` takes is an index into an object (programs
//! access no memory out of bounds, `SYSY.md`), far from the ends of `i32`. The
//! next value `i + c + d` (with `|c| <= 2^16`) therefore does not wrap, and
//! `&a[i + c + d]` is exactly `&a[i + d] + c * stride`: the new header parameter
//! `%q` holds the access's address in every iteration. Each edge from outside
//! computes its initial address from its own initial `i`, as the original
//! instruction would have.
//!
//! Conditions: the `gep` is in the header, its base is defined outside the loop,
//! it is used as the address of a load or store in the header, and the scalar
//! evolution ([`crate::analysis::scev`], asked through the analysis manager)
//! finds its index a constant `d` from a header parameter `i`, and every back
//! edge's value for `i` the same non-zero constant `c` from it (`|c| <= 2^16`):
//! any arithmetic the analysis sees through (`i + d`, `i - e`, `(i + 1) + 1`), and
//! `i` a recurrence or not (one that starts from a different value on each entry
//! is no recurrence, and stands for itself).
//!
//! When the back edges pass other values ([`JoinWalk`]), the walk still becomes a
//! pointer if one of them is reduced to an addition: `i + c` with a step of its
//! own, or `u + c` with `u` the parameter of a join in the loop (both constant
//! differences the scalar evolution finds) (an interpreter's
//! `pc = pc + 1` after the arms of its dispatch, most of which pass `pc` on). The
//! join gets a pointer parameter of its own, and the other values passed (a jump
//! target loaded from memory) get their addresses computed where they are passed,
//! as the header computed them.
//!
//! A scan nested in a loop that resumes it where it stopped (a bracket matcher:
//! the outer loop counts brackets, the inner one steps `i = i - 1` over the
//! rest) walks a pointer in the inner loop, whose first address the outer loop
//! then computes from `i` on every trip. The pass runs in rounds, inner loops
//! first: the next round finds that address in the outer header, passed on to
//! the inner header that accesses it, and the outer back edge passing `u + c`
//! with `u` the inner header's index. The inner pointer `p` tracks `u` (every
//! edge into the inner header passes `gep base, u + t` or `p` advanced as `u`
//! is: [`tracking`]), so the outer back edge passes `p` advanced by `c` and
//! the outer header computes nothing ([`Index::Tracked`]); the same for any join
//! with such a pointer. (The header's address is available on the back edge,
//! as the inner pointer: a redundancy across the back edge, removed as partial
//! redundancy elimination removes one, by a parameter.) The first
//! address of a walk entered from a branch inside another loop that also goes
//! elsewhere is computed on an edge block of its own, so the enclosing loop's
//! trips that do not enter do not compute it.

use crate::analysis::scev::{Expr, ScalarEvolution};
use crate::analysis::{FunctionAnalyses, LoopId, Preserved};
use crate::cfg_edit::split_edge;
use crate::pipeline::FunctionTransform;
use ir::analysis::ControlFlowGraph;
use ir::{BinOp, Block, Function, Inst, InstKind, Type, Value};
use rustc_hash::FxHashMap;

/// The pass.
pub struct PtrWalk;

impl FunctionTransform for PtrWalk {
    const NAME: &'static str = "ptrwalk";
    const DESCRIPTION: &'static str =
        "strength-reduce array walks of loops without a counter into pointer increments";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_in(f, fa) > 0
    }
}

/// The largest step: `i + d` is an index into an object, so `i + d + c` cannot wrap.
const MAX_STEP: i64 = 1 << 16;

/// Reduces the walks of every loop of `f`; returns how many accesses changed.
pub fn run(f: &mut Function) -> usize {
    run_in(f, &mut FunctionAnalyses::default())
}

/// A walk found in a loop, before any is rewritten.
enum Found {
    Walk(Walk),
    Join(JoinWalk),
}

/// The walks of one loop, found by asking the scalar evolution.
struct LoopPlan {
    id: LoopId,
    header: Block,
    outside: Vec<Block>,
    latches: Vec<Block>,
    walks: Vec<(Inst, Found)>,
}

/// [`run`] with the analyses of the loops found taken from `fa`, in rounds: a
/// walk of a nested loop computes its first address in the loop around it,
/// which the next round may find a walk of its own (the pointer an inner
/// scan leaves, carried round the outer loop: [`Index::Tracked`]).
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let mut changed = 0;
    // Each round moves the first addresses one loop out.
    for _ in 0..MAX_ROUNDS {
        let (n, nested) = round(f, fa);
        changed += n;
        if !nested {
            break;
        }
        fa.forget();
    }
    changed
}

/// How many loops out [`run_in`] carries a walk's first address at most.
const MAX_ROUNDS: usize = 4;

/// One round: every loop's walks are found from one scalar evolution before any
/// is rewritten (a rewrite adds header and join parameters and instructions,
/// which changes no index a later walk reads; a join walk's edge blocks make it
/// forget the analyses). Returns how many accesses changed and whether a walk
/// was entered from the header of a loop around it, whose next round may find
/// the address computed there.
fn round(f: &mut Function, fa: &mut FunctionAnalyses) -> (usize, bool) {
    let plans = {
        let mut se = fa.scev(f);
        let (g, cfg, loops) = (se.f, se.cfg, se.loops);
        let mut plans = Vec::new();
        for (id, l) in loops.loops() {
            let header = l.header;
            let inside = |b: Block| loops.contains(id, b);
            // In a loop nested in this one.
            let in_inner = |b: Block| loops.innermost(b).is_some_and(|l| l != id);
            let (outside, latches): (Vec<Block>, Vec<Block>) = cfg
                .unique_preds(header)
                .into_iter()
                .partition(|&p| !inside(p));
            if outside.is_empty() || latches.is_empty() {
                continue;
            }
            let geps: Vec<Inst> = g
                .layout
                .block_insts(header)
                .filter(|&i| matches!(g.kind(i), InstKind::Gep { .. }))
                .collect();
            let mut walks = Vec::new();
            for i in geps {
                if let Some(walk) = Walk::find(&mut se, i, header, &inside, &latches) {
                    walks.push((i, Found::Walk(walk)));
                } else if let Some(walk) =
                    JoinWalk::find(&mut se, i, header, &inside, &in_inner, &latches)
                {
                    walks.push((i, Found::Join(walk)));
                }
            }
            if !walks.is_empty() {
                plans.push(LoopPlan {
                    id,
                    header,
                    outside,
                    latches,
                    walks,
                });
            }
        }
        plans
    };
    let (_, _, loops) = fa.loops(f);
    let mut split = false;
    let mut changed = 0;
    // Another round can find only an address passed on from a loop header that
    // jumps to the header of a loop walked here.
    let nested = plans.iter().any(|p| {
        p.outside.iter().any(|&o| {
            loops.is_header(o)
                && matches!(f.terminator(o).map(|t| f.kind(t)),
                    Some(InstKind::Jump { dest }) if dest.block == p.header)
        })
    });
    for plan in plans {
        let LoopPlan {
            id,
            header,
            mut outside,
            latches,
            walks,
        } = plan;
        let nest = Nest { loops, id };
        // The pointer of each walk made, by base, stride, index and step, with its
        // offset: the loop's other accesses of that walk are constant offsets from
        // it (sixteen columns of a row, one pointer).
        let mut pointers: FxHashMap<(Value, u32, usize, i32), (Value, i32)> = FxHashMap::default();
        for (g, found) in walks {
            match found {
                Found::Walk(walk) => {
                    let key = (walk.base, walk.stride, walk.param, walk.step);
                    if let Some(&(q, offset)) = pointers.get(&key) {
                        walk.offset_from(f, g, q, offset);
                    } else {
                        let (q, edge_blocks) =
                            walk.rewrite(f, g, header, &mut outside, &latches, &nest);
                        pointers.insert(key, (q, walk.offset));
                        split |= edge_blocks;
                    }
                }
                Found::Join(walk) => {
                    // An earlier join walk may have split edges: the predecessors now.
                    let now = ControlFlowGraph::compute(f);
                    walk.rewrite(f, g, header, &mut outside, &now, &nest);
                    split = true;
                }
            }
            changed += 1;
        }
    }
    if split {
        fa.forget();
    }
    (changed, nested)
}

/// Where a block lies relative to the loop `id` being rewritten.
struct Nest<'a> {
    loops: &'a crate::analysis::LoopForest,
    id: LoopId,
}

impl Nest<'_> {
    /// In a loop nested in this one (an edge block a join walk made is in no
    /// loop: it runs once per exit from the inner loop).
    fn in_inner(&self, b: Block) -> bool {
        self.loops.innermost(b).is_some_and(|l| l != self.id)
    }

    /// In any loop (a block made by this pass is in none).
    fn in_loop(&self, b: Block) -> bool {
        self.loops.innermost(b).is_some()
    }
}

/// The header's access `gep base, i + d, stride`, with `i` the header's parameter
/// number `param`, its base defined outside the loop and the address loaded or
/// stored in the header, or passed on to the block the header jumps to, which
/// accesses it: `(base, stride, i, param, d, in the header)`. The index is any
/// value the scalar evolution finds a constant `d` from a parameter of the
/// header.
fn header_access(
    se: &mut ScalarEvolution,
    g: Inst,
    header: Block,
    inside: &dyn Fn(Block) -> bool,
) -> Option<(Value, u32, Value, usize, i32, bool)> {
    let f = se.f;
    let InstKind::Gep {
        base,
        index,
        stride,
    } = *f.kind(g)
    else {
        return None;
    };
    if f.value_block(base).is_some_and(inside) || f.value_type(index) != Type::I32 {
        return None;
    }
    // Dereferenced in every iteration: in the header, or through a parameter of
    // the block the header jumps to (the first address of a walk in an inner
    // loop, which a first round made).
    let r = f.inst_result(g)?;
    let passed_on = match f.terminator(header).map(|t| f.kind(t)) {
        Some(InstKind::Jump { dest }) if dest.block != header => dest
            .args
            .iter()
            .zip(f.block_params(dest.block))
            .any(|(&a, &p)| a == r && accesses(f, p, dest.block)),
        _ => false,
    };
    let in_header = accesses(f, r, header);
    if !in_header && !passed_on {
        return None;
    }
    // The index: a parameter plus a constant (an `i32` difference, modulo 2^32).
    // Without its constant term, its evolution is the parameter itself (one the
    // analysis does not see through), or a recurrence of the loop, which only a
    // parameter that is one can be a constant from.
    let params = f.block_params(header);
    let (loops, e) = (se.loops, se.get(index));
    let (rest, _) = se.exprs.split_constant(loops, f, e);
    let candidates: Vec<usize> = match *se.exprs.get(rest) {
        Expr::Unknown { v, .. } => params.iter().position(|&p| p == v).into_iter().collect(),
        Expr::AddRec { lp, .. } if loops.get(lp).header == header => (0..params.len()).collect(),
        _ => return None,
    };
    let (param, offset) = candidates.into_iter().find_map(|k| {
        let d = se.constant_difference(index, params[k])?;
        Some((k, i32::try_from(d).ok()?))
    })?;
    Some((base, stride, params[param], param, offset, in_header))
}

/// Whether `block` loads or stores through `ptr`.
fn accesses(f: &Function, ptr: Value, block: Block) -> bool {
    f.users(ptr).iter().any(|&u| {
        f.layout.inst_block(u) == Some(block)
            && match f.kind(u) {
                InstKind::Load { ptr: p, .. } => *p == ptr,
                InstKind::Store { ptr: p, value } => *p == ptr && *value != ptr,
                _ => false,
            }
    })
}

/// `v - i` when the scalar evolution finds it a constant within [`MAX_STEP`].
fn step_from(se: &mut ScalarEvolution, v: Value, i: Value) -> Option<i32> {
    se.constant_difference(v, i)
        .filter(|c| c.abs() <= MAX_STEP)
        .map(|c| c as i32)
}

/// A reducible access: `gep base, i + d, stride` with `i` the header parameter
/// number `param`, which every back edge advances by `step`.
struct Walk {
    base: Value,
    stride: u32,
    param: usize,
    offset: i32,
    step: i32,
}

impl Walk {
    fn find(
        se: &mut ScalarEvolution,
        g: Inst,
        header: Block,
        inside: &dyn Fn(Block) -> bool,
        latches: &[Block],
    ) -> Option<Walk> {
        let (base, stride, i, param, offset, in_header) = header_access(se, g, header, inside)?;
        // An address only passed on: a counted loop whose index other
        // addresses need anyway, which strength reduction walks if it pays.
        if !in_header {
            return None;
        }
        let f = se.f;
        // Every back edge passes the same `i + step`.
        let mut step = None;
        for &latch in latches {
            let term = f.terminator(latch)?;
            for target in f.kind(term).targets() {
                if target.block != header {
                    continue;
                }
                let c = step_from(se, target.args[param], i)?;
                if c == 0 || step.is_some_and(|s| s != c) {
                    return None;
                }
                step = Some(c);
            }
        }
        Some(Walk {
            base,
            stride,
            param,
            offset,
            step: step?,
        })
    }

    /// Makes the access `g` the walk's new header parameter (returned), which
    /// starts at the access's first address and advances by the step; and
    /// whether an edge got a block of its own ([`Access::initial_addresses`]).
    fn rewrite(
        &self,
        f: &mut Function,
        g: Inst,
        header: Block,
        outside: &mut [Block],
        latches: &[Block],
        nest: &Nest,
    ) -> (Value, bool) {
        let q = f.append_block_param(header, Type::Ptr);
        let split = self.access().initial_addresses(f, header, outside, nest);
        // The next address, computed where the header ends.
        let header_end = f.terminator(header).expect("the header ends in a branch");
        let step = f.iconst(self.step);
        let next = value(
            f,
            header_end,
            InstKind::Gep {
                base: q,
                index: step,
                stride: self.stride,
            },
            Type::Ptr,
        );
        for &latch in latches {
            let term = f.terminator(latch).expect("a latch ends in a branch");
            let targets: Vec<ir::BlockCall> = f.kind(term).targets().into_iter().cloned().collect();
            for (which, mut target) in targets.into_iter().enumerate() {
                if target.block == header {
                    target.args.push(next);
                    f.set_target(term, which, target);
                }
            }
        }
        let old = f.inst_result(g).expect("a gep has a result");
        f.replace_all_uses(old, q);
        f.remove_inst(g);
        (q, split)
    }

    /// Makes the access `g` a constant offset from `q`, the pointer of a walk
    /// with the same base, stride, index and step at `offset`: both indices are
    /// accessed in every iteration, so neither wraps, and the difference of the
    /// addresses is exactly that of the offsets (modulo 2^32, the difference of
    /// two indices into one object).
    fn offset_from(&self, f: &mut Function, g: Inst, q: Value, offset: i32) {
        let d = f.iconst(self.offset.wrapping_sub(offset));
        f.replace_kind(
            g,
            InstKind::Gep {
                base: q,
                index: d,
                stride: self.stride,
            },
        );
    }
}

impl Walk {
    fn access(&self) -> Access {
        Access {
            base: self.base,
            stride: self.stride,
            param: self.param,
            offset: self.offset,
        }
    }
}

/// The header's access of a walk: `gep base, i + offset, stride` with `i` the
/// header's parameter number `param`.
struct Access {
    base: Value,
    stride: u32,
    param: usize,
    offset: i32,
}

impl Access {
    /// The address the access has when `i` is `index`, computed before `at`.
    fn address_of(&self, f: &mut Function, at: Inst, mut index: Value) -> Value {
        if self.offset != 0 {
            let d = f.iconst(self.offset);
            index = value(
                f,
                at,
                InstKind::Binary {
                    op: BinOp::Add,
                    args: [index, d],
                },
                Type::I32,
            );
        }
        value(
            f,
            at,
            InstKind::Gep {
                base: self.base,
                index,
                stride: self.stride,
            },
            Type::Ptr,
        )
    }

    /// Passes the header's new pointer parameter its initial address on every
    /// edge from outside the loop, each from its edge's own initial value.
    /// An edge from a block in another loop that branches elsewhere too (the
    /// test after an unrolled loop that enters its remainder) gets a block of
    /// its own for the address, which then runs only when the edge is taken;
    /// returns whether it made one (which then replaces the predecessor in
    /// `outside`: a branch elsewhere has one edge to the header).
    fn initial_addresses(
        &self,
        f: &mut Function,
        header: Block,
        outside: &mut [Block],
        nest: &Nest,
    ) -> bool {
        let mut split = false;
        for p in outside.iter_mut() {
            let term = f.terminator(*p).expect("a predecessor ends in a branch");
            let targets: Vec<ir::BlockCall> = f.kind(term).targets().into_iter().cloned().collect();
            let elsewhere = targets.iter().any(|t| t.block != header);
            for (which, target) in targets.iter().enumerate() {
                if target.block != header {
                    continue;
                }
                let (at, which) = if elsewhere && nest.in_loop(*p) {
                    split = true;
                    let jump = split_edge(f, *p, which);
                    *p = f.layout.inst_block(jump).expect("the edge's block");
                    (jump, 0)
                } else {
                    (term, which)
                };
                let start = self.address_of(f, at, target.args[self.param]);
                let mut target = target.clone();
                target.args.push(start);
                f.set_target(at, which, target);
            }
        }
        split
    }
}

/// How an index passed in a loop relates to the header's index `i`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Index {
    /// `i + c`: the header's address advanced by `c` elements.
    Header(i32),
    /// `u + c`, with `u` parameter `param` of `block`, a join inside the loop.
    Join {
        block: Block,
        param: usize,
        step: i32,
    },
    /// `u + c`, with `u` an `i32` parameter of a block that dominates the latch
    /// and has a pointer parameter `ptr` walking along with it ([`tracking`]):
    /// the address is `ptr` advanced by `step` elements.
    Tracked { ptr: Value, step: i32 },
    /// Anything else: the address computed from the value.
    Exact(Value),
}

/// A loop as [`classify`] sees it: its header, which blocks are in it, and
/// which of those are outside its inner loops (where a join may be).
#[derive(Clone, Copy)]
struct Scope<'a> {
    header: Block,
    inside: &'a dyn Fn(Block) -> bool,
    direct: &'a dyn Fn(Block) -> bool,
}

/// `v`, passed by `latch`, as an [`Index`] relative to the header parameter `i`,
/// from the scalar evolution of the two: a constant difference, `v` a constant
/// away from the parameter of a join, or from a parameter a pointer tracks.
fn classify(
    se: &mut ScalarEvolution,
    v: Value,
    i: Value,
    latch: Block,
    access: &Access,
    scope: &Scope,
) -> Index {
    let Scope {
        header,
        inside,
        direct,
    } = *scope;
    if let Some(c) = step_from(se, v, i) {
        return Index::Header(c);
    }
    let (loops, f) = (se.loops, se.f);
    let e = se.get(v);
    let (rest, c) = match se.exprs.split_constant(loops, f, e) {
        (rest, c) if c.abs() <= MAX_STEP => (rest, c as i32),
        _ => (e, 0),
    };
    if let Expr::Unknown { v: u, .. } = *se.exprs.get(rest) {
        if let ir::ValueDef::Param(block, k) = f.value_def(u) {
            if block != header && direct(block) {
                return Index::Join {
                    block,
                    param: k as usize,
                    step: c,
                };
            }
        }
    }
    // A block whose parameter `u` the index is a constant from: that of a
    // parameter the analysis does not see through, or the header of the inner
    // loop the index is a recurrence of.
    let block = match *se.exprs.get(rest) {
        Expr::Unknown { v: u, .. } => match f.value_def(u) {
            ir::ValueDef::Param(block, _) => Some(block),
            _ => None,
        },
        Expr::AddRec { lp, .. } => Some(se.loops.get(lp).header),
        _ => None,
    };
    block
        .filter(|&b| b != header && inside(b) && se.dt.dominates(b, latch))
        .and_then(|b| tracked(se, v, b, access))
        .map_or(Index::Exact(v), |(ptr, step)| Index::Tracked { ptr, step })
}

/// `v` as a pointer parameter of `block` advanced by `step` elements, when `v`
/// is a constant `c` from an `i32` parameter `u` of `block` that a pointer
/// parameter `p` tracks with the access's base and stride at offset `t` (`p` is
/// `gep base, u + t, stride`): the access's address `gep base, v + d, stride` is
/// then `gep p, c + d - t, stride`, exactly, since `u + t` is an index into an
/// object (`p` is accessed) and the step is small.
fn tracked(
    se: &mut ScalarEvolution,
    v: Value,
    block: Block,
    access: &Access,
) -> Option<(Value, i32)> {
    let f = se.f;
    let params = f.block_params(block);
    for (ku, &u) in params.iter().enumerate() {
        if f.value_type(u) != Type::I32 {
            continue;
        }
        let Some(c) = step_from(se, v, u) else {
            continue;
        };
        for (kp, &p) in params.iter().enumerate() {
            if f.value_type(p) != Type::Ptr {
                continue;
            }
            let Some(t) = tracking(se, block, ku, kp, access) else {
                continue;
            };
            let step = i64::from(c) + i64::from(access.offset) - i64::from(t);
            if step.abs() <= MAX_STEP {
                return Some((p, step as i32));
            }
        }
    }
    None
}

/// The offset `t` at which pointer parameter `kp` of `block` tracks its `i32`
/// parameter `ku` (`u`): `p = gep base, u + t, stride` on every entry, with the
/// access's base and stride. By induction over the edges into `block`: each
/// passes either `gep base, x, stride` with `x` a constant `t` from the `i32` it
/// passes, or `gep p, c, stride` with the `i32` it passes `u + c` (exact: `p` is
/// accessed in `block`, so `u + t` is an index into an object and `u + t + c`,
/// with `|c| <= 2^16`, does not wrap), as a walk of an inner loop enters and
/// advances.
fn tracking(
    se: &mut ScalarEvolution,
    block: Block,
    ku: usize,
    kp: usize,
    access: &Access,
) -> Option<i32> {
    let (f, cfg) = (se.f, se.cfg);
    let (u, p) = (f.block_params(block)[ku], f.block_params(block)[kp]);
    if !accesses(f, p, block) {
        return None;
    }
    let mut offset = None;
    for pred in cfg.unique_preds(block) {
        let term = f.terminator(pred)?;
        for target in f.kind(term).targets() {
            if target.block != block {
                continue;
            }
            let (a, w) = (target.args[kp], target.args[ku]);
            let ir::ValueDef::Inst(def) = f.value_def(a) else {
                return None;
            };
            let InstKind::Gep {
                base,
                index,
                stride,
            } = *f.kind(def)
            else {
                return None;
            };
            if stride != access.stride {
                return None;
            }
            if base == p {
                let c = f.as_iconst(index)?;
                if i64::from(c).abs() > MAX_STEP || step_from(se, w, u) != Some(c) {
                    return None;
                }
            } else if base == access.base {
                let t = step_from(se, index, w)?;
                if offset.is_some_and(|o| o != t) {
                    return None;
                }
                offset = Some(t);
            } else {
                return None;
            }
        }
    }
    offset
}

/// A walk whose back edges pass other values than one `i + step`: an index read
/// from memory (a jump of an interpreter's program counter), or the parameter of
/// a join inside the loop that most paths pass `i` to (`ip = ip + 1` after an
/// `if`-`else` chain whose arms may also set `ip`). The header's address becomes
/// a pointer parameter as in [`Walk`]; each back edge passes the address of its
/// index: the header's pointer advanced by `c` for `i + c`; for `u + c`, with `u`
/// a join's parameter, a pointer parameter of that join (the header's pointer
/// from the edges passing `i`, advanced for `i + c'`, else the address of the
/// value passed) advanced by `c`; else the address of the value, computed in the
/// latch. A computation for an edge from inside an inner loop goes on an edge
/// block of its own, so it does not run on every inner iteration.
///
/// Exactness: an address advanced by `c` from the exact address of some `x + d`
/// is exact unless `x + d + c` wraps; but each such address reaches the header
/// as its `i + d`, which the header accesses, so `x + d + c` is an index into an
/// object and, with `|c| <= 2^16`, does not wrap (as for [`Walk`]). Every other
/// address is computed as the original `gep` computes it.
struct JoinWalk {
    access: Access,
    /// Per back edge (latch, which target): the index passed.
    edges: Vec<(Block, usize, Index)>,
    /// The values the joins' predecessors pass them that are `i + c`: `c`.
    from_header: FxHashMap<Value, i32>,
}

impl JoinWalk {
    fn find(
        se: &mut ScalarEvolution,
        g: Inst,
        header: Block,
        inside: &dyn Fn(Block) -> bool,
        in_inner: &dyn Fn(Block) -> bool,
        latches: &[Block],
    ) -> Option<JoinWalk> {
        let (base, stride, i, param, offset, in_header) = header_access(se, g, header, inside)?;
        // What a latch computes runs once per iteration only outside inner loops.
        if latches.iter().any(|&l| in_inner(l)) {
            return None;
        }
        let (f, cfg) = (se.f, se.cfg);
        let direct = |b: Block| inside(b) && !in_inner(b);
        let scope = Scope {
            header,
            inside,
            direct: &direct,
        };
        let access = Access {
            base,
            stride,
            param,
            offset,
        };
        let mut edges = Vec::new();
        for &latch in latches {
            let term = f.terminator(latch)?;
            for (which, target) in f.kind(term).targets().into_iter().enumerate() {
                if target.block == header {
                    let index = classify(se, target.args[param], i, latch, &access, &scope);
                    edges.push((latch, which, index));
                }
            }
        }
        // Only when some address is reduced to an addition; a loop whose back
        // edges all compute their address anew gains nothing. An address only
        // passed on to an inner loop is walked when a back edge carries the
        // inner loop's pointer: the header then computes nothing.
        if edges.iter().all(|e| matches!(e.2, Index::Exact(_)))
            || !in_header && !edges.iter().any(|e| matches!(e.2, Index::Tracked { .. }))
        {
            return None;
        }
        // What the joins' predecessors pass, relative to `i`.
        let mut from_header = FxHashMap::default();
        for &(_, _, index) in &edges {
            let Index::Join { block, param, .. } = index else {
                continue;
            };
            for p in cfg.unique_preds(block) {
                let term = f.terminator(p)?;
                for target in f.kind(term).targets() {
                    if target.block != block {
                        continue;
                    }
                    let w = target.args[param];
                    if let Some(c) = step_from(se, w, i) {
                        from_header.insert(w, c);
                    }
                }
            }
        }
        Some(JoinWalk {
            access,
            edges,
            from_header,
        })
    }

    fn rewrite(
        &self,
        f: &mut Function,
        g: Inst,
        header: Block,
        outside: &mut [Block],
        cfg: &ControlFlowGraph,
        nest: &Nest,
    ) {
        let q = f.append_block_param(header, Type::Ptr);
        self.access.initial_addresses(f, header, outside, nest);
        // The joins' pointer parameters.
        let mut joins: Vec<((Block, usize), Value)> = Vec::new();
        for &(_, _, index) in &self.edges {
            let Index::Join { block, param, .. } = index else {
                continue;
            };
            if joins.iter().any(|(k, _)| *k == (block, param)) {
                continue;
            }
            let s = f.append_block_param(block, Type::Ptr);
            joins.push(((block, param), s));
            for p in cfg.unique_preds(block) {
                let term = f.terminator(p).expect("a predecessor ends in a branch");
                let targets: Vec<ir::BlockCall> =
                    f.kind(term).targets().into_iter().cloned().collect();
                for (which, mut target) in targets.into_iter().enumerate() {
                    if target.block != block {
                        continue;
                    }
                    let w = target.args[param];
                    let from_header = self.from_header.get(&w).copied();
                    if from_header == Some(0) {
                        target.args.push(q);
                        f.set_target(term, which, target);
                        continue;
                    }
                    // Computed on the edge: in `p` itself, or on an edge block when
                    // `p` belongs to an inner loop.
                    let (at, which) = if nest.in_inner(p) {
                        (split_edge(f, p, which), 0)
                    } else {
                        (term, which)
                    };
                    let addr = match from_header {
                        Some(c) => {
                            let c = f.iconst(c);
                            value(
                                f,
                                at,
                                InstKind::Gep {
                                    base: q,
                                    index: c,
                                    stride: self.access.stride,
                                },
                                Type::Ptr,
                            )
                        }
                        None => self.access.address_of(f, at, w),
                    };
                    target.args.push(addr);
                    f.set_target(at, which, target);
                }
            }
        }
        // Each back edge's address, computed in its latch.
        for &(latch, which, index) in &self.edges {
            let term = f.terminator(latch).expect("a latch ends in a branch");
            let (from, step) = match index {
                Index::Header(c) => (Some(q), c),
                Index::Join { block, param, step } => {
                    let s = joins
                        .iter()
                        .find(|(k, _)| *k == (block, param))
                        .map(|&(_, s)| s);
                    (s, step)
                }
                Index::Tracked { ptr, step } => (Some(ptr), step),
                Index::Exact(_) => (None, 0),
            };
            let addr = match (from, index) {
                (Some(p), _) if step == 0 => p,
                (Some(p), _) => {
                    let c = f.iconst(step);
                    value(
                        f,
                        term,
                        InstKind::Gep {
                            base: p,
                            index: c,
                            stride: self.access.stride,
                        },
                        Type::Ptr,
                    )
                }
                (None, Index::Exact(v)) => self.access.address_of(f, term, v),
                (None, _) => unreachable!("every join has its parameter"),
            };
            let mut target = f.kind(term).targets()[which].clone();
            target.args.push(addr);
            f.set_target(term, which, target);
        }
        let old = f.inst_result(g).expect("a gep has a result");
        f.replace_all_uses(old, q);
        f.remove_inst(g);
    }
}

/// Inserts `kind` before `at`; its result.
fn value(f: &mut Function, at: Inst, kind: InstKind, ty: Type) -> Value {
    let i = f.insert_inst_before(at, kind, ty);
    f.inst_result(i).expect("a value")
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    /// `while (a[i + 1] != 93) i = i + 1;` from a start that differs per entry.
    const SEARCH: &str = "func @f(i32, i32) -> i32 {\n\
        bb0(%0: i32, %1: i32):\n  %2 = slt %1, 0\n  br %2, bb1(%0), bb1(%1)\n\
        bb1(%3: i32):\n  %4 = add %3, 1\n  %5 = gep @a, %4, 4\n  %6 = load i32, %5\n  \
        %7 = ne %6, 93\n  br %7, bb1(%4), bb2\n\
        bb2:\n  ret %4\n}\n";

    #[test]
    fn a_search_loop_walks_a_pointer() {
        check(
            &["ptrwalk"],
            &format!("global @a: [i32; 16] = zeroinit\n\n{SEARCH}"),
            "global @a: [i32; 16] = zeroinit\n\n\
             func @f(i32, i32) -> i32 {\n\
             bb0(%0: i32, %1: i32):\n  %2 = slt %1, 0\n  %3 = add %0, 1\n  %4 = gep @a, %3, 4\n  \
             %5 = add %1, 1\n  %6 = gep @a, %5, 4\n  br %2, bb1(%0, %4), bb1(%1, %6)\n\
             bb1(%7: i32, %8: ptr):\n  %9 = add %7, 1\n  %10 = load i32, %8\n  %11 = ne %10, 93\n  \
             %12 = gep %8, 1, 4\n  br %11, bb1(%9, %12), bb2\n\
             bb2:\n  ret %9\n}\n",
        );
    }

    #[test]
    fn walks_agree_with_the_interpreter() {
        // Forward and backward scans over an array, from several starts, with a
        // store through the walked address and a second walk in the same loop.
        let src = "global @a: [i32; 64] = zeroinit\n\n\
            func @main() -> i32 {\n\
            bb0:\n  jump bb1(0)\n\
            bb1(%0: i32):\n  %1 = gep @a, %0, 4\n  %2 = mul %0, 7\n  %3 = srem %2, 11\n  \
            store %3, %1\n  %4 = add %0, 1\n  %5 = slt %4, 64\n  br %5, bb1(%4), bb2(0, 0)\n\
            bb2(%6: i32, %7: i32):\n  jump bb3(%6, %7)\n\
            bb3(%8: i32, %9: i32):\n  %10 = gep @a, %8, 4\n  %11 = load i32, %10\n  \
            %12 = add %8, 2\n  %13 = gep @a, %12, 4\n  %14 = load i32, %13\n  %15 = add %11, %14\n  \
            store %15, %10\n  %16 = add %9, %15\n  %17 = ne %11, 10\n  br %17, bb3(%12, %16), bb4\n\
            bb4:\n  call @putint(%16)\n  call @putint(%8)\n  jump bb5(63, %16)\n\
            bb5(%18: i32, %19: i32):\n  %20 = add %18, -3\n  %21 = gep @a, %18, 4\n  %22 = load i32, %21\n  \
            %23 = mul %19, 3\n  %24 = add %23, %22\n  %25 = sgt %22, 4\n  br %25, bb5(%20, %24), bb6\n\
            bb6:\n  call @putint(%24)\n  call @putint(%18)\n  ret 0\n}\n\
            declare @putint(i32) -> void\n";
        let out = same_behaviour(src, &["ptrwalk"], "");
        // The second loop's `a[i]` and `a[i + 2]` share one pointer.
        assert_eq!(out.matches(": ptr").count(), 3, "three walks:\n{out}");
        assert!(
            out.contains("gep %"),
            "a constant offset from a walk:\n{out}"
        );
    }

    #[test]
    fn accesses_off_the_header_are_left_alone_and_uneven_steps_walk() {
        // The first loop's load is in a block that not every iteration runs; the
        // second loop's back edges step by 1 and by 2, each advancing the pointer
        // by its own step.
        let src = "global @a: [i32; 16] = zeroinit\n\n\
            func @f(i32) -> i32 {\n\
            bb0(%0: i32):\n  jump bb1(%0)\n\
            bb1(%1: i32):\n  %2 = add %1, 1\n  %3 = gep @a, %2, 4\n  %4 = slt %1, 5\n  br %4, bb2, bb3\n\
            bb2:\n  %5 = load i32, %3\n  %6 = ne %5, 0\n  br %6, bb1(%2), bb3\n\
            bb3:\n  jump bb4(%0)\n\
            bb4(%7: i32):\n  %8 = gep @a, %7, 4\n  %9 = load i32, %8\n  %10 = add %7, 1\n  \
            %11 = add %7, 2\n  %12 = slt %9, 3\n  br %12, bb4(%10), bb5\n\
            bb5:\n  %13 = ne %9, 7\n  br %13, bb4(%11), bb6\n\
            bb6:\n  ret %9\n}\n";
        let expected = "global @a: [i32; 16] = zeroinit\n\n\
            func @f(i32) -> i32 {\n\
            bb0(%0: i32):\n  jump bb1(%0)\n\
            bb1(%1: i32):\n  %2 = add %1, 1\n  %3 = gep @a, %2, 4\n  %4 = slt %1, 5\n  br %4, bb2, bb3\n\
            bb2:\n  %5 = load i32, %3\n  %6 = ne %5, 0\n  br %6, bb1(%2), bb3\n\
            bb3:\n  %7 = gep @a, %0, 4\n  jump bb4(%0, %7)\n\
            bb4(%8: i32, %9: ptr):\n  %10 = load i32, %9\n  %11 = add %8, 1\n  \
            %12 = add %8, 2\n  %13 = slt %10, 3\n  %14 = gep %9, 1, 4\n  br %13, bb4(%11, %14), bb5\n\
            bb5:\n  %15 = ne %10, 7\n  %16 = gep %9, 2, 4\n  br %15, bb4(%12, %16), bb6\n\
            bb6:\n  ret %10\n}\n";
        check(&["ptrwalk"], src, expected);
    }

    /// `while (a[i + 1] != 93) i = i + 2`, with the next index computed from the
    /// accessed one (`(i + 1) + 1`, as value numbering leaves it) and the index
    /// as `i - -1`: the scalar evolution finds both a constant from `i`, so the
    /// access walks by two elements (the add-of-a-constant match before took
    /// neither).
    #[test]
    fn indices_a_constant_from_the_parameter_by_any_arithmetic_walk() {
        let src = "global @a: [i32; 64] = zeroinit\n\n\
            func @f(i32) -> i32 {\n\
            bb0(%0: i32):\n  jump bb1(%0)\n\
            bb1(%1: i32):\n  %2 = sub %1, -1\n  %3 = gep @a, %2, 4\n  %4 = load i32, %3\n  \
            %5 = add %2, 1\n  %6 = ne %4, 93\n  br %6, bb1(%5), bb2\n\
            bb2:\n  ret %5\n}\n";
        let expected = "global @a: [i32; 64] = zeroinit\n\n\
            func @f(i32) -> i32 {\n\
            bb0(%0: i32):\n  %1 = add %0, 1\n  %2 = gep @a, %1, 4\n  jump bb1(%0, %2)\n\
            bb1(%3: i32, %4: ptr):\n  %5 = sub %3, -1\n  %6 = load i32, %4\n  \
            %7 = add %5, 1\n  %8 = ne %6, 93\n  %9 = gep %4, 2, 4\n  br %8, bb1(%7, %9), bb2\n\
            bb2:\n  ret %7\n}\n";
        check(&["ptrwalk"], src, expected);
    }

    /// Must not fire: the index is no constant away from a parameter (`2 * i`,
    /// `i + n`), or the back edge passes no constant step from it (`i * 3`,
    /// `i + n`).
    #[test]
    fn indices_or_steps_that_vary_from_the_parameter_are_left_alone() {
        let shape = |index: &str, next: &str| {
            format!(
                "global @a: [i32; 64] = zeroinit\n\n\
                 func @f(i32, i32) -> i32 {{\n\
                 bb0(%0: i32, %1: i32):\n  jump bb1(%0)\n\
                 bb1(%2: i32):\n  %3 = {index}\n  %4 = gep @a, %3, 4\n  %5 = load i32, %4\n  \
                 %6 = {next}\n  %7 = ne %5, 93\n  br %7, bb1(%6), bb2\n\
                 bb2:\n  ret %6\n}}\n"
            )
        };
        for (index, next) in [
            ("mul %2, 2", "add %2, 1"),
            ("add %2, %1", "add %2, 1"),
            ("add %2, 1", "mul %2, 3"),
            ("add %2, 1", "add %2, %1"),
        ] {
            let src = shape(index, next);
            let out = crate::passes::testutil::run(&src, &["ptrwalk"]);
            assert!(!out.contains(": ptr"), "{index} / {next}:\n{out}");
        }
    }

    /// An interpreter's dispatch: `op = prog[pc]`; most arms fall through to
    /// `pc = pc + 1` at the join, one jumps to a target read from memory, one
    /// skips ahead by a scan in an inner loop.
    const DISPATCH: &str = "global @prog: [i32; 16] = [1, 2, 1, 3, 1, 9, 1, 2, 1, 4, 0, 0, 0, 0, 0, 0]\n\
        global @dest: [i32; 16] = [0, 2, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0]\n\n\
        declare @putint(i32) -> void\n\n\
        func @main() -> i32 {\n\
        bb0:\n  jump bb1(0, 0)\n\
        bb1(%0: i32, %1: i32):\n  %2 = gep @prog, %0, 4\n  %3 = load i32, %2\n  %4 = eq %3, 2\n  br %4, bb3, bb2\n\
        bb2:\n  %5 = eq %3, 3\n  br %5, bb4(%0), bb6(%0, %1)\n\
        bb3:\n  %6 = gep @dest, %0, 4\n  %7 = load i32, %6\n  jump bb6(%7, %1)\n\
        bb4(%8: i32):\n  %9 = add %8, 1\n  %10 = gep @prog, %9, 4\n  %11 = load i32, %10\n  %12 = ne %11, 9\n  br %12, bb4(%9), bb6(%9, %1)\n\
        bb6(%13: i32, %14: i32):\n  %15 = add %14, %3\n  %16 = add %13, 1\n  %17 = ne %3, 4\n  br %17, bb1(%16, %15), bb7\n\
        bb7:\n  call @putint(%15)\n  call @putint(%16)\n  ret 0\n}\n";

    #[test]
    fn two_walks_share_the_join_and_its_split_edge() {
        // The header also reads `dest[pc]`: a second walk through the same join,
        // whose edge from the inner scan the first walk split.
        let src = DISPATCH
            .replace(
                "%3 = load i32, %2\n",
                "%3 = load i32, %2\n  %30 = gep @dest, %0, 4\n  %31 = load i32, %30\n",
            )
            .replace(
                "%6 = gep @dest, %0, 4\n  %7 = load i32, %6\n  jump bb6(%7, %1)",
                "jump bb6(%31, %1)",
            );
        let out = same_behaviour(&src, &["ptrwalk"], "");
        let main = &out[out.find("func @main").unwrap()..];
        assert!(
            main.contains("bb1(%2: i32, %3: i32, %4: ptr, %5: ptr):"),
            "{main}"
        );
        assert!(!main.contains("gep @dest, %2, 4"), "{main}");
        // One edge block out of the scan computes both addresses.
        let edge = "bb6:\n  %20 = gep @prog, %16, 4\n  %21 = gep @dest, %16, 4\n  jump bb7(%16, %3, %20, %21)";
        assert!(main.contains(edge), "{main}");
    }

    #[test]
    fn a_program_counter_walks_through_the_join_of_its_arms() {
        let out = same_behaviour(DISPATCH, &["ptrwalk"], "");
        // The header loads through its pointer parameter; the join gets one too,
        // passed the header's pointer by the falling-through arm, the address of
        // the loaded target by the jump, and (on an edge block, out of the inner
        // scan) the address of the scan's stop. The scan walks a pointer of its
        // own, whose first address is computed on an edge block too: the
        // dispatch branches elsewhere, and most iterations do not scan.
        let main = &out[out.find("func @main").unwrap()..];
        assert!(
            main.contains("bb1(%1: i32, %2: i32, %3: ptr):\n  %4 = load i32, %3\n"),
            "{main}"
        );
        assert!(main.contains("br %6, bb3, bb7(%1, %2, %3)"), "{main}");
        assert!(
            main.contains("bb3:\n  %7 = add %1, 1\n  %8 = gep @prog, %7, 4\n  jump bb5(%1, %8)"),
            "{main}"
        );
        assert!(
            main.contains("%11 = gep @prog, %10, 4\n  jump bb7(%10, %2, %11)"),
            "{main}"
        );
        assert!(
            main.contains("bb6:\n  %18 = gep @prog, %14, 4\n  jump bb7(%14, %2, %18)"),
            "{main}"
        );
        assert!(main.contains("bb7(%19: i32, %20: i32, %21: ptr)"), "{main}");
        assert!(
            main.contains("%25 = gep %21, 1, 4\n  br %24, bb1(%23, %22, %25), bb8"),
            "{main}"
        );
    }

    /// A backward scan nested in a loop that repeats it from where it stopped
    /// (a bracket matcher: find the third `9` before index `n`): `i` is the
    /// inner loop's `i - 1`, reloaded as `a[i - 1]`. `main` calls it from two
    /// starts and with a second, forward variant (`i + 1`, read as `a[i + 2]`).
    const NESTED_SCANS: &str = "global @a: [i32; 24] = \
        [9, 1, 9, 2, 2, 9, 3, 9, 4, 4, 4, 9, 5, 9, 6, 9, 7, 7, 9, 8, 9, 1, 1, 0]\n\n\
        declare @putint(i32) -> void\n\n\
        func @back(i32) -> i32 {\n\
        bb0(%0: i32):\n  jump bb1(3, %0)\n\
        bb1(%1: i32, %2: i32):\n  jump bb3(%2)\n\
        bb2(%3: i32):\n  %4 = sgt %3, 0\n  br %4, bb1(%3, %6), bb5(%6)\n\
        bb3(%5: i32):\n  %6 = add %5, -1\n  %7 = gep @a, %6, 4\n  %8 = load i32, %7\n  \
        %9 = eq %8, 9\n  br %9, bb4, bb3(%6)\n\
        bb4:\n  %10 = add %1, -1\n  jump bb2(%10)\n\
        bb5(%11: i32):\n  ret %11\n}\n\n\
        func @fwd(i32) -> i32 {\n\
        bb0(%0: i32):\n  jump bb1(4, %0)\n\
        bb1(%1: i32, %2: i32):\n  jump bb3(%2)\n\
        bb2(%3: i32):\n  %4 = sgt %3, 0\n  br %4, bb1(%3, %6), bb5(%6)\n\
        bb3(%5: i32):\n  %6 = add %5, 1\n  %12 = add %5, 2\n  %7 = gep @a, %12, 4\n  %8 = load i32, %7\n  \
        %9 = eq %8, 9\n  br %9, bb4, bb3(%6)\n\
        bb4:\n  %10 = add %1, -1\n  jump bb2(%10)\n\
        bb5(%11: i32):\n  ret %11\n}\n\n\
        func @main() -> i32 {\n\
        bb0:\n  %0 = call @back(23)\n  call @putint(%0)\n  %1 = call @back(16)\n  call @putint(%1)\n  \
        %2 = call @fwd(-1)\n  call @putint(%2)\n  %3 = call @fwd(3)\n  call @putint(%3)\n  ret 0\n}\n";

    /// The function `name` of the printed module `out`.
    fn function<'a>(out: &'a str, name: &str) -> &'a str {
        let start = out.find(&format!("func @{name}(")).unwrap();
        let end = out[start..].find("\n}\n").map_or(out.len(), |e| start + e);
        &out[start..end]
    }

    #[test]
    fn the_pointer_an_inner_scan_leaves_is_carried_round_the_outer_loop() {
        let out = same_behaviour(NESTED_SCANS, &["ptrwalk"], "");
        for (name, next) in [("back", "gep %11, -1, 4"), ("fwd", "gep %11, 1, 4")] {
            let f = function(&out, name);
            // The first address is computed once, before the outer loop; the
            // outer header passes its pointer on to the scan, and its back edge
            // passes the scan's pointer on, one element further.
            assert_eq!(f.matches("gep @a").count(), 1, "{f}");
            assert!(f.contains("bb1(%3: i32, %4: i32, %5: ptr):\n"), "{f}");
            assert!(f.contains("jump bb3(%4, %5)"), "{f}");
            assert!(
                f.contains(&format!("%9 = {next}\n  br %8, bb1(%7, %12, %9)")),
                "{f}"
            );
        }
    }

    #[test]
    fn a_pointer_that_does_not_track_the_index_is_not_carried() {
        // The scan's pointer starts at `a[i - 2]` on entry but is advanced as
        // `a[i - 1]` (no offset fits both edges), or is not accessed in the scan:
        // the outer header keeps computing its address.
        let src = "global @a: [i32; 24] = zeroinit\n\n\
            func @f(i32, ptr) -> i32 {\n\
            bb0(%0: i32, %20: ptr):\n  jump bb1(3, %0)\n\
            bb1(%1: i32, %2: i32):\n  %12 = add %2, -2\n  %13 = gep @a, %12, 4\n  \
            %14 = load i32, %13\n  jump bb3(%2, %13)\n\
            bb2(%3: i32):\n  %4 = sgt %3, 0\n  br %4, bb1(%3, %6), bb5(%6)\n\
            bb3(%5: i32, %15: ptr):\n  %6 = add %5, -1\n  %8 = load i32, %15\n  \
            %16 = gep %15, -1, 4\n  %9 = eq %8, 9\n  br %9, bb4, bb3(%6, %16)\n\
            bb4:\n  %10 = add %1, -1\n  jump bb2(%10)\n\
            bb5(%11: i32):\n  ret %11\n}\n";
        let tracked = crate::passes::testutil::run(src, &["ptrwalk"]);
        // The header's `a[i - 2]` is the scan's pointer advanced by one element.
        assert!(
            tracked.contains(
                "bb1(%4: i32, %5: i32, %6: ptr):\n  %7 = add %5, -2\n  %8 = load i32, %6\n"
            ),
            "tracked at offset -2:\n{tracked}"
        );
        assert!(
            tracked.contains("%11 = gep %13, -1, 4\n  br %10, bb1(%9, %14, %11)"),
            "{tracked}"
        );
        for (what, from, to) in [
            (
                "a first address of another offset",
                "%16 = gep %15, -1, 4",
                "%16 = gep %15, -2, 4",
            ),
            (
                "a pointer the scan does not access",
                "%8 = load i32, %15",
                "%8 = load i32, %20",
            ),
        ] {
            let out = crate::passes::testutil::run(&src.replace(from, to), &["ptrwalk"]);
            assert!(
                !out.contains("bb1(%4: i32, %5: i32, %6: ptr)"),
                "{what}:\n{out}"
            );
        }
    }
}
