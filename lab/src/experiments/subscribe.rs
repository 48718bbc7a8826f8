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
//! Beside each workload, its RxJava 3 counterpart on the JVM (`rx-…` rows, `--impl`;
//! [`crate::measure::rx`]): `Flowable.range` summed, `Single.just` and a hand-written
//! org.reactivestreams publisher subscribed N times, range → `observeOn(Schedulers.single(),
//! false, 256)` → sum, each in the same rounds, its ratio to the reactive row paired
//! within rounds.

use super::rx_rows::{self, ImplArgs};
use super::schedulers::{self, Sched, Schedulers};
use crate::experiment::{
    size, CellPlan, Defaults, Experiment, Measured, Outcome, Plan, Shared, TraceMode,
};
use crate::experiment::{CellRecord, Finished};
use crate::measure::rx::RxSettings;
use crate::profile::counters::RunCounters;
use crate::protocol::Ctx;
use crate::results::{Chart, Ratio, Results, Row, Status, Table, Target};
use crate::stats::Summary;
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::time::{Duration, Instant};

/// The experiment.
#[derive(Debug)]
pub struct SubscribeOverhead;

/// The seed's JVM figures (its table of 1M-op runs, ms per 1M ops = ns per op), per
/// workload: the chart's references.
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
    /// Who runs the workloads, and the rx rows' JVM.
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

    fn what_rx(self) -> String {
        match self {
            Workload::FluxRange => "RxJava Flowable.range(1, N) summed (one subscription)",
            Workload::MonoJust => "RxJava Single.just(1) subscribed N times",
            Workload::HandWritten => {
                "hand-written SyncSinglePublisher (org.reactivestreams, Java) subscribed N times"
            }
            Workload::PublishOn => {
                "RxJava Flowable.range(1, N) → observeOn(Schedulers.single(), false, 256) → sum"
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
    /// RxJava on the JVM runs the workload (an `rx-…` row), with these settings.
    #[serde(default)]
    pub rx: Option<RxSettings>,
}

/// One run: its time and the result it computed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    /// Wall time of the run, ns.
    pub ns: f64,
    /// What the workload returned (`u64::MAX` when publish_on failed or timed out).
    pub result: u64,
    /// The JVM's figures of the run (rx rows only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm: Option<JvmRun>,
}

/// An rx run's JVM figures.
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
    /// The rx rows' RxJava version.
    #[serde(default)]
    pub rxjava_version: Option<String>,
    /// The rx rows' JVM (version, flags, collectors, heap).
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

    fn failure(&self) -> Option<String> {
        self.warmup
            .iter()
            .chain(&self.runs)
            .map(|r| self.check(r))
            .find(|m| !m.valid)
            .map(|m| m.verdict)
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
/// rows of one workload (publish-on's schedulers, a row and its rx counterpart) share a
/// group and are compared.
fn reactive_cell(cell: Cell, workers: usize) -> CellPlan<Cell> {
    let (w, s) = (cell.workload, cell.scheduler);
    let mut c = CellPlan::new(cell, label(w, s), w.name())
        .key("workload", w.name())
        .key("impl", "reactive");
    if let Some(s) = s {
        c = c.key("scheduler", s.name());
        c.threads = 1 + s.threads(workers);
    }
    c.unit = "ns/op";
    c.heap = false;
    c.trace = false;
    c
}

/// RxJava's cell of a workload: `rx-<RxBench's name>`, in the workload's group.
fn rx_cell(cell: Cell, rx: &RxSettings) -> CellPlan<Cell> {
    let (w, s) = (cell.workload, cell.scheduler);
    let mut c = CellPlan::new(cell, rx_rows::label(rx, w.rx_name()), w.name())
        .key("workload", w.name())
        .key("impl", "rx");
    if let Some(s) = s {
        c = c.key("scheduler", s.name());
        c.threads = 2;
    }
    c.unit = "ns/op";
    c.heap = false;
    c.trace = false;
    c
}

impl Experiment for SubscribeOverhead {
    const NAME: &'static str = "subscribe-overhead";
    const ABOUT: &'static str =
        "seed 000 (the Reactor baseline), its subscribe table: Flux.range summed, Mono.just and a \
        hand-written publisher subscribed N times, range → publish_on → sum per scheduler; \
        ns per element or subscription, each run's result checked";
    const DEFAULTS: Defaults =
        Defaults { rounds: 13, runs: 5, warmup: 3, trace: &[TraceMode::Off], heap: None };
    // Each rx row is paired with a reactive row run seconds apart, as disruptor-vs-lbq's.
    const MAKE_UP_ROUNDS: bool = true;
    type Args = SubscribeArgs;
    type Cell = Cell;
    type Outcome = SubscribeOutcome;

    fn plan(a: &SubscribeArgs, shared: &Shared) -> Result<Plan<Cell>, String> {
        if a.elements == 0 {
            return Err("--elements must be at least 1 (got 0)".into());
        }
        if a.workers == 0 {
            return Err("--workers must be at least 1 (got 0)".into());
        }
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
            // RxJava's counterpart: every workload, publish-on on the single scheduler.
            let Some(rx) = chosen.rx.as_ref().filter(|_| s.is_none_or(|s| s == Sched::Single))
            else {
                continue;
            };
            let c = rx_cell(Cell { rx: Some(rx.clone()), ..base(w, s) }, rx);
            if chosen.reactive {
                pairs.push((label(w, s), c.label.clone()));
            }
            cells.push(c);
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
                "rx": chosen.rx}),
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
        out.tables.push(main_table(a, out).headline());
        out.tables.extend(jvm_table(out));
        out.tables
            .extend(crate::report::failure_table(out, &["workload"], |x| vec![x.label.clone()]));
        out.targets = targets(out);
        out.verdict = crate::experiments::verdict::usual(&out.ratios, &out.targets);
        out.charts.extend(main_chart(out));
        out.method.extend(method_lines(a));
    }
}

/// An rx cell: RxBench runs the workload; the closed form is the lab's own, and RxBench's
/// must agree with it.
fn run_rx(cell: &Cell, rx: &RxSettings, ctx: &mut Ctx) -> Result<SubscribeOutcome, String> {
    let w = cell.workload;
    let expected = w.expected(cell.n);
    let (o, counters) =
        crate::measure::rx::run(rx, w.rx_name(), cell.n, (cell.warmup, cell.runs), &[], ctx)?;
    if u64::try_from(o.expected).ok() != Some(expected) {
        return Err(format!("RxBench expects {} where the lab expects {expected}", o.expected));
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
        rxjava_version: o.rxjava_version,
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
        implementation: if c.rx.is_some() { "rx" } else { "reactive" }.to_string(),
        library: match (&c.rx, first) {
            (None, _) => "reactive (this workspace)".to_string(),
            (Some(_), o) => format!(
                "RxJava {}",
                o.and_then(|o| o.rxjava_version.clone()).unwrap_or_else(|| "?".into())
            ),
        },
        scheduler: c.scheduler.map(Sched::name).map(str::to_string),
        op: c.workload.op().to_string(),
        what: match c.rx {
            Some(_) => c.workload.what_rx(),
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
    /// Who ran it: `reactive` (the lab's crate) or `rx` (RxJava on the JVM).
    pub implementation: String,
    /// The library and its version (`RxJava 3.1.5`).
    pub library: String,
    /// rx rows: the JVM (version, flags, collectors, heap).
    pub jvm: Option<serde_json::Value>,
    /// rx rows: `--jvm-gc`'s setting.
    pub jvm_gc: Option<String>,
    /// rx rows: collections per measured run (every valid fork's runs).
    pub gc_count: Vec<u64>,
    /// rx rows: their time per measured run, ms.
    pub gc_ms: Vec<u64>,
    /// rx rows: bytes allocated per op, per measured run (every thread of the JVM).
    pub allocated_bytes_per_op: Vec<f64>,
    /// rx rows: perf counters of the whole java process per op, per measured run.
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

/// The targets rest on each row's ns/op: a point per row (its median over forks, the
/// interval of that median as its bar), the seed's JVM figures beside them.
fn main_chart(r: &Results) -> Option<Chart> {
    let titles = (
        "ns per op by workload (log scale; bars: interval of the median over forks)",
        "workload (an op: an element or a subscription)",
        "ns/op",
    );
    let (mut c, cats) =
        super::charts::score_chart(r, titles, |x| Some(("this run".to_string(), x.label.clone())))?;
    let seed: Vec<(String, f64)> = r
        .results
        .iter()
        .filter_map(|x| {
            let w = detail(x).workload;
            let (_, ns) = SEED_JVM_NS_PER_OP.iter().find(|(n, _)| *n == w)?;
            Some((x.label.clone(), *ns))
        })
        .collect();
    super::charts::add_reference(&mut c, &cats, "seed 000 (JVM)", &seed);
    Some(c)
}

/// A row's typed detail (the default for a row that has none).
fn detail(x: &Row) -> SubscribeDetail {
    x.typed_detail().unwrap_or_default()
}

/// The row's ratio among those `keep` keeps: as the row (its text), as the baseline, or none.
fn ratio_text(r: &Results, label: &str, keep: impl Fn(&Ratio) -> bool) -> String {
    let mine = |x: &&Ratio| keep(x);
    match r.ratios.iter().filter(mine).find(|x| x.variant == label) {
        Some(x) => x.text(),
        None if r.ratios.iter().filter(mine).any(|x| x.baseline == label) => "baseline".into(),
        None => "–".into(),
    }
}

/// Whether a ratio pairs a row with its rx counterpart.
fn against_rx(q: &Ratio) -> bool {
    q.baseline.contains("rx-")
}

fn main_table(a: &SubscribeArgs, r: &Results) -> Table {
    let baseline = r.ratios.iter().find(|q| !against_rx(q)).map(|x| x.baseline.clone());
    let has_rx = r.ratios.iter().any(against_rx);
    let mut t = Table::new(
        format!("Subscribe overhead (N = {}; a fork's score is the median of its runs, a row's the median over forks)", a.elements),
        &["workload", "what", "op", "status", "ns/op [interval]", "run ms", "ops/s", "mean ± 99.9% CI ns/op (all runs)", "sd", "forks"],
    );
    if let Some(b) = &baseline {
        t.header.push(format!("vs {b} (throughput, paired)"));
    }
    if has_rx {
        t.header.push("vs its RxJava row (throughput, paired)".into());
    }
    for x in &r.results {
        let d = detail(x);
        let w: Option<Workload> = serde_json::from_value(json!(d.workload)).ok();
        let op = w.map_or("?", Workload::op);
        let s: Option<Summary> = d.ns_per_op;
        let what = d.what;
        let mut line = vec![x.label.clone(), what, op.to_string(), x.status.word().to_string()];
        if x.status != Status::Ok {
            line.push(x.error.clone().unwrap_or_default());
            line.extend(std::iter::repeat_n("–".to_string(), 5));
        } else {
            line.push(match (x.score, x.score_ci) {
                (Some(m), Some([lo, hi])) => format!("{m:.3} [{lo:.3}, {hi:.3}]"),
                (Some(m), None) => format!("{m:.3} [–]"),
                _ => "–".into(),
            });
            line.push(d.run_ms.map_or("–".into(), |m| format!("{m:.3}")));
            line.push(d.ops_per_s.map_or("–".into(), |o| format!("{o:.3e} {op}s/s")));
            line.push(s.as_ref().map_or("–".into(), |s| match s.ci999_half {
                Some(h) => format!("{:.3} ± {h:.3}", s.mean),
                None => format!("{:.3} ± n/a", s.mean),
            }));
            line.push(s.as_ref().map_or("–".into(), |s| format!("{:.3}", s.stddev)));
            line.push(format!("{}/{}", x.fork_scores().len(), x.forks.len()));
        }
        if baseline.is_some() {
            line.push(ratio_text(r, &x.label, |q| !against_rx(q)));
        }
        if has_rx {
            line.push(ratio_text(r, &x.label, against_rx));
        }
        t.rows.push(line);
    }
    t.note = Some(
        "ns/op = run time / N, where an op is one element (range, publish-on) or one subscription \
         (Mono.just, hand-written): the units differ, as the seed warns. The interval is the \
         order-statistic interval of the median over forks; `forks` counts those with a score. \
         A ratio > 1 means the row is faster than the row it is paired with (its median over \
         rounds, with the repeat interval: 13 rounds or more)."
            .into(),
    );
    t
}

/// The rx rows' JVM evidence: collector, GC per run, allocation and CPU per op.
fn jvm_table(r: &Results) -> Option<Table> {
    let med = |v: Vec<f64>| crate::stats::median(&v);
    let fmt = |v: Option<f64>, p: usize| v.map_or("–".into(), |v| format!("{v:.p$}"));
    let mut t = Table::new(
        "The rx rows' JVM (medians over the measured runs of the valid forks)",
        &[
            "row",
            "library",
            "JVM, collector",
            "GC per run",
            "GC ms per run",
            "allocated B/op",
            "CPU ns/op (every JVM thread)",
            "context switches per 1k ops",
        ],
    );
    for x in &r.results {
        let d = detail(x);
        if d.implementation != "rx" {
            continue;
        }
        let jvm = d.jvm.as_ref().map_or("?".into(), |j| {
            format!(
                "{} {}",
                j["version"].as_str().unwrap_or("?"),
                d.jvm_gc.clone().unwrap_or_default()
            )
        });
        let counter =
            |k: &str| med(d.counters.iter().filter_map(|c| c.get(k).copied().flatten()).collect());
        t.rows.push(vec![
            x.label.clone(),
            d.library.clone(),
            jvm,
            fmt(med(d.gc_count.iter().map(|&c| c as f64).collect()), 0),
            fmt(med(d.gc_ms.iter().map(|&c| c as f64).collect()), 0),
            fmt(med(d.allocated_bytes_per_op.clone()), 1),
            fmt(counter("task-clock"), 2),
            fmt(counter("context-switches").map(|c| c * 1e3), 3),
        ]);
    }
    t.note = Some(
        "GC from the GarbageCollectorMXBeans and allocation from HotSpot's per-thread \
         counters, read around each run inside the JVM; CPU and context switches from perf \
         counters on every thread of the java process (JIT and GC threads included) between \
         the run's marks, divided by N."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

/// The seed's targets and the reactive crate's throughput target, on the rows' scores (`None`: not decided,
/// the row failed).
fn targets(r: &Results) -> Vec<Target> {
    let mut out = Vec::new();
    for x in r.results.iter().filter(|x| detail(x).implementation != "rx") {
        let ok = x.score.filter(|_| x.status == Status::Ok);
        let workload = detail(x).workload;
        let mut t = match workload.as_str() {
            // ns per element × 1M elements / 1e6 ns per ms: the run time scaled to 1M, in ms.
            "flux-range" => Target {
                what: "Flux.range(1M) summed, run time scaled to 1M elements".into(),
                target: "≤ 1 ms (the seed's JVM: 6 ms)".into(),
                measured: ok.map_or("n/a".into(), |m| format!("{m:.3} ms")),
                met: ok.map(|m| m <= 1.0),
            },
            "mono-just" => Target {
                what: "Mono.just subscribed".into(),
                target: "≤ 5 ns/subscription (the seed's JVM: 24 ns)".into(),
                measured: ok.map_or("n/a".into(), |m| format!("{m:.3} ns")),
                met: ok.map(|m| m <= 5.0),
            },
            "hand-written" => Target {
                what: "hand-written publisher subscribed".into(),
                target: "≤ 2 ns/subscription (the seed's JVM: 6 ns)".into(),
                measured: ok.map_or("n/a".into(), |m| format!("{m:.3} ns")),
                met: ok.map(|m| m <= 2.0),
            },
            _ => {
                let rate = ok.filter(|m| *m > 0.0).map(|ns| 1e3 / ns);
                Target {
                    what: format!("{}: range → publish_on(256) → sum", x.label),
                    target: "≥ 50 M elements/s (the reactive crate's throughput target)".into(),
                    measured: rate.map_or("n/a".into(), |m| format!("{m:.1} M elements/s")),
                    met: rate.map(|m| m >= 50.0),
                }
            }
        };
        if let Some(side) = rx_side_by_side(r, x) {
            t.target = format!("{}; {side}", t.target);
        }
        out.push(t);
    }
    out
}

/// The rx counterpart of reactive row `x`, measured in the same rounds: its score and the
/// paired ratio (`None` without an rx row).
fn rx_side_by_side(r: &Results, x: &Row) -> Option<String> {
    let q = r.ratios.iter().find(|q| q.variant == x.label && against_rx(q))?;
    let rx = r.results.iter().find(|y| y.label == q.baseline)?;
    let score = match (rx.status, rx.score) {
        (Status::Ok, Some(s)) => format!("{s:.3} ns/{}", detail(rx).op),
        (st, _) => st.word().to_string(),
    };
    Some(format!("RxJava here, same rounds: {score}, this row {} faster (paired)", q.text()))
}

fn method_lines(a: &SubscribeArgs) -> Vec<String> {
    let w = a.workers as usize;
    let scheds: Vec<String> = a.scheduler.0.iter().map(|s| s.describe(w)).collect();
    vec![
        "Every run is timed with std::time::Instant (ns resolution); a fork's runs share one \
         process, warm-ups first."
            .into(),
        "Each run's result is checked, warm-ups included: the range's sum must equal \
         N(N+1)/2, the subscribe loops must deliver N (one element of value 1 per \
         subscription); a wrong result makes the row INVALID."
            .into(),
        "The workloads are reactive::bench::{range_sum, mono_just_subscribe, \
         hand_written_subscribe, publish_on_sum}; every element of the synchronous workloads \
         passes through black_box so the sum is not folded into its closed form. Each \
         subscription's sum goes to a sink: the hand-written loop's is a local of the loop (as \
         RxBench's Sum object is), Mono.just's a thread-local (Mono takes 'static \
         subscribers), which black_box makes a load and a store per subscription."
            .into(),
        format!(
            "publish-on: {} ({}), prefetch {}, one scheduler per fork made before its first \
             run; the timed run includes subscribing and waiting for on_complete. As in \
             Reactor, the range emits on the thread that requests, so after the first \
             prefetch the worker produces each replenish batch itself (reactive's docs \
             explain).",
            if scheds.len() > 1 { "one row per scheduler" } else { "on" },
            scheds.join(", "),
            reactive::DEFAULT_PREFETCH
        ),
        "The Flux.range target is checked on the row's ns/element, which is the run time \
         scaled to 1M elements in ms."
            .into(),
        "rx rows: RxJava 3 (3.1.12, Maven Central) in a JVM per \
         fork, tools/jvm/rx (RxBench.java): Flowable.range summed into a plain long field, \
         each element made opaque to the JIT as black_box makes it to LLVM (JMH's \
         Blackhole trick: a store behind two volatile loads, no fence), Single.just(1) subscribed N times, the seed's \
         SyncSinglePublisher written against org.reactivestreams (one element once demand \
         arrives; request(n ≤ 0) signals onError, no recursion from onNext), \
         observeOn(Schedulers.single(), false, 256) for publish_on(single, 256). The same \
         warm-up and measured runs, timed with System.nanoTime around each run; each run's \
         result checked against the lab's closed form; GC collections and time \
         (GarbageCollectorMXBeans) and bytes allocated by every thread per run; perf \
         counters on every thread of the java process between the run marks. Each rx row \
         is paired within rounds with the reactive row of its workload."
            .into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::charts::fixture::{results, row};

    #[test]
    fn the_main_chart_is_each_rows_score_and_interval_beside_the_seeds_figure() {
        let mut rows = vec![
            row(
                "flux-range",
                "flux-range",
                1.3,
                Some([1.2, 1.4]),
                json!({"workload": "flux-range"}),
            ),
            row("mono-just", "mono-just", 3.3, None, json!({"workload": "mono-just"})),
            row(
                "publish-on[single]",
                "publish-on",
                11.0,
                Some([9.0, 12.5]),
                json!({"workload": "publish-on"}),
            ),
        ];
        rows[1].status = Status::Invalid;
        let r = results("subscribe-overhead", rows, Vec::new());
        let c = main_chart(&r).expect("a chart");
        let x_of = |l: &str| c.x_names.iter().find(|(_, n)| n == l).map(|(x, _)| *x);
        for x in r.results.iter().filter(|x| x.status == Status::Ok) {
            let at = x_of(&x.label).expect("a category per row");
            assert!(c.series[0].1.contains(&(at, x.score.expect("score"))), "{:?}", c.series);
            let bar = x.score_ci.map(|[a, b]| (at, a, b));
            assert_eq!(c.intervals[0].1.iter().find(|v| v.0 == at).copied(), bar);
        }
        assert_eq!(x_of("mono-just"), None, "a row that failed its checks is not drawn");
        assert_eq!(c.references, vec![("seed 000 (JVM)".to_string(), vec![(1.0, 6.0)])]);
        assert!(c.title.contains("log scale"));
    }
}
