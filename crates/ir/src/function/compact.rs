//! Compaction: renumbering a function's values and instructions densely.
//!
//! The tables of a [`Function`] only grow: a removed instruction, block or value
//! keeps its slot, so that a reference held elsewhere never dangles. After dozens of
//! passes have rewritten a large function, most slots are dead: on a `main` of 8000
//! loops, 253k instruction slots hold 97k live instructions. Every side table a
//! pass sizes by [`Function::num_values`] or [`Function::num_insts`] is then that
//! much larger than the function, and its accesses that much sparser, which on a
//! function larger than the cache costs more than the work itself.
//!
//! [`Function::compact`] drops the dead slots and renumbers what is left in the same
//! relative order (`a < b` before gives `new(a) < new(b)` after), so that any pass
//! whose choices depend on comparing entities chooses alike. Blocks keep their
//! numbers (a dead block's slot stays, emptied): there are few of them beside the
//! instructions, and the analyses of the edges (the CFG, dominators, loops), which
//! name only blocks, stay valid. Compaction invalidates every instruction and value
//! reference held outside the function, so it runs only between passes, once the
//! cached analyses of instructions and values are dropped (see the optimiser's pass
//! manager). GCC renumbers statement uids for the same reason
//! (`renumber_gimple_stmt_uids`); an arena compiler compacts its arenas.

use super::{BlockData, Function, InstData, ValueData, ValueDef};
use crate::entities::Value;
use crate::layout::Layout;
use crate::user_index::UserIndex;
use cranelift_entity::{EntityRef, PrimaryMap, SecondaryMap};
use rustc_hash::FxHashMap;
use std::hash::Hash;

/// Functions with fewer instruction slots than this are never compacted: their
/// tables fit in the cache however sparse they are.
const MIN_SLOTS: usize = 4096;

/// Old entity number to new, for the live ones (`u32::MAX` for the dead).
struct Renumbering(Vec<u32>);

impl Renumbering {
    /// Numbers the live entries of `live` densely, in their order.
    fn of(live: &[bool]) -> Self {
        let mut next = 0u32;
        Renumbering(
            live.iter()
                .map(|&l| {
                    if l {
                        next += 1;
                        next - 1
                    } else {
                        u32::MAX
                    }
                })
                .collect(),
        )
    }

    /// How many entities are live (numbered).
    fn live(&self) -> usize {
        self.0.iter().filter(|&&n| n != u32::MAX).count()
    }

    fn get<E: EntityRef>(&self, e: E) -> Option<E> {
        let n = *self.0.get(e.index())?;
        (n != u32::MAX).then(|| E::new(n as usize))
    }
}

impl Function {
    /// Whether [`Function::compact`] would pay: the function is large and at least
    /// a quarter of its instruction slots are dead. `live` is the number of
    /// instructions in its layout.
    pub fn is_sparse(&self, live: usize) -> bool {
        self.num_insts() >= MIN_SLOTS && 3 * self.num_insts() >= 4 * live
    }

    /// Renumbers the function's live values and instructions densely, in their
    /// present order (see the module doc). The live ones are the instructions of
    /// the blocks in the layout, their results, those blocks' parameters, and the
    /// interned constants and global addresses. Blocks keep their numbers; those
    /// not in the layout lose their parameters. Every other reference to the
    /// function's instructions and values becomes stale. Nothing changes when a
    /// live entity refers to a dead one (the function is not valid IR); returns
    /// whether it compacted.
    pub fn compact(&mut self) -> bool {
        let mut live_blocks = vec![false; self.blocks.len()];
        let mut live_insts = vec![false; self.insts.len()];
        for b in self.layout.blocks() {
            live_blocks[b.index()] = true;
            for i in self.layout.block_insts(b) {
                live_insts[i.index()] = true;
            }
        }
        let live_values: Vec<bool> = self
            .values
            .iter()
            .map(|(v, data)| match data.def {
                ValueDef::Inst(i) => live_insts[i.index()] && self.insts[i].result == Some(v),
                ValueDef::Param(b, n) => {
                    live_blocks[b.index()] && self.blocks[b].params.get(n as usize) == Some(&v)
                }
                ValueDef::IConst(c) => self.iconsts.get(&c) == Some(&v),
                ValueDef::FConst(bits) => self.fconsts.get(&bits) == Some(&v),
                ValueDef::Global(g) => self.globals.get(&g) == Some(&v),
            })
            .collect();
        let insts = Renumbering::of(&live_insts);
        let values = Renumbering::of(&live_values);
        match self.renumbered(&live_blocks, &insts, &values) {
            Some(compacted) => {
                *self = compacted;
                true
            }
            None => false,
        }
    }

    /// The function with every live instruction and value renumbered, the blocks
    /// not `live_blocks` emptied; `None` if a live entity refers to a dead one.
    fn renumbered(
        &self,
        live_blocks: &[bool],
        insts: &Renumbering,
        values: &Renumbering,
    ) -> Option<Function> {
        let live_block = |b: crate::entities::Block| live_blocks[b.index()];
        let mut new_values = PrimaryMap::with_capacity(values.live());
        for (v, data) in self.values.iter() {
            if values.get(v).is_none() {
                continue;
            }
            let def = match data.def {
                ValueDef::Inst(i) => ValueDef::Inst(insts.get(i)?),
                ValueDef::Param(b, n) => {
                    if !live_block(b) {
                        return None;
                    }
                    ValueDef::Param(b, n)
                }
                constant => constant,
            };
            let users = data
                .users
                .iter()
                .map(|&i| insts.get(i))
                .collect::<Option<_>>()?;
            new_values.push(ValueData {
                ty: data.ty,
                def,
                users,
            });
        }
        let live_insts = insts.live();
        let mut new_insts = PrimaryMap::with_capacity(live_insts);
        let mut src_locs = SecondaryMap::with_capacity(live_insts);
        src_locs.resize(live_insts);
        for (i, data) in self.insts.iter() {
            let Some(new) = insts.get(i) else {
                continue;
            };
            let mut kind = data.kind.clone();
            let mut ok = true;
            kind.map_args(|a| match values.get(*a) {
                Some(n) => *a = n,
                None => ok = false,
            });
            for t in kind.targets_mut() {
                ok &= live_block(t.block);
            }
            let result = match data.result {
                Some(r) => Some(values.get(r)?),
                None => None,
            };
            if !ok {
                return None;
            }
            new_insts.push(InstData { kind, result });
            if self.src_locs[i] != 0 {
                src_locs[new] = self.src_locs[i];
            }
        }
        let mut new_blocks = PrimaryMap::with_capacity(self.blocks.len());
        for (b, data) in self.blocks.iter() {
            let params = if live_block(b) {
                data.params
                    .iter()
                    .map(|&p| values.get(p))
                    .collect::<Option<_>>()?
            } else {
                Vec::new()
            };
            new_blocks.push(BlockData { params });
        }
        let mut layout = Layout::default();
        for b in self.layout.blocks() {
            layout.append_block(b);
            for i in self.layout.block_insts(b) {
                layout.append_inst(insts.get(i)?, b);
            }
        }
        Some(Function {
            name: self.name.clone(),
            sig: self.sig.clone(),
            values: new_values,
            insts: new_insts,
            blocks: new_blocks,
            layout,
            iconsts: interned(&self.iconsts, values)?,
            fconsts: interned(&self.fconsts, values)?,
            globals: interned(&self.globals, values)?,
            src_locs,
            user_index: UserIndex::default(),
        })
    }
}

/// An interning map (constant or global to its value) with the values renumbered.
fn interned<K: Copy + Eq + Hash>(
    map: &FxHashMap<K, Value>,
    values: &Renumbering,
) -> Option<FxHashMap<K, Value>> {
    map.iter()
        .map(|(&k, &v)| values.get(v).map(|n| (k, n)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entities::{Block, Inst};
    use crate::{parse_module, print_function, InstKind, Type};

    /// A function that grew dead slots: two of every three instructions removed,
    /// as passes leave them.
    fn sparse_function(n: usize) -> (crate::Module, Function) {
        let mut text = String::from("func @f(i32) -> i32 {\nbb0(%0: i32):\n");
        for k in 0..n {
            let prev = if k == 0 { 0 } else { 3 * k - 2 };
            text += &format!("  %{} = add %{prev}, {k}\n", 3 * k + 1);
            text += &format!("  %{} = mul %{}, 3\n", 3 * k + 2, 3 * k + 1);
            text += &format!("  %{} = mul %{}, 5\n", 3 * k + 3, 3 * k + 1);
        }
        text += &format!("  br %{}, bb1(%{}), bb1(%0)\n", 3 * n - 2, 3 * n - 2);
        text += "bb1(%x: i32):\n  ret %x\n}\n";
        let m = parse_module(&text).unwrap();
        let mut f = m.funcs.values().next().unwrap().clone();
        let dead: Vec<Inst> = f
            .layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b).collect::<Vec<_>>())
            .filter(|&i| {
                matches!(
                    f.kind(i),
                    InstKind::Binary {
                        op: crate::BinOp::Mul,
                        ..
                    }
                )
            })
            .collect();
        for i in dead {
            f.remove_inst(i);
        }
        (m, f)
    }

    fn live_insts(f: &Function) -> usize {
        f.layout
            .blocks()
            .map(|b| f.layout.block_insts(b).count())
            .sum()
    }

    /// Compaction keeps the function's meaning (its text, which the printer
    /// numbers by itself) and leaves no dead slot; the verifier accepts it.
    #[test]
    fn compaction_keeps_the_text_and_drops_the_dead_slots() {
        let (m, mut f) = sparse_function(3000);
        let before = print_function(&m, &f);
        let (insts, values) = (f.num_insts(), f.num_values());
        assert!(f.is_sparse(live_insts(&f)));
        assert!(f.compact());
        assert_eq!(print_function(&m, &f), before);
        assert_eq!(f.num_insts(), live_insts(&f));
        assert_eq!((insts, f.num_insts()), (3 * 3000 + 2, 3000 + 2));
        assert!(f.num_values() < values, "{} of {values}", f.num_values());
        assert!(!f.is_sparse(live_insts(&f)));
        let mut m = crate::Module::new();
        m.add_function(f);
        crate::verify_module(&m).unwrap();
    }

    /// Blocks keep their numbers: the layout's the same ones, and a block out of
    /// the layout keeps its slot without parameters (which were dead values).
    #[test]
    fn compaction_keeps_block_numbers_and_empties_dead_blocks() {
        let (m, mut f) = sparse_function(3000);
        let dead = f.create_block();
        f.append_block_param(dead, Type::I32);
        let blocks: Vec<Block> = f.layout.blocks().collect();
        let (n_blocks, before) = (f.num_blocks(), print_function(&m, &f));
        assert!(f.compact());
        assert_eq!(f.layout.blocks().collect::<Vec<_>>(), blocks);
        assert_eq!(f.num_blocks(), n_blocks);
        assert!(f.block_params(dead).is_empty());
        assert_eq!(print_function(&m, &f), before);
        let exit = blocks[1];
        let p = f.block_params(exit)[0];
        assert_eq!(f.value_def(p), ValueDef::Param(exit, 0));
    }

    /// Entities keep their relative order, users their lists (in the same order),
    /// and the interned constants stay interned.
    #[test]
    fn compaction_keeps_the_order_of_entities_and_users() {
        let (_, mut f) = sparse_function(10);
        let order = |f: &Function| -> Vec<(Inst, Vec<Inst>)> {
            f.layout
                .blocks()
                .flat_map(|b| f.layout.block_insts(b).collect::<Vec<_>>())
                .map(|i| {
                    let users = f.inst_result(i).map_or(Vec::new(), |r| f.users(r).to_vec());
                    (i, users)
                })
                .collect()
        };
        let before = order(&f);
        let three = f.iconst(3);
        assert!(f.compact());
        let after = order(&f);
        assert_eq!(before.len(), after.len());
        for w in after.windows(2) {
            assert!(w[0].0 < w[1].0);
        }
        // Each value's users map to the new numbers of the old users, in order.
        let position = |list: &[(Inst, Vec<Inst>)], i: Inst| list.iter().position(|e| e.0 == i);
        for ((_, old_users), (_, new_users)) in before.iter().zip(&after) {
            let old: Vec<_> = old_users.iter().map(|&u| position(&before, u)).collect();
            let new: Vec<_> = new_users.iter().map(|&u| position(&after, u)).collect();
            assert_eq!(old, new);
        }
        let three_now = f.iconst(3);
        assert_eq!(f.as_iconst(three_now), Some(3));
        assert!(three_now <= three);
        let n = f.num_values();
        f.iconst(3);
        assert_eq!(f.num_values(), n, "3 is still interned");
    }

    /// A live instruction using a removed one's result is not valid IR: the
    /// function is left as it is.
    #[test]
    fn a_reference_to_a_dead_value_leaves_the_function_unchanged() {
        let (_, mut f) = sparse_function(2);
        let b = f.entry_block();
        let first = f.layout.block_insts(b).next().unwrap();
        let r = f.inst_result(first).unwrap();
        let user = f.append_inst(
            b,
            InstKind::Unary {
                op: crate::UnOp::SExt,
                arg: r,
            },
            Type::I64,
        );
        f.layout.remove_inst(user);
        f.layout.insert_inst_before(user, first);
        // `first` is now dead while `user`, in the layout, still reads its result.
        f.layout.remove_inst(first);
        let (insts, values) = (f.num_insts(), f.num_values());
        assert!(!f.compact());
        assert_eq!((f.num_insts(), f.num_values()), (insts, values));
    }

    #[test]
    fn renumbering_is_dense_and_monotone() {
        let r = Renumbering::of(&[false, true, true, false, true]);
        let got: Vec<Option<Block>> = (0..6).map(|k| r.get(Block::new(k))).collect();
        assert_eq!(
            got,
            [
                None,
                Some(Block::new(0)),
                Some(Block::new(1)),
                None,
                Some(Block::new(2)),
                None
            ]
        );
    }
}
