//! The direct record path: once [`crate::install_flight`] has made the recorder the
//! process's `handoff::trace::Sink`, the lab's trace macros (`counter!`, `instant!`,
//! `wait_span!`, `batch_span!`, …) call [`DirectSink`] instead of going through `tracing`.
//!
//! A record is a raw clock reading (two for a span: the guard took the first), the call
//! site's `&'static Site` address, one number and a `&'static str` address and length,
//! pushed as `record::SITE_WORDS` words into the calling thread's own ring: no dispatch,
//! no field visitor, no text copied, no lock, no allocation. Names and text are read through the
//! addresses when a dump decodes the record (`record.rs`), and the raw readings are turned
//! into nanoseconds there too.
//!
//! The ring is the one the `tracing` path uses for the same thread and recorder, so a
//! thread's records stay in one ring under one tid whichever way they came: the first
//! direct record of a thread finds (or registers) it through the layer's per-thread
//! `Local`, then caches its address in [`RING`], a `const` thread-local without a
//! destructor, so that later records read it with one thread-local load and no lazy-init
//! check.

use std::cell::Cell;
use std::ptr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use handoff::trace::{Shape, Sink, Site};

use crate::clock::Clock;
use crate::layer::with_local;
use crate::record::encode_site;
use crate::{Shared, ThreadRing};

thread_local! {
    /// The recorder and ring of this thread's last direct record, a copy of what its
    /// `Local` for that recorder holds; null until then. Invariant: while the ring address
    /// is not null, the `Local` it was copied from is alive on this thread, and with it the
    /// ring (the `Local` holds an `Arc` to it) and the recorder's allocation (a `Weak`),
    /// because a `Local` clears this cell ([`forget_ring`]) before it lets go of either.
    static RING: Cell<(*const Shared, *const ThreadRing)> =
        const { Cell::new((ptr::null(), ptr::null())) };
}

/// Clears this thread's cached ring (a `Local` is going away, at thread exit).
pub(crate) fn forget_ring() {
    RING.set((ptr::null(), ptr::null()));
}

/// The flight recorder as a `handoff::trace::Sink`: see the module docs.
pub(crate) struct DirectSink {
    shared: Arc<Shared>,
    /// A copy of the recorder's clock, read without going through `shared`.
    clock: Clock,
    /// Whether [`crate::Config::min_span_ns`] is set (spans then take the slow path).
    thresholded: bool,
}

impl DirectSink {
    pub(crate) fn new(shared: Arc<Shared>) -> DirectSink {
        let clock = shared.clock;
        let thresholded = shared.config.min_span_ns != 0;
        DirectSink { shared, clock, thresholded }
    }

    /// Pushes a record into this thread's ring for this recorder: the cached one, else
    /// through [`DirectSink::push_slow`]. The slow paths here are cold calls in tail
    /// position, so that the hot path saves no registers and makes no call.
    #[inline(always)]
    fn push(
        &self,
        start: u64,
        end: u64,
        site: &'static Site,
        num: u64,
        text: &'static str,
        shape: Shape,
    ) {
        let (shared, ring) = RING.get();
        if !ptr::eq(shared, Arc::as_ptr(&self.shared)) || ring.is_null() {
            return self.push_slow(start, end, site, num, text, shape);
        }
        // SAFETY: a non-null ring address in RING points at a live ThreadRing (RING's
        // invariant), and it is this recorder's: the recorder address beside it is this
        // recorder's allocation, which cannot have been freed and reused by another
        // recorder while the `Local` that set both holds a `Weak` to it. The ring was
        // handed to this thread alone by `register_thread`, so this thread is its only
        // writer, as `Ring::push` requires.
        let ring = unsafe { &*ring };
        ring.ring.push(&encode_site(start, end, site, num, text, shape));
    }

    /// This thread's first direct record for this recorder (or one after another
    /// recorder's): find or register the thread's ring through its `Local`, cache it in
    /// RING, push. A thread with no ring (`max_threads` alive) or no `Local` any more
    /// (thread exiting) counts the record as dropped, as the `tracing` path does.
    #[cold]
    #[inline(never)]
    fn push_slow(
        &self,
        start: u64,
        end: u64,
        site: &'static Site,
        num: u64,
        text: &'static str,
        shape: Shape,
    ) {
        with_local(&self.shared, |local, shared| match &local.ring {
            Some(ring) => {
                RING.set((Arc::as_ptr(&self.shared), Arc::as_ptr(ring)));
                ring.ring.push(&encode_site(start, end, site, num, text, shape));
            }
            None => {
                shared.dropped.fetch_add(1, Ordering::Relaxed);
            }
        });
    }

    /// A span's end when the clock is not the TSC, or a threshold is set.
    #[cold]
    #[inline(never)]
    fn span_slow(
        &self,
        site: &'static Site,
        start: u64,
        num: u64,
        text: &'static str,
        shape: Shape,
    ) {
        let end = self.clock.raw();
        if self.shared.shorter_than_min(start, end) {
            return;
        }
        self.push(start, end, site, num, text, shape);
    }

    /// An event when the clock is not the TSC.
    #[cold]
    #[inline(never)]
    fn event_slow(&self, site: &'static Site, num: u64, text: &'static str, shape: Shape) {
        let now = self.clock.raw();
        self.push(now, now, site, num, text, shape);
    }
}

impl Sink for DirectSink {
    #[inline]
    fn now(&self) -> u64 {
        self.clock.raw()
    }

    #[inline]
    fn event(&self, site: &'static Site, num: u64, text: &'static str, shape: Shape) {
        let Some(now) = self.clock.tsc_reading() else {
            return self.event_slow(site, num, text, shape);
        };
        self.push(now, now, site, num, text, shape);
    }

    #[inline]
    fn span(&self, site: &'static Site, start: u64, num: u64, text: &'static str, shape: Shape) {
        let (Some(end), false) = (self.clock.tsc_reading(), self.thresholded) else {
            return self.span_slow(site, start, num, text, shape);
        };
        self.push(start, end, site, num, text, shape);
    }
}
