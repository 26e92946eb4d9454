//! Properties of the generated assembly at -O2 on kernels of our own
//! (`tests/codegen/*.sy`), checked on the text `sysyc -S` writes.

use std::path::Path;
use std::process::Command;

const SYSYC: &str = env!("CARGO_BIN_EXE_sysyc");

fn asm_of(file: &str) -> String {
    asm_of_path(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/codegen")
            .join(file),
    )
}

fn asm_of_path(path: &Path) -> String {
    let out = Command::new(SYSYC)
        .args(["-S", "-O2", "-o", "-"])
        .arg(path)
        .output()
        .expect("run sysyc");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("assembly is UTF-8")
}

/// The blocks of `asm`: each label with the instructions up to the next label.
fn blocks(asm: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in asm.lines() {
        if let Some(label) = line.strip_suffix(':').filter(|l| l.starts_with(".LBB")) {
            out.push((label.to_string(), Vec::new()));
        } else if let (Some(last), Some(inst)) = (out.last_mut(), line.strip_prefix('\t')) {
            if !inst.starts_with('.') {
                last.1.push(inst.to_string());
            }
        }
    }
    out
}

/// The multiply-add loops of a matrix product (unrolled, remainder and software
/// pipelined) are each one block that branches to itself: the loop-carried sum,
/// pointers and counter get the same register as their next values, so no copy
/// block sits on the back edge (the allocator's copy-partner preference, and the
/// scheduler keeping a value's next version after the reads of the current one).
/// Other blocks with multiplies (a pipelined loop's first early stage and last
/// late stage) are not loops; none of them is followed by copies back to it.
#[test]
fn multiply_add_loops_are_single_blocks() {
    assert_multiply_loops_are_single_blocks(&asm_of("matmul_loops.sy"));
}

/// The check above catches a loop whose back edge goes through a block of copies.
#[test]
#[should_panic(expected = ".LBB0_2 copies back to the loop .LBB0_1")]
fn a_block_of_copies_on_a_back_edge_is_caught() {
    let asm = "f:\n.LBB0_0:\n\tli a5, 0\n.LBB0_1:\n\tlw a2, 0(a7)\n\tmulw a2, a2, a2\n\
               \taddw a6, a5, a2\n\taddi t1, a7, 4\n\tbge t1, t0, .LBB0_3\n.LBB0_2:\n\
               \tmv a5, a6\n\tmv a7, t1\n\tj .LBB0_1\n.LBB0_3:\n\tret\n\
               .LBB0_4:\n\tmulw a0, a0, a0\n\tbnez a0, .LBB0_4\n\
               .LBB0_5:\n\tmulw a0, a0, a0\n\tbnez a0, .LBB0_5\n.LBB0_6:\n\tret\n";
    assert_multiply_loops_are_single_blocks(asm);
}

fn assert_multiply_loops_are_single_blocks(asm: &str) {
    let blocks = blocks(asm);
    let targets = |inst: &str, label: &str| {
        inst.ends_with(&format!(", {label}")) || inst == format!("j {label}")
    };
    let with_mul: Vec<usize> = (0..blocks.len())
        .filter(|&k| blocks[k].1.iter().any(|i| i.starts_with("mulw ")))
        .collect();
    let self_loops = with_mul
        .iter()
        .filter(|&&k| targets(blocks[k].1.last().unwrap(), &blocks[k].0))
        .count();
    assert!(self_loops >= 2, "{asm}");
    for &k in &with_mul {
        let (label, insts) = &blocks[k];
        let last = insts.last().expect("a non-empty block");
        // The blocks it may go to next: its branch target and what it falls into.
        let next: Vec<&(String, Vec<String>)> = blocks
            .iter()
            .enumerate()
            .filter(|(n, (l, _))| targets(last, l) || (*n == k + 1 && !last.starts_with("j ")))
            .map(|(_, b)| b)
            .collect();
        for (l, body) in next {
            let (jump, copies) = body.split_last().expect("a non-empty block");
            assert!(
                !(targets(jump, label) && copies.iter().all(|i| i.starts_with("mv "))),
                "{l} copies back to the loop {label}:\n{asm}"
            );
        }
    }
}

/// Block labels are numbered in the order they appear: in each function
/// `.LBB<f>_0`, `.LBB<f>_1`, ... down the text, every branch target among them.
#[test]
fn block_labels_go_up_in_layout_order() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sy"))
        .collect();
    files.sort();
    assert!(files.len() > 10);
    for f in files {
        let out = Command::new(SYSYC)
            .args(["-S", "-O2", "-w", "-o", "-"])
            .arg(&f)
            .output()
            .expect("run sysyc");
        assert!(out.status.success(), "{}", f.display());
        let asm = String::from_utf8(out.stdout).unwrap();
        let mut defined: Vec<(String, usize)> = Vec::new();
        for line in asm.lines() {
            if let Some(l) = line.strip_suffix(':').filter(|l| l.starts_with(".LBB")) {
                let (func, n) = l[4..].split_once('_').unwrap();
                defined.push((func.to_string(), n.parse().unwrap()));
            }
        }
        assert!(!defined.is_empty());
        let mut expect: Option<(String, usize)> = None;
        for (func, n) in &defined {
            let want = match &expect {
                Some((g, m)) if g == func => m + 1,
                _ => 0,
            };
            assert_eq!(*n, want, "{}: .LBB{func}_{n} out of order", f.display());
            expect = Some((func.clone(), *n));
        }
        for line in asm.lines().filter(|l| l.starts_with('\t')) {
            if let Some(at) = line.find(".LBB") {
                let target = line[at..].split([',', ' ']).next().unwrap();
                assert!(
                    asm.contains(&format!("\n{target}:\n")),
                    "{}: {target} is not defined",
                    f.display()
                );
            }
        }
    }
}

/// Live-range splitting around loops (`regalloc/split.rs`): the values the hot
/// nest of `tests/programs/split_around_loops.sy` spills are reloaded once before
/// each later loop that reads them, not in it: the single loops (its two copies,
/// unrolled and remainder, and the initialisation's two) touch no stack slot (but
/// for the unrolled initialisation's reload of its bound), and the hot
/// loop itself reloads at most 10 (15 before splitting: each spilled coefficient
/// read in the inner loop gets a copy defined in the inner loop's preheader; 7
/// when its loads and multiplies went through one temporary, before the
/// scheduler's pressure guard let a loop's order keep more values live where the
/// cycles it saves pay for the spills: `schedule::SPILL_CYCLES`).
#[test]
fn spilled_values_are_reloaded_before_loops_not_in_them() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs/split_around_loops.sy");
    let asm = asm_of_path(&path);
    let loops: Vec<_> = blocks(&asm)
        .into_iter()
        .filter(|(label, insts)| {
            insts
                .last()
                .is_some_and(|i| i.ends_with(&format!(", {label}")))
        })
        .collect();
    let stack = |insts: &[String]| insts.iter().filter(|i| i.contains("(sp)")).count();
    let muls = |insts: &[String]| insts.iter().filter(|i| i.starts_with("mulw")).count();
    let (hot, single): (Vec<_>, Vec<_>) = loops.iter().partition(|(_, insts)| muls(insts) >= 28);
    assert_eq!(hot.len(), 1, "{asm}");
    assert!(stack(&hot[0].1) <= 10, "{}: {:#?}", hot[0].0, hot[0].1);
    assert!(single.len() >= 2, "{asm}");
    // The initialisation loop is unrolled four times (rtunroll), and under the
    // pressure of its four interleaved copies the unrolled copy reloads its own
    // bound in its latch: one access, which is not a value of the hot nest.
    let unrolled = |insts: &[String]| insts.iter().filter(|i| i.starts_with("sw ")).count() >= 4;
    for (label, insts) in single {
        let allowed = usize::from(unrolled(insts));
        assert!(
            stack(insts) <= allowed,
            "{label} touches the stack: {insts:#?}"
        );
    }
}

#[test]
fn tail_recursion_behind_an_empty_loop_folds_to_its_result() {
    // Every way out of the recursion returns -98103618: once it is a loop, the
    // call is that constant, printed directly.
    let asm = asm_of("tail_recursion_behind_an_empty_loop.sy");
    assert!(asm.contains("li a0, -98103618\n\tcall putint"), "{asm}");
}

#[test]
fn tail_recursion_around_loops_full_unrolling_removes_becomes_a_loop() {
    // `f10` returns `d12 + f10(d12 - 1, ..)` around loops of constant trip count:
    // the recursion becomes a loop (which `main` may then inline), so at most
    // `main`'s call of `f10` is left, and `f10` does not call itself.
    let asm = asm_of("tail_recursion_around_unrolled_loops.sy");
    if let Some(rest) = asm.split("f.f10:\n").nth(1) {
        let body = rest.split(".size f.f10").next().unwrap_or(rest);
        assert!(!body.contains("call f.f10"), "{body}");
    }
    assert!(asm.matches("call f.f10").count() <= 1, "{asm}");
}

#[test]
fn tail_recursion_of_a_function_returning_one_constant_becomes_a_loop() {
    // `fill(..); return 0` in a function that always returns 0 is a tail call:
    // the recursion becomes a loop, so at most `main`'s two calls remain (the
    // loop may be inlined into it), and no sibling call to itself.
    let asm = asm_of("tail_recursion_of_a_constant_function.sy");
    assert!(asm.matches("call fill").count() <= 2, "{asm}");
    assert!(!asm.contains("tail fill"), "{asm}");
}

#[test]
fn a_large_function_called_with_constants_it_returns_at_once_for_is_inlined() {
    // `search` is a tail recursion turned into a loop whose header tests the
    // depth; the calls with depths 0 and 41 take its early return under their
    // constants, so the inliner copies them (their cost is that of the test and
    // the return) and they fold: only the two calls with a variable depth stay.
    let asm = asm_of("inline_under_constant_arguments.sy");
    assert_eq!(asm.matches("call search").count(), 2, "{asm}");
}
