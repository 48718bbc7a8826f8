//! Loom model of the multi-producer path: `fetch_add` claims, slot writes, lap numbers in
//! the availability buffer, the consumer's scan for the highest contiguous published
//! sequence, close by the last producer. Capacity 2, two producers.
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p ring --release --test loom_multi_producer`
#![cfg(loom)]

use handoff::{Consumer, Handoff, Producer, TrySendError};
use ring::{Blocking, BusySpin, RingHandoff, WaitStrategy};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.max_branches = 100_000;
    b.check(f);
}

/// Two producers send `per` messages each through a ring of `cap` slots; the consumer
/// receives everything, per-producer in order, then the end.
fn two_producers<W: WaitStrategy>(cap: usize, per: u64) {
    model(move || {
        let (mut txs, mut rx) = RingHandoff::<W>::new(cap).open::<u64>(2).unwrap();
        let b = txs.pop().unwrap();
        let a = txs.pop().unwrap();
        let hs: Vec<_> = [(0u64, a), (1, b)]
            .into_iter()
            .map(|(p, mut tx)| {
                loom::thread::spawn(move || {
                    for i in 0..per {
                        tx.send(p << 8 | i).expect("open");
                    }
                })
            })
            .collect();
        let mut next = [0u64; 2];
        while let Some(v) = rx.recv() {
            let (p, i) = ((v >> 8) as usize, v & 0xff);
            assert_eq!(i, next[p], "per-producer order");
            next[p] += 1;
        }
        assert_eq!(next, [per, per], "everything sent arrives before the end");
        for h in hs {
            h.join().unwrap();
        }
    });
}

#[test]
fn claim_publish_scan_busy_spin() {
    // Publishes land out of order; the consumer spins (each spin is a loom yield, so
    // larger spinning models explode: the lapping cases use the blocking strategy).
    two_producers::<BusySpin>(2, 1);
}

#[test]
fn claim_publish_scan_blocking() {
    // Condvar waits on both sides: a lost wake-up shows up as a deadlock.
    two_producers::<Blocking>(2, 1);
    // Producers wait for room and lap the ring.
    two_producers::<Blocking>(1, 1);
    two_producers::<Blocking>(2, 2);
}

/// `try_send`'s compare-exchange claim racing a `send`'s `fetch_add`.
#[test]
fn try_send_races_send() {
    model(|| {
        let (mut txs, mut rx) = RingHandoff::<BusySpin>::new(2).open::<u64>(2).unwrap();
        let mut b = txs.pop().unwrap();
        let mut a = txs.pop().unwrap();
        let h = loom::thread::spawn(move || {
            a.send(10).unwrap();
        });
        let tried = match b.try_send(20) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => false,
            Err(TrySendError::Closed(_)) => panic!("closed while open"),
        };
        drop(b);
        h.join().unwrap();
        let mut got = Vec::new();
        while let Some(v) = rx.recv() {
            got.push(v);
        }
        got.sort();
        assert_eq!(got, if tried { vec![10, 20] } else { vec![10] });
    });
}

/// An explicit close racing another producer's send: a send that returned `Ok` is
/// received; one that failed returns its message; the consumer ends either way.
#[test]
fn close_races_send() {
    model(|| {
        let (mut txs, mut rx) = RingHandoff::<BusySpin>::new(2).open::<u64>(2).unwrap();
        let mut b = txs.pop().unwrap();
        let a = txs.pop().unwrap();
        let h = loom::thread::spawn(move || b.send(7).is_ok());
        a.close();
        let mut got = Vec::new();
        while let Some(v) = rx.recv() {
            got.push(v);
        }
        let sent = h.join().unwrap();
        assert_eq!(got, if sent { vec![7] } else { vec![] });
        drop(a);
    });
}
