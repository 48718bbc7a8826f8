//! `disruptor-vs-lbq`'s analysis: each row's typed detail ([`HandoffDetail`]) from its
//! forks and passes, then the tables, charts, Why section, files, notes and method.

use super::detail::{Cpu, HandoffDetail, Heap, JvmDetail, RunBrief, ThreadCpu};
use super::{allocators, collectors, inrun, tables, why, DisruptorVsLbq, DvlArgs};
use crate::experiment::{CellRecord, Finished};
use crate::measure::harness::{self, CellOutput};
use crate::measure::variants::is_jvm;
use crate::profile::counters::{self, RunCounters, Values};
use crate::results::{FileLink, Results, Role, Row};
use crate::stats::percentiles::Percentiles;
use serde_json::Value;
use std::collections::BTreeMap;

pub(super) fn analyse(a: &DvlArgs, run: &Finished<DisruptorVsLbq>, out: &mut Results) {
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
    out.tables = tables::headline_tables(out);
    out.tables.extend(inrun::cost_table(out));
    out.tables.extend(super::calibration::table(out));
    out.tables.extend(super::split::table(out));
    out.tables.extend(super::dimension::table(out, &allocators::DIMENSION));
    out.tables.extend(super::dimension::table(out, &collectors::DIMENSION));
    if let Some(al) = run_allocators(run) {
        out.environment.timed_allocator = allocators::environment_text(&al);
    }
    out.tables.push(tables::forks_table(out));
    out.tables.push(tables::latency_table(out, a.sample_every));
    out.tables.push(tables::cpu_table(out));
    out.tables.push(tables::counters_table(out));
    out.tables.extend(tables::heap_table(out));
    out.tables.extend(super::sites::table(out));
    out.tables.extend(tables::jvm_table(out));
    out.tables.extend(crate::analysis::failure_table(out, &["variant", "P"], |x| {
        vec![x.label.clone(), super::key(x).producers.to_string()]
    }));
    out.charts = tables::charts(out);
    out.why = why::section(out);
    // A peer against its own loop is the calibration table's, not a comparison to explain.
    let own: Vec<String> =
        out.results.iter().filter(|x| x.role == Role::OwnLoop).map(|x| x.label.clone()).collect();
    out.why.retain(|w| !own.contains(&w.variant) && !own.contains(&w.baseline));
    out.reasons = why::reasons(out);
    out.verdict = verdict(out);
    for row in &out.results {
        let Some(d) = row.detail_if_any::<HandoffDetail>() else { continue };
        // A JVM row's trace came from its flight recording, kept beside it for JMC or `jfr`.
        let rec =
            d.trace.as_deref().filter(|_| d.jvm.is_some()).map(crate::profile::jfr::recording_of);
        for (f, what) in
            [(d.trace, "Chrome trace (Perfetto)"), (d.heap_file, "dhat heap profile (dh_view)")]
        {
            if let Some(f) = f {
                out.files.push(FileLink {
                    file: f,
                    what: format!("{what}: {} {}", row.label, row.group),
                });
            }
        }
        if let Some(rec) = rec.filter(|r| run.dir.join(r).is_file()) {
            out.files.push(FileLink {
                file: rec,
                what: format!(
                    "JFR recording (JDK Mission Control, `jfr print`): {} {}",
                    row.label, row.group
                ),
            });
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
    jvm_environment(a, out);
    out.method.extend(sampling_lines(run, a.sample_every));
}

/// The JVM rows' environment note (the JVM, its flags, the library versions each row ran)
/// and method line, when JVM rows ran.
fn jvm_environment(a: &DvlArgs, out: &mut Results) {
    let jvm = out.results.iter().find_map(|x| x.detail::<HandoffDetail>().jvm);
    if let Some(j) = jvm {
        let jvm = &j.jvm;
        let libraries: Vec<String> = out
            .results
            .iter()
            .filter_map(|x| x.detail::<HandoffDetail>().jvm?.library)
            .fold(Vec::new(), |mut v, l| {
                if !v.contains(&l) {
                    v.push(l);
                }
                v
            });
        // The Disruptor version each Disruptor row ran (the current line and seed 001's).
        let mut disruptors: Vec<String> = Vec::new();
        for r in &out.results {
            let Some(d) = r.detail::<HandoffDetail>().jvm else { continue };
            let v = super::key(r).variant;
            let line = format!("{} ({v})", d.disruptor_version.as_deref().unwrap_or("–"));
            if v.contains("disruptor") && !disruptors.contains(&line) {
                disruptors.push(line);
            }
        }
        if disruptors.is_empty() {
            disruptors.push(j.disruptor_version.as_deref().unwrap_or("–").to_string());
        }
        out.environment.notes.push(format!(
            "JVM rows: {} {} (java {}), flags {}; Disruptor {}{}",
            jvm["vm_name"].as_str().unwrap_or("?"),
            jvm["vm_version"].as_str().unwrap_or("?"),
            jvm["version"].as_str().unwrap_or("?"),
            jvm["flags"],
            disruptors.join(", "),
            libraries.iter().map(|l| format!("; {l}")).collect::<String>()
        ));
        out.method.push(jvm_method_line(a, out));
    }
}

/// How the JVM originals ran: pairing, message form, collectors.
fn jvm_method_line(a: &DvlArgs, out: &Results) -> String {
    let mut waits: Vec<String> = Vec::new();
    let mut gcs: Vec<String> = Vec::new();
    for d in out.results.iter().filter_map(|x| x.detail::<HandoffDetail>().jvm) {
        if let Some(w) = d.wait_strategy.filter(|w| !waits.contains(w)) {
            waits.push(w);
        }
        if !gcs.contains(&d.gc) {
            gcs.push(d.gc);
        }
    }
    let flags = out.config["plan"]["jvm_gcs"].as_array().cloned().unwrap_or_default();
    let flags: Vec<String> = flags
        .iter()
        .map(|g| {
            format!(
                "{} = `{}`",
                g["name"].as_str().unwrap_or("?"),
                g["flags"].as_str().unwrap_or("?")
            )
        })
        .collect();
    format!(
        "JVM originals (tools/jvm/Bus.java) run as forks like the Rust rows: a new \
         LinkedBlockingQueue, Disruptor or MpscArrayQueue per run, {} JIT warm-up pass(es) of min(messages, \
         1M) before the warm-up runs, the same messages, split and checksum as the Rust \
         harness (Bus's expected checksum is checked against the Rust one), latency stamped \
         with System.nanoTime (CLOCK_MONOTONIC) every {} messages per producer as the Rust \
         rows are. Message: {}. Pairs compared: locked ↔ jvm-lbq (both {}), ring ↔ \
         jvm-disruptor with ProducerType.SINGLE at P=1 (the Rust ring's single-producer \
         sequencer) and MULTI above, ring ↔ jvm-jctools (JCTools' MpscArrayQueue of \
         --ring-size slots, a new message per offer, offer retried and drain idling with the \
         wait of the same name), Rust {} ↔ JVM {}{}. Collector(s): {}.",
        a.jit_warmup,
        a.sample_every,
        match a.jvm_message.name() {
            "inline" =>
                "inline (the payload as long fields: jvm-lbq allocates one object a \
                         message besides its node, jvm-disruptor none)",
            _ => "byte-array (a byte[] per message besides the message object)",
        },
        a.capacity.map_or("unbounded".to_string(), |c| format!("bounded at {c}")),
        a.wait,
        if waits.is_empty() { "–".to_string() } else { waits.join(", ") },
        if a.jvm_wait == "matching" {
            " (seed 001's pairing; --jvm-wait lite-blocking runs LiteBlockingWaitStrategy)"
        } else {
            " (chosen with --jvm-wait)"
        },
        flags.join("; "),
    )
}

/// A line per comparison (the traced twins' left to their table); the ring against the
/// locked queue also quotes the seed's ratios.
pub(super) fn verdict(r: &Results) -> Vec<String> {
    use crate::analysis::verdict::{comparisons, num};
    let mut lines: Vec<String> = comparisons(&r.ratios, |q| !q.is_side())
        .into_iter()
        .map(|c| {
            let mut line = c.line;
            if c.variant == "ring" && c.baseline == "locked" {
                let [(p1, r1), (p2, r2)] = super::SEED_QPS_RATIOS;
                line += &format!("; the seed saw {}× (P={p1}) to {}× (P={p2})", num(r1), num(r2));
            }
            line
        })
        .collect();
    lines.extend(super::calibration::own_loop_lines(r));
    lines.extend(super::calibration::warnings(r));
    lines.extend(super::split::lines(r));
    lines
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
/// forks of each fork's median over its valid counted runs (a Rust fork's one run after
/// its measured runs; a JVM fork's measured runs), values already per message.
fn counters_of(
    outs: &[&CellOutput],
    jvm: bool,
) -> (Option<Values>, Option<BTreeMap<String, Values>>, Option<String>) {
    let forks: Vec<Vec<&RunCounters>> = outs
        .iter()
        .map(|o| {
            let counted = if o.counted.is_empty() { &o.runs } else { &o.counted };
            counted.iter().filter(|r| r.valid).filter_map(|r| r.counters.as_ref()).collect()
        })
        .filter(|runs: &Vec<&RunCounters>| !runs.is_empty())
        .collect();
    if forks.is_empty() {
        let why = if jvm {
            "not counted: no valid measured run with counters on the java process"
        } else {
            "not counted: no valid counted run"
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
    let briefs: Vec<RunBrief> = all
        .iter()
        .flat_map(|o| o.runs.iter())
        .map(|r| RunBrief {
            ms: r.ms,
            valid: r.valid,
            verdict: if r.valid { "ok".to_string() } else { format!("INVALID: {}", r.verdict) },
        })
        .collect();
    let valid_ms: Vec<f64> = outs.iter().flat_map(|o| o.runs.iter().map(|r| r.ms)).collect();
    let sample_cost = crate::stats::median(
        &outs.iter().map(|o| o.sample_cost_ns).filter(|c| *c > 0.0).collect::<Vec<_>>(),
    );
    let est = match (row.score, sample_cost) {
        (Some(m), Some(c)) if spec.sample_every > 0 && m > 0.0 => {
            Some(c / spec.sample_every as f64 / (m * 1e6 / spec.messages as f64) * 100.0)
        }
        _ => None,
    };
    let mut in_child: Vec<&str> = outs.iter().filter_map(|o| o.allocator.as_deref()).collect();
    in_child.sort_unstable();
    in_child.dedup();
    let (counters, counters_by_thread, counters_note) = counters_of(&outs, is_jvm(&spec.variant));
    let faults: Vec<f64> = outs
        .iter()
        .flat_map(|o| o.runs.iter().filter(|r| r.valid))
        .map(|r| r.page_faults as f64 / spec.messages as f64)
        .collect();
    // The JVM rows do not count their page faults (Bus reports none): null, not 0.
    let faults = (!is_jvm(&spec.variant)).then(|| crate::stats::median(&faults));
    let traced = rec.trace.as_ref().and_then(|t| t.result.as_ref().ok());
    let heap = heap_of(rec, top_sites);
    let detail = HandoffDetail {
        variant: spec.variant.clone(),
        wait: spec.wait.clone(),
        producers: spec.producers,
        messages: spec.messages,
        per_producer: handoff::spread(spec.messages, spec.producers),
        payload: spec.payload,
        allocator: spec.allocator.clone(),
        allocator_in_child: (!in_child.is_empty()).then(|| in_child.join(",")),
        runs_ms,
        runs: briefs,
        median_ms: row.score,
        min_ms: valid_ms.iter().copied().reduce(f64::min),
        max_ms: valid_ms.iter().copied().reduce(f64::max),
        qps: row.score.filter(|m| *m > 0.0).map(|m| spec.messages as f64 / (m / 1e3)),
        latency_ns: latency_of(&outs),
        cpu: cpu_of(&outs, cores),
        counters,
        counters_by_thread,
        counters_note,
        page_faults_per_message: faults.flatten(),
        pinned_cpus: outs.iter().find_map(|o| o.pinned_cpus.clone()),
        sample_cost_ns: sample_cost,
        sampling_overhead_est_pct: est,
        trace: rec
            .trace
            .as_ref()
            .filter(|t| t.result.is_ok() && t.file_written)
            .map(|t| t.file.clone()),
        off_cpu_by_thread: traced.and_then(|o| o.off_cpu.clone()),
        off_cpu_note: traced.and_then(|o| o.off_cpu_note.clone()),
        heap_file: heap.as_ref().map(|h| h.file.clone()),
        heap,
        jvm: jvm_of(&outs).map(|mut j| {
            let sites = traced.and_then(|o| o.jvm.as_ref()).map(|t| t.allocation_sites.clone());
            j.allocation_sites = sites.unwrap_or_default();
            j
        }),
        in_run_traces: Vec::new(),
    };
    row.set_detail(&detail);
}

/// The heap pass's figures, when it ran, passed and wrote its file.
fn heap_of(
    rec: &CellRecord<DisruptorVsLbq>,
    top_sites: Vec<crate::profile::dhat::Site>,
) -> Option<Heap> {
    let spec = &rec.plan.cell;
    let h = rec.heap.as_ref()?;
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
}

/// A JVM row's own figures: the first fork's report, medians over every fork's runs.
fn jvm_of(outs: &[&CellOutput]) -> Option<JvmDetail> {
    let first = outs.iter().find_map(|o| o.jvm.as_ref())?;
    let all = |f: fn(&harness::JvmReport) -> Vec<f64>| -> Vec<f64> {
        outs.iter().filter_map(|o| o.jvm.as_ref()).flat_map(f).collect()
    };
    let med = |v: Vec<f64>| crate::stats::median(&v);
    Some(JvmDetail {
        jvm: first.jvm.clone(),
        disruptor_version: first.disruptor_version.clone(),
        library: first.library.clone(),
        producer_type: first.producer_type.clone(),
        wait: first.wait.clone(),
        wait_strategy: first.wait_strategy.clone(),
        message: first.message.clone(),
        gc: first.gc.clone(),
        jit_warmup_passes: first.jit_warmup_passes,
        allocated_bytes_per_message: med(all(|j| j.allocated_bytes_per_message.clone())),
        gc_ms_per_run: med(all(|j| j.gc_ms.clone())),
        gc_count_per_run: med(all(|j| j.gc_count.iter().map(|c| *c as f64).collect())),
        allocation_sites: Vec::new(),
    })
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
        consumer_line(a.batch(), cfg),
        format!(
            "Heap pass: after the rounds, one untimed child per cell in the lab-heap binary (global allocator dhat::Alloc) runs {} messages under dhat::Profiler; the timed children use their row's allocator (--allocator; jemalloc by default).",
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

/// How the consumer takes messages: `--batch`, and the variants that receive one at a time
/// whatever it says (no batch receive of their own).
fn consumer_line(batch: u64, cfg: &Value) -> String {
    if batch <= 1 {
        return "The consumer takes messages with recv() one at a time.".into();
    }
    let singles: Vec<&str> = cfg["variants"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|v| super::plan::consumer_batch(v, batch) == 1)
        .collect();
    let mut line = format!("The consumer takes messages with recv_batch(max {batch})");
    if !singles.is_empty() {
        line += &format!(
            "; {} with recv() one at a time, as their own API receives (they have no batch \
             receive, and taking the rest with try_recv after each message made the lab's \
             consumer slower than the crate's own loop)",
            singles.join(", ")
        );
    }
    line + "."
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Ratio, RoundsDone, Status};
    use serde_json::json;

    /// A row of the default run's shape, with every figure the Why rules read.
    fn row(label: &str, p: u64, ms: f64, blocks: f64, vcs: f64) -> Row {
        let mut x: Row = serde_json::from_value(json!({
            "label": label, "key": {"variant": label, "producers": p}, "group": format!("P={p}"),
            "status": "OK", "valid": true, "unit": "ms", "higher_is_better": false,
            "score": ms, "score_ci": [ms * 0.95, ms * 1.05], "forks": []
        }))
        .expect("row");
        let thread = |name: &str, cs: f64| ThreadCpu {
            name: name.into(),
            cpu_ms: ms * 1.5,
            voluntary_cs: cs,
            ..Default::default()
        };
        let mut threads: Vec<ThreadCpu> =
            (0..p).map(|i| thread(&format!("producer-{i}"), 3.0)).collect();
        threads.push(thread("consumer", vcs));
        let off = crate::profile::sched::ThreadOffCpu {
            off_cpu_share: if label == "locked" { 0.45 } else { 0.02 },
            woken_by: [("producer-0".to_string(), 900u64)].into(),
            ..Default::default()
        };
        let counters: Values = [("task-clock", ms * 3.0), ("instructions", 900.0)]
            .map(|(k, v)| (k.to_string(), Some(v)))
            .into();
        x.set_detail(&HandoffDetail {
            variant: label.into(),
            producers: p as usize,
            messages: 1 << 20,
            qps: Some((1u64 << 20) as f64 / (ms / 1e3)),
            heap: Some(Heap { blocks_per_message: blocks, ..Default::default() }),
            cpu: Some(Cpu { threads, ..Default::default() }),
            off_cpu_by_thread: Some([("consumer".to_string(), off)].into()),
            counters: Some(counters),
            ..Default::default()
        });
        x
    }

    fn ratio(p: u64, m: f64, ci: Option<(f64, f64)>, apart: usize) -> Ratio {
        let group = format!("P={p}");
        let q = crate::results::fixture::ratio("ring", "locked", &group, m, ci.map(|c| [c.0, c.1]));
        Ratio {
            coverage: Some(0.99),
            rounds: 27,
            unstable: ci.is_none_or(|c| c.1 - c.0 > 0.2 * m),
            rounds_needed: Some(80),
            off_phase_rounds: apart,
            off_phase_median: (apart > 0).then_some(2.0),
            ..q
        }
    }

    /// The default run's shape: P=1..6, locked and ring, every table and section filled.
    fn default_run() -> Results {
        let mut rows = Vec::new();
        let mut ratios = Vec::new();
        for p in 1..=6u64 {
            let locked = 400.0 + 50.0 * p as f64;
            let m = 18.0 - 2.5 * p as f64;
            rows.push(row("locked", p, locked, 1.0, 20_000.0 * p as f64));
            rows.push(row("ring", p, locked / m, 0.0001, 12.0));
            let ci = match p {
                3 => Some((0.91, 1.07)),
                5 => None,
                _ => Some((m * 0.7, m * 1.2)),
            };
            ratios.push(ratio(p, if p == 3 { 0.98 } else { m }, ci, if p == 2 { 13 } else { 0 }));
        }
        let mut r = crate::results::fixture::results("disruptor-vs-lbq", rows, ratios);
        r.rounds = RoundsDone { planned: 27, finished: 27, made_up: 0 };
        r.notes = vec!["a note".into(); 14];
        r.tables = tables::headline_tables(&r);
        r.tables.push(tables::forks_table(&r));
        r.tables.push(tables::latency_table(&r, 1024));
        r.tables.push(tables::cpu_table(&r));
        r.tables.push(tables::counters_table(&r));
        r.tables.extend(tables::heap_table(&r));
        r.why = why::section(&r);
        r.reasons = why::reasons(&r);
        r.verdict = verdict(&r);
        r
    }

    #[test]
    fn the_sampled_latency_table_is_named_queueing_delay_and_points_to_handoff_latency() {
        let r = default_run();
        let t = r
            .tables
            .iter()
            .find(|t| t.title.starts_with("Queueing delay at saturation"))
            .expect("the sampled table, named for what it measures");
        assert!(t.title.contains("not the handoff's latency, see handoff-latency"), "{}", t.title);
        let note = t.note.as_deref().unwrap_or("");
        assert!(note.contains("must not be read as handoff latency"), "{note}");
    }

    #[test]
    fn the_default_runs_terminal_report_fits_one_screen() {
        let r = default_run();
        let s = crate::report::terminal_report(&r, false);
        let lines: Vec<&str> = s.lines().collect();
        let widest = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(lines.len() <= 60, "{} lines:\n{s}", lines.len());
        assert!(widest <= 120, "{widest} columns:\n{s}");
        assert!(s.contains("Verdict:") && s.contains("Reasons"), "{s}");
        let v = r.verdict.join("\n");
        assert!(v.contains("no difference at P=3: 0.98× [0.91, 1.07]"), "{v}");
        assert!(v.contains("the seed saw 1.37× (P=1) to 2.52× (P=6)"), "{v}");
        assert!(s.contains("14 note(s) in the report"), "{s}");
        assert!(!s.contains("Why (sentences"), "{s}");
        let all = crate::report::terminal_report(&r, true);
        assert!(all.contains("Why (sentences") && all.contains("note: a note"), "{all}");
        assert!(all.lines().count() > lines.len());
    }

    #[test]
    fn a_failed_row_is_always_shown() {
        let mut r = default_run();
        r.results[3].status = Status::Invalid;
        r.results[3].error = Some("lost a message".into());
        r.tables.extend(crate::analysis::failure_table(&r, &["variant", "P"], |x| {
            vec![x.label.clone(), x.group.clone()]
        }));
        let s = crate::report::terminal_report(&r, false);
        assert!(s.contains("INVALID") && s.contains("lost a message"), "{s}");
    }

    #[test]
    fn the_reasons_figures_are_the_why_figures() {
        let r = default_run();
        let reasons = r.reasons.as_ref().expect("a reasons table");
        assert_eq!(reasons.columns.len(), 6, "{:?}", reasons.columns);
        let mut checked = 0;
        for row in &reasons.rows {
            for (c, cell) in reasons.columns.iter().zip(&row.cells) {
                let Some(cell) = cell else { continue };
                for f in &cell.figures {
                    let i: usize = f.field[8..f.field.find(']').unwrap()].parse().unwrap();
                    assert_eq!(r.results[i].group, *c, "{f:?}");
                }
                let w = r.why.iter().find(|w| &w.group == c && w.rule == row.rule);
                match (cell.fired, w) {
                    (true, Some(w)) if row.rule == "counter" => {
                        assert!(cell.figures.iter().all(|f| w.figures.contains(f)), "{c} {row:?}");
                        checked += 1;
                    }
                    (true, Some(w)) => {
                        assert_eq!(cell.figures, w.figures, "{c} {}", row.rule);
                        checked += 1;
                    }
                    (true, None) => panic!("{c} {}: fired without a sentence", row.rule),
                    (false, w) => assert!(
                        w.is_none() || row.rule == "counter",
                        "{c} {}: a sentence without a fired cell",
                        row.rule
                    ),
                }
            }
        }
        assert!(checked >= 10, "{checked}");
        let alloc = &reasons.rows[0];
        assert_eq!(alloc.rule, "allocation");
        assert_eq!(alloc.cells[0].as_ref().unwrap().text, "1e-4 vs 1.00");
    }
}
