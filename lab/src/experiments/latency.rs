//! `publish-on-latency`: seed 000's `publishOn` latency test, and the same handoff through
//! the locked queue, the ring and the naive buffer.
//!
//! Reactive: `Flux.range(0, N).map(i -> (now, i)).publish_on(parallel(2), prefetch)` into a
//! subscriber that records `now − stamp` on `on_next` into a preallocated `Vec`
//! (`reactive::bench::publish_on_latency`). *Bulk*: the subscriber requests unbounded and
//! the prefetch queue fills (the seed's numbers); *one-by-one*: it requests 1 after each
//! element (idle latency, as the seed recommends). As in Reactor, the range emits on the
//! thread that requests, so after the first prefetch the worker produces its own elements;
//! each row reports how many elements crossed threads. `reactive-iter-p1` uses
//! `Flux.from_iter`, which stays on the subscribing thread: every element crosses.
//!
//! Handoffs: one producer thread sends `handoff::Message<16>` stamped with
//! [`handoff::now_ns`] just before `send`, one consumer records `now − sent_ns` on receipt
//! into a preallocated array. *Bulk*: the producer sends as fast as the channel takes;
//! *one-by-one*: after each send the producer waits until the consumer has published its
//! acknowledgement (an `AtomicU64` holding the count received, stored with Release after
//! the latency is recorded; the producer spins on it with `spin_loop`, yielding every 64
//! spins), so at most one message is ever in flight.
//!
//! Every run checks it got all N elements in order; latencies of the measured runs go
//! into one HDR histogram (1 ns .. 60 s, 3 significant digits).

use super::common::{self, Opts, XResults, XSpec, XTable, XTarget};
use crate::variants::{self, Settings, WithHandoff};
use handoff::{Consumer as _, Handoff, Message, Producer as _};
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const DEFAULT_N: u64 = 100_000;
/// The queue bound of every bounded variant: reactor's default prefetch.
const BOUND: usize = reactive::DEFAULT_PREFETCH;
/// `reactive-p1`: publish_on with prefetch 1, so demand reaches the range one by one;
/// `reactive-iter-p1`: the same from `from_iter`, which never leaves the subscribing thread.
const VARIANTS: &[&str] =
    &["reactive", "reactive-p1", "reactive-iter-p1", "locked", "ring", "naive"];
const MODES: &[&str] = &["bulk", "one-by-one"];

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds")
}

fn percentiles(h: &Histogram<u64>) -> Value {
    json!({
        "count": h.len(),
        "p50": h.value_at_quantile(0.50),
        "p90": h.value_at_quantile(0.90),
        "p99": h.value_at_quantile(0.99),
        "p999": h.value_at_quantile(0.999),
        "max": h.max(),
        "mean": h.mean(),
    })
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
                    if m.seq != i as u64 {
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

/// One run's latencies (ns, arrival order) and how many elements crossed threads.
fn one_run(variant: &str, n: u64, one: bool) -> Result<(Vec<u64>, u64), String> {
    use reactive::bench::LatencySource::{Iter, Range};
    if let Some((source, prefetch)) = match variant {
        "reactive" => Some((Range, BOUND)),
        "reactive-p1" => Some((Range, 1)),
        "reactive-iter-p1" => Some((Iter, 1)),
        _ => None,
    } {
        let s = reactive::Scheduler::parallel(2);
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
        variant: variant.to_string(),
        wait: Some("blocking".into()),
        ring_size: BOUND,
        capacity: Some(BOUND),
        prefetch: BOUND,
    };
    // A handoff's producer and consumer are different threads: every element crosses.
    variants::dispatch(&settings, Job { n, one_by_one: one })?.map(|lat| (lat, n))
}

pub fn cell(spec: &XSpec) -> Result<Value, String> {
    let variant = spec.param_str("variant")?;
    let one = match spec.param_str("mode")? {
        "bulk" => false,
        "one-by-one" => true,
        m => return Err(format!("mode '{m}'; valid: bulk, one-by-one")),
    };
    let mut all = hist();
    let mut per_run = Vec::new();
    let mut crossed = 0;
    for i in 0..spec.warmup + spec.runs {
        let (lat, c) =
            one_run(variant, spec.elements, one).map_err(|e| format!("INVALID run {i}: {e}"))?;
        if i < spec.warmup {
            continue;
        }
        crossed += c;
        let mut h = hist();
        for &x in &lat {
            h.record(x.max(1)).map_err(|e| format!("histogram: {e}"))?;
        }
        per_run.push(percentiles(&h));
        all.add(&h).map_err(|e| format!("histogram: {e}"))?;
    }
    Ok(json!({"all": percentiles(&all), "per_run": per_run, "crossed": crossed}))
}

fn us(v: &Value) -> String {
    v.as_f64().map(|ns| format!("{:.1}", ns / 1e3)).unwrap_or_else(|| "-".into())
}

pub fn run(o: &Opts) -> Result<i32, String> {
    let n = o.elements.unwrap_or(DEFAULT_N);
    let (dir, default) = common::run_dir(o)?;
    let exe = common::lab_exe()?;
    let env = common::environment(o, n, "off", "off");
    let cores = env.cores;
    let mut t = XTable::new(
        &format!(
            "Handoff latency, µs (N = {n} per run, {} measured runs after {} warm-ups, all \
             measured elements in one HDR histogram)",
            o.runs, o.warmup
        ),
        &[
            "variant",
            "demand",
            "p50",
            "p90",
            "p99",
            "p99.9",
            "max",
            "p50 per run (min–max)",
            "elements",
            "crossed threads",
        ],
    );
    t.note = Some(format!(
        "Bound {BOUND} everywhere it applies (publish_on prefetch, the locked queue's \
         capacity, the ring's size; the naive buffer is unbounded), except reactive-p1 \
         (publish_on prefetch 1); ring wait: blocking; reactive on Scheduler::parallel(2); \
         {cores} cores."
    ));
    let mut rows = Vec::new();
    let mut invalid = false;
    let mut one_reactive: Vec<(String, Value)> = Vec::new();
    let total = VARIANTS.len() * MODES.len();
    let mut k = 0;
    for v in VARIANTS {
        for m in MODES {
            k += 1;
            let spec = XSpec {
                experiment: o.experiment.clone(),
                workload: format!("{v}-{m}"),
                elements: n,
                warmup: o.warmup,
                runs: o.runs,
                params: json!({"variant": v, "mode": m}),
                trace_file: None,
                heap_file: None,
            };
            match common::run_child(&exe, "__xcell", &spec, o.timeout) {
                Ok(out) => {
                    let a = &out["all"];
                    let p50s: Vec<f64> = out["per_run"]
                        .as_array()
                        .map(|r| r.iter().filter_map(|x| x["p50"].as_f64()).collect())
                        .unwrap_or_default();
                    let lo = p50s.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = p50s.iter().copied().fold(0.0, f64::max);
                    t.rows.push(vec![
                        v.to_string(),
                        m.to_string(),
                        us(&a["p50"]),
                        us(&a["p90"]),
                        us(&a["p99"]),
                        us(&a["p999"]),
                        us(&a["max"]),
                        format!("{:.1}–{:.1}", lo / 1e3, hi / 1e3),
                        a["count"].to_string(),
                        match (out["crossed"].as_f64(), a["count"].as_f64()) {
                            (Some(c), Some(t)) if t > 0.0 => format!("{:.1}%", 100.0 * c / t),
                            _ => "-".into(),
                        },
                    ]);
                    common::progress(
                        k,
                        total,
                        &spec.workload,
                        &format!("p50 {} µs, p99 {} µs", us(&a["p50"]), us(&a["p99"])),
                    );
                    // The idle-latency rows: with prefetch 256, publish_on keeps 256 queued
                    // whatever the subscriber asks (queueing, reported but not the target).
                    if v.starts_with("reactive") && v.ends_with("-p1") && *m == "one-by-one" {
                        one_reactive.push((v.to_string(), a.clone()));
                    }
                    rows.push(json!({"variant": v, "mode": m, "status": "ok", "latency_ns": a,
                                     "per_run": out["per_run"], "crossed": out["crossed"]}));
                }
                Err(e) => {
                    invalid = true;
                    common::progress(k, total, &spec.workload, &e);
                    t.rows.push(vec![v.to_string(), m.to_string(), format!("INVALID: {e}")]);
                    rows.push(json!({"variant": v, "mode": m, "status": "invalid", "error": e}));
                }
            }
        }
    }
    let mut targets = Vec::new();
    for (v, a) in &one_reactive {
        let p = |k: &str| a[k].as_f64().map(|x| x / 1e3);
        targets.push(XTarget {
            what: format!("{v} one-by-one p50 ({cores} cores)"),
            target: "≤ 5 µs (the seed's JVM: 5 µs)".into(),
            measured: p("p50").map(|x| format!("{x:.1} µs")).unwrap_or("n/a".into()),
            met: p("p50").map(|x| x <= 5.0),
        });
        targets.push(XTarget {
            what: format!("{v} one-by-one p99 ({cores} cores)"),
            target: "≤ 11 µs (the seed's JVM: 11 µs)".into(),
            measured: p("p99").map(|x| format!("{x:.1} µs")).unwrap_or("n/a".into()),
            met: p("p99").map(|x| x <= 11.0),
        });
    }
    let r = XResults {
        experiment: o.experiment.clone(),
        status: if invalid { "invalid".into() } else { "complete".into() },
        environment: env,
        config: json!({"elements": n, "warmup": o.warmup, "runs": o.runs, "bound": BOUND,
                       "ring_wait": "blocking", "scheduler": "parallel(2)",
                       "timeout_s": o.timeout.as_secs()}),
        rows,
        tables: vec![t],
        targets,
        files: Vec::new(),
        method: vec![
            "Each variant × demand mode runs in its own child process; warm-up runs are \
             discarded; every element of the measured runs goes into one HDR histogram."
                .into(),
            "Reactive: the stamp is taken in map(), just before publish_on's queue, and read \
             in the subscriber's on_next on the worker (reactive::bench::publish_on_latency; \
             stamps into a Vec preallocated for N)."
                .into(),
            "Handoffs: stamp just before send, read just after recv, into a preallocated \
             array; one-by-one = the producer sends element i only after the consumer stored \
             i into an AtomicU64 acknowledgement (Release/Acquire), spinning on it and \
             yielding every 64 spins."
                .into(),
            "Bulk = as fast as possible: the queue fills up to its bound, so bulk latency \
             is mostly queueing time (the seed's 100 µs p99.9); one-by-one = idle latency."
                .into(),
            "Reactive one-by-one with prefetch 256: publish_on prefetches 256 from the range \
             whatever the subscriber requests (as Reactor's publishOn does), so stamped \
             elements still wait in its queue; reactive-p1 (prefetch 1) lets demand reach the \
             range one element at a time: that row is the idle latency."
                .into(),
            "Where the elements are made: Flux.range emits on the thread that requests (as \
             Reactor's FluxRange), so only the first prefetch is stamped on the subscribing \
             thread; every later batch is produced by the worker inside its own replenish \
             request and waits only for the elements queued before it ('crossed threads' \
             counts the rest). reactive-iter-p1 (Flux.from_iter, which stays on the \
             subscribing thread) measures the cross-thread path: a producer waiting for \
             demand and a worker woken per element."
                .into(),
            "A run that loses, reorders or duplicates an element is INVALID.".into(),
        ],
        notes: Vec::new(),
    };
    common::finish(&dir, default, &r, "")
}
