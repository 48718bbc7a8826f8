//! Reactive Streams with `request(n)` in Rust: the pipeline of seed 000 (a Project Reactor
//! baseline: `Flux.range`, `Mono.just`, a hand-written `SyncSinglePublisher`, `publishOn`
//! latency, `onBackpressureBuffer`), and the lab's `reactive` handoff variant.
//!
//! # What it models
//!
//! * The Reactive Streams contract (`org.reactivestreams` / `java.util.concurrent.Flow`):
//!   [`Publisher`], [`Subscriber`], [`Subscription`] with `request(n)` and `cancel`, the four
//!   signals, and the rules that matter: never more `on_next` than requested (§1.1), signals
//!   serial (§1.3), one terminal signal (§1.7), `request(0)` → `on_error` (§3.9), cancel stops
//!   emission (§3.12), unbounded demand `u64::MAX` with additive saturation (§3.17).
//! * Reactor's operators: [`Flux::range`], [`Flux::from_iter`], [`Mono::just`], `map`,
//!   `filter`, `take`, `limit_rate`, `on_backpressure_buffer` (`FluxOnBackpressureBuffer`)
//!   and `publish_on` (`FluxPublishOn`: prefetch, a bounded SPSC queue, replenish after
//!   `limit = prefetch - prefetch/4` are consumed, a WIP counter and a drain loop with the
//!   missed-count pattern on the scheduler's worker).
//! * Schedulers ([`scheduler`]): `immediate`, `single`, `parallel(n)`, and (feature `rayon`,
//!   on by default) `rayon(n)`, a `rayon::ThreadPool` whose drains are stolen, not pinned.
//! * A serialised multi-producer unicast sink ([`sink`], `Sinks.many().unicast()` with
//!   backpressure instead of an unbounded buffer) feeding a `publish_on` queue whose drain
//!   runs on the consuming thread: the lab's [`ReactiveHandoff`].
//! * The seed's hand-written single-value publisher ([`SyncSinglePublisher`]).
//!
//! # Design: how the subscription travels
//!
//! In Java a subscriber keeps the `Subscription` object it got in `onSubscribe`; that needs a
//! heap object per subscription and a reference cycle. Here the subscription is *lent* with
//! each signal (`on_subscribe(&s)`, `on_next(item, &s)`), like an iterator adapter borrowing
//! its state: a synchronous source keeps its demand in `Cell`s on its own stack, so
//! `Mono::just(1).subscribe(..)` allocates nothing and compiles to a handful of
//! instructions. A subscriber that must call the subscription outside a signal (later, or
//! from another thread: `publish_on`'s worker replenishing, a test holding a handle) calls
//! [`Subscription::detach`] once and keeps the returned [`SharedSubscription`]; the source
//! then moves its demand into an `Arc` of atomics. When a detached `range` runs out of
//! demand it parks the rest of itself there and returns; the next `request` emits on the
//! requesting thread, as Reactor's `FluxRange` does. Behind `publish_on` that thread is the
//! worker: after the first prefetch, the worker's replenish request produces each batch
//! itself and no element crosses threads (`range → publish_on(single) → sum` runs at
//! single-thread speed, as on the JVM). The other synchronous sources (`from_iter`, `just`,
//! the hand-written publisher) *wait* (spin, then park) on their emitting thread instead.
//!
//! Operator chains are generic and monomorphised (`Map<Filter<Range, F>, G>`, like iterator
//! adapters); no boxing and no `Arc` per element. Dynamic dispatch is used in exactly two
//! places, both off the per-element path: a detached [`SharedSubscription`] is an
//! `Arc<dyn RemoteSubscription>` (one call per replenish batch: 192 elements at prefetch
//! 256), and a scheduler's worker runs `Arc<dyn Task>` (one call per drain pass; a worker
//! serves pipelines of many types).
//!
//! # Guarantees
//! * Allocation: none per element anywhere; none per subscription for synchronous chains
//!   that are not detached; `publish_on` allocates its queue (prefetch slots) once per
//!   subscription; `on_backpressure_buffer` its buffer once.
//! * Blocking: `request`/`cancel` never block (§3.4, §3.5); a detached synchronous source
//!   with no demand, and the sink's emitters with no demand, wait (backpressure).
//! * Ordering: every operator preserves order; the sink keeps each producer's order.
//! * Bad settings (`publish_on`/`limit_rate` prefetch 0, buffer capacity 0) give
//!   `on_subscribe` then `on_error(Error::InvalidArgument)` naming the valid range;
//!   `request(0)` gives `on_error(Error::NonPositiveRequest)`; the handoff's `open`
//!   returns a `ConfigError`. Nothing panics or hangs on them.
//!
//! # Deviations from Reactor, and why
//! * Only `range` resumes on the requesting thread (see above); `from_iter` (whose
//!   iterator need not be `Send`), `just` and the hand-written publisher wait for demand on
//!   their subscribing thread.
//! * The handoff's `try_send` asks for an early replenish when it finds no demand
//!   ([`handoff_adapter`] explains: the shared suite requires room after one receive).
//! * `publish_on` signals elements without a WIP increment each (a fence and a read of
//!   WIP, paired with a re-check at the drain's exit); requests, cancel and terminal
//!   signals use Reactor's missed-count RMW.
//!
//! # Sources
//! The Reactive Streams specification 1.0.4 (rules cited by number); Reactor Core's
//! `FluxPublishOn`, `FluxOnBackpressureBuffer`, `FluxRange`, `Operators.addCap` and
//! `Queues` (read to learn; the code here is written from the rules, not translated);
//! rtrb for the cached-index SPSC ring ([`spsc`]).

pub mod bench;
mod buffer;
mod demand;
pub mod handoff_adapter;
mod ops;
mod publish_on;
pub mod scheduler;
pub mod sink;
mod source;
pub mod spsc;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use buffer::{OnBackpressureBuffer, Overflow, OverflowCounter};
pub use handoff_adapter::{ReactiveConsumer, ReactiveHandoff, ReactiveProducer};
pub use ops::{Filter, ForEach, Map, Take};
pub use publish_on::PublishOn;
pub use scheduler::Scheduler;
pub use source::{FromIter, Just, Range, SyncSinglePublisher};

/// Demand meaning "no limit" (Reactor's `Long.MAX_VALUE`, §3.17).
pub const UNBOUNDED: u64 = u64::MAX;

/// Reactor's default `publish_on` prefetch (`Queues.SMALL_BUFFER_SIZE`).
pub const DEFAULT_PREFETCH: usize = 256;

/// Adds demand without overflow: saturates at [`UNBOUNDED`] (Reactor's `Operators.addCap`).
#[inline]
pub fn add_cap(a: u64, b: u64) -> u64 {
    a.saturating_add(b)
}

/// Adds `n` to an atomic demand counter with [`add_cap`] (a CAS loop; `SeqCst`, which the
/// sources' Dekker handshakes need); [`UNBOUNDED`] stays put.
#[inline]
pub(crate) fn add_cap_atomic(counter: &std::sync::atomic::AtomicU64, n: u64) {
    use std::sync::atomic::Ordering;
    let mut cur = counter.load(Ordering::Relaxed);
    while cur != UNBOUNDED {
        match counter.compare_exchange_weak(
            cur,
            add_cap(cur, n),
            Ordering::SeqCst,
            Ordering::Relaxed,
        ) {
            Ok(_) => break,
            Err(c) => cur = c,
        }
    }
}

/// The replenish threshold of a prefetch: `prefetch - prefetch / 4` (Reactor's
/// `Operators.unboundedOrLimit`): 192 for 256, 1 for 1, 2 for 2, 6 for 8.
#[inline]
pub fn replenish_limit(prefetch: usize) -> usize {
    prefetch - prefetch / 4
}

/// What an `on_error` signal carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// `request(n)` with `n == 0` (§3.9).
    NonPositiveRequest,
    /// `on_backpressure_buffer` with [`Overflow::Error`] ran out of room.
    Overflow {
        /// The buffer's capacity.
        capacity: usize,
    },
    /// An upstream sent more than `publish_on` requested (it broke §1.1).
    QueueFull {
        /// The prefetch that was exceeded.
        prefetch: usize,
    },
    /// An operator was built with settings that cannot work; the message names the valid
    /// choices.
    InvalidArgument(String),
    /// A scheduler refused the work (it was shut down).
    Rejected(String),
    /// A blocking helper gave up waiting.
    Timeout(Duration),
    /// An error raised by user code or a sink's `error`.
    Failed(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NonPositiveRequest => {
                f.write_str("§3.9 violated: request(n) needs n >= 1 (got 0)")
            }
            Error::Overflow { capacity } => {
                write!(f, "on_backpressure_buffer overflow: the buffer of {capacity} is full")
            }
            Error::QueueFull { prefetch } => write!(
                f,
                "queue is full: the upstream sent more than the {prefetch} publish_on requested"
            ),
            Error::InvalidArgument(m) | Error::Rejected(m) | Error::Failed(m) => f.write_str(m),
            Error::Timeout(d) => write!(f, "no terminal signal within {d:?}"),
        }
    }
}

impl std::error::Error for Error {}

/// The link between a publisher and its subscriber, lent with each signal.
///
/// `request` and `cancel` never block and may be called from within `on_next`
/// (re-entrantly, §3.3 bounds the recursion: sources here loop instead of recursing).
pub trait Subscription {
    /// Adds `n` to the demand (saturating at [`UNBOUNDED`]); `n == 0` makes the publisher
    /// signal `on_error(Error::NonPositiveRequest)` (§3.9).
    fn request(&self, n: u64);
    /// Asks the publisher to stop; it eventually stops signalling (§3.12), and drops its
    /// reference to the subscriber (§3.13).
    fn cancel(&self);
    /// A handle to this subscription that may be kept and used from any thread.
    fn detach(&self) -> SharedSubscription;
}

/// The thread-safe side of a subscription, behind a [`SharedSubscription`].
pub trait RemoteSubscription: Send + Sync {
    /// See [`Subscription::request`].
    fn request(&self, n: u64);
    /// See [`Subscription::cancel`].
    fn cancel(&self);
}

/// A detached subscription: kept beyond a signal, callable from any thread.
#[derive(Clone)]
pub struct SharedSubscription(Arc<dyn RemoteSubscription>);

impl SharedSubscription {
    /// Wraps a remote subscription.
    pub fn new(inner: Arc<dyn RemoteSubscription>) -> Self {
        SharedSubscription(inner)
    }

    /// A handle that ignores requests and cancels (for a subscription that is already over).
    pub fn inert() -> Self {
        struct Inert;
        impl RemoteSubscription for Inert {
            fn request(&self, _n: u64) {}
            fn cancel(&self) {}
        }
        SharedSubscription(Arc::new(Inert))
    }
}

impl fmt::Debug for SharedSubscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedSubscription")
    }
}

impl Subscription for SharedSubscription {
    #[inline]
    fn request(&self, n: u64) {
        self.0.request(n)
    }
    #[inline]
    fn cancel(&self) {
        self.0.cancel()
    }
    fn detach(&self) -> SharedSubscription {
        self.clone()
    }
}

/// A subscription that is already over: for a publisher that fails at subscribe time
/// (`on_subscribe(&Cancelled)` then `on_error`, §1.9).
#[derive(Debug, Clone, Copy)]
pub struct Cancelled;

impl Subscription for Cancelled {
    fn request(&self, _n: u64) {}
    fn cancel(&self) {}
    fn detach(&self) -> SharedSubscription {
        SharedSubscription::inert()
    }
}

/// Receives the signals of one subscription, serially (§1.3): `on_subscribe` once, then
/// `on_next` at most as often as requested, then at most one of `on_error`/`on_complete`.
pub trait Subscriber<T> {
    /// The first signal; request here (or later through a detached handle).
    fn on_subscribe<S: Subscription>(&mut self, s: &S);
    /// One element; `s` is the same subscription, lent again.
    fn on_next<S: Subscription>(&mut self, item: T, s: &S);
    /// The stream failed; no signal follows.
    fn on_error(&mut self, error: Error);
    /// The stream ended; no signal follows.
    fn on_complete(&mut self);
}

/// A source of elements for one subscriber per `subscribe` (clone the publisher to
/// subscribe again: the sources here are cheap to clone).
pub trait Publisher {
    /// The element type.
    type Item;
    /// Subscribes `s`. Synchronous sources emit on the calling thread before returning
    /// (or until demand runs out); `publish_on` moves the downstream signals to a worker.
    fn subscribe<S: Subscriber<Self::Item> + Send + 'static>(self, s: S);
}

/// A stream of 0..N elements with Reactor's operator names; a thin wrapper around a
/// [`Publisher`] (the wrapper is what the chain types are built from, like iterators).
#[derive(Debug, Clone)]
pub struct Flux<P>(pub P);

/// A stream of 0..1 element.
#[derive(Debug, Clone)]
pub struct Mono<P>(pub P);

impl Flux<Range> {
    /// `count` integers from `start` (Reactor's `Flux.range`); `start + count` must not
    /// overflow (it is clamped to `u64::MAX`).
    pub fn range(start: u64, count: u64) -> Self {
        Flux(Range::new(start, count))
    }
}

impl<I: Iterator> Flux<FromIter<I>> {
    /// The elements of an iterator (Reactor's `Flux.fromIterable`). Named as the brief
    /// and Reactor users expect; `Flux` is not a collection, so no `FromIterator`.
    #[allow(clippy::should_implement_trait)]
    pub fn from_iter<C: IntoIterator<IntoIter = I>>(iter: C) -> Self {
        Flux(FromIter::new(iter.into_iter()))
    }
}

impl<T> Mono<Just<T>> {
    /// One element (Reactor's `Mono.just`).
    pub fn just(value: T) -> Self {
        Mono(Just::new(value))
    }
}

impl<P: Publisher> Publisher for Flux<P> {
    type Item = P::Item;
    #[inline]
    fn subscribe<S: Subscriber<P::Item> + Send + 'static>(self, s: S) {
        self.0.subscribe(s)
    }
}

impl<P: Publisher> Publisher for Mono<P> {
    type Item = P::Item;
    #[inline]
    fn subscribe<S: Subscriber<P::Item> + Send + 'static>(self, s: S) {
        self.0.subscribe(s)
    }
}

impl<P: Publisher> Mono<P> {
    /// Subscribes `s`.
    #[inline]
    pub fn subscribe<S: Subscriber<P::Item> + Send + 'static>(self, s: S) {
        self.0.subscribe(s)
    }

    /// Subscribes with closures: requests unbounded, calls `on_next` per element and
    /// `on_done` once with the terminal signal.
    #[inline]
    pub fn subscribe_fn<N, D>(self, on_next: N, on_done: D)
    where
        N: FnMut(P::Item) + Send + 'static,
        D: FnOnce(Result<(), Error>) + Send + 'static,
    {
        self.0.subscribe(ForEach::new(on_next, on_done))
    }

    /// Subscribes and waits (up to `timeout`) for the element, if any.
    pub fn block(self, timeout: Duration) -> Result<Option<P::Item>, Error>
    where
        P::Item: Send + 'static,
    {
        Flux(self.0).collect_blocking(timeout).map(|mut v| v.pop())
    }
}

impl<P: Publisher> Flux<P> {
    /// Subscribes `s`.
    #[inline]
    pub fn subscribe<S: Subscriber<P::Item> + Send + 'static>(self, s: S) {
        self.0.subscribe(s)
    }

    /// Subscribes with closures: requests unbounded, calls `on_next` per element and
    /// `on_done` once with the terminal signal.
    #[inline]
    pub fn subscribe_fn<N, D>(self, on_next: N, on_done: D)
    where
        N: FnMut(P::Item) + Send + 'static,
        D: FnOnce(Result<(), Error>) + Send + 'static,
    {
        self.0.subscribe(ForEach::new(on_next, on_done))
    }

    /// Applies `f` to each element.
    #[inline]
    pub fn map<U, F: FnMut(P::Item) -> U + Send + 'static>(self, f: F) -> Flux<Map<P, F>> {
        Flux(Map::new(self.0, f))
    }

    /// Keeps the elements for which `f` is true; each dropped element is replaced by a
    /// `request(1)` upstream, as Reactor's `filter` does.
    #[inline]
    pub fn filter<F: FnMut(&P::Item) -> bool + Send + 'static>(self, f: F) -> Flux<Filter<P, F>> {
        Flux(Filter::new(self.0, f))
    }

    /// The first `n` elements, then `on_complete` and a cancel upstream.
    #[inline]
    pub fn take(self, n: u64) -> Flux<Take<P>> {
        Flux(Take::new(self.0, n))
    }

    /// Moves the downstream signals onto `scheduler`'s worker through a bounded queue of
    /// `prefetch` slots: requests `prefetch` upstream, then `prefetch - prefetch/4` each
    /// time that many have been consumed. `prefetch == 0` signals
    /// `on_error(Error::InvalidArgument)` at subscribe.
    pub fn publish_on(self, scheduler: &Scheduler, prefetch: usize) -> Flux<PublishOn<P>> {
        Flux(PublishOn::new(self.0, scheduler.clone(), prefetch, "publish_on"))
    }

    /// Reactor's `limitRate(n)`: `publish_on(immediate, n)`: requests upstream in batches
    /// of `n`, then `n - n/4`, whatever the downstream asks. `n == 0` signals
    /// `on_error(Error::InvalidArgument)`.
    pub fn limit_rate(self, n: usize) -> Flux<PublishOn<P>> {
        Flux(PublishOn::new(self.0, Scheduler::immediate(), n, "limit_rate"))
    }

    /// Requests unbounded upstream and buffers up to `capacity` elements the downstream
    /// has not requested; what happens beyond that is `overflow`. `capacity == 0` signals
    /// `on_error(Error::InvalidArgument)` at subscribe. Read the overflow count with
    /// [`Flux::overflow_counter`] (clone it before subscribing).
    pub fn on_backpressure_buffer(
        self,
        capacity: usize,
        overflow: Overflow,
    ) -> Flux<OnBackpressureBuffer<P>> {
        Flux(OnBackpressureBuffer::new(self.0, capacity, overflow))
    }

    /// Subscribes, collects every element and waits up to `timeout` for the terminal
    /// signal (`Err(Error::Timeout)` if it does not come; the subscription is then
    /// cancelled).
    pub fn collect_blocking(self, timeout: Duration) -> Result<Vec<P::Item>, Error>
    where
        P::Item: Send + 'static,
    {
        ops::collect_blocking(self.0, timeout)
    }
}

impl<P: Publisher> Flux<OnBackpressureBuffer<P>> {
    /// The shared overflow counter of this buffer (readable after the run).
    pub fn overflow_counter(&self) -> OverflowCounter {
        self.0.counter()
    }
}
