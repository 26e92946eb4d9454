//! The `sysyc` command line. Accepts the contest's own orders
//! (`sysyc -S -o out.s in.sy [-O1]`) and the developer flags for running and printing
//! each stage on its own (`--check`, `--emit`, `--interpret`, `--passes`, ...).

use clap::{FromArgMatches, Parser, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use sysyc::{Driver, Emit, SsaMode, WarningMode, Warnings};

/// The compiler allocates many small, short-lived vectors per pass and per function;
/// glibc's allocator spends a growing share of the time consolidating its free lists as
/// the heap grows with the module (27% of the time on 6400 small functions), so the
/// binary uses mimalloc, whose per-size free lists cost the same at any heap size.
/// Built without transparent huge pages, so a small program's memory stays small.
/// Freed memory goes back to the system after mimalloc's delay, so a large compile
/// peaks higher than with glibc (106 MB against 63 MB on 8000 branches); returning it
/// at once costs as much system time as the allocator saves.
///
/// So that a big compile does not hold its earlier phases' freed memory while the
/// next one allocates (a 5 MB function at -O0 peaked at 474 MB, 355 MB now), the
/// driver hands freed memory back between phases ([`sysyc::RELEASE_MEMORY`]): after
/// the front end, after lowering and after optimisation.
///
/// Allocations of ordinary alignment go straight to `mi_malloc` and its relatives:
/// the `mimalloc` crate passes every one through the aligned entry points, whose
/// checks cost 57 instructions per allocation, 6% of a large compile (19 million
/// allocations on 8000 loops).
#[global_allocator]
static GLOBAL: Allocator = Allocator;

/// mimalloc, through its unaligned entry points where the alignment allows.
struct Allocator;

/// The alignment of every `mi_malloc` block: its blocks are whole machine words
/// (at least one), laid out from a 16-byte aligned page start. (Not 16: a block
/// of the 24-byte size class may be only 8-aligned, which mimalloc's aligned entry
/// points check for, so a 16-aligned layout goes through them.)
const MALLOC_ALIGN: usize = 8;

impl Allocator {
    /// Whether a `mi_malloc` block is aligned enough for `align`.
    fn plain(align: usize) -> bool {
        align <= MALLOC_ALIGN
    }
}

// SAFETY: each call forwards to mimalloc's functions of the same contract;
// `mi_free` frees blocks of either kind of entry point.
unsafe impl std::alloc::GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if Self::plain(layout.align()) {
            unsafe { mi_malloc(layout.size()) as *mut u8 }
        } else {
            unsafe { std::alloc::GlobalAlloc::alloc(&mimalloc::MiMalloc, layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if Self::plain(layout.align()) {
            unsafe { mi_zalloc(layout.size()) as *mut u8 }
        } else {
            unsafe { std::alloc::GlobalAlloc::alloc_zeroed(&mimalloc::MiMalloc, layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::GlobalAlloc::dealloc(&mimalloc::MiMalloc, ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        if Self::plain(layout.align()) {
            unsafe { mi_realloc(ptr as *mut std::ffi::c_void, new_size) as *mut u8 }
        } else {
            unsafe { std::alloc::GlobalAlloc::realloc(&mimalloc::MiMalloc, ptr, layout, new_size) }
        }
    }
}

extern "C" {
    fn mi_malloc(size: usize) -> *mut std::ffi::c_void;
    fn mi_zalloc(size: usize) -> *mut std::ffi::c_void;
    fn mi_realloc(p: *mut std::ffi::c_void, newsize: usize) -> *mut std::ffi::c_void;
    /// mimalloc's `mi_collect` (in the library `libmimalloc-sys` builds and links
    /// for the allocator above): frees what can be freed and returns free memory
    /// to the system now, rather than after its purge delay.
    fn mi_collect(force: bool);
}

/// Returns the memory mimalloc holds free to the system.
fn release_memory() {
    // SAFETY: `mi_collect` takes a plain bool and may be called at any time from
    // any thread; mimalloc is the global allocator, so its library is linked.
    unsafe { mi_collect(true) }
}

/// An optimizing compiler from SysY to RV64GC assembly.
#[derive(Parser, Debug)]
#[command(name = "sysyc", version, about, args_override_self = true)]
struct Cli {
    /// Input: a SysY source (`.sy`), a textual IR file (`.ir`), machine IR (`.mir`,
    /// run through the back-end stages `--passes` names and printed with --emit mir),
    /// or `-` for SysY on stdin, e.g. `sysyc -S -o prog.s prog.sy`.
    #[arg(required_unless_present_any = ["list_passes", "list_stages", "print_pipeline"])]
    input: Option<PathBuf>,
    /// Produce assembly (the default output; accepted for the contest's command
    /// line `sysyc -S -o prog.s prog.sy -O1`).
    #[arg(short = 'S')]
    assembly: bool,
    /// Output file; `-` writes to stdout, and so does none, except that with -S
    /// (as gcc does) the assembly of `prog.sy` goes to `prog.s` in the current
    /// directory, e.g. `-o prog.s`. sysyc does not link: without -S, a name not
    /// ending in .s gets a warning (not a device such as /dev/null). Give it once:
    /// a second -o is an error.
    #[arg(short = 'o')]
    output: Option<PathBuf>,
    /// Optimisation level: -O0 compiles without optimising; -O1, -O2 and -O3 all run
    /// the full pipeline and back end (the contest compiles its performance cases
    /// with -O1). A repeated -O takes the last; a bare -O is -O1, as in gcc; -Og is
    /// -O1, -Os and -Oz are -O2, -Ofast is -O3 (without fast math: SysY's floats
    /// and integers keep their exact semantics). E.g. `-O1`.
    #[arg(short = 'O', default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
    opt_level: u8,
    /// What to write instead of assembly: the typed AST, the optimised IR, LLVM IR,
    /// assembly, or Graphviz pictures of each function's CFG and dominator tree
    /// (`--filter-print-funcs` picks functions), e.g. `--emit ir`. Give it once: a
    /// second --emit is an error.
    #[arg(long, value_enum)]
    emit: Option<EmitArg>,
    /// Stop after semantic analysis (exit 0 when the program is valid; for .ir
    /// input, after parsing and verifying), e.g. `sysyc --check prog.sy`.
    #[arg(long, conflicts_with_all = ["emit", "interpret", "output", "assembly"])]
    check: bool,
    /// Run the program in the IR interpreter with this process's stdin/stdout; the
    /// exit status is the program's (its return value & 0xff), or 3 when it stops on
    /// a run-time error (division by zero, out-of-bounds access, too deep
    /// recursion), reported on stderr at its source line with the function it
    /// happened in (after optimisation: -O0 keeps every function) and a note that
    /// the status is the interpreter's. A closed stdout (`| head -1`) ends it as
    /// SIGPIPE would, silently. E.g. `sysyc --interpret prog.sy < prog.in`.
    #[arg(long, conflicts_with_all = ["emit", "output", "assembly"])]
    interpret: bool,
    /// How to build SSA: on the fly while lowering (Braun et al.) or from memory form
    /// by mem2reg (Cytron et al.), e.g. `--ssa memory`.
    #[arg(long, value_enum, default_value_t = SsaArg::Braun)]
    ssa: SsaArg,
    /// Run exactly these passes (comma separated) instead of the -O pipeline, e.g.
    /// `--passes mem2reg,gvn,dce --emit ir`; for a `.mir` input, these back-end
    /// stages, e.g. `--passes regalloc,frame --emit mir prog.mir`.
    #[arg(long, value_delimiter = ',')]
    passes: Option<Vec<String>>,
    /// Print the IR after every pass that changes it, numbered in the run, and the
    /// machine IR after isel and every back-end stage that changes it (to stderr),
    /// e.g. `sysyc -O1 --print-after-all -S -o /dev/null prog.sy`.
    #[arg(long)]
    print_after_all: bool,
    /// Print the IR after the named passes (to stderr), or the machine IR after the
    /// named back-end stages (the help lists riscv::STAGES: see `command`), e.g.
    /// `sysyc -O1 --print-after gvn,licm --emit ir prog.sy` or
    /// `sysyc -O2 -S --print-after regalloc prog.sy -o prog.s`.
    #[arg(long, value_delimiter = ',', value_name = "PASSES")]
    print_after: Vec<String>,
    /// Print the IR before the named passes or the machine IR before the named
    /// back-end stages (to stderr), e.g. `--print-before licm,peephole`.
    #[arg(long, value_delimiter = ',', value_name = "PASSES")]
    print_before: Vec<String>,
    /// Show only these functions in the IR dumps of --print-before, --print-after
    /// and --print-after-all, e.g. `--print-after-all --filter-print-funcs main`.
    #[arg(long, value_delimiter = ',', value_name = "FUNCS")]
    filter_print_funcs: Vec<String>,
    /// Run the IR verifier after every pass, the machine IR verifier after every
    /// back-end stage and the register allocation checker after allocation (always
    /// on in debug builds), e.g. `-O2 --verify-each`.
    #[arg(long)]
    verify_each: bool,
    /// Print the wall time and program size of every stage and pass as a table on
    /// stderr, e.g. `sysyc -O2 --time-passes -S prog.sy -o prog.s`.
    #[arg(long)]
    time_passes: bool,
    /// Optimise and compile functions on this many threads at once (0, the
    /// default: one per core, for a module large enough to gain); the assembly is
    /// the same whatever the number, e.g. `-j1`.
    #[arg(short = 'j', long, default_value_t = 0, value_name = "N")]
    jobs: usize,
    /// List the optimisation passes (for `--passes` and `--print-after`) and exit:
    /// `sysyc --list-passes`.
    #[arg(long)]
    list_passes: bool,
    /// List the back-end stages in pipeline order (for `--print-after`,
    /// `--print-before`, and `--passes` on a `.mir` input) and exit, marking those
    /// only -O1 and above run: `sysyc --list-stages`.
    #[arg(long)]
    list_stages: bool,
    /// Print the passes the -O level (or --passes) runs, in order, then the back-end
    /// stages (with the -f options given), as LLVM's -print-pipeline-passes does,
    /// and exit, e.g. `sysyc -O2 --print-pipeline`.
    #[arg(long)]
    print_pipeline: bool,
    /// Hide every warning, e.g. `sysyc -w -S -o prog.s prog.sy`.
    #[arg(short = 'w')]
    no_warnings: bool,
    /// Warning options, as in gcc: overflow, div-by-zero and
    /// incompatible-pointer-types are on by default; -Wall adds return-type,
    /// unused-variable and tautological-compare; -Wunused adds unused-variable;
    /// -Wextra (with -Wall or -Wunused) unused-parameter; -WNAME turns one on,
    /// -Wno-NAME off; -Werror makes warnings errors, -Werror=NAME one kind (and
    /// turns it on); -Wpedantic is accepted. E.g. `-Wall -Wno-unused-variable`.
    /// Names: return-type, unused-variable,
    /// unused-parameter, overflow, div-by-zero, tautological-compare,
    /// unreachable-code, incompatible-pointer-types.
    #[arg(short = 'W', value_name = "OPTION")]
    warning_options: Vec<String>,
    /// Colour diagnostics: auto colours them when stderr is a terminal and
    /// NO_COLOR is not set, e.g. `--color=always 2>&1 | less -R`.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorArg::Auto)]
    color: ColorArg,
    /// Target options, for gcc's command line: -march=rv64gc and -mabi=lp64d are
    /// accepted (sysyc targets RV64GC with the LP64D ABI only); others are errors,
    /// e.g. `-march=rv64gc`.
    #[arg(short = 'm', value_name = "OPTION")]
    machine: Vec<String>,
    /// Code generation options, gcc's names: -fno-schedule-insns (no scheduling,
    /// speculative or interblock motion before register allocation),
    /// -fno-schedule-insns2 (none after), -fno-reorder-blocks (blocks in
    /// instruction selection's order), -fno-modulo-sched (no software pipelining),
    /// and their positive forms (the default), e.g. `-fno-schedule-insns2`.
    #[arg(short = 'f', value_name = "OPTION")]
    feature: Vec<String>,
    /// gcc's -c: not supported (sysyc writes assembly, it does not assemble).
    #[arg(short = 'c', hide = true)]
    compile_only: bool,
    /// In the assembly, precede each run of instructions from one source line by that
    /// line as a comment, `# prog.sy:12: s = s + a[i];` (gcc's -g: no DWARF, the
    /// instructions are the same), e.g. `sysyc -O2 -S -g prog.sy -o prog.s`.
    #[arg(short = 'g', long = "source-lines")]
    source_lines: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum ColorArg {
    Auto,
    Always,
    Never,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
enum EmitArg {
    Ast,
    Ir,
    /// LLVM 14 IR for riscv64-unknown-linux-gnu (triple, data layout, RV64GC, lp64d),
    /// e.g. `sysyc -O2 --emit llvm prog.sy -o prog.ll && llc-14 -mattr=+m,+a,+f,+d,+c prog.ll`.
    Llvm,
    Asm,
    /// Each function's machine IR after the back end's stages, before emission
    /// (text form of docs/mir-text.md), e.g. `sysyc -O2 --emit mir prog.sy`; for a
    /// `.mir` input, after the stages `--passes` names.
    Mir,
    /// Graphviz: each function's control-flow graph and dominator tree, e.g.
    /// `sysyc -O1 --emit dot prog.sy | dot -Tsvg -o prog.svg`.
    Dot,
    /// One self-contained page exploring the compile: source, IR or machine IR
    /// after any stage and assembly side by side, linked line by line, with each
    /// stage's diff, CFG and dominator tree, e.g.
    /// `sysyc -O2 --emit html prog.sy -o prog.html`.
    Html,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
enum SsaArg {
    Braun,
    Memory,
}

/// The command line's description, with what only the code knows written in: the
/// help of `--print-after` lists the back-end stages from `riscv::STAGES`, so it
/// cannot miss one; `-o` and `--emit` keep every occurrence, for
/// `repeated_option`.
fn command() -> clap::Command {
    use clap::CommandFactory;
    let stages: Vec<&str> = riscv::STAGES.iter().map(|s| s.name).collect();
    let stages = stages.join(", ");
    Cli::command()
        // Kept in full, so that `repeated_option` sees a second one (the other
        // options keep the last, `args_override_self`).
        .mut_arg("output", |a| a.action(clap::ArgAction::Append))
        .mut_arg("emit", |a| a.action(clap::ArgAction::Append))
        .mut_arg("print_after", |a| {
            a.help(format!(
                "Print the IR after the named passes (to stderr), or the machine IR after the \
                 named back-end stages ({stages}), e.g. \
                 `sysyc -O1 --print-after gvn,licm --emit ir prog.sy` or \
                 `sysyc -O2 -S --print-after regalloc prog.sy -o prog.s`"
            ))
        })
}

/// What sysyc does instead of a gcc option it does not take, if it is one.
fn gcc_hint(arg: &str) -> Option<&'static str> {
    const LINK: &str = "sysyc does not link: link its assembly with the runtime, e.g. \
                        `riscv64-linux-gnu-gcc -static prog.s runtime/sylib.c -o prog`";
    const NO_CPP: &str = "SysY has no preprocessor: sysyc compiles the file as it is";
    let flag = arg.split('=').next().unwrap_or(arg);
    Some(match flag {
        "-static" | "-shared" | "-pthread" => LINK,
        "-std" | "-x" => "sysyc compiles SysY 2022 (.sy) or its own textual IR (.ir)",
        "-E" | "-include" => NO_CPP,
        _ if flag.starts_with("-l") || flag.starts_with("-L") => LINK,
        _ if ["-I", "-D", "-U"].iter().any(|p| flag.starts_with(p)) => NO_CPP,
        _ => return None,
    })
}

/// gcc's optimisation options that are not a digit, as sysyc's levels: a bare `-O`
/// is `-O1`; `-Os` and `-Oz` (optimise for size) are `-O2`, which is what gcc's
/// `-Os` builds on; `-Og` (optimise for debugging) is `-O1`; `-Ofast` is `-O3`:
/// sysyc has no `-ffast-math` (SysY's floats are IEEE single precision without
/// contraction, its integers wrap), so it is only the highest level.
fn optimize_level(arg: &str) -> Option<&'static str> {
    Some(match arg {
        "-O" | "-Og" => "-O1",
        "-Os" | "-Oz" => "-O2",
        "-Ofast" => "-O3",
        _ => return None,
    })
}

/// sysyc's spelling of an LLVM or clang option written with one dash: clang's
/// `-emit-llvm` is `--emit llvm`; `opt`'s `-print-after-all`, `-time-passes` and the
/// like are sysyc's long options with two dashes.
fn llvm_spelling(arg: &str) -> Option<String> {
    if arg == "-emit-llvm" {
        return Some("--emit llvm".into());
    }
    let rest = arg.strip_prefix('-').filter(|r| !r.starts_with('-'))?;
    let (name, value) = match rest.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (rest, None),
    };
    let known = command()
        .get_arguments()
        .any(|a| a.get_long() == Some(name));
    known.then(|| match value {
        Some(v) => format!("--{name}={v}"),
        None => format!("--{name}"),
    })
}

/// Ends the process on a clap error: help and version go to stdout as clap prints
/// them; a usage error reads `sysyc: error: ...`, as the driver's own do, and exits
/// with status 2.
fn exit_on(err: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        err.exit();
    }
    let _ = write!(std::io::stderr(), "sysyc: {}", err.render());
    std::process::exit(2);
}

/// The options that may be given once: a second `-o` or `--emit` is a usage error
/// rather than silently replacing the first (a repeated `-O` takes the last, as in
/// gcc). `None` when each is given at most once.
fn repeated_option(m: &clap::ArgMatches) -> Option<String> {
    for (id, shown) in [("output", "-o"), ("emit", "--emit")] {
        let values: Vec<String> = m
            .get_raw(id)
            .into_iter()
            .flatten()
            .map(|v| format!("'{}'", v.to_string_lossy()))
            .collect();
        if values.len() > 1 {
            return Some(format!(
                "{shown} is given {} times ({}): sysyc writes one output, give {shown} once",
                values.len(),
                values.join(", ")
            ));
        }
    }
    None
}

/// Parses the command line; an unknown option is reported as gcc users expect (what
/// sysyc does instead, or the option meant), not with clap's "use `-- -x`" tip.
fn parse_command_line() -> Cli {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    // A bare `-O` is `-O1`, as in gcc (rather than taking the next argument);
    // gcc's named levels map to the numbered ones (`optimize_level`).
    let args = std::env::args_os().map(|a| match a.to_str().and_then(optimize_level) {
        Some(level) => level.into(),
        None => a,
    });
    let mut cmd = command();
    let parsed = cmd.try_get_matches_from_mut(args).and_then(|mut m| {
        if let Some(msg) = repeated_option(&m) {
            let _ = writeln!(std::io::stderr(), "sysyc: error: {msg}");
            std::process::exit(2);
        }
        Cli::from_arg_matches_mut(&mut m)
    });
    let err = match parsed {
        Ok(cli) => return cli,
        Err(e) => e.format(&mut cmd),
    };
    if err.kind() != ErrorKind::UnknownArgument {
        exit_on(err);
    }
    let arg = match err.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => exit_on(err),
    };
    // clap names one letter of `-std=c99`; show the option as it was written.
    let arg = std::env::args()
        .skip(1)
        .find(|a| a.starts_with(&arg) && a.starts_with("--") == arg.starts_with("--"))
        .unwrap_or(arg);
    let mut msg = format!("unknown option '{arg}'");
    if !arg.starts_with('-') {
        msg = format!(
            "a second input file '{arg}': sysyc compiles one file per run (as gcc -S with -o does)"
        );
    } else if let Some(hint) = gcc_hint(&arg) {
        msg += &format!(": {hint}");
    } else if let Some(long) = llvm_spelling(&arg) {
        msg += &format!(" (did you mean '{long}'?)");
    } else if let Some(ContextValue::String(s)) = err.get(ContextKind::SuggestedArg) {
        msg += &format!(" (did you mean '{s}'?)");
    }
    let _ = writeln!(
        std::io::stderr(),
        "sysyc: error: {msg}\nsysyc: note: 'sysyc --help' lists the options"
    );
    std::process::exit(2);
}

fn main() -> ExitCode {
    let _ = sysyc::RELEASE_MEMORY.set(release_memory);
    let cli = parse_command_line();
    if let (true, Some(emit)) = (cli.assembly, cli.emit) {
        if !matches!(emit, EmitArg::Asm) {
            exit_on(command().error(
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "-S asks for assembly but --emit {} asks for something else",
                    emit.to_possible_value()
                        .map_or("?".into(), |v| v.get_name().to_string())
                ),
            ));
        }
    }
    // Deeply nested programs and big functions recurse in places; give the compiler a
    // generous stack of its own rather than relying on the main thread's.
    let worker = std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(move || run(cli))
        .expect("spawn compiler thread");
    match worker.join() {
        Ok(code) => code,
        Err(_) => ExitCode::from(101),
    }
}

/// Prints `sysyc: KIND: message` on stderr (a closed stderr loses it, nothing more).
fn say(color: bool, kind: &str, msg: &str) {
    let paint = match (color, kind) {
        (false, _) => "",
        (true, "error") => "\x1b[1;31m",
        (true, _) => "\x1b[1;35m",
    };
    let reset = if color { "\x1b[0m" } else { "" };
    let _ = writeln!(std::io::stderr(), "sysyc: {paint}{kind}:{reset} {msg}");
}

/// Which warnings are on without any `-W` option, and which groups turn the others
/// on, as gcc has them: `overflow`, `div-by-zero` and `incompatible-pointer-types`
/// by default; `-Wall` adds `return-type`, `unused-variable` and
/// `tautological-compare`; `-Wunused` adds `unused-variable`; `-Wextra` with `-Wall`
/// or `-Wunused` adds `unused-parameter`. `unreachable-code` (clang's, which gcc
/// accepts and ignores) only by its name.
const DEFAULT_WARNINGS: &[&str] = &["overflow", "div-by-zero", "incompatible-pointer-types"];
const WALL_WARNINGS: &[&str] = &["return-type", "unused-variable", "tautological-compare"];

/// The warning settings of `-w` and the `-W` options (a named warning's option wins
/// over a group's, whatever their order, as in gcc), or the message for an unknown
/// one. An unknown `-Wno-NAME` only earns a warning (it cannot turn anything on), as
/// in gcc.
fn warning_settings(cli: &Cli, color: bool) -> Result<Warnings, String> {
    let known = |n: &str| front::diag::WARNING_FLAGS.iter().any(|(f, _)| *f == n);
    let mut w = Warnings::default();
    let has = |g: &str| cli.warning_options.iter().any(|o| o == g);
    let (all, extra, unused) = (has("all"), has("extra"), has("unused"));
    let mut on: Vec<&str> = DEFAULT_WARNINGS.to_vec();
    if all {
        on.extend(WALL_WARNINGS);
    }
    if unused {
        on.push("unused-variable");
    }
    if extra && (all || unused) {
        on.push("unused-parameter");
    }
    for opt in &cli.warning_options {
        match opt.as_str() {
            "all" | "extra" | "unused" | "pedantic" => {}
            "error" => w.mode = WarningMode::Error,
            "no-error" => w.mode = WarningMode::Show,
            // As in gcc, `-Werror=NAME` also turns NAME on.
            o if o.strip_prefix("error=").is_some_and(known) => {
                let name = &o["error=".len()..];
                on.push(name);
                w.errors.push(name.to_string());
            }
            o if o.strip_prefix("no-error=").is_some_and(known) => {
                let name = &o["no-error=".len()..];
                w.errors.retain(|e| e != name);
            }
            o if o.strip_prefix("no-").is_some_and(known) => {
                let name = &o["no-".len()..];
                on.retain(|n| *n != name);
            }
            o if known(o) => on.push(o),
            o if o.starts_with("no-") => say(
                color,
                "warning",
                &format!("unknown warning option '-W{o}' ignored"),
            ),
            o => {
                let names: Vec<&str> = front::diag::WARNING_FLAGS.iter().map(|(f, _)| *f).collect();
                return Err(format!(
                    "unknown warning option '-W{o}' (known: -Wall, -Wextra, -Wunused, -Wpedantic, -Werror, -W[no-]error=NAME, -W[no-]NAME with NAME one of {})",
                    names.join(", ")
                ));
            }
        }
    }
    w.disabled = front::diag::WARNING_FLAGS
        .iter()
        .map(|(f, _)| *f)
        .filter(|f| !on.contains(f))
        .map(String::from)
        .collect();
    if cli.no_warnings {
        w.mode = WarningMode::Silence;
    }
    Ok(w)
}

/// Writes a listing (`--list-passes`, `--print-pipeline`) to stdout; a closed pipe
/// (`| head`) is no error.
fn print_listing(text: &str) -> ExitCode {
    match std::io::stdout().write_all(text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "sysyc: error: {e}");
            ExitCode::from(1)
        }
    }
}

/// Checks gcc's target options: RV64GC and LP64D are what sysyc generates.
fn check_machine(opts: &[String]) -> Result<(), String> {
    for o in opts {
        let ok = match o.split_once('=') {
            Some(("arch", a)) => {
                let a = a.to_ascii_lowercase();
                a.starts_with("rv64gc") || a.starts_with("rv64imafdc")
            }
            Some(("abi", a)) => a == "lp64d",
            _ => false,
        };
        if !ok {
            return Err(format!(
                "'-m{o}' is not supported: sysyc generates RV64GC code for the LP64D ABI only (accepted: -march=rv64gc, -mabi=lp64d)"
            ));
        }
    }
    Ok(())
}

fn run(cli: Cli) -> ExitCode {
    let color = match cli.color {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            use std::io::IsTerminal;
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let warnings = match warning_settings(&cli, color) {
        Ok(w) => w,
        Err(msg) => {
            say(color, "error", &msg);
            return ExitCode::from(2);
        }
    };
    let mut codegen = riscv::CodegenFlags::default();
    for f in &cli.feature {
        if f == "syntax-only" {
            say(
                color,
                "error",
                "unknown option '-fsyntax-only' (did you mean '--check'? it stops after semantic analysis)",
            );
            return ExitCode::from(2);
        }
        if let Err(msg) = codegen.set(f) {
            // A usage error, as for any other unknown option.
            say(color, "error", &msg);
            say(color, "note", "'sysyc --help' lists the options");
            return ExitCode::from(2);
        }
    }
    if let Err(msg) = check_machine(&cli.machine) {
        say(color, "error", &msg);
        return ExitCode::from(2);
    }
    if cli.compile_only {
        say(
            color,
            "error",
            "-c is not supported: sysyc writes assembly and does not assemble it; \
             run `sysyc -S -o prog.s prog.sy`, then `riscv64-linux-gnu-gcc -c prog.s`",
        );
        return ExitCode::from(2);
    }
    let show_warnings = warnings.mode != WarningMode::Silence;
    if cli.print_pipeline {
        let stages: Vec<&str> = riscv::stage_pipeline(cli.opt_level)
            .filter(|s| codegen.runs(s.name))
            .map(|s| s.name)
            .collect();
        let passes = match &cli.passes {
            Some(names) => names.join(","),
            None => opt::pipeline(cli.opt_level).join(","),
        };
        let text = format!("passes: {passes}\nstages: {}\n", stages.join(","));
        return print_listing(&text);
    }
    if cli.list_passes || cli.list_stages {
        let passes: Vec<(&str, String)> = if cli.list_passes {
            opt::pass_names()
                .into_iter()
                .map(|(n, w)| (n, w.to_string()))
                .collect()
        } else {
            riscv::STAGES
                .iter()
                .map(|s| {
                    let only = if s.optimising { " (-O1 and above)" } else { "" };
                    (s.name, format!("{}{only}", s.description))
                })
                .collect()
        };
        let width = passes.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        let mut text = String::new();
        for (name, what) in passes {
            text += &format!("{name:width$}  {what}\n");
        }
        return print_listing(&text);
    }
    let Some(input) = cli.input else {
        unreachable!(
            "clap requires the input unless --list-passes, --list-stages or --print-pipeline"
        );
    };
    let emit = if cli.check {
        Emit::Check
    } else if cli.interpret {
        Emit::Interpret
    } else {
        match cli.emit {
            Some(EmitArg::Ast) => Emit::Ast,
            Some(EmitArg::Ir) => Emit::Ir,
            Some(EmitArg::Llvm) => Emit::Llvm,
            Some(EmitArg::Dot) => Emit::Dot,
            Some(EmitArg::Html) => Emit::Html,
            Some(EmitArg::Mir) => Emit::Mir,
            Some(EmitArg::Asm) | None => Emit::Asm,
        }
    };
    // gcc's habit: `-S prog.sy` without `-o` writes `prog.s` in the current
    // directory (assembly only; standard input and the other outputs go to stdout).
    let output = match cli.output {
        None if cli.assembly && emit == Emit::Asm && input.as_os_str() != "-" => input
            .file_stem()
            .map(|stem| PathBuf::from(stem).with_extension("s")),
        o => o.filter(|p| p.as_os_str() != "-"),
    };
    let driver = Driver {
        input,
        output,
        opt_level: cli.opt_level,
        emit,
        ssa: match cli.ssa {
            SsaArg::Braun => SsaMode::Braun,
            SsaArg::Memory => SsaMode::Memory,
        },
        passes: cli.passes,
        print_after_all: cli.print_after_all,
        print_after: cli.print_after,
        print_before: cli.print_before,
        print_funcs: cli.filter_print_funcs,
        verify_each: cli.verify_each || cfg!(debug_assertions),
        time_passes: cli.time_passes,
        jobs: cli.jobs,
        source_lines: cli.source_lines,
        warnings,
        color,
        codegen,
    };
    if let Err(msg) = driver.check_names() {
        // A misspelt pass or stage is a usage error.
        say(color, "error", msg.trim_start_matches("error: "));
        return ExitCode::from(2);
    }
    if let Some(out) = &driver.output {
        let assembly_name = out.extension().is_some_and(|e| e == "s" || e == "S");
        // `-o /dev/null`, a FIFO or a terminal is no file that could be taken for an
        // executable: only a name that is (or will be) a regular file gets the warning.
        let not_a_file = std::fs::metadata(out).is_ok_and(|m| !m.is_file());
        if emit == Emit::Asm && !cli.assembly && !assembly_name && !not_a_file && show_warnings {
            say(
                color,
                "warning",
                &format!(
                    "writing assembly to '{}': sysyc does not assemble or link (pass -S, or name the output *.s, to silence this)",
                    out.display()
                ),
            );
        }
    }
    match driver.run() {
        Ok(code) => ExitCode::from(code),
        Err(msg) => {
            // Not `eprint!`, which panics when stderr is closed: the message is
            // lost then, the exit status still says what happened.
            // Errors not about a place in the input name the tool, as gcc's do.
            match msg.strip_prefix("error: ") {
                Some(rest) => say(color, "error", rest.trim_end_matches('\n')),
                None => {
                    let nl = if msg.ends_with('\n') { "" } else { "\n" };
                    let _ = write!(std::io::stderr(), "{msg}{nl}");
                }
            }
            ExitCode::from(1)
        }
    }
}
