//! The one conformance suite every variant passes.
//!
//! Each check takes a *factory*: `Fn(Option<usize>) -> H`, where `Some(c)` asks for a
//! channel bounded at `c` messages (a variant without a bound ignores it and reports
//! `capacity() == None`) and `None` asks for the variant's default. [`conformance_tests!`]
//! expands the whole suite into `#[test]` functions:
//!
//! ```text
//! handoff::conformance_tests!(|cap: Option<usize>| locked_queue::Locked::new(cap));
//! ```
//!
//! Every check that could hang runs under a watchdog and fails loudly with the name of
//! what stalled. Sizes shrink under Miri.

use crate::{Checker, Consumer, Handoff, Message, Producer, SendError, TryRecvError, TrySendError};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

/// Messages per producer in the FIFO check (at least 250,000 outside Miri).
pub fn messages_per_producer() -> u64 {
    if cfg!(miri) {
        60
    } else {
        250_000
    }
}

/// How long a check may run before the watchdog calls it hung.
pub fn watchdog_limit() -> Duration {
    if cfg!(miri) {
        Duration::from_secs(600)
    } else {
        Duration::from_secs(120)
    }
}

/// Runs `f` on its own thread and panics if it does not finish within `limit`.
pub fn within<R: Send + 'static>(
    what: &str,
    limit: Duration,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    let (tx, rx) = mpsc::channel();
    let handle = thread::Builder::new()
        .name(format!("check:{what}"))
        .spawn(move || {
            let r = f();
            let _ = tx.send(());
            r
        })
        .expect("spawn check thread");
    match rx.recv_timeout(limit) {
        Ok(()) => handle.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The thread panicked before sending: surface its panic.
            match handle.join() {
                Ok(r) => r,
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: did not finish within {limit:?} (hang or lost wake-up)")
        }
    }
}

/// No loss, no duplication, per-producer FIFO: `producers` threads send
/// [`messages_per_producer`] each; the consumer checks count, order and checksum.
/// Runs once with the variant's default settings and once bounded at 64 (so producers
/// block), receiving in batches.
pub fn fifo_no_loss<H: Handoff + 'static>(factory: impl Fn(Option<usize>) -> H, producers: usize) {
    for cap in [None, Some(64)] {
        let handoff = factory(cap);
        let name = handoff.name();
        let (txs, mut rx) = handoff.open::<Message<16>>(producers).expect("open");
        assert_eq!(
            txs.len(),
            producers,
            "{name}: open({producers}) must give {producers} producer handles"
        );
        let per = messages_per_producer();
        let what = format!("fifo {name} P={producers} cap={cap:?}");
        let verdict = within(&what, watchdog_limit(), move || {
            let senders: Vec<_> = txs
                .into_iter()
                .enumerate()
                .map(|(p, mut tx)| {
                    thread::spawn(move || {
                        for seq in 0..per {
                            tx.send(Message::<16>::new(p as u32, seq)).expect("send while open");
                        }
                    })
                })
                .collect();
            let mut checker = Checker::new(producers);
            while rx.recv_batch(256, |m| checker.observe(&m)) > 0 {}
            for s in senders {
                s.join().expect("producer panicked");
            }
            checker.verdict::<16>(&vec![per; producers])
        });
        assert!(verdict.ok(), "{what}: {}", verdict.describe());
    }
}

/// The same with single `recv` calls, interleaved with `try_recv`.
pub fn fifo_single_recv<H: Handoff + 'static>(
    factory: impl Fn(Option<usize>) -> H,
    producers: usize,
) {
    let handoff = factory(Some(16));
    let name = handoff.name();
    let (txs, mut rx) = handoff.open::<Message<64>>(producers).expect("open");
    let per = messages_per_producer() / 5;
    let what = format!("fifo-single {name} P={producers}");
    let verdict = within(&what, watchdog_limit(), move || {
        let senders: Vec<_> = txs
            .into_iter()
            .enumerate()
            .map(|(p, mut tx)| {
                thread::spawn(move || {
                    for seq in 0..per {
                        tx.send(Message::<64>::new(p as u32, seq)).expect("send while open");
                    }
                })
            })
            .collect();
        let mut checker = Checker::new(producers);
        let mut turn = 0u64;
        loop {
            turn += 1;
            if turn % 3 == 0 {
                match rx.try_recv() {
                    Ok(m) => checker.observe(&m),
                    Err(TryRecvError::Empty) => thread::yield_now(),
                    Err(TryRecvError::Ended) => break,
                }
            } else {
                match rx.recv() {
                    Some(m) => checker.observe(&m),
                    None => break,
                }
            }
        }
        for s in senders {
            s.join().expect("producer panicked");
        }
        checker.verdict::<64>(&vec![per; producers])
    });
    assert!(verdict.ok(), "{what}: {}", verdict.describe());
}

/// A bounded variant never holds more than its capacity: `try_send` fills it exactly to
/// capacity, then reports `Full`; during a 4-producer run every depth probe (producers
/// after each send, the consumer before each receive, a probe thread) stays within it.
/// An unbounded variant reports `capacity() == None` and its depth counts what it holds.
pub fn bounded_capacity_respected<H: Handoff + 'static>(factory: impl Fn(Option<usize>) -> H) {
    const CAP: usize = 8;
    let handoff = factory(Some(CAP));
    let name = handoff.name();
    match handoff.capacity() {
        None => {
            let (mut txs, rx) = handoff.open::<u64>(1).expect("open");
            let n = if cfg!(miri) { 40 } else { 1000 };
            for i in 0..n {
                txs[0].try_send(i).expect("an unbounded channel accepts without a consumer");
            }
            assert_eq!(rx.depth(), n as usize, "{name}: depth after {n} sends");
            return;
        }
        Some(cap) => {
            assert!(cap >= 1);
            let (mut txs, mut rx) = handoff.open::<u64>(1).expect("open");
            let mut accepted = 0;
            loop {
                match txs[0].try_send(accepted as u64) {
                    Ok(()) => accepted += 1,
                    Err(TrySendError::Full(v)) => {
                        assert_eq!(v, accepted as u64, "{name}: Full must return the message");
                        break;
                    }
                    Err(TrySendError::Closed(_)) => panic!("{name}: closed while open"),
                }
                assert!(accepted <= cap, "{name}: accepted {accepted} > capacity {cap}");
            }
            assert_eq!(accepted, cap, "{name}: try_send should fill exactly to capacity");
            assert_eq!(rx.depth(), cap, "{name}: depth when full");
            assert_eq!(rx.recv(), Some(0));
            txs[0].try_send(999).expect("room after one receive");
        }
    }

    let cap = factory(Some(CAP)).capacity().unwrap();
    let (txs, mut rx) = factory(Some(CAP)).open::<Message<16>>(4).expect("open");
    let per = messages_per_producer() / 10;
    let max_seen = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let what = format!("capacity probe {name}");
    let seen = max_seen.clone();
    let verdict = within(&what, watchdog_limit(), move || {
        let note = |d: usize, seen: &AtomicUsize| {
            seen.fetch_max(d, Ordering::Relaxed);
        };
        let senders: Vec<_> = txs
            .into_iter()
            .enumerate()
            .map(|(p, mut tx)| {
                let seen = seen.clone();
                thread::spawn(move || {
                    for seq in 0..per {
                        tx.send(Message::<16>::new(p as u32, seq)).expect("send");
                        note(tx.depth(), &seen);
                    }
                })
            })
            .collect();
        let mut checker = Checker::new(4);
        loop {
            note(rx.depth(), &seen);
            match rx.recv() {
                Some(m) => checker.observe(&m),
                None => break,
            }
        }
        for s in senders {
            s.join().expect("producer panicked");
        }
        done.store(true, Ordering::Relaxed);
        checker.verdict::<16>(&[per; 4])
    });
    assert!(verdict.ok(), "{what}: {}", verdict.describe());
    let max = max_seen.load(Ordering::Relaxed);
    assert!(max <= cap, "{what}: depth probe saw {max} > capacity {cap}");
}

/// Close: everything sent before `close` is received, then the end; a send after close
/// returns the message; dropping every producer ends the channel too; dropping the
/// consumer makes sends fail instead of blocking.
pub fn close_delivers_then_ends<H: Handoff + 'static>(factory: impl Fn(Option<usize>) -> H) {
    let n = if cfg!(miri) { 20 } else { 1000 };
    // Explicit close by one producer, with a bound that a producer could be blocked on.
    for cap in [None, Some(4)] {
        let handoff = factory(cap);
        let name = handoff.name();
        let (mut txs, mut rx) = handoff.open::<u64>(2).expect("open");
        let what = format!("close {name} cap={cap:?}");
        within(&what.clone(), watchdog_limit(), move || {
            let mut b = txs.pop().unwrap();
            let mut a = txs.pop().unwrap();
            let sender = thread::spawn(move || {
                for i in 0..n {
                    a.send(i).expect("send before close");
                }
                a.close();
                assert_eq!(
                    a.send(7777),
                    Err(SendError(7777)),
                    "send after close must return the message"
                );
                assert!(matches!(a.try_send(8888), Err(TrySendError::Closed(8888))));
                a
            });
            let mut got = Vec::new();
            while let Some(v) = rx.recv() {
                got.push(v);
            }
            let a = sender.join().expect("sender panicked");
            assert_eq!(
                got,
                (0..n).collect::<Vec<_>>(),
                "{what}: everything sent before close, in order"
            );
            assert_eq!(rx.try_recv(), Err(TryRecvError::Ended));
            assert_eq!(rx.recv(), None, "{what}: the end is sticky");
            // The other producer is closed too.
            assert_eq!(b.send(5), Err(SendError(5)));
            drop((a, b));
        });
    }

    // Dropping every producer ends the channel.
    let handoff = factory(None);
    let name = handoff.name();
    let (txs, mut rx) = handoff.open::<u64>(3).expect("open");
    within(&format!("disconnect {name}"), watchdog_limit(), move || {
        let hs: Vec<_> = txs
            .into_iter()
            .map(|mut tx| thread::spawn(move || tx.send(1).expect("send")))
            .collect();
        let mut sum = 0;
        while let Some(v) = rx.recv() {
            sum += v;
        }
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(sum, 3, "{name}: all three sends before the drop arrive");
    });

    // Dropping the consumer: sends fail (message returned) instead of blocking.
    let handoff = factory(Some(2));
    let name = handoff.name();
    let (mut txs, rx) = handoff.open::<u64>(1).expect("open");
    within(&format!("consumer gone {name}"), watchdog_limit(), move || {
        drop(rx);
        let mut tx = txs.pop().unwrap();
        let mut failed = None;
        for i in 0..16u64 {
            if let Err(SendError(v)) = tx.send(i) {
                failed = Some((i, v));
                break;
            }
        }
        let (i, v) =
            failed.unwrap_or_else(|| panic!("{name}: sends kept succeeding with no consumer"));
        assert_eq!(i, v, "{name}: the failed send returns its message");
    });
}

/// A message type that counts its drops per id.
#[derive(Debug)]
pub struct DropCounted {
    id: usize,
    counts: Arc<Vec<AtomicU8>>,
}

impl Drop for DropCounted {
    fn drop(&mut self) {
        self.counts[self.id].fetch_add(1, Ordering::Relaxed);
    }
}

/// A channel dropped while non-empty drops each message exactly once; so do received
/// messages, and messages returned by failed sends.
pub fn drops_each_message_once<H: Handoff + 'static>(factory: impl Fn(Option<usize>) -> H) {
    for cap in [None, Some(64)] {
        let handoff = factory(cap);
        let name = handoff.name();
        let n = if cfg!(miri) { 20 } else { 60 };
        let counts: Arc<Vec<AtomicU8>> = Arc::new((0..n + 1).map(|_| AtomicU8::new(0)).collect());
        let (mut txs, mut rx) = handoff.open::<DropCounted>(2).expect("open");
        for id in 0..n {
            txs[id % 2].try_send(DropCounted { id, counts: counts.clone() }).expect("room for 60");
        }
        for _ in 0..n / 3 {
            drop(rx.recv().expect("message"));
        }
        txs[0].close();
        let refused = txs[1].send(DropCounted { id: n, counts: counts.clone() });
        assert!(refused.is_err(), "{name}: send after close");
        drop(refused);
        drop(txs);
        drop(rx);
        for (id, c) in counts.iter().enumerate() {
            let c = c.load(Ordering::Relaxed);
            assert_eq!(c, 1, "{name} cap={cap:?}: message {id} dropped {c} times");
        }
    }
}

/// No lost wake-up: capacity 1, blocking send and receive, many producers, a bounded
/// stress loop under the watchdog.
pub fn no_lost_wakeup<H: Handoff + 'static>(factory: impl Fn(Option<usize>) -> H) {
    let producers = 6;
    let per = if cfg!(miri) { 30 } else { 10_000 };
    let rounds = if cfg!(miri) { 1 } else { 3 };
    for round in 0..rounds {
        let handoff = factory(Some(1));
        let name = handoff.name();
        let (txs, mut rx) = handoff.open::<Message<16>>(producers).expect("open");
        let what = format!("lost wake-up {name} round {round}");
        let verdict = within(&what, watchdog_limit(), move || {
            let hs: Vec<_> = txs
                .into_iter()
                .enumerate()
                .map(|(p, mut tx)| {
                    thread::spawn(move || {
                        for seq in 0..per {
                            tx.send(Message::<16>::new(p as u32, seq)).expect("send");
                        }
                    })
                })
                .collect();
            let mut checker = Checker::new(producers);
            while let Some(m) = rx.recv() {
                checker.observe(&m);
            }
            for h in hs {
                h.join().unwrap();
            }
            checker.verdict::<16>(&vec![per; producers])
        });
        assert!(verdict.ok(), "{what}: {}", verdict.describe());
    }
}

/// Expands the whole suite into `#[test]` functions for one factory
/// `Fn(Option<usize>) -> impl Handoff`. Use once per module.
#[macro_export]
macro_rules! conformance_tests {
    ($factory:expr) => {
        #[test]
        fn fifo_no_loss_p1() {
            $crate::conformance::fifo_no_loss($factory, 1);
        }
        #[test]
        fn fifo_no_loss_p2() {
            $crate::conformance::fifo_no_loss($factory, 2);
        }
        #[test]
        fn fifo_no_loss_p4() {
            $crate::conformance::fifo_no_loss($factory, 4);
        }
        #[test]
        fn fifo_no_loss_p8() {
            $crate::conformance::fifo_no_loss($factory, 8);
        }
        #[test]
        fn fifo_single_recv_p3() {
            $crate::conformance::fifo_single_recv($factory, 3);
        }
        #[test]
        fn bounded_capacity_respected() {
            $crate::conformance::bounded_capacity_respected($factory);
        }
        #[test]
        fn close_delivers_then_ends() {
            $crate::conformance::close_delivers_then_ends($factory);
        }
        #[test]
        fn drops_each_message_once() {
            $crate::conformance::drops_each_message_once($factory);
        }
        #[test]
        fn no_lost_wakeup() {
            $crate::conformance::no_lost_wakeup($factory);
        }
    };
}
