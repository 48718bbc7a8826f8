//! The shape of `results.json` and how a cell's child output becomes a row of it.
//! Invalid runs are shown (and counted) but never enter the statistics.

use crate::dhatfile::Site;
use crate::envinfo::Environment;
use crate::harness::{CellOutput, Latency, RunResult};
use crate::stats::Summary;
use serde::{Deserialize, Serialize};

/// A cell's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Every run passed its checks.
    Ok,
    /// At least one run failed its checks; it is left out of the statistics.
    Invalid,
    /// The child did not finish within the watchdog's limit and was killed.
    Hung,
    /// The child died (signal or panic) without a result.
    Crashed,
    /// The child reported an error (e.g. the variant refused the settings).
    Error,
}

impl Status {
    /// The word the tables print.
    pub fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Invalid => "INVALID",
            Status::Hung => "HUNG",
            Status::Crashed => "CRASHED",
            Status::Error => "ERROR",
        }
    }
}

/// One run as results.json lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunBrief {
    /// Duration, ms.
    pub ms: f64,
    /// Whether its checks passed.
    pub valid: bool,
    /// "ok" or what failed ("INVALID: …").
    pub verdict: String,
}

/// CPU use of a cell (means over its valid measured runs).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Cpu {
    /// Process CPU time / wall time × 100 (200% = two cores).
    pub process_pct: f64,
    /// The same as a share of all online cores (the seed's "CPU use").
    pub machine_pct: f64,
    /// Per thread.
    pub threads: Vec<ThreadCpu>,
}

/// One thread's mean CPU time and context switches per run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ThreadCpu {
    /// `producer-i` or `consumer`.
    pub name: String,
    /// User + system, ms.
    pub cpu_ms: f64,
    /// System, ms.
    pub sys_ms: f64,
    /// Voluntary context switches.
    pub voluntary_cs: f64,
    /// Involuntary context switches.
    pub involuntary_cs: f64,
}

/// Heap profile of a cell (a separate, untimed child under dhat).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Heap {
    /// The dhat file, relative to the run folder.
    pub file: String,
    /// Allocations in the profiled run.
    pub total_blocks: u64,
    /// Bytes allocated in the profiled run.
    pub total_bytes: u64,
    /// Peak live bytes.
    pub max_bytes: u64,
    /// Allocations per message.
    pub blocks_per_message: f64,
    /// Bytes allocated per message.
    pub bytes_per_message: f64,
    /// Messages in the profiled run (may be fewer than the timed runs').
    pub messages: u64,
    /// Whether the profiled run passed its checks.
    pub valid: bool,
    /// Largest allocation sites.
    pub top_sites: Vec<Site>,
}

/// One (variant, producers) row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// Variant name.
    pub variant: String,
    /// Wait strategy (ring only).
    pub wait: Option<String>,
    /// Column label in the tables (`ring` or `ring[busy-spin]` when several waits ran).
    pub label: String,
    /// Producer threads.
    pub producers: usize,
    /// Messages per run.
    pub messages: u64,
    /// Messages per producer (the spread of `messages` over `producers`).
    pub per_producer: Vec<u64>,
    /// Payload bytes.
    pub payload: usize,
    /// Outcome.
    pub status: Status,
    /// True when every measured and warm-up run passed its checks.
    pub valid: bool,
    /// Every measured run's duration, valid or not (see `runs`).
    pub runs_ms: Vec<f64>,
    /// Every measured run with its verdict.
    pub runs: Vec<RunBrief>,
    /// Warm-up runs.
    pub warmup: Vec<RunBrief>,
    /// Median of the valid measured runs, ms.
    pub median_ms: Option<f64>,
    /// Fastest valid run, ms.
    pub min_ms: Option<f64>,
    /// Slowest valid run, ms.
    pub max_ms: Option<f64>,
    /// Mean of the valid runs, ms.
    pub mean_ms: Option<f64>,
    /// Sample standard deviation, ms.
    pub stddev_ms: Option<f64>,
    /// 99.9% confidence interval of the mean (Student t), ms.
    pub ci999_ms: Option<[f64; 2]>,
    /// Messages per second from the median.
    pub qps: Option<f64>,
    /// Latency of sampled messages over the valid runs.
    pub latency_ns: Option<Latency>,
    /// CPU use.
    pub cpu: Option<Cpu>,
    /// Estimated cost of sampling, % of the median run (sample cost / K / time per message).
    pub sampling_overhead_est_pct: Option<f64>,
    /// Trace file, relative to the run folder.
    pub trace: Option<String>,
    /// Heap profile.
    pub heap: Option<Heap>,
    /// What went wrong, for rows that are not ok.
    pub error: Option<String>,
    /// The last lines of the child's stderr, for rows that are not ok.
    pub stderr_tail: Option<String>,
}

/// The cost of latency sampling, measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Sampling {
    /// Every K-th message of each producer is stamped.
    pub sample_every: u64,
    /// One sample's cost (two clock reads, a histogram record), ns, median over cells.
    pub sample_cost_ns: Option<f64>,
    /// Largest per-row estimate, %.
    pub est_overhead_max_pct: Option<f64>,
    /// The A/B check: which cell, sampled and unsampled run times.
    pub ab: Option<SamplingAb>,
}

/// Sampled against unsampled runs of one cell, interleaved.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SamplingAb {
    /// Variant label.
    pub variant: String,
    /// Producers.
    pub producers: usize,
    /// Sampled runs, ms.
    pub sampled_ms: Vec<f64>,
    /// Unsampled runs, ms.
    pub unsampled_ms: Vec<f64>,
    /// (median sampled − median unsampled) / median unsampled × 100.
    pub overhead_pct: Option<f64>,
    /// The same from the fastest runs, less sensitive to other load on the machine.
    pub overhead_pct_min: Option<f64>,
}

/// The options the experiment ran with.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Config {
    /// Variants, in column order.
    pub variants: Vec<String>,
    /// Ring wait strategies.
    pub waits: Vec<String>,
    /// Producer counts.
    pub producers: Vec<usize>,
    /// Messages per run.
    pub messages: u64,
    /// Warm-up runs per cell.
    pub warmup: usize,
    /// Measured runs per cell.
    pub runs: usize,
    /// Ring size.
    pub ring_size: usize,
    /// Locked queue bound (None: unbounded).
    pub capacity: Option<usize>,
    /// Payload bytes.
    pub payload: usize,
    /// Latency sampling period.
    pub sample_every: u64,
    /// Consumer batch.
    pub batch: usize,
    /// `on` or `off`.
    pub heap: String,
    /// Messages in each heap run.
    pub heap_messages: u64,
    /// `off`, `flight` or `full`.
    pub trace: String,
    /// Messages in each trace run.
    pub trace_messages: u64,
    /// Watchdog limit per child, s.
    pub timeout_s: u64,
    /// How messages were spread when they do not divide evenly.
    pub spread_note: Option<String>,
}

/// The whole results.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    /// Experiment name.
    pub experiment: String,
    /// `complete` or `interrupted`.
    pub status: String,
    /// The environment record.
    pub environment: Environment,
    /// Options.
    pub config: Config,
    /// One row per (variant, wait, producers).
    pub results: Vec<Row>,
    /// Sampling cost.
    pub sampling: Sampling,
    /// Things the reader must know (left-out variants, unavailable tracing, …).
    pub notes: Vec<String>,
}

fn brief(r: &RunResult) -> RunBrief {
    RunBrief {
        ms: r.ms,
        valid: r.valid,
        verdict: if r.valid { "ok".into() } else { format!("INVALID: {}", r.verdict) },
    }
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

/// A row for a cell whose child never produced output.
pub fn failed_row(base: Row, status: Status, error: String, stderr_tail: String) -> Row {
    Row {
        status,
        valid: false,
        error: Some(error),
        stderr_tail: (!stderr_tail.is_empty()).then_some(stderr_tail),
        ..base
    }
}

/// An empty row with the cell's identity.
pub fn base_row(
    variant: &str,
    wait: Option<String>,
    label: &str,
    producers: usize,
    messages: u64,
    payload: usize,
) -> Row {
    Row {
        variant: variant.to_string(),
        wait,
        label: label.to_string(),
        producers,
        messages,
        per_producer: handoff::spread(messages, producers),
        payload,
        status: Status::Ok,
        valid: true,
        runs_ms: Vec::new(),
        runs: Vec::new(),
        warmup: Vec::new(),
        median_ms: None,
        min_ms: None,
        max_ms: None,
        mean_ms: None,
        stddev_ms: None,
        ci999_ms: None,
        qps: None,
        latency_ns: None,
        cpu: None,
        sampling_overhead_est_pct: None,
        trace: None,
        heap: None,
        error: None,
        stderr_tail: None,
    }
}

/// Fills a row from a timed child's output: statistics over valid runs only.
pub fn timed_row(base: Row, out: &CellOutput, cores: usize, sample_every: u64) -> Row {
    let valid_runs: Vec<&RunResult> = out.runs.iter().filter(|r| r.valid).collect();
    let all_valid = out.runs.iter().chain(&out.warmup).all(|r| r.valid) && !out.runs.is_empty();
    let ms: Vec<f64> = valid_runs.iter().map(|r| r.ms).collect();
    let summary = Summary::of(&ms);
    let cpu = (!valid_runs.is_empty()).then(|| {
        let names: Vec<String> = valid_runs[0].threads.iter().map(|t| t.name.clone()).collect();
        let threads = names
            .iter()
            .map(|name| {
                let of = |f: fn(&crate::harness::ThreadUsage) -> f64| {
                    mean(
                        valid_runs
                            .iter()
                            .flat_map(|r| r.threads.iter())
                            .filter(|t| &t.name == name)
                            .map(f),
                    )
                };
                ThreadCpu {
                    name: name.clone(),
                    cpu_ms: of(|t| t.cpu_ms),
                    sys_ms: of(|t| t.sys_ms),
                    voluntary_cs: of(|t| t.voluntary_cs as f64),
                    involuntary_cs: of(|t| t.involuntary_cs as f64),
                }
            })
            .collect();
        let process_pct = mean(valid_runs.iter().map(|r| r.process_pct));
        Cpu { process_pct, machine_pct: process_pct / cores.max(1) as f64, threads }
    });
    let messages = base.messages;
    let median = summary.as_ref().map(|s| s.median);
    let est = match (median, sample_every) {
        (Some(m), k) if k > 0 && m > 0.0 && out.sample_cost_ns > 0.0 => {
            let ns_per_msg = m * 1e6 / messages as f64;
            Some(out.sample_cost_ns / k as f64 / ns_per_msg * 100.0)
        }
        _ => None,
    };
    let invalid: Vec<String> = out
        .runs
        .iter()
        .chain(&out.warmup)
        .filter(|r| !r.valid)
        .map(|r| r.verdict.clone())
        .collect();
    Row {
        status: if all_valid { Status::Ok } else { Status::Invalid },
        valid: all_valid,
        per_producer: out.per_producer.clone(),
        runs_ms: out.runs.iter().map(|r| r.ms).collect(),
        runs: out.runs.iter().map(brief).collect(),
        warmup: out.warmup.iter().map(brief).collect(),
        median_ms: median,
        min_ms: summary.as_ref().map(|s| s.min),
        max_ms: summary.as_ref().map(|s| s.max),
        mean_ms: summary.as_ref().map(|s| s.mean),
        stddev_ms: summary.as_ref().map(|s| s.stddev),
        ci999_ms: summary.as_ref().and_then(|s| s.ci999()).map(|(a, b)| [a, b]),
        qps: median.filter(|m| *m > 0.0).map(|m| messages as f64 / (m / 1e3)),
        latency_ns: out.latency_ns.clone(),
        cpu,
        sampling_overhead_est_pct: est,
        error: (!invalid.is_empty()).then(|| {
            format!(
                "{} of {} runs INVALID: {}",
                invalid.len(),
                out.runs.len() + out.warmup.len(),
                invalid[0]
            )
        }),
        ..base
    }
}
