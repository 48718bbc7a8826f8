//! Synchronous sources: `range`, `from_iter`, `just`, and the seed's hand-written
//! single-value publisher. Each emits on the subscribing thread, within its demand; a
//! detached `range` that runs out of demand continues on the thread that requests next.

use crate::demand::{Claim, Emitter, Lent, RemoteDemand, SourceDemand, BAD_REQUEST, CANCELLED};
use crate::{
    Error, Publisher, RemoteSubscription, SharedSubscription, Subscriber, Subscription, UNBOUNDED,
};
use std::cell::{Cell, OnceCell};
use std::sync::Arc;

/// Ends a source that ran out of elements: `on_error` if a `request(0)` arrived, nothing if
/// cancelled, `on_complete` otherwise.
#[inline]
fn finish<T, S: Subscriber<T>>(d: &SourceDemand, s: &mut S) {
    match d.claim_stop() {
        Some(Claim::BadRequest) => s.on_error(Error::NonPositiveRequest),
        Some(_) => {}
        None => s.on_complete(),
    }
}

impl SourceDemand {
    /// `Some(Cancelled | BadRequest)` once stopped.
    #[inline]
    fn claim_stop(&self) -> Option<Claim> {
        if !self.stopped() {
            return None;
        }
        match self.claim() {
            c @ (Claim::BadRequest | Claim::Cancelled) => Some(c),
            _ => None,
        }
    }
}

/// `Flux.range(start, count)`: the integers `start..start + count`.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    start: u64,
    end: u64,
}

impl Range {
    /// `count` integers from `start` (the end is clamped to `u64::MAX`).
    pub fn new(start: u64, count: u64) -> Self {
        Range { start, end: start.saturating_add(count) }
    }
}

impl Publisher for Range {
    type Item = u64;

    /// Emits on this thread while there is demand. A detached subscription that runs out
    /// of demand gets the rest of the range parked in its remote side: the next `request`
    /// emits on the requesting thread (Reactor's `FluxRange`), so behind `publish_on` the
    /// worker's replenishing `request` produces the next batch itself.
    #[inline]
    fn subscribe<S: Subscriber<u64> + Send + 'static>(self, mut s: S) {
        let d = SourceDemand::new();
        s.on_subscribe(&d);
        let (mut i, end) = (self.start, self.end);
        loop {
            if i == end {
                finish(&d, &mut s);
                return;
            }
            match d.try_claim() {
                Claim::Credit(c) => {
                    let stop_at = if c == UNBOUNDED { end } else { i + c.min(end - i) };
                    while i != stop_at {
                        s.on_next(i, &d);
                        i += 1;
                        if d.stopped() {
                            break;
                        }
                    }
                }
                Claim::Cancelled => return,
                Claim::BadRequest => return s.on_error(Error::NonPositiveRequest),
                Claim::Idle => {
                    if let Some(r) = d.remote() {
                        r.hand_over(Box::new(RangeEmitter { i, end, s }));
                    }
                    return;
                }
            }
        }
    }
}

/// The rest of a [`Range`], parked for whichever thread requests next.
struct RangeEmitter<S> {
    i: u64,
    end: u64,
    s: S,
}

impl<S: Subscriber<u64> + Send> Emitter for RangeEmitter<S> {
    fn emit(&mut self, r: &RemoteDemand, lent: &Lent<'_>) -> bool {
        loop {
            let claim = r.claim();
            if self.i == self.end {
                match claim {
                    Claim::BadRequest => self.s.on_error(Error::NonPositiveRequest),
                    Claim::Cancelled => {}
                    Claim::Credit(_) | Claim::Idle => self.s.on_complete(),
                }
                return true;
            }
            match claim {
                Claim::Credit(c) => {
                    let stop_at =
                        if c == UNBOUNDED { self.end } else { self.i + c.min(self.end - self.i) };
                    while self.i != stop_at {
                        self.s.on_next(self.i, lent);
                        self.i += 1;
                        if r.stopped() {
                            break;
                        }
                    }
                }
                Claim::Cancelled => return true,
                Claim::BadRequest => {
                    self.s.on_error(Error::NonPositiveRequest);
                    return true;
                }
                Claim::Idle => return false,
            }
        }
    }
}

/// `Flux.fromIterable`: the elements of an iterator.
#[derive(Debug, Clone)]
pub struct FromIter<I> {
    iter: I,
}

impl<I: Iterator> FromIter<I> {
    /// The elements of `iter`.
    pub fn new(iter: I) -> Self {
        FromIter { iter }
    }
}

impl<I: Iterator> Publisher for FromIter<I> {
    type Item = I::Item;

    #[inline]
    fn subscribe<S: Subscriber<I::Item> + Send + 'static>(self, mut s: S) {
        let d = SourceDemand::new();
        s.on_subscribe(&d);
        let mut it = self.iter.peekable();
        loop {
            if it.peek().is_none() {
                finish(&d, &mut s);
                return;
            }
            match d.claim() {
                Claim::Credit(c) => {
                    let mut left = c;
                    while left > 0 {
                        let Some(v) = it.next() else { break };
                        s.on_next(v, &d);
                        if c != UNBOUNDED {
                            left -= 1;
                        }
                        if d.stopped() {
                            break;
                        }
                    }
                }
                Claim::Cancelled | Claim::Idle => return,
                Claim::BadRequest => return s.on_error(Error::NonPositiveRequest),
            }
        }
    }
}

/// `Mono.just(value)`: one element, then `on_complete`.
#[derive(Debug, Clone, Copy)]
pub struct Just<T> {
    value: T,
}

impl<T> Just<T> {
    /// The one element.
    pub fn new(value: T) -> Self {
        Just { value }
    }
}

impl<T> Publisher for Just<T> {
    type Item = T;

    #[inline]
    fn subscribe<S: Subscriber<T> + Send + 'static>(self, mut s: S) {
        let d = SourceDemand::new();
        s.on_subscribe(&d);
        match d.claim() {
            Claim::Credit(_) => {
                s.on_next(self.value, &d);
                finish(&d, &mut s);
            }
            Claim::Cancelled | Claim::Idle => {}
            Claim::BadRequest => s.on_error(Error::NonPositiveRequest),
        }
    }
}

/// The seed's hand-written `SyncSinglePublisher`: one value per subscription, with the
/// thinnest subscription that still honours the rules (one flag cell; no operator
/// machinery). Subscribe it as often as you like through `&SyncSinglePublisher`.
#[derive(Debug, Clone)]
pub struct SyncSinglePublisher<T> {
    value: T,
}

const REQUESTED: u8 = 4;

/// The hand-written publisher's subscription: a flag cell; an `Arc` only if detached.
#[derive(Debug, Default)]
struct SingleSubscription {
    flags: Cell<u8>,
    remote: OnceCell<Arc<RemoteDemand>>,
}

impl Subscription for SingleSubscription {
    #[inline]
    fn request(&self, n: u64) {
        let bit = if n == 0 { BAD_REQUEST } else { REQUESTED };
        self.flags.set(self.flags.get() | bit);
        if let Some(r) = self.remote.get() {
            r.request(n);
        }
    }
    #[inline]
    fn cancel(&self) {
        self.flags.set(self.flags.get() | CANCELLED);
        if let Some(r) = self.remote.get() {
            r.cancel();
        }
    }
    fn detach(&self) -> SharedSubscription {
        SharedSubscription::new(self.remote.get_or_init(|| RemoteDemand::new_arc(0, 0)).clone())
    }
}

impl<T: Clone> SyncSinglePublisher<T> {
    /// A publisher of `value`.
    pub fn new(value: T) -> Self {
        SyncSinglePublisher { value }
    }

    /// Subscribes `s`: `on_subscribe`, then (once requested) `on_next(value)` and
    /// `on_complete`, all on this thread.
    #[inline]
    pub fn subscribe<S: Subscriber<T>>(&self, mut s: S) {
        let sub = SingleSubscription::default();
        s.on_subscribe(&sub);
        let mut flags = sub.flags.get();
        if flags & (REQUESTED | BAD_REQUEST | CANCELLED) == 0 {
            // Not requested inline: only a detached handle can request now.
            let Some(r) = sub.remote.get() else { return };
            let r = SourceDemand::waiting_on(r.clone());
            match r.claim() {
                Claim::Credit(_) => flags |= REQUESTED,
                Claim::BadRequest => flags |= BAD_REQUEST,
                Claim::Cancelled | Claim::Idle => flags |= CANCELLED,
            }
        }
        if flags & BAD_REQUEST != 0 {
            return s.on_error(Error::NonPositiveRequest);
        }
        if flags & CANCELLED != 0 {
            return;
        }
        s.on_next(self.value.clone(), &sub);
        let flags = sub.flags.get() | sub.remote.get().map_or(0, |r| r.stop_bits());
        if flags & BAD_REQUEST != 0 {
            s.on_error(Error::NonPositiveRequest)
        } else if flags & CANCELLED == 0 {
            s.on_complete()
        }
    }
}

impl<T: Clone> Publisher for &SyncSinglePublisher<T> {
    type Item = T;
    #[inline]
    fn subscribe<S: Subscriber<T> + Send + 'static>(self, s: S) {
        SyncSinglePublisher::subscribe(self, s)
    }
}

impl SourceDemand {
    /// A demand that is already detached to `r` (the hand-written publisher waits on it).
    fn waiting_on(r: Arc<RemoteDemand>) -> Self {
        let d = SourceDemand::new();
        d.attach(r);
        d
    }
}
