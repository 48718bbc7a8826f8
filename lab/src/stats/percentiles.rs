//! Latency percentiles of sampled messages (or elements), ns: read from one fork's HDR
//! histogram, and merged over a cell's forks as one median per percentile.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latency percentiles, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Values recorded.
    pub count: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
}

impl Percentiles {
    /// Percentiles of a histogram.
    pub fn of(h: &Histogram<u64>) -> Percentiles {
        Percentiles {
            count: h.len(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
            mean: h.mean(),
        }
    }

    /// Per percentile (and the mean), the median over forks, each fork's percentiles from
    /// its own histogram; `count` is the sum, `max` the largest. `None` without a fork.
    pub fn median_over<'a>(
        forks: impl IntoIterator<Item = &'a Percentiles>,
    ) -> Option<Percentiles> {
        let ls: Vec<&Percentiles> = forks.into_iter().collect();
        if ls.is_empty() {
            return None;
        }
        let med = |f: fn(&Percentiles) -> f64| {
            super::median(&ls.iter().map(|l| f(l)).collect::<Vec<_>>()).unwrap_or(0.0)
        };
        Some(Percentiles {
            count: ls.iter().map(|l| l.count).sum(),
            p50: med(|l| l.p50 as f64) as u64,
            p90: med(|l| l.p90 as f64) as u64,
            p99: med(|l| l.p99 as f64) as u64,
            p999: med(|l| l.p999 as f64) as u64,
            max: ls.iter().map(|l| l.max).max().unwrap_or(0),
            mean: med(|l| l.mean),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fork(p50: u64, max: u64, mean: f64) -> Percentiles {
        Percentiles { count: 10, p50, p90: p50 * 2, p99: p50 * 3, p999: p50 * 4, max, mean }
    }

    #[test]
    fn forks_merge_as_a_median_per_percentile_a_sum_of_counts_and_the_largest_max() {
        assert_eq!(Percentiles::median_over([]), None);
        let forks = [fork(100, 900, 110.0), fork(300, 5_000, 320.0), fork(200, 700, 210.0)];
        let m = Percentiles::median_over(&forks).unwrap();
        assert_eq!(m, fork(200, 5_000, 210.0).with_count(30));
    }

    #[test]
    fn the_keys_of_results_json_stay_as_they_were() {
        let v = serde_json::to_value(Percentiles::default()).unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["count", "max", "mean", "p50", "p90", "p99", "p999"]);
    }

    impl Percentiles {
        fn with_count(self, count: u64) -> Percentiles {
            Percentiles { count, ..self }
        }
    }
}
