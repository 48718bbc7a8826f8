//! Experiment `trace-overhead`: what tracing costs a timed run.
//!
//! The timed runs of `disruptor-vs-lbq` run with no recorder; its traces come from a separate
//! untimed child. This experiment is where the cost is measured, in timed children of each
//! (workload, mode):
//! * `off`: exactly as a timed child of `disruptor-vs-lbq` (no subscriber; the harness's
//!   publish/consume spans compiled out),
//! * `flight`: the flight recorder installed as in the trace child
//!   (`crate::tracehook::install_flight`: per-batch records kept 1 in 16) and the
//!   harness's spans on; dumped once after the last run (not timed),
//! * `full`: every event streamed by tracing-chrome (`flight_recorder::install_full`).
//!
//! Workloads (16-byte messages, one consumer, a latency sample every 1024th message):
//! * the deciding one, `locked P=2`: the seed's baseline queue, two producers and one
//!   consumer, 200 rounds (`--rounds N` sets them; 100 left the interval's top at +3.3%
//!   in two runs of three, 200 decided it). It also runs `off` twice per round (the A/A control: off against
//!   off must cost 0 within the interval).
//! * context ones, `ring[yielding] P=1` and `ring[blocking] P=2`: reported, not decided.
//!   The ring's runs are bimodal on two cores (a consumer right behind its producer moves
//!   a cache line per message; one further behind takes large batches), and a blocking
//!   handoff is perturbation-sensitive: slowing a thread a little makes the other side's
//!   batches larger and cuts wake-ups, so tracing can make it faster; what they measure is
//!   the change of dynamics, not the recorder's cost.
//!
//! Each round runs one child per (workload, mode), the mode order rotated round by round.
//! A child makes two warm-up runs and one measured run (this experiment's `--warmup 2
//! --runs 1` defaults): the lab VM has phases of a second or two in which the locked queue
//! runs 2–3× faster (streaks of ~95 ms runs among ~240 ms ones, measured), so children of
//! several runs each straddled different phases, while single-run children next to each
//! other in time share theirs. A mode's cost in a round is its child's best run time over
//! the `off` child's of the same round, − 1 (a paired ratio; with more runs per child the
//! best one, the least disturbed), or over the mean of both `off` children's where the
//! workload runs the A/A one (half the baseline's variance: on three runs of 60–100 rounds
//! the interval narrowed from about 4.7–8.4 points wide to 2.3–6.1, the A/A control itself
//! still off against off); the cost is the median over rounds, with a
//! distribution-free confidence interval of that median (order statistics, ≥ 95%). The
//! target (flight ≤ 3%, JFR states 1–2%) is met when the interval lies at or below 3%, not
//! met when above, else UNDECIDED: also when the A/A control's interval misses 0, and when
//! the whole interval lies below 0 (tracing made the workload faster: changed dynamics, not
//! a cost). The harness's consumer loop has one shape for traced and untraced runs (a
//! traced child with no recorder measured +0.0% [−2.4, +3.3] against off); with a loop of
//! its own the traced path had cost about 2%.
//!
//! Beside the measured cost stands a predicted one, independent of the workload's dynamics:
//! each child times the record path in-process after its runs ([`record_cost`]: ns per
//! counter event and per span, with the mode's recorder installed or none), and the flight
//! dump says how many records the runs wrote, so predicted = records per message × ns per
//! record (less off's disabled call sites) / off's ns per message.
//!
//! Every timed child also probes its global allocator ([`allocator_probe`]): a dhat testing
//! profiler counts the allocations it sees; only `dhat::Alloc` as the global allocator feeds
//! it, so 0 counted means the timed children run on the system allocator (the lab binary
//! declares none; `dhat::Alloc` lives in `lab-heap` only).

use super::common::{self, f64s, Opts, XResults, XSpec, XTable, XTarget};
use crate::harness::{self, CellSpec, Mode};
use crate::stats::Summary;
use crate::variants::{self, Settings, WithHandoff};
use handoff::Handoff;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::time::Instant;

/// Messages per run when `--elements` is not given.
pub const DEFAULT_MESSAGES: u64 = 1 << 20;
/// The ceiling for the flight recorder's cost, percent of throughput.
pub const FLIGHT_TARGET_PCT: f64 = 3.0;
/// The modes, `off` first (the baseline).
pub const MODES: [&str; 3] = ["off", "flight", "full"];
/// Slot name of the deciding workload's second `off` child per round (the A/A control).
pub const AA: &str = "off-aa";

const RING_SIZE: usize = 64 * 1024;
const BATCH: usize = 1024;
const SAMPLE_EVERY: u64 = 1024;

/// One workload of the experiment.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// Variant (`--variants` name).
    pub variant: &'static str,
    /// The ring's wait strategy.
    pub wait: Option<&'static str>,
    /// Producer threads.
    pub producers: usize,
    /// Label in tables and rows.
    pub label: &'static str,
    /// Whether the flight target is decided on it (else it is context, reported only).
    pub decides: bool,
    /// Rounds (child processes per mode).
    pub rounds: usize,
    /// Ring size (the ring's slots; unused by the locked queue, which is unbounded).
    pub ring_size: usize,
}

/// The workloads: the deciding one first.
pub const WORKLOADS: [Workload; 3] = [
    Workload {
        variant: "locked",
        wait: None,
        producers: 2,
        label: "locked P=2",
        decides: true,
        rounds: 200,
        ring_size: RING_SIZE,
    },
    Workload {
        variant: "ring",
        wait: Some("yielding"),
        producers: 1,
        label: "ring[yielding] P=1",
        decides: false,
        rounds: 6,
        ring_size: RING_SIZE,
    },
    Workload {
        variant: "ring",
        wait: Some("blocking"),
        producers: 2,
        label: "ring[blocking] P=2",
        decides: false,
        rounds: 6,
        ring_size: RING_SIZE,
    },
];

/// The child slots of a workload: its modes, plus the A/A `off` when it decides.
fn slots(w: &Workload) -> Vec<&'static str> {
    let mut s = vec!["off"];
    if w.decides {
        s.push(AA);
    }
    s.extend(&MODES[1..]);
    s
}

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
/// allocator, the only other one the lab links. Call only while no dhat profiler runs.
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
    let mut reps: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            for i in 0..CALLS {
                f(std::hint::black_box(i));
            }
            t.elapsed().as_nanos() as f64 / CALLS as f64
        })
        .collect();
    reps.sort_by(f64::total_cmp);
    reps[reps.len() / 2]
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

struct Job<'a> {
    spec: &'a CellSpec,
    traced: bool,
}

type Runs = (Vec<harness::RunResult>, Vec<harness::RunResult>);

impl WithHandoff for Job<'_> {
    type Out = Result<Runs, String>;

    fn run<H: Handoff + 'static>(self, handoff: H) -> Self::Out {
        let one = || {
            if self.traced {
                harness::run_once::<H, 16, true>(&handoff, self.spec, SAMPLE_EVERY)
            } else {
                harness::run_once::<H, 16, false>(&handoff, self.spec, SAMPLE_EVERY)
            }
            .map(|(r, _)| r)
        };
        let warm = (0..self.spec.warmup).map(|_| one()).collect::<Result<Vec<_>, _>>()?;
        let runs = (0..self.spec.runs).map(|_| one()).collect::<Result<Vec<_>, _>>()?;
        Ok((warm, runs))
    }
}

enum Recording {
    Off,
    Flight(flight_recorder::Recorder, std::path::PathBuf),
    Full(flight_recorder::FullGuard),
}

/// The timed child of one (workload, mode): warm-up and measured runs with the mode's
/// recorder installed; run times, checks, the allocator probe, the recorder's account and
/// (off and flight) the record path's cost timed after the runs.
pub(super) fn cell(spec: &XSpec) -> Result<Value, String> {
    let mode = spec.param_str("mode")?.to_string();
    if !MODES.contains(&mode.as_str()) {
        return Err(format!("mode '{mode}'; valid: {}", MODES.join(", ")));
    }
    let variant = spec.param_str("variant")?.to_string();
    let wait = spec.params["wait"].as_str().map(str::to_string);
    let producers = spec.param_u64("producers")? as usize;
    let ring_size = spec.param_u64("ring_size")? as usize;
    if !ring_size.is_power_of_two() {
        return Err(format!("ring size {ring_size}: a power of two"));
    }
    if producers == 0 || spec.elements == 0 {
        return Err("producers and messages must be at least 1".into());
    }
    // Before any recorder: the probe's profiler must be the only one.
    let allocator = allocator_probe();
    let cs = CellSpec {
        variant: variant.clone(),
        wait: wait.clone(),
        producers,
        messages: spec.elements,
        warmup: spec.warmup,
        runs: spec.runs,
        ring_size,
        capacity: None,
        prefetch: 256,
        payload: 16,
        sample_every: SAMPLE_EVERY,
        batch: BATCH,
        sampling_ab_pairs: 0,
        mode: Mode::Timed,
    };
    let settings = Settings { variant, wait, ring_size, capacity: None, prefetch: 256 };
    let file = || spec.trace_file.as_deref().ok_or("a traced mode needs a trace file");
    let recording = match mode.as_str() {
        "flight" => {
            let r = crate::tracehook::install_flight()?;
            Recording::Flight(r, file()?.into())
        }
        "full" => Recording::Full(
            flight_recorder::install_full(std::path::Path::new(file()?))
                .map_err(|e| format!("installing the full capture: {e}"))?,
        ),
        _ => Recording::Off,
    };
    let traced = mode != "off";
    let (warm, runs) = variants::dispatch(&settings, Job { spec: &cs, traced })??;
    let mut dump = Value::Null;
    let mut cost = None;
    let trace_note = match recording {
        Recording::Off => {
            cost = Some(record_cost());
            None
        }
        Recording::Flight(r, path) => {
            let s = r.dump(&path).map_err(|e| format!("dumping the flight recorder: {e}"))?;
            dump = json!({
                "events": s.events, "records": s.records, "span_records": s.span_records,
                "overwritten": s.overwritten, "dropped": s.dropped, "threads": s.threads,
                "by_thread": records_by_thread(&path)?,
                "clock": r.clock_source(),
            });
            // After the dump, so the probe's records do not displace the runs' ones.
            cost = Some(record_cost());
            Some(format!(
                "flight: {} events from {} threads, {} overwritten, {} dropped",
                s.events, s.threads, s.overwritten, s.dropped
            ))
        }
        Recording::Full(g) => {
            g.finish().map_err(|e| format!("finishing the full capture: {e}"))?;
            Some("full: every event captured and repaired".to_string())
        }
    };
    let trace_bytes = spec
        .trace_file
        .as_deref()
        .filter(|_| traced)
        .and_then(|f| std::fs::metadata(f).ok())
        .map(|m| m.len());
    let invalid: Vec<String> =
        warm.iter().chain(&runs).filter(|r| !r.valid).map(|r| r.verdict.clone()).collect();
    Ok(json!({
        "mode": mode,
        "allocator": allocator,
        "warmup_ms": warm.iter().map(|r| r.ms).collect::<Vec<_>>(),
        "runs_ms": runs.iter().filter(|r| r.valid).map(|r| r.ms).collect::<Vec<_>>(),
        "cpu_ms": runs.iter().filter(|r| r.valid).map(|r| r.process_cpu_ms).collect::<Vec<_>>(),
        "invalid": invalid,
        "trace_note": trace_note,
        "trace_bytes": trace_bytes,
        "dump": dump,
        "record_cost": cost,
        "runs_recorded": warm.len() + runs.len(),
    }))
}

/// Records kept in a flight dump per thread name (threads of the same name over the runs
/// summed): `[{"name", "records", "spans"}]`, flow arrows and metadata not counted.
fn records_by_thread(path: &std::path::Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let events = doc["traceEvents"].as_array().ok_or("a dump without traceEvents")?;
    let names: std::collections::HashMap<u64, &str> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .filter_map(|e| Some((e["tid"].as_u64()?, e["args"]["name"].as_str()?)))
        .collect();
    let mut by: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
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
        .map(|(name, (records, spans))| json!({"name": name, "records": records, "spans": spans}))
        .collect())
}

/// Records one thread (by name) wrote per message, and the share of spans among them.
#[derive(Debug, Clone, Serialize)]
struct ThreadRecords {
    name: String,
    per_msg: f64,
    span_share: f64,
}

/// Per (workload, slot): what the children returned, by round (`None`: no valid run).
#[derive(Default)]
struct Gathered {
    runs_ms: Vec<f64>,
    /// Process CPU time of each valid run (all threads; the full capture's writer included).
    cpu_ms: Vec<f64>,
    /// Median run time of each round's child.
    child_medians: Vec<Option<f64>>,
    /// Best (shortest) run time of each round's child.
    child_best: Vec<Option<f64>>,
    /// Median CPU time per run of each round's child.
    child_cpu: Vec<Option<f64>>,
    allocators: Vec<AllocatorProbe>,
    errors: Vec<String>,
    trace_bytes: Vec<u64>,
    trace_notes: Vec<String>,
    costs: Vec<RecordCost>,
    /// Records written per message, by child (flight).
    records_per_msg: Vec<f64>,
    /// Share of spans among the records kept in the dump, by child (flight).
    span_share: Vec<f64>,
    /// Per thread name, by child (flight).
    threads: Vec<Vec<ThreadRecords>>,
}

/// A confidence interval of the median of `xs` from order statistics (distribution-free):
/// `[x(k), x(n+1−k)]` with the largest `k` that keeps each tail's binomial probability
/// ≤ 2.5%. Returns `(low, high, coverage)`; `None` below 6 samples (no such `k`).
pub fn median_ci(xs: &[f64]) -> Option<(f64, f64, f64)> {
    let n = xs.len();
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    // tail(k) = P(Binomial(n, 1/2) < k)
    let tail = |k: usize| -> f64 {
        let mut c = 1.0f64; // C(n, 0)
        let mut sum = 0.0;
        for i in 0..k {
            sum += c;
            c = c * (n - i) as f64 / (i + 1) as f64;
        }
        sum / 2f64.powi(n as i32)
    };
    let k = (1..=n / 2).take_while(|&k| tail(k) <= 0.025).last()?;
    Some((v[k - 1], v[n - k], 1.0 - 2.0 * tail(k)))
}

fn median(xs: &[f64]) -> Option<f64> {
    Summary::of(xs).map(|s| s.median)
}

fn pct(mode_ms: f64, off_ms: f64) -> f64 {
    (mode_ms / off_ms - 1.0) * 100.0
}

/// Per-round paired costs of `g` against `off`, percent, rounds where both have a median.
fn paired(g: &[Option<f64>], off: &[Option<f64>]) -> Vec<f64> {
    g.iter().zip(off).filter_map(|(m, o)| Some(pct((*m)?, (*o)?))).collect()
}

/// Per round, the baseline a traced mode is paired with: the `off` child's figure, or, where
/// the workload also runs the A/A `off` child, the mean of the two (two measurements of the
/// same thing halve the baseline's variance; either one alone where the other is missing).
fn baseline(off: &[Option<f64>], aa: Option<&[Option<f64>]>) -> Vec<Option<f64>> {
    match aa {
        None => off.to_vec(),
        Some(aa) => off
            .iter()
            .zip(aa)
            .map(|(o, a)| match (o, a) {
                (Some(o), Some(a)) => Some((o + a) / 2.0),
                (o, a) => o.or(*a),
            })
            .collect(),
    }
}

/// "+1.2% [−0.3, +2.8]" (interval) or "+1.2% (range −0.3 … +2.8)" when too few rounds.
fn fmt_cost(xs: &[f64]) -> String {
    match (median(xs), median_ci(xs)) {
        (Some(m), Some((lo, hi, _))) => format!("{m:+.1}% [{lo:+.1}, {hi:+.1}]"),
        (Some(m), None) => {
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!("{m:+.1}% (range {lo:+.1} … {hi:+.1})")
        }
        _ => "-".into(),
    }
}

fn fmt_bytes(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.1} KiB", b as f64 / 1024.0)
    }
}

/// Full captures above this size are measured, then deleted (they are not the evidence here).
const KEEP_FULL_BYTES: u64 = 64 << 20;

fn stem(w: &Workload) -> String {
    let base = w.label.split(' ').next().unwrap_or(w.label);
    format!("{}-p{}", base.replace('[', "-").replace(']', ""), w.producers)
}

/// The parent: runs the children round by round, then tables, targets and files.
pub(super) fn run(o: &Opts) -> Result<i32, String> {
    // `--rounds` sets the deciding workload's rounds (more narrow its interval).
    let workloads: Vec<Workload> = WORKLOADS
        .iter()
        .map(|w| Workload {
            rounds: if w.decides { o.rounds.unwrap_or(w.rounds) } else { w.rounds },
            ..*w
        })
        .collect();
    let n = o.elements.unwrap_or(DEFAULT_MESSAGES);
    let (dir, default) = common::run_dir(o)?;
    let exe = common::lab_exe()?;
    let mut env = common::environment(
        o,
        n,
        "measured here: off, flight and full, each in its own timed children",
        "off",
    );
    let mut notes = Vec::new();
    if !o.trace || !o.heap {
        notes.push(
            "--trace and --heap do not apply: this experiment always times off, flight and \
             full, and runs no heap pass."
                .to_string(),
        );
    }
    let slot_lists: Vec<Vec<&str>> = workloads.iter().map(slots).collect();
    let mut got: Vec<Vec<Gathered>> =
        slot_lists.iter().map(|s| s.iter().map(|_| Gathered::default()).collect()).collect();
    let mut files = Vec::new();
    let total: usize = workloads.iter().zip(&slot_lists).map(|(w, s)| w.rounds * s.len()).sum();
    let max_rounds = workloads.iter().map(|w| w.rounds).max().unwrap_or(0);
    let mut done = 0;
    for round in 0..max_rounds {
        for (wi, w) in workloads.iter().enumerate().filter(|(_, w)| round < w.rounds) {
            let sl = &slot_lists[wi];
            for k in 0..sl.len() {
                let si = (k + round) % sl.len();
                let slot = sl[si];
                let mode = if slot == AA { "off" } else { slot };
                let file = format!("{}-{mode}-r{round}.trace.json", stem(w));
                let path = dir.join(&file);
                let spec = XSpec {
                    experiment: o.experiment.clone(),
                    workload: format!("{} {slot}", w.label),
                    elements: n,
                    warmup: o.warmup,
                    runs: o.runs,
                    params: json!({
                        "mode": mode, "variant": w.variant, "wait": w.wait,
                        "producers": w.producers, "ring_size": w.ring_size,
                    }),
                    trace_file: (mode != "off").then(|| path.display().to_string()),
                    heap_file: None,
                };
                let g = &mut got[wi][si];
                done += 1;
                let what = format!("{} {slot} (round {})", w.label, round + 1);
                let v = match common::run_child(&exe, "__xcell", &spec, o.timeout) {
                    Ok(v) => v,
                    Err(e) => {
                        common::progress(done, total, &what, &e);
                        g.errors.push(e);
                        g.child_medians.push(None);
                        g.child_best.push(None);
                        g.child_cpu.push(None);
                        continue;
                    }
                };
                let runs = f64s(&v["runs_ms"]);
                let cpu = f64s(&v["cpu_ms"]);
                if let Some(a) = v["invalid"].as_array() {
                    g.errors.extend(
                        a.iter().filter_map(Value::as_str).map(|e| format!("INVALID run: {e}")),
                    );
                }
                if let Ok(a) = serde_json::from_value(v["allocator"].clone()) {
                    g.allocators.push(a);
                }
                if let Ok(c) = serde_json::from_value::<RecordCost>(v["record_cost"].clone()) {
                    g.costs.push(c);
                }
                let recorded = v["runs_recorded"].as_u64().unwrap_or(0) as f64 * n as f64;
                let d = &v["dump"];
                if let (Some(r), Some(ow), Some(sp)) =
                    (d["records"].as_u64(), d["overwritten"].as_u64(), d["span_records"].as_u64())
                {
                    if recorded > 0.0 {
                        g.records_per_msg.push((r + ow) as f64 / recorded);
                    }
                    if r > 0 {
                        g.span_share.push(sp as f64 / r as f64);
                    }
                    // Kept records split by thread, scaled up to all written (kept +
                    // overwritten): the overwritten ones were written in the same mix.
                    let scale = (r + ow) as f64 / r.max(1) as f64 / recorded.max(1.0);
                    let threads = d["by_thread"].as_array().map(|a| {
                        a.iter()
                            .filter_map(|t| {
                                let (k, s) = (t["records"].as_u64()?, t["spans"].as_u64()?);
                                Some(ThreadRecords {
                                    name: t["name"].as_str()?.to_string(),
                                    per_msg: k as f64 * scale,
                                    span_share: s as f64 / k.max(1) as f64,
                                })
                            })
                            .collect()
                    });
                    g.threads.extend(threads);
                }
                let m = median(&runs);
                common::progress(
                    done,
                    total,
                    &what,
                    &m.map_or("no valid run".into(), |m| format!("median {m:.1} ms")),
                );
                g.child_medians.push(m);
                g.child_best.push(runs.iter().copied().reduce(f64::min));
                g.child_cpu.push(median(&cpu));
                g.runs_ms.extend(runs);
                g.cpu_ms.extend(cpu);
                if let Some(b) = v["trace_bytes"].as_u64() {
                    g.trace_bytes.push(b);
                    if mode == "full" && b > KEEP_FULL_BYTES {
                        let _ = std::fs::remove_file(&path);
                        notes.push(format!(
                            "{file}: {} measured, then deleted (over {})",
                            fmt_bytes(b),
                            fmt_bytes(KEEP_FULL_BYTES)
                        ));
                    } else if path.is_file() {
                        files.push(file.clone());
                    }
                }
                if let Some(t) = v["trace_note"].as_str() {
                    let clock = v["dump"]["clock"].as_str().map(|c| format!(", clock {c}"));
                    g.trace_notes.push(format!("{file}: {t}{}", clock.unwrap_or_default()));
                }
            }
        }
    }

    let mut t = XTable::new(
        &format!(
            "Tracing cost: {n} messages per run, {} runs per child after {} warm-ups; cost = \
             median over rounds of the paired ratio of each child's best run to off's − 1",
            o.runs, o.warmup
        ),
        &[
            "workload",
            "role",
            "trace",
            "rounds",
            "median ms [min, max]",
            "M msg/s",
            "throughput vs off",
            "cost [95% CI]",
            "CPU cost",
            "records/msg",
            "predicted cost: busiest thread (all)",
            "trace file",
            "global allocator",
        ],
    );
    t.note = Some(
        "Each round runs one child per mode, order rotated; a mode's cost in a round is its \
         child's best run time over the off child's of that round − 1 (over the mean of the \
         two off children's where there is an off-aa one). cost: median over \
         rounds, with the order-statistics confidence interval of that median (≥ 95%; with \
         fewer than 6 rounds the range is shown instead). off-aa: a second off child per \
         round (A/A control: its cost must be 0 within the interval). CPU cost: the same on \
         process CPU time per run (all threads). records/msg: records the flight recorder \
         wrote per message (kept + overwritten). predicted cost: records/msg × the record \
         path's measured ns per record (less off's) / off's ns per message (its children's \
         best runs, median over rounds), for the thread \
         that records most (its cost if it is the bottleneck) and for all threads together \
         (as if every record's time were on one critical path: an upper bound)."
            .into(),
    );
    let mut rows = Vec::new();
    let mut targets = Vec::new();
    let mut invalid = false;
    let mut allocators: Vec<AllocatorProbe> = Vec::new();
    let mut cost_rows: Vec<(String, &str, RecordCost)> = Vec::new();
    for (wi, w) in workloads.iter().enumerate() {
        let off = &got[wi][0];
        let off_s = Summary::of(&off.runs_ms);
        // off's undisturbed time per run: the median over rounds of each child's best run.
        let off_best = median(&off.child_best.iter().flatten().copied().collect::<Vec<_>>());
        let off_cost = median_cost(&off.costs);
        let aa_slot = slot_lists[wi].iter().position(|s| *s == AA);
        let aa = aa_slot.map(|i| paired(&got[wi][i].child_best, &off.child_best));
        let base_best =
            baseline(&off.child_best, aa_slot.map(|i| got[wi][i].child_best.as_slice()));
        let base_cpu = baseline(&off.child_cpu, aa_slot.map(|i| got[wi][i].child_cpu.as_slice()));
        for (si, slot) in slot_lists[wi].iter().enumerate() {
            let g = &got[wi][si];
            allocators.extend(g.allocators.iter().cloned());
            if !g.errors.is_empty() {
                invalid = true;
            }
            let s = Summary::of(&g.runs_ms);
            let is_off = si == 0;
            // The A/A child against off alone; traced modes against the baseline.
            let (per_round, cpu_round) = if is_off {
                (Vec::new(), Vec::new())
            } else if *slot == AA {
                (paired(&g.child_best, &off.child_best), paired(&g.child_cpu, &off.child_cpu))
            } else {
                (paired(&g.child_best, &base_best), paired(&g.child_cpu, &base_cpu))
            };
            let cost = median(&per_round);
            let ci = median_ci(&per_round);
            let rc = median_cost(&g.costs);
            if let Some(c) = rc {
                cost_rows.push((w.label.to_string(), slot, c));
            }
            let records_per_msg = median(&g.records_per_msg);
            let span_share = median(&g.span_share);
            // Predicted cost, percent of off's time per message, of `per_msg` records with
            // `share` spans.
            let predict = |per_msg: f64, share: f64| -> Option<f64> {
                let (c, oc, ob) = (rc?, off_cost?, off_best?);
                let ns =
                    share * (c.span_ns - oc.span_ns) + (1.0 - share) * (c.event_ns - oc.event_ns);
                Some(per_msg * ns / (ob * 1e6 / n as f64) * 100.0)
            };
            let predicted = records_per_msg.zip(span_share).and_then(|(r, sh)| predict(r, sh));
            // Per thread name: medians over children, then the busiest thread's prediction.
            let mut names: Vec<&str> =
                g.threads.iter().flatten().map(|t| t.name.as_str()).collect();
            names.sort();
            names.dedup();
            let per_thread: Vec<(String, f64, Option<f64>)> = names
                .iter()
                .filter_map(|name| {
                    let of = |f: fn(&ThreadRecords) -> f64| -> Vec<f64> {
                        g.threads.iter().flatten().filter(|t| t.name == *name).map(f).collect()
                    };
                    let per_msg = median(&of(|t| t.per_msg))?;
                    let share = median(&of(|t| t.span_share))?;
                    Some((name.to_string(), per_msg, predict(per_msg, share)))
                })
                .collect();
            let busiest = per_thread
                .iter()
                .filter_map(|(name, _, p)| Some((name.as_str(), (*p)?)))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            let alloc = {
                let mut names: Vec<&str> = g.allocators.iter().map(|a| a.name.as_str()).collect();
                names.dedup();
                if names.is_empty() {
                    "-".to_string()
                } else {
                    names.join(", ")
                }
            };
            let bad = (!g.errors.is_empty()).then(|| format!(" INVALID: {}", g.errors.join("; ")));
            let cell = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map(f).unwrap_or("-".into());
            t.rows.push(vec![
                w.label.to_string(),
                if w.decides { "decides" } else { "context" }.to_string(),
                slot.to_string(),
                g.child_medians.len().to_string(),
                match &s {
                    Some(s) => format!(
                        "{:.1} [{:.1}, {:.1}]{}",
                        s.median,
                        s.min,
                        s.max,
                        bad.clone().unwrap_or_default()
                    ),
                    None => bad.clone().unwrap_or_else(|| "INVALID: no valid run".into()),
                },
                cell(s.as_ref().map(|s| n as f64 / s.median / 1e3), &|q| format!("{q:.2}")),
                match (&s, &off_s) {
                    (Some(s), Some(off)) => format!("{:.3}×", off.median / s.median),
                    _ => "-".into(),
                },
                if is_off { "-".into() } else { fmt_cost(&per_round) },
                if is_off { "-".into() } else { fmt_cost(&cpu_round) },
                cell(records_per_msg, &|r| format!("{r:.4}")),
                match (busiest, predicted) {
                    (Some((name, b)), Some(p)) => format!("{b:+.1}% {name} (all: {p:+.1}%)"),
                    _ => "-".into(),
                },
                g.trace_bytes.iter().max().map_or("-".into(), |b| fmt_bytes(*b)),
                alloc,
            ]);
            if *slot == "flight" && w.decides {
                let aa_ci = aa.as_deref().and_then(median_ci);
                let aa_ok = aa_ci.is_some_and(|(lo, hi, _)| lo <= 0.0 && 0.0 <= hi);
                // An interval wholly below 0 is not a cost but changed dynamics (tracing
                // made the workload faster): the measurement decides nothing then.
                let dynamics = ci.is_some_and(|(_, hi, _)| hi < 0.0);
                let met = match (ci, g.errors.is_empty()) {
                    (Some((lo, hi, _)), true) if aa_ok && !dynamics => {
                        if hi <= FLIGHT_TARGET_PCT {
                            Some(true)
                        } else if lo > FLIGHT_TARGET_PCT {
                            Some(false)
                        } else {
                            None
                        }
                    }
                    _ => None,
                };
                targets.push(XTarget {
                    what: format!("flight recorder's cost, {}", w.label),
                    target: format!(
                        "≤ {FLIGHT_TARGET_PCT}% of throughput (JFR states 1–2%): the 95% \
                         interval below it"
                    ),
                    measured: match (cost, ci) {
                        (Some(c), Some((lo, hi, cov))) => format!(
                            "{c:+.1}% [{lo:+.1}, {hi:+.1}] ({:.1}% interval of the median of \
                             {} paired rounds; A/A control {}; predicted {}; CPU time {})",
                            cov * 100.0,
                            per_round.len(),
                            aa.as_deref().map_or("-".into(), fmt_cost),
                            match (busiest, predicted) {
                                (Some((name, b)), Some(p)) =>
                                    format!("{b:+.1}% for the {name} thread, {p:+.1}% all"),
                                _ => "-".into(),
                            },
                            fmt_cost(&cpu_round),
                        ),
                        _ => format!(
                            "too few valid rounds for an interval ({} of {})",
                            per_round.len(),
                            w.rounds
                        ),
                    },
                    met,
                });
                if let (Some(c), Some((lo, hi, _))) = (cost, ci) {
                    if !aa_ok {
                        notes.push(format!(
                            "{}: UNDECIDED: the A/A control (off against off) cost {} — \
                                 its interval misses 0, so this machine drifted during the \
                                 run more than the intervals allow; rerun on a quieter \
                                 machine.",
                            w.label,
                            aa.as_deref().map_or("-".into(), fmt_cost)
                        ));
                    } else if dynamics {
                        notes.push(format!(
                            "{}: UNDECIDED: the flight cost's whole interval [{lo:+.1}%, \
                             {hi:+.1}%] lies below 0: tracing made this workload faster, so \
                             its timing changed with the perturbation and the figure is not \
                             the recorder's cost (see the predicted cost and the record \
                             path's ns per call instead).",
                            w.label
                        ));
                    } else if met.is_none() && g.errors.is_empty() {
                        notes.push(format!(
                            "{}: UNDECIDED: the flight cost's interval [{lo:+.1}%, \
                                 {hi:+.1}%] straddles the {FLIGHT_TARGET_PCT}% target; more \
                                 rounds or a quieter machine would decide it.",
                            w.label
                        ));
                    }
                    if c < 0.0 {
                        notes.push(format!(
                            "{}: the flight cost's median is negative ({c:+.1}%): the \
                                 traced runs were faster than off. A recorder cannot speed \
                                 up the work; read it as noise within the interval (the A/A \
                                 control shows its size), or as changed dynamics if the \
                                 interval lies below 0.{}",
                            w.label,
                            if met == Some(true) {
                                " It counts as met because the whole interval lies at or \
                                     below the target, not because of the negative median."
                            } else {
                                ""
                            }
                        ));
                    }
                }
            }
            if !w.decides && !is_off && cost.is_some_and(|c| c < 0.0) {
                notes.push(format!(
                    "{} {slot}: tracing made this workload faster ({}): not a negative cost \
                     but changed dynamics. In a handoff whose threads block, slowing a thread \
                     a little (the recorder's work) makes the other side's batches larger and \
                     saves wake-ups and context switches, which are worth more than the \
                     recording. Context only: the target is decided on {}.",
                    w.label,
                    fmt_cost(&per_round),
                    workloads[0].label
                ));
            }
            rows.push(json!({
                "workload": w.label,
                "decides": w.decides,
                "producers": w.producers,
                "mode": slot,
                "rounds": g.child_medians.len(),
                "runs_ms": g.runs_ms,
                "child_medians_ms": g.child_medians,
                "child_best_ms": g.child_best,
                "summary": s,
                "msgs_per_s_median": s.as_ref().map(|s| n as f64 / s.median * 1e3),
                "throughput_vs_off": match (&s, &off_s) {
                    (Some(s), Some(off)) => Some(off.median / s.median),
                    _ => None,
                },
                "cost_pct_median": cost,
                "cost_pct_per_round": per_round,
                "cost_ci_pct": ci.map(|(lo, hi, _)| [lo, hi]),
                "cost_ci_coverage": ci.map(|c| c.2),
                "cpu_ms": g.cpu_ms,
                "cpu_cost_pct_per_round": cpu_round,
                "record_cost": rc,
                "records_per_msg": records_per_msg,
                "span_share": span_share,
                "predicted_cost_pct": predicted,
                "predicted_cost_pct_busiest_thread": busiest.map(|b| b.1),
                "busiest_thread": busiest.map(|b| b.0),
                "records_by_thread": per_thread.iter().map(|(name, r, p)| json!({
                    "name": name, "per_msg": r, "predicted_cost_pct": p,
                })).collect::<Vec<_>>(),
                "trace_bytes": g.trace_bytes,
                "allocator": g.allocators,
                "errors": g.errors,
            }));
            notes.extend(g.trace_notes.iter().cloned());
        }
    }
    let mut ct = XTable::new(
        "Record path, timed in each child after its runs (median over children): ns per call",
        &["workload", "trace", "counter event ns", "span ns (new, enter, exit, close)"],
    );
    ct.note = Some(
        "off: the call sites with no subscriber (a cached-interest check). flight: the flight \
         recorder installed globally, as in the runs. 7 × 20,000 calls on the child's main \
         thread; the predicted cost uses flight's figures less off's."
            .into(),
    );
    for (label, slot, c) in &cost_rows {
        ct.rows.push(vec![
            label.clone(),
            slot.to_string(),
            format!("{:.1}", c.event_ns),
            format!("{:.1}", c.span_ns),
        ]);
    }
    let system =
        !allocators.is_empty() && allocators.iter().all(|a| a.name == "std::alloc::System");
    let mut names: Vec<String> = allocators.iter().map(|a| a.name.clone()).collect();
    names.sort();
    names.dedup();
    env.timed_allocator = format!(
        "{} (probed in each of the {} timed children: a dhat testing profiler counted {} \
         allocations of a test Box)",
        if names.is_empty() { "unknown (no child answered)".to_string() } else { names.join(", ") },
        allocators.len(),
        allocators.iter().map(|a| a.dhat_counted_blocks).max().unwrap_or(0)
    );
    targets.push(XTarget {
        what: "global allocator of the timed children".into(),
        target: "the system allocator (dhat::Alloc only in lab-heap)".into(),
        measured: env.timed_allocator.clone(),
        met: (!allocators.is_empty()).then_some(system),
    });
    let method = vec![
        format!(
            "Workloads: {}; 16-byte messages, one consumer, consumer batches of up to {BATCH}, \
             a latency sample every {SAMPLE_EVERY}th message of each producer, ring size \
             {RING_SIZE} unless the label says otherwise. The flight target is decided on {} \
             only, the workload whose off-against-off control stays tight. The others are \
             context: the ring's runs are bimodal on two cores, and a blocking handoff changes \
             its dynamics when a thread is slowed (larger batches, fewer wake-ups), so its \
             'cost' can be negative.",
            workloads.iter().map(|w| w.label).collect::<Vec<_>>().join(", "),
            workloads[0].label
        ),
        "off: a timed child exactly as in disruptor-vs-lbq (no subscriber; the harness's \
         publish/consume spans compiled out). flight: the flight recorder installed before the \
         runs and the harness's spans on, dumped once after the last run (the dump is not \
         timed). full: tracing-chrome streams every event to a file; its writer thread runs \
         during the runs, the final flush and repair are not timed."
            .into(),
        format!(
            "Rounds: {}; each round runs one child per mode (the deciding workload also a \
             second off child, the A/A control), the order rotated round by round, so a slow \
             phase of the machine falls on every mode. Cost per round = the mode child's \
             best run time / the off child's − 1 (the best run: other processes only slow runs \
             down); the cost is the median over rounds with \
             its order-statistics confidence interval (≥ 95%).",
            workloads
                .iter()
                .map(|w| format!("{} for {}", w.rounds, w.label))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!(
            "The flight target (≤ {FLIGHT_TARGET_PCT}%) is met when the interval lies at or \
             below it, not met when it lies above, otherwise UNDECIDED; UNDECIDED too when \
             the A/A control's interval misses 0, and when the whole interval lies below 0 \
             (tracing made the workload faster: changed dynamics, not a cost)."
        ),
        "Predicted cost: each off and flight child times 7 × 20,000 counter events and spans \
         after its runs; the flight dump gives the records written (kept + overwritten) and \
         the share of spans, per thread name, so predicted = records per message × (flight's \
         ns per record − off's) / off's ns per message (best runs): for the busiest thread (what it \
         costs if that thread is the bottleneck) and for all threads summed (an upper \
         bound). In a handoff whose consumer keeps up, the consumer's records only use its \
         idle time, so the measured cost can lie below both."
            .into(),
        "Each timed child probed its own global allocator before the runs: a dhat profiler in \
         testing mode counts a test Box only when dhat::Alloc is the global allocator."
            .into(),
        "Every run checks count, per-producer order and checksum; a failed run is INVALID and \
         left out."
            .into(),
    ];
    let status = if invalid { "invalid" } else { "complete" };
    let results = XResults {
        experiment: o.experiment.clone(),
        status: status.into(),
        environment: env,
        config: json!({
            "messages": n,
            "runs_per_child": o.runs,
            "warmup_per_child": o.warmup,
            "modes": MODES,
            "workloads": workloads.iter().map(|w| json!({
                "label": w.label, "variant": w.variant, "wait": w.wait,
                "producers": w.producers, "decides": w.decides, "rounds": w.rounds,
                "ring_size": w.ring_size,
                "slots": slots(w),
            })).collect::<Vec<_>>(),
            "ring_size": RING_SIZE,
            "batch": BATCH,
            "sample_every": SAMPLE_EVERY,
            "flight_target_pct": FLIGHT_TARGET_PCT,
            "timed_allocator": names,
        }),
        rows,
        tables: vec![t, ct],
        targets,
        files,
        method,
        notes,
    };
    common::finish(&dir, default, &results, "")
}

/// Median of each field over children.
fn median_cost(cs: &[RecordCost]) -> Option<RecordCost> {
    let e: Vec<f64> = cs.iter().map(|c| c.event_ns).collect();
    let s: Vec<f64> = cs.iter().map(|c| c.span_ns).collect();
    Some(RecordCost { event_ns: median(&e)?, span_ns: median(&s)? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_ci_uses_order_statistics_with_their_coverage() {
        assert!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0]).is_none(), "5 rounds: no 95% interval");
        // n = 9: [x(2), x(8)], coverage 1 − 2 × 10/512.
        let xs: Vec<f64> = (1..=9).rev().map(f64::from).collect();
        let (lo, hi, cov) = median_ci(&xs).expect("interval");
        assert_eq!((lo, hi), (2.0, 8.0));
        assert!((cov - (1.0 - 20.0 / 512.0)).abs() < 1e-12, "{cov}");
        // n = 6: [x(1), x(6)], coverage 1 − 2/64.
        let (lo, hi, cov) = median_ci(&[6.0, 1.0, 5.0, 2.0, 4.0, 3.0]).expect("interval");
        assert_eq!((lo, hi), (1.0, 6.0));
        assert!((cov - (1.0 - 2.0 / 64.0)).abs() < 1e-12, "{cov}");
    }

    #[test]
    fn paired_costs_skip_rounds_without_both_medians() {
        let got = paired(&[Some(110.0), None, Some(99.0)], &[Some(100.0), Some(100.0), None]);
        assert_eq!(got.len(), 1);
        assert!((got[0] - 10.0).abs() < 1e-9);
    }

    #[test]
    fn the_baseline_is_the_mean_of_both_off_children_where_there_are_two() {
        let off = [Some(100.0), None, Some(90.0), None];
        let aa = [Some(110.0), Some(95.0), None, None];
        assert_eq!(baseline(&off, None), off.to_vec());
        assert_eq!(baseline(&off, Some(&aa)), vec![Some(105.0), Some(95.0), Some(90.0), None]);
    }
}
