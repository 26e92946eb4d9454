//! The differential round `cargo test` runs, and tests of the generator and reducer.
//!
//! - Generated programs are deterministic, valid by the crate's rules and accepted
//!   by sysyc's front end.
//! - A few dozen small programs give the same output through the interpreter at -O0
//!   (the reference), at -O2 and in memory-SSA form (in-process, a few seconds).
//! - With the riscv64 toolchain, a handful also agree with gcc + qemu at every level.
//! - The reducer, given an injected "miscompilation" (division turned into
//!   multiplication), shrinks a program to a few lines that still show it.

use difftest::ast::Program;
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
    for (cfg, seeds) in [(GenConfig::small(), 0..150), (GenConfig::default(), 0..60)] {
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
                "seed {seed}: {config}: {}\n(reproduce: cargo run -p difftest -- --small --seeds {seed})",
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
