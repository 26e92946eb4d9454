//! The README's examples cannot go stale: every output block in README.md (a fenced
//! block without a language) is either the command-line synopsis, whose options
//! `sysyc --help` must list, or the output of the last `` `sysyc ...` `` command
//! named in the prose just before it, run on the last ```` ```c ```` program above
//! it (saved as `prog.sy`), which must print the block verbatim (on stdout or
//! stderr; "exits N" in that prose is checked too).

use std::path::Path;
use std::process::Command;

const SYSYC: &str = env!("CARGO_BIN_EXE_sysyc");

/// A fenced block: its language, its lines (without the fence's indentation) and
/// the prose between the previous block and it.
struct Fenced {
    lang: String,
    text: String,
    prose: String,
    line: usize,
}

fn fenced_blocks(readme: &str) -> Vec<Fenced> {
    let mut blocks = Vec::new();
    let mut prose = String::new();
    let mut lines = readme.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let t = line.trim_start();
        let Some(lang) = t.strip_prefix("```") else {
            prose.push_str(line);
            prose.push('\n');
            continue;
        };
        let indent = line.len() - t.len();
        let mut text = String::new();
        for (_, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            text.push_str(l.get(indent..).unwrap_or(l.trim_start()));
            text.push('\n');
        }
        blocks.push(Fenced {
            lang: lang.trim().to_string(),
            text,
            prose: std::mem::take(&mut prose),
            line: n + 1,
        });
    }
    blocks
}

/// The last `` `sysyc ...` `` span of `prose` (code spans may wrap lines).
fn last_command(prose: &str) -> Option<String> {
    let spans: Vec<&str> = prose.split('`').skip(1).step_by(2).collect();
    spans
        .into_iter()
        .rev()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|s| s.starts_with("sysyc "))
}

#[test]
fn readme_examples_print_what_the_readme_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme");
    std::fs::create_dir_all(&dir).unwrap();
    let help = Command::new(SYSYC).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let mut program: Option<String> = None;
    let (mut checked, mut synopses) = (0, 0);
    for b in fenced_blocks(&readme) {
        match b.lang.as_str() {
            "c" => program = Some(b.text.clone()),
            "sh" => {}
            "" if b.text.starts_with("sysyc [") => {
                // The synopsis: every option it shows is one --help describes.
                synopses += 1;
                for word in b
                    .text
                    .split(|c: char| c.is_whitespace() || "[]|".contains(c))
                {
                    if word.starts_with('-') && word.len() > 1 {
                        let option = word.split('=').next().unwrap();
                        let option = match option {
                            o if o.starts_with("-O") => "-O",
                            o if o.starts_with("-W") => "-W",
                            o => o,
                        };
                        let listed = help.match_indices(option).any(|(k, _)| {
                            help[k + option.len()..]
                                .chars()
                                .next()
                                .is_none_or(|c| !(c.is_alphanumeric() || c == '-'))
                        });
                        assert!(
                            listed,
                            "README.md:{}: the synopsis shows {word}, which --help does not list",
                            b.line
                        );
                    }
                }
            }
            "" => {
                let command = last_command(&b.prose).unwrap_or_else(|| {
                    panic!(
                        "README.md:{}: an output block with no `sysyc ...` command before it",
                        b.line
                    )
                });
                let src = program.as_ref().unwrap_or_else(|| {
                    panic!("README.md:{}: no ```c program above `{command}`", b.line)
                });
                std::fs::write(dir.join("prog.sy"), src).unwrap();
                let args: Vec<&str> = command.split(' ').skip(1).collect();
                let out = Command::new(SYSYC)
                    .args(&args)
                    .current_dir(&dir)
                    .output()
                    .unwrap();
                let stdout = String::from_utf8_lossy(&out.stdout);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    stdout.contains(&b.text) || stderr.contains(&b.text),
                    "README.md:{}: `{command}` does not print\n{}--- stdout\n{stdout}--- stderr\n{stderr}",
                    b.line,
                    b.text
                );
                let prose = b.prose.split_whitespace().collect::<Vec<_>>().join(" ");
                if let Some(rest) = prose.split("exits ").nth(1) {
                    let code: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    if let Ok(code) = code.parse::<i32>() {
                        assert_eq!(out.status.code(), Some(code), "README.md:{}", b.line);
                    }
                }
                checked += 1;
            }
            other => panic!("README.md:{}: a block of unknown language {other}", b.line),
        }
    }
    assert_eq!(synopses, 1, "the synopsis block");
    assert!(checked >= 2, "{checked} output blocks checked");
}
