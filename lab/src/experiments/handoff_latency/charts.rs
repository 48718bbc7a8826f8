//! The charts: percentile distributions on HdrHistogram's log-scaled percentile axis
//! (x = log10(1/(1 − q)): 0 is the median's left, 1 is 90%, 2 is 99%, …), every row of a
//! group on one chart with the machine floor drawn in; and latency against offered rate
//! (the sweep's hockey stick) with each row's knee marked.

use super::detail::detail;
use super::hdr::Merged;
use super::plan::{fmt_rate, FLOOR, PING_PONG};
use crate::results::{Chart, Results};
use hdrhistogram::Histogram;

/// The deepest percentile drawn: 99.999% (x = 5).
const DEEPEST_X: f64 = 5.0;
/// Points per decade of the percentile axis.
const PER_DECADE: u32 = 10;

/// The percentile axis' names.
fn percentile_ticks() -> Vec<(f64, String)> {
    ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"]
        .iter()
        .enumerate()
        .map(|(i, n)| (i as f64, n.to_string()))
        .collect()
}

/// A distribution's curve: (log10(1/(1 − q)), µs), as deep as its count supports (a
/// percentile past 1 − 1/count is the max).
pub fn curve(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let deepest = (h.len().max(1) as f64).log10().min(DEEPEST_X);
    let steps = (deepest * f64::from(PER_DECADE)).floor() as u32;
    (0..=steps)
        .map(|i| {
            let x = f64::from(i) / f64::from(PER_DECADE);
            let q = 1.0 - 10f64.powf(-x);
            (x, h.value_at_quantile(q) as f64 / 1e3)
        })
        .collect()
}

fn percentile_chart(
    r: &Results,
    merged: &[Option<Merged>],
    group: &str,
    floor: Option<&Histogram<u64>>,
) -> Option<Chart> {
    let mut c = Chart {
        title: format!(
            "Latency by percentile, {group} (log scale; HdrHistogram's percentile axis)"
        ),
        x_label: "percentile".into(),
        y_label: "µs".into(),
        x_ticks: percentile_ticks(),
        ..Default::default()
    };
    for (x, m) in r.results.iter().zip(merged) {
        if x.group != group {
            continue;
        }
        if let Some(m) = m {
            c.series.push((x.label.clone(), curve(&m.all)));
        }
    }
    if c.series.is_empty() {
        return None;
    }
    if let (Some(f), false) = (floor, group == PING_PONG) {
        c.series.push((format!("{FLOOR} (round trip)"), curve(f)));
    }
    Some(c)
}

/// The knee chart of a sweep group: each row's p99 per step, x = log10(rate).
fn knee_chart(r: &Results, group: &str) -> Option<Chart> {
    let mut c = Chart {
        title: format!(
            "p99 against offered rate, {group} (log scale; knee: the highest rate sustained)"
        ),
        x_label: "offered rate, msgs/s".into(),
        y_label: "µs (p99 from the due time)".into(),
        ..Default::default()
    };
    let mut knees = Vec::new();
    let mut xs = Vec::new();
    for x in r.results.iter().filter(|x| x.group == group) {
        let d = detail(x);
        let pts: Vec<(f64, f64)> =
            d.sweep.iter().map(|s| (s.rate.log10(), s.tail.p99 as f64 / 1e3)).collect();
        xs.extend(d.sweep.iter().map(|s| s.rate));
        if let Some(k) = d.sweep.iter().rfind(|s| s.not_sustained.is_none()) {
            knees.push((k.rate.log10(), k.tail.p99 as f64 / 1e3));
        }
        if !pts.is_empty() {
            c.series.push((x.label.clone(), pts));
        }
    }
    if c.series.is_empty() {
        return None;
    }
    if !knees.is_empty() {
        c.references.push(("knee (highest sustained)".into(), knees));
    }
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    c.x_ticks = xs.iter().map(|&x| (x.log10(), fmt_rate(x))).collect();
    Some(c)
}

/// Every chart of the run.
pub fn charts(r: &Results, merged: &[Option<Merged>]) -> Vec<Chart> {
    let floor = r
        .results
        .iter()
        .zip(merged)
        .find(|(x, _)| x.label == FLOOR)
        .and_then(|(_, m)| m.as_ref().map(|m| &m.all));
    let mut groups: Vec<(String, String)> = Vec::new();
    for x in &r.results {
        if !groups.iter().any(|g| g.0 == x.group) {
            groups.push((x.group.clone(), detail(x).workload));
        }
    }
    let mut out = Vec::new();
    for (g, w) in &groups {
        match w.as_str() {
            "sweep" => out.extend(knee_chart(r, g)),
            _ => out.extend(percentile_chart(r, merged, g, floor)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_runs_on_the_log_percentile_axis_as_deep_as_the_count() {
        let mut h = super::super::hdr::hist();
        for v in 1..=10_000u64 {
            h.record(v * 1000).unwrap();
        }
        let c = curve(&h);
        assert_eq!(c.first().unwrap().0, 0.0);
        assert!((c.last().unwrap().0 - 4.0).abs() < 1e-9, "{:?}", c.last());
        let at = |x: f64| c.iter().find(|p| (p.0 - x).abs() < 1e-9).unwrap().1;
        // x = 1 is the 90th percentile, x = 2 the 99th: µs of the recorded ns.
        assert!((at(1.0) - 9_000.0).abs() / 9_000.0 < 0.002);
        assert!((at(2.0) - 9_900.0).abs() / 9_900.0 < 0.002);
    }
}
