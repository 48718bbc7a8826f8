//! Loom model of consumer gating: producers must never write a slot the consumer has not
//! released (loom's `UnsafeCell` tracking flags any overlap), the cached gate must be
//! refreshed correctly, and producers blocked on a full ring wake when the consumer goes.
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p ring --release --test loom_gating`
#![cfg(loom)]

mod loom_scenarios;
use loom_scenarios::*;
use ring::{Blocking, BusySpin, Sleeping};

/// The bound these models explore: three preemptions a path.
const PREEMPTIONS: usize = 3;

/// One producer laps the ring while the consumer reads (single-producer sequencer: plain
/// claim counter, cached gate, one store to publish).
#[test]
fn single_producer_gates_on_consumer() {
    single_producer_laps::<BusySpin>(PREEMPTIONS, 1, 3);
    single_producer_laps::<BusySpin>(PREEMPTIONS, 2, 3);
    single_producer_laps::<Blocking>(PREEMPTIONS, 1, 2);
    single_producer_laps::<Sleeping>(PREEMPTIONS, 2, 3);
}

/// The multi-producer claim gates too: two producers, one slot.
#[test]
fn multi_producer_gates_on_consumer() {
    two_producers::<Blocking>(PREEMPTIONS, 1);
}

/// A producer blocked on the condition variable of a full ring wakes and fails when the
/// consumer is dropped (no lost wake-up: loom reports a deadlock otherwise).
#[test]
fn consumer_drop_wakes_blocked_producer() {
    consumer_drop_ends_a_waiting_producer::<Blocking>(PREEMPTIONS);
}

/// Batch event processor of the Disruptor API: a handler thread gates a producer on a
/// 2-slot ring, and the processed events are exactly those published.
#[test]
fn processor_gates_producer() {
    processor_drains::<BusySpin>(PREEMPTIONS, 3);
}
