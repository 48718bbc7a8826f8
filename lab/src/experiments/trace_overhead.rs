//! Experiment `trace-overhead`: what tracing costs a timed run.
//!
//! The timed runs of `disruptor-vs-lbq` run with no recorder; its traces come from a separate
//! untimed child. This experiment is where the cost is measured: the same workload (the ring
//! with its Blocking wait and the locked queue, P = 2 producers, one consumer, 16-byte
//! messages, a latency sample every 1024th message) runs in timed children
//! * `off`: exactly as a timed child of `disruptor-vs-lbq` (no subscriber; the harness's
//!   publish/consume spans compiled out),
//! * `flight`: the flight recorder installed (`flight_recorder::install_flight`) and the
//!   harness's spans on, as in the trace child; dumped once after the last run (not timed),
//! * `full`: every event streamed by tracing-chrome (`flight_recorder::install_full`).
//!
//! Each (workload, mode) runs in [`ROUNDS`] child processes, interleaved round by round with
//! the mode order rotated, so slow phases of a shared machine fall on every mode. The cost is
//! the median run time against `off`'s (throughput ratio = off / mode), beside the best runs'
//! and the process CPU time's. The target is the issue's: flight at most 3% (Java Flight
//! Recorder states 1–2%), decided only when the cost lies further from 3% than off's own
//! runs spread (interquartile range), else reported UNDECIDED; full's cost is reported as it
//! is.
//!
//! Every timed child also probes its global allocator ([`allocator_probe`]): a dhat testing
//! profiler counts the allocations it sees; only `dhat::Alloc` as the global allocator feeds
//! it, so 0 counted means the timed children run on the system allocator (the lab binary
//! declares none; `dhat::Alloc` lives in `lab-heap` only).

use super::common::{self, f64s, Opts, XResults, XSpec, XTable, XTarget};
use crate::harness::{self, CellSpec, Mode, TraceHook as _};
use crate::stats::Summary;
use crate::tracehook::RecorderHook;
use crate::variants::{self, Settings, WithHandoff};
use handoff::Handoff;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Messages per run when `--elements` is not given.
pub const DEFAULT_MESSAGES: u64 = 2 << 20;
/// Child processes per (workload, mode), interleaved.
pub const ROUNDS: usize = 3;
/// Producer threads.
pub const PRODUCERS: usize = 2;
/// The ceiling for the flight recorder's cost, percent of throughput.
pub const FLIGHT_TARGET_PCT: f64 = 3.0;
/// The modes, `off` first (the baseline).
pub const MODES: [&str; 3] = ["off", "flight", "full"];

const RING_SIZE: usize = 64 * 1024;
const BATCH: usize = 1024;
const SAMPLE_EVERY: u64 = 1024;

/// (variant, wait, label) of each workload.
const WORKLOADS: [(&str, Option<&str>, &str); 2] =
    [("ring", Some("blocking"), "ring[blocking]"), ("locked", None, "locked")];

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

/// The timed child of one (workload, mode): warm-up and measured runs with the mode's
/// recorder installed; run times, checks, the allocator probe and the recorder's account.
pub(super) fn cell(spec: &XSpec) -> Result<Value, String> {
    let mode = spec.param_str("mode")?.to_string();
    if !MODES.contains(&mode.as_str()) {
        return Err(format!("mode '{mode}'; valid: {}", MODES.join(", ")));
    }
    let variant = spec.param_str("variant")?.to_string();
    let wait = spec.params["wait"].as_str().map(str::to_string);
    let producers = spec.param_u64("producers")? as usize;
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
        ring_size: RING_SIZE,
        capacity: None,
        prefetch: 256,
        payload: 16,
        sample_every: SAMPLE_EVERY,
        batch: BATCH,
        sampling_ab_pairs: 0,
        mode: Mode::Timed,
    };
    let settings = Settings { variant, wait, ring_size: RING_SIZE, capacity: None, prefetch: 256 };
    let traced = mode != "off";
    let mut hook = RecorderHook::default();
    if traced {
        let file = spec.trace_file.as_deref().ok_or("a traced mode needs a trace file")?;
        hook.install(&mode, file)?;
    }
    let (warm, runs) = variants::dispatch(&settings, Job { spec: &cs, traced })??;
    let trace_note = if traced { Some(hook.finish()?) } else { None };
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
    }))
}

/// Per (workload, mode): what the children returned.
#[derive(Default)]
struct Gathered {
    runs_ms: Vec<f64>,
    /// Process CPU time of each valid run (all threads; the full capture's writer included).
    cpu_ms: Vec<f64>,
    /// Median of each child's runs, by round.
    child_medians: Vec<f64>,
    allocators: Vec<AllocatorProbe>,
    errors: Vec<String>,
    trace_bytes: Vec<u64>,
    trace_notes: Vec<String>,
}

/// Interquartile range over median, percent (quartiles by linear interpolation).
fn iqr_pct(xs: &[f64]) -> Option<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let at = p * (v.len() - 1) as f64;
        let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
    };
    (v.len() >= 2 && q(0.5) > 0.0).then(|| (q(0.75) - q(0.25)) / q(0.5) * 100.0)
}

fn pct(mode_ms: f64, off_ms: f64) -> f64 {
    (mode_ms / off_ms - 1.0) * 100.0
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

/// The parent: runs the children round by round, then tables, targets and files.
pub(super) fn run(o: &Opts) -> Result<i32, String> {
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
    let mut got: Vec<Vec<Gathered>> =
        WORKLOADS.iter().map(|_| MODES.iter().map(|_| Gathered::default()).collect()).collect();
    let mut files = Vec::new();
    let total = ROUNDS * WORKLOADS.len() * MODES.len();
    let mut done = 0;
    for round in 0..ROUNDS {
        for (wi, (variant, wait, label)) in WORKLOADS.iter().enumerate() {
            for k in 0..MODES.len() {
                let mi = (k + round) % MODES.len();
                let mode = MODES[mi];
                let stem = format!("{}-p{PRODUCERS}", label.replace('[', "-").replace(']', ""));
                let file = format!("{stem}-{mode}-r{round}.trace.json");
                let path = dir.join(&file);
                let spec = XSpec {
                    experiment: o.experiment.clone(),
                    workload: format!("{label} {mode}"),
                    elements: n,
                    warmup: o.warmup,
                    runs: o.runs,
                    params: json!({
                        "mode": mode, "variant": variant, "wait": wait, "producers": PRODUCERS,
                    }),
                    trace_file: (mode != "off").then(|| path.display().to_string()),
                    heap_file: None,
                };
                let g = &mut got[wi][mi];
                done += 1;
                let what = format!("{label} P={PRODUCERS} {mode} (round {})", round + 1);
                match common::run_child(&exe, "__xcell", &spec, o.timeout) {
                    Ok(v) => {
                        let runs = f64s(&v["runs_ms"]);
                        let invalid: Vec<String> = v["invalid"]
                            .as_array()
                            .map(|a| {
                                a.iter().filter_map(|x| x.as_str().map(String::from)).collect()
                            })
                            .unwrap_or_default();
                        g.errors.extend(invalid.iter().map(|e| format!("INVALID run: {e}")));
                        if let Ok(a) = serde_json::from_value(v["allocator"].clone()) {
                            g.allocators.push(a);
                        }
                        if let Some(s) = Summary::of(&runs) {
                            g.child_medians.push(s.median);
                            common::progress(
                                done,
                                total,
                                &what,
                                &format!("median {:.1} ms", s.median),
                            );
                        } else {
                            common::progress(done, total, &what, "no valid run");
                        }
                        g.runs_ms.extend(runs);
                        g.cpu_ms.extend(f64s(&v["cpu_ms"]));
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
                            g.trace_notes.push(format!("{file}: {t}"));
                        }
                    }
                    Err(e) => {
                        common::progress(done, total, &what, &e);
                        g.errors.push(e);
                    }
                }
            }
        }
    }

    let mut t = XTable::new(
        &format!(
            "Tracing cost: P = {PRODUCERS}, {n} messages per run, median of {} runs ({} \
             child processes × {} runs per mode, after {} warm-ups each)",
            ROUNDS * o.runs,
            ROUNDS,
            o.runs,
            o.warmup
        ),
        &[
            "workload",
            "trace",
            "median ms [min, max]",
            "M msg/s",
            "throughput vs off",
            "cost (median)",
            "cost (best runs)",
            "CPU ms/run",
            "CPU cost",
            "trace file",
            "global allocator",
        ],
    );
    t.note = Some(
        "cost = mode's run time / off's − 1 (median, and min against min); throughput vs off = \
         off's median / the mode's. CPU: process CPU time per run (all threads, the full \
         capture's writer thread included), median, against off's: less sensitive than wall \
         time to other processes taking the cores."
            .into(),
    );
    let mut rows = Vec::new();
    let mut targets = Vec::new();
    let mut invalid = false;
    let mut allocators: Vec<AllocatorProbe> = Vec::new();
    for (wi, (_, _, label)) in WORKLOADS.iter().enumerate() {
        let off = Summary::of(&got[wi][0].runs_ms);
        let off_cpu = Summary::of(&got[wi][0].cpu_ms);
        for (mi, mode) in MODES.iter().enumerate() {
            let g = &got[wi][mi];
            allocators.extend(g.allocators.iter().cloned());
            let s = Summary::of(&g.runs_ms);
            if !g.errors.is_empty() {
                invalid = true;
            }
            let alloc = {
                let mut names: Vec<&str> = g.allocators.iter().map(|a| a.name.as_str()).collect();
                names.dedup();
                if names.is_empty() {
                    "-".to_string()
                } else {
                    names.join(", ")
                }
            };
            let cost = match (&s, &off) {
                (Some(s), Some(off)) if *mode != "off" => Some(pct(s.median, off.median)),
                _ => None,
            };
            let cost_min = match (&s, &off) {
                (Some(s), Some(off)) if *mode != "off" => Some(pct(s.min, off.min)),
                _ => None,
            };
            let per_round: Vec<f64> = if *mode == "off" {
                Vec::new()
            } else {
                g.child_medians
                    .iter()
                    .zip(&got[wi][0].child_medians)
                    .map(|(m, o)| pct(*m, *o))
                    .collect()
            };
            let cpu = Summary::of(&g.cpu_ms);
            let cpu_cost = match (&cpu, &off_cpu) {
                (Some(c), Some(o)) if *mode != "off" => Some(pct(c.median, o.median)),
                _ => None,
            };
            let size = g.trace_bytes.iter().max().map(|b| fmt_bytes(*b));
            let bad = (!g.errors.is_empty()).then(|| format!(" INVALID: {}", g.errors.join("; ")));
            let cell = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map(f).unwrap_or("-".into());
            t.rows.push(vec![
                label.to_string(),
                mode.to_string(),
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
                match (&s, &off) {
                    (Some(s), Some(off)) => format!("{:.3}×", off.median / s.median),
                    _ => "-".into(),
                },
                cell(cost, &|c| format!("{c:+.1}%")),
                cell(cost_min, &|c| format!("{c:+.1}%")),
                cell(cpu.as_ref().map(|c| c.median), &|c| format!("{c:.1}")),
                cell(cpu_cost, &|c| format!("{c:+.1}%")),
                size.unwrap_or_else(|| "-".into()),
                alloc,
            ]);
            if *mode == "flight" {
                let spread = iqr_pct(&got[wi][0].runs_ms);
                targets.push(XTarget {
                    what: format!("flight recorder's cost, {label} P={PRODUCERS}"),
                    target: format!("≤ {FLIGHT_TARGET_PCT}% of throughput (JFR states 1–2%)"),
                    measured: match (cost, cost_min, spread) {
                        (Some(c), Some(m), Some(sp)) => format!(
                            "{c:+.1}% (best runs {m:+.1}%, CPU time {}; off's own runs: \
                             IQR {sp:.1}% of median)",
                            cpu_cost.map_or("-".into(), |x| format!("{x:+.1}%"))
                        ),
                        _ => "no valid runs".into(),
                    },
                    // Decided only when the cost is further from the target than off's own
                    // interquartile range; otherwise this machine's noise could flip it.
                    met: match (cost, spread) {
                        (Some(c), Some(sp)) if g.errors.is_empty() => {
                            ((c - FLIGHT_TARGET_PCT).abs() > sp).then_some(c <= FLIGHT_TARGET_PCT)
                        }
                        _ => None,
                    },
                });
                if let (Some(c), Some(sp)) = (cost, spread) {
                    if (c - FLIGHT_TARGET_PCT).abs() <= sp {
                        notes.push(format!(
                            "{label}: UNDECIDED: the flight figure ({c:+.1}%) is within \
                             {sp:.1}% of the {FLIGHT_TARGET_PCT}% target, and {sp:.1}% is how \
                             much the off runs alone spread (interquartile range over median) \
                             on this machine now; rerun on a quiet machine or with more runs."
                        ));
                    } else if sp > FLIGHT_TARGET_PCT {
                        notes.push(format!(
                            "{label}: the off runs alone spread {sp:.1}% (interquartile range \
                             over median), more than the {FLIGHT_TARGET_PCT}% target itself; \
                             the flight figure ({c:+.1}%) is decided only because it lies \
                             further from the target than that."
                        ));
                    }
                }
            }
            rows.push(json!({
                "workload": label,
                "producers": PRODUCERS,
                "mode": mode,
                "runs_ms": g.runs_ms,
                "child_medians_ms": g.child_medians,
                "summary": s,
                "msgs_per_s_median": s.as_ref().map(|s| n as f64 / s.median * 1e3),
                "throughput_vs_off": match (&s, &off) {
                    (Some(s), Some(off)) => Some(off.median / s.median),
                    _ => None,
                },
                "cost_pct_median": cost,
                "cost_pct_min": cost_min,
                "cost_pct_per_round": per_round,
                "cpu_ms": g.cpu_ms,
                "cpu_cost_pct_median": cpu_cost,
                "trace_bytes": g.trace_bytes,
                "allocator": g.allocators,
                "errors": g.errors,
            }));
            notes.extend(g.trace_notes.iter().cloned());
        }
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
            "Workloads: the ring (Blocking wait) and the locked queue, {PRODUCERS} producers, \
             one consumer, 16-byte messages, consumer batches of up to {BATCH}, a latency \
             sample every {SAMPLE_EVERY}th message of each producer, ring size {RING_SIZE}."
        ),
        "off: a timed child exactly as in disruptor-vs-lbq (no subscriber; the harness's \
         publish/consume spans compiled out). flight: the flight recorder installed before the \
         runs and the harness's spans on, dumped once after the last run (the dump is not \
         timed). full: tracing-chrome streams every event to a file; its writer thread runs \
         during the runs, the final flush and repair are not timed."
            .into(),
        format!(
            "Each (workload, mode) ran in {ROUNDS} child processes; rounds interleave the modes \
             with their order rotated, so a slow phase of the machine falls on every mode."
        ),
        format!(
            "The flight target (≤ {FLIGHT_TARGET_PCT}%) is decided only when the median cost \
             lies further from it than the off runs' interquartile range over their median; \
             otherwise it is UNDECIDED (the machine's noise could flip it)."
        ),
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
            "producers": PRODUCERS,
            "runs_per_child": o.runs,
            "warmup_per_child": o.warmup,
            "rounds": ROUNDS,
            "modes": MODES,
            "workloads": WORKLOADS.iter().map(|w| w.2).collect::<Vec<_>>(),
            "ring_size": RING_SIZE,
            "batch": BATCH,
            "sample_every": SAMPLE_EVERY,
            "flight_target_pct": FLIGHT_TARGET_PCT,
            "timed_allocator": names,
        }),
        rows,
        tables: vec![t],
        targets,
        files,
        method,
        notes,
    };
    common::finish(&dir, default, &results, "")
}
