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
            "error: unknown pass 'gvnn' (did you mean 'gvn'?)"
        );
    }
    let out = sysyc(&["--passes", "qqqqzzzz", p]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("known passes: mem2reg, "));
}
