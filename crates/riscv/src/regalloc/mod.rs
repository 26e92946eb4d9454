//! Register allocation: liveness, live intervals, linear scan, then rewriting the
//! code with physical registers and spill code; optionally, the allocation checker
//! over the result.

pub mod checker;
pub mod linear_scan;
pub mod spill;

use crate::liveness::{build_intervals, compute_liveness, Liveness};
use crate::loops::loop_depths;
use crate::mir::MFunction;
use crate::BackendError;

/// Replaces every virtual register of `mf` by a physical register or spill code.
pub fn allocate(mf: &mut MFunction) -> Result<(), BackendError> {
    let live = compute_liveness(mf);
    allocate_with(mf, &live)
}

/// [`allocate`] with the blocks' liveness already known (it does not change when
/// instructions only move within their blocks, as the scheduler moves them).
pub fn allocate_with(mf: &mut MFunction, live: &Liveness) -> Result<(), BackendError> {
    allocate_checked(mf, live, false)
}

/// [`allocate_with`], then, when `check`, the allocation [`checker`] over the result
/// (against a copy of the function taken before the rewrite).
pub fn allocate_checked(
    mf: &mut MFunction,
    live: &Liveness,
    check: bool,
) -> Result<(), BackendError> {
    let depths = loop_depths(mf);
    let intervals = build_intervals(mf, live);
    let alloc = linear_scan::linear_scan(mf, &intervals, &depths);
    let before = check.then(|| mf.clone());
    let provenance = spill::rewrite(mf, &alloc)?;
    if let Some(before) = before {
        checker::check(&before, mf, &provenance)
            .map_err(|e| BackendError::Allocation(Box::new(e)))?;
    }
    Ok(())
}
