//! Scalar transformations: constant propagation, dead code, local algebra, the
//! control-flow graph, reassociation and tree-height reduction, branches turned
//! into arithmetic, tail recursion (LLVM's `Transforms/Scalar`).

pub mod balance;
pub mod codehoist;
pub mod codesink;
pub mod constoffset;
pub mod dce;
pub mod divrem;
pub mod fabs;
pub mod foldbranch;
pub mod instcombine;
pub mod jumpthread;
pub mod linearize;
pub mod mem2reg;
pub mod phiopt;
pub mod rangechain;
pub mod reassoc;
pub mod sccp;
pub mod simplifycfg;
pub mod sink;
pub mod tailrec;
