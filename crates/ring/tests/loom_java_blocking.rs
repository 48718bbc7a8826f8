//! Loom model of `JavaBlocking`, the literal port of Java's `BlockingWaitStrategy`: a
//! consumer sleeps on the condition variable only while the *claim* cursor has not reached
//! the sequence it waits for (Java's `waitFor` behind a `MultiProducerSequencer`), and
//! waits awake for a claimed slot's publish; it is woken by every publish (lock, then
//! `notify_all`) and by the close, with no lost wake-up (loom reports a deadlock
//! otherwise); producers in a full ring poll (a yield per `parkNanos(1)` under loom) and
//! are never notified, so a missed room check would show up as a hang too.
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p ring --release --test loom_java_blocking`
#![cfg(loom)]

mod loom_scenarios;
use loom_scenarios::*;
use ring::JavaBlocking;

/// The bound these models explore: two preemptions a path (every publish takes the lock,
/// so the paths are longer than the ring's own strategies').
const PREEMPTIONS: usize = 2;

/// The consumer sleeps for data and is woken by the publish, then by the close.
#[test]
fn consumer_sleeps_and_is_woken_by_publish_and_close() {
    single_producer_laps::<JavaBlocking>(PREEMPTIONS, 2, 2);
}

/// The producer polls for room in a full ring.
#[test]
fn producer_polls_for_room_in_a_full_ring() {
    single_producer_laps::<JavaBlocking>(PREEMPTIONS, 1, 2);
}

/// Two producers, multi-producer sequencer: claims, out-of-order publishes, each followed
/// by a lock and `notify_all`; a consumer that sees a claim before its publish waits awake;
/// per-producer order and nothing lost.
#[test]
fn two_producers_wake_the_consumer() {
    two_producers::<JavaBlocking>(PREEMPTIONS, 2);
}

/// A producer polling for room in a full ring sees the consumer go and fails with its
/// message: nobody notifies it, so only its own poll can end the wait.
#[test]
fn consumer_drop_ends_a_producer_waiting_for_room() {
    consumer_drop_ends_a_waiting_producer::<JavaBlocking>(PREEMPTIONS);
}

/// The Disruptor API's batch event processor sleeping on the strategy: every published
/// event is processed, and the join after the producer's drop ends.
#[test]
fn processor_sleeps_and_drains() {
    processor_drains::<JavaBlocking>(PREEMPTIONS, 2);
}

/// The batch event processor behind the multi-producer sequencer: it sleeps on the claim
/// cursor, waits awake on a claimed, unpublished slot, and processes both producers' events.
#[test]
fn processor_waits_on_the_claim_cursor_with_two_producers() {
    processor_with_two_producers::<JavaBlocking>(PREEMPTIONS);
}
