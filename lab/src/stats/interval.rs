//! Intervals of a median from order statistics, distribution-free: the confidence interval
//! of this sample's median ([`median_ci_at`]) and the repeat interval, where a repeat
//! sample's median will fall ([`repeat_interval_at`]).

use super::sorted;
use statrs::function::gamma::ln_gamma;

/// An interval from order statistics: `[low, high]`, and the probability `coverage` with
/// which it holds what it claims to (the median, or a repeat's median).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Its low end.
    pub low: f64,
    /// Its high end.
    pub high: f64,
    /// Its coverage, 0..1 (exact for a confidence interval; a lower bound for a repeat
    /// interval over an even number of samples).
    pub coverage: f64,
}

impl Interval {
    /// Whether `x` lies inside, ends included.
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// The farther end's distance from `centre`, relative to `centre`.
    pub fn half_width_rel(&self, centre: f64) -> f64 {
        (centre - self.low).max(self.high - centre) / centre
    }
}

/// A 95% confidence interval of the median of `xs` from order statistics
/// (distribution-free): see [`median_ci_at`]. `None` below 6 samples.
pub fn median_ci(xs: &[f64]) -> Option<Interval> {
    median_ci_at(xs, 0.95)
}

/// A confidence interval of the median of `xs` from order statistics (distribution-free):
/// `[x(k), x(n+1−k)]` with the largest `k` that keeps each tail's binomial probability at
/// most (1 − `coverage`)/2. Returns the interval with its exact coverage; `None` when even
/// `[min, max]` falls short (below 6 samples at 95%, below 8 at 99%).
pub fn median_ci_at(xs: &[f64], coverage: f64) -> Option<Interval> {
    let n = xs.len();
    let v = sorted(xs);
    let tail_limit = (1.0 - coverage) / 2.0;
    let k = (1..=n / 2).take_while(|&k| binomial_tail(n, k) <= tail_limit).last()?;
    Some(Interval { low: v[k - 1], high: v[n - k], coverage: 1.0 - 2.0 * binomial_tail(n, k) })
}

/// A repeat interval of the median of `xs`: `[x(k), x(n+1−k)]` with the largest `k` such
/// that the median of a repeat run of `n` independent samples from the same distribution
/// falls inside with probability at least `coverage`. Distribution-free: whether the
/// repeat's median falls below `x(k)` depends only on ranks among the `2n` values, so the
/// probability is exact for odd `n` and an upper bound for even `n` (whose median is the
/// mean of two middle values), which keeps the stated coverage a lower bound. It is wider
/// than [`median_ci_at`]'s interval at the same coverage (the repeat's median varies as
/// much as this one's). Returns the interval with its coverage; `None` when even `[min, max]`
/// falls short (below 13 samples at 99%).
pub fn repeat_interval_at(xs: &[f64], coverage: f64) -> Option<Interval> {
    let n = xs.len();
    let v = sorted(xs);
    let k = (1..=n / 2).take_while(|&k| 1.0 - 2.0 * repeat_miss(n, k) >= coverage).last()?;
    Some(Interval { low: v[k - 1], high: v[n - k], coverage: 1.0 - 2.0 * repeat_miss(n, k) })
}

/// The fewest samples for which [`repeat_interval_at`] has an interval at `coverage`.
pub fn repeat_samples_min(coverage: f64) -> usize {
    (2..).find(|&n| 1.0 - 2.0 * repeat_miss(n, 1) >= coverage).expect("coverage < 1")
}

/// P(the median of a repeat sample of `n` < x(k) of this sample of `n`), an upper bound for
/// even `n`. With `i` of the repeat's values below x(k), the ranks of the `2n` values make
/// `i` negative-hypergeometric: P(i) = C(i + k − 1, i) C(2n − i − k, n − i) / C(2n, n). The
/// repeat's median lies below x(k) only if at least ⌈n/2⌉ of its values do (exactly so for
/// odd `n`).
fn repeat_miss(n: usize, k: usize) -> f64 {
    let ln_c = |a: usize, b: usize| {
        ln_gamma(a as f64 + 1.0) - ln_gamma(b as f64 + 1.0) - ln_gamma((a - b) as f64 + 1.0)
    };
    let all = ln_c(2 * n, n);
    (n.div_ceil(2)..=n).map(|i| (ln_c(i + k - 1, i) + ln_c(2 * n - i - k, n - i) - all).exp()).sum()
}

/// P(Binomial(n, 1/2) < k), summed in log space so that 2^n never overflows.
fn binomial_tail(n: usize, k: usize) -> f64 {
    let ln_2n = n as f64 * std::f64::consts::LN_2;
    let mut ln_c = 0.0f64; // ln C(n, 0)
    let mut sum = 0.0;
    for i in 0..k {
        sum += (ln_c - ln_2n).exp();
        ln_c += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::median;

    #[test]
    fn median_intervals_have_their_binomial_coverage() {
        assert!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0]).is_none(), "5 samples cannot reach 95%");
        let Interval { low: lo, high: hi, coverage: cov } =
            median_ci(&[6.0, 1.0, 5.0, 2.0, 4.0, 3.0]).unwrap();
        assert_eq!((lo, hi), (1.0, 6.0));
        assert!((cov - (1.0 - 2.0 / 64.0)).abs() < 1e-12);
        let xs: Vec<f64> = (1..=9).map(f64::from).collect();
        let Interval { low: lo, high: hi, coverage: cov } = median_ci(&xs).unwrap();
        assert_eq!((lo, hi), (2.0, 8.0), "n = 9 keeps k = 2");
        assert!((cov - (1.0 - 20.0 / 512.0)).abs() < 1e-12);
        assert!(median_ci_at(&xs[..7], 0.99).is_none(), "7 samples cannot reach 99%");
        let Interval { low: lo, high: hi, coverage: cov } = median_ci_at(&xs, 0.99).unwrap();
        assert_eq!((lo, hi), (1.0, 9.0), "n = 9 at 99% keeps k = 1");
        assert!(cov >= 0.99);
    }

    #[test]
    fn large_samples_keep_their_coverage() {
        // 2^2000 overflows an f64: the tail must still come out right.
        let xs: Vec<f64> = (0..2000).map(f64::from).collect();
        let Interval { low: lo, high: hi, coverage: cov } = median_ci(&xs).unwrap();
        assert!((0.95..0.96).contains(&cov), "{cov}");
        assert!(lo > 900.0 && hi < 1100.0, "[{lo}, {hi}]");
    }

    #[test]
    fn a_confidence_interval_covers_a_repeat_median_only_about_19_times_in_20() {
        // `RESULT_COVERAGE`'s reason: at an odd 19–27 rounds, the 99% confidence interval
        // of a median holds the median of a repeat sample 95–97% of the time.
        for n in (19..=27).step_by(2) {
            let xs: Vec<f64> = (1..=n).map(|i| i as f64).collect();
            let k = median_ci_at(&xs, 0.99).unwrap().low as usize;
            let cov = 1.0 - 2.0 * repeat_miss(n, k);
            assert!((0.945..0.975).contains(&cov), "{n} rounds: {cov}");
        }
    }

    #[test]
    fn repeat_intervals_have_their_stated_coverage() {
        // Values from the beta-binomial form of the same probability (computed apart).
        let cov = |n: usize, k: usize| 1.0 - 2.0 * repeat_miss(n, k);
        assert!((cov(9, 2) - 0.868_778).abs() < 1e-5, "{}", cov(9, 2));
        assert!((cov(27, 5) - 0.991_6).abs() < 1e-4, "{}", cov(27, 5));
        assert!((cov(18, 2) - 0.992_8).abs() < 1e-4, "{}", cov(18, 2));
        assert_eq!(repeat_samples_min(0.99), 13);
        let xs: Vec<f64> = (1..=27).map(f64::from).collect();
        let Interval { low: lo, high: hi, coverage: c } = repeat_interval_at(&xs, 0.99).unwrap();
        assert_eq!((lo, hi), (5.0, 23.0), "n = 27 at 99% keeps k = 5");
        assert!(c >= 0.99);
        assert!(repeat_interval_at(&xs[..12], 0.99).is_none(), "12 samples cannot reach 99%");
        // Wider than the confidence interval of the median at the same coverage.
        let Interval { low: clo, high: chi, .. } = median_ci_at(&xs, 0.99).unwrap();
        assert!(lo < clo && hi > chi);
    }

    #[test]
    fn a_repeat_median_falls_inside_as_often_as_stated() {
        // Two independent samples of 15 from a skewed distribution, many times: the second
        // one's median must fall inside the first one's interval at the stated rate (k = 4:
        // about 93%, where a wrong formula shows; 15 is odd, so the rate is exact).
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut draw = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            -u.ln()
        };
        let (n, k, trials) = (15, 4, 40_000);
        let mut inside = 0;
        for _ in 0..trials {
            let a = sorted(&(0..n).map(|_| draw()).collect::<Vec<_>>());
            let m = median(&(0..n).map(|_| draw()).collect::<Vec<_>>()).unwrap();
            inside += usize::from(a[k - 1] <= m && m <= a[n - k]);
        }
        let rate = inside as f64 / trials as f64;
        let stated = 1.0 - 2.0 * repeat_miss(n, k);
        assert!((rate - stated).abs() < 0.006, "seen {rate}, stated {stated}");
    }
}
