//! A function: its data-flow graph (values, instructions, blocks with parameters, and
//! def-use lists) plus its [`Layout`]. All mutation that touches operands goes through
//! methods here so that every value's user list stays exact.
//!
//! Constants and global addresses are values too, interned per function
//! ([`Function::iconst`], [`Function::fconst`], [`Function::global_addr`]); they have no
//! position, dominate everything, and keep no user list (they are never replaced).
//!
//! Long user lists are indexed by position ([`crate::user_index`]), so removing
//! one operand's entry does not scan the list.

use crate::entities::{Block, GlobalId, Inst, Value};
use crate::inst::{BlockCall, InstKind};
use crate::layout::Layout;
use crate::types::Type;
use crate::user_index::{UserIndex, UserList};
use cranelift_entity::{PrimaryMap, SecondaryMap};
use rustc_hash::FxHashMap;

mod compact;

/// A function's type: parameter types, return type, and whether it takes variadic
/// arguments after the fixed ones (only the runtime's `putf`).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Signature {
    pub params: Vec<Type>,
    pub ret: Type,
    pub variadic: bool,
}

/// Where a value comes from.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ValueDef {
    /// The result of an instruction.
    Inst(Inst),
    /// Parameter number `.1` of block `.0`. The entry block's parameters are the
    /// function's parameters.
    Param(Block, u32),
    /// An `i32` constant.
    IConst(i32),
    /// An `f32` constant, as its bit pattern (so -0.0 and 0.0 differ).
    FConst(u32),
    /// The address of a global variable.
    Global(GlobalId),
}

impl ValueDef {
    /// Whether the value is a constant or global address (no position, no users kept).
    #[inline]
    pub fn is_constant(self) -> bool {
        matches!(
            self,
            ValueDef::IConst(_) | ValueDef::FConst(_) | ValueDef::Global(_)
        )
    }
}

/// Data of one value.
#[derive(Clone, Debug)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
    /// Instructions using this value, once per operand occurrence (so an instruction
    /// using it twice appears twice). Empty for constants, which are not tracked.
    users: UserList,
}

/// Data of one instruction.
#[derive(Clone, Debug)]
pub struct InstData {
    pub kind: InstKind,
    /// The result value, for instructions that produce one.
    pub result: Option<Value>,
}

/// Data of one block.
#[derive(Clone, Debug, Default)]
pub struct BlockData {
    /// Block parameters: the phis of this IR.
    pub params: Vec<Value>,
}

/// A function: a declaration when it has no blocks.
#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub sig: Signature,
    values: PrimaryMap<Value, ValueData>,
    insts: PrimaryMap<Inst, InstData>,
    blocks: PrimaryMap<Block, BlockData>,
    pub layout: Layout,
    iconsts: FxHashMap<i32, Value>,
    fconsts: FxHashMap<u32, Value>,
    globals: FxHashMap<GlobalId, Value>,
    /// Source position of each instruction, for comments in the assembly: a byte
    /// offset into the source plus one, 0 when unknown. Lowering fills it; passes that
    /// copy instructions (inlining, unrolling, loop copies) copy it; instructions a
    /// pass makes from scratch have none. Nothing else reads it.
    src_locs: SecondaryMap<Inst, u32>,
    /// Positions in the long user lists.
    user_index: UserIndex,
}

impl Function {
    /// A new function with no blocks (a declaration until blocks are added).
    pub fn new(name: impl Into<String>, sig: Signature) -> Self {
        Function {
            name: name.into(),
            sig,
            values: PrimaryMap::new(),
            insts: PrimaryMap::new(),
            blocks: PrimaryMap::new(),
            layout: Layout::default(),
            iconsts: FxHashMap::default(),
            fconsts: FxHashMap::default(),
            globals: FxHashMap::default(),
            src_locs: SecondaryMap::new(),
            user_index: UserIndex::default(),
        }
    }

    /// Gives back the room the instruction, value and block tables grew into beyond
    /// their contents (they grow by doubling: up to half of a big function's tables
    /// is room), once the function is done changing.
    pub fn shrink_to_fit(&mut self) {
        self.values.shrink_to_fit();
        self.insts.shrink_to_fit();
        self.blocks.shrink_to_fit();
    }

    /// Whether this is only a declaration (no body).
    pub fn is_declaration(&self) -> bool {
        self.layout.entry_block().is_none()
    }

    /// The entry block, whose parameters are the function's parameters.
    ///
    /// # Panics
    /// On a declaration.
    #[inline]
    pub fn entry_block(&self) -> Block {
        self.layout.entry_block().expect("function has no body")
    }

    // ---- values -------------------------------------------------------------

    /// Type of a value.
    #[inline]
    pub fn value_type(&self, v: Value) -> Type {
        self.values[v].ty
    }

    /// Definition of a value.
    #[inline]
    pub fn value_def(&self, v: Value) -> ValueDef {
        self.values[v].def
    }

    /// Users of a value (one entry per operand occurrence; empty for constants).
    #[inline]
    pub fn users(&self, v: Value) -> &[Inst] {
        &self.values[v].users
    }

    /// Whether anything uses `v`. Always false for constants (not tracked).
    #[inline]
    pub fn has_users(&self, v: Value) -> bool {
        !self.values[v].users.is_empty()
    }

    /// The i32 value of `v` if it is an integer constant.
    #[inline]
    pub fn as_iconst(&self, v: Value) -> Option<i32> {
        match self.values[v].def {
            ValueDef::IConst(c) => Some(c),
            _ => None,
        }
    }

    /// The constant `c` when `v` is `sext c` (there are no `i64` constants: passes
    /// sign-extend 32-bit ones).
    pub fn as_sext_iconst(&self, v: Value) -> Option<i32> {
        match self.values[v].def {
            ValueDef::Inst(i) => match self.insts[i].kind {
                crate::InstKind::Unary {
                    op: crate::UnOp::SExt,
                    arg,
                } => self.as_iconst(arg),
                _ => None,
            },
            _ => None,
        }
    }

    /// The f32 value of `v` if it is a float constant.
    pub fn as_fconst(&self, v: Value) -> Option<f32> {
        match self.values[v].def {
            ValueDef::FConst(bits) => Some(f32::from_bits(bits)),
            _ => None,
        }
    }

    /// Number of values ever created (for sizing side tables).
    #[inline]
    pub fn num_values(&self) -> usize {
        self.values.len()
    }

    /// Number of instructions ever created (for sizing side tables).
    #[inline]
    pub fn num_insts(&self) -> usize {
        self.insts.len()
    }

    /// Number of blocks ever created (for sizing side tables).
    #[inline]
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// All values ever created, including dead ones.
    pub fn all_values(&self) -> impl Iterator<Item = Value> + '_ {
        self.values.keys()
    }

    /// The interned `i32` constant `c`.
    pub fn iconst(&mut self, c: i32) -> Value {
        if let Some(&v) = self.iconsts.get(&c) {
            return v;
        }
        let v = self.values.push(ValueData {
            ty: Type::I32,
            def: ValueDef::IConst(c),
            users: UserList::new(),
        });
        self.iconsts.insert(c, v);
        v
    }

    /// The interned `f32` constant `c` (by bit pattern).
    pub fn fconst(&mut self, c: f32) -> Value {
        let bits = c.to_bits();
        if let Some(&v) = self.fconsts.get(&bits) {
            return v;
        }
        let v = self.values.push(ValueData {
            ty: Type::F32,
            def: ValueDef::FConst(bits),
            users: UserList::new(),
        });
        self.fconsts.insert(bits, v);
        v
    }

    /// The interned address of global `g`.
    pub fn global_addr(&mut self, g: GlobalId) -> Value {
        if let Some(&v) = self.globals.get(&g) {
            return v;
        }
        let v = self.values.push(ValueData {
            ty: Type::Ptr,
            def: ValueDef::Global(g),
            users: UserList::new(),
        });
        self.globals.insert(g, v);
        v
    }

    /// A zero constant of type `ty` (i32 0, f32 +0.0, or the null pointer as i32 0 for
    /// anything else). Useful for reading never-written variables. There are no `i64`
    /// constants: for `i64` this is an `i32` 0, which the verifier rejects there.
    pub fn zero(&mut self, ty: Type) -> Value {
        match ty {
            Type::F32 => self.fconst(0.0),
            _ => self.iconst(0),
        }
    }

    // ---- blocks -------------------------------------------------------------

    /// Creates a block, not yet in the layout.
    pub fn create_block(&mut self) -> Block {
        self.blocks.push(BlockData::default())
    }

    /// Creates a block and appends it to the layout.
    pub fn append_new_block(&mut self) -> Block {
        let b = self.create_block();
        self.layout.append_block(b);
        b
    }

    /// Parameters of `block`.
    #[inline]
    pub fn block_params(&self, block: Block) -> &[Value] {
        &self.blocks[block].params
    }

    /// Adds a parameter of type `ty` to `block`. Callers must also add an argument to
    /// every branch to it (see [`Function::add_block_param_with_args`]).
    pub fn append_block_param(&mut self, block: Block, ty: Type) -> Value {
        let idx = self.blocks[block].params.len() as u32;
        let v = self.values.push(ValueData {
            ty,
            def: ValueDef::Param(block, idx),
            users: UserList::new(),
        });
        self.blocks[block].params.push(v);
        v
    }

    /// Removes parameter `idx` of `block` together with the matching argument of every
    /// branch to `block` (found through `preds`, the predecessor blocks, each listed
    /// once). The parameter must have no users.
    pub fn remove_block_param(&mut self, block: Block, idx: usize, preds: &[Block]) {
        let p = self.blocks[block].params[idx];
        debug_assert!(!self.has_users(p), "removing a used block parameter");
        for &pred in preds {
            let Some(term) = self.layout.last_inst(pred) else {
                continue;
            };
            let mut removed = Vec::new();
            for t in self.insts[term].kind.targets_mut() {
                if t.block == block {
                    removed.push(t.args.remove(idx));
                }
            }
            for a in removed {
                self.remove_use(a, term);
            }
        }
        self.blocks[block].params.remove(idx);
        for (i, &v) in self.blocks[block].params.iter().enumerate() {
            self.values[v].def = ValueDef::Param(block, i as u32);
        }
    }

    /// Removes `block` and all its instructions from the function. Branches to it must
    /// already be gone.
    pub fn remove_block(&mut self, block: Block) {
        let insts: Vec<Inst> = self.layout.block_insts(block).collect();
        for i in insts {
            self.remove_inst(i);
        }
        self.layout.remove_block(block);
    }

    /// Successor blocks of `block` (through its terminator), with duplicates when both
    /// arms of a `br` go to the same block.
    #[inline]
    pub fn successors(&self, block: Block) -> smallvec::SmallVec<[Block; 2]> {
        // The blocks of [`InstKind::targets`], without gathering the calls first.
        let Some(t) = self.layout.last_inst(block) else {
            return smallvec::SmallVec::new();
        };
        match &self.insts[t].kind {
            InstKind::Jump { dest } => smallvec::smallvec![dest.block],
            InstKind::Br {
                then_dest,
                else_dest,
                ..
            } => smallvec::smallvec![then_dest.block, else_dest.block],
            _ => smallvec::SmallVec::new(),
        }
    }

    /// The terminator of `block`, if its last instruction is one.
    #[inline]
    pub fn terminator(&self, block: Block) -> Option<Inst> {
        let t = self.layout.last_inst(block)?;
        self.insts[t].kind.is_terminator().then_some(t)
    }

    /// The values `block` defines: its parameters, then its instructions' results.
    pub fn block_values(&self, block: Block) -> Vec<Value> {
        self.block_params(block)
            .iter()
            .copied()
            .chain(
                self.layout
                    .block_insts(block)
                    .filter_map(|i| self.inst_result(i)),
            )
            .collect()
    }

    /// The instructions outside `block` that use `v`.
    pub fn users_outside(&self, v: Value, block: Block) -> Vec<Inst> {
        self.users(v)
            .iter()
            .copied()
            .filter(|&u| self.layout.inst_block(u) != Some(block))
            .collect()
    }

    /// The blocks `(then, else)` of the conditional branch that ends `block`, if it
    /// ends in one.
    pub fn branch_arms(&self, block: Block) -> Option<(Block, Block)> {
        match self.kind(self.terminator(block)?) {
            InstKind::Br {
                then_dest,
                else_dest,
                ..
            } => Some((then_dest.block, else_dest.block)),
            _ => None,
        }
    }

    // ---- instructions -------------------------------------------------------

    /// Creates an instruction (not yet in the layout) and its result value of type
    /// `result_ty` (none for `Void`), registering it as a user of its operands.
    pub fn make_inst(&mut self, kind: InstKind, result_ty: Type) -> Inst {
        let inst = self.insts.push(InstData { kind, result: None });
        if result_ty != Type::Void {
            let v = self.values.push(ValueData {
                ty: result_ty,
                def: ValueDef::Inst(inst),
                users: UserList::new(),
            });
            self.insts[inst].result = Some(v);
        }
        let args = self.insts[inst].kind.args();
        for a in args {
            self.add_use(a, inst);
        }
        inst
    }

    /// The source position `inst` comes from (a byte offset into the source), if known.
    pub fn src_loc(&self, inst: Inst) -> Option<u32> {
        self.src_locs[inst].checked_sub(1)
    }

    /// Sets (or, with `None`, forgets) the source position of `inst`.
    pub fn set_src_loc(&mut self, inst: Inst, pos: Option<u32>) {
        let v = pos.map_or(0, |p| p.saturating_add(1));
        if v != 0 || self.src_locs[inst] != 0 {
            self.src_locs[inst] = v;
        }
    }

    /// Gives `to` the source position of `from` (for a copy of `from`).
    pub fn copy_src_loc(&mut self, from: Inst, to: Inst) {
        let pos = self.src_loc(from);
        self.set_src_loc(to, pos);
    }

    /// The instruction's data.
    #[inline]
    pub fn inst(&self, inst: Inst) -> &InstData {
        &self.insts[inst]
    }

    /// What the instruction does.
    #[inline]
    pub fn kind(&self, inst: Inst) -> &InstKind {
        &self.insts[inst].kind
    }

    /// The instruction's result value.
    #[inline]
    pub fn inst_result(&self, inst: Inst) -> Option<Value> {
        self.insts[inst].result
    }

    /// The instruction defining `v`, if it is an instruction result.
    #[inline]
    pub fn def_inst(&self, v: Value) -> Option<Inst> {
        match self.values[v].def {
            ValueDef::Inst(i) => Some(i),
            _ => None,
        }
    }

    /// Replaces what `inst` does, keeping its result value (whose type must stay the
    /// same) and updating def-use lists.
    pub fn replace_kind(&mut self, inst: Inst, kind: InstKind) {
        let old = self.insts[inst].kind.args();
        for a in old {
            self.remove_use(a, inst);
        }
        self.insts[inst].kind = kind;
        let new = self.insts[inst].kind.args();
        for a in new {
            self.add_use(a, inst);
        }
    }

    /// Rewrites operand values of `inst` through `f`, updating def-use lists.
    pub fn map_inst_args(&mut self, inst: Inst, mut f: impl FnMut(Value) -> Value) {
        let mut kind = self.insts[inst].kind.clone();
        kind.map_args(|a| *a = f(*a));
        self.replace_kind(inst, kind);
    }

    /// Mutable access to a branch target's arguments and block, updating def-use lists.
    /// `which` is 0 for `jump`'s target or `br`'s then-target, 1 for `br`'s else-target.
    pub fn set_target(&mut self, inst: Inst, which: usize, call: BlockCall) {
        let mut kind = self.insts[inst].kind.clone();
        *kind.targets_mut()[which] = call;
        self.replace_kind(inst, kind);
    }

    /// Removes `inst` from the layout and from its operands' user lists. Its result, if
    /// any, must be unused.
    pub fn remove_inst(&mut self, inst: Inst) {
        debug_assert!(
            self.insts[inst].result.is_none_or(|r| !self.has_users(r)),
            "removing {inst} whose result is still used"
        );
        let args = self.insts[inst].kind.args();
        for a in args {
            self.remove_use(a, inst);
        }
        // Leave a harmless shell behind so stale references see no operands.
        self.insts[inst].kind = InstKind::Ret { value: None };
        if self.layout.is_inst_inserted(inst) {
            self.layout.remove_inst(inst);
        }
    }

    /// Replaces every use of `old` by `new`. `old` must not be a constant.
    pub fn replace_all_uses(&mut self, old: Value, new: Value) {
        if old == new {
            return;
        }
        let mut users = std::mem::take(&mut self.values[old].users);
        self.user_index.forget(old);
        users.sort_unstable();
        users.dedup();
        for inst in users {
            let mut count = 0;
            self.insts[inst].kind.map_args(|a| {
                if *a == old {
                    *a = new;
                    count += 1;
                }
            });
            for _ in 0..count {
                self.add_use(new, inst);
            }
        }
    }

    fn add_use(&mut self, v: Value, inst: Inst) {
        let data = &mut self.values[v];
        if !data.def.is_constant() {
            data.users.push(inst);
            self.user_index.pushed(v, inst, data.users.len());
        }
    }

    fn remove_use(&mut self, v: Value, inst: Inst) {
        self.user_index
            .remove_last(v, &mut self.values[v].users, inst);
    }

    /// Appends a new instruction at the end of `block`, returning it.
    pub fn append_inst(&mut self, block: Block, kind: InstKind, result_ty: Type) -> Inst {
        let inst = self.make_inst(kind, result_ty);
        self.layout.append_inst(inst, block);
        inst
    }

    /// Inserts a new instruction before `before`, returning it.
    pub fn insert_inst_before(&mut self, before: Inst, kind: InstKind, result_ty: Type) -> Inst {
        let inst = self.make_inst(kind, result_ty);
        self.layout.insert_inst_before(inst, before);
        inst
    }

    /// Block of a defining position: the block of the instruction or parameter
    /// defining `v`; `None` for constants.
    #[inline]
    pub fn value_block(&self, v: Value) -> Option<Block> {
        match self.values[v].def {
            ValueDef::Inst(i) => self.layout.inst_block(i),
            ValueDef::Param(b, _) => Some(b),
            _ => None,
        }
    }

    /// A side table over blocks, with an entry for every block: writing an entry
    /// never grows it (a write past the end of a [`SecondaryMap`] takes its cold
    /// path, which resizes it, so filling one from empty takes that path for
    /// almost every entry). Iterating it visits every block.
    pub fn block_map<T: Clone + Default>(&self) -> SecondaryMap<Block, T> {
        sized_map(self.blocks.len())
    }

    /// A side table over instructions, with an entry for every instruction
    /// created so far (see [`Function::block_map`]).
    pub fn inst_map<T: Clone + Default>(&self) -> SecondaryMap<Inst, T> {
        sized_map(self.insts.len())
    }

    /// A side table over values, with an entry for every value created so far
    /// (see [`Function::block_map`]).
    pub fn value_map<T: Clone + Default>(&self) -> SecondaryMap<Value, T> {
        sized_map(self.values.len())
    }
}

/// A side table with `n` default entries.
fn sized_map<K: cranelift_entity::EntityRef, T: Clone + Default>(n: usize) -> SecondaryMap<K, T> {
    let mut m = SecondaryMap::with_capacity(n);
    m.resize(n);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Passes walk every instruction many times: growing an instruction past half a
    /// cache line (a variant holding a list inline) costs every one of them.
    #[test]
    fn an_instruction_fits_in_half_a_cache_line() {
        assert!(std::mem::size_of::<InstData>() <= 32);
    }

    #[test]
    fn source_positions_are_kept_copied_and_forgotten() {
        let mut f = Function::new("f", Signature::default());
        let b = f.append_new_block();
        let a = f.append_inst(b, InstKind::Ret { value: None }, Type::Void);
        let c = f.make_inst(InstKind::Ret { value: None }, Type::Void);
        assert_eq!(f.src_loc(a), None);
        f.set_src_loc(a, Some(0));
        assert_eq!(f.src_loc(a), Some(0));
        f.copy_src_loc(a, c);
        assert_eq!(f.src_loc(c), Some(0));
        f.set_src_loc(a, Some(41));
        assert_eq!(f.src_loc(a), Some(41));
        f.set_src_loc(c, None);
        assert_eq!(f.src_loc(c), None);
        // Cloned with the function.
        assert_eq!(f.clone().src_loc(a), Some(41));
    }

    /// A block's successors are the blocks its terminator's calls name, in order
    /// and with duplicates; a block ending in a return has none.
    #[test]
    fn side_tables_have_an_entry_for_every_entity_created() {
        let m = crate::parse_module(
            "func @main(i32) -> i32 {\nbb0(%0: i32):\n  %1 = add %0, 1\n  br %1, bb1, bb2\n\
             bb1:\n  ret %1\nbb2:\n  ret 0\n}\n",
        )
        .unwrap();
        let f = m.funcs.values().next().unwrap();
        let blocks = f.block_map::<u32>();
        let insts = f.inst_map::<bool>();
        let values = f.value_map::<Option<u8>>();
        // Sized up front: filling them never takes the map's growing path.
        assert_eq!(blocks.keys().count(), f.num_blocks());
        assert_eq!(insts.keys().count(), f.num_insts());
        assert_eq!(values.keys().count(), f.num_values());
        assert!(blocks.values().all(|&x| x == 0) && insts.values().all(|&x| !x));
    }

    #[test]
    fn successors_are_the_blocks_of_the_terminators_calls() {
        let m = crate::parse_module(
            "func @main(i32) -> i32 {\nbb0(%0: i32):\n  br %0, bb2, bb1\n\
             bb1:\n  br %0, bb2, bb2\nbb2:\n  jump bb3\nbb3:\n  ret 0\n}\n",
        )
        .unwrap();
        let f = m.funcs.values().next().unwrap();
        let b: Vec<Block> = f.layout.blocks().collect();
        assert_eq!(f.successors(b[0])[..], [b[2], b[1]]);
        assert_eq!(f.successors(b[1])[..], [b[2], b[2]]);
        assert_eq!(f.successors(b[2])[..], [b[3]]);
        assert!(f.successors(b[3]).is_empty());
        for &x in &b {
            let calls: Vec<Block> = match f.terminator(x) {
                Some(t) => f.kind(t).targets().iter().map(|c| c.block).collect(),
                None => Vec::new(),
            };
            assert_eq!(f.successors(x)[..], calls[..]);
        }
    }
}
