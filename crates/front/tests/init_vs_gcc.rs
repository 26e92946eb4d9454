//! Differential test of initialiser normalisation (brace elision) against gcc: random
//! initialiser lists for random array shapes, laid out by `front::check` and by a C
//! program compiled with the host `gcc`. Skipped when `gcc` is not installed.

use std::fmt::Write as _;
use std::process::Command;

use front::tast::{ConstVal, GlobalInit};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn gen_list(rng: &mut Rng, depth: u32, next: &mut i32, out: &mut String) {
    out.push('{');
    let n = rng.below(5);
    for i in 0..n {
        if i > 0 {
            out.push_str(", ");
        }
        if depth < 3 && rng.below(100) < 35 {
            gen_list(rng, depth + 1, next, out);
        } else {
            *next += 1;
            let _ = write!(out, "{next}");
        }
    }
    out.push('}');
}

struct Case {
    decl_tail: String,
    total: usize,
    layout: Vec<i32>,
}

/// The case's layout per `front`, or `None` if the front end rejects it.
fn front_layout(decl_tail: &str, total: usize) -> Option<Vec<i32>> {
    let src = format!("int a{decl_tail}\nint main() {{ return 0; }}\n");
    let p = front::check("c.sy", &src).ok()?;
    let GlobalInit::Array(elems) = &p.globals[0].init else {
        return None;
    };
    let mut dense = vec![0; total];
    for &(i, v) in elems {
        if let ConstVal::Int(x) = v {
            dense[i as usize] = x;
        }
    }
    Some(dense)
}

fn c_program(cases: &[Case]) -> String {
    let mut c = String::from("#include <stdio.h>\n");
    for (k, case) in cases.iter().enumerate() {
        let _ = writeln!(c, "int a{k}{}", case.decl_tail);
    }
    c.push_str("int main(void) {\n");
    for (k, case) in cases.iter().enumerate() {
        let _ = writeln!(
            c,
            "  for (int i = 0; i < {}; i++) printf(\"%d \", ((int*)a{k})[i]); printf(\"\\n\");",
            case.total
        );
    }
    c.push_str("  return 0;\n}\n");
    c
}

#[test]
fn brace_elision_matches_gcc() {
    if Command::new("gcc").arg("--version").output().is_err() {
        println!("gcc not found, skipping");
        return;
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut cases = Vec::new();
    for _ in 0..400 {
        let nd = 1 + rng.below(3);
        let dims: Vec<u64> = (0..nd).map(|_| 1 + rng.below(3)).collect();
        let mut init = String::new();
        gen_list(&mut rng, 0, &mut 0, &mut init);
        let decl_tail = format!(
            "{} = {init};",
            dims.iter().map(|d| format!("[{d}]")).collect::<String>()
        );
        let total = dims.iter().product::<u64>() as usize;
        if let Some(layout) = front_layout(&decl_tail, total) {
            cases.push(Case {
                decl_tail,
                total,
                layout,
            });
        }
    }
    let dir = std::env::temp_dir().join(format!("front-init-gcc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (c_path, exe) = (dir.join("t.c"), dir.join("t"));
    // gcc rejects a few constructs C23 allows (`{}` for a scalar): drop those cases.
    for _ in 0..5 {
        std::fs::write(&c_path, c_program(&cases)).expect("write C");
        let out = Command::new("gcc")
            .arg("-w")
            .arg(&c_path)
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("run gcc");
        if out.status.success() {
            break;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let bad: Vec<usize> = err
            .lines()
            .filter(|l| l.contains("error"))
            .filter_map(|l| l.split(':').nth(1)?.parse::<usize>().ok())
            .collect();
        assert!(!bad.is_empty(), "gcc failed:\n{err}");
        // Line k + 2 holds case k.
        let mut k = 0;
        cases.retain(|_| {
            k += 1;
            !bad.contains(&(k + 1))
        });
    }
    let run = Command::new(&exe).output().expect("run test program");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), cases.len());
    assert!(
        cases.len() > 150,
        "too few comparable cases: {}",
        cases.len()
    );
    for (case, line) in cases.iter().zip(lines) {
        let want: Vec<i32> = line
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        assert_eq!(case.layout, want, "int a{}", case.decl_tail);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
