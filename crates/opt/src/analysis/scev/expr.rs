//! Scalar-evolution expressions and their folding rules: constants, unknowns, n-ary
//! sums and products kept in a canonical order, add-recurrences of any order, sign
//! and zero extension, truncation, signed maximum and unsigned division (the last
//! two only in trip counts). Expressions are hash-consed in an arena, so equal
//! expressions have equal ids.
//!
//! The rules are those of chains of recurrences (Bachmann, Wang and Zima, "Chains of
//! Recurrences - a Method to Expedite the Evaluation of Closed-Form Functions",
//! ISSAC 1994; Zima, "On computational properties of chains of recurrences", 2001)
//! as LLVM's `ScalarEvolution::getAddExpr`/`getMulExpr`/`getAddRecExpr` apply them:
//! `{a,+,b} + c = {a+c,+,b}` for `c` invariant in the loop, `{a,+,b} + {c,+,d} =
//! {a+c,+,b+d}` on the same loop, `c * {a,+,b} = {c*a,+,c*b}`, and the product of
//! two affine recurrences of one loop `{a,+,b} * {c,+,d} = {ac,+,ad+bc+bd,+,2bd}`.
//!
//! Arithmetic is modulo 2^32 for `i32` expressions and modulo 2^64 for `i64` and
//! pointers, as the IR's is; every rule above holds in those rings. An expression's
//! `exact` flag (LLVM's `nsw`) says that the operation never wrapped in any execution
//! (for a recurrence: no value it takes in the loop wrapped), so the value is the
//! mathematical one and can be sign-extended term by term.

use crate::analysis::{LoopForest, LoopId};
use hashbrown::hash_table::{Entry, HashTable};
use ir::{Function, Type, Value};
use smallvec::SmallVec;

/// The terms of a sum or product being folded (a few, held inline).
type Terms = SmallVec<[ExprId; 8]>;

/// Index of an expression in an [`Exprs`] arena.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct ExprId(pub u32);

/// One scalar-evolution expression.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Expr {
    /// A constant, held sign-extended from its type's width.
    Const { ty: Type, c: i64 },
    /// An SSA value the analysis does not see through.
    Unknown { ty: Type, v: Value },
    /// A sum of two or more terms, in canonical order (constant first).
    Add {
        ty: Type,
        ops: Vec<ExprId>,
        exact: bool,
    },
    /// A product of two or more factors, in canonical order (constant first).
    Mul {
        ty: Type,
        ops: Vec<ExprId>,
        exact: bool,
    },
    /// `{ops[0],+,ops[1],+,...}<lp>`: `ops[0]` on the first iteration of `lp`, each
    /// later value the previous one plus the value of `{ops[1],+,...}`.
    AddRec {
        ty: Type,
        ops: Vec<ExprId>,
        lp: LoopId,
        exact: bool,
    },
    /// `i32` to `i64`, sign-extending.
    SExt(ExprId),
    /// `i32` to `i64`, zero-extending.
    ZExt(ExprId),
    /// `i64` to `i32`, keeping the low bits.
    Trunc(ExprId),
    /// Signed maximum of two `i64` values.
    SMax(ExprId, ExprId),
    /// Unsigned division of two `i64` values.
    UDiv(ExprId, ExprId),
}

/// The most factors a product takes in from the products among its own factors
/// (LLVM's `scalar-evolution-mul-ops-inline-threshold`): a chain of cubings
/// `x = x * x * x` would otherwise triple its product's factors at every step, and
/// an unrolled loop of them asked for gigabytes.
const MAX_MUL_OPS: usize = 32;

/// The arena of expressions, with the folding constructors.
#[derive(Default)]
pub struct Exprs {
    nodes: Vec<Expr>,
    /// Per node: its size as a tree (itself and its operands' sizes, shared ones
    /// counted each time), saturating: LLVM's `SCEV::getExpressionSize`.
    sizes: Vec<u32>,
    /// The ids of `nodes`, hashed by their expressions: each expression is held
    /// once, and interning hashes it once.
    ids: HashTable<ExprId>,
}

/// The hash of an expression in [`Exprs::ids`].
fn hash_of(e: &Expr) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(e)
}

/// `c` wrapped to the width of `ty` (sign-extended back to `i64`).
pub fn wrap(ty: Type, c: i64) -> i64 {
    if ty == Type::I32 {
        c as i32 as i64
    } else {
        c
    }
}

impl Exprs {
    /// How many expressions the arena holds (ids are below it).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn get(&self, e: ExprId) -> &Expr {
        &self.nodes[e.0 as usize]
    }

    fn intern(&mut self, e: Expr) -> ExprId {
        let nodes = &self.nodes;
        let entry = self.ids.entry(
            hash_of(&e),
            |id| nodes[id.0 as usize] == e,
            |id| hash_of(&nodes[id.0 as usize]),
        );
        match entry {
            Entry::Occupied(known) => *known.get(),
            Entry::Vacant(slot) => {
                let id = ExprId(self.nodes.len() as u32);
                slot.insert(id);
                let size = self.tree_size(&e);
                self.nodes.push(e);
                self.sizes.push(size);
                id
            }
        }
    }

    /// The size of `e` as a tree: each operand counted as often as it occurs,
    /// however deep (saturating at `u32::MAX`).
    pub fn size(&self, e: ExprId) -> u32 {
        self.sizes[e.0 as usize]
    }

    /// The size of `e`, whose operands are interned.
    fn tree_size(&self, e: &Expr) -> u32 {
        let of = |o: &ExprId| self.size(*o);
        match e {
            Expr::Const { .. } | Expr::Unknown { .. } => 1,
            Expr::Add { ops, .. } | Expr::Mul { ops, .. } | Expr::AddRec { ops, .. } => {
                ops.iter().fold(1u32, |n, o| n.saturating_add(of(o)))
            }
            Expr::SExt(a) | Expr::ZExt(a) | Expr::Trunc(a) => of(a).saturating_add(1),
            Expr::SMax(a, b) | Expr::UDiv(a, b) => of(a).saturating_add(of(b)).saturating_add(1),
        }
    }

    /// The type of `e` (`I32`, `I64` or `Ptr`).
    pub fn ty(&self, e: ExprId) -> Type {
        match *self.get(e) {
            Expr::Const { ty, .. }
            | Expr::Unknown { ty, .. }
            | Expr::Add { ty, .. }
            | Expr::Mul { ty, .. }
            | Expr::AddRec { ty, .. } => ty,
            Expr::SExt(_) | Expr::ZExt(_) | Expr::SMax(..) | Expr::UDiv(..) => Type::I64,
            Expr::Trunc(_) => Type::I32,
        }
    }

    /// Whether `e` is known never to wrap.
    pub fn exact(&self, e: ExprId) -> bool {
        match *self.get(e) {
            Expr::Const { .. } | Expr::Unknown { .. } => true,
            Expr::Add { exact, .. } | Expr::Mul { exact, .. } | Expr::AddRec { exact, .. } => exact,
            Expr::SExt(_) | Expr::ZExt(_) | Expr::SMax(..) | Expr::UDiv(..) => true,
            Expr::Trunc(_) => false,
        }
    }

    pub fn constant(&mut self, ty: Type, c: i64) -> ExprId {
        let ty = if ty == Type::Ptr { Type::I64 } else { ty };
        self.intern(Expr::Const { ty, c: wrap(ty, c) })
    }

    pub fn unknown(&mut self, ty: Type, v: Value) -> ExprId {
        self.intern(Expr::Unknown { ty, v })
    }

    /// The constant value of `e`, if it is one.
    pub fn as_const(&self, e: ExprId) -> Option<i64> {
        match *self.get(e) {
            Expr::Const { c, .. } => Some(c),
            _ => None,
        }
    }

    /// `(rest, c)` with `e = rest + c` and `c` the constant term of a sum (0 for
    /// any other expression): `x + 5` is `(x, 5)`.
    pub fn split_constant(&mut self, loops: &LoopForest, f: &Function, e: ExprId) -> (ExprId, i64) {
        let Expr::Add { ops, exact, .. } = self.get(e).clone() else {
            return (e, 0);
        };
        let Some(c) = self.as_const(ops[0]) else {
            return (e, 0);
        };
        let rest = match ops[1..] {
            [one] => one,
            _ => self.add(loops, f, &ops[1..], exact),
        };
        (rest, c)
    }

    /// `(loop, ops)` when `e` is a recurrence.
    pub fn as_addrec(&self, e: ExprId) -> Option<(LoopId, &[ExprId])> {
        match self.get(e) {
            Expr::AddRec { lp, ops, .. } => Some((*lp, ops)),
            _ => None,
        }
    }

    /// `e` as `a * x + c` for an affine recurrence `x = {x0,+,dx}<lp>` with a
    /// constant step: `(a, c)` when `e` is a constant or an affine recurrence
    /// `{e0,+,de}<lp>` with `de` a constant multiple `a` of `dx` and `e0 - a * x0`
    /// a constant `c` (on iteration `k`, `e = e0 + a * dx * k = a * x + c`). In
    /// the type's arithmetic: for `i32` expressions modulo 2^32, `a` and `c` then
    /// wrapped to `i32`.
    pub fn linear_in(
        &mut self,
        loops: &LoopForest,
        f: &Function,
        e: ExprId,
        x: ExprId,
        lp: LoopId,
    ) -> Option<(i64, i64)> {
        if let Some(c) = self.as_const(e) {
            return Some((0, c));
        }
        let (lx, &[x0, dx]) = self.as_addrec(x)? else {
            return None;
        };
        let (le, &[e0, de]) = self.as_addrec(e)? else {
            return None;
        };
        if lx != lp || le != lp {
            return None;
        }
        let (dx, de) = (self.as_const(dx)?, self.as_const(de)?);
        if dx == 0 || de % dx != 0 {
            return None;
        }
        let ty = self.ty(x);
        let a = wrap(ty, de / dx);
        let ka = self.constant(ty, a);
        let ax0 = self.mul(loops, f, &[ka, x0], true);
        let c = self.sub(loops, f, e0, ax0);
        Some((a, self.as_const(c)?))
    }

    /// Canonical order: constants, then unknowns, then the rest, recurrences of
    /// inner loops last; ties by id (creation order).
    fn rank(&self, loops: &LoopForest, e: ExprId) -> (u32, u32, u32) {
        match self.get(e) {
            Expr::Const { .. } => (0, 0, e.0),
            Expr::Unknown { v, .. } => (1, 0, ir::EntityRef::index(*v) as u32),
            Expr::AddRec { lp, .. } => (3, loops.get(*lp).depth, e.0),
            _ => (2, 0, e.0),
        }
    }

    /// Whether `e` has the same value on every iteration of `lp`: no unknown defined
    /// inside it, no recurrence of it or of a loop inside it.
    pub fn invariant(&self, f: &Function, loops: &LoopForest, e: ExprId, lp: LoopId) -> bool {
        match self.get(e) {
            Expr::Const { .. } => true,
            Expr::Unknown { v, .. } => f.value_block(*v).is_none_or(|b| !loops.contains(lp, b)),
            Expr::AddRec { lp: l, ops, .. } => {
                !(*l == lp || loops.nested_in(*l, lp))
                    && ops.iter().all(|&o| self.invariant(f, loops, o, lp))
            }
            Expr::Add { ops, .. } | Expr::Mul { ops, .. } => {
                ops.iter().all(|&o| self.invariant(f, loops, o, lp))
            }
            Expr::SExt(a) | Expr::ZExt(a) | Expr::Trunc(a) => self.invariant(f, loops, *a, lp),
            Expr::SMax(a, b) | Expr::UDiv(a, b) => {
                self.invariant(f, loops, *a, lp) && self.invariant(f, loops, *b, lp)
            }
        }
    }

    /// Whether `e` takes the same values in every iteration of `lp`: it may vary
    /// in the loops inside `lp`, as recurrences of them whose operands do not vary
    /// in `lp`, but depends on nothing else that `lp` changes.
    pub fn same_in_each_iteration(
        &self,
        f: &Function,
        loops: &LoopForest,
        e: ExprId,
        lp: LoopId,
    ) -> bool {
        let same = |o: &ExprId| self.same_in_each_iteration(f, loops, *o, lp);
        match self.get(e) {
            Expr::AddRec { lp: l, ops, .. } if loops.nested_in(*l, lp) && *l != lp => {
                ops.iter().all(same)
            }
            Expr::Add { ops, .. } | Expr::Mul { ops, .. } => ops.iter().all(same),
            Expr::SExt(a) | Expr::ZExt(a) | Expr::Trunc(a) => same(a),
            Expr::SMax(a, b) | Expr::UDiv(a, b) => same(a) && same(b),
            _ => self.invariant(f, loops, e, lp),
        }
    }

    /// The type of a sum: a pointer if a term is one.
    fn sum_type(&self, ops: &[ExprId]) -> Type {
        if ops.iter().any(|&o| self.ty(o) == Type::Ptr) {
            Type::Ptr
        } else {
            self.ty(ops[0])
        }
    }

    /// `(coefficient, rest)` of a term: `3 * x` is `(3, x)`, `x` is `(1, x)`.
    fn split_coefficient(&mut self, e: ExprId) -> (i64, Option<ExprId>) {
        match self.get(e) {
            Expr::Const { c, .. } => (*c, None),
            Expr::Mul { ty, ops, exact } => match self.as_const(ops[0]) {
                Some(c) if ops.len() == 2 => (c, Some(ops[1])),
                Some(c) => {
                    let rest = Expr::Mul {
                        ty: *ty,
                        ops: ops[1..].to_vec(),
                        exact: *exact,
                    };
                    (c, Some(self.intern(rest)))
                }
                None => (1, Some(e)),
            },
            _ => (1, Some(e)),
        }
    }

    /// The folded sum of `ops` (all of type `ty`, or one pointer and `i64` offsets).
    pub fn add(&mut self, loops: &LoopForest, f: &Function, ops: &[ExprId], exact: bool) -> ExprId {
        let ty = self.sum_type(ops);
        let mut exact = exact && ops.iter().all(|&o| self.exact(o));
        // Flatten nested sums.
        let mut flat: Terms = SmallVec::new();
        for &o in ops {
            match self.get(o) {
                Expr::Add { ops: inner, .. } => flat.extend(inner.iter().copied()),
                _ => flat.push(o),
            }
        }
        // Fold recurrences of one loop together and invariants into their start,
        // innermost loop first.
        loop {
            let deepest = flat
                .iter()
                .filter_map(|&o| self.as_addrec(o).map(|(l, _)| l))
                .max_by_key(|&l| loops.get(l).depth);
            let Some(lp) = deepest else { break };
            let (recs, rest): (Terms, Terms) = flat
                .iter()
                .copied()
                .partition(|&o| self.as_addrec(o).is_some_and(|(l, _)| l == lp));
            let (inv, var): (Terms, Terms) = rest
                .into_iter()
                .partition(|&o| self.invariant(f, loops, o, lp));
            if recs.len() == 1 && inv.is_empty() {
                break;
            }
            // Component-wise sum of the recurrences, invariants added to the start.
            let mut cols: Vec<Vec<ExprId>> = Vec::new();
            let mut rec_exact = exact;
            for &r in &recs {
                rec_exact &= self.exact(r);
                let (_, rops) = self.as_addrec(r).expect("a recurrence");
                for (j, &o) in rops.to_vec().iter().enumerate() {
                    if cols.len() <= j {
                        cols.push(Vec::new());
                    }
                    cols[j].push(o);
                }
            }
            cols[0].extend(inv);
            let new_ops: Vec<ExprId> = cols
                .iter()
                .map(|c| self.add(loops, f, c, rec_exact))
                .collect();
            let rec = self.addrec(new_ops, lp, rec_exact);
            if var.is_empty() {
                return rec;
            }
            flat = var;
            flat.push(rec);
            // The remaining terms vary in `lp` but are no recurrence of it: stop.
            if flat
                .iter()
                .filter(|&&o| self.as_addrec(o).is_some_and(|(l, _)| l == lp))
                .count()
                <= 1
            {
                break;
            }
        }
        // Combine like terms: constants, and `a*x + b*x = (a+b)*x`.
        let mut konst: i64 = 0;
        let mut terms: SmallVec<[(ExprId, i64); 8]> = SmallVec::new();
        for o in flat {
            let (c, rest) = self.split_coefficient(o);
            match rest {
                None => konst = konst.wrapping_add(c),
                Some(r) => match terms.iter_mut().find(|(t, _)| *t == r) {
                    Some((_, k)) => {
                        *k = k.wrapping_add(c);
                        exact = false;
                    }
                    None => terms.push((r, c)),
                },
            }
        }
        let int_ty = if ty == Type::Ptr { Type::I64 } else { ty };
        let mut out = Vec::new();
        let konst = wrap(int_ty, konst);
        if konst != 0 {
            out.push(self.constant(int_ty, konst));
        }
        for (r, k) in terms {
            let k = wrap(int_ty, k);
            match k {
                0 => {}
                1 => out.push(r),
                _ => {
                    let c = self.constant(int_ty, k);
                    out.push(self.mul(loops, f, &[c, r], exact));
                }
            }
        }
        match out.len() {
            0 => self.constant(int_ty, 0),
            1 => out[0],
            _ => {
                out.sort_by_key(|&o| self.rank(loops, o));
                self.intern(Expr::Add {
                    ty,
                    ops: out,
                    exact,
                })
            }
        }
    }

    /// The folded product of `ops` (all of one integer type).
    pub fn mul(&mut self, loops: &LoopForest, f: &Function, ops: &[ExprId], exact: bool) -> ExprId {
        let ty = self.ty(ops[0]);
        let exact = exact && ops.iter().all(|&o| self.exact(o));
        let mut flat: Terms = SmallVec::new();
        for &o in ops {
            match self.get(o) {
                Expr::Mul { ops: inner, .. } if flat.len() + inner.len() <= MAX_MUL_OPS => {
                    flat.extend(inner.iter().copied())
                }
                _ => flat.push(o),
            }
        }
        let mut konst: i64 = 1;
        let mut rest = Vec::new();
        for o in flat {
            match self.as_const(o) {
                Some(c) => konst = wrap(ty, konst.wrapping_mul(c)),
                None => rest.push(o),
            }
        }
        if konst == 0 || rest.is_empty() {
            return self.constant(ty, konst);
        }
        // A constant distributes over a sum, and any invariant factor over a
        // recurrence's operands.
        if rest.len() == 1 && konst != 1 {
            match self.get(rest[0]).clone() {
                Expr::Add { ops, .. } => {
                    let c = self.constant(ty, konst);
                    let scaled: Vec<ExprId> = ops
                        .iter()
                        .map(|&o| self.mul(loops, f, &[c, o], exact))
                        .collect();
                    return self.add(loops, f, &scaled, exact);
                }
                Expr::AddRec { ops, lp, .. } => {
                    let c = self.constant(ty, konst);
                    let scaled: Vec<ExprId> = ops
                        .iter()
                        .map(|&o| self.mul(loops, f, &[c, o], exact))
                        .collect();
                    return self.addrec(scaled, lp, exact);
                }
                _ => {}
            }
        }
        // Recurrences: the deepest loop's, times invariants or another affine one.
        if let Some(pos) = rest
            .iter()
            .enumerate()
            .filter_map(|(k, &o)| self.as_addrec(o).map(|(l, _)| (k, l)))
            .max_by_key(|&(_, l)| loops.get(l).depth)
            .map(|(k, _)| k)
        {
            let rec = rest[pos];
            let (lp, rops) = self.as_addrec(rec).map(|(l, o)| (l, o.to_vec())).unwrap();
            let others: Vec<ExprId> = rest
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != pos)
                .map(|(_, &o)| o)
                .collect();
            let c = self.constant(ty, konst);
            if others.iter().all(|&o| self.invariant(f, loops, o, lp)) {
                let mut factor = others.clone();
                factor.push(c);
                let scale = self.mul(loops, f, &factor, exact);
                let scaled: Vec<ExprId> = rops
                    .iter()
                    .map(|&o| self.mul(loops, f, &[scale, o], exact))
                    .collect();
                return self.addrec(scaled, lp, exact);
            }
            if let [other] = others[..] {
                if let Some((l2, o2)) = self.as_addrec(other) {
                    if l2 == lp && rops.len() == 2 && o2.len() == 2 {
                        // {a,+,b} * {c,+,d} = {ac, +, ad+bc+bd, +, 2bd}
                        let (a, b, cc, d) = (rops[0], rops[1], o2[0], o2[1]);
                        let ac = self.mul(loops, f, &[a, cc], false);
                        let ad = self.mul(loops, f, &[a, d], false);
                        let bc = self.mul(loops, f, &[b, cc], false);
                        let bd = self.mul(loops, f, &[b, d], false);
                        let mid = self.add(loops, f, &[ad, bc, bd], false);
                        let two = self.constant(ty, 2);
                        let last = self.mul(loops, f, &[two, bd], false);
                        let prod = self.addrec(vec![ac, mid, last], lp, false);
                        return self.mul(loops, f, &[c, prod], false);
                    }
                }
            }
        }
        let mut out = rest;
        if konst != 1 {
            out.push(self.constant(ty, konst));
        }
        if out.len() == 1 {
            return out[0];
        }
        out.sort_by_key(|&o| self.rank(loops, o));
        self.intern(Expr::Mul {
            ty,
            ops: out,
            exact,
        })
    }

    /// `{ops...}<lp>`, with trailing zero steps dropped.
    pub fn addrec(&mut self, mut ops: Vec<ExprId>, lp: LoopId, exact: bool) -> ExprId {
        while ops.len() > 1 && self.as_const(*ops.last().unwrap()) == Some(0) {
            ops.pop();
        }
        if ops.len() == 1 {
            return ops[0];
        }
        let ty = self.sum_type(&ops);
        let exact = exact && ops.iter().all(|&o| self.exact(o));
        self.intern(Expr::AddRec { ty, ops, lp, exact })
    }

    /// `a - b`.
    pub fn sub(&mut self, loops: &LoopForest, f: &Function, a: ExprId, b: ExprId) -> ExprId {
        let ty = match self.ty(b) {
            Type::Ptr => Type::I64,
            t => t,
        };
        let m1 = self.constant(ty, -1);
        let nb = self.mul(loops, f, &[m1, b], false);
        self.add(loops, f, &[a, nb], false)
    }

    /// `sext e` (`i32` to `i64`): folded into constants and into the terms of exact
    /// sums, products and recurrences.
    pub fn sext(&mut self, loops: &LoopForest, f: &Function, e: ExprId) -> ExprId {
        match self.get(e).clone() {
            Expr::Const { c, .. } => self.constant(Type::I64, c),
            Expr::Add {
                ops, exact: true, ..
            } => {
                let ops: Vec<ExprId> = ops.iter().map(|&o| self.sext(loops, f, o)).collect();
                self.add(loops, f, &ops, true)
            }
            Expr::Mul {
                ops, exact: true, ..
            } => {
                let ops: Vec<ExprId> = ops.iter().map(|&o| self.sext(loops, f, o)).collect();
                self.mul(loops, f, &ops, true)
            }
            Expr::AddRec {
                ops,
                lp,
                exact: true,
                ..
            } => {
                let ops: Vec<ExprId> = ops.iter().map(|&o| self.sext(loops, f, o)).collect();
                self.addrec(ops, lp, true)
            }
            _ => self.intern(Expr::SExt(e)),
        }
    }

    /// `zext e` (`i32` to `i64`).
    pub fn zext(&mut self, e: ExprId) -> ExprId {
        match *self.get(e) {
            Expr::Const { c, .. } => self.constant(Type::I64, c as u32 as i64),
            _ => self.intern(Expr::ZExt(e)),
        }
    }

    /// `trunc e` (`i64` to `i32`): distributes over sums, products and recurrences
    /// (arithmetic modulo 2^32 is a ring homomorphism of arithmetic modulo 2^64).
    pub fn trunc(&mut self, loops: &LoopForest, f: &Function, e: ExprId) -> ExprId {
        match self.get(e).clone() {
            Expr::Const { c, .. } => self.constant(Type::I32, c),
            Expr::SExt(a) | Expr::ZExt(a) => a,
            Expr::Add {
                ops, ty: Type::I64, ..
            } => {
                let ops: Vec<ExprId> = ops.iter().map(|&o| self.trunc(loops, f, o)).collect();
                self.add(loops, f, &ops, false)
            }
            Expr::Mul { ops, .. } => {
                let ops: Vec<ExprId> = ops.iter().map(|&o| self.trunc(loops, f, o)).collect();
                self.mul(loops, f, &ops, false)
            }
            Expr::AddRec {
                ops,
                lp,
                ty: Type::I64,
                ..
            } => {
                let ops: Vec<ExprId> = ops.iter().map(|&o| self.trunc(loops, f, o)).collect();
                self.addrec(ops, lp, false)
            }
            _ => self.intern(Expr::Trunc(e)),
        }
    }

    /// Signed maximum of two `i64` expressions.
    pub fn smax(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_const(a), self.as_const(b)) {
            (Some(x), Some(y)) => self.constant(Type::I64, x.max(y)),
            _ if a == b => a,
            _ => self.intern(Expr::SMax(a.min(b), a.max(b))),
        }
    }

    /// Unsigned division of two `i64` expressions.
    pub fn udiv(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_const(a), self.as_const(b)) {
            (_, Some(1)) => a,
            (Some(x), Some(y)) if y != 0 => {
                self.constant(Type::I64, ((x as u64) / (y as u64)) as i64)
            }
            _ => self.intern(Expr::UDiv(a, b)),
        }
    }
}
