//! [`LockedHandoff`]: the queue behind the lab's `handoff` contract.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use handoff::{
    Channel, ConfigError, Consumer, Handoff, Producer, SendError, TryRecvError, TrySendError,
};

use crate::{LinkedBlockingQueue, OfferError};

/// The locked-queue flavor (`"locked"`): a [`LinkedBlockingQueue`] shared by `P` producer
/// handles and one consumer handle.
///
/// * `capacity: None` is unbounded (Java's default `Integer.MAX_VALUE`); `Some(0)` makes
///   [`Handoff::open`] fail with a [`ConfigError`].
/// * `close()` on any producer closes the queue for all; dropping the last producer handle
///   closes it too; dropping the consumer closes it, so a blocked or later `send` returns its
///   message instead of waiting forever.
/// * `recv_batch` is one [`LinkedBlockingQueue::take_batch`]: wait for an element, then a
///   `drainTo` of up to `max` under the same take lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockedHandoff {
    capacity: Option<usize>,
}

impl LockedHandoff {
    /// A flavor bounded at `capacity` messages, or unbounded for `None`.
    pub fn new(capacity: Option<usize>) -> Self {
        LockedHandoff { capacity }
    }
}

impl Default for LockedHandoff {
    /// Unbounded, as `new LinkedBlockingQueue<>()`.
    fn default() -> Self {
        LockedHandoff::new(None)
    }
}

struct Shared<T> {
    queue: LinkedBlockingQueue<T>,
    /// Producer handles not yet dropped; the last one to go closes the queue.
    live_producers: AtomicUsize,
}

/// One producer's handle: [`LinkedBlockingQueue::put`] / [`LinkedBlockingQueue::offer`].
pub struct LockedProducer<T> {
    shared: Arc<Shared<T>>,
}

/// The consumer's handle: [`LinkedBlockingQueue::take`] / `poll` / `take_batch`.
pub struct LockedConsumer<T> {
    shared: Arc<Shared<T>>,
}

impl<T> fmt::Debug for LockedProducer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockedProducer").field("queue", &self.shared.queue).finish()
    }
}

impl<T> fmt::Debug for LockedConsumer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockedConsumer").field("queue", &self.shared.queue).finish()
    }
}

impl Handoff for LockedHandoff {
    type Producer<T: Send + 'static> = LockedProducer<T>;
    type Consumer<T: Send + 'static> = LockedConsumer<T>;

    fn name(&self) -> String {
        "locked".to_string()
    }

    fn capacity(&self) -> Option<usize> {
        self.capacity
    }

    fn open<T: Send + 'static>(&self, producers: usize) -> Result<Channel<Self, T>, ConfigError> {
        if producers == 0 {
            return Err(ConfigError::new(
                "locked: producers must be at least 1 (got 0): a channel needs a producer handle",
            ));
        }
        let queue = match self.capacity {
            None => LinkedBlockingQueue::new(),
            Some(c) => LinkedBlockingQueue::with_capacity(c).map_err(|e| {
                ConfigError::new(format!(
                    "locked: {e}; valid capacities are Some(1..) or None (unbounded)"
                ))
            })?,
        };
        let shared = Arc::new(Shared { queue, live_producers: AtomicUsize::new(producers) });
        let txs = (0..producers).map(|_| LockedProducer { shared: shared.clone() }).collect();
        Ok((txs, LockedConsumer { shared }))
    }
}

impl<T: Send> Producer<T> for LockedProducer<T> {
    fn send(&mut self, msg: T) -> Result<(), SendError<T>> {
        self.shared.queue.put(msg).map_err(|closed| SendError(closed.0))
    }

    fn try_send(&mut self, msg: T) -> Result<(), TrySendError<T>> {
        self.shared.queue.offer(msg).map_err(|e| match e {
            OfferError::Full(m) => TrySendError::Full(m),
            OfferError::Closed(m) => TrySendError::Closed(m),
        })
    }

    fn close(&self) {
        self.shared.queue.close();
    }

    fn depth(&self) -> usize {
        self.shared.queue.len()
    }
}

impl<T> Drop for LockedProducer<T> {
    fn drop(&mut self) {
        if self.shared.live_producers.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.queue.close();
        }
    }
}

impl<T: Send> Consumer<T> for LockedConsumer<T> {
    fn recv(&mut self) -> Option<T> {
        self.shared.queue.take()
    }

    fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let q = &self.shared.queue;
        if let Some(m) = q.poll() {
            return Ok(m);
        }
        if q.is_closed() {
            // Every successful put counted its element before the close: having seen the
            // close, one more poll sees them all.
            q.poll().ok_or(TryRecvError::Ended)
        } else {
            Err(TryRecvError::Empty)
        }
    }

    fn recv_batch<F: FnMut(T)>(&mut self, max: usize, f: F) -> usize {
        self.shared.queue.take_batch(max, f)
    }

    fn depth(&self) -> usize {
        self.shared.queue.len()
    }
}

impl<T> Drop for LockedConsumer<T> {
    fn drop(&mut self) {
        self.shared.queue.close();
    }
}
