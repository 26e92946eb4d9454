//! Interprocedural value range propagation: the range of each `i32` parameter
//! is the join of the ranges of what every call passes for it, and the
//! function's comparisons, divisions and remainders are simplified under those
//! ranges ([`crate::passes::value_numbering::vrp`]'s rules) instead of under
//! "any value". A parameter every call passes a comparison's result is in
//! `[0, 1]`, so `p + 1 > p` is 1 and `p / 2` is 0 inside the callee (with `i32`
//! wrapping, neither holds for an arbitrary `p`).
//!
//! This is GCC's `-fipa-vrp` (the value ranges of `ipa-cp`'s jump functions,
//! met over the call sites) and the argument ranges of LLVM's `IPSCCP` (its
//! solver tracks a constant range per argument of a function whose callers are
//! all known, and folds the callee's comparisons with them). SysY has no
//! function pointers and one translation unit, so every call site is known;
//! `main` has no callers and keeps its parameters unknown.
//!
//! Functions are visited callers first (reverse post-order of the call graph),
//! so the ranges a caller passes are computed under its own parameters' ranges,
//! already known: a range flows down a chain of calls in one run. A caller not
//! visited yet (on a cycle of calls with the callee, the callee itself
//! included) has its ranges computed with its parameters unknown, which holds
//! whatever its callers pass. A call the caller's solve never reached counts as
//! passing any value. The simplifications happen during the run and no range is
//! stored in the IR, so calls added later by other passes cannot contradict it.

use crate::analysis::callgraph::call_sites;
use crate::analysis::purity::Purity;
use crate::analysis::ranges::{Range, Ranges};
use crate::analysis::CallGraph;
use crate::passes::scalar::{instcombine, sccp};
use crate::passes::value_numbering::{condprop, gvn, vrp};
use crate::pipeline::Pass;
use ir::analysis::ControlFlowGraph;
use ir::{FuncId, Function, InstKind, Module, SecondaryMap, Type};
use rustc_hash::FxHashMap;

/// The interprocedural range propagation pass.
pub struct IpVrp;

impl Pass for IpVrp {
    fn name(&self) -> &'static str {
        "ipvrp"
    }
    fn description(&self) -> &'static str {
        "simplify functions by value ranges under the ranges every call passes"
    }
    fn run(&self, m: &mut Module) -> bool {
        run(m) > 0
    }
}

/// Simplifies every function of `m` whose calls all pass its `i32` parameters
/// narrower ranges than any value; returns how many instructions changed.
pub fn run(m: &mut Module) -> usize {
    let graph = CallGraph::of(m);
    let callers = graph.callers();
    let mut order = graph.post_order();
    order.reverse();
    // The parameter ranges of the functions visited (final), `None`: any value.
    let mut params: SecondaryMap<FuncId, Option<Vec<Option<Range>>>> = SecondaryMap::new();
    // Ranges of the callers, computed under their parameters' ranges once those
    // are final, and with unknown parameters before.
    let mut solved: FxHashMap<FuncId, Ranges> = FxHashMap::default();
    // Computed once something is to be simplified. Simplifying only removes
    // effects, so it stays a safe summary for the functions visited later.
    let mut purity: Option<Purity> = None;
    let mut changed = 0;
    for g in order {
        let f = &m.funcs[g];
        if f.is_declaration() || f.name == "main" || callers[g].is_empty() {
            params[g] = Some(vec![None; f.sig.params.len()]);
            solved.remove(&g);
            continue;
        }
        let mut joined: Vec<Option<Range>> = vec![None; f.sig.params.len()];
        for &c in &callers[g] {
            let ranges = solved
                .entry(c)
                .or_insert_with(|| ranges_of(&m.funcs[c], params[c].as_deref()));
            join_arguments(&m.funcs[c], ranges, g, &mut joined);
        }
        let f = &m.funcs[g];
        let entry = f.block_params(f.entry_block()).to_vec();
        for (r, &p) in joined.iter_mut().zip(&entry) {
            if f.value_type(p) != Type::I32 || *r == Some(Range::FULL) {
                *r = None;
            }
        }
        if joined.iter().any(Option::is_some) {
            let purity = purity.get_or_insert_with(|| Purity::compute(m));
            changed += simplify(&mut m.funcs[g], &joined, purity);
        }
        params[g] = Some(joined);
        // Its ranges as a caller are recomputed under its parameters' ranges.
        solved.remove(&g);
    }
    changed
}

/// Rounds of folding under the parameters' ranges at most.
pub const MAX_ROUNDS: usize = 4;

/// Simplifies `f` under its parameters' ranges `params`: `vrp`'s rules, then
/// `sccp` and `instcombine` fold what they decided and put the next tests in
/// the forms the ranges decide (`p + 1 == 0` as `p == -1`), for up to
/// [`MAX_ROUNDS`] rounds while the rules change something. When something
/// changed, `gvn` merges the copies of one test that the folding left equal
/// (an unrolled loop's iterations that all test the same value) and `condprop`
/// decides those a dominating branch already took. Returns how many
/// instructions the rules changed.
fn simplify(f: &mut Function, params: &[Option<Range>], purity: &Purity) -> usize {
    let mut changed = 0;
    for _ in 0..MAX_ROUNDS {
        let n = vrp::run_with_param_ranges(f, params);
        if n == 0 {
            break;
        }
        changed += n;
        sccp::run(f);
        instcombine::run(f);
    }
    if changed > 0 {
        gvn::run(f, purity);
        condprop::run(f);
    }
    changed
}

/// The ranges of `f`, under `params` when given.
fn ranges_of(f: &Function, params: Option<&[Option<Range>]>) -> Ranges {
    let cfg = ControlFlowGraph::compute(f);
    Ranges::compute_with_params(f, &cfg, params.unwrap_or(&[]))
}

/// Joins into `joined` (one per parameter of `callee`, `None` for none yet)
/// the ranges of the arguments of `caller`'s calls of `callee`.
fn join_arguments(
    caller: &Function,
    ranges: &Ranges,
    callee: FuncId,
    joined: &mut [Option<Range>],
) {
    for call in call_sites(caller) {
        let InstKind::Call { callee: c, args } = caller.kind(call) else {
            continue;
        };
        if *c != callee {
            continue;
        }
        for (j, &a) in joined.iter_mut().zip(args) {
            let r = match caller.value_type(a) {
                Type::I32 => ranges.get(a).unwrap_or(Range::FULL),
                _ => Range::FULL,
            };
            *j = Some(j.map_or(r, |j| j.join(r)));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// `@f` is called with comparison results and a constant 1 only: its
    /// parameter is in `[0, 1]`, so `p + 1 > p` (false for `p = MAX` when
    /// `i32` wraps) is 1, and `p / 2` is 0.
    const FLAG: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @f(i32, f32) -> i32 {
bb0(%0: i32, %1: f32):
  %2 = add %0, 1
  %3 = sgt %2, %0
  %4 = sdiv %0, 2
  %5 = add %3, %4
  call @putint(%5)
  ret %0
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = slt %0, 10
  %2 = call @f(%1, 1.5)
  call @putint(%2)
  %3 = call @f(1, 2.5)
  call @putint(%3)
  ret 0
}
"#;

    #[test]
    fn a_parameter_every_call_passes_a_flag_is_in_zero_one() {
        for input in ["3", "30"] {
            let out = same_behaviour(FLAG, &["ipvrp"], input);
            assert!(!out.contains("sgt"), "{out}");
            assert!(!out.contains("sdiv"), "{out}");
            assert!(out.contains("  call @putint(1)\n  ret %0\n"), "{out}");
        }
    }

    #[test]
    fn one_call_passing_any_value_keeps_the_tests() {
        let src = FLAG.replace(
            "  ret 0\n}",
            "  %4 = call @f(%0, 0.5)\n  call @putint(%4)\n  ret 0\n}",
        );
        let out = same_behaviour(&src, &["ipvrp"], "2147483647");
        assert!(out.contains("%3 = sgt %2, %0"), "{out}");
        assert!(out.contains("%4 = sdiv %0, 2"), "{out}");
    }

    /// `@g` passes its flag plus one to `@h`: `h`'s parameter is in `[1, 2]`
    /// once `g`'s is known to be in `[0, 1]`, in the same run (callers first).
    #[test]
    fn ranges_flow_down_a_chain_of_calls() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @h(i32) -> i32 {
bb0(%0: i32):
  %1 = sdiv %0, 4
  %2 = eq %0, 0
  %3 = add %1, %2
  ret %3
}

func @g(i32) -> i32 {
bb0(%0: i32):
  %1 = add %0, 1
  %2 = call @h(%1)
  ret %2
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sge %0, 0
  %2 = call @g(%1)
  call @putint(%2)
  ret 0
}
"#;
        let out = same_behaviour(src, &["ipvrp"], "-4");
        assert!(
            out.contains("func @h(i32) -> i32 {\nbb0(%0: i32):\n  ret 0\n}"),
            "{out}"
        );
    }

    /// With `p` in `[0, 1]`: `p + 1 > p` is 1 (first round), so `-2p + 1 == 0`
    /// is 0 (odd), `q = p - 0` is `p`, and `3q == -1`, which `instcombine` makes
    /// `q == 0x55555555`, is decided by the range in the second round; then
    /// the two tests of `p > 0` that are left are one value, and the second is
    /// decided by the first's branch.
    #[test]
    fn a_test_the_folding_exposes_is_decided_in_a_later_round() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @f(i32) -> i32 {
bb0(%0: i32):
  %1 = add %0, 1
  %2 = sgt %1, %0
  %3 = mul %0, -2
  %4 = add %3, %2
  %5 = eq %4, 0
  %6 = sub %0, %5
  %7 = mul %6, 3
  %8 = eq %7, -1
  call @putint(%8)
  %9 = sgt %0, 0
  br %9, bb1, bb2
bb1:
  %10 = sgt %6, 0
  call @putint(%10)
  ret 1
bb2:
  ret 2
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sge %0, 5
  %2 = call @f(%1)
  call @putint(%2)
  ret 0
}
"#;
        for input in ["4", "5"] {
            let out = same_behaviour(src, &["ipvrp"], input);
            assert!(out.contains("call @putint(0)"), "{out}");
            assert!(out.contains("call @putint(1)"), "{out}");
            assert!(!out.contains("mul"), "{out}");
        }
    }

    /// A recursion doubling its argument: `main` passes 1, the recursive call
    /// anything up to the wrap. Taking only `main`'s call would make `x > 100`
    /// false and the recursion endless.
    #[test]
    fn a_recursive_call_counts_with_what_it_passes() {
        let src = r#"
declare @putint(i32) -> void

func @r(i32) -> i32 {
bb0(%0: i32):
  %1 = sgt %0, 100
  br %1, bb1, bb2
bb1:
  %2 = add %0, 1
  %3 = sgt %2, %0
  ret %3
bb2:
  %4 = mul %0, 2
  %5 = call @r(%4)
  ret %5
}

func @main() -> i32 {
bb0:
  %0 = call @r(1)
  call @putint(%0)
  ret 0
}
"#;
        let out = same_behaviour(src, &["ipvrp"], "");
        assert!(out.contains("%1 = sgt %0, 100"), "{out}");
        assert!(out.contains("%3 = sgt %2, %0"), "{out}");
    }

    /// A function nobody calls has no call to take ranges from: left alone
    /// (not simplified as if its parameters took no value at all).
    #[test]
    fn a_function_without_calls_is_left_alone() {
        let src = r#"
declare @putint(i32) -> void

func @dead(i32) -> i32 {
bb0(%0: i32):
  %1 = add %0, 1
  %2 = sgt %1, %0
  ret %2
}

func @main() -> i32 {
bb0:
  call @putint(3)
  ret 0
}
"#;
        let out = same_behaviour(src, &["ipvrp"], "");
        assert!(out.contains("%2 = sgt %1, %0"), "{out}");
    }
}
