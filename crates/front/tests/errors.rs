//! Invalid programs (`tests/errors/*.sy`) must be rejected with exactly the rendered
//! diagnostics in the `.err` file beside each; valid programs in `tests/warnings/*.sy`
//! must be accepted with exactly the warnings in the `.err` file beside each (none
//! when it is empty). Run with `UPDATE_EXPECT=1` to (re)write the expectations, then
//! review the diff.

mod common;

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};

fn run_case(path: &Path, invalid: bool) -> Result<(), Failed> {
    let src = common::read_text(path);
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (n2, s2) = (name.clone(), src.clone());
    let checked = common::big_stack(move || {
        let c = front::check_all(&n2, &s2);
        (c.program.is_some(), c.diagnostics.render(&n2, &s2))
    });
    let actual = match (invalid, checked) {
        (true, (false, text)) | (false, (true, text)) => text,
        (true, (true, _)) => return Err(format!("{name}: accepted, but it is invalid").into()),
        (false, (false, text)) => {
            return Err(format!("{name}: rejected, but it is valid:\n{text}").into())
        }
    };
    let expect_path = path.with_extension("err");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&expect_path, &actual).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let expected = std::fs::read_to_string(&expect_path).unwrap_or_default();
    if actual != expected {
        return Err(format!(
            "{name}: diagnostics differ\n--- expected\n{expected}--- actual\n{actual}"
        )
        .into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for (dir, invalid) in [("tests/errors", true), ("tests/warnings", false)] {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "sy"))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        let kind = if invalid { "error" } else { "warning" };
        trials.extend(files.into_iter().map(|p| {
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Trial::test(format!("{kind}::{name}"), move || run_case(&p, invalid))
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}
