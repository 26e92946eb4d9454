//! `--emit html`: one self-contained page that shows how the pipeline transforms a
//! program, a compiler-explorer view of sysyc's own passes for people learning how
//! an optimising compiler works.
//!
//! The Rust side only gathers data: the source lines, and for every stage of the
//! pipeline (the IR after lowering, after each IR pass, the machine IR after each
//! back-end stage, the final assembly) each function's text with the source line of
//! each of its lines (the positions `-g` follows). A function's text is stored once
//! per distinct version; a stage names the version of each function. The data is
//! JSON, compressed with [`deflate`] and embedded once as base64; the page's script
//! (`page.js`, with `page.html` and `page.css`, all included here) inflates it with
//! the browser's `DecompressionStream` and draws everything on demand: the three
//! panes, the diffs, the control-flow graph and dominator tree. Nothing is
//! fetched; the page is deterministic (pass times only with `--time-passes`).

mod deflate;

use std::collections::HashMap;
use std::fmt::Write;

use riscv::srcloc::SourceLines;

/// The page's template; `page.css` and `page.js` go into it at the markers.
const HTML: &str = include_str!("page.html");
const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// What the text of a stage is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Ir,
    Mir,
    Asm,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Ir => "ir",
            Kind::Mir => "mir",
            Kind::Asm => "asm",
        }
    }
}

/// One stage of the run: a name, what it does, and each function's text after it
/// (an index into [`Data::texts`]), in the module's order.
pub struct Stage {
    pub name: String,
    pub kind: Kind,
    pub description: String,
    pub funcs: Vec<(usize, usize)>,
    pub seconds: f64,
}

/// One version of a function's text: the text, the source line of each line (0
/// for none) and its instruction count.
pub struct Text {
    pub text: String,
    pub lines: Vec<u32>,
    pub insts: usize,
}

/// Everything the page shows.
#[derive(Default)]
pub struct Data {
    pub funcs: Vec<String>,
    pub texts: Vec<Text>,
    pub stages: Vec<Stage>,
    /// Each distinct text's index, to store it once.
    seen: HashMap<String, usize>,
}

impl Data {
    /// The index of function `name`, added when new.
    fn func(&mut self, name: &str) -> usize {
        match self.funcs.iter().position(|f| f == name) {
            Some(k) => k,
            None => {
                self.funcs.push(name.to_string());
                self.funcs.len() - 1
            }
        }
    }

    /// The index of `text`, stored when new.
    fn text(&mut self, text: String, lines: Vec<u32>, insts: usize) -> usize {
        if let Some(&k) = self.seen.get(&text) {
            return k;
        }
        self.seen.insert(text.clone(), self.texts.len());
        self.texts.push(Text { text, lines, insts });
        self.texts.len() - 1
    }

    /// Adds a stage with nothing in it yet.
    fn stage(&mut self, name: &str, kind: Kind, description: &str, seconds: f64) -> &mut Stage {
        self.stages.push(Stage {
            name: name.to_string(),
            kind,
            description: description.to_string(),
            funcs: Vec::new(),
            seconds,
        });
        self.stages.last_mut().expect("just pushed")
    }

    /// Records every defined function of `m` as it is now in a new stage.
    fn ir_stage(
        &mut self,
        m: &ir::Module,
        lines: &SourceLines,
        name: &str,
        description: &str,
        seconds: f64,
    ) {
        let mut funcs = Vec::new();
        for f in m.funcs.values().filter(|f| !f.is_declaration()) {
            let (text, locs, insts) = ir_text(m, f, lines);
            funcs.push((self.func(&f.name), self.text(text, locs, insts)));
        }
        self.stage(name, Kind::Ir, description, seconds).funcs = funcs;
    }
}

/// A function's IR as the IR printer writes it, with the source line of each line
/// (the printer writes the signature, each block's label and instructions in
/// layout order, then `}`).
fn ir_text(m: &ir::Module, f: &ir::Function, lines: &SourceLines) -> (String, Vec<u32>, usize) {
    let text = ir::text::print_function(m, f);
    let mut locs = vec![0];
    let mut insts = 0;
    for b in f.layout.blocks() {
        locs.push(0);
        for i in f.layout.block_insts(b) {
            locs.push(f.src_loc(i).map_or(0, |p| lines.line_of(p)));
            insts += 1;
        }
    }
    locs.push(0);
    debug_assert_eq!(locs.len(), text.lines().count());
    (text, locs, insts)
}

/// Runs `names` over `m` one pass at a time, recording the IR after lowering and
/// after each pass.
pub fn run_ir_passes(
    data: &mut Data,
    m: &mut ir::Module,
    lines: &SourceLines,
    names: &[&str],
    verify_each: bool,
) -> Result<(), String> {
    data.ir_stage(
        m,
        lines,
        "lowering",
        "the SSA IR the front end's tree becomes",
        0.0,
    );
    for &name in names {
        let mut times = Vec::new();
        let mut opts = opt::PassOptions {
            verify_each,
            timings: Some(&mut times),
            ..Default::default()
        };
        opt::run_passes(m, &[name], &mut opts)?;
        let description = opt::lookup(name).map_or("", |p| p.description());
        let seconds = times.first().map_or(0.0, |t| t.seconds);
        data.ir_stage(m, lines, name, description, seconds);
    }
    Ok(())
}

/// Compiles `m` through the back end, recording each function's machine IR after
/// every stage and its final assembly, each line with its source line.
pub fn run_back_end(
    data: &mut Data,
    m: &ir::Module,
    opts: &riscv::Options,
    lines: &SourceLines,
    timings: bool,
) -> Result<(), riscv::BackendError> {
    // Per stage in order: its info and each function's text.
    let mut stages: Vec<(&'static riscv::StageInfo, Vec<(usize, usize)>)> = Vec::new();
    let mut hook = |when,
                    info: &'static riscv::StageInfo,
                    mf: &riscv::mir::MFunction,
                    locs: Option<&riscv::srcloc::InstLocs>| {
        if when != riscv::When::After {
            return;
        }
        let (text, map) = riscv::text::print::print_function_mapped(mf);
        let located: Vec<u32> = map
            .iter()
            .map(|at| {
                at.and_then(|(b, k)| locs?.get(b, k))
                    .map_or(0, |p| lines.line_of(p))
            })
            .collect();
        let insts = map.iter().filter(|m| m.is_some()).count();
        let entry = (data.func(&mf.name), data.text(text, located, insts));
        match stages.iter_mut().find(|(s, _)| *s == info) {
            Some((_, funcs)) => funcs.push(entry),
            None => stages.push((info, vec![entry])),
        }
    };
    let mut times = riscv::StageTimes::default();
    let asm = riscv::emit_module_hooked(
        m,
        opts,
        timings.then_some(&mut times),
        Some(lines),
        Some(&mut hook),
    )?;
    for (info, funcs) in stages {
        let seconds = times
            .stages
            .iter()
            .find(|t| t.name == info.name)
            .map_or(0.0, |t| t.seconds);
        data.stage(info.name, Kind::Mir, info.description, seconds)
            .funcs = funcs;
    }
    let emit = times.stages.iter().find(|t| t.name == "emit");
    let funcs = asm_texts(data, &asm, lines.name());
    data.stage(
        "assembly",
        Kind::Asm,
        "the RV64GC assembly written out, branches relaxed",
        emit.map_or(0.0, |t| t.seconds),
    )
    .funcs = funcs;
    Ok(())
}

/// Splits the assembly of `-g` (each function from its `.text`) into the texts of
/// the functions, without the `# file:LINE` comments, whose lines go to the
/// instructions under them (up to the next label).
fn asm_texts(data: &mut Data, asm: &str, file: &str) -> Vec<(usize, usize)> {
    let comment = format!("\t# {file}:");
    let mut chunks: Vec<&str> = Vec::new();
    let mut start = 0;
    for (k, _) in asm.match_indices("\t.text\n") {
        if k == 0 || asm.as_bytes()[k - 1] == b'\n' {
            chunks.push(&asm[start..k]);
            start = k;
        }
    }
    chunks.push(&asm[start..]);
    let mut out = Vec::new();
    for (n, chunk) in chunks.iter().enumerate() {
        let (mut text, mut locs, mut insts, mut cur) = (String::new(), Vec::new(), 0, 0);
        let mut name = None;
        for line in chunk.lines() {
            if let Some(rest) = line.strip_prefix(&comment) {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                cur = digits.parse().unwrap_or(0);
                continue;
            }
            let is_inst = line.starts_with('\t') && !line.starts_with("\t.");
            if !line.starts_with('\t') && line.ends_with(':') {
                cur = 0;
                if name.is_none() && !line.starts_with('.') {
                    name = Some(line.trim_end_matches(':').to_string());
                }
            }
            text.push_str(line);
            text.push('\n');
            locs.push(if is_inst { cur } else { 0 });
            insts += is_inst as usize;
        }
        if text.is_empty() {
            continue;
        }
        // The data before the first function is the module's globals.
        let name = match (n, name) {
            (0, _) => "(globals)".to_string(),
            (_, Some(name)) => name,
            (_, None) => continue,
        };
        out.push((data.func(&name), data.text(text, locs, insts)));
    }
    out
}

/// `s` as a JSON string.
fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A list of numbers as JSON.
fn json_nums<T: std::fmt::Display>(out: &mut String, v: impl IntoIterator<Item = T>) {
    out.push('[');
    for (k, x) in v.into_iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        let _ = write!(out, "{x}");
    }
    out.push(']');
}

/// The page's data as JSON (see `page.js` for how it is read).
/// `start` names the function the page opens on (else `main`).
pub fn to_json(
    data: &Data,
    file: &str,
    source: &str,
    opt_level: u8,
    timings: bool,
    start: Option<&str>,
) -> String {
    let mut j = String::with_capacity(source.len() * 2);
    j.push_str("{\"file\":");
    json_str(&mut j, file);
    if let Some(f) = start {
        j.push_str(",\"start\":");
        json_str(&mut j, f);
    }
    let _ = write!(j, ",\"opt\":{opt_level},\"timed\":{timings},\"src\":[");
    for (k, line) in source.lines().enumerate() {
        if k > 0 {
            j.push(',');
        }
        json_str(&mut j, line);
    }
    j.push_str("],\"funcs\":[");
    for (k, f) in data.funcs.iter().enumerate() {
        if k > 0 {
            j.push(',');
        }
        json_str(&mut j, f);
    }
    j.push_str("],\"texts\":[");
    for (k, t) in data.texts.iter().enumerate() {
        if k > 0 {
            j.push(',');
        }
        j.push('[');
        json_str(&mut j, &t.text);
        j.push(',');
        json_nums(&mut j, &t.lines);
        let _ = write!(j, ",{}]", t.insts);
    }
    j.push_str("],\"stages\":[");
    for (k, s) in data.stages.iter().enumerate() {
        if k > 0 {
            j.push(',');
        }
        j.push_str("{\"name\":");
        json_str(&mut j, &s.name);
        let _ = write!(j, ",\"kind\":\"{}\",\"desc\":", s.kind.name());
        json_str(&mut j, &s.description);
        if timings {
            let _ = write!(j, ",\"ms\":{:.3}", s.seconds * 1e3);
        }
        j.push_str(",\"f\":[");
        for (n, (f, t)) in s.funcs.iter().enumerate() {
            if n > 0 {
                j.push(',');
            }
            let _ = write!(j, "{f},{t}");
        }
        j.push_str("]}");
    }
    j.push_str("]}");
    j
}

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// The page: the template with the style, the script and the compressed data.
pub fn render(json: &str, title: &str) -> String {
    let data = deflate::base64(&deflate::compress(json.as_bytes()));
    let mut page = String::with_capacity(HTML.len() + CSS.len() + JS.len() + data.len());
    // The markers are replaced in one pass, so nothing inserted is scanned again.
    let mut rest = HTML;
    while let Some(k) = rest.find("{{") {
        page.push_str(&rest[..k]);
        let end = rest[k..].find("}}").map_or(rest.len(), |e| k + e + 2);
        match &rest[k..end] {
            "{{TITLE}}" => page.push_str(&esc(title)),
            "{{CSS}}" => page.push_str(CSS),
            "{{JS}}" => page.push_str(JS),
            "{{DATA}}" => page.push_str(&data),
            other => page.push_str(other),
        }
        rest = &rest[end..];
    }
    page.push_str(rest);
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(src: &str, opt_level: u8) -> Data {
        let checked = front::check_all("t.sy", src);
        let program = checked.program.expect("checks");
        let mut m = lower::lower_program(&program, false);
        let lines = SourceLines::new("t.sy", src);
        let mut data = Data::default();
        let names = opt::pipeline(opt_level);
        run_ir_passes(&mut data, &mut m, &lines, &names, true).unwrap();
        let opts = riscv::Options {
            opt_level,
            ..Default::default()
        };
        run_back_end(&mut data, &m, &opts, &lines, false).unwrap();
        // The assembly pane's texts, in order, are the assembly `-S` writes.
        let asm = data.stages.last().unwrap();
        let texts: String = asm
            .funcs
            .iter()
            .map(|&(_, t)| data.texts[t].text.as_str())
            .collect();
        assert_eq!(texts, riscv::emit_module(&m, &opts).unwrap());
        data
    }

    const SRC: &str = "int sq(int x) {\n  return x * x;\n}\nint main() {\n  int n = getint(), s = 0, i = 0;\n  while (i < n) {\n    s = s + sq(i);\n    i = i + 1;\n  }\n  putint(s);\n  return 0;\n}\n";

    #[test]
    fn every_stage_is_recorded_with_source_lines() {
        let data = compile(SRC, 2);
        let names: Vec<&str> = data.stages.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names[0], "lowering");
        assert_eq!(
            names.len(),
            1 + opt::pipeline(2).len() + riscv::stage_pipeline(2).count() + 1
        );
        assert!(names.contains(&"isel") && names.contains(&"regalloc"));
        assert_eq!(*names.last().unwrap(), "assembly");
        // After lowering, `x * x` is on line 2 and the loop's add on line 8.
        let first = &data.stages[0];
        let sq = data.funcs.iter().position(|f| f == "sq").unwrap();
        let (_, t) = first.funcs.iter().find(|(f, _)| *f == sq).unwrap();
        let t = &data.texts[*t];
        let mul = t.text.lines().position(|l| l.contains("mul")).unwrap();
        assert_eq!(t.lines[mul], 2);
        assert_eq!(t.lines.len(), t.text.lines().count());
        // After register allocation too (the positions -g follows).
        let ra = data.stages.iter().find(|s| s.name == "regalloc").unwrap();
        let main = data.funcs.iter().position(|f| f == "main").unwrap();
        let (_, t) = ra.funcs.iter().find(|(f, _)| *f == main).unwrap();
        let t = &data.texts[*t];
        let call = t
            .text
            .lines()
            .position(|l| l.contains("call putint"))
            .unwrap();
        assert_eq!(t.lines[call], 10, "{}", t.text);
        assert_eq!(t.lines.len(), t.text.lines().count());
        // In the assembly of main, the call of putint comes from line 10.
        let asm = data.stages.last().unwrap();
        let (_, t) = asm.funcs.iter().find(|(f, _)| *f == main).unwrap();
        let t = &data.texts[*t];
        let call = t
            .text
            .lines()
            .position(|l| l.contains("call putint"))
            .unwrap();
        assert_eq!(t.lines[call], 10, "{}", t.text);
        assert!(!t.text.contains("# t.sy"));
        // The unchanged functions of a pass share the text before it.
        let ids: std::collections::HashSet<usize> = data
            .stages
            .iter()
            .flat_map(|s| s.funcs.iter().map(|p| p.1))
            .collect();
        assert_eq!(ids.len(), data.texts.len());
        assert!(data.texts.len() < 3 * data.stages.len());
    }

    #[test]
    fn the_page_embeds_the_data_once_and_nothing_from_outside() {
        let data = compile(SRC, 1);
        let json = to_json(&data, "t.sy", SRC, 1, false, None);
        assert!(json.starts_with(
            "{\"file\":\"t.sy\",\"opt\":1,\"timed\":false,\"src\":[\"int sq(int x) {\","
        ));
        assert!(!json.contains("\"ms\""));
        let page = render(&json, "sysyc -O1: t<1>.sy");
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<title>sysyc -O1: t&lt;1&gt;.sy</title>"));
        assert!(!page.contains("{{"));
        // No URL but the SVG namespace the script creates elements in.
        let urls = page.replace("http://www.w3.org/2000/svg", "");
        assert!(!urls.contains("http://") && !urls.contains("https://"));
        assert!(!page.contains(" src=") && !page.contains("<link"));
    }

    /// The page's diff in Node.js, when it is installed (Chromium runs the same
    /// code in the browser test): see `difftest.js`.
    #[test]
    fn the_page_diff_is_a_minimal_unified_diff() {
        let start = JS.find("// The line edits from a to b").unwrap();
        let end = JS.find("function drawDiff()").unwrap();
        let script = format!("{}\n{}", &JS[start..end], include_str!("difftest.js"));
        let Ok(out) = std::process::Command::new("node")
            .args(["-e", &script])
            .output()
        else {
            eprintln!("node is missing: not checked");
            return;
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.ends_with("bad 0\n"), "{stdout}");
    }

    #[test]
    fn json_strings_escape_quotes_and_control_characters() {
        let mut s = String::new();
        json_str(&mut s, "a\"b\\c\nd\u{1}\u{e9}");
        assert_eq!(s, "\"a\\\"b\\\\c\\nd\\u0001\u{e9}\"");
    }
}
