//! The naive baseline: what a message bus looks like before anyone measures it. One
//! `Mutex<Vec<Box<T>>>`: producers box each message and push it; the consumer swaps the
//! whole `Vec` out under the lock (`std::mem::take`) and hands the boxes out one by one.
//! It stands for the "随手new各种对象" habit (new an object on every send) that seed `001`
//! blames for its GC pressure, without even the bound a `LinkedBlockingQueue` has.
//!
//! # Why it is naive
//! * **Unbounded growth.** No capacity, no backpressure: a producer faster than the consumer
//!   grows the `Vec` (and the heap behind the boxes) without limit. `try_send` never reports
//!   `Full`; `capacity()` is `None` whatever capacity is asked for. The seed's stress test
//!   filled the old generation this way ("年老代将近被占满").
//! * **An allocation per message.** Every send allocates a `Box`, every receive frees one;
//!   on top of that the `Vec` is regrown from empty after every swap (the swap leaves an
//!   empty `Vec` with no capacity), so a burst of `n` messages also costs about `log2 n`
//!   reallocations.
//! * **One lock for both sides.** Producers and the consumer contend on the same mutex (the
//!   locked queue has one per side; the ring none on its hot path).
//!
//! # What it does reasonably
//! * **The consumer sleeps on a `Condvar` when the buffer is empty** rather than spinning.
//!   A spinning consumer would be more naive still, but on the lab's 2-core machines it would
//!   burn a core the producers need and turn every comparison into a scheduling artefact;
//!   the lab wants this baseline to be wrong for the reasons above, not because it steals
//!   CPU. A producer notifies only when the consumer has said it waits (a flag under the
//!   lock), so an uncontended send makes no system call.
//! * **Swapping out the whole buffer** amortises the lock over a batch on the consumer side.
//!
//! # Guarantees
//! * Allocation: one `Box` per message sent, plus the `Vec` regrowth above.
//! * Blocking: producers never wait for room (only for the lock); the consumer blocks while
//!   the buffer is empty and open.
//! * Ordering: FIFO in the order the lock admitted the pushes, so per-producer FIFO. Close,
//!   disconnect and drop follow the `handoff` contract: after `close` (any producer), after
//!   the last producer is dropped, or after the consumer is dropped, sends return their
//!   message; the consumer receives everything pushed before, then the end; each message
//!   left behind is dropped once.
//! * Tracing (`handoff::trace`): a `queue_depth` counter with the swapped length at each
//!   swap, a `batch` span around each `recv_batch` delivery, a `wait` span (`empty`) while the
//!   consumer waits. Nothing per message.
//!
//! No `unsafe` code.

#![forbid(unsafe_code)]

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use handoff::trace::WAIT_EMPTY;
use handoff::{
    Channel, ConfigError, Consumer, Handoff, Producer, SendError, TryRecvError, TrySendError,
};

struct State<T> {
    items: Vec<Box<T>>,
    closed: bool,
    /// The consumer is (about to be) inside `Condvar::wait`: the next push must notify.
    consumer_waiting: bool,
}

/// The buffer: a `Mutex<Vec<Box<T>>>`, a close flag and a condition for the consumer.
pub struct NaiveBuffer<T> {
    state: Mutex<State<T>>,
    not_empty: Condvar,
}

/// What [`NaiveBuffer::swap_out`] found.
#[derive(Debug)]
pub enum Swap<T> {
    /// Everything the buffer held, oldest first (never empty).
    Items(Vec<Box<T>>),
    /// Nothing now, still open (only when not waiting).
    Empty,
    /// Closed and empty: nothing more will come.
    Ended,
}

impl<T> fmt::Debug for NaiveBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.lock();
        f.debug_struct("NaiveBuffer")
            .field("len", &st.items.len())
            .field("closed", &st.closed)
            .finish()
    }
}

impl<T> Default for NaiveBuffer<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> NaiveBuffer<T> {
    /// An empty, open buffer (no allocation until the first push).
    pub fn new() -> Self {
        NaiveBuffer {
            state: Mutex::new(State { items: Vec::new(), closed: false, consumer_waiting: false }),
            not_empty: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // No user code runs under the lock, so a poisoned lock still guards a valid state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Boxes `item` (an allocation per message) and appends it. Never waits for room: there
    /// is no bound. Gives the item back if the buffer is closed.
    pub fn push(&self, item: T) -> Result<(), T> {
        let boxed = Box::new(item);
        let mut st = self.lock();
        if st.closed {
            drop(st);
            return Err(*boxed);
        }
        st.items.push(boxed);
        let wake = std::mem::take(&mut st.consumer_waiting);
        drop(st);
        if wake {
            self.not_empty.notify_one();
        }
        Ok(())
    }

    /// Takes everything the buffer holds in one swap under the lock. With `wait`, blocks
    /// while the buffer is empty and open (never returns `Empty`).
    pub fn swap_out(&self, wait: bool) -> Swap<T> {
        let mut st = self.lock();
        if st.items.is_empty() && !st.closed {
            if !wait {
                return Swap::Empty;
            }
            let _wait = handoff::wait_span!(WAIT_EMPTY);
            while st.items.is_empty() && !st.closed {
                st.consumer_waiting = true;
                st = self.not_empty.wait(st).unwrap_or_else(PoisonError::into_inner);
            }
            st.consumer_waiting = false;
        }
        if st.items.is_empty() {
            return Swap::Ended;
        }
        let items = std::mem::take(&mut st.items);
        drop(st);
        handoff::batch_counter!("queue_depth", items.len());
        Swap::Items(items)
    }

    /// Closes: later pushes fail with their item; the consumer gets what is there, then
    /// [`Swap::Ended`]. Idempotent.
    pub fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        st.consumer_waiting = false;
        drop(st);
        self.not_empty.notify_all();
    }

    /// Whether [`NaiveBuffer::close`] has been called.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Messages in the buffer now (not counting what a consumer swapped out).
    pub fn len(&self) -> usize {
        self.lock().items.len()
    }

    /// Whether the buffer holds nothing now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The naive flavor (`"naive"`): unbounded whatever capacity is requested.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NaiveHandoff;

impl NaiveHandoff {
    /// The naive flavor. It has no settings: it ignores any requested capacity.
    pub fn new() -> Self {
        NaiveHandoff
    }
}

struct Shared<T> {
    buffer: NaiveBuffer<T>,
    /// Producer handles not yet dropped; the last one to go closes the buffer.
    live_producers: AtomicUsize,
    /// Messages the consumer swapped out but has not handed over yet. Written only by the
    /// consumer (a plain store per message), read by `depth`.
    swapped_pending: AtomicUsize,
}

impl<T> Shared<T> {
    fn depth(&self) -> usize {
        self.buffer.len() + self.swapped_pending.load(Ordering::Relaxed)
    }
}

/// A producer's handle: [`NaiveBuffer::push`].
pub struct NaiveProducer<T> {
    shared: Arc<Shared<T>>,
}

/// The consumer's handle: swaps the buffer out and hands the boxes over one by one.
pub struct NaiveConsumer<T> {
    shared: Arc<Shared<T>>,
    swapped: std::vec::IntoIter<Box<T>>,
}

impl<T> fmt::Debug for NaiveProducer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NaiveProducer").field("depth", &self.shared.depth()).finish()
    }
}

impl<T> fmt::Debug for NaiveConsumer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NaiveConsumer").field("depth", &self.shared.depth()).finish()
    }
}

impl Handoff for NaiveHandoff {
    type Producer<T: Send + 'static> = NaiveProducer<T>;
    type Consumer<T: Send + 'static> = NaiveConsumer<T>;

    fn name(&self) -> String {
        "naive".to_string()
    }

    fn capacity(&self) -> Option<usize> {
        None
    }

    fn open<T: Send + 'static>(&self, producers: usize) -> Result<Channel<Self, T>, ConfigError> {
        if producers == 0 {
            return Err(ConfigError::new(
                "naive: producers must be at least 1 (got 0): a channel needs a producer handle",
            ));
        }
        let shared = Arc::new(Shared {
            buffer: NaiveBuffer::new(),
            live_producers: AtomicUsize::new(producers),
            swapped_pending: AtomicUsize::new(0),
        });
        let txs = (0..producers).map(|_| NaiveProducer { shared: shared.clone() }).collect();
        Ok((txs, NaiveConsumer { shared, swapped: Vec::new().into_iter() }))
    }
}

impl<T: Send> Producer<T> for NaiveProducer<T> {
    fn send(&mut self, msg: T) -> Result<(), SendError<T>> {
        self.shared.buffer.push(msg).map_err(SendError)
    }

    fn try_send(&mut self, msg: T) -> Result<(), TrySendError<T>> {
        // Never full: that is the point of this baseline.
        self.shared.buffer.push(msg).map_err(TrySendError::Closed)
    }

    fn close(&self) {
        self.shared.buffer.close();
    }

    fn depth(&self) -> usize {
        self.shared.depth()
    }
}

impl<T> Drop for NaiveProducer<T> {
    fn drop(&mut self) {
        if self.shared.live_producers.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.buffer.close();
        }
    }
}

impl<T> NaiveConsumer<T> {
    /// The next swapped-out message, if any.
    fn next_swapped(&mut self) -> Option<T> {
        let b = self.swapped.next()?;
        self.shared.swapped_pending.store(self.swapped.len(), Ordering::Relaxed);
        Some(*b)
    }

    /// Swaps the buffer out into `self.swapped`. `Ok(true)`: something to hand over.
    fn refill(&mut self, wait: bool) -> Result<(), TryRecvError> {
        match self.shared.buffer.swap_out(wait) {
            Swap::Items(items) => {
                self.shared.swapped_pending.store(items.len(), Ordering::Relaxed);
                self.swapped = items.into_iter();
                Ok(())
            }
            Swap::Empty => Err(TryRecvError::Empty),
            Swap::Ended => Err(TryRecvError::Ended),
        }
    }
}

impl<T: Send> Consumer<T> for NaiveConsumer<T> {
    fn recv(&mut self) -> Option<T> {
        if let Some(m) = self.next_swapped() {
            return Some(m);
        }
        self.refill(true).ok()?;
        self.next_swapped()
    }

    fn try_recv(&mut self) -> Result<T, TryRecvError> {
        if let Some(m) = self.next_swapped() {
            return Ok(m);
        }
        self.refill(false)?;
        self.next_swapped().ok_or(TryRecvError::Empty)
    }

    fn recv_batch<F: FnMut(T)>(&mut self, max: usize, mut f: F) -> usize {
        if self.swapped.len() == 0 && self.refill(true).is_err() {
            return 0;
        }
        let n = self.swapped.len().min(max.max(1));
        let _batch = handoff::batch_span!(n);
        for b in self.swapped.by_ref().take(n) {
            f(*b);
        }
        self.shared.swapped_pending.store(self.swapped.len(), Ordering::Relaxed);
        n
    }

    fn depth(&self) -> usize {
        self.shared.depth()
    }
}

impl<T> Drop for NaiveConsumer<T> {
    fn drop(&mut self) {
        self.shared.buffer.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_takes_everything_in_order_then_ends_after_close() {
        let b = NaiveBuffer::new();
        for i in 0..5 {
            b.push(i).unwrap();
        }
        assert_eq!(b.len(), 5);
        match b.swap_out(false) {
            Swap::Items(v) => {
                assert_eq!(v.into_iter().map(|b| *b).collect::<Vec<_>>(), [0, 1, 2, 3, 4])
            }
            other => panic!("expected items, got {other:?}"),
        }
        assert!(b.is_empty());
        assert!(matches!(b.swap_out(false), Swap::Empty));
        b.push(9).unwrap();
        b.close();
        assert_eq!(b.push(10), Err(10));
        assert!(matches!(b.swap_out(true), Swap::Items(v) if v.len() == 1));
        assert!(matches!(b.swap_out(true), Swap::Ended));
    }

    #[test]
    fn waiting_consumer_is_woken_by_a_push() {
        let b = Arc::new(NaiveBuffer::new());
        let c = {
            let b = b.clone();
            std::thread::spawn(move || match b.swap_out(true) {
                Swap::Items(v) => v.len(),
                other => panic!("expected items, got {other:?}"),
            })
        };
        while !b.lock().consumer_waiting {
            std::thread::yield_now();
        }
        b.push(1u8).unwrap();
        assert_eq!(c.join().unwrap(), 1);
    }
}
