//! Mutation fuzzing of the text front end and the verifier: random byte- and
//! token-level edits of every test file (a fixed-seed xorshift generator, so failures
//! reproduce) go through parse, verify and print. Nothing may panic; whatever parses
//! and verifies must also round-trip through the printer.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// Marsaglia's xorshift64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const CHARS: &[u8] = b"%@:;,()[]{}=-.0123456789abcefinprtvx\n \"\\";
const SNIPPETS: &[&str] = &[
    "%0",
    "%1",
    "%x",
    "bb0",
    "bb1",
    "ret",
    "ret %0",
    "i32",
    "f32",
    "ptr",
    "void",
    "i8",
    "[",
    "]",
    "[i32; 3]",
    ";",
    "(",
    ")",
    "-",
    "1e",
    "1e-45",
    "0f",
    "0f7FC00001",
    "c\"",
    "\\",
    "...",
    "->",
    "{",
    "}",
    "zeroinit",
    "call @main()",
    "%9 = add %0, 1",
    "jump bb0",
    "br %0, bb0(1), bb1",
    "2147483648",
    "-2147483649",
    "nan",
    "-inf",
    "global @q: f32 = 1",
    "declare @main() -> i32",
    "func @z() {\nbb0:\n ret\n}\n",
    "store 1, %0",
    "load i32, %0",
    "gep %0, %1, 4",
    "alloc [i32; 0]",
    "bb0(%p: i32):",
    "\n",
    ":",
    "=",
];

fn mutate(src: &str, rng: &mut Rng) -> String {
    let mut bytes = src.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(6) {
            0 if at < bytes.len() => bytes[at] = CHARS[rng.below(CHARS.len())],
            1 if at < bytes.len() => bytes[at] = rng.next() as u8,
            2 => {
                let end = (at + 1 + rng.below(8)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            3 | 4 => {
                let s = SNIPPETS[rng.below(SNIPPETS.len())];
                bytes.splice(at..at, s.bytes());
            }
            _ => {
                // Move a whole line elsewhere.
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let mut lines: Vec<&str> = text.lines().collect();
                if lines.len() > 1 {
                    let l = lines.remove(rng.below(lines.len()));
                    lines.insert(rng.below(lines.len() + 1), l);
                }
                bytes = lines.join("\n").into_bytes();
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn check(src: &str) {
    let Ok(m) = ir::parse_module(src) else {
        return;
    };
    let printed = ir::print_module(&m);
    match ir::verify_module(&m) {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok(()) => {
            let again = ir::parse_module(&printed)
                .unwrap_or_else(|e| panic!("canonical text does not parse: {e}\n{printed}"));
            assert_eq!(ir::print_module(&again), printed);
            assert!(ir::verify_module(&again).is_ok());
        }
    }
}

#[test]
fn mutated_files_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut seeds: Vec<String> = Vec::new();
    for dir in ["ir", "invalid"] {
        let mut paths: Vec<_> = fs::read_dir(root.join(dir))
            .expect("test dir exists")
            .map(|e| e.expect("dir entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "ir"))
            .collect();
        paths.sort();
        for p in paths {
            seeds.push(fs::read_to_string(p).expect("readable"));
        }
    }
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    // `IR_FUZZ_ROUNDS=N` runs longer campaigns by hand.
    let rounds = std::env::var("IR_FUZZ_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6000usize);
    let (mut parsed, mut verified) = (0, 0);
    for round in 0..rounds {
        let src = mutate(&seeds[round % seeds.len()], &mut rng);
        let outcome = catch_unwind(AssertUnwindSafe(|| check(&src)));
        if outcome.is_err() {
            panic!("round {round} panicked on input:\n{src}");
        }
        if let Ok(m) = ir::parse_module(&src) {
            parsed += 1;
            verified += ir::verify_module(&m).is_ok() as usize;
        }
    }
    eprintln!("{rounds} mutants: {parsed} parsed, {verified} verified");
    // The mutations must exercise the verifier too, not only parse errors.
    assert!(
        parsed > rounds / 10,
        "only {parsed} of {rounds} mutants parsed"
    );
    assert!(
        verified > 0 && verified < parsed,
        "{verified} of {parsed} verified"
    );
}
