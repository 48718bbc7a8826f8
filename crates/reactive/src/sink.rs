//! A serialised multi-producer unicast sink, after Reactor's
//! `Sinks.many().unicast()` with `emitNext` serialised across threads: any number of
//! threads emit into one subscriber, one at a time, in the subscriber's demand.
//!
//! Unlike `Sinks.many().unicast().onBackpressureBuffer()` (an unbounded queue) this sink
//! holds nothing itself: an emitter that finds no demand *waits* for the subscriber's next
//! `request` ([`Sink::emit`]) or gives up ([`Sink::try_emit`]). That is what makes the
//! lab's `reactive` variant bounded: everything in flight sits in the `publish_on` queue
//! behind the sink.
//!
//! Serialisation is a `Mutex` held while the subscriber's `on_next` runs (the emit lock);
//! it also gives the happens-before between successive emitters that the SPSC queue
//! behind the sink needs. Demand is an atomic the subscriber adds to; an emitter claims it
//! in bulk under the emit lock (one RMW per replenish, not per element). Emitters wait
//! for demand outside the emit lock, on a condition variable, with a wait span.

use crate::demand::{BAD_REQUEST, CANCELLED, SPINS};
use crate::{add_cap, Error, RemoteSubscription, SharedSubscription, Subscriber, Subscription};
use crossbeam_utils::CachePadded;
use handoff::{SendError, TrySendError};
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The sink was completed (or failed) by an emitter.
const CLOSED: u8 = 4;

/// The emitting side; clone it for each producer thread.
pub struct Sink<T, S> {
    shared: Arc<Shared<T, S>>,
}

impl<T, S> Clone for Sink<T, S> {
    fn clone(&self) -> Self {
        Sink { shared: self.shared.clone() }
    }
}

impl<T, S> fmt::Debug for Sink<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sink").field("state", &self.shared.state.load(Ordering::Relaxed)).finish()
    }
}

struct EmitState<S> {
    /// The subscriber, until the sink terminates or is cancelled (then dropped, §3.13).
    sub: Option<S>,
}

struct Shared<T, S> {
    emit: Mutex<EmitState<S>>,
    /// Demand claimed from `demand` by an emitter, not yet used. Written only under the
    /// emit lock (plain load/store, no RMW); read by waiters, so that claimed-but-unused
    /// demand keeps them emitting.
    credit: CachePadded<AtomicU64>,
    /// Demand requested by the subscriber, not yet claimed.
    demand: CachePadded<AtomicU64>,
    state: AtomicU8,
    waiters: AtomicUsize,
    wait_lock: Mutex<()>,
    wait_cv: Condvar,
    _items: PhantomData<fn(T)>,
}

/// The subscription the sink lends its subscriber.
struct Handle<'a, T, S>(&'a Arc<Shared<T, S>>);

impl<T: Send + 'static, S: Subscriber<T> + Send + 'static> Sink<T, S> {
    /// A sink with its one subscriber, subscribed now (`on_subscribe` runs here).
    pub fn unicast(subscriber: S) -> Self {
        let shared = Arc::new(Shared {
            emit: Mutex::new(EmitState { sub: None }),
            credit: CachePadded::new(AtomicU64::new(0)),
            demand: CachePadded::new(AtomicU64::new(0)),
            state: AtomicU8::new(0),
            waiters: AtomicUsize::new(0),
            wait_lock: Mutex::new(()),
            wait_cv: Condvar::new(),
            _items: PhantomData,
        });
        {
            let mut st = shared.lock_emit();
            let mut sub = subscriber;
            sub.on_subscribe(&Handle(&shared));
            st.sub = Some(sub);
        }
        Sink { shared }
    }

    /// Emits `value`, waiting while the subscriber has no demand. Fails (giving the value
    /// back) once the sink is completed or the subscriber cancelled.
    pub fn emit(&self, value: T) -> Result<(), SendError<T>> {
        let mut value = value;
        loop {
            match self.emit_now(value) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Closed(v)) => return Err(SendError(v)),
                Err(TrySendError::Full(v)) => {
                    value = v;
                    self.shared.wait_for_demand();
                }
            }
        }
    }

    /// Emits `value` if the subscriber has demand now; never waits for demand (it may wait
    /// briefly for the emit lock).
    pub fn try_emit(&self, value: T) -> Result<(), TrySendError<T>> {
        self.emit_now(value)
    }

    #[inline]
    fn emit_now(&self, value: T) -> Result<(), TrySendError<T>> {
        let sh = &self.shared;
        let mut st = sh.lock_emit();
        let flags = sh.state.load(Ordering::Acquire);
        if flags != 0 {
            sh.settle(&mut st, flags);
            return Err(TrySendError::Closed(value));
        }
        let mut credit = sh.credit.load(Ordering::Relaxed);
        if credit == 0 {
            credit = sh.demand.swap(0, Ordering::SeqCst);
            if credit == 0 {
                return Err(TrySendError::Full(value));
            }
            if credit != crate::UNBOUNDED {
                credit -= 1;
            }
            // Fresh credit: a waiter may have seen `demand` already swapped to 0 but not
            // this store yet; Dekker (store, then read `waiters`; both SeqCst) wakes it.
            sh.credit.store(credit, Ordering::SeqCst);
            if credit > 0 {
                sh.wake_waiters();
            }
        } else {
            if credit != crate::UNBOUNDED {
                credit -= 1;
            }
            sh.credit.store(credit, Ordering::Relaxed);
        }
        let Some(sub) = st.sub.as_mut() else { return Err(TrySendError::Closed(value)) };
        sub.on_next(value, &Handle(sh));
        let flags = sh.state.load(Ordering::Acquire);
        if flags & (CANCELLED | BAD_REQUEST) != 0 {
            sh.settle(&mut st, flags);
        }
        Ok(())
    }

    /// Completes the stream: the subscriber gets `on_complete` after everything emitted
    /// before; later emits fail.
    pub fn complete(&self) {
        self.terminate(None)
    }

    /// Fails the stream with `error` (after everything emitted before).
    pub fn error(&self, error: Error) {
        self.terminate(Some(error))
    }

    fn terminate(&self, error: Option<Error>) {
        let sh = &self.shared;
        let before = sh.state.fetch_or(CLOSED, Ordering::SeqCst);
        sh.wake_waiters();
        if before & CLOSED != 0 {
            return;
        }
        let mut st = sh.lock_emit();
        if before & (CANCELLED | BAD_REQUEST) != 0 {
            sh.settle(&mut st, before);
            return;
        }
        if let Some(mut sub) = st.sub.take() {
            match error {
                Some(e) => sub.on_error(e),
                None => sub.on_complete(),
            }
        }
    }

    /// True once completed, failed or cancelled.
    pub fn is_terminated(&self) -> bool {
        self.shared.state.load(Ordering::Acquire) != 0
    }
}

impl<T, S> Shared<T, S> {
    fn lock_emit(&self) -> MutexGuard<'_, EmitState<S>> {
        self.emit.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wake_waiters(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            let _g = self.wait_lock.lock().unwrap_or_else(|e| e.into_inner());
            self.wait_cv.notify_all();
        }
    }

    /// Demand to use (claimed or not) or a state change. A waiter sleeps only when both
    /// demand counters are 0; new demand wakes it (`request`), and so does demand turning
    /// into credit (`emit_now`).
    fn has_news(&self) -> bool {
        self.demand.load(Ordering::SeqCst) > 0
            || self.state.load(Ordering::SeqCst) != 0
            || self.credit.load(Ordering::SeqCst) > 0
    }

    /// Waits (outside the emit lock) until demand arrives or the sink stops.
    fn wait_for_demand(&self) {
        let _w = handoff::wait_span!(handoff::trace::WAIT_FULL);
        for _ in 0..SPINS {
            std::hint::spin_loop();
            if self.has_news() {
                return;
            }
        }
        // Dekker with `wake_waiters`: we count ourselves before checking, the requester
        // adds demand before reading the count; both SeqCst.
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let mut g = self.wait_lock.lock().unwrap_or_else(|e| e.into_inner());
        while !self.has_news() {
            g = self.wait_cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        drop(g);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
    }
}

impl<T, S: Subscriber<T>> Shared<T, S> {
    /// Under the emit lock, after a cancel or a `request(0)`: a bad request gets its
    /// `on_error` (§3.9), a cancel drops the subscriber (§3.13). Either way the sink is over.
    fn settle(&self, st: &mut EmitState<S>, flags: u8) {
        if let Some(mut sub) = st.sub.take() {
            if flags & BAD_REQUEST != 0 && flags & CANCELLED == 0 {
                sub.on_error(Error::NonPositiveRequest);
            }
        }
    }

    fn request(&self, n: u64) {
        if n == 0 {
            self.state.fetch_or(BAD_REQUEST, Ordering::SeqCst);
        } else {
            let _ = self.demand.fetch_update(Ordering::SeqCst, Ordering::Relaxed, |c| {
                (c != crate::UNBOUNDED).then(|| add_cap(c, n))
            });
        }
        self.wake_waiters();
    }

    fn cancel(&self) {
        self.state.fetch_or(CANCELLED, Ordering::SeqCst);
        self.wake_waiters();
        // Drop the subscriber now if no emitter is inside `on_next` (this may be a call
        // from within it); otherwise the next emitter or `complete` does.
        if let Ok(mut st) = self.emit.try_lock() {
            st.sub = None;
        }
    }
}

impl<T: Send + 'static, S: Subscriber<T> + Send + 'static> Subscription for Handle<'_, T, S> {
    #[inline]
    fn request(&self, n: u64) {
        self.0.request(n)
    }
    fn cancel(&self) {
        self.0.cancel()
    }
    fn detach(&self) -> SharedSubscription {
        SharedSubscription::new(self.0.clone())
    }
}

impl<T: Send + 'static, S: Subscriber<T> + Send + 'static> RemoteSubscription for Shared<T, S> {
    fn request(&self, n: u64) {
        Shared::request(self, n)
    }
    fn cancel(&self) {
        Shared::cancel(self)
    }
}
