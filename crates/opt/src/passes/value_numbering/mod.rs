//! Redundancy elimination by value numbering: hash-based and complete GVN,
//! affine relations, partial redundancy elimination, facts from branch conditions
//! and value ranges, and computations common to every incoming edge.

pub mod affine;
pub mod cgvn;
pub mod condprop;
pub mod gvn;
pub mod mergeargs;
pub mod pre;
pub mod vrp;
