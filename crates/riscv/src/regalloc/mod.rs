//! Register allocation: liveness, live intervals, linear scan, spill slots shared
//! by values that are not live at once, then rewriting the code with physical
//! registers and spill code; optionally, the allocation checker over the result.

pub mod checker;
pub mod linear_scan;
pub mod slot_coloring;
pub mod spill;
pub mod split;

use crate::liveness::{build_intervals, compute_liveness, Liveness};
use crate::loops::loop_depths;
use crate::mir::{MFunction, SlotKind};
use crate::BackendError;

/// Replaces every virtual register of `mf` by a physical register or spill code.
pub fn allocate(mf: &mut MFunction) -> Result<(), BackendError> {
    let live = compute_liveness(mf);
    allocate_checked(mf, live, false)
}

/// One linear-scan round over `mf` with its block liveness `live`.
fn scan(mf: &MFunction, live: &Liveness) -> linear_scan::Allocation {
    let depths = loop_depths(mf);
    let intervals = build_intervals(mf, live);
    linear_scan::linear_scan(mf, &intervals, &depths)
}

/// [`allocate`] with the blocks' liveness already known (it does not change when
/// instructions only move within their blocks, as the scheduler moves them), then,
/// when `check`, the allocation [`checker`] over the result (against a copy of the
/// function taken before the rewrite).
pub fn allocate_checked(
    mf: &mut MFunction,
    live: Liveness,
    check: bool,
) -> Result<(), BackendError> {
    let first = scan(mf, &live);
    // Values spilled over a loop that uses them get a copy of their own there
    // (`split`) and the function is allocated again; copies that found no
    // register are undone, and the result allocated a third time (when all are
    // undone, the function is the first round's again, and so is its allocation).
    let splits = split::split_around_loops(mf, &first.spilled, &live);
    drop(live);
    let alloc = if splits.is_empty() {
        first
    } else {
        let second = scan(mf, &compute_liveness(mf));
        let total = splits.len();
        let failed: Vec<split::Split> = splits
            .into_iter()
            .filter(|s| second.spilled[s.new.vindex()])
            .collect();
        split::undo(mf, &failed);
        if failed.is_empty() {
            second
        } else if failed.len() == total {
            first.grown_to(mf.num_vregs())
        } else {
            scan(mf, &compute_liveness(mf))
        }
    };
    let before = check.then(|| mf.clone());
    let needs = spill::needs_slot(mf, &alloc);
    let slots = if needs.iter().filter(|&&n| n).count() > 1 {
        let iv = build_intervals(mf, &compute_liveness(mf));
        slot_coloring::assign_spill_slots(mf, &needs, &iv)
    } else {
        needs
            .iter()
            .map(|&n| n.then(|| mf.new_slot(SlotKind::Spill)))
            .collect()
    };
    let provenance = spill::rewrite(mf, &alloc, &slots)?;
    if let Some(before) = before {
        checker::check(&before, mf, &provenance)
            .map_err(|e| BackendError::Allocation(Box::new(e)))?;
    }
    Ok(())
}
