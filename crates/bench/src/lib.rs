//! The bench's library part: what other crates reuse. The generated programs of
//! `bench scaling` (tests), and measuring a case: compiling it with sysyc, gcc and
//! clang and counting cycles under qemu (`difftest --hunt`, the missed-optimisation
//! hunter).

pub mod compile;
pub mod generated;
pub mod pipeline;
pub mod plugin;
pub mod results;
pub mod runner;
pub mod stats;
pub mod symbols;
