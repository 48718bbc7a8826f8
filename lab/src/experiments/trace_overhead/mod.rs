//! `trace-overhead`: what tracing costs a timed run.
//!
//! The timed forks of `disruptor-vs-lbq` run with no recorder; its traces come from a
//! separate untimed child. This experiment is where the cost is measured, in timed forks of
//! each (workload, mode):
//! * `off`: exactly as a timed fork of `disruptor-vs-lbq` (no subscriber; the harness's
//!   publish/consume spans compiled out),
//! * `flight`: the flight recorder installed as in the trace child
//!   ([`crate::profile::trace::install_flight`]: per-batch records kept 1 in 16) and the
//!   harness's spans on; dumped once after the last run (not timed),
//! * `full`: every event streamed by tracing-chrome (`flight_recorder::install_full`).
//!
//! Workloads (16-byte messages, one consumer, a latency sample every 1024th message):
//! * the deciding ones, each with a flight target of its own and an `off` run twice per
//!   round (`off-aa`, the A/A control: off against off must cost 0 within the interval):
//!   * `locked P=2`: the seed's baseline queue, two producers and one consumer;
//!   * `ring[yielding] P=1`: the fastest handoff, where a record weighs most against a
//!     message. Its runs are bimodal on two cores (a consumer right behind its producer
//!     moves a cache line per message; one further behind takes large batches), so a traced
//!     loop that slows one side by a nanosecond a message can keep every run out of the fast
//!     mode and read as a large cost: this workload is where the harness's traced loops were
//!     found to cost, not the records (figures: docs/design-figures.md).
//! * a context one, `ring[blocking] P=2`: reported, not decided. A blocking handoff is
//!   perturbation-sensitive: slowing a thread a little makes the other side's batches
//!   larger and cuts wake-ups, so tracing can make it faster; what it measures is the change
//!   of dynamics, not the recorder's cost.
//!
//! Every (workload, mode) is a cell; the runner runs every cell once per round (the shared
//! `--rounds`, 200 by default: 100 left the interval's top above the target in most runs,
//! 200 decided it: figures: docs/design-figures.md), each as a fresh fork, the order
//! rotated round by round. By default the two deciding workloads run (8 cells, 1,600
//! forks); `--workloads locked-p2,ring-yielding-p1,ring-blocking-p2` adds the context one
//! (11 cells, 2,200 forks). A fork makes two warm-up runs and one measured run (this
//! experiment's `--warmup 2 --runs 1` defaults): the lab VM has phases of a second or two
//! in which the locked queue runs several times faster (figures: docs/design-figures.md),
//! so forks of several runs each straddled different phases, while single-run forks next to
//! each other in time share theirs. A mode's cost in a round is its fork's best run time
//! over the `off` fork's of the same round (`Fork::round`), − 1, or over the mean of both
//! `off` forks' where the workload runs the A/A one (half the baseline's variance, and a
//! narrower interval: figures: docs/design-figures.md; the A/A control itself still off
//! against off); the cost is the median over rounds, with a distribution-free confidence
//! interval of that median (order statistics, ≥ 95%, from 6 rounds on: fewer rounds are
//! refused). Each target (flight ≤ 3%, JFR states 1–2%) is met when the interval lies at or
//! below 3%, not met when above, else UNDECIDED: also when the A/A control's interval
//! misses 0, when a row of that workload did not pass its checks, and when the
//! whole interval lies below 0 (tracing made the workload faster: changed dynamics, not a
//! cost). The harness's consumer loop has one shape for traced and untraced runs (a traced
//! child with no recorder then cost nothing that showed against off), where a loop of its
//! own had made the traced path cost more (figures: docs/design-figures.md).
//!
//! Beside the measured cost stands a predicted one, independent of the workload's dynamics:
//! each fork times the record path in-process after its runs ([`record_cost`]: ns per
//! counter event and per span, with the mode's recorder installed or none), and the flight
//! dump says how many records the runs wrote, so predicted = records per message × ns per
//! record (less off's disabled call sites) / off's ns per message.
//!
//! Every timed fork also probes its global allocator ([`allocator_probe`]): a dhat testing
//! profiler counts the allocations it sees; only `dhat::Alloc` as the global allocator feeds
//! it, so 0 counted means the timed forks run on the system allocator (the lab binary
//! declares none; `dhat::Alloc` lives in `lab-heap` only).
//!
//! The pipeline's own passes do not apply: the recorders are what the timed forks measure,
//! so there is no separate trace pass (`--trace off` only) and no heap pass.

mod analysis;
mod child;
mod detail;

pub use child::{allocator_probe, record_cost, AllocatorProbe, RecordCost};

use crate::experiment::Finished;
use crate::experiment::{
    size, CellPlan, Defaults, Experiment, Measured, Outcome, Plan, Shared, TraceMode,
};
use crate::protocol::{Ctx, Pass};
use crate::results::Results;
use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The experiment.
#[derive(Debug)]
pub struct TraceOverhead;

/// The ceiling for the flight recorder's cost, percent of throughput (JFR's own target
/// is 1–2%, see the module docs).
pub const FLIGHT_TARGET_PCT: f64 = 3.0;
/// Fewest rounds the paired cost's interval needs (order statistics at ≥ 95%).
pub const MIN_ROUNDS: u64 = 6;
/// Ring size of the ring workloads (the locked queue is unbounded, as in the seed).
pub const RING_SIZE: usize = 64 * 1024;
/// Most messages the consumer takes per `recv_batch`.
pub const BATCH: usize = 1024;
/// A latency sample every this many messages of each producer.
pub const SAMPLE_EVERY: u64 = 1024;

/// A workload: which handoff, with how many producers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// The locked queue (the seed's baseline), two producers: decides the target.
    LockedP2,
    /// The ring with the yielding wait, one producer: decides the target (bimodal on two
    /// cores).
    RingYieldingP1,
    /// The ring with the blocking wait, two producers: context (perturbation-sensitive).
    RingBlockingP2,
}

impl Workload {
    /// Every workload, the deciding ones first.
    pub const ALL: [Workload; 3] =
        [Workload::LockedP2, Workload::RingYieldingP1, Workload::RingBlockingP2];

    /// (variant, wait, producers).
    pub fn shape(self) -> (&'static str, Option<&'static str>, usize) {
        match self {
            Workload::LockedP2 => ("locked", None, 2),
            Workload::RingYieldingP1 => ("ring", Some("yielding"), 1),
            Workload::RingBlockingP2 => ("ring", Some("blocking"), 2),
        }
    }

    /// The label of its rows' group: `locked P=2`, `ring[yielding] P=1`.
    pub fn label(self) -> String {
        let (v, w, p) = self.shape();
        match w {
            Some(w) => format!("{v}[{w}] P={p}"),
            None => format!("{v} P={p}"),
        }
    }

    /// Whether a flight target is decided on it (else it is context, reported only).
    pub fn decides(self) -> bool {
        matches!(self, Workload::LockedP2 | Workload::RingYieldingP1)
    }

    /// The workloads a flight target is decided on, in order.
    pub fn deciding() -> Vec<Workload> {
        Workload::ALL.into_iter().filter(|w| w.decides()).collect()
    }

    /// File names of its forks' traces start with this: `locked-p2`, `ring-yielding-p1`.
    pub fn stem(self) -> String {
        let (v, w, p) = self.shape();
        match w {
            Some(w) => format!("{v}-{w}-p{p}"),
            None => format!("{v}-p{p}"),
        }
    }
}

/// The recorder a fork runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Recorder {
    /// No subscriber, the harness's spans compiled out.
    Off,
    /// The flight recorder, dumped after the runs.
    Flight,
    /// tracing-chrome, every event streamed.
    Full,
}

impl Recorder {
    /// Its name in tables and file names.
    pub fn name(self) -> &'static str {
        match self {
            Recorder::Off => "off",
            Recorder::Flight => "flight",
            Recorder::Full => "full",
        }
    }
}

/// The label of a deciding workload's second `off` cell (its A/A control).
pub const AA: &str = "off-aa";

/// The cells of a workload, as (label, recorder): `off` first (the baseline of its
/// group's ratios), the A/A `off` where it decides, then the traced modes.
pub fn slots(w: Workload) -> Vec<(&'static str, Recorder)> {
    let mut s = vec![("off", Recorder::Off)];
    if w.decides() {
        s.push((AA, Recorder::Off));
    }
    s.extend([("flight", Recorder::Flight), ("full", Recorder::Full)]);
    s
}

/// Its options.
#[derive(Args, Debug, Clone, Serialize)]
pub struct TraceOverheadArgs {
    /// Messages per run, a count: a number or a size like 1Mi, 30000.
    #[arg(long, value_parser = size, default_value = "1Mi")]
    pub messages: u64,
    /// Workloads to time, a comma list of the names below: a target is decided on each of
    /// locked-p2 and ring-yielding-p1 (4 cells a round each); ring-blocking-p2 is context (3
    /// cells a round).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_values_t = Workload::deciding()
    )]
    pub workloads: Vec<Workload>,
}

/// What a fork is told.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// The workload.
    pub workload: Workload,
    /// The recorder installed around the runs.
    pub recorder: Recorder,
    /// Messages per run.
    pub messages: u64,
    /// Warm-up runs (recorded by the recorder too, not measured).
    pub warmup: usize,
    /// Measured runs.
    pub runs: usize,
}

/// One run of a fork.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    /// Barrier release to the consumer seeing the end, ms.
    pub ms: f64,
    /// Process CPU time over the run, ms (all threads; the full capture's writer included).
    pub cpu_ms: f64,
    /// Whether its checks passed (count, per-producer order, checksum).
    pub valid: bool,
    /// "ok" or what failed.
    pub verdict: String,
}

/// Records kept in a flight dump, of threads of one name (summed over the runs' threads).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThreadCount {
    /// Thread name (`consumer`, `producer-0`, `main`).
    pub name: String,
    /// Records (spans, instants, counters).
    pub records: u64,
    /// Of them, spans.
    pub spans: u64,
}

/// A flight fork's dump account.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Dump {
    /// Trace events written.
    pub events: u64,
    /// Records read from the rings into the dump.
    pub records: u64,
    /// Of `records`, the spans.
    pub span_records: u64,
    /// Records lost to overwriting (`records + overwritten` were written).
    pub overwritten: u64,
    /// Events not recorded.
    pub dropped: u64,
    /// Threads in the dump.
    pub threads: usize,
    /// Kept records by thread name.
    pub by_thread: Vec<ThreadCount>,
    /// The recorder's timestamp source.
    pub clock: String,
}

/// What a fork returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModeOutcome {
    /// The recorder it ran with.
    pub recorder: Recorder,
    /// Its global allocator, probed before any recorder.
    pub allocator: AllocatorProbe,
    /// Warm-up runs (checked, not measured).
    pub warmup: Vec<Run>,
    /// Measured runs.
    pub runs: Vec<Run>,
    /// The record path's cost, timed after the runs (off and flight).
    pub record_cost: Option<RecordCost>,
    /// The flight dump's account (flight).
    pub dump: Option<Dump>,
    /// Runs the recorder saw (warm-ups and measured).
    pub runs_recorded: usize,
    /// Where the fork left its trace file (flight and full): a temporary path, which the
    /// parent moves into the run folder (a timed fork is given no path in it).
    pub trace_file: Option<String>,
    /// Size of that file.
    pub trace_bytes: Option<u64>,
    /// The recorder's one-line account.
    pub trace_note: Option<String>,
}

impl Outcome for ModeOutcome {
    fn measured(&self) -> Vec<Measured> {
        self.runs
            .iter()
            .map(|r| Measured { value: r.ms, valid: r.valid, verdict: r.verdict.clone() })
            .collect()
    }

    fn warmups(&self) -> Vec<Measured> {
        self.warmup
            .iter()
            .map(|r| Measured { value: r.ms, valid: r.valid, verdict: r.verdict.clone() })
            .collect()
    }
}

impl Experiment for TraceOverhead {
    const NAME: &'static str = "trace-overhead";
    const ABOUT: &'static str = "what tracing costs a timed run: off, the flight recorder and \
        the full capture in paired rounds per workload, an A/A control, the record path's \
        cost and the predicted cost, the timed forks' allocator; target: flight ≤ 3%";
    const DEFAULTS: Defaults = Defaults {
        rounds: 200,
        runs: 1,
        warmup: 2,
        // The recorders are what the timed forks measure: no separate trace pass.
        trace: &[TraceMode::Off],
        heap: None,
    };
    type Args = TraceOverheadArgs;
    type Cell = Cell;
    type Outcome = ModeOutcome;
    type Key = detail::TraceKey;
    type Detail = detail::TraceDetail;

    fn plan(a: &TraceOverheadArgs, shared: &Shared) -> Result<Plan<Cell>, String> {
        crate::units::at_least_one(&[(a.messages, "--messages")])?;
        if shared.rounds < MIN_ROUNDS {
            return Err(format!(
                "--rounds must be at least {MIN_ROUNDS} for trace-overhead: the paired cost's \
                 95% interval needs {MIN_ROUNDS} rounds (got {})",
                shared.rounds
            ));
        }
        // In the documented order, each once.
        let mut workloads = a.workloads.clone();
        workloads.sort_by_key(|w| Workload::ALL.iter().position(|x| x == w));
        workloads.dedup();
        let mut cells = Vec::new();
        for &w in &workloads {
            let (variant, wait, producers) = w.shape();
            for (label, recorder) in slots(w) {
                let cell = Cell {
                    workload: w,
                    recorder,
                    messages: a.messages,
                    warmup: shared.warmup as usize,
                    runs: shared.runs as usize,
                };
                let key = detail::TraceKey {
                    workload: w.label(),
                    mode: label.to_string(),
                    variant: variant.to_string(),
                    producers: producers as u64,
                    wait: wait.map(|w| w.to_string()),
                };
                let mut c = CellPlan::new(cell, label, w.label()).keyed(&key);
                // The full capture's writer thread runs beside the producers and consumer.
                c.threads = producers + 1 + usize::from(recorder == Recorder::Full);
                c.heap = false;
                c.trace = false;
                c.file_stem = format!("{}-{label}", w.stem());
                cells.push(c);
            }
        }
        let mut notes = Vec::new();
        for w in Workload::deciding().into_iter().filter(|w| !workloads.contains(w)) {
            notes.push(format!(
                "The deciding workload {} was not run: its flight target stays UNDECIDED.",
                w.label()
            ));
        }
        let config = json!({
            "messages": a.messages,
            "workloads": workloads.iter().map(|&w| {
                let (variant, wait, producers) = w.shape();
                json!({
                    "label": w.label(), "variant": variant, "wait": wait,
                    "producers": producers, "decides": w.decides(),
                    "slots": slots(w).iter().map(|s| s.0).collect::<Vec<_>>(),
                })
            }).collect::<Vec<_>>(),
            "ring_size": RING_SIZE,
            "batch": BATCH,
            "sample_every": SAMPLE_EVERY,
            "flight_target_pct": FLIGHT_TARGET_PCT,
            "flight_batch_every": crate::profile::trace::FLIGHT_BATCH_EVERY,
        });
        Ok(Plan {
            cells,
            baseline: Some("off".into()),
            pairs: Vec::new(),
            config,
            input_size: a.messages,
            notes,
        })
    }

    fn run_cell(cell: &Cell, ctx: &mut Ctx) -> Result<ModeOutcome, String> {
        if ctx.pass != Pass::Timed {
            return Err("trace-overhead measures its recorders in timed forks; it has no heap \
                        or trace pass"
                .into());
        }
        child::run(cell, ctx)
    }

    fn analyse(a: &TraceOverheadArgs, run: &Finished<Self>, out: &mut Results) {
        analysis::analyse(a, run, out);
    }
}
