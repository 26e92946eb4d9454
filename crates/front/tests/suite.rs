//! Every `.sy` file of the contest suite must pass the front end (one named test each).
//! Skipped (zero cases) when the suite is not checked out beside the repository.

mod common;

use libtest_mimic::{Arguments, Trial};

fn main() {
    let args = Arguments::from_args();
    let files = common::suite_files();
    if files.is_empty() {
        println!("suite: ../shared/sysy2022 not found, skipping");
    }
    let trials = files
        .into_iter()
        .map(|path| {
            let dir = path
                .parent()
                .and_then(|p| p.file_name())
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Trial::test(format!("{dir}/{stem}"), move || {
                let src = common::read_text(&path);
                let name = path.display().to_string();
                common::big_stack(move || match front::check(&name, &src) {
                    Ok(p) => {
                        if p.user_func("main").is_none() {
                            return Err("no main in the checked program".into());
                        }
                        Ok(())
                    }
                    Err(d) => Err(d.render(&name, &src).into()),
                })
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
