//! Demand bookkeeping of the synchronous sources: on the emitting thread's stack while the
//! subscription is only lent ([`SourceDemand`]), in an `Arc` of atomics once detached
//! ([`RemoteDemand`]).

use crate::{add_cap, RemoteSubscription, SharedSubscription, Subscription, UNBOUNDED};
use crossbeam_utils::CachePadded;
use std::cell::{Cell, OnceCell};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, Thread};

/// `stop` bit: the subscriber cancelled.
pub(crate) const CANCELLED: u8 = 1;
/// `stop` bit: the subscriber called `request(0)`.
pub(crate) const BAD_REQUEST: u8 = 2;
/// Local `stop` bit of [`SourceDemand`]: a remote side exists (not a stop by itself).
const DETACHED: u8 = 8;

/// Spins (each a `spin_loop` hint, then a check) before a waiting thread parks. No
/// `yield_now` phase: on this 2-core machine under load, yielding threads lost their core
/// for whole time slices (publish_on throughput fell 5×); longer spins also hurt (the
/// spinner steals the core of the thread it waits for). Measured with `range → publish_on`.
pub(crate) const SPINS: u32 = 256;

/// What a source may do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    /// Emit this many (`UNBOUNDED`: without counting).
    Credit(u64),
    /// Stop: cancelled.
    Cancelled,
    /// Stop with `on_error(NonPositiveRequest)`.
    BadRequest,
    /// No demand and no way for any to arrive (the subscription was never detached):
    /// the source returns without a terminal signal.
    Idle,
}

/// The subscription a synchronous source lends with its signals. Not `Sync`: only the
/// emitting thread touches the cells; other threads go through the detached
/// [`RemoteDemand`].
#[derive(Debug, Default)]
pub(crate) struct SourceDemand {
    requested: Cell<u64>,
    stop: Cell<u8>,
    remote: OnceCell<Arc<RemoteDemand>>,
}

impl SourceDemand {
    #[inline]
    pub(crate) fn new() -> Self {
        SourceDemand::default()
    }

    /// Uses `r` as the detached demand from the start.
    pub(crate) fn attach(&self, r: Arc<RemoteDemand>) {
        let _ = self.remote.set(r);
    }

    /// True once the subscriber cancelled or sent `request(0)`. One `Cell` load on the
    /// per-element path: `detach` sets [`DETACHED`] there, so the atomic is read only when
    /// the subscription has a remote side.
    #[inline]
    pub(crate) fn stopped(&self) -> bool {
        let local = self.stop.get();
        local != 0
            && (local & !DETACHED != 0
                || self.remote.get().is_some_and(|r| r.stop.load(Ordering::Acquire) != 0))
    }

    /// The stop bits ([`CANCELLED`], [`BAD_REQUEST`]), local and remote.
    #[inline]
    fn stop_bits(&self) -> u8 {
        (self.stop.get() & !DETACHED)
            | self.remote.get().map_or(0, |r| r.stop.load(Ordering::Acquire))
    }

    /// Takes all the demand accumulated so far; waits for more if detached and there is
    /// none (backpressure on the emitting thread).
    #[inline]
    pub(crate) fn claim(&self) -> Claim {
        loop {
            let stop = self.stop_bits();
            if stop & BAD_REQUEST != 0 {
                return Claim::BadRequest;
            }
            if stop & CANCELLED != 0 {
                return Claim::Cancelled;
            }
            let local = self.requested.replace(0);
            if local > 0 {
                return Claim::Credit(local);
            }
            match self.remote.get() {
                None => return Claim::Idle,
                Some(r) => {
                    let n = r.requested.swap(0, Ordering::AcqRel);
                    if n > 0 {
                        return Claim::Credit(n);
                    }
                    r.wait_for_demand();
                }
            }
        }
    }
}

impl Subscription for SourceDemand {
    #[inline]
    fn request(&self, n: u64) {
        if n == 0 {
            self.stop.set(self.stop.get() | BAD_REQUEST);
            if let Some(r) = self.remote.get() {
                r.request(0);
            }
            return;
        }
        match self.remote.get() {
            Some(r) => r.request(n),
            None => self.requested.set(add_cap(self.requested.get(), n)),
        }
    }

    #[inline]
    fn cancel(&self) {
        self.stop.set(self.stop.get() | CANCELLED);
        if let Some(r) = self.remote.get() {
            r.cancel();
        }
    }

    fn detach(&self) -> SharedSubscription {
        let r = self.remote.get_or_init(|| {
            let r = RemoteDemand::new();
            r.requested.store(self.requested.replace(0), Ordering::Relaxed);
            r.stop.store(self.stop.get() & !DETACHED, Ordering::Relaxed);
            Arc::new(r)
        });
        self.stop.set(self.stop.get() | DETACHED);
        SharedSubscription::new(r.clone())
    }
}

/// A detached source's demand: atomics, plus the parked emitter to wake.
#[derive(Debug, Default)]
pub(crate) struct RemoteDemand {
    requested: CachePadded<AtomicU64>,
    stop: AtomicU8,
    parked: AtomicBool,
    waiter: Mutex<Option<Thread>>,
}

impl RemoteDemand {
    pub(crate) fn new() -> Self {
        RemoteDemand::default()
    }

    /// The stop bits ([`CANCELLED`], [`BAD_REQUEST`]).
    pub(crate) fn stop_bits(&self) -> u8 {
        self.stop.load(Ordering::Acquire)
    }

    fn has_news(&self) -> bool {
        self.requested.load(Ordering::SeqCst) > 0 || self.stop.load(Ordering::SeqCst) != 0
    }

    /// Waits until demand arrives or the subscription stops: spins, then parks.
    fn wait_for_demand(&self) {
        if self.has_news() {
            return;
        }
        let _w = handoff::wait_span!(handoff::trace::WAIT_FULL);
        for _ in 0..SPINS {
            std::hint::spin_loop();
            if self.has_news() {
                return;
            }
        }
        *self.waiter.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread::current());
        loop {
            // Dekker with `wake`: either we see the news, or the requester sees `parked`.
            self.parked.store(true, Ordering::SeqCst);
            if self.has_news() {
                self.parked.store(false, Ordering::Relaxed);
                return;
            }
            thread::park();
            self.parked.store(false, Ordering::Relaxed);
        }
    }

    fn wake(&self) {
        if self.parked.load(Ordering::SeqCst) {
            if let Some(t) = self.waiter.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                t.unpark();
            }
        }
    }
}

impl RemoteSubscription for RemoteDemand {
    fn request(&self, n: u64) {
        if n == 0 {
            self.stop.fetch_or(BAD_REQUEST, Ordering::SeqCst);
        } else {
            let mut cur = self.requested.load(Ordering::Relaxed);
            loop {
                if cur == UNBOUNDED {
                    break;
                }
                match self.requested.compare_exchange_weak(
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
        self.wake();
    }

    fn cancel(&self) {
        self.stop.fetch_or(CANCELLED, Ordering::SeqCst);
        self.wake();
    }
}
