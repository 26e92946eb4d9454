//! Command-line behaviour users of gcc, clang and LLVM's `opt` expect: a repeated
//! `-O` takes the last, `--list-passes` names what `--passes` accepts, and a
//! misspelt pass name is an error that suggests the right one.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SYSYC: &str = env!("CARGO_BIN_EXE_sysyc");

fn program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs/loops.sy")
}

fn sysyc(args: &[&str]) -> Output {
    Command::new(SYSYC).args(args).output().expect("run sysyc")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_last_optimisation_level_wins() {
    let p = program();
    let p = p.to_str().unwrap();
    let both = sysyc(&["-O0", "-O2", "--emit", "ir", p]);
    let o2 = sysyc(&["-O2", "--emit", "ir", p]);
    let o0 = sysyc(&["-O0", "--emit", "ir", p]);
    assert!(both.status.success(), "{}", text(&both.stderr));
    assert_eq!(both.stdout, o2.stdout);
    assert_ne!(both.stdout, o0.stdout, "-O2 must change this program");
}

#[test]
fn list_passes_names_every_pass_of_the_pipeline() {
    let out = sysyc(&["--list-passes"]);
    assert!(out.status.success());
    let listed: Vec<String> = text(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    for name in [
        "mem2reg",
        "gvn",
        "jumpthread",
        "looppeel",
        "unswitch",
        "rtunroll",
    ] {
        assert!(
            listed.iter().any(|l| l == name),
            "{name} missing from {listed:?}"
        );
    }
    // Each listed name is accepted by --passes.
    let p = program();
    let all = listed.join(",");
    let run = sysyc(&["--passes", &all, "--emit", "ir", p.to_str().unwrap()]);
    assert!(run.status.success(), "{}", text(&run.stderr));
}

#[test]
fn a_misspelt_pass_is_an_error_with_a_suggestion() {
    let p = program();
    let p = p.to_str().unwrap();
    for args in [
        vec!["--passes", "dce,gvnn", p],
        vec!["-O1", "--print-after", "gvnn", p],
    ] {
        let out = sysyc(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty());
        assert_eq!(
            text(&out.stderr).trim(),
            "sysyc: error: unknown pass 'gvnn' (did you mean 'gvn'?)"
        );
    }
    let out = sysyc(&["--passes", "qqqqzzzz", p]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("known passes: mem2reg, "));
}

/// A program whose IR is far larger than a pipe's buffer.
fn big_program(dir: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&d).unwrap();
    let mut src = String::new();
    for k in 0..2000 {
        src += &format!("int f{k}(int x) {{ return x * {k} + {k}; }}\n");
    }
    src += "int main() { return f7(3); }\n";
    let p = d.join("big.sy");
    std::fs::write(&p, src).unwrap();
    p
}

#[test]
fn a_reader_that_stops_early_ends_the_compile_quietly() {
    use std::process::Stdio;
    let p = big_program("cli-closed-stdout");
    let mut child = Command::new(SYSYC)
        .args(["-O0", "--emit", "ir", p.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // `| head -0`: the reader is gone
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[test]
fn a_closed_stderr_is_no_panic() {
    use std::process::Stdio;
    let p = big_program("cli-closed-stderr");
    let mut child = Command::new(SYSYC)
        .args([
            "-O1",
            "--print-after-all",
            "-o",
            "/dev/null",
            p.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    // The dump cannot be written: an error, not a panic (101).
    assert_eq!(status.code(), Some(1));
}

#[test]
fn time_passes_prints_a_row_per_stage_and_leaves_the_output_alone() {
    let p = program();
    let p = p.to_str().unwrap();
    let timed = sysyc(&["-O2", "--time-passes", "-S", p]);
    let plain = sysyc(&["-O2", "-S", p]);
    assert!(timed.status.success(), "{}", text(&timed.stderr));
    assert_eq!(timed.stdout, plain.stdout, "the assembly is the same");
    let table = text(&timed.stderr);
    assert!(table.starts_with("===== sysyc --time-passes: "), "{table}");
    let stages: Vec<&str> = table
        .lines()
        .skip(2)
        .map(|l| l.rsplit("  ").next().unwrap_or(""))
        .collect();
    // Every pass of the -O2 pipeline, once, with the front and back ends.
    let passes = sysyc(&["--list-passes"]);
    let listed = text(&passes.stdout);
    let mut expected = vec!["front end (parse, check)", "lowering"];
    for name in listed.lines().filter_map(|l| l.split_whitespace().next()) {
        if ["mem2reg", "gvn", "pow2div", "postinc"].contains(&name) {
            expected.push(name);
        }
    }
    expected.extend([
        "back end: isel",
        "back end: regalloc",
        "back end: schedule",
        "back end: emit",
        "total",
    ]);
    for name in expected {
        assert_eq!(
            stages.iter().filter(|s| **s == name).count(),
            1,
            "`{name}` once in:\n{table}"
        );
    }
    // gvn runs twice in the -O2 pipeline: one row that says so.
    let gvn = table.lines().find(|l| l.ends_with("  gvn")).unwrap();
    assert_eq!(gvn.split_whitespace().nth(2), Some("2"), "{gvn}");
}

#[test]
fn help_documents_every_optimisation_level_the_parser_accepts() {
    let help = text(&sysyc(&["--help"]).stdout);
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("-O"))
        .unwrap();
    for level in ["-O0", "-O1", "-O2", "-O3"] {
        assert!(help.contains(level), "{level} in:\n{line}");
    }
    let p = program();
    let p = p.to_str().unwrap();
    let o3 = sysyc(&["-O3", "-S", p]);
    assert!(o3.status.success(), "{}", text(&o3.stderr));
    assert_eq!(o3.stdout, sysyc(&["-O2", "-S", p]).stdout, "-O3 is -O2");
    let o4 = sysyc(&["-O4", "-S", p]);
    assert!(!o4.status.success());
    assert!(text(&o4.stderr).contains("0..=3"), "{}", text(&o4.stderr));
}

fn sysyc_with_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(SYSYC)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run sysyc");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// `-` reads the program from standard input (as gcc's `-x c -`): the same
/// output as from the file, and errors point into `<stdin>`.
#[test]
fn a_dash_reads_the_program_from_stdin() {
    let p = program();
    let src = std::fs::read(&p).unwrap();
    let from_file = sysyc(&["-O2", "--emit", "ir", p.to_str().unwrap()]);
    let from_stdin = sysyc_with_stdin(&["-O2", "--emit", "ir", "-"], &src);
    assert!(from_stdin.status.success(), "{}", text(&from_stdin.stderr));
    assert_eq!(from_stdin.stdout, from_file.stdout);
    let bad = sysyc_with_stdin(&["-S", "-o", "-", "-"], b"int main() { return 3 }\n");
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad.stderr).starts_with("<stdin>:1:22: error: expected `;`"),
        "{}",
        text(&bad.stderr)
    );
}

/// A UTF-8 byte-order mark before the program is skipped, and positions count
/// from after it.
#[test]
fn a_byte_order_mark_is_skipped() {
    let with_bom = sysyc_with_stdin(&["--check", "-"], b"\xef\xbb\xbfint main() { return 0; }\n");
    assert!(with_bom.status.success(), "{}", text(&with_bom.stderr));
    let bad = sysyc_with_stdin(&["--check", "-"], b"\xef\xbb\xbfint main() { return x; }\n");
    assert!(
        text(&bad.stderr).starts_with("<stdin>:1:21: error:"),
        "{}",
        text(&bad.stderr)
    );
}

/// A file that cannot be read: `sysyc: error:`, the reason as the system
/// says it, and no "(os error N)".
#[test]
fn an_unreadable_input_is_reported_without_os_error_numbers() {
    let out = sysyc(&["-S", "-o", "-", "/no/such/dir/prog.sy"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(
        err.trim(),
        "sysyc: error: cannot read /no/such/dir/prog.sy: No such file or directory"
    );
}

/// Options that ask for two different things are refused with a usage error
/// (exit 2), as clap reports conflicts; an output directory that does not exist
/// is reported before compiling.
#[test]
fn conflicting_options_and_a_missing_output_directory_are_errors() {
    let p = program();
    let p = p.to_str().unwrap();
    for args in [
        vec!["--check", "--emit", "ir", p],
        vec!["--interpret", "-o", "x.s", p],
        vec!["-S", "--emit", "ir", p],
        vec!["--check", "--interpret", p],
    ] {
        let out = sysyc(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(text(&out.stderr).contains("error:"), "{args:?}");
    }
    assert!(sysyc(&["-S", "--emit", "asm", "-o", "-", p])
        .status
        .success());
    let out = sysyc(&["-S", "-o", "/no/such/dir/x.s", p]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).trim(),
        "sysyc: error: cannot write /no/such/dir/x.s: No such file or directory"
    );
}
