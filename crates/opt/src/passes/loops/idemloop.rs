//! Repeated idempotent loop bodies run once: a counted loop whose iterations all do
//! exactly the same thing (a benchmark's repeat loop that recomputes the same
//! output from the same input) leaves after its first iteration.
//!
//! ```text
//!   k = 0; while (k < 5) { copy C into B; solve in B using A; k = k + 1; }
//!   =>
//!   k = 0; if (0 < 5) { copy C into B; solve in B using A; }
//! ```
//!
//! A region is *idempotent* when running it again from the state it leaves gives
//! the same state: none of its upward-exposed inputs is written by it (de Kruijf,
//! Sankaralingam and Jha, "Static analysis and compiler design for idempotent
//! processing", PLDI 2012). For a loop body this means every iteration reads the
//! same values, so every iteration performs the same stores of the same values,
//! and the state after `n >= 1` iterations is the state after one:
//!
//! - the loop is rotated and counted ([`Counter`]: it terminates), its latch is its
//!   only exit, and the counter is used only to count: by its step, the exit test
//!   and the back edge (not in the body, not after the loop);
//! - every other header parameter receives the same loop-invariant value on entry
//!   and on the back edge, or nothing reads it but the back edge (a variable each
//!   iteration overwrites first), so no scalar flows from one iteration to the next;
//! - no instruction has an effect beyond memory: calls are to pure functions, and
//!   there is no `alloc` in the loop;
//! - every load is not upward exposed: either no store of the loop may write its
//!   object (distinct globals and `alloc`s are disjoint), or its may-read section
//!   lies inside the must-write section of a store whose loop nest has completed
//!   earlier in the same iteration ([`Sections`]: array data-flow analysis, as for
//!   array privatisation). The sections' counters are the loops' [`Counter`]s
//!   stepping by one, their bounds values or a counter plus one (by the scalar
//!   evolution, however computed), and a counter's interval is exact when the
//!   scalar evolution finds it non-empty on entry or a dominating branch tests
//!   `init < bound` (in any operand order, on either edge).
//!
//! By induction over an iteration's steps, each iteration then reads the values the
//! first one read (a location either is never written by the loop, or was last
//! written earlier in the same iteration by the same store with the same value),
//! traps or not as it did, and writes the same values to the same locations.
//! The latch's branch becomes a jump to the exit; the loop runs once when its
//! guard lets it run at all.

use crate::analysis::scev::ScalarEvolution;
use crate::analysis::sections::Sections;
use crate::analysis::{
    address_root, AnalysisManager, Counter, FunctionAnalyses, LoopForest, LoopId, PointerRoots,
    Preserved, Purity, RotatedLoop,
};
use crate::pipeline::Pass;
use ir::{Function, Inst, InstKind, Module, Value, ValueDef};

/// The pass.
pub struct IdemLoop;

impl Pass for IdemLoop {
    fn name(&self) -> &'static str {
        "idemloop"
    }
    fn description(&self) -> &'static str {
        "a counted loop whose every iteration does the same work runs once"
    }
    fn preserves(&self) -> Preserved {
        Preserved::NOTHING.with_other_functions()
    }
    fn run_with(&self, m: &mut Module, am: &mut AnalysisManager) -> bool {
        am.each_function_with_purity(m, |f, purity, fa| run_in(f, purity, fa) > 0)
    }
}

/// Makes every qualifying loop of `f` run once; how many.
fn run_in(f: &mut Function, purity: &Purity, fa: &mut FunctionAnalyses) -> usize {
    let (cfg, _, loops) = fa.loops(f);
    if loops.is_empty() {
        return 0;
    }
    let missing = loops
        .loops()
        .any(|(id, _)| loops.preheader(id, cfg).is_none());
    // The analysis wants preheaders, which `simplifycfg` removes where nothing
    // needs them: when some loop lacks one, give the loops theirs on a copy, kept
    // only if a loop qualifies.
    let latches = if missing {
        // A condition that needs no preheader is checked first: where no loop may
        // qualify, the function is not copied.
        if !loops
            .loops()
            .any(|(l, _)| carries_only_a_counter(f, loops, l))
        {
            return 0;
        }
        let mut g = f.clone();
        super::licm::add_preheaders(&mut g);
        let latches = repeated(&g, purity, &mut FunctionAnalyses::default());
        if !latches.is_empty() {
            *f = g;
        }
        latches
    } else {
        repeated(f, purity, fa)
    };
    for rl in &latches {
        let exit = f.kind(rl.branch).targets()[rl.exit()].clone();
        f.replace_kind(
            rl.branch,
            InstKind::Jump {
                dest: Box::new(exit),
            },
        );
    }
    if !latches.is_empty() {
        fa.forget();
    }
    latches.len()
}

/// The loops of `f` whose iterations all do the same work.
fn repeated(f: &Function, purity: &Purity, fa: &mut FunctionAnalyses) -> Vec<RotatedLoop> {
    let mut se = fa.scev(f);
    let loops = se.loops;
    let mut roots = None;
    let mut found = Vec::new();
    // Per loop, its calls with effects and frame allocations: counted for all
    // loops at once (asking each loop's blocks is quadratic in a nest).
    let effects = loops.sum_over_blocks(f, |b| {
        f.layout
            .block_insts(b)
            .filter(|&i| match f.kind(i) {
                InstKind::Call { callee, .. } => !purity.effects(*callee).is_pure(),
                InstKind::Alloc { .. } => true,
                _ => false,
            })
            .count()
    });
    for (l, _) in loops.loops() {
        if effects[l.0 as usize] > 0 {
            continue;
        }
        let Some(rl) = counted_without_effects(&mut se, l) else {
            continue;
        };
        let roots = roots.get_or_insert_with(|| PointerRoots::compute(f));
        if reads_nothing_it_writes_first(&mut se, l, roots) {
            found.push(rl);
        }
    }
    found
}

/// Loop `l`, which has no effect but loads and stores (the caller checks), as a
/// rotated counted loop that carries nothing but its counter, uses the counter
/// only to count, and leaves only at its latch.
fn counted_without_effects(se: &mut ScalarEvolution, l: LoopId) -> Option<RotatedLoop> {
    let (f, cfg, loops) = (se.f, se.cfg, se.loops);
    let rl = RotatedLoop::of(f, cfg, loops, l)?;
    let c = Counter::of_scev(se, l, &rl)?;
    let inside = |v: Value| f.value_block(v).is_some_and(|b| loops.contains(l, b));
    // The analysis's exiting blocks include a block with no successor (a `ret`,
    // which no loop block ends in), which leaves nothing here.
    if se
        .exiting_blocks(l)
        .iter()
        .any(|&b| b != rl.latch && !f.successors(b).is_empty())
    {
        return None;
    }
    // Nothing but the counter flows from one iteration to the next: every other
    // header parameter is invariant, or read by nothing but the back edge (a
    // variable each iteration overwrites before reading it).
    let (init, next) = (rl.init_args(f), rl.next_args(f));
    let exit_args = &f.kind(rl.branch).targets()[rl.exit()].args;
    for (k, &p) in f.block_params(rl.header).iter().enumerate() {
        let invariant = (next[k] == init[k] || next[k] == p) && !inside(init[k]);
        let unread = f.users(p).iter().all(|&u| u == rl.branch) && !exit_args.contains(&p);
        if k != c.index && !invariant && !unread {
            return None;
        }
    }
    // The counter counts and does nothing else.
    let step = f.def_inst(c.next)?;
    let InstKind::Br { cond, .. } = *f.kind(rl.branch) else {
        return None;
    };
    let test = f.def_inst(cond)?;
    if f.users(cond) != [rl.branch]
        || !f.users(c.param).iter().all(|&u| u == step || u == test)
        || !f.users(c.next).iter().all(|&u| u == test || u == rl.branch)
    {
        return None;
    }
    let targets = f.kind(rl.branch).targets();
    if targets[rl.exit()]
        .args
        .iter()
        .any(|&a| a == c.param || a == c.next)
        || targets[rl.back]
            .args
            .iter()
            .enumerate()
            .any(|(k, &a)| (a == c.next || a == c.param) && k != c.index)
    {
        return None;
    }
    Some(rl)
}

/// Part of what [`counted_without_effects`] asks of loop `l`, which needs no
/// preheader (adding one changes none of it) and takes no walk over the loop's
/// blocks (a nest would make that quadratic): one latch, whose branch goes back
/// once, and at most one header parameter (the counter) carrying a value that
/// changes from one iteration to the next and is read.
fn carries_only_a_counter(f: &Function, loops: &LoopForest, l: LoopId) -> bool {
    let lp = loops.get(l);
    let &[latch] = &lp.latches[..] else {
        return false;
    };
    let Some(branch) = f.terminator(latch) else {
        return false;
    };
    let targets = f.kind(branch).targets();
    let [back] = targets
        .iter()
        .filter(|t| t.block == lp.header)
        .collect::<Vec<_>>()[..]
    else {
        return false;
    };
    let inside = |v: Value| f.value_block(v).is_some_and(|b| loops.contains(l, b));
    let carried = f
        .block_params(lp.header)
        .iter()
        .zip(&back.args)
        .filter(|&(&p, &next)| {
            let invariant = next == p || !inside(next);
            let unread = f.users(p).iter().all(|&u| u == branch)
                && !targets
                    .iter()
                    .any(|t| t.block != lp.header && t.args.contains(&p));
            !invariant && !unread
        })
        .count();
    carried <= 1
}

/// Whether every load of loop `l` reads either an object no store of `l` may write,
/// or locations that a store of `l` has certainly written before, in the same
/// iteration (no load is upward exposed to a store of the loop).
fn reads_nothing_it_writes_first(
    se: &mut ScalarEvolution,
    l: LoopId,
    roots: &PointerRoots,
) -> bool {
    let (f, loops) = (se.f, se.loops);
    let object = |p: Value| address_root(f, roots.object_pointer(f, p)).0;
    // Each access with the object it reaches.
    let mut loads: Vec<(Inst, Value)> = Vec::new();
    let mut stores: Vec<(Inst, Value)> = Vec::new();
    for &b in loops.get(l).blocks.iter() {
        for i in f.layout.block_insts(b) {
            match *f.kind(i) {
                InstKind::Load { ptr, .. } => loads.push((i, object(ptr))),
                InstKind::Store { ptr, .. } => stores.push((i, object(ptr))),
                _ => {}
            }
        }
    }
    let exposed: Vec<Inst> = loads
        .iter()
        .filter(|&&(_, r)| stores.iter().any(|&(_, w)| may_alias(f, r, w)))
        .map(|&(i, _)| i)
        .collect();
    if exposed.is_empty() {
        return true;
    }
    let sections = Sections::new(se, l);
    let writes: Vec<_> = stores
        .iter()
        .filter_map(|&(s, _)| sections.must_write(s))
        .collect();
    exposed.iter().all(|&ld| {
        let Some(read) = sections.may_touch(ld) else {
            return false;
        };
        writes
            .iter()
            .any(|w| sections.covers(&w.section, &read) && sections.complete_before(w, ld))
    })
}

/// Whether pointers into the objects `a` and `b` (the roots of their addresses,
/// through block parameters as [`PointerRoots`] finds them) may point to the same
/// memory: unless both are distinct globals or `alloc`s.
fn may_alias(f: &Function, a: Value, b: Value) -> bool {
    let identified = |v: Value| match f.value_def(v) {
        ValueDef::Global(_) => true,
        ValueDef::Inst(i) => matches!(f.kind(i), InstKind::Alloc { .. }),
        _ => false,
    };
    a == b || !(identified(a) && identified(b))
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{exec, run};

    /// `main` runs `body` (on the globals `@a`, `@b`, `@c` of 16 ints, with `%0` =
    /// n read from the input, at most 16) `reps` times in a counted loop, then prints
    /// `@b[0..n]` summed.
    fn repeat(body: &str, reps: i32) -> String {
        format!(
            r#"
global @a: [i32; 16] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]
global @b: [i32; 16] = zeroinit
global @c: [i32; 16] = [2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5, 9, 0, 4, 5]

declare @getint() -> i32
declare @putint(i32) -> void

func @main() -> i32 {{
bb0:
  %0 = call @getint()
  jump bb1(0)
bb1(%1: i32):
{body}
  %2 = add %1, 1
  %3 = slt %2, {reps}
  br %3, bb1(%2), bb90
bb90:
  %90 = slt 0, %0
  br %90, bb91(0, 0), bb93(0)
bb91(%91: i32, %92: i32):
  %93 = gep @b, %91, 4
  %94 = load i32, %93
  %95 = add %92, %94
  %96 = add %91, 1
  %97 = slt %96, %0
  br %97, bb91(%96, %95), bb93(%95)
bb93(%98: i32):
  call @putint(%98)
  ret 0
}}
"#
        )
    }

    /// `for (i = 0; i < n; i++) b[i] = c[i];` (blocks bb10..bb12, continuing at
    /// `then`).
    fn copy_c_to_b(then: &str) -> String {
        format!(
            "  %10 = slt 0, %0\n  br %10, bb10, {then}\nbb10:\n  jump bb11(0)\nbb11(%11: i32):\n  %12 = gep @c, %11, 4\n  %13 = load i32, %12\n  %14 = gep @b, %11, 4\n  store %13, %14\n  %15 = add %11, 1\n  %16 = slt %15, %0\n  br %16, bb11(%15), {then}\n"
        )
    }

    /// Whether the repeat loop (`bb1`, the first loop of the last function) still
    /// branches back to its header.
    fn repeats(out: &str) -> bool {
        let last = &out[out.rfind("func @").unwrap()..];
        last.lines()
            .any(|l| l.trim_start().starts_with("br ") && l.contains(" bb1("))
    }

    fn same_output(src: &str, out: &str) {
        let (m0, m1) = (
            ir::parse_module(src).unwrap(),
            ir::parse_module(out).unwrap(),
        );
        for n in ["0", "1", "7", "16"] {
            assert_eq!(exec(&m0, n), exec(&m1, n), "input {n}\n{out}");
        }
    }

    /// Asserts that `idemloop` makes the repeat loop of `src` run once, with the
    /// same output.
    #[track_caller]
    fn assert_runs_once(src: &str) {
        let out = run(src, &["idemloop"]);
        assert!(!repeats(&out), "{out}");
        same_output(src, &out);
    }

    /// Per loop of `main` in `src`, by its header in block order: whether
    /// [`super::carries_only_a_counter`] holds.
    fn carries_only_a_counter_by_header(src: &str) -> Vec<bool> {
        use crate::analysis::FunctionAnalyses;
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().find(|f| f.name == "main").unwrap();
        let mut fa = FunctionAnalyses::default();
        let (_, _, loops) = fa.loops(f);
        let mut out: Vec<(ir::Block, bool)> = loops
            .loops()
            .map(|(l, lp)| (lp.header, super::carries_only_a_counter(f, loops, l)))
            .collect();
        out.sort_by_key(|&(b, _)| b);
        out.into_iter().map(|(_, ok)| ok).collect()
    }

    #[test]
    fn loops_that_carry_what_they_read_are_ruled_out_without_a_preheader() {
        // The loops: the repeat loop `bb1`, the copy `bb11` inside it, and the sum
        // loop `bb91`. The sum loop (entered by a branch: no preheader) carries its
        // sum, read by the next iteration, besides its counter; the copy and the
        // repeat loop carry only their counters.
        let copy = repeat(&format!("{}bb20:", copy_c_to_b("bb20")), 3);
        assert_eq!(carries_only_a_counter_by_header(&copy), [true, true, false]);
        // The copy also sums what it copies: it carries two values it reads.
        let summing = copy
            .replace("jump bb11(0)", "jump bb11(0, 0)")
            .replace("bb11(%11: i32):", "bb11(%11: i32, %17: i32):")
            .replace(
                "  %15 = add %11, 1\n",
                "  %15 = add %11, 1\n  %18 = add %17, %13\n",
            )
            .replace("br %16, bb11(%15)", "br %16, bb11(%15, %18)");
        assert_eq!(
            carries_only_a_counter_by_header(&summing),
            [true, false, false]
        );
        // The repeat loop is found without copying the function, and it is the
        // only one made to run once.
        assert_runs_once(&copy);
    }

    #[test]
    fn a_copy_then_an_update_in_place_runs_once() {
        // b[i] = c[i] for all i < n, then b[j] = b[j] * 3 + a[j] for j < n: the
        // update reads only what the copy wrote in the same iteration.
        let body = format!(
            "{}bb20:\n  %20 = slt 0, %0\n  br %20, bb21, bb29\nbb21:\n  jump bb22(0)\nbb22(%21: i32):\n  %22 = gep @b, %21, 4\n  %23 = load i32, %22\n  %24 = mul %23, 3\n  %25 = gep @a, %21, 4\n  %26 = load i32, %25\n  %27 = add %24, %26\n  store %27, %22\n  %28 = add %21, 1\n  %29 = slt %28, %0\n  br %29, bb22(%28), bb29\nbb29:",
            copy_c_to_b("bb20")
        );
        assert_runs_once(&repeat(&body, 5));
    }

    #[test]
    fn an_update_in_place_without_the_copy_repeats() {
        // b[j] = b[j] * 3 + a[j]: each iteration reads what the previous wrote.
        let body = "  %20 = slt 0, %0\n  br %20, bb21, bb29\nbb21:\n  jump bb22(0)\nbb22(%21: i32):\n  %22 = gep @b, %21, 4\n  %23 = load i32, %22\n  %24 = mul %23, 3\n  %25 = gep @a, %21, 4\n  %26 = load i32, %25\n  %27 = add %24, %26\n  store %27, %22\n  %28 = add %21, 1\n  %29 = slt %28, %0\n  br %29, bb22(%28), bb29\nbb29:";
        let src = repeat(body, 5);
        let out = run(&src, &["idemloop"]);
        assert!(repeats(&out), "{out}");
    }

    #[test]
    fn a_read_past_the_copied_part_repeats() {
        // The copy writes b[0..n); the update reads b[j + 1], which for j = n - 1
        // is b[n]: written by the previous iteration's update, not by the copy.
        let body = format!(
            "{}bb20:\n  %20 = slt 0, %0\n  br %20, bb21, bb29\nbb21:\n  jump bb22(0)\nbb22(%21: i32):\n  %30 = add %21, 1\n  %22 = gep @b, %30, 4\n  %23 = load i32, %22\n  %24 = mul %23, 3\n  %25 = gep @b, %21, 4\n  store %24, %25\n  %28 = add %21, 1\n  %29 = slt %28, %0\n  br %29, bb22(%28), bb29\nbb29:",
            copy_c_to_b("bb20")
        );
        let src = repeat(&body, 5);
        let out = run(&src, &["idemloop"]);
        assert!(repeats(&out), "{out}");
    }

    /// After b[0..n) = c[0..n): for i < n, for j in i + 1 .. n, b[j] -= b[i]
    /// (the shape of a triangular solve), as the repeat loop's body.
    fn triangle() -> String {
        format!(
            "{}bb20:\n  %20 = slt 0, %0\n  br %20, bb21, bb29\nbb21:\n  jump bb22(0)\nbb22(%21: i32):\n  %40 = add %21, 1\n  %41 = slt %40, %0\n  br %41, bb23, bb28\nbb23:\n  jump bb24(%40)\nbb24(%42: i32):\n  %43 = gep @b, %42, 4\n  %44 = load i32, %43\n  %45 = gep @b, %21, 4\n  %46 = load i32, %45\n  %47 = sub %44, %46\n  store %47, %43\n  %48 = add %42, 1\n  %49 = slt %48, %0\n  br %49, bb24(%48), bb28\nbb28:\n  %29 = slt %40, %0\n  br %29, bb22(%40), bb29\nbb29:",
            copy_c_to_b("bb20")
        )
    }

    #[test]
    fn a_triangular_read_inside_the_copied_square_runs_once() {
        assert_runs_once(&repeat(&triangle(), 4));
    }

    /// The triangle with `j` starting at `i + 1` kept in a header parameter of
    /// its own (its evolution is the counter's plus one), with the inner loop's
    /// guard leaving on its true edge (`i + 1 >= n`), and with the outer loop
    /// entered when `n > 3` (which says `0 < n`): each a shape the scalar
    /// evolution describes, each read still inside the copied square.
    #[test]
    fn triangles_bounded_and_guarded_in_other_words_run_once() {
        let own_start = triangle()
            .replace("jump bb22(0)", "jump bb22(0, 1)")
            .replace("bb22(%21: i32):", "bb22(%21: i32, %50: i32):")
            .replace("%41 = slt %40, %0", "%41 = slt %50, %0")
            .replace("jump bb24(%40)", "jump bb24(%50)")
            .replace(
                "bb28:\n  %29 = slt %40, %0\n  br %29, bb22(%40), bb29",
                "bb28:\n  %51 = add %50, 1\n  %29 = slt %40, %0\n  br %29, bb22(%40, %51), bb29",
            );
        let guard_false = triangle().replace(
            "%41 = slt %40, %0\n  br %41, bb23, bb28",
            "%41 = sge %40, %0\n  br %41, bb28, bb23",
        );
        let implied = triangle().replace("%20 = slt 0, %0", "%20 = sgt %0, 3");
        for body in [own_start, guard_false, implied] {
            assert_runs_once(&repeat(&body, 4));
        }
    }

    #[test]
    fn a_triangle_entered_when_its_interval_is_empty_repeats() {
        // The inner loop is entered on the edge where `i + 1 < n` fails: it runs
        // once with j = i + 1 >= n, reading b[j] past the copied part, which the
        // previous iteration wrote.
        let body = triangle().replace("br %41, bb23, bb28", "br %41, bb28, bb23");
        let out = run(&repeat(&body, 4), &["idemloop"]);
        assert!(repeats(&out), "{out}");
    }

    #[test]
    fn an_accumulator_carried_between_iterations_repeats() {
        // s = s + b[0] every iteration (after the copy): a scalar flows on.
        let src = r#"
global @b: [i32; 4] = [1, 2, 3, 4]

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%1: i32, %4: i32):
  %5 = load i32, @b
  %6 = add %4, %5
  %2 = add %1, 1
  %3 = slt %2, 5
  br %3, bb1(%2, %6), bb2
bb2:
  call @putint(%6)
  ret 0
}
"#;
        let out = run(src, &["idemloop"]);
        assert!(repeats(&out), "{out}");
    }

    #[test]
    fn a_variable_overwritten_before_it_is_read_does_not_flow_on() {
        // t = c[1]; b[0] = t: `t` is carried in a header parameter nobody reads.
        let src = r#"
global @b: [i32; 4] = [1, 2, 3, 4]
global @c: [i32; 4] = [5, 6, 7, 8]

declare @putint(i32) -> void

func @main() -> i32 {
bb0:
  jump bb1(0, 0)
bb1(%1: i32, %4: i32):
  %5 = gep @c, 1, 4
  %6 = load i32, %5
  store %6, @b
  %2 = add %1, 1
  %3 = slt %2, 5
  br %3, bb1(%2, %6), bb2(%6)
bb2(%7: i32):
  %8 = load i32, @b
  %9 = add %7, %8
  call @putint(%9)
  ret 0
}
"#;
        assert_runs_once(src);
        // Read after the loop, the parameter would be the previous iteration's.
        let after = src.replace(
            "bb2(%7: i32):\n  %8",
            "bb2(%7: i32):\n  call @putint(%4)\n  %8",
        );
        assert!(repeats(&run(&after, &["idemloop"])));
    }

    #[test]
    fn output_in_the_loop_repeats() {
        let body = format!("{}bb20:\n  call @putint(7)", copy_c_to_b("bb20"));
        let src = repeat(&body, 3);
        let out = run(&src, &["idemloop"]);
        assert!(repeats(&out), "{out}");
    }

    #[test]
    fn the_counter_used_in_the_body_repeats() {
        // b[0] = k: the iterations differ.
        let body = "  %20 = gep @b, 0, 4\n  store %1, %20";
        let src = repeat(body, 3);
        let out = run(&src, &["idemloop"]);
        assert!(repeats(&out), "{out}");
    }

    #[test]
    fn a_read_through_a_parameter_that_may_alias_repeats() {
        // The body copies through a parameter pointer `%p` into @b and reads @b:
        // a store through the parameter may write anything.
        let src = r#"
global @b: [i32; 4] = [1, 2, 3, 4]

declare @putint(i32) -> void

func @f(ptr) -> i32 {
bb0(%0: ptr):
  jump bb1(0)
bb1(%1: i32):
  %5 = load i32, @b
  %6 = add %5, 1
  store %6, %0
  %2 = add %1, 1
  %3 = slt %2, 5
  br %3, bb1(%2), bb2
bb2:
  %7 = load i32, @b
  ret %7
}

func @main() -> i32 {
bb0:
  %0 = call @f(@b)
  call @putint(%0)
  ret 0
}
"#;
        let out = run(src, &["idemloop"]);
        assert!(repeats(&out[..out.find("func @main").unwrap()]), "{out}");
    }
}
