//! Differential testing of sysyc with random programs.
//!
//! - [`gen`]: a generator of random, valid, well-defined SysY programs, deterministic
//!   from a seed ([`gen::generate`]);
//! - [`ast`], [`print`]: the generated programs and their SysY text;
//! - [`bounds`], [`validate`]: the rules that keep a program well defined (in bounds,
//!   no division by zero, finite floats, fixed evaluation order), checked on the tree;
//! - [`oracle`]: running a program through sysyc (interpreter and RISC-V + qemu, at
//!   each `-O` level) and through the reference, `riscv64-linux-gnu-gcc -O0 -fwrapv`
//!   under qemu, and comparing;
//! - [`reduce`], [`visit`]: shrinking a program that shows a mismatch while the
//!   mismatch persists;
//! - [`campaign`]: the loop over seeds the `difftest` binary runs, saving and reducing
//!   each mismatch;
//! - [`hunt`]: the performance mode (`difftest --hunt`): programs where sysyc's code
//!   is slower than gcc's and clang's, reduced while the gap persists.

pub mod ast;
pub mod bounds;
pub mod campaign;
pub mod gen;
pub mod hunt;
pub mod oracle;
pub mod print;
pub mod reduce;
pub mod validate;
pub mod visit;
