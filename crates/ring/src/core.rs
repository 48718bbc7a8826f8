//! The shared heart of a ring: the preallocated slots, the sequencer (single- or
//! multi-producer), the consumers' gating sequences, the two wait strategies and the
//! close/halt state. The public Disruptor API ([`crate::disruptor`]) and the handoff
//! adapter ([`crate::adapter`]) are thin layers over it.
//!
//! Sequences are `u64` counters from 0; sequence `s` lives in slot `s & mask` during lap
//! `s >> log2(size)`. A consumer's gating sequence is the next sequence it will read, so
//! producers may write sequence `s` once `s < min(gates) + size`.

use crate::loom::{AtomicU32, AtomicU64, Ordering, UnsafeCell};
use crate::wait::WaitStrategy;
use crossbeam_utils::CachePadded;
use std::fmt;

/// State bit: the producers closed the ring; `end` holds the first sequence never claimed.
pub(crate) const ST_CLOSED: u32 = 1;
/// State bit: the consumers are gone (dropped, halted or a handler panicked).
pub(crate) const ST_GONE: u32 = 2;

/// Claim-cursor bit (multi-producer): closed.
const CLAIM_CLOSED: u64 = 1 << 63;
/// Claim-cursor bit (multi-producer): consumers gone.
const CLAIM_GONE: u64 = 1 << 62;
const CLAIM_FLAGS: u64 = CLAIM_CLOSED | CLAIM_GONE;

/// A batch processor that finds fewer than this many events published, without having
/// waited for them, pauses [`SHORT_PAUSE`] spin hints and looks again, up to
/// [`SHORT_ROUNDS`] times while each pause adds at least [`SHORT_GROWTH`] events (see
/// [`Core::wait_for_run`]).
pub(crate) const SHORT_RUN: u64 = 1024;
/// Spin hints of one pause. 32 did as well for SPSC but worse for one producer through the
/// multi-producer sequencer, whose claims the processor's looks at the newest lines slow
/// down (figures, and what a hint costs: docs/design-figures.md).
pub(crate) const SHORT_PAUSE: u32 = 128;
/// Most pauses before a short run is taken anyway: a fast stream's pauses add at most
/// `SHORT_ROUNDS * SHORT_PAUSE` spin hints to an event's latency.
pub(crate) const SHORT_ROUNDS: u32 = 8;
/// Fewest events a pause must add for the processor to pause again: a slower stream is
/// taken after one pause, so the pauses cost latency only while events stream fast (the
/// rate this stands for: docs/design-figures.md).
pub(crate) const SHORT_GROWTH: u64 = 32;

/// How far ahead of its claim a multi-producer handle prefetches slot and availability
/// lines for writing (see [`Multi::claim`]).
const PREFETCH_AHEAD: u64 = 16;

/// The largest ring: 2^30 slots.
pub(crate) const MAX_SIZE: usize = 1 << 30;

/// Checks a ring size: a power of two in `1..=2^30`.
pub(crate) fn check_size(size: usize) -> Result<(), String> {
    if size == 0 {
        return Err("ring size 0 is invalid: it must be a power of two (1, 2, 4, …, 2^30), \
                    e.g. 65536"
            .to_string());
    }
    if size > MAX_SIZE {
        return Err(format!("ring size {size} is too large: at most 2^30 = {MAX_SIZE}"));
    }
    if !size.is_power_of_two() {
        let up = size.next_power_of_two();
        return Err(format!("ring size {size} is not a power of two; try {up}"));
    }
    Ok(())
}

/// Why a claim was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The producers closed the ring.
    Closed,
    /// The consumers are gone.
    Gone,
}

/// Why a non-blocking claim failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TryClaimError {
    /// Not enough room now.
    Full,
    /// Refused for good.
    Refused(Refused),
}

/// Why a consumer's wait for data ended without data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Closed and drained: nothing more will come.
    Ended,
    /// The consumers were told to stop (halt, or another handler panicked).
    Halted,
}

/// Claiming and publishing: the part of the Disruptor that differs between one producer
/// and many.
pub(crate) trait Sequencer: Sized + Send + Sync + fmt::Debug + 'static {
    /// A producer handle's own state.
    type Claim: Send + fmt::Debug;
    fn new(size: usize) -> Self;
    fn new_claim(size: u64) -> Self::Claim;

    /// Claims `n` (1 ≤ n ≤ size) consecutive sequences, waiting for room; returns the first.
    fn claim<E, W: WaitStrategy>(
        core: &Core<E, W, Self>,
        c: &mut Self::Claim,
        n: u64,
    ) -> Result<u64, Refused>;

    /// Claims `n` sequences if there is room now.
    fn try_claim<E, W: WaitStrategy>(
        core: &Core<E, W, Self>,
        c: &mut Self::Claim,
        n: u64,
    ) -> Result<u64, TryClaimError>;

    /// Publishes `first..first + n`, which this handle claimed and wrote.
    fn publish<E, W: WaitStrategy>(
        core: &Core<E, W, Self>,
        c: &mut Self::Claim,
        first: u64,
        n: u64,
    );

    /// The exclusive end of the run of published sequences starting at `next`.
    fn published_end(&self, next: u64) -> u64;

    /// Whether `seq` is published, for `seq` within one lap of the slowest consumer.
    fn is_published(&self, seq: u64) -> bool;

    /// Sequences claimed so far (an upper bound of the published ones).
    fn claimed(&self) -> u64;

    /// Refuses all later claims; returns the first sequence never claimed if this call was
    /// the first to close. `local_end` is the single producer's own next sequence.
    fn close_claims(&self, state: &AtomicU32, local_end: Option<u64>) -> Option<u64>;

    /// Refuses all later claims because the consumers are gone.
    fn refuse_claims(&self);
}

/// The single-producer sequencer: the claim lives in the producer handle (a plain `u64`),
/// publishing is one `Release` store of the cursor. No read-modify-write on the path.
pub(crate) struct Single {
    /// Published count: every sequence below it is readable.
    cursor: CachePadded<AtomicU64>,
}

impl fmt::Debug for Single {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Single").field("cursor", &self.cursor.load(Ordering::Relaxed)).finish()
    }
}

/// The single producer's own claim state.
#[derive(Debug)]
pub(crate) struct SingleClaim {
    /// Next sequence to claim.
    next: u64,
    /// Cached gate: sequences below this may be written without looking at the consumers.
    limit: u64,
}

impl Sequencer for Single {
    type Claim = SingleClaim;

    fn new(_size: usize) -> Self {
        Single { cursor: CachePadded::new(AtomicU64::new(0)) }
    }

    fn new_claim(size: u64) -> SingleClaim {
        SingleClaim { next: 0, limit: size }
    }

    #[inline]
    fn claim<E, W: WaitStrategy>(
        core: &Core<E, W, Self>,
        c: &mut SingleClaim,
        n: u64,
    ) -> Result<u64, Refused> {
        core.refused()?;
        let first = c.next;
        let last = first + n - 1;
        if last >= c.limit {
            c.limit = core.wait_for_room(last)?;
        }
        Ok(first)
    }

    #[inline]
    fn try_claim<E, W: WaitStrategy>(
        core: &Core<E, W, Self>,
        c: &mut SingleClaim,
        n: u64,
    ) -> Result<u64, TryClaimError> {
        core.refused().map_err(TryClaimError::Refused)?;
        let first = c.next;
        let last = first + n - 1;
        if last >= c.limit {
            c.limit = core.min_gate() + core.size;
            if last >= c.limit {
                return Err(TryClaimError::Full);
            }
        }
        Ok(first)
    }

    #[inline]
    fn publish<E, W: WaitStrategy>(
        core: &Core<E, W, Self>,
        c: &mut SingleClaim,
        first: u64,
        n: u64,
    ) {
        debug_assert_eq!(first, c.next);
        c.next = first + n;
        core.seq.cursor.store(c.next, Ordering::Release);
        core.data.notify();
    }

    #[inline]
    fn published_end(&self, _next: u64) -> u64 {
        self.cursor.load(Ordering::Acquire)
    }

    fn is_published(&self, seq: u64) -> bool {
        seq < self.cursor.load(Ordering::Acquire)
    }

    fn claimed(&self) -> u64 {
        self.cursor.load(Ordering::Acquire)
    }

    fn close_claims(&self, state: &AtomicU32, local_end: Option<u64>) -> Option<u64> {
        // Only the one producer closes, and `refused()` makes it stop claiming after.
        if state.load(Ordering::Acquire) & ST_CLOSED != 0 {
            return None;
        }
        Some(local_end.unwrap_or_else(|| self.cursor.load(Ordering::Acquire)))
    }

    fn refuse_claims(&self) {}
}

/// The multi-producer sequencer (Disruptor 4's `MultiProducerSequencer`): a producer
/// claims with one `fetch_add` on the shared claim cursor, writes its slot, then stores
/// the slot's lap number in the availability buffer. A consumer finds the highest
/// contiguous published sequence by scanning that buffer. The top two bits of the claim
/// cursor carry "closed" and "consumers gone", so a claim learns both for free.
pub(crate) struct Multi {
    claim: CachePadded<AtomicU64>,
    /// Per slot, the lap of the last sequence published into it (`u32::MAX` = none yet).
    available: Box<[AtomicU32]>,
    mask: u64,
    shift: u32,
}

impl fmt::Debug for Multi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Multi").field("claim", &self.claim.load(Ordering::Relaxed)).finish()
    }
}

/// A multi producer handle's own state: its cached gate, and its contention backoff.
#[derive(Debug)]
pub(crate) struct MultiClaim {
    limit: u64,
    /// Where this handle's next claim starts if no other producer claims meanwhile.
    next: u64,
    /// Backoff exponent: spin `2^step` hints before the next claim (0: none).
    step: u32,
}

/// Cap of [`MultiClaim::step`]: at most 2^8 spin hints. A lower cap (2^6, crossbeam's
/// `Backoff` limit) and a higher one (2^10) were both slower (docs/design-figures.md).
const MAX_BACKOFF_STEP: u32 = 8;
/// Most pauses of a contended handle while other producers keep claiming (at most
/// `WATCH_ROUNDS << MAX_BACKOFF_STEP` spin hints): bounds how long one core's producers
/// can keep another's waiting.
const WATCH_ROUNDS: u32 = 16;

impl Multi {
    #[inline(always)]
    fn lap(&self, seq: u64) -> u32 {
        (seq >> self.shift) as u32
    }

    #[inline(always)]
    fn slot(&self, seq: u64) -> &AtomicU32 {
        let i = (seq & self.mask) as usize;
        debug_assert!(i < self.available.len());
        &self.available[i]
    }
}

impl Sequencer for Multi {
    type Claim = MultiClaim;

    fn new(size: usize) -> Self {
        Multi {
            claim: CachePadded::new(AtomicU64::new(0)),
            available: (0..size).map(|_| AtomicU32::new(u32::MAX)).collect(),
            mask: size as u64 - 1,
            shift: size.trailing_zeros(),
        }
    }

    fn new_claim(size: u64) -> MultiClaim {
        MultiClaim { limit: size, next: u64::MAX, step: 0 }
    }

    #[inline]
    fn claim<E, W: WaitStrategy>(
        core: &Core<E, W, Self>,
        c: &mut MultiClaim,
        n: u64,
    ) -> Result<u64, Refused> {
        // Contention backoff: a `fetch_add` never fails, so unlike a CAS loop it gives
        // producers no reason to pause, and two producers on two cores alternate claim by
        // claim, moving the cursor's cache line (and the slots') across cores each time;
        // on two cores that ran at a third of crossbeam's rate. A handle whose previous
        // claim found another producer's claim in between pauses before the next one
        // (exponentially, up to 2^8 hints; reset by an uncontended claim), so claims come
        // in bursts from one core. It pauses again, up to `WATCH_ROUNDS` times, while the
        // cursor moved during the pause: another core is in a burst, and joining it would
        // only split it (`examples/mpsc_modes.rs` on 2 cores; a yield there instead did no
        // better; figures: docs/design-figures.md). The look is a plain
        // load, once per pause. Before the claim: nothing claimed waits on the pause.
        // (Not under loom: a pause changes no outcome, and each hint would be a yield.)
        if !cfg!(loom) && c.step > 0 {
            let mut seen = core.seq.claim.load(Ordering::Relaxed);
            for _ in 0..WATCH_ROUNDS {
                for _ in 0..1u32 << c.step {
                    crate::loom::spin_loop();
                }
                let now = core.seq.claim.load(Ordering::Relaxed);
                if now == seen {
                    break;
                }
                seen = now;
            }
        }
        // The one read-modify-write of the claim path. Relaxed: slot ownership comes
        // from the RMW's atomicity; visibility of slots comes from the gates and the
        // availability buffer.
        let prev = core.seq.claim.fetch_add(n, Ordering::Relaxed);
        if c.next != prev && c.next != u64::MAX {
            c.step = (c.step + 1).min(MAX_BACKOFF_STEP);
        } else {
            c.step = 0;
        }
        c.next = prev.wrapping_add(n);
        if prev & CLAIM_FLAGS != 0 {
            // A claim after close or after the consumers left: void. The consumer knows
            // the end from `Core::end`, so the counter's advance does no harm.
            return Err(if prev & CLAIM_GONE != 0 { Refused::Gone } else { Refused::Closed });
        }
        let last = prev + n - 1;
        if last >= c.limit {
            c.limit = core.wait_for_room(last)?;
        }
        // The `lock xadd` above is a full barrier on x86: it waits until this handle's
        // earlier slot and availability stores own their cache lines. Those lines were
        // last read by the consumer (or written by a producer on the other core), so each
        // new line cost a cross-core fetch with the pipeline stalled. Fetching them for
        // writing a few claims ahead overlaps that with the work in between (faster in
        // `examples/mpsc_modes.rs` on 2 cores, one producer most; figures:
        // docs/design-figures.md). A hint only: nothing is read or written early.
        let ahead = last + PREFETCH_AHEAD;
        crate::loom::prefetch_write(core.cell(ahead));
        crate::loom::prefetch_write(core.seq.slot(ahead));
        Ok(prev)
    }

    #[inline]
    fn try_claim<E, W: WaitStrategy>(
        core: &Core<E, W, Self>,
        c: &mut MultiClaim,
        n: u64,
    ) -> Result<u64, TryClaimError> {
        let mut cur = core.seq.claim.load(Ordering::Relaxed);
        loop {
            if cur & CLAIM_FLAGS != 0 {
                let why = if cur & CLAIM_GONE != 0 { Refused::Gone } else { Refused::Closed };
                return Err(TryClaimError::Refused(why));
            }
            let last = cur + n - 1;
            if last >= c.limit {
                c.limit = core.min_gate() + core.size;
                if last >= c.limit {
                    return Err(TryClaimError::Full);
                }
            }
            match core.seq.claim.compare_exchange_weak(
                cur,
                cur + n,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(cur),
                Err(now) => cur = now,
            }
        }
    }

    #[inline]
    fn publish<E, W: WaitStrategy>(
        core: &Core<E, W, Self>,
        _c: &mut MultiClaim,
        first: u64,
        n: u64,
    ) {
        let seq = &core.seq;
        for s in first..first + n {
            seq.slot(s).store(seq.lap(s), Ordering::Release);
        }
        core.data.notify();
    }

    #[inline]
    fn published_end(&self, next: u64) -> u64 {
        // A slot cannot hold lap(s) for s ≥ next + size (that needs `next` consumed),
        // so the scan stops within one lap. The fields go in locals: each `Acquire` load
        // made the compiler reload them per slot.
        let (available, mask, shift) = (&self.available[..], self.mask, self.shift);
        let mut s = next;
        while available[(s & mask) as usize].load(Ordering::Acquire) == (s >> shift) as u32 {
            s += 1;
        }
        s
    }

    fn is_published(&self, seq: u64) -> bool {
        self.slot(seq).load(Ordering::Acquire) == self.lap(seq)
    }

    fn claimed(&self) -> u64 {
        self.claim.load(Ordering::Relaxed) & !CLAIM_FLAGS
    }

    fn close_claims(&self, _state: &AtomicU32, _local_end: Option<u64>) -> Option<u64> {
        let prev = self.claim.fetch_or(CLAIM_CLOSED, Ordering::AcqRel);
        (prev & CLAIM_CLOSED == 0).then_some(prev & !CLAIM_FLAGS)
    }

    fn refuse_claims(&self) {
        self.claim.fetch_or(CLAIM_GONE, Ordering::AcqRel);
    }
}

/// Close/halt state and the end sequence, on their own cache line: read by the single
/// producer per claim, written once or twice per ring.
struct Status {
    state: AtomicU32,
    /// The first sequence never claimed; valid once `ST_CLOSED` is set.
    end: AtomicU64,
}

/// A ring: slots, sequencer, gates, wait strategies, state.
pub(crate) struct Core<E, W, S> {
    pub(crate) seq: S,
    status: CachePadded<Status>,
    /// Next sequence each consumer will read (its gating sequence).
    gates: Box<[CachePadded<AtomicU64>]>,
    /// Consumers wait here for data; producers notify.
    pub(crate) data: CachePadded<W>,
    /// Producers wait here for room; consumers notify.
    pub(crate) space: CachePadded<W>,
    slots: Box<[UnsafeCell<E>]>,
    mask: u64,
    pub(crate) size: u64,
}

// SAFETY: `Core` hands out no references by itself: slot contents are reached only through
// the `unsafe fn`s below, whose callers follow the sequence protocol (a slot is written
// only by the producer that claimed it, after every gate has passed its previous lap, and
// read only by consumers after its publication and before they advance their gate past
// it). Under that protocol a value written on one thread is read or dropped on another,
// hence `E: Send`. Shared reads from several consumer threads at once also need
// `E: Sync`; the only API that gives `&E` to more than one thread (`crate::disruptor`)
// requires it. Sequencer and wait strategies are `Sync` themselves.
unsafe impl<E: Send, W: WaitStrategy, S: Sequencer> Sync for Core<E, W, S> {}
// SAFETY: as above; moving the ring moves owned `E`s, which are `Send`.
unsafe impl<E: Send, W: WaitStrategy, S: Sequencer> Send for Core<E, W, S> {}

impl<E, W: WaitStrategy, S: Sequencer> fmt::Debug for Core<E, W, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Core")
            .field("size", &self.size)
            .field("wait", &W::KIND)
            .field("sequencer", &self.seq)
            .field("state", &self.status.state.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<E, W: WaitStrategy, S: Sequencer> Core<E, W, S> {
    /// A ring of `size` slots (checked by the caller) filled by `factory`, gated by
    /// `consumers` consumers.
    pub(crate) fn new(size: usize, consumers: usize, mut factory: impl FnMut() -> E) -> Self {
        debug_assert!(check_size(size).is_ok() && consumers >= 1);
        Core {
            seq: S::new(size),
            status: CachePadded::new(Status { state: AtomicU32::new(0), end: AtomicU64::new(0) }),
            gates: (0..consumers).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            data: CachePadded::new(W::default()),
            space: CachePadded::new(W::default()),
            slots: (0..size).map(|_| UnsafeCell::new(factory())).collect(),
            mask: size as u64 - 1,
            size: size as u64,
        }
    }

    #[inline(always)]
    fn cell(&self, seq: u64) -> &UnsafeCell<E> {
        let i = (seq & self.mask) as usize;
        debug_assert!(i < self.slots.len());
        &self.slots[i]
    }

    /// Runs `f` on the slot of `seq` with exclusive access.
    ///
    /// # Safety
    /// The caller holds the claim of `seq` (claimed, not yet published), or is the only
    /// consumer and `seq` is published and not yet released, or has `&mut` to the ring.
    #[inline(always)]
    pub(crate) unsafe fn with_slot_mut<R>(&self, seq: u64, f: impl FnOnce(&mut E) -> R) -> R {
        // SAFETY: by the caller's contract nobody else accesses this slot until the caller
        // publishes or releases it, so a unique reference is sound for `f`'s duration.
        self.cell(seq).with_mut(|p| f(unsafe { &mut *p }))
    }

    /// Runs `f` on the slot of `seq` with shared access.
    ///
    /// # Safety
    /// `seq` is published and the caller is a consumer whose gate is at most `seq`
    /// (it has not released the slot).
    #[inline(always)]
    pub(crate) unsafe fn with_slot<R>(&self, seq: u64, f: impl FnOnce(&E) -> R) -> R {
        // SAFETY: published and not released: no producer writes the slot until every
        // gate passes `seq`, so shared references (one per consumer) are sound.
        self.cell(seq).with(|p| f(unsafe { &*p }))
    }

    #[inline]
    pub(crate) fn state(&self) -> u32 {
        self.status.state.load(Ordering::Acquire)
    }

    /// Errs if claims are refused (single producer; the multi-producer claim cursor
    /// carries the same bits).
    #[inline(always)]
    fn refused(&self) -> Result<(), Refused> {
        match self.status.state.load(Ordering::Relaxed) {
            0 => Ok(()),
            st if st & ST_GONE != 0 => Err(Refused::Gone),
            _ => Err(Refused::Closed),
        }
    }

    /// The slowest consumer's gate.
    #[inline]
    pub(crate) fn min_gate(&self) -> u64 {
        let mut min = u64::MAX;
        for g in self.gates.iter() {
            min = min.min(g.load(Ordering::Acquire));
        }
        min
    }

    /// Consumer `i`'s gate.
    #[inline]
    pub(crate) fn gate(&self, i: usize) -> u64 {
        self.gates[i].load(Ordering::Acquire)
    }

    /// Releases every slot below `next` for consumer `i` and wakes producers waiting for
    /// room (those that sleep on a condition variable; the others poll).
    #[inline]
    pub(crate) fn release(&self, i: usize, next: u64) {
        self.gates[i].store(next, Ordering::Release);
        self.space.notify_room();
    }

    /// Slow path of a claim: waits until `last < min_gate + size`; returns the new limit.
    #[cold]
    fn wait_for_room(&self, last: u64) -> Result<u64, Refused> {
        let room = || {
            if self.state() & ST_GONE != 0 {
                return Some(Err(Refused::Gone));
            }
            let limit = self.min_gate() + self.size;
            (last < limit).then_some(Ok(limit))
        };
        if let Some(r) = room() {
            return r;
        }
        let _w = handoff::wait_span!(handoff::trace::WAIT_FULL);
        self.space.wait_for_room(room, self.size >= crate::wait::ROOM_PARK_MIN_SIZE)
    }

    /// Waits until sequence `next` is published; returns the exclusive end of the
    /// published run from `next`, or why nothing more will come.
    #[inline]
    pub(crate) fn wait_for_data(&self, next: u64) -> Result<u64, Stop> {
        let end = self.seq.published_end(next);
        if end > next {
            return Ok(end);
        }
        self.wait_for_data_slow(next)
    }

    /// As [`Core::wait_for_data`], for a batch consumer that takes up to `want` events: a
    /// run shorter than `want` (and than [`SHORT_RUN`]), found without waiting, is looked
    /// at again after a short pause, and again while the stream is fast (each pause added
    /// at least [`SHORT_GROWTH`] events), at most [`SHORT_ROUNDS`] times. `want` ≤ 1
    /// never pauses.
    ///
    /// Why: a consumer as fast as its producers otherwise settles right behind them,
    /// taking runs of a few events and reading the slot and availability lines they are
    /// still writing, so lines and cursors cross cores several times per line; with the
    /// pauses the runs grow from tens of events to about a thousand, and throughput with
    /// them (SPSC BusySpin, `examples/spsc_modes.rs`; a multi-producer ring with one
    /// producer, whose claim is a full barrier that waits for those lines,
    /// `examples/mpsc_modes.rs`) (figures: docs/design-figures.md). Not after a wait: an event that arrives at an
    /// idle consumer is handled at once, and a stream slower than [`SHORT_GROWTH`] events
    /// per pause pauses once, so the pauses cost latency only while events stream fast.
    #[inline]
    pub(crate) fn wait_for_run(&self, next: u64, want: u64) -> Result<u64, Stop> {
        let mut end = self.seq.published_end(next);
        if end == next {
            return self.wait_for_data_slow(next);
        }
        if cfg!(loom) {
            return Ok(end);
        }
        let want = want.min(SHORT_RUN);
        for _ in 0..SHORT_ROUNDS {
            if end - next >= want {
                break;
            }
            for _ in 0..SHORT_PAUSE {
                crate::loom::spin_loop();
            }
            let before = end;
            end = self.seq.published_end(end);
            if end - before < SHORT_GROWTH {
                break;
            }
        }
        Ok(end)
    }

    #[cold]
    fn wait_for_data_slow(&self, next: u64) -> Result<u64, Stop> {
        let check = || {
            let st = self.state();
            if st & ST_GONE != 0 {
                return Some(Err(Stop::Halted));
            }
            let end = self.seq.published_end(next);
            if end > next {
                return Some(Ok(end));
            }
            if st & ST_CLOSED != 0 && next >= self.status.end.load(Ordering::Acquire) {
                return Some(Err(Stop::Ended));
            }
            None
        };
        if let Some(r) = check() {
            return r;
        }
        // Claimed (an upper bound of published): only `JavaBlocking` waits on it.
        let claimed = || self.seq.claimed() > next;
        let _w = handoff::wait_span!(handoff::trace::WAIT_EMPTY);
        self.data.wait_for_data(claimed, check)
    }

    /// A non-blocking look: the end of the published run from `next`, or `Err` when
    /// nothing is there now (`Empty` ⇒ `Ok(next)`) or nothing more will come.
    #[inline]
    pub(crate) fn poll_data(&self, next: u64) -> Result<u64, Stop> {
        let end = self.seq.published_end(next);
        if end > next {
            return Ok(end);
        }
        let st = self.state();
        if st & ST_GONE != 0 {
            return Err(Stop::Halted);
        }
        if st & ST_CLOSED != 0 {
            // Re-read after seeing the close: a publish may have landed in between.
            let end = self.seq.published_end(next);
            if end > next {
                return Ok(end);
            }
            if next >= self.status.end.load(Ordering::Acquire) {
                return Err(Stop::Ended);
            }
        }
        Ok(next)
    }

    /// Closes the ring for every producer; consumers drain what was claimed before, then
    /// end. `local_end` is the single producer's next sequence, if it is the caller.
    pub(crate) fn close(&self, local_end: Option<u64>) {
        if let Some(end) = self.seq.close_claims(&self.status.state, local_end) {
            self.status.end.store(end, Ordering::Relaxed);
            self.status.state.fetch_or(ST_CLOSED, Ordering::Release);
            self.data.notify();
        }
    }

    /// Marks the consumers gone: claims fail from now on, and every waiter (producers for
    /// room, other consumers for data) wakes up or sees it at its next poll.
    pub(crate) fn mark_gone(&self) {
        self.status.state.fetch_or(ST_GONE, Ordering::AcqRel);
        self.seq.refuse_claims();
        self.space.notify_room();
        self.data.notify();
    }

    /// Published but not yet read by consumer `i`, as seen now.
    pub(crate) fn pending(&self, i: usize) -> u64 {
        let next = self.gate(i);
        self.seq.published_end(next) - next
    }

    /// Messages in the ring as seen now: claimed (up to the close) minus read, at most
    /// `size`.
    pub(crate) fn depth(&self) -> usize {
        let read = self.min_gate();
        let mut claimed = self.seq.claimed();
        if self.state() & ST_CLOSED != 0 {
            claimed = claimed.min(self.status.end.load(Ordering::Acquire));
        }
        claimed.saturating_sub(read).min(self.size) as usize
    }
}
