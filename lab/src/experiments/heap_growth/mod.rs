//! `heap-growth`: seed 000 (the Reactor baseline) says a difference of `totalMemory` is no
//! evidence of a buffer's growth; this measures it: a producer faster than a consumer that
//! does fixed work per message, and which buffers grow.
//!
//! One producer sends N `handoff::Message<16>` as fast as the variant takes them; one
//! consumer receives and runs a fixed loop of `--work` dependent multiply-adds per message
//! (`black_box`ed), so it falls behind. Unbounded buffers (the naive buffer, the unbounded
//! locked queue) hold the backlog; bounded ones (the bounded locked queue, the ring, the
//! reactive pipeline) make the producer wait.
//!
//! Evidence, never a difference of heap totals:
//! * dhat's peak live bytes (`max_bytes`) and blocks allocated per message, at N and at
//!   2N messages: each cell is one run in the heap pass (the `lab-heap` binary wraps the
//!   whole cell in `dhat::Profiler`), so the peak is that run's alone;
//! * the queue depth, sampled by the consumer through `Consumer::depth` every N/200
//!   messages: its maximum, and, in the trace pass of the N cells, the `queue_depth`
//!   counter over time (beside the variants' own counters), charted in report.html.
//!
//! The cells are untimed (counts, not times): no forks run, so `--rounds`, `--runs` and
//! `--warmup` do not apply and there are no paired ratios; the comparison that decides is
//! 2N against N within each variant (its group).
//!
//! Verdict rule: **grows** when peak live bytes at 2N are at least [`GROWS_AT`]× those at
//! N (the backlog's memory scales with the message count); otherwise **flat**.
//!
//! The JVM (`--impl`; [`crate::measure::rx`], `jvm.rs`): Reactor, the seed's library
//! (`reactor-…` rows, tools/jvm/reactor/src/main/java/ReactorHeapGrowth.java: `Flux.onBackpressureBuffer()`
//! before `publishOn(single, false, 1024)` (unbounded) and `publishOn(single, false, 1024)`
//! alone (bounded); Reactor has no stream without backpressure, so no counterpart of
//! RxJava's Observable row), and RxJava 3 (`rx-…` rows, tools/jvm/rx/src/main/java/RxHeapGrowth.java):
//! the same source and consumer through RxJava's buffers — `Observable.observeOn` (no
//! backpressure: an unbounded queue), `Flowable.onBackpressureBuffer()` before
//! `observeOn(single, false, 1024)` (unbounded), and `observeOn(single, false, 1024)` alone
//! (bounded) — at N and 2N. dhat cannot see a JVM's heap; the JVM's evidence is its live
//! heap after a full collection (`System.gc()`, then the heap pools'
//! `MemoryPoolMXBean.getCollectionUsage()`), sampled on the source's thread after every
//! N/8-th message: the row's peak live bytes are the largest sample minus the one taken
//! before the run (the JVM's own objects), and the same rule decides grows or flat. The rx
//! cells are forks in rounds (`--rounds` JVMs, each `--warmup` + `--runs` runs), not heap
//! passes; their trace pass at N runs the JVM under Java Flight Recorder (every
//! `System.gc()` shows as a GC pause).

mod jvm;

use super::rx_rows::{self, ImplArgs};
use crate::experiment::{
    size, CellPlan, Defaults, Experiment, Measured, Outcome, Plan, Shared, Switch, TraceMode,
};
use crate::experiment::{CellRecord, Finished, PassRecord};
use crate::measure::rx::{LibSettings, RxHeapRun};
use crate::measure::variants::{self, Settings, WithHandoff};
use crate::protocol::{Ctx, HeapTotals};
use crate::results::{Chart, FileLink, Results, Row, Status, Table};
use crate::units::group;
use clap::Args;
use handoff::{Consumer as _, Handoff, Message, Producer as _};
use jvm::{fill_rx_row, run_rx, rx_heap, RX_BUFFERS};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::hint::black_box;
use std::time::Instant;

/// The experiment.
#[derive(Debug)]
pub struct HeapGrowth;

/// The bound of every bounded variant (locked capacity, ring size, reactive prefetch).
pub const BOUND: usize = 1024;

/// The verdict's threshold: peak live bytes at 2N over those at N.
pub const GROWS_AT: f64 = 1.5;

/// Depth samples per run: the consumer reads the depth every messages / this.
const DEPTH_SAMPLES: u64 = 200;

/// (label, variant, bounded capacity).
const VARIANTS: &[(&str, &str, Option<usize>)] = &[
    ("naive", "naive", None),
    ("locked (unbounded)", "locked", None),
    ("locked (bounded 1024)", "locked", Some(BOUND)),
    ("ring (1024)", "ring", Some(BOUND)),
    ("reactive (prefetch 1024)", "reactive", Some(BOUND)),
];

/// Its options.
#[derive(Args, Debug, Clone, Serialize)]
pub struct HeapGrowthArgs {
    /// N: messages in the smaller run of each variant (the larger sends 2N); at least
    /// 2 × the bound of the bounded variants (2048), or a bounded queue never fills.
    #[arg(long, value_parser = size, default_value = "20000")]
    pub messages: u64,
    /// Work per message, in dependent multiply-adds the consumer does: what makes it
    /// slower than the producer.
    #[arg(long, value_parser = size, default_value = "20000")]
    pub work: u64,
    /// Who runs the buffers (`reactive`: the lab's Rust variants; `rx`: RxJava 3's, rows
    /// `rx-…`; `reactor`: Reactor's, rows `reactor-…`), and the JVM rows' JDK and flags.
    #[command(flatten)]
    pub rx: ImplArgs,
}

/// What a child runs: one variant at one message count.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GrowthCell {
    /// The handoff variant (`naive`, `locked`, `ring`, `reactive`).
    pub variant: String,
    /// Its bound (`None`: unbounded).
    pub capacity: Option<usize>,
    /// Messages sent.
    pub messages: u64,
    /// Multiply-adds per message in the consumer.
    pub work: u64,
    /// A JVM library runs the cell (an `rx-…` or `reactor-…` row; `variant` is the buffer
    /// in RxBench's words), in a fork per round: warm-up and measured runs.
    #[serde(default)]
    pub rx: Option<LibSettings>,
    /// rx cells: warm-up and measured runs.
    #[serde(default)]
    pub runs: (usize, usize),
}

/// What a child returns: its one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GrowthOutcome {
    /// Messages sent.
    pub messages: u64,
    /// Messages the consumer received.
    pub received: u64,
    /// The largest depth the consumer saw.
    pub max_depth: u64,
    /// (ms since start, depth) every messages/200 messages.
    pub depth_series: Vec<(f64, f64)>,
    /// The consumer's accumulator (keeps its work from being optimised away).
    pub checksum: u64,
    /// Wall time of the run, ms (under dhat or a recorder: not a timing to compare).
    pub elapsed_ms: f64,
    /// Every message arrived, once, in order.
    pub valid: bool,
    /// "ok" or the first failed check.
    pub verdict: String,
    /// rx cells: the JVM's runs (the fields above are the last measured run's; `valid` and
    /// `verdict` cover every run, warm-ups included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm: Option<JvmGrowth>,
}

/// An rx fork's JVM evidence.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JvmGrowth {
    /// The measured runs, as RxBench reported them.
    pub runs: Vec<RxHeapRun>,
    /// Bytes allocated per message in each measured run (every thread of the JVM).
    pub allocated_bytes_per_message: Vec<f64>,
    /// Collections during each measured run (System.gc()'s included).
    pub gc_count: Vec<u64>,
    /// The library, its version and the JDK that ran it (the field's name is from when
    /// RxJava was the only one).
    pub rxjava_version: Option<String>,
    /// The JVM (version, flags, collectors, heap).
    pub jvm: serde_json::Value,
}

impl Outcome for GrowthOutcome {
    /// The run's largest depth, in the cells' unit (messages queued); an rx fork's, one per
    /// measured run.
    fn measured(&self) -> Vec<Measured> {
        let depths: Vec<u64> = match &self.jvm {
            Some(j) => j.runs.iter().map(|r| r.max_depth).collect(),
            None => vec![self.max_depth],
        };
        depths
            .into_iter()
            .map(|d| Measured { value: d as f64, valid: self.valid, verdict: self.verdict.clone() })
            .collect()
    }
}

struct Job {
    n: u64,
    work: u64,
}

impl WithHandoff for Job {
    type Out = Result<GrowthOutcome, String>;
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
        let every = (n / DEPTH_SAMPLES).max(1);
        let mut series = Vec::with_capacity(DEPTH_SAMPLES as usize + 2);
        let mut max_depth = 0usize;
        let mut acc = 0u64;
        let mut got = 0u64;
        let mut first_error = None;
        while let Some(m) = c.recv() {
            if m.seq != got {
                first_error.get_or_insert(format!("message {got} arrived as seq {}", m.seq));
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
        if got != n {
            first_error.get_or_insert(format!("{got} of {n} messages arrived"));
        }
        Ok(GrowthOutcome {
            jvm: None,
            messages: n,
            received: got,
            max_depth: max_depth as u64,
            depth_series: series,
            checksum: acc,
            elapsed_ms: t0.elapsed().as_secs_f64() * 1e3,
            valid: first_error.is_none(),
            verdict: first_error.unwrap_or_else(|| "ok".into()),
        })
    }
}

fn file_stem(variant: &str, cap: Option<usize>, tag: &str) -> String {
    format!("{variant}{}-{tag}", cap.map(|c| format!("-{c}")).unwrap_or_default())
}

/// A `heap-growth` row's key: the dimensions that name its cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HeapGrowthKey {
    /// The row's variant label.
    pub variant: String,
    /// The handoff it drives.
    pub handoff: String,
    /// Its bound, messages (`null`: unbounded).
    pub bound: Option<u64>,
    /// Messages sent.
    pub messages: u64,
    /// The JVM library, for the JVM rows.
    #[serde(default, rename = "impl", skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
}

impl Experiment for HeapGrowth {
    const NAME: &'static str = "heap-growth";
    const ABOUT: &'static str = "seed 000 (the Reactor baseline): a producer faster than a \
        slow consumer: which buffers grow (dhat peak live bytes at N and 2N, queue depth over \
        time) and which stay flat; with --impl reactor,rx (the default where the JVM side \
        builds) Reactor's and RxJava 3's buffers too, rows reactor-on-backpressure-buffer, \
        reactor-publish-on, rx-observable, rx-on-backpressure-buffer, rx-observe-on: the \
        JVM's live heap after a full collection at N and 2N";
    // Untimed cells: the runner plans no rounds, so rounds, runs and warm-up are inert.
    const DEFAULTS: Defaults = Defaults {
        rounds: 1,
        runs: 1,
        warmup: 0,
        trace: &[TraceMode::Flight, TraceMode::Full, TraceMode::Off],
        heap: Some(Switch::On),
    };
    type Args = HeapGrowthArgs;
    type Cell = GrowthCell;
    type Outcome = GrowthOutcome;
    type Key = HeapGrowthKey;
    type Detail = HeapGrowthDetail;

    fn plan(a: &HeapGrowthArgs, shared: &Shared) -> Result<Plan<GrowthCell>, String> {
        let n = a.messages;
        if n < 2 * BOUND as u64 {
            return Err(format!(
                "--messages {n} is too small for heap-growth: with N below 2 × the bound \
                 ({BOUND}) a bounded queue never fills and the verdict means nothing; use at \
                 least {}",
                2 * BOUND
            ));
        }
        if a.work == 0 {
            return Err("--work must be at least 1 (got 0): without work the consumer is not \
                        slower than the producer"
                .into());
        }
        let chosen = a.rx.choose_sized(rx_heap(n))?;
        if chosen.reactive && shared.heap == Switch::Off {
            return Err("heap-growth needs its heap pass (its verdict is decided from dhat's \
                        peak live bytes); run it with --heap on"
                .into());
        }
        let runs = (shared.warmup as usize, shared.runs as usize);
        let mut cells = Vec::new();
        let rust = if chosen.reactive { VARIANTS } else { &[] };
        let jvm = chosen.jvm.iter().flat_map(|s| RX_BUFFERS.iter().map(move |v| (v, Some(s))));
        for (&(label, variant, cap), settings) in rust.iter().map(|v| (v, None)).chain(jvm) {
            let is_rx = settings.is_some();
            let label = match settings {
                None => label.to_string(),
                // A buffer the library has none of (Reactor's Observable) has no row.
                Some(s) => match rx_rows::label(s, label) {
                    Some(l) => l,
                    None => continue,
                },
            };
            for (mult, tag) in [(1, "N"), (2, "2N")] {
                let cell = GrowthCell {
                    variant: variant.to_string(),
                    capacity: cap,
                    messages: n * mult,
                    work: a.work,
                    rx: settings.cloned(),
                    runs,
                };
                let key = HeapGrowthKey {
                    variant: label.clone(),
                    handoff: variant.to_string(),
                    bound: cap.map(|c| c as u64),
                    messages: n * mult,
                    library: settings.map(|s| s.lib.name().to_string()),
                };
                let mut c = CellPlan::new(cell, label.clone(), tag).keyed(&key);
                c.file_stem = file_stem(variant, cap, &tag.to_lowercase());
                c.threads = 2;
                c.unit = "messages queued (max)";
                // The rx cells are forks (a JVM each): dhat sees only Rust; their trace pass
                // is Java Flight Recorder's.
                c.timed = is_rx;
                c.heap = !is_rx;
                // The depth over time is charted from N's trace; 2N's would repeat it.
                c.trace = mult == 1;
                if let Some(s) = settings {
                    c.file_stem = format!("{}-{}", s.lib.name(), c.file_stem);
                }
                cells.push(c);
            }
        }
        let mut notes: Vec<String> = chosen.note.into_iter().collect();
        notes.push(format!(
            "heap-growth's Rust cells are untimed (heap and depth counts, not times): each is \
             one run of {n} or {} messages in a heap child, and at N one more in a trace \
             child; --rounds, --runs and --warmup apply to the JVM rows only (a JVM per round).",
            2 * n
        ));
        Ok(Plan {
            pairs: Vec::new(),
            cells,
            baseline: None,
            config: json!({"bound": BOUND, "ring_wait": "blocking", "grows_at": GROWS_AT,
                           "depth_samples": DEPTH_SAMPLES, "reactive": chosen.reactive,
                           "jvm": chosen.jvm}),
            input_size: n,
            notes,
        })
    }

    fn run_cell(cell: &GrowthCell, ctx: &mut Ctx) -> Result<GrowthOutcome, String> {
        if let Some(rx) = &cell.rx {
            return run_rx(cell, rx, ctx);
        }
        let settings = Settings {
            variant: cell.variant.clone(),
            wait: Some("blocking".into()),
            ring_size: BOUND,
            capacity: cell.capacity,
            prefetch: BOUND,
        };
        let out = variants::dispatch(&settings, Job { n: cell.messages, work: cell.work })??;
        ctx.heartbeat();
        Ok(out)
    }

    fn analyse(a: &HeapGrowthArgs, run: &Finished<Self>, out: &mut Results) {
        for (row, rec) in out.results.iter_mut().zip(&run.cells) {
            fill_row(row, rec);
        }
        fill_verdicts(&mut out.results);
        // The generic status was decided before the passes' checks were read.
        if !run.interrupted && out.results.iter().any(|r| r.status != Status::Ok) {
            out.status = "failed".into();
        }
        out.tables.push(growth_table(out, a).headline());
        out.verdict = verdict(out);
        out.tables.extend(crate::analysis::failure_table(out, &["variant", "size"], |x| {
            vec![x.label.clone(), x.group.clone()]
        }));
        out.charts.extend(depth_chart(run));
        for rec in &run.cells {
            let p = &rec.plan;
            let trace = if p.cell.rx.is_some() {
                "Chrome trace from Java Flight Recorder: GC pauses, parks (Perfetto)"
            } else {
                "Chrome trace with the queue_depth counter (Perfetto)"
            };
            for (pass, what) in [(&rec.heap, "dhat heap profile (dh_view)"), (&rec.trace, trace)] {
                match pass {
                    Some(r) if r.file_written => out.files.push(FileLink {
                        file: r.file.clone(),
                        what: format!("{what}: {} at {}", p.label, p.group),
                    }),
                    _ => {}
                }
            }
            if let Some(PassRecord { result: Err(e), .. }) = &rec.trace {
                out.notes.push(format!("trace {} at {}: {e}", p.label, p.group));
            }
            if let Some(n) = rec.trace.as_ref().and_then(|r| r.note.as_ref()) {
                out.notes.push(format!("trace {} at {}: {n}", p.label, p.group));
            }
        }
        out.method.extend(method_lines(a));
    }
}

/// The status a failed pass's error names ("HUNG: …", "CRASHED: …", "ERROR: …") and the
/// rest of it.
fn status_of(error: &str) -> (Status, &str) {
    [Status::Hung, Status::Crashed, Status::Error]
        .into_iter()
        .find_map(|s| Some((s, error.strip_prefix(s.word())?.trim_start_matches(": "))))
        .unwrap_or((Status::Error, error))
}

fn fail(row: &mut Row, status: Status, why: String) {
    row.status = row.status.worst(status);
    row.valid = false;
    row.error.get_or_insert(why);
}

/// A `heap-growth` row's own fields in results.json (beside the row's envelope): each is
/// absent when the pass that gives it did not run, failed or (verdicts) when the variant's
/// other row failed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct HeapGrowthDetail {
    /// The heap pass's dhat file, relative to the run folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap_file: Option<String>,
    /// The most messages queued the heap run saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u64>,
    /// Messages in the heap run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<u64>,
    /// dhat's totals of the heap run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap: Option<HeapTotals>,
    /// Allocations per message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks_per_message: Option<f64>,
    /// The trace pass's file, relative to the run folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The most messages queued the trace run saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_max_depth: Option<u64>,
    /// Peak live bytes at 2N over those at N (the variant's two rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_ratio: Option<f64>,
    /// `grows` or `flat`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// rx rows: the JVM's live bytes the run held at its peak (the largest live-heap
    /// sample after a full collection minus the one before the run), the median over the
    /// measured runs of the valid forks: the row's peak live bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jvm_live_bytes: Option<u64>,
    /// rx rows: the largest live-heap sample itself (JVM objects included), median.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jvm_live_peak_bytes: Option<u64>,
    /// rx rows: the live heap before the run, median.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jvm_live_before_bytes: Option<u64>,
    /// rx rows: bytes allocated per message (every JVM thread), median.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jvm_allocated_bytes_per_message: Option<f64>,
    /// rx rows: `RxJava <version>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// rx rows: the JVM of the first fork (version, flags, collectors, heap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jvm: Option<serde_json::Value>,
}

/// A row's typed detail (the default for a row that has none).
fn detail(x: &Row) -> HeapGrowthDetail {
    x.detail()
}

/// The row's details from its heap pass (its evidence) and trace pass. An untimed row has
/// no forks, so the generic row is ok until a pass says otherwise: a failed check makes it
/// INVALID, a failed child its child's status, a missing heap pass NOT RUN.
fn fill_row(row: &mut Row, rec: &CellRecord<HeapGrowth>) {
    if rec.plan.cell.rx.is_some() {
        return fill_rx_row(row, rec);
    }
    let messages = rec.plan.cell.messages;
    let mut d = HeapGrowthDetail::default();
    match &rec.heap {
        None => fail(row, Status::NotRun, "no heap pass ran (see the notes)".into()),
        Some(p) => {
            d.heap_file = p.file_written.then(|| p.file.clone());
            match &p.result {
                Err(e) => {
                    let (status, why) = status_of(e);
                    fail(row, status, format!("heap pass: {why}"));
                }
                Ok(o) if !o.valid => {
                    fail(row, Status::Invalid, format!("heap pass: {}", o.verdict))
                }
                Ok(o) => {
                    d.max_depth = Some(o.max_depth);
                    d.messages = Some(messages);
                }
            }
            match p.heap {
                Some(h) => {
                    d.heap = Some(h);
                    d.blocks_per_message = Some(h.total_blocks as f64 / messages as f64);
                }
                None if p.result.is_ok() => {
                    fail(row, Status::Error, "the heap pass returned no totals".into());
                }
                None => {}
            }
        }
    }
    trace_pass(row, &mut d, rec);
    row.set_detail(&d);
}

/// The trace pass's file and largest depth into `d`; a failed check there fails the row.
fn trace_pass(row: &mut Row, d: &mut HeapGrowthDetail, rec: &CellRecord<HeapGrowth>) {
    if let Some(p) = &rec.trace {
        d.trace = p.file_written.then(|| p.file.clone());
        if let Ok(o) = &p.result {
            d.trace_max_depth = Some(o.max_depth);
            if !o.valid {
                fail(row, Status::Invalid, format!("trace pass: {}", o.verdict));
            }
        }
    }
}

/// Peak live bytes of an ok row: dhat's, or for an rx row the JVM's live bytes held.
fn peak(row: &Row) -> Option<u64> {
    if row.status != Status::Ok {
        return None;
    }
    let d = detail(row);
    d.heap.map(|h| h.max_bytes).or(d.jvm_live_bytes)
}

/// Each variant's verdict on both of its rows, from its N and 2N peaks.
fn fill_verdicts(rows: &mut [Row]) {
    let variants: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
    for v in variants {
        let of = |tag: &str| rows.iter().find(|r| r.label == v && r.group == tag).and_then(peak);
        let (Some(p1), Some(p2)) = (of("N"), of("2N")) else { continue };
        let ratio = if p1 > 0 { p2 as f64 / p1 as f64 } else { f64::INFINITY };
        let verdict = if ratio >= GROWS_AT { "grows" } else { "flat" };
        for r in rows.iter_mut().filter(|r| r.label == v) {
            let mut d = detail(r);
            d.peak_ratio = Some(ratio);
            d.verdict = Some(verdict.to_string());
            r.set_detail(&d);
        }
    }
}

/// Which buffers grow (peak live bytes at 2N over N at least [`GROWS_AT`]) and which stay
/// flat, each with its ratio.
fn verdict(r: &Results) -> Vec<String> {
    let mut grows: Vec<String> = Vec::new();
    let mut flat: Vec<String> = Vec::new();
    for x in &r.results {
        let d = detail(x);
        let (Some(v), Some(q)) = (d.verdict.as_deref(), d.peak_ratio) else { continue };
        let one = format!("{} (×{q:.2})", x.label);
        let list = if v == "grows" { &mut grows } else { &mut flat };
        if !list.contains(&one) {
            list.push(one);
        }
    }
    if grows.is_empty() && flat.is_empty() {
        return vec!["no variant has peak live bytes at both N and 2N: nothing to judge".into()];
    }
    let say = |l: &[String]| if l.is_empty() { "none".to_string() } else { l.join(", ") };
    vec![format!(
        "grow with the messages (peak live bytes 2N/N ≥ {GROWS_AT}): {}; stay flat: {}",
        say(&grows),
        say(&flat)
    )]
}

fn growth_table(r: &Results, a: &HeapGrowthArgs) -> Table {
    let n = a.messages;
    let mut t = Table::new(
        format!(
            "Heap growth: one producer at full speed, a consumer doing {} multiply-adds per \
             message; N = {} and 2N = {}",
            group(a.work as f64),
            group(n as f64),
            group(2.0 * n as f64)
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
    let mut labels: Vec<&str> = Vec::new();
    for x in &r.results {
        if !labels.contains(&x.label.as_str()) {
            labels.push(&x.label);
        }
    }
    for label in labels {
        let of = |tag: &str| r.results.iter().find(|x| x.label == label && x.group == tag);
        let (Some(rn), Some(r2)) = (of("N"), of("2N")) else { continue };
        let bound =
            rn.key_as::<HeapGrowthKey>().bound.map_or("unbounded".into(), |c| c.to_string());
        if let Some(bad) = [rn, r2].into_iter().find(|x| x.status != Status::Ok) {
            let why = bad.error.clone().unwrap_or_default();
            t.rows.push(vec![
                label.into(),
                bound,
                format!("{} at {}: {why}", bad.status.word(), bad.group),
            ]);
            continue;
        }
        let (dn, d2) = (detail(rn), detail(r2));
        // A JVM row names its library and the JDK that ran it.
        let name = dn.library.as_ref().map_or(label.to_string(), |l| format!("{label} ({l})"));
        let depth = |d: &HeapGrowthDetail| d.max_depth.map_or("–".into(), |v| v.to_string());
        let peak_of = |x: &Row| peak(x).map_or("–".into(), |p| p.to_string());
        let per_message = match (d2.blocks_per_message, d2.jvm_allocated_bytes_per_message) {
            (Some(b), _) => format!("{b:.3}"),
            (None, Some(a)) => format!("– (JVM: {a:.1} B allocated)"),
            (None, None) => "–".into(),
        };
        t.rows.push(vec![
            name,
            bound,
            peak_of(rn),
            peak_of(r2),
            dn.peak_ratio.map_or("–".into(), |x| format!("{x:.2}")),
            per_message,
            format!("{} / {}", depth(&dn), depth(&d2)),
            dn.verdict.clone().unwrap_or_else(|| "–".into()),
        ]);
    }
    t.note = Some(format!(
        "Rule: grows when peak live bytes at 2N ≥ {GROWS_AT} × those at N; flat otherwise. \
         Peak live bytes = dhat's max_bytes over the heap child's one run (the whole \
         process's heap at its peak, not a difference of totals). JVM rows (Reactor and \
         RxJava 3, which dhat cannot see): the live heap after a full collection (System.gc(), \
         then the heap pools' collection usage), sampled after every N/8-th message, its \
         largest sample minus the sample before the run; median over the measured runs."
    ));
    t
}

fn depth_chart(run: &Finished<HeapGrowth>) -> Option<Chart> {
    let series: Vec<(String, Vec<(f64, f64)>)> = run
        .cells
        .iter()
        .filter_map(|c| {
            let o = match &c.plan.cell.rx {
                None => c.trace.as_ref()?.result.as_ref().ok()?,
                // An rx row's depth comes from its first valid fork at N.
                Some(_) if c.plan.group == "N" => c.outcomes().next()?,
                Some(_) => return None,
            };
            Some((c.plan.label.clone(), o.depth_series.clone()))
        })
        .collect();
    (!series.is_empty()).then(|| Chart {
        title: "Queue depth over time (trace child, N messages; rx rows: a measured run)".into(),
        x_label: "ms since start".into(),
        y_label: "messages queued".into(),
        series,
        ..Default::default()
    })
}

fn method_lines(a: &HeapGrowthArgs) -> Vec<String> {
    vec![
        format!(
            "One producer sends {} messages (N) or twice as many (2N) of 16 payload bytes; one \
             consumer receives them and does {} dependent multiply-adds per message. Bounded \
             variants are bounded at {BOUND}; the ring waits with the Blocking strategy.",
            a.messages, a.work
        ),
        "Heap: each cell is one run in the lab-heap binary under dhat::Profiler (untimed); \
         peak live bytes = dhat's max_bytes, blocks/message = total_blocks / messages (setup \
         allocations included)."
            .into(),
        format!(
            "Depth: the consumer samples Consumer::depth every messages/{DEPTH_SAMPLES} \
             messages; the maximum is reported, and the trace child of each N cell emits it as \
             the queue_depth counter (the chart in report.html)."
        ),
        "Every run checks that all messages arrived, once and in order; a failed check makes \
         the row INVALID and leaves the variant without a verdict."
            .into(),
        format!("Verdict: grows when peak live bytes at 2N ≥ {GROWS_AT} × at N; flat otherwise."),
        format!(
            "reactor rows: Reactor 3.8.8 (Maven Central, seed 000's version) in a JVM per fork \
             on --jdk's JDK (Temurin 25 by default) with the seed's flags (-Xms512m, -XX:+UseG1GC, \
             -Xmx {} MiB: room for 2N messages, at least the seed's 1 GiB) unless --jvm-gc is \
             given, tools/jvm/reactor (ReactorHeapGrowth.java): the same source, consumer and \
             live-heap reading as the rx rows, through Flux.onBackpressureBuffer() → \
             publishOn(single, false, {BOUND}) (unbounded) or publishOn(single, false, {BOUND}) \
             alone (bounded). G1's System.gc() is a full collection.",
            (rx_heap(a.messages) >> 20).max(1024)
        ),
        format!(
            "rx rows: RxJava 3 (3.1.12, Maven Central) in a JVM per fork on --jdk's JDK \
             (--jvm-gc's collector, a heap of {} MiB: room for 2N messages), tools/jvm/rx (RxHeapGrowth.java): range(0, N).map(i -> a 40-byte message) through \
             Observable.observeOn(Schedulers.single()) (no backpressure, an unbounded queue), \
             Flowable.onBackpressureBuffer() → observeOn(single, false, {BOUND}) (unbounded) or \
             observeOn(single, false, {BOUND}) alone (bounded: the range emits what is \
             requested); the consumer does the same {} multiply-adds per message. Live heap: \
             System.gc() (a full collection under the serial, parallel and G1 collectors; \
             RxBench refuses -XX:+ExplicitGCInvokesConcurrent and -XX:+DisableExplicitGC), \
             then the sum of the heap pools' MemoryPoolMXBean.getCollectionUsage(), before the \
             run and on the source's thread after every N/8-th message; peak live bytes = the \
             largest sample minus the one before (the first run in a JVM first sends two \
             messages through the same chain, so that the static state of the classes it \
             loads is in the sample before the run, not counted as the buffer's). Depth = \
             produced − received, sampled by the consumer every N/{DEPTH_SAMPLES} messages. \
             Their trace child at N runs the JVM under Java Flight Recorder (GC pauses, each \
             System.gc() among them, parks, safepoints) instead of the flight recorder.",
            rx_heap(a.messages) >> 20,
            a.work
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, size: &str, max_bytes: u64) -> Row {
        let h = HeapTotals { max_bytes, ..HeapTotals::default() };
        let mut x = crate::results::fixture::row(label, size, 0.0, None, serde_json::json!({}));
        (x.unit, x.score) = ("messages queued (max)".into(), None);
        x.set_detail(&HeapGrowthDetail { heap: Some(h), ..Default::default() });
        x
    }

    #[test]
    fn the_verdict_is_decided_by_the_peaks_at_n_and_2n() {
        let mut rows = vec![
            row("naive", "N", 100_000),
            row("naive", "2N", 150_000),
            row("ring", "N", 50_000),
            row("ring", "2N", 74_000),
        ];
        fill_verdicts(&mut rows);
        let v: Vec<String> = rows.iter().map(|r| detail(r).verdict.unwrap()).collect();
        assert_eq!(v, ["grows", "grows", "flat", "flat"]);
    }

    #[test]
    fn a_failed_row_gets_no_verdict_and_keeps_its_status() {
        let mut rows = vec![row("naive", "N", 100), row("naive", "2N", 400)];
        let (status, why) = status_of("HUNG: no heartbeat for 120 s");
        assert_eq!((status, why), (Status::Hung, "no heartbeat for 120 s"));
        fail(&mut rows[1], Status::Invalid, "heap pass: 3 of 4 messages arrived".into());
        fill_verdicts(&mut rows);
        assert!(rows.iter().all(|r| detail(r).verdict.is_none()));
        assert_eq!((rows[1].status, rows[1].valid), (Status::Invalid, false));
    }
}
