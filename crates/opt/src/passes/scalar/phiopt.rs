//! Conditional increments become arithmetic: a small `if` whose arms only compute a
//! value that differs between them by a constant is replaced by straight-line code
//! adding the condition, scaled, to one of them.
//!
//! This is the arithmetic case of if-conversion (Allen, Kennedy, Porterfield and
//! Warren, "Conversion of Control Dependence to Data Dependence", POPL 1983) as GCC's
//! `phiopt` pass and LLVM's SimplifyCFG (`FoldTwoEntryPHINode`, then InstCombine's
//! `select C, X + K, X -> X + zext(C) * K`) do it:
//!
//! ```text
//! b0: %c = eq %x, %y                  b0: %c = eq %x, %y
//!     br %c, b1, b2                       %s = shl %r, 1
//! b1: %s = shl %r, 1            =>        %t = add %s, 1
//!     jump b3(%s)                         %n = sub %t, %c
//! b2: %s' = shl %r, 1                     jump b3(%n)
//!     %t = add %s', 1
//!     jump b3(%t)
//! ```
//!
//! (`ret = ret * 2 + (x != y)`, a bit of an exclusive or computed with a branch.) The
//! block ending in `br %c, T, F` must branch on a comparison (a value that is 0 or
//! 1). `T` and `F` (a diamond) have the branching block as their only predecessor,
//! hold at most [`MAX_ARM`] instructions that cannot trap or have effects (integer
//! arithmetic except division and remainder, comparisons, address arithmetic), and
//! jump to the same join. For every argument of the join that differs between the
//! paths, the two values must differ by a constant `d` known from their form (two
//! constants, `v` and `v + k`, or `v + k1` and `v + k2`, where `v` is the same value
//! or the same computation in both arms); the join then receives `f + c * d` (one
//! instruction for `d = ±1`, two for a power of two, three otherwise), with `f` the
//! value of the else path. The arms' instructions move into the branching block
//! (one computing the same as one already moved is replaced by it), which jumps
//! to the join; the arms are deleted.
//!
//! A branch whose two edges go to the same block, with arguments differing by a
//! constant (`br %c, b3(1), b3(0)`, what `a || b` leaves once its second test is
//! a value), becomes a jump passing `f + c * d` the same way: no arms to move.
//!
//! Only diamonds: one of their paths always runs a jump besides the branch, and on
//! real cores an unpredictable condition costs a mispredict; the arithmetic costs
//! the comparison's value (RISC-V fuses a comparison into its branch, so this is
//! one or two instructions more) and at most three ALU operations, which pair. A
//! triangle (`if (x < 0) x = x + K;`) has no jump to save and its condition is
//! usually biased: converting them cost 7% more instructions on a hash kernel and
//! 18% on a bracket-matching scan (`00_bitset`, `brainfuck-mandelbrot`), so they
//! stay branches. Values that differ in other ways (a select between unrelated
//! values, a minimum) would need four operations; those branches stay too.

use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::FunctionTransform;
use ir::{BinOp, Block, BlockCall, Function, Inst, InstKind, SecondaryMap, Type, Value};

/// The if-conversion of conditional increments.
pub struct PhiOpt;

/// Instructions (besides the jump) an arm may hold.
pub const MAX_ARM: usize = 3;

impl FunctionTransform for PhiOpt {
    const NAME: &'static str = "phiopt";
    const DESCRIPTION: &'static str =
        "if-convert small ifs whose arms give values differing by a constant";
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
        run(f) > 0
    }
}

/// Converts what can be converted in `f`; the number of branches removed.
pub fn run(f: &mut Function) -> usize {
    let preds = crate::passes::pred_counts(f);
    let blocks: Vec<Block> = f.layout.blocks().collect();
    let mut converted = 0;
    for h in blocks {
        if !f.layout.is_block_inserted(h) {
            continue;
        }
        if let Some(plan) = plan(f, h, &preds) {
            apply(f, h, plan);
            converted += 1;
        }
    }
    converted
}

/// What converting the `if` at the end of a block does.
struct Plan {
    cond: Value,
    /// The arms to empty and delete (one for a triangle).
    arms: Vec<Block>,
    join: Block,
    /// Per argument: the constant the then-value exceeds the else-value by, when
    /// they differ.
    diffs: Vec<Option<i32>>,
}

fn plan(f: &Function, h: Block, preds: &SecondaryMap<Block, u32>) -> Option<Plan> {
    let term = f.terminator(h)?;
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = f.kind(term)
    else {
        return None;
    };
    let is_cmp = f
        .def_inst(*cond)
        .is_some_and(|i| matches!(f.kind(i), InstKind::Cmp { .. }));
    if !is_cmp {
        return None;
    }
    // Both edges to one block: the arguments alone differ.
    if then_dest.block == else_dest.block {
        if then_dest.block == h {
            return None;
        }
        let diffs = differences(f, &then_dest.args, &else_dest.args)?;
        return Some(Plan {
            cond: *cond,
            arms: Vec::new(),
            join: then_dest.block,
            diffs,
        });
    }
    // An arm: only predecessor `h`, no parameters, a few safe instructions, then
    // a jump; gives (arm, join, args at the join).
    let arm = |call: &BlockCall| -> Option<(Block, BlockCall)> {
        let b = call.block;
        if b == h || preds[b] != 1 || !f.block_params(b).is_empty() {
            return None;
        }
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        let (last, body) = insts.split_last()?;
        if body.len() > MAX_ARM || !body.iter().all(|&i| speculable(f.kind(i))) {
            return None;
        }
        match f.kind(*last) {
            InstKind::Jump { dest } if dest.block != b && dest.block != h => {
                Some((b, *dest.clone()))
            }
            _ => None,
        }
    };
    let (arms, join, then_args, else_args) = match (arm(then_dest), arm(else_dest)) {
        (Some((t, tj)), Some((e, ej))) if tj.block == ej.block => {
            (vec![t, e], tj.block, tj.args, ej.args)
        }
        _ => return None,
    };
    let diffs = differences(f, &then_args, &else_args)?;
    Some(Plan {
        cond: *cond,
        arms,
        join,
        diffs,
    })
}

/// Per argument, `None` where the two paths pass the same value, else the
/// constant the then-value exceeds the else-value by; `None` overall when some
/// pair differs otherwise, or none differs (the branch only chose a path:
/// simplifycfg's business).
fn differences(f: &Function, then_args: &[Value], else_args: &[Value]) -> Option<Vec<Option<i32>>> {
    let mut diffs = Vec::with_capacity(then_args.len());
    for (&t, &e) in then_args.iter().zip(else_args) {
        if same(f, t, e, 4) {
            diffs.push(None);
        } else if f.value_type(t) == Type::I32 {
            diffs.push(Some(difference(f, t, e)?));
        } else {
            return None;
        }
    }
    diffs.iter().any(Option::is_some).then_some(diffs)
}

/// Whether `k` may run on a path where it did not: no effects, no trap.
fn speculable(k: &InstKind) -> bool {
    match k {
        InstKind::Binary { op, .. } => matches!(
            op,
            BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::And
                | BinOp::Or
                | BinOp::Xor
                | BinOp::Shl
                | BinOp::LShr
                | BinOp::AShr
                | BinOp::Add64
                | BinOp::Sub64
                | BinOp::Mul64
        ),
        InstKind::Cmp { .. } | InstKind::Gep { .. } => true,
        _ => false,
    }
}

/// Whether `a` and `b` are the same value or the same pure computation of the same
/// operands (`depth` levels deep).
fn same(f: &Function, a: Value, b: Value, depth: u32) -> bool {
    if a == b {
        return true;
    }
    if let (Some(x), Some(y)) = (f.as_iconst(a), f.as_iconst(b)) {
        return x == y;
    }
    if depth == 0 {
        return false;
    }
    let (Some(i), Some(j)) = (f.def_inst(a), f.def_inst(b)) else {
        return false;
    };
    match (f.kind(i), f.kind(j)) {
        (InstKind::Binary { op: p, args: x }, InstKind::Binary { op: q, args: y })
            if p == q && speculable(f.kind(i)) =>
        {
            same(f, x[0], y[0], depth - 1) && same(f, x[1], y[1], depth - 1)
        }
        _ => false,
    }
}

/// `v` as `base + k` (`k = 0` when it is no addition of a constant).
fn split_offset(f: &Function, v: Value) -> (Value, i32) {
    if let Some(i) = f.def_inst(v) {
        if let InstKind::Binary {
            op: BinOp::Add,
            args: [a, b],
        } = f.kind(i)
        {
            if let Some(k) = f.as_iconst(*b) {
                return (*a, k);
            }
            if let Some(k) = f.as_iconst(*a) {
                return (*b, k);
            }
        }
    }
    (v, 0)
}

/// The constant `t - e` (modulo 2^32) when the forms of `t` and `e` show it.
fn difference(f: &Function, t: Value, e: Value) -> Option<i32> {
    if let (Some(x), Some(y)) = (f.as_iconst(t), f.as_iconst(e)) {
        return Some(x.wrapping_sub(y));
    }
    let (tb, tk) = split_offset(f, t);
    let (eb, ek) = split_offset(f, e);
    same(f, tb, eb, 4).then(|| tk.wrapping_sub(ek))
}

fn apply(f: &mut Function, h: Block, plan: Plan) {
    let term = f.terminator(h).expect("planned on a terminator");
    // The arms' instructions move up, before the branch; one computing what an
    // instruction moved before computes is replaced by it.
    let mut moved: Vec<Value> = Vec::new();
    for &arm in &plan.arms {
        let insts: Vec<Inst> = f.layout.block_insts(arm).collect();
        for &i in &insts[..insts.len() - 1] {
            let r = f
                .inst_result(i)
                .expect("speculable instructions have results");
            if let Some(&earlier) = moved.iter().find(|&&m| same(f, m, r, 4)) {
                f.replace_all_uses(r, earlier);
                f.remove_inst(i);
                continue;
            }
            f.layout.remove_inst(i);
            f.layout.insert_inst_before(i, term);
            moved.push(r);
        }
    }
    // The else-arm's jump, with the twins replaced (or the branch's own else
    // edge, without arms).
    let else_args = match plan.arms.get(1) {
        Some(&arm) => match f.kind(f.terminator(arm).expect("an arm ends in a jump")) {
            InstKind::Jump { dest } => dest.args.clone(),
            _ => unreachable!("arms end in jumps"),
        },
        None => match f.kind(term) {
            InstKind::Br { else_dest, .. } => else_dest.args.clone(),
            _ => unreachable!("planned on a branch"),
        },
    };
    let mut args = Vec::with_capacity(plan.diffs.len());
    for (k, d) in plan.diffs.iter().enumerate() {
        let e = else_args[k];
        args.push(match d {
            None => e,
            Some(d) => scaled_add(f, term, e, plan.cond, *d),
        });
    }
    f.replace_kind(
        term,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(plan.join, args)),
        },
    );
    for arm in plan.arms {
        f.remove_block(arm);
    }
}

/// Inserts `e + c * d` before `at` (`c` is 0 or 1) and returns it.
fn scaled_add(f: &mut Function, at: Inst, e: Value, c: Value, d: i32) -> Value {
    let bin = |f: &mut Function, op: BinOp, a: Value, b: Value| -> Value {
        let i = f.insert_inst_before(at, InstKind::Binary { op, args: [a, b] }, Type::I32);
        f.inst_result(i).expect("a binary operation has a result")
    };
    match d {
        0 => e,
        1 if f.as_iconst(e) == Some(0) => c,
        1 => bin(f, BinOp::Add, e, c),
        -1 => bin(f, BinOp::Sub, e, c),
        d if (d as u32).is_power_of_two() => {
            let s = f.iconst((d as u32).trailing_zeros() as i32);
            let scaled = bin(f, BinOp::Shl, c, s);
            bin(f, BinOp::Add, e, scaled)
        }
        d => {
            let zero = f.iconst(0);
            let mask = bin(f, BinOp::Sub, zero, c);
            let k = f.iconst(d);
            let scaled = bin(f, BinOp::And, mask, k);
            bin(f, BinOp::Add, e, scaled)
        }
    }
}
