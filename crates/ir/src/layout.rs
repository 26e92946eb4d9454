//! The order of blocks in a function and of instructions in a block, kept apart from
//! the instructions themselves (as Cranelift's `Layout`): doubly linked lists keyed by
//! entity, so inserting or removing anywhere is O(1) and never invalidates an entity
//! reference held elsewhere.

use crate::entities::{Block, Inst};
use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::SecondaryMap;

#[derive(Clone, Default, Debug)]
struct BlockNode {
    prev: PackedOption<Block>,
    next: PackedOption<Block>,
    first_inst: PackedOption<Inst>,
    last_inst: PackedOption<Inst>,
    inserted: bool,
}

#[derive(Clone, Default, Debug)]
struct InstNode {
    block: PackedOption<Block>,
    prev: PackedOption<Inst>,
    next: PackedOption<Inst>,
}

/// Block order and per-block instruction order. The first block is the entry.
#[derive(Clone, Default, Debug)]
pub struct Layout {
    blocks: SecondaryMap<Block, BlockNode>,
    insts: SecondaryMap<Inst, InstNode>,
    first_block: PackedOption<Block>,
    last_block: PackedOption<Block>,
}

impl Layout {
    /// The entry block: the first in layout order.
    pub fn entry_block(&self) -> Option<Block> {
        self.first_block.expand()
    }

    /// The last block in layout order.
    pub fn last_block(&self) -> Option<Block> {
        self.last_block.expand()
    }

    /// Whether `block` is in the layout.
    #[inline]
    pub fn is_block_inserted(&self, block: Block) -> bool {
        self.blocks[block].inserted
    }

    /// Whether `inst` is in the layout.
    #[inline]
    pub fn is_inst_inserted(&self, inst: Inst) -> bool {
        self.insts[inst].block.is_some()
    }

    /// Appends `block` at the end of the function.
    ///
    /// # Panics
    /// If the block is already inserted.
    pub fn append_block(&mut self, block: Block) {
        assert!(!self.is_block_inserted(block), "{block} already inserted");
        let node = &mut self.blocks[block];
        node.inserted = true;
        node.prev = self.last_block;
        node.next = None.into();
        match self.last_block.expand() {
            Some(last) => self.blocks[last].next = block.into(),
            None => self.first_block = block.into(),
        }
        self.last_block = block.into();
    }

    /// Inserts `block` right after `after` in layout order.
    pub fn insert_block_after(&mut self, block: Block, after: Block) {
        assert!(!self.is_block_inserted(block), "{block} already inserted");
        assert!(self.is_block_inserted(after), "{after} not inserted");
        let next = self.blocks[after].next;
        {
            let node = &mut self.blocks[block];
            node.inserted = true;
            node.prev = after.into();
            node.next = next;
        }
        self.blocks[after].next = block.into();
        match next.expand() {
            Some(n) => self.blocks[n].prev = block.into(),
            None => self.last_block = block.into(),
        }
    }

    /// Removes `block` from the layout. Its instructions stay attached to it, so it can
    /// be re-inserted; use [`Function::remove_block`](crate::Function::remove_block) to
    /// delete a block with its instructions.
    pub fn remove_block(&mut self, block: Block) {
        assert!(self.is_block_inserted(block), "{block} not inserted");
        let (prev, next) = {
            let n = &self.blocks[block];
            (n.prev, n.next)
        };
        match prev.expand() {
            Some(p) => self.blocks[p].next = next,
            None => self.first_block = next,
        }
        match next.expand() {
            Some(n) => self.blocks[n].prev = prev,
            None => self.last_block = prev,
        }
        let node = &mut self.blocks[block];
        node.inserted = false;
        node.prev = None.into();
        node.next = None.into();
    }

    /// The block after `block` in layout order.
    #[inline]
    pub fn next_block(&self, block: Block) -> Option<Block> {
        self.blocks[block].next.expand()
    }

    /// The block before `block` in layout order.
    #[inline]
    pub fn prev_block(&self, block: Block) -> Option<Block> {
        self.blocks[block].prev.expand()
    }

    /// Blocks in layout order.
    #[inline]
    pub fn blocks(&self) -> Blocks<'_> {
        Blocks {
            layout: self,
            next: self.first_block.expand(),
        }
    }

    /// The block containing `inst`, if inserted.
    #[inline]
    pub fn inst_block(&self, inst: Inst) -> Option<Block> {
        self.insts[inst].block.expand()
    }

    /// First instruction of `block`.
    #[inline]
    pub fn first_inst(&self, block: Block) -> Option<Inst> {
        self.blocks[block].first_inst.expand()
    }

    /// Last instruction of `block` (its terminator, in a well-formed function).
    #[inline]
    pub fn last_inst(&self, block: Block) -> Option<Inst> {
        self.blocks[block].last_inst.expand()
    }

    /// The instruction after `inst` in its block.
    #[inline]
    pub fn next_inst(&self, inst: Inst) -> Option<Inst> {
        self.insts[inst].next.expand()
    }

    /// The instruction before `inst` in its block.
    #[inline]
    pub fn prev_inst(&self, inst: Inst) -> Option<Inst> {
        self.insts[inst].prev.expand()
    }

    /// Instructions of `block` in order.
    #[inline]
    pub fn block_insts(&self, block: Block) -> Insts<'_> {
        Insts {
            layout: self,
            next: self.blocks[block].first_inst.expand(),
        }
    }

    /// Appends `inst` at the end of `block`.
    pub fn append_inst(&mut self, inst: Inst, block: Block) {
        assert!(!self.is_inst_inserted(inst), "{inst} already inserted");
        let last = self.blocks[block].last_inst;
        {
            let n = &mut self.insts[inst];
            n.block = block.into();
            n.prev = last;
            n.next = None.into();
        }
        match last.expand() {
            Some(l) => self.insts[l].next = inst.into(),
            None => self.blocks[block].first_inst = inst.into(),
        }
        self.blocks[block].last_inst = inst.into();
    }

    /// Inserts `inst` at the start of `block`.
    pub fn prepend_inst(&mut self, inst: Inst, block: Block) {
        match self.first_inst(block) {
            Some(first) => self.insert_inst_before(inst, first),
            None => self.append_inst(inst, block),
        }
    }

    /// Inserts `inst` right before `before`.
    pub fn insert_inst_before(&mut self, inst: Inst, before: Inst) {
        assert!(!self.is_inst_inserted(inst), "{inst} already inserted");
        let block = self.insts[before]
            .block
            .expand()
            .expect("anchor not inserted");
        let prev = self.insts[before].prev;
        {
            let n = &mut self.insts[inst];
            n.block = block.into();
            n.prev = prev;
            n.next = before.into();
        }
        self.insts[before].prev = inst.into();
        match prev.expand() {
            Some(p) => self.insts[p].next = inst.into(),
            None => self.blocks[block].first_inst = inst.into(),
        }
    }

    /// Inserts `inst` right after `after`.
    pub fn insert_inst_after(&mut self, inst: Inst, after: Inst) {
        match self.next_inst(after) {
            Some(n) => self.insert_inst_before(inst, n),
            None => {
                let block = self.inst_block(after).expect("anchor not inserted");
                self.append_inst(inst, block)
            }
        }
    }

    /// Unlinks `inst` from its block.
    pub fn remove_inst(&mut self, inst: Inst) {
        let block = self.insts[inst].block.expand().expect("inst not inserted");
        let (prev, next) = {
            let n = &self.insts[inst];
            (n.prev, n.next)
        };
        match prev.expand() {
            Some(p) => self.insts[p].next = next,
            None => self.blocks[block].first_inst = next,
        }
        match next.expand() {
            Some(n) => self.insts[n].prev = prev,
            None => self.blocks[block].last_inst = prev,
        }
        self.insts[inst] = InstNode::default();
    }
}

/// Iterator over blocks in layout order.
pub struct Blocks<'a> {
    layout: &'a Layout,
    next: Option<Block>,
}

impl Iterator for Blocks<'_> {
    type Item = Block;
    #[inline]
    fn next(&mut self) -> Option<Block> {
        let b = self.next?;
        self.next = self.layout.next_block(b);
        Some(b)
    }
}

/// Iterator over the instructions of a block.
pub struct Insts<'a> {
    layout: &'a Layout,
    next: Option<Inst>,
}

impl Iterator for Insts<'_> {
    type Item = Inst;
    #[inline]
    fn next(&mut self) -> Option<Inst> {
        let i = self.next?;
        self.next = self.layout.next_inst(i);
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    #[test]
    fn insert_and_remove_keep_order() {
        let mut l = Layout::default();
        let (b0, b1, b2) = (Block::new(0), Block::new(1), Block::new(2));
        l.append_block(b0);
        l.append_block(b2);
        l.insert_block_after(b1, b0);
        assert_eq!(l.blocks().collect::<Vec<_>>(), vec![b0, b1, b2]);
        l.remove_block(b1);
        assert_eq!(l.blocks().collect::<Vec<_>>(), vec![b0, b2]);
        assert_eq!(l.last_block(), Some(b2));

        let (i0, i1, i2, i3) = (Inst::new(0), Inst::new(1), Inst::new(2), Inst::new(3));
        l.append_inst(i1, b0);
        l.prepend_inst(i0, b0);
        l.append_inst(i3, b0);
        l.insert_inst_after(i2, i1);
        assert_eq!(l.block_insts(b0).collect::<Vec<_>>(), vec![i0, i1, i2, i3]);
        l.remove_inst(i0);
        l.remove_inst(i3);
        assert_eq!(l.block_insts(b0).collect::<Vec<_>>(), vec![i1, i2]);
        assert_eq!(l.first_inst(b0), Some(i1));
        assert_eq!(l.last_inst(b0), Some(i2));
        assert!(!l.is_inst_inserted(i0));
        assert_eq!(l.inst_block(i2), Some(b0));
    }
}
