//! Test harness for compiled SysY programs.
//!
//! Everything needed to take RV64GC assembly (or a C file) to a judged result:
//!
//! - [`tools`]: locate `riscv64-linux-gnu-gcc` and `qemu-riscv64`;
//! - [`runtime`]: build `runtime/sylib.c` into `libsysy.a`, once per content hash;
//! - [`process`]: run a command with a timeout, capturing output and peak memory;
//! - [`exec`]: [`link`] assembly with the runtime and [`run`] it under qemu;
//! - [`judge`]: compare a run with a `.out` file the way the contest does;
//! - [`csource`]: compile a SysY file with a C compiler (prelude, flags, rewrites);
//! - [`cases`]: discover `NAME.sy` / `NAME.in` / `NAME.out` cases and the suite root;
//! - [`filetest`]: files of input, passes to run and expected output, with bless.

pub mod cases;
pub mod csource;
pub mod exec;
pub mod filetest;
pub mod judge;
pub mod process;
pub mod runtime;
pub mod tools;

pub use cases::{cases, suite_root, Case};
pub use exec::{link, run, run_with, Harness, RunOptions, RunResult, DEFAULT_STACK};
pub use judge::{expected_output, judge};
pub use runtime::{default_cache_dir, runtime_lib, Runtime};
pub use tools::{ToolError, Toolchain};
