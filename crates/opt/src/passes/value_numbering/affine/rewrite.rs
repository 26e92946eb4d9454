//! Using the checked forms: in dominator-tree preorder with a scoped table from
//! forms to the values that have them, a value whose form is a constant becomes
//! that constant, a value whose form an available value already has becomes that
//! value (value numbering modulo the affine algebra), and a parameter the relations
//! solve as `±q + k` for an available `q` becomes one instruction computing it (the
//! redundant induction variable: its own update dies with it).

use super::form::Form;
use super::solve::{Forms, Relations};
use ir::analysis::DominatorTree;
use ir::{BinOp, Block, Function, InstKind, Type, Value};
use rustc_hash::FxHashMap;

/// What the rewrite did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rewrites {
    /// Values replaced by a constant.
    pub constants: usize,
    /// Values replaced by an equal available value.
    pub merged: usize,
    /// Parameters replaced by one instruction over another value.
    pub materialized: usize,
}

impl Rewrites {
    pub fn changed(&self) -> bool {
        self.constants + self.merged + self.materialized > 0
    }
}

/// The forms table with its undo log for leaving dominator subtrees. Atoms are not
/// entered: a value whose form is the atom `q` is `q` itself, which dominates it.
struct Scoped {
    table: FxHashMap<Form, Value>,
    /// The values whose forms (in `Forms::of`) were entered, in order.
    log: Vec<Value>,
}

impl Scoped {
    /// Enters `forms.of[key]` as computed by `v` (unless an atom or already there).
    fn insert(&mut self, forms: &Forms, key: Value, v: Value) {
        let Some(form) = forms.of.get(&key) else {
            return;
        };
        if form.as_atom().is_none() && !self.table.contains_key(form) {
            self.table.insert(form.clone(), v);
            self.log.push(key);
        }
    }

    fn unwind(&mut self, forms: &Forms, to: usize) {
        while self.log.len() > to {
            let key = self.log.pop().unwrap();
            if let Some(form) = forms.of.get(&key) {
                self.table.remove(form);
            }
        }
    }
}

enum Visit {
    Enter(Block),
    Leave(usize),
}

/// Replaces `v` by the constant or value `form` names, if any; whether it did.
fn replace(f: &mut Function, s: &Scoped, form: &Form, v: Value, out: &mut Rewrites) -> bool {
    if let Some(k) = form.as_constant() {
        let c = f.iconst(k as i32);
        f.replace_all_uses(v, c);
        out.constants += 1;
        return true;
    }
    let same = form.as_atom().or_else(|| s.table.get(form).copied());
    match same {
        Some(w) if w != v => {
            f.replace_all_uses(v, w);
            out.merged += 1;
            true
        }
        _ => false,
    }
}

/// `±q + k` as one instruction at the top of `b` (for its parameter `p`), when
/// `form` is that and `q` is not `p`.
fn materialize(f: &mut Function, b: Block, p: Value, form: &Form) -> Option<Value> {
    let [(q, c)] = form.terms[..] else {
        return None;
    };
    if q == p {
        // A relation given up for size (the parameter is its own atom).
        return None;
    }
    let k = f.iconst(form.k as i32);
    let kind = match c {
        1 => InstKind::Binary {
            op: BinOp::Add,
            args: [q, k],
        },
        u32::MAX => InstKind::Binary {
            op: BinOp::Sub,
            args: [k, q],
        },
        _ => return None,
    };
    let first = f.layout.first_inst(b)?;
    let i = f.insert_inst_before(first, kind, Type::I32);
    f.inst_result(i)
}

/// Rewrites `f` with the forms of `forms`, computed under `rel`.
pub fn rewrite(f: &mut Function, dt: &DominatorTree, rel: &Relations, forms: &Forms) -> Rewrites {
    let mut out = Rewrites::default();
    let mut s = Scoped {
        table: FxHashMap::default(),
        log: Vec::new(),
    };
    let Some(&entry) = dt.rpo().first() else {
        return out;
    };
    let mut stack = vec![Visit::Enter(entry)];
    while let Some(visit) = stack.pop() {
        let b = match visit {
            Visit::Leave(to) => {
                s.unwind(forms, to);
                continue;
            }
            Visit::Enter(b) => b,
        };
        stack.push(Visit::Leave(s.log.len()));
        for &c in dt.children(b).iter().rev() {
            stack.push(Visit::Enter(c));
        }
        let params: Vec<Value> = f
            .block_params(b)
            .iter()
            .copied()
            .filter(|&p| f.value_type(p) == Type::I32)
            .collect();
        // Free parameters first: a pivot's form is written over them.
        for pivots in [false, true] {
            for &p in &params {
                if rel.contains_key(&p) != pivots {
                    continue;
                }
                let Some(form) = forms.of.get(&p) else {
                    continue;
                };
                if replace(f, &s, form, p, &mut out) {
                    continue;
                }
                if pivots {
                    if let Some(m) = materialize(f, b, p, form) {
                        f.replace_all_uses(p, m);
                        out.materialized += 1;
                        s.insert(forms, p, m);
                        continue;
                    }
                }
                s.insert(forms, p, p);
            }
        }
        let insts: Vec<_> = f.layout.block_insts(b).collect();
        for i in insts {
            let Some(r) = f.inst_result(i) else { continue };
            let Some(form) = forms.of.get(&r) else {
                continue;
            };
            let pure = match f.kind(i) {
                InstKind::Binary { op, .. } => !op.can_trap(),
                InstKind::Cmp { .. } => true,
                _ => false,
            };
            if pure && replace(f, &s, form, r, &mut out) {
                f.remove_inst(i);
                continue;
            }
            s.insert(forms, r, r);
        }
    }
    out
}
