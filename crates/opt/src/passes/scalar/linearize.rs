//! Linear forms of integer sums: a DAG of `add`s and `sub`s in one block, shared
//! subterms included, is expanded into `c1 * x1 + ... + cn * xn + k` over its leaves
//! and rebuilt when that takes fewer instructions than the DAG's nodes that only it
//! uses. `a - (a + b) + b - (a + b)` (an exclusive-or written with additions, as
//! inlining leaves it) is `-a - b`; `(x - y) - (z - y)` is `x - z`.
//!
//! Integer addition, subtraction and multiplication by a constant are ring operations
//! modulo 2^32, so the coefficients (wrapping `i32`s) give exactly the value the DAG
//! computes. This is the canonical sum-of-products form algebraic simplifiers reduce
//! to (Cooper and Torczon, "Engineering a Compiler", 2nd ed., 10.3.2, reassociation;
//! GCC's `tree-ssa-reassoc` linearises operand lists the same way). Where
//! [`super::reassoc`] stops at operands with other uses, this pass follows them as
//! long as every use lies inside the expression, which is what lets `a + b`, used
//! twice above, cancel.
//!
//! The rebuilt sum takes a subtraction or addition per leaf, a shift or multiply per
//! coefficient other than +-1, one more if it must start from a negated leaf, and one
//! for a non-zero constant. Nodes are expanded in the root's block only, at most 32,
//! with at most 8 leaves, so nothing moves between blocks and the work per root is
//! bounded.

use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::FunctionTransform;
use ir::{BinOp, Block, Function, Inst, InstKind, Type, Value};
use rustc_hash::{FxHashMap, FxHashSet};

/// The linear-form pass.
pub struct Linearize;

impl FunctionTransform for Linearize {
    const NAME: &'static str = "linearize";
    const DESCRIPTION: &'static str = "rebuild integer add/sub expressions (shared subterms included) from their linear form when shorter";
    /// Rewrites instructions only: no block or edge changes.
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
        run(f) > 0
    }
}

const MAX_NODES: usize = 32;
const MAX_LEAVES: usize = 8;

/// Rebuilds the expressions of `f` whose linear form is shorter; returns how many.
pub fn run(f: &mut Function) -> usize {
    let mut rebuilt = 0;
    let blocks: Vec<Block> = f.layout.blocks().collect();
    for b in blocks {
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for root in insts {
            if !is_addsub(f, root, b) || !is_root(f, root, b) {
                continue;
            }
            if let Some(form) = Form::of(f, root, b) {
                if form.cost() < removable(f, root, &form.nodes) {
                    form.rebuild(f, root);
                    rebuilt += 1;
                }
            }
        }
    }
    rebuilt
}

/// Whether `i` is an `i32` `add` or `sub` in block `b`.
fn is_addsub(f: &Function, i: Inst, b: Block) -> bool {
    f.layout.inst_block(i) == Some(b)
        && matches!(
            f.kind(i),
            InstKind::Binary {
                op: BinOp::Add | BinOp::Sub,
                ..
            }
        )
        && f.inst_result(i)
            .is_some_and(|r| f.value_type(r) == Type::I32)
}

/// Whether some use of `i`'s result is not an `add`/`sub` of the same block (so `i`
/// is not just an inner node of a bigger expression).
fn is_root(f: &Function, i: Inst, b: Block) -> bool {
    let r = f.inst_result(i).expect("a binary instruction has a result");
    f.users(r).iter().any(|&u| !is_addsub(f, u, b))
}

/// How many of the expression's nodes would die with its root: those whose every use
/// is a node that dies.
fn removable(f: &Function, root: Inst, nodes: &[Inst]) -> usize {
    let mut dead: FxHashSet<Inst> = nodes.iter().copied().collect();
    loop {
        let still: FxHashSet<Inst> = dead
            .iter()
            .copied()
            .filter(|&n| {
                n == root || {
                    let r = f.inst_result(n).expect("a binary instruction has a result");
                    f.users(r).iter().all(|u| dead.contains(u))
                }
            })
            .collect();
        if still.len() == dead.len() {
            return still.len();
        }
        dead = still;
    }
}

/// Terms `(leaf, coefficient)` and a constant.
type Linear = (Vec<(Value, i32)>, i32);

/// `sum(coefficient * leaf) + constant`, with the nodes expanded to get it.
struct Form {
    terms: Vec<(Value, i32)>,
    constant: i32,
    nodes: Vec<Inst>,
}

impl Form {
    fn of(f: &Function, root: Inst, b: Block) -> Option<Form> {
        let mut form = Form {
            terms: Vec::new(),
            constant: 0,
            nodes: Vec::new(),
        };
        let mut memo: FxHashMap<Value, Linear> = FxHashMap::default();
        let r = f.inst_result(root)?;
        let (terms, constant) = form.expand(f, b, r, &mut memo)?;
        form.terms = terms.into_iter().filter(|&(_, c)| c != 0).collect();
        form.constant = constant;
        Some(form)
    }

    /// The linear form of `v` (terms and constant), recording expanded nodes.
    fn expand(
        &mut self,
        f: &Function,
        b: Block,
        v: Value,
        memo: &mut FxHashMap<Value, Linear>,
    ) -> Option<Linear> {
        if let Some(c) = f.as_iconst(v) {
            return Some((Vec::new(), c));
        }
        let node = f.def_inst(v).filter(|&i| is_addsub(f, i, b));
        let Some(i) = node else {
            return Some((vec![(v, 1)], 0));
        };
        if let Some(l) = memo.get(&v) {
            return Some(l.clone()); // a shared node, expanded once
        }
        self.nodes.push(i);
        if self.nodes.len() > MAX_NODES {
            return None;
        }
        let InstKind::Binary { op, args: [x, y] } = *f.kind(i) else {
            unreachable!("an add or sub")
        };
        let (mut terms, cx) = self.expand(f, b, x, memo)?;
        let (ty, cy) = self.expand(f, b, y, memo)?;
        let sign = if op == BinOp::Sub { -1i32 } else { 1 };
        for (leaf, c) in ty {
            let c = c.wrapping_mul(sign);
            match terms.iter_mut().find(|(l, _)| *l == leaf) {
                Some(t) => t.1 = t.1.wrapping_add(c),
                None => terms.push((leaf, c)),
            }
        }
        if terms.len() > MAX_LEAVES {
            return None;
        }
        let constant = cx.wrapping_add(cy.wrapping_mul(sign));
        memo.insert(v, (terms.clone(), constant));
        Some((terms, constant))
    }

    /// Instructions the rebuilt sum takes.
    fn cost(&self) -> usize {
        let scaled = self
            .terms
            .iter()
            .filter(|&&(_, c)| c != 1 && c != -1)
            .count();
        let negated_start = !self.terms.is_empty() && !self.terms.iter().any(|t| t.1 == 1);
        self.terms.len().saturating_sub(1)
            + scaled
            + usize::from(negated_start)
            + usize::from(self.constant != 0 && !self.terms.is_empty())
    }

    /// Emits the sum before `root` and replaces `root` with it.
    fn rebuild(&self, f: &mut Function, root: Inst) {
        let emit = |f: &mut Function, op: BinOp, x: Value, y: Value| {
            let i = f.insert_inst_before(root, InstKind::Binary { op, args: [x, y] }, Type::I32);
            f.inst_result(i).expect("a binary instruction has a result")
        };
        // A term with coefficient 1 first, so nothing needs negating.
        let mut order: Vec<(Value, i32)> = self.terms.clone();
        if let Some(k) = order.iter().position(|t| t.1 == 1) {
            let t = order.remove(k);
            order.insert(0, t);
        }
        let mut acc: Option<Value> = None;
        for (leaf, c) in order {
            // c * leaf as +-(|c| * leaf); i32::MIN stays a positive multiplier.
            let negative = c < 0 && c != i32::MIN;
            let magnitude = if negative { -c } else { c };
            let term = match magnitude {
                1 => leaf,
                m if m > 0 && (m as u32).is_power_of_two() => {
                    let k = f.iconst(m.trailing_zeros() as i32);
                    emit(f, BinOp::Shl, leaf, k)
                }
                m => {
                    let k = f.iconst(m);
                    emit(f, BinOp::Mul, leaf, k)
                }
            };
            acc = Some(match (acc, negative) {
                (None, false) => term,
                (None, true) => {
                    let zero = f.iconst(0);
                    emit(f, BinOp::Sub, zero, term)
                }
                (Some(a), false) => emit(f, BinOp::Add, a, term),
                (Some(a), true) => emit(f, BinOp::Sub, a, term),
            });
        }
        let k = f.iconst(self.constant);
        let value = match acc {
            None => k,
            Some(a) if self.constant != 0 => emit(f, BinOp::Add, a, k),
            Some(a) => a,
        };
        let r = f
            .inst_result(root)
            .expect("a binary instruction has a result");
        f.replace_all_uses(r, value);
        f.remove_inst(root);
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `xor(a, b) = a - (a + b) + b - (a + b)`, twice: `xor(xor(a, b), c)`.
    const XOR: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = call @getint()
  %3 = add %0, %1
  %4 = sub %0, %3
  %5 = add %4, %1
  %6 = sub %5, %3
  %7 = add %6, %2
  %8 = sub %6, %7
  %9 = add %8, %2
  %10 = sub %9, %7
  call @putint(%10)
  ret 0
}
"#;

    #[test]
    fn shared_sums_cancel() {
        // xor(a, b) = -a - b; xor of that with c = a + b - c.
        let out = same_behaviour(XOR, &["linearize", "dce"], "5 -9 100");
        let body = &out[out.find("bb0:").unwrap()..];
        assert_eq!(
            body.matches(" = add ").count() + body.matches(" = sub ").count(),
            2,
            "{out}"
        );
        same_behaviour(XOR, &["linearize", "dce"], "2147483647 1 -2147483648");
    }

    /// Coefficients other than one become shifts or multiplies, constants fold, and
    /// a sum that cancels completely is its constant.
    #[test]
    fn coefficients_and_constants() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = add %0, 7
  %3 = add %2, %2
  %4 = add %3, %2
  %5 = sub %4, %1
  %6 = add %5, %1
  %7 = sub %6, %0
  call @putint(%7)
  %8 = sub %2, %0
  %9 = add %8, %8
  call @putint(%9)
  ret 0
}
"#;
        let out = same_behaviour(src, &["linearize", "dce"], "-4 11");
        assert!(out.contains("call @putint(14)"), "{out}");
        assert!(out.contains("shl %0, 1"), "{out}");
    }

    /// A node also used outside the expression stays, and counts against the
    /// rebuild: `t = a + b; print(t); print(t - a)` is already as short as `b`... but
    /// `t - a` is `b`, free, so it is replaced; `(a + b) + (a - b)` with both halves
    /// printed stays.
    #[test]
    fn nodes_with_outside_uses_are_not_counted_as_saved() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = add %0, %1
  %3 = sub %0, %1
  %4 = add %2, %3
  call @putint(%2)
  call @putint(%3)
  call @putint(%4)
  %5 = sub %2, %0
  call @putint(%5)
  ret 0
}
"#;
        let out = run(src, &["linearize", "dce"]);
        assert!(out.contains("add %2, %3"), "{out}");
        assert!(out.contains("call @putint(%1)"), "{out}");
        same_behaviour(src, &["linearize", "dce"], "3 -8");
    }
}
