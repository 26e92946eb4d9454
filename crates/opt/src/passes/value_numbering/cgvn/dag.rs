//! The value-number DAG of the complete GVN: value numbers are expressions (Nie,
//! Cheng and Wang, section 3, Definition 2) over *leaders* — variables no other
//! expression describes: function parameters, results of loads and impure calls,
//! allocations, block parameters — and constants. The paper notes that value numbers
//! share most of their structure, so all of them live in one hash-consed DAG: a node
//! is created once, and equal expressions are the same [`NodeId`], so comparing value
//! numbers is comparing integers.
//!
//! Two special nodes stand for the ends of the lattice: [`TOP`] (no path has reached
//! the variable yet: every expression is equal to it, `o(⊤, t) = ⊤`) and [`BOT`] (no
//! common expression, only ever an intermediate result of `Intersect`).
//!
//! Building an operator node ([`Dag::op`]) normalises it: constants are folded with
//! the target's semantics ([`crate::fold`]), commutative operands and comparisons are
//! ordered, and a few identities that hold for every `i32` are applied (`t - t = 0`,
//! `t ^ t = 0`, `t & t = t | t = t`, `t == t` is 1, `t < t` is 0, `t + 0 = t`,
//! `t * 1 = t`, `t * 0 = 0`, ...). These make the numbering stronger than pure
//! Herbrand equivalence and never weaker: each is a true equality of the operators.
//!
//! [`Dag::op`] is for an instruction's own number, whose operands are values the
//! program computed, so dropping one is harmless. [`Dag::op_strict`] never drops an
//! operand whose evaluation may fail — one containing an integer division or
//! remainder by something other than a non-zero constant (it may trap) or a call (it
//! may not return): `(a / b) * 0` stays as it is. So it preserves both the value *and*
//! whether evaluating the expression can fail, which is what checking a block
//! parameter's number by substitution needs ([`super::validate`]).

use crate::fold::Const;
use crate::passes::value_numbering::gvn::expr::{normalise, Opcode};
use ir::{BinOp, CmpOp, Value};
use rustc_hash::FxHashMap;

/// A node of the DAG.
pub(crate) type NodeId = u32;

/// No path yet: the identity of `Intersect`.
pub(crate) const TOP: NodeId = 0;
/// No common expression.
pub(crate) const BOT: NodeId = 1;

/// Operands of an operator node.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Args {
    One([NodeId; 1]),
    Two([NodeId; 2]),
    Many(Box<[NodeId]>),
}

impl Args {
    fn new(a: &[NodeId]) -> Args {
        match *a {
            [x] => Args::One([x]),
            [x, y] => Args::Two([x, y]),
            _ => Args::Many(a.into()),
        }
    }

    /// The operands in order.
    pub(crate) fn as_slice(&self) -> &[NodeId] {
        match self {
            Args::One(a) => a,
            Args::Two(a) => a,
            Args::Many(a) => a,
        }
    }
}

/// An expression.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Node {
    Top,
    Bot,
    Const(Const),
    /// A leader: the value of this variable (a block parameter, a load, a call, ...).
    Leaf(Value),
    Op(Opcode, Args),
}

/// The hash-consed DAG.
pub(crate) struct Dag {
    nodes: Vec<Node>,
    /// Whether evaluating each node may fail (trap or not return).
    partial: Vec<bool>,
    index: FxHashMap<Node, NodeId>,
}

impl Dag {
    pub(crate) fn new() -> Dag {
        let mut d = Dag {
            nodes: Vec::new(),
            partial: Vec::new(),
            index: FxHashMap::default(),
        };
        assert_eq!(d.intern(Node::Top), TOP);
        assert_eq!(d.intern(Node::Bot), BOT);
        d
    }

    /// Whether `self` and `other` have the same nodes, numbered alike.
    pub(crate) fn same_nodes(&self, other: &Dag) -> bool {
        self.nodes == other.nodes && self.partial == other.partial
    }

    /// Number of nodes created.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The expression of node `n`.
    pub(crate) fn node(&self, n: NodeId) -> &Node {
        &self.nodes[n as usize]
    }

    fn intern(&mut self, node: Node) -> NodeId {
        if let Some(&n) = self.index.get(&node) {
            return n;
        }
        let n = self.nodes.len() as NodeId;
        let partial = match &node {
            Node::Op(op, args) => {
                let a = args.as_slice();
                let divisor = a.get(1).and_then(|&d| self.as_const(d));
                op.unsafe_to_speculate(divisor) || a.iter().any(|&k| self.partial[k as usize])
            }
            _ => false,
        };
        self.nodes.push(node.clone());
        self.partial.push(partial);
        self.index.insert(node, n);
        n
    }

    /// Whether evaluating node `n` may fail: it contains a division or remainder by
    /// something other than a non-zero constant, or a call.
    pub(crate) fn is_partial(&self, n: NodeId) -> bool {
        self.partial[n as usize]
    }

    /// The constant `c`.
    pub(crate) fn konst(&mut self, c: Const) -> NodeId {
        self.intern(Node::Const(c))
    }

    /// The leader `v`.
    pub(crate) fn leaf(&mut self, v: Value) -> NodeId {
        self.intern(Node::Leaf(v))
    }

    /// The constant node `n` is, if any.
    pub(crate) fn as_const(&self, n: NodeId) -> Option<Const> {
        match self.node(n) {
            Node::Const(c) => Some(*c),
            _ => None,
        }
    }

    /// `op(args)`, normalised (see the module documentation), where the operands stand
    /// for values the program computed. `TOP` if any operand is `TOP`, `BOT` if any is
    /// `BOT`.
    pub(crate) fn op(&mut self, op: Opcode, args: &[NodeId]) -> NodeId {
        self.build(op, args, false)
    }

    /// `op(args)` normalised without dropping any operand that may fail to evaluate:
    /// the result can fail exactly when `op(args)` can.
    pub(crate) fn op_strict(&mut self, op: Opcode, args: &[NodeId]) -> NodeId {
        self.build(op, args, true)
    }

    fn build(&mut self, op: Opcode, args: &[NodeId], strict: bool) -> NodeId {
        if args.contains(&TOP) {
            return TOP;
        }
        if args.contains(&BOT) {
            return BOT;
        }
        let consts: Option<Vec<Const>> = args.iter().map(|&a| self.as_const(a)).collect();
        if let Some(c) = consts.and_then(|cs| op.fold(&cs)) {
            return self.konst(c);
        }
        let mut a: Vec<NodeId> = args.to_vec();
        let op = normalise(op, &mut a);
        if let Some(n) = self.identity(op, &a, strict) {
            return n;
        }
        self.intern(Node::Op(op, Args::new(&a)))
    }

    /// The value of `op(a)` when an identity gives it without a new node. When
    /// `strict`, operands that may fail to evaluate are never dropped.
    fn identity(&mut self, op: Opcode, a: &[NodeId], strict: bool) -> Option<NodeId> {
        let &[x, y] = a else { return None };
        let total = |d: &Dag, n: NodeId| !strict || !d.is_partial(n);
        let int = |d: &Dag, n: NodeId| match d.as_const(n) {
            Some(Const::I(c)) => Some(c),
            _ => None,
        };
        let (cx, cy) = (int(self, x), int(self, y));
        match op {
            Opcode::Bin(b) => {
                if x == y {
                    match b {
                        BinOp::Sub | BinOp::Xor if total(self, x) => {
                            return Some(self.konst(Const::I(0)))
                        }
                        BinOp::And | BinOp::Or => return Some(x),
                        _ => {}
                    }
                }
                // Operands are ordered by node id, so a constant may be on either side
                // of a commutative operator.
                let other_if =
                    |c: Option<i32>, want: i32, other: NodeId| (c == Some(want)).then_some(other);
                let keep = match b {
                    BinOp::Add | BinOp::Or | BinOp::Xor => {
                        other_if(cy, 0, x).or_else(|| other_if(cx, 0, y))
                    }
                    BinOp::Mul => other_if(cy, 1, x).or_else(|| other_if(cx, 1, y)),
                    BinOp::Sub => other_if(cy, 0, x),
                    BinOp::SDiv => other_if(cy, 1, x),
                    BinOp::Shl | BinOp::LShr | BinOp::AShr => cy.filter(|c| c & 31 == 0).map(|_| x),
                    _ => None,
                };
                if keep.is_some() {
                    return keep;
                }
                let zero_times =
                    (cx == Some(0) && total(self, y)) || (cy == Some(0) && total(self, x));
                if matches!(b, BinOp::Mul | BinOp::And) && zero_times {
                    return Some(self.konst(Const::I(0)));
                }
                None
            }
            Opcode::Cmp(c) if x == y && total(self, x) => match c {
                CmpOp::Eq | CmpOp::Sle | CmpOp::Sge => Some(self.konst(Const::I(1))),
                CmpOp::Ne | CmpOp::Slt | CmpOp::Sgt | CmpOp::FLt | CmpOp::FGt => {
                    Some(self.konst(Const::I(0)))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

#[cfg(test)]
impl Dag {
    /// Node `n` as an expression, leaders named by `name` (for test expectations).
    pub(crate) fn render(&self, n: NodeId, name: &dyn Fn(Value) -> String) -> String {
        match self.node(n) {
            Node::Top => "⊤".into(),
            Node::Bot => "⊥".into(),
            Node::Const(Const::I(c)) => c.to_string(),
            Node::Const(Const::F(bits)) => format!("{}", f32::from_bits(*bits)),
            Node::Leaf(v) => name(*v),
            Node::Op(op, args) => {
                let a: Vec<String> = args
                    .as_slice()
                    .iter()
                    .map(|&k| self.render(k, name))
                    .collect();
                let is_const = |k: NodeId| matches!(self.node(k), Node::Const(_));
                let ks = args.as_slice();
                match (op, a.as_slice()) {
                    // Operands are in node order; show a constant second, as written.
                    (Opcode::Bin(BinOp::Add), [x, y]) if is_const(ks[0]) && !is_const(ks[1]) => {
                        format!("({y} + {x})")
                    }
                    (Opcode::Bin(BinOp::Add), [x, y]) => format!("({x} + {y})"),
                    (Opcode::Bin(b), [x, y]) => format!("{}({x}, {y})", b.name()),
                    (Opcode::Cmp(c), [x, y]) => format!("{}({x}, {y})", c.name()),
                    (o, xs) => format!("{o:?}({})", xs.join(", ")),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::EntityRef;

    #[test]
    fn hash_consing_and_normalisation() {
        let mut d = Dag::new();
        let a = d.leaf(Value::new(3));
        let b = d.leaf(Value::new(4));
        let add = Opcode::Bin(BinOp::Add);
        assert_eq!(d.op(add, &[a, b]), d.op(add, &[b, a]));
        let lt = d.op(Opcode::Cmp(CmpOp::Slt), &[b, a]);
        assert_eq!(lt, d.op(Opcode::Cmp(CmpOp::Sgt), &[a, b]));
        let sub = Opcode::Bin(BinOp::Sub);
        assert_ne!(d.op(sub, &[a, b]), d.op(sub, &[b, a]));
        let zero = d.konst(Const::I(0));
        assert_eq!(d.op(sub, &[a, a]), zero);
        assert_eq!(d.op(add, &[zero, b]), b);
        assert_eq!(d.op(Opcode::Cmp(CmpOp::Sle), &[a, a]), d.konst(Const::I(1)));
        let two = d.konst(Const::I(2));
        let three = d.konst(Const::I(3));
        assert_eq!(d.op(add, &[two, three]), d.konst(Const::I(5)));
        // Division by zero is not folded.
        let div = d.op(Opcode::Bin(BinOp::SDiv), &[two, zero]);
        assert!(matches!(d.node(div), Node::Op(..)));
        assert_eq!(d.op(add, &[TOP, a]), TOP);
    }

    #[test]
    fn identities_never_drop_what_may_trap() {
        let mut d = Dag::new();
        let a = d.leaf(Value::new(1));
        let b = d.leaf(Value::new(2));
        let zero = d.konst(Const::I(0));
        let div = d.op(Opcode::Bin(BinOp::SDiv), &[a, b]);
        assert!(d.is_partial(div));
        let mul0 = d.op_strict(Opcode::Bin(BinOp::Mul), &[div, zero]);
        assert!(matches!(d.node(mul0), Node::Op(..)), "(a / b) * 0 may trap");
        assert!(d.is_partial(mul0));
        let sub = d.op_strict(Opcode::Bin(BinOp::Sub), &[div, div]);
        assert!(matches!(d.node(sub), Node::Op(..)));
        let eq = d.op_strict(Opcode::Cmp(CmpOp::Eq), &[div, div]);
        assert!(matches!(d.node(eq), Node::Op(..)));
        // Division by a non-zero constant cannot trap, so its identities apply.
        let two = d.konst(Const::I(2));
        let half = d.op(Opcode::Bin(BinOp::SDiv), &[a, two]);
        assert!(!d.is_partial(half));
        assert_eq!(d.op_strict(Opcode::Bin(BinOp::Sub), &[half, half]), zero);
        assert_eq!(d.op_strict(Opcode::Bin(BinOp::And), &[zero, half]), zero);
        // Keeping the operand is always fine.
        assert_eq!(d.op_strict(Opcode::Bin(BinOp::Add), &[div, zero]), div);
        // Over computed values (an instruction's own number) the identities apply.
        assert_eq!(d.op(Opcode::Bin(BinOp::Mul), &[div, zero]), zero);
        assert_eq!(d.op(Opcode::Bin(BinOp::Sub), &[div, div]), zero);
    }

    #[test]
    fn float_identities_are_not_applied() {
        let mut d = Dag::new();
        let x = d.leaf(Value::new(1));
        let fsub = d.op(Opcode::Bin(BinOp::FSub), &[x, x]);
        assert!(matches!(d.node(fsub), Node::Op(..)), "NaN - NaN is NaN");
        let feq = d.op(Opcode::Cmp(CmpOp::FEq), &[x, x]);
        assert!(matches!(d.node(feq), Node::Op(..)), "NaN == NaN is false");
        assert_eq!(d.op(Opcode::Cmp(CmpOp::FLt), &[x, x]), d.konst(Const::I(0)));
    }
}
