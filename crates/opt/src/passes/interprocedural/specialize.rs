//! Function specialisation: a call that passes a constant for a parameter that
//! decides its callee's work (a loop bound, a divisor, an argument the callee
//! passes on to such a parameter) is redirected to a copy of
//! the callee with that constant substituted and folded. A recursion that passes
//! the parameter on changed by a constant (a depth counting down) gets one copy per
//! level, so each level's tests and loop bounds are constants.
//!
//! This is GCC's `ipa-cp` with cloning (`-fipa-cp-clone`, Jambor's "The new
//! intraprocedural constant propagation", GCC Summit 2010) and LLVM's
//! `FunctionSpecialization` (including its specialisation of recursive functions
//! on the constants their own calls pass). SysY has no function pointers, so every
//! call site is known. A copy is named after its function with the positions and
//! values of the constants (`f.spec.1_3` for 3 as the second argument, `m` for a
//! minus sign: assembler symbols have no `-`); one set of constants gets one copy,
//! shared by every call passing it. After substitution the copy is folded (`sccp`, `simplifycfg`), which turns
//! the arguments of its own calls into constants, and its calls are specialised
//! in turn. Growth is bounded: functions of at most [`MAX_CALLEE_INSTS`]
//! instructions, at most [`MAX_COPIES`] copies of each, and at most
//! [`MAX_GROWTH`] instructions added to the module (or its size, when larger).
//! Parameters left unread in a copy are removed by [`super::deadargs`], and the
//! functions no longer called by [`super::globaldce`].

use crate::analysis::LoopForest;
use crate::pipeline::Pass;
use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::{BinOp, FuncId, Function, InstKind, Module, Value, ValueDef};
use std::collections::{HashMap, VecDeque};

/// Functions larger than this are not copied.
pub const MAX_CALLEE_INSTS: usize = 300;
/// Copies of one function at most.
pub const MAX_COPIES: usize = 12;
/// Instructions the copies may add to the module at least.
pub const MAX_GROWTH: usize = 4000;

/// The function specialisation pass.
pub struct Specialize;

impl Pass for Specialize {
    fn name(&self) -> &'static str {
        "specialize"
    }
    fn description(&self) -> &'static str {
        "copy functions for calls that pass constants deciding their work"
    }
    fn run(&self, m: &mut Module) -> bool {
        run(m) > 0
    }
}

/// A constant argument: its position and bit pattern (`i32`, or `f32` bits).
type Binding = (usize, ValueDef);

/// Specialises the calls of `m`; returns how many calls were redirected.
pub fn run(m: &mut Module) -> usize {
    let Some(main) = m.func_by_name("main") else {
        return 0;
    };
    let size: usize = m.funcs.values().map(Function::num_insts).sum();
    let mut budget = MAX_GROWTH.max(size);
    let mut deciding = Deciding {
        params: HashMap::new(),
    };
    let mut copies: HashMap<(FuncId, Vec<Binding>), FuncId> = HashMap::new();
    let mut made: HashMap<FuncId, usize> = HashMap::new();
    let mut work: VecDeque<FuncId> = m.funcs.keys().collect();
    let mut redirected = 0;
    while let Some(caller) = work.pop_front() {
        if m.funcs[caller].is_declaration() {
            continue;
        }
        let f = &m.funcs[caller];
        let calls: Vec<_> = f
            .layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b))
            .filter_map(|i| match f.kind(i) {
                InstKind::Call { callee, args } => Some((i, *callee, args.clone())),
                _ => None,
            })
            .collect();
        for (call, callee, args) in calls {
            let g = &m.funcs[callee];
            if callee == main || g.is_declaration() || g.sig.variadic || g.name.contains(".spec") {
                continue;
            }
            if g.num_insts() > MAX_CALLEE_INSTS {
                continue;
            }
            let decides = deciding.of(m, callee);
            let f = &m.funcs[caller];
            let bindings: Vec<Binding> = args
                .iter()
                .enumerate()
                .filter(|&(k, _)| decides.get(k).copied().unwrap_or(false))
                .filter_map(|(k, &a)| match f.value_def(a) {
                    d @ (ValueDef::IConst(_) | ValueDef::FConst(_)) => Some((k, d)),
                    _ => None,
                })
                .collect();
            if bindings.is_empty() {
                continue;
            }
            let key = (callee, bindings);
            let target = match copies.get(&key) {
                Some(&t) => t,
                None => {
                    let n = made.entry(callee).or_insert(0);
                    let cost = m.funcs[callee].num_insts();
                    if *n >= MAX_COPIES || cost > budget {
                        continue;
                    }
                    *n += 1;
                    budget -= cost;
                    let mut copy = specialised_copy(&m.funcs[callee], &key.1);
                    if m.func_by_name(&copy.name).is_some() {
                        copy.name = format!("{}.{}", copy.name, m.funcs.len());
                    }
                    let t = m.add_function(copy);
                    copies.insert(key, t);
                    work.push_back(t);
                    t
                }
            };
            m.funcs[caller].replace_kind(
                call,
                InstKind::Call {
                    callee: target,
                    args,
                },
            );
            redirected += 1;
        }
    }
    redirected
}

/// `g` with the constants of `bindings` for its parameters, folded.
fn specialised_copy(g: &Function, bindings: &[Binding]) -> Function {
    let mut c = g.clone();
    let mut suffix = String::new();
    let params = c.block_params(c.entry_block()).to_vec();
    for &(k, d) in bindings {
        let v = match d {
            ValueDef::IConst(x) => {
                // An assembler symbol has no `-`: -1 is `m1`.
                let sign = if x < 0 { "m" } else { "" };
                suffix.push_str(&format!(".{k}_{sign}{}", x.unsigned_abs()));
                c.iconst(x)
            }
            ValueDef::FConst(bits) => {
                suffix.push_str(&format!(".{k}_f{bits:x}"));
                c.fconst(f32::from_bits(bits))
            }
            _ => unreachable!("bindings are constants"),
        };
        c.replace_all_uses(params[k], v);
    }
    c.name = format!("{}.spec{suffix}", g.name);
    crate::passes::scalar::sccp::run(&mut c);
    crate::passes::scalar::simplifycfg::run(&mut c);
    c
}

/// Which parameters decide their function's work, per function (computed on
/// first use): a parameter that reaches, directly or through arithmetic with
/// constants, the comparison a loop's exit branch tests (a loop bound), the
/// divisor of a division or remainder, the amount of a shift, or an argument of a
/// call at a position that decides the callee's work. Other branches do not
/// count: a copy then saves a test per call and costs a call that loop-invariant
/// code motion could have moved out whole (a power by squaring, specialised on its
/// exponent, is a dozen levels of inlined calls in the loop that used it), or a
/// recursion that the back end handled better as one function (a backtracking
/// search specialised on its depth).
struct Deciding {
    params: HashMap<FuncId, Vec<bool>>,
}

impl Deciding {
    fn of(&mut self, m: &Module, id: FuncId) -> Vec<bool> {
        if let Some(d) = self.params.get(&id) {
            return d.clone();
        }
        // Recursion: a parameter decides nothing through its own function's calls
        // until shown otherwise.
        let g = &m.funcs[id];
        let n = g.sig.params.len();
        self.params.insert(id, vec![false; n]);
        if g.is_declaration() {
            return vec![false; n];
        }
        let cfg = ControlFlowGraph::compute(g);
        let dt = DominatorTree::compute(g, &cfg);
        let loops = LoopForest::compute(g, &cfg, &dt);
        let params = g.block_params(g.entry_block()).to_vec();
        let d: Vec<bool> = params
            .iter()
            .map(|&p| self.decides(m, g, &loops, p, 0))
            .collect();
        self.params.insert(id, d.clone());
        d
    }

    fn decides(
        &mut self,
        m: &Module,
        g: &Function,
        loops: &LoopForest,
        v: Value,
        depth: u32,
    ) -> bool {
        let users = g.users(v).to_vec();
        users.iter().any(|&u| match g.kind(u).clone() {
            InstKind::Cmp { .. } => g.inst_result(u).is_some_and(|r| {
                g.users(r)
                    .iter()
                    .any(|&b| is_branch_on(g, b, r) && leaves_loop(g, loops, b))
            }),
            InstKind::Binary { op, args: [a, b] } => {
                let divisor = matches!(
                    op,
                    BinOp::SDiv | BinOp::SRem | BinOp::Shl | BinOp::AShr | BinOp::LShr
                ) && b == v;
                let with_constant = g.as_iconst(a).is_some() || g.as_iconst(b).is_some();
                divisor
                    || (with_constant
                        && depth < MAX_DEPTH
                        && g.inst_result(u)
                            .is_some_and(|r| self.decides(m, g, loops, r, depth + 1)))
            }
            InstKind::Call { callee, args } => {
                let d = self.of(m, callee);
                args.iter()
                    .enumerate()
                    .any(|(k, &a)| a == v && d.get(k).copied().unwrap_or(false))
            }
            _ => false,
        })
    }
}

/// How many arithmetic steps a parameter is followed through.
const MAX_DEPTH: u32 = 3;

/// Whether the branch `b` can leave the innermost loop around it.
fn leaves_loop(g: &Function, loops: &LoopForest, b: ir::Inst) -> bool {
    let Some(block) = g.layout.inst_block(b) else {
        return false;
    };
    let Some(l) = loops.innermost(block) else {
        return false;
    };
    g.successors(block).iter().any(|&s| !loops.contains(l, s))
}

fn is_branch_on(g: &Function, b: ir::Inst, cond: Value) -> bool {
    matches!(g.kind(b), InstKind::Br { cond: c, .. } if *c == cond)
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    const SRC: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @digit(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  jump bb1(%0, 0)
bb1(%2: i32, %3: i32):
  %4 = slt %3, %1
  br %4, bb2, bb3
bb2:
  %5 = sdiv %2, 10
  %6 = add %3, 1
  jump bb1(%5, %6)
bb3:
  %7 = srem %2, 10
  ret %7
}

func @depth(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = eq %0, 0
  br %2, bb1, bb2
bb1:
  ret %1
bb2:
  %3 = add %0, -1
  %4 = call @digit(%1, %0)
  %5 = call @depth(%3, %4)
  %6 = add %5, %0
  ret %6
}

func @marks(i32) -> i32 {
bb0(%0: i32):
  jump bb1(0, 0)
bb1(%1: i32, %2: i32):
  %3 = slt %1, 10
  br %3, bb2, bb5
bb2:
  %4 = eq %1, %0
  br %4, bb3, bb4(%2)
bb3:
  %5 = add %2, 1
  jump bb4(%5)
bb4(%6: i32):
  %7 = add %1, 1
  jump bb1(%7, %6)
bb5:
  ret %2
}

func @branchy(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = eq %0, 0
  br %2, bb1, bb2
bb1:
  ret %1
bb2:
  %3 = sdiv %0, 2
  %4 = mul %1, 3
  %5 = call @branchy(%3, %4)
  %6 = add %5, %0
  ret %6
}

func @plain(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = add %0, %1
  ret %2
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @digit(%0, 2)
  call @putint(%1)
  %2 = call @digit(%0, 2)
  call @putint(%2)
  %3 = call @digit(%0, %0)
  call @putint(%3)
  %4 = call @depth(3, %0)
  call @putint(%4)
  %5 = call @plain(%0, 4)
  call @putint(%5)
  %6 = call @branchy(100, %0)
  call @putint(%6)
  %7 = call @marks(4)
  call @putint(%7)
  ret 0
}
"#;

    #[test]
    fn calls_with_deciding_constants_get_a_copy() {
        let out = same_behaviour(SRC, &["specialize"], "45678");
        // Named for the assembler: no `-` in a negative constant.
        let neg = same_behaviour(
            &SRC.replace("@digit(%0, 2)", "@digit(%0, -2)"),
            &["specialize"],
            "45678",
        );
        assert!(neg.contains("func @digit.spec.1_m2("), "{neg}");
        // One copy for both calls passing 2; the loop bound is the constant.
        assert!(out.contains("func @digit.spec.1_2(i32, i32)"), "{out}");
        assert_eq!(
            out.matches("call @digit.spec.1_2(%0, 2)").count(),
            2,
            "{out}"
        );
        assert!(out.contains("slt %3, 2"), "{out}");
        // A variable bound calls the original.
        assert!(out.contains("call @digit(%0, %0)"), "{out}");
    }

    #[test]
    fn a_recursion_counting_down_gets_a_copy_per_level() {
        // `depth`'s level is `digit`'s loop bound.
        let out = same_behaviour(SRC, &["specialize"], "45678");
        assert!(out.contains("call @digit.spec.1_3(%1, 3)"), "{out}");
        for level in 0..=3 {
            assert!(
                out.contains(&format!("func @depth.spec.0_{level}(")),
                "{out}"
            );
        }
        assert!(out.contains("call @depth.spec.0_2(2, "), "{out}");
        // The last level returns at once.
        assert!(!out.contains("func @depth.spec.0_m1("), "{out}");
    }

    #[test]
    fn constants_that_decide_nothing_keep_the_call() {
        let out = same_behaviour(SRC, &["specialize"], "45678");
        assert!(out.contains("call @plain(%0, 4)"), "{out}");
        assert!(!out.contains("@plain.spec"), "{out}");
        // Branches outside loops (a recursion halving its argument) decide too
        // little to pay for a copy per level.
        assert!(out.contains("call @branchy(100, %0)"), "{out}");
        assert!(!out.contains("@branchy.spec"), "{out}");
        // A test inside a loop that does not leave it is no loop bound.
        assert!(!out.contains("@marks.spec"), "{out}");
    }

    /// The same constant at two positions makes two copies with two names (found
    /// by difftest: both were named `f.spec.f3f800000`).
    #[test]
    fn one_constant_at_two_positions_makes_two_copies() {
        let src = r#"
declare @getfloat() -> f32
declare @putfloat(f32) -> void

func @clamp(f32, f32) -> f32 {
bb0(%0: f32, %1: f32):
  jump bb1(0.0)
bb1(%2: f32):
  %3 = flt %2, %0
  br %3, bb2, bb4
bb2:
  %4 = flt %2, %1
  br %4, bb3, bb4
bb3:
  %5 = fadd %2, 0.25
  jump bb1(%5)
bb4:
  ret %2
}

func @main() -> i32 {
bb0:
  %0 = call @getfloat()
  %1 = call @clamp(1.0, %0)
  call @putfloat(%1)
  %2 = call @clamp(%0, 1.0)
  call @putfloat(%2)
  ret 0
}
"#;
        let out = same_behaviour(src, &["specialize"], "0.5");
        assert!(out.contains("func @clamp.spec.0_f3f800000("), "{out}");
        assert!(out.contains("func @clamp.spec.1_f3f800000("), "{out}");
    }
}
