//! Loop transformations: canonical forms (simplify, rotate), invariant code motion,
//! induction variables and strength reduction, closed forms and exit values,
//! deletion, unrolling, peeling, splitting, unswitching, unroll-and-jam and
//! software pipelining (LLVM's loop passes).

pub mod closedform;
pub mod cunroll;
pub mod exitsink;
pub mod finalvalue;
pub mod first_exit;
pub mod hoistloops;
pub mod idemloop;
pub mod ifconvert;
pub mod indexsplit;
pub mod invselect;
pub mod lastiter;
pub mod lftr;
pub mod licm;
pub mod loopdelete;
pub mod loopidiom;
pub mod looppeel;
pub mod looprotate;
pub mod loopsimplify;
pub mod loopsplit;
pub mod mve;
pub mod peelinv;
pub mod polyiv;
pub mod postinc;
pub mod pow2div;
pub mod ptrwalk;
pub mod rtunroll;
pub mod strength;
pub mod swp;
pub mod trivial_unswitch;
pub mod unroll;
pub mod unrolljam;
pub mod unswitch;
