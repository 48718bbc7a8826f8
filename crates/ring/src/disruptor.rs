//! The Disruptor API: build a ring of preallocated events, publish by writing into a
//! claimed slot, process on batch event processor threads.
//!
//! ```
//! use ring::{Builder, BusySpin};
//!
//! #[derive(Default)]
//! struct Tick { price: u64 }
//!
//! let mut sum = 0u64;
//! let (mut producer, processors) = Builder::<Tick, BusySpin>::new(64, Tick::default)
//!     .handler(move |e: &Tick, _seq, end_of_batch| {
//!         sum += e.price;
//!         if end_of_batch { /* flush */ }
//!     })
//!     .build_single()
//!     .expect("valid ring");
//! for i in 0..1_000 {
//!     producer.publish(|e| e.price = i).expect("consumers alive");
//! }
//! drop(producer); // the processors drain everything published, then end
//! let report = processors.join().expect("no handler panicked");
//! assert_eq!(report.processed, vec![1_000]);
//! ```

use crate::core::{
    check_size, Core, Multi, Refused, Sequencer, Single, Stop, TryClaimError, SHORT_RUN,
};
use crate::loom::{AtomicUsize, JoinHandle, Ordering, ThreadBuilder};
use crate::wait::WaitStrategy;
use crate::RingError;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Why a publish did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublishError {
    /// `try_publish`: not enough free slots now. Nothing was claimed.
    Full,
    /// The event processors are gone (halted, or a handler panicked): nothing will ever
    /// read the ring again.
    Halted,
    /// A batch of `n` events cannot be published into a ring of `size` slots.
    BadBatch {
        /// The batch size asked for.
        n: usize,
        /// The ring's size.
        size: usize,
    },
}

impl fmt::Display for PublishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PublishError::Full => f.write_str("ring is full"),
            PublishError::Halted => {
                f.write_str("the event processors are gone (halted or panicked)")
            }
            PublishError::BadBatch { n, size } => {
                write!(
                    f,
                    "batch of {n} events is invalid for a ring of {size} slots: use 1..={size}"
                )
            }
        }
    }
}

impl std::error::Error for PublishError {}

impl From<Refused> for PublishError {
    fn from(_: Refused) -> Self {
        // A handle can only see `Closed` once every producer is gone, i.e. never.
        PublishError::Halted
    }
}

type Spawned = JoinHandle<Exit>;

enum AnyCore<E, W> {
    Single(Arc<Core<E, W, Single>>),
    Multi(Arc<Core<E, W, Multi>>),
}

/// What each processor thread runs first, given its handler's index.
type OnStart = Arc<dyn Fn(usize) + Send + Sync>;

type Spawner<E, W> =
    Box<dyn FnOnce(&AnyCore<E, W>, usize, Option<OnStart>) -> std::io::Result<Spawned> + Send>;

/// Builds a ring with its event processors. `W` is the wait strategy, chosen at compile
/// time: `Builder::<Event, Yielding>::new(1 << 16, Event::default)`.
pub struct Builder<E, W> {
    size: usize,
    factory: Box<dyn FnMut() -> E>,
    spawners: Vec<Spawner<E, W>>,
    on_start: Option<OnStart>,
}

impl<E, W> fmt::Debug for Builder<E, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("size", &self.size)
            .field("handlers", &self.spawners.len())
            .finish_non_exhaustive()
    }
}

impl<E: Send + Sync + 'static, W: WaitStrategy> Builder<E, W> {
    /// A ring of `size` slots (a power of two; checked at build), each filled once by
    /// `factory`.
    pub fn new(size: usize, factory: impl FnMut() -> E + 'static) -> Self {
        Builder { size, factory: Box::new(factory), spawners: Vec::new(), on_start: None }
    }

    /// Runs `f(i)` on each processor's thread when it starts, before it waits for its
    /// first event (`i`: the handler's index, in the order they were added). What Java's
    /// Disruptor takes a `ThreadFactory` for: pinning the thread to a CPU, naming it for a
    /// profiler, setting its priority, before the thread sees any event. A hook that
    /// panics stops the ring as a handler that panics does: publishes then fail with
    /// [`PublishError::Halted`], and `join` reports the panic.
    pub fn on_thread_start(mut self, f: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.on_start = Some(Arc::new(f));
        self
    }

    /// Adds a batch event processor: a thread that calls `handler(&event, sequence,
    /// end_of_batch)` for every published event, in sequence order. Several handlers each
    /// see every event (the Disruptor's multicast); producers gate on the slowest.
    pub fn handler<H>(mut self, handler: H) -> Self
    where
        H: FnMut(&E, u64, bool) + Send + 'static,
    {
        let spawner: Spawner<E, W> = Box::new(move |core, i, on_start: Option<OnStart>| {
            let name = format!("ring-processor-{i}");
            match core {
                AnyCore::Single(c) => {
                    let c = c.clone();
                    ThreadBuilder::new().name(name).spawn(move || run(c, i, on_start, handler))
                }
                AnyCore::Multi(c) => {
                    let c = c.clone();
                    ThreadBuilder::new().name(name).spawn(move || run(c, i, on_start, handler))
                }
            }
        });
        self.spawners.push(spawner);
        self
    }

    fn check(&self) -> Result<(), RingError> {
        check_size(self.size).map_err(RingError::InvalidSize)?;
        if self.spawners.is_empty() {
            return Err(RingError::NoConsumers);
        }
        Ok(())
    }

    fn start(mut self, core: AnyCore<E, W>) -> Result<Processors, RingError> {
        let control: Arc<dyn Control> = match &core {
            AnyCore::Single(c) => c.clone(),
            AnyCore::Multi(c) => c.clone(),
        };
        let mut threads = Vec::with_capacity(self.spawners.len());
        for (i, spawn) in self.spawners.drain(..).enumerate() {
            match spawn(&core, i, self.on_start.clone()) {
                Ok(t) => threads.push(t),
                Err(e) => {
                    control.halt();
                    for t in threads {
                        let _ = t.join();
                    }
                    return Err(RingError::Spawn(e.to_string()));
                }
            }
        }
        Ok(Processors { threads, control, finished: false })
    }

    /// Builds for one publishing thread: the single-producer sequencer (no atomic
    /// read-modify-write when claiming).
    pub fn build_single(mut self) -> Result<(SingleProducer<E, W>, Processors), RingError> {
        self.check()?;
        let core = Arc::new(Core::new(self.size, self.spawners.len(), &mut self.factory));
        let producer = SingleProducer(Handle::new(core.clone()));
        let processors = self.start(AnyCore::Single(core))?;
        Ok((producer, processors))
    }

    /// Builds for many publishing threads: the multi-producer sequencer (one `fetch_add`
    /// per claim). Clone the producer for each thread.
    pub fn build_multi(mut self) -> Result<(MultiProducer<E, W>, Processors), RingError> {
        self.check()?;
        let core = Arc::new(Core::new(self.size, self.spawners.len(), &mut self.factory));
        let producer = MultiProducer(Handle::new(core.clone()));
        let processors = self.start(AnyCore::Multi(core))?;
        Ok((producer, processors))
    }
}

/// How one processor thread ended.
#[derive(Debug)]
struct Exit {
    processed: u64,
    panic: Option<(u64, String)>,
}

/// One batch event processor: waits for the published run, hands each event to the
/// handler with `end_of_batch` on the last, then releases the run to the producers.
fn run<E, W, S, H>(
    core: Arc<Core<E, W, S>>,
    i: usize,
    on_start: Option<OnStart>,
    mut handler: H,
) -> Exit
where
    W: WaitStrategy,
    S: Sequencer,
    H: FnMut(&E, u64, bool),
{
    let mut next = core.gate(i);
    let mut at = next;
    let mut processed = 0u64;
    let (core, at_out, processed_out) = (&core, &mut at, &mut processed);
    // The handler moves into the unwinding closure, a local of its frame, rather than
    // being reached through a captured reference: only so can the compiler keep the
    // handler's own state (a user's counters and sums) in registers across a run of
    // events, instead of loading and storing it in memory for every event. What must
    // outlive a panic (the sequence being handled, the count) is reached by reference.
    // The start hook runs inside the unwinding closure: a hook that panics stops the ring
    // as a handler that panics does, so that no producer waits for room forever.
    let outcome = catch_unwind(AssertUnwindSafe(move || {
        if let Some(f) = &on_start {
            f(i);
        }
        loop {
            if core.state() & crate::core::ST_GONE != 0 {
                return Stop::Halted;
            }
            let end = match core.wait_for_run(next, SHORT_RUN) {
                Ok(end) => end,
                Err(stop) => return stop,
            };
            {
                let _b = handoff::batch_span!(end - next);
                handoff::batch_counter!("queue_depth", end - next);
                for s in next..end {
                    *at_out = s;
                    // SAFETY: `s` is published (below `end`) and this processor's gate is
                    // `next ≤ s` until `release` below, so no producer writes the slot now.
                    unsafe { core.with_slot(s, |e| handler(e, s, s + 1 == end)) };
                }
            }
            *processed_out += end - next;
            core.release(i, end);
            next = end;
        }
    }));
    match outcome {
        Ok(_) => Exit { processed, panic: None },
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_string());
            handoff::instant!("handler_panic", sequence = at, handler = i as u64);
            // Stop everyone: producers waiting for room and the other processors wake (or
            // see it at their next poll) and give up.
            core.mark_gone();
            Exit { processed, panic: Some((at, msg)) }
        }
    }
}

/// Type-erased control of a running ring.
trait Control: Send + Sync {
    fn halt(&self);
    fn pending(&self, i: usize) -> u64;
}

impl<E: Send, W: WaitStrategy, S: Sequencer> Control for Core<E, W, S> {
    fn halt(&self) {
        self.mark_gone();
    }
    fn pending(&self, i: usize) -> u64 {
        self.pending(i)
    }
}

/// What the event processors did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Events each handler processed, in the order the handlers were added.
    pub processed: Vec<u64>,
}

/// The running event processors. [`Processors::join`] waits until the producers are gone
/// and everything published is processed; [`Processors::halt`] stops them now and reports
/// what was left. Dropping it halts, and prints a warning if events were left or a
/// handler panicked (a drop cannot return an error): prefer `join` or `halt`.
pub struct Processors {
    threads: Vec<Spawned>,
    control: Arc<dyn Control>,
    finished: bool,
}

impl fmt::Debug for Processors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Processors").field("threads", &self.threads.len()).finish_non_exhaustive()
    }
}

impl Processors {
    /// Waits until every producer handle is dropped and every published event processed.
    /// Blocks forever if a producer handle stays alive: drop them first. Errs if a
    /// handler panicked (naming the sequence), in which case the others were stopped.
    pub fn join(mut self) -> Result<Report, RingError> {
        self.finish(false)
    }

    /// Stops the processors at their next batch boundary, without waiting for the
    /// producers. Producers' later publishes fail with [`PublishError::Halted`].
    /// Errs with [`RingError::Halted`] naming how many published events were never
    /// processed, or with the panic if a handler panicked.
    pub fn halt(mut self) -> Result<Report, RingError> {
        self.finish(true)
    }

    fn finish(&mut self, halt: bool) -> Result<Report, RingError> {
        self.finished = true;
        if halt {
            self.control.halt();
        }
        let mut processed = Vec::with_capacity(self.threads.len());
        let mut panic = None;
        for (i, t) in self.threads.drain(..).enumerate() {
            match t.join() {
                Ok(exit) => {
                    processed.push(exit.processed);
                    if let (None, Some((sequence, message))) = (&panic, exit.panic) {
                        panic = Some(RingError::HandlerPanicked { handler: i, sequence, message });
                    }
                }
                Err(_) => {
                    processed.push(0);
                    panic.get_or_insert(RingError::HandlerPanicked {
                        handler: i,
                        sequence: 0,
                        message: "processor thread died outside the handler".to_string(),
                    });
                }
            }
        }
        if let Some(e) = panic {
            return Err(e);
        }
        let pending = (0..processed.len()).map(|i| self.control.pending(i)).max().unwrap_or(0);
        if pending > 0 {
            handoff::instant!("halt_with_pending", pending = pending);
            return Err(RingError::Halted { pending, processed });
        }
        Ok(Report { processed })
    }
}

impl Drop for Processors {
    fn drop(&mut self) {
        if !self.finished {
            if let Err(e) = self.finish(true) {
                eprintln!("ring: event processors dropped without join/halt: {e}");
            }
        }
    }
}

/// The producer state shared by both handle types.
struct Handle<E, W: WaitStrategy, S: Sequencer> {
    core: Arc<Core<E, W, S>>,
    claim: S::Claim,
    live: Arc<AtomicUsize>,
}

impl<E, W: WaitStrategy, S: Sequencer> Handle<E, W, S> {
    fn new(core: Arc<Core<E, W, S>>) -> Self {
        let claim = S::new_claim(core.size);
        Handle { core, claim, live: Arc::new(AtomicUsize::new(1)) }
    }

    fn batch_ok(&self, n: usize) -> Result<u64, PublishError> {
        if n == 0 || n as u64 > self.core.size {
            return Err(PublishError::BadBatch { n, size: self.core.size as usize });
        }
        Ok(n as u64)
    }

    #[inline]
    fn write<F: FnMut(&mut E, usize)>(&mut self, first: u64, n: u64, mut f: F) -> u64 {
        // Publishes even if `f` panics: a claimed sequence left unpublished would stall
        // the consumers forever. The event is then whatever `f` left in it.
        struct Publish<'a, E, W: WaitStrategy, S: Sequencer> {
            core: &'a Core<E, W, S>,
            claim: &'a mut S::Claim,
            first: u64,
            n: u64,
        }
        impl<E, W: WaitStrategy, S: Sequencer> Drop for Publish<'_, E, W, S> {
            #[inline]
            fn drop(&mut self) {
                S::publish(self.core, self.claim, self.first, self.n);
            }
        }
        let _publish = Publish { core: &self.core, claim: &mut self.claim, first, n };
        for k in 0..n {
            // SAFETY: this handle claimed `first..first + n` and has not published it:
            // nobody else reads or writes these slots now.
            unsafe { self.core.with_slot_mut(first + k, |e| f(e, k as usize)) };
        }
        first + n - 1
    }

    #[inline]
    fn publish<F: FnOnce(&mut E)>(&mut self, f: F) -> Result<u64, PublishError> {
        let seq = S::claim(&self.core, &mut self.claim, 1)?;
        let mut f = Some(f);
        Ok(self.write(seq, 1, |e, _| (f.take().expect("called once"))(e)))
    }

    #[inline]
    fn try_publish<F: FnOnce(&mut E)>(&mut self, f: F) -> Result<u64, PublishError> {
        let seq = S::try_claim(&self.core, &mut self.claim, 1).map_err(map_try)?;
        let mut f = Some(f);
        Ok(self.write(seq, 1, |e, _| (f.take().expect("called once"))(e)))
    }

    fn batch_publish<F: FnMut(&mut E, usize)>(
        &mut self,
        n: usize,
        f: F,
    ) -> Result<u64, PublishError> {
        let n = self.batch_ok(n)?;
        let first = S::claim(&self.core, &mut self.claim, n)?;
        Ok(self.write(first, n, f))
    }

    fn try_batch_publish<F: FnMut(&mut E, usize)>(
        &mut self,
        n: usize,
        f: F,
    ) -> Result<u64, PublishError> {
        let n = self.batch_ok(n)?;
        let first = S::try_claim(&self.core, &mut self.claim, n).map_err(map_try)?;
        Ok(self.write(first, n, f))
    }
}

fn map_try(e: TryClaimError) -> PublishError {
    match e {
        TryClaimError::Full => PublishError::Full,
        TryClaimError::Refused(r) => r.into(),
    }
}

impl<E, W: WaitStrategy, S: Sequencer> Drop for Handle<E, W, S> {
    fn drop(&mut self) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The last producer: processors drain what was published, then end.
            self.core.close(None);
        }
    }
}

impl<E, W: WaitStrategy> Clone for Handle<E, W, Multi> {
    fn clone(&self) -> Self {
        self.live.fetch_add(1, Ordering::Relaxed);
        Handle {
            core: self.core.clone(),
            claim: Multi::new_claim(self.core.size),
            live: self.live.clone(),
        }
    }
}

macro_rules! producer_methods {
    () => {
        /// Claims the next slot (waiting for room with the wait strategy), lets `f` write
        /// the preallocated event in place, publishes it. Returns its sequence.
        #[inline]
        pub fn publish<F: FnOnce(&mut E)>(&mut self, f: F) -> Result<u64, PublishError> {
            self.0.publish(f)
        }

        /// As [`publish`](Self::publish) if a slot is free now; otherwise
        /// [`PublishError::Full`] and nothing is claimed. Never blocks.
        #[inline]
        pub fn try_publish<F: FnOnce(&mut E)>(&mut self, f: F) -> Result<u64, PublishError> {
            self.0.try_publish(f)
        }

        /// Claims `n` consecutive slots (`1 ≤ n ≤ size`) at once, calls `f(event, i)` for
        /// `i` in `0..n`, publishes them together. Returns the last sequence.
        #[inline]
        pub fn batch_publish<F: FnMut(&mut E, usize)>(
            &mut self,
            n: usize,
            f: F,
        ) -> Result<u64, PublishError> {
            self.0.batch_publish(n, f)
        }

        /// As [`batch_publish`](Self::batch_publish) if `n` slots are free now; otherwise
        /// [`PublishError::Full`]. Never blocks.
        #[inline]
        pub fn try_batch_publish<F: FnMut(&mut E, usize)>(
            &mut self,
            n: usize,
            f: F,
        ) -> Result<u64, PublishError> {
            self.0.try_batch_publish(n, f)
        }

        /// The ring's size.
        pub fn size(&self) -> usize {
            self.0.core.size as usize
        }
    };
}

/// The one producer of a single-producer ring. Dropping it ends the ring: the
/// processors drain what was published, then stop.
pub struct SingleProducer<E, W: WaitStrategy>(Handle<E, W, Single>);

impl<E, W: WaitStrategy> SingleProducer<E, W> {
    producer_methods!();
}

/// A producer of a multi-producer ring; clone it for each publishing thread. Dropping
/// the last clone ends the ring.
pub struct MultiProducer<E, W: WaitStrategy>(Handle<E, W, Multi>);

impl<E, W: WaitStrategy> MultiProducer<E, W> {
    producer_methods!();
}

impl<E, W: WaitStrategy> Clone for MultiProducer<E, W> {
    fn clone(&self) -> Self {
        MultiProducer(self.0.clone())
    }
}

impl<E, W: WaitStrategy> fmt::Debug for SingleProducer<E, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SingleProducer").field("core", &self.0.core).finish()
    }
}

impl<E, W: WaitStrategy> fmt::Debug for MultiProducer<E, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MultiProducer").field("core", &self.0.core).finish()
    }
}
