//! The one `results.json` schema, shared by every experiment (documented in
//! `docs/results-schema.md`; bump [`SCHEMA_VERSION`] on any incompatible change).
//!
//! A run is a list of rows, one per cell of the experiment's matrix. Every row has the same
//! envelope — what it is (`label`, `key`, `group`), its outcome (`status`, `valid`), its
//! score in its `unit` with an interval, every fork with what disturbed it — and the
//! experiment's own fields beside them (`detail`, flattened into the row). `ratios[]` holds
//! every row against the experiment's baseline row of the same group, paired within rounds.
//! Invalid runs are shown (and counted) but never enter a statistic.

use crate::machine::Environment;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The version of this schema. Files without the field predate it.
pub const SCHEMA_VERSION: u32 = 3;

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

/// What a row is in its experiment's comparison. Rows beside the results (an own loop, a
/// traced twin) stay out of the headline tables, the verdict's comparisons and the Why
/// section; they are compared with the row they stand beside.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// One of the compared rows (the baseline included).
    #[default]
    Measured,
    /// The competitor of the row it stands beside, driven through its own API in a plain
    /// loop (the calibration of that row).
    OwnLoop,
    /// The row it stands beside, its adapter driven through the `Handoff` contract in the
    /// own loops' plain loop (no harness): between the row and its own loop.
    ContractLoop,
    /// The row it stands beside with the flight recorder on in its timed forks.
    Twin,
}

impl Role {
    /// Whether a row of this role stands beside the results rather than among them.
    pub fn is_side(self) -> bool {
        self != Role::Measured
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

/// One cluster of a bimodal set of scores (the statistics' own type, carried as it is).
pub use crate::stats::Mode;

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
    /// What the row is in the comparison (absent, i.e. measured, from results written
    /// before roles; [`Results::upgrade`] reads those from the labels).
    #[serde(default, skip_serializing_if = "is_measured")]
    pub role: Role,
    /// The label of the row a side row stands beside (its own loop's or twin's plain row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beside: Option<String>,
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
    /// Sets the experiment's own fields from its typed detail (a struct whose fields become
    /// keys of the row, beside the envelope's), replacing those keys where they are set.
    pub fn set_detail<T: Serialize>(&mut self, d: &T) {
        match serde_json::to_value(d) {
            Ok(Value::Object(m)) => self.detail.extend(m),
            Ok(other) => panic!("a row's detail must serialise to an object, not {other}"),
            Err(e) => panic!("a row's detail does not serialise: {e}"),
        }
    }

    /// The experiment's own fields as its typed detail `T`, read strictly ([`read_strict`]):
    /// a field that does not read as `T`'s is an error naming the row and the field, never a
    /// default. `None`: the row has no fields of its own (a cell that did not run).
    pub fn typed_detail<T: Serialize + DeserializeOwned>(&self) -> Result<Option<T>, String> {
        if self.detail.is_empty() {
            return Ok(None);
        }
        read_strict(&self.detail, &format!("results.json row `{}` ({})", self.label, self.group))
            .map(Some)
    }

    /// The row's key as its experiment's typed key `K`, read strictly ([`read_strict`]).
    pub fn typed_key<K: Serialize + DeserializeOwned>(&self) -> Result<K, String> {
        let m: Map<String, Value> = self.key.clone().into_iter().collect();
        read_strict(&m, &format!("results.json row `{}` ({}): its key", self.label, self.group))
    }

    /// [`Row::typed_key`] for the experiment's own rows while it analyses them (see
    /// [`Row::detail`]).
    pub fn key_as<K: Serialize + DeserializeOwned>(&self) -> K {
        self.typed_key().unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Row::typed_detail`] for the experiment's own rows while it analyses them, whose
    /// fields its own code wrote: a field that does not read is a bug in that code, and
    /// stops the analysis with the row and the field named (the pipeline keeps what was
    /// measured).
    pub fn detail<T: Serialize + DeserializeOwned + Default>(&self) -> T {
        self.detail_if_any().unwrap_or_default()
    }

    /// [`Row::detail`], `None` for a row with no fields of its own.
    pub fn detail_if_any<T: Serialize + DeserializeOwned>(&self) -> Option<T> {
        self.typed_detail().unwrap_or_else(|e| panic!("{e}"))
    }

    /// The valid forks' scores.
    pub fn fork_scores(&self) -> Vec<f64> {
        self.forks.iter().filter(|f| f.status == Status::Ok).filter_map(|f| f.score).collect()
    }
}

/// Reads `m` as `T`, strictly: a field that does not read as `T`'s (a wrong type) or that
/// `T` does not have (a renamed or misspelt one) is an error naming `whose` and the field.
/// A field absent from `m` is `T`'s to default or refuse.
pub fn read_strict<T: Serialize + DeserializeOwned>(
    m: &Map<String, Value>,
    whose: &str,
) -> Result<T, String> {
    let d: T = serde_path_to_error::deserialize(m)
        .map_err(|e| format!("{whose}: field `{}`: {}", e.path(), e.inner()))?;
    // A field `T` does not have is ignored by serde; writing `T` back out shows it.
    let known = match serde_json::to_value(&d) {
        Ok(Value::Object(k)) => k,
        _ => return Err(format!("{whose}: does not serialise back to an object")),
    };
    let unknown: Vec<&str> = m
        .iter()
        .filter(|(k, v)| !v.is_null() && !known.contains_key(*k))
        .map(|(k, _)| k.as_str())
        .collect();
    if !unknown.is_empty() {
        let mut valid: Vec<&str> = known.keys().map(String::as_str).collect();
        valid.sort_unstable();
        return Err(format!(
            "{whose}: unknown field `{}` (a field renamed or written by another lab?); valid: {}",
            unknown.join("`, `"),
            valid.join(", ")
        ));
    }
    Ok(d)
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
    /// The row's role.
    #[serde(default, skip_serializing_if = "is_measured")]
    pub row_role: Role,
    /// The baseline's role.
    #[serde(default, skip_serializing_if = "is_measured")]
    pub baseline_role: Role,
    /// Median over rounds of (row better-than baseline) factor: > 1 means the row wins.
    pub median: Option<f64>,
    /// Low end of the repeat interval: where a repeat run's median of as many rounds falls
    /// with probability `coverage` (order statistics over rounds, [`crate::stats::repeat_interval_at`]).
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
    /// ([`crate::analysis::pairing::PHASE_FACTOR`]); `median`, the interval and `rounds` leave them out.
    #[serde(default)]
    pub off_phase_rounds: usize,
    /// The median of those rounds' factors.
    #[serde(default)]
    pub off_phase_median: Option<f64>,
}

fn is_measured(r: &Role) -> bool {
    *r == Role::Measured
}

impl Ratio {
    /// Whether it pairs a side row: a traced twin, an own loop, or a row against its own
    /// loop.
    pub fn is_side(&self) -> bool {
        self.row_role.is_side() || self.baseline_role.is_side()
    }

    /// Whether both rows are own loops (the comparison with no harness on either side).
    pub fn is_own_loops(&self) -> bool {
        self.row_role == Role::OwnLoop && self.baseline_role == Role::OwnLoop
    }

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
    /// One of the experiment's main tables: the terminal shows it without `--details`
    /// (absent, i.e. false, from other tables and from results written before it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub headline: bool,
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

    /// The same table, marked as a headline table.
    pub fn headline(mut self) -> Table {
        self.headline = true;
        self
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

/// A series' intervals: its name and, per x, `(x, low, high)`.
pub type IntervalSeries = (String, Vec<(f64, f64, f64)>);

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
    /// Per series name, an interval at each x, `(x, low, high)`, drawn as a bar through
    /// the point (absent from charts without intervals).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<IntervalSeries>,
    /// Reference points drawn beside the series, unjoined (e.g. a seed's published ratios):
    /// (name, points).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<(String, Vec<(f64, f64)>)>,
    /// A name per x, for an axis of categories (workloads, servers, demand modes): the
    /// series' points are then drawn unjoined, each x labelled with its name (absent from
    /// charts with a numeric x axis).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub x_names: Vec<(f64, String)>,
    /// Named ticks on a numeric x axis whose x is a transform of what it names (a
    /// log-scaled percentile axis, x = log10(1/(1 − q)), as HdrHistogram's plotter draws
    /// it; a log-scaled rate): the series stay joined and only these x are labelled
    /// (absent from other charts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub x_ticks: Vec<(f64, String)>,
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
    pub why: Vec<Why>,
    /// The verdict, first thing a reader sees: one line per comparison, computed from the
    /// run's ratios and their intervals (absent from results written before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdict: Vec<String>,
    /// The reasons behind the verdict as one table: a row per reason, a column per compared
    /// pair, each cell the figure the reason rests on (absent where there are none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasons: Option<Reasons>,
}

impl Results {
    /// Brings results written by an older schema to this one, in place: before version 3 a
    /// row's role was only in its label (`ring[in-run]` a traced twin of `ring`,
    /// `ring/own-loop` the own loop beside `ring`).
    pub fn upgrade(&mut self) {
        if self.schema_version >= 3 {
            return;
        }
        for x in &mut self.results {
            let (role, beside) = legacy_role(&x.label);
            (x.role, x.beside) = (role, beside.map(str::to_string));
        }
        for q in &mut self.ratios {
            q.row_role = legacy_role(&q.variant).0;
            q.baseline_role = legacy_role(&q.baseline).0;
        }
        self.schema_version = SCHEMA_VERSION;
    }
}

/// A label's role as results before version 3 wrote it, and the row it stands beside.
fn legacy_role(label: &str) -> (Role, Option<&str>) {
    // schema upgrade: a traced twin's label ended in `[in-run]`.
    if let Some(plain) = label.strip_suffix("[in-run]") {
        return (Role::Twin, Some(plain));
    }
    // schema upgrade: an own loop's label ended in `/own-loop`.
    match label.rsplit_once('/') {
        Some((plain, "own-loop")) => (Role::OwnLoop, Some(plain)),
        _ => (Role::Measured, None),
    }
}

/// The reasons table: the figures the Why rules rest on, a row per reason.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Reasons {
    /// Title.
    pub title: String,
    /// One column per compared pair or per row (e.g. `ring/locked P=2`).
    pub columns: Vec<String>,
    /// One row per reason.
    pub rows: Vec<ReasonRow>,
    /// A footnote under the table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One reason (allocations per message, consumer sleeps per message, …) across the columns.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ReasonRow {
    /// What the figures are, with their unit.
    pub reason: String,
    /// The Why rule that reads them (`allocation`, `sleeping`, …).
    pub rule: String,
    /// Per column, the text shown (e.g. `1.00 vs 0.001`) and the results.json figures it
    /// quotes; `None` where not measured.
    pub cells: Vec<Option<ReasonCell>>,
}

/// One cell of the reasons table.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ReasonCell {
    /// The text shown.
    pub text: String,
    /// The results.json fields it quotes, with their values.
    pub figures: Vec<Figure>,
    /// Whether the reason's rule fired on this pair.
    #[serde(default)]
    pub fired: bool,
}

/// Rounds planned and finished.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RoundsDone {
    /// Planned.
    pub planned: usize,
    /// Finished (every cell ran once in a planned round; a made-up round runs only the
    /// rows still short of rounds), the made-up rounds included.
    pub finished: usize,
    /// Rounds run past `planned` to make up for rounds that another phase of the machine
    /// took ([`crate::analysis::pairing::short_pairs`]): only the rows of the ratios still short
    /// of rounds run in them. Absent in results written before them.
    #[serde(default)]
    pub made_up: usize,
}

/// One sentence of the Why section.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Why {
    /// The group both rows belong to (e.g. `P=1`).
    pub group: String,
    /// The row explained.
    pub variant: String,
    /// The row it is compared with.
    pub baseline: String,
    /// The rule that fired (`allocation`, `sleeping`, `off-cpu`, `counter`, `cpu-time`,
    /// `no-difference`, `no-reason`).
    pub rule: String,
    /// The sentence, with its figures.
    pub text: String,
    /// The results.json fields the sentence rests on, with their values.
    pub figures: Vec<Figure>,
}

/// A field of results.json and its value.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Figure {
    /// A path into results.json, e.g. `results[3].heap.blocks_per_message`.
    pub field: String,
    /// Its value.
    pub value: f64,
}

#[cfg(test)]
pub mod fixture {
    //! The one builder of test results: rows, ratios and runs made as results.json reads
    //! them, so that a field added to the schema needs no change here.

    use super::{Ratio, Results, Row};
    use serde_json::{json, Value};

    /// A row that passed: `label`, `group`, its score and interval, and its own fields.
    pub fn row(label: &str, group: &str, score: f64, ci: Option<[f64; 2]>, detail: Value) -> Row {
        let mut v = json!({
            "label": label, "key": {}, "group": group, "status": "OK", "valid": true,
            "unit": "u", "higher_is_better": false, "score": score, "score_ci": ci, "forks": [],
        });
        if let (Some(m), Value::Object(d)) = (v.as_object_mut(), detail) {
            m.extend(d);
        }
        serde_json::from_value(v).expect("a row")
    }

    /// `variant` against `baseline` in `group`: median and interval.
    pub fn ratio(
        variant: &str,
        baseline: &str,
        group: &str,
        m: f64,
        ci: Option<[f64; 2]>,
    ) -> Ratio {
        serde_json::from_value(json!({
            "variant": variant, "baseline": baseline, "group": group, "median": m,
            "ci_low": ci.map(|c| c[0]), "ci_high": ci.map(|c| c[1]), "rounds": 7,
            "unstable": false,
        }))
        .expect("a ratio")
    }

    /// A run of `experiment` with these rows and ratios.
    pub fn results(experiment: &str, rows: Vec<Row>, ratios: Vec<Ratio>) -> Results {
        serde_json::from_value(json!({
            "schema_version": crate::results::SCHEMA_VERSION, "experiment": experiment,
            "status": "complete", "environment": crate::machine::Environment::default(),
            "config": {}, "rounds": {"planned": 7, "finished": 7}, "results": rows,
            "ratios": ratios, "tables": [], "targets": [], "charts": [], "files": [],
            "method": [], "notes": [],
        }))
        .expect("results")
    }
}
