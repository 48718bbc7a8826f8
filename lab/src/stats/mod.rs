//! Statistics of measured runs.
//!
//! * [`Summary`]: JMH's columns (min / mean / max, standard deviation and the 99.9%
//!   confidence interval of the mean from Student's t, whose quantile comes from `statrs`).
//! * [`interval`]: [`Interval`], and [`median_ci`], a distribution-free confidence interval of a median from order
//!   statistics — what the lab reports for a cell's score over its forks, since the
//!   machines here are noisy in phases and the runs are not normal.
//! * [`repeat_interval_at`]: where the median of a repeat run of as many rounds will fall
//!   (a distribution-free prediction interval from order statistics) — what the lab reports
//!   for a ratio over its rounds, because "will I see this again?" is what a ratio claims.
//! * [`modes`]: whether a set of fork scores falls into two clusters (a bimodal cell),
//!   so that it is reported as two modes rather than averaged into one number.
//! * [`percentiles`]: latency percentiles of sampled messages, and their merge over forks.

pub mod interval;
pub mod percentiles;

pub use interval::{median_ci, median_ci_at, repeat_interval_at, repeat_samples_min, Interval};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Summary of a set of samples (milliseconds, or any unit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// How many samples.
    pub n: usize,
    /// Smallest.
    pub min: f64,
    /// Median (mean of the middle two for an even count).
    pub median: f64,
    /// Largest.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for one sample.
    pub stddev: f64,
    /// Half-width of the 99.9% confidence interval of the mean; `None` below 2 samples.
    pub ci999_half: Option<f64>,
}

impl Summary {
    /// Summarises `xs`; `None` when empty.
    pub fn of(xs: &[f64]) -> Option<Summary> {
        if xs.is_empty() {
            return None;
        }
        let v = sorted(xs);
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let stddev = if n > 1 {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let ci999_half =
            (n > 1).then(|| t_quantile(0.9995, (n - 1) as f64) * stddev / (n as f64).sqrt());
        Some(Summary {
            n,
            min: v[0],
            median: median_sorted(&v),
            max: v[n - 1],
            mean,
            stddev,
            ci999_half,
        })
    }

    /// The confidence interval `[mean − h, mean + h]`, when there is one.
    pub fn ci999(&self) -> Option<(f64, f64)> {
        self.ci999_half.map(|h| (self.mean - h, self.mean + h))
    }
}

/// The `p` quantile of Student's t with `df` degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).map(|t| t.inverse_cdf(p)).unwrap_or(f64::NAN)
}

pub(crate) fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The median of `xs`; `None` when empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| median_sorted(&sorted(xs)))
}

/// The interquartile range of `xs` over its median (quartiles by linear interpolation
/// between order statistics); `None` below 4 samples or with a median of 0.
pub fn quartile_spread(xs: &[f64]) -> Option<f64> {
    if xs.len() < 4 {
        return None;
    }
    let v = sorted(xs);
    let at = |q: f64| {
        let h = q * (v.len() - 1) as f64;
        let (i, f) = (h.floor() as usize, h.fract());
        v[i] + (v[(i + 1).min(v.len() - 1)] - v[i]) * f
    };
    let m = at(0.5);
    (m > 0.0).then(|| (at(0.75) - at(0.25)) / m)
}

/// Two clusters are reported when the widest gap between sorted scores is a factor of at
/// least this, and each side holds at least [`MODE_MIN_SHARE`] of the scores.
pub const MODE_GAP: f64 = 1.4;
/// The smallest share of a mode.
pub const MODE_MIN_SHARE: f64 = 0.2;

/// One cluster of a bimodal set of scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mode {
    /// The median of the cluster's scores.
    pub median: f64,
    /// How many scores fell into it.
    pub count: usize,
    /// Its share of all scores, 0..1.
    pub share: f64,
}

/// The two modes of `xs` (positive scores), lower first, when they split into two clusters
/// as [`MODE_GAP`] and [`MODE_MIN_SHARE`] say; `None` for a unimodal set or fewer than 5.
pub fn modes(xs: &[f64]) -> Option<[Mode; 2]> {
    let n = xs.len();
    if n < 5 || xs.iter().any(|x| *x <= 0.0) {
        return None;
    }
    let v = sorted(xs);
    let min_side = ((n as f64 * MODE_MIN_SHARE).ceil() as usize).max(2);
    let (cut, gap) = (min_side..=n - min_side)
        .map(|i| (i, v[i] / v[i - 1]))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    if gap < MODE_GAP {
        return None;
    }
    let mode = |s: &[f64]| Mode {
        median: median_sorted(s),
        count: s.len(),
        share: s.len() as f64 / n as f64,
    };
    Some([mode(&v[..cut]), mode(&v[cut..])])
}

/// How many samples would bring a median interval of relative half-width `half` (from `n`
/// samples) down to `target`, assuming it narrows as 1/√n.
pub fn samples_needed(n: usize, half: f64, target: f64) -> usize {
    if half <= target || target <= 0.0 {
        return n;
    }
    ((n as f64) * (half / target).powi(2)).ceil() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 99.9% critical values from standard t tables.
        for (df, want) in [
            (1.0, 636.619),
            (2.0, 31.599),
            (4.0, 8.610),
            (9.0, 4.781),
            (19.0, 3.883),
            (30.0, 3.646),
            (120.0, 3.373),
        ] {
            let got = t_quantile(0.9995, df);
            assert!((got - want).abs() / want < 1e-3, "df={df}: {got} vs {want}");
        }
        assert!((t_quantile(0.975, 10.0) - 2.228).abs() < 1e-3);
    }

    #[test]
    fn summary_of_samples() {
        let s = Summary::of(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!((s.n, s.min, s.median, s.max, s.mean), (5, 1.0, 3.0, 5.0, 3.0));
        assert!((s.stddev - 1.581_138_8).abs() < 1e-6);
        // t(0.9995, 4) = 8.610 → 8.610 · 1.5811 / √5 = 6.088
        assert!((s.ci999_half.unwrap() - 6.088).abs() < 0.01);
        let one = Summary::of(&[7.0]).unwrap();
        assert_eq!((one.median, one.stddev, one.ci999_half), (7.0, 0.0, None));
        assert_eq!(Summary::of(&[1.0, 2.0]).unwrap().median, 1.5);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn quartile_spread_is_the_iqr_over_the_median() {
        // Quartiles of 1..=9: 3, 5, 7 → (7 − 3) / 5.
        let xs: Vec<f64> = (1..=9).rev().map(f64::from).collect();
        assert!((quartile_spread(&xs).unwrap() - 0.8).abs() < 1e-12);
        // 1, 2, 3, 4: 1.75, 2.5, 3.25 → 1.5 / 2.5.
        assert!((quartile_spread(&[4.0, 1.0, 3.0, 2.0]).unwrap() - 0.6).abs() < 1e-12);
        assert_eq!(quartile_spread(&[10.0; 6]), Some(0.0));
        assert!(quartile_spread(&[1.0, 2.0, 3.0]).is_none());
        assert!(quartile_spread(&[0.0; 5]).is_none());
    }

    #[test]
    fn two_clusters_are_modes_and_one_is_not() {
        let m = modes(&[20.0, 21.0, 19.5, 98.0, 97.0, 99.0, 20.5, 96.0]).unwrap();
        assert_eq!((m[0].count, m[1].count), (4, 4));
        assert!((m[0].median - 20.25).abs() < 1e-9 && (m[1].median - 97.5).abs() < 1e-9);
        assert!(modes(&[20.0, 21.0, 22.0, 23.0, 24.0, 25.0]).is_none());
        // One outlier is not a mode.
        assert!(modes(&[20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 90.0]).is_none());
    }

    #[test]
    fn rounds_needed_grow_with_the_square_of_the_width() {
        assert_eq!(samples_needed(10, 0.2, 0.1), 40);
        assert_eq!(samples_needed(10, 0.05, 0.1), 10);
    }
}
