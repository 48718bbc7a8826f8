//! `disruptor-vs-lbq`'s Why rules (see [`crate::analysis::why`]): each row's figures,
//! read from its typed detail with their results.json fields, and the rules on a pair.

use super::HandoffDetail;
use crate::analysis::why::{self, short, Fired, Reason, Rule, Side};
use crate::results::{Figure, ReasonCell, Reasons, Results, Row, Why};
use std::collections::BTreeMap;

mod gc;
pub use gc::Collector;

const SLEEP_FACTOR: f64 = 10.0;
const SLEEP_FLOOR: f64 = 0.001;
const OFF_CPU_POINTS: f64 = 0.10;
const COUNTER_FACTOR: f64 = 1.5;
const COUNTER_EVENTS: [&str; 4] = ["task-clock", "instructions", "cache-misses", "branch-misses"];

/// The figures of one row the rules read, each with its field of results.json.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// `heap.blocks_per_message` (the heap pass ran).
    pub blocks_per_message: Option<Figure>,
    /// `messages`, when above 0.
    pub messages: Option<Figure>,
    /// The consumer thread's `cpu.threads[k].voluntary_cs`.
    pub consumer_voluntary_cs: Option<Figure>,
    /// Every thread's `cpu.threads[k].cpu_ms` (`None`: no CPU figures).
    pub cpu_ms: Option<Vec<Figure>>,
    /// The consumer's off-CPU account (`off_cpu_by_thread.consumer`).
    pub off_cpu: Option<OffCpu>,
    /// The counters of [`COUNTER_EVENTS`] that have a value (`counters["…"]`), by event.
    pub counters: BTreeMap<&'static str, Figure>,
    /// The row's collector figures: `Some` for a JVM row that reported them, `None` for a
    /// JVM row that did not; a Rust row has no collector ([`Collector::None`]).
    pub gc: Collector,
}

/// The consumer's off-CPU figures over the trace run.
#[derive(Debug, Clone)]
pub struct OffCpu {
    /// `off_cpu_share`, 0..1.
    pub share: Figure,
    /// The state most intervals began in (`states.…`), with its count.
    pub state: Option<(String, Figure)>,
    /// The thread that woke it most (`woken_by.…`), with its count.
    pub waker: Option<(String, Figure)>,
}

/// The entry of `m` with the largest count (the last of equals, in key order).
fn most(m: &BTreeMap<String, u64>) -> Option<(String, f64)> {
    m.iter().map(|(k, v)| (k.clone(), *v as f64)).max_by(|a, b| a.1.total_cmp(&b.1))
}

impl Figures {
    /// The figures of `results[i]`, from its detail.
    pub fn of(i: usize, d: &HandoffDetail) -> Figures {
        let fig =
            |field: String, value: f64| Figure { field: format!("results[{i}].{field}"), value };
        let threads = d.cpu.as_ref().map(|c| &c.threads);
        let consumer =
            threads.and_then(|t| t.iter().enumerate().find(|(_, t)| t.name == "consumer"));
        let off_cpu = d.off_cpu_by_thread.as_ref().and_then(|t| t.get("consumer")).map(|c| {
            let at = |k: &str| format!("off_cpu_by_thread.consumer.{k}");
            OffCpu {
                share: fig(at("off_cpu_share"), c.off_cpu_share),
                state: most(&c.states)
                    .map(|(k, n)| (k.clone(), fig(at(&format!("states.{k}")), n))),
                waker: most(&c.woken_by)
                    .map(|(w, n)| (w.clone(), fig(at(&format!("woken_by.{w}")), n))),
            }
        });
        let counters = COUNTER_EVENTS
            .into_iter()
            .filter_map(|ev| {
                let v = d.counters.as_ref()?.get(ev).copied().flatten()?;
                Some((ev, fig(format!("counters[\"{ev}\"]"), v)))
            })
            .collect();
        let gc = match &d.jvm {
            None => Collector::None,
            Some(j) => match (j.gc_ms_per_run, j.gc_count_per_run, d.median_ms) {
                (Some(ms), Some(n), Some(run)) if run > 0.0 => Collector::Measured(gc::Gc {
                    gc_ms: fig("jvm.gc_ms_per_run".into(), ms),
                    pauses: fig("jvm.gc_count_per_run".into(), n),
                    run_ms: fig("median_ms".into(), run),
                }),
                _ => Collector::Unmeasured,
            },
        };
        Figures {
            gc,
            blocks_per_message: d
                .heap
                .as_ref()
                .map(|h| fig("heap.blocks_per_message".into(), h.blocks_per_message)),
            messages: (d.messages > 0).then(|| fig("messages".into(), d.messages as f64)),
            consumer_voluntary_cs: consumer
                .map(|(k, t)| fig(format!("cpu.threads[{k}].voluntary_cs"), t.voluntary_cs)),
            cpu_ms: threads.map(|t| {
                t.iter()
                    .enumerate()
                    .map(|(k, t)| fig(format!("cpu.threads[{k}].cpu_ms"), t.cpu_ms))
                    .collect()
            }),
            off_cpu,
            counters,
        }
    }
}

/// The rules, in the order their sentences are written.
const RULES: [Rule<Figures>; 6] = [gc::rule, allocation, sleeping, off_cpu, counters, cpu_time];

/// The Why section of a run.
pub fn section(r: &Results) -> Vec<Why> {
    let figures = |i: usize, x: &Row| {
        x.detail_if_any::<HandoffDetail>().map(|d| Figures::of(i, &d)).unwrap_or_default()
    };
    why::section(r, figures, &RULES)
}

/// The reasons table of a run: the figures the rules read, a column per pair (the traced
/// twins' pairs left out: they have their own table).
pub fn reasons(r: &Results) -> Option<Reasons> {
    let figures = |i: usize, x: &Row| {
        x.detail_if_any::<HandoffDetail>().map(|d| Figures::of(i, &d)).unwrap_or_default()
    };
    why::reasons(r, figures, |q| !q.is_side(), &REASONS)
}

/// The rows of the reasons table, in the order of the rules.
const REASONS: [Reason<Figures>; 10] = [
    Reason { reason: "GC share of run", rule: "gc", cell: gc::share_cell },
    Reason { reason: "GC pauses/msg", rule: "gc", cell: gc::pauses_cell },
    Reason { reason: "allocs/msg", rule: "allocation", cell: allocation_cell },
    Reason { reason: "sleeps/msg (vcs)", rule: "sleeping", cell: sleeping_cell },
    Reason { reason: "off-CPU share", rule: "off-cpu", cell: off_cpu_cell },
    Reason { reason: "CPU ns/msg", rule: "cpu-time", cell: cpu_time_cell },
    Reason { reason: "task-clock/msg", rule: "counter", cell: |a, b| counter_cell(a, b, 0) },
    Reason { reason: "instr/msg", rule: "counter", cell: |a, b| counter_cell(a, b, 1) },
    Reason { reason: "cache-miss/msg", rule: "counter", cell: |a, b| counter_cell(a, b, 2) },
    Reason { reason: "branch-miss/msg", rule: "counter", cell: |a, b| counter_cell(a, b, 3) },
];

pub(super) type Pair<'a, 'b> = &'a Side<'b, Figures>;

fn allocation_cell(row: Pair<'_, '_>, base: Pair<'_, '_>) -> Option<ReasonCell> {
    let (fa, fb) =
        (row.figures.blocks_per_message.clone()?, base.figures.blocks_per_message.clone()?);
    let text = format!("{} vs {}", short(fa.value), short(fb.value));
    Some(why::cell(text, vec![fa, fb], allocation(row, base)))
}

fn sleeping_cell(row: Pair<'_, '_>, base: Pair<'_, '_>) -> Option<ReasonCell> {
    let ((a, fa), (b, fb)) = (sleeps(row)?, sleeps(base)?);
    Some(why::cell(format!("{} vs {}", short(a), short(b)), [fa, fb].concat(), sleeping(row, base)))
}

fn off_cpu_cell(row: Pair<'_, '_>, base: Pair<'_, '_>) -> Option<ReasonCell> {
    let ((a, _, fa), (b, _, fb)) = (off_cpu_of(row)?, off_cpu_of(base)?);
    let text = format!("{:.1}% vs {:.1}%", a * 100.0, b * 100.0);
    Some(why::cell(text, [fa, fb].concat(), off_cpu(row, base)))
}

fn cpu_time_cell(row: Pair<'_, '_>, base: Pair<'_, '_>) -> Option<ReasonCell> {
    let ((a, fa), (b, fb)) = (cpu_per_message(row)?, cpu_per_message(base)?);
    let text = format!("{} vs {}", short(a), short(b));
    Some(why::cell(text, [fa, fb].concat(), cpu_time(row, base)))
}

/// The cell of counter `COUNTER_EVENTS[k]`: fired when the counter rule's threshold is
/// crossed for this event (the counter rule's sentence names it).
fn counter_cell(row: Pair<'_, '_>, base: Pair<'_, '_>, k: usize) -> Option<ReasonCell> {
    let ev = COUNTER_EVENTS[k];
    let (fa, fb) = (row.figures.counters.get(ev)?.clone(), base.figures.counters.get(ev)?.clone());
    let (a, b) = (fa.value, fb.value);
    let fired = a > 0.0 && b > 0.0 && a.max(b) >= COUNTER_FACTOR * a.min(b);
    let text = format!("{} vs {}", short(a), short(b));
    Some(ReasonCell { text, figures: vec![fa, fb], fired })
}

/// The consumer's voluntary context switches per message, with the figures they rest on.
fn sleeps(x: Pair<'_, '_>) -> Option<(f64, Vec<Figure>)> {
    let cs = x.figures.consumer_voluntary_cs.clone()?;
    let m = x.figures.messages.clone()?;
    Some((cs.value / m.value, vec![cs, m]))
}

/// The consumer's off-CPU share, its account, and the figures they rest on.
fn off_cpu_of<'a>(x: &'a Side<'_, Figures>) -> Option<(f64, &'a OffCpu, Vec<Figure>)> {
    let c = x.figures.off_cpu.as_ref()?;
    let mut figs = vec![c.share.clone()];
    figs.extend(c.state.iter().map(|(_, f)| f.clone()));
    figs.extend(c.waker.iter().map(|(_, f)| f.clone()));
    Some((c.share.value, c, figs))
}

/// CPU ns per message over all threads (getrusage), with the figures it rests on.
fn cpu_per_message(x: Pair<'_, '_>) -> Option<(f64, Vec<Figure>)> {
    let threads = x.figures.cpu_ms.as_ref()?;
    let ms: f64 = threads.iter().map(|f| f.value).sum();
    let m = x.figures.messages.clone()?;
    (ms > 0.0).then(|| {
        let mut figs = threads.clone();
        let per = ms * 1e6 / m.value;
        figs.push(m);
        (per, figs)
    })
}

fn allocation(row: Pair<'_, '_>, base: Pair<'_, '_>) -> Fired {
    why::allocation(
        (row.label, row.figures.blocks_per_message.as_ref()),
        (base.label, base.figures.blocks_per_message.as_ref()),
        "message",
    )
}

fn sleeping(row: Pair<'_, '_>, base: Pair<'_, '_>) -> Fired {
    let ((a, fa), (b, fb)) = (sleeps(row)?, sleeps(base)?);
    let (hi, lo) = (a.max(b), a.min(b));
    (hi >= SLEEP_FLOOR && hi >= SLEEP_FACTOR * lo).then(|| {
        (
            "sleeping",
            format!(
                "{}'s consumer blocked {} times per message (voluntary context switches), \
                 {}'s {} (rule: at least {SLEEP_FACTOR}× apart and the larger at least \
                 {SLEEP_FLOOR} per message; getrusage per thread, timed runs).",
                row.label,
                small(a),
                base.label,
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

fn off_cpu(row: Pair<'_, '_>, base: Pair<'_, '_>) -> Fired {
    let ((a, ca, fa), (b, cb, fb)) = (off_cpu_of(row)?, off_cpu_of(base)?);
    let woke = |c: &OffCpu| {
        let mut t = String::new();
        if let Some((k, n)) = &c.state {
            t += &format!(", most intervals in state {k} ({:.0})", n.value);
        }
        if let Some((w, n)) = &c.waker {
            t += &format!(", woken mostly by {w} ({:.0} times)", n.value);
        }
        t
    };
    ((a - b).abs() >= OFF_CPU_POINTS).then(|| {
        (
            "off-cpu",
            format!(
                "{}'s consumer was off the CPU {:.1}% of the trace run{}, {}'s {:.1}%{} (rule: \
                 at least {:.0} points apart; sched_switch in the trace pass).",
                row.label,
                a * 100.0,
                woke(ca),
                base.label,
                b * 100.0,
                woke(cb),
                OFF_CPU_POINTS * 100.0
            ),
            [fa, fb].concat(),
        )
    })
}

fn counters(row: Pair<'_, '_>, base: Pair<'_, '_>) -> Fired {
    let get = |x: Pair<'_, '_>, ev: &str| {
        x.figures.counters.get(ev).filter(|f| f.value > 0.0).map(|f| (f.value, f.clone()))
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
                row.label,
                base.label,
                parts.join("; ")
            ),
            figs,
        )
    })
}

fn cpu_time(row: Pair<'_, '_>, base: Pair<'_, '_>) -> Fired {
    let has_clock = |x: Pair<'_, '_>| x.figures.counters.contains_key("task-clock");
    if has_clock(row) && has_clock(base) {
        return None;
    }
    let ((a, fa), (b, fb)) = (cpu_per_message(row)?, cpu_per_message(base)?);
    (a.max(b) >= COUNTER_FACTOR * a.min(b)).then(|| {
        (
            "cpu-time",
            format!(
                "{} spent {a:.1} ns of CPU per message over all its threads, {} {b:.1} (rule: \
                 at least {COUNTER_FACTOR}× apart; getrusage per thread, timed runs).",
                row.label, base.label
            ),
            [fa, fb].concat(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::detail::{Cpu, Heap, JvmDetail, ThreadCpu};
    use super::*;
    use crate::profile::sched::ThreadOffCpu;
    use crate::results::Ratio;
    use serde_json::json;

    fn row(label: &str, detail: HandoffDetail) -> Row {
        let mut x: Row = serde_json::from_value(json!({
            "label": label, "key": {}, "group": "P=1", "status": "OK", "valid": true,
            "unit": "ms", "higher_is_better": false, "score": 10.0, "forks": []
        }))
        .expect("row");
        x.set_detail(&detail);
        x
    }

    fn results(rows: Vec<Row>, ratio: (f64, f64, f64)) -> Results {
        let mut r = crate::results::fixture::results("t", rows, Vec::new());
        let q = crate::results::fixture::ratio(
            "ring",
            "locked",
            "P=1",
            ratio.0,
            Some([ratio.1, ratio.2]),
        );
        r.ratios.push(Ratio { coverage: Some(0.99), rounds: 18, ..q });
        r
    }

    fn figures(blocks: f64, vcs: f64) -> HandoffDetail {
        let thread = |name: &str, voluntary_cs: f64| ThreadCpu {
            name: name.into(),
            cpu_ms: 1.0,
            voluntary_cs,
            ..Default::default()
        };
        HandoffDetail {
            messages: 1000,
            heap: Some(Heap { blocks_per_message: blocks, ..Default::default() }),
            cpu: Some(Cpu {
                threads: vec![thread("producer-0", 0.0), thread("consumer", vcs)],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn consumer_off_cpu(
        share: f64,
        woken_by: &[(&str, u64)],
    ) -> Option<BTreeMap<String, ThreadOffCpu>> {
        let c = ThreadOffCpu {
            off_cpu_share: share,
            woken_by: woken_by.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            ..Default::default()
        };
        Some([("consumer".to_string(), c)].into())
    }

    fn counters(task_clock: f64, instructions: f64) -> Option<crate::profile::counters::Values> {
        Some(
            [("task-clock", task_clock), ("instructions", instructions)]
                .map(|(k, v)| (k.to_string(), Some(v)))
                .into(),
        )
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
        a.off_cpu_by_thread = consumer_off_cpu(0.4, &[("producer-0", 90)]);
        a.counters = counters(200.0, 900.0);
        let mut b = figures(0.0, 0.0);
        b.off_cpu_by_thread = consumer_off_cpu(0.01, &[]);
        b.counters = counters(20.0, 850.0);
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

    /// A JVM row of 1000 messages whose median run is 1000 ms, `gc_ms` of it in GC.
    fn jvm_row(gc_ms: f64) -> HandoffDetail {
        let mut d = figures(1.0, 5.0);
        d.median_ms = Some(1000.0);
        d.jvm = Some(JvmDetail {
            gc_ms_per_run: Some(gc_ms),
            gc_count_per_run: Some(4.0),
            ..Default::default()
        });
        d
    }

    #[test]
    fn gc_rule_fires_at_six_percent_against_none_and_not_at_three() {
        // A JVM row at 6% against a Rust row (no collector): fires, with its figures.
        let mut rust = figures(1.0, 5.0);
        rust.median_ms = Some(400.0);
        let r =
            results(vec![row("locked", rust.clone()), row("ring", jvm_row(60.0))], (3.0, 2.5, 3.5));
        let w = section(&r);
        assert_eq!(w[0].rule, "gc", "{w:?}");
        assert!(w[0].text.contains("ring spent 6.0% of its run in GC"), "{}", w[0].text);
        assert!(w[0].text.contains("locked has no garbage collector"), "{}", w[0].text);
        let fields: Vec<&str> = w[0].figures.iter().map(|f| f.field.as_str()).collect();
        assert!(fields.contains(&"results[1].jvm.gc_ms_per_run"), "{fields:?}");
        assert!(fields.contains(&"results[1].median_ms"), "{fields:?}");
        assert!(fields.contains(&"results[1].jvm.gc_count_per_run"), "{fields:?}");
        let table = reasons(&r).expect("a reasons table");
        let gc_row = table.rows.iter().find(|x| x.reason == "GC share of run").expect("GC row");
        let c = gc_row.cells[0].as_ref().expect("a cell");
        assert!(c.fired && c.text == "6.0% vs 0.0%", "{c:?}");
        // Two JVM rows, 6% against 0%: fires the same way.
        let r =
            results(vec![row("locked", jvm_row(0.0)), row("ring", jvm_row(60.0))], (3.0, 2.5, 3.5));
        assert_eq!(section(&r)[0].rule, "gc");
        // 3% against 0%: under the threshold, no GC sentence.
        for base in [rust, jvm_row(0.0)] {
            let r = results(vec![row("locked", base), row("ring", jvm_row(30.0))], (3.0, 2.5, 3.5));
            let w = section(&r);
            assert!(w.iter().all(|w| w.rule != "gc"), "{w:?}");
            let table = reasons(&r).expect("a reasons table");
            let gc_row = table.rows.iter().find(|x| x.reason == "GC share of run").unwrap();
            assert!(!gc_row.cells[0].as_ref().unwrap().fired);
        }
        // 6% against 2%: the other row collects too much to call it the difference.
        let r = results(
            vec![row("locked", jvm_row(20.0)), row("ring", jvm_row(60.0))],
            (3.0, 2.5, 3.5),
        );
        assert!(section(&r).iter().all(|w| w.rule != "gc"));
    }
}
