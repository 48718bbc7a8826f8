//! `trace-overhead`'s rows as results.json holds them: each row's key and its typed
//! detail beside the envelope, which the analysis writes and `lab report` reads.

use super::{AllocatorProbe, RecordCost};
use serde::{Deserialize, Serialize};

/// A `trace-overhead` row's key: the dimensions that name its cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceKey {
    /// The workload's label.
    pub workload: String,
    /// The slot: `off`, `off-aa`, `flight`, `full`.
    pub mode: String,
    /// The variant the workload drives.
    pub variant: String,
    /// Its producers.
    pub producers: u64,
    /// The ring's wait strategy, where the variant takes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
}

/// A `trace-overhead` row's own fields in results.json (beside the row's envelope). A field
/// absent from a row (written before it existed) reads as its default.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TraceDetail {
    /// The workload's label.
    pub workload: String,
    /// Whether a flight target is decided on the workload.
    pub decides: bool,
    /// The cell's slot: `off`, `off-aa`, `flight`, `full`.
    pub mode: String,
    /// The recorder the cell ran under.
    pub recorder: String,
    /// Per planned round, the child's best run, ms (`None`: no valid fork that round).
    pub child_best_ms: Vec<Option<f64>>,
    /// Per planned round, the child's CPU time, ms.
    pub child_cpu_ms: Vec<Option<f64>>,
    /// Messages per second at the row's median score.
    pub msgs_per_s_median: Option<f64>,
    /// The paired ratio against off (off against itself: 1).
    pub throughput_vs_off: Option<f64>,
    /// The median over paired rounds of the run-time cost against off, %.
    pub cost_pct_median: Option<f64>,
    /// Per paired round, the cost against off, %.
    pub cost_pct_per_round: Vec<f64>,
    /// The cost's confidence interval, %.
    pub cost_ci_pct: Option<[f64; 2]>,
    /// Its coverage.
    pub cost_ci_coverage: Option<f64>,
    /// Per paired round, the CPU-time cost against off, %.
    pub cpu_cost_pct_per_round: Vec<f64>,
    /// What one record costs the calling thread under this recorder.
    pub record_cost: Option<RecordCost>,
    /// Records per message.
    pub records_per_msg: Option<f64>,
    /// The share of records that are spans.
    pub span_share: Option<f64>,
    /// The cost predicted from the record cost and the records per message, %.
    pub predicted_cost_pct: Option<f64>,
    /// The same prediction for the busiest thread, %.
    pub predicted_cost_pct_busiest_thread: Option<f64>,
    /// The thread that records the most.
    pub busiest_thread: Option<String>,
    /// Per thread: records per message and the cost they predict.
    pub records_by_thread: Vec<ThreadShare>,
    /// The size of each fork's trace file, bytes.
    pub trace_bytes: Vec<u64>,
    /// The allocator each fork reported.
    pub allocator: Vec<AllocatorProbe>,
    /// The trace files kept, relative to the run folder.
    pub trace_files: Vec<String>,
}

/// One thread's records in [`TraceDetail`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ThreadShare {
    /// The thread's name.
    pub name: String,
    /// Records per message.
    pub per_msg: f64,
    /// The cost they predict, %.
    pub predicted_cost_pct: Option<f64>,
}
