//! Inside a timed fork: the allocator probe, the runs with the mode's recorder installed,
//! the recorder's account and the record path's cost.

use super::{Cell, Dump, ModeOutcome, Recorder, Run, ThreadCount, BATCH, RING_SIZE, SAMPLE_EVERY};
use crate::measure::harness::{self, CellSpec};
use crate::measure::variants::{self, Settings, WithHandoff};
use crate::protocol::Ctx;
use handoff::Handoff;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What [`allocator_probe`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocatorProbe {
    /// `std::alloc::System` or `dhat::Alloc`.
    pub name: String,
    /// Allocations a dhat testing profiler counted while one `Box` was made and freed.
    pub dhat_counted_blocks: u64,
}

/// Which global allocator this process runs on: starts a dhat profiler in testing mode (no
/// file), allocates and frees one `Box`, and reads the count. dhat sees an allocation only
/// when `dhat::Alloc` is the global allocator; otherwise (0 counted) it is the system
/// allocator, the only other one the binaries that run this experiment have (the
/// `lab-cell-*` allocator binaries run only `disruptor-vs-lbq`'s cells). Call only while no
/// dhat profiler runs.
pub fn allocator_probe() -> AllocatorProbe {
    let counted = {
        let _profiler = dhat::Profiler::builder().testing().build();
        drop(std::hint::black_box(Box::new([7u8; 64])));
        dhat::HeapStats::get().total_blocks
    };
    let name = if counted > 0 { "dhat::Alloc" } else { "std::alloc::System" };
    AllocatorProbe { name: name.to_string(), dhat_counted_blocks: counted }
}

/// What one record costs the calling thread under the current subscriber, ns per call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RecordCost {
    /// A counter event (`handoff::batch_counter!`), as the variants emit per batch.
    pub event_ns: f64,
    /// A span created, entered, exited and closed (`handoff::batch_span!`).
    pub span_ns: f64,
}

fn per_call_ns(f: impl Fn(u64)) -> f64 {
    const CALLS: u64 = 20_000;
    let reps: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            for i in 0..CALLS {
                f(std::hint::black_box(i));
            }
            t.elapsed().as_nanos() as f64 / CALLS as f64
        })
        .collect();
    crate::stats::median(&reps).expect("7 repetitions")
}

/// Times the record path on this thread with whatever subscriber is installed (none: the
/// disabled call sites' cost): median of 7 repetitions of 20,000 calls each. Every call
/// records (per-batch sampling is off meanwhile): the cost of one record, which the
/// prediction multiplies by the records a dump says were written.
pub fn record_cost() -> RecordCost {
    let every = handoff::trace::batch_every();
    handoff::trace::set_batch_every(1);
    let cost = RecordCost {
        event_ns: per_call_ns(|i| handoff::batch_counter!("queue_depth", i)),
        span_ns: per_call_ns(|i| {
            let _b = handoff::batch_span!(i);
        }),
    };
    handoff::trace::set_batch_every(every);
    cost
}

/// The warm-up and measured runs of one fork, a heartbeat after each.
struct Job<'a, 'b> {
    spec: &'a CellSpec,
    traced: bool,
    ctx: &'b mut Ctx,
}

impl WithHandoff for Job<'_, '_> {
    type Out = Result<(Vec<Run>, Vec<Run>), String>;

    fn run<H: Handoff + 'static>(self, handoff: H) -> Self::Out {
        let (spec, traced) = (self.spec, self.traced);
        let one = || {
            // One loop shape for both: `TRACE` only switches the harness's own spans on.
            let r = if traced {
                harness::run_once::<H, 16, true>(&handoff, spec, spec.messages, SAMPLE_EVERY)
            } else {
                harness::run_once::<H, 16, false>(&handoff, spec, spec.messages, SAMPLE_EVERY)
            }?
            .0;
            Ok::<Run, String>(Run {
                ms: r.ms,
                cpu_ms: r.process_cpu_ms,
                valid: r.valid,
                verdict: r.verdict,
            })
        };
        let mut warm = Vec::with_capacity(spec.warmup);
        for _ in 0..spec.warmup {
            warm.push(one()?);
            self.ctx.heartbeat();
        }
        let mut runs = Vec::with_capacity(spec.runs);
        for _ in 0..spec.runs {
            runs.push(one()?);
            self.ctx.heartbeat();
        }
        Ok((warm, runs))
    }
}

enum Recording {
    Off,
    Flight(flight_recorder::Recorder, PathBuf),
    Full(flight_recorder::FullGuard, PathBuf),
}

/// Where a fork leaves its trace file: the temporary folder, named by the process, since a
/// timed fork is told no run folder; the parent moves the file into the run folder.
fn temp_trace_file(r: Recorder) -> PathBuf {
    std::env::temp_dir().join(format!(
        "lab-trace-overhead-{}-{}.trace.json",
        std::process::id(),
        r.name()
    ))
}

fn install(r: Recorder) -> Result<Recording, String> {
    Ok(match r {
        Recorder::Off => Recording::Off,
        Recorder::Flight => {
            Recording::Flight(crate::profile::trace::install_flight()?, temp_trace_file(r))
        }
        Recorder::Full => {
            let path = temp_trace_file(r);
            let g = flight_recorder::install_full(&path)
                .map_err(|e| format!("installing the full capture: {e}"))?;
            Recording::Full(g, path)
        }
    })
}

/// The timed fork of one (workload, mode): the allocator probe, warm-up and measured runs
/// with the mode's recorder installed, the recorder's account and (off and flight) the
/// record path's cost timed after the runs.
pub(super) fn run(cell: &Cell, ctx: &mut Ctx) -> Result<ModeOutcome, String> {
    let (variant, wait, producers) = cell.workload.shape();
    if cell.messages == 0 {
        return Err("messages must be at least 1".into());
    }
    // Before any recorder: the probe's profiler must be the only one.
    let allocator = allocator_probe();
    let spec = CellSpec {
        variant: variant.into(),
        wait: wait.map(str::to_string),
        producers,
        messages: cell.messages,
        warmup: cell.warmup,
        runs: cell.runs,
        ring_size: RING_SIZE,
        capacity: None,
        prefetch: 256,
        payload: 16,
        sample_every: SAMPLE_EVERY,
        batch: BATCH,
        sampling_ab_pairs: 0,
        heap_messages: cell.messages,
        trace_messages: cell.messages,
        jvm: None,
        min_measure_ms: 0.0,
        spread_measure_ms: 0.0,
        in_run_trace: None,
        allocator: None,
        placement: Default::default(),
        calibration: None,
    };
    let settings = Settings {
        variant: variant.into(),
        wait: wait.map(str::to_string),
        ring_size: RING_SIZE,
        capacity: None,
        prefetch: 256,
    };
    let recording = install(cell.recorder)?;
    let traced = cell.recorder != Recorder::Off;
    let (warmup, runs) = variants::dispatch(&settings, Job { spec: &spec, traced, ctx })??;
    let mut out = ModeOutcome {
        recorder: cell.recorder,
        allocator,
        runs_recorded: warmup.len() + runs.len(),
        warmup,
        runs,
        record_cost: None,
        dump: None,
        trace_file: None,
        trace_bytes: None,
        trace_note: None,
    };
    let file = match recording {
        Recording::Off => {
            out.record_cost = Some(record_cost());
            None
        }
        Recording::Flight(r, path) => {
            let s = r.dump(&path).map_err(|e| format!("dumping the flight recorder: {e}"))?;
            out.dump = Some(Dump {
                events: s.events,
                records: s.records,
                span_records: s.span_records,
                overwritten: s.overwritten,
                dropped: s.dropped,
                threads: s.threads,
                by_thread: records_by_thread(&path)?,
                clock: r.clock_source().to_string(),
            });
            // After the dump, so the probe's records do not displace the runs' ones.
            out.record_cost = Some(record_cost());
            out.trace_note = Some(format!(
                "flight: {} events from {} threads, {} overwritten, {} dropped, clock {}",
                s.events,
                s.threads,
                s.overwritten,
                s.dropped,
                r.clock_source()
            ));
            Some(path)
        }
        Recording::Full(g, path) => {
            g.finish().map_err(|e| format!("finishing the full capture: {e}"))?;
            out.trace_note = Some("full: every event captured and repaired".into());
            Some(path)
        }
    };
    // The dump and the record path's timing are work the watchdog must see progress in.
    ctx.heartbeat();
    if let Some(path) = file {
        out.trace_bytes = std::fs::metadata(&path).ok().map(|m| m.len());
        out.trace_file = Some(path.display().to_string());
    }
    Ok(out)
}

/// Records kept in a flight dump per thread name (threads of the same name over the runs
/// summed), flow arrows and metadata not counted.
fn records_by_thread(path: &Path) -> Result<Vec<ThreadCount>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let events = doc["traceEvents"].as_array().ok_or("a dump without traceEvents")?;
    let names: HashMap<u64, &str> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .filter_map(|e| Some((e["tid"].as_u64()?, e["args"]["name"].as_str()?)))
        .collect();
    let mut by: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().unwrap_or("");
        if !matches!(ph, "X" | "i" | "C") {
            continue;
        }
        let name = e["tid"].as_u64().and_then(|t| names.get(&t)).copied().unwrap_or("?");
        let c = by.entry(name).or_default();
        c.0 += 1;
        c.1 += u64::from(ph == "X");
    }
    Ok(by
        .into_iter()
        .map(|(name, (records, spans))| ThreadCount { name: name.to_string(), records, spans })
        .collect())
}
