//! Work on a list of items done on several threads, with the results handed on in
//! the list's order as soon as each is ready: the readers' way of decoding blocks in
//! parallel for a consumer that needs them in order.
//!
//! Each worker claims the next item and files its result in a ring; the calling thread
//! takes results from the ring's front, and works on the next item itself while the
//! front one is not ready. No worker runs more than `ahead` items past
//! the consumer, which bounds the memory of results in waiting, and no batch boundary
//! ever makes the workers wait for each other or the consumer wait for a whole batch.

use std::any::Any;
use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, MutexGuard};

struct Ring<T> {
    /// Results of items `base..claimed`, in order; `None` while being worked on.
    slots: VecDeque<Option<T>>,
    /// The next item to hand on.
    base: usize,
    /// The next item to claim.
    claimed: usize,
    /// Set when the consumer stops early (or a worker panicked): workers quit.
    stop: bool,
    panic: Option<Box<dyn Any + Send>>,
}

struct Shared<T> {
    ring: Mutex<Ring<T>>,
    changed: Condvar,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, Ring<T>> {
        // A panic while the lock is held is carried to the consumer by `panic`; the
        // ring's fields stay consistent at every unlock, so poisoning says nothing.
        self.ring.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, g: MutexGuard<'a, Ring<T>>) -> MutexGuard<'a, Ring<T>> {
        self.changed.wait(g).unwrap_or_else(|p| p.into_inner())
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }
}

/// Stops the workers when the consumer leaves, by returning, by an error or by a
/// panic, so that the scope's join never waits on a worker waiting for room.
struct StopOnDrop<'a, T>(&'a Shared<T>);

impl<T> Drop for StopOnDrop<'_, T> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Runs `work` on every item of `items` on `threads` threads (at least one) and gives
/// `out` each result with its index, in order. An error from `out` stops the work and
/// is returned; a panic in `work` reaches the caller.
///
/// The calling thread, instead of waiting for the next result, claims the next item
/// and works on it itself, so its core is never idle while the workers fall behind: it
/// counts as one more worker whenever `out` leaves it time.
pub(crate) fn for_each_in_order<I, T, E, W, O>(
    items: &[I],
    threads: usize,
    ahead: usize,
    work: W,
    mut out: O,
) -> Result<(), E>
where
    I: Sync,
    T: Send,
    W: Fn(usize, &I) -> T + Sync,
    O: FnMut(usize, T) -> Result<(), E>,
{
    let ahead = ahead.max(1);
    let shared = Shared {
        ring: Mutex::new(Ring { slots: VecDeque::new(), base: 0, claimed: 0, stop: false, panic: None }),
        changed: Condvar::new(),
    };
    let worker = || loop {
        let i = {
            let mut g = shared.lock();
            loop {
                if g.stop || g.claimed >= items.len() {
                    return;
                }
                if g.claimed < g.base + ahead {
                    g.claimed += 1;
                    g.slots.push_back(None);
                    break g.claimed - 1;
                }
                g = shared.wait(g);
            }
        };
        let result = catch_unwind(AssertUnwindSafe(|| work(i, &items[i])));
        let mut g = shared.lock();
        match result {
            Ok(t) => {
                let at = i - g.base;
                g.slots[at] = Some(t);
            }
            Err(p) => {
                g.panic = Some(p);
                g.stop = true;
            }
        }
        drop(g);
        shared.changed.notify_all();
    };
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(worker);
        }
        let _stop = StopOnDrop(&shared);
        for i in 0..items.len() {
            let t = {
                let mut g = shared.lock();
                loop {
                    if let Some(p) = g.panic.take() {
                        drop(g);
                        resume_unwind(p);
                    }
                    if let Some(Some(_)) = g.slots.front() {
                        let t = g.slots.pop_front().flatten().expect("the front result is there");
                        g.base += 1;
                        break t;
                    }
                    if g.claimed < items.len() && g.claimed < g.base + ahead {
                        // A panic here unwinds past `_stop`, which stops the workers.
                        let j = g.claimed;
                        g.claimed += 1;
                        g.slots.push_back(None);
                        drop(g);
                        let t = work(j, &items[j]);
                        g = shared.lock();
                        let at = j - g.base;
                        g.slots[at] = Some(t);
                        continue;
                    }
                    g = shared.wait(g);
                }
            };
            // Room for one more item ahead.
            shared.changed.notify_all();
            out(i, t)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn results_arrive_in_order_whatever_the_threads_and_room() {
        let items: Vec<u64> = (0..500).collect();
        for threads in [1, 2, 3, 8] {
            for ahead in [1, 2, 7, 64] {
                let mut got = Vec::new();
                let r: Result<(), ()> = for_each_in_order(
                    &items,
                    threads,
                    ahead,
                    |i, &x| {
                        // Uneven work, so that later items often finish first.
                        if i % 7 == 0 {
                            std::thread::yield_now();
                        }
                        x * x
                    },
                    |i, t| {
                        got.push((i, t));
                        Ok(())
                    },
                );
                assert!(r.is_ok());
                let want: Vec<(usize, u64)> = items.iter().map(|&x| (x as usize, x * x)).collect();
                assert_eq!(got, want, "{threads} threads, {ahead} ahead");
            }
        }
    }

    #[test]
    fn no_worker_runs_further_ahead_than_allowed() {
        let items = vec![(); 200];
        let handed = AtomicUsize::new(0);
        let r: Result<(), ()> = for_each_in_order(
            &items,
            4,
            5,
            |i, _| {
                // One result may be out of the ring but not yet handed on.
                let h = handed.load(Ordering::SeqCst);
                assert!(i < h + 1 + 5, "item {i} started with only {h} handed on");
            },
            |_, ()| {
                handed.fetch_add(1, Ordering::SeqCst);
                Ok(())
            },
        );
        assert!(r.is_ok());
        assert_eq!(handed.load(Ordering::SeqCst), 200);
    }

    #[test]
    fn an_error_from_the_consumer_stops_the_work() {
        let items = vec![(); 10_000];
        let worked = AtomicUsize::new(0);
        let r = for_each_in_order(
            &items,
            3,
            8,
            |_, _| {
                worked.fetch_add(1, Ordering::SeqCst);
            },
            |i, ()| if i == 10 { Err(i) } else { Ok(()) },
        );
        assert_eq!(r, Err(10));
        // At most the room ahead (and the threads' claims) past the failing item.
        assert!(worked.load(Ordering::SeqCst) <= 11 + 8, "{} items worked", worked.load(Ordering::SeqCst));
    }

    #[test]
    fn a_panic_in_the_work_reaches_the_caller_without_a_hang() {
        let items: Vec<usize> = (0..1000).collect();
        let r = catch_unwind(|| {
            let _: Result<(), ()> = for_each_in_order(
                &items,
                2,
                4,
                |_, &x| {
                    if x == 300 {
                        panic!("item 300");
                    }
                },
                |_, ()| Ok(()),
            );
        });
        let p = r.expect_err("the panic is carried");
        assert_eq!(p.downcast_ref::<&str>(), Some(&"item 300"));
    }

    #[test]
    fn a_helping_consumer_works_on_while_the_worker_is_stalled() {
        // The worker holds its first item until the consumer has done ten items of its
        // own (or ten seconds pass, so that a consumer that does not help fails rather
        // than hangs).
        let items: Vec<usize> = (0..100).collect();
        let consumer = std::thread::current().id();
        let consumer_did = AtomicUsize::new(0);
        let stalled = AtomicUsize::new(0);
        let released_by_consumer = AtomicUsize::new(0);
        let mut got = Vec::new();
        let r: Result<(), ()> = for_each_in_order(
            &items,
            1,
            100,
            |_, &x| {
                if std::thread::current().id() == consumer {
                    consumer_did.fetch_add(1, Ordering::SeqCst);
                } else if stalled.fetch_add(1, Ordering::SeqCst) == 0 {
                    let start = std::time::Instant::now();
                    while consumer_did.load(Ordering::SeqCst) < 10 && start.elapsed().as_secs() < 10 {
                        std::thread::yield_now();
                    }
                    released_by_consumer.store(consumer_did.load(Ordering::SeqCst), Ordering::SeqCst);
                }
                x + 1
            },
            |i, t| {
                got.push((i, t));
                Ok(())
            },
        );
        assert!(r.is_ok());
        assert_eq!(got, items.iter().map(|&x| (x, x + 1)).collect::<Vec<_>>());
        // The consumer may have taken every item before the worker started.
        assert!(consumer_did.load(Ordering::SeqCst) >= 10, "the consumer did not help");
        if stalled.load(Ordering::SeqCst) > 0 {
            assert!(released_by_consumer.load(Ordering::SeqCst) >= 10, "the consumer waited");
        }
    }

    #[test]
    fn a_panic_in_the_consumers_own_work_reaches_the_caller_without_a_hang() {
        // The worker is slow, so the consumer takes items itself, and the first one
        // it takes panics.
        let items: Vec<usize> = (0..1000).collect();
        let consumer = std::thread::current().id();
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _: Result<(), ()> = for_each_in_order(
                &items,
                1,
                4,
                |_, _| {
                    if std::thread::current().id() == consumer {
                        panic!("the consumer's item");
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                },
                |_, ()| Ok(()),
            );
        }));
        let p = r.expect_err("the consumer's panic is carried");
        assert_eq!(p.downcast_ref::<&str>(), Some(&"the consumer's item"));
    }

    #[test]
    fn a_panic_in_the_consumer_does_not_leave_workers_waiting() {
        let items = vec![(); 1000];
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _: Result<(), ()> = for_each_in_order(
                &items,
                2,
                3,
                |_, _| {},
                |i, ()| {
                    assert!(i != 5, "consumer gives up");
                    Ok(())
                },
            );
        }));
        assert!(r.is_err());
    }

    #[test]
    fn no_items_no_work() {
        let items: Vec<u8> = Vec::new();
        let r: Result<(), ()> =
            for_each_in_order(&items, 2, 4, |_, _| unreachable!(), |_, ()| unreachable!());
        assert!(r.is_ok());
    }
}
