//! Loop idiom recognition: a counted loop that stores one byte-repeated value into
//! consecutive array elements is a `memset` of the whole range, called once before
//! the loop; the loop, left without work, is deleted.
//!
//! ```text
//!   i = 1; while (i <= n) { vis[i] = 0; i = i + 1; }
//!   =>
//!   memset(&vis[1], 0, 4 * max(n, 1))   // the rotated loop's body runs once first
//! ```
//!
//! This is LLVM's `LoopIdiomRecognize` and GCC's loop distribution into library
//! calls (`-ftree-loop-distribute-patterns`), for the fills SysY programs write:
//! clearing a `visited` array before each search, `-1` into a table of list heads,
//! `0x3f3f3f3f` as infinity, and the zeroing of local arrays with an initialiser.
//! The C library's `memset` (linked with every program, as gcc's own output calls
//! it for the same loops) stores eight bytes at a time; the loop stores four, with
//! an add and a branch for each.
//!
//! A *fill* is an instruction of a counted loop ([`Counter`], stepping by +1 or
//! -1, with the latch its only exit; a down-counting fill writes the same range
//! from its other end, and other steps leave gaps, so they are not fills) that runs on every iteration (its block dominates the
//! latch) and writes the element at the counter:
//! - `store v, gep base, i + c, 4` with `base` invariant and `v` a constant whose
//!   four bytes are equal (`0`, `-1`, `0x3f3f3f3f`, `0.0`);
//! - `call @memset(gep base, i + c, S; b; S)`: a row of `S` bytes, the fill an
//!   inner loop became, so a nest that clears a whole matrix row by row becomes one
//!   call (the inner loop goes first; once it is deleted, the outer is innermost).
//!
//! The iteration count `n` is the scalar evolution's back-edge-taken count of the
//! latch plus one (the loop is rotated, so its body runs once before the first
//! test), expanded in 64 bits before the loop ([`Expander`]; a count that cannot
//! be expanded leaves the loop as it is), and the fill becomes `memset(&base[low + c], b, n * S)` there, `low` the
//! counter's lowest value: `init` counting up, `init - (n - 1)` down. The fill's stores are the only
//! accesses the loop makes to their array: every other load, store or call in it
//! must touch a different global or local array (both known, [`address_root`]), or
//! there is none, and a call must be pure. Then the stores' order relative to the
//! rest of the loop is unobservable and the call can run first. A fill with a
//! constant count of fewer than [`MIN_CONSTANT_BYTES`] bytes stays a loop (full
//! unrolling makes it a few stores instead).
//!
//! The pass does nothing in a program that defines a function named `memset` (the
//! call would reach it). A loop left without effects is deleted at once
//! ([`loopdelete::delete_terminating`]: the counter proved it ends, even when that
//! proof leaned on the accesses just removed, as for `i <= n`), so an emptied inner
//! loop is gone before its outer loop is looked at.

use super::loopdelete;
use crate::analysis::induction::{Counter, RotatedLoop};
use crate::analysis::scev::expand::{remove_emitted, Expander};
use crate::analysis::scev::{ExprId, Exprs, ScalarEvolution};
use crate::analysis::{AnalysisManager, FunctionAnalyses, LoopId, Purity};
use crate::pipeline::Pass;
use ir::analysis::{address_root, DominatorTree};
use ir::{
    BinOp, Block, FuncId, Function, Inst, InstKind, Module, Signature, Type, UnOp, Value, ValueDef,
};

/// The loop idiom recognition pass.
pub struct LoopIdiom;

/// A fill with a constant iteration count that writes fewer bytes stays a loop.
pub const MIN_CONSTANT_BYTES: i64 = 64;

impl Pass for LoopIdiom {
    fn name(&self) -> &'static str {
        "loopidiom"
    }
    fn description(&self) -> &'static str {
        "replace loops that fill an array with one byte-repeated value by memset calls"
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let memset = match m.func_by_name("memset") {
            Some(id) if m.funcs[id].is_declaration() && m.funcs[id].sig == signature() => id,
            // The program's own `memset`, or another declaration of the name.
            Some(_) => return false,
            None if m.funcs.values().any(stores_a_splat) => {
                m.declare_function("memset", signature())
            }
            None => return false,
        };
        let purity = am.purity(m);
        am.each_function(m, |f, fa| run(f, &purity, memset, fa) > 0)
    }
}

/// The C library's `memset`, when the module declares it (and defines no function
/// of that name).
pub(crate) fn memset_of(m: &Module) -> Option<FuncId> {
    m.func_by_name("memset")
        .filter(|&id| m.funcs[id].is_declaration())
}

/// `(pointer, byte, length)` of `i` when it is a call of `memset` with a constant
/// length (`sext` of an `i32` constant, as the loop idiom pass writes it).
pub(crate) fn memset_call(
    f: &Function,
    memset: Option<FuncId>,
    i: Inst,
) -> Option<(Value, u8, Option<i64>)> {
    let InstKind::Call { callee, args } = f.kind(i) else {
        return None;
    };
    if Some(*callee) != memset {
        return None;
    }
    let &[ptr, byte, len] = &args[..] else {
        return None;
    };
    let byte = f.as_iconst(byte)? as u8;
    let len = f.as_sext_iconst(len).map(i64::from);
    Some((ptr, byte, len))
}

/// C's `void *memset(void *, int, size_t)`.
fn signature() -> Signature {
    Signature {
        params: vec![Type::Ptr, Type::I32, Type::I64],
        ret: Type::Ptr,
        variadic: false,
    }
}

/// Replaces the fills of `f`'s loops by calls of `memset` (the function `memset`
/// of the module, with [`signature`]), with the analyses of `fa`; returns how many
/// loops lost their fills.
pub fn run(f: &mut Function, purity: &Purity, memset: FuncId, fa: &mut FunctionAnalyses) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let mut done = 0;
    // Loops whose count could not be expanded before them (left as they are).
    let mut refused: Vec<Block> = Vec::new();
    // Each round moves the fills of one loop out of it (one level up the nest), so
    // the rounds end.
    loop {
        let (found, exprs) = {
            let mut se = fa.scev(f);
            let loops = se.loops;
            let found = loops
                .loops()
                .filter(|(_, lp)| !refused.contains(&lp.header))
                .find_map(|(id, _)| plan(&mut se, id, purity, memset));
            // The count's expressions leave with the plan: the analysis is
            // started anew next time.
            (found, std::mem::take(&mut se.exprs))
        };
        fa.forget_scev();
        let Some(plan) = found else {
            return done;
        };
        let dt = fa.loops(f).1;
        if !apply(f, &plan, &exprs, dt, memset) {
            refused.push(plan.header);
            continue;
        }
        done += 1;
        // The counter bounded the loop (`Counter`), whatever the fills' accesses were.
        loopdelete::delete_terminating(f, purity, plan.header);
        fa.forget();
    }
}

/// Whether `f` stores a byte-repeated constant through an address computation: the
/// only functions the pass can change.
fn stores_a_splat(f: &Function) -> bool {
    f.layout.blocks().any(|b| {
        f.layout.block_insts(b).any(|i| match *f.kind(i) {
            InstKind::Store { value, ptr } => {
                splat_byte(f, value).is_some()
                    && matches!(
                        f.def_inst(ptr).map(|g| f.kind(g)),
                        Some(InstKind::Gep { .. })
                    )
            }
            _ => false,
        })
    })
}

/// The byte `b` when `v` is a constant whose four bytes are all `b`.
fn splat_byte(f: &Function, v: Value) -> Option<u8> {
    let bits = match f.value_def(v) {
        ValueDef::IConst(c) => c as u32,
        ValueDef::FConst(bits) => bits,
        _ => return None,
    };
    let b = bits as u8;
    (bits == u32::from(b) * 0x0101_0101).then_some(b)
}

/// One fill: `bytes` bytes at `gep base, i + offset, bytes` each iteration.
struct Fill {
    inst: Inst,
    base: Value,
    offset: i32,
    bytes: i32,
    byte: u8,
}

/// The fills of one loop and what their calls need.
struct Plan {
    header: Block,
    preheader: Block,
    counter: Counter,
    /// The iteration count, when it is a constant.
    trips: Option<i32>,
    /// Otherwise the scalar evolution's count of iterations (its back-edge-taken
    /// count plus one: the rotated body runs once first), an `i64` expression.
    count: Option<ExprId>,
    fills: Vec<Fill>,
}

/// The plan for loop `id`, if it is an innermost counted loop with fills.
fn plan(se: &mut ScalarEvolution, id: LoopId, purity: &Purity, memset: FuncId) -> Option<Plan> {
    let (f, cfg, dt, loops) = (se.f, se.cfg, se.dt, se.loops);
    let lp = loops.get(id);
    if !lp.children.is_empty() {
        return None;
    }
    let l = RotatedLoop::of(f, cfg, loops, id)?;
    let counter = Counter::of_scev(se, id, &l)?;
    // Down by one fills the same elements in the other order; other steps
    // leave gaps (not a `memset`).
    if !counter.unit_step() {
        return None;
    }
    let inside = |b: Block| loops.contains(id, b);
    let only_latch_exits = lp
        .blocks
        .iter()
        .all(|&b| b == l.latch || f.successors(b).iter().all(|&s| inside(s)));
    if !only_latch_exits {
        return None;
    }
    let invariant = |v: Value| f.value_block(v).is_none_or(|b| !inside(b));
    // The constant distance of `index` from the counter, as scalar evolution
    // sees it (`i + 1`, `(i + 3) - 2`, a second counter in step with `i`).
    let counter_expr = se.get(counter.param);
    let mut at_counter = |index: Value| -> Option<i32> {
        let e = se.get(index);
        if se.exprs.ty(e) != se.exprs.ty(counter_expr) {
            return None;
        }
        let d = se.exprs.sub(loops, f, e, counter_expr);
        i32::try_from(se.exprs.as_const(d)?).ok()
    };
    // `(base, offset)` when `ptr` is `gep base, i + offset, stride` with `base`
    // invariant.
    let mut element = |ptr: Value, stride: i32| -> Option<(Value, i32)> {
        match *f.kind(f.def_inst(ptr)?) {
            InstKind::Gep {
                base,
                index,
                stride: s,
            } if i64::from(s) == i64::from(stride) && invariant(base) => {
                Some((base, at_counter(index)?))
            }
            _ => None,
        }
    };
    let mut fills: Vec<Fill> = Vec::new();
    let mut others: Vec<Value> = Vec::new();
    for &b in lp.blocks.iter() {
        let every_iteration = dt.dominates(b, l.latch);
        for i in f.layout.block_insts(b) {
            match f.kind(i) {
                InstKind::Store { value, ptr } => {
                    let fill = every_iteration
                        .then(|| {
                            let byte = splat_byte(f, *value)?;
                            let (base, offset) = element(*ptr, 4)?;
                            Some(Fill {
                                inst: i,
                                base,
                                offset,
                                bytes: 4,
                                byte,
                            })
                        })
                        .flatten();
                    match fill {
                        Some(fill) => fills.push(fill),
                        None => others.push(*ptr),
                    }
                }
                InstKind::Load { ptr, .. } => others.push(*ptr),
                InstKind::Call { callee, .. } if *callee == memset && every_iteration => {
                    let (ptr, byte, len) = memset_call(f, Some(memset), i)?;
                    let bytes = i32::try_from(len.filter(|&s| s > 0)?).ok()?;
                    let (base, offset) = element(ptr, bytes)?;
                    fills.push(Fill {
                        inst: i,
                        base,
                        offset,
                        bytes,
                        byte,
                    });
                }
                InstKind::Call { callee, .. } if !purity.effects(*callee).is_pure() => {
                    return None;
                }
                _ => {}
            }
        }
    }
    if fills.is_empty() {
        return None;
    }
    // The fills' arrays are touched by nothing else in the loop.
    if fills.len() > 1 || !others.is_empty() {
        let roots: Vec<Value> = fills
            .iter()
            .map(|fill| known_object(f, fill.base))
            .collect::<Option<_>>()?;
        for (k, r) in roots.iter().enumerate() {
            if roots[..k].contains(r) {
                return None;
            }
        }
        for &p in &others {
            if known_object(f, p).is_none_or(|r| roots.contains(&r)) {
                return None;
            }
        }
    }
    let trips = counter.trip_count();
    let count = match trips {
        Some(n) => {
            let smallest = fills.iter().map(|fill| fill.bytes).min()?;
            if i64::from(n) * i64::from(smallest) < MIN_CONSTANT_BYTES {
                return None;
            }
            None
        }
        None => {
            // Its predicates (an inclusive bound short of `MAX`) hold: the
            // counter found them discharged (`Counter::of_scev`).
            let taken = se.exit_count(id, l.latch)?;
            let one = se.exprs.constant(Type::I64, 1);
            Some(se.exprs.add(loops, f, &[taken.count, one], true))
        }
    };
    Some(Plan {
        header: l.header,
        preheader: l.preheader,
        counter,
        trips,
        count,
        fills,
    })
}

/// The global or the `alloc` that `p` points into, if it is one.
fn known_object(f: &Function, p: Value) -> Option<Value> {
    let (root, _) = address_root(f, p);
    match f.value_def(root) {
        ValueDef::Global(_) => Some(root),
        ValueDef::Inst(i) if matches!(f.kind(i), InstKind::Alloc { .. }) => Some(root),
        _ => None,
    }
}

/// Puts the calls of `plan` at the end of its preheader and removes its fills
/// (`exprs` holds its count, `dt` the dominators of `f` as it is); false, with
/// `f` unchanged, when the count cannot be computed there.
fn apply(f: &mut Function, plan: &Plan, exprs: &Exprs, dt: &DominatorTree, memset: FuncId) -> bool {
    let at = f
        .terminator(plan.preheader)
        .expect("a preheader ends in a jump");
    // The iteration count, in 64 bits, when it is not a constant.
    let count = match plan.count {
        Some(e) => {
            let preheader = plan.preheader;
            let available = |f: &Function, v: Value| {
                f.value_block(v).is_none_or(|b| dt.dominates(b, preheader))
            };
            let emitted_after = f.layout.prev_inst(at);
            let mut ex = Expander::new(exprs, at, at, EXPANSION_BUDGET);
            match ex.expand(f, e, &available) {
                Some(n) => Some(n),
                None => {
                    remove_emitted(f, emitted_after, at);
                    return false;
                }
            }
        }
        None => None,
    };
    let mut ins = Inserter { f, at };
    let c = plan.counter;
    let (low, low_offset) = ins.lowest(&c, plan.trips, count);
    for fill in &plan.fills {
        let offset = fill.offset.wrapping_add(low_offset);
        let first = match ins.f.as_iconst(low) {
            Some(k) => ins.f.iconst(k.wrapping_add(offset)),
            None if offset == 0 => low,
            None => {
                let off = ins.f.iconst(offset);
                ins.binary(BinOp::Add, low, off, Type::I32)
            }
        };
        let ptr = match ins.f.as_iconst(first) {
            Some(0) => fill.base,
            _ => ins.emit(
                InstKind::Gep {
                    base: fill.base,
                    index: first,
                    stride: fill.bytes as u32,
                },
                Type::Ptr,
            ),
        };
        let whole = plan
            .trips
            .and_then(|n| n.checked_mul(fill.bytes))
            .map(|len| ins.sext_const(len));
        let len = match (whole, count) {
            (Some(len), _) => len,
            (None, Some(n)) => {
                let s = ins.sext_const(fill.bytes);
                ins.binary(BinOp::Mul64, n, s, Type::I64)
            }
            (None, None) => unreachable!("a count is either constant or computed"),
        };
        let byte = ins.f.iconst(i32::from(fill.byte));
        let call = ins.f.insert_inst_before(
            at,
            InstKind::Call {
                callee: memset,
                args: Box::new([ptr, byte, len]),
            },
            Type::Ptr,
        );
        ins.f.copy_src_loc(fill.inst, call);
        ins.f.remove_inst(fill.inst);
    }
    true
}

/// How many instructions the iteration count may take to expand.
const EXPANSION_BUDGET: usize = 32;

/// Emits instructions before `at`.
struct Inserter<'f> {
    f: &'f mut Function,
    at: Inst,
}

impl Inserter<'_> {
    fn emit(&mut self, kind: InstKind, ty: Type) -> Value {
        let i = self.f.insert_inst_before(self.at, kind, ty);
        self.f.inst_result(i).expect("the instruction has a result")
    }

    fn binary(&mut self, op: BinOp, a: Value, b: Value, ty: Type) -> Value {
        self.emit(InstKind::Binary { op, args: [a, b] }, ty)
    }

    fn sext(&mut self, v: Value) -> Value {
        self.emit(
            InstKind::Unary {
                op: UnOp::SExt,
                arg: v,
            },
            Type::I64,
        )
    }

    fn sext_const(&mut self, c: i32) -> Value {
        let v = self.f.iconst(c);
        self.sext(v)
    }

    /// The lowest counter value of the loop counted by `c` (a unit step), as a
    /// value and a constant to add to it: the start counting up; counting down,
    /// the start less the iteration count `n` plus one (`trips` when constant,
    /// else `count`), computed in `i32`: the wrapping sum is the exact value the
    /// loop's last iteration computes.
    fn lowest(&mut self, c: &Counter, trips: Option<i32>, count: Option<Value>) -> (Value, i32) {
        if c.step > 0 {
            return (c.init, 0);
        }
        match (trips, count) {
            (Some(n), _) => (c.init, 1i32.wrapping_sub(n)),
            (None, Some(n)) => {
                let n = self.emit(
                    InstKind::Unary {
                        op: UnOp::Trunc,
                        arg: n,
                    },
                    Type::I32,
                );
                (self.binary(BinOp::Sub, c.init, n, Type::I32), 1)
            }
            (None, None) => unreachable!("a count is either constant or computed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MIN_CONSTANT_BYTES;
    use crate::passes::testutil::{exec, run, same_behaviour, XorShift};

    /// A global table of 100 elements, each 7, printed after `main`'s loop: a
    /// rotated loop from `init` to `bound` (both read from stdin) that stores
    /// `value` into `@a[i + offset]` and continues while `i' cmp bound`, where `i'`
    /// is `i + 1` when `next` (else `i`).
    fn fill(value: &str, offset: i32, cmp: &str, next: bool) -> String {
        let sevens = vec!["7"; 100].join(", ");
        let tested = if next { "%4" } else { "%2" };
        format!(
            r#"
global @a: [i32; 100] = [{sevens}]
declare @getint() -> i32
declare @putarray(i32, ptr) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  jump bb1(%0)
bb1(%2: i32):
  %3 = add %2, {offset}
  %6 = gep @a, %3, 4
  store {value}, %6
  %4 = add %2, 1
  %5 = {cmp} {tested}, %1
  br %5, bb1(%4), bb2
bb2:
  call @putarray(100, @a)
  ret 0
}}
"#
        )
    }

    fn main_of(out: &str) -> &str {
        &out[out.find("func @main").expect("main is printed")..]
    }

    #[test]
    fn a_counted_fill_becomes_one_call_before_where_the_loop_was() {
        let src = fill("0", 0, "sle", true);
        // From 3 to 50, a single element, and a start past the bound (the rotated
        // body still runs once).
        for input in ["3 50", "10 10", "20 5", "0 99"] {
            same_behaviour(&src, &["loopidiom"], input);
        }
        let out = run(&src, &["loopidiom"]);
        let main = main_of(&out);
        assert_eq!(main.matches("call @memset(").count(), 1, "{out}");
        assert!(!main.contains("store") && !main.contains("bb1("), "{out}");
        assert!(
            out.contains("declare @memset(ptr, i32, i64) -> ptr"),
            "{out}"
        );
    }

    #[test]
    fn every_test_form_and_byte_repeated_value_counts_right() {
        // `(cmp, tests next)`; the bounds keep `i + offset` within the table.
        let forms = [("slt", true), ("slt", false), ("sle", true), ("sle", false)];
        let values = ["0", "-1", "1061109567", "-2139062144"]; // 0x3f3f3f3f, 0x80808080
        let mut rng = XorShift(0x5eed_1d10);
        for (cmp, next) in forms {
            for value in values {
                let offset = (rng.next() % 5) as i32 - 2;
                let src = fill(value, offset, cmp, next);
                let out = run(&src, &["loopidiom"]);
                assert!(
                    out.contains("call @memset("),
                    "{cmp} {next} {value}:\n{out}"
                );
                for _ in 0..6 {
                    let init = 2 + (rng.next() % 40) as i32;
                    let bound = 2 + (rng.next() % 90) as i32;
                    same_behaviour(&src, &["loopidiom"], &format!("{init} {bound}"));
                }
            }
        }
    }

    #[test]
    fn a_float_zero_is_a_byte_repeated_value_and_minus_zero_is_not() {
        let float_fill = |value: &str| {
            fill(value, 0, "slt", true)
                .replace("[i32; 100] = [", "[f32; 100] = [")
                .replace("putarray", "putfarray")
                .replace(", 7]", ", 7.0]")
                .replace("7, ", "7.0, ")
        };
        let out = same_behaviour(&float_fill("0.0"), &["loopidiom"], "4 60");
        assert!(out.contains("call @memset("), "{out}");
        let out = same_behaviour(&float_fill("-0.0"), &["loopidiom"], "4 60");
        assert!(!out.contains("call @memset("), "{out}");
    }

    #[test]
    fn a_matrix_cleared_row_by_row_is_one_call() {
        // for i in 0..10: for j in 0..25: m[i][j] = 0 (rows of 100 bytes).
        let src = r#"
global @m: [i32; 250] = [5, 6, 7]
declare @putarray(i32, ptr) -> void

func @main() -> i32 {
bb0:
  jump bb1(0)
bb1(%0: i32):
  %1 = gep @m, %0, 100
  jump bb2(0)
bb2(%2: i32):
  %3 = gep %1, %2, 4
  store 0, %3
  %4 = add %2, 1
  %5 = slt %4, 25
  br %5, bb2(%4), bb3
bb3:
  %6 = add %0, 1
  %7 = slt %6, 10
  br %7, bb1(%6), bb4
bb4:
  call @putarray(250, @m)
  ret 0
}
"#;
        let out = same_behaviour(src, &["loopidiom"], "");
        let main = main_of(&out);
        assert_eq!(main.matches("call @memset(@m, 0, ").count(), 1, "{out}");
        assert!(main.contains("sext 1000"), "the whole matrix: {out}");
        assert!(!main.contains("store") && !main.contains("bb2("), "{out}");
    }

    #[test]
    fn two_arrays_filled_in_one_loop_get_a_call_each() {
        let src = fill("0", 0, "slt", true)
            .replace(
                "declare @getint",
                "global @b: [i32; 100] = [1, 2, 3]\ndeclare @getint",
            )
            .replace(
                "  store 0, %6\n",
                "  store 0, %6\n  %7 = gep @b, %2, 4\n  store -1, %7\n",
            )
            .replace("  ret 0", "  call @putarray(100, @b)\n  ret 0");
        let out = same_behaviour(&src, &["loopidiom"], "5 70");
        assert_eq!(main_of(&out).matches("call @memset(").count(), 2, "{out}");
    }

    #[test]
    fn an_index_a_constant_away_from_the_counter_in_any_form_is_a_fill() {
        // `a[(i + 3) - 2]`: scalar evolution sees `i + 1`.
        let sub = fill("0", 3, "slt", true).replace(
            "  %6 = gep @a, %3, 4\n",
            "  %7 = sub %3, 2\n  %6 = gep @a, %7, 4\n",
        );
        // `a[j]` with `j` a second counter that starts at `i + 2` and steps with it.
        let twin = fill("0", 0, "slt", true)
            .replace("jump bb1(%0)", "%9 = add %0, 2\n  jump bb1(%0, %9)")
            .replace("bb1(%2: i32):", "bb1(%2: i32, %8: i32):")
            .replace("%6 = gep @a, %3, 4", "%6 = gep @a, %8, 4")
            .replace(
                "  %4 = add %2, 1\n",
                "  %4 = add %2, 1\n  %10 = add %8, 1\n",
            )
            .replace("bb1(%4)", "bb1(%4, %10)");
        for src in [sub, twin] {
            for input in ["3 50", "0 90", "20 5"] {
                same_behaviour(&src, &["loopidiom"], input);
            }
            let out = run(&src, &["loopidiom"]);
            assert_eq!(main_of(&out).matches("call @memset(").count(), 1, "{out}");
            assert!(!main_of(&out).contains("store"), "{out}");
        }
    }

    /// `fill` counting down by one: `i = init; do { a[i + offset] = value; i--; }
    /// while (i' cmp bound)`.
    fn fill_down(value: &str, offset: i32, cmp: &str, next: bool) -> String {
        fill(value, offset, cmp, next).replace("%4 = add %2, 1", "%4 = add %2, -1")
    }

    #[test]
    fn a_down_counting_fill_is_a_call_on_the_same_range() {
        let forms = [("sgt", true), ("sgt", false), ("sge", true), ("sge", false)];
        let mut rng = XorShift(0x0d0_1d10);
        for (cmp, next) in forms {
            for offset in [-2, 0, 3] {
                let src = fill_down("-1", offset, cmp, next);
                let out = run(&src, &["loopidiom"]);
                assert_eq!(main_of(&out).matches("call @memset(").count(), 1, "{out}");
                assert!(!main_of(&out).contains("store"), "{out}");
                // Bounds keep `i + offset` within the table; a start below the
                // bound runs the body once.
                for input in ["50 3", "10 10", "11 10", "5 20", "96 3"] {
                    same_behaviour(&src, &["loopidiom"], input);
                }
                for _ in 0..6 {
                    let init = 3 + (rng.next() % 93) as i32;
                    let bound = 3 + (rng.next() % 93) as i32;
                    same_behaviour(&src, &["loopidiom"], &format!("{init} {bound}"));
                }
            }
        }
        // A constant count: from 90 down while `i - 1 >= 10`, elements 10..=90.
        let constant = fill_down("0", 0, "sge", true)
            .replace("  %0 = call @getint()\n  %1 = call @getint()\n", "")
            .replace("jump bb1(%0)", "jump bb1(90)")
            .replace("sge %4, %1", "sge %4, 10");
        let out = same_behaviour(&constant, &["loopidiom"], "");
        assert!(out.contains("call @memset("), "{out}");
        assert!(!main_of(&out).contains("store"), "{out}");
    }

    #[test]
    fn steps_other_than_one_leave_gaps_and_stay_loops() {
        // Constant counts of 30 or more iterations, which a unit step would fill.
        for (step, start, cmp, bound) in [(2, 0, "slt", 90), (-2, 95, "sgt", 3), (3, 1, "slt", 95)]
        {
            let src = fill("0", 0, cmp, true)
                .replace("  %0 = call @getint()\n  %1 = call @getint()\n", "")
                .replace("jump bb1(%0)", &format!("jump bb1({start})"))
                .replace("%4 = add %2, 1", &format!("%4 = add %2, {step}"))
                .replace(&format!("{cmp} %4, %1"), &format!("{cmp} %4, {bound}"));
            stays(&src, "");
        }
    }

    /// `if (n GUARD) { i = 0; do { a[i] = 0; i++; } while (i != n); }`, `n` read.
    fn not_equal_fill(guard: &str) -> String {
        let sevens = vec!["7"; 100].join(", ");
        format!(
            r#"
global @a: [i32; 100] = [{sevens}]
declare @getint() -> i32
declare @putarray(i32, ptr) -> void

func @main() -> i32 {{
bb0:
  %1 = call @getint()
  %7 = {guard}
  br %7, bb3, bb2
bb3:
  jump bb1(0)
bb1(%2: i32):
  %6 = gep @a, %2, 4
  store 0, %6
  %4 = add %2, 1
  %5 = ne %4, %1
  br %5, bb1(%4), bb2
bb2:
  call @putarray(100, @a)
  ret 0
}}
"#
        )
    }

    #[test]
    fn a_not_equal_loop_a_guard_orders_is_a_fill() {
        let src = not_equal_fill("sgt %1, 0");
        for input in ["1", "37", "100", "0", "-4"] {
            let out = same_behaviour(&src, &["loopidiom"], input);
            assert!(out.contains("call @memset("), "{out}");
            assert!(!main_of(&out).contains("store"), "{out}");
        }
        // With `n >= 0`, `n = 0` would run `i + 1` round the whole of `i32`.
        stays(&not_equal_fill("sge %1, 0"), "20");
    }

    /// Asserts that `src` keeps its loop: no `memset`, same behaviour.
    #[track_caller]
    fn stays(src: &str, input: &str) {
        let out = same_behaviour(src, &["loopidiom"], input);
        assert!(!out.contains("call @memset("), "{out}");
    }

    #[test]
    fn fills_that_must_stay_loops() {
        // A value whose bytes differ.
        stays(&fill("1", 0, "slt", true), "3 60");
        stays(&fill("257", 0, "slt", true), "3 60");
        // The loop also reads the array it fills: a[i] = 0 after reading a[i + 1].
        let reads = fill("0", 0, "slt", true).replace(
            "  store 0, %6\n",
            "  %8 = add %2, 1\n  %9 = gep @a, %8, 4\n  %10 = load i32, %9\n  %11 = gep @a, 0, 4\n  store %10, %11\n  store 0, %6\n",
        );
        stays(&reads, "3 60");
        // The store runs on some iterations only.
        let some = fill("0", 0, "slt", true).replace(
            "  %3 = add %2, 0\n  %6 = gep @a, %3, 4\n  store 0, %6\n  %4 = add %2, 1\n",
            "  %3 = add %2, 0\n  %6 = gep @a, %3, 4\n  %9 = srem %2, 2\n  br %9, bb3, bb4\nbb3:\n  store 0, %6\n  jump bb4\nbb4:\n  %4 = add %2, 1\n",
        );
        assert!(some.contains("bb3:"), "{some}");
        stays(&some, "3 60");
        // An early exit: the loop may stop before the bound.
        let early = fill("0", 0, "slt", true).replace(
            "  %4 = add %2, 1\n",
            "  %9 = sgt %2, 40\n  br %9, bb2, bb3\nbb3:\n  %4 = add %2, 1\n",
        );
        stays(&early, "3 60");
        // A constant count too small for a call.
        let small = fill("0", 0, "slt", true)
            .replace("  %0 = call @getint()\n  %1 = call @getint()\n", "")
            .replace("jump bb1(%0)", "jump bb1(0)")
            .replace(
                "slt %4, %1",
                &format!("slt %4, {}", MIN_CONSTANT_BYTES / 4 - 1),
            );
        stays(&small, "");
        // The same loop with enough elements does become a call.
        let enough = small.replace(
            &format!("slt %4, {}", MIN_CONSTANT_BYTES / 4 - 1),
            &format!("slt %4, {}", MIN_CONSTANT_BYTES / 4),
        );
        let out = same_behaviour(&enough, &["loopidiom"], "");
        assert!(out.contains("call @memset("), "{out}");
    }

    #[test]
    fn a_store_through_an_unknown_pointer_keeps_the_loop() {
        // @f(p): p may point into @a, and the loop stores to both.
        let src = r#"
global @a: [i32; 100] = [7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7]
declare @getint() -> i32
declare @putarray(i32, ptr) -> void

func @f(ptr, i32) -> void {
bb0(%0: ptr, %1: i32):
  jump bb1(0)
bb1(%2: i32):
  %3 = gep @a, %2, 4
  store 0, %3
  store %2, %0
  %4 = add %2, 1
  %5 = slt %4, %1
  br %5, bb1(%4), bb2
bb2:
  ret
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = gep @a, 10, 4
  call @f(%1, %0)
  call @putarray(100, @a)
  ret 0
}
"#;
        stays(src, "40");
    }

    #[test]
    fn a_program_with_its_own_memset_is_left_alone() {
        let src = fill("0", 0, "slt", true).replace(
            "func @main()",
            "func @memset(ptr, i32, i32) -> ptr {\nbb0(%0: ptr, %1: i32, %2: i32):\n  ret %0\n}\n\nfunc @main()",
        );
        stays(&src, "3 60");
    }

    #[test]
    fn the_call_writes_what_the_loop_wrote() {
        // Against the interpreter's own run of the loop: 7s outside [init, last].
        let src = fill("-1", 0, "slt", false);
        let out = run(&src, &["loopidiom"]);
        let m = ir::parse_module(&out).unwrap();
        let (printed, _) = exec(&m, "5 9");
        let want: Vec<&str> = (0..100)
            .map(|i| if (5..=9).contains(&i) { "-1" } else { "7" })
            .collect();
        assert_eq!(printed.trim(), format!("100: {}", want.join(" ")));
    }
}
