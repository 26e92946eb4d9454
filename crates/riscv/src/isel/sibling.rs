//! Sibling calls: a call in tail position becomes a jump to the callee after the
//! epilogue (`tail callee`), so the callee returns straight to our caller and a chain
//! of tail calls runs in constant stack. This is gcc's `-foptimize-sibling-calls` and
//! LLVM's `isEligibleForTailCallOptimization` for the RISC-V calling convention.
//!
//! A call is in tail position when the next instruction of its block returns its
//! result (or returns nothing from a `void` function), or jumps to a block that does
//! only that with the result as an argument (the return block that
//! simplification shares between several returns). It may become a sibling call
//! when, besides:
//! - the callee's stack arguments fit in the area where our caller passed ours: they
//!   are stored there (the outgoing area of our own frame is released before the
//!   jump). Our stack parameters are then loaded once, in the entry block, and not
//!   rematerialised from their slots, which the call may have overwritten;
//! - no argument points into this function's frame (a local array): the frame is
//!   gone when the callee runs. SysY keeps pointers out of memory, so a pointer
//!   reaches the callee only as an argument; [`frame_pointers`] follows every pointer
//!   from its `alloc` through `gep`s and block arguments.
//!
//! The call then needs no `ra` of its own: a function whose only calls are sibling
//! calls saves no return address.

use super::Isel;
use crate::abi::{self, ArgKind};
use crate::mir::{Slot, SlotKind};
use ir::{BlockCall, EntityRef, Function, Inst, InstKind, Type, Value};

impl Isel<'_> {
    /// The calls of the function that become sibling calls, found before selection
    /// (the entry's loads of stack parameters depend on whether one of them passes
    /// stack arguments).
    pub(super) fn find_sibling_calls(&mut self) {
        let f = self.f;
        let incoming = self.incoming_stack_args();
        // Which values may point into the frame, computed once asked.
        let mut frame: Option<Vec<bool>> = None;
        for b in f.layout.blocks() {
            let Some(i) = f.layout.last_inst(b).and_then(|t| f.layout.prev_inst(t)) else {
                continue;
            };
            let InstKind::Call { callee, args } = f.kind(i) else {
                continue;
            };
            if !in_tail_position(f, i, f.inst_result(i)) {
                continue;
            }
            let (_, nstack) = abi::classify_args(&self.arg_kinds(*callee, args));
            if nstack > incoming {
                continue;
            }
            let pointers = args.iter().any(|&a| f.value_type(a) == Type::Ptr);
            if pointers {
                let frame = frame.get_or_insert_with(|| frame_pointers(f));
                if args.iter().any(|&a| frame[a.index()]) {
                    continue;
                }
            }
            self.siblings.insert(i);
            self.stack_siblings |= nstack > 0;
        }
    }

    /// How many of the function's own arguments its caller passed on the stack.
    fn incoming_stack_args(&self) -> u32 {
        let kinds: Vec<ArgKind> = self
            .f
            .sig
            .params
            .iter()
            .map(|&t| match t {
                Type::F32 => ArgKind::Float,
                _ => ArgKind::Int,
            })
            .collect();
        abi::classify_args(&kinds).1
    }

    /// The frame slot of incoming stack argument `k` (one per argument, so that the
    /// schedulers see a sibling call's store to it and a load of the parameter as
    /// accesses of one slot).
    pub(super) fn incoming_slot(&mut self, k: u32) -> Slot {
        if let Some(&s) = self.incoming_slots.get(&k) {
            return s;
        }
        let s = self.mf.new_slot(SlotKind::Incoming(k));
        self.incoming_slots.insert(k, s);
        s
    }
}

/// Whether the call `i` is followed by a return of its result `res` (or of nothing).
fn in_tail_position(f: &Function, i: Inst, res: Option<Value>) -> bool {
    let Some(next) = f.layout.next_inst(i) else {
        return false;
    };
    match f.kind(next) {
        InstKind::Ret { value } => returns(f, *value, res, None),
        InstKind::Jump { dest } => {
            let mut insts = f.layout.block_insts(dest.block);
            match (insts.next().map(|t| f.kind(t)), insts.next()) {
                (Some(InstKind::Ret { value }), None) => returns(f, *value, res, Some(dest)),
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether `ret value`, reached through `dest` when given, returns what the call
/// returned: nothing from a `void` function, or its result `res`, directly or as
/// the argument passed for the returned parameter.
fn returns(
    f: &Function,
    value: Option<Value>,
    res: Option<Value>,
    dest: Option<&BlockCall>,
) -> bool {
    let Some(v) = value else {
        return f.sig.ret == Type::Void;
    };
    let Some(res) = res else {
        return false;
    };
    if v == res {
        return true;
    }
    let Some(dest) = dest else {
        return false;
    };
    f.block_params(dest.block)
        .iter()
        .zip(dest.args.iter())
        .any(|(&p, &a)| p == v && a == res)
}

/// For every value of `f` (by index), whether it may point into `f`'s frame: an
/// `alloc`, a `gep` from such a pointer, a block parameter that may receive one, and
/// (conservatively) any pointer made otherwise than from a global or a parameter of
/// the function. A fixed point over the blocks, from nothing.
fn frame_pointers(f: &Function) -> Vec<bool> {
    let mut fp = vec![false; f.num_values()];
    let has_alloc = f.layout.blocks().any(|b| {
        f.layout
            .block_insts(b)
            .any(|i| matches!(f.kind(i), InstKind::Alloc { .. }))
    });
    if !has_alloc {
        return fp;
    }
    let entry = f.entry_block();
    let mut changed = true;
    while changed {
        changed = false;
        let mut mark = |v: Value, fp: &mut Vec<bool>| {
            if !fp[v.index()] {
                fp[v.index()] = true;
                changed = true;
            }
        };
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                let kind = f.kind(i);
                for dest in kind.targets() {
                    if dest.block == entry {
                        continue;
                    }
                    for (&p, &a) in f.block_params(dest.block).iter().zip(dest.args.iter()) {
                        if fp[a.index()] {
                            mark(p, &mut fp);
                        }
                    }
                }
                let Some(r) = f.inst_result(i) else {
                    continue;
                };
                let from_frame = match kind {
                    InstKind::Alloc { .. } => true,
                    InstKind::Gep { base, .. } => fp[base.index()],
                    _ => f.value_type(r) == Type::Ptr,
                };
                if from_frame {
                    mark(r, &mut fp);
                }
            }
        }
    }
    fp
}
