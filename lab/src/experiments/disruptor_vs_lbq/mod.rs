//! `disruptor-vs-lbq`: seed 001, the game-server message bus moved from Java's
//! `LinkedBlockingQueue` to the LMAX Disruptor. P producers (1..6), one consumer; the
//! locked queue (the LBQ port) against the ring (the Disruptor port, Blocking wait), with
//! any of the reference peers beside them: duration and QPS per P with paired ratios,
//! latency of sampled messages, CPU per thread, context switches, a heap profile and a
//! trace per cell.

mod allocators;
mod inrun;

use crate::experiment::{
    size, CellPlan, Defaults, Experiment, Measured, Outcome, Plan, Shared, Switch, TraceMode,
};
use crate::experiment::{CellRecord, Finished};
use crate::measure::harness::{self, CellOutput, CellSpec, PAYLOADS};
use crate::measure::variants::{self, WAITS};
use crate::profile::counters::{self, RunCounters, Values};
use crate::protocol::Ctx;
use crate::results::{Chart, FileLink, Results, Row, Status, Table};
use crate::stats::percentiles::Percentiles;
use crate::units::{fmt_num, group};
use crate::units::{parse_list, parse_producers};
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The experiment.
#[derive(Debug)]
pub struct DisruptorVsLbq;

/// Messages per run by default: the default run (two variants × six P in 27 rounds, plus
/// the heap and trace passes) ends in about two minutes on 2 cores. The seed used 32Mi.
pub const DEFAULT_MESSAGES: &str = "1Mi";

/// Heap runs are slow (a backtrace per allocation): at most this many messages.
pub const DEFAULT_HEAP_MESSAGES: u64 = 100_000;

/// Producer counts, `1,2,4` or `1..6`.
#[derive(Debug, Clone, Serialize)]
pub struct Producers(pub Vec<usize>);

fn producers(s: &str) -> Result<Producers, String> {
    parse_producers(s).map(Producers)
}

fn payload(s: &str) -> Result<usize, String> {
    let n = size(s)? as usize;
    if PAYLOADS.contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "payload {n} is not compiled in; valid: {}",
            PAYLOADS.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ")
        ))
    }
}

/// Its options.
#[derive(Args, Debug, Clone, Serialize)]
pub struct DvlArgs {
    /// Messages per run: a number or a size like 32Mi, 1M (the seed: 32Mi).
    #[arg(long, value_parser = size, default_value = DEFAULT_MESSAGES)]
    pub messages: u64,
    /// Producer counts: `1,2,4` or `1..6`.
    #[arg(long, value_parser = producers, default_value = "1..6")]
    pub producers: Producers,
    /// Variants: any of locked,ring,reactive,naive,crossbeam,std-mpsc,disruptor-rs, or
    /// `all` [default: locked,ring].
    #[arg(long)]
    pub variants: Option<String>,
    /// The row ratios are taken against [default: locked, or the first variant].
    #[arg(long)]
    pub baseline: Option<String>,
    /// Ring wait strategy: blocking, sleeping, yielding, busy-spin, a list, or `all`.
    #[arg(long, default_value = "blocking")]
    pub wait: String,
    /// Ring size, a power of two (also the bound of the channel peers; the seed: 32Mi).
    #[arg(long, value_parser = size, default_value = "64Ki")]
    pub ring_size: u64,
    /// Bound of the locked queue [default: unbounded, as the seed].
    #[arg(long, value_parser = size)]
    pub capacity: Option<u64>,
    /// Payload bytes per message [possible values: 16, 64, 256].
    #[arg(long, value_parser = payload, default_value = "16")]
    pub payload: usize,
    /// Messages in each heap run [default: min(messages, 100000)].
    #[arg(long, value_parser = size)]
    pub heap_messages: Option<u64>,
    /// Messages in each trace run [default: messages].
    #[arg(long, value_parser = size)]
    pub trace_messages: Option<u64>,
    /// Stamp every K-th message of each producer for latency (0: off).
    #[arg(long, value_parser = size, default_value = "1024")]
    pub sample_every: u64,
    /// Most messages the consumer takes per recv_batch (1: recv one at a time).
    #[arg(long, value_parser = size, default_value = "1024")]
    pub batch: u64,
    /// Each timed fork keeps measuring past --runs until its measured runs add up to about
    /// this many ms (at most 100 runs): the ring's runs are short and noisy one by one.
    #[arg(long, value_parser = size, default_value = "300")]
    pub min_fork_ms: u64,
    /// A timed fork whose runs spread widely (interquartile range over 30% of their median,
    /// as time-sliced runs do where threads outnumber cores) keeps measuring until they add
    /// up to this many ms (0: never).
    #[arg(long, value_parser = size, default_value = "900")]
    pub spread_fork_ms: u64,
    /// JVM flags of the jvm-* rows.
    #[arg(long, default_value = crate::measure::jvm::DEFAULT_FLAGS, allow_hyphen_values = true)]
    pub jvm_flags: String,
    /// The jvm-disruptor's wait strategy: `matching` pairs each Rust strategy with its JVM
    /// counterpart (blocking → lite-blocking), or blocking, lite-blocking, sleeping,
    /// yielding, busy-spin.
    #[arg(long, default_value = "matching", value_parser = ["matching", "blocking", "lite-blocking", "sleeping", "yielding", "busy-spin"])]
    pub jvm_wait: String,
    /// JIT warm-up passes (min(messages, 1M) each) in every JVM fork before its runs.
    #[arg(long, value_parser = size, default_value = "2")]
    pub jit_warmup: u64,
    /// Global allocator of the Rust rows' children, a dimension like --producers: system
    /// (the default: std's, glibc malloc here, the least favourable to the node-per-message
    /// ports), mimalloc, jemalloc, a list, or `all`. JVM rows and the heap pass (dhat)
    /// ignore it.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "system")]
    pub allocator: Vec<AllocatorArg>,
    /// Where each run's threads run, JVM rows included: `auto` pins each thread to its own
    /// CPU when the run's threads fit the CPUs (and leaves oversubscribed runs to the
    /// kernel), `spread` always pins round-robin, `kernel` never pins.
    #[arg(long, value_enum, default_value = "auto")]
    pub placement: crate::machine::placement::Placement,
}

use allocators::AllocatorArg;

use crate::measure::variants::is_jvm;

impl Outcome for CellOutput {
    fn measured(&self) -> Vec<Measured> {
        self.runs
            .iter()
            .map(|r| Measured { value: r.ms, valid: r.valid, verdict: r.verdict.clone() })
            .collect()
    }

    fn failure(&self) -> Option<String> {
        self.runs.iter().chain(&self.warmup).find(|r| !r.valid).map(|r| r.verdict.clone())
    }
}

fn chosen_variants(a: &DvlArgs, notes: &mut Vec<String>) -> Result<Vec<String>, String> {
    let explicit = a.variants.is_some();
    let requested: Vec<String> = match a.variants.as_deref() {
        Some("all") => variants::all()
            .into_iter()
            .filter(|v| !v.name.starts_with("fault-") && v.unavailable.is_none())
            .map(|v| v.name.to_string())
            .collect(),
        Some(list) => parse_list(list),
        None => vec!["locked".to_string(), "ring".to_string()],
    };
    if requested.is_empty() {
        return Err("--variants: no variant given".into());
    }
    let mut chosen = Vec::new();
    let jvm_missing = crate::measure::jvm::unavailable();
    for name in &requested {
        let info = variants::find(name).ok_or_else(|| variants::unknown_variant(name))?;
        if let (true, Some(why)) = (is_jvm(name), &jvm_missing) {
            if a.variants.as_deref() != Some("all") {
                return Err(format!("variant '{name}' cannot run here: {why}"));
            }
            notes.push(format!("'{name}' was left out of `all`: {why}."));
            continue;
        }
        if let Some(why) = info.unavailable {
            if explicit {
                return Err(format!("variant '{name}' is unavailable in this build: {why}"));
            }
            notes.push(format!("'{name}' was left out of the defaults: {why}."));
            continue;
        }
        if !chosen.contains(name) {
            chosen.push(name.clone());
        }
    }
    if chosen.is_empty() {
        return Err("no runnable variant left (see `lab list`)".into());
    }
    Ok(chosen)
}

fn waits(a: &DvlArgs) -> Result<Vec<String>, String> {
    if a.wait == "all" {
        return Ok(WAITS.iter().map(|w| w.0.to_string()).collect());
    }
    let w = parse_list(&a.wait);
    for x in &w {
        variants::check_wait(x).map_err(|e| format!("--wait: {e}"))?;
    }
    if w.is_empty() {
        return Err("--wait: no wait strategy given".into());
    }
    Ok(w)
}

fn spread_note(messages: u64, producers: &[usize]) -> Option<String> {
    let uneven: Vec<usize> =
        producers.iter().copied().filter(|p| messages % *p as u64 != 0).collect();
    (!uneven.is_empty()).then(|| {
        let parts: Vec<String> = uneven
            .iter()
            .map(|&p| {
                let (q, rem) = (messages / p as u64, messages % p as u64);
                format!("P={p}: {rem} producer(s) send {} and {} send {q}", q + 1, p as u64 - rem)
            })
            .collect();
        format!(
            "{messages} messages do not divide evenly by every producer count, so they are \
             spread (the first producers send one more): {}.",
            parts.join("; ")
        )
    })
}

impl Experiment for DisruptorVsLbq {
    const NAME: &'static str = "disruptor-vs-lbq";
    const ABOUT: &'static str = "seed 001, the game-server message bus (LinkedBlockingQueue → \
        Disruptor): P producers (1..6), one consumer; the locked queue against the ring \
        (Blocking wait): duration, QPS and paired ratios, latency, CPU, heap, traces";
    const DEFAULTS: Defaults = Defaults {
        // A ratio's 99% repeat interval steps inward only at some n, and is exact only for
        // odd n: 27 rounds take the 5th and 23rd per-round ratio (18 took the 2nd and
        // 17th, about half as wide again), at about two minutes of forks on 2 cores.
        rounds: 27,
        runs: 2,
        warmup: 1,
        trace: &[TraceMode::Flight, TraceMode::Full, TraceMode::InRun, TraceMode::Off],
        heap: Some(Switch::On),
    };
    const MAKE_UP_ROUNDS: bool = true;
    type Args = DvlArgs;
    type Cell = CellSpec;
    type Outcome = CellOutput;

    fn plan(a: &DvlArgs, shared: &Shared) -> Result<Plan<CellSpec>, String> {
        let mut notes = Vec::new();
        if a.messages == 0 {
            return Err("--messages must be at least 1 (got 0)".into());
        }
        let ring_size = a.ring_size as usize;
        if !ring_size.is_power_of_two() {
            return Err(format!(
                "--ring-size must be a power of two (got {ring_size}); e.g. 65536, 64Ki, 32Mi"
            ));
        }
        if a.capacity == Some(0) {
            return Err("--capacity must be at least 1 (got 0); omit it for unbounded".into());
        }
        if a.batch == 0 {
            return Err("--batch must be at least 1 (got 0)".into());
        }
        let heap_messages = a.heap_messages.unwrap_or(a.messages.min(DEFAULT_HEAP_MESSAGES));
        let trace_messages = a.trace_messages.unwrap_or(a.messages);
        if heap_messages == 0 || trace_messages == 0 {
            return Err("--heap-messages and --trace-messages must be at least 1".into());
        }
        let waits = waits(a)?;
        let chosen = chosen_variants(a, &mut notes)?;
        let allocs = allocators::expand(&a.allocator);
        let several = allocs.len() > 1;
        let reference = allocators::reference(&allocs);
        let classes = if chosen.iter().any(|v| is_jvm(v)) {
            Some(crate::measure::jvm::build()?.display().to_string())
        } else {
            None
        };
        let mut cells = Vec::new();
        let mut first_ring = true;
        for &p in &a.producers.0 {
            for v in &chosen {
                let takes_wait = variants::find(v).is_some_and(|i| i.takes_wait);
                let ws: Vec<Option<String>> =
                    if takes_wait { waits.iter().cloned().map(Some).collect() } else { vec![None] };
                // The JVM rows run on the JVM's own allocator: one row each.
                let als: Vec<Option<&str>> =
                    if is_jvm(v) { vec![None] } else { allocs.iter().copied().map(Some).collect() };
                for (w, al) in ws.iter().flat_map(|w| als.iter().map(move |al| (w.clone(), *al))) {
                    let mut label = match &w {
                        Some(w) if waits.len() > 1 => format!("{v}[{w}]"),
                        _ => v.clone(),
                    };
                    if let (Some(al), true) = (al, several) {
                        label = format!("{label}@{al}");
                    }
                    // One sampled/unsampled pair per fork of the first ring cell measures
                    // what latency sampling costs, over as many forks as there are rounds.
                    let pairs = usize::from(v == "ring" && first_ring && a.sample_every > 0);
                    first_ring &= pairs == 0;
                    let spec = CellSpec {
                        variant: v.clone(),
                        wait: w.clone(),
                        producers: p,
                        messages: a.messages,
                        warmup: shared.warmup as usize,
                        runs: shared.runs as usize,
                        ring_size,
                        capacity: a.capacity.map(|c| c as usize),
                        prefetch: 256,
                        payload: a.payload,
                        sample_every: a.sample_every,
                        batch: a.batch as usize,
                        sampling_ab_pairs: pairs,
                        heap_messages,
                        trace_messages,
                        min_measure_ms: a.min_fork_ms as f64,
                        spread_measure_ms: a.spread_fork_ms as f64,
                        in_run_trace: None,
                        jvm: classes.as_ref().filter(|_| is_jvm(v)).map(|c| {
                            crate::measure::harness::JvmSettings {
                                classes: c.clone(),
                                flags: a.jvm_flags.clone(),
                                wait: match a.jvm_wait.as_str() {
                                    "matching" => crate::measure::jvm::matching_wait(
                                        w.as_deref().unwrap_or("blocking"),
                                    )
                                    .to_string(),
                                    other => other.to_string(),
                                },
                                jit_warmup: a.jit_warmup,
                                drop_one: v == "fault-jvm-lbq",
                            }
                        }),
                        allocator: al.map(str::to_string),
                        placement: a.placement,
                    };
                    let mut c = CellPlan::new(spec, label, format!("P={p}"))
                        .key("variant", v.as_str())
                        .key("producers", p);
                    if let Some(w) = &w {
                        c = c.key("wait", w.as_str());
                    }
                    if let (Some(al), true) = (al, several) {
                        c = c.key("allocator", al);
                    }
                    c.binary = al.and_then(allocators::binary);
                    // dhat counts the same allocations under every allocator: one heap pass
                    // (the reference allocator's) per variant and P is enough.
                    c.heap &= al.is_none_or(|al| al == reference);
                    c.file_stem = format!("{}-p{p}", c.file_stem.replace('@', "-"));
                    c.threads = p + 1;
                    // The JVM's own instruments stand for the heap pass; no Rust recorder
                    // can listen to it.
                    c.heap &= !is_jvm(v);
                    c.trace &= !is_jvm(v);
                    cells.push(c);
                }
            }
        }
        let labels: Vec<&str> = cells.iter().map(|c| c.label.as_str()).collect();
        // With several allocators a plain baseline (`locked`) means one per allocator:
        // every row is paired with the baseline of its own allocator.
        let per_allocator =
            several && !a.baseline.as_ref().is_some_and(|b| labels.contains(&b.as_str()));
        let (baseline, baseline_name, mut pairs) = if per_allocator {
            let (b, pairs) = allocators::own_baselines(&labels, &allocs, a.baseline.as_deref())?;
            (None, b, pairs)
        } else {
            let baseline = match &a.baseline {
                Some(b) if labels.contains(&b.as_str()) => b.clone(),
                Some(b) => {
                    let mut valid: Vec<&str> = labels.clone();
                    valid.dedup();
                    return Err(format!(
                        "--baseline '{b}' is not a row of this run; valid: {}",
                        valid.join(", ")
                    ));
                }
                None if labels.contains(&"locked") => "locked".into(),
                None => labels[0].to_string(),
            };
            (Some(baseline.clone()), baseline, Vec::new())
        };
        notes.extend(spread_note(a.messages, &a.producers.0));
        if shared.heap == Switch::On && (several || allocs != ["system"]) {
            notes.push(format!(
                "Heap passes run in lab-heap under dhat whatever the allocator (dhat counts \
                 allocations, not allocator speed){}.",
                if several {
                    format!("; only the {reference} rows get one, the counts being the same code's")
                } else {
                    String::new()
                }
            ));
        }
        // Each port against its JVM original, label by label (ring[w] ↔ jvm-disruptor[w],
        // ring@mimalloc ↔ jvm-disruptor).
        for (port, orig) in [("locked", "jvm-lbq"), ("ring", "jvm-disruptor")] {
            for l in labels.iter().filter(|l| l.split(['[', '@']).next() == Some(port)) {
                let o = allocators::split_label(l).0.replacen(port, orig, 1);
                if labels.contains(&o.as_str()) && !pairs.contains(&(l.to_string(), o.clone())) {
                    pairs.push((l.to_string(), o));
                }
            }
        }
        let mut plan = Plan {
            cells,
            baseline,
            pairs,
            config: json!({"variants": chosen, "waits": waits, "heap_messages": heap_messages,
                           "trace_messages": trace_messages, "baseline": baseline_name,
                           "baseline_per_allocator": per_allocator,
                           "allocators": allocs}),
            input_size: a.messages,
            notes,
        };
        inrun::twins(shared.trace, &mut plan);
        Ok(plan)
    }

    fn run_cell(cell: &CellSpec, ctx: &mut Ctx) -> Result<CellOutput, String> {
        if cell.jvm.is_some() {
            return crate::measure::jvm::run(cell, ctx);
        }
        // A cell's timed and trace children must run on its allocator's binary.
        let heap = matches!(ctx.pass, crate::protocol::Pass::Heap { .. });
        if let (Some(want), false) = (&cell.allocator, heap) {
            if want != ctx.allocator {
                return Err(format!(
                    "the cell asks for allocator {want}; this child runs on {}",
                    ctx.allocator
                ));
            }
        }
        let mut out = harness::run_spec(cell, ctx)?;
        out.allocator = Some(ctx.allocator.to_string());
        Ok(out)
    }

    fn analyse(a: &DvlArgs, run: &Finished<Self>, out: &mut Results) {
        let cores = out.environment.cores.max(1);
        // Reading the dhat files is the slow part of analysing: untimed, so in parallel.
        let sites: Vec<Vec<crate::profile::dhat::Site>> = {
            use rayon::prelude::*;
            run.cells
                .par_iter()
                .map(|rec| match &rec.heap {
                    Some(h) if h.file_written => {
                        crate::profile::dhat::top_sites(&run.dir.join(&h.file), 5, 4)
                            .unwrap_or_default()
                    }
                    _ => Vec::new(),
                })
                .collect()
        };
        for ((row, rec), sites) in out.results.iter_mut().zip(&run.cells).zip(sites) {
            fill_row(row, rec, cores, sites);
        }
        inrun::analyse(run, out);
        out.tables = headline_tables(out);
        out.tables.extend(inrun::cost_table(out));
        out.tables.extend(allocators::table(out));
        if let Some(al) = run_allocators(run) {
            out.environment.timed_allocator = allocators::environment_text(&al);
        }
        out.tables.push(forks_table(out));
        out.tables.push(latency_table(out, a.sample_every));
        out.tables.push(cpu_table(out));
        out.tables.push(counters_table(out));
        out.tables.extend(heap_table(out));
        out.tables.extend(jvm_table(out));
        out.tables.extend(crate::report::failure_table(out, &["variant", "P"], |x| {
            vec![x.label.clone(), x.key_u64("producers").map_or("–".into(), |p| p.to_string())]
        }));
        out.charts = charts(out);
        out.why = super::why::section(out);
        for row in &out.results {
            for (k, what) in
                [("trace", "Chrome trace (Perfetto)"), ("heap_file", "dhat heap profile (dh_view)")]
            {
                if let Some(f) = row.detail.get(k).and_then(Value::as_str) {
                    out.files.push(FileLink {
                        file: f.to_string(),
                        what: format!("{what}: {} {}", row.label, row.group),
                    });
                }
            }
        }
        for rec in &run.cells {
            for (pass, r) in [("heap", &rec.heap), ("trace", &rec.trace)] {
                if let Some(Err(e)) = r.as_ref().map(|r| &r.result) {
                    out.notes.push(format!("{pass} {} {}: {e}", rec.plan.label, rec.plan.group));
                }
                if let Some(n) = r.as_ref().and_then(|r| r.note.as_ref()) {
                    out.notes.push(format!("trace {} {}: {n}", rec.plan.label, rec.plan.group));
                }
            }
            // The trace child's own notes (why off-CPU slices are missing or incomplete).
            let traced = rec.trace.as_ref().and_then(|t| t.result.as_ref().ok());
            for n in traced.into_iter().flat_map(|o| &o.notes) {
                out.notes.push(format!("trace {} {}: {n}", rec.plan.label, rec.plan.group));
            }
        }
        out.method.extend(method_lines(a, out));
        if let Some(j) = out.results.iter().find_map(|x| x.detail.get("jvm")) {
            let jvm = &j["jvm"];
            out.environment.notes.push(format!(
                "JVM rows: {} {} (java {}), flags {}; Disruptor {}",
                jvm["vm_name"].as_str().unwrap_or("?"),
                jvm["vm_version"].as_str().unwrap_or("?"),
                jvm["version"].as_str().unwrap_or("?"),
                jvm["flags"],
                j["disruptor_version"].as_str().unwrap_or("–")
            ));
            out.method.push(format!(
                "JVM originals (tools/jvm/Bus.java) run as forks like the Rust rows: a new \
                 LinkedBlockingQueue or Disruptor per run, {} JIT warm-up pass(es) of \
                 min(messages, 1M) before the warm-up runs, the same messages, split and \
                 checksum as the Rust harness. Pairs compared: locked ↔ jvm-lbq (both {}), \
                 ring ↔ jvm-disruptor with ProducerType.SINGLE at P=1 (the Rust ring's \
                 single-producer sequencer) and MULTI above, Rust {} ↔ JVM {}.",
                a.jit_warmup,
                a.capacity.map_or("unbounded".to_string(), |c| format!("bounded at {c}")),
                a.wait,
                j["wait"].as_str().unwrap_or("?"),
            ));
        }
        out.method.extend(sampling_lines(run, a.sample_every));
    }
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
    /// Messages in the profiled run.
    pub messages: u64,
    /// Whether the profiled run passed its checks.
    pub valid: bool,
    /// Largest allocation sites.
    pub top_sites: Vec<crate::profile::dhat::Site>,
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

fn cpu_of(outs: &[&CellOutput], cores: usize) -> Option<Cpu> {
    let runs: Vec<&harness::RunResult> =
        outs.iter().flat_map(|o| o.runs.iter()).filter(|r| r.valid).collect();
    let first = runs.first()?;
    let threads = first
        .threads
        .iter()
        .map(|t| {
            let of = |f: fn(&crate::profile::usage::ThreadUsage) -> f64| {
                mean(runs.iter().flat_map(|r| r.threads.iter()).filter(|u| u.name == t.name).map(f))
            };
            ThreadCpu {
                name: t.name.clone(),
                cpu_ms: of(|t| t.cpu_ms),
                sys_ms: of(|t| t.sys_ms),
                voluntary_cs: of(|t| t.voluntary_cs as f64),
                involuntary_cs: of(|t| t.involuntary_cs as f64),
            }
        })
        .collect();
    let process_pct = mean(runs.iter().map(|r| r.process_pct));
    Some(Cpu { process_pct, machine_pct: process_pct / cores as f64, threads })
}

/// A row's `counters`, `counters_by_thread` and `counters_note`: per event, the median over
/// forks of each fork's median over its valid measured runs (values already per message).
fn counters_of(
    outs: &[&CellOutput],
    jvm: bool,
) -> (Option<Values>, Option<BTreeMap<String, Values>>, Option<String>) {
    let forks: Vec<Vec<&RunCounters>> = outs
        .iter()
        .map(|o| o.runs.iter().filter(|r| r.valid).filter_map(|r| r.counters.as_ref()).collect())
        .filter(|runs: &Vec<&RunCounters>| !runs.is_empty())
        .collect();
    if forks.is_empty() {
        let why = if jvm {
            "not counted: the JVM's threads run outside the lab's harness"
        } else {
            "not counted: no valid measured run"
        };
        return (None, None, Some(why.to_string()));
    }
    let process: Vec<Vec<&Values>> =
        forks.iter().map(|runs| runs.iter().map(|r| &r.process).collect()).collect();
    let mut names: Vec<&String> = forks.iter().flatten().flat_map(|r| r.threads.keys()).collect();
    names.sort();
    names.dedup();
    let by_thread = names
        .into_iter()
        .map(|name| {
            let per_fork: Vec<Vec<&Values>> = forks
                .iter()
                .map(|runs| runs.iter().filter_map(|r| r.threads.get(name)).collect())
                .collect();
            (name.clone(), counters::median_of_medians(&per_fork))
        })
        .collect();
    let mut notes: Vec<&str> = Vec::new();
    for n in forks.iter().flatten().filter_map(|r| r.note.as_deref()) {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    (Some(counters::median_of_medians(&process)), Some(by_thread), note)
}

/// Per percentile, the median over forks (each fork's histogram covers its runs).
fn latency_of(outs: &[&CellOutput]) -> Option<Percentiles> {
    Percentiles::median_over(outs.iter().filter_map(|o| o.latency_ns.as_ref()))
}

fn fill_row(
    row: &mut Row,
    rec: &CellRecord<DisruptorVsLbq>,
    cores: usize,
    top_sites: Vec<crate::profile::dhat::Site>,
) {
    let spec = &rec.plan.cell;
    let outs: Vec<&CellOutput> = rec.outcomes().collect();
    let all: Vec<&CellOutput> = rec.forks.iter().filter_map(|f| f.outcome.as_ref()).collect();
    let runs_ms: Vec<f64> = rec.forks.iter().flat_map(|f| f.fork.runs.iter().copied()).collect();
    let briefs: Vec<Value> = all
        .iter()
        .flat_map(|o| o.runs.iter())
        .map(|r| json!({"ms": r.ms, "valid": r.valid, "verdict": if r.valid { "ok".to_string() } else { format!("INVALID: {}", r.verdict) }}))
        .collect();
    let valid_ms: Vec<f64> = outs.iter().flat_map(|o| o.runs.iter().map(|r| r.ms)).collect();
    let min = valid_ms.iter().copied().reduce(f64::min);
    let max = valid_ms.iter().copied().reduce(f64::max);
    let qps = row.score.filter(|m| *m > 0.0).map(|m| spec.messages as f64 / (m / 1e3));
    let sample_cost = crate::stats::median(
        &outs.iter().map(|o| o.sample_cost_ns).filter(|c| *c > 0.0).collect::<Vec<_>>(),
    );
    let est = match (row.score, sample_cost) {
        (Some(m), Some(c)) if spec.sample_every > 0 && m > 0.0 => {
            Some(c / spec.sample_every as f64 / (m * 1e6 / spec.messages as f64) * 100.0)
        }
        _ => None,
    };
    let d = &mut row.detail;
    d.insert("variant".into(), json!(spec.variant));
    d.insert("wait".into(), json!(spec.wait));
    d.insert("producers".into(), json!(spec.producers));
    d.insert("messages".into(), json!(spec.messages));
    d.insert("per_producer".into(), json!(handoff::spread(spec.messages, spec.producers)));
    d.insert("payload".into(), json!(spec.payload));
    d.insert("allocator".into(), json!(spec.allocator));
    let mut in_child: Vec<&str> = outs.iter().filter_map(|o| o.allocator.as_deref()).collect();
    in_child.sort_unstable();
    in_child.dedup();
    d.insert(
        "allocator_in_child".into(),
        json!((!in_child.is_empty()).then(|| in_child.join(","))),
    );
    d.insert("runs_ms".into(), json!(runs_ms));
    d.insert("runs".into(), json!(briefs));
    d.insert("median_ms".into(), json!(row.score));
    d.insert("min_ms".into(), json!(min));
    d.insert("max_ms".into(), json!(max));
    d.insert("qps".into(), json!(qps));
    d.insert("latency_ns".into(), json!(latency_of(&outs)));
    d.insert("cpu".into(), json!(cpu_of(&outs, cores)));
    let (counters, by_thread, note) = counters_of(&outs, is_jvm(&spec.variant));
    d.insert("counters".into(), json!(counters));
    d.insert("counters_by_thread".into(), json!(by_thread));
    d.insert("counters_note".into(), json!(note));
    let faults: Vec<f64> = outs
        .iter()
        .flat_map(|o| o.runs.iter().filter(|r| r.valid))
        .map(|r| r.page_faults as f64 / spec.messages as f64)
        .collect();
    // The JVM rows do not count their page faults (Bus reports none): null, not 0.
    let faults = (!is_jvm(&spec.variant)).then(|| crate::stats::median(&faults));
    d.insert("page_faults_per_message".into(), json!(faults.flatten()));
    let pinned = outs.iter().find_map(|o| o.pinned_cpus.clone());
    d.insert("pinned_cpus".into(), json!(pinned));
    d.insert("sample_cost_ns".into(), json!(sample_cost));
    d.insert("sampling_overhead_est_pct".into(), json!(est));
    let trace =
        rec.trace.as_ref().filter(|t| t.result.is_ok() && t.file_written).map(|t| t.file.clone());
    d.insert("trace".into(), json!(trace));
    let traced = rec.trace.as_ref().and_then(|t| t.result.as_ref().ok());
    d.insert("off_cpu_by_thread".into(), json!(traced.and_then(|o| o.off_cpu.as_ref())));
    if let Some(n) = traced.and_then(|o| o.off_cpu_note.as_ref()) {
        d.insert("off_cpu_note".into(), json!(n));
    }
    let heap = rec.heap.as_ref().and_then(|h| {
        let (Ok(o), Some(t), true) = (&h.result, h.heap, h.file_written) else { return None };
        let m = spec.heap_messages.max(1) as f64;
        Some(Heap {
            file: h.file.clone(),
            total_blocks: t.total_blocks,
            total_bytes: t.total_bytes,
            max_bytes: t.max_bytes,
            blocks_per_message: t.total_blocks as f64 / m,
            bytes_per_message: t.total_bytes as f64 / m,
            messages: spec.heap_messages,
            valid: o.runs.iter().all(|r| r.valid),
            top_sites,
        })
    });
    d.insert("heap_file".into(), json!(heap.as_ref().map(|h| h.file.clone())));
    d.insert("heap".into(), json!(heap));
    if let Some(first) = outs.iter().find_map(|o| o.jvm.as_ref()) {
        let all = |f: fn(&crate::measure::harness::JvmReport) -> Vec<f64>| -> Vec<f64> {
            outs.iter().filter_map(|o| o.jvm.as_ref()).flat_map(f).collect()
        };
        let med = |v: Vec<f64>| crate::stats::median(&v);
        d.insert(
            "jvm".into(),
            json!({
                "jvm": first.jvm,
                "disruptor_version": first.disruptor_version,
                "producer_type": first.producer_type,
                "wait": first.wait,
                "jit_warmup_passes": first.jit_warmup_passes,
                "allocated_bytes_per_message": med(all(|j| j.allocated_bytes_per_message.clone())),
                "gc_ms_per_run": med(all(|j| j.gc_ms.clone())),
                "gc_count_per_run": med(all(|j| j.gc_count.iter().map(|c| *c as f64).collect())),
            }),
        );
    }
}

/// The JVM rows' own evidence: allocation per message and GC, from the JVM's instruments.
fn jvm_table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "JVM rows: bytes allocated per message (ThreadMXBean) and GC per run (GC beans), medians over runs",
        &["variant", "P", "producer type", "wait strategy", "bytes/msg", "GCs/run", "GC ms/run", "JIT passes"],
    );
    for x in &r.results {
        let Some(j) = x.detail.get("jvm") else { continue };
        let f = |k: &str, d: usize| j[k].as_f64().map_or("–".into(), |v| format!("{v:.d$}"));
        t.rows.push(vec![
            x.label.clone(),
            x.key_u64("producers").map_or("–".into(), |p| p.to_string()),
            j["producer_type"].as_str().unwrap_or("–").to_uppercase(),
            j["wait"].as_str().unwrap_or("–").to_string(),
            f("allocated_bytes_per_message", 1),
            f("gc_count_per_run", 1),
            f("gc_ms_per_run", 1),
            j["jit_warmup_passes"].to_string(),
        ]);
    }
    t.note = Some(
        "As seed 000 asks of JVM memory: bytes allocated as the JVM counts them, and GC \
         time, not totalMemory. The Rust rows' heap evidence is dhat's (the Heap table)."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

fn axes(r: &Results) -> (Vec<String>, Vec<u64>) {
    let mut labels: Vec<String> = Vec::new();
    // Traced twins have their own table (`inrun::cost_table`).
    for row in r.results.iter().filter(|x| !inrun::is_twin(&x.label)) {
        if !labels.contains(&row.label) {
            labels.push(row.label.clone());
        }
    }
    let mut ps: Vec<u64> = r.results.iter().filter_map(|x| x.key_u64("producers")).collect();
    ps.sort_unstable();
    ps.dedup();
    (labels, ps)
}

fn find<'a>(r: &'a Results, label: &str, p: u64) -> Option<&'a Row> {
    r.results.iter().find(|x| x.label == label && x.key_u64("producers") == Some(p))
}

fn qps_of(row: &Row, score: f64) -> f64 {
    row.detail.get("messages").and_then(Value::as_f64).unwrap_or(0.0) / (score / 1e3)
}

/// A cell's value: the score, or its two modes when bimodal; the status word otherwise.
fn cell_text(row: Option<&Row>, f: impl Fn(&Row, f64) -> String) -> String {
    let Some(r) = row else { return "–".into() };
    if r.status != Status::Ok {
        return r.status.word().to_string();
    }
    match (&r.modes, r.score) {
        (Some([lo, hi]), _) => format!(
            "bimodal: {} ({:.0}%) | {} ({:.0}%)",
            f(r, lo.median),
            lo.share * 100.0,
            f(r, hi.median),
            hi.share * 100.0
        ),
        (None, Some(s)) => f(r, s),
        _ => "–".into(),
    }
}

/// The seed's two headline tables, with a column per paired ratio (every row against the
/// baseline, and each port against its JVM original).
fn headline_tables(r: &Results) -> Vec<Table> {
    let (labels, ps) = axes(r);
    let mut pairs: Vec<(String, String)> = Vec::new();
    for x in r.ratios.iter().filter(|x| !inrun::is_twin(&x.variant)) {
        let p = (x.variant.clone(), x.baseline.clone());
        if !pairs.contains(&p) {
            pairs.push(p);
        }
    }
    let mut tables = Vec::new();
    for is_qps in [true, false] {
        let mut header = vec!["P".to_string()];
        header.extend(labels.iter().cloned());
        header.extend(pairs.iter().map(|(o, b)| {
            if is_qps {
                format!("{o}/{b} QPS [interval]")
            } else {
                format!("{o}/{b} duration")
            }
        }));
        let rows = ps
            .iter()
            .map(|&p| {
                let mut row = vec![p.to_string()];
                for l in &labels {
                    row.push(cell_text(find(r, l, p), |x, s| {
                        if is_qps {
                            group(qps_of(x, s))
                        } else {
                            fmt_num(s)
                        }
                    }));
                }
                for (o, b) in &pairs {
                    let x = r
                        .ratios
                        .iter()
                        .find(|x| &x.variant == o && &x.baseline == b && x.producers == Some(p));
                    row.push(match x {
                        Some(x) if is_qps => x.text(),
                        Some(x) => x.median.map_or("–".into(), |m| format!("{:.1}%", 100.0 / m)),
                        None => "–".into(),
                    });
                }
                row
            })
            .collect();
        let (title, note) = if is_qps {
            (
                "QPS (messages/s, from the median over forks)".to_string(),
                "Ratio = variant QPS / baseline QPS, taken within each round and summarised as \
                 the median over rounds with its repeat interval (99%: where the next run's \
                 median falls; the seed's 对比 column: 137% … 252%); 'unstable' marks an \
                 interval wider than ±10%."
                    .to_string(),
            )
        } else {
            (
                "Duration (ms per run, median over forks)".to_string(),
                "Ratio = variant duration / baseline duration, from the paired QPS ratio (the \
                 seed: 73% … 39.65%)."
                    .to_string(),
            )
        };
        tables.push(Table { title, header, rows, note: Some(note) });
    }
    tables
}

/// The forks of each row: scores, interval, modes, disturbance.
fn forks_table(r: &Results) -> Table {
    let mut t = Table::new(
        "Forks: scores (ms per run) over rounds, interval of the median, what disturbed them",
        &[
            "variant",
            "P",
            "status",
            "valid forks",
            "min",
            "median",
            "max",
            "interval",
            "modes",
            "steal max",
            "load avg",
            "CPU ns/op",
            "ping-pong ns",
            "threads > cores",
        ],
    );
    for x in &r.results {
        let s = x.fork_scores();
        let f = |v: Option<f64>| v.map_or("–".into(), fmt_num);
        let steal = x.forks.iter().filter_map(|f| f.disturbance.steal_pct).reduce(f64::max);
        let load = crate::stats::median(
            &x.forks.iter().filter_map(|f| f.disturbance.load_avg).collect::<Vec<_>>(),
        );
        t.rows.push(vec![
            x.label.clone(),
            x.key_u64("producers").map_or("–".into(), |p| p.to_string()),
            x.status.word().to_string(),
            format!("{}/{}", s.len(), x.forks.len()),
            f(s.iter().copied().reduce(f64::min)),
            f(x.score),
            f(s.iter().copied().reduce(f64::max)),
            x.score_ci.map_or("–".into(), |[a, b]| format!("[{}, {}]", fmt_num(a), fmt_num(b))),
            x.modes.as_ref().map_or("one".into(), |[a, b]| {
                format!("{} ×{} | {} ×{}", fmt_num(a.median), a.count, fmt_num(b.median), b.count)
            }),
            steal.map_or("–".into(), |s| format!("{s:.1}%")),
            load.map_or("–".into(), |l| format!("{l:.2}")),
            probe_text(&x.forks, |d| d.cpu_ns_per_op, 3),
            probe_text(&x.forks, |d| d.cpu_ping_pong_ns, 0),
            if x.forks.iter().any(|f| f.disturbance.oversubscribed) {
                "yes".into()
            } else {
                "no".into()
            },
        ]);
    }
    t.note = Some(
        "A fork is a fresh child process; its score is the median of its measured runs. \
         Steal is the hypervisor's share of CPU time during the fork (/proc/stat); \
         CPU ns/op is the speed probe before each fork (ns per dependent multiply-add, \
         mean over the CPUs; median and range over the forks: a higher figure is a slower \
         machine); ping-pong ns is the round trip of a cache line between the first two \
         CPUs, probed at the same time (where the host placed the virtual CPUs: a spinning \
         handoff's cost); threads > cores means the cell was oversubscribed."
            .into(),
    );
    t
}

/// "1.05 (0.98–1.13)": a probe's median and range over `forks`, to `digits`, or "–".
fn probe_text(
    forks: &[crate::results::Fork],
    probe: crate::stats::pairing::Probe,
    digits: usize,
) -> String {
    let v = crate::stats::pairing::probe_values(forks, probe);
    match (
        crate::stats::median(&v),
        v.iter().copied().reduce(f64::min),
        v.iter().copied().reduce(f64::max),
    ) {
        (Some(m), Some(lo), Some(hi)) => format!("{m:.digits$} ({lo:.digits$}–{hi:.digits$})"),
        _ => "–".into(),
    }
}

fn fmt_us(ns: u64) -> String {
    let us = ns as f64 / 1e3;
    if us >= 100.0 {
        format!("{us:.0}")
    } else {
        format!("{us:.1}")
    }
}

fn latency_table(r: &Results, every: u64) -> Table {
    let mut t = Table::new(
        "End-to-end latency of sampled messages (µs, publish → consume; median over forks)",
        &["variant", "P", "samples", "p50", "p90", "p99", "p99.9", "max"],
    );
    for x in &r.results {
        let p = x.key_u64("producers").map_or("–".into(), |p| p.to_string());
        t.rows.push(match x.detail::<Percentiles>("latency_ns") {
            Some(l) => vec![
                x.label.clone(),
                p,
                l.count.to_string(),
                fmt_us(l.p50),
                fmt_us(l.p90),
                fmt_us(l.p99),
                fmt_us(l.p999),
                fmt_us(l.max),
            ],
            None => [x.label.clone(), p, x.status.word().into()]
                .into_iter()
                .chain(std::iter::repeat_n("–".to_string(), 5))
                .collect(),
        });
    }
    t.note = Some(format!(
        "Every {every}th message of each producer is stamped at send and read at receipt; \
         queueing under full load dominates these figures."
    ));
    t
}

fn cpu_table(r: &Results) -> Table {
    let mut t = Table::new(
        "CPU: process use, CPU time per thread (ms), context switches (means per run)",
        &[
            "variant",
            "P",
            "process CPU",
            "of machine",
            "producer-0 / producer-1 / …",
            "consumer",
            "consumer sys",
            "voluntary cs",
            "involuntary cs",
            "page faults/msg",
        ],
    );
    for x in &r.results {
        let p = x.key_u64("producers").map_or("–".into(), |p| p.to_string());
        t.rows.push(match x.detail::<Cpu>("cpu") {
            Some(c) => {
                let prod: Vec<String> = c
                    .threads
                    .iter()
                    .filter(|t| t.name.starts_with("producer"))
                    .map(|t| format!("{:.0}", t.cpu_ms))
                    .collect();
                let cons = c.threads.iter().find(|t| t.name == "consumer");
                vec![
                    x.label.clone(),
                    p,
                    format!("{:.0}%", c.process_pct),
                    format!("{:.0}%", c.machine_pct),
                    prod.join(" / "),
                    cons.map_or("–".into(), |t| format!("{:.0}", t.cpu_ms)),
                    cons.map_or("–".into(), |t| format!("{:.0}", t.sys_ms)),
                    format!("{:.0}", c.threads.iter().map(|t| t.voluntary_cs).sum::<f64>()),
                    format!("{:.0}", c.threads.iter().map(|t| t.involuntary_cs).sum::<f64>()),
                    x.detail::<f64>("page_faults_per_message")
                        .map_or("–".into(), |f| format!("{f:.5}")),
                ]
            }
            None => [x.label.clone(), p, x.status.word().into()]
                .into_iter()
                .chain(std::iter::repeat_n("–".to_string(), 7))
                .collect(),
        });
    }
    t.note = Some(
        "process CPU = CPU time / wall time (200% = two cores busy); \"of machine\" divides by \
         the online cores, like the seed's CPU graph. Thread times from \
         getrusage(RUSAGE_THREAD) at each thread's end. Page faults/msg: the run's own (from \
         after the handoff was opened, getrusage), median over runs."
            .into(),
    );
    t
}

/// A per-message count: three significant digits, however small.
fn fmt_per_message(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if x.abs() >= 1.0 {
        return fmt_num(x);
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

fn counters_table(r: &Results) -> Table {
    let rows: Vec<(&Row, Option<Values>)> =
        r.results.iter().map(|x| (x, x.detail::<Values>("counters"))).collect();
    let has = |k: &str| {
        rows.iter().any(|(_, c)| c.as_ref().is_some_and(|c| c.get(k).copied().flatten().is_some()))
    };
    let mut columns: Vec<&str> = perf_counters::EVENTS.into_iter().filter(|e| has(e)).collect();
    if has("ipc") {
        columns.push("ipc");
    }
    let mut header = vec!["variant", "P"];
    header.extend(columns.iter().map(|c| if *c == "ipc" { "IPC" } else { c }));
    let mut t = Table::new("Counters per message (perf events, whole process)", &header);
    let mut nulls: Vec<String> = Vec::new();
    for (x, c) in &rows {
        let p = x.key_u64("producers").map_or("–".into(), |p| p.to_string());
        let mut row = vec![x.label.clone(), p];
        match c {
            Some(c) => row.extend(columns.iter().map(|k| {
                c.get(*k).copied().flatten().map_or("–".into(), |v| {
                    if *k == "ipc" {
                        format!("{v:.2}")
                    } else {
                        fmt_per_message(v)
                    }
                })
            })),
            // Not counted (a JVM row) or no valid run: the status word says which.
            None => row.extend(columns.iter().enumerate().map(|(i, _)| {
                if i == 0 && x.status != Status::Ok {
                    x.status.word().to_string()
                } else {
                    "–".to_string()
                }
            })),
        }
        let some_null = c.as_ref().is_none_or(|c| c.values().any(Option::is_none));
        if let Some(n) = x.detail::<String>("counters_note").filter(|_| some_null) {
            if !nulls.contains(&n) {
                nulls.push(n);
            }
        }
        t.rows.push(row);
    }
    let mut note = "Each measured run's counts divided by its messages, as JMH's perfnorm \
                    does; the median over forks of each fork's median over its valid runs. \
                    Whole process: every thread summed, from after the handoff was opened until \
                    its threads were joined; per thread (counters_by_thread): from the start \
                    barrier to the end of the thread's loop. task-clock in ns."
        .to_string();
    if !nulls.is_empty() {
        note.push_str(&format!(" Missing values: {}.", nulls.join("; ")));
    }
    t.note = Some(note);
    t
}

fn heap_table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "Heap (dhat, a separate untimed run per cell)",
        &[
            "variant",
            "P",
            "messages",
            "allocations",
            "bytes allocated",
            "peak live bytes",
            "allocations/msg",
            "bytes/msg",
            "check",
        ],
    );
    for x in &r.results {
        if let Some(h) = x.detail::<Heap>("heap") {
            t.rows.push(vec![
                x.label.clone(),
                x.key_u64("producers").map_or("–".into(), |p| p.to_string()),
                h.messages.to_string(),
                h.total_blocks.to_string(),
                h.total_bytes.to_string(),
                h.max_bytes.to_string(),
                format!("{:.3}", h.blocks_per_message),
                format!("{:.1}", h.bytes_per_message),
                if h.valid { "ok".into() } else { "INVALID".into() },
            ]);
        }
    }
    t.note = Some(
        "Totals include the run's fixed setup (threads, the checker, a preallocated ring); \
         per-message figures divide the totals by the heap run's messages."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

fn charts(r: &Results) -> Vec<Chart> {
    let (labels, _) = axes(r);
    let ok = |x: &&Row| x.status == Status::Ok;
    let qps = labels
        .iter()
        .map(|l| {
            let pts = r
                .results
                .iter()
                .filter(|x| &x.label == l)
                .filter(ok)
                .filter_map(|x| Some((x.key_u64("producers")? as f64, x.detail::<f64>("qps")?)))
                .collect();
            (l.clone(), pts)
        })
        .collect();
    let mut lat = Vec::new();
    for l in &labels {
        for (name, f) in
            [("p50", (|x: &Percentiles| x.p50) as fn(&Percentiles) -> u64), ("p99", |x| x.p99)]
        {
            let pts = r
                .results
                .iter()
                .filter(|x| &x.label == l)
                .filter(ok)
                .filter_map(|x| {
                    Some((
                        x.key_u64("producers")? as f64,
                        f(&x.detail::<Percentiles>("latency_ns")?) as f64 / 1e3,
                    ))
                })
                .collect();
            lat.push((format!("{l} {name}"), pts));
        }
    }
    vec![
        Chart {
            title: "Throughput against producers".into(),
            x_label: "producers (P)".into(),
            y_label: "messages/s".into(),
            series: qps,
        },
        Chart {
            title: "Latency of sampled messages (log scale)".into(),
            x_label: "producers (P)".into(),
            y_label: "µs".into(),
            series: lat,
        },
    ]
}

fn method_lines(a: &DvlArgs, r: &Results) -> Vec<String> {
    let cfg = &r.config["plan"];
    vec![
        format!(
            "{} producer thread(s) and one consumer per run; variants {}; {} messages per run ({} payload bytes each).",
            a.producers.0.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", "),
            cfg["variants"].as_array().map(|v| v.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")).unwrap_or_default(),
            a.messages,
            a.payload
        ),
        format!(
            "The ring runs with wait strategy {}; its size (and the bound of the channel peers) is {} slots; the locked queue is {}.",
            a.wait,
            a.ring_size,
            a.capacity.map_or("unbounded (as the seed)".to_string(), |x| format!("bounded at {x}"))
        ),
        format!(
            "A timed fork makes at least --runs measured runs and keeps measuring until they \
             add up to about {} ms (it stops where one more run would overshoot by more than \
             it falls short; at most {} runs), as a JMH iteration has a measurement time: a \
             fast handoff's runs are noisy one by one, and its fork's median needs more of \
             them. A fork whose runs spread wider than {:.0}% (interquartile range over \
             median, judged from {} runs on: time-sliced runs, where threads outnumber cores) \
             measures on to {} ms. Its warm-up runs move min(messages, {}) messages each. \
             Every run is kept (runs_ms).",
            a.min_fork_ms,
            harness::MAX_RUNS,
            harness::WIDE_SPREAD * 100.0,
            harness::SPREAD_MIN_RUNS,
            a.spread_fork_ms,
            harness::WARMUP_MESSAGES
        ),
        placement_line(a.placement),
        format!(
            "The consumer takes messages with {}.",
            if a.batch <= 1 { "recv() one at a time".to_string() } else { format!("recv_batch(max {})", a.batch) }
        ),
        format!(
            "Heap pass: after the rounds, one untimed child per cell in the lab-heap binary (global allocator dhat::Alloc) runs {} messages under dhat::Profiler; the timed children use their row's allocator (--allocator; system by default).",
            cfg["heap_messages"]
        ),
        if r.config["shared"]["trace"] == "in-run" {
            inrun::method_line()
        } else {
            format!(
                "Trace pass: one more untimed child per cell runs {} messages with the recorder installed; producers wrap every {}th send in a `publish` span, the consumer emits a `consume` span with the same flow id and a `messages_per_ms` counter about once per ms.",
                cfg["trace_messages"], a.sample_every
            )
        },
    ]
}

fn sampling_lines(run: &Finished<DisruptorVsLbq>, every: u64) -> Vec<String> {
    if every == 0 {
        return vec!["Latency sampling was off.".into()];
    }
    let Some(rec) = run.cells.iter().find(|c| c.plan.cell.sampling_ab_pairs > 0) else {
        return Vec::new();
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for o in rec.outcomes() {
        a.extend(o.ab_sampled_ms.iter().copied());
        b.extend(o.ab_unsampled_ms.iter().copied());
    }
    let pairs: Vec<f64> =
        a.iter().zip(&b).filter(|(_, y)| **y > 0.0).map(|(x, y)| (x / y - 1.0) * 100.0).collect();
    let m = crate::stats::median(&pairs);
    let ci = crate::stats::median_ci(&pairs);
    vec![format!(
        "Cost of latency sampling, measured on {} {}: one sampled and one unsampled run per fork, {} pairs: sampled − unsampled = {}{}.",
        rec.plan.label,
        rec.plan.group,
        pairs.len(),
        m.map_or("–".into(), |m| format!("{m:+.1}%")),
        ci.map_or(" [no interval: too few pairs]".into(), |c| format!(" [{:+.1}, {:+.1}] ({:.0}% interval)", c.low, c.high, c.coverage * 100.0))
    )]
}

/// The allocators of the run's Rust cells, when other than `system` alone (the
/// environment record's default text).
fn run_allocators(run: &Finished<DisruptorVsLbq>) -> Option<Vec<&str>> {
    let mut v: Vec<&str> = Vec::new();
    for a in run.cells.iter().filter_map(|c| c.plan.cell.allocator.as_deref()) {
        if !v.contains(&a) {
            v.push(a);
        }
    }
    (v.iter().any(|a| *a != "system")).then_some(v)
}

/// The method line on thread placement (`--placement`).
fn placement_line(placement: crate::machine::placement::Placement) -> String {
    use crate::machine::placement::Placement;
    let how = match placement {
        Placement::Kernel => "are placed by the kernel (--placement kernel): a run may find a producer and the consumer on one CPU, a different handoff from one between CPUs".to_string(),
        Placement::Spread => "are each pinned to one CPU, round-robin over the CPUs, however many (--placement spread)".to_string(),
        Placement::Auto => format!(
            "are each pinned to their own CPU where the run's threads fit the {} CPUs, JVM rows included (--placement auto); with more threads the kernel places them, and its time-slicing is part of the figure (pinned_cpus says which rows were pinned)",
            crate::machine::placement::allowed_cpus().map_or(0, |c| c.len())
        ),
    };
    format!("Threads: the consumer and producers of each run {how}.")
}
