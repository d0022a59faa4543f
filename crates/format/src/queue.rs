//! A bounded queue between one producer and one consumer that wakes the producer only
//! when the queue has half emptied. A consumer slower than its producer (a fold behind
//! the decoding) otherwise wakes it at every item it takes from a full queue, and on a
//! virtual machine each wake-up costs tens of microseconds of the consumer's time.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

struct State<T> {
    items: VecDeque<T>,
    /// The producer waits for room, the consumer for an item.
    producer_waits: bool,
    consumer_waits: bool,
    /// Either side has gone.
    sender_gone: bool,
    receiver_gone: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    room: Condvar,
    item: Condvar,
    depth: usize,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The producer's end.
pub struct Sender<T>(Arc<Shared<T>>);

/// The consumer's end.
pub struct Receiver<T>(Arc<Shared<T>>);

/// A queue of at most `depth` items (at least 1).
pub fn bounded<T>(depth: usize) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: VecDeque::new(),
            producer_waits: false,
            consumer_waits: false,
            sender_gone: false,
            receiver_gone: false,
        }),
        room: Condvar::new(),
        item: Condvar::new(),
        depth: depth.max(1),
    });
    (Sender(shared.clone()), Receiver(shared))
}

impl<T> Sender<T> {
    /// Queues `item`, waiting while the queue is full; gives it back when the consumer
    /// has gone.
    pub fn send(&self, item: T) -> Result<(), T> {
        let s = &self.0;
        let mut st = s.lock();
        while st.items.len() >= s.depth && !st.receiver_gone {
            st.producer_waits = true;
            st = s.room.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        st.producer_waits = false;
        if st.receiver_gone {
            return Err(item);
        }
        st.items.push_back(item);
        if st.consumer_waits {
            s.item.notify_one();
        }
        Ok(())
    }
}

impl<T> Receiver<T> {
    /// The next item, waiting for one; `None` once the producer has gone and the queue
    /// is empty.
    pub fn recv(&self) -> Option<T> {
        let s = &self.0;
        let mut st = s.lock();
        loop {
            if let Some(item) = st.items.pop_front() {
                // The producer goes on when half the queue is free, not at each item.
                if st.producer_waits && st.items.len() <= s.depth / 2 {
                    s.room.notify_one();
                }
                return Some(item);
            }
            if st.sender_gone {
                return None;
            }
            st.consumer_waits = true;
            st = s.item.wait(st).unwrap_or_else(PoisonError::into_inner);
            st.consumer_waits = false;
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.0.lock().sender_gone = true;
        self.0.item.notify_one();
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.receiver_gone = true;
        // What is queued goes with the consumer, not with the last handle.
        st.items.clear();
        drop(st);
        self.0.room.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::bounded;

    /// Every item arrives once, in order, whatever the depth and whichever side is
    /// slower; the end comes after the last.
    #[test]
    fn items_arrive_in_order() {
        for depth in [1, 2, 3, 8] {
            for slow_consumer in [false, true] {
                let (tx, rx) = bounded(depth);
                let producer = std::thread::spawn(move || {
                    for k in 0..2_000u32 {
                        if !slow_consumer && k % 97 == 0 {
                            std::thread::yield_now();
                        }
                        tx.send(k).unwrap();
                    }
                });
                for k in 0..2_000u32 {
                    if slow_consumer && k % 89 == 0 {
                        std::thread::sleep(std::time::Duration::from_micros(50));
                    }
                    assert_eq!(rx.recv(), Some(k), "depth {depth}");
                }
                assert_eq!(rx.recv(), None);
                producer.join().unwrap();
            }
        }
    }

    /// A producer waiting on a full queue is let go when the consumer goes, and its
    /// item comes back.
    #[test]
    fn a_consumer_that_goes_frees_the_producer() {
        let (tx, rx) = bounded(2);
        let producer = std::thread::spawn(move || {
            let mut k = 0u32;
            loop {
                if let Err(back) = tx.send(k) {
                    return (k, back);
                }
                k += 1;
            }
        });
        assert_eq!(rx.recv(), Some(0));
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(rx);
        let (k, back) = producer.join().unwrap();
        assert_eq!(k, back);
        assert!(k >= 3, "{k}");
    }
}
