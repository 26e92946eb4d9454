//! Store sinking past early exits: the stores (and `memset` calls) that initialise
//! a local array move from the block that ends in a branch to the arm that reads
//! the array, when the other arm never reads it. A recursive function that zeroes
//! three bucket arrays on entry and then returns at once for an empty range does
//! not zero them on that path any more.
//!
//! This is partial dead code elimination restricted to stores (Knoop, Rüthing and
//! Steffen, "Partial Dead Code Elimination", PLDI 1994: an assignment dead on some
//! paths sinks to the paths where it is live), as GCC's `tree-ssa-sink` sinks
//! stores toward their uses. A store into an `alloc` whose address does not
//! escape is observed only by the function's own loads and calls that receive a
//! pointer into it; it moves from block `B`, ending in `br c, X, Y`, to the start
//! of `X` when
//!
//! - `X` has `B` as its only predecessor (the start of `X` is the edge `B -> X`),
//! - nothing in `B` after the store reads the array, and
//! - no block reachable from `Y` (which may include `B` and `X`) reads it: on every
//!   path through `Y` the stored value is never observed.
//!
//! All of the array's writes after its last read in `B` move together, in order,
//! with the address computations only they use. The moved writes are tried again
//! from `X`, so they pass a chain of early exits.

use crate::analysis::{AnalysisManager, Preserved};
use crate::passes::loops::loopidiom::{memset_call, memset_of};
use crate::pipeline::Pass;
use ir::analysis::ControlFlowGraph;
use ir::{Block, FuncId, Function, Inst, InstKind, Module, SecondaryMap, Value};
use rustc_hash::FxHashSet;

/// The pass.
pub struct StoreSink;

impl Pass for StoreSink {
    fn name(&self) -> &'static str {
        "storesink"
    }
    fn description(&self) -> &'static str {
        "sink the stores that initialise a local array past branches that leave without reading it"
    }
    /// Through the manager, so that it knows which functions changed.
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let memset = memset_of(m);
        am.each_function(m, |f, _| run(f, memset) > 0)
    }
    fn preserves(&self) -> Preserved {
        Preserved::CFG.with_other_functions()
    }
}

/// At most this many moves of one array's writes (each passes one branch).
const MAX_MOVES: usize = 16;

/// The accesses of one `alloc` whose address does not escape.
struct Array {
    /// Stores into it and `memset` calls on it, through addresses derived from it
    /// by `gep`s alone.
    writes: FxHashSet<Inst>,
    /// Loads from it and calls that receive a pointer into it; also stores through
    /// a block parameter it flows into, which may point elsewhere too (they stay
    /// where they are, and writes do not move past them).
    reads: Vec<Inst>,
    /// The `gep`s deriving pointers from it.
    geps: FxHashSet<Inst>,
}

/// The arrays of `f` whose addresses only feed `gep`s, loads, stores (as the
/// address), `memset`, calls and block parameters.
fn arrays(f: &Function, memset: Option<FuncId>) -> Vec<Array> {
    let mut out = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            if !matches!(f.kind(i), InstKind::Alloc { .. }) {
                continue;
            }
            let mut a = Array {
                writes: FxHashSet::default(),
                reads: Vec::new(),
                geps: FxHashSet::default(),
            };
            let mut escaped = false;
            // Pointers into the array, and whether a block parameter lies between
            // the array and each.
            let mut seen: FxHashSet<Value> = FxHashSet::default();
            let mut work = vec![(f.inst_result(i).expect("alloc has a result"), false)];
            while let Some((p, merged)) = work.pop() {
                for &u in f.users(p) {
                    match f.kind(u) {
                        InstKind::Load { .. } => a.reads.push(u),
                        InstKind::Store { value, .. } if *value == p => escaped = true,
                        InstKind::Store { .. } if merged => a.reads.push(u),
                        InstKind::Store { .. } => {
                            a.writes.insert(u);
                        }
                        InstKind::Gep { base, .. } if *base == p => {
                            let g = f.inst_result(u).expect("gep has a result");
                            if seen.insert(g) {
                                if !merged {
                                    a.geps.insert(u);
                                }
                                work.push((g, merged));
                            }
                        }
                        InstKind::Call { .. } => {
                            let fills = memset_call(f, memset, u)
                                .is_some_and(|(ptr, _, _)| ptr == p && !merged);
                            if fills {
                                a.writes.insert(u);
                            } else {
                                a.reads.push(u);
                            }
                        }
                        InstKind::Jump { .. } | InstKind::Br { .. } => {
                            for t in f.kind(u).targets() {
                                for (k, &arg) in t.args.iter().enumerate() {
                                    let q = f.block_params(t.block)[k];
                                    if arg == p && seen.insert(q) {
                                        work.push((q, true));
                                    }
                                }
                            }
                        }
                        _ => escaped = true,
                    }
                }
            }
            if !escaped && !a.writes.is_empty() {
                out.push(a);
            }
        }
    }
    out
}

/// Sinks the initialisation of every local array of `f` it can; returns how many
/// instructions moved.
pub fn run(f: &mut Function, memset: Option<FuncId>) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let arrays = arrays(f, memset);
    if arrays.is_empty() {
        return 0;
    }
    let cfg = ControlFlowGraph::compute(f);
    let mut moved = 0;
    for a in &arrays {
        let read_in: FxHashSet<Block> = a
            .reads
            .iter()
            .filter_map(|&r| f.layout.inst_block(r))
            .collect();
        // The block whose writes are tried: where the first write (in layout
        // order of blocks) is.
        let mut from = f
            .layout
            .blocks()
            .find(|&b| f.layout.block_insts(b).any(|i| a.writes.contains(&i)));
        for _ in 0..MAX_MOVES {
            let Some(b) = from else { break };
            let Some((to, insts)) = sinkable(f, &cfg, a, &read_in, b) else {
                break;
            };
            let first = f.layout.first_inst(to).expect("a block ends in a branch");
            for &i in &insts {
                f.layout.remove_inst(i);
                f.layout.insert_inst_before(i, first);
            }
            moved += insts.len();
            from = Some(to);
        }
    }
    moved
}

/// The successor of `b` that the writes of `a` at the end of `b` can move to, and
/// those writes with the geps only they use, in order.
fn sinkable(
    f: &Function,
    cfg: &ControlFlowGraph,
    a: &Array,
    read_in: &FxHashSet<Block>,
    b: Block,
) -> Option<(Block, Vec<Inst>)> {
    let (t, e) = f.branch_arms(b)?;
    if t == e {
        return None;
    }
    // The writes after the last read in `b`.
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    let last_read = insts.iter().rposition(|i| a.reads.contains(i));
    let after = &insts[last_read.map_or(0, |k| k + 1)..];
    let writes: Vec<Inst> = after
        .iter()
        .copied()
        .filter(|i| a.writes.contains(i))
        .collect();
    // (A `memset` whose result is used stays: the use would lose its definition.)
    let result_used = |i: Inst| f.inst_result(i).is_some_and(|r| !f.users(r).is_empty());
    if writes.is_empty() || writes.iter().any(|&w| result_used(w)) {
        return None;
    }
    let to = [(t, e), (e, t)].into_iter().find_map(|(to, other)| {
        (to != b && cfg.unique_preds(to)[..] == [b] && !reaches_read(cfg, other, read_in))
            .then_some(to)
    })?;
    // The writes and the geps of `b` feeding only moved instructions, in order
    // (a gep used by a moved gep moves too: visit users before their operands).
    let mut moving: FxHashSet<Inst> = writes.iter().copied().collect();
    for &i in after.iter().rev() {
        if a.geps.contains(&i) {
            let r = f.inst_result(i).expect("gep has a result");
            if f.users(r).iter().all(|u| moving.contains(u)) {
                moving.insert(i);
            }
        }
    }
    let ordered = after
        .iter()
        .copied()
        .filter(|i| moving.contains(i))
        .collect();
    Some((to, ordered))
}

/// Whether a block reachable from `start` (itself included) reads the array.
fn reaches_read(cfg: &ControlFlowGraph, start: Block, read_in: &FxHashSet<Block>) -> bool {
    let mut seen: SecondaryMap<Block, bool> = SecondaryMap::new();
    let mut work = vec![start];
    seen[start] = true;
    while let Some(b) = work.pop() {
        if read_in.contains(&b) {
            return true;
        }
        for &s in cfg.succs(b) {
            if !seen[s] {
                seen[s] = true;
                work.push(s);
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::same_behaviour;

    /// `f(n)`: a local array zeroed on entry; returns at once when `n < 1`,
    /// otherwise fills `a[0..n]` and returns `a[n - 1] + a[3]`.
    const EARLY_EXIT: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @f(i32) -> i32 {
bb0(%n: i32):
  %a = alloc [i32; 8]
  store 0, %a
  %a1 = gep %a, 1, 4
  store 0, %a1
  %a3 = gep %a, 3, 4
  store 0, %a3
  %c = slt %n, 1
  br %c, bb1, bb2
bb1:
  ret -1
bb2:
  jump bb3(0)
bb3(%i: i32):
  %p = gep %a, %i, 4
  %v = mul %i, 5
  store %v, %p
  %i1 = add %i, 1
  %t = slt %i1, %n
  br %t, bb3(%i1), bb4
bb4:
  %m = add %n, -1
  %q = gep %a, %m, 4
  %x = load i32, %q
  %y = load i32, %a3
  %r = add %x, %y
  ret %r
}

func @main() -> i32 {
bb0:
  %n = call @getint()
  %r = call @f(%n)
  call @putint(%r)
  ret 0
}
"#;

    fn block<'a>(out: &'a str, name: &str) -> &'a str {
        let start = [format!("\n{name}:"), format!("\n{name}(")]
            .iter()
            .find_map(|h| out.find(h.as_str()))
            .expect("the block");
        let end = out[start + 1..]
            .find("\nbb")
            .map_or(out.len(), |e| start + 1 + e);
        &out[start..end]
    }

    #[test]
    fn initialisation_moves_past_an_exit_that_does_not_read_the_array() {
        for input in ["0", "2", "6"] {
            same_behaviour(EARLY_EXIT, &["storesink"], input);
        }
        let out = same_behaviour(EARLY_EXIT, &["storesink"], "4");
        let f = &out[out.find("func @f").unwrap()..out.find("func @main").unwrap()];
        assert!(!block(f, "bb0").contains("store"), "{f}");
        assert_eq!(block(f, "bb2").matches("store").count(), 3, "{f}");
        // The geps only the stores used moved with them.
        assert!(block(f, "bb2").contains("gep %1, 1, 4"), "{f}");
    }

    #[test]
    fn an_exit_that_reads_the_array_keeps_the_stores() {
        // The early exit returns a[3]: the zero it reads must be stored first.
        let src = EARLY_EXIT.replace("bb1:\n  ret -1", "bb1:\n  %z = load i32, %a3\n  ret %z");
        let out = same_behaviour(&src, &["storesink"], "0");
        let f = &out[out.find("func @f").unwrap()..out.find("func @main").unwrap()];
        assert_eq!(block(f, "bb0").matches("store").count(), 3, "{f}");
    }

    #[test]
    fn stores_before_a_read_in_their_block_stay() {
        // bb0 reads a[1] after zeroing it: only the store after the read (a[3]'s)
        // may move, and so does it.
        let src = EARLY_EXIT.replace(
            "  %a3 = gep %a, 3, 4\n",
            "  %w = load i32, %a1\n  call @putint(%w)\n  %a3 = gep %a, 3, 4\n",
        );
        let out = same_behaviour(&src, &["storesink"], "3");
        let f = &out[out.find("func @f").unwrap()..out.find("func @main").unwrap()];
        assert_eq!(block(f, "bb0").matches("store").count(), 2, "{f}");
        assert_eq!(block(f, "bb2").matches("store").count(), 1, "{f}");
    }

    #[test]
    fn an_escaping_array_keeps_its_stores() {
        // The array's address is stored into a global: anything may read it.
        let src = EARLY_EXIT
            .replace(
                "declare @getint() -> i32\n",
                "declare @getint() -> i32\nglobal @g: [i32; 2] = zeroinit\n",
            )
            .replace(
                "  %c = slt %n, 1\n",
                "  %c = slt %n, 1\n  %s = call @escape(%a)\n",
            )
            .replace(
                "func @main() -> i32 {",
                "func @escape(ptr) -> i32 {\nbb0(%p: ptr):\n  %v = load i32, %p\n  ret %v\n}\n\nfunc @main() -> i32 {",
            );
        let out = same_behaviour(&src, &["storesink"], "0");
        let f = &out[out.find("func @f").unwrap()..out.find("func @escape").unwrap()];
        assert_eq!(block(f, "bb0").matches("store").count(), 3, "{f}");
    }
}
