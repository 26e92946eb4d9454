//! Partial inlining of early exits: a function that starts by testing its arguments
//! and returning at once in one case (`if (n < 2) return n;`) is split into a small
//! wrapper — the test and the early return, then a call of the rest — and the rest.
//! The inliner ([`super::inline`]) then copies the wrapper into every caller, so the
//! early cases cost a comparison at the call site instead of a call with its
//! prologue and epilogue. In a recursive function the leaves of the recursion are
//! the early cases, about half of all calls.
//!
//! This is GCC's function splitting for partial inlining (`ipa-split`, "Partial
//! inlining" in the GCC internals manual; Zhao and Amaral, "To Inline or Not to
//! Inline? Enhanced Inlining Decisions", 2003, on the benefit), restricted to the
//! shape that matters here:
//!
//! - the entry block has a few instructions without side effects and ends in a `br`;
//! - one target, reached only from the entry and without arguments, computes its
//!   result without side effects in a few instructions and returns;
//! - the function is called from somewhere (so `main` is never split) and is not
//!   already a split part.
//!
//! The rest becomes a new function `NAME.body` (a copy of the whole function; its
//! own entry test is then redundant but harmless), and the original keeps the entry
//! block, the early return, and `ret call @NAME.body(params)` on the other arm.

use crate::pipeline::Pass;
use ir::{BlockCall, FuncId, Function, Inst, InstKind, Module, Type};
use rustc_hash::FxHashSet;

/// The partial inlining (function splitting) pass.
pub struct PartialInline;

impl Pass for PartialInline {
    fn name(&self) -> &'static str {
        "partialinline"
    }
    fn description(&self) -> &'static str {
        "split functions with an early return into an inlinable test and a body"
    }
    fn run(&self, m: &mut Module) -> bool {
        run(m) > 0
    }
}

/// Instructions allowed in the entry block besides its branch.
const MAX_TEST: usize = 4;
/// Instructions allowed in the early-return block besides its `ret`.
const MAX_EARLY: usize = 4;

/// Splits every qualifying function of `m`; returns how many.
pub fn run(m: &mut Module) -> usize {
    let mut called = vec![false; m.funcs.len()];
    for f in m.funcs.values() {
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                if let InstKind::Call { callee, .. } = f.kind(i) {
                    called[ir::EntityRef::index(*callee)] = true;
                }
            }
        }
    }
    let ids: Vec<FuncId> = m.funcs.keys().collect();
    // The functions' names, kept up to date (looking each name up in the
    // module is quadratic in the number of functions).
    let mut names: FxHashSet<String> = m.funcs.values().map(|f| f.name.clone()).collect();
    let mut split = 0;
    for id in ids {
        let f = &m.funcs[id];
        let part = format!("{}.body", f.name);
        if !called[ir::EntityRef::index(id)] || f.name.ends_with(".body") || names.contains(&part) {
            continue;
        }
        let Some(rest_arm) = early_exit(f) else {
            continue;
        };
        let mut body = f.clone();
        body.name = part;
        names.insert(body.name.clone());
        let body_id = m.add_function(body);
        keep_entry_and_early_exit(&mut m.funcs[id], rest_arm, body_id);
        split += 1;
    }
    split
}

/// Which target of the entry's `br` (0 or 1) leads to the rest of the function,
/// when the other is an early return.
fn early_exit(f: &Function) -> Option<usize> {
    if f.is_declaration() {
        return None;
    }
    let entry = f.entry_block();
    let term = f.terminator(entry)?;
    let InstKind::Br {
        then_dest,
        else_dest,
        ..
    } = f.kind(term)
    else {
        return None;
    };
    let test: Vec<Inst> = f.layout.block_insts(entry).collect();
    let pure = |i: &Inst| {
        let k = f.kind(*i);
        !k.has_side_effects() && !matches!(k, InstKind::Load { .. } | InstKind::Alloc { .. })
    };
    if test.len() - 1 > MAX_TEST || !test[..test.len() - 1].iter().all(pure) {
        return None;
    }
    for (early, t) in [(0, then_dest), (1, else_dest)] {
        let other = if early == 0 { else_dest } else { then_dest };
        if !t.args.is_empty() || !f.block_params(t.block).is_empty() || t.block == other.block {
            continue;
        }
        // Only the entry reaches it.
        let reached_elsewhere = f
            .layout
            .blocks()
            .any(|b| b != entry && f.successors(b).contains(&t.block));
        if reached_elsewhere {
            continue;
        }
        let insts: Vec<Inst> = f.layout.block_insts(t.block).collect();
        let Some((&last, init)) = insts.split_last() else {
            continue;
        };
        if matches!(f.kind(last), InstKind::Ret { .. })
            && init.len() <= MAX_EARLY
            && init.iter().all(pure)
        {
            return Some(1 - early);
        }
    }
    None
}

/// Rewrites `f` to its entry block, its early return, and on arm `rest_arm` a tail
/// call of `body`.
fn keep_entry_and_early_exit(f: &mut Function, rest_arm: usize, body: FuncId) {
    let entry = f.entry_block();
    let term = f
        .terminator(entry)
        .expect("checked: the entry ends in a br");
    let call_block = f.create_block();
    f.layout.append_block(call_block);
    let params = f.block_params(entry).to_vec();
    let ret_ty = f.sig.ret;
    let call = f.append_inst(
        call_block,
        InstKind::Call {
            callee: body,
            args: params.into(),
        },
        ret_ty,
    );
    let value = f.inst_result(call);
    f.append_inst(call_block, InstKind::Ret { value }, Type::Void);
    f.set_target(term, rest_arm, BlockCall::new(call_block, Vec::new()));
    crate::cfg_edit::remove_unreachable_blocks(f);
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{fib_module, same_behaviour};

    /// `fib` whose early return `partialinline` splits from the recursion.
    fn fib() -> String {
        fib_module(&[15])
    }

    #[test]
    fn splits_the_early_return_from_the_body() {
        let out = same_behaviour(&fib(), &["partialinline"], "");
        let wrapper = &out[out.find("func @fib(").unwrap()..];
        let wrapper = &wrapper[..wrapper.find("\n}").unwrap()];
        assert!(wrapper.contains("call @fib.body(%0)"), "{out}");
        assert!(!wrapper.contains("call @fib("), "{out}");
        assert!(out.contains("func @fib.body(i32) -> i32"), "{out}");
    }

    #[test]
    fn with_the_inliner_leaves_cost_no_call() {
        let out = same_behaviour(&fib(), &["partialinline", "inline"], "");
        let main = &out[out.find("func @main").unwrap()..];
        assert!(
            main.contains("slt 15, 2") || main.contains("call @fib.body(15)"),
            "{main}"
        );
        assert!(!main.contains("call @fib("), "{main}");
    }

    #[test]
    fn main_and_effects_are_not_split() {
        // main is never called; a store in the early block is an effect.
        let src = r#"
global @g: i32 = 0

declare @putint(i32) -> void

func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = slt %0, 2
  br %1, bb1, bb2
bb1:
  store %0, @g
  ret %0
bb2:
  %2 = mul %0, %0
  call @putint(%2)
  ret %2
}

func @main() -> i32 {
bb0:
  %0 = slt 1, 2
  br %0, bb1, bb2
bb1:
  ret 3
bb2:
  %1 = call @f(5)
  call @putint(%1)
  ret 0
}
"#;
        let out = same_behaviour(src, &["partialinline"], "");
        assert!(!out.contains(".body"), "{out}");
    }
}
