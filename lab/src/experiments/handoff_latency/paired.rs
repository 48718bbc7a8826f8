//! Every percentile as a paired ratio: a row's fork of round r against its baseline's fork
//! of the same round, percentile by percentile (each fork's own histogram), summarised as
//! the median over rounds with its 99% repeat interval, as the scores' ratios are
//! (`crate::analysis::pairing`). The score ratio pairs one figure per row (the p50 round trip,
//! the p99 at a rate); this pairs the whole tail, so "lower at p50, higher at p99.9" shows
//! with its own interval.

use super::hdr::Merged;
use crate::analysis::pairing::{RESULT_COVERAGE, STABLE_HALF_WIDTH};
use crate::results::{Results, Table};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The percentiles paired, by name; 1.0 is the max.
pub const PERCENTILES: [(&str, f64); 6] =
    [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999), ("p99.99", 0.9999), ("max", 1.0)];

/// One percentile of a row against its baseline: row ÷ baseline per round (below 1: the
/// row's latency is lower there).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PercentileRatio {
    /// `p50` … `max`.
    pub percentile: String,
    /// The baseline row's label.
    pub baseline: String,
    /// Median over the paired rounds of row ÷ baseline.
    pub median: Option<f64>,
    /// The 99% repeat interval of that median (`None` with too few rounds).
    pub interval: Option<[f64; 2]>,
    /// Rounds in which both rows had a valid fork with a histogram.
    pub rounds: usize,
}

impl PercentileRatio {
    /// "0.42× [0.38, 0.47]", "0.42× [–]" without an interval, "–" without rounds; marked
    /// unstable where the interval is wider than ±10% of the median.
    pub fn text(&self) -> String {
        let Some(m) = self.median else { return "–".into() };
        match self.interval {
            Some([lo, hi]) => {
                let wide = (hi - lo) / 2.0 / m > STABLE_HALF_WIDTH;
                let (m, lo, hi) = (sig(m), sig(lo), sig(hi));
                format!("{m}× [{lo}, {hi}]{}", if wide { " unstable" } else { "" })
            }
            None => format!("{}× [–]", sig(m)),
        }
    }
}

/// A ratio with two decimals, or three significant digits below 0.1 (a ping-pong floor
/// hundreds of times below the locked queue's reads 0.00312, not 0.00).
fn sig(x: f64) -> String {
    if x >= 0.1 || x <= 0.0 {
        format!("{x:.2}")
    } else {
        let decimals = (2.0 - x.log10().floor()) as usize;
        format!("{x:.decimals$}")
    }
}

/// The value at quantile `q` (the max at 1.0).
fn at(h: &Histogram<u64>, q: f64) -> f64 {
    if q >= 1.0 {
        h.max() as f64
    } else {
        h.value_at_quantile(q) as f64
    }
}

/// Row ÷ baseline per percentile, paired by round (one fork per round and row; a round
/// where either has none is left out).
pub fn ratios(row: &Merged, base: &Merged, baseline: &str) -> Vec<PercentileRatio> {
    let by_round = |m: &Merged| -> BTreeMap<usize, Histogram<u64>> {
        m.forks.iter().map(|(round, _, h)| (*round, h.clone())).collect()
    };
    let (a, b) = (by_round(row), by_round(base));
    PERCENTILES
        .iter()
        .map(|&(name, q)| {
            let per_round: Vec<f64> = a
                .iter()
                .filter_map(|(round, x)| {
                    let y = b.get(round)?;
                    let (x, y) = (at(x, q), at(y, q));
                    (x > 0.0 && y > 0.0).then_some(x / y)
                })
                .collect();
            let interval = crate::stats::repeat_interval_at(&per_round, RESULT_COVERAGE)
                .map(|ci| [ci.low, ci.high]);
            PercentileRatio {
                percentile: name.to_string(),
                baseline: baseline.to_string(),
                median: crate::stats::median(&per_round),
                interval,
                rounds: per_round.len(),
            }
        })
        .collect()
}

/// Each ratio pair of the run (`out.ratios`: row against baseline within a group), every
/// percentile paired: per row, its list; and one table of them all. `merged[i]` is
/// `out.results[i]`'s.
pub fn pair_all(out: &Results, merged: &[Option<Merged>]) -> (Vec<Vec<PercentileRatio>>, Table) {
    let mut header = vec!["row ÷ baseline", "group"];
    header.extend(PERCENTILES.iter().map(|p| p.0));
    let mut table = Table::new(
        "Latency percentiles, row ÷ baseline, paired by round, each from a fork's histogram of \
         every run's messages (a fixed-rate score is the runs' median p99 instead)",
        &header,
    );
    let mut per_row = vec![Vec::new(); out.results.len()];
    let find = |label: &str, group: &str| {
        out.results.iter().position(|x| x.label == label && x.group == group)
    };
    for q in &out.ratios {
        let (Some(i), Some(j)) = (find(&q.variant, &q.group), find(&q.baseline, &q.group)) else {
            continue;
        };
        let (Some(Some(row)), Some(Some(base))) = (merged.get(i), merged.get(j)) else {
            continue;
        };
        let rs = ratios(row, base, &q.baseline);
        let mut line = vec![format!("{} ÷ {}", q.variant, q.baseline), q.group.clone()];
        line.extend(rs.iter().map(PercentileRatio::text));
        table.rows.push(line);
        per_row[i] = rs;
    }
    table.note = Some(format!(
        "Each round's fork of the row against the baseline's fork of the same round, one \
         percentile at a time from each fork's own histogram; the median over rounds and its \
         {:.0}% repeat interval (none with too few rounds). Every paired round counts here: \
         unlike the score ratios, no round is set apart for the machine's phase. Below 1: the \
         row's latency is lower at that percentile.",
        RESULT_COVERAGE * 100.0
    ));
    (per_row, table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(values_by_round: &[(usize, &[u64])]) -> Merged {
        let forks = values_by_round
            .iter()
            .map(|(round, vs)| {
                let mut h = super::super::hdr::hist();
                for v in *vs {
                    h.record(*v).unwrap();
                }
                (*round, 1.0, h)
            })
            .collect();
        Merged { all: super::super::hdr::hist(), forks, uncorrected: None }
    }

    #[test]
    fn pairs_each_percentile_by_round_and_leaves_out_unpaired_rounds() {
        // The row is half the baseline at every value in rounds 0..13; round 20 has no
        // baseline fork and must not count.
        let row_vals: Vec<Vec<u64>> =
            (0..14).map(|_| (1..=1000).map(|v| v * 10).collect()).collect();
        let base_vals: Vec<Vec<u64>> =
            (0..13).map(|_| (1..=1000).map(|v| v * 20).collect()).collect();
        let mut rows: Vec<(usize, &[u64])> =
            row_vals.iter().take(13).enumerate().map(|(r, v)| (r, v.as_slice())).collect();
        rows.push((20, row_vals[13].as_slice()));
        let bases: Vec<(usize, &[u64])> =
            base_vals.iter().enumerate().map(|(r, v)| (r, v.as_slice())).collect();
        let rs = ratios(&merged(&rows), &merged(&bases), "locked");
        assert_eq!(rs.len(), PERCENTILES.len());
        for r in &rs {
            assert_eq!(r.rounds, 13, "{r:?}");
            let m = r.median.unwrap();
            assert!((m - 0.5).abs() < 0.01, "{r:?}");
            let [lo, hi] = r.interval.expect("13 rounds give an interval");
            assert!(lo <= m && m <= hi, "{r:?}");
        }
        assert!(rs[0].text().starts_with("0.50× ["), "{}", rs[0].text());
    }

    #[test]
    fn a_slower_tail_shows_at_its_own_percentile() {
        // Same body, but the row's top 1% is 100× the baseline's: p50 ≈ 1, max ≈ 100.
        let base: Vec<u64> = (1..=1000).collect();
        let mut row = base.clone();
        for v in row.iter_mut().skip(990) {
            *v *= 100;
        }
        let rows: Vec<(usize, &[u64])> = (0..5).map(|r| (r, row.as_slice())).collect();
        let bases: Vec<(usize, &[u64])> = (0..5).map(|r| (r, base.as_slice())).collect();
        let rs = ratios(&merged(&rows), &merged(&bases), "b");
        let get = |p: &str| rs.iter().find(|r| r.percentile == p).unwrap().median.unwrap();
        assert!((get("p50") - 1.0).abs() < 0.01);
        assert!(get("max") > 90.0, "{rs:?}");
        assert!(rs[0].interval.is_none(), "5 rounds give no interval");
        assert!(rs[0].text().ends_with("[–]"));
    }

    #[test]
    fn small_ratios_keep_three_significant_digits() {
        assert_eq!(sig(0.5), "0.50");
        assert_eq!(sig(12.345), "12.35");
        assert_eq!(sig(0.0312), "0.0312");
        assert_eq!(sig(0.003118), "0.00312");
    }
}
