//! The one `results.json` schema, shared by every experiment (documented in
//! `docs/results-schema.md`; bump [`SCHEMA_VERSION`] on any incompatible change).
//!
//! A run is a list of rows, one per cell of the experiment's matrix. Every row has the same
//! envelope — what it is (`label`, `key`, `group`), its outcome (`status`, `valid`), its
//! score in its `unit` with an interval, every fork with what disturbed it — and the
//! experiment's own fields beside them (`detail`, flattened into the row). `ratios[]` holds
//! every row against the experiment's baseline row of the same group, paired within rounds.
//! Invalid runs are shown (and counted) but never enter a statistic.

use crate::envinfo::Environment;
use crate::stats::{self, Mode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The version of this schema. Files without the field predate it.
pub const SCHEMA_VERSION: u32 = 2;

/// A cell's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Every run passed its checks.
    Ok,
    /// At least one run failed its checks; it is left out of the statistics.
    Invalid,
    /// A child made no progress within the watchdog's limit and was killed.
    Hung,
    /// A child died (signal or panic) without a result.
    Crashed,
    /// A child reported an error (e.g. the variant refused the settings).
    Error,
    /// The run was interrupted before this cell ran.
    NotRun,
}

impl Status {
    /// The word the tables print.
    pub fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Invalid => "INVALID",
            Status::Hung => "HUNG",
            Status::Crashed => "CRASHED",
            Status::Error => "ERROR",
            Status::NotRun => "not run",
        }
    }

    /// The worse of two.
    pub fn worst(self, other: Status) -> Status {
        let rank = |s: Status| match s {
            Status::Ok => 0,
            Status::NotRun => 1,
            Status::Invalid => 2,
            Status::Error => 3,
            Status::Hung => 4,
            Status::Crashed => 5,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}

/// What disturbed a fork, read from /proc around it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Disturbance {
    /// Steal time during the fork, % of all CPU time (the hypervisor ran someone else).
    pub steal_pct: Option<f64>,
    /// 1-minute load average at the fork's end.
    pub load_avg: Option<f64>,
    /// The cell runs more threads than the machine has cores.
    pub oversubscribed: bool,
    /// The machine's speed just before the fork: ns per dependent multiply-add, averaged
    /// over the allowed CPUs (`runner::speed`); absent in results written before it.
    #[serde(default)]
    pub cpu_ns_per_op: Option<f64>,
    /// Just before the fork: ns per round trip of a cache line between the first two
    /// allowed CPUs (`runner::speed::ping_pong`); absent in results written before it.
    #[serde(default)]
    pub cpu_ping_pong_ns: Option<f64>,
    /// The same round trip probed just after the fork, which shows a phase of the machine
    /// that began during it; absent in results written before it.
    #[serde(default)]
    pub cpu_ping_pong_after_ns: Option<f64>,
}

impl Disturbance {
    /// The cross-core round trips probed before and after the fork.
    pub fn round_trips(&self) -> [Option<f64>; 2] {
        [self.cpu_ping_pong_ns, self.cpu_ping_pong_after_ns]
    }
}

/// Reads one of the machine probes from a fork's disturbance record.
pub type Probe = fn(&Disturbance) -> Option<f64>;

/// The values `probe` recorded over `forks`; forks without one are left out.
pub fn probe_values<'a>(forks: impl IntoIterator<Item = &'a Fork>, probe: Probe) -> Vec<f64> {
    forks.into_iter().filter_map(|f| probe(&f.disturbance)).collect()
}

/// One fork: a fresh child process that ran the cell's warm-up and measured runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fork {
    /// The round it ran in (from 0).
    pub round: usize,
    /// Its position within the round (from 0).
    pub slot: usize,
    /// The median of its valid measured runs, in the row's unit.
    pub score: Option<f64>,
    /// Every measured run, in the row's unit (valid or not).
    pub runs: Vec<f64>,
    /// Outcome of the fork.
    pub status: Status,
    /// What went wrong, when not ok.
    pub error: Option<String>,
    /// Wall time of the child, s.
    pub wall_s: f64,
    /// What disturbed it.
    pub disturbance: Disturbance,
}

/// One row: a cell of the matrix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// The name the tables print (`ring`, `ring[busy-spin]`, `pooled`).
    pub label: String,
    /// What the row is: the cell's coordinates (`variant`, `producers`, `size`, …).
    pub key: BTreeMap<String, Value>,
    /// Rows of the same group are compared with each other (`P=2`, `size=1024`).
    pub group: String,
    /// Outcome.
    pub status: Status,
    /// True when every run of every fork passed its checks.
    pub valid: bool,
    /// The unit of `score` and of the forks' runs (`ms`, `ns/op`, `ops/ms`).
    pub unit: String,
    /// Whether a higher score is better (throughput) or a lower one (time).
    pub higher_is_better: bool,
    /// The median over the forks' scores.
    pub score: Option<f64>,
    /// The interval of that median over forks (order statistics), when there are enough.
    pub score_ci: Option<[f64; 2]>,
    /// The interval's coverage.
    pub score_ci_coverage: Option<f64>,
    /// Two modes, when the forks' scores split into two clusters (then `score` is not a
    /// summary to trust: read the modes).
    pub modes: Option<[Mode; 2]>,
    /// Every fork.
    pub forks: Vec<Fork>,
    /// What went wrong, for rows that are not ok.
    pub error: Option<String>,
    /// The last lines of a failed child's stderr.
    pub stderr_tail: Option<String>,
    /// The experiment's own fields.
    #[serde(flatten)]
    pub detail: Map<String, Value>,
}

impl Row {
    /// A key field.
    pub fn key_u64(&self, k: &str) -> Option<u64> {
        self.key.get(k).and_then(Value::as_u64)
    }

    /// A detail field, deserialised.
    pub fn detail<T: serde::de::DeserializeOwned>(&self, k: &str) -> Option<T> {
        self.detail.get(k).and_then(|v| serde_json::from_value(v.clone()).ok())
    }

    /// The valid forks' scores.
    pub fn fork_scores(&self) -> Vec<f64> {
        self.forks.iter().filter(|f| f.status == Status::Ok).filter_map(|f| f.score).collect()
    }
}

/// A row against its group's baseline, paired within rounds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ratio {
    /// The row's label.
    pub variant: String,
    /// The baseline's label.
    pub baseline: String,
    /// The group both rows belong to.
    pub group: String,
    /// Producers, where the key has them.
    pub producers: Option<u64>,
    /// Median over rounds of (row better-than baseline) factor: > 1 means the row wins.
    pub median: Option<f64>,
    /// Low end of the repeat interval: where a repeat run's median of as many rounds falls
    /// with probability `coverage` (order statistics over rounds, [`stats::repeat_interval_at`]).
    pub ci_low: Option<f64>,
    /// High end of the repeat interval.
    pub ci_high: Option<f64>,
    /// The repeat interval's coverage (a lower bound, exact for an odd number of rounds).
    pub coverage: Option<f64>,
    /// Rounds in which both rows had a valid fork.
    pub rounds: usize,
    /// The interval is wider than ±10% of the median (or there is none).
    pub unstable: bool,
    /// Rounds that would bring it to ±10% (assuming it narrows as 1/√rounds), or that
    /// give it an interval at all.
    pub rounds_needed: Option<usize>,
    /// Rounds set apart because a fork of the pair ran in another phase of the machine
    /// ([`PHASE_FACTOR`]); `median`, the interval and `rounds` leave them out.
    #[serde(default)]
    pub off_phase_rounds: usize,
    /// The median of those rounds' factors.
    #[serde(default)]
    pub off_phase_median: Option<f64>,
}

/// The coverage of rows' intervals (the confidence interval of a row's median over its
/// forks) and of ratios' (the repeat interval of a ratio's median over its rounds). A
/// ratio's interval says where the next run's ratio will fall, which is what a user who
/// runs the lab again checks; a 99% confidence interval of this run's median would miss
/// the next run's median about one time in twenty per ratio (95–96% coverage at 19–27
/// rounds) even on a steady machine.
pub const RESULT_COVERAGE: f64 = 0.99;

/// The half-width an interval may have, relative to its median, before it is unstable.
pub const STABLE_HALF_WIDTH: f64 = 0.10;

/// A fork whose cross-core round trip (`cpu_ping_pong_ns` or `cpu_ping_pong_after_ns`,
/// probed just before and just after it) lies more than this factor from the paired rows'
/// usual one ([`usual_round_trip`]) ran in another phase of the machine: a VM's host may
/// move its vCPUs apart for seconds at a time, the round trip then grows several-fold, and
/// the two rows slow by different factors, so that a ratio over rounds of both phases
/// would mix two ratios into one wide interval.
pub const PHASE_FACTOR: f64 = 3.0;

/// The paired rows' usual cross-core round trip: the 10th percentile of their forks'
/// probes (before and after each), so the machine as it was provisioned, with its vCPUs
/// close, whenever a tenth of the probes saw it, however long the other phase lasted.
pub fn usual_round_trip<'a>(forks: impl IntoIterator<Item = &'a Fork>) -> Option<f64> {
    let mut v: Vec<f64> =
        forks.into_iter().flat_map(|f| f.disturbance.round_trips()).flatten().collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[(v.len() - 1) / 10])
}

impl Ratio {
    /// "5.31× [4.98, 5.60]", "5.31× [4.0, 7.1] unstable (≈ 40 rounds)", or "–".
    pub fn text(&self) -> String {
        let Some(m) = self.median else { return "–".into() };
        let ci = match (self.ci_low, self.ci_high) {
            (Some(a), Some(b)) => format!(" [{a:.2}, {b:.2}]"),
            _ => " [–]".into(),
        };
        let flag = match (self.unstable, self.rounds_needed) {
            (true, Some(n)) => format!(" unstable (≈ {n} rounds)"),
            (true, None) => " unstable".to_string(),
            _ => String::new(),
        };
        let apart = match (self.off_phase_rounds, self.off_phase_median) {
            (0, _) => String::new(),
            (n, Some(o)) => format!("; {n} off-phase rounds apart: {o:.2}×"),
            (n, None) => format!("; {n} off-phase rounds apart"),
        };
        format!("{m:.2}×{ci}{flag}{apart}")
    }
}

/// A table as stored and rendered.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Table {
    /// Title.
    pub title: String,
    /// Column headers.
    pub header: Vec<String>,
    /// Cells.
    pub rows: Vec<Vec<String>>,
    /// A line under the table.
    pub note: Option<String>,
}

impl Table {
    /// An empty table.
    pub fn new(title: impl Into<String>, header: &[&str]) -> Table {
        Table {
            title: title.into(),
            header: header.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }
}

/// A target the experiment checks, against what was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Target {
    /// What is checked.
    pub what: String,
    /// The target.
    pub target: String,
    /// What was measured.
    pub measured: String,
    /// `None` when it could not be decided.
    pub met: Option<bool>,
}

impl Target {
    /// "met", "NOT met" or "UNDECIDED".
    pub fn verdict(&self) -> &'static str {
        match self.met {
            Some(true) => "met",
            Some(false) => "NOT met",
            None => "UNDECIDED",
        }
    }
}

/// A line chart for the HTML report.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Chart {
    /// Title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// (series name, points).
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

/// A file of the run folder with what it is.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileLink {
    /// Path relative to the run folder.
    pub file: String,
    /// What it holds.
    pub what: String,
}

/// The whole results.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Experiment name.
    pub experiment: String,
    /// `complete`, `interrupted`, or `failed` (some cell did not pass).
    pub status: String,
    /// The environment record.
    pub environment: Environment,
    /// The options the run used (shared and the experiment's own).
    pub config: Value,
    /// Rounds planned and rounds that finished.
    pub rounds: RoundsDone,
    /// One row per cell.
    pub results: Vec<Row>,
    /// Every row against its group's baseline.
    pub ratios: Vec<Ratio>,
    /// The experiment's tables, as printed.
    pub tables: Vec<Table>,
    /// Targets.
    pub targets: Vec<Target>,
    /// Charts (report.html).
    pub charts: Vec<Chart>,
    /// Trace and heap files.
    pub files: Vec<FileLink>,
    /// How it was measured.
    pub method: Vec<String>,
    /// Things the reader must know.
    pub notes: Vec<String>,
    /// The Why section: sentences computed from the rows, each with the fields it rests on
    /// (absent from experiments that have none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<crate::why::Why>,
}

/// Rounds planned and finished.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RoundsDone {
    /// Planned.
    pub planned: usize,
    /// Finished (every cell ran once), the made-up rounds included.
    pub finished: usize,
    /// Rounds run past `planned` to make up for rounds that another phase of the machine
    /// took ([`short_of_usual_rounds`]); absent in results written before them.
    #[serde(default)]
    pub made_up: usize,
}

/// Whether some group of `rows` has fewer than `target` rounds in which every row had an
/// OK fork and all of them ran in the machine's usual phase ([`in_phase`], the usual round
/// trip taken over the group's forks): the rounds its ratios can use.
pub fn short_of_usual_rounds(rows: &[(&str, &[Fork])], target: usize) -> bool {
    let groups: std::collections::BTreeSet<&str> = rows.iter().map(|(g, _)| *g).collect();
    groups.iter().any(|g| {
        let members: Vec<&[Fork]> = rows.iter().filter(|(h, _)| h == g).map(|(_, f)| *f).collect();
        let usual = usual_round_trip(members.iter().flat_map(|f| f.iter()));
        let usable = |f: &Fork| f.status == Status::Ok && f.score.is_some() && in_phase(f, usual);
        let rounds: std::collections::BTreeSet<usize> =
            members.iter().flat_map(|f| f.iter().map(|x| x.round)).collect();
        let clean = rounds
            .iter()
            .filter(|&&r| members.iter().all(|f| f.iter().any(|x| x.round == r && usable(x))))
            .count();
        clean < target
    })
}

/// The row's score's interval and modes, from its forks.
pub fn summarise_forks(row: &mut Row) {
    let scores = row.fork_scores();
    row.score = stats::median(&scores);
    if let Some((lo, hi, cov)) = stats::median_ci_at(&scores, RESULT_COVERAGE) {
        row.score_ci = Some([lo, hi]);
        row.score_ci_coverage = Some(cov);
    }
    row.modes = stats::modes(&scores);
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

fn ratio(row: &Row, base: &Row) -> Ratio {
    // Phases are told apart only where the rounds could give an interval at all: a few
    // forks' probes are too few to say what the usual round trip is.
    let paired = row.forks.iter().filter(|f| base.forks.iter().any(|g| g.round == f.round));
    let usual = if paired.count() >= stats::repeat_samples_min(RESULT_COVERAGE) {
        usual_round_trip(row.forks.iter().chain(&base.forks))
    } else {
        None
    };
    let by_round = |r: &Row| -> BTreeMap<usize, (f64, bool)> {
        r.forks
            .iter()
            .filter(|f| f.status == Status::Ok)
            .filter_map(|f| {
                f.score.filter(|s| *s > 0.0).map(|s| (f.round, (s, in_phase(f, usual))))
            })
            .collect()
    };
    let (a, b) = (by_round(row), by_round(base));
    let (mut per_round, mut off) = (Vec::new(), Vec::new());
    for (round, &(x, x_usual)) in &a {
        let Some(&(y, y_usual)) = b.get(round) else { continue };
        let factor = if row.higher_is_better { x / y } else { y / x };
        if x_usual && y_usual { &mut per_round } else { &mut off }.push(factor);
    }
    let median = stats::median(&per_round);
    let ci = stats::repeat_interval_at(&per_round, RESULT_COVERAGE);
    let half = match (median, ci) {
        (Some(m), Some((lo, hi, _))) => Some(((m - lo).max(hi - m)) / m),
        _ => None,
    };
    let unstable = half.is_none_or(|h| h > STABLE_HALF_WIDTH);
    Ratio {
        variant: row.label.clone(),
        baseline: base.label.clone(),
        group: row.group.clone(),
        producers: row.key_u64("producers"),
        median,
        ci_low: ci.map(|c| c.0),
        ci_high: ci.map(|c| c.1),
        coverage: ci.map(|c| c.2),
        rounds: per_round.len(),
        unstable,
        rounds_needed: match half {
            Some(h) if h > STABLE_HALF_WIDTH => {
                Some(stats::samples_needed(per_round.len(), h, STABLE_HALF_WIDTH))
            }
            None => Some(stats::repeat_samples_min(RESULT_COVERAGE).max(per_round.len() + 1)),
            _ => None,
        },
        off_phase_rounds: off.len(),
        off_phase_median: stats::median(&off),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, scores: &[f64]) -> Row {
        Row {
            label: label.into(),
            key: BTreeMap::new(),
            group: "P=1".into(),
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
        // The usual phase is the fast one even when the slow one lasted most of the run.
        let mut slow = rr.clone();
        slow.forks.iter_mut().skip(4).for_each(|f| probe(f, 370.0));
        assert_eq!(usual_round_trip(slow.forks.iter().chain(&lr.forks)), Some(50.0));
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
    fn a_group_is_short_of_usual_rounds_when_its_pairs_mix_phases() {
        let mut a = row("locked", &[100.0; 14]);
        let mut b = row("ring", &[25.0; 14]);
        for f in a.forks.iter_mut().chain(b.forks.iter_mut()) {
            f.disturbance.cpu_ping_pong_ns = Some(50.0);
        }
        let rows = |a: &Row, b: &Row| {
            vec![("P=1", a.forks.clone()), ("P=1", b.forks.clone()), ("P=2", b.forks.clone())]
        };
        let check = |r: &[(&'static str, Vec<Fork>)], target| {
            let r: Vec<(&str, &[Fork])> = r.iter().map(|(g, f)| (*g, f.as_slice())).collect();
            short_of_usual_rounds(&r, target)
        };
        assert!(!check(&rows(&a, &b), 14));
        // One fork after which the round trip was slow: 13 usable rounds in P=1.
        b.forks[2].disturbance.cpu_ping_pong_after_ns = Some(400.0);
        assert!(check(&rows(&a, &b), 14) && !check(&rows(&a, &b), 13));
        // A failed fork leaves its round unusable too.
        a.forks[6].status = Status::Crashed;
        assert!(check(&rows(&a, &b), 13) && !check(&rows(&a, &b), 12));
    }

    #[test]
    fn too_few_rounds_print_a_dash_interval_and_are_unstable() {
        let rows = vec![row("locked", &[100.0, 110.0]), row("ring", &[10.0, 12.0])];
        let r = &paired_ratios(&rows, "locked")[0];
        assert!(r.ci_low.is_none() && r.unstable);
        assert!(r.text().contains("[–]"), "{}", r.text());
        assert_eq!(r.rounds_needed, Some(stats::repeat_samples_min(RESULT_COVERAGE)));
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
