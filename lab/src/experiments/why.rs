//! The Why section: sentences computed from one run's rows, each naming the fields of
//! results.json it rests on and the rule that produced it.
//!
//! For every ratio in `ratios[]` (a row against its group's baseline) the rules below look
//! at the two rows' figures. A rule fires only on a clear difference (its threshold is part
//! of its text); a pair whose ratio interval holds 1 has nothing to explain; a pair that
//! differs while no rule fires gets a sentence saying that the measured figures give no
//! reason. No sentence is written without the figures it quotes.
//!
//! Rules, each on the pair's two rows:
//! * **allocation**: heap blocks per message (dhat, the untimed heap pass) differ by at
//!   least 0.5.
//! * **sleeping**: the consumer's voluntary context switches per message (getrusage in the
//!   timed runs) differ at least tenfold and the larger is at least 0.001.
//! * **off-CPU**: the consumer's off-CPU share of the trace run (sched_switch) differs by at
//!   least 10 percentage points; the thread that woke it most is named.
//! * **counters**: a per-message counter (perf_event_open in the timed runs: task-clock,
//!   instructions, cache-misses, branch-misses) differs at least 1.5×.
//! * **CPU time**: where no task-clock counter exists, the CPU time per message of all the
//!   run's threads (getrusage) differs at least 1.5×.

use crate::results::{Figure, Ratio, Results, Row, Status, Why};

use serde_json::Value;

const ALLOC_DIFF: f64 = 0.5;
const SLEEP_FACTOR: f64 = 10.0;
const SLEEP_FLOOR: f64 = 0.001;
const OFF_CPU_POINTS: f64 = 0.10;
const COUNTER_FACTOR: f64 = 1.5;
const COUNTER_EVENTS: [&str; 4] = ["task-clock", "instructions", "cache-misses", "branch-misses"];

/// The sentences for every ratio of the run whose two rows finished OK.
pub fn section(r: &Results) -> Vec<Why> {
    let mut out = Vec::new();
    for (qi, q) in r.ratios.iter().enumerate() {
        let find = |label: &str| {
            r.results
                .iter()
                .position(|x| x.label == label && x.group == q.group && x.status == Status::Ok)
        };
        let (Some(i), Some(b)) = (find(&q.variant), find(&q.baseline)) else { continue };
        out.extend(explain_pair((qi, q), (i, &r.results[i]), (b, &r.results[b])));
    }
    out
}

type Side<'a> = (usize, &'a Row);

fn explain_pair((qi, q): (usize, &Ratio), row: Side<'_>, base: Side<'_>) -> Vec<Why> {
    let why = |rule: &str, text: String, figures: Vec<Figure>| Why {
        group: q.group.clone(),
        variant: q.variant.clone(),
        baseline: q.baseline.clone(),
        rule: rule.into(),
        text,
        figures,
    };
    let Some(m) = q.median else { return Vec::new() };
    let mut figs = vec![Figure { field: format!("ratios[{qi}].median"), value: m }];
    let interval = match (q.ci_low, q.ci_high) {
        (Some(lo), Some(hi)) => {
            figs.push(Figure { field: format!("ratios[{qi}].ci_low"), value: lo });
            figs.push(Figure { field: format!("ratios[{qi}].ci_high"), value: hi });
            format!("[{lo:.2}, {hi:.2}]")
        }
        _ => "(no interval: too few rounds)".to_string(),
    };
    let head = format!("{} against {} ({})", q.variant, q.baseline, q.group);
    if let (Some(lo), Some(hi)) = (q.ci_low, q.ci_high) {
        if lo <= 1.0 && 1.0 <= hi {
            return vec![why(
                "no-difference",
                format!(
                    "{head}: the paired ratio {m:.2}× {interval} holds 1, so there is no \
                     difference to explain."
                ),
                figs,
            )];
        }
    }
    let mut out = Vec::new();
    for rule in [allocation, sleeping, off_cpu, counters, cpu_time] {
        if let Some((name, text, figures)) = rule(row, base) {
            out.push(why(name, format!("{head}: {text}"), figures));
        }
    }
    if out.is_empty() {
        out.push(why(
            "no-reason",
            format!(
                "{head}: {} is {m:.2}× {interval} the baseline, but no rule found a \
                 reason in the measured figures (allocations, context switches, off-CPU time, \
                 counters and CPU time, per message or request, are each within their rule's threshold, \
                 or were not measured).",
                q.variant
            ),
            figs,
        ));
    }
    out
}

type Fired = Option<(&'static str, String, Vec<Figure>)>;

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

fn messages(x: &Row) -> Option<f64> {
    num(x.detail.get("messages")).filter(|m| *m > 0.0)
}

fn allocation(row: Side<'_>, base: Side<'_>) -> Fired {
    // disruptor-vs-lbq counts per message, echo-server per request.
    let get = |(i, x): Side<'_>| {
        let heap = x.detail.get("heap")?;
        ["message", "request"].into_iter().find_map(|unit| {
            let field = format!("blocks_per_{unit}");
            let v = num(heap.get(&field))?;
            Some((v, unit, Figure { field: format!("results[{i}].heap.{field}"), value: v }))
        })
    };
    let ((a, unit, fa), (b, unit_b, fb)) = (get(row)?, get(base)?);
    (unit == unit_b && (a - b).abs() >= ALLOC_DIFF).then(|| {
        (
            "allocation",
            format!(
                "{} makes {a:.3} heap allocations per {unit}, {} {b:.3} (rule: heap blocks per \
                 {unit} differ by at least {ALLOC_DIFF}; dhat, untimed heap pass).",
                row.1.label, base.1.label
            ),
            vec![fa, fb],
        )
    })
}

/// The consumer thread's entry in `cpu.threads`, with its index.
fn consumer(x: &Row) -> Option<(usize, &Value)> {
    let threads = x.detail.get("cpu")?.get("threads")?.as_array()?;
    threads
        .iter()
        .enumerate()
        .find(|(_, t)| t.get("name").and_then(Value::as_str) == Some("consumer"))
}

fn sleeping(row: Side<'_>, base: Side<'_>) -> Fired {
    let get = |(i, x): Side<'_>| {
        let (k, t) = consumer(x)?;
        let cs = num(t.get("voluntary_cs"))?;
        let m = messages(x)?;
        Some((
            cs / m,
            vec![
                Figure { field: format!("results[{i}].cpu.threads[{k}].voluntary_cs"), value: cs },
                Figure { field: format!("results[{i}].messages"), value: m },
            ],
        ))
    };
    let ((a, fa), (b, fb)) = (get(row)?, get(base)?);
    let (hi, lo) = (a.max(b), a.min(b));
    (hi >= SLEEP_FLOOR && hi >= SLEEP_FACTOR * lo).then(|| {
        (
            "sleeping",
            format!(
                "{}'s consumer blocked {} times per message (voluntary context switches), \
                 {}'s {} (rule: at least {SLEEP_FACTOR}× apart and the larger at least \
                 {SLEEP_FLOOR} per message; getrusage per thread, timed runs).",
                row.1.label,
                small(a),
                base.1.label,
                small(b)
            ),
            [fa, fb].concat(),
        )
    })
}

/// Three significant digits, however small.
fn small(v: f64) -> String {
    if v != 0.0 && v.abs() < 0.001 {
        format!("{v:.2e}")
    } else {
        format!("{v:.4}")
    }
}

fn off_cpu(row: Side<'_>, base: Side<'_>) -> Fired {
    let get = |(i, x): Side<'_>| {
        let c = x.detail.get("off_cpu_by_thread")?.get("consumer")?;
        let share = num(c.get("off_cpu_share"))?;
        let waker = c.get("woken_by").and_then(Value::as_object).and_then(|w| {
            w.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
        });
        let mut figs = vec![Figure {
            field: format!("results[{i}].off_cpu_by_thread.consumer.off_cpu_share"),
            value: share,
        }];
        // The state most intervals began in: S (blocked) reads differently from R (preempted).
        let state = c.get("states").and_then(Value::as_object).and_then(|st| {
            st.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
        });
        if let Some((k, n)) = &state {
            figs.push(Figure {
                field: format!("results[{i}].off_cpu_by_thread.consumer.states.{k}"),
                value: *n,
            });
        }
        if let Some((w, n)) = &waker {
            figs.push(Figure {
                field: format!("results[{i}].off_cpu_by_thread.consumer.woken_by.{w}"),
                value: *n,
            });
        }
        Some((share, waker, state, figs))
    };
    let ((a, wa, sa, fa), (b, wb, sb, fb)) = (get(row)?, get(base)?);
    let woke = |w: &Option<(String, f64)>, st: &Option<(String, f64)>| {
        let mut t = String::new();
        if let Some((k, n)) = st {
            t += &format!(", most intervals in state {k} ({n:.0})");
        }
        if let Some((w, n)) = w {
            t += &format!(", woken mostly by {w} ({n:.0} times)");
        }
        t
    };
    ((a - b).abs() >= OFF_CPU_POINTS).then(|| {
        (
            "off-cpu",
            format!(
                "{}'s consumer was off the CPU {:.1}% of the trace run{}, {}'s {:.1}%{} (rule: \
                 at least {:.0} points apart; sched_switch in the trace pass).",
                row.1.label,
                a * 100.0,
                woke(&wa, &sa),
                base.1.label,
                b * 100.0,
                woke(&wb, &sb),
                OFF_CPU_POINTS * 100.0
            ),
            [fa, fb].concat(),
        )
    })
}

fn counters(row: Side<'_>, base: Side<'_>) -> Fired {
    let get = |(i, x): Side<'_>, ev: &str| {
        let v = num(x.detail.get("counters")?.get(ev)).filter(|v| *v > 0.0)?;
        Some((v, Figure { field: format!("results[{i}].counters[\"{ev}\"]"), value: v }))
    };
    let mut parts = Vec::new();
    let mut figs = Vec::new();
    for ev in COUNTER_EVENTS {
        let (Some((a, fa)), Some((b, fb))) = (get(row, ev), get(base, ev)) else { continue };
        if a.max(b) >= COUNTER_FACTOR * a.min(b) {
            parts.push(format!("{ev} {a:.3} against {b:.3}"));
            figs.extend([fa, fb]);
        }
    }
    (!parts.is_empty()).then(|| {
        (
            "counter",
            format!(
                "per message, {} against {}: {} (rule: a counter at least {COUNTER_FACTOR}× \
                 apart; perf_event_open, timed runs; task-clock in ns).",
                row.1.label,
                base.1.label,
                parts.join("; ")
            ),
            figs,
        )
    })
}

fn cpu_time(row: Side<'_>, base: Side<'_>) -> Fired {
    let has_clock =
        |x: &Row| num(x.detail.get("counters").and_then(|c| c.get("task-clock"))).is_some();
    if has_clock(row.1) && has_clock(base.1) {
        return None;
    }
    let get = |(i, x): Side<'_>| {
        let threads = x.detail.get("cpu")?.get("threads")?.as_array()?;
        let ms: f64 = threads.iter().filter_map(|t| num(t.get("cpu_ms"))).sum();
        let m = messages(x)?;
        (ms > 0.0).then(|| {
            let mut figs: Vec<Figure> = threads
                .iter()
                .enumerate()
                .filter_map(|(k, t)| {
                    Some(Figure {
                        field: format!("results[{i}].cpu.threads[{k}].cpu_ms"),
                        value: num(t.get("cpu_ms"))?,
                    })
                })
                .collect();
            figs.push(Figure { field: format!("results[{i}].messages"), value: m });
            (ms * 1e6 / m, figs)
        })
    };
    let ((a, fa), (b, fb)) = (get(row)?, get(base)?);
    (a.max(b) >= COUNTER_FACTOR * a.min(b)).then(|| {
        (
            "cpu-time",
            format!(
                "{} spent {a:.1} ns of CPU per message over all its threads, {} {b:.1} (rule: \
                 at least {COUNTER_FACTOR}× apart; getrusage per thread, timed runs).",
                row.1.label, base.1.label
            ),
            [fa, fb].concat(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(label: &str, detail: Value) -> Row {
        let mut x: Row = serde_json::from_value(json!({
            "label": label, "key": {}, "group": "P=1", "status": "OK", "valid": true,
            "unit": "ms", "higher_is_better": false, "score": 10.0, "forks": []
        }))
        .expect("row");
        x.detail = detail.as_object().expect("object").clone();
        x
    }

    fn results(rows: Vec<Row>, ratio: (f64, f64, f64)) -> Results {
        let mut r = Results {
            schema_version: crate::results::SCHEMA_VERSION,
            experiment: "t".into(),
            status: "complete".into(),
            environment: crate::machine::Environment::default(),
            config: json!({}),
            rounds: crate::results::RoundsDone { planned: 1, finished: 1, made_up: 0 },
            results: Vec::new(),
            ratios: Vec::new(),
            tables: Vec::new(),
            targets: Vec::new(),
            charts: Vec::new(),
            files: Vec::new(),
            method: Vec::new(),
            notes: Vec::new(),
            why: Vec::new(),
        };
        r.results = rows;
        r.ratios.push(Ratio {
            variant: "ring".into(),
            baseline: "locked".into(),
            group: "P=1".into(),
            producers: Some(1),
            median: Some(ratio.0),
            ci_low: Some(ratio.1),
            ci_high: Some(ratio.2),
            coverage: Some(0.99),
            rounds: 18,
            unstable: false,
            rounds_needed: None,
            off_phase_rounds: 0,
            off_phase_median: None,
        });
        r
    }

    fn figures(blocks: f64, vcs: f64) -> Value {
        json!({
            "messages": 1000.0,
            "heap": {"blocks_per_message": blocks},
            "cpu": {"threads": [
                {"name": "producer-0", "cpu_ms": 1.0, "voluntary_cs": 0.0},
                {"name": "consumer", "cpu_ms": 1.0, "voluntary_cs": vcs}
            ]}
        })
    }

    #[test]
    fn equal_figures_give_no_reason() {
        let r = results(
            vec![row("locked", figures(1.0, 5.0)), row("ring", figures(1.0, 5.0))],
            (3.0, 2.5, 3.5),
        );
        let w = section(&r);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].rule, "no-reason");
        assert!(w[0].text.contains("no rule found a reason"), "{}", w[0].text);
        assert_eq!(w[0].figures[0].field, "ratios[0].median");
        assert_eq!(w[0].figures[0].value, 3.0);
    }

    #[test]
    fn an_interval_holding_one_has_nothing_to_explain() {
        let r = results(
            vec![row("locked", figures(1.0, 500.0)), row("ring", figures(0.0, 1.0))],
            (1.02, 0.97, 1.08),
        );
        let w = section(&r);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].rule, "no-difference");
    }

    #[test]
    fn allocation_and_sleeping_fire_with_their_figures() {
        let r = results(
            vec![row("locked", figures(1.0, 500.0)), row("ring", figures(0.0, 1.0))],
            (10.0, 9.0, 11.0),
        );
        let w = section(&r);
        let rules: Vec<&str> = w.iter().map(|w| w.rule.as_str()).collect();
        assert_eq!(rules, ["allocation", "sleeping"], "{w:?}");
        let alloc = &w[0];
        assert!(alloc.text.contains("ring makes 0.000 heap allocations per message, locked 1.000"));
        assert_eq!(alloc.figures[0].field, "results[1].heap.blocks_per_message");
        assert_eq!(alloc.figures[1].field, "results[0].heap.blocks_per_message");
        let sleep = &w[1];
        assert!(sleep.text.contains("0.0010") && sleep.text.contains("0.5000"), "{}", sleep.text);
        assert!(sleep
            .figures
            .iter()
            .any(|f| f.field == "results[0].cpu.threads[1].voluntary_cs" && f.value == 500.0));
    }

    #[test]
    fn off_cpu_and_counters_read_their_fields() {
        let mut a = figures(0.0, 0.0);
        a["off_cpu_by_thread"] =
            json!({"consumer": {"off_cpu_share": 0.4, "woken_by": {"producer-0": 90}}});
        a["counters"] = json!({"task-clock": 200.0, "instructions": 900.0});
        let mut b = figures(0.0, 0.0);
        b["off_cpu_by_thread"] = json!({"consumer": {"off_cpu_share": 0.01, "woken_by": {}}});
        b["counters"] = json!({"task-clock": 20.0, "instructions": 850.0});
        let r = results(vec![row("locked", a), row("ring", b)], (8.0, 7.0, 9.0));
        let w = section(&r);
        let rules: Vec<&str> = w.iter().map(|w| w.rule.as_str()).collect();
        assert_eq!(rules, ["off-cpu", "counter"], "{w:?}");
        assert!(w[0].text.contains("ring's consumer was off the CPU 1.0%"), "{}", w[0].text);
        assert!(w[0].text.contains("locked's 40.0%"), "{}", w[0].text);
        assert!(w[0].text.contains("woken mostly by producer-0 (90 times)"), "{}", w[0].text);
        assert!(w[1].text.contains("task-clock 20.000 against 200.000"), "{}", w[1].text);
        assert!(!w[1].text.contains("instructions"), "{}", w[1].text);
    }
}
