//! A port of the design of `java.util.concurrent.LinkedBlockingQueue` (JDK 8, Doug Lea's
//! JSR-166 code), the queue the game-server message bus of seed `001` used before it moved to
//! the LMAX Disruptor: "生产和消费都用到了锁，生产用的是putLock，消费是takeLock" (production and
//! consumption both take a lock: putLock to produce, takeLock to consume). The lab's
//! experiment `disruptor-vs-lbq` measures it against the `ring` crate through
//! [`LockedHandoff`], the `handoff` contract's adapter.
//!
//! # What it mirrors from Java
//! 1. **A singly linked list, one node allocated per insertion** (`new Node<E>(e)`), before
//!    the put lock is taken; the seed's point about allocation per message (vs. the ring's
//!    preallocated events) applies as-is.
//! 2. **A dummy head**: `head.item` is empty; a take makes the first node the new dummy
//!    (Java's `first.item = null`) and drops the old head.
//! 3. **Two locks**: `put_lock` guards the tail (`last`), `take_lock` guards the head, so a
//!    producer and the consumer only meet on the atomic `count` and at the empty/full
//!    transitions. Producers contend with each other on `put_lock`: the cost that grows with
//!    the producer count in the seed's tables.
//! 4. **An atomic `count`** shared by both sides (Java's `AtomicInteger`), read without a
//!    lock by the fast paths.
//! 5. **Two conditions**: `not_full` with `put_lock`, `not_empty` with `take_lock`.
//! 6. **Cascading signals**: `put` signals `not_full` when room remains after its insert;
//!    `take` signals `not_empty` when elements remain after its removal. A woken waiter wakes
//!    the next one, instead of `signalAll`.
//! 7. **Cross-side signals only at transitions**: a producer signals `not_empty` (taking
//!    `take_lock`, Java's `signalNotEmpty`) only when `count` went 0 → 1; a consumer signals
//!    `not_full` (taking `put_lock`, `signalNotFull`) only when `count` was at capacity.
//! 8. **Lock-free fast failures**: `offer` on a full queue fails without locking or
//!    allocating; `poll` on an empty queue returns without locking.
//! 9. **`drainTo`** ([`LinkedBlockingQueue::drain_to`]): one acquisition of `take_lock`
//!    for the batch, `count` decremented once, elements handed over under the lock; on a
//!    panicking callback the count is still repaired (Java's `finally`).
//! 10. **Capacity**: unbounded is `usize::MAX` (Java's `Integer.MAX_VALUE`); `0` is refused
//!     ([`CapacityError`], Java's `IllegalArgumentException`).
//! 11. **No padding** between the two sides (JDK 8's queue has none).
//!
//! # Where it deviates
//! * **Close instead of interrupts.** Rust threads cannot be interrupted, so a blocked
//!   `put` or `take` could never be released. [`LinkedBlockingQueue::close`] sets a flag
//!   under `put_lock` and wakes every waiter on both conditions; `put`/`offer` after it
//!   return their element ([`Closed`], [`OfferError::Closed`]); `take` keeps returning
//!   elements until the queue is empty, then `None`. Java has no such state.
//! * **Ownership.** A failed insertion gives the element back (Java returns `false` and the
//!   caller still holds its reference); `take` returns `Option<T>` rather than throwing.
//!   Java's null check has no counterpart.
//! * **Memory reclamation.** Java unlinks the old head (`h.next = h`) and leaves it to the
//!   GC; here the old head is freed right away by the consumer: one free per take, the
//!   counterpart of the young-generation work the seed's JVM did.
//! * **Condition cost.** std's `Condvar::notify_one` always makes a `futex` system call;
//!   Java's `signal()` on a condition with no waiter is a field read. Each condition here
//!   counts its waiters (under its lock) and skips the notify when there are none, so the
//!   unbounded queue's per-put `not_full` cascade costs what it costs in Java.
//! * **The 0 → 1 signal.** Java's `signalNotEmpty` always takes the take lock, which the
//!   consumer usually holds then (it is draining what it just found). Here a producer reads
//!   `not_empty`'s waiter count first and takes the lock only when a consumer waits, by a
//!   SeqCst handshake on `count` and that count ([`LinkedBlockingQueue`]'s docs have the
//!   argument; loom checks it). The consumer does not spin before it waits: polling `count`
//!   takes its cache line from the producer at every check, and a spin of 128 checks made
//!   the queue slower than the park it saved (docs/locked-queue.md has the side-by-side
//!   runs).
//! * **Locks.** std's `Mutex` (a futex lock that spins briefly, unfair) stands in for the
//!   non-fair `ReentrantLock`; poisoning is ignored because the list is consistent whenever
//!   user code (a `drain_with` callback) runs.
//! * **Additions**: [`LinkedBlockingQueue::take_batch`] (wait like `take`, then drain up to
//!   `max` under the same lock: the adapter's batch path), `drain_with` (a callback instead
//!   of a `Collection`), `is_closed`.
//! * **Not ported**: the operations that take both locks (`remove(Object)`, `contains`,
//!   `toArray`, `clear`, iterators, serialisation).
//!
//! # Guarantees
//! * **Allocation**: one node (`Box`) per `put`/`offer_timeout`, and per `offer` that finds
//!   room (a full queue fails first); one free per element taken; a failed insertion frees
//!   its node. No other allocation on any path.
//! * **Blocking**: `put` blocks while full, `take` while empty (std futex waits); both wake
//!   on `close`. `offer`/`poll` never block beyond the lock; `offer_timeout`/`poll_timeout`
//!   block at most about their timeout.
//! * **Ordering**: FIFO in the order the put lock admitted the insertions, so per-producer
//!   FIFO; nothing lost or duplicated; dropping a non-empty queue drops each remaining element
//!   exactly once.
//! * **Tracing** (`handoff::trace`): a `wait` span (`full`/`empty`) around each blocking
//!   wait, and per batch (`take_batch`, `drain_with`) a `batch` span plus a `queue_depth`
//!   counter in `take_batch`. Nothing on the per-element fast path.
//!
//! # Unsafe
//! The list is shared by two locks, so its nodes are raw pointers: the put side writes
//! `last.next`, the take side reads `head.next` and frees the old head; `count`'s
//! read-modify-writes (`SeqCst`, as every access to the queue's atomics) publish each node
//! from one side to the other. Every block carries its argument; the invariants are listed
//! on [`LinkedBlockingQueue`]. Tests run under Miri (`cargo +nightly miri test -p
//! locked-queue`). The wake-up protocol (the `not_empty` handshake, `close`) is
//! model-checked with loom:
//! `RUSTFLAGS="--cfg loom" cargo test -p locked-queue --release --test 'loom_*'`.
//!
//! # Sources
//! * OpenJDK 8 `java/util/concurrent/LinkedBlockingQueue.java` (put, take, offer, poll,
//!   drainTo, signalNotEmpty, signalNotFull, enqueue, dequeue).
//! * M. Michael and M. Scott, "Simple, Fast, and Practical Non-Blocking and Blocking
//!   Concurrent Queue Algorithms", PODC 1996: the two-lock queue with a dummy node.

#![deny(unsafe_op_in_unsafe_fn)]

mod adapter;
mod queue;
mod sync;

pub use adapter::{LockedConsumer, LockedHandoff, LockedProducer};
pub use queue::{CapacityError, Closed, LinkedBlockingQueue, OfferError};
