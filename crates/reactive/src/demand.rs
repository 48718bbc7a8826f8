//! Demand bookkeeping of the synchronous sources: on the emitting thread's stack while the
//! subscription is only lent ([`SourceDemand`]), in an `Arc` of atomics once detached
//! ([`RemoteDemand`]).
//!
//! A detached source that runs out of demand either waits for more on its thread
//! ([`SourceDemand::claim`]) or, if it can travel (`Range`), parks its state in the
//! remote side's emitter slot ([`RemoteDemand::hand_over`]) and returns; the next
//! `request` then takes the emitter and emits on the requesting thread, as Reactor's
//! `FluxRange` does. The slot is an `AtomicPtr` taken by swap, so whoever holds the
//! emitter is its only user; a Dekker handshake (the requester adds demand, then swaps
//! the slot; the emitter puts itself back, then re-reads demand, both `SeqCst`) makes sure
//! demand that arrives while the emitter is being parked is never stranded.

use crate::{add_cap, add_cap_atomic, RemoteSubscription, SharedSubscription, Subscription};
use crossbeam_utils::CachePadded;
use std::cell::{Cell, OnceCell};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::{self, Thread};

/// `stop` bit: the subscriber cancelled.
pub(crate) const CANCELLED: u8 = 1;
/// `stop` bit: the subscriber called `request(0)`.
pub(crate) const BAD_REQUEST: u8 = 2;
/// Local `stop` bit of [`SourceDemand`]: a remote side exists (not a stop by itself).
const DETACHED: u8 = 8;

/// Spins (each a `spin_loop` hint, then a check) before a waiting thread parks. No
/// `yield_now` phase: with more threads than cores, a yielding thread can lose its core for
/// a whole time slice; longer spins also hurt (the spinner steals the core of the thread it
/// waits for). Both measured with `range → publish_on` (docs/design-figures.md).
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

    /// The detached side, if any.
    #[inline]
    pub(crate) fn remote(&self) -> Option<&Arc<RemoteDemand>> {
        self.remote.get()
    }

    /// Takes all the demand accumulated so far without waiting: [`Claim::Idle`] when there
    /// is none (detached or not).
    #[inline]
    pub(crate) fn try_claim(&self) -> Claim {
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
        self.remote.get().map_or(Claim::Idle, |r| r.claim())
    }

    /// Takes all the demand accumulated so far; waits for more if detached and there is
    /// none (backpressure on the emitting thread).
    #[inline]
    pub(crate) fn claim(&self) -> Claim {
        loop {
            match (self.try_claim(), self.remote.get()) {
                (Claim::Idle, Some(r)) => r.wait_for_demand(),
                (c, _) => return c,
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
            RemoteDemand::new_arc(self.requested.replace(0), self.stop.get() & !DETACHED)
        });
        self.stop.set(self.stop.get() | DETACHED);
        SharedSubscription::new(r.clone())
    }
}

/// A source's state that can move to whichever thread requests next (see the module docs).
pub(crate) trait Emitter: Send {
    /// Emits within the demand of `r` (claimed with [`RemoteDemand::claim`]), lending `s`
    /// with each signal. Returns `true` when the stream is over (terminal signal sent, or
    /// cancelled): the emitter is then dropped; `false` when demand ran out.
    fn emit(&mut self, r: &RemoteDemand, s: &Lent<'_>) -> bool;
}

/// The parked emitter (a thin pointer to the boxed trait object).
type Parked = Box<dyn Emitter>;

/// A detached source's demand: atomics, the parked thread to wake (waiting sources), or
/// the parked emitter to run (travelling sources).
#[derive(Debug)]
pub(crate) struct RemoteDemand {
    requested: CachePadded<AtomicU64>,
    stop: AtomicU8,
    parked: AtomicBool,
    waiter: Mutex<Option<Thread>>,
    /// The parked emitter, or null (none yet, already taken, or the stream is over).
    emitter: AtomicPtr<Parked>,
    /// This side's own handle, for subscriptions lent by a running emitter to detach
    /// through (weak: the parked emitter must not keep its own slot alive).
    me: Weak<RemoteDemand>,
}

impl Drop for RemoteDemand {
    fn drop(&mut self) {
        let p = *self.emitter.get_mut();
        if !p.is_null() {
            // SAFETY: a non-null slot holds a pointer from `Box::into_raw` in `hand_over`
            // that nobody took; `&mut self` means nobody can take it now.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

/// The subscription lent by a travelling emitter with each signal: demand goes to the
/// remote side (the running emitter reads it on its next claim).
pub(crate) struct Lent<'a> {
    r: &'a RemoteDemand,
}

impl Subscription for Lent<'_> {
    #[inline]
    fn request(&self, n: u64) {
        // No `drive`: the emitter is running (it is on this very call stack).
        self.r.add(n);
    }
    #[inline]
    fn cancel(&self) {
        self.r.stop.fetch_or(CANCELLED, Ordering::SeqCst);
    }
    fn detach(&self) -> SharedSubscription {
        match self.r.me.upgrade() {
            Some(r) => SharedSubscription::new(r),
            None => SharedSubscription::inert(),
        }
    }
}

impl RemoteDemand {
    /// A remote side holding `requested` demand and `stop` bits already.
    pub(crate) fn new_arc(requested: u64, stop: u8) -> Arc<Self> {
        Arc::new_cyclic(|me| RemoteDemand {
            requested: CachePadded::new(AtomicU64::new(requested)),
            stop: AtomicU8::new(stop),
            parked: AtomicBool::new(false),
            waiter: Mutex::new(None),
            emitter: AtomicPtr::new(ptr::null_mut()),
            me: me.clone(),
        })
    }

    /// Takes all the demand so far: `Credit`, a stop, or `Idle` (none).
    #[inline]
    pub(crate) fn claim(&self) -> Claim {
        let stop = self.stop.load(Ordering::Acquire);
        if stop & BAD_REQUEST != 0 {
            Claim::BadRequest
        } else if stop & CANCELLED != 0 {
            Claim::Cancelled
        } else {
            match self.requested.swap(0, Ordering::AcqRel) {
                0 => Claim::Idle,
                n => Claim::Credit(n),
            }
        }
    }

    /// True once cancelled or `request(0)` arrived.
    #[inline]
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire) != 0
    }

    /// Parks `e`, the state of a source that ran out of demand, for the next requester to
    /// run; if demand arrived meanwhile, runs it here.
    pub(crate) fn hand_over(&self, e: Parked) {
        self.park_emitter(Box::into_raw(Box::new(e)));
        if self.has_news() {
            self.drive();
        }
    }

    /// Puts the emitter `p` in the empty slot. The handshake with requesters rests on
    /// read-modify-writes of the slot on both sides (a swap here, a swap in `drive`), not
    /// on the order of a store and a load to different places: the RMWs on one location
    /// are totally ordered, so either a requester's swap comes after this one and takes
    /// the emitter, or it came before, and this swap reads its write and so acquires the
    /// demand it added (`add` precedes it on the requester's thread).
    fn park_emitter(&self, p: *mut Parked) {
        let was = self.emitter.swap(p, Ordering::AcqRel);
        debug_assert!(was.is_null(), "one emitter per subscription");
    }

    /// Runs the parked emitter here if there is one and nobody else holds it, until demand
    /// runs out again (then parks it back) or the stream ends (then drops it).
    fn drive(&self) {
        loop {
            let p = self.emitter.swap(ptr::null_mut(), Ordering::AcqRel);
            if p.is_null() {
                return; // none parked, or another thread is running it
            }
            // SAFETY: `p` came from `Box::into_raw` in `hand_over` or below, and the swap
            // made this thread its only holder.
            let mut e = unsafe { Box::from_raw(p) };
            if e.emit(self, &Lent { r: self }) {
                return; // over: dropped here
            }
            self.park_emitter(Box::into_raw(e));
            // Demand that arrived after `emit`'s last claim found the slot empty and left:
            // take the emitter back for it.
            if !self.has_news() {
                return;
            }
        }
    }

    /// Adds `n` to the demand (`n > 0`), saturating.
    #[inline]
    fn add(&self, n: u64) {
        if n == 0 {
            self.stop.fetch_or(BAD_REQUEST, Ordering::SeqCst);
            return;
        }
        add_cap_atomic(&self.requested, n);
    }

    /// A requester's side of the handshake: runs a parked emitter, if any.
    #[inline]
    fn after_news(&self) {
        // Always the swap in `drive`, never a plain load first: see `park_emitter`.
        self.drive();
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
            // The handshake with `wake` is two RMWs on `parked`: either `wake`'s comes
            // later and reads `true`, or this swap reads `wake`'s write and acquires the
            // news added before it.
            self.parked.swap(true, Ordering::AcqRel);
            if self.has_news() {
                self.parked.store(false, Ordering::Relaxed);
                return;
            }
            thread::park();
            self.parked.store(false, Ordering::Relaxed);
        }
    }

    fn wake(&self) {
        // An RMW that writes back what it reads: see `wait_for_demand`.
        if self.parked.fetch_or(false, Ordering::AcqRel) {
            if let Some(t) = self.waiter.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                t.unpark();
            }
        }
    }
}

impl RemoteSubscription for RemoteDemand {
    fn request(&self, n: u64) {
        self.add(n);
        self.wake();
        self.after_news();
    }

    fn cancel(&self) {
        self.stop.fetch_or(CANCELLED, Ordering::SeqCst);
        self.wake();
        self.after_news(); // the emitter sees the stop and drops the subscriber (§3.13)
    }
}
