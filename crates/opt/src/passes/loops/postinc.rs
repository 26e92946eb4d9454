//! Post-increment addressing: an access through a pointer induction variable placed
//! after the pointer's increment goes through the incremented pointer, with the
//! offset corrected.
//!
//! ```text
//!   h(p):  q = gep p, 1, 4             h(p):  q = gep p, 1, 4
//!          ...                   =>           ...
//!          x = load p                         r = gep q, -1, 4
//!          ...  jump h(q)                     x = load r  ...  jump h(q)
//! ```
//!
//! Before, `p` and `q` are both live between the increment and the load, so they
//! cannot share a register and the back edge copies `q` into `p`'s register on
//! every iteration. After, `p` dies at the increment; the back end folds the
//! constant offset into the access. This is the choice LLVM's loop strength
//! reduction makes when it rewrites uses after the increment in terms of the
//! post-incremented value (`PostIncLoops`), and GCC's induction variable
//! optimisation with candidates incremented before the uses (`IP_NORMAL` vs
//! `IP_END`).
//!
//! Rewritten are the uses of a loop header's pointer parameter `p` that the
//! increment `q = gep p, c, S` (with `q` the back edge's argument for `p`)
//! dominates: loads and stores through `p`, and `gep p, k, S` with a constant `k`
//! (to `gep q, k - c, S`). Other uses keep `p`.

use crate::analysis::FunctionAnalyses;
use crate::analysis::LoopForest;
use crate::analysis::Preserved;
use crate::pipeline::FunctionTransform;
use ir::analysis::DominatorTree;
use ir::{Function, Inst, InstKind, Type, Value};

/// The post-increment addressing pass.
pub struct PostInc;

impl FunctionTransform for PostInc {
    const NAME: &'static str = "postinc";
    const DESCRIPTION: &'static str = "address through an incremented pointer after its increment";
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        let (_, dt, loops) = fa.loops(f);
        run_on(f, dt, loops) > 0
    }
}

/// Rewrites the uses that qualify in `f`; returns how many.
pub fn run(f: &mut Function) -> usize {
    crate::passes::with_loops(f, |f, _, dt, loops| run_on(f, dt, loops))
}

/// [`run`] with the function's dominator tree and loops given (the pass adds no
/// edges).
pub fn run_on(f: &mut Function, dt: &DominatorTree, loops: &LoopForest) -> usize {
    let mut increments: Vec<(Value, Inst, i32, u32)> = Vec::new();
    for (_, lp) in loops.loops() {
        for &latch in &lp.latches {
            let Some(term) = f.terminator(latch) else {
                continue;
            };
            for t in f.kind(term).targets() {
                if t.block != lp.header {
                    continue;
                }
                for (&p, &a) in f.block_params(lp.header).iter().zip(&t.args) {
                    let Some(q) = f.def_inst(a) else {
                        continue;
                    };
                    if let InstKind::Gep {
                        base,
                        index,
                        stride,
                    } = *f.kind(q)
                    {
                        if let (true, Some(c)) = (base == p, f.as_iconst(index)) {
                            increments.push((p, q, c, stride));
                        }
                    }
                }
            }
        }
    }
    increments.sort_unstable_by_key(|&(p, q, ..)| (p, q));
    increments.dedup_by_key(|&mut (p, q, ..)| (p, q));
    let mut rewritten = 0;
    for (p, q, c, stride) in increments {
        let users: Vec<Inst> = f.users(p).to_vec();
        for u in users {
            if u == q || !after(f, dt, q, u) {
                continue;
            }
            rewritten += usize::from(rewrite(f, u, p, q, c, stride));
        }
    }
    rewritten
}

/// Whether instruction `a` comes before `b` on every path to `b`: earlier in the
/// same block, or in a block strictly dominating `b`'s.
fn after(f: &Function, dt: &DominatorTree, a: Inst, b: Inst) -> bool {
    let (Some(ba), Some(bb)) = (f.layout.inst_block(a), f.layout.inst_block(b)) else {
        return false;
    };
    if ba != bb {
        return dt.strictly_dominates(ba, bb);
    }
    f.layout
        .block_insts(ba)
        .take_while(|&i| i != b)
        .any(|i| i == a)
}

/// Rewrites use `u` of `p` in terms of `q = gep p, c, stride`; whether it did.
fn rewrite(f: &mut Function, u: Inst, p: Value, q: Inst, c: i32, stride: u32) -> bool {
    let qv = f.inst_result(q).expect("gep has a result");
    match *f.kind(u) {
        InstKind::Gep {
            base,
            index,
            stride: s,
        } if base == p && s == stride => {
            let Some(k) = f.as_iconst(index).and_then(|k| k.checked_sub(c)) else {
                return false;
            };
            if k == 0 {
                let r = f.inst_result(u).expect("gep has a result");
                f.replace_all_uses(r, qv);
                f.remove_inst(u);
                return true;
            }
            let index = f.iconst(k);
            f.replace_kind(
                u,
                InstKind::Gep {
                    base: qv,
                    index,
                    stride,
                },
            );
            true
        }
        InstKind::Load { ptr, .. } if ptr == p => {
            let r = back(f, u, qv, c, stride);
            f.map_inst_args(u, |v| if v == p { r } else { v });
            true
        }
        InstKind::Store { value, ptr } if ptr == p && value != p => {
            let r = back(f, u, qv, c, stride);
            f.map_inst_args(u, |v| if v == p { r } else { v });
            true
        }
        _ => false,
    }
}

/// `gep q, -c, stride`, inserted before `u`.
fn back(f: &mut Function, u: Inst, q: Value, c: i32, stride: u32) -> Value {
    let index = f.iconst(c.wrapping_neg());
    let g = f.insert_inst_before(
        u,
        InstKind::Gep {
            base: q,
            index,
            stride,
        },
        Type::Ptr,
    );
    f.inst_result(g).expect("gep has a result")
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    #[test]
    fn accesses_after_the_increment_use_the_incremented_pointer() {
        // The load and the gep after `q` are rewritten; the load before it and the
        // comparison keep `p`.
        let src = r#"
global @a: [i32; 8] = [1, 2, 3, 4, 5, 6, 7, 8]

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = gep @a, 0, 4
  %1 = gep @a, 7, 4
  jump bb1(%0, 0)
bb1(%2: ptr, %3: i32):
  %4 = load i32, %2
  %5 = gep %2, 1, 4
  %6 = load i32, %5
  %7 = load i32, %2
  %8 = gep %2, 1, 4
  %9 = load i32, %8
  %10 = add %3, %4
  %11 = add %10, %6
  %12 = add %11, %7
  %13 = add %12, %9
  store %13, %2
  %14 = slt %5, %1
  br %14, bb1(%5, %13), bb2
bb2:
  call @putint(%13)
  ret 0
}
"#;
        check(
            &["postinc"],
            src,
            r#"
global @a: [i32; 8] = [1, 2, 3, 4, 5, 6, 7, 8]

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = gep @a, 0, 4
  %1 = gep @a, 7, 4
  jump bb1(%0, 0)
bb1(%2: ptr, %3: i32):
  %4 = load i32, %2
  %5 = gep %2, 1, 4
  %6 = load i32, %5
  %7 = gep %5, -1, 4
  %8 = load i32, %7
  %9 = load i32, %5
  %10 = add %3, %4
  %11 = add %10, %6
  %12 = add %11, %8
  %13 = add %12, %9
  %14 = gep %5, -1, 4
  store %13, %14
  %15 = slt %5, %1
  br %15, bb1(%5, %13), bb2
bb2:
  call @putint(%13)
  ret 0
}
"#,
        );
        same_behaviour(src, &["postinc"], "");
    }

    #[test]
    fn pointers_not_stepping_by_a_constant_are_left() {
        // The back edge passes a pointer advanced by a variable amount.
        let src = r#"
global @a: [i32; 8] = [1, 2, 3, 4, 5, 6, 7, 8]

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = gep @a, 0, 4
  %2 = gep @a, 7, 4
  jump bb1(%1)
bb1(%3: ptr):
  %4 = gep %3, %0, 4
  %5 = load i32, %3
  call @putint(%5)
  %6 = slt %4, %2
  br %6, bb1(%4), bb2
bb2:
  ret 0
}
"#;
        check(&["postinc"], src, src);
        same_behaviour(src, &["postinc"], "2");
    }
}
