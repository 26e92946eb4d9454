//! Source positions of machine instructions, for `-g`-style comments in the
//! assembly (`# file.sy:LINE: text`).
//!
//! The positions live beside the machine function, never in it: no stage reads or
//! maintains them, so the code is the same with and without them. Instruction
//! selection records the IR instruction's source position for every machine
//! instruction it makes; after each later stage, [`InstLocs::follow`] carries the
//! positions from the function before the stage to the function after it by
//! matching instructions:
//!
//! 1. the same instruction (moved, e.g. by scheduling or hoisting, even to another
//!    block);
//! 2. in the same block, the same instruction up to registers (register allocation
//!    rewrote it);
//! 3. in the same block, the same operation up to registers, addresses and branch
//!    targets (frame layout turned a slot into an `sp` offset; block placement
//!    inverted a branch).
//!
//! Instructions a stage makes from scratch (spill code, the prologue and epilogue,
//! fused instructions) match nothing and have no position; the emitter prints no
//! comment for them. Matching is in order, so of several equal instructions the
//! first takes the first position: good enough for comments.

use crate::mir::{Addr, Base, MBlock, MFunction, MInst, Reg, Slot};
use rustc_hash::FxHashMap;

/// The source position of every instruction of a machine function, by block and
/// index: a byte offset into the source plus one, 0 when unknown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstLocs {
    pub blocks: Vec<Vec<u32>>,
}

impl InstLocs {
    /// The position of instruction `k` of block `b` (a byte offset), if known.
    pub fn get(&self, b: usize, k: usize) -> Option<u32> {
        self.blocks.get(b)?.get(k)?.checked_sub(1)
    }

    /// The positions of `after`'s instructions, matched to those of `before`, whose
    /// positions `self` holds.
    pub fn follow(&self, before: &MFunction, after: &MFunction) -> InstLocs {
        // Every located instruction of `before`, in layout order.
        let mut olds: Vec<(usize, &MInst, u32)> = Vec::new();
        for b in &before.layout {
            let (data, b) = (&before.blocks[*b], b.index());
            for (k, i) in data.insts.iter().enumerate() {
                let loc = self.blocks.get(b).and_then(|l| l.get(k)).copied();
                if let Some(loc) = loc.filter(|&l| l != 0) {
                    olds.push((b, i, loc));
                }
            }
        }
        let mut used = vec![false; olds.len()];
        // Three keys per instruction, each a queue of the instructions with that key
        // in layout order. The queues are chains through one array and are found by
        // the key's hash (a shared hash is told apart by comparing the keys), so
        // that a function of a million instructions takes tens of megabytes here,
        // not hundreds.
        let shape = |n: usize| (olds[n].0, without_regs(olds[n].1));
        let loose = |n: usize| (olds[n].0, loosely(olds[n].1));
        let mut exact = Queues::new(olds.len());
        let mut shaped = Queues::new(olds.len());
        let mut op = Queues::new(olds.len());
        for n in (0..olds.len()).rev() {
            exact.push_front(hash(olds[n].1), n);
            shaped.push_front(hash(&shape(n)), n);
            op.push_front(hash(&loose(n)), n);
        }
        let mut out = InstLocs {
            blocks: after
                .blocks
                .values()
                .map(|d| vec![0; d.insts.len()])
                .collect(),
        };
        // Exact matches first (a moved instruction keeps its position even when an
        // earlier, rewritten one has the same shape), then the looser ones.
        for b in &after.layout {
            let (data, b) = (&after.blocks[*b], b.index());
            for (k, i) in data.insts.iter().enumerate() {
                if let Some(n) = exact.take(hash(i), &mut used, |n| olds[n].1 == i) {
                    out.blocks[b][k] = olds[n].2;
                }
            }
        }
        for b in &after.layout {
            let (data, b) = (&after.blocks[*b], b.index());
            for (k, i) in data.insts.iter().enumerate() {
                if out.blocks[b][k] != 0 {
                    continue;
                }
                let key = (b, without_regs(i));
                let n = shaped
                    .take(hash(&key), &mut used, |n| shape(n) == key)
                    .or_else(|| {
                        let key = (b, loosely(i));
                        op.take(hash(&key), &mut used, |n| loose(n) == key)
                    });
                if let Some(n) = n {
                    out.blocks[b][k] = olds[n].2;
                }
            }
        }
        out
    }
}

/// What [`InstLocs::follow`] reads of the function before a stage: its blocks and
/// layout, without the per-register tables (as big again as the code: a copy per
/// stage of a function of a million instructions is what `-g` costs).
pub fn code_copy(mf: &MFunction) -> MFunction {
    MFunction {
        blocks: mf.blocks.clone(),
        layout: mf.layout.clone(),
        ..MFunction::new(String::new(), false)
    }
}

/// A key's hash, for [`Queues`].
fn hash<K: std::hash::Hash + ?Sized>(key: &K) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(key)
}

/// FIFO queues of indices `0..n`, one per key, by the key's hash: each hash leads
/// to the first index of its chain and `next` links the rest in order. Keys with
/// the same hash share a chain; [`Queues::take`] tells them apart.
struct Queues {
    heads: FxHashMap<u64, u32>,
    next: Vec<u32>,
}

const END: u32 = u32::MAX;

impl Queues {
    fn new(n: usize) -> Queues {
        Queues {
            heads: FxHashMap::default(),
            next: vec![END; n],
        }
    }

    /// Puts `n` in front of the queue of `hash` (pushing in reverse order builds
    /// each queue in order).
    fn push_front(&mut self, hash: u64, n: usize) {
        let head = self.heads.entry(hash).or_insert(END);
        self.next[n] = *head;
        *head = n as u32;
    }

    /// The first index of the queue of `hash` that is not `used` and whose key is
    /// the one asked for (`is_key`), marked used; used indices at the front of the
    /// queue are dropped on the way, as a queue per key would drop them.
    fn take(
        &mut self,
        hash: u64,
        used: &mut [bool],
        is_key: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let head = self.heads.get_mut(&hash)?;
        while *head != END && used[*head as usize] {
            *head = self.next[*head as usize];
        }
        let mut at = *head;
        while at != END {
            let n = at as usize;
            if !used[n] && is_key(n) {
                used[n] = true;
                return Some(n);
            }
            at = self.next[n];
        }
        None
    }
}

/// `i` with every register replaced by `zero`.
fn without_regs(i: &MInst) -> MInst {
    let mut i = i.clone();
    i.map_regs(|r, _| *r = Reg::x(0));
    i
}

/// `i` without registers, memory addresses, frame slots, offsets of frame addresses
/// and branch targets, and with a branch condition standing for its inverse too:
/// what stays of it when the frame is laid out and the blocks are placed.
fn loosely(i: &MInst) -> MInst {
    let mut i = without_regs(i);
    let none = Addr::new(Base::Slot(Slot(0)), 0);
    match &mut i {
        MInst::Load { addr, .. } | MInst::Store { addr, .. } => *addr = none,
        MInst::FrameAddr { slot, off, .. } => {
            *slot = Slot(0);
            *off = 0;
        }
        MInst::Branch { cond, target, .. } => {
            *target = MBlock(0);
            let inverse = cond.inverse();
            if (inverse as u8) < (*cond as u8) {
                *cond = inverse;
            }
        }
        MInst::Jump { target } => *target = MBlock(0),
        _ => {}
    }
    i
}

/// Source text by line, to turn positions into `# file:LINE: text` comments.
pub struct SourceLines<'a> {
    name: &'a str,
    text: &'a str,
    /// Byte offset of the start of each line.
    starts: Vec<u32>,
}

impl<'a> SourceLines<'a> {
    /// The lines of `text`, the source of file `name`.
    pub fn new(name: &'a str, text: &'a str) -> SourceLines<'a> {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, c)| c == b'\n')
                .map(|(k, _)| k as u32 + 1),
        );
        SourceLines { name, text, starts }
    }

    /// The name of the file.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The 1-based line of byte offset `pos`.
    pub fn line_of(&self, pos: u32) -> u32 {
        self.starts.partition_point(|&s| s <= pos) as u32
    }

    /// The comment for line `line` (1-based): `# file:LINE: text`, the text trimmed.
    pub fn comment(&self, line: u32) -> String {
        let k = (line as usize).saturating_sub(1);
        let start = self.starts.get(k).map_or(self.text.len(), |&s| s as usize);
        let end = self
            .starts
            .get(k + 1)
            .map_or(self.text.len(), |&s| s as usize);
        let text = self.text.get(start..end).unwrap_or("").trim();
        // A control character (in a comment of the source) is written escaped: raw,
        // a carriage return would end the assembler's line and an escape sequence
        // would reach the terminal of whoever reads the assembly.
        let text: String = text
            .chars()
            .map(|c| match c {
                '\t' => "\t".to_string(),
                '\r' => "\\r".to_string(),
                c if c.is_control() => format!("\\x{:02x}", c as u32),
                c => c.to_string(),
            })
            .collect();
        if text.is_empty() {
            format!("# {}:{line}", self.name)
        } else {
            format!("# {}:{line}: {text}", self.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::{AluImmOp, MFunction, MemOp};

    #[test]
    fn lines_and_comments() {
        let s = SourceLines::new("a.sy", "int main() {\n  return 0;\n}\n");
        assert_eq!(s.line_of(0), 1);
        assert_eq!(s.line_of(12), 1);
        assert_eq!(s.line_of(13), 2);
        assert_eq!(s.line_of(15), 2);
        assert_eq!(s.comment(2), "# a.sy:2: return 0;");
        assert_eq!(s.comment(4), "# a.sy:4");
        // Control characters of a comment in the source are escaped.
        let s = SourceLines::new("b.sy", "x = 1; // \x1b[2J\r!\n");
        assert_eq!(s.comment(1), "# b.sy:1: x = 1; // \\x1b[2J\\r!");
    }

    #[test]
    fn positions_follow_moved_rewritten_and_relocated_instructions() {
        let v = |n| Reg::virt(n);
        let mut before = MFunction::new("f".into(), true);
        let b0 = before.new_block();
        before.layout.push(b0);
        let slot = Slot(3);
        before.blocks[MBlock(0)].insts = vec![
            MInst::Li { rd: v(0), imm: 1 },
            MInst::AluImm {
                op: AluImmOp::Addi,
                rd: v(1),
                rs1: v(0),
                imm: 2,
            },
            MInst::Load {
                op: MemOp::W,
                rd: v(2),
                addr: Addr::new(Base::Slot(slot), 4),
            },
        ];
        let locs = InstLocs {
            blocks: vec![vec![11, 22, 33]],
        };
        let mut after = before.clone();
        after.blocks[MBlock(0)].insts = vec![
            // A new instruction, then the others reordered, allocated, relocated.
            MInst::Li {
                rd: Reg::x(5),
                imm: 9,
            },
            MInst::Load {
                op: MemOp::W,
                rd: Reg::x(6),
                addr: Addr::new(Base::Reg(Reg::x(2)), 20),
            },
            MInst::Li {
                rd: Reg::x(10),
                imm: 1,
            },
            MInst::AluImm {
                op: AluImmOp::Addi,
                rd: Reg::x(10),
                rs1: Reg::x(10),
                imm: 2,
            },
        ];
        let got = locs.follow(&before, &after);
        assert_eq!(got.blocks, vec![vec![0, 33, 11, 22]]);
        assert_eq!(got.get(0, 1), Some(32));
        assert_eq!(got.get(0, 0), None);
    }
}
