//! Work on the functions of a module spread over several threads, with results
//! that do not depend on how many.
//!
//! The back end compiles each function from the module alone, and the optimiser's
//! function passes read only the function they transform, so functions can be
//! worked on at the same time, as LLVM's and rustc's parallel code generation split
//! a module into units. The output is the same bytes whatever the number of
//! threads: each item is worked on by one thread, by the same code as on one, and
//! results are read back in the items' order.
//!
//! Threads take the next item from a shared queue, largest first (Graham's
//! longest-processing-time-first rule), so one large item started last does not
//! leave the other threads idle at the end.

use std::sync::Mutex;

/// The least work (in the units of `size`) that the items other than the largest
/// must add up to for a second thread to pay: starting one costs tens of
/// microseconds, about what the optimiser or the back end spends on a few hundred
/// instructions.
pub const MIN_SHARED_WORK: usize = 2000;

/// Stack of each worker thread: the driver runs the compiler on a large stack, and
/// a worker does the same work for its items.
const WORKER_STACK: usize = 256 << 20;

/// The number of threads to work on `items` with, as `jobs` asks: that many, or
/// for `0`, one per core the process may use, but one when the items besides the
/// largest add up to less than [`MIN_SHARED_WORK`] (by `size`).
pub fn threads_for<T>(items: &[T], jobs: usize, size: &impl Fn(&T) -> usize) -> usize {
    let threads = match jobs {
        0 => {
            let sizes = || items.iter().map(size);
            let shared = sizes().sum::<usize>() - sizes().max().unwrap_or(0);
            if shared < MIN_SHARED_WORK {
                1
            } else {
                std::thread::available_parallelism().map_or(1, |n| n.get())
            }
        }
        n => n,
    };
    threads.min(items.len())
}

/// Applies `work` to every item, on up to `jobs` threads (the calling thread
/// among them; `0`: one per core, when the work is worth it, see
/// [`MIN_SHARED_WORK`]); `size` estimates each item's work, and the largest are
/// started first. On one thread the items are worked on in order on the calling
/// thread. A panic in `work` reaches the caller.
pub fn for_each_mut<T, F>(items: &mut [T], jobs: usize, size: impl Fn(&T) -> usize, work: F)
where
    T: Send,
    F: Fn(&mut T) + Sync,
{
    let threads = threads_for(items, jobs, &size);
    if threads <= 1 {
        items.iter_mut().for_each(work);
        return;
    }
    let mut queue: Vec<&mut T> = items.iter_mut().collect();
    // Smallest first, so that popping takes the largest; stable, so items of
    // equal size are taken in order.
    queue.sort_by_key(|t| std::cmp::Reverse(size(t)));
    queue.reverse();
    let queue = Mutex::new(queue);
    let worker = || loop {
        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match next {
            Some(t) => work(t),
            None => break,
        }
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads)
            .map(|_| {
                std::thread::Builder::new()
                    .stack_size(WORKER_STACK)
                    .spawn_scoped(scope, worker)
                    .expect("spawning a worker thread")
            })
            .collect();
        worker();
        for h in handles {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// `work` applied to every item as [`for_each_mut`] does; the results in the
/// items' order.
pub fn map_in_order<T, R, F>(
    items: &[T],
    jobs: usize,
    size: impl Fn(&T) -> usize,
    work: F,
) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let mut slots: Vec<(&T, Option<R>)> = items.iter().map(|t| (t, None)).collect();
    for_each_mut(
        &mut slots,
        jobs,
        |(t, _)| size(t),
        |(t, r)| *r = Some(work(t)),
    );
    slots
        .into_iter()
        .map(|(_, r)| r.expect("every item was worked on"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

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
    fn each_item_is_changed_by_one_thread_once() {
        let mut items: Vec<(usize, u32)> = (0..300).map(|i| (i, 0)).collect();
        for_each_mut(
            &mut items,
            3,
            |&(i, _)| i % 17,
            |(i, n)| *n += 1 + (*i as u32 % 5),
        );
        for (i, n) in items {
            assert_eq!(n, 1 + (i as u32 % 5), "item {i}");
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
    fn zero_jobs_is_one_thread_unless_the_work_besides_the_largest_item_is_worth_more() {
        let one_large = [
            MIN_SHARED_WORK * 10,
            MIN_SHARED_WORK / 2 - 1,
            MIN_SHARED_WORK / 2,
        ];
        assert_eq!(threads_for(&one_large, 0, &|&s| s), 1);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let two = [MIN_SHARED_WORK, MIN_SHARED_WORK];
        assert_eq!(threads_for(&two, 0, &|&s| s), cores.min(2));
        // Asked for, that many, at most one per item.
        assert_eq!(threads_for(&one_large, 2, &|&s| s), 2);
        assert_eq!(threads_for(&one_large, 8, &|&s| s), 3);
    }
}
