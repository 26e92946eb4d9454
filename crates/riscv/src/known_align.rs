//! Known alignment of integer registers: for every virtual register, how many low
//! bits of its value are known to be zero on every definition (its trailing zero
//! count, 64 for a register that is always zero). This is the trailing-zeros half of
//! LLVM's known-bits analysis (`computeKnownBits`, which `MergeConsecutiveStores`
//! and `InferAlignment` use to prove a pointer aligned), solved as an optimistic
//! dataflow fixed point over the registers' definitions, with a worklist along
//! def-use edges: every defined virtual register starts at 64 and only decreases,
//! to the minimum over its definitions, until nothing changes (Wegman and Zadeck's
//! optimistic assumption: a loop's pointer `p = base; ...; p = p + 96` keeps the
//! alignment both give).
//!
//! Sources of alignment: `li` (its constant), `lla` (every global is emitted
//! 8-byte aligned, `.p2align 3`), a frame address (a local slot's alignment: frame
//! layout honours it and `sp` stays 16-byte aligned), `sp` itself and `zero`.
//! Additions keep the smaller count, a product adds the counts, a left shift by a
//! constant adds its amount, an `and` keeps the larger. A 32-bit operation whose
//! result has at least 32 known low zero bits gives zero (the low word is zero, and
//! sign-extending it gives 0). Anything else (loads, calls, argument registers,
//! right shifts, ...) is unknown: 0.

use crate::mir::*;

/// Trailing zero bits known of each virtual register of `mf` (by [`Reg::vindex`]).
pub struct KnownAlign {
    tz: Vec<u32>,
}

impl KnownAlign {
    /// Computes the known trailing zeros of every virtual register of `mf`.
    pub fn of(mf: &MFunction) -> KnownAlign {
        let n = mf.vreg_class.len();
        let virt = |r: Reg| (r.is_virtual() && r.vindex() < n).then(|| r.vindex());
        // Every instruction that defines a virtual register, and for each register
        // the ones among them that read it.
        let insts: Vec<&MInst> = mf
            .layout
            .iter()
            .flat_map(|&b| mf.blocks[b].insts.iter())
            .filter(|i| {
                let mut d = false;
                i.for_each_def(|r| d |= virt(r).is_some());
                d
            })
            .collect();
        let mut readers: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut defined = vec![false; n];
        for (k, inst) in insts.iter().enumerate() {
            inst.for_each_use(|r| {
                if let Some(v) = virt(r) {
                    readers[v].push(k);
                }
            });
            inst.for_each_def(|r| {
                if let Some(v) = virt(r) {
                    defined[v] = true;
                }
            });
        }
        // Registers without a definition are unknown; the others start optimistic.
        let mut known = KnownAlign {
            tz: defined.iter().map(|&d| if d { 64 } else { 0 }).collect(),
        };
        let mut work: Vec<usize> = (0..insts.len()).rev().collect();
        let mut queued = vec![true; insts.len()];
        while let Some(k) = work.pop() {
            queued[k] = false;
            let inst = insts[k];
            let value = known.transfer(mf, inst);
            inst.for_each_def(|r| {
                let Some(v) = virt(r) else {
                    return;
                };
                let t = value.filter(|_| Some(r) == def_of(inst)).unwrap_or(0);
                if t < known.tz[v] {
                    known.tz[v] = t;
                    for &u in &readers[v] {
                        if !queued[u] {
                            queued[u] = true;
                            work.push(u);
                        }
                    }
                }
            });
        }
        known
    }

    /// Known trailing zero bits of `r`'s value (at any point it is read).
    pub fn trailing_zeros(&self, r: Reg) -> u32 {
        if r == ZERO {
            64
        } else if r == SP {
            4
        } else if r.is_virtual() {
            self.tz.get(r.vindex()).copied().unwrap_or(0)
        } else {
            0
        }
    }

    /// The trailing zeros of what `inst` writes to its one integer destination,
    /// from what is known of its operands now; `None` when it is not understood.
    fn transfer(&self, mf: &MFunction, inst: &MInst) -> Option<u32> {
        let tz = |r: Reg| self.trailing_zeros(r);
        let imm = |c: i64| if c == 0 { 64 } else { c.trailing_zeros() };
        // A 32-bit result: sign-extended from its low word.
        let word = |v: u32| if v >= 32 { 64 } else { v };
        let v = match *inst {
            MInst::Li { imm: c, .. } => imm(c),
            MInst::La { off, .. } => imm(off).min(3),
            MInst::FrameAddr { slot, off, .. } => match mf.slots[slot] {
                SlotKind::Local { align, .. } => imm(off).min(align.trailing_zeros()),
                _ => 0,
            },
            MInst::Mv { rs, .. } => tz(rs),
            MInst::Alu { op, rs1, rs2, .. } => {
                let (a, b) = (tz(rs1), tz(rs2));
                match op {
                    AluOp::Add | AluOp::Sub | AluOp::Or | AluOp::Xor => a.min(b),
                    AluOp::Addw | AluOp::Subw => word(a.min(b)),
                    AluOp::Mul => (a + b).min(64),
                    AluOp::Mulw => word((a + b).min(64)),
                    AluOp::Sll => a,
                    AluOp::Sllw => word(a),
                    AluOp::And => a.max(b),
                    _ => 0,
                }
            }
            MInst::AluImm {
                op, rs1, imm: c, ..
            } => {
                let (a, c64) = (tz(rs1), c as i64);
                match op {
                    AluImmOp::Addi | AluImmOp::Ori | AluImmOp::Xori => a.min(imm(c64)),
                    AluImmOp::Addiw => word(a.min(imm(c64))),
                    AluImmOp::Slli => (a + (c as u32 & 63)).min(64),
                    AluImmOp::Slliw => word((a + (c as u32 & 31)).min(64)),
                    AluImmOp::Andi => a.max(imm(c64)),
                    _ => 0,
                }
            }
            _ => return None,
        };
        Some(v)
    }
}

/// The one integer register `inst` defines by its transfer function.
fn def_of(inst: &MInst) -> Option<Reg> {
    match *inst {
        MInst::Li { rd, .. }
        | MInst::La { rd, .. }
        | MInst::FrameAddr { rd, .. }
        | MInst::Mv { rd, .. }
        | MInst::Alu { rd, .. }
        | MInst::AluImm { rd, .. } => Some(rd),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(text: &str) -> (MFunction, KnownAlign) {
        let mf = crate::text::parse_functions(text)
            .expect("parses")
            .pop()
            .unwrap();
        let k = KnownAlign::of(&mf);
        (mf, k)
    }

    #[test]
    fn alignment_flows_through_arithmetic_and_loops() {
        let (_, k) = known(
            "function f local
  slot0 local 64 align 16
  int %v0..%v12
bb0:
  lla %v0, g0+0
  li %v1, 24
  mul %v2, %v1, a0
  add %v3, %v0, %v2
  addi %v4, %v3, 4
  frameaddr %v5, slot0+8
  slli %v6, a0, 4
  add %v7, %v5, %v6
  lla %v8, g0+0
  j bb1
bb1:
  addi %v9, %v8, 96
  mv %v8, %v9
  addi %v10, %v8, 100
  mv %v11, %v10
  blt %v9, a1, bb1
  j bb2
bb2:
  lw %v12, 0(%v8)
  andi %v12, %v12, -8
  ret
end
",
        );
        let tz = |n: u32| k.trailing_zeros(Reg::virt(n));
        assert_eq!(tz(0), 3, "a global");
        assert_eq!(tz(1), 3, "24");
        assert_eq!(tz(2), 3, "24 * unknown");
        assert_eq!(tz(3), 3);
        assert_eq!(tz(4), 2, "+4");
        assert_eq!(tz(5), 3, "slot + 8");
        assert_eq!(tz(6), 4, "<< 4");
        assert_eq!(tz(7), 3);
        assert_eq!(tz(8), 3, "a loop's pointer stepping by 96");
        assert_eq!(tz(9), 3);
        assert_eq!(tz(10), 2, "+100");
        assert_eq!(tz(11), 2);
        assert_eq!(tz(12), 0, "a load, whatever its second definition");
        assert_eq!(k.trailing_zeros(Reg::x(10)), 0, "an argument");
        assert_eq!(k.trailing_zeros(SP), 4);
    }
}
