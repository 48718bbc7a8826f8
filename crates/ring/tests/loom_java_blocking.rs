//! Loom model of `JavaBlocking`, the literal port of Java's `BlockingWaitStrategy`: a
//! consumer that sleeps on the condition variable is woken by every publish (lock, then
//! `notify_all`) and by the close, with no lost wake-up (loom reports a deadlock
//! otherwise); producers in a full ring poll (a yield per `parkNanos(1)` under loom) and
//! are never notified, so a missed room check would show up as a hang too.
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p ring --release --test loom_java_blocking`
#![cfg(loom)]

use handoff::{Consumer, Handoff, Producer};
use ring::{Builder, JavaBlocking, RingHandoff};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.max_branches = 100_000;
    b.check(f);
}

/// One producer laps a ring of `cap` slots while the consumer reads: the consumer sleeps
/// for data, the producer polls for room.
fn single_producer(cap: usize, n: u64) {
    model(move || {
        let (mut txs, mut rx) = RingHandoff::<JavaBlocking>::new(cap).open::<u64>(1).unwrap();
        let mut tx = txs.pop().unwrap();
        let h = loom::thread::spawn(move || {
            for i in 0..n {
                tx.send(i).unwrap();
            }
        });
        for i in 0..n {
            assert_eq!(rx.recv(), Some(i));
        }
        assert_eq!(rx.recv(), None, "the producer's drop ends the stream");
        h.join().unwrap();
    });
}

#[test]
fn consumer_sleeps_and_is_woken_by_publish_and_close() {
    single_producer(2, 2);
}

#[test]
fn producer_polls_for_room_in_a_full_ring() {
    single_producer(1, 2);
}

/// Two producers, multi-producer sequencer: claims, out-of-order publishes, each followed
/// by a lock and `notify_all`; per-producer order and nothing lost.
#[test]
fn two_producers_wake_the_consumer() {
    model(|| {
        let (txs, mut rx) = RingHandoff::<JavaBlocking>::new(2).open::<u64>(2).unwrap();
        let hs: Vec<_> = txs
            .into_iter()
            .enumerate()
            .map(|(p, mut tx)| loom::thread::spawn(move || tx.send(p as u64).unwrap()))
            .collect();
        let mut got = [rx.recv().unwrap(), rx.recv().unwrap()];
        got.sort();
        assert_eq!(got, [0, 1]);
        assert_eq!(rx.recv(), None);
        for h in hs {
            h.join().unwrap();
        }
    });
}

/// A producer polling for room in a full ring sees the consumer go and fails with its
/// message: nobody notifies it, so only its own poll can end the wait.
#[test]
fn consumer_drop_ends_a_producer_waiting_for_room() {
    model(|| {
        let (mut txs, rx) = RingHandoff::<JavaBlocking>::new(1).open::<u64>(1).unwrap();
        let mut tx = txs.pop().unwrap();
        let h = loom::thread::spawn(move || {
            let first = tx.send(1).map_err(|e| e.into_inner());
            let second = tx.send(2).map_err(|e| e.into_inner());
            (first, second)
        });
        drop(rx);
        let (first, second) = h.join().unwrap();
        assert!(matches!(first, Ok(()) | Err(1)), "{first:?}");
        assert_eq!(second, Err(2));
    });
}

/// The Disruptor API's batch event processor sleeping on the strategy: every published
/// event is processed, and the join after the producer's drop ends.
#[test]
fn processor_sleeps_and_drains() {
    model(|| {
        let sum = Arc::new(AtomicU64::new(0));
        let s = sum.clone();
        let (mut p, procs) = Builder::<u64, JavaBlocking>::new(2, || 0)
            .handler(move |e: &u64, _seq, _eob| {
                s.fetch_add(*e, Ordering::Relaxed);
            })
            .build_single()
            .unwrap();
        for v in 1..=2u64 {
            p.publish(|e| *e = v).unwrap();
        }
        drop(p);
        assert_eq!(procs.join().unwrap().processed, vec![2]);
        assert_eq!(sum.load(Ordering::Relaxed), 3);
    });
}
