//! Rows paired within rounds: a row's score summarised over its forks, every row against
//! its group's baseline as a ratio per round, summarised by its median and repeat interval,
//! and the machine's phases told apart by the cross-core round trip probed around each fork.

use crate::results::{Disturbance, Fork, Ratio, Row, Status};

use std::collections::BTreeMap;

/// Reads one of the machine probes from a fork's disturbance record.
pub type Probe = fn(&Disturbance) -> Option<f64>;

/// The values `probe` recorded over `forks`; forks without one are left out.
pub fn probe_values<'a>(forks: impl IntoIterator<Item = &'a Fork>, probe: Probe) -> Vec<f64> {
    forks.into_iter().filter_map(|f| probe(&f.disturbance)).collect()
}

/// The coverage of rows' intervals (the confidence interval of a row's median over its
/// forks) and of ratios' (the repeat interval of a ratio's median over its rounds). A
/// ratio's interval says where the next run's ratio will fall, which is what a user who
/// runs the lab again checks; a 99% confidence interval of this run's median would miss
/// the next run's median about one time in twenty per ratio even on a steady machine (a
/// property of the order statistics, computed, not measured: 95–97% coverage at an odd
/// 19–27 rounds; `stats::interval`'s tests check it).
pub const RESULT_COVERAGE: f64 = 0.99;

/// The half-width an interval may have, relative to its median, before it is unstable.
pub const STABLE_HALF_WIDTH: f64 = 0.10;

/// A fork whose cross-core round trip (`cpu_ping_pong_ns` or `cpu_ping_pong_after_ns`,
/// probed just before and just after it) lies more than this factor from the paired rows'
/// usual one ([`usual_round_trips`], [`choose_usual`]) ran in another phase of the machine: a VM's host may
/// move its vCPUs apart for seconds at a time, the round trip then grows several-fold, and
/// the two rows slow by different factors, so that a ratio over rounds of both phases
/// would mix two ratios into one wide interval.
pub const PHASE_FACTOR: f64 = 3.0;

/// The paired rows' candidate usual cross-core round trips, in the order they are tried:
/// the 10th percentile of their forks' probes (before and after each), the machine as it
/// was provisioned, with its vCPUs close, whenever a tenth of the probes saw it, however
/// long the other phase lasted; then the median, the phase most probes saw. The first
/// wins where its rounds suffice for an interval ([`choose_usual`]): on a VM whose close
/// phase is the rare one (a few forks in a run), the 10th percentile alone would set most
/// rounds apart and leave no interval.
pub fn usual_round_trips<'a>(forks: impl IntoIterator<Item = &'a Fork>) -> Vec<f64> {
    let mut v: Vec<f64> =
        forks.into_iter().flat_map(|f| f.disturbance.round_trips()).flatten().collect();
    if v.is_empty() {
        return Vec::new();
    }
    v.sort_by(f64::total_cmp);
    let (fast, typical) = (v[(v.len() - 1) / 10], v[(v.len() - 1) / 2]);
    if typical > fast * PHASE_FACTOR {
        vec![fast, typical]
    } else {
        vec![fast]
    }
}

/// The usual round trip among `candidates` (in [`usual_round_trips`]' order): the first
/// under which `rounds` (the rounds usable with it) reaches `enough`, else the one with the
/// most; `None` without candidates (every fork then counts as in phase).
pub fn choose_usual(
    candidates: &[f64],
    enough: usize,
    rounds: impl Fn(f64) -> usize,
) -> Option<f64> {
    let mut best: Option<(f64, usize)> = None;
    for &u in candidates {
        let n = rounds(u);
        if n >= enough {
            return Some(u);
        }
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((u, n));
        }
    }
    best.map(|(u, _)| u)
}

/// One row of a run as the make-up of rounds sees it: its group, label and forks.
pub type RowForks<'a> = (&'a str, &'a str, &'a [Fork]);

/// The ratios the results will carry whose rounds fall short of `target` usable rounds
/// ([`usable_rounds`]): every row of a group against the group's `baseline`, and each of
/// `pairs` (row label, baseline label) within every group that has both; as indices into
/// `rows`, (row, baseline).
pub fn short_pairs(
    rows: &[RowForks<'_>],
    baseline: Option<&str>,
    pairs: &[(String, String)],
    target: usize,
) -> Vec<(usize, usize)> {
    let find = |group: &str, label: &str| rows.iter().position(|r| r.0 == group && r.1 == label);
    let mut wanted: Vec<(usize, usize)> = Vec::new();
    for (b, base) in rows.iter().enumerate() {
        if Some(base.1) == baseline {
            wanted
                .extend((0..rows.len()).filter(|&i| i != b && rows[i].0 == base.0).map(|i| (i, b)));
        }
    }
    let groups: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.0).collect();
    for g in groups {
        for (row, base) in pairs {
            if let (Some(i), Some(b)) = (find(g, row), find(g, base)) {
                if !wanted.contains(&(i, b)) {
                    wanted.push((i, b));
                }
            }
        }
    }
    wanted.retain(|&(i, b)| usable_rounds(rows[i].2, rows[b].2) < target);
    wanted
}

/// The rounds a ratio of `row` over `base` can use, as [`paired_ratios`] counts them: both
/// had an OK fork with a score, and both forks ran in the pair's usual phase.
pub fn usable_rounds(row: &[Fork], base: &[Fork]) -> usize {
    let usual = pair_usual(row, base);
    paired_scores(row, base, usual).iter().filter(|p| p.2).count()
}

/// Per round that both `row` and `base` had an OK fork with a positive score: the two
/// scores and whether both forks ran in the phase of `usual` ([`in_phase`]).
fn paired_scores(row: &[Fork], base: &[Fork], usual: Option<f64>) -> Vec<(f64, f64, bool)> {
    let by_round = |forks: &[Fork]| -> BTreeMap<usize, (f64, bool)> {
        forks
            .iter()
            .filter(|f| f.status == Status::Ok)
            .filter_map(|f| {
                f.score.filter(|s| *s > 0.0).map(|s| (f.round, (s, in_phase(f, usual))))
            })
            .collect()
    };
    let (a, b) = (by_round(row), by_round(base));
    a.iter()
        .filter_map(|(round, &(x, x_usual))| {
            b.get(round).map(|&(y, y_usual)| (x, y, x_usual && y_usual))
        })
        .collect()
}

/// The usual cross-core round trip of a pair of rows ([`usual_round_trips`],
/// [`choose_usual`]); `None` when they share too few rounds for an interval, where a few
/// forks' probes are too few to say what the usual round trip is, and every fork counts.
fn pair_usual(row: &[Fork], base: &[Fork]) -> Option<f64> {
    let enough = crate::stats::repeat_samples_min(RESULT_COVERAGE);
    let paired = row.iter().filter(|f| base.iter().any(|g| g.round == f.round)).count();
    if paired < enough {
        return None;
    }
    let candidates = usual_round_trips(row.iter().chain(base));
    choose_usual(&candidates, enough, |u| {
        paired_scores(row, base, Some(u)).iter().filter(|p| p.2).count()
    })
}

/// The row's score's interval and modes, from its forks.
pub fn summarise_forks(row: &mut Row) {
    let scores = row.fork_scores();
    row.score = crate::stats::median(&scores);
    if let Some(ci) = crate::stats::median_ci_at(&scores, RESULT_COVERAGE) {
        row.score_ci = Some([ci.low, ci.high]);
        row.score_ci_coverage = Some(ci.coverage);
    }
    row.modes = crate::stats::modes(&scores);
}

/// Every row against the row labelled `baseline` in its group, paired by round.
pub fn paired_ratios(rows: &[Row], baseline: &str) -> Vec<Ratio> {
    let mut out = Vec::new();
    for base in rows.iter().filter(|r| r.label == baseline) {
        for row in rows.iter().filter(|r| r.group == base.group && r.label != baseline) {
            out.push(ratio(row, base));
        }
    }
    out
}

/// The row labelled `label` against the row labelled `baseline`, in every group with both.
pub fn pair_ratios(rows: &[Row], label: &str, baseline: &str) -> Vec<Ratio> {
    let mut out = Vec::new();
    for base in rows.iter().filter(|r| r.label == baseline) {
        for row in rows.iter().filter(|r| r.group == base.group && r.label == label) {
            out.push(ratio(row, base));
        }
    }
    out
}

/// Whether a fork ran in the machine's usual phase: both its cross-core round trips within
/// [`PHASE_FACTOR`] of `usual` (an unknown one passes).
pub fn in_phase(f: &Fork, usual: Option<f64>) -> bool {
    f.disturbance.round_trips().into_iter().all(|x| match (x, usual) {
        (Some(x), Some(u)) if u > 0.0 => x <= u * PHASE_FACTOR && x >= u / PHASE_FACTOR,
        _ => true,
    })
}

/// Per round that both maps (round → value) have, how far `values` lies from `base` in
/// percent, (value / base − 1) × 100, in round order; a round only one of them has is left
/// out.
pub fn change_pct_by_round(values: &BTreeMap<usize, f64>, base: &BTreeMap<usize, f64>) -> Vec<f64> {
    values.iter().filter_map(|(round, v)| Some((v / base.get(round)? - 1.0) * 100.0)).collect()
}

fn ratio(row: &Row, base: &Row) -> Ratio {
    let usual = pair_usual(&row.forks, &base.forks);
    let (mut per_round, mut off) = (Vec::new(), Vec::new());
    for (x, y, usual) in paired_scores(&row.forks, &base.forks, usual) {
        let factor = if row.higher_is_better { x / y } else { y / x };
        if usual { &mut per_round } else { &mut off }.push(factor);
    }
    let median = crate::stats::median(&per_round);
    let ci = crate::stats::repeat_interval_at(&per_round, RESULT_COVERAGE);
    let half = match (median, ci) {
        (Some(m), Some(ci)) => Some(ci.half_width_rel(m)),
        _ => None,
    };
    let unstable = half.is_none_or(|h| h > STABLE_HALF_WIDTH);
    Ratio {
        variant: row.label.clone(),
        baseline: base.label.clone(),
        group: row.group.clone(),
        row_role: row.role,
        baseline_role: base.role,
        median,
        ci_low: ci.map(|c| c.low),
        ci_high: ci.map(|c| c.high),
        coverage: ci.map(|c| c.coverage),
        rounds: per_round.len(),
        unstable,
        rounds_needed: match half {
            Some(h) if h > STABLE_HALF_WIDTH => {
                Some(crate::stats::samples_needed(per_round.len(), h, STABLE_HALF_WIDTH))
            }
            None => {
                Some(crate::stats::repeat_samples_min(RESULT_COVERAGE).max(per_round.len() + 1))
            }
            _ => None,
        },
        off_phase_rounds: off.len(),
        off_phase_median: crate::stats::median(&off),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    fn row(label: &str, scores: &[f64]) -> Row {
        Row {
            label: label.into(),
            key: BTreeMap::new(),
            group: "P=1".into(),
            role: Default::default(),
            beside: None,
            status: Status::Ok,
            valid: true,
            unit: "ms".into(),
            higher_is_better: false,
            score: None,
            score_ci: None,
            score_ci_coverage: None,
            modes: None,
            forks: scores
                .iter()
                .enumerate()
                .map(|(round, s)| Fork {
                    round,
                    slot: 0,
                    score: Some(*s),
                    runs: vec![*s],
                    status: Status::Ok,
                    error: None,
                    wall_s: 0.0,
                    disturbance: Disturbance::default(),
                })
                .collect(),
            error: None,
            stderr_tail: None,
            detail: Map::new(),
        }
    }

    #[test]
    fn changes_pair_values_by_round_and_skip_rounds_without_both() {
        let values: BTreeMap<usize, f64> = [(0, 110.0), (2, 99.0), (3, 50.0)].into();
        let base: BTreeMap<usize, f64> = [(0, 100.0), (1, 100.0), (3, 100.0)].into();
        let got = change_pct_by_round(&values, &base);
        assert_eq!(got.len(), 2, "rounds 0 and 3: {got:?}");
        assert!((got[0] - 10.0).abs() < 1e-9 && (got[1] + 50.0).abs() < 1e-9, "{got:?}");
        assert!(change_pct_by_round(&values, &BTreeMap::new()).is_empty());
    }

    #[test]
    fn ratios_pair_rounds_and_follow_the_phase() {
        // The machine is twice as slow in odd rounds: per-round ratios stay at 4.
        let base: Vec<f64> = (0..13).map(|i| if i % 2 == 1 { 200.0 } else { 100.0 }).collect();
        let fast: Vec<f64> = base.iter().map(|x| x / 4.0).collect();
        let rows = vec![row("locked", &base), row("ring", &fast)];
        let r = paired_ratios(&rows, "locked");
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].median, r[0].ci_low, r[0].ci_high), (Some(4.0), Some(4.0), Some(4.0)));
        assert!(!r[0].unstable && r[0].rounds == 13);
    }

    #[test]
    fn rounds_of_another_machine_phase_are_set_apart() {
        // 17 rounds: the pair's forks probe a 50 ns round trip and the ring wins 4×; in
        // three rounds one or both forks probe 380 ns and the factor is 6 or 9.
        let base = vec![100.0; 17];
        let mut fast = [25.0; 17];
        let (mut lr, mut rr) = (row("locked", &base), row("ring", &[]));
        rr.forks = lr.forks.clone();
        for (i, f) in rr.forks.iter_mut().enumerate() {
            f.score = Some(fast[i]);
        }
        let probe = |f: &mut Fork, ns: f64| f.disturbance.cpu_ping_pong_ns = Some(ns);
        lr.forks.iter_mut().for_each(|f| probe(f, 50.0));
        rr.forks.iter_mut().for_each(|f| probe(f, 55.0));
        for (i, factor, both) in [(3, 6.0, true), (7, 9.0, false), (11, 9.0, true)] {
            fast[i] = 100.0 / factor;
            rr.forks[i].score = Some(fast[i]);
            probe(&mut rr.forks[i], 380.0);
            if both {
                probe(&mut lr.forks[i], 390.0);
            }
        }
        let r = &paired_ratios(&[lr.clone(), rr.clone()], "locked")[0];
        assert_eq!(
            (r.median, r.ci_low, r.ci_high, r.rounds),
            (Some(4.0), Some(4.0), Some(4.0), 14)
        );
        assert_eq!((r.off_phase_rounds, r.off_phase_median), (3, Some(9.0)));
        assert!(r.text().ends_with("; 3 off-phase rounds apart: 9.00×"), "{}", r.text());
        // A phase that begins during a fork shows in the probe after it.
        rr.forks[5].score = Some(100.0 / 9.0);
        rr.forks[5].disturbance.cpu_ping_pong_after_ns = Some(400.0);
        let r = &paired_ratios(&[lr.clone(), rr.clone()], "locked")[0];
        assert_eq!((r.median, r.rounds, r.off_phase_rounds), (Some(4.0), 13, 4));
        // The usual phase is the fast one even when the slow one lasted most of the run...
        let mut slow = rr.clone();
        slow.forks.iter_mut().skip(4).for_each(|f| probe(f, 370.0));
        assert_eq!(usual_round_trips(slow.forks.iter().chain(&lr.forks)), [50.0]);
        let candidates = usual_round_trips(&slow.forks);
        assert_eq!(candidates, [55.0, 370.0]);
        assert_eq!(choose_usual(&candidates, 13, |_| 13), Some(55.0));
        // ... as long as its rounds give an interval; else the phase with the most rounds.
        assert_eq!(choose_usual(&candidates, 13, |u| if u < 100.0 { 4 } else { 13 }), Some(370.0));
        assert_eq!(choose_usual(&candidates, 13, |u| if u < 100.0 { 4 } else { 3 }), Some(55.0));
        assert_eq!(choose_usual(&[], 13, |_| 0), None);
        // Below 13 paired rounds nothing is set apart.
        let few = |r: &Row| Row { forks: r.forks[..12].to_vec(), ..r.clone() };
        let r = &paired_ratios(&[few(&lr), few(&rr)], "locked")[0];
        assert_eq!((r.rounds, r.off_phase_rounds), (12, 0));
        // Without probes every round counts.
        for f in lr.forks.iter_mut().chain(rr.forks.iter_mut()) {
            f.disturbance.cpu_ping_pong_ns = None;
        }
        let r = &paired_ratios(&[lr, rr], "locked")[0];
        assert_eq!((r.rounds, r.off_phase_rounds), (17, 0));
    }

    #[test]
    fn a_rare_close_phase_is_set_apart_rather_than_the_usual_one() {
        // Most forks' round trips are about 125 ns; two rounds ran with the vCPUs close
        // (38 ns), a tenth of the probes: the 10th percentile alone would call the 125 ns
        // forks off-phase and leave two rounds.
        let mut a = row("locked", &[100.0; 17]);
        let mut b = row("ring", &[25.0; 17]);
        for (i, f) in a.forks.iter_mut().chain(b.forks.iter_mut()).enumerate() {
            f.disturbance.cpu_ping_pong_ns = Some(110.0 + (i % 5) as f64 * 10.0);
        }
        for i in [2, 6] {
            b.forks[i].disturbance.cpu_ping_pong_ns = Some(38.0);
            b.forks[i].disturbance.cpu_ping_pong_after_ns = Some(38.0);
            a.forks[i].disturbance.cpu_ping_pong_after_ns = Some(39.0);
        }
        let r = &paired_ratios(&[a.clone(), b.clone()], "locked")[0];
        assert_eq!((r.rounds, r.off_phase_rounds), (15, 2));
        let rows: [RowForks<'_>; 2] = [("P=1", "locked", &a.forks), ("P=1", "ring", &b.forks)];
        assert!(short_pairs(&rows, Some("locked"), &[], 15).is_empty());
        assert_eq!(short_pairs(&rows, Some("locked"), &[], 16), [(1, 0)]);
    }

    #[test]
    fn a_pair_is_short_of_usual_rounds_when_its_forks_mix_phases() {
        let mut a = row("locked", &[100.0; 14]);
        let mut b = row("ring", &[25.0; 14]);
        let mut own = row("ring/own-loop", &[20.0; 14]);
        for f in a.forks.iter_mut().chain(b.forks.iter_mut()).chain(own.forks.iter_mut()) {
            f.disturbance.cpu_ping_pong_ns = Some(50.0);
        }
        let pairs = [("ring".to_string(), "ring/own-loop".to_string())];
        let check = |a: &Row, b: &Row, own: &Row, target| {
            let rows: [RowForks<'_>; 4] = [
                ("P=1", "locked", &a.forks),
                ("P=1", "ring", &b.forks),
                ("P=1", "ring/own-loop", &own.forks),
                ("P=2", "ring", &b.forks),
            ];
            short_pairs(&rows, Some("locked"), &pairs, target)
        };
        // Every ratio the results carry: each row of P=1 against its baseline, and the
        // ring against its own loop; P=2 has no baseline and no own loop.
        assert_eq!(check(&a, &b, &own, 15), [(1, 0), (2, 0), (1, 2)]);
        assert!(check(&a, &b, &own, 14).is_empty());
        // One fork after which the round trip was slow: 13 usable rounds in the ring's
        // pairs, 14 still in the own loop's against the baseline.
        b.forks[2].disturbance.cpu_ping_pong_after_ns = Some(400.0);
        assert_eq!(check(&a, &b, &own, 14), [(1, 0), (1, 2)]);
        assert!(check(&a, &b, &own, 13).is_empty());
        // A failed fork leaves its round unusable too.
        a.forks[6].status = Status::Crashed;
        assert_eq!(check(&a, &b, &own, 13), [(1, 0)]);
        assert_eq!(check(&a, &b, &own, 14), [(1, 0), (2, 0), (1, 2)]);
        assert!(check(&a, &b, &own, 12).is_empty());
    }

    #[test]
    fn too_few_rounds_print_a_dash_interval_and_are_unstable() {
        let rows = vec![row("locked", &[100.0, 110.0]), row("ring", &[10.0, 12.0])];
        let r = &paired_ratios(&rows, "locked")[0];
        assert!(r.ci_low.is_none() && r.unstable);
        assert!(r.text().contains("[–]"), "{}", r.text());
        assert_eq!(r.rounds_needed, Some(crate::stats::repeat_samples_min(RESULT_COVERAGE)));
        // 12 rounds still fall short of a 99% repeat interval: it takes 13.
        let twelve = [100.0; 12];
        let r = &paired_ratios(&[row("locked", &twelve), row("ring", &[10.0; 12])], "locked")[0];
        assert!(r.ci_low.is_none() && r.rounds_needed == Some(13), "{r:?}");
    }

    #[test]
    fn wide_intervals_say_how_many_rounds_would_narrow_them() {
        let base = [100.0; 15];
        let fast = [
            10.0, 14.0, 20.0, 25.0, 20.0, 33.0, 50.0, 20.0, 20.0, 18.0, 22.0, 30.0, 16.0, 21.0,
            19.0,
        ];
        let r = &paired_ratios(&[row("locked", &base), row("ring", &fast)], "locked")[0];
        assert!(r.unstable && r.ci_low.is_some());
        assert!(r.rounds_needed.unwrap() > 15, "{r:?}");
    }
}
