//! `disruptor-vs-lbq`'s rows as results.json holds them: the typed detail beside each row's
//! envelope, which the analysis writes and the tables, the Why rules and `lab report` read.

use crate::profile::counters::Values;
use crate::profile::sched::ThreadOffCpu;
use crate::results::{Ratio, Results, Row};
use crate::stats::percentiles::Percentiles;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A `disruptor-vs-lbq` row's key: the dimensions that name its cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DvlKey {
    /// The variant (`locked`, `ring`, a peer, `jvm-…`).
    pub variant: String,
    /// Producer threads.
    pub producers: u64,
    /// The ring's wait strategy, for the variants that take one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
    /// The timed allocator, when several ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocator: Option<String>,
    /// The JVM's collector, when several ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm_gc: Option<String>,
    /// An own loop's calibration kind (`own-loop`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<String>,
    /// A traced twin: the flight recorder in its timed forks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_run_trace: bool,
}

/// A row's typed key.
pub fn key(x: &Row) -> DvlKey {
    x.key_as()
}

/// The producers of a ratio's rows (a group is one P), from its row's key.
pub fn ratio_producers(r: &Results, q: &Ratio) -> Option<u64> {
    r.results.iter().find(|x| x.label == q.variant && x.group == q.group).map(|x| key(x).producers)
}

/// A `disruptor-vs-lbq` row's own fields in results.json (beside the row's envelope).
/// Results written before a field existed lack it: it reads as its default.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct HandoffDetail {
    /// The variant (`locked`, `ring`, a peer, `jvm-…`).
    pub variant: String,
    /// The ring's wait strategy (null for variants that take none).
    pub wait: Option<String>,
    /// Producer threads.
    pub producers: usize,
    /// Messages per run.
    pub messages: u64,
    /// Messages each producer sends.
    pub per_producer: Vec<u64>,
    /// Payload bytes per message.
    pub payload: usize,
    /// The allocator the cell asked for (null: the JVM's own).
    pub allocator: Option<String>,
    /// The allocators the children reported running on, comma-separated (null: none).
    pub allocator_in_child: Option<String>,
    /// Every measured run of every fork, ms.
    pub runs_ms: Vec<f64>,
    /// Every measured run with its verdict.
    pub runs: Vec<RunBrief>,
    /// The row's score (median over forks), ms.
    pub median_ms: Option<f64>,
    /// The fastest valid run, ms.
    pub min_ms: Option<f64>,
    /// The slowest valid run, ms.
    pub max_ms: Option<f64>,
    /// Messages per second at the row's score.
    pub qps: Option<f64>,
    /// Latency of sampled messages, per percentile the median over forks.
    pub latency_ns: Option<Percentiles>,
    /// CPU use (means over the valid measured runs).
    pub cpu: Option<Cpu>,
    /// Counters per message, whole process (perf events): per event the median over forks
    /// of each fork's median over its valid runs.
    pub counters: Option<Values>,
    /// The same per run thread, by its name.
    pub counters_by_thread: Option<BTreeMap<String, Values>>,
    /// Why counters are missing, when some are.
    pub counters_note: Option<String>,
    /// Page faults per message, the median over valid runs (null for JVM rows).
    pub page_faults_per_message: Option<f64>,
    /// The CPUs the run's threads were pinned to (null: placed by the kernel).
    pub pinned_cpus: Option<Vec<usize>>,
    /// What stamping one sampled message costs, ns.
    pub sample_cost_ns: Option<f64>,
    /// Estimated share of the run time spent sampling, %.
    pub sampling_overhead_est_pct: Option<f64>,
    /// The trace pass's Chrome trace, relative to the run folder.
    pub trace: Option<String>,
    /// Per thread, its off-CPU account over the trace run (sched_switch).
    pub off_cpu_by_thread: Option<BTreeMap<String, ThreadOffCpu>>,
    /// Why the off-CPU account is missing or incomplete (absent when nothing is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub off_cpu_note: Option<String>,
    /// The heap pass's dhat file, relative to the run folder.
    pub heap_file: Option<String>,
    /// The heap pass's figures.
    pub heap: Option<Heap>,
    /// A JVM row's own instruments (absent from Rust rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jvm: Option<JvmDetail>,
    /// A traced twin's kept flight-recorder dumps of its timed forks, the outliers (absent
    /// from other rows).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub in_run_traces: Vec<super::inrun::InRunTrace>,
}

/// One measured run, briefly.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunBrief {
    /// Its duration, ms.
    pub ms: f64,
    /// Whether its checks passed.
    pub valid: bool,
    /// `ok` or `INVALID: what failed`.
    pub verdict: String,
}

/// A JVM row's evidence from the JVM's instruments.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct JvmDetail {
    /// The JVM's own description (`vm_name`, `vm_version`, `version`, `flags`).
    pub jvm: Value,
    /// The Disruptor library's version.
    pub disruptor_version: Option<String>,
    /// A JVM group's queue library and version (`jctools-core …`, jvm-jctools), else none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// `single` or `multi`.
    pub producer_type: String,
    /// The JVM Disruptor's wait strategy (Bus's `--wait` name).
    pub wait: String,
    /// Its `WaitStrategy` class (`BlockingWaitStrategy`, `LiteBlockingWaitStrategy`, ...);
    /// absent for jvm-lbq.
    pub wait_strategy: Option<String>,
    /// The message form: `inline` (payload as long fields) or `byte-array`.
    pub message: String,
    /// The collector setting (`--jvm-gc`'s name: `g1`, `parallel`, ...).
    pub gc: String,
    /// JIT warm-up passes before the warm-up runs.
    pub jit_warmup_passes: u64,
    /// Bytes allocated per message (ThreadMXBean), the median over runs.
    pub allocated_bytes_per_message: Option<f64>,
    /// GC time per run, ms, the median over runs.
    pub gc_ms_per_run: Option<f64>,
    /// GCs per run, the median over runs.
    pub gc_count_per_run: Option<f64>,
    /// The trace pass's top allocation sites (JFR's `jdk.ObjectAllocationSample`, by sampled
    /// bytes; empty when no trace pass ran).
    pub allocation_sites: Vec<crate::profile::jfr::AllocationSite>,
}

/// CPU use of a cell (means over its valid measured runs).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
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
#[serde(default)]
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
#[serde(default)]
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
    /// Messages in the profiled run.
    pub messages: u64,
    /// Whether the profiled run passed its checks.
    pub valid: bool,
    /// Largest allocation sites.
    pub top_sites: Vec<crate::profile::dhat::Site>,
}
