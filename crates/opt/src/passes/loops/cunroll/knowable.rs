//! Which values a walk of a loop on constants ([`super::simulate`]) can come to
//! know, found without walking: SCCP's optimistic propagation (Wegman and Zadeck
//! 1991) over the loop's def-use graph with every edge taken, so a value outside
//! the set is unknown on every path, however long the walk. [`super::evaluate`]
//! needs every result of the loop known at its exit; a loop with a result no walk
//! can know is not walked at all. In a deep nest carrying a value from before it
//! (`s = getint(); while (..) { while (..) { .. s = s * 3 + 1; } }`), each level
//! would otherwise be walked to [`super::MAX_EVAL_STEPS`] instructions.
//!
//! [`doomed_loops`] answers for every loop of a function at once, in time linear
//! in the function and the number of loops each value's uses leave: a loop's
//! walk knows no more than its outermost loop's walk does (it starts from
//! constants that walk also passes, and values outside it are unknown to it), so
//! one set per outermost loop serves the whole nest. [`results_knowable`] then
//! decides exactly for one loop.

use super::Entry;
use crate::analysis::{LoopForest, LoopId};
use crate::fold::Const;
use ir::analysis::ControlFlowGraph;
use ir::{BlockCall, Function, Inst, InstKind, Value};
use rustc_hash::FxHashSet;

/// The values of loop `id` that a walk entered with the header parameters'
/// constants `entry` may come to know, whatever its branches decide: a constant,
/// a header parameter whose entry is known, an arithmetic result of knowable
/// operands, a block parameter to which some edge in the loop passes a knowable
/// argument. Values from before the loop are never known to a walk. Linear in the
/// loop: each value is added once, and its users visited then.
pub(super) fn knowable(
    f: &Function,
    loops: &LoopForest,
    id: LoopId,
    entry: &[Option<Const>],
) -> FxHashSet<Value> {
    let lp = loops.get(id);
    let mut set = Knowable {
        f,
        loops,
        id,
        can: FxHashSet::default(),
        work: Vec::new(),
    };
    for (&p, c) in f.block_params(lp.header).iter().zip(entry) {
        if c.is_some() {
            set.add(p);
        }
    }
    for &b in &lp.blocks {
        for i in f.layout.block_insts(b) {
            set.visit(i);
        }
    }
    while let Some(v) = set.work.pop() {
        for &u in f.users(v) {
            if f.layout
                .inst_block(u)
                .is_some_and(|b| loops.contains(id, b))
            {
                set.visit(u);
            }
        }
    }
    set.can
}

/// The propagation's state: the values found so far, and those whose users are
/// still to be visited.
struct Knowable<'a> {
    f: &'a Function,
    loops: &'a LoopForest,
    id: LoopId,
    can: FxHashSet<Value>,
    work: Vec<Value>,
}

impl Knowable<'_> {
    fn ok(&self, v: Value) -> bool {
        Const::of(self.f, v).is_some() || self.can.contains(&v)
    }

    fn add(&mut self, v: Value) {
        if self.can.insert(v) {
            self.work.push(v);
        }
    }

    /// Adds what instruction `i` makes knowable, given what is known so far.
    fn visit(&mut self, i: Inst) {
        let f = self.f;
        match f.kind(i) {
            k @ (InstKind::Binary { .. } | InstKind::Cmp { .. } | InstKind::Unary { .. }) => {
                let mut all = true;
                k.for_each_arg(|a| all &= self.ok(a));
                if let Some(r) = f.inst_result(i).filter(|_| all) {
                    self.add(r);
                }
            }
            k @ (InstKind::Jump { .. } | InstKind::Br { .. }) => {
                for t in k.targets() {
                    if !self.loops.contains(self.id, t.block) {
                        continue;
                    }
                    for (&p, &a) in f.block_params(t.block).iter().zip(t.args.iter()) {
                        if self.ok(a) {
                            self.add(p);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether a walk of loop `id` from `entry` may end with every result known: each
/// value of the loop used after it is [`knowable`], and so are the arguments from
/// the loop of at least one exit edge (the walk leaves by one of them).
pub(super) fn results_knowable(
    f: &Function,
    loops: &LoopForest,
    id: LoopId,
    entry: &[Option<Const>],
) -> bool {
    let can = knowable(f, loops, id, entry);
    let unknowable =
        |v: Value| f.value_block(v).is_some_and(|b| loops.contains(id, b)) && !can.contains(&v);
    let defined: Vec<Value> = loops.defined_values(f, id).collect();
    if defined
        .iter()
        .any(|&v| unknowable(v) && loops.used_outside(f, id, v))
    {
        return false;
    }
    let mut exits = loops.get(id).blocks.iter().filter_map(|&b| f.terminator(b));
    exits.any(|t| {
        f.kind(t)
            .targets()
            .iter()
            .any(|c| !loops.contains(id, c.block) && !c.args.iter().any(|&a| unknowable(a)))
    })
}

/// Per loop (indexed by [`LoopId`]), whether [`results_knowable`] is surely
/// false: judged with the values the walk of its outermost loop may know, a
/// superset of its own. A value defined in a loop and used outside it is a result
/// of every loop from its block's innermost up to (not including) the innermost
/// one around the use; an edge leaving loops is an exit of each, and fails one
/// when it passes an unknowable value defined inside it.
pub(super) fn doomed_loops(f: &Function, cfg: &ControlFlowGraph, loops: &LoopForest) -> Vec<bool> {
    let mut can: FxHashSet<Value> = FxHashSet::default();
    for (id, lp) in loops.loops() {
        if lp.parent.is_none() {
            let entry = Entry::of(f, cfg, loops, id).map(|e| e.values);
            let entry = entry.unwrap_or_default();
            can.extend(knowable(f, loops, id, &entry));
        }
    }
    let n = loops.len();
    let mut doomed = vec![false; n];
    let (mut exits, mut failing) = (vec![0u32; n], vec![0u32; n]);
    let parent = |l: LoopId| loops.get(l).parent;
    for b in f.layout.blocks() {
        let Some(inner) = loops.innermost(b) else {
            continue;
        };
        for v in f.block_values(b) {
            if can.contains(&v) {
                continue;
            }
            for &u in f.users(v) {
                let at = f.layout.inst_block(u);
                let mut l = Some(inner);
                while let Some(x) = l.filter(|&x| !at.is_some_and(|a| loops.contains(x, a))) {
                    doomed[x.0 as usize] = true;
                    l = parent(x);
                }
            }
        }
        let Some(t) = f.terminator(b) else {
            continue;
        };
        for call in f.kind(t).targets() {
            let mut l = Some(inner);
            while let Some(x) = l.filter(|&x| !loops.contains(x, call.block)) {
                exits[x.0 as usize] += 1;
                if passes_unknowable(f, loops, &can, x, call) {
                    failing[x.0 as usize] += 1;
                }
                l = parent(x);
            }
        }
    }
    for k in 0..n {
        // No exit edge: the walk can only end in a `ret`, which is no result.
        doomed[k] |= failing[k] == exits[k];
    }
    doomed
}

/// Whether exit edge `call` passes a value defined in loop `x` that no walk knows.
fn passes_unknowable(
    f: &Function,
    loops: &LoopForest,
    can: &FxHashSet<Value>,
    x: LoopId,
    call: &BlockCall,
) -> bool {
    call.args
        .iter()
        .any(|&a| !can.contains(&a) && f.value_block(a).is_some_and(|d| loops.contains(x, d)))
}

#[cfg(test)]
mod tests {
    use super::{doomed_loops, knowable, results_knowable};
    use crate::analysis::{LoopForest, LoopId};
    use crate::passes::testutil::same_behaviour;
    use ir::analysis::{ControlFlowGraph, DominatorTree};

    /// `s = START; for (i = 0; i < 2; i++) { t = s; for (j = 0; j < 2; j++) t =
    /// t * 3 + i; s = t; } print(s)`. The inner loop's result leaves it by its exit
    /// edge's argument (`EXIT` = `bb3(%6)`), or is used after it directly (`EXIT` =
    /// `bb3`, `%9` being `%6`).
    const NEST: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  jump bb1(0, START)
bb1(%1: i32, %2: i32):
  jump bb2(0, %2)
bb2(%3: i32, %4: i32):
  %5 = mul %4, 3
  %6 = add %5, %1
  %7 = add %3, 1
  %8 = slt %7, 2
  br %8, bb2(%7, %6), EXIT
BB3
  %10 = add %1, 1
  %11 = slt %10, 2
  br %11, bb1(%10, %9), bb4(%9)
bb4(%12: i32):
  call @putint(%12)
  ret 0
}
"#;

    fn nest(start: &str, by_edge: bool) -> String {
        let (exit, bb3) = if by_edge {
            ("bb3(%6)", "bb3(%9: i32):")
        } else {
            ("bb3", "bb3:")
        };
        let src = NEST
            .replace("START", start)
            .replace("EXIT", exit)
            .replace("BB3", bb3);
        if by_edge {
            src
        } else {
            src.replace("%9", "%6")
        }
    }

    /// Per loop, innermost first: (what its walk may know, whether its results
    /// may all be known, whether the whole-function filter gives it up).
    fn judge(src: &str) -> Vec<(Vec<String>, bool, bool)> {
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().find(|f| !f.is_declaration()).unwrap();
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(f, &cfg);
        let loops = LoopForest::compute(f, &cfg, &dt);
        let doomed = doomed_loops(f, &cfg, &loops);
        let names = ir::text::Names::new(f);
        let ids: Vec<LoopId> = loops.loops().map(|(id, _)| id).collect();
        ids.into_iter()
            .map(|id| {
                let entry = super::Entry::of(f, &cfg, &loops, id).unwrap().values;
                let mut can: Vec<String> = knowable(f, &loops, id, &entry)
                    .into_iter()
                    .map(|v| names.value(v).to_string())
                    .collect();
                can.sort();
                let exact = results_knowable(f, &loops, id, &entry);
                (can, exact, doomed[id.0 as usize])
            })
            .collect()
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_value_read_before_the_nest_is_known_to_no_walk() {
        for by_edge in [true, false] {
            let got = judge(&nest("%0", by_edge));
            // The counters are known, `s` and `t` never: both loops are given up
            // by the filter, before any walk.
            let flags: Vec<(bool, bool)> = got.iter().map(|g| (g.1, g.2)).collect();
            assert_eq!(flags, [(false, true), (false, true)]);
            // (Without `%9`, the printed names of the outer counter shift.)
            let outer = if by_edge {
                ["%1", "%10", "%11", "%3", "%7", "%8"]
            } else {
                ["%1", "%3", "%7", "%8", "%9", "%10"]
            };
            assert_eq!(got[0].0, strings(&["%3", "%7", "%8"]));
            let mut outer = strings(&outer);
            outer.sort();
            assert_eq!(got[1].0, outer);
        }
    }

    #[test]
    fn a_nest_from_constants_is_known_to_its_outer_walk_only() {
        for by_edge in [true, false] {
            let got = judge(&nest("5", by_edge));
            // The inner loop's walk does not know `t`'s entry (it comes from the
            // outer loop), so its results are unknown, though the filter, judging
            // with the outer walk's knowledge, keeps it; the outer walk knows all.
            assert_eq!(got[0].0, strings(&["%3", "%7", "%8"]));
            assert_eq!((got[0].1, got[0].2), (false, false));
            assert!(got[1].1 && !got[1].2, "{got:?}");
            assert!(got[1].0.contains(&"%6".to_string()), "{got:?}");
        }
        // So cunroll evaluates the outer loop: i = 0 gives 5 * 9 = 45, i = 1 gives
        // (45 * 3 + 1) * 3 + 1 = 409.
        let out = same_behaviour(&nest("5", true), &["cunroll"], "");
        let main = &out[out.find("func @main").unwrap()..];
        assert!(main.contains("jump bb1(409)"), "{out}");
        assert!(!main.contains(" br "), "{out}");
    }
}
