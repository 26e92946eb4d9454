//! Sparse conditional constant propagation (Wegman and Zadeck, "Constant Propagation
//! with Conditional Branches", TOPLAS 1991), on block parameters instead of phis.
//!
//! Every SSA value has a lattice value: unknown (not yet seen to have any value), one
//! constant, or overdefined; every CFG edge is executable or not. Starting from the
//! entry block (whose parameters are overdefined), two worklists are drained: newly
//! executable blocks, whose instructions are evaluated, and values whose lattice value
//! dropped, whose users in executable blocks are re-evaluated. A block parameter is the
//! meet of the arguments on its *executable* incoming edges only, so a value merging a
//! constant with something from a branch never taken stays constant. A `br` on a
//! constant makes only one edge executable; on an overdefined condition, both.
//!
//! Addresses are in the lattice too: a global is a known address, and a `gep` of a
//! known address by a constant index is one. A load of a known address in a global
//! that nothing in the module writes ([`WrittenGlobals`]) is the global's initial
//! value there, and a load anywhere in such a global whose elements all start equal
//! is that value (LLVM's SCCP folds loads of constant globals the same way, through
//! `ConstantFoldLoadFromConstPtr`): a chain of lookups in a constant table, each
//! indexing by the last, folds in one run, where `constglobals` takes one step a run.
//!
//! Folding uses [`crate::fold`], the target's exact arithmetic (no folding of division
//! by zero). Afterwards constant values are replaced, branches with one executable edge
//! become jumps, never-executed blocks are removed with the arguments their branches
//! passed, and parameters that became constants are removed.

use crate::analysis::{AnalysisManager, FunctionAnalyses, Preserved, WrittenGlobals};
use crate::cfg_edit::remove_unreachable_blocks;
use crate::fold::{fold_binary, fold_cmp, fold_unary, Const};
use crate::passes::interprocedural::constglobals::{initial_word, uniform_word};
use crate::pipeline::Pass;
use ir::{
    Block, Function, GlobalData, GlobalId, Inst, InstKind, PrimaryMap, SecondaryMap, Type, Value,
    ValueDef,
};

/// The SCCP pass. A module pass: which globals are read-only depends on every
/// function.
pub struct Sccp;

impl Pass for Sccp {
    fn name(&self) -> &'static str {
        "sccp"
    }
    fn description(&self) -> &'static str {
        "sparse conditional constant propagation (Wegman-Zadeck)"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut ir::Module, am: &mut AnalysisManager) -> bool {
        let written = WrittenGlobals::compute(m, &am.purity(m));
        let tables = ReadOnly {
            globals: &m.globals,
            written: &written,
        };
        let mut changed = false;
        for (id, f) in m.funcs.iter_mut() {
            if !f.is_declaration() {
                changed |= am.on_function(id, f, |f, fa| run_in(f, fa, Some(&tables)));
            }
        }
        changed
    }
}

/// The globals nothing in the module writes, whose loads read their initial
/// values.
struct ReadOnly<'m> {
    globals: &'m PrimaryMap<GlobalId, GlobalData>,
    written: &'m WrittenGlobals,
}

impl ReadOnly<'_> {
    /// What a load of `ty` at byte `offset` of `g` reads, when `g` is read-only.
    fn load(&self, g: GlobalId, offset: i64, ty: Type) -> Option<Const> {
        if self.written.is_written(g) {
            return None;
        }
        word_const(initial_word(&self.globals[g], ty, offset)?, ty)
    }

    /// What a load of `ty` anywhere in `g` reads, when `g` is read-only and its
    /// elements all start equal.
    fn load_anywhere(&self, g: GlobalId, ty: Type) -> Option<Const> {
        if self.written.is_written(g) {
            return None;
        }
        word_const(uniform_word(&self.globals[g], ty)?, ty)
    }
}

fn word_const(word: u32, ty: Type) -> Option<Const> {
    match ty {
        Type::I32 => Some(Const::I(word as i32)),
        Type::F32 => Some(Const::F(word)),
        _ => None,
    }
}

/// The lattice: `Unknown` above every constant (a number, or the address of a
/// byte of a global) above `Over`(defined).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
enum Lat {
    #[default]
    Unknown,
    Const(Const),
    Addr(GlobalId, i64),
    Over,
}

fn meet(a: Lat, b: Lat) -> Lat {
    match (a, b) {
        (Lat::Unknown, x) | (x, Lat::Unknown) => x,
        (Lat::Const(x), Lat::Const(y)) if x == y => a,
        (Lat::Addr(g, x), Lat::Addr(h, y)) if g == h && x == y => a,
        _ => Lat::Over,
    }
}

struct Solver<'f> {
    f: &'f Function,
    tables: Option<&'f ReadOnly<'f>>,
    lat: SecondaryMap<Value, Lat>,
    block_exec: SecondaryMap<Block, bool>,
    /// Executable flags of the (up to two) outgoing edges of each block.
    edge_exec: SecondaryMap<Block, [bool; 2]>,
    block_work: Vec<Block>,
    value_work: Vec<Value>,
}

impl Solver<'_> {
    fn get(&self, v: Value) -> Lat {
        match self.f.value_def(v) {
            ValueDef::IConst(c) => Lat::Const(Const::I(c)),
            ValueDef::FConst(b) => Lat::Const(Const::F(b)),
            ValueDef::Global(g) => Lat::Addr(g, 0),
            _ => self.lat[v],
        }
    }

    /// Lowers `v` to `meet(old, new)`; queues its users if that changed it.
    fn lower(&mut self, v: Value, new: Lat) {
        let old = self.lat[v];
        let m = meet(old, new);
        if m != old {
            self.lat[v] = m;
            self.value_work.push(v);
        }
    }

    fn solve(&mut self) {
        let entry = self.f.entry_block();
        for &p in self.f.block_params(entry) {
            self.lat[p] = Lat::Over;
        }
        self.block_exec[entry] = true;
        self.block_work.push(entry);
        loop {
            if let Some(b) = self.block_work.pop() {
                let insts: Vec<Inst> = self.f.layout.block_insts(b).collect();
                for i in insts {
                    self.visit(i);
                }
            } else if let Some(v) = self.value_work.pop() {
                for &u in self.f.users(v) {
                    let in_exec = self
                        .f
                        .layout
                        .inst_block(u)
                        .is_some_and(|b| self.block_exec[b]);
                    if in_exec {
                        self.visit(u);
                    }
                }
            } else {
                break;
            }
        }
    }

    fn visit(&mut self, i: Inst) {
        let f = self.f;
        let result = f.inst_result(i);
        let fold = |r: Option<Const>, args: &[Lat]| -> Lat {
            if args.contains(&Lat::Over) {
                Lat::Over
            } else if args.contains(&Lat::Unknown) {
                Lat::Unknown
            } else {
                r.map_or(Lat::Over, Lat::Const)
            }
        };
        let consts = |a: Lat, b: Lat| match (a, b) {
            (Lat::Const(x), Lat::Const(y)) => Some((x, y)),
            _ => None,
        };
        match f.kind(i) {
            InstKind::Binary { op, args } => {
                let (a, b) = (self.get(args[0]), self.get(args[1]));
                let r = consts(a, b).and_then(|(x, y)| fold_binary(*op, x, y));
                self.lower(result.expect("binary result"), fold(r, &[a, b]));
            }
            InstKind::Cmp { op, args } => {
                let (a, b) = (self.get(args[0]), self.get(args[1]));
                let r = consts(a, b).and_then(|(x, y)| fold_cmp(*op, x, y));
                self.lower(result.expect("cmp result"), fold(r, &[a, b]));
            }
            InstKind::Unary { op, arg } => {
                let a = self.get(*arg);
                let r = match a {
                    Lat::Const(x) => fold_unary(*op, x),
                    _ => None,
                };
                self.lower(result.expect("unary result"), fold(r, &[a]));
            }
            InstKind::Gep {
                base,
                index,
                stride,
            } => {
                let at = match (self.get(*base), self.get(*index)) {
                    (Lat::Over, _) | (_, Lat::Over) => Lat::Over,
                    (Lat::Unknown, _) | (_, Lat::Unknown) => Lat::Unknown,
                    (Lat::Addr(g, off), Lat::Const(Const::I(k))) => {
                        Lat::Addr(g, off + i64::from(k) * i64::from(*stride))
                    }
                    _ => Lat::Over,
                };
                self.lower(result.expect("gep result"), at);
            }
            InstKind::Load { ty, ptr } => {
                let r = result.expect("load result");
                let Some(tables) = self.tables else {
                    self.lower(r, Lat::Over);
                    return;
                };
                // A uniform read-only table answers whatever the index.
                let root = ir::analysis::walk_geps(f, *ptr, |_, _| {});
                if let ValueDef::Global(g) = f.value_def(root) {
                    if let Some(c) = tables.load_anywhere(g, *ty) {
                        self.lower(r, Lat::Const(c));
                        return;
                    }
                }
                let v = match self.get(*ptr) {
                    Lat::Unknown => Lat::Unknown,
                    Lat::Addr(g, off) => tables.load(g, off, *ty).map_or(Lat::Over, Lat::Const),
                    _ => Lat::Over,
                };
                self.lower(r, v);
            }
            InstKind::Jump { .. } => self.mark_edge(i, 0),
            InstKind::Br { cond, .. } => match self.get(*cond) {
                Lat::Unknown => {}
                Lat::Const(Const::I(c)) => self.mark_edge(i, if c != 0 { 0 } else { 1 }),
                _ => {
                    self.mark_edge(i, 0);
                    self.mark_edge(i, 1);
                }
            },
            _ => {
                if let Some(r) = result {
                    self.lower(r, Lat::Over);
                }
            }
        }
    }

    /// Makes edge `which` of terminator `t` executable (if it is not yet) and flows its
    /// arguments into the target's parameters (again, when they may have changed).
    fn mark_edge(&mut self, t: Inst, which: usize) {
        let f = self.f;
        let Some(b) = f.layout.inst_block(t) else {
            return;
        };
        self.edge_exec[b][which] = true;
        let target = f.kind(t).targets()[which];
        for (&p, &a) in f.block_params(target.block).iter().zip(&target.args) {
            let v = self.get(a);
            self.lower(p, v);
        }
        if !self.block_exec[target.block] {
            self.block_exec[target.block] = true;
            self.block_work.push(target.block);
        }
    }
}

/// Runs SCCP on `f` (loads are not folded: which globals are read-only is a
/// fact of the module).
pub fn run(f: &mut Function) -> bool {
    run_in(f, &mut FunctionAnalyses::default(), None)
}

/// [`run`], with the module's read-only globals when known, leaving in `fa`
/// the CFG of the result (taken from it when no branch was folded and no block
/// removed).
fn run_in(f: &mut Function, fa: &mut FunctionAnalyses, tables: Option<&ReadOnly>) -> bool {
    let (lat, block_exec, edge_exec) = {
        let mut s = Solver {
            f,
            tables,
            lat: f.value_map(),
            block_exec: f.block_map(),
            edge_exec: f.block_map(),
            block_work: Vec::new(),
            value_work: Vec::new(),
        };
        s.solve();
        (s.lat, s.block_exec, s.edge_exec)
    };
    let mut changed = false;
    let blocks: Vec<Block> = f.layout.blocks().filter(|&b| block_exec[b]).collect();

    // Replace constant values; their instructions (pure arithmetic) go.
    let mut const_params: Vec<Value> = Vec::new();
    for &b in &blocks {
        for j in 0..f.block_params(b).len() {
            let p = f.block_params(b)[j];
            if let Lat::Const(c) = lat[p] {
                let v = c.value(f);
                f.replace_all_uses(p, v);
                const_params.push(p);
                changed = true;
            }
        }
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for i in insts {
            let Some(r) = f.inst_result(i) else { continue };
            if let Lat::Const(c) = lat[r] {
                let v = c.value(f);
                f.replace_all_uses(r, v);
                if matches!(
                    f.kind(i),
                    InstKind::Binary { .. }
                        | InstKind::Cmp { .. }
                        | InstKind::Unary { .. }
                        | InstKind::Load { .. }
                ) {
                    f.remove_inst(i);
                }
                changed = true;
            }
        }
    }

    // Branches with one executable edge become jumps.
    let mut edges_changed = false;
    for &b in &blocks {
        let Some(t) = f.terminator(b) else { continue };
        if let InstKind::Br { .. } = f.kind(t) {
            let taken = match edge_exec[b] {
                [true, false] => 0,
                [false, true] => 1,
                _ => continue,
            };
            let dest = f.kind(t).targets()[taken].clone();
            f.replace_kind(
                t,
                InstKind::Jump {
                    dest: Box::new(dest),
                },
            );
            edges_changed = true;
        }
    }
    edges_changed |= remove_unreachable_blocks(f);
    changed |= edges_changed;
    if edges_changed {
        fa.forget();
    }

    // Parameters replaced by constants are unused now.
    let cfg = fa.cfg(f);
    for p in const_params {
        if let ValueDef::Param(b, j) = f.value_def(p) {
            if f.layout.is_block_inserted(b) && f.block_params(b).get(j as usize) == Some(&p) {
                let preds = cfg.unique_preds(b);
                f.remove_block_param(b, j as usize, &preds);
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, run, same_behaviour};

    #[test]
    fn division_by_zero_is_not_folded() {
        let src = r#"
func @f() -> i32 {
bb0:
  %0 = sdiv 7, 0
  %1 = srem 7, 0
  %2 = add %0, %1
  ret %2
}
"#;
        check(&["sccp"], src, src);
    }

    #[test]
    fn floats_fold_in_single_precision() {
        check(
            &["sccp"],
            r#"
func @f() -> f32 {
bb0:
  %0 = fadd 16777216.0, 1.0
  %1 = fdiv 0.0, 0.0
  %2 = fneg %1
  ret %0
}
"#,
            r#"
func @f() -> f32 {
bb0:
  ret 16777216.0
}
"#,
        );
        check(
            &["sccp"],
            r#"
func @f() -> i32 {
bb0:
  %0 = fdiv 0.0, 0.0
  %1 = feq %0, %0
  %2 = fne %0, %0
  %3 = fptosi %0
  %4 = add %1, %2
  %5 = sub %3, %4
  ret %5
}
"#,
            // 0x7fffffff - 1
            r#"
func @f() -> i32 {
bb0:
  ret 2147483646
}
"#,
        );
    }

    #[test]
    fn overdefined_values_are_left_alone() {
        let src = r#"
func @f(i32) -> i32 {
bb0(%0: i32):
  br %0, bb1, bb2(1)
bb1:
  jump bb2(2)
bb2(%1: i32):
  %2 = mul %1, 0
  ret %2
}
"#;
        check(&["sccp"], src, src);
    }

    #[test]
    fn behaviour_is_preserved_on_a_program() {
        same_behaviour(
            r#"
declare @putint(i32) -> void
declare @putch(i32) -> void
declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, 10, 1)
bb1(%1: i32, %2: i32, %3: i32):
  %4 = slt %1, %0
  br %4, bb2, bb5
bb2:
  %5 = eq %3, 1
  br %5, bb3, bb4(%2)
bb3:
  %6 = mul %2, 2
  %7 = sdiv %6, 2
  jump bb4(%7)
bb4(%8: i32):
  call @putint(%8)
  call @putch(10)
  %9 = add %1, 1
  jump bb1(%9, %8, %3)
bb5:
  ret %2
}
"#,
            &["sccp"],
            "4",
        );
    }

    /// A lookup chain in a constant table: each load's index is computed from
    /// the last one's value.
    const CHAIN: &str = r#"
global @t: [f32; 5] = [123456.78, 457.98795, -3.125, 1e-5, 1.747922]
global @z: [i32; 8] = zeroinit
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = gep @t, 2, 4
  %1 = load f32, %0
  %2 = fptosi %1
  %3 = srem %2, 5
  %4 = add %3, 5
  %5 = srem %4, 5
  %6 = gep @t, %5, 4
  %7 = load f32, %6
  %8 = fptosi %7
  %9 = add %8, 4
  %10 = gep @t, %9, 4
  %11 = load f32, %10
  %12 = fptosi %11
  %13 = call @getint()
  %14 = gep @z, %13, 4
  %15 = load i32, %14
  %16 = add %12, %15
  call @putint(%16)
  ret 0
}
"#;

    #[test]
    fn a_chain_of_lookups_in_a_read_only_table_folds_in_one_run() {
        let out = same_behaviour(CHAIN, &["sccp"], "3");
        // t[2] = -3.125; (-3 % 5 + 5) % 5 = 2; t[2] again; -3 + 4 = 1; t[1] = 457.98795;
        // and a zero table reads 0 at any index.
        assert!(!out.contains("load"), "{out}");
        assert!(out.contains("call @putint(457)"), "{out}");
    }

    #[test]
    fn tables_that_may_change_or_unknown_places_are_not_folded() {
        // A store to the table anywhere in the module: its loads stay.
        let written = CHAIN.replace("  ret 0\n", "  store 1.0, %0\n  ret 0\n");
        let out = same_behaviour(&written, &["sccp"], "3");
        assert_eq!(out.matches("load f32").count(), 3, "{out}");
        // A table whose elements differ, at an index only known at run time.
        let unknown = CHAIN.replace(
            "%10 = gep @t, %9, 4",
            "%17 = call @getint()\n  %18 = and %17, 3\n  %10 = gep @t, %18, 4",
        );
        let out = same_behaviour(&unknown, &["sccp"], "3 2");
        assert_eq!(out.matches("load f32").count(), 1, "{out}");
        // A zero table some function writes.
        let zero_written = format!(
            "{CHAIN}\nfunc @w(i32) {{\nbb0(%0: i32):\n  %1 = gep @z, %0, 4\n  store 1, %1\n  ret\n}}\n"
        );
        let out = run(&zero_written, &["sccp"]);
        assert_eq!(out.matches("load i32").count(), 1, "{out}");
        // Out of the initialiser's bytes (a load past the end is left as it is).
        let past = CHAIN.replace("%0 = gep @t, 2, 4", "%0 = gep @t, 7, 4");
        let out = run(&past, &["sccp"]);
        assert_eq!(out.matches("load f32").count(), 3, "{out}");
    }
}
