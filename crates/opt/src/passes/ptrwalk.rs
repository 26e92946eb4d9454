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
//! its index is the header parameter `i` or `i + d` (`d` constant), it is used as
//! the address of a load or store in the header, and every back edge passes the
//! same `i + c` (`c` a non-zero constant, `|c| <= 2^16`).

use crate::analysis::LoopForest;
use crate::pipeline::Pass;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{BinOp, Block, Function, Inst, InstKind, Module, Type, Value};

/// The pass.
pub struct PtrWalk;

impl Pass for PtrWalk {
    fn name(&self) -> &'static str {
        "ptrwalk"
    }
    fn description(&self) -> &'static str {
        "strength-reduce array walks of loops without a counter into pointer increments"
    }
    fn run(&self, m: &mut Module) -> bool {
        super::each_function(m, |f| run(f) > 0)
    }
}

/// The largest step: `i + d` is an index into an object, so `i + d + c` cannot wrap.
const MAX_STEP: i64 = 1 << 16;

/// Reduces the walks of every loop of `f`; returns how many accesses changed.
pub fn run(f: &mut Function) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(f, &cfg);
    let loops = LoopForest::compute(f, &cfg, &dt);
    let mut changed = 0;
    for (id, l) in loops.loops() {
        let header = l.header;
        let inside = |b: Block| loops.contains(id, b);
        let (outside, latches): (Vec<Block>, Vec<Block>) = cfg
            .unique_preds(header)
            .into_iter()
            .partition(|&p| !inside(p));
        if outside.is_empty() || latches.is_empty() {
            continue;
        }
        let geps: Vec<Inst> = f
            .layout
            .block_insts(header)
            .filter(|&g| matches!(f.kind(g), InstKind::Gep { .. }))
            .collect();
        for g in geps {
            if let Some(walk) = Walk::find(f, g, header, &inside, &latches) {
                walk.rewrite(f, g, header, &outside, &latches);
                changed += 1;
            }
        }
    }
    changed
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
        f: &Function,
        g: Inst,
        header: Block,
        inside: &dyn Fn(Block) -> bool,
        latches: &[Block],
    ) -> Option<Walk> {
        let InstKind::Gep {
            base,
            index,
            stride,
        } = *f.kind(g)
        else {
            return None;
        };
        if f.value_block(base).is_some_and(inside) {
            return None;
        }
        // The index: the parameter itself or the parameter plus a constant.
        let params = f.block_params(header);
        let (i, offset) = match params.iter().position(|&p| p == index) {
            Some(_) => (index, 0),
            None => add_const(f, index)?,
        };
        let param = params.iter().position(|&p| p == i)?;
        // Dereferenced in the header: every iteration accesses it.
        let r = f.inst_result(g)?;
        let accessed = f.users(r).iter().any(|&u| {
            f.layout.inst_block(u) == Some(header)
                && match f.kind(u) {
                    InstKind::Load { ptr, .. } => *ptr == r,
                    InstKind::Store { ptr, value } => *ptr == r && *value != r,
                    _ => false,
                }
        });
        if !accessed {
            return None;
        }
        // Every back edge passes the same `i + step`.
        let mut step = None;
        for &latch in latches {
            let term = f.terminator(latch)?;
            for target in f.kind(term).targets() {
                if target.block != header {
                    continue;
                }
                let (from, c) = add_const(f, target.args[param])?;
                if from != i
                    || c == 0
                    || (c as i64).abs() > MAX_STEP
                    || step.is_some_and(|s| s != c)
                {
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

    fn rewrite(
        &self,
        f: &mut Function,
        g: Inst,
        header: Block,
        outside: &[Block],
        latches: &[Block],
    ) {
        let q = f.append_block_param(header, Type::Ptr);
        // Initial addresses, each from its edge's own initial value.
        for &p in outside {
            let term = f.terminator(p).expect("a predecessor ends in a branch");
            let targets: Vec<ir::BlockCall> = f.kind(term).targets().into_iter().cloned().collect();
            for (which, mut target) in targets.into_iter().enumerate() {
                if target.block != header {
                    continue;
                }
                let mut index = target.args[self.param];
                if self.offset != 0 {
                    let d = f.iconst(self.offset);
                    index = value(
                        f,
                        term,
                        InstKind::Binary {
                            op: BinOp::Add,
                            args: [index, d],
                        },
                        Type::I32,
                    );
                }
                let start = value(
                    f,
                    term,
                    InstKind::Gep {
                        base: self.base,
                        index,
                        stride: self.stride,
                    },
                    Type::Ptr,
                );
                target.args.push(start);
                f.set_target(term, which, target);
            }
        }
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
    }
}

/// `Some((x, c))` when `v` is `add x, c` with a constant `c`.
fn add_const(f: &Function, v: Value) -> Option<(Value, i32)> {
    let def = f.def_inst(v)?;
    match *f.kind(def) {
        InstKind::Binary {
            op: BinOp::Add,
            args: [x, c],
        } => Some((x, f.as_iconst(c)?)),
        _ => None,
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
        assert_eq!(out.matches(": ptr").count(), 4, "four walks:\n{out}");
    }

    #[test]
    fn accesses_off_the_header_and_uneven_steps_are_left_alone() {
        // The load is in a block that not every iteration runs; the other loop's
        // back edges step by 1 and by 2.
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
        check(&["ptrwalk"], src, src);
    }
}
