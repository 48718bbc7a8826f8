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
//! RxJava 3 (`rx-…` rows, `--impl`; [`crate::measure::rx`], tools/jvm/rx/RxBackpressure.java):
//! the same seed cases and grid cells in the same rounds, each fork a JVM:
//! `range.map(pace).onBackpressureBuffer(capacity, onOverflow, DROP_LATEST | DROP_OLDEST |
//! ERROR)`, with `observeOn(Schedulers.single(), false, 1)` for publish-on-1 and the grid,
//! without it for sync-request-1. That is RxJava's form with an exact capacity (its
//! `onBackpressureBuffer(int)` rounds the queue up to a power of two). An overflow is a
//! dropped element (onOverflow) or, under ERROR, the MissingBackpressureException the buffer
//! signals; RxJava's DROP_LATEST drops the newest *buffered* element rather than the
//! arriving one, so the counts compare and the elements delivered differ. Every run checks
//! itself in the JVM (every emitted element delivered or overflowed, in order) and again
//! here against the lab's own N and the seed's counts.

use super::rx_rows::{self, ImplArgs};
use crate::experiment::{
    self, size, CellPlan, Defaults, Experiment, Measured, Plan, Shared, TraceMode,
};
use crate::experiment::{CellRecord, Finished};
use crate::measure::rx::{RxBpRun, RxSettings};
use crate::protocol::Ctx;
use crate::results::{Chart, FileLink, Results, Row, Status, Table};
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
    /// onBackpressureBuffer, rows `rx-…`), and the rx rows' JVM.
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
    /// RxJava on the JVM runs the case (an `rx-…` row), with these settings.
    #[serde(default)]
    pub rx: Option<RxSettings>,
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
    /// rx rows: RxJava's version (its jar's manifest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rxjava_version: Option<String>,
    /// rx rows: the JVM (version, flags, collectors, heap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm: Option<serde_json::Value>,
}

impl experiment::Outcome for BpOutcome {
    /// The overflow count of each run.
    fn measured(&self) -> Vec<Measured> {
        self.runs
            .iter()
            .map(|r| Measured {
                value: r.outcome.as_ref().map_or(0.0, |o| o.overflows as f64),
                valid: r.valid,
                verdict: r.verdict.clone(),
            })
            .collect()
    }

    fn failure(&self) -> Option<String> {
        self.warmup.iter().chain(&self.runs).find(|r| !r.valid).map(|r| r.verdict.clone())
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

/// The lab's check of one rx run of `case`: the JVM's own check, then the counts against
/// the lab's N and the seed's expectations (the same as the reactive rows' where they
/// apply; under ERROR the element that overflowed must be capacity + 1: element 0 waits in
/// observeOn's 1-slot queue, 1..=capacity fill the buffer).
fn rx_check(case: &Case, r: &RxBpRun) -> Result<(), String> {
    if r.check != "ok" {
        return Err(format!("the JVM's check: {}", r.check));
    }
    if !r.in_order {
        return Err("elements arrived out of order".into());
    }
    let (n, error) = match case {
        Case::Seed { case, policy } => {
            let (want, terminal) = seed_expectation(case, policy);
            if r.overflows != want || !r.terminal.starts_with(terminal) {
                return Err(format!(
                    "{} overflows ending {:?}, expected {want} ending {terminal}",
                    r.overflows, r.terminal
                ));
            }
            if r.overflows_at_once.is_some_and(|a| a != r.overflows) {
                return Err(format!(
                    "{} overflows after the range had finished",
                    r.overflows - r.overflows_at_once.unwrap_or(0)
                ));
            }
            (SEED_N, terminal == "error")
        }
        Case::Grid { n, .. } => (*n, false),
    };
    if error {
        let at = SEED_CAP as i64 + 1;
        if r.last_emitted != at {
            return Err(format!("element {} overflowed, expected element {at}", r.last_emitted));
        }
    } else if r.delivered + r.overflows != n || r.terminal != "complete" {
        return Err(format!(
            "delivered {} + overflowed {} != {n} (terminal: {})",
            r.delivered, r.overflows, r.terminal
        ));
    }
    Ok(())
}

/// An rx cell: RxBench runs the case in one JVM (warm-up and measured runs); each run is
/// checked here again.
fn run_rx(cell: &Cell, rx: &RxSettings, ctx: &mut Ctx) -> Result<BpOutcome, String> {
    let mut extra: Vec<String> = Vec::new();
    let n = match &cell.case {
        Case::Seed { case, policy } => {
            extra.extend(["--case", case, "--policy", policy].map(String::from));
            extra.extend(["--capacity".to_string(), SEED_CAP.to_string()]);
            SEED_N
        }
        Case::Grid { n, capacity, rate } => {
            extra.extend(["--case", "grid", "--policy", "drop-latest"].map(String::from));
            extra.extend(["--capacity".to_string(), capacity.to_string()]);
            extra.extend(["--rate".to_string(), rate.to_string()]);
            extra.extend(["--service-ns".to_string(), SERVICE_NS.to_string()]);
            *n
        }
    };
    let (o, _) =
        crate::measure::rx::run(rx, "backpressure", n, (cell.warmup, cell.runs), &extra, ctx)?;
    let run = |r: &crate::measure::rx::RxRun| -> BpRun {
        let Some(b) = &r.bp else {
            return BpRun {
                outcome: None,
                elapsed_ms: None,
                valid: false,
                verdict: "RxBench returned no counts".into(),
            };
        };
        let verdict = rx_check(&cell.case, b);
        BpRun {
            outcome: Some(Outcome {
                delivered: b.delivered,
                overflows: b.overflows,
                terminal: b.terminal.clone(),
            }),
            elapsed_ms: b.elapsed_ms,
            valid: verdict.is_ok(),
            verdict: verdict.err().unwrap_or_else(|| "ok".into()),
        }
    };
    Ok(BpOutcome {
        warmup: o.warmup.iter().map(run).collect(),
        runs: o.runs.iter().map(run).collect(),
        rxjava_version: o.rxjava_version,
        jvm: Some(o.jvm),
    })
}

fn fluid_model(n: u64, capacity: usize, rate: f64) -> f64 {
    (n as f64 * (1.0 - 1.0 / rate) - capacity as f64).max(0.0)
}

/// The seed's cases and the grid, run by the reactive crate (`rx: None`) or by RxJava
/// (`rx-…` rows, key `impl: rx`; their trace pass records the JVM with Java Flight
/// Recorder, [`crate::profile::jfr`]).
fn cells_of(
    a: &BackpressureArgs,
    warmup: usize,
    runs: usize,
    rx: Option<&RxSettings>,
) -> Vec<CellPlan<Cell>> {
    let name = |l: String| match rx {
        Some(s) => rx_rows::label(s, &l),
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
        let mut p = CellPlan::new(c, name(format!("{case}[{policy}]")), "seed")
            .key("case", case)
            .key("policy", policy);
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
            let mut p = CellPlan::new(c, name(format!("grid[c{capacity},r{rate}]")), "grid")
                .key("capacity", capacity)
                .key("rate", rate);
            p.file_stem = name(format!("grid-c{capacity}-r{rate}"));
            p.trace = traced == Some((capacity, rate));
            p.threads = 2;
            cells.push(p);
        }
    }
    if rx.is_some() {
        cells = cells.into_iter().map(|p| p.key("impl", "rx")).collect();
    }
    cells
}

/// Whether a row is RxJava's.
fn is_rx(x: &Row) -> bool {
    x.key.get("impl").and_then(|v| v.as_str()) == Some("rx")
}

impl Experiment for BackpressureBuffer {
    const NAME: &'static str = "backpressure-buffer";
    const ABOUT: &'static str =
        "seed 000 (the Reactor baseline), its corrected onBackpressureBuffer test: overflows by \
        capacity × producer rate behind an async boundary with request(1) demand; the seed's \
        two cases checked against their exact counts; overflow instants in a trace; with \
        --impl rx (the default where RxJava is installed) the same cases on RxJava 3's \
        onBackpressureBuffer(capacity, onOverflow, strategy), rows rx-sync-request-1[…], \
        rx-publish-on-1[…], rx-grid[…]";
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

    fn plan(a: &BackpressureArgs, shared: &Shared) -> Result<Plan<Cell>, String> {
        if a.elements == 0 {
            return Err("--elements must be at least 1 (got 0)".into());
        }
        let chosen = a.rx.choose_sized(RX_HEAP)?;
        let (warmup, runs) = (shared.warmup as usize, shared.runs as usize);
        let mut cells = Vec::new();
        if chosen.reactive {
            cells.extend(cells_of(a, warmup, runs, None));
        }
        if let Some(rx) = &chosen.rx {
            cells.extend(cells_of(a, warmup, runs, Some(rx)));
        }
        for c in &mut cells {
            c.unit = "overflows";
            c.heap = false;
        }
        Ok(Plan {
            pairs: Vec::new(),
            cells,
            baseline: None,
            config: json!({"elements": a.elements, "capacities": a.capacities, "rates": a.rates, "service_ns": SERVICE_NS, "seed_elements": SEED_N, "seed_capacity": SEED_CAP, "reactive": chosen.reactive, "rx": chosen.rx}),
            input_size: a.elements,
            notes: chosen.note.into_iter().collect(),
        })
    }

    fn run_cell(cell: &Cell, ctx: &mut Ctx) -> Result<BpOutcome, String> {
        if let Some(rx) = &cell.rx {
            return run_rx(cell, rx, ctx);
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
        out.tables.push(seed_table(out).headline());
        out.tables.push(grid_table(a, out));
        out.tables.extend(crate::report::failure_table(out, &["case"], |x| vec![x.label.clone()]));
        out.verdict = verdict(out);
        out.charts = charts(out);
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
        out.method.extend(method_lines());
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
    /// Who ran it: `reactive` (the lab's crate) or `rx` (RxJava 3 on the JVM).
    #[serde(default)]
    pub implementation: String,
    /// rx rows: `RxJava <version>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// rx rows: the JVM of the first fork that ran (version, flags, collectors, heap).
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
    let rx = rec.plan.cell.rx.is_some();
    row.set_detail(&BackpressureDetail {
        case,
        overflows: row.score,
        delivered: crate::stats::median(&delivered),
        terminal: valid.first().and_then(|r| r.outcome.as_ref()).map(|o| o.terminal.clone()),
        runs,
        implementation: if rx { "rx" } else { "reactive" }.to_string(),
        library: rx.then(|| {
            let v = first.and_then(|o| o.rxjava_version.clone());
            format!("RxJava {}", v.unwrap_or_else(|| "?".into()))
        }),
        jvm: first.and_then(|o| o.jvm.clone()),
    });
}

/// A row's typed detail, when it reads as one.
fn detail(x: &Row) -> Option<BackpressureDetail> {
    x.typed_detail()
}

/// The seed's cases against their expected overflows, and the grid's range of overflows,
/// for the reactive rows and then the rx rows.
fn verdict(r: &Results) -> Vec<String> {
    let mut v = Vec::new();
    for rx in [false, true] {
        let who = if rx { " (RxJava)" } else { "" };
        let mine = |x: &&Row| is_rx(x) == rx;
        let seed: Vec<&Row> = r.results.iter().filter(|x| x.group == "seed").filter(mine).collect();
        if !seed.is_empty() {
            let ok = seed.iter().filter(|x| x.status == Status::Ok).count();
            let cases: Vec<String> = seed
                .iter()
                .map(|x| {
                    let n = x.score.map_or("–".into(), |s| format!("{s:.0}"));
                    format!("{} {n}", x.label)
                })
                .collect();
            v.push(format!(
                "the seed's cases{who}: {ok} of {} give the expected overflows ({})",
                seed.len(),
                cases.join(", ")
            ));
        }
        let grid: Vec<(&Row, f64)> = r
            .results
            .iter()
            .filter(mine)
            .filter(|x| x.group == "grid" && x.status == Status::Ok)
            .filter_map(|x| Some((x, x.score?)))
            .collect();
        let lo = grid.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let hi = grid.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let at = |x: &Row| {
                let cap = x.key_u64("capacity").map_or("–".into(), |c| c.to_string());
                let rate = x.key.get("rate").and_then(|v| v.as_f64());
                format!("capacity {cap}, rate {}×", rate.map_or("–".into(), |r| r.to_string()))
            };
            v.push(format!(
                "the grid{who}: {} of {} cells overflow, from {:.0} ({}) to {:.0} ({})",
                grid.iter().filter(|g| g.1 > 0.0).count(),
                grid.len(),
                lo.1,
                at(lo.0),
                hi.1,
                at(hi.0)
            ));
        }
    }
    v
}

/// The verdict's two lines as charts: each seed case's overflows (median over forks, the
/// interval of that median as its bar) beside the count the reactive crate's tests expect;
/// the grid's overflows against the producer's rate, a series per capacity, beside the
/// fluid model's.
fn charts(r: &Results) -> Vec<Chart> {
    let mut out = Vec::new();
    let seed = |x: &Row| (x.group == "seed").then(|| ("this run".to_string(), x.label.clone()));
    let titles = (
        "The seed's cases: overflows (bars: interval of the median over forks)",
        "case[overflow policy]",
        "overflows per run",
    );
    if let Some((mut c, cats)) = super::charts::score_chart(r, titles, seed) {
        let expected: Vec<(String, f64)> = r
            .results
            .iter()
            .filter_map(|x| match detail(x)?.case {
                CaseDetail::Seed { expected_overflows, .. } => {
                    Some((x.label.clone(), expected_overflows as f64))
                }
                CaseDetail::Grid { .. } => None,
            })
            .collect();
        super::charts::add_reference(&mut c, &cats, "expected (reactive's tests)", &expected);
        out.push(c);
    }
    let mut grid = Chart {
        title: "The grid: overflows against the producer's rate (bars: interval of the median over forks)"
            .into(),
        x_label: "rate (producer rate / the consumer's nominal rate)".into(),
        y_label: "overflows per run".into(),
        ..Default::default()
    };
    for x in r.results.iter().filter(|x| x.status == Status::Ok) {
        let Some(CaseDetail::Grid { capacity, rate, fluid_model, .. }) = detail(x).map(|d| d.case)
        else {
            continue;
        };
        let who = if is_rx(x) { "RxJava, " } else { "" };
        if let Some(score) = x.score {
            super::charts::push_point(
                &mut grid,
                &format!("{who}capacity {capacity}"),
                rate,
                score,
                x.score_ci,
            );
        }
        let name = format!("fluid model, capacity {capacity}");
        match grid.references.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) if !v.contains(&(rate, fluid_model)) => v.push((rate, fluid_model)),
            Some(_) => {}
            None => grid.references.push((name, vec![(rate, fluid_model)])),
        }
    }
    if !grid.series.is_empty() {
        out.push(grid);
    }
    out
}

fn seed_table(r: &Results) -> Table {
    let mut t = Table::new(
        format!("The seed's cases ({SEED_N} elements, capacity {SEED_CAP})"),
        &[
            "impl",
            "case",
            "overflow policy",
            "status",
            "overflows",
            "delivered",
            "terminal",
            "expected overflows",
        ],
    );
    for x in r.results.iter().filter(|x| x.group == "seed") {
        // Counts are medians (f64 in the detail): printed as whole numbers.
        let d = detail(x);
        let (case, policy, expected) = match d.as_ref().map(|d| &d.case) {
            Some(CaseDetail::Seed { case, policy, expected_overflows, .. }) => {
                (case.clone(), policy.clone(), expected_overflows.to_string())
            }
            _ => ("–".into(), "–".into(), "–".into()),
        };
        let null = |v: Option<String>| v.unwrap_or_else(|| "null".into());
        let ok = x.status == Status::Ok;
        t.rows.push(vec![
            if is_rx(x) { "rx" } else { "reactive" }.into(),
            case,
            policy,
            x.status.word().into(),
            if ok {
                x.score.map_or("–".into(), |v| format!("{v:.0}"))
            } else {
                x.error.clone().unwrap_or_default()
            },
            match d.as_ref().filter(|_| ok) {
                Some(d) => null(d.delivered.map(|n| format!("{n:.0}"))),
                None => "–".into(),
            },
            match d.as_ref().filter(|_| ok) {
                Some(d) => null(d.terminal.clone()),
                None => "–".into(),
            },
            expected,
        ]);
    }
    t.note = Some(
        "publish-on-1: element 0 waits in publish_on's 1-slot queue, 1..=10 fill the buffer, \
         the rest overflow while the range runs (before any downstream request). A count other \
         than the expected one makes the row INVALID. rx: RxJava 3's \
         onBackpressureBuffer(10, onOverflow, DROP_LATEST | DROP_OLDEST | ERROR), behind \
         observeOn(Schedulers.single(), false, 1) for publish-on-1; its DROP_LATEST drops the \
         newest buffered element, not the arriving one (same count, other elements), and its \
         ERROR overflow is the MissingBackpressureException it signals."
            .into(),
    );
    t
}

fn grid_table(a: &BackpressureArgs, r: &Results) -> Table {
    let mut header = vec!["capacity".to_string()];
    header.extend(a.rates.0.iter().map(|r| format!("rate {r}×")));
    let mut t = Table {
        title: format!(
            "Overflows of {} elements (drop-latest) by capacity × producer rate (consumer: {} µs/element, request(1) each, behind publish_on(single, 1); median over forks)",
            a.elements,
            SERVICE_NS / 1000
        ),
        header,
        rows: Vec::new(),
        headline: true,
        note: Some(
            "Each cell: overflows (delivered; wall time per delivered element) [fluid model]. \
             rate = producer rate / the consumer's nominal rate (1 / service time). The fluid \
             model predicts max(0, N·(1 − 1/rate) − capacity) overflows; where the wall time per \
             delivered element exceeds the service time, the consumer's real rate (service + \
             publish_on's wake-up per element on these cores) is lower than nominal and more \
             overflow. Lines 'C (rx)': RxJava 3, onBackpressureBuffer(C, onOverflow, \
             DROP_LATEST) → observeOn(Schedulers.single(), false, 1), in the same rounds."
                .into(),
        ),
    };
    for rx in [false, true] {
        if !r.results.iter().any(|x| x.group == "grid" && is_rx(x) == rx) {
            continue;
        }
        for &cap in &a.capacities.0 {
            let name = if rx { format!("{cap} (rx)") } else { cap.to_string() };
            let mut line = vec![name];
            for &rate in &a.rates.0 {
                let row = r.results.iter().find(|x| {
                    x.group == "grid"
                        && is_rx(x) == rx
                        && x.key_u64("capacity") == Some(cap as u64)
                        && x.key.get("rate").and_then(|v| v.as_f64()) == Some(rate)
                });
                line.push(row.map_or("–".into(), grid_cell_text));
            }
            t.rows.push(line);
        }
    }
    t
}

/// One grid cell: overflows (delivered; µs per delivered element) [fluid model].
fn grid_cell_text(x: &Row) -> String {
    if x.status != Status::Ok {
        return format!("{}: {}", x.status.word(), x.error.clone().unwrap_or_default());
    }
    let d = detail(x);
    let (us, fluid) = match d.as_ref().map(|d| &d.case) {
        Some(CaseDetail::Grid { us_per_delivered, fluid_model, .. }) => {
            (*us_per_delivered, *fluid_model)
        }
        _ => (None, 0.0),
    };
    format!(
        "{} ({}; {} µs) [{:.0}]",
        x.score.map_or("–".into(), |v| format!("{v:.0}")),
        d.and_then(|d| d.delivered).map_or("–".into(), |v| format!("{v:.0}")),
        us.map_or("–".into(), |v| format!("{v:.0}")),
        fluid
    )
}

fn method_lines() -> Vec<String> {
    vec![
        "A row's measured value is its overflow count per run: counts, not timings (the grid's \
         counts vary a little with scheduling)."
            .into(),
        "Producer: Flux.range paced by spinning to i × period in map() on the subscribing \
         thread; async boundary: publish_on(Scheduler::single(), prefetch 1); consumer: spins \
         the service time, then request(1)."
            .into(),
        "Every run is checked, warm-ups included: a grid run is INVALID unless delivered + \
         overflows = N and the stream completed; a seed case is INVALID unless its count and \
         terminal signal equal those of the reactive crate's tests (0 complete; 989 complete; \
         989 complete; 1 then an error)."
            .into(),
        "Traces: overflow instants come from the reactive crate's buffer \
         (instant!(\"overflow\")); buffer_depth is sampled by the harness's map()."
            .into(),
        "rx rows: RxJava 3 (3.1.12, Maven Central) in a JVM per fork (--jvm-gc's collector, \
         a 256 MiB heap), tools/jvm/rx (RxBackpressure.java): the same cases with \
         Flowable.range(0, N).map(pace).onBackpressureBuffer(capacity, onOverflow, strategy) \
         (RxJava's form with an exact capacity), observeOn(Schedulers.single(), false, 1) as \
         the boundary, the same pacing (spinning to i × period from the first element) and \
         consumer (spin the service time, then request(1)). Overflows = onOverflow calls + \
         MissingBackpressureExceptions the buffer signalled. Each run checks itself in the \
         JVM (every emitted element delivered or overflowed, in order) and again in the lab \
         against its own N and the seed's counts (under ERROR: element 11 overflowed). Their \
         trace pass (the same cells as the reactive rows') runs the JVM under Java Flight \
         Recorder: GC pauses, safepoints, parks and monitor waits on each Java thread's \
         track, with the kernel's off-CPU slices; RxJava emits no overflow instants."
            .into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::charts::fixture::{results, row};

    fn seed(label: &str, overflows: f64, expected: u64) -> Row {
        let d = json!({"kind": "seed", "case": label, "policy": "drop-latest",
            "expected_overflows": expected, "expected_terminal": "complete", "runs": []});
        row(label, "seed", overflows, Some([overflows - 1.0, overflows + 1.0]), d)
    }

    fn grid(capacity: usize, rate: f64, overflows: f64, fluid: f64) -> Row {
        let d = json!({"kind": "grid", "elements": 500, "capacity": capacity, "rate": rate,
            "fluid_model": fluid, "runs": []});
        row(&format!("grid[c{capacity},r{rate}]"), "grid", overflows, None, d)
    }

    fn rx_run(delivered: u64, overflows: u64, last: i64, terminal: &str) -> RxBpRun {
        RxBpRun {
            emitted: delivered + overflows,
            last_emitted: last,
            delivered,
            overflows,
            overflows_at_once: None,
            in_order: true,
            terminal: terminal.into(),
            elapsed_ms: None,
            check: "ok".into(),
        }
    }

    #[test]
    fn an_rx_run_is_checked_against_the_labs_own_counts() {
        let seed = |policy: &str| Case::Seed { case: "publish-on-1".into(), policy: policy.into() };
        assert!(rx_check(&seed("drop-latest"), &rx_run(11, 989, 999, "complete")).is_ok());
        // One element lost on the way: 11 + 988 is not the seed's 1000.
        let e = rx_check(&seed("drop-latest"), &rx_run(11, 988, 999, "complete")).unwrap_err();
        assert!(e.contains("989"), "{e}");
        let mbe = "error: io.reactivex.rxjava3.exceptions.MissingBackpressureException";
        assert!(rx_check(&seed("error"), &rx_run(0, 1, 11, mbe)).is_ok());
        let e = rx_check(&seed("error"), &rx_run(0, 1, 12, mbe)).unwrap_err();
        assert!(e.contains("element 12 overflowed, expected element 11"), "{e}");
        let grid = Case::Grid { n: 500, capacity: 10, rate: 2.0 };
        assert!(rx_check(&grid, &rx_run(23, 477, 499, "complete")).is_ok());
        assert!(rx_check(&grid, &rx_run(23, 476, 499, "complete")).is_err());
        let mut own = rx_run(23, 477, 499, "complete");
        own.check = "elements arrived out of order".into();
        assert!(rx_check(&grid, &own).unwrap_err().starts_with("the JVM's check"));
    }

    #[test]
    fn the_main_chart_is_each_seed_cases_overflows_beside_the_expected_count() {
        let rows = vec![
            seed("sync-request-1[drop-latest]", 0.0, 0),
            seed("publish-on-1[drop-latest]", 989.0, 989),
            grid(10, 0.5, 337.5, 0.0),
            grid(10, 2.0, 411.5, 240.0),
            grid(100, 2.0, 298.5, 150.0),
        ];
        let r = results("backpressure-buffer", rows, Vec::new());
        let cs = charts(&r);
        let main = &cs[0];
        assert_eq!(main.series, vec![("this run".to_string(), vec![(1.0, 0.0), (2.0, 989.0)])]);
        assert_eq!(
            main.intervals,
            vec![("this run".to_string(), vec![(1.0, -1.0, 1.0), (2.0, 988.0, 990.0)])]
        );
        assert_eq!(main.references[0].1, vec![(1.0, 0.0), (2.0, 989.0)]);
        let g = &cs[1];
        assert_eq!(
            g.series,
            vec![
                ("capacity 10".to_string(), vec![(0.5, 337.5), (2.0, 411.5)]),
                ("capacity 100".to_string(), vec![(2.0, 298.5)]),
            ]
        );
        assert_eq!(
            g.references[0],
            ("fluid model, capacity 10".to_string(), vec![(0.5, 0.0), (2.0, 240.0)])
        );
    }
}
