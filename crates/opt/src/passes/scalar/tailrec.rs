//! Tail-recursion elimination: a function's calls to itself in tail position become
//! jumps back to its start, so the recursion runs as a loop in one frame.
//!
//! ```text
//!   int f(int n, int d) {            int f(int n0, int d0) {
//!     if (n == 1) return d;            (n, d) = (n0, d0);
//!     return f(n / 2, d + 1);   =>     loop: if (n == 1) return d;
//!   }                                  (n, d) = (n / 2, d + 1); goto loop;
//!                                    }
//! ```
//!
//! This is LLVM's `TailRecursionElimination` (and GCC's `tree-tailcall`), with its
//! accumulator extension: a call whose result is combined with a value computed
//! before it, `return x + f(...)` (or `x * f(...)`, integers, which wrap: both are
//! associative and commutative modulo 2^32), becomes a jump that adds `x` into an
//! accumulator carried by the loop, and every other `return v` returns
//! `acc + v` (`acc * v`); the accumulator starts at 0 (1).
//!
//! Only functions all of whose self-calls are in tail position are transformed, so
//! that they stop being recursive: a recursion that stays (`f(n - 1) + f(n - 2)`
//! beside a tail call) is left whole to memoisation and recursive inlining, which
//! did better on it than a loop around the remaining calls. A function with loops
//! of its own becomes a loop nest one level deeper; its inner loops then need the
//! rotation `looprotate` gives loops whose latch breaks out (quickselect's partition
//! loops, `while (l < r) { r--; if (a[r] < p) break; }`, ran twice the U74 cycles
//! as an unrotated nest, and the same with it).
//!
//! A call is in tail position when its block ends `%r = call @f(..); ret %r` (or,
//! accumulating, `%r = call @f(..); %s = add %x, %r; ret %s` with `%s` and `%r`
//! used nowhere else). A call whose result is unused, `call @f(..); ret c`, is in
//! tail position too when every return of `f` returns the same constant `c` (LLVM
//! TRE's common return value): whatever the callee returns is then `c`, which
//! interprocedural constant propagation leaves behind when it replaces the result
//! of a function that always returns one constant.
//!
//! The entry block gets a new entry before it that passes the
//! parameters in and keeps the frame's `alloc`s, which then run once; no tail call
//! may pass a pointer into such a local array, which the original callee would see
//! as its caller's memory but the loop would overwrite. Functions mixing `+` and
//! `*` accumulation are left alone.

use crate::analysis::{pointer_base, AnalysisManager, PointerBase, Preserved};
use crate::pipeline::Pass;
use ir::{BinOp, Block, BlockCall, FuncId, Function, Inst, InstKind, Module, Type, Value};

/// The tail-recursion elimination pass.
pub struct TailRec;

impl Pass for TailRec {
    fn name(&self) -> &'static str {
        "tailrec"
    }
    fn description(&self) -> &'static str {
        "turn self-calls in tail position (with + or * accumulators) into loops"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        am.each_function_by_id(m, |id, f, _| run(f, id) > 0)
    }
}

/// A return of `f` through a call to itself.
struct TailCall {
    block: Block,
    call: Inst,
    args: Vec<Value>,
    /// `Some((op, x))` for `return x op f(..)`.
    acc: Option<(BinOp, Value, Inst)>,
    /// `Some(c)` for `f(..); return c`, the call's result unused.
    common: Option<Value>,
}

/// Eliminates the tail recursion of `f`, function `id`; returns how many calls
/// became jumps.
pub fn run(f: &mut Function, id: FuncId) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let blocks: Vec<Block> = f.layout.blocks().collect();
    let calls: Vec<TailCall> = blocks.iter().filter_map(|&b| tail_call(f, id, b)).collect();
    if calls.is_empty() {
        return 0;
    }
    // Every self-call must go: a function left recursive is better served by
    // memoisation and recursive inlining, which a loop around its other calls
    // hides (knapsack's branch-and-bound recursion ran 13% slower).
    let self_calls = blocks
        .iter()
        .flat_map(|&b| f.layout.block_insts(b))
        .filter(|&i| matches!(f.kind(i), InstKind::Call { callee, .. } if *callee == id))
        .count();
    if self_calls != calls.len() {
        return 0;
    }
    let mut ops = calls.iter().filter_map(|c| c.acc.map(|(op, ..)| op));
    let acc_op = ops.next();
    if ops.any(|op| Some(op) != acc_op) {
        return 0;
    }
    // A call whose result is ignored stands for the constant every return gives;
    // it cannot mix with accumulators, whose returns give more than their value.
    if let Some(c) = calls.iter().find_map(|c| c.common) {
        if acc_op.is_some() || !returns_only(f, c, &calls) {
            return 0;
        }
    }
    // No tail call may pass a pointer into the frame's own memory, and the
    // frame's arrays are all allocated in the entry block (they move to the new
    // entry, to run once).
    let into_frame = |a: Value| matches!(pointer_base(f, a), PointerBase::Local(_));
    if calls.iter().any(|c| c.args.iter().any(|&a| into_frame(a))) {
        return 0;
    }
    let header = f.entry_block();
    let is_alloc = |i: Inst| matches!(f.kind(i), InstKind::Alloc { .. });
    if blocks
        .iter()
        .any(|&b| b != header && f.layout.block_insts(b).any(is_alloc))
    {
        return 0;
    }
    // The new entry: the parameters come in there and go to the old entry, now the
    // loop's header, with the starting accumulator.
    let entry = f.create_block();
    f.layout.insert_block_after(entry, header);
    f.layout.remove_block(header);
    f.layout.insert_block_after(header, entry);
    let params = f.block_params(header).to_vec();
    let mut incoming = Vec::new();
    for &p in &params {
        let ty = f.value_type(p);
        incoming.push(f.append_block_param(entry, ty));
    }
    let allocs: Vec<Inst> = f
        .layout
        .block_insts(header)
        .filter(|&i| matches!(f.kind(i), InstKind::Alloc { .. }))
        .collect();
    for i in allocs {
        f.layout.remove_inst(i);
        f.layout.append_inst(i, entry);
    }
    let acc = acc_op.map(|op| {
        let start = f.iconst(if op == BinOp::Add { 0 } else { 1 });
        incoming.push(start);
        (op, f.append_block_param(header, Type::I32))
    });
    f.append_inst(
        entry,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(header, incoming.clone())),
        },
        Type::Void,
    );
    // Other returns give the accumulated value combined with theirs.
    if let Some((op, a)) = acc {
        let rets: Vec<Inst> = f
            .layout
            .blocks()
            .filter_map(|b| f.terminator(b))
            .filter(|&t| {
                !calls
                    .iter()
                    .any(|c| f.layout.inst_block(t) == Some(c.block))
            })
            .filter(|&t| matches!(f.kind(t), InstKind::Ret { value: Some(_) }))
            .collect();
        for t in rets {
            let InstKind::Ret { value: Some(v) } = *f.kind(t) else {
                unreachable!("filtered above");
            };
            let combined =
                f.insert_inst_before(t, InstKind::Binary { op, args: [a, v] }, Type::I32);
            let r = f.inst_result(combined).expect("a binary has a result");
            f.replace_kind(t, InstKind::Ret { value: Some(r) });
        }
    }
    // Each tail call becomes a jump to the header.
    for c in &calls {
        let mut args = c.args.clone();
        let mut dead = vec![c.call];
        if let Some((op, a)) = acc {
            match c.acc {
                Some((_, x, combine)) => {
                    let next = f.insert_inst_before(
                        c.call,
                        InstKind::Binary { op, args: [a, x] },
                        Type::I32,
                    );
                    args.push(f.inst_result(next).expect("a binary has a result"));
                    dead.push(combine);
                }
                None => args.push(a),
            }
        }
        let ret = f.terminator(c.block).expect("a tail call's block returns");
        f.replace_kind(
            ret,
            InstKind::Jump {
                dest: Box::new(BlockCall::new(header, args)),
            },
        );
        for i in dead.into_iter().rev() {
            f.remove_inst(i);
        }
    }
    // A parameter every tail call passes through unchanged is the same on every
    // iteration: it needs no block parameter, which would hide from `licm` that
    // what it addresses is invariant (LLVM's TRE folds such trivial PHIs too).
    let mut preds = vec![entry];
    preds.extend(calls.iter().map(|c| c.block));
    for k in (0..params.len()).rev() {
        if calls.iter().all(|c| c.args[k] == params[k]) {
            f.replace_all_uses(params[k], incoming[k]);
            f.remove_block_param(header, k, &preds);
        }
    }
    calls.len()
}

/// What a jump to `dest` returns when `dest` is a block that only returns
/// (`bb(%p): ret %p`, the shared return block inlining and the front end make): the
/// jump is then a return of that value, as LLVM's TRE folds such a return into its
/// predecessors.
fn returned_through(f: &Function, dest: &BlockCall) -> Option<Option<Value>> {
    let ret = f.layout.first_inst(dest.block)?;
    let InstKind::Ret { value } = *f.kind(ret) else {
        return None;
    };
    let params = f.block_params(dest.block);
    Some(value.map(|v| match params.iter().position(|&p| p == v) {
        Some(k) => dest.args[k],
        None => v,
    }))
}

/// Whether every return of `f` other than the tail calls' returns `c`, directly or
/// as the parameter of a return block every other predecessor passes `c`.
fn returns_only(f: &Function, c: Value, calls: &[TailCall]) -> bool {
    let tail_block = |b: Block| calls.iter().any(|t| t.block == b);
    f.layout.blocks().filter(|&b| !tail_block(b)).all(|b| {
        f.terminator(b).is_none_or(|t| match f.kind(t) {
            // A return block's parameter: checked on the jumps to it.
            InstKind::Ret { value: Some(v) } if f.block_params(b).contains(v) => {
                f.layout.first_inst(b) == Some(t)
            }
            InstKind::Ret { value } => *value == Some(c),
            _ => f
                .kind(t)
                .targets()
                .iter()
                .all(|dest| returned_through(f, dest).is_none_or(|v| v == Some(c))),
        })
    })
}

/// The tail call to `id` that block `b` returns through, if any.
fn tail_call(f: &Function, id: FuncId, b: Block) -> Option<TailCall> {
    let ret = f.terminator(b)?;
    let value = match f.kind(ret) {
        InstKind::Ret { value } => *value,
        InstKind::Jump { dest } => returned_through(f, dest)?,
        _ => return None,
    };
    let before = f.layout.prev_inst(ret)?;
    let is_self_call =
        |i: Inst| matches!(f.kind(i), InstKind::Call { callee, .. } if *callee == id);
    let (call, acc, common) = if is_self_call(before) {
        // `%r = call @f(..); ret %r`, or a void call and `ret`, or `call @f(..);
        // ret c` with the result unused and `c` a constant.
        let common = match (value, f.inst_result(before)) {
            (Some(v), Some(r)) if v == r && f.users(r).len() == 1 => None,
            (None, None) => None,
            (Some(c), r)
                if f.value_def(c).is_constant() && r.is_none_or(|r| f.users(r).is_empty()) =>
            {
                Some(c)
            }
            _ => return None,
        };
        (before, None, common)
    } else {
        // `%r = call @f(..); %s = op %x, %r; ret %s`.
        let InstKind::Binary { op, args: [a, b2] } = *f.kind(before) else {
            return None;
        };
        if !matches!(op, BinOp::Add | BinOp::Mul) || value != f.inst_result(before) {
            return None;
        }
        let call = f.layout.prev_inst(before).filter(|&i| is_self_call(i))?;
        let r = f.inst_result(call)?;
        let x = match (a == r, b2 == r) {
            (true, false) => b2,
            (false, true) => a,
            _ => return None,
        };
        let s = f.inst_result(before)?;
        if f.users(r).len() != 1 || f.users(s).len() != 1 {
            return None;
        }
        (call, Some((op, x, before)), None)
    };
    let InstKind::Call { args, .. } = f.kind(call) else {
        return None;
    };
    Some(TailCall {
        block: b,
        call,
        args: args.to_vec(),
        acc,
        common,
    })
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// The text of function `@name` in `out`.
    fn func<'a>(out: &'a str, name: &str) -> &'a str {
        let start = out
            .find(&format!("func @{name}("))
            .expect("function printed");
        let end = out[start..].find("\n}").map_or(out.len(), |e| start + e);
        &out[start..end]
    }

    fn program(f: &str, main_body: &str) -> String {
        format!(
            r#"
global @g: i32 = 0

declare @putint(i32) -> void
declare @getint() -> i32

{f}

func @main() -> i32 {{
bb0:
  %0 = call @getint()
{main_body}
  ret 0
}}
"#
        )
    }

    #[test]
    fn a_tail_call_becomes_a_jump_to_the_start() {
        // The Collatz step count: `f(n, d) = n == 1 ? d : f(n even ? n / 2 : 3n + 1, d + 1)`.
        let f = r#"func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = eq %0, 1
  br %2, bb1, bb2
bb1:
  ret %1
bb2:
  %3 = srem %0, 2
  %4 = add %1, 1
  br %3, bb4, bb3
bb3:
  %5 = sdiv %0, 2
  %6 = call @f(%5, %4)
  ret %6
bb4:
  %7 = mul %0, 3
  %8 = add %7, 1
  %9 = call @f(%8, %4)
  ret %9
}"#;
        let src = program(f, "  %1 = call @f(%0, 0)\n  call @putint(%1)");
        for input in ["1", "6", "27"] {
            same_behaviour(&src, &["tailrec"], input);
        }
        let out = run(&src, &["tailrec"]);
        let body = func(&out, "f");
        assert!(!body.contains("call @f"), "{body}");
        assert_eq!(body.matches("jump bb1(").count(), 3, "{body}");
    }

    #[test]
    fn sums_and_products_of_tail_calls_accumulate() {
        // `s(n) = n == 0 ? 1 : n + s(n - 1)` and `p(n) = n == 0 ? 1 : n * p(n - 1)`.
        for op in ["add", "mul"] {
            let f = format!(
                r#"func @f(i32) -> i32 {{
bb0(%0: i32):
  br %0, bb2, bb1
bb1:
  ret 1
bb2:
  %1 = add %0, -1
  %2 = call @f(%1)
  %3 = {op} %0, %2
  ret %3
}}"#
            );
            let src = program(&f, "  %1 = call @f(%0)\n  call @putint(%1)");
            for input in ["0", "5", "40"] {
                same_behaviour(&src, &["tailrec"], input);
            }
            let out = run(&src, &["tailrec"]);
            let body = func(&out, "f");
            assert!(!body.contains("call @f"), "{op}: {body}");
            // The base case returns the accumulator combined with its value.
            assert!(body.contains(&format!("{op} %")), "{op}: {body}");
        }
    }

    #[test]
    fn calls_followed_by_effects_or_mixed_accumulators_stay() {
        let cases = [
            // Output after the call: not in tail position.
            r#"func @f(i32) -> i32 {
bb0(%0: i32):
  br %0, bb2, bb1
bb1:
  ret 0
bb2:
  %1 = add %0, -1
  %2 = call @f(%1)
  call @putint(%0)
  ret %2
}"#,
            // A global written after the call.
            r#"func @f(i32) -> i32 {
bb0(%0: i32):
  br %0, bb2, bb1
bb1:
  ret 0
bb2:
  %1 = add %0, -1
  %2 = call @f(%1)
  store %0, @g
  ret %2
}"#,
            // One call summed, another multiplied.
            r#"func @f(i32) -> i32 {
bb0(%0: i32):
  br %0, bb2, bb1
bb1:
  ret 1
bb2:
  %1 = add %0, -1
  %2 = srem %0, 2
  br %2, bb3, bb4
bb3:
  %3 = call @f(%1)
  %4 = add %0, %3
  ret %4
bb4:
  %5 = call @f(%1)
  %6 = mul %0, %5
  ret %6
}"#,
            // The result used twice.
            r#"func @f(i32) -> i32 {
bb0(%0: i32):
  br %0, bb2, bb1
bb1:
  ret 1
bb2:
  %1 = add %0, -1
  %2 = call @f(%1)
  %3 = add %2, %2
  ret %3
}"#,
        ];
        for f in cases {
            let src = program(f, "  %1 = call @f(%0)\n  call @putint(%1)");
            same_behaviour(&src, &["tailrec"], "4");
            assert_eq!(run(&src, &["tailrec"]).trim(), run(&src, &[]).trim(), "{f}");
        }
    }

    #[test]
    fn a_function_left_recursive_keeps_its_tail_calls() {
        // `f(n) = n <= 1 ? n : (n % 2 ? f(n - 1) : f(n - 1) + f(n - 2))`: one tail
        // call, but the function would stay recursive.
        let f = r#"func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = sle %0, 1
  br %1, bb1, bb2
bb1:
  ret %0
bb2:
  %2 = add %0, -1
  %3 = srem %0, 2
  br %3, bb3, bb4
bb3:
  %4 = call @f(%2)
  ret %4
bb4:
  %5 = call @f(%2)
  %6 = add %0, -2
  %7 = call @f(%6)
  %8 = add %5, %7
  %9 = mul %8, 1
  ret %9
}"#;
        let src = program(f, "  %1 = call @f(%0)\n  call @putint(%1)");
        assert_eq!(run(&src, &["tailrec"]).trim(), run(&src, &[]).trim());
    }

    /// `f(n)` stores `n` into `@g` and recurses on `n - 1` until `n` is 0; every
    /// return gives `ret_base` (at the bottom) or `ret_call` (after the call, whose
    /// result is ignored).
    fn ignored_result(ret_base: &str, ret_call: &str) -> String {
        format!(
            r#"func @f(i32) -> i32 {{
bb0(%0: i32):
  store %0, @g
  br %0, bb2, bb1
bb1:
  ret {ret_base}
bb2:
  %1 = add %0, -1
  %2 = call @f(%1)
  ret {ret_call}
}}"#
        )
    }

    #[test]
    fn an_ignored_result_is_a_tail_call_when_every_return_gives_one_constant() {
        // What interprocedural constant propagation leaves of `return f(n - 1)`
        // in a function that always returns 0.
        let src = program(
            &ignored_result("0", "0"),
            "  %1 = call @f(%0)\n  call @putint(%1)\n  %2 = load i32, @g\n  call @putint(%2)",
        );
        for input in ["0", "1", "7"] {
            same_behaviour(&src, &["tailrec"], input);
        }
        let body = func(&run(&src, &["tailrec"]), "f").to_string();
        assert!(!body.contains("call @f"), "{body}");
        assert!(body.contains("jump bb"), "{body}");
    }

    #[test]
    fn an_ignored_result_stays_a_call_when_the_returns_differ() {
        // The bottom returns 1, the others 0: the loop would return 1 from the top.
        // A parameter is no common constant: each level returns its own.
        for (base, call) in [("1", "0"), ("%0", "%0"), ("0", "%0")] {
            let src = program(
                &ignored_result(base, call),
                "  %1 = call @f(%0)\n  call @putint(%1)",
            );
            same_behaviour(&src, &["tailrec"], "3");
            assert!(
                func(&run(&src, &["tailrec"]), "f").contains("call @f"),
                "{base} {call}"
            );
        }
        // An accumulating tail call beside an ignored one: `f(n - 1); return 0`
        // and `return n + f(n - 2)` cannot share one loop.
        let f = r#"func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = slt %0, 2
  br %1, bb1, bb2
bb1:
  ret 0
bb2:
  %2 = srem %0, 2
  br %2, bb3, bb4
bb3:
  %3 = add %0, -1
  %4 = call @f(%3)
  ret 0
bb4:
  %5 = add %0, -2
  %6 = call @f(%5)
  %7 = add %0, %6
  ret %7
}"#;
        let src = program(f, "  %1 = call @f(%0)\n  call @putint(%1)");
        same_behaviour(&src, &["tailrec"], "9");
        assert_eq!(run(&src, &["tailrec"]).trim(), run(&src, &[]).trim());
    }

    #[test]
    fn a_jump_to_a_return_block_returns_what_it_passes() {
        // The shape inlining leaves: `bb3(%v): ret %v` shared by the base case and
        // the calls, summed (`n + f(n - 1)`), passed through, or ignored with every
        // path returning 0.
        let shapes = [
            (
                "  %3 = call @f(%2)\n  %4 = add %0, %3\n  jump bb3(%4)",
                "bb3(0)",
            ),
            ("  %3 = call @f(%2)\n  jump bb3(%3)", "bb3(%0)"),
            ("  %3 = call @f(%2)\n  jump bb3(0)", "bb3(0)"),
        ];
        for (call, base) in shapes {
            let f = format!(
                r#"func @f(i32) -> i32 {{
bb0(%0: i32):
  store %0, @g
  %1 = slt %0, 1
  br %1, {base}, bb2
bb2:
  %2 = add %0, -1
{call}
bb3(%5: i32):
  ret %5
}}"#
            );
            let src = program(&f, "  %1 = call @f(%0)\n  call @putint(%1)");
            for input in ["0", "1", "6"] {
                same_behaviour(&src, &["tailrec"], input);
            }
            let body = func(&run(&src, &["tailrec"]), "f").to_string();
            assert!(!body.contains("call @f"), "{call}: {body}");
        }
        // Not when the base case returns another constant than the ignored call's
        // path, nor when the return block does more than return.
        let differ = r#"func @f(i32) -> i32 {
bb0(%0: i32):
  store %0, @g
  %1 = slt %0, 1
  br %1, bb3(1), bb2
bb2:
  %2 = add %0, -1
  %3 = call @f(%2)
  jump bb3(0)
bb3(%5: i32):
  ret %5
}"#;
        let busy = r#"func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = slt %0, 1
  br %1, bb3(0), bb2
bb2:
  %2 = add %0, -1
  %3 = call @f(%2)
  jump bb3(%3)
bb3(%5: i32):
  store %5, @g
  ret %5
}"#;
        for f in [differ, busy] {
            let src = program(f, "  %1 = call @f(%0)\n  call @putint(%1)");
            same_behaviour(&src, &["tailrec"], "4");
            assert!(
                func(&run(&src, &["tailrec"]), "f").contains("call @f"),
                "{f}"
            );
        }
    }

    #[test]
    fn a_function_with_loops_becomes_a_loop_nest() {
        // `f(n) { s = 0; for (i = 0; i < n; i++) s += i; if (n > 3) return f(n - 3); return s; }`
        let f = r#"func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = slt %1, %0
  br %3, bb2, bb3
bb2:
  %4 = add %2, %1
  %5 = add %1, 1
  jump bb1(%5, %4)
bb3:
  %6 = sgt %0, 3
  br %6, bb4, bb5
bb4:
  %7 = add %0, -3
  %8 = call @f(%7)
  ret %8
bb5:
  ret %2
}"#;
        let src = program(f, "  %1 = call @f(%0)\n  call @putint(%1)");
        for input in ["0", "2", "10"] {
            same_behaviour(&src, &["tailrec"], input);
        }
        let body = func(&run(&src, &["tailrec"]), "f").to_string();
        assert!(!body.contains("call @f"), "{body}");
    }

    #[test]
    fn a_pointer_into_the_frame_keeps_the_call() {
        // The callee reads the caller's local array: in a loop, the next iteration
        // would overwrite it.
        let f = r#"func @f(i32, ptr) -> i32 {
bb0(%0: i32, %1: ptr):
  %2 = alloc [i32; 2]
  store %0, %2
  %3 = load i32, %1
  br %0, bb2, bb1
bb1:
  ret %3
bb2:
  %4 = add %0, -1
  %5 = call @f(%4, %2)
  ret %5
}"#;
        let src = program(
            f,
            "  %1 = alloc [i32; 1]\n  store 9, %1\n  %2 = call @f(%0, %1)\n  call @putint(%2)",
        );
        same_behaviour(&src, &["tailrec"], "3");
        assert!(func(&run(&src, &["tailrec"]), "f").contains("call @f"));
    }

    #[test]
    fn a_void_tail_call_and_the_frames_arrays() {
        // `void f(int n) { int a[2]; a[0] = n; putint(a[0]); if (n) f(n - 1); }`
        let f = r#"func @f(i32) -> void {
bb0(%0: i32):
  %1 = alloc [i32; 2]
  store %0, %1
  %2 = load i32, %1
  call @putint(%2)
  br %0, bb2, bb1
bb1:
  ret
bb2:
  %3 = add %0, -1
  call @f(%3)
  ret
}"#;
        let src = program(f, "  call @f(%0)");
        let out = same_behaviour(&src, &["tailrec"], "3");
        let body = func(&out, "f");
        assert!(!body.contains("call @f"), "{body}");
        // The array is allocated once, in the new entry block.
        let entry_end = body.find("\nbb1").unwrap();
        assert!(body[..entry_end].contains("alloc"), "{body}");
    }

    #[test]
    fn a_parameter_passed_through_unchanged_stays_one_value() {
        // `f(n, a, k) = n == 0 ? k : f(n - 1, a, a[n & 3] + k)`: `a` is the same
        // on every iteration, `n` and `k` change.
        let f = r#"func @f(i32, ptr, i32) -> i32 {
bb0(%0: i32, %1: ptr, %2: i32):
  %3 = eq %0, 0
  br %3, bb1, bb2
bb1:
  ret %2
bb2:
  %4 = and %0, 3
  %5 = gep %1, %4, 4
  %6 = load i32, %5
  %7 = add %6, %2
  %8 = add %0, -1
  %9 = call @f(%8, %1, %7)
  ret %9
}"#;
        let src = program(
            f,
            "  %1 = alloc [i32; 4]\n  store 5, %1\n  %2 = call @f(%0, %1, 1)\n  call @putint(%2)",
        );
        let out = same_behaviour(&src, &["tailrec"], "6");
        let body = func(&out, "f");
        assert!(!body.contains("call @f"), "{body}");
        // The header takes the two that change; the gep addresses the entry's `a`.
        assert!(body.contains("bb1(%3: i32, %4: i32):"), "{body}");
        assert!(body.contains("jump bb1(%0, %2)"), "{body}");
        assert!(body.contains("gep %1, "), "{body}");
    }
}
