//! One criterion bench over every handoff the lab compares, driven by one body (as rtrb's
//! `create_push_pop_benchmark!` drives many crates through one): P producer threads send
//! `handoff::Message<16>`s (the lab's default payload) numbered `0..n` each, one consumer
//! takes them in batches of up to 1024 (the lab's default `--batch`) and checks every one
//! with `handoff::Checker`, as the lab's harness does. Time runs from the first thread
//! leaving the start barrier to the consumer seeing the end of the channel; opening the
//! channel, spawning threads and checking the verdict stay outside it.
//!
//! * `handoff/<variant>/p<P>`: every variant the lab registers (`lab::measure::variants::dispatch`,
//!   the lab's one by-name `match`, with the lab's default settings: 64Ki ring and peer
//!   bound, unbounded locked queue, prefetch 256) at P = 1, 2, 4. `Throughput::Elements`:
//!   one iteration is one message, so criterion reports messages/s.
//! * `adapter-cost/<peer>/p<P>`: each reference peer through its own API (as
//!   `lab::measure::peers` builds it) and through the lab's adapter, alternating batch by batch
//!   inside one measurement, so both sides meet the same phases of a noisy VM. Each pair's
//!   ratio adapted/raw goes into a median with an order-statistic interval
//!   (`lab::stats::median_ci`), printed and written to `<criterion dir>/adapter-cost.json`.
//!
//! * `probes/speed`, `probes/ping-pong`: what the machine probes run before every fork
//!   cost the fork's start.
//!
//! `cargo bench -p lab --bench handoff -- handoff` runs the headline comparison,
//! `… -- adapter-cost` the adapters' cost, `… -- probes` the probes'; `cargo test -p lab
//! --benches` runs every routine once (criterion's test mode) on a few messages.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use handoff::{Checker, Consumer, Handoff, Message, Producer};
use lab::measure::peers::{
    spins_for, Backoff, CrossbeamHandoff, DisruptorRsHandoff, StdMpscHandoff,
};
use lab::measure::variants::{self, Settings, WithHandoff};
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The lab's default payload (`--payload 16`).
type Msg = Message<16>;

/// Producer counts of every bench.
const PRODUCERS: [usize; 3] = [1, 2, 4];
/// The lab's default `--ring-size`: the ring's and disruptor-rs's slots, the channel
/// peers' bound.
const RING_SIZE: usize = 64 * 1024;
/// The lab's default `--batch`: most messages the consumer takes per `recv_batch`.
const BATCH: usize = 1024;
/// Most messages in one run: longer criterion samples are split into runs of this many so
/// that an unbounded variant (locked, naive) never holds more than ~1Mi messages (tens of
/// MB) when its producers outrun the consumer.
const RUN_MAX: u64 = 1 << 20;
/// Messages of the checked run every bench makes before criterion times it.
const CHECK_MESSAGES: u64 = 20_000;
/// Messages of each side of one adapter-cost pair: long enough to span scheduler quanta at
/// P = 4 on 2 cores, short enough that the two sides of a pair see the same phase of the VM
/// (figures: docs/design-figures.md).
const PAIR_MESSAGES: u64 = 1 << 17;
/// The fairness bar: an adapter may cost at most this much.
const ADAPTER_BUDGET_PCT: f64 = 5.0;

// ---------------------------------------------------------------------------------------
// The one body
// ---------------------------------------------------------------------------------------

/// One way from P producers to one consumer: a handoff through the lab's contract, or a
/// reference peer through its own API. The body ([`run`]) is generic over it and
/// monomorphised, so a path costs what its `send` and `drain` cost, nothing more.
trait Path {
    type Tx: Send + 'static;
    type Rx: Send + 'static;
    /// What the bench calls it (in ids and panics).
    fn name(&self) -> String;
    /// A fresh channel for `producers` producers and one consumer.
    fn open(&self, producers: usize) -> (Vec<Self::Tx>, Self::Rx);
    /// Sends one message, waiting for room; false when the channel refused it.
    fn send(tx: &mut Self::Tx, m: Msg) -> bool;
    /// Hands every message to `observe`, in order, until the channel ends.
    fn drain(rx: Self::Rx, observe: impl FnMut(Msg));
}

/// One run of `messages` over `producers` threads: the time from the first thread leaving
/// the start barrier to the consumer seeing the end. Panics unless every message arrived
/// once, in per-producer order, intact (`handoff::Checker`'s verdict), so that no timing of
/// a broken run is ever reported.
fn run<P: Path>(path: &P, producers: usize, messages: u64) -> Duration {
    let per = handoff::spread(messages, producers);
    let (txs, rx) = path.open(producers);
    assert_eq!(txs.len(), producers, "{}: open({producers})", path.name());
    let barrier = Arc::new(Barrier::new(producers + 1));
    let senders: Vec<_> = txs
        .into_iter()
        .zip(per.iter().copied())
        .enumerate()
        .map(|(i, (mut tx, n))| {
            let barrier = barrier.clone();
            thread::spawn(move || {
                barrier.wait();
                let start = Instant::now();
                let mut sent = 0u64;
                for seq in 0..n {
                    if !P::send(&mut tx, Msg::new(i as u32, seq)) {
                        break;
                    }
                    sent += 1;
                }
                // Dropping the last handle ends the channel for the consumer.
                drop(tx);
                (start, sent)
            })
        })
        .collect();
    let consumer = thread::spawn(move || {
        let mut checker = Checker::new(producers);
        barrier.wait();
        let start = Instant::now();
        P::drain(rx, |m| checker.observe(&m));
        (start, Instant::now(), checker)
    });
    let mut first = None::<Instant>;
    for (i, h) in senders.into_iter().enumerate() {
        let (start, sent) = h.join().expect("a producer panicked");
        assert_eq!(sent, per[i], "{}: producer {i}'s sends were refused", path.name());
        first = Some(first.map_or(start, |f| f.min(start)));
    }
    let (start, end, checker) = consumer.join().expect("the consumer panicked");
    let t0 = first.map_or(start, |f| f.min(start));
    let verdict = checker.verdict::<16>(&per);
    assert!(verdict.ok(), "{} with {producers} producers: {}", path.name(), verdict.describe());
    end.duration_since(t0)
}

/// `messages` in runs of at most [`RUN_MAX`], times summed: one criterion sample.
fn timed<P: Path>(path: &P, producers: usize, messages: u64) -> Duration {
    let mut left = messages;
    let mut total = Duration::ZERO;
    while left > 0 {
        let n = left.min(RUN_MAX);
        total += run(path, producers, n);
        left -= n;
    }
    total
}

// ---------------------------------------------------------------------------------------
// Paths: the contract, and each peer's own API
// ---------------------------------------------------------------------------------------

/// Any handoff through `handoff::Handoff`, consumed with `recv_batch` as the lab does.
struct Adapted<H>(H);

impl<H: Handoff> Path for Adapted<H> {
    type Tx = H::Producer<Msg>;
    type Rx = H::Consumer<Msg>;
    fn name(&self) -> String {
        self.0.name()
    }
    fn open(&self, producers: usize) -> (Vec<Self::Tx>, Self::Rx) {
        self.0.open(producers).unwrap_or_else(|e| panic!("{}: {e}", self.0.name()))
    }
    #[inline]
    fn send(tx: &mut Self::Tx, m: Msg) -> bool {
        tx.send(m).is_ok()
    }
    #[inline]
    fn drain(mut rx: Self::Rx, mut observe: impl FnMut(Msg)) {
        while rx.recv_batch(BATCH, &mut observe) > 0 {}
    }
}

/// `crossbeam_channel::bounded(RING_SIZE)`, `send` and `recv`.
struct RawCrossbeam;

impl Path for RawCrossbeam {
    type Tx = crossbeam_channel::Sender<Msg>;
    type Rx = crossbeam_channel::Receiver<Msg>;
    fn name(&self) -> String {
        "crossbeam (raw)".into()
    }
    fn open(&self, producers: usize) -> (Vec<Self::Tx>, Self::Rx) {
        let (tx, rx) = crossbeam_channel::bounded(RING_SIZE);
        (vec![tx; producers], rx)
    }
    #[inline]
    fn send(tx: &mut Self::Tx, m: Msg) -> bool {
        tx.send(m).is_ok()
    }
    #[inline]
    fn drain(rx: Self::Rx, mut observe: impl FnMut(Msg)) {
        while let Ok(m) = rx.recv() {
            observe(m);
        }
    }
}

/// `std::sync::mpsc::sync_channel(RING_SIZE)`, `send` and `recv`.
struct RawStdMpsc;

impl Path for RawStdMpsc {
    type Tx = mpsc::SyncSender<Msg>;
    type Rx = mpsc::Receiver<Msg>;
    fn name(&self) -> String {
        "std-mpsc (raw)".into()
    }
    fn open(&self, producers: usize) -> (Vec<Self::Tx>, Self::Rx) {
        let (tx, rx) = mpsc::sync_channel(RING_SIZE);
        (vec![tx; producers], rx)
    }
    #[inline]
    fn send(tx: &mut Self::Tx, m: Msg) -> bool {
        tx.send(m).is_ok()
    }
    #[inline]
    fn drain(rx: Self::Rx, mut observe: impl FnMut(Msg)) {
        while let Ok(m) = rx.recv() {
            observe(m);
        }
    }
}

/// The `disruptor` crate built as `lab::measure::peers` builds it (single-producer sequencer for
/// one producer, multi-producer otherwise, one event poller), with `Msg` itself as the
/// event. The crate's `publish` spins without a hint and its poller never waits, so both
/// sides wait with the adapter's own [`Backoff`] and spins (`try_publish`, `take(BATCH)`):
/// the pair then differs only in what the adapter adds.
struct RawDisruptor;

/// The spins of the raw loop's waits: [`spins_for`] the open channel's threads, as the
/// adapter chooses them. Set by `open`, before the run's threads start.
static RAW_SPINS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn raw_backoff() -> Backoff {
    Backoff::with_spins(RAW_SPINS.load(std::sync::atomic::Ordering::Relaxed))
}

enum DisruptorTx {
    Single(disruptor::SingleProducer<Msg, disruptor::SingleConsumerBarrier>),
    Multi(disruptor::MultiProducer<Msg, disruptor::SingleConsumerBarrier>),
}

enum DisruptorRx {
    Single(disruptor::EventPoller<Msg, disruptor::SingleProducerBarrier>),
    Multi(disruptor::EventPoller<Msg, disruptor::MultiProducerBarrier>),
}

/// One `take(BATCH)` of an event poller: `Some(n)` events observed, `None` at shutdown. A
/// macro because the crate's barrier trait is not public (as in `lab::measure::peers`).
macro_rules! poll_events {
    ($poller:expr, $observe:expr) => {
        match $poller.take(BATCH as u64) {
            Ok(mut guard) => {
                let mut n = 0usize;
                for m in &mut guard {
                    ($observe)(*m);
                    n += 1;
                }
                Some(n)
            }
            Err(disruptor::Polling::NoEvents) => Some(0),
            Err(disruptor::Polling::Shutdown) => None,
        }
    };
}

impl Path for RawDisruptor {
    type Tx = DisruptorTx;
    type Rx = DisruptorRx;
    fn name(&self) -> String {
        "disruptor-rs (raw)".into()
    }
    fn open(&self, producers: usize) -> (Vec<Self::Tx>, Self::Rx) {
        RAW_SPINS.store(spins_for(producers + 1), std::sync::atomic::Ordering::Relaxed);
        let wait = disruptor::BusySpinWithSpinLoopHint;
        if producers == 1 {
            let builder = disruptor::build_single_producer(RING_SIZE, Msg::default, wait);
            let (poller, builder) = builder.new_event_poller();
            (vec![DisruptorTx::Single(builder.build())], DisruptorRx::Single(poller))
        } else {
            let builder = disruptor::build_multi_producer(RING_SIZE, Msg::default, wait);
            let (poller, builder) = builder.new_event_poller();
            let first = builder.build();
            let mut txs: Vec<_> =
                (1..producers).map(|_| DisruptorTx::Multi(first.clone())).collect();
            txs.push(DisruptorTx::Multi(first));
            (txs, DisruptorRx::Multi(poller))
        }
    }
    #[inline]
    fn send(tx: &mut Self::Tx, m: Msg) -> bool {
        use disruptor::Producer as _;
        let mut backoff = raw_backoff();
        loop {
            let done = match tx {
                DisruptorTx::Single(p) => p.try_publish(|e| *e = m).is_ok(),
                DisruptorTx::Multi(p) => p.try_publish(|e| *e = m).is_ok(),
            };
            if done {
                return true;
            }
            backoff.snooze();
        }
    }
    #[inline]
    fn drain(mut rx: Self::Rx, mut observe: impl FnMut(Msg)) {
        let mut backoff = raw_backoff();
        loop {
            let got = match &mut rx {
                DisruptorRx::Single(p) => poll_events!(p, observe),
                DisruptorRx::Multi(p) => poll_events!(p, observe),
            };
            match got {
                None => return,
                Some(0) => backoff.snooze(),
                // A fresh wait after every batch, as the adapter's `recv_batch` starts one.
                Some(_) => backoff = raw_backoff(),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// handoff/<variant>/p<P>
// ---------------------------------------------------------------------------------------

/// Every variant of the headline comparison: (bench id, lab variant name, ring wait).
const VARIANTS: &[(&str, &str, Option<&str>)] = &[
    ("locked", "locked", None),
    ("ring-blocking", "ring", Some("blocking")),
    ("ring-sleeping", "ring", Some("sleeping")),
    ("ring-yielding", "ring", Some("yielding")),
    ("ring-busy-spin", "ring", Some("busy-spin")),
    ("reactive", "reactive", None),
    ("naive", "naive", None),
    ("crossbeam", "crossbeam", None),
    ("std-mpsc", "std-mpsc", None),
    ("disruptor-rs", "disruptor-rs", None),
];

/// The lab's default settings for a variant (`lab disruptor-vs-lbq`'s defaults).
fn settings(variant: &str, wait: Option<&str>) -> Settings {
    Settings {
        variant: variant.to_string(),
        wait: wait.map(str::to_string),
        ring_size: RING_SIZE,
        capacity: None,
        prefetch: 256,
    }
}

/// The generic half of the dispatch: checks the chosen handoff, then registers its bench.
struct Register<'a, 'c> {
    group: &'a mut criterion::BenchmarkGroup<'c, criterion::measurement::WallTime>,
    id: &'static str,
    producers: usize,
}

impl WithHandoff for Register<'_, '_> {
    type Out = ();
    fn run<H: Handoff + 'static>(self, handoff: H) {
        let path = Adapted(handoff);
        // Behaviour first (rtrb's habit): a checked run before any timing.
        run(&path, self.producers, CHECK_MESSAGES);
        let p = self.producers;
        self.group.bench_function(BenchmarkId::new(self.id, format!("p{p}")), |b| {
            b.iter_custom(|n| timed(&path, p, n))
        });
    }
}

fn headline(c: &mut Criterion) {
    let mut g = c.benchmark_group("handoff");
    g.throughput(Throughput::Elements(1));
    // P outermost: the variants at one P run back to back, in the same stretch of the VM.
    for p in PRODUCERS {
        for &(id, variant, wait) in VARIANTS {
            let job = Register { group: &mut g, id, producers: p };
            variants::dispatch(&settings(variant, wait), job)
                .unwrap_or_else(|e| panic!("{id}: {e}"));
        }
    }
    g.finish();
}

// ---------------------------------------------------------------------------------------
// adapter-cost/<peer>/p<P>
// ---------------------------------------------------------------------------------------

/// One adapter-cost cell's pairs: raw and adapted times of each full pair, in ns.
#[derive(Debug, Default)]
struct Pairs {
    raw_ns: Vec<f64>,
    adapted_ns: Vec<f64>,
}

/// One criterion sample of an adapter-cost bench: `messages` split into pairs of
/// [`PAIR_MESSAGES`] per side, raw and adapted alternating which goes first (so neither
/// always runs on a cache or a scheduler the other warmed). Full pairs are recorded; the
/// sample's time is the mean of the two sides, so criterion's figure reads as either's.
fn paired<R: Path, A: Path>(
    raw: &R,
    adapted: &A,
    producers: usize,
    messages: u64,
    pairs: &Mutex<Pairs>,
) -> Duration {
    let mut left = messages;
    let mut total = Duration::ZERO;
    let mut k = 0usize;
    while left > 0 {
        let n = left.min(PAIR_MESSAGES);
        let (r, a) = if k % 2 == 0 {
            let r = run(raw, producers, n);
            (r, run(adapted, producers, n))
        } else {
            let a = run(adapted, producers, n);
            (run(raw, producers, n), a)
        };
        if n == PAIR_MESSAGES {
            let mut p = pairs.lock().expect("pairs");
            p.raw_ns.push(r.as_nanos() as f64);
            p.adapted_ns.push(a.as_nanos() as f64);
        }
        total += (r + a) / 2;
        left -= n;
        k += 1;
    }
    total
}

/// What one peer's adapter costs at one P.
#[derive(Debug, serde::Serialize)]
struct Cost {
    peer: String,
    producers: usize,
    pairs: usize,
    messages_per_side: u64,
    /// Median over pairs of (adapted / raw − 1), percent.
    cost_pct: f64,
    /// Order-statistic interval of that median, percent.
    ci_low_pct: f64,
    ci_high_pct: f64,
    ci_coverage: f64,
    raw_median_mmsgs: f64,
    adapted_median_mmsgs: f64,
    within_budget: Option<bool>,
}

fn cost(peer: &str, producers: usize, p: &Pairs) -> Option<Cost> {
    let ratios: Vec<f64> = p.adapted_ns.iter().zip(&p.raw_ns).map(|(a, r)| a / r).collect();
    let median = lab::stats::median(&ratios)?;
    let pct = |r: f64| (r - 1.0) * 100.0;
    let rate = |ns: &[f64]| lab::stats::median(ns).map_or(0.0, |m| PAIR_MESSAGES as f64 / m * 1e3);
    let lab::stats::Interval { low: ci_low, high: ci_high, coverage } =
        lab::stats::median_ci(&ratios).unwrap_or(lab::stats::Interval {
            low: f64::NAN,
            high: f64::NAN,
            coverage: 0.0,
        });
    Some(Cost {
        peer: peer.to_string(),
        producers,
        pairs: ratios.len(),
        messages_per_side: PAIR_MESSAGES,
        cost_pct: pct(median),
        ci_low_pct: pct(ci_low),
        ci_high_pct: pct(ci_high),
        ci_coverage: coverage,
        raw_median_mmsgs: rate(&p.raw_ns),
        adapted_median_mmsgs: rate(&p.adapted_ns),
        // Over budget only when the whole interval is above it; within only when the
        // whole interval is below; otherwise undecided.
        within_budget: if coverage == 0.0 {
            None
        } else if pct(ci_high) <= ADAPTER_BUDGET_PCT {
            Some(true)
        } else if pct(ci_low) > ADAPTER_BUDGET_PCT {
            Some(false)
        } else {
            None
        },
    })
}

/// Criterion's output folder, found as criterion finds it: `$CRITERION_HOME`, else
/// `$CARGO_TARGET_DIR/criterion`, else `criterion/` in the target folder holding this
/// bench's executable (`target/<profile>/deps/handoff-…`).
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(|t| t.join("criterion")))
        .unwrap_or_else(|| PathBuf::from("target/criterion"))
}

fn adapter_cost(c: &mut Criterion) {
    let mut g = c.benchmark_group("adapter-cost");
    g.throughput(Throughput::Elements(1));
    let mut costs = Vec::new();
    for p in PRODUCERS {
        costs.extend(pair_bench(
            &mut g,
            "crossbeam",
            &RawCrossbeam,
            &Adapted(CrossbeamHandoff::new(Some(RING_SIZE))),
            p,
        ));
        costs.extend(pair_bench(
            &mut g,
            "std-mpsc",
            &RawStdMpsc,
            &Adapted(StdMpscHandoff::new(Some(RING_SIZE))),
            p,
        ));
        costs.extend(pair_bench(
            &mut g,
            "disruptor-rs",
            &RawDisruptor,
            &Adapted(DisruptorRsHandoff::new(Some(RING_SIZE))),
            p,
        ));
    }
    g.finish();
    report(&costs);
}

/// Checks both sides, then benches them as pairs; the cost, when there were full pairs.
fn pair_bench<R: Path, A: Path>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    peer: &str,
    raw: &R,
    adapted: &A,
    producers: usize,
) -> Option<Cost> {
    run(raw, producers, CHECK_MESSAGES);
    run(adapted, producers, CHECK_MESSAGES);
    let pairs = Mutex::new(Pairs::default());
    g.bench_function(BenchmarkId::new(peer, format!("p{producers}")), |b| {
        b.iter_custom(|n| paired(raw, adapted, producers, n, &pairs))
    });
    let pairs = pairs.into_inner().expect("pairs");
    cost(peer, producers, &pairs)
}

fn report(costs: &[Cost]) {
    if costs.is_empty() {
        eprintln!("adapter-cost: no full pairs (test mode, or a filter); nothing written");
        return;
    }
    eprintln!(
        "adapter cost (adapted / raw − 1, median of per-pair ratios, order-statistic interval):"
    );
    for c in costs {
        let verdict = match c.within_budget {
            Some(true) => format!("within {ADAPTER_BUDGET_PCT}%"),
            Some(false) => format!("OVER {ADAPTER_BUDGET_PCT}%"),
            None => "undecided".to_string(),
        };
        eprintln!(
            "  {:<13} p{}  {:+6.1}%  [{:+6.1}%, {:+6.1}%] ({:.0}%, {} pairs)  raw {:.1} / adapted {:.1} M msgs/s  {verdict}",
            c.peer,
            c.producers,
            c.cost_pct,
            c.ci_low_pct,
            c.ci_high_pct,
            c.ci_coverage * 100.0,
            c.pairs,
            c.raw_median_mmsgs,
            c.adapted_median_mmsgs,
        );
    }
    let dir = criterion_dir();
    let path = dir.join("adapter-cost.json");
    let doc = serde_json::json!({
        "what": "adapter cost per reference peer: median over alternating raw/adapted pairs of adapted/raw - 1, in percent, with an order-statistic interval of that median",
        "budget_pct": ADAPTER_BUDGET_PCT,
        "costs": costs,
    });
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, serde_json::to_vec_pretty(&doc).expect("json")));
    match written {
        Ok(()) => eprintln!("adapter-cost: wrote {}", path.display()),
        Err(e) => eprintln!("adapter-cost: could not write {}: {e}", path.display()),
    }
}

/// What the machine probes the parent runs before every fork cost (`lab::runner::speed`):
/// time a fork's start waits for them.
fn probes(c: &mut Criterion) {
    let mut g = c.benchmark_group("probes");
    g.bench_function("speed", |b| b.iter(lab::runner::speed::probe));
    g.bench_function("ping-pong", |b| b.iter(lab::runner::speed::ping_pong));
    g.finish();
}

fn config() -> Criterion {
    // Short by default (the CLI's --sample-size, --warm-up-time, --measurement-time
    // override these): 10 samples, as the ring crate's benches.
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = headline, adapter_cost, probes
}
criterion_main!(benches);
