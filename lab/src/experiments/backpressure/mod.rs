//! `backpressure-buffer`: seed 000's corrected `onBackpressureBuffer` test.
//!
//! The seed's mistake was `Flux.range(…).onBackpressureBuffer(10)` subscribed with a plain
//! lambda: unbounded demand, no asynchronous boundary, so the buffer never fills. The
//! corrected test needs a fixed capacity, a fixed producer rate, explicit downstream
//! demand and an asynchronous boundary:
//!
//! * grid: `range(0, N).map(pace).on_backpressure_buffer(capacity, DropLatest)
//!   .publish_on(single, 1)` into a subscriber that spins a fixed service time per element
//!   and requests 1 after each; the producer is paced at `rate ×` the consumer's rate. Each
//!   element either arrives or overflows: `delivered + overflows == N` and completion are
//!   checked on every run, or the row is INVALID.
//! * the seed's two cases (1000 elements, capacity 10): a synchronous `request(1)` loop
//!   (never overflows), and `publish_on(single, 1)` behind the buffer with a subscriber that
//!   requests nothing until the range has finished (989 overflow at once with DropLatest:
//!   element 0 sits in publish_on's queue, 1..=10 fill the buffer; 1 then an error with
//!   Error). [`seed_case`] returns the counts; every run checks them against those the
//!   reactive crate's tests establish, and `lab/tests/seed000_backpressure.rs` asserts them.
//!
//! A row's measured value is its overflow count (a count, not a timing; the grid's counts
//! vary a little with scheduling, which the rounds show). The trace pass runs the async
//! seed case and one overflowing grid cell under the flight recorder: the buffer emits
//! `instant!("overflow")`, and the pacing map emits `counter!("buffer_depth")` (produced −
//! delivered − overflowed, sampled per element).
//!
//! The JVM (`--impl`; [`crate::measure::rx`], `jvm.rs`): Reactor, the seed's library
//! (`reactor-…` rows, tools/jvm/reactor/src/main/java/ReactorBackpressure.java:
//! `onBackpressureBuffer(capacity, onBufferOverflow, DROP_LATEST | DROP_OLDEST | ERROR)`
//! behind `publishOn(Schedulers.single(), false, 1)`; its DROP_LATEST drops the arriving
//! element as the reactive crate's does; under ERROR it calls onBufferOverflow for the
//! element that overflowed, then signals its OverflowException after the buffered
//! elements), and RxJava 3 (`rx-…` rows, tools/jvm/rx/src/main/java/RxBackpressure.java), each the same
//! seed cases and grid cells in the same rounds, each fork a JVM. RxJava's:
//! `range.map(pace).onBackpressureBuffer(capacity, onOverflow, DROP_LATEST | DROP_OLDEST |
//! ERROR)`, with `observeOn(Schedulers.single(), false, 1)` for publish-on-1 and the grid,
//! without it for sync-request-1. That is RxJava's form with an exact capacity (its
//! `onBackpressureBuffer(int)` rounds the queue up to a power of two). An overflow is a
//! dropped element (onOverflow) or, under ERROR, the MissingBackpressureException the buffer
//! signals; RxJava's DROP_LATEST drops the newest *buffered* element rather than the
//! arriving one, so the counts compare and the elements delivered differ. Every run checks
//! itself in the JVM (every emitted element delivered or overflowed, in order) and again
//! here against the lab's own N and the seed's counts.

mod jvm;
mod report;

use super::rx_rows::{self, ImplArgs};
use crate::experiment::{
    self, size, CellPlan, Defaults, Experiment, Measured, Plan, Shared, TraceMode,
};
use crate::experiment::{CellRecord, Finished};
use crate::measure::rx::{Lib, LibSettings};
use crate::protocol::Ctx;
use crate::results::{FileLink, Results, Row};
use clap::Args;
use reactive::{
    Error, Flux, Overflow, Scheduler, SharedSubscription, Subscriber, Subscription, UNBOUNDED,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, OnceLock};
use std::time::{Duration, Instant};

/// The experiment.
#[derive(Debug)]
pub struct BackpressureBuffer;

/// The consumer's fixed work per element.
const SERVICE_NS: u64 = 20_000;
/// The seed's elements.
const SEED_N: u64 = 1000;
/// The rx rows' heap: a run holds at most its capacity and a few elements; 256 MiB spares
/// each JVM's start the pre-touch of seed 000's 1 GiB (no collection runs during a grid
/// run either way: it allocates a boxed Integer per element).
const RX_HEAP: u64 = 256 << 20;
/// The seed's buffer capacity.
const SEED_CAP: usize = 10;
/// The seed's cases: (case, overflow policy), each with the overflow count and terminal
/// signal the reactive crate's tests establish for them.
const SEED_CASES: &[(&str, &str)] = &[
    ("sync-request-1", "drop-latest"),
    ("publish-on-1", "drop-latest"),
    ("publish-on-1", "drop-oldest"),
    ("publish-on-1", "error"),
];

/// What a seed case must end with: (overflows, terminal starts with).
fn seed_expectation(case: &str, policy: &str) -> (u64, &'static str) {
    match (case, policy) {
        ("sync-request-1", _) => (0, "complete"),
        // Element 0 waits in publish_on's 1-slot queue, 1..=10 fill the buffer.
        (_, "error") => (1, "error"),
        _ => (SEED_N - 1 - SEED_CAP as u64, "complete"),
    }
}

fn spin_until(t0: Instant, ns: u64) {
    while (t0.elapsed().as_nanos() as u64) < ns {
        std::hint::spin_loop();
    }
}

/// What a run ended with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// Elements the subscriber received.
    pub delivered: u64,
    /// The buffer's overflow count (read when the range had finished, for the seed cases).
    pub overflows: u64,
    /// The terminal signal: `complete` or the error.
    pub terminal: String,
}

enum Demand {
    /// request(1) in on_subscribe and after each on_next, spinning `service_ns` first.
    OneByOne { service_ns: u64 },
    /// Detach in on_subscribe and hand the subscription out; request nothing.
    Detached(mpsc::Sender<SharedSubscription>),
}

struct Sub {
    demand: Demand,
    delivered: u64,
    consumed: Arc<AtomicU64>,
    done: Option<mpsc::Sender<(u64, String)>>,
}

impl Subscriber<u64> for Sub {
    fn on_subscribe<S: Subscription>(&mut self, s: &S) {
        match &self.demand {
            Demand::OneByOne { .. } => s.request(1),
            Demand::Detached(tx) => {
                let _ = tx.send(s.detach());
            }
        }
    }
    fn on_next<S: Subscription>(&mut self, _item: u64, s: &S) {
        self.delivered += 1;
        self.consumed.store(self.delivered, Ordering::Release);
        if let Demand::OneByOne { service_ns } = self.demand {
            if service_ns > 0 {
                spin_until(Instant::now(), service_ns);
            }
            s.request(1);
        }
    }
    fn on_error(&mut self, error: Error) {
        if let Some(tx) = self.done.take() {
            let _ = tx.send((self.delivered, format!("error: {error}")));
        }
    }
    fn on_complete(&mut self) {
        if let Some(tx) = self.done.take() {
            let _ = tx.send((self.delivered, "complete".into()));
        }
    }
}

fn policy(name: &str) -> Result<Overflow, String> {
    match name {
        "drop-latest" => Ok(Overflow::DropLatest),
        "drop-oldest" => Ok(Overflow::DropOldest),
        "error" => Ok(Overflow::Error),
        o => Err(format!("overflow policy '{o}'; valid: drop-latest, drop-oldest, error")),
    }
}

/// The seed's cases with 1000 elements and capacity 10: `"sync-request-1"` (a synchronous
/// request(1) loop) or `"publish-on-1"` (publish_on(single, 1) behind the buffer, no demand
/// until the range has finished), with overflow policy `"drop-latest"`, `"drop-oldest"` or
/// `"error"`.
pub fn seed_case(case: &str, policy_name: &str) -> Result<Outcome, String> {
    let p = policy(policy_name)?;
    let f = Flux::range(0, SEED_N).on_backpressure_buffer(SEED_CAP, p);
    let overflows = f.overflow_counter();
    let (tx, rx) = mpsc::channel();
    let consumed = Arc::new(AtomicU64::new(0));
    let timeout = Duration::from_secs(30);
    match case {
        "sync-request-1" => {
            let demand = Demand::OneByOne { service_ns: 0 };
            f.subscribe(Sub { demand, delivered: 0, consumed, done: Some(tx) });
            let (delivered, terminal) =
                rx.recv_timeout(timeout).map_err(|_| "no terminal signal within 30 s")?;
            Ok(Outcome { delivered, overflows: overflows.get(), terminal })
        }
        "publish-on-1" => {
            let s = Scheduler::single();
            let (htx, hrx) = mpsc::channel();
            let sub = Sub { demand: Demand::Detached(htx), delivered: 0, consumed, done: Some(tx) };
            // The range is synchronous: subscribe returns once all elements met the buffer.
            f.publish_on(&s, 1).subscribe(sub);
            let at_once = overflows.get();
            let handle = hrx.recv_timeout(timeout).map_err(|_| "no on_subscribe within 30 s")?;
            handle.request(UNBOUNDED);
            let (delivered, terminal) =
                rx.recv_timeout(timeout).map_err(|_| "no terminal signal within 30 s")?;
            let later = overflows.get();
            let _ = s.dispose();
            if later != at_once {
                return Err(format!("{} overflows after the range had finished", later - at_once));
            }
            Ok(Outcome { delivered, overflows: at_once, terminal })
        }
        o => Err(format!("seed case '{o}'; valid: sync-request-1, publish-on-1")),
    }
}

/// One grid cell: N elements paced at `rate ×` the consumer's rate into a buffer of
/// `capacity`, then publish_on(single, 1), a consumer spinning `SERVICE_NS` per element.
fn grid_cell(n: u64, capacity: usize, rate: f64) -> Result<(Outcome, f64), String> {
    let period_ns = (SERVICE_NS as f64 / rate) as u64;
    let consumed = Arc::new(AtomicU64::new(0));
    let c2 = consumed.clone();
    // The buffer's own counter, filled in once the buffer exists.
    let ov: Arc<OnceLock<reactive::OverflowCounter>> = Arc::default();
    let ov2 = ov.clone();
    let t0 = Instant::now();
    let f = Flux::range(0, n)
        .map(move |i| {
            spin_until(t0, i * period_ns);
            let over = ov2.get().map_or(0, |c| c.get());
            let depth = i.saturating_sub(c2.load(Ordering::Acquire) + over);
            handoff::counter!("buffer_depth", depth);
            i
        })
        .on_backpressure_buffer(capacity, Overflow::DropLatest);
    let overflows = f.overflow_counter();
    let _ = ov.set(overflows.clone());
    let s = Scheduler::single();
    let (tx, rx) = mpsc::channel();
    let demand = Demand::OneByOne { service_ns: SERVICE_NS };
    f.publish_on(&s, 1).subscribe(Sub { demand, delivered: 0, consumed, done: Some(tx) });
    let r = rx.recv_timeout(Duration::from_secs(60));
    let elapsed = t0.elapsed().as_secs_f64() * 1e3;
    let _ = s.dispose();
    let (delivered, terminal) = r.map_err(|_| "no terminal signal within 60 s".to_string())?;
    Ok((Outcome { delivered, overflows: overflows.get(), terminal }, elapsed))
}

/// A list of buffer capacities, `10,100,1000`.
#[derive(Debug, Clone, Serialize)]
pub struct Capacities(pub Vec<usize>);

fn capacities(s: &str) -> Result<Capacities, String> {
    let v =
        s.split(',').map(|x| size(x.trim()).map(|n| n as usize)).collect::<Result<Vec<_>, _>>()?;
    if v.is_empty() || v.contains(&0) {
        return Err(format!("capacities must be at least 1 (got '{s}')"));
    }
    Ok(Capacities(v))
}

/// A list of producer rates as multiples of the consumer's, `0.5,1,2,4`.
#[derive(Debug, Clone, Serialize)]
pub struct Rates(pub Vec<f64>);

fn rates(s: &str) -> Result<Rates, String> {
    let v = s
        .split(',')
        .map(|x| {
            x.trim().parse::<f64>().map_err(|_| format!("rate '{}' is not a number", x.trim()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if v.is_empty() || v.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
        return Err(format!("rates must be positive numbers (got '{s}')"));
    }
    Ok(Rates(v))
}

/// Its options.
#[derive(Args, Debug, Clone, Serialize)]
pub struct BackpressureArgs {
    /// Elements per grid run, a count (the seed cases always use 1000).
    #[arg(long, value_parser = size, default_value = "2000")]
    pub elements: u64,
    /// Buffer capacities of the grid, in elements, a comma list.
    #[arg(long, value_parser = capacities, default_value = "10,100,1000")]
    pub capacities: Capacities,
    /// Producer rates of the grid, a comma list of multiples (×) of the consumer's nominal
    /// rate (1: as fast as it consumes).
    #[arg(long, value_parser = rates, default_value = "0.5,1,2,4")]
    pub rates: Rates,
    /// Who runs the cases (`reactive`: the reactive crate; `rx`: RxJava 3's
    /// onBackpressureBuffer, rows `rx-…`; `reactor`: Reactor's, rows `reactor-…`), and the
    /// JVM rows' JDK and flags.
    #[command(flatten)]
    pub rx: ImplArgs,
}

/// What a child runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Case {
    /// One of the seed's cases.
    Seed {
        /// `sync-request-1` or `publish-on-1`.
        case: String,
        /// `drop-latest`, `drop-oldest` or `error`.
        policy: String,
    },
    /// A grid cell.
    Grid {
        /// Elements.
        n: u64,
        /// Buffer capacity.
        capacity: usize,
        /// Producer rate / the consumer's nominal rate.
        rate: f64,
    },
}

/// What a child is told.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// The case.
    pub case: Case,
    /// Warm-up runs.
    pub warmup: usize,
    /// Measured runs.
    pub runs: usize,
    /// A JVM library runs the case (an `rx-…` or `reactor-…` row), with these settings.
    #[serde(default)]
    pub rx: Option<LibSettings>,
}

/// One run, checked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BpRun {
    /// Its counts (none when the run could not finish).
    pub outcome: Option<Outcome>,
    /// Wall time of a grid run, ms.
    pub elapsed_ms: Option<f64>,
    /// Whether its checks passed.
    pub valid: bool,
    /// "ok" or what failed.
    pub verdict: String,
}

/// What a child returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BpOutcome {
    /// Warm-up runs (checked, not measured).
    pub warmup: Vec<BpRun>,
    /// Measured runs.
    pub runs: Vec<BpRun>,
    /// JVM rows: the library, its version and the JDK that ran it (the field's name is from
    /// when RxJava was the only one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rxjava_version: Option<String>,
    /// rx rows: the JVM (version, flags, collectors, heap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm: Option<serde_json::Value>,
}

impl BpRun {
    /// The run as the runner sees it: its overflows, and its check.
    fn check(&self) -> Measured {
        Measured {
            value: self.outcome.as_ref().map_or(0.0, |o| o.overflows as f64),
            valid: self.valid,
            verdict: self.verdict.clone(),
        }
    }
}

impl experiment::Outcome for BpOutcome {
    /// The overflow count of each run.
    fn measured(&self) -> Vec<Measured> {
        self.runs.iter().map(BpRun::check).collect()
    }

    fn warmups(&self) -> Vec<Measured> {
        self.warmup.iter().map(BpRun::check).collect()
    }
}

/// One run of `case`, with its checks.
fn run_case(case: &Case) -> BpRun {
    let (outcome, elapsed_ms) = match case {
        Case::Seed { case, policy } => (seed_case(case, policy), None),
        Case::Grid { n, capacity, rate } => match grid_cell(*n, *capacity, *rate) {
            Ok((o, ms)) => (Ok(o), Some(ms)),
            Err(e) => (Err(e), None),
        },
    };
    let verdict = match (&outcome, case) {
        (Err(e), _) => Err(e.clone()),
        (Ok(o), Case::Seed { case, policy }) => {
            let (want, terminal) = seed_expectation(case, policy);
            if o.overflows != want || !o.terminal.starts_with(terminal) {
                Err(format!(
                    "{} overflows ending {:?}, expected {want} ending {terminal}",
                    o.overflows, o.terminal
                ))
            } else {
                Ok(())
            }
        }
        (Ok(o), Case::Grid { n, .. }) => {
            if o.delivered + o.overflows != *n || o.terminal != "complete" {
                Err(format!(
                    "delivered {} + overflowed {} != {n} (terminal: {})",
                    o.delivered, o.overflows, o.terminal
                ))
            } else {
                Ok(())
            }
        }
    };
    BpRun {
        outcome: outcome.ok(),
        elapsed_ms,
        valid: verdict.is_ok(),
        verdict: verdict.err().unwrap_or_else(|| "ok".into()),
    }
}

fn fluid_model(n: u64, capacity: usize, rate: f64) -> f64 {
    (n as f64 * (1.0 - 1.0 / rate) - capacity as f64).max(0.0)
}

/// The seed's cases and the grid, run by the reactive crate (`rx: None`) or by a JVM
/// library (`rx-…`, `reactor-…` rows, key `impl` the library; their trace pass records the
/// JVM with Java Flight Recorder, [`crate::profile::jfr`]).
fn cells_of(
    a: &BackpressureArgs,
    warmup: usize,
    runs: usize,
    rx: Option<&LibSettings>,
) -> Vec<CellPlan<Cell>> {
    let name = |l: String| match rx {
        Some(s) => rx_rows::label(s, &l).unwrap_or(l),
        None => l,
    };
    let mut cells = Vec::new();
    for &(case, policy) in SEED_CASES {
        let c = Cell {
            case: Case::Seed { case: case.into(), policy: policy.into() },
            warmup,
            runs,
            rx: rx.cloned(),
        };
        let mut p =
            CellPlan::new(c, name(format!("{case}[{policy}]")), "seed").keyed(&BackpressureKey {
                case: Some(case.into()),
                policy: Some(policy.into()),
                ..Default::default()
            });
        let stem =
            if policy == "drop-latest" { case.to_string() } else { format!("{case}-{policy}") };
        p.file_stem = name(stem);
        // The async case is the one whose overflows a trace shows.
        p.trace = case == "publish-on-1" && policy == "drop-latest";
        cells.push(p);
    }
    // The grid cell traced: the first that overflows in the fluid model (c10 r2 by default).
    let traced = a
        .capacities
        .0
        .iter()
        .flat_map(|&c| a.rates.0.iter().map(move |&r| (c, r)))
        .find(|&(c, r)| fluid_model(a.elements, c, r) > 0.0);
    for &capacity in &a.capacities.0 {
        for &rate in &a.rates.0 {
            let case = Case::Grid { n: a.elements, capacity, rate };
            let c = Cell { case, warmup, runs, rx: rx.cloned() };
            let mut p = CellPlan::new(c, name(format!("grid[c{capacity},r{rate}]")), "grid").keyed(
                &BackpressureKey {
                    capacity: Some(capacity as u64),
                    rate: Some(rate),
                    ..Default::default()
                },
            );
            p.file_stem = name(format!("grid-c{capacity}-r{rate}"));
            p.trace = traced == Some((capacity, rate));
            p.threads = 2;
            cells.push(p);
        }
    }
    if let Some(s) = rx {
        let library = Some(s.lib.name().to_string());
        cells = cells
            .into_iter()
            .map(|p| p.rekey(|k: &mut BackpressureKey| k.library = library.clone()))
            .collect();
    }
    cells
}

/// The JVM library whose row `x` is (`None`: the reactive crate's).
fn lib_of(x: &Row) -> Option<Lib> {
    let imp = x.key_as::<BackpressureKey>().library?;
    Lib::ALL.into_iter().find(|l| l.name() == imp)
}

/// A `backpressure-buffer` row's key: the dimensions that name its cell (a seed case and
/// policy, or a grid cell's capacity and rate).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BackpressureKey {
    /// A seed row's case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    /// A seed row's overflow policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// A grid row's buffer capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u64>,
    /// A grid row's producer-to-consumer rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// The JVM library, for its rows.
    #[serde(default, rename = "impl", skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
}

impl Experiment for BackpressureBuffer {
    const NAME: &'static str = "backpressure-buffer";
    const ABOUT: &'static str =
        "seed 000 (the Reactor baseline), its corrected onBackpressureBuffer test: overflows by \
        capacity × producer rate behind an async boundary with request(1) demand; the seed's \
        two cases checked against their exact counts; overflow instants in a trace; with \
        --impl reactor,rx (the default where the JVM side builds) the same cases on Reactor's \
        and RxJava 3's onBackpressureBuffer(capacity, onOverflow, strategy), rows \
        reactor-sync-request-1[…], reactor-publish-on-1[…], reactor-grid[…] and rx-…";
    const DEFAULTS: Defaults = Defaults {
        rounds: 3,
        runs: 1,
        warmup: 0,
        trace: &[TraceMode::Flight, TraceMode::Off],
        heap: None,
    };
    type Args = BackpressureArgs;
    type Cell = Cell;
    type Outcome = BpOutcome;
    type Key = BackpressureKey;
    type Detail = BackpressureDetail;

    fn plan(a: &BackpressureArgs, shared: &Shared) -> Result<Plan<Cell>, String> {
        crate::units::at_least_one(&[(a.elements, "--elements")])?;
        let chosen = a.rx.choose_sized(RX_HEAP)?;
        let (warmup, runs) = (shared.warmup as usize, shared.runs as usize);
        let mut cells = Vec::new();
        if chosen.reactive {
            cells.extend(cells_of(a, warmup, runs, None));
        }
        for lib in &chosen.jvm {
            cells.extend(cells_of(a, warmup, runs, Some(lib)));
        }
        for c in &mut cells {
            c.unit = "overflows";
            c.heap = false;
        }
        Ok(Plan {
            pairs: Vec::new(),
            cells,
            baseline: None,
            config: json!({"elements": a.elements, "capacities": a.capacities, "rates": a.rates, "service_ns": SERVICE_NS, "seed_elements": SEED_N, "seed_capacity": SEED_CAP, "reactive": chosen.reactive, "jvm": chosen.jvm}),
            input_size: a.elements,
            notes: chosen.note.into_iter().collect(),
        })
    }

    fn run_cell(cell: &Cell, ctx: &mut Ctx) -> Result<BpOutcome, String> {
        if let Some(rx) = &cell.rx {
            return jvm::run_rx(cell, rx, ctx);
        }
        let mut out =
            BpOutcome { warmup: Vec::new(), runs: Vec::new(), rxjava_version: None, jvm: None };
        for i in 0..cell.warmup + cell.runs {
            let r = run_case(&cell.case);
            if i < cell.warmup {
                out.warmup.push(r);
            } else {
                out.runs.push(r);
            }
            ctx.heartbeat();
        }
        Ok(out)
    }

    fn analyse(a: &BackpressureArgs, run: &Finished<Self>, out: &mut Results) {
        for (row, rec) in out.results.iter_mut().zip(&run.cells) {
            fill_row(row, rec);
        }
        out.tables.push(report::seed_table(out).headline());
        out.tables.push(report::grid_table(a, out));
        out.tables
            .extend(crate::analysis::failure_table(out, &["case"], |x| vec![x.label.clone()]));
        out.verdict = report::verdict(out);
        out.charts = report::charts(out);
        for rec in &run.cells {
            if let Some(t) = &rec.trace {
                match (&t.result, t.file_written) {
                    (Ok(_), true) => {
                        let what = if rec.plan.cell.rx.is_some() {
                            "Java Flight Recorder trace (Perfetto)"
                        } else {
                            "flight-recorder trace (Perfetto)"
                        };
                        out.files.push(FileLink {
                            file: t.file.clone(),
                            what: format!("{what}: {}", rec.plan.label),
                        });
                        out.notes.push(format!(
                            "trace {}: {}",
                            rec.plan.label,
                            t.note.clone().unwrap_or_default()
                        ));
                    }
                    (Ok(_), false) => out
                        .notes
                        .push(format!("trace {}: the child wrote no trace file", rec.plan.label)),
                    (Err(e), _) => out.notes.push(format!("trace {}: {e}", rec.plan.label)),
                }
            }
        }
        out.method.extend(report::method_lines());
    }
}

/// A `backpressure-buffer` row's own fields in results.json (beside the row's envelope).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BackpressureDetail {
    /// What the row is: one of the seed's cases or a grid cell (`kind`).
    #[serde(flatten)]
    pub case: CaseDetail,
    /// The row's score: overflows per run, the median over forks.
    pub overflows: Option<f64>,
    /// Elements delivered, the median over valid runs.
    pub delivered: Option<f64>,
    /// The terminal signal of the first valid run.
    pub terminal: Option<String>,
    /// Every run of every fork.
    pub runs: Vec<BpRun>,
    /// Who ran it: `reactive` (the lab's crate), `rx` (RxJava 3) or `reactor` (Reactor).
    #[serde(default)]
    pub implementation: String,
    /// JVM rows: the library, its version and the JDK (`Reactor 3.8.8 on JDK 25.0.3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// JVM rows: the JVM of the first fork that ran (version, flags, collectors, heap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm: Option<serde_json::Value>,
}

/// The row's case, by `kind`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum CaseDetail {
    /// One of the seed's cases.
    Seed {
        /// `sync-request-1` or `publish-on-1`.
        case: String,
        /// The overflow policy.
        policy: String,
        /// Overflows the reactive crate's tests expect.
        expected_overflows: u64,
        /// The terminal signal they expect.
        expected_terminal: String,
    },
    /// A cell of the capacity × rate grid.
    Grid {
        /// Elements.
        elements: u64,
        /// Buffer capacity.
        capacity: usize,
        /// Producer rate / the consumer's nominal rate.
        rate: f64,
        /// The fluid model's overflows.
        fluid_model: f64,
        /// Wall time per delivered element, µs, the median over valid runs.
        us_per_delivered: Option<f64>,
    },
}

fn fill_row(row: &mut Row, rec: &CellRecord<BackpressureBuffer>) {
    let runs: Vec<BpRun> = rec
        .forks
        .iter()
        .filter_map(|f| f.outcome.as_ref())
        .flat_map(|o| o.runs.iter().cloned())
        .collect();
    let valid: Vec<&BpRun> = rec.outcomes().flat_map(|o| o.runs.iter()).collect();
    let case = match &rec.plan.cell.case {
        Case::Seed { case, policy } => {
            let (want, terminal) = seed_expectation(case, policy);
            CaseDetail::Seed {
                case: case.clone(),
                policy: policy.clone(),
                expected_overflows: want,
                expected_terminal: terminal.to_string(),
            }
        }
        Case::Grid { n, capacity, rate } => {
            let per: Vec<f64> = valid
                .iter()
                .filter_map(|r| {
                    Some(r.elapsed_ms? * 1e3 / r.outcome.as_ref()?.delivered.max(1) as f64)
                })
                .collect();
            CaseDetail::Grid {
                elements: *n,
                capacity: *capacity,
                rate: *rate,
                fluid_model: fluid_model(*n, *capacity, *rate),
                us_per_delivered: crate::stats::median(&per),
            }
        }
    };
    let delivered: Vec<f64> =
        valid.iter().filter_map(|r| r.outcome.as_ref().map(|o| o.delivered as f64)).collect();
    let first = rec.forks.iter().find_map(|f| f.outcome.as_ref());
    let lib = rec.plan.cell.rx.as_ref().map(|s| s.lib);
    row.set_detail(&BackpressureDetail {
        case,
        overflows: row.score,
        delivered: crate::stats::median(&delivered),
        terminal: valid.first().and_then(|r| r.outcome.as_ref()).map(|o| o.terminal.clone()),
        runs,
        implementation: lib.map_or("reactive", Lib::name).to_string(),
        library: lib.map(|l| {
            first.and_then(|o| o.rxjava_version.clone()).unwrap_or_else(|| l.library().into())
        }),
        jvm: first.and_then(|o| o.jvm.clone()),
    });
}

/// A row's typed detail, when it reads as one.
pub(super) fn detail(x: &Row) -> Option<BackpressureDetail> {
    x.detail_if_any()
}
