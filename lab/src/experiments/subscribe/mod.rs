//! `subscribe-overhead`: seed 000's first table, timed with a nanosecond clock.
//!
//! Workloads, each cell its own child per round: `Flux.range(1, N)` summed (one
//! subscription, N *elements*), `Mono.just(1)` subscribed N times and the hand-written
//! publisher subscribed N times (N *subscriptions*), and the reactive crate's throughput
//! case `Flux.range(1, N) → publish_on(scheduler, 256) → sum` (N elements through the
//! operator's queue, the sum on the worker), one row per `--scheduler`. Each run's result
//! is checked against its closed form (`N(N+1)/2`, or `N`); a wrong result makes the run,
//! and so its row, INVALID.
//!
//! Beside each workload, its JVM counterparts (`--impl`; [`crate::measure::rx`]): Reactor,
//! the seed's own library (`reactor-…` rows: `Flux.range` summed, `Mono.just` and the
//! seed's hand-written `java.util.concurrent.Flow` publisher subscribed N times, range →
//! `publishOn(Schedulers.single(), false, 256)` → sum), on the seed's JDK and flags by
//! default, and RxJava 3 (`rx-…` rows: `Flowable.range`, `Single.just`, the hand-written
//! publisher on org.reactivestreams, `observeOn`), each in the same rounds, its ratio to
//! the reactive row paired within rounds. The report sets the reactive crate's and
//! Reactor's figures beside seed 000's published table (`report.rs`).

mod report;

use super::rx_rows::ImplArgs;
use super::schedulers::{self, Sched, Schedulers};
use crate::experiment::{
    size, CellPlan, Defaults, Experiment, Measured, Outcome, Plan, Shared, TraceMode,
};
use crate::experiment::{CellRecord, Finished};
use crate::measure::rx::{Lib, LibSettings};
use crate::profile::counters::RunCounters;
use crate::protocol::Ctx;
use crate::results::{Results, Row};
use crate::stats::Summary;
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::time::{Duration, Instant};

/// The experiment.
#[derive(Debug)]
pub struct SubscribeOverhead;

/// The seed's JVM figures (its table of 1M-op runs on Reactor 3.8.8, Temurin 25.0.5, an Apple
/// M1 Pro: ms per 1M ops = ns per op), per workload: the chart's references and the seed
/// table's "seed 000" column.
const SEED_JVM_NS_PER_OP: &[(&str, f64)] =
    &[("flux-range", 6.0), ("mono-just", 24.0), ("hand-written", 6.0)];

/// Its options.
#[derive(Args, Debug, Clone, Serialize)]
pub struct SubscribeArgs {
    /// N, a count: elements of the range, subscriptions of the subscribe loops (a number
    /// or a size like 1M).
    #[arg(long, value_parser = size, default_value = "1M")]
    pub elements: u64,
    /// Schedulers of the publish-on row, one row each: a comma list of the names below, or `all`.
    #[arg(long, value_parser = schedulers::PARSER, default_value = "single")]
    pub scheduler: Schedulers,
    /// Worker threads of the parallel and rayon schedulers (single has one).
    #[arg(long, value_parser = size, default_value = "2")]
    pub workers: u64,
    /// Who runs the workloads, and the JVM rows' JDK and flags.
    #[command(flatten)]
    pub rx: ImplArgs,
}

/// A workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// `Flux.range(1, N)` summed.
    FluxRange,
    /// `Mono.just(1)` subscribed N times.
    MonoJust,
    /// The hand-written `SyncSinglePublisher` subscribed N times.
    HandWritten,
    /// `Flux.range(1, N) → publish_on(scheduler, 256) → sum`.
    PublishOn,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::FluxRange => "flux-range",
            Workload::MonoJust => "mono-just",
            Workload::HandWritten => "hand-written",
            Workload::PublishOn => "publish-on",
        }
    }

    /// What one op is: the ns/op figures divide by N of these.
    fn op(self) -> &'static str {
        match self {
            Workload::FluxRange | Workload::PublishOn => "element",
            Workload::MonoJust | Workload::HandWritten => "subscription",
        }
    }

    /// RxBench's name for the workload.
    fn rx_name(self) -> &'static str {
        match self {
            Workload::FluxRange => "flowable-range",
            Workload::MonoJust => "single-just",
            Workload::HandWritten => "hand-written",
            Workload::PublishOn => "observe-on",
        }
    }

    /// The closed form a run of `n` must return.
    fn expected(self, n: u64) -> u64 {
        match self {
            Workload::FluxRange | Workload::PublishOn => reactive::bench::expected_range_sum(n),
            Workload::MonoJust | Workload::HandWritten => n,
        }
    }

    fn what_jvm(self, lib: Lib) -> String {
        match (lib, self) {
            (Lib::Rx, Workload::FluxRange) => "RxJava Flowable.range(1, N) summed (one subscription)",
            (Lib::Rx, Workload::MonoJust) => "RxJava Single.just(1) subscribed N times",
            (Lib::Rx, Workload::HandWritten) => {
                "hand-written SyncSinglePublisher (org.reactivestreams, Java) subscribed N times"
            }
            (Lib::Rx, Workload::PublishOn) => {
                "RxJava Flowable.range(1, N) → observeOn(Schedulers.single(), false, 256) → sum"
            }
            (Lib::Reactor, Workload::FluxRange) => "Reactor Flux.range(1, N) summed (one subscription)",
            (Lib::Reactor, Workload::MonoJust) => "Reactor Mono.just(1) subscribed N times",
            (Lib::Reactor, Workload::HandWritten) => {
                "the seed's hand-written SyncSinglePublisher (java.util.concurrent.Flow) subscribed N times"
            }
            (Lib::Reactor, Workload::PublishOn) => {
                "Reactor Flux.range(1, N) → publishOn(Schedulers.single(), false, 256) → sum"
            }
        }
        .into()
    }

    fn what(self, s: Option<Sched>, workers: usize) -> String {
        match self {
            Workload::FluxRange => "Flux.range(1, N) summed (one subscription)".into(),
            Workload::MonoJust => "Mono.just(1) subscribed N times".into(),
            Workload::HandWritten => "hand-written SyncSinglePublisher subscribed N times".into(),
            Workload::PublishOn => format!(
                "Flux.range(1, N) → publish_on({}, 256) → sum",
                s.map_or("?".into(), |s| s.describe(workers))
            ),
        }
    }
}

/// What a child runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// The workload.
    pub workload: Workload,
    /// The publish-on row's scheduler.
    pub scheduler: Option<Sched>,
    /// Threads of parallel and rayon.
    pub workers: usize,
    /// N.
    pub n: u64,
    /// Warm-up runs.
    pub warmup: usize,
    /// Measured runs.
    pub runs: usize,
    /// A JVM library runs the workload (an `rx-…` or `reactor-…` row), with these settings.
    #[serde(default)]
    pub rx: Option<LibSettings>,
}

/// One run: its time and the result it computed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    /// Wall time of the run, ns.
    pub ns: f64,
    /// What the workload returned (`u64::MAX` when publish_on failed or timed out).
    pub result: u64,
    /// The JVM's figures of the run (JVM rows only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm: Option<JvmRun>,
}

/// A JVM run's figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JvmRun {
    /// Collections during the run.
    pub gc_count: u64,
    /// Their time, ms.
    pub gc_ms: u64,
    /// Bytes allocated by every thread during the run.
    pub allocated_bytes: u64,
    /// perf counters of every thread of the java process, per op (timed forks).
    pub counters: Option<RunCounters>,
}

/// What a child returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SubscribeOutcome {
    /// N.
    pub n: u64,
    /// The closed form every run's result must equal.
    pub expected: u64,
    /// Warm-up runs (checked, not measured).
    pub warmup: Vec<Run>,
    /// Measured runs.
    pub runs: Vec<Run>,
    /// The JVM rows' library, its version and the JDK (`Reactor 3.8.8 on JDK 25.0.3`; the
    /// field's name is from when RxJava was the only one).
    #[serde(default)]
    pub rxjava_version: Option<String>,
    /// The JVM rows' JVM (version, flags, collectors, heap).
    #[serde(default)]
    pub jvm: Option<serde_json::Value>,
}

impl SubscribeOutcome {
    fn check(&self, r: &Run) -> Measured {
        let valid = r.result == self.expected;
        Measured {
            value: r.ns / self.n.max(1) as f64,
            valid,
            verdict: if valid {
                "ok".into()
            } else {
                format!("result {}, expected {}", r.result, self.expected)
            },
        }
    }
}

impl Outcome for SubscribeOutcome {
    /// ns per op (element or subscription).
    fn measured(&self) -> Vec<Measured> {
        self.runs.iter().map(|r| self.check(r)).collect()
    }

    fn warmups(&self) -> Vec<Measured> {
        self.warmup.iter().map(|r| self.check(r)).collect()
    }
}

/// The label of a row: the workload, with its scheduler for publish-on.
fn label(w: Workload, s: Option<Sched>) -> String {
    match s {
        Some(s) => format!("{}[{}]", w.name(), s.name()),
        None => w.name().to_string(),
    }
}

/// A reactive crate's cell. Rows of different workloads measure different ops: only the
/// rows of one workload (publish-on's schedulers, a row and its JVM counterparts) share a
/// group and are compared.
fn reactive_cell(cell: Cell, workers: usize) -> CellPlan<Cell> {
    let (w, s) = (cell.workload, cell.scheduler);
    let key = SubscribeKey {
        workload: w.name().into(),
        library: "reactive".into(),
        scheduler: s.map(|s| s.name().into()),
    };
    let mut c = CellPlan::new(cell, label(w, s), w.name()).keyed(&key);
    if let Some(s) = s {
        c.threads = 1 + s.threads(workers);
    }
    c.unit = "ns/op";
    c.heap = false;
    c.trace = false;
    c
}

/// A JVM library's cell of a workload: `rx-<RxBench's name>` or `reactor-<ReactorBench's>`,
/// in the workload's group.
fn jvm_cell(cell: Cell, lib: &LibSettings) -> CellPlan<Cell> {
    let (w, s) = (cell.workload, cell.scheduler);
    let label = lib.label(w.rx_name()).unwrap_or_else(|| w.rx_name().to_string());
    let key = SubscribeKey {
        workload: w.name().into(),
        library: lib.lib.name().into(),
        scheduler: s.map(|s| s.name().into()),
    };
    let mut c = CellPlan::new(cell, label, w.name()).keyed(&key);
    if s.is_some() {
        c.threads = 2;
    }
    c.unit = "ns/op";
    c.heap = false;
    c.trace = false;
    c
}

/// A `subscribe-overhead` row's key: the dimensions that name its cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscribeKey {
    /// The workload.
    pub workload: String,
    /// The library: `reactive` (the crate), `rx`, `reactor`.
    #[serde(rename = "impl")]
    pub library: String,
    /// The scheduler, for the workloads that take one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
}

impl Experiment for SubscribeOverhead {
    const NAME: &'static str = "subscribe-overhead";
    const ABOUT: &'static str =
        "seed 000 (the Reactor baseline), its subscribe table: Flux.range summed, Mono.just and a \
        hand-written publisher subscribed N times, range → publish_on → sum per scheduler; \
        ns per element or subscription, each run's result checked";
    const DEFAULTS: Defaults =
        Defaults { rounds: 13, runs: 5, warmup: 3, trace: &[TraceMode::Off], heap: None };
    // Each JVM row is paired with a reactive row run seconds apart, as disruptor-vs-lbq's.
    const MAKE_UP_ROUNDS: bool = true;
    type Args = SubscribeArgs;
    type Cell = Cell;
    type Outcome = SubscribeOutcome;
    type Key = SubscribeKey;
    type Detail = SubscribeDetail;

    fn plan(a: &SubscribeArgs, shared: &Shared) -> Result<Plan<Cell>, String> {
        crate::units::at_least_one(&[(a.elements, "--elements"), (a.workers, "--workers")])?;
        let workers = a.workers as usize;
        let chosen = a.rx.choose()?;
        let mut specs: Vec<(Workload, Option<Sched>)> = vec![
            (Workload::FluxRange, None),
            (Workload::MonoJust, None),
            (Workload::HandWritten, None),
        ];
        specs.extend(a.scheduler.0.iter().map(|s| (Workload::PublishOn, Some(*s))));
        let base = |w: Workload, s: Option<Sched>| Cell {
            workload: w,
            scheduler: s,
            workers,
            n: a.elements,
            warmup: shared.warmup as usize,
            runs: shared.runs as usize,
            rx: None,
        };
        let mut cells = Vec::new();
        let mut pairs = Vec::new();
        for (w, s) in specs {
            if chosen.reactive {
                cells.push(reactive_cell(base(w, s), workers));
            }
            // The JVM counterparts: every workload, publish-on on the single scheduler.
            if s.is_some_and(|s| s != Sched::Single) {
                continue;
            }
            for lib in &chosen.jvm {
                let c = jvm_cell(Cell { rx: Some(lib.clone()), ..base(w, s) }, lib);
                if chosen.reactive {
                    pairs.push((label(w, s), c.label.clone()));
                }
                cells.push(c);
            }
        }
        // The publish-on rows against the first scheduler given (single by default).
        if chosen.reactive && a.scheduler.0.len() > 1 {
            let first = label(Workload::PublishOn, Some(a.scheduler.0[0]));
            for s in &a.scheduler.0[1..] {
                pairs.push((label(Workload::PublishOn, Some(*s)), first.clone()));
            }
        }
        Ok(Plan {
            pairs,
            cells,
            baseline: None,
            config: json!({"elements": a.elements, "schedulers": a.scheduler, "workers": workers,
                "prefetch": reactive::DEFAULT_PREFETCH, "reactive": chosen.reactive,
                "jvm": chosen.jvm}),
            input_size: a.elements,
            notes: chosen.note.into_iter().collect(),
        })
    }

    fn run_cell(cell: &Cell, ctx: &mut Ctx) -> Result<SubscribeOutcome, String> {
        if let Some(rx) = &cell.rx {
            return run_rx(cell, rx, ctx);
        }
        let n = cell.n;
        let timeout = Duration::from_secs(60);
        // One scheduler per child, made before the first run and disposed after the last,
        // so no run pays for starting its threads.
        let sched = cell.scheduler.map(|s| s.make(cell.workers));
        let publish_on = |n: u64| match &sched {
            Some(s) => reactive::bench::publish_on_sum(n, s, reactive::DEFAULT_PREFETCH, timeout)
                .unwrap_or(u64::MAX),
            None => u64::MAX,
        };
        let (expected, f): (u64, &dyn Fn(u64) -> u64) = match cell.workload {
            Workload::FluxRange => {
                (reactive::bench::expected_range_sum(n), &reactive::bench::range_sum)
            }
            Workload::MonoJust => (n, &reactive::bench::mono_just_subscribe),
            Workload::HandWritten => (n, &reactive::bench::hand_written_subscribe),
            Workload::PublishOn => (reactive::bench::expected_range_sum(n), &publish_on),
        };
        let mut out = SubscribeOutcome {
            n,
            expected,
            warmup: Vec::new(),
            runs: Vec::new(),
            rxjava_version: None,
            jvm: None,
        };
        for i in 0..cell.warmup + cell.runs {
            let t = Instant::now();
            let result = f(n);
            let run = Run { ns: t.elapsed().as_nanos() as f64, result, jvm: None };
            if i < cell.warmup {
                out.warmup.push(run);
            } else {
                out.runs.push(run);
            }
            ctx.heartbeat();
        }
        if let Some(s) = sched {
            s.dispose().map_err(|e| format!("disposing the scheduler: {e}"))?;
        }
        Ok(out)
    }

    fn analyse(a: &SubscribeArgs, run: &Finished<Self>, out: &mut Results) {
        for (row, rec) in out.results.iter_mut().zip(&run.cells) {
            fill_row(row, rec);
        }
        out.tables.push(report::main_table(a, out).headline());
        out.tables.extend(report::seed_table(out));
        out.tables.extend(report::jvm_table(out));
        out.tables
            .extend(crate::analysis::failure_table(out, &["workload"], |x| vec![x.label.clone()]));
        out.targets = report::targets(out);
        out.verdict = crate::analysis::verdict::usual(&out.ratios, &out.targets);
        out.charts.extend(report::main_chart(out));
        out.method.extend(report::method_lines(a));
    }
}

/// A JVM cell: the library's program runs the workload; the closed form is the lab's own,
/// and the program's must agree with it.
fn run_rx(cell: &Cell, rx: &LibSettings, ctx: &mut Ctx) -> Result<SubscribeOutcome, String> {
    let w = cell.workload;
    let expected = w.expected(cell.n);
    let (o, counters) =
        crate::measure::rx::run(rx, w.rx_name(), cell.n, (cell.warmup, cell.runs), &[], ctx)?;
    if u64::try_from(o.expected).ok() != Some(expected) {
        return Err(format!(
            "the {} program expects {} where the lab expects {expected}",
            rx.lib.library(),
            o.expected
        ));
    }
    let run = |r: &crate::measure::rx::RxRun, c: Option<RunCounters>| Run {
        ns: r.ns as f64,
        result: u64::try_from(r.result).unwrap_or(u64::MAX),
        jvm: Some(JvmRun {
            gc_count: r.gc_count,
            gc_ms: r.gc_ms,
            allocated_bytes: r.allocated_bytes,
            counters: c,
        }),
    };
    let per_run = counters.len() == o.runs.len();
    Ok(SubscribeOutcome {
        n: cell.n,
        expected,
        warmup: o.warmup.iter().map(|r| run(r, None)).collect(),
        runs: o
            .runs
            .iter()
            .enumerate()
            .map(|(k, r)| run(r, counters.get(if per_run { k } else { 0 }).cloned()))
            .collect(),
        rxjava_version: Some(rx.library_text(&o)),
        jvm: Some(o.jvm),
    })
}

fn fill_row(row: &mut Row, rec: &CellRecord<SubscribeOverhead>) {
    let c = &rec.plan.cell;
    let outs: Vec<&SubscribeOutcome> = rec.outcomes().collect();
    let runs_ns: Vec<f64> = rec
        .forks
        .iter()
        .filter_map(|f| f.outcome.as_ref())
        .flat_map(|o| o.runs.iter().map(|r| r.ns))
        .collect();
    let per_op: Vec<f64> =
        outs.iter().flat_map(|o| o.runs.iter().map(|r| r.ns / c.n as f64)).collect();
    let jvm_runs: Vec<&JvmRun> =
        outs.iter().flat_map(|o| o.runs.iter().filter_map(|r| r.jvm.as_ref())).collect();
    let first = outs.first();
    row.set_detail(&SubscribeDetail {
        workload: c.workload.name().to_string(),
        implementation: c.rx.as_ref().map_or("reactive", |s| s.lib.name()).to_string(),
        library: match (&c.rx, first) {
            (None, _) => "reactive (this workspace)".to_string(),
            (Some(s), o) => {
                o.and_then(|o| o.rxjava_version.clone()).unwrap_or_else(|| s.lib.library().into())
            }
        },
        scheduler: c.scheduler.map(Sched::name).map(str::to_string),
        op: c.workload.op().to_string(),
        what: match &c.rx {
            Some(s) => c.workload.what_jvm(s.lib),
            None => c.workload.what(c.scheduler, c.workers),
        },
        jvm: first.and_then(|o| o.jvm.clone()),
        jvm_gc: c.rx.as_ref().map(|r| r.gc.clone()),
        gc_count: jvm_runs.iter().map(|j| j.gc_count).collect(),
        gc_ms: jvm_runs.iter().map(|j| j.gc_ms).collect(),
        allocated_bytes_per_op: jvm_runs
            .iter()
            .map(|j| j.allocated_bytes as f64 / c.n.max(1) as f64)
            .collect(),
        counters: jvm_runs
            .iter()
            .filter_map(|j| j.counters.as_ref())
            .map(|k| k.process.clone())
            .collect(),
        n: c.n,
        expected_result: outs.first().map(|o| o.expected),
        runs_ns,
        ns_per_op: Summary::of(&per_op),
        ops_per_s: row.score.filter(|s| *s > 0.0).map(|s| 1e9 / s),
        run_ms: row.score.map(|s| s * c.n as f64 / 1e6),
    });
}

/// A `subscribe-overhead` row's own fields in results.json (beside the row's envelope);
/// results written before a field existed lack it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SubscribeDetail {
    /// The workload (`flux-range`, `mono-just`, …; an rx row has its reactive row's).
    pub workload: String,
    /// Who ran it: `reactive` (the lab's crate), `rx` (RxJava) or `reactor` (Reactor).
    pub implementation: String,
    /// The library and its version, and for a JVM row the JDK that ran it (`Reactor 3.8.8
    /// on JDK 25.0.3`).
    pub library: String,
    /// JVM rows: the JVM (version, flags, collectors, heap).
    pub jvm: Option<serde_json::Value>,
    /// JVM rows: `--jvm-gc`'s setting.
    pub jvm_gc: Option<String>,
    /// JVM rows: collections per measured run (every valid fork's runs).
    pub gc_count: Vec<u64>,
    /// JVM rows: their time per measured run, ms.
    pub gc_ms: Vec<u64>,
    /// JVM rows: bytes allocated per op, per measured run (every thread of the JVM).
    pub allocated_bytes_per_op: Vec<f64>,
    /// JVM rows: perf counters of the whole java process per op, per measured run.
    pub counters: Vec<crate::profile::counters::Values>,
    /// publish-on's scheduler (null for the other workloads).
    pub scheduler: Option<String>,
    /// What one op is: `element` or `subscription`.
    pub op: String,
    /// The workload in words.
    pub what: String,
    /// Elements (or subscriptions) per run.
    pub n: u64,
    /// The result every run must return.
    pub expected_result: Option<u64>,
    /// Every run of every fork, ns.
    pub runs_ns: Vec<f64>,
    /// ns per op over the valid runs (mean, 99.9% interval, spread).
    pub ns_per_op: Option<Summary>,
    /// Ops per second at the row's score.
    pub ops_per_s: Option<f64>,
    /// The run time at the row's score, ms.
    pub run_ms: Option<f64>,
}
