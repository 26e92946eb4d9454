//! Memoisation of recursive functions: a function whose result depends only on
//! its arguments and on memory it does not change, and that calls itself more than
//! once, gets a cache of results in global memory, keyed on its arguments. Tree
//! recursion that meets the same arguments again and again (`fib(n - 1) +
//! fib(n - 2)`, a knapsack's `best(i - 1, w)` and `best(i - 1, w - weight[i])` on
//! global tables) then runs each distinct call once: exponential work becomes
//! linear in the number of distinct argument tuples.
//!
//! This is Michie's memo functions ("Memo functions and machine learning", Nature
//! 218, 1968), applied by the compiler as in automatic memoisation of pure functions
//! (Acar, Blelloch and Harper, "Selective memoization", POPL 2003, on when it is
//! sound: the function must be a function of its arguments and of state that
//! cannot change while the cache is in use).
//!
//! Conditions, all proven, none guessed:
//! - the function has no side effects ([`Purity`]): it writes no memory but its
//!   own locals and does no I/O (recursion does not count; a function that counts
//!   its calls in a global, or prints, is left alone);
//! - its parameters (at most [`MAX_PARAMS`]) and result are `i32` or `f32`;
//! - its body has at least two calls of itself (a single self-call is a linear
//!   recursion that memoisation cannot shorten within one top-level call);
//! - it is not `main`;
//! - when it reads memory: some parameter steps by a constant in every self-call
//!   (see [`descends_by_constant_steps`]; recursions over tables that only divide
//!   them, or walk a tree stored in them, meet no argument twice).
//!
//! How long a result stays valid ([`Scope`]):
//! - a *pure* function (it reads no memory either) is a function of its arguments
//!   alone, so its cache lives for the whole run: `f` is copied to `f.memo` (the
//!   computation, unchanged: its recursive calls still call `f`), and `f` becomes
//!   the lookup;
//! - a function that *reads* memory (global tables) depends on memory the program
//!   may change between calls, but nothing at all writes memory while it runs (it
//!   and all it calls have no side effects), so its cache is valid for one call
//!   from outside, the way a dynamic-programming table is valid for one problem.
//!   The cache entries carry a generation: `f` becomes the entry, which increments
//!   the generation counter `f.memo.gen` and calls `f.memo.lookup`, and the
//!   computation `f.memo` calls `f.memo.lookup` for its recursive calls, so they
//!   share the entries of the current generation. When the counter wraps to 0,
//!   the entry empties the table and starts again at 1 (0 marks an empty slot).
//!
//! The lookup hashes the arguments (an `f32` by its bit pattern, so `-0.0` and
//! `+0.0` are different keys and a NaN can match itself), loads the slot of a
//! direct-mapped table of [`TABLE_SIZE`] entries, and returns the stored result
//! when the slot is in use (by the current generation) and every stored key equals
//! its argument bit for bit. Otherwise it calls `f.memo`, stores the keys and the
//! result in the slot (replacing whatever was there), and returns the result. A
//! collision costs only a recomputation, so the program's behaviour is the same for
//! every input; the tables cost `(params + 2) * 4 * TABLE_SIZE` bytes of `.bss` per
//! memoised function.

use crate::analysis::purity::Purity;
use crate::pipeline::Pass;
use ir::{
    BinOp, CmpOp, FuncBuilder, FuncId, Function, GlobalData, GlobalId, GlobalInit, InstKind,
    Module, Type, UnOp, Value,
};
use rustc_hash::FxHashSet;

/// The memoisation pass.
pub struct Memoize;

impl Pass for Memoize {
    fn name(&self) -> &'static str {
        "memoize"
    }
    fn description(&self) -> &'static str {
        "cache the results of side-effect-free functions that call themselves more than once"
    }
    fn run(&self, m: &mut Module) -> bool {
        run(m) > 0
    }
}

/// Entries of each function's table (a power of two).
pub const TABLE_SIZE: u32 = 1 << 12;
/// At most this many parameters make a key.
pub const MAX_PARAMS: usize = 4;

/// How long a function's cached results stay valid.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Scope {
    /// The whole run: the function is pure.
    Program,
    /// One call from outside the recursion: the function reads memory but writes
    /// none and does no I/O, so nothing it reads changes while it runs; the next
    /// call from outside may find memory changed and starts a new generation.
    Call,
}

/// Memoises every qualifying function of `m`; returns how many.
pub fn run(m: &mut Module) -> usize {
    let purity = Purity::compute(m);
    let ids: Vec<FuncId> = m.funcs.keys().collect();
    // The functions' names, kept up to date (looking each name up in the
    // module is quadratic in the number of functions).
    let mut names: FxHashSet<String> = m.funcs.values().map(|f| f.name.clone()).collect();
    let mut done = 0;
    for id in ids {
        if let Some(scope) = qualifies(m, id, &purity, &names) {
            let name = memo_name(&m.funcs[id].name);
            names.insert(format!("{name}.lookup"));
            names.insert(name);
            memoize(m, id, scope);
            done += 1;
        }
    }
    done
}

/// Whether `id` meets the conditions of the module doc, and for how long its
/// results may be kept.
fn qualifies(m: &Module, id: FuncId, purity: &Purity, names: &FxHashSet<String>) -> Option<Scope> {
    let f = &m.funcs[id];
    let scalar = |t: Type| matches!(t, Type::I32 | Type::F32);
    let effects = purity.effects(id);
    if f.is_declaration()
        || f.name == "main"
        || f.sig.variadic
        || f.sig.params.is_empty()
        || f.sig.params.len() > MAX_PARAMS
        || !f.sig.params.iter().all(|&t| scalar(t))
        || !scalar(f.sig.ret)
        || names.contains(&memo_name(&f.name))
        || names.contains(&format!("{}.lookup", memo_name(&f.name)))
        || effects.has_side_effects()
        || !calls_itself_twice(f, id)
    {
        return None;
    }
    if effects.is_pure() {
        Some(Scope::Program)
    } else {
        descends_by_constant_steps(f, id).then_some(Scope::Call)
    }
}

/// Whether some parameter of `f` steps by a constant in every self-call (`p`,
/// `p + c`, `p - c`), by a non-zero one in at least one: the recursion descends
/// along a counted dimension, as a dynamic-programming recurrence does over its
/// stages (`best(i - 1, w)` and `best(i - 1, w - weight[i])`), so different paths
/// of the call tree meet the same arguments. A divide and conquer over a table
/// (`sum(l, mid) + sum(mid + 1, r)`) or a walk of a tree stored in arrays
/// (`size(left[v]) + size(right[v])`) calls each argument tuple once, and a cache
/// would only cost.
fn descends_by_constant_steps(f: &Function, id: FuncId) -> bool {
    let params = f.block_params(f.entry_block());
    let step = |a: Value, p: Value| -> Option<i32> {
        if a == p {
            return Some(0);
        }
        match *f.kind(f.def_inst(a)?) {
            InstKind::Binary {
                op: BinOp::Add,
                args: [x, y],
            } if x == p => f.as_iconst(y),
            InstKind::Binary {
                op: BinOp::Add,
                args: [x, y],
            } if y == p => f.as_iconst(x),
            InstKind::Binary {
                op: BinOp::Sub,
                args: [x, y],
            } if x == p => f.as_iconst(y).map(i32::wrapping_neg),
            _ => None,
        }
    };
    let calls: Vec<&[Value]> = f
        .layout
        .blocks()
        .flat_map(|b| f.layout.block_insts(b))
        .filter_map(|i| match f.kind(i) {
            InstKind::Call { callee, args } if *callee == id => Some(&args[..]),
            _ => None,
        })
        .collect();
    (0..params.len()).any(|k| {
        let steps: Option<Vec<i32>> = calls.iter().map(|args| step(args[k], params[k])).collect();
        steps.is_some_and(|s| s.iter().any(|&c| c != 0))
    })
}

/// Whether one run of `f` can make two calls of `id`: some self-call is followed,
/// later in its block or in a block reachable from it, by another. (A recursion
/// that calls itself on one arm or the other, as `pow(x, n - 1)` and
/// `1 / pow(x, -n)`, is linear: nothing repeats within one top-level call.)
fn calls_itself_twice(f: &Function, id: FuncId) -> bool {
    let is_self_call =
        |i: ir::Inst| matches!(f.kind(i), InstKind::Call { callee, .. } if *callee == id);
    let blocks_with_calls: Vec<ir::Block> = f
        .layout
        .blocks()
        .filter(|&b| f.layout.block_insts(b).any(is_self_call))
        .collect();
    for &b in &blocks_with_calls {
        if f.layout.block_insts(b).filter(|&i| is_self_call(i)).count() >= 2 {
            return true;
        }
        // Blocks reachable from b's end (b itself when b is in a loop).
        let mut reached = f.block_map::<bool>();
        let mut work: Vec<ir::Block> = f.successors(b).to_vec();
        while let Some(x) = work.pop() {
            if !reached[x] {
                reached[x] = true;
                work.extend(f.successors(x));
            }
        }
        if blocks_with_calls.iter().any(|&c| reached[c]) {
            return true;
        }
    }
    false
}

fn memo_name(name: &str) -> String {
    format!("{name}.memo")
}

/// Splits `id` into the lookup and `NAME.memo`, the computation. With
/// [`Scope::Program`] the lookup keeps the name and id, so every caller, the
/// recursive calls included, goes through the cache. With [`Scope::Call`] the
/// lookup is `NAME.memo.lookup`, which the computation's self-calls call, and `id`
/// becomes the entry from outside: it starts a new generation of the cache and
/// calls the lookup.
fn memoize(m: &mut Module, id: FuncId, scope: Scope) {
    let name = m.funcs[id].name.clone();
    let sig = m.funcs[id].sig.clone();
    let mut compute = m.funcs[id].clone();
    compute.name = memo_name(&name);
    let compute = m.add_function(compute);

    let mut table = |suffix: &str, elem: Type, len: u32| -> GlobalId {
        m.add_global(GlobalData {
            name: format!("{name}.memo.{suffix}"),
            elem,
            len,
            init: GlobalInit::Zero,
        })
    };
    let tables = Tables {
        used: table("used", Type::I32, TABLE_SIZE),
        keys: (0..sig.params.len())
            .map(|j| table(&format!("key{j}"), Type::I32, TABLE_SIZE))
            .collect(),
        result: table("result", sig.ret, TABLE_SIZE),
        generation: (scope == Scope::Call).then(|| table("gen", Type::I32, 1)),
    };
    match tables.generation {
        None => m.funcs[id] = lookup(name, &sig, compute, &tables),
        Some(generation) => {
            let placeholder = Function::new(format!("{}.lookup", memo_name(&name)), sig.clone());
            let lookup_id = m.add_function(placeholder);
            m.funcs[lookup_id] = lookup(
                format!("{}.lookup", memo_name(&name)),
                &sig,
                compute,
                &tables,
            );
            // The computation's self-calls stay within the generation.
            let c = &mut m.funcs[compute];
            let calls: Vec<ir::Inst> = c
                .layout
                .blocks()
                .flat_map(|b| c.layout.block_insts(b).collect::<Vec<_>>())
                .filter(|&i| matches!(c.kind(i), InstKind::Call { callee, .. } if *callee == id))
                .collect();
            for i in calls {
                let InstKind::Call { args, .. } = c.kind(i).clone() else {
                    unreachable!()
                };
                c.replace_kind(
                    i,
                    InstKind::Call {
                        callee: lookup_id,
                        args,
                    },
                );
            }
            m.funcs[id] = entry(name, &sig, lookup_id, tables.used, generation);
        }
    }
}

/// A memoised function's tables (globals of [`TABLE_SIZE`] entries) and, for
/// [`Scope::Call`], its generation counter.
struct Tables {
    /// The generation that stored the slot (`1` for [`Scope::Program`]); `0`: empty.
    used: GlobalId,
    keys: Vec<GlobalId>,
    result: GlobalId,
    generation: Option<GlobalId>,
}

/// The lookup: returns the stored result when the slot is in use (by the current
/// generation) and its keys equal the arguments; otherwise calls `compute` and
/// stores its result.
fn lookup(name: String, sig: &ir::Signature, compute: FuncId, t: &Tables) -> Function {
    let mut f = Function::new(name, sig.clone());
    let entry = f.append_new_block();
    let params: Vec<Value> = sig
        .params
        .iter()
        .map(|&t| f.append_block_param(entry, t))
        .collect();
    let hit = f.append_new_block();
    let miss = f.append_new_block();
    let used_addr = f.global_addr(t.used);
    let key_addrs: Vec<Value> = t.keys.iter().map(|&g| f.global_addr(g)).collect();
    let result_addr = f.global_addr(t.result);
    let gen_addr = t.generation.map(|g| f.global_addr(g));

    let mut b = FuncBuilder::new(&mut f);
    b.switch_to_block(entry);
    // The keys: the arguments' bit patterns as i32.
    let bits: Vec<Value> = params
        .iter()
        .zip(&sig.params)
        .map(|(&p, &t)| {
            if t == Type::F32 {
                b.unary(UnOp::FBits, p)
            } else {
                p
            }
        })
        .collect();
    let slot = slot_index(&mut b, &bits);
    let used_ptr = b.gep(used_addr, slot, 4);
    let in_use = b.load(Type::I32, used_ptr);
    let mut found = match gen_addr {
        None => {
            let zero = b.iconst(0);
            b.cmp(CmpOp::Ne, in_use, zero)
        }
        Some(g) => {
            let current = b.load(Type::I32, g);
            b.cmp(CmpOp::Eq, in_use, current)
        }
    };
    let key_ptrs: Vec<Value> = key_addrs.iter().map(|&a| b.gep(a, slot, 4)).collect();
    for (&ptr, &key) in key_ptrs.iter().zip(&bits) {
        let stored = b.load(Type::I32, ptr);
        let same = b.cmp(CmpOp::Eq, stored, key);
        found = b.binary(BinOp::And, found, same);
    }
    let result_ptr = b.gep(result_addr, slot, 4);
    b.br(found, hit, Vec::new(), miss, Vec::new());

    b.switch_to_block(hit);
    let cached = b.load(sig.ret, result_ptr);
    b.ret(Some(cached));

    b.switch_to_block(miss);
    let value = b
        .call(compute, params.clone(), sig.ret)
        .expect("the result type is i32 or f32");
    // The generation after the call: a call from outside made within it (through
    // another function) started a new one, and the result, computed while memory
    // did not change, is valid in it too.
    let stamp = match gen_addr {
        None => b.iconst(1),
        Some(g) => b.load(Type::I32, g),
    };
    b.store(stamp, used_ptr);
    for (&ptr, &key) in key_ptrs.iter().zip(&bits) {
        b.store(key, ptr);
    }
    b.store(value, result_ptr);
    b.ret(Some(value));
    f
}

/// The entry of a [`Scope::Call`] function from outside: the next generation
/// (when the counter wraps to 0, every slot is emptied and the generation is 1, so
/// a stale slot can never match), then the lookup.
fn entry(
    name: String,
    sig: &ir::Signature,
    lookup: FuncId,
    used: GlobalId,
    generation: GlobalId,
) -> Function {
    let mut f = Function::new(name, sig.clone());
    let start = f.append_new_block();
    let params: Vec<Value> = sig
        .params
        .iter()
        .map(|&t| f.append_block_param(start, t))
        .collect();
    let clear = f.append_new_block();
    let clear_loop = f.append_new_block();
    let i = f.append_block_param(clear_loop, Type::I32);
    let cleared = f.append_new_block();
    let call = f.append_new_block();
    let used_addr = f.global_addr(used);
    let gen_addr = f.global_addr(generation);

    let mut b = FuncBuilder::new(&mut f);
    b.switch_to_block(start);
    let old = b.load(Type::I32, gen_addr);
    let one = b.iconst(1);
    let next = b.binary(BinOp::Add, old, one);
    b.store(next, gen_addr);
    let zero = b.iconst(0);
    let wrapped = b.cmp(CmpOp::Eq, next, zero);
    b.br(wrapped, clear, Vec::new(), call, Vec::new());

    b.switch_to_block(clear);
    b.jump(clear_loop, vec![zero]);
    b.switch_to_block(clear_loop);
    let ptr = b.gep(used_addr, i, 4);
    b.store(zero, ptr);
    let i_next = b.binary(BinOp::Add, i, one);
    let size = b.iconst(TABLE_SIZE as i32);
    let more = b.cmp(CmpOp::Slt, i_next, size);
    b.br(more, clear_loop, vec![i_next], cleared, Vec::new());
    b.switch_to_block(cleared);
    b.store(one, gen_addr);
    b.jump(call, Vec::new());

    b.switch_to_block(call);
    let value = b
        .call(lookup, params, sig.ret)
        .expect("the result type is i32 or f32");
    b.ret(Some(value));
    f
}

/// The table slot of a key: the words combined FNV-style, then mixed so that keys
/// differing only in high bits spread (xor-shift and multiply, as in MurmurHash3's
/// finaliser), masked to the table size.
fn slot_index(b: &mut FuncBuilder, words: &[Value]) -> Value {
    let mut h = words[0];
    for &w in &words[1..] {
        let prime = b.iconst(0x0100_0193);
        let scaled = b.binary(BinOp::Mul, h, prime);
        h = b.binary(BinOp::Xor, scaled, w);
    }
    for mult in [0x85eb_ca6bu32 as i32, 0xc2b2_ae35u32 as i32] {
        let sixteen = b.iconst(16);
        let high = b.binary(BinOp::LShr, h, sixteen);
        let mixed = b.binary(BinOp::Xor, h, high);
        let c = b.iconst(mult);
        h = b.binary(BinOp::Mul, mixed, c);
    }
    let sixteen = b.iconst(16);
    let high = b.binary(BinOp::LShr, h, sixteen);
    h = b.binary(BinOp::Xor, h, high);
    let mask = b.iconst(TABLE_SIZE as i32 - 1);
    b.binary(BinOp::And, h, mask)
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{fib_module, fib_named, same_behaviour, FACT};

    /// fib through two self-calls: memoised, same output.
    fn fib() -> String {
        fib_module(&[25, -3])
    }

    #[test]
    fn tree_recursion_gets_a_cache() {
        let out = same_behaviour(&fib(), &["memoize"], "");
        assert!(out.contains("func @fib.memo(i32) -> i32"), "{out}");
        assert!(out.contains("global @fib.memo.used: [i32; 4096]"), "{out}");
        let lookup = &out[out.find("func @fib(").unwrap()..];
        let lookup = &lookup[..lookup.find("\n}").unwrap()];
        assert!(lookup.contains("call @fib.memo(%0)"), "{lookup}");
        // The computation still recurses through the cache.
        let compute = &out[out.find("func @fib.memo(").unwrap()..];
        assert!(compute.contains("call @fib(%2)"), "{compute}");
    }

    #[test]
    fn memoised_fib_runs_in_linear_steps() {
        // fib(25) takes ~250 000 calls unmemoised; the interpreter's step budget in
        // `exec` would allow it, so count steps instead: memoised, a few thousand.
        let out = same_behaviour(&fib(), &["memoize"], "");
        let m = ir::parse_module(&out).unwrap();
        let stdout = crate::passes::testutil::exec_within(&m, "", 100_000);
        assert_eq!(stdout.as_deref(), Some("75025-3"));
    }

    #[test]
    fn float_keys_are_bit_patterns() {
        // g(x, n) = g(x, n-1) - g(-x, n-1), g(x, 0) = 1 / x: +0.0 and -0.0 give
        // +inf and -inf, so a cache keyed on float equality would be wrong.
        let src = r#"
declare @putfloat(f32) -> void
declare @putch(i32) -> void

func @g(f32, i32) -> f32 {
bb0(%0: f32, %1: i32):
  %2 = sle %1, 0
  br %2, bb1, bb2
bb1:
  %3 = fdiv 1.0, %0
  ret %3
bb2:
  %4 = sub %1, 1
  %5 = call @g(%0, %4)
  %6 = fneg %0
  %7 = call @g(%6, %4)
  %8 = fsub %5, %7
  ret %8
}

func @main() -> i32 {
bb0:
  %0 = call @g(0.0, 3)
  call @putfloat(%0)
  call @putch(10)
  %1 = fneg 0.0
  %2 = call @g(%1, 3)
  call @putfloat(%2)
  call @putch(10)
  %3 = call @g(0.5, 12)
  call @putfloat(%3)
  ret 0
}
"#;
        let out = same_behaviour(src, &["memoize"], "");
        assert!(out.contains("fbits %0"), "{out}");
    }

    /// `h(n)` = `h(n - 1) + h(n - 1)`, `h(0)` = the global `@k`: it reads memory
    /// but writes none. `main` changes `@k` between two calls.
    const READS_K: &str = r#"
global @k: i32 = 1

declare @putint(i32) -> void
declare @putch(i32) -> void

func @h(i32) -> i32 {
bb0(%0: i32):
  %1 = slt %0, 1
  br %1, bb1, bb2
bb1:
  %2 = load i32, @k
  ret %2
bb2:
  %3 = sub %0, 1
  %4 = call @h(%3)
  %5 = call @h(%3)
  %6 = add %4, %5
  ret %6
}

func @main() -> i32 {
bb0:
  %0 = call @h(4)
  call @putint(%0)
  call @putch(32)
  store 5, @k
  %1 = call @h(4)
  call @putint(%1)
  call @putch(32)
  %2 = call @h(20)
  call @putint(%2)
  ret 0
}
"#;

    #[test]
    fn a_function_reading_memory_is_cached_for_one_call() {
        // h reads @k, which main changes between calls: each call from outside
        // starts a new generation, so the second sees 5, not the cached 1.
        let out = same_behaviour(READS_K, &["memoize"], "");
        assert!(out.contains("func @h.memo.lookup(i32) -> i32"), "{out}");
        assert!(out.contains("global @h.memo.gen: i32 = 0"), "{out}");
        let entry = &out[out.find("func @h(").unwrap()..];
        let entry = &entry[..entry.find("\n}").unwrap()];
        assert!(entry.contains("call @h.memo.lookup(%0)"), "{entry}");
        assert!(!entry.contains("call @h.memo("), "{entry}");
        // The computation recurses through the lookup, within the generation.
        let compute = &out[out.find("func @h.memo(").unwrap()..];
        let compute = &compute[..compute.find("\n}").unwrap()];
        assert!(compute.contains("call @h.memo.lookup(%3)"), "{compute}");
        assert!(!compute.contains("call @h("), "{compute}");
        // h(20) makes 2^21 calls unmemoised; with the cache, a few hundred steps.
        let m = ir::parse_module(&out).unwrap();
        let stdout = crate::passes::testutil::exec_within(&m, "", 100_000);
        assert_eq!(stdout.as_deref(), Some("16 80 5242880"));
    }

    #[test]
    fn a_wrapping_generation_empties_the_cache() {
        // With the counter at -1, the next call's generation would be 0, which
        // every empty slot (keys 0, result 0) carries: h(0) would return 0 from an
        // empty slot. The entry empties the table and starts at 1 instead.
        let out = same_behaviour(READS_K, &["memoize"], "");
        let wrapped = out.replace(
            "global @h.memo.gen: i32 = 0",
            "global @h.memo.gen: i32 = -1",
        );
        assert_ne!(wrapped, out);
        let m = ir::parse_module(&wrapped).unwrap();
        let stdout = crate::passes::testutil::exec_within(&m, "", 1_000_000);
        assert_eq!(stdout.as_deref(), Some("16 80 5242880"));
    }

    #[test]
    fn recursions_over_tables_that_meet_no_argument_twice_are_left_alone() {
        // size(v) walks a tree stored in @left/@right; sum(l, r) halves a range of
        // @a. Both read memory and write none, but no parameter steps by a
        // constant: every argument tuple comes once, a cache would only cost.
        let src = r#"
global @left: [i32; 8] = [0, 2, 4, 6, 0, 0, 0, 0]
global @right: [i32; 8] = [0, 3, 5, 7, 0, 0, 0, 0]
global @a: [i32; 8] = [3, 1, 4, 1, 5, 9, 2, 6]

declare @putint(i32) -> void

func @size(i32) -> i32 {
bb0(%0: i32):
  %1 = eq %0, 0
  br %1, bb1, bb2
bb1:
  ret 0
bb2:
  %2 = gep @left, %0, 4
  %3 = load i32, %2
  %4 = call @size(%3)
  %5 = gep @right, %0, 4
  %6 = load i32, %5
  %7 = call @size(%6)
  %8 = add %4, %7
  %9 = add %8, 1
  ret %9
}

func @sum(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = eq %0, %1
  br %2, bb1, bb2
bb1:
  %3 = gep @a, %0, 4
  %4 = load i32, %3
  ret %4
bb2:
  %5 = add %0, %1
  %6 = sdiv %5, 2
  %7 = call @sum(%0, %6)
  %8 = add %6, 1
  %9 = call @sum(%8, %1)
  %10 = add %7, %9
  ret %10
}

func @main() -> i32 {
bb0:
  %0 = call @size(1)
  call @putint(%0)
  %1 = call @sum(0, 7)
  call @putint(%1)
  ret 0
}
"#;
        let out = same_behaviour(src, &["memoize"], "");
        assert!(!out.contains(".memo"), "{out}");
    }

    #[test]
    fn effects_or_single_recursion_are_left_alone() {
        // c counts its base cases in a global; p prints; fact recurses once:
        // none may be memoised.
        let src = r#"
global @calls: i32 = 0

declare @putint(i32) -> void

C_AND_P
FACT
func @main() -> i32 {
bb0:
  %2 = call @c(3)
  call @putint(%2)
  %3 = load i32, @calls
  call @putint(%3)
  %5 = call @p(3)
  call @putint(%5)
  %4 = call @fact(10)
  call @putint(%4)
  ret 0
}
"#;
        let counts = "  %10 = load i32, @calls\n  %11 = add %10, 1\n  store %11, @calls\n";
        let c_and_p = fib_named("c", counts) + &fib_named("p", "  call @putint(%0)\n");
        let src = src.replace("C_AND_P\n", &c_and_p).replace("FACT\n", FACT);
        let out = same_behaviour(&src, &["memoize"], "");
        assert!(!out.contains(".memo"), "{out}");
    }

    #[test]
    fn one_self_call_per_path_is_left_alone() {
        // pow(x, n) calls itself on one arm or the other, never twice.
        let src = r#"
declare @putfloat(f32) -> void

func @pow(f32, i32) -> f32 {
bb0(%0: f32, %1: i32):
  %2 = slt %1, 0
  br %2, bb1, bb2
bb1:
  %3 = sub 0, %1
  %4 = call @pow(%0, %3)
  %5 = fdiv 1.0, %4
  ret %5
bb2:
  %6 = eq %1, 0
  br %6, bb3, bb4
bb3:
  ret 1.0
bb4:
  %7 = sub %1, 1
  %8 = call @pow(%0, %7)
  %9 = fmul %0, %8
  ret %9
}

func @main() -> i32 {
bb0:
  %0 = call @pow(1.5, -3)
  call @putfloat(%0)
  ret 0
}
"#;
        let out = same_behaviour(src, &["memoize"], "");
        assert!(!out.contains(".memo"), "{out}");
    }

    #[test]
    fn colliding_keys_recompute() {
        // Ackermann-like two-argument recursion over many keys: more distinct
        // argument pairs than slots, so slots are overwritten; results stay right.
        let src = r#"
declare @putint(i32) -> void
declare @putch(i32) -> void

func @p(i32, i32) -> i32 {
bb0(%0: i32, %1: i32):
  %2 = slt %0, 1
  br %2, bb1, bb2
bb1:
  %3 = mul %1, 7
  ret %3
bb2:
  %4 = sub %0, 1
  %5 = call @p(%4, %1)
  %6 = add %1, %0
  %7 = call @p(%4, %6)
  %8 = xor %5, %7
  %9 = srem %8, 1000003
  ret %9
}

func @main() -> i32 {
bb0:
  jump bb1(0)
bb1(%0: i32):
  %1 = call @p(12, %0)
  call @putint(%1)
  call @putch(32)
  %2 = add %0, 977
  %3 = slt %2, 20000
  br %3, bb1(%2), bb2
bb2:
  ret 0
}
"#;
        same_behaviour(src, &["memoize"], "");
    }
}
