//! The Why section: sentences computed from one run's rows, each naming the fields of
//! results.json it rests on and the rule that produced it.
//!
//! For every ratio in `ratios[]` (a row against its group's baseline) the rules below look
//! at the two rows' figures. A rule fires only on a clear difference (its threshold is part
//! of its text); a pair whose ratio interval holds 1 has nothing to explain; a pair that
//! differs while no rule fires gets a sentence saying that the measured figures give no
//! reason. No sentence is written without the figures it quotes.
//!
//! The rules read a small typed struct of each row's figures (each value with its
//! results.json field), which the experiment builds from its typed detail; each experiment
//! with a Why section holds its figures and rules (`disruptor_vs_lbq::why`,
//! `echo_server::why`). This module holds the loop over `ratios[]`, the no-difference and
//! no-reason sentences, and the allocation rule both use.
//!
//! Rules, each on the pair's two rows:
//! * **gc** (JVM rows): one row spends at least 5% of its run in GC pauses and the other
//!   under 1% (GarbageCollectorMXBean over the timed runs; a Rust row has no collector).
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

use crate::results::{Figure, Ratio, ReasonCell, ReasonRow, Reasons, Results, Row, Status, Why};

/// The allocation rule's threshold: heap blocks per message (or request).
pub const ALLOC_DIFF: f64 = 0.5;

/// A rule that fired: its name, its sentence (after the pair's head) and its figures.
pub type Fired = Option<(&'static str, String, Vec<Figure>)>;

/// One row of a pair under a rule: its label and its figures.
#[derive(Debug)]
pub struct Side<'a, F> {
    /// The row's label.
    pub label: &'a str,
    /// Its figures.
    pub figures: &'a F,
}

/// A rule on a pair (the row, then the baseline).
pub type Rule<F> = fn(&Side<'_, F>, &Side<'_, F>) -> Fired;

/// The sentences for every ratio of the run whose two rows finished OK: `figures` reads a
/// row's figures (given its index in `results[]`), `rules` are tried in order.
pub fn section<F>(r: &Results, figures: impl Fn(usize, &Row) -> F, rules: &[Rule<F>]) -> Vec<Why> {
    let mut out = Vec::new();
    for (qi, q) in r.ratios.iter().enumerate() {
        let find = |label: &str| {
            r.results
                .iter()
                .position(|x| x.label == label && x.group == q.group && x.status == Status::Ok)
        };
        let (Some(i), Some(b)) = (find(&q.variant), find(&q.baseline)) else { continue };
        let (fi, fb) = (figures(i, &r.results[i]), figures(b, &r.results[b]));
        let row = Side { label: &r.results[i].label, figures: &fi };
        let base = Side { label: &r.results[b].label, figures: &fb };
        out.extend(explain_pair((qi, q), &row, &base, rules));
    }
    out
}

fn explain_pair<F>(
    (qi, q): (usize, &Ratio),
    row: &Side<'_, F>,
    base: &Side<'_, F>,
    rules: &[Rule<F>],
) -> Vec<Why> {
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
    for rule in rules {
        if let Some((name, text, figures)) = rule(row, base) {
            out.push(why(name, format!("{head}: {text}"), figures));
        }
    }
    if out.is_empty() {
        out.push(why(
            "no-reason",
            format!(
                "{head}: {} is {m:.2}× {interval} the baseline, but no rule found a \
                 reason in the measured figures (GC time where there is a collector, allocations, context switches, off-CPU time, \
                 counters and CPU time, per message or request, are each within their rule's threshold, \
                 or were not measured).",
                q.variant
            ),
            figs,
        ));
    }
    out
}

/// The allocation rule: heap blocks per `unit` (`message`, `request`; dhat, the untimed
/// heap pass), each side's figure when it has one.
pub fn allocation(
    row: (&str, Option<&Figure>),
    base: (&str, Option<&Figure>),
    unit: &str,
) -> Fired {
    let (fa, fb) = (row.1?, base.1?);
    let (a, b) = (fa.value, fb.value);
    ((a - b).abs() >= ALLOC_DIFF).then(|| {
        (
            "allocation",
            format!(
                "{} makes {a:.3} heap allocations per {unit}, {} {b:.3} (rule: heap blocks per \
                 {unit} differ by at least {ALLOC_DIFF}; dhat, untimed heap pass).",
                row.0, base.0
            ),
            vec![fa.clone(), fb.clone()],
        )
    })
}

/// One row of the reasons table: what it shows, the rule that reads it, and its cell for a
/// pair (the row, then the baseline; `None` where a side was not measured).
#[derive(Debug)]
pub struct Reason<F> {
    /// What the figures are, with their unit.
    pub reason: &'static str,
    /// The Why rule that reads them.
    pub rule: &'static str,
    /// The cell of a pair.
    pub cell: fn(&Side<'_, F>, &Side<'_, F>) -> Option<ReasonCell>,
}

/// A figure as the reasons table prints it: three significant digits or so, one below 0.001.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.3}")
    } else {
        format!("{v:.0e}")
    }
}

/// A cell from the two sides' values and the figures they rest on; `fired` when `rule`
/// fires on the pair, and then its figures are the rule's own (those of its Why sentence).
pub fn cell(text: String, figures: Vec<Figure>, rule: Fired) -> ReasonCell {
    match rule {
        Some((_, _, figs)) => ReasonCell { text, figures: figs, fired: true },
        None => ReasonCell { text, figures, fired: false },
    }
}

/// The reasons table of a run: a column per ratio that `keep` keeps whose two rows
/// finished OK (`ring/locked P=1`, or just the group when there is one pair), a row per
/// reason that has a figure in some column; `None` when there is no such row or column.
pub fn reasons<F>(
    r: &Results,
    figures: impl Fn(usize, &Row) -> F,
    keep: impl Fn(&Ratio) -> bool,
    defs: &[Reason<F>],
) -> Option<Reasons> {
    let mut pairs: Vec<(&Ratio, F, F, usize, usize)> = Vec::new();
    for q in r.ratios.iter().filter(|q| keep(q)) {
        let find = |label: &str| {
            r.results
                .iter()
                .position(|x| x.label == label && x.group == q.group && x.status == Status::Ok)
        };
        let (Some(i), Some(b)) = (find(&q.variant), find(&q.baseline)) else { continue };
        pairs.push((q, figures(i, &r.results[i]), figures(b, &r.results[b]), i, b));
    }
    let first = pairs.first()?.0;
    let one_pair =
        pairs.iter().all(|p| p.0.variant == first.variant && p.0.baseline == first.baseline);
    let columns = pairs
        .iter()
        .map(|(q, ..)| {
            if one_pair {
                q.group.clone()
            } else {
                format!("{}/{} {}", q.variant, q.baseline, q.group)
            }
        })
        .collect();
    let rows: Vec<ReasonRow> = defs
        .iter()
        .map(|d| ReasonRow {
            reason: d.reason.into(),
            rule: d.rule.into(),
            cells: pairs
                .iter()
                .map(|(q, fi, fb, i, b)| {
                    let row = Side { label: &r.results[*i].label, figures: fi };
                    let base = Side { label: &r.results[*b].label, figures: fb };
                    // A pair whose interval holds 1 has nothing to explain (no sentence).
                    let same = matches!((q.ci_low, q.ci_high), (Some(lo), Some(hi)) if lo <= 1.0 && 1.0 <= hi);
                    (d.cell)(&row, &base).map(|c| ReasonCell { fired: c.fired && !same, ..c })
                })
                .collect(),
        })
        .filter(|row| row.cells.iter().any(Option::is_some))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let whose = if one_pair {
        format!("{} vs {}", first.variant, first.baseline)
    } else {
        "each pair: the row vs its baseline".into()
    };
    Some(Reasons {
        title: format!("Reasons: the figures the Why rules read, {whose}"),
        columns,
        rows,
        note: Some(
            "* the rule's threshold is crossed (its sentence is in the report's Why section); \
             each cell's figures are fields of results.json (reasons.rows[].cells[].figures)."
                .into(),
        ),
    })
}
