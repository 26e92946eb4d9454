//! IR dumps around passes that the pass manager does not print itself:
//! `--print-before NAME` and `--filter-print-funcs F` (with `--print-after` and
//! `--print-after-all`), as LLVM's options of the same names; and the machine IR
//! dumps around back-end stages (the same options naming a stage of
//! `riscv::STAGES`, in the text form of `docs/mir-text.md`).
//!
//! With either option the driver runs the passes one at a time and prints around
//! each. Analyses are then recomputed for every pass instead of being kept between
//! passes, which is slower but gives the same IR (analyses are functions of the IR).

use std::io::Write;

use opt::PassTiming;

/// What to print around the passes.
pub struct Dumps<'a> {
    pub before: &'a [String],
    pub after: &'a [String],
    pub after_all: bool,
    /// The functions to show; all when empty.
    pub funcs: &'a [String],
}

/// The module, or only the functions named in `funcs` (in module order).
pub fn dump(m: &ir::Module, funcs: &[String]) -> String {
    if funcs.is_empty() {
        return ir::print_module(m);
    }
    m.funcs
        .values()
        .filter(|f| funcs.contains(&f.name))
        .map(|f| ir::print_function(m, f))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first name in `funcs` that no function of `m` has, as an error message.
pub fn unknown_function(m: &ir::Module, funcs: &[String]) -> Option<String> {
    let missing = funcs
        .iter()
        .find(|n| !m.funcs.values().any(|f| f.name == **n))?;
    let mut known: Vec<&str> = m
        .funcs
        .values()
        .filter(|f| !f.is_declaration())
        .map(|f| f.name.as_str())
        .collect();
    known.sort_unstable();
    Some(format!(
        "error: --filter-print-funcs: no function named '{missing}' (functions: {})",
        known.join(", ")
    ))
}

/// Runs `names` over `m` one pass at a time, printing on stderr as `dumps` asks;
/// pass timings are appended to `timings` when it is given. "Changed" for
/// `--print-after-all` means changed in the functions shown.
pub fn run_printing(
    m: &mut ir::Module,
    names: &[&str],
    verify_each: bool,
    dumps: &Dumps,
    mut timings: Option<&mut Vec<PassTiming>>,
) -> Result<(), String> {
    let total = names.len();
    let mut err = std::io::stderr();
    for (k, &name) in names.iter().enumerate() {
        let n = k + 1;
        let shown = |m: &ir::Module| dump(m, dumps.funcs);
        if dumps.before.iter().any(|b| b == name) {
            let text = format!("; IR before {name} (pass {n} of {total})\n{}", shown(m));
            // A closed stderr loses the dump, nothing more.
            let _ = err.write_all(text.as_bytes());
        }
        let old = dumps.after_all.then(|| shown(m));
        let mut opts = opt::PassOptions {
            verify_each,
            ..Default::default()
        };
        let mut these = Vec::new();
        if timings.is_some() {
            opts.timings = Some(&mut these);
        }
        opt::run_passes(m, &[name], &mut opts)?;
        if let Some(t) = timings.as_mut() {
            t.extend(these);
        }
        let wanted = dumps.after.iter().any(|a| a == name);
        if wanted || dumps.after_all {
            let new = shown(m);
            let changed = old.as_ref() != Some(&new);
            if wanted || changed {
                let note = if changed || old.is_none() {
                    ""
                } else {
                    ", unchanged"
                };
                let text = format!("; IR after {name} (pass {n} of {total}{note})\n{new}");
                let _ = err.write_all(text.as_bytes());
            }
        }
    }
    Ok(())
}

/// The machine IR dumps around back-end stages, function by function.
pub struct MirDumps<'a> {
    before: Vec<&'a str>,
    after: Vec<&'a str>,
    after_all: bool,
    funcs: &'a [String],
    /// The function's text after the last stage, for `--print-after-all`.
    last: Option<String>,
}

impl<'a> MirDumps<'a> {
    /// The dumps the options ask for; names that are not back-end stages (IR
    /// passes) are left to the IR dumps.
    pub fn new(
        before: &'a [String],
        after: &'a [String],
        after_all: bool,
        funcs: &'a [String],
    ) -> Self {
        let stages = |v: &'a [String]| {
            v.iter()
                .map(String::as_str)
                .filter(|n| riscv::lookup_stage(n).is_some())
                .collect()
        };
        MirDumps {
            before: stages(before),
            after: stages(after),
            after_all,
            funcs,
            last: None,
        }
    }

    /// Whether anything is to be printed.
    pub fn wanted(&self) -> bool {
        self.after_all || !self.before.is_empty() || !self.after.is_empty()
    }

    /// Whether `mf` (an assembly symbol: `f.` before a name the assembler would
    /// take for a register) is one of the functions shown.
    fn shown(&self, mf: &riscv::mir::MFunction) -> bool {
        self.funcs.is_empty()
            || self.funcs.iter().any(|f| {
                *f == mf.name || mf.name.strip_prefix("f.").is_some_and(|n| n == f.as_str())
            })
    }

    /// Prints on stderr what is asked around `stage`. `--print-after-all` shows the
    /// function after `isel` and after every stage that changed it.
    pub fn around(
        &mut self,
        when: riscv::When,
        stage: &riscv::StageInfo,
        mf: &riscv::mir::MFunction,
    ) {
        if !self.shown(mf) {
            return;
        }
        let name = stage.name;
        let mut err = std::io::stderr();
        if when == riscv::When::Before {
            if self.before.contains(&name) {
                let text = riscv::text::print_function(mf);
                let _ = write!(err, "; MIR before {name} ({})\n{text}", mf.name);
            }
            return;
        }
        let wanted = self.after.contains(&name);
        if !wanted && !self.after_all {
            return;
        }
        let text = riscv::text::print_function(mf);
        let changed = name == "isel" || self.last.as_ref() != Some(&text);
        if wanted || changed {
            let note = if changed { "" } else { ", unchanged" };
            let _ = write!(err, "; MIR after {name} ({}{note})\n{text}", mf.name);
        }
        if self.after_all {
            self.last = Some(text);
        }
    }
}
