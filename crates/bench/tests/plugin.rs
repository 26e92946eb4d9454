//! Exactness test of the counting plugin: a hand-written assembly loop with a
//! known instruction mix runs K1 and K2 times inside a starttime/stoptime pair;
//! the difference of the counts must be exactly (K2 - K1) times the per-iteration
//! mix, class by class and in the cycle estimate. Skipped without the toolchain.

#[allow(dead_code)]
#[path = "../src/plugin.rs"]
mod plugin;
#[allow(dead_code)]
#[path = "../src/symbols.rs"]
mod symbols;

use std::fs;
use std::path::{Path, PathBuf};

use harness::{Harness, RunOptions};
use plugin::{build_plugin, qemu_args, Counts};

/// One iteration: 8 instructions, four of them compressed (c.lwsp, c.swsp,
/// c.addi, c.bnez). Cost: 3 + 3 + 20 + 4 + 20 + 1 + 1 + 1 = 53 cycles.
///
/// U74 estimate: the loop is one translation block that branches to its own start,
/// so each iteration is charged its steady state. From the second iteration on,
/// the unpipelined FP divider bounds it: each `fdiv.s` waits for the previous one
/// (27 cycles busy), and the rest (the `divw` waiting for the integer divider,
/// 20 cycles busy; `fmul.s` 5 cycles ahead of the `fdiv.s`) fits in that shadow,
/// so one iteration costs exactly 27 cycles.
const LOOP_ASM: &str = r#"
    .text
    .globl main
main:
    addi sp, sp, -16
    sd ra, 8(sp)
    sw zero, 0(sp)
    li a0, 1
    call _sysy_starttime
    li a5, ITERATIONS
    li a3, 7
    fcvt.s.w ft0, a3
1:
    lw a4, 0(sp)
    mul a2, a3, a5
    divw a2, a2, a3
    fmul.s ft1, ft0, ft0
    fdiv.s ft1, ft1, ft0
    sw a4, 0(sp)
    addi a5, a5, -1
    bnez a5, 1b
    li a0, 2
    call _sysy_stoptime
    ld ra, 8(sp)
    addi sp, sp, 16
    li a0, 0
    ret
"#;

fn measure(h: &Harness, so: &Path, dir: &Path, iterations: u64) -> Counts {
    measure_profiled(h, so, dir, iterations, None)
}

/// [`measure`], also writing the per-block profile to `profile` when given.
fn measure_profiled(
    h: &Harness,
    so: &Path,
    dir: &Path,
    iterations: u64,
    profile: Option<&Path>,
) -> Counts {
    let text = LOOP_ASM.replace("ITERATIONS", &iterations.to_string());
    run_asm(h, so, dir, &format!("loop{iterations}"), &text, profile)
}

/// Links and runs the assembly `text` (named `name` in `dir`) under the plugin.
fn run_asm(
    h: &Harness,
    so: &Path,
    dir: &Path,
    name: &str,
    text: &str,
    profile: Option<&Path>,
) -> Counts {
    let asm = dir.join(format!("{name}.s"));
    fs::write(&asm, text).unwrap();
    let exe = dir.join(name);
    h.link(&asm, &exe).unwrap();
    let nm = symbols::nm_for(&h.toolchain.cc);
    let markers = symbols::timer_markers(&nm, &exe).unwrap();
    assert!(markers.is_some());
    let out = dir.join(format!("{name}.counts"));
    let mut qemu = qemu_args(so, &out, markers);
    if let Some(p) = profile {
        qemu[1].push(",profile=");
        qemu[1].push(p);
    }
    let opts = RunOptions {
        qemu_args: qemu,
        ..RunOptions::default()
    };
    let r = h.run_with(&exe, None, &opts).unwrap();
    r.judge(b"0\n").unwrap();
    Counts::read(&out).unwrap()
}

/// The harness, the plugin and a fresh scratch directory; `None` (the test is
/// skipped) without the toolchain.
fn setup() -> Option<(&'static Harness, PathBuf, PathBuf)> {
    let h = match Harness::global() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("skipping plugin test: {e}");
            return None;
        }
    };
    let dir = harness::runtime::unique_temp_dir(&std::env::temp_dir()).unwrap();
    let so = build_plugin(&harness::default_cache_dir()).unwrap();
    Some((h, so, dir))
}

#[test]
fn counts_are_exact_per_class() {
    let Some((h, so, dir)) = setup() else {
        return;
    };
    let (k1, k2) = (100, 2000); // both fit `li` in one addi
    let a = measure(h, &so, &dir, k1);
    let b = measure(h, &so, &dir, k2);
    let again = measure(h, &so, &dir, k1);
    fs::remove_dir_all(&dir).unwrap();

    assert_eq!(a, again, "counts are not deterministic");
    assert_eq!((a.pairs, b.pairs), (1, 1));
    let k = k2 - k1;
    let diff = |f: fn(&Counts) -> u64| f(&b) - f(&a);
    assert_eq!(diff(|c| c.insns), 8 * k);
    assert_eq!(diff(|c| c.loads), k);
    assert_eq!(diff(|c| c.stores), k);
    assert_eq!(diff(|c| c.mul), k);
    assert_eq!(diff(|c| c.div), k);
    assert_eq!(diff(|c| c.fp), k);
    assert_eq!(diff(|c| c.fdiv), k);
    assert_eq!(diff(|c| c.alu), k);
    assert_eq!(diff(|c| c.branches), k);
    assert_eq!(diff(|c| c.jumps), 0);
    assert_eq!(diff(|c| c.cycles), 53 * k);
    assert_eq!(diff(|c| c.u74), 27 * k);
    // The region is small apart from the loop: only the timer call's overhead.
    assert!(a.insns >= 8 * k1 && a.insns < 8 * k1 + 2000, "{a:?}");
}

#[test]
fn profile_charges_each_block_its_executions() {
    let Some((h, so, dir)) = setup() else {
        return;
    };
    let profile = dir.join("loop.profile");
    let iterations = 3000;
    measure_profiled(h, &so, &dir, iterations, Some(&profile));
    let text = fs::read_to_string(&profile).unwrap();
    fs::remove_dir_all(&dir).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("# vaddr insns execs"));
    // The loop's block costs the most: 8 instructions, 27 cycles each time. Its
    // first iteration runs as part of the block that falls into it, so the block
    // starting at the loop's head runs one time fewer than the loop.
    let top: Vec<&str> = lines.next().unwrap().split(' ').collect();
    assert_eq!(top[1], "8", "{text}");
    assert_eq!(top[2], (iterations - 1).to_string(), "{text}");
    assert_eq!(top[3], "27", "{text}");
    assert_eq!(top[4], (27 * (iterations - 1)).to_string(), "{text}");
    let shares: Vec<u64> = top[5].split(',').map(|x| x.parse().unwrap()).collect();
    assert_eq!(shares.len(), 8);
    assert_eq!(shares.iter().sum::<u64>(), 27);
    // Sorted by cycles spent.
    let spent: Vec<u64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(' ').nth(4).unwrap().parse().unwrap())
        .collect();
    assert!(spent.windows(2).all(|w| w[0] >= w[1]), "{text}");
}

/// A loop whose division feeds an addition; `ALIGN` places it so that a page
/// boundary falls between the two (QEMU then splits the loop into two blocks)
/// or not.
const SPLIT_ASM: &str = r#"
    .text
    .option norvc
    .globl main
main:
    addi sp, sp, -16
    sd ra, 8(sp)
    li a0, 1
    call _sysy_starttime
    li a5, ITERATIONS
    li a3, 7
    j .Lloop
ALIGN
.Lloop:
    mul a2, a3, a5
    divw a2, a2, a3
    nop
    nop
    add a4, a2, a3
    addi a5, a5, -1
    bnez a5, .Lloop
    li a0, 2
    call _sysy_stoptime
    ld ra, 8(sp)
    addi sp, sp, 16
    li a0, 0
    ret
"#;

#[test]
fn a_loop_split_by_a_page_boundary_is_charged_its_latencies() {
    let Some((h, so, dir)) = setup() else {
        return;
    };
    // U74 cycles per iteration, from two trip counts.
    let per_iteration = |align: &str, name: &str| {
        let run = |k: u64| {
            let text = SPLIT_ASM
                .replace("ITERATIONS", &k.to_string())
                .replace("ALIGN", align);
            run_asm(h, &so, &dir, &format!("{name}{k}"), &text, None).u74
        };
        (run(2000) - run(100)) / 1900
    };
    // The loop starts 16 bytes before a page boundary: `add` is on the next page.
    let split = per_iteration("    .balign 4096\n    .fill 1020, 4, 0x00000013", "split");
    let whole = per_iteration("    .balign 4096", "whole");
    fs::remove_dir_all(&dir).unwrap();
    // The division's latency is charged either way (without it, the split loop
    // would cost a third of the whole one).
    assert!(whole >= 20, "whole loop: {whole} cycles per iteration");
    assert!(
        split * 10 >= whole * 9 && split * 10 <= whole * 12,
        "split {split} vs whole {whole} cycles per iteration"
    );
}
