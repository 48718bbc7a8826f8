//! `on_backpressure_buffer(capacity, overflow)`, after Reactor's
//! `FluxOnBackpressureBuffer`: requests unbounded upstream (turning the upstream into a
//! push source), hands elements on as the downstream requests them, and holds up to
//! `capacity` of the rest. Beyond that, [`Overflow`] decides; every overflow is counted
//! in a shared [`OverflowCounter`] and traced (`instant!("overflow")`,
//! `counter!("overflow_count")`).
//!
//! As seed 000 explains, whether the buffer ever fills depends on when the downstream
//! requests: a synchronous `request(1)` in `on_next` drains it as fast as it fills; an
//! asynchronous boundary (`publish_on(.., 1)`) behind it lets the whole upstream pour in.
//!
//! The buffer is a `Mutex<VecDeque>` (allocated once, `capacity` slots): off the hot path
//! of the lab's handoff, and the upstream and the requesting thread both touch it. The
//! downstream is delivered to by the WIP holder, with the missed-count drain loop.

use crate::demand::{BAD_REQUEST, CANCELLED};
use crate::{
    add_cap, Cancelled, Error, Publisher, RemoteSubscription, SharedSubscription, Subscriber,
    Subscription, UNBOUNDED,
};
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

const DONE: u8 = 4;

/// What to do with an element that finds the buffer full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Cancel upstream and signal `on_error(Error::Overflow)` at once (buffered elements
    /// are discarded), Reactor's default.
    Error,
    /// Drop the arriving element (Reactor's `BufferOverflowStrategy.DROP_LATEST`).
    DropLatest,
    /// Drop the oldest buffered element and keep the arriving one (`DROP_OLDEST`).
    DropOldest,
}

/// How many elements found the buffer full; shared, readable during and after a run.
#[derive(Debug, Clone, Default)]
pub struct OverflowCounter(Arc<AtomicU64>);

impl OverflowCounter {
    /// A counter at 0.
    pub fn new() -> Self {
        OverflowCounter::default()
    }
    /// The count so far.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
    fn bump(&self) -> u64 {
        self.0.fetch_add(1, Ordering::AcqRel) + 1
    }
}

/// The `on_backpressure_buffer` publisher.
#[derive(Debug, Clone)]
pub struct OnBackpressureBuffer<P> {
    source: P,
    capacity: usize,
    overflow: Overflow,
    counter: OverflowCounter,
}

impl<P> OnBackpressureBuffer<P> {
    pub(crate) fn new(source: P, capacity: usize, overflow: Overflow) -> Self {
        OnBackpressureBuffer { source, capacity, overflow, counter: OverflowCounter::new() }
    }
    pub(crate) fn counter(&self) -> OverflowCounter {
        self.counter.clone()
    }
}

impl<P: Publisher> Publisher for OnBackpressureBuffer<P>
where
    P::Item: Send + 'static,
{
    type Item = P::Item;

    fn subscribe<S: Subscriber<P::Item> + Send + 'static>(self, mut s: S) {
        if self.capacity == 0 {
            s.on_subscribe(&Cancelled);
            s.on_error(Error::InvalidArgument(
                "on_backpressure_buffer: capacity must be at least 1 (got 0)".to_string(),
            ));
            return;
        }
        let state = Arc::new(State {
            queue: Mutex::new(VecDeque::with_capacity(self.capacity)),
            wip: AtomicUsize::new(1), // held by the subscribing thread until on_subscribe ends
            requested: AtomicU64::new(0),
            flags: AtomicU8::new(0),
            error: Mutex::new(None),
            upstream: OnceLock::new(),
            capacity: self.capacity,
            overflow: self.overflow,
            counter: self.counter,
            drain: UnsafeCell::new(DrainState { down: Some(s), produced: 0 }),
        });
        self.source.subscribe(Inner { state, done: false });
    }
}

struct DrainState<S> {
    down: Option<S>,
    produced: u64,
}

struct State<T, S> {
    queue: Mutex<VecDeque<T>>,
    wip: AtomicUsize,
    requested: AtomicU64,
    flags: AtomicU8,
    error: Mutex<Option<Error>>,
    upstream: OnceLock<SharedSubscription>,
    capacity: usize,
    overflow: Overflow,
    counter: OverflowCounter,
    drain: UnsafeCell<DrainState<S>>,
}

// SAFETY: `drain` is touched only by the WIP holder; WIP moves between threads through
// AcqRel RMWs (taken from 0, released back to 0), which order successive holders. The
// rest is atomics and mutexes. `S: Send`: the subscriber is called from whichever thread
// holds WIP; `T: Send`: elements cross threads through the queue.
unsafe impl<T: Send, S: Send> Sync for State<T, S> {}

impl<T: Send + 'static, S: Subscriber<T> + Send + 'static> State<T, S> {
    fn try_drain(self: &Arc<Self>) {
        if self.wip.fetch_add(1, Ordering::AcqRel) == 0 {
            self.drain();
        }
    }

    fn drain(self: &Arc<Self>) {
        let mut missed = 1;
        loop {
            // SAFETY: WIP holder (see `unsafe impl Sync`).
            let ds = unsafe { &mut *self.drain.get() };
            self.pass(ds);
            let w = self.wip.load(Ordering::Acquire);
            if w == missed {
                missed = self.wip.fetch_sub(missed, Ordering::AcqRel) - missed;
                if missed == 0 {
                    break;
                }
            } else {
                missed = w;
            }
        }
    }

    fn lock_queue(&self) -> std::sync::MutexGuard<'_, VecDeque<T>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn pass(self: &Arc<Self>, ds: &mut DrainState<S>) {
        let handle = Handle(self);
        loop {
            if ds.down.is_none() {
                self.lock_queue().clear();
                return;
            }
            let flags = self.flags.load(Ordering::Acquire);
            if flags & CANCELLED != 0 {
                ds.down = None;
                self.lock_queue().clear();
                return;
            }
            if flags & BAD_REQUEST != 0 {
                if let Some(up) = self.upstream.get() {
                    up.cancel();
                }
                if let Some(mut d) = ds.down.take() {
                    d.on_error(Error::NonPositiveRequest);
                }
                self.lock_queue().clear();
                return;
            }
            // An overflow error cuts ahead of the buffered elements.
            if flags & DONE != 0 {
                let e = self.error.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some(e @ Error::Overflow { .. }) = e {
                    self.lock_queue().clear();
                    if let Some(mut d) = ds.down.take() {
                        d.on_error(e);
                    }
                    return;
                } else if let Some(e) = e {
                    *self.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                }
            }
            let r = self.requested.load(Ordering::Acquire);
            let mut e = ds.produced;
            let Some(down) = ds.down.as_mut() else { return };
            let mut interrupted = false;
            while e != r {
                let done = self.flags.load(Ordering::Acquire) & DONE != 0;
                let next = self.lock_queue().pop_front();
                match next {
                    Some(v) => {
                        down.on_next(v, &handle);
                        e += 1;
                        if self.flags.load(Ordering::Relaxed) & (CANCELLED | BAD_REQUEST) != 0 {
                            interrupted = true;
                            break;
                        }
                    }
                    None => {
                        if done {
                            ds.produced = e;
                            return self.terminate(ds);
                        }
                        break;
                    }
                }
            }
            ds.produced = e;
            if interrupted {
                continue;
            }
            if self.flags.load(Ordering::Acquire) & DONE != 0 && self.lock_queue().is_empty() {
                self.terminate(ds);
            }
            return;
        }
    }

    fn terminate(&self, ds: &mut DrainState<S>) {
        if let Some(mut d) = ds.down.take() {
            match self.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
                Some(e) => d.on_error(e),
                None => d.on_complete(),
            }
        }
    }

    fn request(self: &Arc<Self>, n: u64) {
        if n == 0 {
            self.flags.fetch_or(BAD_REQUEST, Ordering::SeqCst);
        } else {
            let _ = self.requested.fetch_update(Ordering::AcqRel, Ordering::Relaxed, |c| {
                (c != UNBOUNDED).then(|| add_cap(c, n))
            });
        }
        self.try_drain();
    }

    fn cancel(self: &Arc<Self>) {
        if self.flags.fetch_or(CANCELLED, Ordering::SeqCst) & CANCELLED == 0 {
            if let Some(up) = self.upstream.get() {
                up.cancel();
            }
            self.try_drain();
        }
    }
}

struct Handle<'a, T, S>(&'a Arc<State<T, S>>);

impl<T: Send + 'static, S: Subscriber<T> + Send + 'static> Subscription for Handle<'_, T, S> {
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

struct Remote<T, S>(Arc<State<T, S>>);

impl<T: Send + 'static, S: Subscriber<T> + Send + 'static> RemoteSubscription for Remote<T, S> {
    fn request(&self, n: u64) {
        self.0.request(n)
    }
    fn cancel(&self) {
        self.0.cancel()
    }
}

struct Inner<T, S> {
    state: Arc<State<T, S>>,
    done: bool,
}

impl<T: Send + 'static, S: Subscriber<T> + Send + 'static> Subscriber<T> for Inner<T, S> {
    fn on_subscribe<Q: Subscription>(&mut self, up: &Q) {
        let st = &self.state;
        let _ = st.upstream.set(up.detach());
        // SAFETY: WIP holder (created at 1 for this call).
        let ds = unsafe { &mut *st.drain.get() };
        if let Some(d) = ds.down.as_mut() {
            d.on_subscribe(&Handle(st));
        }
        st.drain(); // release WIP, serving what the downstream requested meanwhile
        up.request(UNBOUNDED);
    }

    fn on_next<Q: Subscription>(&mut self, item: T, up: &Q) {
        if self.done {
            return;
        }
        let st = &self.state;
        {
            let mut q = st.lock_queue();
            if q.len() < st.capacity {
                q.push_back(item);
            } else {
                let n = st.counter.bump();
                handoff::instant!("overflow", count = n);
                handoff::counter!("overflow_count", n);
                match st.overflow {
                    Overflow::DropLatest => drop(item),
                    Overflow::DropOldest => {
                        q.pop_front();
                        q.push_back(item);
                    }
                    Overflow::Error => {
                        drop(q);
                        drop(item);
                        self.done = true;
                        up.cancel();
                        *st.error.lock().unwrap_or_else(|e| e.into_inner()) =
                            Some(Error::Overflow { capacity: st.capacity });
                        st.flags.fetch_or(DONE, Ordering::SeqCst);
                    }
                }
            }
        }
        st.try_drain();
    }

    fn on_error(&mut self, error: Error) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        *self.state.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
        self.state.flags.fetch_or(DONE, Ordering::SeqCst);
        self.state.try_drain();
    }

    fn on_complete(&mut self) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        self.state.flags.fetch_or(DONE, Ordering::SeqCst);
        self.state.try_drain();
    }
}
