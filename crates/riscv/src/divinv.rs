//! Division by a loop-invariant divisor: a multiplication by a reciprocal
//! computed once before the loop.
//!
//! `divw` takes 20 cycles or more on the cores SysY targets; a divisor known only
//! at run time but fixed across a loop (`x / f` in a stencil) can be replaced by
//! a multiply-high with a reciprocal computed in the loop's preheader, the way
//! compilers divide by constants (Granlund and Montgomery, "Division by
//! Invariant Integers using Multiplication", PLDI 1994) but with the magic number
//! computed at run time (as libdivide does).
//!
//! The reciprocal follows Lemire, Kaser and Kurz ("Faster Remainder by Direct
//! Computation", 2019): for `D` below `2^L` and `n` below `2^N`,
//! `floor(n / D) = floor(n * c / 2^F)` with `c = ceil(2^F / D)` whenever
//! `F >= N + L`. Magnitudes of 32-bit values are at most `2^31`, so `N = 32`,
//! `L <= 31` and `F = 63` work for every divisor, `D = 1` included, and
//! `c = (2^63 - 1) / D + 1` fits 64 bits. The quotient of magnitudes is then
//! `mulhu(|n| << 1, c)`; the signs are applied as C truncation asks, and the
//! final `sext.w` wraps `INT_MIN / -1` to `INT_MIN` exactly as `divw` does. A
//! remainder is `n - q * d`. A divisor of zero (undefined in SysY) gives an
//! unspecified result instead of `divw`'s -1.
//!
//! Per division: 8 single-cycle operations and one multiply instead of a divide;
//! per loop entry: a 64-bit divide and five operations in the preheader (which
//! machine LICM then hoists as far out as the divisor allows).

use crate::loops::loop_info;
use crate::mir::{AluImmOp, AluOp, MBlock, MFunction, MInst, Reg, RegClass};
use rustc_hash::FxHashMap;

/// The reciprocal of one divisor: its sign (0 or -1) and `c`.
#[derive(Clone, Copy)]
struct Reciprocal {
    sign: Reg,
    c: Reg,
}

/// Replaces the 32-bit divisions and remainders by loop-invariant divisors in
/// the loops of `mf`; returns how many.
pub fn run(mf: &mut MFunction) -> usize {
    let info = loop_info(mf);
    if info.loops.is_empty() {
        return 0;
    }
    // The blocks holding a division, in layout order: each loop looks only at
    // those of its body (linear in the code when few blocks divide, instead of
    // every block once per loop of a deep nest).
    let div_blocks: Vec<MBlock> = mf
        .layout
        .iter()
        .copied()
        .filter(|b| {
            mf.blocks[*b].insts.iter().any(|i| {
                matches!(
                    i,
                    MInst::Alu {
                        op: AluOp::Divw | AluOp::Remw,
                        ..
                    }
                )
            })
        })
        .collect();
    if div_blocks.is_empty() {
        return 0;
    }
    let (def_count, def_block) = mf.vreg_defs();
    let mut replaced = 0;
    // Innermost loops first (outer loops come first in the list).
    for (li, lp) in info.loops.iter().enumerate().rev() {
        let header = lp.header;
        let outside: Vec<MBlock> = info.preds[header.index()]
            .iter()
            .copied()
            .filter(|&p| !info.contains(li, p))
            .collect();
        let [pre] = outside[..] else {
            continue;
        };
        if mf.succs(pre)[..] != [header] {
            continue;
        }
        let invariant = |r: Reg| {
            r.is_virtual()
                && def_count[r.vindex()] == 1
                && !info.contains_index(li, def_block[r.vindex()])
        };
        let mut recips: FxHashMap<Reg, Reciprocal> = FxHashMap::default();
        let mut setup: Vec<MInst> = Vec::new();
        for &b in &div_blocks {
            if !info.contains(li, b) {
                continue;
            }
            let insts = std::mem::take(&mut mf.blocks[b].insts);
            let mut out = Vec::with_capacity(insts.len());
            for inst in insts {
                let MInst::Alu {
                    op: op @ (AluOp::Divw | AluOp::Remw),
                    rd,
                    rs1,
                    rs2,
                } = inst
                else {
                    out.push(inst);
                    continue;
                };
                if !invariant(rs2) {
                    out.push(inst);
                    continue;
                }
                let r = *recips
                    .entry(rs2)
                    .or_insert_with(|| reciprocal(mf, rs2, &mut setup));
                divide(mf, op, rd, rs1, rs2, r, &mut out);
                replaced += 1;
            }
            mf.blocks[b].insts = out;
        }
        if !setup.is_empty() {
            let insts = &mut mf.blocks[pre].insts;
            let at = insts.len() - 1; // before the jump to the header
            insts.splice(at..at, setup);
        }
    }
    replaced
}

fn vreg(mf: &mut MFunction) -> Reg {
    mf.new_vreg(RegClass::Int)
}

fn alu(op: AluOp, rd: Reg, rs1: Reg, rs2: Reg) -> MInst {
    MInst::Alu { op, rd, rs1, rs2 }
}

fn imm(op: AluImmOp, rd: Reg, rs1: Reg, imm: i32) -> MInst {
    MInst::AluImm { op, rd, rs1, imm }
}

/// Appends to `setup` the computation of `d`'s sign and `c = (2^63 - 1) / |d| + 1`.
fn reciprocal(mf: &mut MFunction, d: Reg, setup: &mut Vec<MInst>) -> Reciprocal {
    let (sign, flipped, mag, top, quot, c) =
        (vreg(mf), vreg(mf), vreg(mf), vreg(mf), vreg(mf), vreg(mf));
    setup.extend([
        imm(AluImmOp::Sraiw, sign, d, 31),
        alu(AluOp::Xor, flipped, d, sign),
        alu(AluOp::Sub, mag, flipped, sign),
        MInst::Li {
            rd: top,
            imm: i64::MAX,
        },
        alu(AluOp::Divu, quot, top, mag),
        imm(AluImmOp::Addi, c, quot, 1),
    ]);
    Reciprocal { sign, c }
}

/// Appends to `out` the code computing `rd = n / d` (or `n % d`) with `d`'s
/// reciprocal `r`.
fn divide(
    mf: &mut MFunction,
    op: AluOp,
    rd: Reg,
    n: Reg,
    d: Reg,
    r: Reciprocal,
    out: &mut Vec<MInst>,
) {
    let (t, flipped, mag, twice, q, s, qs, q64) = (
        vreg(mf),
        vreg(mf),
        vreg(mf),
        vreg(mf),
        vreg(mf),
        vreg(mf),
        vreg(mf),
        vreg(mf),
    );
    out.extend([
        imm(AluImmOp::Sraiw, t, n, 31),
        alu(AluOp::Xor, flipped, n, t),
        alu(AluOp::Sub, mag, flipped, t),
        imm(AluImmOp::Slli, twice, mag, 1),
        alu(AluOp::Mulhu, q, twice, r.c),
        alu(AluOp::Xor, s, t, r.sign),
        alu(AluOp::Xor, qs, q, s),
        alu(AluOp::Sub, q64, qs, s),
    ]);
    if op == AluOp::Divw {
        out.push(imm(AluImmOp::Addiw, rd, q64, 0));
    } else {
        let prod = vreg(mf);
        out.extend([
            alu(AluOp::Mulw, prod, q64, d),
            alu(AluOp::Subw, rd, n, prod),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::{Cond, A0};

    /// `b0: d = a0; i = 0 -> b1: q = i / d; r = i % i; i = i + q ... -> b2`:
    /// the division by `d` (defined before the loop) becomes a multiply-high
    /// with the reciprocal computed in b0; the one by `i` stays.
    #[test]
    fn only_divisions_by_loop_invariant_registers_change() {
        let mut mf = MFunction::new("t".into(), false);
        let b: Vec<MBlock> = (0..3).map(|_| mf.new_block()).collect();
        mf.layout = b.clone();
        let v = |mf: &mut MFunction| mf.new_vreg(RegClass::Int);
        let (d, i, q, r, n) = (v(&mut mf), v(&mut mf), v(&mut mf), v(&mut mf), v(&mut mf));
        mf.blocks[MBlock(0)].insts = vec![
            MInst::Mv { rd: d, rs: A0 },
            MInst::Li { rd: i, imm: 100 },
            MInst::Li { rd: n, imm: 0 },
            MInst::Jump { target: b[1] },
        ];
        mf.blocks[MBlock(1)].insts = vec![
            alu(AluOp::Divw, q, i, d),
            alu(AluOp::Remw, r, i, i),
            alu(AluOp::Addw, i, i, q),
            alu(AluOp::Addw, i, i, r),
            MInst::Branch {
                cond: Cond::Lt,
                rs1: i,
                rs2: n,
                target: b[1],
            },
            MInst::Jump { target: b[2] },
        ];
        mf.blocks[MBlock(2)].insts = vec![MInst::Ret { value: None }];
        assert_eq!(run(&mut mf), 1);
        let has = |blk: usize, op: AluOp| {
            mf.blocks[MBlock(blk as u32)]
                .insts
                .iter()
                .any(|x| matches!(x, MInst::Alu { op: o, .. } if *o == op))
        };
        assert!(has(0, AluOp::Divu), "{:?}", mf.blocks[MBlock(0)].insts);
        assert!(has(1, AluOp::Mulhu) && !has(1, AluOp::Divw) && has(1, AluOp::Remw));
        // The preheader's jump stays last.
        assert!(matches!(
            mf.blocks[MBlock(0)].insts.last(),
            Some(MInst::Jump { .. })
        ));
    }

    /// The arithmetic of the replacement, on 64-bit registers as the code
    /// computes it, against `wrapping_div`/`wrapping_rem` for edge values and
    /// random pairs (divisors and dividends of every magnitude and sign).
    #[test]
    fn reciprocal_division_matches_truncating_division() {
        fn run(n: i32, d: i32) -> (i32, i32) {
            let sign = i64::from(d >> 31);
            let mag = (i64::from(d) ^ sign) - sign;
            let c = (i64::MAX as u64 / mag as u64).wrapping_add(1);
            let t = i64::from(n >> 31);
            let twice = (((i64::from(n) ^ t) - t) as u64) << 1;
            let q = ((u128::from(twice) * u128::from(c)) >> 64) as u64 as i64;
            let s = t ^ sign;
            let q64 = (q ^ s) - s;
            let quot = q64 as i32;
            let rem = n.wrapping_sub((q64 as i32).wrapping_mul(d));
            (quot, rem)
        }
        let edges = [
            i32::MIN,
            i32::MIN + 1,
            -65536,
            -1000,
            -7,
            -2,
            -1,
            0,
            1,
            2,
            3,
            7,
            1000,
            65535,
            65536,
            i32::MAX - 1,
            i32::MAX,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut pairs: Vec<(i32, i32)> = Vec::new();
        for &d in &edges {
            for &n in &edges {
                pairs.push((n, d));
            }
        }
        for _ in 0..200_000 {
            let d = (next() as i32) >> (next() % 31);
            let n = (next() as i32) >> (next() % 31);
            pairs.push((n, d));
        }
        for (n, d) in pairs {
            if d == 0 {
                continue;
            }
            assert_eq!(
                run(n, d),
                (n.wrapping_div(d), n.wrapping_rem(d)),
                "{n} / {d}"
            );
        }
    }
}
