//! `handoff-latency`'s plan: its options checked (a one-line error naming the valid
//! choices), the rows (variant × ring wait) of each workload's group, the baseline and the
//! pairs against the machine floor.

use super::{Cell, HlArgs, Plant, Work, Workload};
use crate::experiment::{CellPlan, Plan, Shared};
use crate::experiments::choices;
use crate::measure::variants::{self, VariantInfo, WAITS};
use crate::units::at_least_one;
use crate::units::{parse_list, parse_producers, parse_size};
use clap::builder::PossibleValue;
use serde_json::json;

/// The machine floor's row label.
pub const FLOOR: &str = "machine floor";

/// The fixed rate's plain loop: the schedule with no handoff.
pub const HARNESS: &str = "harness (no handoff)";

/// The ping-pong group.
pub const PING_PONG: &str = "ping-pong";

/// The variants this experiment drives: every handoff of this build (fault variants only
/// under `LAB_FAULTS=1`) and the JVM originals of [`super::jvm::VARIANTS`].
fn offered() -> Vec<VariantInfo> {
    let jvm = super::jvm::VARIANTS;
    variants::all()
        .into_iter()
        .filter(|v| v.unavailable.is_none())
        .filter(|v| !variants::is_jvm(v.name) || jvm.contains(&v.name))
        .collect()
}

fn valid_names() -> String {
    let names: Vec<&str> = offered().iter().map(|v| v.name).chain(["all", "jvm"]).collect();
    names.join(", ")
}

/// The JVM originals `jvm` in `--variants` stands for.
pub const JVM_SET: [&str; 2] = ["jvm-lbq", "jvm-disruptor"];

/// `--variants`: a comma list of handoff names, `all` (every Rust handoff) and `jvm` (the
/// JVM originals of [`JVM_SET`]); kept as given. A JVM original named where the JVM side
/// cannot be built is refused with what installs it.
pub fn variant_list(s: &str) -> Result<String, String> {
    for name in parse_list(s) {
        if name == "all" {
            continue;
        }
        if name == "jvm" {
            if let Some(why) = crate::measure::jvm::unavailable() {
                return Err(format!("variant 'jvm' (the JVM originals): {why}"));
            }
            continue;
        }
        if !offered().iter().any(|v| v.name == name) {
            if variants::is_jvm(&name) && variants::find(&name).is_some() {
                return Err(format!(
                    "variant '{name}' runs in disruptor-vs-lbq only; valid here: {}",
                    valid_names()
                ));
            }
            return Err(format!("unknown variant '{name}'; valid: {}", valid_names()));
        }
        if variants::is_jvm(&name) {
            if let Some(why) = crate::measure::jvm::variant_unavailable(&name) {
                return Err(format!("variant '{name}': {why}"));
            }
        }
    }
    Ok(s.to_string())
}

/// `--jvm-wait`: `matching` or a comma list of the JVM's wait strategies; kept as given.
pub fn jvm_wait_list(s: &str) -> Result<String, String> {
    if s.trim() == "matching" {
        return Ok(s.to_string());
    }
    for w in parse_list(s) {
        if !JVM_WAITS.contains(&w.as_str()) {
            return Err(format!(
                "unknown JVM wait strategy '{w}'; valid: matching, {}",
                JVM_WAITS.join(", ")
            ));
        }
    }
    Ok(s.to_string())
}

/// The JVM Disruptor's wait strategies, as `LatencyRun --wait` names them.
pub const JVM_WAITS: [&str; 5] = ["blocking", "lite-blocking", "sleeping", "yielding", "busy-spin"];

/// `--jvm-wait`'s possible values.
pub fn jvm_wait_values() -> Vec<PossibleValue> {
    std::iter::once(PossibleValue::new("matching").help("the JVM strategy of each --wait"))
        .chain(JVM_WAITS.iter().map(|w| PossibleValue::new(*w)))
        .collect()
}

/// `--variants`' possible values.
pub fn variant_values() -> Vec<PossibleValue> {
    let mut v = choices::variant_values(
        &offered(),
        Some("every Rust handoff above but the planted faults (not the JVM's)"),
    );
    v.push(PossibleValue::new("jvm").help(
        "the JVM originals jvm-lbq and jvm-disruptor (the latter with each --jvm-wait), one \
         JVM per fork",
    ));
    v
}

/// A row: its label, variant and ring wait.
#[derive(Debug, Clone, PartialEq)]
pub struct RowSpec {
    /// `ring[busy-spin]`, `locked`.
    pub label: String,
    /// The variant.
    pub variant: String,
    /// The ring's wait.
    pub wait: Option<String>,
}

fn waits(s: &str) -> Vec<String> {
    if s.trim() == "all" {
        WAITS.iter().map(|w| w.0.to_string()).collect()
    } else {
        dedup(parse_list(s))
    }
}

fn dedup<T: PartialEq>(xs: Vec<T>) -> Vec<T> {
    let mut out = Vec::new();
    for x in xs {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// The rows of `--variants` × (for the ring) `wait`, and (for the JVM Disruptor)
/// `jvm_wait`: `all` stands for every Rust handoff but the planted faults, `jvm` for the
/// JVM originals of [`JVM_SET`].
pub fn row_specs(variants: &str, wait: &str, jvm_wait: &str) -> Vec<RowSpec> {
    let mut names = Vec::new();
    for n in parse_list(variants) {
        match n.as_str() {
            "all" => names.extend(
                offered()
                    .into_iter()
                    .filter(|v| !v.is_fault() && !variants::is_jvm(v.name))
                    .map(|v| v.name.to_string()),
            ),
            "jvm" => names.extend(JVM_SET.iter().map(|v| v.to_string())),
            _ => names.push(n),
        }
    }
    let mut out = Vec::new();
    for n in dedup(names) {
        let takes_wait = variants::find(&n).is_some_and(|v| v.takes_wait);
        let ws = if variants::is_jvm(&n) { jvm_waits(jvm_wait, wait) } else { waits(wait) };
        if takes_wait {
            for w in ws {
                out.push(RowSpec { label: format!("{n}[{w}]"), variant: n.clone(), wait: Some(w) });
            }
        } else {
            out.push(RowSpec { label: n.clone(), variant: n, wait: None });
        }
    }
    out
}

/// The JVM Disruptor rows' waits: `--jvm-wait`'s list, or for `matching` the JVM's
/// strategy of each of `--wait`'s.
fn jvm_waits(jvm_wait: &str, wait: &str) -> Vec<String> {
    if jvm_wait.trim() == "matching" {
        dedup(
            waits(wait).iter().map(|w| crate::measure::jvm::matching_wait(w).to_string()).collect(),
        )
    } else {
        dedup(parse_list(jvm_wait))
    }
}

/// A rate as the labels write it: 1M, 250K, 1.5M.
pub fn fmt_rate(r: f64) -> String {
    let (v, unit) = if r >= 1e6 {
        (r / 1e6, "M")
    } else if r >= 1e3 {
        (r / 1e3, "K")
    } else {
        (r, "")
    };
    let t = format!("{v:.2}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    format!("{t}{unit}")
}

/// The group of a fixed-rate cell.
pub fn rate_group(rate: f64, producers: usize) -> String {
    format!("{} msgs/s P={producers}", fmt_rate(rate))
}

/// The group of a sweep cell.
pub fn sweep_group(producers: usize) -> String {
    format!("sweep P={producers}")
}

/// The group of the pipeline's cells.
pub fn pipeline_group(rate: f64) -> String {
    format!("pipeline {} msgs/s", fmt_rate(rate))
}

/// The checked lists: rates (messages per second) and producer counts.
fn lists(a: &HlArgs) -> Result<(Vec<f64>, Vec<usize>), String> {
    let mut rates = Vec::new();
    for r in parse_list(&a.rates) {
        let n = parse_size(&r).map_err(|e| format!("--rates: {e}"))?;
        at_least_one(&[(n, "every rate of --rates")])?;
        rates.push(n as f64);
    }
    if rates.is_empty() {
        return Err("--rates is empty; give rates in messages per second, e.g. 100K,1M".into());
    }
    let producers = parse_producers(&a.producers).map_err(|e| format!("--producers: {e}"))?;
    if producers.is_empty() || producers.contains(&0) {
        return Err(format!("--producers must list counts of at least 1 (got '{}')", a.producers));
    }
    Ok((dedup(rates), producers))
}

fn check(a: &HlArgs) -> Result<(), String> {
    at_least_one(&[
        (a.round_trips, "--round-trips"),
        (a.duration_ms, "--duration-ms"),
        (a.rate_runs, "--rate-runs"),
        (a.p99_bound_us, "--p99-bound-us"),
        (a.sweep_from, "--sweep-from"),
        (a.sweep_step_ms, "--sweep-step-ms"),
        (a.pipeline_rate, "--pipeline-rate"),
        (a.pipeline_ms, "--pipeline-ms"),
    ])?;
    if !(1..=20).contains(&a.sweep_steps) {
        return Err(format!("--sweep-steps must be 1 to 20 (got {})", a.sweep_steps));
    }
    ring::check_size(a.ring_size as usize).map_err(|e| format!("--ring-size: {e}"))?;
    Ok(())
}

/// A cell of `work` for `row` (`None`: the machine floor) in `group`.
fn cell_plan(
    a: &HlArgs,
    shared: &Shared,
    work: Work,
    row: Option<&RowSpec>,
    group: &str,
) -> CellPlan<Cell> {
    let cell = Cell {
        work,
        variant: row.map(|r| r.variant.clone()),
        wait: row.and_then(|r| r.wait.clone()),
        ring_size: a.ring_size as usize,
        p99_bound_ns: a.p99_bound_us * 1000,
        warmup: shared.warmup as usize,
        runs: match work {
            Work::FixedRate { .. } => a.rate_runs as usize,
            _ => shared.runs as usize,
        },
        plant: Plant::default(),
        // The Rust rows' fixed rate: the JVM's consumer is not this process's thread.
        wakeups: a.wakeups == crate::experiment::Switch::On
            && matches!(work, Work::FixedRate { .. })
            && row.is_some_and(|r| !variants::is_jvm(&r.variant)),
    };
    let plain = if matches!(work, Work::PingPong { .. }) { FLOOR } else { HARNESS };
    let label = row.map_or(plain.to_string(), |r| r.label.clone());
    let (workload, unit, threads, producers) = match work {
        Work::PingPong { .. } => ("ping-pong", "ns p50 round trip", 2, 1),
        Work::FixedRate { producers, .. } => ("fixed-rate", "ns p99", producers + 1, producers),
        Work::Sweep { producers, .. } => ("sweep", "msgs/s sustained", producers + 1, producers),
        Work::Pipeline { .. } => ("pipeline", "ns mean", 1 + super::cell::STAGES, 1),
    };
    let key = super::detail::HlKey {
        workload: workload.to_string(),
        variant: row
            .map_or(if plain == FLOOR { "floor" } else { "harness" }, |r| r.variant.as_str())
            .to_string(),
        producers: producers as u64,
        wait: row.and_then(|r| r.wait.clone()),
    };
    let mut c = CellPlan::new(cell, label.clone(), group).keyed(&key);
    let slug: String =
        group.chars().map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '-' }).collect();
    c.file_stem = format!("{slug}-{}", c.file_stem.replace(' ', "-"));
    c.unit = unit;
    c.higher_is_better = matches!(work, Work::Sweep { .. });
    c.threads = threads;
    c.heap = false;
    c.trace = false;
    c
}

/// The plan.
pub fn plan(a: &HlArgs, shared: &Shared) -> Result<Plan<Cell>, String> {
    check(a)?;
    let (rates, producers) = lists(a)?;
    let rows = row_specs(&a.variants, &a.wait, &a.jvm_wait);
    let workloads = dedup(a.workloads.clone());
    let mut cells = Vec::new();
    let mut pairs = Vec::new();
    for w in &workloads {
        match w {
            Workload::PingPong => {
                let work = Work::PingPong { trips: a.round_trips };
                cells.push(cell_plan(a, shared, work, None, PING_PONG));
                for r in &rows {
                    cells.push(cell_plan(a, shared, work, Some(r), PING_PONG));
                    pairs.push((r.label.clone(), FLOOR.to_string()));
                }
            }
            Workload::FixedRate => {
                for &p in &producers {
                    for &rate in &rates {
                        let work =
                            Work::FixedRate { rate, producers: p, duration_ms: a.duration_ms };
                        cells.push(cell_plan(a, shared, work, None, &rate_group(rate, p)));
                        for r in &rows {
                            cells.push(cell_plan(a, shared, work, Some(r), &rate_group(rate, p)));
                        }
                    }
                }
            }
            Workload::Sweep => {
                for &p in &producers {
                    let work = Work::Sweep {
                        from: a.sweep_from as f64,
                        steps: a.sweep_steps as u32,
                        step_ms: a.sweep_step_ms,
                        producers: p,
                    };
                    for r in &rows {
                        cells.push(cell_plan(a, shared, work, Some(r), &sweep_group(p)));
                    }
                }
            }
            Workload::Pipeline => {
                let rate = a.pipeline_rate as f64;
                let work = Work::Pipeline { rate, duration_ms: a.pipeline_ms };
                let chosen: Vec<String> = rows.iter().map(|r| r.variant.clone()).collect();
                let mut prows = Vec::new();
                if chosen.iter().any(|v| v == "locked") {
                    prows.push(RowSpec {
                        label: "locked".into(),
                        variant: "locked".into(),
                        wait: None,
                    });
                }
                if chosen.iter().any(|v| v == "ring") {
                    prows.extend(row_specs("ring", &a.pipeline_wait, "matching"));
                }
                if prows.is_empty() {
                    return Err("the pipeline workload compares the ring with the locked queue: \
                                --variants must name ring or locked"
                        .into());
                }
                for r in &prows {
                    cells.push(cell_plan(a, shared, work, Some(r), &pipeline_group(rate)));
                }
            }
        }
    }
    if rows.is_empty() {
        return Err(format!("no variant chosen; valid: {}", valid_names()));
    }
    let baseline = if rows.iter().any(|r| r.label == "locked") {
        "locked".to_string()
    } else {
        rows[0].label.clone()
    };
    Ok(Plan {
        cells,
        baseline: Some(baseline),
        pairs,
        config: json!({
            "rows": rows.iter().map(|r| r.label.clone()).collect::<Vec<_>>(),
            "rates_per_s": rates,
            "producers": producers,
            "p99_bound_ns": a.p99_bound_us * 1000,
            "late_ns": super::LATE_NS,
            "ring_size": a.ring_size,
            "locked_capacity": "unbounded",
        }),
        input_size: a.round_trips,
        notes: Vec::new(),
    })
}
