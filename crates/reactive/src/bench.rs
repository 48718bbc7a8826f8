//! Seed-000 workloads as plain functions, for criterion benches here and for the lab's
//! experiments (which time them with nanosecond clocks in their own processes).
//!
//! Each returns a value computed from every element so the work cannot be optimised away
//! (each element also passes through `black_box`, so no closed form), and callers check it: [`range_sum`] returns `1 + … + n`, the subscribe loops return
//! `n` (one element of value 1 per subscription). Inputs go through
//! [`std::hint::black_box`].

use crate::{Error, Flux, Mono, Scheduler, Subscriber, Subscription, SyncSinglePublisher};
use std::cell::Cell;
use std::hint::black_box;
use std::sync::mpsc;
use std::time::Duration;

thread_local! {
    /// Where [`SumInto`] leaves its sum at `on_complete` (no atomics, no allocation).
    static SINK: Cell<u64> = const { Cell::new(0) };
}

/// Where a [`Summing`] subscriber adds its sum at `on_complete`.
pub trait Sink {
    /// Adds one subscription's sum.
    fn add(&mut self, sum: u64);
}

/// The thread-local sink: the seed's `v -> sink += v` without a shared volatile, for
/// publishers that take `'static` subscribers (`Mono`, `Flux`).
#[derive(Debug, Default)]
pub struct ThreadLocalSink;

impl Sink for ThreadLocalSink {
    #[inline]
    fn add(&mut self, sum: u64) {
        SINK.with(|c| c.set(c.get().wrapping_add(sum)));
    }
}

/// A local of the subscribing loop as the sink, as RxBench's `Sum` object is to its loop.
/// The thread-local is a global, which every element's `black_box` may read or write, so
/// it is loaded and stored once per subscription, and in a loop of cheap subscriptions
/// that chain through memory, not the subscription, sets the pace (the `sink_ab` example
/// measures both). Only a publisher that takes a borrowed subscriber can use it.
impl Sink for &mut u64 {
    #[inline]
    fn add(&mut self, sum: u64) {
        **self = self.wrapping_add(sum);
    }
}

/// Sums its elements and adds the sum to its sink at `on_complete`.
#[derive(Debug, Default)]
pub struct Summing<K> {
    sum: u64,
    sink: K,
}

/// Sums into the thread-local sink.
pub type SumInto = Summing<ThreadLocalSink>;

/// Sums into the loop's own accumulator.
pub type SumTo<'a> = Summing<&'a mut u64>;

impl<K: Sink> Subscriber<u64> for Summing<K> {
    #[inline]
    fn on_subscribe<S: Subscription>(&mut self, s: &S) {
        s.request(crate::UNBOUNDED)
    }
    #[inline]
    fn on_next<S: Subscription>(&mut self, item: u64, _s: &S) {
        // `black_box` per element: without it LLVM turns `range → sum` into the closed
        // form n(n+1)/2 and the "1M elements" run times no elements at all.
        self.sum = self.sum.wrapping_add(black_box(item));
    }
    fn on_error(&mut self, error: Error) {
        panic!("Summing: unexpected on_error: {error}")
    }
    #[inline]
    fn on_complete(&mut self) {
        self.sink.add(self.sum);
    }
}

/// Takes what [`ThreadLocalSink`] holds on this thread, leaving 0.
pub fn take_sink() -> u64 {
    SINK.with(|c| c.replace(0))
}

/// `1 + 2 + … + n`, the expected result of [`range_sum`].
pub fn expected_range_sum(n: u64) -> u64 {
    n.wrapping_mul(n.wrapping_add(1)) / 2
}

/// `Flux.range(1, n).subscribe(v -> sink += v)`: one subscription, `n` elements.
#[inline(never)]
pub fn range_sum(n: u64) -> u64 {
    take_sink();
    Flux::range(1, black_box(n)).subscribe(SumInto::default());
    take_sink()
}

/// `Mono.just(1)` subscribed `n` times: returns `n` when every subscription delivered.
#[inline(never)]
pub fn mono_just_subscribe(n: u64) -> u64 {
    take_sink();
    for _ in 0..n {
        Mono::just(black_box(1u64)).subscribe(SumInto::default());
    }
    take_sink()
}

/// The hand-written [`SyncSinglePublisher`] subscribed `n` times: returns `n`.
#[inline(never)]
pub fn hand_written_subscribe(n: u64) -> u64 {
    let mut sink = 0u64;
    let p = SyncSinglePublisher::new(1u64);
    for _ in 0..n {
        black_box(&p).subscribe(SumTo { sum: 0, sink: &mut sink });
    }
    sink
}

/// Sums on the worker and sends the sum at the end.
struct SumSend {
    sum: u64,
    tx: Option<mpsc::Sender<Result<u64, Error>>>,
}

impl Subscriber<u64> for SumSend {
    fn on_subscribe<S: Subscription>(&mut self, s: &S) {
        s.request(crate::UNBOUNDED)
    }
    #[inline]
    fn on_next<S: Subscription>(&mut self, item: u64, _s: &S) {
        self.sum = self.sum.wrapping_add(item);
    }
    fn on_error(&mut self, error: Error) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Err(error));
        }
    }
    fn on_complete(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Ok(self.sum));
        }
    }
}

/// `Flux.range(1, n).publishOn(scheduler, prefetch).subscribe(sum)`; waits for the end
/// (at most `timeout`) and returns the sum (check it against [`expected_range_sum`]).
pub fn publish_on_sum(
    n: u64,
    scheduler: &Scheduler,
    prefetch: usize,
    timeout: Duration,
) -> Result<u64, Error> {
    let (tx, rx) = mpsc::channel();
    Flux::range(1, n).publish_on(scheduler, prefetch).subscribe(SumSend { sum: 0, tx: Some(tx) });
    rx.recv_timeout(timeout).map_err(|_| Error::Timeout(timeout))?
}

/// A thread's identity for [`Latencies`]: the address of a thread-local (nonzero, unique
/// among live threads).
fn thread_token() -> usize {
    thread_local! {
        static TOKEN: u8 = const { 0 };
    }
    TOKEN.with(|t| t as *const u8 as usize)
}

/// What [`publish_on_latency`] measured.
#[derive(Debug, Clone, Default)]
pub struct LatencyRun {
    /// Per element, in arrival order: nanoseconds from the `map` stamp to `on_next`.
    pub lat: Vec<u64>,
    /// Elements stamped on another thread than the one that received them (the rest were
    /// produced by the worker itself: a `range` travels there with the worker's requests).
    pub crossed: u64,
}

/// Records, per element, the nanoseconds between the upstream's `map` (a [`handoff::now_ns`]
/// stamp) and the downstream's `on_next` on the worker, and whether it crossed threads.
struct Latencies {
    run: LatencyRun,
    one_by_one: bool,
    tx: Option<mpsc::Sender<Result<LatencyRun, Error>>>,
}

impl Subscriber<(u64, u64, usize)> for Latencies {
    fn on_subscribe<S: Subscription>(&mut self, s: &S) {
        s.request(if self.one_by_one { 1 } else { crate::UNBOUNDED })
    }
    #[inline]
    fn on_next<S: Subscription>(&mut self, (stamp, _i, by): (u64, u64, usize), s: &S) {
        self.run.lat.push(handoff::now_ns().saturating_sub(stamp));
        self.run.crossed += u64::from(by != thread_token());
        if self.one_by_one {
            s.request(1);
        }
    }
    fn on_error(&mut self, error: Error) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Err(error));
        }
    }
    fn on_complete(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Ok(std::mem::take(&mut self.run)));
        }
    }
}

/// The upstream of [`publish_on_latency`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencySource {
    /// `Flux.range(0, n)`, as the seed: after the first prefetch it emits on the worker
    /// (Reactor's request-driven emission), so most elements never cross threads.
    Range,
    /// `Flux.from_iter(0..n)`: stays on the subscribing thread, so every element crosses
    /// to the worker (the cross-thread handoff through `publish_on`'s queue).
    Iter,
}

/// The seed's latency test: `Flux.range(0, n).map(i -> stamp).publishOn(scheduler,
/// prefetch)`, recording the stamp-to-`on_next` latency of each element (ns, in arrival
/// order). With `one_by_one` the subscriber requests 1 at a time (the seed's "idle
/// latency" variant: no queue builds up); otherwise unbounded (up to `prefetch` queue).
pub fn publish_on_latency(
    source: LatencySource,
    n: u64,
    scheduler: &Scheduler,
    prefetch: usize,
    one_by_one: bool,
    timeout: Duration,
) -> Result<LatencyRun, Error> {
    let (tx, rx) = mpsc::channel();
    let sub = Latencies {
        run: LatencyRun { lat: Vec::with_capacity(n as usize), crossed: 0 },
        one_by_one,
        tx: Some(tx),
    };
    let stamp = |i| (handoff::now_ns(), i, thread_token());
    match source {
        LatencySource::Range => {
            Flux::range(0, n).map(stamp).publish_on(scheduler, prefetch).subscribe(sub)
        }
        LatencySource::Iter => {
            Flux::from_iter(0..n).map(stamp).publish_on(scheduler, prefetch).subscribe(sub)
        }
    }
    rx.recv_timeout(timeout).map_err(|_| Error::Timeout(timeout))?
}

/// Percentile `p` (0..=100) of sorted nanosecond samples (nearest rank); `None` if empty.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}
