//! The LMAX Disruptor in Rust: a ring of preallocated events, sequence numbers instead of
//! locks, batch event processors, and the four wait strategies.
//!
//! # What it models
//! Seed `001` moves a game server's message bus from `java.util.concurrent.
//! LinkedBlockingQueue` (a put lock and a take lock) to the LMAX Disruptor 3.3 with
//! `ProducerType.MULTI` and `BlockingWaitStrategy`, 1–6 producers and one consumer. This
//! crate is that Disruptor (as of Disruptor 4.0, `com.lmax.disruptor.RingBuffer`,
//! `SingleProducerSequencer`, `MultiProducerSequencer`, `BatchEventProcessor`,
//! `*WaitStrategy`), in two forms:
//! * [`Builder`]: the Disruptor API. Events are made once by a factory (`Fn() -> E`);
//!   producers claim a slot and write the event in place ([`SingleProducer::publish`],
//!   `try_publish`, `batch_publish` of `n` slots); batch event processor threads call
//!   `handler(&event, sequence, end_of_batch)`, each thread first running the
//!   `on_thread_start` hook if one is set (Java's `ThreadFactory`: pin, name, priority).
//!   [`Processors::join`] waits for the
//!   producers to go and the ring to drain; [`Processors::halt`] stops now and reports
//!   how many events were left.
//! * [`RingHandoff`]: the lab's [`handoff::Handoff`] contract over the same core, moving
//!   owned messages through `MaybeUninit` slots.
//!
//! # Design
//! * Size is a power of two; sequence `s` lives in slot `s & (size - 1)`.
//! * Single producer: the claim is a plain counter in the producer handle and publishing
//!   is one `Release` store; no read-modify-write on the path.
//! * Multi producer: one `fetch_add` on a shared claim cursor (Disruptor 4's `next()`;
//!   `try_publish` uses a compare-exchange loop, as `tryNext()` does), then the slot's lap
//!   number is stored in an availability buffer; the consumer scans it for the highest
//!   contiguous published sequence. Close and "consumers gone" are two bits of that
//!   cursor, so a claim learns of them at no extra cost. A handle whose last claim was
//!   interleaved with another producer's pauses (2^step spin hints, up to 2^8) before its
//!   next one, and keeps pausing while the cursor moves (another core is in a burst): a
//!   `fetch_add` never fails, so without it two producers on two cores moved the
//!   cursor's line across cores on every claim (a departure from Java, kept because it
//!   raised MPSC throughput on 2 cores, and the watching raised it again). After a claim
//!   the handle prefetches, for writing, the slot and availability lines 16 sequences
//!   ahead: on x86 the `fetch_add` is a full barrier that otherwise stalls on each new
//!   line the consumer last read (it raised one producer's throughput) (figures: docs/design-figures.md).
//! * A batch event processor that finds a short run (under 1024 events) without having
//!   waited for it pauses (128 spin hints) and looks again, and again while the stream is
//!   fast (≥ 32 events per pause, at most 8 pauses), so it takes long runs instead of
//!   trailing its producers slot by slot on the same cache lines (a departure from Java,
//!   kept because it multiplied SPSC BusySpin's and one producer's throughput in
//!   `examples/spsc_modes.rs` and `examples/mpsc_modes.rs`; figures:
//!   docs/design-figures.md); an event reaching an idle processor is handled at once, and
//!   a stream slower than 32 events per pause pauses once. The handoff adapter's
//!   `recv_batch` gathers its runs the same way, up to its `max`.
//! * Producers gate on the slowest consumer through a limit cached in each producer handle
//!   and refreshed only when a claim reaches it. Cursors, gates and the state word are
//!   `CachePadded`.
//! * Wait strategies ([`Blocking`], [`Sleeping`], [`Yielding`], [`BusySpin`]) are type
//!   parameters, so hot loops are monomorphised; [`WaitKind`] names them at run time.
//!   Measured departures from Java, argued in [`wait`]: [`BusySpin`] yields once per 64
//!   fruitless spins (oversubscribed, a pure spin waited out whole time slices), and
//!   [`Blocking`] spins briefly before sleeping, locks to notify only when a sleeper
//!   asked for a wake-up, and on Linux pairs the sleeper's `membarrier(2)` with a compiler
//!   fence on the publish path instead of a `SeqCst` fence per publish. As in Java,
//!   a producer in a full ring does not use [`Sleeping`]/[`Yielding`]/[`BusySpin`]: it
//!   spins briefly, then parks for short spells (yields, in rings under 16Ki); with
//!   [`Blocking`] it sleeps on the condition variable. [`JavaBlocking`] is Java's
//!   `BlockingWaitStrategy` without these departures (lock and signal on every publish, no
//!   spin, producers in a full ring `parkNanos(1)` in a loop), so that the lab can measure
//!   the port with Java's waiting beside the port with its own.
//!
//! # Guarantees
//! * No allocation per message after construction (checked with dhat in
//!   `tests/zero_alloc.rs`).
//! * Per-producer FIFO; every consumer sees every published event, in sequence order.
//! * Producers wait only when the ring is full (a few spins, then short parks, as Java's
//!   sequencers do, or yields in rings under 16Ki slots; [`Blocking`]: its condition
//!   variable); consumers only when it is empty, in the wait strategy's way.
//!   `try_publish` / `try_send` never block.
//! * Shutdown: dropping the producers lets consumers drain everything published, then end.
//!   Halting with events pending and handler panics are reported as errors
//!   ([`RingError::Halted`] with the count, [`RingError::HandlerPanicked`] with the
//!   sequence), and wake every waiting thread: nothing hangs.
//!
//! # Sources
//! LMAX Disruptor technical paper (Thompson et al., 2011) and the Disruptor 4 Java sources
//! and user guide; the `disruptor` crate 4.x (its `MultiProducerBarrier` keeps one bit per
//! slot and claims with compare-exchange; this crate keeps Java's lap numbers and
//! `fetch_add`). Loom models live in `tests/loom_*.rs` (`src/loom.rs` is tokio's shim
//! pattern).

mod adapter;
mod core;
pub mod disruptor;
mod loom;
pub mod wait;

pub use adapter::{RingHandoff, RingReceiver, RingSender};
pub use disruptor::{Builder, MultiProducer, Processors, PublishError, Report, SingleProducer};
pub use wait::{
    Blocking, BusySpin, JavaBlocking, Sleeping, UnknownWaitKind, WaitKind, WaitStrategy, Yielding,
};

use std::fmt;

/// A ring could not be built, or its processors ended badly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RingError {
    /// The size is 0, not a power of two, or too large; the message says which and what
    /// to use instead.
    InvalidSize(String),
    /// No event handler was added.
    NoConsumers,
    /// A processor thread could not be started.
    Spawn(String),
    /// Handler `handler` panicked while processing `sequence`; the other processors were
    /// stopped and producers' later publishes fail.
    HandlerPanicked {
        /// Index of the handler, in the order they were added.
        handler: usize,
        /// The sequence it was processing.
        sequence: u64,
        /// The panic message.
        message: String,
    },
    /// Halted with `pending` published events not processed (by the slowest handler).
    Halted {
        /// Published, never processed.
        pending: u64,
        /// Events each handler did process.
        processed: Vec<u64>,
    },
}

impl fmt::Display for RingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RingError::InvalidSize(msg) => f.write_str(msg),
            RingError::NoConsumers => {
                f.write_str("a ring needs at least one event handler: add one with .handler(...)")
            }
            RingError::Spawn(e) => write!(f, "could not start an event processor thread: {e}"),
            RingError::HandlerPanicked { handler, sequence, message } => {
                write!(f, "event handler {handler} panicked at sequence {sequence}: {message}")
            }
            RingError::Halted { pending, .. } => {
                write!(f, "halted with {pending} published events not processed")
            }
        }
    }
}

impl std::error::Error for RingError {}

/// Checks a ring size as [`Builder`] and [`RingHandoff`] do: `Err` names the problem and a
/// valid size.
pub fn check_size(size: usize) -> Result<(), String> {
    core::check_size(size)
}
