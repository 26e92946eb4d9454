//! Store-to-load forwarding and dead store elimination for globals and the
//! arrays a function is passed: the counterpart of [`super::memforward`] for
//! memory that other names may reach.
//!
//! Locations are an object plus a constant byte offset (through `gep`s with
//! constant indices); an object is a global or the array a pointer parameter
//! points into. Two globals never share memory; a parameter's array may be any
//! global or another parameter's array (the caller may pass the same one twice),
//! but never a local `alloc` of this call, and within one object distinct
//! offsets are distinct memory (`p[1]` and `p[2]`), as LLVM's BasicAA tells
//! apart two constant offsets from one base. Scanning each block forward, with
//! the contents known at each point:
//! - a load of a location whose contents are known (stored or loaded earlier, with
//!   the same type) is replaced by that value;
//! - a store of the value a location already holds is removed (a silent store);
//! - a store overwritten by a later store to the same location in its block, with
//!   nothing in between that may read it, is removed (`seed = seed * a + c; seed =
//!   seed % m;` stores once).
//!
//! What else may touch them is accounted for conservatively: a store to one object
//! forgets what is known about every object that may share its memory (a store to
//! `@g` forgets the parameters' arrays; one through a parameter forgets every
//! global and the other parameters' arrays), and a load from one may read the
//! stores to those; a pointer with no known object (a block parameter merging
//! addresses) may reach anything, so a store through it forgets everything known
//! and a load through it leaves no earlier store dead; an access at a variable
//! index forgets (or reads) all of its object and those that may share it; a call
//! forgets everything when its callee may write
//! memory and reads everything when it may read memory ([`Purity`]). A block's end
//! reads everything (globals outlive the function), so dead stores are found within
//! a block only.
//!
//! The contents flow across blocks as available expressions do (Aho, Sethi and
//! Ullman, section 10.6; the memory facts of GCC's FRE and LLVM's EarlyCSE and
//! DSE's `storeIsNoop`, here over a forward data-flow problem): the blocks are
//! visited in reverse post-order, and a block starts from what holds at the end of
//! every predecessor, the facts common to all of them (the same value in the same
//! location). A value found so on every incoming edge is defined where it
//! dominates each predecessor's end, and so dominates the block. A block with a
//! predecessor not yet visited (a loop header) starts from nothing, which keeps
//! the pass to one visit of each block; so does a join of more than
//! [`MAX_JOIN_PREDS`] edges, and a block's facts are passed on only while there
//! are at most [`MAX_CARRIED`] of them, which bounds the cost of the joins.

use super::locmap::{Loc as LocOf, LocMap};
use super::objects::{target, Object, Target};
use crate::analysis::Preserved;
use crate::analysis::{AnalysisManager, Purity};
use crate::fold::fold_users;
use crate::pipeline::Pass;
use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, Inst, InstKind, Module, SecondaryMap, Value};
use rustc_hash::FxHashMap;

/// The pass.
pub struct GlobalForward;

impl Pass for GlobalForward {
    fn name(&self) -> &'static str {
        "globalforward"
    }
    fn description(&self) -> &'static str {
        "store-to-load forwarding, silent and dead store elimination for globals and parameters' arrays"
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        am.each_function_with_purity(m, |f, purity, fa| run(f, fa.cfg(f), purity) > 0)
    }
    /// Rewrites instructions only: no block or edge changes.
    fn preserves(&self) -> Preserved {
        Preserved::CFG.with_other_functions()
    }
}

/// A location: object, byte offset, size in bytes.
type Loc = LocOf<Object>;

/// Forgets the facts about every object other than `obj` that may share its
/// memory.
fn forget_sharing<T: Copy>(facts: &mut LocMap<Object, T>, obj: Object) {
    facts.retain_objects(|o| o == obj || !o.may_share(obj));
}

/// Forgets the facts about `obj` and every object that may share its memory
/// (an access at a variable offset in it).
fn forget_all_sharing<T: Copy>(facts: &mut LocMap<Object, T>, obj: Object) {
    facts.retain_objects(|o| !o.may_share(obj));
}

/// Joins of more edges than this start from nothing.
pub const MAX_JOIN_PREDS: usize = 32;
/// A block's facts pass to its successors only when there are at most this many.
pub const MAX_CARRIED: usize = 256;
/// A join gets at most this many parameters for contents its predecessors know
/// but disagree on.
pub const MAX_JOIN_PARAMS: usize = 8;

/// What each location holds.
type Known = LocMap<Object, Value>;

/// Forwards and removes what it can in every block of `f`; returns how many loads
/// and stores went.
pub fn run(f: &mut Function, cfg: &ControlFlowGraph, purity: &Purity) -> usize {
    let mut changed = 0;
    // The users of loads replaced by constants.
    let mut constants: Vec<Inst> = Vec::new();
    let mut visited: SecondaryMap<Block, bool> = SecondaryMap::new();
    // The facts at the end of visited blocks some successor has still to start
    // from, with how many successors that is.
    let mut ends: FxHashMap<Block, (Known, usize)> = FxHashMap::default();
    // Parameters made at joins, in order.
    let mut merged: Vec<(Block, Value)> = Vec::new();
    for &b in cfg.rpo() {
        let start = start_of(f, b, cfg, &visited, &mut ends, &mut merged);
        let end = forward_in_block(f, b, purity, start, &mut changed, &mut constants);
        visited[b] = true;
        let succs = ir::analysis::cfg::distinct_in_order(cfg.succs(b)).len();
        if succs > 0 && end.len() <= MAX_CARRIED {
            ends.insert(b, (end, succs));
        }
    }
    // Blocks no path reaches: each on its own.
    let unreached: Vec<Block> = f.layout.blocks().filter(|&b| !visited[b]).collect();
    for b in unreached {
        forward_in_block(f, b, purity, Known::new(), &mut changed, &mut constants);
    }
    remove_unused_params(f, cfg, merged);
    // Loads that became constants: what they feed folds too (the pass also runs
    // late, when no constant folding follows).
    changed + fold_users(f, constants)
}

/// Removes the parameters made at joins that no load took, latest first (a
/// later one may pass an earlier one on).
fn remove_unused_params(f: &mut Function, cfg: &ControlFlowGraph, merged: Vec<(Block, Value)>) {
    for (b, p) in merged.into_iter().rev() {
        if f.has_users(p) {
            continue;
        }
        let idx = f
            .block_params(b)
            .iter()
            .position(|&q| q == p)
            .expect("a parameter made at the join");
        f.remove_block_param(b, idx, &cfg.unique_preds(b));
    }
}

/// What holds when `b` starts: the facts common to the ends of its
/// predecessors, when every one has been visited, and for a location every
/// predecessor knows but with different values, a new parameter of `b` that
/// each edge passes its value (recorded in `merged`): the SSA form of a load at
/// a join that LLVM's GVN builds from the values available in each predecessor
/// (`ConstructSSAForLoadSet`).
fn start_of(
    f: &mut Function,
    b: Block,
    cfg: &ControlFlowGraph,
    visited: &SecondaryMap<Block, bool>,
    ends: &mut FxHashMap<Block, (Known, usize)>,
    merged: &mut Vec<(Block, Value)>,
) -> Known {
    let preds = cfg.unique_preds(b);
    let mut known: Option<Known> = None;
    let usable = !preds.is_empty()
        && preds.len() <= MAX_JOIN_PREDS
        && preds.iter().all(|&p| visited[p] && ends.contains_key(&p));
    if usable && preds.len() > 1 {
        let pred_ends: Vec<&Known> = preds.iter().map(|p| &ends[p].0).collect();
        let mut common = pred_ends[0].clone();
        for e in &pred_ends[1..] {
            common.keep_common(e);
        }
        merge_disagreeing(f, b, &preds, &pred_ends, &mut common, merged);
        known = Some(common);
    }
    for &p in &preds {
        let Some((end, left)) = ends.get_mut(&p) else {
            continue;
        };
        *left -= 1;
        if usable && preds.len() == 1 {
            match &mut known {
                None => known = Some(end.clone()),
                Some(k) => k.keep_common(end),
            }
        }
        if *left == 0 {
            ends.remove(&p);
        }
    }
    known.unwrap_or_else(Known::new)
}

/// Gives `b` a parameter for each location (up to [`MAX_JOIN_PARAMS`]) whose
/// contents every predecessor's end knows, with a value of one type, but not
/// the same value; each edge from predecessor `preds[k]` passes the value
/// `ends[k]` knows. Records the parameters as facts of `known`.
fn merge_disagreeing(
    f: &mut Function,
    b: Block,
    preds: &[Block],
    ends: &[&Known],
    known: &mut Known,
    merged: &mut Vec<(Block, Value)>,
) {
    let mut candidates: Vec<(Loc, Value)> = ends[0]
        .iter()
        .filter(|&(loc, v)| !known.at(loc).any(|w| f.value_type(w) == f.value_type(v)))
        .collect();
    candidates.sort_by_key(|&(loc, v)| (loc.obj, loc.off, loc.size, v));
    let mut made = 0;
    for (loc, v) in candidates {
        if made == MAX_JOIN_PARAMS {
            break;
        }
        let ty = f.value_type(v);
        let values: Option<Vec<Value>> = ends
            .iter()
            .map(|e| e.at(loc).find(|&w| f.value_type(w) == ty))
            .collect();
        let Some(values) = values else {
            continue;
        };
        if known.at(loc).any(|w| f.value_type(w) == ty) {
            continue; // a second fact of this type at `loc` in the first end
        }
        let p = f.append_block_param(b, ty);
        for (&pred, &w) in preds.iter().zip(&values) {
            crate::cfg_edit::append_edge_arg(f, pred, b, w);
        }
        known.push(loc, p);
        merged.push((b, p));
        made += 1;
    }
}

/// Forwards and removes what it can in `b`, starting from `known`; returns what
/// holds at its end.
fn forward_in_block(
    f: &mut Function,
    b: Block,
    purity: &Purity,
    mut known: Known,
    changed: &mut usize,
    constants: &mut Vec<Inst>,
) -> Known {
    // The value each location holds; the last store to each location that nothing
    // may have read since. (At most one entry per location and type, and pending
    // stores never overlap: each store forgets what it overlaps first.)
    let mut pending: LocMap<Object, Inst> = LocMap::new();
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    for i in insts {
        match *f.kind(i) {
            InstKind::Load { ty, ptr } => match target(f, ptr) {
                Target::Local => {}
                Target::Unknown => pending.clear(),
                Target::Object(obj, None) => forget_all_sharing(&mut pending, obj),
                Target::Object(obj, Some(off)) => {
                    let loc = Loc {
                        obj,
                        off,
                        size: i64::from(ty.size()),
                    };
                    let r = f.inst_result(i).expect("load has a result");
                    let hit = known.at(loc).find(|&v| f.value_type(v) == ty);
                    if let Some(v) = hit {
                        if f.as_iconst(v).is_some() || f.as_fconst(v).is_some() {
                            constants.extend(f.users(r).iter().copied());
                        }
                        f.replace_all_uses(r, v);
                        f.remove_inst(i);
                        *changed += 1;
                    } else {
                        pending.forget_overlapping(loc);
                        forget_sharing(&mut pending, obj);
                        known.push(loc, r);
                    }
                }
            },
            InstKind::Store { value, ptr } => match target(f, ptr) {
                Target::Local => {}
                Target::Unknown => known.clear(),
                Target::Object(obj, None) => forget_all_sharing(&mut known, obj),
                Target::Object(obj, Some(off)) => {
                    let loc = Loc {
                        obj,
                        off,
                        size: i64::from(f.value_type(value).size()),
                    };
                    if known.at(loc).any(|v| v == value) {
                        f.remove_inst(i); // stores what is already there
                        *changed += 1;
                        continue;
                    }
                    if let Some(dead) = pending.take(loc) {
                        f.remove_inst(dead);
                        *changed += 1;
                    }
                    pending.forget_overlapping(loc);
                    known.forget_overlapping(loc);
                    forget_sharing(&mut known, obj);
                    known.push(loc, value);
                    pending.push(loc, i);
                }
            },
            InstKind::Call { callee, .. } => {
                let e = purity.effects(callee);
                if e.writes_global || e.writes_args {
                    known.clear();
                }
                if e.reads_global || e.reads_args || e.writes_args {
                    pending.clear();
                }
            }
            _ => {}
        }
    }
    known
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{check, run, same_behaviour};

    const RAND: &str = r#"
global @seed: i32 = 7
global @other: [i32; 4] = zeroinit

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = load i32, @seed
  %1 = mul %0, 1103
  %2 = add %1, 12345
  store %2, @seed
  %3 = load i32, @seed
  %4 = srem %3, 1000
  store %4, @seed
  %5 = gep @other, 1, 4
  store %4, %5
  %6 = load i32, @seed
  call @putint(%6)
  %7 = load i32, @seed
  store %7, @seed
  ret %7
}
"#;

    #[test]
    fn forwards_and_removes_overwritten_stores_to_globals() {
        same_behaviour(RAND, &["globalforward"], "");
        check(
            &["globalforward"],
            RAND,
            r#"
global @seed: i32 = 7
global @other: [i32; 4] = zeroinit

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = load i32, @seed
  %1 = mul %0, 1103
  %2 = add %1, 12345
  %3 = srem %2, 1000
  store %3, @seed
  %4 = gep @other, 1, 4
  store %3, %4
  call @putint(%3)
  ret %3
}
"#,
        );
    }

    /// Many locations of one array: a store forgets only what it overlaps, a
    /// load of a location stored long before still forwards, and a store
    /// overwritten later goes.
    #[test]
    fn locations_of_one_array_are_told_apart() {
        let mut src = String::from(
            "global @a: [i32; 64] = zeroinit\n\ndeclare @putint(i32) -> void\n\n\
             func @main() -> i32 {\nbb0:\n",
        );
        for k in 0..40 {
            src += &format!("  %{k} = gep @a, {k}, 4\n  store {}, %{k}\n", 100 + k);
        }
        src += "  store 7, %5\n  %40 = load i32, %5\n  %41 = load i32, %6\n  %42 = load i32, %0\n\
                %43 = add %40, %41\n  %44 = add %43, %42\n  call @putint(%44)\n  ret 0\n}\n";
        let after = same_behaviour(&src, &["globalforward"], "");
        assert!(!after.contains("load"), "every load forwarded:\n{after}");
        assert!(
            !after.contains("store 105"),
            "the overwritten store goes:\n{after}"
        );
        assert_eq!(after.matches("store").count(), 40);
    }

    #[test]
    fn unknown_pointers_and_calls_that_touch_memory_are_respected() {
        let src = r#"
global @g: i32 = 1

declare @putint(i32) -> void

func @f(ptr) -> i32 {
bb0(%0: ptr):
  store 1, @g
  %1 = load i32, %0
  store 2, @g
  store 3, %0
  %2 = load i32, @g
  %3 = add %1, %2
  store 4, @g
  call @h()
  store 5, @g
  ret %3
}

func @h() -> void {
bb0:
  %0 = load i32, @g
  call @putint(%0)
  ret
}
"#;
        // The load through %0 may read @g (store 1 stays); the store through %0 may
        // write it (the load of @g stays); @h reads @g (store 4 stays).
        let out = run(src, &["globalforward"]);
        for s in ["store 1, @g", "load i32, @g", "store 4, @g", "store 5, @g"] {
            assert!(out.contains(s), "{s}:\n{out}");
        }
    }
    /// `f(p, q)` called with `@a` as both arrays (so they alias at run time):
    /// ACCESSES between a store to `p[1]` and a load of it.
    const PARAMS: &str = r#"
global @a: [i32; 4] = [10, 11, 12, 13]

declare @putint(i32) -> void

func @f(ptr, ptr) -> i32 {
bb0(%p: ptr, %q: ptr):
  %p1 = gep %p, 1, 4
  %p2 = gep %p, 2, 4
  %q1 = gep %q, 1, 4
  %a1 = gep @a, 1, 4
  store 5, %p1
ACCESSES
  %x = load i32, %p1
  store 8, %p1
  ret %x
}

func @main() -> i32 {
bb0:
  %r = call @f(@a, @a)
  call @putint(%r)
  %s = gep @a, 1, 4
  %t = load i32, %s
  call @putint(%t)
  %u = gep @a, 2, 4
  %v = load i32, %u
  call @putint(%v)
  ret 0
}
"#;

    #[test]
    fn another_offset_of_a_parameters_array_is_other_memory() {
        // `p[2]` is not `p[1]`: the load is 5, and the first store to `p[1]`,
        // overwritten with nothing reading it, goes.
        let src = PARAMS.replace("ACCESSES", "  store 6, %p2\n  %y = load i32, %p2");
        let out = same_behaviour(&src, &["globalforward"], "");
        let f = &out[..out.find("func @main").unwrap()];
        assert!(!f.contains("load"), "{out}");
        assert!(f.contains("ret 5") && !f.contains("store 5"), "{out}");
    }

    #[test]
    fn another_parameters_array_or_a_global_may_be_the_same_memory() {
        // A store through `q` or to `@a` may write `p[1]`: the load stays. A load
        // through `q` or of `@a` may read it: the first store stays.
        for acc in [
            "  store 6, %q1",
            "  store 6, %a1",
            "  %y = load i32, %q1\n  call @putint(%y)",
            "  %y = load i32, %a1\n  call @putint(%y)",
        ] {
            let src = PARAMS.replace("ACCESSES", acc);
            let out = same_behaviour(&src, &["globalforward"], "");
            let f = &out[..out.find("func @main").unwrap()];
            if acc.contains("store") {
                assert!(f.contains("load i32"), "{acc}:\n{out}");
            } else {
                assert!(f.contains("store 5"), "{acc}:\n{out}");
            }
        }
    }

    /// A loop updating `@g` in a register (as `promote` leaves it), its value
    /// stored on the exit, and the code after the loop storing `@g` again (BETWEEN
    /// in between).
    const PROMOTED: &str = r#"
global @g: i32 = 1

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = load i32, @g
  jump bb1(0, %0)
bb1(%i: i32, %v: i32):
  %w = mul %v, 3
  %k = add %i, 1
  %c = slt %k, 10
  br %c, bb1(%k, %w), bb2
bb2:
  store %w, @g
  jump bb3
bb3:
BETWEEN
  store 4, @g
  %r = load i32, @g
  ret %r
}

func @h() -> void {
bb0:
  %0 = load i32, @g
  call @putint(%0)
  ret
}
"#;

    #[test]
    fn an_overwritten_exit_store_leaves_its_loop_dead() {
        // Once simplifycfg has merged the exit and what follows it, the exit's
        // store is overwritten in its block: nothing uses the loop any more.
        let passes = ["simplifycfg", "globalforward", "loopdelete"];
        let out = same_behaviour(&PROMOTED.replace("BETWEEN", ""), &passes, "");
        assert!(!out.contains("mul"), "{out}");
        assert_eq!(out.matches("store").count(), 1, "{out}");
        // A call that reads `@g` in between keeps the store, and so the loop.
        let src = PROMOTED.replace("BETWEEN", "  call @h()");
        let out = same_behaviour(&src, &passes, "");
        assert!(out.contains("mul"), "{out}");
        assert_eq!(out.matches("store").count(), 2, "{out}");
    }

    /// A diamond: `@g` is stored `%v` before it, one arm stores `%v` again, the
    /// other ARM; the join then loads `@g` and stores `%v` (printed as `%0`).
    const DIAMOND: &str = r#"
global @g: i32 = 1
global @h: i32 = 2

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %v = call @getint()
  store %v, @g
  %c = slt %v, 10
  br %c, bb1, bb2
bb1:
  store %v, @g
  jump bb3
bb2:
ARM
  jump bb3
bb3:
  %r = load i32, @g
  call @putint(%r)
  store %v, @g
  ret 0
}

func @touch() -> void {
bb0:
  store 5, @g
  ret
}

declare @getint() -> i32
"#;

    #[test]
    fn contents_known_on_every_edge_hold_at_the_join() {
        // The other arm writes only another global: at the join `@g` holds `%v`
        // on both edges, so its store and the arm's are silent and its load is `%v`.
        let src = DIAMOND.replace("ARM", "  store 3, @h");
        let out = same_behaviour(&src, &["globalforward"], "4");
        assert_eq!(out.matches("store %0, @g").count(), 1, "{out}");
        assert!(!out.contains("load"), "{out}");
        assert!(out.contains("call @putint(%0)"), "{out}");
    }

    #[test]
    fn contents_not_known_on_every_edge_are_not_used() {
        // A call that writes globals: the join's store and load stay.
        let src = DIAMOND.replace("ARM", "  call @touch()");
        let out = same_behaviour(&src, &["globalforward"], "4");
        assert!(out.contains("load i32, @g"), "{out}");
        assert!(out.contains("store %0, @g\n  ret 0"), "{out}");
    }

    #[test]
    fn contents_known_on_every_edge_with_different_values_become_a_parameter() {
        // `%v` on one edge, 7 on the other: the join's load is a new parameter of
        // the join that the edges pass those values; its store stays (not silent).
        let src = DIAMOND.replace("ARM", "  store 7, @g");
        for input in ["4", "40"] {
            let out = same_behaviour(&src, &["globalforward"], input);
            assert!(!out.contains("load"), "{out}");
            assert!(
                out.contains("jump bb3(%0)") && out.contains("jump bb3(7)"),
                "{out}"
            );
            assert!(out.contains("call @putint(%2)"), "{out}");
            assert!(out.contains("store %0, @g\n  ret 0"), "{out}");
        }
        // A location only some edges know: no parameter, and none is left over
        // for a location whose load never comes.
        let src = DIAMOND
            .replace("ARM", "  store 7, @h")
            .replace("  %r = load i32, @g", "  %r = load i32, @h");
        let out = same_behaviour(&src, &["globalforward"], "4");
        assert!(
            out.contains("load i32, @h") && out.contains("bb3:"),
            "{out}"
        );
    }

    #[test]
    fn a_loop_header_starts_from_nothing() {
        // The body stores another value: the header's load must not take the
        // value stored before the loop.
        let src = r#"
global @g: i32 = 1

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  store 4, @g
  jump bb1(0)
bb1(%i: i32):
  %x = load i32, @g
  call @putint(%x)
  %y = add %x, 1
  store %y, @g
  %k = add %i, 1
  %c = slt %k, 3
  br %c, bb1(%k), bb2
bb2:
  ret 0
}
"#;
        let out = same_behaviour(src, &["globalforward"], "");
        assert!(out.contains("load i32, @g"), "{out}");
    }
}
