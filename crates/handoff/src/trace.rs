//! The shape of the `tracing` events and spans the lab's variants emit, so a recorder
//! (the flight recorder, or tracing-chrome) can turn them into Chrome-trace tracks
//! without knowing the variants.
//!
//! | what | how it is emitted | what a recorder makes of it |
//! |---|---|---|
//! | counter | event, target [`COUNTER_TARGET`], fields `counter` (name) and `value` (number) | a `C` track named by `counter` |
//! | wait | span named [`WAIT_SPAN`], field `reason` = [`WAIT_FULL`] or [`WAIT_EMPTY`] | a slice while a thread blocks or spins for capacity or data |
//! | consumer batch | span named [`BATCH_SPAN`], field `size` | a slice per batch: batch sizes become visible |
//! | sampled publish / consume | spans named [`PUBLISH_SPAN`] / [`CONSUME_SPAN`] with field [`FLOW_FIELD`] (u64) | slices linked by a flow arrow `s` → `f` |
//! | overflow, drop, … | event, target [`INSTANT_TARGET`], field `kind` | an instant `i` |
//!
//! Everything is at `TRACE` level: with no subscriber (or a disabled level) each call site
//! costs one cached-interest check. Variants emit counters and waits at batch or wait
//! boundaries, never once per message on a fast path. Per-batch records ([`batch_span!`],
//! [`batch_counter!`]) can be sampled: each call site keeps one call in [`batch_every`] per
//! thread (default 1: all; the lab's flight mode sets 16, its full capture keeps all);
//! other counters ([`counter!`]), waits and instants are always kept.

pub use tracing;

/// Target of counter events.
pub const COUNTER_TARGET: &str = "lab::counter";
/// Target of instant events (overflow, drop, halt, …).
pub const INSTANT_TARGET: &str = "lab::instant";
/// Name of the span a thread is in while it waits.
pub const WAIT_SPAN: &str = "wait";
/// `reason` of a producer waiting for capacity.
pub const WAIT_FULL: &str = "full";
/// `reason` of a consumer waiting for data.
pub const WAIT_EMPTY: &str = "empty";
/// Name of a consumer batch span.
pub const BATCH_SPAN: &str = "batch";
/// Name of a sampled producer's publish span.
pub const PUBLISH_SPAN: &str = "publish";
/// Name of the consumer's span for a sampled message.
pub const CONSUME_SPAN: &str = "consume";
/// Field that links a publish span to its consume span.
pub const FLOW_FIELD: &str = "flow";

/// The flow id of message `seq` of `producer` (never 0).
pub fn flow_id(producer: u32, seq: u64) -> u64 {
    ((producer as u64) << 40 | (seq & ((1 << 40) - 1))) + 1
}

/// Whether this call site (its own `countdown`), on this thread, keeps this call: every
/// call while `TRACE` is disabled (the event is then a no-op anyway, and the off path stays
/// one level check), else the first and then one in [`batch_every`].
#[doc(hidden)]
#[inline(always)]
pub fn keep(countdown: &'static std::thread::LocalKey<std::cell::Cell<u32>>) -> bool {
    if !tracing::level_enabled!(tracing::Level::TRACE) {
        return true;
    }
    countdown.with(|c| match c.get() {
        0 => {
            c.set(batch_every() - 1);
            true
        }
        n => {
            c.set(n - 1);
            false
        }
    })
}

static BATCH_EVERY: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

/// One in how many per-batch records (batch spans, counter samples) each call site keeps
/// per thread.
pub fn batch_every() -> u32 {
    BATCH_EVERY.load(std::sync::atomic::Ordering::Relaxed).max(1)
}

/// Sets [`batch_every`] (at least 1) for every thread; takes effect at each call site's
/// next kept call.
pub fn set_batch_every(k: u32) {
    BATCH_EVERY.store(k.max(1), std::sync::atomic::Ordering::Relaxed);
}

/// Emits a counter sample: `counter!("queue_depth", n)`. Every call is kept; a counter
/// sampled once per consumer batch uses [`batch_counter!`].
#[macro_export]
macro_rules! counter {
    ($name:literal, $value:expr) => {
        $crate::trace::tracing::trace!(
            target: "lab::counter",
            counter = $name,
            value = ($value) as u64
        )
    };
}

/// Emits a counter sample taken once per consumer batch (`batch_counter!("queue_depth",
/// n)`): as [`counter!`], but this call site keeps one call in [`batch_every`] per thread.
#[macro_export]
macro_rules! batch_counter {
    ($name:literal, $value:expr) => {{
        ::std::thread_local! {
            static COUNTDOWN: ::std::cell::Cell<u32> = const { ::std::cell::Cell::new(0) };
        }
        if $crate::trace::keep(&COUNTDOWN) {
            $crate::counter!($name, $value)
        }
    }};
}

/// Emits an instant: `instant!("overflow", count = n)`.
#[macro_export]
macro_rules! instant {
    ($kind:literal $(, $($fields:tt)*)?) => {
        $crate::trace::tracing::trace!(target: "lab::instant", kind = $kind $(, $($fields)*)?)
    };
}

/// Enters a wait span for the rest of the scope's guard: `let _w = wait_span!("full");`.
#[macro_export]
macro_rules! wait_span {
    ($reason:expr) => {
        $crate::trace::tracing::trace_span!("wait", reason = $reason).entered()
    };
}

/// Enters a consumer batch span: `let _b = batch_span!(n);`.
#[macro_export]
macro_rules! batch_span {
    ($size:expr) => {{
        ::std::thread_local! {
            static COUNTDOWN: ::std::cell::Cell<u32> = const { ::std::cell::Cell::new(0) };
        }
        if $crate::trace::keep(&COUNTDOWN) {
            $crate::trace::tracing::trace_span!("batch", size = ($size) as u64).entered()
        } else {
            $crate::trace::tracing::Span::none().entered()
        }
    }};
}

/// A minimal `tracing` subscriber that logs span names with their fields and events with
/// their target and fields, one line each (`"span wait reason=full"`,
/// `"event lab::counter counter=queue_depth value=3"`): for tests that check what a variant
/// emits. Not for measuring: every call locks and formats.
#[derive(Clone, Default, Debug)]
pub struct TraceLog {
    /// The lines logged so far.
    pub log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    next: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

struct LogFields(String);

impl tracing::field::Visit for LogFields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={:?}", field.name(), value));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push_str(&format!(" {}={}", field.name(), value));
    }
}

impl TraceLog {
    /// Takes the lines logged so far, leaving the log empty.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

impl tracing::Subscriber for TraceLog {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut f = LogFields(format!("span {}", attrs.metadata().name()));
        attrs.record(&mut f);
        self.log.lock().unwrap().push(f.0);
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        tracing::span::Id::from_u64(id)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut f = LogFields(format!("event {}", event.metadata().target()));
        event.record(&mut f);
        self.log.lock().unwrap().push(f.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}
