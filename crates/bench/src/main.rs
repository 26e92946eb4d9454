//! `bench`: dynamic instruction counts of sysyc's output against `gcc -O2`.
//!
//! `bench [OPTIONS]` compiles every case of a suite (default: the official
//! `performance` suite) with sysyc and the reference compilers, runs them under
//! qemu with an instruction-counting plugin, judges the output and prints a
//! per-case table with the geometric mean of the sysyc/gcc ratios.
//! `bench compare A.json B.json` compares two `--json` reports; `bench frames`
//! lists functions whose stack frame outgrows 2 KiB where gcc's does not.
//! See crates/bench/README.md.

mod compare;
mod frames;
mod report;
mod scaling;
mod svg;

use bench::{compile, pipeline, plugin, results, runner, stats, symbols};
use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use harness::runtime::unique_temp_dir;
use harness::{cases, default_cache_dir, suite_root, Harness};

use crate::pipeline::Context;
use crate::results::{Report, Summary};

#[derive(Parser)]
#[command(
    name = "bench",
    about = "Benchmark sysyc against gcc -O2 by dynamic instruction counts"
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Compare two --json reports: per-case change and geomean change (B vs A).
    Compare {
        /// The baseline report.
        a: PathBuf,
        /// The new report.
        b: PathBuf,
    },
    /// Compile time and peak memory of sysyc on generated programs at 1x, 4x,
    /// 16x (and 64x where that stays within 0.5 MB) along each dimension, with
    /// the growth ratio per 4x.
    Scaling {
        /// The sysyc binary [default: $CARGO_TARGET_DIR or <repo>/target, then release/sysyc]
        #[arg(long)]
        sysyc: Option<PathBuf>,
        /// sysyc optimisation level (-O LEVEL)
        #[arg(short = 'O', long = "opt", default_value_t = 2)]
        opt: u32,
        /// Only these dimensions (comma-separated; see the table for names)
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Largest scale factor (1, 4, 16, 64, ...) [default: per dimension, the
        /// largest up to 64 whose program is at most 0.5 MB]
        #[arg(long)]
        max_factor: Option<usize>,
        /// Timeout per compile, in seconds
        #[arg(long, default_value_t = 120)]
        timeout: u64,
        /// Keep the generated programs in this directory
        #[arg(long)]
        work_dir: Option<PathBuf>,
        /// Compile each program this many times and report the least time
        #[arg(long, default_value_t = 1)]
        repeat: usize,
    },
    /// Functions whose sysyc frame exceeds 2 KiB (stack offsets beyond a 12-bit
    /// immediate) while gcc -O2's frame for them, with the callees sysyc inlined,
    /// stays under it; exits with status 1 when there is any.
    Frames {
        /// Suite directories, or `all` (as for a bench run)
        #[arg(long)]
        suite: Vec<PathBuf>,
        /// The sysyc binary [default: $CARGO_TARGET_DIR or <repo>/target, then release/sysyc]
        #[arg(long)]
        sysyc: Option<PathBuf>,
        /// sysyc optimisation level (-O LEVEL)
        #[arg(short = 'O', long = "opt", default_value_t = 2)]
        opt: u32,
    },
    /// Print a .sy file as the C the reference compilers see (prelude included).
    #[command(name = "to-c")]
    ToC {
        /// The SysY source.
        sy: PathBuf,
    },
}

#[derive(Args)]
struct RunArgs {
    /// Suite directory with NAME.sy / NAME.in / NAME.out; repeat it to run several,
    /// or give `all` for every corpus: sysy2022 performance, sysy2026 performance,
    /// functional, hidden_functional and the project's tests/programs
    /// [default: <repo>/../shared/sysy2022/performance]
    #[arg(long)]
    suite: Vec<PathBuf>,
    /// The sysyc binary [default: $CARGO_TARGET_DIR or <repo>/target, then release/sysyc]
    #[arg(long)]
    sysyc: Option<PathBuf>,
    /// sysyc optimisation level (-O LEVEL)
    #[arg(short = 'O', long = "opt", default_value_t = 2)]
    opt: u32,
    /// Also measure clang-14 -O2
    #[arg(long)]
    clang: bool,
    /// Also measure sysyc's optimised IR compiled by llc-14 -O2 (our middle end with
    /// LLVM's back end)
    #[arg(long)]
    llc: bool,
    /// Only cases whose name contains this string
    #[arg(long)]
    filter: Option<String>,
    /// Write the results as JSON (with several suites, one file each:
    /// `NAME.SUITE.json` for `--json NAME.json`)
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write an SVG bar chart of the per-case ratios
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Worker threads
    #[arg(short = 'j', long, default_value_t = 2)]
    jobs: usize,
    /// Timeout per compile and per run, in seconds
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// Scratch directory for assembly, executables and counts [default: a fresh temporary one]
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Keep the scratch directory
    #[arg(long)]
    keep: bool,
    /// No progress bar
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Compare { a, b }) => compare_cmd(&a, &b),
        Some(Command::ToC { sy }) => compile::to_c(&sy).map(|c| print!("{c}")),
        Some(Command::Frames { suite, sysyc, opt }) => match frames_cmd(&suite, sysyc, opt) {
            Ok(0) => Ok(()),
            Ok(_) => return ExitCode::from(1),
            Err(e) => Err(e),
        },
        Some(Command::Scaling {
            sysyc,
            opt,
            only,
            max_factor,
            timeout,
            work_dir,
            repeat,
        }) => scaling_cmd(sysyc, opt, &only, max_factor, timeout, work_dir, repeat),
        None => bench_cmd(&cli.run),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::from(2)
        }
    }
}

fn compare_cmd(a: &std::path::Path, b: &std::path::Path) -> Result<(), String> {
    let (old, new) = (Report::load(a)?, Report::load(b)?);
    print!("{}", compare::render(&old, &new));
    Ok(())
}

fn scaling_cmd(
    sysyc: Option<PathBuf>,
    opt: u32,
    only: &[String],
    max_factor: Option<usize>,
    timeout: u64,
    work_dir: Option<PathBuf>,
    repeat: usize,
) -> Result<(), String> {
    let sysyc = sysyc.unwrap_or_else(default_sysyc);
    if !sysyc.is_file() {
        return Err(format!(
            "sysyc not found at {} (use --sysyc PATH)",
            sysyc.display()
        ));
    }
    let work = match work_dir {
        Some(d) => d,
        None => {
            let cache = default_cache_dir();
            fs::create_dir_all(&cache).map_err(|e| e.to_string())?;
            unique_temp_dir(&cache).map_err(|e| e.to_string())?
        }
    };
    fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    scaling::run(
        &scaling::ScalingOptions {
            sysyc: &sysyc,
            opt,
            only,
            max_factor: max_factor.map(|m| m.max(1)),
            timeout: Duration::from_secs(timeout),
            work: &work,
            repeat,
        },
        &mut |line| println!("{line}"),
    )
}

/// `bench frames`: the number of oversized frames found (each printed).
fn frames_cmd(suite: &[PathBuf], sysyc: Option<PathBuf>, opt: u32) -> Result<usize, String> {
    let sysyc = sysyc.unwrap_or_else(default_sysyc);
    let harness = Harness::new()?;
    let cache = default_cache_dir();
    fs::create_dir_all(&cache).map_err(|e| e.to_string())?;
    let work = unique_temp_dir(&cache).map_err(|e| e.to_string())?;
    let prelude = work.join("sysy_prelude.h");
    fs::write(&prelude, harness::csource::PRELUDE).map_err(|e| e.to_string())?;
    let (ours_asm, gcc_asm) = (work.join("sysyc.s"), work.join("gcc.s"));
    let (mut functions, mut found) = (0, 0);
    for dir in suite_dirs(suite)? {
        for case in cases(&dir) {
            let c =
                compile::compile_sysyc(&sysyc, &case.sy, &ours_asm, opt, Duration::from_secs(600))?;
            if !c.outcome.success() {
                return Err(format!("sysyc failed on {}", case.sy.display()));
            }
            compile::reference_asm(&harness, &prelude, &case.sy, &gcc_asm)?;
            let read = |p: &std::path::Path| fs::read_to_string(p).map_err(|e| e.to_string());
            let ours = frames::frame_sizes(&read(&ours_asm)?);
            let theirs = frames::frame_sizes(&read(&gcc_asm)?);
            functions += ours.len();
            for o in frames::oversized(&ours, &theirs) {
                found += 1;
                println!(
                    "{} {}: sysyc {} bytes, gcc {}",
                    case.sy.display(),
                    o.function,
                    o.sysyc,
                    o.gcc
                );
            }
        }
    }
    println!("{functions} functions, {found} with a frame beyond 2 KiB where gcc's is within it");
    let _ = fs::remove_dir_all(&work);
    Ok(found)
}

fn default_sysyc() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("release").join("sysyc")
}

/// The directories `--suite` values name (`all`: every corpus; none: the 2022
/// performance suite).
fn suite_dirs(suite: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let root = || suite_root().ok_or("no suite found: pass --suite DIR or set SYSY_SUITE");
    if suite.is_empty() {
        return Ok(vec![root()?.join("performance")]);
    }
    let mut out = Vec::new();
    for s in suite {
        if s.as_os_str() == "all" {
            let r = root()?;
            let shared = r.parent().ok_or("the suite root has no parent")?;
            out.push(r.join("performance"));
            out.push(shared.join("sysy2026").join("performance"));
            out.push(r.join("functional"));
            out.push(r.join("hidden_functional"));
            out.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs"));
        } else {
            out.push(s.clone());
        }
    }
    Ok(out)
}

/// A suite's short name: its directory and the one above it
/// (`sysy2026/performance`), or the directory alone.
fn suite_name(dir: &std::path::Path) -> String {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let last = |p: &std::path::Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    match dir.parent() {
        Some(p) if !last(p).is_empty() => format!("{}/{}", last(p), last(&dir)),
        _ => last(&dir),
    }
}

fn bench_cmd(args: &RunArgs) -> Result<(), String> {
    let suites = suite_dirs(&args.suite)?;
    let mut reports = Vec::new();
    for suite in &suites {
        let json = args.json.as_ref().map(|j| {
            if suites.len() == 1 {
                j.clone()
            } else {
                j.with_extension(format!("{}.json", suite_name(suite).replace('/', "-")))
            }
        });
        if suites.len() > 1 {
            println!("== {}", suite_name(suite));
        }
        reports.push((
            suite_name(suite),
            bench_suite(args, suite, json.as_deref())?,
        ));
    }
    print!("\n{}", report::render_suites(&reports));
    Ok(())
}

/// Runs one suite; its report (printed, and saved to `json`).
fn bench_suite(
    args: &RunArgs,
    suite: &std::path::Path,
    json: Option<&std::path::Path>,
) -> Result<Report, String> {
    let sysyc = args.sysyc.clone().unwrap_or_else(default_sysyc);
    if !sysyc.is_file() {
        return Err(format!(
            "sysyc not found at {} (use --sysyc PATH)",
            sysyc.display()
        ));
    }
    let sysyc = fs::canonicalize(&sysyc).map_err(|e| e.to_string())?;
    let mut selected = cases(suite);
    if let Some(f) = &args.filter {
        selected.retain(|c| c.name.contains(f.as_str()));
    }
    if selected.is_empty() {
        return Err(format!("no cases in {}", suite.display()));
    }

    let harness = Harness::new()?;
    let cache = default_cache_dir();
    let plugin = plugin::build_plugin(&cache)?;
    let clang = if args.clang {
        Some(compile::find_clang().ok_or("--clang given but clang-14 is not on PATH")?)
    } else {
        None
    };
    let llc = if args.llc {
        Some(compile::find_llc().ok_or("--llc given but llc-14 is not on PATH")?)
    } else {
        None
    };
    let work = match &args.work_dir {
        Some(d) => {
            fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
            d.clone()
        }
        None => {
            fs::create_dir_all(&cache).map_err(|e| e.to_string())?;
            unique_temp_dir(&cache).map_err(|e| e.to_string())?
        }
    };
    let prelude = work.join("sysy_prelude.h");
    fs::write(&prelude, harness::csource::PRELUDE).map_err(|e| e.to_string())?;

    let ctx = Context {
        nm: symbols::nm_for(&harness.toolchain.cc),
        harness: &harness,
        plugin,
        sysyc: sysyc.clone(),
        opt_level: args.opt,
        clang,
        llc,
        prelude,
        work: work.clone(),
        timeout: Duration::from_secs(args.timeout),
    };
    let results = runner::run_all(&ctx, &selected, args.jobs, args.quiet);
    let report = Report {
        suite: suite.display().to_string(),
        sysyc: sysyc.display().to_string(),
        opt_level: args.opt,
        summary: Summary::of(&results),
        cases: results,
    };
    print!("{}", report::render(&report));
    if let Some(path) = json {
        report.save(path)?;
    }
    if let Some(path) = &args.svg {
        fs::write(path, svg::render(&report)).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if args.keep || args.work_dir.is_some() {
        eprintln!("work files kept in {}", work.display());
    } else {
        let _ = fs::remove_dir_all(&work);
    }
    Ok(report)
}
