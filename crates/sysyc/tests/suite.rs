//! Whole-program tests: every case of the project's own `tests/programs` and, when
//! `../shared/sysy2022` is present, of the official suite, compiled by the `sysyc`
//! binary and judged against its `.out` file, one named test per case and mode:
//!
//! - `interp/<ssa>/O<n>/<suite>/<case>`: `sysyc --interpret` (the IR interpreter);
//! - `qemu/O<n>/<suite>/<case>`: assembly linked with the runtime, run under qemu;
//! - `asm/<suite>/<case>`: compiles and assembles (performance-noinput, whose inputs
//!   are not available).
//!
//! The suites are the own programs, the official functional and hidden-functional
//! ones, and `../shared/regressions` (programs sysyc once got wrong; also at -O3).
//!
//! The qemu tests are skipped with a message when the cross toolchain is missing.
//! Running the performance suite through the interpreter, or under qemu at -O2, is
//! slow: those tests are ignored; run them with
//! `cargo test --release --test suite -- --ignored`.

use harness::{Case, Harness};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const SYSYC: &str = env!("CARGO_BIN_EXE_sysyc");

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("suite");
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}

/// Runs `sysyc --interpret` on a case and judges the result.
fn run_interp(case: &Case, flags: &[&str], timeout: Duration) -> Result<(), Failed> {
    let mut cmd = Command::new(SYSYC);
    cmd.args(flags).arg("--interpret").arg(&case.sy);
    let stdin = match &case.input {
        Some(p) => Stdio::from(std::fs::File::open(p).map_err(|e| e.to_string())?),
        None => Stdio::null(),
    };
    cmd.stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = run_with_timeout(cmd, timeout)?;
    let code = out.status.code().ok_or("sysyc killed by a signal")?;
    let expected = case.expected().map_err(|e| e.to_string())?;
    harness::judge(&out.stdout, code, &expected).map_err(|e| {
        format!(
            "{e}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
                .chars()
                .take(2000)
                .collect::<String>()
        )
        .into()
    })
}

fn run_with_timeout(mut cmd: Command, timeout: Duration) -> Result<std::process::Output, Failed> {
    let child = cmd.spawn().map_err(|e| format!("cannot run sysyc: {e}"))?;
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(out) => out.map_err(|e| e.to_string().into()),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            Err(format!("timed out after {}s", timeout.as_secs()).into())
        }
    }
}

/// Compiles a case to assembly with `flags`, verifying the IR after every pass and
/// the machine IR after every back-end stage; returns the `.s` path.
fn compile(case: &Case, tag: &str, flags: &[&str]) -> Result<PathBuf, Failed> {
    let asm = scratch_dir().join(format!("{}.{tag}.s", case.name.replace('/', "_")));
    let out = Command::new(SYSYC)
        .args(flags)
        .arg("--verify-each")
        .arg("-S")
        .arg("-o")
        .arg(&asm)
        .arg(&case.sy)
        .output()
        .map_err(|e| format!("cannot run sysyc: {e}"))?;
    if !out.status.success() {
        return Err(format!("sysyc failed:\n{}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(asm)
}

/// Compiles, links and runs a case under qemu, and judges it.
fn run_qemu(h: &Harness, case: &Case, opt: &str, timeout: Duration) -> Result<(), Failed> {
    let tag = opt.trim_start_matches('-');
    let asm = compile(case, tag, &[opt])?;
    let exe = asm.with_extension("exe");
    h.link(&asm, &exe)?;
    let opts = harness::RunOptions {
        timeout: Some(timeout),
        ..Default::default()
    };
    let result = h.run_with(&exe, case.input.as_deref(), &opts)?;
    let expected = case.expected().map_err(|e| e.to_string())?;
    result.judge(&expected)?;
    let _ = std::fs::remove_file(&exe);
    let _ = std::fs::remove_file(&asm);
    Ok(())
}

/// Compiles a case and assembles the output (no run).
fn assemble_only(h: &Harness, case: &Case) -> Result<(), Failed> {
    let asm = compile(case, "O2", &["-O2"])?;
    let obj = asm.with_extension("o");
    let out = Command::new(&h.toolchain.cc)
        .args(["-march=rv64gc", "-mabi=lp64d", "-c"])
        .arg(&asm)
        .arg("-o")
        .arg(&obj)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "assembler failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let _ = std::fs::remove_file(&obj);
    let _ = std::fs::remove_file(&asm);
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let own = harness::cases(&repo_root().join("tests/programs"));
    let root = harness::suite_root();
    let suite = |name: &str| -> Vec<Case> {
        root.as_ref()
            .map(|r| harness::cases(&r.join(name)))
            .unwrap_or_default()
    };
    // Programs sysyc once got wrong (`../shared/regressions`, beside the suite).
    let regressions: Vec<Case> = root
        .as_ref()
        .and_then(|r| r.parent())
        .map(|shared| harness::cases(&shared.join("regressions")))
        .unwrap_or_default();
    let functional: Vec<(&str, Vec<Case>)> = vec![
        ("own", own),
        ("functional", suite("functional")),
        ("hidden_functional", suite("hidden_functional")),
        ("regressions", regressions.clone()),
    ];
    let performance = suite("performance");
    let noinput: Vec<Case> = root
        .as_ref()
        .map(|r| noinput_cases(&r.join("performance-noinput")))
        .unwrap_or_default();
    if root.is_none() {
        eprintln!("note: ../shared/sysy2022 not found; running the project's own programs only");
    }
    let harness = Harness::global();
    if let Err(e) = &harness {
        eprintln!("note: qemu tests skipped: {e}");
    }

    let mut trials = Vec::new();
    let interp_modes: [(&str, &[&str]); 3] = [
        ("braun/O0", &["-O0", "--ssa", "braun"]),
        ("memory/O0", &["-O0", "--ssa", "memory"]),
        ("braun/O2", &["-O2", "--ssa", "braun"]),
    ];
    for (mode, flags) in interp_modes {
        for (suite_name, cases) in &functional {
            for case in cases {
                let case = case.clone();
                let name = format!("interp/{mode}/{suite_name}/{}", case.name);
                trials.push(Trial::test(name, move || {
                    run_interp(&case, flags, Duration::from_secs(300))
                }));
            }
        }
        for case in &performance {
            let case = case.clone();
            let name = format!("interp/{mode}/performance/{}", case.name);
            trials.push(
                Trial::test(name, move || {
                    run_interp(&case, flags, Duration::from_secs(600))
                })
                .with_ignored_flag(true),
            );
        }
    }
    for opt in ["-O0", "-O1", "-O2"] {
        // The performance suite runs billions of instructions per case under qemu:
        // CI runs it once, at -O1; the -O2 runs are ignored (`-- --ignored`) and the
        // bench crate measures them.
        let with_perf = opt != "-O0";
        let groups = functional
            .iter()
            .map(|(n, c)| (*n, c))
            .chain(with_perf.then_some(("performance", &performance)));
        for (suite_name, cases) in groups {
            for case in cases {
                let case = case.clone();
                let name = format!("qemu/O{}/{suite_name}/{}", &opt[2..], case.name);
                let h = harness.clone();
                let ignored = suite_name == "performance" && opt == "-O2";
                // Generous: the timeouts catch hangs, not slowness (CI machines can be loaded).
                let timeout = if suite_name == "performance" {
                    600
                } else {
                    300
                };
                trials.push(
                    Trial::test(name, move || match h {
                        Ok(h) => run_qemu(h, &case, opt, Duration::from_secs(timeout)),
                        Err(_) => Ok(()),
                    })
                    .with_ignored_flag(ignored),
                );
            }
        }
    }
    // The regressions run at every level: -O0 to -O2 above, and -O3 here.
    for case in regressions {
        let name = format!("qemu/O3/regressions/{}", case.name);
        let h = harness.clone();
        trials.push(Trial::test(name, move || match h {
            Ok(h) => run_qemu(h, &case, "-O3", Duration::from_secs(300)),
            Err(_) => Ok(()),
        }));
    }
    for case in noinput {
        let name = format!("asm/performance-noinput/{}", case.name);
        let h = harness.clone();
        trials.push(Trial::test(name, move || match h {
            Ok(h) => assemble_only(h, &case),
            Err(_) => Ok(()),
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The performance-noinput programs: `.sy` files only (no `.out`).
fn noinput_cases(dir: &Path) -> Vec<Case> {
    let mut v: Vec<Case> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "sy"))
                .map(|p| Case {
                    name: p
                        .file_stem()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .into_owned(),
                    expected_out: p.with_extension("out"),
                    input: None,
                    sy: p,
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}
