//! Constant offsets separated from addresses: `gep base, x + c, s`, used only to load
//! or store, becomes `gep (gep base, x, s), c, s`. The inner address is then shared by
//! every access to `base[x + c]` for any small `c` (value numbering merges the copies),
//! and the back end folds `c * s` into the load or store's immediate offset: four
//! loads of `in[k]`, `in[k + 1]`, `in[k + 2]`, `in[k + 3]` take one address
//! computation instead of four. LLVM's `SeparateConstOffsetFromGEP` does the same for
//! the same reason.
//!
//! Only indices used by nothing but addresses are split (they die); an `x + c` that
//! is also the next value of a variable would keep `x` alive beside it for nothing.
//!
//! It is exact whenever the program is: `x + c` wraps only when `x` is within `|c|`
//! of the end of `i32`, and then both `base + sext(x + c) * s` (wrapped) and
//! `base + (sext(x) + c) * s` lie gigabytes away from `base`, outside any object, so
//! the access was out of bounds, which never happens (`SYSY.md`). Hence only geps
//! whose every use is the address of an access, and `|c| <= 2^16`.
//!
//! Inside counted loops strength reduction ([`crate::passes::loops::strength`]) already turns such
//! addresses into offsets from a pointer; this pass runs after it, for the accesses
//! it leaves (straight-line code, fully unrolled loops, loops without a counter).

use crate::analysis::FunctionAnalyses;
use crate::analysis::Preserved;
use crate::pipeline::FunctionTransform;
use ir::{BinOp, Function, Inst, InstKind, Type};

/// The constant-offset separation pass.
pub struct ConstOffset;

impl FunctionTransform for ConstOffset {
    const NAME: &'static str = "constoffset";
    const DESCRIPTION: &'static str =
        "split constant offsets out of array indices, for shared addresses and immediate offsets";
    /// Rewrites instructions only: no block or edge changes.
    const PRESERVES: Preserved = Preserved::CFG.with_other_functions();
    fn transform(&self, f: &mut Function, _fa: &mut FunctionAnalyses) -> bool {
        run(f) > 0
    }
}

/// Splits the geps of `f` that qualify; returns how many.
pub fn run(f: &mut Function) -> usize {
    let geps: Vec<Inst> = f
        .layout
        .blocks()
        .flat_map(|b| f.layout.block_insts(b))
        .filter(|&i| matches!(f.kind(i), InstKind::Gep { .. }))
        .collect();
    let mut split = 0;
    for g in geps {
        let InstKind::Gep {
            base,
            index,
            stride,
        } = *f.kind(g)
        else {
            continue;
        };
        let Some(InstKind::Binary {
            op: BinOp::Add,
            args: [x, c],
        }) = f.def_inst(index).map(|i| f.kind(i).clone())
        else {
            continue;
        };
        let Some(c) = f.as_iconst(c) else {
            continue;
        };
        // The index must die with the split: when `x + c` is needed anyway (the next
        // value of a variable), splitting only keeps `x` alive beside it.
        let index_only_addresses = f
            .users(index)
            .iter()
            .all(|&u| matches!(f.kind(u), InstKind::Gep { .. }));
        if c == 0
            || c.unsigned_abs() > 1 << 16
            || f.as_iconst(x).is_some()
            || !index_only_addresses
            || !only_accessed(f, g)
        {
            continue;
        }
        let inner = f.insert_inst_before(
            g,
            InstKind::Gep {
                base,
                index: x,
                stride,
            },
            Type::Ptr,
        );
        let inner = f.inst_result(inner).expect("gep has a result");
        let c = f.iconst(c);
        f.replace_kind(
            g,
            InstKind::Gep {
                base: inner,
                index: c,
                stride,
            },
        );
        split += 1;
    }
    split
}

/// Whether every use of the gep `g` is the address of a load or store.
fn only_accessed(f: &Function, g: Inst) -> bool {
    let r = f.inst_result(g).expect("gep has a result");
    let users = f.users(r);
    !users.is_empty()
        && users
            .iter()
            .all(|&u| crate::passes::accesses_through(f, u, r))
}

#[cfg(test)]
mod tests {
    use crate::passes::testutil::{run, same_behaviour};

    /// Four loads of `a[k + 0..3]` and a store to `a[k - 1]`: after the split and value
    /// numbering, one `gep @a, %k` feeds them all at constant offsets.
    const WINDOW: &str = r#"
declare @getint() -> i32
declare @putint(i32) -> void
global @a: [i32; 16] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = gep @a, %0, 4
  %2 = load i32, %1
  %3 = add %0, 1
  %4 = gep @a, %3, 4
  %5 = load i32, %4
  %6 = add %0, 2
  %7 = gep @a, %6, 4
  %8 = load i32, %7
  %9 = add %0, 3
  %10 = gep @a, %9, 4
  %11 = load i32, %10
  %12 = add %2, %5
  %13 = add %8, %11
  %14 = add %12, %13
  %15 = add %0, -1
  %16 = gep @a, %15, 4
  store %14, %16
  %17 = load i32, %16
  call @putint(%17)
  %18 = add %0, 5
  %19 = gep @a, %18, 4
  %20 = load i32, %19
  call @putint(%20)
  call @putint(%18)
  ret 0
}
"#;

    #[test]
    fn accesses_share_one_address() {
        for k in ["1", "5", "10"] {
            let out = same_behaviour(WINDOW, &["constoffset", "gvn", "dce"], k);
            // (`a[k + 5]` keeps its own: `k + 5` is printed too.)
            assert_eq!(out.matches("gep @a, %").count(), 2, "{out}");
            for off in [", 1, 4", ", 2, 4", ", 3, 4", ", -1, 4"] {
                assert!(out.contains(off), "{off}\n{out}");
            }
        }
    }

    /// Left alone: an address used as a value (passed to a call), and a far offset.
    #[test]
    fn addresses_used_otherwise_or_far_offsets_stay() {
        let src = r#"
declare @getint() -> i32
declare @putint(i32) -> void
declare @putarray(i32, ptr) -> void
global @a: [i32; 16] = zeroinit

func @main() -> i32 {
bb0:
  %0 = call @getint()
  %1 = add %0, 1
  %2 = gep @a, %1, 4
  call @putarray(2, %2)
  %3 = add %0, 70000
  %4 = gep @a, %3, 4
  %5 = load i32, %4
  call @putint(%5)
  ret 0
}
"#;
        let out = run(src, &["constoffset"]);
        assert!(
            out.contains("gep @a, %1, 4") && out.contains("gep @a, %3, 4"),
            "{out}"
        );
    }
}
