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
//!   element either arrives or overflows: `delivered + overflows == N` is checked.
//! * the seed's two cases (1000 elements, capacity 10): a synchronous `request(1)` loop
//!   (never overflows), and `publish_on(single, 1)` behind the buffer with a subscriber that
//!   requests nothing until the range has finished (989 overflow at once with DropLatest:
//!   element 0 sits in publish_on's queue, 1..=10 fill the buffer; 1 then an error with
//!   Error). [`seed_case`] returns the counts; `lab/tests/seed000_backpressure.rs` asserts
//!   them.
//!
//! The trace child runs the async seed case and one grid cell under the flight recorder:
//! the buffer emits `instant!("overflow")`, and the pacing map emits
//! `counter!("buffer_depth")` (produced − delivered − overflowed, sampled per element).

use super::common::{self, Opts, XResults, XSpec, XTable};
use reactive::{
    Error, Flux, Overflow, Scheduler, SharedSubscription, Subscriber, Subscription, UNBOUNDED,
};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, OnceLock};
use std::time::{Duration, Instant};

const DEFAULT_N: u64 = 2000;
const CAPACITIES: &[usize] = &[10, 100, 1000];
/// Producer rate as a multiple of the consumer's rate.
const RATES: &[f64] = &[0.5, 1.0, 2.0, 4.0];
/// The consumer's fixed work per element.
const SERVICE_NS: u64 = 20_000;
const SEED_N: u64 = 1000;
const SEED_CAP: usize = 10;

fn spin_until(t0: Instant, ns: u64) {
    while (t0.elapsed().as_nanos() as u64) < ns {
        std::hint::spin_loop();
    }
}

/// What a run ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
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

pub fn cell(spec: &XSpec) -> Result<Value, String> {
    common::with_trace(spec, || match spec.param_str("kind")? {
        "seed" => {
            let o = seed_case(spec.param_str("case")?, spec.param_str("policy")?)?;
            Ok(json!({"delivered": o.delivered, "overflows": o.overflows, "terminal": o.terminal}))
        }
        "grid" => {
            let cap = spec.param_u64("capacity")? as usize;
            let rate = spec.params["rate"].as_f64().ok_or("parameter 'rate' missing")?;
            let (o, ms) = grid_cell(spec.elements, cap, rate)?;
            if o.delivered + o.overflows != spec.elements || o.terminal != "complete" {
                return Err(format!(
                    "INVALID: delivered {} + overflowed {} != {} (terminal: {})",
                    o.delivered, o.overflows, spec.elements, o.terminal
                ));
            }
            Ok(
                json!({"delivered": o.delivered, "overflows": o.overflows, "terminal": o.terminal, "elapsed_ms": ms}),
            )
        }
        k => Err(format!("kind '{k}'; valid: seed, grid")),
    })
}

fn spec(o: &Opts, workload: String, n: u64, params: Value, trace: Option<String>) -> XSpec {
    XSpec {
        experiment: o.experiment.clone(),
        workload,
        elements: n,
        warmup: 0,
        runs: 1,
        params,
        trace_file: trace,
        heap_file: None,
    }
}

pub fn run(o: &Opts) -> Result<i32, String> {
    let n = o.elements.unwrap_or(DEFAULT_N);
    let (dir, default) = common::run_dir(o)?;
    let exe = common::lab_exe()?;
    let tracing = if o.trace { "flight: a separate trace child per traced case" } else { "off" };
    let mut env = common::environment(o, n, tracing, "off");
    // Counts, not timings: one run per case (--runs and --warmup do not apply).
    env.warmup_runs = 0;
    env.measured_runs = 1;
    let mut rows = Vec::new();
    let mut invalid = false;
    let mut notes = Vec::new();

    let mut seed_t = XTable::new(
        &format!("The seed's cases ({SEED_N} elements, capacity {SEED_CAP})"),
        &["case", "overflow policy", "overflows", "delivered", "terminal", "expected overflows"],
    );
    seed_t.note = Some(
        "publish-on-1: element 0 waits in publish_on's 1-slot queue, 1..=10 fill the buffer, \
         the rest overflow while the range runs (before any downstream request)."
            .into(),
    );
    let cases: &[(&str, &str, u64)] = &[
        ("sync-request-1", "drop-latest", 0),
        ("publish-on-1", "drop-latest", SEED_N - 1 - SEED_CAP as u64),
        ("publish-on-1", "drop-oldest", SEED_N - 1 - SEED_CAP as u64),
        ("publish-on-1", "error", 1),
    ];
    for (case, pol, want) in cases {
        let s = spec(
            o,
            format!("{case}-{pol}"),
            SEED_N,
            json!({"kind": "seed", "case": case, "policy": pol}),
            None,
        );
        match common::run_child(&exe, "__xcell", &s, o.timeout) {
            Ok(v) => {
                let got = v["overflows"].as_u64().unwrap_or(u64::MAX);
                let ok = got == *want;
                invalid |= !ok;
                seed_t.rows.push(vec![
                    case.to_string(),
                    pol.to_string(),
                    if ok { got.to_string() } else { format!("{got} UNEXPECTED") },
                    v["delivered"].to_string(),
                    v["terminal"].as_str().unwrap_or("?").to_string(),
                    want.to_string(),
                ]);
                rows.push(json!({"kind": "seed", "case": case, "policy": pol, "status": if ok {"ok"} else {"unexpected"}, "overflows": got, "expected_overflows": want, "delivered": v["delivered"], "terminal": v["terminal"]}));
            }
            Err(e) => {
                invalid = true;
                seed_t.rows.push(vec![case.to_string(), pol.to_string(), format!("FAILED: {e}")]);
                rows.push(json!({"kind": "seed", "case": case, "policy": pol, "status": "failed", "error": e}));
            }
        }
    }

    let mut head = vec!["capacity".to_string()];
    head.extend(RATES.iter().map(|r| format!("rate {r}×")));
    let mut grid_t = XTable {
        title: format!(
            "Overflows of {n} elements (drop-latest) by capacity × producer rate (consumer: \
             {} µs/element, request(1) each, behind publish_on(single, 1))",
            SERVICE_NS / 1000
        ),
        header: head,
        rows: Vec::new(),
        note: Some(
            "Each cell: overflows (delivered; wall time per delivered element). rate = \
             producer rate / the consumer's nominal rate (1 / service time). A fluid model \
             predicts about max(0, N·(1 − 1/rate) − capacity) overflows; where the wall time \
             per delivered element exceeds the service time, the consumer's real rate (service \
             + publish_on's wake-up per element on these cores) is lower than nominal and more \
             overflow."
                .into(),
        ),
    };
    let total = CAPACITIES.len() * RATES.len();
    let mut k = 0;
    for &cap in CAPACITIES {
        let mut line = vec![cap.to_string()];
        for &rate in RATES {
            k += 1;
            let w = format!("grid-c{cap}-r{rate}");
            let s =
                spec(o, w.clone(), n, json!({"kind": "grid", "capacity": cap, "rate": rate}), None);
            match common::run_child(&exe, "__xcell", &s, o.timeout) {
                Ok(v) => {
                    let ov = v["overflows"].as_u64().unwrap_or(0);
                    common::progress(k, total, &w, &format!("{ov} overflows"));
                    let deliv = v["delivered"].as_u64().unwrap_or(0).max(1);
                    let per = v["elapsed_ms"].as_f64().unwrap_or(0.0) * 1e3 / deliv as f64;
                    line.push(format!("{ov} ({deliv}; {per:.0} µs)"));
                    let model = (n as f64 * (1.0 - 1.0 / rate) - cap as f64).max(0.0);
                    rows.push(json!({"kind": "grid", "capacity": cap, "rate": rate, "status": "ok", "overflows": ov, "delivered": v["delivered"], "elapsed_ms": v["elapsed_ms"], "fluid_model": model}));
                }
                Err(e) => {
                    invalid = true;
                    common::progress(k, total, &w, &e);
                    line.push(format!("INVALID: {e}"));
                    rows.push(json!({"kind": "grid", "capacity": cap, "rate": rate, "status": "invalid", "error": e}));
                }
            }
        }
        grid_t.rows.push(line);
    }

    let mut files = Vec::new();
    if o.trace {
        let traced = [
            (
                "publish-on-1",
                json!({"kind": "seed", "case": "publish-on-1", "policy": "drop-latest"}),
                SEED_N,
            ),
            ("grid-c10-r2", json!({"kind": "grid", "capacity": 10, "rate": 2.0}), n),
        ];
        for (name, params, elems) in traced {
            let file = format!("{name}.trace.json");
            let path = dir.join(&file);
            let s =
                spec(o, format!("trace {name}"), elems, params, Some(path.display().to_string()));
            match common::run_child(&exe, "__xcell", &s, o.timeout) {
                Ok(v) if path.is_file() => {
                    files.push(file);
                    notes.push(format!("trace {name}: {}", v["trace_note"].as_str().unwrap_or("")));
                }
                Ok(_) => notes.push(format!("trace {name}: the child wrote no trace file")),
                Err(e) => notes.push(format!("trace {name}: {e}")),
            }
        }
    }

    let r = XResults {
        experiment: o.experiment.clone(),
        status: if invalid { "invalid".into() } else { "complete".into() },
        environment: env,
        config: json!({"elements": n, "capacities": CAPACITIES, "rates": RATES,
                       "service_ns": SERVICE_NS, "seed_elements": SEED_N,
                       "seed_capacity": SEED_CAP, "trace": o.trace,
                       "timeout_s": o.timeout.as_secs()}),
        rows,
        tables: vec![seed_t, grid_t],
        targets: Vec::new(),
        files,
        method: vec![
            "Every case runs once in its own child process (overflow counts are counts, not \
             timings; the grid's counts vary a little with scheduling)."
                .into(),
            "Producer: Flux.range paced by spinning to i × period in map() on the subscribing \
             thread; async boundary: publish_on(Scheduler::single(), prefetch 1); consumer: \
             spins the service time, then request(1)."
                .into(),
            "A grid cell is INVALID unless delivered + overflows = N and the stream completed; \
             a seed case is marked UNEXPECTED unless its count equals the reactive crate's \
             tests (0; 989; 989; 1)."
                .into(),
            "Traces: overflow instants come from the reactive crate's buffer \
             (instant!(\"overflow\")); buffer_depth is sampled by the harness's map()."
                .into(),
        ],
        notes,
    };
    common::finish(&dir, default, &r, "")
}
