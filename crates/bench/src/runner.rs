//! Running all cases on a fixed number of worker threads with a progress bar.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use harness::Case;
use indicatif::{ProgressBar, ProgressStyle};

use crate::pipeline::{run_case, Context};
use crate::results::{CaseResult, Status};

/// Runs `cases` on `jobs` workers; results come back in the order of `cases`.
pub fn run_all(ctx: &Context, cases: &[Case], jobs: usize, quiet: bool) -> Vec<CaseResult> {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(cases.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<CaseResult>>> = Mutex::new(vec![None; cases.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                bar.set_message(case.name.clone());
                let result = run_case(ctx, case);
                if result.sysyc.status != Status::Ok || result.gcc.status != Status::Ok {
                    bar.println(format!(
                        "{}: sysyc {}, gcc {}",
                        case.name,
                        result.sysyc.status.label(),
                        result.gcc.status.label()
                    ));
                }
                slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    slots
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}
