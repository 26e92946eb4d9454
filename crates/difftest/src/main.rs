//! `difftest`: runs a differential-testing campaign (see the crate README).
//!
//! ```text
//! difftest --seeds 0..2000 --qemu -j1          # gcc + qemu reference, all configurations
//! difftest --seeds 0..200                      # interpreter only, -O0 as the reference
//! difftest --print 42                          # show the program of seed 42
//! ```

use clap::Parser;
use difftest::campaign::{self, Options};
use difftest::gen::{generate, GenConfig};
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
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Size {
    Small,
    Default,
    Large,
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
