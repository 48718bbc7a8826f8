//! [`LinkedBlockingQueue`]: the two-lock linked queue of `java.util.concurrent`.

use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::PoisonError;
use std::time::{Duration, Instant};

use handoff::trace::{WAIT_EMPTY, WAIT_FULL};

use crate::sync::{AtomicBool, AtomicUsize, Condvar, Mutex, MutexGuard, Ordering};

// Every access to the queue's atomics (`count`, `closed`, each condition's `waiters`) is
// `SeqCst`. The `not_empty` handshake (see `Condition::await_signal_unless`) rests on the
// single total order of `SeqCst` operations, and C++20 weakens what that order promises on
// a location that also sees weaker accesses; with one ordering per location the argument
// needs nothing else. It also keeps the tests meaningful under Miri, whose weak-memory
// emulation let a `SeqCst` load read a value C++20 rules out on such a mixed location
// (rust-lang/miri#5104, fixed after the 2026-05 nightlies): a hang CI once met here while
// `count` mixed `AcqRel` decrements with the handshake's `SeqCst` accesses. On x86-64 it
// costs nothing: a read-modify-write is one `lock`-prefixed instruction whatever its
// ordering and a `SeqCst` load is a plain `mov`; only `close`'s one store becomes `xchg`.

/// A linked node, as Java's `LinkedBlockingQueue.Node`: one allocation per element.
///
/// Nodes are only ever touched through raw pointers, field by field, never through a
/// `&Node`/`&mut Node`: the consumer reads `next` of the head while a producer may write
/// `next` of the last node, and when the queue holds one element those are different fields
/// of neighbouring nodes, never the same field (see [`LinkedBlockingQueue::dequeue`]).
struct Node<T> {
    /// Initialised while the node holds an element; uninitialised once the node has become
    /// the dummy head (Java sets `item = null` there).
    item: MaybeUninit<T>,
    /// The next node, or null for the last one. Written once, by the producer that links
    /// the next node, under the put lock.
    next: *mut Node<T>,
}

impl<T> Node<T> {
    fn alloc(item: MaybeUninit<T>) -> *mut Node<T> {
        Box::into_raw(Box::new(Node { item, next: ptr::null_mut() }))
    }

    /// Takes the element back out of a node that was never linked, and frees the node.
    ///
    /// # Safety
    /// `node` came from [`Node::alloc`] with an initialised item, was never linked into a
    /// list (no other pointer to it exists) and is not used afterwards.
    unsafe fn unalloc(node: *mut Node<T>) -> T {
        // SAFETY: per the caller, `node` is a live, unshared allocation from `Box::into_raw`.
        let node = unsafe { Box::from_raw(node) };
        // SAFETY: per the caller, the item was initialised by `Node::alloc` and nobody took it.
        unsafe { node.item.assume_init() }
    }
}

/// The state guarded by the put lock: Java's `last`.
struct PutSide<T> {
    last: *mut Node<T>,
}

/// The state guarded by the take lock: Java's `head` (always a dummy node).
struct TakeSide<T> {
    head: *mut Node<T>,
}

/// A condition variable that knows how many threads wait on it, so that `signal` costs
/// nothing when nobody waits, as Java's `ConditionObject.signal` (which checks
/// `firstWaiter`). std's futex `Condvar::notify_one` always enters the kernel; without this
/// count an unbounded queue would make a `futex_wake` system call on every `put` (the
/// cascade `notFull.signal()`), a cost Java does not pay.
struct Condition {
    cv: Condvar,
    /// Threads inside `await_*`. Changed only while the associated lock is held; the one
    /// read without the lock is `signal_not_empty`'s, one side of the handshake.
    waiters: AtomicUsize,
}

impl Condition {
    // Not `const`: loom's `Condvar::new` and `AtomicUsize::new` are not.
    fn new() -> Self {
        Condition { cv: Condvar::new(), waiters: AtomicUsize::new(0) }
    }

    /// `Condition.await()`: releases the lock, waits for a signal (or a spurious wake-up),
    /// reacquires the lock.
    fn await_signal<'a, G>(&self, guard: MutexGuard<'a, G>) -> MutexGuard<'a, G> {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let guard = self.cv.wait(guard).unwrap_or_else(PoisonError::into_inner);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        guard
    }

    /// As [`Condition::await_signal`], for a condition whose signaller looks at `waiters`
    /// *before* taking the lock (`not_empty`, see [`LinkedBlockingQueue::signal_not_empty`]).
    /// A Dekker handshake: the waiter counts itself (SeqCst), then looks at the state again
    /// (`ready`, SeqCst loads); the signaller changes the state (SeqCst), then reads
    /// `waiters`. In the single total order one of the two sees the other's write: either
    /// the waiter sees the state and does not wait, or the signaller sees the waiter and
    /// signals under the lock, which the waiter holds from its second look until the
    /// condvar releases it inside `wait`, so the signal cannot fall between the two.
    /// Model-checked in `tests/loom_handoff.rs`.
    fn await_signal_unless<'a, G>(
        &self,
        guard: MutexGuard<'a, G>,
        deadline: Option<Instant>,
        ready: impl Fn() -> bool,
    ) -> MutexGuard<'a, G> {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let guard = if ready() {
            guard
        } else {
            match deadline {
                None => self.cv.wait(guard).unwrap_or_else(PoisonError::into_inner),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    self.cv.wait_timeout(guard, left).unwrap_or_else(PoisonError::into_inner).0
                }
            }
        };
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        guard
    }

    /// `Condition.awaitNanos()`: as [`Condition::await_signal`], but wakes at `deadline`.
    fn await_until<'a, G>(&self, guard: MutexGuard<'a, G>, deadline: Instant) -> MutexGuard<'a, G> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let (guard, _) = self.cv.wait_timeout(guard, left).unwrap_or_else(PoisonError::into_inner);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        guard
    }

    /// `Condition.signal()`. The guard proves the caller holds the condition's lock (as Java
    /// requires); it must be the lock this condition is used with.
    fn signal<G>(&self, _lock_held: &MutexGuard<'_, G>) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            self.cv.notify_one();
        }
    }

    /// `Condition.signalAll()`; same requirement as [`Condition::signal`].
    fn signal_all<G>(&self, _lock_held: &MutexGuard<'_, G>) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            self.cv.notify_all();
        }
    }
}

/// What a wait for room or for an element ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ready {
    /// The condition holds (room to put, an element to take).
    Yes,
    /// Closed (for a consumer: closed *and* empty).
    Closed,
    /// The deadline passed first.
    TimedOut,
}

/// `with_capacity(0)`: a queue must have room for at least one element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapacityError {
    requested: usize,
}

impl CapacityError {
    /// The capacity that was asked for.
    pub fn requested(&self) -> usize {
        self.requested
    }
}

impl fmt::Display for CapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid capacity {}: a LinkedBlockingQueue needs a capacity of at least 1 \
             (Java throws IllegalArgumentException here); use LinkedBlockingQueue::new() \
             for an unbounded queue",
            self.requested
        )
    }
}

impl std::error::Error for CapacityError {}

/// `put` on a closed queue: the element comes back.
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct Closed<T>(pub T);

impl<T> fmt::Debug for Closed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Closed(..)")
    }
}

impl<T> fmt::Display for Closed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the queue is closed")
    }
}

impl<T> std::error::Error for Closed<T> {}

/// Why `offer`/`offer_timeout` did not insert. The element comes back either way.
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum OfferError<T> {
    /// At capacity (for `offer_timeout`: still at capacity when the time ran out). Java's
    /// `offer` returns `false` here.
    Full(T),
    /// The queue is closed.
    Closed(T),
}

impl<T> OfferError<T> {
    /// The element that was not inserted.
    pub fn into_inner(self) -> T {
        match self {
            OfferError::Full(t) | OfferError::Closed(t) => t,
        }
    }
}

impl<T> fmt::Debug for OfferError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OfferError::Full(_) => f.write_str("Full(..)"),
            OfferError::Closed(_) => f.write_str("Closed(..)"),
        }
    }
}

impl<T> fmt::Display for OfferError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OfferError::Full(_) => f.write_str("the queue is full"),
            OfferError::Closed(_) => f.write_str("the queue is closed"),
        }
    }
}

impl<T> std::error::Error for OfferError<T> {}

/// A port of `java.util.concurrent.LinkedBlockingQueue`: see the crate docs for what it
/// mirrors and where it deviates.
///
/// Invariants (Java's, plus the close flag):
/// * `head` (take side) is a dummy node whose item is uninitialised; the elements are the
///   items of the nodes after it, in FIFO order; `last` (put side) is the last node, whose
///   `next` is null. `head == last` exactly when no node has been linked past the head.
/// * `count` is changed only by read-modify-write operations: `+1` by a producer holding the
///   put lock *after* it linked its node, `-n` by the consumer holding the take lock *after*
///   it unlinked `n` nodes. So a consumer that sees `count >= n` under the take lock has `n`
///   linked nodes after the head, published to it by the release sequence on `count`.
/// * `closed` only goes from false to true, and is set under the put lock: every `put` that
///   succeeded has incremented `count` before it, so a consumer that reads `closed == true`
///   and then `count == 0` has everything.
pub struct LinkedBlockingQueue<T> {
    /// The bound; `usize::MAX` for an unbounded queue (Java's `Integer.MAX_VALUE`).
    capacity: usize,
    /// Elements in the queue (Java's `AtomicInteger count`).
    count: AtomicUsize,
    /// Set by [`LinkedBlockingQueue::close`]; the deviation that replaces interrupts.
    closed: AtomicBool,
    /// Java's `takeLock`, guarding `head`.
    take_lock: Mutex<TakeSide<T>>,
    /// Java's `notEmpty`, used with `take_lock`.
    not_empty: Condition,
    /// Java's `putLock`, guarding `last`.
    put_lock: Mutex<PutSide<T>>,
    /// Java's `notFull`, used with `put_lock`.
    not_full: Condition,
    /// The queue owns `T`s (through its nodes) for drop check.
    _owns: PhantomData<T>,
}

// SAFETY: the queue owns its elements and moves them between threads (in by `put`, out by
// `take`), which needs `T: Send`; it never hands out `&T`, so `T: Sync` is not needed (the
// same bounds as `Mutex<T>`). The raw node pointers are private; a node is dereferenced only
// by the holder of the lock guarding that end of the list, with `count` publishing nodes
// from the put side to the take side (see the type's invariants).
unsafe impl<T: Send> Send for LinkedBlockingQueue<T> {}
// SAFETY: as for `Send`: every shared-reference method synchronises through the two mutexes
// and the atomic `count`/`closed`; no `&T` ever escapes.
unsafe impl<T: Send> Sync for LinkedBlockingQueue<T> {}

impl<T> Default for LinkedBlockingQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for LinkedBlockingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LinkedBlockingQueue")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl<T> LinkedBlockingQueue<T> {
    /// An unbounded queue: capacity `usize::MAX`, as Java's `new LinkedBlockingQueue<>()`
    /// has `Integer.MAX_VALUE`.
    pub fn new() -> Self {
        Self::build(usize::MAX)
    }

    /// A queue bounded at `capacity` elements. `0` is refused (Java throws
    /// `IllegalArgumentException`); `usize::MAX` means unbounded.
    pub fn with_capacity(capacity: usize) -> Result<Self, CapacityError> {
        if capacity == 0 {
            return Err(CapacityError { requested: capacity });
        }
        Ok(Self::build(capacity))
    }

    fn build(capacity: usize) -> Self {
        debug_assert!(capacity >= 1);
        let dummy = Node::alloc(MaybeUninit::uninit());
        LinkedBlockingQueue {
            capacity,
            count: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
            take_lock: Mutex::new(TakeSide { head: dummy }),
            not_empty: Condition::new(),
            put_lock: Mutex::new(PutSide { last: dummy }),
            not_full: Condition::new(),
            _owns: PhantomData,
        }
    }

    /// The bound, or `None` when unbounded (`usize::MAX`).
    pub fn capacity(&self) -> Option<usize> {
        (self.capacity != usize::MAX).then_some(self.capacity)
    }

    /// Elements in the queue now (Java's `size()`).
    pub fn len(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Whether the queue holds no element now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Java's `remainingCapacity()`: `usize::MAX - len` for an unbounded queue.
    pub fn remaining_capacity(&self) -> usize {
        self.capacity - self.len()
    }

    /// Whether [`LinkedBlockingQueue::close`] has been called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Closes the queue (the deviation that stands in for Java's thread interrupts): every
    /// waiter on either condition wakes; later `put`/`offer` return their element; `take`
    /// keeps returning elements until the queue is empty, then `None`. Idempotent.
    pub fn close(&self) {
        {
            let put = self.lock_put();
            self.closed.store(true, Ordering::SeqCst);
            self.not_full.signal_all(&put);
        }
        let take = self.lock_take();
        self.not_empty.signal_all(&take);
    }

    /// Inserts at the tail, waiting while the queue is full (Java's `put`). Fails only when
    /// the queue is closed, giving the element back.
    pub fn put(&self, item: T) -> Result<(), Closed<T>> {
        // As Java: the node is allocated before the lock is taken.
        let node = Node::alloc(MaybeUninit::new(item));
        let put = self.lock_put();
        let (put, ready) = self.await_room(put, None);
        if ready != Ready::Yes {
            drop(put);
            // SAFETY: `node` was allocated above with its item and never linked.
            return Err(Closed(unsafe { Node::unalloc(node) }));
        }
        self.link(put, node);
        Ok(())
    }

    /// Inserts if there is room now, never waiting (Java's `offer(e)`, which returns `false`
    /// where this returns [`OfferError::Full`]).
    pub fn offer(&self, item: T) -> Result<(), OfferError<T>> {
        // Java's fast path: fail on a full queue without allocating or locking.
        if self.count.load(Ordering::SeqCst) == self.capacity {
            return Err(if self.is_closed() {
                OfferError::Closed(item)
            } else {
                OfferError::Full(item)
            });
        }
        let node = Node::alloc(MaybeUninit::new(item));
        let put = self.lock_put();
        let refused: Option<fn(T) -> OfferError<T>> = if self.closed.load(Ordering::SeqCst) {
            Some(OfferError::Closed)
        } else if self.count.load(Ordering::SeqCst) == self.capacity {
            Some(OfferError::Full)
        } else {
            None
        };
        match refused {
            Some(kind) => {
                drop(put);
                // SAFETY: `node` was allocated above with its item and never linked.
                Err(kind(unsafe { Node::unalloc(node) }))
            }
            None => {
                self.link(put, node);
                Ok(())
            }
        }
    }

    /// Inserts, waiting up to `timeout` for room (Java's `offer(e, timeout, unit)`).
    pub fn offer_timeout(&self, item: T, timeout: Duration) -> Result<(), OfferError<T>> {
        let deadline = Instant::now().checked_add(timeout);
        let node = Node::alloc(MaybeUninit::new(item));
        let put = self.lock_put();
        let (put, ready) = self.await_room(put, deadline);
        let kind: fn(T) -> OfferError<T> = match ready {
            Ready::Yes => {
                self.link(put, node);
                return Ok(());
            }
            Ready::Closed => OfferError::Closed,
            Ready::TimedOut => OfferError::Full,
        };
        drop(put);
        // SAFETY: `node` was allocated above with its item and never linked.
        Err(kind(unsafe { Node::unalloc(node) }))
    }

    /// Removes the head, waiting while the queue is empty (Java's `take`). `None` once the
    /// queue is closed and empty.
    pub fn take(&self) -> Option<T> {
        self.take_until(None)
    }

    /// Removes the head if there is one now (Java's `poll()`). `None` when empty (closed or
    /// not; see [`LinkedBlockingQueue::is_closed`]).
    pub fn poll(&self) -> Option<T> {
        // Java's fast path: an empty queue is answered without the lock.
        if self.count.load(Ordering::SeqCst) == 0 {
            return None;
        }
        let (item, before) = {
            let mut take = self.lock_take();
            if self.count.load(Ordering::SeqCst) == 0 {
                return None;
            }
            // SAFETY: we hold the take lock of this queue and saw `count > 0` under it.
            let item = unsafe { Self::dequeue(&mut take) };
            let before = self.count.fetch_sub(1, Ordering::SeqCst);
            if before > 1 {
                self.not_empty.signal(&take);
            }
            (item, before)
        };
        if before == self.capacity {
            self.signal_not_full();
        }
        Some(item)
    }

    /// Removes the head, waiting up to `timeout` for one (Java's `poll(timeout, unit)`).
    /// `None` when the time runs out, or once the queue is closed and empty.
    pub fn poll_timeout(&self, timeout: Duration) -> Option<T> {
        match Instant::now().checked_add(timeout) {
            Some(deadline) => self.take_until(Some(deadline)),
            None => self.take(),
        }
    }

    /// Moves up to `max` available elements into `sink`, taking the take lock once for the
    /// batch (Java's `drainTo(c, maxElements)`). Never waits. Returns how many.
    pub fn drain_to<E: Extend<T>>(&self, sink: &mut E, max: usize) -> usize {
        self.drain_with(max, |item| sink.extend(Some(item)))
    }

    /// As [`LinkedBlockingQueue::drain_to`], handing each element to `f` (called under the
    /// take lock, as Java calls `c.add`). If `f` panics, the elements handed out so far are
    /// gone from the queue and the rest stay in it.
    pub fn drain_with<F: FnMut(T)>(&self, max: usize, mut f: F) -> usize {
        if max == 0 {
            return 0;
        }
        let (n, before) = {
            let mut take = self.lock_take();
            let n = self.count.load(Ordering::SeqCst).min(max);
            if n == 0 {
                return 0;
            }
            let _batch = handoff::batch_span!(n);
            // SAFETY: we hold this queue's take lock and saw `count >= n` under it.
            (n, unsafe { self.deliver(&mut take, n, &mut f) })
        };
        if before == self.capacity {
            self.signal_not_full();
        }
        n
    }

    /// Waits like [`LinkedBlockingQueue::take`] for at least one element, then hands up to
    /// `max` (at least one) to `f` like `drain_with`, under one acquisition of the take lock.
    /// Not in Java (where a consumer calls `take()` then `drainTo`): the handoff adapter's
    /// batch path. Returns how many; `0` once the queue is closed and empty.
    pub fn take_batch<F: FnMut(T)>(&self, max: usize, mut f: F) -> usize {
        let max = max.max(1);
        let (n, before) = {
            let take = self.lock_take();
            let (mut take, ready) = self.await_item(take, None);
            if ready != Ready::Yes {
                return 0;
            }
            let available = self.count.load(Ordering::SeqCst);
            handoff::batch_counter!("queue_depth", available);
            let n = available.min(max);
            let before = {
                let _batch = handoff::batch_span!(n);
                // SAFETY: we hold this queue's take lock and saw `count >= n` under it.
                unsafe { self.deliver(&mut take, n, &mut f) }
            };
            // The cascade of `take`: wake another consumer if elements remain.
            if before > n {
                self.not_empty.signal(&take);
            }
            (n, before)
        };
        if before == self.capacity {
            self.signal_not_full();
        }
        n
    }

    fn lock_put(&self) -> MutexGuard<'_, PutSide<T>> {
        // Poisoning is ignored: no code that can panic runs while the list is inconsistent
        // (`deliver` repairs `count` on unwind).
        self.put_lock.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_take(&self) -> MutexGuard<'_, TakeSide<T>> {
        self.take_lock.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Java's `signalNotEmpty`: called by a producer after the 0 → 1 transition, without
    /// the put lock.
    ///
    /// Java always takes the take lock here. This port first reads `not_empty`'s waiter
    /// count: when no consumer waits it skips the lock, which the consumer is likely holding
    /// (it drains the queue it just found non-empty). Safe by the handshake described at
    /// [`Condition::await_signal_unless`]: `count` was incremented (SeqCst) before this load.
    fn signal_not_empty(&self) {
        if self.not_empty.waiters.load(Ordering::SeqCst) == 0 {
            return;
        }
        let take = self.lock_take();
        self.not_empty.signal(&take);
    }

    /// Java's `signalNotFull`: called by a consumer after a take from a full queue, without
    /// the take lock (or, on unwind from `deliver`, with it: no thread ever takes the take
    /// lock while holding the put lock, so this cannot deadlock).
    fn signal_not_full(&self) {
        let put = self.lock_put();
        self.not_full.signal(&put);
    }

    /// Waits under the put lock until there is room, the queue is closed, or `deadline`.
    fn await_room<'a>(
        &'a self,
        mut put: MutexGuard<'a, PutSide<T>>,
        deadline: Option<Instant>,
    ) -> (MutexGuard<'a, PutSide<T>>, Ready) {
        let state = |q: &Self| {
            if q.closed.load(Ordering::SeqCst) {
                Some(Ready::Closed)
            } else if q.count.load(Ordering::SeqCst) < q.capacity {
                Some(Ready::Yes)
            } else {
                None
            }
        };
        if let Some(r) = state(self) {
            return (put, r);
        }
        // The slow path only: a span per wait, never per element.
        let _wait = handoff::wait_span!(WAIT_FULL);
        loop {
            put = match deadline {
                None => self.not_full.await_signal(put),
                Some(d) if Instant::now() < d => self.not_full.await_until(put, d),
                Some(_) => return (put, Ready::TimedOut),
            };
            if let Some(r) = state(self) {
                return (put, r);
            }
        }
    }

    /// Waits under the take lock until there is an element, the queue is closed and empty,
    /// or `deadline`. Elements are delivered before the end: `Yes` wins over `Closed`.
    fn await_item<'a>(
        &'a self,
        mut take: MutexGuard<'a, TakeSide<T>>,
        deadline: Option<Instant>,
    ) -> (MutexGuard<'a, TakeSide<T>>, Ready) {
        let state = |q: &Self| {
            if q.count.load(Ordering::SeqCst) > 0 {
                Some(Ready::Yes)
            } else if q.closed.load(Ordering::SeqCst) {
                // Every successful put incremented `count` before `closed` was set (both
                // under the put lock): having read `closed`, this load sees them all.
                Some(if q.count.load(Ordering::SeqCst) > 0 { Ready::Yes } else { Ready::Closed })
            } else {
                None
            }
        };
        if let Some(r) = state(self) {
            return (take, r);
        }
        // No spin before the wait: a consumer polling `count` pulls its cache line away from
        // the producer's `fetch_add` on every check, which slowed the queue more than the
        // park and unpark it saved (measured side by side: docs/locked-queue.md).
        let _wait = handoff::wait_span!(WAIT_EMPTY);
        let nonempty =
            || self.count.load(Ordering::SeqCst) > 0 || self.closed.load(Ordering::SeqCst);
        loop {
            take = match deadline {
                Some(d) if Instant::now() >= d => return (take, Ready::TimedOut),
                d => self.not_empty.await_signal_unless(take, d, nonempty),
            };
            if let Some(r) = state(self) {
                return (take, r);
            }
        }
    }

    /// `take` and `poll(timeout)`.
    fn take_until(&self, deadline: Option<Instant>) -> Option<T> {
        let (item, before) = {
            let take = self.lock_take();
            let (mut take, ready) = self.await_item(take, deadline);
            if ready != Ready::Yes {
                return None;
            }
            // SAFETY: we hold this queue's take lock and `await_item` saw `count > 0` under it.
            let item = unsafe { Self::dequeue(&mut take) };
            let before = self.count.fetch_sub(1, Ordering::SeqCst);
            // Java's cascade: wake the next taker if elements remain.
            if before > 1 {
                self.not_empty.signal(&take);
            }
            (item, before)
        };
        // Java's signalNotFull: only on the transition away from full.
        if before == self.capacity {
            self.signal_not_full();
        }
        Some(item)
    }

    /// Java's `enqueue` plus the rest of `put` after the wait: links `node` at the tail,
    /// counts it, cascades `not_full`, releases the put lock, and signals `not_empty` on the
    /// 0 → 1 transition.
    fn link(&self, mut put: MutexGuard<'_, PutSide<T>>, node: *mut Node<T>) {
        // SAFETY: `put.last` is the live last node: nodes are freed only by the consumer once
        // the head has moved past them, and the head never moves past `last` (it moves only
        // onto nodes counted in `count`, which are linked before being counted). Only the
        // put-lock holder (us) writes `next`, and the consumer reads this `next` only after
        // the `count` increment below publishes it.
        unsafe { (*put.last).next = node };
        put.last = node;
        // One side of `not_empty`'s handshake (see `signal_not_empty`).
        let before = self.count.fetch_add(1, Ordering::SeqCst);
        if before + 1 < self.capacity {
            self.not_full.signal(&put);
        }
        drop(put);
        if before == 0 {
            self.signal_not_empty();
        }
    }

    /// Java's `dequeue`: unlinks the first element, frees the old dummy head, and makes the
    /// first node the new dummy. Does not touch `count`.
    ///
    /// # Safety
    /// `take` is the guarded state of *this* queue's take lock, held by the caller, and
    /// since acquiring it the caller has seen `count` exceed the number of elements it has
    /// dequeued under this acquisition (so a linked, published node follows the head).
    unsafe fn dequeue(take: &mut TakeSide<T>) -> T {
        let h = take.head;
        // SAFETY: `h` is the live dummy head (only the take-lock holder frees nodes, and never
        // the head). Per the caller, `count` showed a node after it: the producer wrote
        // `h.next` before the increment our acquire load synchronised with, and no producer
        // writes it again (they write only `last.next`, and `last` is past `h` now).
        let first = unsafe { (*h).next };
        debug_assert!(!first.is_null(), "count said an element was linked");
        take.head = first;
        // SAFETY: `first` is live (it is the new head). We borrow only its `item` field: a
        // producer may be writing `first.next` right now if `first` is the last node, a
        // disjoint field. Items of linked nodes are touched only under the take lock.
        let slot = unsafe { &mut (*first).item };
        // SAFETY: `first` held an element, initialised by `Node::alloc` and published with
        // its link; it is read exactly once, as `first` now becomes the dummy head whose item
        // is treated as uninitialised from here on (Java's `first.item = null`).
        let item = unsafe { slot.assume_init_read() };
        // SAFETY: `h` came from `Box::into_raw`; it is unreachable now (the head moved past
        // it and producers only hold `last`, which is at `first` or beyond); its item is
        // uninitialised and `MaybeUninit` does not drop it. Java leaves it to the GC after
        // `h.next = h`.
        drop(unsafe { Box::from_raw(h) });
        item
    }

    /// The body of `drainTo`: dequeues `n` elements and hands them to `f` in order, then
    /// subtracts `n` from `count` once. Returns `count` before the subtraction.
    ///
    /// # Safety
    /// `take` is the guarded state of *this* queue's take lock, held by the caller, and the
    /// caller saw `count >= n` under it.
    unsafe fn deliver(&self, take: &mut TakeSide<T>, n: usize, f: &mut impl FnMut(T)) -> usize {
        let mut taken = Taken { queue: self, n: 0 };
        while taken.n < n {
            // SAFETY: per the caller `count >= n > taken.n`, and `count` is not decremented
            // until `taken` is finished: another published node follows the head.
            let item = unsafe { Self::dequeue(take) };
            taken.n += 1;
            f(item);
        }
        taken.finish()
    }
}

/// Elements dequeued in a batch but not yet subtracted from `count`. On unwind (a panicking
/// `drain_with` callback) its drop subtracts them, as Java's `finally` in `drainTo` does, and
/// wakes a producer if the queue was full.
struct Taken<'a, T> {
    queue: &'a LinkedBlockingQueue<T>,
    n: usize,
}

impl<T> Taken<'_, T> {
    fn finish(mut self) -> usize {
        let before = self.queue.count.fetch_sub(self.n, Ordering::SeqCst);
        self.n = 0;
        before
    }
}

impl<T> Drop for Taken<'_, T> {
    fn drop(&mut self) {
        if self.n > 0 {
            let before = self.queue.count.fetch_sub(self.n, Ordering::SeqCst);
            if before == self.queue.capacity {
                self.queue.signal_not_full();
            }
        }
    }
}

impl<T> Drop for LinkedBlockingQueue<T> {
    /// Drops every remaining element exactly once, in FIFO order, and frees every node. (If
    /// an element's drop panics, the nodes after it leak; nothing is dropped twice.)
    fn drop(&mut self) {
        let head = self.take_lock.get_mut().unwrap_or_else(PoisonError::into_inner).head;
        // SAFETY: `&mut self`: no other thread holds the queue. The head came from
        // `Box::into_raw` and its item is uninitialised (never dropped).
        let mut next = unsafe { Box::from_raw(head) }.next;
        while !next.is_null() {
            // SAFETY: every node after the head came from `Box::into_raw`, is reachable only
            // through this list, and is freed once here.
            let node = unsafe { Box::from_raw(next) };
            next = node.next;
            // SAFETY: nodes after the head hold an initialised element, taken here once.
            drop(unsafe { node.item.assume_init() });
        }
    }
}

// Real threads on std primitives; under loom see `tests/loom_handoff.rs`.
#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    #[test]
    fn fifo_and_counts_single_thread() {
        let q = LinkedBlockingQueue::with_capacity(3).unwrap();
        assert_eq!(q.capacity(), Some(3));
        assert!(q.is_empty());
        q.put(1).unwrap();
        q.put(2).unwrap();
        assert_eq!(q.offer(3), Ok(()));
        assert_eq!(q.offer(4), Err(OfferError::Full(4)));
        assert_eq!((q.len(), q.remaining_capacity()), (3, 0));
        assert_eq!(q.take(), Some(1));
        assert_eq!(q.poll(), Some(2));
        q.put(5).unwrap();
        let mut v = Vec::new();
        assert_eq!(q.drain_to(&mut v, 10), 2);
        assert_eq!(v, [3, 5]);
        assert_eq!(q.poll(), None);
        assert_eq!(q.remaining_capacity(), 3);
    }

    #[test]
    fn unbounded_is_usize_max() {
        let q: LinkedBlockingQueue<u8> = LinkedBlockingQueue::new();
        assert_eq!(q.capacity(), None);
        assert_eq!(q.remaining_capacity(), usize::MAX);
        let e = LinkedBlockingQueue::<u8>::with_capacity(0).unwrap_err();
        assert_eq!(e.requested(), 0);
        assert!(e.to_string().contains("at least 1"), "{e}");
    }

    #[test]
    fn drop_drops_remaining_once_and_frees_nodes() {
        let token = Arc::new(());
        {
            let q = LinkedBlockingQueue::new();
            for _ in 0..10 {
                q.put(token.clone()).unwrap();
            }
            drop(q.take());
            assert_eq!(Arc::strong_count(&token), 10);
        }
        assert_eq!(Arc::strong_count(&token), 1);
    }

    #[test]
    fn panicking_drain_callback_keeps_queue_consistent() {
        let q = Arc::new(LinkedBlockingQueue::with_capacity(4).unwrap());
        for i in 0..4 {
            q.put(i).unwrap();
        }
        // A producer blocked on the full queue must be woken by the unwinding drain.
        let producer = {
            let q = q.clone();
            thread::spawn(move || q.put(4))
        };
        while q.not_full_waiters() == 0 {
            thread::yield_now();
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            q.drain_with(3, |x| {
                if x == 1 {
                    panic!("callback fails at 1");
                }
            })
        }));
        assert!(r.is_err());
        producer.join().unwrap().unwrap();
        let mut rest = Vec::new();
        q.drain_to(&mut rest, 10);
        assert_eq!(rest, [2, 3, 4]);
    }

    #[test]
    fn close_wakes_both_sides() {
        let full = Arc::new(LinkedBlockingQueue::with_capacity(1).unwrap());
        full.put(0u32).unwrap();
        let empty = Arc::new(LinkedBlockingQueue::<u32>::new());
        let p = {
            let q = full.clone();
            thread::spawn(move || q.put(1))
        };
        let c = {
            let q = empty.clone();
            thread::spawn(move || q.take())
        };
        while full.not_full_waiters() == 0 || empty.not_empty_waiters() == 0 {
            thread::yield_now();
        }
        full.close();
        empty.close();
        assert_eq!(p.join().unwrap(), Err(Closed(1)));
        assert_eq!(c.join().unwrap(), None);
        // Closed and not empty: the element is still delivered, then the end.
        assert_eq!(full.take(), Some(0));
        assert_eq!(full.take(), None);
        assert_eq!(full.offer(2), Err(OfferError::Closed(2)));
    }

    /// A put signals `not_empty` only on 0 → 1; consumers woken that way must wake each
    /// other (take's cascade) or the ones still asleep wait forever beside queued elements.
    #[test]
    fn take_cascade_wakes_every_waiting_consumer() {
        let consumers = 4;
        let rounds = if cfg!(miri) { 2 } else { 50 };
        for round in 0..rounds {
            let q = Arc::new(LinkedBlockingQueue::new());
            let cs: Vec<_> = (0..consumers)
                .map(|_| {
                    let q = q.clone();
                    thread::spawn(move || q.take())
                })
                .collect();
            while q.not_empty_waiters() < consumers {
                thread::yield_now();
            }
            // Back to back: only the first put sees 0 -> 1 unless a consumer is very fast.
            for i in 0..consumers {
                q.put(i).unwrap();
            }
            let what = format!("take cascade, round {round}");
            let got = handoff::conformance::within(&what, Duration::from_secs(20), move || {
                let mut got: Vec<_> = cs.into_iter().map(|c| c.join().unwrap().unwrap()).collect();
                got.sort();
                got
            });
            assert_eq!(got, (0..consumers).collect::<Vec<_>>());
        }
    }

    /// A drain from full signals `not_full` once; the woken producer must wake the next
    /// (put's cascade), or producers sleep beside free room while the consumer waits.
    #[test]
    fn put_cascade_wakes_every_waiting_producer() {
        let producers = 4;
        let rounds = if cfg!(miri) { 2 } else { 50 };
        for round in 0..rounds {
            let q = Arc::new(LinkedBlockingQueue::with_capacity(producers).unwrap());
            for i in 0..producers {
                q.put(i).unwrap();
            }
            let ps: Vec<_> = (0..producers)
                .map(|p| {
                    let q = q.clone();
                    thread::spawn(move || q.put(100 + p).unwrap())
                })
                .collect();
            while q.not_full_waiters() < producers {
                thread::yield_now();
            }
            assert_eq!(q.drain_with(producers, drop), producers);
            let what = format!("put cascade, round {round}");
            handoff::conformance::within(&what, Duration::from_secs(20), move || {
                for p in ps {
                    p.join().unwrap();
                }
            });
            assert_eq!(q.len(), producers);
        }
    }

    impl<T> LinkedBlockingQueue<T> {
        fn not_full_waiters(&self) -> usize {
            let _put = self.lock_put();
            self.not_full.waiters.load(Ordering::SeqCst)
        }
        fn not_empty_waiters(&self) -> usize {
            let _take = self.lock_take();
            self.not_empty.waiters.load(Ordering::SeqCst)
        }
    }
}
