//! The sysyc driver: reads a `.sy` or `.ir` file and runs the pipeline
//!
//! ```text
//! front (check) -> lower (Braun SSA, or memory form + mem2reg) -> opt (passes)
//!     -> riscv (assembly) | LLVM IR | ir text | interpreter
//! ```
//!
//! stopping where the command line asks. Output files are written whole or not at
//! all: the text goes to a temporary file beside the target, renamed into place.
//!
//! [`compile_to_ir`] and [`compile_to_asm`] run the same pipeline in-process on a
//! source string, for tools that compile many programs (the differential tester).

pub mod dot;
pub mod explore;
pub mod ir_input;
pub mod print_passes;
pub mod time_report;

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;
use time_report::{Size, TimeReport};

/// What the driver produces.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Emit {
    /// Only check the program (front end); no output.
    Check,
    /// The typed AST.
    Ast,
    /// Textual IR after optimisation.
    Ir,
    /// LLVM IR (LLVM 14) after optimisation, for 64-bit RISC-V Linux (RV64GC, lp64d).
    Llvm,
    /// RV64GC assembly.
    Asm,
    /// Machine IR text after the back-end stages (for `.mir` input, after the stages
    /// of `--passes`).
    Mir,
    /// Each function's CFG and dominator tree after optimisation, as Graphviz.
    Dot,
    /// One self-contained HTML page: source, IR and machine IR after every stage,
    /// assembly, linked by source line, with diffs, CFGs and dominator trees.
    Html,
    /// Run the optimised IR in the interpreter.
    Interpret,
}

/// How SSA form is built.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SsaMode {
    /// On the fly during lowering (Braun et al. 2013).
    Braun,
    /// Lower scalars to alloc/load/store, then mem2reg (Cytron et al. 1991).
    Memory,
}

/// What becomes of the front end's warnings (`-w`, `-Werror`, `-Wno-<flag>`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Warnings {
    /// Show, hide or promote them.
    pub mode: WarningMode,
    /// Flags whose warnings are hidden (`-Wno-unused-parameter` gives
    /// `unused-parameter`).
    pub disabled: Vec<String>,
    /// Flags whose warnings are errors (`-Werror=div-by-zero` gives
    /// `div-by-zero`).
    pub errors: Vec<String>,
}

/// Whether warnings are shown, hidden or errors.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum WarningMode {
    /// Printed on stderr; compilation goes on (the default).
    #[default]
    Show,
    /// Not printed (`-w`).
    Silence,
    /// Errors: printed, and the compile fails (`-Werror`).
    Error,
}

impl Warnings {
    /// Applies the settings to a file's diagnostics.
    pub fn apply(&self, diags: &mut front::Diagnostics) {
        for flag in &self.disabled {
            diags.drop_warnings_of(flag);
        }
        for flag in &self.errors {
            diags.promote_warnings_of(flag);
        }
        match self.mode {
            WarningMode::Show => {}
            WarningMode::Silence => diags.drop_warnings(),
            WarningMode::Error => diags.promote_warnings(),
        }
    }
}

/// One compiler invocation.
#[derive(Clone, Debug)]
pub struct Driver {
    pub input: PathBuf,
    /// `None` writes to stdout.
    pub output: Option<PathBuf>,
    pub opt_level: u8,
    pub emit: Emit,
    pub ssa: SsaMode,
    /// Explicit pass list overriding the -O pipeline.
    pub passes: Option<Vec<String>>,
    pub print_after_all: bool,
    pub print_after: Vec<String>,
    /// Passes before which to print the IR (`--print-before`).
    pub print_before: Vec<String>,
    /// Functions the IR dumps show (`--filter-print-funcs`); all when empty.
    pub print_funcs: Vec<String>,
    pub verify_each: bool,
    /// Collect wall time and size per stage and print the table on stderr
    /// (`--time-passes`).
    pub time_passes: bool,
    /// Threads the optimiser's function passes and the back end work on
    /// functions with (`-j`); `0`: one per core when the module is large enough.
    pub jobs: usize,
    /// Comment the assembly with the source line of each run of instructions (`-g`).
    pub source_lines: bool,
    /// What becomes of warnings.
    pub warnings: Warnings,
    /// Colour diagnostics with ANSI escapes (`--color`).
    pub color: bool,
    /// Back-end optimisations switched off (`-fno-schedule-insns`, ...).
    pub codegen: riscv::CodegenFlags,
}

/// Called between the phases of a compile (after the front end, after lowering,
/// after optimisation), when each has freed its garbage, to return the memory the
/// allocator holds free to the system: the binary sets it (mimalloc keeps freed
/// memory for a while, and a big compile's next phase would pile on top of it).
pub static RELEASE_MEMORY: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

fn release_memory() {
    if let Some(f) = RELEASE_MEMORY.get() {
        f();
    }
}

thread_local! {
    /// The `--time-passes` rows of the compile running on this thread.
    static REPORT: RefCell<Option<TimeReport>> = const { RefCell::new(None) };
}

/// Adds a row to the running `--time-passes` report, if any.
fn add_row(name: &str, seconds: f64, size: Size) {
    REPORT.with(|r| {
        if let Some(r) = r.borrow_mut().as_mut() {
            r.add(name, seconds, size);
        }
    });
}

/// Adds a row for a stage that began at `start`.
fn record(name: &str, start: Instant, size: Size) {
    add_row(name, start.elapsed().as_secs_f64(), size);
}

fn timing() -> bool {
    REPORT.with(|r| r.borrow().is_some())
}

impl Driver {
    /// The back end's options for this invocation.
    fn backend_options(&self) -> riscv::Options {
        riscv::Options {
            opt_level: self.opt_level,
            verify: self.verify_each,
            flags: self.codegen.clone(),
            jobs: self.jobs,
        }
    }

    /// Runs the invocation. `Ok(status)` is the process exit status (the program's
    /// own for `--interpret`); `Err` carries a rendered error message. With
    /// `time_passes`, the timing table goes to stderr at the end (also after an
    /// error).
    pub fn run(&self) -> Result<u8, String> {
        if !self.time_passes {
            return self.run_stages();
        }
        REPORT.with(|r| *r.borrow_mut() = Some(TimeReport::default()));
        let result = self.run_stages();
        let report = REPORT.with(|r| r.borrow_mut().take()).unwrap_or_default();
        if !report.is_empty() {
            let text = report.render(&self.input.display().to_string());
            // Like the other diagnostics: a closed stderr loses the table, nothing more.
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
        result
    }

    /// Checks the names of `passes`, `print_after` and `print_before` (IR passes,
    /// or back-end stages: the dumps may name either, and the passes of a machine
    /// IR input are stages); `Err` names the unknown one, with the closest known
    /// name. [`Driver::run`] checks them too, before reading or writing anything;
    /// the command line asks first, to report a usage error.
    pub fn check_names(&self) -> Result<(), String> {
        let mir_input = self.input.extension().is_some_and(|e| e == "mir");
        if mir_input {
            if let Some(n) = (self.passes.iter().flatten())
                .find(|n| riscv::lookup_stage(n).is_none_or(|s| s.name == "isel"))
            {
                let stages: Vec<&str> = riscv::STAGES.iter().skip(1).map(|s| s.name).collect();
                return Err(format!(
                    "error: unknown back-end stage '{n}' for machine IR input (stages: {})",
                    stages.join(", ")
                ));
            }
        } else if let Some(n) = (self.passes.iter().flatten()).find(|n| opt::lookup(n).is_none()) {
            return Err(format!("error: {}", opt::unknown_pass(n)));
        }
        let printed = self.print_after.iter().chain(&self.print_before);
        if let Some(n) = printed
            .into_iter()
            .find(|n| opt::lookup(n).is_none() && riscv::lookup_stage(n).is_none())
        {
            let score = |m: &str| opt::pipeline::name_similarity(n, m);
            let best = |names: &mut dyn Iterator<Item = &'static str>| {
                names
                    .map(|m| (score(m), m))
                    .max_by(|a, b| a.0.total_cmp(&b.0))
            };
            let ir = best(&mut opt::pass_names().into_iter().map(|(m, _)| m));
            let stage = best(&mut riscv::STAGES.iter().map(|s| s.name));
            let mut msg = opt::unknown_pass(n);
            if let Some((sc, m)) = stage.filter(|&(sc, _)| sc >= 0.8) {
                if ir.is_none_or(|(ir_sc, _)| ir_sc < sc) {
                    msg = format!("unknown pass '{n}' (did you mean the back-end stage '{m}'?)");
                }
            }
            if !msg.contains("did you mean") {
                let stages: Vec<&str> = riscv::STAGES.iter().map(|s| s.name).collect();
                msg += &format!(" (back-end stages: {})", stages.join(", "));
            }
            return Err(format!("error: {msg}"));
        }
        Ok(())
    }

    fn run_stages(&self) -> Result<u8, String> {
        self.check_names()?;
        let mir_input = self.input.extension().is_some_and(|e| e == "mir");
        let from_stdin = self.input.as_os_str() == "-";
        let name = if from_stdin {
            "<stdin>".to_string()
        } else {
            self.input.display().to_string()
        };
        if let Some(out) = &self.output {
            // A directory that does not exist is reported before the compile, not after.
            let dir = out.parent().filter(|d| !d.as_os_str().is_empty());
            if out.as_os_str() != "-" && dir.is_some_and(|d| !d.is_dir()) {
                return Err(format!(
                    "error: cannot write {}: No such file or directory",
                    out.display()
                ));
            }
            if same_file(out, &self.input) {
                return Err(format!(
                    "error: the output file {} is the input file",
                    out.display()
                ));
            }
        }
        let bytes = if from_stdin {
            let mut buf = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf).map(|_| buf)
        } else {
            std::fs::read(&self.input)
        }
        .map_err(|e| format!("error: cannot read {name}: {}", io_reason(&e)))?;
        if let Some(why) = not_text(&bytes) {
            let mut d = front::Diagnostics::default();
            d.push(front::Diagnostic::file_error(format!(
                "not a SysY source file ({why})"
            )));
            let style = front::diag::Style { color: self.color };
            return Err(d.render_styled(&name, "", style));
        }
        // Each run of bytes that are not UTF-8 becomes one U+FFFD: harmless in
        // comments, as in gcc and clang, and reported with its line and column
        // anywhere else.
        let src = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };

        // A UTF-8 byte-order mark is not part of the program (gcc and clang skip it).
        let src = src
            .strip_prefix('\u{feff}')
            .map(str::to_string)
            .unwrap_or(src);

        let style = front::diag::Style { color: self.color };
        if mir_input {
            return self.run_mir(&name, &src);
        }
        let defined_at: Vec<(String, front::span::Span)>;
        let mut module = if self.input.extension().is_some_and(|e| e == "ir") {
            if self.emit == Emit::Ast {
                return Err(format!(
                    "error: --emit ast needs a SysY source, and {name} is textual IR (--emit ir prints it)"
                ));
            }
            let start = Instant::now();
            let m = ir::text::parse_module(&src)
                .map_err(|e| ir_input::parse_error(&name, &src, &e, style))?;
            ir::verifier::verify_module(&m)
                .map_err(|e| ir_input::verifier_errors(&name, &src, &e, style))?;
            record(
                "IR parse and verify",
                start,
                Size::After(opt::module_insts(&m)),
            );
            if self.emit == Emit::Check {
                // Checking IR is parsing and verifying it.
                return Ok(0);
            }
            defined_at = m
                .funcs
                .values()
                .filter_map(|f| Some((f.name.clone(), ir_input::function_span(&src, &f.name)?)))
                .collect();
            let has_main = m
                .func_by_name("main")
                .is_some_and(|f| !m.funcs[f].is_declaration());
            if !has_main && matches!(self.emit, Emit::Asm | Emit::Interpret) {
                let mut d = front::Diagnostics::default();
                d.push(front::Diagnostic::file_error("no `main` function defined"));
                return Err(d.render_styled(&name, &src, style));
            }
            m
        } else {
            let start = Instant::now();
            let checked = front::check_all(&name, &src);
            release_memory();
            let mut diags = checked.diagnostics;
            self.warnings.apply(&mut diags);
            let rendered = diags.render_styled(&name, &src, style);
            let program = match checked.program {
                Some(p) if diags.is_empty() => p,
                _ => return Err(rendered),
            };
            // Warnings go to stderr now, before any output; they change nothing else.
            let _ = std::io::stderr().write_all(rendered.as_bytes());
            record("front end (parse, check)", start, Size::None);
            match self.emit {
                Emit::Check => return Ok(0),
                Emit::Ast => {
                    self.write_output(front::dump_with_positions(&program, &src).as_bytes())?;
                    return Ok(0);
                }
                _ => {}
            }
            // Where each user function is defined, to say where a run-time error
            // of `--interpret` happened.
            defined_at = program
                .funcs
                .iter()
                .filter(|f| !f.is_runtime)
                .map(|f| (f.name.clone(), f.span))
                .collect();
            let m = self.lower(&program)?;
            drop(program);
            release_memory();
            m
        };

        if self.emit == Emit::Html {
            return self.explore(&name, &src, module);
        }
        self.optimize(&mut module)?;
        // The back end reads the IR to the end: without the tables' spare room.
        for (_, f) in module.funcs.iter_mut() {
            f.shrink_to_fit();
        }
        release_memory();

        match self.emit {
            Emit::Check | Emit::Ast | Emit::Html => Ok(0),
            Emit::Ir => {
                self.write_output(ir::text::print_module(&module).as_bytes())?;
                Ok(0)
            }
            Emit::Llvm => {
                self.write_output(llvm::emit_module_riscv64(&module).as_bytes())?;
                Ok(0)
            }
            Emit::Dot => {
                if let Some(msg) = print_passes::unknown_function(&module, &self.print_funcs) {
                    return Err(msg);
                }
                let text = dot::module_to_dot(&module, &self.print_funcs);
                self.write_output(text.as_bytes())?;
                Ok(0)
            }
            Emit::Mir => {
                let opts = self.backend_options();
                let facts = riscv::ModuleFacts::of(&module);
                let mut text = Vec::new();
                for (fid, f) in module.funcs.iter() {
                    if !f.is_declaration() {
                        let mf = riscv::compile_function(&module, fid, &facts, &opts)
                            .map_err(|e| format!("{name}: error: in function {}: {e}", f.name))?;
                        text.push(riscv::text::print_function(&mf));
                    }
                }
                self.write_output(text.join("\n").as_bytes())?;
                Ok(0)
            }
            Emit::Asm => {
                let opts = self.backend_options();
                let mut stages = riscv::StageTimes::default();
                let times = timing().then_some(&mut stages);
                let lines = riscv::srcloc::SourceLines::new(&name, &src);
                let source = self.source_lines.then_some(&lines);
                let mut dumps = print_passes::MirDumps::new(
                    &self.print_before,
                    &self.print_after,
                    self.print_after_all,
                    &self.print_funcs,
                );
                let wanted = dumps.wanted();
                let mut hook = |when, stage: &'static riscv::StageInfo, mf: &_, _: Option<&_>| {
                    dumps.around(when, stage, mf)
                };
                let hook: Option<riscv::StageHook<'_>> =
                    if wanted { Some(&mut hook) } else { None };
                let asm = riscv::emit_module_hooked(&module, &opts, times, source, hook)
                    .map_err(|e| format!("{name}: error: {e}"))?;
                for s in &stages.stages {
                    let name = format!("back end: {}", s.name);
                    add_row(&name, s.seconds, Size::Machine(s.insts_after));
                }
                self.write_output(asm.as_bytes())?;
                Ok(0)
            }
            Emit::Interpret => {
                let stdin = std::io::stdin();
                let stderr = std::io::stderr();
                let mut stdout = PipeWatch {
                    inner: std::io::stdout().lock(),
                    closed: false,
                };
                let run = interp::run_with_io(
                    &module,
                    &mut stdin.lock(),
                    &mut stdout,
                    &mut stderr.lock(),
                    &interp::RunOptions::default(),
                );
                match run {
                    Ok(code) => Ok((code & 0xff) as u8),
                    // The reader of the program's output is gone (`| head -1`): end
                    // as the compiled program would, killed by SIGPIPE, silently.
                    Err(_) if stdout.closed => die_of_sigpipe(),
                    Err(e) => {
                        let text = runtime_error(&name, &src, &defined_at, &e, style);
                        if !is_trap(&e.kind) {
                            return Err(text);
                        }
                        // The message says the status is the interpreter's: a program
                        // may return 3 itself, but then says nothing on stderr.
                        let note = format!(
                            "sysyc: note: --interpret stopped the program on this error: exit status {RUNTIME_ERROR_STATUS}\n"
                        );
                        let _ = std::io::stderr().write_all((text + &note).as_bytes());
                        Ok(RUNTIME_ERROR_STATUS)
                    }
                }
            }
        }
    }

    /// Machine IR input: parse and verify (with the rules for the first stage of
    /// `--passes`), run the stages of `--passes`, print with `--emit mir` (or only
    /// check).
    fn run_mir(&self, name: &str, src: &str) -> Result<u8, String> {
        match self.emit {
            Emit::Check | Emit::Mir => {}
            _ => {
                return Err(format!(
                    "error: {name} is machine IR: only --emit mir and --check read it \
                     (assembly needs the module's globals)"
                ))
            }
        }
        let start = Instant::now();
        let mut funcs = riscv::text::parse_functions(src)
            .map_err(|e| format!("{name}:{}: error: {}", e.line, e.message))?;
        let stages: Vec<&str> = self.passes.iter().flatten().map(String::as_str).collect();
        // Like textual IR, the input is always verified (the stages assume valid code).
        // Without stages, the rules of any point of the back end will do.
        use riscv::verify::Stage;
        for mf in &funcs {
            let result = match stages.first().and_then(|s| riscv::lookup_stage(s)) {
                Some(first) => riscv::verify::verify(mf, riscv::stage_input(first))
                    .map_err(|e| format!("as input of {}: {e}", first.name)),
                None => [
                    Stage::Virtual,
                    Stage::Allocated,
                    Stage::FrameLaidOut,
                    Stage::Final,
                ]
                .into_iter()
                .map(|rules| riscv::verify::verify(mf, rules).map_err(|e| e.to_string()))
                .find(Result::is_ok)
                .unwrap_or_else(|| {
                    riscv::verify::verify(mf, Stage::Virtual).map_err(|e| e.to_string())
                }),
            };
            result.map_err(|e| format!("{name}: error: {e}"))?;
        }
        record("MIR parse and verify", start, Size::None);
        let mut dumps = print_passes::MirDumps::new(
            &self.print_before,
            &self.print_after,
            self.print_after_all,
            &self.print_funcs,
        );
        for mf in &mut funcs {
            for s in &stages {
                let info = riscv::lookup_stage(s).expect("stage names are checked");
                dumps.around(riscv::When::Before, info, mf);
                let start = Instant::now();
                riscv::run_stages(mf, &[s], self.verify_each)
                    .map_err(|e| format!("{name}: error: in function {}: {e}", mf.name))?;
                record(&format!("back end: {}", info.name), start, Size::None);
                dumps.around(riscv::When::After, info, mf);
            }
        }
        if self.emit == Emit::Check {
            return Ok(0);
        }
        let text: Vec<String> = funcs.iter().map(riscv::text::print_function).collect();
        self.write_output(text.join("\n").as_bytes())?;
        Ok(0)
    }

    fn lower(&self, program: &front::tast::Program) -> Result<ir::Module, String> {
        let start = Instant::now();
        let mut module = lower::lower_program(program, self.ssa == SsaMode::Memory);
        record("lowering", start, Size::After(opt::module_insts(&module)));
        self.verify(&module, "lowering")?;
        if self.ssa == SsaMode::Memory {
            for (_, f) in module.funcs.iter_mut() {
                if !f.is_declaration() {
                    opt::mem2reg(f);
                }
            }
            self.verify(&module, "mem2reg")?;
        }
        Ok(module)
    }

    /// The passes to run: `--passes`, or the `-O` level's pipeline (without
    /// software pipelining under `-fno-modulo-sched`).
    fn pass_names(&self) -> Vec<String> {
        match &self.passes {
            Some(p) => p.clone(),
            None => opt::pipeline(self.opt_level)
                .iter()
                .filter(|&&s| !(self.codegen.no_modulo_sched && s == "swp"))
                .map(|s| s.to_string())
                .collect(),
        }
    }

    /// `--emit html`: the explorer page (see [`explore`]).
    fn explore(&self, name: &str, src: &str, mut module: ir::Module) -> Result<u8, String> {
        // --filter-print-funcs: the page opens on the first function it names (any
        // function of the program, even one inlined away later).
        if let Some(msg) = print_passes::unknown_function(&module, &self.print_funcs) {
            return Err(msg);
        }
        let names = self.pass_names();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let lines = riscv::srcloc::SourceLines::new(name, src);
        let mut data = explore::Data::default();
        explore::run_ir_passes(&mut data, &mut module, &lines, &names, self.verify_each)?;
        let opts = self.backend_options();
        explore::run_back_end(&mut data, &module, &opts, &lines, self.time_passes)
            .map_err(|e| format!("{name}: error: {e}"))?;
        // --time-passes: a row per stage (the time includes printing nothing: the
        // texts are taken between stages), then the page's own cost.
        let total = |s: &explore::Stage| -> usize {
            s.funcs.iter().map(|&(_, t)| data.texts[t].insts).sum()
        };
        for (k, s) in data.stages.iter().enumerate().skip(1) {
            let (row, size) = match s.kind {
                explore::Kind::Ir => (
                    s.name.clone(),
                    Size::Change(total(&data.stages[k - 1]), total(s)),
                ),
                _ => (format!("back end: {}", s.name), Size::Machine(total(s))),
            };
            add_row(&row, s.seconds, size);
        }
        let clock = Instant::now();
        let start = self.print_funcs.first().map(String::as_str);
        let json = explore::to_json(&data, name, src, self.opt_level, self.time_passes, start);
        let title = format!("sysyc -O{}: {name}", self.opt_level);
        let page = explore::render(&json, &title);
        record("explorer page (JSON, compression)", clock, Size::None);
        self.write_output(page.as_bytes())?;
        Ok(0)
    }

    fn optimize(&self, module: &mut ir::Module) -> Result<(), String> {
        let names = self.pass_names();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        // The IR passes among the names to print around (the rest are back-end stages).
        let ir_only = |v: &[String]| -> Vec<String> {
            v.iter()
                .filter(|n| opt::lookup(n).is_some())
                .cloned()
                .collect()
        };
        let (print_before, print_after) = (ir_only(&self.print_before), ir_only(&self.print_after));
        if !print_before.is_empty() || !self.print_funcs.is_empty() {
            if let Some(msg) = print_passes::unknown_function(module, &self.print_funcs) {
                return Err(msg);
            }
            let dumps = print_passes::Dumps {
                before: &print_before,
                after: &print_after,
                after_all: self.print_after_all,
                funcs: &self.print_funcs,
            };
            let mut passes = Vec::new();
            let times = timing().then_some(&mut passes);
            let result =
                print_passes::run_printing(module, &names, self.verify_each, &dumps, times);
            for t in &passes {
                add_row(
                    t.name,
                    t.seconds,
                    Size::Change(t.insts_before, t.insts_after),
                );
            }
            return result;
        }
        let mut err = std::io::stderr();
        let mut opts = opt::PassOptions {
            verify_each: self.verify_each,
            print_after_all: if self.print_after_all {
                Some(&mut err)
            } else {
                None
            },
            print_after,
            jobs: self.jobs,
            ..Default::default()
        };
        let mut passes = Vec::new();
        if timing() {
            opts.timings = Some(&mut passes);
        }
        let result = opt::run_passes(module, &names, &mut opts);
        for t in &passes {
            add_row(
                t.name,
                t.seconds,
                Size::Change(t.insts_before, t.insts_after),
            );
        }
        result
    }

    fn verify(&self, module: &ir::Module, after: &str) -> Result<(), String> {
        if !self.verify_each {
            return Ok(());
        }
        ir::verifier::verify_module(module).map_err(|e| {
            format!(
                "internal error: invalid IR after {after}:\n{e}\n{}",
                ir::text::print_module(module)
            )
        })
    }

    fn write_output(&self, bytes: &[u8]) -> Result<(), String> {
        match &self.output {
            None => {
                let mut out = std::io::stdout().lock();
                match out.write_all(bytes).and_then(|_| out.flush()) {
                    // A reader that stopped early (`| head`) wants no more, and no
                    // message: end quietly, as `cat` does.
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                    r => r.map_err(|e| format!("error: cannot write output: {}", io_reason(&e))),
                }
            }
            Some(path) => write_atomically(path, bytes)
                .map_err(|e| format!("error: cannot write {}: {}", path.display(), io_reason(&e))),
        }
    }
}

/// Why `bytes` cannot be a source (SysY, textual IR or machine IR), if they cannot:
/// they hold a NUL byte, which no text file has (an executable, an object file, an
/// image, UTF-16 text), as git and grep decide that a file is binary. Bytes that are
/// not UTF-8 alone are no reason: a comment in GBK is common in contest files.
fn not_text(bytes: &[u8]) -> Option<String> {
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return Some("UTF-16 text: save it as UTF-8".into());
    }
    let at = bytes.iter().position(|&b| b == 0)?;
    let what = if bytes.starts_with(b"\x7fELF") {
        "an ELF file"
    } else {
        "binary data"
    };
    Some(format!("{what}: a NUL byte at offset {at}"))
}

/// The interpreted program's stdout, noting whether a write failed because the
/// reader closed the pipe.
struct PipeWatch<W: Write> {
    inner: W,
    closed: bool,
}

impl<W: Write> PipeWatch<W> {
    fn note<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            self.closed |= e.kind() == std::io::ErrorKind::BrokenPipe;
        }
        r
    }
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

/// Ends the process as one killed by SIGPIPE (Rust ignores the signal, so a write to
/// a closed pipe fails instead; a compiled SysY program would be killed): the
/// default action is restored and the signal raised. Exit status 141 (128 + 13)
/// should that fail.
fn die_of_sigpipe() -> ! {
    // SAFETY: `signal` and `raise` are async-signal-safe C calls with valid
    // arguments; nothing is shared with other threads through them.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(128 + libc::SIGPIPE)
}

/// The exit status of `--interpret` when the program stops on a run-time error
/// (division by zero, out-of-bounds access, stack exhaustion); a program that
/// returns 3 exits 3 too, but then with no message on stderr.
pub const RUNTIME_ERROR_STATUS: u8 = 3;

/// True for errors of the running program (as opposed to malformed IR or I/O).
fn is_trap(kind: &interp::ErrorKind) -> bool {
    use interp::ErrorKind::*;
    matches!(
        kind,
        OutOfBounds { .. } | DivisionByZero | StackOverflow { .. } | StepLimit { .. }
    )
}

/// `FILE:LINE:COL: error: run-time error in function `f`: what`, with the source
/// line of the failing operation (the start of the expression it comes from) when
/// the IR knows it, else `FILE: error: ...` with a note at the definition of `f`.
fn runtime_error(
    name: &str,
    src: &str,
    defined_at: &[(String, front::span::Span)],
    e: &interp::InterpError,
    style: front::diag::Style,
) -> String {
    let message = match &e.func {
        Some(f) => format!("run-time error in function `{f}`: {}", e.kind),
        None => format!("run-time error: {}", e.kind),
    };
    let place = e.pos.map(|p| p as usize).filter(|&p| p < src.len());
    let mut d = match place {
        Some(start) => {
            // The caret runs over the identifier or number the expression starts
            // with, or one character.
            let rest = &src[start..];
            let word = rest
                .char_indices()
                .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
                .map_or(rest.len(), |(k, _)| k);
            let len = match word {
                0 => rest.chars().next().map_or(1, char::len_utf8),
                n => n,
            };
            front::Diagnostic::error(message, front::span::Span::new(start, start + len))
        }
        None => front::Diagnostic::file_error(message),
    };
    let at = e
        .func
        .as_ref()
        .and_then(|f| defined_at.iter().find(|(n, _)| n == f));
    if let (Some((f, span)), None) = (at, place) {
        d = d.with_note(format!("`{f}` is defined here"), *span);
    }
    let mut all = front::Diagnostics::default();
    all.push(d);
    all.render_styled(name, src, style)
}

/// The optimised IR that `sysyc -O<opt_level> --emit ir` prints for a SysY source,
/// with the verifier run after lowering and after every pass. `Err` is the rendered
/// diagnostic or internal error, as the driver would print it.
pub fn compile_to_ir(
    name: &str,
    src: &str,
    opt_level: u8,
    ssa: SsaMode,
) -> Result<ir::Module, String> {
    let driver = Driver {
        input: PathBuf::from(name),
        output: None,
        opt_level,
        emit: Emit::Ir,
        ssa,
        passes: None,
        print_after_all: false,
        print_after: Vec::new(),
        print_before: Vec::new(),
        print_funcs: Vec::new(),
        verify_each: true,
        time_passes: false,
        jobs: 0,
        source_lines: false,
        warnings: Warnings::default(),
        color: false,
        codegen: riscv::CodegenFlags::default(),
    };
    let program = front::check(name, src).map_err(|d| d.render(name, src))?;
    let mut module = driver.lower(&program)?;
    driver.optimize(&mut module)?;
    Ok(module)
}

/// The assembly `sysyc -S -O<opt_level>` writes for a SysY source (see
/// [`compile_to_ir`]).
pub fn compile_to_asm(
    name: &str,
    src: &str,
    opt_level: u8,
    ssa: SsaMode,
) -> Result<String, String> {
    let module = compile_to_ir(name, src, opt_level, ssa)?;
    riscv::emit_module(
        &module,
        &riscv::Options {
            opt_level,
            ..Default::default()
        },
    )
    .map_err(|e| format!("{name}: error: {e}"))
}

/// Writes `bytes` to `path` whole or not at all: into a new temporary file beside the
/// destination, then renamed over it, so a failure (or a kill) never leaves a partial
/// file at `path`, and an error leaves a previous file there as it was.
///
/// A symbolic link is followed (the file it names is replaced; the link stays). A
/// destination that exists and is not a regular file (`/dev/null`, `/dev/stdout`, a
/// FIFO) is written through: there is nothing to replace atomically, and a rename
/// would put a regular file in place of the device.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);

    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Ok(meta) = std::fs::metadata(&target) {
        if !meta.is_file() {
            let mut f = std::fs::OpenOptions::new().write(true).open(&target)?;
            return f.write_all(bytes).and_then(|_| f.flush());
        }
    }
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{file_name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|_| std::fs::rename(&tmp, &target));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Whether `a` and `b` name the same existing file (after following links).
/// An I/O error's description without the "(os error N)" suffix Rust adds.
fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
