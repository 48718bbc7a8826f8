//! The experiment abstraction: what one experiment declares, and the one flow every
//! experiment goes through (parse → plan → forks in rounds → passes → analyse → emit).
//!
//! An experiment is a type implementing [`Experiment`]: its typed options (a clap `Args`
//! struct), a plan of cells, the code that runs one cell inside a child, and an `analyse`
//! that turns the typed outcomes into rows' details, tables, targets and charts. Everything
//! else — children, watchdog, rounds, Ctrl-C, progress, statistics, ratios, files — is the
//! runner's and the results module's, and knows no experiment by name. Registering an
//! experiment is one line in [`crate::experiments::ALL`].

use crate::envinfo::Environment;
use crate::parse::parse_size;
use crate::protocol::{self, ChildSpec, Ctx, Extras, HeapTotals, Pass};
use crate::results::{self, Fork, Results, RoundsDone, Row, Status};
use crate::runner::{self, Finished};
use clap::builder::TypedValueParser as _;
use clap::{ArgMatches, Args, FromArgMatches, ValueEnum};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a command ends badly.
#[derive(Debug)]
pub enum Failure {
    /// Bad input: one line, exit 2.
    Usage(String),
    /// A file could not be written or read after measuring: one line, exit 1.
    Io(String),
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure::Usage(s)
    }
}

impl From<&str> for Failure {
    fn from(s: &str) -> Self {
        Failure::Usage(s.to_string())
    }
}

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
}

impl TraceMode {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            TraceMode::Off => "off",
            TraceMode::Flight => "flight",
            TraceMode::Full => "full",
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
    /// Rounds: each round runs every cell once as a fresh child process (a fork), in a
    /// rotated order; ratios are paired within rounds.
    #[arg(long, value_parser = size, help_heading = "Shared options")]
    pub rounds: u64,
    /// Measured runs in each fork (a fork's score is their median).
    #[arg(long, value_parser = size, help_heading = "Shared options")]
    pub runs: u64,
    /// Warm-up runs in each fork, discarded.
    #[arg(long, value_parser = size, help_heading = "Shared options")]
    pub warmup: u64,
    /// Trace pass: a separate untimed child per cell with a recorder.
    #[arg(long, value_enum, help_heading = "Shared options")]
    pub trace: TraceMode,
    /// Heap pass: a separate untimed child per cell under dhat.
    #[arg(long, value_enum, help_heading = "Shared options")]
    pub heap: Switch,
    /// Watchdog: seconds a child may go without finishing a run before it is killed.
    #[arg(long, value_parser = size, default_value = "120", help_heading = "Shared options")]
    pub timeout: u64,
}

impl Shared {
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
    /// The first failed check among all runs (warm-ups included), if any.
    fn failure(&self) -> Option<String> {
        self.measured().into_iter().find(|m| !m.valid).map(|m| m.verdict)
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
            threads: 1,
            unit: "ms",
            higher_is_better: false,
            timed: true,
            heap: true,
            trace: true,
        }
    }

    /// Adds a key field.
    pub fn key(mut self, k: &str, v: impl Into<Value>) -> Self {
        self.key.insert(k.to_string(), v.into());
        self
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
    /// Its own options.
    type Args: Args + FromArgMatches + Serialize + Clone + Debug;
    /// What a child is told.
    type Cell: Serialize + DeserializeOwned + Clone + Debug + Send + Sync;
    /// What a child returns.
    type Outcome: Outcome;

    /// Validates the options and plans the cells (a one-line error on bad input).
    fn plan(args: &Self::Args, shared: &Shared) -> Result<Plan<Self::Cell>, String>;

    /// Runs one cell in a child (`ctx.pass` says which pass), calling `ctx.heartbeat()`
    /// after every run.
    fn run_cell(cell: &Self::Cell, ctx: &mut Ctx) -> Result<Self::Outcome, String>;

    /// Fills the rows' details, tables, targets, charts, method and notes.
    fn analyse(args: &Self::Args, run: &Finished<Self>, out: &mut Results);
}

/// An experiment behind a name: what the CLI and the children call.
pub trait Registered: Sync {
    /// Its name.
    fn name(&self) -> &'static str;
    /// Its line in `lab list`.
    fn about(&self) -> &'static str;
    /// Its clap command (its options and the shared ones, with its defaults).
    fn command(&self) -> clap::Command;
    /// Runs it from parsed options; returns the exit code.
    fn run(&self, m: &ArgMatches) -> Result<i32, Failure>;
    /// Runs one cell in this process (a child); returns the outcome as JSON.
    fn child(&self, spec: &ChildSpec, ctx: &mut Ctx) -> Result<Value, String>;
}

/// The registration of `E`.
#[derive(Debug)]
pub struct Entry<E>(std::marker::PhantomData<fn() -> E>);

impl<E> Entry<E> {
    /// For the registry.
    pub const NEW: Entry<E> = Entry(std::marker::PhantomData);
}

impl<E: Experiment> Registered for Entry<E> {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn about(&self) -> &'static str {
        E::ABOUT
    }

    fn command(&self) -> clap::Command {
        let d = E::DEFAULTS;
        let cmd = E::Args::augment_args(clap::Command::new(E::NAME));
        // After the args: deriving `Args` sets the command's `about` from the struct's docs.
        let cmd = Shared::augment_args(cmd).about(E::ABOUT);
        let traces: Vec<&'static str> = d.trace.iter().map(|t| t.name()).collect();
        let heaps: &[&'static str] = if d.heap.is_some() { &["on", "off"] } else { &["off"] };
        let heap_default = match d.heap {
            Some(Switch::On) => "on",
            _ => "off",
        };
        // clap keeps defaults as 'static strings; the command is built once per process.
        let text = |n: u64| -> &'static str { Box::leak(n.to_string().into_boxed_str()) };
        cmd.mut_arg("rounds", |a| a.default_value(text(d.rounds)).required(false))
            .mut_arg("runs", |a| a.default_value(text(d.runs)).required(false))
            .mut_arg("warmup", |a| a.default_value(text(d.warmup)).required(false))
            .mut_arg("trace", |a| {
                a.value_parser(
                    clap::builder::PossibleValuesParser::new(traces.clone()).map(|s: String| {
                        TraceMode::from_str(&s, true).expect("a listed trace mode")
                    }),
                )
                .default_value(traces[0])
                .required(false)
            })
            .mut_arg("heap", |a| {
                a.value_parser(
                    clap::builder::PossibleValuesParser::new(heaps.to_vec())
                        .map(|s: String| Switch::from_str(&s, true).expect("a listed switch")),
                )
                .default_value(heap_default)
                .required(false)
            })
    }

    fn run(&self, m: &ArgMatches) -> Result<i32, Failure> {
        let shared = Shared::from_arg_matches(m).map_err(|e| first_line(&e.to_string()))?;
        let args = E::Args::from_arg_matches(m).map_err(|e| first_line(&e.to_string()))?;
        for (what, v) in [("rounds", shared.rounds), ("runs", shared.runs)] {
            if v == 0 {
                return Err(format!("--{what} must be at least 1 (got 0)").into());
            }
        }
        let plan = E::plan(&args, &shared)?;
        let (dir, default_location) = choose_run_dir(shared.out.as_deref(), E::NAME);
        check_writable(&dir)?;
        let env = environment(&shared, &plan);
        let finished = runner::run::<E>(&plan, &shared, &dir);
        let mut out = assemble::<E>(&args, &shared, &plan, env, &finished);
        E::analyse(&args, &finished, &mut out);
        crate::report::emit(&out, &dir, default_location).map_err(Failure::Io)?;
        Ok(exit_code(&out, &finished))
    }

    fn child(&self, spec: &ChildSpec, ctx: &mut Ctx) -> Result<Value, String> {
        let cell: E::Cell =
            serde_json::from_value(spec.cell.clone()).map_err(|e| format!("bad cell: {e}"))?;
        let out = E::run_cell(&cell, ctx)?;
        serde_json::to_value(out).map_err(|e| format!("outcome does not serialise: {e}"))
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: ").to_string()
}

fn exit_code<E: Experiment>(out: &Results, run: &Finished<E>) -> i32 {
    if run.interrupted {
        eprintln!("lab: interrupted; what finished is written");
        return 130;
    }
    let bad = out.results.iter().filter(|r| r.status != Status::Ok).count();
    if bad > 0 {
        eprintln!("lab: {bad} row(s) did not pass (see the tables)");
        return 1;
    }
    0
}

fn environment<C>(shared: &Shared, plan: &Plan<C>) -> Environment {
    let mut env = Environment::capture();
    env.warmup_runs = shared.warmup as usize;
    env.measured_runs = shared.runs as usize;
    env.rounds = shared.rounds as usize;
    env.messages = plan.input_size;
    env.scheduling = "timed forks run one at a time, nothing else of the lab running; the \
                      untimed heap and trace children run side by side (a rayon pool of 2) \
                      after the rounds"
        .into();
    env.tracing = match shared.trace {
        TraceMode::Off => "off".into(),
        m => format!("{}: a separate untimed child per cell", m.name()),
    };
    env.heap_profiling = match shared.heap {
        Switch::Off => "off".into(),
        Switch::On => "on: a separate untimed child per cell under dhat::Profiler".into(),
    };
    env
}

/// The generic rows (envelope and forks) and ratios of a finished run.
fn assemble<E: Experiment>(
    args: &E::Args,
    shared: &Shared,
    plan: &Plan<E::Cell>,
    environment: Environment,
    run: &Finished<E>,
) -> Results {
    let mut rows: Vec<Row> = run.cells.iter().map(runner::CellRecord::row).collect();
    rows.iter_mut().for_each(results::summarise_forks);
    let mut ratios =
        plan.baseline.as_deref().map(|b| results::paired_ratios(&rows, b)).unwrap_or_default();
    for (row, base) in &plan.pairs {
        ratios.extend(results::pair_ratios(&rows, row, base));
    }
    let failed = rows.iter().any(|r| r.status != Status::Ok);
    let mut notes = plan.notes.clone();
    notes.extend(run.notes.iter().cloned());
    if run.interrupted {
        notes.push(format!(
            "Interrupted: {} of {} rounds finished; the forks that finished are kept.",
            run.rounds.finished, run.rounds.planned
        ));
    }
    Results {
        schema_version: results::SCHEMA_VERSION,
        experiment: E::NAME.to_string(),
        status: if run.interrupted {
            "interrupted".into()
        } else if failed {
            "failed".into()
        } else {
            "complete".into()
        },
        environment,
        config: serde_json::json!({"shared": shared, "experiment": args, "plan": plan.config}),
        rounds: RoundsDone { planned: run.rounds.planned, finished: run.rounds.finished },
        results: rows,
        ratios,
        tables: Vec::new(),
        targets: Vec::new(),
        charts: Vec::new(),
        files: Vec::new(),
        method: method(shared),
        notes,
    }
}

fn method(s: &Shared) -> Vec<String> {
    vec![
        format!(
            "Each cell ran in {} rounds; a round runs every cell once, each as a fresh child \
             process (a fork, as JMH forks JVMs); the cells of a group (the rows a ratio \
             pairs) run side by side, and both the groups' order and the order within each \
             group rotate by one each round, so every cell meets the same phases of the \
             machine. Timed forks run one at a time.",
            s.rounds
        ),
        format!(
            "A fork makes {} warm-up run(s), discarded, then {} measured run(s); its score is \
             their median. A row's score is the median of its forks' scores, with a \
             distribution-free interval from order statistics (binomial coverage ≥ 95%, \
             printed when there are 6 forks or more).",
            s.warmup, s.runs
        ),
        "Ratios are taken within each round (row against the baseline row of the same round) \
         and summarised as the median over rounds with the same order-statistic interval; one \
         wider than ±10% of its median is marked unstable, with the rounds that would narrow \
         it (assuming it narrows as 1/√rounds)."
            .into(),
        format!(
            "Forks whose scores split into two clusters (sorted scores with a gap of at least \
             {}× and each side at least {:.0}% of the forks) are reported as bimodal, with both \
             modes and their shares.",
            crate::stats::MODE_GAP,
            crate::stats::MODE_MIN_SHARE * 100.0
        ),
        "Every run checks itself before its time is used; a failed check makes the row \
         INVALID and keeps it out of every statistic. A child that finishes no run within \
         the watchdog's limit is killed with its process group (HUNG); one that dies is \
         CRASHED."
            .into(),
    ]
}

/// The run folder: `out` if given (false: not the default location), else a new
/// `traces/<experiment>/<UTC stamp>[-n]` in the workspace (true). Creates nothing.
pub fn choose_run_dir(out: Option<&Path>, experiment: &str) -> (PathBuf, bool) {
    match out {
        Some(d) => (d.to_path_buf(), false),
        None => {
            let base = crate::envinfo::workspace_root().join("traces").join(experiment);
            let stamp = crate::envinfo::utc_now().1;
            let mut dir = base.join(&stamp);
            let mut n = 2;
            while dir.exists() {
                dir = base.join(format!("{stamp}-{n}"));
                n += 1;
            }
            (dir, true)
        }
    }
}

fn check_writable(dir: &Path) -> Result<(), Failure> {
    let fail = |e: std::io::Error| {
        Failure::Usage(format!("cannot write to output folder {}: {e}", dir.display()))
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    let probe = dir.join(".lab-write-probe");
    std::fs::write(&probe, b"").map_err(fail)?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// The `__child` entry (the `lab` binary) and the heap child (`lab-heap`): runs the spec's
/// cell with the registered experiment and prints the protocol's lines; the exit code.
/// `heap` runs a heap pass's cell under the profiler, writing the file it is given (the
/// `lab-heap` binary's; `None` in the `lab` binary, which refuses heap passes).
pub fn child_main(spec_json: &str, heap: Option<HeapWrap>) -> i32 {
    let spec: ChildSpec = match serde_json::from_str(spec_json) {
        Ok(s) => s,
        Err(e) => return protocol::finish(Err(format!("bad child spec: {e}"))),
    };
    let Some(exp) = crate::experiments::find(&spec.experiment) else {
        return protocol::finish(Err(crate::experiments::unknown(&spec.experiment)));
    };
    let mut ctx = Ctx::new(spec.pass.clone());
    let result = match (&spec.pass, heap) {
        (Pass::Timed, _) => exp.child(&spec, &mut ctx).map(|v| (v, Extras::default())),
        (Pass::Trace { mode, file }, _) => {
            crate::tracehook::traced(mode, file, || exp.child(&spec, &mut ctx))
                .map(|(v, note)| (v, Extras { note: Some(note), heap: None }))
        }
        (Pass::Heap { file }, Some(wrap)) => wrap(file, &mut || exp.child(&spec, &mut ctx))
            .map(|(v, totals)| (v, Extras { heap: Some(totals), note: None })),
        (Pass::Heap { .. }, None) => {
            Err("a heap pass runs in the lab-heap binary (dhat's allocator), not here".into())
        }
    };
    protocol::finish(result)
}

/// Runs a cell under dhat's profiler writing `file`: (outcome, totals).
pub type HeapWrap = fn(
    file: &str,
    cell: &mut dyn FnMut() -> Result<Value, String>,
) -> Result<(Value, HeapTotals), String>;

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
