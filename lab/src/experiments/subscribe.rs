//! `subscribe-overhead`: seed 000's first table, timed with a nanosecond clock.
//!
//! Workloads, each cell its own child per round: `Flux.range(1, N)` summed (one
//! subscription, N *elements*), `Mono.just(1)` subscribed N times and the hand-written
//! publisher subscribed N times (N *subscriptions*), and the reactive crate's throughput
//! case `Flux.range(1, N) → publish_on(scheduler, 256) → sum` (N elements through the
//! operator's queue, the sum on the worker), one row per `--scheduler`. Each run's result
//! is checked against its closed form (`N(N+1)/2`, or `N`); a wrong result makes the run,
//! and so its row, INVALID.

use super::schedulers::{self, Sched, Schedulers};
use crate::experiment::{
    size, CellPlan, Defaults, Experiment, Measured, Outcome, Plan, Shared, TraceMode,
};
use crate::experiment::{CellRecord, Finished};
use crate::protocol::Ctx;
use crate::results::{Chart, Results, Row, Status, Table, Target};
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
}

/// One run: its time and the result it computed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    /// Wall time of the run, ns.
    pub ns: f64,
    /// What the workload returned (`u64::MAX` when publish_on failed or timed out).
    pub result: u64,
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

impl Experiment for SubscribeOverhead {
    const NAME: &'static str = "subscribe-overhead";
    const ABOUT: &'static str =
        "seed 000 (the Reactor baseline), its subscribe table: Flux.range summed, Mono.just and a \
        hand-written publisher subscribed N times, range → publish_on → sum per scheduler; \
        ns per element or subscription, each run's result checked";
    const DEFAULTS: Defaults =
        Defaults { rounds: 6, runs: 5, warmup: 3, trace: &[TraceMode::Off], heap: None };
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
        let mut specs: Vec<(Workload, Option<Sched>)> = vec![
            (Workload::FluxRange, None),
            (Workload::MonoJust, None),
            (Workload::HandWritten, None),
        ];
        specs.extend(a.scheduler.0.iter().map(|s| (Workload::PublishOn, Some(*s))));
        let cells = specs
            .into_iter()
            .map(|(w, s)| {
                let cell = Cell {
                    workload: w,
                    scheduler: s,
                    workers,
                    n: a.elements,
                    warmup: shared.warmup as usize,
                    runs: shared.runs as usize,
                };
                // Rows of different workloads measure different ops: only the publish-on
                // rows (one per scheduler) share a group and are compared.
                let mut c = CellPlan::new(cell, label(w, s), w.name()).key("workload", w.name());
                if let Some(s) = s {
                    c = c.key("scheduler", s.name());
                    c.threads = 1 + s.threads(workers);
                }
                c.unit = "ns/op";
                c.heap = false;
                c.trace = false;
                c
            })
            .collect::<Vec<_>>();
        // The publish-on rows against the first scheduler given (single by default).
        let baseline =
            (a.scheduler.0.len() > 1).then(|| label(Workload::PublishOn, Some(a.scheduler.0[0])));
        Ok(Plan {
            pairs: Vec::new(),
            cells,
            baseline,
            config: json!({"elements": a.elements, "schedulers": a.scheduler, "workers": workers, "prefetch": reactive::DEFAULT_PREFETCH}),
            input_size: a.elements,
            notes: Vec::new(),
        })
    }

    fn run_cell(cell: &Cell, ctx: &mut Ctx) -> Result<SubscribeOutcome, String> {
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
        let mut out = SubscribeOutcome { n, expected, warmup: Vec::new(), runs: Vec::new() };
        for i in 0..cell.warmup + cell.runs {
            let t = Instant::now();
            let result = f(n);
            let run = Run { ns: t.elapsed().as_nanos() as f64, result };
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
        out.tables
            .extend(crate::report::failure_table(out, &["workload"], |x| vec![x.label.clone()]));
        out.targets = targets(out);
        out.verdict = crate::experiments::verdict::usual(&out.ratios, &out.targets);
        out.charts.extend(main_chart(out));
        out.method.extend(method_lines(a));
    }
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
    row.set_detail(&SubscribeDetail {
        workload: c.workload.name().to_string(),
        scheduler: c.scheduler.map(Sched::name).map(str::to_string),
        op: c.workload.op().to_string(),
        what: c.workload.what(c.scheduler, c.workers),
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
    /// The workload (`flux-range`, `mono-just`, …).
    pub workload: String,
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

fn ratio_text(r: &Results, label: &str) -> String {
    match r.ratios.iter().find(|x| x.variant == label) {
        Some(x) => x.text(),
        None if r.ratios.iter().any(|x| x.baseline == label) => "baseline".into(),
        None => "–".into(),
    }
}

fn main_table(a: &SubscribeArgs, r: &Results) -> Table {
    let baseline = r.ratios.first().map(|x| x.baseline.clone());
    let mut t = Table::new(
        format!("Subscribe overhead (N = {}; a fork's score is the median of its runs, a row's the median over forks)", a.elements),
        &["workload", "what", "op", "status", "ns/op [interval]", "run ms", "ops/s", "mean ± 99.9% CI ns/op (all runs)", "sd", "forks"],
    );
    if let Some(b) = &baseline {
        t.header.push(format!("vs {b} (throughput, paired)"));
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
            line.push(ratio_text(r, &x.label));
        }
        t.rows.push(line);
    }
    t.note = Some(
        "ns/op = run time / N, where an op is one element (range, publish-on) or one subscription \
         (Mono.just, hand-written): the units differ, as the seed warns. The interval is the \
         order-statistic interval of the median over forks; `forks` counts those with a score."
            .into(),
    );
    t
}

/// The seed's targets and the reactive crate's throughput target, on the rows' scores (`None`: not decided,
/// the row failed).
fn targets(r: &Results) -> Vec<Target> {
    let mut out = Vec::new();
    for x in &r.results {
        let ok = x.score.filter(|_| x.status == Status::Ok);
        let workload = detail(x).workload;
        let t = match workload.as_str() {
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
        out.push(t);
    }
    out
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
         passes through black_box so the sum is not folded into its closed form."
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
