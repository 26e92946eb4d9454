//! End-to-end test of the bench: runs the `bench` binary on the tiny programs in
//! `tests/data` with `standin-sysyc.sh` (gcc -S -O0) playing sysyc, twice, and
//! checks the JSON report (counts > 0, both builds pass, identical counts across
//! runs), the SVG and `bench compare`. Skipped when the toolchain is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bench() -> Command {
    let bin = env!("CARGO_BIN_EXE_bench");
    let mut cmd = Command::new(bin);
    cmd.env("SYSY_BENCH_BIN", bin);
    cmd
}

fn toolchain_present() -> bool {
    match harness::Harness::global() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipping bench end-to-end test: {e}");
            false
        }
    }
}

fn run_bench(json: &Path, svg: &Path) -> String {
    let dir = manifest_dir();
    let out = bench()
        .arg("--suite")
        .arg(dir.join("tests/data"))
        .arg("--sysyc")
        .arg(dir.join("tests/standin-sysyc.sh"))
        .arg("--quiet")
        .arg("--json")
        .arg(json)
        .arg("--svg")
        .arg(svg)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "bench failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// `(name, sysyc counts, gcc counts)` for every case of a report.
fn counts(report: &Value) -> Vec<(String, Value, Value)> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["sysyc"]["status"], "ok", "{c}");
            assert_eq!(c["gcc"]["status"], "ok", "{c}");
            (
                c["name"].as_str().unwrap().to_string(),
                c["sysyc"]["counts"].clone(),
                c["gcc"]["counts"].clone(),
            )
        })
        .collect()
}

#[test]
fn bench_runs_end_to_end_and_is_deterministic() {
    if !toolchain_present() {
        return;
    }
    let tmp = harness::runtime::unique_temp_dir(&std::env::temp_dir()).unwrap();
    let (j1, j2, svg) = (tmp.join("a.json"), tmp.join("b.json"), tmp.join("r.svg"));
    let table = run_bench(&j1, &svg);
    run_bench(&j2, &svg);
    assert!(table.contains("geomean sysyc/gcc"), "{table}");

    let r1: Value = serde_json::from_str(&std::fs::read_to_string(&j1).unwrap()).unwrap();
    let r2: Value = serde_json::from_str(&std::fs::read_to_string(&j2).unwrap()).unwrap();
    let (c1, c2) = (counts(&r1), counts(&r2));
    let names: Vec<&str> = c1.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(names, ["floats", "loops", "recursion"]);
    for (name, sysyc, gcc) in &c1 {
        for k in ["insns", "cycles", "loads", "branches"] {
            assert!(sysyc[k].as_u64().unwrap() > 0, "{name} sysyc {k}");
            assert!(gcc[k].as_u64().unwrap() > 0, "{name} gcc {k}");
        }
        assert!(sysyc["fp"].as_u64().unwrap() > 0 || name != "floats");
    }
    assert_eq!(c1, c2, "two runs gave different counts");

    // Timed cases count only their region; `floats` has none (whole run).
    let pairs = |name: &str| {
        c1.iter().find(|c| c.0 == name).unwrap().2["pairs"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(pairs("loops"), 1);
    assert_eq!(pairs("floats"), 0);
    assert!(r1["summary"]["geomean_insns"].as_f64().unwrap() > 0.0);
    assert_eq!(r1["summary"]["compared"], 3);

    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg") && chart.trim_end().ends_with("</svg>"));
    assert_eq!(chart.matches("<rect x=").count(), 3);

    let cmp = bench().arg("compare").arg(&j1).arg(&j2).output().unwrap();
    let cmp_text = String::from_utf8_lossy(&cmp.stdout);
    assert!(cmp.status.success());
    assert!(cmp_text.contains("+0.00%"), "{cmp_text}");
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn to_c_keeps_line_numbers() {
    let sy = manifest_dir().join("tests/data/recursion.sy");
    let out = bench().arg("to-c").arg(&sy).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("enum { N = (int)(20) };"), "{text}");
    assert!(text.contains("#line 1"), "{text}");
}

/// `bench scaling` with the stand-in compiler on two small dimensions: a header,
/// one row per size with a growth ratio from the second on, and an error for an
/// unknown dimension.
#[test]
fn scaling_prints_a_row_per_size_and_rejects_unknown_dimensions() {
    if !toolchain_present() {
        return;
    }
    let dir = manifest_dir();
    let work = std::env::temp_dir().join(format!("bench-scaling-{}", std::process::id()));
    let out = bench()
        .args([
            "scaling",
            "--only",
            "stmts,global-init",
            "--max-factor",
            "4",
        ])
        .arg("--sysyc")
        .arg(dir.join("tests/standin-sysyc.sh"))
        .arg("--work-dir")
        .arg(&work)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<&str> = stdout.lines().collect();
    assert!(rows[0].starts_with("dimension"), "{stdout}");
    assert_eq!(rows.len(), 5, "{stdout}");
    assert!(rows[1].starts_with("stmts") && rows[2].starts_with("stmts"));
    assert!(rows[3].starts_with("global-init") && rows[4].starts_with("global-init"));
    assert!(!stdout.contains("FAILED"), "{stdout}");
    // The 4x row has a (CPU) time ratio, the 1x row none; both have a CPU time.
    let cols = |r: &str| r.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_eq!(cols(rows[1])[6], "-");
    assert!(cols(rows[2])[6].parse::<f64>().is_ok(), "{stdout}");
    assert!(cols(rows[1])[4].parse::<f64>().is_ok(), "{stdout}");
    let _ = std::fs::remove_dir_all(&work);

    let bad = bench()
        .args(["scaling", "--only", "nosuch", "--sysyc"])
        .arg(dir.join("tests/standin-sysyc.sh"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown dimension `nosuch`"));
}

/// `bench scaling --repeat 3` goes round the sizes of a dimension in turn (1x, 4x,
/// 1x, 4x, ...), so a slow stretch of the machine does not fall on one size only;
/// a size whose compile fails is reported and not repeated.
#[test]
fn scaling_repeats_go_round_the_sizes_in_turn() {
    let work = std::env::temp_dir().join(format!("bench-scaling-order-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let log = work.join("compiles.log");
    let script = work.join("logging-sysyc.sh");
    // Logs the input's name; fails on the 16x program of `stmts` (n = 8000).
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do last=\"$a\"; done\nbasename \"$last\" >> '{}'\ncase \"$last\" in *-8000.sy) exit 1 ;; esac\nexit 0\n",
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = bench()
        .args([
            "scaling",
            "--only",
            "stmts",
            "--max-factor",
            "16",
            "--repeat",
            "3",
        ])
        .arg("--sysyc")
        .arg(&script)
        .arg("--work-dir")
        .arg(&work)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    let order = std::fs::read_to_string(&log).unwrap();
    let order: Vec<&str> = order.lines().collect();
    assert_eq!(
        order,
        [
            "stmts-500.sy",
            "stmts-2000.sy",
            "stmts-8000.sy",
            "stmts-500.sy",
            "stmts-2000.sy",
            "stmts-500.sy",
            "stmts-2000.sy"
        ]
    );
    let rows: Vec<&str> = stdout.lines().collect();
    assert_eq!(rows.len(), 4, "{stdout}");
    assert!(rows[3].contains("FAILED"), "{stdout}");
    assert!(!rows[2].contains("FAILED"), "{stdout}");
    let _ = std::fs::remove_dir_all(&work);
}
