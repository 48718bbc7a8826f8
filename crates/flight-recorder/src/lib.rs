//! The lab's recorders: a flight recorder (always-on, bounded, dumped when asked) and a full
//! streaming capture, both written as Chrome Trace Event JSON for Perfetto (the flight
//! recorder's dumps also as a native Perfetto trace, `.pftrace`).
//!
//! # Flight recorder ([`install_flight`], [`subscriber`], [`layer()`])
//! Modelled on Java Flight Recorder with `disk=false`: thread-local buffers, a circular
//! store that drops the oldest events rather than block, loss recorded, dump on demand, on
//! exit, on panic and on a trigger; thresholds ([`Config::min_span_ns`]) like JFR's.
//! * Each thread gets its own preallocated ring of fixed-size records at its first event
//!   ([`SLOT_BYTES`] each; [`Config::budget_bytes`] split over [`Config::max_threads`],
//!   rounded down to a power of two of records, so between half and all of the budget is
//!   used). The recorder holds an `Arc` to every ring; the thread holds another in a
//!   thread-local and hands the ring back when it exits, for the next new thread (its
//!   records keep their own tid and name).
//! * Two record paths into those rings, writing the same records:
//!   - the direct path, for the lab's trace macros (`handoff::trace`: `counter!`,
//!     `batch_counter!`, `instant!`, `wait_span!`, `batch_span!`, `publish_span!`,
//!     `consume_span!`). [`install_flight`] makes the recorder the process's
//!     `handoff::trace::Sink`; each macro call site, in every thread and whatever
//!     `tracing` dispatcher is current, then hands it its `static` site descriptor (kind,
//!     name, target, field names: `&'static str`s), one number and one `&'static str`,
//!     with no `tracing` dispatch (see `direct.rs`). A record is a raw clock reading (TSC
//!     ticks; two for a span, whose guard holds the start), the site's address, the
//!     number and the text's address and length, six words written into the thread's ring
//!     found through a `const` thread-local: nothing formatted or copied as text, names and
//!     text resolved through the addresses when a dump decodes the record;
//!   - the `tracing` path, for everything else (`tracing`'s own macros, other crates'
//!     spans, a recorder not installed as the sink): [`FlightSubscriber`], a whole
//!     subscriber with no `tracing_subscriber` registry (span ids from a per-thread block;
//!     a span's fields wait in the creating thread's table), because the registry's
//!     bookkeeping was most of a span's cost, or [`layer()`]'s [`FlightLayer`] to compose
//!     with a registry and other layers. Field values are copied into the record (one
//!     number, 48 bytes of text), never allocated.
//!
//!   Both: no lock and no allocation after a thread's first record (checked with dhat in
//!   `tests/alloc_free.rs`, for the layer, the standalone subscriber and the installed
//!   recorder with both paths), wait-free (when the ring is full the oldest record is
//!   overwritten and counted), one ring and one tid per thread whichever path a record
//!   took, and the same dump for the same calls (`tests/direct.rs`). Timestamps are raw
//!   clock readings, scaled to nanoseconds when a dump reads them: the TSC where the kernel
//!   keeps time with it, else `clock_gettime` (see `clock.rs`); a clock read is most of a
//!   record's cost.
//! * Spans are recorded once, at exit, as a complete (start, end) pair, so a dump never
//!   holds a half span: overwriting drops whole spans only, and the dump writes `X` events.
//! * Rings are seqlocks per slot with atomic words (see `ring.rs`): a dump may run while
//!   threads record; a record overwritten mid-read is detected and skipped, never torn.
//!   The direct path's records are shorter than a slot and fill its first words only; a
//!   record's flags say which kind it is, so the words it did not write are never read
//!   as its own. Model-checked with loom, shorter records included (`RUSTFLAGS="--cfg
//!   loom" cargo test -p flight-recorder --lib --release loom`), stress-tested for torn
//!   records, also under Miri with both paths' decoding (`cargo +nightly miri test -p
//!   flight-recorder --lib`).
//! * Dump: `{"traceEvents":[…]}` with `process_name`/`thread_name` metadata, `X` slices,
//!   `i` instants (`s:"t"`), `C` counters, and `s`/`f` flows (`bp:"e"`) joining a `publish`
//!   span to the `consume` span with the same `flow` id when both are still recorded (a
//!   consume pairs with the latest earlier publish of its id: ids repeat across runs). Tids
//!   are numbered from 1 (Perfetto merges tid 0 with tid 1). Loss counts go in `otherData`.
//!   Beside it (`x.trace.json` → `x.pftrace`) the same window of records is written as a
//!   native Perfetto trace with the `pftrace` crate (`native.rs`): the same slices,
//!   instants, counters (on counter tracks) and flow pairs, names interned, each thread
//!   named by the kernel's tid (read once, when the thread takes its ring) so that the
//!   scheduler's records, added later as ftrace packets, join its track. Both are written
//!   at dump time only; the record path does not change.
//!   The record path's cost per event and per span is timed by `benches/bench_main.rs`
//!   (the direct path, the subscriber, the layer on a registry, tracing-chrome, no
//!   subscriber, against an empty loop and a bare clock read, beside other recorders'
//!   published figures) and, installed globally, by `lab trace-overhead`. The subscriber
//!   and the TSC clock were there because they about halved an event's cost and cut a
//!   span's to about a quarter; the direct path because it leaves little beyond the clock
//!   read (figures: docs/design-figures.md).
//!
//! The lab's conventions (`handoff::trace`): events with target `lab::counter` become `C`
//! tracks named by their `counter` field (value in `value`); events with target
//! `lab::instant` become instants named by `kind`; spans keep their name, with the field
//! `reason`/`size`/`flow` as an argument. Other spans and events are recorded generically.
//! A direct-path record carries the same names and field names (its site says them), so
//! it becomes the same event.
//!
//! # Full capture ([`install_full`])
//! Every span and event, streamed by `tracing-chrome` 0.7 to a file; [`FullGuard::finish`]
//! then repairs what that crate leaves wrong for Perfetto (see [`full`]). Its limits: each
//! event allocates (~9 allocations) and costs microseconds, not nanoseconds
//! (figures: docs/design-figures.md), the queue to its writer thread is unbounded, and only one such layer may
//! exist per process.
//!
//! Sources: JDK Flight Recorder (JEP 328); Chrome Trace Event Format (Google doc, 2016);
//! Perfetto's JSON importer (`src/trace_processor/importers/json/`), whose quirks are
//! checked by `tools/viewers/check-trace.mjs` against Perfetto's own trace processor.

use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

mod clock;
mod direct;
mod dump;
pub mod full;
mod layer;
mod native;
mod record;
mod ring;

pub use full::{install_full, FullGuard};
pub use layer::{FlightLayer, FlightSubscriber};
pub use record::SLOT_BYTES;

use record::{Record, WORDS};

/// Records per thread below which a configuration is refused.
pub const MIN_RECORDS_PER_THREAD: usize = 64;

/// Flight recorder settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Memory for all rings together, bytes. Default 64 MiB.
    pub budget_bytes: usize,
    /// Rings, each `budget_bytes / max_threads` (rounded down to a power of two of
    /// records). A thread takes a ring at its first event and gives it back when it exits,
    /// so this bounds threads alive at once (that have recorded), not threads over time.
    /// Events of threads beyond it are dropped and counted. Default 32.
    pub max_threads: usize,
    /// Spans shorter than this are not recorded (JFR's threshold). Default 0: all.
    pub min_span_ns: u64,
    /// The `process_name` in dumps. Default: the executable's file name.
    pub process_name: Option<String>,
    /// A trigger keeps this much history before it. Default 10 ms.
    pub trigger_before: Duration,
    /// … and this much after it. Default 10 ms.
    pub trigger_after: Duration,
    /// Trigger windows kept at once (each a copy of its events); further triggers are
    /// ignored and counted until [`Recorder::write_triggers`] empties the store. Default 8.
    pub max_triggers: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            budget_bytes: 64 << 20,
            max_threads: 32,
            min_span_ns: 0,
            process_name: None,
            trigger_before: Duration::from_millis(10),
            trigger_after: Duration::from_millis(10),
            max_triggers: 8,
        }
    }
}

impl Config {
    /// Records each thread's ring holds under this configuration.
    pub fn records_per_thread(&self) -> Result<usize, Error> {
        if self.max_threads == 0 {
            return Err(Error::Config("max_threads must be at least 1".into()));
        }
        let per = self.budget_bytes / self.max_threads / SLOT_BYTES;
        if per < MIN_RECORDS_PER_THREAD {
            return Err(Error::Config(format!(
                "budget_bytes {} over max_threads {} leaves {per} records of {SLOT_BYTES} B per \
                 thread; at least {MIN_RECORDS_PER_THREAD} are needed: raise budget_bytes to \
                 {} or lower max_threads",
                self.budget_bytes,
                self.max_threads,
                MIN_RECORDS_PER_THREAD * SLOT_BYTES * self.max_threads
            )));
        }
        Ok(1 << (usize::BITS - 1 - per.leading_zeros()))
    }
}

/// What can go wrong installing a recorder.
#[derive(Debug)]
pub enum Error {
    /// The configuration is unusable; the message says why and what would work.
    Config(String),
    /// A global `tracing` subscriber is already set (one per process).
    AlreadyInstalled(String),
    /// The trace file could not be created.
    Io(io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(m) => write!(f, "flight recorder config: {m}"),
            Error::AlreadyInstalled(m) => {
                write!(f, "a global tracing subscriber is already installed ({m}): one per process")
            }
            Error::Io(e) => write!(f, "trace file: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// What a dump wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DumpStats {
    /// Trace events written (slices, instants, counters, flow ends; not metadata).
    pub events: u64,
    /// Records lost to overwriting (oldest first) since the recorder started.
    pub overwritten: u64,
    /// Events not recorded: threads beyond `max_threads` alive at once, events during
    /// thread exit or re-entrant ones.
    pub dropped: u64,
    /// Threads in the dump.
    pub threads: usize,
    /// Spans left out because they overlapped an enclosing span without nesting in it
    /// (spans exited out of order); Perfetto would drop them with an import error.
    pub overlapping: u64,
    /// Records read from the rings into the dump (spans, instants, counters);
    /// `records + overwritten` is every record written since the recorder started.
    pub records: u64,
    /// Of `records`, the spans (the rest are instants and counters).
    pub span_records: u64,
}

/// A thread that wrote into a ring from record index `from` on.
#[derive(Clone)]
pub(crate) struct Owner {
    from: u64,
    tid: u64,
    /// The kernel's id of the thread (0 where it cannot be read), for the `.pftrace`,
    /// where the scheduler's records name threads by it.
    os_tid: u32,
    name: String,
}

/// The calling thread's kernel id, or 0 where there is none to read.
fn os_tid() -> u32 {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        // SAFETY: gettid has no preconditions and cannot fail.
        let tid = unsafe { libc::gettid() };
        u32::try_from(tid).unwrap_or(0)
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    {
        0
    }
}

/// One ring and the threads that wrote into it: when a thread exits, its ring goes back to
/// the pool and the next new thread continues in it (JFR returns thread buffers the same
/// way), so a process that starts threads run after run stays within the budget. The
/// exited thread's records keep its own tid and name.
pub(crate) struct ThreadRing {
    owners: Mutex<Vec<Owner>>,
    pub(crate) ring: ring::Ring<WORDS>,
}

struct Triggers {
    pending: Vec<(u64, u64)>,
    windows: Vec<dump::Window>,
    next_id: u64,
    ignored: u64,
}

pub(crate) struct Shared {
    pub(crate) id: u64,
    pub(crate) clock: clock::Clock,
    pub(crate) config: Config,
    records_per_thread: usize,
    process_name: String,
    threads: Mutex<Vec<Arc<ThreadRing>>>,
    /// Rings of exited threads, ready for the next new thread.
    free: Mutex<Vec<Arc<ThreadRing>>>,
    next_tid: AtomicU64,
    pub(crate) dropped: AtomicU64,
    triggers: Mutex<Triggers>,
}

impl Shared {
    pub(crate) fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    /// Whether a span between raw clock readings `start` and `end` is under
    /// [`Config::min_span_ns`] (never, with the default 0).
    #[inline]
    pub(crate) fn shorter_than_min(&self, start: u64, end: u64) -> bool {
        let min = self.config.min_span_ns;
        min != 0 && self.clock.ns(end).saturating_sub(self.clock.ns(start)) < min
    }

    /// A ring for the calling thread: one an exited thread left, else a new one while
    /// fewer than `max_threads` exist, else `None`.
    pub(crate) fn register_thread(&self) -> Option<Arc<ThreadRing>> {
        let tid = self.next_tid.fetch_add(1, Ordering::Relaxed);
        let os_tid = os_tid();
        let name = match std::thread::current().name() {
            Some(n) => n.to_owned(),
            None => format!("thread-{tid}"),
        };
        let reused = self.free.lock().unwrap_or_else(PoisonError::into_inner).pop();
        if let Some(ring) = reused {
            let from = ring.ring.written();
            ring.owners.lock().unwrap_or_else(PoisonError::into_inner).push(Owner {
                from,
                tid,
                os_tid,
                name,
            });
            return Some(ring);
        }
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        if threads.len() >= self.config.max_threads {
            return None;
        }
        let ring = Arc::new(ThreadRing {
            owners: Mutex::new(vec![Owner { from: 0, tid, os_tid, name }]),
            ring: ring::Ring::with_capacity(self.records_per_thread),
        });
        threads.push(Arc::clone(&ring));
        Some(ring)
    }

    /// The calling thread is exiting: its ring serves the next new thread.
    pub(crate) fn release_thread(&self, ring: Arc<ThreadRing>) {
        self.free.lock().unwrap_or_else(PoisonError::into_inner).push(ring);
    }

    fn rings(&self) -> Vec<Arc<ThreadRing>> {
        self.threads.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Copies every ring's records, keeping those that overlap `[from, to]` (ns), split
    /// by the thread that wrote them.
    fn snapshot(&self, from: u64, to: u64) -> dump::Window {
        let mut threads = Vec::new();
        let mut overwritten = 0;
        for r in self.rings() {
            let owners = r.owners.lock().unwrap_or_else(PoisonError::into_inner).clone();
            let mut per_owner: Vec<Vec<Record>> = vec![Vec::new(); owners.len()];
            overwritten += r
                .ring
                .snapshot_with(|index, words| {
                    let Some(rec) = Record::decode(words, &self.clock) else { return };
                    if rec.end_ns < from || rec.start_ns > to {
                        return;
                    }
                    // Owners are few and sorted by `from`; a record written after the
                    // copy of `owners` belongs to the last one we know.
                    let k = owners.iter().rposition(|o| o.from <= index).unwrap_or(0);
                    per_owner[k].push(rec);
                })
                .overwritten;
            let last = owners.len() - 1;
            for (k, (o, records)) in owners.into_iter().zip(per_owner).enumerate() {
                if !records.is_empty() || k == last {
                    threads.push(dump::ThreadDump {
                        tid: o.tid,
                        os_tid: o.os_tid,
                        name: o.name,
                        records,
                    });
                }
            }
        }
        threads.sort_by_key(|t| t.tid);
        dump::Window { trigger: None, threads, overwritten, from_ns: from, to_ns: to }
    }

    fn complete_triggers(&self, force: bool) {
        let now = self.now_ns();
        let after = self.config.trigger_after.as_nanos() as u64;
        let before = self.config.trigger_before.as_nanos() as u64;
        let mut t = self.triggers.lock().unwrap_or_else(PoisonError::into_inner);
        let due: Vec<(u64, u64)> =
            t.pending.iter().copied().filter(|&(_, at)| force || now >= at + after).collect();
        t.pending.retain(|&(_, at)| !(force || now >= at + after));
        for (id, at) in due {
            let mut w = self.snapshot(at.saturating_sub(before), at + after);
            w.trigger = Some((id, at));
            t.windows.push(w);
        }
    }
}

static NEXT_RECORDER: AtomicU64 = AtomicU64::new(1);

/// A handle on a flight recorder: dump it, arm its panic dump, fire its triggers.
/// Cheap to clone; every clone talks to the same rings.
#[derive(Clone)]
pub struct Recorder {
    shared: Arc<Shared>,
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder")
            .field("id", &self.shared.id)
            .field("records_per_thread", &self.shared.records_per_thread)
            .finish()
    }
}

/// A flight recorder layer and its handle, for composing with other layers:
/// `tracing_subscriber::registry().with(layer)`.
pub fn layer(config: Config) -> Result<(FlightLayer, Recorder), Error> {
    let records_per_thread = config.records_per_thread()?;
    let process_name = config.process_name.clone().unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "lab".to_owned())
    });
    let shared = Arc::new(Shared {
        id: NEXT_RECORDER.fetch_add(1, Ordering::Relaxed),
        clock: clock::Clock::new(),
        config,
        records_per_thread,
        process_name,
        threads: Mutex::new(Vec::new()),
        free: Mutex::new(Vec::new()),
        next_tid: AtomicU64::new(1),
        dropped: AtomicU64::new(0),
        triggers: Mutex::new(Triggers {
            pending: Vec::new(),
            windows: Vec::new(),
            next_id: 1,
            ignored: 0,
        }),
    });
    Ok((FlightLayer { shared: Arc::clone(&shared) }, Recorder { shared }))
}

/// The flight recorder as a standalone subscriber (no registry: cheaper spans, see
/// [`FlightSubscriber`]) and its handle.
pub fn subscriber(config: Config) -> Result<(FlightSubscriber, Recorder), Error> {
    let (layer, recorder) = layer(config)?;
    Ok((FlightSubscriber::new(layer), recorder))
}

/// Installs the flight recorder as the process's global `tracing` subscriber (the
/// standalone [`FlightSubscriber`]) and as `handoff::trace`'s sink, so the lab's trace
/// macros record into it directly (see the crate docs), and returns its handle.
pub fn install_flight(config: Config) -> Result<Recorder, Error> {
    let (subscriber, recorder) = subscriber(config)?;
    tracing::subscriber::set_global_default(subscriber)
        .map_err(|e| Error::AlreadyInstalled(e.to_string()))?;
    // Leaked on purpose: the sink serves every thread for the rest of the process, as the
    // global subscriber does; there is one per process.
    let sink: &'static direct::DirectSink =
        Box::leak(Box::new(direct::DirectSink::new(Arc::clone(&recorder.shared))));
    handoff::trace::set_sink(sink)
        .map_err(|_| Error::AlreadyInstalled("handoff::trace already has a sink".to_string()))?;
    Ok(recorder)
}

fn with_path(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

impl Recorder {
    /// The timestamp source: `"tsc"` (read directly, where the kernel keeps time with it)
    /// or `"clock_gettime"`.
    pub fn clock_source(&self) -> &'static str {
        self.shared.clock.source()
    }

    /// Records each thread's ring holds.
    pub fn records_per_thread(&self) -> usize {
        self.shared.records_per_thread
    }

    /// Writes everything still in the rings to `path` as Chrome trace JSON, and the same
    /// records as a native Perfetto trace beside it ([`pftrace::twin_path`]: `x.trace.json`
    /// → `x.pftrace`). Threads may go on recording meanwhile. Due trigger windows are
    /// completed first.
    pub fn dump(&self, path: &Path) -> io::Result<DumpStats> {
        self.shared.complete_triggers(false);
        let window = self.shared.snapshot(0, u64::MAX);
        self.write_window(path, &window)
    }

    fn write_window(&self, path: &Path, window: &dump::Window) -> io::Result<DumpStats> {
        let file = File::create(path).map_err(|e| with_path(path, e))?;
        let mut w = BufWriter::new(file);
        let info = dump::Info {
            pid: std::process::id(),
            process_name: &self.shared.process_name,
            dropped: self.shared.dropped.load(Ordering::Relaxed),
            records_per_thread: self.shared.records_per_thread,
            budget_bytes: self.shared.config.budget_bytes,
        };
        let stats = dump::write_trace(&mut w, &info, window).map_err(|e| with_path(path, e))?;
        w.flush().map_err(|e| with_path(path, e))?;
        // The native Perfetto twin, from the same window (see `native.rs`).
        let twin = pftrace::twin_path(path);
        let file = File::create(&twin).map_err(|e| with_path(&twin, e))?;
        let mut w = BufWriter::new(file);
        native::write_pftrace(&mut w, &info, window).map_err(|e| with_path(&twin, e))?;
        w.flush().map_err(|e| with_path(&twin, e))?;
        Ok(stats)
    }

    /// Returns a guard that dumps to `path` when dropped ("at the end").
    pub fn dump_on_drop(&self, path: PathBuf) -> DumpOnDrop {
        DumpOnDrop { recorder: self.clone(), path }
    }

    /// Dumps to `path` at the first panic in any thread (then runs the previous hook).
    pub fn install_panic_dump(&self, path: PathBuf) {
        let recorder = self.clone();
        let fired = AtomicBool::new(false);
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !fired.swap(true, Ordering::SeqCst) {
                match recorder.dump(&path) {
                    Ok(s) => eprintln!(
                        "flight recorder: panic dump {} ({} events, {} overwritten)",
                        path.display(),
                        s.events,
                        s.overwritten
                    ),
                    Err(e) => eprintln!("flight recorder: panic dump failed: {e}"),
                }
            }
            previous(info);
        }));
    }

    /// Fires a trigger when `cond` holds (`rec.trigger_if(latency_ns > threshold)`): the
    /// window [`Config::trigger_before`] before now to [`Config::trigger_after`] after is
    /// kept apart from the rings (so later overwriting cannot lose it) once `after` has
    /// passed, checked on each firing, on [`Recorder::poll_triggers`] and on a dump.
    /// Returns the trigger's id, or `None` when `cond` is false or the store is full.
    /// With `cond` false this is one branch.
    #[inline]
    pub fn trigger_if(&self, cond: bool) -> Option<u64> {
        if cond {
            self.fire()
        } else {
            None
        }
    }

    #[cold]
    fn fire(&self) -> Option<u64> {
        let at = self.shared.now_ns();
        self.shared.complete_triggers(false);
        let id = {
            let mut t = self.shared.triggers.lock().unwrap_or_else(PoisonError::into_inner);
            if t.pending.len() + t.windows.len() >= self.shared.config.max_triggers {
                t.ignored += 1;
                return None;
            }
            let id = t.next_id;
            t.next_id += 1;
            t.pending.push((id, at));
            id
        };
        tracing::trace!(target: "lab::instant", kind = "trigger", trigger = id);
        Some(id)
    }

    /// Completes the trigger windows whose `after` time has passed.
    pub fn poll_triggers(&self) {
        self.shared.complete_triggers(false);
    }

    /// Triggers fired but ignored because the store was full.
    pub fn triggers_ignored(&self) -> u64 {
        self.shared.triggers.lock().unwrap_or_else(PoisonError::into_inner).ignored
    }

    /// Writes each kept trigger window to `dir/trigger-<id>.trace.json` and its `.pftrace`
    /// twin (completing pending
    /// ones with what is recorded so far) and empties the store. Returns the files written.
    pub fn write_triggers(&self, dir: &Path) -> io::Result<Vec<(PathBuf, DumpStats)>> {
        self.shared.complete_triggers(true);
        let windows = std::mem::take(
            &mut self.shared.triggers.lock().unwrap_or_else(PoisonError::into_inner).windows,
        );
        let mut out = Vec::new();
        for w in &windows {
            let id = w.trigger.map_or(0, |(id, _)| id);
            let path = dir.join(format!("trigger-{id}.trace.json"));
            let stats = self.write_window(&path, w)?;
            out.push((path, stats));
        }
        Ok(out)
    }
}

/// Dumps its recorder when dropped; see [`Recorder::dump_on_drop`].
#[derive(Debug)]
pub struct DumpOnDrop {
    recorder: Recorder,
    path: PathBuf,
}

impl Drop for DumpOnDrop {
    fn drop(&mut self) {
        if let Err(e) = self.recorder.dump(&self.path) {
            eprintln!("flight recorder: dump at exit failed: {e}");
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use record::{Kind, Num};
    use tracing_subscriber::layer::SubscriberExt;

    /// Events and spans go through the layer into the ring and back out decoded (the
    /// unsafe metadata round trip), then into JSON. Runs under Miri too.
    /// `window` of `rec` dumped as the tests' process 7 (`test`): its stats and bytes.
    fn dump_test_window(rec: &Recorder, window: &dump::Window) -> (DumpStats, Vec<u8>) {
        let info = dump::Info {
            pid: 7,
            process_name: "test",
            dropped: 0,
            records_per_thread: rec.records_per_thread(),
            budget_bytes: 1 << 20,
        };
        let mut buf = Vec::new();
        let stats = dump::write_trace(&mut buf, &info, window).expect("write");
        (stats, buf)
    }

    #[test]
    fn records_round_trip_through_a_ring_into_json() {
        let config = Config {
            budget_bytes: 1 << 20,
            max_threads: 2,
            process_name: Some("test".into()),
            ..Config::default()
        };
        let (layer, rec) = layer(config).expect("layer");
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            tracing::trace!(target: "lab::counter", counter = "depth", value = 7u64);
            let _b = tracing::trace_span!("batch", size = 3u64).entered();
            tracing::trace!(target: "lab::instant", kind = "overflow", count = 2u64);
        });
        let window = rec.shared.snapshot(0, u64::MAX);
        assert_eq!(window.threads.len(), 1);
        let recs = &window.threads[0].records;
        assert_eq!(recs.len(), 3);
        assert_eq!(
            (recs[0].kind, recs[0].fields.text(), recs[0].fields.num),
            (Kind::Counter, "depth", 7)
        );
        assert_eq!(
            (recs[1].kind, recs[1].fields.text(), recs[1].fields.num),
            (Kind::Instant, "overflow", 2)
        );
        assert_eq!((recs[2].kind, recs[2].name(), recs[2].fields.num), (Kind::Span, "batch", 3));

        let (stats, buf) = dump_test_window(&rec, &window);
        assert_eq!(stats.events, 3);
        assert_eq!((stats.records, stats.span_records), (3, 1), "{stats:?}");
        let doc: serde_json::Value = serde_json::from_slice(&buf).expect("valid JSON");
        let events = doc["traceEvents"].as_array().expect("traceEvents");
        let find = |ph: &str| events.iter().find(|e| e["ph"] == ph).expect(ph).clone();
        assert_eq!(find("C")["name"], "depth");
        assert_eq!(find("C")["args"]["value"], 7);
        assert_eq!(find("i")["name"], "overflow");
        assert_eq!(find("i")["args"]["count"], 2);
        assert_eq!(find("X")["name"], "batch");
        assert_eq!(find("X")["args"]["size"], 3);
        assert!(events.iter().all(|e| e["tid"] != 0), "tid 0 in {events:?}");
    }

    /// The standalone subscriber records what the layer on a registry records: nested spans
    /// with their fields (a field recorded after creation included), counters, instants; a
    /// span entered on another thread than its creator's is counted as dropped.
    #[test]
    fn the_standalone_subscriber_records_like_the_layer() {
        let config = Config {
            budget_bytes: 1 << 20,
            max_threads: 4,
            process_name: Some("test".into()),
            ..Config::default()
        };
        let (subscriber, rec) = subscriber(config).expect("subscriber");
        let dispatch = tracing::Dispatch::new(subscriber);
        tracing::dispatcher::with_default(&dispatch, || {
            let outer = tracing::trace_span!("wait", reason = "full", n = tracing::field::Empty);
            outer.record("n", 9u64);
            let _o = outer.enter();
            {
                let _b = tracing::trace_span!("batch", size = 3u64).entered();
                tracing::trace!(target: "lab::counter", counter = "depth", value = 7u64);
            }
            tracing::trace!(target: "lab::instant", kind = "overflow");
            let moved = tracing::trace_span!("moved");
            let d = dispatch.clone();
            std::thread::spawn(move || {
                tracing::dispatcher::with_default(&d, || drop(moved.entered()));
            })
            .join()
            .expect("join");
        });
        let window = rec.shared.snapshot(0, u64::MAX);
        let recs = &window.threads[0].records;
        let got: Vec<(Kind, &str, &str, u64)> =
            recs.iter().map(|r| (r.kind, r.name(), r.fields.text(), r.fields.num)).collect();
        assert_eq!(got.len(), 4, "{:?}", got.iter().map(|g| g.1).collect::<Vec<_>>());
        assert_eq!((got[0].0, got[0].2, got[0].3), (Kind::Counter, "depth", 7));
        assert_eq!((got[1].0, got[1].1, got[1].3), (Kind::Span, "batch", 3));
        assert_eq!((got[2].0, got[2].2), (Kind::Instant, "overflow"));
        assert_eq!((got[3].0, got[3].1, got[3].2, got[3].3), (Kind::Span, "wait", "full", 9));
        assert!(recs[3].start_ns <= recs[1].start_ns && recs[1].end_ns <= recs[3].end_ns);
        assert_eq!(rec.shared.dropped.load(Ordering::Relaxed), 1, "the moved span");
    }

    /// Threads started run after run reuse the rings of exited ones: the budget holds,
    /// nothing is dropped, and each thread keeps its own tid and name in the dump.
    #[test]
    fn exited_threads_give_their_ring_to_new_ones() {
        let config = Config {
            budget_bytes: 2 * 256 * SLOT_BYTES,
            max_threads: 2,
            process_name: Some("test".into()),
            ..Config::default()
        };
        let (layer, rec) = layer(config).expect("layer");
        let dispatch = tracing::Dispatch::new(tracing_subscriber::registry().with(layer));
        let rounds = if cfg!(miri) { 3 } else { 10 };
        for round in 0..rounds {
            let d = dispatch.clone();
            std::thread::Builder::new()
                .name(format!("run-{round}"))
                .spawn(move || {
                    tracing::dispatcher::with_default(&d, || {
                        for i in 0..10u64 {
                            tracing::trace!(target: "lab::counter", counter = "n", value = i);
                        }
                    })
                })
                .expect("spawn")
                .join()
                .expect("join");
        }
        let window = rec.shared.snapshot(0, u64::MAX);
        let names: Vec<&str> = window.threads.iter().map(|t| t.name.as_str()).collect();
        let want: Vec<String> = (0..rounds).map(|r| format!("run-{r}")).collect();
        assert_eq!(names, want);
        assert!(window.threads.iter().all(|t| t.records.len() == 10));
        assert_eq!(rec.shared.dropped.load(Ordering::Relaxed), 0);
        assert_eq!(rec.shared.rings().len(), 1, "one ring, reused");
    }

    /// Spans exited out of order overlap without nesting: the dump leaves the later one
    /// out (Perfetto would drop it with an error) and counts it.
    #[test]
    fn overlapping_spans_are_left_out_and_counted() {
        let config = Config {
            budget_bytes: 1 << 20,
            max_threads: 2,
            process_name: Some("test".into()),
            ..Config::default()
        };
        let (layer, rec) = layer(config).expect("layer");
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let a = tracing::trace_span!("a");
            let b = tracing::trace_span!("b");
            let tick = || std::thread::sleep(std::time::Duration::from_micros(5));
            let ea = a.enter();
            tick();
            let eb = b.enter();
            tick();
            drop(ea); // `a` exits first: a = [t0, t2], b = [t1, t3], t0 < t1 < t2 < t3
            tick();
            drop(eb);
        });
        let window = rec.shared.snapshot(0, u64::MAX);
        assert_eq!(window.threads[0].records.len(), 2);
        let (stats, _) = dump_test_window(&rec, &window);
        assert_eq!((stats.events, stats.overlapping), (1, 1), "{stats:?}");
    }

    /// The direct path (what the macros call once `install_flight` set the sink), driven
    /// here through a `DirectSink` of a recorder that is not installed: its records go into
    /// the same ring as the thread's `tracing`-path records (one thread, one tid), decode
    /// through their static site and text addresses (the unsafe round trip), and dump as a
    /// `tracing`-path record of the same call does. Runs under Miri too.
    #[test]
    fn direct_records_share_the_thread_ring_and_dump_as_tracing_ones() {
        use handoff::trace::{NumKind, Sink, Site, Values, WAIT_FULL};
        static COUNTER: Site = Site::counter("depth");
        static INSTANT: Site = Site::instant("overflow", &["kind", "count"]);
        static WAIT: Site = Site::span("wait", "test::module", &["reason"]);
        static BATCH: Site = Site::span("batch", "test::module", &["size"]);
        /// Longer than a record's inline text, cut inside a two-byte character.
        static LONG: &str = "01234567890123456789012345678901234567890123456é-and-more";
        let config = Config {
            budget_bytes: 1 << 20,
            max_threads: 2,
            process_name: Some("test".into()),
            ..Config::default()
        };
        let (subscriber, rec) = subscriber(config).expect("subscriber");
        let sink = direct::DirectSink::new(Arc::clone(&rec.shared));
        let put = |site: &'static Site, v: Values| sink.event(site, v.num, v.text, v.shape());
        tracing::subscriber::with_default(subscriber, || {
            tracing::trace!(target: "lab::counter", counter = "depth", value = 6u64);
            put(&COUNTER, Values::counter("depth", 7));
            put(&INSTANT, Values::instant("overflow", &[("count", Some((NumKind::I64, 2)))]));
            let start = sink.now();
            let b = Values::number(0, 3);
            sink.span(&BATCH, start, b.num, b.text, b.shape());
            let w = Values::text(0, WAIT_FULL);
            sink.span(&WAIT, start, w.num, w.text, w.shape());
            put(&INSTANT, Values::text(0, LONG));
        });
        let window = rec.shared.snapshot(0, u64::MAX);
        assert_eq!(window.threads.len(), 1, "one ring, one tid for both paths");
        let recs = &window.threads[0].records;
        /// Kind, name, text, text field, number field, number.
        type Row<'a> = (Kind, &'a str, &'a str, Option<&'a str>, Option<&'a str>, u64);
        let got: Vec<Row> = recs
            .iter()
            .map(|r| {
                (r.kind, r.name(), r.fields.text(), r.text_field(), r.num_field(), r.fields.num)
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (Kind::Counter, recs[0].name(), "depth", Some("counter"), Some("value"), 6),
                (Kind::Counter, "depth", "depth", Some("counter"), Some("value"), 7),
                (Kind::Instant, "overflow", "overflow", Some("kind"), Some("count"), 2),
                (Kind::Span, "batch", "", None, Some("size"), 3),
                (Kind::Span, "wait", "full", Some("reason"), None, 0),
                (Kind::Instant, "overflow", &LONG[..47], Some("kind"), None, 0),
            ]
        );
        assert_eq!(recs[2].fields.num_kind, Num::I64);
        assert_eq!((recs[4].target(), recs[1].target()), ("test::module", "lab::counter"));
        assert!(recs[3].start_ns <= recs[3].end_ns && recs[3].end_ns <= recs[4].end_ns);

        let (_, buf) = dump_test_window(&rec, &window);
        let doc: serde_json::Value = serde_json::from_slice(&buf).expect("valid JSON");
        let events = doc["traceEvents"].as_array().expect("traceEvents");
        let counters: Vec<_> = events.iter().filter(|e| e["ph"] == "C").collect();
        assert_eq!(counters.len(), 2);
        assert!(counters.iter().all(|c| c["name"] == "depth"), "{counters:?}");
        assert_eq!(counters[1]["args"]["value"], 7);
        let instant = events.iter().find(|e| e["ph"] == "i").expect("instant");
        assert_eq!((&instant["name"], &instant["args"]["count"]), (&"overflow".into(), &2.into()));
        let wait = events.iter().find(|e| e["name"] == "wait").expect("wait");
        assert_eq!(
            (&wait["cat"], &wait["args"]["reason"]),
            (&"test::module".into(), &"full".into())
        );
    }

    /// The direct path keeps `min_span_ns` and counts a thread with no ring as dropped.
    #[test]
    fn direct_spans_below_the_threshold_and_threads_beyond_the_budget_are_not_recorded() {
        use handoff::trace::{Sink, Site, Values};
        static BATCH: Site = Site::span("batch", "test", &["size"]);
        static COUNTER: Site = Site::counter("n");
        let config = Config {
            budget_bytes: 1 << 20,
            max_threads: 1,
            min_span_ns: 60_000_000_000, // a minute: no span here lasts that long
            ..Config::default()
        };
        let (_layer, rec) = layer(config).expect("layer");
        let sink = direct::DirectSink::new(Arc::clone(&rec.shared));
        let v = Values::number(0, 1);
        sink.event(&COUNTER, 5, "n", Values::counter("n", 5).shape()); // takes the one ring
        sink.span(&BATCH, sink.now(), v.num, v.text, v.shape());
        std::thread::scope(|s| {
            s.spawn(|| {
                // The one ring is this test thread's: this thread has none.
                sink.event(&BATCH, 1, "", v.shape());
            });
        });
        let window = rec.shared.snapshot(0, u64::MAX);
        let kinds: Vec<Kind> =
            window.threads.iter().flat_map(|t| &t.records).map(|r| r.kind).collect();
        assert_eq!(kinds, vec![Kind::Counter], "the short span is not recorded");
        assert_eq!(rec.shared.dropped.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_budget_too_small_is_refused_with_the_fix() {
        let err = layer(Config { budget_bytes: 1000, ..Config::default() }).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("raise budget_bytes") && msg.contains("max_threads"), "{msg}");
        assert!(layer(Config { max_threads: 0, ..Config::default() }).is_err());
    }
}
