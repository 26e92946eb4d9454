//! Store-to-load forwarding and dead store elimination for globals within a block:
//! the counterpart of [`super::memforward`] for memory that other names may reach.
//!
//! Locations are a global plus a constant byte offset (through `gep`s with constant
//! indices). Scanning each block forward, with the contents known at each point:
//! - a load of a location whose contents are known (stored or loaded earlier in the
//!   block, with the same type) is replaced by that value;
//! - a store of the value a location already holds is removed;
//! - a store overwritten by a later store to the same location, with nothing in
//!   between that may read it, is removed (`seed = seed * a + c; seed = seed % m;`
//!   stores once).
//!
//! What else may touch globals is accounted for conservatively: a store through a
//! pointer not known to be into a global (a parameter, a loaded pointer) may write any
//! global, so everything known is forgotten; a load through one may read any global,
//! so no earlier store is dead; an access to a global at a variable index forgets
//! (or reads) all of that global; a call forgets everything when its callee may write
//! memory and reads everything when it may read memory ([`Purity`]). A block's end
//! reads everything (globals outlive the function).

use super::locmap::{Loc as LocOf, LocMap};
use crate::analysis::Preserved;
use crate::analysis::{address_root, AnalysisManager, Purity};
use crate::pipeline::Pass;
use ir::{Block, Function, GlobalId, Inst, InstKind, Module, Value, ValueDef};

/// The pass.
pub struct GlobalForward;

impl Pass for GlobalForward {
    fn name(&self) -> &'static str {
        "globalforward"
    }
    fn description(&self) -> &'static str {
        "store-to-load forwarding and dead store elimination for globals within a block"
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        let purity = am.purity(m);
        am.each_function(m, |f, _| run(f, &purity) > 0)
    }
    /// Rewrites instructions only: no block or edge changes.
    fn preserves(&self) -> Preserved {
        Preserved::CFG.with_other_functions()
    }
}

/// A global location: global, byte offset, size in bytes.
type Loc = LocOf<GlobalId>;

/// Where a pointer points.
enum Target {
    /// Into a global, at a constant byte offset or an unknown one.
    Global(GlobalId, Option<i64>),
    /// Into a local `alloc`: never a global.
    Local,
    /// Anywhere.
    Unknown,
}

fn target(f: &Function, p: Value) -> Target {
    let (root, off) = address_root(f, p);
    match f.value_def(root) {
        ValueDef::Global(g) => Target::Global(g, off),
        ValueDef::Inst(i) if matches!(f.kind(i), InstKind::Alloc { .. }) => Target::Local,
        _ => Target::Unknown,
    }
}

/// Forwards and removes what it can in every block of `f`; returns how many loads
/// and stores went.
pub fn run(f: &mut Function, purity: &Purity) -> usize {
    let blocks: Vec<Block> = f.layout.blocks().collect();
    blocks
        .into_iter()
        .map(|b| forward_in_block(f, b, purity))
        .sum()
}

fn forward_in_block(f: &mut Function, b: Block, purity: &Purity) -> usize {
    let mut changed = 0;
    // The value each location holds; the last store to each location that nothing
    // may have read since. (At most one entry per location and type, and pending
    // stores never overlap: each store forgets what it overlaps first.)
    let mut known: LocMap<GlobalId, Value> = LocMap::new();
    let mut pending: LocMap<GlobalId, Inst> = LocMap::new();
    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
    for i in insts {
        match *f.kind(i) {
            InstKind::Load { ty, ptr } => match target(f, ptr) {
                Target::Local => {}
                Target::Unknown => pending.clear(),
                Target::Global(g, None) => pending.forget_object(g),
                Target::Global(global, Some(off)) => {
                    let loc = Loc {
                        obj: global,
                        off,
                        size: i64::from(ty.size()),
                    };
                    let r = f.inst_result(i).expect("load has a result");
                    let hit = known.at(loc).find(|&v| f.value_type(v) == ty);
                    if let Some(v) = hit {
                        f.replace_all_uses(r, v);
                        f.remove_inst(i);
                        changed += 1;
                    } else {
                        pending.forget_overlapping(loc);
                        known.push(loc, r);
                    }
                }
            },
            InstKind::Store { value, ptr } => match target(f, ptr) {
                Target::Local => {}
                Target::Unknown => known.clear(),
                Target::Global(g, None) => known.forget_object(g),
                Target::Global(global, Some(off)) => {
                    let loc = Loc {
                        obj: global,
                        off,
                        size: i64::from(f.value_type(value).size()),
                    };
                    if known.at(loc).any(|v| v == value) {
                        f.remove_inst(i); // stores what is already there
                        changed += 1;
                        continue;
                    }
                    if let Some(dead) = pending.take(loc) {
                        f.remove_inst(dead);
                        changed += 1;
                    }
                    pending.forget_overlapping(loc);
                    known.forget_overlapping(loc);
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
    changed
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
}
