//! The analysis: affine forms of every `i32` value under a set of assumed relations
//! at block parameters, relations proposed by Karr's iteration, and the check that
//! makes the assumed set an inductive invariant.
//!
//! A relation is stored solved for one parameter, its *pivot*: `p = e`, where `e` is
//! a form over the block's other (non-pivot) parameters and over atoms defined
//! before the block. It holds when, on every edge into the block, the value passed
//! to `p` equals `e` evaluated at the values passed to the others. The forms of all
//! values are computed assuming every relation of the set (a pivot's form is its
//! `e`); if, under that assumption, every relation holds on every edge, then by
//! induction over the execution all of them hold every time their block is entered,
//! and so every form is right. Relations that fail the check are dropped and the
//! rest checked again, so what is kept never rests on the proposal being right.

use super::form::Form;
use super::karr::{Overflow, Span};
use ir::analysis::DominatorTree;
use ir::{BinOp, Block, CmpOp, Function, InstKind, Type, Value};
use rustc_hash::FxHashMap;

/// Parameters of one block taken into its relations at most (the first ones).
const MAX_PARAMS: usize = 16;
/// Rounds of proposal (each may find relations the previous made visible).
const MAX_ROUNDS: usize = 3;
/// Checks per round before giving up on the round's proposal.
const MAX_CHECKS: usize = 6;

/// Assumed relations: each pivot parameter with its form.
pub type Relations = FxHashMap<Value, Form>;

/// The affine form of every `i32` value of reachable code (absent: not computed).
/// Hashed: the function's value numbers include every value ever created (a
/// nest rotated loop by loop leaves many behind), so a map over all of them
/// would cost more than the values of its blocks.
pub struct Forms {
    pub of: FxHashMap<Value, Form>,
}

impl Forms {
    /// The form of `v` (a constant's value; an atom when not computed).
    pub fn get(&self, f: &Function, v: Value) -> Form {
        self.with(f, v, Form::clone)
    }

    /// `k` applied to the form of `v`, without copying a computed one.
    pub fn with<R>(&self, f: &Function, v: Value, k: impl FnOnce(&Form) -> R) -> R {
        if let Some(c) = f.as_iconst(v) {
            return k(&Form::constant(c as u32));
        }
        match self.of.get(&v) {
            Some(form) => k(form),
            None => k(&Form::atom(v)),
        }
    }
}

/// An edge into a block: the predecessor and the arguments passed.
struct Edge {
    pred: Block,
    args: Vec<Value>,
}

/// The edges into every block of `f` reached in `rpo`.
fn incoming(f: &Function, rpo: &[Block]) -> FxHashMap<Block, Vec<Edge>> {
    let mut into: FxHashMap<Block, Vec<Edge>> = FxHashMap::default();
    for &b in rpo {
        let Some(t) = f.terminator(b) else { continue };
        for call in f.kind(t).targets() {
            into.entry(call.block).or_default().push(Edge {
                pred: b,
                args: call.args.to_vec(),
            });
        }
    }
    into
}

/// The form of the result of `kind` given its operands' forms (`r` is the result).
fn transfer(f: &Function, forms: &Forms, kind: &InstKind, r: Value) -> Form {
    let form = match *kind {
        InstKind::Binary { op, args: [a, b] } => {
            let affine = matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl);
            if !affine {
                return Form::atom(r);
            }
            forms.with(f, a, |fa| {
                forms.with(f, b, |fb| match op {
                    BinOp::Add => fa.add(fb),
                    BinOp::Sub => fa.sub(fb),
                    BinOp::Mul => match (fa.as_constant(), fb.as_constant()) {
                        (_, Some(k)) => fa.scale(k),
                        (Some(k), _) => fb.scale(k),
                        _ => Form::atom(r),
                    },
                    _ => match fb.as_constant() {
                        Some(k) => fa.scale(1u32 << (k & 31)),
                        None => Form::atom(r),
                    },
                })
            })
        }
        // Equal or different by a known amount: decided whatever the values.
        InstKind::Cmp { op, args: [a, b] } if !op.is_float() => {
            let diff = forms.with(f, a, |fa| forms.with(f, b, |fb| fa.sub(fb)));
            match diff.as_constant() {
                Some(0) => Form::constant(matches!(op, CmpOp::Eq | CmpOp::Sle | CmpOp::Sge) as u32),
                Some(_) if matches!(op, CmpOp::Eq | CmpOp::Ne) => {
                    Form::constant((op == CmpOp::Ne) as u32)
                }
                _ => Form::atom(r),
            }
        }
        _ => Form::atom(r),
    };
    if form.fits() {
        form
    } else {
        Form::atom(r)
    }
}

/// The forms of every value of the blocks in `rpo`, assuming `rel`.
fn compute_forms(f: &Function, rpo: &[Block], rel: &Relations) -> Forms {
    let mut forms = Forms {
        of: FxHashMap::default(),
    };
    for &b in rpo {
        for &p in f.block_params(b) {
            if f.value_type(p) != Type::I32 {
                continue;
            }
            // A pivot's relation was written over atoms that may have other forms
            // under this set (a pivot of an enclosing loop, say): use those.
            let form = match rel.get(&p) {
                Some(e) => {
                    e.substitute(|a| forms.of.get(&a).cloned().filter(|g| g.as_atom() != Some(a)))
                }
                None => Form::atom(p),
            };
            forms
                .of
                .insert(p, if form.fits() { form } else { Form::atom(p) });
        }
        for i in f.layout.block_insts(b) {
            let Some(r) = f.inst_result(i) else { continue };
            if f.value_type(r) == Type::I32 {
                let form = transfer(f, &forms, f.kind(i), r);
                forms.of.insert(r, form);
            }
        }
    }
    forms
}

/// The `i32` parameters of `b` taken into relations (their indices among all
/// parameters).
fn int_params(f: &Function, b: Block) -> Vec<usize> {
    f.block_params(b)
        .iter()
        .enumerate()
        .filter(|&(_, &p)| f.value_type(p) == Type::I32)
        .map(|(i, _)| i)
        .take(MAX_PARAMS)
        .collect()
}

/// Signed view of a coefficient modulo 2^32.
fn signed(c: u32) -> i128 {
    c as i32 as i128
}

/// Adds to `span` the directions of a vector of forms: the coefficient vector of
/// each atom and the constant vector, each of which can vary independently.
fn add_directions(span: &mut Span, diff: &[Form]) -> Result<(), Overflow> {
    let k = diff.len();
    let mut atoms: Vec<Value> = diff
        .iter()
        .flat_map(|d| d.terms.iter().map(|t| t.0))
        .collect();
    atoms.sort_unstable();
    atoms.dedup();
    let consts: Vec<i128> = diff.iter().map(|d| signed(d.k)).collect();
    span.insert(&consts)?;
    for a in atoms {
        let v: Vec<i128> = (0..k).map(|i| signed(diff[i].coeff(a))).collect();
        span.insert(&v)?;
    }
    Ok(())
}

/// Karr's iteration at block `b`: the relations among its parameters `ps` that the
/// affine hull of the tuples reaching it satisfies, solved for pivots (mod 2^32).
fn propose(
    f: &Function,
    b: Block,
    ps: &[usize],
    edges: &[Edge],
    dt: &DominatorTree,
    forms: &Forms,
) -> Result<Vec<(Value, Form)>, Overflow> {
    let params = f.block_params(b);
    let pv: Vec<Value> = ps.iter().map(|&i| params[i]).collect();
    let k = pv.len();
    let tuple = |e: &Edge| -> Vec<Form> { ps.iter().map(|&i| forms.get(f, e.args[i])).collect() };
    let (back, fwd): (Vec<&Edge>, Vec<&Edge>) = edges.iter().partition(|e| dt.dominates(b, e.pred));
    let Some(first) = fwd.first() else {
        return Ok(Vec::new());
    };
    let base = tuple(first);
    let mut span = Span::new(k);
    for e in &fwd[1..] {
        let t = tuple(e);
        let diff: Vec<Form> = t.iter().zip(&base).map(|(x, y)| x.sub(y)).collect();
        add_directions(&mut span, &diff)?;
    }
    // Each back edge maps the tuple p to M p + (the rest): the image of the base
    // point gives a direction, and M maps every direction to another.
    let mut maps: Vec<Vec<Vec<i128>>> = Vec::new();
    for e in &back {
        let t = tuple(e);
        let at_base: Vec<Form> = t
            .iter()
            .map(|x| x.substitute(|a| pv.iter().position(|&p| p == a).map(|i| base[i].clone())))
            .collect();
        let diff: Vec<Form> = at_base.iter().zip(&base).map(|(x, y)| x.sub(y)).collect();
        add_directions(&mut span, &diff)?;
        maps.push(
            t.iter()
                .map(|x| pv.iter().map(|&p| signed(x.coeff(p))).collect())
                .collect(),
        );
    }
    if span.rank() == k {
        // The tuples fill the space: no relation among them.
        return Ok(Vec::new());
    }
    let mut work: Vec<Vec<i128>> = span_rows(&span);
    while let Some(d) = work.pop() {
        for m in &maps {
            let image: Vec<i128> = m
                .iter()
                .map(|row| {
                    row.iter()
                        .zip(&d)
                        .try_fold(0i128, |s, (&x, &y)| s.checked_add(x.checked_mul(y)?))
                        .ok_or(Overflow)
                })
                .collect::<Result<_, _>>()?;
            if span.insert(&image)? {
                work.push(image);
            }
        }
    }
    // Relations c · p = c · base, made integers mod 2^32 and solved for pivots.
    let mut rels: Vec<(Vec<u32>, Form)> = Vec::new();
    for c in span.annihilator()? {
        if c.iter().any(|&x| x.abs() > i32::MAX as i128) {
            continue;
        }
        let c: Vec<u32> = c.iter().map(|&x| x as i32 as u32).collect();
        let rhs = c
            .iter()
            .zip(&base)
            .fold(Form::default(), |s, (&ci, bi)| s.add_scaled(bi, ci));
        rels.push((c, rhs));
    }
    let pivots = solve_mod_2_32(rels);
    Ok(pivots
        .into_iter()
        .map(|(j, c, rhs)| {
            // p_j = rhs - Σ_{i != j} c_i p_i
            let mut e = rhs;
            for (i, &ci) in c.iter().enumerate() {
                if i != j && ci != 0 {
                    e = e.add_scaled(&Form::atom(pv[i]), ci.wrapping_neg());
                }
            }
            (pv[j], e)
        })
        .collect())
}

fn span_rows(span: &Span) -> Vec<Vec<i128>> {
    span.rows().map(|r| r.to_vec()).collect()
}

/// The inverse of odd `c` modulo 2^32 (Newton's iteration).
pub fn inverse_mod_2_32(c: u32) -> u32 {
    debug_assert!(c % 2 == 1);
    let mut x = c;
    for _ in 0..5 {
        x = x.wrapping_mul(2u32.wrapping_sub(c.wrapping_mul(x)));
    }
    x
}

/// Gauss–Jordan elimination modulo 2^32 with odd pivots (the units): each relation
/// `c · p = rhs` solved for the last parameter with an odd coefficient, that
/// parameter eliminated from the others. Relations left without an odd
/// coefficient are dropped. Returns (pivot index, coefficients with 1 at the
/// pivot, right side).
fn solve_mod_2_32(rels: Vec<(Vec<u32>, Form)>) -> Vec<(usize, Vec<u32>, Form)> {
    let mut done: Vec<(usize, Vec<u32>, Form)> = Vec::new();
    for (mut c, mut rhs) in rels {
        for (j, pc, prhs) in &done {
            let m = c[*j];
            if m != 0 {
                for (x, y) in c.iter_mut().zip(pc) {
                    *x = x.wrapping_sub(m.wrapping_mul(*y));
                }
                rhs = rhs.add_scaled(prhs, m.wrapping_neg());
            }
        }
        let Some(j) = (0..c.len()).rev().find(|&j| c[j] % 2 == 1) else {
            continue;
        };
        let inv = inverse_mod_2_32(c[j]);
        for x in c.iter_mut() {
            *x = x.wrapping_mul(inv);
        }
        rhs = rhs.scale(inv);
        for (_, pc, prhs) in done.iter_mut() {
            let m = pc[j];
            if m != 0 {
                for (x, y) in pc.iter_mut().zip(&c) {
                    *x = x.wrapping_sub(m.wrapping_mul(*y));
                }
                *prhs = prhs.add_scaled(&rhs, m.wrapping_neg());
            }
        }
        done.push((j, c, rhs));
    }
    done
}

/// The relations of `rel` that fail on some edge into their block, given `forms`.
fn failing(
    f: &Function,
    rel: &Relations,
    into: &FxHashMap<Block, Vec<Edge>>,
    forms: &Forms,
) -> Vec<Value> {
    let mut bad = Vec::new();
    for &p in rel.keys() {
        let e = forms.of.get(&p).cloned().unwrap_or_else(|| Form::atom(p));
        let b = f.value_block(p).expect("a parameter has a block");
        let params = f.block_params(b);
        let j = params.iter().position(|&q| q == p).unwrap();
        let holds = into.get(&b).is_some_and(|edges| {
            edges.iter().all(|edge| {
                let passed = |q: Value| {
                    params
                        .iter()
                        .position(|&x| x == q)
                        .map(|i| forms.get(f, edge.args[i]))
                };
                e.substitute(passed) == forms.get(f, edge.args[j])
            })
        });
        if !holds {
            bad.push(p);
        }
    }
    bad.sort_unstable();
    bad
}

/// The relations found at every block of `f` and the forms of all values under
/// them, checked.
pub fn analyze(f: &Function, dt: &DominatorTree) -> (Relations, Forms) {
    let rpo = dt.rpo();
    let into = incoming(f, rpo);
    let mut rel = Relations::default();
    let mut forms = compute_forms(f, rpo, &rel);
    for _ in 0..MAX_ROUNDS {
        let mut proposal = Relations::default();
        for &b in rpo {
            let ps = int_params(f, b);
            let Some(edges) = into.get(&b) else { continue };
            if ps.is_empty() || b == f.entry_block() {
                continue;
            }
            if let Ok(found) = propose(f, b, &ps, edges, dt, &forms) {
                proposal.extend(found);
            }
        }
        if proposal == rel {
            // Nothing new: the forms under `rel` are the answer (checked already).
            break;
        }
        let mut checked = false;
        for _ in 0..MAX_CHECKS {
            forms = compute_forms(f, rpo, &proposal);
            let bad = failing(f, &proposal, &into, &forms);
            if bad.is_empty() {
                checked = true;
                break;
            }
            for p in bad {
                proposal.remove(&p);
            }
        }
        if !checked {
            proposal.clear();
            forms = compute_forms(f, rpo, &proposal);
        }
        if proposal == rel {
            break;
        }
        rel = proposal;
    }
    (rel, forms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::analysis::ControlFlowGraph;

    /// `i` from 0 by 1, `j` from 5 by `%step`.
    const LOOP: &str = r#"
func @f(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  jump bb1(0, 5)
bb1(%2: i32, %3: i32):
  %4 = slt %2, %0
  br %4, bb2, bb3
bb2:
  %5 = add %2, 1
  %6 = add %3, %1
  jump bb1(%5, %6)
bb3:
  ret %3
}
"#;

    /// The relations of `rel` (pivot index in bb1 -> form) that the check rejects.
    fn rejected(src: &str, rel: &[(usize, Form)]) -> Vec<usize> {
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().next().unwrap();
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let bb1 = f.layout.blocks().nth(1).unwrap();
        let ps = f.block_params(bb1);
        let rel: Relations = rel.iter().map(|(j, e)| (ps[*j], e.clone())).collect();
        let forms = compute_forms(f, dt.rpo(), &rel);
        let into = incoming(f, dt.rpo());
        let bad = failing(f, &rel, &into, &forms);
        bad.iter()
            .map(|v| ps.iter().position(|p| p == v).unwrap())
            .collect()
    }

    #[test]
    fn the_check_rejects_what_an_edge_breaks() {
        let m = ir::parse_module(LOOP).unwrap();
        let f = m.funcs.values().next().unwrap();
        let bb1 = f.layout.blocks().nth(1).unwrap();
        let i = f.block_params(bb1)[0];
        let step = f.block_params(f.entry_block())[1];
        let i_plus = |k: u32| Form::atom(i).add(&Form::constant(k));
        // Wrong on entry.
        assert_eq!(rejected(LOOP, &[(1, i_plus(6))]), [1]);
        // Right on entry, but the back edge adds `step` to j and 1 to i.
        assert_eq!(rejected(LOOP, &[(1, i_plus(5))]), [1]);
        // With step 1 it holds on both edges.
        let step1 = LOOP.replace("add %3, %1", "add %3, 1");
        assert!(rejected(&step1, &[(1, i_plus(5))]).is_empty());
        // j = step * i + 5 is not affine in the values (step is an atom times i).
        let scaled = Form::atom(step).add(&Form::constant(5));
        assert_eq!(rejected(LOOP, &[(1, scaled)]), [1]);
    }

    #[test]
    fn inverses_modulo_two_to_the_32() {
        for c in [1u32, 3, 5, 0xFFFF_FFFF, 0x8000_0001, 12345677] {
            assert_eq!(c.wrapping_mul(inverse_mod_2_32(c)), 1, "{c}");
        }
    }

    #[test]
    fn elimination_keeps_only_solvable_relations() {
        // x + y = 4 and x - y = 2 (rows over (x, y)): the first is solved for y, the
        // second becomes 2x = 6 after eliminating y, which has no odd coefficient
        // modulo 2^32 (x = 3 and x = 3 + 2^31 both satisfy it): dropped.
        let rels = vec![
            (vec![1, 1], Form::constant(4)),
            (vec![1, u32::MAX], Form::constant(2)),
        ];
        let solved = solve_mod_2_32(rels);
        assert_eq!(solved.len(), 1);
        assert_eq!(solved[0].0, 1);
        assert_eq!(solved[0].2, Form::constant(4));
    }
}
