//! Linear-function test replacement (Cocke and Kennedy, CACM 1977; LLVM's
//! `IndVarSimplify::linearFunctionTestReplace`): once strength reduction has made a
//! pointer `p = base + sext(i) * stride` of the counter `i`, the latch's test
//! `i op bound` becomes `p op end` with `end = base + sext(bound) * stride`, computed
//! before the loop. The map from `i` to `p` is strictly increasing (`stride > 0`) and
//! exact (64-bit addresses of `i32` indices cannot wrap), so every comparison keeps
//! its outcome. When the counter had no other use, it is left feeding only its own
//! step, and dead code elimination removes it: one add per iteration fewer.

use crate::analysis::{Counter, RotatedLoop};
use ir::{Function, Inst, InstKind, Type, Value};

/// Rewrites the latch test of loop `s` (with counter `iv`) to compare the pointer
/// `p` (a header parameter starting at `gep base, iv.init, stride` and advancing by
/// `gep p, iv.step, stride`) instead; returns whether it did. Only done when the
/// counter has no use besides its step and the test, so that it disappears.
pub fn replace_exit_test(
    f: &mut Function,
    s: &RotatedLoop,
    iv: &Counter,
    p: Value,
    base: Value,
    stride: u32,
) -> bool {
    let InstKind::Br {
        cond,
        then_dest,
        else_dest,
    } = f.kind(s.branch).clone()
    else {
        return false;
    };
    let Some(cmp) = f.def_inst(cond) else {
        return false;
    };
    let InstKind::Cmp { op, args: [a, b] } = *f.kind(cmp) else {
        return false;
    };
    let Some(step) = f.def_inst(iv.next) else {
        return false;
    };
    if stride == 0 || f.users(cond) != [s.branch] {
        return false;
    }
    // The counter feeds only its step, the test and the back edge (uses left by
    // rewritten addresses are dead).
    let dead = |f: &Function, u: Inst| {
        matches!(f.kind(u), InstKind::Binary { .. })
            && f.inst_result(u).is_some_and(|r| f.users(r).is_empty())
    };
    let only = |f: &Function, v: Value, allowed: &[Inst]| {
        f.users(v)
            .iter()
            .all(|&u| allowed.contains(&u) || dead(f, u))
    };
    let leaves = {
        let targets = f.kind(s.branch).targets();
        let exit_args = &targets[s.exit()].args;
        exit_args.contains(&iv.next) || exit_args.contains(&iv.param)
    };
    if leaves || !only(f, iv.param, &[step, cmp]) || !only(f, iv.next, &[cmp, s.branch]) {
        return false;
    }
    let Some(k) = f.block_params(s.header).iter().position(|&x| x == p) else {
        return false;
    };
    let (x, px) = if iv.tests_next {
        (iv.next, s.next_args(f)[k])
    } else {
        (iv.param, p)
    };
    let end_first = if a == x && b == iv.bound {
        false
    } else if b == x && a == iv.bound {
        true
    } else {
        return false;
    };
    let pterm = f.terminator(s.preheader).expect("preheader has a jump");
    let end = f.insert_inst_before(
        pterm,
        InstKind::Gep {
            base,
            index: iv.bound,
            stride,
        },
        Type::Ptr,
    );
    let end = f.inst_result(end).expect("gep has a result");
    let args = if end_first { [end, px] } else { [px, end] };
    let test = f.insert_inst_before(s.branch, InstKind::Cmp { op, args }, Type::I32);
    let cond = f.inst_result(test).expect("cmp has a result");
    f.replace_kind(
        s.branch,
        InstKind::Br {
            cond,
            then_dest,
            else_dest,
        },
    );
    true
}
