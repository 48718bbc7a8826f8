//! `publish-on-latency`: seed 000's `publishOn` latency test, and the same handoff through
//! the locked queue, the ring and the naive buffer.
//!
//! Reactive: `Flux.range(0, N).map(i -> (now, i)).publish_on(scheduler, prefetch)` into a
//! subscriber that records `now − stamp` on `on_next` into a preallocated `Vec`
//! (`reactive::bench::publish_on_latency`), one row per `--scheduler`. *Bulk*: the
//! subscriber requests unbounded and the prefetch queue fills (the seed's numbers);
//! *one-by-one*: it requests 1 after each element (idle latency, as the seed recommends).
//! As in Reactor, the range emits on the thread that requests, so after the first prefetch
//! the worker produces its own elements; each row reports how many elements crossed
//! threads. `reactive-iter-p1` uses `Flux.from_iter`, which stays on the subscribing
//! thread: every element crosses.
//!
//! Handoffs: one producer thread sends `handoff::Message<16>` stamped with
//! [`handoff::now_ns`] just before `send`, one consumer records `now − sent_ns` on receipt
//! into a preallocated array. *Bulk*: the producer sends as fast as the channel takes;
//! *one-by-one*: after each send the producer waits until the consumer has published its
//! acknowledgement (an `AtomicU64` holding the count received, stored with Release after
//! the latency is recorded; the producer spins on it with `spin_loop`, yielding every 64
//! spins), so at most one message is ever in flight.
//!
//! Every run checks it got all N elements in order; a run that did not is INVALID (and so
//! its row). A fork's measured elements go into one HDR histogram (1 ns .. 60 s, 3
//! significant digits); a run's measured value is its own p50.
//!
//! The JVM (`--impl`; [`crate::measure::rx`]): the seed's test on Reactor, its own library
//! (`reactor-publish-on[…]` rows: `Flux.range(0, N).map(i -> {System.nanoTime(), i,
//! thread}).publishOn(scheduler, false, 256)`, on the seed's JDK and flags by default), and
//! on RxJava 3 (`rx-observe-on[…]` rows: `Flowable…observeOn(scheduler, false, 256)`), bulk
//! and one-by-one demand, on the single scheduler beside `reactive[single]` and Reactor's
//! `parallel` (RxJava's `computation`) beside `reactive[parallel]`. `System.nanoTime` is
//! CLOCK_MONOTONIC, the clock of [`handoff::now_ns`]; the samples come back to the lab and
//! go into the same histograms. The report sets the p50 and p99 beside seed 000's
//! published ones (`report.rs`).

mod report;

use super::rx_rows::ImplArgs;
use super::schedulers::{self, Sched, Schedulers};
use crate::experiment::{
    size, CellPlan, Defaults, Experiment, Measured, Outcome, Plan, Shared, TraceMode,
};
use crate::experiment::{CellRecord, Finished};
use crate::measure::rx::LibSettings;
use crate::measure::variants::{self, Settings, WithHandoff};
use crate::protocol::Ctx;
use crate::results::{Results, Row};
use crate::stats::percentiles::Percentiles;
use clap::{Args, ValueEnum};
use handoff::{Consumer as _, Handoff, Message, Producer as _};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The experiment.
#[derive(Debug)]
pub struct PublishOnLatency;

/// The queue bound of every bounded variant: reactor's default prefetch.
const BOUND: usize = reactive::DEFAULT_PREFETCH;

/// A row's handoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// publish_on, prefetch 256, from Flux.range.
    Reactive,
    /// publish_on, prefetch 1: demand reaches the range one by one.
    ReactiveP1,
    /// publish_on, prefetch 1, from Flux.from_iter (never leaves the subscribing thread).
    ReactiveIterP1,
    /// The locked queue (the LinkedBlockingQueue port), bounded at 256.
    Locked,
    /// The ring (the Disruptor port, blocking wait), 256 slots.
    Ring,
    /// The naive buffer (unbounded).
    Naive,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Reactive => "reactive",
            Variant::ReactiveP1 => "reactive-p1",
            Variant::ReactiveIterP1 => "reactive-iter-p1",
            Variant::Locked => "locked",
            Variant::Ring => "ring",
            Variant::Naive => "naive",
        }
    }

    /// The reactive source and prefetch, for the publish_on rows.
    fn reactive(self) -> Option<(reactive::bench::LatencySource, usize)> {
        use reactive::bench::LatencySource::{Iter, Range};
        match self {
            Variant::Reactive => Some((Range, BOUND)),
            Variant::ReactiveP1 => Some((Range, 1)),
            Variant::ReactiveIterP1 => Some((Iter, 1)),
            _ => None,
        }
    }
}

/// What the consumer asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Demand {
    /// As fast as possible: the queue fills to its bound (queueing latency).
    Bulk,
    /// One element in flight at a time (idle latency).
    OneByOne,
}

impl Demand {
    fn name(self) -> &'static str {
        match self {
            Demand::Bulk => "bulk",
            Demand::OneByOne => "one-by-one",
        }
    }
}

/// Its options.
#[derive(Args, Debug, Clone, Serialize)]
pub struct LatencyArgs {
    /// Elements per run, a count: a number or a size like 100K.
    #[arg(long, value_parser = size, default_value = "100000")]
    pub elements: u64,
    /// Variants, a comma list of the names below.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "reactive,reactive-p1,reactive-iter-p1,locked,ring,naive"
    )]
    pub variants: Vec<Variant>,
    /// Demand modes, a comma list of the names below.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "bulk,one-by-one")]
    pub demand: Vec<Demand>,
    /// Schedulers of the reactive rows, one row each: a comma list of the names below, or `all`.
    #[arg(long, value_parser = schedulers::PARSER, default_value = "parallel")]
    pub scheduler: Schedulers,
    /// Worker threads of the parallel and rayon schedulers (single has one).
    #[arg(long, value_parser = size, default_value = "2")]
    pub workers: u64,
    /// Who runs the rows (`reactive`: the variants above; `rx`, `reactor`: the JVM's), and
    /// the JVM rows' JDK and flags.
    #[command(flatten)]
    pub rx: ImplArgs,
}

/// What a child runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// The handoff.
    pub variant: Variant,
    /// The reactive rows' scheduler.
    pub scheduler: Option<Sched>,
    /// Threads of parallel and rayon.
    pub workers: usize,
    /// Demand mode.
    pub demand: Demand,
    /// Elements per run.
    pub n: u64,
    /// Warm-up runs.
    pub warmup: usize,
    /// Measured runs.
    pub runs: usize,
    /// A JVM library runs the cell (an `rx-observe-on[…]` or `reactor-publish-on[…]` row),
    /// with these settings.
    #[serde(default)]
    pub rx: Option<LibSettings>,
}

/// RxJava's scheduler for the reactive crate's: single for single, computation (a thread
/// per core) for parallel (Reactor's parallel, [`crate::measure::rx::Lib::word`]); rayon
/// has none.
fn rx_scheduler(s: Sched) -> Option<&'static str> {
    match s {
        Sched::Single => Some("single"),
        Sched::Parallel => Some("computation"),
        Sched::Rayon => None,
    }
}

/// One run of an rx cell, checked: all N elements, in order (RxBench checks the order and
/// returns -1 when it broke).
fn rx_lat_run(
    r: &crate::measure::rx::RxRun,
    n: u64,
    all: Option<&mut Histogram<u64>>,
) -> Result<LatRun, String> {
    if u64::try_from(r.result).ok() != Some(n) {
        return Ok(LatRun {
            valid: false,
            verdict: format!("{} of {n} elements arrived in order", r.result.max(0)),
            latency_ns: None,
            crossed: r.crossed,
            run_ms: None,
        });
    }
    let mut h = hist();
    for &x in &r.latency_ns {
        h.record(x.max(1)).map_err(|e| format!("histogram: {e}"))?;
    }
    if let Some(all) = all {
        all.add(&h).map_err(|e| format!("histogram: {e}"))?;
    }
    Ok(LatRun {
        valid: true,
        verdict: "ok".into(),
        latency_ns: (!h.is_empty()).then(|| Percentiles::of(&h)),
        crossed: r.crossed,
        run_ms: Some(r.ns as f64 / 1e6),
    })
}

/// A JVM cell: the library's latency workload, its samples into the lab's histograms.
fn run_rx(cell: &Cell, rx: &LibSettings, ctx: &mut Ctx) -> Result<LatencyOutcome, String> {
    let s = cell.scheduler.and_then(rx_scheduler).ok_or("an rx cell without its scheduler")?;
    let extra = ["--demand", cell.demand.name(), "--scheduler", s].map(String::from);
    let (o, _) =
        crate::measure::rx::run(rx, "latency", cell.n, (cell.warmup, cell.runs), &extra, ctx)?;
    let mut all = hist();
    let library = Some(rx.library_text(&o));
    let mut out = LatencyOutcome { warmup: Vec::new(), runs: Vec::new(), all: None, library };
    for r in &o.warmup {
        out.warmup.push(rx_lat_run(r, cell.n, None)?);
    }
    for r in &o.runs {
        out.runs.push(rx_lat_run(r, cell.n, Some(&mut all))?);
    }
    out.all = (!all.is_empty()).then(|| Percentiles::of(&all));
    Ok(out)
}

/// One run, checked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatRun {
    /// Whether all N elements arrived, in order, once.
    pub valid: bool,
    /// "ok" or what went wrong.
    pub verdict: String,
    /// The run's own percentiles (valid runs).
    pub latency_ns: Option<Percentiles>,
    /// Elements stamped on another thread than the one that received them.
    pub crossed: u64,
    /// The run's wall time, ms: subscribing (or starting the producer) to the last element
    /// taken; absent in results written before it was kept.
    #[serde(default)]
    pub run_ms: Option<f64>,
}

/// What a child returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencyOutcome {
    /// Warm-up runs (checked, not measured).
    pub warmup: Vec<LatRun>,
    /// Measured runs.
    pub runs: Vec<LatRun>,
    /// Every element of the valid measured runs, in one histogram.
    pub all: Option<Percentiles>,
    /// JVM rows: the library, its version and the JDK that ran it.
    #[serde(default)]
    pub library: Option<String>,
}

impl LatRun {
    /// The run as the runner sees it: its figure and its check.
    fn check(&self) -> Measured {
        Measured {
            value: self.latency_ns.map_or(0.0, |l| l.p50 as f64 / 1e3),
            valid: self.valid,
            verdict: self.verdict.clone(),
        }
    }
}

impl Outcome for LatencyOutcome {
    /// Each run's p50, µs.
    fn measured(&self) -> Vec<Measured> {
        self.runs.iter().map(LatRun::check).collect()
    }

    fn warmups(&self) -> Vec<Measured> {
        self.warmup.iter().map(LatRun::check).collect()
    }
}

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds")
}

struct Job {
    n: u64,
    one_by_one: bool,
}

impl WithHandoff for Job {
    type Out = Result<Vec<u64>, String>;
    fn run<H: Handoff + 'static>(self, h: H) -> Self::Out {
        let (mut ps, mut c) = h.open::<Message<16>>(1).map_err(|e| e.to_string())?;
        let mut p = ps.pop().ok_or("open gave no producer")?;
        let n = self.n;
        let one = self.one_by_one;
        let ack = Arc::new(AtomicU64::new(0));
        let ack_p = ack.clone();
        let producer = std::thread::Builder::new()
            .name("producer".into())
            .spawn(move || -> Result<(), String> {
                for i in 0..n {
                    if one {
                        let mut spins = 0u32;
                        while ack_p.load(Ordering::Acquire) < i {
                            spins += 1;
                            if spins % 64 == 0 {
                                std::thread::yield_now();
                            } else {
                                std::hint::spin_loop();
                            }
                        }
                    }
                    let mut m = Message::<16>::new(0, i);
                    m.sampled = 1;
                    m.sent_ns = handoff::now_ns();
                    p.send(m).map_err(|_| format!("send {i}: the consumer is gone"))?;
                }
                p.close();
                Ok(())
            })
            .map_err(|e| format!("spawning the producer: {e}"))?;
        let mut lat = vec![0u64; n as usize];
        let mut err = None;
        for (i, slot) in lat.iter_mut().enumerate() {
            match c.recv() {
                Some(m) => {
                    *slot = handoff::now_ns().saturating_sub(m.sent_ns);
                    if m.seq != i as u64 && err.is_none() {
                        err = Some(format!("element {i} arrived as seq {}", m.seq));
                    }
                    ack.store(i as u64 + 1, Ordering::Release);
                }
                None => {
                    err = Some(format!("the channel closed after {i} of {n} elements"));
                    break;
                }
            }
        }
        let extra = c.try_recv().is_ok();
        drop(c);
        let pr = producer.join().map_err(|_| "the producer panicked".to_string())?;
        if let Some(e) = err {
            return Err(e);
        }
        pr?;
        if extra {
            return Err(format!("more than {n} elements arrived"));
        }
        Ok(lat)
    }
}

/// One run's latencies (ns, arrival order), how many elements crossed threads and its wall
/// time (ms); `Err` when the run lost, reordered or duplicated an element (or could not
/// run).
fn one_run(cell: &Cell) -> Result<(Vec<u64>, u64, f64), String> {
    let t = std::time::Instant::now();
    let (lat, crossed) = timed_run(cell)?;
    Ok((lat, crossed, t.elapsed().as_secs_f64() * 1e3))
}

/// [`one_run`]'s run, which it times (a reactive run's scheduler is made and disposed
/// inside the time: a fresh one per run, as the method says).
fn timed_run(cell: &Cell) -> Result<(Vec<u64>, u64), String> {
    let n = cell.n;
    let one = cell.demand == Demand::OneByOne;
    if let Some((source, prefetch)) = cell.variant.reactive() {
        let s = cell.scheduler.ok_or("a reactive cell without a scheduler")?.make(cell.workers);
        let r = reactive::bench::publish_on_latency(
            source,
            n,
            &s,
            prefetch,
            one,
            Duration::from_secs(60),
        )
        .map_err(|e| e.to_string());
        let _ = s.dispose();
        let r = r?;
        if r.lat.len() as u64 != n {
            return Err(format!("{} of {n} elements arrived", r.lat.len()));
        }
        return Ok((r.lat, r.crossed));
    }
    let settings = Settings {
        variant: cell.variant.name().to_string(),
        wait: Some("blocking".into()),
        ring_size: BOUND,
        capacity: Some(BOUND),
        prefetch: BOUND,
    };
    // A handoff's producer and consumer are different threads: every element crosses.
    variants::dispatch(&settings, Job { n, one_by_one: one })?.map(|lat| (lat, n))
}

/// The values in the order given, each once.
fn distinct<T: PartialEq + Copy>(xs: &[T]) -> Vec<T> {
    let mut out = Vec::new();
    for x in xs {
        if !out.contains(x) {
            out.push(*x);
        }
    }
    out
}

/// A JVM library's cells (a row per scheduler with a JVM counterpart and demand), appended
/// to `cells`; the pairs (reactive row of the same scheduler, JVM row) where that row runs.
fn rx_cells(
    a: &LatencyArgs,
    shared: &Shared,
    rx: &LibSettings,
    vs: &[Variant],
    ds: &[Demand],
    cells: &mut Vec<CellPlan<Cell>>,
) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for &s in &a.scheduler.0 {
        let Some(rs) = rx_scheduler(s) else { continue };
        for &d in ds {
            let cell = Cell {
                variant: Variant::Reactive,
                scheduler: Some(s),
                workers: a.workers as usize,
                demand: d,
                n: a.elements,
                warmup: shared.warmup as usize,
                runs: shared.runs as usize,
                rx: Some(rx.clone()),
            };
            let rx_word = format!("observe-on[{rs}]");
            let l = rx.label(&rx_word).unwrap_or(rx_word);
            let key = PublishOnKey {
                variant: rx.lib.name().into(),
                demand: d.name().into(),
                scheduler: Some(s.name().into()),
            };
            let mut c = CellPlan::new(cell, l.clone(), d.name()).keyed(&key);
            c.file_stem = format!("{}-{}", c.file_stem, d.name());
            c.threads = 2;
            c.unit = "µs p50";
            c.heap = false;
            c.trace = false;
            cells.push(c);
            // One pair per scheduler: the ratio machinery pairs it within each demand group.
            let pair = (label(Variant::Reactive, Some(s)), l);
            if vs.contains(&Variant::Reactive) && !pairs.contains(&pair) {
                pairs.push(pair);
            }
        }
    }
    pairs
}

fn label(v: Variant, s: Option<Sched>) -> String {
    match s {
        Some(s) => format!("{}[{}]", v.name(), s.name()),
        None => v.name().to_string(),
    }
}

/// A `publish-on-latency` row's key: the dimensions that name its cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PublishOnKey {
    /// The variant (the crate's, or the JVM library's name).
    pub variant: String,
    /// The demand mode.
    pub demand: String,
    /// The scheduler, where the variant takes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
}

impl Experiment for PublishOnLatency {
    const NAME: &'static str = "publish-on-latency";
    const ABOUT: &'static str =
        "seed 000 (the Reactor baseline), its publishOn latency test: publish_on per scheduler \
        against the locked queue, the ring and the naive buffer, bulk and one-by-one demand; \
        p50…max per element from HDR histograms, every run checked for loss and order";
    const DEFAULTS: Defaults =
        Defaults { rounds: 6, runs: 3, warmup: 2, trace: &[TraceMode::Off], heap: None };
    type Args = LatencyArgs;
    type Cell = Cell;
    type Outcome = LatencyOutcome;
    type Key = PublishOnKey;
    type Detail = LatencyDetail;

    fn plan(a: &LatencyArgs, shared: &Shared) -> Result<Plan<Cell>, String> {
        crate::units::at_least_one(&[(a.elements, "--elements"), (a.workers, "--workers")])?;
        let workers = a.workers as usize;
        let chosen = a.rx.choose()?;
        let vs = if chosen.reactive { distinct(&a.variants) } else { Vec::new() };
        let ds = distinct(&a.demand);
        let mut cells = Vec::new();
        for &v in &vs {
            let scheds: Vec<Option<Sched>> = if v.reactive().is_some() {
                a.scheduler.0.iter().copied().map(Some).collect()
            } else {
                vec![None]
            };
            for s in scheds {
                for &d in &ds {
                    let cell = Cell {
                        variant: v,
                        scheduler: s,
                        workers,
                        demand: d,
                        n: a.elements,
                        warmup: shared.warmup as usize,
                        runs: shared.runs as usize,
                        rx: None,
                    };
                    let key = PublishOnKey {
                        variant: v.name().into(),
                        demand: d.name().into(),
                        scheduler: s.map(|s| s.name().into()),
                    };
                    let mut c = CellPlan::new(cell, label(v, s), d.name()).keyed(&key);
                    c.file_stem = format!("{}-{}", c.file_stem, d.name());
                    c.threads = 1 + s.map_or(1, |s| s.threads(workers));
                    c.unit = "µs p50";
                    c.heap = false;
                    c.trace = false;
                    cells.push(c);
                }
            }
        }
        let mut pairs = Vec::new();
        for lib in &chosen.jvm {
            pairs.extend(rx_cells(a, shared, lib, &vs, &ds, &mut cells));
        }
        if cells.is_empty() {
            return Err(
                "no rows: --impl rx and reactor run beside --scheduler single or parallel only"
                    .into(),
            );
        }
        // Every row against the locked queue (the LinkedBlockingQueue port) of its demand
        // mode, when it runs; otherwise against the first row.
        let baseline = if vs.contains(&Variant::Locked) {
            "locked".to_string()
        } else {
            cells[0].label.clone()
        };
        Ok(Plan {
            pairs,
            cells,
            baseline: Some(baseline),
            config: json!({"elements": a.elements, "bound": BOUND, "ring_wait": "blocking", "schedulers": a.scheduler, "workers": workers, "reactive": chosen.reactive, "jvm": chosen.jvm}),
            input_size: a.elements,
            notes: chosen.note.into_iter().collect(),
        })
    }

    fn run_cell(cell: &Cell, ctx: &mut Ctx) -> Result<LatencyOutcome, String> {
        if let Some(rx) = &cell.rx {
            return run_rx(cell, rx, ctx);
        }
        let mut all = hist();
        let mut out =
            LatencyOutcome { warmup: Vec::new(), runs: Vec::new(), all: None, library: None };
        for i in 0..cell.warmup + cell.runs {
            let run = match one_run(cell) {
                Ok((lat, crossed, ms)) => {
                    let mut h = hist();
                    for &x in &lat {
                        h.record(x.max(1)).map_err(|e| format!("histogram: {e}"))?;
                    }
                    if i >= cell.warmup {
                        all.add(&h).map_err(|e| format!("histogram: {e}"))?;
                    }
                    LatRun {
                        valid: true,
                        verdict: "ok".into(),
                        latency_ns: Some(Percentiles::of(&h)),
                        crossed,
                        run_ms: Some(ms),
                    }
                }
                Err(e) => LatRun {
                    valid: false,
                    verdict: format!("run {i}: {e}"),
                    latency_ns: None,
                    crossed: 0,
                    run_ms: None,
                },
            };
            if i < cell.warmup {
                out.warmup.push(run);
            } else {
                out.runs.push(run);
            }
            ctx.heartbeat();
        }
        out.all = (!all.is_empty()).then(|| Percentiles::of(&all));
        Ok(out)
    }

    fn analyse(a: &LatencyArgs, run: &Finished<Self>, out: &mut Results) {
        for (row, rec) in out.results.iter_mut().zip(&run.cells) {
            fill_row(row, rec);
        }
        out.tables.push(report::latency_table(a, out).headline());
        out.tables.extend(report::seed_table(out));
        out.tables.extend(crate::analysis::failure_table(out, &["variant", "demand"], |x| {
            vec![x.label.clone(), x.group.clone()]
        }));
        out.targets = report::targets(out, out.environment.cores);
        out.verdict = crate::analysis::verdict::usual(&out.ratios, &out.targets);
        out.charts = report::charts(out);
        out.method.extend(report::method_lines(a));
    }
}

/// Per percentile, the median over the valid forks' histograms; max is the largest.
fn merged(outs: &[&LatencyOutcome]) -> Option<Percentiles> {
    Percentiles::median_over(outs.iter().filter_map(|o| o.all.as_ref()))
}

/// A `publish-on-latency` row's own fields in results.json (beside the row's envelope);
/// results written before a field existed lack it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LatencyDetail {
    /// The variant.
    pub variant: String,
    /// The reactive rows' scheduler (null for the handoffs).
    pub scheduler: Option<String>,
    /// The demand mode: `bulk` or `one-by-one`.
    pub mode: String,
    /// Elements per run.
    pub elements_per_run: u64,
    /// Latency percentiles over the valid forks, ns.
    pub latency_ns: Option<Percentiles>,
    /// Each valid fork's p50, ns.
    pub fork_p50_ns: Vec<f64>,
    /// Elements that crossed threads, over the valid forks.
    pub crossed: u64,
    /// Those as a share of the elements measured, %.
    pub crossed_pct: Option<f64>,
    /// The run's wall time per element, ns (the median over the valid forks of each fork's
    /// median run): the rate elements flow. Where a queue stays full, the median latency
    /// is about its depth times this (Little's law).
    pub ns_per_element: Option<f64>,
    /// JVM rows: the library, its version and the JDK that ran it.
    pub library: Option<String>,
}

/// A row's typed detail (the default for a row that has none).
pub(super) fn detail(x: &Row) -> LatencyDetail {
    x.detail()
}

fn fill_row(row: &mut Row, rec: &CellRecord<PublishOnLatency>) {
    let c = &rec.plan.cell;
    let outs: Vec<&LatencyOutcome> = rec.outcomes().collect();
    let crossed: u64 = outs.iter().flat_map(|o| o.runs.iter().map(|r| r.crossed)).sum();
    let fork_p50s: Vec<f64> = outs.iter().filter_map(|o| o.all.map(|l| l.p50 as f64)).collect();
    let lat = merged(&outs);
    let fork_ms: Vec<f64> = outs
        .iter()
        .filter_map(|o| {
            let ms: Vec<f64> = o.runs.iter().filter(|r| r.valid).filter_map(|r| r.run_ms).collect();
            crate::stats::median(&ms)
        })
        .collect();
    row.set_detail(&LatencyDetail {
        variant: c.rx.as_ref().map_or(c.variant.name(), |s| s.lib.name()).to_string(),
        library: outs.iter().find_map(|o| o.library.clone()),
        scheduler: c.scheduler.map(Sched::name).map(str::to_string),
        mode: c.demand.name().to_string(),
        elements_per_run: c.n,
        latency_ns: lat,
        fork_p50_ns: fork_p50s,
        crossed,
        crossed_pct: lat.filter(|l| l.count > 0).map(|l| 100.0 * crossed as f64 / l.count as f64),
        ns_per_element: crate::stats::median(&fork_ms).map(|ms| ms * 1e6 / c.n as f64),
    });
}
