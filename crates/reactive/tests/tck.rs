//! A TCK-like suite: the Reactive Streams rules the brief names, checked on every publisher
//! of the crate (sources, operators, publish_on, the sink): §1.1 demand, §1.3 serial
//! signals, §1.7 one terminal, §3.9 request(0), §3.12 cancel, §3.17 unbounded demand.
//! `publish_on` is checked on every pooled scheduler (`common::pools`).

mod common;

use common::{Log, Pool, Recorder};
use reactive::sink::Sink;
use reactive::{
    add_cap, Error, Flux, Mono, Overflow, Scheduler, SharedSubscription, Subscription,
    SyncSinglePublisher, UNBOUNDED,
};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// The multi-element publishers without a scheduler, each emitting `0..n` as `u64`.
const PLAIN: &[&str] =
    &["range", "from_iter", "map", "filter", "take", "limit_rate", "buffer", "sink"];

/// A publisher under test.
#[derive(Clone)]
struct Kind {
    name: String,
    publisher: Pub,
}

#[derive(Clone)]
enum Pub {
    /// One of [`PLAIN`].
    Plain(&'static str),
    /// `range(0, n).publish_on(scheduler, prefetch)`.
    PublishOn(Scheduler, usize),
}

/// The schedulers of one test: every pooled one, built once.
struct Ctx {
    schedulers: Vec<(Pool, Scheduler)>,
}

impl Ctx {
    fn new() -> Self {
        Ctx { schedulers: common::pools().map(|p| (p, p.build())).collect() }
    }

    /// Every multi-element publisher: the plain ones, then `publish_on` with prefetch 16
    /// and 1 on every pooled scheduler.
    fn kinds(&self) -> Vec<Kind> {
        let plain = PLAIN.iter().map(|&k| Kind { name: k.to_string(), publisher: Pub::Plain(k) });
        let on = [16, 1].into_iter().flat_map(|prefetch| {
            self.schedulers.iter().map(move |(p, s)| Kind {
                name: format!("publish_on({p}, {prefetch})"),
                publisher: Pub::PublishOn(s.clone(), prefetch),
            })
        });
        plain.chain(on).collect()
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        if !thread::panicking() {
            for (p, s) in &self.schedulers {
                common::dispose(&p.to_string(), s);
            }
        }
    }
}

/// Subscribes `rec` to publisher `kind` on a new thread (synchronous sources emit there,
/// and may wait there for demand).
fn start(kind: &Kind, n: u64, rec: Recorder) -> JoinHandle<()> {
    let kind = kind.publisher.clone();
    thread::spawn(move || match kind {
        Pub::PublishOn(s, prefetch) => Flux::range(0, n).publish_on(&s, prefetch).subscribe(rec),
        Pub::Plain(k) => plain(k, n, rec),
    })
}

fn plain(kind: &str, n: u64, rec: Recorder) {
    match kind {
        "range" => Flux::range(0, n).subscribe(rec),
        "from_iter" => Flux::from_iter((0..n).collect::<Vec<_>>()).subscribe(rec),
        "map" => Flux::range(1, n).map(|x| x - 1).subscribe(rec),
        "filter" => Flux::range(0, 2 * n).filter(|x| x % 2 == 0).map(|x| x / 2).subscribe(rec),
        "take" => Flux::range(0, n + 50).take(n).subscribe(rec),
        "limit_rate" => Flux::range(0, n).limit_rate(7).subscribe(rec),
        "buffer" => {
            Flux::range(0, n).on_backpressure_buffer(n as usize + 1, Overflow::Error).subscribe(rec)
        }
        "sink" => {
            let sink = Sink::unicast(rec);
            for i in 0..n {
                if sink.emit(i).is_err() {
                    return;
                }
            }
            sink.complete();
        }
        other => panic!("unknown kind {other}"),
    }
}

fn join_within(h: JoinHandle<()>, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !h.is_finished() {
        assert!(Instant::now() < deadline, "{what}: the subscribing thread did not return");
        thread::sleep(Duration::from_millis(1));
    }
    h.join().unwrap();
}

fn settle() {
    thread::sleep(Duration::from_millis(if cfg!(miri) { 5 } else { 30 }));
}

fn size() -> u64 {
    if cfg!(miri) {
        12
    } else {
        300
    }
}

fn clean(kind: &str, l: &Log) {
    assert!(l.violations.is_empty(), "{kind}: {:?}", l.violations);
    assert_eq!(l.subscribed, 1, "{kind}: on_subscribe exactly once (§1.9)");
}

#[test]
fn unbounded_demand_delivers_everything_in_order_then_one_complete() {
    let ctx = Ctx::new();
    let n = size();
    for k in ctx.kinds() {
        let kind = k.name.as_str();
        let (rec, log) = Recorder::unbounded();
        let h = start(&k, n, rec);
        log.wait_for(kind, |l| l.terminals() > 0);
        join_within(h, kind);
        settle();
        let l = log.snapshot();
        clean(kind, &l);
        assert_eq!(l.items, (0..n).collect::<Vec<_>>(), "{kind}: all, in order");
        assert_eq!((l.completes, l.errors.len()), (1, 0), "{kind}: exactly one on_complete");
    }
}

#[test]
fn never_more_on_next_than_requested_rule_1_1() {
    let ctx = Ctx::new();
    let n = if cfg!(miri) { 12 } else { 50 };
    for k in ctx.kinds() {
        let kind = k.name.as_str();
        let (rec, log) = Recorder::new(Some(3));
        let (rec, handles) = rec.detached();
        let h = start(&k, n, rec);
        let handle: SharedSubscription = handles.recv().unwrap();
        log.wait_for(kind, |l| l.items.len() >= 3);
        settle();
        assert_eq!(log.snapshot().items.len(), 3, "{kind}: requested 3");
        handle.request(4);
        log.wait_for(kind, |l| l.items.len() >= 7);
        settle();
        let l = log.snapshot();
        assert_eq!(l.items, (0..7).collect::<Vec<_>>(), "{kind}: requested 7 in all");
        assert_eq!(l.terminals(), 0, "{kind}: not finished yet");
        handle.request(UNBOUNDED);
        let l = log.wait_for(kind, |l| l.terminals() > 0);
        join_within(h, kind);
        clean(kind, &l);
        assert_eq!(l.items.len() as u64, n, "{kind}");
        assert_eq!(l.completes, 1, "{kind}");
    }
}

#[test]
fn synchronous_request_one_per_on_next() {
    let ctx = Ctx::new();
    let n = size();
    for k in ctx.kinds() {
        let kind = k.name.as_str();
        let (rec, log) = Recorder::new(Some(1));
        let h = start(&k, n, rec.per_next(1));
        let l = log.wait_for(kind, |l| l.terminals() > 0);
        join_within(h, kind);
        clean(kind, &l);
        assert_eq!(l.items, (0..n).collect::<Vec<_>>(), "{kind}");
        assert_eq!(l.completes, 1, "{kind}");
    }
}

#[test]
fn request_zero_signals_on_error_rule_3_9() {
    let ctx = Ctx::new();
    for k in ctx.kinds() {
        let kind = k.name.as_str();
        // At once.
        let (rec, log) = Recorder::new(Some(0));
        let h = start(&k, 20, rec);
        let l = log.wait_for(kind, |l| l.terminals() > 0);
        join_within(h, kind);
        settle();
        let l2 = log.snapshot();
        clean(kind, &l2);
        assert_eq!(l.errors, vec![Error::NonPositiveRequest], "{kind}");
        assert!(l2.items.is_empty() && l2.completes == 0, "{kind}: {l2:?}");
        // Mid-stream: request(5), then request(0) from the first on_next.
        let (rec, log) = Recorder::new(Some(5));
        let h = start(&k, 20, rec.per_next(0));
        log.wait_for(kind, |l| l.terminals() > 0);
        join_within(h, kind);
        settle();
        let l = log.snapshot();
        clean(kind, &l);
        assert_eq!(l.errors, vec![Error::NonPositiveRequest], "{kind}");
        assert_eq!(l.items, vec![0], "{kind}: the error comes right after the bad request");
    }
    assert!(Error::NonPositiveRequest.to_string().contains("n >= 1"));
}

#[test]
fn cancel_stops_emission_rule_3_12() {
    let ctx = Ctx::new();
    for k in ctx.kinds() {
        let kind = k.name.as_str();
        let (rec, log) = Recorder::unbounded();
        let h = start(&k, 1000, rec.cancel_after(5));
        log.wait_for(kind, |l| l.items.len() >= 5);
        join_within(h, kind);
        settle();
        let l = log.snapshot();
        clean(kind, &l);
        assert_eq!(l.items, (0..5).collect::<Vec<_>>(), "{kind}: nothing after cancel");
        assert_eq!(l.terminals(), 0, "{kind}: no terminal after cancel");
    }
}

#[test]
fn cancel_from_another_thread_releases_a_waiting_source() {
    let ctx = Ctx::new();
    for k in ctx.kinds() {
        let kind = k.name.as_str();
        let (rec, log) = Recorder::new(Some(2));
        let (rec, handles) = rec.detached();
        let h = start(&k, 1000, rec);
        let handle = handles.recv().unwrap();
        log.wait_for(kind, |l| l.items.len() >= 2);
        handle.cancel();
        join_within(h, kind);
        settle();
        let l = log.snapshot();
        clean(kind, &l);
        assert_eq!(l.items, vec![0, 1], "{kind}");
        assert_eq!(l.terminals(), 0, "{kind}");
    }
}

#[test]
fn unbounded_demand_is_additive_and_saturates() {
    assert_eq!(add_cap(UNBOUNDED, 1), UNBOUNDED);
    assert_eq!(add_cap(UNBOUNDED - 1, 10), UNBOUNDED);
    assert_eq!(add_cap(3, 4), 7);
    let ctx = Ctx::new();
    let n = size();
    for k in ctx.kinds() {
        let kind = k.name.as_str();
        // MAX requested again on every element, and MAX-1 + 10 through a detached handle.
        let (rec, log) = Recorder::new(Some(UNBOUNDED - 1));
        let (rec, handles) = rec.detached();
        let h = start(&k, n, rec.per_next(UNBOUNDED));
        handles.recv().unwrap().request(10);
        let l = log.wait_for(kind, |l| l.terminals() > 0);
        join_within(h, kind);
        clean(kind, &l);
        assert_eq!(l.items, (0..n).collect::<Vec<_>>(), "{kind}");
        assert_eq!(l.completes, 1, "{kind}");
    }
}

#[test]
fn signals_are_serial_under_concurrent_requests_rule_1_3() {
    // Requests arrive both from on_next (lent) and from another thread (detached) while a
    // worker drains (on the rayon pools, drains move between threads): the recorder flags
    // any overlap.
    let ctx = Ctx::new();
    let n = if cfg!(miri) { 30 } else { 20_000 };
    let serial = |k: &Kind| match k.publisher {
        Pub::PublishOn(_, prefetch) => prefetch == 16,
        Pub::Plain(p) => ["limit_rate", "buffer", "sink"].contains(&p),
    };
    for k in ctx.kinds().into_iter().filter(serial) {
        let kind = k.name.as_str();
        let (rec, log) = Recorder::new(Some(1));
        let (rec, handles) = rec.detached();
        let h = start(&k, n, rec.per_next(1));
        let handle = handles.recv().unwrap();
        let pusher = thread::spawn(move || {
            for _ in 0..n / 2 {
                handle.request(1);
            }
        });
        let l = log.wait_for(kind, |l| l.terminals() > 0);
        pusher.join().unwrap();
        join_within(h, kind);
        clean(kind, &l);
        assert_eq!(l.items, (0..n).collect::<Vec<_>>(), "{kind}");
    }
}

#[test]
fn single_value_publishers() {
    // Mono::just and the hand-written publisher: one element, one terminal, the rules.
    let hand = SyncSinglePublisher::new(7u64);
    for which in ["just", "hand"] {
        let run = |rec: Recorder| match which {
            "just" => Mono::just(7u64).subscribe(rec),
            _ => hand.subscribe(rec),
        };
        let (rec, log) = Recorder::unbounded();
        run(rec);
        let l = log.snapshot();
        clean(which, &l);
        assert_eq!((l.items.clone(), l.completes, l.errors.len()), (vec![7], 1, 0), "{which}");

        let (rec, log) = Recorder::new(Some(0));
        run(rec);
        let l = log.snapshot();
        assert_eq!((l.items.len(), l.errors.clone()), (0, vec![Error::NonPositiveRequest]));

        // No demand and no detached handle: nothing, and subscribe returns.
        let (rec, log) = Recorder::new(None);
        run(rec);
        let l = log.snapshot();
        assert_eq!((l.items.len(), l.terminals()), (0, 0), "{which}");

        // Cancel in on_next: the element arrives, no on_complete.
        let (rec, log) = Recorder::unbounded();
        run(rec.cancel_after(1));
        let l = log.snapshot();
        assert_eq!((l.items.clone(), l.terminals()), (vec![7], 0), "{which}");
    }
    // Detached, requested later from another thread: the publisher waits for it.
    let (rec, log) = Recorder::new(None);
    let (rec, handles) = rec.detached();
    let h = thread::spawn(move || SyncSinglePublisher::new(9u64).subscribe(rec));
    let handle = handles.recv().unwrap();
    settle();
    assert!(log.snapshot().items.is_empty());
    handle.request(1);
    join_within(h, "hand-written, late request");
    assert_eq!(log.snapshot().items, vec![9]);
    assert_eq!(Mono::just(5u64).block(Duration::from_secs(5)), Ok(Some(5)));
}

#[test]
fn take_filter_map_behave() {
    let got = Flux::range(0, 100)
        .filter(|x| x % 3 == 0)
        .map(|x| x * 10)
        .take(5)
        .collect_blocking(Duration::from_secs(5))
        .unwrap();
    assert_eq!(got, vec![0, 30, 60, 90, 120]);
    assert_eq!(Flux::range(0, 10).take(0).collect_blocking(Duration::from_secs(5)), Ok(vec![]));
    assert_eq!(
        Flux::range(0, 3).take(10).collect_blocking(Duration::from_secs(5)),
        Ok(vec![0, 1, 2])
    );
    assert_eq!(
        Flux::from_iter(vec!["a", "b"]).map(str::len).collect_blocking(Duration::from_secs(5)),
        Ok(vec![1, 1])
    );
}

#[test]
fn bad_settings_signal_a_clear_error() {
    let schedulers: Vec<_> = common::pools().map(|p| (p, p.build())).collect();
    let mut cases: Vec<(&str, Result<Vec<u64>, Error>)> = schedulers
        .iter()
        .map(|(_, s)| {
            let got = Flux::range(0, 5).publish_on(s, 0).collect_blocking(Duration::from_secs(5));
            ("prefetch must be at least 1", got)
        })
        .collect();
    cases.extend([
        (
            "limit_rate: prefetch must be at least 1",
            Flux::range(0, 5).limit_rate(0).collect_blocking(Duration::from_secs(5)),
        ),
        (
            "capacity must be at least 1",
            Flux::range(0, 5)
                .on_backpressure_buffer(0, Overflow::DropLatest)
                .collect_blocking(Duration::from_secs(5)),
        ),
    ]);
    for (want, got) in cases {
        match got {
            Err(Error::InvalidArgument(m)) => assert!(m.contains(want), "{m:?} lacks {want:?}"),
            other => panic!("expected InvalidArgument({want}), got {other:?}"),
        }
    }
    for (p, s) in &schedulers {
        common::dispose(&p.to_string(), s);
    }
    use handoff::Handoff;
    let Err(e) = reactive::ReactiveHandoff::new(0).open::<u64>(1) else {
        panic!("prefetch 0 must be refused")
    };
    assert!(e.0.contains("prefetch must be at least 1"), "{e}");
    let Err(e) = reactive::ReactiveHandoff::new(4).open::<u64>(0) else {
        panic!("0 producers must be refused")
    };
    assert!(e.0.contains("producers must be at least 1"), "{e}");
}

#[test]
fn schedulers_shut_down_cleanly_and_reject_afterwards() {
    let n = size();
    for p in
        common::MANY_WORKERS.iter().map(|p| p.with(3)).chain(common::ONE_WORKER.iter().copied())
    {
        let what = p.to_string();
        let s = p.build();
        assert_eq!(s.live_workers(), p.workers, "{what}");
        let sum: u64 = Flux::range(0, n)
            .publish_on(&s, 8)
            .collect_blocking(Duration::from_secs(10))
            .unwrap()
            .iter()
            .sum();
        assert_eq!(sum, n * (n - 1) / 2, "{what}");
        common::dispose(&what, &s);
        s.dispose().unwrap(); // twice is fine
        match Flux::range(0, 3).publish_on(&s, 8).collect_blocking(Duration::from_secs(5)) {
            Err(Error::Rejected(m)) => assert!(m.contains("shut down"), "{what}: {m}"),
            other => panic!("{what}: expected Rejected, got {other:?}"),
        }
        // Dropping the last handle shuts down too (Drop joins the workers).
        let s2 = p.build();
        let live = Scheduler::clone(&s2);
        assert_eq!(live.live_workers(), p.workers, "{what}");
        drop(s2);
        assert_eq!(live.live_workers(), p.workers, "{what}: a clone keeps it running");
        drop(live);
        // Dropped from inside one of its own drains (the subscriber holds the last
        // handle): the pool cannot join that thread, and must not wait for it (on rayon,
        // the workers exit only once that very job has returned).
        let s3 = p.build();
        let pipeline = Flux::range(0, n).publish_on(&s3, 8);
        let (tx, rx) = std::sync::mpsc::channel();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        pipeline.subscribe(reactive::ForEach::new(
            |_v: u64| {},
            move |r| {
                // The pipeline's own handle goes when `subscribe` returns: wait for that.
                wait.recv().unwrap();
                drop(s3);
                tx.send(r).unwrap(); // reached only if that drop returned
            },
        ));
        go.send(()).unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(Ok(())), "{what}: last drop");
    }
    assert_eq!(Scheduler::immediate().live_workers(), 0);
}
