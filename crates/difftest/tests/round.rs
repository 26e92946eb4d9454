//! The differential round `cargo test` runs, and tests of the generator and reducer.
//!
//! - Generated programs are deterministic, valid by the crate's rules and accepted
//!   by sysyc's front end.
//! - A few dozen small programs give the same output through the interpreter at -O0
//!   (the reference), at -O2 and in memory-SSA form (in-process, a few seconds).
//! - With the riscv64 toolchain, a handful also agree with gcc + qemu at every level.
//! - The reducer, given an injected "miscompilation" (division turned into
//!   multiplication), shrinks a program to a few lines that still show it.

use difftest::ast::{Program, Stmt};
use difftest::campaign::check_seed;
use difftest::gen::{generate, GenConfig};
use difftest::oracle::{Config, Outcome, Reference, Runner};
use difftest::print::print_program;
use difftest::reduce::reduce;
use difftest::validate::validate;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("difftest")
        .join(name)
}

#[test]
fn generation_is_deterministic() {
    let cfg = GenConfig::default();
    for seed in [0, 1, 17, 123_456_789] {
        assert_eq!(
            print_program(&generate(seed, &cfg)),
            print_program(&generate(seed, &cfg))
        );
    }
    assert_ne!(
        print_program(&generate(1, &cfg)),
        print_program(&generate(2, &cfg))
    );
}

#[test]
fn generated_programs_are_valid() {
    for (cfg, seeds) in [
        (GenConfig::small(), 0..150),
        (GenConfig::default(), 0..60),
        (GenConfig::large(), 0..12),
    ] {
        for seed in seeds {
            let p = generate(seed, &cfg);
            if let Err(e) = validate(&p) {
                panic!("seed {seed}: {e}");
            }
            let text = print_program(&p);
            if let Err(d) = front::check("gen.sy", &text) {
                panic!("seed {seed}:\n{}", d.render("gen.sy", &text));
            }
        }
    }
}

/// What the large programs hold that a generated program sysyc once miscompiled
/// had (shared/regressions/miscompile-putf-nan.sy): hundreds of lines, dozens of
/// scalars live across `main`, `putf` mixing ints and floats (ints converted with
/// `* 1.0`), and locals hiding variables of enclosing blocks.
#[test]
fn large_programs_have_the_shapes_of_real_ones() {
    let (mut lines, mut mixed_putf, mut converted, mut shadowing) = (0, 0, 0, 0);
    let n = 10;
    for seed in 0..n {
        let p = generate(seed, &GenConfig::large());
        let text = print_program(&p);
        lines += text.lines().count();
        mixed_putf += usize::from(
            text.lines()
                .any(|l| l.contains("putf(") && l.contains("%d") && l.contains("%a")),
        );
        converted += usize::from(text.contains(" * 1.0)"));
        shadowing += usize::from(has_shadowing(&p));
        let main = p.funcs.last().unwrap();
        let top_scalars = main
            .body
            .iter()
            .filter(|s| matches!(s, Stmt::Decl(d) if d.dims.is_empty()))
            .count();
        assert!(top_scalars >= GenConfig::large().live_locals, "seed {seed}");
    }
    assert!(
        lines / n as usize >= 400,
        "{} lines on average",
        lines / n as usize
    );
    assert!(
        mixed_putf >= n as usize / 2,
        "{mixed_putf} of {n} with a mixed putf"
    );
    assert!(
        converted >= n as usize / 2,
        "{converted} of {n} convert ints with * 1.0"
    );
    assert!(
        shadowing >= n as usize / 2,
        "{shadowing} of {n} hide a variable"
    );
}

/// Recursion as real programs have it: functions calling themselves in tail
/// position, with an accumulator (`d + f(d - 1, ...)`) and as a void function's
/// last statement, a few levels and thousands deep; each valid and bounded.
#[test]
fn recursive_functions_have_every_form() {
    use difftest::ast::Expr;
    let (mut tail, mut acc, mut void, mut deep, mut recursive) = (0, 0, 0, 0, 0);
    for seed in 0..300 {
        let p = generate(seed, &GenConfig::default());
        if let Err(e) = validate(&p) {
            panic!("seed {seed}: {e}");
        }
        for f in &p.funcs {
            let Some(r) = &f.recursion else { continue };
            recursive += 1;
            deep += usize::from(r.limit >= 100);
            match &f.tail {
                Some(Expr::Call(c)) if c.func == f.name => tail += 1,
                Some(Expr::Bin(_, _, c)) if matches!(&**c, Expr::Call(c) if c.func == f.name) => {
                    acc += 1
                }
                None => {
                    void += usize::from(
                        matches!(f.body.last(), Some(Stmt::Call(c)) if c.func == f.name),
                    )
                }
                _ => {}
            }
        }
    }
    assert!(recursive >= 100, "{recursive} recursive functions");
    for (what, n) in [
        ("tail", tail),
        ("accumulator", acc),
        ("void", void),
        ("deep", deep),
    ] {
        assert!(n >= 10, "{n} {what} recursions of {recursive}");
    }
}

/// Whether a declaration of `p` reuses the name of a global or of an earlier
/// declaration of its function (which, the program being valid, it hides).
fn has_shadowing(p: &Program) -> bool {
    fn decls(body: &[Stmt], names: &mut Vec<String>) -> bool {
        body.iter().any(|s| match s {
            Stmt::Decl(d) => {
                let again = names.contains(&d.name);
                names.push(d.name.clone());
                again
            }
            Stmt::If { then, els, .. } => {
                decls(then, names) || els.as_ref().is_some_and(|e| decls(e, names))
            }
            Stmt::Loop { body, .. } | Stmt::Block(body) => decls(body, names),
            _ => false,
        })
    }
    let globals: Vec<String> = p.globals.iter().map(|g| g.name.clone()).collect();
    p.funcs.iter().any(|f| {
        let mut names = globals.clone();
        names.extend(f.params.iter().map(|q| q.name.clone()));
        decls(&f.body, &mut names)
    })
}

/// `--write-suite`: the programs, their input and the reference's output, laid out
/// as a suite the harness (and so the bench) reads.
#[test]
fn generated_programs_make_a_suite() {
    let dir = scratch("suite");
    let _ = std::fs::remove_dir_all(&dir);
    let (written, skipped) =
        difftest::campaign::write_suite(&dir, 3..6, &GenConfig::small(), None, &Reference::Interp)
            .unwrap();
    assert_eq!((written, skipped), (3, 0));
    let cases = harness::cases(&dir);
    assert_eq!(cases.len(), 3);
    for c in &cases {
        let p = generate(
            c.name.trim_start_matches("gen-").parse().unwrap(),
            &GenConfig::small(),
        );
        assert_eq!(std::fs::read_to_string(&c.sy).unwrap(), print_program(&p));
        let out = String::from_utf8(c.expected().unwrap()).unwrap();
        let runner = Runner::new(None, scratch("suite-run")).unwrap();
        assert_eq!(
            out,
            interp(&runner, &print_program(&p), &p.input).describe()
        );
    }
}

/// The short differential round: interpreter at -O0 against -O2, -O1 and
/// memory-form SSA.
#[test]
fn differential_round_in_the_interpreter() {
    let runner = Runner::new(None, scratch("round")).unwrap();
    let configs = [
        Config::Interp {
            level: 2,
            memory: false,
        },
        Config::Interp {
            level: 1,
            memory: false,
        },
        Config::Interp {
            level: 0,
            memory: true,
        },
    ];
    let mut failures = Vec::new();
    let mut lines = 0;
    for seed in 0..40 {
        let r = check_seed(
            seed,
            &GenConfig::small(),
            &runner,
            &Reference::Interp,
            &configs,
        );
        match &r.expected {
            Ok(Outcome::Ran { stdout, .. }) => lines += stdout.split(|&b| b == b'\n').count(),
            other => failures.push(format!("seed {seed}: reference: {other:?}")),
        }
        for (config, outcome) in r.mismatches() {
            failures.push(format!(
                "seed {seed}: {config}: {}\n(reproduce: cargo run -p difftest -- --size small --seeds {seed})",
                outcome.describe().lines().next().unwrap_or("")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The programs do print things (the checksum at least).
    assert!(lines > 200, "only {lines} output lines");
}

/// A few programs against the real reference, when the toolchain is installed.
#[test]
fn gcc_and_qemu_agree_on_a_few_programs() {
    let h = match harness::Harness::global() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("note: skipped, no riscv64 toolchain: {e}");
            return;
        }
    };
    let runner = Runner::new(Some(h), scratch("qemu")).unwrap();
    let configs: Vec<Config> = [0, 2]
        .into_iter()
        .flat_map(|level| {
            [
                Config::Interp {
                    level,
                    memory: false,
                },
                Config::Qemu { level },
            ]
        })
        .collect();
    for seed in 0..3 {
        let r = check_seed(
            seed,
            &GenConfig::small(),
            &runner,
            &Reference::Gcc(h),
            &configs,
        );
        assert!(
            matches!(r.expected, Ok(Outcome::Ran { .. })),
            "seed {seed}: gcc reference: {:?}",
            r.expected
        );
        let bad: Vec<String> = r.mismatches().iter().map(|(c, _)| c.to_string()).collect();
        assert!(bad.is_empty(), "seed {seed}: {bad:?} differ from gcc");
    }
}

/// Output of the interpreter at -O0 on `text`.
fn interp(runner: &Runner, text: &str, input: &str) -> Outcome {
    runner.run(
        text,
        input,
        Config::Interp {
            level: 0,
            memory: false,
        },
    )
}

#[test]
fn reducer_isolates_an_injected_miscompilation() {
    let runner = Runner::new(None, scratch("reduce")).unwrap();
    // "Miscompile" by turning every division into a multiplication.
    let miscompiled = |text: &str| text.replace(" / ", " * ");
    let mut interesting = |p: &Program, text: &str| {
        let good = interp(&runner, text, &p.input);
        matches!(good, Outcome::Ran { .. }) && good != interp(&runner, &miscompiled(text), &p.input)
    };
    let (seed, p) = (0..)
        .map(|s| (s, generate(s, &GenConfig::small())))
        .find(|(_, p)| interesting(p, &print_program(p)))
        .unwrap();
    let before = print_program(&p).lines().count();
    let red = reduce(&p, &mut interesting, 1500);
    let text = print_program(&red.program);
    let after = text.lines().count();
    eprintln!(
        "seed {seed}: {before} -> {after} lines in {} tests:\n{text}",
        red.tests
    );
    assert!(validate(&red.program).is_ok());
    assert!(
        interesting(&red.program, &text),
        "seed {seed}: property lost"
    );
    assert!(text.contains(" / "), "{text}");
    assert!(
        after <= 12 && after * 4 <= before,
        "seed {seed}: {before} -> {after} lines:\n{text}"
    );
}

/// The reference gets `0.0 - i` right: +0.0 for `i` = 0. Plain `gcc -O0` folds it
/// into `-(float)i` = -0.0 (campaign seed 704); `-frounding-math` stops that. sysyc
/// must give +0.0 too, in every configuration.
#[test]
fn zero_minus_an_int_is_positive_zero_everywhere() {
    let src = "int main() {\n    int i = getint();\n    float x = 0.0 - i;\n    \
               putfloat(x);\n    putch(10);\n    putfloat(0.0 - (i * 1.0));\n    \
               return 0;\n}\n";
    let want = Outcome::Ran {
        stdout: b"0x0p+0\n0x0p+0".to_vec(),
        exit: 0,
    };
    let h = harness::Harness::global().ok();
    let runner = Runner::new(h, scratch("zero-minus")).unwrap();
    for level in [0, 1, 2] {
        let c = Config::Interp {
            level,
            memory: false,
        };
        assert_eq!(runner.run(src, "0\n", c), want, "{c}");
    }
    let Some(h) = h else {
        eprintln!("note: gcc part skipped, no riscv64 toolchain");
        return;
    };
    assert_eq!(
        runner.reference(src, "0\n", &Reference::Gcc(h)),
        Ok(want.clone())
    );
    for level in [0, 2] {
        assert_eq!(runner.run(src, "0\n", Config::Qemu { level }), want);
    }
}
