//! `handoff-latency`'s rows as results.json holds them: the typed detail beside each row's
//! envelope, which the analysis writes and the tables, charts, Why rules and `lab report`
//! read.

use super::hdr::Tail;
use super::{RateFacts, Step};
use crate::results::Row;
use serde::{Deserialize, Serialize};

/// A `handoff-latency` row's key: the dimensions that name its cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HlKey {
    /// `ping-pong`, `fixed-rate`, `sweep` or `pipeline`.
    pub workload: String,
    /// The variant (`floor` for the machine floor, `harness` for the fixed rate's plain
    /// loop).
    pub variant: String,
    /// Producers.
    pub producers: u64,
    /// The ring's wait strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
}

/// A `handoff-latency` row's own fields in results.json.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LatDetail {
    /// `ping-pong`, `fixed-rate`, `sweep` or `pipeline`.
    pub workload: String,
    /// The variant (`floor` for the machine floor, `harness` for the fixed rate's plain
    /// loop).
    pub variant: String,
    /// The ring's wait strategy.
    pub wait: Option<String>,
    /// Percentiles of the valid forks' measured runs, one merged histogram, ns (from the
    /// due time for fixed-rate and pipeline rows).
    pub tail: Option<Tail>,
    /// The same from the actual send: what coordinated omission would report.
    pub uncorrected: Option<Tail>,
    /// Fixed-rate and pipeline rows: the schedule's account summed over the measured runs
    /// of the valid forks (`not_sustained`: the first run's reason, if any run was not).
    pub rate: Option<RateFacts>,
    /// Measured runs that did not sustain the rate, of `runs`.
    pub runs_not_sustained: usize,
    /// Measured runs of the valid forks.
    pub runs: usize,
    /// Sweep rows: the climb of the fork whose highest sustained rate is the median.
    pub sweep: Vec<Step>,
    /// Sweep rows: each valid fork's highest sustained rate, messages per second.
    pub fork_highest: Vec<f64>,
    /// The row's percentile distribution file (`.hgrm`, µs), relative to the run folder.
    pub hgrm: Option<String>,
    /// The row's V2 interval log (one interval per fork), relative to the run folder.
    pub hlog: Option<String>,
    /// Every percentile against the row's baseline, paired by round (empty for a baseline
    /// and for a row without forks to pair).
    pub percentile_ratios: Vec<super::paired::PercentileRatio>,
    /// Fixed-rate and pipeline rows: the Chrome trace of each measured run's slowest
    /// messages (`journeys`), relative to the run folder.
    pub slowest_trace: Option<String>,
    /// A JVM original's row: the JVM and libraries that ran it (its first fork's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jvm: Option<super::jvm::JvmFacts>,
    /// A JVM original's row: the JVM's collections and compiling during the valid forks'
    /// measured runs, summed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jvm_runtime: Option<super::jvm::JvmRuntime>,
    /// A Rust fixed-rate row: its forks' runs recorded with the kernel's scheduler, merged
    /// (`run::WakeRun::merge`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wake: Option<super::run::WakeRun>,
}

/// A row's typed detail (the default for a row that has none).
pub fn detail(x: &Row) -> LatDetail {
    x.detail()
}
