//! Functions compiled on several threads, their texts kept in module order.
//!
//! The back end compiles each function from the module and the module's facts
//! alone ([`crate::compile_function`] reads nothing another function's compile
//! writes), so functions can be compiled at the same time, as LLVM's and rustc's
//! parallel code generation split a module into units. The output is the same
//! bytes whatever the number of threads: each result goes to its function's slot,
//! and the slots are read in order.
//!
//! Threads take the next function from a shared counter, largest first (Graham's
//! longest-processing-time-first rule), so one large function started last does
//! not leave the other threads idle at the end.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Stack of each worker thread: the driver runs the compiler on a large stack, and
/// a worker does the same work for its functions.
const WORKER_STACK: usize = 256 << 20;

/// The number of threads `jobs` asks for: `0` is one per core the process may use.
pub fn threads(jobs: usize) -> usize {
    match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// `work` applied to every item, on up to `threads` threads; the results in the
/// items' order. `size` estimates each item's work (the largest are started
/// first). With one thread, or one item, everything runs on the calling thread.
pub fn map_in_order<T, R, F>(
    items: &[T],
    threads: usize,
    size: impl Fn(&T) -> usize,
    work: F,
) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let threads = threads.min(items.len());
    if threads <= 1 {
        return items.iter().map(work).collect();
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    // Stable: items of equal size keep their order.
    order.sort_by_key(|&i| std::cmp::Reverse(size(&items[i])));
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        let worker = || loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(&i) = order.get(k) else {
                break;
            };
            let r = work(&items[i]);
            slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
        };
        let handles: Vec<_> = (1..threads)
            .map(|_| {
                std::thread::Builder::new()
                    .stack_size(WORKER_STACK)
                    .spawn_scoped(scope, worker)
                    .expect("spawning a back-end thread")
            })
            .collect();
        worker();
        for h in handles {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    slots
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every item was worked on"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_item_order_whatever_the_threads() {
        let items: Vec<u64> = (0..200).map(|i| (i * 7919) % 101).collect();
        let sequential: Vec<u64> = items.iter().map(|x| x * x + 1).collect();
        for threads in [1, 2, 3, 8] {
            let got = map_in_order(&items, threads, |&x| x as usize, |x| x * x + 1);
            assert_eq!(got, sequential, "{threads} threads");
        }
    }

    #[test]
    fn every_item_is_worked_on_once() {
        let count = AtomicUsize::new(0);
        let items: Vec<usize> = (0..57).collect();
        let got = map_in_order(
            &items,
            4,
            |_| 1,
            |&i| {
                count.fetch_add(1, Ordering::Relaxed);
                i
            },
        );
        assert_eq!(count.into_inner(), 57);
        assert_eq!(got, items);
    }

    #[test]
    fn a_panic_in_a_worker_reaches_the_caller() {
        let items: Vec<usize> = (0..8).collect();
        let caught = std::panic::catch_unwind(|| {
            map_in_order(
                &items,
                2,
                |_| 1,
                |&i| if i == 5 { panic!("item 5") } else { i },
            )
        });
        assert!(caught.is_err());
    }

    #[test]
    fn zero_jobs_is_one_thread_per_core_at_least_one() {
        assert!(threads(0) >= 1);
        assert_eq!(threads(3), 3);
    }
}
