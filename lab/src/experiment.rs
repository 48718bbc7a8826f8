//! The experiment abstraction: what one experiment declares, and the one flow every
//! experiment goes through (parse → plan → forks in rounds → passes → analyse → emit).
//!
//! An experiment is a type implementing [`Experiment`]: its typed options (a clap `Args`
//! struct), a plan of cells, the code that runs one cell inside a child, and an `analyse`
//! that turns the typed outcomes into rows' details, tables, targets and charts. Everything
//! else — children, watchdog, rounds, Ctrl-C, progress, statistics, ratios, files — is the
//! runner's ([`crate::runner`]), the flow's ([`crate::pipeline`]) and the results
//! module's, and knows no experiment by name. This module also holds what a run hands
//! back to `analyse` ([`Finished`], [`CellRecord`]). Registering an experiment is one line
//! in [`crate::experiments::ALL`].

use crate::protocol::{Ctx, HeapTotals};
use crate::results::{Fork, Results, Role, RoundsDone, Row, Status};
use crate::units::parse_size;
use clap::{Args, FromArgMatches, ValueEnum};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::PathBuf;
use std::time::Duration;

/// A count or size on the command line: `1000`, `1M`, `64Ki`.
pub fn size(s: &str) -> Result<u64, String> {
    parse_size(s)
}

/// `--trace`: which recorder the trace pass uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceMode {
    /// No trace pass.
    Off,
    /// The flight recorder: bounded per-thread rings, dumped at the end.
    Flight,
    /// tracing-chrome: every event, streamed.
    Full,
    /// The flight recorder in the timed forks of each cell's traced twin (no trace pass);
    /// the outlier forks' dumps are kept.
    InRun,
}

impl TraceMode {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            TraceMode::Off => "off",
            TraceMode::Flight => "flight",
            TraceMode::Full => "full",
            TraceMode::InRun => "in-run",
        }
    }
}

/// `--heap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Switch {
    /// Yes.
    On,
    /// No.
    Off,
}

/// The options every experiment has, named and behaving the same everywhere. Their
/// defaults are the experiment's ([`Defaults`]).
#[derive(Args, Debug, Clone, Serialize)]
pub struct Shared {
    /// Output folder [default: traces/<experiment>/<timestamp>/ in the workspace].
    #[arg(long, help_heading = "Shared options")]
    pub out: Option<PathBuf>,
    /// Rounds, a count: each round runs every cell once as a fresh child process (a fork),
    /// in a rotated order; ratios are paired within rounds.
    #[arg(long, value_parser = size, help_heading = "Shared options")]
    pub rounds: u64,
    /// Measured runs per fork, a count (a fork's score is their median).
    #[arg(long, value_parser = size, help_heading = "Shared options")]
    pub runs: u64,
    /// Warm-up runs per fork, a count, discarded.
    #[arg(long, value_parser = size, help_heading = "Shared options")]
    pub warmup: u64,
    /// Trace pass: a separate untimed child per cell with a recorder (`in-run`: the
    /// recorder in the timed forks of a traced twin of each cell instead).
    #[arg(long, value_enum, help_heading = "Shared options")]
    pub trace: TraceMode,
    /// Heap pass: a separate untimed child per cell under dhat.
    #[arg(long, value_enum, help_heading = "Shared options")]
    pub heap: Switch,
    /// Watchdog, in seconds: how long a child may go without finishing a run before it is
    /// killed.
    #[arg(long, value_parser = size, default_value = "120", help_heading = "Shared options")]
    pub timeout: u64,
    /// Print every table, the targets, the Why sentences and the notes on the terminal too
    /// (without it: the main tables, the verdict and the reasons; the rest is in the report).
    /// Not an option of the measurement: left out of results.json's config.
    #[arg(long, short = 'v', help_heading = "Shared options")]
    #[serde(skip)]
    pub details: bool,
}

impl Shared {
    /// The shared options of a plan built in a unit test: one round of one run, no warm-up,
    /// no passes.
    #[cfg(test)]
    pub fn for_tests() -> Shared {
        Shared {
            out: None,
            rounds: 1,
            runs: 1,
            warmup: 0,
            trace: TraceMode::Off,
            heap: Switch::Off,
            timeout: 60,
            details: false,
        }
    }

    /// The watchdog's limit.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout.max(1))
    }
}

/// An experiment's defaults for the shared options, and which passes it has.
#[derive(Debug, Clone, Copy)]
pub struct Defaults {
    /// `--rounds`.
    pub rounds: u64,
    /// `--runs`.
    pub runs: u64,
    /// `--warmup`.
    pub warmup: u64,
    /// The trace modes it supports, the default first (`[Off]`: no trace pass).
    pub trace: &'static [TraceMode],
    /// Whether it has a heap pass, and whether it is on by default.
    pub heap: Option<Switch>,
}

/// One measured run as the runner sees it.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Its value in the cell's unit.
    pub value: f64,
    /// Whether its checks passed.
    pub valid: bool,
    /// "ok" or what failed.
    pub verdict: String,
}

/// What a child returns for a cell.
pub trait Outcome: Serialize + DeserializeOwned + Debug + Send + 'static {
    /// The measured runs, in the cell's unit, with their verdicts.
    fn measured(&self) -> Vec<Measured>;
    /// The warm-up runs' checks, for an outcome that keeps its warm-ups (their values are
    /// not used).
    fn warmups(&self) -> Vec<Measured> {
        Vec::new()
    }
    /// The first failed check among all runs (warm-ups first), if any.
    fn failure(&self) -> Option<String> {
        self.warmups().into_iter().chain(self.measured()).find(|m| !m.valid).map(|m| m.verdict)
    }
}

/// One cell of the plan.
#[derive(Debug, Clone)]
pub struct CellPlan<C> {
    /// What the child runs.
    pub cell: C,
    /// The name the tables print.
    pub label: String,
    /// What the row is.
    pub key: BTreeMap<String, Value>,
    /// Rows of a group are compared with each other.
    pub group: String,
    /// What its row is in the comparison.
    pub role: Role,
    /// The label of the cell a side cell stands beside.
    pub beside: Option<String>,
    /// Threads the cell runs (for oversubscription).
    pub threads: usize,
    /// The unit of its measured runs.
    pub unit: &'static str,
    /// Whether higher is better.
    pub higher_is_better: bool,
    /// Whether the cell is timed in rounds (false: it only has untimed passes).
    pub timed: bool,
    /// Whether it gets a heap pass / a trace pass when they are on.
    pub heap: bool,
    /// See `heap`.
    pub trace: bool,
    /// File names of its passes start with this.
    pub file_stem: String,
    /// The sibling binary of the lab crate its timed forks and trace pass run in, with
    /// `__child <spec>` as the lab binary takes them (`None`: the lab binary itself).
    pub binary: Option<&'static str>,
}

impl<C> CellPlan<C> {
    /// A timed cell with a heap and trace pass, keyed by `key`.
    pub fn new(cell: C, label: impl Into<String>, group: impl Into<String>) -> CellPlan<C> {
        let label = label.into();
        CellPlan {
            cell,
            file_stem: label.replace('[', "-").replace([']', '/', ' '], ""),
            label,
            key: BTreeMap::new(),
            group: group.into(),
            role: Role::Measured,
            beside: None,
            threads: 1,
            unit: "ms",
            higher_is_better: false,
            timed: true,
            heap: true,
            trace: true,
            binary: None,
        }
    }

    /// Sets the key from the experiment's typed key (a struct whose fields are the
    /// dimensions that name the cell).
    pub fn keyed<K: Serialize>(mut self, k: &K) -> Self {
        self.key = match serde_json::to_value(k) {
            Ok(Value::Object(m)) => m.into_iter().collect(),
            Ok(other) => panic!("a cell's key must serialise to an object, not {other}"),
            Err(e) => panic!("a cell's key does not serialise: {e}"),
        };
        self
    }

    /// The typed key that [`CellPlan::keyed`] set.
    pub fn key_as<K: DeserializeOwned>(&self) -> K {
        let m: serde_json::Map<String, Value> = self.key.clone().into_iter().collect();
        serde_json::from_value(Value::Object(m)).expect("a key set by keyed")
    }

    /// Changes the typed key that [`CellPlan::keyed`] set.
    pub fn rekey<K: Serialize + DeserializeOwned>(self, change: impl FnOnce(&mut K)) -> Self {
        let mut k: K = self.key_as();
        change(&mut k);
        self.keyed(&k)
    }
}

/// The plan of a run.
#[derive(Debug, Clone)]
pub struct Plan<C> {
    /// The cells, in their first round's order.
    pub cells: Vec<CellPlan<C>>,
    /// The label ratios are taken against, when the experiment has one.
    pub baseline: Option<String>,
    /// More (row label, baseline label) pairs to take ratios of, within each group.
    pub pairs: Vec<(String, String)>,
    /// The experiment's resolved settings (into `config`).
    pub config: Value,
    /// The input size for the environment record.
    pub input_size: u64,
    /// Notes from planning.
    pub notes: Vec<String>,
}

/// An experiment.
pub trait Experiment: Sized + 'static {
    /// Its name on the command line.
    const NAME: &'static str;
    /// One line: what it measures and which document it reproduces.
    const ABOUT: &'static str;
    /// Its defaults for the shared options.
    const DEFAULTS: Defaults;
    /// Whether the runner makes up for rounds that another phase of the machine took
    /// (`runner::run`): experiments whose ratios pair rows run a few seconds apart.
    const MAKE_UP_ROUNDS: bool = false;
    /// Its own options.
    type Args: Args + FromArgMatches + Serialize + Clone + Debug;
    /// What a child is told.
    type Cell: Serialize + DeserializeOwned + Clone + Debug + Send + Sync;
    /// What a child returns.
    type Outcome: Outcome;
    /// A row's key in results.json: the dimensions that name its cell (`CellPlan::keyed`).
    type Key: Serialize + DeserializeOwned + Debug;
    /// A row's own fields in results.json, beside the envelope (`Row::detail`): what
    /// `analyse` writes and what `lab report` and `lab compare` read back strictly.
    type Detail: Serialize + DeserializeOwned + Debug;

    /// Validates the options and plans the cells (a one-line error on bad input).
    fn plan(args: &Self::Args, shared: &Shared) -> Result<Plan<Self::Cell>, String>;

    /// Runs one cell in a child (`ctx.pass` says which pass), calling `ctx.heartbeat()`
    /// after every run.
    fn run_cell(cell: &Self::Cell, ctx: &mut Ctx) -> Result<Self::Outcome, String>;

    /// Fills the rows' details, tables, targets, charts, method and notes.
    fn analyse(args: &Self::Args, run: &Finished<Self>, out: &mut Results);
}

/// A fork as recorded: its summary and its outcome.
#[derive(Debug)]
pub struct ForkRecord<O> {
    /// The generic summary (score, runs, status, disturbance).
    pub fork: Fork,
    /// The outcome, when the child sent one.
    pub outcome: Option<O>,
    /// The last lines of a failed child's stderr.
    pub stderr_tail: Option<String>,
}

/// An untimed pass's result.
#[derive(Debug)]
pub struct PassRecord<O> {
    /// The file the pass wrote, relative to the run folder.
    pub file: String,
    /// Whether the file is there.
    pub file_written: bool,
    /// The outcome, or why there is none.
    pub result: Result<O, String>,
    /// Heap totals (heap pass).
    pub heap: Option<HeapTotals>,
    /// The recorder's account (trace pass).
    pub note: Option<String>,
}

/// One cell with everything its children returned.
#[derive(Debug)]
pub struct CellRecord<E: Experiment> {
    /// The plan's cell.
    pub plan: CellPlan<E::Cell>,
    /// Its forks, in round order.
    pub forks: Vec<ForkRecord<E::Outcome>>,
    /// Its heap pass.
    pub heap: Option<PassRecord<E::Outcome>>,
    /// Its trace pass.
    pub trace: Option<PassRecord<E::Outcome>>,
}

impl<E: Experiment> CellRecord<E> {
    /// The valid forks' outcomes.
    pub fn outcomes(&self) -> impl Iterator<Item = &E::Outcome> {
        self.forks.iter().filter(|f| f.fork.status == Status::Ok).filter_map(|f| f.outcome.as_ref())
    }

    /// The generic row: envelope and forks; the experiment adds its details.
    pub fn row(&self) -> Row {
        let p = &self.plan;
        let mut status = if self.forks.is_empty() && p.timed { Status::NotRun } else { Status::Ok };
        let mut error = None;
        let mut stderr_tail = None;
        for f in &self.forks {
            status = status.worst(f.fork.status);
            if error.is_none() && f.fork.error.is_some() {
                error = f.fork.error.clone();
                stderr_tail = f.stderr_tail.clone();
            }
        }
        if !p.timed {
            // An untimed cell is what its passes found: a failed check or child is its status.
            let passes: Vec<&PassRecord<E::Outcome>> =
                [&self.heap, &self.trace].into_iter().flatten().collect();
            if passes.is_empty() && (p.heap || p.trace) {
                status = Status::NotRun;
            }
            for pass in passes {
                let (s, why) = match &pass.result {
                    Err(e) => (Status::Error, Some(e.clone())),
                    Ok(o) => match o.failure() {
                        Some(f) => (Status::Invalid, Some(format!("INVALID: {f}"))),
                        None => (Status::Ok, None),
                    },
                };
                status = status.worst(s);
                if error.is_none() {
                    error = why;
                }
            }
        }
        Row {
            label: p.label.clone(),
            key: p.key.clone(),
            group: p.group.clone(),
            role: p.role,
            beside: p.beside.clone(),
            status,
            valid: status == Status::Ok,
            unit: p.unit.to_string(),
            higher_is_better: p.higher_is_better,
            score: None,
            score_ci: None,
            score_ci_coverage: None,
            modes: None,
            forks: self.forks.iter().map(|f| f.fork.clone()).collect(),
            error,
            stderr_tail,
            detail: Default::default(),
        }
    }
}

/// A finished (or interrupted) run.
#[derive(Debug)]
pub struct Finished<E: Experiment> {
    /// Every cell, in plan order.
    pub cells: Vec<CellRecord<E>>,
    /// Rounds planned and finished.
    pub rounds: RoundsDone,
    /// Whether SIGINT/SIGTERM stopped it.
    pub interrupted: bool,
    /// Notes from running (a missing heap binary, skipped cells).
    pub notes: Vec<String>,
    /// The run folder.
    pub dir: PathBuf,
}

/// What a fork's outcome says for its [`Fork`] record: score, runs, status.
pub fn fork_of<O: Outcome>(o: &O, mut fork: Fork) -> Fork {
    let m = o.measured();
    let valid: Vec<f64> = m.iter().filter(|r| r.valid).map(|r| r.value).collect();
    fork.runs = m.iter().map(|r| r.value).collect();
    match o.failure() {
        Some(why) => {
            fork.status = Status::Invalid;
            fork.error = Some(format!("INVALID: {why}"));
        }
        None if valid.is_empty() => {
            fork.status = Status::Error;
            fork.error = Some("no measured run".into());
        }
        None => fork.score = crate::stats::median(&valid),
    }
    fork
}
