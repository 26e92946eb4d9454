//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::PathBuf;

/// Runs `f` on a thread with a 256 MB stack (as the driver does) and returns its
/// result; a panic in `f` is propagated.
pub fn big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let h = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .expect("spawn test thread");
    match h.join() {
        Ok(v) => v,
        Err(e) => std::panic::resume_unwind(e),
    }
}

/// The contest suite (`<repo>/../shared/sysy2022`), if present.
pub fn suite_dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/sysy2022");
    d.is_dir().then_some(d)
}

/// All `.sy` files of the suite's four case directories, sorted.
pub fn suite_files() -> Vec<PathBuf> {
    let Some(root) = suite_dir() else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for sub in [
        "functional",
        "hidden_functional",
        "performance",
        "performance-noinput",
    ] {
        if let Ok(rd) = std::fs::read_dir(root.join(sub)) {
            for e in rd.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "sy") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    files
}

/// Reads a file as text (invalid UTF-8 replaced).
pub fn read_text(p: &std::path::Path) -> String {
    String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned()
}
