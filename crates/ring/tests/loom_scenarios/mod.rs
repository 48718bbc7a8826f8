//! The scenarios the ring's loom models share, each run for a wait strategy under a
//! preemption bound (`loom_gating` and `loom_java_blocking` choose theirs).

use handoff::{Consumer, Handoff, Producer};
use ring::{Builder, RingHandoff, WaitStrategy};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Explores `f` under loom with at most `preemptions` preemptions a path.
pub fn model(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(preemptions);
    b.max_branches = 100_000;
    b.check(f);
}

/// One producer laps a ring of `cap` slots while the consumer reads `n` messages in order;
/// the producer's drop then ends the stream.
pub fn single_producer_laps<W: WaitStrategy>(preemptions: usize, cap: usize, n: u64) {
    model(preemptions, move || {
        let (mut txs, mut rx) = RingHandoff::<W>::new(cap).open::<u64>(1).unwrap();
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

/// Two producers (multi-producer sequencer) on a ring of `cap` slots, a message each:
/// both arrive, then the end of the stream.
pub fn two_producers<W: WaitStrategy>(preemptions: usize, cap: usize) {
    model(preemptions, move || {
        let (txs, mut rx) = RingHandoff::<W>::new(cap).open::<u64>(2).unwrap();
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

/// A producer waiting for room in a full one-slot ring sees the consumer go and fails with
/// its message (loom reports a deadlock if its wait never ends).
pub fn consumer_drop_ends_a_waiting_producer<W: WaitStrategy>(preemptions: usize) {
    model(preemptions, || {
        let (mut txs, rx) = RingHandoff::<W>::new(1).open::<u64>(1).unwrap();
        let mut tx = txs.pop().unwrap();
        let h = loom::thread::spawn(move || {
            let first = tx.send(1).map_err(|e| e.into_inner());
            let second = tx.send(2).map_err(|e| e.into_inner());
            (first, second)
        });
        drop(rx);
        let (first, second) = h.join().unwrap();
        // The first send fits in the one slot unless the consumer was already gone; the
        // second never fits (nobody consumes), so it must end its wait and fail.
        assert!(matches!(first, Ok(()) | Err(1)), "{first:?}");
        assert_eq!(second, Err(2));
    });
}

/// The Disruptor API's batch event processor on a 2-slot ring: the events 1..=n published,
/// every one processed, and the join after the producer's drop ends.
pub fn processor_drains<W: WaitStrategy>(preemptions: usize, n: u64) {
    model(preemptions, move || {
        let sum = Arc::new(AtomicU64::new(0));
        let s = sum.clone();
        let (mut p, procs) = Builder::<u64, W>::new(2, || 0)
            .handler(move |e: &u64, _seq, _eob| {
                s.fetch_add(*e, Ordering::Relaxed);
            })
            .build_single()
            .unwrap();
        for v in 1..=n {
            p.publish(|e| *e = v).unwrap();
        }
        drop(p);
        assert_eq!(procs.join().unwrap().processed, vec![n]);
        assert_eq!(sum.load(Ordering::Relaxed), n * (n + 1) / 2);
    });
}

/// The Disruptor API's batch event processor behind the multi-producer sequencer: the main
/// thread and one other each publish an event into a 2-slot ring, so a claim may be seen
/// before its publish, and publishes land out of claim order; both events are processed,
/// and the join after the last producer's drop ends.
#[allow(dead_code)] // loom_java_blocking's; loom_gating shares this module without it
pub fn processor_with_two_producers<W: WaitStrategy>(preemptions: usize) {
    model(preemptions, || {
        let sum = Arc::new(AtomicU64::new(0));
        let s = sum.clone();
        let (mut p, procs) = Builder::<u64, W>::new(2, || 0)
            .handler(move |e: &u64, _seq, _eob| {
                s.fetch_add(*e, Ordering::Relaxed);
            })
            .build_multi()
            .unwrap();
        let mut other = p.clone();
        let h = loom::thread::spawn(move || {
            other.publish(|e| *e = 2).unwrap();
        });
        p.publish(|e| *e = 1).unwrap();
        drop(p);
        h.join().unwrap();
        assert_eq!(procs.join().unwrap().processed, vec![2]);
        assert_eq!(sum.load(Ordering::Relaxed), 3);
    });
}
