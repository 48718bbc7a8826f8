//! RxJava 3 on the JVM: seed 000's workloads run by `tools/jvm/rx/RxBench.java`, the JVM
//! counterparts of the reactive crate's rows (`rx-…`).
//!
//! Seed 000 measured Reactor 3.8 on a JDK 25; Reactor has no Debian package and no Maven
//! registry is reachable here, so the installable Reactive Streams library nearest to it
//! stands in: RxJava 3 (`Flowable` for `Flux`, `Single` for `Mono`, `observeOn(scheduler,
//! false, 256)` for `publishOn(scheduler, 256)`: both a bounded prefetch queue drained on
//! the scheduler's thread, replenished at 75%). RxBench runs one named workload per
//! process with warm-up and measured runs, checks each run's result against its closed
//! form and reports GC collections and time and bytes allocated per run; the lab starts
//! it through [`super::jvm::run_program_probed`] (heartbeats, perf counters per run from its
//! run marks; in a trace pass Java Flight Recorder, whose recording becomes the pass's
//! Chrome trace) with the collector of `--jvm-gc`.

use super::jvm;
use crate::profile::counters::RunCounters;
use crate::protocol::Ctx;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::process::Command;

/// The JVM module of tools/jvm that holds RxBench.
pub const GROUP: &str = "rx";

/// The command that installs what RxBench's build needs (RxJava itself comes from Maven
/// Central with the build).
pub const INSTALL: &str = "apt-get install openjdk-17-jdk-headless maven";

/// How the rx rows' JVMs are started: class path, flags, collector, the planted fault.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RxSettings {
    /// The class path (RxBench's module, the shared module's classes, RxJava's jars).
    pub classpath: String,
    /// JVM flags: the collector's, then `--jvm-flags`.
    pub flags: String,
    /// The collector setting's name (`--jvm-gc`).
    pub gc: String,
    /// The planted fault (`--fault drop-one`: every run one op short, so INVALID).
    pub fault: bool,
}

impl RxSettings {
    /// Builds RxBench (when needed) and the settings for collector `gc` (one of
    /// [`jvm::GCS`]) with `extra` flags; `Err` (one line) when RxJava cannot run here or a
    /// flag is refused.
    pub fn prepare(gc: &str, extra: &str, fault: bool) -> Result<RxSettings, String> {
        RxSettings::prepare_sized(gc, extra, fault, HEAP)
    }

    /// As [`RxSettings::prepare`], with a heap of `heap` bytes for the sized collectors.
    pub fn prepare_sized(
        gc: &str,
        extra: &str,
        fault: bool,
        heap: u64,
    ) -> Result<RxSettings, String> {
        if let Some(why) = unavailable() {
            return Err(why);
        }
        if let Some(why) = jvm::check_extra_flags(extra) {
            return Err(why);
        }
        let valid: Vec<&str> = jvm::GCS.iter().map(|g| g.0).collect();
        let flags = jvm::gc_flags(gc, heap).ok_or_else(|| {
            format!("--jvm-gc: unknown collector '{gc}'; valid: {}", valid.join(", "))
        })?;
        let classpath = jvm::build_group(GROUP)?;
        Ok(RxSettings {
            classpath,
            flags: format!("{flags} {extra}").trim().to_string(),
            gc: gc.to_string(),
            fault,
        })
    }
}

/// The rx rows' heap: the seed's workloads keep little alive (one range, one subscription,
/// a 256-slot queue); 1 GiB, the sized collectors' least, as seed 000 ran `-Xmx1g`.
/// Experiments whose runs hold other amounts choose theirs ([`RxSettings::prepare_sized`]).
pub const HEAP: u64 = 1 << 30;

/// Why RxJava cannot run here (with the install command); `None` when it can.
pub fn unavailable() -> Option<String> {
    jvm::group_unavailable(GROUP).map(|why| format!("RxJava cannot run here: {why}"))
}

/// One run of RxBench.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RxRun {
    /// Wall time, ns (System.nanoTime, CLOCK_MONOTONIC).
    pub ns: u64,
    /// What the workload returned (-1: observe-on failed or timed out).
    pub result: i64,
    /// Collections during the run (every GarbageCollectorMXBean).
    pub gc_count: u64,
    /// Their time, ms.
    pub gc_ms: u64,
    /// Bytes allocated by every live thread during the run.
    pub allocated_bytes: u64,
    /// latency: elements stamped on another thread than the one that received them.
    #[serde(default)]
    pub crossed: u64,
    /// latency, measured runs: each element's nanoTime from the map stamp to onNext, in
    /// arrival order.
    #[serde(default)]
    pub latency_ns: Vec<u64>,
    /// backpressure: the run's counts (tools/jvm/rx/RxBackpressure.java).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bp: Option<RxBpRun>,
    /// heap-growth: the run's live heap and depth (tools/jvm/rx/RxHeapGrowth.java).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap: Option<RxHeapRun>,
}

/// One backpressure run: `onBackpressureBuffer(capacity, onOverflow, strategy)`, the source
/// counted as it emits, the subscriber's counts, and the run's own check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RxBpRun {
    /// Elements that left the source.
    pub emitted: u64,
    /// The last of them (-1: none); under ERROR, the element that overflowed.
    pub last_emitted: i64,
    /// Elements the subscriber received.
    pub delivered: u64,
    /// Elements dropped (onOverflow calls) plus MissingBackpressureExceptions the buffer
    /// signalled.
    pub overflows: u64,
    /// publish-on-1: the overflows when the range had finished, before any request.
    pub overflows_at_once: Option<u64>,
    /// Whether the delivered elements increased strictly.
    pub in_order: bool,
    /// `complete`, `error: <exception>`, or `none` (no terminal signal in time).
    pub terminal: String,
    /// grid: from the first element to the terminal signal, ms.
    pub elapsed_ms: Option<f64>,
    /// The run's own check: `ok` or what failed.
    pub check: String,
}

/// One heap-growth run: live heap after full collections and the backlog's depth.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RxHeapRun {
    /// Live heap before the run: after System.gc(), the heap pools' collection usage.
    pub live_before_bytes: u64,
    /// The largest of `live_bytes`.
    pub live_peak_bytes: i64,
    /// Live heap sampled on the source's thread after every N/8-th message (same reading).
    pub live_bytes: Vec<u64>,
    /// Messages the consumer received.
    pub received: u64,
    /// The largest backlog (produced − received) the consumer saw.
    pub max_depth: u64,
    /// (ms since the run began, backlog) every N/200 messages.
    pub depth_series: Vec<(f64, f64)>,
    /// The consumer's accumulator.
    pub checksum: i64,
    /// Whether the messages arrived in order.
    pub in_order: bool,
    /// `complete`, `error: …` or `none`.
    pub terminal: String,
    /// The run's own check: `ok` or what failed.
    pub check: String,
}

/// What RxBench returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RxOutcome {
    /// The workload.
    pub workload: String,
    /// N.
    pub n: u64,
    /// The closed form RxBench checked against.
    pub expected: i64,
    /// RxJava's version (its jar's manifest).
    pub rxjava_version: Option<String>,
    /// The JVM: version, flags, collectors, heap.
    pub jvm: Value,
    /// Warm-up runs.
    pub warmup: Vec<RxRun>,
    /// Measured runs.
    pub runs: Vec<RxRun>,
}

/// Runs RxBench's `workload` over `n` ops, `warmup` + `runs` runs, with more RxBench
/// arguments in `extra`; its outcome and the perf counters of its measured runs (per op).
pub fn run(
    s: &RxSettings,
    workload: &str,
    n: u64,
    (warmup, runs): (usize, usize),
    extra: &[String],
    ctx: &mut Ctx,
) -> Result<(RxOutcome, Vec<RunCounters>), String> {
    // In the trace pass: Java Flight Recorder and the kernel's scheduler recorder.
    let probes = super::jvm_probes::Probes::prepare(&ctx.pass)?;
    let mut cmd = Command::new("java");
    cmd.args(s.flags.split_whitespace())
        .args(probes.java_flags())
        .arg("-cp")
        .arg(&s.classpath)
        .arg("RxBench")
        .args(["--workload", workload, "--n", &n.to_string()])
        .args(["--warmup", &warmup.to_string(), "--runs", &runs.to_string()])
        .args(extra);
    if s.fault {
        cmd.args(["--fault", "drop-one"]);
    }
    let r = jvm::run_program_probed(&mut cmd, ctx, probes, (runs, warmup + runs), n)?;
    for note in r.notes {
        ctx.note(format!("rx: {note}"));
    }
    let o: RxOutcome = serde_json::from_value(r.outcome)
        .map_err(|e| format!("unreadable RxBench outcome: {e}"))?;
    if o.runs.len() != runs || o.warmup.len() != warmup || o.n != n {
        return Err(format!(
            "RxBench ran {} warm-up and {} measured runs of {} where {warmup}, {runs} of {n} \
             were asked",
            o.warmup.len(),
            o.runs.len(),
            o.n
        ));
    }
    Ok((o, r.counters))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_collector_or_a_collector_flag_is_one_line_naming_the_choices() {
        if let Some(why) = unavailable() {
            panic!("this test needs RxJava: {why}");
        }
        let e = RxSettings::prepare("zgc", "", false).unwrap_err();
        assert!(e.contains("valid: g1, parallel, serial, g1-default"), "{e}");
        let e = RxSettings::prepare("serial", "-XX:+UseZGC", false).unwrap_err();
        assert!(e.contains("--jvm-gc"), "{e}");
        let s = RxSettings::prepare("serial", "-Xmx2g", false).expect("RxJava is installed");
        assert!(s.flags.starts_with("-XX:+UseSerialGC") && s.flags.ends_with("-Xmx2g"));
        assert!(s.classpath.contains("rxjava-3.1.12.jar"), "{}", s.classpath);
    }
}
