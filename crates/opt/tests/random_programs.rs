//! Random SysY programs shaped to exercise value numbering and code motion, run in the
//! interpreter before and after `gvn`, `cgvn` and `pre` (alone, together, and in the
//! `-O2` pipeline), with the verifier after every pass. The generator favours what
//! those passes reason about: variables reassigned in both arms of an `if` (joins
//! whose parameters equal expressions, as in the complete-GVN paper's Figure 1),
//! loops stepping several variables in lock-step or swapping them, repeated
//! expressions, loads and stores of a global array and a local one at computed
//! indices, calls to pure, reading and writing functions, and divisions and array
//! reads guarded by a test (which must not be hoisted above it: a program that does
//! not trap must not start to). Programs are deterministic in their seed; a failure
//! prints the seed and the program. `RANDOM_PROGRAMS=n RANDOM_SEED=s` run other seeds.

use std::fmt::Write;

/// SplitMix64: a small deterministic generator (no dependencies).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }

    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
}

const VARS: u32 = 6;

struct Gen {
    rng: Rng,
    out: String,
    loops: u32,
    indent: usize,
}

impl Gen {
    fn var(&mut self) -> String {
        format!("v{}", self.rng.below(VARS))
    }

    fn leaf(&mut self) -> String {
        match self.rng.below(10) {
            0..=5 => self.var(),
            6 => "h".to_string(),
            _ => format!("{}", self.rng.below(9) as i32 - 2),
        }
    }

    fn expr(&mut self, depth: u32) -> String {
        if depth == 0 || self.rng.chance(30) {
            return self.leaf();
        }
        let a = self.expr(depth - 1);
        let b = self.expr(depth - 1);
        match self.rng.below(16) {
            0..=3 => format!("({a} + {b})"),
            4 | 5 => format!("({a} - {b})"),
            6 => format!("({a} * {b})"),
            7 => format!("({a} / {})", [2, 3, -4, 7][self.rng.below(4) as usize]),
            8 => format!("({a} % 5)"),
            9 => format!("({a} < {b})"),
            10 => format!("({a} == {b})"),
            11 => format!("sq({a})"),
            12 => format!("g[ix({a})]"),
            13 => format!("rd({a})"),
            14 => format!("loc[ix({a})]"),
            _ => format!("(-{a})"),
        }
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn block(&mut self, depth: u32, n: u32) {
        for _ in 0..n {
            self.stmt(depth);
        }
    }

    fn stmt(&mut self, depth: u32) {
        let choice = if depth == 0 {
            self.rng.below(8)
        } else {
            self.rng.below(14)
        };
        match choice {
            0..=2 => {
                let (v, e) = (self.var(), self.expr(2));
                self.line(&format!("{v} = {e};"));
            }
            3 => {
                // The same expression twice, into two variables.
                let (v, w, e) = (self.var(), self.var(), self.expr(2));
                self.line(&format!("{v} = {e};"));
                self.line(&format!("{w} = {w} + {e};"));
            }
            4 => {
                let (i, e) = (self.expr(1), self.expr(2));
                let arr = if self.rng.chance(50) { "g" } else { "loc" };
                self.line(&format!("{arr}[ix({i})] = {e};"));
            }
            5 => {
                let e = self.expr(2);
                if self.rng.chance(50) {
                    self.line(&format!("h = {e};"));
                } else {
                    let v = self.var();
                    self.line(&format!("{v} = bump({e});"));
                }
            }
            6 => {
                let e = self.expr(2);
                self.line(&format!("putint({e}); putch(32);"));
            }
            7 => {
                // A guarded division and a guarded out-of-range read.
                let (v, a, d) = (self.var(), self.expr(1), self.var());
                self.line(&format!("if ({d} != 0) {v} = {a} / {d};"));
                let (w, i) = (self.var(), self.var());
                self.line(&format!("if ({i} >= 0 && {i} < 8) {w} = {w} + g[{i}];"));
                if self.rng.chance(10) {
                    // Now and then an unguarded one, which may trap: that is undefined
                    // behaviour in SysY (a pass may remove a dead division), so such
                    // runs only check that nothing crashes.
                    let (u, b) = (self.var(), self.var());
                    self.line(&format!("{u} = {a} % {b};"));
                }
            }
            8 | 9 => {
                let c = self.expr(2);
                self.line(&format!("if ({c}) {{"));
                self.indent += 1;
                let n = 1 + self.rng.below(3);
                self.block(depth - 1, n);
                self.indent -= 1;
                self.line("} else {");
                self.indent += 1;
                let n = 1 + self.rng.below(3);
                self.block(depth - 1, n);
                self.indent -= 1;
                self.line("}");
            }
            10 => {
                // Figure 1 (a): both arms assign x = y + k with different y.
                let (x, y, z, c) = (self.var(), self.var(), self.var(), self.expr(1));
                let k = self.rng.below(3);
                self.line(&format!("if ({c}) {{ {y} = {z}; {x} = {z} + {k}; }}"));
                self.line(&format!("else {{ {x} = {y} + {k}; }}"));
                self.line(&format!("putint({x} - ({y} + {k})); putch(32);"));
            }
            11 => {
                // Figure 1 (b) and (c): lock-step and swapped variables in a loop.
                let (x, y, t) = (self.var(), self.var(), self.var());
                let k = self.rng.below(3);
                self.line(&format!("{y} = {x} + {k};"));
                self.open_loop(depth);
                self.line(&format!("{x} = {x} + 1; {y} = {y} + 1;"));
                if self.rng.chance(50) {
                    let w = self.var();
                    self.line(&format!("{t} = {x}; {x} = {w}; {w} = {t};"));
                }
                self.line(&format!("putint({y} - {x}); putch(32);"));
                let n = self.rng.below(2);
                self.block(depth - 1, n);
                self.close_loop();
            }
            _ => {
                self.open_loop(depth);
                let n = 1 + self.rng.below(3);
                self.block(depth - 1, n);
                self.close_loop();
            }
        }
    }

    fn open_loop(&mut self, _depth: u32) {
        let k = self.loops;
        self.loops += 1;
        let trips = self.rng.below(5);
        self.line(&format!("int k{k} = 0;"));
        self.line(&format!("while (k{k} < {trips}) {{"));
        self.indent += 1;
        self.line(&format!("k{k} = k{k} + 1;"));
    }

    fn close_loop(&mut self) {
        self.indent -= 1;
        self.line("}");
    }
}

/// A whole program for `seed`.
fn program(seed: u64) -> String {
    let mut g = Gen {
        rng: Rng(seed),
        out: String::new(),
        loops: 0,
        indent: 1,
    };
    g.out.push_str(
        "int g[8] = {3, 1, 4, 1, 5, 9, 2, 6};\nint h = 7;\n\
         int ix(int x) { int r = x % 8; if (r < 0) r = r + 8; return r; }\n\
         int sq(int x) { return x * x + 1; }\n\
         int rd(int x) { return g[ix(x)] + h; }\n\
         int bump(int x) { h = h + x; return h; }\n\
         int main() {\n  int loc[8] = {};\n",
    );
    for i in 0..VARS {
        let c = g.rng.below(21) as i32 - 10;
        let _ = writeln!(g.out, "  int v{i} = {c};");
    }
    let n = 4 + g.rng.below(6);
    g.block(3, n);
    for i in 0..VARS {
        let _ = writeln!(g.out, "  putint(v{i}); putch(32);");
    }
    g.out.push_str("  putint(h); putch(10);\n  return 0;\n}\n");
    g.out
}

#[derive(PartialEq, Debug)]
enum Outcome {
    Done(Vec<u8>, i32),
    /// The kind of error only (addresses may legitimately differ).
    Trap(String),
}

fn run(m: &ir::Module) -> Outcome {
    let opts = interp::RunOptions {
        max_steps: Some(5_000_000),
        wall_clock_timers: false,
        ..Default::default()
    };
    match interp::run_module(m, b"", &opts) {
        Ok(o) => Outcome::Done(o.stdout, o.exit_code),
        Err(e) => Outcome::Trap(
            format!("{:?}", e.kind)
                .chars()
                .take_while(|c| c.is_alphanumeric())
                .collect(),
        ),
    }
}

/// The pass lists every program goes through.
fn pass_lists() -> Vec<Vec<&'static str>> {
    let mut v: Vec<Vec<&'static str>> = vec![
        vec!["gvn"],
        vec!["cgvn"],
        vec!["gvn", "cgvn"],
        vec!["cgvn", "gvn", "cgvn"],
    ];
    if opt::lookup("pre").is_some() {
        v.push(vec!["pre"]);
        v.push(vec!["gvn", "cgvn", "pre", "dce"]);
    }
    v.push(opt::pipeline(2));
    v
}

fn check_seed(seed: u64) -> Result<(), String> {
    let src = program(seed);
    let program = front::check("random.sy", &src).map_err(|d| {
        format!(
            "seed {seed}: generator bug:\n{}\n{src}",
            d.render("random.sy", &src)
        )
    })?;
    let base = run(&lower::lower_program(&program, false));
    // Every list on Braun-built SSA; the full pipeline also from memory form (mem2reg).
    let lists = pass_lists();
    let last = lists.len() - 1;
    let runs = lists
        .iter()
        .map(|l| (l, false))
        .chain(std::iter::once((&lists[last], true)));
    for (passes, memory_form) in runs {
        let mut m = lower::lower_program(&program, memory_form);
        let mut opts = opt::PassOptions {
            verify_each: true,
            ..Default::default()
        };
        opt::run_passes(&mut m, passes, &mut opts).map_err(|e| {
            format!("seed {seed}, {passes:?} (memory form {memory_form}): {e}\n{src}")
        })?;
        let got = run(&m);
        if got != base && !matches!(base, Outcome::Trap(_)) {
            return Err(format!(
                "seed {seed}, passes {passes:?} (memory form {memory_form}): behaviour changed\n was {base:?}\n got {got:?}\n{src}\n{}",
                ir::print_module(&m)
            ));
        }
    }
    Ok(())
}

#[test]
fn random_programs_keep_their_behaviour() {
    let count: u64 = std::env::var("RANDOM_PROGRAMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let first: u64 = std::env::var("RANDOM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            for seed in first..first + count {
                // A panic anywhere (front end, lowering, a pass) names the seed too.
                let result = std::panic::catch_unwind(|| check_seed(seed)).unwrap_or_else(|p| {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    Err(format!("seed {seed}: panicked: {msg}\n{}", program(seed)))
                });
                if let Err(e) = result {
                    panic!("{e}");
                }
            }
        })
        .unwrap()
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

#[test]
fn the_generator_makes_the_shapes_it_promises() {
    let all: String = (1..40).map(program).collect();
    for needle in [
        "} else {", "while (k", "/ v", "bump(", "sq(", "g[ix(", "loc[ix(",
    ] {
        assert!(all.contains(needle), "no {needle:?} in 40 programs");
    }
}
