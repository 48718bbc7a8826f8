//! `handoff-latency`: how long one message waits, measured as LMAX, wrk2 and HdrHistogram
//! measure it, for every Rust handoff of the lab.
//!
//! Four workloads, each a group of rows:
//!
//! * **ping-pong**: two channels of one variant, one message in flight (LMAX's
//!   `PingPongSequencedLatencyTest`): round-trip percentiles, the design's floor. Beside
//!   them the **machine floor**: the same protocol through one atomic on the same two CPUs
//!   (the round trip `runner::speed` probes before every fork).
//! * **fixed rate** (open loop): P producers send on a schedule; each message's latency
//!   runs from when it was *due* to when the consumer took it, so a stall is charged to
//!   every message it delayed (no coordinated omission, as wrk2). p50 … p99.99 and max,
//!   messages sent late or never; a rate that was not sustained says so. For each message
//!   taken 10 µs or more after it was due, the consumer also asks the handoff how many
//!   messages are in the channel behind it (`depth`): the Why section's `queue-depth` rule
//!   reads from it which side held the tail. The consumer keeps each run's eight slowest
//!   messages (due, sent, taken); the row's `<row>.slowest.trace.json` draws their journeys
//!   as tracks and flows that open in Perfetto (`journeys`).
//! * **sweep**: the rate doubles each step until the variant no longer sustains it (every
//!   message sent, p99 under `--p99-bound-us`): the highest sustained rate, and the
//!   latency-against-rate curve with its knee.
//! * **pipeline**: LMAX's `ThrottledOneToThreePipelineLatencyTest`: a publisher at one
//!   event per µs and three stages in a chain, each stage a channel of the variant; the
//!   mean latency, ring against the locked queue beside LMAX's published 52 ns against
//!   32,757 ns.
//!
//! Each row's measured runs go into one HdrHistogram per fork (1 ns .. 100 s, 3
//! significant digits); the row's percentiles are of the forks' histograms merged, written
//! as `<row>.hgrm` and `<row>.hlog` (a V2 interval log, one interval per fork); its score
//! (p50 round trip, p99, highest sustained rate or mean; a fork's score is the median of
//! its runs') is paired across rounds as the throughput rows are. A fixed-rate fork makes
//! many short runs (`--rate-runs`): on two CPUs whatever else must run takes one from a
//! spinning thread, and a stall of a few milliseconds sets a run's p99 alone; the median of
//! the runs' p99s reads the design unless the machine stalled in most of them. The clock is measured in the same run; no figure is printed below
//! its resolution.

mod analyse;
mod cell;
mod charts;
mod clock;
mod depth;
mod detail;
mod hdr;
mod journeys;
mod jvm;
mod paired;
mod plan;
mod run;
mod tables;
#[cfg(test)]
mod tests;
mod why;

use crate::experiment::TraceMode;
use crate::experiment::{size, Defaults, Experiment, Finished, Measured, Outcome, Plan, Shared};
use crate::experiments::choices::{self, Choices};
use crate::protocol::Ctx;
use crate::results::Results;
use clap::{Args, ValueEnum};
use hdr::Tail;
use serde::{Deserialize, Serialize};

pub use cell::Plant;

/// A message sent this long after it was due is counted late, ns: past a timer tick's
/// worth of the producer's own noise, the send itself held it.
pub const LATE_NS: u64 = 10_000;

/// The experiment.
#[derive(Debug)]
pub struct HandoffLatency;

/// A workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// Round trips with one message in flight, beside the machine floor.
    PingPong,
    /// The offered rates of --rates, open loop.
    FixedRate,
    /// Rates doubling from --sweep-from until not sustained.
    Sweep,
    /// LMAX's one-to-three pipeline at --pipeline-rate.
    Pipeline,
}

/// Its options.
#[derive(Args, Debug, Clone, Serialize)]
pub struct HlArgs {
    /// Workloads, a comma list of the names below.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "ping-pong,fixed-rate,sweep,pipeline"
    )]
    pub workloads: Vec<Workload>,
    /// Variants: a comma list of the names below, `all` (every Rust handoff of this build)
    /// and `jvm` (the JVM originals jvm-lbq and jvm-disruptor, one JVM per fork: about
    /// two and a half minutes more at the defaults here): `all,jvm` runs every competitor.
    #[arg(long, default_value = "all", value_parser = Choices::new(plan::variant_list, plan::variant_values))]
    pub variants: String,
    /// The ring rows' wait strategies (one row each): a comma list of the names below, or
    /// `all`.
    #[arg(long, default_value = "all", value_parser = Choices::new(choices::wait_list, choices::waits_and_all))]
    pub wait: String,
    /// The jvm-disruptor rows' wait strategies (one row each): a comma list of the JVM's
    /// strategies below, or `matching` (the JVM strategy of each --wait: blocking and
    /// java-blocking → BlockingWaitStrategy). The default is seed 001's; each JVM row costs
    /// a JVM per fork.
    #[arg(long, default_value = "blocking", value_parser = Choices::new(plan::jvm_wait_list, plan::jvm_wait_values))]
    pub jvm_wait: String,
    /// Round trips per ping-pong run, a count.
    #[arg(long, value_parser = size, default_value = "5000")]
    pub round_trips: u64,
    /// Offered rates of the fixed-rate workload, in messages per second (all producers
    /// together): a comma list such as 100K,1M.
    #[arg(long, default_value = "1M")]
    pub rates: String,
    /// Producer threads of the fixed-rate and sweep workloads (one group each): `1,2` or
    /// `1..2`.
    #[arg(long, default_value = "1")]
    pub producers: String,
    /// Milliseconds of schedule per fixed-rate run.
    #[arg(long, value_parser = size, default_value = "20")]
    pub duration_ms: u64,
    /// Measured fixed-rate runs per fork, a count: the fork's score is the median of the
    /// runs' p99s, so a stall of the machine in one run does not decide it (the table's
    /// percentiles are of every run's messages). The other workloads take --runs.
    #[arg(long, value_parser = size, default_value = "9")]
    pub rate_runs: u64,
    /// Microseconds: the p99 a rate must stay under (with every message sent) to count as
    /// sustained.
    #[arg(long, value_parser = size, default_value = "100")]
    pub p99_bound_us: u64,
    /// One more fixed-rate run per fork, after the measured ones and never timed, with the
    /// kernel's scheduler tracepoints recorded: how often the consumer slept and how long
    /// each wake-up took to run it (`sched_waking` to the switch), for the Why section.
    /// Needs root or perf_event_paranoid ≤ -1; where recording is refused the rows say why.
    #[arg(long, value_enum, default_value = "on")]
    pub wakeups: crate::experiment::Switch,
    /// The sweep's first rate, in messages per second; it doubles each step.
    #[arg(long, value_parser = size, default_value = "50K")]
    pub sweep_from: u64,
    /// The sweep's most steps, a count (it stops after the first step not sustained).
    #[arg(long, value_parser = size, default_value = "8")]
    pub sweep_steps: u64,
    /// Milliseconds of schedule per sweep step.
    #[arg(long, value_parser = size, default_value = "40")]
    pub sweep_step_ms: u64,
    /// The pipeline's publishing rate, in messages per second (LMAX: 1M, one per µs).
    #[arg(long, value_parser = size, default_value = "1M")]
    pub pipeline_rate: u64,
    /// Milliseconds of schedule per pipeline run.
    #[arg(long, value_parser = size, default_value = "100")]
    pub pipeline_ms: u64,
    /// The pipeline's ring rows' wait strategies: a comma list of the names below, or
    /// `all` (its four threads share two CPUs here: a spinning stage starves the others).
    #[arg(long, default_value = "blocking,yielding", value_parser = Choices::new(choices::wait_list, choices::waits_and_all))]
    pub pipeline_wait: String,
    /// Ring size in slots, a power of two: the ring's and disruptor-rs's slots, the bound
    /// of the channel peers (the locked queue and the naive buffer are unbounded).
    #[arg(long, value_parser = size, default_value = "1024")]
    pub ring_size: u64,
}

/// What a cell runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "workload", rename_all = "kebab-case")]
pub enum Work {
    /// Round trips per run.
    PingPong {
        /// Round trips.
        trips: u64,
    },
    /// One offered rate.
    FixedRate {
        /// Messages per second, all producers.
        rate: f64,
        /// Producer threads.
        producers: usize,
        /// Schedule length, ms.
        duration_ms: u64,
    },
    /// A climb.
    Sweep {
        /// First rate, messages per second.
        from: f64,
        /// Most steps.
        steps: u32,
        /// Schedule per step, ms.
        step_ms: u64,
        /// Producer threads.
        producers: usize,
    },
    /// The one-to-three pipeline.
    Pipeline {
        /// Messages per second.
        rate: f64,
        /// Schedule length, ms.
        duration_ms: u64,
    },
}

/// What a child is told.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// The workload.
    pub work: Work,
    /// The variant (`None`: the machine floor).
    pub variant: Option<String>,
    /// The ring's wait strategy.
    pub wait: Option<String>,
    /// Ring size / channel bound.
    pub ring_size: usize,
    /// The bound of a sustained rate's p99, ns.
    pub p99_bound_ns: u64,
    /// Warm-up runs.
    pub warmup: usize,
    /// Measured runs.
    pub runs: usize,
    /// Test faults in the consumer (none from the command line).
    #[serde(default, skip_serializing_if = "Plant::is_none")]
    pub plant: Plant,
    /// A fixed-rate cell of a Rust handoff: one more run per fork with the kernel's
    /// scheduler recorded ([`run::wake_run`]).
    #[serde(default)]
    pub wakeups: bool,
}

/// A fixed-rate run's account.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RateFacts {
    /// Messages per second offered.
    pub offered: f64,
    /// Messages the schedule held.
    pub planned: u64,
    /// Messages sent.
    pub sent: u64,
    /// Messages sent 10 µs or more after they were due ([`LATE_NS`]).
    pub late: u64,
    /// Messages never sent.
    pub unsent: u64,
    /// Why the rate was not sustained (`None`: it was).
    pub not_sustained: Option<String>,
    /// The depth behind each message taken 10 µs or more after it was due, by latency
    /// (`depth::DEPTH_FROM_NS`); absent in results written before it.
    #[serde(default)]
    pub depths: depth::Depths,
    /// One run's slowest messages (`journeys::KEPT`), slowest first; in a row's summed
    /// account (`results[i].rate`) left empty: the row's trace file draws them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slowest: Vec<journeys::Journey>,
}

/// One step of a sweep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Messages per second offered.
    pub rate: f64,
    /// Its percentiles (from the due time), ns.
    pub tail: Tail,
    /// Messages sent late.
    pub late: u64,
    /// Messages never sent.
    pub unsent: u64,
    /// Why it was not sustained (`None`: it was).
    pub not_sustained: Option<String>,
}

/// One run, checked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunOut {
    /// A warm-up (not measured).
    pub warmup: bool,
    /// Whether every message arrived once, in per-producer order, intact.
    pub valid: bool,
    /// "ok" or what failed.
    pub verdict: String,
    /// The run's score in the cell's unit.
    pub score: f64,
    /// Its own percentiles, ns.
    pub tail: Tail,
    /// Fixed-rate and pipeline runs: the schedule's account.
    pub rate: Option<RateFacts>,
    /// Fixed-rate and pipeline runs: the percentiles from the actual send instead of the
    /// due time, ns: what a recording with coordinated omission would report.
    pub uncorrected: Option<Tail>,
}

/// What a child returns.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LatOutcome {
    /// Every run, warm-ups first.
    pub runs: Vec<RunOut>,
    /// The measured runs' histogram (from the due time), V2-deflate, base64.
    pub hist: Option<String>,
    /// The same from the actual send (fixed-rate and pipeline cells).
    pub uncorrected: Option<String>,
    /// A sweep cell's climbs, one per measured run.
    pub sweeps: Vec<Vec<Step>>,
    /// A JVM original's cell: the JVM and libraries that ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm: Option<jvm::JvmFacts>,
    /// A JVM original's cell: the JVM's collections and compiling during the measured runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm_runtime: Option<jvm::JvmRuntime>,
    /// The run recorded with the kernel's scheduler (cells with [`Cell::wakeups`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake: Option<run::WakeRun>,
}

impl Outcome for LatOutcome {
    fn measured(&self) -> Vec<Measured> {
        self.runs
            .iter()
            .filter(|r| !r.warmup)
            .map(|r| Measured { value: r.score, valid: r.valid, verdict: r.verdict.clone() })
            .collect()
    }

    fn warmups(&self) -> Vec<Measured> {
        self.runs
            .iter()
            .filter(|r| r.warmup)
            .map(|r| Measured { value: r.score, valid: r.valid, verdict: r.verdict.clone() })
            .collect()
    }
}

impl Experiment for HandoffLatency {
    const NAME: &'static str = "handoff-latency";
    const ABOUT: &'static str = "latency as LMAX measures it — ping-pong round trips \
        beside the machine's floor, a fixed offered rate counted from each message's due time \
        (no coordinated omission), a sweep to the highest sustained rate, LMAX's one-to-three \
        pipeline; HdrHistogram percentiles, .hgrm files and V2 logs";
    const DEFAULTS: Defaults =
        Defaults { rounds: 13, runs: 1, warmup: 1, trace: &[TraceMode::Off], heap: None };
    type Args = HlArgs;
    type Cell = Cell;
    type Outcome = LatOutcome;
    type Key = detail::HlKey;
    type Detail = detail::LatDetail;
    /// The ping-pong rows measure the cross-core round trip itself, so a round that ran in
    /// another phase of the machine is set apart and made up.
    const MAKE_UP_ROUNDS: bool = true;

    fn plan(a: &HlArgs, shared: &Shared) -> Result<Plan<Cell>, String> {
        plan::plan(a, shared)
    }

    /// A JVM original's cell runs in one JVM ([`jvm::run_cell`]), a Rust one here.
    fn run_cell(cell: &Cell, ctx: &mut Ctx) -> Result<LatOutcome, String> {
        if cell.variant.as_deref().is_some_and(crate::measure::variants::is_jvm) {
            return jvm::run_cell(cell, ctx);
        }
        run::run_cell(cell, ctx)
    }

    fn analyse(a: &HlArgs, run: &Finished<Self>, out: &mut Results) {
        analyse::analyse(a, run, out);
    }
}
