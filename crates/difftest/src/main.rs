//! `difftest`: runs a differential-testing campaign (see the crate README).
//!
//! ```text
//! difftest --seeds 0..2000 --qemu -j1          # gcc + qemu reference, all configurations
//! difftest --seeds 0..200                      # interpreter only, -O0 as the reference
//! difftest --print 42                          # show the program of seed 42
//! difftest --hunt --seeds 0..2000 -j2          # programs where sysyc is slower than gcc/clang
//! ```

use clap::Parser;
use difftest::campaign::{self, Options};
use difftest::gen::{generate, GenConfig};
use difftest::hunt::{describe, HuntOptions};
use difftest::oracle::{install_quiet_panic_hook, Config, Reference};
use harness::Harness;
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;

/// Differential testing of sysyc with random SysY programs.
#[derive(Parser, Debug)]
#[command(name = "difftest", about)]
struct Cli {
    /// Seeds to run: `A..B` (B excluded) or a single seed.
    #[arg(long, default_value = "0..100", value_parser = parse_seeds)]
    seeds: Range<u64>,
    /// Compile with the RISC-V back end and run under qemu too, and use
    /// `riscv64-linux-gnu-gcc -O0 -fwrapv -frounding-math` under qemu as the reference (otherwise
    /// the reference is sysyc's interpreter at -O0).
    #[arg(long)]
    qemu: bool,
    /// Optimisation levels to test.
    #[arg(long, value_delimiter = ',', default_value = "0,1,2")]
    levels: Vec<u8>,
    /// Worker threads.
    #[arg(short = 'j', long, default_value_t = 1)]
    jobs: usize,
    /// Where findings (and scratch files) go.
    #[arg(long, default_value = "target/difftest")]
    out: PathBuf,
    /// Save findings without reducing them.
    #[arg(long)]
    no_reduce: bool,
    /// Property tests the reducer may run per finding.
    #[arg(long, default_value_t = 3000)]
    max_reduce_tests: usize,
    /// Program size: `small` (the in-test round's), `default`, or `large` (several
    /// hundred to a few thousand lines, many values live across loops and calls).
    #[arg(long, value_enum, default_value = "default")]
    size: Size,
    /// Print the program of this seed and exit.
    #[arg(long)]
    print: Option<u64>,
    /// Write the seeds' programs into this directory as a test suite (`gen-SEED.sy`,
    /// `.in`, and the reference's output as `.out`) instead of testing: the bench
    /// (`bench --suite DIR --clang`) then finds where sysyc's code is slower than
    /// gcc's and clang's on programs nobody tuned for.
    #[arg(long)]
    write_suite: Option<PathBuf>,
    /// Hunt missed optimisations instead of testing: measure each seed's program
    /// (U74 cycles under qemu) built by sysyc -O2, gcc -O2 and clang -O2, flag those
    /// where sysyc is slower than the better reference by more than
    /// --hunt-threshold, and reduce each flagged one while it stays flagged
    /// (findings in OUT/hunt-SEED). Needs the riscv64 toolchain, qemu and clang-14.
    #[arg(long)]
    hunt: bool,
    /// The hunter's flag: sysyc's cycles over the better reference's above this.
    #[arg(long, default_value_t = 1.05)]
    hunt_threshold: f64,
    /// The sysyc binary the hunter measures [default: `sysyc` beside this binary].
    #[arg(long)]
    sysyc: Option<PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Size {
    Small,
    Default,
    Large,
}

/// The lock on the output directory `out` ([`campaign::claim_out`]), held while
/// the returned file lives; `None` after saying why it could not be taken.
fn claim_out(out: &std::path::Path) -> Option<std::fs::File> {
    campaign::claim_out(out)
        .map_err(|e| eprintln!("error: {e}"))
        .ok()
}

fn parse_seeds(s: &str) -> Result<Range<u64>, String> {
    let num = |t: &str| t.trim().parse::<u64>().map_err(|e| format!("{t:?}: {e}"));
    match s.split_once("..") {
        Some((a, b)) => Ok(num(a)?..num(b)?),
        None => {
            let a = num(s)?;
            Ok(a..a + 1)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let gen = match cli.size {
        Size::Small => GenConfig::small(),
        Size::Default => GenConfig::default(),
        Size::Large => GenConfig::large(),
    };
    if let Some(seed) = cli.print {
        print!("{}", difftest::print::print_program(&generate(seed, &gen)));
        return ExitCode::SUCCESS;
    }
    if cli.hunt {
        return hunt(&cli, gen);
    }
    let harness = if cli.qemu {
        match Harness::new() {
            Ok(h) => Some(h),
            Err(e) => {
                eprintln!("error: --qemu needs the riscv64 toolchain: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };
    if let Some(dir) = &cli.write_suite {
        let reference = match &harness {
            Some(h) => Reference::Gcc(h),
            None => Reference::Interp,
        };
        return match campaign::write_suite(
            dir,
            cli.seeds.clone(),
            &gen,
            harness.as_ref(),
            &reference,
        ) {
            Ok((written, skipped)) => {
                println!("{written} programs written to {}; {skipped} seeds skipped (the reference failed)", dir.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        };
    }
    let mut configs = Vec::new();
    for &level in &cli.levels {
        // Without gcc, interp-O0 is the reference itself.
        if cli.qemu || level != 0 {
            configs.push(Config::Interp {
                level,
                memory: false,
            });
        }
        if level == 0 {
            configs.push(Config::Interp {
                level,
                memory: true,
            });
        }
    }
    if cli.qemu {
        configs.extend(cli.levels.iter().map(|&level| Config::Qemu { level }));
    }
    let opts = Options {
        seeds: cli.seeds.clone(),
        gen,
        configs,
        gcc_reference: cli.qemu,
        jobs: cli.jobs,
        out: cli.out,
        max_reduce_tests: if cli.no_reduce {
            0
        } else {
            cli.max_reduce_tests
        },
        progress_every: 50,
    };
    let Some(_claim) = claim_out(&opts.out) else {
        return ExitCode::from(2);
    };
    install_quiet_panic_hook();
    let s = campaign::run(&opts, harness.as_ref());
    let reference = if cli.qemu {
        "riscv64-linux-gnu-gcc -O0 -fwrapv -frounding-math + qemu"
    } else {
        "interp-O0"
    };
    println!(
        "seeds {}..{}: {} programs in {:.0}s; reference: {reference}",
        cli.seeds.start,
        cli.seeds.end,
        s.programs,
        s.elapsed.as_secs_f64()
    );
    for (name, n) in &s.runs {
        let bad = s
            .findings
            .iter()
            .filter(|f| f.config.to_string() == *name)
            .count();
        println!("  {name:<16} {n} runs, {bad} mismatches");
    }
    for (seed, reason) in &s.bad_programs {
        println!(
            "  bad program (reference failed): seed {seed}: {}",
            reason.lines().next().unwrap_or("")
        );
    }
    for f in &s.findings {
        println!(
            "  finding: seed {} {} -> {} ({})",
            f.seed,
            f.config,
            f.dir.display(),
            f.blame
        );
    }
    if s.findings.is_empty() && s.bad_programs.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `--hunt`: runs the missed-optimisation hunter and prints what it flagged.
fn hunt(cli: &Cli, gen: GenConfig) -> ExitCode {
    let harness = match Harness::new() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("error: --hunt needs the riscv64 toolchain: {e}");
            return ExitCode::from(2);
        }
    };
    let sysyc = cli.sysyc.clone().unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("sysyc")))
            .unwrap_or_else(|| PathBuf::from("sysyc"))
    });
    let opts = HuntOptions {
        seeds: cli.seeds.clone(),
        gen,
        sysyc,
        out: cli.out.clone(),
        threshold: cli.hunt_threshold,
        // Each property test compiles and runs three builds: fewer than a
        // mismatch's reduction may afford.
        max_reduce_tests: if cli.no_reduce {
            0
        } else {
            cli.max_reduce_tests.min(300)
        },
        jobs: cli.jobs,
    };
    let Some(_claim) = claim_out(&opts.out) else {
        return ExitCode::from(2);
    };
    install_quiet_panic_hook();
    let s = match difftest::hunt::hunt(&opts, &harness) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    for f in &s.flags {
        let reduced = f
            .reduced
            .map_or(String::new(), |c| format!("; reduced: {}", describe(&c)));
        println!(
            "  flagged: seed {}: {}{reduced} -> {}",
            f.seed,
            describe(&f.cycles),
            f.dir.display()
        );
    }
    for (seed, reason) in &s.failed {
        println!("  not measured: seed {seed}: {reason}");
    }
    let share = 100.0 * s.flags.len() as f64 / s.measured.max(1) as f64;
    println!(
        "seeds {}..{}: {} programs measured, {} flagged ({share:.2}%) beyond {:.2}x the better of gcc -O2 and clang -O2; geomean sysyc / better {:.4}",
        cli.seeds.start,
        cli.seeds.end,
        s.measured,
        s.flags.len(),
        cli.hunt_threshold,
        s.geomean
    );
    if s.flags.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
