//! The JVM originals as variants of `disruptor-vs-lbq`: Java's own `LinkedBlockingQueue`
//! (`jvm-lbq`) and the LMAX Disruptor 3.4 (`jvm-disruptor`), run by `tools/jvm/Bus.java`.
//!
//! A JVM cell is a fork like any other: the runner starts `lab __child`, whose cell starts
//! `java … Bus` as its own child (in the same process group, so the watchdog and Ctrl-C
//! kill it too), relays Bus's heartbeats and turns its outcome into the harness's
//! [`CellOutput`], so the rows land in the same tables. Bus speaks the lab's protocol
//! lines (`tools/jvm/README.md`), runs the same messages, split and self-check as the Rust
//! harness (count, per-producer order, the same checksum), a new queue or Disruptor per run.
//!
//! Like for like: the Rust ring uses its single-producer sequencer for one producer, so
//! the JVM Disruptor runs `ProducerType.SINGLE` at P = 1 and `MULTI` above. The Rust
//! `Blocking` strategy spins, then sleeps on a condition only when a sleeper asked for a
//! signal: the JVM counterpart is `LiteBlockingWaitStrategy`, the default pairing.

use crate::measure::harness::{CellOutput, CellSpec, JvmReport, RunResult};
use crate::profile::usage::ThreadUsage;
use crate::protocol::{Ctx, Message};
use serde::Deserialize;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Debian's Disruptor 3.4 jar (`apt-get install libdisruptor-java`).
pub const DISRUPTOR_JAR: &str = "/usr/share/java/disruptor.jar";

/// The JVM flags every fork runs with unless `--jvm-flags` says otherwise: room for the
/// unbounded queue's live nodes (the seed warns of full GCs), G1 as on the JDK's default.
pub const DEFAULT_FLAGS: &str = "-Xms1g -Xmx4g -XX:+UseG1GC";

/// Why the JVM rows cannot run here, with the install command; `None` when they can.
pub fn unavailable() -> Option<String> {
    let java =
        Command::new("java").arg("-version").stderr(Stdio::null()).stdout(Stdio::null()).status();
    if !java.is_ok_and(|s| s.success()) {
        return Some(
            "no JDK: `java` is not on PATH (apt-get install openjdk-17-jdk-headless)".into(),
        );
    }
    if !Path::new(DISRUPTOR_JAR).is_file() {
        return Some(format!(
            "no Disruptor jar at {DISRUPTOR_JAR} (apt-get install libdisruptor-java)"
        ));
    }
    None
}

/// Compiles Bus.java into `target/jvm` when needed (tools/jvm/build.sh); the class folder.
pub fn build() -> Result<PathBuf, String> {
    let root = crate::machine::workspace_root();
    let script = root.join("tools/jvm/build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(root.join("target/jvm"))
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.lines().last().unwrap_or("tools/jvm/build.sh failed").trim().to_string());
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// The JVM wait strategy paired with the Rust one.
pub fn matching_wait(rust: &str) -> &'static str {
    match rust {
        "blocking" => "lite-blocking",
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
}

#[derive(Debug, Deserialize)]
struct BusOutcome {
    per_producer: Vec<u64>,
    jit_warmup_passes: u64,
    jvm: Value,
    #[serde(default)]
    disruptor_version: Option<String>,
    #[serde(default)]
    jit_warmup_messages: u64,
    warmup: Vec<BusRun>,
    runs: Vec<BusRun>,
    producer_type: String,
    wait: String,
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

/// Runs a `jvm-*` cell: Bus with the cell's settings, heartbeats relayed.
pub fn run(cell: &CellSpec, ctx: &mut Ctx) -> Result<CellOutput, String> {
    let j = cell.jvm.as_ref().ok_or("a jvm cell without its JVM settings")?;
    let imp = match cell.variant.trim_start_matches("fault-") {
        "jvm-lbq" => "lbq",
        "jvm-disruptor" => "disruptor",
        other => return Err(format!("not a JVM variant: {other}")),
    };
    let producer_type = if cell.producers == 1 { "single" } else { "multi" };
    let mut probes = super::jvm_probes::Probes::prepare(&ctx.pass)?;
    let (messages, warmup, runs) = super::jvm_probes::bus_runs(cell, &ctx.pass);
    let mut cmd = Command::new("java");
    cmd.args(j.flags.split_whitespace())
        .args(probes.java_flags())
        .arg("-cp")
        .arg(format!("{}:{DISRUPTOR_JAR}", j.classes))
        .arg("Bus")
        .args(["--impl", imp, "--producers", &cell.producers.to_string()])
        .args(["--messages", &messages.to_string(), "--warmup", &warmup.to_string()])
        .args(["--runs", &runs.to_string(), "--ring-size", &cell.ring_size.to_string()])
        .args(["--wait", &j.wait, "--producer-type", producer_type])
        .args(["--payload", &cell.payload.to_string(), "--jit-warmup", &j.jit_warmup.to_string()]);
    if let (Some(c), "lbq") = (cell.capacity, imp) {
        cmd.args(["--capacity", &c.to_string()]);
    }
    if j.drop_one {
        cmd.args(["--fault", "drop-one"]);
    }
    let pinned = crate::machine::placement::plan(cell.placement, cell.producers + 1)?;
    if let Some(cpus) = &pinned {
        let list: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
        cmd.args(["--pin", &list.join(",")]);
    }
    probes.launching();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start java: {e}"))?;
    let pid = child.id();
    probes.started(pid);
    let stdout = child.stdout.take().expect("piped");
    let mut done = None;
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        probes.line(&line);
        match serde_json::from_str::<Message>(&line) {
            Ok(Message::Heartbeat { .. }) => ctx.heartbeat(),
            Ok(Message::Done { outcome, .. }) => done = Some(Ok(outcome)),
            Ok(Message::Failed { error }) => done = Some(Err(format!("the JVM: {error}"))),
            Err(_) => {}
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for java: {e}"))?;
    let outcome = match done {
        Some(r) => r?,
        None => return Err(format!("java ended ({status}) without a result")),
    };
    let b: BusOutcome =
        serde_json::from_value(outcome).map_err(|e| format!("unreadable JVM outcome: {e}"))?;
    let moved = b.jit_warmup_passes * b.jit_warmup_messages
        + (b.warmup.len() + b.runs.len()) as u64 * messages;
    let mut out = CellOutput {
        warmup: b.warmup.iter().map(|r| run_result(r, messages)).collect(),
        runs: b.runs.iter().map(|r| run_result(r, messages)).collect(),
        per_producer: b.per_producer,
        jvm: Some(JvmReport {
            jvm: b.jvm,
            disruptor_version: b.disruptor_version,
            producer_type: b.producer_type,
            wait: b.wait,
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
