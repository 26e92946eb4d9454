//! Output files are written whole or not at all, and the input is never touched.
//!
//! Each test runs the `sysyc` binary in a fresh scratch directory and checks the
//! directory afterwards: the output file exists with the full text, or does not
//! exist (or keeps its previous contents) when compilation failed; no temporary file
//! is left behind; the input keeps its bytes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SYSYC: &str = env!("CARGO_BIN_EXE_sysyc");

const GOOD: &str = "int main() { putint(42); return 0; }\n";
const BAD: &str = "int main() { return x; }\n";

/// A fresh, empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("output")
        .join(test);
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn sysyc(dir: &Path, args: &[&str]) -> Output {
    Command::new(SYSYC)
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run sysyc")
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn success_writes_the_whole_file_and_nothing_else() {
    let dir = scratch("success");
    fs::write(dir.join("a.sy"), GOOD).unwrap();
    let out = sysyc(&dir, &["-S", "-O2", "-o", "a.s", "a.sy"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(listing(&dir), ["a.s", "a.sy"]);
    let asm = fs::read_to_string(dir.join("a.s")).unwrap();
    let direct = sysyc(&dir, &["-S", "-O2", "-o", "-", "a.sy"]);
    assert_eq!(
        asm.as_bytes(),
        direct.stdout,
        "file and stdout output differ"
    );
    assert!(asm.contains("main:"));
}

/// `-S prog.sy` without `-o` writes `prog.s` in the current directory, as gcc does
/// (nothing on stdout); other outputs without `-o` still go to stdout.
#[test]
fn dash_s_without_o_writes_the_input_name_with_s() {
    let dir = scratch("dash-s");
    fs::create_dir_all(dir.join("src")).unwrap();
    fs::write(dir.join("src/h.sy"), GOOD).unwrap();
    let out = sysyc(&dir, &["-S", "-O2", "src/h.sy"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    assert_eq!(listing(&dir), ["h.s", "src"]);
    let direct = sysyc(&dir, &["-S", "-O2", "-o", "-", "src/h.sy"]);
    assert_eq!(fs::read(dir.join("h.s")).unwrap(), direct.stdout);
    let ir = sysyc(&dir, &["--emit", "ir", "src/h.sy"]);
    assert!(String::from_utf8_lossy(&ir.stdout).contains("func @main"));
    assert_eq!(listing(&dir), ["h.s", "src"]);
}

#[test]
fn an_error_leaves_no_output_and_the_input_untouched() {
    let dir = scratch("error");
    fs::write(dir.join("b.sy"), BAD).unwrap();
    let before = fs::metadata(dir.join("b.sy")).unwrap().modified().unwrap();
    let out = sysyc(&dir, &["-S", "-o", "b.s", "b.sy"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("undeclared"));
    assert_eq!(listing(&dir), ["b.sy"], "no output, no temporary file");
    assert_eq!(fs::read_to_string(dir.join("b.sy")).unwrap(), BAD);
    let after = fs::metadata(dir.join("b.sy")).unwrap().modified().unwrap();
    assert_eq!(before, after);
}

#[test]
fn an_error_keeps_a_previous_output_as_it_was() {
    let dir = scratch("previous");
    fs::write(dir.join("c.sy"), BAD).unwrap();
    fs::write(dir.join("c.s"), "previous\n").unwrap();
    let out = sysyc(&dir, &["-S", "-o", "c.s", "c.sy"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(listing(&dir), ["c.s", "c.sy"]);
    assert_eq!(fs::read_to_string(dir.join("c.s")).unwrap(), "previous\n");
}

#[test]
fn writing_into_a_missing_directory_fails_cleanly() {
    let dir = scratch("missing-dir");
    fs::write(dir.join("d.sy"), GOOD).unwrap();
    let out = sysyc(&dir, &["-S", "-o", "nowhere/d.s", "d.sy"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write"));
    assert_eq!(listing(&dir), ["d.sy"]);
}

#[test]
fn the_output_may_not_be_the_input() {
    let dir = scratch("same-file");
    fs::write(dir.join("e.sy"), GOOD).unwrap();
    for target in ["e.sy", "./e.sy"] {
        let out = sysyc(&dir, &["-S", "-o", target, "e.sy"]);
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("is the input"));
        assert_eq!(fs::read_to_string(dir.join("e.sy")).unwrap(), GOOD);
    }
    // Through a symbolic link too.
    std::os::unix::fs::symlink("e.sy", dir.join("link.s")).unwrap();
    let out = sysyc(&dir, &["-S", "-o", "link.s", "e.sy"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(fs::read_to_string(dir.join("e.sy")).unwrap(), GOOD);
    assert_eq!(listing(&dir), ["e.sy", "link.s"]);
}

#[test]
fn a_symbolic_link_output_stays_a_link() {
    let dir = scratch("symlink");
    fs::write(dir.join("f.sy"), GOOD).unwrap();
    fs::write(dir.join("real.s"), "old\n").unwrap();
    std::os::unix::fs::symlink("real.s", dir.join("f.s")).unwrap();
    let out = sysyc(&dir, &["-S", "-o", "f.s", "f.sy"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(fs::symlink_metadata(dir.join("f.s"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(fs::read_to_string(dir.join("real.s"))
        .unwrap()
        .contains("main:"));
    assert_eq!(listing(&dir), ["f.s", "f.sy", "real.s"]);
}

/// `-o /dev/null`-style outputs (devices, FIFOs) are written through, not replaced by
/// a regular file (a rename over `/dev/null` would replace the device when run as
/// root). Tested with a FIFO in the scratch directory.
#[test]
fn a_fifo_output_is_written_through() {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("fifo");
    fs::write(dir.join("g.sy"), GOOD).unwrap();
    let fifo = dir.join("g.s");
    let status = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(status.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            fs::File::open(&fifo)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        })
    };
    let out = sysyc(&dir, &["-S", "-o", "g.s", "g.sy"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(reader.join().unwrap().contains("main:"));
    assert_eq!(listing(&dir), ["g.s", "g.sy"]);
}

/// `-o /dev/null` (a character device, not a file anyone would run) gets no "does
/// not assemble or link" warning without `-S`; a regular file's name still does
/// (issue 48).
#[test]
fn an_output_that_is_not_a_regular_file_gets_no_link_warning() {
    let dir = scratch("dev-null");
    fs::write(dir.join("a.sy"), GOOD).unwrap();
    let out = sysyc(&dir, &["-O1", "-o", "/dev/null", "a.sy"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let out = sysyc(&dir, &["-O1", "-o", "prog", "a.sy"]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("warning: writing assembly to 'prog'"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(fs::read_to_string(dir.join("prog"))
        .unwrap()
        .contains("main:"));
}
