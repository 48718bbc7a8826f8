//! The shape of the `tracing` events and spans the lab's variants emit, so a recorder
//! (the flight recorder, or tracing-chrome) can turn them into Chrome-trace tracks
//! without knowing the variants.
//!
//! | what | how it is emitted | what a recorder makes of it |
//! |---|---|---|
//! | counter | event, target [`COUNTER_TARGET`], fields `counter` (name) and `value` (number) | a `C` track named by `counter` |
//! | wait | span named [`WAIT_SPAN`], field `reason` = [`WAIT_FULL`] or [`WAIT_EMPTY`] | a slice while a thread blocks or spins for capacity or data |
//! | consumer batch | span named [`BATCH_SPAN`], field `size` | a slice per batch: batch sizes become visible |
//! | sampled publish / consume | spans named [`PUBLISH_SPAN`] / [`CONSUME_SPAN`] with field [`FLOW_FIELD`] (u64), [`publish_span!`](crate::publish_span) / [`consume_span!`](crate::consume_span) | slices linked by a flow arrow `s` → `f` |
//! | overflow, drop, … | event, target [`INSTANT_TARGET`], field `kind` | an instant `i` |
//!
//! Everything is at `TRACE` level: with no subscriber (or a disabled level) and no
//! [`Sink`], each call site costs one load (the sink check) and one cached-interest check.
//! Variants emit counters and waits at batch or wait boundaries, never once per message on
//! a fast path. Per-batch records ([`batch_span!`](crate::batch_span),
//! [`batch_counter!`](crate::batch_counter)) can be sampled: each call site keeps one call in [`batch_every`] per
//! thread (default 1: all; the lab's flight mode sets 16, its full capture keeps all);
//! other counters ([`counter!`](crate::counter)), waits and instants are always kept.
//!
//! # Two ways out: the direct path and `tracing`
//! A recorder may register itself as the process's [`Sink`] ([`set_sink`], once per
//! process; the flight recorder's `install_flight` does). From then on every macro here
//! records straight into it: each call site has a `static` [`Site`] (kind, name, target
//! and field names, all `&'static str`), and a call hands the sink that site's address,
//! one number and one `&'static str` ([`Values`]): no `tracing` dispatch, no callsite
//! interest, no field visitor, nothing formatted or copied as text. Spans become a
//! [`SpanGuard`] holding the start time, recorded whole when dropped. The number and text
//! kept, and the field names they are kept under, are the ones the flight recorder's
//! `tracing` subscriber keeps of the same call, so its output does not depend on the way
//! in.
//! Without a sink (no recorder, or tracing-chrome's full capture, or [`TraceLog`] in tests)
//! every macro goes through `tracing` exactly as written in its fallback branch, the
//! sink check costing one load. Once a sink is set it takes every macro call in the
//! process, whatever `tracing` dispatcher is current (a scoped one included); other
//! `tracing` events and spans still go to the dispatcher. [`instant!`](crate::instant) takes the direct
//! path when its fields are all `name = value` with a [`FieldValue`] (numbers, bools,
//! strings); any other form (`?x`, `%x`, dotted names) goes through `tracing` always.

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
    count_down(countdown)
}

/// The sampling of [`keep`] without its level check (the direct path: a sink is set, so
/// the call is recorded): the first call and then one in [`batch_every`].
#[doc(hidden)]
#[inline(always)]
pub fn count_down(countdown: &'static std::thread::LocalKey<std::cell::Cell<u32>>) -> bool {
    // A `const`-initialised `Cell` without a destructor: no lazy-init check on access.
    match countdown.get() {
        0 => {
            countdown.set(batch_every() - 1);
            true
        }
        n => {
            countdown.set(n - 1);
            false
        }
    }
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
/// sampled once per consumer batch uses [`batch_counter!`](crate::batch_counter).
#[macro_export]
macro_rules! counter {
    ($name:literal, $value:expr) => {{
        if let ::core::option::Option::Some(sink) = $crate::trace::sink() {
            static SITE: $crate::trace::Site = $crate::trace::Site::counter($name);
            $crate::trace::record_event(
                    sink,
                    &SITE,
                    $crate::trace::Values::counter($name, ($value) as u64),
                );
        } else {
            $crate::trace::tracing::trace!(
                target: "lab::counter",
                counter = $name,
                value = ($value) as u64
            )
        }
    }};
}

/// Emits a counter sample taken once per consumer batch (`batch_counter!("queue_depth",
/// n)`): as [`counter!`](crate::counter), but this call site keeps one call in [`batch_every`] per thread.
#[macro_export]
macro_rules! batch_counter {
    ($name:literal, $value:expr) => {{
        ::std::thread_local! {
            static COUNTDOWN: ::std::cell::Cell<u32> = const { ::std::cell::Cell::new(0) };
        }
        if let ::core::option::Option::Some(sink) = $crate::trace::sink() {
            if $crate::trace::count_down(&COUNTDOWN) {
                static SITE: $crate::trace::Site = $crate::trace::Site::counter($name);
                $crate::trace::record_event(
                    sink,
                    &SITE,
                    $crate::trace::Values::counter($name, ($value) as u64),
                );
            }
        } else if $crate::trace::keep(&COUNTDOWN) {
            $crate::trace::tracing::trace!(
                target: "lab::counter",
                counter = $name,
                value = ($value) as u64
            )
        }
    }};
}

/// Emits an instant: `instant!("overflow", count = n)`. Fields written `name = value` with
/// a [`FieldValue`] take the direct path when a [`Sink`] is set; other forms always go
/// through `tracing`.
#[macro_export]
macro_rules! instant {
    ($kind:literal $(, $field:ident = $value:expr)* $(,)?) => {{
        if let ::core::option::Option::Some(sink) = $crate::trace::sink() {
            static SITE: $crate::trace::Site =
                $crate::trace::Site::instant($kind, &["kind" $(, ::core::stringify!($field))*]);
            $crate::trace::record_event(
                sink,
                &SITE,
                $crate::trace::Values::instant(
                    $kind,
                    &[$((
                        ::core::stringify!($field),
                        $crate::trace::FieldValue::num(&($value)),
                    )),*],
                ),
            );
        } else {
            $crate::trace::tracing::trace!(target: "lab::instant", kind = $kind $(, $field = $value)*)
        }
    }};
    ($kind:literal, $($fields:tt)*) => {
        $crate::trace::tracing::trace!(target: "lab::instant", kind = $kind, $($fields)*)
    };
}

/// Enters a wait span for the rest of the scope's guard: `let _w = wait_span!("full");`
/// (the reason a `&'static str`, [`WAIT_FULL`] or [`WAIT_EMPTY`]).
#[macro_export]
macro_rules! wait_span {
    ($reason:expr) => {{
        if let ::core::option::Option::Some(sink) = $crate::trace::sink() {
            static SITE: $crate::trace::Site =
                $crate::trace::Site::span("wait", ::core::module_path!(), &["reason"]);
            $crate::trace::SpanGuard::direct(sink, &SITE, $crate::trace::Values::text(0, $reason))
        } else {
            $crate::trace::SpanGuard::tracing(
                $crate::trace::tracing::trace_span!("wait", reason = $reason).entered(),
            )
        }
    }};
}

/// Enters a consumer batch span: `let _b = batch_span!(n);`. This call site keeps one
/// call in [`batch_every`] per thread.
#[macro_export]
macro_rules! batch_span {
    ($size:expr) => {{
        ::std::thread_local! {
            static COUNTDOWN: ::std::cell::Cell<u32> = const { ::std::cell::Cell::new(0) };
        }
        if let ::core::option::Option::Some(sink) = $crate::trace::sink() {
            if $crate::trace::count_down(&COUNTDOWN) {
                static SITE: $crate::trace::Site =
                    $crate::trace::Site::span("batch", ::core::module_path!(), &["size"]);
                $crate::trace::SpanGuard::direct(
                    sink,
                    &SITE,
                    $crate::trace::Values::number(0, ($size) as u64),
                )
            } else {
                $crate::trace::SpanGuard::off()
            }
        } else if $crate::trace::keep(&COUNTDOWN) {
            $crate::trace::SpanGuard::tracing(
                $crate::trace::tracing::trace_span!("batch", size = ($size) as u64).entered(),
            )
        } else {
            $crate::trace::SpanGuard::off()
        }
    }};
}

/// Enters a sampled producer's publish span linked by `flow` ([`flow_id`]) to its
/// consume span: `let _p = publish_span!(flow);`.
#[macro_export]
macro_rules! publish_span {
    ($flow:expr) => {
        $crate::__flow_span!("publish", $flow)
    };
}

/// Enters the consumer's span for a sampled message, the other end of its
/// [`publish_span!`](crate::publish_span): `let _c = consume_span!(flow);`.
#[macro_export]
macro_rules! consume_span {
    ($flow:expr) => {
        $crate::__flow_span!("consume", $flow)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __flow_span {
    ($name:literal, $flow:expr) => {{
        if let ::core::option::Option::Some(sink) = $crate::trace::sink() {
            static SITE: $crate::trace::Site =
                $crate::trace::Site::span($name, ::core::module_path!(), &["flow"]);
            $crate::trace::SpanGuard::direct(
                sink,
                &SITE,
                $crate::trace::Values::number(0, ($flow) as u64),
            )
        } else {
            $crate::trace::SpanGuard::tracing(
                $crate::trace::tracing::trace_span!($name, flow = ($flow) as u64).entered(),
            )
        }
    }};
}

/// What a [`Site`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteKind {
    /// A counter sample ([`counter!`](crate::counter), [`batch_counter!`](crate::batch_counter)).
    Counter,
    /// An instant ([`instant!`](crate::instant)).
    Instant,
    /// A span, recorded whole at its end ([`wait_span!`](crate::wait_span), [`batch_span!`](crate::batch_span),
    /// [`publish_span!`](crate::publish_span), [`consume_span!`](crate::consume_span)).
    Span,
}

/// A macro call site, described once in a `static` so that a record names it by address:
/// what `tracing`'s callsite metadata says of the same call, minus what no recorder reads.
#[derive(Debug)]
pub struct Site {
    /// What it records.
    pub kind: SiteKind,
    /// The counter's name, the instant's kind or the span's name.
    pub name: &'static str,
    /// The `tracing` target of the same call: [`COUNTER_TARGET`], [`INSTANT_TARGET`], or a
    /// span's module path.
    pub target: &'static str,
    /// The names of the call's fields, in the order `tracing` would list them (a
    /// [`Values`] refers to them by index).
    pub fields: &'static [&'static str],
}

impl Site {
    /// A counter's site: fields `counter` (its name) and `value`.
    pub const fn counter(name: &'static str) -> Site {
        Site {
            kind: SiteKind::Counter,
            name,
            target: COUNTER_TARGET,
            fields: &["counter", "value"],
        }
    }

    /// An instant's site: fields `kind` (its kind), then the call's own.
    pub const fn instant(kind: &'static str, fields: &'static [&'static str]) -> Site {
        Site { kind: SiteKind::Instant, name: kind, target: INSTANT_TARGET, fields }
    }

    /// A span's site, `target` being the module it is entered in.
    pub const fn span(
        name: &'static str,
        target: &'static str,
        fields: &'static [&'static str],
    ) -> Site {
        Site { kind: SiteKind::Span, name, target, fields }
    }
}

/// How a record's number is to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum NumKind {
    /// `u64` (and the narrower unsigned types).
    U64 = 0,
    /// `i64` bits (and the narrower signed types).
    I64 = 1,
    /// `f64` bits (and `f32`).
    F64 = 2,
    /// `bool` as 0 or 1.
    Bool = 3,
}

/// A [`Values`] field index meaning "no such field".
pub const NO_FIELD: u8 = u8::MAX;

/// The one number and the one text a record keeps of a call's fields, with the indexes in
/// [`Site::fields`] of the fields they came from: the choice the flight recorder makes of
/// a `tracing` event's fields (the text of the first `counter`/`kind`/`reason`/`message`
/// field, else of the first text; the number of the first `value`/`size`/`flow` field,
/// else of the first number).
#[derive(Debug, Clone, Copy)]
pub struct Values {
    /// The number's bits (see `num_kind`).
    pub num: u64,
    /// How to read `num`.
    pub num_kind: NumKind,
    /// Index of the number's field, or [`NO_FIELD`].
    pub num_field: u8,
    /// The text (empty when `text_field` is [`NO_FIELD`]).
    pub text: &'static str,
    /// Index of the text's field, or [`NO_FIELD`].
    pub text_field: u8,
}

impl Values {
    /// Nothing kept.
    pub const NONE: Values = Values {
        num: 0,
        num_kind: NumKind::U64,
        num_field: NO_FIELD,
        text: "",
        text_field: NO_FIELD,
    };

    /// Only a `u64`, from field `field`.
    #[inline(always)]
    pub fn number(field: u8, num: u64) -> Values {
        Values { num, num_field: field, ..Values::NONE }
    }

    /// Only a text, from field `field`.
    #[inline(always)]
    pub fn text(field: u8, text: &'static str) -> Values {
        Values { text, text_field: field, ..Values::NONE }
    }

    /// A counter's: its name (field 0) and its value (field 1).
    #[inline(always)]
    pub fn counter(name: &'static str, value: u64) -> Values {
        Values { num: value, num_field: 1, ..Values::text(0, name) }
    }

    /// An instant's: its kind (field 0) and the number of its fields `fields` (fields 1…,
    /// each with its name and its number if it is one) that a `tracing` subscriber would
    /// keep: the first named `value`, `size` or `flow`, else the first.
    #[inline(always)]
    pub fn instant(
        kind: &'static str,
        fields: &[(&'static str, Option<(NumKind, u64)>)],
    ) -> Values {
        let mut v = Values::text(0, kind);
        let mut preferred = false;
        for (i, &(name, num)) in fields.iter().enumerate() {
            let Some((num_kind, num)) = num else { continue };
            let pref = matches!(name, "value" | "size" | "flow");
            if v.num_field == NO_FIELD || (pref && !preferred) {
                let field = u8::try_from(i + 1).unwrap_or(NO_FIELD - 1);
                v = Values { num, num_kind, num_field: field, ..v };
                preferred = pref;
            }
        }
        v
    }

    /// How to read the number and which fields the number and the text came from, packed
    /// (see [`Shape`]).
    #[inline(always)]
    pub fn shape(&self) -> Shape {
        Shape(self.num_kind as u32 | (self.num_field as u32) << 8 | (self.text_field as u32) << 16)
    }

    /// The values a sink was handed as `num`, `text` and `shape`.
    pub fn from_parts(num: u64, text: &'static str, shape: Shape) -> Values {
        let num_kind = match shape.0 & 0xff {
            1 => NumKind::I64,
            2 => NumKind::F64,
            3 => NumKind::Bool,
            _ => NumKind::U64,
        };
        Values {
            num,
            num_kind,
            num_field: (shape.0 >> 8) as u8,
            text,
            text_field: (shape.0 >> 16) as u8,
        }
    }
}

/// A [`Values`]' number kind (bits 0–7, a [`NumKind`] discriminant), number field index
/// (bits 8–15) and text field index (bits 16–23) in one word, so that a sink call passes
/// everything in registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape(pub u32);

/// A field value the direct path can keep: its number as `tracing` would record it
/// (`record_u64`, `record_i64`, `record_f64`, `record_bool`), or `None` for a value
/// recorded as text (`str`, `String`, 128-bit integers), which an instant does not keep
/// (its text is its kind).
pub trait FieldValue {
    /// The number and how to read it, or `None`.
    fn num(&self) -> Option<(NumKind, u64)>;
}

macro_rules! field_values {
    ($kind:ident: $($t:ty),* => $conv:expr) => {$(
        impl FieldValue for $t {
            #[inline(always)]
            // One conversion for every width: for the widest type its cast is the identity.
            #[allow(clippy::unnecessary_cast)]
            fn num(&self) -> Option<(NumKind, u64)> {
                let f: fn($t) -> u64 = $conv;
                Some((NumKind::$kind, f(*self)))
            }
        }
    )*};
}
field_values!(U64: u8, u16, u32, u64, usize => |v| v as u64);
field_values!(I64: i8, i16, i32, i64, isize => |v| v as i64 as u64);
field_values!(F64: f32, f64 => |v| (v as f64).to_bits());
field_values!(Bool: bool => |v| v as u64);

macro_rules! text_values {
    ($($t:ty),*) => {$(
        impl FieldValue for $t {
            #[inline(always)]
            fn num(&self) -> Option<(NumKind, u64)> {
                None
            }
        }
    )*};
}
text_values!(str, String, u128, i128);

impl<T: FieldValue + ?Sized> FieldValue for &T {
    #[inline(always)]
    fn num(&self) -> Option<(NumKind, u64)> {
        (**self).num()
    }
}

impl<T: FieldValue> FieldValue for Option<T> {
    #[inline(always)]
    fn num(&self) -> Option<(NumKind, u64)> {
        self.as_ref().and_then(FieldValue::num)
    }
}

/// A recorder the macros write to directly, bypassing `tracing` (see the module docs).
/// Its methods run on the recording thread, on the hot path: no lock, no allocation.
/// A call's [`Values`] come as `num`, `text` and `shape` ([`Values::shape`]; rebuilt by
/// [`Values::from_parts`]): scalars travel in registers, a struct would go through memory.
pub trait Sink: Sync {
    /// A timestamp in the sink's own units, for a span's start.
    fn now(&self) -> u64;
    /// Records a counter sample or an instant of `site`, now.
    fn event(&self, site: &'static Site, num: u64, text: &'static str, shape: Shape);
    /// Records a span of `site` from `start` (a [`Sink::now`] of this thread) to now.
    fn span(&self, site: &'static Site, start: u64, num: u64, text: &'static str, shape: Shape);
}

/// Hands `values` of `site` to `sink` as an event (what the macros call).
#[doc(hidden)]
#[inline(always)]
pub fn record_event(sink: &'static dyn Sink, site: &'static Site, values: Values) {
    sink.event(site, values.num, values.text, values.shape());
}

static SINK: std::sync::OnceLock<&'static dyn Sink> = std::sync::OnceLock::new();

/// Makes `sink` the recorder of every macro here, in every thread, for the rest of the
/// process. Once per process (as a global `tracing` subscriber is): a second call returns
/// its sink back and changes nothing.
pub fn set_sink(sink: &'static dyn Sink) -> Result<(), &'static dyn Sink> {
    SINK.set(sink)
}

/// The sink set by [`set_sink`], if any; always `None` when `tracing`'s compile-time level
/// filter leaves `TRACE` out (the macros' `tracing` fallback then compiles to nothing).
#[inline(always)]
pub fn sink() -> Option<&'static dyn Sink> {
    if tracing::level_filters::LevelFilter::TRACE > tracing::level_filters::STATIC_MAX_LEVEL {
        return None;
    }
    SINK.get().copied()
}

/// An entered span of the trace macros, ended when dropped: a `tracing` span, or on the
/// direct path the span's site, start and values, recorded whole by the sink at the end.
/// Like `tracing`'s entered span it stays on its thread (`!Send`).
#[must_use = "the span ends when the guard is dropped"]
pub struct SpanGuard {
    inner: Guarded,
    _on_this_thread: std::marker::PhantomData<*const ()>,
}

enum Guarded {
    Off,
    Tracing(#[allow(dead_code)] tracing::span::EnteredSpan),
    Direct { sink: &'static dyn Sink, site: &'static Site, start: u64, values: Values },
}

impl SpanGuard {
    /// A span that records nothing (a sampled-out batch).
    #[inline(always)]
    pub fn off() -> SpanGuard {
        SpanGuard { inner: Guarded::Off, _on_this_thread: std::marker::PhantomData }
    }

    /// A `tracing` span, entered.
    #[inline(always)]
    pub fn tracing(span: tracing::span::EnteredSpan) -> SpanGuard {
        SpanGuard { inner: Guarded::Tracing(span), _on_this_thread: std::marker::PhantomData }
    }

    /// A span of `site` on the direct path, starting now.
    #[inline(always)]
    pub fn direct(sink: &'static dyn Sink, site: &'static Site, values: Values) -> SpanGuard {
        let start = sink.now();
        SpanGuard {
            inner: Guarded::Direct { sink, site, start, values },
            _on_this_thread: std::marker::PhantomData,
        }
    }
}

impl Drop for SpanGuard {
    #[inline(always)]
    fn drop(&mut self) {
        if let Guarded::Direct { sink, site, start, values } = self.inner {
            sink.span(site, start, values.num, values.text, values.shape());
        }
    }
}

impl std::fmt::Debug for SpanGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Guarded::Off => f.write_str("SpanGuard(off)"),
            Guarded::Tracing(s) => f.debug_tuple("SpanGuard").field(s).finish(),
            Guarded::Direct { site, start, .. } => {
                f.debug_struct("SpanGuard").field("site", &site.name).field("start", start).finish()
            }
        }
    }
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
