//! `publish_on(scheduler, prefetch)`, after Reactor's `FluxPublishOn`.
//!
//! The upstream side (`Inner`) requests `prefetch` when subscribed, pushes each element into
//! a bounded SPSC ring of `prefetch` slots and bumps the WIP counter; the thread that bumps
//! it from 0 schedules a drain on the worker. The drain (`State::drain`) owns the ring's
//! consumer role and the downstream subscriber while it holds WIP; it emits up to the
//! downstream's demand, requests `limit = prefetch - prefetch/4` upstream each time that
//! many have been consumed, and leaves with the missed-count pattern: it subtracts what it
//! has seen from WIP and loops while work arrived meanwhile. Requests, cancel and terminal
//! signals bump WIP with an RMW as in Reactor; elements do not (that RMW per element on a
//! line the worker polls was the bottleneck): the pusher fences and reads WIP, and a
//! draining worker re-checks the queue after its final decrement (a Dekker handshake); an
//! upstream emitting from inside the drain's own replenish request (a travelling `range`)
//! skips even the fence ([`thread_token`]). Errors are delayed until the queued elements are delivered (Reactor's default for `publishOn`); `request(0)`,
//! cancel and a rejected schedule cut ahead.

use crate::demand::{BAD_REQUEST, CANCELLED};
use crate::scheduler::{Scheduler, Task, Worker};
use crate::spsc::SpscRing;
use crate::{
    add_cap_atomic, replenish_limit, Cancelled, Error, Publisher, RemoteSubscription,
    SharedSubscription, Subscriber, Subscription,
};
use crossbeam_utils::CachePadded;
use std::cell::UnsafeCell;
use std::sync::atomic::{fence, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Upstream finished (`on_complete`, or `on_error` with the error stored first).
const DONE: u8 = 4;
/// The scheduler refused the drain.
const REJECTED: u8 = 8;
/// How many times (8 spin hints each) a worker re-checks an empty queue before it leaves.
const LINGER_CHECKS: u32 = 16;

thread_local! {
    static TOKEN: u8 = const { 0 };
}

/// A nonzero number unique to the calling thread while it lives (its thread-local's
/// address).
#[inline]
fn thread_token() -> usize {
    TOKEN.with(|t| t as *const u8 as usize)
}

/// The `publish_on` / `limit_rate` publisher.
#[derive(Debug, Clone)]
pub struct PublishOn<P> {
    source: P,
    scheduler: Scheduler,
    prefetch: usize,
    name: &'static str,
}

impl<P> PublishOn<P> {
    pub(crate) fn new(
        source: P,
        scheduler: Scheduler,
        prefetch: usize,
        name: &'static str,
    ) -> Self {
        PublishOn { source, scheduler, prefetch, name }
    }
}

impl<P: Publisher> Publisher for PublishOn<P>
where
    P::Item: Send + 'static,
{
    type Item = P::Item;

    fn subscribe<S: Subscriber<P::Item> + Send + 'static>(self, mut s: S) {
        if self.prefetch == 0 {
            s.on_subscribe(&Cancelled);
            s.on_error(Error::InvalidArgument(format!(
                "{}: prefetch must be at least 1 (got 0); Reactor's default is {}",
                self.name,
                crate::DEFAULT_PREFETCH
            )));
            return;
        }
        let state = Arc::new(State {
            ring: SpscRing::new(self.prefetch),
            wip: CachePadded::new(AtomicUsize::new(1)), // held by the subscribing thread
            requested: CachePadded::new(AtomicU64::new(0)),
            flags: AtomicU8::new(0),
            drainer: AtomicUsize::new(0),
            error: Mutex::new(None),
            upstream: OnceLock::new(),
            worker: self.scheduler.worker(),
            prefetch: self.prefetch,
            limit: replenish_limit(self.prefetch),
            drain: UnsafeCell::new(DrainState { down: Some(s), produced: 0, consumed: 0 }),
        });
        self.source.subscribe(Inner { state, done: false });
    }
}

struct DrainState<S> {
    down: Option<S>,
    /// Elements emitted downstream so far (compared with the running total `requested`).
    produced: u64,
    /// Elements consumed since the last upstream request.
    consumed: usize,
}

struct State<T, S> {
    ring: SpscRing<T>,
    wip: CachePadded<AtomicUsize>,
    /// Total downstream demand so far (saturating; `UNBOUNDED` = no limit).
    requested: CachePadded<AtomicU64>,
    flags: AtomicU8,
    /// [`thread_token`] of the thread draining now, 0 when none: an upstream that emits
    /// from inside the drain (a `range` driven by the drain's own replenish request) can
    /// skip the fence, since the drain re-reads the queue after that request returns.
    drainer: AtomicUsize,
    error: Mutex<Option<Error>>,
    upstream: OnceLock<SharedSubscription>,
    worker: Worker,
    prefetch: usize,
    limit: usize,
    /// Touched only by the holder of `wip` (and by `Drop`).
    drain: UnsafeCell<DrainState<S>>,
}

// SAFETY: `drain` (the downstream subscriber and the counters) is accessed only by the
// thread holding WIP: WIP is taken by the RMW that moves it from 0 (or by the subscribing
// thread, which creates it at 1) and released by the RMW that brings it back to 0, both
// AcqRel, so successive holders are ordered; a handover to a worker goes through the
// worker's queue mutex (or, on `Scheduler::rayon`, rayon's job queue, whose push
// happens-before the job runs on whichever thread takes it). The ring is `Sync` for `T: Send`; everything else is atomics or
// mutexes. `S: Send` because the subscriber is used from whichever thread drains.
unsafe impl<T: Send, S: Send> Sync for State<T, S> {}

impl<T: Send + 'static, S: Subscriber<T> + Send + 'static> State<T, S> {
    /// Takes WIP if free and schedules a drain.
    #[inline]
    fn try_schedule(self: &Arc<Self>) {
        if self.wip.fetch_add(1, Ordering::AcqRel) == 0 {
            self.schedule_drain();
        }
    }

    /// The caller holds WIP: hand it to the worker (or drain here if it refuses).
    fn schedule_drain(self: &Arc<Self>) {
        let task: Arc<dyn Task> = self.clone();
        if let Err(task) = self.worker.schedule(task) {
            drop(task);
            *self.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(Error::Rejected(
                "publish_on: the scheduler was shut down; the drain was rejected".to_string(),
            ));
            self.flags.fetch_or(REJECTED, Ordering::SeqCst);
            self.drain();
        }
    }

    fn request(self: &Arc<Self>, n: u64) {
        if n == 0 {
            self.flags.fetch_or(BAD_REQUEST, Ordering::SeqCst);
        } else {
            add_cap_atomic(&self.requested, n);
        }
        self.try_schedule();
    }

    fn cancel(self: &Arc<Self>) {
        if self.flags.fetch_or(CANCELLED, Ordering::SeqCst) & CANCELLED == 0 {
            if let Some(up) = self.upstream.get() {
                up.cancel();
            }
            self.try_schedule(); // the drain drops the subscriber and the queue
        }
    }

    fn clear(&self) {
        // SAFETY: called by the WIP holder only: the sole consumer.
        while let Some(v) = unsafe { self.ring.pop() } {
            drop(v);
        }
    }

    /// The drain loop; the caller holds WIP.
    fn drain(self: &Arc<Self>) {
        let mut missed = 1;
        let token = thread_token();
        loop {
            self.drainer.store(token, Ordering::Relaxed);
            // SAFETY: we hold WIP (see `unsafe impl Sync`), so no one else touches `drain`.
            let ds = unsafe { &mut *self.drain.get() };
            self.pass(ds);
            let produced = ds.produced;
            if self.linger(produced) {
                continue; // more arrived while we waited: another pass, WIP still ours
            }
            let w = self.wip.load(Ordering::Acquire);
            if w == missed {
                self.drainer.store(0, Ordering::Relaxed);
                missed = self.wip.fetch_sub(missed, Ordering::SeqCst) - missed;
                if missed == 0 {
                    // Dekker with `Inner::on_next` (push; fence; read WIP): either it saw
                    // WIP > 0 and we see its element here, or it saw 0 and schedules.
                    fence(Ordering::SeqCst);
                    if !self.ring.is_empty()
                        && self.requested.load(Ordering::Acquire) != produced
                        && self.wip.fetch_add(1, Ordering::AcqRel) == 0
                    {
                        missed = 1;
                        continue;
                    }
                    break;
                }
            } else {
                missed = w;
            }
        }
    }

    /// Before giving WIP up on an empty queue, a worker waits briefly for the upstream's
    /// next elements (it is usually mid-burst): leaving and being rescheduled costs a
    /// queue lock and maybe a wake-up. Returns true if elements are there. Not on
    /// `immediate`, where the upstream is this very thread.
    ///
    /// The queue is checked before the first spin: under one-by-one demand a pass ends after
    /// every element with the queue still full, and spinning first would put the spin hints
    /// on every element's path (the drain then runs slower than the upstream fills it).
    fn linger(&self, produced: u64) -> bool {
        if matches!(self.worker, Worker::Immediate)
            || self.requested.load(Ordering::Relaxed) == produced
            || self.flags.load(Ordering::Relaxed) & (DONE | CANCELLED) != 0
        {
            return false;
        }
        for _ in 0..LINGER_CHECKS {
            if !self.ring.is_empty() {
                return true;
            }
            for _ in 0..8 {
                std::hint::spin_loop();
            }
        }
        !self.ring.is_empty()
    }

    /// One pass: emit what demand allows, terminate if due.
    fn pass(self: &Arc<Self>, ds: &mut DrainState<S>) {
        let handle = Handle(self);
        loop {
            if ds.down.is_none() {
                self.clear();
                return;
            }
            let flags = self.flags.load(Ordering::Acquire);
            if flags & CANCELLED != 0 {
                ds.down = None;
                self.clear();
                return;
            }
            if flags & (BAD_REQUEST | REJECTED) != 0 {
                if let Some(up) = self.upstream.get() {
                    up.cancel();
                }
                let e = if flags & BAD_REQUEST != 0 {
                    Error::NonPositiveRequest
                } else {
                    self.error.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_else(
                        || Error::Rejected("publish_on: drain rejected".to_string()),
                    )
                };
                if let Some(mut down) = ds.down.take() {
                    down.on_error(e);
                }
                self.clear();
                return;
            }
            let r = self.requested.load(Ordering::Acquire);
            let mut e = ds.produced;
            let depth = if tracing::enabled!(tracing::Level::TRACE) { self.ring.len() } else { 0 };
            handoff::batch_counter!("queue_depth", depth);
            let _b = handoff::batch_span!(depth);
            let Some(down) = ds.down.as_mut() else { return };
            let mut interrupted = false;
            while e != r {
                let done = self.flags.load(Ordering::Acquire) & DONE != 0;
                // SAFETY: WIP holder: the sole consumer of the ring.
                match unsafe { self.ring.pop() } {
                    Some(v) => {
                        down.on_next(v, &handle);
                        e += 1;
                        ds.consumed += 1;
                        if ds.consumed == self.limit {
                            ds.consumed = 0;
                            if let Some(up) = self.upstream.get() {
                                up.request(self.limit as u64);
                            }
                        }
                        if self.flags.load(Ordering::Relaxed) & (CANCELLED | BAD_REQUEST) != 0 {
                            interrupted = true;
                            break;
                        }
                    }
                    None => {
                        if done {
                            ds.produced = e;
                            self.terminate(ds);
                            return;
                        }
                        break;
                    }
                }
            }
            ds.produced = e;
            if interrupted {
                continue; // handle the cancel / bad request at the top
            }
            if e == r && self.flags.load(Ordering::Acquire) & DONE != 0 && self.ring.is_empty() {
                self.terminate(ds);
            }
            return;
        }
    }

    fn terminate(&self, ds: &mut DrainState<S>) {
        if let Some(mut down) = ds.down.take() {
            match self.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
                Some(e) => down.on_error(e),
                None => down.on_complete(),
            }
        }
    }
}

impl<T: Send + 'static, S: Subscriber<T> + Send + 'static> Task for State<T, S> {
    fn run(self: Arc<Self>) {
        self.drain();
    }
}

/// The subscription `publish_on` lends downstream.
struct Handle<'a, T, S>(&'a Arc<State<T, S>>);

impl<T: Send + 'static, S: Subscriber<T> + Send + 'static> Subscription for Handle<'_, T, S> {
    #[inline]
    fn request(&self, n: u64) {
        self.0.request(n)
    }
    fn cancel(&self) {
        self.0.cancel()
    }
    fn detach(&self) -> SharedSubscription {
        SharedSubscription::new(Arc::new(Remote(self.0.clone())))
    }
}

/// The detached downstream handle.
struct Remote<T, S>(Arc<State<T, S>>);

impl<T: Send + 'static, S: Subscriber<T> + Send + 'static> RemoteSubscription for Remote<T, S> {
    fn request(&self, n: u64) {
        self.0.request(n)
    }
    fn cancel(&self) {
        self.0.cancel()
    }
}

/// The upstream-facing subscriber: pushes into the ring.
struct Inner<T, S> {
    state: Arc<State<T, S>>,
    done: bool,
}

impl<T: Send + 'static, S: Subscriber<T> + Send + 'static> Subscriber<T> for Inner<T, S> {
    fn on_subscribe<Q: Subscription>(&mut self, up: &Q) {
        let st = &self.state;
        let _ = st.upstream.set(up.detach());
        // We hold WIP (created at 1): deliver the downstream's on_subscribe, then hand WIP
        // to the worker, which processes whatever that call requested.
        // SAFETY: WIP holder.
        let ds = unsafe { &mut *st.drain.get() };
        if let Some(down) = ds.down.as_mut() {
            down.on_subscribe(&Handle(st));
        }
        st.schedule_drain();
        up.request(st.prefetch as u64);
    }

    #[inline]
    fn on_next<Q: Subscription>(&mut self, item: T, up: &Q) {
        if self.done {
            return;
        }
        // SAFETY: the upstream's signals are serial and ordered (§1.3): one producer at a
        // time, each push happening-before the next.
        if let Err(item) = unsafe { self.state.ring.push(item) } {
            drop(item);
            self.done = true;
            up.cancel();
            *self.state.error.lock().unwrap_or_else(|e| e.into_inner()) =
                Some(Error::QueueFull { prefetch: self.state.prefetch });
            self.state.flags.fetch_or(DONE, Ordering::SeqCst);
            return self.state.try_schedule();
        }
        // Emitting from inside this pipeline's own drain (on the drain's thread): the drain
        // goes on popping after the request that led here returns. Only this thread
        // stores its token, so reading it back means it is still set (coherence).
        if self.state.drainer.load(Ordering::Relaxed) == thread_token() {
            return;
        }
        // No RMW per element: the drain's exit re-checks the queue after a SeqCst fence
        // (see `State::drain`), so a fence here and a plain read of WIP are enough to
        // know whether a drain must be scheduled.
        fence(Ordering::SeqCst);
        if self.state.wip.load(Ordering::Relaxed) == 0 {
            self.state.try_schedule();
        }
    }

    fn on_error(&mut self, error: Error) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        *self.state.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
        self.state.flags.fetch_or(DONE, Ordering::SeqCst);
        self.state.try_schedule();
    }

    fn on_complete(&mut self) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        self.state.flags.fetch_or(DONE, Ordering::SeqCst);
        self.state.try_schedule();
    }
}
