//! Known low bits of integer registers: for every virtual register, how many of
//! the low bits of its value are known on every definition, and what they are
//! (the remainder modulo a power of two: a global's address plus 12 is 4 modulo 8).
//! This is the low-bits part of LLVM's known-bits analysis (`computeKnownBits`,
//! which `MergeConsecutiveStores` and `InferAlignment` use to prove a pointer
//! aligned), solved as an optimistic dataflow fixed point over the registers'
//! definitions, with a worklist along def-use edges: a register has no fact
//! until one of its definitions is evaluated, then the meet of its definitions'
//! (the low bits on which they agree), which only loses bits until nothing
//! changes (Wegman and Zadeck's optimistic assumption: a loop's pointer
//! `p = base; ...; p = p + 96` keeps the alignment both give).
//!
//! Sources: `li` (its constant), `lla` (every global is emitted 8-byte aligned,
//! `.p2align 3`), a frame address (a local slot's alignment: frame layout honours
//! it and `sp` stays 16-byte aligned), `sp` itself and `zero`. Additions,
//! subtractions and products are exact modulo the smaller known power of two
//! (a product's trailing zeros also add up), a left shift by a constant shifts
//! the known bits up, bitwise operations combine them. A 32-bit operation whose
//! low word is fully known gives its sign extension. Anything else (loads, calls,
//! argument registers, right shifts, ...) is unknown.

use crate::mir::*;

/// What is known of a value's low bits: the low `bits` bits are those of `val`
/// (`bits` 0: nothing; 64: the whole value).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Low {
    pub bits: u32,
    pub val: u64,
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl Low {
    pub const UNKNOWN: Low = Low { bits: 0, val: 0 };

    fn new(bits: u32, val: u64) -> Low {
        let bits = bits.min(64);
        Low {
            bits,
            val: val & mask(bits),
        }
    }

    fn exact(c: i64) -> Low {
        Low::new(64, c as u64)
    }

    /// What holds of both: the low bits on which they agree.
    fn meet(self, o: Low) -> Low {
        let bits = self.bits.min(o.bits);
        let differ = (self.val ^ o.val) & mask(bits);
        let bits = if differ == 0 {
            bits
        } else {
            differ.trailing_zeros()
        };
        Low::new(bits, self.val)
    }

    /// Known trailing zero bits.
    pub fn trailing_zeros(self) -> u32 {
        if self.val == 0 {
            self.bits
        } else {
            self.val.trailing_zeros()
        }
    }

    fn add(self, o: Low) -> Low {
        Low::new(self.bits.min(o.bits), self.val.wrapping_add(o.val))
    }

    fn sub(self, o: Low) -> Low {
        Low::new(self.bits.min(o.bits), self.val.wrapping_sub(o.val))
    }

    fn mul(self, o: Low) -> Low {
        let zeros = self.trailing_zeros() + o.trailing_zeros();
        let bits = self.bits.min(o.bits);
        if zeros > bits {
            Low::new(zeros, 0)
        } else {
            Low::new(bits, self.val.wrapping_mul(o.val))
        }
    }

    fn shl(self, s: u32) -> Low {
        Low::new(self.bits + s, self.val << s)
    }

    fn and(self, o: Low) -> Low {
        let zeros = self.trailing_zeros().max(o.trailing_zeros());
        let bits = self.bits.min(o.bits);
        if zeros > bits {
            Low::new(zeros, 0)
        } else {
            Low::new(bits, self.val & o.val)
        }
    }

    fn bitwise(self, o: Low, f: fn(u64, u64) -> u64) -> Low {
        Low::new(self.bits.min(o.bits), f(self.val, o.val))
    }

    /// The result of a 32-bit operation whose low word is `self`: sign-extended,
    /// so a fully known low word gives the whole value.
    fn word(self) -> Low {
        if self.bits >= 32 {
            Low::exact(self.val as u32 as i32 as i64)
        } else {
            self
        }
    }
}

/// What is known of the low bits of each virtual register of `mf` (by
/// [`Reg::vindex`]); `None` while no definition has been evaluated.
pub struct KnownAlign {
    low: Vec<Option<Low>>,
}

impl KnownAlign {
    /// Computes the known low bits of every virtual register of `mf`.
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
        // Registers without a definition are unknown; the others start optimistic
        // (`None`: above every fact) and descend to the meet of their definitions.
        let mut known = KnownAlign {
            low: defined
                .iter()
                .map(|&d| if d { None } else { Some(Low::UNKNOWN) })
                .collect(),
        };
        let mut work: Vec<usize> = (0..insts.len()).rev().collect();
        let mut queued = vec![true; insts.len()];
        while let Some(k) = work.pop() {
            queued[k] = false;
            let inst = insts[k];
            // `None`: an operand has no fact yet; the instruction comes back when
            // it gets one.
            let Some(value) = known.transfer(mf, inst) else {
                continue;
            };
            inst.for_each_def(|r| {
                let Some(v) = virt(r) else {
                    return;
                };
                let t = if Some(r) == def_of(inst) {
                    value
                } else {
                    Low::UNKNOWN
                };
                let new = known.low[v].map_or(t, |old| old.meet(t));
                if known.low[v] != Some(new) {
                    known.low[v] = Some(new);
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

    /// What is known of `r`'s low bits (at any point it is read); `None` only
    /// during the fixed point, for a register none of whose definitions has been
    /// evaluated.
    fn get(&self, r: Reg) -> Option<Low> {
        if r == ZERO {
            Some(Low::exact(0))
        } else if r == SP {
            Some(Low::new(4, 0))
        } else if r.is_virtual() {
            self.low
                .get(r.vindex())
                .copied()
                .unwrap_or(Some(Low::UNKNOWN))
        } else {
            Some(Low::UNKNOWN)
        }
    }

    /// Known low bits of `r`'s value.
    pub fn low(&self, r: Reg) -> Low {
        self.get(r).unwrap_or(Low::UNKNOWN)
    }

    /// Known trailing zero bits of `r`'s value.
    pub fn trailing_zeros(&self, r: Reg) -> u32 {
        self.low(r).trailing_zeros()
    }

    /// What `inst` writes to its one integer destination, from what is known of
    /// its operands now (unknown when it is not understood); `None` when an
    /// operand has no fact yet.
    fn transfer(&self, mf: &MFunction, inst: &MInst) -> Option<Low> {
        let v = match *inst {
            MInst::Li { imm, .. } => Low::exact(imm),
            MInst::La { off, .. } => Low::new(3, off as u64),
            MInst::FrameAddr { slot, off, .. } => match mf.slots[slot] {
                SlotKind::Local { align, .. } => Low::new(align.trailing_zeros(), off as u64),
                _ => Low::UNKNOWN,
            },
            MInst::Mv { rs, .. } => self.get(rs)?,
            MInst::Alu { op, rs1, rs2, .. } => {
                let (a, b) = (self.get(rs1)?, self.get(rs2)?);
                match op {
                    AluOp::Add => a.add(b),
                    AluOp::Sub => a.sub(b),
                    AluOp::Addw => a.add(b).word(),
                    AluOp::Subw => a.sub(b).word(),
                    AluOp::Mul => a.mul(b),
                    AluOp::Mulw => a.mul(b).word(),
                    AluOp::Sll => Low::new(a.trailing_zeros(), 0),
                    AluOp::Sllw => Low::new(a.trailing_zeros(), 0).word(),
                    AluOp::And => a.and(b),
                    AluOp::Or => a.bitwise(b, |x, y| x | y),
                    AluOp::Xor => a.bitwise(b, |x, y| x ^ y),
                    _ => Low::UNKNOWN,
                }
            }
            MInst::AluImm { op, rs1, imm, .. } => {
                let (a, c) = (self.get(rs1)?, Low::exact(imm as i64));
                match op {
                    AluImmOp::Addi => a.add(c),
                    AluImmOp::Addiw => a.add(c).word(),
                    AluImmOp::Slli => a.shl(imm as u32 & 63),
                    AluImmOp::Slliw => a.shl(imm as u32 & 31).word(),
                    AluImmOp::Andi => a.and(c),
                    AluImmOp::Ori => a.bitwise(c, |x, y| x | y),
                    AluImmOp::Xori => a.bitwise(c, |x, y| x ^ y),
                    _ => Low::UNKNOWN,
                }
            }
            _ => Low::UNKNOWN,
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
  int %v0..%v16
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
  lla %v13, g1+12
  j bb1
bb1:
  addi %v9, %v8, 96
  mv %v8, %v9
  addi %v10, %v8, 100
  mv %v11, %v10
  addi %v14, %v13, 48
  mv %v13, %v14
  blt %v9, a1, bb1
  j bb2
bb2:
  lw %v12, 0(%v8)
  andi %v12, %v12, -8
  lla %v15, g1+0
  li %v16, 7
  j bb3
bb3:
  addi %v15, %v15, 4
  addiw %v16, %v16, 1
  blt %v15, a1, bb3
  j bb4
bb4:
  ret
end
",
        );
        let tz = |n: u32| k.trailing_zeros(Reg::virt(n));
        let mod8 = |n: u32| {
            let low = k.low(Reg::virt(n));
            (low.bits >= 3).then_some(low.val & 7)
        };
        assert_eq!(tz(0), 3, "a global");
        assert_eq!(k.low(Reg::virt(1)), Low { bits: 64, val: 24 });
        assert_eq!(tz(2), 3, "24 * unknown");
        assert_eq!(tz(3), 3);
        assert_eq!(mod8(4), Some(4), "+4");
        assert_eq!(mod8(5), Some(0), "slot + 8");
        assert_eq!(tz(6), 4, "<< 4");
        assert_eq!(tz(7), 3);
        assert_eq!(tz(8), 3, "a loop's pointer stepping by 96");
        assert_eq!(tz(9), 3);
        assert_eq!(mod8(10), Some(4), "+100");
        assert_eq!(mod8(11), Some(4));
        assert_eq!(
            k.low(Reg::virt(12)),
            Low::UNKNOWN,
            "a load, whatever its second definition"
        );
        assert_eq!(mod8(13), Some(4), "g1 + 12, stepping by 48");
        assert_eq!(mod8(14), Some(4));
        assert_eq!(mod8(15), None, "g1 stepping by 4");
        assert_eq!(tz(15), 2);
        assert_eq!(mod8(16), None, "7, 8, 9, ...");
        assert_eq!(k.low(Reg::x(10)), Low::UNKNOWN, "an argument");
        assert_eq!(k.trailing_zeros(SP), 4);
    }

    #[test]
    fn meets_keep_the_bits_both_agree_on() {
        let a = Low::new(64, 0b1100);
        assert_eq!(a.meet(Low::new(64, 0b0100)), Low::new(3, 0b100));
        assert_eq!(a.meet(Low::new(2, 0)), Low::new(2, 0));
        assert_eq!(a.meet(Low::new(64, 0b1101)), Low::UNKNOWN);
        assert_eq!(Low::exact(3).mul(Low::new(3, 4)), Low::new(3, 4));
        assert_eq!(Low::new(3, 0).mul(Low::new(2, 0)), Low::new(5, 0));
        assert_eq!(Low::exact(-1).add(Low::exact(1)).word(), Low::exact(0));
        assert_eq!(
            Low::exact(0x7fff_ffff).add(Low::exact(1)).word(),
            Low::exact(i32::MIN as i64)
        );
        assert_eq!(Low::new(3, 5).shl(2), Low::new(5, 20));
    }
}
