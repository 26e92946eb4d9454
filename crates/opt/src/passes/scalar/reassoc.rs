//! Reassociation of integer sums and products: a tree of `add`s (or `mul`s) is
//! rebuilt as a chain with its operands sorted by *rank*, so that operands defined
//! early — constants, function parameters, values computed before a loop — are
//! combined first. The partial results over loop-invariant operands are then
//! themselves loop-invariant and move out of the loop ([`crate::passes::loops::licm`]); constants
//! meet and fold; and `k` copies of one operand in a sum become one multiply.
//!
//! The rank-based reassociation of Briggs and Cooper ("Effective Partial Redundancy
//! Elimination", PLDI 1994, section 3; also LLVM's `Reassociate` and GCC's
//! `tree-ssa-reassoc`): the rank of a constant is 0, of any other value one more than
//! the position of its definition in reverse post-order (block parameters at their
//! block's start). Integer addition and multiplication wrap, so they are associative
//! and commutative exactly; float arithmetic is not, and is left alone.
//!
//! A tree is a root instruction together with the operands of the same operator that
//! have no other use and sit in the same block (so nothing moves between blocks);
//! trees of two operands are left as they are.
//!
//! Each step of the rebuilt chain is placed as soon as its operands are ready:
//! right after the later of the previous step and its new operand's definition,
//! and not above the tree's first instruction. A sum accumulated over a long block
//! (a fully unrolled loop adding what each iteration printed) then still
//! accumulates as it goes, as it did before the rebuild (LLVM's `Reassociate`
//! keeps it so by rewriting the tree's own instructions in place), where a chain
//! emitted at the root would keep every term live to the end, across the calls
//! between (each in a callee-saved register or a stack slot).

use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::FunctionTransform;
use ir::analysis::ControlFlowGraph;
use ir::{BinOp, Function, Inst, InstKind, SecondaryMap, Type, Value, ValueDef};

/// The reassociation pass.
pub struct Reassociate;

impl FunctionTransform for Reassociate {
    const NAME: &'static str = "reassoc";
    const DESCRIPTION: &'static str =
        "reorder integer sums and products by rank (invariants and constants first)";
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, fa: &mut FunctionAnalyses) -> bool {
        run_on(f, fa.cfg(f)) > 0
    }
}

/// Rebuilds the trees of `f` whose order changes; returns how many.
pub fn run(f: &mut Function) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let cfg = ControlFlowGraph::compute(f);
    run_on(f, &cfg)
}

/// [`run`] with the function's CFG given (the pass changes no edges).
pub fn run_on(f: &mut Function, cfg: &ControlFlowGraph) -> usize {
    // Positions in reverse post-order: block starts and instructions.
    let mut block_pos: SecondaryMap<ir::Block, u32> = f.block_map();
    let mut inst_pos: SecondaryMap<Inst, u32> = f.inst_map();
    let mut n = 1;
    for &b in cfg.rpo() {
        block_pos[b] = n;
        n += 1;
        for i in f.layout.block_insts(b) {
            inst_pos[i] = n;
            n += 1;
        }
    }
    let rank = |f: &Function, v: Value| -> u32 {
        match f.value_def(v) {
            ValueDef::Inst(i) => inst_pos[i],
            ValueDef::Param(b, _) => block_pos[b],
            _ => 0,
        }
    };
    // The instructions chains were built of (not in `inst_pos`).
    let mut emitted: SecondaryMap<Inst, bool> = f.inst_map();
    let mut rebuilt = 0;
    for &b in cfg.rpo() {
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for root in insts {
            if !f.layout.is_inst_inserted(root) {
                continue; // an inner node of a tree rebuilt earlier
            }
            let op = match f.kind(root) {
                InstKind::Binary {
                    op: op @ (BinOp::Add | BinOp::Mul),
                    ..
                } => *op,
                _ => continue,
            };
            if is_inner(f, root, op) {
                continue; // its tree's root comes later
            }
            let (leaves, inner) = tree(f, root, op);
            if leaves.len() < 3 {
                continue;
            }
            let mut sorted = leaves.clone();
            // Equal ranks (parameters of one block) by value, so copies meet.
            sorted.sort_by_key(|&v| (rank(f, v), v));
            let sorted = combine(f, op, sorted);
            // Already in order: rebuilt only to fold repeated terms of a sum.
            let repeats = op == BinOp::Add && sorted.windows(2).any(|w| w[0] == w[1]);
            if sorted == leaves && !repeats {
                continue;
            }
            // The tree's first instruction in the block: no step goes above it
            // (inner nodes come before the root, and are never steps of an earlier
            // chain, whose last step has the old root's users).
            let first = inner
                .iter()
                .copied()
                .min_by_key(|&i| inst_pos[i])
                .unwrap_or(root);
            let mut at = Placement {
                before: first,
                root,
                inst_pos: &inst_pos,
                emitted: &mut emitted,
            };
            let value = build_chain(f, &mut at, op, &sorted);
            let r = f.inst_result(root).expect("binary has a result");
            f.replace_all_uses(r, value);
            f.remove_inst(root);
            for i in inner {
                f.remove_inst(i);
            }
            rebuilt += 1;
        }
    }
    rebuilt
}

/// Whether `i` is an inner node of a bigger tree of `op`: it is an `op` itself and
/// its only use is an `op` instruction in the same block.
fn is_inner(f: &Function, i: Inst, op: BinOp) -> bool {
    if !matches!(f.kind(i), InstKind::Binary { op: o, .. } if *o == op) {
        return false;
    }
    let Some(r) = f.inst_result(i) else {
        return false;
    };
    let [user] = f.users(r) else {
        return false;
    };
    let same_block = f.layout.inst_block(*user) == f.layout.inst_block(i);
    same_block && matches!(f.kind(*user), InstKind::Binary { op: o, .. } if *o == op)
}

/// The leaves of the tree rooted at `root` (left to right) and its inner nodes.
fn tree(f: &Function, root: Inst, op: BinOp) -> (Vec<Value>, Vec<Inst>) {
    let mut leaves = Vec::new();
    let mut inner = Vec::new();
    // Depth-first, left operand first, with an explicit stack.
    let mut stack: Vec<Value> = Vec::new();
    let InstKind::Binary { args, .. } = f.kind(root) else {
        unreachable!("roots are binary")
    };
    stack.push(args[1]);
    stack.push(args[0]);
    while let Some(v) = stack.pop() {
        let expand = f
            .def_inst(v)
            .filter(|&i| is_inner(f, i, op) && f.layout.inst_block(i) == f.layout.inst_block(root));
        match expand {
            Some(i) => {
                inner.push(i);
                let InstKind::Binary { args, .. } = f.kind(i) else {
                    unreachable!("inner nodes are binary")
                };
                stack.push(args[1]);
                stack.push(args[0]);
            }
            None => leaves.push(v),
        }
    }
    (leaves, inner)
}

/// Folds the constants of a sorted operand list into one, placed last (dropped when it
/// is the operator's identity).
fn combine(f: &mut Function, op: BinOp, sorted: Vec<Value>) -> Vec<Value> {
    let mut konst: Option<i32> = None;
    let mut rest = Vec::with_capacity(sorted.len());
    for v in sorted {
        match f.as_iconst(v) {
            Some(c) => {
                konst = Some(match (konst, op) {
                    (None, _) => c,
                    (Some(k), BinOp::Add) => k.wrapping_add(c),
                    (Some(k), _) => k.wrapping_mul(c),
                })
            }
            None => rest.push(v),
        }
    }
    let identity = if op == BinOp::Add { 0 } else { 1 };
    if let Some(k) = konst.filter(|&k| k != identity || rest.is_empty()) {
        rest.push(f.iconst(k));
    }
    rest
}

/// Steps of earlier chains skipped looking for the instruction after a
/// definition, before a chain gives up placing its steps apart.
const MAX_WALK: usize = 16;

/// Where the steps of a chain go: each before an instruction of the block as it
/// was (`inst_pos` orders them), the latest so far in `before`.
struct Placement<'a> {
    before: Inst,
    /// The tree's root: the place of every step when placing them apart would
    /// cost too long a walk.
    root: Inst,
    inst_pos: &'a SecondaryMap<Inst, u32>,
    /// The chain steps emitted so far, in every tree.
    emitted: &'a mut SecondaryMap<Inst, bool>,
}

impl Placement<'_> {
    /// Moves the insertion point below the definition of `v` when that is in the
    /// block further down: before the first original instruction after it.
    fn after_def(&mut self, f: &Function, v: Value) {
        let Some(d) = f.def_inst(v) else {
            return;
        };
        if f.layout.inst_block(d) != f.layout.inst_block(self.before) {
            return;
        }
        let mut next = f.layout.next_inst(d);
        let mut walked = 0;
        while let Some(n) = next.filter(|&n| self.emitted[n]) {
            walked += 1;
            if walked > MAX_WALK {
                // Many steps of earlier chains after `d`: this chain goes at the
                // root, as before any placement, so the walks stay short.
                self.before = self.root;
                return;
            }
            next = f.layout.next_inst(n);
        }
        if let Some(n) = next.filter(|&n| self.inst_pos[n] > self.inst_pos[self.before]) {
            self.before = n;
        }
    }

    /// Emits `a op b` once both are defined.
    fn emit(&mut self, f: &mut Function, op: BinOp, a: Value, b: Value) -> Value {
        self.after_def(f, a);
        self.after_def(f, b);
        let i = f.insert_inst_before(
            self.before,
            InstKind::Binary { op, args: [a, b] },
            Type::I32,
        );
        self.emitted[i] = true;
        f.inst_result(i).expect("binary has a result")
    }
}

/// Emits `((l0 op l1) op l2) ...` as [`Placement`] places each step, folding runs
/// of one value in a sum into a multiply; returns the result.
fn build_chain(f: &mut Function, at: &mut Placement, op: BinOp, leaves: &[Value]) -> Value {
    let mut acc: Option<Value> = None;
    let mut k = 0;
    while k < leaves.len() {
        let v = leaves[k];
        let mut n = 1;
        while op == BinOp::Add
            && k + n < leaves.len()
            && leaves[k + n] == v
            && f.as_iconst(v).is_none()
        {
            n += 1;
        }
        let term = if n > 1 {
            let c = f.iconst(n as i32);
            at.emit(f, BinOp::Mul, v, c)
        } else {
            v
        };
        acc = Some(match acc {
            None => term,
            Some(a) => at.emit(f, op, a, term),
        });
        k += n;
    }
    acc.expect("a tree has leaves")
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, same_behaviour};

    #[test]
    fn invariant_operands_first_then_licm_hoists_them() {
        // sum = ((sum + a) + b) + a inside a loop: a and b are parameters.
        let src = r#"
declare @putint(i32) -> void

func @f(i32, i32, i32) -> i32 {
bb0(%0: i32, %1: i32, %2: i32):
  jump bb1(0, 0)
bb1(%3: i32, %4: i32):
  %5 = add %4, %0
  %6 = add %5, %1
  %7 = add %6, %0
  %8 = add %7, 3
  %9 = add %3, 1
  %10 = slt %9, %2
  br %10, bb1(%9, %8), bb2
bb2:
  ret %8
}
"#;
        check(
            &["reassoc"],
            src,
            r#"
declare @putint(i32) -> void

func @f(i32, i32, i32) -> i32 {
bb0(%0: i32, %1: i32, %2: i32):
  jump bb1(0, 0)
bb1(%3: i32, %4: i32):
  %5 = mul %0, 2
  %6 = add %5, %1
  %7 = add %6, %4
  %8 = add %7, 3
  %9 = add %3, 1
  %10 = slt %9, %2
  br %10, bb1(%9, %8), bb2
bb2:
  ret %8
}
"#,
        );
        let out = crate::passes::testutil::run(src, &["reassoc", "licm"]);
        let header = out.find("\nbb1(").unwrap();
        assert!(out.find("mul %0, 2").unwrap() < header, "{out}");
    }

    #[test]
    fn products_and_behaviour() {
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = mul %1, 3
  %3 = mul %2, %0
  %4 = mul %3, 5
  %5 = mul %4, %1
  call @putint(%5)
  %6 = add %0, %1
  %7 = add %6, %0
  %8 = add %7, %0
  call @putint(%8)
  ret 0
}
"#;
        let out = same_behaviour(src, &["reassoc"], "123456 -98765");
        assert!(out.contains(", 15"), "constants folded: {out}");
        assert!(out.contains("mul %0, 3"), "three copies of %0: {out}");
        // A sum of one value only, already in order, still becomes a multiply.
        let same = src.replace("%6 = add %0, %1", "%6 = add %0, %0");
        let out = same_behaviour(&same, &["reassoc"], "123456 -98765");
        assert!(out.contains("mul %0, 4"), "four copies of %0: {out}");
    }

    #[test]
    fn floats_and_shared_nodes_are_left_alone() {
        // %3 is used twice: it is a leaf of both trees, not an inner node.
        let src = r#"
func @f(f32, i32, i32) -> i32 {
bb0(%0: f32, %1: i32, %2: i32):
  %3 = fadd %0, 1.0
  %4 = fadd %3, %0
  %5 = add %1, %2
  %6 = add %5, %1
  %7 = add %5, 2
  %8 = add %6, %7
  ret %8
}
"#;
        let out = crate::passes::testutil::run(src, &["reassoc"]);
        assert!(
            out.contains("fadd %0, 1.0") && out.contains("fadd %3, %0"),
            "{out}"
        );
        assert!(out.contains("add %1, %2"), "{out}");
    }

    #[test]
    fn a_sum_between_calls_accumulates_as_its_terms_arrive() {
        // Each term is read by a call and printed; rebuilt at the root, the chain
        // would keep all four live across the calls to the end.
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = add %1, %0
  call @putint(%1)
  %3 = call @getint()
  %4 = add %2, %3
  call @putint(%3)
  %5 = call @getint()
  %6 = add %4, %5
  call @putint(%5)
  %7 = add %6, 7
  call @putint(%7)
  ret 0
}
"#;
        // Rebuilt in rank order, the sum keeps its steps where the terms arrive:
        // only the first step's operands swap, and the constant's step comes up
        // to the step before it.
        let expected = src.replace("%2 = add %1, %0", "%2 = add %0, %1").replace(
            "  call @putint(%5)\n  %7 = add %6, 7\n",
            "  %7 = add %6, 7\n  call @putint(%5)\n",
        );
        check(&["reassoc"], src, &expected);
        same_behaviour(src, &["reassoc"], "5 -9 12 40");
    }

    /// Regression: an operand computed by another operator (here `shl`, from
    /// `(i - 1) * 512`) is a leaf, not a node of the sum; it was taken apart as if it
    /// were an `add`, turning `(i - 1) * 512 + j - 1` into `i - 1 + 9 + j - 1`.
    #[test]
    fn operands_of_other_operators_are_leaves() {
        let src = r#"
declare @putint(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @getint()
  %2 = add %1, -1
  %3 = shl %2, 9
  %4 = add %3, %0
  %5 = add %4, -1
  call @putint(%5)
  ret 0
}
"#;
        let out = same_behaviour(src, &["reassoc"], "3 5");
        assert!(out.contains("shl %2, 9"), "{out}");
    }
}
