//! The bench's library part: what other crates' tests reuse (the generated
//! programs of `bench scaling`).

pub mod generated;
