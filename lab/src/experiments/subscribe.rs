//! `subscribe-overhead`: seed 000's first table, timed with a nanosecond clock.
//!
//! Four workloads, each in its own child: `Flux.range(1, N)` summed (one subscription, N
//! *elements*), `Mono.just(1)` subscribed N times and the hand-written publisher subscribed
//! N times (N *subscriptions*), and the reactive issue's throughput case `Flux.range(1, N)
//! → publish_on(single, 256) → sum` (N elements through the operator's queue, the sum on
//! the worker). Each run's result is checked against its closed form (`N(N+1)/2`, or `N`);
//! a wrong result makes the run INVALID.

use super::common::{self, f64s, jmh, Opts, XResults, XSpec, XTable, XTarget};
use crate::stats::Summary;
use serde_json::{json, Value};
use std::time::Instant;

/// (workload, what one op is, target ns/op or for the range the whole run in ns, label).
const WORKLOADS: &[(&str, &str, &str)] = &[
    ("flux-range", "element", "Flux.range(1, N) summed (one subscription)"),
    ("mono-just", "subscription", "Mono.just(1) subscribed N times"),
    ("hand-written", "subscription", "hand-written SyncSinglePublisher subscribed N times"),
    ("publish-on", "element", "Flux.range(1, N) → publish_on(single, 256) → sum"),
];

/// `range → publish_on(single, 256) → sum` on one `single` scheduler per child process;
/// `u64::MAX` (never a valid sum here) if the pipeline failed.
fn publish_on_sum(n: u64) -> u64 {
    static SINGLE: std::sync::OnceLock<reactive::Scheduler> = std::sync::OnceLock::new();
    let s = SINGLE.get_or_init(reactive::Scheduler::single);
    let timeout = std::time::Duration::from_secs(60);
    reactive::bench::publish_on_sum(n, s, reactive::DEFAULT_PREFETCH, timeout).unwrap_or(u64::MAX)
}

const DEFAULT_N: u64 = 1_000_000;

pub fn cell(spec: &XSpec) -> Result<Value, String> {
    let n = spec.elements;
    let (f, expected): (fn(u64) -> u64, u64) = match spec.workload.as_str() {
        "flux-range" => (reactive::bench::range_sum, reactive::bench::expected_range_sum(n)),
        "mono-just" => (reactive::bench::mono_just_subscribe, n),
        "hand-written" => (reactive::bench::hand_written_subscribe, n),
        "publish-on" => (publish_on_sum, reactive::bench::expected_range_sum(n)),
        other => return Err(format!("unknown workload '{other}'")),
    };
    let mut warm = Vec::new();
    let mut runs = Vec::new();
    let mut bad = Vec::new();
    for i in 0..spec.warmup + spec.runs {
        let t = Instant::now();
        let got = f(n);
        let ns = t.elapsed().as_nanos() as f64;
        if got != expected {
            bad.push(format!("run {i}: result {got}, expected {expected}"));
        }
        if i < spec.warmup {
            warm.push(ns);
        } else {
            runs.push(ns);
        }
    }
    Ok(json!({"warmup_ns": warm, "runs_ns": runs, "invalid": bad, "expected": expected}))
}

pub fn run(o: &Opts) -> Result<i32, String> {
    let n = o.elements.unwrap_or(DEFAULT_N);
    let (dir, default) = common::run_dir(o)?;
    let exe = common::lab_exe()?;
    let env = common::environment(o, n, "off", "off");
    let mut rows = Vec::new();
    let mut t = XTable::new(
        &format!(
            "Subscribe overhead (N = {n}; median of {} runs after {} warm-ups)",
            o.runs, o.warmup
        ),
        &[
            "workload",
            "unit",
            "run ms (median)",
            "ns/op median",
            "ns/op min",
            "ns/op max",
            "ops/s (median)",
            "mean ± 99.9% CI ns/op",
            "sd",
        ],
    );
    t.note = Some(
        "ns/op = run time / N, where an op is one element (range, publish-on) or one subscription \
         (Mono.just, hand-written): the units differ, as the seed warns."
            .into(),
    );
    let mut targets = Vec::new();
    let mut invalid = false;
    for (i, (w, unit, label)) in WORKLOADS.iter().enumerate() {
        let spec = XSpec {
            experiment: o.experiment.clone(),
            workload: w.to_string(),
            elements: n,
            warmup: o.warmup,
            runs: o.runs,
            params: Value::Null,
            trace_file: None,
            heap_file: None,
        };
        let out = common::run_child(&exe, "__xcell", &spec, o.timeout);
        let (row, per_op_median, run_median) = match out {
            Ok(v) => {
                let bad: Vec<String> = v["invalid"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
                    .unwrap_or_default();
                let runs = f64s(&v["runs_ns"]);
                let per_op: Vec<f64> = runs.iter().map(|ns| ns / n as f64).collect();
                let summary = Summary::of(&per_op).filter(|_| bad.is_empty());
                if let Some(s) = summary {
                    let run_med = Summary::of(&runs).expect("non-empty").median;
                    let [mean, ci, _, _, sd] = jmh(&s, 3);
                    t.rows.push(vec![
                        label.to_string(),
                        unit.to_string(),
                        format!("{:.3}", run_med / 1e6),
                        format!("{:.3}", s.median),
                        format!("{:.3}", s.min),
                        format!("{:.3}", s.max),
                        format!("{:.3e} {unit}s/s", 1e9 / s.median),
                        format!("{mean} {ci}"),
                        sd,
                    ]);
                    common::progress(
                        i + 1,
                        WORKLOADS.len(),
                        w,
                        &format!("{:.3} ns/{unit}", s.median),
                    );
                    (
                        json!({"workload": w, "label": label, "unit": unit, "status": "ok",
                               "n": n, "runs_ns": runs, "warmup_ns": v["warmup_ns"],
                               "ns_per_op": s, "ops_per_s_median": 1e9 / s.median,
                               "expected_result": v["expected"]}),
                        Some(s.median),
                        Some(run_med),
                    )
                } else {
                    invalid = true;
                    t.rows.push(vec![
                        label.to_string(),
                        unit.to_string(),
                        format!("INVALID: {}", bad.join("; ")),
                    ]);
                    (
                        json!({"workload": w, "status": "invalid", "errors": bad, "raw": v}),
                        None,
                        None,
                    )
                }
            }
            Err(e) => {
                invalid = true;
                t.rows.push(vec![label.to_string(), unit.to_string(), format!("FAILED: {e}")]);
                (json!({"workload": w, "status": "failed", "error": e}), None, None)
            }
        };
        rows.push(row);
        let target = match *w {
            "flux-range" => {
                let ms = run_median.map(|x| x / 1e6 * 1e6 / n as f64);
                XTarget {
                    what: "Flux.range(1M) summed, run time scaled to 1M elements".into(),
                    target: "≤ 1 ms (the seed's JVM: 6 ms)".into(),
                    measured: ms.map(|m| format!("{m:.3} ms")).unwrap_or("n/a".into()),
                    met: ms.map(|m| m <= 1.0),
                }
            }
            "mono-just" => XTarget {
                what: "Mono.just subscribed".into(),
                target: "≤ 5 ns/subscription (the seed's JVM: 24 ns)".into(),
                measured: per_op_median.map(|m| format!("{m:.3} ns")).unwrap_or("n/a".into()),
                met: per_op_median.map(|m| m <= 5.0),
            },
            "publish-on" => {
                let rate = per_op_median.map(|ns| 1e3 / ns);
                XTarget {
                    what: "range → publish_on(single, 256) → sum".into(),
                    target: "≥ 50 M elements/s (the reactive issue's target)".into(),
                    measured: rate.map(|r| format!("{r:.1} M elements/s")).unwrap_or("n/a".into()),
                    met: rate.map(|r| r >= 50.0),
                }
            }
            _ => XTarget {
                what: "hand-written publisher subscribed".into(),
                target: "≤ 2 ns/subscription (the seed's JVM: 6 ns)".into(),
                measured: per_op_median.map(|m| format!("{m:.3} ns")).unwrap_or("n/a".into()),
                met: per_op_median.map(|m| m <= 2.0),
            },
        };
        targets.push(target);
    }
    let r = XResults {
        experiment: o.experiment.clone(),
        status: if invalid { "invalid".into() } else { "complete".into() },
        environment: env,
        config: json!({"elements": n, "warmup": o.warmup, "runs": o.runs, "timeout_s": o.timeout.as_secs()}),
        rows,
        tables: vec![t],
        targets,
        files: Vec::new(),
        method: vec![
            "Each workload runs in its own child process (`lab __xcell`), warm-up runs first, \
             then measured runs; every run is timed with std::time::Instant (ns resolution)."
                .into(),
            "Each run's result is checked: the range's sum must equal N(N+1)/2, the subscribe \
             loops must deliver N (one element of value 1 per subscription); a wrong result \
             makes the workload INVALID."
                .into(),
            "The workloads are reactive::bench::{range_sum, mono_just_subscribe, \
             hand_written_subscribe, publish_on_sum}; every element of the synchronous \
             workloads passes through black_box so the sum is not folded into its closed form."
                .into(),
            "publish-on: one Scheduler::single per child, prefetch 256; the timed run includes \
             subscribing and waiting for on_complete. As in Reactor, the range emits on the \
             thread that requests, so after the first prefetch the worker produces each \
             replenish batch itself (reactive's docs explain)."
                .into(),
            "The Flux.range target is checked on the median run time scaled to 1M elements.".into(),
        ],
        notes: Vec::new(),
    };
    common::finish(&dir, default, &r, "")
}
