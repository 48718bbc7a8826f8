//! publish_on: order, exact request accounting (prefetch, then 75% replenish batches),
//! downstream demand honoured; each on every pooled scheduler (`common::pools`).

mod common;

use common::{Recorder, MANY_WORKERS, ONE_WORKER};
use reactive::{
    Flux, Publisher, RemoteSubscription, Scheduler, SharedSubscription, Subscriber, Subscription,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

#[test]
fn keeps_order_on_every_scheduler_and_prefetch() {
    let n: u64 = if cfg!(miri) { 40 } else { 200_000 };
    let pools: Vec<_> = common::pools().map(|p| (p.to_string(), p.build())).collect();
    for (name, s) in std::iter::once(("immediate".to_string(), Scheduler::immediate())).chain(pools)
    {
        for prefetch in [1usize, 2, 7, 256] {
            // Tiny prefetches hand over one element per wake-up: keep those runs short.
            let n = if prefetch < 7 { n / 20 } else { n };
            let got = Flux::range(0, n).publish_on(&s, prefetch).collect_blocking(T).unwrap();
            assert_eq!(got.len() as u64, n, "{name} prefetch {prefetch}");
            assert!(
                got.iter().enumerate().all(|(i, &v)| i as u64 == v),
                "{name} {prefetch}: order"
            );
        }
        common::dispose(&name, &s);
    }
    // Two hops, from a one-thread scheduler to a multi-thread pool, in every combination.
    for one in ONE_WORKER {
        for many in MANY_WORKERS {
            let (a, b) = (one.build(), many.build());
            let got = Flux::range(0, n)
                .publish_on(&a, 16)
                .map(|x| x * 2)
                .publish_on(&b, 64)
                .collect_blocking(T)
                .unwrap();
            assert!(got.iter().enumerate().all(|(i, &v)| 2 * i as u64 == v), "{one} → {many}");
            common::dispose(&one.to_string(), &a);
            common::dispose(&many.to_string(), &b);
        }
    }
}

/// An upstream that records every `request(n)` and emits `0..n` on its subscribing thread
/// as demand allows.
#[derive(Clone)]
struct RecordingSource {
    n: u64,
    log: Arc<Mutex<Vec<u64>>>,
}

struct RecState {
    demand: Mutex<u64>,
    cv: Condvar,
    cancelled: AtomicBool,
    log: Arc<Mutex<Vec<u64>>>,
}

impl RecState {
    fn request(&self, n: u64) {
        self.log.lock().unwrap().push(n);
        let mut d = self.demand.lock().unwrap();
        *d = d.saturating_add(n);
        self.cv.notify_all();
    }
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        let _d = self.demand.lock().unwrap();
        self.cv.notify_all();
    }
}

struct RecSub(Arc<RecState>);
struct RecRemote(Arc<RecState>);

impl Subscription for RecSub {
    fn request(&self, n: u64) {
        self.0.request(n)
    }
    fn cancel(&self) {
        self.0.cancel()
    }
    fn detach(&self) -> SharedSubscription {
        SharedSubscription::new(Arc::new(RecRemote(self.0.clone())))
    }
}

impl RemoteSubscription for RecRemote {
    fn request(&self, n: u64) {
        self.0.request(n)
    }
    fn cancel(&self) {
        self.0.cancel()
    }
}

impl Publisher for RecordingSource {
    type Item = u64;
    fn subscribe<S: Subscriber<u64> + Send + 'static>(self, mut s: S) {
        let st = Arc::new(RecState {
            demand: Mutex::new(0),
            cv: Condvar::new(),
            cancelled: AtomicBool::new(false),
            log: self.log.clone(),
        });
        let sub = RecSub(st.clone());
        s.on_subscribe(&sub);
        for i in 0..self.n {
            {
                let mut d = st.demand.lock().unwrap();
                while *d == 0 && !st.cancelled.load(Ordering::SeqCst) {
                    d = st.cv.wait(d).unwrap();
                }
                if st.cancelled.load(Ordering::SeqCst) {
                    return;
                }
                *d -= 1;
            }
            s.on_next(i, &sub);
        }
        s.on_complete();
    }
}

fn recorded(n: u64, run: impl FnOnce(Flux<RecordingSource>) -> Vec<u64>) -> (Vec<u64>, Vec<u64>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let items = run(Flux(RecordingSource { n, log: log.clone() }));
    let requests = log.lock().unwrap().clone();
    (items, requests)
}

#[test]
fn requests_prefetch_once_then_replenishes_in_limit_batches() {
    for p in common::pools() {
        let s = p.build();
        // prefetch 256: limit 192. 1000 consumed → replenish after 192, 384, 576, 768, 960.
        let (items, reqs) = recorded(1000, |f| f.publish_on(&s, 256).collect_blocking(T).unwrap());
        assert_eq!(items, (0..1000).collect::<Vec<_>>(), "{p}");
        assert_eq!(reqs, vec![256, 192, 192, 192, 192, 192], "{p}");
        // prefetch 8: limit 6; 50 consumed → 8 replenishes.
        let (_, reqs) = recorded(50, |f| f.publish_on(&s, 8).collect_blocking(T).unwrap());
        assert_eq!(reqs, [vec![8], vec![6; 8]].concat(), "{p}");
        // prefetch 1 and 2: limit = prefetch (prefetch/4 == 0).
        let (_, reqs) = recorded(5, |f| f.publish_on(&s, 1).collect_blocking(T).unwrap());
        assert_eq!(reqs, vec![1; 6], "{p}");
        let (_, reqs) = recorded(5, |f| f.publish_on(&s, 2).collect_blocking(T).unwrap());
        assert_eq!(reqs, vec![2, 2, 2], "{p}");
        common::dispose(&p.to_string(), &s);
    }
    // limit_rate(100) is publish_on(immediate, 100): 100, then 75s.
    let (items, reqs) = recorded(400, |f| f.limit_rate(100).collect_blocking(T).unwrap());
    assert_eq!(items.len(), 400);
    assert_eq!(reqs, vec![100, 75, 75, 75, 75, 75]);
    // The default prefetch's limit.
    assert_eq!(reactive::replenish_limit(reactive::DEFAULT_PREFETCH), 192);
}

#[test]
fn downstream_demand_is_honoured_and_upstream_is_not_over_requested() {
    for p in common::pools() {
        let s = p.build();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (rec, out) = Recorder::new(Some(10));
        let (rec, handles) = rec.detached();
        let src = RecordingSource { n: 1000, log: log.clone() };
        let pub_s = s.clone();
        let h = thread::spawn(move || Flux(src).publish_on(&pub_s, 256).subscribe(rec));
        let handle = handles.recv().unwrap();
        out.wait_for("10 items", |l| l.items.len() >= 10);
        thread::sleep(Duration::from_millis(if cfg!(miri) { 5 } else { 50 }));
        assert_eq!(out.snapshot().items.len(), 10, "{p}: only the 10 requested");
        assert_eq!(*log.lock().unwrap(), vec![256], "{p}: 256 prefetched, nothing replenished");
        handle.request(182); // 192 consumed in all → one replenish of 192
        out.wait_for("192 items", |l| l.items.len() >= 192);
        let reqs = {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            loop {
                let r = log.lock().unwrap().clone();
                if r.len() >= 2 || std::time::Instant::now() > deadline {
                    break r;
                }
                thread::sleep(Duration::from_millis(1));
            }
        };
        assert_eq!(reqs, vec![256, 192], "{p}");
        handle.cancel();
        h.join().unwrap();
        let l = out.snapshot();
        assert_eq!(l.items, (0..192).collect::<Vec<_>>(), "{p}");
        assert_eq!(l.terminals(), 0, "{p}");
        common::dispose(&p.to_string(), &s);
    }
}

#[test]
fn no_lost_wakeup_when_the_upstream_pauses_between_bursts() {
    // The worker goes idle between bursts; each burst's first element must wake it (the
    // fence + WIP read on push pairs with the drain's re-check at exit). A lost wake-up
    // shows as a timeout here.
    let n: u64 = if cfg!(miri) { 60 } else { 5_000 };
    for p in common::pools() {
        let s = &p.build();
        for prefetch in [1usize, 16, 256] {
            let got = Flux::range(0, n)
                .map(|i| {
                    if i % 37 == 0 {
                        thread::sleep(Duration::from_micros(50));
                    }
                    i
                })
                .publish_on(s, prefetch)
                .collect_blocking(T)
                .unwrap_or_else(|e| panic!("{p} prefetch {prefetch}: {e}"));
            assert_eq!(got, (0..n).collect::<Vec<_>>(), "{p} prefetch {prefetch}");
        }
        common::dispose(&p.to_string(), s);
    }
}

#[test]
fn no_lost_wakeup_in_lockstep() {
    // The upstream emits element i only after element i-1 reached the subscriber, after a
    // pseudo-random pause: every element crosses the worker's idle transition at a
    // different moment. The source is `from_iter`, which stays on the subscribing thread
    // (a `range` would travel to the worker with its demand and wait there on itself). A
    // lost wake-up strands an element: the lockstep stalls (counted),
    // or with a small prefetch the source waits for demand forever (the watchdog fails the
    // test). Planting the fault (dropping the drain's exit re-check) made 3 of 6 runs fail.
    use std::sync::atomic::AtomicU64;
    let n: u64 = if cfg!(miri) { 40 } else { 20_000 };
    for (p, prefetch) in common::pools().flat_map(|p| [(p, 2usize), (p, 256)]) {
        let what = format!("lockstep publish_on({p}, {prefetch})");
        let limit = handoff::conformance::watchdog_limit();
        let (delivered, stalls) = handoff::conformance::within(&what.clone(), limit, move || {
            let single = p.build();
            let delivered = Arc::new(AtomicU64::new(0));
            let stalls = Arc::new(AtomicU64::new(0));
            let (d, st) = (delivered.clone(), stalls.clone());
            let mut x = 0x9E37_79B9_7F4A_7C15u64;
            let flux = Flux::from_iter(0..n).map(move |i| {
                let deadline = std::time::Instant::now() + Duration::from_secs(2);
                // After one stall, stop waiting: the test fails below, quickly.
                while d.load(Ordering::Acquire) < i && st.load(Ordering::Relaxed) == 0 {
                    if std::time::Instant::now() > deadline {
                        st.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                    std::hint::spin_loop();
                }
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                for _ in 0..(x % 200) {
                    std::hint::spin_loop();
                }
                i
            });
            let d = delivered.clone();
            let (tx, rx) = std::sync::mpsc::channel();
            flux.publish_on(&single, prefetch).subscribe(reactive::ForEach::new(
                move |_v: u64| {
                    d.fetch_add(1, Ordering::Release);
                },
                move |r| tx.send(r).unwrap(),
            ));
            assert_eq!(rx.recv_timeout(T), Ok(Ok(())), "{what}");
            common::dispose(&what, &single);
            (delivered.load(Ordering::Acquire), stalls.load(Ordering::Relaxed))
        });
        assert_eq!(delivered, n, "{p} prefetch {prefetch}");
        assert_eq!(stalls, 0, "{p} prefetch {prefetch}: lost wake-ups");
    }
}

#[test]
fn range_travels_to_the_worker_with_its_demand() {
    // Reactor's FluxRange emits on the thread that requests: behind publish_on, the first
    // prefetch is emitted on the subscribing thread, every replenish batch on the worker
    // (on a multi-thread rayon pool: on whichever thread runs that drain).
    use std::thread::ThreadId;
    let n: u64 = if cfg!(miri) { 40 } else { 10_000 };
    let prefetch = 8;
    for p in common::pools() {
        let s = p.build();
        let made_on: Arc<Mutex<Vec<ThreadId>>> = Arc::default();
        let log = made_on.clone();
        let got_on: Arc<Mutex<Vec<(u64, ThreadId)>>> = Arc::default();
        let got = got_on.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        Flux::range(0, n)
            .map(move |i| {
                log.lock().unwrap().push(thread::current().id());
                i
            })
            .publish_on(&s, prefetch)
            .subscribe(reactive::ForEach::new(
                move |v: u64| got.lock().unwrap().push((v, thread::current().id())),
                move |r| tx.send(r).unwrap(),
            ));
        assert_eq!(rx.recv_timeout(T), Ok(Ok(())), "{p}");
        let me = thread::current().id();
        let made = made_on.lock().unwrap();
        let got = got_on.lock().unwrap();
        assert_eq!(got.len() as u64, n, "{p}");
        assert!(got.iter().enumerate().all(|(i, &(v, _))| i as u64 == v), "{p}: order");
        assert!(got.iter().all(|&(_, t)| t != me), "{p}: on_next runs on the workers");
        let workers: std::collections::HashSet<ThreadId> = got.iter().map(|&(_, t)| t).collect();
        assert!(workers.len() <= p.workers, "{p}: {} drain threads", workers.len());
        // A prefix (the first prefetch, more if the worker's first request beat the
        // hand-over) is made on the subscribing thread, all the rest on the workers, never
        // back; with one worker thread, on that one.
        let k = made.iter().position(|&t| t != me).unwrap_or(made.len());
        assert!(k >= prefetch, "{p}: the first prefetch is made on the subscribing thread");
        assert!(
            made[k..].iter().all(|t| workers.contains(t)),
            "{p}: after the hand-over: the workers only"
        );
        if !cfg!(miri) {
            assert!(k < n as usize / 2, "{p}: the range travelled late: {k} of {n} made here");
        }
        drop((made, got));
        common::dispose(&p.to_string(), &s);
    }
}

#[test]
fn a_parked_range_is_dropped_on_cancel_and_resumes_on_request() {
    // Detached with no demand, `subscribe` returns at once (nothing waits); a request from
    // another thread emits there; a cancel drops the parked subscriber (§3.13).
    struct Hold {
        handle: Arc<Mutex<Option<SharedSubscription>>>,
        seen: Arc<Mutex<Vec<(u64, thread::ThreadId)>>>,
        dropped: Arc<AtomicBool>,
    }
    impl Drop for Hold {
        fn drop(&mut self) {
            self.dropped.store(true, Ordering::SeqCst);
        }
    }
    impl Subscriber<u64> for Hold {
        fn on_subscribe<S: Subscription>(&mut self, s: &S) {
            *self.handle.lock().unwrap() = Some(s.detach());
        }
        fn on_next<S: Subscription>(&mut self, v: u64, _s: &S) {
            self.seen.lock().unwrap().push((v, thread::current().id()));
        }
        fn on_error(&mut self, e: reactive::Error) {
            panic!("unexpected {e}")
        }
        fn on_complete(&mut self) {
            panic!("unexpected on_complete")
        }
    }
    let (handle, seen, dropped) =
        (Arc::default(), Arc::default(), Arc::new(AtomicBool::new(false)));
    let h = Hold { handle: Arc::clone(&handle), seen: Arc::clone(&seen), dropped: dropped.clone() };
    Flux::range(0, 100).subscribe(h);
    assert!(seen.lock().unwrap().is_empty());
    let sub = handle.lock().unwrap().take().unwrap();
    let s2 = sub.clone();
    let t = thread::spawn(move || {
        s2.request(3);
        thread::current().id()
    })
    .join()
    .unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![(0, t), (1, t), (2, t)]);
    assert!(!dropped.load(Ordering::SeqCst));
    sub.cancel();
    assert!(dropped.load(Ordering::SeqCst), "cancel drops the parked subscriber");
    sub.request(5);
    assert_eq!(seen.lock().unwrap().len(), 3, "nothing after cancel");
}

#[cfg(feature = "rayon")]
#[test]
fn rayon_drains_run_on_the_pools_threads_and_panics_are_reported() {
    // Measures nothing: every on_next of a publish_on(rayon) runs on one of that pool's
    // threads, named `rayon-worker-i`; a drain's panic is caught by rayon (the thread lives
    // on) and reported once by dispose.
    let s = Scheduler::rayon(2);
    assert_eq!(format!("{s:?}"), "Scheduler(rayon, 2 workers)");
    assert_eq!(s.live_workers(), 2);
    let n: u64 = if cfg!(miri) { 40 } else { 2_000 };
    /// Per element: rayon's thread index and the thread's name.
    type Seen = Vec<(Option<usize>, Option<String>)>;
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let log = seen.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    Flux::from_iter(0..n).publish_on(&s, 16).subscribe(reactive::ForEach::new(
        move |_v: u64| {
            let name = thread::current().name().map(str::to_string);
            log.lock().unwrap().push((rayon::current_thread_index(), name));
        },
        move |r| tx.send(r).unwrap(),
    ));
    assert_eq!(rx.recv_timeout(T), Ok(Ok(())));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len() as u64, n);
    for (index, name) in seen.iter() {
        let i = index.expect("on_next runs on a rayon thread");
        assert!(i < 2, "thread index {i}");
        assert_eq!(name.as_deref(), Some(format!("rayon-worker-{i}").as_str()));
    }
    assert_eq!(rayon::current_thread_index(), None, "the test thread is not the pool's");

    let (tx, rx) = std::sync::mpsc::channel();
    Flux::range(0, 10).publish_on(&s, 4).subscribe(reactive::ForEach::new(
        move |v: u64| {
            tx.send(v).unwrap();
            if v == 1 {
                panic!("planted panic in a rayon drain (expected by this test)");
            }
        },
        |_| {},
    ));
    assert_eq!(rx.recv_timeout(T), Ok(0));
    assert_eq!(rx.recv_timeout(T), Ok(1));
    let e = s.dispose().expect_err("the planted panic is reported");
    assert!(e.contains("panicked") && e.contains("rayon-worker-"), "{e}");
    assert_eq!(s.live_workers(), 0, "every thread joined");
    assert_eq!(s.dispose(), Ok(()), "reported once");
    match Flux::range(0, 3).publish_on(&s, 8).collect_blocking(T) {
        Err(reactive::Error::Rejected(m)) => assert!(m.contains("shut down"), "{m}"),
        other => panic!("expected Rejected, got {other:?}"),
    }
}
