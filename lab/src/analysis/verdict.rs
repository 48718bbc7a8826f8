//! The verdict: the lines a reader sees first, each computed from the run's figures (no
//! number in them is typed here). Most experiments' verdict is one line per comparison
//! (a row against its baseline over the groups, from `ratios[]` and their repeat
//! intervals), and a line on their targets; experiments without ratios write their own.

use crate::results::{Ratio, Target};

/// A ratio as the verdict and the terminal print it: 1 decimal from 3 up (`17.6×`), else
/// 2 (`0.98×`).
pub fn num(x: f64) -> String {
    if x.abs() >= 3.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// `5.0× [4.6, 5.4]` (the interval's ends to the median's decimals), or `5.0× (no
/// interval)`; `–` without a median.
pub fn ratio_text(q: &Ratio) -> String {
    let Some(m) = q.median else { return "–".into() };
    let d = if m.abs() >= 3.0 { 1 } else { 2 };
    match (q.ci_low, q.ci_high) {
        (Some(lo), Some(hi)) => format!("{}× [{lo:.d$}, {hi:.d$}]", num(m)),
        _ => format!("{}× (no interval)", num(m)),
    }
}

/// Where a ratio stands against 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// Its interval lies above 1: the row is better.
    Wins,
    /// Below 1: the baseline is better.
    Loses,
    /// It holds 1.
    Same,
    /// No interval (too few rounds).
    Open,
}

fn standing(q: &Ratio) -> Option<Standing> {
    q.median?;
    Some(match (q.ci_low, q.ci_high) {
        (Some(lo), Some(_)) if lo > 1.0 => Standing::Wins,
        (Some(_), Some(hi)) if hi < 1.0 => Standing::Loses,
        (Some(_), Some(_)) => Standing::Same,
        _ => Standing::Open,
    })
}

/// One comparison's verdict line, with the pair it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The row's label.
    pub variant: String,
    /// The baseline's label.
    pub baseline: String,
    /// The line.
    pub line: String,
}

/// `P` when every group is `P=…`, `size` when every one is `size=…`, else `group`.
fn dimension(qs: &[&Ratio]) -> String {
    let first = qs.first().and_then(|q| q.group.split_once('=')).map(|(d, _)| d.to_string());
    match first {
        Some(d) if qs.iter().all(|q| q.group.split_once('=').map(|x| x.0) == Some(&d)) => d,
        _ => "group".into(),
    }
}

/// `5.0× [4.6, 5.4] (P=6) to 17.6× [16.9, 18.3] (P=1)`: the lowest and highest of `qs`
/// (one: just it).
fn span(qs: &[&Ratio]) -> String {
    let mut v: Vec<&Ratio> = qs.to_vec();
    v.sort_by(|a, b| a.median.unwrap_or(0.0).total_cmp(&b.median.unwrap_or(0.0)));
    let one = |q: &Ratio| format!("{} ({})", ratio_text(q), q.group);
    match (v.first(), v.last()) {
        (Some(a), Some(b)) if v.len() > 1 => format!("{} to {}", one(a), one(b)),
        (Some(a), _) => one(a),
        _ => String::new(),
    }
}

/// The line of one pair over its groups (`qs`: the pair's ratios, in group order).
pub fn comparison_line(qs: &[&Ratio]) -> Option<String> {
    let first = qs.first()?;
    let (v, b) = (&first.variant, &first.baseline);
    let measured: Vec<(&Ratio, Standing)> =
        qs.iter().filter_map(|q| Some((*q, standing(q)?))).collect();
    if measured.is_empty() {
        return Some(format!("{v} against {b}: no ratio (no round with both rows valid)"));
    }
    let of = |s: Standing| -> Vec<&Ratio> {
        measured.iter().filter(|(_, k)| *k == s).map(|(q, _)| *q).collect()
    };
    let every = measured.len() == qs.len() && qs.len() > 1;
    let dim = dimension(qs);
    let mut line = match (of(Standing::Wins).len(), of(Standing::Loses).len()) {
        (n, 0) if n == measured.len() && every => {
            format!("{v} beats {b} at every {dim}: {}", span(&of(Standing::Wins)))
        }
        (0, n) if n == measured.len() && every => {
            format!("{v} loses to {b} at every {dim}: {}", span(&of(Standing::Loses)))
        }
        _ => {
            let mut parts = Vec::new();
            let wins = of(Standing::Wins);
            if !wins.is_empty() {
                parts.push(format!("beats it {}", span(&wins)));
            }
            let loses = of(Standing::Loses);
            if !loses.is_empty() {
                parts.push(format!("loses {}", span(&loses)));
            }
            for q in of(Standing::Same) {
                parts.push(format!("no difference at {}: {}", q.group, ratio_text(q)));
            }
            let open = of(Standing::Open);
            let at = |q: &Ratio| format!("{}× ({})", q.median.map_or("–".into(), num), q.group);
            let mut by = open.clone();
            by.sort_by(|a, b| a.median.unwrap_or(0.0).total_cmp(&b.median.unwrap_or(0.0)));
            match (by.first(), by.last()) {
                (Some(a), Some(b)) if by.len() > 1 => parts.push(format!(
                    "no interval at {} {dim}s (too few rounds): {} to {}",
                    by.len(),
                    at(a),
                    at(b)
                )),
                (Some(q), _) => {
                    let m = q.median.map_or("–".into(), num);
                    parts.push(format!("at {}: {m}× (no interval: too few rounds)", q.group));
                }
                _ => {}
            }
            format!("{v} against {b}: {}", parts.join("; "))
        }
    };
    let apart: usize = qs.iter().map(|q| q.off_phase_rounds).sum();
    if apart > 0 {
        line += &format!(" ({apart} off-phase rounds set apart)");
    }
    Some(line)
}

/// One line per pair (variant, baseline) among `ratios` that `keep` keeps, in the order
/// the pairs first appear.
pub fn comparisons(ratios: &[Ratio], keep: impl Fn(&Ratio) -> bool) -> Vec<Comparison> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for q in ratios.iter().filter(|q| keep(q)) {
        if !pairs.contains(&(q.variant.as_str(), q.baseline.as_str())) {
            pairs.push((&q.variant, &q.baseline));
        }
    }
    pairs
        .into_iter()
        .filter_map(|(v, b)| {
            let qs: Vec<&Ratio> =
                ratios.iter().filter(|q| keep(q) && q.variant == v && q.baseline == b).collect();
            Some(Comparison {
                variant: v.to_string(),
                baseline: b.to_string(),
                line: comparison_line(&qs)?,
            })
        })
        .collect()
}

/// The lines of every pair of `ratios`.
pub fn ratio_lines(ratios: &[Ratio]) -> Vec<String> {
    comparisons(ratios, |_| true).into_iter().map(|c| c.line).collect()
}

/// One line on the targets: `targets: 3 of 4 met; NOT met: what (measured, target t)`.
pub fn target_line(targets: &[Target]) -> Option<String> {
    if targets.is_empty() {
        return None;
    }
    let met = targets.iter().filter(|t| t.met == Some(true)).count();
    let mut line = format!("targets: {met} of {} met", targets.len());
    for (word, which) in [("NOT met", Some(false)), ("undecided", None)] {
        let these: Vec<String> = targets
            .iter()
            .filter(|t| t.met == which)
            .map(|t| format!("{} (measured {}, target {})", t.what, t.measured, t.target))
            .collect();
        if !these.is_empty() {
            line += &format!("; {word}: {}", these.join("; "));
        }
    }
    Some(line)
}

/// The usual verdict: a line per comparison, then the targets' line.
pub fn usual(ratios: &[Ratio], targets: &[Target]) -> Vec<String> {
    let mut v = ratio_lines(ratios);
    v.extend(target_line(targets));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(p: u64, m: f64, ci: Option<(f64, f64)>) -> Ratio {
        let group = format!("P={p}");
        let q = crate::results::fixture::ratio("ring", "locked", &group, m, ci.map(|c| [c.0, c.1]));
        Ratio { coverage: ci.map(|_| 0.99), rounds: 27, ..q }
    }

    #[test]
    fn every_p_wins_gives_the_range() {
        let rs = [
            q(1, 17.6, Some((16.9, 18.3))),
            q(2, 9.0, Some((8.5, 9.4))),
            q(6, 5.0, Some((4.6, 5.4))),
        ];
        assert_eq!(
            ratio_lines(&rs),
            ["ring beats locked at every P: 5.0× [4.6, 5.4] (P=6) to 17.6× [16.9, 18.3] (P=1)"]
        );
    }

    #[test]
    fn an_interval_straddling_one_says_no_difference() {
        let rs = [q(1, 2.0, Some((1.8, 2.2))), q(3, 0.98, Some((0.91, 1.07)))];
        let l = &ratio_lines(&rs)[0];
        assert!(l.starts_with("ring against locked: beats it 2.00× [1.80, 2.20] (P=1)"), "{l}");
        assert!(l.contains("no difference at P=3: 0.98× [0.91, 1.07]"), "{l}");
    }

    #[test]
    fn a_ratio_without_interval_says_so() {
        let rs = [q(1, 3.2, None)];
        let l = &ratio_lines(&rs)[0];
        assert_eq!(l, "ring against locked: at P=1: 3.2× (no interval: too few rounds)");
        let mut apart = q(1, 0.5, Some((0.4, 0.6)));
        apart.off_phase_rounds = 3;
        let l = &ratio_lines(&[apart])[0];
        assert_eq!(
            l,
            "ring against locked: loses 0.50× [0.40, 0.60] (P=1) (3 off-phase rounds set apart)"
        );
    }

    #[test]
    fn ratios_without_intervals_are_summed_up() {
        let rs = [q(1, 14.7, None), q(2, 2.94, None), q(6, 1.99, None)];
        assert_eq!(
            ratio_lines(&rs),
            ["ring against locked: no interval at 3 Ps (too few rounds): 1.99× (P=6) to 14.7× (P=1)"]
        );
    }

    #[test]
    fn targets_are_counted() {
        let t = |met| Target { what: "w".into(), target: "< 1".into(), measured: "2".into(), met };
        assert_eq!(target_line(&[t(Some(true))]).unwrap(), "targets: 1 of 1 met");
        assert_eq!(
            target_line(&[t(Some(true)), t(Some(false))]).unwrap(),
            "targets: 1 of 2 met; NOT met: w (measured 2, target < 1)"
        );
    }
}
