//! The JVM originals as variants of `disruptor-vs-lbq`: Java's own `LinkedBlockingQueue`
//! (`jvm-lbq`), the LMAX Disruptor 3.4 (`jvm-disruptor`) and JCTools' `MpscArrayQueue`
//! (`jvm-jctools`, the JVM group `tools/jvm/jctools/`, a queue Bus loads by name), run by
//! `tools/jvm/bus/src/main/java/Bus.java`.
//!
//! A JVM cell is a fork like any other: the runner starts `lab __child`, whose cell starts
//! `java … Bus` as its own child (in the same process group, so the watchdog and Ctrl-C
//! kill it too), relays Bus's heartbeats and turns its outcome into the harness's
//! [`CellOutput`], so the rows land in the same tables. Bus speaks the lab's protocol
//! lines (`tools/jvm/README.md`), runs the same messages, split and self-check as the Rust
//! harness (count, per-producer order, the same checksum), a new queue or Disruptor per run.
//!
//! Like for like: the Rust ring uses its single-producer sequencer for one producer, so
//! the JVM Disruptor runs `ProducerType.SINGLE` at P = 1 and `MULTI` above. Under the
//! Rust `blocking` strategy the JVM Disruptor runs `BlockingWaitStrategy`, the strategy
//! seed 001 ran (`--jvm-wait lite-blocking` runs `LiteBlockingWaitStrategy`, which, like
//! the Rust one, signals only when a waiter asked for it; the report names the pairing).
//! The message carries its payload inline as long fields (`--jvm-message inline`), as the
//! Rust message carries its bytes, so `jvm-lbq` allocates one object a message besides
//! its node and `jvm-disruptor` none; `byte-array` keeps a `byte[]` per message.
//! The collector is a dimension ([`GCS`], `--jvm-gc`), each with its own flags.

use crate::measure::harness::{CellOutput, CellSpec, JvmReport, JvmSettings, RunResult};
use crate::measure::jvm_build;
use crate::profile::usage::ThreadUsage;
use crate::protocol::{Ctx, Message};
use crate::stats::percentiles::Percentiles;
use serde::Deserialize;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// The collector settings of `--jvm-gc`: name and what it runs. The sized ones fix the heap
/// (`-Xms` = `-Xmx` = [`heap_bytes`], `-XX:+AlwaysPreTouch`): room for every message of a
/// run to be live at once (an unbounded queue whose producers run ahead holds them all;
/// seed 001 warns of full collections), so no run's old generation fills, and the heap's
/// pages are touched when the JVM starts rather than inside a timed run.
pub const GCS: [(&str, &str); 4] = [
    ("g1", "G1 (-XX:+UseG1GC), heap fixed at the run's size, pre-touched"),
    ("parallel", "ParallelGC (-XX:+UseParallelGC), heap fixed at the run's size, pre-touched"),
    ("serial", "SerialGC (-XX:+UseSerialGC), heap fixed at the run's size, pre-touched"),
    ("g1-default", "G1 with the JDK's own heap sizing (no -Xms/-Xmx; a quarter of RAM at most)"),
];

/// The collector the JVM rows run by default: the one they ran fastest under, taken over
/// both originals and P = 1 and 6, on the 2-core VM the lab is measured on (one GC
/// thread has no second core to use; tools/jvm/README.md has the run).
pub const DEFAULT_GC: &str = "serial";

/// Bytes a message of the JVM side takes on the heap, with its LinkedBlockingQueue node
/// (16-byte object headers, compressed references): node 24; `inline` message 32 + payload;
/// `byte-array` message 40 plus the array's 16 + payload.
pub fn message_bytes(payload: usize, message: &str) -> u64 {
    let msg = if message == "byte-array" { 40 + 16 + payload } else { 32 + payload };
    (24 + msg) as u64
}

/// The sized collectors' heap for runs of `messages` messages and a ring of `ring`
/// slots: twice every message live at once plus the ring's preallocated events (a copying
/// young generation needs room beside the live set), at least 1 GiB, at most a third of
/// the machine's memory (`cap`, bytes).
pub fn heap_bytes(messages: u64, ring: u64, payload: usize, message: &str, cap: u64) -> u64 {
    let per = message_bytes(payload, message);
    let want = 2 * messages.saturating_mul(per) + ring.saturating_mul(per);
    want.max(1 << 30).min(cap.max(1 << 30)).div_ceil(1 << 20) << 20
}

/// The cap of [`heap_bytes`] on this machine: a third of MemTotal (the sized heaps are
/// pre-touched, so they take real memory), 4 GiB when /proc/meminfo cannot be read.
pub fn heap_cap() -> u64 {
    let kb = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("MemTotal:"))?.to_string();
        line.split_whitespace().nth(1)?.parse::<u64>().ok()
    });
    kb.map_or(4 << 30, |kb| kb * 1024 / 3)
}

/// The JVM flags of collector setting `gc` with heap `heap` bytes (`None`: unknown name).
pub fn gc_flags(gc: &str, heap: u64) -> Option<String> {
    let mb = heap >> 20;
    let sized = format!("-Xms{mb}m -Xmx{mb}m -XX:+AlwaysPreTouch");
    Some(match gc {
        "g1" => format!("-XX:+UseG1GC {sized}"),
        "parallel" => format!("-XX:+UseParallelGC {sized}"),
        "serial" => format!("-XX:+UseSerialGC {sized}"),
        "g1-default" => "-XX:+UseG1GC".to_string(),
        _ => return None,
    })
}

/// Why `--jvm-flags` cannot be taken, or `None`: a collector chosen there would fight the
/// one `--jvm-gc` chose (the JVM refuses two), so the collector is `--jvm-gc`'s alone.
pub fn check_extra_flags(flags: &str) -> Option<String> {
    let gc = flags.split_whitespace().find(|f| f.starts_with("-XX:+Use") && f.ends_with("GC"))?;
    let valid: Vec<&str> = GCS.iter().map(|g| g.0).collect();
    Some(format!(
        "--jvm-flags: '{gc}' chooses a collector; choose it with --jvm-gc ({}, all)",
        valid.join(", ")
    ))
}

/// Why the JVM rows cannot run here (no JDK or no Maven to build them), with the install
/// command; `None` when they can.
pub fn unavailable() -> Option<String> {
    jvm_build::unavailable()
}

/// The class path of the shared module (Bus, Plain, the NIO echo server), built first when
/// needed (tools/jvm, Maven).
pub fn build() -> Result<String, String> {
    jvm_build::class_path("bus")
}

/// Why a JVM module's programs cannot run here, with the install command; `None` when they
/// can. Whether Maven Central serves their libraries shows when they are built.
pub fn group_unavailable(group: &str) -> Option<String> {
    if !jvm_build::MODULES.contains(&group) {
        return Some(format!("no JVM module '{group}'; valid: {}", jvm_build::MODULES.join(", ")));
    }
    unavailable()
}

/// Builds a JVM module of tools/jvm when needed; the class path to run its programs with
/// (its classes, the shared module's and the pinned jars).
pub fn build_group(group: &str) -> Result<String, String> {
    jvm_build::class_path(group)
}

/// The JVM module (tools/jvm/<module>/) whose classes and jars `variant` needs, if not the
/// shared one.
pub fn group_of(variant: &str) -> Option<&'static str> {
    match variant.trim_start_matches("fault-") {
        "jvm-jctools" => Some("jctools"),
        _ => None,
    }
}

/// Why `variant` (a `jvm-*` one) cannot run here, with the install command, or `None`.
pub fn variant_unavailable(variant: &str) -> Option<String> {
    match group_of(variant) {
        Some(g) => group_unavailable(g),
        None => unavailable(),
    }
}

/// Builds what `variant` (a `jvm-*` one) runs when needed; the class path to run Bus
/// with: its module's classes and jars; for `jvm-disruptor-3.4` seed 001's Disruptor jar in
/// place of the current one.
pub fn class_path(variant: &str) -> Result<String, String> {
    let cp = match group_of(variant) {
        Some(g) => build_group(g)?,
        None => build()?,
    };
    if variant.trim_start_matches("fault-") == SEED_DISRUPTOR {
        return jvm_build::with_seed_disruptor(&cp);
    }
    Ok(cp)
}

/// The variant that runs seed 001's Disruptor line (3.4) where `jvm-disruptor` runs the
/// current release.
pub const SEED_DISRUPTOR: &str = "jvm-disruptor-3.4";

/// Bus's `--impl` for a `jvm-*` variant (planted faults run their variant's).
fn bus_impl(variant: &str) -> Option<&'static str> {
    match variant.trim_start_matches("fault-") {
        "jvm-lbq" => Some("lbq"),
        "jvm-disruptor" | SEED_DISRUPTOR => Some("disruptor"),
        "jvm-jctools" => Some("jctools"),
        _ => None,
    }
}

/// What [`converse`] shows its observer: the child's pid once it started, then each line
/// of its stdout.
#[derive(Debug, Clone, Copy)]
pub enum Seen<'a> {
    /// The java process started with this pid.
    Started(u32),
    /// A line of its stdout.
    Line(&'a str),
}

/// Starts `cmd` (`java` with its flags, class path and arguments; stdin closed, stdout read
/// here, stderr inherited, in the caller's process group so the watchdog and Ctrl-C reach
/// it), shows `observe` its pid and every stdout line, relays its heartbeats to `ctx` and
/// returns its `done` outcome; `failed`, or an end without `done`, is the error. `what`
/// names the program in errors.
pub fn converse(
    cmd: &mut Command,
    ctx: &mut Ctx,
    what: &str,
    mut observe: impl FnMut(Seen<'_>),
) -> Result<Value, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start java: {e}"))?;
    observe(Seen::Started(child.id()));
    let stdout = child.stdout.take().expect("piped");
    let mut done = None;
    for text in BufReader::new(stdout).lines().map_while(Result::ok) {
        observe(Seen::Line(&text));
        match serde_json::from_str::<Message>(&text) {
            Ok(Message::Heartbeat { .. }) => ctx.heartbeat(),
            Ok(Message::Done { outcome, .. }) => done = Some(Ok(outcome)),
            Ok(Message::Failed { error }) => done = Some(Err(format!("{what}: {error}"))),
            _ => {}
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for {what}: {e}"))?;
    done.ok_or_else(|| format!("{what} ended ({status}) without a result"))?
}

/// What a JVM program that speaks the lab's protocol handed back: its outcome and, in a
/// timed fork, the perf counters of each measured run (per op).
#[derive(Debug)]
pub struct ProgramResult {
    /// The `done` line's outcome.
    pub outcome: Value,
    /// One per measured run (or one for the whole process when the program did not mark
    /// each run); empty outside timed forks.
    pub counters: Vec<crate::profile::counters::RunCounters>,
    /// The trace pass's account of its recording (empty in other passes).
    pub notes: Vec<String>,
}

/// Runs a JVM program of a group (`cmd`: `java` with its flags, `probes`' flags for the
/// pass, class path and arguments): relays its heartbeats to `ctx`, counts every thread of
/// the java process in timed forks (run marks delimit each run; values per op, `ops` a
/// run's ops), and returns its outcome; in the trace pass the JVM runs under Java Flight
/// Recorder and the kernel's scheduler recorder, and the trace child writes the recording
/// as its Chrome trace ([`crate::profile::jfr`]). `runs`: (measured runs, all runs). The
/// child inherits stderr and the caller's process group, so the watchdog and Ctrl-C reach
/// it.
pub fn run_program_probed(
    cmd: &mut Command,
    ctx: &mut Ctx,
    mut probes: super::jvm_probes::Probes,
    runs: (usize, usize),
    ops: u64,
) -> Result<ProgramResult, String> {
    probes.launching();
    let mut pid = 0;
    let outcome = converse(cmd, ctx, "the JVM", |seen| match seen {
        Seen::Started(p) => {
            pid = p;
            probes.started(p);
        }
        Seen::Line(l) => probes.line(l),
    })?;
    let (counters, notes) = probes.finish_program(pid, runs, ops, ops * runs.1 as u64)?;
    Ok(ProgramResult { outcome, counters, notes })
}

/// The JVM wait strategy paired with the Rust one: the same-named one (blocking →
/// `BlockingWaitStrategy`, seed 001's); the ring's literal port of that strategy
/// (java-blocking) pairs with its original.
pub fn matching_wait(rust: &str) -> &'static str {
    match rust {
        "blocking" | "java-blocking" => "blocking",
        "sleeping" => "sleeping",
        "yielding" => "yielding",
        _ => "busy-spin",
    }
}

#[derive(Debug, Deserialize)]
struct BusThread {
    name: String,
    cpu_ms: f64,
    #[serde(default)]
    user_ms: f64,
    #[serde(default)]
    voluntary_cs: u64,
    #[serde(default)]
    involuntary_cs: u64,
}

#[derive(Debug, Deserialize)]
struct BusRun {
    ms: f64,
    valid: bool,
    verdict: String,
    threads: Vec<BusThread>,
    #[serde(default)]
    gc_count: u64,
    #[serde(default)]
    gc_ms: f64,
    #[serde(default)]
    allocated_bytes_per_message: f64,
    /// Latency samples, ns (measured runs with sampling on).
    #[serde(default)]
    latency_ns: Vec<u64>,
}

#[derive(Debug, Deserialize)]
struct BusOutcome {
    per_producer: Vec<u64>,
    jit_warmup_passes: u64,
    jvm: Value,
    #[serde(default)]
    disruptor_version: Option<String>,
    /// A group's queue library and version (`jctools-core 2.1-SNAPSHOT`), else null.
    #[serde(default)]
    library: Option<String>,
    #[serde(default)]
    jit_warmup_messages: u64,
    warmup: Vec<BusRun>,
    runs: Vec<BusRun>,
    producer_type: String,
    wait: String,
    #[serde(default)]
    wait_strategy: Option<String>,
    message: String,
    /// As an unsigned decimal (Java's `Long.toUnsignedString`).
    expected_checksum: u64,
}

fn run_result(r: &BusRun, messages: u64) -> RunResult {
    let threads: Vec<ThreadUsage> = r
        .threads
        .iter()
        .map(|t| ThreadUsage {
            name: t.name.clone(),
            cpu_ms: t.cpu_ms,
            user_ms: t.user_ms,
            sys_ms: (t.cpu_ms - t.user_ms).max(0.0),
            voluntary_cs: t.voluntary_cs,
            involuntary_cs: t.involuntary_cs,
        })
        .collect();
    let cpu: f64 = threads.iter().map(|t| t.cpu_ms).sum();
    RunResult {
        ms: r.ms,
        valid: r.valid,
        verdict: r.verdict.clone(),
        sent: messages,
        received: if r.valid { messages } else { 0 },
        process_cpu_ms: cpu,
        process_pct: if r.ms > 0.0 { cpu / r.ms * 100.0 } else { 0.0 },
        threads,
        ..Default::default()
    }
}

/// The `java … Bus` command a cell's two JVM programs share (Bus, and `Bus --plain`, its
/// calibration): the cell's flags, then `java_flags`, Bus's class, `mode` (`--plain` or
/// nothing), and every setting the two must agree on, so that the calibration runs what
/// the row runs; `(messages, warmup, runs)` are the pass's sizes. Also returns the CPUs the
/// threads are pinned to (none: the kernel places them).
/// Bus as the launcher starts it: the default JDK, the cell's flags and class path.
fn bus_program(j: &JvmSettings) -> super::jvm_program::JvmProgram {
    super::jvm_program::JvmProgram {
        java: super::jvm_program::DEFAULT_JAVA.to_string(),
        flags: j.flags.split_whitespace().map(str::to_string).collect(),
        class_path: j.classes.clone(),
        main_class: "Bus".to_string(),
    }
}

fn bus_command(
    cell: &CellSpec,
    j: &JvmSettings,
    imp: &str,
    probes: Option<&super::jvm_probes::Probes>,
    mode: &[&str],
    (messages, warmup, runs): (u64, usize, usize),
) -> Result<(Command, Option<Vec<usize>>), String> {
    let producer_type = if cell.producers == 1 { "single" } else { "multi" };
    let mut cmd = bus_program(j).command(probes, mode);
    cmd.args(["--impl", imp, "--producers", &cell.producers.to_string()])
        .args(["--messages", &messages.to_string(), "--warmup", &warmup.to_string()])
        .args(["--runs", &runs.to_string(), "--ring-size", &cell.ring_size.to_string()])
        .args(["--wait", &j.wait, "--producer-type", producer_type])
        .args(["--payload", &cell.payload.to_string(), "--jit-warmup", &j.jit_warmup.to_string()])
        .args(["--message", &j.message, "--sample-every", &cell.sample_every.to_string()]);
    if let (Some(c), "lbq") = (cell.capacity, imp) {
        cmd.args(["--capacity", &c.to_string()]);
    }
    let pinned = crate::machine::placement::plan(cell.placement, cell.producers + 1)?;
    if let Some(cpus) = &pinned {
        let list: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
        cmd.args(["--pin", &list.join(",")]);
    }
    Ok((cmd, pinned))
}

/// Runs a `jvm-*` cell: Bus with the cell's settings, heartbeats relayed.
pub fn run(cell: &CellSpec, ctx: &mut Ctx) -> Result<CellOutput, String> {
    let j = cell.jvm.as_ref().ok_or("a jvm cell without its JVM settings")?;
    let imp =
        bus_impl(&cell.variant).ok_or_else(|| format!("not a JVM variant: {}", cell.variant))?;
    let mut probes = super::jvm_probes::Probes::prepare(&ctx.pass)?;
    let (messages, warmup, runs) = super::jvm_probes::bus_runs(cell, &ctx.pass);
    let (mut cmd, pinned) =
        bus_command(cell, j, imp, Some(&probes), &[], (messages, warmup, runs))?;
    if j.drop_one {
        cmd.args(["--fault", "drop-one"]);
    }
    probes.launching();
    let mut pid = 0;
    let outcome = converse(&mut cmd, ctx, "the JVM", |seen| match seen {
        Seen::Started(p) => {
            pid = p;
            probes.started(p);
        }
        Seen::Line(l) => probes.line(l),
    })?;
    let b: BusOutcome =
        serde_json::from_value(outcome).map_err(|e| format!("unreadable JVM outcome: {e}"))?;
    let rust = rust_checksum(cell.payload, &b.per_producer)?;
    if b.expected_checksum != rust {
        return Err(format!(
            "Bus expects checksum {} where the Rust harness expects {rust}: its messages are \
             not the Rust messages' bytes",
            b.expected_checksum
        ));
    }
    let moved = b.jit_warmup_passes * b.jit_warmup_messages
        + (b.warmup.len() + b.runs.len()) as u64 * messages;
    let mut out = CellOutput {
        latency_ns: latency(&b.runs, cell.sample_every)?,
        warmup: b.warmup.iter().map(|r| run_result(r, messages)).collect(),
        runs: b.runs.iter().map(|r| run_result(r, messages)).collect(),
        per_producer: b.per_producer,
        jvm: Some(JvmReport {
            jvm: b.jvm,
            disruptor_version: b.disruptor_version,
            library: b.library,
            producer_type: b.producer_type,
            wait: b.wait,
            wait_strategy: b.wait_strategy,
            message: b.message,
            gc: j.gc.clone(),
            jit_warmup_passes: b.jit_warmup_passes,
            allocated_bytes_per_message: b
                .runs
                .iter()
                .map(|r| r.allocated_bytes_per_message)
                .collect(),
            gc_count: b.runs.iter().map(|r| r.gc_count).collect(),
            gc_ms: b.runs.iter().map(|r| r.gc_ms).collect(),
            allocation_sites: Vec::new(),
        }),
        pinned_cpus: pinned,
        ..Default::default()
    };
    probes.finish(pid, messages, moved, &mut out)?;
    Ok(out)
}

/// The Rust harness's expected checksum for these producers' messages.
fn rust_checksum(payload: usize, per_producer: &[u64]) -> Result<u64, String> {
    Ok(match payload {
        16 => handoff::expected_checksum::<16>(per_producer),
        64 => handoff::expected_checksum::<64>(per_producer),
        256 => handoff::expected_checksum::<256>(per_producer),
        other => return Err(format!("payload {other} has no Rust message to check against")),
    })
}

/// The latency of the valid measured runs, merged in one histogram as the Rust harness
/// merges its runs' (`None` with sampling off or no valid run).
fn latency(runs: &[BusRun], sample_every: u64) -> Result<Option<Percentiles>, String> {
    if sample_every == 0 {
        return Ok(None);
    }
    let mut h = crate::measure::harness::new_histogram();
    for r in runs.iter().filter(|r| r.valid) {
        for &ns in &r.latency_ns {
            h.record(ns.max(1)).map_err(|e| format!("a JVM latency of {ns} ns: {e}"))?;
        }
    }
    Ok((!h.is_empty()).then(|| Percentiles::of(&h)))
}

/// One plain-loop run of a JVM original (`Bus --plain`, tools/jvm/bus/src/main/java/Plain.java).
#[derive(Debug, Clone, Deserialize)]
pub struct PlainRun {
    /// Start gate to the consumer's last message, ms.
    pub ms: f64,
    /// Messages per second.
    pub msgs_per_sec: f64,
}

/// Runs a `jvm-*` cell's original in its own plain loop (`Bus --plain`: the library's API
/// as a user writes it, the same message, stamps, split and thread placement, every message
/// checked as Bus checks it, without Bus's harness), for the calibration of `jvm-lbq` against `jvm-lbq/own-loop`: its measured
/// runs. Heartbeats are relayed to `ctx` (one per run), as [`run`] relays Bus's.
pub fn run_plain(cell: &CellSpec, ctx: &mut Ctx) -> Result<Vec<PlainRun>, String> {
    let j = cell.jvm.as_ref().ok_or("a jvm cell without its JVM settings")?;
    let imp = bus_impl(&cell.variant).filter(|_| !cell.variant.starts_with("fault-"));
    let imp = imp.ok_or_else(|| {
        format!("no plain loop for {}; valid: jvm-lbq, jvm-disruptor, jvm-jctools", cell.variant)
    })?;
    let sizes = (cell.messages, cell.warmup, cell.runs);
    let (mut cmd, _) = bus_command(cell, j, imp, None, &["--plain"], sizes)?;
    let outcome = converse(&mut cmd, ctx, "the JVM's plain loop", |_| {})?;
    // The plain loop stamps as Bus does, or its calibration would be cheaper than the row.
    if outcome["sample_every"].as_u64() != Some(cell.sample_every) {
        return Err(format!(
            "the JVM's plain loop stamped every {} messages where the cell stamps every {}",
            outcome["sample_every"], cell.sample_every
        ));
    }
    serde_json::from_value(outcome["runs"].clone())
        .map_err(|e| format!("unreadable plain-loop outcome: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(variant: &str, producers: usize, messages: u64) -> CellSpec {
        if let Some(why) = unavailable() {
            panic!("the JVM tests need a JDK and Maven: {why}");
        }
        let classes = class_path(variant).expect("Maven builds tools/jvm");
        CellSpec {
            variant: variant.into(),
            wait: Some("blocking".into()),
            producers,
            messages,
            warmup: 1,
            runs: 2,
            ring_size: 1024,
            capacity: None,
            prefetch: 256,
            payload: 16,
            sample_every: 64,
            batch: 1,
            sampling_ab_pairs: 0,
            heap_messages: messages,
            trace_messages: messages,
            jvm: Some(JvmSettings {
                classes,
                flags: gc_flags("serial", 1 << 30).unwrap().replace(" -XX:+AlwaysPreTouch", ""),
                wait: "blocking".into(),
                message: "inline".into(),
                gc: "serial".into(),
                jit_warmup: 0,
                drop_one: false,
            }),
            min_measure_ms: 0.0,
            spread_measure_ms: 0.0,
            in_run_trace: None,
            allocator: None,
            placement: Default::default(),
            calibration: None,
        }
    }

    #[test]
    fn heaps_are_sized_from_the_run_and_flags_name_the_collector() {
        assert_eq!(message_bytes(16, "inline"), 72);
        assert_eq!(message_bytes(16, "byte-array"), 96);
        let cap = 64 << 30;
        assert_eq!(heap_bytes(1000, 1024, 16, "inline", cap), 1 << 30, "at least 1 GiB");
        let h = heap_bytes(32 << 20, 1 << 16, 16, "inline", cap);
        assert!(h >= 2 * (32 << 20) * 72 && h % (1 << 20) == 0, "{h}");
        assert_eq!(heap_bytes(1 << 30, 1, 256, "inline", 3 << 30), 3 << 30, "capped");
        let f = gc_flags("parallel", 2 << 30).unwrap();
        assert_eq!(f, "-XX:+UseParallelGC -Xms2048m -Xmx2048m -XX:+AlwaysPreTouch");
        assert_eq!(gc_flags("g1-default", 2 << 30).unwrap(), "-XX:+UseG1GC");
        assert!(gc_flags("zgc", 1).is_none());
        assert!(check_extra_flags("-Xmx8g -XX:+UseZGC").unwrap().contains("--jvm-gc"));
        assert_eq!(check_extra_flags("-Xmx8g -XX:+AlwaysPreTouch"), None);
        assert_eq!(matching_wait("blocking"), "blocking", "seed 001's pairing");
    }

    /// Each variant runs its module's classes; the seed's Disruptor takes the current one's
    /// place on the same class path.
    #[test]
    fn each_jvm_variant_names_its_module_and_disruptor() {
        assert_eq!(group_of("jvm-jctools"), Some("jctools"));
        assert_eq!(group_of("fault-jvm-jctools"), Some("jctools"));
        assert_eq!(group_of("jvm-disruptor"), None);
        assert_eq!(bus_impl("fault-jvm-jctools"), Some("jctools"));
        assert_eq!(bus_impl(SEED_DISRUPTOR), Some("disruptor"));
        assert!(group_unavailable("nope")
            .unwrap()
            .contains("valid: bus, jctools, netty, rx, reactor, jmh"));
        let current = class_path("jvm-disruptor").expect("the JVM side builds");
        let seed = class_path(SEED_DISRUPTOR).expect("the JVM side builds");
        assert!(current.contains("disruptor-4.0.0.jar"), "{current}");
        assert!(seed.contains("disruptor-3.4.4.jar") && !seed.contains("4.0.0"), "{seed}");
    }

    /// CLOCK_MONOTONIC now, ns, read as the JVM's System.nanoTime reads it.
    fn monotonic_ns() -> u64 {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec for the whole call.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_MONOTONIC)");
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// Bus marks each warm-up and measured run on the protocol with CLOCK_MONOTONIC
    /// stamps whose difference is the run's own duration.
    #[test]
    fn bus_marks_every_run_start_and_end() {
        let c = cell("jvm-lbq", 2, 20_000);
        let j = c.jvm.as_ref().unwrap();
        let before = monotonic_ns();
        let out = Command::new("java")
            .args(j.flags.split_whitespace())
            .arg("-cp")
            .arg(&j.classes)
            .args(["Bus", "--impl", "lbq", "--producers", "2", "--messages", "20000"])
            .args(["--warmup", "1", "--runs", "2", "--ring-size", "1024", "--wait", "blocking"])
            .args(["--producer-type", "multi", "--jit-warmup", "0", "--sample-every", "64"])
            .output()
            .expect("java runs");
        let after = monotonic_ns();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("every stdout line is JSON"))
            .collect();
        let marks = |t: &str| -> Vec<&Value> { lines.iter().filter(|l| l["type"] == t).collect() };
        let (starts, ends) = (marks("run_start"), marks("run_end"));
        assert_eq!((starts.len(), ends.len()), (3, 3), "{lines:?}");
        let phases: Vec<&str> = starts.iter().map(|s| s["phase"].as_str().unwrap()).collect();
        assert_eq!(phases, ["warmup", "measured", "measured"]);
        let done = &marks("done")[0]["outcome"];
        for (i, (s, e)) in starts.iter().zip(&ends).enumerate() {
            assert_eq!((s["run"].as_u64(), e["run"].as_u64()), (Some(i as u64), Some(i as u64)));
            let (t0, t1) = (s["t_ns"].as_u64().unwrap(), e["t_ns"].as_u64().unwrap());
            assert!(before < t0 && t0 < t1 && t1 < after, "{before} {t0} {t1} {after}");
            if i > 0 {
                let ms = done["runs"][i - 1]["ms"].as_f64().unwrap();
                assert!(((t1 - t0) as f64 / 1e6 - ms).abs() < 0.01, "{t0} {t1} {ms}");
                let samples = done["runs"][i - 1]["latency_ns"].as_array().unwrap().len();
                assert_eq!(samples, 2 * 10_000_usize.div_ceil(64), "every 64th of each producer");
            }
        }
    }

    /// The plain loops count what they were sent and report each measured run.
    #[test]
    fn plain_loops_run_each_original() {
        for v in ["jvm-lbq", "jvm-disruptor", "jvm-jctools"] {
            let mut ctx = Ctx::new(crate::protocol::Pass::Timed);
            let runs = run_plain(&cell(v, 2, 20_000), &mut ctx).expect("the plain loop runs");
            assert_eq!(runs.len(), 2, "{v}");
            assert!(runs.iter().all(|r| r.ms > 0.0 && r.msgs_per_sec > 0.0), "{v}: {runs:?}");
        }
        let err = run_plain(&cell("locked", 1, 10), &mut Ctx::new(crate::protocol::Pass::Timed))
            .unwrap_err();
        assert!(err.contains("valid: jvm-lbq"), "{err}");
    }
}
