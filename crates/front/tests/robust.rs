//! Robustness: the front end never panics nor overflows its stack, whatever the input.
//! Random bytes, random token soup, random mutations of suite files and of the error
//! tests, and pathologically deep nesting (run, like the driver, on a 256 MB stack).

mod common;

use std::path::PathBuf;

/// xorshift64*: small, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Runs the whole front end and exercises rendering (coloured too, for some inputs)
/// and dumping of the result.
fn exercise(src: &str, rich: bool) {
    match front::check("fuzz.sy", src) {
        Ok(p) => {
            let _ = front::dump(&p);
        }
        Err(d) => {
            assert!(!d.is_empty());
            let _ = d.render("fuzz.sy", src);
            if rich {
                let style = front::diag::Style { color: true };
                let _ = d.render_styled("fuzz.sy", src, style);
            }
        }
    }
}

fn run_all(inputs: Vec<String>) {
    common::big_stack(move || {
        for (i, s) in inputs.iter().enumerate() {
            exercise(s, i % 16 == 0);
        }
    });
}

const TOKENS: &[&str] = &[
    "int",
    "float",
    "void",
    "const",
    "if",
    "else",
    "while",
    "break",
    "continue",
    "return",
    "main",
    "a",
    "b",
    "f",
    "getint",
    "putf",
    "starttime",
    "putarray",
    "0",
    "1",
    "07",
    "0x1F",
    "2147483648",
    "1.5",
    ".5e3",
    "0x1p-3",
    "\"s\\n\"",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    "=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "!",
    "<",
    ">",
    "<=",
    ">=",
    "==",
    "!=",
    "&&",
    "||",
    "\n",
    " ",
];

#[test]
fn random_bytes() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let inputs = (0..1500)
        .map(|_| {
            let n = rng.below(300);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .collect();
    run_all(inputs);
}

#[test]
fn random_token_soup() {
    let mut rng = Rng(42);
    let mut inputs = Vec::new();
    for _ in 0..2000 {
        let n = rng.below(120);
        let mut s = String::from(if rng.below(2) == 0 {
            "int main() {"
        } else {
            ""
        });
        for _ in 0..n {
            s.push_str(TOKENS[rng.below(TOKENS.len())]);
            s.push(' ');
        }
        inputs.push(s);
    }
    run_all(inputs);
}

/// Applies one random edit: truncate, delete a range, duplicate a range, replace a
/// byte, or insert a token.
fn mutate(rng: &mut Rng, src: &str) -> String {
    let b = src.as_bytes();
    let n = b.len();
    let mut out: Vec<u8> = match rng.below(5) {
        0 => b[..rng.below(n + 1)].to_vec(),
        1 => {
            let i = rng.below(n + 1);
            let j = (i + rng.below(40)).min(n);
            [&b[..i], &b[j..]].concat()
        }
        2 => {
            let i = rng.below(n + 1);
            let j = (i + rng.below(60)).min(n);
            [&b[..j], &b[i..j], &b[j..]].concat()
        }
        3 => {
            let mut v = b.to_vec();
            if n > 0 {
                let i = rng.below(n);
                v[i] = b"{}()[];,=+-*/%!<>&|01x.ep\"\\ a"[rng.below(29)];
            }
            v
        }
        _ => {
            let i = rng.below(n + 1);
            let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
            [&b[..i], t, &b[i..]].concat()
        }
    };
    out.truncate(1 << 16);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn mutated_programs() {
    let mut sources: Vec<String> = common::suite_files()
        .iter()
        .filter(|p| {
            std::fs::metadata(p)
                .map(|m| m.len() < 40_000)
                .unwrap_or(false)
        })
        .map(|p| common::read_text(p))
        .collect();
    let errdir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/errors");
    if let Ok(rd) = std::fs::read_dir(errdir) {
        let mut paths: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "sy"))
            .collect();
        paths.sort();
        sources.extend(paths.iter().map(|p| common::read_text(p)));
    }
    let mut rng = Rng(7);
    let mut inputs = Vec::new();
    for src in &sources {
        for _ in 0..12 {
            let mut s = mutate(&mut rng, src);
            if rng.below(3) == 0 {
                s = mutate(&mut rng, &s);
            }
            inputs.push(s);
        }
    }
    run_all(inputs);
}

/// `pre` repeated `n` times, then `mid`, then `post` repeated `n` times.
fn nest(pre: &str, mid: &str, post: &str, n: usize) -> String {
    let mut s = String::with_capacity((pre.len() + post.len()) * n + mid.len());
    for _ in 0..n {
        s.push_str(pre);
    }
    s.push_str(mid);
    for _ in 0..n {
        s.push_str(post);
    }
    s
}

fn wrap_main(body: &str) -> String {
    format!("int main() {{ {body} return 0; }}")
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    const N: usize = 100_000;
    let cases = vec![
        wrap_main(&format!("int x = {};", nest("(", "1", ")", N))),
        wrap_main(&nest("{", "", "}", N)),
        wrap_main(&format!("int x = {}1;", "-".repeat(N))),
        wrap_main(&format!("int x = {}1;", "!".repeat(N))),
        wrap_main(&format!("int x = {}1;", "+ ".repeat(N))),
        wrap_main(&nest("if (1) ", ";", "", N)),
        wrap_main(&nest("while (1) ", ";", "", N)),
        wrap_main(&nest("if (0) ; else ", ";", "", N)),
        format!("int a[1] = {};", nest("{", "1", "}", N)),
        wrap_main(&format!(
            "int a[1]; a[{}0{}] = 1;",
            "a[".repeat(N),
            "]".repeat(N)
        )),
        wrap_main(&format!("int x = {}1{};", "f(".repeat(N), ")".repeat(N))),
        nest("(", "", "", N),
        nest("{", "", "", N),
    ];
    common::big_stack(move || {
        for (i, s) in cases.iter().enumerate() {
            match front::check("deep.sy", s) {
                Ok(_) => panic!("case {i} unexpectedly accepted"),
                Err(d) => {
                    let _ = d.render("deep.sy", s);
                }
            }
        }
    });
}

/// Chains of binary operators are not nesting: generated code may sum thousands
/// of terms, and every stage walks the chain iteratively.
#[test]
fn long_operator_chains_are_accepted() {
    const N: usize = 100_000;
    let cases = [
        wrap_main(&format!("int x = 1{};", " + 1".repeat(N))),
        wrap_main(&format!("int x = 1{};", " || 1 && 1".repeat(N))),
        wrap_main(&format!(
            "int x = 0; if (x{}) x = 1;",
            " || x > 3 && x < 2".repeat(N)
        )),
        format!(
            "const int c = 1{}; int main() {{ return c; }}",
            " * 1".repeat(N)
        ),
    ];
    common::big_stack(move || {
        for (i, s) in cases.iter().enumerate() {
            match front::check("chain.sy", s) {
                Ok(p) => assert!(!front::dump(&p).is_empty()),
                Err(d) => panic!("case {i} rejected:\n{}", d.render("chain.sy", s)),
            }
        }
    });
}

#[test]
fn nesting_below_the_limit_is_accepted() {
    // Close to the limit (front::parser::MAX_DEPTH = 20 000 levels; a block costs two).
    const N: usize = 19_000;
    let cases = [
        wrap_main(&format!("int x = {};", nest("(", "1", ")", N))),
        wrap_main(&nest("{", "", "}", N / 2)),
        wrap_main(&format!("int x = 0; x = {}x;", "-".repeat(N))),
        wrap_main(&format!("int x = 0; x = x{};", " + 1".repeat(N))),
        wrap_main(&format!(
            "int x = 0; x = {}x{};",
            "(x + ".repeat(N / 2),
            ")".repeat(N / 2)
        )),
        wrap_main(&format!(
            "int x = 0; {}",
            nest("if (x) x = 1; else ", "x = 2;", "", N)
        )),
        wrap_main(&format!(
            "int x = 0; {}",
            nest("while (x) ", "x = 2;", "", N)
        )),
        format!(
            "int a[1] = {}; int main() {{ return a[0]; }}",
            nest("{", "1", "}", 2_000)
        ),
    ];
    common::big_stack(move || {
        for (i, s) in cases.iter().enumerate() {
            match front::check("deep.sy", s) {
                Ok(p) => assert!(!front::dump(&p).is_empty()),
                Err(d) => panic!("case {i} rejected:\n{}", d.render("deep.sy", s)),
            }
        }
    });
}
