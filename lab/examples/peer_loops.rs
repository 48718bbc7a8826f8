//! Bisects what the lab's harness does to a reference peer: the same peer run in a plain
//! loop over its own API and in the lab's harness, with one difference switched at a time
//! (message type, the consumer's work, pinning, the adapter, the harness around it),
//! interleaved round by round and printed as ratios to the plain loop of the same round.
//!
//! `cargo run --release -p lab --example peer_loops -- PEER P MESSAGES ROUNDS [CASES]`
//! (PEER: crossbeam, std-mpsc or disruptor-rs).

use handoff::{Checker, Message};
use lab::machine::placement::{self, Placement};
use lab::measure::calibration::CONTRACT_LOOP;
use lab::measure::harness::{run_counted, CellSpec};
use lab::measure::peers::{
    ChanRecvTimeoutError, ChanTryRecvError, ChanTrySendError, Channel, ChannelHandoff,
    CrossbeamHandoff, DisruptorRsHandoff, StdMpscHandoff,
};
use std::sync::{Arc, Barrier};
use std::time::Duration;
use std::time::Instant;

const CAP: usize = 64 * 1024;

/// A message a plain loop moves: 16 bytes, or the lab's own.
trait Msg: Send + 'static {
    fn make(p: u32, seq: u64) -> Self;
}
impl Msg for [u64; 2] {
    #[inline]
    fn make(p: u32, seq: u64) -> Self {
        [p as u64, seq]
    }
}
impl Msg for Message<16> {
    #[inline]
    fn make(p: u32, seq: u64) -> Self {
        Message::new(p, seq)
    }
}

/// What the consumer does per message.
trait Sink<M>: Default {
    fn take(&mut self, m: M);
}
#[derive(Default)]
struct Sum(u64);
impl Sink<[u64; 2]> for Sum {
    #[inline]
    fn take(&mut self, m: [u64; 2]) {
        self.0 = self.0.wrapping_add(m[1]);
    }
}
impl Sink<Message<16>> for Sum {
    #[inline]
    fn take(&mut self, m: Message<16>) {
        self.0 = self.0.wrapping_add(m.seq);
    }
}
struct Check(Checker);
impl Default for Check {
    fn default() -> Self {
        Check(Checker::new(64))
    }
}
impl Sink<Message<16>> for Check {
    #[inline]
    fn take(&mut self, m: Message<16>) {
        self.0.observe(&m);
    }
}

fn pin(cpus: &Option<Vec<usize>>, t: usize) {
    if let Some(c) = cpus {
        placement::pin_current(c[t]).expect("pin");
    }
}

/// crossbeam or std: `send` per message, `recv` until disconnected.
fn chan<M: Msg, S: Sink<M>>(std: bool, p: usize, n: u64, pinned: bool) -> f64 {
    let cpus = if pinned { placement::plan(Placement::Auto, p + 1).unwrap() } else { None };
    let barrier = Arc::new(Barrier::new(p + 1));
    enum Tx<M> {
        C(crossbeam_channel::Sender<M>),
        S(std::sync::mpsc::SyncSender<M>),
    }
    let (txs, rx_c, rx_s): (Vec<Tx<M>>, _, _) = if std {
        let (tx, rx) = std::sync::mpsc::sync_channel::<M>(CAP);
        ((0..p).map(|_| Tx::S(tx.clone())).collect(), None, Some(rx))
    } else {
        let (tx, rx) = crossbeam_channel::bounded::<M>(CAP);
        ((0..p).map(|_| Tx::C(tx.clone())).collect(), Some(rx), None)
    };
    let per = n / p as u64;
    let hs: Vec<_> = txs
        .into_iter()
        .enumerate()
        .map(|(i, tx)| {
            let (b, cpus) = (barrier.clone(), cpus.clone());
            std::thread::spawn(move || {
                pin(&cpus, i + 1);
                b.wait();
                let t = Instant::now();
                for s in 0..per {
                    let m = M::make(i as u32, s);
                    match &tx {
                        Tx::C(tx) => tx.send(m).ok().unwrap(),
                        Tx::S(tx) => tx.send(m).ok().unwrap(),
                    }
                }
                t
            })
        })
        .collect();
    let cpus2 = cpus.clone();
    let c = std::thread::spawn(move || {
        pin(&cpus2, 0);
        let mut sink = S::default();
        barrier.wait();
        let t = Instant::now();
        if let Some(rx) = rx_c {
            for m in rx.iter() {
                sink.take(m);
            }
        } else if let Some(rx) = rx_s {
            for m in rx.iter() {
                sink.take(m);
            }
        }
        std::hint::black_box(&mut sink);
        (t, Instant::now())
    });
    let mut t0: Vec<Instant> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    let (tc, end) = c.join().unwrap();
    t0.push(tc);
    let start = t0.into_iter().min().unwrap();
    (per * p as u64) as f64 / end.duration_since(start).as_secs_f64() / 1e6
}

/// The disruptor crate: its own processor thread (busy-spin) or, with `poller`, the
/// lab's adapter shape (event poller, spin 64 then yield).
fn disruptor_own<M: Msg + Default + Copy + Sync, S: Sink<M> + Send + 'static>(
    p: usize,
    n: u64,
    pinned: bool,
) -> f64 {
    use disruptor::{build_multi_producer, build_single_producer, Producer};
    // The lab's calibration waits so (`measure::calibration`).
    use disruptor::BusySpinWithSpinLoopHint as BusySpin;
    let cpus = if pinned { placement::plan(Placement::Auto, p + 1).unwrap() } else { None };
    let per = n / p as u64;
    let total = per * p as u64;
    let done = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let end = Arc::new(std::sync::Mutex::new(None));
    let (d2, e2) = (done.clone(), end.clone());
    let mut sink = S::default();
    let mut seen = 0u64;
    let handler = move |e: &M, _seq: i64, _eob: bool| {
        sink.take(*e);
        seen += 1;
        if seen == total {
            *e2.lock().unwrap() = Some(Instant::now());
            d2.store(1, std::sync::atomic::Ordering::Release);
        }
    };
    let barrier = Arc::new(Barrier::new(p));
    let mut ts = Vec::new();
    std::thread::scope(|sc| {
        let spawn = |i: usize, mut prod: Box<dyn FnMut(M) + Send>| {
            let (b, cpus) = (barrier.clone(), cpus.clone());
            sc.spawn(move || {
                pin(&cpus, i + 1);
                b.wait();
                let t = Instant::now();
                for s in 0..per {
                    prod(M::make(i as u32, s));
                }
                t
            })
        };
        let mut hs = Vec::new();
        if p == 1 {
            let mut prod = build_single_producer(CAP, M::default, BusySpin)
                .handle_events_with(handler)
                .build();
            hs.push(spawn(0, Box::new(move |m| prod.publish(|e| *e = m))));
        } else {
            let prod =
                build_multi_producer(CAP, M::default, BusySpin).handle_events_with(handler).build();
            for i in 0..p {
                let mut pr = prod.clone();
                hs.push(spawn(i, Box::new(move |m| pr.publish(|e| *e = m))));
            }
            drop(prod);
        }
        for h in hs {
            ts.push(h.join().unwrap());
        }
    });
    while done.load(std::sync::atomic::Ordering::Acquire) == 0 {
        std::thread::yield_now();
    }
    let end = end.lock().unwrap().unwrap();
    total as f64 / end.duration_since(ts.into_iter().min().unwrap()).as_secs_f64() / 1e6
}

/// The lab's adapter in a plain loop (no harness around it): `send` per message,
/// `recv_batch(batch)` into the checker, every message counted; threads pinned as the lab
/// places them when `pinned`.
fn adapter_plain<H: handoff::Handoff>(h: &H, p: usize, n: u64, batch: usize, pinned: bool) -> f64 {
    adapter_shaped::<H, false, false, false>(h, p, n, batch, pinned)
}

/// [`adapter_plain`] with one of the harness's own shapes switched on at a time:
/// `PRODUCERS_FIRST` spawns the producers before the consumer (the harness's order);
/// `HARNESS_TAKE` has the consumer take each message by reference and test its `sampled`
/// flag, as the harness's `take` does; `CHECKED_SEND` stops a producer at a failed send, as
/// the harness's `produce` does.
fn adapter_shaped<
    H: handoff::Handoff,
    const PRODUCERS_FIRST: bool,
    const HARNESS_TAKE: bool,
    const CHECKED_SEND: bool,
>(
    h: &H,
    p: usize,
    n: u64,
    batch: usize,
    pinned: bool,
) -> f64 {
    use handoff::{Consumer, Producer};
    let cpus = if pinned { placement::plan(Placement::Auto, p + 1).unwrap() } else { None };
    let cpus2 = cpus.clone();
    let per = n / p as u64;
    let (txs, mut rx) = h.open::<Message<16>>(p).expect("open");
    let barrier = Arc::new(Barrier::new(p + 1));
    let b2 = barrier.clone();
    let consumer = move || {
        pin(&cpus2, 0);
        let mut check = Check::default();
        let mut sampled = 0u64;
        b2.wait();
        let t = Instant::now();
        let mut got = 0u64;
        loop {
            let k = if HARNESS_TAKE {
                rx.recv_batch(batch, |m: Message<16>| {
                    let m = &m;
                    check.0.observe(m);
                    if m.sampled != 0 {
                        sampled = cold_count(sampled);
                    }
                })
            } else {
                rx.recv_batch(batch, |m| check.take(m))
            };
            if k == 0 {
                break;
            }
            got += k as u64;
        }
        let end = Instant::now();
        assert_eq!(got, n / p as u64 * p as u64, "plain lost messages");
        assert_eq!(sampled, 0);
        (t, end)
    };
    let producer = |i: usize, mut tx: <H as handoff::Handoff>::Producer<Message<16>>| {
        let (b, cpus) = (barrier.clone(), cpus.clone());
        std::thread::spawn(move || {
            pin(&cpus, i + 1);
            b.wait();
            let t = Instant::now();
            for s in 0..per {
                if CHECKED_SEND {
                    if tx.send(Message::<16>::new(i as u32, s)).is_err() {
                        break;
                    }
                } else {
                    let _ = tx.send(Message::<16>::new(i as u32, s));
                }
            }
            t
        })
    };
    let (c, hs) = if PRODUCERS_FIRST {
        let hs: Vec<_> = txs.into_iter().enumerate().map(|(i, tx)| producer(i, tx)).collect();
        (std::thread::spawn(consumer), hs)
    } else {
        let c = std::thread::spawn(consumer);
        (c, txs.into_iter().enumerate().map(|(i, tx)| producer(i, tx)).collect())
    };
    let mut ts: Vec<Instant> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    let (t, end) = c.join().unwrap();
    ts.push(t);
    (per * p as u64) as f64 / end.duration_since(ts.into_iter().min().unwrap()).as_secs_f64() / 1e6
}

/// The harness's sampled-message record stands out of line, as this does.
#[cold]
#[inline(never)]
fn cold_count(n: u64) -> u64 {
    n + 1
}

fn spec(variant: &str, p: usize, placement: Placement, batch: usize, sample: u64) -> CellSpec {
    serde_json::from_value(serde_json::json!({
        "variant": variant, "wait": null, "producers": p, "messages": 0, "warmup": 0, "runs": 1,
        "ring_size": CAP, "capacity": null, "prefetch": 256, "payload": 16,
        "sample_every": sample, "batch": batch, "sampling_ab_pairs": 0, "heap_messages": 1,
        "trace_messages": 1, "placement": placement.name(),
    }))
    .expect("spec")
}

fn lab<H: handoff::Handoff>(h: &H, s: &CellSpec, n: u64) -> f64 {
    // `LAB_PEER_COUNTED=1`: with the perf counters a timed fork opens around each run.
    let counted = std::env::var_os("LAB_PEER_COUNTED").is_some_and(|v| v == "1");
    let (r, _) = run_counted::<H, 16, false>(h, s, n, s.sample_every, counted).expect("run");
    assert!(r.valid, "{}", r.verdict);
    n as f64 / r.ms / 1e3
}

/// `std::sync::mpsc::sync_channel` behind the lab's channel adapter with one of its two
/// differences from the crate's own loop switched off: `COUNTED` false claims a length
/// (so the adapter keeps no per-message counters; depth then reads 0), `BLOCKING` true
/// makes the adapter's wait on an empty channel the crate's own `recv` (no timeout).
struct StdAs<const COUNTED: bool, const BLOCKING: bool>;

impl<const COUNTED: bool, const BLOCKING: bool> Channel for StdAs<COUNTED, BLOCKING> {
    const NAME: &'static str = "std-mpsc";
    const HAS_LEN: bool = !COUNTED;
    type Tx<T: Send + 'static> = std::sync::mpsc::SyncSender<T>;
    type Rx<T: Send + 'static> = std::sync::mpsc::Receiver<T>;
    fn bounded<T: Send + 'static>(cap: usize) -> (Self::Tx<T>, Self::Rx<T>) {
        std::sync::mpsc::sync_channel(cap)
    }
    fn send<T: Send + 'static>(tx: &Self::Tx<T>, m: T) -> Result<(), T> {
        tx.send(m).map_err(|e| e.0)
    }
    fn try_send<T: Send + 'static>(tx: &Self::Tx<T>, m: T) -> Result<(), ChanTrySendError<T>> {
        tx.try_send(m).map_err(|e| match e {
            std::sync::mpsc::TrySendError::Full(m) => ChanTrySendError::Full(m),
            std::sync::mpsc::TrySendError::Disconnected(m) => ChanTrySendError::Gone(m),
        })
    }
    fn recv_timeout<T: Send + 'static>(
        rx: &Self::Rx<T>,
        timeout: Duration,
    ) -> Result<T, ChanRecvTimeoutError> {
        if BLOCKING {
            return rx.recv().map_err(|_| ChanRecvTimeoutError::Gone);
        }
        rx.recv_timeout(timeout).map_err(|e| match e {
            std::sync::mpsc::RecvTimeoutError::Timeout => ChanRecvTimeoutError::Timeout,
            std::sync::mpsc::RecvTimeoutError::Disconnected => ChanRecvTimeoutError::Gone,
        })
    }
    fn try_recv<T: Send + 'static>(rx: &Self::Rx<T>) -> Result<T, ChanTryRecvError> {
        rx.try_recv().map_err(|e| match e {
            std::sync::mpsc::TryRecvError::Empty => ChanTryRecvError::Empty,
            std::sync::mpsc::TryRecvError::Disconnected => ChanTryRecvError::Gone,
        })
    }
    fn tx_len<T: Send + 'static>(_: &Self::Tx<T>) -> usize {
        0
    }
    fn rx_len<T: Send + 'static>(_: &Self::Rx<T>) -> usize {
        0
    }
}

/// A case of the bisect: its name and one run's rate, M msgs/s.
type Case = (&'static str, Box<dyn Fn() -> f64>);

/// The disruptor crate's cases: its own loops, the adapter's plain loops, the harness.
fn disruptor_cases(p: usize, n: u64) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    let (auto, kernel) = (Placement::Auto, Placement::Kernel);
    cases.push(("own u64x2 sum", Box::new(move || disruptor_own::<[u64; 2], Sum>(p, n, false))));
    cases.push(("own Msg sum", Box::new(move || disruptor_own::<Message<16>, Sum>(p, n, false))));
    cases.push((
        "own Msg check",
        Box::new(move || disruptor_own::<Message<16>, Check>(p, n, false)),
    ));
    cases.push((
        "own Msg check pin",
        Box::new(move || disruptor_own::<Message<16>, Check>(p, n, true)),
    ));
    let h = DisruptorRsHandoff::new(Some(CAP));
    let h2 = h.clone();
    let h3 = h.clone();
    cases.push(("adapter plain", Box::new(move || adapter_plain(&h2, p, n, 1024, false))));
    cases.push(("adapter plain pin 64Ki", Box::new(move || adapter_plain(&h3, p, n, CAP, true))));
    for (name, pl, b, smp) in [
        ("lab kernel b1024 s0", kernel, 1024, 0),
        ("lab auto b1024 s0", auto, 1024, 0),
        ("lab auto b1024 s1024", auto, 1024, 1024),
        ("lab auto b64Ki s0", auto, CAP, 0),
        ("lab auto b64Ki s1024", auto, CAP, 1024),
        ("lab kernel b64Ki s1024", kernel, CAP, 1024),
    ] {
        let (h, s) = (h.clone(), spec("disruptor-rs", p, pl, b, smp));
        cases.push((name, Box::new(move || lab(&h, &s, n))));
    }
    // 12..: the plain loop pinned at 64Ki a batch (case 5) with one harness shape each.
    let (h4, h5, h6) = (h.clone(), h.clone(), h.clone());
    cases.push((
        "plain pin producers first",
        Box::new(move || adapter_shaped::<_, true, false, false>(&h4, p, n, CAP, true)),
    ));
    cases.push((
        "plain pin harness take",
        Box::new(move || adapter_shaped::<_, false, true, false>(&h5, p, n, CAP, true)),
    ));
    cases.push((
        "plain pin checked send",
        Box::new(move || adapter_shaped::<_, false, false, true>(&h6, p, n, CAP, true)),
    ));
    // 15..: the lab's calibration loops themselves, pinned as the lab pins, stamps every
    // 1,024th: the crate's own loop, and the adapter through the contract (64Ki a batch,
    // the lab's default).
    for (name, kind) in [("cal own", "disruptor-rs"), ("cal contract", CONTRACT_LOOP)] {
        let s = spec("disruptor-rs", p, auto, CAP, 1024);
        cases.push((name, Box::new(move || cal(kind, &s, n))));
    }
    cases
}

/// One run of a lab calibration loop, M msgs/s.
fn cal(kind: &str, s: &CellSpec, n: u64) -> f64 {
    let r = lab::measure::calibration::bisect_run(kind, s, n).expect("run");
    assert!(r.valid, "{}", r.verdict);
    n as f64 / r.ms / 1e3
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let peer = a.get(1).map(String::as_str).unwrap_or("crossbeam").to_string();
    let p: usize = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let n: u64 = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(1 << 22);
    let rounds: usize = a.get(4).and_then(|s| s.parse().ok()).unwrap_or(5);
    let std_ = peer == "std-mpsc";
    let mut cases: Vec<Case> = Vec::new();
    let auto = Placement::Auto;
    let kernel = Placement::Kernel;
    if peer == "disruptor-rs" {
        cases = disruptor_cases(p, n);
    } else {
        cases.push(("own u64x2 sum", Box::new(move || chan::<[u64; 2], Sum>(std_, p, n, false))));
        cases
            .push(("own u64x2 sum pin", Box::new(move || chan::<[u64; 2], Sum>(std_, p, n, true))));
        cases.push(("own Msg sum", Box::new(move || chan::<Message<16>, Sum>(std_, p, n, false))));
        cases.push((
            "own Msg check",
            Box::new(move || chan::<Message<16>, Check>(std_, p, n, false)),
        ));
        cases.push((
            "own Msg check pin",
            Box::new(move || chan::<Message<16>, Check>(std_, p, n, true)),
        ));
        for (name, pl, b, smp) in [
            ("lab kernel b1024 s0", kernel, 1024, 0),
            ("lab kernel b1 s0", kernel, 1, 0),
            ("lab auto b1024 s1024", auto, 1024, 1024),
            ("lab auto b1 s1024", auto, 1, 1024),
        ] {
            let s = spec(&peer, p, pl, b, smp);
            if std_ {
                let h = StdMpscHandoff::new(Some(CAP));
                cases.push((name, Box::new(move || lab(&h, &s, n))));
            } else {
                let h = CrossbeamHandoff::new(Some(CAP));
                cases.push((name, Box::new(move || lab(&h, &s, n))));
            }
        }
        // 9..: the lab's calibration loops themselves, pinned as the lab pins, stamps every
        // 1,024th: the crate's own loop, and the adapter through the contract (64Ki a batch).
        for (name, kind) in [("cal own", peer.clone()), ("cal contract", CONTRACT_LOOP.to_string())]
        {
            let s = spec(&peer, p, auto, CAP, 1024);
            cases.push((name, Box::new(move || cal(&kind, &s, n))));
        }
        if std_ {
            let s = spec(&peer, p, auto, 1, 1024);
            let s2 = s.clone();
            let h = ChannelHandoff::<StdAs<false, false>>::new(Some(CAP));
            cases.push(("lab auto b1 uncounted", Box::new(move || lab(&h, &s, n))));
            let h = ChannelHandoff::<StdAs<true, true>>::new(Some(CAP));
            cases.push(("lab auto b1 blocking recv", Box::new(move || lab(&h, &s2, n))));
        }
    }
    // An optional fifth argument keeps only the cases it lists (comma-separated indices),
    // so that each can run in a process of its own as the lab's forks do.
    if let Some(keep) = a.get(5) {
        let keep: Vec<usize> = keep.split(',').filter_map(|k| k.parse().ok()).collect();
        let mut k = 0;
        cases.retain(|_| {
            k += 1;
            keep.contains(&(k - 1))
        });
    }
    let mut rates = vec![Vec::new(); cases.len()];
    for r in 0..rounds {
        for k in 0..cases.len() {
            let k = (k + r) % cases.len();
            rates[k].push((cases[k].1)());
        }
    }
    // `PEER_LOOPS_ALL=1`: every round's figure too, to see a bimodal case for what it is.
    if std::env::var_os("PEER_LOOPS_ALL").is_some_and(|v| v == "1") {
        for (k, (name, _)) in cases.iter().enumerate() {
            println!(
                "{name}: {:?}",
                rates[k].iter().map(|r| (r * 10.0).round() / 10.0).collect::<Vec<_>>()
            );
        }
    }
    println!("{peer} P={p} {n} msgs, {rounds} rounds: median M msgs/s, median ratio to case 0");
    for (k, (name, _)) in cases.iter().enumerate() {
        let mut v = rates[k].clone();
        v.sort_by(f64::total_cmp);
        let mut ratio: Vec<f64> = rates[k].iter().zip(&rates[0]).map(|(a, b)| a / b).collect();
        ratio.sort_by(f64::total_cmp);
        println!(
            "{name:24} {:7.1}  x{:.2}  ({:.2}..{:.2})",
            v[v.len() / 2],
            ratio[ratio.len() / 2],
            ratio[0],
            ratio[ratio.len() - 1]
        );
    }
}
