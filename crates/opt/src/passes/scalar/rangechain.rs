//! Chains of comparisons of one value with constants become a range check and a
//! linear map.
//!
//! `if (a < 2) r = 1; else if (a < 3) r = 2; else if (a < 4) r = 3; ...` tests `a`
//! against each bound in turn, so the last values take as many branches as there
//! are cases. GCC turns such chains into a `switch` (`if-to-switch`) and the switch
//! into arithmetic when the result is a linear function of the tested value
//! (`switch conversion`'s linear transformation); LLVM's SimplifyCFG builds the
//! same from switches (`SwitchToLookupTable`, its `LinearMapKind`). Here both steps
//! are one:
//!
//! 1. A *chain* starts at a block `S` ending in `br (x op K), ...` with `x` an `i32`
//!    value and `K` a constant. Each next link is a successor with `S`'s block as
//!    its only predecessor, no parameters, and nothing but a comparison of the same
//!    `x` with a constant (used by nothing else) and a branch on it; the other
//!    successor of every link is the chain's *join* `J`. A successor that holds only
//!    `jump J(...)` ends the chain. Along the chain, the values of `x` that reach
//!    each block form an interval; each edge into `J` gets the interval of `x` for
//!    which it is taken (an `==` or `!=` test must leave intervals).
//! 2. For each parameter of `J`, the edges must pass the same value, or constants.
//!    Between the outermost intervals (the one holding `i32::MIN` and the one
//!    holding `i32::MAX`), every interval must give each parameter `a * x + b` for
//!    one `a` and `b` per parameter (an interval longer than one value needs
//!    `a = 0`).
//! 3. `S` then tests `x >= lo` and `x <= hi` (the core's bounds), passing the outer
//!    intervals' arguments to `J`, and computes `a * x + b` in a new block for the
//!    core. The links are left unreachable for `dce` and `simplifycfg`.
//!
//! Only chains of at least [`MIN_LINKS`] comparisons change: a shorter one costs
//! about as much as the two tests and the arithmetic.

use crate::analysis::{FunctionAnalyses, Preserved};
use crate::pipeline::FunctionTransform;
use ir::{BinOp, Block, BlockCall, CmpOp, Function, InstKind, Type, Value};

/// The range-chain pass.
pub struct RangeChain;

/// Comparisons a chain must have to be converted.
pub const MIN_LINKS: usize = 4;

impl FunctionTransform for RangeChain {
    const NAME: &'static str = "rangechain";
    const DESCRIPTION: &'static str =
        "chains of comparisons of one value with constants become a range check and a linear map";
    /// Adds a block and rewrites branches: the CFG changes.
    const PRESERVES: Preserved = Preserved::NOTHING.with_other_functions();
    fn transform(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
        run(f) > 0
    }
}

/// A closed interval of `i32` values (as `i64`, so bounds can step past the ends).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Interval {
    lo: i64,
    hi: i64,
}

impl Interval {
    const ALL: Interval = Interval {
        lo: i32::MIN as i64,
        hi: i32::MAX as i64,
    };

    fn is_empty(self) -> bool {
        self.lo > self.hi
    }

    /// The values of `self` for which `x op k` is `want`, if they form an interval.
    fn split(self, op: CmpOp, k: i64, want: bool) -> Option<Interval> {
        let (op, k) = if want { (op, k) } else { (negate(op)?, k) };
        let r = match op {
            CmpOp::Slt => Interval {
                lo: self.lo,
                hi: self.hi.min(k - 1),
            },
            CmpOp::Sle => Interval {
                lo: self.lo,
                hi: self.hi.min(k),
            },
            CmpOp::Sgt => Interval {
                lo: self.lo.max(k + 1),
                hi: self.hi,
            },
            CmpOp::Sge => Interval {
                lo: self.lo.max(k),
                hi: self.hi,
            },
            CmpOp::Eq => Interval {
                lo: self.lo.max(k),
                hi: self.hi.min(k),
            },
            CmpOp::Ne if k == self.lo => Interval {
                lo: self.lo + 1,
                hi: self.hi,
            },
            CmpOp::Ne if k == self.hi => Interval {
                lo: self.lo,
                hi: self.hi - 1,
            },
            CmpOp::Ne if k < self.lo || k > self.hi => self,
            _ => return None,
        };
        Some(r)
    }
}

fn negate(op: CmpOp) -> Option<CmpOp> {
    Some(match op {
        CmpOp::Slt => CmpOp::Sge,
        CmpOp::Sle => CmpOp::Sgt,
        CmpOp::Sgt => CmpOp::Sle,
        CmpOp::Sge => CmpOp::Slt,
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
        _ => return None,
    })
}

/// `cond` as `x op k` with `x` an `i32` value and `k` a constant.
fn test_of(f: &Function, cond: Value) -> Option<(Value, CmpOp, i64)> {
    let i = f.def_inst(cond)?;
    let InstKind::Cmp { op, args: [a, b] } = *f.kind(i) else {
        return None;
    };
    let (x, op, k) = match (f.as_iconst(a), f.as_iconst(b)) {
        (None, Some(k)) => (a, op, k),
        (Some(k), None) => (b, op.swapped(), k),
        _ => return None,
    };
    negate(op)?;
    (f.value_type(x) == Type::I32).then_some((x, op, k as i64))
}

/// One edge into the join: the values of `x` taking it, and its arguments.
struct Exit {
    set: Interval,
    args: Vec<Value>,
}

/// The chain found from a block: the tested value, the join and the exits.
struct Chain {
    x: Value,
    join: Block,
    links: usize,
    /// The blocks after the head.
    blocks: Vec<Block>,
    exits: Vec<Exit>,
}

/// Converts the chains of `f`; how many.
pub fn run(f: &mut Function) -> usize {
    if f.is_declaration() {
        return 0;
    }
    let preds = crate::passes::pred_counts(f);
    let blocks: Vec<Block> = f.layout.blocks().collect();
    let mut done = 0;
    let mut dead = f.block_map::<bool>();
    for s in blocks {
        if dead[s] {
            continue;
        }
        let Some(chain) = find_chain(f, &preds, s) else {
            continue;
        };
        // A chain's links are not heads of chains of their own (converted, they
        // are dead; if not, their suffixes rarely do better): each block is walked
        // once, whatever the chains' lengths.
        for &b in &chain.blocks {
            dead[b] = true;
        }
        if chain.links >= MIN_LINKS && convert(f, s, &chain) {
            done += 1;
        }
    }
    done
}

/// The branch at the end of `b` as (condition, then, else).
fn branch(f: &Function, b: Block) -> Option<(Value, BlockCall, BlockCall)> {
    let t = f.terminator(b)?;
    match f.kind(t) {
        InstKind::Br {
            cond,
            then_dest,
            else_dest,
        } => Some((*cond, *then_dest.clone(), *else_dest.clone())),
        _ => None,
    }
}

/// Whether `b` is a link testing `x`: one predecessor, no parameters, a comparison
/// of `x` with a constant that only its branch reads, and the branch.
fn is_link(f: &Function, preds: &ir::SecondaryMap<Block, u32>, b: Block, x: Value) -> bool {
    if preds[b] != 1 || !f.block_params(b).is_empty() {
        return false;
    }
    let mut insts = f.layout.block_insts(b);
    let (Some(cmp), Some(_), None) = (insts.next(), insts.next(), insts.next()) else {
        return false;
    };
    let Some((cond, _, _)) = branch(f, b) else {
        return false;
    };
    f.inst_result(cmp) == Some(cond)
        && f.users(cond).len() == 1
        && test_of(f, cond).is_some_and(|(y, _, _)| y == x)
}

/// Where `b` leads, past blocks that only jump on (one predecessor, no parameters,
/// a jump passing nothing), as `simplifycfg` would merge them.
fn forward(f: &Function, preds: &ir::SecondaryMap<Block, u32>, mut b: Block) -> Block {
    for _ in 0..8 {
        if preds[b] != 1 || !f.block_params(b).is_empty() {
            break;
        }
        let mut insts = f.layout.block_insts(b);
        let (Some(only), None) = (insts.next(), insts.next()) else {
            break;
        };
        match f.kind(only) {
            InstKind::Jump { dest } if dest.args.is_empty() && dest.block != b => b = dest.block,
            _ => break,
        }
    }
    b
}

/// A block holding only `jump join(args)` with one predecessor: its arguments.
fn final_jump(
    f: &Function,
    preds: &ir::SecondaryMap<Block, u32>,
    b: Block,
    join: Block,
) -> Option<Vec<Value>> {
    if preds[b] != 1 || !f.block_params(b).is_empty() {
        return None;
    }
    let mut insts = f.layout.block_insts(b);
    let (Some(only), None) = (insts.next(), insts.next()) else {
        return None;
    };
    match f.kind(only) {
        InstKind::Jump { dest } if dest.block == join => Some(dest.args.to_vec()),
        _ => None,
    }
}

fn find_chain(f: &Function, preds: &ir::SecondaryMap<Block, u32>, s: Block) -> Option<Chain> {
    let (cond, t, e) = branch(f, s)?;
    let (x, _, _) = test_of(f, cond)?;
    // The join is the side that is not a link.
    let (tb, eb) = (forward(f, preds, t.block), forward(f, preds, e.block));
    let join = match (is_link(f, preds, tb, x), is_link(f, preds, eb, x)) {
        (true, false) => e.block,
        (false, true) => t.block,
        _ => return None,
    };
    if join == s {
        return None;
    }
    let mut chain = Chain {
        x,
        join,
        links: 0,
        blocks: Vec::new(),
        exits: Vec::new(),
    };
    let mut cur = s;
    let mut set = Interval::ALL;
    loop {
        let (cond, t, e) = branch(f, cur)?;
        let (y, op, k) = test_of(f, cond)?;
        if y != x {
            return None;
        }
        chain.links += 1;
        let then_set = set.split(op, k, true)?;
        let else_set = set.split(op, k, false)?;
        let mut next = None;
        for (dest, part) in [(t, then_set), (e, else_set)] {
            let to = if dest.block == join {
                join
            } else {
                forward(f, preds, dest.block)
            };
            if to == join {
                if !part.is_empty() {
                    chain.exits.push(Exit {
                        set: part,
                        args: dest.args.to_vec(),
                    });
                }
            } else if next.is_none() {
                next = Some((to, part));
            } else {
                return None;
            }
        }
        let Some((n, part)) = next else {
            // Both sides go to the join: the chain ends here.
            return Some(chain);
        };
        set = part;
        if n == s {
            return None;
        }
        chain.blocks.push(n);
        if is_link(f, preds, n, x) {
            cur = n;
            continue;
        }
        let args = final_jump(f, preds, n, join)?;
        if !set.is_empty() {
            chain.exits.push(Exit { set, args });
        }
        return Some(chain);
    }
}

/// What the join receives at one parameter position.
enum Param {
    /// The same value on every edge.
    Same(Value),
    /// `a * x + b` in the core, and the constants of the outer intervals.
    Linear { a: i64, b: i64 },
}

/// Rewrites `s`'s branch for `chain`; whether it could.
fn convert(f: &mut Function, s: Block, chain: &Chain) -> bool {
    let mut exits: Vec<&Exit> = chain.exits.iter().collect();
    exits.sort_by_key(|e| e.set.lo);
    // The exits must cover every value once.
    let mut next = Interval::ALL.lo;
    for e in &exits {
        if e.set.lo != next {
            return false;
        }
        next = e.set.hi + 1;
    }
    if next != Interval::ALL.hi + 1 {
        return false;
    }
    let n = f.block_params(chain.join).len();
    if exits.iter().any(|e| e.args.len() != n) {
        return false;
    }
    let low = exits[0];
    let high = exits[exits.len() - 1];
    let core: Vec<&Exit> = exits[1..exits.len() - 1].to_vec();
    let (Some(first), Some(last)) = (core.first(), core.last()) else {
        return false;
    };
    let (lo, hi) = (first.set.lo, last.set.hi);
    let mut params = Vec::with_capacity(n);
    for p in 0..n {
        let v0 = exits[0].args[p];
        if exits.iter().all(|e| e.args[p] == v0) {
            params.push(Param::Same(v0));
            continue;
        }
        let mut consts = Vec::with_capacity(exits.len());
        for e in &exits {
            match f.as_iconst(e.args[p]) {
                Some(c) => consts.push(c as i64),
                None => return false,
            }
        }
        // The slope from the first point of the core to the last.
        let (x0, y0) = (lo, consts[1]);
        let (x1, y1) = (last.set.hi, consts[consts.len() - 2]);
        let a = if x1 == x0 { 0 } else { (y1 - y0) / (x1 - x0) };
        let b = y0 - a * x0;
        let fits = core.iter().zip(&consts[1..]).all(|(e, &c)| {
            let at = |x: i64| (a * x + b) as i32 as i64;
            (e.set.lo == e.set.hi || a == 0) && at(e.set.lo) == c && at(e.set.hi) == c
        });
        if !fits || i32::try_from(a).is_err() || i32::try_from(b).is_err() {
            return false;
        }
        params.push(Param::Linear { a, b });
    }
    // Build: s tests lo <= x, then x <= hi, then computes the map.
    let join = chain.join;
    let x = chain.x;
    let term = f.terminator(s).expect("chain head ends in a branch");
    f.remove_inst(term);
    let check_hi = f.create_block();
    f.layout.insert_block_after(check_hi, s);
    let body = f.create_block();
    f.layout.insert_block_after(body, check_hi);
    let lo_v = f.iconst(lo as i32);
    let c_lo = append(f, s, cmp(CmpOp::Sge, x, lo_v));
    branch_to(f, s, c_lo, check_hi, BlockCall::new(join, low.args.clone()));
    let hi_v = f.iconst(hi as i32);
    let c_hi = append(f, check_hi, cmp(CmpOp::Sle, x, hi_v));
    branch_to(
        f,
        check_hi,
        c_hi,
        body,
        BlockCall::new(join, high.args.clone()),
    );
    let mut args = Vec::with_capacity(n);
    for p in &params {
        let v = match *p {
            Param::Same(v) => v,
            Param::Linear { a: 0, b } => f.iconst(b as i32),
            Param::Linear { a, b } => {
                let mut v = x;
                if a != 1 {
                    let av = f.iconst(a as i32);
                    v = append(f, body, binary(BinOp::Mul, v, av));
                }
                if b != 0 {
                    let bv = f.iconst(b as i32);
                    v = append(f, body, binary(BinOp::Add, v, bv));
                }
                v
            }
        };
        args.push(v);
    }
    f.append_inst(
        body,
        InstKind::Jump {
            dest: Box::new(BlockCall::new(join, args)),
        },
        Type::Void,
    );
    true
}

fn cmp(op: CmpOp, a: Value, b: Value) -> InstKind {
    InstKind::Cmp { op, args: [a, b] }
}

fn binary(op: BinOp, a: Value, b: Value) -> InstKind {
    InstKind::Binary { op, args: [a, b] }
}

/// Appends the `i32` instruction `kind` to `b`; its result.
fn append(f: &mut Function, b: Block, kind: InstKind) -> Value {
    let i = f.append_inst(b, kind, Type::I32);
    f.inst_result(i).expect("an i32 instruction has a result")
}

/// Ends `b` with `br cond, then(), other`.
fn branch_to(f: &mut Function, b: Block, cond: Value, then: Block, other: BlockCall) {
    let kind = InstKind::Br {
        cond,
        then_dest: Box::new(BlockCall::new(then, Vec::<Value>::new())),
        else_dest: Box::new(other),
    };
    f.append_inst(b, kind, Type::Void);
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// `r = a` for 1 <= a <= `n`, else 100, as a chain testing `a < k` from the top.
    fn chain(n: i32) -> String {
        let mut s = String::from(
            "declare @getint() -> i32\ndeclare @putint(i32) -> void\n\nfunc @main() -> i32 {\nbb0:\n  %0 = call @getint()\n  %1 = sgt %0, 0\n",
        );
        s += "  br %1, bb2, bb1(100)\nbb1(%2: i32):\n  call @putint(%2)\n  ret 0\n";
        for (v, k) in (3..).zip((2..=n + 1).rev()) {
            let b = 2 + (n + 1 - k);
            let next = format!("bb{}", b + 1);
            let fail = if k == n + 1 { 100 } else { k };
            s += &format!("bb{b}:\n  %{v} = slt %0, {k}\n  br %{v}, {next}, bb1({fail})\n");
        }
        s += &format!("bb{}:\n  jump bb1(1)\n}}\n", n + 2);
        s
    }

    #[test]
    fn a_chain_of_range_tests_becomes_a_linear_map() {
        let src = chain(8);
        for input in ["-5", "0", "1", "2", "5", "8", "9", "100", "2147483647"] {
            let out = same_behaviour(&src, &["rangechain", "dce", "simplifycfg"], input);
            assert_eq!(out.matches("slt").count(), 0, "{out}");
            assert!(
                out.contains("sge %0, 1") && out.contains("sle %0, 8"),
                "{out}"
            );
        }
    }

    #[test]
    fn links_behind_empty_blocks_and_a_last_test_with_both_sides_to_the_join() {
        // As the front end leaves nested ifs: each link is reached through a block
        // that only jumps on, and the last test sends both sides to the join.
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = sgt %0, 0
  br %1, bb2, bb1(50)
bb1(%2: i32):
  call @putint(%2)
  ret 0
bb2:
  %3 = slt %0, 5
  br %3, bb3, bb1(50)
bb3:
  jump bb4
bb4:
  %4 = slt %0, 4
  br %4, bb5, bb1(12)
bb5:
  jump bb6
bb6:
  %5 = slt %0, 3
  br %5, bb7, bb1(9)
bb7:
  %6 = slt %0, 2
  br %6, bb1(3), bb1(6)
}
"#;
        for input in ["-1", "0", "1", "2", "3", "4", "5", "6"] {
            let out = same_behaviour(src, &["rangechain", "dce", "simplifycfg"], input);
            assert_eq!(out.matches("slt").count(), 0, "{out}");
            assert!(out.contains("mul %0, 3"), "{out}");
        }
    }

    #[test]
    fn a_short_chain_stays() {
        let src = chain(2);
        let out = run(&src, &["rangechain"]);
        assert_eq!(out.matches("slt").count(), 2, "{out}");
    }

    #[test]
    fn values_that_are_not_linear_stay_branches() {
        // Case 3 passes 7 instead of 3: no a*x+b fits.
        let src = chain(6).replace("bb1(3)", "bb1(7)");
        let out = same_behaviour(&src, &["rangechain"], "3");
        assert_eq!(out.matches("slt").count(), 6, "{out}");
    }

    #[test]
    fn a_link_with_other_work_ends_the_chain_before_it() {
        // The fourth link also prints: it is not a link, and the chain before it
        // ends in a block that is not a plain jump to the join, so nothing changes.
        let src = chain(6).replace(
            "bb5:\n  %6 = slt %0, 4",
            "bb5:\n  call @putint(%0)\n  %6 = slt %0, 4",
        );
        assert!(src.contains("call @putint(%0)"));
        let out = same_behaviour(&src, &["rangechain"], "2");
        assert_eq!(out.matches("slt").count(), 6, "{out}");
    }
}
