//! A data-flow framework: a problem gives its facts, how they meet where control
//! flow joins, and what a block does to them; [`solve`] finds the fixed point.
//!
//! The classic formulation of Kildall ("A Unified Approach to Global Program
//! Optimization", POPL 1973) as taught by Aho, Lam, Sethi and Ullman
//! ("Compilers", 9.2-9.3): facts form a semi-lattice, the meet is its greatest
//! lower bound, transfer functions are monotone, and iterating from the top
//! element (the meet's identity) everywhere but the boundary reaches the maximal
//! fixed point. Blocks are visited from a work list seeded in reverse post-order
//! (forward problems) or post-order (backward ones), so an acyclic region
//! settles in one pass and each loop costs a pass per fact that flows around it;
//! a block is revisited only when a neighbour's fact changed.
//!
//! Problems built on it: [`Liveness`] (backward, may: which values a block's
//! successors may still read), [`ReachingStores`] (forward, may: which stores
//! a load may observe) and [`AvailableLoads`] (forward, must: which addresses
//! hold a known value on every path).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use ir::analysis::ControlFlowGraph;
use ir::{Block, Function, Inst, InstKind, SecondaryMap, Type, Value, ValueDef};

use super::purity::{pointer_base, PointerBase, Purity};

/// Which way facts flow.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Direction {
    /// From a block's predecessors to the block: facts at a block's start are the
    /// meet of its predecessors' facts at their ends.
    Forward,
    /// From a block's successors to the block.
    Backward,
}

/// A data-flow problem over the blocks of a function.
pub trait Problem {
    /// What is known at a program point.
    type Fact: Clone + PartialEq;
    /// Which way facts flow.
    const DIRECTION: Direction;
    /// The fact at the function's entry (forward) or after a returning block
    /// (backward).
    fn boundary(&self, f: &Function) -> Self::Fact;
    /// The fact every other block starts from: the identity of [`Problem::meet`]
    /// (the lattice's top).
    fn top(&self, f: &Function) -> Self::Fact;
    /// Combines the fact of another incoming edge into `acc`.
    fn meet(&self, acc: &mut Self::Fact, incoming: &Self::Fact);
    /// The fact at the far side of block `b` given the fact at its near side (its
    /// start for a forward problem, its end for a backward one).
    fn transfer(&self, f: &Function, b: Block, input: &Self::Fact) -> Self::Fact;
}

/// The facts at the start and the end of every reachable block.
pub struct Solution<F: Clone> {
    pub at_start: SecondaryMap<Block, F>,
    pub at_end: SecondaryMap<Block, F>,
    /// How many times a block's transfer function ran (for tests of the cost).
    pub visits: usize,
}

/// Solves `problem` over `f`, whose current CFG is `cfg`. Unreachable blocks keep
/// the top fact.
pub fn solve<P: Problem>(f: &Function, cfg: &ControlFlowGraph, problem: &P) -> Solution<P::Fact> {
    let top = problem.top(f);
    let mut at_start = SecondaryMap::with_default(top.clone());
    let mut at_end = SecondaryMap::with_default(top.clone());
    let forward = P::DIRECTION == Direction::Forward;
    let order: Vec<Block> = if forward {
        cfg.rpo().to_vec()
    } else {
        cfg.rpo().iter().rev().copied().collect()
    };
    let mut reachable: SecondaryMap<Block, bool> = SecondaryMap::new();
    for &b in &order {
        reachable[b] = true;
    }
    let entry = f.entry_block();
    let mut queued: SecondaryMap<Block, bool> = SecondaryMap::new();
    let mut work: VecDeque<Block> = order.iter().copied().collect();
    for &b in &order {
        queued[b] = true;
    }
    let mut visits = 0;
    while let Some(b) = work.pop_front() {
        queued[b] = false;
        visits += 1;
        // The fact on the near side: the meet over the incoming edges.
        let (near, neighbours) = if forward {
            (cfg.preds(b), cfg.succs(b))
        } else {
            (cfg.succs(b), cfg.preds(b))
        };
        let mut input = if (forward && b == entry) || (!forward && near.is_empty()) {
            problem.boundary(f)
        } else {
            top.clone()
        };
        for &n in near {
            if reachable[n] {
                let fact = if forward { &at_end[n] } else { &at_start[n] };
                problem.meet(&mut input, fact);
            }
        }
        let output = problem.transfer(f, b, &input);
        let (near_map, far_map) = if forward {
            (&mut at_start, &mut at_end)
        } else {
            (&mut at_end, &mut at_start)
        };
        near_map[b] = input;
        if far_map[b] != output {
            far_map[b] = output;
            for &n in neighbours {
                if reachable[n] && !queued[n] {
                    queued[n] = true;
                    work.push_back(n);
                }
            }
        }
    }
    Solution {
        at_start,
        at_end,
        visits,
    }
}

/// Whether `v` is a value the program computes (an instruction result or a
/// block parameter), as opposed to a constant or a global's address.
fn computed(f: &Function, v: Value) -> bool {
    matches!(f.value_def(v), ValueDef::Inst(_) | ValueDef::Param(..))
}

/// Live values: a value is live at a point when some path from there reads it
/// before the end of the function. Backward, may (meet = union). Block
/// parameters are defined at their block's start; the arguments a branch passes
/// are read at the end of its block.
pub struct Liveness;

impl Problem for Liveness {
    type Fact = BTreeSet<Value>;
    const DIRECTION: Direction = Direction::Backward;
    fn boundary(&self, _: &Function) -> Self::Fact {
        BTreeSet::new()
    }
    fn top(&self, _: &Function) -> Self::Fact {
        BTreeSet::new()
    }
    fn meet(&self, acc: &mut Self::Fact, incoming: &Self::Fact) {
        acc.extend(incoming.iter().copied());
    }
    fn transfer(&self, f: &Function, b: Block, live_out: &Self::Fact) -> Self::Fact {
        let mut live = live_out.clone();
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for &i in insts.iter().rev() {
            if let Some(r) = f.inst_result(i) {
                live.remove(&r);
            }
            f.kind(i).for_each_arg(|a| {
                if computed(f, a) {
                    live.insert(a);
                }
            });
        }
        for p in f.block_params(b) {
            live.remove(p);
        }
        live
    }
}

/// Reaching stores: the stores whose value a load may read, because some path
/// from the store reaches it with no store to the same address (the same
/// pointer value) in between. Forward, may (meet = union). A store does not
/// kill stores through other pointers, even equal ones: they may differ.
pub struct ReachingStores;

impl Problem for ReachingStores {
    type Fact = BTreeSet<Inst>;
    const DIRECTION: Direction = Direction::Forward;
    fn boundary(&self, _: &Function) -> Self::Fact {
        BTreeSet::new()
    }
    fn top(&self, _: &Function) -> Self::Fact {
        BTreeSet::new()
    }
    fn meet(&self, acc: &mut Self::Fact, incoming: &Self::Fact) {
        acc.extend(incoming.iter().copied());
    }
    fn transfer(&self, f: &Function, b: Block, reaching: &Self::Fact) -> Self::Fact {
        let mut out = reaching.clone();
        for i in f.layout.block_insts(b) {
            if let InstKind::Store { ptr, .. } = *f.kind(i) {
                out.retain(|&s| !matches!(*f.kind(s), InstKind::Store { ptr: q, .. } if q == ptr));
                out.insert(i);
            }
        }
        out
    }
}

/// Available loads: for an address (a pointer value), the type and value memory
/// holds there on every path to the point, known from a load of it or a store
/// to it. Forward, must (meet = intersection of agreeing entries; `None` is the
/// top: everything available). A store kills what may alias it (the same
/// object, or any when its object is unknown); a call that writes memory kills
/// everything.
pub struct AvailableLoads<'a> {
    pub purity: &'a Purity,
}

/// Known contents: `pointer -> (type, value)`.
pub type Contents = Option<BTreeMap<Value, (Type, Value)>>;

fn may_alias(f: &Function, p: Value, q: Value) -> bool {
    match (pointer_base(f, p), pointer_base(f, q)) {
        (PointerBase::Local(a), PointerBase::Local(b)) => a == b,
        (PointerBase::Local(_), PointerBase::Global)
        | (PointerBase::Global, PointerBase::Local(_)) => false,
        (PointerBase::Local(_), PointerBase::Param)
        | (PointerBase::Param, PointerBase::Local(_)) => false,
        _ => true,
    }
}

impl Problem for AvailableLoads<'_> {
    type Fact = Contents;
    const DIRECTION: Direction = Direction::Forward;
    fn boundary(&self, _: &Function) -> Self::Fact {
        Some(BTreeMap::new())
    }
    fn top(&self, _: &Function) -> Self::Fact {
        None
    }
    fn meet(&self, acc: &mut Self::Fact, incoming: &Self::Fact) {
        match (acc.as_mut(), incoming) {
            (_, None) => {}
            (None, Some(m)) => *acc = Some(m.clone()),
            (Some(a), Some(m)) => a.retain(|k, v| m.get(k) == Some(v)),
        }
    }
    fn transfer(&self, f: &Function, b: Block, input: &Self::Fact) -> Self::Fact {
        let mut known = input.clone()?;
        for i in f.layout.block_insts(b) {
            match *f.kind(i) {
                InstKind::Load { ty, ptr } => {
                    let r = f.inst_result(i).expect("a load has a result");
                    known.entry(ptr).or_insert((ty, r));
                }
                InstKind::Store { value, ptr } => {
                    known.retain(|&q, _| !may_alias(f, ptr, q));
                    known.insert(ptr, (f.value_type(value), value));
                }
                InstKind::Call { callee, .. } => {
                    let e = self.purity.effects(callee);
                    if e.writes_global || e.writes_args {
                        known.clear();
                    }
                }
                _ => {}
            }
        }
        Some(known)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(src: &str) -> (ir::Module, ControlFlowGraph) {
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().find(|f| f.name == "main").unwrap();
        let cfg = ControlFlowGraph::compute(f);
        (m, cfg)
    }

    fn main(m: &ir::Module) -> &Function {
        m.funcs.values().find(|f| f.name == "main").unwrap()
    }

    fn blocks(f: &Function) -> Vec<Block> {
        f.layout.blocks().collect()
    }

    const LOOP: &str = r#"
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%0: i32, %1: i32):
  %2 = slt %0, 10
  br %2, bb2, bb3
bb2:
  %3 = add %1, %0
  %4 = add %0, 1
  jump bb1(%4, %3)
bb3:
  call @putint(%1)
  ret 0
}
"#;

    #[test]
    fn liveness_around_a_loop() {
        let (m, cfg) = setup(LOOP);
        let f = main(&m);
        let b = blocks(f);
        let s = solve(f, &cfg, &Liveness);
        let (i, sum) = (f.block_params(b[1])[0], f.block_params(b[1])[1]);
        let set = |v: &[Value]| v.iter().copied().collect::<BTreeSet<Value>>();
        // The header defines the counter and the sum; both are live out of it,
        // into the body, and the sum alone into the exit. The body passes new
        // values along the back edge, so nothing is live at its end.
        assert_eq!(s.at_start[b[1]], set(&[]));
        assert_eq!(s.at_end[b[1]], set(&[i, sum]));
        assert_eq!(s.at_start[b[2]], set(&[i, sum]));
        assert_eq!(s.at_end[b[2]], set(&[]));
        assert_eq!(s.at_start[b[3]], set(&[sum]));
        assert!(s.at_start[b[0]].is_empty());
    }

    /// Stores to @g on both arms reach the join; the one before the branch is
    /// killed on both. A store through another pointer kills nothing.
    #[test]
    fn reaching_stores_meet_at_a_join() {
        let src = r#"
global @g: i32 = 0
global @h: [i32; 4] = zeroinit

declare @getint() -> i32

func @main() -> i32 {
bb0:
  %0 = call @getint()
  store 1, @g
  %1 = gep @h, %0, 4
  store 5, %1
  br %0, bb1, bb2
bb1:
  store 2, @g
  jump bb3
bb2:
  store 3, @g
  jump bb3
bb3:
  %2 = load i32, @g
  ret %2
}
"#;
        let (m, cfg) = setup(src);
        let f = main(&m);
        let b = blocks(f);
        let s = solve(f, &cfg, &ReachingStores);
        let stores = |blk: Block| -> Vec<Inst> {
            f.layout
                .block_insts(blk)
                .filter(|&i| matches!(f.kind(i), InstKind::Store { .. }))
                .collect()
        };
        let (s0, s1, s2) = (stores(b[0]), stores(b[1]), stores(b[2]));
        let want: BTreeSet<Inst> = [s0[1], s1[0], s2[0]].into_iter().collect();
        assert_eq!(s.at_start[b[3]], want);
        assert_eq!(
            s.at_end[b[0]],
            [s0[0], s0[1]].into_iter().collect::<BTreeSet<_>>()
        );
    }

    /// A value loaded before a loop stays available around it when the loop
    /// writes only other memory; a call that writes memory makes it unknown.
    #[test]
    fn available_loads_survive_a_loop_that_writes_elsewhere() {
        let src = r#"
global @g: i32 = 7
global @out: [i32; 16] = zeroinit

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = alloc [i32; 4]
  store 3, %0
  %1 = load i32, @g
  jump bb1(0)
bb1(%2: i32):
  %3 = slt %2, 10
  br %3, bb2, bb3
bb2:
  %4 = gep %0, 1, 4
  store %2, %4
  %5 = add %2, 1
  jump bb1(%5)
bb3:
  call @putint(%1)
  ret 0
}
"#;
        let (m, cfg) = setup(src);
        let f = main(&m);
        let b = blocks(f);
        let purity = Purity::compute(&m);
        let s = solve(f, &cfg, &AvailableLoads { purity: &purity });
        let at = |blk: Block| s.at_start[blk].clone().expect("reachable");
        let first = |blk: Block, pick: &dyn Fn(&InstKind) -> Option<Value>| {
            f.layout
                .block_insts(blk)
                .find_map(|i| pick(f.kind(i)))
                .unwrap()
        };
        let g = first(b[0], &|k| match k {
            InstKind::Load { ptr, .. } => Some(*ptr),
            _ => None,
        });
        let local = first(b[0], &|k| match k {
            InstKind::Store { ptr, .. } => Some(*ptr),
            _ => None,
        });
        // @g's value survives the loop, which writes only the local array.
        let loaded = at(b[3]).get(&g).copied();
        assert!(matches!(loaded, Some((Type::I32, _))), "{loaded:?}");
        assert_eq!(at(b[1]).get(&g), at(b[2]).get(&g));
        // The store of 3 before the loop is known at its end, but the loop
        // stores into the same array: on the back edge, and so at the header
        // and the exit, the local's contents are unknown.
        let three = s.at_end[b[0]].as_ref().unwrap().get(&local).copied();
        assert!(matches!(three, Some((Type::I32, v)) if f.as_iconst(v) == Some(3)));
        assert!(!at(b[1]).contains_key(&local));
        assert!(!at(b[3]).contains_key(&local));
    }

    /// Work: a chain of blocks settles in one visit each; a loop adds a visit
    /// per block of the loop for each round around it.
    #[test]
    fn acyclic_code_is_visited_once_per_block() {
        let mut src = String::from("func @main() -> i32 {\nbb0:\n  jump bb1(0)\n");
        for k in 1..50 {
            src += &format!(
                "bb{k}(%{}: i32):\n  %{} = add %{}, 1\n  jump bb{}(%{})\n",
                2 * k,
                2 * k + 1,
                2 * k,
                k + 1,
                2 * k + 1
            );
        }
        src += "bb50(%100: i32):\n  ret %100\n}\n";
        let (m, cfg) = setup(&src);
        let f = main(&m);
        let s = solve(f, &cfg, &Liveness);
        assert_eq!(s.visits, 51);
        let purity = Purity::compute(&m);
        let s = solve(f, &cfg, &AvailableLoads { purity: &purity });
        assert_eq!(s.visits, 51);
    }
}
