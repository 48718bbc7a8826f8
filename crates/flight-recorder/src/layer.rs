//! The record path: a `tracing_subscriber::Layer` writing fixed-size records into the
//! calling thread's own ring.
//!
//! Per thread and recorder there is one [`Local`] in a thread-local: an `Arc` to the
//! thread's ring (also held by the recorder's registry, so a dump reads it), a fixed stack
//! of entered spans and a fixed table of the fields of spans created on this thread. All of
//! it is allocated at the thread's first event; after that the path takes no lock and
//! allocates nothing (tests/alloc_free.rs checks it with dhat). The direct path
//! (`direct.rs`) writes into the same ring: it finds it through this `Local` once, then
//! caches its address.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tracing::span::{Attributes, Id, Record as SpanValues};
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use crate::record::{Fields, Kind, Record, WORDS};
use crate::{Shared, ThreadRing};

/// Spans a thread may have entered at once and still be recorded (deeper ones are not).
const STACK_DEPTH: usize = 64;
/// Spans created on a thread whose fields are kept until they are entered.
const SPAN_TABLE: usize = 64;

/// Target of the lab's counter events (`handoff::trace::COUNTER_TARGET`).
pub(crate) const COUNTER_TARGET: &str = "lab::counter";

#[derive(Clone, Copy)]
struct Frame {
    id: u64,
    /// Raw clock reading at entry.
    start: u64,
    meta: Option<&'static Metadata<'static>>,
    fields: Fields,
}

#[derive(Clone, Copy)]
struct Created {
    id: u64,
    meta: Option<&'static Metadata<'static>>,
    fields: Fields,
}

pub(crate) struct Local {
    recorder: u64,
    /// To give the ring back when the thread exits.
    shared: std::sync::Weak<Shared>,
    /// `None` once the recorder had no room for another thread: this thread's events are
    /// counted as dropped.
    pub(crate) ring: Option<Arc<ThreadRing>>,
    stack: Box<[Frame]>,
    depth: usize,
    created: Box<[Created]>,
}

impl Drop for Local {
    fn drop(&mut self) {
        // The direct path's cached ring address may be this one: forget it before the
        // ring can go to another thread.
        crate::direct::forget_ring();
        if let (Some(ring), Some(shared)) = (self.ring.take(), self.shared.upgrade()) {
            shared.release_thread(ring);
        }
    }
}

thread_local! {
    static LOCALS: RefCell<Vec<Local>> = const { RefCell::new(Vec::new()) };
}

/// The flight recorder's `Layer`. Compose it with a `tracing_subscriber::Registry`
/// (see [`crate::layer()`]); [`crate::install_flight`] installs the same recording as the
/// standalone [`FlightSubscriber`] instead, with the direct path beside it.
pub struct FlightLayer {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for FlightLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlightLayer").field("recorder", &self.shared.id).finish()
    }
}

impl FlightLayer {
    fn with_local(&self, f: impl FnOnce(&mut Local, &Shared)) {
        with_local(&self.shared, f);
    }
}

/// Runs `f` on this thread's state for the recorder `arc`, registering the thread at its
/// first event (the only allocation). Counts the event as dropped if the thread-local is
/// gone (thread exiting) or already borrowed (a re-entrant event).
pub(crate) fn with_local(arc: &Arc<Shared>, f: impl FnOnce(&mut Local, &Shared)) {
    let shared = &**arc;
    let done = LOCALS.try_with(|cell| {
        let Ok(mut locals) = cell.try_borrow_mut() else { return false };
        let pos = match locals.iter().position(|l| l.recorder == shared.id) {
            Some(p) => p,
            None => {
                locals.push(Local {
                    recorder: shared.id,
                    shared: Arc::downgrade(arc),
                    ring: shared.register_thread(),
                    stack: vec![
                        Frame { id: 0, start: 0, meta: None, fields: Fields::EMPTY };
                        STACK_DEPTH
                    ]
                    .into_boxed_slice(),
                    depth: 0,
                    created: vec![Created { id: 0, meta: None, fields: Fields::EMPTY }; SPAN_TABLE]
                        .into_boxed_slice(),
                });
                locals.len() - 1
            }
        };
        f(&mut locals[pos], shared);
        true
    });
    if done != Ok(true) {
        shared.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

fn push(local: &Local, shared: &Shared, rec: &[u64; WORDS]) {
    match &local.ring {
        Some(ring) => ring.ring.push(rec),
        None => {
            shared.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The record path proper, shared by the [`Layer`] and by [`FlightSubscriber`].
impl FlightLayer {
    fn new_span_at(&self, attrs: &Attributes<'_>, id: u64) {
        let mut fields = Fields::EMPTY;
        attrs.record(&mut fields);
        self.with_local(|l, _| {
            l.created[id as usize % SPAN_TABLE] =
                Created { id, meta: Some(attrs.metadata()), fields };
        });
    }

    fn record_at(&self, id: u64, values: &SpanValues<'_>) {
        self.with_local(|l, _| {
            if let Some(c) = l.created.get_mut(id as usize % SPAN_TABLE).filter(|c| c.id == id) {
                values.record(&mut c.fields);
            }
            for fr in l.stack[..l.depth].iter_mut().filter(|fr| fr.id == id) {
                values.record(&mut fr.fields);
            }
        });
    }

    /// `elsewhere` finds the metadata of a span created on another thread (not in this
    /// thread's table), if the caller can.
    fn enter_at(&self, id: u64, elsewhere: impl FnOnce() -> Option<&'static Metadata<'static>>) {
        let now = self.shared.clock.raw();
        self.with_local(|l, _| {
            if l.depth == STACK_DEPTH {
                return; // too deep: not recorded (its exit finds no frame)
            }
            let c = l.created[id as usize % SPAN_TABLE];
            let (meta, fields) =
                if c.id == id { (c.meta, c.fields) } else { (elsewhere(), Fields::EMPTY) };
            l.stack[l.depth] = Frame { id, start: now, meta, fields };
            l.depth += 1;
        });
    }

    fn exit_at(&self, id: u64) {
        let now = self.shared.clock.raw();
        self.with_local(|l, shared| {
            let Some(pos) = l.stack[..l.depth].iter().rposition(|fr| fr.id == id) else {
                return;
            };
            let fr = l.stack[pos];
            // Exits out of order are rare (manual enter/exit): keep the stack packed.
            l.stack.copy_within(pos + 1..l.depth, pos);
            l.depth -= 1;
            let Some(meta) = fr.meta else {
                shared.dropped.fetch_add(1, Ordering::Relaxed); // metadata unknown
                return;
            };
            if shared.shorter_than_min(fr.start, now) {
                return;
            }
            push(l, shared, &Record::encode(fr.start, now, Kind::Span, meta, &fr.fields));
        });
    }

    fn event_at(&self, event: &Event<'_>) {
        let now = self.shared.clock.raw();
        let meta = event.metadata();
        let mut fields = Fields::EMPTY;
        event.record(&mut fields);
        let kind = if meta.target() == COUNTER_TARGET { Kind::Counter } else { Kind::Instant };
        let rec = Record::encode(now, now, kind, meta, &fields);
        self.with_local(|l, shared| push(l, shared, &rec));
    }
}

impl<S> Layer<S> for FlightLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _ctx: Context<'_, S>) {
        self.new_span_at(attrs, id.into_u64());
    }

    fn on_record(&self, id: &Id, values: &SpanValues<'_>, _ctx: Context<'_, S>) {
        self.record_at(id.into_u64(), values);
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        self.enter_at(id.into_u64(), || ctx.metadata(id));
    }

    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        self.exit_at(id.into_u64());
    }

    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        let id = id.into_u64();
        self.with_local(|l, _| {
            let c = &mut l.created[id as usize % SPAN_TABLE];
            if c.id == id {
                c.id = 0;
            }
        });
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        self.event_at(event);
    }
}

/// Span ids a thread takes from [`NEXT_ID_BLOCK`] at a time.
const ID_BLOCK: u64 = 1 << 20;
/// The next block of span ids (process-wide, so ids stay unique across subscribers).
static NEXT_ID_BLOCK: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread's next span id and the end of its block.
    static IDS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// A fresh span id: from this thread's block, without touching shared memory except once
/// per [`ID_BLOCK`] spans. Never 0.
fn next_span_id() -> u64 {
    let take = || NEXT_ID_BLOCK.fetch_add(1, Ordering::Relaxed) * ID_BLOCK + 1;
    IDS.try_with(|c| {
        let (mut next, mut end) = c.get();
        if next == end {
            next = take();
            end = next + ID_BLOCK - 1;
        }
        c.set((next + 1, end));
        next
    })
    .unwrap_or_else(|_| take()) // thread-local gone (thread exiting): a block of one
}

/// The flight recorder as a whole `tracing` subscriber, without a `tracing_subscriber`
/// registry: what [`crate::install_flight`] installs. The [`FlightLayer`] on a registry
/// records the same, but every span then also pays the registry's bookkeeping (a slab
/// slot, a span stack, reference counts: about three quarters of a span's cost, see
/// `benches/bench_main.rs`). Here span ids come from a per-thread block and a span's
/// fields live in the creating thread's table until it is entered, so a span entered on
/// another thread than the one that created it is not recorded (counted as dropped); the
/// lab's spans are entered where they are made.
pub struct FlightSubscriber {
    layer: FlightLayer,
}

impl FlightSubscriber {
    pub(crate) fn new(layer: FlightLayer) -> Self {
        FlightSubscriber { layer }
    }
}

impl std::fmt::Debug for FlightSubscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlightSubscriber").field("recorder", &self.layer.shared.id).finish()
    }
}

impl Subscriber for FlightSubscriber {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::always()
    }

    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::TRACE)
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = next_span_id();
        self.layer.new_span_at(attrs, id);
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &SpanValues<'_>) {
        self.layer.record_at(span.into_u64(), values);
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        self.layer.event_at(event);
    }

    fn enter(&self, span: &Id) {
        self.layer.enter_at(span.into_u64(), || None);
    }

    fn exit(&self, span: &Id) {
        self.layer.exit_at(span.into_u64());
    }

    // Clones are not counted, so a close never clears the table: a slot is recognised by
    // its id and reused by a later span.
    fn try_close(&self, _: Id) -> bool {
        false
    }
}
