//! The JVM originals' rows: `jvm-lbq` (LinkedBlockingQueue, unbounded as seed 001's) and
//! `jvm-disruptor` / `jvm-disruptor-3.4` (the LMAX Disruptor, its own event processor
//! waiting with the JVM wait strategy of the row) run ping-pong, the fixed rate and the
//! sweep in tools/jvm's `LatencyRun`, one JVM per cell: its JIT warm-up pass, then the
//! cell's warm-up and measured runs. The JVM side records into HdrHistogram (the Java
//! library, the same bounds and the same correction as the Rust side) and hands each run's
//! histograms back encoded (V2, compressed); here they are decoded and go through the same
//! account, judgement and scores as the Rust rows' runs.

use super::cell::RateRun;
use super::depth::Depths;
use super::hdr;
use super::journeys::Journey;
use super::run::{highest_sustained, rated_one, step, Collect, One};
use super::{Cell, LatOutcome, Work};
use crate::machine::placement::{self, Placement};
use crate::measure::jvm::{self as bus, Seen};
use crate::measure::jvm_program::{JvmProgram, DEFAULT_JAVA};
use crate::protocol::Ctx;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The JVM's main class.
const MAIN: &str = "LatencyRun";

/// JIT warm-up runs in each JVM before the cell's own warm-up runs (unrecorded).
pub const JIT_WARMUP: usize = 1;

/// The JVM rows' flags: the collector the JVM rows of disruptor-vs-lbq run by default,
/// with a fixed, pre-touched heap of this size: no run here holds more than a few hundred
/// thousand messages of some 80 bytes at once, and a larger heap costs each fork's JVM
/// its pre-touch.
const HEAP_BYTES: u64 = 256 << 20;

/// The JVM variants this experiment drives.
pub const VARIANTS: [&str; 3] = ["jvm-lbq", "jvm-disruptor", bus::SEED_DISRUPTOR];

/// Which JVM ran a row, and with what: from the first fork's JVM.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JvmFacts {
    /// `java.version`.
    pub java: String,
    /// The VM's flags as it saw them.
    pub flags: Vec<String>,
    /// The Disruptor's class, for the jvm-disruptor rows (`BlockingWaitStrategy`, ...).
    pub wait_strategy: Option<String>,
    /// The Disruptor's version on the class path (the queue's rows carry it too).
    pub disruptor_version: Option<String>,
    /// HdrHistogram's version (the Java library).
    pub hdrhistogram_version: Option<String>,
    /// JIT warm-up runs before the cell's warm-up runs.
    pub jit_warmup_runs: usize,
}

#[derive(Debug, Deserialize)]
struct JvmRate {
    offered: f64,
    planned: u64,
    sent: u64,
    late: u64,
    unsent: u64,
    depths: Depths,
    slowest: Vec<Journey>,
}

#[derive(Debug, Deserialize)]
struct JvmStep {
    hist: String,
    rate: JvmRate,
}

/// The JVM's own work while the run's threads were measured, as its management beans count
/// it: collections (every collector) and the compiler threads' compiling, summed over runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JvmRuntime {
    /// Measured runs counted. One run's figures, as `LatencyRun` writes them, carry no count
    /// (0 here): such a part counts as one run when summed ([`JvmRuntime::sum`]), so a sum
    /// over runs and a sum over forks' sums both count runs.
    #[serde(default)]
    pub runs: usize,
    /// Collections during them.
    pub gc_count: u64,
    /// Milliseconds the collectors took (stop-the-world with the serial collector).
    pub gc_ms: u64,
    /// Milliseconds the compiler threads spent compiling (`None`: the JVM does not count it).
    pub jit_ms: Option<u64>,
    /// Milliseconds the runs took, wall clock.
    pub wall_ms: f64,
}

impl JvmRuntime {
    /// The sum of `parts`; `None` for none.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a JvmRuntime>) -> Option<JvmRuntime> {
        let mut out: Option<JvmRuntime> = None;
        for p in parts {
            let o = out.get_or_insert_with(|| JvmRuntime { jit_ms: Some(0), ..Default::default() });
            o.runs += p.runs.max(1);
            o.gc_count += p.gc_count;
            o.gc_ms += p.gc_ms;
            o.jit_ms = o.jit_ms.zip(p.jit_ms).map(|(a, b)| a + b);
            o.wall_ms += p.wall_ms;
        }
        out
    }
}

#[derive(Debug, Deserialize)]
struct JvmRun {
    warmup: bool,
    verdict: String,
    #[serde(default)]
    runtime: Option<JvmRuntime>,
    #[serde(default)]
    hist: Option<String>,
    #[serde(default)]
    uncorrected: Option<String>,
    #[serde(default)]
    rate: Option<JvmRate>,
    #[serde(default)]
    steps: Vec<JvmStep>,
}

#[derive(Debug, Deserialize)]
struct JvmOut {
    #[serde(default)]
    wait_strategy: Option<String>,
    #[serde(default)]
    disruptor_version: Option<String>,
    #[serde(default)]
    hdrhistogram_version: Option<String>,
    jvm: Value,
    runs: Vec<JvmRun>,
}

/// The `--impl` of `LatencyRun` for a JVM variant.
fn impl_of(variant: &str) -> Result<&'static str, String> {
    match variant {
        "jvm-lbq" => Ok("lbq"),
        "jvm-disruptor" | bus::SEED_DISRUPTOR => Ok("disruptor"),
        _ => Err(format!(
            "variant '{variant}' is not one handoff-latency runs on the JVM; valid: {}",
            VARIANTS.join(", ")
        )),
    }
}

/// The command: `java`, the flags, the class path of the variant, `LatencyRun` and the
/// cell's workload; its threads pinned as the Rust rows' are (each to its own CPU where
/// they fit).
fn command(c: &Cell, variant: &str) -> Result<std::process::Command, String> {
    let flags = bus::gc_flags(bus::DEFAULT_GC, HEAP_BYTES).expect("a known collector");
    let program = JvmProgram {
        java: DEFAULT_JAVA.to_string(),
        flags: flags.split_whitespace().map(str::to_string).collect(),
        class_path: bus::class_path(variant)?,
        main_class: MAIN.to_string(),
    };
    // A jvm-disruptor row's wait is already the JVM's name (the queue takes none).
    let wait = c.wait.as_deref().unwrap_or("blocking");
    let mut args: Vec<String> = [
        ("--impl", impl_of(variant)?.to_string()),
        ("--wait", wait.to_string()),
        ("--ring-size", c.ring_size.to_string()),
        ("--warmup", c.warmup.to_string()),
        ("--runs", c.runs.to_string()),
        ("--jit-warmup", JIT_WARMUP.to_string()),
        ("--p99-bound-ns", c.p99_bound_ns.to_string()),
    ]
    .into_iter()
    .flat_map(|(k, v)| [k.to_string(), v])
    .collect();
    let (workload, threads, extra) = match c.work {
        Work::PingPong { trips } => ("ping-pong", 2, vec![("--trips", trips.to_string())]),
        Work::FixedRate { rate, producers, duration_ms } => (
            "fixed-rate",
            producers + 1,
            vec![
                ("--rate", (rate.round() as u64).to_string()),
                ("--producers", producers.to_string()),
                ("--duration-ms", duration_ms.to_string()),
            ],
        ),
        Work::Sweep { from, steps, step_ms, producers } => (
            "sweep",
            producers + 1,
            vec![
                ("--rate", (from.round() as u64).to_string()),
                ("--producers", producers.to_string()),
                ("--duration-ms", step_ms.to_string()),
                ("--sweep-steps", steps.to_string()),
            ],
        ),
        Work::Pipeline { .. } => {
            return Err("the pipeline workload runs the ring and the locked queue only".into())
        }
    };
    args.extend(["--workload".to_string(), workload.to_string()]);
    let p = c.plant;
    if p.work_ns > 0 {
        return Err("a slow consumer (work_ns) is not planted on the JVM's side".into());
    }
    for (k, v) in [
        ("--stall-every", p.stall_every),
        ("--stall-ns", p.stall_ns),
        ("--send-late-ns", p.send_late_ns),
    ] {
        if v > 0 {
            args.extend([k.to_string(), v.to_string()]);
        }
    }
    args.extend(extra.into_iter().flat_map(|(k, v)| [k.to_string(), v]));
    if let Some(cpus) = placement::plan(Placement::Auto, threads)? {
        let list: Vec<String> = cpus.iter().map(ToString::to_string).collect();
        args.extend(["--pin".to_string(), list.join(",")]);
    }
    Ok(program.command(None, &args))
}

fn rate_run(corrected: &str, uncorrected: Option<&str>, r: JvmRate) -> Result<RateRun, String> {
    let corrected = hdr::decode(corrected)?;
    let uncorrected = uncorrected.map(hdr::decode).transpose()?.unwrap_or_else(hdr::hist);
    Ok(RateRun {
        corrected,
        uncorrected,
        planned: r.planned,
        sent: r.sent,
        late: r.late,
        unsent: r.unsent,
        depths: r.depths,
        slowest: r.slowest,
    })
}

/// One JVM run as one run of the cell.
fn one(c: &Cell, r: JvmRun) -> Result<One, String> {
    if r.verdict != "ok" {
        return Err(r.verdict);
    }
    let hist = || r.hist.as_deref().ok_or("the JVM gave no histogram for a run");
    Ok(match c.work {
        Work::PingPong { .. } => {
            let h = hdr::decode(hist()?)?;
            let score = h.value_at_quantile(0.5) as f64;
            One { corrected: h, uncorrected: None, score, rate: None, steps: Vec::new() }
        }
        Work::FixedRate { rate, .. } => {
            let facts = r.rate.ok_or("the JVM gave no account of a fixed-rate run")?;
            let run = rate_run(hist()?, r.uncorrected.as_deref(), facts)?;
            rated_one(run, rate, c.p99_bound_ns, false)
        }
        Work::Sweep { .. } => {
            let mut steps = Vec::new();
            for s in r.steps {
                let rate = s.rate.offered;
                steps.push(step(&rate_run(&s.hist, None, s.rate)?, rate, c.p99_bound_ns));
            }
            let score = highest_sustained(&steps);
            One { corrected: hdr::hist(), uncorrected: None, score, rate: None, steps }
        }
        Work::Pipeline { .. } => return Err("no JVM pipeline".into()),
    })
}

/// The cell, in one JVM.
pub fn run_cell(c: &Cell, ctx: &mut Ctx) -> Result<LatOutcome, String> {
    let variant = c.variant.as_deref().ok_or("a JVM cell names its variant")?;
    if let Some(why) = bus::variant_unavailable(variant) {
        return Err(why);
    }
    let mut cmd = command(c, variant)?;
    let outcome = bus::converse(&mut cmd, ctx, MAIN, |_: Seen<'_>| {})?;
    let out: JvmOut =
        serde_json::from_value(outcome).map_err(|e| format!("{MAIN}'s outcome: {e}"))?;
    let jvm = JvmFacts {
        java: out.jvm.get("version").and_then(Value::as_str).unwrap_or_default().to_string(),
        flags: serde_json::from_value(out.jvm.get("flags").cloned().unwrap_or_default())
            .unwrap_or_default(),
        wait_strategy: out.wait_strategy,
        disruptor_version: out.disruptor_version,
        hdrhistogram_version: out.hdrhistogram_version,
        jit_warmup_runs: JIT_WARMUP,
    };
    let expected = c.warmup + c.runs;
    if out.runs.len() != expected {
        return Err(format!("{MAIN} reported {} runs of {expected}", out.runs.len()));
    }
    let runtime =
        JvmRuntime::sum(out.runs.iter().filter(|r| !r.warmup).filter_map(|r| r.runtime.as_ref()));
    let mut collect = Collect::default();
    for (i, r) in out.runs.into_iter().enumerate() {
        let warmup = r.warmup;
        collect.push(i, warmup, one(c, r))?;
    }
    let mut outcome = collect.finish()?;
    outcome.jvm = Some(jvm);
    outcome.jvm_runtime = runtime;
    Ok(outcome)
}
