//! Interprocedural constant propagation over all call sites: a parameter that every
//! call passes the same constant (or the same global's address) becomes that
//! constant in its function, and a function whose every `return` gives the same
//! constant has that constant substituted for its calls' results. A `return` of a
//! call's result gives what that callee returns, solved optimistically over the call
//! graph: `f(n) { if (n <= 0) return 7; ...; return f(n - 1); }` returns 7 whenever
//! it returns, so its calls (its own too) give 7, and the `dce` that follows
//! deletes the calls of a function without side effects.
//!
//! This is the argument and return-value half of LLVM's `IPSCCP` (Wegman and
//! Zadeck's lattice over the call graph, with the call sites' arguments met at each
//! parameter and the returns met at each call), and GCC's `ipa-cp` "for all known
//! contexts" (no cloning). SysY has no function pointers and one translation unit,
//! so every call site is known; `main` has no callers and keeps its parameters. A
//! function's own recursive calls passing a parameter through unchanged do not
//! lower it. The values propagate one call-graph level per run: the `sccp` that
//! follows folds the callee, and the next run sees what that exposed. The
//! parameters left unread are then removed by [`super::deadargs`].

use crate::pipeline::Pass;
use ir::{FuncId, Function, GlobalId, InstKind, Module, Value, ValueDef};

/// The interprocedural constant propagation pass.
pub struct IpConst;

impl Pass for IpConst {
    fn name(&self) -> &'static str {
        "ipconst"
    }
    fn description(&self) -> &'static str {
        "propagate arguments that every call passes the same and constant return values"
    }
    fn run(&self, m: &mut Module) -> bool {
        run(m) > 0
    }
}

/// A value the same in every function: a constant or a global's address.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Known {
    I(i32),
    F(u32),
    Global(GlobalId),
}

/// The lattice of one parameter or return: no value seen yet, one known value, or
/// several (or an unknown one).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Lat {
    None,
    One(Known),
    Many,
}

impl Lat {
    fn meet(self, k: Option<Known>) -> Lat {
        match (self, k) {
            (_, None) | (Lat::Many, _) => Lat::Many,
            (Lat::None, Some(k)) => Lat::One(k),
            (Lat::One(a), Some(b)) if a == b => self,
            _ => Lat::Many,
        }
    }
}

/// Where the value of one `ret` comes from.
#[derive(Clone, Copy)]
enum RetSource {
    /// A constant, a global's address, or (`None`) anything else.
    Value(Option<Known>),
    /// The result of a call of this function.
    Call(FuncId),
}

/// The sources of every `ret` of `f` (none for a declaration).
fn ret_sources(f: &Function) -> Vec<RetSource> {
    if f.is_declaration() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for b in f.layout.blocks() {
        let Some(t) = f.terminator(b) else { continue };
        let InstKind::Ret { value } = *f.kind(t) else {
            continue;
        };
        let callee = value.and_then(|v| match f.value_def(v) {
            ValueDef::Inst(i) => match *f.kind(i) {
                InstKind::Call { callee, .. } => Some(callee),
                _ => None,
            },
            _ => None,
        });
        out.push(match callee {
            Some(c) => RetSource::Call(c),
            None => RetSource::Value(value.and_then(|v| known(f, v))),
        });
    }
    out
}

fn known(f: &Function, v: Value) -> Option<Known> {
    match f.value_def(v) {
        ValueDef::IConst(c) => Some(Known::I(c)),
        ValueDef::FConst(b) => Some(Known::F(b)),
        ValueDef::Global(g) => Some(Known::Global(g)),
        _ => None,
    }
}

fn materialise(f: &mut Function, k: Known) -> Value {
    match k {
        Known::I(c) => f.iconst(c),
        Known::F(b) => f.fconst(f32::from_bits(b)),
        Known::Global(g) => f.global_addr(g),
    }
}

/// Propagates the known arguments and return values of `m`; returns how many
/// parameters and call results were replaced.
pub fn run(m: &mut Module) -> usize {
    let ids: Vec<FuncId> = m.funcs.keys().collect();
    let index = |id: FuncId| ir::EntityRef::index(id);
    // The arguments every call passes, per callee and position.
    let mut args: Vec<Vec<Lat>> = ids
        .iter()
        .map(|&id| vec![Lat::None; m.funcs[id].sig.params.len()])
        .collect();
    for &caller in &ids {
        let f = &m.funcs[caller];
        if f.is_declaration() {
            continue;
        }
        let own = f.block_params(f.entry_block());
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                let InstKind::Call { callee, args: a } = f.kind(i) else {
                    continue;
                };
                let lats = &mut args[index(*callee)];
                for (k, &v) in a.iter().enumerate().take(lats.len()) {
                    // A recursion passing the parameter through does not lower it.
                    if *callee == caller && own.get(k) == Some(&v) {
                        continue;
                    }
                    lats[k] = lats[k].meet(known(f, v));
                }
            }
        }
    }
    let mut changed = 0;
    for &id in &ids {
        let f = &mut m.funcs[id];
        if f.is_declaration() || f.name == "main" {
            continue;
        }
        let params = f.block_params(f.entry_block()).to_vec();
        for (k, &p) in params.iter().enumerate() {
            if let Lat::One(c) = args[index(id)][k] {
                if f.has_users(p) {
                    let v = materialise(f, c);
                    f.replace_all_uses(p, v);
                    changed += 1;
                }
            }
        }
    }
    // The value every `ret` of each function gives. A `ret` of a call's result
    // gives whatever that callee returns, so the lattices are solved together,
    // optimistically (a recursion `return f(n - 1)` beside `return 7` returns 7):
    // IPSCCP's return-value tracking.
    // What each `ret` of each function returns: a value, or a callee's result.
    let rets: Vec<Vec<RetSource>> = ids.iter().map(|&id| ret_sources(&m.funcs[id])).collect();
    // The functions returning each function's result, to revisit when it moves.
    let mut returners: Vec<Vec<FuncId>> = vec![Vec::new(); ids.len()];
    for (&id, sources) in ids.iter().zip(&rets) {
        for s in sources {
            if let RetSource::Call(c) = *s {
                returners[index(c)].push(id);
            }
        }
    }
    let mut returns: Vec<Lat> = ids
        .iter()
        .map(|&id| match m.funcs[id].is_declaration() {
            true => Lat::Many,
            false => Lat::None,
        })
        .collect();
    // A work list over the call graph: each function's lattice only moves down
    // (None, One, Many), so each is revisited at most twice per returner.
    let mut work: Vec<FuncId> = ids
        .iter()
        .copied()
        .filter(|&id| !m.funcs[id].is_declaration())
        .collect();
    while let Some(id) = work.pop() {
        let mut lat = Lat::None;
        for s in &rets[index(id)] {
            lat = match *s {
                RetSource::Call(c) => match returns[index(c)] {
                    Lat::None => lat,
                    Lat::One(k) => lat.meet(Some(k)),
                    Lat::Many => Lat::Many,
                },
                RetSource::Value(k) => lat.meet(k),
            };
        }
        if lat != returns[index(id)] {
            returns[index(id)] = lat;
            work.extend(returners[index(id)].iter().copied());
        }
    }
    for &caller in &ids {
        let f = &mut m.funcs[caller];
        let calls: Vec<_> = f
            .layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b))
            .filter_map(|i| match *f.kind(i) {
                InstKind::Call { callee, .. } => match returns[index(callee)] {
                    Lat::One(k) => Some((i, k)),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        for (i, k) in calls {
            let Some(r) = f.inst_result(i) else {
                continue;
            };
            if f.has_users(r) {
                let v = materialise(f, k);
                f.replace_all_uses(r, v);
                changed += 1;
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    const SRC: &str = r#"
global @t: [i32; 4] = [1, 2, 3, 4]
global @u: [i32; 4] = [5, 6, 7, 8]

declare @getint() -> i32
declare @putint(i32) -> void

func @bits(i32, i32, ptr) -> i32 {
bb0(%0: i32, %1: i32, %2: ptr):
  %3 = gep %2, %1, 4
  %4 = load i32, %3
  %5 = mul %0, %4
  ret %5
}

func @count(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = slt %0, 1
  br %2, bb1, bb2
bb1:
  ret %1
bb2:
  %3 = add %0, -1
  %4 = call @count(%3, %1)
  ret %4
}

func @mixed(i32, ptr) -> i32 {
bb0(%0: i32, %1: ptr):
  %2 = load i32, %1
  %3 = add %0, %2
  ret %3
}

func @ack(i32) -> i32 {
bb0(%0: i32):
  call @putint(%0)
  ret 7
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @bits(%0, 2, @t)
  call @putint(%1)
  %2 = add %0, 1
  %3 = call @bits(%2, 2, @t)
  call @putint(%3)
  %4 = call @count(%0, 9)
  call @putint(%4)
  %5 = call @mixed(3, @t)
  %6 = call @mixed(4, @u)
  %7 = add %5, %6
  call @putint(%7)
  %8 = call @ack(%0)
  call @putint(%8)
  ret 0
}
"#;

    #[test]
    fn arguments_every_call_passes_become_constants() {
        let out = same_behaviour(SRC, &["ipconst"], "5");
        assert!(out.contains("gep @t, 2, 4"), "{out}");
        // Passed through by the recursion: still the one constant.
        assert!(out.contains("bb1:\n  ret 9"), "{out}");
        // A constant result replaces the call's uses; the call stays.
        assert!(out.contains("call @putint(7)"), "{out}");
        assert!(out.contains("call @ack("), "{out}");
    }

    #[test]
    fn arguments_that_differ_stay_parameters() {
        let out = same_behaviour(SRC, &["ipconst"], "5");
        // `bits`' first argument varies; `mixed` gets 3 and 4, @t and @u.
        assert!(out.contains("mul %0, %4"), "{out}");
        assert!(
            out.contains("%2 = load i32, %1\n  %3 = add %0, %2"),
            "{out}"
        );
        // `count`'s counter changes at each recursive call.
        assert!(out.contains("slt %0, 1"), "{out}");
    }

    const RECURSIVE: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @down(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = slt %0, 1
  br %2, bb1, bb2
bb1:
  ret 7
bb2:
  %3 = add %0, -1
  %4 = mul %1, 3
  %5 = call @down(%3, %4)
  ret %5
}

func @even(i32) -> i32 {
bb0(%0: i32):
  %1 = eq %0, 0
  br %1, bb1, bb2
bb1:
  ret 1
bb2:
  %2 = add %0, -1
  %3 = call @odd(%2)
  ret %3
}

func @odd(i32) -> i32 {
bb0(%0: i32):
  %1 = eq %0, 0
  br %1, bb1, bb2
bb1:
  ret 1
bb2:
  %2 = add %0, -1
  %3 = call @even(%2)
  ret %3
}

func @depth(i32) -> i32 {
bb0(%0: i32):
  %1 = slt %0, 1
  br %1, bb1, bb2
bb1:
  ret 0
bb2:
  %2 = add %0, -1
  %3 = call @depth(%2)
  %4 = add %3, 1
  ret %4
}

func @parity(i32) -> i32 {
bb0(%0: i32):
  %1 = eq %0, 0
  br %1, bb1, bb2
bb1:
  ret 1
bb2:
  %2 = eq %0, 1
  br %2, bb3, bb4
bb3:
  ret 0
bb4:
  %3 = add %0, -2
  %4 = call @parity(%3)
  ret %4
}

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = call @down(%0, %0)
  call @putint(%1)
  %2 = call @even(%0)
  call @putint(%2)
  %3 = call @depth(%0)
  call @putint(%3)
  %4 = call @parity(%0)
  call @putint(%4)
  ret 0
}
"#;

    #[test]
    fn a_recursion_returning_one_constant_gives_it() {
        let out = same_behaviour(RECURSIVE, &["ipconst"], "6");
        // `down` returns 7 or what it returns: 7, its own call's result too.
        assert!(out.contains("%5 = call @down(%3, %4)\n  ret 7"), "{out}");
        assert!(out.contains("call @putint(7)"), "{out}");
        // `even` and `odd` return 1 or each other's result.
        assert!(out.contains("%3 = call @odd(%2)\n  ret 1"), "{out}");
        assert!(out.contains("%3 = call @even(%2)\n  ret 1"), "{out}");
        assert!(out.contains("call @putint(1)"), "{out}");
    }

    #[test]
    fn a_recursion_changing_its_result_keeps_it() {
        let out = same_behaviour(RECURSIVE, &["ipconst"], "6");
        // `depth` adds one to its call's result; `parity` returns 0 or 1.
        assert!(out.contains("%4 = add %3, 1\n  ret %4"), "{out}");
        assert!(out.contains("%4 = call @parity(%3)\n  ret %4"), "{out}");
        assert!(out.contains("call @putint(%3)"), "{out}");
        assert!(out.contains("call @putint(%4)"), "{out}");
        let out = same_behaviour(RECURSIVE, &["ipconst"], "7");
        assert!(out.contains("call @putint(%4)"), "{out}");
    }

    #[test]
    fn a_pure_recursion_returning_a_constant_goes_away() {
        let out = same_behaviour(RECURSIVE, &["ipconst", "dce"], "5");
        assert!(!out.contains("call @down("), "{out}");
        assert!(!out.contains("call @even("), "{out}");
        assert!(out.contains("call @depth("), "{out}");
    }
}
