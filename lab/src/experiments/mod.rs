//! Seed 000's and seed 004's experiments (issue 6), beside `disruptor-vs-lbq`.
//!
//! Each experiment plans a list of *workloads*, runs each in its own child process
//! (`lab __xcell <json>`, one JSON line back, under a watchdog), summarises the children's
//! raw figures in the parent with [`crate::stats`], and writes `results.json` (with the
//! [`crate::envinfo::Environment`] record), `report.md` and `report.html` (tables rendered
//! by [`crate::report`]) into `traces/<name>/<YYYYmmdd-HHMMSS>/`, updating the `latest` link.
//! Trace children install the flight recorder ([`crate::tracehook::RecorderHook`]); heap
//! children run in the `lab-heap` binary (dhat), never in a timed child.
//!
//! A workload whose own check fails (a wrong sum, a lost element) is INVALID: it is shown
//! as such and never enters a statistic; the run then exits 1.

mod alloc;
mod backpressure;
pub(crate) mod common;
mod echo_server;
mod heap_growth;
mod latency;
mod subscribe;
pub mod trace_overhead;

pub use backpressure::{seed_case, Outcome};
pub use common::{XResults, XTable, XTarget};

use clap::Parser;
use std::path::PathBuf;

/// The experiments of this module: (name, one-line description).
pub const EXPERIMENTS: &[(&str, &str)] = &[
    (
        "subscribe-overhead",
        "seed 000: Flux.range(1M) summed, Mono.just and the hand-written publisher \
         subscribed 1M times: ns/op and ops/s (elements vs subscriptions)",
    ),
    (
        "publish-on-latency",
        "seed 000: range→map(stamp)→publish_on→subscriber latency, bulk and one-by-one \
         demand, HDR percentiles; locked/ring/naive handoffs side by side",
    ),
    (
        "backpressure-buffer",
        "seed 000: on_backpressure_buffer overflows per capacity × producer rate behind \
         an async boundary; the seed's two cases; overflow instants in a trace",
    ),
    (
        "heap-growth",
        "seed 000: a producer faster than a slow consumer: which buffers grow (dhat peak \
         live bytes, depth over time) and which stay flat",
    ),
    (
        "alloc-pooled-vs-unpooled",
        "seed 004: allocate + free 0..64Ki bytes, buffer_pool::Pool vs the global \
         allocator, ops/ms with JMH-style mean ± 99.9% CI",
    ),
    (
        "trace-overhead",
        "issue 8: what tracing costs a timed run: off, flight and full in paired rounds, \
         decided on ring[yielding] P=1 (ring[blocking] and locked P=2 as context), the \
         record path's ns per event; the timed children's allocator",
    ),
    (
        "echo-server",
        "seed 003 / issue 7: ab -n 10000 -c 25 against the echo server per handoff \
         variant (inline, locked, ring, reactive, naive) and nginx, side by side",
    ),
];

/// True when `name` is one of this module's experiments.
pub fn is_experiment(name: &str) -> bool {
    EXPERIMENTS.iter().any(|(n, _)| *n == name)
}

/// Options shared by these experiments (`lab run <name> [options]`).
#[derive(Parser, Debug, Clone)]
#[command(name = "lab run", about = "Runs one of seed 000/004's experiments")]
pub struct XArgs {
    /// The experiment.
    pub experiment: String,
    /// Elements (or operations) per run: a number or a size like 1M, 100k, 64Ki
    /// [default: per experiment].
    #[arg(long)]
    pub elements: Option<String>,
    /// Measured runs (iterations) per workload [default: 5; trace-overhead: 1 per child].
    #[arg(long)]
    pub runs: Option<String>,
    /// Warm-up runs (iterations) per workload [default: 3; trace-overhead: 2 per child].
    #[arg(long)]
    pub warmup: Option<String>,
    /// Rounds of trace-overhead's deciding workload [default: 200]; trace-overhead only.
    #[arg(long)]
    pub rounds: Option<String>,
    /// Output folder [default: traces/<experiment>/<timestamp>/ in the workspace].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Trace pass (backpressure-buffer, heap-growth): flight|off.
    #[arg(long, default_value = "flight")]
    pub trace: String,
    /// Heap pass with dhat (heap-growth): on|off.
    #[arg(long, default_value = "on")]
    pub heap: String,
    /// Watchdog limit per child process, seconds [default: 120].
    #[arg(long, default_value = "120")]
    pub timeout: String,
}

/// `lab run <one of EXPERIMENTS> …`: `args` are the whole command line (`lab run name …`).
/// Returns the exit code, or a usage error (one line; the caller prints it, exit 2).
pub fn run(args: &[String]) -> Result<i32, String> {
    if args.get(2).map(String::as_str) == Some("echo-server") {
        return echo_server::run(args);
    }
    let rest: Vec<String> =
        std::iter::once("lab run".to_string()).chain(args.iter().skip(2).cloned()).collect();
    let a = match XArgs::try_parse_from(&rest) {
        Ok(a) => a,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return Ok(0);
            }
            let text = e.to_string();
            let line = text.lines().next().unwrap_or("invalid arguments");
            return Err(line.trim_start_matches("error: ").to_string());
        }
    };
    let opts = common::Opts::from_args(&a)?;
    match a.experiment.as_str() {
        "subscribe-overhead" => subscribe::run(&opts),
        "publish-on-latency" => latency::run(&opts),
        "backpressure-buffer" => backpressure::run(&opts),
        "heap-growth" => heap_growth::run(&opts),
        "alloc-pooled-vs-unpooled" => alloc::run(&opts),
        "trace-overhead" => trace_overhead::run(&opts),
        other => Err(common::unknown(other)),
    }
}

/// The hidden `__xcell <json>` child: runs one workload, prints one JSON line
/// (`{"ok":true,"output":…}` or `{"ok":false,"error":…}`); returns the exit code.
pub fn cell_main(spec_json: &str) -> i32 {
    let out = match serde_json::from_str::<common::XSpec>(spec_json) {
        Err(e) => Err(format!("bad cell spec: {e}")),
        Ok(spec) => match spec.experiment.as_str() {
            "subscribe-overhead" => subscribe::cell(&spec),
            "publish-on-latency" => latency::cell(&spec),
            "backpressure-buffer" => backpressure::cell(&spec),
            "heap-growth" => heap_growth::cell(&spec),
            "alloc-pooled-vs-unpooled" => alloc::cell(&spec),
            "trace-overhead" => trace_overhead::cell(&spec),
            "echo-server" => echo_server::cell(&spec),
            other => Err(common::unknown(other)),
        },
    };
    common::print_child(out)
}

/// True when `json` is a cell spec of one of these experiments (for the `lab-heap` binary).
pub fn is_spec(json: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| v["experiment"].as_str().map(is_experiment))
        .unwrap_or(false)
}

/// The heap child, called by the `lab-heap` binary (global allocator `dhat::Alloc`) for a
/// spec whose experiment is one of these: runs it and prints one JSON line.
pub fn heap_cell_main(spec_json: &str) -> i32 {
    let out = match serde_json::from_str::<common::XSpec>(spec_json) {
        Err(e) => Err(format!("bad cell spec: {e}")),
        Ok(spec) if spec.experiment == "heap-growth" => heap_growth::heap_cell(&spec),
        Ok(spec) if spec.experiment == "echo-server" => echo_server::heap_cell(&spec),
        Ok(spec) => Err(format!("no heap cell for experiment '{}'", spec.experiment)),
    };
    common::print_child(out)
}
