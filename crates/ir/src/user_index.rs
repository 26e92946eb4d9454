//! Positions of instructions in long user lists. Dropping an operand removes the
//! last entry for its instruction from the value's user list, the list's end
//! taking its place (`rposition` then `swap_remove`); found by a scan, rewriting
//! the m uses of a value one at a time (SSA repair after loop rotation, say)
//! costs O(m²). A list of [`INDEXED_LEN`] entries or more gets, at its first
//! removal, a map from each instruction to the positions it holds, kept up to
//! date by every push and removal, so each removal takes constant time and leaves
//! the list exactly as the scan would.

use crate::entities::{Inst, Value};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// A value's user list: most values have at most four users, kept inline (no heap
/// allocation, and in the value's own cache line); longer lists spill to the heap.
/// (With smallvec's `union` layout four fit in the 24 bytes that two took.)
pub(crate) type UserList = SmallVec<[Inst; 4]>;

/// Lists shorter than this (and not indexed yet) are scanned.
pub(crate) const INDEXED_LEN: usize = 32;

/// The positions of each instruction in the indexed lists.
#[derive(Clone, Debug, Default)]
pub(crate) struct UserIndex {
    lists: FxHashMap<Value, FxHashMap<Inst, SmallVec<[u32; 2]>>>,
}

impl UserIndex {
    /// Records that `inst` was pushed onto `v`'s list, now `len` long.
    pub(crate) fn pushed(&mut self, v: Value, inst: Inst, len: usize) {
        if self.lists.is_empty() {
            return;
        }
        if let Some(index) = self.lists.get_mut(&v) {
            index.entry(inst).or_default().push((len - 1) as u32);
        }
    }

    /// Forgets `v`'s list (taken away whole).
    pub(crate) fn forget(&mut self, v: Value) {
        if !self.lists.is_empty() {
            self.lists.remove(&v);
        }
    }

    /// Removes the last entry for `inst` from `users`, the list of `v`, moving the
    /// list's last entry into its place; nothing when `inst` is not listed.
    pub(crate) fn remove_last(&mut self, v: Value, users: &mut UserList, inst: Inst) {
        let indexed = !self.lists.is_empty() && self.lists.contains_key(&v);
        if !indexed && users.len() < INDEXED_LEN {
            if let Some(pos) = users.iter().rposition(|&u| u == inst) {
                users.swap_remove(pos);
            }
            return;
        }
        let index = self.lists.entry(v).or_insert_with(|| {
            let mut index: FxHashMap<Inst, SmallVec<[u32; 2]>> = FxHashMap::default();
            for (k, &u) in users.iter().enumerate() {
                index.entry(u).or_default().push(k as u32);
            }
            index
        });
        let Some(held) = index.get_mut(&inst) else {
            return;
        };
        let (k, pos) = held
            .iter()
            .copied()
            .enumerate()
            .max_by_key(|&(_, p)| p)
            .expect("an indexed instruction holds a position");
        held.swap_remove(k);
        if held.is_empty() {
            index.remove(&inst);
        }
        let last = users.len() - 1;
        if pos as usize != last {
            let moved = index
                .get_mut(&users[last])
                .expect("every listed instruction is indexed");
            let j = moved
                .iter()
                .position(|&p| p as usize == last)
                .expect("the last entry is indexed");
            moved[j] = pos;
        }
        users.swap_remove(pos as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    /// Random pushes and removals on lists long and short, with repeated
    /// instructions, leave the lists the scan leaves.
    #[test]
    fn removals_match_the_scan() {
        let mut state = 1u64;
        let mut below = |m: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % m
        };
        let mut index = UserIndex::default();
        let values: Vec<Value> = (0..4).map(Value::new).collect();
        let mut lists: Vec<UserList> = vec![UserList::new(); 4];
        let mut plain: Vec<Vec<Inst>> = vec![Vec::new(); 4];
        for step in 0..40_000 {
            let k = below(4);
            // Value 0 gets long lists, value 3 stays short.
            let grow = [70, 55, 50, 45][k];
            let inst = Inst::new(below(if k == 3 { 8 } else { 120 }));
            if below(100) < grow {
                lists[k].push(inst);
                index.pushed(values[k], inst, lists[k].len());
                plain[k].push(inst);
            } else {
                index.remove_last(values[k], &mut lists[k], inst);
                if let Some(p) = plain[k].iter().rposition(|&u| u == inst) {
                    plain[k].swap_remove(p);
                }
            }
            if step % 5000 == 4999 {
                index.forget(values[1]);
                lists[1].clear();
                plain[1].clear();
            }
            assert_eq!(lists[k].as_slice(), plain[k].as_slice(), "step {step}");
        }
        assert!(index.lists.contains_key(&values[0]));
    }
}
