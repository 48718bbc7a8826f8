//! `heap-growth`: a producer faster than a consumer that does fixed work per message.
//!
//! One producer sends N `handoff::Message<16>` as fast as the variant takes them; one
//! consumer receives and runs a fixed loop of `work` dependent multiply-adds per message
//! (`black_box`ed), so it falls behind. Unbounded buffers (the naive buffer, the
//! unbounded locked queue) hold the backlog; bounded ones (the bounded locked queue, the
//! ring, the reactive pipeline) make the producer wait.
//!
//! Evidence, never a difference of heap totals (seed 000's `totalMemory` point):
//! * dhat, in the `lab-heap` binary (global allocator `dhat::Alloc`): peak live bytes
//!   (`max_bytes`) and blocks allocated per message, at N and at 2N messages;
//! * the queue depth, sampled by the consumer through `Consumer::depth` every N/200
//!   messages: its maximum, and in a trace child the `queue_depth` counter over time
//!   (`counter!`, beside the variants' own counters).
//!
//! Verdict rule: **grows** when peak live bytes at 2N are at least 1.5× those at N (the
//! backlog's memory scales with the message count); otherwise **flat**.

use super::common::{self, Opts, XResults, XSpec, XTable};
use crate::variants::{self, Settings, WithHandoff};
use handoff::{Consumer as _, Handoff, Message, Producer as _};
use serde_json::{json, Value};
use std::hint::black_box;
use std::time::Instant;

const DEFAULT_N: u64 = 20_000;
const BOUND: usize = 1024;
/// Multiply-adds per message in the consumer.
const WORK: u64 = 20_000;
/// (label, variant, bounded capacity).
const VARIANTS: &[(&str, &str, Option<usize>)] = &[
    ("naive", "naive", None),
    ("locked (unbounded)", "locked", None),
    ("locked (bounded 1024)", "locked", Some(BOUND)),
    ("ring (1024)", "ring", Some(BOUND)),
    ("reactive (prefetch 1024)", "reactive", Some(BOUND)),
];

struct Job {
    n: u64,
    work: u64,
}

impl WithHandoff for Job {
    type Out = Result<Value, String>;
    fn run<H: Handoff + 'static>(self, h: H) -> Self::Out {
        let (mut ps, mut c) = h.open::<Message<16>>(1).map_err(|e| e.to_string())?;
        let mut p = ps.pop().ok_or("open gave no producer")?;
        let n = self.n;
        let t0 = Instant::now();
        let producer = std::thread::Builder::new()
            .name("producer".into())
            .spawn(move || -> Result<(), String> {
                for i in 0..n {
                    p.send(Message::<16>::new(0, i))
                        .map_err(|_| format!("send {i}: the consumer is gone"))?;
                }
                p.close();
                Ok(())
            })
            .map_err(|e| format!("spawning the producer: {e}"))?;
        let every = (n / 200).max(1);
        let mut series = Vec::with_capacity(202);
        let mut max_depth = 0usize;
        let mut acc = 0u64;
        let mut got = 0u64;
        let mut err = None;
        while let Some(m) = c.recv() {
            if m.seq != got {
                err.get_or_insert(format!("message {got} arrived as seq {}", m.seq));
            }
            got += 1;
            for _ in 0..self.work {
                acc = black_box(acc.wrapping_mul(6364136223846793005).wrapping_add(m.seq));
            }
            if got % every == 0 {
                let d = c.depth();
                max_depth = max_depth.max(d);
                handoff::counter!("queue_depth", d);
                series.push((t0.elapsed().as_secs_f64() * 1e3, d as f64));
            }
        }
        drop(c);
        producer.join().map_err(|_| "the producer panicked".to_string())??;
        if let Some(e) = err {
            return Err(e);
        }
        if got != n {
            return Err(format!("{got} of {n} messages arrived"));
        }
        Ok(json!({"max_depth": max_depth, "series": series, "checksum": acc,
                  "elapsed_ms": t0.elapsed().as_secs_f64() * 1e3}))
    }
}

fn run_variant(spec: &XSpec) -> Result<Value, String> {
    let settings = Settings {
        variant: spec.param_str("variant")?.to_string(),
        wait: Some("blocking".into()),
        ring_size: BOUND,
        capacity: spec.params["capacity"].as_u64().map(|c| c as usize),
        prefetch: BOUND,
    };
    let work = spec.param_u64("work")?;
    variants::dispatch(&settings, Job { n: spec.elements, work })?
}

pub fn cell(spec: &XSpec) -> Result<Value, String> {
    common::with_trace(spec, || run_variant(spec))
}

/// Runs in the `lab-heap` binary, whose global allocator is `dhat::Alloc`.
pub fn heap_cell(spec: &XSpec) -> Result<Value, String> {
    common::with_heap(spec, || run_variant(spec))
}

/// The `lab-heap` binary next to the lab binary.
fn heap_binary() -> Result<std::path::PathBuf, String> {
    let exe = common::lab_exe()?;
    let p = exe.with_file_name("lab-heap");
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "{} is missing: build it with `cargo build -p lab --bins` (add --release for a \
             release lab)",
            p.display()
        ))
    }
}

pub fn run(o: &Opts) -> Result<i32, String> {
    let n = o.elements.unwrap_or(DEFAULT_N);
    let (dir, default) = common::run_dir(o)?;
    let exe = common::lab_exe()?;
    if !o.heap {
        return Err("heap-growth needs its heap pass (its verdict is decided from dhat's \
                    peak live bytes); run it with --heap on"
            .into());
    }
    if n < 2 * BOUND as u64 {
        return Err(format!(
            "--elements {n} is too small for heap-growth: with N ≤ 2 × the bound ({BOUND}) a \
             bounded queue never fills and the verdict means nothing; use at least {}",
            2 * BOUND
        ));
    }
    let heap_bin = heap_binary()?;
    let tracing = if o.trace { "flight: a trace child per variant (N messages)" } else { "off" };
    let mut env = common::environment(o, n, tracing, "dhat in lab-heap, at N and 2N messages");
    // Counts, not timings: one run per case (--runs and --warmup do not apply).
    env.warmup_runs = 0;
    env.measured_runs = 1;
    let work = WORK;
    let mut t = XTable::new(
        &format!(
            "Heap growth: one producer at full speed, a consumer doing {work} multiply-adds per \
             message; N = {n} and 2N"
        ),
        &[
            "variant",
            "bound",
            "peak live bytes (N)",
            "peak live bytes (2N)",
            "ratio 2N/N",
            "blocks/message (2N)",
            "max depth seen (N / 2N)",
            "verdict",
        ],
    );
    t.note = Some(
        "Rule: grows when peak live bytes at 2N ≥ 1.5 × those at N; flat otherwise. Peak live \
         bytes = dhat's max_bytes (the whole process's heap at its peak, not a difference of \
         totals)."
            .into(),
    );
    let mut rows = Vec::new();
    let mut files = Vec::new();
    let mut notes = Vec::new();
    let mut invalid = false;
    let mut series = Vec::new();
    let total = VARIANTS.len();
    for (k, (label, variant, cap)) in VARIANTS.iter().enumerate() {
        let stem = variant.to_string() + &cap.map(|c| format!("-{c}")).unwrap_or_default();
        let mut per_size = Vec::new();
        let mut failed = None;
        for (mult, tag) in [(1, "n"), (2, "2n")] {
            let file = format!("{stem}-{tag}.dhat-heap.json");
            let path = dir.join(&file);
            let spec = XSpec {
                experiment: o.experiment.clone(),
                workload: format!("{stem}-{tag}"),
                elements: n * mult,
                warmup: 0,
                runs: 1,
                params: json!({"variant": variant, "capacity": cap, "work": work}),
                trace_file: None,
                heap_file: Some(path.display().to_string()),
            };
            match common::run_child(&heap_bin, "", &spec, o.timeout) {
                Ok(v) => {
                    if path.is_file() {
                        files.push(file);
                    }
                    per_size.push(v);
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = failed {
            invalid = true;
            common::progress(k + 1, total, label, &e);
            t.rows.push(vec![label.to_string(), bound(cap), format!("INVALID: {e}")]);
            rows.push(json!({"variant": label, "status": "invalid", "error": e}));
            continue;
        }
        let g = |i: usize, key: &str| per_size[i][key].as_f64().unwrap_or(0.0);
        let (p1, p2) = (g(0, "max_bytes"), g(1, "max_bytes"));
        let ratio = if p1 > 0.0 { p2 / p1 } else { f64::INFINITY };
        let grows = ratio >= 1.5;
        let bpm = g(1, "total_blocks") / (2 * n) as f64;
        let verdict = if grows { "grows" } else { "flat" };
        common::progress(k + 1, total, label, &format!("{p1:.0} → {p2:.0} bytes: {verdict}"));
        t.rows.push(vec![
            label.to_string(),
            bound(cap),
            format!("{p1:.0}"),
            format!("{p2:.0}"),
            format!("{ratio:.2}"),
            format!("{bpm:.3}"),
            format!("{} / {}", per_size[0]["max_depth"], per_size[1]["max_depth"]),
            verdict.to_string(),
        ]);
        rows.push(json!({"variant": label, "handoff": variant, "bound": cap, "status": "ok",
                         "n": n, "heap_n": per_size[0], "heap_2n": per_size[1],
                         "peak_ratio": ratio, "blocks_per_message": bpm, "verdict": verdict}));
        if o.trace {
            let file = format!("{stem}.trace.json");
            let path = dir.join(&file);
            let spec = XSpec {
                experiment: o.experiment.clone(),
                workload: format!("trace {stem}"),
                elements: n,
                warmup: 0,
                runs: 1,
                params: json!({"variant": variant, "capacity": cap, "work": work}),
                trace_file: Some(path.display().to_string()),
                heap_file: None,
            };
            match common::run_child(&exe, "__xcell", &spec, o.timeout) {
                Ok(v) if path.is_file() => {
                    files.push(file);
                    notes
                        .push(format!("trace {label}: {}", v["trace_note"].as_str().unwrap_or("")));
                    let pts: Vec<(f64, f64)> = v["series"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|p| Some((p[0].as_f64()?, p[1].as_f64()?)))
                                .collect()
                        })
                        .unwrap_or_default();
                    series.push((label.to_string(), k, pts));
                }
                Ok(_) => notes.push(format!("trace {label}: the child wrote no trace file")),
                Err(e) => notes.push(format!("trace {label}: {e}")),
            }
        }
    }
    let charts = if series.is_empty() {
        String::new()
    } else {
        crate::report::line_chart(
            "Queue depth over time (trace child, N messages)",
            "ms since start",
            "messages queued",
            &series,
            false,
        )
    };
    let r = XResults {
        experiment: o.experiment.clone(),
        status: if invalid { "invalid".into() } else { "complete".into() },
        environment: env,
        config: json!({"elements": n, "work_per_message": work, "bound": BOUND,
                       "ring_wait": "blocking", "trace": o.trace,
                       "timeout_s": o.timeout.as_secs()}),
        rows,
        tables: vec![t],
        targets: Vec::new(),
        files,
        method: vec![
            "Heap: each variant runs at N and at 2N messages in the lab-heap binary under \
             dhat::Profiler (untimed); peak live bytes = dhat's max_bytes, blocks/message = \
             total_blocks / messages (setup allocations included)."
                .into(),
            "Depth: the consumer samples Consumer::depth every N/200 messages; the maximum \
             is reported, and the trace child emits it as the queue_depth counter."
                .into(),
            "Every run checks that all messages arrived in order.".into(),
            "Verdict: grows when peak live bytes at 2N ≥ 1.5 × at N; flat otherwise.".into(),
        ],
        notes,
    };
    common::finish(&dir, default, &r, &charts)
}

fn bound(cap: &Option<usize>) -> String {
    cap.map(|c| c.to_string()).unwrap_or_else(|| "unbounded".into())
}
