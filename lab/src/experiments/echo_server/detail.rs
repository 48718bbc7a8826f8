//! `echo-server`'s rows as results.json holds them: the typed detail beside each row's
//! envelope, which the analysis writes and the tables, the Why rules and `lab report` read.

use super::{Ab, Load, Server};
use crate::results::Row;
use serde::{Deserialize, Serialize};

/// An `echo-server` row's own fields in results.json (beside the row's envelope). Fields
/// of the median run are absent when no fork finished OK; results written before a field
/// existed lack it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct EchoDetail {
    /// Failed requests over every run of every fork, warm-ups included.
    pub failed_requests: u64,
    /// The round of the fork whose score is the row's median.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_round: Option<usize>,
    /// That fork's median run, as the load generator measured it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<Load>,
    /// The same run as ab prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ab_style: Option<String>,
    /// The real ab's report on that run, when ab ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ab: Option<Ab>,
    /// The server's own account of that fork.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<Server>,
    /// ab's requests/s: the median over forks of each fork's median.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ab_requests_per_second: Option<f64>,
    /// The heap pass's dhat file, relative to the run folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap_file: Option<String>,
    /// The heap pass's figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap: Option<EchoHeap>,
    /// The trace pass's file, relative to the run folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// CPU time of the server's own threads per request served, µs, over the median fork
    /// (warm-up, measured and ab runs; `server.server_cpu_ms` / `server.requests_served`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cpu_us_per_request: Option<f64>,
    /// A JVM server's account of the median fork: flags, collector, GC and perf counters per
    /// measured run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jvm: Option<super::jvm::JvmAccount>,
    /// A JVM server's GC time over its measured runs' time, %, in the median fork.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc_pct_of_run: Option<f64>,
}

/// The heap pass of an echo-server row (dhat, one untimed run without ab).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct EchoHeap {
    /// Allocations in the profiled run.
    pub total_blocks: u64,
    /// Bytes allocated in it.
    pub total_bytes: u64,
    /// Peak live bytes.
    pub max_bytes: u64,
    /// Peak live allocations.
    pub max_blocks: u64,
    /// Allocations per request.
    pub blocks_per_request: f64,
    /// Requests in the profiled run.
    pub requests: u64,
    /// `ok`, or the run's failed check.
    pub check: String,
}

/// A row's typed detail (the default for a row that has none).
pub fn detail(x: &Row) -> EchoDetail {
    x.detail()
}
