//! Statistics of measured runs, as JMH reports them (seed 004): min / mean / max, standard
//! deviation, and the 99.9% confidence interval of the mean from Student's t.

use serde::{Deserialize, Serialize};

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
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        let mean = v.iter().sum::<f64>() / n as f64;
        let stddev = if n > 1 {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let ci999_half =
            (n > 1).then(|| t_quantile(0.9995, (n - 1) as f64) * stddev / (n as f64).sqrt());
        Some(Summary { n, min: v[0], median, max: v[n - 1], mean, stddev, ci999_half })
    }

    /// The confidence interval `[mean − h, mean + h]`, when there is one.
    pub fn ci999(&self) -> Option<(f64, f64)> {
        self.ci999_half.map(|h| (self.mean - h, self.mean + h))
    }
}

/// ln Γ(x), Lanczos approximation (g = 7, n = 9), accurate to ~1e-15 for x > 0.
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Continued fraction of the regularised incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    let tiny = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..400 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = 1.0 + aa / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + aa * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = 1.0 + aa / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// Regularised incomplete beta I_x(a, b).
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_cf(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_cf(b, a, 1.0 - x) / b
    }
}

/// CDF of Student's t with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, x);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The `p` quantile of Student's t with `df` degrees of freedom (p in (0.5, 1)), by
/// bisection on the CDF.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while t_cdf(hi, df) < p {
        hi *= 2.0;
        if hi > 1e7 {
            break;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
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
}
