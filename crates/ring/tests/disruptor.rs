//! The Disruptor API: processing order, batches, multicast, shutdown, halt, panics, bad
//! input. Every check that could hang runs under the conformance watchdog.

use handoff::conformance::{watchdog_limit, within};
use ring::{
    Blocking, Builder, BusySpin, JavaBlocking, PublishError, RingError, Sleeping, WaitKind,
    WaitStrategy, Yielding,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

fn n_events() -> u64 {
    if cfg!(miri) {
        50
    } else {
        200_000
    }
}

fn ring_size() -> usize {
    if cfg!(miri) {
        8
    } else {
        1024
    }
}

#[derive(Default, Debug)]
struct Ev {
    producer: u32,
    value: u64,
}

/// One producer, one handler: every event in sequence order, `end_of_batch` on the last
/// of each batch, and the processor drains everything once the producer is dropped.
fn single_producer_in_order<W: WaitStrategy>() {
    within(&format!("single {:?}", W::KIND), watchdog_limit(), || {
        let n = n_events();
        let seen = Arc::new(Mutex::new((0u64, 0u64, 0u64))); // (count, batches, bad)
        let s2 = seen.clone();
        let mut expect = 0u64;
        let mut count = 0u64;
        let mut batches = 0u64;
        let mut bad = 0u64;
        let (mut p, procs) = Builder::<Ev, W>::new(ring_size(), Ev::default)
            .handler(move |e: &Ev, seq, eob| {
                if e.value != expect || seq != expect {
                    bad += 1;
                }
                expect += 1;
                count += 1;
                if eob {
                    batches += 1;
                    *s2.lock().unwrap() = (count, batches, bad);
                }
            })
            .build_single()
            .expect("valid");
        for i in 0..n {
            let seq = p.publish(|e| e.value = i).expect("publish");
            assert_eq!(seq, i);
        }
        drop(p);
        let report = procs.join().expect("join");
        assert_eq!(report.processed, vec![n]);
        let (count, batches, bad) = *seen.lock().unwrap();
        assert_eq!((count, bad), (n, 0), "every event once, in order");
        assert!(batches >= 1 && batches <= n, "end_of_batch marks batch ends: {batches}");
    });
}

#[test]
fn single_producer_in_order_all_strategies() {
    single_producer_in_order::<Blocking>();
    single_producer_in_order::<Sleeping>();
    single_producer_in_order::<Yielding>();
    single_producer_in_order::<BusySpin>();
    single_producer_in_order::<JavaBlocking>();
}

/// What a handler saw: (count, out of order).
type Seen = Arc<Mutex<Option<(u64, u64)>>>;

/// Four producers, two handlers: each handler sees every event once, per-producer FIFO.
fn multi_producer_multicast<W: WaitStrategy>() {
    within(&format!("multi {:?}", W::KIND), watchdog_limit(), || {
        const P: usize = 4;
        let per = n_events() / P as u64;
        let results: Vec<Seen> = (0..2).map(|_| Arc::new(Mutex::new(None))).collect();
        let mut b = Builder::<Ev, W>::new(ring_size(), Ev::default);
        for r in &results {
            let r = r.clone();
            let mut next = [0u64; P];
            let mut count = 0u64;
            let mut bad = 0u64;
            b = b.handler(move |e: &Ev, _seq, _eob| {
                let p = e.producer as usize;
                if e.value != next[p] {
                    bad += 1;
                }
                next[p] = e.value + 1;
                count += 1;
                *r.lock().unwrap() = Some((count, bad));
            });
        }
        let (p0, procs) = b.build_multi().expect("valid");
        let hs: Vec<_> = (0..P)
            .map(|id| {
                let mut p = p0.clone();
                thread::spawn(move || {
                    for v in 0..per {
                        p.publish(|e| {
                            e.producer = id as u32;
                            e.value = v;
                        })
                        .expect("publish");
                    }
                })
            })
            .collect();
        drop(p0);
        for h in hs {
            h.join().unwrap();
        }
        let report = procs.join().expect("join");
        assert_eq!(report.processed, vec![per * P as u64; 2]);
        for r in &results {
            assert_eq!(*r.lock().unwrap(), Some((per * P as u64, 0)));
        }
    });
}

#[test]
fn multi_producer_multicast_all_strategies() {
    multi_producer_multicast::<Blocking>();
    multi_producer_multicast::<Sleeping>();
    multi_producer_multicast::<Yielding>();
    multi_producer_multicast::<BusySpin>();
    multi_producer_multicast::<JavaBlocking>();
}

/// A handler that blocks until released, and says when it has started.
fn gated_handler(
    started: Arc<AtomicBool>,
    release: Arc<AtomicBool>,
    sum: Arc<AtomicU64>,
) -> impl FnMut(&Ev, u64, bool) + Send + 'static {
    move |e: &Ev, _seq, _eob| {
        started.store(true, Ordering::SeqCst);
        while !release.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        sum.fetch_add(e.value, Ordering::SeqCst);
    }
}

/// Fills a ring of 4 behind a held handler: `try_publish` reports `Full`, bad batch sizes
/// are refused, a batch of 3 publishes once there is room.
macro_rules! try_publish_check {
    ($build:ident, $label:expr) => {{
        let (started, release, sum): (Arc<AtomicBool>, Arc<AtomicBool>, Arc<AtomicU64>) =
            Default::default();
        let (mut p, procs) = Builder::<Ev, Yielding>::new(4, Ev::default)
            .handler(gated_handler(started.clone(), release.clone(), sum.clone()))
            .$build()
            .unwrap();
        assert_eq!(p.try_publish(|e| e.value = 1), Ok(0));
        while !started.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        // The held event keeps its slot until its batch ends: 3 more fit.
        for v in 2..=4 {
            p.try_publish(|e| e.value = v).expect("room");
        }
        assert_eq!(p.try_publish(|e| e.value = 6), Err(PublishError::Full), "{}", $label);
        assert_eq!(p.try_batch_publish(2, |e, _| e.value = 6), Err(PublishError::Full));
        assert_eq!(p.batch_publish(0, |_, _| {}), Err(PublishError::BadBatch { n: 0, size: 4 }));
        assert_eq!(p.batch_publish(5, |_, _| {}), Err(PublishError::BadBatch { n: 5, size: 4 }));
        release.store(true, Ordering::SeqCst);
        assert_eq!(p.batch_publish(3, |e, i| e.value = 100 + i as u64), Ok(6), "{}", $label);
        drop(p);
        let report = procs.join().expect("join");
        assert_eq!(report.processed, vec![7]);
        assert_eq!(sum.load(Ordering::SeqCst), 10 + 100 + 101 + 102);
    }};
}

#[test]
fn try_publish_and_batches_report_full_and_bad_sizes() {
    within("try_publish", watchdog_limit(), || {
        try_publish_check!(build_single, "single");
        try_publish_check!(build_multi, "multi");
    });
}

#[test]
fn halt_with_pending_events_is_reported() {
    within("halt", watchdog_limit(), || {
        let (started, release, sum): (Arc<AtomicBool>, Arc<AtomicBool>, Arc<AtomicU64>) =
            Default::default();
        let (mut p, procs) = Builder::<Ev, Blocking>::new(8, Ev::default)
            .handler(gated_handler(started.clone(), release.clone(), sum.clone()))
            .build_single()
            .unwrap();
        p.publish(|e| e.value = 1).unwrap();
        while !started.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        for v in 2..=4 {
            p.publish(|e| e.value = v).unwrap();
        }
        let rel = release.clone();
        let releaser = thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            rel.store(true, Ordering::SeqCst);
        });
        let err = procs.halt().expect_err("three events were left");
        releaser.join().unwrap();
        assert_eq!(err, RingError::Halted { pending: 3, processed: vec![1] });
        assert_eq!(err.to_string(), "halted with 3 published events not processed");
        assert_eq!(p.publish(|e| e.value = 9), Err(PublishError::Halted));
        assert_eq!(p.try_publish(|e| e.value = 9), Err(PublishError::Halted));
    });
}

#[test]
fn halt_when_drained_is_ok() {
    within("halt drained", watchdog_limit(), || {
        let count = Arc::new(AtomicU64::new(0));
        let c2 = count.clone();
        let (mut p, procs) = Builder::<Ev, Sleeping>::new(8, Ev::default)
            .handler(move |_e: &Ev, _s, _b| {
                c2.fetch_add(1, Ordering::SeqCst);
            })
            .build_single()
            .unwrap();
        for v in 0..5 {
            p.publish(|e| e.value = v).unwrap();
        }
        while count.load(Ordering::SeqCst) < 5 {
            thread::yield_now();
        }
        let report = procs.halt().expect("nothing pending");
        assert_eq!(report.processed, vec![5]);
    });
}

/// A panicking handler: the error names the sequence; producers blocked on the full ring
/// and the other handler stop; nothing hangs.
fn handler_panic<W: WaitStrategy>() {
    within(&format!("panic {:?}", W::KIND), watchdog_limit(), || {
        let (p0, procs) = Builder::<Ev, W>::new(4, Ev::default)
            .handler(|e: &Ev, _s, _b| {
                if e.value == 5 {
                    panic!("boom at value {}", e.value);
                }
            })
            .handler(|_e: &Ev, _s, _b| {})
            .build_multi()
            .unwrap();
        let hs: Vec<_> = (0..3)
            .map(|k| {
                let mut p = p0.clone();
                thread::spawn(move || {
                    for v in 0..1000u64 {
                        let v = if k == 0 { v } else { 1_000 + v };
                        if let Err(e) = p.publish(|e| e.value = v) {
                            return (v, e);
                        }
                    }
                    panic!("producer {k}: publishing never failed after the handler panic");
                })
            })
            .collect();
        drop(p0);
        for h in hs {
            let (_, e) = h.join().unwrap();
            assert_eq!(e, PublishError::Halted);
        }
        match procs.join() {
            Err(RingError::HandlerPanicked { handler, sequence, message }) => {
                assert_eq!(handler, 0);
                assert!(message.contains("boom at value 5"), "{message}");
                assert!(sequence >= 5, "value 5 is at sequence ≥ 5: {sequence}");
                let shown = RingError::HandlerPanicked { handler, sequence, message }.to_string();
                assert!(shown.contains(&format!("panicked at sequence {sequence}")), "{shown}");
            }
            other => panic!("expected the handler panic, got {other:?}"),
        }
    });
}

#[test]
fn handler_panic_is_reported_and_stops_everyone() {
    handler_panic::<Blocking>();
    handler_panic::<Sleeping>();
    handler_panic::<Yielding>();
    handler_panic::<BusySpin>();
    handler_panic::<JavaBlocking>();
}

#[test]
fn handler_panic_reports_exact_sequence() {
    within("panic seq", watchdog_limit(), || {
        let (mut p, procs) = Builder::<Ev, Yielding>::new(16, Ev::default)
            .handler(|_e: &Ev, s, _b| assert_ne!(s, 7, "bad event"))
            .build_single()
            .unwrap();
        for v in 0..10 {
            // Later publishes may fail once the handler has panicked.
            let _ = p.publish(|e| e.value = v);
        }
        drop(p);
        let err = procs.join().expect_err("panic");
        assert!(
            matches!(&err, RingError::HandlerPanicked { handler: 0, sequence: 7, message }
                if message.contains("bad event")),
            "{err:?}"
        );
    });
}

#[test]
fn bad_sizes_and_zero_consumers_are_clear_errors() {
    let e = Builder::<Ev, BusySpin>::new(1000, Ev::default)
        .handler(|_: &Ev, _, _| {})
        .build_single()
        .unwrap_err();
    assert_eq!(e.to_string(), "ring size 1000 is not a power of two; try 1024");
    let e = Builder::<Ev, BusySpin>::new(0, Ev::default)
        .handler(|_: &Ev, _, _| {})
        .build_multi()
        .unwrap_err();
    assert!(e.to_string().contains("ring size 0 is invalid"), "{e}");
    let e = Builder::<Ev, BusySpin>::new(1 << 31, Ev::default)
        .handler(|_: &Ev, _, _| {})
        .build_multi()
        .unwrap_err();
    assert!(e.to_string().contains("too large"), "{e}");
    let e = Builder::<Ev, BusySpin>::new(8, Ev::default).build_single().unwrap_err();
    assert_eq!(e, RingError::NoConsumers);
    assert!(e.to_string().contains("at least one event handler"), "{e}");
    assert!(ring::check_size(1).is_ok() && ring::check_size(65536).is_ok());
}

#[test]
fn adapter_rejects_bad_sizes_and_zero_producers() {
    use handoff::Handoff;
    use ring::RingHandoff;
    let err = RingHandoff::<Blocking>::new(1000).open::<u64>(1).unwrap_err();
    assert_eq!(err.to_string(), "ring size 1000 is not a power of two; try 1024");
    let err = RingHandoff::<Blocking>::new(0).open::<u64>(2).unwrap_err();
    assert!(err.to_string().contains("ring size 0 is invalid"), "{err}");
    let err = RingHandoff::<Blocking>::new(8).open::<u64>(0).unwrap_err();
    assert!(err.to_string().contains("at least one producer"), "{err}");
    let h = RingHandoff::<Sleeping>::new(1);
    assert_eq!(h.name(), "ring-sleeping");
    assert_eq!(h.capacity(), Some(1));
    assert!(h.open::<u64>(3).is_ok(), "capacity 1 works with many producers");
}

#[test]
fn wait_kind_names_round_trip_and_unknown_names_list_the_valid_ones() {
    for k in WaitKind::ALL {
        assert_eq!(k.name().parse::<WaitKind>(), Ok(k));
        assert_eq!(k.to_string(), k.name());
    }
    assert_eq!(WaitKind::ALL.len(), 5);
    assert_eq!(BusySpin::KIND, WaitKind::BusySpin);
    assert_eq!(JavaBlocking::KIND, WaitKind::JavaBlocking);
    use handoff::Handoff;
    assert_eq!(ring::RingHandoff::<JavaBlocking>::new(8).name(), "ring-java-blocking");
    let e = "spinny".parse::<WaitKind>().unwrap_err().to_string();
    assert_eq!(
        e,
        "unknown wait strategy \"spinny\"; valid: blocking, sleeping, yielding, busy-spin, \
         java-blocking"
    );
}

/// Producers blocked on a full ring (in each wait strategy) wake and fail, with their
/// message back, when the consumer is dropped.
fn blocked_producers_wake_when_consumer_drops<W: WaitStrategy>(producers: usize) {
    use handoff::{Consumer, Handoff, Producer, SendError};
    use ring::RingHandoff;
    within(&format!("consumer drop {:?} P={producers}", W::KIND), watchdog_limit(), move || {
        let (txs, mut rx) = RingHandoff::<W>::new(2).open::<u64>(producers).unwrap();
        let blocked = Arc::new(AtomicU64::new(0));
        let hs: Vec<_> = txs
            .into_iter()
            .enumerate()
            .map(|(p, mut tx)| {
                let blocked = blocked.clone();
                thread::spawn(move || {
                    blocked.fetch_add(1, Ordering::SeqCst);
                    for i in 0.. {
                        let v = (p as u64) << 32 | i;
                        if let Err(SendError(back)) = tx.send(v) {
                            assert_eq!(back, v, "the failed send returns its message");
                            return i;
                        }
                    }
                    unreachable!()
                })
            })
            .collect();
        assert!(rx.recv().is_some());
        while blocked.load(Ordering::SeqCst) < producers as u64 {
            thread::yield_now();
        }
        thread::sleep(Duration::from_millis(50)); // let them fill the ring and block
        drop(rx);
        for h in hs {
            h.join().expect("producer woke and failed");
        }
    });
}

#[test]
fn blocked_producers_wake_when_the_consumer_drops() {
    for p in [1, 3] {
        blocked_producers_wake_when_consumer_drops::<Blocking>(p);
        blocked_producers_wake_when_consumer_drops::<Sleeping>(p);
        blocked_producers_wake_when_consumer_drops::<Yielding>(p);
        blocked_producers_wake_when_consumer_drops::<BusySpin>(p);
        blocked_producers_wake_when_consumer_drops::<JavaBlocking>(p);
    }
}

/// `on_thread_start` runs once on each processor's own thread, with its handler's index,
/// before that thread handles any event.
#[test]
fn each_processor_thread_runs_the_start_hook_before_its_first_event() {
    within("on_thread_start", watchdog_limit(), || {
        let started: Arc<Mutex<Vec<(usize, thread::ThreadId)>>> = Arc::default();
        let s = started.clone();
        let handled = |i: usize| {
            let started = started.clone();
            let mut checked = false;
            move |_: &Ev, _seq, _eob| {
                if !checked {
                    let me = thread::current().id();
                    let seen = started.lock().unwrap();
                    assert!(seen.contains(&(i, me)), "handler {i} ran before its start hook");
                    checked = true;
                }
            }
        };
        let (mut p, procs) = Builder::<Ev, Blocking>::new(ring_size(), Ev::default)
            .on_thread_start(move |i| s.lock().unwrap().push((i, thread::current().id())))
            .handler(handled(0))
            .handler(handled(1))
            .build_single()
            .expect("valid");
        for i in 0..100 {
            p.publish(|e| e.value = i).expect("publish");
        }
        drop(p);
        assert_eq!(procs.join().expect("join").processed, vec![100, 100]);
        let mut seen: Vec<usize> = started.lock().unwrap().iter().map(|(i, _)| *i).collect();
        seen.sort();
        assert_eq!(seen, [0, 1], "one start per processor thread");
    });
}

/// A start hook that panics stops the ring as a panicking handler does: producers are
/// refused instead of waiting for room forever, and `join` reports the panic.
#[test]
fn a_start_hook_that_panics_stops_the_ring() {
    within("on_thread_start panics", watchdog_limit(), || {
        let (mut p, procs) = Builder::<Ev, Blocking>::new(ring_size(), Ev::default)
            .on_thread_start(|_| panic!("no CPU for the processor"))
            .handler(|_: &Ev, _seq, _eob| {})
            .build_single()
            .expect("valid");
        let refused =
            (0..ring_size() as u64 * 4).map(|i| p.publish(|e| e.value = i)).find_map(Result::err);
        assert_eq!(refused, Some(PublishError::Halted), "a full ring refuses, not hangs");
        drop(p);
        match procs.join() {
            Err(RingError::HandlerPanicked { handler: 0, message, .. }) => {
                assert!(message.contains("no CPU for the processor"), "{message}")
            }
            other => panic!("expected the hook's panic, got {other:?}"),
        }
    });
}
