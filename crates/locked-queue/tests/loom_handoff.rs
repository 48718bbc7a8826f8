//! Loom models of the queue's wake-ups: the producer's skipped `signal_not_empty` (the
//! SeqCst handshake on `count` and `not_empty`'s waiter count), the consumer's wait,
//! `close`, and a producer's wait for room. One consumer throughout, so the take
//! cascade between consumers is not modelled. A lost wake-up leaves a thread waiting on a
//! condvar nobody will notify, which loom reports as a deadlock.
//!
//! Exhaustive (no preemption bound). The queue's `SeqCst` accesses
//! run with a leading `fence(SeqCst)` under loom (see `src/sync.rs`: loom models `SeqCst`
//! accesses as `AcqRel` and would report the handshake as broken without it). Weakening
//! either side of the handshake (the producer's waiter load or the consumer's re-check to
//! `Relaxed`/`Acquire`, or dropping the re-check) fails (a) and (c) with loom's deadlock
//! report; (b) still passes then, as `close` signals under the take lock unconditionally.
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p locked-queue --release --test loom_handoff`
#![cfg(loom)]

use locked_queue::LinkedBlockingQueue;
use loom::sync::Arc;
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    loom::model::Builder::new().check(f);
}

/// (a) One producer puts 2 while the consumer takes 2: both arrive, in order, whichever of
/// the consumer's paths (first look, wait) meets which 0 → 1 transition.
#[test]
fn one_producer_two_elements_in_order() {
    model(|| {
        let q = Arc::new(LinkedBlockingQueue::new());
        let p = {
            let q = q.clone();
            thread::spawn(move || {
                q.put(1u32).unwrap();
                q.put(2).unwrap();
            })
        };
        assert_eq!(q.take(), Some(1));
        assert_eq!(q.take(), Some(2));
        p.join().unwrap();
        assert!(q.is_empty());
    });
}

/// (b) The consumer waits on an empty queue; the producer puts 1, then closes: the element
/// comes first (`Yes` wins over `Closed`), then the end, whether the consumer wakes for the
/// put or only for `close`'s `signal_all`.
#[test]
fn put_then_close_delivers_then_ends() {
    model(|| {
        let q = Arc::new(LinkedBlockingQueue::new());
        let p = {
            let q = q.clone();
            thread::spawn(move || {
                q.put(7u32).unwrap();
                q.close();
            })
        };
        assert_eq!(q.take(), Some(7));
        assert_eq!(q.take(), None);
        p.join().unwrap();
    });
}

/// (c) Two producers race on the 0 → 1 transition: exactly one of them sees it and decides
/// about the signal; the consumer gets both elements.
#[test]
fn two_producers_one_consumer() {
    model(|| {
        let q = Arc::new(LinkedBlockingQueue::new());
        let ps: Vec<_> = (0..2u32)
            .map(|i| {
                let q = q.clone();
                thread::spawn(move || q.put(i).unwrap())
            })
            .collect();
        let mut got = [q.take().unwrap(), q.take().unwrap()];
        got.sort();
        assert_eq!(got, [0, 1]);
        for p in ps {
            p.join().unwrap();
        }
        assert!(q.is_empty());
    });
}

/// A bound of 1: the producer's second put waits on `not_full` until the consumer's take
/// from full signals it (`signal_not_full` under the put lock, counted waiters).
#[test]
fn bounded_producer_waits_for_room() {
    model(|| {
        let q = Arc::new(LinkedBlockingQueue::with_capacity(1).unwrap());
        let p = {
            let q = q.clone();
            thread::spawn(move || {
                q.put(1u32).unwrap();
                q.put(2).unwrap();
            })
        };
        assert_eq!(q.take(), Some(1));
        assert_eq!(q.take(), Some(2));
        p.join().unwrap();
    });
}
