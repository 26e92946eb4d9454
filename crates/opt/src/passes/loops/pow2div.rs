//! Division by a doubling induction variable: `x / p` and `x % p`, where `p` is a
//! loop's power-of-two induction variable, become shifts by a new exponent
//! induction variable.
//!
//! ```text
//!   h(p):  q = sdiv x, p             h(p, e):  b = and (ashr x, 31), (add p, -1)
//!          ...                 =>              q = ashr (add x, b), e
//!          n = shl p, 1                        ...
//!          c = slt n, K                        n = shl p, 1
//!          br c, h(n), exit                    br c, h(n, add e, 1), exit
//! ```
//!
//! This is the reduction GCC and LLVM apply to an unsigned `x / (1 << k)` (a
//! logical shift by `k`), extended to signed division the way a division by a
//! constant power of two is lowered: a negative dividend is biased by `p - 1` so
//! the shift truncates toward zero (Warren, "Hacker's Delight", §10-1). It turns a
//! 20-cycle divide into four single-cycle operations; loops that take a number
//! apart bit by bit (`x / i % 2` with `i = 1, 2, 4, ...`) are its target.
//!
//! When it applies: a loop entered by one edge from outside and continued by one
//! latch's conditional branch (the rotated shape of [`crate::analysis::RotatedLoop`],
//! without the need for a dedicated preheader), whose header parameter `p` enters as a constant `2^c` and comes back from the latch as
//! `n = p << s` (or `p * 2^s`, or `p + p`), while the latch continues only if
//! `n < K` for a constant `K <= 2^(31 - s)`, with `c + s <= 30`. Then every value
//! `p` takes in the loop is `2^e` with `e <= 30`, exactly (by induction: `p = 2^e`
//! with `e + s <= 30` makes `n = 2^(e + s)` exact and positive, and it continues
//! only if `2^(e + s) < K <= 2^(31 - s)`, so again `e + s + s <= 30`): positive,
//! never wrapped, and `e` counts the shifts. The bias `x < 0 ? p - 1 : 0` cannot
//! overflow the addition. Divisions by `p` outside the loop are left alone.
//!
//! The same holds for a divisor loaded from a read-only table of powers of two
//! (`x / pow2[k]`), the exponent then coming from a companion table
//! ([`by_power_table`]).

use crate::analysis::ranges::{Range, Ranges};
use crate::analysis::{AnalysisManager, WrittenGlobals};
use crate::analysis::{LoopForest, LoopId};
use crate::pipeline::Pass;
use ir::analysis::ControlFlowGraph;
use ir::{
    BinOp, Block, BlockCall, CmpOp, FuncId, Function, GlobalData, GlobalId, GlobalInit, Inst,
    InstKind, Module, Type, Value, ValueDef,
};

/// The division-by-doubling-induction-variable pass.
pub struct Pow2Div;

impl Pass for Pow2Div {
    fn name(&self) -> &'static str {
        "pow2div"
    }
    fn description(&self) -> &'static str {
        "divide by a doubling induction variable with shifts"
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let written = WrittenGlobals::compute(m, &am.purity(m));
        let tables = by_power_table(m, &written) > 0;
        am.each_function(m, |f, fa| {
            let (cfg, _, loops) = fa.loops(f);
            run_on(f, cfg, loops) > 0
        }) || tables
    }
}

/// The second rule: `x / t[k]` and `x % t[k]` with `t` a global no instruction can
/// write ([`WrittenGlobals`]) whose `i32` elements are all powers of two
/// `<= 2^30` become the same shifts, the exponent loaded from a companion table
/// `t.log2` of the elements' logarithms. Returns how many divisions changed.
pub fn by_power_table(m: &mut Module, written: &WrittenGlobals) -> usize {
    // The tables, and for each function the divisions through them.
    let mut tables: Vec<(GlobalId, Option<GlobalId>)> = Vec::new();
    let mut sites: Vec<(FuncId, Inst, Value, usize)> = Vec::new();
    for (fid, f) in m.funcs.iter() {
        // The index ranges, computed for the first division through a table.
        let mut ranges: Option<Ranges> = None;
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                let InstKind::Binary {
                    op: BinOp::SDiv | BinOp::SRem,
                    args: [_, d],
                } = *f.kind(i)
                else {
                    continue;
                };
                let Some((g, k)) = table_load(f, d) else {
                    continue;
                };
                if written.is_written(g) {
                    continue;
                }
                let range = ranges
                    .get_or_insert_with(|| Ranges::compute(f, &ControlFlowGraph::compute(f)))
                    .get(k);
                if !powers_of_two(&m.globals[g], range) {
                    continue;
                }
                let t = match tables.iter().position(|&(t, _)| t == g) {
                    Some(t) => t,
                    None => {
                        tables.push((g, None));
                        tables.len() - 1
                    }
                };
                sites.push((fid, i, k, t));
            }
        }
    }
    for t in &mut tables {
        let g = &m.globals[t.0];
        let words = (0..g.len as usize)
            .map(|i| g.word(i).trailing_zeros())
            .collect();
        let log2 = GlobalData {
            name: format!("{}.log2", g.name),
            elem: Type::I32,
            len: g.len,
            init: GlobalInit::Words(words),
        };
        t.1 = Some(m.add_global(log2));
    }
    for &(fid, i, k, t) in &sites {
        let f = &mut m.funcs[fid];
        let InstKind::Binary { args: [_, d], .. } = *f.kind(i) else {
            unreachable!("a division")
        };
        let table = f.global_addr(tables[t].1.expect("made above"));
        let at = f.insert_inst_before(
            i,
            InstKind::Gep {
                base: table,
                index: k,
                stride: 4,
            },
            Type::Ptr,
        );
        let at = f.inst_result(at).expect("gep has a result");
        let e = f.insert_inst_before(
            i,
            InstKind::Load {
                ty: Type::I32,
                ptr: at,
            },
            Type::I32,
        );
        let e = f.inst_result(e).expect("load has a result");
        rewrite(f, i, d, e);
    }
    sites.len()
}

/// `d = load i32, gep @t, k, 4`: the global and the index.
fn table_load(f: &Function, d: Value) -> Option<(GlobalId, Value)> {
    let InstKind::Load { ty: Type::I32, ptr } = *f.kind(f.def_inst(d)?) else {
        return None;
    };
    let InstKind::Gep {
        base,
        index,
        stride: 4,
    } = *f.kind(f.def_inst(ptr)?)
    else {
        return None;
    };
    match f.value_def(base) {
        ValueDef::Global(g) => Some((g, index)),
        _ => None,
    }
}

/// Whether every element of `g` (an `i32` array) an index in `range` can read is
/// `2^e` with `e <= 30` (the index's value range, as LLVM's SimplifyCFG switch-table
/// and GCC's VRP bound table reads; an index out of the array reads nothing the
/// program may rely on). The logarithm table's other entries are never read.
fn powers_of_two(g: &GlobalData, range: Option<Range>) -> bool {
    let last = i64::from(g.len) - 1;
    let (lo, hi) = range.map_or((0, last), |r| {
        (i64::from(r.lo).max(0), i64::from(r.hi).min(last))
    });
    g.elem == Type::I32
        && g.len > 0
        && lo <= hi
        && (lo..=hi).all(|i| log2(g.word(i as usize) as i32).is_some_and(|e| e <= 30))
}

/// A loop with one entry edge and one latch ending in a conditional branch.
struct Shape {
    header: Block,
    /// The block outside the loop whose terminator enters the header, and which of
    /// its targets does.
    entry: Block,
    entry_target: usize,
    /// The latch's conditional branch, and which of its targets goes back.
    branch: Inst,
    back: usize,
}

impl Shape {
    fn of(f: &Function, cfg: &ControlFlowGraph, loops: &LoopForest, id: LoopId) -> Option<Self> {
        let lp = loops.get(id);
        let [latch] = lp.latches[..] else {
            return None;
        };
        let header = lp.header;
        let preds = cfg.unique_preds(header);
        if preds.len() != 2 {
            return None;
        }
        let entry = *preds.iter().find(|&&p| p != latch)?;
        if loops.contains(id, entry) {
            return None;
        }
        let into_header = |term: Inst| -> Vec<usize> {
            let targets = f.kind(term).targets();
            (0..targets.len())
                .filter(|&w| targets[w].block == header)
                .collect()
        };
        let [entry_target] = into_header(f.terminator(entry)?)[..] else {
            return None;
        };
        let branch = f.terminator(latch)?;
        if !matches!(f.kind(branch), InstKind::Br { .. }) {
            return None;
        }
        let [back] = into_header(branch)[..] else {
            return None;
        };
        Some(Shape {
            header,
            entry,
            entry_target,
            branch,
            back,
        })
    }
}

/// A header parameter known to be `2^e` in every iteration.
struct Doubling {
    param: Value,
    /// Exponent of the initial value.
    start: i32,
    /// Exponent added per iteration.
    step: i32,
}

/// Rewrites the divisions that qualify in `f`; returns how many.
pub fn run(f: &mut Function) -> usize {
    crate::passes::with_loops(f, |f, cfg, _, loops| run_on(f, cfg, loops))
}

/// [`run`] with the function's analyses given.
pub fn run_on(f: &mut Function, cfg: &ControlFlowGraph, loops: &LoopForest) -> usize {
    let mut count = 0;
    for (id, _) in loops.loops() {
        let Some(shape) = Shape::of(f, cfg, loops, id) else {
            continue;
        };
        let params = f.block_params(shape.header).to_vec();
        for (k, &param) in params.iter().enumerate() {
            let Some(d) = doubling(f, &shape, k, param) else {
                continue;
            };
            let divisions: Vec<Inst> = f
                .users(param)
                .iter()
                .copied()
                .filter(|&i| {
                    matches!(f.kind(i), InstKind::Binary { op: BinOp::SDiv | BinOp::SRem, args: [x, p] }
                        if *p == param && *x != param)
                        && f.layout.inst_block(i).is_some_and(|b| loops.contains(id, b))
                })
                .collect();
            if divisions.is_empty() {
                continue;
            }
            let e = exponent(f, &shape, &d);
            for i in divisions {
                rewrite(f, i, d.param, e);
                count += 1;
            }
        }
    }
    count
}

/// `2^k` as `k`, for a positive power of two.
fn log2(v: i32) -> Option<i32> {
    (v > 0 && v & (v - 1) == 0).then(|| v.trailing_zeros() as i32)
}

/// The doubling facts of header parameter `k` (`param`), when they hold.
fn doubling(f: &Function, s: &Shape, k: usize, param: Value) -> Option<Doubling> {
    if f.value_type(param) != Type::I32 {
        return None;
    }
    let arg = |term: Inst, which: usize| -> Option<Value> {
        let t = &f.kind(term).targets()[which];
        (t.block == s.header)
            .then(|| t.args.get(k).copied())
            .flatten()
    };
    let pre = f.terminator(s.entry)?;
    let start = log2(f.as_iconst(arg(pre, s.entry_target)?)?)?;
    let next = arg(s.branch, s.back)?;
    let step = match *f.kind(f.def_inst(next)?) {
        InstKind::Binary {
            op: BinOp::Shl,
            args: [a, b],
        } if a == param => f.as_iconst(b)?,
        InstKind::Binary {
            op: BinOp::Mul,
            args: [a, b],
        } if a == param => log2(f.as_iconst(b)?)?,
        InstKind::Binary {
            op: BinOp::Add,
            args: [a, b],
        } if a == param && b == param => 1,
        _ => return None,
    };
    if !(1..=30).contains(&step) || start + step > 30 {
        return None;
    }
    // The bound `K` with: the loop continues only if `next < K`.
    let InstKind::Br { cond, .. } = *f.kind(s.branch) else {
        return None;
    };
    let InstKind::Cmp { op, args: [a, b] } = *f.kind(f.def_inst(cond)?) else {
        return None;
    };
    let continues_if_true = s.back == 0;
    let bound = match (op, continues_if_true) {
        (CmpOp::Slt, true) | (CmpOp::Sge, false) if a == next => f.as_iconst(b)? as i64,
        (CmpOp::Sle, true) | (CmpOp::Sgt, false) if a == next => f.as_iconst(b)? as i64 + 1,
        (CmpOp::Sgt, true) | (CmpOp::Sle, false) if b == next => f.as_iconst(a)? as i64,
        (CmpOp::Sge, true) | (CmpOp::Slt, false) if b == next => f.as_iconst(a)? as i64 + 1,
        _ => return None,
    };
    if bound > 1i64 << (31 - step) {
        return None;
    }
    Some(Doubling { param, start, step })
}

/// Adds the exponent parameter `e` to the loop header: `start` on entry, `e + step`
/// on the back edge.
fn exponent(f: &mut Function, s: &Shape, d: &Doubling) -> Value {
    let e = f.append_block_param(s.header, Type::I32);
    let start = f.iconst(d.start);
    let step = f.iconst(d.step);
    let add = f.insert_inst_before(
        s.branch,
        InstKind::Binary {
            op: BinOp::Add,
            args: [e, step],
        },
        Type::I32,
    );
    let next = f.inst_result(add).expect("add has a result");
    let pre = f
        .terminator(s.entry)
        .expect("the entry block has a terminator");
    for (term, which, arg) in [(pre, s.entry_target, start), (s.branch, s.back, next)] {
        let mut t: BlockCall = f.kind(term).targets()[which].clone();
        t.args.push(arg);
        f.set_target(term, which, t);
    }
    e
}

/// Rewrites `i` (`sdiv x, p` or `srem x, p`, with `p = 2^e`) into shifts.
fn rewrite(f: &mut Function, i: Inst, p: Value, e: Value) {
    let InstKind::Binary { op, args: [x, _] } = *f.kind(i) else {
        unreachable!("a division")
    };
    let emit = |f: &mut Function, op: BinOp, a: Value, b: Value| {
        let n = f.insert_inst_before(i, InstKind::Binary { op, args: [a, b] }, Type::I32);
        f.inst_result(n).expect("binary has a result")
    };
    let c31 = f.iconst(31);
    let minus_one = f.iconst(-1);
    let sign = emit(f, BinOp::AShr, x, c31);
    let mask = emit(f, BinOp::Add, p, minus_one);
    let bias = emit(f, BinOp::And, sign, mask);
    let biased = emit(f, BinOp::Add, x, bias);
    let kind = if op == BinOp::SDiv {
        // x / p = (x + bias) >> e
        InstKind::Binary {
            op: BinOp::AShr,
            args: [biased, e],
        }
    } else {
        // x % p = x - ((x + bias) & -p)
        let zero = f.iconst(0);
        let neg = emit(f, BinOp::Sub, zero, p);
        let multiple = emit(f, BinOp::And, biased, neg);
        InstKind::Binary {
            op: BinOp::Sub,
            args: [x, multiple],
        }
    };
    f.replace_kind(i, kind);
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `ret = ret * 2 + (x / i % 2 != y / i % 2)` over `i = 1, 2, 4, ..` below `K`
    /// (the XOR of the low bits, taken apart by division), and `x % i` summed.
    fn bits_program(cmp: &str, bound: i32, shift: &str) -> String {
        format!(
            r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  %1 = call @getint()
  jump bb1(1, 0, 0)
bb1(%2: i32, %3: i32, %4: i32):
  %5 = sdiv %0, %2
  %6 = sdiv %1, %2
  %7 = srem %5, 2
  %8 = srem %6, 2
  %9 = ne %7, %8
  %10 = shl %3, 1
  %11 = add %10, %9
  %12 = srem %0, %2
  %13 = add %4, %12
  %14 = {shift}
  %15 = {cmp}
  br %15, bb1(%14, %11, %13), bb2
bb2:
  call @putint(%11)
  call @putint(%13)
  ret 0
}}
"#
        )
        .replace("BOUND", &bound.to_string())
    }

    fn divisions(out: &str) -> usize {
        out.matches("sdiv").count() + out.matches("srem %0, %2").count()
    }

    #[test]
    fn divisions_by_a_doubling_variable_become_shifts() {
        let src = bits_program("slt %14, BOUND", 1 << 30, "shl %2, 1");
        for stdin in [
            "12345 -6789",
            "-1 1",
            "-2147483648 2147483647",
            "0 -1073741824",
        ] {
            let out = same_behaviour(&src, &["pow2div"], stdin);
            assert_eq!(divisions(&out), 0, "{out}");
            assert!(out.contains("ashr"), "{out}");
        }
    }

    #[test]
    fn other_doubling_forms_and_comparisons() {
        for (cmp, bound, shift) in [
            ("sle %14, BOUND", (1 << 30) - 1, "add %2, %2"),
            ("sgt BOUND, %14", 1 << 20, "mul %2, 2"),
            ("slt %14, BOUND", 1 << 29, "shl %2, 2"),
        ] {
            let src = bits_program(cmp, bound, shift);
            let out = same_behaviour(&src, &["pow2div"], "-99999 31337");
            assert_eq!(divisions(&out), 0, "{cmp} {shift}:\n{out}");
        }
    }

    #[test]
    fn a_loop_entered_by_a_conditional_branch() {
        // No dedicated preheader: the entry block branches to the header or away.
        let src = bits_program("slt %14, BOUND", 1 << 30, "shl %2, 1")
            .replace(
                "  jump bb1(1, 0, 0)",
                "  %90 = ne %0, 7\n  br %90, bb1(1, 0, 0), bb3",
            )
            .replace("  ret 0\n}", "  ret 0\nbb3:\n  ret 1\n}");
        assert!(src.contains("br %90") && src.contains("bb3:"));
        for stdin in ["-77 5", "7 8"] {
            let out = same_behaviour(&src, &["pow2div"], stdin);
            assert_eq!(divisions(&out), 0, "{out}");
        }
    }

    const TABLE: &str = r#"
global @t: [i32; 6] = [1, 2, 4, 8, 1024, 1073741824]

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = gep @t, %1, 4
  %3 = load i32, %2
  %4 = sdiv %0, %3
  %5 = srem %0, %3
  call @putint(%4)
  call @putint(%5)
  ret 0
}
"#;

    #[test]
    fn divisions_by_a_table_of_powers_of_two_become_shifts() {
        for stdin in [
            "-7 0",
            "-7 2",
            "12345 3",
            "-2147483648 5",
            "2147483647 5",
            "-1025 4",
        ] {
            let out = same_behaviour(TABLE, &["pow2div"], stdin);
            assert_eq!(
                out.matches("sdiv").count() + out.matches("srem").count(),
                0,
                "{out}"
            );
            assert!(
                out.contains("global @t.log2: [i32; 6] = [0, 1, 2, 3, 10, 30]"),
                "{out}"
            );
        }
    }

    #[test]
    fn only_the_elements_the_index_can_reach_need_be_powers() {
        // `k % 5` is in [-4, 4]: the last element (never read) may be anything,
        // any element it can read may not.
        let src = TABLE.replace("1073741824]", "0]").replace(
            "  %2 = gep @t, %1, 4",
            "  %9 = srem %1, 5\n  %2 = gep @t, %9, 4",
        );
        for stdin in ["-7 0", "12345 3", "-1025 4"] {
            let out = same_behaviour(&src, &["pow2div"], stdin);
            assert_eq!(
                out.matches("sdiv").count() + out.matches("srem %0").count(),
                0,
                "{out}"
            );
        }
        let reached = src.replace("[1, 2, 4, 8,", "[1, 2, 3, 8,");
        assert!(run(&reached, &["pow2div"]).contains("sdiv %0,"));
        let unbounded = TABLE.replace("1073741824]", "0]");
        assert!(run(&unbounded, &["pow2div"]).contains("sdiv %0, %3"));
    }

    #[test]
    fn tables_that_are_not_all_powers_or_can_be_written_stay() {
        let three = TABLE.replace("[1, 2, 4, 8,", "[1, 2, 3, 8,");
        assert!(run(&three, &["pow2div"]).contains("sdiv %0, %3"));
        let big = TABLE.replace("1073741824]", "-2147483648]");
        assert!(run(&big, &["pow2div"]).contains("sdiv %0, %3"));
        let written = TABLE.replace("  %3 = load i32, %2", "  store 16, %2\n  %3 = load i32, %2");
        assert!(written.contains("store 16"));
        assert!(run(&written, &["pow2div"]).contains("sdiv %0, %3"));
    }

    #[test]
    fn a_bound_that_lets_the_variable_wrap_is_left_alone() {
        // With K = 2^30 + 1, i = 2^30 continues, and i << 1 wraps to INT_MIN.
        let src = bits_program("slt %14, BOUND", (1 << 30) + 1, "shl %2, 1");
        assert_eq!(divisions(&run(&src, &["pow2div"])), 3);
        // A shift by 2 allows K <= 2^29 only.
        let src = bits_program("slt %14, BOUND", 1 << 30, "shl %2, 2");
        assert_eq!(divisions(&run(&src, &["pow2div"])), 3);
        // Not a power of two at the start.
        let src = bits_program("slt %14, BOUND", 1 << 30, "shl %2, 1")
            .replace("bb1(1, 0, 0)", "bb1(3, 0, 0)");
        assert_eq!(divisions(&run(&src, &["pow2div"])), 3);
    }
}
