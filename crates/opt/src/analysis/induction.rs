//! Counted loops: rotated loops whose only exit test compares an induction variable
//! that steps by one against a loop-invariant bound.
//!
//! A loop has the *rotated shape* when it has a preheader (a block entering only the
//! header), a single latch, the header's only predecessors are those two, and the
//! latch ends in a conditional branch with one arm back to the header and one leaving
//! the loop (what [`crate::passes::loops::looprotate`] produces from a `while` loop).
//!
//! Its *counter* is a header parameter `i` that the latch advances to `i + 1`
//! (or `i - 1`) and whose value, before or after the step, the latch's condition
//! compares with `slt` (or `sgt`) against a value defined outside the loop, the loop
//! continuing while the comparison holds. A test with `ne` counts too when the start
//! and the bound are constants that the counter, stepping toward the bound, meets:
//! it is then the same test as `slt` (or `sgt`). Such a counter never wraps around: every
//! iteration that continues has `i + 1 < bound <= i32::MAX` (or the mirror image), so
//! the values of `i` are exact integers, and the loop ends after at most
//! `bound - i0` iterations (it terminates). Strength reduction, final value
//! replacement and loop deletion rely on exactly these two facts.

use super::{LoopForest, LoopId};
use ir::analysis::ControlFlowGraph;
use ir::{BinOp, Block, CmpOp, Function, Inst, InstKind, Value};

/// The blocks and edges of a rotated loop.
#[derive(Clone, Debug)]
pub struct RotatedLoop {
    pub header: Block,
    pub preheader: Block,
    pub latch: Block,
    /// The latch's conditional branch.
    pub branch: Inst,
    /// Which target of `branch` (0 or 1) goes back to the header; the other exits.
    pub back: usize,
}

impl RotatedLoop {
    /// The loop's shape, if it is rotated.
    pub fn of(
        f: &Function,
        cfg: &ControlFlowGraph,
        loops: &LoopForest,
        id: LoopId,
    ) -> Option<Self> {
        let lp = loops.get(id);
        let [latch] = lp.latches[..] else {
            return None;
        };
        let preheader = loops.preheader(id, cfg)?;
        let header = lp.header;
        if cfg.unique_preds(header).len() != 2 {
            return None;
        }
        let branch = f.terminator(latch)?;
        let InstKind::Br {
            then_dest,
            else_dest,
            ..
        } = f.kind(branch)
        else {
            return None;
        };
        let back = match (then_dest.block == header, else_dest.block == header) {
            (true, false) => 0,
            (false, true) => 1,
            _ => return None,
        };
        let exit = if back == 0 {
            else_dest.block
        } else {
            then_dest.block
        };
        if loops.contains(id, exit) {
            return None;
        }
        Some(RotatedLoop {
            header,
            preheader,
            latch,
            branch,
            back,
        })
    }

    /// The arguments the preheader passes to the header.
    pub fn init_args<'f>(&self, f: &'f Function) -> &'f [Value] {
        let t = f
            .terminator(self.preheader)
            .expect("preheader ends in a jump");
        &f.kind(t).targets()[0].args
    }

    /// The arguments the latch passes back to the header.
    pub fn next_args<'f>(&self, f: &'f Function) -> &'f [Value] {
        &f.kind(self.branch).targets()[self.back].args
    }

    /// The exit target's index in the latch's branch.
    pub fn exit(&self) -> usize {
        1 - self.back
    }

    /// For the header's pointer parameter `k` that the latch advances by
    /// `gep p, c, stride` with a constant `c`: `(c, stride)`.
    pub fn pointer_step(&self, f: &Function, k: usize) -> Option<(i32, u32)> {
        let p = f.block_params(self.header)[k];
        if f.value_type(p) != ir::Type::Ptr {
            return None;
        }
        let next = self.next_args(f)[k];
        match *f.kind(f.def_inst(next)?) {
            InstKind::Gep {
                base,
                index,
                stride,
            } if base == p => Some((f.as_iconst(index)?, stride)),
            _ => None,
        }
    }
}

/// The counter of a rotated loop (see the module documentation).
#[derive(Copy, Clone, Debug)]
pub struct Counter {
    /// Index of the counter among the header's parameters.
    pub index: usize,
    /// The header parameter.
    pub param: Value,
    /// Its value on entry.
    pub init: Value,
    /// Its value for the next iteration (`param + step`).
    pub next: Value,
    /// 1 or -1.
    pub step: i32,
    /// What the latch compares the counter (`param` or `next`) with.
    pub bound: Value,
    /// Whether the latch tests `next` (otherwise `param`).
    pub tests_next: bool,
    /// Whether the test includes the bound (`sle`, `sge`; otherwise `slt`, `sgt`).
    pub inclusive: bool,
}

impl Counter {
    /// The counter of `l`, if it has one.
    pub fn of(f: &Function, loops: &LoopForest, id: LoopId, l: &RotatedLoop) -> Option<Self> {
        let InstKind::Br { cond, .. } = f.kind(l.branch) else {
            return None;
        };
        let InstKind::Cmp { op, args: [a, b] } = *f.kind(f.def_inst(*cond)?) else {
            return None;
        };
        let invariant = |v: Value| f.value_block(v).is_none_or(|blk| !loops.contains(id, blk));
        // Normalise to `x op bound`, the loop continuing while it holds.
        let (mut op, x, bound) = if invariant(b) {
            (op, a, b)
        } else if invariant(a) {
            (op.swapped(), b, a)
        } else {
            return None;
        };
        if l.back == 1 {
            op = op.inverse()?;
        }
        let params = f.block_params(l.header);
        let (init, next) = (l.init_args(f), l.next_args(f));
        for (index, &param) in params.iter().enumerate() {
            let tests_next = x == next[index];
            if !(tests_next || x == param) {
                continue;
            }
            let step = step_of(f, param, next[index]).and_then(|c| f.as_iconst(c))?;
            let inclusive = match (step, op) {
                (1, CmpOp::Slt) | (-1, CmpOp::Sgt) => false,
                (1, CmpOp::Sle) | (-1, CmpOp::Sge) => true,
                (1 | -1, CmpOp::Ne)
                    if ne_reaches_bound(f, init[index], bound, step, tests_next) =>
                {
                    false
                }
                _ => return None,
            };
            let single_exit = || {
                loops.get(id).blocks.iter().all(|&b| {
                    b == l.latch || f.successors(b).iter().all(|&s| loops.contains(id, s))
                })
            };
            if inclusive
                && !inclusive_never_wraps(f, l, &invariant, param, step, bound, single_exit)
            {
                return None;
            }
            return Some(Counter {
                index,
                param,
                init: init[index],
                next: next[index],
                step,
                bound,
                tests_next,
                inclusive,
            });
        }
        None
    }

    /// How many times the body runs when the start and the bound are constants
    /// (at least once: a rotated loop's guard decided the first iteration).
    pub fn trip_count(&self, f: &Function) -> Option<i32> {
        let (start, bound) = (
            i64::from(f.as_iconst(self.init)?),
            i64::from(f.as_iconst(self.bound)?),
        );
        // The body runs for i = start, start + step, ..., last: the last value whose
        // test (of i + step, or of i) passes, plus the failing one when i is tested.
        let span = if self.step == 1 {
            bound - start
        } else {
            start - bound
        };
        let n = if self.tests_next { span } else { span + 1 };
        let n = if self.inclusive { n + 1 } else { n };
        i32::try_from(n.max(1)).ok()
    }
}

/// Whether a loop continuing while its counter (the value tested: before the step,
/// or after it when `tests_next`) differs from `bound` behaves as one continuing
/// while it is below the bound (above it for a step of -1): the start and the bound
/// are constants, and the first value tested is on the bound's side of it or on
/// it, so the counter meets the bound exactly instead of wrapping round
/// (`while (n != 0) { ...; n = n - 1; }` from a known `n`, the loop tail-recursion
/// elimination makes of a recursion that stops at 0).
fn ne_reaches_bound(f: &Function, init: Value, bound: Value, step: i32, tests_next: bool) -> bool {
    let (Some(start), Some(bound)) = (f.as_iconst(init), f.as_iconst(bound)) else {
        return false;
    };
    let first = i64::from(start) + if tests_next { i64::from(step) } else { 0 };
    let bound = i64::from(bound);
    if step == 1 {
        first <= bound
    } else {
        first >= bound
    }
}

/// Whether the counter `param` of a loop with an inclusive test cannot step past the
/// end of `i32` (module documentation): the bound is a constant short of it, or the
/// header accesses memory at `gep base, param + c, stride` with `base` invariant, or
/// (when the latch is the loop's only exit) through a pointer that advances by a
/// constant each iteration.
fn inclusive_never_wraps(
    f: &Function,
    l: &RotatedLoop,
    invariant: &dyn Fn(Value) -> bool,
    param: Value,
    step: i32,
    bound: Value,
    single_exit: impl Fn() -> bool,
) -> bool {
    if let Some(b) = f.as_iconst(bound) {
        return b != if step == 1 { i32::MAX } else { i32::MIN };
    }
    // A pointer parameter of the header advancing by a constant non-zero amount each
    // iteration, accessed (at a constant offset) in the header.
    let params = f.block_params(l.header);
    let marching = |p: Value| {
        params.iter().position(|&q| q == p).is_some_and(|k| {
            l.pointer_step(f, k)
                .is_some_and(|(c, stride)| c != 0 && stride >= 1)
        })
    };
    let through_marching_pointer = |ptr: Value| {
        marching(ptr)
            || matches!(f.def_inst(ptr).map(|g| f.kind(g)),
                Some(InstKind::Gep { base, index, .. })
                    if marching(*base) && f.as_iconst(*index).is_some())
    };
    let small_offset_of_counter = |index: Value| {
        if index == param {
            return true;
        }
        step_of(f, param, index)
            .and_then(|c| f.as_iconst(c))
            .is_some_and(|c| c.unsigned_abs() <= 1 << 16)
    };
    f.layout.block_insts(l.header).any(|i| {
        let ptr = match f.kind(i) {
            InstKind::Load { ptr, .. } | InstKind::Store { ptr, .. } => *ptr,
            _ => return false,
        };
        if through_marching_pointer(ptr) && single_exit() {
            return true;
        }
        let Some(InstKind::Gep {
            base,
            index,
            stride,
        }) = f.def_inst(ptr).map(|g| f.kind(g))
        else {
            return false;
        };
        *stride >= 1 && invariant(*base) && small_offset_of_counter(*index)
    })
}

/// `c` when `next` is `x + c` (either operand order).
pub fn step_of(f: &Function, x: Value, next: Value) -> Option<Value> {
    let InstKind::Binary {
        op: BinOp::Add,
        args: [a, b],
    } = *f.kind(f.def_inst(next)?)
    else {
        return None;
    };
    match (a == x, b == x) {
        (true, false) => Some(b),
        (false, true) => Some(a),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::analysis::DominatorTree;

    fn counter_of(src: &str) -> (Function, Option<Counter>) {
        let m = ir::parse_module(src).unwrap();
        let f = m
            .funcs
            .values()
            .find(|f| !f.is_declaration())
            .unwrap()
            .clone();
        let cfg = ControlFlowGraph::compute(&f);
        let dt = DominatorTree::compute(&f, &cfg);
        let loops = LoopForest::compute(&f, &cfg, &dt);
        let (id, _) = loops.loops().next().unwrap();
        let c = RotatedLoop::of(&f, &cfg, &loops, id).and_then(|l| Counter::of(&f, &loops, id, &l));
        (f, c)
    }

    const LOOP: &str = r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(3, 0)
bb1(%1: i32, %2: i32):
  %3 = add %2, %1
  %4 = add %1, 1
  %5 = slt %4, 10
  br %5, bb1(%4, %3), bb2
bb2:
  ret %3
}
"#;

    #[test]
    fn finds_the_counter_and_its_trip_count() {
        let (f, c) = counter_of(LOOP);
        let c = c.expect("a counter");
        assert_eq!((c.index, c.step, c.tests_next), (0, 1, true));
        assert_eq!(c.trip_count(&f), Some(7)); // i = 3..=9
        let (f, c) = counter_of(&LOOP.replace("slt %4, 10", "slt %1, 10"));
        assert_eq!(c.unwrap().trip_count(&f), Some(8)); // i = 3..=10
        let (f, c) = counter_of(&LOOP.replace("slt %4, 10", "slt %4, %0"));
        assert_eq!(c.unwrap().trip_count(&f), None);
        // Mirror image: counting down while above the bound, arms swapped.
        let down = LOOP
            .replace("add %1, 1", "add %1, -1")
            .replace("slt %4, 10", "sle %4, -5")
            .replace("br %5, bb1(%4, %3), bb2", "br %5, bb2, bb1(%4, %3)");
        let (f, c) = counter_of(&down);
        assert_eq!(c.unwrap().trip_count(&f), Some(8)); // i = 3..=-4
    }

    #[test]
    fn no_counter_when_the_variable_could_wrap() {
        for (from, to) in [
            ("add %1, 1", "add %1, 2"),
            // From 3, `i + 1 != 2` holds until `i` wraps round to 1.
            ("slt %4, 10", "ne %4, 2"),
            ("slt %4, 10", "ne %4, %0"),
            ("slt %4, 10", "sle %4, 2147483647"),
            ("slt %4, 10", "sle %4, %0"),
        ] {
            let (_, c) = counter_of(&LOOP.replace(from, to));
            assert!(c.is_none(), "{from} -> {to}");
        }
        let down = LOOP
            .replace("add %1, 1", "add %1, -1")
            .replace("slt %4, 10", "sge %4, -2147483648");
        assert!(counter_of(&down).1.is_none());
    }

    #[test]
    fn a_not_equal_test_that_meets_its_bound_counts() {
        // From 3 up while `i + 1 != 10`: i = 3..=9, as with `slt`.
        let (f, c) = counter_of(&LOOP.replace("slt %4, 10", "ne %4, 10"));
        assert_eq!(c.expect("a counter").trip_count(&f), Some(7));
        // Testing `i` itself: from 3 while `i != 3` runs once (the rotated loop's
        // first iteration), and `i != 4` twice.
        let (f, c) = counter_of(&LOOP.replace("slt %4, 10", "ne %1, 3"));
        assert_eq!(c.expect("a counter").trip_count(&f), Some(1));
        let (f, c) = counter_of(&LOOP.replace("slt %4, 10", "ne %1, 4"));
        assert_eq!(c.expect("a counter").trip_count(&f), Some(2));
        // Counting down to 0 and leaving on `eq` (arms swapped), as
        // tail-recursion elimination leaves `if (n == 0) return acc;`.
        let down = LOOP
            .replace("add %1, 1", "add %1, -1")
            .replace("slt %4, 10", "eq %4, 0")
            .replace("br %5, bb1(%4, %3), bb2", "br %5, bb2, bb1(%4, %3)");
        let (f, c) = counter_of(&down);
        assert_eq!(c.expect("a counter").trip_count(&f), Some(3)); // i = 3, 2, 1
                                                                   // Counting down from 3 while `i - 1 != 5` never meets 5.
        let (_, c) = counter_of(&down.replace("eq %4, 0", "eq %4, 5"));
        assert!(c.is_none());
    }

    #[test]
    fn inclusive_tests_count_one_more() {
        let (f, c) = counter_of(&LOOP.replace("slt %4, 10", "sle %4, 10"));
        let c = c.expect("a counter");
        assert!(c.inclusive);
        assert_eq!(c.trip_count(&f), Some(8)); // i = 3..=10
        let (f, c) = counter_of(&LOOP.replace("slt %4, 10", "sle %1, 10"));
        assert_eq!(c.unwrap().trip_count(&f), Some(9)); // i = 3..=11
        let down = LOOP
            .replace("add %1, 1", "add %1, -1")
            .replace("slt %4, 10", "sge %4, -5");
        let (f, c) = counter_of(&down);
        assert_eq!(c.unwrap().trip_count(&f), Some(9)); // i = 3..=-5
    }

    /// `while (i <= n) s += a[i + c]` with `n` unknown.
    fn accessing(offset: i32) -> String {
        format!(
            r#"
global @a: [i32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
func @f(i32) -> i32 {{
bb0(%0: i32):
  jump bb1(3, 0)
bb1(%1: i32, %2: i32):
  %6 = add %1, {offset}
  %7 = gep @a, %6, 4
  %8 = load i32, %7
  %3 = add %2, %8
  %4 = add %1, 1
  %5 = sle %4, %0
  br %5, bb1(%4, %3), bb2
bb2:
  ret %3
}}
"#
        )
    }

    #[test]
    fn an_access_every_iteration_keeps_an_inclusive_counter_from_wrapping() {
        for offset in [-3, 0, 5, 65536, -65536] {
            let (_, c) = counter_of(&accessing(offset));
            assert!(c.is_some_and(|c| c.inclusive), "offset {offset}");
        }
        // A far offset could reach back into the object after the wrap.
        for offset in [65537, -2147483000] {
            let (_, c) = counter_of(&accessing(offset));
            assert!(c.is_none(), "offset {offset}");
        }
        // A varying base proves nothing.
        let varying = accessing(0).replace(
            "%7 = gep @a, %6, 4",
            "%9 = gep @a, %2, 4\n  %7 = gep %9, %6, 4",
        );
        assert!(counter_of(&varying).1.is_none());
    }

    /// After strength reduction: `while (i <= n) { s += *p; p++; }` with `n` unknown.
    const MARCHING: &str = r#"
global @a: [i32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
func @f(i32) -> i32 {
bb0(%0: i32):
  %9 = gep @a, 0, 4
  jump bb1(3, 0, %9)
bb1(%1: i32, %2: i32, %10: ptr):
  %8 = load i32, %10
  %3 = add %2, %8
  %4 = add %1, 1
  %11 = gep %10, 1, 4
  %5 = sle %4, %0
  br %5, bb1(%4, %3, %11), bb2
bb2:
  ret %3
}
"#;

    #[test]
    fn a_marching_pointer_keeps_an_inclusive_counter_from_wrapping() {
        let (_, c) = counter_of(MARCHING);
        assert!(c.is_some_and(|c| c.inclusive));
        // A pointer that stays put proves nothing.
        let still = MARCHING.replace("gep %10, 1, 4", "gep %10, 0, 4");
        assert!(counter_of(&still).1.is_none());
        // Nor one that marches when the loop has another way out.
        let exits = MARCHING
            .replace(
                "  %8 = load i32, %10\n",
                "  %8 = load i32, %10\n  %20 = eq %8, 99\n  br %20, bb2, bb3\nbb3:\n",
            )
            .replace("bb2:\n  ret %3", "bb2:\n  ret 0");
        let m = ir::parse_module(&exits).unwrap();
        ir::verify_module(&m).unwrap();
        let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let loops = LoopForest::compute(f, &cfg, &dt);
        let (id, _) = loops.loops().next().unwrap();
        let l = RotatedLoop::of(f, &cfg, &loops, id).unwrap();
        assert!(Counter::of(f, &loops, id, &l).is_none());
    }
}
