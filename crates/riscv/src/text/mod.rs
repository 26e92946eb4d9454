//! The text form of the machine IR (specified in `docs/mir-text.md`): a printer and a
//! parser such that `parse(print(f)) == f` for a function at any point of the back
//! end, so a stage can be run on a function read from a file (the filetests) and
//! `--print-after` shows exactly what the next stage gets.
//!
//! Instructions read as RV64 assembly over ABI register names and virtual registers
//! `%vN`; the rest of an [`MFunction`](crate::mir::MFunction) (register classes,
//! rematerialisation, frame slots, outgoing argument area, blocks outside the
//! layout) is declared in the function's header.

pub mod parse;
pub mod print;

pub use parse::{parse_function, parse_functions};
pub use print::{print_function, print_inst};

use std::fmt;

/// A syntax or consistency error in machine IR text, at a 1-based line.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseError {
    pub line: u32,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::{MBlock, Reg, RegClass};

    /// Every instruction form and declaration.
    const SAMPLE: &str = "\
function f.a0 global
  outgoing 16
  slot0 local 40 align 4
  slot1 spill
  slot2 incoming 1
  int %v0..%v3 %v6
  float %v4..%v5
  remat %v0: li %v0, -7
  remat %v1: lla %v1, g2+8
  blocks 6
bb0:
  li %v0, -7
  lla %v1, g2+8
  frameaddr %v2, slot0-4
  addw %v3, %v0, %v1
  addi %v3, %v3, -1
  fmv.w.x %v4, zero
  fcvt.s.w %v5, %v3
  fadd.s %v4, %v4, %v5
  fsgnjn.s %v5, %v4, %v4
  flt.s %v6, %v4, %v5
  fcvt.w.s %v6, %v5
  lw %v3, 8(slot2)
  sd %v3, -16(%v2)
  flw %v4, 0(slot1)
  mv a0, %v3
  mv fa0, %v4
  call putint(a0, fa0)
  bltu %v6, zero, bb3
  j bb1
bb3:
  tail f(a0)
bb1:
  ret a0
bb4 unplaced:
  j bb1
end
";

    #[test]
    fn sample_round_trips() {
        let mf = parse_function(SAMPLE).unwrap();
        assert_eq!(print_function(&mf), SAMPLE);
        assert_eq!(mf.blocks.len(), 6);
        assert_eq!(mf.layout, vec![MBlock(0), MBlock(3), MBlock(1)]);
        assert_eq!(mf.num_vregs(), 7);
        assert_eq!(mf.class_of(Reg::virt(5)), RegClass::Float);
        assert!(mf.vreg_remat[1].is_some() && mf.vreg_remat[2].is_none());
        assert_eq!(parse_function(&print_function(&mf)).unwrap(), mf);
    }

    #[test]
    fn comments_and_blank_lines_are_ignored() {
        let text = "; a comment\n\nfunction g local ; trailing\nbb0:\n  ret\nend\n";
        let mf = parse_function(text).unwrap();
        assert_eq!(print_function(&mf), "function g local\nbb0:\n  ret\nend\n");
    }

    #[test]
    fn errors_name_the_line() {
        for (text, line, what) in [
            (
                "function g local\nbb0:\n  addw a0, a1\nend\n",
                3,
                "expected `,`",
            ),
            (
                "function g local\nbb0:\n  frob a0\nend\n",
                3,
                "unknown instruction",
            ),
            (
                "function g local\nbb0:\n  mv %v0, a0\nend\n",
                3,
                "no declared class",
            ),
            (
                "function g local\n  int %v1\nbb0:\n  ret\nend\n",
                2,
                "no class declared for %v0",
            ),
            ("function g local\nbb0:\n  ret\n", 3, "no `end`"),
            ("function g local\nbb0:\nbb0:\nend\n", 3, "defined twice"),
            ("function g\n", 1, "expected a name"),
            (
                "function g local\nbb0:\n  lw a0, 0(slot0)\nend\n",
                3,
                "slot0 is not declared",
            ),
            (
                "function g local\n  slot0 spill\nbb0:\n  frameaddr a0, slot1+0\nend\n",
                4,
                "slot1 is not",
            ),
        ] {
            let e = parse_function(text).unwrap_err();
            assert!(
                e.line == line && e.message.contains(what),
                "{text:?}: {e} (wanted line {line}: {what})"
            );
        }
    }
}

#[cfg(test)]
mod doc_tests {
    use super::*;

    /// The code blocks of docs/mir-text.md that hold functions parse, print back to
    /// an equal function and verify.
    #[test]
    fn the_documented_examples_parse() {
        let doc = include_str!("../../../../docs/mir-text.md");
        let blocks: Vec<&str> = doc.split("```").skip(1).step_by(2).collect();
        let mut seen = 0;
        for b in blocks {
            let input = b.split("; output:").next().unwrap();
            if !input.contains("function ") {
                continue;
            }
            let mf = parse_function(input).unwrap_or_else(|e| panic!("{e}\n{input}"));
            assert_eq!(parse_function(&print_function(&mf)).unwrap(), mf);
            crate::verify::verify(&mf, crate::verify::Stage::Virtual).unwrap();
            seen += 1;
        }
        assert_eq!(seen, 2);
    }
}
